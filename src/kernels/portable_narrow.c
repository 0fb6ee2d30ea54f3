/* The portable narrowing kernels: float32, float16, bfloat16 and float64 (rounded to odd into
 * float32 first) -> floats of at most 16 bits, float8e8m0, integers of at most 16 bits and bool,
 * in every rounding mode; and float64 -> float32. The same rules as kernels_tmpl.h, written
 * per element as branch-free C (selects, shifts by loop invariants) so that gcc and clang
 * vectorise the loops with whatever vectors the target has (SSE2 on x86-64, NEON on aarch64).
 *
 * The one per-lane shift of the template (a target subnormal: the significand shifted right by
 * an amount that depends on the exponent) has no SSE2 instruction, so it is done with exact
 * float arithmetic instead: the value scaled so that the quantum is 1 (an exponent-field add,
 * exact), truncated to an integer, and the fraction compared with 1/2. Every float operand and
 * result there is a normal number or zero, so flush-to-zero/denormals-are-zero modes and the
 * rounding mode never change a bit. */
#include "portable.h"

enum { S_F32, S_F16, S_BF16, S_F64 };

#define INLINE DT_PINLINE
/* the index of the high half of a 64-bit element (as two 32-bit words in memory) */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define DT_PHI 0
#else
#define DT_PHI 1
#endif
#define MASK DT_PMASK
#define sel dt_psel
/* a < b, a == b and x != 0 as masks by arithmetic alone: no comparison for gcc's jump threading
 * to correlate with others (it then turns chains of selects into branches, as the aarch64
 * compiler did with the float64 exponent tests, and stops vectorising); a < b for
 * |a - b| < 2^31, a == b for a ^ b < 2^31 (unsigned arithmetic: no overflow) */
INLINE uint32_t lt_m(int32_t a, int32_t b) { return 0u - (((uint32_t)a - (uint32_t)b) >> 31); }
INLINE uint32_t eq_m(int32_t a, int32_t b) { return 0u - (((uint32_t)(a ^ b) - 1u) >> 31); }
INLINE uint32_t nz_m(uint32_t x) { return 0u - ((x | (0u - x)) >> 31); }

/* ---- sources -> float32 bits --------------------------------------------------------------- */
/* float16 -> float32 bits (NaN payloads kept: the targets need only NaN-ness). A subnormal is
 * em * 2^-24: the float of em, scaled (exact, and +0 in every rounding mode). */
INLINE uint32_t f16_bits(uint32_t h)
{
    const uint32_t em = h & 0x7FFFu, s = (h & 0x8000u) << 16, o = em << 13;
    const uint32_t sub = dt_bits_of_f32((float)(int32_t)em * 0x1p-24f);
    uint32_t r = o + ((int32_t)em >= 0x7C00 ? 224u << 23 : 112u << 23);
    r = (int32_t)em < 0x0400 ? sub : r;
    return s | r;
}

/* float64 (as its two 32-bit halves) -> float32 bits rounded to odd, as dt_f64_to_f32_odd
 * (NaN canonical). The float32-subnormal range: the top 24 significand bits mh scaled by
 * 2^(e - 897) are a normal float32 of exponent field e - 747 (e >= 748; below, |x| is far under
 * half the quantum); its truncation and fraction, with the 29 low bits as extra sticky. */
INLINE uint32_t f64_odd_bits(uint32_t hi, uint32_t lo)
{
    const uint32_t ahi = hi & 0x7FFFFFFFu;
    const int32_t e = (int32_t)(ahi >> 20);
    const uint32_t top = (ahi << 3) | (lo >> 29), ml = lo & 0x1FFFFFFFu;
    const uint32_t nrm = (top - (896u << 23)) | (nz_m(ml) & 1);
    const uint32_t yb = (top - (747u << 23)) & (~lt_m(e, 748) & lt_m(e, 897));
    const float y = dt_f32_of_bits(yb);
    const int32_t t = (int32_t)y;
    const uint32_t lost = (MASK(y != (float)t) | nz_m(ml) | (lt_m(e, 748) & nz_m(ahi | lo))) & 1;
    uint32_t r = sel(lt_m(e, 897), (uint32_t)t | lost, nrm);
    r = sel(lt_m(1150, e), 0x7F7FFFFFu, r);
    r = sel(eq_m(e, 2047), sel(nz_m((ahi & 0xFFFFFu) | lo), 0x7FC00000u, 0x7F800000u), r);
    return (hi & 0x80000000u) | r;
}

/* float64 -> float32 bits rounded to odd, except below float32's normal range, where any tiny
 * nonzero of the same sign stands in (1: 2^-149): every narrow float target below bfloat16's
 * range has its half quantum far above 2^-126, so such a value rounds like the exact one. */
INLINE uint32_t f64_odd_bits_n(uint32_t hi, uint32_t lo)
{
    const uint32_t ahi = hi & 0x7FFFFFFFu;
    const int32_t e = (int32_t)(ahi >> 20);
    const uint32_t top = (ahi << 3) | (lo >> 29), ml = lo & 0x1FFFFFFFu;
    const uint32_t nrm = (top - (896u << 23)) | (nz_m(ml) & 1);
    uint32_t r = sel(lt_m(e, 897), nz_m(ahi | lo) & 1, nrm);
    r = sel(lt_m(1150, e), 0x7F7FFFFFu, r);
    r = sel(eq_m(e, 2047), sel(nz_m((ahi & 0xFFFFFu) | lo), 0x7FC00000u, 0x7F800000u), r);
    return (hi & 0x80000000u) | r;
}

/* Element i as float32 bits; tiny: float64 values below float32's normal range may stand as any
 * tiny nonzero (f64_odd_bits_n) */
INLINE uint32_t load_bits(const uint8_t *s, size_t i, int sk, int tiny)
{
    if (sk == S_F32) {
        uint32_t u;
        memcpy(&u, s + 4 * i, 4);
        return u;
    }
    if (sk == S_F64) {
        uint64_t u;
        memcpy(&u, s + 8 * i, 8);
        return tiny ? f64_odd_bits_n((uint32_t)(u >> 32), (uint32_t)u)
                    : f64_odd_bits((uint32_t)(u >> 32), (uint32_t)u);
    }
    uint16_t h;
    memcpy(&h, s + 2 * i, 2);
    return sk == S_F16 ? f16_bits(h) : (uint32_t)h << 16; /* bfloat16: NaN-ness is kept */
}

/* bool: whether the element is nonzero (its bits but the sign) */
INLINE uint32_t bool_bits(const uint8_t *s, size_t i, int sk)
{
    if (sk == S_F32) {
        uint32_t u;
        memcpy(&u, s + 4 * i, 4);
        return MASK((u & 0x7FFFFFFFu) != 0) & 1;
    }
    if (sk == S_F64) {
        uint32_t lo, hi;
        memcpy(&lo, s + 8 * i + 4 * (1 - DT_PHI), 4);
        memcpy(&hi, s + 8 * i + 4 * DT_PHI, 4);
        return MASK(((hi & 0x7FFFFFFFu) | lo) != 0) & 1;
    }
    uint16_t h;
    memcpy(&h, s + 2 * i, 2);
    return MASK((h & 0x7FFFu) != 0) & 1;
}

/* ---- float32 bits -> codes ------------------------------------------------------------------- */
/* Narrow floats (bias <= 127), by class (chosen at compile time, so the common cases skip the
 * selects they do not need):
 *   F      NaN and -0, subnormals (float16, float8 IEEE and fn)
 *   FNUZ   NaN is 0x80, no -0 (float8 fnuz)
 *   FNONAN no NaN (float6, float4e2m1: a NaN's code depends on its sign)
 *   FBF    bfloat16: float32's exponent range, so no target subnormal needs a shift of its own;
 *          FBF_NC: rne/rna without saturation, where the rounding carry alone gives Inf.
 * Normal results: a - vn_off keeps the target's biased exponent above the significand, shifted
 * right by the invariant d and rounded (a carry moves into the exponent). Subnormal results: |x|
 * in units of the quantum (a + ksub as a float, exact), rounded via its truncation and fraction.
 * Overflow: the overflow code is max or max + 1 (Inf, or the NaN that stands for it), so a min
 * clamps. Then Inf in the directed modes, NaN, the sign. */
enum { C_F, C_FNUZ, C_FNONAN, C_FBF, C_FBF_NC };

INLINE uint32_t narrow_float(uint32_t x, const dt_pnarrow *p, int mode, int cls)
{
    const uint32_t a = x & 0x7FFFFFFFu, sg = x >> 31, negm = 0u - sg;
    const int bf = cls == C_FBF || cls == C_FBF_NC;
    const uint32_t d = p->d, vn = bf ? a : a - p->vn_off;
    uint32_t c = dt_pround_shift(vn, d, p->hm1, p->dmask, negm, mode);
    if (!bf) {
        /* a + ksub wraps for large lanes (not selected); the min keeps the conversion defined.
         * A float32 subnormal lane becomes a tiny normal (below 1/2: it rounds like one), a
         * zero lane a tiny nonzero, hence the a != 0 in the sticky bit. */
        /* (a wrapped lane, yb >= 2^31 but below 0x8C000000, is clamped too) */
        const uint32_t yb = a + p->ksub;
        const float y = dt_f32_of_bits(sel(lt_m((int32_t)yb, 0x4B800000), yb, 0x4B800000u)); /* <= 2^24 */
        const int32_t ti = (int32_t)y;
        const float f = y - (float)ti;
        uint32_t t = (uint32_t)ti;
        const uint32_t nz = MASK(f != 0.0f) & MASK(a != 0);
        switch (mode) {
        case M_RNE: t += (MASK(f > 0.5f) | (MASK(f == 0.5f) & t)) & 1; break;
        case M_RNA: t += MASK(f >= 0.5f) & 1; break;
        case M_FLOOR: t += nz & sg; break;
        case M_CEIL: t += nz & (sg ^ 1); break;
        case M_TRUNC: break;
        default: t |= nz & 1; break;
        }
        c = (int32_t)(a >> 23) < p->sub_lim ? t : c;
    }
    const int near = mode == M_RNE || mode == M_RNA;
    if (cls != C_FBF_NC) {
        const uint32_t ovf = near ? p->ovf0 : p->ovf0 ^ (negm & p->ovfx);
        c = (int32_t)c < (int32_t)ovf ? c : ovf;
        if (!near) /* else Inf overflows to the Inf code already */
            c = a == 0x7F800000u ? p->inf0 ^ (negm & p->infx) : c;
    }
    if (cls == C_FNONAN) {
        c |= negm & p->sign;
        return (int32_t)a > 0x7F800000 ? p->nan0 ^ (negm & p->nanx) : c;
    }
    c = (int32_t)a > 0x7F800000 ? p->nan0 : c; /* NaN's magnitude: the sign follows */
    if (cls == C_FNUZ)
        return c | (negm & p->sign & MASK(c != 0));
    return c | (negm & p->sign);
}

/* float8e8m0: the power of two nearest |x| per mode (as the template: the sign is ignored). */
INLINE uint32_t narrow_e8m0(uint32_t x, const dt_pnarrow *p, int mode)
{
    const uint32_t bias = mode == M_CEIL ? (1u << 23) - 1
                          : (mode == M_RNE || mode == M_RNA) ? 1u << 22 : 0;
    const uint32_t a = x & 0x7FFFFFFFu;
    const uint32_t cn = (a + bias) >> 23;
    const uint32_t ys = ((a << 1) + bias) >> 23;
    const uint32_t cs = ys + MASK(ys != 0);
    uint32_t c = (int32_t)a < 0x800000 ? cs : cn;
    c = (int32_t)c > p->maxc ? (uint32_t)p->maxc : c;
    return (int32_t)a > 0x7F7FFFFF ? 0xFFu : c;
}

/* The mode's rounding of t + f (0 <= f < 1) for a value of sign sg; nz: f != 0 (all ones). */
INLINE uint32_t round_tf(uint32_t t, float f, uint32_t sg, uint32_t nz, int mode)
{
    switch (mode) {
    case M_RNE: return t + ((MASK(f > 0.5f) | (MASK(f == 0.5f) & t)) & 1);
    case M_RNA: return t + (MASK(f >= 0.5f) & 1);
    case M_FLOOR: return t + (nz & sg);
    case M_CEIL: return t + (nz & (sg ^ 1));
    case M_TRUNC: return t;
    default: return t | (nz & 1);
    }
}

/* Integers of at most 16 bits. Wrap: |x| modulo 2^16 in float (|x| clamped to 2^39, a multiple
 * of 2^16 like every larger value, so NaN and Inf give 0 as dt_encode; the floor of y / 2^16
 * through an integer conversion; the remainder is exact), its truncation and fraction, the mode's
 * rounding, the low bits of the two's complement. Saturate: |x| clamped to the limit of its sign
 * first (rounding cannot pass an integer limit). A float32 subnormal lane may be flushed
 * (FTZ/DAZ): its sticky bit comes from the bits instead. */
INLINE uint32_t narrow_int16(uint32_t x, const dt_pnarrow *p, int mode, int sat)
{
    const uint32_t a = x & 0x7FFFFFFFu, sg = x >> 31, negm = 0u - sg;
    float r;
    uint32_t subnz = MASK((int32_t)a < 0x800000) & MASK(a != 0);
    if (sat) {
        const uint32_t limb = p->limf0 ^ (negm & p->limfx), below = lt_m((int32_t)a, (int32_t)limb);
        r = dt_f32_of_bits(sel(below, a, limb)); /* NaN: lim, replaced below */
        subnz &= below;                          /* not when clamped to 0 */
    } else {
        const float y = dt_f32_of_bits(sel(lt_m((int32_t)a, 0x53000000), a, 0x53000000u)); /* <= 2^39 */
        /* y / 2^16 by the exponent's bits: a multiply gives a subnormal for |x| < 2^-110, and
         * each costs a microcode assist of about 150 cycles where the environment does not
         * flush (the pair ran 2.8x slower on small values); below 2^-110 the difference is
         * negative, taken as 0 */
        const uint32_t qb = dt_bits_of_f32(y) - (16u << 23);
        const float zf = (float)(int32_t)dt_f32_of_bits(qb & ~(uint32_t)((int32_t)qb >> 31));
        r = y - zf * 0x1p16f;
    }
    const int32_t ti = (int32_t)r;
    const float f = r - (float)ti;
    const uint32_t nz = MASK(f != 0.0f) | subnz;
    const uint32_t m = round_tf((uint32_t)ti, f, sg, nz, mode);
    const uint32_t c = ((m ^ negm) - negm) & p->imask;
    return sat ? c & MASK((int32_t)a <= 0x7F800000) : c;
}

/* (the float targets of narrow_elem first) */
enum { K_F, K_FNUZ, K_FNONAN, K_FBF, K_FBF_NC, K_E8M0, K_I16W, K_I16S, K_BOOL };

INLINE uint32_t narrow_any(uint32_t x, const dt_pnarrow *p, int kind, int mode)
{
    switch (kind) {
    case K_F: return narrow_float(x, p, mode, C_F);
    case K_FNUZ: return narrow_float(x, p, mode, C_FNUZ);
    case K_FNONAN: return narrow_float(x, p, mode, C_FNONAN);
    case K_FBF: return narrow_float(x, p, mode, C_FBF);
    case K_FBF_NC: return narrow_float(x, p, mode, C_FBF_NC);
    case K_E8M0: return narrow_e8m0(x, p, mode);
    case K_I16W: return narrow_int16(x, p, mode, 0);
    case K_I16S: return narrow_int16(x, p, mode, 1);
    default: return MASK((x & 0x7FFFFFFFu) != 0) & 1;
    }
}

/* Element i of src, of source sk, as code (K_F, K_FNUZ, K_FNONAN: float targets whose half
 * quantum lies far above float32's normal range) */
INLINE uint32_t narrow_elem(const uint8_t *src, size_t i, const dt_pnarrow *p, int sk, int kind,
                            int mode)
{
    return narrow_any(load_bits(src, i, sk, kind <= K_FNONAN), p, kind, mode);
}

/* ---- block functions: one per (source, kind, mode, code width) -------------------------------- */
/* The codes go through a uint32 array: a loop over 4-lane vectors (SSE2) keeps its constants
 * in registers, where one producing 16 bytes per step (4 vectors at once) spills them. */
#define BLOCK_FN(sk, kind, mode, T)                                                             \
    static void blk_##sk##_##kind##_##mode##_##T(void *out, const uint8_t *src, size_t n,       \
                                                 const dt_pnarrow *pp)                          \
    {                                                                                           \
        const dt_pnarrow p = *pp;                                                               \
        _Alignas(64) uint32_t c[DT_PBLOCK];                                                     \
        if (kind == K_BOOL) /* nonzero (NaN too): from the bits as they are */                 \
            for (size_t i = 0; i < n; i++)                                                      \
                c[i] = bool_bits(src, i, sk);                                                   \
        else                                                                                    \
            for (size_t i = 0; i < n; i++)                                                      \
                c[i] = narrow_elem(src, i, &p, sk, kind, mode);                             \
        T *o = (T *)out;                                                                        \
        for (size_t i = 0; i < n; i++)                                                          \
            o[i] = (T)c[i];                                                                     \
    }
/* The modes of a (source, kind, code width): rne, the default and what nearly every caller asks
 * for, has its own block function with the mode folded in (into integers trunc too, below); the
 * others (rna, floor, ceil, trunc, odd) call one body that takes the mode at run time, as
 * kernels_tmpl.h does (six folded bodies per row at -O3 were 21 of the file's 27 CPU s of
 * compile time; BENCHMARKS.md, "one body for the directed modes", has the cost). DT_KERNEL_RUNTIME_MODES (the sanitizer build):
 * rne through that body too (kernels_tmpl.h says why). */
#define BLOCK_MODE_FN(sk, kind, mode, T)                                                        \
    static void blk_##sk##_##kind##_##mode##_##T(void *out, const uint8_t *src, size_t n,       \
                                                 const dt_pnarrow *pp)                          \
    {                                                                                           \
        blk_rt_##sk##_##kind##_##T(out, src, n, pp, mode);                                      \
    }
#if defined(DT_KERNEL_RUNTIME_MODES)
#define BLOCK_RNE(sk, kind, T) BLOCK_MODE_FN(sk, kind, M_RNE, T)
#else
#define BLOCK_RNE(sk, kind, T) BLOCK_FN(sk, kind, M_RNE, T)
#endif
#define BLOCK_MODES(sk, kind, T)                                                                \
    static DT_NOCLONE void blk_rt_##sk##_##kind##_##T(void *out, const uint8_t *src, size_t n,  \
                                                      const dt_pnarrow *pp, int mode)           \
    {                                                                                           \
        const dt_pnarrow p = *pp;                                                               \
        _Alignas(64) uint32_t c[DT_PBLOCK];                                                     \
        for (size_t i = 0; i < n; i++)                                                          \
            c[i] = narrow_elem(src, i, &p, sk, kind, mode);                                     \
        T *o = (T *)out;                                                                        \
        for (size_t i = 0; i < n; i++)                                                          \
            o[i] = (T)c[i];                                                                     \
    }                                                                                           \
    BLOCK_RNE(sk, kind, T) BLOCK_MODE_FN(sk, kind, M_RNA, T)                                    \
    BLOCK_MODE_FN(sk, kind, M_FLOOR, T) BLOCK_MODE_FN(sk, kind, M_CEIL, T)                      \
    BLOCK_TRUNC_##kind(sk, kind, T) BLOCK_MODE_FN(sk, kind, M_ODD, T)
/* Truncation is the default of float -> integer conversions (C's cast, NumPy's astype): into
 * integers it has a folded body of its own too (through the shared one it ran at a fifth of the
 * speed); float targets take it through the shared one. */
#define BLOCK_TRUNC_FOLDED(sk, kind, T) BLOCK_FN(sk, kind, M_TRUNC, T)
#if defined(DT_KERNEL_RUNTIME_MODES)
#undef BLOCK_TRUNC_FOLDED
#define BLOCK_TRUNC_FOLDED(sk, kind, T) BLOCK_MODE_FN(sk, kind, M_TRUNC, T)
#endif
#define BLOCK_TRUNC_K_I16W BLOCK_TRUNC_FOLDED
#define BLOCK_TRUNC_K_I16S BLOCK_TRUNC_FOLDED
#define BLOCK_TRUNC_K_F(sk, kind, T) BLOCK_MODE_FN(sk, kind, M_TRUNC, T)
#define BLOCK_TRUNC_K_FNUZ BLOCK_TRUNC_K_F
#define BLOCK_TRUNC_K_FNONAN BLOCK_TRUNC_K_F
#define BLOCK_TRUNC_K_FBF BLOCK_TRUNC_K_F
#define BLOCK_TRUNC_K_E8M0 BLOCK_TRUNC_K_F
#define BLOCK_ROW(sk, kind, T)                                                                  \
    {blk_##sk##_##kind##_M_RNE_##T, blk_##sk##_##kind##_M_RNA_##T,                               \
     blk_##sk##_##kind##_M_FLOOR_##T, blk_##sk##_##kind##_M_CEIL_##T,                            \
     blk_##sk##_##kind##_M_TRUNC_##T, blk_##sk##_##kind##_M_ODD_##T}

#define BLOCK_SOURCE(sk)                                                                        \
    BLOCK_MODES(sk, K_F, uint8_t)                                                               \
    BLOCK_MODES(sk, K_F, uint16_t)                                                              \
    BLOCK_MODES(sk, K_FNUZ, uint8_t)                                                            \
    BLOCK_MODES(sk, K_FNONAN, uint8_t)                                                          \
    BLOCK_MODES(sk, K_FBF, uint16_t)                                                            \
    BLOCK_FN(sk, K_FBF_NC, M_RNE, uint16_t)                                                     \
    BLOCK_FN(sk, K_FBF_NC, M_RNA, uint16_t)                                                     \
    BLOCK_MODES(sk, K_E8M0, uint8_t)                                                            \
    BLOCK_FN(sk, K_BOOL, M_RNE, uint8_t)
#define BLOCK_INTS(sk)                                                                          \
    BLOCK_MODES(sk, K_I16W, uint8_t)                                                            \
    BLOCK_MODES(sk, K_I16W, uint16_t)                                                           \
    BLOCK_MODES(sk, K_I16S, uint8_t)                                                            \
    BLOCK_MODES(sk, K_I16S, uint16_t)
BLOCK_SOURCE(S_F32)
BLOCK_SOURCE(S_F16)
BLOCK_SOURCE(S_BF16)
BLOCK_SOURCE(S_F64)
BLOCK_INTS(S_F32)
BLOCK_INTS(S_F16)
BLOCK_INTS(S_BF16)

/* [source][mode] per (kind, code width) */
#define BLOCK_TABLE(kind, T)                                                                    \
    static const dt_pblock_fn tab_##kind##_##T[4][6] = {                                        \
        BLOCK_ROW(S_F32, kind, T), BLOCK_ROW(S_F16, kind, T), BLOCK_ROW(S_BF16, kind, T),       \
        BLOCK_ROW(S_F64, kind, T)};
#define BLOCK_TABLE_INT(kind, T)                                                                \
    static const dt_pblock_fn tab_##kind##_##T[4][6] = {                                        \
        BLOCK_ROW(S_F32, kind, T), BLOCK_ROW(S_F16, kind, T), BLOCK_ROW(S_BF16, kind, T),       \
        {NULL}};
BLOCK_TABLE(K_F, uint8_t)
BLOCK_TABLE(K_F, uint16_t)
BLOCK_TABLE(K_FNUZ, uint8_t)
BLOCK_TABLE(K_FNONAN, uint8_t)
BLOCK_TABLE(K_FBF, uint16_t)
BLOCK_TABLE(K_E8M0, uint8_t)
BLOCK_TABLE_INT(K_I16W, uint8_t)
BLOCK_TABLE_INT(K_I16W, uint16_t)
BLOCK_TABLE_INT(K_I16S, uint8_t)
BLOCK_TABLE_INT(K_I16S, uint16_t)
#define NC_ROW(sk) {blk_##sk##_K_FBF_NC_M_RNE_uint16_t, blk_##sk##_K_FBF_NC_M_RNA_uint16_t}
static const dt_pblock_fn tab_K_FBF_NC_uint16_t[4][2] = {NC_ROW(S_F32), NC_ROW(S_F16),
                                                         NC_ROW(S_BF16), NC_ROW(S_F64)};
static const dt_pblock_fn tab_bool[4] = {blk_S_F32_K_BOOL_M_RNE_uint8_t,
                                         blk_S_F16_K_BOOL_M_RNE_uint8_t,
                                         blk_S_BF16_K_BOOL_M_RNE_uint8_t,
                                         blk_S_F64_K_BOOL_M_RNE_uint8_t};

/* ---- packing sub-byte codes (element 2k in the low nibble, as ONNX) ------------------------- */
void dt_ppack(uint8_t *o, const uint8_t *c, size_t bytes, int obits)
{
    switch (obits) {
    case 4:
        for (size_t j = 0; j < bytes; j++)
            o[j] = (uint8_t)((c[2 * j] & 0xF) | (c[2 * j + 1] & 0xF) << 4);
        break;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    case 2: /* 4 codes (bytes) -> 1 byte: one multiply gathers code j at bits 2j */
        for (size_t j = 0; j < bytes; j++) {
            uint32_t u;
            memcpy(&u, c + 4 * j, 4);
            o[j] = (uint8_t)(((uint64_t)(u & 0x03030303u) * 0x41041u) >> 18);
        }
        break;
    default: /* 8 codes (bytes) -> 1 byte: code j at bit j */
        for (size_t j = 0; j < bytes; j++) {
            uint64_t u;
            memcpy(&u, c + 8 * j, 8);
            o[j] = (uint8_t)(((u & UINT64_C(0x0101010101010101)) * UINT64_C(0x0102040810204080)) >> 56);
        }
        break;
#else
    case 2:
        for (size_t j = 0; j < bytes; j++)
            o[j] = (uint8_t)((c[4 * j] & 3) | (c[4 * j + 1] & 3) << 2 | (c[4 * j + 2] & 3) << 4 |
                             (c[4 * j + 3] & 3) << 6);
        break;
    default:
        for (size_t j = 0; j < bytes; j++) {
            unsigned b = 0;
            for (unsigned q = 0; q < 8; q++)
                b |= (c[8 * j + q] & 1u) << q;
            o[j] = (uint8_t)b;
        }
        break;
#endif
    }
}

/* ---- the kernel ---------------------------------------------------------------------------- */
void dt_pnarrow_run(const dt_pnarrow *pp, void *dst, const void *src, size_t begin, size_t end)
{
    const dt_pnarrow p = *pp;
    const size_t sb = (size_t)p.sbytes, ob = (size_t)p.obits;
    const uint8_t *s = (const uint8_t *)src + begin * sb;
    uint8_t *d = (uint8_t *)dst + begin * ob / 8;
    /* the block writes codes of its own type into the matching member (no aliasing between
     * types); they leave as bytes */
    union {
        uint8_t b[DT_PBLOCK];
        uint16_t h[DT_PBLOCK];
    } out;
    _Alignas(64) uint8_t packed[DT_PBLOCK];
    void *const codes_out = ob == 16 ? (void *)out.h : (void *)out.b;
    uint8_t *const codes = out.b;
    const size_t n = end - begin;
    for (size_t i = 0; i < n; i += DT_PBLOCK) { /* i: a multiple of 8 (begin is one too) */
        const size_t m = n - i < DT_PBLOCK ? n - i : DT_PBLOCK;
        dt_prefetch_span(s + i * sb, m * sb);
        p.block(codes_out, s + i * sb, m, &p);
        if (ob >= 8) {
            memcpy(d + i * ob / 8, codes_out, m * ob / 8);
        } else {
            const size_t m8 = (m + 7) & ~(size_t)7;
            memset(codes + m, 0, m8 - m);
            dt_ppack(packed, codes, m8 * ob / 8, (int)ob);
            memcpy(d + i * ob / 8, packed, (m * ob + 7) / 8);
        }
    }
}

static void pnarrow_run(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    dt_pnarrow p;
    memcpy(&p, k->local, sizeof p);
    dt_pnarrow_run(&p, dst, src, begin, end);
}

/* ---- the picker ---------------------------------------------------------------------------- */
static int source_kind(const dt_format *sf)
{
    switch (sf->type) {
    case DTCAST_FLOAT32: return S_F32;
    case DTCAST_FLOAT16: return S_F16;
    case DTCAST_BFLOAT16: return S_BF16;
    case DTCAST_FLOAT64: return S_F64;
    default: return -1;
    }
}

dt_kernel_fn dt_pnarrow_pick(const dt_format *df, const dt_format *sf, const dt_rules *r,
                             dt_pnarrow *p)
{
    memset(p, 0, sizeof *p);
    const int sk = source_kind(sf);
    const int mode = dt_mode_of(r->round), ob = df->stride_bits;
    if (sk < 0 || mode < 0)
        return NULL;
    if (ob != 1 && ob != 2 && ob != 4 && ob != 8 && ob != 16)
        return NULL;
    dt_narrow n;
    if (!dt_narrow_setup(&n, df, dt_format_of(DTCAST_FLOAT32), r))
        return NULL;
    p->obits = ob;
    p->sbytes = sf->stride_bits / 8;
    if (df->tc == DT_TC_BOOL) {
        p->block = tab_bool[sk];
    } else if (df->tc == DT_TC_E8M0) {
        if (ob != 8)
            return NULL;
        p->maxc = (int32_t)n.maxc;
        p->block = tab_K_E8M0_uint8_t[sk][mode];
    } else if (df->tc == DT_TC_SINT || df->tc == DT_TC_UINT) {
        if (sk == S_F64 || df->bits > 16) /* float64, 32 and 64 bits: portable_fint.c */
            return NULL;
        p->imask = n.imask;
        p->imax = n.imax;
        p->isat = n.isat;
        p->limf0 = dt_bits_of_f32((float)n.imax);
        p->limfx = p->limf0 ^ dt_bits_of_f32((float)n.imin_mag);
        if (n.isat)
            p->block = ob == 16 ? tab_K_I16S_uint16_t[sk][mode] : tab_K_I16S_uint8_t[sk][mode];
        else
            p->block = ob == 16 ? tab_K_I16W_uint16_t[sk][mode] : tab_K_I16W_uint8_t[sk][mode];
    } else if (df->tc == DT_TC_FLOAT && df->bias <= 127 && df->bias >= 1 && ob <= 16) {
        const uint32_t M = (uint32_t)df->man_bits, B = (uint32_t)df->bias;
        p->d = 23 - M;
        p->hm1 = (1u << (p->d - 1)) - 1;
        p->dmask = (1u << p->d) - 1;
        p->vn_off = (n.ec_hi - 1) << 23;
        p->ksub = (B + M - 1) << 23;
        p->sub_lim = n.ec_hi > 1 ? (int32_t)n.ec_hi : 0;
        p->maxc = (int32_t)n.maxc;
        p->ovf0 = n.ovf[0];
        p->ovfx = n.ovf[0] ^ n.ovf[1];
        p->inf0 = n.inf[0];
        p->infx = n.inf[0] ^ n.inf[1];
        p->nan0 = n.nan[0];
        p->nanx = n.nan[0] ^ n.nan[1];
        p->sign = n.sign;
        /* the classes' assumptions (true of every format; else no kernel) */
        for (int neg = 0; neg < 2; neg++)
            if (n.ovf[neg] != n.maxc && n.ovf[neg] != n.maxc + 1)
                return NULL;
        if ((mode == M_RNE || mode == M_RNA) && p->ovfx)
            return NULL;
        /* a float32 subnormal lies below half the target's quantum (the largest B + M - 1 of a
         * format with subnormals of its own is 24) */
        if (n.ec_hi > 1 && B + M - 1 > 100)
            return NULL;
        const bool nan_signed = n.nan[1] == (n.nan[0] | n.sign);
        if (n.ec_hi == 1) { /* bfloat16 */
            if (ob != 16 || !n.keep_neg_zero || !nan_signed)
                return NULL;
            p->block = (mode == M_RNE || mode == M_RNA) && n.ovf[0] == n.maxc + 1
                           ? tab_K_FBF_NC_uint16_t[sk][mode]
                           : tab_K_FBF_uint16_t[sk][mode];
        } else if (df->nan == DT_NAN_NONE) {
            if (ob > 8 || !n.keep_neg_zero)
                return NULL;
            p->block = tab_K_FNONAN_uint8_t[sk][mode];
        } else if (df->nan == DT_NAN_FNUZ) {
            if (ob > 8 || n.keep_neg_zero || n.nan[0] != n.sign || n.nan[1] != n.sign)
                return NULL;
            p->block = tab_K_FNUZ_uint8_t[sk][mode];
        } else {
            if (!n.keep_neg_zero || !nan_signed)
                return NULL;
            p->block = ob == 16 ? tab_K_F_uint16_t[sk][mode] : tab_K_F_uint8_t[sk][mode];
        }
    } else {
        return NULL;
    }
    return p->block ? pnarrow_run : NULL;
}

/* ---- float64 -> float32 in every mode --------------------------------------------------------- */
/* As f64_odd_bits, with the mode's rounding; ovf: the result of an overflow (per sign), inf: of
 * an infinite input. */
INLINE uint32_t f64_f32_elem(uint32_t hi, uint32_t lo, int mode, uint32_t ovf0, uint32_t ovfx,
                             uint32_t inf)
{
    const uint32_t sg = hi >> 31, negm = 0u - sg, ahi = hi & 0x7FFFFFFFu;
    const int32_t e = (int32_t)(ahi >> 20);
    const uint32_t top = (ahi << 3) | (lo >> 29), ml = lo & 0x1FFFFFFFu;
    /* normal float32 results: 29 bits dropped */
    uint32_t kn = top - (896u << 23);
    const uint32_t half = (lo >> 28) & 1, st = nz_m(lo & 0x0FFFFFFFu) & 1;
    switch (mode) {
    case M_RNE: kn += half & (st | (kn & 1)); break;
    case M_RNA: kn += half; break;
    case M_FLOOR: kn += (half | st) & sg; break;
    case M_CEIL: kn += (half | st) & (sg ^ 1); break;
    case M_TRUNC: break;
    default: kn |= half | st; break;
    }
    /* subnormal float32 results */
    const uint32_t yb = (top - (747u << 23)) & (~lt_m(e, 748) & lt_m(e, 897));
    const float y = dt_f32_of_bits(yb);
    const int32_t ti = (int32_t)y;
    const float f = y - (float)ti;
    uint32_t t = (uint32_t)ti;
    const uint32_t mlnz = nz_m(ml);
    const uint32_t nz = MASK(f != 0.0f) | mlnz | (lt_m(e, 748) & nz_m(ahi | lo));
    switch (mode) {
    case M_RNE: t += (MASK(f > 0.5f) | (MASK(f == 0.5f) & (mlnz | t))) & 1; break;
    case M_RNA: t += MASK(f >= 0.5f) & 1; break;
    case M_FLOOR: t += nz & sg; break;
    case M_CEIL: t += nz & (sg ^ 1); break;
    case M_TRUNC: break;
    default: t |= nz & 1; break;
    }
    /* overflow tested on the normal path's own result (a test of the selected result lets gcc
     * thread jumps through the selects, and then not vectorise) */
    const uint32_t ovf = ovf0 ^ (negm & ovfx);
    kn = sel(MASK((int32_t)kn >= 0x7F800000), ovf, kn);
    uint32_t r = sel(lt_m(e, 897), t, kn);
    r = sel(lt_m(1150, e), ovf, r);
    r = sel(eq_m(e, 2047), sel(nz_m((ahi & 0xFFFFFu) | lo), 0x7FC00000u, inf), r);
    return (sg << 31) | r;
}

#define F64_F32_FN(mode)                                                                        \
    static void f64_f32_blk_##mode(uint32_t *o, const uint8_t *s, size_t n, uint32_t ovf0,      \
                                   uint32_t ovfx, uint32_t inf)                                 \
    {                                                                                           \
        for (size_t i = 0; i < n; i++) {                                                        \
            uint64_t u;                                                                         \
            memcpy(&u, s + 8 * i, 8);                                                           \
            o[i] = f64_f32_elem((uint32_t)(u >> 32), (uint32_t)u, mode, ovf0, ovfx, inf);       \
        }                                                                                       \
    }
F64_F32_FN(M_RNE)
F64_F32_FN(M_RNA)
F64_F32_FN(M_FLOOR)
F64_F32_FN(M_CEIL)
F64_F32_FN(M_TRUNC)
F64_F32_FN(M_ODD)

void dt_pf64_f32(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    typedef void (*blk_fn)(uint32_t *, const uint8_t *, size_t, uint32_t, uint32_t, uint32_t);
    static const blk_fn fns[6] = {f64_f32_blk_M_RNE,   f64_f32_blk_M_RNA,   f64_f32_blk_M_FLOOR,
                                  f64_f32_blk_M_CEIL,  f64_f32_blk_M_TRUNC, f64_f32_blk_M_ODD};
    const dt_rules *r = &k->r;
    const int mode = dt_mode_of(r->round);
    const blk_fn fn = fns[mode >= 0 ? mode : 0];
    /* overflow: the largest finite number when saturating or when the mode rounds the
     * magnitude down (per sign), else Inf */
    uint32_t ovf[2];
    for (int neg = 0; neg < 2; neg++) {
        ovf[neg] = (r->saturate_float || dt_mag_down(r->round, neg)) ? 0x7F7FFFFFu : 0x7F800000u;
    }
    const uint32_t inf = r->saturate_float ? 0x7F7FFFFFu : 0x7F800000u;
    const uint8_t *s = (const uint8_t *)src + begin * 8;
    uint8_t *d = (uint8_t *)dst + begin * 4;
    _Alignas(64) uint32_t out[DT_PBLOCK];
    const size_t n = end - begin;
    for (size_t i = 0; i < n; i += DT_PBLOCK) {
        const size_t m = n - i < DT_PBLOCK ? n - i : DT_PBLOCK;
        dt_prefetch_span(s + i * 8, m * 8);
        fn(out, s + i * 8, m, ovf[0], ovf[0] ^ ovf[1], inf);
        memcpy(d + i * 4, out, m * 4);
    }
}
