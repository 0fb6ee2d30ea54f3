/* .npy files (npy.c): whole arrays in memory, and the header alone for the streaming pipeline. */
#ifndef DTCAST_FILES_NPY_H
#define DTCAST_FILES_NPY_H

#include "files/layout.h"
#include "files/tensor.h"

/* .npy (versions 1.0, 2.0, 3.0). Reads numpy dtypes (any byte order), Fortran order, bool, ints,
 * float16/32/64, complex64/128, strings (<U, |S), and the ml_dtypes names where present. Types
 * numpy lacks are written so that their shape survives: 16-bit types as <u2, 8-bit types as |u1,
 * complex32 as <u4, sub-byte types as |u1 with one element per byte (the code in the low bits,
 * as ml_dtypes keeps them). On read, `hint` (DTCAST_UNDEFINED = none) says what such an array
 * of opaque bytes holds. */
typedef struct dt_npy_info {
    dtcast_type type;   /* the elements, after the hint; DTCAST_STRING for <U / |S arrays */
    int ndim;
    int64_t dims[DT_MAX_DIMS];
    size_t count;
    int fortran;        /* the items are in Fortran order (first index fastest) */
    dt_layout layout;   /* how the elements sit in the file (numbers) */
    char descr[64];
    size_t itemsize;    /* bytes of one item in the file */
    uint64_t data_offset, data_bytes;
    int strings, string_kind, string_swap; /* <U (4) or |S (1) items; big-endian <U */
} dt_npy_info;

/* Bytes of the preamble and header, from the first 12 bytes of a file (for pipes). */
dtcast_status dt_npy_header_size(const uint8_t *buf, size_t len, size_t *total, dt_io_error *err);
/* Parses the header in buf; with file_size known (not UINT64_MAX) the data must fill the rest. */
dtcast_status dt_npy_read_header(const uint8_t *buf, size_t len, uint64_t file_size,
                                 dtcast_type hint, dt_npy_info *info, dt_io_error *err);
/* The header (magic to padding) of an array of type and shape; *layout says how to store the
 * elements after it. */
dtcast_status dt_npy_write_header(dtcast_type type, int ndim, const int64_t *dims, int fortran,
                                  uint8_t **buf, size_t *len, dt_layout *layout, dt_io_error *err);
dtcast_status dt_npy_parse(const uint8_t *buf, size_t len, dtcast_type hint, dt_tensor *t,
                           dt_io_error *err);
dtcast_status dt_npy_serialize(const dt_tensor *t, uint8_t **buf, size_t *len, dt_io_error *err);

#endif /* DTCAST_FILES_NPY_H */
