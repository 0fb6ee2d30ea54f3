/* Number <-> text, exactly.
 *
 * Formatting (Python style) finds the shortest decimal that reads back to the same number at the
 * type's precision, and among those the nearest, by exact digit generation (Steele & White /
 * Gay's "mode 0") on big integers: the value and the two ends of its rounding interval are kept
 * as exact fractions r/s, mm/s, mp/s, and digits are produced until a truncation or its
 * successor lies inside the interval.
 *
 * Parsing reads the decimal exactly: D * 10^E becomes the top 64 bits of the binary value plus a
 * sticky bit (any lower bit set), which rounds correctly to every format of at most 62 bits.
 * Integer targets get their integer part and fraction class straight from the decimal digits. */
#include "internal.h"

#include "bignum.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- characters (C locale, independent of setlocale) ---------------------------------------- */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static char to_lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c; }

static const char *skip_space(const char *s)
{
    while (is_space(*s))
        s++;
    return s;
}

/* Whether s starts with word (lower case), ignoring case. */
static bool starts_with_word(const char *s, const char *word)
{
    for (; *word; s++, word++) {
        if (to_lower(*s) != *word)
            return false;
    }
    return true;
}

/* ---- scanning a decimal ------------------------------------------------------------------- */

/* Beyond this a decimal exponent only ever means overflow or underflow. */
#define EXP10_CLAMP INT64_C(1000000000000)

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

static int next_digit(digit_walk *w)
{
    if (w->p < w->end && *w->p == '.')
        w->p++;
    if (w->p >= w->end)
        return -1;
    return *w->p++ - '0';
}

/* Reads an optional exponent "e[+-]digits" at s; returns the end, or s when there is none. */
static const char *scan_exponent(const char *s, int64_t *exp10)
{
    *exp10 = 0;
    if (*s != 'e' && *s != 'E')
        return s;
    const char *p = s + 1;
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (!is_digit(*p))
        return s; /* "1e", "1e+": the number ends before the 'e' */
    int64_t e = 0;
    for (; is_digit(*p); p++) {
        if (e < EXP10_CLAMP)
            e = e * 10 + (*p - '0');
    }
    *exp10 = neg ? -e : e;
    return p;
}

/* Scans one real number at s (no white space). Returns its end, or NULL if none starts at s. */
static const char *scan_decimal(const char *s, decimal *d)
{
    memset(d, 0, sizeof *d);
    const char *p = s;
    if (*p == '+' || *p == '-')
        d->neg = *p++ == '-';
    if (starts_with_word(p, "inf")) {
        d->cls = DT_INF;
        return p + (starts_with_word(p, "infinity") ? 8 : 3);
    }
    if (starts_with_word(p, "nan")) {
        d->cls = DT_NAN;
        return p + 3;
    }
    d->cls = DT_FINITE;
    d->mant = p;
    int64_t int_digits = 0, frac_digits = 0;
    for (; is_digit(*p); p++)
        int_digits += int_digits < EXP10_CLAMP;
    if (*p == '.') {
        p++;
        for (; is_digit(*p); p++)
            frac_digits = 1;
    }
    if (int_digits == 0 && frac_digits == 0)
        return NULL; /* "", ".", "e5", "+" */
    d->mant_end = p;
    int64_t exp10;
    p = scan_exponent(p, &exp10);
    d->point = int_digits + exp10;
    return p;
}

/* ---- decimal -> exact binary value ---------------------------------------------------------- */

#define KEEP_DIGITS 800  /* significant digits read exactly; the rest only as "nonzero or not" */
#define MAG10_LIMIT 400  /* beyond 10^400 every format overflows, below 10^-400 underflows */

static void set_finite(dt_value *v, uint64_t sig, int32_t exp, bool sticky)
{
    v->cls = DT_FINITE;
    v->sig = sig;
    v->exp = exp;
    v->sticky = sticky;
}

/* The top 64 bits of n (which is not zero) times 2^exp2, with sticky for the bits below. */
static void top_bits_of(const dt_bn *n, int64_t exp2, dt_value *v)
{
    int shift = dt_bn_bit_length(n) - 64;
    if (shift <= 0) {
        set_finite(v, dt_bn_bits_at(n, 0), (int32_t)exp2, false);
        return;
    }
    set_finite(v, dt_bn_bits_at(n, shift), (int32_t)(exp2 + shift), dt_bn_any_below(n, shift));
}

/* v = d / 5^t * 2^-t, i.e. d / 10^t: 64 quotient bits by restoring long division, then sticky. */
static bool divide_by_pow10(const dt_bn *d, int64_t t, dt_value *v)
{
    dt_bn num = *d, den;
    dt_bn_set_u64(&den, 1);
    if (!dt_bn_mul_pow5(&den, (unsigned)t))
        return false;
    /* Align so that num / den lies in (2^62, 2^64): num has exactly 63 more bits than den. */
    const int k = dt_bn_bit_length(&den) - dt_bn_bit_length(&num) + 63;
    if (!(k >= 0 ? dt_bn_shl(&num, (unsigned)k) : dt_bn_shl(&den, (unsigned)-k)))
        return false;
    dt_bn step = den;
    if (!dt_bn_shl(&step, 63))
        return false;
    uint64_t q = 0;
    for (int i = 63; i >= 0; i--) {
        if (dt_bn_cmp(&num, &step) >= 0) {
            dt_bn_sub(&num, &step);
            q |= UINT64_C(1) << i;
        }
        if (i > 0)
            dt_bn_shr1(&step);
    }
    int64_t exp2 = -(int64_t)k - t;
    if (!(q >> 63)) { /* one more quotient bit, so that bit 63 is set */
        if (!dt_bn_shl(&num, 1))
            return false;
        q <<= 1;
        if (dt_bn_cmp(&num, &den) >= 0) {
            dt_bn_sub(&num, &den);
            q |= 1;
        }
        exp2--;
    }
    set_finite(v, q, (int32_t)exp2, !dt_bn_is_zero(&num));
    return true;
}

/* The significant digits as an integer D, trailing zeros dropped. Beyond KEEP_DIGITS a nonzero
 * tail becomes one extra digit 1: the value then stays strictly between the same two neighbouring
 * KEEP_DIGITS-digit decimals, so no rounding boundary of any format lies between it and the true
 * value (boundaries are multiples of 2^-1075; at or above 10^-400 those have at most 675
 * significant digits, below 10^401 at most 401). Returns false when all digits are zero. *first
 * is the index of the first nonzero digit, *end the index after D's last digit; *ok turns false
 * if the big integer overflows (never expected). */
static bool significant_digits(const decimal *d, dt_bn *big, int64_t *first, int64_t *end,
                               bool *ok)
{
    digit_walk w = {d->mant, d->mant_end};
    int64_t j = 0, zeros = 0;
    bool dropped = false;
    int c;
    *first = -1;
    *end = 0;
    *ok = true;
    dt_bn_set_u64(big, 0);
    for (; (c = next_digit(&w)) >= 0; j++) {
        if (*first < 0) {
            if (c == 0)
                continue;
            *first = j;
        }
        if (j - *first >= KEEP_DIGITS) {
            dropped |= c != 0;
        } else if (c == 0) {
            zeros++; /* multiplied in only if a nonzero digit follows */
        } else {
            *ok &= dt_bn_mul_pow10(big, (unsigned)zeros + 1) && dt_bn_add_small(big, (uint32_t)c);
            zeros = 0;
            *end = j + 1;
        }
    }
    if (*first < 0)
        return false;
    if (dropped) { /* the digit 1 at index first + KEEP_DIGITS, after the kept trailing zeros */
        *ok &= dt_bn_mul_pow10(big, (unsigned)zeros + 1) && dt_bn_add_small(big, 1);
        *end = *first + KEEP_DIGITS + 1;
    }
    return true;
}

static bool decimal_to_value(const decimal *d, dt_value *v)
{
    memset(v, 0, sizeof *v);
    v->neg = d->neg;
    if (d->cls != DT_FINITE) {
        v->cls = d->cls;
        return true;
    }
    dt_bn big;
    int64_t first, end;
    bool ok;
    if (!significant_digits(d, &big, &first, &end, &ok)) {
        v->cls = DT_ZERO;
        return true;
    }
    const int64_t mag = d->point - 1 - first; /* 10^mag <= value < 10^(mag+1) */
    if (mag > MAG10_LIMIT) {
        set_finite(v, UINT64_C(1) << 63, 2000, false); /* 2^2063: beyond every format */
        return true;
    }
    if (mag < -MAG10_LIMIT) {
        set_finite(v, UINT64_C(1) << 63, -4000, true); /* a sliver above 2^-3937 */
        return true;
    }
    if (!ok)
        return false;
    const int64_t e10 = d->point - end; /* value = big * 10^e10 */
    if (e10 >= 0) {                     /* big * 5^e10 * 2^e10 */
        if (!dt_bn_mul_pow5(&big, (unsigned)e10))
            return false;
        top_bits_of(&big, e10, v);
        return true;
    }
    return divide_by_pow10(&big, -e10, v);
}

/* ---- decimal -> integer parts ------------------------------------------------------------- */

/* acc = acc * 10 + c modulo 2^64, noting when the true value leaves 64 bits. */
static void push_digit(uint64_t *acc, bool *huge, int c)
{
    if (*acc > (UINT64_MAX - (uint64_t)c) / 10)
        *huge = true;
    *acc = *acc * 10 + (uint64_t)c; /* unsigned: wraps modulo 2^64 */
}

static void decimal_to_int_parts(const decimal *d, dt_int_parts *ip)
{
    memset(ip, 0, sizeof *ip);
    ip->neg = d->neg;
    if (d->cls != DT_FINITE) {
        ip->cls = d->cls;
        return;
    }
    digit_walk w = {d->mant, d->mant_end};
    int64_t j = 0;
    int c, first_frac = 0;
    bool any = false, rest = false;
    for (; (c = next_digit(&w)) >= 0; j++) {
        any |= c != 0;
        if (j < d->point)
            push_digit(&ip->low, &ip->huge, c);
        else if (j == d->point)
            first_frac = c;
        else
            rest |= c != 0;
    }
    if (!any) {
        ip->cls = DT_ZERO;
        return;
    }
    ip->cls = DT_FINITE;
    /* Zeros implied by the exponent: after 84 of them a nonzero integer part has passed 2^64
     * (huge) and its low 64 bits are 0 (10^64 is a multiple of 2^64). */
    int64_t zeros = d->point - j;
    if (zeros > 100)
        zeros = 100;
    for (; zeros > 0; zeros--)
        push_digit(&ip->low, &ip->huge, 0);
    /* When point < 0 the first fraction digit is an implied 0 and every digit went to rest. */
    if (first_frac == 0)
        ip->frac = rest ? DT_FRAC_BELOW : DT_FRAC_ZERO;
    else if (first_frac < 5)
        ip->frac = DT_FRAC_BELOW;
    else if (first_frac == 5)
        ip->frac = rest ? DT_FRAC_ABOVE : DT_FRAC_HALF;
    else
        ip->frac = DT_FRAC_ABOVE;
}

/* ---- parsing: entry points ---------------------------------------------------------------- */

static bool decimal_to_number(const decimal *d, dt_value *v, dt_int_parts *ip)
{
    if (!decimal_to_value(d, v))
        return false;
    decimal_to_int_parts(d, ip);
    return true;
}

bool dt_text_parse(const char *s, dt_value *v, dt_int_parts *ip)
{
    decimal d;
    const char *p = scan_decimal(skip_space(s), &d);
    if (!p || *skip_space(p) != '\0')
        return false;
    return decimal_to_number(&d, v, ip);
}

/* +1 or -1 (Python's "j", "+j", "-j" forms). */
static void set_unit(bool neg, dt_value *v, dt_int_parts *ip)
{
    memset(v, 0, sizeof *v);
    memset(ip, 0, sizeof *ip);
    set_finite(v, 1, 0, false);
    v->neg = ip->neg = neg;
    ip->cls = DT_FINITE;
    ip->low = 1;
}

static void set_zero(dt_value *v, dt_int_parts *ip)
{
    memset(v, 0, sizeof *v);
    memset(ip, 0, sizeof *ip);
    v->cls = ip->cls = DT_ZERO;
}

static bool is_j(char c) { return c == 'j' || c == 'J'; }

/* CPython's complex_from_string_inner: <float>, <float>j, <float><signed-float>j, and the old
 * forms <float><sign>j, <sign>j, j; white space around, optionally inside parentheses. */
bool dt_text_parse_complex(const char *s, dt_value *re, dt_int_parts *re_ip, dt_value *im,
                           dt_int_parts *im_ip)
{
    decimal a, b;
    const char *p = skip_space(s);
    const bool paren = *p == '(';
    if (paren)
        p = skip_space(p + 1);
    set_zero(re, re_ip);
    set_zero(im, im_ip);
    const char *end = scan_decimal(p, &a);
    if (end) {
        p = end;
        if (*p == '+' || *p == '-') {
            if (!decimal_to_number(&a, re, re_ip))
                return false;
            end = scan_decimal(p, &b);
            if (end) {
                if (!decimal_to_number(&b, im, im_ip))
                    return false;
                p = end;
            } else {
                set_unit(*p++ == '-', im, im_ip);
            }
            if (!is_j(*p++))
                return false;
        } else if (is_j(*p)) {
            p++;
            if (!decimal_to_number(&a, im, im_ip))
                return false;
        } else if (!decimal_to_number(&a, re, re_ip)) {
            return false;
        }
    } else {
        bool neg = false;
        if (*p == '+' || *p == '-')
            neg = *p++ == '-';
        if (!is_j(*p++))
            return false;
        set_unit(neg, im, im_ip);
    }
    p = skip_space(p);
    if (paren) {
        if (*p++ != ')')
            return false;
        p = skip_space(p);
    }
    return *p == '\0';
}

/* ---- shortest digits ----------------------------------------------------------------------- */

/* Binary precision of the digits: significand bits and the exponent of the smallest ulp. */
typedef struct precision {
    int bits;
    int min_exp;
} precision;

static precision precision_of(const dt_format *f)
{
    if (f->type != DTCAST_FLOAT64 && f->type != DTCAST_FLOAT16)
        f = dt_format_of(DTCAST_FLOAT32); /* every other float prints as float32 would */
    precision p = {f->man_bits + 1, 1 - f->bias - f->man_bits};
    return p;
}

#define MAX_DIGITS 40 /* 17 suffice for float64; a margin for safety */

typedef struct digits {
    char d[MAX_DIGITS + 1]; /* '0'..'9', the first nonzero */
    int n;
    int point; /* value = 0.d[0]d[1]... * 10^point */
} digits;

/* digit = floor(r / s), r = r mod s, for r < 10 s, with s2/s4/s8 = 2s/4s/8s precomputed. */
static int extract_digit(dt_bn *r, const dt_bn *s, const dt_bn *s2, const dt_bn *s4,
                         const dt_bn *s8)
{
    int digit = 0;
    const dt_bn *multiple[4] = {s8, s4, s2, s};
    for (int i = 0; i < 4; i++) {
        if (dt_bn_cmp(r, multiple[i]) >= 0) {
            dt_bn_sub(r, multiple[i]);
            digit += 8 >> i;
        }
    }
    return digit;
}

/* Adds one unit in the last place of the digits (the successor of a truncation). */
static void increment_digits(digits *out)
{
    int i = out->n - 1;
    while (i >= 0 && out->d[i] == '9')
        out->d[i--] = '0';
    if (i >= 0) {
        out->d[i]++;
    } else { /* 99..9 + 1 = 100..0: one digit "1", the point moves right */
        out->d[0] = '1';
        out->n = 1;
        out->point++;
    }
}

static int bit_length(uint64_t x)
{
    int n = 0;
    for (; x; x >>= 1)
        n++;
    return n;
}

/* floor(b * log10(2)) or one more, for the first guess of the decimal exponent. */
static int64_t log10_pow2_guess(int64_t b)
{
    const int64_t x = b * 78913; /* 78913 / 2^18 is just under log10(2) */
    return x >= 0 ? x / 262144 : -((-x + 262143) / 262144);
}

/* Shortest digits that read back (round to nearest even) to the value sig * 2^exp at precision
 * p, the nearest of them when there are two, the even last digit on an exact tie. */
static bool shortest_digits(uint64_t sig, int32_t exp, precision p, digits *out)
{
    uint64_t m = sig;
    int64_t e = exp;
    while (m >> p.bits && !(m & 1)) { /* defensive: a value given with extra zero bits */
        m >>= 1;
        e++;
    }
    while (!(m >> (p.bits - 1)) && e > p.min_exp) { /* normalize; subnormals stop at min_exp */
        m <<= 1;
        e--;
    }
    const bool even = !(m & 1);
    /* At a power of two the neighbour below is half as far away as the one above. */
    const bool closer_below = m == UINT64_C(1) << (p.bits - 1) && e > p.min_exp;

    /* In units of 2^(e-2): value 4m, distance to the upper midpoint 2, to the lower 2 or 1. */
    dt_bn r, s, mp, mm;
    dt_bn_set_u64(&r, m << 2);
    dt_bn_set_u64(&mp, 2);
    dt_bn_set_u64(&mm, closer_below ? 1 : 2);
    dt_bn_set_u64(&s, 1);
    bool ok = true;
    if (e - 2 >= 0)
        ok &= dt_bn_shl(&r, (unsigned)(e - 2)) && dt_bn_shl(&mp, (unsigned)(e - 2)) &&
              dt_bn_shl(&mm, (unsigned)(e - 2));
    else
        ok &= dt_bn_shl(&s, (unsigned)(2 - e));

    /* Scale by 10^-k so that 1 <= r/s < 10. */
    int64_t k = log10_pow2_guess(bit_length(m) - 1 + e);
    if (k >= 0)
        ok &= dt_bn_mul_pow10(&s, (unsigned)k);
    else
        ok &= dt_bn_mul_pow10(&r, (unsigned)-k) && dt_bn_mul_pow10(&mp, (unsigned)-k) &&
              dt_bn_mul_pow10(&mm, (unsigned)-k);
    for (;;) {
        dt_bn ten_s = s;
        ok &= dt_bn_mul_small(&ten_s, 10);
        if (!ok || dt_bn_cmp(&r, &ten_s) < 0)
            break;
        s = ten_s;
        k++;
    }
    while (ok && dt_bn_cmp(&r, &s) < 0) {
        ok &= dt_bn_mul_small(&r, 10) && dt_bn_mul_small(&mp, 10) && dt_bn_mul_small(&mm, 10);
        k--;
    }
    dt_bn s2 = s, s4 = s, s8 = s;
    ok &= dt_bn_shl(&s2, 1) && dt_bn_shl(&s4, 2) && dt_bn_shl(&s8, 3);
    if (!ok)
        return false;

    out->n = 0;
    out->point = (int)k + 1;
    for (;;) {
        if (out->n == MAX_DIGITS)
            return false;
        out->d[out->n++] = (char)('0' + extract_digit(&r, &s, &s2, &s4, &s8));
        /* Now value = digits + r/s units of the last digit; mm/s and mp/s are the distances to
         * the interval's ends in the same units. The truncation reads back if it lies within
         * mm below the value, its successor if it lies within mp above (ends: if m is even). */
        const int lo = dt_bn_cmp(&r, &mm);
        dt_bn r_mp = r;
        if (!dt_bn_add(&r_mp, &mp))
            return false;
        const int hi = dt_bn_cmp(&r_mp, &s);
        const bool low_ok = lo < 0 || (lo == 0 && even);
        const bool high_ok = hi > 0 || (hi == 0 && even);
        if (low_ok || high_ok) {
            bool up = high_ok;
            if (low_ok && high_ok) { /* both read back: the nearer, ties to an even digit */
                dt_bn r2 = r;
                if (!dt_bn_shl(&r2, 1))
                    return false;
                const int c = dt_bn_cmp(&r2, &s);
                up = c > 0 || (c == 0 && ((out->d[out->n - 1] - '0') & 1));
            }
            if (up)
                increment_digits(out);
            break;
        }
        if (!dt_bn_mul_small(&r, 10) || !dt_bn_mul_small(&mp, 10) || !dt_bn_mul_small(&mm, 10))
            return false;
    }
    while (out->n > 1 && out->d[out->n - 1] == '0')
        out->n--;
    out->d[out->n] = '\0';
    return true;
}

/* ---- output buffer ------------------------------------------------------------------------- */

typedef struct out_buf {
    char s[128];
    size_t n;
} out_buf;

static void put_char(out_buf *b, char c)
{
    if (b->n + 1 < sizeof b->s)
        b->s[b->n++] = c;
    b->s[b->n] = '\0';
}

static void put_str(out_buf *b, const char *s)
{
    while (*s)
        put_char(b, *s++);
}

static void put_repeat(out_buf *b, char c, int count)
{
    while (count-- > 0)
        put_char(b, c);
}

static void put_unsigned(out_buf *b, uint64_t x)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + x % 10);
        x /= 10;
    } while (x);
    while (n)
        put_char(b, tmp[--n]);
}

/* Copies the result into the caller's buffer: its length, or 0 when it does not fit. */
static size_t deliver(char *buf, size_t size, const out_buf *b)
{
    if (!buf || b->n + 1 > size)
        return 0;
    memcpy(buf, b->s, b->n + 1);
    return b->n;
}

/* ---- Python repr layout -------------------------------------------------------------------- */

/* CPython's format_float_short for 'r': positional when -4 < point <= 16, else d.ddde+XX.
 * add_dot_0: positional integers get ".0" (float repr); complex parts do not. */
static void put_python_digits(out_buf *b, const digits *g, bool add_dot_0)
{
    if (g->point <= -4 || g->point > 16) {
        put_char(b, g->d[0]);
        if (g->n > 1) {
            put_char(b, '.');
            put_str(b, g->d + 1);
        }
        const int x = g->point - 1;
        put_char(b, 'e');
        put_char(b, x < 0 ? '-' : '+');
        if (x > -10 && x < 10)
            put_char(b, '0');
        put_unsigned(b, (uint64_t)(x < 0 ? -x : x));
    } else if (g->point <= 0) {
        put_str(b, "0.");
        put_repeat(b, '0', -g->point);
        put_str(b, g->d);
    } else if (g->point < g->n) {
        for (int i = 0; i < g->n; i++) {
            if (i == g->point)
                put_char(b, '.');
            put_char(b, g->d[i]);
        }
    } else {
        put_str(b, g->d);
        put_repeat(b, '0', g->point - g->n);
        if (add_dot_0)
            put_str(b, ".0");
    }
}

/* repr of a float value; with `plus`, a '+' before a value without '-' (nan too). */
static bool put_python_float(out_buf *b, const dt_value *v, precision p, bool add_dot_0, bool plus)
{
    if (v->cls == DT_NAN) { /* Python ignores the sign of a NaN */
        put_str(b, plus ? "+nan" : "nan");
        return true;
    }
    if (v->neg)
        put_char(b, '-');
    else if (plus)
        put_char(b, '+');
    switch (v->cls) {
    case DT_INF:
        put_str(b, "inf");
        return true;
    case DT_ZERO:
        put_str(b, add_dot_0 ? "0.0" : "0");
        return true;
    default: {
        digits g;
        if (!shortest_digits(v->sig, v->exp, p, &g))
            return false;
        put_python_digits(b, &g, add_dot_0);
        return true;
    }
    }
}

/* ---- ONNX Runtime layout ------------------------------------------------------------------- */

static double value_as_double(const dt_value *v)
{
    switch (v->cls) {
    case DT_ZERO:
        return v->neg ? -0.0 : 0.0;
    case DT_INF:
        return v->neg ? -HUGE_VAL : HUGE_VAL;
    case DT_NAN:
        return NAN;
    default: { /* exact: every float value of every format fits a double */
        const double mag = ldexp((double)v->sig, v->exp);
        return v->neg ? -mag : mag;
    }
    }
}

/* "%.8g" of the value (float64: "%.17g"), "NaN", "INF", "-INF". */
static void put_ort_float(out_buf *b, const dt_value *v, bool is_float64, bool plus)
{
    if (v->cls == DT_NAN) {
        put_str(b, plus ? "+NaN" : "NaN");
        return;
    }
    if (v->cls == DT_INF) {
        put_str(b, v->neg ? "-INF" : plus ? "+INF" : "INF");
        return;
    }
    char tmp[48];
    snprintf(tmp, sizeof tmp, plus ? (is_float64 ? "%+.17g" : "%+.8g")
                                   : (is_float64 ? "%.17g" : "%.8g"),
             value_as_double(v));
    put_str(b, tmp);
}

/* ---- formatting: entry points ------------------------------------------------------------- */

static uint64_t sign_extend(uint64_t code, int bits)
{
    if (bits >= 64)
        return code;
    const uint64_t sign = UINT64_C(1) << (bits - 1);
    code &= (sign << 1) - 1;
    return (code ^ sign) - sign; /* unsigned arithmetic: wraps to two's complement */
}

static void put_integer(out_buf *b, const dt_format *f, uint64_t code)
{
    if (f->bits < 64)
        code &= (UINT64_C(1) << f->bits) - 1;
    if (f->tc == DT_TC_SINT) {
        code = sign_extend(code, f->bits);
        if (code >> 63) {
            put_char(b, '-');
            code = 0 - code; /* the magnitude, 2^63 included */
        }
    }
    put_unsigned(b, code);
}

static bool is_float_class(dt_class_of_type tc) { return tc == DT_TC_FLOAT || tc == DT_TC_E8M0; }

/* One real element of type f, into b. */
static bool put_element(out_buf *b, const dt_format *f, uint64_t code, dtcast_string_style style,
                        bool complex_part, bool plus)
{
    const bool ort = style == DTCAST_STRING_ORT;
    switch (f->tc) {
    case DT_TC_BOOL:
        put_str(b, ort ? (code ? "1" : "0") : (code ? "True" : "False"));
        return true;
    case DT_TC_UINT:
    case DT_TC_SINT:
        put_integer(b, f, code);
        return true;
    default:
        break;
    }
    if (!is_float_class(f->tc))
        return false;
    dt_value v;
    dt_decode(f, code, &v);
    if (ort) {
        put_ort_float(b, &v, f->type == DTCAST_FLOAT64, plus);
        return true;
    }
    return put_python_float(b, &v, precision_of(f), !complex_part, plus);
}

size_t dt_text_format(char *buf, size_t size, const dt_format *f, uint64_t code,
                      dtcast_string_style style)
{
    out_buf b = {{0}, 0};
    if (!f || !put_element(&b, f, code, style, false, false))
        return 0;
    return deliver(buf, size, &b);
}

/* Python: "(re+imj)", or "imj" alone when the real part is +0. ORT style (dtcast's choice; ONNX
 * Runtime has no complex strings): "(re+imj)" always, parts as "%.8g"/"%.17g", NaN, INF. */
size_t dt_text_format_complex(char *buf, size_t size, const dt_format *part, uint64_t re,
                              uint64_t im, dtcast_string_style style)
{
    out_buf b = {{0}, 0};
    if (!part || !is_float_class(part->tc))
        return 0;
    dt_value v;
    dt_decode(part, re, &v);
    const bool bare = style != DTCAST_STRING_ORT && v.cls == DT_ZERO && !v.neg;
    if (!bare) {
        put_char(&b, '(');
        if (!put_element(&b, part, re, style, true, false))
            return 0;
    }
    if (!put_element(&b, part, im, style, true, !bare))
        return 0;
    put_char(&b, 'j');
    if (!bare)
        put_char(&b, ')');
    return deliver(buf, size, &b);
}
