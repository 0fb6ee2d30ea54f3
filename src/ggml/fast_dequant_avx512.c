/* AVX-512 (F/BW/VL/DQ/VBMI) dequantizers of ggml's block types: the reference's float32 bits
 * (dequant.c), NaN bits included, and its residuals lo for the inexact types.
 *
 * Every block whose scales are finite is decoded here; a block with an Inf or NaN scale goes to
 * the reference (its NaN-exact path) for that one block. With finite scales nothing is NaN and
 * every operation is a plain IEEE binary32 one, so the vector instructions give the reference's
 * bits when they evaluate the same operations on the same operands: the integer levels are
 * exact in float32, an fp16 scale widens exactly (vcvtph2ps, no DAZ), and every product or sum
 * is the reference's one (a * b and b * a are the same IEEE operation for non-NaN operands; no
 * fused multiply-add: this file is built with -ffp-contract=off and uses none).
 *
 * Tables. The types with 16 or 32 levels per (sub-)block compute the block's table of values
 * once (level times scale, plus or minus the min, and the TwoSum residual of that sum) and pick
 * each element's value with vpermps / vpermt2ps by its level: the table entry is the same
 * binary32 operation on the same operands as the reference's per-element one. */
#include "fast_dequant.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "../kernels/x86_attrs.h"

#include <immintrin.h>
#include <string.h>

/* ggml's grids and level tables (static in the .inc: this file's own copy) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-const-variable"
#include "iq_tables.inc"
#pragma GCC diagnostic pop

#define FN DT_TARGET_AVX512
#define HF static DT_INLINE DT_TARGET_AVX512

/* the loops over a block's parts run unrolled: their selections and shift counts fold away
 * (gcc's -O2 keeps 2- and 4-iteration loops as loops, with the selections as branches) */
#define UNROLL _Pragma("GCC unroll 32")

/* lo + off, or NULL when lo is NULL */
#define LO_AT(lo, off) ((lo) ? (lo) + (off) : NULL)

/* ---- fields ---------------------------------------------------------------------------------- */
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
/* an fp16 scale (finite) in all 16 lanes, exactly */
HF __m512 f16v(uint16_t h)
{
    return _mm512_broadcastss_ps(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
}
/* an fp16 scale (finite) as a scalar float, exactly */
HF float f16s(uint16_t h)
{
    return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
}
HF __m128i ld128(const uint8_t *p)
{
    return _mm_loadu_si128((const __m128i *)(const void *)p);
}
HF __m256i ld256(const uint8_t *p)
{
    return _mm256_loadu_si256((const __m256i *)(const void *)p);
}
HF __m512i ld512(const uint8_t *p)
{
    return _mm512_loadu_si512((const void *)p);
}
/* 16 bytes zero-extended to 16 dwords */
HF __m512i zx16(const uint8_t *p)
{
    return _mm512_cvtepu8_epi32(ld128(p));
}
HF __m512i c32(int v)
{
    return _mm512_set1_epi32(v);
}
/* bitwise a ? b : c (vpternlogd 0xCA) */
HF __m512i sel(__m512i a, __m512i b, __m512i c)
{
    return _mm512_ternarylogic_epi32(a, b, c, 0xCA);
}
/* the rounding error of s = fl(a + b) (TwoSum, as dequant.c's two_sum_err) */
HF __m512 two_sum_err(__m512 a, __m512 b, __m512 s)
{
    const __m512 bb = _mm512_sub_ps(s, a), aa = _mm512_sub_ps(s, bb);
    return _mm512_add_ps(_mm512_sub_ps(a, aa), _mm512_sub_ps(b, bb));
}
HF __m512 neg(__m512 v)
{
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(v), c32((int)0x80000000u)));
}
HF __m512 iota(int from)
{
    return _mm512_add_ps(_mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                         _mm512_set1_ps((float)from));
}
/* the 4-bit table of a (a * k - b, sub) or (a * k + b) for k = 0..15 and its residuals: the
 * values of dequant.c's run_affine for the levels 0..15 (from: the first level) */
HF __m512 affine_tab(__m512 a, __m512 b, int from, bool sub, __m512 *err)
{
    const __m512 p = _mm512_mul_ps(a, iota(from));
    const __m512 bs = sub ? neg(b) : b;
    const __m512 s = sub ? _mm512_sub_ps(p, b) : _mm512_add_ps(p, b);
    if (err)
        *err = two_sum_err(p, bs, s);
    return s;
}
/* the 16 dwords idx whose low 4 bits are v's and bit 4 is bit 4 of h */
HF __m512i idx5(__m512i v, __m512i h)
{
    return sel(c32(16), h, v);
}

/* =================================================================================================
 * The 32-element types
 * ============================================================================================== */

/* Q8_0 / Q8_1: y = q * d (int8 q at off) */
HF void q8_blocks(const uint8_t *x, float *y, size_t nb, size_t bytes, int off,
                  void (*ref)(const uint8_t *, float *, float *, size_t))
{
    for (size_t i = 0; i < nb; i++, x += bytes, y += 32) {
        const uint16_t h = dt_ggml_rd16(x);
        if (!h_ok(h)) {
            ref(x, y, NULL, 1);
            continue;
        }
        const __m512 d = f16v(h);
        UNROLL
        for (int k = 0; k < 2; k++) {
            const __m512 q = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(ld128(x + off + 16 * k)));
            _mm512_storeu_ps(y + 16 * k, _mm512_mul_ps(q, d));
        }
    }
}
FN void dt_ggml_dequantize_q8_0_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    q8_blocks(x, y, nb, 34, 2, dt_ggml_dequantize_q8_0);
}
FN void dt_ggml_dequantize_q8_1_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    q8_blocks(x, y, nb, 36, 4, dt_ggml_dequantize_q8_1);
}

/* the 32 elements of 16 split-half nibble bytes at p, their values from table t */
HF void nib32(const uint8_t *p, __m512 t, float *y)
{
    const __m512i v = zx16(p);
    _mm512_storeu_ps(y, _mm512_permutexvar_ps(v, t));
    _mm512_storeu_ps(y + 16, _mm512_permutexvar_ps(_mm512_srli_epi32(v, 4), t));
}

/* Q4_0: y = (q - 8) * d */
FN void dt_ggml_dequantize_q4_0_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    for (size_t i = 0; i < nb; i++, x += 18, y += 32) {
        const uint16_t h = dt_ggml_rd16(x);
        if (!h_ok(h)) {
            dt_ggml_dequantize_q4_0(x, y, NULL, 1);
            continue;
        }
        nib32(x + 2, _mm512_mul_ps(iota(-8), f16v(h)), y);
    }
}

/* IQ4_NL: y = d * kvalues_iq4nl[code] */
FN void dt_ggml_dequantize_iq4_nl_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    const __m512 kv = _mm512_loadu_ps(kvalues_iq4nl_f32);
    for (size_t i = 0; i < nb; i++, x += 18, y += 32) {
        const uint16_t h = dt_ggml_rd16(x);
        if (!h_ok(h)) {
            dt_ggml_dequantize_iq4_nl(x, y, NULL, 1);
            continue;
        }
        nib32(x + 2, _mm512_mul_ps(f16v(h), kv), y);
    }
}

/* MXFP4: y = kvalue * 2^(e - 128) (never NaN: no reference path) */
FN void dt_ggml_dequantize_mxfp4_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    const __m512 kv = _mm512_loadu_ps(kvalues_mxfp4_f32);
    for (size_t i = 0; i < nb; i++, x += 17, y += 32) {
        const uint32_t e = x[0];
        const uint32_t bits = e < 2 ? 0x00200000u << e : (e - 1) << 23;
        nib32(x + 1, _mm512_mul_ps(kv, _mm512_castsi512_ps(c32((int)bits))), y);
    }
}

/* Q4_1: y = q * d + m, lo its residual */
FN void dt_ggml_dequantize_q4_1_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
{
    for (size_t i = 0; i < nb; i++, x += 20, y += 32, lo = LO_AT(lo, 32)) {
        const uint16_t hd = dt_ggml_rd16(x), hm = dt_ggml_rd16(x + 2);
        if (!h_ok(hd) || !h_ok(hm)) {
            dt_ggml_dequantize_q4_1(x, y, lo, 1);
            continue;
        }
        __m512 e;
        const __m512 t = affine_tab(f16v(hd), f16v(hm), 0, false, lo ? &e : NULL);
        nib32(x + 4, t, y);
        if (lo)
            nib32(x + 4, e, lo);
    }
}

/* the 5-bit levels of Q5_0 / Q5_1: 16 nibble bytes at p, qh's bits as the fifth */
HF void idx5_32(const uint8_t *p, uint32_t qh, __m512i *i0, __m512i *i1)
{
    const __m512i v = zx16(p);
    const __m512i b16 = c32(16);
    *i0 = sel(b16, _mm512_maskz_mov_epi32((__mmask16)qh, b16), v);
    *i1 = _mm512_mask_or_epi32(_mm512_srli_epi32(v, 4), (__mmask16)(qh >> 16),
                               _mm512_srli_epi32(v, 4), b16);
}

/* Q5_0: y = (q - 16) * d */
FN void dt_ggml_dequantize_q5_0_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    for (size_t i = 0; i < nb; i++, x += 22, y += 32) {
        const uint16_t h = dt_ggml_rd16(x);
        if (!h_ok(h)) {
            dt_ggml_dequantize_q5_0(x, y, NULL, 1);
            continue;
        }
        const __m512 d = f16v(h);
        const __m512 t0 = _mm512_mul_ps(iota(-16), d), t1 = _mm512_mul_ps(iota(0), d);
        __m512i i0, i1;
        idx5_32(x + 6, ld32(x + 2), &i0, &i1);
        _mm512_storeu_ps(y, _mm512_permutex2var_ps(t0, i0, t1));
        _mm512_storeu_ps(y + 16, _mm512_permutex2var_ps(t0, i1, t1));
    }
}

/* Q5_1: y = q * d + m, lo its residual */
FN void dt_ggml_dequantize_q5_1_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
{
    for (size_t i = 0; i < nb; i++, x += 24, y += 32, lo = LO_AT(lo, 32)) {
        const uint16_t hd = dt_ggml_rd16(x), hm = dt_ggml_rd16(x + 2);
        if (!h_ok(hd) || !h_ok(hm)) {
            dt_ggml_dequantize_q5_1(x, y, lo, 1);
            continue;
        }
        const __m512 d = f16v(hd), m = f16v(hm);
        __m512 e0, e1;
        const __m512 t0 = affine_tab(d, m, 0, false, lo ? &e0 : NULL);
        const __m512 t1 = affine_tab(d, m, 16, false, lo ? &e1 : NULL);
        __m512i i0, i1;
        idx5_32(x + 8, ld32(x + 4), &i0, &i1);
        _mm512_storeu_ps(y, _mm512_permutex2var_ps(t0, i0, t1));
        _mm512_storeu_ps(y + 16, _mm512_permutex2var_ps(t0, i1, t1));
        if (lo) {
            _mm512_storeu_ps(lo, _mm512_permutex2var_ps(e0, i0, e1));
            _mm512_storeu_ps(lo + 16, _mm512_permutex2var_ps(e0, i1, e1));
        }
    }
}

/* =================================================================================================
 * K-quants
 * ============================================================================================== */

/* the 8 sub-scales (bytes 0..7) and 8 sub-mins (bytes 8..15) of Q4_K / Q5_K from their 12
 * bytes (dequant.c's scale_min_k4, four words at a time) */
HF __m128i scale_min_k4x(const uint8_t *b)
{
    const uint32_t u0 = ld32(b), u1 = ld32(b + 4), u2 = ld32(b + 8);
    const uint32_t sc03 = u0 & 0x3F3F3F3Fu, m03 = u1 & 0x3F3F3F3Fu;
    const uint32_t sc47 = (u2 & 0x0F0F0F0Fu) | ((u0 >> 6) & 0x03030303u) << 4;
    const uint32_t m47 = ((u2 >> 4) & 0x0F0F0F0Fu) | ((u1 >> 6) & 0x03030303u) << 4;
    return _mm_setr_epi32((int)sc03, (int)sc47, (int)m03, (int)m47);
}
/* dm[0..7] = d * sc_j, dm[8..15] = dmin * m_j */
HF void k4_scales(const uint8_t *x, uint16_t hd, uint16_t hm, float *dm)
{
    const __m512 f = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(scale_min_k4x(x + 4)));
    const __m512 dd = _mm512_mask_blend_ps(0xFF00, f16v(hd), f16v(hm));
    _mm512_store_ps(dm, _mm512_mul_ps(dd, f));
}

/* Q4_K: y = (d * sc) * q - dmin * m, lo its residual */
FN void dt_ggml_dequantize_q4_K_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
{
    for (size_t i = 0; i < nb; i++, x += 144, y += 256, lo = LO_AT(lo, 256)) {
        const uint16_t hd = dt_ggml_rd16(x), hm = dt_ggml_rd16(x + 2);
        if (!h_ok(hd) || !h_ok(hm)) {
            dt_ggml_dequantize_q4_K(x, y, lo, 1);
            continue;
        }
        _Alignas(64) float dm[16];
        k4_scales(x, hd, hm, dm);
        UNROLL
        for (int c = 0; c < 4; c++) {
            const __m512i v0 = zx16(x + 16 + 32 * c), v1 = zx16(x + 32 + 32 * c);
            UNROLL
            for (int h = 0; h < 2; h++) {
                const int j = 2 * c + h, at = 64 * c + 32 * h;
                __m512 e;
                const __m512 t = affine_tab(_mm512_set1_ps(dm[j]), _mm512_set1_ps(dm[8 + j]), 0,
                                            true, lo ? &e : NULL);
                const __m512i i0 = h ? _mm512_srli_epi32(v0, 4) : v0;
                const __m512i i1 = h ? _mm512_srli_epi32(v1, 4) : v1;
                _mm512_storeu_ps(y + at, _mm512_permutexvar_ps(i0, t));
                _mm512_storeu_ps(y + at + 16, _mm512_permutexvar_ps(i1, t));
                if (lo) {
                    _mm512_storeu_ps(lo + at, _mm512_permutexvar_ps(i0, e));
                    _mm512_storeu_ps(lo + at + 16, _mm512_permutexvar_ps(i1, e));
                }
            }
        }
    }
}

/* Q5_K: y = (d * sc) * q - dmin * m (q with its fifth bit from qh), lo its residual */
FN void dt_ggml_dequantize_q5_K_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
{
    for (size_t i = 0; i < nb; i++, x += 176, y += 256, lo = LO_AT(lo, 256)) {
        const uint16_t hd = dt_ggml_rd16(x), hm = dt_ggml_rd16(x + 2);
        if (!h_ok(hd) || !h_ok(hm)) {
            dt_ggml_dequantize_q5_K(x, y, lo, 1);
            continue;
        }
        _Alignas(64) float dm[16];
        k4_scales(x, hd, hm, dm);
        /* qh: bit j of byte l is bit 4 of element 32j + l: moved to bit 4 for sub-block j */
        const __m512i h0 = zx16(x + 16), h1 = zx16(x + 32);
        UNROLL
        for (int c = 0; c < 4; c++) {
            const __m512i v0 = zx16(x + 48 + 32 * c), v1 = zx16(x + 64 + 32 * c);
            UNROLL
            for (int h = 0; h < 2; h++) {
                const int j = 2 * c + h, at = 64 * c + 32 * h;
                const __m512 a = _mm512_set1_ps(dm[j]), b = _mm512_set1_ps(dm[8 + j]);
                __m512 e0, e1;
                const __m512 t0 = affine_tab(a, b, 0, true, lo ? &e0 : NULL);
                const __m512 t1 = affine_tab(a, b, 16, true, lo ? &e1 : NULL);
                const __m512i sh = c32(j);
                const __m512i hb0 = _mm512_sllv_epi32(_mm512_srlv_epi32(h0, sh), c32(4));
                const __m512i hb1 = _mm512_sllv_epi32(_mm512_srlv_epi32(h1, sh), c32(4));
                const __m512i i0 = idx5(h ? _mm512_srli_epi32(v0, 4) : v0, hb0);
                const __m512i i1 = idx5(h ? _mm512_srli_epi32(v1, 4) : v1, hb1);
                _mm512_storeu_ps(y + at, _mm512_permutex2var_ps(t0, i0, t1));
                _mm512_storeu_ps(y + at + 16, _mm512_permutex2var_ps(t0, i1, t1));
                if (lo) {
                    _mm512_storeu_ps(lo + at, _mm512_permutex2var_ps(e0, i0, e1));
                    _mm512_storeu_ps(lo + at + 16, _mm512_permutex2var_ps(e0, i1, e1));
                }
            }
        }
    }
}

/* dword lane i of the result = byte 16n + i of v, sign-extended (vpermb to the top byte, then
 * an arithmetic shift) */
HF __m512i sx_quarter(__m512i v, int n)
{
    const __m512i top = _mm512_slli_epi32(_mm512_add_epi32(c32(16 * n), _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)), 24);
    return _mm512_srai_epi32(_mm512_permutexvar_epi8(top, v), 24);
}

/* Q6_K: y = (d * sc) * (q - 32), sc int8 per 16 elements */
FN void dt_ggml_dequantize_q6_K_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    const __m512i m0F = _mm512_set1_epi8(0x0F), m3F = _mm512_set1_epi8(0x3F);
    const __m512i b32 = _mm512_set1_epi8(32);
    for (size_t i = 0; i < nb; i++, x += 210, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x + 208);
        if (!h_ok(hd)) {
            dt_ggml_dequantize_q6_K(x, y, NULL, 1);
            continue;
        }
        _Alignas(64) float dl[16];
        _mm512_store_ps(dl, _mm512_mul_ps(f16v(hd), _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(ld128(x + 192)))));
        UNROLL
        for (int g = 0; g < 2; g++) {
            const __m512i L = ld512(x + 64 * g);
            const __m512i H = _mm512_broadcast_i64x4(ld256(x + 128 + 32 * g));
            /* bytes i of qa: element 128g + i (low nibbles; qh bits 0-1, then 2-3) */
            const __m512i ha = _mm512_mask_blend_epi64(0xF0, _mm512_slli_epi16(H, 4), _mm512_slli_epi16(H, 2));
            const __m512i qa = _mm512_sub_epi8(_mm512_and_si512(sel(m0F, L, ha), m3F), b32);
            /* bytes i of qb: element 128g + 64 + i (high nibbles; qh bits 4-5, then 6-7) */
            const __m512i hb = _mm512_mask_blend_epi64(0xF0, H, _mm512_srli_epi16(H, 2));
            const __m512i qb = _mm512_sub_epi8(_mm512_and_si512(sel(m0F, _mm512_srli_epi16(L, 4), hb), m3F), b32);
            UNROLL
            for (int n = 0; n < 4; n++) {
                const int s0 = 8 * g + n, s1 = 8 * g + 4 + n;
                _mm512_storeu_ps(y + 16 * s0, _mm512_mul_ps(_mm512_cvtepi32_ps(sx_quarter(qa, n)), _mm512_set1_ps(dl[s0])));
                _mm512_storeu_ps(y + 16 * s1, _mm512_mul_ps(_mm512_cvtepi32_ps(sx_quarter(qb, n)), _mm512_set1_ps(dl[s1])));
            }
        }
    }
}

/* Q2_K: y = (d * sc) * q - dmin * m, 2-bit q, sc / m per 16 elements; lo its residual.
 * Tables: tz[m] holds groups 4m..4m+3, lane 4j + k = the value of level k in group 4m + j. */
FN void dt_ggml_dequantize_q2_K_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
{
    const __m512 kp = _mm512_setr_ps(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3);
    const __m512i gsel = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    for (size_t i = 0; i < nb; i++, x += 84, y += 256, lo = LO_AT(lo, 256)) {
        const uint16_t hd = dt_ggml_rd16(x + 80), hm = dt_ggml_rd16(x + 82);
        if (!h_ok(hd) || !h_ok(hm)) {
            dt_ggml_dequantize_q2_K(x, y, lo, 1);
            continue;
        }
        const __m512i s = zx16(x);
        const __m512 dl = _mm512_mul_ps(f16v(hd), _mm512_cvtepi32_ps(_mm512_and_si512(s, c32(15))));
        const __m512 ml = _mm512_mul_ps(f16v(hm), _mm512_cvtepi32_ps(_mm512_srli_epi32(s, 4)));
        __m512 tz[4], te[4];
        UNROLL
        for (int m = 0; m < 4; m++) {
            const __m512i gi = _mm512_add_epi32(gsel, c32(4 * m));
            const __m512 a = _mm512_permutexvar_ps(gi, dl), b = _mm512_permutexvar_ps(gi, ml);
            const __m512 p = _mm512_mul_ps(a, kp);
            tz[m] = _mm512_sub_ps(p, b);
            if (lo)
                te[m] = two_sum_err(p, neg(b), tz[m]);
        }
        UNROLL
        for (int g = 0; g < 2; g++) {
            const __m512i q0 = zx16(x + 16 + 32 * g), q1 = zx16(x + 32 + 32 * g);
            UNROLL
            for (int k = 0; k < 4; k++)
                UNROLL
                for (int hh = 0; hh < 2; hh++) {
                    const int grp = 8 * g + 2 * k + hh, at = 16 * grp;
                    const __m512i lev = _mm512_srlv_epi32(hh ? q1 : q0, c32(2 * k));
                    const __m512i ix = sel(c32(3), lev, c32(4 * (grp % 4)));
                    _mm512_storeu_ps(y + at, _mm512_permutexvar_ps(ix, tz[grp / 4]));
                    if (lo)
                        _mm512_storeu_ps(lo + at, _mm512_permutexvar_ps(ix, te[grp / 4]));
                }
        }
    }
}

/* the 16 six-bit sub-scales of Q3_K (ggml's aux unpacking; dequant.c's lo4 | hi2 << 4) */
HF __m128i q3k_scales(const uint8_t *sc)
{
    const uint32_t a0 = ld32(sc), a1 = ld32(sc + 4), t = ld32(sc + 8);
    const uint32_t k2 = 0x0F0F0F0Fu, k1 = 0x03030303u;
    return _mm_setr_epi32((int)((a0 & k2) | ((t >> 0) & k1) << 4),
                          (int)((a1 & k2) | ((t >> 2) & k1) << 4),
                          (int)(((a0 >> 4) & k2) | ((t >> 4) & k1) << 4),
                          (int)(((a1 >> 4) & k2) | ((t >> 6) & k1) << 4));
}

/* Q3_K: y = (d * (s - 32)) * q, q = 2-bit level - (hmask bit ? 0 : 4). Table per group of 16:
 * lane i = the value of level (i & 7) - 4 (bit 3 of the index is ignored by the period) */
FN void dt_ggml_dequantize_q3_K_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    const __m512 kq = _mm512_setr_ps(-4, -3, -2, -1, 0, 1, 2, 3, -4, -3, -2, -1, 0, 1, 2, 3);
    for (size_t i = 0; i < nb; i++, x += 110, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x + 108);
        if (!h_ok(hd)) {
            dt_ggml_dequantize_q3_K(x, y, NULL, 1);
            continue;
        }
        _Alignas(64) float dl[16];
        const __m512i s = _mm512_sub_epi32(_mm512_cvtepu8_epi32(q3k_scales(x + 96)), c32(32));
        _mm512_store_ps(dl, _mm512_mul_ps(f16v(hd), _mm512_cvtepi32_ps(s)));
        const __m512i hm0 = zx16(x), hm1 = zx16(x + 16);
        UNROLL
        for (int g = 0; g < 2; g++) {
            const __m512i q0 = zx16(x + 32 + 32 * g), q1 = zx16(x + 48 + 32 * g);
            UNROLL
            for (int k = 0; k < 4; k++) {
                /* hmask bit 4g + k of byte l, to bit 2 */
                const int hbit = 4 * g + k;
                UNROLL
                for (int hh = 0; hh < 2; hh++) {
                    const int grp = 8 * g + 2 * k + hh;
                    const __m512i hm = hh ? hm1 : hm0;
                    const __m512i hs = _mm512_sllv_epi32(_mm512_srlv_epi32(hm, c32(hbit)), c32(2));
                    const __m512i lev = _mm512_srlv_epi32(hh ? q1 : q0, c32(2 * k));
                    const __m512i ix = sel(c32(3), lev, hs);
                    const __m512 t = _mm512_mul_ps(kq, _mm512_set1_ps(dl[grp]));
                    _mm512_storeu_ps(y + 16 * grp, _mm512_permutexvar_ps(ix, t));
                }
            }
        }
    }
}

/* Q8_K: y = d * q (float32 d), lo = the exact product - y (binary64), 0 where y is infinite */
FN void dt_ggml_dequantize_q8_K_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
{
    for (size_t i = 0; i < nb; i++, x += 292, y += 256, lo = LO_AT(lo, 256)) {
        const uint32_t db = ld32(x);
        if ((db & 0x7F800000u) == 0x7F800000u) {
            dt_ggml_dequantize_q8_K(x, y, lo, 1);
            continue;
        }
        const __m512 d = _mm512_castsi512_ps(c32((int)db));
        const __m512d dd = _mm512_cvtps_pd(_mm256_castsi256_ps(_mm256_set1_epi32((int)db)));
        UNROLL
        for (int k = 0; k < 16; k++) {
            const __m512i qi = _mm512_cvtepi8_epi32(ld128(x + 4 + 16 * k));
            const __m512 v = _mm512_mul_ps(d, _mm512_cvtepi32_ps(qi));
            _mm512_storeu_ps(y + 16 * k, v);
            if (lo) {
                const __m512d p0 = _mm512_mul_pd(dd, _mm512_cvtepi32_pd(_mm512_castsi512_si256(qi)));
                const __m512d p1 = _mm512_mul_pd(dd, _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(qi, 1)));
                const __m256 r0 = _mm512_cvtpd_ps(_mm512_sub_pd(p0, _mm512_cvtps_pd(_mm512_castps512_ps256(v))));
                const __m256 r1 = _mm512_cvtpd_ps(_mm512_sub_pd(p1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)))));
                const __m512 r = _mm512_insertf32x8(_mm512_castps256_ps512(r0), r1, 1);
                const __mmask16 inf = _mm512_fpclass_ps_mask(v, 0x18);
                _mm512_storeu_ps(lo + 16 * k, _mm512_maskz_mov_ps((__mmask16)~inf, r));
            }
        }
    }
}

/* IQ4_XS: y = (d * (ls - 32)) * kvalues_iq4nl[code] */
FN void dt_ggml_dequantize_iq4_xs_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    const __m512 kv = _mm512_loadu_ps(kvalues_iq4nl_f32);
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
            const float dl = d * (float)((int)ls - 32);
            nib32(x + 8 + 16 * ib, _mm512_mul_ps(_mm512_set1_ps(dl), kv), y + 32 * ib);
        }
    }
}

/* =================================================================================================
 * The IQ grid types: per 8 elements a grid entry (8 bytes; IQ3: two entries of 4) and 8 sign
 * bits (or a delta, IQ1). The entries are loaded one by one; the sign flips are a masked xor
 * of the sign bit (the reference's flip_if).
 * ============================================================================================== */

/* 16 elements: the 16 unsigned grid bytes of g times s, element j negated when bit j of signs
 * is set */
HF void signed16(float *y, __m128i g, unsigned signs, __m512 s)
{
    const __m512 v = _mm512_mul_ps(s, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(g)));
    const __m512i r = _mm512_mask_xor_epi32(_mm512_castps_si512(v), (__mmask16)signs,
                                            _mm512_castps_si512(v), c32((int)0x80000000u));
    _mm512_storeu_ps(y, _mm512_castsi512_ps(r));
}
HF __m128i two64(uint64_t a, uint64_t b)
{
    return _mm_set_epi64x((long long)b, (long long)a);
}
HF __m128i four32(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    return _mm_setr_epi32((int)a, (int)b, (int)c, (int)d);
}

FN void dt_ggml_dequantize_iq2_xxs_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
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
            const __m512 db = _mm512_set1_ps(d * (0.5f + (float)(w >> 28)) * 0.25f);
            UNROLL
            for (int h = 0; h < 2; h++) {
                const unsigned s = ksigns_iq2xs[w >> (14 * h) & 127] |
                                   (unsigned)ksigns_iq2xs[w >> (14 * h + 7) & 127] << 8;
                signed16(y + 32 * ib + 16 * h,
                         two64(iq2xxs_grid[b[2 * h]], iq2xxs_grid[b[2 * h + 1]]), s, db);
            }
        }
    }
}

FN void dt_ggml_dequantize_iq2_xs_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
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
                const float db = d * (0.5f + (float)(h ? s >> 4 : s & 15)) * 0.25f;
                const unsigned v0 = dt_ggml_rd16(x + 2 + 2 * (4 * ib + 2 * h));
                const unsigned v1 = dt_ggml_rd16(x + 4 + 2 * (4 * ib + 2 * h));
                const unsigned sg = ksigns_iq2xs[v0 >> 9] | (unsigned)ksigns_iq2xs[v1 >> 9] << 8;
                signed16(y + 32 * ib + 16 * h, two64(iq2xs_grid[v0 & 511], iq2xs_grid[v1 & 511]),
                         sg, _mm512_set1_ps(db));
            }
        }
    }
}

FN void dt_ggml_dequantize_iq2_s_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
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
                const float db = d * (0.5f + (float)(h ? s >> 4 : s & 15)) * 0.25f;
                const int l = 2 * h;
                const unsigned i0 = x[2 + 4 * ib + l] | (qh >> (2 * l) & 3u) << 8;
                const unsigned i1 = x[3 + 4 * ib + l] | (qh >> (2 * l + 2) & 3u) << 8;
                signed16(y + 32 * ib + 16 * h, two64(iq2s_grid[i0], iq2s_grid[i1]),
                         dt_ggml_rd16(x + 34 + 4 * ib + l), _mm512_set1_ps(db));
            }
        }
    }
}

FN void dt_ggml_dequantize_iq3_xxs_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
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
            const __m512 db = _mm512_set1_ps(d * (0.5f + (float)(w >> 28)) * 0.5f);
            UNROLL
            for (int h = 0; h < 2; h++) {
                const uint8_t *q = qs + 4 * h;
                const unsigned s = ksigns_iq2xs[w >> (14 * h) & 127] |
                                   (unsigned)ksigns_iq2xs[w >> (14 * h + 7) & 127] << 8;
                signed16(y + 32 * ib + 16 * h,
                         four32(iq3xxs_grid[q[0]], iq3xxs_grid[q[1]], iq3xxs_grid[q[2]],
                                iq3xxs_grid[q[3]]),
                         s, db);
            }
        }
    }
}

FN void dt_ggml_dequantize_iq3_s_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
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
            const __m512 db = _mm512_set1_ps(d * (float)(1 + 2 * (int)s));
            UNROLL
            for (int h = 0; h < 2; h++) {
                const int k = 4 * h; /* the first of the four 4-element runs */
                signed16(y + 32 * ib + 16 * h,
                         four32(iq3s_grid[qs[k] | (qh >> k & 1u) << 8],
                                iq3s_grid[qs[k + 1] | (qh >> (k + 1) & 1u) << 8],
                                iq3s_grid[qs[k + 2] | (qh >> (k + 2) & 1u) << 8],
                                iq3s_grid[qs[k + 3] | (qh >> (k + 3) & 1u) << 8]),
                         dt_ggml_rd16(x + 74 + 4 * ib + 2 * h), db);
            }
        }
    }
}

/* IQ1S_DELTA, negated when neg is 1 (the sign bit set: -0.125 exactly) */
static inline float signed_delta(unsigned neg)
{
    return dt_ggml_f32_of(dt_ggml_bits_of(IQ1S_DELTA) | (uint32_t)(neg & 1u) << 31);
}

/* 16 elements of IQ1: dl * (grid + delta), the grid's int8 in g, delta per lane */
HF void iq1_16(float *y, __m128i g, __m512 delta, __m512 dl)
{
    const __m512 v = _mm512_add_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(g)), delta);
    _mm512_storeu_ps(y, _mm512_mul_ps(dl, v));
}

FN void dt_ggml_dequantize_iq1_s_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
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
            const __m512 dl = _mm512_set1_ps(d * (float)(2 * (int)(h >> 12 & 7) + 1));
            const __m512 delta = _mm512_set1_ps(signed_delta(h >> 15));
            UNROLL
            for (int k = 0; k < 2; k++) {
                const int l = 2 * k;
                const unsigned i0 = x[2 + 4 * ib + l] | (h >> (3 * l) & 7u) << 8;
                const unsigned i1 = x[3 + 4 * ib + l] | (h >> (3 * l + 3) & 7u) << 8;
                iq1_16(y + 32 * ib + 16 * k, two64(iq1s_grid[i0], iq1s_grid[i1]), delta, dl);
            }
        }
    }
}

static inline uint16_t iq1m_d_bits(const uint8_t *x)
{
    return (uint16_t)(dt_ggml_rd16(x + 48) >> 12 | (dt_ggml_rd16(x + 50) >> 12) << 4 |
                      (dt_ggml_rd16(x + 52) >> 12) << 8 | (dt_ggml_rd16(x + 54) >> 12) << 12);
}

FN void dt_ggml_dequantize_iq1_m_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    const __m512 dp = _mm512_set1_ps(IQ1S_DELTA), dn = _mm512_set1_ps(-IQ1S_DELTA);
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
            for (int k = 0; k < 2; k++) { /* runs 2k, 2k + 1: the nibbles of byte 32 + 2ib + k */
                const unsigned qh = x[32 + 2 * ib + k];
                const __m512 dl = _mm512_set1_ps(d * (float)(2 * (int)(w >> (3 * k) & 7) + 1));
                const unsigned i0 = x[4 * ib + 2 * k] | (qh & 7u) << 8;
                const unsigned i1 = x[4 * ib + 2 * k + 1] | (qh >> 4 & 7u) << 8;
                const __mmask16 neg8 = (__mmask16)(((qh & 8u) ? 0x00FFu : 0u) | ((qh & 0x80u) ? 0xFF00u : 0u));
                iq1_16(y + 32 * ib + 16 * k, two64(iq1s_grid[i0], iq1s_grid[i1]),
                       _mm512_mask_blend_ps(neg8, dp, dn), dl);
            }
        }
    }
}

/* =================================================================================================
 * The ternary types, Q1_0, Q2_0, NVFP4
 * ============================================================================================== */

/* TQ1_0: trit k of byte b = ((b * 3^k) mod 256) * 3 >> 8, computed as the high half of
 * ((b * 3^k * 256) mod 2^16) * 3 in the low words of the dwords (the high words stay 0); y =
 * (t - 1) * d by a table of the three values */
HF void tq1_16(float *y, __m512i b, __m512i p256, __m512 t)
{
    const __m512i c = _mm512_mullo_epi16(b, p256);
    _mm512_storeu_ps(y, _mm512_permutexvar_ps(_mm512_mulhi_epu16(c, c32(3)), t));
}

FN void dt_ggml_dequantize_tq1_0_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    static const int pow3[5] = {1, 3, 9, 27, 81};
    const __m512i plast = _mm512_slli_epi32(
        _mm512_setr_epi32(1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27), 8);
    for (size_t i = 0; i < nb; i++, x += 54, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x + 52);
        if (!h_ok(hd)) {
            dt_ggml_dequantize_tq1_0(x, y, NULL, 1);
            continue;
        }
        const __m512 t = _mm512_mul_ps(iota(-1), f16v(hd));
        const __m512i b0 = zx16(x), b1 = zx16(x + 16), b2 = zx16(x + 32);
        UNROLL
        for (int k = 0; k < 5; k++) {
            const __m512i p = c32(pow3[k] << 8);
            tq1_16(y + 32 * k, b0, p, t);
            tq1_16(y + 32 * k + 16, b1, p, t);
            tq1_16(y + 160 + 16 * k, b2, p, t);
        }
        tq1_16(y + 240, _mm512_cvtepu8_epi32(_mm_set1_epi32((int)ld32(x + 48))), plast, t);
    }
}

/* TQ2_0: y = (t - 1) * d, t = bits 2l..2l+1 of byte 32g + m for element 128g + 32l + m */
FN void dt_ggml_dequantize_tq2_0_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    const __m512 k4 = _mm512_setr_ps(-1, 0, 1, 2, -1, 0, 1, 2, -1, 0, 1, 2, -1, 0, 1, 2);
    for (size_t i = 0; i < nb; i++, x += 66, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x + 64);
        if (!h_ok(hd)) {
            dt_ggml_dequantize_tq2_0(x, y, NULL, 1);
            continue;
        }
        const __m512 t = _mm512_mul_ps(k4, f16v(hd));
        UNROLL
        for (int g = 0; g < 2; g++)
            UNROLL
            for (int hh = 0; hh < 2; hh++) {
                const __m512i v = zx16(x + 32 * g + 16 * hh);
                UNROLL
                for (int l = 0; l < 4; l++)
                    _mm512_storeu_ps(y + 128 * g + 32 * l + 16 * hh,
                                     _mm512_permutexvar_ps(_mm512_srlv_epi32(v, c32(2 * l)), t));
            }
    }
}

/* Q1_0: y = bit ? d : -d */
FN void dt_ggml_dequantize_q1_0_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    for (size_t i = 0; i < nb; i++, x += 18, y += 128) {
        const uint16_t hd = dt_ggml_rd16(x);
        if (!h_ok(hd)) {
            dt_ggml_dequantize_q1_0(x, y, NULL, 1);
            continue;
        }
        const __m512 d = f16v(hd), nd = neg(d);
        UNROLL
        for (int n = 0; n < 8; n++)
            _mm512_storeu_ps(y + 16 * n, _mm512_mask_blend_ps((__mmask16)dt_ggml_rd16(x + 2 + 2 * n), nd, d));
    }
}

/* Q2_0: y = (q - 1) * d, element j in bits 2 (j % 4) of byte 2 + j / 4 */
FN void dt_ggml_dequantize_q2_0_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    const __m512 k4 = _mm512_setr_ps(-1, 0, 1, 2, -1, 0, 1, 2, -1, 0, 1, 2, -1, 0, 1, 2);
    const __m512i sh = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    for (size_t i = 0; i < nb; i++, x += 18, y += 64) {
        const uint16_t hd = dt_ggml_rd16(x);
        if (!h_ok(hd)) {
            dt_ggml_dequantize_q2_0(x, y, NULL, 1);
            continue;
        }
        const __m512 t = _mm512_mul_ps(k4, f16v(hd));
        UNROLL
        for (int n = 0; n < 4; n++) {
            const __m512i v = _mm512_srlv_epi32(c32((int)ld32(x + 2 + 4 * n)), sh);
            _mm512_storeu_ps(y + 16 * n, _mm512_permutexvar_ps(v, t));
        }
    }
}

/* dequant.c's ue4m3_half (exact) */
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

/* NVFP4: y = kvalue * ue4m3_half(scale), 4 sub-blocks of 16 (never NaN: no reference path) */
FN void dt_ggml_dequantize_nvfp4_avx512(const uint8_t *x, float *y, float *lo, size_t nb)
{
    (void)lo;
    const __m512 kv = _mm512_loadu_ps(kvalues_mxfp4_f32);
    const __m512i sh = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4, 4, 4, 4, 4);
    for (size_t i = 0; i < nb; i++, x += 36, y += 64) {
        _Alignas(16) float d[4];
        _mm_store_ps(d, ue4m3_half4(ld32(x)));
        UNROLL
        for (int s = 0; s < 4; s++) {
            const __m512 t = _mm512_mul_ps(kv, _mm512_set1_ps(d[s]));
            const __m512i v = _mm512_cvtepu8_epi32(_mm_set1_epi64x((long long)ld64(x + 4 + 8 * s)));
            _mm512_storeu_ps(y + 16 * s, _mm512_permutexvar_ps(_mm512_srlv_epi32(v, sh), t));
        }
    }
}

#endif
