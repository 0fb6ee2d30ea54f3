/* float64 -> float16 with AVX512-FP16's conversion (vcvtpd2ph), in rne and the directed modes:
 * the instruction rounds the float64 once to float16 in the mode given by its immediate
 * (embedded rounding; no MXCSR), subnormal results included, and overflows as IEEE 754 says
 * (Inf in rne, and in floor / ceil toward the infinity on their side; the largest finite value
 * otherwise), which is the reference's rounding. Where they differ it is fixed up as the
 * float32 -> float16 kernel of kernels_avx512.c does:
 *   - NaN: vcvtpd2ph keeps the top payload bits (quieted); the reference writes sign | 0x7E00;
 *   - saturation: an infinite result of a finite or infinite input becomes +-max (Inf - 1).
 *
 *   float64  s eeeeeeeeeee mmmmmmmmmm mmm...m (42 more)
 *   float16  s eeeee       mmmmmmmmmm          one rounding, where the chain through float32
 *                                              (rounded to odd) took two steps and a buffer
 *
 * Its own streaming stores for large outputs (dt_kernel.nt, lines_nt.h): 32 elements, one
 * 64-byte line. */
#include "kernels.h"

#if defined(DT_HAVE_X86)
#include <immintrin.h>

#include "x86_attrs.h"

#define FN __attribute__((DT_NODEBUG target("avx512f,avx512bw,avx512vl,avx512dq")))
#include "lines_nt.h"

/* vcvtpd2ph with the rounding control RC ("rn-sae", "rd-sae", "ru-sae", "rz-sae") as inline
 * assembly: compilers before clang 16 declare AVX512-FP16's intrinsics only when the whole file
 * is compiled for it, and the library runs on CPUs without it (the entry checks CPUID) */
#define VCVTPD2PH(x, RC)                                                                        \
    __extension__({                                                                             \
        __m128i h__;                                                                            \
        __asm__("vcvtpd2ph %{" RC "%}, %1, %0" : "=v"(h__) : "v"(x));                           \
        h__;                                                                                    \
    })

/* 8 float64 -> 8 float16 bits in rounding control IMM, the NaN and saturation fix-ups applied */
#define CVT8(x, IMM, sat)                                                                       \
    __extension__({                                                                             \
        const __m512d x_ = (x);                                                                 \
        __m128i h_ = VCVTPD2PH(x_, IMM);                                                        \
        const __mmask8 nan_ = _mm512_cmp_pd_mask(x_, x_, _CMP_UNORD_Q);                         \
        const __mmask8 inf_ = _mm_cmpeq_epi16_mask(_mm_and_si128(h_, _mm_set1_epi16(0x7FFF)),  \
                                                   _mm_set1_epi16(0x7C00));                     \
        h_ = _mm_mask_sub_epi16(h_, inf_ & (sat), h_, _mm_set1_epi16(1)); /* Inf - 1 is max */ \
        /* NaN: the sign of h, then the canonical quiet NaN: (h & 0x8000) | 0x7E00 */          \
        _mm_mask_blend_epi16(nan_, h_,                                                          \
                             _mm_ternarylogic_epi32(h_, _mm_set1_epi16((short)0x8000),          \
                                                    _mm_set1_epi16(0x7E00), 0xEA));             \
    })

/* 32 elements: four conversions, one line */
#define LINE32(s, IMM, sat)                                                                     \
    _mm512_inserti64x4(                                                                         \
        _mm512_castsi256_si512(_mm256_inserti128_si256(                                         \
            _mm256_castsi128_si256(CVT8(_mm512_loadu_pd(s), IMM, sat)),                         \
            CVT8(_mm512_loadu_pd((s) + 8), IMM, sat), 1)),                                      \
        _mm256_inserti128_si256(_mm256_castsi128_si256(CVT8(_mm512_loadu_pd((s) + 16), IMM, sat)), \
                                CVT8(_mm512_loadu_pd((s) + 24), IMM, sat), 1),                  \
        1)

/* The kernel in mode IMM: ordinary stores 32 elements at a time and the tail 8 at a time
 * through masks (no read or write past end), and with its own streaming stores through
 * LINES_NT (lines_nt.h) */
#define F64_F16(name, IMM)                                                                      \
    static FN void name##_plain(const dt_kernel *k, void *dst, const void *src, size_t begin,  \
                                size_t end)                                                     \
    {                                                                                           \
        const __mmask8 sat = k->r.saturate_float ? 0xFF : 0;                                    \
        const double *s = (const double *)src + begin;                                          \
        uint16_t *d = (uint16_t *)dst + begin;                                                  \
        const size_t n = end - begin;                                                           \
        size_t i = 0;                                                                           \
        for (; i + 32 <= n; i += 32) {                                                          \
            dt_prefetch_span(s + i, 256);                                                       \
            _mm512_storeu_si512((void *)(d + i), LINE32(s + i, IMM, sat));                      \
        }                                                                                       \
        for (; i < n; i += 8) {                                                                 \
            const size_t m = n - i < 8 ? n - i : 8;                                             \
            const __mmask8 km = (__mmask8)((1u << m) - 1);                                      \
            _mm_mask_storeu_epi16(d + i, km, CVT8(_mm512_maskz_loadu_pd(km, s + i), IMM, sat)); \
        }                                                                                       \
    }                                                                                           \
    LINES_NT(name, name##_plain, 32, 8, 2, const __mmask8 sat = k->r.saturate_float ? 0xFF : 0;, \
             name##_NT)
#define NT_OF(in, out, IMM)                                                                     \
    _mm512_stream_si512((void *)(out), LINE32((const double *)(const void *)(in), IMM, sat))
#define f64_f16_rne_NT(in, out) NT_OF(in, out, "rn-sae")
#define f64_f16_floor_NT(in, out) NT_OF(in, out, "rd-sae")
#define f64_f16_ceil_NT(in, out) NT_OF(in, out, "ru-sae")
#define f64_f16_trunc_NT(in, out) NT_OF(in, out, "rz-sae")
F64_F16(f64_f16_rne, "rn-sae")
F64_F16(f64_f16_floor, "rd-sae")
F64_F16(f64_f16_ceil, "ru-sae")
F64_F16(f64_f16_trunc, "rz-sae")

static bool e_f64_f16(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                      size_t count)
{
    (void)count;
    const int m = dt_mode_of(r->round);
    if (!dt_cpu_has_avx512fp16() || sf->type != DTCAST_FLOAT64 || df->type != DTCAST_FLOAT16 ||
        m == M_RNA || m == M_ODD || m < 0)
        return false;
    k->fn = m == M_RNE ? f64_f16_rne : m == M_FLOOR ? f64_f16_floor : m == M_CEIL ? f64_f16_ceil
                                                                                  : f64_f16_trunc;
    k->nt_capable = true;
    return true;
}

const dt_kernel_entry dt_entries_avx512fp16[] = {
    {"avx512-fp16 float64 -> float16 (vcvtpd2ph, embedded rounding; streaming stores)",
     DT_ISA_AVX512, e_f64_f16},
    {NULL, DT_ISA_PORTABLE, NULL},
};
#endif
