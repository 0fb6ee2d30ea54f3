/* AVX2 readers of the quantizers' input (fast_input.h): 8 float32 or 16 16-bit lanes a vector,
 * the tail one element at a time. */
#if defined(__x86_64__) && defined(__GNUC__)
#include "fast_input.h"
#include "../kernels/x86_attrs.h"

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#define FN DT_TARGET_AVX2

FN bool dt_ggml_input_f32_avx2(const void *src, size_t n, float *buf)
{
    (void)buf;
    const uint8_t *s = src;
    const __m256i e = _mm256_set1_epi32(0x7F800000);
    __m256i m0 = _mm256_setzero_si256(), m1 = m0;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(s + 4 * i));
        const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(s + 4 * i + 32));
        m0 = _mm256_max_epu32(m0, _mm256_and_si256(a, e));
        m1 = _mm256_max_epu32(m1, _mm256_and_si256(b, e));
    }
    uint32_t tail = 0;
    for (; i < n; i++) {
        uint32_t u;
        memcpy(&u, s + 4 * i, 4);
        tail |= (uint32_t)((u & 0x7F800000u) == 0x7F800000u);
    }
    const __m256i eq = _mm256_cmpeq_epi32(_mm256_max_epu32(m0, m1), e);
    return tail != 0 || _mm256_movemask_epi8(eq) != 0;
}

#define INPUT16(NAME, EXP, WIDEN_LO, WIDEN_HI, WIDEN1)                                             \
    FN bool NAME(const void *src, size_t n, float *buf)                                            \
    {                                                                                              \
        const uint8_t *s = src;                                                                    \
        const __m256i e = _mm256_set1_epi16((short)(EXP));                                         \
        __m256i m = _mm256_setzero_si256();                                                        \
        size_t i = 0;                                                                              \
        for (; i + 16 <= n; i += 16) {                                                             \
            const __m256i h = _mm256_loadu_si256((const __m256i *)(const void *)(s + 2 * i));      \
            m = _mm256_max_epu16(m, _mm256_and_si256(h, e));                                       \
            _mm256_storeu_ps(buf + i, WIDEN_LO(h));                                                \
            _mm256_storeu_ps(buf + i + 8, WIDEN_HI(h));                                            \
        }                                                                                          \
        uint32_t tail = 0;                                                                         \
        for (; i < n; i++) {                                                                       \
            uint16_t h;                                                                            \
            memcpy(&h, s + 2 * i, 2);                                                              \
            tail |= (uint32_t)((h & (EXP)) == (EXP));                                              \
            buf[i] = WIDEN1(h);                                                                    \
        }                                                                                          \
        const __m256i eq = _mm256_cmpeq_epi16(m, e);                                               \
        return tail != 0 || _mm256_movemask_epi8(eq) != 0;                                         \
    }

#define BF16_LO(h) _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(h)), 16))
#define BF16_HI(h) _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_extracti128_si256(h, 1)), 16))
#define F16_LO(h) _mm256_cvtph_ps(_mm256_castsi256_si128(h))
#define F16_HI(h) _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1))

FN static inline float bf16_one(uint16_t h)
{
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
FN static inline float f16_one(uint16_t h)
{
    return _cvtsh_ss(h);
}

INPUT16(dt_ggml_input_bf16_avx2, 0x7F80, BF16_LO, BF16_HI, bf16_one)
INPUT16(dt_ggml_input_f16_avx2, 0x7C00, F16_LO, F16_HI, f16_one)
#endif
