/*
 * dtcast — exact conversion between every tensor data type used in machine learning.
 *
 * One header, one library. Every conversion rounds once, exactly, under the rounding mode and
 * overflow policies in dtcast_options. Sub-byte types are packed as ONNX packs them; counts are in
 * elements. All functions are thread-safe and keep no global mutable state (lookup tables are
 * built once, on first use, under a once-guard).
 *
 * Errors: every function that can fail returns a dtcast_status (DTCAST_OK == 0) and takes a
 * `dtcast_error *error` as its last parameter. error may be NULL; otherwise, on failure, the
 * library fills it with the status, a message that names the problem (which type, which element,
 * which text) and the element index ((size_t)-1 when none). On success *error is not touched.
 * On error the output buffer is left untouched.
 *
 * Arguments come in one order: outputs first, then their types, then inputs (and their types),
 * then options, then error.
 *
 * ABI: dtcast_options begins with its own size (set by dtcast_options_init from the caller's
 * header), so a program built against this header keeps working with a later library whose
 * options have more fields (they take their defaults).
 */
#ifndef DTCAST_H
#define DTCAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DTCAST_VERSION_MAJOR 1
#define DTCAST_VERSION_MINOR 0
#define DTCAST_VERSION_PATCH 0
#define DTCAST_VERSION_STRING "1.0.0"

#if defined(_WIN32) && defined(DTCAST_BUILD_SHARED)
#define DTCAST_API __declspec(dllexport)
#elif defined(__GNUC__)
#define DTCAST_API __attribute__((visibility("default")))
#else
#define DTCAST_API
#endif

/* ---------------------------------------------------------------------------------------------
 * Types. Values equal ONNX TensorProto.DataType where ONNX has the type; dtcast's own formats
 * are numbered above 100.
 * ------------------------------------------------------------------------------------------- */
typedef enum dtcast_type {
    DTCAST_UNDEFINED = 0,
    DTCAST_FLOAT32 = 1,
    DTCAST_UINT8 = 2,
    DTCAST_INT8 = 3,
    DTCAST_UINT16 = 4,
    DTCAST_INT16 = 5,
    DTCAST_INT32 = 6,
    DTCAST_INT64 = 7,
    DTCAST_STRING = 8,
    DTCAST_BOOL = 9,
    DTCAST_FLOAT16 = 10,
    DTCAST_FLOAT64 = 11,
    DTCAST_UINT32 = 12,
    DTCAST_UINT64 = 13,
    DTCAST_COMPLEX64 = 14,
    DTCAST_COMPLEX128 = 15,
    DTCAST_BFLOAT16 = 16,
    DTCAST_FLOAT8E4M3FN = 17,
    DTCAST_FLOAT8E4M3FNUZ = 18,
    DTCAST_FLOAT8E5M2 = 19,
    DTCAST_FLOAT8E5M2FNUZ = 20,
    DTCAST_UINT4 = 21,
    DTCAST_INT4 = 22,
    DTCAST_FLOAT4E2M1 = 23,
    DTCAST_FLOAT8E8M0 = 24,
    DTCAST_UINT2 = 25,
    DTCAST_INT2 = 26,
    /* Beyond ONNX (ml_dtypes, OCP MX, OpenVINO). */
    DTCAST_COMPLEX32 = 101,         /* pair of float16 (real, imag) */
    DTCAST_FLOAT8E4M3 = 102,        /* IEEE-like 4/3/7, Inf 0x78, max 240 */
    DTCAST_FLOAT8E3M4 = 103,        /* IEEE-like 3/4/3, max 15.5 */
    DTCAST_FLOAT8E4M3B11FNUZ = 104, /* 4/3/11, NaN 0x80, no -0, max 30 */
    DTCAST_FLOAT6E2M3FN = 105,      /* 2/3/1, no Inf/NaN, max 7.5; one per byte, low 6 bits */
    DTCAST_FLOAT6E3M2FN = 106,      /* 3/2/3, no Inf/NaN, max 28; one per byte, low 6 bits */
    DTCAST_UINT1 = 107              /* packed 8 per byte, element 8k+j in bit j */
} dtcast_type;

typedef enum dtcast_status {
    DTCAST_OK = 0,
    DTCAST_ERR_INVALID_ARGUMENT, /* NULL buffer, bad option value, bad attribute */
    DTCAST_ERR_UNKNOWN_TYPE,     /* not a dtcast_type, or a name nobody knows */
    DTCAST_ERR_UNSUPPORTED,      /* the pair is not allowed by this profile / opset */
    DTCAST_ERR_COMPLEX_TO_REAL,  /* complex -> real without discard_imaginary */
    DTCAST_ERR_SIZE_OVERFLOW,    /* count * element size does not fit size_t */
    DTCAST_ERR_BAD_STRING,       /* a string that is not a number (index in the message) */
    DTCAST_ERR_OUT_OF_MEMORY,
    DTCAST_ERR_BAD_SHAPE,        /* shape outside the profile's limits */
    DTCAST_ERR_PROMOTION,        /* no common type under the rule set */
    DTCAST_ERR_IO,               /* a file could not be opened, read or written */
    DTCAST_ERR_BAD_FILE          /* truncated or malformed file */
} dtcast_status;

/* ---------------------------------------------------------------------------------------------
 * Options.
 * ------------------------------------------------------------------------------------------- */
typedef enum dtcast_round {
    DTCAST_ROUND_DEFAULT = 0, /* rne for float targets, trunc for integer targets */
    DTCAST_ROUND_RNE,         /* nearest, ties to even            ("rne",   CAST_RINT)  */
    DTCAST_ROUND_RNA,         /* nearest, ties away from zero     ("round", CAST_ROUND) */
    DTCAST_ROUND_FLOOR,       /* toward -infinity                 ("floor", CAST_FLOOR) */
    DTCAST_ROUND_CEIL,        /* toward +infinity                 ("ceil",  CAST_CEIL)  */
    DTCAST_ROUND_TRUNC,       /* toward zero                      ("trunc", CAST_TRUNC) */
    DTCAST_ROUND_ODD          /* inexact -> the odd neighbour     ("odd",   CAST_ODD)   */
} dtcast_round;

typedef enum dtcast_float_overflow {
    DTCAST_FLOAT_OVERFLOW_IEEE = 0, /* +-Inf, else NaN, else +-max; directed modes as IEEE 754 */
    DTCAST_FLOAT_OVERFLOW_SATURATE  /* +-max finite; +-Inf inputs become +-max too (but
                                     * float8e8m0 maps NaN and +-Inf to 0xFF always: see
                                     * docs/conversion.md, "float8e8m0 targets" and "Infinity
                                     * inputs") */
} dtcast_float_overflow;

typedef enum dtcast_int_overflow {
    DTCAST_INT_OVERFLOW_WRAP = 0, /* modulo 2^bits (two's complement); NaN, +-Inf -> 0 */
    DTCAST_INT_OVERFLOW_SATURATE  /* clamp to [min, max]; NaN -> 0 */
} dtcast_int_overflow;

typedef enum dtcast_string_style {
    DTCAST_STRING_PYTHON = 0, /* shortest round-trip digits, Python repr layout: 1.0, 1e-05, nan */
    DTCAST_STRING_ORT         /* ONNX Runtime: %.8g (float64 too), NaN, INF, -INF, bool 1/0 */
} dtcast_string_style;

/* Longest message a dtcast_error holds, including the NUL (JAX's promotion errors run to ~300
 * characters). */
#define DTCAST_ERROR_MESSAGE_MAX 512

typedef struct dtcast_error {
    dtcast_status status;
    size_t index;                           /* element the error is about, or (size_t)-1 */
    char message[DTCAST_ERROR_MESSAGE_MAX]; /* one line, no trailing newline */
} dtcast_error;

typedef struct dtcast_options {
    size_t size; /* sizeof(dtcast_options) as the caller compiled it: set by dtcast_options_init */
    dtcast_round round;
    dtcast_float_overflow float_overflow;
    dtcast_int_overflow int_overflow;
    unsigned threads;                 /* 0 = automatic (large tensors only); 1 = this thread */
    dtcast_string_style string_style; /* number -> string layout */
    bool discard_imaginary;           /* complex -> real keeps the real part instead of failing */
    bool string_to_bool_numeric;      /* string -> bool: "true"/"false" or a number (nonzero is
                                       * true); default: "" -> 0, any other string -> 1 (ONNX) */
    bool float4_nan_as_max;           /* NaN -> +max for NaN-less targets (older ONNX text: 0x7) */
    bool via_float32;                 /* reproduce the ONNX reference: round to float32 first */
#ifdef DTCAST_TEST_FUTURE_OPTION
    /* Test hook (tests/test_abi.sh): a field a later version might add. Its default, 0, changes
     * nothing; the library only checks that it reads it. Never defined in a normal build. */
    uint64_t future_option;
#endif
} dtcast_options;

/* Fills *opts with the defaults: round DEFAULT, float overflow IEEE, integer overflow WRAP,
 * threads 0, Python string style, every flag false; and opts->size = size.
 *
 * Every function taking options reads them like this: opts NULL means the defaults; a size of 0
 * or less than the 1.0 struct is refused (DTCAST_ERR_INVALID_ARGUMENT, "options not
 * initialised"); fields past opts->size (options from an older header) take their defaults;
 * bytes past the library's own struct (options from a newer header) must be zero, else
 * DTCAST_ERR_INVALID_ARGUMENT. Always initialise with dtcast_options_init, then set fields. */
DTCAST_API void dtcast_options_init_sized(dtcast_options *opts, size_t size);
#define dtcast_options_init(opts) dtcast_options_init_sized((opts), sizeof(dtcast_options))

/* ---------------------------------------------------------------------------------------------
 * Conversion.
 *
 * dst and src hold count elements of their types, packed as ONNX packs them (int4/uint4/float4e2m1
 * two per byte, element 2k in the low nibble; int2/uint2 four per byte; uint1 eight per byte), an
 * odd tail padded with zero bits. Multi-byte elements are little-endian, native alignment is not
 * required. Complex types are (real, imag) pairs.
 *
 * Strings: a DTCAST_STRING source is an array of count NUL-terminated `const char *`. A
 * DTCAST_STRING destination is an array of count `char *` that receives strings allocated by the
 * library; release them with dtcast_strings_free(). For caller-owned buffers use
 * dtcast_format_element() and dtcast_parse_element().
 *
 * dst and src must not overlap unless dst == src and the destination element is not wider than
 * the source element (an in-place narrowing or same-size conversion); anything else is refused.
 * ------------------------------------------------------------------------------------------- */
DTCAST_API dtcast_status dtcast_convert(void *dst, dtcast_type dst_type, const void *src,
                                        dtcast_type src_type, size_t count,
                                        const dtcast_options *opts /* NULL = defaults */,
                                        dtcast_error *error);

/* Frees count strings produced by a conversion to DTCAST_STRING (not the array itself).
 * NULL entries are skipped; the entries are set to NULL. */
DTCAST_API void dtcast_strings_free(char **strings, size_t count);

/* Longest string dtcast_format_element() writes, including the NUL. */
#define DTCAST_FORMAT_MAX 64

/* Writes element `index` of src (of src_type) as text into buf (size bytes, NUL-terminated),
 * in opts' string_style. */
DTCAST_API dtcast_status dtcast_format_element(char *buf, size_t size, const void *src,
                                               dtcast_type src_type, size_t index,
                                               const dtcast_options *opts, dtcast_error *error);

/* Parses text into element `index` of dst (of dst_type), rounding once under opts. */
DTCAST_API dtcast_status dtcast_parse_element(void *dst, dtcast_type dst_type, size_t index,
                                              const char *text, const dtcast_options *opts,
                                              dtcast_error *error);

DTCAST_API const char *dtcast_status_string(dtcast_status status);

/* ---------------------------------------------------------------------------------------------
 * Type queries.
 * ------------------------------------------------------------------------------------------- */
/* Canonical lower-case name ("float8e4m3fn"), or NULL for a value that is not a type. */
DTCAST_API const char *dtcast_type_name(dtcast_type type);
/* ONNX enum name ("FLOAT8E4M3FN", "DOUBLE"), or NULL when ONNX has no such type. */
DTCAST_API const char *dtcast_type_onnx_name(dtcast_type type);
/* Accepts canonical names, ONNX enum names and numbers, and the common aliases (f32, bf16, i8,
 * s8, fp8_e4m3, float8_e4m3fn, double, half, ...), case-insensitively. */
DTCAST_API dtcast_status dtcast_type_from_name(const char *name, dtcast_type *type,
                                              dtcast_error *error);
/* Bits of one element (4 for int4, 64 for complex64, 0 for string or an unknown value). */
DTCAST_API int dtcast_type_bits(dtcast_type type);
/* Bytes that count packed elements occupy (string: count pointers). */
DTCAST_API dtcast_status dtcast_storage_size(dtcast_type type, size_t count, size_t *bytes,
                                            dtcast_error *error);
/* The types, in a fixed order: fills up to max entries, returns how many there are. */
DTCAST_API size_t dtcast_type_list(dtcast_type *types, size_t max);

typedef enum dtcast_kind {
    DTCAST_KIND_BOOL,
    DTCAST_KIND_UNSIGNED,
    DTCAST_KIND_SIGNED,
    DTCAST_KIND_FLOAT,
    DTCAST_KIND_COMPLEX,
    DTCAST_KIND_STRING
} dtcast_kind;

typedef struct dtcast_info {
    dtcast_type type;
    const char *name;
    dtcast_kind kind;
    int bits; /* of one element */
    /* Floats (complex: of each part). */
    int exponent_bits, mantissa_bits, bias;
    bool has_inf, has_nan, has_negative_zero;
    double max;           /* largest finite */
    double lowest;        /* most negative finite */
    double min_normal;    /* smallest positive normal */
    double min_subnormal; /* smallest positive value */
    double epsilon;       /* 2^-mantissa_bits: the gap above 1 */
    uint64_t max_bits;    /* encoding of max */
    uint64_t inf_bits;    /* encoding of +Inf (0 when none) */
    uint64_t nan_bits;    /* canonical NaN (0 when none) */
    int nan_count;        /* number of NaN encodings */
    /* Integers and bool. */
    int64_t int_min;
    uint64_t int_max;
} dtcast_info;

DTCAST_API dtcast_status dtcast_type_info(dtcast_type type, dtcast_info *info,
                                         dtcast_error *error);

/* Rounding-mode names: "rne", "round", "floor", "ceil", "trunc", "odd" (and "default"). */
DTCAST_API const char *dtcast_round_name(dtcast_round round);
DTCAST_API dtcast_status dtcast_round_from_name(const char *name, dtcast_round *round,
                                               dtcast_error *error);

/* ---------------------------------------------------------------------------------------------
 * ONNX Cast / CastLike (opsets 1..25). `to` is the TensorProto.DataType code; saturate is the
 * attribute (1 = default); round_mode is "up" (default, NULL), "down" or "nearest". The pair is
 * checked against the opset's type constraints, then converted with ONNX's semantics.
 *
 * opts (NULL = defaults) is the base the profile starts from. The profile sets round (rne; trunc
 * for float -> integer and string -> integer; round_mode's choice for float8e8m0), int_overflow
 * (wrap), float_overflow (saturate for float8 targets when saturate is 1, else IEEE),
 * discard_imaginary and string_to_bool_numeric (false). It keeps the base's threads,
 * string_style, float4_nan_as_max (older ONNX text: NaN -> float4e2m1 0x7) and via_float32 (round
 * to float32 first, as the ONNX reference implementation does).
 * ------------------------------------------------------------------------------------------- */
#define DTCAST_ONNX_OPSET_MAX 25

/* Translates ONNX attributes to options for (src_type -> to) at opset, checking the rules. */
DTCAST_API dtcast_status dtcast_onnx_options(dtcast_options *out, int64_t to, dtcast_type src_type,
                                             int opset, int64_t saturate, const char *round_mode,
                                             const dtcast_options *base, dtcast_error *error);

DTCAST_API dtcast_status dtcast_onnx_cast(void *dst, int64_t to, const void *src,
                                          dtcast_type src_type, size_t count, int opset,
                                          int64_t saturate, const char *round_mode,
                                          const dtcast_options *opts, dtcast_error *error);

/* CastLike (opset >= 15): the target type is that of the second input. */
DTCAST_API dtcast_status dtcast_onnx_cast_like(void *dst, dtcast_type like_type, const void *src,
                                               dtcast_type src_type, size_t count, int opset,
                                               int64_t saturate, const char *round_mode,
                                               const dtcast_options *opts, dtcast_error *error);

/* Whether opset's Cast accepts type t (as input or output). */
DTCAST_API bool dtcast_onnx_opset_allows(int opset, dtcast_type t);

/* ---------------------------------------------------------------------------------------------
 * Ascend PyPTO pypto.cast. Supported pairs, CastMode defaults and fallbacks, saturating integers,
 * shapes of 1..4 dimensions with at most INT32_MAX elements.
 *
 * opts (NULL = defaults) is the base the profile starts from. The profile sets round (the mode,
 * or its fallback), int_overflow (saturate), float_overflow (IEEE) and via_float32 (false); it
 * keeps the base's threads, string_style, discard_imaginary, string_to_bool_numeric and
 * float4_nan_as_max (none of which matter for pypto's types).
 * ------------------------------------------------------------------------------------------- */
typedef enum dtcast_pypto_mode {
    DTCAST_CAST_NONE = 0,
    DTCAST_CAST_RINT,
    DTCAST_CAST_ROUND,
    DTCAST_CAST_FLOOR,
    DTCAST_CAST_CEIL,
    DTCAST_CAST_TRUNC,
    DTCAST_CAST_ODD
} dtcast_pypto_mode;

DTCAST_API const char *dtcast_pypto_mode_name(dtcast_pypto_mode mode);
DTCAST_API dtcast_status dtcast_pypto_mode_from_name(const char *name, dtcast_pypto_mode *mode,
                                                    dtcast_error *error);

/* Options pypto.cast(src_type -> dst_type, mode) uses, after checking the pair. */
DTCAST_API dtcast_status dtcast_pypto_options(dtcast_options *out, dtcast_type dst_type,
                                              dtcast_type src_type, dtcast_pypto_mode mode,
                                              const dtcast_options *base, dtcast_error *error);

/* The shapes pypto.cast takes: 1 to 4 dimensions, none empty, at most INT32_MAX elements. */
DTCAST_API dtcast_status dtcast_pypto_check_shape(const int64_t *shape, int ndim,
                                                  dtcast_error *error);

DTCAST_API dtcast_status dtcast_pypto_cast(void *dst, dtcast_type dst_type, const void *src,
                                           dtcast_type src_type, const int64_t *shape, int ndim,
                                           dtcast_pypto_mode mode, const dtcast_options *opts,
                                           dtcast_error *error);

/* ---------------------------------------------------------------------------------------------
 * Type promotion (docs/promotion.md): the common type of two operands under one system's rules, and
 * OpenVINO's ConvertPromoteTypes-14, which converts both inputs to it.
 *
 * An operand is what the rules look at: a tensor's element type and rank, or a Python scalar
 * (the weak types of PyTorch, NumPy NEP 50 and JAX). A zero-filled dtcast_promote_attrs holds
 * every system's defaults. Refusals of a rule set return DTCAST_ERR_PROMOTION with the system's
 * own text; operands a rule set cannot take at all (a Python scalar for OpenVINO, `dynamic`
 * outside OpenVINO, an unknown rank for torch or aclnn) are DTCAST_ERR_INVALID_ARGUMENT.
 * ------------------------------------------------------------------------------------------- */
typedef enum dtcast_promote_rules {
    DTCAST_RULES_OPENVINO = 0, /* "openvino": ConvertPromoteTypes-14 and its three attributes */
    DTCAST_RULES_ACLNN,        /* "aclnn": Ascend aclnn type derivation, 0-dim tensors */
    DTCAST_RULES_TORCH,        /* "torch": torch.promote_types; torch.result_type's categories
                                * (dimensioned > 0-dim tensors > Python scalars) */
    DTCAST_RULES_NUMPY,        /* "numpy": np.promote_types; np.result_type under NEP 50 */
    DTCAST_RULES_JAX           /* "jax": jax.numpy.result_type (x64 on or off, strict or not) */
} dtcast_promote_rules;

/* OpenVINO's element::dynamic, for the openvino rules only (operand or result). Not a data type:
 * nothing converts to or from it, and dtcast_type_name() does not know it. */
#define DTCAST_TYPE_DYNAMIC ((dtcast_type)127)

/* Rank of a tensor whose rank is not known (OpenVINO's dynamic rank). */
#define DTCAST_RANK_UNKNOWN (-1)

typedef enum dtcast_scalar_kind {
    DTCAST_SCALAR_NONE = 0, /* the operand is a tensor */
    DTCAST_SCALAR_BOOL,     /* a Python bool */
    DTCAST_SCALAR_INT,      /* a Python int (weak) */
    DTCAST_SCALAR_FLOAT,    /* a Python float (weak) */
    DTCAST_SCALAR_COMPLEX   /* a Python complex (weak) */
} dtcast_scalar_kind;

typedef struct dtcast_operand {
    dtcast_type type;          /* element type of a tensor; ignored for a Python scalar */
    int rank;                  /* 0 = 0-dim (scalar) tensor, >= 1, or DTCAST_RANK_UNKNOWN */
    dtcast_scalar_kind scalar; /* DTCAST_SCALAR_NONE for a tensor */
} dtcast_operand;

typedef struct dtcast_promote_attrs {
    bool promote_unsafe;           /* openvino: allow widening and lossy promotions (default off) */
    bool pytorch_scalar_promotion; /* openvino: rank-0 input takes the other's type (default off) */
    dtcast_type u64_target;        /* openvino u64_integer_promotion_target; UNDEFINED = float32 */
    bool x64;                      /* jax: jax_enable_x64 (default off, as JAX) */
    bool strict;                   /* jax: jax_numpy_dtype_promotion='strict' (default standard) */
} dtcast_promote_attrs;

/* Fills *attrs with the defaults (the same as zero-filling it). */
DTCAST_API void dtcast_promote_attrs_init(dtcast_promote_attrs *attrs);

/* "openvino", "aclnn", "torch", "numpy", "jax" (NULL for other values), and back. */
DTCAST_API const char *dtcast_promote_rules_name(dtcast_promote_rules rules);
DTCAST_API dtcast_status dtcast_promote_rules_from_name(const char *name,
                                                        dtcast_promote_rules *rules,
                                                        dtcast_error *error);

/* Parses the CLI's operand syntax: "float16" (a tensor of rank 1, standing for any rank >= 1),
 * "int64@0" (a 0-dim tensor), "int8@3", "uint8@?" (unknown rank), "dynamic" (OpenVINO), and
 * "py:bool", "py:int", "py:float", "py:complex" (Python scalars). Type names as
 * dtcast_type_from_name() accepts them. */
DTCAST_API dtcast_status dtcast_operand_parse(const char *text, dtcast_operand *operand,
                                              dtcast_error *error);

/* The common type of a and b under rules (attrs NULL = defaults). On success *result is the
 * type (DTCAST_TYPE_DYNAMIC possible for openvino). On failure *result is untouched and
 * error->message receives the reason, in the system's own words. */
DTCAST_API dtcast_status dtcast_promote(dtcast_type *result, dtcast_promote_rules rules,
                                        const dtcast_operand *a, const dtcast_operand *b,
                                        const dtcast_promote_attrs *attrs, dtcast_error *error);

/* One input tensor of a promoting operation: count packed elements of type (as dtcast_convert
 * reads them) and the tensor's rank (0 for a 0-dim tensor; DTCAST_RANK_UNKNOWN allowed). */
typedef struct dtcast_tensor_view {
    const void *data;
    dtcast_type type;
    size_t count;
    int rank;
} dtcast_tensor_view;

/* OpenVINO ConvertPromoteTypes-14: the common type of in0 and in1 under the openvino rules with
 * attrs (promote_unsafe, pytorch_scalar_promotion, u64_target; NULL = defaults), then both
 * inputs converted to it: out0 receives in0->count elements, out1 in1->count (each output keeps
 * its input's shape). out0_bytes / out1_bytes are the buffers' sizes; ask dtcast_promote() and
 * dtcast_storage_size() first to size them. *common receives the type. A `dynamic` result (an
 * unknown rank under pytorch_scalar_promotion) has nothing to convert to and is refused.
 * Conversion follows opts (NULL = defaults), as dtcast_convert. Nothing is written on failure. */
DTCAST_API dtcast_status dtcast_convert_promote_types(void *out0, size_t out0_bytes, void *out1,
                                                      size_t out1_bytes, dtcast_type *common,
                                                      const dtcast_tensor_view *in0,
                                                      const dtcast_tensor_view *in1,
                                                      const dtcast_promote_attrs *attrs,
                                                      const dtcast_options *opts,
                                                      dtcast_error *error);

/* The same under the aclnn rules: an aclnn binary operator (aclnnAdd, aclnnMul, ...) derives
 * the common type of self (in0) and other (in1), 0-dim tensors included, and casts both. */
DTCAST_API dtcast_status dtcast_aclnn_promote_binary(void *out0, size_t out0_bytes, void *out1,
                                                     size_t out1_bytes, dtcast_type *common,
                                                     const dtcast_tensor_view *in0,
                                                     const dtcast_tensor_view *in1,
                                                     const dtcast_options *opts,
                                                     dtcast_error *error);

#ifdef __cplusplus
}
#endif

#endif /* DTCAST_H */
