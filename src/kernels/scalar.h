/* Scalar bit-exact conversions shared by the kernels (static inline, so each ISA's file gets
 * its own copy compiled for its target). Every function equals dt_decode + dt_encode. */
#ifndef DTCAST_KERNELS_SCALAR_H
#define DTCAST_KERNELS_SCALAR_H

#include "kernels.h"

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

/* Whether mode rounds a magnitude with these lsb/round/sticky bits up (as exact.c does). */
static inline bool dt_round_up(dtcast_round mode, bool neg, bool lsb, bool half, bool sticky)
{
    switch (mode) {
    case DTCAST_ROUND_RNA:
        return half;
    case DTCAST_ROUND_FLOOR:
        return neg && (half || sticky);
    case DTCAST_ROUND_CEIL:
        return !neg && (half || sticky);
    case DTCAST_ROUND_TRUNC:
        return false;
    case DTCAST_ROUND_ODD:
        return (half || sticky) && !lsb;
    default:
        return half && (sticky || lsb);
    }
}

static inline bool dt_mag_down(dtcast_round mode, bool neg)
{
    return mode == DTCAST_ROUND_TRUNC || mode == DTCAST_ROUND_ODD ||
           (mode == DTCAST_ROUND_FLOOR && !neg) || (mode == DTCAST_ROUND_CEIL && neg);
}

/* An unsigned magnitude mag (sign neg) -> float32 (man 23) or float64 (man 52) bits, rounded
 * once per mode. ebits/man/bias describe the target; only used for integer sources. */
static inline uint64_t dt_uint_to_float(uint64_t mag, bool neg, int man, int bias,
                                        const dt_rules *r, int bits)
{
    const uint64_t sign = neg ? UINT64_C(1) << (bits - 1) : 0;
    if (!mag)
        return sign;
    const int len = 64 - __builtin_clzll(mag); /* 2^(len-1) <= mag < 2^len */
    int e = len - 1;
    uint64_t m;
    if (len <= man + 1) {
        m = mag << (man + 1 - len);
    } else {
        const int sh = len - man - 1;
        m = mag >> sh;
        const bool half = (mag >> (sh - 1)) & 1;
        const bool sticky = (mag & ((UINT64_C(1) << (sh - 1)) - 1)) != 0;
        if (dt_round_up(r->round, neg, m & 1, half, sticky)) {
            m++;
            if (m >> (man + 1)) {
                m >>= 1;
                e++;
            }
        }
    }
    /* integers never reach float32's Inf except by rounding: 2^64 > max? no: float32 max is
     * 3.4e38, so an integer source never overflows float32 or float64 */
    return sign | ((uint64_t)(e + bias) << man) | (m & ((UINT64_C(1) << man) - 1));
}

/* float64 bits -> an integer code of bits (<= 64) under r, as dt_encode does. */
static inline uint64_t dt_f64_to_int(uint64_t x, int bits, bool is_signed, const dt_rules *r)
{
    const bool neg = x >> 63;
    const uint64_t a = x & UINT64_C(0x7FFFFFFFFFFFFFFF);
    const int e = (int)(a >> 52);
    const uint64_t mask = bits >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1;
    const uint64_t max = is_signed ? mask >> 1 : mask, min_code = is_signed ? (mask >> 1) + 1 : 0;
    if (e == 0x7FF) {
        if (a > UINT64_C(0x7FF0000000000000) || !r->saturate_int)
            return 0;
        return neg ? min_code : max;
    }
    const uint64_t m = (a & ((UINT64_C(1) << 52) - 1)) | (e ? UINT64_C(1) << 52 : 0);
    const int ex = (e ? e : 1) - 1075; /* |x| = m * 2^ex */
    uint64_t mag;
    bool huge = false;
    if (ex >= 0) {
        mag = ex >= 64 ? 0 : m << ex;
        huge = ex >= 12; /* m >= 2^52 (or 0, then x is 0 and ex < 0) */
    } else {
        const int sh = -ex > 60 ? 60 : -ex;
        mag = m >> sh;
        const bool half = (m >> (sh - 1)) & 1;
        const bool sticky = (m & ((UINT64_C(1) << (sh - 1)) - 1)) != 0;
        mag += dt_round_up(r->round, neg, mag & 1, half, sticky);
    }
    if (!r->saturate_int)
        return (neg ? 0 - mag : mag) & mask;
    if (!neg)
        return (huge || mag > max) ? max : mag;
    if (!is_signed)
        return 0;
    if (huge || mag > min_code)
        return min_code;
    return (0 - mag) & mask;
}

#endif
