/* AVX-512 fast paths of the K-quant quantizers (fast_kquants.inc): the bytes of kquants.c's
 * reference, computed by running the reference's binary32 operations in vector lanes, one lane
 * per sub-block, never across the elements of one sub-block.
 *
 * How this stays exact. Every lane performs, in the same order, the same IEEE binary32
 * operations the scalar code performs for its sub-block: a sequential sum stays a chain of adds
 * in index order (one accumulator per lane), products keep their operand grouping (IEEE + and *
 * are commutative, so only the grouping matters), divisions and square roots are the vector
 * instructions (correctly rounded, like the scalar ones), no fused multiply-add anywhere.
 * Strict comparisons become compare masks with the same predicate; a data-dependent branch of
 * the scalar code becomes a masked blend (a lane takes the update exactly when the scalar
 * branch would be taken); a lane whose scalar code would leave early (a constant sub-block) is
 * masked out of every update. To feed lanes, a run of sub-blocks is transposed (element k of 16
 * sub-blocks in one vector).
 *
 * nearest_int. ggml's nearest_int(v) is the low 23 bits of v + 1.5*2^23, minus 2^22. For
 * |v| < 2^22 the sum lies in [2^23, 2^24), where binary32 has unit spacing: it is 1.5*2^23 plus
 * v rounded to nearest even, so (v + M) - M is the integer exactly and a clamp to [0, nmax]
 * can be applied to v + M in floating point. Outside that range (and for NaN and infinities)
 * the bits are emulated: (bits(v + M) & 0x7FFFFF) | 0x4B000000 is the float 2^23 + those 23
 * bits, i.e. M + nearest_int(v), whose clamp is again a float clamp. Each trial of the search
 * proves per lane, before computing its levels, which case holds for all elements of the lane
 * (the levels are iscale * (x - min) with x in [data min, data max]; binary32 rounding is
 * monotonic, so iscale * (data min - min) and iscale * (data max - min), rounded, bound every
 * element's product), and also whether the clamps can be skipped (every product >= -0.5 and
 * < nmax + 0.5); the cheapest variant that is exact for every active lane is used.
 *
 * The search's best levels are not copied per trial: each lane records the iscale and min its
 * kept levels were computed with, and the rare sub-block whose final scale is 0 (it keeps the
 * levels of its fit) recomputes them from those two numbers, which gives the same levels.
 *
 * Per type: Q4_K, Q5_K (make_qkx2_quants, 8 sub-blocks of 32) run 4 groups of 16 lanes in
 * lockstep (8 super-blocks; independent dependency chains hide the sequential sums' latency);
 * Q2_K (make_qkx2_quants with absolute error, 16 sub-blocks of 16) 4 super-blocks, one per
 * group; Q6_K (make_qx_quants: the trials' iscales do not depend on earlier trials, and no
 * error pass) and Q3_K (make_q3_quants: the coordinate descent, element by element, each lane
 * updating where the scalar code would, a lane stopping after a sweep without change) likewise.
 * Then each super-block's codes, fp16 scales and final levels are kquants.c's code, with the
 * final re-quantization ((x + m) / d, a true division) vectorized across its elements. Q8_K has
 * no search and is vectorized within a block.
 *
 * Speed: the search is what costs (Q4_K: 22 evaluations of 32 levels, each about 16 vector
 * operations per element: levels 4, sums 6, error 6), so a lane's work is the scalar code's
 * operation count; the vectors bring only their width (16 lanes, 2 ports). The operation count
 * cannot shrink without changing the binary32 sequence the bytes depend on.
 *
 * The searches and the steps after them are written once, over each file's vector primitives,
 * in fast_kquants_lanes.h (this file's and fast_kquants_avx2.c's); the scale codes of each type
 * are kquants.c's own (kquants_scalar.h).
 *
 * Compiled for the target through function attributes only (src/kernels/x86_attrs.h). */
#if defined(__x86_64__) && defined(__GNUC__)
#include "fast_kquants.h"
#include "../kernels/x86_attrs.h"

#include <immintrin.h>
#include <string.h>

#define FN DT_TARGET_AVX512
#define FI DT_INLINE DT_TARGET_AVX512

#define MAGIC 12582912.0f /* 1.5 * 2^23 */

/* ---- NG groups of 16 lanes, processed in lockstep (independent dependency chains) ------- */
#ifndef NG
#define NG 4
#endif
#define LANES 16  /* lanes per vector */
#define VALIGN 64 /* bytes per vector */
#define EACH _Pragma("GCC unroll 8") for (int g_ = 0; g_ < NG; ++g_)
typedef struct {
    __m512 v[NG];
} V;
typedef struct {
    __mmask16 m[NG];
} K;

static FI V v1(float c)
{
    V r;
    EACH r.v[g_] = _mm512_set1_ps(c);
    return r;
}
#define VOP2(name, f)                                                                          \
    static FI V name(V x, V y)                                                                 \
    {                                                                                          \
        V r;                                                                                   \
        EACH r.v[g_] = f(x.v[g_], y.v[g_]);                                                    \
        return r;                                                                              \
    }
VOP2(vadd, _mm512_add_ps)
VOP2(vsub, _mm512_sub_ps)
VOP2(vmul, _mm512_mul_ps)
VOP2(vdiv, _mm512_div_ps)
/* x < y ? x : y and x > y ? x : y (the second operand on ties and NaN, as the instructions) */
VOP2(vmin, _mm512_min_ps)
VOP2(vmax, _mm512_max_ps)
static FI V vabs(V x)
{
    V r;
    EACH r.v[g_] = _mm512_abs_ps(x.v[g_]);
    return r;
}
static FI V vsqrt(V x)
{
    V r;
    EACH r.v[g_] = _mm512_sqrt_ps(x.v[g_]);
    return r;
}
static FI V vneg(V x)
{
    const __m512i s = _mm512_set1_epi32((int)0x80000000u);
    V r;
    EACH r.v[g_] = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(x.v[g_]), s));
    return r;
}
/* k ? y : x per lane */
static FI V vsel(V x, K k, V y)
{
    V r;
    EACH r.v[g_] = _mm512_mask_mov_ps(x.v[g_], k.m[g_], y.v[g_]);
    return r;
}
#define VCMP(x, y, p) vcmp_##p(x, y)
#define VCMPDEF(p)                                                                             \
    static FI K vcmp_##p(V x, V y)                                                             \
    {                                                                                          \
        K r;                                                                                   \
        EACH r.m[g_] = _mm512_cmp_ps_mask(x.v[g_], y.v[g_], p);                                \
        return r;                                                                              \
    }
VCMPDEF(_CMP_GT_OQ)
VCMPDEF(_CMP_LT_OQ)
VCMPDEF(_CMP_GE_OQ)
VCMPDEF(_CMP_NLT_UQ)
VCMPDEF(_CMP_NEQ_UQ)
static FI K kand(K x, K y)
{
    K r;
    EACH r.m[g_] = (__mmask16)(x.m[g_] & y.m[g_]);
    return r;
}
static FI K kandn(K x, K y)
{
    K r;
    EACH r.m[g_] = (__mmask16)(~x.m[g_] & y.m[g_]);
    return r;
}
static FI K kall(void)
{
    K r;
    EACH r.m[g_] = 0xFFFF;
    return r;
}
static FI int kany(K x)
{
    unsigned a = 0;
    EACH a |= x.m[g_];
    return a != 0;
}
static FI K kor(K x, K y)
{
    K r;
    EACH r.m[g_] = (__mmask16)(x.m[g_] | y.m[g_]);
    return r;
}
static FI K knone(void)
{
    K r;
    EACH r.m[g_] = 0;
    return r;
}

/* ---- level computation modes ------------------------------------------------------------ */
#define LV_LO 1   /* clamp at 0 */
#define LV_HI 2   /* clamp at nmax */
#define LV_EX 4   /* emulate nearest_int's bits (|v| may reach 2^22, or NaN) */
#define LV_PERM 8 /* look the clamped level up by the low 5 bits of v + M (nmax < 16, the
                   * rounded levels within [PERM_LO, PERM_LO + 31]) */
#define PERM_LO (-8)

/* the table of LV_PERM: entry r is clamp(k, 0, nmax) for the k in [PERM_LO, PERM_LO + 31]
 * congruent to r mod 32 */
typedef struct {
    __m512 lo, hi;
} perm_tab;
/* entry r: r for r <= 15, 15 for 16..23, 0 for 24..31 (k = r - 32 < 0); nmax 15 */
static const float perm15[32] __attribute__((aligned(64))) = {
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    15, 15, 15, 15, 15, 15, 15, 15, 0, 0, 0, 0, 0, 0, 0, 0};
/* nmax 3 */
static const float perm3[32] __attribute__((aligned(64))) = {
    0, 1, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0};
static FI perm_tab perm_table(int nmax)
{
    const float *t = nmax == 3 ? perm3 : perm15;
    return (perm_tab){_mm512_load_ps(t), _mm512_load_ps(t + 16)};
}

/* clamp(nearest_int(is * (x - mn)), 0, nmax) as a float, for the lanes mode is exact for */
static FI __m512 level1(__m512 x, __m512 is, __m512 mn, int mode, float nmax, perm_tab pt)
{
    const __m512 M = _mm512_set1_ps(MAGIC);
    const __m512 d = _mm512_sub_ps(x, mn);
    const __m512 v = _mm512_mul_ps(is, d);
    __m512 t = _mm512_add_ps(v, M);
    if (mode & LV_PERM)
        return _mm512_permutex2var_ps(pt.lo, _mm512_castps_si512(t), pt.hi);
    if (mode & LV_EX)
        t = _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(t),
                                                          _mm512_set1_epi32(0x007FFFFF),
                                                          _mm512_set1_epi32(0x4B000000), 0xEA));
    if (mode & (LV_LO | LV_EX))
        t = _mm512_max_ps(t, M);
    if (mode & (LV_HI | LV_EX))
        t = _mm512_min_ps(t, _mm512_set1_ps(MAGIC + nmax));
    return _mm512_sub_ps(t, M);
}
static FI V level(V x, V is, V mn, int mode, float nmax, perm_tab pt)
{
    V r;
    EACH r.v[g_] = level1(x.v[g_], is.v[g_], mn.v[g_], mode, nmax, pt);
    return r;
}

/* ---- the levels of Q6_K's and Q3_K's searches ----------------------------------------------- */

/* clamp(nearest_int(is * x), -32, 31) as a float; the products are bounded by |is| * amax */
static FI __m512 qx_level1(__m512 x, __m512 is, int mode)
{
    const __m512 M = _mm512_set1_ps(MAGIC);
    __m512 t = _mm512_add_ps(_mm512_mul_ps(is, x), M);
    if (mode & LV_EX)
        t = _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(t),
                                                          _mm512_set1_epi32(0x007FFFFF),
                                                          _mm512_set1_epi32(0x4B000000), 0xEA));
    if (mode & (LV_LO | LV_EX))
        t = _mm512_max_ps(t, _mm512_set1_ps(MAGIC - 32.0f));
    if (mode & (LV_HI | LV_EX))
        t = _mm512_min_ps(t, _mm512_set1_ps(MAGIC + 31.0f));
    return _mm512_sub_ps(t, M);
}

/* clamp(nearest_int(q), lo, hi) as a float, any q */
static FI V nearest_float(V q, float lo, float hi)
{
    const __m512 M = _mm512_set1_ps(MAGIC);
    V r;
    EACH {
        __m512 t = _mm512_add_ps(q.v[g_], M);
        t = _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(t),
                                                          _mm512_set1_epi32(0x007FFFFF),
                                                          _mm512_set1_epi32(0x4B000000), 0xEA));
        t = _mm512_max_ps(t, _mm512_set1_ps(MAGIC + lo));
        t = _mm512_min_ps(t, _mm512_set1_ps(MAGIC + hi));
        r.v[g_] = _mm512_sub_ps(t, M);
    }
    return r;
}

/* ---- transposes ------------------------------------------------------------------------- */

/* r[j][k] -> r[k][j], 16 x 16 */
static FI void tr16(__m512 r[16])
{
    __m512 t[16];
    for (int i = 0; i < 8; ++i) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; ++i) {
        r[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    for (int i = 0; i < 4; ++i) {
        t[i] = _mm512_shuffle_f32x4(r[i], r[4 + i], 0x88);
        t[4 + i] = _mm512_shuffle_f32x4(r[i], r[4 + i], 0xDD);
        t[8 + i] = _mm512_shuffle_f32x4(r[8 + i], r[12 + i], 0x88);
        t[12 + i] = _mm512_shuffle_f32x4(r[8 + i], r[12 + i], 0xDD);
    }
    for (int i = 0; i < 8; ++i) {
        r[i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0x88);
        r[8 + i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0xDD);
    }
}

/* X[k] = element k of 16 sub-blocks of n (16 or 32) floats: group g from x + 16 n g */
static FI void load_lanes(const float *x, int n, V *X)
{
    for (int g = 0; g < NG; ++g) {
        const float *src = x + 16 * n * g;
        for (int h = 0; h < n / 16; ++h) {
            __m512 r[16];
            for (int j = 0; j < 16; ++j)
                r[j] = _mm512_loadu_ps(src + n * j + 16 * h);
            tr16(r);
            for (int k = 0; k < 16; ++k)
                X[16 * h + k].v[g] = r[k];
        }
    }
}

static FI void store_v(float *p, V v)
{
    EACH _mm512_storeu_ps(p + 16 * g_, v.v[g_]);
}

/* ---- exact nearest_int for the final pass ------------------------------------------------ */

/* clamp(nearest_int(q), lo, hi) - lo as int32 lanes, any q */
static FI __m512i nearest_code(__m512 q, int lo, int hi)
{
    const __m512 M = _mm512_set1_ps(MAGIC);
    __m512 t = _mm512_add_ps(q, M);
    t = _mm512_castsi512_ps(_mm512_ternarylogic_epi32(
        _mm512_castps_si512(t), _mm512_set1_epi32(0x007FFFFF), _mm512_set1_epi32(0x4B000000), 0xEA));
    t = _mm512_max_ps(t, _mm512_set1_ps(MAGIC + (float)lo));
    t = _mm512_min_ps(t, _mm512_set1_ps(MAGIC + (float)hi));
    return _mm512_sub_epi32(_mm512_castps_si512(t), _mm512_set1_epi32(0x4B400000 + lo));
}

/* The final levels clamp(nearest_int(q), lo, hi) - lo as bytes: of 32 elements,
 * q = (x + m) / d (lo 0), and of 16 elements, q = (x + m) / d or q = x / d */
static FI void final32m(const float *x, float mj, float dj, int nmax, uint8_t *L)
{
    const __m512 vm = _mm512_set1_ps(mj), vd = _mm512_set1_ps(dj);
    for (int h = 0; h < 2; ++h) {
        const __m512 s = _mm512_add_ps(_mm512_loadu_ps(x + 16 * h), vm);
        const __m512 q = _mm512_div_ps(s, vd);
        _mm_storeu_si128((__m128i *)(L + 16 * h), _mm512_cvtepi32_epi8(nearest_code(q, 0, nmax)));
    }
}
static FI void final16m(const float *x, float mj, float dj, int lo, int hi, uint8_t *L)
{
    const __m512 s = _mm512_add_ps(_mm512_loadu_ps(x), _mm512_set1_ps(mj));
    const __m512 q = _mm512_div_ps(s, _mm512_set1_ps(dj));
    _mm_storeu_si128((__m128i *)L, _mm512_cvtepi32_epi8(nearest_code(q, lo, hi)));
}
static FI void final16(const float *x, float dj, int lo, int hi, uint8_t *L)
{
    const __m512 q = _mm512_div_ps(_mm512_loadu_ps(x), _mm512_set1_ps(dj));
    _mm_storeu_si128((__m128i *)L, _mm512_cvtepi32_epi8(nearest_code(q, lo, hi)));
}

#include "fast_kquants_lanes.h"

/* ---- Q4_K / Q5_K: 2 NG super-blocks a chunk (NG groups of 16 sub-blocks of 32) ------------ */

CHUNK_ROWS(dt_ggml_quantize_q4_K_avx512, 144, Q45_PER, q4_chunk)
CHUNK_ROWS(dt_ggml_quantize_q5_K_avx512, 176, Q45_PER, q5_chunk)

/* ---- Q2_K ----------------------------------------------------------------------------------- */

/* NG super-blocks (NG groups of 16 sub-blocks of 16) */
static FI void q2_chunk(const float *x, uint8_t *y, const float *next)
{
    _Alignas(64) V X[16], W[16], LA[16];
    load_lanes(x, 16, X);
    for (int i = 0; i < 16; ++i)
        W[i] = vabs(X[i]);
    const fit_out f = fit_lanes(X, W, 16, 3, -0.5f, 0.1f, 15, 1, LA, (const char *)next, 16 * NG);
    _Alignas(64) float sc[16 * NG], nm[16 * NG], lis[16 * NG], lmn[16 * NG];
    store_v(sc, f.scale);
    store_v(nm, f.neg_min);
    store_v(lis, f.lis);
    store_v(lmn, f.lmn);
    for (int b = 0; b < NG; ++b)
        finish_q2(x + 256 * b, y + 84 * b, sc + 16 * b, nm + 16 * b, lis + 16 * b, lmn + 16 * b);
}

CHUNK_ROWS(dt_ggml_quantize_q2_K_avx512, 84, NG, q2_chunk)

/* ---- Q6_K: make_qx_quants(16, 32, rmse_type 1) per lane ---------------------------------- */

/* NG super-blocks (NG groups of 16 sub-blocks of 16) */
static FI void q6_chunk(const float *x, uint8_t *y, const float *next)
{
    _Alignas(64) V X[16], W2[16], WX[16];
    load_lanes(x, 16, X);
    V am, mx, bis;
    const K act = absmax_weights(X, W2, WX, &am, &mx);
    const V scale = q6_search(X, W2, WX, am, mx, act, (const char *)next, 9, &bis);
    _Alignas(64) float sc[16 * NG], bs[16 * NG];
    store_v(sc, scale);
    store_v(bs, bis);
    for (int b = 0; b < NG; ++b)
        finish_q6(x + 256 * b, y + 210 * b, sc + 16 * b, bs + 16 * b, act.m[b]);
}

CHUNK_ROWS(dt_ggml_quantize_q6_K_avx512, 210, NG, q6_chunk)

/* ---- Q3_K: make_q3_quants(16, 4, do_rmse) per lane --------------------------------------- */

/* NG super-blocks (NG groups of 16 sub-blocks of 16) */
static FI void q3_chunk(const float *x, uint8_t *y, const float *next)
{
    _Alignas(64) V X[16], W2[16], WX[16], LV[16];
    load_lanes(x, 16, X);
    if (next)
        for (int p = 0; p < 16 * NG; ++p)
            _mm_prefetch((const char *)next + 64 * p, _MM_HINT_T0);
    V am, mx;
    const K act = absmax_weights(X, W2, WX, &am, &mx);
    const V scale = q3_search(X, W2, WX, mx, act, LV);
    _Alignas(64) float sc[16 * NG];
    store_v(sc, scale);
    /* the fitted levels + 4 per sub-block (0 for an all-zero one), for the rare sub-block whose
     * final scale is 0 */
    _Alignas(64) uint8_t Lf[256 * NG];
    for (int i = 0; i < 16; ++i) {
        EACH {
            const __m512i c = _mm512_add_epi32(_mm512_cvttps_epi32(LV[i].v[g_]),
                                               _mm512_set1_epi32(4));
            const __m512i z = _mm512_maskz_mov_epi32(act.m[g_], c);
            _Alignas(16) uint8_t b[16];
            _mm_store_si128((__m128i *)b, _mm512_cvtepi32_epi8(z));
            for (int j = 0; j < 16; ++j)
                Lf[256 * g_ + 16 * j + i] = b[j];
        }
    }
    for (int b = 0; b < NG; ++b)
        finish_q3(x + 256 * b, y + 110 * b, sc + 16 * b, Lf + 256 * b);
}

CHUNK_ROWS(dt_ggml_quantize_q3_K_avx512, 110, NG, q3_chunk)

/* ---- Q8_K ----------------------------------------------------------------------------------- */

/* kquants.c's dt_ggml_quantize_q8_K: no search, so each block is vectorized across its own
 * elements (the maximum of |x| and integer sums do not depend on the order) */
FN void dt_ggml_quantize_q8_K_avx512(const float *x, uint8_t *y, size_t nb)
{
    const __m512 M = _mm512_set1_ps(MAGIC);
    for (size_t ib = 0; ib < nb; ++ib, x += 256, y += 292) {
        __m512 am = _mm512_setzero_ps();
        for (int h = 0; h < 16; ++h)
            am = _mm512_max_ps(am, _mm512_abs_ps(_mm512_loadu_ps(x + 16 * h)));
        const float amax = _mm512_reduce_max_ps(am);
        if (amax == 0.0f) {
            memset(y, 0, 292);
            continue;
        }
        /* the first element of largest |x|, with its sign */
        int idx = 0;
        const __m512 va = _mm512_set1_ps(amax);
        for (int h = 0; h < 16; ++h) {
            const __mmask16 e =
                _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(x + 16 * h)), va, _CMP_EQ_OQ);
            if (e) {
                idx = 16 * h + __builtin_ctz(e);
                break;
            }
        }
        const float iscale = -127.0f / x[idx];
        const __m512 vi = _mm512_set1_ps(iscale);
        for (int h = 0; h < 16; ++h) {
            /* nearest_int's bits, then min(127), then the low 8 bits */
            const __m512 t = _mm512_add_ps(_mm512_mul_ps(vi, _mm512_loadu_ps(x + 16 * h)), M);
            __m512i c = _mm512_sub_epi32(
                _mm512_and_si512(_mm512_castps_si512(t), _mm512_set1_epi32(0x007FFFFF)),
                _mm512_set1_epi32(0x00400000));
            c = _mm512_min_epi32(c, _mm512_set1_epi32(127));
            const __m128i q = _mm512_cvtepi32_epi8(c);
            _mm_storeu_si128((__m128i *)(y + 4 + 16 * h), q);
            const int sum = _mm512_reduce_add_epi32(_mm512_cvtepi8_epi32(q));
            dt_ggml_wr16(y + 260 + 2 * h, (uint16_t)(unsigned)sum);
        }
        dt_ggml_wr32(y, dt_ggml_bits_of(1.0f / iscale));
    }
}

#endif
