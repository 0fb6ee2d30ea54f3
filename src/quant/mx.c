/* OCP Microscaling (MX v1.0): blocks along one axis, one float8e8m0 scale byte per block,
 * elements x * 2^(127 - b) rounded once (the rule in docs/quantization.md). */
#include "quant.h"
#include "fused_dequant.h"
#include "fused_quant.h"
#include "../parallel.h"

#include <math.h>
#include <string.h>

typedef struct mx_job {
    const dt_quant *q;
    dt_loader ld;
    dt_storer st;
    dt_emit em;
    uint8_t *scales;
    int emax, mbits;
    float inv_max; /* fl32(1 / max_elem) */
    bool is_int;   /* MXINT8 */
    float fill;    /* the elements of a NaN/Inf block: NaN, or 0 where the type has none */
    bool fused;    /* quantize: whole blocks of 32 by the fused kernel (fused_quant.h) */
    dt_fq fq;
    dt_fq_mx fm;
    const dt_fused *dq_fused; /* dequantize: the fused kernel for whole blocks, or NULL */
} mx_job;

static void mx_setup(mx_job *j, const dt_quant *q)
{
    memset(j, 0, sizeof *j);
    j->q = q;
    float maxe;
    switch (q->p.element) {
    case DTCAST_FLOAT8E5M2: j->emax = 15, j->mbits = 2, maxe = 57344.0f; break;
    case DTCAST_FLOAT6E3M2FN: j->emax = 4, j->mbits = 2, maxe = 28.0f; break;
    case DTCAST_FLOAT6E2M3FN: j->emax = 2, j->mbits = 3, maxe = 7.5f; break;
    case DTCAST_FLOAT4E2M1: j->emax = 2, j->mbits = 1, maxe = 6.0f; break;
    case DTCAST_INT8: j->emax = 0, j->mbits = 6, maxe = 127.0f / 64.0f; break;
    default: j->emax = 8, j->mbits = 3, maxe = 448.0f; break;
    }
    volatile float one = 1.0f; /* evaluated at run time in float32 */
    j->inv_max = one / maxe;
    j->is_int = q->p.element == DTCAST_INT8;
    const bool has_nan = q->p.element == DTCAST_FLOAT8E4M3FN || q->p.element == DTCAST_FLOAT8E5M2;
    j->fill = has_nan ? dt_f32_from_bits(0x7FC00000u) : 0.0f;
}

/* The scale byte of a block from its amax (>= 0 or NaN), per mode. */
static unsigned mx_byte(const mx_job *j, float amax)
{
    const uint32_t a = dt_f32_bits(amax);
    if ((a & 0x7F800000u) == 0x7F800000u)
        return 0xFF;
    int u;
    switch (j->q->p.scale_mode) {
    case DTCAST_SCALE_CEIL:
        u = (int)(a >> 23) - 127 - j->emax + ((a & 0x7FFFFFu) != 0);
        break;
    case DTCAST_SCALE_EVEN: {
        const uint32_t r = (a + (1u << (22 - j->mbits))) & 0x7F800000u;
        u = (int)(r >> 23) - 127 - j->emax;
        break;
    }
    case DTCAST_SCALE_RCEIL: {
        const float d = amax * j->inv_max;
        const uint32_t db = dt_f32_bits(d), e = db >> 23, m = db & 0x7FFFFFu;
        const unsigned b = e ? e + (m != 0) : m > 0x400000u;
        return b > 254 ? 254 : b;
    }
    case DTCAST_SCALE_LOG2: {
        /* floor(log2(amax)) in float32; log2(0) = -Inf clamps to the smallest scale (0x00:
         * microxcaling adds 2^-126 to a zero amax, which gives MXINT8 0x01; docs/quantization.md) */
        if (amax == 0.0f) {
            u = -127;
            break;
        }
        const float l = (float)log2((double)amax);
        u = (int)floorf(l) - j->emax;
        break;
    }
    default: /* floor */
        u = (int)(a >> 23) - 127 - j->emax;
        break;
    }
    u = u < -127 ? -127 : u > 127 ? 127 : u;
    return (unsigned)(u + 127);
}

/* 2^(127 - b), b in [0, 254] */
static float mx_quant_mult(unsigned b)
{
    const unsigned e = 254 - b;
    return dt_f32_from_bits(e ? e << 23 : 0x00400000u);
}

/* the float32 value a code's element value is multiplied by: 2^(b - 127) (MXINT8: 2^(b - 133),
 * the code being value * 64); NaN for 0xFF */
static float mx_dequant_mult(const mx_job *j, unsigned b)
{
    if (b == 0xFF)
        return dt_f32_from_bits(0x7FC00000u);
    if (!j->is_int)
        return dt_f32_from_bits(b ? b << 23 : 0x00400000u);
    return dt_f32_from_bits(b >= 7 ? (b - 6) << 23 : 1u << (b + 16));
}

/* vals[i] = the element-step input of x[i] in a block with byte b */
static void mx_scale_values(const mx_job *j, float *vals, const float *x, size_t n, unsigned b)
{
    if (b == 0xFF) {
        for (size_t i = 0; i < n; i++)
            vals[i] = j->fill;
        return;
    }
    const float m = mx_quant_mult(b);
    if (!j->is_int) {
        for (size_t i = 0; i < n; i++)
            vals[i] = x[i] * m;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        float v = x[i] * m;
        v = v * 64.0f;
        vals[i] = v > 127.0f ? 127.0f : v < -127.0f ? -127.0f : v;
    }
}

/* ---- quantize ------------------------------------------------------------------------------------ */

/* units along a contiguous axis (I == 1): unit u = block j of line o, elements o*D + j*B ... */
static void mx_q_lines(void *ctx, size_t u0, size_t u1)
{
    const mx_job *j = ctx;
    const dt_quant *q = j->q;
    float buf[DT_QCHUNK], vals[DT_QCHUNK];
    const size_t B = q->B, D = q->D, nb = q->nb;
    const size_t group = q->simple ? 1 : B <= DT_QCHUNK ? DT_QCHUNK / B : 1;
    for (size_t u = u0; u < u1;) {
        if (B > DT_QCHUNK) { /* one long block in pieces */
            const size_t o = u / nb, jb = u % nb, f0 = o * D + jb * B;
            const size_t len = D - jb * B < B ? D - jb * B : B;
            float amax = 0.0f;
            for (size_t s = 0; s < len; s += DT_QCHUNK) {
                const size_t n = len - s < DT_QCHUNK ? len - s : DT_QCHUNK;
                const float *xs = dt_load_f32(&j->ld, f0 + s, n, buf);
                const float a = dt_q_amax(q, xs, n);
                amax = a != a ? a : a > amax ? a : amax;
            }
            const unsigned b = mx_byte(j, amax);
            j->scales[u] = (uint8_t)b;
            for (size_t s = 0; s < len; s += DT_QCHUNK) {
                const size_t n = len - s < DT_QCHUNK ? len - s : DT_QCHUNK;
                mx_scale_values(j, vals, dt_load_f32(&j->ld, f0 + s, n, buf), n, b);
                dt_emit_codes(&j->em, f0 + s, vals, n);
            }
            u++;
            continue;
        }
        /* units u .. ue: contiguous elements */
        const size_t ue = u + group < u1 ? u + group : u1;
        size_t f0 = u * B, n = (ue - u) * B; /* whole blocks: no division */
        if (D % B) {
            f0 = u / nb * D + u % nb * B;
            n = 0;
            for (size_t v = u; v < ue; v++) {
                const size_t jb = v % nb;
                n += D - jb * B < B ? D - jb * B : B;
            }
        }
        if (j->fused) { /* read, scaled, rounded and packed in one kernel */
            dt_fq_mx_blocks(&j->fq, &j->fm, f0, ue - u, j->scales + u);
            u = ue;
            continue;
        }
        const float *x = dt_load_f32(&j->ld, f0, n, buf);
        if (!q->simple && D % B == 0 && B >= 8) { /* whole blocks: the vector steps */
            const size_t nbk = ue - u;
            float am[DT_QCHUNK / 8], kk[DT_QCHUNK / 8];
            dt_q_amax_blocks(q, x, nbk, B, am);
            for (size_t k = 0; k < nbk; k++) {
                const unsigned b = mx_byte(j, am[k]);
                j->scales[u + k] = (uint8_t)b;
                kk[k] = b == 0xFF ? 0.0f : mx_quant_mult(b);
            }
            dt_q_apply(q, j->is_int ? DT_Q_MUL_I8 : DT_Q_MUL, vals, x, nbk, B, kk);
            for (size_t k = 0; k < nbk; k++)
                if (j->scales[u + k] == 0xFF)
                    mx_scale_values(j, vals + k * B, x + k * B, B, 0xFF);
        } else {
            size_t off = 0;
            for (size_t v = u; v < ue; v++) {
                const size_t jb = v % nb;
                const size_t len = D - jb * B < B ? D - jb * B : B;
                const float a = dt_q_amax(q, x + off, len);
                const unsigned b = mx_byte(j, a);
                j->scales[v] = (uint8_t)b;
                mx_scale_values(j, vals + off, x + off, len, b);
                off += len;
            }
        }
        dt_emit_codes(&j->em, f0, vals, n);
        u = ue;
    }
}

/* units of a strided axis (I > 1): unit u = (o, block j): rows j*B.. of I columns each */
#define MX_COLS 512
static void mx_q_slabs(void *ctx, size_t u0, size_t u1)
{
    const mx_job *j = ctx;
    const dt_quant *q = j->q;
    float buf[DT_QCHUNK], vals[DT_QCHUNK], amax[MX_COLS];
    unsigned bytes[MX_COLS];
    const size_t B = q->B, D = q->D, I = q->I, nb = q->nb;
    const size_t W0 = q->simple ? 1 : MX_COLS;
    for (size_t u = u0; u < u1; u++) {
        const size_t o = u / nb, jb = u % nb;
        const size_t len = D - jb * B < B ? D - jb * B : B;
        const size_t base = (o * D + jb * B) * I;
        for (size_t c0 = 0; c0 < I; c0 += W0) {
            const size_t W = I - c0 < W0 ? I - c0 : W0;
            for (size_t c = 0; c < W; c++)
                amax[c] = 0.0f;
            for (size_t r = 0; r < len; r++) {
                const float *x = dt_load_f32(&j->ld, base + r * I + c0, W, buf);
                for (size_t c = 0; c < W; c++) {
                    const float a = dt_f32_from_bits(dt_f32_bits(x[c]) & 0x7FFFFFFFu);
                    amax[c] = amax[c] != amax[c] ? amax[c] : a != a ? a : a > amax[c] ? a : amax[c];
                }
            }
            for (size_t c = 0; c < W; c++) {
                bytes[c] = mx_byte(j, amax[c]);
                j->scales[(o * nb + jb) * I + c0 + c] = (uint8_t)bytes[c];
            }
            for (size_t r = 0; r < len; r++) {
                const float *x = dt_load_f32(&j->ld, base + r * I + c0, W, buf);
                for (size_t c = 0; c < W; c++)
                    mx_scale_values(j, vals + c, x + c, 1, bytes[c]);
                dt_emit_codes(&j->em, base + r * I + c0, vals, W);
            }
        }
    }
}

dtcast_status dt_mx_quantize(const dt_quant *q, dt_qio *io, dtcast_error *error)
{
    (void)error;
    mx_job j;
    mx_setup(&j, q);
    j.scales = io->scales;
    dt_loader_init(&j.ld, io->x, q->xtype, q->simple);
    dt_emit_init(&j.em, q, io->codes, false);
    j.fm = (dt_fq_mx){q->p.scale_mode, j.emax, j.mbits, j.inv_max};
    j.fused = q->I == 1 && q->B == 32 && q->D % 32 == 0 && q->p.scale_mode != DTCAST_SCALE_LOG2 &&
              dt_fq_init(&j.fq, q, j.is_int ? DT_Q_MUL_I8 : DT_Q_MUL, 32, io->x, io->codes);
    const size_t units = q->O * q->nb;
    /* sub-byte codes: blocks that do not start on a byte share bytes between threads */
    const unsigned threads = q->code_bits < 8 && q->I == 1 && q->B % 4 ? 1 : q->threads;
    if (q->count)
        dt_quant_for(units, threads, q->I == 1 ? mx_q_lines : mx_q_slabs, &j);
    dt_emit_release(&j.em);
    dt_loader_release(&j.ld);
    return DTCAST_OK;
}

/* ---- dequantize ---------------------------------------------------------------------------------- */

static void mx_dq_lines(void *ctx, size_t u0, size_t u1)
{
    const mx_job *j = ctx;
    const dt_quant *q = j->q;
    float vals[DT_QCHUNK];
    const size_t B = q->B, D = q->D, nb = q->nb;
    const size_t group = q->simple ? 1 : B <= DT_QCHUNK ? DT_QCHUNK / B : 1;
    for (size_t u = u0; u < u1;) {
        if (B > DT_QCHUNK) {
            const size_t o = u / nb, jb = u % nb, f0 = o * D + jb * B;
            const size_t len = D - jb * B < B ? D - jb * B : B;
            const float m = mx_dequant_mult(j, j->scales[u]);
            for (size_t s = 0; s < len; s += DT_QCHUNK) {
                const size_t n = len - s < DT_QCHUNK ? len - s : DT_QCHUNK;
                dt_emit_values(&j->em, f0 + s, vals, n);
                for (size_t i = 0; i < n; i++)
                    vals[i] = dt_mul_nan_first(vals[i], m);
                dt_store_f32(&j->st, f0 + s, vals, n);
            }
            u++;
            continue;
        }
        const size_t ue = u + group < u1 ? u + group : u1;
        size_t f0 = u * B, n = (ue - u) * B; /* whole blocks: no division */
        if (D % B) {
            f0 = u / nb * D + u % nb * B;
            n = 0;
            for (size_t v = u; v < ue; v++) {
                const size_t jb = v % nb;
                n += D - jb * B < B ? D - jb * B : B;
            }
        }
        if (j->dq_fused && dt_fused_run(j->dq_fused, f0, n, B, j->scales + u)) {
            u = ue;
            continue;
        }
        dt_emit_values(&j->em, f0, vals, n);
        if (!q->simple && D % B == 0 && B >= 8) {
            const size_t nbk = ue - u;
            float kk[DT_QCHUNK / 8];
            for (size_t k = 0; k < nbk; k++)
                kk[k] = mx_dequant_mult(j, j->scales[u + k]);
            dt_store_scaled(&j->st, q, f0, vals, n, B, kk);
            u = ue;
            continue;
        } else {
            size_t off = 0;
            for (size_t v = u; v < ue; v++) {
                const size_t jb = v % nb;
                const size_t len = D - jb * B < B ? D - jb * B : B;
                const float m = mx_dequant_mult(j, j->scales[v]);
                for (size_t i = 0; i < len; i++)
                    vals[off + i] = dt_mul_nan_first(vals[off + i], m);
                off += len;
            }
        }
        dt_store_f32(&j->st, f0, vals, n);
        u = ue;
    }
}

static void mx_dq_slabs(void *ctx, size_t u0, size_t u1)
{
    const mx_job *j = ctx;
    const dt_quant *q = j->q;
    float vals[DT_QCHUNK], mult[MX_COLS];
    const size_t B = q->B, D = q->D, I = q->I, nb = q->nb;
    const size_t W0 = q->simple ? 1 : MX_COLS;
    for (size_t u = u0; u < u1; u++) {
        const size_t o = u / nb, jb = u % nb;
        const size_t len = D - jb * B < B ? D - jb * B : B;
        const size_t base = (o * D + jb * B) * I;
        for (size_t c0 = 0; c0 < I; c0 += W0) {
            const size_t W = I - c0 < W0 ? I - c0 : W0;
            for (size_t c = 0; c < W; c++)
                mult[c] = mx_dequant_mult(j, j->scales[(o * nb + jb) * I + c0 + c]);
            for (size_t r = 0; r < len; r++) {
                dt_emit_values(&j->em, base + r * I + c0, vals, W);
                for (size_t c = 0; c < W; c++)
                    vals[c] = dt_mul_nan_first(vals[c], mult[c]);
                dt_store_f32(&j->st, base + r * I + c0, vals, W);
            }
        }
    }
}

dtcast_status dt_mx_dequantize(const dt_quant *q, dt_qio *io, dtcast_error *error)
{
    (void)error;
    mx_job j;
    mx_setup(&j, q);
    j.scales = io->scales;
    dt_storer_init(&j.st, io->y, q->xtype, q->count, q->simple);
    dt_emit_init(&j.em, q, io->codes, true);
    dt_fused fz;
    if (q->I == 1 && q->D % q->B == 0 && dt_fused_init(&fz, &j.st, q, io->codes)) {
        for (unsigned c = 0; c < 256; c++)
            dt_fused_factor(&fz, c, mx_dequant_mult(&j, c));
        j.dq_fused = &fz;
    }
    const size_t units = q->O * q->nb;
    if (q->count)
        dt_quant_for(units, q->threads, q->I == 1 ? mx_dq_lines : mx_dq_slabs, &j);
    dt_emit_release(&j.em);
    dt_storer_release(&j.st);
    return DTCAST_OK;
}
