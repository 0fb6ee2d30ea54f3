/* The caller's floating-point environment never changes a result, and is the same after the
 * call: conversions from float64 (whose portable kernel converts in a rounding mode it sets,
 * and checks for flushing) run under every rounding mode a caller can set and, where the CPU has
 * them, flush-to-zero and denormals-are-zero, on every ISA, against the reference path (integer
 * arithmetic only); float32, float16 and bfloat16 sources (subnormals included) and integer
 * sources (zero among them) the same. */
#include "check.h"
#include "internal.h"
#include "kernel_util.h"
#include "kernels/kernels.h"

#include <fenv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define HAVE_FLUSH 1
static unsigned flush_get(void) { return _mm_getcsr() & ~0x3Fu; } /* the control bits, not the flags */
static void flush_set(unsigned on) { _mm_setcsr(on ? (_mm_getcsr() | 0x8040u) : (_mm_getcsr() & ~0x8040u)); }
#elif defined(__aarch64__) && defined(__GNUC__) && !defined(__clang__)
#define HAVE_FLUSH 1
static unsigned flush_get(void) { return __builtin_aarch64_get_fpcr(); } /* control only */
static void flush_set(unsigned on)
{
    const unsigned fz = 1u << 24;
    __builtin_aarch64_set_fpcr(on ? (__builtin_aarch64_get_fpcr() | fz)
                                  : (__builtin_aarch64_get_fpcr() & ~fz));
}
#endif

enum { N = 20000 };

/* float64 values around float32's and the narrow formats' edges, then random ones */
static void fill64(uint64_t *x)
{
    static const uint64_t edges[] = {
        0, 1, 0x000FFFFFFFFFFFFFu, 0x0010000000000000u, 0x3690000000000000u, /* 2^-150 */
        0x36A0000000000000u, 0x36A0000000000001u, 0x380FFFFFF0000000u, 0x3810000000000000u,
        0x3810000010000000u, 0x47EFFFFFE0000000u, 0x47EFFFFFF0000000u, 0x47F0000000000000u,
        0x7FEFFFFFFFFFFFFFu, 0x7FF0000000000000u, 0x7FF8000000000000u, 0x7FF0000000000001u,
        0x3FF0000010000000u, 0x3FF0000030000000u, 0x3FF000000FFFFFFFu, 0x40DFFE0000000000u};
    size_t i = 0;
    for (size_t e = 0; e < sizeof edges / sizeof *edges; e++) {
        x[i++] = edges[e];
        x[i++] = edges[e] | 0x8000000000000000u;
    }
    for (; i < N; i++) {
        const uint64_t r = rnd();
        /* exponents mostly near float32's range (and its subnormals) */
        const uint64_t ex = (r >> 52) % 4 == 0 ? (r >> 52) & 0x7FF : 0x340 + (r >> 53) % 0x160;
        x[i] = (r & 0x800FFFFFFFFFFFFFu) | ex << 52;
    }
}

/* codes of another source f: every code once (16 bits), or random codes, with small exponent
 * fields half the time for float32 (its subnormals and the smallest normals), and a quarter
 * of small magnitudes (zero among them) for integers */
static void fill_other(const dt_format *f, uint8_t *p)
{
    const bool integer = f->tc == DT_TC_SINT || f->tc == DT_TC_UINT;
    for (size_t i = 0; i < N; i++) {
        uint64_t c = f->bits == 16 ? i : rnd();
        if (f->bits == 32 && !integer && (c & 1))
            c &= 0x80FFFFFFu;
        if (integer && f->bits != 16 && c % 4 == 0)
            c = (c >> 8) % 5 == 0 ? 0 : (c >> 8) & 0xFF;
        dt_store(f, p, i, c & (f->bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << f->bits) - 1));
    }
}

static const dtcast_type sources[] = {DTCAST_FLOAT64, DTCAST_COMPLEX128, DTCAST_FLOAT32, DTCAST_FLOAT16,
                                      DTCAST_BFLOAT16, DTCAST_INT64,  DTCAST_UINT64,
                                      DTCAST_INT32,   DTCAST_UINT32,  DTCAST_UINT16};
static const dtcast_type targets[] = {DTCAST_FLOAT64, DTCAST_FLOAT32, DTCAST_FLOAT16,
                                      DTCAST_BFLOAT16, DTCAST_FLOAT8E4M3FN, DTCAST_FLOAT8E8M0,
                                      DTCAST_BOOL, DTCAST_INT8, DTCAST_INT32};

int main(void)
{
    uint64_t *x = malloc(N * 8);
    uint8_t *got = malloc(N * 8), *want = malloc(N * 8);
    if (!x || !got || !want)
        return 1;
    const int modes[] = {FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
    const char *mode_names[] = {"nearest", "upward", "downward", "toward zero"};
#if defined(HAVE_FLUSH)
    const int flushes = 2;
#else
    const int flushes = 1;
#endif
    const dt_isa top = dt_isa_active();
    long bad = 0, restored_bad = 0, checked = 0;
    for (size_t si = 0; si < sizeof sources / sizeof *sources; si++) {
    const dt_format *sf = dt_format_of(sources[si]);
    /* complex128: N / 2 elements whose parts are the float64 values; the reference converts
     * the real parts */
    const bool c128 = sf->type == DTCAST_COMPLEX128;
    const dt_format *ref_sf = c128 ? dt_format_of(DTCAST_FLOAT64) : sf;
    const size_t n = c128 ? N / 2 : N;
    if (sf->type == DTCAST_FLOAT64 || c128)
        fill64(x);
    else
        fill_other(sf, (uint8_t *)x);
    for (size_t t = 0; t < sizeof targets / sizeof *targets; t++) {
        const dt_format *df = dt_format_of(targets[t]);
        if (df == ref_sf)
            continue;
        for (int round = DTCAST_ROUND_RNE; round <= DTCAST_ROUND_ODD; round++) {
            for (int sat = 0; sat < 2; sat++) {
                dtcast_options o;
                dtcast_options_init(&o);
                o.threads = 1;
                o.discard_imaginary = c128;
                o.round = (dtcast_round)round;
                o.float_overflow = sat ? DTCAST_FLOAT_OVERFLOW_SATURATE : DTCAST_FLOAT_OVERFLOW_IEEE;
                dt_rules r;
                dt_rules_for(df, &o, &r);
                for (size_t i = 0; i < n; i++) { /* the reference, in the default environment */
                    dt_value v;
                    dt_decode(ref_sf, dt_load(ref_sf, x, c128 ? 2 * i : i), &v);
                    dt_store(df, want, i, dt_encode(df, &v, &r));
                }
                for (int isa = 0; isa <= (int)top; isa++) {
                    if (isa == DT_ISA_SSE2)
                        continue;
                    dt_isa_pin(isa);
                    for (int m = 0; m < 4; m++) {
                        for (int fl = 0; fl < flushes; fl++) {
                            if (fesetround(modes[m]) != 0)
                                continue;
#if defined(HAVE_FLUSH)
                            flush_set((unsigned)fl);
                            const unsigned before = flush_get();
#endif
                            memset(got, 0xA5, N * 8);
                            const dtcast_status st = dtcast_convert(got, df->type, x, sf->type, n,
                                                                    &o, NULL);
                            const int after_mode = fegetround();
#if defined(HAVE_FLUSH)
                            const unsigned after = flush_get();
                            flush_set(0);
#else
                            const unsigned before = 0, after = 0;
#endif
                            fesetround(FE_TONEAREST);
                            if (after_mode != modes[m] || after != before) {
                                if (restored_bad++ < 5)
                                    printf("  %s -> %s (%s) round %d sat %d, caller: %s%s: "
                                           "rounding mode %d -> %d, control word 0x%x -> 0x%x\n",
                                           sf->name, df->name, dt_isa_name((dt_isa)isa), round, sat,
                                           mode_names[m], fl ? " + flush" : "", modes[m],
                                           after_mode, before, after);
                            }
                            clear_padding(df, got, n);
                            checked++;
                            if (st != DTCAST_OK || memcmp(got, want, bytes_for(df, n)) != 0) {
                                if (bad++ < 10) {
                                    size_t i = 0;
                                    while (i < n && dt_load(df, got, i) == dt_load(df, want, i))
                                        i++;
                                    printf("  %s -> %s (%s) round %d sat %d, caller: %s%s: "
                                           "element %zu (0x%llx) gave 0x%llx, want 0x%llx\n",
                                           sf->name, df->name, dt_isa_name((dt_isa)isa), round, sat,
                                           mode_names[m], fl ? " + flush" : "", i,
                                           (unsigned long long)(i < n ? dt_load(ref_sf, x, c128 ? 2 * i : i) : 0),
                                           (unsigned long long)(i < n ? dt_load(df, got, i) : 0),
                                           (unsigned long long)(i < n ? dt_load(df, want, i) : 0));
                                }
                            }
                        }
                    }
                    dt_isa_pin(-1);
                }
            }
        }
    }
    }
    char name[320];
    snprintf(name, sizeof name,
             "float64/32/16, complex128, bfloat16, int64/uint64/int32/uint32/uint16 -> 9 types x 6 modes x "
             "2 policies x every ISA "
             "under 4 caller rounding modes%s: %ld conversions of %d values, as the reference",
             flushes > 1 ? " x flush-to-zero/denormals-are-zero" : "", checked, N);
    CHECK(bad == 0, name, "%ld of %ld differ", bad, checked);
    CHECK(restored_bad == 0, "the caller's rounding mode and flush bits unchanged by every call",
          "%ld calls changed them", restored_bad);
    free(x);
    free(got);
    free(want);
    return CHECK_EXIT();
}
