/* Stochastic rounding on float32 lanes (float32, or float16/bfloat16 widened exactly) into
 * bfloat16, float16, float8e4m3fn and float8e5m2: the scalar element both kernel files use and
 * the constants the set-up fills. Equals the reference path (exact.c with round.h's
 * dt_dropped32 and dt_stoch_rand): the same rule, written on float32's bits. */
#ifndef DTCAST_KERNELS_STOCHASTIC_H
#define DTCAST_KERNELS_STOCHASTIC_H

#include "kernels.h"
#include "round.h"
#include "scalar.h"

#include <string.h>

/* The constants, kept in the kernel's dt_narrow (these fields only):
 *   s1     M, the target's mantissa bits
 *   ec_hi  the float32 exponent field of the target's smallest normal (1 - bias + 127)
 *   maxc   the largest finite magnitude code
 *   ovf[0] the magnitude code of a result past maxc (the overflow policy)
 *   inf[0] the magnitude code of an infinite input
 *   nan[0] the magnitude code of NaN (the sign is kept: every target here has signed NaN)
 *   sign   the target's sign bit */

/* Sets the constants for sf -> df, or returns false (not a pair of these kernels). */
bool dt_stoch_setup(dt_narrow *n, const dt_format *df, const dt_format *sf, const dt_rules *r);

/* An entry's set-up: dt_stoch_setup, then k->fn from an ISA's six kernels, fns[source][narrow]
 * with source 0 float32, 1 float16, 2 bfloat16 and narrow 1 for the 8-bit targets. */
bool dt_stoch_pick(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                   const dt_kernel_fn fns[3][2]);

/* The code of float32 bits x under the random bits rand. Branch-free (masks and selects: the
 * sign and the ranges of random data would mispredict). */
static inline uint32_t dt_stoch_code(const dt_narrow *n, uint32_t x, uint32_t rand)
{
    const uint32_t a = x & 0x7FFFFFFFu, sign = (0u - (x >> 31)) & n->sign;
    const uint32_t e_field = a >> 23;
    const uint32_t normal = 0u - (uint32_t)(e_field != 0);
    const uint32_t e = e_field | (1u & ~normal); /* subnormals: field 1, no leading 1 */
    const uint32_t sig = (a & 0x7FFFFFu) | (normal & 0x800000u);
    const uint32_t below = e < n->ec_hi ? n->ec_hi - e : 0;
    uint32_t shift = 23 - n->s1 + below;
    shift = shift > 63 ? 63 : shift; /* sig < 2^24: nothing is left from 56 bits on */
    /* sig * 2^(32 - shift) = kept * 2^32 + D: the kept significand and the first 32 bits of
     * the dropped fraction (round.h's dt_dropped32) */
    const uint64_t wide = ((uint64_t)sig << 32) >> shift;
    const uint32_t kept = (uint32_t)(wide >> 32), dropped = (uint32_t)wide;
    /* the exponent steps above the smallest normal, plus the kept significand (its leading 1
     * adds the one more the field needs); a carry out of the mantissa moves the exponent up */
    uint32_t code = ((e > n->ec_hi ? e - n->ec_hi : 0) << n->s1) + kept + (rand < dropped);
    code = code > n->maxc ? n->ovf[0] : code;
    code = a >= 0x7F800000u ? (a == 0x7F800000u ? n->inf[0] : n->nan[0]) : code;
    return sign | code;
}

/* The state of SplitMix64 before element begin of a call: seed + (offset + begin) * gamma, so
 * that adding gamma gives element i's z (round.h: dt_stoch_rand). */
static inline uint64_t dt_stoch_state(const dt_rules *r, size_t begin)
{
    return r->seed + (r->offset + (uint64_t)begin) * DT_GOLDEN_GAMMA;
}

/* The sources of these kernels, as dt_stoch_pick's rows: float32, float16, bfloat16 */
enum { DT_STOCH_F32, DT_STOCH_F16, DT_STOCH_BF16 };

/* Elements [i, end) one at a time, by dt_stoch_code (the vector kernels' tails): src one of
 * DT_STOCH_*, obytes the code's bytes (1 or 2, little-endian) */
static inline void dt_stoch_tail(const dt_kernel *k, uint8_t *d, const uint8_t *s, size_t i,
                                 size_t end, int src, int obytes)
{
    uint64_t z = dt_stoch_state(&k->r, i);
    for (; i < end; i++) {
        z += DT_GOLDEN_GAMMA;
        uint32_t x;
        if (src == DT_STOCH_F32) {
            memcpy(&x, s + i * 4, 4);
        } else {
            const uint32_t h = (uint32_t)s[i * 2] | (uint32_t)s[i * 2 + 1] << 8;
            x = src == DT_STOCH_F16 ? dt_f16_to_f32(h) : h << 16;
        }
        const uint32_t code = dt_stoch_code(&k->n, x, (uint32_t)dt_splitmix64_mix(z));
        d[i * (size_t)obytes] = (uint8_t)code;
        if (obytes == 2)
            d[i * 2 + 1] = (uint8_t)(code >> 8);
    }
}

/* An ISA file's six kernels (its STOCH_KERNEL macro and load_f32 / load_f16 / load_bf16), its
 * set-up and its entry list dt_entries_stochastic_<isa>, at ISA level level */
#define DT_STOCH_ENTRIES(isa, level)                                                            \
    STOCH_KERNEL(f32_to8_##isa, load_f32, DT_STOCH_F32, 4, 1)                                   \
    STOCH_KERNEL(f32_to16_##isa, load_f32, DT_STOCH_F32, 4, 2)                                  \
    STOCH_KERNEL(f16_to8_##isa, load_f16, DT_STOCH_F16, 2, 1)                                   \
    STOCH_KERNEL(f16_to16_##isa, load_f16, DT_STOCH_F16, 2, 2)                                  \
    STOCH_KERNEL(bf16_to8_##isa, load_bf16, DT_STOCH_BF16, 2, 1)                                \
    STOCH_KERNEL(bf16_to16_##isa, load_bf16, DT_STOCH_BF16, 2, 2)                               \
    static bool e_stoch_##isa(dt_kernel *k, const dt_format *df, const dt_format *sf,           \
                              const dt_rules *r, size_t count)                                  \
    {                                                                                           \
        static const dt_kernel_fn fns[3][2] = {{f32_to16_##isa, f32_to8_##isa},                 \
                                               {f16_to16_##isa, f16_to8_##isa},                 \
                                               {bf16_to16_##isa, bf16_to8_##isa}};              \
        (void)count;                                                                            \
        return dt_stoch_pick(k, df, sf, r, fns);                                                \
    }                                                                                           \
    const dt_kernel_entry dt_entries_stochastic_##isa[] = {                                     \
        {#isa " stochastic: float32/float16/bfloat16 -> bfloat16, float16, float8e4m3fn/e5m2",  \
         level, e_stoch_##isa},                                                                 \
        {NULL, DT_ISA_PORTABLE, NULL},                                                          \
    };

#endif
