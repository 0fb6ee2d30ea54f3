/* AVX-512 fast paths of the simple types' quantizers (simple.c): the reference's bytes exactly.
 *
 * Every value is computed as the reference computes it, one binary32 operation at a time in its
 * order (no fused multiply-add; the divisions are divisions). Blocks of 32 and 64 elements go
 * sixteen at a time (NVFP4: sixteen sub-blocks of 16): each block's vectors are folded to one
 * vector, and the sixteen vectors to one vector of sixteen block extremes by a transposing tree
 * (max and min are order-free for finite input, but for the sign of a zero; the first-element
 * rules are applied apart: Q4_0/Q5_0's signed max from the max and the min, the first largest
 * |x| looked up where both signs reach it; Q4_1/Q5_1's zero extremes take the sign of the
 * block's first zero). TQ1_0/TQ2_0 go one 256-element block at a time; Q1_0's sums of |x| stay
 * sequential (one block per lane, gathered).
 *
 * roundf (ties away from zero) then the truncating conversion is one add and cvttps2dq:
 * trunc(t + copysign(0.5 - 2^-25, t)) = roundf(t) for every finite t (the sum rounds to an
 * integer only where roundf does), and NaN, infinities and |t| >= 2^31 give 0x80000000 as
 * cvttss2si does (equal to cvtt32(roundf(t)) on all 2^32 inputs); the codes keep the low byte
 * (vpmovdb truncates), as the reference's cvtt_i8 / cvtt_u8. The float16 scales are vcvtps2ph
 * to nearest even, which is dt_ggml_fp16 for every non-NaN value (the scales of finite input
 * are never NaN). */
#if defined(__x86_64__) && defined(__GNUC__)
#include "fast_simple.h"
#include "../kernels/x86_attrs.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

#define FN DT_TARGET_AVX512
#define FNI static DT_INLINE DT_TARGET_AVX512

#include "fast_simple_common.h" /* prefetch, f16_store, nibbles, mx_exponent, fp4_kv, ... */

FNI __m512 vabs(__m512 v)
{
    return _mm512_castsi512_ps(
        _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7FFFFFFF)));
}
/* cvtt32(roundf(t)) per lane: trunc(t + copysign(0.49999997, t)) */
FNI __m512i vround_cvtt(__m512 t)
{
    const __m512i h =
        _mm512_ternarylogic_epi32(_mm512_castps_si512(t), _mm512_set1_epi32((int)0x80000000u),
                                  _mm512_set1_epi32(0x3EFFFFFF), 0xEA); /* (t & sign) | h */
    return _mm512_cvttps_epi32(_mm512_add_ps(t, _mm512_castsi512_ps(h)));
}
/* 1 / d where d != 0, else 0 */
FNI __m512 vrecip_or0(__m512 d)
{
    const __mmask16 nz = _mm512_cmp_ps_mask(d, _mm512_setzero_ps(), _CMP_NEQ_UQ);
    return _mm512_maskz_div_ps(nz, _mm512_set1_ps(1.0f), d);
}

/* Sixteen vectors to one: lane k = the reduction of v[k]'s sixteen lanes. Four levels, each
 * halving the lanes per block (512 -> 256 -> 128 -> 64 -> 32 bits); the last leaves block
 * L + 4e at lane 4L + e, which the final permutation puts back in order. */
#define TREE16(NAME, T, OP, SH4, SHP, PERM)                                                        \
    FNI T NAME(const T *v)                                                                         \
    {                                                                                              \
        T m[8], n[4], o[2];                                                                        \
        UNROLL                                                                                     \
        for (int i = 0; i < 8; i++)                                                                \
            m[i] = OP(SH4(v[2 * i], v[2 * i + 1], 0x44), SH4(v[2 * i], v[2 * i + 1], 0xEE));       \
        UNROLL                                                                                     \
        for (int i = 0; i < 4; i++)                                                                \
            n[i] = OP(SH4(m[2 * i], m[2 * i + 1], 0x88), SH4(m[2 * i], m[2 * i + 1], 0xDD));       \
        UNROLL                                                                                     \
        for (int i = 0; i < 2; i++)                                                                \
            o[i] = OP(SHP(n[2 * i], n[2 * i + 1], 0x44), SHP(n[2 * i], n[2 * i + 1], 0xEE));       \
        const T f = OP(SHP(o[0], o[1], 0x88), SHP(o[0], o[1], 0xDD));                              \
        const __m512i idx =                                                                        \
            _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);               \
        return PERM(idx, f);                                                                       \
    }
#define SHPS_I(a, b, imm)                                                                          \
    _mm512_castps_si512(_mm512_shuffle_ps(_mm512_castsi512_ps(a), _mm512_castsi512_ps(b), imm))
TREE16(tree_max, __m512, _mm512_max_ps, _mm512_shuffle_f32x4, _mm512_shuffle_ps,
       _mm512_permutexvar_ps)
TREE16(tree_min, __m512, _mm512_min_ps, _mm512_shuffle_f32x4, _mm512_shuffle_ps,
       _mm512_permutexvar_ps)
TREE16(tree_add, __m512i, _mm512_add_epi32, _mm512_shuffle_i32x4, SHPS_I, _mm512_permutexvar_epi32)

/* the float16 scales of sixteen blocks, to be written one by one */
FNI void f16x16(uint16_t *h, __m512 d)
{
    _mm256_storeu_si256((__m256i *)(void *)h, _mm512_cvtps_ph(d, F16_RNE));
}

/* ---- Q8_0 / Q8_1 --------------------------------------------------------------------------- */
/* g <= 16 blocks of 32 at x: their d = amax / 127 (and 1 / d) */
FNI void q8_scales(const float *x, size_t g, __m512 *d, __m512 *id)
{
    __m512 a[16];
    prefetch(x, 128 * g);
    UNROLL
    for (size_t k = 0; k < 16; k++)
        a[k] = k < g ? _mm512_max_ps(vabs(_mm512_loadu_ps(x + 32 * k)),
                                     vabs(_mm512_loadu_ps(x + 32 * k + 16)))
                     : _mm512_setzero_ps();
    *d = _mm512_div_ps(tree_max(a), _mm512_set1_ps(127.0f));
    *id = vrecip_or0(*d);
}

FNI void q8_0_group(const float *x, uint8_t *y, size_t g)
{
    __m512 d, id;
    q8_scales(x, g, &d, &id);
    _Alignas(64) float ids[16];
    _Alignas(32) uint16_t dh[16];
    _mm512_store_ps(ids, id);
    f16x16(dh, d);
    for (size_t k = 0; k < g; k++) {
        const __m512 s = _mm512_set1_ps(ids[k]);
        const __m512i r0 = vround_cvtt(_mm512_mul_ps(_mm512_loadu_ps(x + 32 * k), s));
        const __m512i r1 = vround_cvtt(_mm512_mul_ps(_mm512_loadu_ps(x + 32 * k + 16), s));
        uint8_t *o = y + 34 * k;
        memcpy(o, &dh[k], 2);
        _mm_storeu_si128((__m128i *)(void *)(o + 2), _mm512_cvtepi32_epi8(r0));
        _mm_storeu_si128((__m128i *)(void *)(o + 18), _mm512_cvtepi32_epi8(r1));
    }
}

FN void dt_ggml_quantize_q8_0_avx512(const float *x, uint8_t *y, size_t nb)
{
    size_t b = 0;
    for (; b + 16 <= nb; b += 16)
        q8_0_group(x + 32 * b, y + 34 * b, 16);
    if (b < nb)
        q8_0_group(x + 32 * b, y + 34 * b, nb - b);
}

/* ---- Q4_0 / Q5_0 / Q4_1 / Q5_1 ------------------------------------------------------------- */
/* the smallest and the largest element of g <= 16 blocks of 32 (lane k: block k; 0 from g on) */
FNI void min_max16(const float *x, size_t g, __m512 *mn, __m512 *mx)
{
    __m512 lo[16], hi[16];
    prefetch(x, 128 * g);
    UNROLL
    for (size_t k = 0; k < 16; k++) {
        if (k < g) {
            const __m512 a = _mm512_loadu_ps(x + 32 * k), b = _mm512_loadu_ps(x + 32 * k + 16);
            lo[k] = _mm512_min_ps(a, b);
            hi[k] = _mm512_max_ps(a, b);
        } else
            lo[k] = hi[k] = _mm512_setzero_ps();
    }
    *mn = tree_min(lo);
    *mx = tree_max(hi);
}

/* Q4_0 / Q5_0, g <= 16 blocks of 32: d = max / div (max: the first element of largest |x|, +0
 * when all are zeros) and 1 / d. From the largest and the smallest element: the one of larger
 * magnitude is max; where they have the same magnitude (both signs reach it, or all zeros) the
 * first such element is looked up. */
FNI void q40_scales(const float *x, size_t g, float div, __m512 *d, __m512 *id)
{
    __m512 mn, mx;
    min_max16(x, g, &mn, &mx);
    const __m512 nmn = _mm512_sub_ps(_mm512_setzero_ps(), mn); /* -min, exact */
    __m512 m = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(nmn, mx, _CMP_GT_OQ), mx, mn);
    const __mmask16 tie = (__mmask16)(_mm512_cmp_ps_mask(nmn, mx, _CMP_EQ_OQ) & ((1u << g) - 1u));
    if (tie) {
        _Alignas(64) float am[16];
        _mm512_store_ps(am, m);
        for (unsigned t = tie; t; t &= t - 1) {
            const size_t k = (size_t)__builtin_ctz(t);
            const __m512 v = _mm512_set1_ps(fabsf(am[k]));
            const uint32_t l = _mm512_cmp_ps_mask(vabs(_mm512_loadu_ps(x + 32 * k)), v, _CMP_EQ_OQ);
            const uint32_t h =
                _mm512_cmp_ps_mask(vabs(_mm512_loadu_ps(x + 32 * k + 16)), v, _CMP_EQ_OQ);
            am[k] = am[k] != 0.0f ? x[32 * k + (size_t)__builtin_ctz(l | h << 16)] : 0.0f;
        }
        m = _mm512_load_ps(am);
    }
    *d = _mm512_div_ps(m, _mm512_set1_ps(div));
    *id = vrecip_or0(*d);
}

/* the codes of 16 elements: the low byte of cvtt(x * id + add), at most top (signed bytes) */
FNI __m128i q40_codes(const float *x, __m512 id, float add, int top)
{
    const __m512 t = _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(x), id), _mm512_set1_ps(add));
    return _mm_min_epi8(_mm512_cvtepi32_epi8(_mm512_cvttps_epi32(t)), _mm_set1_epi8((char)top));
}

/* bit 4 of 32 codes (16 + 16) as a little-endian u32 */
FNI uint32_t bit4(__m128i lo, __m128i hi)
{
    const __m128i b = _mm_set1_epi8(0x10);
    return (uint32_t)_mm_test_epi8_mask(lo, b) | (uint32_t)_mm_test_epi8_mask(hi, b) << 16;
}

/* g <= 16 blocks of Q4_0 (q5 = 0) or Q5_0 (q5 = 1) */
FNI void q40_group(const float *x, uint8_t *y, size_t g, int q5)
{
    const float add = q5 ? 16.5f : 8.5f;
    const int top = q5 ? 31 : 15;
    __m512 d, id;
    q40_scales(x, g, q5 ? -16.0f : -8.0f, &d, &id);
    _Alignas(64) float ids[16];
    _Alignas(32) uint16_t dh[16];
    _mm512_store_ps(ids, id);
    f16x16(dh, d);
    for (size_t k = 0; k < g; k++) {
        const __m512 s = _mm512_set1_ps(ids[k]);
        const __m128i c0 = q40_codes(x + 32 * k, s, add, top),
                      c1 = q40_codes(x + 32 * k + 16, s, add, top);
        uint8_t *o = y + (q5 ? 22 : 18) * k;
        memcpy(o, &dh[k], 2);
        if (q5) {
            const uint32_t qh = bit4(c0, c1);
            memcpy(o + 2, &qh, 4);
            _mm_storeu_si128((__m128i *)(void *)(o + 6), nibbles_masked(c0, c1));
        } else {
            _mm_storeu_si128((__m128i *)(void *)(o + 2), nibbles(c0, c1));
        }
    }
}
FNI void q40_rows(const float *x, uint8_t *y, size_t nb, int q5)
{
    const size_t bytes = q5 ? 22 : 18;
    size_t b = 0;
    for (; b + 16 <= nb; b += 16)
        q40_group(x + 32 * b, y + bytes * b, 16, q5);
    if (b < nb)
        q40_group(x + 32 * b, y + bytes * b, nb - b, q5);
}

FN void dt_ggml_quantize_q4_0_avx512(const float *x, uint8_t *y, size_t nb)
{
    q40_rows(x, y, nb, 0);
}

FN void dt_ggml_quantize_q5_0_avx512(const float *x, uint8_t *y, size_t nb)
{
    q40_rows(x, y, nb, 1);
}

/* Q4_1 / Q5_1, g <= 16 blocks of 32: min and max as the reference's first-wins comparisons give
 * them (a zero extreme has the sign of the block's first zero), d = (max - min) / div, 1 / d */
FNI void q41_scales(const float *x, size_t g, float div, float *mn, float *id, __m512 *d)
{
    __m512 vmn, vmx;
    min_max16(x, g, &vmn, &vmx);
    const __m512 z = _mm512_setzero_ps();
    const __mmask16 zero = (__mmask16)((_mm512_cmp_ps_mask(vmn, z, _CMP_EQ_OQ) |
                                        _mm512_cmp_ps_mask(vmx, z, _CMP_EQ_OQ)) &
                                       ((1u << g) - 1u));
    if (zero) {
        _Alignas(64) float a[16], b[16];
        _mm512_store_ps(a, vmn);
        _mm512_store_ps(b, vmx);
        for (unsigned m = zero; m; m &= m - 1) {
            const size_t k = (size_t)__builtin_ctz(m);
            const uint32_t l = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + 32 * k), z, _CMP_EQ_OQ);
            const uint32_t h = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + 32 * k + 16), z, _CMP_EQ_OQ);
            const float first = x[32 * k + (size_t)__builtin_ctz(l | h << 16)];
            if (a[k] == 0.0f)
                a[k] = first;
            if (b[k] == 0.0f)
                b[k] = first;
        }
        vmn = _mm512_load_ps(a);
        vmx = _mm512_load_ps(b);
    }
    *d = _mm512_div_ps(_mm512_sub_ps(vmx, vmn), _mm512_set1_ps(div));
    _mm512_store_ps(mn, vmn);
    _mm512_store_ps(id, vrecip_or0(*d));
}

/* the low bytes of cvtt((x - mn) * id + 0.5) of 16 elements */
FNI __m128i q41_codes(const float *x, __m512 mn, __m512 id)
{
    const __m512 t = _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(x), mn), id),
                                   _mm512_set1_ps(0.5f));
    return _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(t));
}

/* Q4_1 (q5 = 0: the codes at most 15) or Q5_1 (q5 = 1: no clamp, as the reference) */
FNI void q41_rows(const float *x, uint8_t *y, size_t nb, int q5)
{
    const size_t bytes = q5 ? 24 : 20;
    for (size_t b = 0; b < nb; b += 16) {
        const size_t g = nb - b < 16 ? nb - b : 16;
        const float *xb = x + 32 * b;
        _Alignas(64) float mn[16], ids[16];
        _Alignas(32) uint16_t dh[16], mh[16];
        __m512 d;
        q41_scales(xb, g, q5 ? 31.0f : 15.0f, mn, ids, &d);
        f16x16(dh, d);
        f16x16(mh, _mm512_load_ps(mn));
        for (size_t k = 0; k < g; k++) {
            const __m512 m = _mm512_set1_ps(mn[k]), s = _mm512_set1_ps(ids[k]);
            __m128i c0 = q41_codes(xb + 32 * k, m, s), c1 = q41_codes(xb + 32 * k + 16, m, s);
            uint8_t *o = y + bytes * (b + k);
            memcpy(o, &dh[k], 2);
            memcpy(o + 2, &mh[k], 2);
            if (q5) {
                const uint32_t qh = bit4(c0, c1);
                memcpy(o + 4, &qh, 4);
                _mm_storeu_si128((__m128i *)(void *)(o + 8), nibbles_masked(c0, c1));
            } else {
                const __m128i top = _mm_set1_epi8(15);
                c0 = _mm_min_epi8(c0, top);
                c1 = _mm_min_epi8(c1, top);
                _mm_storeu_si128((__m128i *)(void *)(o + 4), nibbles(c0, c1));
            }
        }
    }
}

FN void dt_ggml_quantize_q4_1_avx512(const float *x, uint8_t *y, size_t nb)
{
    q41_rows(x, y, nb, 0);
}

FN void dt_ggml_quantize_q5_1_avx512(const float *x, uint8_t *y, size_t nb)
{
    q41_rows(x, y, nb, 1);
}

/* ---- Q8_1: Q8_0's codes at offset 4, s = fp16(d * the sum of the (signed byte) codes) ------ */
FN void dt_ggml_quantize_q8_1_avx512(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b += 16) {
        const size_t g = nb - b < 16 ? nb - b : 16;
        const float *xb = x + 32 * b;
        __m512 d, id;
        q8_scales(xb, g, &d, &id);
        _Alignas(64) float ids[16];
        _mm512_store_ps(ids, id);
        __m512i sums[16];
        UNROLL
        for (size_t k = 0; k < 16; k++) {
            if (k >= g) {
                sums[k] = _mm512_setzero_si512();
                continue;
            }
            const __m512 s = _mm512_set1_ps(ids[k]);
            const __m512i r0 = vround_cvtt(_mm512_mul_ps(_mm512_loadu_ps(xb + 32 * k), s));
            const __m512i r1 = vround_cvtt(_mm512_mul_ps(_mm512_loadu_ps(xb + 32 * k + 16), s));
            uint8_t *o = y + 36 * (b + k);
            _mm_storeu_si128((__m128i *)(void *)(o + 4), _mm512_cvtepi32_epi8(r0));
            _mm_storeu_si128((__m128i *)(void *)(o + 20), _mm512_cvtepi32_epi8(r1));
            sums[k] = _mm512_add_epi32(_mm512_srai_epi32(_mm512_slli_epi32(r0, 24), 24),
                                       _mm512_srai_epi32(_mm512_slli_epi32(r1, 24), 24));
        }
        _Alignas(32) uint16_t dh[16], sh[16];
        f16x16(dh, d);
        f16x16(sh, _mm512_mul_ps(_mm512_cvtepi32_ps(tree_add(sums)), d));
        for (size_t k = 0; k < g; k++) {
            memcpy(y + 36 * (b + k), &dh[k], 2);
            memcpy(y + 36 * (b + k) + 2, &sh[k], 2);
        }
    }
}

/* ---- TQ2_0 / TQ1_0: trits round(x / amax) + 1 ---------------------------------------------- */
/* d = amax of 256 elements, and 1 / d */
FNI float amax256(const float *x, float *id)
{
    prefetch(x, 1024);
    __m512 m[4];
    UNROLL
    for (int i = 0; i < 4; i++)
        m[i] = vabs(_mm512_loadu_ps(x + 16 * i));
    UNROLL
    for (int j = 4; j < 16; j++)
        m[j % 4] = _mm512_max_ps(m[j % 4], vabs(_mm512_loadu_ps(x + 16 * j)));
    const float d =
        _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(m[0], m[1]), _mm512_max_ps(m[2], m[3])));
    *id = d != 0.0f ? 1.0f / d : 0.0f;
    return d;
}
/* lround(x * id) + 1 in the low bits (what lround_plus1 gives mod 2^32 for every input: NaN,
 * infinities and |v| >= 2^31 give 0x80000001, whose low bits are lround_plus1's 1) */
FNI __m512i trit(const float *x, __m512 id)
{
    return _mm512_add_epi32(vround_cvtt(_mm512_mul_ps(_mm512_loadu_ps(x), id)),
                            _mm512_set1_epi32(1));
}

FN void dt_ggml_quantize_tq2_0_avx512(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b++, x += 256, y += 66) {
        float ids;
        const float d = amax256(x, &ids);
        const __m512 id = _mm512_set1_ps(ids);
        const __m512i three = _mm512_set1_epi32(3);
        UNROLL
        for (int g = 0; g < 2; g++)
            UNROLL
        for (int h = 0; h < 2; h++) {
            const float *p = x + 128 * g + 16 * h;
            __m512i q = _mm512_and_si512(trit(p, id), three);
            q = _mm512_or_si512(q, _mm512_slli_epi32(_mm512_and_si512(trit(p + 32, id), three), 2));
            q = _mm512_or_si512(q, _mm512_slli_epi32(_mm512_and_si512(trit(p + 64, id), three), 4));
            q = _mm512_or_si512(q, _mm512_slli_epi32(_mm512_and_si512(trit(p + 96, id), three), 6));
            _mm_storeu_si128((__m128i *)(void *)(y + 32 * g + 16 * h), _mm512_cvtepi32_epi8(q));
        }
        f16_store(y + 64, d);
    }
}

/* n * 3 + t (the low 8 bits are the reference's (n * 3 + t) & 0xFF) */
FNI __m512i horner3(__m512i n, __m512i t)
{
    return _mm512_add_epi32(_mm512_add_epi32(n, _mm512_slli_epi32(n, 1)), t);
}
/* ceil(n * 256 / 243) = floor(((n & 0xFF) * 256 + 242) / 243): the binary32 quotient of the
 * exact integers (< 2^16) is never within 1/243 of the next integer, so it truncates right */
FNI __m128i tq1_pack(__m512i n)
{
    const __m512i a = _mm512_add_epi32(
        _mm512_slli_epi32(_mm512_and_si512(n, _mm512_set1_epi32(0xFF)), 8), _mm512_set1_epi32(242));
    return _mm512_cvtepi32_epi8(
        _mm512_cvttps_epi32(_mm512_div_ps(_mm512_cvtepi32_ps(a), _mm512_set1_ps(243.0f))));
}

FN void dt_ggml_quantize_tq1_0_avx512(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b++, x += 256, y += 54) {
        float ids;
        const float d = amax256(x, &ids);
        const __m512 id = _mm512_set1_ps(ids);
        UNROLL
        for (int h = 0; h < 2; h++) { /* bytes m < 32: elements m + 32k */
            __m512i n = trit(x + 16 * h, id);
            UNROLL
            for (int k = 1; k < 5; k++)
                n = horner3(n, trit(x + 32 * k + 16 * h, id));
            _mm_storeu_si128((__m128i *)(void *)(y + 16 * h), tq1_pack(n));
        }
        __m512i n = trit(x + 160, id); /* bytes 32 + m: elements 160 + m + 16k */
        UNROLL
        for (int k = 1; k < 5; k++)
            n = horner3(n, trit(x + 160 + 16 * k, id));
        _mm_storeu_si128((__m128i *)(void *)(y + 32), tq1_pack(n));
        /* qh byte j: elements 240 + j + 4k (k = 0..3), then n * 3 */
        const __m512i t = trit(x + 240, id);
        __m512i q = _mm512_shuffle_i32x4(t, t, 0x00);
        q = horner3(q, _mm512_shuffle_i32x4(t, t, 0x55));
        q = horner3(q, _mm512_shuffle_i32x4(t, t, 0xAA));
        q = horner3(q, _mm512_shuffle_i32x4(t, t, 0xFF));
        q = horner3(q, _mm512_setzero_si512());
        const uint32_t qh = (uint32_t)_mm_cvtsi128_si32(tq1_pack(q));
        memcpy(y + 48, &qh, 4);
        f16_store(y + 52, d);
    }
}

/* ---- MXFP4 / NVFP4: the first nearest of the e2m1 values (doubled) under a half-scale d ------ */
/* The code of 16 elements: the reference tries the 16 values in order and keeps the first
 * strictly smaller |kv * d - x|. For x >= 0 no negative value is ever strictly nearer than 0
 * (|-v d - x| = v d + x rounds to >= x = the error of 0), nor for x < 0 a positive one, and
 * the negative ones' errors are the positive ones' for |x| (exact negation): so the search of
 * 1..7 on |x|, and 8 + that index for x < 0 (0 stays 0). c[i] = kv[i] * d. */
FNI __m512i fp4_codes(__m512 x, const __m512 *c)
{
    const __m512 a = vabs(x);
    __m512 best = a;
    __m512i idx = _mm512_setzero_si512();
    UNROLL
    for (int i = 1; i < 8; i++) {
        const __m512 err = vabs(_mm512_sub_ps(c[i], a));
        const __mmask16 lt = _mm512_cmp_ps_mask(err, best, _CMP_LT_OQ);
        best = _mm512_mask_mov_ps(best, lt, err);
        idx = _mm512_mask_mov_epi32(idx, lt, _mm512_set1_epi32(i));
    }
    const __mmask16 neg = _mm512_mask_cmp_ps_mask(_mm512_test_epi32_mask(idx, idx), x,
                                                  _mm512_setzero_ps(), _CMP_LT_OQ);
    return _mm512_mask_or_epi32(idx, neg, idx, _mm512_set1_epi32(8));
}
/* The same by thresholds, where the errors are exact: for a between kv[i-1] d and kv[i] d both
 * differences are exact (Sterbenz: kv[i] <= 2 kv[i-1]; for i = 1 a in [d/2, d]), so kv[i] is
 * strictly nearer iff a > (kv[i-1] + kv[i]) d / 2 (a tie keeps the first); below kv[i-1] d it
 * never is, above kv[i] d always unless |a| is so large that a - kv[i] d and a - kv[i-1] d round
 * alike (ruled out by amax <= 2^20 d; the callers take fp4_codes otherwise, for d = 0, and
 * for d > 2^124, where 12 d or 8 d overflows and the reference never picks that value: its
 * error is infinite). The code is then the count of the thresholds m[i] = mid[i] * d below a. */
FNI __m512i fp4_codes_mid(__m512 x, const __m512 *m)
{
    const __m512 a = vabs(x);
    const __m512i one = _mm512_set1_epi32(1);
    __m512i idx = _mm512_setzero_si512();
    UNROLL
    for (int i = 1; i < 8; i++)
        idx = _mm512_mask_add_epi32(idx, _mm512_cmp_ps_mask(a, m[i], _CMP_GT_OQ), idx, one);
    const __mmask16 neg = _mm512_mask_cmp_ps_mask(_mm512_test_epi32_mask(idx, idx), x,
                                                  _mm512_setzero_ps(), _CMP_LT_OQ);
    return _mm512_mask_or_epi32(idx, neg, idx, _mm512_set1_epi32(8));
}
/* c[i] = kv[i] * d (mid: the midpoints (kv[i-1] + kv[i]) / 2 * d) for i = 1..7; whether the
 * thresholds hold (0 < d <= 2^124, amax <= 2^20 d) */
FNI bool fp4_consts(float d, float amax, __m512 *c)
{
    const bool fast = fp4_thresholds_hold(d, amax);
    UNROLL
    for (int i = 1; i < 8; i++)
        c[i] = _mm512_set1_ps((fast ? fp4_mid[i] : fp4_kv[i]) * d);
    return fast;
}

/* MXFP4's codes by table: d is a power of two, so u = |x| * (2 / d) is exact (a product that
 * underflows is below 2^-126, code 0 either way) and the thresholds (fp4_codes_mid) become
 * u > 1, 3, 5, 7, 10, 14, 20. u < 32 (amax < 16 d, or d far above amax where the exponent
 * wrapped), so ceil(u), at most 31, indexes the count of those below u. For e <= 252 only:
 * above, 8 d overflows (e = 253: amax within 2^-17 of 2^128, whose log2 rounds to 128) and the
 * reference never picks the infinite values; those blocks take fp4_codes. */
FNI __m512i fp4_codes_tab(__m512 x, __m512 two_id)
{
    const __m512i t0 = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 4, 5, 5, 5, 5, 6);
    const __m512i t1 = _mm512_setr_epi32(6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7);
    const __m512 u = _mm512_mul_ps(vabs(x), two_id);
    const __m512i j =
        _mm512_min_epi32(_mm512_cvt_roundps_epi32(u, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC),
                         _mm512_set1_epi32(31));
    const __m512i t = _mm512_permutex2var_epi32(t0, j, t1);
    const __mmask16 neg =
        _mm512_mask_test_epi32_mask(_mm512_movepi32_mask(_mm512_castps_si512(x)), t, t);
    return _mm512_mask_or_epi32(t, neg, t, _mm512_set1_epi32(8));
}

/* the exponent bytes of 16 amax (mx_exponent): ex - 2 (low 8 bits) for a normal amax whose
 * mantissa is below 2 - 2^-11, 0 for amax = 0, the reference's path for the others */
FNI __m512i mx_exponents(__m512 am)
{
    const __m512i u = _mm512_castps_si512(am), ex = _mm512_srli_epi32(u, 23); /* am >= 0 */
    const __mmask16 pos = _mm512_cmp_ps_mask(am, _mm512_setzero_ps(), _CMP_GT_OQ);
    const __mmask16 slow =
        (__mmask16)(pos & (_mm512_cmpeq_epi32_mask(ex, _mm512_setzero_si512()) |
                           _mm512_cmpgt_epi32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7FFFFF)),
                                                   _mm512_set1_epi32(0x7FEFFF))));
    __m512i e = _mm512_maskz_and_epi32(pos, _mm512_sub_epi32(ex, _mm512_set1_epi32(2)),
                                       _mm512_set1_epi32(0xFF));
    if (slow) {
        _Alignas(64) float a[16];
        _Alignas(64) uint32_t v[16];
        _mm512_store_ps(a, am);
        _mm512_store_si512(v, e);
        for (unsigned m = slow; m; m &= m - 1)
            v[__builtin_ctz(m)] = mx_exponent(a[__builtin_ctz(m)]);
        e = _mm512_load_si512(v);
    }
    return e;
}

FN void dt_ggml_quantize_mxfp4_avx512(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b += 16) {
        const size_t g = nb - b < 16 ? nb - b : 16;
        const float *xb = x + 32 * b;
        __m512 a[16];
        prefetch(xb, 128 * g);
        UNROLL
        for (size_t k = 0; k < 16; k++)
            a[k] = k < g ? _mm512_max_ps(vabs(_mm512_loadu_ps(xb + 32 * k)),
                                         vabs(_mm512_loadu_ps(xb + 32 * k + 16)))
                         : _mm512_setzero_ps();
        _Alignas(64) float am[16], tid[16];
        _Alignas(64) uint32_t ev[16];
        const __m512 vam = tree_max(a);
        const __m512i e = mx_exponents(vam);
        _mm512_store_ps(am, vam);
        _mm512_store_si512(ev, e);
        /* 2 / d = 2^(129 - e), a binary32 for e >= 2 (the table for 2 <= e <= 252) */
        _mm512_store_si512(tid, _mm512_slli_epi32(_mm512_sub_epi32(_mm512_set1_epi32(256), e), 23));
        for (size_t k = 0; k < g; k++) {
            const __m512 x0 = _mm512_loadu_ps(xb + 32 * k), x1 = _mm512_loadu_ps(xb + 32 * k + 16);
            __m512i c0, c1;
            if (ev[k] >= 2 && ev[k] <= 252) {
                const __m512 two_id = _mm512_set1_ps(tid[k]);
                c0 = fp4_codes_tab(x0, two_id);
                c1 = fp4_codes_tab(x1, two_id);
            } else {
                __m512 c[8];
                if (fp4_consts(e8m0_half(ev[k]), am[k], c)) {
                    c0 = fp4_codes_mid(x0, c);
                    c1 = fp4_codes_mid(x1, c);
                } else {
                    c0 = fp4_codes(x0, c);
                    c1 = fp4_codes(x1, c);
                }
            }
            uint8_t *o = y + 17 * (b + k);
            o[0] = (uint8_t)ev[k];
            _mm_storeu_si128((__m128i *)(void *)(o + 1),
                             _mm_or_si128(_mm512_cvtepi32_epi8(c0),
                                          _mm_slli_epi16(_mm512_cvtepi32_epi8(c1), 4)));
        }
    }
}

/* simple.c's ue4m3_round(v) and ue4m3_value(code) * 0.5 of 16 lanes: above 0, v clamped to 448; the
 * normal range's code (e << 3 | top 3 mantissa bits) + the next bit (a carry moves to the
 * exponent), 0x7E from exponent 15 on; below 2^-6, (int)(v * 512 + 0.5) at most 7 */
FNI __m512i ue4m3_round_v(__m512 v, __m512 *half)
{
    const __mmask16 pos = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GT_OQ);
    v = _mm512_min_ps(v, _mm512_set1_ps(448.0f));
    const __m512i u = _mm512_castps_si512(v);
    const __m512i e = _mm512_sub_epi32(_mm512_srli_epi32(u, 23), _mm512_set1_epi32(120));
    __m512i c = _mm512_add_epi32(
        _mm512_or_si512(_mm512_slli_epi32(e, 3),
                        _mm512_and_si512(_mm512_srli_epi32(u, 20), _mm512_set1_epi32(7))),
        _mm512_and_si512(_mm512_srli_epi32(u, 19), _mm512_set1_epi32(1)));
    c = _mm512_mask_mov_epi32(c, _mm512_cmpge_epi32_mask(c, _mm512_set1_epi32(120)),
                              _mm512_set1_epi32(0x7E));
    const __m512i m =
        _mm512_min_epi32(_mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(v, _mm512_set1_ps(512.0f)),
                                                           _mm512_set1_ps(0.5f))),
                         _mm512_set1_epi32(7));
    c = _mm512_mask_mov_epi32(c, _mm512_cmple_epi32_mask(e, _mm512_setzero_si512()), m);
    c = _mm512_maskz_mov_epi32(pos, c);
    /* the value: m * 2^-9 for exponent 0, else (1 + m / 8) * 2^(e - 7); halved */
    const __m512i ce = _mm512_srli_epi32(c, 3), cm = _mm512_and_si512(c, _mm512_set1_epi32(7));
    const __m512 sub = _mm512_mul_ps(_mm512_cvtepi32_ps(cm), _mm512_set1_ps(0x1p-9f));
    const __m512 nrm = _mm512_castsi512_ps(
        _mm512_or_si512(_mm512_slli_epi32(_mm512_add_epi32(ce, _mm512_set1_epi32(120)), 23),
                        _mm512_slli_epi32(cm, 20)));
    *half = _mm512_mul_ps(
        _mm512_mask_blend_ps(_mm512_cmpeq_epi32_mask(ce, _mm512_setzero_si512()), nrm, sub),
        _mm512_set1_ps(0.5f));
    return c;
}

FN void dt_ggml_quantize_nvfp4_avx512(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b += 4) {
        const size_t g = nb - b < 4 ? nb - b : 4; /* blocks of 64: 4 g sub-blocks of 16 */
        const float *xb = x + 64 * b;
        __m512 a[16];
        prefetch(xb, 256 * g);
        UNROLL
        for (size_t s = 0; s < 16; s++)
            a[s] = s < 4 * g ? vabs(_mm512_loadu_ps(xb + 16 * s)) : _mm512_setzero_ps();
        const __m512 am = tree_max(a);
        __m512 d;
        _Alignas(64) uint32_t code[16];
        _mm512_store_si512(code, ue4m3_round_v(_mm512_div_ps(am, _mm512_set1_ps(6.0f)), &d));
        /* per sub-block: the thresholds (fp4_codes_mid) where they hold, else the values */
        const __mmask16 fast =
            (__mmask16)(_mm512_cmp_ps_mask(d, _mm512_setzero_ps(), _CMP_GT_OQ) &
                        ~_mm512_cmp_ps_mask(am, _mm512_mul_ps(_mm512_set1_ps(0x1p20f), d),
                                            _CMP_GT_OQ));
        _Alignas(64) float t[8][16];
        UNROLL
        for (int i = 1; i < 8; i++)
            _mm512_store_ps(t[i],
                            _mm512_mul_ps(_mm512_mask_blend_ps(fast, _mm512_set1_ps(fp4_kv[i]),
                                                               _mm512_set1_ps(fp4_mid[i])),
                                          d));
        for (size_t s = 0; s < 4 * g; s++) {
            __m512 c[8];
            UNROLL
            for (int i = 1; i < 8; i++)
                c[i] = _mm512_set1_ps(t[i][s]);
            const __m512 v = _mm512_loadu_ps(xb + 16 * s);
            const __m128i q =
                _mm512_cvtepi32_epi8(fast >> s & 1 ? fp4_codes_mid(v, c) : fp4_codes(v, c));
            uint8_t *o = y + 36 * (b + s / 4);
            o[s % 4] = (uint8_t)code[s];
            _mm_storel_epi64((__m128i *)(void *)(o + 4 + 8 * (s % 4)),
                             _mm_or_si128(q, _mm_slli_epi16(_mm_srli_si128(q, 8), 4)));
        }
    }
}

/* ---- Q2_0: clamp(round(x / amax) + 1, 0, 3), four to a byte; Q1_0: sign bits, d = mean |x| --- */
/* the codes of 16 elements: clamp(cvtt(roundf(x * id)), -1, 2) + 1 as bytes */
FNI __m128i q2_codes(const float *x, __m512 id)
{
    const __m512i r = vround_cvtt(_mm512_mul_ps(_mm512_loadu_ps(x), id));
    return _mm512_cvtepi32_epi8(_mm512_add_epi32(
        _mm512_min_epi32(_mm512_max_epi32(r, _mm512_set1_epi32(-1)), _mm512_set1_epi32(2)),
        _mm512_set1_epi32(1)));
}

FN void dt_ggml_quantize_q2_0_avx512(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b += 16) {
        const size_t g = nb - b < 16 ? nb - b : 16;
        const float *xb = x + 64 * b;
        __m512 a[16];
        prefetch(xb, 256 * g);
        UNROLL
        for (size_t k = 0; k < 16; k++) {
            if (k < g) {
                const float *p = xb + 64 * k;
                a[k] = _mm512_max_ps(
                    _mm512_max_ps(vabs(_mm512_loadu_ps(p)), vabs(_mm512_loadu_ps(p + 16))),
                    _mm512_max_ps(vabs(_mm512_loadu_ps(p + 32)), vabs(_mm512_loadu_ps(p + 48))));
            } else
                a[k] = _mm512_setzero_ps();
        }
        const __m512 amax = tree_max(a);
        const __mmask16 pos = _mm512_cmp_ps_mask(amax, _mm512_setzero_ps(), _CMP_GT_OQ);
        _Alignas(64) float ids[16];
        _Alignas(32) uint16_t dh[16];
        _mm512_store_ps(ids, _mm512_maskz_div_ps(pos, _mm512_set1_ps(1.0f), amax));
        f16x16(dh, amax);
        for (size_t k = 0; k < g; k++) {
            const float *p = xb + 64 * k;
            const __m512 s = _mm512_set1_ps(ids[k]);
            __m512i q = _mm512_castsi128_si512(q2_codes(p, s));
            q = _mm512_inserti32x4(q, q2_codes(p + 16, s), 1);
            q = _mm512_inserti32x4(q, q2_codes(p + 32, s), 2);
            q = _mm512_inserti32x4(q, q2_codes(p + 48, s), 3);
            /* bytes q0..q3 of each 4 -> q0 + 4 q1 + 16 q2 + 64 q3 */
            const __m512i w = _mm512_madd_epi16(_mm512_maddubs_epi16(q, _mm512_set1_epi16(0x0401)),
                                                _mm512_set1_epi32(0x00100001));
            uint8_t *o = y + 18 * (b + k);
            memcpy(o, &dh[k], 2);
            _mm_storeu_si128((__m128i *)(void *)(o + 2), _mm512_cvtepi32_epi8(w));
        }
    }
}

FN void dt_ggml_quantize_q1_0_avx512(const float *x, uint8_t *y, size_t nb)
{
    const __m512i idx =
        _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                           _mm512_set1_epi32(128));
    for (size_t b = 0; b < nb; b += 16) {
        const size_t g = nb - b < 16 ? nb - b : 16;
        const float *xb = x + 128 * b;
        const __mmask16 live = (__mmask16)((1u << g) - 1u);
        prefetch(xb, 512 * g);
        /* lane k: block k's sum of |x|, in order (the reference's sequential sum) */
        __m512 sum = _mm512_setzero_ps();
        for (size_t j = 0; j < 128; j++)
            sum = _mm512_add_ps(
                sum, vabs(_mm512_mask_i32gather_ps(_mm512_setzero_ps(), live, idx, xb + j, 4)));
        _Alignas(32) uint16_t dh[16];
        f16x16(dh, _mm512_div_ps(sum, _mm512_set1_ps(128.0f)));
        for (size_t k = 0; k < g; k++) {
            uint8_t *o = y + 18 * (b + k);
            memcpy(o, &dh[k], 2);
            UNROLL
            for (int i = 0; i < 8; i++) {
                const uint16_t m = _mm512_cmp_ps_mask(_mm512_loadu_ps(xb + 128 * k + 16 * i),
                                                      _mm512_setzero_ps(), _CMP_GE_OQ);
                memcpy(o + 2 + 2 * i, &m, 2);
            }
        }
    }
}

#else
typedef int dt_fast_simple_avx512_unused; /* not an x86-64 GNU C build: nothing here */
#endif
