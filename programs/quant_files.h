/* What dtcast quantize and dtcast dequantize share (quant_files.c): the input checkpoint (one
 * .safetensors file, a sharded checkpoint's index, a model folder, or a .npy for quantize) with
 * every tensor of every shard, the output folder, the index rewritten, config.json edited and
 * the other files copied. docs/cli.md, "Quantized checkpoints". */
#ifndef DTCAST_QUANT_FILES_H
#define DTCAST_QUANT_FILES_H

#include "cli.h"
#include "files/file.h"
#include "files/progress.h"
#include "files/quant_layout.h"
#include "files/safetensors.h"

#include <stdint.h>

typedef struct qf_shard {
    char *name;        /* file name in the folder (or the path of a lone file) */
    char *in_path, *out_path;
    dt_infile file;
    const uint8_t *map; /* the whole file, read-only */
    size_t map_len;
    dt_st_header h;
    dt_outfile out;
} qf_shard;

typedef struct qf_tensor {
    const dt_st_tensor *st; /* its header entry */
    size_t shard;
    uint64_t at;            /* byte offset of its data in the shard file */
    uint64_t bytes;
} qf_tensor;

typedef struct qf_ckpt {
    const char *cmd;
    const char *in, *out;
    int folder;            /* IN is a folder or an index: OUT is a folder */
    int npy;               /* IN is a .npy (quantize): one tensor, named after the file */
    char *in_dir;          /* the input folder ("" for a lone file) */
    int has_index;
    char *index_name;      /* the index's file name */
    dt_st_index ix;
    size_t nshards;
    qf_shard *shards;
    size_t n;              /* tensors over all shards */
    dt_qt *t;              /* names, types, shapes (for dt_qplan_make) */
    qf_tensor *at;         /* where each one is */
    size_t nother;
    char **other;          /* files of the folder copied as they are */
    int has_config;        /* config.json in the folder */
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
    return c->shards[c->at[i].shard].map + c->at[i].at;
}
/* Reads tensor i's data into a new buffer (aligned for any type); NULL after printing an error. */
uint8_t *qf_read(const qf_ckpt *c, size_t i);
/* Lets the kernel drop the pages of the mapping of shard s over [at, at + len) from this
 * process (they stay in the page cache): a streamed job keeps its resident memory bounded. */
void qf_release(const qf_ckpt *c, size_t s, uint64_t at, uint64_t len);
/* Sum of the shards' sizes (for the progress line). */
uint64_t qf_input_bytes(const qf_ckpt *c);

/* The index with entries (name, shard) written to OUT, total_size replaced (not committed). */
int qf_write_index(qf_ckpt *c, const dt_st_index_entry *entries, size_t n, uint64_t total_size);
/* config.json with quantization_config removed (qconfig NULL) or set to the JSON text qconfig;
 * the other files of the folder copied (hf_quant_config.json dropped when drop_hf_quant). Not
 * committed. */
int qf_write_extras(qf_ckpt *c, const char *qconfig, int drop_hf_quant);
/* Renames every output file into place (the shards' too). */
int qf_commit(qf_ckpt *c);

#endif /* DTCAST_QUANT_FILES_H */
