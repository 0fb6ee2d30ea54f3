/* AVX-512 readers of the quantizers' input (fast_input.h): 16 float32 or 32 16-bit lanes a
 * vector, the tail through masked loads (masked-off lanes are never read, so never fault). The
 * 16-bit readers prefetch the memory path's distance ahead (4.7 -> 4.9 G elements/s of Q8_0
 * from bfloat16 on the Intel Xeon of BENCHMARKS.md, issue 31). */
#if defined(__x86_64__) && defined(__GNUC__)
#include "fast_input.h"
#include "../kernels/kernels.h" /* dt_prefetch_ahead */
#include "../kernels/x86_attrs.h"

#include <immintrin.h>
#include <stdint.h>

#define FN DT_TARGET_AVX512

FN bool dt_ggml_input_f32_avx512(const void *src, size_t n, float *buf)
{
    (void)buf;
    const uint32_t *s = src;
    const __m512i e = _mm512_set1_epi32(0x7F800000);
    __m512i m0 = _mm512_setzero_si512(), m1 = m0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        m0 = _mm512_max_epu32(m0, _mm512_and_si512(_mm512_loadu_si512(s + i), e));
        m1 = _mm512_max_epu32(m1, _mm512_and_si512(_mm512_loadu_si512(s + i + 16), e));
    }
    for (; i < n; i += 16) {
        const __mmask16 k = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1);
        m0 = _mm512_max_epu32(m0, _mm512_and_si512(_mm512_maskz_loadu_epi32(k, s + i), e));
    }
    return _mm512_cmpeq_epi32_mask(_mm512_max_epu32(m0, m1), e) != 0;
}

/* 32 lanes of 16 bits: the low and high 16 to float32 (WIDEN), the exponents into the max */
#define INPUT16(NAME, EXP, WIDEN_LO, WIDEN_HI)                                                     \
    FN bool NAME(const void *src, size_t n, float *buf)                                            \
    {                                                                                              \
        const uint16_t *s = src;                                                                   \
        const __m512i e = _mm512_set1_epi16((short)(EXP));                                         \
        __m512i m = _mm512_setzero_si512();                                                        \
        for (size_t i = 0; i < n; i += 32) {                                                       \
            const __mmask32 k = n - i >= 32 ? ~(__mmask32)0 : (__mmask32)((1u << (n - i)) - 1);    \
            _mm_prefetch((const char *)((uintptr_t)(s + i) + dt_prefetch_ahead), _MM_HINT_T0);   \
            const __m512i h = _mm512_maskz_loadu_epi16(k, s + i);                                  \
            m = _mm512_max_epu16(m, _mm512_and_si512(h, e));                                       \
            const __m512 lo = WIDEN_LO(h), hi = WIDEN_HI(h);                                       \
            if (n - i >= 32) {                                                                     \
                _mm512_storeu_ps(buf + i, lo);                                                     \
                _mm512_storeu_ps(buf + i + 16, hi);                                                \
            } else {                                                                               \
                _mm512_mask_storeu_ps(buf + i, (__mmask16)k, lo);                                  \
                _mm512_mask_storeu_ps(buf + i + 16, (__mmask16)(k >> 16), hi);                    \
            }                                                                                      \
        }                                                                                          \
        return _mm512_cmpeq_epi16_mask(m, e) != 0;                                                 \
    }

/* bfloat16: the bits moved up into the high half of each 32-bit lane */
#define BF16_LO(h) _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(h)), 16))
#define BF16_HI(h) _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(h, 1)), 16))
/* float16: vcvtph2ps (exact; a signalling NaN comes out quiet, and NaN is zeroed after anyway) */
#define F16_LO(h) _mm512_cvtph_ps(_mm512_castsi512_si256(h))
#define F16_HI(h) _mm512_cvtph_ps(_mm512_extracti64x4_epi64(h, 1))

INPUT16(dt_ggml_input_bf16_avx512, 0x7F80, BF16_LO, BF16_HI)
INPUT16(dt_ggml_input_f16_avx512, 0x7C00, F16_LO, F16_HI)
#endif
