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

/* The input checkpoint (files/checkpoint.h) and the outputs written for it. */
typedef struct qf_ckpt {
    dt_ckpt ck;
    const char *cmd;
    const char *out;
    char **out_path;       /* per shard: OUT joined with its name (a lone file: OUT) */
    dt_outfile *shard_out; /* per shard */
    dt_outfile index_out, config_out;
    dt_outfile *other_out;
} qf_ckpt;

/* Opens IN (every shard header read and checked, every file mapped) for OUT; prints the error and
 * returns its status. */
int qf_open(qf_ckpt *c, const char *cmd, const char *in, const char *out);
/* Removes every temporary output file not committed, unmaps and frees. */
void qf_close(qf_ckpt *c);
/* Creates OUT as a folder when IN is one. */
int qf_make_out_dir(const qf_ckpt *c);
/* The tensor data of tensor i in the mapping. */
static inline const uint8_t *qf_data(const qf_ckpt *c, size_t i)
{
    return dt_ckpt_data(&c->ck, i);
}
/* Reads tensor i's data into a new buffer (aligned for any type); NULL after printing an error. */
uint8_t *qf_read(const qf_ckpt *c, size_t i);
/* Lets the kernel drop the pages of the mapping of shard s over [at, at + len) from this
 * process (they stay in the page cache): a streamed job keeps its resident memory bounded. */
static inline void qf_release(const qf_ckpt *c, size_t s, uint64_t at, uint64_t len)
{
    dt_ckpt_release(&c->ck, s, at, len);
}

/* The index with entries (name, shard) written to OUT, total_size replaced (not committed). */
int qf_write_index(qf_ckpt *c, const dt_st_index_entry *entries, size_t n, uint64_t total_size);
/* config.json with quantization_config removed (qconfig NULL) or set to the JSON text qconfig;
 * the other files of the folder copied (hf_quant_config.json dropped when drop_hf_quant). Not
 * committed. */
int qf_write_extras(qf_ckpt *c, const char *qconfig, int drop_hf_quant);
/* Renames every output file into place (the shards' too). */
int qf_commit(qf_ckpt *c);

#endif /* DTCAST_QUANT_FILES_H */
