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

/* Tensors -> GGUF (the cast job with a .gguf OUT): IN is a checkpoint (a .safetensors file,
 * an index, a folder, a .npy) or a GGUF model. Per tensor, the first rule whose glob matches its
 * name gives its type; else a GGUF tensor already in a block type is copied as it is (unless
 * requantize); else a tensor of at most one dimension, or one named *norm.weight, is F32 (a
 * GGUF source's: copied as it is); else `type`. A row length the type's block does not divide
 * falls back as llama-quantize does (Q2_K, Q3_K, Q2_0, Q1_0, TQ1_0, TQ2_0 -> Q4_0; Q4_K -> Q5_0;
 * Q5_K -> Q5_1; Q6_K -> Q8_0; then F16), with a warning. Integer tensors become I8..I64. The
 * metadata: general.architecture (arch, else the GGUF source's, else "unknown"), a GGUF source's
 * pairs (split keys dropped), the kv pairs given, general.quantization_version 2. */
typedef struct dt_gguf_rule {
    const char *glob;
    int type; /* ggml code */
} dt_gguf_rule;

typedef struct dt_gguf_kv_arg {
    const char *key;
    uint32_t type;    /* DT_GGUF_UINT8 .. DT_GGUF_FLOAT64, DT_GGUF_STRING */
    const char *text; /* the value as written (a string: itself) */
} dt_gguf_kv_arg;

typedef struct dt_gguf_write_request {
    const char *in, *out;
    int type;                 /* ggml code of the default type */
    const dt_gguf_rule *rules;
    size_t nrules;
    const char *arch;         /* NULL: the source's or "unknown" */
    const dt_gguf_kv_arg *kv;
    size_t nkv;
    int requantize;           /* block-type GGUF tensors are quantized again (from float32) */
    unsigned threads;
    dt_job_hooks hooks;
} dt_gguf_write_request;

dtcast_status dt_gguf_write(const dt_gguf_write_request *r, dt_io_error *err);
/* The type a tensor of row length k gets instead of `type` when k is not whole blocks of it
 * (itself when it is). */
int dt_gguf_fallback_type(int type, int64_t k);

#endif /* DTCAST_FILES_GGUF_JOB_H */
