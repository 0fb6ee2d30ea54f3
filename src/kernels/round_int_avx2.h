/* Rounding 8 floats to integral floats in each rounding mode with AVX2 (the including file
 * defines FN and includes kernels.h for M_*): the first step of every float32 / float16 /
 * bfloat16 -> integer kernel, before a truncating conversion. |x| >= 2^23 is integral already,
 * so the +-1 steps below act only under it, where they are exact. NaN stays NaN and +-Inf
 * stays +-Inf in every mode. */
#ifndef DT_ROUND_INT_AVX2_H
#define DT_ROUND_INT_AVX2_H
#include <immintrin.h>

static FN DT_INLINE __m256 round_int_ps(__m256 x, int mode)
{
    const __m256 sign = _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u));
    const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
    switch (mode) {
    case M_RNE: return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    case M_FLOOR: return _mm256_round_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    case M_CEIL: return _mm256_round_ps(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    case M_TRUNC: return _mm256_round_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    case M_RNA: { /* a dropped fraction x - t (exact) of at least 1/2: one away */
        const __m256 t = _mm256_round_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __m256 up = _mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_sub_ps(x, t)), half,
                                        _CMP_GE_OQ); /* Inf - Inf, NaN: false */
        return _mm256_add_ps(t, _mm256_and_ps(up, _mm256_or_ps(_mm256_and_ps(x, sign), one)));
    }
    default: { /* odd: floor | 1 when inexact (the odd neighbour in two's complement of either
                * sign): floor + 1 when inexact and floor is even (half of it integral) */
        const __m256 f = _mm256_round_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        const __m256 h = _mm256_mul_ps(f, half);
        const __m256 even =
            _mm256_cmp_ps(_mm256_round_ps(h, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), h, _CMP_EQ_OQ);
        const __m256 grow = _mm256_and_ps(_mm256_cmp_ps(f, x, _CMP_NEQ_OQ), even);
        return _mm256_add_ps(f, _mm256_and_ps(grow, one));
    }
    }
}

#endif
