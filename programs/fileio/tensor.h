/* Tensors in files: .npy, ONNX TensorProto (.pb), raw little-endian data; and the few ModelProto
 * fields the ONNX test runner needs. Used by the CLI; not part of the installed API. */
#ifndef DTCAST_IO_TENSOR_H
#define DTCAST_IO_TENSOR_H

#include "dtcast.h"

#include <stddef.h>
#include <stdint.h>

#define DT_MAX_DIMS 32

typedef struct dt_tensor {
    dtcast_type type;
    int ndim;
    int64_t dims[DT_MAX_DIMS];
    size_t count; /* product of dims (1 for ndim == 0) */
    void *data;   /* packed element data (dtcast layout), or char ** (count strings) for STRING */
    size_t nbytes; /* bytes of data (for STRING: count * sizeof(char *)) */
    char *name;    /* TensorProto name, or NULL */
} dt_tensor;

/* Error detail of a reader/writer: one line naming the problem and the byte offset. */
typedef struct dt_io_error {
    char message[256];
} dt_io_error;

void dt_tensor_init(dt_tensor *t);
void dt_tensor_free(dt_tensor *t); /* frees data (and strings), name; leaves t initialised */
/* Allocates zeroed storage for t->count elements of t->type (strings: NULL pointers). */
dtcast_status dt_tensor_alloc(dt_tensor *t, dt_io_error *err);

/* Shared by the readers: sets ndim and dims and count = their product. Negative dims, more than
 * DT_MAX_DIMS dimensions and a product beyond SIZE_MAX are errors (the message names `what`). */
dtcast_status dt_tensor_set_shape(dt_tensor *t, int ndim, const int64_t *dims, const char *what,
                                  dt_io_error *err);
/* Appends " at byte OFFSET" to the message of a failed status (readers name the offset of every
 * problem); returns status unchanged. */
dtcast_status dt_io_at(dtcast_status status, dt_io_error *err, size_t offset);
/* Writes a one-line message into err (may be NULL) and returns status. */
dtcast_status dt_io_fail(dt_io_error *err, dtcast_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Whole-file helpers. Writing goes to a temporary file in the same directory, renamed on success,
 * so a failed write leaves no output behind. path "-" means stdin / stdout. */
dtcast_status dt_read_file(const char *path, uint8_t **buf, size_t *len, dt_io_error *err);
dtcast_status dt_write_file(const char *path, const void *buf, size_t len, dt_io_error *err);

/* .npy (versions 1.0, 2.0, 3.0). Reads numpy dtypes (any byte order: big-endian is swapped),
 * Fortran order (transposed to C order), bool, ints, float16/32/64, complex64/128, and the
 * ml_dtypes names where present. A non-numpy dtcast type is written as |u1 packed bytes (shape:
 * the byte count); on read, `hint` (DTCAST_UNDEFINED = none) reinterprets a |u1 array as packed
 * elements of that type. */
dtcast_status dt_npy_parse(const uint8_t *buf, size_t len, dtcast_type hint, dt_tensor *t,
                           dt_io_error *err);
dtcast_status dt_npy_serialize(const dt_tensor *t, uint8_t **buf, size_t *len, dt_io_error *err);

/* ONNX TensorProto: dims, data_type, name, raw_data and the typed fields float_data, int32_data,
 * string_data, int64_data, double_data, uint64_data (as ONNX stores each type in them). Unknown
 * fields are skipped. Writing uses raw_data (string_data for strings). */
dtcast_status dt_pb_parse(const uint8_t *buf, size_t len, dt_tensor *t, dt_io_error *err);
dtcast_status dt_pb_serialize(const dt_tensor *t, uint8_t **buf, size_t *len, dt_io_error *err);

/* ModelProto: the first node of the graph, its attributes, the default-domain opset, and the
 * graph's input / output names with their element types. */
typedef struct dt_onnx_attr {
    char name[64];
    int kind;      /* 1 FLOAT, 2 INT, 3 STRING (AttributeProto.AttributeType), 0 other */
    int64_t i;
    double f;
    char s[64];
} dt_onnx_attr;

typedef struct dt_onnx_model {
    int64_t opset;     /* opset_import of domain "" (or "ai.onnx") */
    char op_type[64];  /* first node */
    int nattrs;
    dt_onnx_attr attrs[16];
    int ninputs;
    dtcast_type input_types[8]; /* graph inputs, from their TypeProto.Tensor.elem_type */
    int noutputs;
    dtcast_type output_types[8];
} dt_onnx_model;

dtcast_status dt_onnx_model_parse(const uint8_t *buf, size_t len, dt_onnx_model *m,
                                  dt_io_error *err);
/* Attribute lookup: NULL when absent. */
const dt_onnx_attr *dt_onnx_model_attr(const dt_onnx_model *m, const char *name);

/* By file name: ".npy", ".pb", or raw (".raw", ".bin", "-"; raw needs the type). */
typedef enum dt_file_kind { DT_FILE_RAW, DT_FILE_NPY, DT_FILE_PB } dt_file_kind;
dt_file_kind dt_file_kind_of(const char *path);

#endif /* DTCAST_IO_TENSOR_H */
