/* One ONNX node run on tensors read from files: Cast, CastLike, QuantizeLinear,
 * DequantizeLinear, DynamicQuantizeLinear and BitCast, with the node's attributes and the model's opset.
 * Shared by `dtcast onnx-run` (cmd_onnx_run.c) and `dtcast onnx-test` (cmd_onnx_test.c). */
#ifndef DTCAST_ONNX_NODE_H
#define DTCAST_ONNX_NODE_H

#include "files/tensor.h"

#include <stddef.h>

#define ONNX_NODE_MAX_IO 8

typedef enum onnx_op {
    ONNX_OP_CAST,
    ONNX_OP_CAST_LIKE,
    ONNX_OP_QUANTIZE,
    ONNX_OP_DEQUANTIZE,
    ONNX_OP_DYNAMIC_QUANTIZE,
    ONNX_OP_BITCAST
} onnx_op;

typedef struct onnx_node {
    dt_onnx_model m;
    onnx_op op;
} onnx_node;

/* What reading a model came to. */
typedef enum onnx_node_status {
    ONNX_NODE_OK,
    ONNX_NODE_ERROR, /* message in err */
    ONNX_NODE_SKIP   /* a model the runner does not execute (a function body): reason in err */
} onnx_node_status;

/* Reads model.onnx at path and finds its operator. */
onnx_node_status onnx_node_read(const char *path, onnx_node *node, char *err, size_t errsize);

/* Runs the node on inputs (in[k] NULL for an omitted optional input; nin of them) and fills
 * out[0 .. *nout) (dt_tensor_free_converted each); 0 on success, else 1 with the message in err. Outputs
 * are named after the node's outputs. */
int onnx_node_run(const onnx_node *node, const dt_tensor *const *in, int nin, dt_tensor *out,
                  int *nout, unsigned threads, char *err, size_t errsize);

#endif
