/* AVX2 kernels on 16-bit lanes ("w": words): the narrowing template with 16 lanes holding
 * float16 or bfloat16 bits (int16 and uint16 rounded to odd into bfloat16), for conversions into
 * 8-, 4-, 2- and 1-bit floats and integers: twice the lanes of the float32-lane kernels in
 * kernels_avx2.c. AVX2 has no variable 16-bit shifts: shifts are products by powers of two,
 * looked up with pshufb, and rounding shifts keep both halves of the product
 * (DT_ROUND_BY_PRODUCT). Compiled for the target through function attributes only. */
#if defined(__x86_64__) && defined(__GNUC__)
#include "kernels.h"
#include "x86_attrs.h"

#include <immintrin.h>
#include <string.h>

#define DT_LANE16 1
#define DT_NO_LOAD32 1
#define DT_LANE16_E8M0 1
#define DT_ROUND_BY_PRODUCT 1
#define VW 16
#define FN DT_TARGET_AVX2
#define NAME(x) x##_avx2w
typedef __m256i V;
typedef __m256i K; /* masks are all-ones lanes */
static FN inline V v_set1(uint32_t c) { return _mm256_set1_epi16((short)(uint16_t)c); }
#define v_and _mm256_and_si256
#define v_andn _mm256_andnot_si256
#define v_or _mm256_or_si256
#define v_add _mm256_add_epi16
#define v_sub _mm256_sub_epi16
#define v_srli(a, n) _mm256_srli_epi16((a), (n))
#define v_slli(a, n) _mm256_slli_epi16((a), (n))
#define v_min _mm256_min_epi16
#define v_max _mm256_max_epi16
#define v_minu _mm256_min_epu16
#define v_mulhi _mm256_mulhi_epu16
#define v_mullo _mm256_mullo_epi16
#define v_avg _mm256_avg_epu16
#define k_gt _mm256_cmpgt_epi16
#define k_eq _mm256_cmpeq_epi16
#define k_and _mm256_and_si256
#define k_or _mm256_or_si256
static FN inline K k_neg(V x) { return _mm256_cmpgt_epi16(_mm256_setzero_si256(), x); }
static FN inline V v_sel(K k, V a, V b) { return _mm256_blendv_epi8(b, a, k); }

/* pshufb's table of powers: byte i is 2^i below 8, 0 from 8 */
static FN inline V pow2_table(void)
{
    return _mm256_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 0, 0, 0, 0, 0, 0, 0, 0,
                            1, 2, 4, 8, 16, 32, 64, -128, 0, 0, 0, 0, 0, 0, 0, 0);
}
/* 2^(16 - sh) (2^-sh for sh <= 0, 0 from -16 down): the low index byte is n = 16 - sh, the
 * high one n - 8; adding 0x60 with unsigned saturation sets bit 7 (pshufb gives 0) in every
 * byte from 32 (and n - 8 below 0) and keeps the low nibble of the others, which pshufb reads:
 * 2^n from the low byte for n mod 16 < 8, from the high one for n mod 16 >= 8 */
static FN inline V v_pow2r(V sh)
{
    /* n * 0x0101 - 0x0800 = (16 - sh) * 0x0101 - 0x0800 = 0x0810 - sh * 0x0101 */
    const V idx = _mm256_adds_epu8(_mm256_sub_epi16(v_set1(0x0810),
                                                    _mm256_mullo_epi16(sh, v_set1(0x0101))),
                                   v_set1(0x6060));
    return _mm256_shuffle_epi8(pow2_table(), idx);
}
/* a << n, 0 for n >= 16: a product by 2^n. With n clamped to 16, the low index byte is n and
 * the high one n - 8; adding 0x70 with unsigned saturation sets bit 7 (pshufb gives 0) in
 * every byte outside [0, 15] (n = 16; n - 8 below 0) and keeps the low nibble of the others. */
static FN inline V v_sllv(V a, V n)
{
    const V c = _mm256_min_epu16(n, v_set1(16));
    const V idx = _mm256_adds_epu8(_mm256_sub_epi16(_mm256_mullo_epi16(c, v_set1(0x0101)),
                                                    v_set1(0x0800)),
                                   v_set1(0x7070));
    return _mm256_mullo_epi16(a, _mm256_shuffle_epi8(pow2_table(), idx));
}
/* the sign bit of every word: the odd bits of the byte mask */
static FN inline uint32_t v_signs(V x)
{
    return _pext_u32((uint32_t)_mm256_movemask_epi8(x), 0xAAAAAAAAu);
}
#define DT_HAVE_SIGNS 1
/* 2-bit codes c packed: c * 0x4080 puts bit 0 of c at bit 7 and bit 1 at bit 15 (c << 7 and
 * c << 14 do not overlap), the byte mask takes bits 7 and 15 of word i as bits 2i, 2i + 1 */
static FN inline uint32_t v_bits2(V c)
{
    return (uint32_t)_mm256_movemask_epi8(_mm256_mullo_epi16(c, v_set1(0x4080)));
}
#define DT_HAVE_BITS2 1
#define DT_HAVE_PDEP 1

/* the lanes hold the 16-bit source's bits: a plain load for both 16-bit formats */
static FN inline V v_load16h(const uint8_t *p) { return _mm256_loadu_si256((const __m256i *)p); }
#define v_load16b v_load16h
/* The even and odd words as 2 x 8 int32 -> float32 (exact: 16-bit integers) -> 16 bfloat16 bits
 * rounded to odd, in order: the upper halves (even ones moved down, odd ones in place) with the
 * lsb set where the lower half (gathered the same way) is not 0. */
static FN inline V bf16odd(__m256i even, __m256i odd)
{
    const __m256i a = _mm256_castps_si256(_mm256_cvtepi32_ps(even));
    const __m256i b = _mm256_castps_si256(_mm256_cvtepi32_ps(odd));
    const __m256i hi = _mm256_blend_epi16(_mm256_srli_epi32(a, 16), b, 0xAA);
    const __m256i lo = _mm256_blend_epi16(a, _mm256_slli_epi32(b, 16), 0xAA);
    return _mm256_or_si256(hi, _mm256_min_epu16(lo, _mm256_set1_epi16(1)));
}
#define HAVE_I16 1
static FN inline V v_loadi16(const uint8_t *p) /* words sign-extended: x_even * 1 + x_odd * 0 */
{
    const __m256i x = _mm256_loadu_si256((const __m256i *)p);
    return bf16odd(_mm256_madd_epi16(x, _mm256_set1_epi32(1)), _mm256_srai_epi32(x, 16));
}
static FN inline V v_loadu16(const uint8_t *p) /* zero-extended: a mask and a logical shift */
{
    const __m256i x = _mm256_loadu_si256((const __m256i *)p);
    return bf16odd(_mm256_and_si256(x, _mm256_set1_epi32(0xFFFF)), _mm256_srli_epi32(x, 16));
}

/* 16 words -> 16 bytes (the codes are below 256) */
static FN inline void v_store8(uint8_t *p, V c)
{
    _mm_storeu_si128((__m128i *)p, _mm_packus_epi16(_mm256_castsi256_si128(c),
                                                    _mm256_extracti128_si256(c, 1)));
}
/* 2 x 16 4-bit codes -> 16 bytes of nibble pairs: packus makes bytes (a0-7 b0-7 | a8-15 b8-15),
 * each word's high code joins its low one in the low byte, pshufb gathers those bytes (quarters
 * a0-7 b0-7 | a8-15 b8-15 in dwords 0, 1 of each 128-bit half), vpermd orders the quarters */
static FN inline __m128i nibbles(V a, V b)
{
    const __m256i w = _mm256_packus_epi16(a, b);
    const __m256i t = _mm256_or_si256(w, _mm256_srli_epi16(w, 4));
    const __m256i even = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1,
                                          0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i q = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(t, even),
                                                  _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    return _mm256_castsi256_si128(q);
}
static FN inline void v_store4(uint8_t *p, V c) { _mm_storel_epi64((__m128i *)p, nibbles(c, c)); }
#define DT_HAVE_STORE4X2 1
static FN inline void v_store4x2(uint8_t *p, V a, V b)
{
    _mm_storeu_si128((__m128i *)p, nibbles(a, b));
}
/* keeps a loaded vector in a register (see kernels_x86.h) */
static FN inline void v_opaque(V *x) { __asm__("" : "+v"(*x)); }
#include "kernels_tmpl.h"

dt_kernel_fn dt_narrow16_pick_avx2(const dt_format *df, const dt_format *sf, const dt_rules *r,
                                   const dt_format **lane)
{
    return narrow_pick_avx2w(df, sf, r, lane);
}
#endif
