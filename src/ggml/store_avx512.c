/* float32 block results to bfloat16 in one pass (api.c's dequantization to bfloat16 on AVX-512):
 * each value rounded to odd by its residual (when the type has one), then to nearest even. The
 * same bits as api.c's portable steps (round_odd_all, then the library's float32 -> bfloat16
 * conversion: NaN -> sign | 0x7FC0, subnormals kept, overflow to infinity); tests/test_ggml.c
 * checks both against dtcast_convert of the exact float64. */
#include "ggml.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "../kernels/x86_attrs.h"

#include <immintrin.h>

/* 16 lanes of y rounded to odd by lo:
 *
 *   step = (lo != 0) & !(y & 1)         lo's bits ^ y's bits: sign bit set = toward zero
 *   y += step ? (signs differ ? -1 : +1) : 0     (the bits, as integers) */
DT_TARGET_AVX512 static DT_INLINE __m512i odd16(__m512 y, __m512 lo)
{
    const __m512i u = _mm512_castps_si512(y), l = _mm512_castps_si512(lo);
    const __mmask16 m = _mm512_cmp_ps_mask(lo, _mm512_setzero_ps(), _CMP_NEQ_UQ) &
                        _mm512_testn_epi32_mask(u, _mm512_set1_epi32(1));
    const __m512i delta =
        _mm512_or_si512(_mm512_srai_epi32(_mm512_xor_si512(u, l), 31), _mm512_set1_epi32(1));
    return _mm512_mask_add_epi32(u, m, u, delta);
}

/* float32 bits -> bfloat16, 16 lanes:
 *
 *   s eeeeeeee mmmmmmm|mmmmmmmmmmmmmmmm   + 0x7FFF + (bit 16), >> 16: nearest even
 *   NaN: sign | 0x7FC0 */
DT_TARGET_AVX512 static DT_INLINE __m256i bf16x16(__m512i u)
{
    const __m512i one = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    const __m512i r = _mm512_srli_epi32(
        _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)), one), 16);
    const __mmask16 nan = _mm512_cmp_ps_mask(_mm512_castsi512_ps(u), _mm512_castsi512_ps(u),
                                             _CMP_UNORD_Q);
    const __m512i q = _mm512_or_si512(
        _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x8000)),
        _mm512_set1_epi32(0x7FC0));
    return _mm512_cvtepi32_epi16(_mm512_mask_mov_epi32(r, nan, q));
}

DT_TARGET_AVX512 void dt_ggml_store_bf16_avx512(uint16_t *o, const float *v, const float *lo,
                                                size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 y = _mm512_loadu_ps(v + i);
        const __m512i u = lo ? odd16(y, _mm512_loadu_ps(lo + i)) : _mm512_castps_si512(y);
        _mm256_storeu_si256((__m256i *)(void *)(o + i), bf16x16(u));
    }
    if (i < n) {
        const __mmask16 k = (__mmask16)((1u << (n - i)) - 1u);
        const __m512 y = _mm512_maskz_loadu_ps(k, v + i);
        const __m512i u = lo ? odd16(y, _mm512_maskz_loadu_ps(k, lo + i)) : _mm512_castps_si512(y);
        _mm256_mask_storeu_epi16(o + i, k, bf16x16(u));
    }
}
#endif
