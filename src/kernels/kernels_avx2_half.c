/* AVX2 + F16C kernels for the 16-bit floats: float32 -> float16 with vcvtps2ph (its immediate
 * picks rne or a directed mode; the others take the narrowing template), 8- and 16-bit integers
 * -> float16 and 8-bit integers -> bfloat16 through their exact float32, float16 -> float32 with vcvtph2ps and bfloat16 ->
 * float32 by a shift (both exact). The fix-ups the reference makes:
 * NaN -> the canonical quiet NaN with its sign; saturation: an Inf result -> the largest finite
 * (the Inf code - 1). vcvtps2ph honours MXCSR's denormals-are-zero: the float32 -> float16
 * kernels clear it (and flush-to-zero) for the call and put the caller's word back. Compiled for
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

#define F32_F16(name, IMM)                                                                      \
    static FN void name(const dt_kernel *k, void *dst, const void *src, size_t begin,          \
                        size_t end)                                                             \
    {                                                                                           \
        const __m128i sat = _mm_set1_epi16(k->r.saturate_float ? -1 : 0);                       \
        const unsigned csr = _mm_getcsr();                                                      \
        _mm_setcsr(csr & ~0x8040u); /* no DAZ/FTZ: a subnormal input is no zero here */        \
        BLOCKS16(4, 2, F32_F16_BODY_##IMM)                                                      \
        _mm_setcsr(csr);                                                                        \
    }
#define F32_F16_BODY(IMM, in, out)                                                              \
    do {                                                                                        \
        const __m256 x0 = _mm256_loadu_ps((const float *)(const void *)(in));                   \
        const __m256 x1 = _mm256_loadu_ps((const float *)(const void *)((in) + 32));            \
        const __m128i h0 = F32_F16_8(x0, IMM, sat), h1 = F32_F16_8(x1, IMM, sat);              \
        _mm256_storeu_si256((__m256i *)(void *)(out), _mm256_set_m128i(h1, h0));                \
    } while (0)
#define F32_F16_BODY_0(in, out) F32_F16_BODY(_MM_FROUND_TO_NEAREST_INT, in, out)
#define F32_F16_BODY_1(in, out) F32_F16_BODY(_MM_FROUND_TO_NEG_INF, in, out)
#define F32_F16_BODY_2(in, out) F32_F16_BODY(_MM_FROUND_TO_POS_INF, in, out)
#define F32_F16_BODY_3(in, out) F32_F16_BODY(_MM_FROUND_TO_ZERO, in, out)
F32_F16(f32_f16_rne, 0)
F32_F16(f32_f16_floor, 1)
F32_F16(f32_f16_ceil, 2)
F32_F16(f32_f16_trunc, 3)

/* ---- 8- and 16-bit integers -> float16: the exact float32 of each (under 2^24), then vcvtps2ph
 * in the mode (one rounding; 8-bit integers are exact in float16). 16 elements a step. */
#define LD_I8(p, j) _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)((p) + (j))))
#define LD_U8(p, j) _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)((p) + (j))))
#define LD_I16(p, j) _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(const void *)((p) + 2 * (j))))
#define LD_U16(p, j) _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)((p) + 2 * (j))))
#define I_F16_BODY(IMM, LD, in, out)                                                            \
    do {                                                                                        \
        const __m256 x0 = _mm256_cvtepi32_ps(LD(in, 0)), x1 = _mm256_cvtepi32_ps(LD(in, 8));    \
        const __m128i h0 = F32_F16_8(x0, IMM, sat), h1 = F32_F16_8(x1, IMM, sat);              \
        _mm256_storeu_si256((__m256i *)(void *)(out), _mm256_set_m128i(h1, h0));                \
    } while (0)
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
#define i16_f16_rne_BODY(in, out) I_F16_BODY(_MM_FROUND_TO_NEAREST_INT, LD_I16, in, out)
#define i16_f16_floor_BODY(in, out) I_F16_BODY(_MM_FROUND_TO_NEG_INF, LD_I16, in, out)
#define i16_f16_ceil_BODY(in, out) I_F16_BODY(_MM_FROUND_TO_POS_INF, LD_I16, in, out)
#define i16_f16_trunc_BODY(in, out) I_F16_BODY(_MM_FROUND_TO_ZERO, LD_I16, in, out)
#define u16_f16_rne_BODY(in, out) I_F16_BODY(_MM_FROUND_TO_NEAREST_INT, LD_U16, in, out)
#define u16_f16_floor_BODY(in, out) I_F16_BODY(_MM_FROUND_TO_NEG_INF, LD_U16, in, out)
#define u16_f16_ceil_BODY(in, out) I_F16_BODY(_MM_FROUND_TO_POS_INF, LD_U16, in, out)
#define u16_f16_trunc_BODY(in, out) I_F16_BODY(_MM_FROUND_TO_ZERO, LD_U16, in, out)
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
    } else if (d == DTCAST_FLOAT32 && s == DTCAST_FLOAT16) {
        k->fn = f16_f32;
    } else if (d == DTCAST_FLOAT32 && s == DTCAST_BFLOAT16) {
        k->fn = bf16_f32;
    } else if (d == DTCAST_FLOAT16 && (s == DTCAST_INT8 || s == DTCAST_UINT8)) {
        k->fn = s == DTCAST_INT8 ? i8_f16 : u8_f16; /* exact in every mode */
    } else if (d == DTCAST_BFLOAT16 && (s == DTCAST_INT8 || s == DTCAST_UINT8)) {
        k->fn = s == DTCAST_INT8 ? i8_bf16 : u8_bf16; /* exact in every mode */
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
