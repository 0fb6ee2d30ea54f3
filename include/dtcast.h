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
#define DTCAST_VERSION_MINOR 1
#define DTCAST_VERSION_PATCH 0
#define DTCAST_VERSION_STRING "1.1.0"

#if defined(_WIN32) && defined(DTCAST_BUILD_SHARED)
#define DTCAST_API __declspec(dllexport)
#elif defined(__GNUC__)
#define DTCAST_API __attribute__((visibility("default")))
#else
#define DTCAST_API
#endif

/* ---------------------------------------------------------------------------------------------
 * Types. Values equal ONNX TensorProto.DataType where ONNX has the type; dtcast's own formats
 * are numbered above 100. The float6 types were 105 and 106 in 1.0, before ONNX (IR 14) gave them
 * 27 and 28: every function taking a dtcast_type still accepts 105 and 106 as the same types
 * (DTCAST_FLOAT6E2M3FN_1_0, DTCAST_FLOAT6E3M2FN_1_0); the library returns 27 and 28.
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
    DTCAST_FLOAT6E2M3FN = 27, /* ONNX FLOAT6E2M3 (IR 14): 2/3/1, no Inf/NaN, max 7.5; one per
                               * byte, low 6 bits (4 in 3 bytes with float6_packed) */
    DTCAST_FLOAT6E3M2FN = 28, /* ONNX FLOAT6E3M2 (IR 14): 3/2/3, no Inf/NaN, max 28; as above */
    /* Beyond ONNX (ml_dtypes, OCP MX, OpenVINO). */
    DTCAST_COMPLEX32 = 101,         /* pair of float16 (real, imag) */
    DTCAST_FLOAT8E4M3 = 102,        /* IEEE-like 4/3/7, Inf 0x78, max 240 */
    DTCAST_FLOAT8E3M4 = 103,        /* IEEE-like 3/4/3, max 15.5 */
    DTCAST_FLOAT8E4M3B11FNUZ = 104, /* 4/3/11, NaN 0x80, no -0, max 30 */
    DTCAST_FLOAT6E2M3FN_1_0 = 105,  /* the 1.0 code of DTCAST_FLOAT6E2M3FN: still accepted */
    DTCAST_FLOAT6E3M2FN_1_0 = 106,  /* the 1.0 code of DTCAST_FLOAT6E3M2FN: still accepted */
    DTCAST_UINT1 = 107,             /* packed 8 per byte, element 8k+j in bit j */
    DTCAST_FLOAT8E5M3FNU = 108,     /* no sign bit, 5/3/15, no Inf, NaN 0xFF only, max 114688
                                     * (ml_dtypes float8_e5m3fnu) */
    DTCAST_INT1 = 109,              /* -1 and 0; packed 8 per byte, element 8k+j in bit j */
    DTCAST_BCOMPLEX32 = 110         /* pair of bfloat16 (real, imag) (ml_dtypes bcomplex32) */
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
    DTCAST_ROUND_ODD,         /* inexact -> the odd neighbour     ("odd",   CAST_ODD)   */
    DTCAST_ROUND_STOCHASTIC   /* up with probability = the dropped fraction ("stochastic"):
                               * seeded by opts.seed, element i of a tensor always draws the
                               * same number whatever the threads or the ISA (docs/conversion.md,
                               * "Stochastic rounding") */
} dtcast_round;

typedef enum dtcast_float_overflow {
    DTCAST_FLOAT_OVERFLOW_IEEE = 0, /* +-Inf, else NaN, else +-max; directed modes as IEEE 754 */
    DTCAST_FLOAT_OVERFLOW_SATURATE, /* +-max finite; +-Inf inputs become +-max too (but
                                     * float8e8m0 maps NaN and +-Inf to 0xFF always: see
                                     * docs/conversion.md, "float8e8m0 targets" and "Infinity
                                     * inputs") */
    DTCAST_FLOAT_OVERFLOW_INF       /* as IEEE, but the directed modes overflow to +-Inf
                                     * (else NaN) too: never +-max for a result beyond it. ONNX
                                     * saturate = 0 (float8e8m0 with round_mode "down") */
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
    /* float6e2m3fn / float6e3m2fn buffers (source and destination) are packed four
     * elements in three bytes (docs/formats.md, "Memory layout"), not one per byte */
    bool float6_packed;
    /* DTCAST_ROUND_STOCHASTIC: the seed S, and the index within its tensor of this call's first
     * element (a tensor converted in pieces gives the bytes of one call over the whole) */
    uint64_t seed;
    uint64_t element_offset;
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
 * odd tail padded with zero bits. float6 is one element per byte (low 6 bits), or with
 * opts->float6_packed four elements in three bytes: a bit stream from bit 0 of byte 0 up, element
 * i in bits 6i .. 6i+5 (byte 0 = e0 | e1 << 6, byte 1 = e1 >> 2 | e2 << 4, byte 2 = e2 >> 4 |
 * e3 << 2), ceil(6 * count / 8) bytes, the last padded with zero bits. The same option applies
 * to dtcast_format_element and dtcast_parse_element (index counts elements). Multi-byte elements are little-endian, native alignment is not
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

/* ---------------------------------------------------------------------------------------------
 * Bit reinterpretation (docs/onnx.md, "BitCast").
 *
 * dtcast_bitcast copies the bits of count elements of src_type into dst unchanged, to be read as
 * dst_type: NumPy's view(), ONNX's BitCast. Both types must have the same bit width
 * (dtcast_type_bits; with opts->float6_packed the float6 layout is that of both sides); every
 * type but string. The bytes are the packed, little-endian layout of dtcast_convert, so a
 * sub-byte tensor keeps its packing (int4 <-> uint4 <-> float4e2m1 copy ceil(count / 2) bytes)
 * and nothing is normalised (a uint8 2 becomes a bool byte 2, as NumPy's view). dst and src
 * may overlap. Different widths: DTCAST_ERR_UNSUPPORTED, the message naming both widths.
 *
 * dtcast_onnx_bitcast is BitCast-26 (opsets 26 to 28): `to` is the TensorProto.DataType code,
 * both types among the schema's (every ONNX type through int2 except string: complex64/128 are
 * allowed, dtcast's own formats and float6 are not), then dtcast_bitcast. An opset before 26
 * is DTCAST_ERR_UNSUPPORTED.
 * ------------------------------------------------------------------------------------------- */
DTCAST_API dtcast_status dtcast_bitcast(void *dst, dtcast_type dst_type, const void *src,
                                        dtcast_type src_type, size_t count,
                                        const dtcast_options *opts /* NULL = defaults */,
                                        dtcast_error *error);
DTCAST_API dtcast_status dtcast_onnx_bitcast(void *dst, int64_t to, const void *src,
                                             dtcast_type src_type, size_t count, int opset,
                                             const dtcast_options *opts, dtcast_error *error);

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
/* The same in the layout opts asks for (NULL = defaults): with float6_packed, a float6
 * type takes ceil(6 * count / 8) bytes; every other type as dtcast_storage_size. */
DTCAST_API dtcast_status dtcast_storage_size_opts(dtcast_type type, size_t count,
                                                 const dtcast_options *opts, size_t *bytes,
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

/* Rounding-mode names: "rne", "round", "floor", "ceil", "trunc", "odd", "stochastic" (and
 * "default"). */
DTCAST_API const char *dtcast_round_name(dtcast_round round);
DTCAST_API dtcast_status dtcast_round_from_name(const char *name, dtcast_round *round,
                                               dtcast_error *error);

/* ---------------------------------------------------------------------------------------------
 * ONNX Cast / CastLike (opsets 1..28; CastLike's newest version is 25, which opsets 26..28 use).
 * `to` is the TensorProto.DataType code (float6: 27, 28 from opset 28); saturate is the
 * attribute (1 = default); round_mode is "up" (default, NULL), "down" or "nearest". The pair is
 * checked against the opset's type constraints, then converted with ONNX's semantics.
 *
 * opts (NULL = defaults) is the base the profile starts from. The profile sets round (rne; trunc
 * for float -> integer and string -> integer; round_mode's choice for float8e8m0), int_overflow
 * (wrap), float_overflow (saturate for float8 targets when saturate is 1; INF for float8e8m0 when
 * saturate is 0: NaN beyond the range whatever round_mode says; else IEEE),
 * discard_imaginary and string_to_bool_numeric (false). It keeps the base's threads,
 * string_style, float4_nan_as_max (older ONNX text: NaN -> float4e2m1 0x7) and via_float32 (round
 * to float32 first, as the ONNX reference implementation does).
 * ------------------------------------------------------------------------------------------- */
#define DTCAST_ONNX_OPSET_MAX 28

/* Translates ONNX attributes to options for (src_type -> to) at opset, checking the rules. */
DTCAST_API dtcast_status dtcast_onnx_options(dtcast_options *out, int64_t to, dtcast_type src_type,
                                             int opset, int64_t saturate, const char *round_mode,
                                             const dtcast_options *base, dtcast_error *error);

DTCAST_API dtcast_status dtcast_onnx_cast(void *dst, int64_t to, const void *src,
                                          dtcast_type src_type, size_t count, int opset,
                                          int64_t saturate, const char *round_mode,
                                          const dtcast_options *opts, dtcast_error *error);

/* CastLike (opset >= 15): the target type is that of the second input. At opsets 26..28 it is
 * CastLike-25, which does not take float6 (DTCAST_ERR_UNSUPPORTED). */
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
    DTCAST_RULES_JAX,          /* "jax": jax.numpy.result_type (x64 on or off, strict or not) */
    DTCAST_RULES_NUMPY_ML_DTYPES /* "numpy+ml_dtypes": numpy 2 with ml_dtypes 0.7's types */
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

/* "openvino", "aclnn", "torch", "numpy", "jax", "numpy+ml_dtypes" (NULL for other values), and
 * back. */
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

/* ---------------------------------------------------------------------------------------------
 * Tensors with a shape, for the operations that need one (quantization, ONNX Q/DQ).
 *
 * data holds the elements packed as dtcast_convert packs them (sub-byte types over the flattened
 * tensor), except the codes of the scaled schemes below, which are packed per row. bytes is the
 * size of data: for an output, the room there is (checked before anything is written); for an
 * input, how much may be read (checked against the shape). Inputs are only read, though data is
 * not const. A 0-dimensional tensor (ndim 0) holds one element.
 * ------------------------------------------------------------------------------------------- */
#define DTCAST_MAX_DIMS 8

typedef struct dtcast_tensor {
    void *data;
    size_t bytes;
    dtcast_type type;
    int ndim;
    int64_t shape[DTCAST_MAX_DIMS];
} dtcast_tensor;

/* Elements of t (the product of its shape; 1 for ndim 0), or DTCAST_ERR_BAD_SHAPE. */
DTCAST_API dtcast_status dtcast_tensor_count(const dtcast_tensor *t, size_t *count,
                                            dtcast_error *error);

/* ---------------------------------------------------------------------------------------------
 * Scaled quantization (docs/quantization.md): a high-precision tensor becomes codes of a narrow
 * type plus scales, and back. Each scheme's variants pin every intermediate (which operations,
 * in which precision), so the bytes equal those of the system the variant is named after.
 *
 * Layouts (docs/quantization.md, "Layouts"):
 * - MX: blocks of `block` (32) elements along `axis`; scales float8e8m0 (one byte each) of x's
 *   shape with that axis -> ceil(D / block). Codes of x's shape.
 * - NVFP4: blocks of 16 along the last axis (which must be a multiple of 16); codes float4e2m1;
 *   scales float8e4m3fn of shape [..., D / 16]; global_scale float32 [1] unless single_level.
 * - FP8_BLOCK: tiles of block_rows x block over the last two axes (default 128 x 128; the
 *   deepseek-act variant 1 x 128); codes float8e4m3fn; scales float32 [..., ceil(N / rows),
 *   ceil(K / cols)] holding the dequantization multiplier (HF/DeepSeek "weight_scale_inv");
 *   to dequantize, float8e8m0 scales too (DeepSeek-V4: one power of two per tile).
 * - ABSMAX: symmetric absmax per tensor (per_tensor; scales [1]), per channel (block 0; scales
 *   [..., N, 1]) or per group of `block` along the last axis (scales [..., N, ceil(K / block)]);
 *   codes int8, int4, float8e4m3fn, float8e5m2 or float4e2m1; scales of scale_type.
 * Codes are packed per row: float4 / int4 two per byte along the last axis, element 2k in the low
 * nibble, a row of odd length padded with a zero nibble; float6 one per byte (low 6 bits), or
 * four in three bytes per row with float6_packed.
 * ------------------------------------------------------------------------------------------- */
typedef enum dtcast_scheme {
    DTCAST_SCHEME_MX = 1,    /* "mx": OCP Microscaling v1.0 */
    DTCAST_SCHEME_NVFP4,     /* "nvfp4" */
    DTCAST_SCHEME_FP8_BLOCK, /* "fp8-block": DeepSeek-V3/R1, HF fine-grained FP8 */
    DTCAST_SCHEME_ABSMAX     /* "absmax": compressed-tensors / llm-compressor symmetric */
} dtcast_scheme;

typedef enum dtcast_variant {
    DTCAST_VARIANT_DEFAULT = 0, /* MX: ocp; NVFP4: modelopt; FP8_BLOCK: hf; ABSMAX: ct */
    DTCAST_VARIANT_OCP,          /* "ocp" (MX) */
    DTCAST_VARIANT_MODELOPT,     /* "modelopt" (NVFP4: NVIDIA Model-Optimizer) */
    DTCAST_VARIANT_TORCHAO,      /* "torchao" (NVFP4) */
    DTCAST_VARIANT_CT,           /* "ct" (NVFP4, ABSMAX: compressed-tensors) */
    DTCAST_VARIANT_HF,           /* "hf" (FP8_BLOCK: weights, 128 x 128 tiles) */
    DTCAST_VARIANT_DEEPSEEK_ACT  /* "deepseek-act" (FP8_BLOCK: activations, 1 x 128) */
} dtcast_variant;

typedef enum dtcast_scale_mode {
    DTCAST_SCALE_DEFAULT = 0, /* floor */
    DTCAST_SCALE_FLOOR,       /* "floor": OCP, torchao FLOOR */
    DTCAST_SCALE_CEIL,        /* "ceil" */
    DTCAST_SCALE_EVEN,        /* "even": torchao EVEN, compressed-tensors */
    DTCAST_SCALE_RCEIL,       /* "rceil": NVIDIA's recipe, torchao RCEIL, gpt-oss */
    DTCAST_SCALE_LOG2         /* "log2": microxcaling's Python reference */
} dtcast_scale_mode;

typedef struct dtcast_quant_params {
    size_t size; /* sizeof(dtcast_quant_params) as the caller compiled it: set by _init */
    dtcast_scheme scheme;
    dtcast_variant variant;
    /* Code type. MX: float8e4m3fn (default), float8e5m2, float6e3m2fn, float6e2m3fn,
     * float4e2m1, int8 (MXINT8); NVFP4: float4e2m1; FP8_BLOCK: float8e4m3fn; ABSMAX: int8
     * (default), int4, float8e4m3fn, float8e5m2, float4e2m1. UNDEFINED = the default. */
    dtcast_type element;
    /* ABSMAX: float32, or UNDEFINED = the input's type (bfloat16 / float16 / float32) */
    dtcast_type scale_type;
    dtcast_scale_mode scale_mode; /* MX */
    dtcast_round round;           /* element rounding: DEFAULT (rne), RNE, RNA (MX), STOCHASTIC */
    uint64_t seed;                /* STOCHASTIC: as dtcast_options.seed */
    int axis;                     /* MX: the block axis, negative from the end (_init: -1) */
    int64_t block;                /* elements per block along the axis; 0 = the scheme's */
    int64_t block_rows;           /* FP8_BLOCK: tile rows; 0 = the variant's */
    bool per_tensor;              /* ABSMAX: one scale for the whole tensor */
    bool single_level;            /* NVFP4 torchao: no global scale */
    bool ue8m0;                   /* FP8_BLOCK deepseek-act: scales rounded up to 2^k first */
    bool reject_short;            /* MX: a short last block is an error, not zero-padded */
    bool float6_packed;           /* float6 codes four in three bytes per row */
    unsigned threads;             /* 0 = automatic; 1 = this thread */
} dtcast_quant_params;

/* Fills *p with the defaults (scheme MX, axis -1, everything else zero) and p->size = size.
 * Read like dtcast_options: size checked, later fields defaulted, unknown bytes refused. */
DTCAST_API void dtcast_quant_params_init_sized(dtcast_quant_params *p, size_t size);
#define dtcast_quant_params_init(p) dtcast_quant_params_init_sized((p), sizeof(dtcast_quant_params))

/* Names <-> values: "mx", "nvfp4", "fp8-block", "absmax"; "ocp", "modelopt", "torchao", "ct",
 * "hf", "deepseek-act" (and "default"); "floor", "ceil", "even", "rceil", "log2". */
DTCAST_API const char *dtcast_scheme_name(dtcast_scheme scheme);
DTCAST_API dtcast_status dtcast_scheme_from_name(const char *name, dtcast_scheme *scheme,
                                                dtcast_error *error);
DTCAST_API const char *dtcast_variant_name(dtcast_variant variant);
DTCAST_API dtcast_status dtcast_variant_from_name(const char *name, dtcast_variant *variant,
                                                 dtcast_error *error);
DTCAST_API const char *dtcast_scale_mode_name(dtcast_scale_mode mode);
DTCAST_API dtcast_status dtcast_scale_mode_from_name(const char *name, dtcast_scale_mode *mode,
                                                    dtcast_error *error);

/* Sets p's scheme, element, block and granularity from a recipe name (the CLI's --scheme):
 * "mxfp8" (float8e4m3fn), "mxfp8-e5m2", "mxfp6-e2m3", "mxfp6-e3m2", "mxfp4", "mxint8", "nvfp4",
 * "fp8-block" (128 x 128), "fp8-channel", "fp8-tensor", "int8-channel", "int8-tensor",
 * "int4-group" (128), "fp4-group" (16) and the scheme names themselves; other fields of p are
 * kept. */
DTCAST_API dtcast_status dtcast_quant_params_from_recipe(dtcast_quant_params *p,
                                                        const char *recipe,
                                                        dtcast_error *error);

/* The outputs quantizing x (its type and shape; data not read) gives: fills the type, ndim,
 * shape and bytes (the size needed) of codes, scales and global_scale (type UNDEFINED, ndim 0,
 * bytes 0 when the scheme has none); their data is untouched. */
DTCAST_API dtcast_status dtcast_quantize_layout(dtcast_tensor *codes, dtcast_tensor *scales,
                                               dtcast_tensor *global_scale, const dtcast_tensor *x,
                                               const dtcast_quant_params *p, dtcast_error *error);

/* Quantizes x (float32, bfloat16 or float16; float64 too) into codes, scales and global_scale
 * (may be NULL when the scheme has none). Each output's data and bytes are the caller's; the
 * function sets type, ndim and shape as dtcast_quantize_layout does. */
DTCAST_API dtcast_status dtcast_quantize(dtcast_tensor *codes, dtcast_tensor *scales,
                                        dtcast_tensor *global_scale, const dtcast_tensor *x,
                                        const dtcast_quant_params *p, dtcast_error *error);

/* The inverse: y (its data, bytes and type: float32, bfloat16 or float16; float64 too; shape set
 * from codes) from codes, scales and global_scale (NULL when none). */
DTCAST_API dtcast_status dtcast_dequantize(dtcast_tensor *y, const dtcast_tensor *codes,
                                          const dtcast_tensor *scales,
                                          const dtcast_tensor *global_scale,
                                          const dtcast_quant_params *p, dtcast_error *error);

/* ---------------------------------------------------------------------------------------------
 * ggml's block types: the tensor types of llama.cpp's GGUF files (docs/gguf.md, "Block types").
 * A type is ggml's code (ggml.h's enum ggml_type). A tensor of a block type is stored by rows
 * along its last axis (numpy order; GGUF's ne[0]), each row a run of blocks of `block` elements
 * and `bytes` bytes. Quantization is ggml's reference quantizer (ggml_quantize_chunk without an
 * importance matrix) as binary32 arithmetic without fused multiply-adds: the bytes x86-64 builds
 * of ggml and gguf-py write, on every CPU and for any thread count. Dequantization is ggml's
 * to_float: float32 bit for bit, and bfloat16 / float16 / float64 rounded once from the exact
 * value of the block's formula.
 * ------------------------------------------------------------------------------------------- */
/* The name ggml gives code ("Q4_K", "BF16", "IQ2_XXS"...), or NULL for a code ggml does not
 * define today (4, 5, 31..33, 36..38 were removed; >= 43 unknown). */
DTCAST_API const char *dtcast_ggml_type_name(int code);
/* The code of a name, any letter case ("q4_k", "Q8_0", "bf16"); -1 if none. */
DTCAST_API int dtcast_ggml_type_from_name(const char *name);
/* Elements per block and bytes per block (1 and the element size for F32, F16, BF16, F64 and
 * I8..I64); 0 for a code with no type. */
DTCAST_API int64_t dtcast_ggml_block_size(int code);
DTCAST_API size_t dtcast_ggml_type_size(int code);
/* What dtcast can do with a code: 1 = quantize to it (from float), 2 = dequantize it (to
 * float); 3 = both. F32, F16, BF16 and F64 are both (one correct rounding); I8..I64 neither. */
DTCAST_API int dtcast_ggml_support(int code);

/* What a quantization met that ggml leaves undefined or refuses (docs/gguf.md, "Edge cases"). */
typedef struct dtcast_ggml_stats {
    uint64_t nonfinite;      /* NaN or infinite inputs, quantized as 0 */
    uint64_t first_nonfinite; /* flat index of the first (UINT64_MAX when none) */
    uint64_t invalid_scales; /* blocks ggml's validation (llama-quantize) refuses and gguf-py
                              * writes: an infinite float16 scale or min (|x| too large for
                              * float16 after the division), an MXFP4 exponent 0xFF */
} dtcast_ggml_stats;

/* x (float32, bfloat16, float16 or float64 [..., K]; float64 rounded to float32 first, the
 * others widened exactly) quantized to ggml type `code` as rows of K / block blocks: writes
 * (K / block) * bytes per row of x to dst (dst_bytes must hold them). K must be a multiple of
 * the block. threads 0 = automatic. stats may be NULL. F32, F16 and BF16 are one rounding
 * (NaN as ggml spells it: float16 sign | 0x7E00, bfloat16 the high half | 0x40). */
DTCAST_API dtcast_status dtcast_ggml_quantize(void *dst, size_t dst_bytes, int code,
                                             const dtcast_tensor *x, unsigned threads,
                                             dtcast_ggml_stats *stats, dtcast_error *error);
/* The inverse: y (its type float32, bfloat16, float16 or float64, its shape [..., K] and data
 * the caller's) from src_bytes of ggml type `code` (exactly the rows y's shape needs). */
DTCAST_API dtcast_status dtcast_ggml_dequantize(dtcast_tensor *y, const void *src,
                                               size_t src_bytes, int code, unsigned threads,
                                               dtcast_error *error);

/* ---------------------------------------------------------------------------------------------
 * ONNX QuantizeLinear / DequantizeLinear (opsets 10..28) and DynamicQuantizeLinear (11), as the
 * operators define them, every input and output type of each opset (docs/onnx.md,
 * "Quantization operators"). The output's type is chosen as the operator chooses it (output_dtype,
 * else the zero point's, else uint8 / the scale's type); the function sets y->type, ndim and
 * shape; y->data and y->bytes are the caller's (x's element count times at most 4 bytes is always
 * enough). zero_point may be NULL.
 * ------------------------------------------------------------------------------------------- */
typedef struct dtcast_onnx_qdq_attrs {
    int opset;            /* 10..28 */
    int64_t axis;         /* default 1 */
    int64_t block_size;   /* 0 = not blocked */
    int64_t saturate;     /* default 1 */
    int64_t output_dtype; /* TensorProto code, 0 = not given */
    int64_t precision;    /* TensorProto code, 0 = not given (opset 23+) */
} dtcast_onnx_qdq_attrs;

/* opset 28 (DTCAST_ONNX_OPSET_MAX), axis 1, saturate 1, the rest 0. */
DTCAST_API void dtcast_onnx_qdq_attrs_init(dtcast_onnx_qdq_attrs *attrs);

DTCAST_API dtcast_status dtcast_onnx_quantize_linear(dtcast_tensor *y, const dtcast_tensor *x,
                                                    const dtcast_tensor *scale,
                                                    const dtcast_tensor *zero_point,
                                                    const dtcast_onnx_qdq_attrs *attrs,
                                                    const dtcast_options *opts,
                                                    dtcast_error *error);

DTCAST_API dtcast_status dtcast_onnx_dequantize_linear(dtcast_tensor *y, const dtcast_tensor *x,
                                                      const dtcast_tensor *scale,
                                                      const dtcast_tensor *zero_point,
                                                      const dtcast_onnx_qdq_attrs *attrs,
                                                      const dtcast_options *opts,
                                                      dtcast_error *error);

/* float32 x -> uint8 y, float32 y_scale and uint8 y_zero_point (0-dimensional). A NaN or
 * infinity in x is DTCAST_ERR_INVALID_ARGUMENT naming its index. */
DTCAST_API dtcast_status dtcast_onnx_dynamic_quantize_linear(dtcast_tensor *y,
                                                            dtcast_tensor *y_scale,
                                                            dtcast_tensor *y_zero_point,
                                                            const dtcast_tensor *x,
                                                            const dtcast_options *opts,
                                                            dtcast_error *error);

#ifdef __cplusplus
}
#endif

#endif /* DTCAST_H */
