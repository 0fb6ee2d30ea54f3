/* AVX2 fast paths of the K-quant quantizers (fast_kquants.inc): the bytes of kquants.c's
 * reference, computed by running the reference's binary32 operations in vector lanes, one lane
 * per sub-block. The method, and why it is exact, is fast_kquants_avx512.c's (read its opening
 * comment); this file is the same algorithm on 8 lanes, with vector masks for mask registers,
 * (bits & 0x7FFFFF) | 0x4B000000 as two operations instead of one ternary-logic instruction,
 * and the clamps of the levels always as max / min (no two-table permute). The searches and the
 * steps after them are fast_kquants_lanes.h's, over this file's primitives.
 *
 * Compiled for the target through function attributes only (src/kernels/x86_attrs.h). */
#if defined(__x86_64__) && defined(__GNUC__)
#include "fast_kquants.h"
#include "../kernels/x86_attrs.h"

#include <immintrin.h>
#include <string.h>

#define FN DT_TARGET_AVX2
#define FI DT_INLINE DT_TARGET_AVX2

#define MAGIC 12582912.0f /* 1.5 * 2^23 */

/* ---- NG groups of 8 lanes, processed in lockstep (independent dependency chains) -------- */
#ifndef NG
#define NG 3
#endif
#define LANES 8   /* lanes per vector */
#define VALIGN 32 /* bytes per vector */
#define EACH _Pragma("GCC unroll 8") for (int g_ = 0; g_ < NG; ++g_)
typedef struct {
    __m256 v[NG];
} V;
typedef struct { /* all-ones or all-zero lanes */
    __m256 m[NG];
} K;

static FI V v1(float c)
{
    V r;
    EACH r.v[g_] = _mm256_set1_ps(c);
    return r;
}
#define VOP2(name, f)                                                                          \
    static FI V name(V x, V y)                                                                 \
    {                                                                                          \
        V r;                                                                                   \
        EACH r.v[g_] = f(x.v[g_], y.v[g_]);                                                    \
        return r;                                                                              \
    }
VOP2(vadd, _mm256_add_ps)
VOP2(vsub, _mm256_sub_ps)
VOP2(vmul, _mm256_mul_ps)
VOP2(vdiv, _mm256_div_ps)
/* x < y ? x : y and x > y ? x : y (the second operand on ties and NaN, as the instructions) */
VOP2(vmin, _mm256_min_ps)
VOP2(vmax, _mm256_max_ps)
static FI V vabs(V x)
{
    const __m256 m = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    V r;
    EACH r.v[g_] = _mm256_and_ps(x.v[g_], m);
    return r;
}
static FI V vsqrt(V x)
{
    V r;
    EACH r.v[g_] = _mm256_sqrt_ps(x.v[g_]);
    return r;
}
static FI V vneg(V x)
{
    const __m256 s = _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u));
    V r;
    EACH r.v[g_] = _mm256_xor_ps(x.v[g_], s);
    return r;
}
/* k ? y : x per lane */
static FI V vsel(V x, K k, V y)
{
    V r;
    EACH r.v[g_] = _mm256_blendv_ps(x.v[g_], y.v[g_], k.m[g_]);
    return r;
}
#define VCMP(x, y, p) vcmp_##p(x, y)
#define VCMPDEF(p)                                                                             \
    static FI K vcmp_##p(V x, V y)                                                             \
    {                                                                                          \
        K r;                                                                                   \
        EACH r.m[g_] = _mm256_cmp_ps(x.v[g_], y.v[g_], p);                                     \
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
    EACH r.m[g_] = _mm256_and_ps(x.m[g_], y.m[g_]);
    return r;
}
static FI K kandn(K x, K y) /* ~x & y */
{
    K r;
    EACH r.m[g_] = _mm256_andnot_ps(x.m[g_], y.m[g_]);
    return r;
}
static FI K kall(void)
{
    K r;
    EACH r.m[g_] = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    return r;
}
static FI int kany(K x)
{
    __m256 a = x.m[0];
    for (int g = 1; g < NG; ++g)
        a = _mm256_or_ps(a, x.m[g]);
    return _mm256_movemask_ps(a) != 0;
}
static FI K kor(K x, K y)
{
    K r;
    EACH r.m[g_] = _mm256_or_ps(x.m[g_], y.m[g_]);
    return r;
}
static FI K knone(void)
{
    K r;
    EACH r.m[g_] = _mm256_setzero_ps();
    return r;
}

/* ---- level computation modes ------------------------------------------------------------ */
#define LV_LO 1 /* clamp at 0 */
#define LV_HI 2 /* clamp at nmax */
#define LV_EX 4 /* emulate nearest_int's bits (|v| may reach 2^22, or NaN) */

/* (bits(t) & 0x7FFFFF) | 0x4B000000: the float 2^23 + the low 23 bits of t */
static FI __m256 low23(__m256 t)
{
    return _mm256_or_ps(_mm256_and_ps(t, _mm256_castsi256_ps(_mm256_set1_epi32(0x007FFFFF))),
                        _mm256_castsi256_ps(_mm256_set1_epi32(0x4B000000)));
}

/* clamp(nearest_int(is * (x - mn)), 0, nmax) as a float, for the lanes mode is exact for */
static FI __m256 level1(__m256 x, __m256 is, __m256 mn, int mode, float nmax)
{
    const __m256 M = _mm256_set1_ps(MAGIC);
    const __m256 d = _mm256_sub_ps(x, mn);
    const __m256 v = _mm256_mul_ps(is, d);
    __m256 t = _mm256_add_ps(v, M);
    if (mode & LV_EX)
        t = low23(t);
    if (mode & (LV_LO | LV_EX))
        t = _mm256_max_ps(t, M);
    if (mode & (LV_HI | LV_EX))
        t = _mm256_min_ps(t, _mm256_set1_ps(MAGIC + nmax));
    return _mm256_sub_ps(t, M);
}
/* no LV_PERM on these lanes (fast_kquants_lanes.h): its table is empty */
typedef struct {
    char none;
} perm_tab;
static FI perm_tab perm_table(int nmax)
{
    (void)nmax;
    return (perm_tab){0};
}
static FI V level(V x, V is, V mn, int mode, float nmax, perm_tab pt)
{
    (void)pt;
    V r;
    EACH r.v[g_] = level1(x.v[g_], is.v[g_], mn.v[g_], mode, nmax);
    return r;
}

/* ---- the levels of Q6_K's and Q3_K's searches ----------------------------------------------- */

/* clamp(nearest_int(is * x), -32, 31) as a float; the products are bounded by |is| * amax */
static FI __m256 qx_level1(__m256 x, __m256 is, int mode)
{
    const __m256 M = _mm256_set1_ps(MAGIC);
    __m256 t = _mm256_add_ps(_mm256_mul_ps(is, x), M);
    if (mode & LV_EX)
        t = low23(t);
    if (mode & (LV_LO | LV_EX))
        t = _mm256_max_ps(t, _mm256_set1_ps(MAGIC - 32.0f));
    if (mode & (LV_HI | LV_EX))
        t = _mm256_min_ps(t, _mm256_set1_ps(MAGIC + 31.0f));
    return _mm256_sub_ps(t, M);
}

/* clamp(nearest_int(q), lo, hi) as a float, any q */
static FI V nearest_float(V q, float lo, float hi)
{
    const __m256 M = _mm256_set1_ps(MAGIC);
    V r;
    EACH {
        __m256 t = low23(_mm256_add_ps(q.v[g_], M));
        t = _mm256_max_ps(t, _mm256_set1_ps(MAGIC + lo));
        t = _mm256_min_ps(t, _mm256_set1_ps(MAGIC + hi));
        r.v[g_] = _mm256_sub_ps(t, M);
    }
    return r;
}

/* ---- transposes ------------------------------------------------------------------------- */

/* r[j][k] -> r[k][j], 8 x 8 */
static FI void tr8(__m256 r[8])
{
    __m256 t[8];
    for (int i = 0; i < 4; ++i) {
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 2; ++i) {
        r[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        r[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        r[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        r[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    for (int i = 0; i < 4; ++i) {
        t[i] = _mm256_permute2f128_ps(r[i], r[4 + i], 0x20);
        t[4 + i] = _mm256_permute2f128_ps(r[i], r[4 + i], 0x31);
    }
    for (int i = 0; i < 8; ++i)
        r[i] = t[i];
}

/* X[k] = element k of 8 sub-blocks of n (16 or 32) floats: group g from x + 8 n g */
static FI void load_lanes(const float *x, int n, V *X)
{
    for (int g = 0; g < NG; ++g) {
        const float *src = x + 8 * n * g;
        for (int h = 0; h < n / 8; ++h) {
            __m256 r[8];
            for (int j = 0; j < 8; ++j)
                r[j] = _mm256_loadu_ps(src + n * j + 8 * h);
            tr8(r);
            for (int k = 0; k < 8; ++k)
                X[8 * h + k].v[g] = r[k];
        }
    }
}

static FI void store_v(float *p, V v)
{
    EACH _mm256_storeu_ps(p + 8 * g_, v.v[g_]);
}

/* ---- exact nearest_int for the final pass ------------------------------------------------ */

/* clamp(nearest_int(q), lo, hi) - lo as int32 lanes, any q */
static FI __m256i nearest_code(__m256 q, int lo, int hi)
{
    __m256 t = low23(_mm256_add_ps(q, _mm256_set1_ps(MAGIC)));
    t = _mm256_max_ps(t, _mm256_set1_ps(MAGIC + (float)lo));
    t = _mm256_min_ps(t, _mm256_set1_ps(MAGIC + (float)hi));
    return _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(0x4B400000 + lo));
}

/* 16 int32 lanes of 0..255 (a first) as 16 bytes */
static FI __m128i pack16(__m256i a, __m256i b)
{
    const __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(a, b), 0xD8);
    return _mm_packus_epi16(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
}

/* 32 int32 lanes of 0..255 (q[0] first) as 32 bytes */
static FI __m256i pack_bytes(const __m256i q[4])
{
    const __m256i a = _mm256_packs_epi32(q[0], q[1]), b = _mm256_packs_epi32(q[2], q[3]);
    return _mm256_permutevar8x32_epi32(_mm256_packus_epi16(a, b),
                                       _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* The final levels clamp(nearest_int(q), lo, hi) - lo as bytes: of 32 elements,
 * q = (x + m) / d (lo 0), and of 16 elements, q = (x + m) / d or q = x / d */
static FI void final32m(const float *x, float mj, float dj, int nmax, uint8_t *L)
{
    const __m256 vm = _mm256_set1_ps(mj), vd = _mm256_set1_ps(dj);
    __m256i q[4];
    for (int h = 0; h < 4; ++h) {
        const __m256 s = _mm256_add_ps(_mm256_loadu_ps(x + 8 * h), vm);
        q[h] = nearest_code(_mm256_div_ps(s, vd), 0, nmax);
    }
    _mm256_storeu_si256((__m256i *)L, pack_bytes(q));
}
static FI void final16m(const float *x, float mj, float dj, int lo, int hi, uint8_t *L)
{
    const __m256 vm = _mm256_set1_ps(mj), vd = _mm256_set1_ps(dj);
    const __m256 s0 = _mm256_add_ps(_mm256_loadu_ps(x), vm);
    const __m256 s1 = _mm256_add_ps(_mm256_loadu_ps(x + 8), vm);
    _mm_storeu_si128((__m128i *)L, pack16(nearest_code(_mm256_div_ps(s0, vd), lo, hi),
                                          nearest_code(_mm256_div_ps(s1, vd), lo, hi)));
}
static FI void final16(const float *x, float dj, int lo, int hi, uint8_t *L)
{
    const __m256 vd = _mm256_set1_ps(dj);
    const __m256i a = nearest_code(_mm256_div_ps(_mm256_loadu_ps(x), vd), lo, hi);
    const __m256i b = nearest_code(_mm256_div_ps(_mm256_loadu_ps(x + 8), vd), lo, hi);
    _mm_storeu_si128((__m128i *)L, pack16(a, b));
}

#include "fast_kquants_lanes.h"

/* ---- Q4_K / Q5_K: NG super-blocks a chunk (NG groups of 8 sub-blocks of 32) --------------- */

CHUNK_ROWS(dt_ggml_quantize_q4_K_avx2, 144, Q45_PER, q4_chunk)
CHUNK_ROWS(dt_ggml_quantize_q5_K_avx2, 176, Q45_PER, q5_chunk)

/* ---- the types of 16-element sub-blocks: NG blocks (2 NG groups of 8 sub-blocks) a run ---- */

/* The rows of a 16-element type: runs of NG blocks, each fitted as two chunks of NG groups
 * (fit(x, run, half) for the 8 NG sub-blocks of half 0 or 1), then finished block by block
 * (fin(x, y, run, b)); the tail padded with zero blocks. */
#define ROWS16(name, bytes, fit, fin)                                                          \
    FN void name(const float *x, uint8_t *y, size_t nb)                                        \
    {                                                                                          \
        run16 r;                                                                               \
        _Alignas(32) float xt[256 * NG];                                                       \
        _Alignas(32) uint8_t yt[(bytes) * NG];                                                 \
        while (nb) {                                                                           \
            const size_t n = nb < NG ? nb : NG;                                                \
            const float *xs = x;                                                               \
            uint8_t *ys = y;                                                                   \
            if (n < NG) {                                                                      \
                memset(xt, 0, sizeof xt);                                                      \
                memcpy(xt, x, n * 256 * sizeof(float));                                        \
                xs = xt;                                                                       \
                ys = yt;                                                                       \
            }                                                                                  \
            const float *next = nb >= 2 * NG ? x + 256 * NG : NULL;                           \
            fit(xs, &r, 0, next);                                                              \
            fit(xs + 128 * NG, &r, 1, next ? next + 128 * NG : NULL);                          \
            for (int b = 0; b < NG; ++b)                                                       \
                fin(xs + 256 * b, ys + (bytes) * b, &r, b);                                    \
            if (n < NG)                                                                        \
                memcpy(y, yt, n * (bytes));                                                    \
            x += 256 * n;                                                                      \
            y += (bytes) * n;                                                                  \
            nb -= n;                                                                           \
        }                                                                                      \
    }

typedef struct { /* per sub-block of a run (16 NG) */
    _Alignas(32) float a[16 * NG], b[16 * NG], c[16 * NG], d[16 * NG];
    unsigned act[2 * NG]; /* Q6_K: per group, the lanes that are not all zero */
    _Alignas(32) uint8_t L[256 * NG]; /* Q3_K: the fitted levels + 4 */
} run16;

/* ---- Q2_K ----------------------------------------------------------------------------------- */

static FI void q2_fit(const float *x, run16 *r, int half, const float *next)
{
    _Alignas(32) V X[16], W[16], LA[16];
    load_lanes(x, 16, X);
    for (int i = 0; i < 16; ++i)
        W[i] = vabs(X[i]);
    const fit_out f = fit_lanes(X, W, 16, 3, -0.5f, 0.1f, 15, 1, LA, (const char *)next, 8 * NG);
    const int o = 8 * NG * half;
    store_v(r->a + o, f.scale);
    store_v(r->b + o, f.neg_min);
    store_v(r->c + o, f.lis);
    store_v(r->d + o, f.lmn);
}

static FI void q2_fin(const float *x, uint8_t *y, const run16 *r, int blk)
{
    const int o = 16 * blk;
    finish_q2(x, y, r->a + o, r->b + o, r->c + o, r->d + o);
}

ROWS16(dt_ggml_quantize_q2_K_avx2, 84, q2_fit, q2_fin)

/* ---- Q6_K: make_qx_quants(16, 32, rmse_type 1) per lane ---------------------------------- */

static FI void q6_fit(const float *x, run16 *r, int half, const float *next)
{
    _Alignas(32) V X[16], W2[16], WX[16];
    load_lanes(x, 16, X);
    V am, mx, bis;
    const K act = absmax_weights(X, W2, WX, &am, &mx);
    const V scale = q6_search(X, W2, WX, am, mx, act, (const char *)next, -1, &bis);
    const int o = 8 * NG * half;
    store_v(r->a + o, scale);
    store_v(r->b + o, bis);
    for (int g = 0; g < NG; ++g)
        r->act[NG * half + g] = (unsigned)_mm256_movemask_ps(act.m[g]);
}

static FI void q6_fin(const float *x, uint8_t *y, const run16 *r, int blk)
{
    finish_q6(x, y, r->a + 16 * blk, r->b + 16 * blk, r->act[2 * blk] | r->act[2 * blk + 1] << 8);
}

ROWS16(dt_ggml_quantize_q6_K_avx2, 210, q6_fit, q6_fin)

/* ---- Q3_K: make_q3_quants(16, 4, do_rmse) per lane --------------------------------------- */

static FI void q3_fit(const float *x, run16 *r, int half, const float *next)
{
    _Alignas(32) V X[16], W2[16], WX[16], LV[16];
    load_lanes(x, 16, X);
    if (next)
        for (int p = 0; p < 8 * NG; ++p)
            _mm_prefetch((const char *)next + 64 * p, _MM_HINT_T0);
    V am, mx;
    const K act = absmax_weights(X, W2, WX, &am, &mx);
    store_v(r->a + 8 * NG * half, q3_search(X, W2, WX, mx, act, LV));
    /* the fitted levels + 4 per sub-block (0 for an all-zero one), for the rare sub-block whose
     * final scale is 0 */
    uint8_t *Lf = r->L + 128 * NG * half;
    for (int i = 0; i < 16; ++i) {
        EACH {
            const __m256i c = _mm256_add_epi32(_mm256_cvttps_epi32(LV[i].v[g_]),
                                               _mm256_set1_epi32(4));
            const __m256i z = _mm256_and_si256(c, _mm256_castps_si256(act.m[g_]));
            _Alignas(32) int b[8];
            _mm256_store_si256((__m256i *)b, z);
            for (int j = 0; j < 8; ++j)
                Lf[128 * g_ + 16 * j + i] = (uint8_t)b[j];
        }
    }
}

static FI void q3_fin(const float *x, uint8_t *y, const run16 *r, int blk)
{
    finish_q3(x, y, r->a + 16 * blk, r->L + 256 * blk);
}

ROWS16(dt_ggml_quantize_q3_K_avx2, 110, q3_fit, q3_fin)

/* ---- Q8_K ----------------------------------------------------------------------------------- */

/* kquants.c's dt_ggml_quantize_q8_K: no search, so each block is vectorized across its own
 * elements (the maximum of |x| and integer sums do not depend on the order) */
FN void dt_ggml_quantize_q8_K_avx2(const float *x, uint8_t *y, size_t nb)
{
    const __m256 M = _mm256_set1_ps(MAGIC);
    const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    for (size_t ib = 0; ib < nb; ++ib, x += 256, y += 292) {
        __m256 am = _mm256_setzero_ps();
        for (int h = 0; h < 32; ++h)
            am = _mm256_max_ps(am, _mm256_and_ps(_mm256_loadu_ps(x + 8 * h), absm));
        __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(am), _mm256_extractf128_ps(am, 1));
        m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        m4 = _mm_max_ss(m4, _mm_shuffle_ps(m4, m4, 1));
        const float amax = _mm_cvtss_f32(m4);
        if (amax == 0.0f) {
            memset(y, 0, 292);
            continue;
        }
        /* the first element of largest |x|, with its sign */
        int idx = 0;
        const __m256 va = _mm256_set1_ps(amax);
        for (int h = 0; h < 32; ++h) {
            const int e = _mm256_movemask_ps(
                _mm256_cmp_ps(_mm256_and_ps(_mm256_loadu_ps(x + 8 * h), absm), va, _CMP_EQ_OQ));
            if (e) {
                idx = 8 * h + __builtin_ctz((unsigned)e);
                break;
            }
        }
        const float iscale = -127.0f / x[idx];
        const __m256 vi = _mm256_set1_ps(iscale);
        for (int h = 0; h < 8; ++h) {
            __m256i c[4];
            for (int k = 0; k < 4; ++k) {
                /* nearest_int's bits, then min(127); the low 8 bits are taken below */
                const __m256 t =
                    _mm256_add_ps(_mm256_mul_ps(vi, _mm256_loadu_ps(x + 32 * h + 8 * k)), M);
                c[k] = _mm256_sub_epi32(
                    _mm256_and_si256(_mm256_castps_si256(t), _mm256_set1_epi32(0x007FFFFF)),
                    _mm256_set1_epi32(0x00400000));
                c[k] = _mm256_min_epi32(c[k], _mm256_set1_epi32(127));
                c[k] = _mm256_and_si256(c[k], _mm256_set1_epi32(0xFF));
            }
            const __m256i q = pack_bytes(c);
            _mm256_storeu_si256((__m256i *)(y + 4 + 32 * h), q);
            /* the sums of 16 signed bytes */
            const __m256i s16 = _mm256_madd_epi16(
                _mm256_cvtepi8_epi16(_mm256_castsi256_si128(q)), _mm256_set1_epi16(1));
            const __m256i t16 = _mm256_madd_epi16(
                _mm256_cvtepi8_epi16(_mm256_extracti128_si256(q, 1)), _mm256_set1_epi16(1));
            /* s16: 8 pair sums of bytes 0..15; t16: of bytes 16..31 */
            const __m256i h1 = _mm256_hadd_epi32(s16, t16); /* s01 s23 t01 t23 | s45 s67 t45 t67 */
            const __m256i h2 = _mm256_hadd_epi32(h1, h1);   /* s0-3 t0-3 .. | s4-7 t4-7 .. */
            const int s0 = _mm256_extract_epi32(h2, 0) + _mm256_extract_epi32(h2, 4);
            const int s1 = _mm256_extract_epi32(h2, 1) + _mm256_extract_epi32(h2, 5);
            dt_ggml_wr16(y + 260 + 4 * h, (uint16_t)(unsigned)s0);
            dt_ggml_wr16(y + 262 + 4 * h, (uint16_t)(unsigned)s1);
        }
        dt_ggml_wr32(y, dt_ggml_bits_of(1.0f / iscale));
    }
}

#endif
