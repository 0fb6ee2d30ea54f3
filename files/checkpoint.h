/* A checkpoint as the jobs read it (docs/files.md, "The file layer as a library"): a lone
 * .safetensors file, a sharded checkpoint's *.safetensors.index.json, a model folder, or a .npy
 * as a one-tensor checkpoint. Opening reads and checks every shard's header and maps every shard
 * read-only; each tensor is known by its shard, the absolute byte offset of its data in that
 * shard and its byte count. The folder's other files (config.json and the rest) are listed for
 * the jobs that copy them.
 *
 * Nothing here prints: a failure fills a dt_io_error (one line naming the file, the tensor and
 * the byte offset when known); what the command line shows as a warning (a sub-folder that is
 * not copied, a shard the index does not list, a second index) is collected in the checkpoint's
 * warning list for the caller to show. */
#ifndef DTCAST_FILES_CHECKPOINT_H
#define DTCAST_FILES_CHECKPOINT_H

#include "files/file.h"
#include "files/quant_layout.h"
#include "files/safetensors.h"

#include <stddef.h>
#include <stdint.h>

/* One shard: a .safetensors file of the checkpoint (or the .npy of a one-tensor checkpoint). */
typedef struct dt_ckpt_shard {
    char *name;         /* file name in the folder (a lone file: its path as given) */
    char *path;         /* the path opened: the folder joined with name, or the lone file */
    dt_infile file;     /* open, seekable */
    const uint8_t *map; /* the whole file, read-only (lives until dt_ckpt_close) */
    size_t map_len;
    dt_st_header h;     /* its header (a .npy: one entry made from the .npy header) */
} dt_ckpt_shard;

/* Where one tensor's data is. */
typedef struct dt_ckpt_tensor {
    const dt_st_tensor *st; /* its header entry (in shards[shard].h) */
    size_t shard;           /* index into dt_ckpt.shards */
    uint64_t at;            /* absolute byte offset of its data in the shard file */
    uint64_t bytes;         /* bytes of its data */
} dt_ckpt_tensor;

typedef struct dt_ckpt {
    char *in;              /* IN as given */
    int folder;            /* IN is a folder or an index (an output would be a folder) */
    int npy;               /* IN is a .npy: one tensor, named after the file's stem */
    char *dir;             /* the folder of the checkpoint ("" for a lone file) */
    int has_index;         /* an index was read (ix, index_name) */
    char *index_name;      /* the index's file name in dir, or NULL */
    dt_st_index ix;        /* the index as read */
    size_t nshards;
    dt_ckpt_shard *shards; /* the index's shards in its order, else the folder's *.safetensors
                            * sorted by name, else the lone file */
    size_t n;              /* tensors over all shards */
    dt_qt *t;              /* names, types, shapes, shard by shard in header order (for
                            * dt_qplan_make); names point into the headers */
    dt_ckpt_tensor *at;    /* where each one is (same order as t) */
    size_t *by_name;       /* tensor indices sorted by name (dt_ckpt_find) */
    size_t nother;
    char **other;          /* the folder's other files (not shards, indexes, config.json, nor
                            * sub-folders), by name, sorted */
    int has_config;        /* config.json is in the folder */
    size_t nwarnings;
    char **warnings;       /* one line each, to show to the user (see above) */
} dt_ckpt;

/* dt_ckpt_open flags. */
enum {
    DT_CKPT_NPY = 1 /* a .npy is taken as a one-tensor checkpoint (else it is refused) */
};

/* Opens IN: a folder (its index: model.safetensors.index.json, else the only
 * *.safetensors.index.json; several others are an error; no index: every *.safetensors of the
 * folder is a shard), an index file (its folder is the checkpoint's), a .safetensors file, or a
 * .npy under DT_CKPT_NPY. Every shard is opened, mapped and its header checked; tensors with more
 * than DTCAST_MAX_DIMS axes and two tensors of one name (over all shards) are errors.
 * Returns DTCAST_ERR_INVALID_ARGUMENT when IN is not something a checkpoint is read from (the
 * message names IN and what to give instead: a usage error, err->usage set), another status for a file that
 * cannot be read or is malformed (err names the file, and the tensor and byte offset when
 * known). On failure c holds what was opened so far: call dt_ckpt_close in every case. */
dtcast_status dt_ckpt_open(dt_ckpt *c, const char *in, unsigned flags, dt_io_error *err);
/* Unmaps and closes every shard and frees everything; c is left zeroed (safe to call twice). */
void dt_ckpt_close(dt_ckpt *c);

/* The data of tensor i in the shard's mapping (at[i].bytes bytes). */
static inline const uint8_t *dt_ckpt_data(const dt_ckpt *c, size_t i)
{
    return c->shards[c->at[i].shard].map + c->at[i].at;
}
/* Copies tensor i's data into a new malloc'd buffer (*buf; 1 byte for an empty tensor) and lets
 * the mapping's pages go (dt_ckpt_release). Out of memory and sizes beyond size_t are errors
 * naming the tensor. */
dtcast_status dt_ckpt_read(const dt_ckpt *c, size_t i, uint8_t **buf, dt_io_error *err);
/* Lets the kernel drop the pages of shard s's mapping over [at, at + len) from this process
 * (they stay in the page cache): a streamed job keeps its resident memory bounded. */
void dt_ckpt_release(const dt_ckpt *c, size_t s, uint64_t at, uint64_t len);
/* The sum of the shards' file sizes (the total of a progress count). */
uint64_t dt_ckpt_input_bytes(const dt_ckpt *c);
/* The index of the tensor named name, or c->n when there is none. */
size_t dt_ckpt_find(const dt_ckpt *c, const char *name);
/* The shard file name of tensor i (shards[at[i].shard].name). */
static inline const char *dt_ckpt_shard_name(const dt_ckpt *c, size_t i)
{
    return c->shards[c->at[i].shard].name;
}

/* Reads and parses the *.safetensors.index.json at path into ix (empty on failure; free it with
 * dt_st_index_free in every case). A parse error is "PATH: <what> at byte N". */
dtcast_status dt_ckpt_load_index(const char *path, dt_st_index *ix, dt_io_error *err);
/* The header of the safetensors file f (seekable), every rule of docs/files.md checked. */
dtcast_status dt_st_read_header(dt_infile *f, dt_st_header *h, dt_io_error *err);

/* "DIR/NAME" (no slash added after a DIR ending in '/', NAME alone for an empty DIR): a new
 * string, or NULL when out of memory. */
char *dt_path_join(const char *dir, const char *name);

/* ---- the write side (checkpoint_write.c) ------------------------------------------------------
 * Every output is a temporary file beside its destination, renamed only by a commit: a job that
 * fails leaves nothing behind (dt_outfile_abort removes what was written). */

/* Writes the bytes of output tensor `item` (an index into the caller's items) to out: exactly
 * nbytes bytes (safetensors' layout). Returns its status; err names what failed. */
typedef dtcast_status (*dt_ckpt_fill_fn)(void *ctx, size_t item, dt_outfile *out,
                                         uint64_t nbytes, dt_io_error *err);

/* THE shard writer: one safetensors file of the tensors items[0, n) (name, type, ndim, dims; the
 * rest is ignored), in the reference writer's order (dt_st_build), with the __metadata__ of meta
 * (NULL: none). When path is not NULL out is opened there first (else it is open already and
 * positioned at the file's start). Then fill writes each tensor's data in file order. Two items
 * of one name are an error "SHOWN: two output tensors would be named 'X'". *tensor_bytes gets the
 * bytes of the tensors' data added (the index's total_size). out is not committed. */
dtcast_status dt_ckpt_write_shard(dt_outfile *out, const char *path, const dt_st_tensor *items,
                                  size_t n, const dt_st_header *meta, const char *shown,
                                  dt_ckpt_fill_fn fill, void *ctx, uint64_t *tensor_bytes,
                                  dt_io_error *err);
/* THE index writer: ix as read (its other keys kept, dt_st_index_build) with weight_map
 * entries[0, n) (NULL: ix's own) and total_size, into out opened at path (not committed). A
 * failure to build it is "SHOWN: <why>". */
dtcast_status dt_ckpt_write_index(dt_outfile *out, const char *path, const dt_st_index *ix,
                                  const dt_st_index_entry *entries, size_t n,
                                  uint64_t total_size, const char *shown, dt_io_error *err);

/* The outputs of a job that rewrites a whole checkpoint (quantize, dequantize): one shard per
 * input shard, of the same name in the folder OUT (a lone file: OUT itself), the index under the
 * input index's name, config.json, and the other files copied. */
typedef struct dt_ckpt_out {
    const dt_ckpt *in;
    char *path;          /* OUT */
    char **shard_path;   /* [in->nshards] */
    dt_outfile *shard;   /* [in->nshards] */
    dt_outfile index, config;
    dt_outfile *other;   /* [in->nother] */
    /* a __metadata__ key the shards do not keep (dequantize: "_quantization_metadata", the
     * ComfyUI hint that no longer holds); NULL: every key is kept */
    const char *drop_meta;
    /* a top-level config.json member set to this JSON text when config.json has it (the
     * convert-layout job's DeepSeek-V4 expert_dtype "fp4" -> "fp8"); key NULL: none */
    const char *config_key, *config_value;
} dt_ckpt_out;

/* Paths for the outputs of in (nothing is created). */
dtcast_status dt_ckpt_out_init(dt_ckpt_out *o, const dt_ckpt *in, const char *out,
                               dt_io_error *err);
/* Creates OUT as a folder when the input is one; DTCAST_ERR_INVALID_ARGUMENT (a usage error:
 * err->usage) when OUT exists and is not a folder. */
dtcast_status dt_ckpt_out_make_dir(const dt_ckpt_out *o, dt_io_error *err);
/* Shard s of the output (dt_ckpt_write_shard with the input shard's metadata; a .npy has none). */
dtcast_status dt_ckpt_out_shard(dt_ckpt_out *o, size_t s, const dt_st_tensor *items, size_t n,
                                dt_ckpt_fill_fn fill, void *ctx, uint64_t *tensor_bytes,
                                dt_io_error *err);
/* The index (when the input has one) with weight_map entries[0, n) and total_size. */
dtcast_status dt_ckpt_out_index(dt_ckpt_out *o, const dt_st_index_entry *entries, size_t n,
                                uint64_t total_size, dt_io_error *err);
/* A folder's config.json with quantization_config removed (qconfig NULL) or set to the JSON text
 * qconfig (and o->config_key's member, when present, set to o->config_value), and its other
 * files copied (hf_quant_config.json left out when drop_hf_quant). */
dtcast_status dt_ckpt_out_extras(dt_ckpt_out *o, const char *qconfig, int drop_hf_quant,
                                 dt_io_error *err);
/* Renames every output into place: the shards, the other files, config.json, the index last. */
dtcast_status dt_ckpt_out_commit(dt_ckpt_out *o, dt_io_error *err);
/* Removes every output not committed and frees o (safe on a zeroed or failed o). */
void dt_ckpt_out_close(dt_ckpt_out *o);

#endif /* DTCAST_FILES_CHECKPOINT_H */
