/* NVFP4: 16-element blocks along the last axis, float4e2m1 codes, float8e4m3fn block scales S
 * and an optional float32 global scale; three variants with every intermediate pinned
 * (docs/quantization.md, "NVFP4"). All arithmetic is float32, one operation per statement. */
#include "quant.h"
#include "fused_dequant.h"
#include "fused_quant.h"
#include "../parallel.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct nv_job {
    const dt_quant *q;
    dt_loader ld;
    dt_storer st;
    dt_emit em;
    dt_qconv s_conv; /* float32 -> float8e4m3fn, IEEE overflow */
    uint8_t *scales;
    float e4m3[256]; /* value of each float8e4m3fn code */
    dtcast_variant v;
    bool single;
    float g;   /* modelopt, torchao: g = fl32(amax_t / 2688); ct: gs = fl32(2688 / amax_t) */
    float g6;  /* modelopt: fl32(6 * g) */
    float ginv; /* torchao: fl32(1 / g) */
    _Atomic uint32_t amax_bits; /* tensor amax as bits (NaN > Inf > finite) */
    float *bam; /* the block amaxes the first pass found (two levels, fast path), or NULL */
    bool fused; /* quantize: x read and the codes made by the fused kernel (fused_quant.h) */
    dt_fq fq;
    dt_fq_thr *thr; /* quantize, bfloat16 x: the codes by thresholds (fused_quant.h), or NULL */
    dt_fq_nv nvs;   /* quantize, fused: the scale steps (fused_quant.h dt_fq_nv_scales) */
    const dt_fused *dq_fused; /* dequantize: the fused kernel, or NULL */
} nv_job;

#define NV_BLOCKS (DT_QCHUNK / 16)
#define NV_THR_LOG2_BLOCKS 14

/* The tensor's amax (two levels). The fast paths keep each block's amax on the way (j->bam),
 * and the second pass takes them from there instead of finding them again (for a bfloat16
 * tensor that was a fifth of the second pass's time; the first pass is bound by the memory). */
static void nv_amax_range(void *ctx, size_t b0, size_t b1)
{
    nv_job *j = ctx;
    float buf[DT_QCHUNK];
    uint32_t m = 0;
    const size_t step = j->q->simple ? 16 : DT_QCHUNK;
    if (j->fused)
        m = dt_fq_amax(&j->fq, b0 * 16, (b1 - b0) * 16, 16, j->bam ? j->bam + b0 : NULL);
    for (size_t f = b0 * 16; f < b1 * 16 && !j->fused; f += step) {
        const size_t n = b1 * 16 - f < step ? b1 * 16 - f : step;
        const float *x = dt_load_f32(&j->ld, f, n, buf);
        if (j->bam) {
            float *am = j->bam + f / 16;
            dt_q_amax_blocks(j->q, x, n / 16, 16, am);
            for (size_t k = 0; k < n / 16; k++) {
                const uint32_t a = dt_f32_bits(am[k]);
                m = a > m ? a : m;
            }
        } else {
            const uint32_t a = dt_f32_bits(dt_q_amax(j->q, x, n));
            m = a > m ? a : m;
        }
    }
    m = m > 0x7F800000u ? 0x7FC00000u : m; /* any NaN: the one NaN dt_q_amax gives */
    uint32_t cur = atomic_load(&j->amax_bits);
    while (m > cur && !atomic_compare_exchange_weak(&j->amax_bits, &cur, m)) {
    }
}

/* the block-scale value to round to float8e4m3fn, from the block's amax */
static float nv_scale_input(const nv_job *j, float amax)
{
    switch (j->v) {
    case DTCAST_VARIANT_TORCHAO: {
        const float a6 = amax / 6.0f;
        const float s = j->single ? a6 : a6 / j->g;
        return dt_clampf_nan(s, 0x1p-6f, 448.0f);
    }
    case DTCAST_VARIANT_CT: {
        const float a6 = amax / 6.0f;
        const float s = j->g * a6;
        return dt_clampf_nan(s, -448.0f, 448.0f);
    }
    default: { /* modelopt */
        if (amax == 0.0f)
            return 1.0f;
        const float s = amax / j->g6;
        return dt_maxf_nan(s, 0x1p-9f);
    }
    }
}

/* the element step of a block with scale code S: x * k (torchao) or x / k (modelopt, ct) */
static float nv_elem_factor(const nv_job *j, unsigned S)
{
    const float sf = j->e4m3[S];
    switch (j->v) {
    case DTCAST_VARIANT_TORCHAO: {
        if (j->single)
            return 1.0f / sf;
        return j->ginv / sf;
    }
    case DTCAST_VARIANT_CT: return sf / j->g;
    default: return dt_mul_nan_first(sf, j->g);
    }
}

/* the dequantization multiplier of a block */
static float nv_dequant_factor(const nv_job *j, unsigned S)
{
    const float sf = j->e4m3[S];
    switch (j->v) {
    case DTCAST_VARIANT_TORCHAO:
        if (j->single)
            return sf;
        return dt_mul_nan_first(sf, j->g); /* fl32(g x S), in the order dt_q_map takes */
    case DTCAST_VARIANT_CT: return sf / j->g;
    default: return dt_mul_nan_first(sf, j->g);
    }
}

/* the element step of the fast paths: x * k (torchao), x / k (ct), x / k with NaN -> 6 and
 * -0 -> +0 (modelopt) */
static int nv_elem_op(const nv_job *j)
{
    return j->v == DTCAST_VARIANT_TORCHAO ? DT_Q_MUL : j->v == DTCAST_VARIANT_CT ? DT_Q_DIV : DT_Q_DIV_MO;
}

static void nv_values(const nv_job *j, float *vals, const float *x, size_t n, float k)
{
    switch (j->v) {
    case DTCAST_VARIANT_TORCHAO:
        for (size_t i = 0; i < n; i++)
            vals[i] = dt_mul_nan_first(x[i], k);
        break;
    case DTCAST_VARIANT_CT:
        for (size_t i = 0; i < n; i++)
            vals[i] = x[i] / k;
        break;
    default: /* modelopt: NaN -> +6, -0 -> +0 */
        for (size_t i = 0; i < n; i++) {
            const float v = x[i] / k;
            vals[i] = v != v ? 6.0f : v == 0.0f ? 0.0f : v;
        }
        break;
    }
}

static void nv_q_blocks(void *ctx, size_t b0, size_t b1)
{
    const nv_job *j = ctx;
    const bool simple = j->q->simple;
    float buf[DT_QCHUNK], vals[DT_QCHUNK], sin[NV_BLOCKS];
    uint8_t S[NV_BLOCKS];
    const size_t group = simple ? 1 : NV_BLOCKS;
    for (size_t b = b0; b < b1; b += group) {
        const size_t nbk = b1 - b < group ? b1 - b : group, n = nbk * 16, f = b * 16;
        const float *x = j->fused ? NULL : dt_load_f32(&j->ld, f, n, buf);
        float amb[NV_BLOCKS], kk[NV_BLOCKS];
        const float *am = amb;
        if (simple)
            amb[0] = dt_q_amax(j->q, x, 16);
        else if (j->bam) /* the first pass's maxima, where they are */
            am = j->bam + b;
        else if (j->fused)
            (void)dt_fq_amax(&j->fq, f, n, 16, amb);
        else
            dt_q_amax_blocks(j->q, x, nbk, 16, amb);
        if (j->fused) { /* S and the element factors in one pass */
            dt_fq_nv_scales(&j->nvs, am, nbk, S, kk);
        } else if (simple)
            sin[0] = nv_scale_input(j, am[0]);
        else
            dt_q_map(j->q, j->nvs.op_in, sin, am, nbk, j->nvs.c_in);
        float sf[NV_BLOCKS];
        if (!j->fused) {
            dt_qconv_run(&j->s_conv, S, sin, nbk, 0);
            for (size_t k = 0; k < nbk; k++) {
                if (j->v == DTCAST_VARIANT_CT && (S[k] & 0x7F) == 0)
                    S[k] = 0x20; /* a zero block scale becomes 0.125 */
                sf[k] = j->e4m3[S[k]];
            }
        }
        if (simple) {
            kk[0] = nv_elem_factor(j, S[0]);
        } else if (!j->fused) {
            dt_q_map(j->q, j->nvs.op_k, kk, sf, nbk, j->nvs.c_k);
        }
        if (simple)
            nv_values(j, vals, x, 16, kk[0]);
        else if (!j->fused)
            dt_q_apply(j->q, nv_elem_op(j), vals, x, nbk, 16, kk);
        memcpy(j->scales + b, S, nbk);
        if (j->thr)
            dt_fq_codes_thr(&j->fq, j->thr, f, n, kk, am, S);
        else if (j->fused)
            dt_fq_codes(&j->fq, f, n, 16, kk, am);
        else
            dt_emit_codes(&j->em, f, vals, n);
    }
}

static void nv_setup(nv_job *j, const dt_quant *q)
{
    memset(j, 0, sizeof *j);
    j->q = q;
    j->v = q->p.variant;
    j->single = q->p.single_level;
    uint8_t codes[256];
    for (unsigned i = 0; i < 256; i++)
        codes[i] = (uint8_t)i;
    dtcast_convert(j->e4m3, DTCAST_FLOAT32, codes, DTCAST_FLOAT8E4M3FN, 256, NULL, NULL);
}

static void nv_globals(nv_job *j, float g)
{
    j->g = g;
    j->g6 = 6.0f * g;
    j->ginv = 1.0f / g;
}

dtcast_status dt_nvfp4_quantize(const dt_quant *q, dt_qio *io, dtcast_error *error)
{
    (void)error;
    nv_job *j = malloc(sizeof *j); /* 1 KiB of table: not on the caller's stack */
    if (!j)
        return dt_fail(error, DTCAST_ERR_OUT_OF_MEMORY, DT_NO_INDEX, "out of memory");
    nv_setup(j, q);
    j->scales = io->scales;
    dt_loader_init(&j->ld, io->x, q->xtype, q->simple);
    j->fused = dt_fq_init(&j->fq, q, nv_elem_op(j), 16, io->x, io->codes);
    const size_t blocks = q->count / 16;
    if (!j->single) {
        /* a float per 16 elements (1/16 of the float32 input), up to 64 MiB; else, or without
         * the memory, the second pass reads the blocks' amaxes again */
        if (!q->simple && blocks <= ((size_t)64 << 20) / sizeof(float))
            j->bam = malloc(blocks * sizeof(float) + 1);
        atomic_init(&j->amax_bits, 0);
        dt_quant_for(blocks, q->threads, nv_amax_range, j);
        const float amax_t = dt_f32_from_bits(atomic_load(&j->amax_bits));
        nv_globals(j, j->v == DTCAST_VARIANT_CT ? 2688.0f / amax_t : amax_t / 2688.0f);
        *io->global = j->g;
    }
    dt_qconv_init(&j->s_conv, DTCAST_FLOAT8E4M3FN, DTCAST_FLOAT32, DTCAST_ROUND_RNE, false, 0,
                  blocks, q->simple);
    dt_emit_init(&j->em, q, io->codes, false);
    /* the scale steps of the second pass: the scale input from the block's amax, the element
     * factor from the scale's value (the fused path: both and the code in one pass) */
    const bool ta = j->v == DTCAST_VARIANT_TORCHAO, ct = j->v == DTCAST_VARIANT_CT;
    j->nvs = (dt_fq_nv){ta ? DT_QM_TA_SCALE : ct ? DT_QM_CT_SCALE : DT_QM_MO_SCALE,
                        ta ? DT_QM_RDIV : ct ? DT_QM_DIV : DT_QM_MUL,
                        ta ? (j->single ? 1.0f : j->g) : ct ? j->g : j->g6,
                        ta ? (j->single ? 1.0f : j->ginv) : j->g, ct, j->e4m3};
    /* bfloat16 x, 2^14 blocks and more: the codes by thresholds (their 10 us is a few per cent
     * of the job there) */
    if (j->fused && blocks >= ((size_t)1 << NV_THR_LOG2_BLOCKS)) {
        float k[128];
        for (unsigned s = 0; s < 128; s++)
            k[s] = nv_elem_factor(j, s);
        j->thr = malloc(sizeof *j->thr);
        if (j->thr && !dt_fq_thr_init(j->thr, &j->fq, k)) {
            free(j->thr);
            j->thr = NULL;
        }
    }
    dt_quant_for(blocks, q->threads, nv_q_blocks, j);
    dt_emit_release(&j->em);
    dt_qconv_release(&j->s_conv);
    dt_loader_release(&j->ld);
    free(j->thr);
    free(j->bam);
    free(j);
    return DTCAST_OK;
}

static void nv_dq_blocks(void *ctx, size_t b0, size_t b1)
{
    const nv_job *j = ctx;
    float vals[DT_QCHUNK];
    const size_t group = j->q->simple ? 1 : NV_BLOCKS;
    for (size_t b = b0; b < b1; b += group) {
        const size_t nbk = b1 - b < group ? b1 - b : group, n = nbk * 16, f = b * 16;
        if (j->dq_fused && dt_fused_run(j->dq_fused, f, n, 16, j->scales + b))
            continue;
        dt_emit_values(&j->em, f, vals, n);
        float kk[NV_BLOCKS];
        if (j->q->simple) {
            kk[0] = nv_dequant_factor(j, j->scales[b]);
        } else {
            float sf[NV_BLOCKS];
            for (size_t k = 0; k < nbk; k++)
                sf[k] = j->e4m3[j->scales[b + k]];
            if (j->v == DTCAST_VARIANT_TORCHAO && j->single)
                memcpy(kk, sf, nbk * sizeof(float));
            else
                dt_q_map(j->q, j->v == DTCAST_VARIANT_CT ? DT_QM_DIV : DT_QM_MUL, kk, sf, nbk, j->g);
        }
        if (j->q->simple) {
            for (size_t i = 0; i < 16; i++)
                vals[i] = dt_mul_nan_first(vals[i], kk[0]);
            dt_store_f32(&j->st, f, vals, n);
        } else {
            dt_store_scaled(&j->st, j->q, f, vals, n, 16, kk);
        }
    }
}

dtcast_status dt_nvfp4_dequantize(const dt_quant *q, dt_qio *io, dtcast_error *error)
{
    nv_job *j = malloc(sizeof *j);
    if (!j)
        return dt_fail(error, DTCAST_ERR_OUT_OF_MEMORY, DT_NO_INDEX, "out of memory");
    nv_setup(j, q);
    j->scales = io->scales;
    if (!j->single)
        nv_globals(j, *io->global);
    dt_storer_init(&j->st, io->y, q->xtype, q->count, q->simple);
    dt_emit_init(&j->em, q, io->codes, true);
    dt_fused fz;
    if (dt_fused_init(&fz, &j->st, q, io->codes)) {
        for (unsigned c = 0; c < 256; c++)
            dt_fused_factor(&fz, c, nv_dequant_factor(j, c));
        j->dq_fused = &fz;
    }
    dt_quant_for(q->count / 16, q->threads, nv_dq_blocks, j);
    dt_emit_release(&j->em);
    dt_storer_release(&j->st);
    free(j);
    return DTCAST_OK;
}
