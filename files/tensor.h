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

/* Error detail of a reader/writer/job: message is the whole one-line text (naming the problem,
 * the file, the tensor and the byte offset as far as they are known); the other fields repeat
 * what is known of them for a caller that wants them apart: the file's path, the tensor's name
 * ("" when none) and the byte offset in the file (-1 when none). dt_io_fail sets the message
 * and clears the others; dt_io_at sets the offset; the layer that knows the file or the tensor
 * fills those. A zero-initialised record ({""}) is a valid empty one. */
typedef struct dt_io_error {
    char message[1024];
    char file[512];
    char tensor[256];
    int64_t offset;
    int usage; /* 1: the request itself is wrong, not a file (the command line's usage error) */
    dtcast_status status; /* the status of the failure (dt_io_fail sets it); DTCAST_OK: none */
} dt_io_error;
/* An empty record: dt_io_error err = DT_IO_ERROR_INIT; */
#define DT_IO_ERROR_INIT {.offset = -1}

/* How the input is read. */
typedef struct dt_input {
    dtcast_type from;    /* the type of raw data (and what a .npy holds), or DTCAST_UNDEFINED */
    int format_raw;      /* read IN as raw data whatever its name */
    int has_shape;       /* a shape was given (raw input; a reshape of others) */
    int ndim;
    int64_t dims[DT_MAX_DIMS];
} dt_input;

void dt_tensor_init(dt_tensor *t);
void dt_tensor_free(dt_tensor *t); /* frees data (and strings), name; leaves t initialised */
/* Allocates zeroed storage for t->count elements of t->type (strings: NULL pointers). */
dtcast_status dt_tensor_alloc(dt_tensor *t, dt_io_error *err);

/* Shared by the readers: sets ndim and dims and count = their product. Negative dims, more than
 * DT_MAX_DIMS dimensions and a product beyond SIZE_MAX are errors (the message names `what`). */
dtcast_status dt_tensor_set_shape(dt_tensor *t, int ndim, const int64_t *dims, const char *what,
                                  dt_io_error *err);
/* Appends " at byte OFFSET" to the message of a failed status (readers name the offset of every
 * problem) and sets err->offset; returns status unchanged. */
dtcast_status dt_io_at(dtcast_status status, dt_io_error *err, size_t offset);
/* Records where a failure is: file and tensor (NULL leaves each as it is) and, while the offset
 * is unknown (-1), the last " at byte N" of the message. Returns status unchanged. */
dtcast_status dt_io_where(dtcast_status status, dt_io_error *err, const char *file,
                          const char *tensor);
/* Writes a one-line message into err (may be NULL), clears file, tensor and usage, sets offset
 * to -1, and returns status. */
dtcast_status dt_io_fail(dt_io_error *err, dtcast_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Whole-file helpers. Writing goes to a temporary file in the same directory, renamed on success,
 * so a failed write leaves no output behind. path "-" means stdin / stdout. */
dtcast_status dt_read_file(const char *path, uint8_t **buf, size_t *len, dt_io_error *err);
dtcast_status dt_write_file(const char *path, const void *buf, size_t len, dt_io_error *err);

/* .npy: files/npy.h. */

/* ONNX TensorProto: dims, data_type, name, raw_data and the typed fields float_data, int32_data,
 * string_data, int64_data, double_data, uint64_data (as ONNX stores each type in them). Unknown
 * fields are skipped. Writing uses raw_data (string_data for strings). */
dtcast_status dt_pb_parse(const uint8_t *buf, size_t len, dt_tensor *t, dt_io_error *err);
dtcast_status dt_pb_serialize(const dt_tensor *t, uint8_t **buf, size_t *len, dt_io_error *err);

/* Where a TensorProto keeps its values, found without copying them (buf may map a whole file:
 * only the field keys are read). raw_data can be streamed from raw_at; external data lives in
 * the file `location` (relative to the .pb's folder) from ext_offset, nbytes long; typed fields
 * (float_data, int32_data, ...) are read with dt_pb_parse. */
typedef enum dt_pb_where { DT_PB_RAW, DT_PB_EXTERNAL, DT_PB_TYPED } dt_pb_where;
typedef struct dt_pb_info {
    dtcast_type type;
    int ndim;
    int64_t dims[DT_MAX_DIMS];
    size_t count;
    size_t nbytes;     /* of the elements as the file holds them (float6: packed) */
    int float6_byte_each; /* float6 under dtcast 1.0's codes 105/106: one element per byte */
    char *name;        /* or NULL */
    dt_pb_where where;
    size_t raw_at;
    char *location;    /* external data */
    size_t location_at;
    uint64_t ext_offset;
} dt_pb_info;
dtcast_status dt_pb_locate(const uint8_t *buf, size_t len, dt_pb_info *info, dt_io_error *err);
void dt_pb_info_free(dt_pb_info *info);
/* A TensorProto up to its raw_data payload (nbytes follow it): for writers that stream. */
dtcast_status dt_pb_write_prefix(dtcast_type type, int ndim, const int64_t *dims, const char *name,
                                 uint64_t nbytes, uint8_t **buf, size_t *len, dt_io_error *err);
/* A whole TensorProto whose data is external: data_location EXTERNAL, external_data location,
 * offset and length. */
dtcast_status dt_pb_write_external(dtcast_type type, int ndim, const int64_t *dims,
                                   const char *name, const char *location, uint64_t offset,
                                   uint64_t length, uint8_t **buf, size_t *len, dt_io_error *err);

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
    char output_names[8][64];   /* graph outputs' names */
    int nnodes;                 /* nodes of the graph (a function body has several) */
    int node_ninputs;           /* the first node's inputs ("" = an omitted optional one) */
    char node_inputs[8][64];
    int node_noutputs;
    char node_outputs[8][64];
} dt_onnx_model;

dtcast_status dt_onnx_model_parse(const uint8_t *buf, size_t len, dt_onnx_model *m,
                                  dt_io_error *err);
/* Attribute lookup: NULL when absent. */
const dt_onnx_attr *dt_onnx_model_attr(const dt_onnx_model *m, const char *name);

/* By file name: ".npy", ".pb", ".safetensors", "*.safetensors.index.json", ".onnx", raw (".raw", ".bin",
 * "-"; raw needs the type), or unknown: never read as raw by accident (docs/files.md, "File
 * kinds": refuse what is not read). */
typedef enum dt_file_kind {
    DT_FILE_RAW,
    DT_FILE_NPY,
    DT_FILE_PB,
    DT_FILE_SAFETENSORS,
    DT_FILE_SAFETENSORS_INDEX,
    DT_FILE_ONNX_MODEL, /* an ONNX model: its weights (files/onnx_model.h) */
    DT_FILE_UNKNOWN
} dt_file_kind;
dt_file_kind dt_file_kind_of(const char *path); /* formats.c: a lookup in the table */
/* The one-line refusal of a file of unknown kind: what it is, and what dtcast reads instead. */
const char *dt_file_kind_refusal(const char *path, char *buf, size_t size);

#endif /* DTCAST_IO_TENSOR_H */
