/* The prototypes of fast_simple.inc's functions (the simple types' quantizers (Q4_0 .. Q8_1, MXFP4, TQ*, Q1_0, Q2_0)). */
#ifndef DTCAST_GGML_FAST_SIMPLE_H
#define DTCAST_GGML_FAST_SIMPLE_H

#include "ggml.h"

#if defined(__x86_64__) && defined(__GNUC__)
/* fast_simple_avx2.c and fast_simple_avx512.c: simple.c's bytes exactly */
#define DT_GGML_FAST_SIMPLE_Q(t)                                                                   \
    void dt_ggml_quantize_##t##_avx2(const float *x, uint8_t *y, size_t nb);                       \
    void dt_ggml_quantize_##t##_avx512(const float *x, uint8_t *y, size_t nb);
DT_GGML_FAST_SIMPLE_Q(q4_0)
DT_GGML_FAST_SIMPLE_Q(q4_1)
DT_GGML_FAST_SIMPLE_Q(q5_0)
DT_GGML_FAST_SIMPLE_Q(q5_1)
DT_GGML_FAST_SIMPLE_Q(q8_0)
DT_GGML_FAST_SIMPLE_Q(q8_1)
DT_GGML_FAST_SIMPLE_Q(mxfp4)
DT_GGML_FAST_SIMPLE_Q(nvfp4)
DT_GGML_FAST_SIMPLE_Q(tq1_0)
DT_GGML_FAST_SIMPLE_Q(tq2_0)
DT_GGML_FAST_SIMPLE_Q(q1_0)
DT_GGML_FAST_SIMPLE_Q(q2_0)
#undef DT_GGML_FAST_SIMPLE_Q
#endif

#endif
