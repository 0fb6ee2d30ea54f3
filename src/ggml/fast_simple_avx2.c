/* AVX2 fast paths of the simple types' quantizers (simple.c): the reference's bytes exactly.
 *
 * The same computations as fast_simple_avx512.c (which states why each is exact) on 8 lanes:
 * blocks of 32 and 64 elements eight at a time (NVFP4: eight sub-blocks of 16), each folded to
 * one vector and the eight vectors to one vector of block extremes by a transposing tree;
 * roundf + cvttss2si as one add and cvttps2dq (NaN, infinities and |t| >= 2^31 give
 * 0x80000000). The codes keep the low byte of each 32-bit result: masked to it first, so that
 * the packs (packus_epi32, packus_epi16) never saturate. The float16 scales are vcvtps2ph to
 * nearest even (dt_ggml_fp16 for non-NaN). */
#if defined(__x86_64__) && defined(__GNUC__)
#include "fast_simple.h"
#include "../kernels/x86_attrs.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

#define FN DT_TARGET_AVX2
#define FNI static DT_INLINE DT_TARGET_AVX2

#include "fast_simple_common.h" /* prefetch, f16_store, nibbles, mx_exponent, fp4_kv, ... */

FNI __m256 vabs(__m256 v)
{
    return _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)));
}
FNI __m256 ld(const float *p)
{
    return _mm256_loadu_ps(p);
}
/* cvtt32(roundf(t)) per lane: trunc(t + copysign(0.49999997, t)) */
FNI __m256i vround_cvtt(__m256 t)
{
    const __m256 h =
        _mm256_or_ps(_mm256_and_ps(t, _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u))),
                     _mm256_castsi256_ps(_mm256_set1_epi32(0x3EFFFFFF)));
    return _mm256_cvttps_epi32(_mm256_add_ps(t, h));
}
/* 1 / d where d != 0, else 0 (no division by zero: those lanes divide 1 by 1) */
FNI __m256 vrecip_or0(__m256 d)
{
    const __m256 nz = _mm256_cmp_ps(d, _mm256_setzero_ps(), _CMP_NEQ_UQ);
    const __m256 one = _mm256_set1_ps(1.0f);
    return _mm256_and_ps(_mm256_div_ps(one, _mm256_blendv_ps(one, d, nz)), nz);
}

/* Eight vectors to one: lane k = the reduction of v[k]'s eight lanes (256 -> 128 -> 64 -> 32
 * bits per block; the last level leaves block L + 2e at lane 4L + e, put back in order). */
#define SHPS_I(a, b, imm)                                                                          \
    _mm256_castps_si256(_mm256_shuffle_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), imm))
#define PERMF(f, idx) _mm256_permutevar8x32_ps(f, idx)
#define TREE8(NAME, T, OP, P2, SHP, PERM)                                                          \
    FNI T NAME(const T *v)                                                                         \
    {                                                                                              \
        T m[4], n[2];                                                                              \
        UNROLL                                                                                     \
        for (int i = 0; i < 4; i++)                                                                \
            m[i] = OP(P2(v[2 * i], v[2 * i + 1], 0x20), P2(v[2 * i], v[2 * i + 1], 0x31));         \
        UNROLL                                                                                     \
        for (int i = 0; i < 2; i++)                                                                \
            n[i] = OP(SHP(m[2 * i], m[2 * i + 1], 0x44), SHP(m[2 * i], m[2 * i + 1], 0xEE));       \
        const T f = OP(SHP(n[0], n[1], 0x88), SHP(n[0], n[1], 0xDD));                              \
        return PERM(f, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));                                 \
    }
TREE8(tree_max, __m256, _mm256_max_ps, _mm256_permute2f128_ps, _mm256_shuffle_ps, PERMF)
TREE8(tree_min, __m256, _mm256_min_ps, _mm256_permute2f128_ps, _mm256_shuffle_ps, PERMF)
TREE8(tree_add, __m256i, _mm256_add_epi32, _mm256_permute2x128_si256, SHPS_I,
      _mm256_permutevar8x32_epi32)

FNI void f16x8(uint16_t *h, __m256 d)
{
    _mm_storeu_si128((__m128i *)(void *)h, _mm256_cvtps_ph(d, F16_RNE));
}

/* the low bytes of 4 x 8 (2 x 8) int32 lanes, in order */
FNI __m256i bytes32(__m256i a, __m256i b, __m256i c, __m256i d)
{
    const __m256i m = _mm256_set1_epi32(0xFF);
    const __m256i ab = _mm256_packus_epi32(_mm256_and_si256(a, m), _mm256_and_si256(b, m));
    const __m256i cd = _mm256_packus_epi32(_mm256_and_si256(c, m), _mm256_and_si256(d, m));
    return _mm256_permutevar8x32_epi32(_mm256_packus_epi16(ab, cd),
                                       _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}
FNI __m128i bytes16(__m256i a, __m256i b)
{
    const __m256i m = _mm256_set1_epi32(0xFF);
    const __m256i ab = _mm256_packus_epi32(_mm256_and_si256(a, m), _mm256_and_si256(b, m));
    const __m256i p = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(ab, ab),
                                                  _mm256_setr_epi32(0, 4, 1, 5, 0, 4, 1, 5));
    return _mm256_castsi256_si128(p);
}
/* bit 4 of 32 byte codes as a little-endian u32 */
FNI uint32_t bit4(__m256i c)
{
    return (uint32_t)_mm256_movemask_epi8(_mm256_slli_epi16(c, 3));
}
/* the first j < 32 with x[j] == v (one exists) */
FNI size_t first_eq(const float *x, __m256 v, int absolute)
{
    uint32_t m = 0;
    UNROLL
    for (int i = 0; i < 4; i++) {
        const __m256 a = absolute ? vabs(ld(x + 8 * i)) : ld(x + 8 * i);
        m |= (uint32_t)_mm256_movemask_ps(_mm256_cmp_ps(a, v, _CMP_EQ_OQ)) << (8 * i);
    }
    return (size_t)__builtin_ctz(m);
}
/* max |x| of 32 elements, lane-wise */
FNI __m256 amax32(const float *x)
{
    return _mm256_max_ps(_mm256_max_ps(vabs(ld(x)), vabs(ld(x + 8))),
                         _mm256_max_ps(vabs(ld(x + 16)), vabs(ld(x + 24))));
}
FNI __m256 amax_tree(const float *x, size_t g)
{
    __m256 a[8];
    prefetch(x, 128 * g);
    UNROLL
    for (size_t k = 0; k < 8; k++)
        a[k] = k < g ? amax32(x + 32 * k) : _mm256_setzero_ps();
    return tree_max(a);
}

/* ---- Q8_0 / Q8_1 --------------------------------------------------------------------------- */
FNI __m256i q8_codes(const float *x, __m256 s, __m256i *r)
{
    UNROLL
    for (int i = 0; i < 4; i++)
        r[i] = vround_cvtt(_mm256_mul_ps(ld(x + 8 * i), s));
    return bytes32(r[0], r[1], r[2], r[3]);
}

FNI void q8_0_group(const float *x, uint8_t *y, size_t g)
{
    const __m256 d = _mm256_div_ps(amax_tree(x, g), _mm256_set1_ps(127.0f));
    _Alignas(32) float ids[8];
    _Alignas(16) uint16_t dh[8];
    _mm256_store_ps(ids, vrecip_or0(d));
    f16x8(dh, d);
    for (size_t k = 0; k < g; k++) {
        __m256i r[4];
        const __m256i c = q8_codes(x + 32 * k, _mm256_set1_ps(ids[k]), r);
        memcpy(y + 34 * k, &dh[k], 2);
        _mm256_storeu_si256((__m256i *)(void *)(y + 34 * k + 2), c);
    }
}

FN void dt_ggml_quantize_q8_0_avx2(const float *x, uint8_t *y, size_t nb)
{
    size_t b = 0;
    for (; b + 8 <= nb; b += 8)
        q8_0_group(x + 32 * b, y + 34 * b, 8);
    if (b < nb)
        q8_0_group(x + 32 * b, y + 34 * b, nb - b);
}

FN void dt_ggml_quantize_q8_1_avx2(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b += 8) {
        const size_t g = nb - b < 8 ? nb - b : 8;
        const float *xb = x + 32 * b;
        const __m256 d = _mm256_div_ps(amax_tree(xb, g), _mm256_set1_ps(127.0f));
        _Alignas(32) float ids[8];
        _mm256_store_ps(ids, vrecip_or0(d));
        __m256i sums[8];
        UNROLL
        for (size_t k = 0; k < 8; k++) {
            if (k >= g) {
                sums[k] = _mm256_setzero_si256();
                continue;
            }
            __m256i r[4];
            const __m256i c = q8_codes(xb + 32 * k, _mm256_set1_ps(ids[k]), r);
            _mm256_storeu_si256((__m256i *)(void *)(y + 36 * (b + k) + 4), c);
            __m256i s = _mm256_setzero_si256();
            UNROLL
            for (int i = 0; i < 4; i++) /* the codes as signed bytes */
                s = _mm256_add_epi32(s, _mm256_srai_epi32(_mm256_slli_epi32(r[i], 24), 24));
            sums[k] = s;
        }
        _Alignas(16) uint16_t dh[8], sh[8];
        f16x8(dh, d);
        f16x8(sh, _mm256_mul_ps(_mm256_cvtepi32_ps(tree_add(sums)), d));
        for (size_t k = 0; k < g; k++) {
            memcpy(y + 36 * (b + k), &dh[k], 2);
            memcpy(y + 36 * (b + k) + 2, &sh[k], 2);
        }
    }
}

/* ---- Q4_0 / Q5_0 / Q4_1 / Q5_1 ------------------------------------------------------------- */
/* the smallest and the largest element of g <= 8 blocks of 32 (lane k: block k; 0 from g on) */
FNI void min_max8(const float *x, size_t g, __m256 *mn, __m256 *mx)
{
    __m256 lo[8], hi[8];
    prefetch(x, 128 * g);
    UNROLL
    for (size_t k = 0; k < 8; k++) {
        if (k < g) {
            const float *p = x + 32 * k;
            const __m256 a = ld(p), b = ld(p + 8), c = ld(p + 16), e = ld(p + 24);
            lo[k] = _mm256_min_ps(_mm256_min_ps(a, b), _mm256_min_ps(c, e));
            hi[k] = _mm256_max_ps(_mm256_max_ps(a, b), _mm256_max_ps(c, e));
        } else
            lo[k] = hi[k] = _mm256_setzero_ps();
    }
    *mn = tree_min(lo);
    *mx = tree_max(hi);
}

/* Q4_0 / Q5_0: d = max / div (max: the first element of largest |x|, +0 for zeros), ids = 1 / d:
 * from the largest and the smallest element, the first of largest |x| looked up where they tie
 * (fast_simple_avx512.c) */
FNI __m256 q40_scales(const float *x, size_t g, float div, float *ids)
{
    __m256 mn, mx;
    min_max8(x, g, &mn, &mx);
    const __m256 nmn = _mm256_sub_ps(_mm256_setzero_ps(), mn); /* -min, exact */
    __m256 m = _mm256_blendv_ps(mx, mn, _mm256_cmp_ps(nmn, mx, _CMP_GT_OQ));
    const unsigned tie =
        (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(nmn, mx, _CMP_EQ_OQ)) & ((1u << g) - 1u);
    if (tie) {
        _Alignas(32) float am[8];
        _mm256_store_ps(am, m);
        for (unsigned t = tie; t; t &= t - 1) {
            const size_t k = (size_t)__builtin_ctz(t);
            am[k] = am[k] != 0.0f
                        ? x[32 * k + first_eq(x + 32 * k, _mm256_set1_ps(fabsf(am[k])), 1)]
                        : 0.0f;
        }
        m = _mm256_load_ps(am);
    }
    const __m256 d = _mm256_div_ps(m, _mm256_set1_ps(div));
    _mm256_store_ps(ids, vrecip_or0(d));
    return d;
}
/* the 32 codes: low bytes of cvtt(x * id + add), at most top (signed bytes) */
FNI __m256i q40_codes(const float *x, __m256 s, float add, int top)
{
    __m256i r[4];
    UNROLL
    for (int i = 0; i < 4; i++)
        r[i] = _mm256_cvttps_epi32(
            _mm256_add_ps(_mm256_mul_ps(ld(x + 8 * i), s), _mm256_set1_ps(add)));
    return _mm256_min_epi8(bytes32(r[0], r[1], r[2], r[3]), _mm256_set1_epi8((char)top));
}

/* Q4_0 (q5 = 0) or Q5_0 (q5 = 1) */
FNI void q40_rows(const float *x, uint8_t *y, size_t nb, int q5)
{
    const size_t bytes = q5 ? 22 : 18;
    for (size_t b = 0; b < nb; b += 8) {
        const size_t g = nb - b < 8 ? nb - b : 8;
        const float *xb = x + 32 * b;
        _Alignas(32) float ids[8];
        _Alignas(16) uint16_t dh[8];
        f16x8(dh, q40_scales(xb, g, q5 ? -16.0f : -8.0f, ids));
        for (size_t k = 0; k < g; k++) {
            const __m256i c =
                q40_codes(xb + 32 * k, _mm256_set1_ps(ids[k]), q5 ? 16.5f : 8.5f, q5 ? 31 : 15);
            const __m128i lo = _mm256_castsi256_si128(c), hi = _mm256_extracti128_si256(c, 1);
            uint8_t *o = y + bytes * (b + k);
            memcpy(o, &dh[k], 2);
            if (q5) {
                const uint32_t qh = bit4(c);
                memcpy(o + 2, &qh, 4);
                _mm_storeu_si128((__m128i *)(void *)(o + 6), nibbles_masked(lo, hi));
            } else {
                _mm_storeu_si128((__m128i *)(void *)(o + 2), nibbles(lo, hi));
            }
        }
    }
}

FN void dt_ggml_quantize_q4_0_avx2(const float *x, uint8_t *y, size_t nb)
{
    q40_rows(x, y, nb, 0);
}

FN void dt_ggml_quantize_q5_0_avx2(const float *x, uint8_t *y, size_t nb)
{
    q40_rows(x, y, nb, 1);
}

/* Q4_1 / Q5_1: min and max as the reference's first-wins comparisons give them (a zero extreme
 * has the sign of the block's first zero), d = (max - min) / div; mn, ids = 1 / d */
FNI __m256 q41_scales(const float *x, size_t g, float div, float *mn, float *ids)
{
    __m256 vmn, vmx;
    min_max8(x, g, &vmn, &vmx);
    const __m256 z = _mm256_setzero_ps();
    const unsigned zero =
        (unsigned)_mm256_movemask_ps(
            _mm256_or_ps(_mm256_cmp_ps(vmn, z, _CMP_EQ_OQ), _mm256_cmp_ps(vmx, z, _CMP_EQ_OQ))) &
        ((1u << g) - 1u);
    if (zero) {
        _Alignas(32) float a[8], b[8];
        _mm256_store_ps(a, vmn);
        _mm256_store_ps(b, vmx);
        for (unsigned m = zero; m; m &= m - 1) {
            const size_t k = (size_t)__builtin_ctz(m);
            const float first = x[32 * k + first_eq(x + 32 * k, z, 0)];
            if (a[k] == 0.0f)
                a[k] = first;
            if (b[k] == 0.0f)
                b[k] = first;
        }
        vmn = _mm256_load_ps(a);
        vmx = _mm256_load_ps(b);
    }
    const __m256 d = _mm256_div_ps(_mm256_sub_ps(vmx, vmn), _mm256_set1_ps(div));
    _mm256_store_ps(mn, vmn);
    _mm256_store_ps(ids, vrecip_or0(d));
    return d;
}
/* the 32 codes: low bytes of cvtt((x - mn) * id + 0.5) */
FNI __m256i q41_codes(const float *x, __m256 mn, __m256 s)
{
    __m256i r[4];
    UNROLL
    for (int i = 0; i < 4; i++)
        r[i] = _mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(ld(x + 8 * i), mn), s),
                                                 _mm256_set1_ps(0.5f)));
    return bytes32(r[0], r[1], r[2], r[3]);
}

/* Q4_1 (q5 = 0: the codes at most 15) or Q5_1 (q5 = 1: no clamp, as the reference) */
FNI void q41_rows(const float *x, uint8_t *y, size_t nb, int q5)
{
    const size_t bytes = q5 ? 24 : 20;
    for (size_t b = 0; b < nb; b += 8) {
        const size_t g = nb - b < 8 ? nb - b : 8;
        const float *xb = x + 32 * b;
        _Alignas(32) float mn[8], ids[8];
        _Alignas(16) uint16_t dh[8], mh[8];
        f16x8(dh, q41_scales(xb, g, q5 ? 31.0f : 15.0f, mn, ids));
        f16x8(mh, _mm256_load_ps(mn));
        for (size_t k = 0; k < g; k++) {
            __m256i c = q41_codes(xb + 32 * k, _mm256_set1_ps(mn[k]), _mm256_set1_ps(ids[k]));
            if (!q5)
                c = _mm256_min_epi8(c, _mm256_set1_epi8(15));
            const __m128i lo = _mm256_castsi256_si128(c), hi = _mm256_extracti128_si256(c, 1);
            uint8_t *o = y + bytes * (b + k);
            memcpy(o, &dh[k], 2);
            memcpy(o + 2, &mh[k], 2);
            if (q5) {
                const uint32_t qh = bit4(c);
                memcpy(o + 4, &qh, 4);
                _mm_storeu_si128((__m128i *)(void *)(o + 8), nibbles_masked(lo, hi));
            } else {
                _mm_storeu_si128((__m128i *)(void *)(o + 4), nibbles(lo, hi));
            }
        }
    }
}

FN void dt_ggml_quantize_q4_1_avx2(const float *x, uint8_t *y, size_t nb)
{
    q41_rows(x, y, nb, 0);
}

FN void dt_ggml_quantize_q5_1_avx2(const float *x, uint8_t *y, size_t nb)
{
    q41_rows(x, y, nb, 1);
}

/* ---- TQ2_0 / TQ1_0 ------------------------------------------------------------------------- */
FNI float amax256(const float *x, float *id)
{
    prefetch(x, 1024);
    __m256 m[4];
    UNROLL
    for (int i = 0; i < 4; i++)
        m[i] = vabs(ld(x + 8 * i));
    UNROLL
    for (int j = 4; j < 32; j++)
        m[j % 4] = _mm256_max_ps(m[j % 4], vabs(ld(x + 8 * j)));
    __m256 v = _mm256_max_ps(_mm256_max_ps(m[0], m[1]), _mm256_max_ps(m[2], m[3]));
    __m128 w = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    w = _mm_max_ps(w, _mm_movehl_ps(w, w));
    w = _mm_max_ss(w, _mm_shuffle_ps(w, w, 1));
    const float d = _mm_cvtss_f32(w);
    *id = d != 0.0f ? 1.0f / d : 0.0f;
    return d;
}
/* lround(x * id) + 1 in the low bits (lround_plus1's value mod 2^32: NaN, infinities and
 * |v| >= 2^31 give 0x80000001, whose low bits are its 1) */
FNI __m256i trit(const float *x, __m256 id)
{
    return _mm256_add_epi32(vround_cvtt(_mm256_mul_ps(ld(x), id)), _mm256_set1_epi32(1));
}

FN void dt_ggml_quantize_tq2_0_avx2(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b++, x += 256, y += 66) {
        float ids;
        const float d = amax256(x, &ids);
        const __m256 id = _mm256_set1_ps(ids);
        const __m256i three = _mm256_set1_epi32(3);
        UNROLL
        for (int g = 0; g < 2; g++) {
            __m256i q[4];
            UNROLL
            for (int h = 0; h < 4; h++) {
                const float *p = x + 128 * g + 8 * h;
                __m256i v = _mm256_and_si256(trit(p, id), three);
                v = _mm256_or_si256(
                    v, _mm256_slli_epi32(_mm256_and_si256(trit(p + 32, id), three), 2));
                v = _mm256_or_si256(
                    v, _mm256_slli_epi32(_mm256_and_si256(trit(p + 64, id), three), 4));
                q[h] = _mm256_or_si256(
                    v, _mm256_slli_epi32(_mm256_and_si256(trit(p + 96, id), three), 6));
            }
            _mm256_storeu_si256((__m256i *)(void *)(y + 32 * g), bytes32(q[0], q[1], q[2], q[3]));
        }
        f16_store(y + 64, d);
    }
}

FNI __m256i horner3(__m256i n, __m256i t)
{
    return _mm256_add_epi32(_mm256_add_epi32(n, _mm256_slli_epi32(n, 1)), t);
}
/* floor(((n & 0xFF) * 256 + 242) / 243) (fast_simple_avx512.c: the binary32 quotient truncates
 * right); the caller keeps the low byte */
FNI __m256i tq1_pack(__m256i n)
{
    const __m256i a = _mm256_add_epi32(
        _mm256_slli_epi32(_mm256_and_si256(n, _mm256_set1_epi32(0xFF)), 8), _mm256_set1_epi32(242));
    return _mm256_cvttps_epi32(_mm256_div_ps(_mm256_cvtepi32_ps(a), _mm256_set1_ps(243.0f)));
}

FN void dt_ggml_quantize_tq1_0_avx2(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b++, x += 256, y += 54) {
        float ids;
        const float d = amax256(x, &ids);
        const __m256 id = _mm256_set1_ps(ids);
        __m256i p[4];
        UNROLL
        for (int h = 0; h < 4; h++) { /* bytes m < 32: elements m + 32k */
            __m256i n = trit(x + 8 * h, id);
            UNROLL
            for (int k = 1; k < 5; k++)
                n = horner3(n, trit(x + 32 * k + 8 * h, id));
            p[h] = tq1_pack(n);
        }
        _mm256_storeu_si256((__m256i *)(void *)y, bytes32(p[0], p[1], p[2], p[3]));
        UNROLL
        for (int h = 0; h < 2; h++) { /* bytes 32 + m: elements 160 + m + 16k */
            __m256i n = trit(x + 160 + 8 * h, id);
            UNROLL
            for (int k = 1; k < 5; k++)
                n = horner3(n, trit(x + 160 + 16 * k + 8 * h, id));
            p[h] = tq1_pack(n);
        }
        _mm_storeu_si128((__m128i *)(void *)(y + 32), bytes16(p[0], p[1]));
        /* qh byte j: elements 240 + j + 4k (k = 0..3), then n * 3 */
        const __m256i t0 = trit(x + 240, id), t1 = trit(x + 248, id);
        __m256i q = _mm256_permute2x128_si256(t0, t0, 0x00);
        q = horner3(q, _mm256_permute2x128_si256(t0, t0, 0x11));
        q = horner3(q, _mm256_permute2x128_si256(t1, t1, 0x00));
        q = horner3(q, _mm256_permute2x128_si256(t1, t1, 0x11));
        q = tq1_pack(horner3(q, _mm256_setzero_si256()));
        const uint32_t qh = (uint32_t)_mm_cvtsi128_si32(bytes16(q, q));
        memcpy(y + 48, &qh, 4);
        f16_store(y + 52, d);
    }
}

/* ---- MXFP4 / NVFP4 (fast_simple_avx512.c: the reduction to |x| and the thresholds) --------- */
FNI __m256i fp4_codes(__m256 x, const __m256 *c)
{
    const __m256 a = vabs(x);
    __m256 best = a;
    __m256i idx = _mm256_setzero_si256();
    UNROLL
    for (int i = 1; i < 8; i++) {
        const __m256 err = vabs(_mm256_sub_ps(c[i], a));
        const __m256 lt = _mm256_cmp_ps(err, best, _CMP_LT_OQ);
        best = _mm256_blendv_ps(best, err, lt);
        idx = _mm256_blendv_epi8(idx, _mm256_set1_epi32(i), _mm256_castps_si256(lt));
    }
    const __m256i neg =
        _mm256_andnot_si256(_mm256_cmpeq_epi32(idx, _mm256_setzero_si256()),
                            _mm256_castps_si256(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ)));
    return _mm256_or_si256(idx, _mm256_and_si256(neg, _mm256_set1_epi32(8)));
}
FNI __m256i fp4_codes_mid(__m256 x, const __m256 *m)
{
    const __m256 a = vabs(x);
    __m256i idx = _mm256_setzero_si256();
    UNROLL
    for (int i = 1; i < 8; i++) /* + 1 where a > m[i] (the compare is -1) */
        idx = _mm256_sub_epi32(idx, _mm256_castps_si256(_mm256_cmp_ps(a, m[i], _CMP_GT_OQ)));
    const __m256i neg =
        _mm256_andnot_si256(_mm256_cmpeq_epi32(idx, _mm256_setzero_si256()),
                            _mm256_castps_si256(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ)));
    return _mm256_or_si256(idx, _mm256_and_si256(neg, _mm256_set1_epi32(8)));
}
FNI bool fp4_consts(float d, float amax, __m256 *c)
{
    const bool fast = fp4_thresholds_hold(d, amax);
    UNROLL
    for (int i = 1; i < 8; i++)
        c[i] = _mm256_set1_ps((fast ? fp4_mid[i] : fp4_kv[i]) * d);
    return fast;
}
FNI __m256i fp4_any(__m256 x, const __m256 *c, bool fast)
{
    return fast ? fp4_codes_mid(x, c) : fp4_codes(x, c);
}

/* the exponent bytes of 8 amax (mx_exponent): ex - 2 (low 8 bits) for a normal amax whose
 * mantissa is below 2 - 2^-11, 0 for amax = 0, the reference's path for the others */
FNI __m256i mx_exponents(__m256 am)
{
    const __m256i u = _mm256_castps_si256(am), ex = _mm256_srli_epi32(u, 23); /* am >= 0 */
    const __m256i pos = _mm256_castps_si256(_mm256_cmp_ps(am, _mm256_setzero_ps(), _CMP_GT_OQ));
    const __m256i odd =
        _mm256_or_si256(_mm256_cmpeq_epi32(ex, _mm256_setzero_si256()),
                        _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7FFFFF)),
                                           _mm256_set1_epi32(0x7FEFFF)));
    const unsigned slow =
        (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_and_si256(pos, odd)));
    __m256i e = _mm256_and_si256(
        _mm256_and_si256(_mm256_sub_epi32(ex, _mm256_set1_epi32(2)), _mm256_set1_epi32(0xFF)), pos);
    if (slow) {
        _Alignas(32) float a[8];
        _Alignas(32) uint32_t v[8];
        _mm256_store_ps(a, am);
        _mm256_store_si256((__m256i *)(void *)v, e);
        for (unsigned m = slow; m; m &= m - 1)
            v[__builtin_ctz(m)] = mx_exponent(a[__builtin_ctz(m)]);
        e = _mm256_load_si256((const __m256i *)(const void *)v);
    }
    return e;
}
/* MXFP4's codes from u = |x| * (2 / d), exact (fast_simple_avx512.c, fp4_codes_tab): the count
 * of the thresholds 1, 3, 5, 7, 10, 14, 20 below u, by ceil(u) (at most 31), + 8 for x < 0
 * where not 0. The index ceil(u) + 32 sign per lane; fp4_lookup maps 32 of them (bytes). */
FNI __m256i fp4_index(__m256 x, __m256 two_id)
{
    const __m256 u = _mm256_mul_ps(vabs(x), two_id);
    const __m256i j =
        _mm256_min_epi32(_mm256_cvttps_epi32(_mm256_ceil_ps(u)), _mm256_set1_epi32(31));
    return _mm256_or_si256(
        j, _mm256_srli_epi32(
               _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32((int)0x80000000u)), 26));
}
FNI __m256i fp4_lookup(__m256i i)
{
#define T16(...) _mm256_setr_epi8(__VA_ARGS__, __VA_ARGS__)
    const __m256i t0 = T16(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 4, 5, 5, 5, 5, 6);
    const __m256i t1 = T16(6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7);
    const __m256i t2 = T16(0, 0, 9, 9, 10, 10, 11, 11, 12, 12, 12, 13, 13, 13, 13, 14);
    const __m256i t3 = T16(14, 14, 14, 14, 14, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15);
#undef T16
    const __m256i b4 = _mm256_slli_epi16(i, 3),
                  b5 = _mm256_slli_epi16(i, 2); /* bits 4, 5 -> bit 7 */
    const __m256i lo =
        _mm256_blendv_epi8(_mm256_shuffle_epi8(t0, i), _mm256_shuffle_epi8(t1, i), b4);
    const __m256i hi =
        _mm256_blendv_epi8(_mm256_shuffle_epi8(t2, i), _mm256_shuffle_epi8(t3, i), b4);
    return _mm256_blendv_epi8(lo, hi, b5);
}

FN void dt_ggml_quantize_mxfp4_avx2(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b += 8) {
        const size_t g = nb - b < 8 ? nb - b : 8;
        const float *xb = x + 32 * b;
        _Alignas(32) float am[8], tid[8];
        _Alignas(32) uint32_t ev[8];
        const __m256 vam = amax_tree(xb, g);
        const __m256i e = mx_exponents(vam);
        _mm256_store_ps(am, vam);
        _mm256_store_si256((__m256i *)(void *)ev, e);
        /* 2 / d = 2^(129 - e), a binary32 for e >= 2 (the thresholds for 2 <= e <= 252: above,
         * 8 d overflows, fast_simple_avx512.c) */
        _mm256_store_si256((__m256i *)(void *)tid,
                           _mm256_slli_epi32(_mm256_sub_epi32(_mm256_set1_epi32(256), e), 23));
        for (size_t k = 0; k < g; k++) {
            const float *p = xb + 32 * k;
            __m256i q;
            if (ev[k] >= 2 && ev[k] <= 252) {
                const __m256 two_id = _mm256_set1_ps(tid[k]);
                q = fp4_lookup(bytes32(fp4_index(ld(p), two_id), fp4_index(ld(p + 8), two_id),
                                       fp4_index(ld(p + 16), two_id),
                                       fp4_index(ld(p + 24), two_id)));
            } else {
                __m256 c[8];
                const bool fast = fp4_consts(e8m0_half(ev[k]), am[k], c);
                q = bytes32(fp4_any(ld(p), c, fast), fp4_any(ld(p + 8), c, fast),
                            fp4_any(ld(p + 16), c, fast), fp4_any(ld(p + 24), c, fast));
            }
            uint8_t *o = y + 17 * (b + k);
            o[0] = (uint8_t)ev[k];
            _mm_storeu_si128((__m128i *)(void *)(o + 1),
                             _mm_or_si128(_mm256_castsi256_si128(q),
                                          _mm_slli_epi16(_mm256_extracti128_si256(q, 1), 4)));
        }
    }
}

/* simple.c's ue4m3_round(v) and ue4m3_value(code) * 0.5 of 8 lanes (fast_simple_avx512.c) */
FNI __m256i ue4m3_round_v(__m256 v, __m256 *half)
{
    const __m256i pos = _mm256_castps_si256(_mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_GT_OQ));
    v = _mm256_min_ps(v, _mm256_set1_ps(448.0f));
    const __m256i u = _mm256_castps_si256(v);
    const __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(u, 23), _mm256_set1_epi32(120));
    __m256i c = _mm256_add_epi32(
        _mm256_or_si256(_mm256_slli_epi32(e, 3),
                        _mm256_and_si256(_mm256_srli_epi32(u, 20), _mm256_set1_epi32(7))),
        _mm256_and_si256(_mm256_srli_epi32(u, 19), _mm256_set1_epi32(1)));
    c = _mm256_blendv_epi8(c, _mm256_set1_epi32(0x7E),
                           _mm256_cmpgt_epi32(c, _mm256_set1_epi32(119)));
    const __m256i m =
        _mm256_min_epi32(_mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(v, _mm256_set1_ps(512.0f)),
                                                           _mm256_set1_ps(0.5f))),
                         _mm256_set1_epi32(7));
    c = _mm256_blendv_epi8(c, m, _mm256_cmpgt_epi32(_mm256_set1_epi32(1), e));
    c = _mm256_and_si256(c, pos);
    const __m256i ce = _mm256_srli_epi32(c, 3), cm = _mm256_and_si256(c, _mm256_set1_epi32(7));
    const __m256 sub = _mm256_mul_ps(_mm256_cvtepi32_ps(cm), _mm256_set1_ps(0x1p-9f));
    const __m256 nrm = _mm256_castsi256_ps(
        _mm256_or_si256(_mm256_slli_epi32(_mm256_add_epi32(ce, _mm256_set1_epi32(120)), 23),
                        _mm256_slli_epi32(cm, 20)));
    *half = _mm256_mul_ps(
        _mm256_blendv_ps(nrm, sub,
                         _mm256_castsi256_ps(_mm256_cmpeq_epi32(ce, _mm256_setzero_si256()))),
        _mm256_set1_ps(0.5f));
    return c;
}

FN void dt_ggml_quantize_nvfp4_avx2(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b += 2) {
        const size_t g = nb - b < 2 ? nb - b : 2; /* blocks of 64: 4 g sub-blocks of 16 */
        const float *xb = x + 64 * b;
        __m256 a[8];
        prefetch(xb, 256 * g);
        UNROLL
        for (size_t s = 0; s < 8; s++)
            a[s] = s < 4 * g ? _mm256_max_ps(vabs(ld(xb + 16 * s)), vabs(ld(xb + 16 * s + 8)))
                             : _mm256_setzero_ps();
        const __m256 am = tree_max(a);
        __m256 d;
        _Alignas(32) uint32_t code[8];
        _mm256_store_si256((__m256i *)(void *)code,
                           ue4m3_round_v(_mm256_div_ps(am, _mm256_set1_ps(6.0f)), &d));
        /* per sub-block: the thresholds (fp4_codes_mid) where they hold, else the values */
        const __m256 fast = _mm256_andnot_ps(
            _mm256_cmp_ps(am, _mm256_mul_ps(_mm256_set1_ps(0x1p20f), d), _CMP_GT_OQ),
            _mm256_cmp_ps(d, _mm256_setzero_ps(), _CMP_GT_OQ));
        const unsigned fm = (unsigned)_mm256_movemask_ps(fast);
        _Alignas(32) float t[8][8];
        UNROLL
        for (int i = 1; i < 8; i++)
            _mm256_store_ps(t[i], _mm256_mul_ps(_mm256_blendv_ps(_mm256_set1_ps(fp4_kv[i]),
                                                                 _mm256_set1_ps(fp4_mid[i]), fast),
                                                d));
        for (size_t s = 0; s < 4 * g; s++) {
            __m256 c[8];
            UNROLL
            for (int i = 1; i < 8; i++)
                c[i] = _mm256_set1_ps(t[i][s]);
            const bool f = fm >> s & 1;
            const __m128i q =
                bytes16(fp4_any(ld(xb + 16 * s), c, f), fp4_any(ld(xb + 16 * s + 8), c, f));
            uint8_t *o = y + 36 * (b + s / 4);
            o[s % 4] = (uint8_t)code[s];
            _mm_storel_epi64((__m128i *)(void *)(o + 4 + 8 * (s % 4)),
                             _mm_or_si128(q, _mm_slli_epi16(_mm_srli_si128(q, 8), 4)));
        }
    }
}

/* ---- Q2_0 / Q1_0 --------------------------------------------------------------------------- */
/* 8 codes clamp(cvtt(roundf(x * id)), -1, 2) + 1 */
FNI __m256i q2_codes(const float *x, __m256 id)
{
    const __m256i r = vround_cvtt(_mm256_mul_ps(ld(x), id));
    return _mm256_add_epi32(
        _mm256_min_epi32(_mm256_max_epi32(r, _mm256_set1_epi32(-1)), _mm256_set1_epi32(2)),
        _mm256_set1_epi32(1));
}
/* 32 codes (bytes) -> 8 lanes q0 + 4 q1 + 16 q2 + 64 q3 */
FNI __m256i q2_pack(__m256i c)
{
    return _mm256_madd_epi16(_mm256_maddubs_epi16(c, _mm256_set1_epi16(0x0401)),
                             _mm256_set1_epi32(0x00100001));
}

FN void dt_ggml_quantize_q2_0_avx2(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b += 8) {
        const size_t g = nb - b < 8 ? nb - b : 8;
        const float *xb = x + 64 * b;
        __m256 a[8];
        prefetch(xb, 256 * g);
        UNROLL
        for (size_t k = 0; k < 8; k++)
            a[k] = k < g ? _mm256_max_ps(amax32(xb + 64 * k), amax32(xb + 64 * k + 32))
                         : _mm256_setzero_ps();
        const __m256 amax = tree_max(a);
        _Alignas(32) float ids[8];
        _Alignas(16) uint16_t dh[8];
        _mm256_store_ps(ids, vrecip_or0(amax)); /* amax >= 0: amax > 0 is amax != 0 */
        f16x8(dh, amax);
        for (size_t k = 0; k < g; k++) {
            const float *p = xb + 64 * k;
            const __m256 s = _mm256_set1_ps(ids[k]);
            const __m256i lo = q2_pack(bytes32(q2_codes(p, s), q2_codes(p + 8, s),
                                               q2_codes(p + 16, s), q2_codes(p + 24, s)));
            const __m256i hi = q2_pack(bytes32(q2_codes(p + 32, s), q2_codes(p + 40, s),
                                               q2_codes(p + 48, s), q2_codes(p + 56, s)));
            uint8_t *o = y + 18 * (b + k);
            memcpy(o, &dh[k], 2);
            _mm_storeu_si128((__m128i *)(void *)(o + 2), bytes16(lo, hi));
        }
    }
}

FN void dt_ggml_quantize_q1_0_avx2(const float *x, uint8_t *y, size_t nb)
{
    const __m256i idx = _mm256_setr_epi32(0, 128, 256, 384, 512, 640, 768, 896);
    for (size_t b = 0; b < nb; b += 8) {
        const size_t g = nb - b < 8 ? nb - b : 8;
        const float *xb = x + 128 * b;
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        const __m256 live =
            _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)g), lane));
        prefetch(xb, 512 * g);
        /* lane k: block k's sum of |x|, in order (the reference's sequential sum) */
        __m256 sum = _mm256_setzero_ps();
        for (size_t j = 0; j < 128; j++)
            sum = _mm256_add_ps(
                sum, vabs(_mm256_mask_i32gather_ps(_mm256_setzero_ps(), xb + j, idx, live, 4)));
        _Alignas(16) uint16_t dh[8];
        f16x8(dh, _mm256_div_ps(sum, _mm256_set1_ps(128.0f)));
        for (size_t k = 0; k < g; k++) {
            uint8_t *o = y + 18 * (b + k);
            memcpy(o, &dh[k], 2);
            UNROLL
            for (int i = 0; i < 16; i++)
                o[2 + i] = (uint8_t)_mm256_movemask_ps(
                    _mm256_cmp_ps(ld(xb + 128 * k + 8 * i), _mm256_setzero_ps(), _CMP_GE_OQ));
        }
    }
}

#else
typedef int dt_fast_simple_avx2_unused; /* not an x86-64 GNU C build: nothing here */
#endif
