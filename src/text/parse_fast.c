/* Parsing, fast (see text_shared.h): decimal -> binary by 64 x 128-bit products with the power
 * table of text_tables.h (Eisel-Lemire style), exact 64-bit integer arithmetic otherwise. Two
 * uses: the value and integer parts behind dt_text_parse (the reference's, field for field;
 * reference.c decides what the table cannot), and dt_text_parse_to_code, which reads plain
 * decimals straight into IEEE codes and everything else through dt_text_parse and one rounding. */
#include "text_shared.h"

#include "round.h"
#include "text_tables.h"

#include <string.h>

/* ---- decimal -> binary value, fast (Eisel-Lemire style) -------------------------------------
 *
 * For at most 19 significant digits D (a 64-bit integer) and value = D * 10^e10, the top 64 bits
 * come from one 64 x 128-bit product with the table's 5^e10 ~ T * 2^s; the truncation of T errs
 * low by less than one unit of T, so the product errs low by less than 2^64, which can change the
 * top 64 bits only when every bit between them and bit 64 is one: then the exact path decides.
 * The sticky bit needs no product: D * 5^q (q >= 28) and D / 10^t (5^t not dividing D) always
 * have bits below the top 64. The result is the reference's, field for field. */

#if defined(__SIZEOF_INT128__)
const uint64_t dt_text_pow10_u64[FAST_DIGITS + 1] = {
    UINT64_C(1), UINT64_C(10), UINT64_C(100), UINT64_C(1000), UINT64_C(10000), UINT64_C(100000),
    UINT64_C(1000000), UINT64_C(10000000), UINT64_C(100000000), UINT64_C(1000000000),
    UINT64_C(10000000000), UINT64_C(100000000000), UINT64_C(1000000000000),
    UINT64_C(10000000000000), UINT64_C(100000000000000), UINT64_C(1000000000000000),
    UINT64_C(10000000000000000), UINT64_C(100000000000000000), UINT64_C(1000000000000000000),
    UINT64_C(10000000000000000000)};

/* 5^q for q <= 27. */
uint64_t dt_text_pow5_u64(int q)
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
            acc = acc * dt_text_pow10_u64[zeros + 1] + (uint64_t)c;
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
    const int shift = 64 - dt_text_leading_zeros64(high); /* bits above 64 */
    const uint64_t sig = (uint64_t)(n >> shift);
    const bool sticky = (n & ((((u128)1) << shift) - 1)) != 0;
    dt_text_set_finite(v, sig, (int32_t)(exp2 + shift), sticky);
}

/* v = D * 5^q * 2^e2 for q in the table, sticky set: false when the truncated table leaves the
 * top 64 bits uncertain. */
static bool top_bits_by_table(uint64_t sig10, int q, int64_t e2, dt_value *v)
{
    const int lz = dt_text_leading_zeros64(sig10);
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
    dt_text_set_finite(v, sig, (int32_t)(e2 + sh + parse_pow5[q - PARSE_Q_MIN].s - lz), true);
    return true;
}

/* D * 10^q, q >= 0: exact products while D * 5^q fits 128 bits, else the table. */
static bool scale_up(uint64_t sig10, int q, dt_value *v)
{
    if (q <= POW5_EXACT_MAX) {
        const u128 n = (u128)sig10 * dt_text_pow5_u64(q);
        if (!(n >> 64)) /* the reference keeps small values as is */
            dt_text_set_finite(v, (uint64_t)n, q, false);
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
        const uint64_t p5 = dt_text_pow5_u64(t);
        if (sig10 % p5 == 0) {
            const uint64_t x = sig10 / p5;
            const int lz = dt_text_leading_zeros64(x);
            dt_text_set_finite(v, x << lz, -t - lz, false);
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
bool dt_text_fast_decimal_to_value(const decimal *d, dt_value *v)
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
            const u128 n = (u128)sig10 * dt_text_pow10_u64[e10];
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
    const uint64_t p = dt_text_pow10_u64[-e10], r = sig10 % p, half = p / 2;
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
    *acc = *acc * dt_text_pow10_u64[*zeros + 1] + (uint64_t)c;
    *zeros = 0;
    *end = j + 1;
    return true;
}

/* One pass over the common form [space][sign]digits[.digits][(e|E)[sign]digits][space] with at
 * most 19 significant digits: the reference's value and integer parts. False for anything else
 * (inf, nan, long digit strings, malformed text, undecided products): the full path decides. */
bool dt_text_fast_parse(const char *s, dt_value *v, dt_int_parts *ip)
{
    const char *p = dt_text_skip_space(s);
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    uint64_t sig10 = 0;
    int64_t j = 0, first = -1, end = 0;
    int zeros = 0;
    for (; dt_text_is_digit(*p); p++, j++)
        if (!take_digit(*p - '0', j, &sig10, &first, &end, &zeros))
            return false;
    const int64_t int_digits = j;
    if (*p == '.')
        for (p++; dt_text_is_digit(*p); p++, j++)
            if (!take_digit(*p - '0', j, &sig10, &first, &end, &zeros))
                return false;
    if (j == 0 || j > 100000000) /* no digits; absurdly long text: the reference clamps */
        return false;
    int64_t exp10 = 0;
    if (*p == 'e' || *p == 'E') {
        p = dt_text_scan_exponent(p, &exp10);
        if (*p == 'e' || *p == 'E') /* "1e", "1e+": not a number */
            return false;
    }
    if (*dt_text_skip_space(p) != '\0')
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
bool dt_text_fast_decimal_to_value(const decimal *d, dt_value *v)
{
    (void)d;
    (void)v;
    return false; /* no 128-bit integers: the exact path always */
}

bool dt_text_fast_parse(const char *s, dt_value *v, dt_int_parts *ip)
{
    (void)s;
    (void)v;
    (void)ip;
    return false;
}
#endif

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
 * same exact products and table as dt_text_fast_parse, and rounded to nearest even into an
 * IEEE-style format when the result is normal; float32 first tries one 64 x 64-bit product.
 * Anything else (inf, nan, long digit strings, subnormal or overflowing results, undecided
 * products, malformed text) goes the general way. The rare ways are kept out of line
 * (DT_NOINLINE), so that the common one saves and restores few registers. */

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
        p = dt_text_skip_space(p);
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
        p = dt_text_skip_space(p);
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
    const int lz = dt_text_leading_zeros64(w);
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
        if (q < 0 && -q <= POW5_EXACT_MAX && w % dt_text_pow5_u64(-q) == 0)
            dt_text_set_finite(&v, w / dt_text_pow5_u64(-q), q, false);
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
    const int lz = dt_text_leading_zeros64(w);
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
    const bool neg = *dt_text_skip_space(s) == '-'; /* the sign, as scan_plain_decimal read it */
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
