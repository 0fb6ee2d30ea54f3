/* float32 lanes -> the codes of the quantization element types, nearest even, in AVX2
 * registers (included by fused_quant_avx2.c only). The same codes as the conversion kernels
 * with saturation (dtcast_convert, float_overflow saturate): beyond the largest finite value
 * gives +-max, NaN gives the type's NaN (float8) or the types' own rule (float6 / float4: the
 * zero of the other sign), -0 and the negative values that round to 0 keep the sign. The
 * magnitudes are rounded per lane, the signs put in after packing (fq_sign8). */
#ifndef DTCAST_FUSED_ROUND_AVX2_H
#define DTCAST_FUSED_ROUND_AVX2_H

#include "../kernels/x86_attrs.h"

#include <immintrin.h>
#include <stdint.h>

/* FQ_E4M3_IEEE: float8e4m3fn without saturation (beyond 448 rounds to NaN, 0x7F: NVFP4's
 * block scales) */
enum { FQ_E4M3, FQ_E5M2, FQ_E3M2, FQ_E2M3, FQ_E2M1, FQ_I8, FQ_E4M3_IEEE };

/* A float code format: m significand bits, emin the exponent of its smallest normal, maxc the
 * code of its largest finite magnitude, clamp the float32 bits of 2^(emax + 1) (beyond every
 * finite code once rounded), bits its width (the sign is the top bit), nan the code of +NaN
 * (that of -NaN is nan ^ sign). */
typedef struct fq_fmt {
    int m, emin, bits;
    uint32_t maxc, clamp, nan;
} fq_fmt;

static DT_INLINE fq_fmt fq_fmt_of(int el)
{
    switch (el) {
    case FQ_E4M3: return (fq_fmt){3, -6, 8, 0x7E, (127u + 9) << 23, 0x7F};
    case FQ_E4M3_IEEE: return (fq_fmt){3, -6, 8, 0x7F, (127u + 9) << 23, 0x7F};
    case FQ_E5M2: return (fq_fmt){2, -14, 8, 0x7B, (127u + 16) << 23, 0x7E};
    case FQ_E3M2: return (fq_fmt){2, -2, 6, 0x1F, (127u + 5) << 23, 0x20};
    case FQ_E2M3: return (fq_fmt){3, 0, 6, 0x1F, (127u + 3) << 23, 0x20};
    default: return (fq_fmt){1, 0, 4, 0x7, (127u + 3) << 23, 0x8}; /* FQ_E2M1 */
    }
}

static DT_TARGET_AVX2 DT_INLINE __m256i fq_set1(uint32_t c)
{
    return _mm256_set1_epi32((int)c);
}

/* The code of |v| in format el, nearest even, saturating (the sign comes later: fq_sign8).
 * bounded: |v| < 2^(emax + 1) is known (MX's scaled blocks), else Inf and the values above are
 * clamped first. nan: NaN lanes get +NaN's code (the sign flips it to -NaN's); without, the
 * caller knows there are none. FQ_E4M3_IEEE needs neither: NaN and Inf are clamped to a code
 * above 0x7F, which the saturation makes NaN. */
static DT_TARGET_AVX2 DT_INLINE __m256i fq_round_float(__m256 v, int el, int bounded, int nan)
{
    const fq_fmt f = fq_fmt_of(el);
    const uint32_t emin_bits = (uint32_t)(127 + f.emin) << 23; /* 2^emin */
    const __m256i a = _mm256_and_si256(_mm256_castps_si256(v), fq_set1(0x7FFFFFFFu)); /* |v| */
    /* Inf and everything above 2^(emax + 1) become 2^(emax + 1): one code past max, so they
     * saturate below; the exponents stay small enough for the magic number */
    const __m256i ac = bounded ? a : _mm256_min_epi32(a, fq_set1(f.clamp));
    /* 2^E with E = max(exponent of |v|, emin): the binade whose quantum 2^(E - m) applies
     * (below emin the quantum of the subnormals, that of emin) */
    const __m256i eb = _mm256_max_epi32(_mm256_and_si256(ac, fq_set1(0x7F800000u)),
                                        fq_set1(emin_bits));
    /* M = 2^(E + 23 - m): its float32 ulp is that quantum */
    const __m256i mg = _mm256_add_epi32(eb, fq_set1((uint32_t)(23 - f.m) << 23));
    /* |v| + M in float32: the hardware rounds |v| to a multiple of the quantum, nearest even
     * (|v| < 2^(E+1), so the sum stays in M's binade or lands on 2M exactly) */
    const __m256i s = _mm256_castps_si256(
        _mm256_add_ps(_mm256_castsi256_ps(ac), _mm256_castsi256_ps(mg)));
    /* its bits - M's = |v| in quanta, k in [0, 2^(m+1)]; the code is k plus one binade
     * (2^m codes) per exponent above emin: (2^E / 2^emin - 1) * 2^m, as a shift of the
     * exponent field's difference */
    __m256i code = _mm256_add_epi32(
        _mm256_sub_epi32(s, mg),
        _mm256_srli_epi32(_mm256_sub_epi32(eb, fq_set1(emin_bits)), 23 - f.m));
    code = _mm256_min_epi32(code, fq_set1(f.maxc)); /* saturate */
    if (!nan)
        return code;
    /* NaN: |v| bits above Inf's */
    return _mm256_blendv_epi8(code, fq_set1(f.nan), _mm256_cmpgt_epi32(a, fq_set1(0x7F800000u)));
}

/* The sign bits of 32 float32 lanes (a, b, c, d) packed as the codes are (before the final
 * permute of fq_pack8), at the code's top bit: signed saturation keeps each lane's sign. XORed
 * into the magnitudes: the sign bit where there is none, +NaN's code to -NaN's (float8: 0x7F ->
 * 0xFF; float6 and float4: the sign bit of their NaN rule cleared). */
static DT_TARGET_AVX2 DT_INLINE __m256i fq_sign8(__m256 a, __m256 b, __m256 c, __m256 d,
                                                 int bits /* the code's width */)
{
    const __m256i p = _mm256_packs_epi16(
        _mm256_packs_epi32(_mm256_castps_si256(a), _mm256_castps_si256(b)),
        _mm256_packs_epi32(_mm256_castps_si256(c), _mm256_castps_si256(d)));
    const __m256i s = _mm256_and_si256(p, _mm256_set1_epi8((char)0x80));
    return bits == 8 ? s : _mm256_srli_epi16(s, 8 - bits); /* within each byte: 0x80 >> n */
}

/* MXINT8: v in [-127, 127] (clamped by the element step, no NaN) rounded to an integer: the
 * conversion rounds by MXCSR, nearest even in the quantization's environment */
static DT_TARGET_AVX2 DT_INLINE __m256i fq_round_i8(__m256 v)
{
    return _mm256_cvtps_epi32(v);
}

static DT_TARGET_AVX2 DT_INLINE __m256i fq_round(__m256 v, int el, int bounded, int nan)
{
    return el == FQ_I8 ? fq_round_i8(v) : fq_round_float(v, el, bounded, nan);
}

#endif /* DTCAST_FUSED_ROUND_AVX2_H */
