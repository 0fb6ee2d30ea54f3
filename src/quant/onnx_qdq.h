/* ONNX QuantizeLinear / DequantizeLinear: what the checking and planning (onnx_qdq.c), the simple
 * element-by-element path (onnx_qdq_simple.c) and the fast paths (onnx_qdq_fast.c) share. */
#ifndef DTCAST_QUANT_ONNX_QDQ_H
#define DTCAST_QUANT_ONNX_QDQ_H

#include "quant.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Which scale an element uses. */
typedef enum dt_qdq_gran { DT_QDQ_TENSOR, DT_QDQ_AXIS, DT_QDQ_BLOCK } dt_qdq_gran;

/* The precision of the quotient (Q) or of the product (DQ). */
typedef enum dt_qdq_mode {
    DT_QDQ_F32, /* binary32 */
    DT_QDQ_F64, /* binary64 */
    DT_QDQ_16   /* binary32, then rounded to the 16-bit type `half` (float16 / bfloat16) */
} dt_qdq_mode;

typedef struct dt_qdq_plan {
    bool quantize;
    size_t n;        /* elements of x (and y) */
    dt_qdq_gran gran;
    size_t dim;      /* D: x's length along the axis (TENSOR: 1) */
    size_t inner;    /* elements after the axis (TENSOR: n) */
    size_t sdim;     /* S: the scale's length along the axis (AXIS: D; BLOCK: ceil(D / B)) */
    size_t block;    /* B (BLOCK) */
    size_t nscale;   /* elements of scale (and of the zero point) */
    dtcast_type xt, st, yt;
    dt_qdq_mode mode;
    dtcast_type half;      /* DT_QDQ_16: the 16-bit type of the quotient */
    dtcast_type precision; /* Q: x and scale are rounded to it first (UNDEFINED: not given) */
    const void *x;
    void *y;
    const void *scale;     /* the caller's, in st */
    const void *zp;        /* the caller's, in the zero point's type, or NULL */
    dtcast_type zt;
    /* The simple path's copies: scale (after `precision`) and zero point as float64 values. */
    double *sd;
    double *zd;            /* NULL when there is no zero point */
    float *sf, *zf;        /* the same as float32 (the fast paths' scales and zero points) */
    int64_t qmin, qmax;    /* integer y */
    dtcast_options cast;   /* the final Cast (Q: float8/float4 y; DQ: float -> output type) */
    unsigned threads;
} dt_qdq_plan;

/* The index of element i's scale. */
static inline size_t dt_qdq_scale_index(const dt_qdq_plan *p, size_t i)
{
    switch (p->gran) {
    case DT_QDQ_TENSOR: return 0;
    case DT_QDQ_AXIS: return (i / p->inner) % p->dim;
    default: {
        size_t in = i % p->inner, a = (i / p->inner) % p->dim, o = i / p->inner / p->dim;
        return (o * p->sdim + a / p->block) * p->inner + in;
    }
    }
}

/* The simple path over elements [begin, end) (begin a multiple of 8). */
void dt_qdq_simple_range(const dt_qdq_plan *p, size_t begin, size_t end);

/* Whether a fast path takes the plan, and running it over [begin, end). The fast paths give the
 * simple path's bytes (tests/test_onnx_qdq.c checks it). */
bool dt_qdq_fast_takes(const dt_qdq_plan *p);
void dt_qdq_fast_range(const dt_qdq_plan *p, size_t begin, size_t end);
/* Test hook (tests/test_onnx_qdq.c): every call takes the simple path while set. */
void dt_qdq_fast_disable(bool off);

/* y[k] = clamp(rne(x[k] / s) + z, lo, hi) (NaN -> lo) as int8 (sign) or uint8, on the best ISA. */
void dt_qdq_f32_to_int8(const float *x, void *y, size_t n, float s, float z, float lo, float hi,
                        bool sign);

/* Round to nearest, ties to even, whatever the caller's rounding mode. */
double dt_qdq_rne(double v);
float dt_qdq_rnef(float v);

/* The floating-point environment of the arithmetic: round to nearest, no flush to zero. The
 * caller's is restored on leaving. */
typedef struct dt_fpenv {
    unsigned saved;
    int round;
} dt_fpenv;
void dt_fpenv_enter(dt_fpenv *e);
void dt_fpenv_leave(const dt_fpenv *e);

#endif /* DTCAST_QUANT_ONNX_QDQ_H */
