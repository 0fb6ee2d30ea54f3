/* Text (src/text/): what its files share, private to them. The rest of the library sees
 * internal.h (dt_text_format, dt_text_parse, ...) and text_internal.h (the reference paths,
 * parsing straight to a code, the fast float repr).
 *
 * Number <-> text, exactly.
 *
 * Formatting (Python style) finds the shortest decimal that reads back to the same number at the
 * type's precision, and among those the nearest, by exact digit generation (Steele & White /
 * Gay's "mode 0") on big integers: the value and the two ends of its rounding interval are kept
 * as exact fractions r/s, mm/s, mp/s, and digits are produced until a truncation or its
 * successor lies inside the interval.
 *
 * Parsing reads the decimal exactly: D * 10^E becomes the top 64 bits of the binary value plus a
 * sticky bit (any lower bit set), which rounds correctly to every format of at most 62 bits.
 * Integer targets get their integer part and fraction class straight from the decimal digits.
 *
 * The files, one idea each:
 *   parse.c       text -> decimal: characters, scanning a decimal, integer parts, the parsing
 *                 entry points (dt_text_parse, dt_text_parse_reference, dt_text_parse_complex)
 *   reference.c   the exact reference both ways, on big integers (bignum.h): decimal -> binary
 *                 value, and the shortest digits of a binary value
 *   parse_fast.c  decimal -> binary, fast (Eisel-Lemire style): the value behind dt_text_parse
 *                 when 19 digits hold it, and dt_text_parse_to_code (plain decimals straight to
 *                 IEEE codes, the rest by dt_text_parse and one rounding)
 *   shortest.c    shortest digits, fast (Schubfach style), the reference deciding the rest
 *   format.c      binary -> text: output buffer, Python repr and ONNX Runtime layouts, the
 *                 formatting entry points, the fast Python repr of IEEE floats
 * The fast paths give the reference's results, field for field (tests/test_text_fast.c). */
#ifndef DTCAST_TEXT_SHARED_H
#define DTCAST_TEXT_SHARED_H

#include "internal.h"
#include "text_internal.h"

/* ---- characters (C locale, independent of setlocale) ----------------------------------------- */

static inline bool dt_text_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static inline bool dt_text_is_digit(char c) { return c >= '0' && c <= '9'; }

static inline const char *dt_text_skip_space(const char *s)
{
    while (dt_text_is_space(*s))
        s++;
    return s;
}

/* ---- a scanned decimal (parse.c) ------------------------------------------------------------- */

/* What the text of one real number says, before any arithmetic. */
typedef struct decimal {
    dt_class cls;      /* DT_FINITE (a digit string, possibly all zeros), DT_INF or DT_NAN */
    bool neg;
    const char *mant;  /* mantissa: digits with at most one '.' */
    const char *mant_end;
    int64_t point;     /* digit j of the mantissa (from 0, '.' skipped) weighs 10^(point-1-j) */
} decimal;

/* Digit j-th visited while walking the mantissa; '.' is skipped. */
typedef struct digit_walk {
    const char *p, *end;
} digit_walk;

static inline int dt_text_next_digit(digit_walk *w)
{
    if (w->p < w->end && *w->p == '.')
        w->p++;
    if (w->p >= w->end)
        return -1;
    return *w->p++ - '0';
}

/* ---- binary values and digits ---------------------------------------------------------------- */

#define MAG10_LIMIT 400  /* beyond 10^400 every format overflows, below 10^-400 underflows */

static inline void dt_text_set_finite(dt_value *v, uint64_t sig, int32_t exp, bool sticky)
{
    v->cls = DT_FINITE;
    v->sig = sig;
    v->exp = exp;
    v->sticky = sticky;
}

/* Binary precision of the digits: significand bits and the exponent of the smallest ulp. */
typedef struct precision {
    int bits;
    int min_exp;
} precision;

#define MAX_DIGITS 40 /* 17 suffice for float64; a margin for safety */

typedef struct digits {
    char d[MAX_DIGITS + 1]; /* '0'..'9', the first nonzero */
    int n;
    int point; /* value = 0.d[0]d[1]... * 10^point */
} digits;

/* ---- the fast paths' integers (128-bit products) --------------------------------------------- */

#if defined(__SIZEOF_INT128__)
typedef unsigned __int128 u128;

#define FAST_DIGITS 19 /* 10^19 < 2^64 */
#define POW5_EXACT_MAX 27 /* 5^27 < 2^63: D * 5^q fits 128 bits */

static inline int dt_text_leading_zeros64(uint64_t x) { return __builtin_clzll(x); } /* x != 0 */

/* 10^i for i <= 19 (parse_fast.c). */
extern const uint64_t dt_text_pow10_u64[FAST_DIGITS + 1];
/* 5^q for q <= 27 (parse_fast.c). */
uint64_t dt_text_pow5_u64(int q);
#endif

/* ---- functions one file defines and another calls -------------------------------------------- */

/* parse.c: reads an optional exponent "e[+-]digits" at s; returns the end, or s when there is
 * none. */
const char *dt_text_scan_exponent(const char *s, int64_t *exp10);

/* reference.c: the exact value of d (top 64 bits with sticky); false only when a big integer
 * overflows (never expected). */
bool dt_text_reference_decimal_to_value(const decimal *d, dt_value *v);
/* reference.c: shortest digits that read back (round to nearest even) to the value sig * 2^exp
 * at precision p, the nearest of them when there are two, the even last digit on an exact tie. */
bool dt_text_reference_shortest_digits(uint64_t sig, int32_t exp, precision p, digits *out);

/* parse_fast.c: the reference's value of d when 19 digits hold it and the table decides; false
 * otherwise (always without 128-bit integers). */
bool dt_text_fast_decimal_to_value(const decimal *d, dt_value *v);
/* parse_fast.c: the common form with at most 19 significant digits in one pass: the reference's
 * value and integer parts; false for anything else (then the full path decides). */
bool dt_text_fast_parse(const char *s, dt_value *v, dt_int_parts *ip);

/* shortest.c: the reference's shortest digits, fast where it can (else the reference). */
bool dt_text_shortest_digits(uint64_t sig, int32_t exp, precision p, digits *out);
#if defined(__SIZEOF_INT128__)
/* shortest.c: shortest digits of c * 2^q as *dec * 10^*exp10 (dec may end in zeros); false when
 * the reference has to decide. */
bool dt_text_schubfach(uint64_t c, int q, bool closer_below, uint64_t *dec, int *exp10);
#endif

#endif /* DTCAST_TEXT_SHARED_H */
