/* 8-bit floats -> float32 by arithmetic on AVX2, 8 codes per step: every float8 format (IEEE-
 * like, fn, fnuz) widens exactly, so the result is the code's value rebuilt in float32 bits.
 * The table kernel (kernels_avx2_table.c) loads one entry per element; this one spends about a
 * quarter of that, which matters where the codes are in cache (dequantization's chunks).
 *
 *   normal code (exponent e > 0):  bits = mag << (23 - M) + (127 - B) << 23   (rebias)
 *   subnormal (e = 0, m > 0):      bits = bits(float(m)) + (1 - B - M) << 23  (m 2^(1-B-M), a
 *                                  normal float32: no denormal ever enters the arithmetic, so
 *                                  the caller's flush-to-zero modes do not matter)
 *   then the sign, and the format's special codes (Inf, NaN) replaced by the reference's values.
 *
 * The set-up checks all 256 codes of the scalar model below against the reference decoder and
 * declines a format whose specials do not fit it; tests/test_registry.c compares the kernel. */
#if defined(__x86_64__) && defined(__GNUC__)
#include "kernels.h"

#include "x86_attrs.h"

#include <immintrin.h>
#include <string.h>

#define FN DT_TARGET_AVX2

typedef struct widen8 {
    uint32_t shift;     /* 23 - M */
    uint32_t rebias;    /* (127 - B) << 23 */
    uint32_t sub_bias;  /* (1 - B - M) << 23, added to the bits of float(m) */
    uint32_t sub_below; /* magnitudes below it (1 << M) are subnormal or zero */
    uint32_t spec_lo;   /* magnitudes >= it are special (IEEE: Inf at spec_lo, NaN above; fn: NaN);
                         * 0x80 (never) when none */
    uint32_t inf_bits;  /* float32 magnitude of the Inf code */
    uint32_t nan_bits;  /* float32 magnitude of the NaN codes */
    uint32_t code80;    /* fnuz: the whole result of code 0x80 (NaN); else 0x80000000 (-0) */
    bool ieee;          /* spec_lo is Inf, above it NaN; else every special is NaN */
} widen8;

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* The scalar model: what the vector code computes for one code. */
static uint32_t widen_one(const widen8 *w, uint32_t c)
{
    if (c == 0x80)
        return w->code80;
    const uint32_t sign = (c & 0x80u) << 24, mag = c & 0x7Fu;
    uint32_t bits;
    if (mag >= w->spec_lo)
        bits = w->ieee && mag == w->spec_lo ? w->inf_bits : w->nan_bits;
    else if (mag >= w->sub_below)
        bits = (mag << w->shift) + w->rebias;
    else
        bits = mag ? f32_bits((float)mag) + w->sub_bias : 0;
    return bits | sign;
}

static FN void widen8_f32(const dt_kernel *k, void *dst, const void *src, size_t begin,
                          size_t end)
{
    widen8 w;
    memcpy(&w, k->local, sizeof w);
    const uint8_t *s = (const uint8_t *)src + begin;
    uint8_t *d = (uint8_t *)dst + begin * 4;
    const __m256i m7f = _mm256_set1_epi32(0x7F), rebias = _mm256_set1_epi32((int)w.rebias),
                  sub_bias = _mm256_set1_epi32((int)w.sub_bias),
                  sub_below = _mm256_set1_epi32((int)w.sub_below),
                  spec_lo = _mm256_set1_epi32((int)w.spec_lo),
                  spec_m1 = _mm256_set1_epi32((int)w.spec_lo - 1),
                  inf = _mm256_set1_epi32((int)w.inf_bits), nan = _mm256_set1_epi32((int)w.nan_bits),
                  c80 = _mm256_set1_epi32(0x80), code80 = _mm256_set1_epi32((int)w.code80),
                  zero = _mm256_setzero_si256();
    const __m128i shift = _mm_cvtsi32_si128((int)w.shift);
    const size_t n = end - begin;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i c = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(s + i)));
        const __m256i mag = _mm256_and_si256(c, m7f);
        const __m256i sign = _mm256_slli_epi32(_mm256_andnot_si256(m7f, c), 24);
        const __m256i normal = _mm256_add_epi32(_mm256_sll_epi32(mag, shift), rebias);
        __m256i sub = _mm256_add_epi32(_mm256_castps_si256(_mm256_cvtepi32_ps(mag)), sub_bias);
        sub = _mm256_andnot_si256(_mm256_cmpeq_epi32(mag, zero), sub); /* 0 stays +0 */
        __m256i bits = _mm256_blendv_epi8(normal, sub, _mm256_cmpgt_epi32(sub_below, mag));
        if (w.spec_lo < 0x80) {
            const __m256i special = _mm256_cmpgt_epi32(mag, spec_m1);
            __m256i sv = nan;
            if (w.ieee)
                sv = _mm256_blendv_epi8(nan, inf, _mm256_cmpeq_epi32(mag, spec_lo));
            bits = _mm256_blendv_epi8(bits, sv, special);
        }
        bits = _mm256_or_si256(bits, sign);
        if (w.code80 != 0x80000000u)
            bits = _mm256_blendv_epi8(bits, code80, _mm256_cmpeq_epi32(c, c80));
        _mm256_storeu_si256((__m256i *)(void *)(d + 4 * i), bits);
    }
    for (; i < n; i++) {
        const uint32_t b = widen_one(&w, s[i]);
        memcpy(d + 4 * i, &b, 4);
    }
}

/* The reference's float32 bits of code c. */
static uint32_t reference_bits(const dt_format *df, const dt_format *sf, const dt_rules *r,
                               uint32_t c)
{
    dt_value v;
    dt_decode(sf, c, &v);
    return (uint32_t)dt_encode(df, &v, r);
}

static bool e_widen8(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                     size_t count)
{
    (void)count;
    if (df->type != DTCAST_FLOAT32 || sf->tc != DT_TC_FLOAT || sf->bits != 8 ||
        sf->stride_bits != 8 || sf->man_bits < 1 || sf->man_bits > 6 || sf->bias > 126)
        return false;
    const uint32_t M = (uint32_t)sf->man_bits, B = (uint32_t)sf->bias;
    widen8 w = {.shift = 23 - M,
                .rebias = (127 - B) << 23,
                .sub_bias = (uint32_t)(1 - (int32_t)B - (int32_t)M) << 23,
                .sub_below = 1u << M,
                .spec_lo = 0x80,
                .code80 = 0x80000000u};
    switch (sf->nan) {
    case DT_NAN_IEEE:
        w.ieee = true;
        w.spec_lo = 0x7Fu & ~((1u << M) - 1); /* exponent all ones */
        w.inf_bits = reference_bits(df, sf, r, w.spec_lo);
        w.nan_bits = reference_bits(df, sf, r, 0x7F);
        break;
    case DT_NAN_FN:
        w.spec_lo = 0x7F;
        w.nan_bits = reference_bits(df, sf, r, 0x7F);
        break;
    case DT_NAN_FNUZ:
        w.code80 = reference_bits(df, sf, r, 0x80);
        break;
    default:
        break;
    }
    /* the subnormal step rebuilds m 2^(1-B-M) from float(m): it must stay a normal float32 */
    if ((int32_t)B + (int32_t)M > 120)
        return false;
    for (uint32_t c = 0; c < 256; c++)
        if (widen_one(&w, c) != reference_bits(df, sf, r, c))
            return false;
    memcpy(k->local, &w, sizeof w);
    k->fn = widen8_f32;
    return true;
}

const dt_kernel_entry dt_entries_widen8_avx2[] = {
    {"avx2 float8 -> float32 by arithmetic", DT_ISA_AVX2, e_widen8},
    {NULL, DT_ISA_PORTABLE, NULL},
};
#else
typedef int dt_widen8_avx2_unused; /* ISO C: a translation unit is not empty */
#endif
