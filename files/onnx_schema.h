/* ONNX operator schemas: which element types each operator's inputs and outputs take, at every
 * opset, for the ONNX graph conversion (which changes the types the nodes compute in, and must
 * keep every node valid). The table (files/onnx_schemas.inc) is generated from the onnx
 * package's onnx.defs by files/onnx_schemas.py (`make onnx-schemas`); it holds every
 * since_version of every operator of the default domain ("", also named "ai.onnx") and of
 * "ai.onnx.ml", deprecated ones included and flagged. Not part of the installed API.
 *
 * Types are bit masks: bit t is TensorProto.DataType t (1 FLOAT, 10 FLOAT16, 16 BFLOAT16,
 * 17..20 the float8 types, 28 FLOAT6E3M2, ...: DT_ONNX_TYPE_BIT). A type constraint ("T") allows
 * tensor(X) types (its tensor_types) and may allow others as well (seq(...), optional(...),
 * map(...), sparse_tensor(...): other_types). */
#ifndef DTCAST_FILES_ONNX_SCHEMA_H
#define DTCAST_FILES_ONNX_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

/* The bit of TensorProto.DataType t (1 .. 63) in the masks. */
#define DT_ONNX_TYPE_BIT(t) ((uint64_t)1 << (t))

/* A formal parameter's option (onnx.defs.OpSchema.FormalParameterOption, the same values). */
enum { DT_ONNX_SINGLE = 0, DT_ONNX_OPTIONAL = 1, DT_ONNX_VARIADIC = 2 };

typedef struct dt_onnx_formal {
    const char *name;    /* the formal parameter's name, e.g. "X", "roi" */
    int16_t constraint;  /* index into the schema's constraints; -1: a literal type (types) */
    uint8_t option;      /* DT_ONNX_SINGLE, DT_ONNX_OPTIONAL, DT_ONNX_VARIADIC */
    uint8_t homogeneous; /* variadic: all of one type (onnx's is_homogeneous, 1 for the others) */
    /* The tensor element types it takes (bits). constraint == -1: those of its literal type,
     * tensor(float) -> FLOAT only, 0 if that type is not a tensor; constraint >= 0: a copy of
     * that constraint's tensor_types. */
    uint64_t types;
} dt_onnx_formal;

typedef struct dt_onnx_constraint {
    const char *name;      /* "T", "T1", ... */
    uint64_t tensor_types; /* the tensor(...) element types it allows (bits) */
    uint8_t other_types;   /* it also allows seq(...), optional(...), map, sparse... (non-tensor) */
} dt_onnx_constraint;

typedef struct dt_onnx_schema {
    const char *op;  /* op_type */
    int since;       /* since_version */
    uint8_t deprecated;
    uint8_t n_in, n_out, n_con; /* the formal inputs, outputs, type constraints */
    const dt_onnx_formal *in, *out; /* NULL when none */
    const dt_onnx_constraint *con;  /* NULL when none */
    /* The counts of inputs and outputs a node may have, as onnx reports them (a variadic
     * formal's max: INT32_MAX) */
    int min_in, max_in, min_out, max_out;
} dt_onnx_schema;

/* The schema of op_type (length oplen, not NUL-terminated) in domain (dlen bytes; "" and
 * "ai.onnx" are the default domain) that a model importing opset `opset` of that domain uses:
 * the one with the largest since_version <= opset. NULL if none (an unknown domain or op, an
 * opset before the op's first version). Deprecated schemas are returned like the others
 * (check ->deprecated). A binary search: O(log n) byte comparisons, no allocation. */
const dt_onnx_schema *dt_onnx_schema_find(const char *domain, size_t dlen, const char *op,
                                          size_t oplen, int64_t opset);

/* Every schema of domain (as dt_onnx_schema_find names it), sorted by (op as bytes, since), and
 * their count in *n; NULL and 0 for a domain the table does not hold. */
const dt_onnx_schema *dt_onnx_schema_all(const char *domain, size_t dlen, size_t *n);

/* The onnx version the table was generated from, e.g. "1.23.2". */
const char *dt_onnx_schema_version(void);

/* The formal parameter of a node's k-th input (or output) among a schema's n formals f: f[k],
 * or the last one when it is variadic and k is past it; NULL when there is none. */
const dt_onnx_formal *dt_onnx_formal_at(const dt_onnx_formal *f, int n, int k);

/* ---- runtimes: the kernels one registers ---------------------------------------------------
 *
 * A valid node runs on a runtime only if that runtime registered a kernel for its op, opset and
 * types. The table (files/onnx_kernels.inc) is generated from the runtime's own registry by
 * files/onnx_kernels.py (`make onnx-kernels`). */

typedef enum dt_onnx_runtime {
    DT_ONNX_RUNTIME_ANY = 0,     /* no runtime: every node valid under the schemas runs */
    DT_ONNX_RUNTIME_ORT_CPU = 1, /* onnxruntime's CPU execution provider */
} dt_onnx_runtime;

/* A registered kernel: op, the opset range [since, end] it serves, and its type constraints.
 * A constraint's name is a schema constraint ("T") or a formal parameter's name ("shape"). */
typedef struct dt_onnx_kernel {
    const char *op;
    int since, end;
    uint8_t n_con;
    const dt_onnx_constraint *con;
} dt_onnx_kernel;

/* Whether runtime rt has a kernel for a node of op (oplen bytes) in domain (dlen bytes) at opset,
 * s that op's schema there (dt_onnx_schema_find), whose inputs have the element types
 * in_types[0 .. n_in) and outputs out_types[0 .. n_out) (TensorProto.DataType; 0 for an absent
 * input or a type not known, which no constraint refuses). A kernel matches as the runtime
 * matches it: every input and output a constraint names, through its formal parameter, has one
 * of the constraint's types. DT_ONNX_RUNTIME_ANY: 1. An op the runtime has no table for (another
 * domain): 0. */
int dt_onnx_kernel_exists(dt_onnx_runtime rt, const char *domain, size_t dlen, const char *op,
                          size_t oplen, int64_t opset, const dt_onnx_schema *s,
                          const int32_t *in_types, int n_in, const int32_t *out_types, int n_out);

/* "onnxruntime-cpu" (the name --runtime takes), "any"; NULL for a value that is none. */
const char *dt_onnx_runtime_name(dt_onnx_runtime rt);

/* The version of the runtime the table was generated from ("1.31.1"); "" for ANY. */
const char *dt_onnx_runtime_version(dt_onnx_runtime rt);

#endif /* DTCAST_FILES_ONNX_SCHEMA_H */
