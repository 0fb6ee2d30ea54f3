/* Scalar bit-exact conversions shared by the kernels (static inline, so each ISA's file gets
 * its own copy compiled for its target). Every function equals dt_decode + dt_encode. */
#ifndef DTCAST_KERNELS_SCALAR_H
#define DTCAST_KERNELS_SCALAR_H

#include "kernels.h"
#include "round.h" /* dt_round_up, dt_mag_down: the rounding the reference path uses */

#include <string.h>

static inline float dt_f32_of_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline uint32_t dt_bits_of_f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline double dt_f64_of_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}
static inline uint64_t dt_bits_of_f64(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* float16 -> float32 bits, exact; NaN becomes the canonical quiet NaN with its sign. */
static inline uint32_t dt_f16_to_f32(uint32_t h)
{
    const uint32_t s = (h & 0x8000u) << 16, em = h & 0x7FFFu;
    if (em >= 0x7C00u)
        return s | (em == 0x7C00u ? 0x7F800000u : 0x7FC00000u);
    if (em >= 0x0400u) /* normal: exponent+mantissa up 13, rebias 15 -> 127 */
        return s | ((em << 13) + ((127u - 15u) << 23));
    /* subnormal or zero: em * 2^-24 exactly (an exact product: no rounding, no flush) */
    return s | dt_bits_of_f32((float)em * 0x1p-24f);
}

/* bfloat16 -> float32 bits: the top half; NaN canonical. */
static inline uint32_t dt_bf16_to_f32(uint32_t b)
{
    return (b & 0x7FFFu) > 0x7F80u ? ((b & 0x8000u) << 16) | 0x7FC00000u : b << 16;
}

/* float32 -> float64 bits, exact; NaN canonical. */
static inline uint64_t dt_f32_to_f64(uint32_t x)
{
    const uint64_t s = (uint64_t)(x >> 31) << 63;
    const uint32_t a = x & 0x7FFFFFFFu;
    if (a >= 0x7F800000u)
        return s | (a == 0x7F800000u ? UINT64_C(0x7FF0000000000000) : UINT64_C(0x7FF8000000000000));
    if (a >= 0x00800000u) /* normal: shift the fields up 29, rebias 127 -> 1023 */
        return s | (((uint64_t)a << 29) + ((uint64_t)(1023 - 127) << 52));
    return s | dt_bits_of_f64((double)a * 0x1p-149); /* subnormal or zero: exact product */
}

/* float64 bits -> float32 bits rounded to odd (truncate, then set the lsb if anything was lost):
 * rounding that again to a format of <= 22 significant bits equals one direct rounding. Never
 * overflows to Inf (|x| > max gives max, which is odd). NaN -> canonical NaN with the sign. */
static inline uint32_t dt_f64_to_f32_odd(uint64_t x)
{
    const uint32_t s = (uint32_t)(x >> 63) << 31;
    const uint64_t a = x & UINT64_C(0x7FFFFFFFFFFFFFFF);
    const int e = (int)(a >> 52);
    if (e == 0x7FF)
        return s | (a > UINT64_C(0x7FF0000000000000) ? 0x7FC00000u : 0x7F800000u);
    if (e > 1023 + 127)
        return s | 0x7F7FFFFFu;
    const uint64_t m = (a & ((UINT64_C(1) << 52) - 1)) | (e ? UINT64_C(1) << 52 : 0);
    int fe = e - 1023 + 127; /* float32 biased exponent */
    int sh = 29;             /* 52 - 23 */
    if (fe < 1) {            /* float32 subnormal: the quantum is 2^-149 */
        sh += 1 - fe;
        fe = 0;
    }
    if (sh > 60)
        return s | (a ? 1u : 0u);
    uint32_t kept = (uint32_t)(m >> sh);
    const bool lost = (m & ((UINT64_C(1) << sh) - 1)) != 0;
    if (fe)
        kept = (kept & 0x7FFFFFu) | ((uint32_t)fe << 23);
    return s | kept | (lost ? 1u : 0u);
}

#endif
