/* AVX-512 kernels (F/BW/VL/DQ/VBMI): the narrowing template with 16 lanes, float32 <-> float16
 * with vcvtps2ph/vcvtph2ps, float32 <-> float64, and 8-bit sources through their 256-entry
 * table with vpermi2b. Compiled for the target through function attributes only. */
#if defined(__x86_64__) && defined(__GNUC__)
#define DT_X86_AVX512 1
#include "kernels_x86.h"

#include <math.h>

/* Runs BODY(in, out) over blocks of B elements; the tail goes through zeroed local blocks (reads
 * before writes: in place works). SB, DB: source and destination bytes per element. */
#define BLOCKS(B, SB, DB, BODY)                                                                 \
    const uint8_t *s_ = (const uint8_t *)src + begin * (SB);                                    \
    uint8_t *d_ = (uint8_t *)dst + begin * (DB);                                                \
    size_t n_ = end - begin, i_ = 0;                                                            \
    for (; i_ + (B) <= n_; i_ += (B)) {                                                         \
        dt_prefetch_span(s_ + i_ * (SB), (B) * (SB));                                           \
        BODY(s_ + i_ * (SB), d_ + i_ * (DB));                                                   \
    }                                                                                           \
    if (i_ < n_) {                                                                              \
        uint8_t tin_[(B) * (SB)], tout_[(B) * (DB)];                                            \
        memset(tin_, 0, sizeof tin_);                                                           \
        memcpy(tin_, s_ + i_ * (SB), (n_ - i_) * (SB));                                         \
        BODY(tin_, tout_);                                                                      \
        memcpy(d_ + i_ * (DB), tout_, (n_ - i_) * (DB));                                        \
    }

#include "lines_nt.h" /* LINES_NT, NT_LINE: the kernels' own streaming stores */

/* ---- float32 -> float16: vcvtps2ph rounds exactly in rne and the directed modes (the
 * immediate picks the mode; overflow follows IEEE 754 as the reference does). Fixed up: NaN ->
 * canonical 0x7E00 with the sign; saturate: +-Inf results -> +-max (Inf - 1). */
#define F32_F16(name, IMM)                                                                      \
    static FN void name(const dt_kernel *k, void *dst, const void *src, size_t begin,          \
                        size_t end)                                                             \
    {                                                                                           \
        const __mmask16 sat = k->r.saturate_float ? 0xFFFF : 0;                                 \
        enum { imm_ = IMM };                                                                    \
        const unsigned csr = _mm_getcsr();                                                      \
        _mm_setcsr(csr & ~0x8040u); /* no DAZ/FTZ (as kernels_avx2_half.c) */                   \
        BLOCKS(16, 4, 2, F32_F16_BODY)                                                          \
        _mm_setcsr(csr);                                                                        \
    }
/* 16 float32 -> 16 float16 bits in mode IMM (the fix-ups above) */
#define F32_F16_VEC(x, IMM, sat)                                                                \
    __extension__({                                                                             \
        __m256i h_ = _mm512_cvtps_ph((x), (IMM) | _MM_FROUND_NO_EXC);                           \
        const __mmask16 nan_ = _mm512_cmpgt_epi32_mask(                                         \
            _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7FFFFFFF)),            \
            _mm512_set1_epi32(0x7F800000));                                                     \
        const __m256i mag_ = _mm256_and_si256(h_, _mm256_set1_epi16(0x7FFF));                   \
        const __mmask16 inf_ = _mm256_cmpeq_epi16_mask(mag_, _mm256_set1_epi16(0x7C00));       \
        h_ = _mm256_mask_sub_epi16(h_, inf_ & (sat), h_, _mm256_set1_epi16(1)); /* Inf - 1 */  \
        /* NaN: the sign of h, then the canonical quiet NaN: (h & 0x8000) | 0x7E00 */          \
        _mm256_mask_blend_epi16(nan_, h_,                                                       \
                                _mm256_ternarylogic_epi32(h_, _mm256_set1_epi16((short)0x8000), \
                                                          _mm256_set1_epi16(0x7E00), 0xEA));    \
    })
#define F32_F16_BODY(in, out)                                                                   \
    _mm256_storeu_si256((__m256i *)(void *)(out),                                               \
                        F32_F16_VEC(_mm512_loadu_ps((const void *)(in)), imm_, sat))
/* 32 elements, one line: two conversions side by side */
#define F32_F16_LINE(in, IMM)                                                                   \
    _mm512_inserti64x4(                                                                         \
        _mm512_castsi256_si512(F32_F16_VEC(_mm512_loadu_ps((const void *)(in)), IMM, sat)),    \
        F32_F16_VEC(_mm512_loadu_ps((const void *)((in) + 64)), IMM, sat), 1)
F32_F16(f32_f16_rne_plain, _MM_FROUND_TO_NEAREST_INT)
F32_F16(f32_f16_floor_plain, _MM_FROUND_TO_NEG_INF)
F32_F16(f32_f16_ceil_plain, _MM_FROUND_TO_POS_INF)
F32_F16(f32_f16_trunc_plain, _MM_FROUND_TO_ZERO)
/* with streaming stores: MXCSR as in F32_F16 around the lines (PLAIN sets its own) */
#define F32_F16_NT(name, IMM)                                                                   \
    static FN void name##_lines(const dt_kernel *k, void *dst, const void *src, size_t begin,  \
                                size_t end);                                                    \
    static FN void name(const dt_kernel *k, void *dst, const void *src, size_t begin,          \
                        size_t end)                                                             \
    {                                                                                           \
        const unsigned csr = _mm_getcsr();                                                      \
        _mm_setcsr(csr & ~0x8040u);                                                             \
        name##_lines(k, dst, src, begin, end);                                                  \
        _mm_setcsr(csr);                                                                        \
    }                                                                                           \
    LINES_NT(name##_lines, name##_plain, 32, 4, 2,                                              \
             const __mmask16 sat = k->r.saturate_float ? 0xFFFF : 0;, F32_F16_NT_##name)
#define F32_F16_NT_f32_f16_rne(in, out) NT_LINE(F32_F16_LINE_rne, in, out)
#define F32_F16_LINE_rne(in) F32_F16_LINE(in, _MM_FROUND_TO_NEAREST_INT)
#define F32_F16_NT_f32_f16_floor(in, out) NT_LINE(F32_F16_LINE_floor, in, out)
#define F32_F16_LINE_floor(in) F32_F16_LINE(in, _MM_FROUND_TO_NEG_INF)
#define F32_F16_NT_f32_f16_ceil(in, out) NT_LINE(F32_F16_LINE_ceil, in, out)
#define F32_F16_LINE_ceil(in) F32_F16_LINE(in, _MM_FROUND_TO_POS_INF)
#define F32_F16_NT_f32_f16_trunc(in, out) NT_LINE(F32_F16_LINE_trunc, in, out)
#define F32_F16_LINE_trunc(in) F32_F16_LINE(in, _MM_FROUND_TO_ZERO)
F32_F16_NT(f32_f16_rne, _MM_FROUND_TO_NEAREST_INT)
F32_F16_NT(f32_f16_floor, _MM_FROUND_TO_NEG_INF)
F32_F16_NT(f32_f16_ceil, _MM_FROUND_TO_POS_INF)
F32_F16_NT(f32_f16_trunc, _MM_FROUND_TO_ZERO)

/* ---- bfloat16 -> float16: the bfloat16 bits moved up into float32 (exact), then vcvtps2ph as
 * above (one rounding: float16 holds bfloat16's every significand, so only its range rounds:
 * below 2^-14 into float16's subnormals, above 65504 to Inf or max) */
#define BF16_AS_F32(in) \
    _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(in))), 16))
#define BF16_F16_BODY(in, out)                                                                  \
    _mm256_storeu_si256((__m256i *)(void *)(out), F32_F16_VEC(BF16_AS_F32(in), imm_, sat))
#define BF16_F16(name, IMM)                                                                     \
    static FN void name(const dt_kernel *k, void *dst, const void *src, size_t begin,          \
                        size_t end)                                                             \
    {                                                                                           \
        const __mmask16 sat = k->r.saturate_float ? 0xFFFF : 0;                                 \
        enum { imm_ = IMM };                                                                    \
        BLOCKS(16, 2, 2, BF16_F16_BODY)                                                         \
    }
BF16_F16(bf16_f16_rne_plain, _MM_FROUND_TO_NEAREST_INT)
BF16_F16(bf16_f16_floor_plain, _MM_FROUND_TO_NEG_INF)
BF16_F16(bf16_f16_ceil_plain, _MM_FROUND_TO_POS_INF)
BF16_F16(bf16_f16_trunc_plain, _MM_FROUND_TO_ZERO)
/* 32 elements, one line */
#define BF16_F16_LINE(in, IMM)                                                                  \
    _mm512_inserti64x4(_mm512_castsi256_si512(F32_F16_VEC(BF16_AS_F32(in), IMM, sat)),         \
                       F32_F16_VEC(BF16_AS_F32((in) + 32), IMM, sat), 1)
#define BF16_F16_NT_rne(in, out) _mm512_stream_si512((void *)(out), BF16_F16_LINE(in, _MM_FROUND_TO_NEAREST_INT))
#define BF16_F16_NT_floor(in, out) _mm512_stream_si512((void *)(out), BF16_F16_LINE(in, _MM_FROUND_TO_NEG_INF))
#define BF16_F16_NT_ceil(in, out) _mm512_stream_si512((void *)(out), BF16_F16_LINE(in, _MM_FROUND_TO_POS_INF))
#define BF16_F16_NT_trunc(in, out) _mm512_stream_si512((void *)(out), BF16_F16_LINE(in, _MM_FROUND_TO_ZERO))
#define BF16_F16_LINES(m)                                                                       \
    LINES_NT(bf16_f16_##m, bf16_f16_##m##_plain, 32, 2, 2,                                      \
             const __mmask16 sat = k->r.saturate_float ? 0xFFFF : 0;, BF16_F16_NT_##m)
BF16_F16_LINES(rne)
BF16_F16_LINES(floor)
BF16_F16_LINES(ceil)
BF16_F16_LINES(trunc)

/* ---- float16 / bfloat16 -> float32 (exact): NaN -> canonical with sign, saturate Inf -> max */
static FN inline __m512i fix_f32(__m512i y, __mmask16 sat)
{
    const __m512i a = _mm512_and_si512(y, _mm512_set1_epi32(0x7FFFFFFF));
    const __mmask16 nan = _mm512_cmpgt_epi32_mask(a, _mm512_set1_epi32(0x7F800000));
    const __mmask16 inf = _mm512_cmpeq_epi32_mask(a, _mm512_set1_epi32(0x7F800000)) & sat;
    y = _mm512_mask_sub_epi32(y, inf, y, _mm512_set1_epi32(1)); /* Inf - 1 is max */
    /* NaN: keep the sign bit, then the canonical quiet NaN */
    return _mm512_mask_ternarylogic_epi32(y, nan, _mm512_set1_epi32((int)0x80000000),
                                          _mm512_set1_epi32(0x7FC00000), 0xEA /* (y&b)|c */);
}
#define H_F32_BODY(in, out)                                                                     \
    _mm512_storeu_si512((out), fix_f32(v_load16h(in), sat))
#define B_F32_BODY(in, out)                                                                     \
    _mm512_storeu_si512((out), fix_f32(v_load16b(in), sat))
static FN void f16_f32_plain(const dt_kernel *k, void *dst, const void *src, size_t begin,
                             size_t end)
{
    const __mmask16 sat = k->r.saturate_float ? 0xFFFF : 0;
    BLOCKS(16, 2, 4, H_F32_BODY)
}
static FN void bf16_f32_plain(const dt_kernel *k, void *dst, const void *src, size_t begin,
                              size_t end)
{
    const __mmask16 sat = k->r.saturate_float ? 0xFFFF : 0;
    BLOCKS(16, 2, 4, B_F32_BODY)
}
#define H_F32_LINE(in) fix_f32(v_load16h(in), sat)
#define B_F32_LINE(in) fix_f32(v_load16b(in), sat)
#define H_F32_NT(in, out) NT_LINE(H_F32_LINE, in, out)
#define B_F32_NT(in, out) NT_LINE(B_F32_LINE, in, out)
LINES_NT(f16_f32, f16_f32_plain, 16, 2, 4, const __mmask16 sat = k->r.saturate_float ? 0xFFFF : 0;,
         H_F32_NT)
LINES_NT(bf16_f32, bf16_f32_plain, 16, 2, 4,
         const __mmask16 sat = k->r.saturate_float ? 0xFFFF : 0;, B_F32_NT)

/* ---- float32 -> float64 (exact; NaN canonical, saturate Inf -> max) -------------------------- */
static FN inline __m512i fix_f64(__m512i y, __mmask8 sat)
{
    const __m512i a = _mm512_and_si512(y, _mm512_set1_epi64(0x7FFFFFFFFFFFFFFF));
    const __m512i inf_bits = _mm512_set1_epi64(0x7FF0000000000000);
    const __mmask8 nan = _mm512_cmpgt_epi64_mask(a, inf_bits);
    const __mmask8 inf = _mm512_cmpeq_epi64_mask(a, inf_bits) & sat;
    y = _mm512_mask_sub_epi64(y, inf, y, _mm512_set1_epi64(1));
    return _mm512_mask_ternarylogic_epi64(y, nan, _mm512_set1_epi64((long long)0x8000000000000000ull),
                                          _mm512_set1_epi64(0x7FF8000000000000), 0xEA);
}
#define F32_F64_BODY(in, out)                                                                   \
    _mm512_storeu_si512((out), fix_f64(_mm512_castpd_si512(_mm512_cvtps_pd(                     \
                                           _mm256_loadu_ps((const float *)(const void *)(in)))), sat))
static FN void f32_f64_plain(const dt_kernel *k, void *dst, const void *src, size_t begin,
                             size_t end)
{
    const __mmask8 sat = k->r.saturate_float ? 0xFF : 0;
    BLOCKS(8, 4, 8, F32_F64_BODY)
}
#define F32_F64_LINE(in)                                                                        \
    fix_f64(_mm512_castpd_si512(_mm512_cvtps_pd(_mm256_loadu_ps((const float *)(const void *)(in)))), sat)
#define F32_F64_NT(in, out) NT_LINE(F32_F64_LINE, in, out)
LINES_NT(f32_f64, f32_f64_plain, 8, 4, 8, const __mmask8 sat = k->r.saturate_float ? 0xFF : 0;,
         F32_F64_NT)

/* ---- float64 -> float32: vcvtpd2ps with the mode as embedded rounding (IEEE overflow as the
 * reference); odd: truncate and set the lsb of inexact results. NaN canonical; saturate. */
static FN inline __m256i f64cvt(__m512d x, int mode)
{
#define CVT(m) _mm256_castps_si256(_mm512_cvt_roundpd_ps(x, m | _MM_FROUND_NO_EXC))
    switch (mode) {
    case M_FLOOR:
        return CVT(_MM_FROUND_TO_NEG_INF);
    case M_CEIL:
        return CVT(_MM_FROUND_TO_POS_INF);
    case M_TRUNC:
        return CVT(_MM_FROUND_TO_ZERO);
    case M_ODD:
        return f64odd8(x);
    default:
        return CVT(_MM_FROUND_TO_NEAREST_INT);
    }
#undef CVT
}
#define F64_F32(name, MODE)                                                                     \
    static FN void name(const dt_kernel *k, void *dst, const void *src, size_t begin,          \
                        size_t end)                                                             \
    {                                                                                           \
        const __mmask8 sat = k->r.saturate_float ? 0xFF : 0;                                    \
        const int mode = MODE;                                                                  \
        BLOCKS(8, 8, 4, F64_F32_BODY)                                                           \
    }
/* 8 float64 -> 8 float32 bits in mode (the fix-ups: NaN canonical, saturate) */
static FN DT_INLINE __m256i f64_f32_vec(__m512d x, int mode, __mmask8 sat)
{
    __m256i y = f64cvt(x, mode);
    const __m256i a = _mm256_and_si256(y, _mm256_set1_epi32(0x7FFFFFFF));
    const __mmask8 nan = _mm512_cmp_pd_mask(x, x, _CMP_UNORD_Q);
    const __mmask8 inf = _mm256_cmpeq_epi32_mask(a, _mm256_set1_epi32(0x7F800000)) & sat;
    y = _mm256_mask_sub_epi32(y, inf, y, _mm256_set1_epi32(1));
    return _mm256_mask_ternarylogic_epi32(y, nan, _mm256_set1_epi32((int)0x80000000),
                                          _mm256_set1_epi32(0x7FC00000), 0xEA);
}
#define F64_F32_BODY(in, out)                                                                   \
    _mm256_storeu_si256((__m256i *)(void *)(out),                                               \
                        f64_f32_vec(_mm512_loadu_pd((const void *)(in)), mode, sat))
#define F64_F32_LINE(in)                                                                        \
    _mm512_inserti64x4(                                                                         \
        _mm512_castsi256_si512(f64_f32_vec(_mm512_loadu_pd((const void *)(in)), mode, sat)),   \
        f64_f32_vec(_mm512_loadu_pd((const void *)((in) + 64)), mode, sat), 1)
#define F64_F32_NT(name, MODE)                                                                  \
    F64_F32(name##_plain, MODE)                                                                 \
    LINES_NT(name, name##_plain, 16, 8, 4,                                                      \
             const __mmask8 sat = k->r.saturate_float ? 0xFF : 0; const int mode = MODE;,       \
             F64_F32_NT1)
#define F64_F32_NT1(in, out) NT_LINE(F64_F32_LINE, in, out)
F64_F32_NT(f64_f32_rne, M_RNE)
F64_F32_NT(f64_f32_floor, M_FLOOR)
F64_F32_NT(f64_f32_ceil, M_CEIL)
F64_F32_NT(f64_f32_trunc, M_TRUNC)
F64_F32_NT(f64_f32_odd, M_ODD)

/* ---- 8-bit source -> 16- or 32-bit destination through the 256-entry table ------------------
 * The table is split into byte planes (byte j of every entry); each plane is 4 x 64 bytes.
 * vpermi2b looks 64 indices up in 128 bytes (index bit 6 picks the register); bit 7 of the
 * index picks between the two halves by mask. Planes are then interleaved into entries. */
typedef struct planes {
    __m512i p[4][4]; /* [byte j][64-entry quarter] */
} planes;

/* The 256-entry table of w-byte codes as w byte planes (plane j: byte j of every entry), into
 * k->local once per conversion (the table may itself be k->local). */
static void planes_from_table(dt_kernel *k, const uint8_t *t, int w)
{
    uint8_t tmp[256 * 4];
    for (int j = 0; j < w; j++)
        for (int c = 0; c < 256; c++)
            tmp[256 * j + c] = t[c * w + j];
    memcpy(k->local, tmp, 256 * (size_t)w);
    k->table = k->local;
}

static FN inline void load_planes(planes *pl, const uint8_t *planes_bytes, int w)
{
    for (int j = 0; j < w; j++)
        for (int q = 0; q < 4; q++)
            pl->p[j][q] = _mm512_loadu_si512(planes_bytes + 256 * j + 64 * q);
}

static FN inline __m512i plane_lookup(const planes *pl, int j, __m512i idx, __mmask64 hi)
{
    const __m512i lo = _mm512_permutex2var_epi8(pl->p[j][0], idx, pl->p[j][1]);
    const __m512i up = _mm512_permutex2var_epi8(pl->p[j][2], idx, pl->p[j][3]);
    return _mm512_mask_blend_epi8(hi, lo, up);
}

/* interleave two byte vectors a (low bytes) and b (high bytes) of 64 elements into 64 words,
 * in element order: unpack works per 128-bit lane, so the lanes are first put in place */
static FN inline void zip8(__m512i a, __m512i b, __m512i *w0, __m512i *w1)
{
    const __m512i lo = _mm512_unpacklo_epi8(a, b), hi = _mm512_unpackhi_epi8(a, b);
    /* lane i of lo holds elements 16i..16i+7, of hi 16i+8..16i+15 */
    *w0 = _mm512_permutex2var_epi64(lo, _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), hi);
    *w1 = _mm512_permutex2var_epi64(lo, _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15), hi);
}
static FN inline void zip16(__m512i a, __m512i b, __m512i *w0, __m512i *w1)
{
    const __m512i lo = _mm512_unpacklo_epi16(a, b), hi = _mm512_unpackhi_epi16(a, b);
    *w0 = _mm512_permutex2var_epi64(lo, _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), hi);
    *w1 = _mm512_permutex2var_epi64(lo, _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15), hi);
}

#define T16_STORE(in, out, STORE)                                                               \
    do {                                                                                        \
        const __m512i idx = _mm512_loadu_si512(in);                                             \
        const __mmask64 hi = _mm512_movepi8_mask(idx);                                          \
        __m512i w0, w1;                                                                         \
        zip8(plane_lookup(&pl, 0, idx, hi), plane_lookup(&pl, 1, idx, hi), &w0, &w1);           \
        STORE((void *)(out), w0);                                                               \
        STORE((void *)((out) + 64), w1);                                                        \
    } while (0)
#define T32_STORE(in, out, STORE)                                                               \
    do {                                                                                        \
        const __m512i idx = _mm512_loadu_si512(in);                                             \
        const __mmask64 hi = _mm512_movepi8_mask(idx);                                          \
        __m512i a0, a1, b0, b1, d0, d1, d2, d3;                                                 \
        zip8(plane_lookup(&pl, 0, idx, hi), plane_lookup(&pl, 1, idx, hi), &a0, &a1);           \
        zip8(plane_lookup(&pl, 2, idx, hi), plane_lookup(&pl, 3, idx, hi), &b0, &b1);           \
        zip16(a0, b0, &d0, &d1);                                                                \
        zip16(a1, b1, &d2, &d3);                                                                \
        STORE((void *)(out), d0);                                                               \
        STORE((void *)((out) + 64), d1);                                                        \
        STORE((void *)((out) + 128), d2);                                                       \
        STORE((void *)((out) + 192), d3);                                                       \
    } while (0)
/* 8-bit targets: the one plane is the table */
#define T8_STORE(in, out, STORE)                                                                \
    do {                                                                                        \
        const __m512i idx = _mm512_loadu_si512(in);                                             \
        STORE((void *)(out), plane_lookup(&pl, 0, idx, _mm512_movepi8_mask(idx)));             \
    } while (0)
#define T8_BODY(in, out) T8_STORE(in, out, _mm512_storeu_si512)
#define T8_NT(in, out) T8_STORE(in, out, _mm512_stream_si512)
#define T16_BODY(in, out) T16_STORE(in, out, _mm512_storeu_si512)
#define T32_BODY(in, out) T32_STORE(in, out, _mm512_storeu_si512)
#define T16_NT(in, out) T16_STORE(in, out, _mm512_stream_si512)
#define T32_NT(in, out) T32_STORE(in, out, _mm512_stream_si512)
static FN void t8_8_plain(const dt_kernel *k, void *dst, const void *src, size_t begin,
                         size_t end)
{
    planes pl;
    load_planes(&pl, k->table, 1);
    BLOCKS(64, 1, 1, T8_BODY)
}
static FN void t8_16_plain(const dt_kernel *k, void *dst, const void *src, size_t begin,
                          size_t end)
{
    planes pl;
    load_planes(&pl, k->table, 2);
    BLOCKS(64, 1, 2, T16_BODY)
}
static FN void t8_32_plain(const dt_kernel *k, void *dst, const void *src, size_t begin,
                          size_t end)
{
    planes pl;
    load_planes(&pl, k->table, 4);
    BLOCKS(64, 1, 4, T32_BODY)
}
LINES_NT(t8_8, t8_8_plain, 64, 1, 1, planes pl; load_planes(&pl, k->table, 1);, T8_NT)
/* 8-bit source -> packed 4-, 2- and 1-bit targets: the 64 codes of a vector looked up as for
 * 8-bit targets (each below 2^db, in the low bits of its byte), then packed, element 2k in the
 * low bits as ONNX:
 *
 *   4 bits, per 16-bit lane:   w = c1 << 8 | c0          ->  (w | w >> 4) & 0xFF = c1 << 4 | c0
 *   2 bits, per 32-bit lane:   d = c3 c2 c1 c0 (bytes)   ->  w = d | d >> 6 (16-bit shifts):
 *                              byte 0 = c1 << 2 | c0, byte 2 = c3 << 2 | c2, bits 10-15 zero;
 *                              (w | w >> 12) & 0xFF = c3 << 6 | c2 << 4 | c1 << 2 | c0
 *   1 bit:                     the codes' nonzero mask (vptestmb) is the 64 bits in order
 *
 * vpmovwb / vpmovdb truncate the lanes to their low byte. The last partial vector goes through
 * a zeroed block, its codes past the end masked to 0 (the padding of a last partial byte). In
 * place, a vector's 64 source bytes are read before its 8-32 output bytes (at or below them)
 * are written. */
static FN DT_INLINE void t8_pack_store(uint8_t *o, __m512i c, int db)
{
    if (db == 4) {
        const __m512i w = _mm512_or_si512(c, _mm512_srli_epi16(c, 4));
        _mm256_storeu_si256((__m256i *)(void *)o, _mm512_cvtepi16_epi8(w));
    } else if (db == 2) {
        const __m512i w = _mm512_or_si512(c, _mm512_srli_epi16(c, 6));
        const __m512i d = _mm512_or_si512(w, _mm512_srli_epi32(w, 12));
        _mm_storeu_si128((__m128i *)(void *)o, _mm512_cvtepi32_epi8(d));
    } else {
        const uint64_t m = _mm512_test_epi8_mask(c, c);
        memcpy(o, &m, 8);
    }
}
static FN DT_INLINE void t8_sub_run(const dt_kernel *k, void *dst, const void *src, size_t begin,
                                    size_t end, int db)
{
    planes pl;
    load_planes(&pl, k->table, 1);
    const uint8_t *s = (const uint8_t *)src + begin;
    uint8_t *d = (uint8_t *)dst + begin * (size_t)db / 8; /* begin: a multiple of 8 */
    const size_t n = end - begin;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        dt_prefetch_span(s + i, 64);
        const __m512i idx = _mm512_loadu_si512(s + i);
        t8_pack_store(d + i * (size_t)db / 8, plane_lookup(&pl, 0, idx, _mm512_movepi8_mask(idx)),
                      db);
    }
    if (i < n) {
        _Alignas(64) uint8_t tin[64] = {0}, tout[64];
        memcpy(tin, s + i, n - i);
        const __m512i idx = _mm512_load_si512(tin);
        const __m512i c = _mm512_maskz_mov_epi8((UINT64_C(1) << (n - i)) - 1,
                                                plane_lookup(&pl, 0, idx, _mm512_movepi8_mask(idx)));
        t8_pack_store(tout, c, db);
        memcpy(d + i * (size_t)db / 8, tout, ((n - i) * (size_t)db + 7) / 8);
    }
}
static FN void t8_4(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    t8_sub_run(k, dst, src, begin, end, 4);
}
static FN void t8_2(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    t8_sub_run(k, dst, src, begin, end, 2);
}
static FN void t8_1(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    t8_sub_run(k, dst, src, begin, end, 1);
}

LINES_NT(t8_16, t8_16_plain, 64, 1, 2, planes pl; load_planes(&pl, k->table, 2);, T16_NT)
LINES_NT(t8_32, t8_32_plain, 64, 1, 4, planes pl; load_planes(&pl, k->table, 4);, T32_NT)



/* ---- integers: one lane width W for a whole conversion (the wider of the two types); the
 * narrower side is extended on load (vpmovsx/zx) or truncated on store (vpmov), which is exactly
 * wrapping modulo 2^bits. Saturation clamps in W-bit lanes first, by the source's signedness. */
static FN DT_INLINE __m512i vset(int W, uint64_t c)
{
    switch (W) {
    case 8:
        return _mm512_set1_epi8((char)c);
    case 16:
        return _mm512_set1_epi16((short)c);
    case 32:
        return _mm512_set1_epi32((int)c);
    default:
        return _mm512_set1_epi64((long long)c);
    }
}
#define MINMAX(name, op)                                                                        \
    static FN DT_INLINE __m512i name(__m512i x, __m512i c, int W)                               \
    {                                                                                           \
        switch (W) {                                                                            \
        case 8:                                                                                 \
            return op##8(x, c);                                                                 \
        case 16:                                                                                \
            return op##16(x, c);                                                                \
        case 32:                                                                                \
            return op##32(x, c);                                                                \
        default:                                                                                \
            return op##64(x, c);                                                                \
        }                                                                                       \
    }
#define max_s8 _mm512_max_epi8
#define max_s16 _mm512_max_epi16
#define max_s32 _mm512_max_epi32
#define max_s64 _mm512_max_epi64
#define min_s8 _mm512_min_epi8
#define min_s16 _mm512_min_epi16
#define min_s32 _mm512_min_epi32
#define min_s64 _mm512_min_epi64
#define min_u8 _mm512_min_epu8
#define min_u16 _mm512_min_epu16
#define min_u32 _mm512_min_epu32
#define min_u64 _mm512_min_epu64
MINMAX(vmax_s, max_s)
MINMAX(vmin_s, min_s)
MINMAX(vmin_u, min_u)

/* 512 / W elements of sw bits (signed: ss) -> W-bit lanes; reads exactly 64 * sw / W bytes */
static FN DT_INLINE __m512i int_load(const uint8_t *p, int sw, int ss, int W)
{
#define LQ _mm_loadl_epi64((const __m128i *)p)
#define LX _mm_loadu_si128((const __m128i *)p)
#define LY _mm256_loadu_si256((const __m256i *)p)
    switch (W * 4 + sw / 8 + (ss ? 1000 : 0)) {
    case 64 + 1: return _mm512_cvtepu8_epi16(LY);
    case 1064 + 1: return _mm512_cvtepi8_epi16(LY);
    case 128 + 1: return _mm512_cvtepu8_epi32(LX);
    case 1128 + 1: return _mm512_cvtepi8_epi32(LX);
    case 128 + 2: return _mm512_cvtepu16_epi32(LY);
    case 1128 + 2: return _mm512_cvtepi16_epi32(LY);
    case 256 + 1: return _mm512_cvtepu8_epi64(LQ);
    case 1256 + 1: return _mm512_cvtepi8_epi64(LQ);
    case 256 + 2: return _mm512_cvtepu16_epi64(LX);
    case 1256 + 2: return _mm512_cvtepi16_epi64(LX);
    case 256 + 4: return _mm512_cvtepu32_epi64(LY);
    case 1256 + 4: return _mm512_cvtepi32_epi64(LY);
    default: return _mm512_loadu_si512(p); /* sw == W */
    }
#undef LQ
#undef LX
#undef LY
}

/* W-bit lanes -> 512 / W elements of dw bits: truncation (vpmov*) */
static FN DT_INLINE void int_store(uint8_t *p, __m512i x, int dw, int W)
{
    switch (W * 4 + dw / 8) {
    case 64 + 1: _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi16_epi8(x)); break;
    case 128 + 1: _mm_storeu_si128((__m128i *)p, _mm512_cvtepi32_epi8(x)); break;
    case 128 + 2: _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(x)); break;
    case 256 + 1: _mm_storel_epi64((__m128i *)p, _mm512_cvtepi64_epi8(x)); break;
    case 256 + 2: _mm_storeu_si128((__m128i *)p, _mm512_cvtepi64_epi16(x)); break;
    case 256 + 4: _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi64_epi32(x)); break;
    default: _mm512_storeu_si512(p, x); break;
    }
}

#define II_V __m512i
#include "int_clamp.h"

static FN DT_INLINE void int_loop(void *dst, const void *src, size_t begin, size_t end, int sw,
                                  int ss, int dw, int ds, int sat)
{
    const int W = sw > dw ? sw : dw, B = 512 / W; /* elements per vector */
    const uint8_t *s = (const uint8_t *)src + begin * (size_t)sw / 8;
    uint8_t *d = (uint8_t *)dst + begin * (size_t)dw / 8;
    const size_t n = end - begin;
    size_t i = 0;
    for (; i + (size_t)B <= n; i += (size_t)B) {
        dt_prefetch_span(s + i * (size_t)sw / 8, (size_t)B * (size_t)sw / 8);
        __m512i x = int_load(s + i * (size_t)sw / 8, sw, ss, W);
        v_opaque(&x);
        if (sat)
            x = int_clamp(x, W, sw, ss, dw, ds);
        int_store(d + i * (size_t)dw / 8, x, dw, W);
    }
    if (i < n) { /* the tail through zeroed blocks (read before written: in place works) */
        _Alignas(64) uint8_t tin[64] = {0}, tout[64];
        memcpy(tin, s + i * (size_t)sw / 8, (n - i) * (size_t)sw / 8);
        __m512i x = int_load(tin, sw, ss, W);
        if (sat)
            x = int_clamp(x, W, sw, ss, dw, ds);
        int_store(tout, x, dw, W);
        memcpy(d + i * (size_t)dw / 8, tout, (n - i) * (size_t)dw / 8);
    }
}

#define II_LOOP int_loop
#include "int_pairs.h"

/* ---- integer -> float32 / float64: vcvt[u]dq2ps / [u]qq2ps / [u]qq2pd with the mode as embedded
 * rounding (rne, floor, ceil, trunc); odd: convert toward zero, then set the lsb of lanes whose
 * conversion back (exact: a truncated value is in range) differs. Narrower sources are exact. */
#define RND(m) ((m) == M_FLOOR ? _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC                     \
                : (m) == M_CEIL ? _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC                    \
                : (m) == M_RNE ? _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC                 \
                               : _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
#define CVT_MODES(res, m, CALL)                                                                 \
    switch (m) {                                                                                \
    case M_RNE: res = CALL(_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); break;               \
    case M_FLOOR: res = CALL(_MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); break;                 \
    case M_CEIL: res = CALL(_MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); break;                  \
    default: res = CALL(_MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); break;                         \
    }

/* 16 elements of a <= 32-bit integer -> float32 (one zmm) */
static FN DT_INLINE __m512 i32_to_f32(__m512i x, int ss, int sw, int mode)
{
    __m512 t;
    if (sw < 32) /* exact */
        return _mm512_cvtepi32_ps(x);
#define C_S(r) _mm512_cvt_roundepi32_ps(x, r)
#define C_U(r) _mm512_cvt_roundepu32_ps(x, r)
    if (ss) {
        CVT_MODES(t, mode, C_S)
    } else {
        CVT_MODES(t, mode, C_U)
    }
    if (mode == M_ODD) {
        const __m512i back = ss ? _mm512_cvttps_epi32(t) : _mm512_cvttps_epu32(t);
        const __mmask16 lost = _mm512_cmpneq_epi32_mask(back, x);
        t = _mm512_castsi512_ps(_mm512_mask_or_epi32(_mm512_castps_si512(t), lost,
                                                     _mm512_castps_si512(t), _mm512_set1_epi32(1)));
    }
    return t;
#undef C_S
#undef C_U
}
/* 8 64-bit integers -> float32 (one ymm) */
static FN DT_INLINE __m256 i64_to_f32(__m512i x, int ss, int mode)
{
    __m256 t;
#define C_S(r) _mm512_cvt_roundepi64_ps(x, r)
#define C_U(r) _mm512_cvt_roundepu64_ps(x, r)
    if (ss) {
        CVT_MODES(t, mode, C_S)
    } else {
        CVT_MODES(t, mode, C_U)
    }
    if (mode == M_ODD) {
        const __m512i back = ss ? _mm512_cvttps_epi64(t) : _mm512_cvttps_epu64(t);
        const __mmask8 lost = _mm512_cmpneq_epi64_mask(back, x);
        t = _mm256_castsi256_ps(_mm256_mask_or_epi32(_mm256_castps_si256(t), lost,
                                                     _mm256_castps_si256(t), _mm256_set1_epi32(1)));
    }
    return t;
#undef C_S
#undef C_U
}
/* 8 integers in 64-bit lanes -> float64 (exact below 64 bits) */
static FN DT_INLINE __m512d i64_to_f64(__m512i x, int ss, int sw, int mode)
{
    __m512d t;
    if (sw < 64) /* exact: the value fits a signed 64-bit lane */
        return _mm512_cvtepi64_pd(x);
#define C_S(r) _mm512_cvt_roundepi64_pd(x, r)
#define C_U(r) _mm512_cvt_roundepu64_pd(x, r)
    if (ss) {
        CVT_MODES(t, mode, C_S)
    } else {
        CVT_MODES(t, mode, C_U)
    }
    if (mode == M_ODD) {
        const __m512i back = ss ? _mm512_cvttpd_epi64(t) : _mm512_cvttpd_epu64(t);
        const __mmask8 lost = _mm512_cmpneq_epi64_mask(back, x);
        t = _mm512_castsi512_pd(_mm512_mask_or_epi64(_mm512_castpd_si512(t), lost,
                                                     _mm512_castpd_si512(t), _mm512_set1_epi64(1)));
    }
    return t;
#undef C_S
#undef C_U
}

/* one block: f32 destination with <= 32-bit source: 16 elements, else 8 */
static FN DT_INLINE void if_block(uint8_t *d, const uint8_t *s, int sw, int ss, int dd, int mode)
{
    if (dd == 32 && sw <= 32) {
        __m512i x = int_load(s, sw, ss, 32);
        v_opaque(&x);
        _mm512_storeu_ps(d, i32_to_f32(x, ss, sw, mode));
    } else {
        __m512i x = int_load(s, sw, ss, 64);
        v_opaque(&x);
        if (dd == 32)
            _mm256_storeu_ps((float *)(void *)d, i64_to_f32(x, ss, mode));
        else
            _mm512_storeu_pd(d, i64_to_f64(x, ss, sw, mode));
    }
}

static FN DT_INLINE void if_loop(void *dst, const void *src, size_t begin, size_t end, int sw,
                                 int ss, int dd, int mode)
{
    const int B = dd == 32 && sw <= 32 ? 16 : 8;
    const uint8_t *s = (const uint8_t *)src + begin * (size_t)sw / 8;
    uint8_t *d = (uint8_t *)dst + begin * (size_t)dd / 8;
    const size_t n = end - begin;
    size_t i = 0;
    for (; i + (size_t)B <= n; i += (size_t)B) {
        dt_prefetch_span(s + i * (size_t)sw / 8, (size_t)B * (size_t)sw / 8);
        if_block(d + i * (size_t)dd / 8, s + i * (size_t)sw / 8, sw, ss, dd, mode);
    }
    if (i < n) {
        _Alignas(64) uint8_t tin[64] = {0}, tout[64];
        memcpy(tin, s + i * (size_t)sw / 8, (n - i) * (size_t)sw / 8);
        if_block(tout, tin, sw, ss, dd, mode);
        memcpy(d + i * (size_t)dd / 8, tout, (n - i) * (size_t)dd / 8);
    }
}

#define IF_FN(sw, ss, dd, mode)                                                                 \
    static FN void if_##sw##_##ss##_##dd##_##mode(const dt_kernel *k, void *dst,               \
                                                  const void *src, size_t b, size_t e)          \
    {                                                                                           \
        (void)k;                                                                                \
        if_loop(dst, src, b, e, sw, ss, dd, mode);                                              \
    }
/* The modes of a pair: the default ones (rne; trunc for float -> integer) each folded into a
 * function of their own, the other modes through one body that takes the mode at run time (an
 * always-predicted branch per vector; folding every mode was two thirds of this file's compile
 * time). */
#define IF_RT_FN(sw, ss, dd, mode)                                                              \
    static FN void if_##sw##_##ss##_##dd##_##mode(const dt_kernel *k, void *dst,               \
                                                  const void *src, size_t b, size_t e)          \
    {                                                                                           \
        if_rt_##sw##_##ss##_##dd(k, dst, src, b, e, mode);                                      \
    }
#define IF_MODES(sw, ss, dd)                                                                    \
    static FN DT_NOCLONE void if_rt_##sw##_##ss##_##dd(const dt_kernel *k, void *dst,           \
                                                       const void *src, size_t b, size_t e,     \
                                                       int mode)                                \
    {                                                                                           \
        (void)k;                                                                                \
        if_loop(dst, src, b, e, sw, ss, dd, mode);                                              \
    }                                                                                           \
    IF_FN(sw, ss, dd, M_RNE) IF_RT_FN(sw, ss, dd, M_FLOOR) IF_RT_FN(sw, ss, dd, M_CEIL)         \
    IF_RT_FN(sw, ss, dd, M_TRUNC) IF_RT_FN(sw, ss, dd, M_ODD)
#define IF_ROW(sw, ss, dd)                                                                      \
    {if_##sw##_##ss##_##dd##_M_RNE, NULL, if_##sw##_##ss##_##dd##_M_FLOOR,                      \
     if_##sw##_##ss##_##dd##_M_CEIL, if_##sw##_##ss##_##dd##_M_TRUNC, if_##sw##_##ss##_##dd##_M_ODD}
/* exact conversions: one function serves every mode */
IF_FN(8, 1, 32, M_RNE) IF_FN(8, 0, 32, M_RNE) IF_FN(16, 1, 32, M_RNE) IF_FN(16, 0, 32, M_RNE)
IF_FN(8, 1, 64, M_RNE) IF_FN(8, 0, 64, M_RNE) IF_FN(16, 1, 64, M_RNE) IF_FN(16, 0, 64, M_RNE)
IF_FN(32, 1, 64, M_RNE) IF_FN(32, 0, 64, M_RNE)
IF_MODES(32, 1, 32) IF_MODES(32, 0, 32) IF_MODES(64, 1, 32) IF_MODES(64, 0, 32)
IF_MODES(64, 1, 64) IF_MODES(64, 0, 64)
#define IF_EXACT(sw, ss, dd) {if_##sw##_##ss##_##dd##_M_RNE}
/* [source by int_index][float32, float64]: exact ones in slot 0 only */
static const dt_kernel_fn if_fns[8][2][6] = {
    {IF_EXACT(8, 1, 32), IF_EXACT(8, 1, 64)},     {IF_EXACT(8, 0, 32), IF_EXACT(8, 0, 64)},
    {IF_EXACT(16, 1, 32), IF_EXACT(16, 1, 64)},   {IF_EXACT(16, 0, 32), IF_EXACT(16, 0, 64)},
    {IF_ROW(32, 1, 32), IF_EXACT(32, 1, 64)},     {IF_ROW(32, 0, 32), IF_EXACT(32, 0, 64)},
    {IF_ROW(64, 1, 32), IF_ROW(64, 1, 64)},       {IF_ROW(64, 0, 32), IF_ROW(64, 0, 64)}};

/* ---- float64 -> integer, float32 -> 64-bit integer, in 64-bit lanes: round to an integral
 * float per mode (vrndscale), then: saturate converts lanes in [-2^63, 2^64) exactly (signed or
 * unsigned conversion by sign) and clamps by comparing the integral float with the
 * destination's bounds (exact powers of two; NaN -> 0); wrap converts |x| < 2^63 (signed) and
 * keeps the low bits (vpmov truncation), and the rare lanes outside (NaN, Inf, huge) are
 * wrapped from their bits (wrap_huge). */
#define RSC(m, x, f) ((m) == M_FLOOR ? f(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)          \
                     : (m) == M_CEIL ? f(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)         \
                     : (m) == M_RNE ? f(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)      \
                                    : f(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC))

/* Wrap of integral lanes with |f| >= 2^63: f = m * 2^(e - 1075) with the 53-bit significand m
 * and e - 1075 >= 11, so f mod 2^64 is m shifted left (vpsllvq gives 0 for counts >= 64, where
 * f is a multiple of 2^64), negated for negative f; NaN and Inf (e = 0x7FF) wrap to 0. */
static FN inline __m512i wrap_huge(__m512d f)
{
    const __m512i b = _mm512_castpd_si512(f);
    const __m512i e = _mm512_and_si512(_mm512_srli_epi64(b, 52), _mm512_set1_epi64(0x7FF));
    const __m512i m = _mm512_or_si512(_mm512_and_si512(b, _mm512_set1_epi64(0xFFFFFFFFFFFFF)),
                                      _mm512_set1_epi64(0x10000000000000));
    __m512i v = _mm512_sllv_epi64(m, _mm512_sub_epi64(e, _mm512_set1_epi64(1075)));
    v = _mm512_mask_sub_epi64(v, _mm512_movepi64_mask(b), _mm512_setzero_si512(), v);
    return _mm512_mask_mov_epi64(v, _mm512_cmpeq_epi64_mask(e, _mm512_set1_epi64(0x7FF)),
                                 _mm512_setzero_si512());
}

static FN DT_INLINE void fi_block(uint8_t *d, const uint8_t *s, int sd, int dw, int ds, int mode,
                                  int sat)
{
    const double dlo = ds ? -ldexp(1, dw - 1) : 0, dhi = ds ? ldexp(1, dw - 1) : ldexp(1, dw);
    const uint64_t vhi = ds ? (UINT64_MAX >> (65 - dw)) : (UINT64_MAX >> (64 - dw));
    const uint64_t vlo = ds ? ~vhi : 0;
    __m512d f; /* 8 lanes of 64 bits */
    if (sd == 32) {
        __m256 x = _mm256_loadu_ps((const float *)(const void *)s);
        const __m256 f32 = RSC(mode, x, _mm256_roundscale_ps);
        f = _mm512_cvtps_pd(f32); /* exact */
    } else {
        __m512d x = _mm512_loadu_pd(s);
        v_opaque((__m512i *)(void *)&x);
        f = RSC(mode, x, _mm512_roundscale_pd);
    }
    if (sat) {
        const __mmask8 neg = _mm512_cmp_pd_mask(f, _mm512_setzero_pd(), _CMP_LT_OQ);
        __m512i v = _mm512_mask_blend_epi64(neg, _mm512_cvttpd_epu64(f), _mm512_cvttpd_epi64(f));
        const __mmask8 hi = _mm512_cmp_pd_mask(f, _mm512_set1_pd(dhi), _CMP_GE_OQ);
        const __mmask8 lo = _mm512_cmp_pd_mask(f, _mm512_set1_pd(dlo), _CMP_LT_OQ);
        const __mmask8 nan = _mm512_cmp_pd_mask(f, f, _CMP_UNORD_Q);
        v = _mm512_mask_mov_epi64(v, hi, _mm512_set1_epi64((long long)vhi));
        v = _mm512_mask_mov_epi64(v, lo, _mm512_set1_epi64((long long)vlo));
        v = _mm512_maskz_mov_epi64((__mmask8)~nan, v);
        int_store(d, v, dw, 64);
    } else { /* wrap: |f| < 2^63 converts exactly with the signed conversion, whose low bits
              * are the result for every width; the rare others (NaN, Inf, huge) by wrap_huge */
        __m512i v = _mm512_cvttpd_epi64(f);
        const __mmask8 ok = _mm512_cmp_pd_mask(_mm512_abs_pd(f), _mm512_set1_pd(0x1p63), _CMP_LT_OQ);
        if (ok != 0xFF)
            v = _mm512_mask_blend_epi64(ok, wrap_huge(f), v);
        int_store(d, v, dw, 64);
    }
}

static FN DT_INLINE void fi_loop(void *dst, const void *src, size_t begin, size_t end, int sd,
                                 int dw, int ds, int mode, int sat)
{
    const int B = 8;
    const uint8_t *s = (const uint8_t *)src + begin * (size_t)sd / 8;
    uint8_t *d = (uint8_t *)dst + begin * (size_t)dw / 8;
    const size_t n = end - begin;
    size_t i = 0;
    for (; i + (size_t)B <= n; i += (size_t)B) {
        dt_prefetch_span(s + i * (size_t)sd / 8, (size_t)B * (size_t)sd / 8);
        fi_block(d + i * (size_t)dw / 8, s + i * (size_t)sd / 8, sd, dw, ds, mode, sat);
    }
    if (i < n) {
        _Alignas(64) uint8_t tin[64] = {0}, tout[64];
        memcpy(tin, s + i * (size_t)sd / 8, (n - i) * (size_t)sd / 8);
        fi_block(tout, tin, sd, dw, ds, mode, sat);
        memcpy(d + i * (size_t)dw / 8, tout, (n - i) * (size_t)dw / 8);
    }
}

#define FI_FN(sd, dw, ds, mode)                                                                 \
    static FN void fi_##sd##_##dw##_##ds##_##mode(const dt_kernel *k, void *dst,               \
                                                  const void *src, size_t b, size_t e)          \
    {                                                                                           \
        if (k->r.saturate_int)                                                                  \
            fi_loop(dst, src, b, e, sd, dw, ds, mode, 1);                                    \
        else                                                                                    \
            fi_loop(dst, src, b, e, sd, dw, ds, mode, 0);                                    \
    }
#define FI_RT_FN(sd, dw, ds, mode)                                                              \
    static FN void fi_##sd##_##dw##_##ds##_##mode(const dt_kernel *k, void *dst,               \
                                                  const void *src, size_t b, size_t e)          \
    {                                                                                           \
        fi_rt_##sd##_##dw##_##ds(k, dst, src, b, e, mode);                                      \
    }
/* rne and trunc folded, floor and ceil through one body (as IF_MODES) */
#define FI_MODES(sd, dw, ds)                                                                    \
    static FN DT_NOCLONE void fi_rt_##sd##_##dw##_##ds(const dt_kernel *k, void *dst,           \
                                                       const void *src, size_t b, size_t e,     \
                                                       int mode)                                \
    {                                                                                           \
        if (k->r.saturate_int)                                                                  \
            fi_loop(dst, src, b, e, sd, dw, ds, mode, 1);                                       \
        else                                                                                    \
            fi_loop(dst, src, b, e, sd, dw, ds, mode, 0);                                       \
    }                                                                                           \
    FI_FN(sd, dw, ds, M_RNE) FI_RT_FN(sd, dw, ds, M_FLOOR) FI_RT_FN(sd, dw, ds, M_CEIL)         \
    FI_FN(sd, dw, ds, M_TRUNC)
#define FI_DSTS(sd)                                                                             \
    FI_MODES(sd, 8, 1) FI_MODES(sd, 8, 0) FI_MODES(sd, 16, 1) FI_MODES(sd, 16, 0)               \
    FI_MODES(sd, 32, 1) FI_MODES(sd, 32, 0) FI_MODES(sd, 64, 1) FI_MODES(sd, 64, 0)
FI_MODES(32, 64, 1) FI_MODES(32, 64, 0)
FI_DSTS(64)
#define FI_ROW(sd, dw, ds)                                                                      \
    {fi_##sd##_##dw##_##ds##_M_RNE, NULL, fi_##sd##_##dw##_##ds##_M_FLOOR,                      \
     fi_##sd##_##dw##_##ds##_M_CEIL, fi_##sd##_##dw##_##ds##_M_TRUNC, NULL}
#define FI_ROWS(sd)                                                                             \
    {FI_ROW(sd, 8, 1), FI_ROW(sd, 8, 0), FI_ROW(sd, 16, 1), FI_ROW(sd, 16, 0),                  \
     FI_ROW(sd, 32, 1), FI_ROW(sd, 32, 0), FI_ROW(sd, 64, 1), FI_ROW(sd, 64, 0)}
/* [float32, float64][destination by int_index][mode]; round (ties away) and odd: portable;
 * float32 -> <= 32 bits: the narrowing template (as fast, and it wraps huge values without the
 * scalar patch: the 2^32-pattern sweep is half such values) */
static const dt_kernel_fn fi_fns[2][8][6] = {
    {{NULL}, {NULL}, {NULL}, {NULL}, {NULL}, {NULL}, FI_ROW(32, 64, 1), FI_ROW(32, 64, 0)},
    FI_ROWS(64)};

/* ---- float32 -> integers of 4, 8, 16 or 32 bits: vcvtps2dq rounds per mode (its embedded
 * rounding; ties away and odd from the truncation) and is exact for |x| < 2^31. Wrap keeps its
 * low bits, and the rare other lanes (NaN, Inf, huge) wrap from their bits. Saturate (up to 16
 * bits) clamps it, and the other lanes go to the bound of their sign (NaN: 0). */
static FN inline __m512i wrap_huge32(__m512 x) /* as wrap_huge, for float32: 2^(e - 150) */
{
    const __m512i b = _mm512_castps_si512(x);
    const __m512i e = _mm512_and_si512(_mm512_srli_epi32(b, 23), _mm512_set1_epi32(0xFF));
    const __m512i m = _mm512_or_si512(_mm512_and_si512(b, _mm512_set1_epi32(0x7FFFFF)),
                                      _mm512_set1_epi32(0x800000));
    __m512i v = _mm512_sllv_epi32(m, _mm512_sub_epi32(e, _mm512_set1_epi32(150)));
    v = _mm512_mask_sub_epi32(v, _mm512_movepi32_mask(b), _mm512_setzero_si512(), v);
    return _mm512_mask_mov_epi32(v, _mm512_cmpeq_epi32_mask(e, _mm512_set1_epi32(0xFF)),
                                 _mm512_setzero_si512());
}

/* the source kinds of fi32's loops: float32, and float16 / bfloat16 widened exactly on load
 * (every value they hold is a float32 of |x| < 2^31, or Inf / NaN, which take wrap_huge32's and
 * the saturating bound's paths as a float32 would) */
enum { FI_F32, FI_F16, FI_BF16 };
static FN DT_INLINE __m512 fi_load(const uint8_t *p, int sk)
{
    if (sk == FI_F16)
        return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)p));
    if (sk == FI_BF16)
        return _mm512_castsi512_ps(_mm512_slli_epi32(
            _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)p)), 16));
    return _mm512_loadu_ps((const float *)(const void *)p);
}

static FN DT_INLINE __m512i f32_int(const uint8_t *p, int mode, int sat, __m512i lo, __m512i hi,
                                    int sk)
{
    const __m512 x = fi_load(p, sk);
    const __m512i t = _mm512_cvtt_roundps_epi32(x, _MM_FROUND_NO_EXC);
    const __m512i away = _mm512_or_si512(_mm512_srai_epi32(_mm512_castps_si512(x), 31),
                                         _mm512_set1_epi32(1)); /* +1 or -1 by the sign */
    __m512i v;
    switch (mode) {
    case M_RNE:
        v = _mm512_cvt_roundps_epi32(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        break;
    case M_FLOOR:
        v = _mm512_cvt_roundps_epi32(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        break;
    case M_CEIL:
        v = _mm512_cvt_roundps_epi32(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
        break;
    case M_RNA: { /* one away from zero where the dropped fraction (exact: x - trunc x) >= 1/2 */
        const __m512 f = _mm512_sub_ps(x, _mm512_roundscale_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
        v = _mm512_mask_add_epi32(
            t, _mm512_cmp_ps_mask(_mm512_abs_ps(f), _mm512_set1_ps(0.5f), _CMP_GE_OQ), t, away);
        break;
    }
    case M_ODD: /* an inexact lane (the truncation converts back to another value: exactly, as
                 * |t| < 2^24 or t = x) with an even magnitude moves one away from zero */
        v = _mm512_mask_add_epi32(
            t,
            _mm512_cmp_ps_mask(_mm512_cvtepi32_ps(t), x, _CMP_NEQ_UQ) &
                _mm512_testn_epi32_mask(t, _mm512_set1_epi32(1)),
            t, away);
        break;
    default:
        v = t;
        break;
    }
    if (sat)
        v = _mm512_min_epi32(_mm512_max_epi32(v, lo), hi);
    const __mmask16 ok = _mm512_cmp_ps_mask(_mm512_abs_ps(x), _mm512_set1_ps(0x1p31f), _CMP_LT_OQ);
    if (ok != 0xFFFF) {
        __m512i o = wrap_huge32(x);
        if (sat) { /* beyond every bound: the sign's; NaN: 0 */
            const __mmask16 neg = _mm512_movepi32_mask(_mm512_castps_si512(x));
            const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
            o = _mm512_maskz_mov_epi32((__mmask16)~nan, _mm512_mask_blend_epi32(neg, hi, lo));
        }
        v = _mm512_mask_blend_epi32(ok, o, v);
    }
    return v;
}

/* 32 elements: two vectors, whole bytes of 4-bit outputs */
static FN DT_INLINE void fi32_block(uint8_t *o, const uint8_t *s, int dw, int mode, int sat,
                                    __m512i lo, __m512i hi, int sk)
{
    const size_t half = sk == FI_F32 ? 64 : 32; /* the source bytes of 16 elements */
    const __m512i x0 = f32_int(s, mode, sat, lo, hi, sk),
                  x1 = f32_int(s + half, mode, sat, lo, hi, sk);
    if (dw == 4) {
        const __m512i m = _mm512_set1_epi32(0xF);
        v_store4x2(o, _mm512_and_si512(x0, m), _mm512_and_si512(x1, m));
    } else {
        int_store(o, x0, dw, 32);
        int_store(o + 2 * (size_t)dw, x1, dw, 32);
    }
}

static FN DT_INLINE void fi32_loop_from(const dt_kernel *k, void *dst, const void *src,
                                        size_t begin, size_t end, int dw, int mode, int sat,
                                        int sk)
{
    const size_t sb = sk == FI_F32 ? 4 : 2;
    const int bits = sat ? k->df->bits : 16; /* the bounds matter under saturate: <= 16 bits */
    const bool sg = k->df->tc == DT_TC_SINT;
    const __m512i lo = _mm512_set1_epi32(sg ? -(1 << (bits - 1)) : 0);
    const __m512i hi = _mm512_set1_epi32(sg ? (1 << (bits - 1)) - 1 : (1 << bits) - 1);
    const uint8_t *s = (const uint8_t *)src + sb * begin;
    uint8_t *d = (uint8_t *)dst + begin * (size_t)dw / 8; /* begin: a multiple of 8 */
    const size_t n = end - begin;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        dt_prefetch_span(s + sb * i, 32 * sb);
        fi32_block(d + i * (size_t)dw / 8, s + sb * i, dw, mode, sat, lo, hi, sk);
    }
    if (i < n) { /* the tail through a zeroed block (reads before writes: in place works) */
        _Alignas(64) uint8_t tin[128] = {0}, tout[128];
        memcpy(tin, s + sb * i, sb * (n - i));
        fi32_block(tout, tin, dw, mode, sat, lo, hi, sk);
        memcpy(d + i * (size_t)dw / 8, tout, ((n - i) * (size_t)dw + 7) / 8);
    }
}
static FN DT_INLINE void fi32_loop(const dt_kernel *k, void *dst, const void *src, size_t begin,
                                   size_t end, int dw, int mode, int sat)
{
    fi32_loop_from(k, dst, src, begin, end, dw, mode, sat, FI_F32);
}

/* float16 / bfloat16 -> 16-bit integers (the 16-bit-lane template has no 16-bit outputs, and
 * the 32-bit-lane one runs 30-40 operations a vector where this runs about 8): the mode and
 * the policy at run time */
#define FI16_FN(name, SK)                                                                       \
    static FN DT_NOCLONE void name(const dt_kernel *k, void *dst, const void *src, size_t b,    \
                                   size_t e)                                                    \
    {                                                                                           \
        const int mode = dt_mode_of(k->r.round);                                                \
        if (k->r.saturate_int)                                                                  \
            fi32_loop_from(k, dst, src, b, e, 16, mode, 1, SK);                                 \
        else                                                                                    \
            fi32_loop_from(k, dst, src, b, e, 16, mode, 0, SK);                                 \
    }
FI16_FN(f16_int16, FI_F16)
FI16_FN(bf16_int16, FI_BF16)

#define FI32_FN(dw, mode)                                                                       \
    static FN void fi32_##dw##_##mode(const dt_kernel *k, void *dst, const void *src, size_t b, \
                                      size_t e)                                                 \
    {                                                                                           \
        if (k->r.saturate_int)                                                                  \
            fi32_loop(k, dst, src, b, e, dw, mode, 1);                                          \
        else                                                                                    \
            fi32_loop(k, dst, src, b, e, dw, mode, 0);                                          \
    }
#define FI32_RT_FN(dw, mode)                                                                    \
    static FN void fi32_##dw##_##mode(const dt_kernel *k, void *dst, const void *src, size_t b, \
                                      size_t e)                                                 \
    {                                                                                           \
        fi32_rt_##dw(k, dst, src, b, e, mode);                                                  \
    }
/* rne and trunc folded, the others through one body (as IF_MODES) */
#define FI32_MODES(dw)                                                                          \
    static FN DT_NOCLONE void fi32_rt_##dw(const dt_kernel *k, void *dst, const void *src,      \
                                           size_t b, size_t e, int mode)                        \
    {                                                                                           \
        if (k->r.saturate_int)                                                                  \
            fi32_loop(k, dst, src, b, e, dw, mode, 1);                                          \
        else                                                                                    \
            fi32_loop(k, dst, src, b, e, dw, mode, 0);                                          \
    }                                                                                           \
    FI32_FN(dw, M_RNE) FI32_RT_FN(dw, M_RNA) FI32_RT_FN(dw, M_FLOOR) FI32_RT_FN(dw, M_CEIL)     \
    FI32_FN(dw, M_TRUNC) FI32_RT_FN(dw, M_ODD)
FI32_MODES(4) FI32_MODES(8) FI32_MODES(16) FI32_MODES(32)
#define FI32_ROW(dw)                                                                            \
    {fi32_##dw##_M_RNE, fi32_##dw##_M_RNA, fi32_##dw##_M_FLOOR, fi32_##dw##_M_CEIL,             \
     fi32_##dw##_M_TRUNC, fi32_##dw##_M_ODD}
/* [4, 8, 16, 32 bits][mode] */
static const dt_kernel_fn fi32_fns[4][6] = {FI32_ROW(4), FI32_ROW(8), FI32_ROW(16), FI32_ROW(32)};

/* float32 -> a 4/8/16-bit integer, or a wrapping 32-bit one, or NULL */
static dt_kernel_fn fi32_pick(const dt_format *df, const dt_format *sf, const dt_rules *r)
{
    const int m = dt_mode_of(r->round);
    if (sf->type != DTCAST_FLOAT32 || m < 0 || (df->tc != DT_TC_SINT && df->tc != DT_TC_UINT) ||
        df->bits != df->stride_bits || (r->saturate_int && df->bits > 16))
        return NULL;
    switch (df->bits) {
    case 4: return fi32_fns[0][m];
    case 8: return fi32_fns[1][m];
    case 16: return fi32_fns[2][m];
    case 32: return fi32_fns[3][m];
    default: return NULL;
    }
}

/* integer <-> integer and integer <-> float32/float64, or NULL */
static dt_kernel_fn int_pick(const dt_format *df, const dt_format *sf, const dt_rules *r)
{
    const int is = int_index(sf), id = int_index(df);
    const int m = dt_mode_of(r->round);
    if (m < 0)
        return NULL;
    if (is >= 0 && id >= 0) /* the mode does not matter */
        return ii_fns[is][id];
    if (is >= 0 && (df->type == DTCAST_FLOAT32 || df->type == DTCAST_FLOAT64)) {
        const dt_kernel_fn *row = if_fns[is][df->type == DTCAST_FLOAT64];
        return row[1] == NULL && row[2] == NULL ? row[0] : row[m];
    }
    if (id >= 0 && (sf->type == DTCAST_FLOAT32 || sf->type == DTCAST_FLOAT64))
        return fi_fns[sf->type == DTCAST_FLOAT64][id][m];
    return NULL;
}

/* ---- packed 1/2/4-bit source -> 16- or 32-bit destination: each output lane of W bits takes
 * its code straight from the packed bytes. vpermb copies to every 64-bit lane the source bytes
 * its 64/W elements live in; vpmultishiftqb moves each element's bits to the low byte of its
 * lane; vpermw/vpermd looks the lane up in the table, reading only the low 5/4 bits, so the bits
 * above the code are ignored by repeating the 2^sb entries over all 32/16 slots. The three
 * vectors are built once per conversion into k->local. */
enum { SUB_TABLE = 0, SUB_SPREAD = 64, SUB_SHIFT = 128 };

static void subbyte_setup(dt_kernel *k, const uint8_t *t, unsigned sb, unsigned w)
{
    uint8_t v[192];
    const unsigned lanes_per_q = 8 / w, slots = 64 / w; /* lanes per qword; table slots */
    for (unsigned i = 0; i < slots; i++) /* entry i: the code i mod 2^sb */
        memcpy(v + SUB_TABLE + w * i, t + w * (i & ((1u << sb) - 1)), w);
    for (unsigned q = 0; q < 8; q++) {
        const unsigned first = q * lanes_per_q * sb; /* the first bit of the qword's elements */
        for (unsigned b = 0; b < 8; b++) {
            v[SUB_SPREAD + 8 * q + b] = (uint8_t)(first / 8 + b);
            const unsigned lane = b / w;                /* byte 0 of each lane gets the code */
            v[SUB_SHIFT + 8 * q + b] = b % w ? 0 : (uint8_t)(first % 8 + lane * sb);
        }
    }
    memcpy(k->local, v, sizeof v); /* t may be k->local itself: read before written */
    k->table = k->local;
}

/* W-bit lanes: one vector of 512/W elements from 512/W * sb / 8 source bytes */
#define SUB_BODY(W, in, nbytes, lanemask, store)                                                \
    do {                                                                                        \
        const __m512i x = _mm512_zextsi128_si512(_mm_maskz_loadu_epi8(nbytes, (in)));           \
        const __m512i c = _mm512_multishift_epi64_epi8(shift, _mm512_permutexvar_epi8(spread, x)); \
        store(lanemask, W == 16 ? _mm512_permutexvar_epi16(c, table)                            \
                                : _mm512_permutexvar_epi32(c, table));                          \
    } while (0)

#define SUBBYTE(name, W)                                                                        \
    static FN void name(const dt_kernel *k, void *dst, const void *src, size_t begin,          \
                        size_t end)                                                             \
    {                                                                                           \
        const unsigned sb = (unsigned)k->sf->stride_bits;                                       \
        const uint8_t *t = k->table;                                                            \
        const __m512i table = _mm512_loadu_si512(t + SUB_TABLE);                                \
        const __m512i spread = _mm512_loadu_si512(t + SUB_SPREAD);                              \
        const __m512i shift = _mm512_loadu_si512(t + SUB_SHIFT);                                \
        enum { L = 512 / W };                        /* elements per vector */                  \
        const size_t in_bytes = L * sb / 8;          /* their source bytes: 2..16 */            \
        const __mmask16 all = (__mmask16)((1u << in_bytes) - 1);                               \
        const uint8_t *s = (const uint8_t *)src + begin * sb / 8; /* begin: a multiple of 8 */  \
        uint8_t *d = (uint8_t *)dst + begin * (W / 8);                                          \
        size_t n = end - begin, i = 0;                                                          \
        for (; i + 2 * L <= n; i += 2 * L, s += 2 * in_bytes, d += 2 * 64) {                    \
            _mm_prefetch((const char *)(uintptr_t)(s + dt_prefetch_ahead), _MM_HINT_T0);        \
            SUB_BODY(W, s, all, ~0u, STORE_FULL_##W##_0);                                      \
            SUB_BODY(W, s + in_bytes, all, ~0u, STORE_FULL_##W##_1);                           \
        }                                                                                       \
        for (; i < n; i += L, s += in_bytes, d += 64) { /* at most two vectors, maybe partial */ \
            const size_t m = n - i < L ? n - i : L;                                             \
            const __mmask16 bytes = (__mmask16)((1u << ((m * sb + 7) / 8)) - 1);               \
            SUB_BODY(W, s, bytes, m == L ? ~0u : (1u << m) - 1, STORE_PART_##W);                \
        }                                                                                       \
    }
#define STORE_FULL_16_0(m, v) ((void)(m), _mm512_storeu_si512(d, (v)))
#define STORE_FULL_16_1(m, v) ((void)(m), _mm512_storeu_si512(d + 64, (v)))
#define STORE_FULL_32_0 STORE_FULL_16_0
#define STORE_FULL_32_1 STORE_FULL_16_1
#define STORE_PART_16(m, v) _mm512_mask_storeu_epi16(d, (__mmask32)(m), (v))
#define STORE_PART_32(m, v) _mm512_mask_storeu_epi32(d, (__mmask16)(m), (v))
SUBBYTE(sub_16, 16)
SUBBYTE(sub_32, 32)

/* ---- the entries (registry.c), in the finder's order ----------------------------------------- */
static bool table_setup(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r)
{
    const void *t = dt_table_get(df, sf, r);
    if (!t)
        t = dt_table_build_into(k->local, df, sf, r);
    if (sf->stride_bits < 8)
        subbyte_setup(k, t, (unsigned)sf->stride_bits, (unsigned)df->stride_bits / 8);
    else
        planes_from_table(k, t, df->stride_bits / 8);
    return true;
}

/* packed 1/2/4-bit sources -> 16/32-bit targets */
static bool e_subbyte(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                      size_t count)
{
    if (!(sf->stride_bits < 8 && (df->stride_bits == 16 || df->stride_bits == 32) && count >= 64))
        return false;
    k->fn = df->stride_bits == 16 ? sub_16 : sub_32;
    return table_setup(k, df, sf, r);
}

/* float32 -> integers; integer <-> integer and integer <-> float32/float64 (8-bit sources into
 * 16/32-bit targets: the table, below) */
static bool e_int(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                  size_t count)
{
    (void)count;
    if (sf->stride_bits == 8 && (df->stride_bits == 16 || df->stride_bits == 32))
        return false;
    k->fn = fi32_pick(df, sf, r);
    if (!k->fn && (sf->type == DTCAST_FLOAT16 || sf->type == DTCAST_BFLOAT16) &&
        (df->tc == DT_TC_SINT || df->tc == DT_TC_UINT) && df->bits == 16 &&
        df->stride_bits == 16 && dt_mode_of(r->round) >= 0)
        k->fn = sf->type == DTCAST_FLOAT16 ? f16_int16 : bf16_int16;
    if (!k->fn)
        k->fn = int_pick(df, sf, r);
    return k->fn != NULL;
}

/* 8-bit sources -> 8/16/32-bit targets through byte planes of the table */
static bool e_table8(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                     size_t count)
{
    const int db = df->stride_bits;
    if (!(sf->stride_bits == 8 && (db == 1 || db == 2 || db == 4 || db == 8 || db == 16 || db == 32) &&
          count >= 64))
        return false;
    if (db < 8) { /* packed targets: the codes are bytes, packed in registers */
        k->fn = db == 4 ? t8_4 : db == 2 ? t8_2 : t8_1;
        const void *t = dt_table_get(df, sf, r);
        if (!t)
            t = dt_table_build_into(k->local, df, sf, r);
        planes_from_table(k, t, 1);
        return true;
    }
    k->fn = db == 8 ? t8_8 : db == 16 ? t8_16 : t8_32;
    k->nt_capable = true; /* LINES_NT */
    return table_setup(k, df, sf, r);
}

/* the pairs e_f32_half takes in mode m: float32 -> float16 and bfloat16 -> float16 (vcvtps2ph:
 * rne and the directed modes), float32 -> bfloat16 */
static bool f32_half_takes(const dt_format *df, const dt_format *sf, int m)
{
    if (df->type == DTCAST_FLOAT16)
        return (sf->type == DTCAST_FLOAT32 || sf->type == DTCAST_BFLOAT16) && m >= 0 &&
               m != M_RNA && m != M_ODD;
    return sf->type == DTCAST_FLOAT32 && df->type == DTCAST_BFLOAT16 && m >= 0 &&
           f32_bf16_pick_avx512(m) != NULL;
}

/* float32 -> float16 (vcvtps2ph) and bfloat16; bfloat16 -> float16 (vcvtps2ph) */
static bool e_f32_half(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                       size_t count)
{
    (void)count;
    const int m = dt_mode_of(r->round);
    if (!f32_half_takes(df, sf, m))
        return false;
    if (sf->type == DTCAST_BFLOAT16) {
        k->fn = m == M_RNE     ? bf16_f16_rne
                : m == M_FLOOR ? bf16_f16_floor
                : m == M_CEIL  ? bf16_f16_ceil
                                          : bf16_f16_trunc;
        k->nt_capable = true; /* LINES_NT */
        return true;
    }
    if (sf->type != DTCAST_FLOAT32)
        return false;
    if (df->type == DTCAST_FLOAT16 && m != M_RNA && m != M_ODD)
        k->fn = m == M_RNE     ? f32_f16_rne
                : m == M_FLOOR ? f32_f16_floor
                : m == M_CEIL  ? f32_f16_ceil
                                          : f32_f16_trunc;
    else if (df->type == DTCAST_BFLOAT16)
        k->fn = f32_bf16_pick_avx512(m);
    k->nt_capable = df->type == DTCAST_FLOAT16; /* LINES_NT */
    return k->fn != NULL;
}

/* the narrowing template on 32 lanes of 16 bits (kernels_avx512w.c) */
static bool e_narrow16(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                       size_t count)
{
    (void)count;
    if (sf->type == DTCAST_FLOAT32 && (df->tc == DT_TC_SINT || df->tc == DT_TC_UINT))
        return false; /* float32 -> 4/8/16-bit integers: the integer entry, before this one */
    if (dt_chain_preferred(df, sf, r, DT_ISA_AVX512))
        return false; /* dispatch.c takes the chain through float32 (rounded to odd) there */
    const dt_format *lane = NULL;
    k->fn = dt_narrow16_pick_avx512(df, sf, r, &lane);
    k->compute_bound = true; /* the template: 30-40 operations per vector */
    k->nt_capable = df->stride_bits == 8; /* kernels_tmpl.h's narrow_loop */
    return k->fn && dt_narrow_setup_unsigned(&k->n, df, lane, r);
}

/* the narrowing template on 16 lanes of 32 bits */
static bool e_narrow(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                     size_t count)
{
    (void)count;
    /* float32 -> floats in rne and the directed modes: vcvtps2ph and the 16-bit lanes, before;
     * bfloat16 -> float16 there too (e_f32_half); float64: the chain, or where the CPU has them
     * the AVX512-BF16 / AVX512-FP16 kernels (dt_chain_preferred) */
    if (sf->type == DTCAST_FLOAT32 && df->tc == DT_TC_FLOAT && dt_mode_of(r->round) != M_RNA &&
        dt_mode_of(r->round) != M_ODD)
        return false;
    if (f32_half_takes(df, sf, dt_mode_of(r->round)) || sf->type == DTCAST_FLOAT64)
        return false;
    /* where the 16-bit lanes take the pair (e_narrow16, before), they hold twice the elements */
    const dt_format *lane = NULL;
    if ((sf->type == DTCAST_FLOAT16 || sf->type == DTCAST_BFLOAT16) &&
        dt_narrow16_pick_avx512(df, sf, r, &lane) != NULL)
        return false;
    if (dt_chain_preferred(df, sf, r, DT_ISA_AVX512))
        return false; /* dispatch.c takes the chain through float32 (rounded to odd) there */
    k->fn = narrow_pick_avx512(df, sf, r);
    k->compute_bound = true;
    k->nt_capable = df->stride_bits == 8; /* kernels_tmpl.h's narrow_loop */
    return k->fn && dt_narrow_setup_unsigned(&k->n, df, dt_format_of(DTCAST_FLOAT32), r);
}

/* ---- complex64 -> float32, complex128 -> float64: the real part kept in its type ------------
 * One pass instead of compose.c's chain (the real parts gathered into L1, then its "same" step):
 * two source vectors hold 16 / 8 elements; vpermt2d / vpermt2q take their even parts (the real
 * ones) into one line, which goes through the rules as the chain's step does: NaN -> the
 * canonical quiet NaN with its sign, Inf -> the largest finite number when saturating.
 *
 *   x0 = [ r0 i0 r1 i1 ... ]   x1 = [ r8 i8 r9 i9 ... ]   (complex128: 64-bit parts)
 *   re = vpermt2q(x0, [0 2 4 6 8 10 12 14], x1) = [ r0 r1 ... r7 ]                          */
#define CPART_LINE(W, EPI, in, out, STORE)                                                     \
    do {                                                                                        \
        const __m512i x0_ = _mm512_loadu_si512(in), x1_ = _mm512_loadu_si512((in) + 64);        \
        const __m512i re_ = _mm512_permutex2var_##EPI(x0_, even, x1_);                          \
        const __m512i a_ = _mm512_andnot_si512(sgn, re_);                                       \
        __m512i m_ = _mm512_mask_mov_##EPI(a_, _mm512_cmpeq_##EPI##_mask(a_, inf), top);        \
        m_ = _mm512_mask_mov_##EPI(m_, _mm512_cmpgt_##EPI##_mask(a_, inf), qnan);               \
        STORE((void *)(out), _mm512_or_si512(m_, _mm512_and_si512(re_, sgn)));                  \
    } while (0)
#define CPART_SETUP(W, EPI, T, EVEN)                                                            \
    const T infc_ = (T)dt_float_inf_code(k->df, false);                                        \
    const __m512i even = EVEN, sgn = _mm512_set1_##EPI((T)1 << (8 * W - 1));                   \
    const __m512i inf = _mm512_set1_##EPI(infc_);                                              \
    const __m512i qnan = _mm512_set1_##EPI((T)dt_float_nan_code(k->df, false));                \
    const __m512i top = _mm512_set1_##EPI(k->r.saturate_float ? (T)dt_float_max_code(k->df)    \
                                                              : infc_);
#define EVEN64 _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14)
#define EVEN32 _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30)
/* the kernel of W-byte parts: ordinary stores (name_plain; the tail through BLOCKS' zeroed
 * blocks) and, through LINES_NT, its own streaming stores */
#define CPART_KERNEL(name, W, EPI, T, EVEN)                                                     \
    static FN void name##_plain(const dt_kernel *k, void *dst, const void *src, size_t begin,  \
                                size_t end)                                                     \
    {                                                                                           \
        CPART_SETUP(W, EPI, T, EVEN)                                                            \
        BLOCKS(64 / (W), 2 * (W), W, name##_BODY)                                               \
    }                                                                                           \
    LINES_NT(name, name##_plain, 64 / (W), 2 * (W), W, CPART_SETUP(W, EPI, T, EVEN), name##_NT)
#define cpart8_BODY(in, out) CPART_LINE(8, epi64, in, out, _mm512_storeu_si512)
#define cpart8_NT(in, out) CPART_LINE(8, epi64, in, out, _mm512_stream_si512)
#define cpart4_BODY(in, out) CPART_LINE(4, epi32, in, out, _mm512_storeu_si512)
#define cpart4_NT(in, out) CPART_LINE(4, epi32, in, out, _mm512_stream_si512)
CPART_KERNEL(cpart8, 8, epi64, uint64_t, EVEN64)
CPART_KERNEL(cpart4, 4, epi32, uint32_t, EVEN32)

/* complex64 -> float32, complex128 -> float64 */
static bool e_complex_part(dt_kernel *k, const dt_format *df, const dt_format *sf,
                           const dt_rules *r, size_t count)
{
    (void)r, (void)count;
    if (sf->tc != DT_TC_COMPLEX || dt_format_of(sf->part) != df)
        return false;
    k->fn = df->type == DTCAST_FLOAT64 ? cpart8 : df->type == DTCAST_FLOAT32 ? cpart4 : NULL;
    k->nt_capable = true; /* LINES_NT */
    return k->fn != NULL;
}

/* float16/bfloat16 -> float32, float32 <-> float64 */
static bool e_float(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                    size_t count)
{
    (void)count;
    const dtcast_type s = sf->type, d = df->type;
    const int m = dt_mode_of(r->round);
    if (d == DTCAST_FLOAT32 && s == DTCAST_FLOAT16)
        k->fn = f16_f32;
    else if (d == DTCAST_FLOAT32 && s == DTCAST_BFLOAT16)
        k->fn = bf16_f32;
    else if (d == DTCAST_FLOAT64 && s == DTCAST_FLOAT32)
        k->fn = f32_f64;
    else if (d == DTCAST_FLOAT32 && s == DTCAST_FLOAT64 && m != M_RNA)
        k->fn = m == M_RNE     ? f64_f32_rne
                : m == M_FLOOR ? f64_f32_floor
                : m == M_CEIL  ? f64_f32_ceil
                : m == M_TRUNC ? f64_f32_trunc
                                          : f64_f32_odd;
    k->nt_capable = true; /* every kernel here: LINES_NT */
    return k->fn != NULL;
}

const dt_kernel_entry dt_entries_avx512[] = {
    {"avx512 table: 1/2/4-bit -> 16/32-bit (vpmultishiftqb + vpermw/d)", DT_ISA_AVX512, e_subbyte},
    {"avx512 integers: int <-> int, int <-> float32/64, float32 -> int, float16/bfloat16 -> 16-bit int",
     DT_ISA_AVX512, e_int},
    {"avx512 table: 8-bit -> 1/2/4/8/16/32-bit (vpermi2b byte planes)", DT_ISA_AVX512, e_table8},
    {"avx512 float32/bfloat16 -> float16 (vcvtps2ph), float32 -> bfloat16", DT_ISA_AVX512,
     e_f32_half},
    {"avx512 narrow template, 16-bit lanes", DT_ISA_AVX512, e_narrow16},
    {"avx512 narrow template, 32-bit lanes", DT_ISA_AVX512, e_narrow},
    {"avx512 float16/bfloat16 -> float32, float32 <-> float64", DT_ISA_AVX512, e_float},
    {"avx512 complex64 -> float32, complex128 -> float64 (the real part)", DT_ISA_AVX512,
     e_complex_part},
    {NULL, DT_ISA_PORTABLE, NULL},
};
#endif
