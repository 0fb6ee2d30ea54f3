/* safetensors (docs/files.md, "safetensors"; F6: "F4 and F6 layouts"), the format of model
 * checkpoints: an 8-byte little-endian header length N, N bytes of a JSON object {name: {"dtype",
 * "shape", "data_offsets": [begin, end]}, optional "__metadata__": {string: string}}, then the
 * byte buffer the offsets point into. Also the *.safetensors.index.json of sharded checkpoints.
 * Used by the CLI; not part of the installed API.
 *
 * F6 layout (dtcast's choice; safetensors prescribes none): the LSB-first bit stream, element i
 * in bits [6i, 6i + 6) counted from the least significant bit of byte 0. F4: two per byte, the
 * first in the low nibble (ONNX and torch.float4_e2m1fn_x2), which is dtcast's own layout. */
#ifndef DTCAST_FILES_SAFETENSORS_H
#define DTCAST_FILES_SAFETENSORS_H

#include "files/tensor.h"

#include <stddef.h>
#include <stdint.h>

#define DT_ST_MAX_HEADER 100000000u /* the reference's limit on N */

typedef struct dt_st_tensor {
    char *name;              /* UTF-8, NUL-terminated; a name with a NUL byte is refused */
    dtcast_type type;
    int ndim;
    int64_t dims[DT_MAX_DIMS];
    uint64_t count;          /* product of dims (1 for 0-d) */
    uint64_t begin, end;     /* data_offsets, relative to the byte buffer */
} dt_st_tensor;

typedef struct dt_st_meta {
    char *key, *value;
} dt_st_meta;

typedef struct dt_st_header {
    uint64_t json_len;       /* N */
    uint64_t data_start;     /* 8 + N: where the byte buffer starts in the file */
    size_t ntensors;
    dt_st_tensor *tensors;   /* sorted by begin (file order of the data; ties by end, then name) */
    int has_meta;            /* "__metadata__" present (null reads as absent, as the reference) */
    size_t nmeta;
    dt_st_meta *meta;        /* keys in file order */
} dt_st_header;

/* The header length from a file's first 8 bytes: N <= DT_ST_MAX_HEADER and 8 + N <= file_size. */
dtcast_status dt_st_json_length(const uint8_t first8[8], uint64_t file_size, uint64_t *n,
                                dt_io_error *err);
/* Parses and checks the n-byte JSON header of a file of file_size bytes against every rule of
 * docs/files.md, "safetensors" (unknown keys inside an entry are ignored, as the reference does).
 * Messages name the tensor and the byte offset in the file. On failure h is empty (safe to free). */
dtcast_status dt_st_parse(const uint8_t *json, size_t n, uint64_t file_size, dt_st_header *h,
                          dt_io_error *err);
void dt_st_header_free(dt_st_header *h);

/* "BF16" for DTCAST_BFLOAT16, or NULL when safetensors has no such dtype. */
const char *dt_st_dtype_name(dtcast_type type);
/* The dtcast type of a safetensors dtype name ("F8_E4M3" -> float8e4m3fn), DTCAST_UNDEFINED
 * when unknown. */
dtcast_type dt_st_dtype_type(const char *name);
/* The dtcast names of the 22 types safetensors holds, "bool, uint8, ...", for refusals. */
const char *dt_st_dtype_list(void);
/* 1 for the floating-point dtypes (F16 BF16 F32 F64 F8_* F4 F6_*; not C64, ints or BOOL). */
int dt_st_is_float(dtcast_type type);
/* Bytes of count elements in safetensors' layout; an error (naming the type) when that is not
 * a whole number of bytes or overflows 64 bits. */
dtcast_status dt_st_nbytes(dtcast_type type, uint64_t count, uint64_t *nbytes, dt_io_error *err);

/* F6 between dtcast's layout (one element per byte, low 6 bits) and safetensors' (bit stream
 * above: byte0 = e0 | e1<<6, byte1 = e1>>2 | e2<<4, byte2 = e2>>4 | e3<<2). A count that is not
 * a multiple of 4 (only at the end of a tensor) fills (6 * count + 7) / 8 bytes, the last padded
 * with zero bits. */
void dt_st_f6_to_bytes(uint8_t *dst, const uint8_t *src, size_t count);
void dt_st_f6_from_bytes(uint8_t *dst, const uint8_t *src, size_t count);

/* The writer. Sorts tensors in place into the reference writer's order (dtype descending:
 * U64 I64 F64 C64 F32 U32 I32 BF16 F16 U16 I16 F8_E5M2FNUZ F8_E4M3FNUZ F8_E8M0 F8_E4M3 F8_E5M2
 * I8 U8 F6_E3M2 F6_E2M3 F4 BOOL, then name ascending by bytes), sets count, begin and end (back
 * to back from 0), and builds the file prefix (*prefix, malloc'd): the 8-byte N and the compact
 * JSON (__metadata__ first when has_meta, then the tensors in offset order with keys dtype,
 * shape, data_offsets) right-padded with spaces to a multiple of 8. Byte-identical to
 * huggingface safetensors' serialize for the same tensors and metadata order. */
dtcast_status dt_st_build(dt_st_tensor *tensors, size_t n, int has_meta, const dt_st_meta *meta,
                          size_t nmeta, uint8_t **prefix, size_t *prefix_len, dt_io_error *err);

/* ---- sharded checkpoints: *.safetensors.index.json ---------------------------------------- */

typedef struct dt_st_index_entry {
    char *name;   /* tensor name */
    size_t shard; /* index into dt_st_index.shards */
} dt_st_index_entry;

typedef struct dt_st_index_raw {
    char *key;
    char *json;   /* the value's JSON text, verbatim from the file */
} dt_st_index_raw;

typedef struct dt_st_index {
    size_t nentries;
    dt_st_index_entry *entries; /* "weight_map", in file order */
    size_t nshards;
    char **shards;              /* the distinct shard file names, in first-seen order */
    size_t nmeta;
    dt_st_index_raw *meta;      /* "metadata" keys other than total_size, in file order */
    int has_total_size;
    uint64_t total_size;        /* as read, when it is a non-negative integer */
    size_t nextra;
    dt_st_index_raw *extra;     /* top-level keys other than metadata and weight_map */
} dt_st_index;

/* Parses an index: {"metadata": {...}, "weight_map": {name: shard}}. Shard names must be plain
 * file names (no '/' or '\\', not "." or ".."); weight_map names must be distinct. On failure
 * ix is empty (safe to free). */
dtcast_status dt_st_index_parse(const uint8_t *json, size_t n, dt_st_index *ix,
                                dt_io_error *err);
/* Writes ix back as the HF writer does (json.dumps(indent=2, sort_keys=True) + "\n"), with
 * total_size replaced and every other key kept (re-indented; numbers keep their text). */
dtcast_status dt_st_index_build(const dt_st_index *ix, uint64_t total_size, uint8_t **buf,
                                size_t *len, dt_io_error *err);
void dt_st_index_free(dt_st_index *ix);

#endif /* DTCAST_FILES_SAFETENSORS_H */
