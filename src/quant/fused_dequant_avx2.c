/* Fused AVX2 dequantization of whole blocks: 32 byte codes (16 float4 or int8 codes) at a time
 * are decoded in registers, multiplied by their block's factor (one float32 multiply) and
 * rounded to bfloat16 or stored as float32, straight into y (streaming stores where the storer
 * streams). The block factors come from a table indexed by the block's scale code.
 *
 * Decoding. Every float code type here is a float16 in disguise: its bits moved into float16
 * position give value × 2^-p exactly (normal codes as normal float16, subnormal codes as
 * subnormal float16), and vcvtph2ps widens that exactly to float32:
 *
 *   float8e4m3fn  s.eeee.mmm  -> s 0eeee mmm0000000 (bias 15 for 7)        p = 8, NaN -> 0x7E00
 *   float8e5m2    s.eeeee.mm  -> the float16's top byte                     p = 0, NaN -> 0x7E00
 *   float6e3m2fn  s.eee.mm    -> s 00eee mm00000000                         p = 12
 *   float6e2m3fn  s.ee.mmm    -> s 000ee mmm0000000                         p = 14
 *   float4e2m1    s.ee.m      -> s 000ee m000000000 (a 16-entry byte table) p = 14
 *   int8 (MXINT8)             -> vpmovsxbd + vcvtdq2ps                      p = 0
 *
 * Factors. The 2^p goes into the factor: k' = fl32(k × 2^p) is exact when it does not
 * overflow, and then fl32((value × 2^-p) × k') = fl32(value × k), the product the unfused path
 * rounds. Every NaN reaching that product is the canonical one (0x7FC00000 | sign): the codes'
 * NaN decode to it, x86 keeps an operand's NaN and makes 0 × Inf 0xFFC00000. The bfloat16
 * rounding u + 0x7FFF + lsb then needs no NaN case: it leaves 0x7FC0 | sign, as the unfused
 * rounding does. A factor for which this does not hold (k × 2^p overflows, or k is a NaN with a
 * payload) marks its blocks slow: value × 2^-p × 2^p (exact) × k, and the rounding with its NaN
 * case, the unfused path's steps. Blocks with NaN codes are done again on the slow steps (the
 * fast ones note NaN codes on the way; when a chunk had some, its blocks are looked at and
 * those written again): there the code's NaN is kept whatever the factor, as value × factor
 * in the simple path gives it.
 *
 * Order of the lanes. For bfloat16 the 16 codes are split into even and odd elements, so that
 * the two rounded vectors interleave into memory order by one shift, mask and or (no shuffle);
 * float32 (and int8 codes) take elements 0-7 and 8-15. */
#include "fused_dequant.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "../kernels/x86_attrs.h"
#include <immintrin.h>

enum { FD_E4M3, FD_E5M2, FD_E3M2, FD_E2M3, FD_E2M1, FD_INT8, FD_KINDS };

/* The constants of the fast steps, made once per chunk: the compiler, knowing their values,
 * built them again (a broadcast each) for every block */
typedef struct fd_consts {
    __m256i ones, bias, nan_bits; /* 1, 0x7FFF (rounding); the float8 NaN test's byte mask */
} fd_consts;

DT_TARGET_AVX2 static DT_INLINE __m256i fd_opaque(__m256i v)
{
    __asm__("" : "+x"(v)); /* hides the value: kept in a register or spilled, not rebuilt */
    return v;
}

/* float16 bits of value × 2^-p from L = code << 8 (16-bit lanes, low byte zero); nan: the codes
 * may be NaN (else the NaN code of float8e4m3fn would come out 1.875) */
DT_TARGET_AVX2 static DT_INLINE __m256i fd_f16(int kind, bool nan, __m256i L)
{
    switch (kind) {
    case FD_E4M3: {
        /* the sign stays at bit 15, the 7 magnitude bits move to 13..7 (bit 14: the sign's copy) */
        const __m256i h = _mm256_and_si256(_mm256_srai_epi16(L, 1), _mm256_set1_epi16((short)0xBF80));
        if (!nan)
            return h;
        /* magnitude 0x7F (NaN) came out 0x3F80: xor 0x4180 makes it 0x7E00, float16's NaN */
        const __m256i is_nan = _mm256_cmpeq_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x7FFF)),
                                                  _mm256_set1_epi16(0x3F80));
        return _mm256_xor_si256(h, _mm256_and_si256(is_nan, _mm256_set1_epi16(0x4180)));
    }
    case FD_E3M2: /* code bits 5..0 to 15..10 (6, 7 dropped), back by 2 with the sign spread */
        return _mm256_and_si256(_mm256_srai_epi16(_mm256_slli_epi16(L, 2), 2),
                                _mm256_set1_epi16((short)0x9F00));
    case FD_E2M3: /* the same, back by 3: the magnitude at 11..7 */
        return _mm256_and_si256(_mm256_srai_epi16(_mm256_slli_epi16(L, 2), 3),
                                _mm256_set1_epi16((short)0x8F80));
    default: /* FD_E5M2: already a float16 */
        return L;
    }
}

/* float8e5m2's NaN codes (magnitude 0x7D..0x7F) -> 0x7E | sign, float16's canonical NaN */
DT_TARGET_AVX2 static DT_INLINE __m256i fd_e5m2_nan(__m256i x)
{
    const __m256i mag = _mm256_and_si256(x, _mm256_set1_epi8(0x7F));
    const __m256i nan = _mm256_cmpgt_epi8(mag, _mm256_set1_epi8(0x7C));
    return _mm256_xor_si256(x, _mm256_and_si256(nan, _mm256_xor_si256(mag, _mm256_set1_epi8(0x7E))));
}

/* 16 bytes from p in the low half, zeros in the high half */
DT_TARGET_AVX2 static DT_INLINE __m256i fd_load16(const uint8_t *p)
{
    return _mm256_inserti128_si256(_mm256_setzero_si256(),
                                   _mm_loadu_si128((const __m128i *)(const void *)p), 0);
}

/* The float16 bits of 32 byte codes x (float8, float6): the even elements in *l0 and the odd
 * ones in *l1 (eo), or elements [0-7 | 16-23] in *l0 and [8-15 | 24-31] in *l1 */
DT_TARGET_AVX2 static DT_INLINE void fd_f16_bytes(int kind, bool eo, bool nan, __m256i x,
                                                  __m256i *l0, __m256i *l1)
{
    if (kind == FD_E5M2 && nan)
        x = fd_e5m2_nan(x);
    if (eo) { /* code << 8 of the even bytes, and of the odd ones */
        *l0 = fd_f16(kind, nan, _mm256_slli_epi16(x, 8));
        *l1 = fd_f16(kind, nan, _mm256_and_si256(x, _mm256_set1_epi16((short)0xFF00)));
    } else {
        *l0 = fd_f16(kind, nan, _mm256_unpacklo_epi8(_mm256_setzero_si256(), x));
        *l1 = fd_f16(kind, nan, _mm256_unpackhi_epi8(_mm256_setzero_si256(), x));
    }
}

/* The values × 2^-p of the 16 elements from element i of float4 or int8 codes: even elements
 * in *a and odd ones in *b (eo), or elements 0-7 and 8-15. t4: float4e2m1's float16 top
 * bytes. */
DT_TARGET_AVX2 static DT_INLINE void fd_decode16(int kind, bool eo, const uint8_t *codes,
                                                 size_t i, __m128i t4, __m256 *a, __m256 *b)
{
    if (kind == FD_INT8) {
        *a = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(codes + i))));
        *b = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(codes + i + 8))));
        return;
    }
    /* FD_E2M1: two codes a byte, element 2j in the low nibble */
    const __m128i zero = _mm_setzero_si128();
    const __m128i x = _mm_loadl_epi64((const __m128i *)(const void *)(codes + i / 2));
    const __m128i lo = _mm_and_si128(x, _mm_set1_epi8(0x0F));
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(x, 4), _mm_set1_epi8(0x0F));
    __m128i la, lb;
    if (eo) {
        la = _mm_unpacklo_epi8(zero, _mm_shuffle_epi8(t4, lo));
        lb = _mm_unpacklo_epi8(zero, _mm_shuffle_epi8(t4, hi));
    } else {
        const __m128i h = _mm_shuffle_epi8(t4, _mm_unpacklo_epi8(lo, hi));
        la = _mm_unpacklo_epi8(zero, h);
        lb = _mm_unpackhi_epi8(zero, h);
    }
    *a = _mm256_cvtph_ps(la);
    *b = _mm256_cvtph_ps(lb);
}

/* float8 NaN codes seen so far: the largest byte of code | 0x80 (float8e4m3fn: 0xFF is NaN) or of
 * code & 0x7F (float8e5m2: above 0x7C is NaN); nan_bits is 0x80 or 0x7F */
DT_TARGET_AVX2 static DT_INLINE __m256i fd_nan_seen(int kind, __m256i m, __m256i x, __m256i nan_bits)
{
    if (kind == FD_E4M3)
        return _mm256_max_epu8(m, _mm256_or_si256(x, nan_bits));
    if (kind == FD_E5M2)
        return _mm256_max_epu8(m, _mm256_and_si256(x, nan_bits));
    return m;
}

DT_TARGET_AVX2 static DT_INLINE bool fd_nan_any(int kind, __m256i m)
{
    const __m256i nan = kind == FD_E4M3 ? _mm256_cmpeq_epi8(m, _mm256_set1_epi8(-1))
                                        : _mm256_cmpgt_epi8(m, _mm256_set1_epi8(0x7C));
    return (kind == FD_E4M3 || kind == FD_E5M2) && _mm256_movemask_epi8(nan) != 0;
}

/* bfloat16, nearest even, in the high half of each lane; a NaN gives 0x7FC0 | sign there
 * (with nan_case; without, v's NaN must be canonical, which the rounding keeps) */
DT_TARGET_AVX2 static DT_INLINE __m256i fd_bf16_high(bool nan_case, __m256 v, const fd_consts *kc)
{
    const __m256i u = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), kc->ones);
    const __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(lsb, kc->bias));
    if (!nan_case)
        return r;
    const __m256i qnan = _mm256_or_si256(_mm256_and_si256(u, _mm256_set1_epi32((int)0x80000000u)),
                                         _mm256_set1_epi32(0x7FC00000));
    return _mm256_blendv_epi8(r, qnan, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
}

/* 16 bfloat16 in memory order from the two vectors of fd_decode16 (or fd_f16_bytes) */
DT_TARGET_AVX2 static DT_INLINE __m256i fd_bf16_16(bool eo, bool nan_case, __m256 a, __m256 b,
                                                  const fd_consts *kc)
{
    const __m256i ra = fd_bf16_high(nan_case, a, kc), rb = fd_bf16_high(nan_case, b, kc);
    if (eo) /* even element in the low half of each 32 bits, odd in the high half */
        return _mm256_blend_epi16(_mm256_srli_epi32(ra, 16), rb, 0xAA);
    /* packus works within 128-bit lanes: 0-3 8-11 4-7 12-15, put back in order */
    return _mm256_permute4x64_epi64(
        _mm256_packus_epi32(_mm256_srli_epi32(ra, 16), _mm256_srli_epi32(rb, 16)), 0xD8);
}

/* How the output is written: ordinary stores, or streaming ones to a y that is 32-byte aligned
 * or 16 bytes past (a line of 32 then holds the end of one vector and the start of the next) */
enum { FD_STOREU, FD_NT, FD_NT_HALF, FD_MODES };

/* the 32 bytes of v to d */
DT_TARGET_AVX2 static DT_INLINE void fd_put(int mode, uint8_t *d, __m256i v, const uint8_t *y,
                                            __m256i *carry)
{
    if (mode == FD_STOREU) {
        _mm256_storeu_si256((__m256i *)(void *)d, v);
    } else if (mode == FD_NT) {
        _mm256_stream_si256((__m256i *)(void *)d, v);
    } else {
        if (d == y) /* the first half line is y's alone */
            _mm_stream_si128((__m128i *)(void *)d, _mm256_castsi256_si128(v));
        else /* the previous vector's high half and v's low half */
            _mm256_stream_si256((__m256i *)(void *)(d - 16),
                                _mm256_permute2x128_si256(*carry, v, 0x21));
        *carry = v;
    }
}

static const int fd_pow2[FD_KINDS] = {8, 0, 12, 14, 14, 0};

/* v × f (v = value × 2^-p, f = k × 2^p); slow: v × 2^p × f (f = k), a NaN value kept whatever
 * f is (value × factor of the simple path gives the value's NaN then) */
DT_TARGET_AVX2 static DT_INLINE __m256 fd_scale(int kind, bool slow, __m256 v, __m256 f)
{
    if (!slow)
        return _mm256_mul_ps(v, f);
    if (fd_pow2[kind])
        v = _mm256_mul_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32((127 + fd_pow2[kind]) << 23)));
    return _mm256_blendv_ps(_mm256_mul_ps(v, f), v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
}

/* elements [i, i + 16) from their values × 2^-p (a, b as fd_decode16 gives them) */
DT_TARGET_AVX2 static DT_INLINE void fd_emit16(int kind, bool bf16, int mode, bool slow, uint8_t *y,
                                               size_t i, __m256 a, __m256 b, __m256 f,
                                               const fd_consts *kc, __m256i *carry)
{
    const bool eo = bf16 && kind != FD_INT8;
    const size_t size = bf16 ? 2 : 4;
    a = fd_scale(kind, slow, a, f);
    b = fd_scale(kind, slow, b, f);
    if (bf16) {
        fd_put(mode, y + i * size, fd_bf16_16(eo, slow, a, b, kc), y, carry);
    } else {
        fd_put(mode, y + i * size, _mm256_castps_si256(a), y, carry);
        fd_put(mode, y + i * size + 32, _mm256_castps_si256(b), y, carry);
    }
}

/* elements [i, e) of a block with factor f (slow: see the top); the fast steps note the float8
 * NaN codes they meet in *seen (fd_nan_seen) */
DT_TARGET_AVX2 static DT_INLINE void fd_block(int kind, bool bf16, int mode, bool slow,
                                              uint8_t *y, const uint8_t *codes, size_t i,
                                              size_t e, __m256 f, const fd_consts *kc,
                                              __m256i *carry, __m256i *seen)
{
    const bool eo = bf16 && kind != FD_INT8;
    if (kind != FD_E2M1 && kind != FD_INT8) { /* byte codes: 32 a step, then 16 */
        for (; i < e; i += 32) {
            __m256i x, l0, l1;
            if (e - i >= 32)
                x = _mm256_loadu_si256((const __m256i *)(const void *)(codes + i));
            else
                x = fd_load16(codes + i);
            if (!slow)
                *seen = fd_nan_seen(kind, *seen, x, kc->nan_bits);
            fd_f16_bytes(kind, eo, slow, x, &l0, &l1);
            fd_emit16(kind, bf16, mode, slow, y, i, _mm256_cvtph_ps(_mm256_castsi256_si128(l0)),
                      _mm256_cvtph_ps(_mm256_castsi256_si128(l1)), f, kc, carry);
            if (e - i < 32)
                break;
            fd_emit16(kind, bf16, mode, slow, y, i + 16,
                      _mm256_cvtph_ps(_mm256_extracti128_si256(l0, 1)),
                      _mm256_cvtph_ps(_mm256_extracti128_si256(l1, 1)), f, kc, carry);
        }
        return;
    }
    /* float4e2m1 code c -> the top byte of its float16: sign to bit 7, e e m to bits 3..1 */
    const __m128i t4 = _mm_setr_epi8(0x00, 0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, (char)0x80,
                                     (char)0x82, (char)0x84, (char)0x86, (char)0x88, (char)0x8A,
                                     (char)0x8C, (char)0x8E);
    for (; i < e; i += 16) {
        __m256 a, b;
        fd_decode16(kind, eo, codes, i, t4, &a, &b);
        fd_emit16(kind, bf16, mode, slow, y, i, a, b, f, kc, carry);
    }
}

/* the blocks of elements [0, n) (blocks of B, the last may be short); one: B is one step of
 * fd_block (32 byte codes, 16 others) and n a multiple of it */
DT_TARGET_AVX2 static DT_INLINE void fd_blocks(int kind, bool bf16, int mode, bool one, uint8_t *y,
                                               const uint8_t *codes, size_t n, size_t B,
                                               const uint8_t *sc, const dt_fused *fz,
                                               const fd_consts *kc, __m256i *carry,
                                               __m256i *seen)
{
    const size_t step = kind == FD_E2M1 || kind == FD_INT8 ? 16 : 32;
    for (size_t i = 0, b = 0; i < n; i += B, b++) {
        const unsigned c = sc[b];
        const size_t e = one ? i + step : n - i < B ? n : i + B;
        if (!fz->slow[c])
            fd_block(kind, bf16, mode, false, y, codes, i, e, _mm256_set1_ps(fz->kq[c]), kc, carry, seen);
        else
            fd_block(kind, bf16, mode, true, y, codes, i, e, _mm256_set1_ps(fz->k[c]), kc, carry, seen);
    }
}

/* n elements of y from their codes, block b (B elements) with the factor of scale code sc[b] */
DT_TARGET_AVX2 static DT_INLINE void fd_run(int kind, bool bf16, int mode, uint8_t *y,
                                            const uint8_t *codes, size_t n, size_t B,
                                            const uint8_t *sc, const dt_fused *fz)
{
    __m256i carry = _mm256_setzero_si256();
    const fd_consts kc = {fd_opaque(_mm256_set1_epi32(1)), fd_opaque(_mm256_set1_epi32(0x7FFF)),
                          fd_opaque(_mm256_set1_epi8(kind == FD_E4M3 ? (char)0x80 : 0x7F))};
    const size_t step = kind == FD_E2M1 || kind == FD_INT8 ? 16 : 32;
    __m256i seen = _mm256_setzero_si256();
    if (B == step && n % B == 0) /* one step a block: no loop in the block */
        fd_blocks(kind, bf16, mode, true, y, codes, n, B, sc, fz, &kc, &carry, &seen);
    else
        fd_blocks(kind, bf16, mode, false, y, codes, n, B, sc, fz, &kc, &carry, &seen);
    if (mode == FD_NT_HALF && n) /* the last vector's high half */
        _mm_stream_si128((__m128i *)(void *)(y + n * (bf16 ? 2 : 4) - 16),
                         _mm256_extracti128_si256(carry, 1));
    if (fd_nan_any(kind, seen)) /* the fast blocks with NaN codes again, on the slow steps */
        for (size_t i = 0, b = 0; i < n; i += B, b++) {
            const unsigned c = sc[b];
            const size_t e = n - i < B ? n : i + B;
            __m256i m = _mm256_setzero_si256(), unused;
            for (size_t j = i; j < e; j += 16)
                m = fd_nan_seen(kind, m, fd_load16(codes + j), kc.nan_bits);
            if (!fz->slow[c] && fd_nan_any(kind, m))
                fd_block(kind, bf16, FD_STOREU, true, y, codes, i, e, _mm256_set1_ps(fz->k[c]),
                         &kc, &unused, &unused);
        }
}

/* one kernel per code type, output (float32, bfloat16) and store mode */
#define FD_ONE(kind, name, bf16, mode)                                                           \
    DT_TARGET_AVX2 static void name(uint8_t *y, const uint8_t *codes, size_t n, size_t B,      \
                                    const uint8_t *sc, const dt_fused *fz)                     \
    {                                                                                          \
        fd_run(kind, bf16, mode, y, codes, n, B, sc, fz);                                      \
    }
#define FD_KIND(kind, tag)                                                                     \
    FD_ONE(kind, fd_##tag##_f32, false, FD_STOREU)                                             \
    FD_ONE(kind, fd_##tag##_f32_nt, false, FD_NT)                                              \
    FD_ONE(kind, fd_##tag##_f32_nth, false, FD_NT_HALF)                                        \
    FD_ONE(kind, fd_##tag##_bf16, true, FD_STOREU)                                             \
    FD_ONE(kind, fd_##tag##_bf16_nt, true, FD_NT)                                              \
    FD_ONE(kind, fd_##tag##_bf16_nth, true, FD_NT_HALF)
#define FD_ROW(tag)                                                                            \
    {{fd_##tag##_f32, fd_##tag##_f32_nt, fd_##tag##_f32_nth},                                  \
     {fd_##tag##_bf16, fd_##tag##_bf16_nt, fd_##tag##_bf16_nth}}

FD_KIND(FD_E4M3, e4m3)
FD_KIND(FD_E5M2, e5m2)
FD_KIND(FD_E3M2, e3m2)
FD_KIND(FD_E2M3, e2m3)
FD_KIND(FD_E2M1, e2m1)
FD_KIND(FD_INT8, int8)

static const dt_fused_kernel fd_kernels[FD_KINDS][2][FD_MODES] = {
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

bool dt_fused_init(dt_fused *fz, const dt_storer *s, const dt_quant *q, const uint8_t *codes)
{
    fz->fn = NULL;
    const bool bf16 = s->type == DTCAST_BFLOAT16;
    const int kind = fd_kind(q->p.element);
    if (q->simple || !q->avx2 || q->B % 16 || kind < 0 || (!bf16 && s->type != DTCAST_FLOAT32))
        return false;
    fz->nibbles = kind == FD_E2M1;
    if (fz->nibbles ? q->code_bits != 4 || q->K % 2 : q->code_bits != 8)
        return false;
    /* blocks start at multiples of 16 elements: 32 or 64 bytes of y */
    if (s->stream && (uintptr_t)s->data % 16)
        return false;
    fz->y = s->data;
    fz->size = bf16 ? 2 : 4;
    fz->codes = codes;
    fz->pw = dt_f32_from_bits((uint32_t)(127 + fd_pow2[kind]) << 23);
    const int mode = !s->stream ? FD_STOREU : (uintptr_t)s->data % 32 ? FD_NT_HALF : FD_NT;
    fz->fn = fd_kernels[kind][bf16][mode];
    return true;
}

void dt_fused_factor(dt_fused *fz, unsigned c, float k)
{
    const uint32_t a = dt_f32_bits(k) & 0x7FFFFFFFu;
    const float t = k * fz->pw;
    fz->slow[c] = (a > 0x7F800000u && a != 0x7FC00000u) ||
                  (a < 0x7F800000u && (dt_f32_bits(t) & 0x7FFFFFFFu) == 0x7F800000u);
    fz->k[c] = k;
    fz->kq[c] = t;
}

bool dt_fused_run(const dt_fused *fz, size_t f, size_t n, size_t B, const uint8_t *sc)
{
    if (n % 16 || B % 16 || (fz->nibbles && f % 2))
        return false;
    fz->fn((uint8_t *)fz->y + f * fz->size, fz->codes + (fz->nibbles ? f / 2 : f), n, B, sc, fz);
    return true;
}

#else
bool dt_fused_init(dt_fused *fz, const dt_storer *s, const dt_quant *q, const uint8_t *codes)
{
    (void)s, (void)q, (void)codes;
    fz->fn = NULL;
    return false;
}
void dt_fused_factor(dt_fused *fz, unsigned c, float k)
{
    (void)fz, (void)c, (void)k;
}
bool dt_fused_run(const dt_fused *fz, size_t f, size_t n, size_t B, const uint8_t *sc)
{
    (void)fz, (void)f, (void)n, (void)B, (void)sc;
    return false;
}
#endif
