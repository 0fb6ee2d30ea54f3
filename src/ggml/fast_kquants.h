/* The prototypes of fast_kquants.inc's functions (the K-quant quantizers). */
#ifndef DTCAST_GGML_FAST_KQUANTS_H
#define DTCAST_GGML_FAST_KQUANTS_H

#include "ggml.h"

#if defined(__x86_64__) && defined(__GNUC__)
/* fast_kquants_avx2.c and fast_kquants_avx512.c: kquants.c's bytes exactly */
#define DT_GGML_FAST_KQUANTS_Q(t)                                                                  \
    void dt_ggml_quantize_##t##_avx2(const float *x, uint8_t *y, size_t nb);                       \
    void dt_ggml_quantize_##t##_avx512(const float *x, uint8_t *y, size_t nb);
DT_GGML_FAST_KQUANTS_Q(q2_K)
DT_GGML_FAST_KQUANTS_Q(q3_K)
DT_GGML_FAST_KQUANTS_Q(q4_K)
DT_GGML_FAST_KQUANTS_Q(q5_K)
DT_GGML_FAST_KQUANTS_Q(q6_K)
DT_GGML_FAST_KQUANTS_Q(q8_K)
#undef DT_GGML_FAST_KQUANTS_Q
#endif

#endif
