/* The public quantization calls: check the tensors, resolve the parameters, run the scheme. */
#include "quant.h"
#include "../parallel.h"

#if defined(__x86_64__) || defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include <fenv.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_bool simple_path;

void dt_quant_simple_set(bool on)
{
    atomic_store(&simple_path, on);
}

bool dt_quant_simple(void)
{
    return atomic_load(&simple_path);
}

void dt_fp_enter(dt_fpstate *s)
{
#if defined(__x86_64__) || defined(__SSE2__)
    s->csr = _mm_getcsr();
    _mm_setcsr(0x1F80u); /* exceptions masked, nearest, no FTZ/DAZ */
#else
    s->csr = 0;
#endif
    s->round = fegetround();
    if (s->round != FE_TONEAREST)
        fesetround(FE_TONEAREST);
}

void dt_fp_leave(const dt_fpstate *s)
{
#if defined(__x86_64__) || defined(__SSE2__)
    _mm_setcsr(s->csr);
#endif
    if (s->round != FE_TONEAREST)
        fesetround(s->round);
}

typedef struct tramp {
    void (*fn)(void *ctx, size_t begin, size_t end);
    void *ctx;
} tramp;

static void tramp_run(void *c, size_t begin, size_t end)
{
    const tramp *t = c;
    dt_fpstate s;
    dt_fp_enter(&s);
    t->fn(t->ctx, begin, end);
    dt_stream_fence(); /* streamed outputs visible to the caller's thread */
    dt_fp_leave(&s);
}

void dt_quant_for(size_t count, unsigned threads, void (*fn)(void *ctx, size_t begin, size_t end),
                  void *ctx)
{
    if (count == 0)
        return;
    tramp t = {fn, ctx};
    dt_parallel_for(count, threads, tramp_run, &t);
}

dtcast_status dtcast_quantize_layout(dtcast_tensor *codes, dtcast_tensor *scales,
                                     dtcast_tensor *global_scale, const dtcast_tensor *x,
                                     const dtcast_quant_params *p, dtcast_error *error)
{
    if (!x)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "x is NULL");
    if (!codes || !scales)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "codes or scales is NULL");
    dt_quant q;
    dtcast_status st = dt_quant_resolve(&q, p, x->type, x->ndim, x->shape, DTCAST_UNDEFINED,
                                        DTCAST_UNDEFINED, error);
    if (st != DTCAST_OK)
        return st;
    dt_quant_describe(&q, codes, scales, global_scale);
    codes->bytes = q.code_bytes;
    scales->bytes = q.scale_bytes;
    if (global_scale)
        global_scale->bytes = q.has_global ? sizeof(float) : 0;
    return DTCAST_OK;
}

static dtcast_status run_quantize(const dt_quant *q, dt_qio *io, dtcast_error *error)
{
    switch (q->p.scheme) {
    case DTCAST_SCHEME_MX: return dt_mx_quantize(q, io, error);
    case DTCAST_SCHEME_NVFP4: return dt_nvfp4_quantize(q, io, error);
    case DTCAST_SCHEME_FP8_BLOCK: return dt_fp8_block_quantize(q, io, error);
    case DTCAST_SCHEME_ABSMAX: return dt_absmax_quantize(q, io, error);
    }
    return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "unknown scheme");
}

dtcast_status dtcast_quantize(dtcast_tensor *codes, dtcast_tensor *scales,
                              dtcast_tensor *global_scale, const dtcast_tensor *x,
                              const dtcast_quant_params *p, dtcast_error *error)
{
    size_t count;
    dtcast_status st = dt_tensor_input(x, "x", &count, error);
    if (st != DTCAST_OK)
        return st;
    dt_quant q;
    st = dt_quant_resolve(&q, p, x->type, x->ndim, x->shape, DTCAST_UNDEFINED, DTCAST_UNDEFINED,
                          error);
    if (st != DTCAST_OK)
        return st;
    if ((st = dt_tensor_room(codes, "codes", q.code_bytes, error)) != DTCAST_OK ||
        (st = dt_tensor_room(scales, "scales", q.scale_bytes, error)) != DTCAST_OK)
        return st;
    float g = 0.0f;
    if (q.has_global) {
        if (!global_scale)
            return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                           "global_scale is NULL, scheme %s variant %s has one",
                           dtcast_scheme_name(q.p.scheme), dtcast_variant_name(q.p.variant));
        if ((st = dt_tensor_room(global_scale, "global_scale", sizeof(float), error)) != DTCAST_OK)
            return st;
    }
    dt_quant_describe(&q, codes, scales, global_scale);
    dt_qio io = {x->data, NULL, codes->data, scales->data, q.has_global ? &g : NULL};
    dt_fpstate fs;
    dt_fp_enter(&fs);
    st = run_quantize(&q, &io, error);
    dt_fp_leave(&fs);
    if (st == DTCAST_OK && q.has_global)
        memcpy(global_scale->data, &g, sizeof g);
    return st;
}

dtcast_status dtcast_dequantize(dtcast_tensor *y, const dtcast_tensor *codes,
                                const dtcast_tensor *scales, const dtcast_tensor *global_scale,
                                const dtcast_quant_params *p, dtcast_error *error)
{
    if (!codes || !scales || !y)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "y, codes or scales is NULL");
    size_t n;
    dtcast_status st = dtcast_tensor_count(codes, &n, error);
    if (st != DTCAST_OK)
        return st;
    dt_quant q;
    st = dt_quant_resolve(&q, p, y->type, codes->ndim, codes->shape, codes->type, scales->type,
                          error);
    if (st != DTCAST_OK)
        return st;
    if (q.code_bytes > 0 && !codes->data)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "codes: data is NULL");
    if (codes->bytes < q.code_bytes)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "codes: %zu bytes given, %zu needed (packed per row)", codes->bytes,
                       q.code_bytes);
    bool same = scales->ndim == q.sndim;
    for (int d = 0; same && d < q.sndim; d++)
        same = scales->shape[d] == q.sshape[d];
    if (!same) {
        char want[160] = "", got[160] = "";
        size_t a = 0, b = 0;
        for (int d = 0; d < q.sndim; d++)
            a += (size_t)snprintf(want + a, sizeof want - a, "%s%lld", d ? ", " : "",
                                  (long long)q.sshape[d]);
        for (int d = 0; d < scales->ndim && d < DTCAST_MAX_DIMS && b < sizeof got; d++)
            b += (size_t)snprintf(got + b, sizeof got - b, "%s%lld", d ? ", " : "",
                                  (long long)scales->shape[d]);
        return dt_fail(error, DTCAST_ERR_BAD_SHAPE, DT_NO_INDEX,
                       "scales have shape [%s], the codes need [%s]", got, want);
    }
    size_t sc;
    if ((st = dt_tensor_input(scales, "scales", &sc, error)) != DTCAST_OK)
        return st;
    float g = 0.0f;
    if (q.has_global) {
        size_t gc;
        if (!global_scale)
            return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                           "global_scale is NULL, scheme %s variant %s has one",
                           dtcast_scheme_name(q.p.scheme), dtcast_variant_name(q.p.variant));
        if ((st = dt_tensor_input(global_scale, "global_scale", &gc, error)) != DTCAST_OK)
            return st;
        if (global_scale->type != DTCAST_FLOAT32 || gc != 1)
            return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                           "global_scale must be one float32 (it is %zu of %s)", gc,
                           dtcast_type_name(global_scale->type) ? dtcast_type_name(global_scale->type)
                                                                 : "?");
        memcpy(&g, global_scale->data, sizeof g);
    }
    size_t need;
    if ((st = dtcast_storage_size(y->type, q.count, &need, error)) != DTCAST_OK)
        return st;
    if ((st = dt_tensor_room(y, "y", need, error)) != DTCAST_OK)
        return st;
    y->ndim = q.ndim;
    memset(y->shape, 0, sizeof y->shape);
    memcpy(y->shape, q.shape, sizeof(int64_t) * (size_t)q.ndim);
    dt_qio io = {NULL, y->data, codes->data, scales->data, q.has_global ? &g : NULL};
    /* block FP8 with F8_E8M0 scales (DeepSeek-V4): the tiles' powers of two as the float32
     * multipliers the kernel takes, exactly (2^-127 .. 2^127 are all float32 values; the NaN
     * byte 0xFF stays NaN) */
    float *e8m0 = NULL;
    if (q.p.scheme == DTCAST_SCHEME_FP8_BLOCK && q.scale_type == DTCAST_FLOAT8E8M0 && q.scount) {
        if (q.scount > SIZE_MAX / sizeof *e8m0 || !(e8m0 = malloc(q.scount * sizeof *e8m0)))
            return dt_fail(error, DTCAST_ERR_OUT_OF_MEMORY, DT_NO_INDEX,
                           "out of memory for %zu scales", q.scount);
        if ((st = dtcast_convert(e8m0, DTCAST_FLOAT32, scales->data, DTCAST_FLOAT8E8M0, q.scount,
                                 NULL, error)) != DTCAST_OK) {
            free(e8m0);
            return st;
        }
        io.scales = e8m0;
    }
    dt_fpstate fs;
    dt_fp_enter(&fs);
    switch (q.p.scheme) {
    case DTCAST_SCHEME_MX: st = dt_mx_dequantize(&q, &io, error); break;
    case DTCAST_SCHEME_NVFP4: st = dt_nvfp4_dequantize(&q, &io, error); break;
    case DTCAST_SCHEME_FP8_BLOCK: st = dt_fp8_block_dequantize(&q, &io, error); break;
    case DTCAST_SCHEME_ABSMAX: st = dt_absmax_dequantize(&q, &io, error); break;
    }
    dt_fp_leave(&fs);
    free(e8m0);
    return st;
}
