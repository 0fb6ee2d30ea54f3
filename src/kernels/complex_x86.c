/* The last step of real -> complex chains (compose.c) in vector registers: each real part
 * followed by a zero imaginary part, for parts of 2, 4 and 8 bytes (float16, float32, float64).
 *
 * The same three instructions for every part width w, shown for w = 8 bytes and one 128-bit
 * lane pair (AVX2: a 256-bit register is two lanes; AVX-512 four):
 *
 *   x            = [ a0 a1 | a2 a3 ]          (lanes of 16 bytes)
 *   unpacklo(x,0) = [ a0  0 | a2  0 ]          each lane's low half interleaved with zeros
 *   unpackhi(x,0) = [ a1  0 | a3  0 ]          each lane's high half
 *   out0 = [ lo.lane0 hi.lane0 ] = [ a0 0 a1 0 ]   a lane permute puts them back in order
 *   out1 = [ lo.lane1 hi.lane1 ] = [ a2 0 a3 0 ]
 *
 * The bytes are those of compose.c's scalar step (parts are copied as bits). */
#include "kernels.h"

#if defined(DT_HAVE_X86)
#include <immintrin.h>
#include <string.h>

#include "x86_attrs.h"

/* the elements after the last whole vector, as compose.c's scalar step does them */
static inline void tail(uint8_t *d, const uint8_t *s, size_t n, size_t w)
{
    for (size_t i = 0; i < n; i++) {
        memcpy(d + 2 * w * i, s + w * i, w);
        memset(d + 2 * w * i + w, 0, w);
    }
}

#define AVX2_STEP(W, UNPACK)                                                                    \
    DT_TARGET_AVX2 static void to_complex_avx2_##W(const dt_kernel *k, void *dst,               \
                                                   const void *src, size_t b, size_t e)         \
    {                                                                                           \
        (void)k;                                                                                \
        const uint8_t *s = (const uint8_t *)src + W * b;                                        \
        uint8_t *d = (uint8_t *)dst + 2 * W * b;                                                \
        const size_t n = e - b, per = 32 / W;                                                   \
        size_t i = 0;                                                                           \
        const __m256i z = _mm256_setzero_si256();                                               \
        for (; i + per <= n; i += per) {                                                        \
            const __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(s + W * i));  \
            const __m256i lo = _mm256_unpacklo_##UNPACK(x, z), hi = _mm256_unpackhi_##UNPACK(x, z); \
            _mm256_storeu_si256((__m256i *)(void *)(d + 2 * W * i),                             \
                                _mm256_permute2x128_si256(lo, hi, 0x20));                       \
            _mm256_storeu_si256((__m256i *)(void *)(d + 2 * W * i + 32),                        \
                                _mm256_permute2x128_si256(lo, hi, 0x31));                       \
        }                                                                                       \
        tail(d + 2 * W * i, s + W * i, n - i, W);                                               \
    }
AVX2_STEP(2, epi16)
AVX2_STEP(4, epi32)
AVX2_STEP(8, epi64)

#define AVX512_STEP(W, UNPACK)                                                                  \
    DT_TARGET_AVX512 static void to_complex_avx512_##W(const dt_kernel *k, void *dst,           \
                                                       const void *src, size_t b, size_t e)     \
    {                                                                                           \
        (void)k;                                                                                \
        const uint8_t *s = (const uint8_t *)src + W * b;                                        \
        uint8_t *d = (uint8_t *)dst + 2 * W * b;                                                \
        const size_t n = e - b, per = 64 / W;                                                   \
        size_t i = 0;                                                                           \
        const __m512i z = _mm512_setzero_si512();                                               \
        /* 64-bit indices: lanes 0,1 of lo then of hi, ... (hi's start at 8) */                 \
        const __m512i first = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);                       \
        const __m512i second = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);                    \
        for (; i + per <= n; i += per) {                                                        \
            const __m512i x = _mm512_loadu_si512((const void *)(s + W * i));                    \
            const __m512i lo = _mm512_unpacklo_##UNPACK(x, z), hi = _mm512_unpackhi_##UNPACK(x, z); \
            _mm512_storeu_si512((void *)(d + 2 * W * i), _mm512_permutex2var_epi64(lo, first, hi)); \
            _mm512_storeu_si512((void *)(d + 2 * W * i + 64),                                   \
                                _mm512_permutex2var_epi64(lo, second, hi));                     \
        }                                                                                       \
        tail(d + 2 * W * i, s + W * i, n - i, W);                                               \
    }
AVX512_STEP(2, epi16)
AVX512_STEP(4, epi32)
AVX512_STEP(8, epi64)

dt_kernel_fn dt_to_complex_x86(dt_isa isa, int part_bits)
{
    if (isa >= DT_ISA_AVX512)
        return part_bits == 16   ? to_complex_avx512_2
               : part_bits == 32 ? to_complex_avx512_4
                                 : to_complex_avx512_8;
    if (isa >= DT_ISA_AVX2)
        return part_bits == 16   ? to_complex_avx2_2
               : part_bits == 32 ? to_complex_avx2_4
                                 : to_complex_avx2_8;
    return NULL;
}
#endif
