/* AVX2 (+ F16C) dequantizers of ggml's block types: the reference's float32 bits (dequant.c),
 * NaN bits included, and its residuals lo for the inexact types. The same rules as
 * fast_dequant_avx512.c: a block whose scales are finite is decoded here with the reference's
 * binary32 operations (no fused multiply-add), a block with an Inf or NaN scale by the
 * reference, that one block.
 *
 * Levels. The integer levels of a block are assembled as bytes (32 at a time: nibbles, the
 * extra bits of Q5 / Q6 / Q3, minus the offset), widened to 8 dwords, converted exactly to
 * float32 and multiplied by the (sub-)block scale; the non-linear levels (IQ4, MXFP4, NVFP4:
 * int8-valued tables) are looked up with vpshufb first. */
#include "fast_dequant.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "../kernels/x86_attrs.h"

#include <immintrin.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-const-variable"
#include "iq_tables.inc"
#pragma GCC diagnostic pop

#define FN DT_TARGET_AVX2
#define HF static DT_INLINE DT_TARGET_AVX2

/* the loops over a block's parts run unrolled: their selections and shift counts fold away
 * (gcc's -O2 keeps 2- and 4-iteration loops as loops, with the selections as branches) */
#define UNROLL _Pragma("GCC unroll 32")

/* lo + off, or NULL when lo is NULL */
#define LO_AT(lo, off) ((lo) ? (lo) + (off) : NULL)

/* ---- fields and small helpers ---------------------------------------------------------------- */
static inline bool h_ok(uint16_t h)
{
    return (h & 0x7C00u) != 0x7C00u;
}
static inline uint32_t ld32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint64_t ld64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
/* an fp16 scale (finite) as a float, exactly */
HF float f16s(uint16_t h)
{
    return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
}
HF __m256 f16v(uint16_t h)
{
    return _mm256_set1_ps(f16s(h));
}
HF __m128i ld128(const uint8_t *p)
{
    return _mm_loadu_si128((const __m128i *)(const void *)p);
}
HF __m256i ld256(const uint8_t *p)
{
    return _mm256_loadu_si256((const __m256i *)(const void *)p);
}
HF __m128i ld64x(const uint8_t *p)
{
    return _mm_cvtsi64_si128((long long)ld64(p));
}
HF __m256i b8(int v)
{
    return _mm256_set1_epi8((char)v);
}
/* the 8 bytes of x from byte 8h on, widened to float32 (zero- or sign-extended) */
HF __m256 u8f(__m128i x, int h)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(h ? _mm_unpackhi_epi64(x, x) : x));
}
HF __m256 s8f(__m128i x, int h)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(h ? _mm_unpackhi_epi64(x, x) : x));
}
/* byte quarter k (8 bytes) of a 32-byte vector as float32 */
HF __m256 u8q(__m256i v, int k)
{
    return u8f(k < 2 ? _mm256_castsi256_si128(v) : _mm256_extracti128_si256(v, 1), k & 1);
}
HF __m256 s8q(__m256i v, int k)
{
    return s8f(k < 2 ? _mm256_castsi256_si128(v) : _mm256_extracti128_si256(v, 1), k & 1);
}
/* 16 split-half nibble bytes as 32 bytes in element order */
HF __m256i nibbles32(const uint8_t *p)
{
    const __m128i b = ld128(p), m = _mm_set1_epi8(15);
    return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(b, 4), m), _mm_and_si128(b, m));
}
HF __m256 two_sum_err(__m256 a, __m256 b, __m256 s)
{
    const __m256 bb = _mm256_sub_ps(s, a), aa = _mm256_sub_ps(s, bb);
    return _mm256_add_ps(_mm256_sub_ps(a, aa), _mm256_sub_ps(b, bb));
}
HF __m256 neg(__m256 v)
{
    return _mm256_xor_ps(v, _mm256_set1_ps(-0.0f));
}
/* 8 elements y = a * q - b (sub) or a * q + b, lo their residuals (when not NULL) */
HF void affine8(float *y, float *lo, __m256 q, __m256 a, __m256 b, bool sub)
{
    const __m256 p = _mm256_mul_ps(a, q);
    const __m256 s = sub ? _mm256_sub_ps(p, b) : _mm256_add_ps(p, b);
    _mm256_storeu_ps(y, s);
    if (lo)
        _mm256_storeu_ps(lo, two_sum_err(p, sub ? neg(b) : b, s));
}
/* 32 unsigned levels (bytes of v) -> y = a * q +- b, lo */
HF void affine32(float *y, float *lo, __m256i v, __m256 a, __m256 b, bool sub)
{
    UNROLL
    for (int k = 0; k < 4; k++)
        affine8(y + 8 * k, LO_AT(lo, 8 * k), u8q(v, k), a, b, sub);
}
/* 32 signed levels (int8 bytes of v) -> y = q * d */
HF void scale32(float *y, __m256i v, __m256 d)
{
    UNROLL
    for (int k = 0; k < 4; k++)
        _mm256_storeu_ps(y + 8 * k, _mm256_mul_ps(s8q(v, k), d));
}
/* the 32 bits of qh as 32 bytes: 0xFF where bit j is set (ggml's bytes_from_bits_32) */
HF __m256i bits_to_bytes(uint32_t qh)
{
    const __m256i shuf = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2,
                                          2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32((int)qh), shuf);
    const __m256i bit = _mm256_set1_epi64x(0x8040201008040201LL);
    return _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
}

/* =================================================================================================
 * The 32-element types
 * ============================================================================================== */
HF void q8_blocks(const uint8_t *x, float *y, size_t nb, size_t bytes, int off,
                  void (*ref)(const uint8_t *, float *, float *, size_t))
{
    for (size_t i = 0; i < nb; i++, x += bytes, y += 32) {
        const uint16_t h = dt_ggml_rd16(x);
        if (!h_ok(h)) {
            ref(x, y, NULL, 1);
            continue;
        }
        const __m256 d = f16v(h);
        UNROLL
        for (int k = 0; k < 4; k++)
            _mm256_storeu_ps(y + 8 * k, _mm256_mul_ps(s8f(ld64x(x + off + 8 * k), 0), d));
    }
}
FN void dt_ggml_dequantize_q8_0_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    q8_blocks(x, y, nb, 34, 2, dt_ggml_dequantize_q8_0);
}
FN void dt_ggml_dequantize_q8_1_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    q8_blocks(x, y, nb, 36, 4, dt_ggml_dequantize_q8_1);
}

FN void dt_ggml_dequantize_q4_0_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    for (size_t i = 0; i < nb; i++, x += 18, y += 32) {
        const uint16_t h = dt_ggml_rd16(x);
        if (!h_ok(h)) {
            dt_ggml_dequantize_q4_0(x, y, NULL, 1);
            continue;
        }
        scale32(y, _mm256_sub_epi8(nibbles32(x + 2), b8(8)), f16v(h));
    }
}

FN void dt_ggml_dequantize_q4_1_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    for (size_t i = 0; i < nb; i++, x += 20, y += 32, lo = LO_AT(lo, 32)) {
        const uint16_t hd = dt_ggml_rd16(x), hm = dt_ggml_rd16(x + 2);
        if (!h_ok(hd) || !h_ok(hm)) {
            dt_ggml_dequantize_q4_1(x, y, lo, 1);
            continue;
        }
        affine32(y, lo, nibbles32(x + 4), f16v(hd), f16v(hm), false);
    }
}

FN void dt_ggml_dequantize_q5_0_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    for (size_t i = 0; i < nb; i++, x += 22, y += 32) {
        const uint16_t h = dt_ggml_rd16(x);
        if (!h_ok(h)) {
            dt_ggml_dequantize_q5_0(x, y, NULL, 1);
            continue;
        }
        /* q - 16 as int8: the nibble with 0xF0 where the fifth bit is clear */
        const __m256i hi = _mm256_andnot_si256(bits_to_bytes(ld32(x + 2)), b8(0xF0));
        scale32(y, _mm256_or_si256(nibbles32(x + 6), hi), f16v(h));
    }
}

FN void dt_ggml_dequantize_q5_1_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    for (size_t i = 0; i < nb; i++, x += 24, y += 32, lo = LO_AT(lo, 32)) {
        const uint16_t hd = dt_ggml_rd16(x), hm = dt_ggml_rd16(x + 2);
        if (!h_ok(hd) || !h_ok(hm)) {
            dt_ggml_dequantize_q5_1(x, y, lo, 1);
            continue;
        }
        const __m256i hi = _mm256_and_si256(bits_to_bytes(ld32(x + 4)), b8(0x10));
        affine32(y, lo, _mm256_or_si256(nibbles32(x + 8), hi), f16v(hd), f16v(hm), false);
    }
}

/* the int8 table t looked up by the 32 nibbles of 16 split-half bytes at p, times d */
HF void lut32(float *y, const uint8_t *p, __m128i t, __m256 d)
{
    const __m128i b = ld128(p), m = _mm_set1_epi8(15);
    const __m128i lo4 = _mm_shuffle_epi8(t, _mm_and_si128(b, m));
    const __m128i hi4 = _mm_shuffle_epi8(t, _mm_and_si128(_mm_srli_epi16(b, 4), m));
    _mm256_storeu_ps(y, _mm256_mul_ps(d, s8f(lo4, 0)));
    _mm256_storeu_ps(y + 8, _mm256_mul_ps(d, s8f(lo4, 1)));
    _mm256_storeu_ps(y + 16, _mm256_mul_ps(d, s8f(hi4, 0)));
    _mm256_storeu_ps(y + 24, _mm256_mul_ps(d, s8f(hi4, 1)));
}
/* kvalues_iq4nl and kvalues_mxfp4 (doubled E2M1) as int8: the float tables' exact values */
HF __m128i kv_iq4nl(void)
{
    return _mm_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
}
HF __m128i kv_mxfp4(void)
{
    return _mm_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
}

FN void dt_ggml_dequantize_iq4_nl_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    const __m128i kv = kv_iq4nl();
    for (size_t i = 0; i < nb; i++, x += 18, y += 32) {
        const uint16_t h = dt_ggml_rd16(x);
        if (!h_ok(h)) {
            dt_ggml_dequantize_iq4_nl(x, y, NULL, 1);
            continue;
        }
        lut32(y, x + 2, kv, f16v(h));
    }
}

FN void dt_ggml_dequantize_mxfp4_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    const __m128i kv = kv_mxfp4();
    for (size_t i = 0; i < nb; i++, x += 17, y += 32) {
        const uint32_t e = x[0];
        const uint32_t bits = e < 2 ? 0x00200000u << e : (e - 1) << 23;
        lut32(y, x + 1, kv, _mm256_castsi256_ps(_mm256_set1_epi32((int)bits)));
    }
}

FN void dt_ggml_dequantize_iq4_xs_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    const __m128i kv = kv_iq4nl();
    for (size_t i = 0; i < nb; i++, x += 136, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x);
        if (!h_ok(hd)) {
            dt_ggml_dequantize_iq4_xs(x, y, NULL, 1);
            continue;
        }
        const float d = f16s(hd);
        const unsigned sh = dt_ggml_rd16(x + 2);
        UNROLL
        for (int ib = 0; ib < 8; ib++) {
            const unsigned ls = ((unsigned)x[4 + ib / 2] >> (4 * (ib % 2)) & 15u) | (sh >> (2 * ib) & 3u) << 4;
            lut32(y + 32 * ib, x + 8 + 16 * ib, kv, _mm256_set1_ps(d * (float)((int)ls - 32)));
        }
    }
}

/* =================================================================================================
 * K-quants
 * ============================================================================================== */
HF void k4_scales(const uint8_t *x, uint16_t hd, uint16_t hm, float *dm)
{
    const uint8_t *b = x + 4;
    const uint32_t u0 = ld32(b), u1 = ld32(b + 4), u2 = ld32(b + 8);
    const uint32_t sc03 = u0 & 0x3F3F3F3Fu, m03 = u1 & 0x3F3F3F3Fu;
    const uint32_t sc47 = (u2 & 0x0F0F0F0Fu) | ((u0 >> 6) & 0x03030303u) << 4;
    const uint32_t m47 = ((u2 >> 4) & 0x0F0F0F0Fu) | ((u1 >> 6) & 0x03030303u) << 4;
    const __m128i s = _mm_setr_epi32((int)sc03, (int)sc47, (int)m03, (int)m47);
    _mm256_storeu_ps(dm, _mm256_mul_ps(f16v(hd), u8f(s, 0)));
    _mm256_storeu_ps(dm + 8, _mm256_mul_ps(f16v(hm), u8f(s, 1)));
}

FN void dt_ggml_dequantize_q4_K_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    const __m256i m0F = b8(15);
    for (size_t i = 0; i < nb; i++, x += 144, y += 256, lo = LO_AT(lo, 256)) {
        const uint16_t hd = dt_ggml_rd16(x), hm = dt_ggml_rd16(x + 2);
        if (!h_ok(hd) || !h_ok(hm)) {
            dt_ggml_dequantize_q4_K(x, y, lo, 1);
            continue;
        }
        float dm[16];
        k4_scales(x, hd, hm, dm);
        UNROLL
        for (int c = 0; c < 4; c++) {
            const __m256i q = ld256(x + 16 + 32 * c);
            UNROLL
            for (int h = 0; h < 2; h++) {
                const int j = 2 * c + h, at = 64 * c + 32 * h;
                const __m256i v = _mm256_and_si256(h ? _mm256_srli_epi16(q, 4) : q, m0F);
                affine32(y + at, LO_AT(lo, at), v, _mm256_set1_ps(dm[j]), _mm256_set1_ps(dm[8 + j]), true);
            }
        }
    }
}

FN void dt_ggml_dequantize_q5_K_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    const __m256i m0F = b8(15), m01 = b8(1);
    for (size_t i = 0; i < nb; i++, x += 176, y += 256, lo = LO_AT(lo, 256)) {
        const uint16_t hd = dt_ggml_rd16(x), hm = dt_ggml_rd16(x + 2);
        if (!h_ok(hd) || !h_ok(hm)) {
            dt_ggml_dequantize_q5_K(x, y, lo, 1);
            continue;
        }
        float dm[16];
        k4_scales(x, hd, hm, dm);
        const __m256i qh = ld256(x + 16);
        UNROLL
        for (int c = 0; c < 4; c++) {
            const __m256i q = ld256(x + 48 + 32 * c);
            UNROLL
            for (int h = 0; h < 2; h++) {
                const int j = 2 * c + h, at = 64 * c + 32 * h;
                const __m256i hb = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(j)), m01);
                const __m256i v = _mm256_or_si256(_mm256_and_si256(h ? _mm256_srli_epi16(q, 4) : q, m0F),
                                                  _mm256_slli_epi16(hb, 4));
                affine32(y + at, LO_AT(lo, at), v, _mm256_set1_ps(dm[j]), _mm256_set1_ps(dm[8 + j]), true);
            }
        }
    }
}

FN void dt_ggml_dequantize_q6_K_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    const __m256i m0F = b8(15), m03 = b8(3), b32 = b8(32);
    for (size_t i = 0; i < nb; i++, x += 210, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x + 208);
        if (!h_ok(hd)) {
            dt_ggml_dequantize_q6_K(x, y, NULL, 1);
            continue;
        }
        float dl[16];
        const __m128i sc = ld128(x + 192);
        const __m256 d = f16v(hd);
        _mm256_storeu_ps(dl, _mm256_mul_ps(d, s8f(sc, 0)));
        _mm256_storeu_ps(dl + 8, _mm256_mul_ps(d, s8f(sc, 1)));
        UNROLL
        for (int g = 0; g < 2; g++) {
            const __m256i l0 = ld256(x + 64 * g), l1 = ld256(x + 64 * g + 32);
            const __m256i qh = ld256(x + 128 + 32 * g);
            UNROLL
            for (int k = 0; k < 4; k++) {
                const __m256i l = k % 2 ? l1 : l0;
                const __m256i lo4 = _mm256_and_si256(k / 2 ? _mm256_srli_epi16(l, 4) : l, m0F);
                const __m256i hi2 = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * k)), m03);
                const __m256i q = _mm256_sub_epi8(_mm256_or_si256(lo4, _mm256_slli_epi16(hi2, 4)), b32);
                const int e = 128 * g + 32 * k, s = e / 16;
                UNROLL
                for (int n = 0; n < 4; n++)
                    _mm256_storeu_ps(y + e + 8 * n, _mm256_mul_ps(s8q(q, n), _mm256_set1_ps(dl[s + n / 2])));
            }
        }
    }
}

FN void dt_ggml_dequantize_q2_K_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    const __m256i m03 = b8(3);
    for (size_t i = 0; i < nb; i++, x += 84, y += 256, lo = LO_AT(lo, 256)) {
        const uint16_t hd = dt_ggml_rd16(x + 80), hm = dt_ggml_rd16(x + 82);
        if (!h_ok(hd) || !h_ok(hm)) {
            dt_ggml_dequantize_q2_K(x, y, lo, 1);
            continue;
        }
        float dl[16], ml[16];
        const __m128i s = ld128(x), m0F = _mm_set1_epi8(15);
        const __m128i sc = _mm_and_si128(s, m0F), mn = _mm_and_si128(_mm_srli_epi16(s, 4), m0F);
        const __m256 d = f16v(hd), dmin = f16v(hm);
        UNROLL
        for (int h = 0; h < 2; h++) {
            _mm256_storeu_ps(dl + 8 * h, _mm256_mul_ps(d, u8f(sc, h)));
            _mm256_storeu_ps(ml + 8 * h, _mm256_mul_ps(dmin, u8f(mn, h)));
        }
        UNROLL
        for (int g = 0; g < 2; g++) {
            const __m256i q = ld256(x + 16 + 32 * g);
            UNROLL
            for (int k = 0; k < 4; k++) {
                const __m256i v = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(2 * k)), m03);
                const int e = 128 * g + 32 * k, grp = e / 16;
                UNROLL
                for (int n = 0; n < 4; n++)
                    affine8(y + e + 8 * n, LO_AT(lo, e + 8 * n), u8q(v, n),
                            _mm256_set1_ps(dl[grp + n / 2]), _mm256_set1_ps(ml[grp + n / 2]), true);
            }
        }
    }
}

FN void dt_ggml_dequantize_q3_K_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    const __m256i m03 = b8(3), m01 = b8(1), b4 = b8(4);
    for (size_t i = 0; i < nb; i++, x += 110, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x + 108);
        if (!h_ok(hd)) {
            dt_ggml_dequantize_q3_K(x, y, NULL, 1);
            continue;
        }
        float dl[16];
        const uint8_t *sc = x + 96;
        const uint32_t a0 = ld32(sc), a1 = ld32(sc + 4), t = ld32(sc + 8);
        const uint32_t k2 = 0x0F0F0F0Fu, k1 = 0x03030303u;
        const __m128i s = _mm_sub_epi8(_mm_setr_epi32((int)((a0 & k2) | ((t >> 0) & k1) << 4),
                                                      (int)((a1 & k2) | ((t >> 2) & k1) << 4),
                                                      (int)(((a0 >> 4) & k2) | ((t >> 4) & k1) << 4),
                                                      (int)(((a1 >> 4) & k2) | ((t >> 6) & k1) << 4)),
                                       _mm_set1_epi8(32));
        const __m256 d = f16v(hd);
        _mm256_storeu_ps(dl, _mm256_mul_ps(d, s8f(s, 0)));
        _mm256_storeu_ps(dl + 8, _mm256_mul_ps(d, s8f(s, 1)));
        const __m256i hm = ld256(x);
        UNROLL
        for (int g = 0; g < 2; g++) {
            const __m256i q = ld256(x + 32 + 32 * g);
            UNROLL
            for (int k = 0; k < 4; k++) {
                const __m256i lev = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(2 * k)), m03);
                const __m256i hb = _mm256_and_si256(_mm256_srl_epi16(hm, _mm_cvtsi32_si128(4 * g + k)), m01);
                const __m256i v = _mm256_sub_epi8(_mm256_or_si256(lev, _mm256_slli_epi16(hb, 2)), b4);
                const int e = 128 * g + 32 * k, grp = e / 16;
                UNROLL
                for (int n = 0; n < 4; n++)
                    _mm256_storeu_ps(y + e + 8 * n, _mm256_mul_ps(s8q(v, n), _mm256_set1_ps(dl[grp + n / 2])));
            }
        }
    }
}

FN void dt_ggml_dequantize_q8_K_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    const __m256 inf = _mm256_set1_ps(__builtin_inff()), absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    for (size_t i = 0; i < nb; i++, x += 292, y += 256, lo = LO_AT(lo, 256)) {
        const uint32_t db = ld32(x);
        if ((db & 0x7F800000u) == 0x7F800000u) {
            dt_ggml_dequantize_q8_K(x, y, lo, 1);
            continue;
        }
        const __m256 d = _mm256_castsi256_ps(_mm256_set1_epi32((int)db));
        const __m256d dd = _mm256_cvtps_pd(_mm_castsi128_ps(_mm_set1_epi32((int)db)));
        UNROLL
        for (int k = 0; k < 32; k++) {
            const __m256i qi = _mm256_cvtepi8_epi32(ld64x(x + 4 + 8 * k));
            const __m256 v = _mm256_mul_ps(d, _mm256_cvtepi32_ps(qi));
            _mm256_storeu_ps(y + 8 * k, v);
            if (lo) {
                const __m256d p0 = _mm256_mul_pd(dd, _mm256_cvtepi32_pd(_mm256_castsi256_si128(qi)));
                const __m256d p1 = _mm256_mul_pd(dd, _mm256_cvtepi32_pd(_mm256_extracti128_si256(qi, 1)));
                const __m128 r0 = _mm256_cvtpd_ps(_mm256_sub_pd(p0, _mm256_cvtps_pd(_mm256_castps256_ps128(v))));
                const __m128 r1 = _mm256_cvtpd_ps(_mm256_sub_pd(p1, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))));
                const __m256 r = _mm256_set_m128(r1, r0);
                const __m256 fin = _mm256_cmp_ps(_mm256_and_ps(v, absm), inf, _CMP_LT_OQ);
                _mm256_storeu_ps(lo + 8 * k, _mm256_and_ps(r, fin));
            }
        }
    }
}

/* =================================================================================================
 * The IQ grid types
 * ============================================================================================== */

/* 8 elements: the unsigned grid bytes of g times s, element j negated when bit j of signs is
 * set (bit j moved to the sign bit by a per-lane shift) */
HF void signed8(float *y, __m128i g, unsigned signs, __m256 s)
{
    const __m256 v = _mm256_mul_ps(s, u8f(g, 0));
    const __m256i sh = _mm256_setr_epi32(31, 30, 29, 28, 27, 26, 25, 24);
    const __m256i m = _mm256_and_si256(_mm256_sllv_epi32(_mm256_set1_epi32((int)signs), sh),
                                       _mm256_set1_epi32((int)0x80000000u));
    _mm256_storeu_ps(y, _mm256_xor_ps(v, _mm256_castsi256_ps(m)));
}
HF __m128i one64(uint64_t a)
{
    return _mm_cvtsi64_si128((long long)a);
}
HF __m128i two32(uint32_t a, uint32_t b)
{
    return _mm_cvtsi64_si128((long long)((uint64_t)a | (uint64_t)b << 32));
}

FN void dt_ggml_dequantize_iq2_xxs_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    for (size_t i = 0; i < nb; i++, x += 66, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x);
        if (!h_ok(hd)) {
            dt_ggml_dequantize_iq2_xxs(x, y, NULL, 1);
            continue;
        }
        const float d = f16s(hd);
        UNROLL
        for (int ib = 0; ib < 8; ib++) {
            const uint8_t *b = x + 2 + 8 * ib;
            const uint32_t w = ld32(b + 4);
            const __m256 db = _mm256_set1_ps(d * (0.5f + (float)(w >> 28)) * 0.25f);
            UNROLL
            for (int l = 0; l < 4; l++)
                signed8(y + 32 * ib + 8 * l, one64(iq2xxs_grid[b[l]]), ksigns_iq2xs[w >> (7 * l) & 127], db);
        }
    }
}

FN void dt_ggml_dequantize_iq2_xs_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    for (size_t i = 0; i < nb; i++, x += 74, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x);
        if (!h_ok(hd)) {
            dt_ggml_dequantize_iq2_xs(x, y, NULL, 1);
            continue;
        }
        const float d = f16s(hd);
        UNROLL
        for (int ib = 0; ib < 8; ib++) {
            const uint8_t s = x[66 + ib];
            UNROLL
            for (int h = 0; h < 2; h++) {
                const __m256 db = _mm256_set1_ps(d * (0.5f + (float)(h ? s >> 4 : s & 15)) * 0.25f);
                UNROLL
                for (int l = 2 * h; l < 2 * h + 2; l++) {
                    const unsigned v = dt_ggml_rd16(x + 2 + 2 * (4 * ib + l));
                    signed8(y + 32 * ib + 8 * l, one64(iq2xs_grid[v & 511]), ksigns_iq2xs[v >> 9], db);
                }
            }
        }
    }
}

FN void dt_ggml_dequantize_iq2_s_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    for (size_t i = 0; i < nb; i++, x += 82, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x);
        if (!h_ok(hd)) {
            dt_ggml_dequantize_iq2_s(x, y, NULL, 1);
            continue;
        }
        const float d = f16s(hd);
        UNROLL
        for (int ib = 0; ib < 8; ib++) {
            const unsigned s = x[74 + ib], qh = x[66 + ib];
            UNROLL
            for (int h = 0; h < 2; h++) {
                const __m256 db = _mm256_set1_ps(d * (0.5f + (float)(h ? s >> 4 : s & 15)) * 0.25f);
                UNROLL
                for (int l = 2 * h; l < 2 * h + 2; l++) {
                    const unsigned idx = x[2 + 4 * ib + l] | (qh >> (2 * l) & 3u) << 8;
                    signed8(y + 32 * ib + 8 * l, one64(iq2s_grid[idx]), x[34 + 4 * ib + l], db);
                }
            }
        }
    }
}

FN void dt_ggml_dequantize_iq3_xxs_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    for (size_t i = 0; i < nb; i++, x += 98, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x);
        if (!h_ok(hd)) {
            dt_ggml_dequantize_iq3_xxs(x, y, NULL, 1);
            continue;
        }
        const float d = f16s(hd);
        UNROLL
        for (int ib = 0; ib < 8; ib++) {
            const uint8_t *qs = x + 2 + 8 * ib;
            const uint32_t w = ld32(x + 66 + 4 * ib);
            const __m256 db = _mm256_set1_ps(d * (0.5f + (float)(w >> 28)) * 0.5f);
            UNROLL
            for (int l = 0; l < 4; l++)
                signed8(y + 32 * ib + 8 * l, two32(iq3xxs_grid[qs[2 * l]], iq3xxs_grid[qs[2 * l + 1]]),
                        ksigns_iq2xs[w >> (7 * l) & 127], db);
        }
    }
}

FN void dt_ggml_dequantize_iq3_s_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    for (size_t i = 0; i < nb; i++, x += 110, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x);
        if (!h_ok(hd)) {
            dt_ggml_dequantize_iq3_s(x, y, NULL, 1);
            continue;
        }
        const float d = f16s(hd);
        UNROLL
        for (int ib = 0; ib < 8; ib++) {
            const uint8_t *qs = x + 2 + 8 * ib;
            const unsigned qh = x[66 + ib], s = (unsigned)x[106 + ib / 2] >> (4 * (ib % 2)) & 15u;
            const __m256 db = _mm256_set1_ps(d * (float)(1 + 2 * (int)s));
            UNROLL
            for (int l = 0; l < 4; l++) {
                const unsigned i0 = qs[2 * l] | (qh >> (2 * l) & 1u) << 8;
                const unsigned i1 = qs[2 * l + 1] | (qh >> (2 * l + 1) & 1u) << 8;
                signed8(y + 32 * ib + 8 * l, two32(iq3s_grid[i0], iq3s_grid[i1]), x[74 + 4 * ib + l], db);
            }
        }
    }
}

/* IQ1S_DELTA, negated when neg is 1 (the sign bit set: -0.125 exactly) */
static inline float signed_delta(unsigned neg)
{
    return dt_ggml_f32_of(dt_ggml_bits_of(IQ1S_DELTA) | (uint32_t)(neg & 1u) << 31);
}

/* 8 elements of IQ1: dl * (grid + delta) */
HF void iq1_8(float *y, uint64_t entry, __m256 delta, __m256 dl)
{
    const __m256 v = _mm256_add_ps(s8f(one64(entry), 0), delta);
    _mm256_storeu_ps(y, _mm256_mul_ps(dl, v));
}

FN void dt_ggml_dequantize_iq1_s_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    for (size_t i = 0; i < nb; i++, x += 50, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x);
        if (!h_ok(hd)) {
            dt_ggml_dequantize_iq1_s(x, y, NULL, 1);
            continue;
        }
        const float d = f16s(hd);
        UNROLL
        for (int ib = 0; ib < 8; ib++) {
            const unsigned h = dt_ggml_rd16(x + 34 + 2 * ib);
            const __m256 dl = _mm256_set1_ps(d * (float)(2 * (int)(h >> 12 & 7) + 1));
            const __m256 delta = _mm256_set1_ps(signed_delta(h >> 15));
            UNROLL
            for (int l = 0; l < 4; l++) {
                const unsigned idx = x[2 + 4 * ib + l] | (h >> (3 * l) & 7u) << 8;
                iq1_8(y + 32 * ib + 8 * l, iq1s_grid[idx], delta, dl);
            }
        }
    }
}

static inline uint16_t iq1m_d_bits(const uint8_t *x)
{
    return (uint16_t)(dt_ggml_rd16(x + 48) >> 12 | (dt_ggml_rd16(x + 50) >> 12) << 4 |
                      (dt_ggml_rd16(x + 52) >> 12) << 8 | (dt_ggml_rd16(x + 54) >> 12) << 12);
}

FN void dt_ggml_dequantize_iq1_m_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    for (size_t i = 0; i < nb; i++, x += 56, y += 256) {
        const uint16_t hd = iq1m_d_bits(x);
        if (!h_ok(hd)) {
            dt_ggml_dequantize_iq1_m(x, y, NULL, 1);
            continue;
        }
        const float d = f16s(hd);
        UNROLL
        for (int ib = 0; ib < 8; ib++) {
            const unsigned w = dt_ggml_rd16(x + 48 + 2 * (ib / 2)) >> (6 * (ib % 2));
            UNROLL
            for (int k = 0; k < 2; k++) {
                const unsigned qh = x[32 + 2 * ib + k];
                const __m256 dl = _mm256_set1_ps(d * (float)(2 * (int)(w >> (3 * k) & 7) + 1));
                UNROLL
                for (int r = 0; r < 2; r++) {
                    const unsigned nib = qh >> (4 * r) & 15u;
                    const unsigned idx = x[4 * ib + 2 * k + r] | (nib & 7u) << 8;
                    iq1_8(y + 32 * ib + 16 * k + 8 * r, iq1s_grid[idx], _mm256_set1_ps(signed_delta(nib >> 3)), dl);
                }
            }
        }
    }
}

/* =================================================================================================
 * The ternary types, Q1_0, Q2_0, NVFP4
 * ============================================================================================== */
/* TQ1_0 trits as in fast_dequant_avx512.c: the high word of ((b * 3^k * 256) mod 2^16) * 3 */
HF void tq1_8(float *y, __m256i b, __m256i p256, __m256 t)
{
    const __m256i c = _mm256_mullo_epi16(b, p256);
    _mm256_storeu_ps(y, _mm256_permutevar8x32_ps(t, _mm256_mulhi_epu16(c, _mm256_set1_epi32(3))));
}

FN void dt_ggml_dequantize_tq1_0_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    static const int pow3[5] = {1, 3, 9, 27, 81};
    const __m256 k3 = _mm256_setr_ps(-1, 0, 1, 0, 0, 0, 0, 0);
    const __m256i pl0 = _mm256_slli_epi32(_mm256_setr_epi32(1, 1, 1, 1, 3, 3, 3, 3), 8);
    const __m256i pl1 = _mm256_slli_epi32(_mm256_setr_epi32(9, 9, 9, 9, 27, 27, 27, 27), 8);
    for (size_t i = 0; i < nb; i++, x += 54, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x + 52);
        if (!h_ok(hd)) {
            dt_ggml_dequantize_tq1_0(x, y, NULL, 1);
            continue;
        }
        const __m256 t = _mm256_mul_ps(k3, f16v(hd));
        __m256i b[6];
        UNROLL
        for (int n = 0; n < 6; n++)
            b[n] = _mm256_cvtepu8_epi32(ld64x(x + 8 * n));
        UNROLL
        for (int k = 0; k < 5; k++) {
            const __m256i p = _mm256_set1_epi32(pow3[k] << 8);
            UNROLL
            for (int n = 0; n < 4; n++)
                tq1_8(y + 32 * k + 8 * n, b[n], p, t);
            tq1_8(y + 160 + 16 * k, b[4], p, t);
            tq1_8(y + 168 + 16 * k, b[5], p, t);
        }
        const __m256i bl = _mm256_cvtepu8_epi32(_mm_set1_epi32((int)ld32(x + 48)));
        tq1_8(y + 240, bl, pl0, t);
        tq1_8(y + 248, bl, pl1, t);
    }
}

FN void dt_ggml_dequantize_tq2_0_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    const __m256 k4 = _mm256_setr_ps(-1, 0, 1, 2, -1, 0, 1, 2);
    for (size_t i = 0; i < nb; i++, x += 66, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x + 64);
        if (!h_ok(hd)) {
            dt_ggml_dequantize_tq2_0(x, y, NULL, 1);
            continue;
        }
        const __m256 t = _mm256_mul_ps(k4, f16v(hd));
        UNROLL
        for (int g = 0; g < 2; g++)
            UNROLL
            for (int n = 0; n < 4; n++) {
                const __m256i v = _mm256_cvtepu8_epi32(ld64x(x + 32 * g + 8 * n));
                UNROLL
                for (int l = 0; l < 4; l++)
                    _mm256_storeu_ps(y + 128 * g + 32 * l + 8 * n,
                                     _mm256_permutevar8x32_ps(t, _mm256_srli_epi32(v, 2 * l)));
            }
    }
}

FN void dt_ggml_dequantize_q1_0_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    const __m256i sh = _mm256_setr_epi32(31, 30, 29, 28, 27, 26, 25, 24);
    for (size_t i = 0; i < nb; i++, x += 18, y += 128) {
        const uint16_t hd = dt_ggml_rd16(x);
        if (!h_ok(hd)) {
            dt_ggml_dequantize_q1_0(x, y, NULL, 1);
            continue;
        }
        const __m256 d = f16v(hd), nd = neg(d);
        UNROLL
        for (int n = 0; n < 16; n++) {
            const __m256i m = _mm256_sllv_epi32(_mm256_set1_epi32(x[2 + n]), sh);
            _mm256_storeu_ps(y + 8 * n, _mm256_blendv_ps(nd, d, _mm256_castsi256_ps(m)));
        }
    }
}

FN void dt_ggml_dequantize_q2_0_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    const __m256 k4 = _mm256_setr_ps(-1, 0, 1, 2, -1, 0, 1, 2);
    const __m256i sh = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
    for (size_t i = 0; i < nb; i++, x += 18, y += 64) {
        const uint16_t hd = dt_ggml_rd16(x);
        if (!h_ok(hd)) {
            dt_ggml_dequantize_q2_0(x, y, NULL, 1);
            continue;
        }
        const __m256 t = _mm256_mul_ps(k4, f16v(hd));
        UNROLL
        for (int n = 0; n < 8; n++) {
            const __m256i v = _mm256_srlv_epi32(_mm256_set1_epi32(dt_ggml_rd16(x + 2 + 2 * n)), sh);
            _mm256_storeu_ps(y + 8 * n, _mm256_permutevar8x32_ps(t, v));
        }
    }
}

/* dequant.c's ue4m3_half of the 4 bytes of s at once, branch-free: (8 + m) 2^(e - 11) is the
 * float32 with exponent field e + 119 and mantissa m << 20; e = 0 gives m 2^-10 (exact), the
 * byte 0x7F gives 0 (0x00 is e = m = 0) */
HF __m128 ue4m3_half4(uint32_t s)
{
    const __m128i b = _mm_cvtepu8_epi32(_mm_cvtsi32_si128((int)s));
    const __m128i e = _mm_and_si128(_mm_srli_epi32(b, 3), _mm_set1_epi32(15));
    const __m128i m = _mm_and_si128(b, _mm_set1_epi32(7));
    const __m128 normal = _mm_castsi128_ps(_mm_or_si128(_mm_slli_epi32(_mm_add_epi32(e, _mm_set1_epi32(119)), 23),
                                                        _mm_slli_epi32(m, 20)));
    const __m128 sub = _mm_mul_ps(_mm_cvtepi32_ps(m), _mm_set1_ps(0x1p-10f));
    const __m128 v = _mm_blendv_ps(normal, sub, _mm_castsi128_ps(_mm_cmpeq_epi32(e, _mm_setzero_si128())));
    return _mm_andnot_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(b, _mm_set1_epi32(0x7F))), v);
}

FN void dt_ggml_dequantize_nvfp4_avx2(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    const __m128i kv = kv_mxfp4(), m = _mm_set1_epi8(15);
    for (size_t i = 0; i < nb; i++, x += 36, y += 64) {
        _Alignas(16) float ds[4];
        _mm_store_ps(ds, ue4m3_half4(ld32(x)));
        UNROLL
        for (int s = 0; s < 4; s++) {
            const __m256 d = _mm256_set1_ps(ds[s]);
            const __m128i b = ld64x(x + 4 + 8 * s);
            const __m128i lo4 = _mm_shuffle_epi8(kv, _mm_and_si128(b, m));
            const __m128i hi4 = _mm_shuffle_epi8(kv, _mm_and_si128(_mm_srli_epi16(b, 4), m));
            _mm256_storeu_ps(y + 16 * s, _mm256_mul_ps(s8f(lo4, 0), d));
            _mm256_storeu_ps(y + 16 * s + 8, _mm256_mul_ps(s8f(hi4, 0), d));
        }
    }
}

#endif
