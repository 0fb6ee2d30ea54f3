/* GGUF, llama.cpp's model container (docs/gguf.md): the reader of its header, metadata and
 * tensor infos, and the table of ggml's tensor types. Used by the file layer; not part of the
 * installed API. Nothing here prints.
 *
 *   magic "GGUF" | version u32 (2 or 3) | tensor_count u64 | kv_count u64
 *   kv_count x (key: string | value_type u32 | value)
 *   tensor_count x (name: string | n_dims u32 | n_dims x ne u64 | ggml_type u32 | offset u64)
 *   zero padding to ALIGNMENT | tensor data, each at data_start + offset, padded to ALIGNMENT
 *
 * string = u64 byte count + bytes (no NUL); array = element type u32 + count u64 + elements.
 * Every scalar is in the file's byte order: little-endian, or big-endian when the version read
 * as little-endian has zero low 16 bits (the tensor data is then in the big-endian host's
 * layout too). ne[0] is the fastest-varying axis: numpy's shape is ne reversed.
 *
 * The reader enforces the union of ggml's (gguf.cpp) and gguf-py's rules, plus bounds against
 * the file: each violation is an error naming the rule, the key or tensor, and the byte offset
 * where the offending field starts; nothing is allocated that the file's size does not justify
 * (counts are checked against the bytes left before any array is made). */
#ifndef DTCAST_FILES_GGUF_H
#define DTCAST_FILES_GGUF_H

#include "files/tensor.h"

#include <stddef.h>
#include <stdint.h>

#include "ggml/ggml.h"

/* ggml's tensor types: dt_ggml_traits_of (src/ggml/ggml.h), the library's table */

/* ---- the file ----------------------------------------------------------------------------- */

enum {
    DT_GGUF_UINT8 = 0, DT_GGUF_INT8, DT_GGUF_UINT16, DT_GGUF_INT16, DT_GGUF_UINT32,
    DT_GGUF_INT32, DT_GGUF_FLOAT32, DT_GGUF_BOOL, DT_GGUF_STRING, DT_GGUF_ARRAY,
    DT_GGUF_UINT64, DT_GGUF_INT64, DT_GGUF_FLOAT64, DT_GGUF_VALUE_TYPES
};

#define DT_GGUF_MAX_STRING (UINT64_C(1) << 30) /* ggml's GGUF_MAX_STRING_LENGTH */
#define DT_GGUF_MAX_ARRAY (UINT64_C(1) << 30)  /* ggml's GGUF_MAX_ARRAY_ELEMENTS */
#define DT_GGUF_MAX_NAME 63                    /* bytes of a tensor name (GGML_MAX_NAME - 1) */
#define DT_GGUF_MAX_DIMS 4
#define DT_GGUF_DEFAULT_ALIGNMENT 32

/* "uint8", ..., "float64" (gguf-py's GGUFValueType names, lower case), or "?" */
const char *dt_gguf_value_type_name(uint32_t type);

typedef struct dt_gguf_kv {
    const uint8_t *key;    /* in the mapping; key_len bytes (UTF-8, not NUL-terminated) */
    uint64_t key_len;
    uint64_t at;           /* byte offset of the pair (its key's length field) */
    uint32_t type;         /* DT_GGUF_* */
    uint32_t elem_type;    /* ARRAY: the elements' type */
    uint64_t count;        /* ARRAY: elements; STRING: bytes */
    uint64_t value_at;     /* byte offset of the value: a scalar, a string's bytes, an array's
                            * first element */
    uint64_t value_bytes;  /* bytes of the value from value_at (a string array: lengths too) */
    union {                /* a scalar, in host order */
        uint64_t u;
        int64_t i;
        double f;
    } v;
} dt_gguf_kv;

typedef struct dt_gguf_tensor {
    const uint8_t *name;   /* in the mapping; name_len bytes */
    uint64_t name_len;
    uint64_t info_at;      /* byte offset of its tensor info */
    uint32_t type;         /* ggml type code (valid: dt_ggml_traits_of is not NULL) */
    int n_dims;            /* 0..4 */
    uint64_t ne[DT_GGUF_MAX_DIMS]; /* ne[0] fastest; 1 beyond n_dims */
    uint64_t count;        /* elements */
    uint64_t offset;       /* relative to data_start */
    uint64_t bytes;        /* count / block x block bytes */
    uint64_t at;           /* absolute: data_start + offset */
} dt_gguf_tensor;

typedef struct dt_gguf {
    uint32_t version;      /* 2 or 3 */
    int big_endian;
    uint64_t nkv, ntensors;
    dt_gguf_kv *kv;        /* in file order */
    dt_gguf_tensor *tensors; /* in file order */
    uint32_t alignment;    /* general.alignment, else 32 */
    uint64_t data_start;   /* after the tensor infos, rounded up to alignment */
    uint64_t size;         /* the file's bytes */
} dt_gguf;

/* Parses and checks the GGUF file held in buf[0, size) (a mapping); `name` is how messages name
 * it. On failure g is empty (safe to free) and err names the rule and the byte offset. The kv
 * and tensor entries point into buf, which must outlive g. */
dtcast_status dt_gguf_parse(const uint8_t *buf, uint64_t size, const char *name, dt_gguf *g,
                            dt_io_error *err);
void dt_gguf_free(dt_gguf *g);

/* The index of key (NUL-terminated) in g->kv, or -1. */
long dt_gguf_find(const dt_gguf *g, const char *key);

/* Array element i (i < count) of kv as a scalar (not for STRING elements), in host order. */
uint64_t dt_gguf_array_u64(const dt_gguf *g, const uint8_t *buf, const dt_gguf_kv *kv,
                           uint64_t i);

/* A scalar of GGUF type `type` (not STRING or ARRAY; its bits in the low bytes of u, as
 * dt_gguf_kv.v.u holds them) as text: integers in decimal, bools true / false, floats the
 * shortest text that reads back the same (%.9g / %.17g). */
void dt_gguf_scalar_text(char *out, size_t size, uint32_t type, uint64_t u);

/* ---- the writer --------------------------------------------------------------------------- */

/* A GGUF header being built: the metadata pairs in the order they are put, then the tensor
 * infos, as gguf-py's GGUFWriter lays them out (version 3; each tensor's offset the padded sum
 * of those before it; n_dims as given, ne fastest first), so that the same metadata and tensors
 * give the same bytes. Values are given in host order and written in the file's. A failure to
 * grow the buffer is remembered (oom) and reported by dt_gguf_out_header. */
typedef struct dt_gguf_out {
    uint8_t *kv;         /* the metadata bytes so far */
    size_t len, cap;
    int big_endian;
    int oom;
    int bad;             /* a value that cannot be written: why in `why` */
    char why[160];
    uint64_t nkv;
    size_t *key_at;      /* where each key's length field is in kv (for the duplicate check) */
    uint32_t alignment;  /* general.alignment when put (uint32, a power of two), else 32 */
} dt_gguf_out;

void dt_gguf_out_init(dt_gguf_out *o, int big_endian);
void dt_gguf_out_free(dt_gguf_out *o);
/* A number or bool (type DT_GGUF_UINT8 .. FLOAT64 but STRING and ARRAY): its bits in the low
 * bytes of `bits` (a float32's in the low 32, a float64's all 64). */
void dt_gguf_put_scalar(dt_gguf_out *o, const char *key, uint32_t type, uint64_t bits);
void dt_gguf_put_string(dt_gguf_out *o, const char *key, const void *s, uint64_t n);
/* An array of count elements of elem_type, which follow: count calls of put_elem (a number's
 * bits) or put_elem_string. */
void dt_gguf_put_array(dt_gguf_out *o, const char *key, uint32_t elem_type, uint64_t count);
void dt_gguf_put_elem(dt_gguf_out *o, uint32_t elem_type, uint64_t bits);
void dt_gguf_put_elem_string(dt_gguf_out *o, const void *s, uint64_t n);

/* Pair kv of the file g (read from buf) again, as it was, in o's byte order (any key: a parsed
 * one is valid, NUL bytes included). */
void dt_gguf_put_kv(dt_gguf_out *o, const dt_gguf *g, const uint8_t *buf, const dt_gguf_kv *kv);

typedef struct dt_gguf_info {
    const char *name;
    uint32_t type;      /* ggml type code */
    int n_dims;         /* 0..4 */
    uint64_t ne[DT_GGUF_MAX_DIMS];
} dt_gguf_info;

/* The file up to its data: magic, version 3, the counts, the metadata, the infos of t[0, n)
 * (checked as the reader checks them: names, dims, types, blocks) and the zero padding to the
 * data's start, in *header (malloc'd, *len bytes); offsets (n entries, may be NULL) receives
 * each tensor's offset from the data's start. Tensor i's bytes are then written there, each
 * followed by zeros to a multiple of o->alignment (dt_gguf_padded). */
dtcast_status dt_gguf_out_header(const dt_gguf_out *o, const dt_gguf_info *t, size_t n,
                                 uint8_t **header, size_t *len, uint64_t *offsets,
                                 dt_io_error *err);
/* The bytes of a tensor of that type and ne (0 when the type is unknown or ne[0] is not whole
 * blocks), and a count rounded up to the alignment. */
uint64_t dt_gguf_tensor_bytes(uint32_t type, int n_dims, const uint64_t *ne);
uint64_t dt_gguf_padded(uint64_t bytes, uint32_t alignment);

#endif /* DTCAST_FILES_GGUF_H */
