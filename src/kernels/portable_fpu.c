/* The portable kernels that round with the float unit, where the environment rounds to nearest
 * and flushes nothing (read at each call; elsewhere the narrowing kernels of portable_narrow.c
 * run): float32 -> float16 in rne by a float addition, and float64 -> floats of at most 16 bits
 * and float8e8m0 through float32 rounded to odd by the hardware's conversion (which rounds like
 * float64 into every one of them: float32 keeps at least 2 more bits). complex128 sources go to
 * the same targets here too, their real parts read in place (compose.c asks: no copy into L1). */
#include "portable.h"

#include <fenv.h>

/* whether this thread's environment rounds to nearest and keeps subnormals (float32 results and
 * float64 operands) */
static bool plain_env(void)
{
    volatile double sub64 = 0x1p-1070, tiny = 0x1p-140;
    return fegetround() == FE_TONEAREST && (float)tiny != 0.0f && sub64 * 2.0 != 0.0;
}

/* float64 -> float32 bits rounded to odd: (float)x is one of x's two float32 neighbours; where
 * it is inexact, the one toward zero with the low bit set: x - (double)(float)x is exact, its
 * sign says whether the neighbour lies beyond x (then one unit below it). A finite x above
 * float32's range gives Inf, beyond x: the largest finite number, odd. NaN stays NaN. */
DT_PINLINE uint32_t odd_f32(double x)
{
    const float t = (float)x;
    const double err = x - (double)t;
    uint64_t e, xb;
    memcpy(&e, &err, 8);
    memcpy(&xb, &x, 8);
    const uint32_t ehi = (uint32_t)(e >> 32), elo = (uint32_t)e, xhi = (uint32_t)(xb >> 32);
    const uint32_t finite = 0u - ((xhi & 0x7FF00000u) != 0x7FF00000u);
    const uint32_t inexact = (0u - (((ehi << 1) | elo) != 0)) & finite & 1;
    const uint32_t beyond = ((ehi ^ xhi) >> 31) & inexact;
    return (dt_bits_of_f32(t) - beyond) | inexact;
}

/* float32 bits -> float16, rne; ovf: the code of an overflow (Inf, or the largest finite number
 * when saturating; an infinite x too). */
DT_PINLINE uint32_t f32_f16(uint32_t x, uint32_t ovf)
{
    const uint32_t a = x & 0x7FFFFFFFu;
    /* normal: rebias (127 -> 15) and drop 13 bits, rne; the carry moves into the exponent */
    const uint32_t cn = (a - (112u << 23) + 0xFFFu + ((a >> 13) & 1)) >> 13;
    /* below 2^-14: |x| + 1/2 rounds |x| to the float16 quantum 2^-24 (the ulp of 1/2); the
     * rounded value's bits above those of 1/2 count quanta (2^-14 itself gives 0x400) */
    const uint32_t cs = dt_bits_of_f32(dt_f32_of_bits(a) + 0.5f) - 0x3F000000u;
    /* (masks by arithmetic, as portable_narrow.c: no comparison for gcc to thread jumps on) */
    uint32_t c = dt_psel(0u - ((a - 0x38800000u) >> 31), cs, cn); /* a < 2^-14 */
    c = dt_psel(0u - ((c - ovf) >> 31), c, ovf);                  /* c < ovf: both below 2^31 */
    c = dt_psel(0u - ((0x7F800000u - a) >> 31), 0x7E00u, c);      /* NaN: a > Inf */
    return c | ((x >> 16) & 0x8000u);
}

/* float64 -> float16, rne, in one rounding by a float addition: C = 2^(e + 42) for |x|'s exponent
 * e (at least -14: the subnormals share its quantum) has its ulp at the float16 quantum of |x|,
 * so (|x| + C) - C is |x| rounded to float16 (a carry into the next binade included). Scaled by
 * 2^-112 (exact) it is a float32 whose bits, shifted right by 13, are the float16 code: the
 * exponent rebiased from 127 to 15, and below 2^-14 a float32 subnormal whose bits count the
 * quanta 2^-24 (so the environment must not flush: see plain_env). top: 65536 (its code is
 * Inf's) or, when saturating, 65504 (the largest finite): |x| is clamped there first, so that
 * everything that rounds beyond the largest finite value, Inf and NaN too, gives that code (NaN
 * is then told by its float32). (The steps between 64- and 32-bit lanes are conversions, which
 * SSE2 vectorises, not integer truncations, which it does not.) */
DT_PINLINE uint32_t f64_f16(double x, double top)
{
    const double ax = __builtin_fabs(x), a = top < ax ? top : ax; /* NaN: top */
    /* 2^e, at least 2^-14: the exponent field of |x| alone */
    const double ea = dt_f64_of_bits(dt_bits_of_f64(a) & 0x7FF0000000000000u);
    const double c = (ea > 0x1p-14 ? ea : 0x1p-14) * 0x1p42;
    const uint32_t c16 = dt_bits_of_f32((float)(((a + c) - c) * 0x1p-112)) >> 13;
    const uint32_t xs = dt_bits_of_f32((float)x); /* x's sign and NaN-ness */
    const uint32_t nan = 0u - (uint32_t)((int32_t)(xs & 0x7FFFFFFFu) > 0x7F800000);
    return dt_psel(nan, 0x7E00u, c16) | ((xs >> 16) & 0x8000u);
}

/* Two loops per block: float16 codes in 32-bit lanes, then 16-bit codes (SSE2 has no 32 -> 16-bit
 * narrowing that keeps the loops 4 lanes wide). SB:
 * source bytes per element (float32 4, float64 8, complex128 16: its real part first). */
#define HALF_BLOCK(name, SB)                                                                    \
    static void name(void *out, const uint8_t *src, size_t n, const dt_pnarrow *p)              \
    {                                                                                           \
        const uint32_t ovf = p->ovf0;                                                           \
        const double top = ovf == 0x7C00u ? 65536.0 : 65504.0;                                  \
        _Alignas(64) uint32_t v[DT_PBLOCK];                                                     \
        if (SB >= 8) { /* one loop: the 16-bit narrowing costs little beside the 64-bit lanes */ \
            uint16_t *o = out;                                                                  \
            for (size_t i = 0; i < n; i++) {                                                    \
                double x;                                                                       \
                memcpy(&x, src + SB * i, 8);                                                    \
                o[i] = (uint16_t)f64_f16(x, top);                                               \
            }                                                                                   \
            return;                                                                             \
        } else {                                                                                \
            for (size_t i = 0; i < n; i++) {                                                    \
                uint32_t x;                                                                     \
                memcpy(&x, src + 4 * i, 4);                                                     \
                v[i] = f32_f16(x, ovf);                                                         \
            }                                                                                   \
        }                                                                                       \
        uint16_t *o = out;                                                                      \
        for (size_t i = 0; i < n; i++)                                                          \
            o[i] = (uint16_t)v[i];                                                              \
    }
HALF_BLOCK(half_f32, 4)
HALF_BLOCK(half_f64, 8)
HALF_BLOCK(half_c128, 16)

/* float64 (or the real parts of complex128) -> float32 rounded to odd, then the float32 block of
 * the same target */
#define ODD_THEN_F32(name, SB)                                                                  \
    static void name(void *out, const uint8_t *src, size_t n, const dt_pnarrow *p)              \
    {                                                                                           \
        _Alignas(64) uint32_t v[DT_PBLOCK];                                                     \
        for (size_t i = 0; i < n; i++) {                                                        \
            double x;                                                                           \
            memcpy(&x, src + SB * i, 8);                                                        \
            v[i] = odd_f32(x);                                                                  \
        }                                                                                       \
        p->inner(out, (const uint8_t *)v, n, p);                                                \
    }
ODD_THEN_F32(odd_then_f32, 8)
ODD_THEN_F32(odd_then_f32_c128, 16)

/* The fallback for complex128 (an environment that rounds otherwise or flushes): the real parts
 * gathered, then the narrowing kernel's float64 block (p->outer) */
static void real_parts_then_f64(void *out, const uint8_t *src, size_t n, const dt_pnarrow *p)
{
    _Alignas(64) uint64_t v[DT_PBLOCK];
    for (size_t i = 0; i < n; i++)
        memcpy(&v[i], src + 16 * i, 8);
    p->outer(out, (const uint8_t *)v, n, p);
}

typedef struct {
    dt_pnarrow p;      /* the narrowing kernel's constants; its block is the fallback */
    dt_pblock_fn fast; /* the block of this file */
} fpu_local;

static void fpu_run(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    fpu_local f;
    memcpy(&f, k->local, sizeof f);
    if (plain_env())
        f.p.block = f.fast;
    dt_pnarrow_run(&f.p, dst, src, begin, end);
}

/* float32/float64 -> float16 in rne: one overflow code for both signs (Inf, or the largest
 * finite number when saturating), the canonical NaN 0x7E00 with the sign */
static bool half_rules(const dt_pnarrow *p)
{
    return p->ovfx == 0 && (p->ovf0 == 0x7C00u || p->ovf0 == 0x7BFFu) && p->nan0 == 0x7E00u &&
           (p->nanx & ~0x8000u) == 0 && p->sign == 0x8000u;
}

bool dt_pfpu_find(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r)
{
    fpu_local f;
    memset(&f, 0, sizeof f);
    const bool c128 = sf->type == DTCAST_COMPLEX128;
    const bool f64 = c128 || sf->type == DTCAST_FLOAT64;
    if ((!f64 && sf->type != DTCAST_FLOAT32) || (df->tc != DT_TC_FLOAT && df->tc != DT_TC_E8M0) ||
        !dt_pnarrow_pick(df, c128 ? dt_format_of(DTCAST_FLOAT64) : sf, r, &f.p))
        return false;
    if (df->type == DTCAST_FLOAT16 && r->round == DTCAST_ROUND_RNE && half_rules(&f.p)) {
        f.fast = c128 ? half_c128 : f64 ? half_f64 : half_f32;
    } else if (f64) {
        dt_pnarrow p32;
        if (!dt_pnarrow_pick(df, dt_format_of(DTCAST_FLOAT32), r, &p32))
            return false;
        f.p.inner = p32.block;
        f.fast = c128 ? odd_then_f32_c128 : odd_then_f32;
    } else {
        return false;
    }
    if (c128) { /* 16 source bytes an element; the fallback gathers the real parts first */
        f.p.outer = f.p.block;
        f.p.block = real_parts_then_f64;
        f.p.sbytes = 16;
    }
    _Static_assert(sizeof f <= sizeof k->local, "the constants fit the kernel's bytes");
    memcpy(k->local, &f, sizeof f);
    k->fn = fpu_run;
    return true;
}
