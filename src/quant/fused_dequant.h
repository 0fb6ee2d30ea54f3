/* Dequantization of whole blocks in one pass (fused_dequant_avx2.c): the codes are decoded in
 * registers, multiplied by their block's factor and rounded to the output, with no float32
 * buffer in between. The bytes are the simple path's and those of dt_emit_values followed by
 * dt_store_scaled (a NaN code times a NaN factor: the code's NaN on every path,
 * dt_mul_nan_first). */
#ifndef DTCAST_QUANT_FUSED_DEQUANT_H
#define DTCAST_QUANT_FUSED_DEQUANT_H

#include "quant.h"

typedef struct dt_fused dt_fused;
typedef void (*dt_fused_kernel)(uint8_t *y, const uint8_t *codes, size_t n, size_t B,
                                const uint8_t *sc, const dt_fused *fz);

/* One dequantization's fused kernel and its block factors, indexed by a scale code. */
struct dt_fused {
    dt_fused_kernel fn;
    void *y;
    const uint8_t *codes;
    size_t size;      /* bytes of an output element */
    bool nibbles;     /* float4 codes, two a byte */
    float pw;         /* 2^p: the kernel decodes value × 2^-p (see the .c) */
    float k[256];     /* the factor of each scale code */
    float kq[256];    /* k × 2^p, where exact */
    uint8_t slow[256]; /* the factors the kernel takes the slow steps for (see the .c) */
};

/* Picks the kernel for q's dequantization into s from the whole code tensor codes: false
 * where there is none (not AVX2, the simple path, an output other than float32 / bfloat16,
 * another code type, float6_packed, float4 rows of odd length, q->B not a multiple of 16,
 * a streamed y not 16-byte aligned). */
bool dt_fused_init(dt_fused *fz, const dt_storer *s, const dt_quant *q, const uint8_t *codes);
/* The factor k of the blocks whose scale code is c (c < 256). */
void dt_fused_factor(dt_fused *fz, unsigned c, float k);
/* y's flat elements [f, f + n) = fl32(value of their code × the factor of sc[i / B]), rounded
 * once to y's type (bfloat16: nearest even, NaN 0x7FC0 | sign): blocks of B start at f, the
 * last may be short. false (nothing written) when n or B is not a multiple of 16 (or f is odd
 * for float4). */
bool dt_fused_run(const dt_fused *fz, size_t f, size_t n, size_t B, const uint8_t *sc);

#endif /* DTCAST_QUANT_FUSED_DEQUANT_H */
