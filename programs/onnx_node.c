/* One ONNX node on tensors: see onnx_node.h. */
#include "onnx_node.h"

#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int say(char *err, size_t size, const char *fmt, ...) CLI_PRINTF(3, 4);

static int say(char *err, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
    return 1;
}

static const struct {
    const char *name;
    onnx_op op;
} ops[] = {
    {"Cast", ONNX_OP_CAST},
    {"CastLike", ONNX_OP_CAST_LIKE},
    {"QuantizeLinear", ONNX_OP_QUANTIZE},
    {"DequantizeLinear", ONNX_OP_DEQUANTIZE},
    {"DynamicQuantizeLinear", ONNX_OP_DYNAMIC_QUANTIZE},
    {"BitCast", ONNX_OP_BITCAST},
};

onnx_node_status onnx_node_read(const char *path, onnx_node *node, char *err, size_t errsize)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    dt_io_error e;
    e.message[0] = 0;
    memset(node, 0, sizeof *node);
    dtcast_status st = dt_read_file(path, &buf, &len, &e);
    if (st == DTCAST_OK)
        st = dt_onnx_model_parse(buf, len, &node->m, &e);
    free(buf);
    if (st != DTCAST_OK) {
        say(err, errsize, "%s", e.message);
        return ONNX_NODE_ERROR;
    }
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (strcmp(node->m.op_type, ops[k].name) == 0) {
            node->op = ops[k].op;
            if (node->m.nnodes > 1) {
                say(err, errsize, "%s: a graph of %d nodes; dtcast runs one-node models", path,
                    node->m.nnodes);
                return ONNX_NODE_ERROR;
            }
            return ONNX_NODE_OK;
        }
    if (node->m.nnodes > 1) {
        say(err, errsize,
            "a graph of %d nodes (first: %s), such as an operator's function body; dtcast runs "
            "one-node models",
            node->m.nnodes, node->m.op_type);
        return ONNX_NODE_SKIP;
    }
    say(err, errsize,
        "%s: op '%s' is not one dtcast runs (Cast, CastLike, QuantizeLinear, DequantizeLinear, "
        "DynamicQuantizeLinear, BitCast)",
        path, node->m.op_type);
    return ONNX_NODE_ERROR;
}

static int64_t attr_int(const dt_onnx_model *m, const char *name, int64_t fallback)
{
    const dt_onnx_attr *a = dt_onnx_model_attr(m, name);
    return a && a->kind == 2 ? a->i : fallback;
}

static int attr_to(const dt_onnx_model *m, int64_t *to, char *err, size_t errsize)
{
    const dt_onnx_attr *a = dt_onnx_model_attr(m, "to");
    dtcast_type t;
    if (!a)
        return say(err, errsize, "model.onnx: %s without attribute 'to'", m->op_type);
    if (a->kind == 2) {
        *to = a->i;
        return 0;
    }
    if (a->kind == 3 && dtcast_type_from_name(a->s, &t, NULL) == DTCAST_OK) {
        *to = (int64_t)t; /* opset 1 spells `to` as a type name */
        return 0;
    }
    return say(err, errsize, "model.onnx: attribute 'to' is neither a type code nor a type name");
}

/* A file tensor as the library's (shared data). */
static int as_tensor(const dt_tensor *t, dtcast_tensor *out, const char *what, char *err,
                     size_t errsize)
{
    memset(out, 0, sizeof *out);
    if (t->ndim > DTCAST_MAX_DIMS)
        return say(err, errsize, "%s has %d dimensions; at most %d are possible", what, t->ndim,
                   DTCAST_MAX_DIMS);
    out->data = t->data;
    out->bytes = t->nbytes;
    out->type = t->type;
    out->ndim = t->ndim;
    for (int d = 0; d < t->ndim; d++)
        out->shape[d] = t->dims[d];
    return 0;
}

/* Output k of the node: its name, and room for bytes. */
static int new_output(const onnx_node *node, int k, size_t bytes, dt_tensor *out, char *err,
                      size_t errsize)
{
    dt_tensor_init(out);
    out->data = malloc(bytes ? bytes : 1);
    const char *name = k < node->m.node_noutputs ? node->m.node_outputs[k]
                       : k < node->m.noutputs    ? node->m.output_names[k]
                                                 : "";
    if (name[0]) {
        out->name = malloc(strlen(name) + 1);
        if (out->name)
            memcpy(out->name, name, strlen(name) + 1);
    }
    if (!out->data || (name[0] && !out->name)) {
        dt_tensor_free(out);
        return say(err, errsize, "out of memory");
    }
    out->nbytes = bytes;
    return 0;
}

/* Takes the library's result (type, shape) into the file tensor. */
static int take_result(dt_tensor *out, const dtcast_tensor *y, char *err, size_t errsize)
{
    dt_io_error e;
    size_t bytes;
    out->type = y->type;
    if (dt_tensor_set_shape(out, y->ndim, y->shape, "output", &e) != DTCAST_OK)
        return say(err, errsize, "%s", e.message);
    if (dtcast_storage_size(y->type, out->count, &bytes, NULL) != DTCAST_OK || bytes > out->nbytes)
        return say(err, errsize, "output size");
    out->nbytes = bytes;
    return 0;
}

static int run_cast(const onnx_node *node, const dt_tensor *in, const dt_tensor *like,
                    dt_tensor *out, dtcast_options *opts, char *err, size_t errsize)
{
    int64_t to = 0;
    const dt_onnx_model *m = &node->m;
    if (node->op == ONNX_OP_CAST && attr_to(m, &to, err, errsize))
        return 1;
    if (node->op == ONNX_OP_CAST_LIKE) {
        if (!like)
            return say(err, errsize, "CastLike needs its second input (the target type)");
        to = like->type;
    }
    const dt_onnx_attr *rm = dt_onnx_model_attr(m, "round_mode");
    const char *round_mode = rm ? rm->s : NULL;
    const int64_t saturate = attr_int(m, "saturate", 1);
    dt_io_error e;
    dtcast_error error;
    memset(&error, 0, sizeof error);
    dt_tensor_init(out);
    out->type = (dtcast_type)to;
    if (dt_tensor_set_shape(out, in->ndim, in->dims, "output", &e) != DTCAST_OK ||
        dt_tensor_alloc(out, &e) != DTCAST_OK) {
        dt_tensor_free(out);
        return say(err, errsize, "%s", e.message);
    }
    dtcast_status st;
    if (node->op == ONNX_OP_CAST_LIKE)
        st = dtcast_onnx_cast_like(out->data, like->type, in->data, in->type, in->count,
                                   (int)m->opset, saturate, round_mode, opts, &error);
    else
        st = dtcast_onnx_cast(out->data, to, in->data, in->type, in->count, (int)m->opset,
                              saturate, round_mode, opts, &error);
    if (st != DTCAST_OK) {
        dt_tensor_free_converted(out);
        return say(err, errsize, "%s", error.message[0] ? error.message : dtcast_status_string(st));
    }
    const char *name = node->m.node_noutputs > 0 ? node->m.node_outputs[0] : "";
    if (name[0] && (out->name = malloc(strlen(name) + 1)) != NULL)
        memcpy(out->name, name, strlen(name) + 1);
    return 0;
}

/* BitCast: the input's bytes as type `to`, the input's shape. */
static int run_bitcast(const onnx_node *node, const dt_tensor *in, dt_tensor *out,
                       dtcast_options *opts, char *err, size_t errsize)
{
    int64_t to = 0;
    const dt_onnx_attr *a = dt_onnx_model_attr(&node->m, "to");
    if (!a)
        return say(err, errsize, "model.onnx: BitCast without attribute 'to'");
    if (a->kind != 2)
        return say(err, errsize, "model.onnx: BitCast's attribute 'to' is not an integer");
    to = a->i;
    if (in->type == DTCAST_STRING)
        return say(err, errsize, "BitCast does not take a string input");
    dt_io_error e;
    dt_tensor_init(out);
    out->type = in->type; /* the same bytes; the type becomes `to` once BitCast agrees */
    if (dt_tensor_set_shape(out, in->ndim, in->dims, "output", &e) != DTCAST_OK ||
        dt_tensor_alloc(out, &e) != DTCAST_OK) {
        dt_tensor_free(out);
        return say(err, errsize, "%s", e.message);
    }
    dtcast_error error;
    memset(&error, 0, sizeof error);
    dtcast_status st = dtcast_onnx_bitcast(out->data, to, in->data, in->type, in->count,
                                           (int)node->m.opset, opts, &error);
    if (st != DTCAST_OK) {
        dt_tensor_free(out);
        return say(err, errsize, "%s", error.message[0] ? error.message : dtcast_status_string(st));
    }
    out->type = (dtcast_type)to;
    const char *name = node->m.node_noutputs > 0 ? node->m.node_outputs[0] : "";
    if (name[0] && (out->name = malloc(strlen(name) + 1)) != NULL)
        memcpy(out->name, name, strlen(name) + 1);
    return 0;
}

static int run_qdq(const onnx_node *node, const dt_tensor *const *in, int nin, dt_tensor *out,
                   dtcast_options *opts, char *err, size_t errsize)
{
    const dt_onnx_model *m = &node->m;
    static const char *const names[3] = {"x", "scale", "zero_point"};
    dtcast_tensor t[3];
    if (nin < 2 || !in[0] || !in[1])
        return say(err, errsize, "%s needs x and a scale", m->op_type);
    for (int k = 0; k < 3; k++)
        if (k < nin && in[k] && as_tensor(in[k], &t[k], names[k], err, errsize))
            return 1;
    const dtcast_tensor *zp = nin > 2 && in[2] ? &t[2] : NULL;
    dtcast_onnx_qdq_attrs a;
    dtcast_onnx_qdq_attrs_init(&a);
    a.opset = (int)m->opset;
    a.axis = attr_int(m, "axis", 1);
    a.block_size = attr_int(m, "block_size", 0);
    a.saturate = attr_int(m, "saturate", 1);
    a.output_dtype = attr_int(m, "output_dtype", 0);
    a.precision = attr_int(m, "precision", 0);
    if (in[0]->count > SIZE_MAX / 4)
        return say(err, errsize, "x is too large");
    if (new_output(node, 0, in[0]->count * 4, out, err, errsize))
        return 1;
    dtcast_tensor y;
    memset(&y, 0, sizeof y);
    y.data = out->data;
    y.bytes = out->nbytes;
    dtcast_error error;
    memset(&error, 0, sizeof error);
    dtcast_status st = node->op == ONNX_OP_QUANTIZE
                           ? dtcast_onnx_quantize_linear(&y, &t[0], &t[1], zp, &a, opts, &error)
                           : dtcast_onnx_dequantize_linear(&y, &t[0], &t[1], zp, &a, opts, &error);
    if (st != DTCAST_OK) {
        dt_tensor_free(out);
        return say(err, errsize, "%s", error.message[0] ? error.message : dtcast_status_string(st));
    }
    if (take_result(out, &y, err, errsize)) {
        dt_tensor_free(out);
        return 1;
    }
    return 0;
}

static int run_dynamic(const onnx_node *node, const dt_tensor *const *in, int nin, dt_tensor *out,
                       dtcast_options *opts, char *err, size_t errsize)
{
    dtcast_tensor x, y[3];
    if (nin < 1 || !in[0])
        return say(err, errsize, "DynamicQuantizeLinear needs x");
    if (as_tensor(in[0], &x, "x", err, errsize))
        return 1;
    const size_t sizes[3] = {in[0]->count, 4, 1};
    for (int k = 0; k < 3; k++) {
        if (new_output(node, k, sizes[k], &out[k], err, errsize)) {
            for (int j = 0; j < k; j++)
                dt_tensor_free(&out[j]);
            return 1;
        }
        memset(&y[k], 0, sizeof y[k]);
        y[k].data = out[k].data;
        y[k].bytes = out[k].nbytes;
    }
    dtcast_error error;
    memset(&error, 0, sizeof error);
    dtcast_status st = dtcast_onnx_dynamic_quantize_linear(&y[0], &y[1], &y[2], &x, opts, &error);
    int bad = st != DTCAST_OK;
    if (bad)
        say(err, errsize, "%s", error.message[0] ? error.message : dtcast_status_string(st));
    for (int k = 0; k < 3 && !bad; k++)
        bad = take_result(&out[k], &y[k], err, errsize);
    if (bad)
        for (int k = 0; k < 3; k++)
            dt_tensor_free(&out[k]);
    return bad;
}

int onnx_node_run(const onnx_node *node, const dt_tensor *const *in, int nin, dt_tensor *out,
                  int *nout, unsigned threads, char *err, size_t errsize)
{
    dtcast_options opts;
    dtcast_options_init(&opts);
    opts.threads = threads;
    *nout = 0;
    switch (node->op) {
    case ONNX_OP_CAST:
    case ONNX_OP_CAST_LIKE:
        if (nin < 1 || !in[0])
            return say(err, errsize, "%s needs an input", node->m.op_type);
        if (run_cast(node, in[0], nin > 1 ? in[1] : NULL, out, &opts, err, errsize))
            return 1;
        *nout = 1;
        return 0;
    case ONNX_OP_QUANTIZE:
    case ONNX_OP_DEQUANTIZE:
        if (run_qdq(node, in, nin, out, &opts, err, errsize))
            return 1;
        *nout = 1;
        return 0;
    case ONNX_OP_BITCAST:
        if (nin < 1 || !in[0])
            return say(err, errsize, "BitCast needs an input");
        if (run_bitcast(node, in[0], out, &opts, err, errsize))
            return 1;
        *nout = 1;
        return 0;
    case ONNX_OP_DYNAMIC_QUANTIZE:
        if (run_dynamic(node, in, nin, out, &opts, err, errsize))
            return 1;
        *nout = 3;
        return 0;
    }
    return say(err, errsize, "unknown op");
}
