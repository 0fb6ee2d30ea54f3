/* AVX2 + F16C kernels from the 16-bit floats into 8- and 64-bit integers, in one pass: float16
 * (vcvtph2ps) and bfloat16 (a shift) widen exactly to float32 lanes, which are rounded to an
 * integral float per mode (vroundps; ties-away and odd from the truncation and the floor), then
 *   - into int8/uint8: vcvttps2dq, exact below 2^31, and the low byte of each lane. Wrapping
 *     needs no fix-up: a larger lane (bfloat16 only), Inf and NaN give 0x80000000, whose low byte
 *     is 0, as the value modulo 2^8 is (a float32 of 2^31 or more is a multiple of 2^8) and as
 *     the reference gives for Inf and NaN. Saturation clamps the float to the type's range first
 *     (NaN passing through to 0x80000000, low byte 0);
 *   - into int64/uint64: vcvttps2dq sign-extended where every lane of a block is below 2^31 in
 *     magnitude; else the integral float's bits shifted into a 64-bit lane, which is the value
 *     modulo 2^64 (NaN and Inf give 0), clamped under saturation by comparing the float with the
 *     range's power-of-two bounds.
 * Each kernel computes with its own MXCSR (exceptions masked, no flush-to-zero or
 * denormals-are-zero: a subnormal bfloat16 floors to -1, not to 0) and puts the caller's word
 * back on the way out, flags included. Blocks of 32 elements read all their source before they
 * write (in place works); the tail goes through zeroed local blocks. Compiled for the target
 * through function attributes only. */
#if defined(__x86_64__) && defined(__GNUC__)
#include "kernels.h"
#include "x86_attrs.h"

#include <immintrin.h>
#include <string.h>

#define FN DT_TARGET_AVX2

enum { BLK = 32 }; /* elements per block */
/* the destinations, in the order of the kernel table */
enum { D_I8, D_U8, D_I64, D_U64 };
#define D_BYTES(d) ((d) <= D_U8 ? 1 : 8)
#define D_SIGNED(d) ((d) == D_I8 || (d) == D_I64)

#define I32(c) _mm256_set1_epi32((int)(c))
#define I64(c) _mm256_set1_epi64x((long long)(c))
#define PS(c) _mm256_set1_ps(c)

/* ---- loads ----------------------------------------------------------------------------------- */
/* 8 float16 (bf = 0) or bfloat16 (bf = 1) -> their float32 values, exact */
static FN DT_INLINE __m256 ld_half8(const uint8_t *p, int bf)
{
    const __m128i h = _mm_loadu_si128((const __m128i *)(const void *)p);
    if (bf) /* bfloat16 is the top half of float32 */
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    return _mm256_cvtph_ps(h);
}

/* ---- rounding to an integral float (round_int_avx2.h; trunc too: the conversions below then
 * truncate an integral value) ----------------------------------------------------------------- */
#include "round_int_avx2.h"

/* ---- into 8-bit integers ---------------------------------------------------------------------- */
/* integral float32 lanes -> int32 lanes whose low byte is the int8/uint8 code: under saturation
 * clamped to [lo, hi] first; max and min return their second operand, f, when it is NaN */
static FN DT_INLINE __m256i f32_i8(__m256 f, int d, int sat)
{
    if (sat) {
        const float lo = D_SIGNED(d) ? -128.0f : 0.0f, hi = D_SIGNED(d) ? 127.0f : 255.0f;
        f = _mm256_min_ps(PS(hi), _mm256_max_ps(PS(lo), f));
    }
    return _mm256_cvttps_epi32(f);
}

/* 32 elements -> 32 bytes: the low bytes of 4 x 8 int32 lanes. packus on lanes masked to a byte
 * changes no value; the two packs interleave the 128-bit halves (dwords v0lo v1lo v2lo v3lo |
 * v0hi v1hi v2hi v3hi), vpermd puts them in order. */
static FN DT_INLINE void blk_i8(uint8_t *d, const uint8_t *s, int bf, int dt, int mode, int sat)
{
    __m256i v[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++)
        v[j] = _mm256_and_si256(f32_i8(round_int_ps(ld_half8(s + 16 * j, bf), mode), dt, sat),
                                I32(0xFF));
    const __m256i w = _mm256_packus_epi16(_mm256_packus_epi32(v[0], v[1]),
                                          _mm256_packus_epi32(v[2], v[3]));
    _mm256_storeu_si256((__m256i *)(void *)d,
                        _mm256_permutevar8x32_epi32(w, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}

/* ---- into 64-bit integers --------------------------------------------------------------------- */
/* 4 int32 lanes -> 4 int64 lanes, sign-extended */
static FN DT_INLINE __m256i wide(__m256i x, int half)
{
    return _mm256_cvtepi32_epi64(half ? _mm256_extracti128_si256(x, 1) : _mm256_castsi256_si128(x));
}

/* 8 integral float32 lanes (or NaN/Inf) -> 2 x 4 int64/uint64 codes into out[0], out[1]. |f| =
 * m * 2^(e - 150) for the 24-bit significand m: a left or a right shift of m, whose other count
 * is negative, i.e. >= 64 unsigned, giving 0 (as both do for NaN/Inf, e = 255; zero and the
 * subnormals, e = 0, shift right by 150); bits shifted past bit 63 are the multiples of 2^64
 * that wrapping drops; negated for a negative f. Saturation: beyond the range (signed: |f| >=
 * 2^63, whose code at -2^63 is INT64_MIN anyway; unsigned: f >= 2^64 or f < 0) the end of the
 * range on f's side, MAX ^ sign for signed, ~sign for unsigned; NaN compares false: 0. */
static FN DT_INLINE void f32_i64(__m256 f, int d, int sat, __m256i out[2])
{
    const __m256i b = _mm256_castps_si256(f);
    const __m256i e = _mm256_and_si256(_mm256_srli_epi32(b, 23), I32(0xFF));
    const __m256i m = _mm256_or_si256(_mm256_and_si256(b, I32(0x7FFFFF)), I32(0x800000));
    const __m256i sl = _mm256_sub_epi32(e, I32(150)), sr = _mm256_sub_epi32(I32(150), e);
    const __m256i neg = _mm256_srai_epi32(b, 31); /* all ones where f is negative */
    __m256i out32 = _mm256_setzero_si256(); /* all ones where f is beyond the range */
    if (sat) {
        const __m256 a = _mm256_andnot_ps(_mm256_castsi256_ps(I32(0x80000000)), f);
        out32 = D_SIGNED(d) ? _mm256_castps_si256(_mm256_cmp_ps(a, PS(0x1p63f), _CMP_GE_OQ))
                            : _mm256_castps_si256(_mm256_or_ps(
                                  _mm256_cmp_ps(f, PS(0x1p64f), _CMP_GE_OQ),
                                  _mm256_cmp_ps(f, _mm256_setzero_ps(), _CMP_LT_OQ)));
    }
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) {
        const __m256i mh = _mm256_cvtepu32_epi64(h ? _mm256_extracti128_si256(m, 1)
                                                   : _mm256_castsi256_si128(m));
        const __m256i n = wide(neg, h);
        __m256i v = _mm256_or_si256(_mm256_sllv_epi64(mh, wide(sl, h)),
                                    _mm256_srlv_epi64(mh, wide(sr, h)));
        v = _mm256_sub_epi64(_mm256_xor_si256(v, n), n); /* two's complement */
        if (sat) {
            const __m256i end = D_SIGNED(d) ? _mm256_xor_si256(I64(INT64_MAX), n)
                                            : _mm256_xor_si256(I64(-1), n);
            v = _mm256_blendv_epi8(v, end, wide(out32, h));
        }
        out[h] = v;
    }
}

/* 32 elements -> 256 bytes. Where vcvttps2dq converts every lane (below 2^31 in magnitude: then
 * it gives 0x80000000 for none, as a float16 never is -2^31 and a bfloat16 of -2^31 may take the
 * other way too), the int32 sign-extended is the code (under saturation negative ones are 0 for
 * uint64); a block with a lane beyond (Inf, NaN, a large bfloat16: rare) takes f32_i64. */
static FN DT_INLINE void blk_i64(uint8_t *d, const uint8_t *s, int bf, int dt, int mode, int sat)
{
    __m256 f[4];
    __m256i v[4], any = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) {
        f[j] = round_int_ps(ld_half8(s + 16 * j, bf), mode);
        v[j] = _mm256_cvttps_epi32(f[j]);
        any = _mm256_or_si256(any, _mm256_cmpeq_epi32(v[j], I32(0x80000000)));
        if (sat && !D_SIGNED(dt)) /* a negative value saturates to 0 */
            v[j] = _mm256_max_epi32(v[j], _mm256_setzero_si256());
    }
    if (__builtin_expect(_mm256_testz_si256(any, any), 1)) {
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) {
            _mm256_storeu_si256((__m256i *)(void *)(d + 64 * j), wide(v[j], 0));
            _mm256_storeu_si256((__m256i *)(void *)(d + 64 * j + 32), wide(v[j], 1));
        }
        return;
    }
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) {
        __m256i w[2];
        f32_i64(f[j], dt, sat, w);
        _mm256_storeu_si256((__m256i *)(void *)(d + 64 * j), w[0]);
        _mm256_storeu_si256((__m256i *)(void *)(d + 64 * j + 32), w[1]);
    }
}

/* ---- the loop ---------------------------------------------------------------------------------- */
static FN DT_INLINE void run(void *dst, const void *src, size_t begin, size_t end, int bf, int dt,
                             int mode, int sat)
{
    const size_t db = D_BYTES(dt);
    const uint8_t *s = (const uint8_t *)src + begin * 2;
    uint8_t *d = (uint8_t *)dst + begin * db;
    const size_t n = end - begin;
    _Alignas(32) uint8_t tin[BLK * 2], tout[BLK * 8];
    for (size_t i = 0; i < n; i += BLK) {
        const size_t left = n - i;
        const uint8_t *bs = s + i * 2;
        uint8_t *bd = d + i * db;
        if (left < BLK) { /* the tail through zeroed blocks (read before written: in place works) */
            memset(tin, 0, sizeof tin);
            memcpy(tin, bs, left * 2);
            bs = tin;
            bd = tout;
        } else {
            dt_prefetch_span(bs, BLK * 2);
        }
        if (db == 1)
            blk_i8(bd, bs, bf, dt, mode, sat);
        else
            blk_i64(bd, bs, bf, dt, mode, sat);
        if (left < BLK)
            memcpy(d + i * db, tout, left * db);
    }
}

/* One kernel per (source, destination, mode); the overflow policy is read at run time. The
 * memory clobbers keep every load after the new MXCSR word and every store before the old one. */
#define HINT_FN(name, bf, dt, mode)                                                             \
    static FN void name(const dt_kernel *k, void *dst, const void *src, size_t b, size_t e)     \
    {                                                                                           \
        const unsigned csr = _mm_getcsr();                                                      \
        _mm_setcsr(0x1F80); /* exceptions masked, round to nearest, no FTZ/DAZ */               \
        __asm__ __volatile__("" ::: "memory");                                                  \
        if (k->r.saturate_int)                                                                  \
            run(dst, src, b, e, bf, dt, mode, 1);                                               \
        else                                                                                    \
            run(dst, src, b, e, bf, dt, mode, 0);                                               \
        __asm__ __volatile__("" ::: "memory");                                                  \
        _mm_setcsr(csr);                                                                        \
    }
#define HINT_MODES(name, bf, dt)                                                                \
    HINT_FN(name##_rne, bf, dt, M_RNE) HINT_FN(name##_rna, bf, dt, M_RNA)                       \
    HINT_FN(name##_floor, bf, dt, M_FLOOR) HINT_FN(name##_ceil, bf, dt, M_CEIL)                 \
    HINT_FN(name##_trunc, bf, dt, M_TRUNC) HINT_FN(name##_odd, bf, dt, M_ODD)
#define HINT_ROW(name)                                                                          \
    {name##_rne, name##_rna, name##_floor, name##_ceil, name##_trunc, name##_odd}
HINT_MODES(f16_i8, 0, D_I8)
HINT_MODES(f16_u8, 0, D_U8)
HINT_MODES(f16_i64, 0, D_I64)
HINT_MODES(f16_u64, 0, D_U64)
HINT_MODES(bf16_i8, 1, D_I8)
HINT_MODES(bf16_u8, 1, D_U8)
HINT_MODES(bf16_i64, 1, D_I64)
HINT_MODES(bf16_u64, 1, D_U64)
/* [bfloat16][destination][mode] */
static const dt_kernel_fn hint_fns[2][4][M_MODES] = {
    {HINT_ROW(f16_i8), HINT_ROW(f16_u8), HINT_ROW(f16_i64), HINT_ROW(f16_u64)},
    {HINT_ROW(bf16_i8), HINT_ROW(bf16_u8), HINT_ROW(bf16_i64), HINT_ROW(bf16_u64)}};

bool dt_half_int_find_avx2(dt_kernel *k, const dt_format *df, const dt_format *sf,
                           const dt_rules *r, size_t count)
{
    (void)count;
    const int m = dt_mode_of(r->round);
    int d;
    switch (df->type) {
    case DTCAST_INT8: d = D_I8; break;
    case DTCAST_UINT8: d = D_U8; break;
    case DTCAST_INT64: d = D_I64; break;
    case DTCAST_UINT64: d = D_U64; break;
    default: return false;
    }
    if ((sf->type != DTCAST_FLOAT16 && sf->type != DTCAST_BFLOAT16) || m < 0)
        return false;
    k->fn = hint_fns[sf->type == DTCAST_BFLOAT16][d][m];
    return true;
}
#endif
