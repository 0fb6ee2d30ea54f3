/* AVX-512BW kernels on 16-bit lanes ("w": words): the narrowing template with 32 lanes holding
 * float16 or bfloat16 bits (float32 and float64 rounded to odd into bfloat16), for conversions
 * into 4- and 8-bit floats and 1-, 2-, 4- and 8-bit integers (twice the lanes of the float32-lane kernels in
 * kernels_avx512.c). Compiled for the target through function attributes only. */
#if defined(__x86_64__) && defined(__GNUC__)
#include "kernels.h"
#include "x86_attrs.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

#define DT_LANE16 1
#define VW 32
#define FN DT_TARGET_AVX512
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
/* the lanes hold the 16-bit source's bits: a plain load for both 16-bit formats */
static FN inline V v_load16h(const uint8_t *p) { return _mm512_loadu_si512(p); }
#define v_load16b v_load16h
#include "round_odd_avx512.h"
/* 2 x 16 float32 bits -> 32 bfloat16 bits rounded to odd: the upper halves, in order (vpermt2w
 * of the odd words), with the lsb set where the lower half was not zero */
static FN inline V bf16odd32(__m512i a, __m512i b)
{
    const __m512i odd = _mm512_setr_epi32(0x00030001, 0x00070005, 0x000B0009, 0x000F000D,
                                          0x00130011, 0x00170015, 0x001B0019, 0x001F001D,
                                          0x00230021, 0x00270025, 0x002B0029, 0x002F002D,
                                          0x00330031, 0x00370035, 0x003B0039, 0x003F003D);
    const __m512i low = _mm512_set1_epi32(0xFFFF);
    const __mmask32 lost = _mm512_kunpackw(_mm512_test_epi32_mask(b, low),
                                           _mm512_test_epi32_mask(a, low));
    const __m512i h = _mm512_permutex2var_epi16(a, odd, b);
    return _mm512_mask_mov_epi16(h, lost, _mm512_or_si512(h, _mm512_set1_epi16(1)));
}
static FN inline V v_load32(const uint8_t *p)
{
    return bf16odd32(_mm512_loadu_si512(p), _mm512_loadu_si512(p + 64));
}
/* 32 float64 -> float32 rounded to odd -> bfloat16 rounded to odd (the same as one rounding to
 * odd into bfloat16: float32 keeps more than two bits beyond it, over a wider range) */
#define HAVE_F64ODD 1
static FN inline __m512i f64odd16(const uint8_t *p)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(f64odd8(_mm512_loadu_pd(p))),
                              f64odd8(_mm512_loadu_pd(p + 64)), 1);
}
static FN inline V v_load64odd(const uint8_t *p) { return bf16odd32(f64odd16(p), f64odd16(p + 128)); }
/* 32 words -> 32 bytes (vpmovwb) */
static FN inline void v_store8(uint8_t *p, V c)
{
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi16_epi8(c));
}
/* packed 1- and 2-bit targets: the sign bit of every word (vpmovw2m), and the 2-bit codes
 * packed: c * 0x4080 puts bit 0 of a code at bit 7 of its word and bit 1 at bit 15 (c << 7 and
 * c << 14 do not overlap), and vpmovb2m takes bits 7 and 15 of word i as bits 2i and 2i + 1
 *
 *   word i:  bit 15: code bit 1   bit 7: code bit 0   ->   mask bits 2i + 1, 2i */
static FN inline uint32_t v_signs(V x) { return (uint32_t)_mm512_movepi16_mask(x); }
#define DT_HAVE_SIGNS 1
static FN inline uint64_t v_bits2(V c)
{
    return (uint64_t)_mm512_movepi8_mask(_mm512_mullo_epi16(c, v_set1(0x4080)));
}
#define DT_HAVE_BITS2 1
/* the kernels' own streaming stores (kernels_tmpl.h, DT_HAVE_NT_LINE8): the codes of two
 * vectors, 64 bytes, as one aligned line */
#define DT_HAVE_NT_LINE8 1
static FN inline void v_nt_line8(uint8_t *p, const V *c)
{
    _mm512_stream_si512((void *)p, _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi16_epi8(c[0])),
                                                      _mm512_cvtepi16_epi8(c[1]), 1));
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

dt_kernel_fn dt_narrow16_pick_avx512(const dt_format *df, const dt_format *sf, const dt_rules *r,
                                     const dt_format **lane)
{
    return narrow_pick_avx512w(df, sf, r, lane);
}
#endif
