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
#include "round.h"

#include "bignum.h"
#include "text_internal.h"
#include "text_tables.h"

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

static bool reference_decimal_to_value(const decimal *d, dt_value *v)
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

/* ---- decimal -> binary value, fast (Eisel-Lemire style) -------------------------------------
 *
 * For at most 19 significant digits D (a 64-bit integer) and value = D * 10^e10, the top 64 bits
 * come from one 64 x 128-bit product with the table's 5^e10 ~ T * 2^s; the truncation of T errs
 * low by less than one unit of T, so the product errs low by less than 2^64, which can change the
 * top 64 bits only when every bit between them and bit 64 is one: then the exact path decides.
 * The sticky bit needs no product: D * 5^q (q >= 28) and D / 10^t (5^t not dividing D) always
 * have bits below the top 64. The result is the reference's, field for field. */

#if defined(__SIZEOF_INT128__)
typedef unsigned __int128 u128;

#define FAST_DIGITS 19 /* 10^19 < 2^64 */
#define POW5_EXACT_MAX 27 /* 5^27 < 2^63: D * 5^q fits 128 bits */

static const uint64_t pow10_u64[FAST_DIGITS + 1] = {
    UINT64_C(1), UINT64_C(10), UINT64_C(100), UINT64_C(1000), UINT64_C(10000), UINT64_C(100000),
    UINT64_C(1000000), UINT64_C(10000000), UINT64_C(100000000), UINT64_C(1000000000),
    UINT64_C(10000000000), UINT64_C(100000000000), UINT64_C(1000000000000),
    UINT64_C(10000000000000), UINT64_C(100000000000000), UINT64_C(1000000000000000),
    UINT64_C(10000000000000000), UINT64_C(100000000000000000), UINT64_C(1000000000000000000),
    UINT64_C(10000000000000000000)};

/* 5^q for q <= 27. */
static uint64_t pow5_u64(int q)
{
    static const uint64_t pow5[POW5_EXACT_MAX + 1] = {
        UINT64_C(1), UINT64_C(5), UINT64_C(25), UINT64_C(125), UINT64_C(625), UINT64_C(3125),
        UINT64_C(15625), UINT64_C(78125), UINT64_C(390625), UINT64_C(1953125),
        UINT64_C(9765625), UINT64_C(48828125), UINT64_C(244140625), UINT64_C(1220703125),
        UINT64_C(6103515625), UINT64_C(30517578125), UINT64_C(152587890625),
        UINT64_C(762939453125), UINT64_C(3814697265625), UINT64_C(19073486328125),
        UINT64_C(95367431640625), UINT64_C(476837158203125), UINT64_C(2384185791015625),
        UINT64_C(11920928955078125), UINT64_C(59604644775390625),
        UINT64_C(298023223876953125), UINT64_C(1490116119384765625),
        UINT64_C(7450580596923828125)};
    return pow5[q];
}

static int leading_zeros64(uint64_t x) { return __builtin_clzll(x); } /* x != 0 */

/* The significant digits of d as D (trailing zeros dropped) with the index of the first and
 * one past the last nonzero digit; false when there are more than 19 or none. */
static bool small_significand(const decimal *d, uint64_t *sig10, int64_t *first, int64_t *end)
{
    uint64_t acc = 0;
    int64_t j = 0, f = -1, e = 0;
    int zeros = 0;
    for (const char *p = d->mant; p < d->mant_end; p++) {
        if (*p == '.')
            continue;
        const int c = *p - '0';
        if (f < 0 && c == 0) {
            j++;
            continue;
        }
        if (f < 0)
            f = j;
        if (c == 0) {
            zeros++; /* multiplied in only if a nonzero digit follows */
        } else {
            if (j + 1 - f > FAST_DIGITS)
                return false;
            acc = acc * pow10_u64[zeros + 1] + (uint64_t)c;
            zeros = 0;
            e = j + 1;
        }
        j++;
    }
    *sig10 = acc;
    *first = f;
    *end = e;
    return f >= 0;
}

/* Top 64 bits of an exact 128-bit n (n >= 2^64), with sticky, as top_bits_of. */
static void top_bits_u128(u128 n, int64_t exp2, dt_value *v)
{
    const uint64_t high = (uint64_t)(n >> 64);
    const int shift = 64 - leading_zeros64(high); /* bits above 64 */
    const uint64_t sig = (uint64_t)(n >> shift);
    const bool sticky = (n & ((((u128)1) << shift) - 1)) != 0;
    set_finite(v, sig, (int32_t)(exp2 + shift), sticky);
}

/* v = D * 5^q * 2^e2 for q in the table, sticky set: false when the truncated table leaves the
 * top 64 bits uncertain. */
static bool top_bits_by_table(uint64_t sig10, int q, int64_t e2, dt_value *v)
{
    const int lz = leading_zeros64(sig10);
    const uint64_t dn = sig10 << lz; /* bit 63 set */
    const uint64_t th = parse_pow5[q - PARSE_Q_MIN].hi, tl = parse_pow5[q - PARSE_Q_MIN].lo;
    const u128 low = (u128)dn * tl, high = (u128)dn * th;
    const u128 mid = (low >> 64) + (uint64_t)high; /* bits 64..127, carry in bit 64 */
    const uint64_t p1 = (uint64_t)mid, p2 = (uint64_t)(high >> 64) + (uint64_t)(mid >> 64);
    uint64_t sig;
    int sh;
    if (p2 >> 63) { /* product in [2^191, 2^192): bits 128..191 */
        if (p1 == UINT64_MAX)
            return false;
        sig = p2;
        sh = 128;
    } else { /* [2^190, 2^191): bits 127..190 */
        if ((p1 & (UINT64_MAX >> 1)) == UINT64_MAX >> 1)
            return false;
        sig = p2 << 1 | p1 >> 63;
        sh = 127;
    }
    set_finite(v, sig, (int32_t)(e2 + sh + parse_pow5[q - PARSE_Q_MIN].s - lz), true);
    return true;
}

/* D * 10^q, q >= 0: exact products while D * 5^q fits 128 bits, else the table. */
static bool scale_up(uint64_t sig10, int q, dt_value *v)
{
    if (q <= POW5_EXACT_MAX) {
        const u128 n = (u128)sig10 * pow5_u64(q);
        if (!(n >> 64))
            set_finite(v, (uint64_t)n, q, false); /* the reference keeps small values as is */
        else
            top_bits_u128(n, q, v);
        return true;
    }
    return top_bits_by_table(sig10, q, q, v);
}

/* D / 10^t, t > 0: exact when 5^t divides D (a dyadic value), else the table. */
static bool scale_down(uint64_t sig10, int t, dt_value *v)
{
    if (t <= POW5_EXACT_MAX && sig10 % 10 == 5) { /* 5 divides D only if its last digit is 5 */
        const uint64_t p5 = pow5_u64(t);
        if (sig10 % p5 == 0) {
            const uint64_t x = sig10 / p5;
            const int lz = leading_zeros64(x);
            set_finite(v, x << lz, -t - lz, false);
            return true;
        }
    }
    return top_bits_by_table(sig10, -t, -(int64_t)t, v);
}

/* The reference's value of D * 10^(point - end) (first: index of D's first digit in the text);
 * false when the magnitude is beyond the limits or the table cannot decide. */
static bool small_decimal_value(bool neg, uint64_t sig10, int64_t first, int64_t end,
                                int64_t point, dt_value *v)
{
    const int64_t mag = point - 1 - first;
    if (mag > MAG10_LIMIT || mag < -MAG10_LIMIT)
        return false;
    memset(v, 0, sizeof *v);
    v->neg = neg;
    const int64_t e10 = point - end; /* within [-419, 400] here */
    return e10 >= 0 ? scale_up(sig10, (int)e10, v) : scale_down(sig10, (int)-e10, v);
}

/* The reference's value of d when 19 digits hold it and the table decides; false otherwise. */
static bool fast_decimal_to_value(const decimal *d, dt_value *v)
{
    if (d->cls != DT_FINITE)
        return false;
    uint64_t sig10;
    int64_t first, end;
    if (!small_significand(d, &sig10, &first, &end)) /* none: zero, or > 19 digits */
        return false;
    return small_decimal_value(d->neg, sig10, first, end, d->point, v);
}

/* Integer parts of D * 10^e10 (D != 0, at most 19 digits), as decimal_to_int_parts finds them. */
static void small_int_parts(bool neg, uint64_t sig10, int64_t e10, dt_int_parts *ip)
{
    memset(ip, 0, sizeof *ip);
    ip->neg = neg;
    ip->cls = DT_FINITE;
    if (e10 >= 0) {
        ip->frac = DT_FRAC_ZERO;
        if (e10 <= FAST_DIGITS) {
            const u128 n = (u128)sig10 * pow10_u64[e10];
            ip->huge = (n >> 64) != 0;
            ip->low = (uint64_t)n;
            return;
        }
        ip->huge = true; /* 10^20 > 2^64 */
        uint64_t low = sig10;
        for (int64_t i = 0; i < e10 && i < 64 && low; i++)
            low *= 10; /* modulo 2^64; 10^64 is a multiple of 2^64 */
        ip->low = e10 >= 64 ? 0 : low;
        return;
    }
    if (-e10 > FAST_DIGITS) { /* below 10^19 / 10^20: a fraction under one half */
        ip->frac = DT_FRAC_BELOW;
        return;
    }
    const uint64_t p = pow10_u64[-e10], r = sig10 % p, half = p / 2;
    ip->low = sig10 / p;
    ip->frac = r == 0 ? DT_FRAC_ZERO : r < half ? DT_FRAC_BELOW : r == half ? DT_FRAC_HALF
                                                                          : DT_FRAC_ABOVE;
}

/* Digit j of a mantissa into D: zeros wait until a nonzero digit follows; false past 19. */
static bool take_digit(int c, int64_t j, uint64_t *acc, int64_t *first, int64_t *end, int *zeros)
{
    if (c == 0) {
        *zeros += *first >= 0;
        return true;
    }
    if (*first < 0)
        *first = j;
    if (j + 1 - *first > FAST_DIGITS)
        return false;
    *acc = *acc * pow10_u64[*zeros + 1] + (uint64_t)c;
    *zeros = 0;
    *end = j + 1;
    return true;
}

/* One pass over the common form [space][sign]digits[.digits][(e|E)[sign]digits][space] with at
 * most 19 significant digits: the reference's value and integer parts. False for anything else
 * (inf, nan, long digit strings, malformed text, undecided products): the full path decides. */
static bool fast_parse(const char *s, dt_value *v, dt_int_parts *ip)
{
    const char *p = skip_space(s);
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    uint64_t sig10 = 0;
    int64_t j = 0, first = -1, end = 0;
    int zeros = 0;
    for (; is_digit(*p); p++, j++)
        if (!take_digit(*p - '0', j, &sig10, &first, &end, &zeros))
            return false;
    const int64_t int_digits = j;
    if (*p == '.')
        for (p++; is_digit(*p); p++, j++)
            if (!take_digit(*p - '0', j, &sig10, &first, &end, &zeros))
                return false;
    if (j == 0 || j > 100000000) /* no digits; absurdly long text: the reference clamps */
        return false;
    int64_t exp10 = 0;
    if (*p == 'e' || *p == 'E') {
        p = scan_exponent(p, &exp10);
        if (*p == 'e' || *p == 'E') /* "1e", "1e+": not a number */
            return false;
    }
    if (*skip_space(p) != '\0')
        return false;
    const int64_t point = int_digits + exp10;
    if (first < 0) { /* every digit zero */
        memset(v, 0, sizeof *v);
        memset(ip, 0, sizeof *ip);
        v->neg = ip->neg = neg;
        v->cls = ip->cls = DT_ZERO;
        return true;
    }
    if (!small_decimal_value(neg, sig10, first, end, point, v))
        return false;
    small_int_parts(neg, sig10, point - end, ip);
    return true;
}
#else
static bool fast_decimal_to_value(const decimal *d, dt_value *v)
{
    (void)d;
    (void)v;
    return false; /* no 128-bit integers: the exact path always */
}

static bool fast_parse(const char *s, dt_value *v, dt_int_parts *ip)
{
    (void)s;
    (void)v;
    (void)ip;
    return false;
}
#endif

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

static bool decimal_to_number(const decimal *d, dt_value *v, dt_int_parts *ip, bool reference)
{
    if ((reference || !fast_decimal_to_value(d, v)) && !reference_decimal_to_value(d, v))
        return false;
    decimal_to_int_parts(d, ip);
    return true;
}

static bool parse_with(const char *s, dt_value *v, dt_int_parts *ip, bool reference)
{
    decimal d;
    const char *p = scan_decimal(skip_space(s), &d);
    if (!p || *skip_space(p) != '\0')
        return false;
    return decimal_to_number(&d, v, ip, reference);
}

bool dt_text_parse(const char *s, dt_value *v, dt_int_parts *ip)
{
    return fast_parse(s, v, ip) || parse_with(s, v, ip, false);
}

bool dt_text_parse_reference(const char *s, dt_value *v, dt_int_parts *ip)
{
    return parse_with(s, v, ip, true);
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
            if (!decimal_to_number(&a, re, re_ip, false))
                return false;
            end = scan_decimal(p, &b);
            if (end) {
                if (!decimal_to_number(&b, im, im_ip, false))
                    return false;
                p = end;
            } else {
                set_unit(*p++ == '-', im, im_ip);
            }
            if (!is_j(*p++))
                return false;
        } else if (is_j(*p)) {
            p++;
            if (!decimal_to_number(&a, im, im_ip, false))
                return false;
        } else if (!decimal_to_number(&a, re, re_ip, false)) {
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
static bool reference_shortest_digits(uint64_t sig, int32_t exp, precision p, digits *out)
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

/* ---- shortest digits, fast (Schubfach style) -------------------------------------------------
 *
 * For v = c * 2^q with rounding interval [vl, vr] of width 2^q (3/4 of it just above a power of
 * two), k = floor(log10(width)) makes 10^k <= width < 10^(k+1): the interval holds at least one
 * multiple of 10^k and at most one of 10^(k+1). So the shortest decimal is the multiple of
 * 10^(k+1) next to v when it is inside, else the nearer inside of s = floor(v / 10^k) and s + 1.
 * v, vl, vr are scaled by 4 * 10^-k with the table's g ~ 10^-k (126 bits) and rounded to odd
 * (floor, low bit set if inexact), which keeps every comparison with multiples of 4 exact; when
 * g is inexact and a product lands within its error of an integer, the reference decides. */

#if defined(__SIZEOF_INT128__)
static int floor_log10_pow2(int q) { return (q * 315653) >> 20; }        /* |q| <= 1650 */
static int floor_log10_three_quarters_pow2(int q) { return (q * 315653 - 131237) >> 20; }
static int floor_log2_pow10(int e) { return (e * 1741647) >> 19; }       /* |e| <= 1650 */

/* Whether x * 2^q is a multiple of 10^k (only decided for 1 <= k <= 27; else false). */
static bool is_multiple_of_pow10(uint64_t x, int q, int k)
{
    return k >= 1 && k <= POW5_EXACT_MAX && x % pow5_u64(k) == 0 && __builtin_ctzll(x) + q >= k;
}

/* The interval scaling: g = 10^-k (126 bits, exact or rounded up), shift h, for c * 2^q. */
typedef struct scaling {
    uint64_t g_high, g_low;
    bool g_exact;
    int h, q, k;
} scaling;

/* x * 2^q * 10^-k as floor with the low bit set when inexact (round to odd), from
 * g * (x << h) / 2^127. g rounded up errs by less than (x << h) / 2^127 < 2^-64; when the
 * fraction is below that, the value is an integer (checked exactly) or *unsure is set. */
static uint64_t scaled_round_to_odd(const scaling *sc, uint64_t x, bool *unsure)
{
    const uint64_t cp = x << sc->h;
    const u128 low = (u128)sc->g_low * cp, high = (u128)sc->g_high * cp;
    const u128 mid = (low >> 64) + (uint64_t)high;
    const uint64_t a0 = (uint64_t)low, a1 = (uint64_t)mid;
    const uint64_t a2 = (uint64_t)(high >> 64) + (uint64_t)(mid >> 64);
    const uint64_t integer = a2 << 1 | a1 >> 63;
    const uint64_t frac_high = a1 & (UINT64_MAX >> 1); /* fraction = frac_high:a0 / 2^127 */
    if (!sc->g_exact && frac_high == 0 && a0 < UINT64_C(1) << 63) {
        if (is_multiple_of_pow10(x, sc->q, sc->k))
            return integer; /* exactly an integer: g's excess made the fraction */
        *unsure = true;
    }
    return integer | ((frac_high | a0) != 0);
}

/* Writes the decimal f * 10^k (f > 0) as digits without trailing zeros. */
static void digits_of(uint64_t f, int k, digits *out)
{
    while (f % 10 == 0) {
        f /= 10;
        k++;
    }
    char tmp[24];
    int n = 0;
    for (; f; f /= 10)
        tmp[n++] = (char)('0' + f % 10);
    for (int i = 0; i < n; i++)
        out->d[i] = tmp[n - 1 - i];
    out->d[n] = '\0';
    out->n = n;
    out->point = n + k;
}

/* Shortest digits of c * 2^q (c normalized as the reference does; even: interval ends count)
 * as *dec * 10^*exp10 (dec may end in zeros); false when the reference has to decide. */
static bool schubfach(uint64_t c, int q, bool closer_below, uint64_t *dec, int *exp10)
{
    const int k = closer_below ? floor_log10_three_quarters_pow2(q) : floor_log10_pow2(q);
    if (k < FORMAT_K_MIN || k > FORMAT_K_MAX)
        return false;
    const int h = q + floor_log2_pow10(-k) + 2; /* 1..4: cb << h stays below 2^63 */
    if (h < 0 || h > 7 || c >> 53)
        return false;
    const scaling sc = {format_pow10[k - FORMAT_K_MIN][0] & (UINT64_MAX >> 1),
                        format_pow10[k - FORMAT_K_MIN][1], !(format_pow10[k - FORMAT_K_MIN][0] >> 63),
                        h, q, k};
    const uint64_t cb = c << 2, cbr = cb + 2, cbl = cb - (closer_below ? 1 : 2);
    bool unsure = false;
    const uint64_t vb = scaled_round_to_odd(&sc, cb, &unsure);
    const uint64_t vbl = scaled_round_to_odd(&sc, cbl, &unsure);
    const uint64_t vbr = scaled_round_to_odd(&sc, cbr, &unsure);
    if (unsure)
        return false;
    const uint64_t out_of = c & 1; /* odd c: the interval's ends do not read back */
    const uint64_t s = vb >> 2;
    const uint64_t sp10 = s / 10 * 10, tp10 = sp10 + 10; /* multiples of 10^(k+1) around v */
    const bool sp10_in = sp10 != 0 && vbl + out_of <= sp10 << 2;
    const bool tp10_in = (tp10 << 2) + out_of <= vbr;
    if (sp10_in != tp10_in) { /* never both: the interval is narrower than 10^(k+1) */
        *dec = sp10_in ? sp10 : tp10;
        *exp10 = k;
        return true;
    }
    const uint64_t t = s + 1;
    const bool s_in = s != 0 && vbl + out_of <= s << 2;
    const bool t_in = (t << 2) + out_of <= vbr;
    if (s_in != t_in) {
        *dec = s_in ? s : t;
        *exp10 = k;
        return true;
    }
    if (!s_in)
        return false; /* cannot happen: the interval is at least 10^k wide */
    /* Both read back: the nearer; on a tie the even one. vb vs 4s + 2, the midpoint. */
    const uint64_t mid4 = (s << 2) + 2;
    const bool take_s = vb < mid4 || (vb == mid4 && !(s & 1));
    *dec = take_s ? s : t;
    *exp10 = k;
    return true;
}

static bool shortest_digits(uint64_t sig, int32_t exp, precision p, digits *out)
{
    uint64_t m = sig;
    int64_t e = exp;
    if (m == 0 || m >> p.bits)
        return reference_shortest_digits(sig, exp, p, out);
    const int lz = leading_zeros64(m) - (64 - p.bits); /* normalize; subnormals stop at min_exp */
    const int64_t room = e - p.min_exp;
    const int shift = lz < room ? lz : (int)room;
    if (shift > 0) {
        m <<= shift;
        e -= shift;
    }
    const bool closer_below = m == UINT64_C(1) << (p.bits - 1) && e > p.min_exp;
    uint64_t dec;
    int exp10;
    if (e < -1100 || e > 1000 || !schubfach(m, (int)e, closer_below, &dec, &exp10))
        return reference_shortest_digits(sig, exp, p, out);
    digits_of(dec, exp10, out);
    return true;
}
#else
static bool shortest_digits(uint64_t sig, int32_t exp, precision p, digits *out)
{
    return reference_shortest_digits(sig, exp, p, out); /* no 128-bit integers */
}
#endif

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
static bool put_python_float(out_buf *b, const dt_value *v, precision p, bool add_dot_0, bool plus,
                             bool reference)
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
        if (!(reference ? reference_shortest_digits(v->sig, v->exp, p, &g)
                        : shortest_digits(v->sig, v->exp, p, &g)))
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

/* "%.8g" of the value, float64 included (ONNX Runtime converts every float type to double and
 * prints it with "%.8g"), "NaN" whatever the sign, "INF", "-INF". */
static void put_ort_float(out_buf *b, const dt_value *v, bool plus)
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
    snprintf(tmp, sizeof tmp, plus ? "%+.8g" : "%.8g", value_as_double(v));
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
                        bool complex_part, bool plus, bool reference)
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
        put_ort_float(b, &v, plus);
        return true;
    }
    return put_python_float(b, &v, precision_of(f), !complex_part, plus, reference);
}

static size_t format_with(char *buf, size_t size, const dt_format *f, uint64_t code,
                          dtcast_string_style style, bool reference)
{
    out_buf b;
    b.n = 0;
    b.s[0] = '\0';
    if (!f || !put_element(&b, f, code, style, false, false, reference))
        return 0;
    return deliver(buf, size, &b);
}

/* ---- Python repr of IEEE floats, fast ----------------------------------------------------------
 *
 * float16, float32, float64 (and bfloat16, which prints as float32 would) straight from the bits:
 * Schubfach's digits, written two at a time, laid out as put_python_digits does, with no
 * intermediate dt_value, digit string or bounded buffer. */

#if defined(__SIZEOF_INT128__)
static const char two_digits[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Number of decimal digits of x > 0: floor(log10 x) + 1 from the bit length. */
static int decimal_length(uint64_t x)
{
    const int t = ((64 - leading_zeros64(x)) * 1233) >> 12; /* 1233 / 4096 ~ log10(2) */
    return t + (x >= pow10_u64[t]);
}

/* The n = decimal_length(x) digits of x at out (not terminated). */
static void write_digits(char *out, uint64_t x, int n)
{
    char *p = out + n;
    while (x > UINT32_MAX) {
        const uint64_t q = x / 100;
        p -= 2;
        memcpy(p, two_digits + 2 * (x - q * 100), 2);
        x = q;
    }
    uint32_t y = (uint32_t)x;
    while (y >= 100) {
        const uint32_t q = y / 100;
        p -= 2;
        memcpy(p, two_digits + 2 * (y - q * 100), 2);
        y = q;
    }
    if (y >= 10) {
        p -= 2;
        memcpy(p, two_digits + 2 * y, 2);
    } else {
        *--p = (char)('0' + y);
    }
}

/* put_python_digits (with ".0") of dec * 10^exp10, dec > 0, at out; returns the end (NUL). */
static char *put_repr_digits(char *out, uint64_t dec, int exp10)
{
    while (dec % 10 == 0) {
        dec /= 10;
        exp10++;
    }
    const int n = decimal_length(dec), point = n + exp10;
    char d[24];
    write_digits(d, dec, n);
    char *p = out;
    if (point <= -4 || point > 16) {
        *p++ = d[0];
        if (n > 1) {
            *p++ = '.';
            memcpy(p, d + 1, (size_t)(n - 1));
            p += n - 1;
        }
        int x = point - 1;
        *p++ = 'e';
        *p++ = x < 0 ? '-' : '+';
        if (x < 0)
            x = -x;
        if (x >= 100) {
            *p++ = (char)('0' + x / 100);
            x %= 100;
        }
        memcpy(p, two_digits + 2 * x, 2); /* at least two digits: e-05 */
        p += 2;
    } else if (point <= 0) {
        *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -point; i++)
            *p++ = '0';
        memcpy(p, d, (size_t)n);
        p += n;
    } else if (point < n) {
        memcpy(p, d, (size_t)point);
        p += point;
        *p++ = '.';
        memcpy(p, d + point, (size_t)(n - point));
        p += n - point;
    } else {
        memcpy(p, d, (size_t)n);
        p += n;
        for (int i = n; i < point; i++)
            *p++ = '0';
        *p++ = '.';
        *p++ = '0';
    }
    *p = '\0';
    return p;
}

static size_t put_literal(char *buf, const char *s)
{
    const size_t n = strlen(s);
    memcpy(buf, s, n + 1);
    return n;
}

bool dt_text_float_is_fast(const dt_format *f)
{
    return f->type == DTCAST_FLOAT32 || f->type == DTCAST_FLOAT64 || f->type == DTCAST_FLOAT16 ||
           f->type == DTCAST_BFLOAT16;
}

size_t dt_text_format_float(char *buf, const dt_format *f, uint64_t code)
{
    if (f->type == DTCAST_BFLOAT16) { /* the float32 with the same value prints the same */
        code = (code & 0xFFFF) << 16;
        f = dt_format_of(DTCAST_FLOAT32);
    } else if (!dt_text_float_is_fast(f)) {
        return 0;
    }
    const int mb = f->man_bits;
    if (f->bits < 64)
        code &= (UINT64_C(1) << f->bits) - 1;
    const uint64_t man = code & ((UINT64_C(1) << mb) - 1);
    const uint64_t be = (code >> mb) & ((UINT64_C(1) << f->exp_bits) - 1);
    const bool neg = (code >> (f->bits - 1)) & 1;
    if (be == (UINT64_C(1) << f->exp_bits) - 1)
        return put_literal(buf, man ? "nan" : neg ? "-inf" : "inf");
    char *p = buf;
    if (neg)
        *p++ = '-';
    if (be == 0 && man == 0)
        return (size_t)(p - buf) + put_literal(p, "0.0");
    /* The canonical c * 2^q of shortest_digits: normals carry the hidden bit, subnormals sit at
     * the smallest exponent; the neighbour below is closer only at a power of two above it. */
    const uint64_t c = be ? man | UINT64_C(1) << mb : man;
    const int q = (be ? (int)be : 1) - f->bias - mb;
    const bool closer_below = man == 0 && be > 1;
    uint64_t dec;
    int exp10;
    if (!schubfach(c, q, closer_below, &dec, &exp10))
        return format_with(buf, DT_TEXT_FLOAT_MAX, f, code, DTCAST_STRING_PYTHON, false);
    return (size_t)(put_repr_digits(p, dec, exp10) - buf);
}
#else
bool dt_text_float_is_fast(const dt_format *f)
{
    (void)f;
    return false;
}

size_t dt_text_format_float(char *buf, const dt_format *f, uint64_t code)
{
    (void)buf;
    (void)f;
    (void)code;
    return 0;
}
#endif

size_t dt_text_format(char *buf, size_t size, const dt_format *f, uint64_t code,
                      dtcast_string_style style)
{
    if (f && style != DTCAST_STRING_ORT && dt_text_float_is_fast(f)) {
        if (buf && size >= DT_TEXT_FLOAT_MAX)
            return dt_text_format_float(buf, f, code);
        char tmp[DT_TEXT_FLOAT_MAX];
        const size_t n = dt_text_format_float(tmp, f, code);
        if (!buf || n + 1 > size)
            return 0;
        memcpy(buf, tmp, n + 1);
        return n;
    }
    return format_with(buf, size, f, code, style, false);
}

size_t dt_text_format_reference(char *buf, size_t size, const dt_format *f, uint64_t code,
                                dtcast_string_style style)
{
    return format_with(buf, size, f, code, style, true);
}

/* Python: "(re+imj)", or "imj" alone when the real part is +0. ORT style (dtcast's choice; ONNX
 * Runtime has no complex strings): "(re+imj)" always, parts as "%.8g", NaN, INF. */
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
        if (!put_element(&b, part, re, style, true, false, false))
            return 0;
    }
    if (!put_element(&b, part, im, style, true, !bare, false))
        return 0;
    put_char(&b, 'j');
    if (!bare)
        put_char(&b, ')');
    return deliver(buf, size, &b);
}

/* ---- parsing straight to a code ------------------------------------------------------------ */

/* RNE of a finite parsed value into an IEEE-style binary format (exponent all ones reserved),
 * when the result is a normal number; false for subnormals and overflow (dt_encode decides). */
static bool round_to_ieee_normal(const dt_format *f, const dt_value *v, uint64_t *code)
{
    if (v->cls != DT_FINITE || f->tc != DT_TC_FLOAT || f->nan != DT_NAN_IEEE || f->man_bits > 52)
        return false;
    const int lz = __builtin_clzll(v->sig); /* sig != 0 for finite values */
    const uint64_t sig = v->sig << lz;
    int64_t e = (int64_t)v->exp - lz + 63; /* value in [2^e, 2^(e+1)) */
    const int drop = 63 - f->man_bits;     /* bits below the significand's last */
    uint64_t mant = dt_shift_right_round(sig, v->sticky, drop, DTCAST_ROUND_RNE, v->neg);
    if (mant >> (f->man_bits + 1)) { /* carried into a new power of two */
        mant >>= 1;
        e++;
    }
    const int64_t emin = 1 - f->bias, emax = ((INT64_C(1) << f->exp_bits) - 2) - f->bias;
    if (e < emin || e > emax)
        return false;
    const uint64_t man_mask = (UINT64_C(1) << f->man_bits) - 1;
    *code = (uint64_t)v->neg << (f->bits - 1) | (uint64_t)(e + f->bias) << f->man_bits |
            (mant & man_mask);
    return true;
}

static bool is_integer_target(const dt_format *f)
{
    return f->tc == DT_TC_UINT || f->tc == DT_TC_SINT || f->tc == DT_TC_BOOL;
}

/* ---- parsing plain decimals straight to IEEE codes, fast ------------------------------------
 *
 * The common text [space][sign]digits[.digits][(e|E)[sign]digits][space] with at most 19
 * significant digits is read in one pass as w * 10^e10 (w exact in 64 bits), scaled by the
 * same exact products and table as fast_parse, and rounded to nearest even into an IEEE-style
 * format when the result is normal; float32 first tries one 64 x 64-bit product. Anything else
 * (inf, nan, long digit strings, subnormal or overflowing results, undecided products, malformed
 * text) goes the general way. The rare ways are kept out of line (DT_NOINLINE), so that the
 * common one saves and restores few registers. */

#if defined(__GNUC__)
#define DT_NOINLINE __attribute__((noinline))
#else
#define DT_NOINLINE
#endif

#if defined(__SIZEOF_INT128__)
/* The digits at p appended to *acc (modulo 2^64: callers count them); returns the first
 * non-digit. */
static const char *read_digits(const char *p, uint64_t *acc)
{
    uint64_t a = *acc;
    for (;;) { /* two at a time: p[1] exists once p[0] is a digit (not the NUL) */
        const unsigned d0 = (unsigned char)p[0] - (unsigned)'0'; /* wraps above '9' */
        if (d0 > 9)
            break;
        const unsigned d1 = (unsigned char)p[1] - (unsigned)'0';
        if (d1 > 9) {
            a = a * 10 + d0;
            p++;
            break;
        }
        a = a * 100 + (d0 * 10 + d1);
        p += 2;
    }
    *acc = a;
    return p;
}

static bool scan_plain_decimal(const char *s, bool *neg, uint64_t *w, int64_t *e10)
{
    const char *p = s;
    if ((unsigned char)*p <= ' ') /* white space is rare: no test per character before a sign */
        p = skip_space(p);
    *neg = *p == '-';
    p += (*p == '-') | (*p == '+'); /* signs are random in data: no branch */
    const char *start = p;
    uint64_t acc = 0; /* wraps past 19 digits: then checked below and refused */
    p = read_digits(p, &acc);
    const size_t int_len = (size_t)(p - start);
    const char *frac = p + (*p == '.'); /* without a '.', no digit follows: frac_len is 0 */
    p = read_digits(frac, &acc);
    const size_t frac_len = (size_t)(p - frac), len = int_len + frac_len;
    if (len == 0)
        return false;
    if (len > FAST_DIGITS) { /* leading zeros do not count; absurd lengths go the general way */
        size_t lead = 0;
        for (const char *q = start; q < p && (*q == '0' || *q == '.'); q++)
            lead += *q == '0';
        if (len - lead > FAST_DIGITS || frac_len > 100000)
            return false;
    }
    int64_t e = 0;
    if ((*p | 0x20) == 'e') { /* 'e' or 'E' */
        p++;
        const int64_t eneg = *p == '-';
        p += (*p == '-') | (*p == '+');
        const char *first = p;
        uint64_t ev = 0;
        p = read_digits(p, &ev);
        if (p == first || p - first > 9) /* "1e", "1e+"; a long exponent goes the general way */
            return false;
        e = ((int64_t)ev ^ -eneg) + eneg; /* -ev when eneg */
    }
    if (*p != '\0') {
        p = skip_space(p);
        if (*p != '\0')
            return false;
    }
    *w = acc;
    *e10 = e - (int64_t)frac_len;
    return true;
}

/* w * 10^e10 (w != 0) rounded to nearest even into f, Eisel-Lemire style: the top 64 bits of
 * w * 5^e10 from the 128-bit table, sticky from the bits below. The table is exact for
 * 0 <= e10 <= 55 (5^55 < 2^128); elsewhere it is truncated, so the product may be short by
 * less than one unit of its lowest 64-bit word: when the bits below the top 64 are all ones
 * that could carry, and the exact products decide. False for subnormal and overflowing
 * results (and undecided ones): the general path. */
static bool round_decimal_to_ieee(bool neg, uint64_t w, int64_t e10, const dt_format *f,
                                  uint64_t *code)
{
    if (e10 > PARSE_Q_MAX || e10 < PARSE_Q_MIN)
        return false;
    const int q = (int)e10;
    const int lz = leading_zeros64(w);
    const uint64_t dn = w << lz;
    const uint64_t th = parse_pow5[q - PARSE_Q_MIN].hi, tl = parse_pow5[q - PARSE_Q_MIN].lo;
    const u128 low = (u128)dn * tl, high = (u128)dn * th;
    const u128 mid = (low >> 64) + (uint64_t)high;
    const uint64_t p0 = (uint64_t)low, p1 = (uint64_t)mid;
    const uint64_t p2 = (uint64_t)(high >> 64) + (uint64_t)(mid >> 64);
    const int below = (int)(~p2 >> 63); /* 1: product in [2^190, 2^191), one more bit from p1 */
    const uint64_t sig = p2 << below | (p1 >> 63 & (uint64_t)below);
    const uint64_t rest1 = p1 << below; /* the bits of p1 below sig, left-aligned */
    const int exact_table = (unsigned)q <= 55u;
    if (!exact_table & ((rest1 | (uint64_t)below) == UINT64_MAX)) {
        /* Most often an exact value: w / 10^t with 5^t dividing w ("22330240.0"). */
        dt_value v;
        v.neg = neg;
        if (q < 0 && -q <= POW5_EXACT_MAX && w % pow5_u64(-q) == 0)
            set_finite(&v, w / pow5_u64(-q), q, false);
        else if (!(q >= 0 ? scale_up(w, q, &v) : scale_down(w, -q, &v)))
            return false;
        return round_to_ieee_normal(f, &v, code);
    }
    const bool sticky = !exact_table || (rest1 | p0) != 0;
    /* sig * 2^(e - 63), sig in [2^63, 2^64). Normal results keep mb bits below the leading one;
     * subnormal ones (biased exponent below 1) as many fewer as the exponent is short. */
    const int64_t e = (int64_t)q + 128 - below + parse_pow5[q - PARSE_Q_MIN].s - lz + 63;
    const int mb = f->man_bits;
    int64_t biased = e + f->bias;
    int drop = 63 - mb;
    if (biased < 1) {
        if (1 - biased > mb) /* below half the smallest subnormal's neighbourhood: general */
            return false;
        drop += (int)(1 - biased);
        biased = 1;
    }
    const uint64_t mant = dt_shift_right_round(sig, sticky, drop, DTCAST_ROUND_RNE, neg);
    /* mant carries the leading one at bit mb (normal) or below it (subnormal); a carry out of
     * the significand moves into the exponent field by itself. */
    const uint64_t magnitude = ((uint64_t)(biased - 1) << mb) + mant;
    if (magnitude >= (((UINT64_C(1) << f->exp_bits) - 1) << mb))
        return false; /* overflow: the general path applies the overflow rules */
    *code = (uint64_t)neg << (f->bits - 1) | magnitude;
    return true;
}

/* w * 10^e10 (w != 0) rounded to nearest even into float32 from one 64 x 64-bit product, when
 * that decides. With w normalised to dn = w * 2^lz (bit 63 set) and 5^e10 = (hi + t) * 2^(64+s),
 * hi the table's top word and 0 <= t < 1 (the rest of the table, and what it truncates),
 * dn * 5^e10 / 2^(128+s) = (dn * hi + dn * t) / 2^64 lies in [H, H + 2) for H the top word of
 * dn * hi: its low word and dn * t are each below 2^64. With H shifted so that bit 63 leads (h),
 * the exact value lies in [h, h + 4) in units of h's last bit, and the 40 bits below h's 24-bit
 * significand round it correctly unless they lie in [half - 3, half] (then the value may be on
 * either side of the halfway point, or on it). False then, and for results that are not normal:
 * the general path decides. */
static bool round_decimal_to_float32(bool neg, uint64_t w, int64_t e10, uint64_t *code)
{
    if (e10 > PARSE_Q_MAX || e10 < PARSE_Q_MIN)
        return false;
    const int q = (int)e10;
    const int lz = leading_zeros64(w);
    const uint64_t high = (uint64_t)(((u128)(w << lz) * parse_pow5[q - PARSE_Q_MIN].hi) >> 64);
    const int top = (int)(high >> 63); /* high is in [2^62, 2^64): 1 when bit 63 leads */
    const uint64_t h = high << (1 - top);
    const uint64_t rest = h & ((UINT64_C(1) << 40) - 1), half = UINT64_C(1) << 39;
    if (rest - (half - 3) < 4) /* unsigned: rest in [half - 3, half] */
        return false;
    /* value in [2^e, 2^(e+1)), e = q + s - lz + 190 + top; float32's biased exponent e + 127 */
    const int64_t biased = (int64_t)q + parse_pow5[q - PARSE_Q_MIN].s - lz + 190 + top + 127;
    if ((uint64_t)(biased - 1) > 253)
        return false; /* subnormal or overflowing: the general path */
    /* The round bit alone says up or down (a carry from below the 40 bits also ends one up);
     * a carry out of the significand moves into the exponent field by itself. */
    const uint64_t mant = ((h >> 39) + 1) >> 1;
    const uint64_t magnitude = ((uint64_t)(biased - 1) << 23) + mant;
    if (magnitude >= UINT64_C(0x7F800000))
        return false;
    *code = (uint64_t)neg << 31 | magnitude;
    return true;
}
#endif

/* dt_text_parse_to_code the general way: the exact value, then one rounding. */
DT_NOINLINE static bool parse_to_code_general(const char *s, const dt_format *f,
                                              const dt_rules *r, uint64_t *code)
{
    dt_value v;
    dt_int_parts ip;
    if (!dt_text_parse(s, &v, &ip))
        return false;
    if (is_integer_target(f))
        *code = dt_encode_int_parts(f, &ip, r);
    else if (r->round != DTCAST_ROUND_RNE || !round_to_ieee_normal(f, &v, code))
        *code = dt_encode(f, &v, r);
    return true;
}

#if defined(__SIZEOF_INT128__)
/* The direct path's rounding of the plain decimal s = w * 10^e10 (w != 0) into any IEEE-style
 * f, else the general way. */
DT_NOINLINE static bool finish_plain(const char *s, const dt_format *f, const dt_rules *r,
                                     uint64_t *code, uint64_t w, int64_t e10)
{
    const bool neg = *skip_space(s) == '-'; /* the sign, as scan_plain_decimal read it */
    return round_decimal_to_ieee(neg, w, e10, f, code) || parse_to_code_general(s, f, r, code);
}

/* RNE into an IEEE-style binary format: plain decimals straight to the code (float32 by one
 * product when it decides), the rest the general way. */
static bool parse_to_ieee_code(const char *s, const dt_format *f, const dt_rules *r,
                               uint64_t *code)
{
    bool neg;
    uint64_t w;
    int64_t e10;
    if (!scan_plain_decimal(s, &neg, &w, &e10))
        return parse_to_code_general(s, f, r, code);
    if (w == 0) {
        *code = (uint64_t)neg << (f->bits - 1);
        return true;
    }
    if (f->type == DTCAST_FLOAT32 && round_decimal_to_float32(neg, w, e10, code))
        return true;
    return finish_plain(s, f, r, code, w, e10);
}
#else
static bool parse_to_ieee_code(const char *s, const dt_format *f, const dt_rules *r,
                               uint64_t *code)
{
    return parse_to_code_general(s, f, r, code); /* no 128-bit products: the exact path */
}
#endif

bool dt_text_parse_to_code(const char *s, const dt_format *f, const dt_rules *r, uint64_t *code)
{
    if (r->round == DTCAST_ROUND_RNE && f->tc == DT_TC_FLOAT && f->nan == DT_NAN_IEEE &&
        f->man_bits <= 52)
        return parse_to_ieee_code(s, f, r, code);
    return parse_to_code_general(s, f, r, code);
}
