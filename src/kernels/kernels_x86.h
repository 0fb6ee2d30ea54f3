/* The x86 vector layers of the narrowing template and the x86-only kernels, instantiated per
 * instruction set by kernels_avx2.c (DT_X86_AVX512 undefined) and kernels_avx512.c. */
#include "kernels.h"
#include "scalar.h"

#include <immintrin.h>
#include <string.h>

/* clang 14 crashes in instruction selection on some of these functions when it emits debug
 * information for them (-g): they get none under clang. */
#if defined(__clang__)
#define DT_NODEBUG nodebug,
#else
#define DT_NODEBUG
#endif

#if defined(DT_X86_AVX512)
/* ---- AVX-512: 16 lanes, opmask registers ---------------------------------------------------- */
#define VW 16
#define FN __attribute__((DT_NODEBUG target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,f16c,fma,bmi2")))
#define NAME(x) x##_avx512
#define HAVE_F64ODD 1
typedef __m512i V;
typedef __mmask16 K;
static FN inline V v_set1(uint32_t c) { return _mm512_set1_epi32((int)c); }
#define v_and _mm512_and_si512
#define v_or _mm512_or_si512
#define v_xor _mm512_xor_si512
#define v_add _mm512_add_epi32
#define v_sub _mm512_sub_epi32
#define v_srli(a, n) _mm512_srli_epi32((a), (n))
#define v_slli(a, n) _mm512_slli_epi32((a), (n))
#define v_srlv _mm512_srlv_epi32
#define v_sllv _mm512_sllv_epi32
#define v_min _mm512_min_epi32
#define v_max _mm512_max_epi32
#define v_minu _mm512_min_epu32
#define k_gt _mm512_cmpgt_epi32_mask
#define k_eq _mm512_cmpeq_epi32_mask
#define k_neg _mm512_movepi32_mask
static FN inline K k_and(K a, K b) { return (K)(a & b); }
static FN inline K k_or(K a, K b) { return (K)(a | b); }
static FN inline V v_sel(K k, V a, V b) { return _mm512_mask_blend_epi32(k, b, a); }
static FN inline V v_load32(const uint8_t *p) { return _mm512_loadu_si512(p); }
static FN inline V v_load16h(const uint8_t *p)
{
    return _mm512_castps_si512(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)));
}
static FN inline V v_load16b(const uint8_t *p) /* bfloat16 is the top half of float32 */
{
    return _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)), 16);
}
/* 8 doubles -> float32 rounded to odd: truncate, then set the lsb where the conversion back
 * differs (inexact; NaN lanes too, which stay NaN) */
static FN inline __m256i f64odd8(__m512d x)
{
    const __m256 t = _mm512_cvt_roundpd_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __mmask8 lost = _mm512_cmp_pd_mask(_mm512_cvtps_pd(t), x, _CMP_NEQ_UQ);
    return _mm256_mask_or_epi32(_mm256_castps_si256(t), lost, _mm256_castps_si256(t),
                                _mm256_set1_epi32(1));
}
static FN inline V v_load64odd(const uint8_t *p)
{
    const __m256i lo = f64odd8(_mm512_loadu_pd(p)), hi = f64odd8(_mm512_loadu_pd(p + 64));
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}
static FN inline void v_store8(uint8_t *p, V c) { _mm_storeu_si128((__m128i *)p, _mm512_cvtepi32_epi8(c)); }
static FN inline void v_store16(uint8_t *p, V c)
{
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(c));
}
static FN inline void v_store32(uint8_t *p, V c) { _mm512_storeu_si512(p, c); }
/* nibble pairs: in each 64-bit lane, the odd element's code (bits 32..35) moves to bits 4..7 */
static FN inline void v_store4(uint8_t *p, V c)
{
    _mm_storel_epi64((__m128i *)p, _mm512_cvtepi64_epi8(_mm512_or_si512(c, _mm512_srli_epi64(c, 28))));
}
#else
/* ---- AVX2: 8 lanes, masks are all-ones lanes ------------------------------------------------ */
#define VW 8
#define FN __attribute__((DT_NODEBUG target("avx2,f16c,fma,bmi2")))
#define NAME(x) x##_avx2
typedef __m256i V;
typedef __m256i K;
static FN inline V v_set1(uint32_t c) { return _mm256_set1_epi32((int)c); }
#define v_and _mm256_and_si256
#define v_or _mm256_or_si256
#define v_xor _mm256_xor_si256
#define v_add _mm256_add_epi32
#define v_sub _mm256_sub_epi32
#define v_srli(a, n) _mm256_srli_epi32((a), (n))
#define v_slli(a, n) _mm256_slli_epi32((a), (n))
#define v_srlv _mm256_srlv_epi32
#define v_sllv _mm256_sllv_epi32
#define v_min _mm256_min_epi32
#define v_max _mm256_max_epi32
#define v_minu _mm256_min_epu32
#define k_gt _mm256_cmpgt_epi32
#define k_eq _mm256_cmpeq_epi32
#define k_and _mm256_and_si256
#define k_or _mm256_or_si256
static FN inline K k_neg(V x) { return _mm256_srai_epi32(x, 31); }
static FN inline V v_sel(K k, V a, V b) { return _mm256_blendv_epi8(b, a, k); }
static FN inline V v_load32(const uint8_t *p) { return _mm256_loadu_si256((const __m256i *)p); }
static FN inline V v_load16h(const uint8_t *p)
{
    return _mm256_castps_si256(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)));
}
static FN inline V v_load16b(const uint8_t *p)
{
    return _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16);
}
/* byte k of every 32-bit lane (k = 0) gathered to the low bytes of each 128-bit half */
static FN inline void v_store8(uint8_t *p, V c)
{
    const __m256i sel = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                         0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i b = _mm256_shuffle_epi8(c, sel);
    _mm_storel_epi64((__m128i *)p, _mm_unpacklo_epi32(_mm256_castsi256_si128(b),
                                                      _mm256_extracti128_si256(b, 1)));
}
static FN inline void v_store16(uint8_t *p, V c)
{
    const __m256i sel = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1,
                                         0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i b = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(c, sel), 0x08);
    _mm_storeu_si128((__m128i *)p, _mm256_castsi256_si128(b));
}
static FN inline void v_store32(uint8_t *p, V c) { _mm256_storeu_si256((__m256i *)p, c); }
static FN inline void v_store4(uint8_t *p, V c)
{
    const __m256i t = _mm256_or_si256(c, _mm256_srli_epi64(c, 28)); /* pairs -> byte 0 of qwords */
    const __m256i sel = _mm256_setr_epi8(0, 8, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                         0, 8, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i b = _mm256_shuffle_epi8(t, sel);
    const int v = _mm_cvtsi128_si32(_mm_unpacklo_epi16(_mm256_castsi256_si128(b),
                                                       _mm256_extracti128_si256(b, 1)));
    memcpy(p, &v, 4);
}
#endif

#include "kernels_tmpl.h"
