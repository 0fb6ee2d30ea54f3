/* ggml's block types to float32: ggml's to_float (dequantize_row_*, ggml-quants.c), bit for bit
 * as an x86-64 build of ggml-base computes it, for every block type ggml can convert, and Q8_1 /
 * Q8_K, which ggml has no to_float for (defined below).
 *
 * Arithmetic. Every value is a product of a float scale and small integers, evaluated in
 * binary32 one operation at a time, in ggml's order (this file is built with -ffp-contract=off;
 * nothing is reassociated). The products are exact in binary32 for every type but Q8_K (each
 * type's comment says why), so only the types that add two products (Q4_1, Q5_1: q*d + m;
 * Q2_K, Q4_K, Q5_K: (d*sc)*q - dmin*m) and Q8_K (a float32 scale times an int8) round. Those
 * fill lo (when not NULL) with the rounding error: y + lo is the exact value of the formula, lo
 * a float32 that holds it exactly (TwoSum of two exact products; for Q8_K the difference of the
 * exact product, computed in binary64, and y). lo is 0 where y is not finite; the types that
 * never round leave lo untouched.
 *
 * Non-finite scales. A finite scale never makes a NaN (the largest value, an fp16 scale times
 * the largest levels, is far from overflow; MXFP4 with its exponent 0xFF and Q8_K with a huge
 * float32 scale overflow to +-Inf, which is the same on every IEEE host). A block whose scale is
 * Inf or NaN (random bytes) is decoded with the same formula through emu_mul / emu_add /
 * emu_sub, which give x86-64 SSE's NaN results on any host: a NaN operand comes back quieted
 * (the first one if both are NaN), an invalid operation (Inf * 0, Inf - Inf) gives the default
 * NaN 0xFFC00000. Where ggml's binary negates rather than multiplies (the IQ2/IQ3 signs, Q1_0's
 * -d), a NaN's sign flips; Q1_0 quiets its NaN scale as ggml's fp16 conversion does.
 *
 * Layout. Each block is read byte by byte: multi-byte fields little-endian with dt_ggml_rd16 /
 * rd32, grid entries by shifts, so a big-endian host decodes the same bytes to the same values.
 * Each type's comment gives the block layout as byte offsets from the block start. */
#include "ggml.h"

#include <float.h>
#include <math.h>

#include "iq_tables.inc"

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "dequant.c needs binary32 evaluation of float expressions (FLT_EVAL_METHOD 0, e.g. SSE)"
#endif

#if defined(__GNUC__) || defined(__clang__)
#define DQ_INLINE static inline __attribute__((always_inline))
#else
#define DQ_INLINE static inline
#endif

/* lo + off, or NULL when lo is NULL (no arithmetic on a null pointer) */
#define LO_AT(lo, off) ((lo) ? (lo) + (off) : NULL)

/* ---- fields ---------------------------------------------------------------------------------- */
static inline float f16_at(const uint8_t *p)
{
    return dt_ggml_fp16_to_f32(dt_ggml_rd16(p));
}
static inline bool f16_finite(uint16_t h)
{
    return (h & 0x7C00u) != 0x7C00u;
}
/* a byte as int8 (two's complement), without an implementation-defined conversion */
static inline int s8(uint8_t b)
{
    return (int)(b ^ 0x80u) - 128;
}
/* byte j of a little-endian packed grid entry */
static inline unsigned grid_byte(uint64_t entry, int j)
{
    return (unsigned)(entry >> (8 * j)) & 0xFFu;
}

/* ---- x86-64 float results for blocks with a non-finite scale --------------------------------- */
static inline bool is_nan(float a)
{
    return a != a;
}
static inline float quiet(float a)
{
    return dt_ggml_f32_of(dt_ggml_bits_of(a) | 0x00400000u);
}
/* r computed from non-NaN operands: NaN only from an invalid operation -> the default NaN */
static inline float invalid_is_default(float r)
{
    return is_nan(r) ? dt_ggml_f32_of(0xFFC00000u) : r;
}
static inline float emu_mul(float a, float b)
{
    if (is_nan(a))
        return quiet(a);
    if (is_nan(b))
        return quiet(b);
    return invalid_is_default(a * b);
}
static inline float emu_add(float a, float b)
{
    if (is_nan(a))
        return quiet(a);
    if (is_nan(b))
        return quiet(b);
    return invalid_is_default(a + b);
}
static inline float emu_sub(float a, float b)
{
    if (is_nan(a))
        return quiet(a);
    if (is_nan(b))
        return quiet(b);
    return invalid_is_default(a - b);
}
/* a * b as ggml writes it: the plain operator for finite blocks (emu is a constant after
 * inlining, so those loops are plain binary32 arithmetic the compiler can vectorise) */
DQ_INLINE float op_mul(bool emu, float a, float b)
{
    return emu ? emu_mul(a, b) : a * b;
}

/* ---- the element loops the types share ------------------------------------------------------- */
/* the rounding error of s = fl(a + b) (TwoSum, Knuth: 6 operations, exact for finite a, b when
 * nothing overflows) */
static inline float two_sum_err(float a, float b, float s)
{
    const float bb = s - a, aa = s - bb;
    return (a - aa) + (b - bb);
}

/* y[l] = q[l] * s: an integer level times a scale (one rounding; the order of the two
 * operands does not matter: only s can be NaN) */
DQ_INLINE void run_scale(float *restrict y, const int8_t *restrict q, float s, int n, bool emu)
{
    for (int l = 0; l < n; l++)
        y[l] = op_mul(emu, (float)q[l], s);
}

/* y[l] = a * q[l] + b (sub false: Q4_1, Q5_1) or a * q[l] - b (sub true: the K-quants), q[l]
 * an unsigned level: a * q[l] and b are exact, the sum rounds; lo[l] (lo not NULL) receives
 * its error, 0 where y is not finite. The product is first and b second, as in ggml (this
 * matters when both are NaN: x86 returns the first; ggml's binary keeps that order). */
DQ_INLINE void run_affine(float *restrict y, float *restrict lo, const uint8_t *restrict q, float a,
                          float b, int n, bool sub, bool emu)
{
    if (emu) {
        for (int l = 0; l < n; l++) {
            const float p = emu_mul(a, (float)q[l]);
            const float s = sub ? emu_sub(p, b) : emu_add(p, b);
            y[l] = s;
            if (lo)
                lo[l] = isfinite(s) ? two_sum_err(p, sub ? -b : b, s) : 0.0f;
        }
    } else if (!lo) {
        for (int l = 0; l < n; l++)
            y[l] = sub ? a * (float)q[l] - b : a * (float)q[l] + b;
    } else {
        const float bs = sub ? -b : b; /* p - b and p + (-b) are the same IEEE operation */
        for (int l = 0; l < n; l++) {
            const float p = a * (float)q[l], s = p + bs;
            y[l] = s;
            lo[l] = two_sum_err(p, bs, s);
        }
    }
}

/* v with its sign bit flipped when neg is 1 (IEEE negation, NaN included; branch-free: the
 * sign bits of the IQ types are random) */
static inline float flip_if(float v, uint32_t neg)
{
    return dt_ggml_f32_of(dt_ggml_bits_of(v) ^ neg << 31);
}

/* The 8 bytes g of a grid entry (IQ2: one uint64 entry; IQ3: two uint32 entries of 4, the
 * first in the low half) times s, element j negated when bit j of signs is set: ggml writes
 * s * g * (bit ? -1.f : 1.f), which its build compiles to a sign flip of s * g (a NaN's sign
 * flips too) */
DQ_INLINE void run_signed8(float *restrict y, uint64_t g, unsigned signs, float s, bool emu)
{
    for (int j = 0; j < 8; j++)
        y[j] = flip_if(op_mul(emu, s, (float)grid_byte(g, j)), signs >> j & 1u);
}

/* =================================================================================================
 * The 32-element types (and Q1_0, Q2_0, MXFP4, NVFP4). "Split half": byte j of the 16 nibble bytes
 * holds element j in its low nibble and element j + 16 in its high nibble.
 * Exactness: an fp16 scale has 11 significant bits and the levels are integers of at most 7
 * significant bits (Q8_0: |q| <= 128, 128 a power of two), so each product has at most 18; fp16's
 * exponent range (2^-24 .. 65504) keeps it a normal binary32 far from overflow.
 * ============================================================================================== */

/* Q4_0, 18 bytes: [0..1] d fp16 | [2..17] 32 nibbles, split half. y = (q - 8) * d */
DQ_INLINE void blk_q4_0(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    (void)lo;
    const float d = f16_at(x);
    int8_t q[32];
    for (int j = 0; j < 16; j++) {
        q[j] = (int8_t)((x[2 + j] & 15) - 8);
        q[j + 16] = (int8_t)((x[2 + j] >> 4) - 8);
    }
    run_scale(y, q, d, 32, emu);
}

/* Q4_1, 20 bytes: [0..1] d fp16 | [2..3] m fp16 | [4..19] 32 nibbles, split half.
 * y = q * d + m: q * d is exact (4 + 11 bits), the addition rounds (lo). */
DQ_INLINE void blk_q4_1(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    const float d = f16_at(x), m = f16_at(x + 2);
    uint8_t q[32];
    for (int j = 0; j < 16; j++) {
        q[j] = x[4 + j] & 15;
        q[j + 16] = x[4 + j] >> 4;
    }
    run_affine(y, lo, q, d, m, 32, false, emu);
}

/* The fifth bits of Q5_0 / Q5_1: qh (uint32, little-endian) bit j is bit 4 of element j. */
static inline uint8_t bit5(uint32_t qh, int j)
{
    return (uint8_t)((qh >> j & 1u) << 4);
}

/* Q5_0, 22 bytes: [0..1] d fp16 | [2..5] qh | [6..21] low nibbles, split half.
 * y = (q - 16) * d, q = nibble | bit5 */
DQ_INLINE void blk_q5_0(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    (void)lo;
    const float d = f16_at(x);
    const uint32_t qh = dt_ggml_rd32(x + 2);
    int8_t q[32];
    for (int j = 0; j < 16; j++) {
        q[j] = (int8_t)(((x[6 + j] & 15) | bit5(qh, j)) - 16);
        q[j + 16] = (int8_t)(((x[6 + j] >> 4) | bit5(qh, j + 16)) - 16);
    }
    run_scale(y, q, d, 32, emu);
}

/* Q5_1, 24 bytes: [0..1] d fp16 | [2..3] m fp16 | [4..7] qh | [8..23] low nibbles, split half.
 * y = q * d + m: q * d exact (5 + 11 bits), the addition rounds (lo). */
DQ_INLINE void blk_q5_1(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    const float d = f16_at(x), m = f16_at(x + 2);
    const uint32_t qh = dt_ggml_rd32(x + 4);
    uint8_t q[32];
    for (int j = 0; j < 16; j++) {
        q[j] = (uint8_t)((x[8 + j] & 15) | bit5(qh, j));
        q[j + 16] = (uint8_t)((x[8 + j] >> 4) | bit5(qh, j + 16));
    }
    run_affine(y, lo, q, d, m, 32, false, emu);
}

/* Q8_0, 34 bytes: [0..1] d fp16 | [2..33] 32 int8. y = q * d */
DQ_INLINE void blk_q8_0(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    (void)lo;
    const float d = f16_at(x);
    for (int j = 0; j < 32; j++)
        y[j] = op_mul(emu, (float)s8(x[2 + j]), d);
}

/* Q8_1, 36 bytes: [0..1] d fp16 | [2..3] s fp16 (d * sum of q, for ggml's dot products; ignored)
 * | [4..35] 32 int8. ggml has no to_float for it; dtcast defines y = q * d, as Q8_0. */
DQ_INLINE void blk_q8_1(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    (void)lo;
    const float d = f16_at(x);
    for (int j = 0; j < 32; j++)
        y[j] = op_mul(emu, (float)s8(x[4 + j]), d);
}

/* Q1_0, 18 bytes, 128 elements: [0..1] d fp16 | [2..17] bits, element j = bit j % 8 of byte
 * 2 + j / 8 (LSB first). y = bit ? d : -d. The only type whose scale reaches y without an
 * arithmetic operation: ggml's fp16 conversion (a multiplication) quiets a signalling NaN, so
 * emu quiets it too, before -d flips the sign. */
DQ_INLINE void blk_q1_0(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    (void)lo;
    float d = f16_at(x);
    if (emu && is_nan(d))
        d = quiet(d);
    for (int j = 0; j < 128; j++) /* -d where the bit is clear */
        y[j] = flip_if(d, (x[2 + j / 8] >> (j % 8) & 1u) ^ 1u);
}

/* Q2_0, 18 bytes, 64 elements: [0..1] d fp16 | [2..17] 2-bit codes, element j in bits
 * 2 * (j % 4) of byte 2 + j / 4 (adjacent packing). y = (q - 1) * d, q in 0..3 */
DQ_INLINE void blk_q2_0(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    (void)lo;
    const float d = f16_at(x);
    int8_t q[64];
    for (int j = 0; j < 64; j++)
        q[j] = (int8_t)((x[2 + j / 4] >> (2 * (j % 4)) & 3) - 1);
    run_scale(y, q, d, 64, emu);
}

/* ggml_e8m0_to_fp32_half: 2^(e - 128) for e >= 2 (exponent field e - 1), 2^-127 for e = 1 and
 * 2^-128 for e = 0 (subnormals); e = 0xFF is 2^127 (ggml has no NaN here) */
static inline float e8m0_half(uint8_t e)
{
    return dt_ggml_f32_of(e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23);
}

/* MXFP4, 17 bytes: [0] e, E8M0 | [1..16] 32 E2M1 codes, split half.
 * y = kvalue * 2^(e - 128), kvalues_mxfp4 = 0 1 2 3 4 6 8 12, then the same negated (code 8 is
 * +0): doubled E2M1 values, so the scale is halved. A power of two times a value of at most 2
 * significant bits is exact down to the subnormal 2^-128 * 1; with e = 0xFF the values of
 * magnitude >= 2 overflow to +-Inf (2 * 2^127), as in ggml. d is never NaN: no emu. */
DQ_INLINE void blk_mxfp4(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    (void)lo;
    (void)emu;
    const float d = e8m0_half(x[0]);
    for (int j = 0; j < 16; j++) {
        y[j] = kvalues_mxfp4_f32[x[1 + j] & 15u] * d;
        y[j + 16] = kvalues_mxfp4_f32[(unsigned)x[1 + j] >> 4] * d;
    }
}

/* ggml_ue4m3_to_fp32 (which includes the factor 1/2 of the doubled kvalues): the low 7 bits
 * as E4M3 without sign, bias 7, no NaN; the byte values 0x00 and 0x7F (not 0xFF) are 0; bit 7
 * is ignored otherwise (0xFF is 240). Exact: (8 + man) 2^(exp - 11), or man 2^-10. */
static inline float ue4m3_half(uint8_t b)
{
    if (b == 0x00 || b == 0x7F)
        return 0.0f;
    const unsigned e = (unsigned)b >> 3 & 15u, m = b & 7u;
    if (e == 0)
        return (float)m * 0x1p-10f;
    return (float)(8 + m) * dt_ggml_f32_of((e + 116u) << 23);
}

/* NVFP4, 36 bytes, 64 elements in 4 sub-blocks of 16: [0..3] one UE4M3 scale per sub-block |
 * [4..35] E2M1 codes: sub-block s in bytes 4 + 8s .. 11 + 8s, byte j = element 16s + j (low
 * nibble) | element 16s + j + 8 (high nibble). y = kvalue * ue4m3_half(scale): at most 2 + 4
 * significant bits, exact; the scale is always finite. */
DQ_INLINE void blk_nvfp4(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    (void)lo;
    (void)emu;
    for (int s = 0; s < 4; s++) {
        const float d = ue4m3_half(x[s]);
        const uint8_t *qs = x + 4 + 8 * s;
        for (int j = 0; j < 8; j++) {
            y[16 * s + j] = kvalues_mxfp4_f32[qs[j] & 15u] * d;
            y[16 * s + j + 8] = kvalues_mxfp4_f32[(unsigned)qs[j] >> 4] * d;
        }
    }
}

/* =================================================================================================
 * The ternary types: y = (t - 1) * d, t in {0, 1, 2}: exact.
 * ============================================================================================== */

/* TQ1_0, 54 bytes, 256 elements: [0..47] qs, 5 trits a byte | [48..51] qh, 4 trits a byte |
 * [52..53] d fp16 (the scale comes last).
 *
 *   A byte holds trits t0 t1 t2 t3 t4 (t0 the most significant base-3 digit) as
 *   b = ceil(n * 256 / 243), n = t0 t1 t2 t3 t4 in base 3 (< 243): b / 256 ~ n / 243, a fixed
 *   point fraction whose base-3 digits are the trits. Digit k: shift the top k trits out,
 *   c = (b * 3^k) mod 256, then t_k = (3 c) >> 8, the integer part of 3 c / 256.
 *
 *     qs[ 0..31]  byte m      : elements m, m+32, m+64, m+96, m+128        (t0..t4)
 *     qs[32..47]  byte 32 + m : elements 160+m, 176+m, 192+m, 208+m, 224+m (t0..t4)
 *     qh[ 0.. 3]  byte j      : elements 240+j, 244+j, 248+j, 252+j        (t0..t3; t4 unused)
 */
static inline int8_t trit(uint8_t b, int k)
{
    static const uint8_t pow3[5] = {1, 3, 9, 27, 81};
    const unsigned c = (unsigned)(b * pow3[k]) & 0xFFu;
    return (int8_t)((int)((c * 3u) >> 8) - 1);
}

DQ_INLINE void blk_tq1_0(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    (void)lo;
    const float d = f16_at(x + 52);
    int8_t q[256];
    for (int k = 0; k < 5; k++)
        for (int m = 0; m < 32; m++)
            q[32 * k + m] = trit(x[m], k);
    for (int k = 0; k < 5; k++)
        for (int m = 0; m < 16; m++)
            q[160 + 16 * k + m] = trit(x[32 + m], k);
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < 4; j++)
            q[240 + 4 * k + j] = trit(x[48 + j], k);
    run_scale(y, q, d, 256, emu);
}

/* TQ2_0, 66 bytes, 256 elements: [0..63] 2-bit codes t | [64..65] d fp16 (last).
 * Byte 32g + m holds element 128g + 32l + m in bits 2l..2l+1 (l = 0..3). t = 3 gives +2d (the
 * quantizer never writes it). */
DQ_INLINE void blk_tq2_0(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    (void)lo;
    const float d = f16_at(x + 64);
    int8_t q[256];
    for (int g = 0; g < 2; g++)
        for (int l = 0; l < 4; l++)
            for (int m = 0; m < 32; m++)
                q[128 * g + 32 * l + m] = (int8_t)((x[32 * g + m] >> (2 * l) & 3) - 1);
    run_scale(y, q, d, 256, emu);
}

/* =================================================================================================
 * K-quants: 256 elements in groups of 16 (Q2_K, Q3_K, Q6_K) or 32 (Q4_K, Q5_K), each group with
 * integer sub-scales of the block's fp16 scale(s).
 *
 * The 2-bit levels of Q2_K and Q3_K (levels2): element e = 128g + 32k + l (g = 0..1, k = 0..3,
 * l = 0..31) is in bits 2k..2k+1 of qs[32g + l]: each 32-byte half of qs holds four 32-element
 * runs in its bit pairs.
 * ============================================================================================== */
static inline void levels2(const uint8_t *restrict qs, uint8_t *restrict q)
{
    for (int g = 0; g < 2; g++)
        for (int k = 0; k < 4; k++)
            for (int l = 0; l < 32; l++)
                q[128 * g + 32 * k + l] = (uint8_t)(qs[32 * g + l] >> (2 * k) & 3);
}

/* Q2_K, 84 bytes: [0..15] scales: byte g = sub-scale (low nibble) | sub-min (high nibble) of
 * group g (elements 16g..16g+15) | [16..79] qs, 2-bit levels (levels2) | [80..81] d fp16 |
 * [82..83] dmin fp16.
 * y = (d * sc) * q - dmin * m: d * sc (11 + 4 bits) times q (2 bits) and dmin * m (11 + 4
 * bits) are exact, the difference rounds (lo). */
DQ_INLINE void blk_q2_K(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    const float d = f16_at(x + 80), dmin = f16_at(x + 82);
    uint8_t q[256];
    levels2(x + 16, q);
    for (int g = 0; g < 16; g++) {
        const float dl = op_mul(emu, d, (float)(x[g] & 15));
        const float ml = op_mul(emu, dmin, (float)(x[g] >> 4));
        run_affine(y + 16 * g, LO_AT(lo, 16 * g), q + 16 * g, dl, ml, 16, true, emu);
    }
}

/* Q3_K, 110 bytes: [0..31] hmask | [32..95] qs, 2-bit levels (levels2) | [96..107] 16 six-bit
 * sub-scales | [108..109] d fp16.
 *   hmask: bit e / 32 of byte e % 32 is element e's third bit; q = 2-bit level - (bit ? 0 : 4)
 *   sub-scales s0..s15 (each biased by 32) in 12 bytes b0..b11:
 *     b0..b7 : low nibble = bits 0-3 of s0..s7, high nibble = bits 0-3 of s8..s15
 *     b8..b11: b(8+k) = bits 4-5 of s(k) | s(k+4) << 2 | s(k+8) << 4 | s(k+12) << 6
 * y = (d * (s - 32)) * q, group of 16 elements per sub-scale: 11 + 5 + 2 bits, exact. */
DQ_INLINE void blk_q3_K(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    (void)lo;
    const uint8_t *hm = x, *qs = x + 32, *sc = x + 96;
    const float d = f16_at(x + 108);
    uint8_t q2[256];
    int8_t q[256];
    levels2(qs, q2);
    for (int k = 0; k < 8; k++) /* k = e / 32 */
        for (int l = 0; l < 32; l++)
            q[32 * k + l] = (int8_t)(q2[32 * k + l] - 4 + 4 * (hm[l] >> k & 1));
    for (int g = 0; g < 16; g++) {
        const int lo4 = g < 8 ? sc[g] & 15 : sc[g - 8] >> 4;
        const int hi2 = sc[8 + g % 4] >> (2 * (g / 4)) & 3;
        const float dl = op_mul(emu, d, (float)((lo4 | hi2 << 4) - 32));
        run_scale(y + 16 * g, q + 16 * g, dl, 16, emu);
    }
}

/* The 6-bit sub-scales and sub-mins of Q4_K and Q5_K (ggml's get_scale_min_k4): 8 of each in
 * 12 bytes b0..b11, group j = elements 32j..32j+31.
 *     b0..b3 : bits 0-5 = sc0..sc3,  bits 6-7 = bits 4-5 of sc4..sc7
 *     b4..b7 : bits 0-5 = m0..m3,    bits 6-7 = bits 4-5 of m4..m7
 *     b8..b11: low nibble = bits 0-3 of sc4..sc7, high nibble = bits 0-3 of m4..m7 */
static inline void scale_min_k4(const uint8_t *b, int j, int *sc, int *m)
{
    if (j < 4) {
        *sc = b[j] & 63;
        *m = b[j + 4] & 63;
    } else {
        *sc = (b[j + 4] & 15) | (b[j - 4] >> 6) << 4;
        *m = (b[j + 4] >> 4) | (b[j] >> 6) << 4;
    }
}

/* Q4_K, 144 bytes: [0..1] d fp16 | [2..3] dmin fp16 | [4..15] sub-scales and mins
 * (scale_min_k4) | [16..143] qs: the 32 bytes 16 + 32c .. hold elements 64c + l (low nibble)
 * and 64c + 32 + l (high nibble).
 * y = (d * sc) * q - dmin * m: (11 + 6 bits) * 4 bits and 11 + 6 bits, exact; the difference
 * rounds (lo). */
DQ_INLINE void blk_q4_K(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    const float d = f16_at(x), dmin = f16_at(x + 2);
    for (int c = 0; c < 4; c++) {
        const uint8_t *qs = x + 16 + 32 * c;
        uint8_t q[64];
        for (int l = 0; l < 32; l++) {
            q[l] = qs[l] & 15;
            q[l + 32] = qs[l] >> 4;
        }
        for (int h = 0; h < 2; h++) {
            int sc, m;
            scale_min_k4(x + 4, 2 * c + h, &sc, &m);
            const float dl = op_mul(emu, d, (float)sc), ml = op_mul(emu, dmin, (float)m);
            const int at = 64 * c + 32 * h;
            run_affine(y + at, LO_AT(lo, at), q + 32 * h, dl, ml, 32, true, emu);
        }
    }
}

/* Q5_K, 176 bytes: [0..1] d fp16 | [2..3] dmin fp16 | [4..15] sub-scales and mins
 * (scale_min_k4) | [16..47] qh: bit e / 32 of byte e % 32 is bit 4 of element e | [48..175]
 * low nibbles as Q4_K's qs.
 * y = (d * sc) * q - dmin * m: (11 + 6 bits) * 5 bits = 22 bits, exact; the difference rounds
 * (lo). */
DQ_INLINE void blk_q5_K(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    const float d = f16_at(x), dmin = f16_at(x + 2);
    const uint8_t *qh = x + 16;
    for (int c = 0; c < 4; c++) {
        const uint8_t *qs = x + 48 + 32 * c;
        uint8_t q[64];
        for (int l = 0; l < 32; l++) {
            q[l] = (uint8_t)((qs[l] & 15) | (qh[l] >> (2 * c) & 1) << 4);
            q[l + 32] = (uint8_t)((qs[l] >> 4) | (qh[l] >> (2 * c + 1) & 1) << 4);
        }
        for (int h = 0; h < 2; h++) {
            int sc, m;
            scale_min_k4(x + 4, 2 * c + h, &sc, &m);
            const float dl = op_mul(emu, d, (float)sc), ml = op_mul(emu, dmin, (float)m);
            const int at = 64 * c + 32 * h;
            run_affine(y + at, LO_AT(lo, at), q + 32 * h, dl, ml, 32, true, emu);
        }
    }
}

/* Q6_K, 210 bytes: [0..127] ql, low 4 bits | [128..191] qh, high 2 bits | [192..207] 16 int8
 * sub-scales, one per 16 elements | [208..209] d fp16.
 * Element e = 128g + 32k + l (g = 0..1, k = 0..3, l = 0..31):
 *     low 4 bits  = nibble k / 2 (low, high) of ql[64g + 32 (k % 2) + l]
 *     high 2 bits = bits 2k..2k+1 of qh[32g + l]
 * y = (d * sc) * (q - 32): 11 + 7 bits (|sc| <= 128, 128 a power of two) times 5 bits
 * (|q - 32| <= 32), at most 23 significant bits: exact. */
DQ_INLINE void blk_q6_K(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    (void)lo;
    const float d = f16_at(x + 208);
    int8_t q[256];
    for (int g = 0; g < 2; g++) {
        const uint8_t *ql = x + 64 * g, *qh = x + 128 + 32 * g;
        for (int l = 0; l < 32; l++) {
            const unsigned h = qh[l];
            q[128 * g + l] = (int8_t)(((ql[l] & 15) | (h & 3) << 4) - 32);
            q[128 * g + 32 + l] = (int8_t)(((ql[l + 32] & 15) | (h >> 2 & 3) << 4) - 32);
            q[128 * g + 64 + l] = (int8_t)(((ql[l] >> 4) | (h >> 4 & 3) << 4) - 32);
            q[128 * g + 96 + l] = (int8_t)(((ql[l + 32] >> 4) | (h >> 6 & 3) << 4) - 32);
        }
    }
    for (int s = 0; s < 16; s++) {
        const float dl = op_mul(emu, d, (float)s8(x[192 + s]));
        run_scale(y + 16 * s, q + 16 * s, dl, 16, emu);
    }
}

/* Q8_K, 292 bytes: [0..3] d float32 | [4..259] 256 int8 | [260..291] 16 int16 sums of 16 q
 * (for ggml's dot products; ignored). ggml's Q8_K is an intermediate of its dot products with
 * no to_float in the type traits; dtcast defines y = d * q, which is also what ggml's
 * dequantize_row_q8_K computes. A float32 d (24 bits) times an int8 can round: lo is the
 * exact product (24 + 8 bits: exact in binary64) minus y, a multiple of d's last bit (>= 2^-149)
 * of at most 8 significant bits, so a float32. */
DQ_INLINE void blk_q8_K(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    const float d = dt_ggml_f32_of(dt_ggml_rd32(x));
    for (int j = 0; j < 256; j++)
        y[j] = op_mul(emu, d, (float)s8(x[4 + j]));
    if (lo)
        for (int j = 0; j < 256; j++)
            lo[j] = isfinite(y[j]) ? (float)((double)d * s8(x[4 + j]) - (double)y[j]) : 0.0f;
}

/* =================================================================================================
 * IQ types: 8 (IQ2_*, IQ1_*) or 4 (IQ3_*) elements from one entry of a lattice grid
 * (iq_tables.inc), a sign per element (IQ2, IQ3) or a shift delta (IQ1), a sub-scale per 16 or
 * 32 elements.
 * Exactness: the sub-scale times d has at most 16 significant bits (d * (0.5 + s) * 0.25 with
 * s < 16: 11 + 5 bits, the 0.25 / 0.5 a power of two), the grid values at most 6 (IQ2: 8 25 43;
 * IQ3_XXS: 4..62; IQ3_S: 1..15): products of at most 22 bits, exact; IQ1: d * (2s + 1) (11 + 4
 * bits) times grid + delta (-1.125 .. 1.125, at most 4 bits: 9/8), exact; IQ4: d * (ls - 32)
 * (11 + 5 bits) times a 7-bit level, exact.
 * ksigns_iq2xs[i]: the 7 sign bits i and an eighth, bit 7, that makes their parity even.
 * ============================================================================================== */

/* two uint32 grid entries of 4 bytes as one of 8 */
static inline uint64_t grid4x2(uint32_t e0, uint32_t e1)
{
    return (uint64_t)e0 | (uint64_t)e1 << 32;
}

/* IQ2_XXS, 66 bytes: [0..1] d fp16 | [2..65] 8 groups of 32 elements, 8 bytes each:
 *     bytes 0..3: grid index (iq2xxs_grid) of the elements 8l..8l+7 (l = 0..3)
 *     bytes 4..7: w, uint32 little-endian:
 *         w = | s (31..28) | signs l=3 (27..21) | l=2 (20..14) | l=1 (13..7) | l=0 (6..0) |
 *       sign bits of 8 elements = ksigns_iq2xs[7-bit field]
 * y = +-((d * (0.5 + s) * 0.25) * grid byte) */
DQ_INLINE void blk_iq2_xxs(const uint8_t *restrict x, float *restrict y, float *restrict lo,
                           bool emu)
{
    (void)lo;
    const float d = f16_at(x);
    for (int ib = 0; ib < 8; ib++) {
        const uint8_t *b = x + 2 + 8 * ib;
        const uint32_t w = dt_ggml_rd32(b + 4);
        const float db = op_mul(emu, op_mul(emu, d, 0.5f + (float)(w >> 28)), 0.25f);
        for (int l = 0; l < 4; l++) {
            const unsigned signs = ksigns_iq2xs[w >> (7 * l) & 127];
            run_signed8(y + 32 * ib + 8 * l, iq2xxs_grid[b[l]], signs, db, emu);
        }
    }
}

/* IQ2_XS, 74 bytes: [0..1] d fp16 | [2..65] 32 uint16 little-endian, one per 8 elements:
 * bits 0..8 grid index (iq2xs_grid), bits 9..15 sign field (ksigns_iq2xs) | [66..73] scales:
 * byte ib (32-element group ib) = s of its first 16 elements (low nibble) | of the last 16
 * (high nibble). y = +-((d * (0.5 + s) * 0.25) * grid byte) */
DQ_INLINE void blk_iq2_xs(const uint8_t *restrict x, float *restrict y, float *restrict lo,
                          bool emu)
{
    (void)lo;
    const float d = f16_at(x);
    for (int ib = 0; ib < 8; ib++) {
        const uint8_t s = x[66 + ib];
        const float db0 = op_mul(emu, op_mul(emu, d, 0.5f + (float)(s & 15)), 0.25f);
        const float db1 = op_mul(emu, op_mul(emu, d, 0.5f + (float)(s >> 4)), 0.25f);
        for (int l = 0; l < 4; l++) {
            const unsigned v = dt_ggml_rd16(x + 2 + 2 * (4 * ib + l));
            const float db = l < 2 ? db0 : db1;
            run_signed8(y + 32 * ib + 8 * l, iq2xs_grid[v & 511], ksigns_iq2xs[v >> 9], db, emu);
        }
    }
}

/* IQ2_S, 82 bytes: [0..1] d fp16 | [2..33] qs: bits 0..7 of the grid index (iq2s_grid) of each
 * 8 elements | [34..65] signs: one byte per 8 elements, bit j = element j | [66..73] qh: byte ib
 * bits 2l..2l+1 = bits 8..9 of the index of 8-element run l of group ib | [74..81] scales as
 * IQ2_XS. y = +-((d * (0.5 + s) * 0.25) * grid byte) */
DQ_INLINE void blk_iq2_s(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    (void)lo;
    const float d = f16_at(x);
    for (int ib = 0; ib < 8; ib++) {
        const uint8_t s = x[74 + ib], qh = x[66 + ib];
        const float db0 = op_mul(emu, op_mul(emu, d, 0.5f + (float)(s & 15)), 0.25f);
        const float db1 = op_mul(emu, op_mul(emu, d, 0.5f + (float)(s >> 4)), 0.25f);
        for (int l = 0; l < 4; l++) {
            const unsigned idx = x[2 + 4 * ib + l] | (unsigned)(qh >> (2 * l) & 3) << 8;
            const float db = l < 2 ? db0 : db1;
            run_signed8(y + 32 * ib + 8 * l, iq2s_grid[idx], x[34 + 4 * ib + l], db, emu);
        }
    }
}

/* IQ3_XXS, 98 bytes: [0..1] d fp16 | [2..65] qs: grid index (iq3xxs_grid, 4 values) of each 4
 * elements | [66..97] 8 uint32 little-endian w, one per 32-element group, packed as IQ2_XXS's w
 * (four 7-bit sign fields, s in bits 28..31). y = +-((d * (0.5 + s) * 0.5) * grid byte) */
DQ_INLINE void blk_iq3_xxs(const uint8_t *restrict x, float *restrict y, float *restrict lo,
                           bool emu)
{
    (void)lo;
    const float d = f16_at(x);
    for (int ib = 0; ib < 8; ib++) {
        const uint8_t *qs = x + 2 + 8 * ib;
        const uint32_t w = dt_ggml_rd32(x + 66 + 4 * ib);
        const float db = op_mul(emu, op_mul(emu, d, 0.5f + (float)(w >> 28)), 0.5f);
        for (int l = 0; l < 4; l++) {
            const uint64_t g = grid4x2(iq3xxs_grid[qs[2 * l]], iq3xxs_grid[qs[2 * l + 1]]);
            run_signed8(y + 32 * ib + 8 * l, g, ksigns_iq2xs[w >> (7 * l) & 127], db, emu);
        }
    }
}

/* IQ3_S, 110 bytes: [0..1] d fp16 | [2..65] qs: bits 0..7 of the grid index (iq3s_grid, 4
 * values) of each 4 elements | [66..73] qh: byte ib bit k = bit 8 of the index of the k-th 4
 * elements of group ib | [74..105] signs: one byte per 8 elements, bit j = element j |
 * [106..109] scales: nibble ib % 2 of byte ib / 2 = s of group ib.
 * y = +-((d * (1 + 2s)) * grid byte) */
DQ_INLINE void blk_iq3_s(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    (void)lo;
    const float d = f16_at(x);
    for (int ib = 0; ib < 8; ib++) {
        const uint8_t *qs = x + 2 + 8 * ib;
        const unsigned qh = x[66 + ib], s = (unsigned)x[106 + ib / 2] >> (4 * (ib % 2)) & 15u;
        const float db = op_mul(emu, d, (float)(1 + 2 * (int)s));
        for (int l = 0; l < 4; l++) {
            const unsigned i0 = qs[2 * l] | (qh >> (2 * l) & 1u) << 8;
            const unsigned i1 = qs[2 * l + 1] | (qh >> (2 * l + 1) & 1u) << 8;
            const uint64_t g = grid4x2(iq3s_grid[i0], iq3s_grid[i1]);
            run_signed8(y + 32 * ib + 8 * l, g, x[74 + 4 * ib + l], db, emu);
        }
    }
}

/* y[j] = dl * (grid + delta) for the 8 int8 of an iq1s_grid entry (grid + delta is exact:
 * +-1 or 0 plus +-0.125) */
DQ_INLINE void run_iq1(float *restrict y, uint64_t entry, float delta, float dl, bool emu)
{
    for (int j = 0; j < 8; j++) {
        const float v = (float)s8((uint8_t)grid_byte(entry, j)) + delta;
        y[j] = op_mul(emu, dl, v);
    }
}

/* IQ1_S, 50 bytes: [0..1] d fp16 | [2..33] qs: bits 0..7 of the grid index (iq1s_grid) of each
 * 8 elements | [34..49] 8 uint16 little-endian h, one per 32-element group:
 *     h = | delta sign (15) | s (14..12) | idx3 (11..9) | idx2 (8..6) | idx1 (5..3) | idx0 (2..0) |
 *   idx_l = bits 8..10 of the grid index of the 8 elements 8l..8l+7; delta sign set: -0.125
 * y = (d * (2s + 1)) * (grid + delta) */
DQ_INLINE void blk_iq1_s(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    (void)lo;
    const float d = f16_at(x);
    for (int ib = 0; ib < 8; ib++) {
        const unsigned h = dt_ggml_rd16(x + 34 + 2 * ib);
        const float dl = op_mul(emu, d, (float)(2 * (int)(h >> 12 & 7) + 1));
        const float delta = (h & 0x8000u) ? -IQ1S_DELTA : IQ1S_DELTA;
        for (int l = 0; l < 4; l++) {
            const unsigned idx = x[2 + 4 * ib + l] | (h >> (3 * l) & 7u) << 8;
            run_iq1(y + 32 * ib + 8 * l, iq1s_grid[idx], delta, dl, emu);
        }
    }
}

/* IQ1_M, 56 bytes, no plain scale field: [0..31] qs: bits 0..7 of the grid index (iq1s_grid)
 * of each 8 elements | [32..47] qh: one byte per 16 elements (two runs of 8): low nibble for
 * the first run, high for the second, each = index bits 8..10 (bits 0..2) | delta sign (bit 3)
 * | [48..55] four uint16 little-endian w0..w3, with the fp16 d split over their top nibbles:
 *
 *     w_k = | d bits 4k..4k+3 (15..12) | s(2k+1,b) (11..9) | s(2k+1,a) (8..6) |
 *           | s(2k,b) (5..3) | s(2k,a) (2..0) |
 *     d   = fp16 (w3 >> 12) << 12 | (w2 >> 12) << 8 | (w1 >> 12) << 4 | w0 >> 12
 *   s(g,a) / s(g,b): 3-bit scale of the first / last 16 elements of 32-element group g
 *
 * y = (d * (2s + 1)) * (grid + delta), delta = -0.125 when its bit is set, else 0.125 (ggml
 * uses IQ1S_DELTA here too; IQ1M_DELTA is the same). */
static inline uint16_t iq1m_d_bits(const uint8_t *x)
{
    return (uint16_t)(dt_ggml_rd16(x + 48) >> 12 | (dt_ggml_rd16(x + 50) >> 12) << 4 |
                      (dt_ggml_rd16(x + 52) >> 12) << 8 | (dt_ggml_rd16(x + 54) >> 12) << 12);
}

DQ_INLINE void blk_iq1_m(const uint8_t *restrict x, float *restrict y, float *restrict lo, bool emu)
{
    (void)lo;
    const float d = dt_ggml_fp16_to_f32(iq1m_d_bits(x));
    for (int ib = 0; ib < 8; ib++) {
        const unsigned w = dt_ggml_rd16(x + 48 + 2 * (ib / 2)) >> (6 * (ib % 2));
        const float dl[2] = {op_mul(emu, d, (float)(2 * (int)(w & 7) + 1)),
                             op_mul(emu, d, (float)(2 * (int)(w >> 3 & 7) + 1))};
        for (int l = 0; l < 4; l++) {
            const unsigned nib = (unsigned)x[32 + 2 * ib + l / 2] >> (4 * (l % 2)) & 15u;
            const unsigned idx = x[4 * ib + l] | (nib & 7u) << 8;
            const float delta = (nib & 8u) ? -IQ1S_DELTA : IQ1S_DELTA;
            run_iq1(y + 32 * ib + 8 * l, iq1s_grid[idx], delta, dl[l / 2], emu);
        }
    }
}

/* IQ4_NL, 18 bytes: [0..1] d fp16 | [2..17] 32 level codes, split half.
 * y = d * kvalues_iq4nl[code] */
DQ_INLINE void blk_iq4_nl(const uint8_t *restrict x, float *restrict y, float *restrict lo,
                          bool emu)
{
    (void)lo;
    const float d = f16_at(x);
    for (int j = 0; j < 16; j++) {
        y[j] = op_mul(emu, d, kvalues_iq4nl_f32[x[2 + j] & 15]);
        y[j + 16] = op_mul(emu, d, kvalues_iq4nl_f32[x[2 + j] >> 4]);
    }
}

/* IQ4_XS, 136 bytes: [0..1] d fp16 | [2..3] scales_h, uint16 little-endian: bits 2ib..2ib+1 =
 * bits 4-5 of ls of group ib | [4..7] scales_l: nibble ib % 2 of byte ib / 2 = bits 0-3 of ls |
 * [8..135] codes: group ib (32 elements) in bytes 8 + 16ib .., split half.
 * y = (d * (ls - 32)) * kvalues_iq4nl[code] */
DQ_INLINE void blk_iq4_xs(const uint8_t *restrict x, float *restrict y, float *restrict lo,
                          bool emu)
{
    (void)lo;
    const float d = f16_at(x);
    const unsigned sh = dt_ggml_rd16(x + 2);
    for (int ib = 0; ib < 8; ib++) {
        const unsigned ls_lo = (unsigned)x[4 + ib / 2] >> (4 * (ib % 2)) & 15u;
        const unsigned ls = ls_lo | (sh >> (2 * ib) & 3u) << 4;
        const float dl = op_mul(emu, d, (float)((int)ls - 32));
        const uint8_t *qs = x + 8 + 16 * ib;
        for (int j = 0; j < 16; j++) {
            y[32 * ib + j] = op_mul(emu, dl, kvalues_iq4nl_f32[qs[j] & 15]);
            y[32 * ib + j + 16] = op_mul(emu, dl, kvalues_iq4nl_f32[qs[j] >> 4]);
        }
    }
}

/* =================================================================================================
 * The row functions: per block, the plain path when its scales are finite, else emu.
 * ============================================================================================== */
#define DQ_ROW(t, bytes, block, finite)                                                        \
    void dt_ggml_dequantize_##t(const uint8_t *x, float *y, float *lo, size_t nb)              \
    {                                                                                          \
        for (size_t i = 0; i < nb; i++, x += (bytes), y += (block), lo = LO_AT(lo, (block))) { \
            if (finite)                                                                        \
                blk_##t(x, y, lo, false);                                                      \
            else                                                                               \
                blk_##t(x, y, lo, true);                                                       \
        }                                                                                      \
    }

#define F16_OK(off) f16_finite(dt_ggml_rd16(x + (off)))

DQ_ROW(q4_0, 18, 32, F16_OK(0))
DQ_ROW(q4_1, 20, 32, F16_OK(0) && F16_OK(2))
DQ_ROW(q5_0, 22, 32, F16_OK(0))
DQ_ROW(q5_1, 24, 32, F16_OK(0) && F16_OK(2))
DQ_ROW(q8_0, 34, 32, F16_OK(0))
DQ_ROW(q8_1, 36, 32, F16_OK(0))
DQ_ROW(mxfp4, 17, 32, true)
DQ_ROW(nvfp4, 36, 64, true)
DQ_ROW(tq1_0, 54, 256, F16_OK(52))
DQ_ROW(tq2_0, 66, 256, F16_OK(64))
DQ_ROW(q1_0, 18, 128, F16_OK(0))
DQ_ROW(q2_0, 18, 64, F16_OK(0))
DQ_ROW(q2_K, 84, 256, F16_OK(80) && F16_OK(82))
DQ_ROW(q3_K, 110, 256, F16_OK(108))
DQ_ROW(q4_K, 144, 256, F16_OK(0) && F16_OK(2))
DQ_ROW(q5_K, 176, 256, F16_OK(0) && F16_OK(2))
DQ_ROW(q6_K, 210, 256, F16_OK(208))
DQ_ROW(q8_K, 292, 256, (dt_ggml_rd32(x) & 0x7F800000u) != 0x7F800000u)
DQ_ROW(iq2_xxs, 66, 256, F16_OK(0))
DQ_ROW(iq2_xs, 74, 256, F16_OK(0))
DQ_ROW(iq2_s, 82, 256, F16_OK(0))
DQ_ROW(iq3_xxs, 98, 256, F16_OK(0))
DQ_ROW(iq3_s, 110, 256, F16_OK(0))
DQ_ROW(iq1_s, 50, 256, F16_OK(0))
DQ_ROW(iq1_m, 56, 256, f16_finite(iq1m_d_bits(x)))
DQ_ROW(iq4_nl, 18, 32, F16_OK(0))
DQ_ROW(iq4_xs, 136, 256, F16_OK(0))
