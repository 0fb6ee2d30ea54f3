/* The prototypes of fast_dequant.inc's functions (the dequantizers). */
#ifndef DTCAST_GGML_FAST_DEQUANT_H
#define DTCAST_GGML_FAST_DEQUANT_H

#include "ggml.h"

#if defined(__x86_64__) && defined(__GNUC__)
/* fast_dequant_avx512.c and fast_dequant_avx2.c: dt_ggml_dequantize_<type>_<isa> */
#define DT_GGML_FD(t)                                                                            \
    void dt_ggml_dequantize_##t##_avx512(const uint8_t *x, float *y, float *lo, size_t nb);    \
    void dt_ggml_dequantize_##t##_avx2(const uint8_t *x, float *y, float *lo, size_t nb);
DT_GGML_FD(q4_0) DT_GGML_FD(q4_1) DT_GGML_FD(q5_0) DT_GGML_FD(q5_1) DT_GGML_FD(q8_0)
DT_GGML_FD(q8_1) DT_GGML_FD(mxfp4) DT_GGML_FD(nvfp4) DT_GGML_FD(tq1_0) DT_GGML_FD(tq2_0)
DT_GGML_FD(q1_0) DT_GGML_FD(q2_0) DT_GGML_FD(q2_K) DT_GGML_FD(q3_K) DT_GGML_FD(q4_K)
DT_GGML_FD(q5_K) DT_GGML_FD(q6_K) DT_GGML_FD(q8_K) DT_GGML_FD(iq2_xxs) DT_GGML_FD(iq2_xs)
DT_GGML_FD(iq2_s) DT_GGML_FD(iq3_xxs) DT_GGML_FD(iq3_s) DT_GGML_FD(iq1_s) DT_GGML_FD(iq1_m)
DT_GGML_FD(iq4_nl) DT_GGML_FD(iq4_xs)
#undef DT_GGML_FD
#endif

#endif
