/* AVX-512BW kernels on 16-bit lanes ("w": words): the narrowing template with 32 lanes holding
 * float16 or bfloat16 bits as they are, for their conversions into 4- and 8-bit floats and
 * integers (twice the lanes of the float32-lane kernels in kernels_avx512.c). Compiled for the
 * target through function attributes only. */
#if defined(__x86_64__) && defined(__GNUC__)
#include "kernels.h"

#include <immintrin.h>
#include <string.h>

#if defined(__clang__) /* as in kernels_x86.h: clang 14 crashes emitting debug info for these */
#define DT_NODEBUG nodebug,
#else
#define DT_NODEBUG
#endif

#define DT_LANE16 1
#define VW 32
#define FN __attribute__((DT_NODEBUG target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,bmi2")))
#define NAME(x) x##_avx512w
typedef __m512i V;
typedef __mmask32 K;
static FN inline V v_set1(uint32_t c) { return _mm512_set1_epi16((short)(uint16_t)c); }
#define v_and _mm512_and_si512
#define v_andn _mm512_andnot_si512
#define v_or _mm512_or_si512
#define v_add _mm512_add_epi16
#define v_sub _mm512_sub_epi16
#define v_srli(a, n) _mm512_srli_epi16((a), (n))
#define v_slli(a, n) _mm512_slli_epi16((a), (n))
#define v_srlv _mm512_srlv_epi16 /* counts > 15 give 0 */
#define v_sllv _mm512_sllv_epi16
#define v_min _mm512_min_epi16
#define v_max _mm512_max_epi16
#define v_minu _mm512_min_epu16
#define k_gt _mm512_cmpgt_epi16_mask
#define k_eq _mm512_cmpeq_epi16_mask
#define k_neg _mm512_movepi16_mask
static FN inline K k_and(K a, K b) { return (K)(a & b); }
static FN inline K k_or(K a, K b) { return (K)(a | b); }
static FN inline V v_sel(K k, V a, V b) { return _mm512_mask_blend_epi16(k, b, a); }
/* the lanes hold the source's bits: a plain load for both 16-bit formats */
static FN inline V v_load16h(const uint8_t *p) { return _mm512_loadu_si512(p); }
#define v_load16b v_load16h
/* 32 words -> 32 bytes (vpmovwb) */
static FN inline void v_store8(uint8_t *p, V c)
{
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi16_epi8(c));
}
/* nibble pairs: in each 32-bit lane, the odd element's code (bits 16..19) moves to bits 4..7,
 * then vpmovdb keeps byte 0 of every lane */
static FN inline void v_store4(uint8_t *p, V c)
{
    _mm_storeu_si128((__m128i *)p, _mm512_cvtepi32_epi8(_mm512_or_si512(c, _mm512_srli_epi32(c, 12))));
}
/* the same for two vectors: byte 0 of every 32-bit lane of a, then of b (vpermt2b) */
#define DT_HAVE_STORE4X2 1
static FN inline void v_store4x2(uint8_t *p, V a, V b)
{
    const __m512i idx = _mm512_set_epi8(
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 124, 120, 116, 112, 108, 104, 100, 96, 92, 88, 84, 80, 76, 72, 68, 64, 60, 56, 52,
        48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0);
    const __m512i ta = _mm512_or_si512(a, _mm512_srli_epi32(a, 12));
    const __m512i tb = _mm512_or_si512(b, _mm512_srli_epi32(b, 12));
    _mm256_storeu_si256((__m256i *)p, _mm512_castsi512_si256(_mm512_permutex2var_epi8(ta, idx, tb)));
}
/* keeps a loaded vector in a register (see kernels_x86.h) */
static FN inline void v_opaque(V *x) { __asm__("" : "+v"(*x)); }
#include "kernels_tmpl.h"

dt_kernel_fn dt_narrow16_pick_avx512(const dt_format *df, const dt_format *sf, const dt_rules *r)
{
    return narrow_pick_avx512w(df, sf, r);
}
#endif
