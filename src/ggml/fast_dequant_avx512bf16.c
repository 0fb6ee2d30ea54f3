/* ggml's block types straight to bfloat16 (AVX-512 F/BW/VL/DQ/VBMI + AVX512-BF16): one pass per
 * block, no float32 buffer in between. The bits of api.c's float32 path (dequant.c's value and
 * residual, rounded to odd by the residual, then to nearest even, NaN -> sign | 0x7FC0), which
 * tests/test_ggml_fast.c checks against the reference path bit for bit.
 *
 * Why vcvtne2ps2bf16 is exact here. The instruction rounds to nearest even but reads a
 * subnormal float32 as zero and keeps a NaN's payload. A block whose scales are finite makes
 * neither: its values are an fp16 scale (a multiple of 2^-24) times integers and the types'
 * factors (IQ2's (0.5 + s) / 4, IQ3_XXS's / 2, IQ1's deltas of 1/8), so multiples of 2^-27, far
 * above float32's subnormals (below 2^-126), and far from overflow; or 0. MXFP4 and NVFP4,
 * whose scales reach 2^-128, use no conversion: their values are bfloat16 exactly. A block
 * with an Inf or NaN scale goes to the reference (its NaN-exact path) and the one-pass store of
 * store_avx512.c, that one block (IQ1_S / IQ1_M: see iq1_nan).
 *
 * Tables. A (sub-)block of 16 or 32 levels has at most 32 distinct values: their bfloat16 are
 * computed once into the 32 words of a register and each element picks its word with vpermw
 * (or vpermt2w, 64 words) by its level: 32 elements per instruction. The IQ grid types, whose
 * grid bytes take 3 or 8 values, do the same per scale (their section).
 *
 * The types whose float32 rounds (Q4_1, Q5_1, Q2_K, Q4_K, Q5_K: a sum of two exact products)
 * get their table entries rounded to odd directly from the exact sum, with AVX-512's per-
 * instruction rounding modes (add_odd), or as plain sums where a test of the block's scales
 * shows every sum exact (sums_exact); Q8_K's products (a float32 scale) likewise (mul_odd). */
#include "fast_dequant.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "../kernels/kernels.h"
#include "../kernels/x86_attrs.h"
#include "../quant/quant.h"

#include <immintrin.h>
#include <string.h>

/* ggml's grids and level tables (static in the .inc: this file's own copy) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-const-variable"
#include "iq_tables.inc"
#pragma GCC diagnostic pop

#define FN                                                                                         \
    __attribute__((DT_NODEBUG target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,"              \
                                     "avx512bf16,avx2,f16c,fma,bmi2")))
#define HF static DT_INLINE FN

/* the loops over a block's parts run unrolled: their selections and shift counts fold away */
#define UNROLL _Pragma("GCC unroll 32")
/* An array of per-sub-block scales the unrolled loops broadcast element by element: an empty
 * asm that "may write" it keeps each broadcast a load from memory (vbroadcastss m32: a load
 * port only) instead of a permute of the register the compiler knows it holds (a constant
 * index to build, then vpermd: two shuffle-port instructions per broadcast). */
#define IN_MEMORY(a) __asm__("" : "+m"(a))

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
HF __m128i ld128(const void *p)
{
    return _mm_loadu_si128((const __m128i *)p);
}
HF __m256i ld256(const void *p)
{
    return _mm256_loadu_si256((const __m256i *)p);
}
HF __m512i ld512(const void *p)
{
    return _mm512_loadu_si512(p);
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
HF __m512i c32(int v)
{
    return _mm512_set1_epi32(v);
}
HF __m512i w16(int v)
{
    return _mm512_set1_epi16((short)v);
}
/* bitwise a ? b : c (vpternlogd 0xCA) */
HF __m512i sel(__m512i a, __m512i b, __m512i c)
{
    return _mm512_ternarylogic_epi32(a, b, c, 0xCA);
}
HF __m512 iota(int from)
{
    return _mm512_add_ps(_mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                         _mm512_set1_ps((float)from));
}
/* 16 bytes sign-extended to 16 float32 */
HF __m512 sx16f(__m128i b)
{
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(b));
}
/* 32 bytes zero-extended to 32 words */
HF __m512i zxw(const uint8_t *p)
{
    return _mm512_cvtepu8_epi16(ld256(p));
}

/* ---- bfloat16 ------------------------------------------------------------------------------- */
/* 32 float32 (lo: words 0..15, hi: words 16..31) to bfloat16, nearest even: finite, normal or
 * zero inputs only (see the top) */
HF __m512i bf2(__m512 lo, __m512 hi)
{
    return (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
}
/* word i of the result = word (idx_i mod 32) of tab */
HF __m512i look(__m512i idx, __m512i tab)
{
    return _mm512_permutexvar_epi16(idx, tab);
}
HF void st(uint16_t *y, __m512i v)
{
    _mm512_storeu_si512((void *)y, v);
}
/* 32 bfloat16 with word i negated where bit i of signs is set (the reference negates the
 * float32, and rounding to nearest even is symmetric) */
HF __m512i flip(__m512i v, uint32_t signs)
{
    /* AVX-512 has no masked word xor: adding 0x8000 to a word flips its top bit (mod 2^16) */
    return _mm512_mask_add_epi16(v, (__mmask32)signs, v, w16(0x8000));
}

/* a + b rounded to odd, a and b exact (finite) float32 whose exact sum e has more bits than
 * binary32 holds: the sum truncated toward zero, with its last bit set when it is inexact.
 *
 *   e  =  1.mmmmmmmmmmmmmmmmmmmmmmm|rrrr...r      (r: the bits binary32 drops)
 *   RZ(e) = 1.mmmmmmmmmmmmmmmmmmmmmmm             the kept bits (magnitude, sign kept)
 *   inexact <=> some r set <=> RD(e) != RU(e)     (compared as floats: -0 == +0)
 *   RO(e) = RZ(e) | inexact                       the odd neighbour when inexact
 *
 * The reference's float32 y = RN(e) and residual lo = e - y give the same float32 when rounded
 * to odd (api.c: y when lo is 0 or y odd, else y's neighbour on lo's side: in both cases the
 * odd one of e's two neighbours, or e itself). An exact zero sum is +0 in RZ as in RN (only RD
 * gives -0 for x + -x), and the sign of a zero of two zero operands is the same in every mode
 * but RD. No result is subnormal: e is a multiple of 2^-24 or 0. */
HF __m512 add_odd(__m512 a, __m512 b)
{
    const __m512 z = _mm512_add_round_ps(a, b, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m512 dn = _mm512_add_round_ps(a, b, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    const __m512 up = _mm512_add_round_ps(a, b, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    const __mmask16 inexact = _mm512_cmp_ps_mask(dn, up, _CMP_NEQ_OQ);
    const __m512i zi = _mm512_castps_si512(z);
    return _mm512_castsi512_ps(_mm512_mask_or_epi32(zi, inexact, zi, c32(1)));
}
/* a - b rounded to odd (a - b and a + (-b) are the same IEEE operation) */
HF __m512 sub_odd(__m512 a, __m512 b)
{
    const __m512 z = _mm512_sub_round_ps(a, b, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m512 dn = _mm512_sub_round_ps(a, b, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    const __m512 up = _mm512_sub_round_ps(a, b, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    const __mmask16 inexact = _mm512_cmp_ps_mask(dn, up, _CMP_NEQ_OQ);
    const __m512i zi = _mm512_castps_si512(z);
    return _mm512_castsi512_ps(_mm512_mask_or_epi32(zi, inexact, zi, c32(1)));
}

/* Whether every sum a * k + b (or a * k - b) of a block is exact in binary32, so that plain
 * nearest-even sums (one operation instead of add_odd's five) are the values rounded to odd:
 * a block-level sufficient test from the two fp16 fields alone. An fp16 h is M * 2^(s - 25)
 * with M its integer significand (< 2^11) and s = max(exponent field, 1):
 *
 *   h = | sign | e e e e e | m m m m m m m m m m |   M = (e != 0) << 10 | m,  s = max(e, 1)
 *
 * Every product a * k is d times an integer of magnitude at most amax (the largest sub-scale
 * times the largest level) and b is dmin (or m) times one of at most bmax, so every sum is an
 * integer multiple n of u = 2^(min(s_d, s_dmin) - 25) with
 *   |n| <= amax * M_d * 2^(s_d - min) + bmax * M_dmin * 2^(s_dmin - min);
 * below 2^24 the sum has at most 24 significant bits (and u >= 2^-24: a normal float32). */
/* the largest unsigned integer of a field of that many bits (a level, a sub-scale or sub-min) */
#define LMAX(bits) ((1u << (bits)) - 1u)
static inline bool sums_exact(uint16_t hd, uint64_t amax, uint16_t hm, uint64_t bmax)
{
    const unsigned ed = hd >> 10 & 31u, em = hm >> 10 & 31u;
    const unsigned sd = ed ? ed : 1u, sm = em ? em : 1u, lo = sd < sm ? sd : sm;
    const uint64_t md = (hd & 0x3FFu) | (ed ? 0x400u : 0u), mm = (hm & 0x3FFu) | (em ? 0x400u : 0u);
    return (amax * md << (sd - lo)) + (bmax * mm << (sm - lo)) < (1u << 24);
}

/* ---- a block with a non-finite scale -------------------------------------------------------- */
/* the reference's float32 (and residuals when the type has them), then the one-pass store
 * (store_avx512.c: NaN -> sign | 0x7FC0, subnormals kept): the bits of api.c's portable path */
static __attribute__((noinline)) void slow(dt_ggml_dequantize_fn ref, bool inexact,
                                           const uint8_t *x, uint16_t *y, unsigned n)
{
    _Alignas(64) float v[DT_QK_K], lo[DT_QK_K];
    ref(x, v, inexact ? lo : NULL, 1);
    dt_ggml_store_bf16_avx512(y, v, inexact ? lo : NULL, n);
}

/* =================================================================================================
 * The 32-element types
 * ============================================================================================== */

/* word constants (loaded once per call) */
static const uint16_t K_REP16[32] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                                     0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
static const uint16_t K_SH04[32] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4};

/* The 32 levels of 16 split-half nibble bytes as word indices (vpermb puts byte j % 16 in the
 * low byte of word j, zeroing the high byte; vpsrlvw shifts the upper 16 words by 4):
 *
 *   byte j       = | hi nibble: element j + 16 | lo nibble: element j |
 *   word j       = 00000000 hhhh llll    bits 0-3: element j (bits 4-7: the other nibble)
 *   word 16 + j  = 00000000 0000 hhhh    bits 0-3: element j + 16, bit 4: 0
 *
 * rep = K_REP16 (as bytes: the even bytes j % 16), sh = K_SH04. */
HF __m512i split32(const uint8_t *p, __m512i rep, __m512i sh)
{
    const __m512i b = _mm512_castsi128_si512(ld128(p)); /* bytes 16..63 never selected */
    const __m512i w = _mm512_maskz_permutexvar_epi8(0x5555555555555555ull, rep, b);
    return _mm512_srlv_epi16(w, sh);
}

/* The scales of 16 blocks at once (a 32-element block's own scalar work would cost more than
 * its vector work): the dword at each block's start (d, and m for Q4_1 / Q5_1) by a gather,
 * widened to float32 (exact), which blocks are finite, and (with m) which have exact sums:
 * sums_exact's test in float32 on the two fields,
 *
 *   u = 2^(min(s_d, s_m) - 25), the smaller fp16 ulp (built from the exponent fields)
 *   exact <=> amax * |d| + |m| < 2^24 * u
 *
 * (amax * |d| and |m| are exact; their sum is rounded, but a power of two below the exact
 * sum never lies above the rounded one, so the test only errs on the side of add_odd). */
typedef struct sc16 {
    _Alignas(64) float d[16];
    _Alignas(64) float m[16];
    unsigned n, ok, exact; /* blocks; bit k: block k */
} sc16;
/* the scales of the next min(left, 16) blocks at x; returns 0 (the first block) */
HF unsigned sc16_load(sc16 *s, const uint8_t *x, int stride, size_t left, bool two, float amax)
{
    s->n = left < 16 ? (unsigned)left : 16u;
    const __mmask16 k = (__mmask16)((1u << s->n) - 1u);
    const __m512i at = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), c32(stride));
    const __m512i g =
        _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), k, at, (const void *)x, 1);
    const __m512i inf = c32(0x7C00);
    __mmask16 ok = _mm512_mask_cmpneq_epi32_mask(k, _mm512_and_si512(g, inf), inf);
    const __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(g));
    _mm512_store_ps(s->d, d);
    s->exact = 0;
    if (two) {
        const __m512i gm = _mm512_srli_epi32(g, 16);
        ok &= _mm512_cmpneq_epi32_mask(_mm512_and_si512(gm, inf), inf);
        const __m512 m = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(gm));
        _mm512_store_ps(s->m, m);
        /* s = max(exponent field, 1); 2^24 u: the float32 with exponent field s - 25 + 24 + 127 */
        const __m512i sd =
            _mm512_max_epi32(_mm512_and_si512(_mm512_srli_epi32(g, 10), c32(31)), c32(1));
        const __m512i sm =
            _mm512_max_epi32(_mm512_and_si512(_mm512_srli_epi32(gm, 10), c32(31)), c32(1));
        const __m512i tbits =
            _mm512_slli_epi32(_mm512_add_epi32(_mm512_min_epi32(sd, sm), c32(127 - 25 + 24)), 23);
        const __m512 sum =
            _mm512_add_ps(_mm512_mul_ps(_mm512_abs_ps(d), _mm512_set1_ps(amax)), _mm512_abs_ps(m));
        s->exact = _mm512_cmp_ps_mask(sum, _mm512_castsi512_ps(tbits), _CMP_LT_OQ);
    }
    s->ok = ok;
    return 0;
}
/* the blocks of a 32-element type, 16 at a time: their scales (sc16 s, block k), then each
 * block, one with a non-finite scale by the reference; the statement after the macro decodes
 * the others */
#define BLOCKS16(stride, per, two, amax, ref, inexact)                                             \
    for (size_t i0 = 0; i0 < nb; i0 += 16)                                                         \
        for (unsigned k = sc16_load(&s, x, (stride), nb - i0, (two), (amax)); k < s.n;             \
             k++, x += (stride), y += (per))                                                       \
            if (!(s.ok >> k & 1u))                                                                 \
                slow((ref), (inexact), x, y, (per));                                               \
            else

/* Q4_0: y = (q - 8) * d. Table: the 16 values twice (words i and i + 16 equal), so that bit 4
 * of a low word's index (the other nibble's bit) does not matter. */
static FN void bf16_q4_0(const uint8_t *x, uint16_t *y, size_t nb)
{
    const __m512i rep = ld512(K_REP16), sh = ld512(K_SH04);
    const __m512 lv = iota(-8);
    sc16 s;
    BLOCKS16 (18, 32, false, 0, dt_ggml_dequantize_q4_0, false) {
        const __m512 t = _mm512_mul_ps(lv, _mm512_set1_ps(s.d[k]));
        st(y, look(split32(x + 2, rep, sh), bf2(t, t)));
    }
}

/* IQ4_NL: y = d * kvalues_iq4nl[code], the table as Q4_0's */
static FN void bf16_iq4_nl(const uint8_t *x, uint16_t *y, size_t nb)
{
    const __m512i rep = ld512(K_REP16), sh = ld512(K_SH04);
    const __m512 kv = _mm512_loadu_ps(kvalues_iq4nl_f32);
    sc16 s;
    BLOCKS16 (18, 32, false, 0, dt_ggml_dequantize_iq4_nl, false) {
        const __m512 t = _mm512_mul_ps(_mm512_set1_ps(s.d[k]), kv);
        st(y, look(split32(x + 2, rep, sh), bf2(t, t)));
    }
}

/* Q4_1: y = q * d + m, the table rounded to odd (add_odd; plain sums when exact), twice as
 * Q4_0's */
static FN void bf16_q4_1(const uint8_t *x, uint16_t *y, size_t nb)
{
    const __m512i rep = ld512(K_REP16), sh = ld512(K_SH04);
    const __m512 lv = iota(0);
    sc16 s;
    BLOCKS16 (20, 32, true, (float)LMAX(4), dt_ggml_dequantize_q4_1, true) {
        const __m512 p = _mm512_mul_ps(_mm512_set1_ps(s.d[k]), lv), m = _mm512_set1_ps(s.m[k]);
        const __m512 t = s.exact >> k & 1u ? _mm512_add_ps(p, m) : add_odd(p, m);
        st(y, look(split32(x + 4, rep, sh), bf2(t, t)));
    }
}

/* The 5-bit levels of Q5_0 / Q5_1: split32's words with bits 4-15 cleared, then bit 4 = bit i
 * of qh (the fifth bit of element i; word i is element i). AVX-512 has no masked word or:
 * adding 16 to a word whose bit 4 is clear sets it. */
HF __m512i idx5(const uint8_t *qs, uint32_t qh, __m512i rep, __m512i sh)
{
    const __m512i v = _mm512_and_si512(split32(qs, rep, sh), w16(15));
    return _mm512_mask_add_epi16(v, (__mmask32)qh, v, w16(16));
}

/* Q5_0: y = (q - 16) * d: the 32 values, levels 0..15 then 16..31 */
static FN void bf16_q5_0(const uint8_t *x, uint16_t *y, size_t nb)
{
    const __m512i rep = ld512(K_REP16), sh = ld512(K_SH04);
    const __m512 l0 = iota(-16), l1 = iota(0);
    sc16 s;
    BLOCKS16 (22, 32, false, 0, dt_ggml_dequantize_q5_0, false) {
        const __m512 d = _mm512_set1_ps(s.d[k]);
        const __m512i tab = bf2(_mm512_mul_ps(l0, d), _mm512_mul_ps(l1, d));
        st(y, look(idx5(x + 6, ld32(x + 2), rep, sh), tab));
    }
}

/* Q5_1: y = q * d + m, the 32 values rounded to odd (plain sums when exact) */
static FN void bf16_q5_1(const uint8_t *x, uint16_t *y, size_t nb)
{
    const __m512i rep = ld512(K_REP16), sh = ld512(K_SH04);
    const __m512 l0 = iota(0), l1 = iota(16);
    sc16 s;
    BLOCKS16 (24, 32, true, (float)LMAX(5), dt_ggml_dequantize_q5_1, true) {
        const __m512 d = _mm512_set1_ps(s.d[k]), m = _mm512_set1_ps(s.m[k]);
        const __m512 p0 = _mm512_mul_ps(d, l0), p1 = _mm512_mul_ps(d, l1);
        const __m512i tab = s.exact >> k & 1u ? bf2(_mm512_add_ps(p0, m), _mm512_add_ps(p1, m))
                                              : bf2(add_odd(p0, m), add_odd(p1, m));
        st(y, look(idx5(x + 8, ld32(x + 4), rep, sh), tab));
    }
}

/* Q8_0 / Q8_1: y = q * d (int8 q at off) */
HF void q8_blocks(const uint8_t *x, uint16_t *y, size_t nb, int bytes, int off,
                  dt_ggml_dequantize_fn ref)
{
    sc16 s;
    BLOCKS16 (bytes, 32, false, 0, ref, false) {
        const __m512 d = _mm512_set1_ps(s.d[k]);
        st(y, bf2(_mm512_mul_ps(sx16f(ld128(x + off)), d),
                  _mm512_mul_ps(sx16f(ld128(x + off + 16)), d)));
    }
}
static FN void bf16_q8_0(const uint8_t *x, uint16_t *y, size_t nb)
{
    q8_blocks(x, y, nb, 34, 2, dt_ggml_dequantize_q8_0);
}
static FN void bf16_q8_1(const uint8_t *x, uint16_t *y, size_t nb)
{
    q8_blocks(x, y, nb, 36, 4, dt_ggml_dequantize_q8_1);
}

/* MXFP4: y = kvalue * 2^(e - 128). Every value is a bfloat16 exactly (a kvalue has at most 2
 * significant bits; the scale is a power of two; 2^-128 and 2^-127 give float32 subnormals
 * that are multiples of 2^21 units of 2^-149; e = 0xFF gives Inf), so its bfloat16 is the high
 * word of its float32, and the float32 table of 16 values is itself a table of 32 words: the
 * bfloat16 of level k is word 2k + 1.
 *
 *   word j (vpermb: byte j % 16 in both halves)  = bbbbbbbb bbbbbbbb     (b7..b0 b7..b0)
 *   j < 16:  word >> 7   bits 4..0 = b3 b2 b1 b0 b7  -> | 1 = 2 * (lo nibble) + 1
 *   j >= 16: word >> 11  bits 4..0 = b7 b6 b5 b4 b3  -> | 1 = 2 * (hi nibble) + 1
 * (vpermw reads bits 4..0 only) */
static const uint16_t K_SH_7_11[32] = {7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,
                                       7,  7,  7,  7,  7,  11, 11, 11, 11, 11, 11,
                                       11, 11, 11, 11, 11, 11, 11, 11, 11, 11};
static const uint16_t K_REP16_BOTH[32] = {
    0x0000, 0x0101, 0x0202, 0x0303, 0x0404, 0x0505, 0x0606, 0x0707, 0x0808, 0x0909, 0x0A0A,
    0x0B0B, 0x0C0C, 0x0D0D, 0x0E0E, 0x0F0F, 0x0000, 0x0101, 0x0202, 0x0303, 0x0404, 0x0505,
    0x0606, 0x0707, 0x0808, 0x0909, 0x0A0A, 0x0B0B, 0x0C0C, 0x0D0D, 0x0E0E, 0x0F0F};
static FN void bf16_mxfp4(const uint8_t *x, uint16_t *y, size_t nb)
{
    const __m512 kv = _mm512_loadu_ps(kvalues_mxfp4_f32);
    const __m512i rep = ld512(K_REP16_BOTH), sh = ld512(K_SH_7_11);
    for (size_t i = 0; i < nb; i++, x += 17, y += 32) {
        const uint32_t e = x[0];
        const uint32_t bits = e < 2 ? 0x00200000u << e : (e - 1) << 23; /* dequant.c's e8m0_half */
        const __m512i t =
            _mm512_castps_si512(_mm512_mul_ps(kv, _mm512_castsi512_ps(c32((int)bits))));
        const __m512i w = _mm512_permutexvar_epi8(rep, _mm512_castsi128_si512(ld128(x + 1)));
        st(y, look(_mm512_or_si512(_mm512_srlv_epi16(w, sh), w16(1)), t));
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
    const __m128 normal = _mm_castsi128_ps(_mm_or_si128(
        _mm_slli_epi32(_mm_add_epi32(e, _mm_set1_epi32(119)), 23), _mm_slli_epi32(m, 20)));
    const __m128 sub = _mm_mul_ps(_mm_cvtepi32_ps(m), _mm_set1_ps(0x1p-10f));
    const __m128 v =
        _mm_blendv_ps(normal, sub, _mm_castsi128_ps(_mm_cmpeq_epi32(e, _mm_setzero_si128())));
    return _mm_andnot_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(b, _mm_set1_epi32(0x7F))), v);
}

/* NVFP4: y = kvalue * ue4m3_half(scale), 4 sub-blocks of 16. Every value is a bfloat16
 * exactly (2 + 4 significant bits, at least 2^-10), so as MXFP4 the float32 tables are tables
 * of words: sub-blocks 2p and 2p + 1 (32 elements, bytes 4 + 16p ..) look up the 64 words of
 * their two tables with vpermt2w, bit 5 choosing the second:
 *
 *   word j: byte (j < 8: j; < 16: j - 8; < 24: j - 8; else j - 16) of the 16, in both halves
 *   element 16p + j, j % 16 < 8: the low nibble (word >> 7), else the high nibble (>> 11)
 *   index = (shifted & 0x1F) | 1 | (j >= 16) << 5                       (vpternlogd 0xEA) */
static const uint16_t K_NV_REP[32] = {
    0x0000, 0x0101, 0x0202, 0x0303, 0x0404, 0x0505, 0x0606, 0x0707, 0x0000, 0x0101, 0x0202,
    0x0303, 0x0404, 0x0505, 0x0606, 0x0707, 0x0808, 0x0909, 0x0A0A, 0x0B0B, 0x0C0C, 0x0D0D,
    0x0E0E, 0x0F0F, 0x0808, 0x0909, 0x0A0A, 0x0B0B, 0x0C0C, 0x0D0D, 0x0E0E, 0x0F0F};
static const uint16_t K_NV_SH[32] = {7, 7, 7, 7, 7, 7, 7, 7, 11, 11, 11, 11, 11, 11, 11, 11,
                                     7, 7, 7, 7, 7, 7, 7, 7, 11, 11, 11, 11, 11, 11, 11, 11};
static const uint16_t K_NV_OR[32] = {1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,
                                     1,  1,  1,  1,  1,  33, 33, 33, 33, 33, 33,
                                     33, 33, 33, 33, 33, 33, 33, 33, 33, 33};
static FN void bf16_nvfp4(const uint8_t *x, uint16_t *y, size_t nb)
{
    const __m512 kv = _mm512_loadu_ps(kvalues_mxfp4_f32);
    const __m512i rep = ld512(K_NV_REP), sh = ld512(K_NV_SH), orv = ld512(K_NV_OR);
    for (size_t i = 0; i < nb; i++, x += 36, y += 64) {
        _Alignas(16) float d[4];
        _mm_store_ps(d, ue4m3_half4(ld32(x)));
        UNROLL
        for (int p = 0; p < 2; p++) {
            const __m512i t0 = _mm512_castps_si512(_mm512_mul_ps(kv, _mm512_set1_ps(d[2 * p])));
            const __m512i t1 = _mm512_castps_si512(_mm512_mul_ps(kv, _mm512_set1_ps(d[2 * p + 1])));
            const __m512i w =
                _mm512_permutexvar_epi8(rep, _mm512_castsi128_si512(ld128(x + 4 + 16 * p)));
            const __m512i ix =
                _mm512_ternarylogic_epi32(_mm512_srlv_epi16(w, sh), w16(0x1F), orv, 0xEA);
            st(y + 32 * p, _mm512_permutex2var_epi16(t0, ix, t1));
        }
    }
}

/* Q1_0: y = bit ? d : -d (bfloat16 of -d = that of d with the sign flipped) */
static FN void bf16_q1_0(const uint8_t *x, uint16_t *y, size_t nb)
{
    for (size_t i = 0; i < nb; i++, x += 18, y += 128) {
        const uint16_t h = dt_ggml_rd16(x);
        if (!h_ok(h)) {
            slow(dt_ggml_dequantize_q1_0, false, x, y, 128);
            continue;
        }
        const __m512 d = f16v(h);
        const __m512i pd = bf2(d, d), nd = _mm512_xor_si512(pd, w16(0x8000));
        UNROLL
        for (int n = 0; n < 4; n++)
            st(y + 32 * n, _mm512_mask_blend_epi16((__mmask32)ld32(x + 2 + 4 * n), nd, pd));
    }
}

/* Q2_0: y = (q - 1) * d, element j in bits 2 (j % 4) of byte 2 + j / 4. The 4 values repeated 8
 * times, so that only bits 0-1 of an index count:
 *
 *   word j of half h = byte 8h + j / 4 (vpermb, both halves of the word), >> 2 (j % 4) */
static const uint16_t K_Q2_REP[32] = {
    0x0000, 0x0000, 0x0000, 0x0000, 0x0101, 0x0101, 0x0101, 0x0101, 0x0202, 0x0202, 0x0202,
    0x0202, 0x0303, 0x0303, 0x0303, 0x0303, 0x0404, 0x0404, 0x0404, 0x0404, 0x0505, 0x0505,
    0x0505, 0x0505, 0x0606, 0x0606, 0x0606, 0x0606, 0x0707, 0x0707, 0x0707, 0x0707};
static const uint16_t K_Q2_SH[32] = {0, 2, 4, 6, 0, 2, 4, 6, 0, 2, 4, 6, 0, 2, 4, 6,
                                     0, 2, 4, 6, 0, 2, 4, 6, 0, 2, 4, 6, 0, 2, 4, 6};
static FN void bf16_q2_0(const uint8_t *x, uint16_t *y, size_t nb)
{
    const __m512 k4 = _mm512_setr_ps(-1, 0, 1, 2, -1, 0, 1, 2, -1, 0, 1, 2, -1, 0, 1, 2);
    const __m512i rep0 = ld512(K_Q2_REP), rep1 = _mm512_add_epi8(rep0, _mm512_set1_epi8(8));
    const __m512i sh = ld512(K_Q2_SH);
    for (size_t i = 0; i < nb; i++, x += 18, y += 64) {
        const uint16_t h = dt_ggml_rd16(x);
        if (!h_ok(h)) {
            slow(dt_ggml_dequantize_q2_0, false, x, y, 64);
            continue;
        }
        const __m512 t = _mm512_mul_ps(k4, f16v(h));
        const __m512i tab = bf2(t, t);
        const __m512i b = _mm512_castsi128_si512(ld128(x + 2));
        st(y, look(_mm512_srlv_epi16(_mm512_permutexvar_epi8(rep0, b), sh), tab));
        st(y + 32, look(_mm512_srlv_epi16(_mm512_permutexvar_epi8(rep1, b), sh), tab));
    }
}

/* TQ2_0: y = (t - 1) * d, t = bits 2l..2l+1 of byte 32g + m for element 128g + 32l + m; the 4
 * values repeated as Q2_0's */
static FN void bf16_tq2_0(const uint8_t *x, uint16_t *y, size_t nb)
{
    const __m512 k4 = _mm512_setr_ps(-1, 0, 1, 2, -1, 0, 1, 2, -1, 0, 1, 2, -1, 0, 1, 2);
    for (size_t i = 0; i < nb; i++, x += 66, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x + 64);
        if (!h_ok(hd)) {
            slow(dt_ggml_dequantize_tq2_0, false, x, y, 256);
            continue;
        }
        const __m512 t = _mm512_mul_ps(k4, f16v(hd));
        const __m512i tab = bf2(t, t);
        UNROLL
        for (int g = 0; g < 2; g++) {
            const __m512i v = zxw(x + 32 * g);
            UNROLL
            for (int l = 0; l < 4; l++)
                st(y + 128 * g + 32 * l, look(_mm512_srlv_epi16(v, w16(2 * l)), tab));
        }
    }
}

/* TQ1_0: trit k of byte b = ((b * 3^k) mod 256) * 3 >> 8 (dequant.c's trit), in word lanes:
 *
 *   w = b (low byte; the high byte is multiplied away)   c = w * (3^k << 8) mod 2^16
 *     = ((b * 3^k) mod 256) << 8                          trit = (c * 3) >> 16  (vpmulhuw)
 *
 * and y = (t - 1) * d by a table of the three values. Words: qs[0..31] give elements 32k + m;
 * qs[32..47] elements 160 + 16k + m, two digits per register; the last register holds digit 4
 * of qs[32..47] (224 + m) and qh[0..3]'s four digits (240 + 4k + j). */
static const uint16_t K_TQ_M01[32] = {
    1 << 8, 1 << 8, 1 << 8, 1 << 8, 1 << 8, 1 << 8, 1 << 8, 1 << 8, 1 << 8, 1 << 8, 1 << 8,
    1 << 8, 1 << 8, 1 << 8, 1 << 8, 1 << 8, 3 << 8, 3 << 8, 3 << 8, 3 << 8, 3 << 8, 3 << 8,
    3 << 8, 3 << 8, 3 << 8, 3 << 8, 3 << 8, 3 << 8, 3 << 8, 3 << 8, 3 << 8, 3 << 8};
static const uint16_t K_TQ_ML[32] = {81 << 8, 81 << 8, 81 << 8, 81 << 8, 81 << 8, 81 << 8, 81 << 8,
                                     81 << 8, 81 << 8, 81 << 8, 81 << 8, 81 << 8, 81 << 8, 81 << 8,
                                     81 << 8, 81 << 8, 1 << 8,  1 << 8,  1 << 8,  1 << 8,  3 << 8,
                                     3 << 8,  3 << 8,  3 << 8,  9 << 8,  9 << 8,  9 << 8,  9 << 8,
                                     27 << 8, 27 << 8, 27 << 8, 27 << 8};
/* the last register's bytes (of x[32..51]): 0..15, then 16..19 four times */
static const uint16_t K_TQ_RL[32] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                                     11, 12, 13, 14, 15, 16, 17, 18, 19, 16, 17,
                                     18, 19, 16, 17, 18, 19, 16, 17, 18, 19};
HF __m512i trits(__m512i w, __m512i mul)
{
    return _mm512_mulhi_epu16(_mm512_mullo_epi16(w, mul), w16(3));
}
static FN void bf16_tq1_0(const uint8_t *x, uint16_t *y, size_t nb)
{
    static const int pow3[5] = {1, 3, 9, 27, 81};
    const __m512i m01 = ld512(K_TQ_M01), m23 = _mm512_mullo_epi16(m01, w16(9));
    const __m512i ml = ld512(K_TQ_ML), rep = ld512(K_REP16), rl = ld512(K_TQ_RL);
    for (size_t i = 0; i < nb; i++, x += 54, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x + 52);
        if (!h_ok(hd)) {
            slow(dt_ggml_dequantize_tq1_0, false, x, y, 256);
            continue;
        }
        const __m512 t = _mm512_mul_ps(iota(-1), f16v(hd));
        const __m512i tab = bf2(t, t);
        const __m512i w0 = zxw(x);
        UNROLL
        for (int k = 0; k < 5; k++)
            st(y + 32 * k, look(trits(w0, w16(pow3[k] << 8)), tab));
        const __m512i b = _mm512_maskz_loadu_epi8(0xFFFFFull, x + 32); /* bytes 32..51 */
        const __m512i w1 = _mm512_permutexvar_epi8(rep, b), w2 = _mm512_permutexvar_epi8(rl, b);
        st(y + 160, look(trits(w1, m01), tab));
        st(y + 192, look(trits(w1, m23), tab));
        st(y + 224, look(trits(w2, ml), tab));
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
/* the 16 values a * k - b (k = from .. from + 15): dequant.c's p = a * q (exact) and p - b,
 * rounded to odd (sub_odd), or plain where the block's sums are all exact */
HF __m512 k_tab(float a, float b, int from, bool exact)
{
    const __m512 p = _mm512_mul_ps(_mm512_set1_ps(a), iota(from)), bv = _mm512_set1_ps(b);
    return exact ? _mm512_sub_ps(p, bv) : sub_odd(p, bv);
}

/* Q4_K: y = (d * sc) * q - dmin * m. The 32 bytes of part c hold sub-block 2c in their low
 * nibbles and 2c + 1 in their high nibbles; one table holds both (words 0..15: 2c + 1, 16..31:
 * 2c), so that
 *
 *   word = 00000000 hhhh llll   (vpmovzxbw)
 *   2c:      word | 16   bits 4..0 = 1 llll
 *   2c + 1:  word >> 4   bits 4..0 = 0 hhhh */
HF void q4_K_parts(const uint8_t *x, uint16_t *y, const float *dm, bool exact)
{
    UNROLL
    for (int c = 0; c < 4; c++) {
        const __m512i w = zxw(x + 16 + 32 * c);
        const __m512i tab = bf2(k_tab(dm[2 * c + 1], dm[9 + 2 * c], 0, exact),
                                k_tab(dm[2 * c], dm[8 + 2 * c], 0, exact));
        st(y + 64 * c, look(_mm512_or_si512(w, w16(16)), tab));
        st(y + 64 * c + 32, look(_mm512_srli_epi16(w, 4), tab));
    }
}
static FN void bf16_q4_K(const uint8_t *x, uint16_t *y, size_t nb)
{
    for (size_t i = 0; i < nb; i++, x += 144, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x), hm = dt_ggml_rd16(x + 2);
        if (!h_ok(hd) || !h_ok(hm)) {
            slow(dt_ggml_dequantize_q4_K, true, x, y, 256);
            continue;
        }
        _Alignas(64) float dm[16];
        k4_scales(x, hd, hm, dm);
        IN_MEMORY(dm);
        if (sums_exact(hd, LMAX(4) * LMAX(6), hm, LMAX(6)))
            q4_K_parts(x, y, dm, true);
        else
            q4_K_parts(x, y, dm, false);
    }
}

/* Q5_K: y = (d * sc) * q - dmin * m, q with its fifth bit from qh (bit j of byte l: element
 * 32j + l). A table per sub-block (its 32 levels); the index of element 32j + l:
 *
 *   nibble word (as Q4_K's, bits 3..0)   qh word l shifted so that its bit j lands on bit 4
 *   index = qh' & 16 | nibble & ~16      (vpternlogd: sel) */
HF void q5_K_parts(const uint8_t *x, uint16_t *y, const float *dm, bool exact)
{
    const __m512i qh = zxw(x + 16);
    UNROLL
    for (int c = 0; c < 4; c++) {
        const __m512i w = zxw(x + 48 + 32 * c);
        UNROLL
        for (int h = 0; h < 2; h++) {
            const int j = 2 * c + h;
            const __m512i tab =
                bf2(k_tab(dm[j], dm[8 + j], 0, exact), k_tab(dm[j], dm[8 + j], 16, exact));
            const __m512i hb =
                j <= 4 ? _mm512_sllv_epi16(qh, w16(4 - j)) : _mm512_srlv_epi16(qh, w16(j - 4));
            const __m512i nib = h ? _mm512_srli_epi16(w, 4) : w;
            st(y + 32 * j, look(sel(w16(16), hb, nib), tab));
        }
    }
}
static FN void bf16_q5_K(const uint8_t *x, uint16_t *y, size_t nb)
{
    for (size_t i = 0; i < nb; i++, x += 176, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x), hm = dt_ggml_rd16(x + 2);
        if (!h_ok(hd) || !h_ok(hm)) {
            slow(dt_ggml_dequantize_q5_K, true, x, y, 256);
            continue;
        }
        _Alignas(64) float dm[16];
        k4_scales(x, hd, hm, dm);
        IN_MEMORY(dm);
        if (sums_exact(hd, LMAX(5) * LMAX(6), hm, LMAX(6)))
            q5_K_parts(x, y, dm, true);
        else
            q5_K_parts(x, y, dm, false);
    }
}

/* Q2_K: y = (d * sc) * q - dmin * m, 2-bit q, sc / m per 16 elements. Tables: tz[m] holds
 * groups 4m..4m+3 (lane 4j + k = level k of group 4m + j), rounded to odd; two of them make the
 * 32 words of groups 8g..8g+7 (word 4 (group % 8) + level). Element 128g + 32k + l is in bits
 * 2k..2k+1 of qs[32g + l], group 8g + 2k + (l >= 16):
 *
 *   index = (qs word >> 2k) & 3 | 8k + 4 (l >= 16)         (vpternlogd: sel with 3) */
static const uint16_t K_HALF4[32] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                     4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4};
static FN void bf16_q2_K(const uint8_t *x, uint16_t *y, size_t nb)
{
    const __m512 kp = _mm512_setr_ps(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3);
    const __m512i gsel = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    const __m512i half4 = ld512(K_HALF4);
    for (size_t i = 0; i < nb; i++, x += 84, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x + 80), hm = dt_ggml_rd16(x + 82);
        if (!h_ok(hd) || !h_ok(hm)) {
            slow(dt_ggml_dequantize_q2_K, true, x, y, 256);
            continue;
        }
        const __m512i s = _mm512_cvtepu8_epi32(ld128(x));
        const __m512 dl = _mm512_mul_ps(f16v(hd), _mm512_cvtepi32_ps(_mm512_and_si512(s, c32(15))));
        const __m512 ml = _mm512_mul_ps(f16v(hm), _mm512_cvtepi32_ps(_mm512_srli_epi32(s, 4)));
        __m512 tz[4];
        const bool exact = sums_exact(hd, LMAX(2) * LMAX(4), hm, LMAX(4));
        UNROLL
        for (int m = 0; m < 4; m++) {
            const __m512i gi = _mm512_add_epi32(gsel, c32(4 * m));
            const __m512 p = _mm512_mul_ps(_mm512_permutexvar_ps(gi, dl), kp);
            const __m512 b = _mm512_permutexvar_ps(gi, ml);
            tz[m] = exact ? _mm512_sub_ps(p, b) : sub_odd(p, b);
        }
        UNROLL
        for (int g = 0; g < 2; g++) {
            const __m512i tab = bf2(tz[2 * g], tz[2 * g + 1]);
            const __m512i q = zxw(x + 16 + 32 * g);
            UNROLL
            for (int k = 0; k < 4; k++) {
                const __m512i base = _mm512_add_epi16(half4, w16(8 * k));
                const __m512i ix = sel(w16(3), _mm512_srlv_epi16(q, w16(2 * k)), base);
                st(y + 128 * g + 32 * k, look(ix, tab));
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

/* Q3_K: y = (d * (s - 32)) * q, q = 2-bit level - (hmask bit ? 0 : 4), 16 groups of 16.
 * Tables: 8 levels per group, 4 groups per register (word 8 (group % 4) + q + 4). Element e =
 * 128g + 32k + l: group 8g + 2k + (l >= 16), level bits 2k..2k+1 of qs[32g + l], hmask bit
 * 4g + k of byte l:
 *
 *   index bits  4..3 = 2 (k % 2) + (l >= 16)   2 = hmask bit   1..0 = the 2-bit level */
static const uint16_t K_Q3_C[32] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                    8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8};
static FN void bf16_q3_K(const uint8_t *x, uint16_t *y, size_t nb)
{
    const __m512 kq = _mm512_setr_ps(-4, -3, -2, -1, 0, 1, 2, 3, -4, -3, -2, -1, 0, 1, 2, 3);
    const __m512i pair = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
    const __m512i ce = ld512(K_Q3_C), co = _mm512_add_epi16(ce, w16(16));
    for (size_t i = 0; i < nb; i++, x += 110, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x + 108);
        if (!h_ok(hd)) {
            slow(dt_ggml_dequantize_q3_K, false, x, y, 256);
            continue;
        }
        const __m512i s = _mm512_sub_epi32(_mm512_cvtepu8_epi32(q3k_scales(x + 96)), c32(32));
        const __m512 dl = _mm512_mul_ps(f16v(hd), _mm512_cvtepi32_ps(s));
        __m512i tab[4];
        UNROLL
        for (int u = 0; u < 4; u++) {
            const __m512 a = _mm512_permutexvar_ps(_mm512_add_epi32(pair, c32(4 * u)), dl);
            const __m512 b = _mm512_permutexvar_ps(_mm512_add_epi32(pair, c32(4 * u + 2)), dl);
            tab[u] = bf2(_mm512_mul_ps(kq, a), _mm512_mul_ps(kq, b));
        }
        const __m512i hm = zxw(x);
        UNROLL
        for (int g = 0; g < 2; g++) {
            const __m512i q = zxw(x + 32 + 32 * g);
            UNROLL
            for (int k = 0; k < 4; k++) {
                const int hbit = 4 * g + k; /* to bit 2 */
                const __m512i hs = hbit >= 2 ? _mm512_srlv_epi16(hm, w16(hbit - 2))
                                             : _mm512_sllv_epi16(hm, w16(2 - hbit));
                const __m512i ix =
                    sel(w16(3), _mm512_srlv_epi16(q, w16(2 * k)), sel(w16(4), hs, k % 2 ? co : ce));
                st(y + 128 * g + 32 * k, look(ix, tab[2 * g + k / 2]));
            }
        }
    }
}

/* dword lane i of the result = byte 16n + i of v, sign-extended (vpermb to the top byte, then
 * an arithmetic shift) */
HF __m512i sx_quarter(__m512i v, int n)
{
    const __m512i top = _mm512_slli_epi32(
        _mm512_add_epi32(c32(16 * n),
                         _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)),
        24);
    return _mm512_srai_epi32(_mm512_permutexvar_epi8(top, v), 24);
}

/* Q6_K: y = (d * sc) * (q - 32), sc int8 per 16 elements (64 levels: no table) */
static FN void bf16_q6_K(const uint8_t *x, uint16_t *y, size_t nb)
{
    const __m512i m0F = _mm512_set1_epi8(0x0F), m3F = _mm512_set1_epi8(0x3F);
    const __m512i b32 = _mm512_set1_epi8(32);
    for (size_t i = 0; i < nb; i++, x += 210, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x + 208);
        if (!h_ok(hd)) {
            slow(dt_ggml_dequantize_q6_K, false, x, y, 256);
            continue;
        }
        _Alignas(64) float dl[16];
        _mm512_store_ps(dl, _mm512_mul_ps(f16v(hd), sx16f(ld128(x + 192))));
        IN_MEMORY(dl);
        UNROLL
        for (int g = 0; g < 2; g++) {
            const __m512i L = ld512(x + 64 * g);
            const __m512i H = _mm512_broadcast_i64x4(ld256(x + 128 + 32 * g));
            /* bytes i of qa: element 128g + i (low nibbles; qh bits 0-1, then 2-3) */
            const __m512i ha =
                _mm512_mask_blend_epi64(0xF0, _mm512_slli_epi16(H, 4), _mm512_slli_epi16(H, 2));
            const __m512i qa = _mm512_sub_epi8(_mm512_and_si512(sel(m0F, L, ha), m3F), b32);
            /* bytes i of qb: element 128g + 64 + i (high nibbles; qh bits 4-5, then 6-7) */
            const __m512i hb = _mm512_mask_blend_epi64(0xF0, H, _mm512_srli_epi16(H, 2));
            const __m512i qb =
                _mm512_sub_epi8(_mm512_and_si512(sel(m0F, _mm512_srli_epi16(L, 4), hb), m3F), b32);
            UNROLL
            for (int r = 0; r < 2; r++) {
                const int s0 = 8 * g + 2 * r, s1 = 8 * g + 4 + 2 * r;
                st(y + 128 * g + 32 * r,
                   bf2(_mm512_mul_ps(_mm512_cvtepi32_ps(sx_quarter(qa, 2 * r)),
                                     _mm512_set1_ps(dl[s0])),
                       _mm512_mul_ps(_mm512_cvtepi32_ps(sx_quarter(qa, 2 * r + 1)),
                                     _mm512_set1_ps(dl[s0 + 1]))));
                st(y + 128 * g + 64 + 32 * r,
                   bf2(_mm512_mul_ps(_mm512_cvtepi32_ps(sx_quarter(qb, 2 * r)),
                                     _mm512_set1_ps(dl[s1])),
                       _mm512_mul_ps(_mm512_cvtepi32_ps(sx_quarter(qb, 2 * r + 1)),
                                     _mm512_set1_ps(dl[s1 + 1]))));
            }
        }
    }
}

/* a * b rounded to odd, the exact product normal and below 2^128 (add_odd's rule: truncated,
 * the last bit set when RD and RU differ) */
HF __m512 mul_odd(__m512 a, __m512 b)
{
    const __m512 z = _mm512_mul_round_ps(a, b, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m512 dn = _mm512_mul_round_ps(a, b, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    const __m512 up = _mm512_mul_round_ps(a, b, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    const __mmask16 inexact = _mm512_cmp_ps_mask(dn, up, _CMP_NEQ_OQ);
    const __m512i zi = _mm512_castps_si512(z);
    return _mm512_castsi512_ps(_mm512_mask_or_epi32(zi, inexact, zi, c32(1)));
}

/* Q8_K: y = d * q, d float32 (24 bits) times an int8: the product can round, and dequant.c's
 * residual is its exact error while the product is normal and finite. With d's exponent field
 *
 *   d = | sign | e (8 bits) | 23 bits |,   2^(e - 127) <= |d| < 2^(e - 126)
 *
 * in [1, 254 - 8] every nonzero product has 2^-126 <= |d q| < 2^(e - 126 + 7) <= 2^127 (|q| <=
 * 2^7): normal and finite, so the product rounded to odd (mul_odd) is the reference's y rounded
 * to odd by its residual. Other blocks (subnormal, zero, huge, Inf, NaN d) take the reference. */
static FN void bf16_q8_K(const uint8_t *x, uint16_t *y, size_t nb)
{
    for (size_t i = 0; i < nb; i++, x += 292, y += 256) {
        const uint32_t db = ld32(x), e = db >> 23 & 0xFFu;
        if (e < 1 || e > 254 - 8) {
            slow(dt_ggml_dequantize_q8_K, true, x, y, 256);
            continue;
        }
        const __m512 d = _mm512_castsi512_ps(c32((int)db));
        UNROLL
        for (int k = 0; k < 8; k++)
            st(y + 32 * k, bf2(mul_odd(d, sx16f(ld128(x + 4 + 32 * k))),
                               mul_odd(d, sx16f(ld128(x + 20 + 32 * k)))));
    }
}

/* IQ4_XS: y = (d * (ls - 32)) * kvalues_iq4nl[code], a table per 32-element group as IQ4_NL's */
static FN void bf16_iq4_xs(const uint8_t *x, uint16_t *y, size_t nb)
{
    const __m512i rep = ld512(K_REP16), sh = ld512(K_SH04);
    const __m512 kv = _mm512_loadu_ps(kvalues_iq4nl_f32);
    for (size_t i = 0; i < nb; i++, x += 136, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x);
        if (!h_ok(hd)) {
            slow(dt_ggml_dequantize_iq4_xs, false, x, y, 256);
            continue;
        }
        const float d = f16s(hd);
        const unsigned shb = dt_ggml_rd16(x + 2);
        UNROLL
        for (int ib = 0; ib < 8; ib++) {
            const unsigned ls =
                ((unsigned)x[4 + ib / 2] >> (4 * (ib % 2)) & 15u) | (shb >> (2 * ib) & 3u) << 4;
            const __m512 t = _mm512_mul_ps(_mm512_set1_ps(d * (float)((int)ls - 32)), kv);
            st(y + 32 * ib, look(split32(x + 8 + 16 * ib, rep, sh), bf2(t, t)));
        }
    }
}

/* =================================================================================================
 * The IQ grid types: per 8 elements a grid entry (8 bytes; IQ3: two entries of 4) and 8 sign
 * bits (or a delta, IQ1). A block is decoded in vector registers throughout:
 *
 *   - the grid indices of all its entries computed in vectors, the entries fetched by gathers
 *     (vpgatherdq / vpgatherdd: 64 elements' grid bytes per gather);
 *   - a grid byte takes one of 3 (IQ2: 8 25 43), 8 (IQ3_XXS: 4 12 .. 52 62; IQ3_S: 1 3 .. 15) or
 *     3 (IQ1: -1 0 1, with a delta of +-1/8) values, so the block's bfloat16 values, each scale
 *     times each grid value (the reference's float32 product, rounded to nearest even), fill
 *     tables of 32 words, and an element's word is picked by vpermw with the index
 *       (grid byte >> shift, which maps the values to 0 1 2 .. 7) | (the scale's slot) << 2 or 3;
 *   - the signs (bfloat16 negation, as flip) from 32-bit masks: the block's sign bytes, or
 *     IQ2_XXS / IQ3_XXS / IQ2_XS's 7-bit fields through ksigns_iq2xs with vpermt2b.
 * The scales are the reference's float32 operations in vector lanes.
 * ============================================================================================== */

static const uint16_t K_IOTA32[32] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                                      11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                                      22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
/* the words of bytes [32h, 32h + 32) of g (high bytes 0): ctrl = K_IOTA32 + 32h */
HF __m512i bytes_w(__m512i g, __m512i ctrl)
{
    return _mm512_maskz_permutexvar_epi8(0x5555555555555555ull, ctrl, g);
}
/* lane i of the result = lane (i / 4 + from) of v (dwords) */
HF __m512i quad_lanes(int from)
{
    return _mm512_add_epi32(_mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3),
                            c32(from));
}
/* lane i of the result = lane (i / 8 + from) */
HF __m512i oct_lanes(int from)
{
    return _mm512_add_epi32(_mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1),
                            c32(from));
}
/* 8 grid entries of 8 bytes (indices: the 8 dwords of idx) */
HF __m512i gather8(const uint64_t *grid, __m256i idx)
{
    return _mm512_i32gather_epi64(idx, (const void *)grid, 8);
}
/* the 32 ksigns_iq2xs bytes of 7-bit fields: byte i of the result = ksigns_iq2xs[byte i of f
 * & 127] (vpermt2b reads 7 index bits: bit 6 picks the upper 64 bytes) */
HF __m512i ksigns(__m512i f, __m512i ks0, __m512i ks1)
{
    return _mm512_permutex2var_epi8(ks0, f, ks1);
}
/* IQ2_XXS / IQ3_XXS's word w (a qword lane holding it at bit `at`):
 *
 *   w = | s (31..28) | signs l=3 (27..21) | l=2 (20..14) | l=1 (13..7) | l=0 (6..0) |
 *
 * vpmultishiftqb copies the 8 bits from bit at + 7l to byte l of the lane (l = 0..3; bit 7 of
 * each byte, the next field's, is ignored by ksigns) */
HF __m512i sign_fields(__m512i v, int at)
{
    const __m512i ctl =
        _mm512_set1_epi64((long long)((uint64_t)(at + 21) << 24 | (uint64_t)(at + 14) << 16 |
                                      (uint64_t)(at + 7) << 8 | (uint64_t)at));
    return _mm512_multishift_epi64_epi8(ctl, v);
}
/* 32 elements: their words w (grid bytes), >> sh, | slot, looked up in tab, negated by signs */
HF void grid32(uint16_t *y, __m512i w, int sh, __m512i slot, __m512i tab, uint32_t signs)
{
    st(y, flip(look(_mm512_or_si512(_mm512_srli_epi16(w, (unsigned)sh), slot), tab), signs));
}

/* IQ2_XXS, 66 bytes: 8 groups of 8 bytes = | 4 grid indices | w |; one table: word 4 ib + v,
 * v = grid byte >> 4 (8 25 43 -> 0 1 2) */
static FN void bf16_iq2_xxs(const uint8_t *x, uint16_t *y, size_t nb)
{
    const __m512i ks0 = ld512(ksigns_iq2xs), ks1 = ld512(ksigns_iq2xs + 64);
    const __m512i c0 = ld512(K_IOTA32), c1 = _mm512_add_epi16(c0, w16(32));
    /* dword i of the indices of runs 16u + i: byte 8 ((16u + i) / 4) + i % 4 of the groups */
    const __m512i at0 = _mm512_setr_epi32(0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27);
    const __m512i at1 = _mm512_add_epi32(at0, c32(32));
    const __m512 gv = _mm512_setr_ps(8, 25, 43, 0, 8, 25, 43, 0, 8, 25, 43, 0, 8, 25, 43, 0);
    for (size_t i = 0; i < nb; i++, x += 66, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x);
        if (!h_ok(hd)) {
            slow(dt_ggml_dequantize_iq2_xxs, false, x, y, 256);
            continue;
        }
        const __m512i q = ld512(x + 2);
        /* db = d * (0.5 + s) * 0.25 in dword lane 2 ib + 1 (the w's) */
        const __m512 sv = _mm512_cvtepi32_ps(_mm512_srli_epi32(q, 28));
        const __m512 db =
            _mm512_mul_ps(_mm512_mul_ps(f16v(hd), _mm512_add_ps(_mm512_set1_ps(0.5f), sv)),
                          _mm512_set1_ps(0.25f));
        const __m512i dsel = _mm512_add_epi32(_mm512_slli_epi32(quad_lanes(0), 1), c32(1));
        const __m512i tab =
            bf2(_mm512_mul_ps(_mm512_permutexvar_ps(dsel, db), gv),
                _mm512_mul_ps(_mm512_permutexvar_ps(_mm512_add_epi32(dsel, c32(8)), db), gv));
        _Alignas(64) uint32_t sg[16];
        _mm512_store_si512((void *)sg, ksigns(sign_fields(q, 32), ks0, ks1));
        const __m512i i0 = _mm512_maskz_permutexvar_epi8(0x1111111111111111ull, at0, q);
        const __m512i i1 = _mm512_maskz_permutexvar_epi8(0x1111111111111111ull, at1, q);
        __m512i g[4];
        g[0] = gather8(iq2xxs_grid, _mm512_castsi512_si256(i0));
        g[1] = gather8(iq2xxs_grid, _mm512_extracti64x4_epi64(i0, 1));
        g[2] = gather8(iq2xxs_grid, _mm512_castsi512_si256(i1));
        g[3] = gather8(iq2xxs_grid, _mm512_extracti64x4_epi64(i1, 1));
        UNROLL
        for (int ib = 0; ib < 8; ib++)
            grid32(y + 32 * ib, bytes_w(g[ib / 2], ib % 2 ? c1 : c0), 4, w16(4 * ib), tab,
                   sg[2 * ib]);
    }
}

/* the 16 scales of IQ2_XS / IQ2_S (8 bytes at p: low nibble the first 16 elements of group ib,
 * high nibble the last 16), d * (0.5 + s) * 0.25 in lane 2 ib + h */
HF __m512 iq2_scales16(const uint8_t *p, uint16_t hd)
{
    const __m512i b = _mm512_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p));
    const __m512i t = _mm512_permutexvar_epi32(
        _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7), b);
    const __m512i sh = _mm512_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4);
    const __m512 s = _mm512_cvtepi32_ps(_mm512_and_si512(_mm512_srlv_epi32(t, sh), c32(15)));
    return _mm512_mul_ps(_mm512_mul_ps(f16v(hd), _mm512_add_ps(_mm512_set1_ps(0.5f), s)),
                         _mm512_set1_ps(0.25f));
}
/* the two tables of 16 scales times 8 25 43: table u, word 4 (t - 8u) + v for scale t */
HF void iq2_tabs16(__m512 db, __m512i tab[2])
{
    const __m512 gv = _mm512_setr_ps(8, 25, 43, 0, 8, 25, 43, 0, 8, 25, 43, 0, 8, 25, 43, 0);
    UNROLL
    for (int u = 0; u < 2; u++)
        tab[u] = bf2(_mm512_mul_ps(_mm512_permutexvar_ps(quad_lanes(8 * u), db), gv),
                     _mm512_mul_ps(_mm512_permutexvar_ps(quad_lanes(8 * u + 4), db), gv));
}
/* group ib's slots: scale 2 ib (elements 0..15) or 2 ib + 1 (16..31) in table ib / 4 */
HF __m512i iq2_slot16(int ib, __m512i half4)
{
    return _mm512_add_epi16(half4, w16(8 * (ib % 4)));
}

/* IQ2_XS, 74 bytes: 32 uint16 = | sign field (15..9) | grid index (8..0) |, 16 scales */
static FN void bf16_iq2_xs(const uint8_t *x, uint16_t *y, size_t nb)
{
    const __m512i ks0 = ld512(ksigns_iq2xs), ks1 = ld512(ksigns_iq2xs + 64);
    const __m512i c0 = ld512(K_IOTA32), c1 = _mm512_add_epi16(c0, w16(32)), half4 = ld512(K_HALF4);
    for (size_t i = 0; i < nb; i++, x += 74, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x);
        if (!h_ok(hd)) {
            slow(dt_ggml_dequantize_iq2_xs, false, x, y, 256);
            continue;
        }
        __m512i tab[2];
        iq2_tabs16(iq2_scales16(x + 66, hd), tab);
        const __m512i v = ld512(x + 2);
        /* the sign fields as words (high byte 0 -> ksigns_iq2xs[0] = 0), packed to bytes */
        _Alignas(32) uint32_t sg[8];
        _mm256_store_si256((__m256i *)(void *)sg,
                           _mm512_cvtepi16_epi8(ksigns(_mm512_srli_epi16(v, 9), ks0, ks1)));
        const __m512i i0 =
            _mm512_and_si512(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(v)), c32(511));
        const __m512i i1 =
            _mm512_and_si512(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(v, 1)), c32(511));
        __m512i g[4];
        g[0] = gather8(iq2xs_grid, _mm512_castsi512_si256(i0));
        g[1] = gather8(iq2xs_grid, _mm512_extracti64x4_epi64(i0, 1));
        g[2] = gather8(iq2xs_grid, _mm512_castsi512_si256(i1));
        g[3] = gather8(iq2xs_grid, _mm512_extracti64x4_epi64(i1, 1));
        UNROLL
        for (int ib = 0; ib < 8; ib++)
            grid32(y + 32 * ib, bytes_w(g[ib / 2], ib % 2 ? c1 : c0), 4, iq2_slot16(ib, half4),
                   tab[ib / 4], sg[ib]);
    }
}

/* IQ2_S, 82 bytes: qs (low 8 index bits) | signs | qh (2 high index bits per run) | scales */
static FN void bf16_iq2_s(const uint8_t *x, uint16_t *y, size_t nb)
{
    const __m512i c0 = ld512(K_IOTA32), c1 = _mm512_add_epi16(c0, w16(32)), half4 = ld512(K_HALF4);
    const __m512i sh = _mm512_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6, 0, 2, 4, 6, 0, 2, 4, 6);
    for (size_t i = 0; i < nb; i++, x += 82, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x);
        if (!h_ok(hd)) {
            slow(dt_ggml_dequantize_iq2_s, false, x, y, 256);
            continue;
        }
        __m512i tab[2];
        iq2_tabs16(iq2_scales16(x + 74, hd), tab);
        /* index of run r = qs[r] | (qh[r / 4] >> 2 (r % 4) & 3) << 8 */
        const __m512i qh =
            _mm512_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(x + 66)));
        __m512i g[4];
        UNROLL
        for (int u = 0; u < 2; u++) {
            const __m512i hi = _mm512_and_si512(
                _mm512_srlv_epi32(_mm512_permutexvar_epi32(quad_lanes(4 * u), qh), sh), c32(3));
            const __m512i ix = _mm512_or_si512(_mm512_cvtepu8_epi32(ld128(x + 2 + 16 * u)),
                                               _mm512_slli_epi32(hi, 8));
            g[2 * u] = gather8(iq2s_grid, _mm512_castsi512_si256(ix));
            g[2 * u + 1] = gather8(iq2s_grid, _mm512_extracti64x4_epi64(ix, 1));
        }
        UNROLL
        for (int ib = 0; ib < 8; ib++)
            grid32(y + 32 * ib, bytes_w(g[ib / 2], ib % 2 ? c1 : c0), 4, iq2_slot16(ib, half4),
                   tab[ib / 4], ld32(x + 34 + 4 * ib));
    }
}

/* the two tables of IQ3's 8 group scales times the 8 grid values gv (lanes 0..7 = 8..15):
 * table u, word 8 (ib - 4u) + v */
HF void iq3_tabs(__m512 db, __m512 gv, __m512i tab[2])
{
    UNROLL
    for (int u = 0; u < 2; u++)
        tab[u] = bf2(_mm512_mul_ps(_mm512_permutexvar_ps(oct_lanes(4 * u), db), gv),
                     _mm512_mul_ps(_mm512_permutexvar_ps(oct_lanes(4 * u + 2), db), gv));
}
/* 16 grid entries of 4 bytes */
HF __m512i gather16(const uint32_t *grid, __m512i idx)
{
    return _mm512_i32gather_epi32(idx, (const void *)grid, 4);
}

/* IQ3_XXS, 98 bytes: 64 grid indices | 8 words w (as IQ2_XXS's); v = grid byte >> 3 */
static FN void bf16_iq3_xxs(const uint8_t *x, uint16_t *y, size_t nb)
{
    const __m512i ks0 = ld512(ksigns_iq2xs), ks1 = ld512(ksigns_iq2xs + 64);
    const __m512i c0 = ld512(K_IOTA32), c1 = _mm512_add_epi16(c0, w16(32));
    const __m512 gv = _mm512_setr_ps(4, 12, 20, 28, 36, 44, 52, 62, 4, 12, 20, 28, 36, 44, 52, 62);
    for (size_t i = 0; i < nb; i++, x += 98, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x);
        if (!h_ok(hd)) {
            slow(dt_ggml_dequantize_iq3_xxs, false, x, y, 256);
            continue;
        }
        const __m256i w = ld256(x + 66);
        /* db = d * (0.5 + s) * 0.5, lanes 0..7 */
        const __m512 sv = _mm512_cvtepi32_ps(_mm512_castsi256_si512(_mm256_srli_epi32(w, 28)));
        const __m512 db = _mm512_mul_ps(
            _mm512_mul_ps(f16v(hd), _mm512_add_ps(_mm512_set1_ps(0.5f), sv)), _mm512_set1_ps(0.5f));
        __m512i tab[2];
        iq3_tabs(db, gv, tab);
        _Alignas(64) uint32_t sg[16];
        _mm512_store_si512((void *)sg, ksigns(sign_fields(_mm512_cvtepu32_epi64(w), 0), ks0, ks1));
        __m512i g[4];
        UNROLL
        for (int j = 0; j < 4; j++)
            g[j] = gather16(iq3xxs_grid, _mm512_cvtepu8_epi32(ld128(x + 2 + 16 * j)));
        UNROLL
        for (int ib = 0; ib < 8; ib++)
            grid32(y + 32 * ib, bytes_w(g[ib / 2], ib % 2 ? c1 : c0), 3, w16(8 * (ib % 4)),
                   tab[ib / 4], sg[2 * ib]);
    }
}

/* IQ3_S, 110 bytes: qs (low 8 index bits) | qh (bit 8 of index 8 ib + k = bit k of byte ib:
 * the 64 bits in index order) | signs | scales; v = grid byte >> 1 */
static FN void bf16_iq3_s(const uint8_t *x, uint16_t *y, size_t nb)
{
    const __m512i c0 = ld512(K_IOTA32), c1 = _mm512_add_epi16(c0, w16(32));
    const __m512 gv = _mm512_setr_ps(1, 3, 5, 7, 9, 11, 13, 15, 1, 3, 5, 7, 9, 11, 13, 15);
    const __m512i nsel = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m512i nsh = _mm512_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0);
    for (size_t i = 0; i < nb; i++, x += 110, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x);
        if (!h_ok(hd)) {
            slow(dt_ggml_dequantize_iq3_s, false, x, y, 256);
            continue;
        }
        /* db = d * (1 + 2 s), s = nibble ib % 2 of byte 106 + ib / 2, lanes 0..7 */
        const __m512i sb = _mm512_cvtepu8_epi32(_mm_cvtsi32_si128((int)ld32(x + 106)));
        const __m512i s =
            _mm512_and_si512(_mm512_srlv_epi32(_mm512_permutexvar_epi32(nsel, sb), nsh), c32(15));
        const __m512 db = _mm512_mul_ps(
            f16v(hd), _mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_slli_epi32(s, 1), c32(1))));
        __m512i tab[2];
        iq3_tabs(db, gv, tab);
        uint64_t qh;
        memcpy(&qh, x + 66, 8);
        __m512i g[4];
        UNROLL
        for (int j = 0; j < 4; j++) {
            const __m512i ix = _mm512_cvtepu8_epi32(ld128(x + 2 + 16 * j));
            g[j] = gather16(iq3s_grid,
                            _mm512_mask_or_epi32(ix, (__mmask16)(qh >> (16 * j)), ix, c32(256)));
        }
        UNROLL
        for (int ib = 0; ib < 8; ib++)
            grid32(y + 32 * ib, bytes_w(g[ib / 2], ib % 2 ? c1 : c0), 1, w16(8 * (ib % 4)),
                   tab[ib / 4], ld32(x + 74 + 4 * ib));
    }
}

/* IQ1_S / IQ1_M with a non-finite d: grid + delta is never 0 (grid bytes -1, 0, 1; delta
 * +-1/8), so an infinite d makes every value +-Inf, which the finite path's arithmetic gives
 * (and vcvtne2ps2bf16 converts exactly); a NaN d makes every value d's NaN, quieted (the
 * reference's x86 rule: the NaN operand comes back), whose bfloat16 is sign | 0x7FC0. true:
 * the block is written (NaN), false: decode it as a finite one (Inf). */
HF bool iq1_nan(uint16_t hd, uint16_t *y)
{
    if ((hd & 0x3FFu) == 0)
        return false;
    const __m512i v = w16((hd & 0x8000) | 0x7FC0);
    UNROLL
    for (int k = 0; k < 8; k++)
        st(y + 32 * k, v);
    return true;
}
/* IQ1's grid byte (int8 -1, 0, 1) & 3 = 3, 0, 1: slot c holds the grid value (slot 2 unused),
 * four times */
HF __m512 iq1_gv(void)
{
    return _mm512_setr_ps(0, 1, 0, -1, 0, 1, 0, -1, 0, 1, 0, -1, 0, 1, 0, -1);
}

/* IQ1_S, 50 bytes: qs (low 8 index bits) | 8 uint16 h = | delta sign | s (3) | 4 x 3 high index
 * bits |. One table: word 4 ib + (grid byte & 3) = (d (2s + 1)) * (grid + delta) */
static FN void bf16_iq1_s(const uint8_t *x, uint16_t *y, size_t nb)
{
    const __m512i c0 = ld512(K_IOTA32), c1 = _mm512_add_epi16(c0, w16(32));
    const __m512 gv = iq1_gv();
    const __m512i sh = _mm512_setr_epi32(0, 3, 6, 9, 0, 3, 6, 9, 0, 3, 6, 9, 0, 3, 6, 9);
    const __m512i delta = c32((int)dt_ggml_bits_of(IQ1S_DELTA));
    for (size_t i = 0; i < nb; i++, x += 50, y += 256) {
        const uint16_t hd = dt_ggml_rd16(x);
        if (!h_ok(hd) && iq1_nan(hd, y))
            continue;
        const __m512i h =
            _mm512_castsi256_si512(_mm256_cvtepu16_epi32(ld128(x + 34))); /* lanes 0..7 */
        const __m512 dl = _mm512_mul_ps(
            f16v(hd),
            _mm512_cvtepi32_ps(_mm512_add_epi32(
                _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(h, 12), c32(7)), 1), c32(1))));
        /* +-1/8: IQ1S_DELTA with h's bit 15 as its sign */
        const __m512 de = _mm512_castsi512_ps(
            _mm512_or_si512(delta, _mm512_slli_epi32(_mm512_srli_epi32(h, 15), 31)));
        const __m512i tab =
            bf2(_mm512_mul_ps(_mm512_permutexvar_ps(quad_lanes(0), dl),
                              _mm512_add_ps(gv, _mm512_permutexvar_ps(quad_lanes(0), de))),
                _mm512_mul_ps(_mm512_permutexvar_ps(quad_lanes(4), dl),
                              _mm512_add_ps(gv, _mm512_permutexvar_ps(quad_lanes(4), de))));
        __m512i g[4];
        UNROLL
        for (int u = 0; u < 2; u++) {
            const __m512i hi = _mm512_and_si512(
                _mm512_srlv_epi32(_mm512_permutexvar_epi32(quad_lanes(4 * u), h), sh), c32(7));
            const __m512i ix = _mm512_or_si512(_mm512_cvtepu8_epi32(ld128(x + 2 + 16 * u)),
                                               _mm512_slli_epi32(hi, 8));
            g[2 * u] = gather8(iq1s_grid, _mm512_castsi512_si256(ix));
            g[2 * u + 1] = gather8(iq1s_grid, _mm512_extracti64x4_epi64(ix, 1));
        }
        UNROLL
        for (int ib = 0; ib < 8; ib++) {
            const __m512i w = bytes_w(g[ib / 2], ib % 2 ? c1 : c0);
            st(y + 32 * ib, look(_mm512_ternarylogic_epi32(w, w16(3), w16(4 * ib), 0xEA), tab));
        }
    }
}

static inline uint16_t iq1m_d_bits(const uint8_t *x)
{
    return (uint16_t)(dt_ggml_rd16(x + 48) >> 12 | (dt_ggml_rd16(x + 50) >> 12) << 4 |
                      (dt_ggml_rd16(x + 52) >> 12) << 8 | (dt_ggml_rd16(x + 54) >> 12) << 12);
}

/* IQ1_M, 56 bytes: qs | qh (a nibble per run: | delta sign | 3 high index bits |) | 4 uint16
 * with 16 3-bit scales (one per 16 elements) and d's nibbles. Four tables of 4 scales: word
 * 8 (t % 4) + 4 (delta negative) + (grid byte & 3) for scale t */
static const uint8_t K_BYTE_IOTA[64] = {
    0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
    22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
    44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63};
static const uint8_t K_IQ1M_NEG[64] = {
    0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};
static FN void bf16_iq1_m(const uint8_t *x, uint16_t *y, size_t nb)
{
    const __m512i c0 = ld512(K_IOTA32), c1 = _mm512_add_epi16(c0, w16(32)),
                  half8 = _mm512_slli_epi16(ld512(K_HALF4), 1);
    const __m512 gvd =
        _mm512_add_ps(iq1_gv(), _mm512_setr_ps(IQ1S_DELTA, IQ1S_DELTA, IQ1S_DELTA, IQ1S_DELTA,
                                               -IQ1S_DELTA, -IQ1S_DELTA, -IQ1S_DELTA, -IQ1S_DELTA,
                                               IQ1S_DELTA, IQ1S_DELTA, IQ1S_DELTA, IQ1S_DELTA,
                                               -IQ1S_DELTA, -IQ1S_DELTA, -IQ1S_DELTA, -IQ1S_DELTA));
    const __m512i tsel = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    const __m512i tsh = _mm512_setr_epi32(0, 3, 6, 9, 0, 3, 6, 9, 0, 3, 6, 9, 0, 3, 6, 9);
    const __m512i hsh = _mm512_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4);
    const __m512i negb = ld512(K_IQ1M_NEG);
    /* byte i of groups 2p, 2p + 1 (64 elements): qh byte 4p + i / 16 */
    const __m512i by16 =
        _mm512_srli_epi16(_mm512_and_si512(ld512(K_BYTE_IOTA), _mm512_set1_epi8(0x30)), 4);
    for (size_t i = 0; i < nb; i++, x += 56, y += 256) {
        const uint16_t hd = iq1m_d_bits(x);
        if (!h_ok(hd) && iq1_nan(hd, y))
            continue;
        /* dl[t] = d * (2 s_t + 1), s_t = bits 3 (t % 4) of word t / 4 */
        const __m512i wv = _mm512_cvtepu16_epi32(
            _mm256_castsi128_si256(_mm_loadl_epi64((const __m128i *)(const void *)(x + 48))));
        const __m512i s =
            _mm512_and_si512(_mm512_srlv_epi32(_mm512_permutexvar_epi32(tsel, wv), tsh), c32(7));
        const __m512 dl = _mm512_mul_ps(
            f16v(hd), _mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_slli_epi32(s, 1), c32(1))));
        __m512i tab[4];
        UNROLL
        for (int q = 0; q < 4; q++)
            tab[q] = bf2(_mm512_mul_ps(_mm512_permutexvar_ps(oct_lanes(4 * q), dl), gvd),
                         _mm512_mul_ps(_mm512_permutexvar_ps(oct_lanes(4 * q + 2), dl), gvd));
        /* index of run r = qs[r] | (qh[r / 2] >> 4 (r % 2) & 7) << 8 */
        const __m512i qh = _mm512_cvtepu8_epi32(ld128(x + 32));
        __m512i g[4];
        UNROLL
        for (int u = 0; u < 2; u++) {
            const __m512i hsel = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
            const __m512i hi = _mm512_and_si512(
                _mm512_srlv_epi32(_mm512_permutexvar_epi32(_mm512_add_epi32(hsel, c32(8 * u)), qh),
                                  hsh),
                c32(7));
            const __m512i ix =
                _mm512_or_si512(_mm512_cvtepu8_epi32(ld128(x + 16 * u)), _mm512_slli_epi32(hi, 8));
            g[2 * u] = gather8(iq1s_grid, _mm512_castsi512_si256(ix));
            g[2 * u + 1] = gather8(iq1s_grid, _mm512_extracti64x4_epi64(ix, 1));
        }
        /* delta signs: element bit i of groups 2p, 2p + 1 = bit 3 or 7 of qh byte 4p + i / 16 */
        const __m512i qhb = _mm512_castsi128_si512(ld128(x + 32));
        UNROLL
        for (int p = 0; p < 4; p++) {
            const __m512i bsel = _mm512_add_epi8(by16, _mm512_set1_epi8((char)(4 * p)));
            const __mmask64 neg = _mm512_test_epi8_mask(_mm512_permutexvar_epi8(bsel, qhb), negb);
            UNROLL
            for (int h = 0; h < 2; h++) {
                const int ib = 2 * p + h;
                const __m512i w = bytes_w(g[ib / 2], ib % 2 ? c1 : c0);
                const __m512i base = _mm512_ternarylogic_epi32(
                    w, w16(3), _mm512_add_epi16(half8, w16(16 * (ib % 2))), 0xEA);
                const __m512i ix =
                    _mm512_mask_add_epi16(base, (__mmask32)(neg >> (32 * h)), base, w16(4));
                st(y + 32 * ib, look(ix, tab[ib / 2]));
            }
        }
    }
}

/* =================================================================================================
 * The list and the selection
 * ============================================================================================== */
const dt_ggml_bf16_entry dt_ggml_bf16_list[] = {
    {2, bf16_q4_0},   {3, bf16_q4_1},    {6, bf16_q5_0},     {7, bf16_q5_1},    {8, bf16_q8_0},
    {9, bf16_q8_1},   {10, bf16_q2_K},   {11, bf16_q3_K},    {12, bf16_q4_K},   {13, bf16_q5_K},
    {14, bf16_q6_K},  {15, bf16_q8_K},   {16, bf16_iq2_xxs}, {17, bf16_iq2_xs}, {18, bf16_iq3_xxs},
    {19, bf16_iq1_s}, {20, bf16_iq4_nl}, {21, bf16_iq3_s},   {22, bf16_iq2_s},  {23, bf16_iq4_xs},
    {29, bf16_iq1_m}, {34, bf16_tq1_0},  {35, bf16_tq2_0},   {39, bf16_mxfp4},  {40, bf16_nvfp4},
    {41, bf16_q1_0},  {42, bf16_q2_0},
};
const size_t dt_ggml_bf16_count = sizeof dt_ggml_bf16_list / sizeof *dt_ggml_bf16_list;

dt_ggml_bf16_fn dt_ggml_bf16_dequantizer(uint32_t code)
{
    if (dt_quant_simple() || dt_isa_active() < DT_ISA_AVX512 || !dt_cpu_has_avx512bf16())
        return NULL;
    for (size_t i = 0; i < dt_ggml_bf16_count; i++)
        if (dt_ggml_bf16_list[i].code == code)
            return dt_ggml_bf16_list[i].fn;
    return NULL;
}
#endif
