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

/* fast_dequant_avx512bf16.c: nb blocks at x straight to bfloat16 at y (AVX-512 + AVX512-BF16),
 * the bits of api.c's float32 path (the value rounded to odd by its residual, then to nearest
 * even); tests/test_ggml_fast.c compares each entry with the reference path */
typedef void (*dt_ggml_bf16_fn)(const uint8_t *x, uint16_t *y, size_t nb);
typedef struct dt_ggml_bf16_entry {
    uint32_t code;
    dt_ggml_bf16_fn fn;
} dt_ggml_bf16_entry;
extern const dt_ggml_bf16_entry dt_ggml_bf16_list[];
extern const size_t dt_ggml_bf16_count;
/* code's entry when the selection allows it (AVX-512 active, the CPU has AVX512-BF16, not
 * dt_quant_simple), else NULL */
dt_ggml_bf16_fn dt_ggml_bf16_dequantizer(uint32_t code);
#endif

#endif
