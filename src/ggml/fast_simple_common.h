/* What the two fast paths of the simple types' quantizers (fast_simple_avx2.c,
 * fast_simple_avx512.c) share beyond simple_scalar.h: the prefetch, the float16 store of one
 * scale, the nibble packing of 16 + 16 byte codes (SSE2, which both targets have), MXFP4's
 * exponent byte, and the e2m1 values and thresholds of MXFP4 and NVFP4.
 *
 * Included once by each of the two files, after it has defined FNI (static, inlined, for its
 * target). */
#ifndef DTCAST_GGML_FAST_SIMPLE_COMMON_H
#define DTCAST_GGML_FAST_SIMPLE_COMMON_H
#if defined(__x86_64__) && defined(__GNUC__) /* x86-64 intrinsics: the fast paths only */

#include "simple_scalar.h"

#include <immintrin.h>
#include <stdbool.h>
#include <string.h>

#define F16_RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
/* the short loops over vectors unrolled, so that their arrays stay in registers */
#define UNROLL _Pragma("GCC unroll 16")

#ifndef PF_AHEAD
#define PF_AHEAD 8192
#endif
/* software prefetch of the bytes PF_AHEAD past [p, p + bytes) (never faults: the address is an
 * integer; past the buffer it is harmless) */
FNI void prefetch(const void *p, size_t bytes)
{
    for (size_t o = 0; o < bytes; o += 64)
        _mm_prefetch((const char *)((uintptr_t)p + PF_AHEAD + o), _MM_HINT_T0);
}

/* one float16 scale, vcvtps2ph to nearest even (dt_ggml_fp16 for non-NaN) */
FNI void f16_store(uint8_t *p, float d)
{
    const uint16_t h = (uint16_t)_cvtss_sh(d, F16_RNE);
    memcpy(p, &h, 2);
}

/* 16 bytes: lo | hi << 4 (lo below 16, hi's high bits dropped), and the same of the low nibbles */
FNI __m128i nibbles(__m128i lo, __m128i hi)
{
    return _mm_or_si128(lo, _mm_and_si128(_mm_slli_epi16(hi, 4), _mm_set1_epi8((char)0xF0)));
}
FNI __m128i nibbles_masked(__m128i lo, __m128i hi)
{
    const __m128i f = _mm_set1_epi8(0x0F);
    return _mm_or_si128(_mm_and_si128(lo, f), _mm_slli_epi16(_mm_and_si128(hi, f), 4));
}

/* MXFP4's exponent byte of amax (simple_scalar.h's mx_exponent_ref). For a normal amax whose
 * mantissa is below 2 - 2^-11, log2 amax = k + log2 f is at least 2^-11.5 below k + 1, far
 * beyond the rounding of a binary32 near k + 1 (|k| < 256: ulp <= 2^-16), so the floor is the
 * exponent k; the others take the reference's path. */
static inline uint8_t mx_exponent(float amax)
{
    if (!(amax > 0.0f))
        return 0;
    const uint32_t u = dt_ggml_bits_of(amax);
    const uint32_t ex = u >> 23, man = u & 0x7FFFFFu;
    if (ex == 0 || man >= 0x7FF000u)
        return (uint8_t)mx_exponent_ref(amax);
    return (uint8_t)((ex - 127u + 125u) & 0xFFu);
}

/* The e2m1 values doubled (codes 0..7; simple.c's kvalues_fp4) and the midpoints between
 * neighbours, (fp4_kv[i-1] + fp4_kv[i]) / 2 */
static const float fp4_kv[8] = {0, 1, 2, 3, 4, 6, 8, 12};
static const float fp4_mid[8] = {0, 0.5f, 1.5f, 2.5f, 3.5f, 5, 7, 10};

/* Whether a block of half-scale d and largest magnitude amax may take its codes by the
 * thresholds mid[i] * d (fast_simple_avx512.c's fp4_codes_mid): 0 < d <= 2^124, amax <= 2^20 d */
static inline bool fp4_thresholds_hold(float d, float amax)
{
    return d > 0.0f && d <= 0x1p124f && !(amax > 0x1p20f * d);
}

#endif /* x86-64 */
#endif /* DTCAST_GGML_FAST_SIMPLE_COMMON_H */
