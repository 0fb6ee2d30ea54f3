/* AVX2 integer <-> float and float <-> float kernels, bit-identical to dt_decode + dt_encode in
 * every rounding mode and overflow policy:
 *   - int8..uint64 -> float32 / float64: vcvtdq2ps / vcvtdq2pd, and for 64-bit integers (which
 *     AVX2 cannot convert) the two-halves sum hi * 2^32 + lo built from exponent bits, which the
 *     FP add rounds once; the MXCSR rounding control gives the directed modes, round-to-odd is
 *     toward zero plus the lsb of inexact lanes, ties-away is toward zero of x + half an ulp;
 *   - float64 -> float32 (every mode), float32 / float16 / bfloat16 -> float64 (exact);
 *   - float32 / float64 -> int8..uint64: vroundpd per mode (ties-away and odd from the
 *     truncation / floor), the integral double's bits shifted into a 64-bit integer (which is
 *     the wrap modulo 2^64, NaN and Inf giving 0), clamped by comparisons under saturate;
 *     float32 -> 8/16/32-bit integers (float16, bfloat16 -> 16/32-bit ones) in 32-bit lanes:
 *     vroundps, then vcvttps2dq (exact below 2^31; the rare larger lanes wrap from their bits,
 *     or clamp).
 * Each kernel sets its own MXCSR (exceptions masked, no flush-to-zero or denormals-are-zero, its
 * rounding control) and restores the caller's word on the way out, flags included: no mode and
 * no exception flag leaks. Blocks of 32 elements load all their source before they store, so in
 * place works; tails go through zeroed local blocks. Compiled for the target through function
 * attributes only: nothing here runs unless the CPU has AVX2. */
#if defined(__x86_64__) && defined(__GNUC__)
#include "kernels.h"
#include "x86_attrs.h"

#include <immintrin.h>
#include <string.h>

#define FN DT_TARGET_AVX2

/* The element types, in int_index order for the integers. */
enum { T_I8, T_U8, T_I16, T_U16, T_I32, T_U32, T_I64, T_U64, T_F16, T_BF16, T_F32, T_F64 };
#define T_INT(t) ((t) <= T_U64)
#define T_SIGNED(t) (T_INT(t) && ((t) & 1) == 0)
#define T_BYTES(t)                                                                              \
    ((t) <= T_U8 ? 1 : (t) <= T_U16 || (t) == T_F16 || (t) == T_BF16 ? 2                        \
                   : (t) <= T_U32 || (t) == T_F32                    ? 4                        \
                                                                     : 8)

enum { BLK = 32 }; /* elements per block */

#define I32(c) _mm256_set1_epi32((int)(c))
#define I64(c) _mm256_set1_epi64x((long long)(c))
#define PD(c) _mm256_set1_pd(c)
#define PDB(c) _mm256_castsi256_pd(I64(c)) /* a double given by its bits */
#define SIGN64 UINT64_C(0x8000000000000000)
#define EXP64 UINT64_C(0x7FF0000000000000)

/* ---- MXCSR ------------------------------------------------------------------------------------- */
/* all exceptions masked (0x1F80), flags clear, no FTZ/DAZ; rounding control in bits 13-14 */
enum { CSR_RNE = 0x1F80, CSR_DOWN = 0x3F80, CSR_UP = 0x5F80, CSR_RZ = 0x7F80 };

/* The control word a mode computes under: ties-away and odd start from the truncation. */
static unsigned csr_of(int mode)
{
    switch (mode) {
    case M_FLOOR: return CSR_DOWN;
    case M_CEIL: return CSR_UP;
    case M_RNA:
    case M_TRUNC:
    case M_ODD: return CSR_RZ;
    default: return CSR_RNE;
    }
}

/* The memory clobbers keep every load after the new word and every store before the old one;
 * the FP operations in between depend on those loads and feed those stores. */
static FN DT_INLINE unsigned csr_enter(unsigned word)
{
    const unsigned old = _mm_getcsr();
    _mm_setcsr(word);
    __asm__ __volatile__("" ::: "memory");
    return old;
}
static FN DT_INLINE void csr_leave(unsigned old)
{
    __asm__ __volatile__("" ::: "memory");
    _mm_setcsr(old); /* the caller's mode and flags, as they were */
}

/* ---- loads and stores ------------------------------------------------------------------------ */
/* Keeps a loaded vector in a register (gcc would otherwise fold the load into every use as a
 * memory operand; see v_opaque in kernels_x86.h). */
static FN DT_INLINE void opaque(__m256i *x) { __asm__("" : "+v"(*x)); }
static FN DT_INLINE __m128i ld64(const uint8_t *p) { return _mm_loadl_epi64((const __m128i *)(const void *)p); }
static FN DT_INLINE __m128i ld128(const uint8_t *p) { return _mm_loadu_si128((const __m128i *)(const void *)p); }
static FN DT_INLINE __m256i ld256(const uint8_t *p)
{
    __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)p);
    opaque(&x);
    return x;
}
static FN DT_INLINE void st256(uint8_t *p, __m256i v) { _mm256_storeu_si256((__m256i *)(void *)p, v); }

/* 8 integers of type t (<= 32 bits) -> 8 int32 lanes (uint32: the same bits) */
static FN DT_INLINE __m256i ld_i32x8(const uint8_t *p, int t)
{
    switch (t) {
    case T_I8: return _mm256_cvtepi8_epi32(ld64(p));
    case T_U8: return _mm256_cvtepu8_epi32(ld64(p));
    case T_I16: return _mm256_cvtepi16_epi32(ld128(p));
    case T_U16: return _mm256_cvtepu16_epi32(ld128(p));
    default: return ld256(p);
    }
}

/* 8 floats of type t (float16, bfloat16, float32) -> float32 lanes, exact */
static FN DT_INLINE __m256 ld_ps8(const uint8_t *p, int t)
{
    switch (t) {
    case T_F16: return _mm256_cvtph_ps(ld128(p));
    case T_BF16: /* bfloat16 is the top half of float32 */
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(ld128(p)), 16));
    default: return _mm256_castsi256_ps(ld256(p));
    }
}

/* ---- integers -> float64 -------------------------------------------------------------------- */
/* 4 int32 lanes (uint32 when uns) -> doubles, exact in any mode */
static FN DT_INLINE __m256d i32_f64(__m128i x, int uns)
{
    const __m256d d = _mm256_cvtepi32_pd(x);
    if (!uns)
        return d;
    /* a uint32 >= 2^31 read as signed is x - 2^32 (negative): add 2^32 back (exact) */
    return _mm256_add_pd(d, _mm256_blendv_pd(_mm256_setzero_pd(), PD(0x1p32), d));
}

/* 4 64-bit integers -> doubles, x = hi * 2^32 + lo rounded once in the MXCSR mode: the bits
 * 0x453 | hi are the double 2^84 + hi * 2^32 (signed: hi + 2^31, flipping its top bit), the bits
 * 0x433 | lo are 2^52 + lo; subtracting the constants is exact, the final add rounds. FLOOR
 * turns the exact zero sum of x = 0 into -0: then the zero's sign is cleared. */
static FN DT_INLINE __m256d i64_sum(__m256i x, int ss, int mode)
{
    const __m256i hi = _mm256_xor_si256(_mm256_srli_epi64(x, 32),
                                        I64(ss ? 0x4530000080000000 : 0x4530000000000000));
    const __m256i lo = _mm256_blend_epi32(x, I64(0x4330000000000000), 0xAA); /* odd dwords */
    const double c = ss ? 0x1p84 + 0x1p63 + 0x1p52 : 0x1p84 + 0x1p52;     /* exact constants */
    const __m256d d = _mm256_add_pd(_mm256_sub_pd(_mm256_castsi256_pd(hi), PD(c)),
                                    _mm256_castsi256_pd(lo));
    if (mode == M_FLOOR) /* +-0 -> +0 */
        return _mm256_andnot_pd(_mm256_cmp_pd(d, _mm256_setzero_pd(), _CMP_EQ_OQ), d);
    return d;
}

/* 4 64-bit integers -> doubles in mode (MXCSR: csr_of(mode)). Odd and ties-away start from the
 * truncation d, whose exponent field e says that x has s = e - 1075 bits below d's last place. */
static FN DT_INLINE __m256d i64_f64(__m256i x, int ss, int mode)
{
    __m256i d = _mm256_castpd_si256(i64_sum(x, ss, mode));
    if (mode != M_ODD && mode != M_RNA)
        return _mm256_castsi256_pd(d);
    const __m256i e = _mm256_and_si256(_mm256_srli_epi64(d, 52), I64(0x7FF));
    __m256i up;
    if (mode == M_ODD) {
        /* the s dropped bits: all ones >> (64 - s); s <= 0 gives a count >= 64, hence none
         * (x is a multiple of 2^s exactly when |x| is, so two's complement bits do) */
        const __m256i lost = _mm256_and_si256(x, _mm256_srlv_epi64(I64(-1), _mm256_sub_epi64(I64(1139), e)));
        /* inexact: set the lsb (the odd neighbour of the truncation) */
        up = _mm256_andnot_si256(_mm256_cmpeq_epi64(lost, _mm256_setzero_si256()), I64(1));
        return _mm256_castsi256_pd(_mm256_or_si256(d, up));
    }
    /* ties away: up when the first dropped bit of |x|, 1 << (s - 1), is set (s <= 0: the count
     * is negative, i.e. >= 64 unsigned, and the bit is 0) */
    __m256i a = x;
    if (ss) { /* |x| = (x ^ m) - m with m the sign mask (|INT64_MIN| is 2^63 unsigned) */
        const __m256i m = _mm256_cmpgt_epi64(_mm256_setzero_si256(), x);
        a = _mm256_sub_epi64(_mm256_xor_si256(x, m), m);
    }
    const __m256i half = _mm256_sllv_epi64(I64(1), _mm256_sub_epi64(e, I64(1076)));
    up = _mm256_cmpeq_epi64(_mm256_and_si256(a, half), _mm256_setzero_si256()); /* ~up */
    /* the magnitude's bits + 1 is the next double away from zero (a carry moves the exponent) */
    return _mm256_castsi256_pd(_mm256_sub_epi64(_mm256_add_epi64(d, I64(1)),
                                                _mm256_and_si256(up, I64(1))));
}

/* 4 64-bit integers -> doubles whose every float32 rounding (any mode) is x's: |x| < 2^37 is
 * exact; above, float32's ulp is >= 2^14, and x's bits below 2^12 become one bit at 2^11 (the
 * midpoint of the 2^12-interval holding x, strictly between the same float32 rounding
 * boundaries, which are multiples of 2^13), leaving <= 53 significant bits: exact too. */
static FN DT_INLINE __m256d i64_exact(__m256i x, int ss, int mode)
{
    const __m256i zero = _mm256_setzero_si256();
    /* small: -2^37 <= x < 2^37 (signed: x + 2^37 below 2^38 unsigned) */
    const __m256i small = ss ? _mm256_cmpeq_epi64(_mm256_srli_epi64(_mm256_add_epi64(x, I64(UINT64_C(1) << 37)), 38), zero)
                             : _mm256_cmpeq_epi64(_mm256_srli_epi64(x, 37), zero);
    const __m256i sticky = _mm256_andnot_si256(_mm256_cmpeq_epi64(_mm256_and_si256(x, I64(0xFFF)), zero),
                                               I64(0x800));
    const __m256i xc = _mm256_or_si256(_mm256_and_si256(x, I64(~UINT64_C(0xFFF))), sticky);
    return i64_sum(_mm256_blendv_epi8(xc, x, small), ss, mode); /* exact */
}

/* ---- doubles -> float32 --------------------------------------------------------------------- */
/* d plus half a float32 ulp of |d| away from zero: the truncation of that is d rounded to
 * nearest, ties away. The half ulp is 2^(k-24) for 2^k <= |d| (the exponent bits of d times
 * 2^-24), at least 2^-150 (float32's subnormals have the quantum of 2^-126's binade). The sum
 * may drop low bits (toward zero too, on a grid finer than float32's: no change). inf: values
 * at or past 2^128 become Inf (the truncation would stop at max; not under saturate). */
static FN DT_INLINE __m256d rna_bias(__m256d d, int inf)
{
    const __m256d sign = _mm256_and_pd(d, PDB(SIGN64));
    const __m256d ex = _mm256_max_pd(_mm256_and_pd(d, PDB(EXP64)), PD(0x1p-126));
    const __m256d s = _mm256_add_pd(d, _mm256_or_pd(_mm256_mul_pd(ex, PD(0x1p-24)), sign));
    if (!inf)
        return s;
    const __m256d big = _mm256_cmp_pd(_mm256_andnot_pd(PDB(SIGN64), s), PD(0x1p128), _CMP_GE_OQ);
    return _mm256_blendv_pd(s, _mm256_or_pd(sign, PDB(EXP64)), big);
}

/* 8 doubles (a: elements 0-3, b: 4-7) -> float32 bits in mode (MXCSR: csr_of(mode)) */
static FN DT_INLINE __m256i pd_ps8(__m256d a, __m256d b, int mode, int inf)
{
    if (mode == M_RNA) {
        a = rna_bias(a, inf);
        b = rna_bias(b, inf);
    }
    const __m128 ta = _mm256_cvtpd_ps(a), tb = _mm256_cvtpd_ps(b);
    __m256i t = _mm256_castps_si256(_mm256_insertf128_ps(_mm256_castps128_ps256(ta), tb, 1));
    if (mode == M_ODD) { /* truncated; inexact lanes (back != d) get the lsb set */
        const __m256d la = _mm256_cmp_pd(_mm256_cvtps_pd(ta), a, _CMP_NEQ_UQ);
        const __m256d lb = _mm256_cmp_pd(_mm256_cvtps_pd(tb), b, _CMP_NEQ_UQ);
        /* the low dwords of the 64-bit masks: shufps takes a0 a1 b0 b1 | a2 a3 b2 b3, the
         * qword permute (0, 2, 1, 3) puts them in order */
        const __m256i l = _mm256_permute4x64_epi64(
            _mm256_castps_si256(_mm256_shuffle_ps(_mm256_castpd_ps(la), _mm256_castpd_ps(lb), 0x88)), 0xD8);
        t = _mm256_or_si256(t, _mm256_and_si256(l, I32(1)));
    }
    return t;
}

/* Float32 results of float sources: a NaN (sign and quiet bit kept by the conversion) loses its
 * payload: the canonical quiet NaN with its sign; saturate: +-Inf - 1 is +-max. */
static FN DT_INLINE __m256i fix_ps(__m256i r, int sat)
{
    const __m256 f = _mm256_castsi256_ps(r);
    r = _mm256_andnot_si256(_mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(f, f, _CMP_UNORD_Q)),
                                             I32(0x003FFFFF)), r);
    if (sat)
        r = _mm256_add_epi32(r, _mm256_cmpeq_epi32(_mm256_and_si256(r, I32(0x7FFFFFFF)), I32(0x7F800000)));
    return r;
}
/* the same for float64 results */
static FN DT_INLINE __m256i fix_pd(__m256d d, int sat)
{
    __m256i r = _mm256_castpd_si256(d);
    r = _mm256_andnot_si256(_mm256_and_si256(_mm256_castpd_si256(_mm256_cmp_pd(d, d, _CMP_UNORD_Q)),
                                             I64(0x0007FFFFFFFFFFFF)), r);
    if (sat)
        r = _mm256_add_epi64(r, _mm256_cmpeq_epi64(_mm256_and_si256(r, I64(~SIGN64)), I64(EXP64)));
    return r;
}

/* ---- integers <= 32 bits -> float32 ----------------------------------------------------------- */
/* signed int32 lanes -> float32 in mode (not ties-away) */
static FN DT_INLINE __m256i i32_f32(__m256i x, int mode)
{
    __m256i t = _mm256_castps_si256(_mm256_cvtepi32_ps(x));
    if (mode == M_ODD) /* truncated, so |t| <= |x| converts back exactly */
        t = _mm256_or_si256(t, _mm256_andnot_si256(
                                   _mm256_cmpeq_epi32(_mm256_cvttps_epi32(_mm256_castsi256_ps(t)), x), I32(1)));
    return t;
}

/* 8 int32 (uint32: uns) lanes -> float32 in mode */
static FN DT_INLINE __m256i i32_f32_mode(__m256i x, int uns, int mode)
{
    if (mode == M_RNA) /* through exact doubles */
        return pd_ps8(i32_f64(_mm256_castsi256_si128(x), uns),
                      i32_f64(_mm256_extracti128_si256(x, 1), uns), mode, 0);
    if (!uns)
        return i32_f32(x, mode);
    /* uint32 >= 2^31: halve it, the dropped bit ORed into the lsb (a sticky bit below the 7 bits
     * the conversion drops: the same rounding), convert as signed, double (exact) */
    const __m256i big = _mm256_srai_epi32(x, 31);
    const __m256i h = _mm256_or_si256(_mm256_srli_epi32(x, 1), _mm256_and_si256(x, I32(1)));
    const __m256 t = _mm256_castsi256_ps(i32_f32(_mm256_blendv_epi8(x, h, big), mode));
    return _mm256_castps_si256(_mm256_blendv_ps(t, _mm256_add_ps(t, t), _mm256_castsi256_ps(big)));
}

/* ---- blocks of 32 elements ------------------------------------------------------------------ */
static FN DT_INLINE void blk_int_f32(uint8_t *d, const uint8_t *s, int st, int mode)
{
    if (T_BYTES(st) == 8) {
        __m256d x[8];
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++)
            x[j] = i64_exact(ld256(s + 32 * j), T_SIGNED(st), mode);
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++)
            st256(d + 32 * j, pd_ps8(x[2 * j], x[2 * j + 1], mode, 0));
        return;
    }
    __m256i x[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++)
        x[j] = ld_i32x8(s + 8 * j * T_BYTES(st), st);
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++)
        st256(d + 32 * j, T_BYTES(st) < 4 ? _mm256_castps_si256(_mm256_cvtepi32_ps(x[j])) /* exact */
                                          : i32_f32_mode(x[j], st == T_U32, mode));
}

static FN DT_INLINE void blk_int_f64(uint8_t *d, const uint8_t *s, int st, int mode)
{
    if (T_BYTES(st) == 8) {
        __m256i x[8];
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++)
            x[j] = ld256(s + 32 * j);
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++)
            st256(d + 32 * j, _mm256_castpd_si256(i64_f64(x[j], T_SIGNED(st), mode)));
        return;
    }
    __m256i x[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++)
        x[j] = ld_i32x8(s + 8 * j * T_BYTES(st), st);
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) {
        st256(d + 64 * j, _mm256_castpd_si256(i32_f64(_mm256_castsi256_si128(x[j]), st == T_U32)));
        st256(d + 64 * j + 32,
              _mm256_castpd_si256(i32_f64(_mm256_extracti128_si256(x[j], 1), st == T_U32)));
    }
}

static FN DT_INLINE void blk_f64_f32(uint8_t *d, const uint8_t *s, int mode, int sat)
{
    __m256d x[8];
#pragma GCC unroll 8
    for (int j = 0; j < 8; j++)
        x[j] = _mm256_castsi256_pd(ld256(s + 32 * j));
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++)
        st256(d + 32 * j, fix_ps(pd_ps8(x[2 * j], x[2 * j + 1], mode, !sat), sat));
}

static FN DT_INLINE void blk_f_f64(uint8_t *d, const uint8_t *s, int st, int sat)
{
    __m256 x[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++)
        x[j] = ld_ps8(s + 8 * j * T_BYTES(st), st);
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) {
        st256(d + 64 * j, fix_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(x[j])), sat));
        st256(d + 64 * j + 32, fix_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(x[j], 1)), sat));
    }
}

/* ---- floats -> integers --------------------------------------------------------------------- */
/* x rounded to an integral double per mode (exact operations: any MXCSR mode gives these) */
static FN DT_INLINE __m256d round_int(__m256d x, int mode)
{
    switch (mode) {
    case M_RNE: return _mm256_round_pd(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    case M_FLOOR: return _mm256_round_pd(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    case M_CEIL: return _mm256_round_pd(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    case M_TRUNC: return _mm256_round_pd(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    case M_RNA: { /* a dropped fraction x - t (exact) of at least 1/2: one away */
        const __m256d t = _mm256_round_pd(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __m256d up = _mm256_cmp_pd(_mm256_andnot_pd(PDB(SIGN64), _mm256_sub_pd(x, t)), PD(0.5),
                                         _CMP_GE_OQ); /* Inf - Inf, NaN: false */
        const __m256d away = _mm256_or_pd(_mm256_and_pd(x, PDB(SIGN64)), PD(1.0)); /* +-1 */
        return _mm256_add_pd(t, _mm256_and_pd(up, away));
    }
    default: { /* odd: floor | 1 when inexact (in two's complement that is the odd neighbour of
                * either sign): floor + 1 when inexact and floor is even (half of it integral) */
        const __m256d f = _mm256_round_pd(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        const __m256d h = _mm256_mul_pd(f, PD(0.5));
        const __m256d even = _mm256_cmp_pd(_mm256_round_pd(h, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), h, _CMP_EQ_OQ);
        const __m256d grow = _mm256_and_pd(_mm256_cmp_pd(f, x, _CMP_NEQ_OQ), even);
        return _mm256_add_pd(f, _mm256_and_pd(grow, PD(1.0)));
    }
    }
}

/* 2^n as a double, from its bits (0 <= n <= 64) */
static inline double pow2(int n)
{
    const uint64_t b = (uint64_t)(1023 + n) << 52;
    double x;
    memcpy(&x, &b, 8);
    return x;
}

/* An integral double (or NaN/Inf) -> an integer of type dt: the value modulo 2^64 (what the
 * reference wraps; NaN and Inf give 0), or under saturate clamped to dt's range by comparing
 * the double with the range's power-of-two bounds (NaN compares false: 0). */
static FN DT_INLINE __m256i f64_int(__m256d f, int dt, int sat)
{
    const __m256i b = _mm256_castpd_si256(f);
    const __m256i e = _mm256_and_si256(_mm256_srli_epi64(b, 52), I64(0x7FF));
    const __m256i m = _mm256_or_si256(_mm256_and_si256(b, I64(0xFFFFFFFFFFFFF)), I64(UINT64_C(1) << 52));
    /* |f| = m * 2^(e - 1075): a left or a right shift, whose other count is negative, i.e.
     * >= 64 unsigned, giving 0 (as both do for NaN/Inf, e = 2047, and zero, e = 0); bits
     * shifted past bit 63 are the multiples of 2^64 that wrapping drops */
    __m256i v = _mm256_or_si256(_mm256_sllv_epi64(m, _mm256_sub_epi64(e, I64(1075))),
                                _mm256_srlv_epi64(m, _mm256_sub_epi64(I64(1075), e)));
    const __m256i neg = _mm256_cmpgt_epi64(_mm256_setzero_si256(), b); /* the sign, all ones */
    v = _mm256_sub_epi64(_mm256_xor_si256(v, neg), neg);                 /* two's complement */
    if (!sat)
        return v;
    const int bits = 8 * T_BYTES(dt);
    const uint64_t maxc = T_SIGNED(dt) ? UINT64_MAX >> (65 - bits) : UINT64_MAX >> (64 - bits);
    const double hi = T_SIGNED(dt) ? pow2(bits - 1) : pow2(bits), lo = T_SIGNED(dt) ? -pow2(bits - 1) : 0;
    v = _mm256_blendv_epi8(v, I64(maxc), _mm256_castpd_si256(_mm256_cmp_pd(f, PD(hi), _CMP_GE_OQ)));
    return _mm256_blendv_epi8(v, I64(T_SIGNED(dt) ? ~maxc : 0),
                              _mm256_castpd_si256(_mm256_cmp_pd(f, PD(lo), _CMP_LT_OQ)));
}

/* Two vectors of w-bit lanes -> one of w/2-bit lanes, the low halves in order (as ii_halve in
 * kernels_avx2_int.c). */
static FN DT_INLINE __m256i halve(__m256i a, __m256i b, int w)
{
    switch (w) {
    case 64: { /* dwords 0 and 2 of each 128-bit lane: a0 a1 b0 b1 | a2 a3 b2 b3; the qword
                * permute (0, 2, 1, 3) puts them in order */
        const __m256 t = _mm256_shuffle_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), 0x88);
        return _mm256_permute4x64_epi64(_mm256_castps_si256(t), 0xD8);
    }
    case 32: { /* masked to 16 bits, the unsigned-saturating pack changes no value */
        const __m256i m = I32(0xFFFF);
        return _mm256_permute4x64_epi64(_mm256_packus_epi32(_mm256_and_si256(a, m), _mm256_and_si256(b, m)), 0xD8);
    }
    default: {
        const __m256i m = _mm256_set1_epi16(0xFF);
        return _mm256_permute4x64_epi64(_mm256_packus_epi16(_mm256_and_si256(a, m), _mm256_and_si256(b, m)), 0xD8);
    }
    }
}

static FN DT_INLINE void blk_f_int(uint8_t *d, const uint8_t *s, int st, int dt, int mode, int sat)
{
    __m256d f[8];
    if (st == T_F32) {
        __m256i x[4];
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++)
            x[j] = ld256(s + 32 * j);
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) { /* exact */
            f[2 * j] = _mm256_cvtps_pd(_mm_castsi128_ps(_mm256_castsi256_si128(x[j])));
            f[2 * j + 1] = _mm256_cvtps_pd(_mm_castsi128_ps(_mm256_extracti128_si256(x[j], 1)));
        }
    } else {
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++)
            f[j] = _mm256_castsi256_pd(ld256(s + 32 * j));
    }
    __m256i v[8];
#pragma GCC unroll 8
    for (int j = 0; j < 8; j++)
        v[j] = f64_int(round_int(f[j], mode), dt, sat);
    /* halve the lanes down to the type's width (v[j] is written after v[2j], v[2j+1] are read) */
    const int db = T_BYTES(dt);
    if (db <= 4) {
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++)
            v[j] = halve(v[2 * j], v[2 * j + 1], 64);
    }
    if (db <= 2) {
#pragma GCC unroll 2
        for (int j = 0; j < 2; j++)
            v[j] = halve(v[2 * j], v[2 * j + 1], 32);
    }
    if (db == 1)
        v[0] = halve(v[0], v[1], 16);
#pragma GCC unroll 8
    for (int j = 0; j < db; j++) /* 32 elements of db bytes */
        st256(d + 32 * j, v[j]);
}

/* ---- float32 -> integers of 8, 16 or 32 bits, in 32-bit lanes -------------------------------- */
/* x rounded to an integral float per mode (round_int_avx2.h) */
#include "round_int_avx2.h"

/* Wrap of integral lanes with |f| >= 2^31 (e >= 158): f = m * 2^(e - 150) with the 24-bit
 * significand m, so f mod 2^32 is m shifted left (counts >= 32 give 0: multiples of 2^32),
 * negated for negative f; NaN and Inf (e = 255) give 0. */
static FN DT_INLINE __m256i wrap_huge32(__m256 f)
{
    const __m256i b = _mm256_castps_si256(f);
    const __m256i e = _mm256_and_si256(_mm256_srli_epi32(b, 23), I32(0xFF));
    const __m256i m = _mm256_or_si256(_mm256_and_si256(b, I32(0x7FFFFF)), I32(0x800000));
    const __m256i v = _mm256_sllv_epi32(m, _mm256_sub_epi32(e, I32(150)));
    const __m256i neg = _mm256_srai_epi32(b, 31);
    return _mm256_sub_epi32(_mm256_xor_si256(v, neg), neg);
}

/* 8 floats -> integers of type dt (<= 32 bits) in 32-bit lanes: vcvttps2dq of the integral
 * float is exact below 2^31. Wrap: the rare other lanes (huge, NaN, Inf) from their bits.
 * Saturate: <= 16 bits clamp the float to the (exact) bounds first; int32 takes INT32_MAX at
 * or above 2^31 (below -2^31 the conversion's 0x80000000 is INT32_MIN); uint32 converts
 * [2^31, 2^32) less 2^31 and puts the top bit back; NaN gives 0. */
static FN DT_INLINE __m256i f32_small_int(__m256 x, int dt, int mode, int sat)
{
    const __m256 f = round_int_ps(x, mode);
    if (!sat) {
        __m256i v = _mm256_cvttps_epi32(f);
        const __m256 ok = _mm256_cmp_ps(_mm256_andnot_ps(_mm256_castsi256_ps(I32(0x80000000)), f),
                                        _mm256_set1_ps(0x1p31f), _CMP_LT_OQ);
        if (_mm256_movemask_ps(ok) != 0xFF)
            v = _mm256_blendv_epi8(wrap_huge32(f), v, _mm256_castps_si256(ok));
        return v;
    }
    __m256i v;
    if (T_BYTES(dt) <= 2) {
        const int bits = 8 * T_BYTES(dt);
        const float lo = T_SIGNED(dt) ? -(float)(1 << (bits - 1)) : 0.0f;
        const float hi = T_SIGNED(dt) ? (float)((1 << (bits - 1)) - 1) : (float)((1 << bits) - 1);
        v = _mm256_cvttps_epi32(_mm256_min_ps(_mm256_max_ps(f, _mm256_set1_ps(lo)), _mm256_set1_ps(hi)));
    } else if (T_SIGNED(dt)) {
        v = _mm256_blendv_epi8(_mm256_cvttps_epi32(f), I32(0x7FFFFFFF),
                               _mm256_castps_si256(_mm256_cmp_ps(f, _mm256_set1_ps(0x1p31f), _CMP_GE_OQ)));
    } else {
        const __m256 g = _mm256_max_ps(f, _mm256_setzero_ps()); /* negative -> 0 */
        const __m256 big = _mm256_cmp_ps(g, _mm256_set1_ps(0x1p31f), _CMP_GE_OQ);
        v = _mm256_xor_si256(_mm256_cvttps_epi32(_mm256_sub_ps(g, _mm256_and_ps(big, _mm256_set1_ps(0x1p31f)))),
                             _mm256_and_si256(_mm256_castps_si256(big), I32(0x80000000)));
        v = _mm256_or_si256(v, _mm256_castps_si256(_mm256_cmp_ps(g, _mm256_set1_ps(0x1p32f), _CMP_GE_OQ)));
    }
    return _mm256_andnot_si256(_mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q)), v);
}

/* 32 floats of type st (float16, bfloat16, float32: float32 holds them exactly) -> integers */
static FN DT_INLINE void blk_f32_small(uint8_t *d, const uint8_t *s, int st, int dt, int mode,
                                       int sat)
{
    __m256i v[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++)
        v[j] = _mm256_castps_si256(ld_ps8(s + 8 * j * T_BYTES(st), st));
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++)
        v[j] = f32_small_int(_mm256_castsi256_ps(v[j]), dt, mode, sat);
    const int db = T_BYTES(dt);
    if (db <= 2) {
        v[0] = halve(v[0], v[1], 32);
        v[1] = halve(v[2], v[3], 32);
    }
    if (db == 1)
        v[0] = halve(v[0], v[1], 16);
#pragma GCC unroll 4
    for (int j = 0; j < db; j++) /* 32 elements of db bytes */
        st256(d + 32 * j, v[j]);
}

/* ---- the loop ---------------------------------------------------------------------------------- */
static FN DT_INLINE void blk(uint8_t *d, const uint8_t *s, int st, int dt, int mode, int sat)
{
    if (T_INT(st) && dt == T_F32)
        blk_int_f32(d, s, st, mode);
    else if (T_INT(st))
        blk_int_f64(d, s, st, mode);
    else if (st == T_F64 && dt == T_F32)
        blk_f64_f32(d, s, mode, sat);
    else if (dt == T_F64)
        blk_f_f64(d, s, st, sat);
    else if (st >= T_F16 && st <= T_F32 && T_BYTES(dt) <= 4)
        blk_f32_small(d, s, st, dt, mode, sat);
    else
        blk_f_int(d, s, st, dt, mode, sat);
}

static FN DT_INLINE void run(void *dst, const void *src, size_t begin, size_t end, int st, int dt,
                             int mode, int sat)
{
    const size_t sb = T_BYTES(st), db = T_BYTES(dt);
    const uint8_t *s = (const uint8_t *)src + begin * sb;
    uint8_t *d = (uint8_t *)dst + begin * db;
    const size_t n = end - begin;
    _Alignas(32) uint8_t tin[BLK * 8], tout[BLK * 8];
    /* one call site of the block (the tail's too: half the code) */
    for (size_t i = 0; i < n; i += BLK) {
        const size_t left = n - i;
        const uint8_t *bs = s + i * sb;
        uint8_t *bd = d + i * db;
        if (left < BLK) { /* the tail through zeroed blocks (read before written: in place works) */
            memset(tin, 0, sizeof tin);
            memcpy(tin, bs, left * sb);
            bs = tin;
            bd = tout;
        } else {
            dt_prefetch_span(bs, BLK * sb);
        }
        blk(bd, bs, st, dt, mode, sat);
        if (left < BLK)
            memcpy(d + i * db, tout, left * db);
    }
}

/* One kernel per (source, destination, mode); the overflow policy is read at run time (integer
 * sources cannot overflow float32 or float64). */
#define CVT_FN(st, dt, mode)                                                                    \
    static FN void cvt_##st##_##dt##_##mode(const dt_kernel *k, void *dst, const void *src,    \
                                            size_t b, size_t e)                                 \
    {                                                                                           \
        const unsigned csr = csr_enter(csr_of(M_##mode));                            \
        const bool sat = !T_INT(st) && (T_INT(dt) ? k->r.saturate_int : k->r.saturate_float);   \
        if (sat)                                                                                \
            run(dst, src, b, e, st, dt, M_##mode, 1);                                \
        else                                                                                    \
            run(dst, src, b, e, st, dt, M_##mode, 0);                                \
        csr_leave(csr);                                                                         \
    }
/* Round-to-nearest-even (the default) folded into its own function; the five directed modes
 * through one body taking the mode at run time; under DT_KERNEL_RUNTIME_MODES (the sanitizer
 * build) rne too (kernels_tmpl.h, DT_NARROW_MODES, says why). */
#define CVT_MODE_FN(st, dt, mode)                                                               \
    static FN void cvt_##st##_##dt##_##mode(const dt_kernel *k, void *dst, const void *src,    \
                                            size_t b, size_t e)                                 \
    {                                                                                           \
        cvt_rt_##st##_##dt(k, dst, src, b, e, M_##mode);                                        \
    }
#if defined(DT_KERNEL_RUNTIME_MODES)
#define CVT_RNE(st, dt) CVT_MODE_FN(st, dt, RNE)
#else
#define CVT_RNE(st, dt) CVT_FN(st, dt, RNE)
#endif
#define CVT_MODES(st, dt)                                                                       \
    static FN DT_NOCLONE void cvt_rt_##st##_##dt(const dt_kernel *k, void *dst, const void *src, \
                                                 size_t b, size_t e, int mode)                  \
    {                                                                                           \
        const unsigned csr = csr_enter(csr_of(mode));                                           \
        const bool sat = !T_INT(st) && (T_INT(dt) ? k->r.saturate_int : k->r.saturate_float);   \
        run(dst, src, b, e, st, dt, mode, sat);                                                 \
        csr_leave(csr);                                                                         \
    }                                                                                           \
    CVT_RNE(st, dt) CVT_MODE_FN(st, dt, RNA) CVT_MODE_FN(st, dt, FLOOR)                         \
    CVT_MODE_FN(st, dt, CEIL) CVT_MODE_FN(st, dt, TRUNC) CVT_MODE_FN(st, dt, ODD)
#define CVT_ROW(st, dt)                                                                         \
    {cvt_##st##_##dt##_RNE, cvt_##st##_##dt##_RNA, cvt_##st##_##dt##_FLOOR,                     \
     cvt_##st##_##dt##_CEIL, cvt_##st##_##dt##_TRUNC, cvt_##st##_##dt##_ODD}
/* exact conversions: one function serves every mode */
#define CVT_EXACT(st, dt) CVT_FN(st, dt, RNE)
#define CVT_EXACT_ROW(st, dt)                                                                   \
    {cvt_##st##_##dt##_RNE, cvt_##st##_##dt##_RNE, cvt_##st##_##dt##_RNE,                       \
     cvt_##st##_##dt##_RNE, cvt_##st##_##dt##_RNE, cvt_##st##_##dt##_RNE}

/* integers -> float32 / float64 */
CVT_EXACT(T_I8, T_F32) CVT_EXACT(T_U8, T_F32) CVT_EXACT(T_I16, T_F32) CVT_EXACT(T_U16, T_F32)
CVT_MODES(T_I32, T_F32) CVT_MODES(T_U32, T_F32) CVT_MODES(T_I64, T_F32) CVT_MODES(T_U64, T_F32)
CVT_EXACT(T_I8, T_F64) CVT_EXACT(T_U8, T_F64) CVT_EXACT(T_I16, T_F64) CVT_EXACT(T_U16, T_F64)
CVT_EXACT(T_I32, T_F64) CVT_EXACT(T_U32, T_F64) CVT_MODES(T_I64, T_F64) CVT_MODES(T_U64, T_F64)
/* [source][float32, float64][mode] */
static const dt_kernel_fn if_fns[8][2][6] = {
    {CVT_EXACT_ROW(T_I8, T_F32), CVT_EXACT_ROW(T_I8, T_F64)},
    {CVT_EXACT_ROW(T_U8, T_F32), CVT_EXACT_ROW(T_U8, T_F64)},
    {CVT_EXACT_ROW(T_I16, T_F32), CVT_EXACT_ROW(T_I16, T_F64)},
    {CVT_EXACT_ROW(T_U16, T_F32), CVT_EXACT_ROW(T_U16, T_F64)},
    {CVT_ROW(T_I32, T_F32), CVT_EXACT_ROW(T_I32, T_F64)},
    {CVT_ROW(T_U32, T_F32), CVT_EXACT_ROW(T_U32, T_F64)},
    {CVT_ROW(T_I64, T_F32), CVT_ROW(T_I64, T_F64)},
    {CVT_ROW(T_U64, T_F32), CVT_ROW(T_U64, T_F64)}};

/* floats -> floats */
CVT_MODES(T_F64, T_F32)
CVT_EXACT(T_F16, T_F64) CVT_EXACT(T_BF16, T_F64) CVT_EXACT(T_F32, T_F64)
static const dt_kernel_fn f64_f32_fns[6] = CVT_ROW(T_F64, T_F32);
static const dt_kernel_fn f_f64_fns[3] = {cvt_T_F16_T_F64_RNE, cvt_T_BF16_T_F64_RNE,
                                          cvt_T_F32_T_F64_RNE};

/* floats -> integers */
#define CVT_TO_INTS(st)                                                                         \
    CVT_MODES(st, T_I8) CVT_MODES(st, T_U8) CVT_MODES(st, T_I16) CVT_MODES(st, T_U16)           \
    CVT_MODES(st, T_I32) CVT_MODES(st, T_U32) CVT_MODES(st, T_I64) CVT_MODES(st, T_U64)
#define CVT_TO_INTS_ROWS(st)                                                                    \
    {CVT_ROW(st, T_I8), CVT_ROW(st, T_U8), CVT_ROW(st, T_I16), CVT_ROW(st, T_U16),              \
     CVT_ROW(st, T_I32), CVT_ROW(st, T_U32), CVT_ROW(st, T_I64), CVT_ROW(st, T_U64)}
CVT_TO_INTS(T_F32)
CVT_TO_INTS(T_F64)
/* [float32, float64][destination][mode] */
static const dt_kernel_fn f_int_fns[2][8][6] = {CVT_TO_INTS_ROWS(T_F32), CVT_TO_INTS_ROWS(T_F64)};
/* float16 and bfloat16 -> integers of 16 and 32 bits, through float32 lanes (8-bit integers:
 * the 16-bit-lane template; 64-bit ones: a chain through float32) */
#define CVT_HALF_TO_INTS(st)                                                                    \
    CVT_MODES(st, T_I16) CVT_MODES(st, T_U16) CVT_MODES(st, T_I32) CVT_MODES(st, T_U32)
#define CVT_HALF_TO_INTS_ROWS(st)                                                               \
    {CVT_ROW(st, T_I16), CVT_ROW(st, T_U16), CVT_ROW(st, T_I32), CVT_ROW(st, T_U32)}
CVT_HALF_TO_INTS(T_F16)
CVT_HALF_TO_INTS(T_BF16)
/* [float16, bfloat16][int16 .. uint32][mode] */
static const dt_kernel_fn h_int_fns[2][4][6] = {CVT_HALF_TO_INTS_ROWS(T_F16),
                                                CVT_HALF_TO_INTS_ROWS(T_BF16)};

/* ---- the picker ------------------------------------------------------------------------------ */
static int type_slot(const dt_format *f)
{
    switch (f->type) {
    case DTCAST_INT8: return T_I8;
    case DTCAST_UINT8: return T_U8;
    case DTCAST_INT16: return T_I16;
    case DTCAST_UINT16: return T_U16;
    case DTCAST_INT32: return T_I32;
    case DTCAST_UINT32: return T_U32;
    case DTCAST_INT64: return T_I64;
    case DTCAST_UINT64: return T_U64;
    case DTCAST_FLOAT16: return T_F16;
    case DTCAST_BFLOAT16: return T_BF16;
    case DTCAST_FLOAT32: return T_F32;
    case DTCAST_FLOAT64: return T_F64;
    default: return -1;
    }
}

dt_kernel_fn dt_cvt_pick_avx2(const dt_format *df, const dt_format *sf, const dt_rules *r)
{
    const int m = dt_mode_of(r->round);
    const int st = type_slot(sf), dt = type_slot(df);
    if (m < 0 || st < 0 || dt < 0) /* an unknown mode is left to the reference path */
        return NULL;
    if (T_INT(st) && (dt == T_F32 || dt == T_F64))
        return if_fns[st][dt == T_F64][m];
    if (st == T_F64 && dt == T_F32)
        return f64_f32_fns[m];
    if (dt == T_F64 && st >= T_F16 && st <= T_F32)
        return f_f64_fns[st - T_F16];
    if ((st == T_F32 || st == T_F64) && T_INT(dt))
        return f_int_fns[st == T_F64][dt][m];
    if ((st == T_F16 || st == T_BF16) && dt >= T_I16 && dt <= T_U32)
        return h_int_fns[st == T_BF16][dt - T_I16][m];
    return NULL;
}
#endif
