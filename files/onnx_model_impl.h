/* The parts of the ONNX model job (onnx_model.c) that its graph mode (onnx_graph.c) shares:
 * the scanned model (om_job, its tensors and names) and the protobuf writer. Private to files/. */
#ifndef DTCAST_FILES_ONNX_MODEL_IMPL_H
#define DTCAST_FILES_ONNX_MODEL_IMPL_H

#include "files/file.h"
#include "files/job.h"
#include "files/onnx_model.h"
#include "files/protobuf.h"

#include <stdint.h>

/* Field numbers (onnx.proto). */
enum { MP_GRAPH = 7, MP_OPSET = 8, OS_DOMAIN = 1, OS_VERSION = 2 };
enum { GP_NODE = 1, GP_INITIALIZER = 5, GP_INPUT = 11, GP_OUTPUT = 12, GP_VALUE_INFO = 13 };
enum { NP_INPUT = 1, NP_OUTPUT = 2, NP_NAME = 3, NP_OP = 4, NP_ATTR = 5, NP_DOMAIN = 7 };
enum { VI_NAME = 1, VI_TYPE = 2, TP_TENSOR = 1, TT_ELEM = 1 }; /* ValueInfo, TypeProto(.Tensor) */
enum { AP_NAME = 1, AP_I = 3, AP_T = 5, AP_G = 6, AP_TENSORS = 10, AP_GRAPHS = 11, AP_TYPE = 20 };
enum { AT_INT = 2, AT_TENSOR = 4 };
enum {
    T_DIMS = 1, T_TYPE = 2, T_SEGMENT = 3, T_FLOAT = 4, T_INT32 = 5, T_NAME = 8, T_RAW = 9,
    T_DOUBLE = 10, T_EXTERNAL = 13, T_LOCATION = 14
};
enum { SS_KEY = 1, SS_VALUE = 2 };
enum { W_NONE, W_RAW, W_TYPED, W_EXTERNAL }; /* where a tensor's data is */

/* The largest ModelProto protobuf's parsers take (2 GiB - 1): past it, data goes external. */
#define DT_PROTO_MAX ((uint64_t)INT32_MAX)
/* Tensors of fewer bytes stay in the model even when the output has external data (onnx's
 * size_threshold). */
#define DT_EXTERNAL_MIN 1024

typedef struct om_tensor {
    size_t start, end;    /* the TensorProto's bytes in the model file */
    char *name;           /* its name field, or the Constant's output ("" when none) */
    int kind;             /* 0 initializer, 1 a Constant's value, 2 another attribute's tensor */
    int is_input;         /* an initializer that is also a graph input */
    uint64_t data_type;
    int ndim;
    int64_t dims[DT_MAX_DIMS];
    uint64_t count;
    int where, runs, segment, bad_dims;
    size_t data_start, data_len; /* W_RAW, W_TYPED: in the model file */
    char *location;              /* W_EXTERNAL */
    uint64_t ext_offset, ext_length;
    int has_length;
    /* decided */
    int convert;
    int external_out;  /* its data in the output's data file */
    uint64_t out_bytes, out_offset;
    char *new_name;    /* convert: the name the converted tensor (or the Constant) writes */
    /* convert to a scaled target (om_scaled_target): DequantizeLinear(new_name, scale_name)
     * writes the old name; the scale is a scalar of scale_type, its bytes in scale */
    char *scale_name;
    uint64_t scale_type;
    uint8_t scale[8];
    int depth;         /* 1: in the model's graph; more: in a subgraph */
} om_tensor;

typedef struct om_names { /* a set of the model's value names: (pointer, length) into the map */
    const uint8_t **p;
    size_t *len;
    size_t cap, n;
} om_names;

typedef struct span {
    size_t start, end;
} span;

typedef struct om_writer {
    int counting;
    uint64_t n; /* bytes counted or written */
    dt_outfile *out;
    uint8_t *buf;
    size_t used;
} om_writer;

typedef struct om_graph_plan om_graph_plan; /* onnx_graph.c */

typedef struct om_job {
    const dt_cast_request *r;
    dt_io_error *err;
    const char *shown;
    const uint8_t *map;
    size_t len;
    char *dir; /* the model's folder (external data paths are relative to it) */
    om_tensor *t;
    size_t nt, cap;
    om_names names;
    om_names read_by_selected, read_by_excluded; /* inputs of nodes --select-op/--exclude-op match */
    int64_t opset;
    int any_external;
    int external_out; /* the output has a data file */
    char *data_name;  /* its file name (the `location` written) */
    dt_outfile data;
    dt_progress *progress;
    dt_stream_buffers *buffers;
    int depth;
    span graph;          /* the model's GraphProto */
    om_graph_plan *plan; /* graph mode (onnx_graph.c) */
    /* what was kept, for the warnings */
    size_t kept_input, kept_values, kept_small, kept_layout, kept_scale, converted;
    char first_input[128], first_values[256], first_scale[256];
} om_job;

dtcast_status om_fail(om_job *j, dtcast_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
pb om_reader(om_job *j, size_t start, size_t end);
int om_names_has(const om_names *s, const uint8_t *p, size_t n);
int om_names_add(om_names *s, const uint8_t *p, size_t n);
/* A new value name: base_<type>, or base_<type>_N, used nowhere in the model (then taken). */
char *om_new_name(om_job *j, const char *base, dtcast_type type);
/* The same with another suffix: base_<suffix>[_N]. */
char *om_new_name_suffix(om_job *j, const char *base, const char *suffix);
om_tensor *om_tensor_at(om_job *j, size_t start);
/* Whether the tensor's message is written anew: converted, or its data moves. */
int om_tensor_changes(const om_job *j, const om_tensor *t);
dtcast_status om_converter_for(om_job *j, const om_tensor *t, dt_library_convert *c);
/* Whether the request picks t: its name matches --select, or a reader's op type --select-op
 * (every tensor when neither is given), and neither its name --exclude nor a reader's op type
 * --exclude-op. */
int om_tensor_chosen(const om_job *j, const om_tensor *t);
/* Whether weights mode stores `to` as codes with a scale (float8, int8): the opset its
 * DequantizeLinear needs in *opset. */
int om_scaled_target(dtcast_type to, int64_t *opset);
dtcast_status om_values_survive(om_job *j, const om_tensor *t, const dtcast_options *o, int *ok,
                                char *why, size_t why_size);

/* ---- the writer: every message is counted (counting: nothing written), then written ---- */
typedef dtcast_status (*emit_fn)(om_job *j, om_writer *w, const void *arg);
dtcast_status om_w_flush(om_job *j, om_writer *w);
dtcast_status om_w_bytes(om_job *j, om_writer *w, const void *p, size_t n);
dtcast_status om_w_varint(om_job *j, om_writer *w, uint64_t v);
dtcast_status om_w_key(om_job *j, om_writer *w, uint32_t field, int wt);
dtcast_status om_w_text(om_job *j, om_writer *w, uint32_t field, const void *p, size_t n);
/* the input's bytes [a, b) (whole fields) as they are */
dtcast_status om_w_copy(om_job *j, om_writer *w, size_t a, size_t b);
/* a length-delimited field holding what emit writes */
dtcast_status om_w_message(om_job *j, om_writer *w, uint32_t field, emit_fn emit, const void *arg);
dtcast_status om_emit_tensor(om_job *j, om_writer *w, const void *arg); /* arg: om_tensor */
/* Cast(input) -> output, to = type. */
typedef struct cast_node {
    const char *input, *output;
    uint64_t to;
} cast_node;
dtcast_status om_emit_cast(om_job *j, om_writer *w, const void *arg); /* a NodeProto; arg: cast_node */
/* A scaled tensor's dequantization: DequantizeLinear(new_name, scale_name) -> name (a
 * NodeProto), and its scale as a TensorProto (arg: om_tensor). */
dtcast_status om_emit_dequantize(om_job *j, om_writer *w, const void *arg);
dtcast_status om_emit_scale(om_job *j, om_writer *w, const void *arg);
/* whether the AttributeProto holds a tensor that changes or a graph; the attribute anew */
int om_attr_changes(om_job *j, pb a);
dtcast_status om_emit_attr(om_job *j, om_writer *w, const void *arg); /* arg: span */
dtcast_status om_emit_graph(om_job *j, om_writer *w, const void *arg); /* arg: span (weights mode) */


/* ---- graph mode (onnx_graph.c) ---- */
/* After the scan: the plan of the model's graph in r->to (which nodes compute in it, the Casts
 * between, the tensors stored in it: their convert and new_name set). */
dtcast_status og_plan(om_job *j);
/* The planned GraphProto (arg: unused). */
dtcast_status og_emit_graph(om_job *j, om_writer *w, const void *arg);
void og_free(om_job *j);

#endif /* DTCAST_FILES_ONNX_MODEL_IMPL_H */
