/* The x86 vector layers of the narrowing template and the x86-only kernels, instantiated per
 * instruction set by kernels_avx2.c (DT_X86_AVX512 undefined) and kernels_avx512.c. */
#include "kernels.h"
#include "scalar.h"
#include "x86_attrs.h"

#include <immintrin.h>
#include <string.h>


#if defined(DT_X86_AVX512)
/* ---- AVX-512: 16 lanes, opmask registers ---------------------------------------------------- */
#define VW 16
#define FN DT_TARGET_AVX512
#define NAME(x) x##_avx512
#define HAVE_F64ODD 1
typedef __m512i V;
typedef __mmask16 K;
static FN inline V v_set1(uint32_t c) { return _mm512_set1_epi32((int)c); }
#define v_and _mm512_and_si512
#define v_andn _mm512_andnot_si512
#define v_or _mm512_or_si512
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
static FN inline uint32_t v_signs(V x) { return _mm512_movepi32_mask(x); }
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
#include "round_odd_avx512.h"
static FN inline V v_load64odd(const uint8_t *p)
{
    const __m256i lo = f64odd8(_mm512_loadu_pd(p)), hi = f64odd8(_mm512_loadu_pd(p + 64));
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}
static FN inline void v_store8(uint8_t *p, V c) { _mm_storeu_si128((__m128i *)p, _mm512_cvtepi32_epi8(c)); }
/* the kernels' own streaming stores (kernels_tmpl.h, DT_HAVE_NT_LINE8): the codes of four
 * vectors, 64 bytes, as one aligned line */
#define DT_HAVE_NT_LINE8 1
static FN inline void v_nt_line8(uint8_t *p, const V *c)
{
    const __m256i lo = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm512_cvtepi32_epi8(c[0])),
                                               _mm512_cvtepi32_epi8(c[1]), 1);
    const __m256i hi = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm512_cvtepi32_epi8(c[2])),
                                               _mm512_cvtepi32_epi8(c[3]), 1);
    _mm512_stream_si512((void *)p, _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1));
}
static FN inline void v_store16(uint8_t *p, V c)
{
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(c));
}
static FN inline void v_store32(uint8_t *p, V c) { _mm512_storeu_si512(p, c); }
/* the upper 16 bits of the 2 x 16 lanes of a and b, in order: odd words of the pair */
static FN inline void v_store_hi16x2(uint8_t *p, V a, V b)
{
    const __m512i odd = _mm512_setr_epi32(0x00030001, 0x00070005, 0x000B0009, 0x000F000D,
                                          0x00130011, 0x00170015, 0x001B0019, 0x001F001D,
                                          0x00230021, 0x00270025, 0x002B0029, 0x002F002D,
                                          0x00330031, 0x00370035, 0x003B0039, 0x003F003D);
    _mm512_storeu_si512(p, _mm512_permutex2var_epi16(a, odd, b));
}
/* nibble pairs: in each 64-bit lane, the odd element's code (bits 32..35) moves to bits 4..7 */
static FN inline void v_store4(uint8_t *p, V c)
{
    _mm_storel_epi64((__m128i *)p, _mm512_cvtepi64_epi8(_mm512_or_si512(c, _mm512_srli_epi64(c, 28))));
}
/* the same for two vectors: byte 0 of every 64-bit lane of a, then of b (vpermt2b) */
#define DT_HAVE_STORE4X2 1
static FN inline void v_store4x2(uint8_t *p, V a, V b)
{
    const __m512i idx = _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0x7870686058504840, 0x3830282018100800);
    const __m512i ta = _mm512_or_si512(a, _mm512_srli_epi64(a, 28));
    const __m512i tb = _mm512_or_si512(b, _mm512_srli_epi64(b, 28));
    _mm_storeu_si128((__m128i *)p, _mm512_castsi512_si128(_mm512_permutex2var_epi8(ta, idx, tb)));
}
#else
/* ---- AVX2: 8 lanes, masks are all-ones lanes ------------------------------------------------ */
#define VW 8
#define FN DT_TARGET_AVX2
#define NAME(x) x##_avx2
typedef __m256i V;
typedef __m256i K;
static FN inline V v_set1(uint32_t c) { return _mm256_set1_epi32((int)c); }
#define v_and _mm256_and_si256
#define v_andn _mm256_andnot_si256
#define v_or _mm256_or_si256
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
static FN inline uint32_t v_signs(V x) { return (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(x)); }
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
/* the upper 16 bits of the 2 x 8 lanes of a and b, in order: packus works per 128-bit lane
 * (a0 b0 a1 b1 in quarters), the permute puts the quarters back in order */
static FN inline void v_store_hi16x2(uint8_t *p, V a, V b)
{
    const __m256i w = _mm256_packus_epi32(_mm256_srli_epi32(a, 16), _mm256_srli_epi32(b, 16));
    _mm256_storeu_si256((__m256i *)p, _mm256_permute4x64_epi64(w, 0xD8));
}
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

/* Makes the compiler keep a loaded vector in a register: gcc otherwise folds the load into
 * several instructions as a memory operand, and on this hardware repeated loads of a line
 * still in flight from DRAM cost up to 1.6x in a streaming loop. */
static FN inline void v_opaque(V *x) { __asm__("" : "+v"(*x)); }
#define DT_HAVE_PDEP 1 /* BMI2 is part of both targets */
#include "kernels_tmpl.h"

/* ---- float32 -> bfloat16, every mode, on the bits: bfloat16 is the top half of float32, so
 * rounding is an integer add of a bias below bit 16 (a carry into the exponent is the next
 * binade, into Inf is IEEE overflow), then the top halves are kept. */
static FN DT_INLINE V NAME(bf16_round)(V x, int mode, int sat)
{
    const V a = v_and(x, v_set1(0x7FFFFFFF));
    const V sgn = v_sub(v_set1(0), v_srli(x, 31)); /* all ones in negative lanes */
    V r;
    switch (mode) {
    case M_RNE: /* 0x7FFF plus the kept lsb: ties go to even */
        r = v_add(x, v_add(v_set1(0x7FFF), v_and(v_srli(x, 16), v_set1(1))));
        break;
    case M_RNA: /* half: ties go away from zero */
        r = v_add(x, v_set1(0x8000));
        break;
    case M_FLOOR: /* the magnitude of a negative lane rounds up: add all dropped-bit ones */
        r = v_add(x, v_and(sgn, v_set1(0xFFFF)));
        break;
    case M_CEIL:
        r = v_add(x, v_andn(sgn, v_set1(0xFFFF)));
        break;
    case M_TRUNC:
        r = x;
        break;
    default: /* odd: inexact (low half nonzero) sets the kept lsb; never reaches Inf */
        r = v_or(x, v_sel(k_eq(v_and(x, v_set1(0xFFFF)), v_set1(0)), v_set1(0), v_set1(0x10000)));
        break;
    }
    if (sat) /* an Inf result (overflow or an Inf input) - 1 in the kept half is max */
        r = v_sel(k_eq(v_and(r, v_set1(0x7FFF0000)), v_set1(0x7F800000)),
                  v_sub(r, v_set1(0x10000)), r);
    /* NaN: the sign, then the canonical quiet NaN 0x7FC0 in the top half */
    return v_sel(k_gt(a, v_set1(0x7F800000)), v_or(v_and(x, v_set1(0x80000000)),
                                                   v_set1(0x7FC00000)), r);
}

static FN DT_INLINE void NAME(bf16_loop)(void *dst, const void *src, size_t begin, size_t end,
                                         int mode, int sat)
{
    const uint8_t *s = (const uint8_t *)src + 4 * begin;
    uint8_t *d = (uint8_t *)dst + 2 * begin;
    const size_t count = end - begin;
    size_t i = 0;
    for (; i + 2 * VW <= count; i += 2 * VW) {
        dt_prefetch_span(s + 4 * i, 8 * VW);
        V x0 = v_load32(s + 4 * i), x1 = v_load32(s + 4 * i + 4 * VW);
        v_opaque(&x0);
        v_opaque(&x1);
        v_store_hi16x2(d + 2 * i, NAME(bf16_round)(x0, mode, sat), NAME(bf16_round)(x1, mode, sat));
    }
    if (i < count) { /* the tail through zeroed blocks (read before written: in place works) */
        uint8_t in[8 * VW] = {0}, out[4 * VW];
        memcpy(in, s + 4 * i, 4 * (count - i));
        v_store_hi16x2(out, NAME(bf16_round)(v_load32(in), mode, sat),
                       NAME(bf16_round)(v_load32(in + 4 * VW), mode, sat));
        memcpy(d + 2 * i, out, 2 * (count - i));
    }
}

#define DT_BF16_FN(mode)                                                                        \
    static FN void NAME(f32_bf16_##mode)(const dt_kernel *k, void *dst, const void *src,       \
                                         size_t b, size_t e)                                    \
    {                                                                                           \
        if (k->r.saturate_float)                                                                \
            NAME(bf16_loop)(dst, src, b, e, mode, 1);                                           \
        else                                                                                    \
            NAME(bf16_loop)(dst, src, b, e, mode, 0);                                           \
    }
DT_BF16_FN(M_RNE)
DT_BF16_FN(M_RNA)
DT_BF16_FN(M_FLOOR)
DT_BF16_FN(M_CEIL)
DT_BF16_FN(M_TRUNC)
DT_BF16_FN(M_ODD)

/* float32 -> bfloat16 in mode m (M_*), or NULL */
static dt_kernel_fn NAME(f32_bf16_pick)(int m)
{
    static const dt_kernel_fn fns[6] = {NAME(f32_bf16_M_RNE), NAME(f32_bf16_M_RNA),
                                        NAME(f32_bf16_M_FLOOR), NAME(f32_bf16_M_CEIL),
                                        NAME(f32_bf16_M_TRUNC), NAME(f32_bf16_M_ODD)};
    return m >= 0 && m < M_MODES ? fns[m] : NULL;
}
