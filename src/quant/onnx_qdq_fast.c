/* The common ONNX Q/DQ cases at memory speed: float32 x and float32 scale, per tensor or per axis,
 * quantized to int8 / uint8 / the four float8 types, and those dequantized back to float32.
 * Within a run of elements sharing one scale: Q integer = divide, round to nearest even
 * (explicitly, not through the rounding mode), add the zero point, clamp (NaN to the minimum),
 * pack; Q float8 = divide into an L1-sized buffer, then dtcast_convert's float8 kernel with
 * Cast's options; DQ integer = widen, subtract, multiply; DQ float8 = dtcast_convert to float32
 * in place, then multiply. The arithmetic is the simple path's, operation for operation, so the
 * bytes are the same (tests/test_onnx_qdq.c compares them over random and edge values). */
#include "onnx_qdq.h"

#include "../kernels/kernels.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

#if defined(DT_HAVE_X86)
#include "../kernels/x86_attrs.h"
#include <immintrin.h>
#endif

enum { BUF = 2048 };

static bool is_f8(dtcast_type t)
{
    return t == DTCAST_FLOAT8E4M3FN || t == DTCAST_FLOAT8E4M3FNUZ || t == DTCAST_FLOAT8E5M2 ||
           t == DTCAST_FLOAT8E5M2FNUZ;
}

static _Atomic bool fast_off;

void dt_qdq_fast_disable(bool off) { atomic_store_explicit(&fast_off, off, memory_order_relaxed); }

bool dt_qdq_fast_takes(const dt_qdq_plan *p)
{
    if (atomic_load_explicit(&fast_off, memory_order_relaxed))
        return false;
    if (p->gran == DT_QDQ_BLOCK || p->st != DTCAST_FLOAT32 || p->mode != DT_QDQ_F32)
        return false;
    const bool small = p->yt == DTCAST_INT8 || p->yt == DTCAST_UINT8 || is_f8(p->yt);
    if (p->quantize)
        return p->xt == DTCAST_FLOAT32 && small &&
               (p->precision == DTCAST_UNDEFINED || p->precision == DTCAST_FLOAT32);
    return p->yt == DTCAST_FLOAT32 &&
           (p->xt == DTCAST_INT8 || p->xt == DTCAST_UINT8 || is_f8(p->xt));
}

/* ---- one run: elements [0, n) of x/y; scale and zero point either one value for the whole run
 * (step 0: s[0], z[0]) or one per element (step 1: s[k], z[k], the per-axis case along the last
 * axis) ------------------------------------------------------------------------------------- */

/* NaN results are the positive quiet NaN (as the simple path makes them). */
static float canonf(float v) { return v != v ? fabsf(v) : v; }

/* dt_qdq_rnef without library calls: below 2^23, adding and removing 2^23 leaves the magnitude
 * rounded to an integer, ties to even (the environment rounds to nearest); above, every float
 * is an integer already (NaN passes through). */
static inline float rne_fast(float v)
{
    const float a = fabsf(v);
    if (!(a < 8388608.0f))
        return v;
    return copysignf((a + 8388608.0f) - 8388608.0f, v);
}

/* clamp(t, lo, hi), NaN -> lo, without branches (the comparisons are false for NaN) */
static inline float clampf(float t, float lo, float hi)
{
    t = t > lo ? t : lo;
    return t < hi ? t : hi;
}

/* x[k] of a buffer that may not be aligned to 4 */
static inline float ldf(const float *x, size_t k)
{
    float v;
    memcpy(&v, x + k, sizeof v);
    return v;
}

static void q_int_scalar(const float *x, void *y, size_t n, const float *s, const float *z,
                         size_t step, float lo, float hi, bool sign)
{
    if (sign) {
        int8_t *o = y;
        for (size_t k = 0; k < n; k++)
            o[k] = (int8_t)(int)clampf(rne_fast(ldf(x, k) / s[k * step]) + z[k * step], lo, hi);
    } else {
        uint8_t *o = y;
        for (size_t k = 0; k < n; k++)
            o[k] = (uint8_t)(int)clampf(rne_fast(ldf(x, k) / s[k * step]) + z[k * step], lo, hi);
    }
}

static void div_scalar(float *q, const float *x, size_t n, const float *s, size_t step)
{
    for (size_t k = 0; k < n; k++) {
        float v;
        memcpy(&v, x + k, sizeof v);
        q[k] = canonf(v / s[k * step]);
    }
}

static void dq_int_scalar(float *y, const void *x, size_t n, const float *s, const float *z,
                          size_t step, bool sign)
{
    for (size_t k = 0; k < n; k++) {
        const float v = sign ? (float)((const int8_t *)x)[k] : (float)((const uint8_t *)x)[k];
        const float r = canonf((v - z[k * step]) * s[k * step]);
        memcpy(y + k, &r, sizeof r);
    }
}

static void mul_scalar(float *y, size_t n, const float *s, size_t step)
{
    for (size_t k = 0; k < n; k++) {
        float v;
        memcpy(&v, y + k, sizeof v);
        v = canonf(v * s[k * step]);
        memcpy(y + k, &v, sizeof v);
    }
}

#if defined(DT_HAVE_X86)
/* 8 lanes of a run's scale or zero point from element k on: broadcast (step 0) or loaded. */
DT_TARGET_AVX2 static DT_INLINE __m256 lanes(const float *v, size_t k, size_t step)
{
    return step ? _mm256_loadu_ps(v + k) : _mm256_broadcast_ss(v);
}

DT_TARGET_AVX2 static void q_int_avx2(const float *x, void *y, size_t n, const float *s,
                                      const float *z, size_t step, float lo, float hi, bool sign)
{
    const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    size_t k = 0;
    for (; k + 32 <= n; k += 32) {
        __m256i w[4];
        for (int j = 0; j < 4; j++) {
            const size_t e = k + 8 * (size_t)j;
            __m256 q = _mm256_div_ps(_mm256_loadu_ps(x + e), lanes(s, e, step));
            q = _mm256_round_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            q = _mm256_add_ps(q, lanes(z, e, step));
            q = _mm256_max_ps(q, vlo); /* NaN -> lo (maxps returns the second operand) */
            q = _mm256_min_ps(q, vhi);
            w[j] = _mm256_cvttps_epi32(q);
        }
        const __m256i ab = _mm256_packs_epi32(w[0], w[1]), cd = _mm256_packs_epi32(w[2], w[3]);
        __m256i b = sign ? _mm256_packs_epi16(ab, cd) : _mm256_packus_epi16(ab, cd);
        b = _mm256_permutevar8x32_epi32(b, order);
        _mm256_storeu_si256((__m256i *)((uint8_t *)y + k), b);
    }
    q_int_scalar(x + k, (uint8_t *)y + k, n - k, s + k * step, z + k * step, step, lo, hi, sign);
}

/* NaN lanes lose their sign bit (the positive quiet NaN: every NaN here is quiet already). */
DT_TARGET_AVX2 static DT_INLINE __m256 canon_avx2(__m256 r)
{
    const __m256 nan = _mm256_cmp_ps(r, r, _CMP_UNORD_Q);
    return _mm256_andnot_ps(_mm256_and_ps(nan, _mm256_set1_ps(-0.0f)), r);
}

DT_TARGET_AVX2 static void div_avx2(float *q, const float *x, size_t n, const float *s,
                                    size_t step)
{
    size_t k = 0;
    for (; k + 8 <= n; k += 8)
        _mm256_storeu_ps(q + k, canon_avx2(_mm256_div_ps(_mm256_loadu_ps(x + k), lanes(s, k, step))));
    div_scalar(q + k, x + k, n - k, s + k * step, step);
}

DT_TARGET_AVX2 static void dq_int_avx2(float *y, const void *x, size_t n, const float *s,
                                       const float *z, size_t step, bool sign)
{
    const uint8_t *b = x;
    size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        const __m128i raw = _mm_loadl_epi64((const __m128i *)(b + k));
        const __m256i i = sign ? _mm256_cvtepi8_epi32(raw) : _mm256_cvtepu8_epi32(raw);
        const __m256 v = _mm256_sub_ps(_mm256_cvtepi32_ps(i), lanes(z, k, step));
        _mm256_storeu_ps(y + k, canon_avx2(_mm256_mul_ps(v, lanes(s, k, step))));
    }
    dq_int_scalar(y + k, b + k, n - k, s + k * step, z + k * step, step, sign);
}

DT_TARGET_AVX2 static void mul_avx2(float *y, size_t n, const float *s, size_t step)
{
    size_t k = 0;
    for (; k + 8 <= n; k += 8)
        _mm256_storeu_ps(y + k, canon_avx2(_mm256_mul_ps(_mm256_loadu_ps(y + k), lanes(s, k, step))));
    mul_scalar(y + k, n - k, s + k * step, step);
}
#endif

static bool use_avx2(void)
{
#if defined(DT_HAVE_X86)
    return dt_isa_active() >= DT_ISA_AVX2;
#else
    return false;
#endif
}

void dt_qdq_f32_to_int8(const float *x, void *y, size_t n, float s, float z, float lo, float hi,
                        bool sign)
{
#if defined(DT_HAVE_X86)
    if (use_avx2()) {
        q_int_avx2(x, y, n, &s, &z, 0, lo, hi, sign);
        return;
    }
#endif
    q_int_scalar(x, y, n, &s, &z, 0, lo, hi, sign);
}

/* A run [i, i + n) of one row: its scales and zero points (one, or one per element when the
 * axis is the last: step 1), pointing into the plan's float32 copies (or zeros). */
typedef struct run_scales {
    const float *s, *z;
    size_t step;
} run_scales;

static const float zeros[BUF];

static void run_scales_at(run_scales *r, const dt_qdq_plan *p, size_t i)
{
    const size_t si = dt_qdq_scale_index(p, i);
    r->step = p->gran == DT_QDQ_AXIS && p->inner == 1;
    r->s = p->sf + si;
    r->z = p->zf ? p->zf + si : zeros;
}

/* The end of the run sharing element i's scales: the scale changes every `inner` elements (per
 * axis), and a run of per-element scales ends with its row; at most BUF elements. */
static size_t run_end(const dt_qdq_plan *p, size_t i, size_t end)
{
    size_t stop = end - i < BUF ? end : i + BUF;
    if (p->gran == DT_QDQ_AXIS) {
        const size_t span = p->inner == 1 ? p->dim : p->inner;
        const size_t e = (i / span + 1) * span;
        stop = e < stop ? e : stop;
    }
    return stop;
}

static void run_q_int(const dt_qdq_plan *p, size_t i, size_t n, const run_scales *r, bool avx2)
{
    const float *x = (const float *)p->x + i;
    uint8_t *y = (uint8_t *)p->y + i;
    const bool sign = p->yt == DTCAST_INT8;
    const float lo = (float)p->qmin, hi = (float)p->qmax;
#if defined(DT_HAVE_X86)
    if (avx2) {
        q_int_avx2(x, y, n, r->s, r->z, r->step, lo, hi, sign);
        return;
    }
#endif
    (void)avx2;
    q_int_scalar(x, y, n, r->s, r->z, r->step, lo, hi, sign);
}

static void run_dq_int(const dt_qdq_plan *p, size_t i, size_t n, const run_scales *r, bool avx2)
{
    float *y = (float *)p->y + i;
    const uint8_t *x = (const uint8_t *)p->x + i;
    const bool sign = p->xt == DTCAST_INT8;
#if defined(DT_HAVE_X86)
    if (avx2) {
        dq_int_avx2(y, x, n, r->s, r->z, r->step, sign);
        return;
    }
#endif
    (void)avx2;
    dq_int_scalar(y, x, n, r->s, r->z, r->step, sign);
}

/* float8: [i, i + n) (at most BUF elements) through a buffer, the scales per run inside it. */
static void run_float8(const dt_qdq_plan *p, size_t i, size_t n, run_scales *r,
                       const dt_qconv *conv, bool avx2)
{
    float q[BUF];
    if (!p->quantize)
        dt_qconv_run(conv, (float *)p->y + i, (const uint8_t *)p->x + i, n, i);
    for (size_t k = 0; k < n;) {
        const size_t stop = run_end(p, i + k, i + n) - i;
        run_scales_at(r, p, i + k);
        if (p->quantize) {
            const float *x = (const float *)p->x + i + k;
#if defined(DT_HAVE_X86)
            if (avx2)
                div_avx2(q + k, x, stop - k, r->s, r->step);
            else
#endif
                div_scalar(q + k, x, stop - k, r->s, r->step);
        } else {
            float *y = (float *)p->y + i + k;
#if defined(DT_HAVE_X86)
            if (avx2)
                mul_avx2(y, stop - k, r->s, r->step);
            else
#endif
                mul_scalar(y, stop - k, r->s, r->step);
        }
        k = stop;
    }
    (void)avx2;
    if (p->quantize)
        dt_qconv_run(conv, (uint8_t *)p->y + i, q, n, i);
}

void dt_qdq_fast_range(const dt_qdq_plan *p, size_t begin, size_t end)
{
    const bool avx2 = use_avx2();
    run_scales r;
    if (is_f8(p->quantize ? p->yt : p->xt)) {
        /* the float8 <-> float32 kernel, found once for the range (Q: Cast's options) */
        dt_qconv conv;
        dtcast_options o;
        dtcast_options_init(&o);
        if (p->quantize)
            dt_qconv_init_opts(&conv, p->yt, DTCAST_FLOAT32, &p->cast, BUF, false);
        else
            dt_qconv_init_opts(&conv, DTCAST_FLOAT32, p->xt, &o, BUF, false);
        for (size_t i = begin; i < end; i += BUF)
            run_float8(p, i, end - i < BUF ? end - i : BUF, &r, &conv, avx2);
        dt_qconv_release(&conv);
        return;
    }
    for (size_t i = begin; i < end;) {
        const size_t stop = run_end(p, i, end);
        run_scales_at(&r, p, i);
        if (p->quantize)
            run_q_int(p, i, stop - i, &r, avx2);
        else
            run_dq_int(p, i, stop - i, &r, avx2);
        i = stop;
    }
}
