/* The exact reference (see text_shared.h), both ways, on big integers (bignum.h): a scanned
 * decimal (parse.c) -> the top 64 bits of its binary value with sticky, and a binary value ->
 * its shortest round-trip digits. The fast paths (parse_fast.c, shortest.c) give the same
 * results and call these when they cannot decide; dt_text_parse_reference and
 * dt_text_format_reference use them alone. */
#include "text_shared.h"

#include "bignum.h"

#include <string.h>

/* ---- decimal -> exact binary value ---------------------------------------------------------- */

#define KEEP_DIGITS 800  /* significant digits read exactly; the rest only as "nonzero or not" */

/* The top 64 bits of n (which is not zero) times 2^exp2, with sticky for the bits below. */
static void top_bits_of(const dt_bn *n, int64_t exp2, dt_value *v)
{
    int shift = dt_bn_bit_length(n) - 64;
    if (shift <= 0) {
        dt_text_set_finite(v, dt_bn_bits_at(n, 0), (int32_t)exp2, false);
        return;
    }
    dt_text_set_finite(v, dt_bn_bits_at(n, shift), (int32_t)(exp2 + shift),
                       dt_bn_any_below(n, shift));
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
    dt_text_set_finite(v, q, (int32_t)exp2, !dt_bn_is_zero(&num));
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
    for (; (c = dt_text_next_digit(&w)) >= 0; j++) {
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

bool dt_text_reference_decimal_to_value(const decimal *d, dt_value *v)
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
        dt_text_set_finite(v, UINT64_C(1) << 63, 2000, false); /* 2^2063: beyond every format */
        return true;
    }
    if (mag < -MAG10_LIMIT) {
        dt_text_set_finite(v, UINT64_C(1) << 63, -4000, true); /* a sliver above 2^-3937 */
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

/* ---- shortest digits ----------------------------------------------------------------------- */

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
bool dt_text_reference_shortest_digits(uint64_t sig, int32_t exp, precision p, digits *out)
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
