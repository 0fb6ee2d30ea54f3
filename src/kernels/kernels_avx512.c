/* AVX-512 kernels (F/BW/VL/DQ/VBMI): the narrowing template with 16 lanes, float32 <-> float16
 * with vcvtps2ph/vcvtph2ps, float32 <-> float64, and 8-bit sources through their 256-entry
 * table with vpermi2b. Compiled for the target through function attributes only. */
#if defined(__x86_64__) && defined(__GNUC__)
#define DT_X86_AVX512 1
#include "kernels_x86.h"

/* Runs BODY(in, out) over blocks of B elements; the tail goes through zeroed local blocks (reads
 * before writes: in place works). SB, DB: source and destination bytes per element. */
#define BLOCKS(B, SB, DB, BODY)                                                                 \
    const uint8_t *s_ = (const uint8_t *)src + begin * (SB);                                    \
    uint8_t *d_ = (uint8_t *)dst + begin * (DB);                                                \
    size_t n_ = end - begin, i_ = 0;                                                            \
    for (; i_ + (B) <= n_; i_ += (B)) {                                                         \
        BODY(s_ + i_ * (SB), d_ + i_ * (DB));                                                   \
    }                                                                                           \
    if (i_ < n_) {                                                                              \
        uint8_t tin_[(B) * (SB)], tout_[(B) * (DB)];                                            \
        memset(tin_, 0, sizeof tin_);                                                           \
        memcpy(tin_, s_ + i_ * (SB), (n_ - i_) * (SB));                                         \
        BODY(tin_, tout_);                                                                      \
        memcpy(d_ + i_ * (DB), tout_, (n_ - i_) * (DB));                                        \
    }

/* ---- float32 -> float16: vcvtps2ph rounds exactly in rne and the directed modes (the
 * immediate picks the mode; overflow follows IEEE 754 as the reference does). Fixed up: NaN ->
 * canonical 0x7E00 with the sign; saturate: +-Inf results -> +-max (Inf - 1). */
#define F32_F16(name, IMM)                                                                      \
    static FN void name(const dt_kernel *k, void *dst, const void *src, size_t begin,          \
                        size_t end)                                                             \
    {                                                                                           \
        const __mmask16 sat = k->r.saturate_float ? 0xFFFF : 0;                                 \
        enum { imm_ = IMM };                                                                    \
        BLOCKS(16, 4, 2, F32_F16_BODY)                                                          \
    }
#define F32_F16_BODY(in, out)                                                                   \
    do {                                                                                        \
        const __m512 x = _mm512_loadu_ps(in);                                                   \
        __m256i h = _mm512_cvtps_ph(x, imm_ | _MM_FROUND_NO_EXC);                               \
        const __mmask16 nan = _mm512_cmpgt_epi32_mask(                                         \
            _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7FFFFFFF)),            \
            _mm512_set1_epi32(0x7F800000));                                                     \
        const __m256i mag = _mm256_and_si256(h, _mm256_set1_epi16(0x7FFF));                     \
        const __mmask16 inf = _mm256_cmpeq_epi16_mask(mag, _mm256_set1_epi16(0x7C00));         \
        h = _mm256_mask_sub_epi16(h, inf & sat, h, _mm256_set1_epi16(1)); /* Inf - 1 is max */ \
        /* NaN: the sign of h, then the canonical quiet NaN: (h & 0x8000) | 0x7E00 */          \
        h = _mm256_mask_blend_epi16(nan, h,                                                     \
                                    _mm256_ternarylogic_epi32(h, _mm256_set1_epi16((short)0x8000), \
                                                              _mm256_set1_epi16(0x7E00), 0xEA)); \
        _mm256_storeu_si256((__m256i *)(out), h);                                               \
    } while (0)
F32_F16(f32_f16_rne, _MM_FROUND_TO_NEAREST_INT)
F32_F16(f32_f16_floor, _MM_FROUND_TO_NEG_INF)
F32_F16(f32_f16_ceil, _MM_FROUND_TO_POS_INF)
F32_F16(f32_f16_trunc, _MM_FROUND_TO_ZERO)

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
static FN void f16_f32(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    const __mmask16 sat = k->r.saturate_float ? 0xFFFF : 0;
    BLOCKS(16, 2, 4, H_F32_BODY)
}
static FN void bf16_f32(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    const __mmask16 sat = k->r.saturate_float ? 0xFFFF : 0;
    BLOCKS(16, 2, 4, B_F32_BODY)
}

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
static FN void f32_f64(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    const __mmask8 sat = k->r.saturate_float ? 0xFF : 0;
    BLOCKS(8, 4, 8, F32_F64_BODY)
}

/* ---- float64 -> float32: vcvtpd2ps with the mode as embedded rounding (IEEE overflow as the
 * reference); odd: truncate and set the lsb of inexact results. NaN canonical; saturate. */
static FN inline __m256i f64cvt(__m512d x, int mode)
{
#define CVT(m) _mm256_castps_si256(_mm512_cvt_roundpd_ps(x, m | _MM_FROUND_NO_EXC))
    switch (mode) {
    case DTCAST_ROUND_FLOOR:
        return CVT(_MM_FROUND_TO_NEG_INF);
    case DTCAST_ROUND_CEIL:
        return CVT(_MM_FROUND_TO_POS_INF);
    case DTCAST_ROUND_TRUNC:
        return CVT(_MM_FROUND_TO_ZERO);
    case DTCAST_ROUND_ODD:
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
#define F64_F32_BODY(in, out)                                                                   \
    do {                                                                                        \
        const __m512d x = _mm512_loadu_pd(in);                                                  \
        __m256i y = f64cvt(x, mode);                                                            \
        const __m256i a = _mm256_and_si256(y, _mm256_set1_epi32(0x7FFFFFFF));                   \
        const __mmask8 nan = _mm512_cmp_pd_mask(x, x, _CMP_UNORD_Q);                            \
        const __mmask8 inf = _mm256_cmpeq_epi32_mask(a, _mm256_set1_epi32(0x7F800000)) & sat;   \
        y = _mm256_mask_sub_epi32(y, inf, y, _mm256_set1_epi32(1));                             \
        y = _mm256_mask_ternarylogic_epi32(y, nan, _mm256_set1_epi32((int)0x80000000),          \
                                           _mm256_set1_epi32(0x7FC00000), 0xEA);                \
        _mm256_storeu_si256((__m256i *)(out), y);                                               \
    } while (0)
F64_F32(f64_f32_rne, DTCAST_ROUND_RNE)
F64_F32(f64_f32_floor, DTCAST_ROUND_FLOOR)
F64_F32(f64_f32_ceil, DTCAST_ROUND_CEIL)
F64_F32(f64_f32_trunc, DTCAST_ROUND_TRUNC)
F64_F32(f64_f32_odd, DTCAST_ROUND_ODD)

/* ---- 8-bit source -> 16- or 32-bit destination through the 256-entry table ------------------
 * The table is split into byte planes (byte j of every entry); each plane is 4 x 64 bytes.
 * vpermi2b looks 64 indices up in 128 bytes (index bit 6 picks the register); bit 7 of the
 * index picks between the two halves by mask. Planes are then interleaved into entries. */
typedef struct planes {
    __m512i p[4][4]; /* [byte j][64-entry quarter] */
} planes;

static FN inline void load_planes(planes *pl, const uint8_t *t, int w)
{
    uint8_t tmp[256];
    for (int j = 0; j < w; j++) {
        for (int c = 0; c < 256; c++)
            tmp[c] = t[c * w + j];
        for (int q = 0; q < 4; q++)
            pl->p[j][q] = _mm512_loadu_si512(tmp + 64 * q);
    }
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

#define T16_BODY(in, out)                                                                       \
    do {                                                                                        \
        const __m512i idx = _mm512_loadu_si512(in);                                             \
        const __mmask64 hi = _mm512_movepi8_mask(idx);                                          \
        __m512i w0, w1;                                                                         \
        zip8(plane_lookup(&pl, 0, idx, hi), plane_lookup(&pl, 1, idx, hi), &w0, &w1);           \
        _mm512_storeu_si512((out), w0);                                                         \
        _mm512_storeu_si512((out) + 64, w1);                                                    \
    } while (0)
#define T32_BODY(in, out)                                                                       \
    do {                                                                                        \
        const __m512i idx = _mm512_loadu_si512(in);                                             \
        const __mmask64 hi = _mm512_movepi8_mask(idx);                                          \
        __m512i a0, a1, b0, b1, d0, d1, d2, d3;                                                 \
        zip8(plane_lookup(&pl, 0, idx, hi), plane_lookup(&pl, 1, idx, hi), &a0, &a1);           \
        zip8(plane_lookup(&pl, 2, idx, hi), plane_lookup(&pl, 3, idx, hi), &b0, &b1);           \
        zip16(a0, b0, &d0, &d1);                                                                \
        zip16(a1, b1, &d2, &d3);                                                                \
        _mm512_storeu_si512((out), d0);                                                         \
        _mm512_storeu_si512((out) + 64, d1);                                                    \
        _mm512_storeu_si512((out) + 128, d2);                                                   \
        _mm512_storeu_si512((out) + 192, d3);                                                   \
    } while (0)
static FN void t8_16(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    planes pl;
    load_planes(&pl, k->table, 2);
    BLOCKS(64, 1, 2, T16_BODY)
}
static FN void t8_32(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    planes pl;
    load_planes(&pl, k->table, 4);
    BLOCKS(64, 1, 4, T32_BODY)
}

bool dt_find_avx512(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                    size_t count)
{
    const dtcast_type s = sf->type, d = df->type;
    const dtcast_round m = r->round;
    if (sf->stride_bits == 8 && (df->stride_bits == 16 || df->stride_bits == 32) && count >= 64) {
        k->table = dt_table_get(df, sf, r);
        if (!k->table)
            k->table = dt_table_build_into(k->local, df, sf, r);
        k->fn = df->stride_bits == 16 ? t8_16 : t8_32;
        return true;
    }
    if (s == DTCAST_FLOAT32 && d == DTCAST_FLOAT16 && m != DTCAST_ROUND_RNA && m != DTCAST_ROUND_ODD) {
        k->fn = m == DTCAST_ROUND_RNE     ? f32_f16_rne
                : m == DTCAST_ROUND_FLOOR ? f32_f16_floor
                : m == DTCAST_ROUND_CEIL  ? f32_f16_ceil
                                          : f32_f16_trunc;
        return true;
    }
    dt_kernel_fn f = narrow_pick_avx512(df, sf, r);
    if (f && dt_narrow_setup(&k->n, df, r)) {
        k->fn = f;
        return true;
    }
    if (d == DTCAST_FLOAT32 && s == DTCAST_FLOAT16) {
        k->fn = f16_f32;
        return true;
    }
    if (d == DTCAST_FLOAT32 && s == DTCAST_BFLOAT16) {
        k->fn = bf16_f32;
        return true;
    }
    if (d == DTCAST_FLOAT64 && s == DTCAST_FLOAT32) {
        k->fn = f32_f64;
        return true;
    }
    if (d == DTCAST_FLOAT32 && s == DTCAST_FLOAT64 && m != DTCAST_ROUND_RNA) {
        k->fn = m == DTCAST_ROUND_RNE     ? f64_f32_rne
                : m == DTCAST_ROUND_FLOOR ? f64_f32_floor
                : m == DTCAST_ROUND_CEIL  ? f64_f32_ceil
                : m == DTCAST_ROUND_TRUNC ? f64_f32_trunc
                                          : f64_f32_odd;
        return true;
    }
    return false;
}
#endif
