/* ONNX models (.onnx) in the cast job: weights-only conversion (docs/onnx_models.md).
 *
 * Every floating-point initializer (and Constant `value` tensor) that the request selects is
 * stored in the target type, under a new name, and a Cast back to its original type writes the
 * original name before any node reads it. Graph inputs, outputs and value_info are untouched,
 * so the model is valid wherever the original was, and runs where it ran. The model is read
 * once from a read-only mapping; the data of external-data tensors is streamed block by block
 * (memory does not grow with the model); the output's external data, when it has any, is one
 * file beside it. Nothing is written when anything fails. */
#ifndef DTCAST_FILES_ONNX_MODEL_H
#define DTCAST_FILES_ONNX_MODEL_H

#include "files/cast.h"
#include "files/pipeline.h"
#include "files/progress.h"

/* Tensors with fewer elements are left as they are: scales, epsilons, clip bounds and shapes,
 * whose exact value matters more than their bytes. */
#define DT_ONNX_MIN_ELEMENTS 16

/* Converts the model r->in to r->out under r (to, conversion, select/exclude, external_data,
 * report, hooks). Errors fill err (err->usage: the request is wrong). */
dtcast_status dt_onnx_model_cast(const dt_cast_request *r, dt_progress *progress,
                                 dt_stream_buffers *buffers, dt_io_error *err);

/* One tensor of a model, as dt_onnx_model_tensors reports it (dtcast inspect). */
typedef enum dt_onnx_data {
    DT_ONNX_DATA_NONE,     /* no data field (an empty tensor, or a segment) */
    DT_ONNX_DATA_RAW,      /* raw_data, in the model file */
    DT_ONNX_DATA_TYPED,    /* float_data, int32_data, ...: not one run of bytes */
    DT_ONNX_DATA_EXTERNAL  /* external_data: location, offset, length */
} dt_onnx_data;

typedef struct dt_onnx_tensor_info {
    const char *name;        /* the TensorProto's name, or the Constant's output; "" when none */
    int kind;                /* 0 an initializer, 1 a Constant's value, 2 another attribute's */
    int depth;               /* 1: in the model's graph; more: in an If/Loop/Scan body */
    uint64_t data_type;      /* TensorProto.DataType (dtcast_type's code for ONNX's types) */
    int ndim;
    const int64_t *dims;
    uint64_t count;          /* elements */
    dt_onnx_data where;
    uint64_t data_offset, data_len; /* RAW, TYPED: the field's bytes in the model file */
    const char *location;    /* EXTERNAL: as written (relative to the model's folder) */
    uint64_t ext_offset, ext_length;
    int has_length;
    /* An initializer of the model's graph whose one reader is a Cast there: that Cast's output
     * (the name the graph uses for it, as weights mode writes it); else NULL. */
    const char *cast_output;
} dt_onnx_tensor_info;

/* Scans the model in buf[0, len) (shown as `shown` in errors) with the same reader as the cast
 * job: its default-domain opset into *opset, then fn(ctx, tensor) for every tensor in file order.
 * A status other than DTCAST_OK from fn stops the scan and is returned (fn has said why, in err
 * or its own ctx). External data is not opened. */
dtcast_status dt_onnx_model_tensors(const uint8_t *buf, size_t len, const char *shown,
                                    int64_t *opset,
                                    dtcast_status (*fn)(void *ctx, const dt_onnx_tensor_info *t),
                                    void *ctx, dt_io_error *err);

#endif /* DTCAST_FILES_ONNX_MODEL_H */
