/* The vector steps of the quantization fast paths: |x| maxima per block and the per-block
 * scaling of a chunk, in plain C and AVX2 (the active ISA picks one). Each gives the same
 * float32 results as the scalar formulas of the scheme files: one IEEE operation per element
 * and step, no fused multiply-add; NaN handled by the callers where it matters. */
#include "quant.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include "map_avx2.h"
#define HAVE_AVX2 1
#endif

static float amax_simple(const float *x, size_t n)
{
    float m = 0.0f; /* the simple path's own loop: compare floats, stop at a NaN */
    for (size_t i = 0; i < n; i++) {
        float v;
        memcpy(&v, x + i, 4);
        v = v < 0.0f ? -v : v;
        if (v != v)
            return dt_f32_from_bits(0x7FC00000u);
        m = v > m ? v : m;
    }
    return m;
}

/* |x| max as bits: for non-negative floats the integer order is the value order, and every
 * NaN is above +Inf; a NaN anywhere gives the canonical NaN */
static float amax_portable(const float *x, size_t n)
{
    uint32_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t a;
        memcpy(&a, x + i, 4);
        a &= 0x7FFFFFFFu;
        m = a > m ? a : m;
    }
    return dt_f32_from_bits(m > 0x7F800000u ? 0x7FC00000u : m);
}

static void apply_portable(int op, float *vals, const float *x, size_t nblk, size_t B,
                           const float *k)
{
    for (size_t b = 0; b < nblk; b++) {
        const float f = k[b];
        float *v = vals + b * B;
        const float *s = x + b * B;
        switch (op) {
        case DT_Q_MUL:
            for (size_t i = 0; i < B; i++)
                v[i] = dt_mul_nan_first(s[i], f);
            break;
        case DT_Q_DIV:
            for (size_t i = 0; i < B; i++)
                v[i] = s[i] / f;
            break;
        case DT_Q_MUL_I8:
            for (size_t i = 0; i < B; i++) {
                float t = s[i] * f;
                t = t * 64.0f;
                v[i] = t > 127.0f ? 127.0f : t < -127.0f ? -127.0f : t;
            }
            break;
        default: /* DT_Q_DIV_MO */
            for (size_t i = 0; i < B; i++) {
                const float t = s[i] / f;
                v[i] = t != t ? 6.0f : t == 0.0f ? 0.0f : t;
            }
            break;
        }
    }
}

static float map1(int op, float a, float c)
{
    switch (op) {
    case DT_QM_MO_SCALE: {
        if (a == 0.0f)
            return 1.0f;
        const float s = a / c;
        return dt_maxf_nan(s, 0x1p-9f);
    }
    case DT_QM_TA_SCALE: {
        const float a6 = a / 6.0f;
        const float s = a6 / c;
        return dt_clampf_nan(s, 0x1p-6f, 448.0f);
    }
    case DT_QM_CT_SCALE: {
        const float a6 = a / 6.0f;
        const float s = c * a6;
        return dt_clampf_nan(s, -448.0f, 448.0f);
    }
    case DT_QM_MUL: return dt_mul_nan_first(a, c);
    case DT_QM_RDIV: return c / a;
    default: return a / c; /* DT_QM_DIV */
    }
}

#ifdef HAVE_AVX2
DT_TARGET_AVX2 static void map_avx2(int op, float *out, const float *in, size_t n, float c)
{
    const __m256 cv = _mm256_set1_ps(c);
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, dt_map8_avx2(op, _mm256_loadu_ps(in + i), cv));
    for (; i < n; i++)
        out[i] = map1(op, in[i], c);
}

DT_TARGET_AVX2 static inline __m256i amax8_bits(__m256i m, const float *x)
{
    const __m256i a = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)x),
                                       _mm256_set1_epi32(0x7FFFFFFF));
    return _mm256_max_epi32(m, a);
}

DT_TARGET_AVX2 static inline uint32_t hmax_bits(__m256i m)
{
    __m128i h = _mm_max_epi32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
    h = _mm_max_epi32(h, _mm_shuffle_epi32(h, 0x4E));
    h = _mm_max_epi32(h, _mm_shuffle_epi32(h, 0xB1));
    return (uint32_t)_mm_cvtsi128_si32(h);
}

DT_TARGET_AVX2 static float amax_avx2(const float *x, size_t n)
{
    __m256i m0 = _mm256_setzero_si256(), m1 = m0, m2 = m0, m3 = m0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        _mm_prefetch((const char *)(uintptr_t)((uintptr_t)(x + i) + dt_prefetch_ahead), _MM_HINT_T0);
        _mm_prefetch((const char *)(uintptr_t)((uintptr_t)(x + i) + dt_prefetch_ahead + 64),
                     _MM_HINT_T0);
        m0 = amax8_bits(m0, x + i);
        m1 = amax8_bits(m1, x + i + 8);
        m2 = amax8_bits(m2, x + i + 16);
        m3 = amax8_bits(m3, x + i + 24);
    }
    for (; i + 8 <= n; i += 8)
        m0 = amax8_bits(m0, x + i);
    uint32_t m = hmax_bits(_mm256_max_epi32(_mm256_max_epi32(m0, m1), _mm256_max_epi32(m2, m3)));
    for (; i < n; i++) {
        uint32_t a;
        memcpy(&a, x + i, 4);
        a &= 0x7FFFFFFFu;
        m = a > m ? a : m;
    }
    return dt_f32_from_bits(m > 0x7F800000u ? 0x7FC00000u : m);
}

/* blocks of 16 or 32 */
DT_TARGET_AVX2 static void amax_blocks_avx2(const float *x, size_t nblk, size_t B, float *out)
{
    for (size_t b = 0; b < nblk; b++) {
        const float *p = x + b * B;
        /* one prefetch per 64-byte line */
        _mm_prefetch((const char *)(uintptr_t)((uintptr_t)p + dt_prefetch_ahead), _MM_HINT_T0);
        if (B == 32)
            _mm_prefetch((const char *)(uintptr_t)((uintptr_t)p + dt_prefetch_ahead + 64),
                         _MM_HINT_T0);
        __m256i m = amax8_bits(_mm256_setzero_si256(), p);
        m = amax8_bits(m, p + 8);
        if (B == 32) {
            m = amax8_bits(m, p + 16);
            m = amax8_bits(m, p + 24);
        }
        const uint32_t v = hmax_bits(m);
        out[b] = dt_f32_from_bits(v > 0x7F800000u ? 0x7FC00000u : v);
    }
}

DT_TARGET_AVX2 static void apply_avx2(int op, float *vals, const float *x, size_t nblk, size_t B,
                                      const float *k)
{
    const __m256 c64 = _mm256_set1_ps(64.0f), hi = _mm256_set1_ps(127.0f),
                 lo = _mm256_set1_ps(-127.0f), six = _mm256_set1_ps(6.0f),
                 zero = _mm256_setzero_ps();
    for (size_t b = 0; b < nblk; b++) {
        const __m256 f = _mm256_set1_ps(k[b]);
        float *v = vals + b * B;
        const float *s = x + b * B;
        for (size_t i = 0; i < B; i += 8) {
            const __m256 a = _mm256_loadu_ps(s + i);
            __m256 t;
            switch (op) {
            case DT_Q_MUL: t = dt_mul_nan_first_avx2(a, f); break;
            case DT_Q_DIV: t = _mm256_div_ps(a, f); break;
            case DT_Q_MUL_I8:
                t = _mm256_mul_ps(_mm256_mul_ps(a, f), c64);
                t = _mm256_max_ps(_mm256_min_ps(t, hi), lo); /* NaN never reaches here */
                break;
            default:
                t = _mm256_div_ps(a, f);
                t = _mm256_blendv_ps(t, six, _mm256_cmp_ps(t, t, _CMP_UNORD_Q));
                t = _mm256_andnot_ps(_mm256_cmp_ps(t, zero, _CMP_EQ_OQ), t);
                break;
            }
            _mm256_storeu_ps(v + i, t);
        }
    }
}
/* dst[b*B + i] = bfloat16 of fl32(vals[b*B + i] * k[b]), nearest even; NaN -> 0x7FC0 | sign */
DT_TARGET_AVX2 static void apply_bf16_avx2(uint16_t *dst, const float *vals, size_t nblk,
                                           size_t B, const float *k)
{
    const __m256i lsb = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7FFF),
                  qnan = _mm256_set1_epi32(0x7FC0), sign = _mm256_set1_epi32(0x8000);
    for (size_t b = 0; b < nblk; b++) {
        const __m256 f = _mm256_set1_ps(k[b]);
        for (size_t i = 0; i < B; i += 16) {
            __m256i r[2];
            for (int h = 0; h < 2; h++) {
                const __m256 v = dt_mul_nan_first_avx2(_mm256_loadu_ps(vals + b * B + i + 8 * (size_t)h), f);
                const __m256i u = _mm256_castps_si256(v);
                __m256i t = _mm256_add_epi32(u, _mm256_add_epi32(bias, _mm256_and_si256(
                                                                       _mm256_srli_epi32(u, 16), lsb)));
                t = _mm256_srli_epi32(t, 16);
                const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
                const __m256i n16 = _mm256_or_si256(qnan, _mm256_and_si256(_mm256_srli_epi32(u, 16), sign));
                r[h] = _mm256_blendv_epi8(t, n16, nan);
                if (B - i < 16) { /* a block of 8: one half */
                    r[1] = r[0];
                    break;
                }
            }
            /* pack 32-bit lanes to 16 bits (unsigned saturation never triggers: < 0x10000) */
            const __m256i pk = _mm256_permute4x64_epi64(_mm256_packus_epi32(r[0], r[1]), 0xD8);
            if (B - i < 16)
                _mm_storeu_si128((__m128i *)(void *)(dst + b * B + i), _mm256_castsi256_si128(pk));
            else
                _mm256_storeu_si256((__m256i *)(void *)(dst + b * B + i), pk);
        }
    }
}
#endif

static inline bool avx2_on(const dt_quant *q)
{
#ifdef HAVE_AVX2
    return !q->simple && q->avx2;
#else
    (void)q;
    return false;
#endif
}

float dt_q_amax(const dt_quant *q, const float *x, size_t n)
{
    if (q->simple)
        return amax_simple(x, n);
#ifdef HAVE_AVX2
    if (avx2_on(q))
        return amax_avx2(x, n);
#endif
    return amax_portable(x, n);
}

void dt_q_amax_blocks(const dt_quant *q, const float *x, size_t nblk, size_t B, float *out)
{
    if (q->simple) {
        for (size_t b = 0; b < nblk; b++)
            out[b] = amax_simple(x + b * B, B);
        return;
    }
#ifdef HAVE_AVX2
    if (avx2_on(q) && (B == 16 || B == 32)) {
        amax_blocks_avx2(x, nblk, B, out);
        return;
    }
#endif
    for (size_t b = 0; b < nblk; b++)
        out[b] = amax_portable(x + b * B, B);
}

void dt_q_map(const dt_quant *q, int op, float *out, const float *in, size_t n, float c)
{
#ifdef HAVE_AVX2
    if (avx2_on(q)) {
        map_avx2(op, out, in, n, c);
        return;
    }
#endif
    (void)q;
    for (size_t i = 0; i < n; i++)
        out[i] = map1(op, in[i], c);
}

bool dt_q_apply_bf16(const dt_quant *q, uint16_t *dst, const float *vals, size_t nblk, size_t B,
                     const float *k)
{
#ifdef HAVE_AVX2
    if (avx2_on(q) && B % 8 == 0) {
        apply_bf16_avx2(dst, vals, nblk, B, k);
        return true;
    }
#endif
    (void)q, (void)dst, (void)vals, (void)nblk, (void)B, (void)k;
    return false;
}

void dt_q_apply(const dt_quant *q, int op, float *vals, const float *x, size_t nblk, size_t B,
                const float *k)
{
#ifdef HAVE_AVX2
    if (avx2_on(q) && B % 8 == 0) {
        apply_avx2(op, vals, x, nblk, B, k);
        return;
    }
#endif
    (void)q;
    apply_portable(op, vals, x, nblk, B, k);
}
