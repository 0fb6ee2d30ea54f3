/* The scalar steps of the simple types' quantizers that the reference (simple.c) and the fast
 * paths (fast_simple_avx2.c, fast_simple_avx512.c, through fast_simple_common.h) share: the
 * float -> integer conversions as x86-64 builds of ggml perform them, and MXFP4's shared
 * exponent and scale. Plain C; compiled inside each including file. */
#ifndef DTCAST_GGML_SIMPLE_SCALAR_H
#define DTCAST_GGML_SIMPLE_SCALAR_H

#include "ggml.h"

#include <math.h>

/* (int32_t)v as x86-64's cvttss2si computes it */
static inline int32_t cvtt32(float v)
{
    if (!(v >= -2147483648.f && v < 2147483648.f))
        return INT32_MIN;
    return (int32_t)v;
}
/* (int8_t)v / (uint8_t)v as x86-64 builds compute them: cvttss2si, then the low byte */
static inline int cvtt_i8(float v)
{
    const int b = (int)((uint32_t)cvtt32(v) & 0xFFu);
    return b >= 128 ? b - 256 : b;
}
static inline unsigned cvtt_u8(float v)
{
    return (uint32_t)cvtt32(v) & 0xFFu;
}

/* 2^(e - 128) (ggml's e8m0_to_fp32_half): e = 0 and 1 are binary32 subnormals, 0xFF is 2^127 */
static inline float e8m0_half(unsigned e)
{
    return dt_ggml_f32_of(e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23);
}

/* floor(log2f(a)) for finite a > 0, log2 correctly rounded to binary32 (what ggml's log2f and
 * numpy's give near powers of two, where it matters): a = 2^k * f with f in [1, 2) has
 * log2 a = k + log2 f, which rounds up to k + 1 when f is a few ulps below 2. The double sum is
 * within 2^-52 of the exact log2, far inside the distance of any binary32 input's log2 from a
 * binary32 rounding boundary, so its rounding to float is the correct one. */
static inline float floor_log2(float a)
{
    int e;
    const double f = frexp((double)a, &e); /* a = f * 2^e, f in [0.5, 1) */
    const double t = (double)(e - 1) + log2(2.0 * f);
    return floorf((float)t);
}

/* MXFP4's exponent byte of a block of largest magnitude amax: floor(log2 amax) - 2 (e2m1's
 * largest exponent), biased by 127; below 2^-125 it is negative and keeps its low 8 bits, as
 * x86-64 builds store it; 0 for amax = 0 */
static inline unsigned mx_exponent_ref(float amax)
{
    return amax > 0.0f ? cvtt_u8(floor_log2(amax) - 2 + 127) : 0;
}

#endif /* DTCAST_GGML_SIMPLE_SCALAR_H */
