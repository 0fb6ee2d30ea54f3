/* Block FP8 (DeepSeek-V3/R1, HF fine-grained FP8): float8e4m3fn codes, a float32 dequantization
 * multiplier per tile of the last two axes (docs/quantization.md, "Block FP8"). */
#include "quant.h"
#include "fused_dequant.h"
#include "fused_quant.h"
#include "../parallel.h"

#include <string.h>

typedef struct fb_job {
    const dt_quant *q;
    dt_loader ld;
    dt_storer st;
    dt_emit em;
    uint8_t *scales; /* float32, any alignment */
    bool act; /* deepseek-act: divide by s; else hf: multiply by qs */
    bool fused; /* quantize: x read and the codes made by the fused kernel (fused_quant.h) */
    dt_fq fq;
} fb_job;

/* Columns of the tiles handled together: 4 tiles of 128 (a 128-row band of them stays in L2).
 * The fused path takes up to DT_QCHUNK tiles, whole rows: its two passes over a band read
 * whole rows, which the prefetchers follow (a band of 512-column pieces of rows 8 or 16 KiB
 * apart maps to few cache sets), the second one from L3 where the band does not fit L2. */
#define FB_GROUP 512

/* The scale of a tile from its amax: *mul multiplies x (hf) or *div divides it (deepseek-act);
 * returns the stored dequantization multiplier. */
static float fb_scale(const fb_job *j, float amax, float *k)
{
    if (!j->act) {
        const float qs = amax == 0.0f ? 1.0f : 448.0f / amax;
        *k = qs;
        return 1.0f / qs;
    }
    const float a = dt_maxf_nan(amax, 1e-4f);
    float s = a / 448.0f;
    if (j->q->p.ue8m0) { /* up to a power of two (s is normal, or Inf / NaN) */
        const uint32_t b = dt_f32_bits(s);
        if ((b & 0x7F800000u) != 0x7F800000u && (b & 0x7FFFFFu))
            s = dt_f32_from_bits((b & 0x7F800000u) + 0x00800000u);
    }
    *k = s;
    return s;
}

static void fb_values(const fb_job *j, float *vals, const float *x, size_t n, float k)
{
    if (j->act)
        for (size_t i = 0; i < n; i++)
            vals[i] = x[i] / k;
    else
        for (size_t i = 0; i < n; i++)
            vals[i] = x[i] * k;
}

/* unit = a band of tile rows (batch b, tile row ti) */
static void fb_q_bands(void *ctx, size_t u0, size_t u1)
{
    const fb_job *j = ctx;
    const dt_quant *q = j->q;
    float buf[DT_QCHUNK], vals[DT_QCHUNK];
    const size_t K = q->K, N = q->N, R = q->R, C = q->B, tr = q->tr, tc = q->tc;
    /* tiles per group: their columns fit a chunk */
    size_t tg = q->simple ? 1 : j->fused ? DT_QCHUNK : (R == 1 ? DT_QCHUNK : FB_GROUP) / C;
    if (tg == 0)
        tg = 1;
    float kk[DT_QCHUNK];
    for (size_t u = u0; u < u1; u++) {
        const size_t bt = u / tr, ti = u % tr;
        const size_t r0 = ti * R, rr = N - r0 < R ? N - r0 : R;
        const size_t row0 = bt * N + r0; /* global row */
        for (size_t t0 = 0; t0 < tc; t0 += tg) {
            const size_t t1 = t0 + tg < tc ? t0 + tg : tc;
            const size_t c0 = t0 * C, c1 = t1 * C < K ? t1 * C : K;
            /* amax of each tile of the group */
            float amax[DT_QCHUNK];
            for (size_t t = t0; t < t1; t++)
                amax[t - t0] = 0.0f;
            if (j->fused) /* the tiles straight from x */
                dt_fq_amax_tiles(&j->fq, row0 * K + c0, rr, K, c1 - c0, C, amax);
            for (size_t r = 0; r < rr && !j->fused; r++) { /* else row by row, via float32 */
                for (size_t t = t0; t < t1; t++) {
                    const size_t a0 = t * C, a1 = a0 + C < K ? a0 + C : K;
                    for (size_t s = a0; s < a1; s += DT_QCHUNK) {
                        const size_t n = a1 - s < DT_QCHUNK ? a1 - s : DT_QCHUNK;
                        const float *x = dt_load_f32(&j->ld, (row0 + r) * K + s, n, buf);
                        const float a = dt_q_amax(q, x, n);
                        float *m = &amax[t - t0];
                        *m = *m != *m ? *m : a != a ? a : a > *m ? a : *m;
                    }
                }
            }
            for (size_t t = t0; t < t1; t++) {
                const float sc = fb_scale(j, amax[t - t0], &kk[t - t0]);
                memcpy(j->scales + ((bt * tr + ti) * tc + t) * 4, &sc, 4);
            }
            /* codes, row by row */
            for (size_t r = 0; r < rr; r++) {
                for (size_t s = c0; s < c1; s += DT_QCHUNK) {
                    const size_t n = c1 - s < DT_QCHUNK ? c1 - s : DT_QCHUNK;
                    const size_t f = (row0 + r) * K + s;
                    if (j->fused) { /* s - c0: whole chunks of whole tiles */
                        dt_fq_codes(&j->fq, f, n, C, &kk[(s - c0) / C], &amax[(s - c0) / C]);
                        continue;
                    }
                    const float *x = dt_load_f32(&j->ld, f, n, buf);
                    for (size_t i = 0; i < n;) { /* the part of one tile */
                        const size_t t = (s + i) / C, e = (t + 1) * C - s;
                        const size_t m = (e < n ? e : n) - i;
                        if (q->simple)
                            fb_values(j, vals + i, x + i, m, kk[t - t0]);
                        else
                            dt_q_apply(q, j->act ? DT_Q_DIV : DT_Q_MUL, vals + i, x + i, 1, m,
                                       &kk[t - t0]);
                        i += m;
                    }
                    dt_emit_codes(&j->em, f, vals, n);
                }
            }
        }
    }
}

dtcast_status dt_fp8_block_quantize(const dt_quant *q, dt_qio *io, dtcast_error *error)
{
    (void)error;
    fb_job j;
    memset(&j, 0, sizeof j);
    j.q = q;
    j.scales = io->scales;
    j.act = q->p.variant == DTCAST_VARIANT_DEEPSEEK_ACT;
    dt_loader_init(&j.ld, io->x, q->xtype, q->simple);
    dt_emit_init(&j.em, q, io->codes, false);
    j.fused = dt_fq_init(&j.fq, q, j.act ? DT_Q_DIV : DT_Q_MUL, q->B, io->x, io->codes);
    /* fb_q_bands' passes over whole rows: the codes pass of a band prefetches the next band */
    if (j.fused && q->tc <= DT_QCHUNK)
        j.fq.ahead = q->R * q->K * j.fq.xsize;
    if (q->count)
        dt_quant_for(q->batch * q->tr, q->threads, fb_q_bands, &j);
    dt_emit_release(&j.em);
    dt_loader_release(&j.ld);
    return DTCAST_OK;
}

static void fb_dq_bands(void *ctx, size_t u0, size_t u1)
{
    const fb_job *j = ctx;
    const dt_quant *q = j->q;
    float vals[DT_QCHUNK], kk[DT_QCHUNK];
    const size_t K = q->K, N = q->N, R = q->R, C = q->B, tr = q->tr, tc = q->tc;
    /* chunks of whole tiles (the last of a row may be short) */
    size_t step = q->simple ? 1 : C <= DT_QCHUNK ? DT_QCHUNK / C * C : DT_QCHUNK;
    dt_fused fz; /* the tiles of a chunk are its scale codes 0, 1, ... */
    uint8_t tiles[DT_QCHUNK / 16];
    const bool fused = C <= DT_QCHUNK && dt_fused_init(&fz, &j->st, q, j->em.codes);
    for (size_t t = 0; t < sizeof tiles; t++)
        tiles[t] = (uint8_t)t;
    for (size_t u = u0; u < u1; u++) {
        const size_t bt = u / tr, ti = u % tr;
        const size_t r0 = ti * R, rr = N - r0 < R ? N - r0 : R;
        const size_t row0 = bt * N + r0;
        const uint8_t *srow = j->scales + (bt * tr + ti) * tc * 4;
        for (size_t r = 0; r < rr; r++) {
            for (size_t s = 0; s < K; s += step) {
                const size_t n = K - s < step ? K - s : step;
                const size_t f = (row0 + r) * K + s;
                if (!q->simple && C <= DT_QCHUNK) { /* s is a multiple of C */
                    const size_t t0 = s / C, nt = (n + C - 1) / C;
                    memcpy(kk, srow + t0 * 4, nt * 4);
                    for (size_t t = 0; fused && t < nt; t++)
                        dt_fused_factor(&fz, (unsigned)t, kk[t]);
                    if (fused && dt_fused_run(&fz, f, n, C, tiles))
                        continue;
                    dt_emit_values(&j->em, f, vals, n);
                    dt_store_scaled(&j->st, q, f, vals, n, C, kk);
                    continue;
                }
                dt_emit_values(&j->em, f, vals, n);
                for (size_t i = 0; i < n;) {
                    const size_t t = (s + i) / C, e = (t + 1) * C - s;
                    const size_t m = (e < n ? e : n) - i;
                    float sc;
                    memcpy(&sc, srow + t * 4, 4);
                    if (q->simple)
                        for (size_t k = i; k < i + m; k++)
                            vals[k] = dt_mul_nan_first(vals[k], sc);
                    else
                        dt_q_apply(q, DT_Q_MUL, vals + i, vals + i, 1, m, &sc);
                    i += m;
                }
                dt_store_f32(&j->st, f, vals, n);
            }
        }
    }
}

dtcast_status dt_fp8_block_dequantize(const dt_quant *q, dt_qio *io, dtcast_error *error)
{
    (void)error;
    fb_job j;
    memset(&j, 0, sizeof j);
    j.q = q;
    j.scales = io->scales;
    dt_storer_init(&j.st, io->y, q->xtype, q->count, q->simple);
    dt_emit_init(&j.em, q, io->codes, true);
    if (q->count)
        dt_quant_for(q->batch * q->tr, q->threads, fb_dq_bands, &j);
    dt_emit_release(&j.em);
    dt_storer_release(&j.st);
    return DTCAST_OK;
}
