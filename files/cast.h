/* The cast job (docs/files.md, "The file layer as a library"): a tensor file (.npy, .pb, raw,
 * .safetensors) into another type and format, streamed, or a sharded checkpoint's shards and
 * index (in one step, or in steps: --shards, --index-only). Never prints: errors fill a
 * dt_io_error, progress, warnings and --report text go through the hooks. */
#ifndef DTCAST_FILES_CAST_H
#define DTCAST_FILES_CAST_H

#include "files/job.h"
#include "files/pipeline.h"
#include "files/tensor.h"

#include <stddef.h>
#include <stdint.h>

/* The conversion profile and its settings. DT_PROFILE_ORT_FLOAT16 and
 * DT_PROFILE_ONNXCONVERTER_COMMON: float32 -> float16 as the float16 converters of onnxruntime
 * (onnxruntime.transformers.float16) and onnxconverter-common write initializers: nonzero
 * |x| below a floor (5.96e-08; 1e-7) becomes the floor, finite |x| above a bound (65504; 1e4)
 * the bound, then round to nearest even (docs/onnx_models.md, "Profiles of the converters"). */
typedef enum dt_profile {
    DT_PROFILE_EXACT,
    DT_PROFILE_ONNX,
    DT_PROFILE_PYPTO,
    DT_PROFILE_ORT_FLOAT16,
    DT_PROFILE_ONNXCONVERTER_COMMON
} dt_profile;

typedef struct dt_conversion {
    dt_profile profile;
    int opset;                   /* onnx */
    dtcast_options options;      /* exact (and the fields the others share) */
    int64_t saturate;            /* onnx */
    const char *round_mode;      /* onnx, or NULL */
    dtcast_pypto_mode cast_mode; /* pypto */
} dt_conversion;

typedef enum dt_external {
    DT_EXTERNAL_AUTO,   /* a TensorProto over 2 GiB: external data */
    DT_EXTERNAL_ALWAYS,
    DT_EXTERNAL_NEVER
} dt_external;

/* A conversion error's text for the user, with the library's option field names replaced by
 * what the user gave (the CLI's flags); returns message itself or buf. */
typedef const char *(*dt_error_text_fn)(void *ctx, dtcast_status status, const char *message,
                                        char *buf, size_t size);
/* A hint for a name the user typed that is none of candidates (" (did you mean 'x'?)" or ""). */
typedef const char *(*dt_suggest_fn)(void *ctx, const char *typed, const char *const *candidates,
                                     size_t n, char *buf, size_t size);

typedef struct dt_cast_request {
    const char *in, *out;          /* "-": stdin / stdout */
    dt_file_kind in_kind, out_kind; /* as the caller decided (out_kind: unused for an index) */
    dtcast_type to;
    dt_conversion conversion;
    dt_input input;
    int report;                    /* a dt_report per converted tensor, through hooks.report */
    int watch;                     /* warn about finite values that became NaN or Inf */
    dt_globs select, exclude;
    dt_external external_data;
    int float6_packed;             /* raw float6 input and output four in three bytes */
    const char *shards;            /* convert only these shards (a list), write no index */
    int index_only;                /* convert nothing: the index of the shards in OUT */
    int raw_codes;                 /* cast the codes of scaled tensors as values */
    /* ONNX models (docs/onnx_models.md): */
    int onnx_graph;                /* --mode graph: the compute in `to`, not only the weights */
    dt_globs select_ops, exclude_ops; /* tensors chosen / left by the op types of their readers */
    int keep_io_types;             /* graph mode: the graph's inputs and outputs keep their type */
    dt_globs block_ops, block_nodes; /* graph mode: nodes that keep their type (op types, names) */
    int onnx_runtime;              /* graph mode: a dt_onnx_runtime (files/onnx_schema.h) whose
                                    * kernels every node in T must have; 0: any */
    /* For messages: */
    const char *profile_label;     /* "exact", "onnx:25", "pypto" */
    const char *to_flag;           /* how the user spelled --to */
    dt_error_text_fn error_text;   /* NULL: the library's message as it is */
    void *error_text_ctx;
    dt_suggest_fn suggest;         /* NULL: no hint */
    void *suggest_ctx;
    dt_job_hooks hooks;
    /* Set by the job: */
    int single_output;             /* OUT holds one tensor */
    dt_io_error *err_out;          /* where the job writes its error (while it runs) */
} dt_cast_request;

/* The name the CLI and Python take for p ("exact", "onnx", "pypto", "ort-float16",
 * "onnxconverter-common"; NULL past the last); its label in messages adds ONNX's opset. */
const char *dt_profile_name(dt_profile p);
void dt_profile_label(dt_profile p, int opset, char *buf, size_t size);

/* The convert step of the pair from -> to under the profile c (its options, and the converters'
 * clamp under their profiles), with dt_conversion_options' checks. */
dtcast_status dt_conversion_converter(const dt_conversion *c, dtcast_type from, dtcast_type to,
                                      const int64_t *dims, int ndim, dt_library_convert *out,
                                      dtcast_error *error);
/* Whether the profile converts float32 tensors only (the converters' profiles): a job then
 * leaves the others as they are where it may (an ONNX model's float64 initializers). */
int dt_conversion_float32_only(const dt_conversion *c);

/* The options the profile c gives the pair from -> to (its checks included: ONNX's opset rules,
 * pypto's shape limits, a pair no profile converts), as the job uses them for a tensor of that
 * shape; on a refusal error holds the library's message. */
dtcast_status dt_conversion_options(const dt_conversion *c, dtcast_type from, dtcast_type to,
                                    const int64_t *dims, int ndim, dtcast_options *out,
                                    dtcast_error *error);

/* Converts r->in to r->out (every output a temporary file renamed at the end: nothing is left
 * on error). Usage errors set err->usage. */
dtcast_status dt_cast_files(dt_cast_request *r, dt_io_error *err);

#endif /* DTCAST_FILES_CAST_H */
