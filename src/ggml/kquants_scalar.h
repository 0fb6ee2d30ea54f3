/* The scalar steps of the K-quant quantizers that the reference (kquants.c) and the fast paths
 * (fast_kquants_avx2.c, fast_kquants_avx512.c, through fast_kquants_lanes.h) share: the
 * narrowing conversions, the levels of an asymmetric fit, and per type what follows the sub-block
 * fits: the sub-scale codes and the fp16 super-scales written into the block, and those scales
 * read back for the final pass. Plain C, every binary32 operation its own statement in ggml's
 * order (kquants.c's opening comment states the rules); compiled inside each including file. */
#ifndef DTCAST_GGML_KQUANTS_SCALAR_H
#define DTCAST_GGML_KQUANTS_SCALAR_H

#include "ggml.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#define GROUP_MAX_EPS 1e-15f /* ggml's GROUP_MAX_EPS: a sub-block below it in |x| is zero */

/* The steps after the fits are always inlined into their callers (the fast paths' inlined block
 * finishers), as when they were written there: left to GCC's own inlining, the AVX2 Q3_K path
 * ran 4% slower (the same instructions executed, laid out otherwise). */
#if defined(__GNUC__)
#define KQ_STEP __attribute__((always_inline)) static inline
#else
#define KQ_STEP static inline
#endif

static inline int clamp_int(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v; /* ggml's MAX(lo, MIN(hi, v)) */
}

/* int -> uint8_t / int8_t as ggml's implicit conversions do on its targets: the low 8 bits */
static inline uint8_t u8_of(int v)
{
    return (uint8_t)((unsigned)v & 0xFFu);
}
static inline int s8_of(int v)
{
    const int b = (int)((unsigned)v & 0xFFu);
    return b < 128 ? b : b - 256;
}

/* The first element of largest |x| (strict >, so the earliest wins), with its sign; *amax gets
 * its magnitude (0 when every element is +-0). The scan that opens make_qx_quants,
 * make_q3_quants and quantize_row_q8_K_ref, and that picks Q3_K's and Q6_K's largest scale. */
KQ_STEP float signed_absmax(const float *x, int n, float *amax)
{
    float max = 0.0f, am = 0.0f;
    for (int i = 0; i < n; ++i) {
        const float ax = fabsf(x[i]);
        if (ax > am) {
            am = ax;
            max = x[i];
        }
    }
    *amax = am;
    return max;
}

/* The largest of n scales and of their mins (-min) by strict > from 0: a NaN never becomes one
 * (Q2_K, Q4_K, Q5_K) */
KQ_STEP void max_scale_min(const float *scales, const float *mins, int n, float *max_scale,
                           float *max_min)
{
    float ms = 0.0f, mm = 0.0f;
    for (int j = 0; j < n; ++j) {
        if (scales[j] > ms)
            ms = scales[j];
        if (mins[j] > mm)
            mm = mins[j];
    }
    *max_scale = ms;
    *max_min = mm;
}

/* L[i] = clamp(nearest_int(iscale * (x[i] - min)), 0, nmax) */
static inline void asym_levels(const float *x, int n, int nmax, float iscale, float min,
                               uint8_t *L)
{
    for (int i = 0; i < n; ++i) {
        const float d = x[i] - min;
        const float v = iscale * d;
        L[i] = (uint8_t)clamp_int(dt_ggml_nearest_int(v), 0, nmax);
    }
}

/* The 12 bytes of 6-bit scales and mins of Q4_K and Q5_K (ggml's get_scale_min_k4 inverted):
 * sub-blocks 0..3 in the low 6 bits of bytes j (scale) and j+4 (min); 4..7 as nibbles of byte
 * j+4 (scale low, min high) with their top 2 bits in bits 6..7 of bytes j-4 (scale) and j (min). */
static inline void pack_scale_min_k4(const uint8_t *ls, const uint8_t *lm, uint8_t *s)
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

/* Q4_K and Q5_K after the fits of the 8 sub-blocks (scale, -min): the 6-bit codes
 * min(63, nearest_int((63/max)*v)) (stored as uint8_t first: the low 8 bits) into ls and lm,
 * d = fp16(max_scale/63) and dmin = fp16(max_min/63) written at y, y + 2 and the codes at y + 4;
 * *D and *M receive d and dmin read back. */
KQ_STEP void q45_scales(const float *scales, const float *mins, uint8_t *y, uint8_t *ls,
                        uint8_t *lm, float *D, float *M)
{
    float max_scale, max_min;
    max_scale_min(scales, mins, 8, &max_scale, &max_min);
    const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
    const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
    for (int j = 0; j < 8; ++j) {
        const float vs = inv_scale * scales[j];
        const float vm = inv_min * mins[j];
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
    *D = dt_ggml_fp16_to_f32(d);
    *M = dt_ggml_fp16_to_f32(dmin);
}

/* Q2_K after the fits of the 16 sub-blocks (scale, -min): scales[16] at y (low nibble
 * nearest_int((15/max_scale)*scale), high nibble the min's), d = fp16(max_scale/15) at y + 80,
 * dmin = fp16(max_min/15) at y + 82 (fp16(0) for a max that is not positive); *D and *M receive
 * them read back. */
KQ_STEP void q2k_scales(const float *scales, const float *mins, uint8_t *y, float *D, float *M)
{
    float max_scale, max_min;
    max_scale_min(scales, mins, 16, &max_scale, &max_min);
    uint8_t *sc = y;
    uint16_t d = 0, dmin = 0; /* fp16(0) */
    /* ggml stores the int codes in uint8_t bytes and ORs (l << 4) for a possibly negative l:
     * the low 8 bits of each */
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
            sc[j] |= (uint8_t)(((unsigned)dt_ggml_nearest_int(v) << 4) & 0xFFu);
        }
        dmin = dt_ggml_fp16(max_min / 15.0f);
    }
    dt_ggml_wr16(y + 80, d);
    dt_ggml_wr16(y + 82, dmin);
    *D = dt_ggml_fp16_to_f32(d);
    *M = dt_ggml_fp16_to_f32(dmin);
}

/* Q3_K after the fits of the 16 sub-blocks: of the scale of largest magnitude (the first, strict
 * >), code[j] = clamp(nearest_int((-32/max)*scale), -32, 31) + 32 (ggml first keeps the
 * nearest_int in an int8_t: the low 8 bits, then clamps), packed into scales[12] at y + 96,
 * d = fp16(1/iscale) at y + 108; a max of 0 gives zero bytes and codes 0 (sub-scale -32, times
 * d = 0). Returns d read back. */
KQ_STEP float q3k_scales(const float *scales, uint8_t *y, int *code)
{
    float amax;
    const float max_scale = signed_absmax(scales, 16, &amax);
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
    return dt_ggml_fp16_to_f32(d);
}

/* Q6_K after the fits of the 16 sub-blocks: of the scale of largest magnitude (the first, strict
 * >), iscale = -128/max, the int8 sub-scales sc[j] = min(127, nearest_int(iscale*scale)) at
 * y + 192, d = fp16(1/iscale) at y + 208, *D = d read back. A block whose largest |scale| is
 * below GROUP_MAX_EPS is all zero bytes (d = fp16(0)): false, and nothing else is set. */
KQ_STEP bool q6k_scales(const float *scales, uint8_t *y, int *sc, float *D)
{
    float max_abs;
    const float max_scale = signed_absmax(scales, 16, &max_abs);
    if (max_abs < GROUP_MAX_EPS) {
        memset(y, 0, 210);
        return false;
    }
    const float iscale = -128.0f / max_scale;
    const uint16_t d = dt_ggml_fp16(1.0f / iscale);
    dt_ggml_wr16(y + 208, d);
    for (int j = 0; j < 16; ++j) {
        const float v = iscale * scales[j];
        const int c = dt_ggml_nearest_int(v);
        sc[j] = s8_of(c < 127 ? c : 127); /* stored in an int8_t */
        y[192 + j] = u8_of(sc[j]);
    }
    *D = dt_ggml_fp16_to_f32(d);
    return true;
}

#endif /* DTCAST_GGML_KQUANTS_SCALAR_H */
