/* ONNX DynamicQuantizeLinear-11: float32 x -> uint8 y with the scale and zero point taken from
 * x's range (docs/onnx.md, "Quantization operators"). All arithmetic in binary32:
 * mx = max(0, max x), mn = min(0, min x), scale = (mx - mn) / 255 (1/255 when mx == mn, as the
 * reference), zero point = rint(clamp(0 - mn / scale, 0, 255)), y = clamp(rint(x / scale) + zp,
 * 0, 255). A NaN or infinity in x is an error naming its index: the systems disagree on it. */
#include "onnx_qdq.h"

#include "../parallel.h"

#include <math.h>
#include <string.h>

typedef struct dyn_ctx {
    const uint8_t *x;
    uint8_t *y;
    float scale, zp;
} dyn_ctx;

static void dyn_range(void *ctx, size_t begin, size_t end)
{
    const dyn_ctx *c = ctx;
    dt_fpenv env;
    dt_fpenv_enter(&env);
    dt_qdq_f32_to_int8((const float *)(const void *)(c->x + begin * 4), c->y + begin, end - begin,
                       c->scale, c->zp, 0.0f, 255.0f, false);
    dt_fpenv_leave(&env);
}

/* mx, mn; or the index of the first NaN / infinity. */
static bool range_of(const uint8_t *x, size_t n, float *mx, float *mn, size_t *bad)
{
    float hi = 0.0f, lo = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float v;
        memcpy(&v, x + 4 * i, sizeof v);
        if (!isfinite(v)) {
            *bad = i;
            return false;
        }
        hi = v > hi ? v : hi;
        lo = v < lo ? v : lo;
    }
    *mx = hi;
    *mn = lo;
    return true;
}

dtcast_status dtcast_onnx_dynamic_quantize_linear(dtcast_tensor *y, dtcast_tensor *y_scale,
                                                  dtcast_tensor *y_zero_point,
                                                  const dtcast_tensor *x,
                                                  const dtcast_options *opts, dtcast_error *error)
{
    static const char op[] = "ONNX DynamicQuantizeLinear";
    dtcast_options o;
    size_t n;
    dtcast_status st = dt_options_read(opts, &o, error);
    if (st != DTCAST_OK || (st = dt_tensor_input(x, "x", &n, error)) != DTCAST_OK)
        return st;
    if (x->type != DTCAST_FLOAT32)
        return dt_fail(error, DTCAST_ERR_UNSUPPORTED, DT_NO_INDEX,
                       "%s takes a float32 x, not %s", op,
                       dtcast_type_name(x->type) ? dtcast_type_name(x->type) : "an unknown type");
    if ((st = dt_tensor_room(y, "y", n, error)) != DTCAST_OK ||
        (st = dt_tensor_room(y_scale, "y_scale", 4, error)) != DTCAST_OK ||
        (st = dt_tensor_room(y_zero_point, "y_zero_point", 1, error)) != DTCAST_OK)
        return st;
    dt_fpenv env;
    dt_fpenv_enter(&env);
    float mx = 0, mn = 0;
    size_t bad = 0;
    const bool finite = range_of(x->data, n, &mx, &mn, &bad);
    float scale = 0, zf = 0;
    if (finite) {
        scale = mx == mn ? 1.0f / 255.0f : (mx - mn) / 255.0f;
        zf = 0.0f - mn / scale;
        zf = dt_qdq_rnef(zf < 0.0f ? 0.0f : zf > 255.0f ? 255.0f : zf);
    }
    dt_fpenv_leave(&env);
    if (!finite) {
        float v;
        memcpy(&v, (const uint8_t *)x->data + 4 * bad, sizeof v);
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, bad,
                       "%s: x element %zu is %s (the systems disagree on non-finite input; "
                       "dtcast refuses it)",
                       op, bad, isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf");
    }
    dyn_ctx c = {x->data, y->data, scale, zf};
    if (n > 0)
        dt_parallel_for(n, dt_thread_count(o.threads, n), dyn_range, &c);
    const uint8_t zp = (uint8_t)zf;
    memcpy(y_scale->data, &scale, sizeof scale);
    memcpy(y_zero_point->data, &zp, 1);
    y->type = DTCAST_UINT8;
    y->ndim = x->ndim;
    for (int d = 0; d < x->ndim; d++)
        y->shape[d] = x->shape[d];
    y_scale->type = DTCAST_FLOAT32;
    y_scale->ndim = 0;
    y_zero_point->type = DTCAST_UINT8;
    y_zero_point->ndim = 0;
    return DTCAST_OK;
}
