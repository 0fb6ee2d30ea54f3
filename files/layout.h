/* How a tensor's elements sit in a file, next to how dtcast keeps them in memory (little-endian,
 * sub-byte types packed as ONNX packs them, float6 one per byte): the transforms between the
 * two, applied block by block by the pipeline. */
#ifndef DTCAST_FILES_LAYOUT_H
#define DTCAST_FILES_LAYOUT_H

#include "files/tensor.h"

#include <stdint.h>

typedef enum dt_store {
    DT_STORE_NATIVE,     /* exactly dtcast's layout */
    DT_STORE_SWAPPED,    /* big-endian: the bytes of each element (of each complex part) reversed */
    DT_STORE_BYTE_EACH,  /* a sub-byte type one element per byte, in the low bits (.npy) */
    DT_STORE_F6_PACKED   /* float6 four elements in three bytes, LSB first (safetensors) */
} dt_store;

typedef struct dt_layout {
    dtcast_type type;
    dt_store store;
} dt_layout;

/* Bits one element advances in dtcast's layout (int4: 4, float6: 8, complex64: 64; 0 for
 * strings). */
unsigned dt_stride_bits(dtcast_type type);
/* The real type of each part of a complex type (complex32: float16, bcomplex32: bfloat16, ...);
 * the type itself otherwise. */
dtcast_type dt_part_type(const dtcast_info *info);
/* Bytes of count elements in layout l (*bytes), or SIZE_OVERFLOW. */
dtcast_status dt_layout_bytes(const dt_layout *l, uint64_t count, uint64_t *bytes);
/* Bytes of count elements in dtcast's layout. */
dtcast_status dt_native_bytes(dtcast_type type, uint64_t count, uint64_t *bytes);
/* Whether the layout is dtcast's own (no transform). */
int dt_layout_is_native(const dt_layout *l);

/* file bytes -> dtcast layout, for count elements starting at element index first (a multiple
 * of 8). A byte-each element whose byte is not a code of the type (high bits set, other than a
 * sign extension of a signed type) is an error naming the element. src and dst do not overlap. */
dtcast_status dt_layout_load(const dt_layout *l, void *dst, const void *src, size_t count,
                             uint64_t first, dt_io_error *err);
/* dtcast layout -> file bytes. src and dst do not overlap. */
void dt_layout_store(const dt_layout *l, void *dst, const void *src, size_t count);

#endif /* DTCAST_FILES_LAYOUT_H */
