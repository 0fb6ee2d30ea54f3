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

/* The cheapest mode exact for every active lane: the levels are is * (x - mn), x in [lo, hi],
 * whose rounded products lie in [is * (lo - mn), is * (hi - mn)] rounded (monotonic rounding) */
static FI int level_mode(V is, V mn, V lo, V hi, K act, float nmax)
{
    const V up = vmul(is, vsub(hi, mn)), dn = vmul(is, vsub(lo, mn));
    const K ok = kand(VCMP(is, v1(0.0f), _CMP_GT_OQ),
                      kand(VCMP(up, v1(4194304.0f), _CMP_LT_OQ),
                           VCMP(dn, v1(-4194304.0f), _CMP_GT_OQ)));
    if (kany(kandn(ok, act)))
        return LV_EX;
    if (nmax == 15.0f || nmax == 3.0f) { /* every rounded level in [PERM_LO, PERM_LO + 31] */
        const K in = kand(VCMP(dn, v1((float)PERM_LO - 0.5f), _CMP_GE_OQ),
                          VCMP(up, v1((float)PERM_LO + 31.5f), _CMP_LT_OQ));
        if (!kany(kandn(in, act)))
            return LV_PERM;
    }
    int mode = 0;
    if (kany(kand(act, VCMP(dn, v1(-0.5f), _CMP_LT_OQ))))
        mode |= LV_LO;
    if (kany(kand(act, VCMP(up, v1(nmax + 0.5f), _CMP_NLT_UQ))))
        mode |= LV_HI;
    return mode;
}

/* ---- make_qkx2_quants per lane ------------------------------------------------------------ */

/* The levels of (is, mn) into LA */
static FI void levels_only(const V *X, int n, V is, V mn, int mode, float nmax, V *LA)
{
    const perm_tab pt = perm_table((int)nmax);
    for (int i = 0; i < n; ++i)
        LA[i] = level(X[i], is, mn, mode, nmax, pt);
}
static FN void levels_any(const V *X, int n, V is, V mn, int mode, float nmax, V *LA)
{
    switch (mode) {
    case 0: levels_only(X, n, is, mn, 0, nmax, LA); break;
    case LV_LO: levels_only(X, n, is, mn, LV_LO, nmax, LA); break;
    case LV_HI: levels_only(X, n, is, mn, LV_HI, nmax, LA); break;
    case LV_LO | LV_HI: levels_only(X, n, is, mn, LV_LO | LV_HI, nmax, LA); break;
    case LV_PERM: levels_only(X, n, is, mn, LV_PERM, nmax, LA); break;
    default: levels_only(X, n, is, mn, LV_EX, nmax, LA); break;
    }
}

typedef struct {
    V l, l2, xl;
} sums3;

/* The levels of (is, mn) into LA and sum w*l, sum (w*l)*l, sum (w*l)*x in index order */
static FI sums3 levels_sums(const V *X, const V *W, int n, V is, V mn, int mode, float nmax,
                            V *LA)
{
    const perm_tab pt = perm_table((int)nmax);
    V sl = v1(0.0f), sl2 = sl, sxl = sl;
    for (int i = 0; i < n; ++i) {
        const V x = X[i];
        const V l = level(x, is, mn, mode, nmax, pt);
        LA[i] = l;
        const V wl = vmul(W[i], l);
        sl = vadd(sl, wl);
        sl2 = vadd(sl2, vmul(wl, l));
        sxl = vadd(sxl, vmul(wl, x));
    }
    return (sums3){sl, sl2, sxl};
}
static FN sums3 levels_sums_any(const V *X, const V *W, int n, V is, V mn, int mode, float nmax,
                                V *LA)
{
    switch (mode) {
    case 0: return levels_sums(X, W, n, is, mn, 0, nmax, LA);
    case LV_LO: return levels_sums(X, W, n, is, mn, LV_LO, nmax, LA);
    case LV_HI: return levels_sums(X, W, n, is, mn, LV_HI, nmax, LA);
    case LV_LO | LV_HI: return levels_sums(X, W, n, is, mn, LV_LO | LV_HI, nmax, LA);
    case LV_PERM: return levels_sums(X, W, n, is, mn, LV_PERM, nmax, LA);
    default: return levels_sums(X, W, n, is, mn, LV_EX, nmax, LA);
    }
}

/* sum w * e, e = |s*l + m - x| (mad) or its square, in index order */
static FI V asym_error(const V *X, const V *W, const V *LA, int n, V s, V m, int mad)
{
    V err = v1(0.0f);
    for (int i = 0; i < n; ++i) {
        const V slm = vadd(vmul(s, LA[i]), m);
        V diff = vsub(slm, X[i]);
        diff = mad ? vabs(diff) : vmul(diff, diff);
        err = vadd(err, vmul(W[i], diff));
    }
    return err;
}

typedef struct {
    V scale, neg_min, lis, lmn; /* the fit; the iscale and min of its levels */
} fit_out;

/* kquants.c's fit_scale_min for every lane (nstep >= 1) */
static FI fit_out fit_lanes(const V *X, const V *W, int n, int nmax, float rmin, float rdelta,
                            int nstep, int mad, V *LA, const char *pf, int pf_lines)
{
    const float fn = (float)nmax;
    V mn = X[0], mx = X[0], sw = W[0], sx = vmul(W[0], X[0]);
    for (int i = 1; i < n; ++i) {
        mn = vmin(X[i], mn); /* x < min ? x : min */
        mx = vmax(X[i], mx);
        sw = vadd(sw, W[i]);
        sx = vadd(sx, vmul(W[i], X[i]));
    }
    const V lo = mn; /* the data's min: the levels' products are bounded with it */
    mn = vsel(mn, VCMP(mn, v1(0.0f), _CMP_GT_OQ), v1(0.0f));
    const K act = VCMP(mx, mn, _CMP_NEQ_UQ); /* max == min: scale 0, levels 0 */

    const V range = vsub(mx, mn);
    V is = vdiv(v1(fn), range);
    V scale = vdiv(v1(1.0f), is);
    levels_any(X, n, is, mn, level_mode(is, mn, lo, mx, act, fn), fn, LA);
    V best = asym_error(X, W, LA, n, scale, mn, mad);
    V lis = is, lmn = mn;

    for (int k = 0; k <= nstep; ++k) {
        const float step = rdelta * (float)k;
        const float num0 = rmin + step;
        const float num = num0 + fn;
        const V trial_is = vdiv(v1(num), vsub(mx, mn));
        if (pf) /* the next run's input, spread over the trials */
            for (int p = k * pf_lines / (nstep + 1); p < (k + 1) * pf_lines / (nstep + 1); ++p)
                _mm_prefetch(pf + 64 * p, _MM_HINT_T0);
        const int mode = level_mode(trial_is, mn, lo, mx, act, fn);
        const sums3 s = levels_sums_any(X, W, n, trial_is, mn, mode, fn, LA);
        const V D = vsub(vmul(sw, s.l2), vmul(s.l, s.l));
        const K dpos = kand(act, VCMP(D, v1(0.0f), _CMP_GT_OQ));
        if (!kany(dpos))
            continue;
        V this_scale = vdiv(vsub(vmul(sw, s.xl), vmul(sx, s.l)), D);
        V this_min = vdiv(vsub(vmul(s.l2, sx), vmul(s.l, s.xl)), D);
        const K mpos = kand(dpos, VCMP(this_min, v1(0.0f), _CMP_GT_OQ));
        if (kany(mpos)) { /* a positive min: 0, and the scale of the levels alone */
            this_min = vsel(this_min, mpos, v1(0.0f));
            this_scale = vsel(this_scale, mpos, vdiv(s.xl, s.l2));
        }
        const V cur = asym_error(X, W, LA, n, this_scale, this_min, mad);
        const K keep = kand(dpos, VCMP(cur, best, _CMP_LT_OQ));
        best = vsel(best, keep, cur);
        scale = vsel(scale, keep, this_scale);
        lis = vsel(lis, keep, trial_is);
        lmn = vsel(lmn, keep, mn);
        mn = vsel(mn, keep, this_min);
    }
    /* an inactive lane: scale 0, levels 0 (iscale 0 times x - min, which is finite) */
    const K inact = kandn(act, kall());
    scale = vsel(scale, inact, v1(0.0f));
    lis = vsel(lis, inact, v1(0.0f));
    lmn = vsel(lmn, inact, mn);
    return (fit_out){scale, vneg(mn), lis, lmn};
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

static inline int clamp_int(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The levels of a fit (iscale, min) for n elements, scalar (asym_levels) */
static void fit_levels(const float *x, int n, int nmax, float is, float mn, uint8_t *L)
{
    for (int i = 0; i < n; ++i) {
        const float d = x[i] - mn;
        const float v = is * d;
        L[i] = (uint8_t)clamp_int(dt_ggml_nearest_int(v), 0, nmax);
    }
}

/* ---- Q4_K / Q5_K -------------------------------------------------------------------------- */

static inline uint8_t u8_of(int v)
{
    return (uint8_t)((unsigned)v & 0xFFu);
}

static void pack_scale_min_k4(const uint8_t *ls, const uint8_t *lm, uint8_t *s)
{
    for (int j = 0; j < 4; ++j) {
        s[j] = ls[j];
        s[j + 4] = lm[j];
    }
    for (int j = 4; j < 8; ++j) {
        s[j + 4] = (uint8_t)((ls[j] & 0xF) | (lm[j] & 0xF) << 4);
        s[j - 4] |= (uint8_t)((ls[j] >> 4) << 6);
        s[j] |= (uint8_t)((lm[j] >> 4) << 6);
    }
}

/* kquants.c's quantize_q45_block after the sub-block fits: codes, fp16 scales, final levels */
static FI void finish_q45(const float *x, uint8_t *y, int nmax, const float *sc, const float *nm,
                          const float *lis, const float *lmn, uint8_t *L)
{
    float max_scale = 0.0f, max_min = 0.0f;
    for (int j = 0; j < 8; ++j) {
        if (sc[j] > max_scale)
            max_scale = sc[j];
        if (nm[j] > max_min)
            max_min = nm[j];
    }
    const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
    const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
    uint8_t ls[8], lm[8];
    for (int j = 0; j < 8; ++j) {
        const float vs = inv_scale * sc[j];
        const float vm = inv_min * nm[j];
        const uint8_t cs = u8_of(dt_ggml_nearest_int(vs));
        const uint8_t cm = u8_of(dt_ggml_nearest_int(vm));
        ls[j] = cs < 63 ? cs : 63;
        lm[j] = cm < 63 ? cm : 63;
    }
    const uint16_t d = dt_ggml_fp16(max_scale / 63.0f);
    const uint16_t dmin = dt_ggml_fp16(max_min / 63.0f);
    dt_ggml_wr16(y, d);
    dt_ggml_wr16(y + 2, dmin);
    pack_scale_min_k4(ls, lm, y + 4);

    const float D = dt_ggml_fp16_to_f32(d), M = dt_ggml_fp16_to_f32(dmin);
    for (int j = 0; j < 8; ++j) {
        const float dj = D * (float)ls[j];
        if (dj == 0.0f) {
            fit_levels(x + 32 * j, 32, nmax, lis[j], lmn[j], L + 32 * j);
            continue;
        }
        const float mj = M * (float)lm[j];
        const __m512 vm = _mm512_set1_ps(mj), vd = _mm512_set1_ps(dj);
        for (int h = 0; h < 2; ++h) {
            const __m512 s = _mm512_add_ps(_mm512_loadu_ps(x + 32 * j + 16 * h), vm);
            const __m512 q = _mm512_div_ps(s, vd);
            _mm_storeu_si128((__m128i *)(L + 32 * j + 16 * h),
                             _mm512_cvtepi32_epi8(nearest_code(q, 0, nmax)));
        }
    }
}

/* 2 NG super-blocks of 256 (NG groups of 16 sub-blocks of 32) */
static FI void q45_chunk(const float *x, uint8_t *y, int q5, const float *next)
{
    const int nmax = q5 ? 31 : 15, nstep = q5 ? 15 : 20;
    const float rmin = q5 ? -0.5f : -1.0f;
    _Alignas(64) V X[32], W[32], LA[32];
    load_lanes(x, 32, X);
    /* weights av + |x|, av = sqrt(sum x^2 / 32) */
    V s2 = v1(0.0f);
    for (int i = 0; i < 32; ++i)
        s2 = vadd(s2, vmul(X[i], X[i]));
    const V av = vsqrt(vdiv(s2, v1(32.0f)));
    for (int i = 0; i < 32; ++i)
        W[i] = vadd(av, vabs(X[i]));
    const fit_out f = fit_lanes(X, W, 32, nmax, rmin, 0.1f, nstep, 0, LA,
                                    (const char *)next, 32 * NG);
    _Alignas(64) float sc[16 * NG], nm[16 * NG], lis[16 * NG], lmn[16 * NG];
    store_v(sc, f.scale);
    store_v(nm, f.neg_min);
    store_v(lis, f.lis);
    store_v(lmn, f.lmn);

    const size_t bytes = q5 ? 176 : 144;
    for (int b = 0; b < 2 * NG; ++b) {
        const float *xb = x + 256 * b;
        uint8_t *yb = y + bytes * (size_t)b;
        _Alignas(32) uint8_t L[256];
        finish_q45(xb, yb, nmax, sc + 8 * b, nm + 8 * b, lis + 8 * b, lmn + 8 * b, L);
        if (!q5) {
            for (int p = 0; p < 4; ++p) {
                const __m256i lo = _mm256_load_si256((const __m256i *)(L + 64 * p));
                const __m256i hi = _mm256_load_si256((const __m256i *)(L + 64 * p + 32));
                _mm256_storeu_si256((__m256i *)(yb + 16 + 32 * p),
                                    _mm256_or_si256(lo, _mm256_slli_epi16(hi, 4)));
            }
        } else {
            const __m256i low4 = _mm256_set1_epi8(0x0F);
            __m256i qh = _mm256_setzero_si256();
            for (int p = 0; p < 4; ++p) {
                const __m256i lo = _mm256_load_si256((const __m256i *)(L + 64 * p));
                const __m256i hi = _mm256_load_si256((const __m256i *)(L + 64 * p + 32));
                /* bit 4 of each level to bit 2p (lo) and 2p+1 (hi) of qh */
                const __m256i blo = _mm256_and_si256(_mm256_srli_epi16(lo, 4), _mm256_set1_epi8(1));
                const __m256i bhi = _mm256_and_si256(_mm256_srli_epi16(hi, 4), _mm256_set1_epi8(1));
                qh = _mm256_or_si256(qh, _mm256_sll_epi16(blo, _mm_cvtsi32_si128(2 * p)));
                qh = _mm256_or_si256(qh, _mm256_sll_epi16(bhi, _mm_cvtsi32_si128(2 * p + 1)));
                const __m256i q = _mm256_or_si256(_mm256_and_si256(lo, low4),
                                                  _mm256_slli_epi16(_mm256_and_si256(hi, low4), 4));
                _mm256_storeu_si256((__m256i *)(yb + 48 + 32 * p), q);
            }
            _mm256_storeu_si256((__m256i *)(yb + 16), qh);
        }
    }
}

static FI void q45_rows(const float *x, uint8_t *y, size_t nb, int q5)
{
    const size_t bytes = q5 ? 176 : 144;
    for (; nb >= 2 * NG; nb -= 2 * NG, x += 512 * NG, y += 2 * NG * bytes)
        q45_chunk(x, y, q5, nb >= 4 * NG ? x + 512 * NG : NULL);
    if (nb) { /* the tail, padded with constant (zero) sub-blocks */
        _Alignas(64) float xt[512 * NG];
        _Alignas(64) uint8_t yt[2 * NG * 176];
        memset(xt, 0, sizeof xt);
        memcpy(xt, x, nb * 256 * sizeof(float));
        q45_chunk(xt, yt, q5, NULL);
        memcpy(y, yt, nb * bytes);
    }
}

FN void dt_ggml_quantize_q4_K_avx512(const float *x, uint8_t *y, size_t nb)
{
    q45_rows(x, y, nb, 0);
}

FN void dt_ggml_quantize_q5_K_avx512(const float *x, uint8_t *y, size_t nb)
{
    q45_rows(x, y, nb, 1);
}

/* ---- Q2_K ----------------------------------------------------------------------------------- */

static inline uint8_t u8_or_shift4(int v)
{
    return (uint8_t)(((unsigned)v << 4) & 0xFFu);
}

/* Four 2-bit planes: byte 32h + l of qs holds L[128h + l + 32k] in bits 2k..2k+1 */
static FI void pack_2bit(const uint8_t *L, uint8_t *qs)
{
    for (int h = 0; h < 2; ++h) {
        const __m256i *p = (const __m256i *)(L + 128 * h);
        const __m256i a = _mm256_load_si256(p), b = _mm256_load_si256(p + 1);
        const __m256i c = _mm256_load_si256(p + 2), d = _mm256_load_si256(p + 3);
        const __m256i q = _mm256_or_si256(
            _mm256_or_si256(a, _mm256_slli_epi16(b, 2)),
            _mm256_or_si256(_mm256_slli_epi16(c, 4), _mm256_slli_epi16(d, 6)));
        _mm256_storeu_si256((__m256i *)(qs + 32 * h), q);
    }
}

/* kquants.c's dt_ggml_quantize_q2_K after the sub-block fits */
static FI void finish_q2(const float *x, uint8_t *y, const float *scales, const float *mins,
                         const float *lis, const float *lmn)
{
    _Alignas(32) uint8_t L[256];
    float max_scale = 0.0f, max_min = 0.0f;
    for (int j = 0; j < 16; ++j) {
        if (scales[j] > max_scale)
            max_scale = scales[j];
        if (mins[j] > max_min)
            max_min = mins[j];
    }
    uint8_t *sc = y;
    uint16_t d = 0, dmin = 0;
    if (max_scale > 0.0f) {
        const float iscale = 15.0f / max_scale;
        for (int j = 0; j < 16; ++j) {
            const float v = iscale * scales[j];
            sc[j] = u8_of(dt_ggml_nearest_int(v));
        }
        d = dt_ggml_fp16(max_scale / 15.0f);
    } else {
        memset(sc, 0, 16);
    }
    if (max_min > 0.0f) {
        const float iscale = 15.0f / max_min;
        for (int j = 0; j < 16; ++j) {
            const float v = iscale * mins[j];
            sc[j] |= u8_or_shift4(dt_ggml_nearest_int(v));
        }
        dmin = dt_ggml_fp16(max_min / 15.0f);
    }
    dt_ggml_wr16(y + 80, d);
    dt_ggml_wr16(y + 82, dmin);

    const float D = dt_ggml_fp16_to_f32(d), M = dt_ggml_fp16_to_f32(dmin);
    for (int j = 0; j < 16; ++j) {
        const float dj = D * (float)(sc[j] & 0xF);
        if (dj == 0.0f) {
            fit_levels(x + 16 * j, 16, 3, lis[j], lmn[j], L + 16 * j);
            continue;
        }
        const float mj = M * (float)(sc[j] >> 4);
        const __m512 s = _mm512_add_ps(_mm512_loadu_ps(x + 16 * j), _mm512_set1_ps(mj));
        const __m512 q = _mm512_div_ps(s, _mm512_set1_ps(dj));
        _mm_storeu_si128((__m128i *)(L + 16 * j), _mm512_cvtepi32_epi8(nearest_code(q, 0, 3)));
    }
    pack_2bit(L, y + 16);
}

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

FN void dt_ggml_quantize_q2_K_avx512(const float *x, uint8_t *y, size_t nb)
{
    for (; nb >= NG; nb -= NG, x += 256 * NG, y += 84 * NG)
        q2_chunk(x, y, nb >= 2 * NG ? x + 256 * NG : NULL);
    if (nb) {
        _Alignas(64) float xt[256 * NG];
        _Alignas(64) uint8_t yt[84 * NG];
        memset(xt, 0, sizeof xt);
        memcpy(xt, x, nb * 256 * sizeof(float));
        q2_chunk(xt, yt, NULL);
        memcpy(y, yt, nb * 84);
    }
}

/* ---- Q6_K: make_qx_quants(16, 32, rmse_type 1) per lane ---------------------------------- */

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

static FI int qx_mode(V is, V am, K act)
{
    const V up = vmul(vabs(is), am);
    if (kany(kandn(VCMP(up, v1(4194304.0f), _CMP_LT_OQ), act)))
        return LV_EX;
    int mode = 0;
    if (kany(kand(act, VCMP(up, v1(32.5f), _CMP_NLT_UQ))))
        mode |= LV_LO;
    if (kany(kand(act, VCMP(up, v1(31.5f), _CMP_NLT_UQ))))
        mode |= LV_HI;
    return mode;
}

typedef struct {
    V lx, l2;
} sums2;

/* sum ((x*x)*x)*l and sum ((x*x)*l)*l in index order */
static FI sums2 qx_sums(const V *X, const V *W2, const V *WX, V is, int mode)
{
    V slx = v1(0.0f), sl2 = slx;
    for (int i = 0; i < 16; ++i) {
        V l;
        EACH l.v[g_] = qx_level1(X[i].v[g_], is.v[g_], mode);
        slx = vadd(slx, vmul(WX[i], l));
        sl2 = vadd(sl2, vmul(vmul(W2[i], l), l));
    }
    return (sums2){slx, sl2};
}
static FN sums2 qx_sums_any(const V *X, const V *W2, const V *WX, V is, int mode)
{
    switch (mode) {
    case 0: return qx_sums(X, W2, WX, is, 0);
    case LV_LO: return qx_sums(X, W2, WX, is, LV_LO);
    case LV_HI: return qx_sums(X, W2, WX, is, LV_HI);
    case LV_LO | LV_HI: return qx_sums(X, W2, WX, is, LV_LO | LV_HI);
    default: return qx_sums(X, W2, WX, is, LV_EX);
    }
}

static inline int s8_of(int v)
{
    const int b = (int)((unsigned)v & 0xFFu);
    return b < 128 ? b : b - 256;
}

/* kquants.c's dt_ggml_quantize_q6_K after the sub-block fits */
static FI void finish_q6(const float *x, uint8_t *y, const float *scales, const float *bis,
                         unsigned act)
{
    float max_scale = 0.0f, max_abs = 0.0f;
    for (int j = 0; j < 16; ++j) {
        const float a = __builtin_fabsf(scales[j]);
        if (a > max_abs) {
            max_abs = a;
            max_scale = scales[j];
        }
    }
    if (max_abs < 1e-15f) {
        memset(y, 0, 210);
        return;
    }
    const float iscale = -128.0f / max_scale;
    const uint16_t d = dt_ggml_fp16(1.0f / iscale);
    dt_ggml_wr16(y + 208, d);
    int sc[16];
    for (int j = 0; j < 16; ++j) {
        const float v = iscale * scales[j];
        const int c = dt_ggml_nearest_int(v);
        sc[j] = s8_of(c < 127 ? c : 127);
        y[192 + j] = u8_of(sc[j]);
    }
    _Alignas(32) uint8_t L[256];
    const float D = dt_ggml_fp16_to_f32(d);
    for (int j = 0; j < 16; ++j) {
        const float dj = D * (float)sc[j];
        if (dj == 0.0f) { /* the fit's levels (0 for an all-zero sub-block) */
            for (int l = 0; l < 16; ++l) {
                const float v = bis[j] * x[16 * j + l];
                L[16 * j + l] = (act >> j & 1u)
                                    ? (uint8_t)(clamp_int(dt_ggml_nearest_int(v), -32, 31) + 32)
                                    : 0;
            }
            continue;
        }
        const __m512 q = _mm512_div_ps(_mm512_loadu_ps(x + 16 * j), _mm512_set1_ps(dj));
        _mm_storeu_si128((__m128i *)(L + 16 * j), _mm512_cvtepi32_epi8(nearest_code(q, -32, 31)));
    }
    const __m256i m4 = _mm256_set1_epi8(0x0F), m2 = _mm256_set1_epi8(0x03);
    for (int h = 0; h < 2; ++h) {
        const __m256i *p = (const __m256i *)(L + 128 * h);
        const __m256i a = _mm256_load_si256(p), b = _mm256_load_si256(p + 1);
        const __m256i c = _mm256_load_si256(p + 2), e = _mm256_load_si256(p + 3);
        const __m256i ql0 = _mm256_or_si256(_mm256_and_si256(a, m4),
                                            _mm256_slli_epi16(_mm256_and_si256(c, m4), 4));
        const __m256i ql1 = _mm256_or_si256(_mm256_and_si256(b, m4),
                                            _mm256_slli_epi16(_mm256_and_si256(e, m4), 4));
        const __m256i ha = _mm256_and_si256(_mm256_srli_epi16(a, 4), m2);
        const __m256i hb = _mm256_and_si256(_mm256_srli_epi16(b, 4), m2);
        const __m256i hc = _mm256_and_si256(_mm256_srli_epi16(c, 4), m2);
        const __m256i he = _mm256_and_si256(_mm256_srli_epi16(e, 4), m2);
        const __m256i qh = _mm256_or_si256(
            _mm256_or_si256(ha, _mm256_slli_epi16(hb, 2)),
            _mm256_or_si256(_mm256_slli_epi16(hc, 4), _mm256_slli_epi16(he, 6)));
        _mm256_storeu_si256((__m256i *)(y + 64 * h), ql0);
        _mm256_storeu_si256((__m256i *)(y + 64 * h + 32), ql1);
        _mm256_storeu_si256((__m256i *)(y + 128 + 32 * h), qh);
    }
}

/* NG super-blocks (NG groups of 16 sub-blocks of 16) */
static FI void q6_chunk(const float *x, uint8_t *y, const float *next)
{
    _Alignas(64) V X[16], W2[16], WX[16];
    load_lanes(x, 16, X);
    /* the first element of largest |x| (strict >), and the weights x^2 and x^2 * x */
    V am = v1(0.0f), mx = am;
    for (int i = 0; i < 16; ++i) {
        W2[i] = vmul(X[i], X[i]);
        WX[i] = vmul(W2[i], X[i]);
        const V ax = vabs(X[i]);
        const K gt = VCMP(ax, am, _CMP_GT_OQ);
        am = vsel(am, gt, ax);
        mx = vsel(mx, gt, X[i]);
    }
    const K act = VCMP(am, v1(1e-15f), _CMP_GE_OQ); /* amax < GROUP_MAX_EPS: all zero */
    const V is0 = vdiv(v1(-32.0f), mx);
    sums2 s = qx_sums_any(X, W2, WX, is0, qx_mode(is0, am, act));
    V scale = vsel(v1(0.0f), VCMP(s.l2, v1(0.0f), _CMP_NEQ_UQ), vdiv(s.lx, s.l2));
    V best = vmul(scale, s.lx);
    V bis = is0;
    const char *pf = (const char *)next;
    for (int k = -9; k <= 9; ++k) {
        if (k == 0)
            continue;
        const float step = 0.1f * (float)k;
        const float num = 32.0f + step;
        const float neg = -num;
        const V tis = vdiv(v1(neg), mx);
        if (pf) /* the next run's input, spread over the trials */
            for (int p = (k + 9) * NG; p < (k + 10) * NG; ++p)
                _mm_prefetch(pf + 64 * p, _MM_HINT_T0);
        s = qx_sums_any(X, W2, WX, tis, qx_mode(tis, am, act));
        const V lhs = vmul(s.lx, s.lx), rhs = vmul(best, s.l2);
        const K keep = kand(act, kand(VCMP(s.l2, v1(0.0f), _CMP_GT_OQ), VCMP(lhs, rhs, _CMP_GT_OQ)));
        if (kany(keep)) {
            const V ns = vdiv(s.lx, s.l2);
            scale = vsel(scale, keep, ns);
            best = vsel(best, keep, vmul(ns, s.lx));
            bis = vsel(bis, keep, tis);
        }
    }
    scale = vsel(scale, kandn(act, kall()), v1(0.0f));
    _Alignas(64) float sc[16 * NG], bs[16 * NG];
    store_v(sc, scale);
    store_v(bs, bis);
    for (int b = 0; b < NG; ++b)
        finish_q6(x + 256 * b, y + 210 * b, sc + 16 * b, bs + 16 * b, act.m[b]);
}

FN void dt_ggml_quantize_q6_K_avx512(const float *x, uint8_t *y, size_t nb)
{
    for (; nb >= NG; nb -= NG, x += 256 * NG, y += 210 * NG)
        q6_chunk(x, y, nb >= 2 * NG ? x + 256 * NG : NULL);
    if (nb) {
        _Alignas(64) float xt[256 * NG];
        _Alignas(64) uint8_t yt[210 * NG];
        memset(xt, 0, sizeof xt);
        memcpy(xt, x, nb * 256 * sizeof(float));
        q6_chunk(xt, yt, NULL);
        memcpy(y, yt, nb * 210);
    }
}

/* ---- Q3_K: make_q3_quants(16, 4, do_rmse) per lane --------------------------------------- */

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

/* kquants.c's dt_ggml_quantize_q3_K after the sub-block fits; Lf: the fitted levels + 4 */
static FI void finish_q3(const float *x, uint8_t *y, const float *scales, const uint8_t *Lf)
{
    float max_scale = 0.0f, amax = 0.0f;
    for (int j = 0; j < 16; ++j) {
        const float a = __builtin_fabsf(scales[j]);
        if (a > amax) {
            amax = a;
            max_scale = scales[j];
        }
    }
    int code[16];
    uint8_t *sb = y + 96;
    memset(sb, 0, 12);
    uint16_t d = 0;
    if (max_scale != 0.0f) {
        const float iscale = -32.0f / max_scale;
        for (int j = 0; j < 16; ++j) {
            const float v = iscale * scales[j];
            const int c = clamp_int(s8_of(dt_ggml_nearest_int(v)), -32, 31) + 32;
            code[j] = c;
            if (j < 8)
                sb[j] = (uint8_t)(c & 0xF);
            else
                sb[j - 8] |= (uint8_t)((c & 0xF) << 4);
            sb[8 + j % 4] |= (uint8_t)((c >> 4) << (2 * (j / 4)));
        }
        d = dt_ggml_fp16(1.0f / iscale);
    } else {
        for (int j = 0; j < 16; ++j)
            code[j] = 0;
    }
    dt_ggml_wr16(y + 108, d);

    _Alignas(32) uint8_t L[256];
    const float D = dt_ggml_fp16_to_f32(d);
    for (int j = 0; j < 16; ++j) {
        const float dj = D * (float)(code[j] - 32);
        if (dj == 0.0f) {
            memcpy(L + 16 * j, Lf + 16 * j, 16);
            continue;
        }
        const __m512 q = _mm512_div_ps(_mm512_loadu_ps(x + 16 * j), _mm512_set1_ps(dj));
        _mm_storeu_si128((__m128i *)(L + 16 * j), _mm512_cvtepi32_epi8(nearest_code(q, -4, 3)));
    }
    /* the high bit of element e goes to bit e/32 of hmask[e % 32], the low 2 bits to qs */
    const __m256i four = _mm256_set1_epi8(4), three = _mm256_set1_epi8(3);
    __m256i hm = _mm256_setzero_si256();
    for (int b = 0; b < 8; ++b) {
        const __m256i v = _mm256_load_si256((const __m256i *)(L + 32 * b));
        const __m256i hi = _mm256_cmpeq_epi8(_mm256_and_si256(v, four), four);
        hm = _mm256_or_si256(hm, _mm256_and_si256(hi, _mm256_set1_epi8((char)(1 << b))));
        _mm256_store_si256((__m256i *)(L + 32 * b), _mm256_and_si256(v, three));
    }
    _mm256_storeu_si256((__m256i *)y, hm);
    pack_2bit(L, y + 32);
}

/* NG super-blocks (NG groups of 16 sub-blocks of 16) */
static FI void q3_chunk(const float *x, uint8_t *y, const float *next)
{
    _Alignas(64) V X[16], W2[16], WX[16], LV[16];
    load_lanes(x, 16, X);
    if (next)
        for (int p = 0; p < 16 * NG; ++p)
            _mm_prefetch((const char *)next + 64 * p, _MM_HINT_T0);
    V am = v1(0.0f), mx = am;
    for (int i = 0; i < 16; ++i) {
        W2[i] = vmul(X[i], X[i]);
        WX[i] = vmul(W2[i], X[i]);
        const V ax = vabs(X[i]);
        const K gt = VCMP(ax, am, _CMP_GT_OQ);
        am = vsel(am, gt, ax);
        mx = vsel(mx, gt, X[i]);
    }
    const K act = VCMP(am, v1(1e-15f), _CMP_GE_OQ); /* amax < GROUP_MAX_EPS: all zero */
    const V is = vdiv(v1(-4.0f), mx);
    V sumlx = v1(0.0f), suml2 = sumlx;
    for (int i = 0; i < 16; ++i) {
        const V l = nearest_float(vmul(is, X[i]), -4.0f, 3.0f);
        LV[i] = l;
        sumlx = vadd(sumlx, vmul(WX[i], l));
        suml2 = vadd(suml2, vmul(vmul(W2[i], l), l));
    }
    K run = act;
    for (int itry = 0; itry < 5 && kany(run); ++itry) {
        K changed = knone();
        for (int i = 0; i < 16; ++i) {
            const V l = LV[i];
            const V slx = vsub(sumlx, vmul(WX[i], l));
            const K c1 = VCMP(slx, v1(0.0f), _CMP_GT_OQ);
            const V sl2 = vsub(suml2, vmul(vmul(W2[i], l), l));
            const V nl = nearest_float(vdiv(vmul(X[i], sl2), slx), -4.0f, 3.0f);
            const K c2 = VCMP(nl, l, _CMP_NEQ_UQ);
            const V slxn = vadd(slx, vmul(WX[i], nl));
            const V sl2n = vadd(sl2, vmul(vmul(W2[i], nl), nl));
            const V lhs = vmul(vmul(slxn, slxn), suml2);
            const V rhs = vmul(vmul(sumlx, sumlx), sl2n);
            const K c3 = kand(VCMP(sl2n, v1(0.0f), _CMP_GT_OQ), VCMP(lhs, rhs, _CMP_GT_OQ));
            const K upd = kand(kand(run, c1), kand(c2, c3));
            LV[i] = vsel(l, upd, nl);
            sumlx = vsel(sumlx, upd, slxn);
            suml2 = vsel(suml2, upd, sl2n);
            changed = kor(changed, upd);
        }
        run = kand(run, changed);
    }
    const K pos = kand(act, VCMP(suml2, v1(0.0f), _CMP_GT_OQ));
    const V scale = vsel(v1(0.0f), pos, vdiv(sumlx, suml2));
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

FN void dt_ggml_quantize_q3_K_avx512(const float *x, uint8_t *y, size_t nb)
{
    for (; nb >= NG; nb -= NG, x += 256 * NG, y += 110 * NG)
        q3_chunk(x, y, nb >= 2 * NG ? x + 256 * NG : NULL);
    if (nb) {
        _Alignas(64) float xt[256 * NG];
        _Alignas(64) uint8_t yt[110 * NG];
        memset(xt, 0, sizeof xt);
        memcpy(xt, x, nb * 256 * sizeof(float));
        q3_chunk(xt, yt, NULL);
        memcpy(y, yt, nb * 110);
    }
}

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
