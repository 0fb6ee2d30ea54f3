/* Fused AVX2 dequantization of whole blocks: 16 codes at a time are decoded in registers,
 * multiplied by their block's factor (one float32 multiply) and rounded to bfloat16 or stored
 * as float32, straight into y (streaming stores where the storer streams).
 *
 * Decoding. Every float code type here is a float16 in disguise: its bits moved into float16
 * position give value × 2^-p exactly (normal codes as normal float16, subnormal codes as
 * subnormal float16), and vcvtph2ps widens that exactly to float32:
 *
 *   float8e4m3fn  s.eeee.mmm  -> s eeee mmm0000000  (bias 15 for 7)       p = 8, NaN -> 0x7E00
 *   float8e5m2    s.eeeee.mm  -> the float16's top byte                   p = 0, NaN -> 0x7E00
 *   float6e3m2fn  s.eee.mm    -> s 00eee mm00000000                        p = 12
 *   float6e2m3fn  s.ee.mmm    -> s 000ee mmm0000000                        p = 14
 *   float4e2m1    s.ee.m      -> s 000ee m000000000 (a 16-entry byte table) p = 14
 *   int8 (MXINT8)             -> vpmovsxbd + vcvtdq2ps                     p = 0
 *
 * The 2^p goes into the factor: k' = fl32(k × 2^p) is exact (checked: no overflow), so
 * fl32((value × 2^-p) × k') = fl32(value × k), the product the unfused path rounds. Every NaN
 * reaching the product is the canonical one (0x7FC00000 | sign): the codes' NaN decode to it,
 * a NaN factor is taken only when canonical, x86 keeps an operand's NaN and makes 0 × Inf
 * 0xFFC00000. The bfloat16 rounding u + 0x7FFF + lsb then needs no NaN case: it leaves
 * 0x7FC0 | sign for those, as the unfused rounding gives.
 *
 * Order of the lanes. For bfloat16 the 16 codes are split into even and odd elements, so that
 * the two rounded vectors interleave into memory order by one shift, mask and or (no shuffle);
 * float32 (and int8 codes) take elements 0-7 and 8-15. */
#include "fused_dequant.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "../kernels/x86_attrs.h"
#include <immintrin.h>

enum { FD_E4M3, FD_E5M2, FD_E3M2, FD_E2M3, FD_E2M1, FD_INT8, FD_KINDS };

/* float16 bits of value × 2^-p from L = code << 8 (16-bit lanes, low byte zero) */
DT_TARGET_AVX2 static DT_INLINE __m128i fd_f16(int kind, __m128i L)
{
    switch (kind) {
    case FD_E4M3: {
        /* the sign stays at bit 15, the 7 magnitude bits move to 13..7 (bit 14: the sign's copy) */
        const __m128i h = _mm_and_si128(_mm_srai_epi16(L, 1), _mm_set1_epi16((short)0xBF80));
        /* magnitude 0x7F (NaN) came out 0x3F80: xor 0x4180 makes it 0x7E00, float16's NaN */
        const __m128i nan = _mm_cmpeq_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7FFF)),
                                            _mm_set1_epi16(0x3F80));
        return _mm_xor_si128(h, _mm_and_si128(nan, _mm_set1_epi16(0x4180)));
    }
    case FD_E3M2: /* code bits 5..0 to 15..10 (6, 7 dropped), back by 2 with the sign spread */
        return _mm_and_si128(_mm_srai_epi16(_mm_slli_epi16(L, 2), 2), _mm_set1_epi16((short)0x9F00));
    case FD_E2M3: /* the same, back by 3: the magnitude at 11..7 */
        return _mm_and_si128(_mm_srai_epi16(_mm_slli_epi16(L, 2), 3), _mm_set1_epi16((short)0x8F80));
    default: /* FD_E5M2: already a float16 */
        return L;
    }
}

/* float8e5m2's NaN codes (magnitude 0x7D..0x7F) -> 0x7E | sign, float16's canonical NaN */
DT_TARGET_AVX2 static DT_INLINE __m128i fd_e5m2_nan(__m128i x)
{
    const __m128i mag = _mm_and_si128(x, _mm_set1_epi8(0x7F));
    const __m128i nan = _mm_cmpgt_epi8(mag, _mm_set1_epi8(0x7C));
    return _mm_xor_si128(x, _mm_and_si128(nan, _mm_xor_si128(mag, _mm_set1_epi8(0x7E))));
}

/* The values × 2^-p of the 16 elements from element i of the codes: even elements in *a and
 * odd ones in *b (eo), or elements 0-7 and 8-15. t4: float4e2m1's float16 top bytes. */
DT_TARGET_AVX2 static DT_INLINE void fd_decode16(int kind, bool eo, const uint8_t *codes,
                                                 size_t i, __m128i t4, __m256 *a, __m256 *b)
{
    if (kind == FD_INT8) {
        *a = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(codes + i))));
        *b = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(codes + i + 8))));
        return;
    }
    const __m128i zero = _mm_setzero_si128();
    __m128i la, lb;
    if (kind == FD_E2M1) { /* two codes a byte, element 2j in the low nibble */
        const __m128i x = _mm_loadl_epi64((const __m128i *)(const void *)(codes + i / 2));
        const __m128i lo = _mm_and_si128(x, _mm_set1_epi8(0x0F));
        const __m128i hi = _mm_and_si128(_mm_srli_epi16(x, 4), _mm_set1_epi8(0x0F));
        if (eo) {
            la = _mm_unpacklo_epi8(zero, _mm_shuffle_epi8(t4, lo));
            lb = _mm_unpacklo_epi8(zero, _mm_shuffle_epi8(t4, hi));
        } else {
            const __m128i h = _mm_shuffle_epi8(t4, _mm_unpacklo_epi8(lo, hi));
            la = _mm_unpacklo_epi8(zero, h);
            lb = _mm_unpackhi_epi8(zero, h);
        }
    } else {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(codes + i));
        if (kind == FD_E5M2)
            x = fd_e5m2_nan(x);
        if (eo) { /* code << 8 of the even bytes, and of the odd ones */
            la = _mm_slli_epi16(x, 8);
            lb = _mm_and_si128(x, _mm_set1_epi16((short)0xFF00));
        } else {
            la = _mm_unpacklo_epi8(zero, x);
            lb = _mm_unpackhi_epi8(zero, x);
        }
        la = fd_f16(kind, la);
        lb = fd_f16(kind, lb);
    }
    *a = _mm256_cvtph_ps(la);
    *b = _mm256_cvtph_ps(lb);
}

/* bfloat16, nearest even, in the high half of each lane (canonical NaN needs no case) */
DT_TARGET_AVX2 static DT_INLINE __m256i fd_bf16_high(__m256 v)
{
    const __m256i u = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    return _mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7FFF)));
}

/* 16 bfloat16 in memory order from the two vectors fd_decode16 gave */
DT_TARGET_AVX2 static DT_INLINE __m256i fd_bf16_16(bool eo, __m256 a, __m256 b)
{
    const __m256i ra = fd_bf16_high(a), rb = fd_bf16_high(b);
    if (eo) /* even element in the low half of each 32 bits, odd in the high half */
        return _mm256_or_si256(_mm256_srli_epi32(ra, 16),
                               _mm256_and_si256(rb, _mm256_set1_epi32((int)0xFFFF0000u)));
    /* packus works within 128-bit lanes: 0-3 8-11 4-7 12-15, put back in order */
    return _mm256_permute4x64_epi64(
        _mm256_packus_epi32(_mm256_srli_epi32(ra, 16), _mm256_srli_epi32(rb, 16)), 0xD8);
}

/* 32 bytes to d: ordinary stores, or streaming ones (d 16-byte aligned) */
DT_TARGET_AVX2 static DT_INLINE void fd_put(bool stream, void *d, __m256i v)
{
    if (!stream) {
        _mm256_storeu_si256((__m256i *)d, v);
        return;
    }
    _mm_stream_si128((__m128i *)d, _mm256_castsi256_si128(v));
    _mm_stream_si128((__m128i *)d + 1, _mm256_extracti128_si256(v, 1));
}

DT_TARGET_AVX2 static DT_INLINE void fd_run(int kind, bool bf16, bool stream, void *y,
                                            const uint8_t *codes, size_t n, size_t B,
                                            const float *k)
{
    /* float4e2m1 code c -> the top byte of its float16: sign to bit 7, e e m to bits 3..1 */
    const __m128i t4 = _mm_setr_epi8(0x00, 0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, (char)0x80,
                                     (char)0x82, (char)0x84, (char)0x86, (char)0x88, (char)0x8A,
                                     (char)0x8C, (char)0x8E);
    const bool eo = bf16 && kind != FD_INT8;
    for (size_t i = 0, b = 0; i < n; b++) {
        const __m256 f = _mm256_set1_ps(k[b]);
        const size_t e = n - i < B ? n : i + B;
        for (; i < e; i += 16) {
            __m256 va, vb;
            fd_decode16(kind, eo, codes, i, t4, &va, &vb);
            va = _mm256_mul_ps(va, f);
            vb = _mm256_mul_ps(vb, f);
            if (bf16) {
                fd_put(stream, (uint16_t *)y + i, fd_bf16_16(eo, va, vb));
            } else {
                fd_put(stream, (float *)y + i, _mm256_castps_si256(va));
                fd_put(stream, (float *)y + i + 8, _mm256_castps_si256(vb));
            }
        }
    }
}

typedef void (*fd_kernel)(void *y, const uint8_t *codes, size_t n, size_t B, const float *k);

/* one kernel per code type, output (float32, bfloat16) and store (ordinary, streaming) */
#define FD_ONE(kind, name, bf16, stream)                                                         \
    DT_TARGET_AVX2 static void name(void *y, const uint8_t *codes, size_t n, size_t B,         \
                                    const float *k)                                            \
    {                                                                                          \
        fd_run(kind, bf16, stream, y, codes, n, B, k);                                         \
    }
#define FD_KIND(kind, tag)                                                                     \
    FD_ONE(kind, fd_##tag##_f32, false, false)                                                 \
    FD_ONE(kind, fd_##tag##_f32_nt, false, true)                                               \
    FD_ONE(kind, fd_##tag##_bf16, true, false)                                                 \
    FD_ONE(kind, fd_##tag##_bf16_nt, true, true)
#define FD_ROW(tag) {{fd_##tag##_f32, fd_##tag##_f32_nt}, {fd_##tag##_bf16, fd_##tag##_bf16_nt}}

FD_KIND(FD_E4M3, e4m3)
FD_KIND(FD_E5M2, e5m2)
FD_KIND(FD_E3M2, e3m2)
FD_KIND(FD_E2M3, e2m3)
FD_KIND(FD_E2M1, e2m1)
FD_KIND(FD_INT8, int8)

static const fd_kernel fd_kernels[FD_KINDS][2][2] = {
    FD_ROW(e4m3), FD_ROW(e5m2), FD_ROW(e3m2), FD_ROW(e2m3), FD_ROW(e2m1), FD_ROW(int8),
};

static int fd_kind(dtcast_type element)
{
    switch (element) {
    case DTCAST_FLOAT8E4M3FN: return FD_E4M3;
    case DTCAST_FLOAT8E5M2: return FD_E5M2;
    case DTCAST_FLOAT6E3M2FN: return FD_E3M2;
    case DTCAST_FLOAT6E2M3FN: return FD_E2M3;
    case DTCAST_FLOAT4E2M1: return FD_E2M1;
    case DTCAST_INT8: return FD_INT8;
    default: return -1;
    }
}

/* kp[b] = fl32(k[b] × 2^p); false where that is not exact (a finite k overflowing) or k is a
 * NaN other than the canonical one; 8 factors a step, the last step overlapping (nb >= 1) */
DT_TARGET_AVX2 static bool fd_factors(float *kp, const float *k, size_t nb, int p)
{
    const __m256 pw = _mm256_castsi256_ps(_mm256_set1_epi32((127 + p) << 23));
    const __m256i abs = _mm256_set1_epi32(0x7FFFFFFF), inf = _mm256_set1_epi32(0x7F800000),
                  qnan = _mm256_set1_epi32(0x7FC00000);
    __m256i bad = _mm256_setzero_si256();
    if (nb < 8) {
        for (size_t b = 0; b < nb; b++) {
            const uint32_t a = dt_f32_bits(k[b]) & 0x7FFFFFFFu;
            const float t = k[b] * _mm256_cvtss_f32(pw);
            if ((a > 0x7F800000u && a != 0x7FC00000u) ||
                (a < 0x7F800000u && (dt_f32_bits(t) & 0x7FFFFFFFu) == 0x7F800000u))
                return false;
            kp[b] = t;
        }
        return true;
    }
    for (size_t b = 0;; b += 8) {
        if (b > nb - 8)
            b = nb - 8;
        const __m256 kv = _mm256_loadu_ps(k + b), t = _mm256_mul_ps(kv, pw);
        const __m256i a = _mm256_and_si256(_mm256_castps_si256(kv), abs);
        const __m256i ta = _mm256_and_si256(_mm256_castps_si256(t), abs);
        /* a NaN with a payload; a finite k whose product is infinite */
        bad = _mm256_or_si256(bad, _mm256_andnot_si256(_mm256_cmpeq_epi32(a, qnan),
                                                        _mm256_cmpgt_epi32(a, inf)));
        bad = _mm256_or_si256(bad, _mm256_andnot_si256(_mm256_cmpeq_epi32(a, inf),
                                                        _mm256_cmpeq_epi32(ta, inf)));
        _mm256_storeu_ps(kp + b, t);
        if (b + 8 == nb)
            break;
    }
    return _mm256_testz_si256(bad, bad);
}

bool dt_fused_dequant(const dt_storer *s, const dt_quant *q, const uint8_t *codes, size_t f,
                      size_t n, size_t B, const float *k)
{
    static const int pow2[FD_KINDS] = {8, 0, 12, 14, 14, 0};
    if (q->simple || !q->avx2 || n > DT_QCHUNK || n % 16 || B == 0 || B % 16)
        return false;
    const bool bf16 = s->type == DTCAST_BFLOAT16;
    const int kind = fd_kind(q->p.element);
    if ((!bf16 && s->type != DTCAST_FLOAT32) || kind < 0)
        return false;
    if (kind == FD_E2M1 ? q->code_bits != 4 || q->K % 2 || f % 2 : q->code_bits != 8)
        return false;
    uint8_t *y = (uint8_t *)s->data + f * (bf16 ? 2 : 4);
    if (s->stream && (uintptr_t)y % 16)
        return false;
    float kp[DT_QCHUNK / 16];
    if (!fd_factors(kp, k, (n + B - 1) / B, pow2[kind]))
        return false;
    fd_kernels[kind][bf16][s->stream](y, codes + (kind == FD_E2M1 ? f / 2 : f), n, B, kp);
    return true;
}

#else
bool dt_fused_dequant(const dt_storer *s, const dt_quant *q, const uint8_t *codes, size_t f,
                      size_t n, size_t B, const float *k)
{
    (void)s, (void)q, (void)codes, (void)f, (void)n, (void)B, (void)k;
    return false;
}
#endif
