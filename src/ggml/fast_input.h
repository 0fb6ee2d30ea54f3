/* The quantizers' input, read once per chunk (api.c): n elements widened to float32 into buf
 * and, in the same pass, whether any of them is NaN or infinite (the chunk then takes api.c's
 * zeroing path). Widening is exact (bfloat16: the bits shifted up; float16: vcvtph2ps). A
 * float32 source is only scanned (buf NULL): the quantizer reads it where it lies.
 *
 *     bfloat16 lane:  s eeeeeeee mmmmmmm                  nonfinite: (h & 0x7F80) == 0x7F80
 *     float16 lane:   s eeeee mmmmmmmmmm                  nonfinite: (h & 0x7C00) == 0x7C00
 *     float32 lane:   s eeeeeeee mmmmmmmmmmmmmmmmmmmmmmm   nonfinite: (u & 0x7F800000) == 0x7F800000
 *
 * The exponent field is all ones exactly where the masked lane equals the mask, which no other
 * masked value exceeds, so one unsigned max over the masked lanes, compared with the mask at the
 * end, answers for the whole chunk (two operations per vector, no dependency on a mask
 * register). fast_input_avx2.c and fast_input_avx512.c; fast.c picks the ISA. */
#ifndef DTCAST_GGML_FAST_INPUT_H
#define DTCAST_GGML_FAST_INPUT_H

#include "dtcast.h"

#include <stdbool.h>
#include <stddef.h>

typedef bool (*dt_ggml_input_fn)(const void *src, size_t n, float *buf);

#if defined(__x86_64__) && defined(__GNUC__)
bool dt_ggml_input_f32_avx2(const void *src, size_t n, float *buf);
bool dt_ggml_input_bf16_avx2(const void *src, size_t n, float *buf);
bool dt_ggml_input_f16_avx2(const void *src, size_t n, float *buf);
bool dt_ggml_input_f32_avx512(const void *src, size_t n, float *buf);
bool dt_ggml_input_bf16_avx512(const void *src, size_t n, float *buf);
bool dt_ggml_input_f16_avx512(const void *src, size_t n, float *buf);
#endif

/* the reader for source type t on the active ISA (float32, bfloat16, float16), else NULL (the
 * portable path: the loader, then a scan) */
dt_ggml_input_fn dt_ggml_input(dtcast_type t);

#endif
