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
#include "lines_nt.h"

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

/* ---- the sources, 16 elements as float32 (km: the lanes to load; the others read as 0) ------
 * float32 as it is; float64 rounded to odd into float32 (f64odd8: truncating vcvtpd2ps, the lsb
 * set where it lost bits); float16 widened by vcvtph2ps.
 *
 * Rounding float64 to odd first keeps one rounding: float32 holds 24 significand bits, more
 * than bfloat16's 8 + 2, over bfloat16's whole exponent range (its own), subnormals included; a
 * float64 beyond float32's range truncates to FLT_MAX with the lsb set, which rounds to Inf as
 * the float64 does; NaN keeps its sign and is made canonical by exact16. A float16 is exact in
 * float32 and never a float32 subnormal, so only its NaN vectors take exact16.
 *
 *   float64 x 4 --f64odd8--> float32 (odd) x 2 --vcvtne2ps2bf16 / exact16--> one 64-byte line */
#include "round_odd_avx512.h"

static FN inline __m512 ld_f32(const uint8_t *p, __mmask16 km)
{
    return _mm512_maskz_loadu_ps(km, p);
}
static FN inline __m512 ld_f64(const uint8_t *p, __mmask16 km)
{
    const __m256i lo = f64odd8(_mm512_maskz_loadu_pd((__mmask8)km, p));
    const __m256i hi = f64odd8(_mm512_maskz_loadu_pd((__mmask8)(km >> 8), p + 64));
    return _mm512_castsi512_ps(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1));
}
static FN inline __m512 ld_f16(const uint8_t *p, __mmask16 km)
{
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(km, p));
}

/* 32 elements, two vectors of float32: one 64-byte line of bfloat16 */
static FN inline __m512i line32(__m512 a, __m512 b)
{
    if (_mm512_fpclass_ps_mask(a, NOT_PLAIN) | _mm512_fpclass_ps_mask(b, NOT_PLAIN))
        return _mm512_inserti64x4(_mm512_castsi256_si512(exact16(a)), exact16(b), 1);
    return (__m512i)_mm512_cvtne2ps_pbh(b, a);
}

/* The kernel from a source of SB bytes an element read by LD: ordinary stores 32 elements at a
 * time and the tail 16 at a time through masks (name_plain), and with its own streaming stores
 * through LINES_NT. In place (dst == src) works: each line reads its source before it writes
 * at the same or a lower offset. */
#define TO_BF16(name, SB, LD)                                                                   \
    static FN void name##_plain(const dt_kernel *k, void *dst, const void *src, size_t begin,  \
                                size_t end)                                                     \
    {                                                                                           \
        (void)k;                                                                                \
        const uint8_t *s = (const uint8_t *)src + begin * (SB);                                 \
        uint16_t *d = (uint16_t *)dst + begin;                                                  \
        const size_t n = end - begin;                                                           \
        size_t i = 0;                                                                           \
        for (; i + 32 <= n; i += 32) {                                                          \
            dt_prefetch_span(s + i * (SB), 32 * (SB));                                          \
            _mm512_storeu_si512((void *)(d + i), name##_LINE(s + i * (SB)));                    \
        }                                                                                       \
        for (; i < n; i += 16) {                                                                \
            const size_t m = n - i < 16 ? n - i : 16;                                           \
            const __mmask16 km = (__mmask16)((1u << m) - 1);                                    \
            _mm256_mask_storeu_epi16(d + i, km, cvt16(LD(s + i * (SB), km)));                   \
        }                                                                                       \
    }                                                                                           \
    LINES_NT(name, name##_plain, 32, SB, 2, , name##_NT)
#define LINE_OF(LD, SB, in) line32(LD((in), 0xFFFF), LD((in) + 16 * (SB), 0xFFFF))
#define f32_bf16_ne_LINE(in) LINE_OF(ld_f32, 4, in)
#define f64_bf16_ne_LINE(in) LINE_OF(ld_f64, 8, in)
#define f16_bf16_ne_LINE(in) LINE_OF(ld_f16, 2, in)
#define f32_bf16_ne_NT(in, out) NT_LINE(f32_bf16_ne_LINE, in, out)
#define f64_bf16_ne_NT(in, out) NT_LINE(f64_bf16_ne_LINE, in, out)
#define f16_bf16_ne_NT(in, out) NT_LINE(f16_bf16_ne_LINE, in, out)
TO_BF16(f32_bf16_ne, 4, ld_f32)
TO_BF16(f64_bf16_ne, 8, ld_f64)
TO_BF16(f16_bf16_ne, 2, ld_f16)

static bool e_to_bf16(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                      size_t count)
{
    (void)count;
    if (!dt_cpu_has_avx512bf16() || df->type != DTCAST_BFLOAT16 ||
        dt_mode_of(r->round) != M_RNE || r->saturate_float)
        return false;
    k->fn = sf->type == DTCAST_FLOAT32   ? f32_bf16_ne
            : sf->type == DTCAST_FLOAT64 ? f64_bf16_ne
            : sf->type == DTCAST_FLOAT16 ? f16_bf16_ne
                                         : NULL;
    k->nt_capable = true;
    return k->fn != NULL;
}

const dt_kernel_entry dt_entries_avx512bf16[] = {
    {"avx512-bf16 float32/float64/float16 -> bfloat16 rne (vcvtne2ps2bf16, streaming stores)",
     DT_ISA_AVX512, e_to_bf16},
    {NULL, DT_ISA_PORTABLE, NULL},
};
#endif
