/* Narrowing to odd with AVX-512 (the including file defines FN): truncate, then set the lsb
 * where converting back differs (inexact; NaN lanes too, which stay NaN). A result rounded to
 * odd with at least two bits more than a later target rounds to that target exactly as the
 * original value would, in every mode. */
#ifndef DT_ROUND_ODD_AVX512_H
#define DT_ROUND_ODD_AVX512_H
#include <immintrin.h>

/* 8 doubles -> float32 bits rounded to odd */
static FN inline __m256i f64odd8(__m512d x)
{
    const __m256 t = _mm512_cvt_roundpd_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __mmask8 lost = _mm512_cmp_pd_mask(_mm512_cvtps_pd(t), x, _CMP_NEQ_UQ);
    return _mm256_mask_or_epi32(_mm256_castps_si256(t), lost, _mm256_castps_si256(t),
                                _mm256_set1_epi32(1));
}

#endif
