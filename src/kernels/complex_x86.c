/* The complex steps of compose.c's chains in vector registers, for parts of 2, 4 and 8 bytes
 * (float16, float32, float64): the last step of real -> complex (each real part followed by a
 * zero imaginary part) and the first of complex -> real (the real parts).
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

/* ---- the first step of complex -> real chains: the real parts, every other part ----------
 *
 *   x0 = [ r0 i0 r1 i1 ... ]  x1 = [ r8 i8 r9 i9 ... ]  (AVX-512, w = 8 bytes)
 *   vpermt2q(x0, {0, 2, 4, .., 14}, x1) = [ r0 r1 .. r7 ]
 *
 * AVX2 picks the even parts within each 128-bit lane (unpacklo / shufps / pshufb), then puts
 * the lanes in order with vpermq. */
static inline void real_tail(uint8_t *d, const uint8_t *s, size_t n, size_t w)
{
    for (size_t i = 0; i < n; i++)
        memcpy(d + w * i, s + 2 * w * i, w);
}

#define REAL512(W, PERM, IDX)                                                                   \
    DT_TARGET_AVX512 static void real_part_avx512_##W(const dt_kernel *k, void *dst,            \
                                                      const void *src, size_t b, size_t e)      \
    {                                                                                           \
        (void)k;                                                                                \
        const uint8_t *s = (const uint8_t *)src + 2 * W * b;                                    \
        uint8_t *d = (uint8_t *)dst + W * b;                                                    \
        const size_t n = e - b, per = 64 / W;                                                   \
        size_t i = 0;                                                                           \
        const __m512i idx = IDX;                                                                \
        for (; i + per <= n; i += per) {                                                        \
            const __m512i x0 = _mm512_loadu_si512((const void *)(s + 2 * W * i));              \
            const __m512i x1 = _mm512_loadu_si512((const void *)(s + 2 * W * i + 64));         \
            _mm512_storeu_si512((void *)(d + W * i), PERM(x0, idx, x1));                       \
        }                                                                                       \
        real_tail(d + W * i, s + 2 * W * i, n - i, W);                                          \
    }
REAL512(8, _mm512_permutex2var_epi64, _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14))
REAL512(4, _mm512_permutex2var_epi32,
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30))
REAL512(2, _mm512_permutex2var_epi16,
        _mm512_setr_epi32(0x00020000, 0x00060004, 0x000A0008, 0x000E000C, 0x00120010, 0x00160014,
                          0x001A0018, 0x001E001C, 0x00220020, 0x00260024, 0x002A0028, 0x002E002C,
                          0x00320030, 0x00360034, 0x003A0038, 0x003E003C))

/* AVX2: the even parts of a then b per 128-bit lane, then the lanes in order (vpermq 0xD8) */
DT_TARGET_AVX2 static inline __m256i even8(__m256i a, __m256i b)
{
    return _mm256_unpacklo_epi64(a, b);
}
DT_TARGET_AVX2 static inline __m256i even4(__m256i a, __m256i b)
{
    return _mm256_castps_si256(_mm256_shuffle_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), 0x88));
}
DT_TARGET_AVX2 static inline __m256i even2(__m256i a, __m256i b)
{
    const __m256i m = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1,
                                       0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1);
    return _mm256_unpacklo_epi64(_mm256_shuffle_epi8(a, m), _mm256_shuffle_epi8(b, m));
}
#define REAL256(W, EVEN)                                                                        \
    DT_TARGET_AVX2 static void real_part_avx2_##W(const dt_kernel *k, void *dst,                \
                                                  const void *src, size_t b, size_t e)          \
    {                                                                                           \
        (void)k;                                                                                \
        const uint8_t *s = (const uint8_t *)src + 2 * W * b;                                    \
        uint8_t *d = (uint8_t *)dst + W * b;                                                    \
        const size_t n = e - b, per = 32 / W;                                                   \
        size_t i = 0;                                                                           \
        for (; i + per <= n; i += per) {                                                        \
            const __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)(s + 2 * W * i)); \
            const __m256i x1 =                                                                  \
                _mm256_loadu_si256((const __m256i *)(const void *)(s + 2 * W * i + 32));       \
            _mm256_storeu_si256((__m256i *)(void *)(d + W * i),                                 \
                                _mm256_permute4x64_epi64(EVEN(x0, x1), 0xD8));                  \
        }                                                                                       \
        real_tail(d + W * i, s + 2 * W * i, n - i, W);                                          \
    }
REAL256(8, even8)
REAL256(4, even4)
REAL256(2, even2)

dt_kernel_fn dt_real_part_x86(dt_isa isa, int part_bits)
{
    if (isa >= DT_ISA_AVX512)
        return part_bits == 16   ? real_part_avx512_2
               : part_bits == 32 ? real_part_avx512_4
                                 : real_part_avx512_8;
    if (isa >= DT_ISA_AVX2)
        return part_bits == 16   ? real_part_avx2_2
               : part_bits == 32 ? real_part_avx2_4
                                 : real_part_avx2_8;
    return NULL;
}

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
