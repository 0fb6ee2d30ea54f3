/* Rounding a magnitude and packing an integer: the one definition that the reference path
 * (exact.c), the scalar kernels (kernels/scalar.h) and the text code (text/) share, as
 * SoftFloat's softfloat_roundPackTo* are shared by its conversions.
 *
 * A magnitude being rounded is described by its last kept bit (lsb), the first dropped bit
 * (half) and whether any lower dropped bit is set (sticky). */
#ifndef DTCAST_ROUND_H
#define DTCAST_ROUND_H

#include "dtcast.h"

#include <stdbool.h>
#include <stdint.h>

/* Whether mode adds one unit to the kept magnitude (neg: the value is negative). Not for
 * DTCAST_ROUND_STOCHASTIC, which needs the dropped fraction (dt_dropped32). */
static inline bool dt_round_up(dtcast_round mode, bool neg, bool lsb, bool half, bool sticky)
{
    const bool inexact = half || sticky;
    switch (mode) {
    case DTCAST_ROUND_RNA:
        return half;
    case DTCAST_ROUND_FLOOR:
        return neg && inexact;
    case DTCAST_ROUND_CEIL:
        return !neg && inexact;
    case DTCAST_ROUND_TRUNC:
        return false;
    case DTCAST_ROUND_ODD: /* an inexact result takes the odd one of its two neighbours */
        return inexact && !lsb;
    case DTCAST_ROUND_RNE:
    default:
        return half && (sticky || lsb);
    }
}

/* Whether mode never rounds a magnitude of this sign up: then an overflow gives the largest
 * finite number, as IEEE 754 says for directed rounding (round to odd joins them). */
static inline bool dt_mag_down(dtcast_round mode, bool neg)
{
    return mode == DTCAST_ROUND_TRUNC || mode == DTCAST_ROUND_ODD ||
           (mode == DTCAST_ROUND_FLOOR && !neg) || (mode == DTCAST_ROUND_CEIL && neg);
}

/* ---- stochastic rounding (docs/conversion.md, "Stochastic rounding") ----------------------- */
#define DT_GOLDEN_GAMMA UINT64_C(0x9E3779B97F4A7C15)

/* SplitMix64's output function on a state z. */
static inline uint64_t dt_splitmix64_mix(uint64_t z)
{
    z ^= z >> 30;
    z *= UINT64_C(0xBF58476D1CE4E5B9);
    z ^= z >> 27;
    z *= UINT64_C(0x94D049BB133111EB);
    z ^= z >> 31;
    return z;
}

/* The 32 random bits of element i (counted from the start of the tensor) under seed: the low
 * half of SplitMix64 of seed + (i + 1) * gamma, all modulo 2^64. */
static inline uint32_t dt_stoch_rand(uint64_t seed, uint64_t i)
{
    return (uint32_t)dt_splitmix64_mix(seed + (i + 1) * DT_GOLDEN_GAMMA);
}

/* The first 32 bits of the fraction that dropping the low shift (>= 1) bits of sig loses:
 * floor(2^32 * (sig mod 2^shift) / 2^shift). A magnitude rounds up iff rand < this. */
static inline uint32_t dt_dropped32(uint64_t sig, int shift)
{
    if (shift >= 96)
        return 0;
    if (shift <= 32)
        return (uint32_t)((sig & ((UINT64_C(1) << shift) - 1)) << (32 - shift));
    const uint64_t dropped = shift >= 64 ? sig : sig & ((UINT64_C(1) << shift) - 1);
    return (uint32_t)(dropped >> (shift - 32));
}

/* sig (with the flag sticky for nonzero bits below it) shifted right by shift >= 1 bits and
 * rounded under mode (rand: the random bits of the element, for DTCAST_ROUND_STOCHASTIC; sticky
 * bits are below its 32 fraction bits there). The result may carry into one bit more than
 * sig >> shift has. */
static inline uint64_t dt_shift_right_round_r(uint64_t sig, bool sticky, int shift,
                                              dtcast_round mode, bool neg, uint32_t rand)
{
    if (mode == DTCAST_ROUND_STOCHASTIC)
        return (shift >= 64 ? 0 : sig >> shift) + (rand < dt_dropped32(sig, shift));
    uint64_t kept;
    bool half, rest;
    if (shift > 64) {
        kept = 0;
        half = false;
        rest = sig != 0;
    } else if (shift == 64) {
        kept = 0;
        half = (sig >> 63) != 0;
        rest = (sig << 1) != 0;
    } else {
        kept = sig >> shift;
        half = ((sig >> (shift - 1)) & 1) != 0;
        rest = (sig & ((UINT64_C(1) << (shift - 1)) - 1)) != 0;
    }
    return kept + dt_round_up(mode, neg, kept & 1, half, rest || sticky);
}

/* The same for the deterministic modes. */
static inline uint64_t dt_shift_right_round(uint64_t sig, bool sticky, int shift, dtcast_round mode,
                                            bool neg)
{
    return dt_shift_right_round_r(sig, sticky, shift, mode, neg, 0);
}

/* The code of an integer of bits (1..64) for the rounded magnitude mag of a value (neg: its
 * sign; huge: the magnitude is 2^64 or more, mag holds its low 64 bits): modulo 2^bits as two's
 * complement wraps, or clamped to the range when saturating (a negative value to 0 when
 * unsigned). */
static inline uint64_t dt_int_pack(uint64_t mag, bool huge, bool neg, int bits, bool is_signed,
                                   bool saturate)
{
    const uint64_t mask = bits >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1;
    const uint64_t max = is_signed ? mask >> 1 : mask; /* the largest value */
    const uint64_t min_mag = is_signed ? (mask >> 1) + 1 : 0; /* |smallest|, also its bits */
    if (!saturate)
        return (neg ? 0 - mag : mag) & mask;
    if (!neg)
        return (huge || mag > max) ? max : mag;
    if (huge || mag > min_mag)
        return min_mag;
    return (0 - mag) & mask;
}

#endif
