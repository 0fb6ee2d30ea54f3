/* ONNX QuantizeLinear / DequantizeLinear, opsets 10 to 28 (docs/onnx.md, "Quantization
 * operators"): which types and attributes each opset takes, the granularity the scale's shape
 * gives, the precision of the arithmetic, then the element work (onnx_qdq_simple.c, or a fast
 * path of onnx_qdq_fast.c) over all threads. Everything is checked before the output is
 * touched. */
#include "onnx_qdq.h"

#include "../parallel.h"

#include <stdlib.h>
#include <string.h>

void dtcast_onnx_qdq_attrs_init(dtcast_onnx_qdq_attrs *attrs)
{
    if (!attrs)
        return;
    memset(attrs, 0, sizeof *attrs);
    attrs->opset = DTCAST_ONNX_OPSET_MAX;
    attrs->axis = 1;
    attrs->saturate = 1;
}

/* ---- types by opset ------------------------------------------------------------------------ */

static bool is_float8(dtcast_type t)
{
    return t == DTCAST_FLOAT8E4M3FN || t == DTCAST_FLOAT8E4M3FNUZ || t == DTCAST_FLOAT8E5M2 ||
           t == DTCAST_FLOAT8E5M2FNUZ;
}

/* The first opset whose QuantizeLinear y (= DequantizeLinear x) takes t; 0 = never. */
static int quant_type_since(dtcast_type t)
{
    switch (dt_type_canonical(t)) {
    case DTCAST_INT8: case DTCAST_UINT8: return 10;
    case DTCAST_FLOAT8E4M3FN: case DTCAST_FLOAT8E4M3FNUZ: case DTCAST_FLOAT8E5M2:
    case DTCAST_FLOAT8E5M2FNUZ: return 19;
    case DTCAST_INT16: case DTCAST_UINT16: case DTCAST_INT4: case DTCAST_UINT4: return 21;
    case DTCAST_FLOAT4E2M1: return 23;
    case DTCAST_INT2: case DTCAST_UINT2: return 25;
    case DTCAST_FLOAT6E2M3FN: case DTCAST_FLOAT6E3M2FN: return 28;
    default: return 0;
    }
}

static const char *tname(dtcast_type t)
{
    const char *s = dtcast_type_name(t);
    return s ? s : "an unknown type";
}

static dtcast_status refuse(dtcast_error *error, const char *op, int opset, const char *what,
                            dtcast_type t, const char *allowed)
{
    return dt_fail(error, DTCAST_ERR_UNSUPPORTED, DT_NO_INDEX,
                   "ONNX %s-%d does not take %s of type %s (%s)", op, opset, what, tname(t),
                   allowed);
}

static bool is_16bit_float(dtcast_type t) { return t == DTCAST_FLOAT16 || t == DTCAST_BFLOAT16; }

static dtcast_status check_quant_type(dtcast_error *error, const char *op, int opset,
                                      const char *what, dtcast_type t)
{
    const int since = quant_type_since(t);
    if (since == 0)
        return refuse(error, op, opset, what, t,
                      "it takes int8, uint8, int16, uint16, int4, uint4, int2, uint2, the four "
                      "float8 types, float4e2m1 and the two float6 types, by opset");
    if (opset < since)
        return dt_fail(error, DTCAST_ERR_UNSUPPORTED, DT_NO_INDEX,
                       "ONNX %s-%d does not take %s of type %s: it needs opset %d or later", op,
                       opset, what, tname(t), since);
    return DTCAST_OK;
}

/* The scale's type: float32 (10, 13); 19..22 QuantizeLinear: x's type, DequantizeLinear:
 * float32/float16/bfloat16; 23: QuantizeLinear float32/float16/bfloat16/int32,
 * DequantizeLinear float32/float16/bfloat16; 24: + float8e8m0. */
static dtcast_status check_scale_type(dtcast_error *error, const char *op, int opset, bool q,
                                      dtcast_type st, dtcast_type xt)
{
    if (opset < 19) {
        if (st != DTCAST_FLOAT32)
            return refuse(error, op, opset, "a scale", st, "float32 only before opset 19");
        return DTCAST_OK;
    }
    if (q && opset < 23) {
        if (st != xt)
            return dt_fail(error, DTCAST_ERR_UNSUPPORTED, DT_NO_INDEX,
                           "ONNX %s-%d takes a scale of x's type (%s), not %s; a scale type of its "
                           "own needs opset 23",
                           op, opset, tname(xt), tname(st));
        return DTCAST_OK;
    }
    if (st == DTCAST_FLOAT32 || is_16bit_float(st))
        return DTCAST_OK;
    if (q && st == DTCAST_INT32)
        return DTCAST_OK;
    if (st == DTCAST_FLOAT8E8M0) {
        if (opset < 24)
            return dt_fail(error, DTCAST_ERR_UNSUPPORTED, DT_NO_INDEX,
                           "ONNX %s-%d does not take a float8e8m0 scale: it needs opset 24", op,
                           opset);
        return DTCAST_OK;
    }
    return refuse(error, op, opset, "a scale", st,
                  q ? "float32, float16, bfloat16, int32, float8e8m0 (24)"
                    : "float32, float16, bfloat16, float8e8m0 (24)");
}

/* ---- shapes -------------------------------------------------------------------------------- */

/* Granularity from the scale's shape (docs/onnx.md's rules), checked against x's. */
static dtcast_status plan_shape(dt_qdq_plan *p, const dtcast_tensor *x, const dtcast_tensor *s,
                                const dtcast_onnx_qdq_attrs *a, const char *op,
                                dtcast_error *error)
{
    p->gran = DT_QDQ_TENSOR;
    p->dim = 1;
    p->inner = p->n;
    p->sdim = 1;
    p->block = 0;
    if (a->block_size < 0)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "ONNX %s: block_size must be 0 or positive, not %lld", op,
                       (long long)a->block_size);
    if (a->block_size != 0 && a->opset < 21)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "ONNX %s-%d has no 'block_size' attribute (it appeared in opset 21)", op,
                       a->opset);
    if (p->nscale == 1 && s->ndim <= 1 && a->block_size == 0)
        return DTCAST_OK; /* a scalar or a 1-element scale: per tensor, whatever x's rank */
    if (p->nscale == 1 && a->block_size == 0 && s->ndim == x->ndim)
        return DTCAST_OK;
    if (a->opset < 13)
        return dt_fail(error, DTCAST_ERR_UNSUPPORTED, DT_NO_INDEX,
                       "ONNX %s-%d takes a scalar scale only (per-axis scales need opset 13); "
                       "the scale has %zu elements",
                       op, a->opset, p->nscale);
    if (x->ndim == 0)
        return dt_fail(error, DTCAST_ERR_BAD_SHAPE, DT_NO_INDEX,
                       "ONNX %s: a 0-dimensional x takes a 1-element scale, not %zu elements", op,
                       p->nscale);
    if (a->axis < -x->ndim || a->axis >= x->ndim)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "ONNX %s: axis %lld is outside x's %d dimensions", op, (long long)a->axis,
                       x->ndim);
    const int axis = (int)(a->axis < 0 ? a->axis + x->ndim : a->axis);
    size_t inner = 1;
    for (int d = axis + 1; d < x->ndim; d++)
        inner *= (size_t)x->shape[d]; /* fits: a factor of n */
    p->dim = (size_t)x->shape[axis];
    p->inner = inner;
    if (a->block_size == 0) {
        if (s->ndim != 1)
            return dt_fail(error, DTCAST_ERR_BAD_SHAPE, DT_NO_INDEX,
                           "ONNX %s: a scale of %d dimensions and %zu elements without "
                           "block_size (per-axis scales are 1-D)",
                           op, s->ndim, p->nscale);
        if ((size_t)s->shape[0] != p->dim)
            return dt_fail(error, DTCAST_ERR_BAD_SHAPE, DT_NO_INDEX,
                           "ONNX %s: the per-axis scale has %lld elements, x has %zu along axis %d",
                           op, (long long)s->shape[0], p->dim, axis);
        p->gran = DT_QDQ_AXIS;
        p->sdim = p->dim;
        return DTCAST_OK;
    }
    if (s->ndim != x->ndim)
        return dt_fail(error, DTCAST_ERR_BAD_SHAPE, DT_NO_INDEX,
                       "ONNX %s: a blocked scale has x's rank (%d), not %d", op, x->ndim, s->ndim);
    for (int d = 0; d < x->ndim; d++)
        if (d != axis && s->shape[d] != x->shape[d])
            return dt_fail(error, DTCAST_ERR_BAD_SHAPE, DT_NO_INDEX,
                           "ONNX %s: blocked scale dimension %d is %lld, x's is %lld (only the "
                           "axis %d may differ)",
                           op, d, (long long)s->shape[d], (long long)x->shape[d], axis);
    const uint64_t D = (uint64_t)x->shape[axis], S = (uint64_t)s->shape[axis];
    const uint64_t B = (uint64_t)a->block_size;
    /* B within [ceil(D/S), ceil(D/(S-1)) - 1]: S = ceil(D/B) */
    if (S == 0 || D == 0 || (D + B - 1) / B != S)
        return dt_fail(error, DTCAST_ERR_BAD_SHAPE, DT_NO_INDEX,
                       "ONNX %s: block_size %llu does not fit: x has %llu along axis %d, the "
                       "scale %llu (it needs ceil(%llu / block_size) = %llu)",
                       op, (unsigned long long)B, (unsigned long long)D, axis,
                       (unsigned long long)S, (unsigned long long)D,
                       (unsigned long long)(D == 0 ? 0 : (D + B - 1) / B));
    p->gran = DT_QDQ_BLOCK;
    p->sdim = (size_t)S;
    p->block = (size_t)B;
    return DTCAST_OK;
}

static dtcast_status check_zero_point_shape(const dt_qdq_plan *p, const dtcast_tensor *s,
                                            const dtcast_tensor *z, size_t nz, const char *op,
                                            dtcast_error *error)
{
    bool same = nz == p->nscale;
    if (same && p->gran != DT_QDQ_TENSOR) {
        same = z->ndim == s->ndim;
        for (int d = 0; same && d < s->ndim; d++)
            same = z->shape[d] == s->shape[d];
    }
    if (!same)
        return dt_fail(error, DTCAST_ERR_BAD_SHAPE, DT_NO_INDEX,
                       "ONNX %s: the zero point's shape differs from the scale's (%zu and %zu "
                       "elements)",
                       op, nz, p->nscale);
    return DTCAST_OK;
}

/* ---- the values both paths read ----------------------------------------------------------- */

static dtcast_status to_f64(double *dst, const void *src, dtcast_type t, size_t count,
                            dtcast_error *error)
{
    dtcast_options o;
    dtcast_options_init(&o);
    o.threads = 1;
    return dtcast_convert(dst, DTCAST_FLOAT64, src, t, count, &o, error);
}

/* float64 values rounded to t (nearest even, IEEE overflow) and back, in place. */
static dtcast_status round_through(double *v, size_t count, dtcast_type t, dtcast_error *error)
{
    size_t bytes;
    if (dtcast_storage_size(t, count, &bytes, error) != DTCAST_OK)
        return DTCAST_ERR_SIZE_OVERFLOW;
    void *tmp = malloc(bytes ? bytes : 1);
    if (!tmp)
        return dt_fail(error, DTCAST_ERR_OUT_OF_MEMORY, DT_NO_INDEX, "out of memory");
    dtcast_options o;
    dtcast_options_init(&o);
    o.threads = 1;
    o.round = DTCAST_ROUND_RNE;
    dtcast_status st = dtcast_convert(tmp, t, v, DTCAST_FLOAT64, count, &o, error);
    if (st == DTCAST_OK)
        st = to_f64(v, tmp, t, count, error);
    free(tmp);
    return st;
}

static dtcast_status load_params(dt_qdq_plan *p, dtcast_error *error)
{
    p->sd = malloc(p->nscale * sizeof *p->sd);
    if (p->zp)
        p->zd = malloc(p->nscale * sizeof *p->zd);
    if (!p->sd || (p->zp && !p->zd))
        return dt_fail(error, DTCAST_ERR_OUT_OF_MEMORY, DT_NO_INDEX,
                       "out of memory for %zu scales", p->nscale);
    dtcast_status st = to_f64(p->sd, p->scale, p->st, p->nscale, error);
    if (st == DTCAST_OK && p->precision != DTCAST_UNDEFINED)
        st = round_through(p->sd, p->nscale, p->precision, error);
    if (st == DTCAST_OK && p->zp)
        st = to_f64(p->zd, p->zp, p->zt, p->nscale, error);
    if (st == DTCAST_OK && dt_qdq_fast_takes(p)) {
        p->sf = malloc(p->nscale * sizeof *p->sf);
        if (p->zp)
            p->zf = malloc(p->nscale * sizeof *p->zf);
        if (!p->sf || (p->zp && !p->zf))
            return dt_fail(error, DTCAST_ERR_OUT_OF_MEMORY, DT_NO_INDEX,
                           "out of memory for %zu scales", p->nscale);
        for (size_t i = 0; i < p->nscale; i++) {
            p->sf[i] = (float)p->sd[i]; /* exact: the fast paths take float32 scales only */
            if (p->zf)
                p->zf[i] = (float)p->zd[i];
        }
    }
    return st;
}

static void free_params(dt_qdq_plan *p)
{
    free(p->sd);
    free(p->zd);
    free(p->sf);
    free(p->zf);
    p->sd = p->zd = NULL;
    p->sf = p->zf = NULL;
}

/* ---- running ------------------------------------------------------------------------------- */

static void run_range(void *ctx, size_t begin, size_t end)
{
    const dt_qdq_plan *p = ctx;
    dt_fpenv env;
    dt_fpenv_enter(&env);
    if (dt_qdq_fast_takes(p))
        dt_qdq_fast_range(p, begin, end);
    else
        dt_qdq_simple_range(p, begin, end);
    dt_fpenv_leave(&env);
}

static dtcast_status run(dt_qdq_plan *p, dtcast_tensor *y, const dtcast_tensor *x,
                         dtcast_error *error)
{
    size_t need;
    dtcast_status st = dtcast_storage_size(p->yt, p->n, &need, error);
    if (st == DTCAST_OK)
        st = dt_tensor_room(y, "y", need, error);
    if (st == DTCAST_OK)
        st = load_params(p, error);
    if (st != DTCAST_OK) {
        free_params(p);
        return st;
    }
    p->y = y->data;
    if (p->n > 0)
        dt_parallel_for(p->n, dt_thread_count(p->threads, p->n), run_range, p);
    free_params(p);
    y->type = p->yt;
    y->ndim = x->ndim;
    for (int d = 0; d < x->ndim; d++)
        y->shape[d] = x->shape[d];
    return DTCAST_OK;
}

/* Inputs, attributes and options every call checks. */
static dtcast_status begin_plan(dt_qdq_plan *p, const char *op, const dtcast_tensor *x,
                                const dtcast_tensor *scale, const dtcast_tensor *zero_point,
                                const dtcast_onnx_qdq_attrs *a, const dtcast_options *opts,
                                size_t *nz, dtcast_error *error)
{
    memset(p, 0, sizeof *p);
    dtcast_options o;
    dtcast_status st = dt_options_read(opts, &o, error);
    if (st != DTCAST_OK)
        return st;
    p->threads = o.threads;
    if (!a)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "ONNX %s: attrs is NULL",
                       op);
    if (a->opset < 10 || a->opset > DTCAST_ONNX_OPSET_MAX)
        return dt_fail(error, DTCAST_ERR_UNSUPPORTED, DT_NO_INDEX,
                       "ONNX %s: opset %d is not known (dtcast knows 10 to %d)", op, a->opset,
                       DTCAST_ONNX_OPSET_MAX);
    if ((st = dt_tensor_input(x, "x", &p->n, error)) != DTCAST_OK ||
        (st = dt_tensor_input(scale, "scale", &p->nscale, error)) != DTCAST_OK)
        return st;
    if (zero_point && (st = dt_tensor_input(zero_point, "zero_point", nz, error)) != DTCAST_OK)
        return st;
    if (p->nscale == 0)
        return dt_fail(error, DTCAST_ERR_BAD_SHAPE, DT_NO_INDEX, "ONNX %s: the scale is empty",
                       op);
    p->quantize = strcmp(op, "QuantizeLinear") == 0;
    p->xt = dt_type_canonical(x->type);
    p->st = dt_type_canonical(scale->type);
    p->x = x->data;
    p->scale = scale->data;
    p->zp = zero_point ? zero_point->data : NULL;
    p->zt = zero_point ? dt_type_canonical(zero_point->type) : DTCAST_UNDEFINED;
    if ((st = plan_shape(p, x, scale, a, op, error)) != DTCAST_OK)
        return st;
    if (zero_point && (st = check_zero_point_shape(p, scale, zero_point, *nz, op, error)) !=
                          DTCAST_OK)
        return st;
    return DTCAST_OK;
}

static void int_range(dtcast_type t, int64_t *lo, int64_t *hi)
{
    const dt_format *f = dt_format_of(t);
    if (f->tc == DT_TC_SINT) {
        *lo = -((int64_t)1 << (f->bits - 1));
        *hi = ((int64_t)1 << (f->bits - 1)) - 1;
    } else {
        *lo = 0;
        *hi = ((int64_t)1 << f->bits) - 1;
    }
}

dtcast_status dtcast_onnx_quantize_linear(dtcast_tensor *y, const dtcast_tensor *x,
                                          const dtcast_tensor *scale,
                                          const dtcast_tensor *zero_point,
                                          const dtcast_onnx_qdq_attrs *attrs,
                                          const dtcast_options *opts, dtcast_error *error)
{
    static const char op[] = "QuantizeLinear";
    dt_qdq_plan p;
    size_t nz = 0;
    dtcast_status st = begin_plan(&p, op, x, scale, zero_point, attrs, opts, &nz, error);
    if (st != DTCAST_OK)
        return st;
    const int opset = attrs->opset;
    /* x */
    const bool x_ok = p.xt == DTCAST_FLOAT32 || p.xt == DTCAST_INT32 ||
                      (opset >= 19 && is_16bit_float(p.xt));
    if (!x_ok)
        return refuse(error, op, opset, "x", p.xt,
                      opset >= 19 ? "float32, float16, bfloat16, int32"
                                  : "float32, int32; float16 and bfloat16 from opset 19");
    if ((st = check_scale_type(error, op, opset, true, p.st, p.xt)) != DTCAST_OK)
        return st;
    /* y's type: output_dtype, else the zero point's, else uint8 */
    if (attrs->output_dtype != 0 && opset < 21)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "ONNX %s-%d has no 'output_dtype' attribute (it appeared in opset 21)", op,
                       opset);
    if (attrs->output_dtype < 0 || attrs->output_dtype > 1000)
        return dt_fail(error, DTCAST_ERR_UNKNOWN_TYPE, DT_NO_INDEX,
                       "ONNX %s: output_dtype %lld is not a TensorProto data type", op,
                       (long long)attrs->output_dtype);
    p.yt = attrs->output_dtype ? dt_type_canonical((dtcast_type)attrs->output_dtype)
           : zero_point        ? p.zt
                               : DTCAST_UINT8;
    if ((st = check_quant_type(error, op, opset, "y", p.yt)) != DTCAST_OK)
        return st;
    if (zero_point && p.zt != p.yt)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "ONNX %s: the zero point is %s but output_dtype says %s", op, tname(p.zt),
                       tname(p.yt));
    if (attrs->saturate != 0 && attrs->saturate != 1)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "ONNX %s: saturate must be 0 or 1, not %lld", op,
                       (long long)attrs->saturate);
    if (attrs->saturate == 0 && opset < 19)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "ONNX %s-%d has no 'saturate' attribute (it appeared in opset 19)", op,
                       opset);
    /* the precision of the quotient */
    if (attrs->precision != 0) {
        if (opset < 23)
            return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                           "ONNX %s-%d has no 'precision' attribute (it appeared in opset 23)", op,
                           opset);
        const int64_t pr = attrs->precision;
        if (pr != DTCAST_FLOAT32 && pr != DTCAST_FLOAT16 && pr != DTCAST_BFLOAT16 &&
            pr != DTCAST_FLOAT64)
            return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                           "ONNX %s: precision %lld is not float32 (1), float16 (10), bfloat16 "
                           "(16) or float64 (11)",
                           op, (long long)pr);
        p.precision = (dtcast_type)pr;
        p.mode = pr == DTCAST_FLOAT64   ? DT_QDQ_F64
                 : pr == DTCAST_FLOAT32 ? DT_QDQ_F32
                                        : DT_QDQ_16;
        p.half = p.precision;
    } else if (p.xt == DTCAST_INT32 || p.st == DTCAST_INT32) {
        p.mode = DT_QDQ_F64; /* NumPy: int32 with a float promotes to float64 */
    } else if (p.xt == p.st && is_16bit_float(p.xt)) {
        p.mode = DT_QDQ_16;
        p.half = p.xt;
    } else {
        p.mode = DT_QDQ_F32;
    }
    const dt_format *yf = dt_format_of(p.yt);
    if (yf->tc == DT_TC_FLOAT) {
        st = dtcast_onnx_options(&p.cast, (int64_t)p.yt,
                                 p.mode == DT_QDQ_F64 ? DTCAST_FLOAT64 : DTCAST_FLOAT32, opset,
                                 attrs->saturate, NULL, NULL, error);
        if (st != DTCAST_OK)
            return st;
        p.cast.threads = 1;
        if (is_float8(p.yt))
            p.zp = NULL; /* float8 y: the zero point is ignored */
    } else {
        int_range(p.yt, &p.qmin, &p.qmax);
    }
    return run(&p, y, x, error);
}

/* A float8 / float4 x takes no zero point, or one of zeros: element k of it is checked. */
static dtcast_status check_float_zero_point(const dt_qdq_plan *p, const char *op,
                                           dtcast_error *error)
{
    const dt_format *f = dt_format_of(p->zt);
    for (size_t k = 0; k < p->nscale; k++) {
        dt_value v;
        dt_decode(f, dt_load(f, p->zp, k), &v);
        if (v.cls != DT_ZERO)
            return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, k,
                           "ONNX %s: zero_point element %zu is not zero (a %s x takes no zero "
                           "point, or zeros)",
                           op, k, tname(p->xt));
    }
    return DTCAST_OK;
}

dtcast_status dtcast_onnx_dequantize_linear(dtcast_tensor *y, const dtcast_tensor *x,
                                            const dtcast_tensor *scale,
                                            const dtcast_tensor *zero_point,
                                            const dtcast_onnx_qdq_attrs *attrs,
                                            const dtcast_options *opts, dtcast_error *error)
{
    static const char op[] = "DequantizeLinear";
    dt_qdq_plan p;
    size_t nz = 0;
    dtcast_status st = begin_plan(&p, op, x, scale, zero_point, attrs, opts, &nz, error);
    if (st != DTCAST_OK)
        return st;
    const int opset = attrs->opset;
    if (p.xt != DTCAST_INT32 && (st = check_quant_type(error, op, opset, "x", p.xt)) != DTCAST_OK)
        return st;
    if ((st = check_scale_type(error, op, opset, false, p.st, p.xt)) != DTCAST_OK)
        return st;
    if (zero_point && p.zt != p.xt)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "ONNX %s: the zero point is %s, x is %s (they must be the same type)", op,
                       tname(p.zt), tname(p.xt));
    if (attrs->precision != 0)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "ONNX %s has no 'precision' attribute", op);
    /* the output: output_dtype, else the scale's type */
    if (attrs->output_dtype != 0) {
        if (opset < 21)
            return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                           "ONNX %s-%d has no 'output_dtype' attribute (it appeared in opset 21)",
                           op, opset);
        const int64_t od = attrs->output_dtype;
        if (od != DTCAST_FLOAT32 && od != DTCAST_FLOAT16 && od != DTCAST_BFLOAT16)
            return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                           "ONNX %s: output_dtype %lld is not float32 (1), float16 (10) or "
                           "bfloat16 (16)",
                           op, (long long)od);
        p.yt = (dtcast_type)od;
    } else if (p.st == DTCAST_FLOAT8E8M0) {
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "ONNX %s: a float8e8m0 scale needs output_dtype (float32, float16 or "
                       "bfloat16)",
                       op);
    } else {
        p.yt = p.st;
    }
    const dt_format *xf = dt_format_of(p.xt);
    /* float8 / float4 x: the zero point must be zeros and is dropped. float6 x (opset 28):
     * (x - zero point) * scale as for integers, which is what onnx 1.23's reference computes
     * (docs/onnx.md, "Quantization operators"). */
    const bool float6 = p.xt == DTCAST_FLOAT6E2M3FN || p.xt == DTCAST_FLOAT6E3M2FN;
    if (zero_point && xf->tc == DT_TC_FLOAT && !float6) {
        if ((st = check_float_zero_point(&p, op, error)) != DTCAST_OK)
            return st;
        p.zp = NULL;
    }
    p.mode = (p.xt == DTCAST_INT32 && p.zp) ? DT_QDQ_F64 : DT_QDQ_F32;
    dtcast_options_init(&p.cast);
    p.cast.round = DTCAST_ROUND_RNE;
    p.cast.threads = 1;
    return run(&p, y, x, error);
}
