/* AVX2 lookup-table kernels: every source of 8 bits or fewer (bool, uint1, uint2, int2, uint4,
 * int4, uint8, int8, float4e2m1, float6, float8, float8e8m0) into every real destination, from the
 * 256-entry table of output codes of tables.c (exact by construction: the kernels only move
 * bytes). Compiled for the target through function attributes only.
 *
 * Packed 1/2/4-bit sources have at most 16 codes: one vpshufb looks 32 of them up in a 16-entry
 * table, one per byte of the destination's entry ("plane"); the planes are interleaved into
 * whole entries by unpacks (the code vector is permuted first so that they come out in order).
 * 8-bit sources: a 256-entry table of bytes is 16 vpshufb tables of 16. With idx_h = x - 16 h
 * (wrapping), vpshufb gives table h's entry for the low nibble exactly when bit 7 of idx_h is
 * clear, i.e. when 0 <= H - h <= 7 (H: the high nibble of x). Over h = 0..7 the codes x < 128
 * thus see tables 0..H: XORing tables that hold the differences of consecutive tables (D_h =
 * T_h ^ T_(h-1), D_0 = T_0) leaves T_H. Tables 8..15 do the same for x >= 128, and bit 7 of x
 * picks one of the two sums. 4- and 8-byte entries from 8-bit sources are copied by scalar code
 * (faster than vpgatherdd on Zen 3, and than 4 or 8 planes).
 * Packed destinations: 1/2/4-bit codes, one per byte, are packed by vpmaddubsw/vpmaddwd or
 * vpmovmskb; from 8-bit sources each bit of the output code is a 256-bit table (two 16-byte
 * tables of 8 bits per low nibble, indexed by the high nibble's bit). */
#if defined(__x86_64__) && defined(__GNUC__)
#include "kernels.h"
#include "x86_attrs.h"

#include <immintrin.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define FN DT_TARGET_AVX2

static FN DT_INLINE __m256i ld(const uint8_t *p) { return _mm256_loadu_si256((const __m256i *)p); }
static FN DT_INLINE void st(uint8_t *p, __m256i v) { _mm256_storeu_si256((__m256i *)p, v); }

/* Element loop over blocks of B elements of S source bits and D destination bits (B * S and
 * B * D multiples of 8; begin is a multiple of 8). Every block reads its whole source before it
 * writes, and the output of a block ends where its source ends or before (D <= S in place), so
 * in place works. The tail goes through zeroed local blocks. */
#define TABLE_LOOP(B, S, D, BLOCK)                                                              \
    do {                                                                                        \
        const uint8_t *s_ = (const uint8_t *)src + begin * (S) / 8;                             \
        uint8_t *d_ = (uint8_t *)dst + begin * (D) / 8;                                         \
        const size_t n_ = end - begin;                                                          \
        size_t i_ = 0;                                                                          \
        for (; i_ + (B) <= n_; i_ += (B)) {                                                     \
            if ((B) * (S) / 8 >= 64 || i_ * (S) / 8 % 64 == 0)                                  \
                dt_prefetch_span(s_ + i_ * (S) / 8, (B) * (S) / 8 < 64 ? 1 : (B) * (S) / 8);    \
            BLOCK(d_ + i_ * (D) / 8, s_ + i_ * (S) / 8);                                        \
        }                                                                                       \
        if (i_ < n_) {                                                                          \
            _Alignas(32) uint8_t tin_[(B) * (S) / 8], tout_[(B) * (D) / 8];                     \
            memset(tin_, 0, sizeof tin_);                                                       \
            memcpy(tin_, s_ + i_ * (S) / 8, ((n_ - i_) * (S) + 7) / 8);                         \
            BLOCK(tout_, tin_);                                                                 \
            memcpy(d_ + i_ * (D) / 8, tout_, ((n_ - i_) * (D) + 7) / 8);                        \
        }                                                                                       \
    } while (0)

/* ---- codes of packed sources ------------------------------------------------------------------ */

/* The codes of 32 elements of an S-bit source at p (exactly 4 * S bytes), one per byte, in
 * element order. S = 8: a byte source whose table has two entries, 0 and all others (bool):
 * 0 or 1. */
static FN DT_INLINE __m256i sub_codes(const uint8_t *p, int S)
{
    switch (S) {
    case 8:
        return _mm256_min_epu8(ld(p), _mm256_set1_epi8(1));
    case 4: { /* word i = byte i: its low nibble stays in byte 0, the high one moves to byte 1 */
        const __m256i y = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)p));
        return _mm256_and_si256(_mm256_or_si256(y, _mm256_slli_epi16(y, 4)),
                                _mm256_set1_epi8(0x0F));
    }
    case 2: { /* dword i = byte i: copies at bits 0, 6, 12, 18 put its fields at bytes 0..3 */
        __m256i y = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p));
        y = _mm256_or_si256(y, _mm256_slli_epi32(y, 6));
        y = _mm256_or_si256(y, _mm256_slli_epi32(y, 12));
        return _mm256_and_si256(y, _mm256_set1_epi8(3));
    }
    default: { /* each byte to 8 bytes, each keeping its bit */
        int v;
        memcpy(&v, p, 4);
        const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                                2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
        const __m256i b = _mm256_shuffle_epi8(_mm256_set1_epi32(v), spread);
        const __m256i bits = _mm256_set1_epi64x((long long)0x8040201008040201ull);
        return _mm256_min_epu8(_mm256_and_si256(b, bits), _mm256_set1_epi8(1));
    }
    }
}

/* ---- entries of W bytes from W byte planes ---------------------------------------------------- */

/* The codes permuted so that interleave_store writes the entries in element order (the unpacks
 * work within 128-bit lanes). W = 2: qwords 0 2 1 3; W = 4: dwords 0 2 4 6 1 3 5 7; W = 8:
 * even words to the low lane, odd words to the high one. */
static FN DT_INLINE __m256i pre_permute(__m256i c, int W)
{
    switch (W) {
    case 1:
        return c;
    case 2:
        return _mm256_permute4x64_epi64(c, 0xD8);
    case 4:
        return _mm256_permutevar8x32_epi32(c, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
    default: {
        const __m256i eo = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15,
                                            0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
        return _mm256_permute4x64_epi64(_mm256_shuffle_epi8(c, eo), 0xD8);
    }
    }
}

/* 32 entries of W bytes from the planes p[0..W) (of pre-permuted codes) to d: 32 * W bytes */
static FN DT_INLINE void interleave_store(uint8_t *d, const __m256i *p, int W)
{
    switch (W) {
    case 1:
        st(d, p[0]);
        return;
    case 2:
        st(d, _mm256_unpacklo_epi8(p[0], p[1]));
        st(d + 32, _mm256_unpackhi_epi8(p[0], p[1]));
        return;
    case 4: {
        const __m256i al = _mm256_unpacklo_epi8(p[0], p[1]), ah = _mm256_unpackhi_epi8(p[0], p[1]);
        const __m256i bl = _mm256_unpacklo_epi8(p[2], p[3]), bh = _mm256_unpackhi_epi8(p[2], p[3]);
        st(d, _mm256_unpacklo_epi16(al, bl));
        st(d + 32, _mm256_unpackhi_epi16(al, bl));
        st(d + 64, _mm256_unpacklo_epi16(ah, bh));
        st(d + 96, _mm256_unpackhi_epi16(ah, bh));
        return;
    }
    default: {
        __m256i a[4][2], b[2][2][2];
        for (int j = 0; j < 4; j++) {
            a[j][0] = _mm256_unpacklo_epi8(p[2 * j], p[2 * j + 1]);
            a[j][1] = _mm256_unpackhi_epi8(p[2 * j], p[2 * j + 1]);
        }
        for (int m = 0; m < 2; m++)
            for (int h = 0; h < 2; h++) {
                b[m][h][0] = _mm256_unpacklo_epi16(a[2 * m][h], a[2 * m + 1][h]);
                b[m][h][1] = _mm256_unpackhi_epi16(a[2 * m][h], a[2 * m + 1][h]);
            }
        for (int h1 = 0; h1 < 2; h1++)
            for (int h2 = 0; h2 < 2; h2++) {
                uint8_t *o = d + 64 * (2 * h1 + h2);
                st(o, _mm256_unpacklo_epi32(b[0][h1][h2], b[1][h1][h2]));
                st(o + 32, _mm256_unpackhi_epi32(b[0][h1][h2], b[1][h1][h2]));
            }
        return;
    }
    }
}

/* ---- packed destinations ------------------------------------------------------------------- */

/* 32 codes of D bits (one per byte, the bits above the code clear; D = 1: 0 or 0xFF) packed
 * into 4 * D bytes at d */
static FN DT_INLINE void pack_store(uint8_t *d, __m256i c, int D)
{
    switch (D) {
    case 1: {
        const int m = _mm256_movemask_epi8(c);
        memcpy(d, &m, 4);
        return;
    }
    case 2: { /* c0 + 4 c1 in words, + 16 (c2 + 4 c3) in dwords, then byte 0 of each dword */
        const __m256i w = _mm256_maddubs_epi16(c, _mm256_set1_epi16(0x0401));
        const __m256i q = _mm256_madd_epi16(w, _mm256_set1_epi32(0x00100001));
        const __m256i sel = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                             -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1,
                                             -1, -1, -1, -1);
        const __m256i b = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(q, sel),
                                                      _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0));
        _mm_storel_epi64((__m128i *)d, _mm256_castsi256_si128(b));
        return;
    }
    default: { /* c0 + 16 c1 in words, then the low bytes */
        const __m256i w = _mm256_maddubs_epi16(c, _mm256_set1_epi16(0x1001));
        const __m256i b = _mm256_permute4x64_epi64(_mm256_packus_epi16(w, w), 0x08);
        _mm_storeu_si128((__m128i *)d, _mm256_castsi256_si128(b));
        return;
    }
    }
}

/* ---- packed sources: 16-entry tables ------------------------------------------------------- */

/* S-bit source -> W-byte entries; k->local: W planes of 32 bytes (16 entries, twice) */
#define SUBW(S, W)                                                                              \
    static FN void sub##S##_w##W(const dt_kernel *k, void *dst, const void *src, size_t begin, \
                                 size_t end)                                                    \
    {                                                                                           \
        enum { S_ = S };                                                                        \
        const uint8_t *restrict L = k->table;                                                            \
        __m256i tab[W];                                                                         \
        for (int j = 0; j < (W); j++)                                                           \
            tab[j] = ld(L + 32 * j);                                                     \
        TABLE_LOOP(32, S, 8 * (W), SUBW_BLOCK_##W);                                             \
    }
#define SUBW_BODY(W, out, in, S)                                                                \
    do {                                                                                        \
        const __m256i c_ = pre_permute(sub_codes((in), (S)), (W));                              \
        __m256i p_[W];                                                                          \
        for (int j = 0; j < (W); j++)                                                           \
            p_[j] = _mm256_shuffle_epi8(tab[j], c_);                                            \
        interleave_store((out), p_, (W));                                                       \
    } while (0)
#define SUBW_BLOCK_1(out, in) SUBW_BODY(1, out, in, S_)
#define SUBW_BLOCK_2(out, in) SUBW_BODY(2, out, in, S_)
#define SUBW_BLOCK_4(out, in) SUBW_BODY(4, out, in, S_)
#define SUBW_BLOCK_8(out, in) SUBW_BODY(8, out, in, S_)
SUBW(1, 1)
SUBW(1, 2)
SUBW(1, 4)
SUBW(1, 8)
SUBW(2, 1)
SUBW(2, 2)
SUBW(2, 4)
SUBW(2, 8)
SUBW(4, 1)
SUBW(4, 2)
SUBW(4, 4)
SUBW(4, 8)
SUBW(8, 1)
SUBW(8, 2)
SUBW(8, 4)
SUBW(8, 8)

/* the two-entry byte source -> D-bit packed codes; k->local: the table of 0 and 1 (D = 1: 0 or
 * 0xFF) */
#define ZP(D)                                                                                   \
    static FN void zero_p##D(const dt_kernel *k, void *dst, const void *src, size_t begin,     \
                             size_t end)                                                        \
    {                                                                                           \
        const __m256i tab = ld((const uint8_t *)k->table);                                      \
        TABLE_LOOP(32, 8, D, ZP_BLOCK_##D);                                                     \
    }
#define ZP_BLOCK_1(out, in) pack_store((out), _mm256_shuffle_epi8(tab, sub_codes((in), 8)), 1)
#define ZP_BLOCK_2(out, in) pack_store((out), _mm256_shuffle_epi8(tab, sub_codes((in), 8)), 2)
#define ZP_BLOCK_4(out, in) pack_store((out), _mm256_shuffle_epi8(tab, sub_codes((in), 8)), 4)
ZP(1)
ZP(2)
ZP(4)

/* S-bit source -> D-bit packed destination, a source nibble (4 / S elements) at a time: its
 * 4 D / S output bits (R4) come from 16-entry tables. R4 = 16 or 8: byte planes t0 (and t1) of
 * the nibble's output, interleaved like entries of 4 / 2 bytes; R4 <= 4: t0 gives the low
 * nibble's bits, t1 the high one's (shifted by R4), ORed into 8 / 4 / 2 bits per source byte,
 * then packed. 32 source bytes a block. */
static FN DT_INLINE void nib_block(uint8_t *out, const uint8_t *in, __m256i t0, __m256i t1,
                                   int R4)
{
    const __m256i x = pre_permute(ld(in), R4 == 16 ? 4 : R4 == 8 ? 2 : 1);
    const __m256i m = _mm256_set1_epi8(0x0F);
    const __m256i lo = _mm256_and_si256(x, m), hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), m);
    if (R4 == 16) {
        const __m256i p[4] = {_mm256_shuffle_epi8(t0, lo), _mm256_shuffle_epi8(t1, lo),
                              _mm256_shuffle_epi8(t0, hi), _mm256_shuffle_epi8(t1, hi)};
        interleave_store(out, p, 4);
    } else if (R4 == 8) {
        const __m256i p[2] = {_mm256_shuffle_epi8(t0, lo), _mm256_shuffle_epi8(t0, hi)};
        interleave_store(out, p, 2);
    } else {
        const __m256i c = _mm256_or_si256(_mm256_shuffle_epi8(t0, lo), _mm256_shuffle_epi8(t1, hi));
        if (R4 == 4)
            st(out, c);
        else
            pack_store(out, c, 2 * R4); /* 4 bits per byte (R4 = 2) or 2 bits (R4 = 1) */
    }
}
#define NIB(S, D)                                                                               \
    static FN void nib##S##_##D(const dt_kernel *k, void *dst, const void *src, size_t begin,  \
                                size_t end)                                                     \
    {                                                                                           \
        const uint8_t *restrict L = k->table;                                                            \
        const __m256i t0 = ld(L), t1 = ld(L + 32);                                              \
        TABLE_LOOP(256 / (S), S, D, NIB_BLOCK_##S##_##D);                                       \
    }
#define NIB_BLOCK_1_1(out, in) nib_block((out), (in), t0, t1, 4)
#define NIB_BLOCK_1_2(out, in) nib_block((out), (in), t0, t1, 8)
#define NIB_BLOCK_1_4(out, in) nib_block((out), (in), t0, t1, 16)
#define NIB_BLOCK_2_1(out, in) nib_block((out), (in), t0, t1, 2)
#define NIB_BLOCK_2_2(out, in) nib_block((out), (in), t0, t1, 4)
#define NIB_BLOCK_2_4(out, in) nib_block((out), (in), t0, t1, 8)
#define NIB_BLOCK_4_1(out, in) nib_block((out), (in), t0, t1, 1)
#define NIB_BLOCK_4_2(out, in) nib_block((out), (in), t0, t1, 2)
#define NIB_BLOCK_4_4(out, in) nib_block((out), (in), t0, t1, 4)
NIB(1, 1)
NIB(1, 2)
NIB(1, 4)
NIB(2, 1)
NIB(2, 2)
NIB(2, 4)
NIB(4, 1)
NIB(4, 2)
NIB(4, 4)

/* ---- 8-bit sources: 256-entry tables ----------------------------------------------------------- */

/* Keeps a value in a register as computed: gcc would otherwise turn the chain of subtractions
 * below into 15 constants and spill them (1.3x slower here). */
static FN DT_INLINE void opaque(__m256i *x) { __asm__("" : "+x"(*x)); }

/* plane of bytes for 32 codes x: tb holds 16 tables of 32 bytes (differences, see the top) */
static FN DT_INLINE __m256i lut256(const uint8_t *tb, __m256i x)
{
#if defined(__clang__) /* clang keeps the 15 constants x - idx_h in registers and XORs as a tree */
#define P(h) _mm256_shuffle_epi8(ld(tb + 32 * (h)), _mm256_add_epi8(x, _mm256_set1_epi8((char)(-16 * (h)))))
#define X(a, b) _mm256_xor_si256(a, b)
    const __m256i a = X(X(X(P(0), P(1)), X(P(2), P(3))), X(X(P(4), P(5)), X(P(6), P(7))));
    const __m256i b = X(X(X(P(8), P(9)), X(P(10), P(11))), X(X(P(12), P(13)), X(P(14), P(15))));
#undef P
#undef X
#else
    const __m256i c16 = _mm256_set1_epi8(16);
    __m256i idx = x, a = _mm256_shuffle_epi8(ld(tb), idx), b;
#pragma GCC unroll 8
    for (int h = 1; h < 8; h++) {
        idx = _mm256_sub_epi8(idx, c16);
        opaque(&idx);
        a = _mm256_xor_si256(a, _mm256_shuffle_epi8(ld(tb + 32 * h), idx));
    }
    idx = _mm256_sub_epi8(idx, c16);
    opaque(&idx);
    b = _mm256_shuffle_epi8(ld(tb + 256), idx);
#pragma GCC unroll 8
    for (int h = 9; h < 16; h++) {
        idx = _mm256_sub_epi8(idx, c16);
        opaque(&idx);
        b = _mm256_xor_si256(b, _mm256_shuffle_epi8(ld(tb + 32 * h), idx));
    }
#endif
    return _mm256_blendv_epi8(a, b, x);
}

/* 8-bit -> 1-byte entries, the full table; 64 elements a block */
#define B8W1_BLOCK(out, in)                                                                     \
    do {                                                                                        \
        const __m256i x0_ = ld(in), x1_ = ld((in) + 32);                                        \
        st((out), lut256(L, x0_));                                                              \
        st((out) + 32, lut256(L, x1_));                                                         \
    } while (0)
static FN void b8_w1(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    const uint8_t *restrict L = k->table;
    TABLE_LOOP(64, 8, 8, B8W1_BLOCK);
}

/* ---- 8-bit sources whose table has less in it ------------------------------------------------
 * Found when the kernel is set up (red_find): the entry of x is the entry of a small index below
 * 2^K (K = 4..7) in a table of 2^K, then 2^(K-4) tables of 16 per byte plane suffice (one
 * vpshufb for K = 4, 8 for K = 7, instead of 16), and up to two codes whose entries follow no
 * rule are put in after. The index is
 *   - (min(max(x ^ flip, lo), hi) - lo) & mask: a table repeating every 2^K codes (float6: K = 6;
 *     8-bit integers into 4/2/1-bit ones under wrap: K = 4), or constant below lo and above hi
 *     (e8m0 into narrow floats, saturating integers; flip = 0x80 compares signed);
 *   - or (red_s, 1- and 2-byte entries) x & mask, or |x| & mask (two's complement sources): the
 *     entries of negative codes (bit 7 set) are those of the positive ones with the sign fixed,
 *     entry ^ sx (sign-magnitude floats: sx = the sign) or -entry (floats into 8-bit integers
 *     rounded symmetrically: sx = sn = 0xFF), except entries e with
 *     (e & em) == ev (fnuz destinations: their NaN and zero, em = 0x7F, ev = 0; else em = 0,
 *     ev = 1: none). */
enum {
    RED_FLIP = 512, RED_LO = 544, RED_HI = 576, RED_MASK = 608, /* the index */
    RED_SX = 640,               /* + 32 p: plane p's sign fix */
    RED_SPX = 1152,             /* + 32 j: special code j (j < 2) */
    RED_SPV = 1216,             /* + 32 (8 j + p): byte p of its entry */
    RED_ABS = 1728, RED_EM = 1760, RED_EV = 1792
};

/* the index of each byte of x (below 2^K) */
static FN DT_INLINE __m256i red_index(const uint8_t *loc, __m256i x)
{
    const __m256i lo = ld(loc + RED_LO);
    const __m256i c = _mm256_min_epu8(_mm256_max_epu8(_mm256_xor_si256(x, ld(loc + RED_FLIP)), lo),
                                      ld(loc + RED_HI));
    return _mm256_and_si256(_mm256_sub_epi8(c, lo), ld(loc + RED_MASK));
}

/* the 2^K-entry table at tb (2^(K-4) difference tables of 32 bytes) looked up at idx < 2^K (as
 * lut256 over one half: bit 7 of idx - 16 h is set exactly when h exceeds the high nibble) */
static FN DT_INLINE __m256i lut_small(const uint8_t *tb, __m256i idx, int K)
{
    const __m256i c16 = _mm256_set1_epi8(16);
    __m256i a = _mm256_shuffle_epi8(ld(tb), idx);
#pragma GCC unroll 8
    for (int h = 1; h < 8; h++) { /* a constant count: the annotation needs one */
        if (h >= 1 << (K - 4))
            break;
        idx = _mm256_sub_epi8(idx, c16);
        opaque(&idx);
        a = _mm256_xor_si256(a, _mm256_shuffle_epi8(ld(tb + 32 * h), idx));
    }
    return a;
}

/* up to two codes whose entries follow no rule: their entries are put in (plane p) */
static FN DT_INLINE __m256i red_special(const uint8_t *loc, int p, __m256i v, __m256i m0,
                                        __m256i m1)
{
    v = _mm256_blendv_epi8(v, ld(loc + RED_SPV + 32 * p), m0);
    return _mm256_blendv_epi8(v, ld(loc + RED_SPV + 32 * (8 + p)), m1);
}

/* byte plane p of 32 codes x; SGN: the sign form (EXC 1: with exceptions, 2: negated) */
static FN DT_INLINE __m256i red_plane(const uint8_t *loc, int p, __m256i x, __m256i idx, int K,
                                      int SGN, int EXC)
{
    const __m256i a = lut_small(loc + (32 << (K - 4)) * p, idx, K);
    if (!SGN)
        return a;
    __m256i f = EXC == 2 ? _mm256_sub_epi8(_mm256_setzero_si256(), a)
                         : _mm256_xor_si256(a, ld(loc + RED_SX + 32 * p));
    if (EXC == 1)
        f = _mm256_blendv_epi8(f, a, _mm256_cmpeq_epi8(_mm256_and_si256(a, ld(loc + RED_EM)),
                                                       ld(loc + RED_EV)));
    return _mm256_blendv_epi8(a, f, x);
}

/* two blocks of 32 elements (W-byte entries) */
#define TWICE(BLOCK, out, in, W)                                                                \
    do {                                                                                        \
        BLOCK(out, in);                                                                         \
        BLOCK((out) + 32 * (W), (in) + 32);                                                     \
    } while (0)

/* W-byte entries; 32 elements a block. Compiled per form so that no operation is spent on
 * what the table does not need: IDX (0: x & mask, 1: the whole index), SGN (the sign form, ABS:
 * |x|, EXC: with exceptions), SPC (special codes). */
#define REDW_BODY(out, in, W, K, IDX, SGN, ABS, EXC, SPC)                                       \
    do {                                                                                        \
        const __m256i x_ = pre_permute(ld(in), (W));                                            \
        __m256i ix_;                                                                            \
        if (SGN)                                                                                \
            ix_ = _mm256_and_si256(ABS ? _mm256_abs_epi8(x_) : x_, ld(L + RED_MASK));           \
        else if (IDX)                                                                           \
            ix_ = red_index(L, x_);                                                             \
        else                                                                                    \
            ix_ = _mm256_and_si256(x_, ld(L + RED_MASK));                                       \
        __m256i m0_ = x_, m1_ = x_;                                                             \
        if (SPC) {                                                                              \
            m0_ = _mm256_cmpeq_epi8(x_, ld(L + RED_SPX));                                       \
            m1_ = _mm256_cmpeq_epi8(x_, ld(L + RED_SPX + 32));                                  \
        }                                                                                       \
        __m256i p_[W];                                                                          \
        for (int p = 0; p < (W); p++) {                                                         \
            p_[p] = red_plane(L, p, x_, ix_, (K), (SGN), (EXC));                                \
            if (SPC)                                                                            \
                p_[p] = red_special(L, p, p_[p], m0_, m1_);                                     \
        }                                                                                       \
        interleave_store((out), p_, (W));                                                       \
    } while (0)
#define REDW(name, W, K, IDX, SGN, ABS, EXC, SPC)                                               \
    static FN void name(const dt_kernel *k, void *dst, const void *src, size_t begin,          \
                        size_t end)                                                             \
    {                                                                                           \
        const uint8_t *restrict L = k->table;                                                            \
        TABLE_LOOP(64, 8, 8 * (W), name##_BLOCK2);                                              \
    }
#define red_w1_k4_i0_s0_BLOCK(out, in) REDW_BODY(out, in, 1, 4, 0, 0, 0, 0, 0)
#define red_w1_k4_i0_s0_BLOCK2(out, in) TWICE(red_w1_k4_i0_s0_BLOCK, out, in, 1)
REDW(red_w1_k4_i0_s0, 1, 4, 0, 0, 0, 0, 0)
#define red_w1_k4_i0_s1_BLOCK(out, in) REDW_BODY(out, in, 1, 4, 0, 0, 0, 0, 1)
#define red_w1_k4_i0_s1_BLOCK2(out, in) TWICE(red_w1_k4_i0_s1_BLOCK, out, in, 1)
REDW(red_w1_k4_i0_s1, 1, 4, 0, 0, 0, 0, 1)
#define red_w1_k4_i1_s0_BLOCK(out, in) REDW_BODY(out, in, 1, 4, 1, 0, 0, 0, 0)
#define red_w1_k4_i1_s0_BLOCK2(out, in) TWICE(red_w1_k4_i1_s0_BLOCK, out, in, 1)
REDW(red_w1_k4_i1_s0, 1, 4, 1, 0, 0, 0, 0)
#define red_w1_k4_i1_s1_BLOCK(out, in) REDW_BODY(out, in, 1, 4, 1, 0, 0, 0, 1)
#define red_w1_k4_i1_s1_BLOCK2(out, in) TWICE(red_w1_k4_i1_s1_BLOCK, out, in, 1)
REDW(red_w1_k4_i1_s1, 1, 4, 1, 0, 0, 0, 1)
#define red_w1_k5_i0_s0_BLOCK(out, in) REDW_BODY(out, in, 1, 5, 0, 0, 0, 0, 0)
#define red_w1_k5_i0_s0_BLOCK2(out, in) TWICE(red_w1_k5_i0_s0_BLOCK, out, in, 1)
REDW(red_w1_k5_i0_s0, 1, 5, 0, 0, 0, 0, 0)
#define red_w1_k5_i0_s1_BLOCK(out, in) REDW_BODY(out, in, 1, 5, 0, 0, 0, 0, 1)
#define red_w1_k5_i0_s1_BLOCK2(out, in) TWICE(red_w1_k5_i0_s1_BLOCK, out, in, 1)
REDW(red_w1_k5_i0_s1, 1, 5, 0, 0, 0, 0, 1)
#define red_w1_k5_i1_s0_BLOCK(out, in) REDW_BODY(out, in, 1, 5, 1, 0, 0, 0, 0)
#define red_w1_k5_i1_s0_BLOCK2(out, in) TWICE(red_w1_k5_i1_s0_BLOCK, out, in, 1)
REDW(red_w1_k5_i1_s0, 1, 5, 1, 0, 0, 0, 0)
#define red_w1_k5_i1_s1_BLOCK(out, in) REDW_BODY(out, in, 1, 5, 1, 0, 0, 0, 1)
#define red_w1_k5_i1_s1_BLOCK2(out, in) TWICE(red_w1_k5_i1_s1_BLOCK, out, in, 1)
REDW(red_w1_k5_i1_s1, 1, 5, 1, 0, 0, 0, 1)
#define red_w1_k6_i0_s0_BLOCK(out, in) REDW_BODY(out, in, 1, 6, 0, 0, 0, 0, 0)
#define red_w1_k6_i0_s0_BLOCK2(out, in) TWICE(red_w1_k6_i0_s0_BLOCK, out, in, 1)
REDW(red_w1_k6_i0_s0, 1, 6, 0, 0, 0, 0, 0)
#define red_w1_k6_i0_s1_BLOCK(out, in) REDW_BODY(out, in, 1, 6, 0, 0, 0, 0, 1)
#define red_w1_k6_i0_s1_BLOCK2(out, in) TWICE(red_w1_k6_i0_s1_BLOCK, out, in, 1)
REDW(red_w1_k6_i0_s1, 1, 6, 0, 0, 0, 0, 1)
#define red_w1_k6_i1_s0_BLOCK(out, in) REDW_BODY(out, in, 1, 6, 1, 0, 0, 0, 0)
#define red_w1_k6_i1_s0_BLOCK2(out, in) TWICE(red_w1_k6_i1_s0_BLOCK, out, in, 1)
REDW(red_w1_k6_i1_s0, 1, 6, 1, 0, 0, 0, 0)
#define red_w1_k6_i1_s1_BLOCK(out, in) REDW_BODY(out, in, 1, 6, 1, 0, 0, 0, 1)
#define red_w1_k6_i1_s1_BLOCK2(out, in) TWICE(red_w1_k6_i1_s1_BLOCK, out, in, 1)
REDW(red_w1_k6_i1_s1, 1, 6, 1, 0, 0, 0, 1)
#define red_w1_k7_i0_s0_BLOCK(out, in) REDW_BODY(out, in, 1, 7, 0, 0, 0, 0, 0)
#define red_w1_k7_i0_s0_BLOCK2(out, in) TWICE(red_w1_k7_i0_s0_BLOCK, out, in, 1)
REDW(red_w1_k7_i0_s0, 1, 7, 0, 0, 0, 0, 0)
#define red_w1_k7_i0_s1_BLOCK(out, in) REDW_BODY(out, in, 1, 7, 0, 0, 0, 0, 1)
#define red_w1_k7_i0_s1_BLOCK2(out, in) TWICE(red_w1_k7_i0_s1_BLOCK, out, in, 1)
REDW(red_w1_k7_i0_s1, 1, 7, 0, 0, 0, 0, 1)
#define red_w1_k7_i1_s0_BLOCK(out, in) REDW_BODY(out, in, 1, 7, 1, 0, 0, 0, 0)
#define red_w1_k7_i1_s0_BLOCK2(out, in) TWICE(red_w1_k7_i1_s0_BLOCK, out, in, 1)
REDW(red_w1_k7_i1_s0, 1, 7, 1, 0, 0, 0, 0)
#define red_w1_k7_i1_s1_BLOCK(out, in) REDW_BODY(out, in, 1, 7, 1, 0, 0, 0, 1)
#define red_w1_k7_i1_s1_BLOCK2(out, in) TWICE(red_w1_k7_i1_s1_BLOCK, out, in, 1)
REDW(red_w1_k7_i1_s1, 1, 7, 1, 0, 0, 0, 1)
#define red_w2_k4_i0_s0_BLOCK(out, in) REDW_BODY(out, in, 2, 4, 0, 0, 0, 0, 0)
#define red_w2_k4_i0_s0_BLOCK2(out, in) TWICE(red_w2_k4_i0_s0_BLOCK, out, in, 2)
REDW(red_w2_k4_i0_s0, 2, 4, 0, 0, 0, 0, 0)
#define red_w2_k4_i0_s1_BLOCK(out, in) REDW_BODY(out, in, 2, 4, 0, 0, 0, 0, 1)
#define red_w2_k4_i0_s1_BLOCK2(out, in) TWICE(red_w2_k4_i0_s1_BLOCK, out, in, 2)
REDW(red_w2_k4_i0_s1, 2, 4, 0, 0, 0, 0, 1)
#define red_w2_k4_i1_s0_BLOCK(out, in) REDW_BODY(out, in, 2, 4, 1, 0, 0, 0, 0)
#define red_w2_k4_i1_s0_BLOCK2(out, in) TWICE(red_w2_k4_i1_s0_BLOCK, out, in, 2)
REDW(red_w2_k4_i1_s0, 2, 4, 1, 0, 0, 0, 0)
#define red_w2_k4_i1_s1_BLOCK(out, in) REDW_BODY(out, in, 2, 4, 1, 0, 0, 0, 1)
#define red_w2_k4_i1_s1_BLOCK2(out, in) TWICE(red_w2_k4_i1_s1_BLOCK, out, in, 2)
REDW(red_w2_k4_i1_s1, 2, 4, 1, 0, 0, 0, 1)
#define red_w2_k5_i0_s0_BLOCK(out, in) REDW_BODY(out, in, 2, 5, 0, 0, 0, 0, 0)
#define red_w2_k5_i0_s0_BLOCK2(out, in) TWICE(red_w2_k5_i0_s0_BLOCK, out, in, 2)
REDW(red_w2_k5_i0_s0, 2, 5, 0, 0, 0, 0, 0)
#define red_w2_k5_i0_s1_BLOCK(out, in) REDW_BODY(out, in, 2, 5, 0, 0, 0, 0, 1)
#define red_w2_k5_i0_s1_BLOCK2(out, in) TWICE(red_w2_k5_i0_s1_BLOCK, out, in, 2)
REDW(red_w2_k5_i0_s1, 2, 5, 0, 0, 0, 0, 1)
#define red_w2_k5_i1_s0_BLOCK(out, in) REDW_BODY(out, in, 2, 5, 1, 0, 0, 0, 0)
#define red_w2_k5_i1_s0_BLOCK2(out, in) TWICE(red_w2_k5_i1_s0_BLOCK, out, in, 2)
REDW(red_w2_k5_i1_s0, 2, 5, 1, 0, 0, 0, 0)
#define red_w2_k5_i1_s1_BLOCK(out, in) REDW_BODY(out, in, 2, 5, 1, 0, 0, 0, 1)
#define red_w2_k5_i1_s1_BLOCK2(out, in) TWICE(red_w2_k5_i1_s1_BLOCK, out, in, 2)
REDW(red_w2_k5_i1_s1, 2, 5, 1, 0, 0, 0, 1)
#define red_w2_k6_i0_s0_BLOCK(out, in) REDW_BODY(out, in, 2, 6, 0, 0, 0, 0, 0)
#define red_w2_k6_i0_s0_BLOCK2(out, in) TWICE(red_w2_k6_i0_s0_BLOCK, out, in, 2)
REDW(red_w2_k6_i0_s0, 2, 6, 0, 0, 0, 0, 0)
#define red_w2_k6_i0_s1_BLOCK(out, in) REDW_BODY(out, in, 2, 6, 0, 0, 0, 0, 1)
#define red_w2_k6_i0_s1_BLOCK2(out, in) TWICE(red_w2_k6_i0_s1_BLOCK, out, in, 2)
REDW(red_w2_k6_i0_s1, 2, 6, 0, 0, 0, 0, 1)
#define red_w2_k6_i1_s0_BLOCK(out, in) REDW_BODY(out, in, 2, 6, 1, 0, 0, 0, 0)
#define red_w2_k6_i1_s0_BLOCK2(out, in) TWICE(red_w2_k6_i1_s0_BLOCK, out, in, 2)
REDW(red_w2_k6_i1_s0, 2, 6, 1, 0, 0, 0, 0)
#define red_w2_k6_i1_s1_BLOCK(out, in) REDW_BODY(out, in, 2, 6, 1, 0, 0, 0, 1)
#define red_w2_k6_i1_s1_BLOCK2(out, in) TWICE(red_w2_k6_i1_s1_BLOCK, out, in, 2)
REDW(red_w2_k6_i1_s1, 2, 6, 1, 0, 0, 0, 1)
#define red_w2_k7_i0_s0_BLOCK(out, in) REDW_BODY(out, in, 2, 7, 0, 0, 0, 0, 0)
#define red_w2_k7_i0_s0_BLOCK2(out, in) TWICE(red_w2_k7_i0_s0_BLOCK, out, in, 2)
REDW(red_w2_k7_i0_s0, 2, 7, 0, 0, 0, 0, 0)
#define red_w2_k7_i0_s1_BLOCK(out, in) REDW_BODY(out, in, 2, 7, 0, 0, 0, 0, 1)
#define red_w2_k7_i0_s1_BLOCK2(out, in) TWICE(red_w2_k7_i0_s1_BLOCK, out, in, 2)
REDW(red_w2_k7_i0_s1, 2, 7, 0, 0, 0, 0, 1)
#define red_w2_k7_i1_s0_BLOCK(out, in) REDW_BODY(out, in, 2, 7, 1, 0, 0, 0, 0)
#define red_w2_k7_i1_s0_BLOCK2(out, in) TWICE(red_w2_k7_i1_s0_BLOCK, out, in, 2)
REDW(red_w2_k7_i1_s0, 2, 7, 1, 0, 0, 0, 0)
#define red_w2_k7_i1_s1_BLOCK(out, in) REDW_BODY(out, in, 2, 7, 1, 0, 0, 0, 1)
#define red_w2_k7_i1_s1_BLOCK2(out, in) TWICE(red_w2_k7_i1_s1_BLOCK, out, in, 2)
REDW(red_w2_k7_i1_s1, 2, 7, 1, 0, 0, 0, 1)
#define red_w4_k4_BLOCK(out, in) REDW_BODY(out, in, 4, 4, 1, 0, 0, 0, 1)
#define red_w4_k4_BLOCK2(out, in) TWICE(red_w4_k4_BLOCK, out, in, 4)
REDW(red_w4_k4, 4, 4, 1, 0, 0, 0, 1)
#define red_w4_k5_BLOCK(out, in) REDW_BODY(out, in, 4, 5, 1, 0, 0, 0, 1)
#define red_w4_k5_BLOCK2(out, in) TWICE(red_w4_k5_BLOCK, out, in, 4)
REDW(red_w4_k5, 4, 5, 1, 0, 0, 0, 1)
#define red_w4_k6_BLOCK(out, in) REDW_BODY(out, in, 4, 6, 1, 0, 0, 0, 1)
#define red_w4_k6_BLOCK2(out, in) TWICE(red_w4_k6_BLOCK, out, in, 4)
REDW(red_w4_k6, 4, 6, 1, 0, 0, 0, 1)
#define red_w8_k4_BLOCK(out, in) REDW_BODY(out, in, 8, 4, 1, 0, 0, 0, 1)
#define red_w8_k4_BLOCK2(out, in) TWICE(red_w8_k4_BLOCK, out, in, 8)
REDW(red_w8_k4, 8, 4, 1, 0, 0, 0, 1)
#define red_w8_k5_BLOCK(out, in) REDW_BODY(out, in, 8, 5, 1, 0, 0, 0, 1)
#define red_w8_k5_BLOCK2(out, in) TWICE(red_w8_k5_BLOCK, out, in, 8)
REDW(red_w8_k5, 8, 5, 1, 0, 0, 0, 1)
#define red_s1_k6_a0_e0_s0_BLOCK(out, in) REDW_BODY(out, in, 1, 6, 0, 1, 0, 0, 0)
#define red_s1_k6_a0_e0_s0_BLOCK2(out, in) TWICE(red_s1_k6_a0_e0_s0_BLOCK, out, in, 1)
REDW(red_s1_k6_a0_e0_s0, 1, 6, 0, 1, 0, 0, 0)
#define red_s1_k6_a0_e0_s1_BLOCK(out, in) REDW_BODY(out, in, 1, 6, 0, 1, 0, 0, 1)
#define red_s1_k6_a0_e0_s1_BLOCK2(out, in) TWICE(red_s1_k6_a0_e0_s1_BLOCK, out, in, 1)
REDW(red_s1_k6_a0_e0_s1, 1, 6, 0, 1, 0, 0, 1)
#define red_s1_k6_a0_e1_s0_BLOCK(out, in) REDW_BODY(out, in, 1, 6, 0, 1, 0, 1, 0)
#define red_s1_k6_a0_e1_s0_BLOCK2(out, in) TWICE(red_s1_k6_a0_e1_s0_BLOCK, out, in, 1)
REDW(red_s1_k6_a0_e1_s0, 1, 6, 0, 1, 0, 1, 0)
#define red_s1_k6_a0_e1_s1_BLOCK(out, in) REDW_BODY(out, in, 1, 6, 0, 1, 0, 1, 1)
#define red_s1_k6_a0_e1_s1_BLOCK2(out, in) TWICE(red_s1_k6_a0_e1_s1_BLOCK, out, in, 1)
REDW(red_s1_k6_a0_e1_s1, 1, 6, 0, 1, 0, 1, 1)
#define red_s1_k6_a0_e2_s0_BLOCK(out, in) REDW_BODY(out, in, 1, 6, 0, 1, 0, 2, 0)
#define red_s1_k6_a0_e2_s0_BLOCK2(out, in) TWICE(red_s1_k6_a0_e2_s0_BLOCK, out, in, 1)
REDW(red_s1_k6_a0_e2_s0, 1, 6, 0, 1, 0, 2, 0)
#define red_s1_k6_a0_e2_s1_BLOCK(out, in) REDW_BODY(out, in, 1, 6, 0, 1, 0, 2, 1)
#define red_s1_k6_a0_e2_s1_BLOCK2(out, in) TWICE(red_s1_k6_a0_e2_s1_BLOCK, out, in, 1)
REDW(red_s1_k6_a0_e2_s1, 1, 6, 0, 1, 0, 2, 1)
#define red_s1_k6_a1_e0_s0_BLOCK(out, in) REDW_BODY(out, in, 1, 6, 0, 1, 1, 0, 0)
#define red_s1_k6_a1_e0_s0_BLOCK2(out, in) TWICE(red_s1_k6_a1_e0_s0_BLOCK, out, in, 1)
REDW(red_s1_k6_a1_e0_s0, 1, 6, 0, 1, 1, 0, 0)
#define red_s1_k6_a1_e0_s1_BLOCK(out, in) REDW_BODY(out, in, 1, 6, 0, 1, 1, 0, 1)
#define red_s1_k6_a1_e0_s1_BLOCK2(out, in) TWICE(red_s1_k6_a1_e0_s1_BLOCK, out, in, 1)
REDW(red_s1_k6_a1_e0_s1, 1, 6, 0, 1, 1, 0, 1)
#define red_s1_k6_a1_e1_s0_BLOCK(out, in) REDW_BODY(out, in, 1, 6, 0, 1, 1, 1, 0)
#define red_s1_k6_a1_e1_s0_BLOCK2(out, in) TWICE(red_s1_k6_a1_e1_s0_BLOCK, out, in, 1)
REDW(red_s1_k6_a1_e1_s0, 1, 6, 0, 1, 1, 1, 0)
#define red_s1_k6_a1_e1_s1_BLOCK(out, in) REDW_BODY(out, in, 1, 6, 0, 1, 1, 1, 1)
#define red_s1_k6_a1_e1_s1_BLOCK2(out, in) TWICE(red_s1_k6_a1_e1_s1_BLOCK, out, in, 1)
REDW(red_s1_k6_a1_e1_s1, 1, 6, 0, 1, 1, 1, 1)
#define red_s1_k6_a1_e2_s0_BLOCK(out, in) REDW_BODY(out, in, 1, 6, 0, 1, 1, 2, 0)
#define red_s1_k6_a1_e2_s0_BLOCK2(out, in) TWICE(red_s1_k6_a1_e2_s0_BLOCK, out, in, 1)
REDW(red_s1_k6_a1_e2_s0, 1, 6, 0, 1, 1, 2, 0)
#define red_s1_k6_a1_e2_s1_BLOCK(out, in) REDW_BODY(out, in, 1, 6, 0, 1, 1, 2, 1)
#define red_s1_k6_a1_e2_s1_BLOCK2(out, in) TWICE(red_s1_k6_a1_e2_s1_BLOCK, out, in, 1)
REDW(red_s1_k6_a1_e2_s1, 1, 6, 0, 1, 1, 2, 1)
#define red_s1_k7_a0_e0_s0_BLOCK(out, in) REDW_BODY(out, in, 1, 7, 0, 1, 0, 0, 0)
#define red_s1_k7_a0_e0_s0_BLOCK2(out, in) TWICE(red_s1_k7_a0_e0_s0_BLOCK, out, in, 1)
REDW(red_s1_k7_a0_e0_s0, 1, 7, 0, 1, 0, 0, 0)
#define red_s1_k7_a0_e0_s1_BLOCK(out, in) REDW_BODY(out, in, 1, 7, 0, 1, 0, 0, 1)
#define red_s1_k7_a0_e0_s1_BLOCK2(out, in) TWICE(red_s1_k7_a0_e0_s1_BLOCK, out, in, 1)
REDW(red_s1_k7_a0_e0_s1, 1, 7, 0, 1, 0, 0, 1)
#define red_s1_k7_a0_e1_s0_BLOCK(out, in) REDW_BODY(out, in, 1, 7, 0, 1, 0, 1, 0)
#define red_s1_k7_a0_e1_s0_BLOCK2(out, in) TWICE(red_s1_k7_a0_e1_s0_BLOCK, out, in, 1)
REDW(red_s1_k7_a0_e1_s0, 1, 7, 0, 1, 0, 1, 0)
#define red_s1_k7_a0_e1_s1_BLOCK(out, in) REDW_BODY(out, in, 1, 7, 0, 1, 0, 1, 1)
#define red_s1_k7_a0_e1_s1_BLOCK2(out, in) TWICE(red_s1_k7_a0_e1_s1_BLOCK, out, in, 1)
REDW(red_s1_k7_a0_e1_s1, 1, 7, 0, 1, 0, 1, 1)
#define red_s1_k7_a0_e2_s0_BLOCK(out, in) REDW_BODY(out, in, 1, 7, 0, 1, 0, 2, 0)
#define red_s1_k7_a0_e2_s0_BLOCK2(out, in) TWICE(red_s1_k7_a0_e2_s0_BLOCK, out, in, 1)
REDW(red_s1_k7_a0_e2_s0, 1, 7, 0, 1, 0, 2, 0)
#define red_s1_k7_a0_e2_s1_BLOCK(out, in) REDW_BODY(out, in, 1, 7, 0, 1, 0, 2, 1)
#define red_s1_k7_a0_e2_s1_BLOCK2(out, in) TWICE(red_s1_k7_a0_e2_s1_BLOCK, out, in, 1)
REDW(red_s1_k7_a0_e2_s1, 1, 7, 0, 1, 0, 2, 1)
#define red_s1_k7_a1_e0_s0_BLOCK(out, in) REDW_BODY(out, in, 1, 7, 0, 1, 1, 0, 0)
#define red_s1_k7_a1_e0_s0_BLOCK2(out, in) TWICE(red_s1_k7_a1_e0_s0_BLOCK, out, in, 1)
REDW(red_s1_k7_a1_e0_s0, 1, 7, 0, 1, 1, 0, 0)
#define red_s1_k7_a1_e0_s1_BLOCK(out, in) REDW_BODY(out, in, 1, 7, 0, 1, 1, 0, 1)
#define red_s1_k7_a1_e0_s1_BLOCK2(out, in) TWICE(red_s1_k7_a1_e0_s1_BLOCK, out, in, 1)
REDW(red_s1_k7_a1_e0_s1, 1, 7, 0, 1, 1, 0, 1)
#define red_s1_k7_a1_e1_s0_BLOCK(out, in) REDW_BODY(out, in, 1, 7, 0, 1, 1, 1, 0)
#define red_s1_k7_a1_e1_s0_BLOCK2(out, in) TWICE(red_s1_k7_a1_e1_s0_BLOCK, out, in, 1)
REDW(red_s1_k7_a1_e1_s0, 1, 7, 0, 1, 1, 1, 0)
#define red_s1_k7_a1_e1_s1_BLOCK(out, in) REDW_BODY(out, in, 1, 7, 0, 1, 1, 1, 1)
#define red_s1_k7_a1_e1_s1_BLOCK2(out, in) TWICE(red_s1_k7_a1_e1_s1_BLOCK, out, in, 1)
REDW(red_s1_k7_a1_e1_s1, 1, 7, 0, 1, 1, 1, 1)
#define red_s1_k7_a1_e2_s0_BLOCK(out, in) REDW_BODY(out, in, 1, 7, 0, 1, 1, 2, 0)
#define red_s1_k7_a1_e2_s0_BLOCK2(out, in) TWICE(red_s1_k7_a1_e2_s0_BLOCK, out, in, 1)
REDW(red_s1_k7_a1_e2_s0, 1, 7, 0, 1, 1, 2, 0)
#define red_s1_k7_a1_e2_s1_BLOCK(out, in) REDW_BODY(out, in, 1, 7, 0, 1, 1, 2, 1)
#define red_s1_k7_a1_e2_s1_BLOCK2(out, in) TWICE(red_s1_k7_a1_e2_s1_BLOCK, out, in, 1)
REDW(red_s1_k7_a1_e2_s1, 1, 7, 0, 1, 1, 2, 1)
#define red_s2_k6_a0_e0_s0_BLOCK(out, in) REDW_BODY(out, in, 2, 6, 0, 1, 0, 0, 0)
#define red_s2_k6_a0_e0_s0_BLOCK2(out, in) TWICE(red_s2_k6_a0_e0_s0_BLOCK, out, in, 2)
REDW(red_s2_k6_a0_e0_s0, 2, 6, 0, 1, 0, 0, 0)
#define red_s2_k6_a0_e0_s1_BLOCK(out, in) REDW_BODY(out, in, 2, 6, 0, 1, 0, 0, 1)
#define red_s2_k6_a0_e0_s1_BLOCK2(out, in) TWICE(red_s2_k6_a0_e0_s1_BLOCK, out, in, 2)
REDW(red_s2_k6_a0_e0_s1, 2, 6, 0, 1, 0, 0, 1)
#define red_s2_k6_a1_e0_s0_BLOCK(out, in) REDW_BODY(out, in, 2, 6, 0, 1, 1, 0, 0)
#define red_s2_k6_a1_e0_s0_BLOCK2(out, in) TWICE(red_s2_k6_a1_e0_s0_BLOCK, out, in, 2)
REDW(red_s2_k6_a1_e0_s0, 2, 6, 0, 1, 1, 0, 0)
#define red_s2_k6_a1_e0_s1_BLOCK(out, in) REDW_BODY(out, in, 2, 6, 0, 1, 1, 0, 1)
#define red_s2_k6_a1_e0_s1_BLOCK2(out, in) TWICE(red_s2_k6_a1_e0_s1_BLOCK, out, in, 2)
REDW(red_s2_k6_a1_e0_s1, 2, 6, 0, 1, 1, 0, 1)
#define red_s2_k7_a0_e0_s0_BLOCK(out, in) REDW_BODY(out, in, 2, 7, 0, 1, 0, 0, 0)
#define red_s2_k7_a0_e0_s0_BLOCK2(out, in) TWICE(red_s2_k7_a0_e0_s0_BLOCK, out, in, 2)
REDW(red_s2_k7_a0_e0_s0, 2, 7, 0, 1, 0, 0, 0)
#define red_s2_k7_a0_e0_s1_BLOCK(out, in) REDW_BODY(out, in, 2, 7, 0, 1, 0, 0, 1)
#define red_s2_k7_a0_e0_s1_BLOCK2(out, in) TWICE(red_s2_k7_a0_e0_s1_BLOCK, out, in, 2)
REDW(red_s2_k7_a0_e0_s1, 2, 7, 0, 1, 0, 0, 1)
#define red_s2_k7_a1_e0_s0_BLOCK(out, in) REDW_BODY(out, in, 2, 7, 0, 1, 1, 0, 0)
#define red_s2_k7_a1_e0_s0_BLOCK2(out, in) TWICE(red_s2_k7_a1_e0_s0_BLOCK, out, in, 2)
REDW(red_s2_k7_a1_e0_s0, 2, 7, 0, 1, 1, 0, 0)
#define red_s2_k7_a1_e0_s1_BLOCK(out, in) REDW_BODY(out, in, 2, 7, 0, 1, 1, 0, 1)
#define red_s2_k7_a1_e0_s1_BLOCK2(out, in) TWICE(red_s2_k7_a1_e0_s1_BLOCK, out, in, 2)
REDW(red_s2_k7_a1_e0_s1, 2, 7, 0, 1, 1, 0, 1)

/* D-bit packed codes (D = 1: entries 0 or 0xFF); 32 elements a block */
#define REDP(D, K)                                                                              \
    static FN void red_p##D##_k##K(const dt_kernel *k, void *dst, const void *src,              \
                                   size_t begin, size_t end)                                    \
    {                                                                                           \
        const uint8_t *restrict L = k->table;                                                            \
        TABLE_LOOP(32, 8, D, REDP_BLOCK_##D##_##K);                                             \
    }
#define REDP_BODY(out, in, D, K)                                                                \
    do {                                                                                        \
        const __m256i x_ = ld(in);                                                              \
        const __m256i v_ = red_plane(L, 0, x_, red_index(L, x_), (K), 0, 0);                       \
        pack_store((out), red_special(L, 0, v_, _mm256_cmpeq_epi8(x_, ld(L + RED_SPX)),         \
                                      _mm256_cmpeq_epi8(x_, ld(L + RED_SPX + 32))), (D));       \
    } while (0)
#define REDP_BLOCK_1_4(out, in) REDP_BODY(out, in, 1, 4)
#define REDP_BLOCK_2_4(out, in) REDP_BODY(out, in, 2, 4)
#define REDP_BLOCK_2_5(out, in) REDP_BODY(out, in, 2, 5)
#define REDP_BLOCK_4_4(out, in) REDP_BODY(out, in, 4, 4)
#define REDP_BLOCK_4_5(out, in) REDP_BODY(out, in, 4, 5)
#define REDP_BLOCK_4_6(out, in) REDP_BODY(out, in, 4, 6)
REDP(1, 4)
REDP(2, 4)
REDP(2, 5)
REDP(4, 4)
REDP(4, 5)
REDP(4, 6)

/* The largest K each output takes the reduced kernels for (above it the general ones are
 * faster), by log2 of the entry bytes and, for packed outputs, by D. */
static int red_max_k(int D)
{
    switch (D) {
    case 1: return 4;
    case 2: return 5;
    case 4: return 6;
    case 8: return 7;
    case 16: return 7;
    case 32: return 6;
    default: return 5;
    }
}
/* the kernel for the index c of a table into D-bit codes */
struct red;
static dt_kernel_fn red_fn(int D, const struct red *c);

/* A way to index the table t (256 entries of w bytes) with a small index. */
typedef struct red {
    int K;                      /* 2^K entries; 9: none */
    uint8_t flip, lo, hi, mask; /* idx = (min(max(x ^ flip, lo), hi) - lo) & mask */
    bool sign;                  /* the sign form: idx = (abs ? |x| : x) & mask */
    bool abs;
    uint8_t sx[8], sn[8];       /* x >= 128: entry ^ sx - sn per byte plane, */
    uint8_t em, ev;             /* unless (entry & em) == ev */
    int nspec;                  /* codes whose entries are put in after (at most 2) */
    uint8_t spec[2];
} red;

static unsigned red_idx(const red *c, unsigned x)
{
    if (c->sign)
        return (c->abs && x >= 128 ? 256 - x : x) & c->mask;
    unsigned v = x ^ c->flip;
    v = v < c->lo ? c->lo : v > c->hi ? c->hi : v;
    return (v - c->lo) & c->mask;
}

static dt_kernel_fn red_fn(int D, const red *c)
{
    static const dt_kernel_fn w1[] = {red_w1_k4_i0_s0, red_w1_k4_i0_s1, red_w1_k4_i1_s0, red_w1_k4_i1_s1, red_w1_k5_i0_s0, red_w1_k5_i0_s1, red_w1_k5_i1_s0, red_w1_k5_i1_s1};
    static const dt_kernel_fn w1b[] = {red_w1_k6_i0_s0, red_w1_k6_i0_s1, red_w1_k6_i1_s0, red_w1_k6_i1_s1, red_w1_k7_i0_s0, red_w1_k7_i0_s1, red_w1_k7_i1_s0, red_w1_k7_i1_s1};
    static const dt_kernel_fn w2[] = {red_w2_k4_i0_s0, red_w2_k4_i0_s1, red_w2_k4_i1_s0, red_w2_k4_i1_s1, red_w2_k5_i0_s0, red_w2_k5_i0_s1, red_w2_k5_i1_s0, red_w2_k5_i1_s1};
    static const dt_kernel_fn w2b[] = {red_w2_k6_i0_s0, red_w2_k6_i0_s1, red_w2_k6_i1_s0, red_w2_k6_i1_s1, red_w2_k7_i0_s0, red_w2_k7_i0_s1, red_w2_k7_i1_s0, red_w2_k7_i1_s1};
    static const dt_kernel_fn s1[] = {red_s1_k6_a0_e0_s0, red_s1_k6_a0_e0_s1, red_s1_k6_a0_e1_s0, red_s1_k6_a0_e1_s1, red_s1_k6_a0_e2_s0, red_s1_k6_a0_e2_s1, red_s1_k6_a1_e0_s0, red_s1_k6_a1_e0_s1, red_s1_k6_a1_e1_s0, red_s1_k6_a1_e1_s1, red_s1_k6_a1_e2_s0, red_s1_k6_a1_e2_s1, red_s1_k7_a0_e0_s0, red_s1_k7_a0_e0_s1, red_s1_k7_a0_e1_s0, red_s1_k7_a0_e1_s1, red_s1_k7_a0_e2_s0, red_s1_k7_a0_e2_s1, red_s1_k7_a1_e0_s0, red_s1_k7_a1_e0_s1, red_s1_k7_a1_e1_s0, red_s1_k7_a1_e1_s1, red_s1_k7_a1_e2_s0, red_s1_k7_a1_e2_s1};
    static const dt_kernel_fn s2[] = {red_s2_k6_a0_e0_s0, red_s2_k6_a0_e0_s1, red_s2_k6_a1_e0_s0, red_s2_k6_a1_e0_s1, red_s2_k7_a0_e0_s0, red_s2_k7_a0_e0_s1, red_s2_k7_a1_e0_s0, red_s2_k7_a1_e0_s1};
    static const dt_kernel_fn w4[] = {red_w4_k4, red_w4_k5, red_w4_k6};
    static const dt_kernel_fn w8[] = {red_w8_k4, red_w8_k5};
    static const dt_kernel_fn p4[] = {red_p4_k4, red_p4_k5, red_p4_k6};
    static const dt_kernel_fn p2[] = {red_p2_k4, red_p2_k5};
    const int k = c->K, spc = c->nspec > 0;
    const int idx = c->flip || c->lo || c->hi != 0xFF; /* else the mask alone */
    if (c->sign) {
        const int a = c->abs, e = c->sn[0] ? 2 : c->em != 0;
        return D == 8 ? s1[12 * (k - 6) + 6 * a + 2 * e + spc] : s2[4 * (k - 6) + 2 * a + spc];
    }
    const int f = 4 * (k - 4) + 2 * idx + spc;
    switch (D) {
    case 1: return red_p1_k4;
    case 2: return p2[k - 4];
    case 4: return p4[k - 4];
    case 8: return f < 8 ? w1[f] : w1b[f - 8];
    case 16: return f < 8 ? w2[f] : w2b[f - 8];
    case 32: return w4[k - 4];
    default: return w8[k - 4];
    }
}

/* Completes c (K, specials, the small table into small[]) if it gives every entry of t but at
 * most two; else false. The entry of each index is the one most of its codes have
 * (Boyer-Moore's vote); in the sign form only codes below 128 vote. */
static bool red_try(red *c, const uint8_t *t, int w, uint8_t *small)
{
    const unsigned span = c->sign ? c->mask : (unsigned)(c->hi - c->lo) & c->mask;
    c->K = 4;
    while ((1u << c->K) <= span)
        c->K++;
    if (c->K > 7)
        return false;
    unsigned cand[128] = {0}, votes[128] = {0};
    for (unsigned x = 0; x < (c->sign ? 128u : 256u); x++) {
        const unsigned i = red_idx(c, x);
        if (!votes[i])
            cand[i] = x, votes[i] = 1;
        else if (!memcmp(t + (size_t)w * x, t + (size_t)w * cand[i], (size_t)w))
            votes[i]++;
        else
            votes[i]--;
    }
    /* every index up to span is some code's (cand[i] one of them); none above */
    for (unsigned i = 0; i < (1u << c->K); i++) {
        if (i <= span)
            memcpy(small + (size_t)w * i, t + (size_t)w * cand[i], (size_t)w);
        else
            memset(small + (size_t)w * i, 0, (size_t)w);
    }
    c->nspec = 0;
    for (unsigned x = 0; x < 256; x++) { /* the kernel's result against the table */
        bool same = true;
        for (int p = 0; p < w; p++) {
            unsigned v = small[(size_t)w * red_idx(c, x) + (size_t)p];
            if (c->sign && x >= 128 && (v & c->em) != c->ev)
                v = ((v ^ c->sx[p]) - c->sn[p]) & 0xFF;
            same = same && v == t[(size_t)w * x + (size_t)p];
        }
        if (!same) {
            if (c->nspec == 2)
                return false;
            c->spec[c->nspec++] = (uint8_t)x;
        }
    }
    return true;
}

/* whether c is better than b: a smaller table, then fewer special codes, then no sign form */
static bool red_better(const red *c, const red *b)
{
    if (c->K != b->K)
        return c->K < b->K;
    if (c->nspec != b->nspec)
        return c->nspec < b->nspec;
    return !c->sign && b->sign;
}

/* The best index for t, with its small table (2^K entries of w bytes); K = 9 when none.
 * sign: whether the kernel has the sign form (w <= 2). */
static red red_find(const uint8_t *t, int w, bool sign, uint8_t *small)
{
    red best = {.K = 9};
    uint8_t tmp[128 * 8];
    for (int kind = 0; kind < 7 + 8; kind++) {
        red c;
        memset(&c, 0, sizeof c);
        c.hi = 0xFF;
        c.mask = 0xFF;
        if (kind < 3) { /* repeating every 16, 32, 64 codes */
            c.mask = (uint8_t)((16u << kind) - 1);
        } else if (kind < 7) { /* constant below lo and above hi, unsigned (flip 0) or signed
                                * (0x80), the extreme codes counted or left to be special */
            c.flip = kind % 2 ? 0x80 : 0;
            const unsigned e = kind >= 5, f = c.flip;
            unsigned lo = e, hi = 255 - e;
            while (lo < 255 - e && !memcmp(t + (size_t)w * ((lo + 1) ^ f), t + (size_t)w * (e ^ f), (size_t)w))
                lo++;
            while (hi > lo && !memcmp(t + (size_t)w * ((hi - 1) ^ f), t + (size_t)w * ((255 - e) ^ f), (size_t)w))
                hi--;
            c.lo = (uint8_t)lo;
            c.hi = (uint8_t)hi;
        } else { /* the sign form: abs, negation (w = 1), exceptions (w = 1) by kind - 7 */
            const int v = kind - 7;
            c.sign = true;
            c.abs = v & 1;
            const bool neg = v & 2, exc = v & 4;
            if (!sign || ((neg || exc) && w > 1) || (neg && exc))
                continue;
            c.mask = 0x7F;
            c.em = exc ? 0x7F : 0;
            c.ev = exc ? 0 : 1;
            for (int p = 0; p < w; p++) { /* sx: the most common difference */
                unsigned cd = 0, n = 0;
                for (unsigned x = 1; x < 128; x++) {
                    const unsigned y = c.abs ? 256 - x : x + 128;
                    const unsigned d = t[(size_t)w * y + (size_t)p] ^ t[(size_t)w * x + (size_t)p];
                    if (!n)
                        cd = d, n = 1;
                    else
                        n = d == cd ? n + 1 : n - 1;
                }
                c.sx[p] = (uint8_t)(neg ? 0xFF : cd);
                c.sn[p] = (uint8_t)(neg ? 0xFF : 0);
            }
            if (red_try(&c, t, w, tmp)) { /* a half that also repeats every 64 codes */
                red h = c;
                h.mask = 0x3F;
                if (red_try(&h, t, w, tmp) && h.nspec <= c.nspec)
                    c = h;
            }
        }
        if (red_try(&c, t, w, tmp) && red_better(&c, &best)) {
            best = c;
            memcpy(small, tmp, (size_t)w << c.K);
        }
    }
    return best;
}

/* 8-bit -> 2-, 4- and 8-byte entries, k->table: the entries are loaded into vectors (vpinsrw,
 * vpinsrd, vmovq), whole vectors stored; the source bytes come from 64-bit loads. On Zen 3 this
 * runs at the load ports' pace (one entry per load), 1.5-2x faster than vpgatherdd or 16 / 32
 * vpshufb per vector of 2- / 4-byte entries, or than scalar copies of each entry. */
static inline uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static inline int rd16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}
static inline int rd32(const uint8_t *p)
{
    int v;
    memcpy(&v, p, 4);
    return v;
}
/* byte j of v as an entry offset of W bytes */
#define AT(v, j, W) ((size_t)(uint8_t)((v) >> (8 * (j))) * (W))

/* 16 elements: two chains of 8 words */
#define B8W2_BLOCK(out, in)                                                                     \
    do {                                                                                        \
        const uint64_t v_ = rd64(in), u_ = rd64((in) + 8);                                      \
        __m128i a_ = _mm_cvtsi32_si128(rd16(t + AT(v_, 0, 2)));                                 \
        __m128i b_ = _mm_cvtsi32_si128(rd16(t + AT(u_, 0, 2)));                                 \
        a_ = _mm_insert_epi16(a_, rd16(t + AT(v_, 1, 2)), 1);                                   \
        b_ = _mm_insert_epi16(b_, rd16(t + AT(u_, 1, 2)), 1);                                   \
        a_ = _mm_insert_epi16(a_, rd16(t + AT(v_, 2, 2)), 2);                                   \
        b_ = _mm_insert_epi16(b_, rd16(t + AT(u_, 2, 2)), 2);                                   \
        a_ = _mm_insert_epi16(a_, rd16(t + AT(v_, 3, 2)), 3);                                   \
        b_ = _mm_insert_epi16(b_, rd16(t + AT(u_, 3, 2)), 3);                                   \
        a_ = _mm_insert_epi16(a_, rd16(t + AT(v_, 4, 2)), 4);                                   \
        b_ = _mm_insert_epi16(b_, rd16(t + AT(u_, 4, 2)), 4);                                   \
        a_ = _mm_insert_epi16(a_, rd16(t + AT(v_, 5, 2)), 5);                                   \
        b_ = _mm_insert_epi16(b_, rd16(t + AT(u_, 5, 2)), 5);                                   \
        a_ = _mm_insert_epi16(a_, rd16(t + AT(v_, 6, 2)), 6);                                   \
        b_ = _mm_insert_epi16(b_, rd16(t + AT(u_, 6, 2)), 6);                                   \
        a_ = _mm_insert_epi16(a_, rd16(t + AT(v_, 7, 2)), 7);                                   \
        b_ = _mm_insert_epi16(b_, rd16(t + AT(u_, 7, 2)), 7);                                   \
        st((out), _mm256_inserti128_si256(_mm256_castsi128_si256(a_), b_, 1));                  \
    } while (0)
static FN void b8_w2(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    const uint8_t *t = k->table;
    TABLE_LOOP(16, 8, 16, B8W2_BLOCK);
}

/* 8 elements: two chains of 4 dwords */
#define B8W4_BLOCK(out, in)                                                                     \
    do {                                                                                        \
        const uint64_t v_ = rd64(in);                                                           \
        __m128i a_ = _mm_cvtsi32_si128(rd32(t + AT(v_, 0, 4)));                                 \
        __m128i b_ = _mm_cvtsi32_si128(rd32(t + AT(v_, 4, 4)));                                 \
        a_ = _mm_insert_epi32(a_, rd32(t + AT(v_, 1, 4)), 1);                                   \
        b_ = _mm_insert_epi32(b_, rd32(t + AT(v_, 5, 4)), 1);                                   \
        a_ = _mm_insert_epi32(a_, rd32(t + AT(v_, 2, 4)), 2);                                   \
        b_ = _mm_insert_epi32(b_, rd32(t + AT(v_, 6, 4)), 2);                                   \
        a_ = _mm_insert_epi32(a_, rd32(t + AT(v_, 3, 4)), 3);                                   \
        b_ = _mm_insert_epi32(b_, rd32(t + AT(v_, 7, 4)), 3);                                   \
        st((out), _mm256_inserti128_si256(_mm256_castsi128_si256(a_), b_, 1));                  \
    } while (0)
static FN void b8_w4(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    const uint8_t *t = k->table;
    TABLE_LOOP(8, 8, 32, B8W4_BLOCK);
}

/* 8 elements: pairs of qwords */
#define LQ(p) _mm_loadl_epi64((const __m128i *)(const void *)(p))
#define Q4(v, j)                                                                                \
    _mm256_inserti128_si256(                                                                    \
        _mm256_castsi128_si256(_mm_unpacklo_epi64(LQ(t + AT(v, j, 8)), LQ(t + AT(v, j + 1, 8)))), \
        _mm_unpacklo_epi64(LQ(t + AT(v, j + 2, 8)), LQ(t + AT(v, j + 3, 8))), 1)
#define B8W8_BLOCK(out, in)                                                                     \
    do {                                                                                        \
        const uint64_t v_ = rd64(in);                                                           \
        st((out), Q4(v_, 0));                                                                   \
        st((out) + 32, Q4(v_, 4));                                                              \
    } while (0)
static FN void b8_w8(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    const uint8_t *t = k->table;
    TABLE_LOOP(8, 8, 64, B8W8_BLOCK);
}

/* 8-bit -> packed D bits: for output bit j, local + 64 j holds two tables of 16 bytes (twice):
 * bit h of byte l is bit j of the code of 16 h + l (h < 8), then of 16 (h + 8) + l. */
static FN DT_INLINE __m256i b8_packed_codes(const uint8_t *tb, __m256i x, int D)
{
    const __m256i lo = _mm256_and_si256(x, _mm256_set1_epi8(0x0F));
    const __m256i hs = _mm256_and_si256(_mm256_srli_epi16(x, 4), _mm256_set1_epi8(0x0F));
    const __m256i bitsel = _mm256_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64,
                                            -128, 1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16,
                                            32, 64, -128);
    const __m256i sel = _mm256_shuffle_epi8(bitsel, hs); /* bit (x >> 4) & 7 */
    __m256i c = _mm256_setzero_si256();
    for (int j = 0; j < D; j++) {
        const __m256i v = _mm256_blendv_epi8(_mm256_shuffle_epi8(ld(tb + 64 * j), lo),
                                             _mm256_shuffle_epi8(ld(tb + 64 * j + 32), lo), x);
        const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(v, sel), sel); /* 0 or 0xFF */
        c = D == 1 ? set : _mm256_or_si256(c, _mm256_and_si256(set, _mm256_set1_epi8((char)(1 << j))));
    }
    return c;
}
#define B8P(D)                                                                                  \
    static FN void b8_p##D(const dt_kernel *k, void *dst, const void *src, size_t begin,       \
                           size_t end)                                                          \
    {                                                                                           \
        const uint8_t *restrict L = k->table;                                                            \
        TABLE_LOOP(32, 8, D, B8P_BLOCK_##D);                                                    \
    }
#define B8P_BLOCK_1(out, in) pack_store((out), b8_packed_codes(L, ld(in), 1), 1)
#define B8P_BLOCK_2(out, in) pack_store((out), b8_packed_codes(L, ld(in), 2), 2)
B8P(1)
B8P(2)

/* 8-bit -> 4-bit codes: byte j < 128 of a 128-byte table holds the codes of j (low nibble) and
 * j + 128 (high nibble); its 8 tables of 16 looked up as in lut256 (the index x & 0x7F is below
 * 128, so no second half), bit 7 of x picks the nibble. k->local: 8 difference tables. */
static FN DT_INLINE __m256i b8_nibble_codes(const uint8_t *tb, __m256i x)
{
    const __m256i c16 = _mm256_set1_epi8(16), m = _mm256_set1_epi8(0x0F);
    __m256i idx = _mm256_and_si256(x, _mm256_set1_epi8(0x7F));
    __m256i a = _mm256_shuffle_epi8(ld(tb), idx);
#pragma GCC unroll 8
    for (int h = 1; h < 8; h++) {
        idx = _mm256_sub_epi8(idx, c16);
        opaque(&idx);
        a = _mm256_xor_si256(a, _mm256_shuffle_epi8(ld(tb + 32 * h), idx));
    }
    return _mm256_blendv_epi8(_mm256_and_si256(a, m), _mm256_and_si256(_mm256_srli_epi16(a, 4), m), x);
}
#define B8P4_BLOCK(out, in)                                                                     \
    do {                                                                                        \
        const __m256i x0_ = ld(in), x1_ = ld((in) + 32);                                        \
        pack_store((out), b8_nibble_codes(L, x0_), 4);                                   \
        pack_store((out) + 16, b8_nibble_codes(L, x1_), 4);                              \
    } while (0)
static FN void b8_p4(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    const uint8_t *restrict L = k->table;
    TABLE_LOOP(64, 8, 4, B8P4_BLOCK);
}

/* ---- set-up ------------------------------------------------------------------------------ */

static int log2_small(int x) { return x >= 8 ? 3 : x >= 4 ? 2 : x >= 2 ? 1 : 0; }

/* byte p of entry c of a table of w-byte entries */
static unsigned entry_byte(const uint8_t *t, int w, unsigned c, int p)
{
    return t[c * (unsigned)w + (unsigned)p];
}

/* The kernel for t (the 256-entry table of S-bit codes -> D-bit codes) and the data it reads at
 * k->table, built into loc (PREP_BYTES, zeroed). */
enum { PREP_BYTES = 2048 };
static dt_kernel_fn prepare(uint8_t *loc, const uint8_t *t, int S, int D)
{
    const int w = D <= 8 ? 1 : D / 8; /* bytes per table entry */
    bool zero_test = S == 8;          /* every code but 0 has the entry of 1 (bool) */
    for (unsigned c = 2; c < 256 && zero_test; c++)
        zero_test = !memcmp(t + (size_t)w * c, t + w, (size_t)w);
    if (zero_test && D < 8) {
        const unsigned dmask = (1u << D) - 1;
        for (unsigned i = 0; i < 32; i++) {
            const unsigned c = t[i & 1] & dmask;
            loc[i] = (uint8_t)(D == 1 ? (c ? 0xFF : 0) : c);
        }
        return D == 1 ? zero_p1 : D == 2 ? zero_p2 : zero_p4;
    }
    if (S < 8 || zero_test) {
        const unsigned mask = zero_test ? 1 : (1u << S) - 1;
        if (D >= 8) { /* byte planes of the 2^S entries */
            for (int p = 0; p < w; p++)
                for (unsigned i = 0; i < 32; i++)
                    loc[32 * p + i] = (uint8_t)entry_byte(t, w, i & 15 & mask, p);
            static const dt_kernel_fn fns[4][4] = {{sub1_w1, sub1_w2, sub1_w4, sub1_w8},
                                                   {sub2_w1, sub2_w2, sub2_w4, sub2_w8},
                                                   {sub4_w1, sub4_w2, sub4_w4, sub4_w8},
                                                   {sub8_w1, sub8_w2, sub8_w4, sub8_w8}};
            return fns[log2_small(S)][log2_small(w)];
        }
        /* the output bits of each nibble: 4 / S elements */
        const unsigned dmask = (1u << D) - 1, r4 = 4u * (unsigned)D / (unsigned)S;
        for (unsigned v = 0; v < 16; v++) {
            unsigned o = 0;
            for (unsigned e = 0; e < 4u / (unsigned)S; e++)
                o |= (t[(v >> (e * (unsigned)S)) & mask] & dmask) << (e * (unsigned)D);
            for (unsigned lane = 0; lane < 32; lane += 16) {
                loc[lane + v] = (uint8_t)o;
                loc[32 + lane + v] = (uint8_t)(r4 > 8 ? o >> 8 : o << r4);
            }
        }
        static const dt_kernel_fn fns[3][3] = {
            {nib1_1, nib1_2, nib1_4}, {nib2_1, nib2_2, nib2_4}, {nib4_1, nib4_2, nib4_4}};
        return fns[log2_small(S)][log2_small(D)];
    }
    /* 8-bit sources: a table indexed by a small index */
    uint8_t small[128 * 8];
    const red c = red_find(t, w, D == 8 || D == 16, small);
    if (c.K <= red_max_k(D)) {
        const unsigned n = 1u << (c.K - 4), dmask = D < 8 ? (1u << D) - 1 : 0xFF;
        for (int p = 0; p < w; p++) /* plane p's difference tables */
            for (unsigned h = 0; h < n; h++)
                for (unsigned l = 0; l < 32; l++) {
                    const unsigned i = 16 * h + (l & 15);
                    unsigned v = entry_byte(small, w, i, p) & dmask;
                    if (h)
                        v ^= entry_byte(small, w, i - 16, p) & dmask;
                    if (D == 1) /* movemask takes bit 7 */
                        v = v ? 0xFF : 0;
                    loc[(32u << (c.K - 4)) * (unsigned)p + 32 * h + l] = (uint8_t)v;
                }
        memset(loc + RED_FLIP, c.flip, 32);
        memset(loc + RED_LO, c.lo, 32);
        memset(loc + RED_HI, c.hi, 32);
        memset(loc + RED_MASK, c.mask, 32);
        for (int j = 0; j < 2; j++) { /* unused: code 0 with its own entry */
            const unsigned x = j < c.nspec ? c.spec[j] : 0;
            memset(loc + RED_SPX + 32 * j, (int)x, 32);
            for (int p = 0; p < w; p++) {
                unsigned v = entry_byte(t, w, x, p) & dmask;
                if (D == 1)
                    v = v ? 0xFF : 0;
                memset(loc + RED_SPV + 32 * (8 * j + p), (int)v, 32);
            }
        }
        for (int p = 0; p < w; p++)
            memset(loc + RED_SX + 32 * p, c.sx[p], 32);
        memset(loc + RED_ABS, c.abs ? 0xFF : 0, 32);
        memset(loc + RED_EM, c.em, 32);
        memset(loc + RED_EV, c.ev, 32);
        return red_fn(D, &c);
    }
    if (D == 4) { /* nibble pairs, difference tables */
        for (unsigned h = 0; h < 8; h++)
            for (unsigned l = 0; l < 32; l++) {
                const unsigned j = 16 * h + (l & 15);
                unsigned v = (t[j] & 15u) | (t[j + 128] & 15u) << 4;
                if (h)
                    v ^= (t[j - 16] & 15u) | (t[j + 112] & 15u) << 4;
                loc[32 * h + l] = (uint8_t)v;
            }
        return b8_p4;
    }
    if (D < 8) { /* bit tables */
        const unsigned dmask = (1u << D) - 1;
        for (int j = 0; j < D; j++)
            for (unsigned half = 0; half < 2; half++)
                for (unsigned l = 0; l < 16; l++) {
                    unsigned byte = 0;
                    for (unsigned h = 0; h < 8; h++)
                        byte |= ((t[16 * (h + 8 * half) + l] & dmask) >> j & 1u) << h;
                    loc[64 * j + 32 * half + l] = loc[64 * j + 32 * half + 16 + l] = (uint8_t)byte;
                }
        return D == 1 ? b8_p1 : b8_p2;
    }
    if (w == 1) { /* difference tables */
        for (unsigned h = 0; h < 16; h++)
            for (unsigned l = 0; l < 32; l++) {
                const unsigned i = 16 * h + (l & 15);
                loc[32 * h + l] = (uint8_t)(t[i] ^ (h % 8 ? t[i - 16] : 0));
            }
        return b8_w1;
    }
    memcpy(loc, t, 256 * (size_t)w); /* the entries, loaded one by one */
    return w == 2 ? b8_w2 : w == 4 ? b8_w4 : b8_w8;
}

/* Prepared kernels, cached as tables.c caches tables (an open-addressed hash read without a
 * lock, each slot's entry published with release after its key; a miss builds under the
 * mutex). At most PREP_MAX entries of 2 KiB (1 MiB); past that a conversion prepares its own
 * into k->local. */
#define PREP_SLOTS 1024 /* power of two */
#define PREP_MAX 512
typedef struct prep {
    dt_kernel_fn fn;
    _Alignas(64) uint8_t data[PREP_BYTES];
} prep;
typedef struct prep_slot {
    uint32_t key; /* written before the entry is published, never changed after */
    _Atomic(const prep *) p;
} prep_slot;
static prep_slot prep_slots[PREP_SLOTS];
static pthread_mutex_t prep_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned prep_used; /* under prep_lock */

static uint32_t prep_key(const dt_format *df, const dt_format *sf, const dt_rules *r)
{
    dt_rules n;
    dt_rules_normalize(df, r, &n);
    return 1u + ((uint32_t)sf->type & 0xFF) + (((uint32_t)df->type & 0xFF) << 8) +
           ((uint32_t)n.round << 16) + ((uint32_t)n.saturate_float << 20) +
           ((uint32_t)n.saturate_int << 21) + ((uint32_t)n.nan_as_max << 22);
}

/* the slot holding key, or the empty slot where it would go */
static prep_slot *prep_probe(uint32_t key, const prep **p)
{
    for (unsigned h = (key * 2654435761u) >> 22;; h = (h + 1) & (PREP_SLOTS - 1)) {
        const prep *q = atomic_load_explicit(&prep_slots[h].p, memory_order_acquire);
        if (!q || prep_slots[h].key == key) {
            *p = q;
            return &prep_slots[h];
        }
    }
}

bool dt_table_find_avx2(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                        size_t count)
{
    const int S = sf->stride_bits, D = df->stride_bits;
    if (S > 8 || count < 64)
        return false;
    if (D != 1 && D != 2 && D != 4 && D != 8 && D != 16 && D != 32 && D != 64)
        return false;
    if (S == 8 && dt_int_pick_avx2(df, sf, r)) /* int8/uint8 -> integers: kernels_avx2_int.c */
        return false;
    /* int8/uint8 -> float32/float64: kernels_avx2_cvt.c (1.4-1.6x the tables into 4 and 8
     * bytes here) */
    if ((sf->tc == DT_TC_SINT || sf->tc == DT_TC_UINT) && S == 8 &&
        (df->type == DTCAST_FLOAT32 || df->type == DTCAST_FLOAT64))
        return false;
    /* int8/uint8 -> float16/bfloat16: kernels_avx2_half.c */
    if ((sf->type == DTCAST_INT8 || sf->type == DTCAST_UINT8) &&
        (df->type == DTCAST_FLOAT16 || df->type == DTCAST_BFLOAT16))
        return false;
    const uint32_t key = prep_key(df, sf, r);
    const prep *p;
    prep_probe(key, &p);
    if (!p) {
        uint8_t tmp[256 * 8];
        const uint8_t *t = dt_table_get(df, sf, r);
        if (!t) /* the cache of tables is full: this call's own table */
            t = dt_table_build_into(tmp, df, sf, r);
        pthread_mutex_lock(&prep_lock);
        prep_slot *slot = prep_probe(key, &p); /* another thread may have built it meanwhile */
        if (!p && prep_used < PREP_MAX) {
            prep *made = aligned_alloc(64, sizeof *made);
            if (made) {
                memset(made->data, 0, sizeof made->data);
                made->fn = prepare(made->data, t, S, D);
                prep_used++;
                slot->key = key;
                atomic_store_explicit(&slot->p, made, memory_order_release);
                p = made;
            }
        }
        pthread_mutex_unlock(&prep_lock);
        if (!p) { /* the cache is full: this conversion's own */
            _Alignas(64) uint8_t loc[PREP_BYTES];
            memset(loc, 0, sizeof loc);
            k->fn = prepare(loc, t, S, D);
            memcpy(k->local, loc, sizeof loc);
            k->table = k->local;
            return true;
        }
    }
    k->fn = p->fn;
    k->table = p->data;
    return true;
}
#endif
