/* Symmetric absmax per tensor, per channel or per group along the last axis (compressed-tensors,
 * llm-compressor): the scale is computed and stored in the scale type P (by default x's type),
 * scale = P(amax / c), a zero scale becomes P's epsilon, and the codes are the saturating
 * round-to-nearest-even of the quotient P(x / scale) (docs/quantization.md, "Absmax"). */
#include "quant.h"
#include "../parallel.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

typedef struct am_job {
    const dt_quant *q;
    dt_loader ld;
    dt_storer st;
    dt_emit em;
    uint8_t *scales;
    double c;         /* amax / c: 127.5 (int8), 7.5 (int4), the largest float8 / float4 value */
    double tensor_scale; /* per tensor */
    _Atomic uint32_t amax_bits;
    /* the fast path: float32 arithmetic, each result rounded to P through the kernels (a
     * float32 quotient or product rounded to a 16-bit P is the correctly rounded P result:
     * 24 >= 2 * 11 + 2) */
    dt_qconv to_p, from_p;
} am_job;

/* vals (float32) rounded to P in place (fast path) */
static void via_p(const am_job *j, float *vals, size_t n)
{
    if (j->q->scale_type == DTCAST_FLOAT32)
        return;
    uint16_t tmp[DT_QCHUNK];
    dt_qconv_run(&j->to_p, tmp, vals, n, 0);
    dt_qconv_run(&j->from_p, vals, tmp, n, 0);
}

/* v rounded once to P (nearest even; the quantization calls run in the default environment) */
static double round_p(double v, dtcast_type P)
{
    if (P == DTCAST_FLOAT32)
        return (double)(float)v;
    if (v == 0.0 || !isfinite(v))
        return v;
    const int mbits = P == DTCAST_BFLOAT16 ? 8 : 11, emin = P == DTCAST_BFLOAT16 ? -126 : -14;
    const double max = P == DTCAST_BFLOAT16 ? 0x1.FEp127 : 65504.0;
    int e;
    (void)frexp(v, &e); /* |v| in [2^(e-1), 2^e) */
    const int lsb = (e - 1 > emin ? e - 1 : emin) - (mbits - 1);
    const double r = ldexp(nearbyint(ldexp(v, -lsb)), lsb);
    return fabs(r) > max ? copysign(INFINITY, r) : r;
}

static double eps_p(dtcast_type P)
{
    return P == DTCAST_FLOAT32 ? 0x1p-23 : P == DTCAST_BFLOAT16 ? 0x1p-7 : 0x1p-10;
}

static void put_scale(const am_job *j, size_t i, double s)
{
    const dtcast_type P = j->q->scale_type;
    if (P == DTCAST_FLOAT32) {
        const float f = (float)s;
        memcpy(j->scales + i * 4, &f, 4);
    } else {
        const float f = (float)s; /* exact: s is a value of P */
        uint16_t h;
        dt_qconv_run(&j->to_p, &h, &f, 1, 0);
        memcpy(j->scales + i * 2, &h, 2);
    }
}

static double get_scale(const am_job *j, size_t i)
{
    const dtcast_type P = j->q->scale_type;
    float f;
    if (P == DTCAST_FLOAT32) {
        memcpy(&f, j->scales + i * 4, 4);
    } else {
        uint16_t h;
        memcpy(&h, j->scales + i * 2, 2);
        dt_qconv_run(&j->from_p, &f, &h, 1, 0);
    }
    return f;
}

static double scale_of(const am_job *j, float amax)
{
    double s;
    if (j->q->simple) {
        s = round_p((double)amax / j->c, j->q->scale_type);
    } else {
        float v = amax / (float)j->c;
        via_p(j, &v, 1);
        s = v;
    }
    return s == 0.0 ? eps_p(j->q->scale_type) : s;
}

static float seg_amax(const am_job *j, size_t f, size_t n)
{
    float buf[DT_QCHUNK], m = 0.0f;
    const size_t step = j->q->simple ? 1 : DT_QCHUNK;
    for (size_t s = 0; s < n; s += step) {
        const size_t k = n - s < step ? n - s : step;
        const float *x = dt_load_f32(&j->ld, f + s, k, buf);
        const float a = dt_q_amax(j->q, x, k);
        m = m != m ? m : a != a ? a : a > m ? a : m;
    }
    return m;
}

static void seg_codes(const am_job *j, size_t f, size_t n, double scale)
{
    float buf[DT_QCHUNK], vals[DT_QCHUNK];
    const size_t step = j->q->simple ? 1 : DT_QCHUNK;
    const float sf = (float)scale; /* a value of P: exact */
    for (size_t s = 0; s < n; s += step) {
        const size_t k = n - s < step ? n - s : step;
        const float *x = dt_load_f32(&j->ld, f + s, k, buf);
        if (j->q->simple) { /* the exact quotient in double, rounded once to P */
            for (size_t i = 0; i < k; i++)
                vals[i] = (float)round_p((double)x[i] / scale, j->q->scale_type);
        } else {
            dt_q_apply(j->q, DT_Q_DIV, vals, x, 1, k, &sf);
            via_p(j, vals, k);
        }
        dt_emit_codes(&j->em, f + s, vals, k);
    }
}

static void am_amax_rows(void *ctx, size_t r0, size_t r1)
{
    am_job *j = ctx;
    const uint32_t m = dt_f32_bits(seg_amax(j, r0 * j->q->K, (r1 - r0) * j->q->K));
    uint32_t cur = atomic_load(&j->amax_bits);
    while (m > cur && !atomic_compare_exchange_weak(&j->amax_bits, &cur, m)) {
    }
}

static void am_q_rows(void *ctx, size_t r0, size_t r1)
{
    const am_job *j = ctx;
    const dt_quant *q = j->q;
    const size_t K = q->K, G = q->p.per_tensor || q->B == 0 ? K : q->B;
    const size_t ng = q->p.per_tensor || q->B == 0 ? 1 : (K + G - 1) / G;
    for (size_t r = r0; r < r1; r++)
        for (size_t g = 0; g < ng; g++) {
            const size_t f = r * K + g * G, n = K - g * G < G ? K - g * G : G;
            double s = j->tensor_scale;
            if (!q->p.per_tensor) {
                s = scale_of(j, seg_amax(j, f, n));
                put_scale(j, r * ng + g, s);
            }
            seg_codes(j, f, n, s);
        }
}

static void am_setup(am_job *j, const dt_quant *q)
{
    memset(j, 0, sizeof *j);
    j->q = q;
    if (q->scale_type != DTCAST_FLOAT32) {
        dt_qconv_init(&j->to_p, q->scale_type, DTCAST_FLOAT32, DTCAST_ROUND_RNE, false, 0,
                      DT_QCHUNK, q->simple);
        dt_qconv_init(&j->from_p, DTCAST_FLOAT32, q->scale_type, DTCAST_ROUND_RNE, false, 0,
                      DT_QCHUNK, q->simple);
    }
    /* c from the element's format: a float's largest finite value (448 for float8e4m3fn, 57344
     * for float8e5m2, 6 for float4e2m1); an integer's half range (qmax - qmin) / 2, as
     * compressed-tensors divides (127.5 for int8, 7.5 for int4) */
    dtcast_info info;
    if (dtcast_type_info(q->p.element, &info, NULL) == DTCAST_OK && info.kind == DTCAST_KIND_FLOAT)
        j->c = info.max;
    else
        j->c = ldexp(1.0, dtcast_type_bits(q->p.element) - 1) - 0.5;
}

dtcast_status dt_absmax_quantize(const dt_quant *q, dt_qio *io, dtcast_error *error)
{
    (void)error;
    am_job j;
    am_setup(&j, q);
    j.scales = io->scales;
    dt_loader_init(&j.ld, io->x, q->xtype, q->simple);
    if (q->p.per_tensor) {
        atomic_init(&j.amax_bits, 0);
        dt_quant_for(q->rows, q->threads, am_amax_rows, &j);
        j.tensor_scale = scale_of(&j, dt_f32_from_bits(atomic_load(&j.amax_bits)));
        put_scale(&j, 0, j.tensor_scale);
    }
    if (!q->p.per_tensor && q->K == 0) /* rows of no elements: amax 0 */
        for (size_t i = 0; i < q->scount; i++)
            put_scale(&j, i, scale_of(&j, 0.0f));
    dt_emit_init(&j.em, q, io->codes, false);
    dt_quant_for(q->rows, q->threads, am_q_rows, &j);
    dt_emit_release(&j.em);
    dt_loader_release(&j.ld);
    dt_qconv_release(&j.to_p);
    dt_qconv_release(&j.from_p);
    return DTCAST_OK;
}

static void am_dq_rows(void *ctx, size_t r0, size_t r1)
{
    const am_job *j = ctx;
    const dt_quant *q = j->q;
    float vals[DT_QCHUNK];
    const size_t K = q->K, G = q->p.per_tensor || q->B == 0 ? K : q->B;
    const size_t ng = q->p.per_tensor || q->B == 0 ? 1 : (K + G - 1) / G;
    const size_t step = q->simple ? 1 : DT_QCHUNK;
    for (size_t r = r0; r < r1; r++)
        for (size_t g = 0; g < ng; g++) {
            const size_t f = r * K + g * G, n = K - g * G < G ? K - g * G : G;
            const double s = get_scale(j, q->p.per_tensor ? 0 : r * ng + g);
            for (size_t o = 0; o < n; o += step) {
                const size_t k = n - o < step ? n - o : step;
                dt_emit_values(&j->em, f + o, vals, k);
                if (q->simple) {
                    for (size_t i = 0; i < k; i++)
                        vals[i] = (float)round_p((double)vals[i] * s, q->scale_type);
                } else { /* exact in float32 for 16-bit P; fl32 for float32 P */
                    const float sf = (float)s;
                    dt_q_apply(q, DT_Q_MUL, vals, vals, 1, k, &sf);
                    via_p(j, vals, k);
                }
                dt_store_f32(&j->st, f + o, vals, k);
            }
        }
}

dtcast_status dt_absmax_dequantize(const dt_quant *q, dt_qio *io, dtcast_error *error)
{
    (void)error;
    am_job j;
    am_setup(&j, q);
    j.scales = io->scales;
    dt_storer_init(&j.st, io->y, q->xtype, q->count, q->simple);
    dt_emit_init(&j.em, q, io->codes, true);
    dt_quant_for(q->rows, q->threads, am_dq_rows, &j);
    dt_emit_release(&j.em);
    dt_storer_release(&j.st);
    dt_qconv_release(&j.to_p);
    dt_qconv_release(&j.from_p);
    return DTCAST_OK;
}
