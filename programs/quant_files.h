/* What dtcast quantize and dtcast dequantize share (quant_files.c): the input checkpoint (one
 * .safetensors file, a sharded checkpoint's index, a model folder, or a .npy for quantize) with
 * every tensor of every shard, the output folder, the index rewritten, config.json edited and
 * the other files copied. docs/cli.md, "Quantized checkpoints". */
#ifndef DTCAST_QUANT_FILES_H
#define DTCAST_QUANT_FILES_H

#include "cli.h"
#include "files/checkpoint.h"
#include "files/file.h"
#include "files/progress.h"
#include "files/quant_layout.h"
#include "files/safetensors.h"

#include <stdint.h>

/* The input checkpoint and its outputs (files/checkpoint.h). */
typedef struct qf_ckpt {
    dt_ckpt ck;
    dt_ckpt_out o;
    const char *cmd;
    const char *out;
} qf_ckpt;

/* Opens IN (every shard header read and checked, every file mapped) for OUT; prints the
 * warnings and the error and returns the exit status. */
int qf_open(qf_ckpt *c, const char *cmd, const char *in, const char *out);
/* Removes every temporary output file not committed, unmaps and frees. */
void qf_close(qf_ckpt *c);
/* The exit status of st, err printed (a usage error for DTCAST_ERR_INVALID_ARGUMENT; nothing
 * when err's message is empty: printed already). */
int qf_fail(const qf_ckpt *c, dtcast_status st, const dt_io_error *err);
/* The tensor data of tensor i in the mapping. */
static inline const uint8_t *qf_data(const qf_ckpt *c, size_t i)
{
    return dt_ckpt_data(&c->ck, i);
}
/* Reads tensor i's data into a new buffer; NULL after printing an error. */
uint8_t *qf_read(const qf_ckpt *c, size_t i);
static inline void qf_release(const qf_ckpt *c, size_t s, uint64_t at, uint64_t len)
{
    dt_ckpt_release(&c->ck, s, at, len);
}
/* The index (weight_map entries[0, n), total_size), config.json (quantization_config removed
 * when qconfig is NULL, else set to it), the other files (hf_quant_config.json dropped when
 * drop_hf_quant), then every output renamed into place. */
int qf_finish(qf_ckpt *c, const dt_st_index_entry *entries, size_t n, uint64_t total_size,
              const char *qconfig, int drop_hf_quant);

#endif /* DTCAST_QUANT_FILES_H */
