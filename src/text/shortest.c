/* Shortest digits, fast (see text_shared.h): Schubfach-style digit generation with the power
 * table of text_tables.h, for formatting (format.c); what the table cannot decide goes to the
 * exact digit generation of reference.c, which gives the same digits. */
#include "text_shared.h"

#include "text_tables.h"

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
    return k >= 1 && k <= POW5_EXACT_MAX && x % dt_text_pow5_u64(k) == 0 &&
           __builtin_ctzll(x) + q >= k;
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
bool dt_text_schubfach(uint64_t c, int q, bool closer_below, uint64_t *dec, int *exp10)
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

bool dt_text_shortest_digits(uint64_t sig, int32_t exp, precision p, digits *out)
{
    uint64_t m = sig;
    int64_t e = exp;
    if (m == 0 || m >> p.bits)
        return dt_text_reference_shortest_digits(sig, exp, p, out);
    /* normalize; subnormals stop at min_exp */
    const int lz = dt_text_leading_zeros64(m) - (64 - p.bits);
    const int64_t room = e - p.min_exp;
    const int shift = lz < room ? lz : (int)room;
    if (shift > 0) {
        m <<= shift;
        e -= shift;
    }
    const bool closer_below = m == UINT64_C(1) << (p.bits - 1) && e > p.min_exp;
    uint64_t dec;
    int exp10;
    if (e < -1100 || e > 1000 || !dt_text_schubfach(m, (int)e, closer_below, &dec, &exp10))
        return dt_text_reference_shortest_digits(sig, exp, p, out);
    digits_of(dec, exp10, out);
    return true;
}
#else
bool dt_text_shortest_digits(uint64_t sig, int32_t exp, precision p, digits *out)
{
    return dt_text_reference_shortest_digits(sig, exp, p, out); /* no 128-bit integers */
}
#endif
