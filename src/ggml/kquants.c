/* The K-quant quantizers (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K: super-blocks of 256), byte for byte
 * what ggml's quantize_row_q*_K_ref write (ggml-quants.c; ggml_quantize_chunk without an
 * importance matrix), as an x86-64 build of ggml-base computes them (no fused multiply-adds).
 * docs/gguf.md ("Block types") and the research notes (gguf.md §4) state the algorithms.
 *
 * The rules that make the bytes match:
 *  - every sum is a sequential binary32 sum in index order, never reassociated;
 *  - every product is evaluated in ggml's order: w*x*l is (w*x)*l, w*l*l is (w*l)*l, w*l*x is
 *    (w*l)*x, s*L + m - x is ((s*L) + m) - x, ...; each binary32 operation is written as its own
 *    statement (a named float), so that the order is explicit, so that no expression holds a
 *    product and a sum a compiler could fuse (clang's default -ffp-contract=on fuses only within
 *    one expression; GCC's -std=c11 default is off; only -ffp-contract=fast, GCC's GNU-mode
 *    default, would fuse across statements: the build passes -ffp-contract=off), and so that a
 *    target evaluating floats in a wider format (FLT_EVAL_METHOD != 0) still rounds every result
 *    to binary32 (C11: assignment removes excess precision; one wider operation then one rounding
 *    to binary32 is the binary32 result for + - * / and sqrt);
 *  - a quotient is a division exactly where ggml divides ((x + m)/d, x/d: never x times 1/d),
 *    and a stored scale is formed as ggml forms it (Q2_K/Q4_K/Q5_K: max/15 or max/63; Q3_K,
 *    Q6_K, Q8_K: 1/iscale, the reciprocal of -32/max, -128/max, -127/max);
 *  - the comparisons that decide are ggml's, strict: the first element of largest |x| wins, a
 *    trial replaces the best only when strictly better;
 *  - the final pass of each type re-quantizes the elements with the scales as stored: the fp16
 *    super-scales read back (dt_ggml_fp16_to_f32) times the stored 4/6/8-bit sub-scales;
 *  - nearest_int is dt_ggml_nearest_int (the bits of v + 1.5*2^23, nearest even for |v| < 2^22;
 *    beyond that ggml asserts in debug builds and computes the same bits in release builds, so
 *    do we);
 *  - ggml stores ints in narrower fields by plain C conversions (int -> uint8_t, int -> int8_t,
 *    a negative int shifted left): here these are spelled as the two's-complement truncation an
 *    x86-64 build performs (u8_of, s8_of), which C defines.
 *
 * Non-finite intermediates (x near the float32 limits, scales overflowing fp16, reciprocals of
 * subnormal maxima) follow IEEE 754 exactly as in ggml: NaN fails every comparison, and
 * nearest_int(NaN) is 0 (a NaN made by an invalid operation has mantissa 0x400000 on every
 * common ISA) and nearest_int(+-Inf) is -2^22. No NaN reaches a stored scale: each is made from
 * a maximum found by strict comparisons (never NaN, never 0 where it is divided by). */
#include "ggml.h"
#include "kquants_scalar.h" /* clamp_int, u8_of, s8_of, signed_absmax, asym_levels; the scales */

#include <math.h>
#include <string.h>

/* ---- small helpers ----------------------------------------------------------------------- */

static inline void fill_u8(uint8_t *L, int n, uint8_t v)
{
    for (int i = 0; i < n; ++i)
        L[i] = v;
}

/* ---- make_qkx2_quants: levels 0..nmax with a scale and a min (Q2_K, Q4_K, Q5_K) ---------- */

/* sum_i w[i] * e(i), e = |scale*L + min - x| (mad) or its square, in index order */
static float asym_error(const float *x, const float *w, const uint8_t *L, int n, float scale,
                        float min, bool mad)
{
    float err = 0.0f;
    for (int i = 0; i < n; ++i) {
        const float sl = scale * (float)L[i];
        const float slm = sl + min;
        float diff = slm - x[i];
        if (mad) {
            diff = fabsf(diff);
        } else {
            const float sq = diff * diff;
            diff = sq;
        }
        const float wd = w[i] * diff;
        err += wd;
    }
    return err;
}

/* ggml's make_qkx2_quants(n, nmax, x, w, L, &the_min, Laux, rmin, rdelta, nstep, use_mad) with
 * nstep >= 1 (every caller): fits x ~ scale * L + min with min <= 0 and L in 0..nmax. Returns
 * the scale (0 for a constant sub-block) and stores -min in *neg_min. n <= 32.
 *
 * The first fit is iscale = nmax / (max - min) with max, min over x (min clamped to <= 0), scale
 * = 1 / iscale; then for is = 0..nstep the levels for iscale = (rmin + rdelta*is + nmax) /
 * (max - min) are refitted by weighted least squares (min forced to 0 when the fit makes it
 * positive) and kept when their error is strictly smaller. Subtle: a kept trial replaces min,
 * and the later trials' levels use it (in x - min and in max - min), as ggml's do. */
static float fit_scale_min(const float *x, const float *w, int n, int nmax, float rmin,
                           float rdelta, int nstep, bool mad, uint8_t *L, float *neg_min)
{
    float min = x[0], max = x[0];
    float sum_w = w[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min)
            min = x[i];
        if (x[i] > max)
            max = x[i];
        sum_w += w[i];
        const float wx = w[i] * x[i];
        sum_x += wx;
    }
    if (min > 0.0f)
        min = 0.0f;
    if (max == min) {
        fill_u8(L, n, 0);
        *neg_min = -min;
        return 0.0f;
    }
    const float range = max - min; /* +Inf for x near +-FLT_MAX: iscale 0, scale +Inf, as ggml */
    const float iscale = (float)nmax / range;
    float scale = 1.0f / iscale;
    asym_levels(x, n, nmax, iscale, min, L);
    float best = asym_error(x, w, L, n, scale, min, mad);

    uint8_t Laux[32];
    for (int is = 0; is <= nstep; ++is) {
        const float step = rdelta * (float)is;
        const float num0 = rmin + step;
        const float num = num0 + (float)nmax;
        /* min is the best fit's so far (ggml updates the variable its trials read): the range
         * is recomputed, not the first one */
        const float trial_range = max - min;
        const float trial_iscale = num / trial_range;
        asym_levels(x, n, nmax, trial_iscale, min, Laux);
        float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f;
        for (int i = 0; i < n; ++i) {
            const float l = (float)Laux[i];
            const float wl = w[i] * l;
            sum_l += wl;
            const float wll = wl * l;
            sum_l2 += wll;
            const float wlx = wl * x[i];
            sum_xl += wlx;
        }
        /* D = sum_w*sum_l2 - sum_l*sum_l */
        const float p1 = sum_w * sum_l2, p2 = sum_l * sum_l;
        const float D = p1 - p2;
        if (D > 0.0f) {
            /* this_scale = (sum_w*sum_xl - sum_x*sum_l) / D,
             * this_min = (sum_l2*sum_x - sum_l*sum_xl) / D */
            const float a1 = sum_w * sum_xl, a2 = sum_x * sum_l;
            const float an = a1 - a2;
            float this_scale = an / D;
            const float b1 = sum_l2 * sum_x, b2 = sum_l * sum_xl;
            const float bn = b1 - b2;
            float this_min = bn / D;
            if (this_min > 0.0f) {
                this_min = 0.0f;
                this_scale = sum_xl / sum_l2;
            }
            const float cur = asym_error(x, w, Laux, n, this_scale, this_min, mad);
            if (cur < best) {
                memcpy(L, Laux, (size_t)n);
                best = cur;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *neg_min = -min;
    return scale;
}

/* The sub-block fit of Q4_K and Q5_K (quantize_row_q4_K_ref / q5_K_ref): weights av + |x| with
 * av = sqrt(sum x^2 / 32) over the 32 elements. */
static float fit_q45_sub(const float *x, int nmax, float rmin, int nstep, uint8_t *L,
                         float *neg_min)
{
    float sum_x2 = 0.0f;
    for (int l = 0; l < 32; ++l) {
        const float sq = x[l] * x[l];
        sum_x2 += sq;
    }
    const float mean = sum_x2 / 32.0f;
    const float av_x = sqrtf(mean);
    float w[32];
    for (int l = 0; l < 32; ++l)
        w[l] = av_x + fabsf(x[l]);
    return fit_scale_min(x, w, 32, nmax, rmin, 0.1f, nstep, false, L, neg_min);
}

/* ---- make_qx_quants(n, nmax, x, L, 1, NULL): signed levels, weights x^2 (Q6_K) ----------- */

/* Levels l = clamp(nearest_int(iscale*x), -nmax, nmax-1) (stored l + nmax in L) and the sums
 * sum (x^2*x)*l and sum (x^2*l)*l, in index order. */
static void signed_fit_sums(const float *x, int n, int nmax, float iscale, int8_t *L,
                            float *sumlx, float *suml2)
{
    float slx = 0.0f, sl2 = 0.0f;
    for (int i = 0; i < n; ++i) {
        const float v = iscale * x[i];
        const int li = clamp_int(dt_ggml_nearest_int(v), -nmax, nmax - 1);
        L[i] = (int8_t)(li + nmax);
        const float l = (float)li;
        const float w = x[i] * x[i];
        const float wx = w * x[i];
        const float wxl = wx * l;
        slx += wxl;
        const float wl = w * l;
        const float wll = wl * l;
        sl2 += wll;
    }
    *sumlx = slx;
    *suml2 = sl2;
}

/* ggml's make_qx_quants with rmse_type 1 and no importance weights: the levels of iscale =
 * -nmax/max (max = the first element of largest |x|, with its sign), then the 18 trials
 * -(nmax + 0.1*is)/max for is = -9..9, is != 0, a trial kept when suml2 > 0 and
 * sumlx^2 > best * suml2 (strict), best = scale * sumlx of the kept one. Returns the
 * least-squares scale sumlx/suml2 of the kept levels (0 for an all-zero sub-block, whose L are
 * then 0, not nmax). n <= 16. */
static float fit_signed_x2(const float *x, int n, int nmax, int8_t *L)
{
    float amax;
    const float max = signed_absmax(x, n, &amax);
    if (amax < GROUP_MAX_EPS) {
        memset(L, 0, (size_t)n);
        return 0.0f;
    }
    float sumlx, suml2;
    const float iscale = (float)(-nmax) / max;
    signed_fit_sums(x, n, nmax, iscale, L, &sumlx, &suml2);
    float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f; /* ggml: suml2 ? ... (NaN is true) */
    float best = scale * sumlx;

    int8_t Lt[16];
    for (int is = -9; is <= 9; ++is) {
        if (is == 0)
            continue;
        const float step = 0.1f * (float)is;
        const float num = (float)nmax + step;
        const float neg = -num;
        const float trial_iscale = neg / max;
        signed_fit_sums(x, n, nmax, trial_iscale, Lt, &sumlx, &suml2);
        const float lhs = sumlx * sumlx, rhs = best * suml2;
        if (suml2 > 0.0f && lhs > rhs) {
            memcpy(L, Lt, (size_t)n);
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

/* ---- make_q3_quants(n, nmax, x, L, true): signed levels refined by coordinate descent ---- */

/* ggml's make_q3_quants with do_rmse (Q3_K): the levels of iscale = -nmax/max, weights x^2,
 * then up to 5 sweeps in index order: element i's term removed, if the remaining sumlx > 0 the
 * level nearest_int((x*sl2)/slx) clamped to [-nmax, nmax-1] is proposed and taken when the new
 * sl2 > 0 and (slx^2)*suml2 > (sumlx^2)*sl2 (strict; the products in that order); a sweep
 * without a change ends it. L receives level + nmax; returns sumlx/suml2 (0 when suml2 <= 0 or
 * for an all-zero sub-block, whose L are then 0). n <= 16. */
static float fit_signed_q3(const float *x, int n, int nmax, int8_t *L)
{
    float amax;
    const float max = signed_absmax(x, n, &amax);
    if (amax < GROUP_MAX_EPS) {
        memset(L, 0, (size_t)n);
        return 0.0f;
    }
    const float iscale = (float)(-nmax) / max;
    int lv[16]; /* the signed levels */
    float sumlx = 0.0f, suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
        const float v = iscale * x[i];
        lv[i] = clamp_int(dt_ggml_nearest_int(v), -nmax, nmax - 1);
        const float l = (float)lv[i];
        const float w = x[i] * x[i];
        const float wx = w * x[i];
        const float wxl = wx * l;
        sumlx += wxl;
        const float wl = w * l;
        const float wll = wl * l;
        suml2 += wll;
    }
    for (int itry = 0; itry < 5; ++itry) {
        int changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = x[i] * x[i];
            const float wx = w * x[i];
            const float l = (float)lv[i];
            const float wxl = wx * l;
            float slx = sumlx - wxl;
            if (!(slx > 0.0f))
                continue;
            const float wl = w * l;
            const float wll = wl * l;
            float sl2 = suml2 - wll;
            const float xs = x[i] * sl2;
            const float q = xs / slx;
            const int nl = clamp_int(dt_ggml_nearest_int(q), -nmax, nmax - 1);
            if (nl == lv[i])
                continue;
            const float fl = (float)nl;
            const float wxn = wx * fl;
            slx += wxn;
            const float wn = w * fl;
            const float wnn = wn * fl;
            sl2 += wnn;
            const float s2 = slx * slx, lhs = s2 * suml2;
            const float o2 = sumlx * sumlx, rhs = o2 * sl2;
            if (sl2 > 0.0f && lhs > rhs) {
                lv[i] = nl;
                sumlx = slx;
                suml2 = sl2;
                ++changed;
            }
        }
        if (!changed)
            break;
    }
    for (int i = 0; i < n; ++i)
        L[i] = (int8_t)(lv[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

/* ---- the per-type quantizers ---------------------------------------------------------------- */

/* The final pass of Q3_K and Q6_K for 16 elements: L[l] = clamp(nearest_int(x[l] / d), -nmax,
 * nmax - 1) + nmax */
static void signed_levels16(const float *x, float d, int nmax, int8_t *L)
{
    for (int l = 0; l < 16; ++l) {
        const float q = x[l] / d;
        L[l] = (int8_t)(clamp_int(dt_ggml_nearest_int(q), -nmax, nmax - 1) + nmax);
    }
}

/* Four 2-bit planes: byte 32*h + l of qs holds L[128h + l + 32k] in bits 2k..2k+1 (Q2_K, Q3_K) */
static void pack_2bit(const uint8_t *L, uint8_t *qs)
{
    for (int h = 0; h < 2; ++h) {
        const uint8_t *Lh = L + 128 * h;
        for (int l = 0; l < 32; ++l)
            qs[32 * h + l] = (uint8_t)(Lh[l] | Lh[l + 32] << 2 | Lh[l + 64] << 4 | Lh[l + 96] << 6);
    }
}

/* Q2_K (quantize_row_q2_K_ref): 16 sub-blocks of 16, make_qkx2_quants(16, 3, weights |x|,
 * rmin -0.5, rdelta 0.1, nstep 15, absolute error); sub-scales and mins as 4-bit codes of
 * max/15. Block: scales[16] (low nibble scale, high nibble min) @0, qs[64] @16, d @80,
 * dmin @82. */
void dt_ggml_quantize_q2_K(const float *x, uint8_t *y, size_t nb)
{
    for (size_t ib = 0; ib < nb; ++ib, x += DT_QK_K, y += 84) {
        uint8_t L[DT_QK_K];
        float scales[16], mins[16];
        for (int j = 0; j < 16; ++j) {
            float w[16];
            for (int l = 0; l < 16; ++l)
                w[l] = fabsf(x[16 * j + l]);
            scales[j] = fit_scale_min(x + 16 * j, w, 16, 3, -0.5f, 0.1f, 15, true, L + 16 * j,
                                      &mins[j]);
        }
        float D, M;
        q2k_scales(scales, mins, y, &D, &M);
        const uint8_t *sc = y;

        /* the final pass with the stored scales; a sub-block whose scale is 0 (or -0) keeps the
         * levels of its fit (a NaN scale, Inf * 0, re-quantizes: nearest_int(NaN) = 0) */
        for (int j = 0; j < 16; ++j) {
            const float dj = D * (float)(sc[j] & 0xF);
            if (dj == 0.0f)
                continue;
            const float mj = M * (float)(sc[j] >> 4);
            for (int l = 0; l < 16; ++l) {
                const float s = x[16 * j + l] + mj;
                const float q = s / dj;
                L[16 * j + l] = (uint8_t)clamp_int(dt_ggml_nearest_int(q), 0, 3);
            }
        }
        pack_2bit(L, y + 16);
    }
}

/* Q3_K (quantize_row_q3_K_ref): 16 sub-blocks of 16, make_q3_quants(16, 4, do_rmse); signed
 * 6-bit sub-scales of the scale of largest magnitude (-32 / it). Block: hmask[32] @0,
 * qs[64] @32, scales[12] @96, d @108. */
void dt_ggml_quantize_q3_K(const float *x, uint8_t *y, size_t nb)
{
    for (size_t ib = 0; ib < nb; ++ib, x += DT_QK_K, y += 110) {
        int8_t Ls[DT_QK_K];
        float scales[16];
        for (int j = 0; j < 16; ++j)
            scales[j] = fit_signed_q3(x + 16 * j, 16, 4, Ls + 16 * j);
        /* codes 0..63 = clamp(nearest_int(iscale*scale), -32, 31) + 32 */
        int code[16];
        const float D = q3k_scales(scales, y, code);

        /* the final pass: d_j = f32(d) * (code - 32); 0 keeps the fitted levels */
        for (int j = 0; j < 16; ++j) {
            const float dj = D * (float)(code[j] - 32);
            if (dj != 0.0f)
                signed_levels16(x + 16 * j, dj, 4, Ls + 16 * j);
        }

        /* the high bit of element e goes to bit e/32 of hmask[e % 32], the low 2 bits to qs */
        uint8_t *hmask = y, L[DT_QK_K];
        memset(hmask, 0, 32);
        for (int e = 0; e < DT_QK_K; ++e) {
            int l = Ls[e]; /* 0..7 */
            if (l > 3) {
                hmask[e % 32] |= (uint8_t)(1u << (e / 32));
                l -= 4;
            }
            L[e] = (uint8_t)l;
        }
        pack_2bit(L, y + 32);
    }
}

/* What Q4_K and Q5_K share (quantize_row_q4_K_ref, quantize_row_q5_K_ref): 8 sub-blocks of 32
 * fitted by make_qkx2_quants(32, nmax, weights av + |x|, rmin, 0.1, nstep, squared error),
 * 6-bit codes min(63, nearest_int((63/max)*v)) (stored as uint8_t first: the low 8 bits), d =
 * fp16(max_scale/63), dmin = fp16(max_min/63) written at y, y + 2 and the codes at y + 4; then the
 * levels L (0..nmax) re-quantized with the stored scales. */
static void quantize_q45_block(const float *x, uint8_t *y, int nmax, float rmin, int nstep,
                               uint8_t *L)
{
    float scales[8], mins[8];
    for (int j = 0; j < 8; ++j)
        scales[j] = fit_q45_sub(x + 32 * j, nmax, rmin, nstep, L + 32 * j, &mins[j]);
    uint8_t ls[8], lm[8];
    float D, M;
    q45_scales(scales, mins, y, ls, lm, &D, &M);

    /* the final pass: d_j = f32(d) * code, m_j = f32(dmin) * code; d_j = 0 keeps the fit */
    for (int j = 0; j < 8; ++j) {
        const float dj = D * (float)ls[j];
        if (dj == 0.0f)
            continue;
        const float mj = M * (float)lm[j];
        for (int l = 0; l < 32; ++l) {
            const float s = x[32 * j + l] + mj;
            const float q = s / dj;
            L[32 * j + l] = (uint8_t)clamp_int(dt_ggml_nearest_int(q), 0, nmax);
        }
    }
}

/* Q4_K: nmax 15, rmin -1, nstep 20. Block: d @0, dmin @2, scales[12] @4, qs[128] @16 (byte
 * 32p + l: L[64p + l] low nibble, L[64p + 32 + l] high). */
void dt_ggml_quantize_q4_K(const float *x, uint8_t *y, size_t nb)
{
    for (size_t ib = 0; ib < nb; ++ib, x += DT_QK_K, y += 144) {
        uint8_t L[DT_QK_K];
        quantize_q45_block(x, y, 15, -1.0f, 20, L);
        uint8_t *qs = y + 16;
        for (int p = 0; p < 4; ++p)
            for (int l = 0; l < 32; ++l)
                qs[32 * p + l] = (uint8_t)(L[64 * p + l] | L[64 * p + 32 + l] << 4);
    }
}

/* Q5_K: nmax 31, rmin -0.5, nstep 15. Block: d @0, dmin @2, scales[12] @4, qh[32] @16 (bit b of
 * qh[l]: bit 4 of L[32b + l]), qs[128] @48 (the low 4 bits, as Q4_K). */
void dt_ggml_quantize_q5_K(const float *x, uint8_t *y, size_t nb)
{
    for (size_t ib = 0; ib < nb; ++ib, x += DT_QK_K, y += 176) {
        uint8_t L[DT_QK_K];
        quantize_q45_block(x, y, 31, -0.5f, 15, L);
        uint8_t *qh = y + 16, *qs = y + 48;
        memset(qh, 0, 32);
        for (int p = 0; p < 4; ++p) {
            for (int l = 0; l < 32; ++l) {
                const int lo = L[64 * p + l], hi = L[64 * p + 32 + l];
                qh[l] |= (uint8_t)((lo >> 4) << (2 * p) | (hi >> 4) << (2 * p + 1));
                qs[32 * p + l] = (uint8_t)((lo & 0xF) | (hi & 0xF) << 4);
            }
        }
    }
}

/* Q6_K (quantize_row_q6_K_ref): 16 sub-blocks of 16, make_qx_quants(16, 32, rmse_type 1);
 * int8 sub-scales min(127, nearest_int(iscale*scale)), iscale = -128 / (the scale of largest
 * magnitude); a block whose largest |scale| is below 1e-15 is all zero bytes. Block: ql[128] @0,
 * qh[64] @128, scales[16] (int8) @192, d @208. */
void dt_ggml_quantize_q6_K(const float *x, uint8_t *y, size_t nb)
{
    for (size_t ib = 0; ib < nb; ++ib, x += DT_QK_K, y += 210) {
        int8_t L[DT_QK_K];
        float scales[16];
        for (int j = 0; j < 16; ++j)
            scales[j] = fit_signed_x2(x + 16 * j, 16, 32, L + 16 * j);
        int sc[16];
        float D;
        if (!q6k_scales(scales, y, sc, &D))
            continue; /* all zero bytes */

        /* the final pass: d_j = f32(d) * sc; 0 keeps the fitted levels */
        for (int j = 0; j < 16; ++j) {
            const float dj = D * (float)sc[j];
            if (dj != 0.0f)
                signed_levels16(x + 16 * j, dj, 32, L + 16 * j);
        }

        /* per half h: ql[64h + l] = low nibbles of L[128h + l] | L[128h + l + 64] << 4,
         * ql[64h + 32 + l] = L[128h + l + 32] | L[128h + l + 96] << 4, qh[32h + l] = the top 2
         * bits of the four in bit pairs 0, 2, 4, 6 */
        uint8_t *ql = y, *qh = y + 128;
        for (int h = 0; h < 2; ++h) {
            const int8_t *Lh = L + 128 * h;
            for (int l = 0; l < 32; ++l) {
                const int q1 = Lh[l], q2 = Lh[l + 32], q3 = Lh[l + 64], q4 = Lh[l + 96];
                ql[64 * h + l] = (uint8_t)((q1 & 0xF) | (q3 & 0xF) << 4);
                ql[64 * h + 32 + l] = (uint8_t)((q2 & 0xF) | (q4 & 0xF) << 4);
                qh[32 * h + l] =
                    (uint8_t)(q1 >> 4 | (q2 >> 4) << 2 | (q3 >> 4) << 4 | (q4 >> 4) << 6);
            }
        }
    }
}

/* Q8_K (quantize_row_q8_K_ref): iscale = -127 / max (max = the first element of largest |x|,
 * with its sign), q = min(127, nearest_int(iscale*x)) stored in an int8_t, d = 1/iscale as
 * float32, bsums[16] = the int16 sums of 16 consecutive q. An all-zero block is d = 0, q = 0,
 * bsums 0 (ggml leaves bsums unwritten there; 0 is their value). Block: d @0, qs[256] @4,
 * bsums[16] @260. */
void dt_ggml_quantize_q8_K(const float *x, uint8_t *y, size_t nb)
{
    for (size_t ib = 0; ib < nb; ++ib, x += DT_QK_K, y += 292) {
        float amax;
        const float max = signed_absmax(x, DT_QK_K, &amax);
        if (amax == 0.0f) {
            memset(y, 0, 292);
            continue;
        }
        const float iscale = -127.0f / max;
        int q[DT_QK_K];
        for (int j = 0; j < DT_QK_K; ++j) {
            const float v = iscale * x[j];
            const int c = dt_ggml_nearest_int(v);
            q[j] = s8_of(c < 127 ? c : 127);
            y[4 + j] = u8_of(q[j]);
        }
        for (int j = 0; j < 16; ++j) {
            int sum = 0;
            for (int l = 0; l < 16; ++l)
                sum += q[16 * j + l];
            dt_ggml_wr16(y + 260 + 2 * j, (uint16_t)(unsigned)sum);
        }
        dt_ggml_wr32(y, dt_ggml_bits_of(1.0f / iscale));
    }
}
