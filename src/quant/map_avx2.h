/* The per-block map steps of the quantization (quant.h DT_QM_*) on 8 lanes of AVX2: the same
 * float32 results as the scalar formulas (one IEEE operation each, NaN kept). Included by the
 * AVX2 steps (simd.c) and the fused kernels (fused_quant_avx2.c) only. */
#ifndef DTCAST_QUANT_MAP_AVX2_H
#define DTCAST_QUANT_MAP_AVX2_H

#include "../kernels/x86_attrs.h"
#include "quant.h"

#include <immintrin.h>

/* dt_mul_nan_first on 8 lanes: a's NaN (quieted) where a is NaN */
DT_TARGET_AVX2 static inline __m256 dt_mul_nan_first_avx2(__m256 a, __m256 b)
{
    const __m256 qa = _mm256_or_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x00400000)));
    return _mm256_blendv_ps(_mm256_mul_ps(a, b), qa, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
}

/* op (DT_QM_*) of a with the constant c */
DT_TARGET_AVX2 static inline __m256 dt_map8_avx2(int op, __m256 a, __m256 cv)
{
    __m256 t;
    switch (op) {
    case DT_QM_MO_SCALE: /* max_ps(k, t) gives t when t is NaN */
        t = _mm256_max_ps(_mm256_set1_ps(0x1p-9f), _mm256_div_ps(a, cv));
        return _mm256_blendv_ps(t, _mm256_set1_ps(1.0f),
                                _mm256_cmp_ps(a, _mm256_setzero_ps(), _CMP_EQ_OQ));
    case DT_QM_TA_SCALE:
        t = _mm256_div_ps(_mm256_div_ps(a, _mm256_set1_ps(6.0f)), cv);
        return _mm256_min_ps(_mm256_set1_ps(448.0f), _mm256_max_ps(_mm256_set1_ps(0x1p-6f), t));
    case DT_QM_CT_SCALE:
        t = _mm256_mul_ps(cv, _mm256_div_ps(a, _mm256_set1_ps(6.0f)));
        return _mm256_min_ps(_mm256_set1_ps(448.0f), _mm256_max_ps(_mm256_set1_ps(-448.0f), t));
    case DT_QM_MUL: return dt_mul_nan_first_avx2(a, cv);
    case DT_QM_RDIV: return _mm256_div_ps(cv, a);
    default: return _mm256_div_ps(a, cv);
    }
}

#endif /* DTCAST_QUANT_MAP_AVX2_H */
