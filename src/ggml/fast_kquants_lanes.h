/* What the two fast paths of the K-quant quantizers (fast_kquants_avx2.c, fast_kquants_avx512.c)
 * share: the per-lane searches, written once over each file's vector primitives, and the steps
 * after the fits (kquants_scalar.h's scale codes, the final levels, the bytes of a block). The
 * method, and why it is kquants.c's bytes exactly, is in fast_kquants_avx512.c's opening
 * comment; nothing here reorders a binary32 operation of it.
 *
 * Included once by each of the two files (the only place it is valid), after the file has
 * defined for its lanes:
 *   NG, LANES, VALIGN   groups in lockstep, lanes per vector (8, 16), bytes per vector
 *   FN, FI              the attributes of an entry point and of an inlined piece
 *   V, K, EACH          NG vectors (member v[NG]) and lane masks; the loop over the groups (g_)
 *   v1 vadd vsub vmul vdiv vmin vmax vabs vsqrt vneg vsel(x, k, y) (k ? y : x)
 *   VCMP(x, y, p) for p in _CMP_GT_OQ _CMP_LT_OQ _CMP_GE_OQ _CMP_NLT_UQ _CMP_NEQ_UQ
 *   kand kandn(x, y) (~x & y) kor kall knone kany
 *   LV_LO LV_HI LV_EX (the level modes: clamp at 0, at nmax, emulate nearest_int's bits) and
 *   optionally LV_PERM, PERM_LO (a mode that looks the levels up, for nmax 3 and 15: those in
 *   [PERM_LO, PERM_LO + 31]); perm_tab, perm_table(nmax) (its table: an empty one without it)
 *   level(x, is, mn, mode, nmax, tab) (make_qkx2_quants' levels in a mode exact for the lanes),
 *   qx_level1 (one vector of Q6_K's levels), nearest_float (clamped nearest_int, any input)
 *   load_lanes(x, n, X) (element k of LANES * NG sub-blocks of n at x in X[k]), store_v
 *   final32m(x, m, d, nmax, L), final16m(x, m, d, lo, hi, L), final16(x, d, lo, hi, L): the
 *   final levels clamp(nearest_int((x + m) / d), lo, hi) - lo (0..nmax) of 32 or 16 elements,
 *   or of x / d, as bytes
 * The bytes are assembled with AVX2 instructions, which both targets have. */
#ifndef DTCAST_GGML_FAST_KQUANTS_LANES_H
#define DTCAST_GGML_FAST_KQUANTS_LANES_H
#if defined(__x86_64__) && defined(__GNUC__) /* x86-64 intrinsics: the fast paths only */

#include "kquants_scalar.h"

#include <immintrin.h>
#include <string.h>

/* ---- make_qkx2_quants per lane (Q2_K, Q4_K, Q5_K) ------------------------------------------ */

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
#ifdef LV_PERM
    if (nmax == 15.0f || nmax == 3.0f) { /* every rounded level in [PERM_LO, PERM_LO + 31] */
        const K in = kand(VCMP(dn, v1((float)PERM_LO - 0.5f), _CMP_GE_OQ),
                          VCMP(up, v1((float)PERM_LO + 31.5f), _CMP_LT_OQ));
        if (!kany(kandn(in, act)))
            return LV_PERM;
    }
#endif
    int mode = 0;
    if (kany(kand(act, VCMP(dn, v1(-0.5f), _CMP_LT_OQ))))
        mode |= LV_LO;
    if (kany(kand(act, VCMP(up, v1(nmax + 0.5f), _CMP_NLT_UQ))))
        mode |= LV_HI;
    return mode;
}

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
#ifdef LV_PERM
    case LV_PERM: levels_only(X, n, is, mn, LV_PERM, nmax, LA); break;
#endif
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
#ifdef LV_PERM
    case LV_PERM: return levels_sums(X, W, n, is, mn, LV_PERM, nmax, LA);
#endif
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

/* kquants.c's fit_scale_min for every lane (nstep >= 1); pf: the next run's input, pf_lines
 * cache lines of it prefetched over the trials */
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

/* ---- make_qx_quants(16, 32, rmse_type 1) (Q6_K) and make_q3_quants(16, 4, do_rmse) (Q3_K) -- */

/* The first element of largest |x| (strict >) per lane, *am its magnitude and *mx its value,
 * and the weights x^2 and x^2 * x; returns the lanes not all zero (amax >= GROUP_MAX_EPS) */
static FI K absmax_weights(const V *X, V *W2, V *WX, V *am_out, V *mx_out)
{
    V am = v1(0.0f), mx = am;
    for (int i = 0; i < 16; ++i) {
        W2[i] = vmul(X[i], X[i]);
        WX[i] = vmul(W2[i], X[i]);
        const V ax = vabs(X[i]);
        const K gt = VCMP(ax, am, _CMP_GT_OQ);
        am = vsel(am, gt, ax);
        mx = vsel(mx, gt, X[i]);
    }
    *am_out = am;
    *mx_out = mx;
    return VCMP(am, v1(GROUP_MAX_EPS), _CMP_GE_OQ);
}

/* The cheapest level mode exact for every active lane: the products are bounded by |is| * amax */
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

/* kquants.c's fit_signed_x2 for every lane: returns the scale (0 for an inactive lane), *bis_out
 * the iscale of its levels. The trial of step k (-9..9, not 0) prefetches the NG cache lines
 * (k + pf_base) NG.. of pf where k + pf_base >= 0. */
static FI V q6_search(const V *X, const V *W2, const V *WX, V am, V mx, K act, const char *pf,
                      int pf_base, V *bis_out)
{
    const V is0 = vdiv(v1(-32.0f), mx);
    sums2 s = qx_sums_any(X, W2, WX, is0, qx_mode(is0, am, act));
    V scale = vsel(v1(0.0f), VCMP(s.l2, v1(0.0f), _CMP_NEQ_UQ), vdiv(s.lx, s.l2));
    V best = vmul(scale, s.lx);
    V bis = is0;
    for (int k = -9; k <= 9; ++k) {
        if (k == 0)
            continue;
        const float step = 0.1f * (float)k;
        const float num = 32.0f + step;
        const float neg = -num;
        const V tis = vdiv(v1(neg), mx);
        if (pf && k + pf_base >= 0) /* the next run's input, spread over the trials */
            for (int p = (k + pf_base) * NG; p < (k + pf_base + 1) * NG; ++p)
                _mm_prefetch(pf + 64 * p, _MM_HINT_T0);
        s = qx_sums_any(X, W2, WX, tis, qx_mode(tis, am, act));
        const V lhs = vmul(s.lx, s.lx), rhs = vmul(best, s.l2);
        const K keep =
            kand(act, kand(VCMP(s.l2, v1(0.0f), _CMP_GT_OQ), VCMP(lhs, rhs, _CMP_GT_OQ)));
        if (kany(keep)) {
            const V ns = vdiv(s.lx, s.l2);
            scale = vsel(scale, keep, ns);
            best = vsel(best, keep, vmul(ns, s.lx));
            bis = vsel(bis, keep, tis);
        }
    }
    *bis_out = bis;
    return vsel(scale, kandn(act, kall()), v1(0.0f));
}

/* kquants.c's fit_signed_q3 for every lane: the coordinate descent, element by element, a lane
 * updating where the scalar code would and stopping after a sweep without change. LV receives
 * the levels (-4..3); returns the scale (0 where suml2 <= 0 or for an inactive lane). */
static FI V q3_search(const V *X, const V *W2, const V *WX, V mx, K act, V *LV)
{
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
    return vsel(v1(0.0f), pos, vdiv(sumlx, suml2));
}

/* ---- the bytes of a block from its levels L[256] (32-byte aligned) -------------------------- */

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

/* Q4_K's qs at y + 16 (levels 0..15) or Q5_K's qh at y + 16 and qs at y + 48 (levels 0..31) */
static FI void pack_q45(const uint8_t *L, uint8_t *y, int q5)
{
    if (!q5) {
        for (int p = 0; p < 4; ++p) {
            const __m256i lo = _mm256_load_si256((const __m256i *)(L + 64 * p));
            const __m256i hi = _mm256_load_si256((const __m256i *)(L + 64 * p + 32));
            _mm256_storeu_si256((__m256i *)(y + 16 + 32 * p),
                                _mm256_or_si256(lo, _mm256_slli_epi16(hi, 4)));
        }
        return;
    }
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
        _mm256_storeu_si256((__m256i *)(y + 48 + 32 * p), q);
    }
    _mm256_storeu_si256((__m256i *)(y + 16), qh);
}

/* Q6_K's ql[128] at y and qh[64] at y + 128 (levels 0..63) */
static FI void pack_q6(const uint8_t *L, uint8_t *y)
{
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

/* Q3_K's hmask[32] at y and qs[64] at y + 32 (levels 0..7; L is overwritten) */
static FI void pack_q3(uint8_t *L, uint8_t *y)
{
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

/* ---- each super-block after its sub-block fits: kquants.c's code -------------------------- *
 * The scale codes and fp16 scales (kquants_scalar.h), then the final levels with the scales as
 * stored, vectorized across the elements; a sub-block whose scale is 0 keeps the levels of its
 * fit, recomputed from the iscale and min the search kept (or copied, Q3_K). */

/* quantize_q45_block after the fits (scale, -min, and the fit's iscale and min per sub-block) */
static FI void finish_q45(const float *x, uint8_t *y, int nmax, const float *sc, const float *nm,
                          const float *lis, const float *lmn, uint8_t *L)
{
    uint8_t ls[8], lm[8];
    float D, M;
    q45_scales(sc, nm, y, ls, lm, &D, &M);
    for (int j = 0; j < 8; ++j) {
        const float dj = D * (float)ls[j];
        if (dj == 0.0f) {
            asym_levels(x + 32 * j, 32, nmax, lis[j], lmn[j], L + 32 * j);
            continue;
        }
        const float mj = M * (float)lm[j];
        final32m(x + 32 * j, mj, dj, nmax, L + 32 * j);
    }
}

/* dt_ggml_quantize_q2_K after the fits */
static FI void finish_q2(const float *x, uint8_t *y, const float *scales, const float *mins,
                         const float *lis, const float *lmn)
{
    _Alignas(32) uint8_t L[256];
    float D, M;
    q2k_scales(scales, mins, y, &D, &M);
    const uint8_t *sc = y;
    for (int j = 0; j < 16; ++j) {
        const float dj = D * (float)(sc[j] & 0xF);
        if (dj == 0.0f) {
            asym_levels(x + 16 * j, 16, 3, lis[j], lmn[j], L + 16 * j);
            continue;
        }
        const float mj = M * (float)(sc[j] >> 4);
        final16m(x + 16 * j, mj, dj, 0, 3, L + 16 * j);
    }
    pack_2bit(L, y + 16);
}

/* dt_ggml_quantize_q6_K after the fits (scale and iscale per sub-block; act: bit j set where
 * sub-block j is not all zero) */
static FI void finish_q6(const float *x, uint8_t *y, const float *scales, const float *bis,
                         unsigned act)
{
    int sc[16];
    float D;
    if (!q6k_scales(scales, y, sc, &D))
        return;
    _Alignas(32) uint8_t L[256];
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
        final16(x + 16 * j, dj, -32, 31, L + 16 * j);
    }
    pack_q6(L, y);
}

/* dt_ggml_quantize_q3_K after the fits; Lf: the fitted levels + 4 */
static FI void finish_q3(const float *x, uint8_t *y, const float *scales, const uint8_t *Lf)
{
    int code[16];
    const float D = q3k_scales(scales, y, code);
    _Alignas(32) uint8_t L[256];
    for (int j = 0; j < 16; ++j) {
        const float dj = D * (float)(code[j] - 32);
        if (dj == 0.0f) {
            memcpy(L + 16 * j, Lf + 16 * j, 16);
            continue;
        }
        final16(x + 16 * j, dj, -4, 3, L + 16 * j);
    }
    pack_q3(L, y);
}

/* ---- Q4_K / Q5_K: Q45_PER super-blocks a chunk (NG groups of LANES sub-blocks of 32) ------- */

#define Q45_PER (LANES * NG / 8)

static FI void q45_chunk(const float *x, uint8_t *y, int q5, const float *next)
{
    const int nmax = q5 ? 31 : 15, nstep = q5 ? 15 : 20;
    const float rmin = q5 ? -0.5f : -1.0f;
    _Alignas(VALIGN) V X[32], W[32], LA[32];
    load_lanes(x, 32, X);
    /* weights av + |x|, av = sqrt(sum x^2 / 32) */
    V s2 = v1(0.0f);
    for (int i = 0; i < 32; ++i)
        s2 = vadd(s2, vmul(X[i], X[i]));
    const V av = vsqrt(vdiv(s2, v1(32.0f)));
    for (int i = 0; i < 32; ++i)
        W[i] = vadd(av, vabs(X[i]));
    const fit_out f = fit_lanes(X, W, 32, nmax, rmin, 0.1f, nstep, 0, LA, (const char *)next,
                                16 * Q45_PER);
    _Alignas(VALIGN) float sc[LANES * NG], nm[LANES * NG], lis[LANES * NG], lmn[LANES * NG];
    store_v(sc, f.scale);
    store_v(nm, f.neg_min);
    store_v(lis, f.lis);
    store_v(lmn, f.lmn);

    const size_t bytes = q5 ? 176 : 144;
    for (int b = 0; b < Q45_PER; ++b) {
        const float *xb = x + 256 * b;
        uint8_t *yb = y + bytes * (size_t)b;
        _Alignas(32) uint8_t L[256];
        finish_q45(xb, yb, nmax, sc + 8 * b, nm + 8 * b, lis + 8 * b, lmn + 8 * b, L);
        pack_q45(L, yb, q5);
    }
}
static FI void q4_chunk(const float *x, uint8_t *y, const float *next)
{
    q45_chunk(x, y, 0, next);
}
static FI void q5_chunk(const float *x, uint8_t *y, const float *next)
{
    q45_chunk(x, y, 1, next);
}

/* The entry point name(x, y, nb) of a type of `bytes` bytes a block whose chunk(x, y, next)
 * quantizes `per` blocks (next: the following chunk's input while one follows it, for its
 * prefetches); the tail padded with zero blocks. */
#define CHUNK_ROWS(name, bytes, per, chunk)                                                    \
    FN void name(const float *x, uint8_t *y, size_t nb)                                        \
    {                                                                                          \
        for (; nb >= (per); nb -= (per), x += 256 * (per), y += (bytes) * (per))               \
            chunk(x, y, nb >= 2 * (per) ? x + 256 * (per) : NULL);                             \
        if (nb) {                                                                              \
            _Alignas(VALIGN) float xt[256 * (per)];                                            \
            _Alignas(VALIGN) uint8_t yt[(bytes) * (per)];                                      \
            memset(xt, 0, sizeof xt);                                                          \
            memcpy(xt, x, nb * 256 * sizeof(float));                                           \
            chunk(xt, yt, NULL);                                                               \
            memcpy(y, yt, nb * (bytes));                                                       \
        }                                                                                      \
    }

#endif /* x86-64 */
#endif /* DTCAST_GGML_FAST_KQUANTS_LANES_H */
