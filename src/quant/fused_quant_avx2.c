/* The fused quantize kernels (fused_quant.h): for units of 32 elements, float32 or bfloat16
 * loaded straight from x, multiplied or divided by their block's factor in float32 (one IEEE
 * operation, as simd.c's steps), rounded to the code type (fused_round_avx2.h), packed (8-bit
 * codes as bytes, float6 four in three bytes, float4 two per byte) and stored; the block maxima
 * as the integer max of the |x| bits; MX's scale bytes for eight blocks at a time. */
#include "fused_quant.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include "fused_round_avx2.h"
#include "map_avx2.h"
#define HAVE_AVX2 1

enum { XT_F32, XT_BF16 };

/* ---- loading --------------------------------------------------------------------------------- */

/* 32 elements as four float32 vectors (named, not an array: gcc keeps arrays of vectors on the
 * stack). bfloat16 is the top half of float32: unpacking with zeros below gives lanes in the
 * order [0-3 | 8-11], [4-7 | 12-15] per 16 elements (in-lane), which the 32 -> 16-bit pack of the
 * codes puts back in order. */
typedef struct fq_v4 {
    __m256 a, b, c, d;
} fq_v4;
typedef struct fq_i4 {
    __m256i a, b, c, d;
} fq_i4;

static DT_TARGET_AVX2 DT_INLINE fq_v4 fq_load32(const uint8_t *p, int xt)
{
    fq_v4 v;
    if (xt == XT_F32) {
        v.a = _mm256_loadu_ps((const float *)(const void *)p);
        v.b = _mm256_loadu_ps((const float *)(const void *)(p + 32));
        v.c = _mm256_loadu_ps((const float *)(const void *)(p + 64));
        v.d = _mm256_loadu_ps((const float *)(const void *)(p + 96));
        return v;
    }
    const __m256i z = _mm256_setzero_si256();
    const __m256i w0 = _mm256_loadu_si256((const __m256i *)(const void *)p);
    const __m256i w1 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));
    v.a = _mm256_castsi256_ps(_mm256_unpacklo_epi16(z, w0));
    v.b = _mm256_castsi256_ps(_mm256_unpackhi_epi16(z, w0));
    v.c = _mm256_castsi256_ps(_mm256_unpacklo_epi16(z, w1));
    v.d = _mm256_castsi256_ps(_mm256_unpackhi_epi16(z, w1));
    return v;
}

/* ---- the element step ------------------------------------------------------------------------ */

/* a * k with a as the first source: where both are NaN the product is a's NaN (its sign picks
 * the code), as in the scalar path; gcc takes _mm256_mul_ps as commutative and may swap them */
static DT_TARGET_AVX2 DT_INLINE __m256 fq_mul_x_first(__m256 a, __m256 k)
{
    __m256 r;
    __asm__("vmulps %2, %1, %0" : "=x"(r) : "x"(a), "xm"(k));
    return r;
}

/* clean: no NaN and nothing beyond 2^(emax + 1) can come out (MX; the chunks fq_chunk_clean
 * passes), so neither the NaN rules nor the clamp apply */
static DT_TARGET_AVX2 DT_INLINE __m256 fq_apply(__m256 a, __m256 k, int op, int clean)
{
    switch (op) {
    case DT_Q_MUL: return clean ? _mm256_mul_ps(a, k) : fq_mul_x_first(a, k);
    case DT_Q_DIV: return _mm256_div_ps(a, k);
    case DT_Q_MUL_I8: { /* clamp(x * k * 64, +-127); NaN never reaches here (MX fills) */
        const __m256 t = _mm256_mul_ps(_mm256_mul_ps(a, k), _mm256_set1_ps(64.0f));
        return _mm256_max_ps(_mm256_min_ps(t, _mm256_set1_ps(127.0f)), _mm256_set1_ps(-127.0f));
    }
    default: { /* DT_Q_DIV_MO: NaN -> 6, -0 -> +0 */
        __m256 t = _mm256_div_ps(a, k);
        if (!clean)
            t = _mm256_blendv_ps(t, _mm256_set1_ps(6.0f), _mm256_cmp_ps(t, t, _CMP_UNORD_Q));
        return _mm256_andnot_ps(_mm256_cmp_ps(t, _mm256_setzero_ps(), _CMP_EQ_OQ), t);
    }
    }
}

/* ---- packing --------------------------------------------------------------------------------- */

/* four vectors of codes (32-bit lanes) -> 32 bytes in element order, the float codes' signs
 * (fq_sign8 of the scaled values v) put in. The packs work per 128-bit lane: float32 units come
 * out in 4-byte groups 0, 2, 4, 6 | 1, 3, 5, 7 (a dword permute puts them back), bfloat16 units
 * in 8-byte groups 0, 2 | 1, 3 (a qword permute). Signed packs for int8 codes, unsigned for the
 * float magnitudes (0..255). */
static DT_TARGET_AVX2 DT_INLINE __m256i fq_pack8(fq_i4 c, fq_v4 v, int xt, int el)
{
    __m256i b;
    if (el == FQ_I8) {
        b = _mm256_packs_epi16(_mm256_packs_epi32(c.a, c.b), _mm256_packs_epi32(c.c, c.d));
    } else {
        b = _mm256_packus_epi16(_mm256_packus_epi32(c.a, c.b), _mm256_packus_epi32(c.c, c.d));
        b = _mm256_xor_si256(b, fq_sign8(v.a, v.b, v.c, v.d, fq_fmt_of(el).bits));
    }
    if (xt == XT_BF16)
        return _mm256_permute4x64_epi64(b, 0xD8);
    return _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* 32 codes of 8 bits (bytes, element order) stored in the layout: bytes; float4 two per byte
 * (element 2i in the low nibble); float6 four in three bytes (element i at bit 6i). */
static DT_TARGET_AVX2 DT_INLINE void fq_store(uint8_t *d, __m256i b, int bits)
{
    if (bits == 8) {
        _mm256_storeu_si256((__m256i *)(void *)d, b);
    } else if (bits == 4) {
        /* per byte pair: the even code * 1 + the odd code * 16 (codes < 16: no carries) */
        const __m256i t = _mm256_maddubs_epi16(b, _mm256_set1_epi16(0x1001));
        /* the low bytes of the lanes, in order: qwords 0 and 2 of the pack */
        const __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi16(t, t), 0x08);
        _mm_storeu_si128((__m128i *)(void *)d, _mm256_castsi256_si128(p));
    } else {
        /* a + 64 b per byte pair (multipliers 1, 64), then (a + 64 b) + 4096 (c + 64 d) per
         * dword: the 24 bits of four codes */
        const __m256i w = _mm256_madd_epi16(_mm256_maddubs_epi16(b, _mm256_set1_epi16(0x4001)),
                                            _mm256_set1_epi32(0x10000001));
        /* the three low bytes of each dword: 12 bytes per 128-bit lane, then 24 in a row */
        const __m256i s = _mm256_shuffle_epi8(
            w, _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1, 0, 1, 2,
                                4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1));
        const __m256i o = _mm256_permutevar8x32_epi32(s, _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7));
        _mm_storeu_si128((__m128i *)(void *)d, _mm256_castsi256_si128(o));
        _mm_storel_epi64((__m128i *)(void *)(d + 16), _mm256_extracti128_si256(o, 1));
    }
}

/* the low byte of each dword of b, in order */
static DT_TARGET_AVX2 DT_INLINE __m128i fq_bytes8(__m256i b)
{
    const __m256i p = _mm256_packus_epi16(_mm256_packus_epi32(b, b), _mm256_setzero_si256());
    return _mm_unpacklo_epi32(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
}

/* ---- the codes kernels ------------------------------------------------------------------------ */

/* one unit of 32 elements at p: the first 16 scaled by ka, the last 16 by kb. The elements come
 * from memory in the block-max pass before this one: the lines `ahead` bytes further on, which
 * the next such pass reads, are prefetched here, so that they load while this one computes. */
static DT_TARGET_AVX2 DT_INLINE void fq_unit(uint8_t *d, const uint8_t *p, __m256 ka, __m256 kb,
                                             int xt, int el, int op, int clean, int bits,
                                             size_t ahead)
{
    const size_t xs = xt == XT_F32 ? 4 : 2;
    for (size_t o = 0; o < 32 * xs; o += 64)
        __builtin_prefetch((const void *)((uintptr_t)p + ahead + o), 0, 3);
    const fq_v4 x = fq_load32(p, xt);
    fq_v4 v;
    v.a = fq_apply(x.a, ka, op, clean);
    v.b = fq_apply(x.b, ka, op, clean);
    v.c = fq_apply(x.c, kb, op, clean);
    v.d = fq_apply(x.d, kb, op, clean);
    const int nan = !clean && op != DT_Q_DIV_MO; /* modelopt's NaN became 6 above */
    fq_i4 c;
    c.a = fq_round(v.a, el, clean, nan);
    c.b = fq_round(v.b, el, clean, nan);
    c.c = fq_round(v.c, el, clean, nan);
    c.d = fq_round(v.d, el, clean, nan);
    fq_store(d, fq_pack8(c, v, xt, el), bits);
}

static DT_TARGET_AVX2 DT_INLINE void fq_codes_run(uint8_t *dst, const uint8_t *x, size_t n,
                                                  size_t B, const float *k, size_t ahead,
                                                  int xt, int el, int op, int clean, int bits)
{
    const size_t xs = xt == XT_F32 ? 4 : 2, ob = (size_t)bits * 4; /* bytes per 32 codes */
    size_t i = 0;
    if (B == 16) {
        for (; i + 32 <= n; i += 32, dst += ob, k += 2)
            fq_unit(dst, x + i * xs, _mm256_broadcast_ss(k), _mm256_broadcast_ss(k + 1), xt, el,
                    op, clean, bits, ahead);
    } else { /* B a multiple of 32: the whole blocks, then the units of a short last one */
        for (; i + B <= n; k++) {
            const __m256 kk = _mm256_broadcast_ss(k);
            for (const size_t e = i + B; i < e; i += 32, dst += ob)
                fq_unit(dst, x + i * xs, kk, kk, xt, el, op, clean, bits, ahead);
        }
        for (; i + 32 <= n; i += 32, dst += ob)
            fq_unit(dst, x + i * xs, _mm256_broadcast_ss(k), _mm256_broadcast_ss(k), xt, el, op,
                    clean, bits, ahead);
    }
    if (i < n) { /* the last elements through a unit of zeros (a whole number of bytes) */
        _Alignas(32) uint8_t in[128] = {0}, out[32];
        const size_t r = n - i;
        memcpy(in, x + i * xs, r * xs);
        const __m256 kk = _mm256_broadcast_ss(k);
        fq_unit(out, in, kk, kk, xt, el, op, clean, bits, 0);
        memcpy(dst, out, r * (size_t)bits / 8);
    }
}

#define FQ_KERNEL(name, el, op, clean, bits)                                                    \
    static DT_TARGET_AVX2 void name##_f32(uint8_t *d, const uint8_t *x, size_t n, size_t B,    \
                                          const float *k, size_t ahead)                        \
    {                                                                                           \
        fq_codes_run(d, x, n, B, k, ahead, XT_F32, el, op, clean, bits);                        \
    }                                                                                           \
    static DT_TARGET_AVX2 void name##_bf16(uint8_t *d, const uint8_t *x, size_t n, size_t B,   \
                                           const float *k, size_t ahead)                       \
    {                                                                                           \
        fq_codes_run(d, x, n, B, k, ahead, XT_BF16, el, op, clean, bits);                       \
    }
/* every kernel of NVFP4 and block FP8, and its clean one */
#define FQ_KERNEL2(name, el, op, bits)                                                          \
    FQ_KERNEL(name, el, op, 0, bits)                                                            \
    FQ_KERNEL(name##_c, el, op, 1, bits)

/* MX: clean (NaN/Inf blocks are filled, the scaled values stay below 2^(emax + 1)) */
FQ_KERNEL(mx_e4m3, FQ_E4M3, DT_Q_MUL, 1, 8)
FQ_KERNEL(mx_e5m2, FQ_E5M2, DT_Q_MUL, 1, 8)
FQ_KERNEL(mx_e3m2, FQ_E3M2, DT_Q_MUL, 1, 8)
FQ_KERNEL(mx_e3m2p, FQ_E3M2, DT_Q_MUL, 1, 6)
FQ_KERNEL(mx_e2m3, FQ_E2M3, DT_Q_MUL, 1, 8)
FQ_KERNEL(mx_e2m3p, FQ_E2M3, DT_Q_MUL, 1, 6)
FQ_KERNEL(mx_e2m1, FQ_E2M1, DT_Q_MUL, 1, 4)
FQ_KERNEL(mx_i8, FQ_I8, DT_Q_MUL_I8, 1, 8)
/* NVFP4 (torchao: x * k, ct: x / k, modelopt: x / k with NaN -> 6) and block FP8 (hf: x * qs,
 * deepseek-act: x / s) */
FQ_KERNEL2(nv_mul, FQ_E2M1, DT_Q_MUL, 4)
FQ_KERNEL2(nv_div, FQ_E2M1, DT_Q_DIV, 4)
FQ_KERNEL2(nv_mo, FQ_E2M1, DT_Q_DIV_MO, 4)
FQ_KERNEL2(fb_mul, FQ_E4M3, DT_Q_MUL, 8)
FQ_KERNEL2(fb_div, FQ_E4M3, DT_Q_DIV, 8)

typedef struct fq_entry {
    dtcast_scheme scheme;
    dtcast_type el;
    int op, bits;
    dt_fq_fn f32, bf16, f32_clean, bf16_clean;
} fq_entry;

#define FQ_ENTRY(s, el, op, bits, name)                                                         \
    {s, el, op, bits, name##_f32, name##_bf16, name##_f32, name##_bf16}
#define FQ_ENTRY2(s, el, op, bits, name)                                                        \
    {s, el, op, bits, name##_f32, name##_bf16, name##_c_f32, name##_c_bf16}
static const fq_entry fq_entries[] = {
    FQ_ENTRY(DTCAST_SCHEME_MX, DTCAST_FLOAT8E4M3FN, DT_Q_MUL, 8, mx_e4m3),
    FQ_ENTRY(DTCAST_SCHEME_MX, DTCAST_FLOAT8E5M2, DT_Q_MUL, 8, mx_e5m2),
    FQ_ENTRY(DTCAST_SCHEME_MX, DTCAST_FLOAT6E3M2FN, DT_Q_MUL, 8, mx_e3m2),
    FQ_ENTRY(DTCAST_SCHEME_MX, DTCAST_FLOAT6E3M2FN, DT_Q_MUL, 6, mx_e3m2p),
    FQ_ENTRY(DTCAST_SCHEME_MX, DTCAST_FLOAT6E2M3FN, DT_Q_MUL, 8, mx_e2m3),
    FQ_ENTRY(DTCAST_SCHEME_MX, DTCAST_FLOAT6E2M3FN, DT_Q_MUL, 6, mx_e2m3p),
    FQ_ENTRY(DTCAST_SCHEME_MX, DTCAST_FLOAT4E2M1, DT_Q_MUL, 4, mx_e2m1),
    FQ_ENTRY(DTCAST_SCHEME_MX, DTCAST_INT8, DT_Q_MUL_I8, 8, mx_i8),
    FQ_ENTRY2(DTCAST_SCHEME_NVFP4, DTCAST_FLOAT4E2M1, DT_Q_MUL, 4, nv_mul),
    FQ_ENTRY2(DTCAST_SCHEME_NVFP4, DTCAST_FLOAT4E2M1, DT_Q_DIV, 4, nv_div),
    FQ_ENTRY2(DTCAST_SCHEME_NVFP4, DTCAST_FLOAT4E2M1, DT_Q_DIV_MO, 4, nv_mo),
    FQ_ENTRY2(DTCAST_SCHEME_FP8_BLOCK, DTCAST_FLOAT8E4M3FN, DT_Q_MUL, 8, fb_mul),
    FQ_ENTRY2(DTCAST_SCHEME_FP8_BLOCK, DTCAST_FLOAT8E4M3FN, DT_Q_DIV, 8, fb_div),
};

/* Whether a chunk is clean: every block's scaled amax is ordered and below lim (just under
 * 2^(emax + 1)): |fl32(amax * k)| < lim, or for a division amax < fl32(0.98 lim * k) (then
 * amax / k < lim; no division needed). Its elements then give neither NaN nor values past the
 * clamp: |x| <= amax and the rounding is monotone; a NaN or Inf amax, a NaN or Inf k, and for a
 * division a zero or negative k, fail. */
static DT_TARGET_AVX2 bool fq_chunk_clean(const float *amax, const float *k, size_t nb, int op,
                                          float lim)
{
    const bool mul = op == DT_Q_MUL;
    const float c = mul ? lim : 0.98f * lim;
    const __m256 l = _mm256_set1_ps(c), abs = _mm256_castsi256_ps(fq_set1(0x7FFFFFFFu));
    __m256 ok = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    size_t i = 0;
    for (; i + 8 <= nb; i += 8) {
        const __m256 a = _mm256_loadu_ps(amax + i), kk = _mm256_loadu_ps(k + i);
        ok = _mm256_and_ps(ok, mul ? _mm256_cmp_ps(_mm256_and_ps(_mm256_mul_ps(a, kk), abs), l,
                                                   _CMP_LT_OQ)
                                   : _mm256_cmp_ps(a, _mm256_mul_ps(l, kk), _CMP_LT_OQ));
    }
    for (; i < nb; i++) {
        const float v = mul ? amax[i] * k[i] : amax[i];
        const float w = mul ? c : c * k[i];
        if (!(v < w && (!mul || v > -w)))
            return false;
    }
    return _mm256_movemask_ps(ok) == 0xFF;
}

/* ---- bfloat16 -> float4 by thresholds ------------------------------------------------------------ */

/* The thresholds of one scale code, factor k: lane i < 7 the least |x| (bfloat16 bits, 0 to
 * 0x7F80; 0x7F81: none) whose code is above i; lane 7 the least |x| whose quotient is not 0
 * (modelopt, whose 0 quotients lose the sign; 0 for the others). The code of |x| bits u only
 * goes up with u (the element step and the rounding are monotone, k > 0), so each is found by
 * bisection of the element step and rounding of the kernels above, evaluated at u << 16; [lo,
 * hi] holds the answer (0x7F81 stands for "none": a NaN, which the step and rounding take above
 * every threshold), and 0x7F81 < 2^15: 15 halvings leave lo == hi. The quotients near these
 * thresholds are normal numbers (no slow subnormal steps), except those near 0 for lane 7: it
 * searches as lane 6 and is set apart (fq_thr_zero). */
typedef struct fq_bisect {
    __m256 k;
    __m256i lo, hi;
} fq_bisect;

static DT_TARGET_AVX2 DT_INLINE void fq_bisect_step(fq_bisect *b, int op)
{
    const __m256i target = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 6);
    const __m256i mid = _mm256_srli_epi32(_mm256_add_epi32(b->lo, b->hi), 1);
    const __m256 v = fq_apply(_mm256_castsi256_ps(_mm256_slli_epi32(mid, 16)), b->k, op, 0);
    const __m256i up = _mm256_cmpgt_epi32(fq_round_float(v, FQ_E2M1, 0, 0), target);
    b->hi = _mm256_blendv_epi8(b->hi, mid, up);
    b->lo = _mm256_blendv_epi8(_mm256_add_epi32(mid, fq_set1(1)), b->lo, up);
}

/* modelopt: the least |x| bits whose quotient fl32(x / k) is not 0, that is x / k > 2^-150
 * (half the least float32 subnormal; exactly half is a tie, rounded to the even 0): by bisection
 * on x > k 2^-150 in double, where both sides are exact (and normal: no slow steps) */
static uint32_t fq_thr_zero(float k)
{
    const double y = (double)k * 0x1p-150;
    uint32_t lo = 0, hi = 0x7F81u;
    while (lo < hi) {
        const uint32_t mid = (lo + hi) / 2, xb = mid << 16;
        float x;
        memcpy(&x, &xb, 4);
        if ((double)x > y)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* the row of thresholds - 1 (|x| >= T as |x| > T - 1, signed 16-bit), each in both halves of
 * its dword */
static DT_TARGET_AVX2 DT_INLINE void fq_bisect_store(uint32_t *row, __m256i lo, float k, int op)
{
    const uint32_t z = op == DT_Q_DIV_MO ? fq_thr_zero(k) : 0;
    lo = _mm256_blend_epi32(lo, fq_set1(z), 0x80);
    const __m256i t = _mm256_and_si256(_mm256_sub_epi32(lo, fq_set1(1)), fq_set1(0xFFFF));
    _mm256_storeu_si256((__m256i *)(void *)row, _mm256_or_si256(t, _mm256_slli_epi32(t, 16)));
}

/* the rows of scale codes [0, 128), factors k[s]: four bisections side by side */
static DT_TARGET_AVX2 void fq_thr_rows(dt_fq_thr *t, const float *k, int op)
{
    for (int s = 0; s < 128; s += 4) {
        fq_bisect b0 = {_mm256_set1_ps(k[s]), _mm256_setzero_si256(), fq_set1(0x7F81u)};
        fq_bisect b1 = b0, b2 = b0, b3 = b0;
        b1.k = _mm256_set1_ps(k[s + 1]), b2.k = _mm256_set1_ps(k[s + 2]);
        b3.k = _mm256_set1_ps(k[s + 3]);
        for (int it = 0; it < 15; it++) {
            fq_bisect_step(&b0, op), fq_bisect_step(&b1, op);
            fq_bisect_step(&b2, op), fq_bisect_step(&b3, op);
        }
        fq_bisect_store(t->t[s], b0.lo, k[s], op);
        fq_bisect_store(t->t[s + 1], b1.lo, k[s + 1], op);
        fq_bisect_store(t->t[s + 2], b2.lo, k[s + 2], op);
        fq_bisect_store(t->t[s + 3], b3.lo, k[s + 3], op);
    }
}

/* the codes of 16 bfloat16 elements (one block) as 16-bit lanes: the number of thresholds |x|
 * reaches, the sign at bit 3 */
static DT_TARGET_AVX2 DT_INLINE __m256i fq_thr_block(const uint8_t *p, const uint32_t *row, int op)
{
    const __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)p);
    const __m256i a = _mm256_and_si256(x, _mm256_set1_epi16(0x7FFF));
    __m256i c = _mm256_and_si256(_mm256_srli_epi16(x, 12), _mm256_set1_epi16(8)); /* bit 15 -> 3 */
    if (op == DT_Q_DIV_MO) /* a quotient of 0 is +0 */
        c = _mm256_and_si256(c, _mm256_cmpgt_epi16(a, _mm256_set1_epi32((int)row[7])));
    /* then the magnitude: a compare gives -1 where |x| reaches the threshold, subtracted (two
     * at a time: shorter chains) */
#define FQ_GE(i) _mm256_cmpgt_epi16(a, _mm256_set1_epi32((int)row[i]))
    c = _mm256_sub_epi16(c, _mm256_add_epi16(FQ_GE(0), FQ_GE(1)));
    c = _mm256_sub_epi16(c, _mm256_add_epi16(FQ_GE(2), FQ_GE(3)));
    c = _mm256_sub_epi16(c, _mm256_add_epi16(FQ_GE(4), FQ_GE(5)));
#undef FQ_GE
    return _mm256_sub_epi16(c, _mm256_cmpgt_epi16(a, _mm256_set1_epi32((int)row[6])));
}

/* 32 codes of two blocks (16-bit lanes, element order) -> bytes in element order, packed */
static DT_TARGET_AVX2 DT_INLINE void fq_thr_store(uint8_t *d, __m256i c0, __m256i c1)
{
    /* per 128-bit lane: 8 bytes of c0, 8 of c1; qwords 0, 2, 1, 3 put them in order */
    fq_store(d, _mm256_permute4x64_epi64(_mm256_packus_epi16(c0, c1), 0xD8), 4);
}

static DT_TARGET_AVX2 DT_INLINE void fq_thr_run(uint8_t *d, const uint8_t *x, size_t nb,
                                                const dt_fq_thr *t, const uint8_t *S, int op,
                                                size_t ahead)
{
    size_t b = 0;
    for (; b + 2 <= nb; b += 2, d += 16, x += 64) {
        __builtin_prefetch((const void *)(x + ahead), 0, 3);
        fq_thr_store(d, fq_thr_block(x, t->t[S[b]], op), fq_thr_block(x + 32, t->t[S[b + 1]], op));
    }
    if (b < nb) { /* an odd last block */
        uint8_t out[16];
        fq_thr_store(out, fq_thr_block(x, t->t[S[b]], op), _mm256_setzero_si256());
        memcpy(d, out, 8);
    }
}

static DT_TARGET_AVX2 void fq_thr_mul(uint8_t *d, const uint8_t *x, size_t nb, const dt_fq_thr *t,
                                      const uint8_t *S, size_t ahead)
{
    fq_thr_run(d, x, nb, t, S, DT_Q_MUL, ahead);
}
static DT_TARGET_AVX2 void fq_thr_div(uint8_t *d, const uint8_t *x, size_t nb, const dt_fq_thr *t,
                                      const uint8_t *S, size_t ahead)
{
    fq_thr_run(d, x, nb, t, S, DT_Q_DIV, ahead);
}
static DT_TARGET_AVX2 void fq_thr_mo(uint8_t *d, const uint8_t *x, size_t nb, const dt_fq_thr *t,
                                     const uint8_t *S, size_t ahead)
{
    fq_thr_run(d, x, nb, t, S, DT_Q_DIV_MO, ahead);
}

/* ---- block maxima ----------------------------------------------------------------------------- */

static DT_TARGET_AVX2 DT_INLINE __m256i fq_abs8(const uint8_t *p)
{
    return _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)p),
                            fq_set1(0x7FFFFFFFu));
}

/* the |x| bits maxima of a block of B (16 or 32) as 8 lanes: float32 bits (bfloat16: its 16 bits,
 * shifted up by the caller) */
static DT_TARGET_AVX2 DT_INLINE __m256i fq_block_max(const uint8_t *p, size_t B, int xt)
{
    if (xt == XT_F32) {
        __m256i m = _mm256_max_epi32(fq_abs8(p), fq_abs8(p + 32));
        if (B == 32)
            m = _mm256_max_epi32(m, _mm256_max_epi32(fq_abs8(p + 64), fq_abs8(p + 96)));
        return m;
    }
    const __m256i a = _mm256_set1_epi16(0x7FFF);
    __m256i m = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)p), a);
    if (B == 32)
        m = _mm256_max_epu16(
            m, _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)(p + 32)), a));
    /* the two 16-bit halves of each dword */
    return _mm256_max_epi32(_mm256_and_si256(m, fq_set1(0xFFFF)), _mm256_srli_epi32(m, 16));
}

/* eight vectors -> one: lane i the max of the lanes of m[i] (interleave and max, three levels) */
static DT_TARGET_AVX2 DT_INLINE __m256i fq_reduce8(const __m256i m[8])
{
    __m256i r2[4], r4[2];
    for (int i = 0; i < 4; i++)
        r2[i] = _mm256_max_epi32(_mm256_unpacklo_epi32(m[2 * i], m[2 * i + 1]),
                                 _mm256_unpackhi_epi32(m[2 * i], m[2 * i + 1]));
    for (int i = 0; i < 2; i++)
        r4[i] = _mm256_max_epi32(_mm256_unpacklo_epi64(r2[2 * i], r2[2 * i + 1]),
                                 _mm256_unpackhi_epi64(r2[2 * i], r2[2 * i + 1]));
    return _mm256_max_epi32(_mm256_permute2x128_si256(r4[0], r4[1], 0x20),
                            _mm256_permute2x128_si256(r4[0], r4[1], 0x31));
}

/* any NaN bits (above Inf's) -> the canonical NaN */
static DT_TARGET_AVX2 DT_INLINE __m256i fq_canon(__m256i m)
{
    return _mm256_blendv_epi8(m, fq_set1(0x7FC00000u), _mm256_cmpgt_epi32(m, fq_set1(0x7F800000u)));
}

static DT_TARGET_AVX2 DT_INLINE uint32_t fq_hmax(__m256i m)
{
    __m128i h = _mm_max_epi32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
    h = _mm_max_epi32(h, _mm_shuffle_epi32(h, 0x4E));
    h = _mm_max_epi32(h, _mm_shuffle_epi32(h, 0xB1));
    return (uint32_t)_mm_cvtsi128_si32(h);
}

/* one block of any length n > 0: its |x| max as bits (NaN not yet canonical) */
static DT_TARGET_AVX2 DT_INLINE uint32_t fq_amax_one(const uint8_t *p, size_t n, int xt)
{
    __m256i m = _mm256_setzero_si256();
    size_t i = 0;
    if (xt == XT_F32) {
        for (; i + 8 <= n; i += 8)
            m = _mm256_max_epi32(m, fq_abs8(p + 4 * i));
    } else {
        __m256i h = _mm256_setzero_si256();
        for (; i + 16 <= n; i += 16)
            h = _mm256_max_epu16(h, _mm256_and_si256(
                                        _mm256_loadu_si256((const __m256i *)(const void *)(p + 2 * i)),
                                        _mm256_set1_epi16(0x7FFF)));
        m = _mm256_slli_epi32(
            _mm256_max_epi32(_mm256_and_si256(h, fq_set1(0xFFFF)), _mm256_srli_epi32(h, 16)), 16);
    }
    uint32_t r = fq_hmax(m);
    for (; i < n; i++) {
        uint32_t a;
        if (xt == XT_F32) {
            memcpy(&a, p + 4 * i, 4);
        } else {
            uint16_t h;
            memcpy(&h, p + 2 * i, 2);
            a = (uint32_t)h << 16;
        }
        a &= 0x7FFFFFFFu;
        r = a > r ? a : r;
    }
    return r;
}

/* eight bfloat16 blocks of 16, one vector each: lane i of the result the |x| max of block i
 * (float32 bits). Interleave and max at 16, 32 and 64 bits, then the two 128-bit halves. */
static DT_TARGET_AVX2 DT_INLINE __m256i fq_max8_bf16x16(const uint8_t *p)
{
    const __m256i a = _mm256_set1_epi16(0x7FFF);
    __m256i m[8], r2[4], r4[2];
    for (int i = 0; i < 8; i++) {
        if (i % 2 == 0) /* a line per two vectors */
            dt_prefetch_span(p + 32 * i, 64);
        m[i] = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)(p + 32 * i)), a);
    }
    for (int i = 0; i < 4; i++)
        r2[i] = _mm256_max_epu16(_mm256_unpacklo_epi16(m[2 * i], m[2 * i + 1]),
                                 _mm256_unpackhi_epi16(m[2 * i], m[2 * i + 1]));
    for (int i = 0; i < 2; i++)
        r4[i] = _mm256_max_epu16(_mm256_unpacklo_epi32(r2[2 * i], r2[2 * i + 1]),
                                 _mm256_unpackhi_epi32(r2[2 * i], r2[2 * i + 1]));
    /* words: blocks 0-7 twice per 128-bit half, each half a max of its part */
    const __m256i r8 = _mm256_max_epu16(_mm256_unpacklo_epi64(r4[0], r4[1]),
                                        _mm256_unpackhi_epi64(r4[0], r4[1]));
    const __m128i h = _mm_max_epu16(_mm256_castsi256_si128(r8), _mm256_extracti128_si256(r8, 1));
    return _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16);
}

static DT_TARGET_AVX2 DT_INLINE uint32_t fq_amax_run(const uint8_t *x, size_t n, size_t B,
                                                     float *out, int xt)
{
    const size_t xs = xt == XT_F32 ? 4 : 2;
    size_t b = 0, nb = (n + B - 1) / B;
    __m256i all = _mm256_setzero_si256();
    if (B == 16 && xt == XT_BF16) {
        for (; (b + 8) * B <= n; b += 8) {
            const __m256i r = fq_canon(fq_max8_bf16x16(x + b * 32));
            all = _mm256_max_epi32(all, r);
            _mm256_storeu_ps(out + b, _mm256_castsi256_ps(r));
        }
    } else if (B == 16 || B == 32) {
        for (; (b + 8) * B <= n; b += 8) { /* eight whole blocks */
            __m256i m[8];
            for (int i = 0; i < 8; i++) {
                const uint8_t *p = x + (b + (size_t)i) * B * xs;
                dt_prefetch_span(p, B * xs);
                m[i] = fq_block_max(p, B, xt);
            }
            __m256i r = fq_reduce8(m);
            if (xt == XT_BF16)
                r = _mm256_slli_epi32(r, 16);
            r = fq_canon(r);
            all = _mm256_max_epi32(all, r);
            _mm256_storeu_ps(out + b, _mm256_castsi256_ps(r));
        }
    }
    uint32_t mall = fq_hmax(all);
    for (; b < nb; b++) { /* other B (block FP8's tiles), and the last block */
        const size_t len = n - b * B < B ? n - b * B : B;
        dt_prefetch_span(x + b * B * xs, len * xs);
        uint32_t a = fq_amax_one(x + b * B * xs, len, xt);
        a = a > 0x7F800000u ? 0x7FC00000u : a;
        mall = a > mall ? a : mall;
        memcpy(out + b, &a, 4);
    }
    return mall;
}

/* the |x| max of n elements as bits (NaN not yet canonical): four running maxima, from the end
 * of x down (the pass after this one starts where x is still in the caches), prefetching below */
static DT_TARGET_AVX2 DT_INLINE uint32_t fq_amax_all(const uint8_t *x, size_t n, int xt)
{
    const size_t per = xt == XT_F32 ? 8 : 16; /* elements per vector */
    const __m256i a = xt == XT_F32 ? fq_set1(0x7FFFFFFFu) : _mm256_set1_epi16(0x7FFF);
    __m256i m0 = _mm256_setzero_si256(), m1 = m0, m2 = m0, m3 = m0;
    const size_t head = n % (4 * per); /* the first elements, by the tail loop */
    for (size_t i = n; i > head; i -= 4 * per) {
        const uint8_t *p = x + (i - 4 * per) * (32 / per);
        __builtin_prefetch((const void *)((uintptr_t)p - dt_prefetch_ahead), 0, 3);
        __builtin_prefetch((const void *)((uintptr_t)p - dt_prefetch_ahead + 64), 0, 3);
        const __m256i v0 = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)p), a);
        const __m256i v1 = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)(p + 32)), a);
        const __m256i v2 = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)(p + 64)), a);
        const __m256i v3 = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)(p + 96)), a);
        if (xt == XT_F32) {
            m0 = _mm256_max_epi32(m0, v0), m1 = _mm256_max_epi32(m1, v1);
            m2 = _mm256_max_epi32(m2, v2), m3 = _mm256_max_epi32(m3, v3);
        } else {
            m0 = _mm256_max_epu16(m0, v0), m1 = _mm256_max_epu16(m1, v1);
            m2 = _mm256_max_epu16(m2, v2), m3 = _mm256_max_epu16(m3, v3);
        }
    }
    __m256i m;
    if (xt == XT_F32) {
        m = _mm256_max_epi32(_mm256_max_epi32(m0, m1), _mm256_max_epi32(m2, m3));
    } else { /* the two 16-bit halves of each dword, moved up to float32 bits */
        m = _mm256_max_epu16(_mm256_max_epu16(m0, m1), _mm256_max_epu16(m2, m3));
        m = _mm256_slli_epi32(
            _mm256_max_epi32(_mm256_and_si256(m, fq_set1(0xFFFF)), _mm256_srli_epi32(m, 16)), 16);
    }
    const uint32_t r = fq_hmax(m), t = head ? fq_amax_one(x, head, xt) : 0;
    return r > t ? r : t;
}

/* dt_fq_amax_tiles for up to FQ_TILES whole tiles (C a multiple of 32): per tile one vector of
 * |x| bits maxima (bfloat16: 16-bit lanes, float32: 32-bit) kept over the rows */
enum { FQ_TILES = 64 };
static DT_TARGET_AVX2 DT_INLINE void fq_tiles_run(const uint8_t *x, size_t rows, size_t stride,
                                                  size_t nt, size_t C, uint32_t *out, int xt)
{
    __m256i acc[FQ_TILES];
    const size_t xs = xt == XT_F32 ? 4 : 2, tb = C * xs; /* bytes per tile row */
    const __m256i a = xt == XT_F32 ? fq_set1(0x7FFFFFFFu) : _mm256_set1_epi16(0x7FFF);
    for (size_t t = 0; t < nt; t++)
        acc[t] = _mm256_setzero_si256();
    for (size_t r = 0; r < rows; r++, x += stride) {
        for (size_t t = 0; t < nt; t++) {
            const uint8_t *p = x + t * tb;
            __m256i m0 = acc[t], m1 = _mm256_setzero_si256();
            for (size_t o = 0; o < tb; o += 64) {
                __builtin_prefetch((const void *)((uintptr_t)p + o + dt_prefetch_ahead), 0, 3);
                const __m256i v0 = _mm256_and_si256(
                    _mm256_loadu_si256((const __m256i *)(const void *)(p + o)), a);
                const __m256i v1 = _mm256_and_si256(
                    _mm256_loadu_si256((const __m256i *)(const void *)(p + o + 32)), a);
                if (xt == XT_F32)
                    m0 = _mm256_max_epi32(m0, v0), m1 = _mm256_max_epi32(m1, v1);
                else
                    m0 = _mm256_max_epu16(m0, v0), m1 = _mm256_max_epu16(m1, v1);
            }
            acc[t] = xt == XT_F32 ? _mm256_max_epi32(m0, m1) : _mm256_max_epu16(m0, m1);
        }
    }
    for (size_t t = 0; t < nt; t++) {
        __m256i m = acc[t];
        if (xt == XT_BF16) /* the two 16-bit halves of each dword, moved up to float32 bits */
            m = _mm256_slli_epi32(
                _mm256_max_epi32(_mm256_and_si256(m, fq_set1(0xFFFF)), _mm256_srli_epi32(m, 16)), 16);
        const uint32_t v = fq_hmax(m);
        out[t] = v > 0x7F800000u ? 0x7FC00000u : v;
    }
}

static DT_TARGET_AVX2 void fq_tiles_f32(const uint8_t *x, size_t rows, size_t stride, size_t nt,
                                        size_t C, uint32_t *out)
{
    fq_tiles_run(x, rows, stride, nt, C, out, XT_F32);
}

static DT_TARGET_AVX2 void fq_tiles_bf16(const uint8_t *x, size_t rows, size_t stride, size_t nt,
                                         size_t C, uint32_t *out)
{
    fq_tiles_run(x, rows, stride, nt, C, out, XT_BF16);
}

static DT_TARGET_AVX2 uint32_t fq_amax_f32(const uint8_t *x, size_t n, size_t B, float *out)
{
    return out ? fq_amax_run(x, n, B, out, XT_F32) : fq_amax_all(x, n, XT_F32);
}

static DT_TARGET_AVX2 uint32_t fq_amax_bf16(const uint8_t *x, size_t n, size_t B, float *out)
{
    return out ? fq_amax_run(x, n, B, out, XT_BF16) : fq_amax_all(x, n, XT_BF16);
}

/* ---- float8e4m3fn block scales ------------------------------------------------------------------ */

/* the codes of 8 lanes (as dwords) and their values (*sf) */
static DT_TARGET_AVX2 DT_INLINE __m256i fq_e4m3_v(__m256 v, bool zero_fix, const float *table,
                                               __m256 *sf)
{
    __m256i c = _mm256_or_si256(fq_round_float(v, FQ_E4M3_IEEE, 0, 0), /* the sign at bit 7 */
                                _mm256_srli_epi32(_mm256_and_si256(_mm256_castps_si256(v),
                                                                   fq_set1(0x80000000u)), 24));
    if (zero_fix) /* a zero code of either sign becomes 0x20 (0.125) */
        c = _mm256_blendv_epi8(c, fq_set1(0x20),
                               _mm256_cmpeq_epi32(_mm256_and_si256(c, fq_set1(0x7F)),
                                                  _mm256_setzero_si256()));
    *sf = _mm256_i32gather_ps(table, c, 4);
    return c;
}

/* NVFP4's block scales of nb blocks in one pass, eight at a time: the scale input from the
 * block's amax, its code S and value (fq_e4m3_v), the element factor k from the value */
static DT_TARGET_AVX2 DT_INLINE void fq_nv_scales8(const dt_fq_nv *p, const float *am, uint8_t *S,
                                                 float *k)
{
    __m256 sf;
    const __m256 in = dt_map8_avx2(p->op_in, _mm256_loadu_ps(am), _mm256_set1_ps(p->c_in));
    const __m256i c = fq_e4m3_v(in, p->zero_fix, p->table, &sf);
    _mm256_storeu_ps(k, dt_map8_avx2(p->op_k, sf, _mm256_set1_ps(p->c_k)));
    _mm_storel_epi64((__m128i *)(void *)S, fq_bytes8(c));
}

static DT_TARGET_AVX2 void fq_nv_scales_run(const dt_fq_nv *p, const float *am, size_t nb,
                                            uint8_t *S, float *k)
{
    size_t i = 0;
    for (; i + 8 <= nb; i += 8)
        fq_nv_scales8(p, am + i, S + i, k + i);
    if (i < nb) {
        float a8[8] = {0}, k8[8];
        uint8_t s8[8];
        memcpy(a8, am + i, (nb - i) * 4);
        fq_nv_scales8(p, a8, s8, k8);
        memcpy(S + i, s8, nb - i);
        memcpy(k + i, k8, (nb - i) * 4);
    }
}

/* ---- MX scale bytes ---------------------------------------------------------------------------- */

/* the scale bytes of eight amaxes (bits, canonical NaN) per mode, as mx.c's mx_byte; *mult gets
 * 2^(127 - b) (0 where b is 0xFF) */
static DT_TARGET_AVX2 DT_INLINE __m256i fq_mx_bytes8(const dt_fq_mx *m, __m256i a, __m256i *mult)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i b;
    switch (m->mode) {
    case DTCAST_SCALE_RCEIL: {
        /* d = fl32(amax * fl32(1 / max)): its exponent field, plus one when its mantissa is
         * not zero; a subnormal d gives 1 above 2^-127 (mantissa > 0x400000) */
        const __m256i d = _mm256_castps_si256(
            _mm256_mul_ps(_mm256_castsi256_ps(a), _mm256_set1_ps(m->inv_max)));
        const __m256i e = _mm256_srli_epi32(d, 23), man = _mm256_and_si256(d, fq_set1(0x7FFFFFu));
        /* e + 1 + (man == 0 ? -1 : 0) */
        const __m256i bn = _mm256_add_epi32(_mm256_add_epi32(e, fq_set1(1)),
                                            _mm256_cmpeq_epi32(man, zero));
        const __m256i bs = _mm256_and_si256(_mm256_cmpgt_epi32(man, fq_set1(0x400000u)),
                                            fq_set1(1));
        b = _mm256_min_epi32(_mm256_blendv_epi8(bn, bs, _mm256_cmpeq_epi32(e, zero)),
                             fq_set1(254));
        break;
    }
    default: {
        __m256i e; /* the exponent field the mode takes */
        if (m->mode == DTCAST_SCALE_EVEN) /* half-up at the element's mantissa width */
            e = _mm256_srli_epi32(_mm256_add_epi32(a, fq_set1(1u << (22 - m->mbits))), 23);
        else
            e = _mm256_srli_epi32(a, 23);
        /* b = clamp(e - 127 - emax, -127, 127) + 127 (ceil: + 1 where the mantissa is not 0) */
        __m256i u = _mm256_sub_epi32(e, fq_set1((uint32_t)m->emax));
        if (m->mode == DTCAST_SCALE_CEIL)
            u = _mm256_sub_epi32(_mm256_add_epi32(u, fq_set1(1)),
                                 _mm256_and_si256(_mm256_cmpeq_epi32(
                                                      _mm256_and_si256(a, fq_set1(0x7FFFFFu)), zero),
                                                  fq_set1(1)));
        b = _mm256_min_epi32(_mm256_max_epi32(u, zero), fq_set1(254));
        break;
    }
    }
    /* Inf or NaN amax: 0xFF */
    const __m256i special = _mm256_cmpgt_epi32(a, fq_set1(0x7F7FFFFFu));
    b = _mm256_blendv_epi8(b, fq_set1(0xFF), special);
    /* 2^(127 - b): exponent field 254 - b, or the subnormal 2^-127 where that is 0 */
    const __m256i ex = _mm256_sub_epi32(fq_set1(254), b);
    __m256i k = _mm256_blendv_epi8(_mm256_slli_epi32(ex, 23), fq_set1(0x00400000u),
                                   _mm256_cmpeq_epi32(ex, zero));
    *mult = _mm256_andnot_si256(special, k);
    return b;
}

static DT_TARGET_AVX2 void fq_mx_scales(const dt_fq_mx *m, const float *am, size_t n,
                                        uint8_t *bytes, float *k)
{
    size_t i = 0;
    __m256i mult;
    for (; i + 8 <= n; i += 8) {
        const __m256i b = fq_mx_bytes8(m, _mm256_loadu_si256((const __m256i *)(const void *)(am + i)),
                                       &mult);
        _mm256_storeu_si256((__m256i *)(void *)(k + i), mult);
        _mm_storel_epi64((__m128i *)(void *)(bytes + i), fq_bytes8(b));
    }
    if (i < n) {
        _Alignas(32) float a8[8] = {0}, k8[8];
        _Alignas(16) uint8_t b8[16];
        memcpy(a8, am + i, (n - i) * 4);
        const __m256i b = fq_mx_bytes8(m, _mm256_load_si256((const __m256i *)(const void *)a8),
                                       &mult);
        _mm256_store_si256((__m256i *)(void *)k8, mult);
        _mm_store_si128((__m128i *)(void *)b8, fq_bytes8(b));
        memcpy(k + i, k8, (n - i) * 4);
        memcpy(bytes + i, b8, n - i);
    }
}
#endif /* HAVE_AVX2 */

/* ---- the interface ---------------------------------------------------------------------------- */

bool dt_fq_init(dt_fq *c, const dt_quant *q, int op, size_t B, const void *x, void *codes)
{
    memset(c, 0, sizeof *c);
#ifdef HAVE_AVX2
    if (q->simple || !q->avx2 || q->p.round != DTCAST_ROUND_RNE ||
        (q->xtype != DTCAST_FLOAT32 && q->xtype != DTCAST_BFLOAT16) ||
        !(B == 16 || (B % 32 == 0 && B <= DT_QCHUNK && DT_QCHUNK % B == 0)) ||
        (q->code_bits < 8 && q->K % B)) /* sub-byte codes: rows of whole blocks */
        return false;
    for (size_t i = 0; i < sizeof fq_entries / sizeof fq_entries[0]; i++) {
        const fq_entry *e = &fq_entries[i];
        if (e->scheme != q->p.scheme || e->el != q->p.element || e->op != op ||
            e->bits != q->code_bits)
            continue;
        c->x = x;
        c->codes = codes;
        c->bf16 = q->xtype == DTCAST_BFLOAT16;
        c->xsize = c->bf16 ? 2 : 4;
        c->bits = q->code_bits;
        c->stream = q->code_bytes >= ((size_t)4 << 20); /* as dt_emit_init */
        c->fill = q->p.element == DTCAST_FLOAT8E4M3FN ? 0x7F
                  : q->p.element == DTCAST_FLOAT8E5M2 ? 0x7E
                                                      : 0;
        c->fn = c->bf16 ? e->bf16 : e->f32;
        c->fn_clean = c->bf16 ? e->bf16_clean : e->f32_clean;
        c->op = op;
        c->lim = q->p.element == DTCAST_FLOAT4E2M1 ? 7.92f : 506.88f; /* 0.99 * 2^(emax + 1) */
        c->ahead = 2 * DT_QCHUNK * c->xsize; /* 8-15 % faster than one chunk (bfloat16 MX) */
        return true;
    }
#else
    (void)q, (void)op, (void)B, (void)x, (void)codes;
#endif
    return false;
}

uint32_t dt_fq_amax(const dt_fq *c, size_t f, size_t n, size_t B, float *out)
{
#ifdef HAVE_AVX2
    const uint8_t *x = c->x + f * c->xsize;
    return c->bf16 ? fq_amax_bf16(x, n, B, out) : fq_amax_f32(x, n, B, out);
#else
    (void)c, (void)f, (void)n, (void)B, (void)out;
    return 0;
#endif
}

void dt_fq_amax_tiles(const dt_fq *c, size_t f, size_t rows, size_t K, size_t n, size_t C,
                      float *out)
{
#ifdef HAVE_AVX2
    const size_t whole = C % 32 ? 0 : n / C, stride = K * c->xsize;
    for (size_t t = 0; t < whole; t += FQ_TILES) {
        const size_t nt = whole - t < FQ_TILES ? whole - t : FQ_TILES;
        uint32_t m[FQ_TILES];
        (c->bf16 ? fq_tiles_bf16 : fq_tiles_f32)(c->x + (f + t * C) * c->xsize, rows, stride, nt,
                                                  C, m);
        memcpy(out + t, m, nt * 4);
    }
    if (whole * C < n) { /* the rest (a short last tile; every tile for C 16): row by row */
        const size_t rest = n - whole * C, nt = (rest + C - 1) / C;
        uint32_t m[DT_QCHUNK];
        float a[DT_QCHUNK];
        memset(m, 0, nt * 4);
        for (size_t r = 0; r < rows; r++) {
            (void)dt_fq_amax(c, f + r * K + whole * C, rest, C, a);
            for (size_t t = 0; t < nt; t++) /* canonical NaN > Inf > finite */
                m[t] = dt_f32_bits(a[t]) > m[t] ? dt_f32_bits(a[t]) : m[t];
        }
        memcpy(out + whole, m, nt * 4);
    }
#else
    (void)c, (void)f, (void)rows, (void)K, (void)n, (void)C, (void)out;
#endif
}

void dt_fq_codes(const dt_fq *c, size_t f, size_t n, size_t B, const float *k, const float *amax)
{
    _Alignas(64) uint8_t tmp[DT_QCHUNK];
    uint8_t *d = c->codes + f * (size_t)c->bits / 8;
#ifdef HAVE_AVX2
    const bool clean = amax && fq_chunk_clean(amax, k, (n + B - 1) / B, c->op, c->lim);
#else
    const bool clean = false;
    (void)amax;
#endif
    (clean ? c->fn_clean : c->fn)(c->stream ? tmp : d, c->x + f * c->xsize, n, B, k, c->ahead);
    if (c->stream)
        dt_copy_stream(d, tmp, n * (size_t)c->bits / 8);
}

bool dt_fq_thr_init(dt_fq_thr *t, const dt_fq *c, const float *k)
{
#ifdef HAVE_AVX2
    if (!c->fn || !c->bf16 ||
        !(c->fn == nv_mul_bf16 || c->fn == nv_div_bf16 || c->fn == nv_mo_bf16))
        return false;
    fq_thr_rows(t, k, c->op);
    return true;
#else
    (void)t, (void)c, (void)k;
    return false;
#endif
}

void dt_fq_codes_thr(const dt_fq *c, const dt_fq_thr *t, size_t f, size_t n, const float *k,
                     const float *amax, const uint8_t *S)
{
#ifdef HAVE_AVX2
    const size_t nb = n / 16;
    uint64_t neg = 0; /* a negative scale code has no row (it never comes with a clean chunk) */
    size_t b = 0;
    for (uint64_t w; b + 8 <= nb; b += 8)
        memcpy(&w, S + b, 8), neg |= w;
    for (; b < nb; b++)
        neg |= S[b];
    if (neg & UINT64_C(0x8080808080808080) || !fq_chunk_clean(amax, k, nb, c->op, c->lim)) {
        dt_fq_codes(c, f, n, 16, k, NULL);
        return;
    }
    _Alignas(64) uint8_t tmp[DT_QCHUNK];
    uint8_t *d = c->codes + f / 2;
    (c->op == DT_Q_MUL ? fq_thr_mul : c->op == DT_Q_DIV ? fq_thr_div : fq_thr_mo)(
        c->stream ? tmp : d, c->x + f * 2, nb, t, S, c->ahead);
    if (c->stream)
        dt_copy_stream(d, tmp, n / 2);
#else
    (void)t, (void)S;
    dt_fq_codes(c, f, n, 16, k, amax);
#endif
}

void dt_fq_nv_scales(const dt_fq_nv *p, const float *amax, size_t nb, uint8_t *S, float *k)
{
#ifdef HAVE_AVX2
    fq_nv_scales_run(p, amax, nb, S, k);
#else
    (void)p, (void)amax, (void)nb, (void)S, (void)k;
#endif
}

void dt_fq_mx_blocks(const dt_fq *c, const dt_fq_mx *m, size_t f, size_t nblk, uint8_t *scales)
{
#ifdef HAVE_AVX2
    float am[DT_QCHUNK / 32], k[DT_QCHUNK / 32];
    _Alignas(64) uint8_t tmp[DT_QCHUNK];
    const size_t n = nblk * 32, ob = (size_t)c->bits * 4; /* code bytes per block */
    uint8_t *d = c->codes + f * (size_t)c->bits / 8, *w = c->stream ? tmp : d;
    (void)dt_fq_amax(c, f, n, 32, am);
    fq_mx_scales(m, am, nblk, scales, k);
    c->fn(w, c->x + f * c->xsize, n, 32, k, c->ahead);
    for (size_t b = 0; b < nblk; b++) /* NaN/Inf blocks: the fill code */
        if (scales[b] == 0xFF)
            memset(w + b * ob, c->fill, ob);
    if (c->stream)
        dt_copy_stream(d, tmp, n * (size_t)c->bits / 8);
#else
    (void)c, (void)m, (void)f, (void)nblk, (void)scales;
#endif
}
