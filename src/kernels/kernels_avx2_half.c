/* AVX2 + F16C kernels for the 16-bit floats: float32 -> float16 with vcvtps2ph (its immediate
 * picks rne or a directed mode; the others take the narrowing template), 8- and 16-bit integers
 * -> float16 and 8-bit integers -> bfloat16 through their exact float32, 32- and 64-bit
 * integers -> float16 (clamped, exact in float32, then vcvtps2ph) and -> bfloat16 (rounded to
 * odd as float32 bits in registers, then rounded on the bits) in every mode, float16 -> float32
 * with vcvtph2ps and bfloat16 -> float32 by a shift (both exact), bfloat16 -> float16 (its exact
 * float32, then vcvtps2ph) and float16 -> bfloat16 (its exact float32 rounded on the bits).
 * The fix-ups the reference makes: NaN -> the canonical quiet NaN with its sign; saturation: an
 * Inf result -> the largest finite (the Inf code - 1). vcvtps2ph honours MXCSR's
 * denormals-are-zero: the float32 and bfloat16 -> float16 kernels clear it (and flush-to-zero) for the call and put the caller's word back. Compiled for
 * the target through function attributes only. */
#if defined(__x86_64__) && defined(__GNUC__)
#include "kernels.h"
#include "x86_attrs.h"

#include <immintrin.h>
#include <string.h>

#define FN DT_TARGET_AVX2

/* Runs BODY(in, out) over blocks of 16 elements; the tail through zeroed local blocks (reads
 * before writes: in place works). SB, DB: source and destination bytes per element. */
#define BLOCKS16(SB, DB, BODY)                                                                  \
    const uint8_t *s_ = (const uint8_t *)src + begin * (SB);                                    \
    uint8_t *d_ = (uint8_t *)dst + begin * (DB);                                                \
    const size_t n_ = end - begin;                                                              \
    size_t i_ = 0;                                                                              \
    for (; i_ + 16 <= n_; i_ += 16) {                                                           \
        dt_prefetch_span(s_ + i_ * (SB), 16 * (SB));                                            \
        BODY(s_ + i_ * (SB), d_ + i_ * (DB));                                                   \
    }                                                                                           \
    if (i_ < n_) {                                                                              \
        uint8_t tin_[16 * (SB)], tout_[16 * (DB)];                                              \
        memset(tin_, 0, sizeof tin_);                                                           \
        memcpy(tin_, s_ + i_ * (SB), (n_ - i_) * (SB));                                         \
        BODY(tin_, tout_);                                                                      \
        memcpy(d_ + i_ * (DB), tout_, (n_ - i_) * (DB));                                        \
    }

/* ---- float32 -> float16 ---------------------------------------------------------------------- */
/* 8 float32 lanes -> 8 float16 codes in mode IMM (an immediate), fixed up */
#define F32_F16_8(x, IMM, sat)                                                                  \
    ({                                                                                          \
        __m128i h_ = _mm256_cvtps_ph((x), (IMM));                                               \
        const __m256i a_ = _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(0x7FFFFFFF)); \
        /* NaN lanes (magnitude above Inf), narrowed to 16-bit lanes */                         \
        const __m256i n32_ = _mm256_cmpgt_epi32(a_, _mm256_set1_epi32(0x7F800000));             \
        const __m128i nan_ = _mm_packs_epi32(_mm256_castsi256_si128(n32_),                      \
                                             _mm256_extracti128_si256(n32_, 1));                \
        const __m128i mag_ = _mm_and_si128(h_, _mm_set1_epi16(0x7FFF));                         \
        const __m128i inf_ = _mm_and_si128(_mm_cmpeq_epi16(mag_, _mm_set1_epi16(0x7C00)), (sat)); \
        h_ = _mm_add_epi16(h_, inf_); /* Inf + (-1) is max under saturation */                   \
        const __m128i q_ = _mm_or_si128(_mm_and_si128(h_, _mm_set1_epi16((short)0x8000)),      \
                                        _mm_set1_epi16(0x7E00));                                \
        _mm_blendv_epi8(h_, q_, nan_);                                                          \
    })

/* 16 elements as two vectors of 8 float32 lanes, LD8(in, 0) and LD8(in, 8), each to float16 in
 * mode IMM (fixed up), one store: the body of every kernel below into float16 */
#define F16_BODY(IMM, LD8, in, out)                                                             \
    do {                                                                                        \
        const __m256 x0 = LD8(in, 0), x1 = LD8(in, 8);                                          \
        const __m128i h0 = F32_F16_8(x0, IMM, sat), h1 = F32_F16_8(x1, IMM, sat);              \
        _mm256_storeu_si256((__m256i *)(void *)(out), _mm256_set_m128i(h1, h0));                \
    } while (0)
/* The kernel of a float source of SB bytes an element (float32, bfloat16), body name_BODY:
 * MXCSR's DAZ/FTZ cleared for the call (a subnormal input is no zero here) */
#define FLOAT_F16(name, SB)                                                                     \
    static FN void name(const dt_kernel *k, void *dst, const void *src, size_t begin,          \
                        size_t end)                                                             \
    {                                                                                           \
        const __m128i sat = _mm_set1_epi16(k->r.saturate_float ? -1 : 0);                       \
        const unsigned csr = _mm_getcsr();                                                      \
        _mm_setcsr(csr & ~0x8040u);                                                             \
        BLOCKS16(SB, 2, name##_BODY)                                                            \
        _mm_setcsr(csr);                                                                        \
    }
#define LD8_F32(p, j) _mm256_loadu_ps((const float *)(const void *)((p) + 4 * (j)))
#define f32_f16_rne_BODY(in, out) F16_BODY(_MM_FROUND_TO_NEAREST_INT, LD8_F32, in, out)
#define f32_f16_floor_BODY(in, out) F16_BODY(_MM_FROUND_TO_NEG_INF, LD8_F32, in, out)
#define f32_f16_ceil_BODY(in, out) F16_BODY(_MM_FROUND_TO_POS_INF, LD8_F32, in, out)
#define f32_f16_trunc_BODY(in, out) F16_BODY(_MM_FROUND_TO_ZERO, LD8_F32, in, out)
FLOAT_F16(f32_f16_rne, 4)
FLOAT_F16(f32_f16_floor, 4)
FLOAT_F16(f32_f16_ceil, 4)
FLOAT_F16(f32_f16_trunc, 4)

/* ---- 8- and 16-bit integers -> float16: the exact float32 of each (under 2^24), then vcvtps2ph
 * in the mode (one rounding; 8-bit integers are exact in float16). 16 elements a step. */
#define LD_I8(p, j) _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)((p) + (j))))
#define LD_U8(p, j) _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)((p) + (j))))
#define LD_I16(p, j) _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(const void *)((p) + 2 * (j))))
#define LD_U16(p, j) _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)((p) + 2 * (j))))
#define LD8_I16(p, j) _mm256_cvtepi32_ps(LD_I16(p, j))
#define LD8_U16(p, j) _mm256_cvtepi32_ps(LD_U16(p, j))
#define I_F16(name, SB)                                                                         \
    static FN void name(const dt_kernel *k, void *dst, const void *src, size_t begin,          \
                        size_t end)                                                             \
    {                                                                                           \
        const __m128i sat = _mm_set1_epi16(k->r.saturate_float ? -1 : 0);                       \
        BLOCKS16(SB, 2, name##_BODY)                                                            \
    }
/* 8-bit integers: exact, never Inf: no fix-up */
#define I8_F16_BODY(LD, in, out)                                                                \
    do {                                                                                        \
        const __m128i h0 = _mm256_cvtps_ph(_mm256_cvtepi32_ps(LD(in, 0)), 0);                  \
        const __m128i h1 = _mm256_cvtps_ph(_mm256_cvtepi32_ps(LD(in, 8)), 0);                  \
        _mm256_storeu_si256((__m256i *)(void *)(out), _mm256_set_m128i(h1, h0));                \
    } while (0)
#define i8_f16_BODY(in, out) I8_F16_BODY(LD_I8, in, out)
#define u8_f16_BODY(in, out) I8_F16_BODY(LD_U8, in, out)
#define i16_f16_rne_BODY(in, out) F16_BODY(_MM_FROUND_TO_NEAREST_INT, LD8_I16, in, out)
#define i16_f16_floor_BODY(in, out) F16_BODY(_MM_FROUND_TO_NEG_INF, LD8_I16, in, out)
#define i16_f16_ceil_BODY(in, out) F16_BODY(_MM_FROUND_TO_POS_INF, LD8_I16, in, out)
#define i16_f16_trunc_BODY(in, out) F16_BODY(_MM_FROUND_TO_ZERO, LD8_I16, in, out)
#define u16_f16_rne_BODY(in, out) F16_BODY(_MM_FROUND_TO_NEAREST_INT, LD8_U16, in, out)
#define u16_f16_floor_BODY(in, out) F16_BODY(_MM_FROUND_TO_NEG_INF, LD8_U16, in, out)
#define u16_f16_ceil_BODY(in, out) F16_BODY(_MM_FROUND_TO_POS_INF, LD8_U16, in, out)
#define u16_f16_trunc_BODY(in, out) F16_BODY(_MM_FROUND_TO_ZERO, LD8_U16, in, out)
I_F16(i16_f16_rne, 2)
I_F16(i16_f16_floor, 2)
I_F16(i16_f16_ceil, 2)
I_F16(i16_f16_trunc, 2)
I_F16(u16_f16_rne, 2)
I_F16(u16_f16_floor, 2)
I_F16(u16_f16_ceil, 2)
I_F16(u16_f16_trunc, 2)
/* 8-bit integers -> bfloat16: the top half of their exact float32 (8 significant bits at most) */
#define I8_BF16_BODY(LD, in, out)                                                               \
    do {                                                                                        \
        const __m256i b0 = _mm256_srli_epi32(_mm256_castps_si256(_mm256_cvtepi32_ps(LD(in, 0))), 16); \
        const __m256i b1 = _mm256_srli_epi32(_mm256_castps_si256(_mm256_cvtepi32_ps(LD(in, 8))), 16); \
        /* packus interleaves the 128-bit halves: the permute puts them back in order */       \
        _mm256_storeu_si256((__m256i *)(void *)(out),                                           \
                            _mm256_permute4x64_epi64(_mm256_packus_epi32(b0, b1), 0xD8));       \
    } while (0)
#define i8_bf16_BODY(in, out) I8_BF16_BODY(LD_I8, in, out)
#define u8_bf16_BODY(in, out) I8_BF16_BODY(LD_U8, in, out)
/* 16-bit integers -> bfloat16: their exact float32 (finite, below 2^16: no overflow, no NaN),
 * rounded to its top half in mode M by an integer add below bit 16 (a carry moves into the
 * exponent), as float32 -> bfloat16 does */
static FN DT_INLINE __m256i i16_bf16_round(__m256i x, int m)
{
    const __m256i low = _mm256_set1_epi32(0xFFFF);
    const __m256i neg = _mm256_srai_epi32(x, 31); /* all ones in negative lanes */
    switch (m) {
    case M_RNE: /* 0x7FFF plus the kept lsb: ties go to even */
        return _mm256_add_epi32(x, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF),
                                                    _mm256_and_si256(_mm256_srli_epi32(x, 16),
                                                                     _mm256_set1_epi32(1))));
    case M_RNA: return _mm256_add_epi32(x, _mm256_set1_epi32(0x8000));
    case M_FLOOR: return _mm256_add_epi32(x, _mm256_and_si256(neg, low)); /* |x| up when < 0 */
    case M_CEIL: return _mm256_add_epi32(x, _mm256_andnot_si256(neg, low));
    case M_TRUNC: return x;
    default: /* odd: a nonzero low half sets the kept lsb */
        return _mm256_or_si256(
            x, _mm256_andnot_si256(_mm256_cmpeq_epi32(_mm256_and_si256(x, low), _mm256_setzero_si256()),
                                   _mm256_set1_epi32(0x10000)));
    }
}
#define I16_BF16_BODY(LD, in, out)                                                              \
    do {                                                                                        \
        const __m256i x0 = _mm256_castps_si256(_mm256_cvtepi32_ps(LD(in, 0)));                 \
        const __m256i x1 = _mm256_castps_si256(_mm256_cvtepi32_ps(LD(in, 8)));                 \
        const __m256i b0 = _mm256_srli_epi32(i16_bf16_round(x0, m_), 16);                       \
        const __m256i b1 = _mm256_srli_epi32(i16_bf16_round(x1, m_), 16);                       \
        _mm256_storeu_si256((__m256i *)(void *)(out),                                           \
                            _mm256_permute4x64_epi64(_mm256_packus_epi32(b0, b1), 0xD8));       \
    } while (0)
#define i16_bf16_BODY(in, out) I16_BF16_BODY(LD_I16, in, out)
#define u16_bf16_BODY(in, out) I16_BF16_BODY(LD_U16, in, out)
/* one kernel per signedness and mode (no policy: nothing overflows) */
#define I16_BF16(name, m)                                                                       \
    static FN void name##_##m(const dt_kernel *k, void *dst, const void *src, size_t begin,    \
                              size_t end)                                                       \
    {                                                                                           \
        enum { m_ = m };                                                                        \
        (void)k;                                                                                \
        BLOCKS16(2, 2, name##_BODY)                                                             \
    }
#define I16_BF16_MODES(name)                                                                    \
    I16_BF16(name, M_RNE) I16_BF16(name, M_RNA) I16_BF16(name, M_FLOOR) I16_BF16(name, M_CEIL) \
    I16_BF16(name, M_TRUNC) I16_BF16(name, M_ODD)
I16_BF16_MODES(i16_bf16)
I16_BF16_MODES(u16_bf16)
static const dt_kernel_fn i16_bf16_fns[2][M_MODES] = {
    {i16_bf16_M_RNE, i16_bf16_M_RNA, i16_bf16_M_FLOOR, i16_bf16_M_CEIL, i16_bf16_M_TRUNC,
     i16_bf16_M_ODD},
    {u16_bf16_M_RNE, u16_bf16_M_RNA, u16_bf16_M_FLOOR, u16_bf16_M_CEIL, u16_bf16_M_TRUNC,
     u16_bf16_M_ODD}};

/* the kernels of 8-bit integers (exact: no mode, no policy) */
#define I8_KERNEL(name)                                                                         \
    static FN void name(const dt_kernel *k, void *dst, const void *src, size_t begin,          \
                        size_t end)                                                             \
    {                                                                                           \
        (void)k;                                                                                \
        BLOCKS16(1, 2, name##_BODY)                                                             \
    }
I8_KERNEL(i8_f16)
I8_KERNEL(u8_f16)
I8_KERNEL(i8_bf16)
I8_KERNEL(u8_bf16)

/* ---- 64-bit integers -> float16 / bfloat16 --------------------------------------------------- */
/* 16 elements a step, read as 2 x 8: the low and high dwords of 8 elements' 64-bit lanes come
 * together in 32-bit lanes by shufps, which works within 128-bit halves: lane order 0 1 4 5 2 3
 * 6 7, put back in order by the stores. */
static FN DT_INLINE __m256 ld_ps_reg(const uint8_t *p)
{
    __m256 x = _mm256_loadu_ps((const float *)(const void *)p);
    __asm__("" : "+x"(x)); /* kept in a register: gcc would fold the load into each shuffle */
    return x;
}
static FN DT_INLINE __m256i dwords_lo(__m256 a, __m256 b)
{
    return _mm256_castps_si256(_mm256_shuffle_ps(a, b, 0x88));
}
static FN DT_INLINE __m256i dwords_hi(__m256 a, __m256 b)
{
    return _mm256_castps_si256(_mm256_shuffle_ps(a, b, 0xDD));
}

/* float16: every 64-bit integer beyond 2^16 in magnitude rounds as 2^16 does in every mode (to
 * Inf or to max), and under saturation every one beyond 65504 becomes +-65504: x clamped to
 * [-c, c] (c = 2^16, or 65504) is exact in float32, and vcvtps2ph rounds it once. */
static FN DT_INLINE __m256 i64_clamped(const uint8_t *p, int ss, __m256i c, __m256i nc)
{
    const __m256 a = ld_ps_reg(p), b = ld_ps_reg(p + 32);
    const __m256i lo = dwords_lo(a, b), hi = dwords_hi(a, b);
    __m256i y;
    if (ss) {
        /* x is an int32 when its high dword is the sign of its low one; else the int32 of its
         * sign and the largest magnitude stands for it (high dword's sign ^ 0x7FFFFFFF) */
        const __m256i fits = _mm256_cmpeq_epi32(hi, _mm256_srai_epi32(lo, 31));
        const __m256i big =
            _mm256_xor_si256(_mm256_srai_epi32(hi, 31), _mm256_set1_epi32(0x7FFFFFFF));
        y = _mm256_min_epi32(_mm256_max_epi32(_mm256_blendv_epi8(big, lo, fits), nc), c);
    } else { /* a nonzero high dword: c ORed into the low one makes it >= c */
        const __m256i small = _mm256_cmpeq_epi32(hi, _mm256_setzero_si256());
        y = _mm256_min_epu32(_mm256_or_si256(lo, _mm256_andnot_si256(small, c)), c);
    }
    return _mm256_cvtepi32_ps(y);
}

/* float32 lanes holding integers of magnitude <= 2^16 -> float16 codes in mode (M_*) */
static FN DT_INLINE __m128i int_f16(__m256 f, int mode)
{
    switch (mode) {
    case M_RNE: return _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT);
    case M_FLOOR: return _mm256_cvtps_ph(f, _MM_FROUND_TO_NEG_INF);
    case M_CEIL: return _mm256_cvtps_ph(f, _MM_FROUND_TO_POS_INF);
    case M_TRUNC: return _mm256_cvtps_ph(f, _MM_FROUND_TO_ZERO);
    case M_RNA: {
        /* ties away: to nearest of f moved away from zero by min(2^(e - 12), 1/2) for
         * 2^e <= |f| (exact), less than its distance to any midpoint it is not on: from 2^11 up
         * the midpoints are integers, below every integer is a float16 and 2^(e - 12) is a
         * quarter of its ulp. Zero stays zero. */
        const __m256i b = _mm256_castps_si256(f);
        __m256i q = _mm256_sub_epi32(_mm256_and_si256(b, _mm256_set1_epi32(0x7F800000)),
                                     _mm256_set1_epi32(12 << 23));
        q = _mm256_min_epi32(_mm256_max_epi32(q, _mm256_setzero_si256()),
                             _mm256_set1_epi32(126 << 23)); /* 0 for f = 0; 1/2 */
        q = _mm256_or_si256(q, _mm256_and_si256(b, _mm256_set1_epi32((int)0x80000000u)));
        return _mm256_cvtps_ph(_mm256_add_ps(f, _mm256_castsi256_ps(q)),
                               _MM_FROUND_TO_NEAREST_INT);
    }
    default: { /* odd: the truncation, its lsb set where it differs from f */
        const __m128i h = _mm256_cvtps_ph(f, _MM_FROUND_TO_ZERO);
        const __m256i ne = _mm256_castps_si256(_mm256_cmp_ps(_mm256_cvtph_ps(h), f, _CMP_NEQ_OQ));
        const __m128i ne16 =
            _mm_packs_epi32(_mm256_castsi256_si128(ne), _mm256_extracti128_si256(ne, 1));
        return _mm_or_si128(h, _mm_and_si128(ne16, _mm_set1_epi16(1)));
    }
    }
}

static FN DT_INLINE void i64_f16_16(const uint8_t *in, uint8_t *out, int ss, int mode, __m256i c,
                                    __m256i nc)
{
    const __m128i h0 = int_f16(i64_clamped(in, ss, c, nc), mode);
    const __m128i h1 = int_f16(i64_clamped(in + 64, ss, c, nc), mode);
    /* dwords (element pairs) 0 2 1 3 of each half back in order */
    _mm256_storeu_si256((__m256i *)(void *)out,
                        _mm256_shuffle_epi32(_mm256_set_m128i(h1, h0), 0xD8));
}

/* bfloat16: x rounded to odd at 21 significant bits as float32 bits, then the mode's rounding
 * of the top half. The double of x truncated (MXCSR toward zero) is hi * 2^32 + lo from
 * exponent bits, as the float64 kernels build it: the bits 0x453 | hi are 2^84 + hi * 2^32
 * (signed: hi + 2^31, its top bit flipped), 0x433 | lo are 2^52 + lo; the subtraction of the
 * constants is exact, the add truncates. */
static FN DT_INLINE __m256d i64_trunc(__m256i x, int ss)
{
    const __m256i hi = _mm256_xor_si256(
        _mm256_srli_epi64(x, 32), _mm256_set1_epi64x(ss ? 0x4530000080000000 : 0x4530000000000000));
    const __m256i lo = _mm256_blend_epi32(x, _mm256_set1_epi64x(0x4330000000000000), 0xAA);
    const double k = ss ? 0x1p84 + 0x1p63 + 0x1p52 : 0x1p84 + 0x1p52; /* exact */
    return _mm256_add_pd(_mm256_sub_pd(_mm256_castsi256_pd(hi), _mm256_set1_pd(k)),
                         _mm256_castsi256_pd(lo));
}
static FN DT_INLINE __m256i i64_odd21(const uint8_t *p, int ss)
{
    const __m256 a = ld_ps_reg(p), b = ld_ps_reg(p + 32);
    const __m256d d0 = i64_trunc(_mm256_castps_si256(a), ss);
    const __m256d d1 = i64_trunc(_mm256_castps_si256(b), ss);
    const __m256i hi = dwords_hi(_mm256_castpd_ps(d0), _mm256_castpd_ps(d1));
    const __m256i lo = dwords_lo(_mm256_castpd_ps(d0), _mm256_castpd_ps(d1));
    const __m256i zero = _mm256_setzero_si256();
    const __m256i mag = ss ? _mm256_and_si256(hi, _mm256_set1_epi32(0x7FFFFFFF)) : hi;
    /* the double's exponent and top 20 fraction bits, rebiased by 1023 - 127 (a negative
     * difference is zero's: raised to 0), << 3 */
    __m256i f = _mm256_sub_epi32(mag, _mm256_set1_epi32(896 << 20));
    f = _mm256_slli_epi32(_mm256_max_epi32(f, zero), 3);
    /* the bits of x below: the double's low 32 fraction bits, and x's low 11 bits, some of
     * which the truncation dropped where |x| >= 2^53 (else they are in the double) */
    const __m256i big = _mm256_cmpgt_epi32(mag, _mm256_set1_epi32((1076 << 20) - 1));
    const __m256i low = _mm256_and_si256(dwords_lo(a, b), _mm256_set1_epi32(0x7FF));
    const __m256i rest = _mm256_or_si256(lo, _mm256_and_si256(big, low));
    f = _mm256_or_si256(f, _mm256_andnot_si256(_mm256_cmpeq_epi32(rest, zero),
                                               _mm256_set1_epi32(1)));
    if (ss) /* the double's sign */
        f = _mm256_or_si256(f, _mm256_and_si256(hi, _mm256_set1_epi32((int)0x80000000u)));
    return f;
}

/* float32 bits (finite, no overflow possible) -> bfloat16 in the top half, in mode: an integer
 * add of a bias below bit 16 (a carry is the next binade) */
static FN DT_INLINE __m256i bf16_top(__m256i x, int mode)
{
    const __m256i sgn = _mm256_srai_epi32(x, 31); /* all ones in negative lanes */
    switch (mode) {
    case M_RNE: /* 0x7FFF plus the kept lsb: ties go to even */
        return _mm256_add_epi32(
            x, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF),
                                _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1))));
    case M_RNA: return _mm256_add_epi32(x, _mm256_set1_epi32(0x8000));
    case M_FLOOR: /* the magnitude of a negative lane rounds up */
        return _mm256_add_epi32(x, _mm256_and_si256(sgn, _mm256_set1_epi32(0xFFFF)));
    case M_CEIL: return _mm256_add_epi32(x, _mm256_andnot_si256(sgn, _mm256_set1_epi32(0xFFFF)));
    case M_TRUNC: return x;
    default: { /* odd: inexact (low half nonzero) sets the kept lsb */
        const __m256i exact = _mm256_cmpeq_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0xFFFF)),
                                                 _mm256_setzero_si256());
        return _mm256_or_si256(x, _mm256_andnot_si256(exact, _mm256_set1_epi32(0x10000)));
    }
    }
}

static FN DT_INLINE void i64_bf16_16(const uint8_t *in, uint8_t *out, int ss, int mode)
{
    const __m256i b0 = _mm256_srli_epi32(bf16_top(i64_odd21(in, ss), mode), 16);
    const __m256i b1 = _mm256_srli_epi32(bf16_top(i64_odd21(in + 64, ss), mode), 16);
    /* packus gives dwords (element pairs) 0 2 4 6 1 3 5 7 of the 8 pairs: the permute puts
     * them back in order */
    _mm256_storeu_si256((__m256i *)(void *)out,
                        _mm256_permutevar8x32_epi32(_mm256_packus_epi32(b0, b1),
                                                    _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}

/* one kernel per signedness and mode; bfloat16's set MXCSR to round toward zero (exceptions
 * masked, no FTZ/DAZ) and put the caller's word back, flags included */
#define I64_F16_BODY(in, out) i64_f16_16((in), (out), ss_, mode_, c, nc)
#define I64_BF16_BODY(in, out) i64_bf16_16((in), (out), ss_, mode_)
/* SB: bytes of the source (4 or 8) */
#define INT_HALF(name, ss, mode, SB, F16_BODY, BF16_BODY)                                      \
    static FN void name##_f16(const dt_kernel *k, void *dst, const void *src, size_t begin,    \
                              size_t end)                                                       \
    {                                                                                           \
        enum { ss_ = ss, mode_ = mode };                                                        \
        const __m256i c = _mm256_set1_epi32(k->r.saturate_float ? 65504 : 65536);               \
        const __m256i nc = _mm256_sub_epi32(_mm256_setzero_si256(), c);                         \
        BLOCKS16(SB, 2, F16_BODY)                                                               \
    }                                                                                           \
    static FN void name##_bf16(const dt_kernel *k, void *dst, const void *src, size_t begin,   \
                               size_t end)                                                      \
    {                                                                                           \
        enum { ss_ = ss, mode_ = mode };                                                        \
        (void)k;                                                                                \
        const unsigned csr = _mm_getcsr();                                                      \
        _mm_setcsr(0x7F80);                                                                     \
        __asm__ __volatile__("" ::: "memory"); /* loads after the new word, stores before */   \
        BLOCKS16(SB, 2, BF16_BODY)                                                              \
        __asm__ __volatile__("" ::: "memory");                                                  \
        _mm_setcsr(csr);                                                                        \
    }
#define I64_HALF(name, ss, mode) INT_HALF(name, ss, mode, 8, I64_F16_BODY, I64_BF16_BODY)
#define I64_HALF_MODES(name, ss)                                                                \
    I64_HALF(name##_rne, ss, M_RNE) I64_HALF(name##_rna, ss, M_RNA)                             \
    I64_HALF(name##_floor, ss, M_FLOOR) I64_HALF(name##_ceil, ss, M_CEIL)                       \
    I64_HALF(name##_trunc, ss, M_TRUNC) I64_HALF(name##_odd, ss, M_ODD)
I64_HALF_MODES(i64, 1)
I64_HALF_MODES(u64, 0)
#define I64_HALF_ROW(name, t)                                                                   \
    {name##_rne_##t, name##_rna_##t, name##_floor_##t, name##_ceil_##t, name##_trunc_##t,      \
     name##_odd_##t}
/* [bfloat16][uint64][mode] */
static const dt_kernel_fn i64_half_fns[2][2][M_MODES] = {
    {I64_HALF_ROW(i64, f16), I64_HALF_ROW(u64, f16)},
    {I64_HALF_ROW(i64, bf16), I64_HALF_ROW(u64, bf16)}};

/* The kernel of fns ([bfloat16][unsigned][mode]) for a signed or unsigned source of one width
 * into float16 or bfloat16: the finder of both the 64- and the 32-bit families. */
static bool int_half_find(dt_kernel *k, const dt_format *df, const dt_format *sf,
                          const dt_rules *r, dtcast_type signed_type, dtcast_type unsigned_type,
                          const dt_kernel_fn fns[2][2][M_MODES])
{
    const dtcast_type s = sf->type, d = df->type;
    const int m = dt_mode_of(r->round);
    if ((s != signed_type && s != unsigned_type) || (d != DTCAST_FLOAT16 && d != DTCAST_BFLOAT16) ||
        m < 0)
        return false;
    k->fn = fns[d == DTCAST_BFLOAT16][s == unsigned_type][m];
    return true;
}

bool dt_i64_half_find_avx2(dt_kernel *k, const dt_format *df, const dt_format *sf,
                           const dt_rules *r, size_t count)
{
    (void)count;
    return int_half_find(k, df, sf, r, DTCAST_INT64, DTCAST_UINT64, i64_half_fns);
}

/* ---- 32-bit integers -> float16 / bfloat16 --------------------------------------------------- */
/* float16: x clamped to [-c, c] as the 64-bit integers are (c = 2^16, or 65504 under saturation:
 * every integer beyond rounds as c does), exact in float32, then int_f16 rounds it once */
static FN DT_INLINE __m256 i32_clamped(__m256i x, int ss, __m256i c, __m256i nc)
{
    const __m256i y = ss ? _mm256_min_epi32(_mm256_max_epi32(x, nc), c) : _mm256_min_epu32(x, c);
    return _mm256_cvtepi32_ps(y);
}
static FN DT_INLINE void i32_f16_16(const uint8_t *in, uint8_t *out, int ss, int mode, __m256i c,
                                    __m256i nc)
{
    const __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)in);
    const __m256i x1 = _mm256_loadu_si256((const __m256i *)(const void *)(in + 32));
    const __m128i h0 = int_f16(i32_clamped(x0, ss, c, nc), mode);
    const __m128i h1 = int_f16(i32_clamped(x1, ss, c, nc), mode);
    _mm256_storeu_si256((__m256i *)(void *)out, _mm256_set_m128i(h1, h0));
}

/* bfloat16: x rounded to odd as float32 bits (MXCSR toward zero: vcvtdq2ps truncates; the lsb
 * set where the truncation converts back to another integer), then bf16_top's rounding. A
 * uint32 >= 2^31 is halved first, its dropped bit ORed into the lsb (below the 24 bits kept: the
 * same odd rounding), and doubled after as float32 bits (exponent + 1). */
static FN DT_INLINE __m256i i32_odd24(__m256i x, int ss)
{
    __m256i big = _mm256_setzero_si256();
    if (!ss) {
        big = _mm256_srai_epi32(x, 31); /* all ones where x >= 2^31 */
        const __m256i h = _mm256_or_si256(_mm256_srli_epi32(x, 1),
                                          _mm256_and_si256(x, _mm256_set1_epi32(1)));
        x = _mm256_blendv_epi8(x, h, big);
    }
    const __m256 t = _mm256_cvtepi32_ps(x); /* truncated: |t| <= |x| < 2^31 converts back */
    const __m256i exact = _mm256_cmpeq_epi32(_mm256_cvttps_epi32(t), x);
    __m256i f = _mm256_or_si256(_mm256_castps_si256(t),
                                _mm256_andnot_si256(exact, _mm256_set1_epi32(1)));
    if (!ss)
        f = _mm256_add_epi32(f, _mm256_and_si256(big, _mm256_set1_epi32(1 << 23)));
    return f;
}
static FN DT_INLINE void i32_bf16_16(const uint8_t *in, uint8_t *out, int ss, int mode)
{
    const __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)in);
    const __m256i x1 = _mm256_loadu_si256((const __m256i *)(const void *)(in + 32));
    const __m256i b0 = _mm256_srli_epi32(bf16_top(i32_odd24(x0, ss), mode), 16);
    const __m256i b1 = _mm256_srli_epi32(bf16_top(i32_odd24(x1, ss), mode), 16);
    /* packus interleaves the 128-bit halves: the permute puts them back in order */
    _mm256_storeu_si256((__m256i *)(void *)out,
                        _mm256_permute4x64_epi64(_mm256_packus_epi32(b0, b1), 0xD8));
}

/* one kernel per signedness and mode, as for the 64-bit integers */
#define I32_F16_BODY(in, out) i32_f16_16((in), (out), ss_, mode_, c, nc)
#define I32_BF16_BODY(in, out) i32_bf16_16((in), (out), ss_, mode_)
#define I32_HALF(name, ss, mode) INT_HALF(name, ss, mode, 4, I32_F16_BODY, I32_BF16_BODY)
#define I32_HALF_MODES(name, ss)                                                                \
    I32_HALF(name##_rne, ss, M_RNE) I32_HALF(name##_rna, ss, M_RNA)                             \
    I32_HALF(name##_floor, ss, M_FLOOR) I32_HALF(name##_ceil, ss, M_CEIL)                       \
    I32_HALF(name##_trunc, ss, M_TRUNC) I32_HALF(name##_odd, ss, M_ODD)
I32_HALF_MODES(i32, 1)
I32_HALF_MODES(u32, 0)
/* [bfloat16][uint32][mode] */
static const dt_kernel_fn i32_half_fns[2][2][M_MODES] = {
    {I64_HALF_ROW(i32, f16), I64_HALF_ROW(u32, f16)},
    {I64_HALF_ROW(i32, bf16), I64_HALF_ROW(u32, bf16)}};

bool dt_i32_half_find_avx2(dt_kernel *k, const dt_format *df, const dt_format *sf,
                           const dt_rules *r, size_t count)
{
    (void)count;
    return int_half_find(k, df, sf, r, DTCAST_INT32, DTCAST_UINT32, i32_half_fns);
}

/* ---- float16 / bfloat16 -> float32 ----------------------------------------------------------- */
/* NaN -> the canonical quiet NaN with its sign; saturation: Inf -> max (Inf - 1) */
static FN DT_INLINE __m256i fix_f32(__m256i y, __m256i sat)
{
    const __m256i a = _mm256_and_si256(y, _mm256_set1_epi32(0x7FFFFFFF));
    const __m256i nan = _mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7F800000));
    const __m256i inf = _mm256_and_si256(_mm256_cmpeq_epi32(a, _mm256_set1_epi32(0x7F800000)), sat);
    y = _mm256_add_epi32(y, inf); /* all-ones lanes: Inf - 1 */
    const __m256i q = _mm256_or_si256(_mm256_and_si256(y, _mm256_set1_epi32((int)0x80000000)),
                                      _mm256_set1_epi32(0x7FC00000));
    return _mm256_blendv_epi8(y, q, nan);
}
static FN DT_INLINE __m256i load_f16(const uint8_t *p)
{
    return _mm256_castps_si256(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)p)));
}
static FN DT_INLINE __m256i load_bf16(const uint8_t *p) /* bfloat16 is the top half of float32 */
{
    return _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)p)), 16);
}
#define WIDEN_BODY(LOAD, in, out)                                                               \
    do {                                                                                        \
        _mm256_storeu_si256((__m256i *)(void *)(out), fix_f32(LOAD(in), sat));                  \
        _mm256_storeu_si256((__m256i *)(void *)((out) + 32), fix_f32(LOAD((in) + 16), sat));    \
    } while (0)
#define H_BODY(in, out) WIDEN_BODY(load_f16, in, out)
#define B_BODY(in, out) WIDEN_BODY(load_bf16, in, out)
static FN void f16_f32(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    const __m256i sat = _mm256_set1_epi32(k->r.saturate_float ? -1 : 0);
    BLOCKS16(2, 4, H_BODY)
}
static FN void bf16_f32(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    const __m256i sat = _mm256_set1_epi32(k->r.saturate_float ? -1 : 0);
    BLOCKS16(2, 4, B_BODY)
}

/* ---- bfloat16 <-> float16 -------------------------------------------------------------------- */
/* bfloat16 -> float16: the bfloat16 bits moved up into float32 (exact), then vcvtps2ph in the
 * mode as float32 -> float16 (one rounding: float16 holds every bfloat16 significand, so only
 * the range rounds: below 2^-14 into float16's subnormals, above 65504 to Inf or max; MXCSR's
 * DAZ cleared, as bfloat16 has float32's subnormals). */
#define LD8_BF16(p, j) _mm256_castsi256_ps(load_bf16((p) + 2 * (j)))
#define bf16_f16_rne_BODY(in, out) F16_BODY(_MM_FROUND_TO_NEAREST_INT, LD8_BF16, in, out)
#define bf16_f16_floor_BODY(in, out) F16_BODY(_MM_FROUND_TO_NEG_INF, LD8_BF16, in, out)
#define bf16_f16_ceil_BODY(in, out) F16_BODY(_MM_FROUND_TO_POS_INF, LD8_BF16, in, out)
#define bf16_f16_trunc_BODY(in, out) F16_BODY(_MM_FROUND_TO_ZERO, LD8_BF16, in, out)
FLOAT_F16(bf16_f16_rne, 2)
FLOAT_F16(bf16_f16_floor, 2)
FLOAT_F16(bf16_f16_ceil, 2)
FLOAT_F16(bf16_f16_trunc, 2)

/* float16 -> bfloat16: the exact float32 (vcvtph2ps), rounded to its top half in the mode by
 * bf16_top (finite: no overflow, float16's 65504 is far below bfloat16's range), NaN -> the
 * canonical quiet NaN with its sign, saturation: Inf -> max. */
static FN DT_INLINE __m256i f16_bf16_8(const uint8_t *p, int mode, __m256i sat)
{
    const __m256i x = load_f16(p), a = _mm256_and_si256(x, _mm256_set1_epi32(0x7FFFFFFF));
    __m256i t = _mm256_srli_epi32(bf16_top(x, mode), 16);
    const __m256i inf = _mm256_cmpeq_epi32(a, _mm256_set1_epi32(0x7F800000));
    t = _mm256_add_epi32(t, _mm256_and_si256(inf, sat)); /* 0x7F80 - 1 */
    const __m256i q = _mm256_or_si256(_mm256_srli_epi32(_mm256_and_si256(x, _mm256_set1_epi32((int)0x80000000)), 16),
                                      _mm256_set1_epi32(0x7FC0));
    return _mm256_blendv_epi8(t, q, _mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7F800000)));
}
static FN DT_INLINE void f16_bf16_16(const uint8_t *in, uint8_t *out, int mode, __m256i sat)
{
    const __m256i b0 = f16_bf16_8(in, mode, sat), b1 = f16_bf16_8(in + 16, mode, sat);
    /* packus interleaves the 128-bit halves: the permute puts them back in order */
    _mm256_storeu_si256((__m256i *)(void *)out,
                        _mm256_permute4x64_epi64(_mm256_packus_epi32(b0, b1), 0xD8));
}
#define F16_BF16(name)                                                                          \
    static FN void name(const dt_kernel *k, void *dst, const void *src, size_t begin,          \
                        size_t end)                                                             \
    {                                                                                           \
        const __m256i sat = _mm256_set1_epi32(k->r.saturate_float ? -1 : 0);                    \
        BLOCKS16(2, 2, name##_BODY)                                                             \
    }
#define f16_bf16_rne_BODY(in, out) f16_bf16_16(in, out, M_RNE, sat)
#define f16_bf16_rna_BODY(in, out) f16_bf16_16(in, out, M_RNA, sat)
#define f16_bf16_floor_BODY(in, out) f16_bf16_16(in, out, M_FLOOR, sat)
#define f16_bf16_ceil_BODY(in, out) f16_bf16_16(in, out, M_CEIL, sat)
#define f16_bf16_trunc_BODY(in, out) f16_bf16_16(in, out, M_TRUNC, sat)
#define f16_bf16_odd_BODY(in, out) f16_bf16_16(in, out, M_ODD, sat)
F16_BF16(f16_bf16_rne)
F16_BF16(f16_bf16_rna)
F16_BF16(f16_bf16_floor)
F16_BF16(f16_bf16_ceil)
F16_BF16(f16_bf16_trunc)
F16_BF16(f16_bf16_odd)

/* ---- the entry ------------------------------------------------------------------------------- */
bool dt_half_find_avx2(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                       size_t count)
{
    (void)count;
    const dtcast_type s = sf->type, d = df->type;
    if (s == DTCAST_FLOAT32 && d == DTCAST_FLOAT16) {
        switch (dt_mode_of(r->round)) {
        case M_RNE: k->fn = f32_f16_rne; break;
        case M_FLOOR: k->fn = f32_f16_floor; break;
        case M_CEIL: k->fn = f32_f16_ceil; break;
        case M_TRUNC: k->fn = f32_f16_trunc; break;
        default: return false; /* rna, odd: the narrowing template */
        }
    } else if (s == DTCAST_BFLOAT16 && d == DTCAST_FLOAT16) {
        switch (dt_mode_of(r->round)) {
        case M_RNE: k->fn = bf16_f16_rne; break;
        case M_FLOOR: k->fn = bf16_f16_floor; break;
        case M_CEIL: k->fn = bf16_f16_ceil; break;
        case M_TRUNC: k->fn = bf16_f16_trunc; break;
        default: return false; /* rna, odd: the narrowing template */
        }
    } else if (s == DTCAST_FLOAT16 && d == DTCAST_BFLOAT16) {
        static const dt_kernel_fn fns[M_MODES] = {f16_bf16_rne,  f16_bf16_rna,   f16_bf16_floor,
                                                  f16_bf16_ceil, f16_bf16_trunc, f16_bf16_odd};
        const int m = dt_mode_of(r->round);
        if (m < 0)
            return false;
        k->fn = fns[m];
    } else if (d == DTCAST_FLOAT32 && s == DTCAST_FLOAT16) {
        k->fn = f16_f32;
    } else if (d == DTCAST_FLOAT32 && s == DTCAST_BFLOAT16) {
        k->fn = bf16_f32;
    } else if (d == DTCAST_FLOAT16 && (s == DTCAST_INT8 || s == DTCAST_UINT8)) {
        k->fn = s == DTCAST_INT8 ? i8_f16 : u8_f16; /* exact in every mode */
    } else if (d == DTCAST_BFLOAT16 && (s == DTCAST_INT8 || s == DTCAST_UINT8)) {
        k->fn = s == DTCAST_INT8 ? i8_bf16 : u8_bf16; /* exact in every mode */
    } else if (d == DTCAST_BFLOAT16 && (s == DTCAST_INT16 || s == DTCAST_UINT16)) {
        const int m = dt_mode_of(r->round);
        if (m < 0)
            return false;
        k->fn = i16_bf16_fns[s == DTCAST_UINT16][m];
    } else if (d == DTCAST_FLOAT16 && (s == DTCAST_INT16 || s == DTCAST_UINT16)) {
        static const dt_kernel_fn fns[2][4] = {
            {i16_f16_rne, i16_f16_floor, i16_f16_ceil, i16_f16_trunc},
            {u16_f16_rne, u16_f16_floor, u16_f16_ceil, u16_f16_trunc}};
        const int m = dt_mode_of(r->round);
        const int col = m == M_RNE ? 0 : m == M_FLOOR ? 1 : m == M_CEIL ? 2 : m == M_TRUNC ? 3 : -1;
        if (col < 0) /* rna, odd: the other kernels */
            return false;
        k->fn = fns[s == DTCAST_UINT16][col];
    }
    return k->fn != NULL;
}
#endif
