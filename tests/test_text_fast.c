/* Text fast paths against the exact big-integer reference, bit for bit: formatting (every code
 * of every format up to 16 bits, random float32 and float64 bit patterns, edge values) and
 * parsing (random decimal strings of every shape: short, long, 17-20 digits, huge and tiny
 * exponents, halfway cases, formatted values), both the dt_value and the dt_int_parts.
 *
 * DTCAST_TEST_SCALE=N multiplies the random counts (5 * 10^5 float32 and 2.5 * 10^5 float64
 * formatted by default; make check-long runs N=10; a fraction such as 0.1 makes them smaller,
 * for valgrind; the every-code checks always run). */
#include "check.h"
#include "internal.h"
#include "text_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---------------------------------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* n times DTCAST_TEST_SCALE (a positive number, default 1), at least 1. */
static long scaled(long n)
{
    const char *s = getenv("DTCAST_TEST_SCALE");
    double k = s && *s ? strtod(s, NULL) : 1;
    if (!(k > 0))
        k = 1;
    const double m = (double)n * k;
    return m < 1 ? 1 : (long)m;
}

/* Formats code with both paths; on a difference records the first one in *bad. */
static bool format_same(dtcast_type t, uint64_t code, char *bad, size_t bad_size)
{
    const dt_format *f = dt_format_of(t);
    char fast[DTCAST_FORMAT_MAX], ref[DTCAST_FORMAT_MAX];
    const size_t a = dt_text_format(fast, sizeof fast, f, code, DTCAST_STRING_PYTHON);
    const size_t b = dt_text_format_reference(ref, sizeof ref, f, code, DTCAST_STRING_PYTHON);
    if (a == b && a != 0 && strcmp(fast, ref) == 0)
        return true;
    if (!bad[0])
        snprintf(bad, bad_size, "%s code 0x%" PRIx64 ": fast \"%s\", reference \"%s\"", f->name,
                 code, a ? fast : "<failed>", b ? ref : "<failed>");
    return false;
}

static bool values_equal(const dt_value *a, const dt_value *b)
{
    if (a->cls != b->cls || a->neg != b->neg)
        return false;
    return a->cls != DT_FINITE || (a->sig == b->sig && a->exp == b->exp && a->sticky == b->sticky);
}

static bool parts_equal(const dt_int_parts *a, const dt_int_parts *b)
{
    return a->cls == b->cls && a->neg == b->neg && a->huge == b->huge && a->low == b->low &&
           a->frac == b->frac;
}

/* Parses text with both paths; on a difference records the first one in *bad. */
static bool parse_same(const char *text, char *bad, size_t bad_size)
{
    dt_value v1, v2;
    dt_int_parts p1, p2;
    memset(&v1, 0, sizeof v1);
    memset(&v2, 0, sizeof v2);
    memset(&p1, 0, sizeof p1);
    memset(&p2, 0, sizeof p2);
    const bool ok1 = dt_text_parse(text, &v1, &p1);
    const bool ok2 = dt_text_parse_reference(text, &v2, &p2);
    if (ok1 == ok2 && (!ok1 || (values_equal(&v1, &v2) && parts_equal(&p1, &p2))))
        return true;
    if (!bad[0])
        snprintf(bad, bad_size,
                 "\"%.80s\": fast ok=%d cls=%d sig=0x%" PRIx64 " exp=%d sticky=%d low=%" PRIu64
                 " frac=%d, reference ok=%d cls=%d sig=0x%" PRIx64 " exp=%d sticky=%d low=%" PRIu64
                 " frac=%d",
                 text, ok1, (int)v1.cls, v1.sig, (int)v1.exp, v1.sticky, p1.low, (int)p1.frac, ok2,
                 (int)v2.cls, v2.sig, (int)v2.exp, v2.sticky, p2.low, (int)p2.frac);
    return false;
}

/* ---- formatting ------------------------------------------------------------------------------- */

static void check_every_code(dtcast_type t)
{
    const dt_format *f = dt_format_of(t);
    char bad[256] = "", name[64];
    long diffs = 0;
    const uint64_t codes = UINT64_C(1) << f->bits;
    for (uint64_t c = 0; c < codes; c++)
        diffs += !format_same(t, c, bad, sizeof bad);
    snprintf(name, sizeof name, "format fast == reference, every %s code", f->name);
    CHECK(diffs == 0, name, "%ld differences, first %s", diffs, bad);
}

static void check_random_codes(dtcast_type t, long count, uint64_t seed)
{
    char bad[256] = "", name[80];
    long diffs = 0;
    for (long i = 0; i < count; i++) {
        uint64_t c = rng_next(&seed);
        if (t == DTCAST_FLOAT32)
            c &= 0xFFFFFFFFu;
        diffs += !format_same(t, c, bad, sizeof bad);
    }
    snprintf(name, sizeof name, "format fast == reference, %ld random %s", count,
             dt_format_of(t)->name);
    CHECK(diffs == 0, name, "%ld differences, first %s", diffs, bad);
}

/* Powers of two, integers, 5^k multiples (exact products), neighbours of powers of ten, the
 * ends of the ranges: float32 and float64. */
static void check_edge_codes(void)
{
    char bad[256] = "";
    long diffs = 0, n = 0;
    for (uint64_t e = 0; e < 255; e++)
        for (uint64_t m = 0; m < 4; m++, n += 2) {
            diffs += !format_same(DTCAST_FLOAT32, e << 23 | m, bad, sizeof bad);
            diffs += !format_same(DTCAST_FLOAT32, e << 23 | (0x7FFFFF - m), bad, sizeof bad);
        }
    for (uint64_t e = 0; e < 2047; e++)
        for (uint64_t m = 0; m < 4; m++, n += 2) {
            diffs += !format_same(DTCAST_FLOAT64, e << 52 | m, bad, sizeof bad);
            diffs += !format_same(DTCAST_FLOAT64, e << 52 | (UINT64_C(0xFFFFFFFFFFFFF) - m), bad,
                                  sizeof bad);
        }
    /* Integers k * 5^j * 2^i: products that land exactly on integers after scaling. */
    for (int i = -30; i < 60; i++)
        for (uint64_t k = 1; k < 40; k++) {
            double x = (double)k;
            for (int j = 0; j < 20 && x < 1e300; j++, x *= 5) {
                double y = x;
                for (int s = 0; s < (i < 0 ? -i : i); s++)
                    y = i < 0 ? y / 2 : y * 2;
                uint64_t b64;
                memcpy(&b64, &y, 8);
                const float yf = (float)y;
                uint32_t b32;
                memcpy(&b32, &yf, 4);
                diffs += !format_same(DTCAST_FLOAT64, b64, bad, sizeof bad);
                diffs += !format_same(DTCAST_FLOAT32, b32, bad, sizeof bad);
                n += 2;
            }
        }
    /* Neighbours of powers of ten. */
    double p = 1e-320;
    for (int i = -320; i < 308; i++, p *= 10) {
        uint64_t b;
        memcpy(&b, &p, 8);
        for (int d = -2; d <= 2; d++, n++)
            diffs += !format_same(DTCAST_FLOAT64, b + (uint64_t)(int64_t)d, bad, sizeof bad);
        const float pf = (float)p;
        uint32_t b32;
        memcpy(&b32, &pf, 4);
        for (int d = -2; d <= 2 && (b32 & 0x7F800000u) != 0x7F800000u; d++, n++)
            diffs += !format_same(DTCAST_FLOAT32, (uint32_t)(b32 + (uint32_t)d), bad, sizeof bad);
    }
    CHECK(diffs == 0, "format fast == reference, edge values", "%ld of %ld differ, first %s",
          diffs, n, bad);
}

/* ---- parsing ---------------------------------------------------------------------------------- */

/* n random digits (the first nonzero unless lead_zero). */
static void put_digits(char **p, int n, uint64_t *seed, bool lead_zero)
{
    for (int i = 0; i < n; i++) {
        int d = (int)(rng_next(seed) % 10);
        if (i == 0 && !lead_zero && d == 0)
            d = 1 + (int)(rng_next(seed) % 9);
        *(*p)++ = (char)('0' + d);
    }
}

/* A random decimal: digits with a point somewhere, optional exponent, sign, zeros. */
static void random_decimal(char *buf, uint64_t *seed, int min_digits, int max_digits, int max_exp)
{
    char *p = buf;
    const uint64_t r = rng_next(seed);
    if (r & 1)
        *p++ = '-';
    else if (r & 2)
        *p++ = '+';
    const int n = min_digits + (int)(rng_next(seed) % (uint64_t)(max_digits - min_digits + 1));
    const int point = (int)(rng_next(seed) % (uint64_t)(n + 1));
    if (r & 4) { /* leading zeros */
        *p++ = '0';
        if (r & 8) {
            *p++ = '.';
            *p++ = '0';
            *p++ = '0';
        }
    }
    char digits[64];
    char *d = digits;
    put_digits(&d, n, seed, (r & 4) != 0);
    if (r & 16) /* trailing zeros */
        for (int i = 0; i < 1 + (int)(r >> 60); i++)
            *d++ = '0';
    *d = '\0';
    const int total = (int)(d - digits);
    for (int i = 0; i < total; i++) {
        if (i == point && !(r & 8 && r & 4))
            *p++ = '.';
        *p++ = digits[i];
    }
    if (max_exp > 0 && (r & 32)) {
        const int e = (int)(rng_next(seed) % (uint64_t)(2 * max_exp + 1)) - max_exp;
        p += sprintf(p, (r & 64) ? "e%d" : "E%+d", e);
    }
    *p = '\0';
}

#if defined(__SIZEOF_INT128__)
/* The exact decimal of (2m+1) * 2^-(j+1) (a binary midpoint), adjusted by delta in the last
 * digit: m < 2^25, j + 1 <= 40, so (2m+1) * 5^(j+1) fits 128 bits. */
static void halfway_decimal(char *buf, uint64_t m, int j, int delta)
{
    const int k = j + 1;
    unsigned __int128 x = 2 * (unsigned __int128)m + 1;
    for (int i = 0; i < k; i++)
        x *= 5;
    x = (unsigned __int128)((__int128)x + delta);
    char tmp[64];
    int n = 0;
    for (; x; x /= 10)
        tmp[n++] = (char)('0' + (int)(x % 10));
    char *p = buf;
    if (n <= k) {
        *p++ = '0';
        *p++ = '.';
        for (int i = n; i < k; i++)
            *p++ = '0';
    }
    for (int i = n - 1; i >= 0; i--) {
        *p++ = tmp[i];
        if (i == k && n > k)
            *p++ = '.';
    }
    *p = '\0';
}

static void check_parse_kind(const char *what, long count, uint64_t seed, int min_digits,
                             int max_digits, int max_exp)
{
    char bad[512] = "", text[160], name[96];
    long diffs = 0;
    for (long i = 0; i < count; i++) {
        random_decimal(text, &seed, min_digits, max_digits, max_exp);
        diffs += !parse_same(text, bad, sizeof bad);
    }
    snprintf(name, sizeof name, "parse fast == reference, %ld %s", count, what);
    CHECK(diffs == 0, name, "%ld differences, first %s", diffs, bad);
}

static void check_parse_halfway(long count, uint64_t seed)
{
    char bad[512] = "", text[160];
    long diffs = 0, n = 0;
    for (long i = 0; i < count; i++) {
        const uint64_t r = rng_next(&seed);
        const uint64_t m = r >> 39; /* 25 bits */
        const int j = (int)(r % 40);
        for (int delta = -1; delta <= 1; delta++, n++) {
            halfway_decimal(text, m, j, delta);
            diffs += !parse_same(text, bad, sizeof bad);
        }
        /* Integer midpoints of float64 (and float32) neighbours: up to 19 digits, fast path. */
        const uint64_t odd = (rng_next(&seed) >> 11) | 1; /* 53 bits */
        const int shift = (int)(r % 11);
        for (int delta = -1; delta <= 1; delta++, n++) {
            snprintf(text, sizeof text, "%" PRIu64 "%s", (odd << shift) + (uint64_t)(int64_t)delta,
                     (r & 1) ? "e0" : "");
            diffs += !parse_same(text, bad, sizeof bad);
        }
    }
    CHECK(diffs == 0, "parse fast == reference, halfway and near-halfway decimals",
          "%ld of %ld differ, first %s", diffs, n, bad);
}
#else
static void check_parse_halfway(long count, uint64_t seed)
{
    (void)count;
    (void)seed; /* no 128-bit integers to write the exact midpoints with */
}
#endif

/* Strings the formatters make: shortest, %.9g, %.17g, of random float32 and float64. */
static void check_parse_formatted(long count, uint64_t seed)
{
    char bad[512] = "", text[160];
    long diffs = 0, n = 0;
    const dt_format *f32 = dt_format_of(DTCAST_FLOAT32), *f64 = dt_format_of(DTCAST_FLOAT64);
    for (long i = 0; i < count; i++) {
        const uint64_t r = rng_next(&seed);
        uint32_t b32 = (uint32_t)r;
        uint64_t b64 = rng_next(&seed);
        float x;
        double y;
        memcpy(&x, &b32, 4);
        memcpy(&y, &b64, 8);
        dt_text_format(text, sizeof text, f32, b32, DTCAST_STRING_PYTHON);
        diffs += !parse_same(text, bad, sizeof bad);
        dt_text_format(text, sizeof text, f64, b64, DTCAST_STRING_PYTHON);
        diffs += !parse_same(text, bad, sizeof bad);
        snprintf(text, sizeof text, "%.9g", (double)x);
        diffs += !parse_same(text, bad, sizeof bad);
        snprintf(text, sizeof text, "%.17g", y);
        diffs += !parse_same(text, bad, sizeof bad);
        snprintf(text, sizeof text, "%.20e", y);
        diffs += !parse_same(text, bad, sizeof bad);
        n += 5;
    }
    CHECK(diffs == 0, "parse fast == reference, formatted float32 / float64 strings",
          "%ld of %ld differ, first %s", diffs, n, bad);
}

static void check_parse_fixed(void)
{
    static const char *const texts[] = {
        "0", "-0", "0.0", "000.000", ".5", "5.", "+1e+5", " 1.5 ", "1e", "1e+", "inf", "-Infinity",
        "nan", "1", "10", "100", "1000000000000000000000", "18446744073709551615",
        "18446744073709551616", "9007199254740993", "9007199254740992.5", "0.1", "0.2", "0.3",
        "1e23", "8.988465674311579e307", "1.7976931348623157e308", "1.7976931348623159e308",
        "2.2250738585072014e-308", "4.9406564584124654e-324", "2.4703282292062327e-324",
        "1e-400", "1e-401", "1e400", "1e401", "9.99999999999999999999e400", "1e-420", "1e-419",
        "123456789012345678901234567890", "0.000000000000000000001", "3.4028235e38",
        "3.4028236e38", "1.4e-45", "7e-46", "65504", "65520", "6.1035156e-05", "5.96e-8",
        "1234567890123456789", "12345678901234567890", "9999999999999999999", "1e19", "1e20",
        "0.00000000000000000000000000000000000000000000000000001", "4.5", "2.5e-1", "0.125",
        "1e-27", "1e-28", "3814697265625e-13", "7450580596923828125e-27", "1e27", "1e28",
        "152587890625e-16", "5e-324", "1.5e-323", "1e308", "1e309", "", " ", "abc", "1x", "--1",
        "1.2.3", "0x10", "1e1000000000000000000", "1e-1000000000000000000"};
    char bad[512] = "";
    long diffs = 0;
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        diffs += !parse_same(texts[i], bad, sizeof bad);
    CHECK(diffs == 0, "parse fast == reference, fixed strings", "%ld differences, first %s",
          diffs, bad);
}

/* dt_text_parse_to_code against dt_text_parse + dt_encode / dt_encode_int_parts. */
static void check_parse_to_code(long count, uint64_t seed)
{
    static const dtcast_type types[] = {DTCAST_FLOAT32, DTCAST_FLOAT64, DTCAST_FLOAT16,
                                        DTCAST_BFLOAT16, DTCAST_FLOAT8E5M2, DTCAST_FLOAT8E4M3FN,
                                        DTCAST_INT32, DTCAST_UINT8};
    char bad[256] = "", text[160];
    long diffs = 0, n = 0;
    for (long i = 0; i < count; i++) {
        const uint64_t r = rng_next(&seed);
        switch (r % 4) {
        case 0:
            random_decimal(text, &seed, 1, 9, 50);
            break;
        case 1:
            random_decimal(text, &seed, 15, 25, 330);
            break;
        case 2: {
            const uint64_t b = rng_next(&seed);
            double y;
            memcpy(&y, &b, 8);
            snprintf(text, sizeof text, "%.17g", y);
            break;
        }
        default: {
            const uint32_t b = (uint32_t)rng_next(&seed);
            float x;
            memcpy(&x, &b, 4);
            snprintf(text, sizeof text, "%.9g", (double)x);
            break;
        }
        }
        const dt_format *f = dt_format_of(types[(r >> 8) % (sizeof types / sizeof types[0])]);
        dt_rules rules;
        memset(&rules, 0, sizeof rules);
        rules.round = (r >> 16) % 4 ? DTCAST_ROUND_RNE : (dtcast_round)(1 + (r >> 20) % 6);
        rules.saturate_float = (r >> 24) & 1;
        rules.saturate_int = (r >> 25) & 1;
        dt_value v;
        dt_int_parts ip;
        uint64_t got = 0, want = 0;
        const bool ok1 = dt_text_parse_to_code(text, f, &rules, &got);
        const bool ok2 = dt_text_parse_reference(text, &v, &ip);
        if (ok2)
            want = (f->tc == DT_TC_SINT || f->tc == DT_TC_UINT) ? dt_encode_int_parts(f, &ip, &rules)
                                                                 : dt_encode(f, &v, &rules);
        n++;
        if (ok1 != ok2 || got != want) {
            diffs++;
            if (!bad[0])
                snprintf(bad, sizeof bad, "\"%s\" -> %s (%s): got 0x%" PRIx64 ", want 0x%" PRIx64,
                         text, f->name, dtcast_round_name(rules.round), got, want);
        }
    }
    CHECK(diffs == 0, "parse to code == parse + encode (float32/64/16, bfloat16, float8, ints)",
          "%ld of %ld differ, first %s", diffs, n, bad);
}

/* ---- the direct paths: IEEE codes straight from text, text straight from bits ------------------ */

/* dt_text_parse_to_code (RNE) against the reference parse + dt_encode; counts a difference. */
static bool code_same(const char *text, dtcast_type t, char *bad, size_t bad_size)
{
    const dt_format *f = dt_format_of(t);
    const dt_rules rne = {.round = DTCAST_ROUND_RNE};
    dt_value v;
    dt_int_parts ip;
    uint64_t got = 0, want = 0;
    const bool ok1 = dt_text_parse_to_code(text, f, &rne, &got);
    const bool ok2 = dt_text_parse_reference(text, &v, &ip);
    if (ok2)
        want = dt_encode(f, &v, &rne);
    if (ok1 == ok2 && got == want)
        return true;
    if (!bad[0])
        snprintf(bad, bad_size, "\"%s\" -> %s: got 0x%" PRIx64 " (ok %d), want 0x%" PRIx64
                 " (ok %d)", text, f->name, got, ok1, want, ok2);
    return false;
}

#if defined(__SIZEOF_INT128__)
/* The exact decimal of the midpoint (2m+1) * 2^(e-1) (plus delta in its last digit), when it
 * has at most 19 digits: the cases where the direct path must round half to even itself. As
 * "D", "D.F" or "De-K" (alternating). False when it needs more digits. */
static bool midpoint_text(char *buf, size_t size, uint64_t m, int e, int delta, int form)
{
    unsigned __int128 x = 2 * (unsigned __int128)m + 1;
    int k = 0; /* decimal places */
    if (e - 1 >= 0) {
        for (int i = 0; i < e - 1; i++)
            x <<= 1;
    } else {
        for (k = 0; k < 1 - e; k++)
            x *= 5;
    }
    if (x >> 64 || x + 1 < 2 || (uint64_t)x > UINT64_C(9999999999999999999))
        return false;
    const uint64_t d = (uint64_t)x + (uint64_t)(int64_t)delta;
    if (k == 0 || form == 0) {
        snprintf(buf, size, k ? "%" PRIu64 "e-%d" : "%" PRIu64, d, k);
        return true;
    }
    char digits[32];
    const int n = snprintf(digits, sizeof digits, "%" PRIu64, d);
    if (n <= k)
        snprintf(buf, size, "0.%0*d%s", k - n, 0, digits);
    else
        snprintf(buf, size, "%.*s.%s", n - k, digits, digits + n - k);
    if (n <= k && k - n == 0)
        snprintf(buf, size, "0.%s", digits);
    return true;
}

static void check_direct_parse_midpoints(long count, uint64_t seed)
{
    char bad[512] = "", text[96];
    long diffs = 0, n = 0;
    for (long i = 0; i < count; i++) {
        const uint64_t r = rng_next(&seed);
        /* float32: 24-bit significands, midpoints with up to 19 digits. */
        const uint64_t m32 = (r >> 40) | UINT64_C(1) << 23;
        const int e32 = (int)(r % 50) - 25;
        /* float64: 53-bit significands. */
        const uint64_t m64 = (rng_next(&seed) >> 11) | UINT64_C(1) << 52;
        const int e64 = (int)((r >> 8) % 12) - 3;
        for (int delta = -1; delta <= 1; delta++) {
            if (midpoint_text(text, sizeof text, m32, e32, delta, (int)(r >> 20) & 1)) {
                diffs += !code_same(text, DTCAST_FLOAT32, bad, sizeof bad);
                diffs += !code_same(text, DTCAST_FLOAT64, bad, sizeof bad);
                n += 2;
            }
            if (midpoint_text(text, sizeof text, m64, e64, delta, (int)(r >> 21) & 1)) {
                diffs += !code_same(text, DTCAST_FLOAT64, bad, sizeof bad);
                diffs += !code_same(text, DTCAST_FLOAT32, bad, sizeof bad);
                n += 2;
            }
        }
        /* float16 / bfloat16 midpoints (11 and 8 significant bits). */
        const uint64_t m16 = ((r >> 30) & 0x3FF) | 0x400, mb = ((r >> 45) & 0x7F) | 0x80;
        const int e16 = (int)((r >> 52) % 40) - 30;
        if (midpoint_text(text, sizeof text, m16, e16, 0, 1)) {
            diffs += !code_same(text, DTCAST_FLOAT16, bad, sizeof bad);
            n++;
        }
        if (midpoint_text(text, sizeof text, mb, e16, 0, 0)) {
            diffs += !code_same(text, DTCAST_BFLOAT16, bad, sizeof bad);
            n++;
        }
    }
    CHECK(diffs == 0, "direct parse == reference, exact midpoints and their neighbours",
          "%ld of %ld differ, first %s", diffs, n, bad);
}
#else
static void check_direct_parse_midpoints(long count, uint64_t seed)
{
    (void)count;
    (void)seed;
}
#endif

/* Shortest and libc texts of random values of every magnitude (subnormals included) into
 * float32, float64, float16, bfloat16 and float8e5m2; random decimals near the subnormal and
 * overflow boundaries. */
static void check_direct_parse(long count, uint64_t seed)
{
    static const dtcast_type targets[] = {DTCAST_FLOAT32, DTCAST_FLOAT64, DTCAST_FLOAT16,
                                          DTCAST_BFLOAT16, DTCAST_FLOAT8E5M2};
    const dt_format *f32 = dt_format_of(DTCAST_FLOAT32), *f64 = dt_format_of(DTCAST_FLOAT64);
    char bad[512] = "", text[160];
    long diffs = 0, n = 0;
    for (long i = 0; i < count; i++) {
        const uint64_t r = rng_next(&seed);
        const dtcast_type t = targets[(r >> 3) % (sizeof targets / sizeof targets[0])];
        switch (r % 6) {
        case 0: { /* a float32 (a subnormal one in 1/4) */
            uint32_t b = (uint32_t)rng_next(&seed);
            if ((r >> 8) % 4 == 0)
                b &= 0x807FFFFFu;
            dt_text_format(text, sizeof text, f32, b, DTCAST_STRING_PYTHON);
            break;
        }
        case 1: { /* a float64 (a subnormal one in 1/4) */
            uint64_t b = rng_next(&seed);
            if ((r >> 8) % 4 == 0)
                b &= UINT64_C(0x800FFFFFFFFFFFFF);
            dt_text_format(text, sizeof text, f64, b, DTCAST_STRING_PYTHON);
            break;
        }
        case 2: { /* "%.9g" of a float32 */
            const uint32_t b = (uint32_t)rng_next(&seed);
            float x;
            memcpy(&x, &b, 4);
            snprintf(text, sizeof text, "%.9g", (double)x);
            break;
        }
        case 3: /* near float32's smallest and largest */
            random_decimal(text, &seed, 1, 19, 0);
            snprintf(text + strlen(text), 16, "e%d", (int)((r >> 16) % 30) + ((r >> 50) & 1 ? -60 : 25));
            break;
        case 4: /* near float64's smallest and largest */
            random_decimal(text, &seed, 1, 19, 0);
            snprintf(text + strlen(text), 16, "e%d", (int)((r >> 16) % 40) + ((r >> 50) & 1 ? -345 : 290));
            break;
        default: /* near float16's and float8's */
            random_decimal(text, &seed, 1, 12, 0);
            snprintf(text + strlen(text), 16, "e%d", (int)((r >> 16) % 16) - 10);
            break;
        }
        diffs += !code_same(text, t, bad, sizeof bad);
        n++;
    }
    CHECK(diffs == 0, "direct parse == reference (float32/64/16, bfloat16, float8e5m2; RNE)",
          "%ld of %ld differ, first %s", diffs, n, bad);
}

/* ---- float32 texts against an oracle of their own ------------------------------------------------
 *
 * The direct float32 path rounds from one 64-bit product and must hand over every case it cannot
 * decide. Here the decimals sit next to a float32 rounding boundary on purpose: the midpoint m of
 * two neighbouring float32 values (subnormals, the normal/subnormal border, powers of two and the
 * largest values included), written exactly (a tie: the even neighbour) or cut to N significant
 * digits (just below m: the lower neighbour) or cut and raised by one unit in the last digit (just
 * above: the upper one). The expectation comes from the codes alone; the exact decimal of m from
 * digit arithmetic here, with no part of the library. */

/* The decimal of m = M * 2^E (M odd): digits d[0..n) (no trailing zeros), d[j] weighs
 * 10^(point-1-j). */
typedef struct exact_decimal {
    char d[256];
    int n, point;
} exact_decimal;

/* digits (least significant first, n of them) times k (k < 2^32); returns the new count. */
static int digits_times(unsigned char *digits, int n, uint64_t k)
{
    uint64_t carry = 0;
    for (int i = 0; i < n; i++) {
        const uint64_t x = digits[i] * k + carry;
        digits[i] = (unsigned char)(x % 10);
        carry = x / 10;
    }
    for (; carry; carry /= 10)
        digits[n++] = (unsigned char)(carry % 10);
    return n;
}

static uint32_t pow5_small(int k) /* 5^k, k <= 13 */
{
    uint32_t x = 1;
    while (k-- > 0)
        x *= 5;
    return x;
}

static void exact_midpoint_decimal(uint64_t m, int e, exact_decimal *x)
{
    unsigned char le[256]; /* least significant first */
    int n = 0;
    for (uint64_t t = m; t; t /= 10)
        le[n++] = (unsigned char)(t % 10);
    for (int i = e >= 0 ? e : -e; i > 0; i -= 13) /* M * 2^E, or M * 5^-E / 10^-E */
        n = digits_times(le, n, e >= 0 ? UINT64_C(1) << (i < 13 ? i : 13)
                                       : (uint64_t)pow5_small(i < 13 ? i : 13));
    int low = 0;
    while (le[low] == 0)
        low++;
    x->n = n - low;
    for (int j = 0; j < x->n; j++)
        x->d[j] = (char)('0' + le[n - 1 - j]);
    x->point = e >= 0 ? n : n + e; /* M * 5^-E has n digits, and 10^-E divides it out */
}

/* Writes the decimal digits[0..n) * 10^(point - n) into buf, in a form picked by r: scientific
 * ("d.ddde-XX", "D.DDDE+XX"), positional ("0.000ddd", "ddd.ddd", "ddd000"), or with extra leading
 * and trailing zeros. */
static void write_decimal(char *buf, const char *digits, int n, int point, bool neg, uint64_t r)
{
    char *p = buf;
    if (neg)
        *p++ = '-';
    else if (r & 1)
        *p++ = '+';
    const int form = (int)((r >> 1) % 4);
    if (form == 0 || point < -30 || point > 40) {
        *p++ = digits[0];
        if (n > 1 || (r & 8)) {
            *p++ = '.';
            memcpy(p, digits + 1, (size_t)(n - 1));
            p += n - 1;
            if (r & 16)
                p += sprintf(p, "00");
        }
        p += sprintf(p, (r & 32) ? "E%+d" : "e%d", point - 1);
    } else if (form == 1 && point <= 0) {
        p += sprintf(p, "0.");
        for (int i = 0; i < -point; i++)
            *p++ = '0';
        memcpy(p, digits, (size_t)n);
        p += n;
    } else if (form == 1 && point < n) {
        memcpy(p, digits, (size_t)point);
        p += point;
        *p++ = '.';
        memcpy(p, digits + point, (size_t)(n - point));
        p += n - point;
    } else if (form == 1) {
        memcpy(p, digits, (size_t)n);
        p += n;
        for (int i = n; i < point; i++)
            *p++ = '0';
        if (r & 8)
            p += sprintf(p, ".0");
    } else { /* "0.DDDDe<point>", with zeros before and after at times */
        if (form == 3)
            p += sprintf(p, "000");
        p += sprintf(p, "0.");
        memcpy(p, digits, (size_t)n);
        p += n;
        if (r & 16)
            p += sprintf(p, "000");
        p += sprintf(p, "e%d", point);
    }
    *p = '\0';
}

/* A positive finite float32 code, most often near the interesting places. */
static uint32_t interesting_float32(uint64_t r)
{
    const uint32_t low = (uint32_t)(r >> 32);
    switch (r % 8) {
    case 0: /* subnormal */
        return low & 0x007FFFFFu;
    case 1: /* around the smallest normal */
        return 0x00800000u + (low % 64) - 32;
    case 2: /* around the largest */
        return 0x7F7FFFFEu - low % 64;
    case 3: /* around a power of two */
        return ((low % 254 + 1) << 23) + ((r >> 8) & 1 ? 0x7FFFFFu - low % 4 : low % 4);
    default: /* anywhere */
        return low % 0x7F7FFFFFu;
    }
}

static void check_float32_boundaries(long count, uint64_t seed)
{
    const dt_format *f32 = dt_format_of(DTCAST_FLOAT32);
    const dt_rules rne = {.round = DTCAST_ROUND_RNE};
    char bad[512] = "", text[400], digits[300];
    long diffs = 0, n = 0, oracle = 0;
    for (long i = 0; i < count; i++) {
        const uint64_t r = rng_next(&seed), r2 = rng_next(&seed);
        const uint32_t c = interesting_float32(r);
        const uint32_t mant = c & 0x7FFFFFu, be = c >> 23;
        /* c's value is sig * 2^q; the midpoint up to c + 1 is (2 sig + 1) * 2^(q-1) */
        const uint64_t sig = be ? (mant | 0x800000u) : mant;
        const int q = (be ? (int)be : 1) - 150;
        exact_decimal m;
        exact_midpoint_decimal(2 * sig + 1, q - 1, &m);
        /* N significant digits: all of them (the tie), or fewer, cut (below) or cut + 1 (above) */
        const int kind = (int)(r2 % 3);
        int nd = m.n, point = m.point;
        if (kind > 0 && m.n > 1) {
            const int hi = m.n - 1 < 24 ? m.n - 1 : 24;
            nd = 1 + (int)((r2 >> 8) % (uint64_t)hi); /* 1 .. min(n - 1, 24): 9-19 most often */
        }
        memcpy(digits, m.d, (size_t)nd);
        const int tie = nd == m.n;
        int above = 0;
        if (!tie && kind == 2) { /* add one in the last place, carrying */
            int j = nd - 1;
            while (j >= 0 && digits[j] == '9')
                digits[j--] = '0';
            if (j >= 0) {
                digits[j]++;
            } else {
                memmove(digits + 1, digits, (size_t)nd);
                digits[0] = '1';
                point++; /* nd stays: the last digit (a 0) is dropped below */
            }
            above = 1;
        }
        const bool neg = (r2 >> 20) & 1;
        write_decimal(text, digits, nd, point, neg, r2 >> 24);
        /* The reference: exact big-integer parse, then one rounding. */
        dt_value v;
        dt_int_parts ip;
        uint64_t got = 0, want = 0;
        const bool ok1 = dt_text_parse_to_code(text, f32, &rne, &got);
        const bool ok2 = dt_text_parse_reference(text, &v, &ip);
        if (ok2)
            want = dt_encode(f32, &v, &rne);
        /* The oracle, when the cut moved the value by less than half a float32 step (2^(q-1)):
         * (point - nd) * log2(10) < q - 1, with room for the rounding of the logarithm. */
        bool have_oracle = tie || (point - nd) * 3.3219280948873623 < q - 1 - 0.001;
        uint64_t expect = 0;
        if (have_oracle) {
            const uint32_t lower = c, upper = c + 1;
            const uint32_t pick = tie ? ((lower & 1) ? upper : lower) : above ? upper : lower;
            expect = (uint64_t)pick | (uint64_t)neg << 31;
            oracle++;
        }
        float pub = 0;
        const dtcast_status st = dtcast_parse_element(&pub, DTCAST_FLOAT32, 0, text, NULL, NULL);
        uint32_t pub_bits;
        memcpy(&pub_bits, &pub, 4);
        n++;
        if (!ok1 || !ok2 || got != want || (have_oracle && got != expect) || st != DTCAST_OK ||
            pub_bits != got) {
            if (!diffs++)
                snprintf(bad, sizeof bad,
                         "\"%.200s\" (midpoint of 0x%08x and 0x%08x, %s): got 0x%" PRIx64
                         " (ok %d, API 0x%08x), reference 0x%" PRIx64
                         " (ok %d), oracle %s0x%" PRIx64,
                         text, c, c + 1, tie ? "exact" : above ? "above" : "below", got, ok1,
                         pub_bits, want, ok2, have_oracle ? "" : "(none) ", expect);
        }
    }
    CHECK(diffs == 0 && oracle > n / 2,
          "float32 parse at rounding boundaries == reference and exact oracle",
          "%ld of %ld differ (%ld with the oracle), first %s", diffs, n, oracle, bad);
}

/* Random decimals of 9 to 20 significant digits, exponents -50..+40, into float32 (RNE) and
 * through the public API, against the reference. */
static void check_float32_random(long count, uint64_t seed)
{
    const dt_format *f32 = dt_format_of(DTCAST_FLOAT32);
    const dt_rules rne = {.round = DTCAST_ROUND_RNE};
    char bad[512] = "", text[160];
    long diffs = 0;
    for (long i = 0; i < count; i++) {
        random_decimal(text, &seed, 9, 20, 0);
        const int e = (int)(rng_next(&seed) % 91) - 50 - (int)(strlen(text) / 2);
        snprintf(text + strlen(text), 16, "e%d", e);
        dt_value v;
        dt_int_parts ip;
        uint64_t got = 0, want = 0;
        const bool ok1 = dt_text_parse_to_code(text, f32, &rne, &got);
        const bool ok2 = dt_text_parse_reference(text, &v, &ip);
        if (ok2)
            want = dt_encode(f32, &v, &rne);
        float pub = 0;
        const dtcast_status st = dtcast_parse_element(&pub, DTCAST_FLOAT32, 0, text, NULL, NULL);
        uint32_t pub_bits;
        memcpy(&pub_bits, &pub, 4);
        if ((ok1 != ok2 || got != want || (st == DTCAST_OK) != ok2 || (ok2 && pub_bits != got)) &&
            !diffs++)
            snprintf(bad, sizeof bad,
                     "\"%s\": got 0x%" PRIx64 " (ok %d, API 0x%08x), want 0x%" PRIx64 " (ok %d)",
                     text, got, ok1, pub_bits, want, ok2);
    }
    CHECK(diffs == 0, "float32 parse == reference, 9-20 digit decimals, exponents -50..+40",
          "%ld of %ld differ, first %s", diffs, count, bad);
}

/* dt_text_format_float against the reference layout for every float16 and bfloat16 code and
 * random float32 / float64 codes; dt_text_format's answer for every buffer size around it. */
static void check_direct_format(long count, uint64_t seed)
{
    char bad[256] = "", name[96];
    long diffs = 0, n = 0;
    for (uint64_t c = 0; c < 0x20000; c++, n++) {
        const dtcast_type t = c < 0x10000 ? DTCAST_FLOAT16 : DTCAST_BFLOAT16;
        const dt_format *f = dt_format_of(t);
        char fast[DT_TEXT_FLOAT_MAX], ref[DTCAST_FORMAT_MAX];
        const size_t a = dt_text_format_float(fast, f, c & 0xFFFF);
        const size_t b = dt_text_format_reference(ref, sizeof ref, f, c & 0xFFFF,
                                                  DTCAST_STRING_PYTHON);
        if (a != b || strcmp(fast, ref) != 0) {
            if (!diffs++)
                snprintf(bad, sizeof bad, "%s 0x%x: \"%s\" vs \"%s\"", f->name,
                         (unsigned)(c & 0xFFFF), fast, ref);
        }
    }
    for (long i = 0; i < count; i++) {
        const uint64_t r = rng_next(&seed);
        const dtcast_type t = (r & 1) ? DTCAST_FLOAT64 : DTCAST_FLOAT32;
        const dt_format *f = dt_format_of(t);
        const uint64_t code = t == DTCAST_FLOAT32 ? r >> 32 : rng_next(&seed);
        char fast[DT_TEXT_FLOAT_MAX], ref[DTCAST_FORMAT_MAX], small[DTCAST_FORMAT_MAX];
        const size_t a = dt_text_format_float(fast, f, code);
        const size_t b = dt_text_format_reference(ref, sizeof ref, f, code, DTCAST_STRING_PYTHON);
        bool ok = a == b && strcmp(fast, ref) == 0;
        for (size_t size = b > 0 ? b - 1 : 0; ok && size <= b + 1; size++) { /* too small: 0 */
            const size_t k = dt_text_format(small, size, f, code, DTCAST_STRING_PYTHON);
            ok = size > b ? k == b && strcmp(small, ref) == 0 : k == 0;
        }
        n++;
        if (!ok && !diffs++)
            snprintf(bad, sizeof bad, "%s 0x%" PRIx64 ": \"%s\" vs \"%s\"", f->name, code, fast,
                     ref);
    }
    snprintf(name, sizeof name, "direct format == reference, every float16/bfloat16, %ld random",
             count);
    CHECK(diffs == 0, name, "%ld of %ld differ, first %s", diffs, n, bad);
}

/* The public array API: dtcast_convert to strings and back gives the reference texts and the
 * same bits, for float32 / float64 / float16 / bfloat16; a bad string leaves dst untouched. */
static void check_array_api(size_t count, uint64_t seed)
{
    static const dtcast_type types[] = {DTCAST_FLOAT32, DTCAST_FLOAT64, DTCAST_FLOAT16,
                                        DTCAST_BFLOAT16};
    long diffs = 0;
    char bad[256] = "";
    uint8_t *vals = malloc(count * 8), *back = malloc(count * 8);
    char **strs = malloc(count * sizeof *strs);
    if (!vals || !back || !strs) {
        CHECK(0, "array API", "out of memory");
        return;
    }
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        const dt_format *f = dt_format_of(types[k]);
        const size_t bytes = count * (size_t)f->stride_bits / 8;
        for (size_t i = 0; i < count * 8; i++)
            vals[i] = (uint8_t)rng_next(&seed);
        for (size_t i = 0; i < count; i++) { /* no NaN: its payload does not come back */
            const uint64_t c = dt_load(f, vals, i);
            dt_value v;
            dt_decode(f, c, &v);
            if (v.cls == DT_NAN)
                dt_store(f, vals, i, c & ((UINT64_C(1) << f->man_bits) - 1) >> 1);
        }
        if (dtcast_convert(strs, DTCAST_STRING, vals, types[k], count, NULL, NULL) != DTCAST_OK) {
            diffs++;
            continue;
        }
        for (size_t i = 0; i < count; i++) {
            char ref[DTCAST_FORMAT_MAX];
            dt_text_format_reference(ref, sizeof ref, f, dt_load(f, vals, i), DTCAST_STRING_PYTHON);
            if (strcmp(ref, strs[i]) != 0 && !diffs++)
                snprintf(bad, sizeof bad, "%s element %zu: \"%s\" vs \"%s\"", f->name, i, strs[i],
                         ref);
        }
        memset(back, 0, bytes);
        if (dtcast_convert(back, types[k], strs, DTCAST_STRING, count, NULL, NULL) != DTCAST_OK ||
            memcmp(back, vals, bytes) != 0) {
            if (!diffs++)
                snprintf(bad, sizeof bad, "%s: the parsed array differs", f->name);
        }
        /* One bad string at the end: an error, and back keeps its bytes. */
        char *keep = strs[count - 1];
        strs[count - 1] = (char *)"1.5x";
        memset(back, 0xA5, bytes);
        const dtcast_status st = dtcast_convert(back, types[k], strs, DTCAST_STRING, count, NULL,
                                                NULL);
        for (size_t i = 0; i < bytes; i++)
            if (back[i] != 0xA5) {
                diffs++;
                break;
            }
        if (st != DTCAST_ERR_BAD_STRING && !diffs++)
            snprintf(bad, sizeof bad, "%s: a bad string gave status %d", f->name, (int)st);
        strs[count - 1] = keep;
        dtcast_strings_free(strs, count);
    }
    free(vals);
    free(back);
    free(strs);
    CHECK(diffs == 0, "array API: dtcast_convert to strings and back (float32/64/16, bfloat16)",
          "%ld problems, first %s", diffs, bad);
}

int main(void)
{
    check_every_code(DTCAST_FLOAT16);
    check_every_code(DTCAST_BFLOAT16);
    check_every_code(DTCAST_FLOAT8E4M3FN);
    check_every_code(DTCAST_FLOAT8E5M2);
    check_every_code(DTCAST_FLOAT8E8M0);
    check_every_code(DTCAST_FLOAT4E2M1);
    check_edge_codes();
    check_random_codes(DTCAST_FLOAT32, scaled(500000), 1);
    check_random_codes(DTCAST_FLOAT64, scaled(250000), 2);
    check_parse_fixed();
    check_parse_kind("short decimals (1-9 digits, |exp| <= 50)", scaled(100000), 3, 1, 9, 50);
    check_parse_kind("long decimals (17-20 digits, |exp| <= 330)", scaled(100000), 4, 17, 20, 330);
    check_parse_kind("19-digit decimals (|exp| <= 30)", scaled(50000), 5, 19, 19, 30);
    check_parse_kind("huge and tiny exponents (|exp| <= 450)", scaled(50000), 6, 1, 19, 450);
    check_parse_kind("very long decimals (20-40 digits)", scaled(10000), 7, 20, 40, 330);
    check_parse_halfway(scaled(25000), 8);
    check_parse_formatted(scaled(25000), 9);
    check_parse_to_code(scaled(300000), 10);
    check_direct_parse_midpoints(scaled(200000), 11);
    check_direct_parse(scaled(1000000), 12);
    check_float32_boundaries(scaled(500000), 15);
    check_float32_random(scaled(300000), 16);
    check_direct_format(scaled(1000000), 13);
    check_array_api((size_t)(scaled(100000)), 14);
    return CHECK_EXIT();
}
