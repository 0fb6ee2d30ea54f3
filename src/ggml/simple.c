/* ggml's reference quantizers of the types with one scale per block of 32..256 elements and a
 * plain rounding: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, MXFP4, NVFP4, TQ1_0, TQ2_0, Q1_0, Q2_0
 * (ggml-quants.c's quantize_row_*_ref). Each is binary32 arithmetic, one operation at a time,
 * in ggml's order; docs/gguf.md ("Block types") gives the formulas and byte layouts.
 *
 * Where ggml's C converts an out-of-range float to an integer (undefined in C), dtcast does what
 * x86-64 builds of ggml do, so that the bytes are the same: the conversion truncates to int32,
 * NaN and out-of-range values give INT32_MIN (cvttss2si), and a narrower integer keeps the low
 * bits. That happens only in blocks whose reciprocal scale overflows (|x| < 2^-126 or so):
 * x * inf and 0 * inf become codes the dequantizer turns into (signed) zeros. */
#include "ggml.h"
#include "simple_scalar.h" /* cvtt32, cvtt_i8, cvtt_u8; MXFP4's exponent and scale */

#include <math.h>

/* (int)(lroundf(v) + 1) as glibc on x86-64 computes it: lroundf of NaN or |v| >= 2^63 is
 * LONG_MIN, and the conversion to int keeps the low 32 bits (so such a v gives 1) */
static inline int lround_plus1(float v)
{
    if (!(fabsf(v) < 0x1p63f))
        return 1;
    const int64_t r = (int64_t)roundf(v) + 1;
    return (int)(int32_t)(uint32_t)((uint64_t)r & 0xFFFFFFFFu);
}
static inline float max_abs_first(const float *x, int n, float *signed_max)
{
    /* the first element of largest |x| (a strict comparison: later equal ones lose) */
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < n; j++)
        if (amax < fabsf(x[j])) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    if (signed_max)
        *signed_max = max;
    return amax;
}
static inline float max_abs(const float *x, int n)
{
    float amax = 0.0f;
    for (int j = 0; j < n; j++) {
        const float a = fabsf(x[j]);
        amax = amax > a ? amax : a; /* ggml's MAX(amax, fabsf(x)) */
    }
    return amax;
}

/* ---- Q4_0 and Q5_0: d = max / -2^(bits-1), codes floor(x / d + 2^(bits-1) + 0.5) ------------- *
 *
 *   Q4_0 (18 bytes)   d:f16 | qs[16]            qs[j] = q[j] | q[j+16] << 4   (split halves)
 *   Q5_0 (22 bytes)   d:f16 | qh:u32 | qs[16]   qh bit j = bit 4 of q[j]
 */
void dt_ggml_quantize_q4_0(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b++, x += 32, y += 18) {
        float max;
        max_abs_first(x, 32, &max);
        const float d = max / -8;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        dt_ggml_wr16(y, dt_ggml_fp16(d));
        for (int j = 0; j < 16; j++) {
            const int q0 = cvtt_i8(x[j] * id + 8.5f), q1 = cvtt_i8(x[j + 16] * id + 8.5f);
            const unsigned c0 = (unsigned)(q0 < 15 ? q0 : 15) & 0xFFu;
            const unsigned c1 = (unsigned)(q1 < 15 ? q1 : 15) & 0xFFu;
            y[2 + j] = (uint8_t)(c0 | c1 << 4);
        }
    }
}

void dt_ggml_quantize_q5_0(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b++, x += 32, y += 22) {
        float max;
        max_abs_first(x, 32, &max);
        const float d = max / -16;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        dt_ggml_wr16(y, dt_ggml_fp16(d));
        uint32_t qh = 0;
        for (int j = 0; j < 16; j++) {
            const int q0 = cvtt_i8(x[j] * id + 16.5f), q1 = cvtt_i8(x[j + 16] * id + 16.5f);
            const unsigned c0 = (unsigned)(q0 < 31 ? q0 : 31) & 0xFFu;
            const unsigned c1 = (unsigned)(q1 < 31 ? q1 : 31) & 0xFFu;
            y[6 + j] = (uint8_t)((c0 & 0xFu) | (c1 & 0xFu) << 4);
            qh |= ((c0 >> 4) & 1u) << j | ((c1 >> 4) & 1u) << (j + 16);
        }
        dt_ggml_wr32(y + 2, qh);
    }
}

/* ---- Q4_1 and Q5_1: d = (max - min) / (2^bits - 1), m = min, codes floor((x - min) / d + .5) - *
 *
 *   Q4_1 (20 bytes)   d:f16 | m:f16 | qs[16]
 *   Q5_1 (24 bytes)   d:f16 | m:f16 | qh:u32 | qs[16]
 */
static inline void min_max(const float *x, float *mn, float *mx)
{
    float lo = 0x1.fffffep127f, hi = -0x1.fffffep127f;
    for (int j = 0; j < 32; j++) {
        if (x[j] < lo)
            lo = x[j];
        if (x[j] > hi)
            hi = x[j];
    }
    *mn = lo;
    *mx = hi;
}

void dt_ggml_quantize_q4_1(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b++, x += 32, y += 20) {
        float min, max;
        min_max(x, &min, &max);
        const float d = (max - min) / 15;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        dt_ggml_wr16(y, dt_ggml_fp16(d));
        dt_ggml_wr16(y + 2, dt_ggml_fp16(min));
        for (int j = 0; j < 16; j++) {
            const int q0 = cvtt_i8((x[j] - min) * id + 0.5f);
            const int q1 = cvtt_i8((x[j + 16] - min) * id + 0.5f);
            const unsigned c0 = (unsigned)(q0 < 15 ? q0 : 15) & 0xFFu;
            const unsigned c1 = (unsigned)(q1 < 15 ? q1 : 15) & 0xFFu;
            y[4 + j] = (uint8_t)(c0 | c1 << 4);
        }
    }
}

void dt_ggml_quantize_q5_1(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b++, x += 32, y += 24) {
        float min, max;
        min_max(x, &min, &max);
        const float d = (max - min) / 31;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        dt_ggml_wr16(y, dt_ggml_fp16(d));
        dt_ggml_wr16(y + 2, dt_ggml_fp16(min));
        uint32_t qh = 0;
        for (int j = 0; j < 16; j++) {
            /* no clamp in ggml: the code cannot exceed 31 for finite x */
            const unsigned c0 = cvtt_u8((x[j] - min) * id + 0.5f);
            const unsigned c1 = cvtt_u8((x[j + 16] - min) * id + 0.5f);
            y[8 + j] = (uint8_t)((c0 & 0xFu) | (c1 & 0xFu) << 4);
            qh |= ((c0 >> 4) & 1u) << j | ((c1 >> 4) & 1u) << (j + 16);
        }
        dt_ggml_wr32(y + 4, qh);
    }
}

/* ---- Q8_0 and Q8_1: d = amax / 127, codes roundf(x / d) (ties away from zero) ----------------- *
 *
 *   Q8_0 (34 bytes)   d:f16 | qs:int8[32]
 *   Q8_1 (36 bytes)   d:f16 | s:f16 = fp16(d * sum of the codes) | qs:int8[32]
 */
void dt_ggml_quantize_q8_0(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b++, x += 32, y += 34) {
        const float d = max_abs(x, 32) / 127;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        dt_ggml_wr16(y, dt_ggml_fp16(d));
        for (int j = 0; j < 32; j++)
            y[2 + j] = (uint8_t)cvtt_u8(roundf(x[j] * id));
    }
}

void dt_ggml_quantize_q8_1(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b++, x += 32, y += 36) {
        const float d = max_abs(x, 32) / 127;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        dt_ggml_wr16(y, dt_ggml_fp16(d));
        int sum = 0;
        for (int j = 0; j < 32; j++) {
            const int q = cvtt_i8(roundf(x[j] * id));
            y[4 + j] = (uint8_t)(q & 0xFF);
            sum += q;
        }
        dt_ggml_wr16(y + 2, dt_ggml_fp16((float)sum * d));
    }
}

/* ---- MXFP4 and NVFP4: float4 e2m1 codes under a power-of-two / ue4m3 scale -------------------- *
 *
 * The code values doubled (so that a half-scale multiplies them): 0 1 2 3 4 6 8 12 and their
 * negatives at codes 8..15. A code is the first of the 16 with the smallest |value * d - x|:
 * ties go to the smaller magnitude, a negative x that rounds to zero gets +0.
 *
 *   MXFP4 (17 bytes)  e:E8M0 | qs[16] split halves          value = kv[c] * 2^(e - 128)
 *   NVFP4 (36 bytes)  s[4]:UE4M3 | qs[32]: sub-block k of 16 in bytes 8k..8k+7, split halves
 */
static const int8_t kvalues_fp4[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

static inline unsigned best_fp4(float x, float d)
{
    unsigned best = 0;
    float best_err = fabsf((float)kvalues_fp4[0] * d - x);
    for (unsigned i = 1; i < 16; i++) {
        const float err = fabsf((float)kvalues_fp4[i] * d - x);
        if (err < best_err) {
            best = i;
            best_err = err;
        }
    }
    return best;
}

void dt_ggml_quantize_mxfp4(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b++, x += 32, y += 17) {
        /* the shared exponent floor(log2 amax) - 2 (simple_scalar.h) */
        const unsigned e = mx_exponent_ref(max_abs_first(x, 32, NULL));
        const float d = e8m0_half(e);
        y[0] = (uint8_t)e;
        for (int j = 0; j < 16; j++)
            y[1 + j] = (uint8_t)(best_fp4(x[j], d) | best_fp4(x[j + 16], d) << 4);
    }
}

/* UE4M3 (e4m3 without sign, bias 7) as ggml rounds a scale to it: x <= 0 (or NaN) -> 0; x
 * clamped to the largest code 0x7E; the first dropped mantissa bit rounds up (half up, not
 * to even); the subnormal range rounds m = x * 2^9 half up. */
#define UE4M3_MAX_CODE 0x7Eu /* exponent 15 with mantissa 7 (0x7F) means zero in ggml */
static inline float ue4m3_value(unsigned c)
{
    const unsigned e = (c >> 3) & 0xFu, m = c & 7u;
    if (c == 0 || c == 0x7F)
        return 0.0f;
    return e == 0 ? ldexpf((float)m, -9) : ldexpf(1.0f + (float)m / 8.0f, (int)e - 7);
}

static inline unsigned ue4m3_round(float x)
{
    if (!(x > 0.0f))
        return 0;
    const float top = ue4m3_value(UE4M3_MAX_CODE);
    if (x > top)
        x = top;
    const uint32_t u = dt_ggml_bits_of(x);
    int e = (int)((u >> 23) & 0xFFu) - 127 + 7;
    if (e <= 0) { /* subnormal: m * 2^-9 */
        const int m = (int)(x * 512.0f + 0.5f);
        return m < 1 ? 0 : m > 7 ? 7u : (unsigned)m;
    }
    if (e >= 15)
        return UE4M3_MAX_CODE;
    unsigned m = ((u >> 20) & 7u) + ((u >> 19) & 1u);
    if (m > 7) {
        m = 0;
        if (++e >= 15)
            return UE4M3_MAX_CODE;
    }
    return (unsigned)e << 3 | m;
}

void dt_ggml_quantize_nvfp4(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b++, y += 36)
        for (int s = 0; s < 4; s++, x += 16) {
            const unsigned c = ue4m3_round(max_abs_first(x, 16, NULL) / 6.0f);
            const float d = ue4m3_value(c) * 0.5f; /* the code values are doubled */
            y[s] = (uint8_t)c;
            for (int j = 0; j < 8; j++)
                y[4 + 8 * s + j] = (uint8_t)(best_fp4(x[j], d) | best_fp4(x[j + 8], d) << 4);
        }
}

/* ---- TQ1_0 and TQ2_0: ternary codes round(x / amax) + 1 in {0, 1, 2}, d = amax ------------------ *
 *
 *   TQ1_0 (54 bytes)  qs[48] | qh[4] | d:f16        five trits a byte, scale last
 *   TQ2_0 (66 bytes)  qs[64] | d:f16                four 2-bit fields a byte
 *
 * TQ1_0 packs five trits t0..t4 (t0 most significant) as n = ((((t0*3+t1)*3+t2)*3+t3)*3+t4)
 * < 243 stored as ceil(n * 256 / 243), so that a byte times 3^k, mod 256, times 3, >> 8 reads
 * trit k back. Byte m < 32 holds elements m + 32k (k = 0..4); byte 32 + m (m < 16) holds
 * 160 + m + 16k; qh byte j holds 240 + j + 4k (k = 0..3) as the top four trits of n. */
static inline uint8_t tq1_pack(unsigned n)
{
    return (uint8_t)((n * 256 + 242) / 243);
}

void dt_ggml_quantize_tq1_0(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b++, x += 256, y += 54) {
        const float d = max_abs(x, 256);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        for (int m = 0; m < 32; m++) {
            unsigned n = 0;
            for (int k = 0; k < 5; k++)
                n = (n * 3 + (unsigned)lround_plus1(x[m + 32 * k] * id)) & 0xFFu;
            y[m] = tq1_pack(n);
        }
        for (int m = 0; m < 16; m++) {
            unsigned n = 0;
            for (int k = 0; k < 5; k++)
                n = (n * 3 + (unsigned)lround_plus1(x[160 + m + 16 * k] * id)) & 0xFFu;
            y[32 + m] = tq1_pack(n);
        }
        for (int j = 0; j < 4; j++) {
            unsigned n = 0;
            for (int k = 0; k < 4; k++)
                n = (n * 3 + (unsigned)lround_plus1(x[240 + j + 4 * k] * id)) & 0xFFu;
            y[48 + j] = tq1_pack((n * 3) & 0xFFu);
        }
        dt_ggml_wr16(y + 52, dt_ggml_fp16(d));
    }
}

/* TQ2_0: byte 32g + m holds elements 128g + m + 32l in bits 2l..2l+1 (g = 0, 1; l = 0..3) */
void dt_ggml_quantize_tq2_0(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b++, x += 256, y += 66) {
        const float d = max_abs(x, 256);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        for (int g = 0; g < 2; g++)
            for (int m = 0; m < 32; m++) {
                unsigned q = 0;
                for (int l = 0; l < 4; l++)
                    q += ((unsigned)lround_plus1(x[128 * g + m + 32 * l] * id) & 3u) << (2 * l);
                y[32 * g + m] = (uint8_t)q;
            }
        dt_ggml_wr16(y + 64, dt_ggml_fp16(d));
    }
}

/* ---- Q1_0 and Q2_0 ---------------------------------------------------------------------------- *
 *
 *   Q1_0 (18 bytes, 128 elements)  d:f16 = mean |x| | 128 sign bits, bit j%8 of byte j/8:
 *                                  1 = +d (x >= 0, -0 included), 0 = -d
 *   Q2_0 (18 bytes, 64 elements)   d:f16 = amax | 64 2-bit codes, bits 2(j%4) of byte j/4:
 *                                  clamp(round(x / d) + 1, 0, 3), value (q - 1) * d
 */
void dt_ggml_quantize_q1_0(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b++, x += 128, y += 18) {
        float sum = 0.0f;
        for (int j = 0; j < 128; j++)
            sum += fabsf(x[j]);
        dt_ggml_wr16(y, dt_ggml_fp16(sum / 128));
        for (int j = 0; j < 16; j++) {
            unsigned bits = 0;
            for (int k = 0; k < 8; k++)
                bits |= (x[8 * j + k] >= 0.0f ? 1u : 0u) << k;
            y[2 + j] = (uint8_t)bits;
        }
    }
}

void dt_ggml_quantize_q2_0(const float *x, uint8_t *y, size_t nb)
{
    for (size_t b = 0; b < nb; b++, x += 64, y += 18) {
        float amax = 0.0f;
        for (int j = 0; j < 64; j++)
            if (fabsf(x[j]) > amax)
                amax = fabsf(x[j]);
        const float id = amax > 0.0f ? 1.0f / amax : 0.0f;
        dt_ggml_wr16(y, dt_ggml_fp16(amax));
        for (int j = 0; j < 16; j++) {
            unsigned bits = 0;
            for (int k = 0; k < 4; k++) {
                /* (int)roundf(v) + 1: INT32_MIN + 1 for an infinite v, clamped to 0 */
                const int32_t r = cvtt32(roundf(x[4 * j + k] * id));
                const int q = r < 0 ? 0 : r > 2 ? 3 : (int)r + 1;
                bits |= (unsigned)q << (2 * k);
            }
            y[2 + j] = (uint8_t)bits;
        }
    }
}
