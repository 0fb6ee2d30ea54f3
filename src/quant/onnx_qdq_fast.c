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

/* ---- one run: elements [0, n) of x/y sharing scale s and zero point z ------------------------ */

/* NaN results are the positive quiet NaN (as the simple path makes them). */
static float canonf(float v) { return v != v ? fabsf(v) : v; }

static void q_int_scalar(const float *x, void *y, size_t n, float s, float z, float lo, float hi,
                         bool sign)
{
    for (size_t k = 0; k < n; k++) {
        float v;
        memcpy(&v, x + k, sizeof v);
        float t = dt_qdq_rnef(v / s) + z;
        t = t != t ? lo : t < lo ? lo : t > hi ? hi : t;
        if (sign)
            ((int8_t *)y)[k] = (int8_t)t;
        else
            ((uint8_t *)y)[k] = (uint8_t)t;
    }
}

static void div_scalar(float *q, const float *x, size_t n, float s)
{
    for (size_t k = 0; k < n; k++) {
        float v;
        memcpy(&v, x + k, sizeof v);
        q[k] = canonf(v / s);
    }
}

static void dq_int_scalar(float *y, const void *x, size_t n, float s, float z, bool sign)
{
    for (size_t k = 0; k < n; k++) {
        const float v = sign ? (float)((const int8_t *)x)[k] : (float)((const uint8_t *)x)[k];
        const float r = canonf((v - z) * s);
        memcpy(y + k, &r, sizeof r);
    }
}

static void mul_scalar(float *y, size_t n, float s)
{
    for (size_t k = 0; k < n; k++) {
        float v;
        memcpy(&v, y + k, sizeof v);
        v = canonf(v * s);
        memcpy(y + k, &v, sizeof v);
    }
}

#if defined(DT_HAVE_X86)
DT_TARGET_AVX2 static void q_int_avx2(const float *x, void *y, size_t n, float s, float z,
                                      float lo, float hi, bool sign)
{
    const __m256 vs = _mm256_set1_ps(s), vz = _mm256_set1_ps(z), vlo = _mm256_set1_ps(lo),
                 vhi = _mm256_set1_ps(hi);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    size_t k = 0;
    for (; k + 32 <= n; k += 32) {
        __m256i w[4];
        for (int j = 0; j < 4; j++) {
            __m256 q = _mm256_div_ps(_mm256_loadu_ps(x + k + 8 * j), vs);
            q = _mm256_round_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            q = _mm256_add_ps(q, vz);
            q = _mm256_max_ps(q, vlo); /* NaN -> lo (maxps returns the second operand) */
            q = _mm256_min_ps(q, vhi);
            w[j] = _mm256_cvttps_epi32(q);
        }
        const __m256i ab = _mm256_packs_epi32(w[0], w[1]), cd = _mm256_packs_epi32(w[2], w[3]);
        __m256i b = sign ? _mm256_packs_epi16(ab, cd) : _mm256_packus_epi16(ab, cd);
        b = _mm256_permutevar8x32_epi32(b, order);
        _mm256_storeu_si256((__m256i *)((uint8_t *)y + k), b);
    }
    q_int_scalar(x + k, (uint8_t *)y + k, n - k, s, z, lo, hi, sign);
}

/* NaN lanes lose their sign bit (the positive quiet NaN: every NaN here is quiet already). */
DT_TARGET_AVX2 static DT_INLINE __m256 canon_avx2(__m256 r)
{
    const __m256 nan = _mm256_cmp_ps(r, r, _CMP_UNORD_Q);
    return _mm256_andnot_ps(_mm256_and_ps(nan, _mm256_set1_ps(-0.0f)), r);
}

DT_TARGET_AVX2 static void div_avx2(float *q, const float *x, size_t n, float s)
{
    const __m256 vs = _mm256_set1_ps(s);
    size_t k = 0;
    for (; k + 8 <= n; k += 8)
        _mm256_storeu_ps(q + k, canon_avx2(_mm256_div_ps(_mm256_loadu_ps(x + k), vs)));
    div_scalar(q + k, x + k, n - k, s);
}

DT_TARGET_AVX2 static void dq_int_avx2(float *y, const void *x, size_t n, float s, float z,
                                       bool sign)
{
    const __m256 vs = _mm256_set1_ps(s), vz = _mm256_set1_ps(z);
    const uint8_t *b = x;
    size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        const __m128i raw = _mm_loadl_epi64((const __m128i *)(b + k));
        const __m256i i = sign ? _mm256_cvtepi8_epi32(raw) : _mm256_cvtepu8_epi32(raw);
        const __m256 v = _mm256_sub_ps(_mm256_cvtepi32_ps(i), vz);
        _mm256_storeu_ps(y + k, canon_avx2(_mm256_mul_ps(v, vs)));
    }
    dq_int_scalar(y + k, b + k, n - k, s, z, sign);
}

DT_TARGET_AVX2 static void mul_avx2(float *y, size_t n, float s)
{
    const __m256 vs = _mm256_set1_ps(s);
    size_t k = 0;
    for (; k + 8 <= n; k += 8)
        _mm256_storeu_ps(y + k, canon_avx2(_mm256_mul_ps(_mm256_loadu_ps(y + k), vs)));
    mul_scalar(y + k, n - k, s);
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
        q_int_avx2(x, y, n, s, z, lo, hi, sign);
        return;
    }
#endif
    q_int_scalar(x, y, n, s, z, lo, hi, sign);
}

static void run_q_int(const dt_qdq_plan *p, size_t i, size_t n, float s, float z, bool avx2)
{
    const float *x = (const float *)p->x + i;
    uint8_t *y = (uint8_t *)p->y + i;
    const bool sign = p->yt == DTCAST_INT8;
    const float lo = (float)p->qmin, hi = (float)p->qmax;
#if defined(DT_HAVE_X86)
    if (avx2) {
        q_int_avx2(x, y, n, s, z, lo, hi, sign);
        return;
    }
#endif
    (void)avx2;
    q_int_scalar(x, y, n, s, z, lo, hi, sign);
}

static void run_dq_int(const dt_qdq_plan *p, size_t i, size_t n, float s, float z, bool avx2)
{
    float *y = (float *)p->y + i;
    const uint8_t *x = (const uint8_t *)p->x + i;
    const bool sign = p->xt == DTCAST_INT8;
#if defined(DT_HAVE_X86)
    if (avx2) {
        dq_int_avx2(y, x, n, s, z, sign);
        return;
    }
#endif
    (void)avx2;
    dq_int_scalar(y, x, n, s, z, sign);
}

/* float8: [i, i + n) (at most BUF elements) through a buffer, the scale per run inside it. */
static void run_float8(const dt_qdq_plan *p, size_t i, size_t n, bool avx2)
{
    float q[BUF];
    dtcast_options o;
    if (!p->quantize) {
        dtcast_options_init(&o);
        o.threads = 1;
        (void)dtcast_convert((float *)p->y + i, DTCAST_FLOAT32, (const uint8_t *)p->x + i, p->xt,
                             n, &o, NULL);
    }
    for (size_t k = 0; k < n;) {
        size_t stop = n;
        if (p->gran == DT_QDQ_AXIS) {
            const size_t run_end = ((i + k) / p->inner + 1) * p->inner - i;
            stop = run_end < n ? run_end : n;
        }
        const float s = (float)p->sd[dt_qdq_scale_index(p, i + k)];
        if (p->quantize) {
            const float *x = (const float *)p->x + i + k;
#if defined(DT_HAVE_X86)
            if (avx2)
                div_avx2(q + k, x, stop - k, s);
            else
#endif
                div_scalar(q + k, x, stop - k, s);
        } else {
            float *y = (float *)p->y + i + k;
#if defined(DT_HAVE_X86)
            if (avx2)
                mul_avx2(y, stop - k, s);
            else
#endif
                mul_scalar(y, stop - k, s);
        }
        k = stop;
    }
    (void)avx2;
    if (p->quantize)
        (void)dtcast_convert((uint8_t *)p->y + i, p->yt, q, DTCAST_FLOAT32, n, &p->cast, NULL);
}

void dt_qdq_fast_range(const dt_qdq_plan *p, size_t begin, size_t end)
{
    const bool avx2 = use_avx2();
    if (is_f8(p->quantize ? p->yt : p->xt)) {
        for (size_t i = begin; i < end; i += BUF)
            run_float8(p, i, end - i < BUF ? end - i : BUF, avx2);
        return;
    }
    size_t i = begin;
    while (i < end) {
        /* the run of elements sharing element i's scale */
        size_t stop = end;
        if (p->gran == DT_QDQ_AXIS) {
            const size_t run_end = (i / p->inner + 1) * p->inner;
            stop = run_end < end ? run_end : end;
        }
        const size_t si = dt_qdq_scale_index(p, i);
        const float s = (float)p->sd[si], z = p->zd ? (float)p->zd[si] : 0.0f;
        if (p->quantize)
            run_q_int(p, i, stop - i, s, z, avx2);
        else
            run_dq_int(p, i, stop - i, s, z, avx2);
        i = stop;
    }
}
