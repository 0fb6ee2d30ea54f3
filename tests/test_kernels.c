/* Every fast path against the reference path (dt_decode + dt_encode), bit for bit, for every
 * kernel variant this CPU runs (portable, AVX2, AVX-512, pinned in turn):
 *   - exhaustively for every source of <= 16 bits, into every target, in every rounding mode
 *     and overflow policy (and nan_as_max), both with and without the 64 KiB tables;
 *   - for 32- and 64-bit sources, edge cases (zeros, subnormals, min/max normal, every midpoint
 *     between neighbours of a target +-1 ulp, overflow thresholds, NaN payloads, Inf) plus random
 *     values: 20000 per pair and mode, times DTCAST_TEST_SCALE (tests/long runs 10^8);
 *   - tails (counts 0..100), unaligned pointers, odd counts of packed outputs, in place.
 * The static library exposes the internal symbols used here. */
#include "check.h"
#include "internal.h"
#include "kernels/kernels.h"

#include <stdlib.h>
#include <string.h>

static const dtcast_type all_types[] = {
    DTCAST_BOOL, DTCAST_UINT1, DTCAST_UINT2, DTCAST_INT2, DTCAST_UINT4, DTCAST_INT4,
    DTCAST_UINT8, DTCAST_INT8, DTCAST_UINT16, DTCAST_INT16, DTCAST_UINT32, DTCAST_INT32,
    DTCAST_UINT64, DTCAST_INT64, DTCAST_FLOAT4E2M1, DTCAST_FLOAT6E2M3FN, DTCAST_FLOAT6E3M2FN,
    DTCAST_FLOAT8E4M3FN, DTCAST_FLOAT8E4M3FNUZ, DTCAST_FLOAT8E5M2, DTCAST_FLOAT8E5M2FNUZ,
    DTCAST_FLOAT8E4M3, DTCAST_FLOAT8E3M4, DTCAST_FLOAT8E4M3B11FNUZ, DTCAST_FLOAT8E8M0,
    DTCAST_FLOAT16, DTCAST_BFLOAT16, DTCAST_FLOAT32, DTCAST_FLOAT64};
#define NTYPES (sizeof all_types / sizeof all_types[0])

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t rnd(void) /* xorshift64* */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Du;
}

static double scale = 1.0;
static size_t failures_reported;

/* The distinct rule sets for a destination (normalized, as the tables key them). */
static size_t rule_sets(const dt_format *df, dt_rules *out)
{
    size_t n = 0;
    for (int round = DTCAST_ROUND_RNE; round <= DTCAST_ROUND_ODD; round++)
        for (int sf = 0; sf < 2; sf++)
            for (int si = 0; si < 2; si++)
                for (int nm = 0; nm < 2; nm++) {
                    dt_rules r = {(dtcast_round)round, sf, si, nm}, norm;
                    dt_rules_normalize(df, &r, &norm);
                    bool dup = false;
                    for (size_t i = 0; i < n; i++)
                        dup = dup || memcmp(&out[i], &norm, sizeof norm) == 0;
                    if (!dup)
                        out[n++] = norm;
                }
    return n;
}

static uint64_t reference(const dt_format *df, const dt_format *sf, uint64_t code,
                          const dt_rules *r)
{
    dt_value v;
    dt_decode(sf, code, &v);
    return dt_encode(df, &v, r);
}

static size_t bytes_for(const dt_format *f, size_t n) { return (n * (size_t)f->stride_bits + 7) / 8; }

/* Runs the kernel over codes[0..n) and compares with the reference; returns mismatches. */
static size_t run_and_compare(const dt_kernel *k, const dt_format *df, const dt_format *sf,
                              const uint64_t *codes, const uint64_t *want, size_t n,
                              uint8_t *in, uint8_t *out, const char *what)
{
    memset(in, 0, bytes_for(sf, n) + 8);
    for (size_t i = 0; i < n; i++)
        dt_store(sf, in, i, codes[i]);
    memset(out, 0xA5, bytes_for(df, n) + 8);
    dt_kernel_run(k, out, in, 0, n);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t got = dt_load(df, out, i);
        if (got != want[i]) {
            if (bad++ == 0 && failures_reported++ < 30)
                printf("  mismatch %s %s -> %s round %d satf %d sati %d nanmax %d: code 0x%llx "
                       "gives 0x%llx, reference 0x%llx\n",
                       what, sf->name, df->name, (int)k->r.round, k->r.saturate_float,
                       k->r.saturate_int, k->r.nan_as_max, (unsigned long long)codes[i],
                       (unsigned long long)got, (unsigned long long)want[i]);
        }
    }
    return bad;
}

static int isa_max;

/* For each ISA, finds the kernel for (df, sf, r) and compares it on codes. */
static void compare_all_isas(const dt_format *df, const dt_format *sf, const dt_rules *r,
                             const uint64_t *codes, size_t n, uint64_t *want, uint8_t *in,
                             uint8_t *out, size_t *checked, size_t *bad, size_t *kernels)
{
    bool have_want = false;
    for (int isa = 0; isa <= isa_max; isa++) {
        if (isa == DT_ISA_SSE2)
            continue;
        dt_isa_pin(isa);
        for (int tab = 0; tab < 2; tab++) {
            if (tab == 1 && sf->stride_bits != 16)
                break;
            dt_tables16_disable(tab == 0 && sf->stride_bits == 16);
            dt_kernel k;
            if (!dt_kernel_find(&k, df, sf, r, 1u << 20))
                continue;
            if (!have_want) {
                for (size_t i = 0; i < n; i++)
                    want[i] = reference(df, sf, codes[i], r);
                have_want = true;
            }
            char what[32];
            snprintf(what, sizeof what, "%s%s", dt_isa_name((dt_isa)isa), tab ? "+table" : "");
            *bad += run_and_compare(&k, df, sf, codes, want, n, in, out, what);
            *checked += n;
            ++*kernels;
        }
    }
    dt_tables16_disable(false);
    dt_isa_pin(-1);
}

/* Every source of <= 16 bits, every code, into every target, every rule set. */
static void test_exhaustive(void)
{
    uint64_t *codes = malloc(65536 * sizeof *codes), *want = malloc(65536 * sizeof *want);
    uint8_t *in = malloc(65536 * 2 + 16), *out = malloc(65536 * 8 + 16);
    for (size_t s = 0; s < NTYPES; s++) {
        const dt_format *sf = dt_format_of(all_types[s]);
        if (sf->bits > 16)
            continue;
        const size_t n = (size_t)1 << sf->bits;
        for (size_t i = 0; i < n; i++)
            codes[i] = i;
        size_t checked = 0, bad = 0, kernels = 0;
        for (size_t d = 0; d < NTYPES; d++) {
            const dt_format *df = dt_format_of(all_types[d]);
            dt_rules rs[64];
            size_t nr = rule_sets(df, rs);
            for (size_t ri = 0; ri < nr; ri++)
                compare_all_isas(df, sf, &rs[ri], codes, n, want, in, out, &checked, &bad,
                                 &kernels);
        }
        char name[96];
        snprintf(name, sizeof name, "kernels exhaustive from %s (%zu kernels, %zu values)",
                 sf->name, kernels, checked);
        CHECK(bad == 0, name, "%zu mismatches", bad);
    }
    free(codes);
    free(want);
    free(in);
    free(out);
}

/* ---- 32- and 64-bit sources: edges + random ------------------------------------------------ */

/* Float edge values for a source float format (32 or 64 bits): every exponent with mantissas
 * that sit on, just below and just above each possible rounding point, plus specials. */
static size_t float_edges(const dt_format *sf, uint64_t *out, size_t cap)
{
    const int man = sf->man_bits, eb = sf->exp_bits;
    size_t n = 0;
    const uint64_t emax = (UINT64_C(1) << eb) - 1;
    for (int sign = 0; sign < 2; sign++) {
        const uint64_t s = (uint64_t)sign << (sf->bits - 1);
        for (uint64_t e = 0; e <= emax && n + 64 < cap; e++) {
            /* float64: exponents far outside every narrow target are thinned out */
            if (sf->bits == 64 && e > 16 && e < emax - 16 && (e < 1023 - 200 || e > 1023 + 200) &&
                e % 37)
                continue;
            static const int ks[] = {1, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13, 15, 16, 17, 19, 20, 21,
                                     22, 23, 25, 28, 29, 30, 31, 35, 42, 50, 51, 52};
            for (size_t ki = 0; ki < sizeof ks / sizeof ks[0] && n + 8 < cap; ki++) {
                int k = ks[ki];
                if (k > man)
                    continue;
                /* k dropped bits: exactly half, half-1, half+1; with kept lsb 0 and 1 */
                const uint64_t half = UINT64_C(1) << (k - 1);
                const uint64_t top = rnd() & ((UINT64_C(1) << man) - 1) & ~((UINT64_C(1) << k) - 1);
                const uint64_t lsb = UINT64_C(1) << (k < man ? k : 0);
                const uint64_t cands[] = {top | half, (top | half) - 1, (top | half) + 1,
                                          (top ^ lsb) | half, top, top + 1,
                                          top | ((UINT64_C(1) << k) - 1)};
                for (size_t c = 0; c < 7; c++)
                    out[n++] = s | (e << man) | (cands[c] & ((UINT64_C(1) << man) - 1));
            }
            out[n++] = s | (e << man);
            out[n++] = s | (e << man) | ((UINT64_C(1) << man) - 1);
            out[n++] = s | (e << man) | 1;
        }
        /* NaN payloads, Inf, zero */
        out[n++] = s | (emax << man) | 1;
        out[n++] = s | (emax << man) | (UINT64_C(1) << (man - 1));
        out[n++] = s | (emax << man) | ((UINT64_C(1) << man) - 1);
        out[n++] = s | (emax << man);
        out[n++] = s;
    }
    return n;
}

/* Every value of every narrow float and integer as an exact source code (+-1 ulp). */
static size_t exact_targets(const dt_format *sf, uint64_t *out, size_t cap)
{
    static const dt_rules rne = {DTCAST_ROUND_RNE, false, false, false};
    size_t n = 0;
    for (size_t t = 0; t < NTYPES; t++) {
        const dt_format *tf = dt_format_of(all_types[t]);
        if (tf->bits > 16 || n + 3 * ((size_t)1 << tf->bits) > cap)
            continue;
        for (uint64_t c = 0; c < (UINT64_C(1) << tf->bits); c += tf->bits > 8 ? 7 : 1) {
            dt_value v;
            dt_decode(tf, c, &v);
            uint64_t x = dt_encode(sf, &v, &rne);
            out[n++] = x;
            out[n++] = x + 1;
            out[n++] = x - 1;
        }
    }
    return n;
}

static void test_wide_sources(void)
{
    static const dtcast_type wide[] = {DTCAST_FLOAT32, DTCAST_FLOAT64, DTCAST_INT32,
                                       DTCAST_UINT32, DTCAST_INT64, DTCAST_UINT64};
    const size_t nrand = (size_t)(20000 * scale);
    const size_t cap = 400000 + nrand;
    uint64_t *codes = malloc(cap * sizeof *codes), *want = malloc(cap * sizeof *want);
    uint8_t *in = malloc(cap * 8 + 16), *out = malloc(cap * 8 + 16);
    for (size_t s = 0; s < sizeof wide / sizeof wide[0]; s++) {
        const dt_format *sf = dt_format_of(wide[s]);
        const uint64_t mask = sf->bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << sf->bits) - 1;
        size_t checked = 0, bad = 0, kernels = 0;
        for (size_t d = 0; d < NTYPES; d++) {
            const dt_format *df = dt_format_of(all_types[d]);
            dt_rules rs[64];
            size_t nr = rule_sets(df, rs);
            for (size_t ri = 0; ri < nr; ri++) {
                size_t n = 0;
                if (sf->tc == DT_TC_FLOAT) {
                    n = float_edges(sf, codes, cap / 2);
                    n += exact_targets(sf, codes + n, cap / 2 - n);
                } else {
                    for (int b = 0; b < 64; b++) /* powers of two and neighbours */
                        for (int dlt = -2; dlt <= 2; dlt++)
                            codes[n++] = ((UINT64_C(1) << b) + (uint64_t)dlt);
                    for (int b = 0; b < 64; b++)
                        codes[n++] = ~((UINT64_C(1) << b) - 1);
                    /* ties and near-ties of float32 (24 bits) and float64 (53 bits), both signs */
                    for (int b = 24; b < 64; b++)
                        for (int p = 24; p <= 53 && p <= b; p += 29)
                            for (uint64_t t = 1; t <= 3; t++) {
                                const uint64_t x = (UINT64_C(1) << b) + (t << (b - p));
                                codes[n++] = x;
                                codes[n++] = 0 - x;
                                codes[n++] = x + 1;
                            }
                }
                for (size_t i = 0; i < nrand; i++) {
                    uint64_t x = rnd();
                    if (i % 4 == 1) /* small magnitudes */
                        x >>= rnd() % 64;
                    codes[n++] = x;
                }
                for (size_t i = 0; i < n; i++)
                    codes[i] &= mask;
                compare_all_isas(df, sf, &rs[ri], codes, n, want, in, out, &checked, &bad,
                                 &kernels);
            }
        }
        char name[96];
        snprintf(name, sizeof name, "kernels from %s: edges + random (%zu kernels, %zu values)",
                 sf->name, kernels, checked);
        CHECK(bad == 0, name, "%zu mismatches", bad);
    }
    free(codes);
    free(want);
    free(in);
    free(out);
}

/* Tails, unaligned pointers, begin offsets (multiples of 8) and in place, through the kernels. */
static void test_layouts(void)
{
    static const dtcast_type srcs[] = {DTCAST_FLOAT32, DTCAST_FLOAT16, DTCAST_BFLOAT16,
                                       DTCAST_FLOAT64, DTCAST_UINT8, DTCAST_INT4,
                                       DTCAST_FLOAT8E4M3FN, DTCAST_INT32, DTCAST_INT16,
                                       DTCAST_INT64, DTCAST_UINT64, DTCAST_UINT32};
    static const dtcast_type dsts[] = {DTCAST_FLOAT16, DTCAST_BFLOAT16, DTCAST_FLOAT8E4M3FN,
                                       DTCAST_FLOAT8E5M2, DTCAST_FLOAT4E2M1, DTCAST_INT4,
                                       DTCAST_INT8, DTCAST_FLOAT32, DTCAST_FLOAT8E8M0,
                                       DTCAST_UINT16, DTCAST_FLOAT64, DTCAST_INT2, DTCAST_UINT2,
                                       DTCAST_UINT1, DTCAST_BOOL, DTCAST_INT64, DTCAST_UINT32,
                                       DTCAST_INT32};
    uint8_t src[1200], buf[1200], dst[1200], want[1200];
    size_t bad = 0, runs = 0;
    for (int isa = 0; isa <= isa_max; isa++) {
        dt_isa_pin(isa);
        for (size_t s = 0; s < sizeof srcs / sizeof srcs[0]; s++)
            for (size_t d = 0; d < sizeof dsts / sizeof dsts[0]; d++) {
                const dt_format *sf = dt_format_of(srcs[s]), *df = dt_format_of(dsts[d]);
                dt_rules r = {DTCAST_ROUND_RNE, false, false, false};
                dt_kernel k;
                if (!dt_kernel_find(&k, df, sf, &r, 100))
                    continue;
                for (size_t count = 0; count <= 100; count++)
                    for (size_t off = 0; off < 3; off++) {
                        for (size_t i = 0; i < sizeof src; i++)
                            src[i] = (uint8_t)rnd();
                        const size_t sb = bytes_for(sf, count), db = bytes_for(df, count);
                        memset(dst, 0x5A, sizeof dst);
                        memset(want, 0x5A, sizeof want);
                        for (size_t i = 0; i < count; i++)
                            dt_store(df, want + off, i,
                                     reference(df, sf, dt_load(sf, src + off, i), &r));
                        /* the caller's job: padding bits of a packed tail are zeroed */
                        if (df->stride_bits < 8 && count % (8 / df->stride_bits))
                            want[off + db - 1] &= (uint8_t)((1u << ((count % (8 / df->stride_bits)) *
                                                                   (unsigned)df->stride_bits)) - 1);
                        dt_kernel_run(&k, dst + off, src + off, 0, count);
                        if (df->stride_bits < 8 && count % (8 / df->stride_bits))
                            dst[off + db - 1] &= (uint8_t)((1u << ((count % (8 / df->stride_bits)) *
                                                                  (unsigned)df->stride_bits)) - 1);
                        if (memcmp(dst, want, sizeof dst) != 0 && bad++ < 5)
                            printf("  layout %s: %s -> %s count %zu offset %zu\n",
                                   dt_isa_name((dt_isa)isa), sf->name, df->name, count, off);
                        /* two ranges split at a multiple of 8 */
                        if (count > 16) {
                            memset(dst, 0x5A, sizeof dst);
                            dt_kernel_run(&k, dst + off, src + off, 0, 8);
                            dt_kernel_run(&k, dst + off, src + off, 8, count);
                            if (df->stride_bits < 8 && count % (8 / df->stride_bits))
                                dst[off + db - 1] &=
                                    (uint8_t)((1u << ((count % (8 / df->stride_bits)) *
                                                      (unsigned)df->stride_bits)) - 1);
                            if (memcmp(dst, want, sizeof dst) != 0 && bad++ < 5)
                                printf("  split %s: %s -> %s count %zu offset %zu\n",
                                       dt_isa_name((dt_isa)isa), sf->name, df->name, count, off);
                        }
                        /* in place, narrowing or same width */
                        if (df->stride_bits <= sf->stride_bits) {
                            memcpy(buf, src, sizeof buf);
                            dt_kernel_run(&k, buf + off, buf + off, 0, count);
                            if (df->stride_bits < 8 && count % (8 / df->stride_bits))
                                buf[off + db - 1] &=
                                    (uint8_t)((1u << ((count % (8 / df->stride_bits)) *
                                                      (unsigned)df->stride_bits)) - 1);
                            if (memcmp(buf + off, want + off, db) != 0 && bad++ < 5)
                                printf("  in place %s: %s -> %s count %zu offset %zu\n",
                                       dt_isa_name((dt_isa)isa), sf->name, df->name, count, off);
                        }
                        (void)sb;
                        runs++;
                    }
            }
    }
    dt_isa_pin(-1);
    char name[80];
    snprintf(name, sizeof name, "kernels: tails 0..100, unaligned, split, in place (%zu runs)",
             runs);
    CHECK(bad == 0, name, "%zu layouts differ", bad);
}

int main(void)
{
    const char *sc = getenv("DTCAST_TEST_SCALE");
    if (sc && *sc)
        scale = atof(sc);
    isa_max = (int)dt_isa_detected();
    const char *only = getenv("DTCAST_TEST_ONLY"); /* "wide" for tests/long */
    printf("# ISAs tested: portable%s%s\n", isa_max >= DT_ISA_AVX2 ? " avx2" : "",
           isa_max >= DT_ISA_AVX512 ? " avx512" : "");
    if (!only || strcmp(only, "wide") != 0) {
        test_layouts();
        test_exhaustive();
    }
    test_wide_sources();
    return CHECK_EXIT();
}
