/* float32, float64 and float16 -> bfloat16, round to nearest even, with AVX512-BF16's conversion
 * (vcvtne2ps2bf16), and non-temporal stores of their own for large outputs (dt_kernel.nt). The
 * float64 and float16 kernels make float32 first (rounded to odd; exactly), below.
 *
 *   float32   s eeeeeeee mmmmmmm mmmmmmmmmmmmmmmm
 *             |<----- bfloat16 ----->|<- dropped ->|
 *
 * The instruction rounds the dropped half to nearest even, carrying into the exponent (the next
 * binade, or Inf from the largest binade: IEEE overflow), which is the reference's rounding for
 * every finite normal input and for Inf. It differs on two kinds of input:
 *   - a subnormal float32 (exponent 0, mantissa nonzero) is read as zero whatever MXCSR says,
 *     where the reference rounds it (bfloat16 has float32's exponent, so its subnormals too);
 *   - a NaN keeps its top payload bits (quieted), where the reference writes sign | 0x7FC0.
 * vfpclassps finds both kinds in a vector (denormal, QNaN, SNaN); such a vector takes the exact
 * integer rounding instead (add 0x7FFF plus the kept lsb, keep the top half). Weights and
 * activations hold neither, so the check costs one compare per vector and the branch is never
 * taken on them. */
#include "kernels.h"

#if defined(DT_HAVE_X86)
#include <immintrin.h>

#include "x86_attrs.h"

#define FN __attribute__((DT_NODEBUG target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))

/* vfpclassps categories: QNaN (0x01), denormal (0x20), SNaN (0x80) */
#define NOT_PLAIN 0xA1

/* the reference's rounding of 16 lanes (kernels_x86.h's bf16_round, nearest even) */
static FN inline __m256i exact16(__m512 x)
{
    const __m512i u = _mm512_castps_si512(x);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7FFF), lsb));
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7FFFFFFF)),
                                                  _mm512_set1_epi32(0x7F800000));
    r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(_mm512_and_si512(u, _mm512_set1_epi32(INT32_MIN)),
                                                      _mm512_set1_epi32(0x7FC00000)));
    return _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16));
}

static FN inline __m256i cvt16(__m512 x)
{
    if (_mm512_fpclass_ps_mask(x, NOT_PLAIN))
        return exact16(x);
    return (__m256i)_mm512_cvtneps_pbh(x);
}

/* n elements, 16 at a time through masks (the unaligned head and the tail) */
static FN void part(uint16_t *d, const float *s, size_t n)
{
    for (size_t i = 0; i < n; i += 16) {
        const size_t m = n - i < 16 ? n - i : 16;
        const __mmask16 km = (__mmask16)((1u << m) - 1);
        _mm256_mask_storeu_epi16(d + i, km, cvt16(_mm512_maskz_loadu_ps(km, s + i)));
    }
}

/* 32 elements: two vectors, one 64-byte line of output */
static FN inline __m512i line32(const float *s)
{
    __m512 a = _mm512_loadu_ps(s), b = _mm512_loadu_ps(s + 16);
    if (_mm512_fpclass_ps_mask(a, NOT_PLAIN) | _mm512_fpclass_ps_mask(b, NOT_PLAIN))
        return _mm512_inserti64x4(_mm512_castsi256_si512(exact16(a)), exact16(b), 1);
    return (__m512i)_mm512_cvtne2ps_pbh(b, a);
}

static FN void f32_bf16_ne(const dt_kernel *k, void *dst, const void *src, size_t begin,
                           size_t end)
{
    const float *s = (const float *)src + begin;
    uint16_t *d = (uint16_t *)dst + begin;
    const size_t n = end - begin;
    size_t i = 0;
    /* in place (dst == src) works: each line is read before the line it writes, which lies
     * at half its offset */
    if (k->nt && ((uintptr_t)d & 1) == 0) {
        size_t head = (size_t)(-(uintptr_t)d & 63) / 2;
        head = head < n ? head : n;
        part(d, s, head);
        for (i = head; i + 32 <= n; i += 32) {
            dt_prefetch_span(s + i, 128);
            _mm512_stream_si512((void *)(d + i), line32(s + i));
        }
    } else {
        for (; i + 32 <= n; i += 32) {
            dt_prefetch_span(s + i, 128);
            _mm512_storeu_si512((void *)(d + i), line32(s + i));
        }
    }
    part(d + i, s + i, n - i);
}

/* ---- float64 -> bfloat16, round to nearest even: the float64 rounded to odd into float32
 * (f64odd8: truncating vcvtpd2ps, the lsb set where it lost bits), then float32 -> bfloat16 as
 * above. Rounding to odd first keeps one rounding: float32 holds 24 significand bits, more than
 * bfloat16's 8 + 2, over bfloat16's whole exponent range (its own), subnormals included; a
 * float64 beyond float32's range truncates to FLT_MAX with the lsb set, which rounds to Inf as
 * the float64 does; NaN keeps its sign and is made canonical by exact16.
 *
 *   float64 x 4 --f64odd8--> float32 (odd) x 2 --vcvtne2ps2bf16 / exact16--> one 64-byte line */
#include "round_odd_avx512.h"

static FN inline __m512 odd16(const double *s)
{
    const __m256i lo = f64odd8(_mm512_loadu_pd(s)), hi = f64odd8(_mm512_loadu_pd(s + 8));
    return _mm512_castsi512_ps(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1));
}

static FN void part64(uint16_t *d, const double *s, size_t n)
{
    for (size_t i = 0; i < n; i += 16) {
        const size_t m = n - i < 16 ? n - i : 16;
        const __mmask16 km = (__mmask16)((1u << m) - 1);
        const __m256i lo = f64odd8(_mm512_maskz_loadu_pd((__mmask8)km, s + i));
        const __m256i hi = f64odd8(_mm512_maskz_loadu_pd((__mmask8)(km >> 8), s + i + 8));
        const __m512 x = _mm512_castsi512_ps(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1));
        _mm256_mask_storeu_epi16(d + i, km, cvt16(x));
    }
}

static FN inline __m512i line64(const double *s)
{
    const __m512 a = odd16(s), b = odd16(s + 16);
    if (_mm512_fpclass_ps_mask(a, NOT_PLAIN) | _mm512_fpclass_ps_mask(b, NOT_PLAIN))
        return _mm512_inserti64x4(_mm512_castsi256_si512(exact16(a)), exact16(b), 1);
    return (__m512i)_mm512_cvtne2ps_pbh(b, a);
}

static FN void f64_bf16_ne(const dt_kernel *k, void *dst, const void *src, size_t begin,
                           size_t end)
{
    const double *s = (const double *)src + begin;
    uint16_t *d = (uint16_t *)dst + begin;
    const size_t n = end - begin;
    size_t i = 0;
    /* in place (dst == src): each line reads its 256 bytes before writing 64 at a quarter of
     * their offset */
    if (k->nt && ((uintptr_t)d & 1) == 0) {
        size_t head = (size_t)(-(uintptr_t)d & 63) / 2;
        head = head < n ? head : n;
        part64(d, s, head);
        for (i = head; i + 32 <= n; i += 32) {
            dt_prefetch_span(s + i, 256);
            _mm512_stream_si512((void *)(d + i), line64(s + i));
        }
    } else {
        for (; i + 32 <= n; i += 32) {
            dt_prefetch_span(s + i, 256);
            _mm512_storeu_si512((void *)(d + i), line64(s + i));
        }
    }
    part64(d + i, s + i, n - i);
}

static bool e_f64_bf16(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                       size_t count)
{
    (void)count;
    if (!dt_cpu_has_avx512bf16() || sf->type != DTCAST_FLOAT64 || df->type != DTCAST_BFLOAT16 ||
        dt_mode_of(r->round) != M_RNE || r->saturate_float)
        return false;
    k->fn = f64_bf16_ne;
    k->nt_capable = true;
    return true;
}

/* ---- float16 -> bfloat16, round to nearest even: vcvtph2ps (exact: every float16, subnormals
 * too, is a normal float32), then vcvtne2ps2bf16 as above (no float32 subnormal can come from a
 * float16; NaN vectors take exact16 for the canonical NaN) */
static FN inline __m512 f16_as_f32(const uint16_t *s)
{
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)s));
}

static FN void part16(uint16_t *d, const uint16_t *s, size_t n)
{
    for (size_t i = 0; i < n; i += 16) {
        const size_t m = n - i < 16 ? n - i : 16;
        const __mmask16 km = (__mmask16)((1u << m) - 1);
        const __m512 x = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(km, s + i));
        _mm256_mask_storeu_epi16(d + i, km, cvt16(x));
    }
}

static FN inline __m512i line16(const uint16_t *s)
{
    const __m512 a = f16_as_f32(s), b = f16_as_f32(s + 16);
    if (_mm512_fpclass_ps_mask(a, NOT_PLAIN) | _mm512_fpclass_ps_mask(b, NOT_PLAIN))
        return _mm512_inserti64x4(_mm512_castsi256_si512(exact16(a)), exact16(b), 1);
    return (__m512i)_mm512_cvtne2ps_pbh(b, a);
}

static FN void f16_bf16_ne(const dt_kernel *k, void *dst, const void *src, size_t begin,
                           size_t end)
{
    const uint16_t *s = (const uint16_t *)src + begin;
    uint16_t *d = (uint16_t *)dst + begin;
    const size_t n = end - begin;
    size_t i = 0;
    /* in place (dst == src) works: each line is read before it is written */
    if (k->nt && ((uintptr_t)d & 1) == 0) {
        size_t head = (size_t)(-(uintptr_t)d & 63) / 2;
        head = head < n ? head : n;
        part16(d, s, head);
        for (i = head; i + 32 <= n; i += 32) {
            dt_prefetch_span(s + i, 64);
            _mm512_stream_si512((void *)(d + i), line16(s + i));
        }
    } else {
        for (; i + 32 <= n; i += 32) {
            dt_prefetch_span(s + i, 64);
            _mm512_storeu_si512((void *)(d + i), line16(s + i));
        }
    }
    part16(d + i, s + i, n - i);
}

static bool e_f16_bf16(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                       size_t count)
{
    (void)count;
    if (!dt_cpu_has_avx512bf16() || sf->type != DTCAST_FLOAT16 || df->type != DTCAST_BFLOAT16 ||
        dt_mode_of(r->round) != M_RNE || r->saturate_float)
        return false;
    k->fn = f16_bf16_ne;
    k->nt_capable = true;
    return true;
}

static bool e_f32_bf16(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                       size_t count)
{
    (void)count;
    if (!dt_cpu_has_avx512bf16() || sf->type != DTCAST_FLOAT32 || df->type != DTCAST_BFLOAT16 ||
        dt_mode_of(r->round) != M_RNE || r->saturate_float)
        return false;
    k->fn = f32_bf16_ne;
    k->nt_capable = true;
    return true;
}

const dt_kernel_entry dt_entries_avx512bf16[] = {
    {"avx512-bf16 float32 -> bfloat16 rne (vcvtne2ps2bf16, streaming stores)", DT_ISA_AVX512,
     e_f32_bf16},
    {"avx512-bf16 float64 -> bfloat16 rne (rounded to odd into float32, then vcvtne2ps2bf16)",
     DT_ISA_AVX512, e_f64_bf16},
    {"avx512-bf16 float16 -> bfloat16 rne (vcvtph2ps, then vcvtne2ps2bf16)", DT_ISA_AVX512,
     e_f16_bf16},
    {NULL, DT_ISA_PORTABLE, NULL},
};
#endif
