/* The prototypes of fast_kquants.inc's functions (the K-quant quantizers). */
#ifndef DTCAST_GGML_FAST_KQUANTS_H
#define DTCAST_GGML_FAST_KQUANTS_H

#include "ggml.h"

#if defined(__x86_64__) && defined(__GNUC__)
/* fast_kquants_avx512.c */
void dt_ggml_quantize_q4_K_avx512(const float *x, uint8_t *y, size_t nb);
void dt_ggml_quantize_q5_K_avx512(const float *x, uint8_t *y, size_t nb);
void dt_ggml_quantize_q2_K_avx512(const float *x, uint8_t *y, size_t nb);
void dt_ggml_quantize_q6_K_avx512(const float *x, uint8_t *y, size_t nb);
void dt_ggml_quantize_q3_K_avx512(const float *x, uint8_t *y, size_t nb);
void dt_ggml_quantize_q8_K_avx512(const float *x, uint8_t *y, size_t nb);
/* fast_kquants_avx2.c */
void dt_ggml_quantize_q4_K_avx2(const float *x, uint8_t *y, size_t nb);
void dt_ggml_quantize_q5_K_avx2(const float *x, uint8_t *y, size_t nb);
void dt_ggml_quantize_q2_K_avx2(const float *x, uint8_t *y, size_t nb);
void dt_ggml_quantize_q3_K_avx2(const float *x, uint8_t *y, size_t nb);
void dt_ggml_quantize_q6_K_avx2(const float *x, uint8_t *y, size_t nb);
void dt_ggml_quantize_q8_K_avx2(const float *x, uint8_t *y, size_t nb);
#endif

#endif
