/* Internal interfaces shared by the rooms of the library. Not installed. */
#ifndef DTCAST_INTERNAL_H
#define DTCAST_INTERNAL_H

#include "dtcast.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------------------------------------
 * Formats (types.c). A type is data: how its bits spell a value.
 * ------------------------------------------------------------------------------------------- */
typedef enum dt_class_of_type {
    DT_TC_BOOL,
    DT_TC_UINT,
    DT_TC_SINT,
    DT_TC_FLOAT,
    DT_TC_E8M0, /* unsigned exponent-only float: value 2^(code - 127), 0xFF NaN */
    DT_TC_COMPLEX,
    DT_TC_STRING
} dt_class_of_type;

/* How a float format spells NaN and infinity. */
typedef enum dt_nan_style {
    DT_NAN_IEEE, /* exponent all ones: mantissa 0 = Inf, else NaN */
    DT_NAN_FN,   /* only exponent and mantissa all ones is NaN (0x7F/0xFF); no Inf */
    DT_NAN_FNUZ, /* only the negative-zero code (0x80) is NaN; no Inf, no -0 */
    DT_NAN_NONE  /* every code is a finite number */
} dt_nan_style;

typedef struct dt_format {
    dtcast_type type;
    const char *name;      /* canonical */
    const char *onnx_name; /* NULL when ONNX has no such type */
    dt_class_of_type tc;
    int bits;         /* of one element as stored in the packed stream (float6: 6) */
    int stride_bits;  /* bits one element advances in memory (float6: 8, complex64: 64) */
    int exp_bits;     /* floats (a float whose exponent and mantissa fill all its bits has no
                       * sign bit: its values are >= 0, float8e5m3fnu) */
    int man_bits;     /* floats */
    int bias;         /* floats */
    dt_nan_style nan; /* floats */
    dtcast_type part; /* complex: type of each part */
} dt_format;

/* The type a code stands for: 27, 28 for float6's API 1.0 codes 105, 106; else the code itself. */
dtcast_type dt_type_canonical(dtcast_type type);
/* The format of a type, or NULL for a value that is not a type (105, 106: float6, as 27, 28). */
const dt_format *dt_format_of(dtcast_type type);
/* The same in the layout opts asks for: with float6_packed, float6 types advance 6 bits per
 * element (stride_bits 6: a bit stream, element i at bit 6i). */
const dt_format *dt_format_in(dtcast_type type, const dtcast_options *opts);
/* Bytes of count elements of f (ceil(count * stride_bits / 8)); false when they overflow. */
bool dt_format_bytes(const dt_format *f, size_t count, size_t *bytes);

/* Floats: encodings derived from the parameters. */
uint64_t dt_float_max_code(const dt_format *f); /* largest finite, positive */
uint64_t dt_float_nan_code(const dt_format *f, bool neg); /* canonical NaN (0 if none) */
uint64_t dt_float_inf_code(const dt_format *f, bool neg); /* Inf (0 if none) */
/* Its traits, inline: the reference path asks them per element. */
static inline bool dt_float_has_sign(const dt_format *f) /* false: no negative values */
{
    return f->tc == DT_TC_FLOAT && f->bits > f->exp_bits + f->man_bits;
}
static inline bool dt_float_has_inf(const dt_format *f)
{
    return f->tc == DT_TC_FLOAT && f->nan == DT_NAN_IEEE;
}
static inline bool dt_float_has_nan(const dt_format *f)
{
    return f->tc == DT_TC_E8M0 || (f->tc == DT_TC_FLOAT && f->nan != DT_NAN_NONE);
}
static inline bool dt_float_has_neg_zero(const dt_format *f)
{
    return dt_float_has_sign(f) && f->nan != DT_NAN_FNUZ;
}

/* ---------------------------------------------------------------------------------------------
 * The exact value (exact.c). Every number of every type is one of these, exactly.
 * ------------------------------------------------------------------------------------------- */
typedef enum dt_class { DT_ZERO, DT_FINITE, DT_INF, DT_NAN } dt_class;

typedef struct dt_value {
    dt_class cls;
    bool neg;     /* sign (NaN keeps the sign of its encoding) */
    bool sticky;  /* finite only: the true magnitude lies strictly between sig*2^exp and
                   * (sig+1)*2^exp. Only the string parser sets it, with sig >= 2^62, so every
                   * rounding to <= 60 significant bits is still exact (round-to-odd argument). */
    uint64_t sig; /* finite: magnitude = sig * 2^exp, sig != 0 */
    int32_t exp;
} dt_value;

/* An exactly-rounded integer needs the integer part and what the fraction is relative to 1/2. */
typedef enum dt_frac {
    DT_FRAC_ZERO,  /* the value is an integer */
    DT_FRAC_BELOW, /* 0 < fraction < 1/2 */
    DT_FRAC_HALF,  /* fraction == 1/2 */
    DT_FRAC_ABOVE  /* 1/2 < fraction < 1 */
} dt_frac;

typedef struct dt_int_parts {
    dt_class cls; /* DT_ZERO / DT_FINITE / DT_INF / DT_NAN */
    bool neg;
    bool huge;    /* |integer part| >= 2^64 */
    uint64_t low; /* integer part of |value| modulo 2^64 */
    dt_frac frac;
    uint32_t frac32; /* the first 32 bits of the fraction (dt_int_parts_of; the string parser
                      * leaves 0): what DTCAST_ROUND_STOCHASTIC compares */
} dt_int_parts;

/* The resolved choices of one conversion (the default round already chosen per target). */
typedef struct dt_rules {
    dtcast_round round; /* never DEFAULT here */
    bool saturate_float;
    bool saturate_int;
    bool nan_as_max; /* NaN -> +max for targets without NaN */
    /* DTCAST_FLOAT_OVERFLOW_INF in a mode where it differs from IEEE (one that rounds some
     * magnitudes down): overflow gives Inf/NaN there too. The kernels do not know it: set, the
     * conversion takes the reference path. */
    bool overflow_any_round;
    /* DTCAST_ROUND_STOCHASTIC: the seed, the tensor index of the call's element 0, and the
     * random bits of the element being encoded (dt_stoch_rand(seed, offset + index); the
     * reference path sets it per element in a copy of the rules) */
    uint64_t seed;
    uint64_t offset;
    uint32_t rand;
} dt_rules;

/* Decodes a code (the element's bits, right-aligned) of a non-complex, non-string type. */
void dt_decode(const dt_format *f, uint64_t code, dt_value *v);
/* Encodes v into the target format; returns the code (right-aligned, f->bits wide). */
uint64_t dt_encode(const dt_format *f, const dt_value *v, const dt_rules *r);
/* Integer targets from exact integer parts (used by dt_encode and by the string parser). */
uint64_t dt_encode_int_parts(const dt_format *f, const dt_int_parts *p, const dt_rules *r);
/* Integer parts of a finite, zero, Inf or NaN value (never called with sticky values). */
void dt_int_parts_of(const dt_value *v, dt_int_parts *p);
/* Resolves opts (as dt_options_read made them) for a conversion into target f. */
void dt_rules_for(const dt_format *target, const dtcast_options *opts, dt_rules *r);

/* Element access in packed storage (little-endian, sub-byte packing as ONNX). */
uint64_t dt_load(const dt_format *f, const void *base, size_t index);
void dt_store(const dt_format *f, void *base, size_t index, uint64_t code);

/* ---------------------------------------------------------------------------------------------
 * Text (src/text/): number <-> string.
 * ------------------------------------------------------------------------------------------- */
/* Formats one element of type f (not complex, not string) as text. The precision of the digits
 * is that of the type: float64 as double, float32 and float16 at their own precision, every
 * other float (bfloat16, float8, float6, float4, e8m0) as float32 would print its value.
 * Returns the length written (excluding NUL), or 0 if size is too small. */
size_t dt_text_format(char *buf, size_t size, const dt_format *f, uint64_t code,
                      dtcast_string_style style);
/* Formats a complex element given both part codes (Python repr layout: "(1+2j)", "1j"). */
size_t dt_text_format_complex(char *buf, size_t size, const dt_format *part, uint64_t re,
                              uint64_t im, dtcast_string_style style);
/* Parses a number: C-locale decimal or scientific notation, optional sign, surrounding white
 * space, inf/infinity/nan in any case. On success fills *v (exact, or sig >= 2^62 with sticky)
 * and *ip (exact integer parts, for integer targets) and returns true. */
bool dt_text_parse(const char *s, dt_value *v, dt_int_parts *ip);
/* Parses a complex number: "1", "2j", "1+2j", "(1-2.5e3j)", Python's forms. */
bool dt_text_parse_complex(const char *s, dt_value *re, dt_int_parts *re_ip, dt_value *im,
                           dt_int_parts *im_ip);

/* ---------------------------------------------------------------------------------------------
 * Errors and options.
 * ------------------------------------------------------------------------------------------- */
/* The index of an error that is about no element. */
#define DT_NO_INDEX ((size_t)-1)

/* Records status, index and a printf-style message in *error (if not NULL); returns status. */
dtcast_status dt_fail(dtcast_error *error, dtcast_status status, size_t index, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* The one way the library reads a caller's options: copies *opts (NULL = the defaults) into
 * *out, a complete struct of this library's layout. Fields past opts->size take their defaults;
 * a size below the 1.0 struct is refused, and so are nonzero bytes past this library's struct. */
dtcast_status dt_options_read(const dtcast_options *opts, dtcast_options *out, dtcast_error *error);

/* The rules of the structs that begin with their own size (dtcast_options, dtcast_quant_params):
 * dt_sized_init copies `full` bytes of defaults into a caller's struct of `size` bytes (zeroing
 * what only the caller knows) and sets its size; dt_sized_read copies a caller's struct into
 * `out` (already holding the defaults: fields past the caller's size keep them), refusing a
 * size below `min` ("WHAT not initialised: call INIT") and nonzero bytes past `full`. */
void dt_sized_init(void *dst, size_t size, const void *defaults, size_t full);
dtcast_status dt_sized_read(void *out, const void *in, size_t full, size_t min, const char *what,
                            const char *init, dtcast_error *error);

#endif /* DTCAST_INTERNAL_H */
