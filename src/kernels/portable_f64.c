/* float64 -> float32 by the hardware's conversion: (float)x rounds once, in the rounding mode
 * of the floating-point environment, so the kernel sets that mode (fenv.h) for the call and puts
 * the caller's back (round to odd needs none: it fixes whichever neighbour the mode gave); ties
 * away from zero has no hardware mode and keeps the integer kernel. A flush-to-zero or
 * denormals-are-zero environment (which would change subnormal results) is detected at each
 * call by converting a subnormal, and then the integer kernel
 * (dt_pf64_f32, portable_narrow.c) runs instead. This file is compiled with -frounding-math
 * (the Makefile): the compiler may not assume round-to-nearest here. */
#include "portable.h"

#include <fenv.h>

/* whether this thread's environment flushes subnormal float32 results or float64 inputs */
static bool flushes(void)
{
    volatile double sub64 = 0x1p-1070, tiny = 0x1p-140;
    return (float)tiny == 0.0f || sub64 * 2.0 == 0.0;
}

/* The result bits of a block: canonical NaNs, and the saturating policy's largest finite
 * number for every infinity (infinite inputs too). Round to odd from whichever neighbour of x
 * the environment's mode gave: kept where exact or odd, else the other neighbour (one unit
 * toward x: an Inf result of a finite x becomes the largest finite number). */
DT_PINLINE void f64_f32_block(uint32_t *o, const uint8_t *s, size_t n, bool odd, bool sat)
{
    for (size_t i = 0; i < n; i++) {
        double x;
        memcpy(&x, s + 8 * i, 8);
        const float f = (float)x;
        uint32_t r = dt_bits_of_f32(f);
        if (odd) { /* x - f is exact: its sign says on which side of x f lies */
            uint64_t e, xb;
            const double err = x - (double)f;
            memcpy(&e, &err, 8);
            memcpy(&xb, &x, 8);
            const uint32_t ehi = (uint32_t)(e >> 32), elo = (uint32_t)e, xhi = (uint32_t)(xb >> 32);
            const uint32_t finite = 0u - ((xhi & 0x7FF00000u) != 0x7FF00000u);
            const uint32_t inexact = (0u - (((ehi << 1) | elo) != 0)) & finite;
            const uint32_t beyond = (ehi ^ xhi) >> 31; /* |f| > |x| */
            r += inexact & ~(0u - (r & 1)) & (1u | (0u - beyond)); /* even: one unit toward x */
        }
        const uint32_t a = r & 0x7FFFFFFFu, sg = r & 0x80000000u;
        r = dt_psel(DT_PMASK(a > 0x7F800000u), sg | 0x7FC00000u, r);
        if (sat)
            r = dt_psel(DT_PMASK(a == 0x7F800000u), sg | 0x7F7FFFFFu, r);
        o[i] = r;
    }
}
typedef void (*block_fn)(uint32_t *, const uint8_t *, size_t);
static void blk_plain(uint32_t *o, const uint8_t *s, size_t n) { f64_f32_block(o, s, n, false, false); }
static void blk_sat(uint32_t *o, const uint8_t *s, size_t n) { f64_f32_block(o, s, n, false, true); }
static void blk_odd(uint32_t *o, const uint8_t *s, size_t n) { f64_f32_block(o, s, n, true, false); }
static void blk_odd_sat(uint32_t *o, const uint8_t *s, size_t n) { f64_f32_block(o, s, n, true, true); }

static void run(block_fn fn, void *dst, const void *src, size_t begin, size_t end)
{
    const uint8_t *s = (const uint8_t *)src + begin * 8;
    uint8_t *d = (uint8_t *)dst + begin * 4;
    _Alignas(64) uint32_t out[DT_PBLOCK];
    const size_t n = end - begin;
    for (size_t i = 0; i < n; i += DT_PBLOCK) {
        const size_t m = n - i < DT_PBLOCK ? n - i : DT_PBLOCK;
        dt_prefetch_span(s + i * 8, m * 8);
        fn(out, s + i * 8, m);
        memcpy(d + i * 4, out, m * 4);
    }
}

/* Round to odd needs no mode of its own (so a chain's 128-element steps set none); the others
 * set theirs only where the caller's differs. */
void dt_pf64_f32_fenv(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    const dtcast_round round = k->r.round;
    const bool sat = k->r.saturate_float;
    if (round == DTCAST_ROUND_RNA || flushes()) {
        dt_pf64_f32(k, dst, src, begin, end);
        return;
    }
    if (round == DTCAST_ROUND_ODD) {
        run(sat ? blk_odd_sat : blk_odd, dst, src, begin, end);
        return;
    }
#if defined(FE_TONEAREST) && defined(FE_DOWNWARD) && defined(FE_UPWARD) && defined(FE_TOWARDZERO)
    const int mode = round == DTCAST_ROUND_RNE     ? FE_TONEAREST
                     : round == DTCAST_ROUND_FLOOR ? FE_DOWNWARD
                     : round == DTCAST_ROUND_CEIL  ? FE_UPWARD
                                                   : FE_TOWARDZERO;
    const int saved = fegetround();
    if (saved == mode || fesetround(mode) == 0) {
        run(sat ? blk_sat : blk_plain, dst, src, begin, end);
        if (saved != mode)
            fesetround(saved);
        return;
    }
#endif
    dt_pf64_f32(k, dst, src, begin, end);
}
