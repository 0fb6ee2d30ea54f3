/* ONNX QuantizeLinear / DequantizeLinear element by element, as docs/onnx.md says, for every
 * type, granularity and precision: x, scale and zero point are read as float64 values (exact),
 * the arithmetic is done in the plan's precision (binary32 through float, binary64 through double,
 * 16-bit quotients rounded through dtcast_convert), and the final casts are dtcast_convert with
 * ONNX Cast's options. The fast paths (onnx_qdq_fast.c) are checked against this one. */
#include "onnx_qdq.h"

#include <math.h>
#include <string.h>

#if defined(__x86_64__) || defined(__SSE2__)
#include <xmmintrin.h>
#define HAVE_MXCSR 1
#else
#include <fenv.h>
#endif

void dt_fpenv_enter(dt_fpenv *e)
{
#ifdef HAVE_MXCSR
    e->saved = _mm_getcsr();
    e->round = 0;
    _mm_setcsr(0x1F80u); /* every exception masked, nearest, no FTZ / DAZ */
#else
    e->saved = 0;
    e->round = fegetround();
    if (e->round != FE_TONEAREST)
        fesetround(FE_TONEAREST);
#endif
}

void dt_fpenv_leave(const dt_fpenv *e)
{
#ifdef HAVE_MXCSR
    _mm_setcsr(e->saved);
#else
    if (e->round != FE_TONEAREST)
        fesetround(e->round);
#endif
}

double dt_qdq_rne(double v)
{
    if (!(fabs(v) < 4503599627370496.0)) /* 2^52 and above are integers; NaN, Inf stay */
        return v;
    double t = trunc(v), f = fabs(v - t);
    if (f > 0.5 || (f == 0.5 && fmod(t, 2.0) != 0.0))
        t += v < 0 ? -1.0 : 1.0;
    return t == 0 ? copysign(0.0, v) : t;
}

float dt_qdq_rnef(float v)
{
    if (!(fabsf(v) < 8388608.0f)) /* 2^23 */
        return v;
    float t = truncf(v), f = fabsf(v - t);
    if (f > 0.5f || (f == 0.5f && fmodf(t, 2.0f) != 0.0f))
        t += v < 0 ? -1.0f : 1.0f;
    return t == 0 ? copysignf(0.0f, v) : t;
}

enum { CHUNK = 256 }; /* a multiple of 8: packed outputs start on whole bytes */

static size_t elem_bytes(dtcast_type t)
{
    const dt_format *f = dt_format_of(t);
    return (size_t)f->stride_bits / 8;
}

/* Byte offset of element i (a multiple of 8 for sub-byte types). */
static size_t byte_at(dtcast_type t, size_t i)
{
    const dt_format *f = dt_format_of(t);
    return f->stride_bits >= 8 ? i * elem_bytes(t) : i / 8 * (size_t)f->stride_bits;
}

static void load_f64(double *dst, const void *base, dtcast_type t, size_t i, size_t count)
{
    dtcast_options o;
    dtcast_options_init(&o);
    o.threads = 1;
    (void)dtcast_convert(dst, DTCAST_FLOAT64, (const uint8_t *)base + byte_at(t, i), t, count, &o,
                         NULL);
}

/* v rounded to t (nearest even, IEEE overflow) and back. */
static void round_f64(double *v, size_t count, dtcast_type t)
{
    uint8_t tmp[CHUNK * 8];
    dtcast_options o;
    dtcast_options_init(&o);
    o.threads = 1;
    o.round = DTCAST_ROUND_RNE;
    (void)dtcast_convert(tmp, t, v, DTCAST_FLOAT64, count, &o, NULL);
    load_f64(v, tmp, t, 0, count);
}

/* The float32 value of a float64 holding one (the arithmetic of DT_QDQ_F32 / DT_QDQ_16). */
static float f32(double v) { return (float)v; }

/* A NaN result is the positive quiet NaN: which operand's NaN an operation returns, and the sign
 * of 0/0 or Inf*0, differ between CPUs and compilers (docs/onnx.md, "NaN"). */
static double canon(double v) { return v != v ? fabs(v) : v; }

static void quantize_chunk(const dt_qdq_plan *p, size_t i0, size_t count)
{
    double q[CHUNK];
    load_f64(q, p->x, p->xt, i0, count);
    if (p->precision != DTCAST_UNDEFINED)
        round_f64(q, count, p->precision);
    /* q = x / scale in the plan's precision */
    for (size_t k = 0; k < count; k++) {
        const double s = p->sd[dt_qdq_scale_index(p, i0 + k)];
        q[k] = canon(p->mode == DT_QDQ_F64 ? q[k] / s : (double)(f32(q[k]) / f32(s)));
    }
    if (p->mode == DT_QDQ_16)
        round_f64(q, count, p->half);
    const dt_format *yf = dt_format_of(p->yt);
    if (yf->tc != DT_TC_FLOAT) {
        /* integer y: rint(q) + zero point, clamped; NaN -> the minimum */
        for (size_t k = 0; k < count; k++) {
            double r = dt_qdq_rne(q[k]);
            int64_t v;
            if (r != r) {
                v = p->qmin;
            } else {
                r = r > 0x1p40 ? 0x1p40 : r < -0x1p40 ? -0x1p40 : r;
                if (p->zd)
                    r += p->zd[dt_qdq_scale_index(p, i0 + k)];
                v = r <= (double)p->qmin ? p->qmin : r >= (double)p->qmax ? p->qmax : (int64_t)r;
            }
            dt_store(yf, p->y, i0 + k, (uint64_t)v & (yf->bits == 64 ? ~0ull : ((1ull << yf->bits) - 1)));
        }
        return;
    }
    /* float4 / float6 y: q + zero point first, in the type NumPy promotes the quotient and
     * the zero point to (as the reference adds them): float64, else float32, except a
     * bfloat16 quotient, whose sum with a float4 / float6 array is bfloat16 (a float16 one
     * gives float32, so it is not rounded back to float16) */
    if (p->zd) {
        for (size_t k = 0; k < count; k++) {
            const double z = p->zd[dt_qdq_scale_index(p, i0 + k)];
            q[k] = canon(p->mode == DT_QDQ_F64 ? q[k] + z : (double)(f32(q[k]) + f32(z)));
        }
        if (p->mode == DT_QDQ_16 && p->half == DTCAST_BFLOAT16)
            round_f64(q, count, p->half);
    }
    (void)dtcast_convert((uint8_t *)p->y + byte_at(p->yt, i0), p->yt, q, DTCAST_FLOAT64, count,
                         &p->cast, NULL);
}

static void dequantize_chunk(const dt_qdq_plan *p, size_t i0, size_t count)
{
    double v[CHUNK];
    load_f64(v, p->x, p->xt, i0, count);
    for (size_t k = 0; k < count; k++) {
        const size_t si = dt_qdq_scale_index(p, i0 + k);
        const double s = p->sd[si], z = p->zd ? p->zd[si] : 0.0;
        if (p->mode == DT_QDQ_F64)
            v[k] = canon((v[k] - z) * s);
        else
            v[k] = canon((double)((f32(v[k]) - f32(z)) * f32(s)));
    }
    (void)dtcast_convert((uint8_t *)p->y + byte_at(p->yt, i0), p->yt, v, DTCAST_FLOAT64, count,
                         &p->cast, NULL);
}

void dt_qdq_simple_range(const dt_qdq_plan *p, size_t begin, size_t end)
{
    for (size_t i = begin; i < end; i += CHUNK) {
        const size_t count = end - i < CHUNK ? end - i : CHUNK;
        if (p->quantize)
            quantize_chunk(p, i, count);
        else
            dequantize_chunk(p, i, count);
    }
}
