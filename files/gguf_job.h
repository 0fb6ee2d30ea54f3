/* The jobs on GGUF files (docs/gguf.md, "Jobs"): a GGUF model, one file or a split set
 * (NAME-00001-of-0000N.gguf ...), opened and checked shard by shard; and GGUF -> safetensors
 * (dequantize). Nothing here prints: failures fill a dt_io_error naming the file, the tensor and
 * the byte offset; warnings and progress go through the job's hooks. */
#ifndef DTCAST_FILES_GGUF_JOB_H
#define DTCAST_FILES_GGUF_JOB_H

#include "files/file.h"
#include "files/gguf.h"
#include "files/job.h"

#include <stddef.h>
#include <stdint.h>

/* One file of a GGUF model, mapped read-only and parsed. */
typedef struct dt_gguf_shard {
    char *path;
    dt_infile file;
    const uint8_t *map;
    size_t len;
    dt_gguf g;
} dt_gguf_shard;

typedef struct dt_gguf_set {
    size_t n;
    dt_gguf_shard *shards; /* split.no order (a lone file: one) */
    int split;             /* the files are a split set */
} dt_gguf_set;

/* Path ends in ".gguf" (any case). */
int dt_gguf_path(const char *path);
/* Opens path: a lone .gguf, or any file of a split set NAME-0000k-of-0000N.gguf (every file of
 * the set is opened: all must exist, and their split.no / split.count keys, when present, must
 * say so). On failure s holds what was opened: call dt_gguf_set_close in every case. */
dtcast_status dt_gguf_set_open(dt_gguf_set *s, const char *path, dt_io_error *err);
void dt_gguf_set_close(dt_gguf_set *s);

/* GGUF -> safetensors: every tensor under its GGUF name with numpy's shape (ne reversed); F32,
 * F16, BF16, F64 and I8..I64 copied as they are, block types dequantized to `to` (bfloat16,
 * float16 or float32; ggml's to_float for float32, one rounding for the others). A lone file
 * gives one .safetensors file; a split set a folder with one shard per file and an index. The
 * metadata goes into every shard's __metadata__ as strings (no_metadata: none). */
typedef struct dt_gguf_dequantize_request {
    const char *in, *out;
    dtcast_type to;
    int no_metadata;
    unsigned threads; /* 0: one per CPU */
    dt_job_hooks hooks;
} dt_gguf_dequantize_request;

dtcast_status dt_gguf_dequantize(const dt_gguf_dequantize_request *r, dt_io_error *err);

#endif /* DTCAST_FILES_GGUF_JOB_H */
