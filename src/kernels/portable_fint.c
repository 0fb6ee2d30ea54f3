/* The portable float -> integer kernels: float64 -> integers of 1 to 64 bits, float32, bfloat16
 * and float16 -> integers of 32 and 64 bits (into fewer bits: portable_narrow.c), in every
 * rounding mode, wrapping or saturating, as dt_encode.
 *
 * The common range takes one conversion (cvttpd2dq/cvttps2dq) and the fraction x - q for the
 * rounding step: |x| < 2^31; wrapping, also |x| >= C (below) and NaN, whose code is 0;
 * saturating, x clamped to the target's range first. The rest (rare in practice: 2^31 <= |x| < C
 * and, in the modes that see them, subnormals, which flush-to-zero settings may read as 0) is
 * flagged and converted again by the full path, element by element, or the whole block when there
 * are many. The full path: exact float arithmetic on signed lanes, in digits of at most 31 bits
 * (SSE2 has no per-lane shift to cut the integer part out of the bits). x is clamped to +-C (C a
 * power of two of which every larger float is a multiple of 2^N, N the result's 32 or 64 bits:
 * the clamp never changes the result mod 2^N, and a NaN becomes C too), scaled by a power of two
 * so that it is below 2^31; then, digit by digit, the truncation q, and the fraction (x - q,
 * exact) scaled up by the next digit's bits (exact). The digits have the sign of x, so the
 * truncation of x is the sum of q << (the digit's place), mod 2^N, with no borrow to undo; the
 * last digit's fraction f (of x's sign too) gives the rounding step. Saturating, x is clamped to
 * [min, the largest lane float <= max] (rounding never passes an integer limit), a NaN to 0, and
 * beyond max the result is max. Every operand and result of the float arithmetic is a normal
 * number or zero (|x| < 2^-900 or 2^-60 is taken as 0): the modes that depend on a tiny fraction
 * being nonzero (floor, ceil, odd) take that from the bits. Masks of float64 comparisons stay
 * 64-bit (gcc does not vectorise their conversion to 32-bit lanes on SSE2), and comparisons of
 * bits are arithmetic (gcc threads jumps through selects on comparisons, then does not
 * vectorise). */
#include "portable.h"

#include <math.h>

#define INLINE DT_PINLINE
#define MASK DT_PMASK
#define sel dt_psel
/* a 64-bit value sign-extended from a 32-bit one (gcc vectorises the extension) */
#define WIDEN(m) ((uint64_t)(int64_t)(int32_t)(m))
#define SIGN64 (UINT64_C(1) << 63)

/* The constants of a kernel, kept in the kernel's local bytes. */
typedef struct fi_par fi_par;
typedef void (*fi_block_fn)(void *out, const uint8_t *src, size_t n, const fi_par *p);
struct fi_par {
    fi_block_fn block; /* codes of n <= DT_PBLOCK elements: uint32 (targets <= 32 bits), uint64 */
    int obits, sbytes; /* destination stride bits, source bytes per element */
    double lo, hi;     /* float64 lanes: the clamp */
    float lof, hif;    /* float32 lanes: the clamp */
    uint64_t max;      /* saturating: the code beyond hi */
    uint64_t inf[2];   /* float16 saturating: the code of +Inf, and that of -Inf xor it */
};

/* ---- the rounding step ----------------------------------------------------------------------- */
/* The mode's step (1, 0 or -1 as all ones) from the truncation t to the rounded value of t + f,
 * f the float32 fraction (|f| < 1, of x's sign); odd: t's parity as a mask; tp/tn: x is a tiny
 * nonzero positive/negative (its fraction may have been flushed to 0), as masks. */
#define FI_STEP(f, odd, tp, tn, mode)                                                           \
    ((mode) == M_TRUNC   ? 0u                                                                   \
     : (mode) == M_FLOOR ? MASK((f) < 0.0f) | (tn)                                              \
     : (mode) == M_CEIL  ? (MASK((f) > 0.0f) | (tp)) & 1                                        \
     : (mode) == M_RNA   ? (MASK((f) >= 0.5f) & 1) | MASK((f) <= -0.5f)                         \
     : (mode) == M_RNE   ? ((MASK((f) > 0.5f) | (MASK((f) == 0.5f) & (odd))) & 1) |             \
                               MASK((f) < -0.5f) | (MASK((f) == -0.5f) & (odd))                 \
                         : (((MASK((f) > 0.0f) | (tp)) & 1) | MASK((f) < 0.0f) | (tn)) & ~(odd))
/* whether a mode needs the tiny masks */
#define FI_TINY(mode) ((mode) == M_FLOOR || (mode) == M_CEIL || (mode) == M_ODD)

/* The same on float64 lanes, from the bits of f by integer arithmetic (the masks of float64
 * comparisons would need converting to narrower lanes, which gcc does not vectorise on SSE2):
 * odd, tp, tn and every condition are 0 or 1; the step is their difference (1 - 0, 0 - 1). */
INLINE uint64_t step64(double f, uint64_t odd, uint64_t tp, uint64_t tn, int mode)
{
    const uint64_t fb = dt_bits_of_f64(f), s = fb >> 63, fa = fb & ~SIGN64;
    const uint64_t half = UINT64_C(0x3FE0000000000000);
    const uint64_t nz = ((fa - 1) >> 63) ^ 1;       /* f != 0 (fa - 1 wraps for 0 only) */
    const uint64_t gt = (half - fa) >> 63;          /* |f| > 1/2 */
    const uint64_t eq = ((fa ^ half) - 1) >> 63;    /* |f| == 1/2 */
    uint64_t up;
    switch (mode) {
    case M_TRUNC: return 0;
    case M_FLOOR: return 0 - ((nz & s) | tn);
    case M_CEIL: return (nz & (s ^ 1)) | tp;
    case M_RNA: up = gt | eq; break;
    case M_RNE: up = gt | (eq & odd); break;
    default: return (((nz & (s ^ 1)) | tp) - ((nz & s) | tn)) & (odd - 1);
    }
    return (up & (s ^ 1)) - (up & s);
}

/* ---- comparisons of bits --------------------------------------------------------------------- */
/* a >= c and a == 0 as masks by arithmetic alone (a, c below 2^31): comparisons would let gcc
 * thread jumps through the selects, and then not vectorise */
INLINE uint32_t ge_m(uint32_t a, uint32_t c) { return 0u - ((c - 1u - a) >> 31); }
INLINE uint32_t eq_m0(uint32_t a) { return 0u - ((a - 1u) >> 31); }

/* (ab + 2^63 - c) >> 63: ab >= c, as 0 or 1 (ab, c below 2^63) */
INLINE uint64_t ge64(uint64_t ab, uint64_t c) { return (ab + (SIGN64 - c)) >> 63; }

/* ---- float64 lanes: the full path ------------------------------------------------------------ */
/* x as its clamped value (wrapping: +-2^84 or +-2^116, a NaN to the top; saturating: [lo, hi],
 * a NaN to 0), below 2^-900 as 0 (no subnormal results, which are slow: the tiny masks stand for
 * it) */
INLINE double f64_clamp(double x, const fi_par *p, int sat)
{
    double y = x < p->hi ? x : p->hi;
    y = y > p->lo ? y : p->lo;
    const uint64_t ab = dt_bits_of_f64(x) & ~SIGN64;
    uint64_t keep = ge64(ab, UINT64_C(0x07B0000000000000)); /* 2^-900 */
    if (sat)
        keep &= ge64(ab, UINT64_C(0x7FF0000000000001)) ^ 1; /* NaN */
    return dt_f64_of_bits(dt_bits_of_f64(y) & (0 - keep));
}

/* whether the magnitude bits ab (below 2^63) are nonzero and below c, as 0 or 1: ab - 1 < c - 1
 * by the borrow of their difference, with ab - 1 as all ones (ab = 0) excluded */
INLINE uint64_t nz_below(uint64_t ab, uint64_t c)
{
    return (((ab - 1) - (c - 1)) & ~(ab - 1)) >> 63;
}

/* tp/tn of a float64: |x| < 1, nonzero, by sign (0 or 1); saturating into an unsigned target,
 * no tn (x was clamped to 0) */
INLINE void f64_tiny(double x, const fi_par *p, int sat, uint64_t *tp, uint64_t *tn)
{
    const uint64_t b = dt_bits_of_f64(x), s = b >> 63;
    const uint64_t t = nz_below(b & ~SIGN64, UINT64_C(0x3FF0000000000000));
    *tp = t & (s ^ 1);
    *tn = t & s & (uint64_t)(!sat || p->lo < 0);
}

/* float64 -> integers of at most 32 bits (the code mod 2^32): clamped to 2^84, digits of 2^54
 * (dropped: a multiple of 2^32), 2^31 and 1. */
INLINE uint32_t f64_i32(double x, const fi_par *p, int mode, int sat)
{
    const double y = f64_clamp(x, p, sat);
    const double z0 = y * 0x1p-54;
    const double z1 = (z0 - (double)(int32_t)z0) * 0x1p23;
    const int32_t q1 = (int32_t)z1;
    const double z2 = (z1 - (double)q1) * 0x1p31;
    const int32_t q2 = (int32_t)z2;
    uint32_t t = ((uint32_t)q1 << 31) + (uint32_t)q2;
    if (mode != M_TRUNC) {
        uint64_t tp = 0, tn = 0;
        if (FI_TINY(mode))
            f64_tiny(x, p, sat, &tp, &tn);
        t += (uint32_t)step64(z2 - (double)q2, (uint64_t)(q2 & 1), tp, tn, mode);
    }
    if (sat)
        t = x > p->hi ? (uint32_t)p->max : t;
    return t;
}

/* float64 -> 64-bit integers: clamped to 2^116, digits of 2^86 (dropped), 2^55, 2^31 and 1. */
INLINE uint64_t f64_i64(double x, const fi_par *p, int mode, int sat)
{
    const double y = f64_clamp(x, p, sat);
    const double z0 = y * 0x1p-86;
    const double z1 = (z0 - (double)(int32_t)z0) * 0x1p31;
    const int32_t q1 = (int32_t)z1;
    const double z2 = (z1 - (double)q1) * 0x1p24;
    const int32_t q2 = (int32_t)z2;
    const double z3 = (z2 - (double)q2) * 0x1p31;
    const int32_t q3 = (int32_t)z3;
    uint64_t t = ((uint64_t)(int64_t)q1 << 55) + ((uint64_t)(int64_t)q2 << 31) + WIDEN(q3);
    if (mode != M_TRUNC) {
        uint64_t tp = 0, tn = 0;
        if (FI_TINY(mode))
            f64_tiny(x, p, sat, &tp, &tn);
        t += step64(z3 - (double)q3, (uint64_t)(q3 & 1), tp, tn, mode);
    }
    if (sat)
        t = x > p->hi ? p->max : t;
    return t;
}

/* ---- float32 lanes (float32, bfloat16: its top half): the full path -------------------------- */
INLINE float f32_clamp(float x, const fi_par *p, int sat)
{
    float y = x < p->hif ? x : p->hif;
    y = y > p->lof ? y : p->lof;
    const uint32_t a = dt_bits_of_f32(x) & 0x7FFFFFFFu;
    uint32_t keep = ge_m(a, 0x21800000u); /* 2^-60 */
    if (sat)
        keep &= ~ge_m(a, 0x7F800001u); /* NaN */
    return dt_f32_of_bits(dt_bits_of_f32(y) & keep);
}

INLINE void f32_tiny(uint32_t b, const fi_par *p, int sat, uint32_t *tp, uint32_t *tn)
{
    const uint32_t a = b & 0x7FFFFFFFu, negm = 0u - (b >> 31);
    const uint32_t t = MASK(a - 1u < 0x3F7FFFFFu); /* nonzero, below 1 */
    *tp = t & ~negm;
    *tn = t & negm & MASK(!sat || p->lof < 0);
}

/* float32 -> 32-bit integers: clamped to 2^55, digits of 2^31 and 1. */
INLINE uint32_t f32_i32(uint32_t b, const fi_par *p, int mode, int sat)
{
    const float x = dt_f32_of_bits(b), y = f32_clamp(x, p, sat);
    const float z0 = y * 0x1p-31f;
    const int32_t q0 = (int32_t)z0;
    const float z1 = (z0 - (float)q0) * 0x1p31f;
    const int32_t q1 = (int32_t)z1;
    uint32_t tp = 0, tn = 0;
    if (FI_TINY(mode))
        f32_tiny(b, p, sat, &tp, &tn);
    const float f = z1 - (float)q1;
    const uint32_t odd = 0u - ((uint32_t)q1 & 1);
    uint32_t t = ((uint32_t)q0 << 31) + (uint32_t)q1 + FI_STEP(f, odd, tp, tn, mode);
    if (sat)
        t = x > p->hif ? (uint32_t)p->max : t;
    return t;
}

/* float32 -> 64-bit integers: clamped to 2^88, digits of 2^58, 2^31 and 1 (the last digit and
 * its step stay within 32 bits: a float of 2^24 or more has no fraction). */
INLINE uint64_t f32_i64(uint32_t b, const fi_par *p, int mode, int sat)
{
    const float x = dt_f32_of_bits(b), y = f32_clamp(x, p, sat);
    const float z0 = y * 0x1p-58f;
    const int32_t q0 = (int32_t)z0;
    const float z1 = (z0 - (float)q0) * 0x1p27f;
    const int32_t q1 = (int32_t)z1;
    const float z2 = (z1 - (float)q1) * 0x1p31f;
    const int32_t q2 = (int32_t)z2;
    uint32_t tp = 0, tn = 0;
    if (FI_TINY(mode))
        f32_tiny(b, p, sat, &tp, &tn);
    const float f = z2 - (float)q2;
    const uint32_t odd = 0u - ((uint32_t)q2 & 1);
    const uint32_t low = (uint32_t)q2 + FI_STEP(f, odd, tp, tn, mode);
    const uint64_t t = ((uint64_t)(int64_t)q0 << 58) + ((uint64_t)(int64_t)q1 << 31) + WIDEN(low);
    return sat ? dt_psel64(WIDEN(MASK(x > p->hif)), p->max, t) : t;
}

/* ---- the common range ------------------------------------------------------------------------ */
/* The code of x (mod 2^64) when it is in the common range, else *out = 1 (the full path converts
 * x). Wrapping, the range takes in |x| >= C (the clamp of the full path: 2^84, 2^116 for a 64-bit
 * target) and NaN, whose code is 0; saturating, x clamped first (a NaN to 0), whose truncation
 * cannot pass a limit; in the modes that see it, a subnormal x is out. Comparisons of the bits by
 * arithmetic (ge64). */
INLINE uint64_t f64_common(double x, const fi_par *p, int mode, int sat, int w64, uint32_t *out)
{
    uint64_t b = dt_bits_of_f64(x), ab = b & ~SIGN64, o, keep;
    if (sat) {
        double y = dt_f64_of_bits(b & (ge64(ab, UINT64_C(0x7FF0000000000001)) - 1)); /* NaN: 0 */
        y = y < p->hi ? y : p->hi;
        y = y > p->lo ? y : p->lo;
        b = dt_bits_of_f64(y);
        o = ge64(b & ~SIGN64, UINT64_C(0x41E0000000000000)); /* |y| >= 2^31 */
        keep = o - 1;
    } else {
        const uint64_t c = w64 ? UINT64_C(0x4730000000000000) : UINT64_C(0x4530000000000000);
        const uint64_t big = ge64(ab, UINT64_C(0x41E0000000000000));
        o = big ^ ge64(ab, c); /* 2^31 <= |x| < C */
        keep = big - 1;
    }
    if (FI_TINY(mode)) {
        o |= nz_below(ab, UINT64_C(0x0010000000000000));
        keep &= o - 1;
    }
    const double y = dt_f64_of_bits(b & keep);
    const int32_t q = (int32_t)y;
    *out = (uint32_t)o;
    if (mode == M_TRUNC)
        return WIDEN(q);
    return WIDEN(q) + step64(y - (double)q, (uint64_t)(q & 1), 0, 0, mode);
}

/* The same on float32 lanes (C: 2^55, 2^88; |x| < 2^31 is below 2^23 when it has a fraction: q +
 * step is an int32). */
INLINE uint32_t f32_common(uint32_t b, const fi_par *p, int mode, int sat, int w64, uint32_t *out)
{
    const uint32_t a = b & 0x7FFFFFFFu;
    const float x = dt_f32_of_bits(b);
    uint32_t o, keep;
    if (sat) {
        float y = dt_f32_of_bits(b & ~ge_m(a, 0x7F800001u)); /* NaN: 0 */
        y = y < p->hif ? y : p->hif;
        y = y > p->lof ? y : p->lof;
        b = dt_bits_of_f32(y);
        o = ge_m(b & 0x7FFFFFFFu, 0x4F000000u); /* |y| >= 2^31 */
        keep = ~o;
    } else {
        const uint32_t big = ge_m(a, 0x4F000000u);
        o = big & ~ge_m(a, w64 ? 0x6B800000u : 0x5B000000u); /* 2^31 <= |x| < C */
        keep = ~big;
    }
    if (FI_TINY(mode)) {
        o |= ~ge_m(a - 1u, 0x007FFFFFu) & ~eq_m0(a); /* a nonzero subnormal */
        keep &= ~o;
    }
    const float y = dt_f32_of_bits(b & keep);
    const int32_t q = (int32_t)y;
    *out = o;
    uint32_t t = (uint32_t)q;
    if (mode != M_TRUNC) {
        const float f = y - (float)q;
        t += FI_STEP(f, 0u - ((uint32_t)q & 1), 0u, 0u, mode);
    }
    if (sat && !w64) /* the limits of 32 bits are no floats: beyond hi, max */
        t = sel(MASK(x > p->hif), (uint32_t)p->max, t);
    return t;
}

/* ---- float16 lanes --------------------------------------------------------------------------- */
/* A float16 as a float32 whose truncation and fraction round like it: below 1/2 only the sign
 * and nonzero-ness matter, so a subnormal becomes 2^-15 * (1 + em/1024) (normal: no flush);
 * Inf and NaN become 0. */
INLINE float f16_val(uint32_t h)
{
    const uint32_t em = h & 0x7FFFu;
    const uint32_t fin = MASK(em - 1u < 0x7BFFu); /* nonzero and finite */
    return dt_f32_of_bits(((h & 0x8000u) << 16) | (((em << 13) + (112u << 23)) & fin));
}

/* float16 -> integers of 32 or 64 bits: |x| < 2^16, one digit; saturating, a negative value
 * clamped to 0 for an unsigned target (lof) and +-Inf to the limits (by the caller). */
INLINE int32_t f16_q(uint32_t h, const fi_par *p, int mode, int sat)
{
    float y = f16_val(h);
    if (sat)
        y = y > p->lof ? y : p->lof;
    const int32_t q = (int32_t)y;
    const float f = y - (float)q;
    const uint32_t odd = 0u - ((uint32_t)q & 1);
    return (int32_t)((uint32_t)q + FI_STEP(f, odd, 0u, 0u, mode));
}
INLINE uint32_t f16_i32(uint32_t h, const fi_par *p, int mode, int sat)
{
    const uint32_t t = (uint32_t)f16_q(h, p, mode, sat);
    if (!sat)
        return t;
    const uint32_t inf = MASK((h & 0x7FFFu) == 0x7C00u), sg = MASK((h & 0x8000u) != 0);
    return sel(inf, (uint32_t)p->inf[0] ^ (sg & (uint32_t)p->inf[1]), t);
}
INLINE uint64_t f16_i64(uint32_t h, const fi_par *p, int mode, int sat)
{
    const uint64_t t = WIDEN(f16_q(h, p, mode, sat));
    if (!sat)
        return t;
    const uint64_t inf = WIDEN(MASK((h & 0x7FFFu) == 0x7C00u));
    const uint64_t sg = WIDEN(MASK((h & 0x8000u) != 0));
    return dt_psel64(inf, p->inf[0] ^ (sg & p->inf[1]), t);
}

/* ---- block functions: one per (source, width, mode, policy) ---------------------------------- */
enum { S_F64, S_F32, S_BF16, S_F16 };

INLINE uint32_t load32(const uint8_t *s, size_t i, int sk)
{
    if (sk == S_F32) {
        uint32_t u;
        memcpy(&u, s + 4 * i, 4);
        return u;
    }
    uint16_t h;
    memcpy(&h, s + 2 * i, 2);
    return sk == S_BF16 ? (uint32_t)h << 16 : h;
}
INLINE double load64(const uint8_t *s, size_t i)
{
    double u;
    memcpy(&u, s + 8 * i, 8);
    return u;
}

/* element i by the common range (out: whether it needs the full path) and by the full path, as
 * W-bit codes (32: mod 2^32) */
INLINE uint32_t common32(const uint8_t *s, size_t i, const fi_par *p, int sk, int mode, int sat,
                         uint32_t *out)
{
    return sk == S_F64 ? (uint32_t)f64_common(load64(s, i), p, mode, sat, 0, out)
                       : f32_common(load32(s, i, sk), p, mode, sat, 0, out);
}
INLINE uint64_t common64(const uint8_t *s, size_t i, const fi_par *p, int sk, int mode, int sat,
                         uint32_t *out)
{
    return sk == S_F64 ? f64_common(load64(s, i), p, mode, sat, 1, out)
                       : WIDEN(f32_common(load32(s, i, sk), p, mode, sat, 1, out));
}
INLINE uint32_t full32(const uint8_t *s, size_t i, const fi_par *p, int sk, int mode, int sat)
{
    return sk == S_F64   ? f64_i32(load64(s, i), p, mode, sat)
           : sk == S_F16 ? f16_i32(load32(s, i, sk), p, mode, sat)
                         : f32_i32(load32(s, i, sk), p, mode, sat);
}
INLINE uint64_t full64(const uint8_t *s, size_t i, const fi_par *p, int sk, int mode, int sat)
{
    return sk == S_F64   ? f64_i64(load64(s, i), p, mode, sat)
           : sk == S_F16 ? f16_i64(load32(s, i, sk), p, mode, sat)
                         : f32_i64(load32(s, i, sk), p, mode, sat);
}

/* W-bit codes (32: mod 2^32). float16 (always in range): every element by its one digit.
 * Others: the common range, then each group of 8 elements holding a flagged one (8 flags read as
 * 4 words) again by the full path (a loop the compiler vectorises: the bound is no constant, so
 * it does not unroll the loop into scalar code). */
#define BLOCK_FN(sk, W, mode, sat)                                                              \
    static void blk_##sk##_##W##_##mode##_##sat(void *restrict out, const uint8_t *restrict src, \
                                                size_t n, const fi_par *pp)                     \
    {                                                                                           \
        const fi_par p = *pp;                                                                   \
        uint##W##_t *o = (uint##W##_t *)out;                                                    \
        if (sk == S_F16) {                                                                      \
            for (size_t i = 0; i < n; i++)                                                      \
                o[i] = full##W(src, i, &p, sk, mode, sat);                                      \
            return;                                                                             \
        }                                                                                       \
        _Alignas(16) uint32_t flag[DT_PBLOCK];                                                  \
        for (size_t i = 0; i < n; i++)                                                          \
            o[i] = common##W(src, i, &p, sk, mode, sat, &flag[i]);                              \
        memset(flag + n, 0, (8 - n % 8) % 8 * 4);                                               \
        for (size_t j = 0; j < n; j += 8) {                                                     \
            uint64_t g[4];                                                                      \
            memcpy(g, flag + j, 32);                                                            \
            if ((g[0] | g[1] | g[2] | g[3]) == 0)                                               \
                continue;                                                                       \
            const size_t to = n - j < 8 ? n : j + 8;                                            \
            for (size_t i = j; i < to; i++)                                                     \
                o[i] = full##W(src, i, &p, sk, mode, sat);                                      \
        }                                                                                       \
    }
#define BLOCK_MODES(sk, W, sat)                                                                 \
    BLOCK_FN(sk, W, M_RNE, sat) BLOCK_FN(sk, W, M_RNA, sat) BLOCK_FN(sk, W, M_FLOOR, sat)       \
    BLOCK_FN(sk, W, M_CEIL, sat) BLOCK_FN(sk, W, M_TRUNC, sat) BLOCK_FN(sk, W, M_ODD, sat)
#define BLOCK_ROW(sk, W, sat)                                                                   \
    {blk_##sk##_##W##_M_RNE_##sat, blk_##sk##_##W##_M_RNA_##sat,                                \
     blk_##sk##_##W##_M_FLOOR_##sat, blk_##sk##_##W##_M_CEIL_##sat,                             \
     blk_##sk##_##W##_M_TRUNC_##sat, blk_##sk##_##W##_M_ODD_##sat}
#define BLOCK_SOURCE(sk)                                                                        \
    BLOCK_MODES(sk, 32, 0) BLOCK_MODES(sk, 32, 1) BLOCK_MODES(sk, 64, 0) BLOCK_MODES(sk, 64, 1)
BLOCK_SOURCE(S_F64)
BLOCK_SOURCE(S_F32)
BLOCK_SOURCE(S_BF16)
BLOCK_SOURCE(S_F16)
#define BLOCK_TABLE(sk)                                                                         \
    {{BLOCK_ROW(sk, 32, 0), BLOCK_ROW(sk, 32, 1)}, {BLOCK_ROW(sk, 64, 0), BLOCK_ROW(sk, 64, 1)}}
/* [source][64-bit][saturating][mode] */
static const fi_block_fn blocks[4][2][2][M_MODES] = {BLOCK_TABLE(S_F64), BLOCK_TABLE(S_F32),
                                                     BLOCK_TABLE(S_BF16), BLOCK_TABLE(S_F16)};

/* ---- the kernel ------------------------------------------------------------------------------ */
static void fint_run(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    fi_par p;
    memcpy(&p, k->local, sizeof p);
    const size_t sb = (size_t)p.sbytes, ob = (size_t)p.obits;
    const uint8_t *s = (const uint8_t *)src + begin * sb;
    uint8_t *d = (uint8_t *)dst + begin * ob / 8;
    /* 32- or 64-bit codes, then narrowed (no aliasing between the members' types) */
    union {
        uint64_t q[DT_PBLOCK];
        uint32_t w[DT_PBLOCK];
    } c;
    union {
        uint8_t b[DT_PBLOCK];
        uint16_t h[DT_PBLOCK];
    } o;
    _Alignas(64) uint8_t packed[DT_PBLOCK];
    const size_t n = end - begin;
    for (size_t i = 0; i < n; i += DT_PBLOCK) { /* i: a multiple of 8 (begin is one too) */
        const size_t m = n - i < DT_PBLOCK ? n - i : DT_PBLOCK;
        dt_prefetch_span(s + i * sb, m * sb);
        p.block(ob == 64 ? (void *)c.q : (void *)c.w, s + i * sb, m, &p);
        if (ob >= 32) {
            memcpy(d + i * ob / 8, c.q, m * ob / 8);
        } else if (ob == 16) {
            for (size_t j = 0; j < m; j++)
                o.h[j] = (uint16_t)c.w[j];
            memcpy(d + i * 2, o.h, m * 2);
        } else {
            for (size_t j = 0; j < m; j++)
                o.b[j] = (uint8_t)c.w[j];
            if (ob == 8) {
                memcpy(d + i, o.b, m);
            } else {
                const size_t m8 = (m + 7) & ~(size_t)7;
                memset(o.b + m, 0, m8 - m);
                dt_ppack(packed, o.b, m8 * ob / 8, (int)ob);
                memcpy(d + i * ob / 8, packed, (m * ob + 7) / 8);
            }
        }
    }
}

/* ---- the finder ------------------------------------------------------------------------------ */
/* The largest float of P significant bits at most 2^k - 1. */
static double below_pow2(int k, int P)
{
    return k > P ? ldexp(1.0, k) - ldexp(1.0, k - P) : ldexp(1.0, k) - 1.0;
}

bool dt_pfloat_int_find(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r)
{
    const int mode = dt_mode_of(r->round), ob = df->stride_bits, bits = df->bits;
    const int sk = sf->type == DTCAST_FLOAT64    ? S_F64
                   : sf->type == DTCAST_FLOAT32  ? S_F32
                   : sf->type == DTCAST_BFLOAT16 ? S_BF16
                   : sf->type == DTCAST_FLOAT16  ? S_F16 : -1;
    if (sk < 0 || mode < 0 || (df->tc != DT_TC_SINT && df->tc != DT_TC_UINT) ||
        (ob >= 8 && ob != bits) || bits > 64 || (sk != S_F64 && bits < 32))
        return false;
    fi_par p;
    memset(&p, 0, sizeof p);
    const bool sg = df->tc == DT_TC_SINT, w64 = bits == 64, sat = r->saturate_int;
    const int kmax = sg ? bits - 1 : bits; /* max = 2^kmax - 1 */
    p.block = blocks[sk][w64][sat][mode];
    p.obits = ob;
    p.sbytes = sf->stride_bits / 8;
    p.max = w64 && !sg ? ~UINT64_C(0) : (UINT64_C(1) << kmax) - 1;
    if (sat) {
        p.lo = sg ? -ldexp(1.0, bits - 1) : 0.0;
        p.hi = below_pow2(kmax, 53);
        p.lof = (float)p.lo;
        p.hif = (float)below_pow2(kmax, 24);
        if (sk == S_F16 && sg) /* a negative float16 stays as it is */
            p.lof = -0x1p16f;
        const uint64_t min = sg ? (uint64_t)0 - (UINT64_C(1) << (bits - 1)) : 0;
        p.inf[0] = p.max;
        p.inf[1] = p.max ^ min;
    } else {
        const int c = sk == S_F64 ? (w64 ? 116 : 84) : (w64 ? 88 : 55);
        p.hi = ldexp(1.0, c);
        p.lo = -p.hi;
        p.hif = (float)p.hi;
        p.lof = -p.hif;
    }
    _Static_assert(sizeof p <= sizeof k->local, "the constants fit the kernel's bytes");
    memcpy(k->local, &p, sizeof p);
    k->fn = fint_run;
    return true;
}
