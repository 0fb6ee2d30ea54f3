/* AVX2 integer -> integer kernels: int8/uint8/int16/uint16/int32/uint32/int64/uint64 in every
 * pair, wrapped (the low bits) or saturated (clamped to the destination's range by the source's
 * signedness), as kernels_avx512.c does with 16 lanes. Each block holds 32 elements in W-bit
 * lanes, W the wider of the two widths: loads widen (vpmovsx/vpmovzx), the clamp runs on the
 * exact source values, stores narrow through pack/shuffle pairs into whole 256-bit stores.
 * Compiled for the target through function attributes only. */
#if defined(__x86_64__) && defined(__GNUC__)
#include "kernels.h"
#include "x86_attrs.h"

#include <immintrin.h>
#include <string.h>

#define FN DT_TARGET_AVX2

/* Keeps a loaded vector in a register (gcc would otherwise fold the load into every use as a
 * memory operand; see v_opaque in kernels_x86.h). */
static FN DT_INLINE void ii_opaque(__m256i *x) { __asm__("" : "+v"(*x)); }

/* c (its low W bits) in every W-bit lane */
static FN DT_INLINE __m256i vset(int W, uint64_t c)
{
    switch (W) {
    case 8: return _mm256_set1_epi8((char)c);
    case 16: return _mm256_set1_epi16((short)c);
    case 32: return _mm256_set1_epi32((int)c);
    default: return _mm256_set1_epi64x((long long)c);
    }
}

/* Min/max on W-bit lanes. AVX2 has no 64-bit min/max: a compare (vpcmpgtq) picks the lane with
 * vpblendvb (the mask is all ones per selected lane, so the byte blend is a lane blend). */
static FN DT_INLINE __m256i vmax_s(__m256i x, __m256i y, int W)
{
    switch (W) {
    case 8: return _mm256_max_epi8(x, y);
    case 16: return _mm256_max_epi16(x, y);
    case 32: return _mm256_max_epi32(x, y);
    default: return _mm256_blendv_epi8(x, y, _mm256_cmpgt_epi64(y, x));
    }
}
static FN DT_INLINE __m256i vmin_s(__m256i x, __m256i y, int W)
{
    switch (W) {
    case 8: return _mm256_min_epi8(x, y);
    case 16: return _mm256_min_epi16(x, y);
    case 32: return _mm256_min_epi32(x, y);
    default: return _mm256_blendv_epi8(x, y, _mm256_cmpgt_epi64(x, y));
    }
}
static FN DT_INLINE __m256i vmin_u(__m256i x, __m256i y, int W)
{
    switch (W) {
    case 8: return _mm256_min_epu8(x, y);
    case 16: return _mm256_min_epu16(x, y);
    case 32: return _mm256_min_epu32(x, y);
    default: { /* flipping the sign bit maps unsigned order onto signed order */
        const __m256i b = _mm256_set1_epi64x(INT64_MIN);
        return _mm256_blendv_epi8(x, y, _mm256_cmpgt_epi64(_mm256_xor_si256(x, b),
                                                            _mm256_xor_si256(y, b)));
    }
    }
}

/* 4 bytes as the low dword of a vector (memcpy: no aliasing or alignment assumption) */
static FN DT_INLINE __m128i load4(const uint8_t *p)
{
    int v;
    memcpy(&v, p, 4);
    return _mm_cvtsi32_si128(v);
}

/* 256 / W elements of sw bits (signed: ss) -> W-bit lanes, sign- or zero-extended; reads
 * exactly 32 * sw / W bytes */
static FN DT_INLINE __m256i ii_load(const uint8_t *p, int sw, int ss, int W)
{
#define LD load4(p)
#define LQ _mm_loadl_epi64((const __m128i *)p)
#define LX _mm_loadu_si128((const __m128i *)p)
    switch (W * 4 + sw / 8 + (ss ? 1000 : 0)) {
    case 64 + 1: return _mm256_cvtepu8_epi16(LX);
    case 1064 + 1: return _mm256_cvtepi8_epi16(LX);
    case 128 + 1: return _mm256_cvtepu8_epi32(LQ);
    case 1128 + 1: return _mm256_cvtepi8_epi32(LQ);
    case 128 + 2: return _mm256_cvtepu16_epi32(LX);
    case 1128 + 2: return _mm256_cvtepi16_epi32(LX);
    case 256 + 1: return _mm256_cvtepu8_epi64(LD);
    case 1256 + 1: return _mm256_cvtepi8_epi64(LD);
    case 256 + 2: return _mm256_cvtepu16_epi64(LQ);
    case 1256 + 2: return _mm256_cvtepi16_epi64(LQ);
    case 256 + 4: return _mm256_cvtepu32_epi64(LX);
    case 1256 + 4: return _mm256_cvtepi32_epi64(LX);
    default: { /* sw == W */
        __m256i x = _mm256_loadu_si256((const __m256i *)p);
        ii_opaque(&x);
        return x;
    }
    }
#undef LD
#undef LQ
#undef LX
}

#define II_V __m256i
#include "int_clamp.h"

/* Two vectors of w-bit lanes -> one of w/2-bit lanes: the low halves (truncation), in order. */
static FN DT_INLINE __m256i ii_halve(__m256i a, __m256i b, int w)
{
    switch (w) {
    case 64: { /* dwords 0 and 2 of each 128-bit lane: a0 a1 b0 b1 | a2 a3 b2 b3; the qword
                * permute (0, 2, 1, 3) puts them in order */
        const __m256 t = _mm256_shuffle_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), 0x88);
        return _mm256_permute4x64_epi64(_mm256_castps_si256(t), 0xD8);
    }
    case 32: { /* masked to 16 bits, the unsigned-saturating pack changes no value; it packs per
                * 128-bit lane, the qword permute restores the order */
        const __m256i m = _mm256_set1_epi32(0xFFFF);
        const __m256i t = _mm256_packus_epi32(_mm256_and_si256(a, m), _mm256_and_si256(b, m));
        return _mm256_permute4x64_epi64(t, 0xD8);
    }
    default: { /* 16 -> 8, the same way */
        const __m256i m = _mm256_set1_epi16(0xFF);
        const __m256i t = _mm256_packus_epi16(_mm256_and_si256(a, m), _mm256_and_si256(b, m));
        return _mm256_permute4x64_epi64(t, 0xD8);
    }
    }
}

/* 32 elements: W / 8 vectors of W-bit lanes in, dw / 8 whole vectors out. Every load comes
 * before every store (in place works). */
static FN DT_INLINE void ii_block(uint8_t *d, const uint8_t *s, int sw, int ss, int dw, int ds,
                                  int sat)
{
    const int W = sw > dw ? sw : dw;
    __m256i x[8];
    int n = W / 8;
#pragma GCC unroll 8
    for (int j = 0; j < n; j++) {
        x[j] = ii_load(s + (size_t)j * 32 * (size_t)sw / (size_t)W, sw, ss, W);
        if (sat)
            x[j] = int_clamp(x[j], W, sw, ss, dw, ds);
    }
#pragma GCC unroll 3
    for (int w = W; w > dw; w /= 2) { /* halve the lanes until they are dw bits */
        n /= 2;
#pragma GCC unroll 4
        for (int j = 0; j < n; j++) /* x[j] is written after x[2j], x[2j+1] are read */
            x[j] = ii_halve(x[2 * j], x[2 * j + 1], w);
    }
#pragma GCC unroll 8
    for (int j = 0; j < n; j++)
        _mm256_storeu_si256((__m256i *)(d + 32 * (size_t)j), x[j]);
}

static FN DT_INLINE void ii_loop(void *dst, const void *src, size_t begin, size_t end, int sw,
                                 int ss, int dw, int ds, int sat)
{
    const size_t sb = (size_t)sw / 8, db = (size_t)dw / 8; /* bytes per element */
    const uint8_t *s = (const uint8_t *)src + begin * sb;
    uint8_t *d = (uint8_t *)dst + begin * db;
    const size_t n = end - begin;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        dt_prefetch_span(s + i * sb, 32 * sb);
        ii_block(d + i * db, s + i * sb, sw, ss, dw, ds, sat);
    }
    if (i < n) { /* the tail through zeroed blocks (read before written: in place works) */
        _Alignas(32) uint8_t tin[32 * 8] = {0}, tout[32 * 8];
        memcpy(tin, s + i * sb, (n - i) * sb);
        ii_block(tout, tin, sw, ss, dw, ds, sat);
        memcpy(d + i * db, tout, (n - i) * db);
    }
}

#define II_LOOP ii_loop
#include "int_pairs.h"

/* integer -> integer, or NULL (the rounding mode does not matter; an unknown one is left to the
 * reference path, as kernels_avx512.c does) */
dt_kernel_fn dt_int_pick_avx2(const dt_format *df, const dt_format *sf, const dt_rules *r)
{
    const int is = int_index(sf), id = int_index(df);
    if (dt_mode_of(r->round) < 0 || is < 0 || id < 0)
        return NULL;
    return ii_fns[is][id];
}
#endif
