/* ggml's block types (llama.cpp's GGUF tensors) inside the library: the type table, and per type
 * the block quantizer and dequantizer the public dtcast_ggml_* calls (api.c) run.
 *
 * Every function here works on whole blocks of one row, in binary32, one operation at a time in
 * the order ggml's reference C evaluates them without fused multiply-adds (what x86-64 builds of
 * ggml-base and gguf-py compute): the files are built with -ffp-contract=off and the code must
 * not reassociate a sum. docs/gguf.md ("Block types") states each formula.
 *
 * Quantizers see finite float32 only: api.c replaces NaN and infinities by 0 (and counts them)
 * before calling one, in the default floating-point environment (nearest even, no FTZ/DAZ). */
#ifndef DTCAST_GGML_H
#define DTCAST_GGML_H

#include "dtcast.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DT_GGML_TYPE_COUNT 43 /* codes [0, 43); some removed (no traits) */
#define DT_QK_K 256           /* K-quant super-block */

/* Quantize nb consecutive blocks: x holds nb * block float32 values, y receives nb * bytes. */
typedef void (*dt_ggml_quantize_fn)(const float *x, uint8_t *y, size_t nb);
/* Dequantize nb consecutive blocks to float32 y (ggml's to_float, bit for bit). lo is NULL, or
 * (types with `inexact`) receives per element the rounding error of y: y[i] + lo[i] is the exact
 * value of the block formula (lo[i] = the exact value - y[i], a float32 that holds it exactly),
 * so that a bfloat16 or float16 result can be rounded once from the exact value. */
typedef void (*dt_ggml_dequantize_fn)(const uint8_t *x, float *y, float *lo, size_t nb);

typedef struct dt_ggml_traits {
    const char *name;    /* ggml's: "F32", "Q4_K", ...; NULL for a removed code */
    uint32_t block;      /* elements per block (1 for the element-wise types) */
    uint32_t bytes;      /* bytes per block */
    dtcast_type plain;   /* the dtcast type of an element-wise type, else DTCAST_UNDEFINED */
    dt_ggml_quantize_fn quantize;     /* NULL: dtcast does not quantize to it */
    dt_ggml_dequantize_fn dequantize; /* NULL: element-wise, or a type with no to_float */
    bool inexact; /* float32 results may be rounded (a sum of two products): fills lo */
} dt_ggml_traits;

/* The traits of code, or NULL when code is not one ggml defines today. */
const dt_ggml_traits *dt_ggml_traits_of(uint32_t code);

/* ---- binary16 / bfloat16 as ggml converts them ------------------------------------------------ */
/* float32 -> IEEE binary16, nearest even, overflow to infinity, subnormals kept, NaN ->
 * sign | 0x7E00 (ggml's GGML_FP32_TO_FP16) */
uint16_t dt_ggml_fp16(float x);
/* binary16 -> float32, exact */
float dt_ggml_fp16_to_f32(uint16_t h);

/* ---- little-endian fields of a block ------------------------------------------------------------ */
static inline uint16_t dt_ggml_rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t dt_ggml_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline void dt_ggml_wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void dt_ggml_wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline float dt_ggml_f32_of(uint32_t u)
{
    union {
        uint32_t u;
        float f;
    } v = {.u = u};
    return v.f;
}
static inline uint32_t dt_ggml_bits_of(float f)
{
    union {
        float f;
        uint32_t u;
    } v = {.f = f};
    return v.u;
}
/* ggml's nearest_int: 1.5 * 2^23 added in binary32, the low 23 bits of the sum minus 2^22: the
 * nearest integer, ties to even, for |v| < 2^22 (beyond, the same bits as ggml's, not an integer
 * near v) */
static inline int dt_ggml_nearest_int(float v)
{
    float t = v + 12582912.f;
    return (int)(dt_ggml_bits_of(t) & 0x007FFFFFu) - 0x00400000;
}

/* ---- the block functions, one pair per type (simple.c, kquants.c, dequant.c) ------------------ */
#define DT_GGML_Q(t) void dt_ggml_quantize_##t(const float *x, uint8_t *y, size_t nb);
#define DT_GGML_D(t) void dt_ggml_dequantize_##t(const uint8_t *x, float *y, float *lo, size_t nb);
/* quantized by dtcast (simple.c: the 32-element types, MXFP4, NVFP4, TQ*, Q1_0, Q2_0;
 * kquants.c: the K-quants) */
DT_GGML_Q(q4_0) DT_GGML_Q(q4_1) DT_GGML_Q(q5_0) DT_GGML_Q(q5_1) DT_GGML_Q(q8_0) DT_GGML_Q(q8_1)
DT_GGML_Q(mxfp4) DT_GGML_Q(nvfp4) DT_GGML_Q(tq1_0) DT_GGML_Q(tq2_0) DT_GGML_Q(q1_0)
DT_GGML_Q(q2_0) DT_GGML_Q(q2_K) DT_GGML_Q(q3_K) DT_GGML_Q(q4_K) DT_GGML_Q(q5_K) DT_GGML_Q(q6_K)
DT_GGML_Q(q8_K)
/* dequantized (dequant.c): every block type ggml can convert to float */
DT_GGML_D(q4_0) DT_GGML_D(q4_1) DT_GGML_D(q5_0) DT_GGML_D(q5_1) DT_GGML_D(q8_0) DT_GGML_D(q8_1)
DT_GGML_D(mxfp4) DT_GGML_D(nvfp4) DT_GGML_D(tq1_0) DT_GGML_D(tq2_0) DT_GGML_D(q1_0)
DT_GGML_D(q2_0) DT_GGML_D(q2_K) DT_GGML_D(q3_K) DT_GGML_D(q4_K) DT_GGML_D(q5_K) DT_GGML_D(q6_K)
DT_GGML_D(q8_K) DT_GGML_D(iq2_xxs) DT_GGML_D(iq2_xs) DT_GGML_D(iq2_s) DT_GGML_D(iq3_xxs)
DT_GGML_D(iq3_s) DT_GGML_D(iq1_s) DT_GGML_D(iq1_m) DT_GGML_D(iq4_nl) DT_GGML_D(iq4_xs)
#undef DT_GGML_Q
#undef DT_GGML_D

/* ---- the fast paths (fast.c): one list, expanded by the selection, the tests and the bench -- *
 *
 * Each entry is a block function for one ISA (a dt_isa: DT_ISA_AVX2, DT_ISA_AVX512) that gives
 * the reference's bytes / bits exactly (tests/test_ggml_fast.c compares every entry the CPU can
 * run with the reference above). The list is the concatenation of fast_simple.inc,
 * fast_kquants.inc and fast_dequant.inc, each a run of
 *     DT_GGML_FAST(code, isa, quantize_fn, dequantize_fn)
 * (one of the two functions NULL). The selection takes, per type, the entry of the highest ISA
 * the CPU runs (dt_isa_active: DTCAST_ISA may lower it), else the reference; dt_quant_simple()
 * (tests) forces the reference. */
typedef struct dt_ggml_fast {
    uint32_t code;
    int isa;
    dt_ggml_quantize_fn quantize;
    dt_ggml_dequantize_fn dequantize;
    const char *name; /* "q8_0 avx2 quantize" style, for tests and the bench */
} dt_ggml_fast;

extern const dt_ggml_fast dt_ggml_fast_list[];
extern const size_t dt_ggml_fast_count;
/* float32 results (and residuals, lo NULL when none) to bfloat16 in one pass: round to odd,
 * then to nearest even (store_avx512.c; the bits of api.c's portable steps) */
void dt_ggml_store_bf16_avx512(uint16_t *o, const float *v, const float *lo, size_t n);

/* The block functions a call uses for code (never NULL for a type that has one). */
dt_ggml_quantize_fn dt_ggml_quantizer(uint32_t code);
dt_ggml_dequantize_fn dt_ggml_dequantizer(uint32_t code);

#endif /* DTCAST_GGML_H */
