/* The fused quantize kernels (fused_quant_avx2.c): float32 or bfloat16 x read directly, the
 * block maxima, the element step (x * k or x / k in float32) rounded to the code type (nearest
 * even, the scheme's saturation and NaN rules) and packed in registers, the codes stored. One
 * pass over L1 per step instead of the chunk buffers of the general path; bit for bit the same
 * codes and scales. Only on AVX2 with round rne, float32 / bfloat16 input and whole blocks of
 * 16 or a multiple of 32 elements; dt_fq_init says when. */
#ifndef DTCAST_FUSED_QUANT_H
#define DTCAST_FUSED_QUANT_H

#include "quant.h"

/* codes of n elements (n <= DT_QCHUNK, a whole number of bytes) of x (bytes of element 0)
 * into dst, block b of B elements scaled by k[b]; the lines ahead bytes past those read are
 * prefetched */
typedef void (*dt_fq_fn)(uint8_t *dst, const uint8_t *x, size_t n, size_t B, const float *k,
                         size_t ahead);

typedef struct dt_fq {
    const uint8_t *x; /* the input tensor */
    uint8_t *codes;   /* the output codes: rows of whole bytes, so the flat layout */
    size_t xsize;     /* bytes per element of x: 4 (float32) or 2 (bfloat16) */
    int bits;         /* bits per code in the layout: 4, 6 or 8 */
    bool bf16;
    bool stream;      /* large output: codes through an L1 buffer and streaming stores */
    uint8_t fill;     /* MX: the code byte of a NaN/Inf block's elements */
    int op;
    float lim;          /* just under 2^(emax + 1) of the code type */
    size_t ahead;       /* the codes kernels prefetch x this many bytes ahead: what the next
                           block-max passes read (dt_fq_init: two chunks ahead) */
    dt_fq_fn fn;        /* the kernel */
    dt_fq_fn fn_clean;  /* the same for chunks without NaN or values past the clamp */
} dt_fq;

/* Whether q's quantize has a fused kernel with element step op (DT_Q_MUL, DT_Q_DIV,
 * DT_Q_MUL_I8, DT_Q_DIV_MO), block B (the caller's blocks along the contiguous last axis);
 * if so fills *c for x and codes. */
bool dt_fq_init(dt_fq *c, const dt_quant *q, int op, size_t B, const void *x, void *codes);

/* out[i] = |x| max of block i of B elements (the last one may be short) over flat elements
 * [f, f + n), NaN-propagating (the canonical NaN); returns the max of all of them as bits (a
 * NaN: some NaN; the canonical one when out is given). out NULL: only that max. */
uint32_t dt_fq_amax(const dt_fq *c, size_t f, size_t n, size_t B, float *out);

/* Block FP8's tile maxima: out[t] = the |x| max of tile t (columns [t C, t C + C) of the n
 * from flat element f, the last tile possibly short) over `rows` rows of K elements, as
 * dt_fq_amax's (NaN canonical). One accumulator vector per tile, reduced once per tile. */
void dt_fq_amax_tiles(const dt_fq *c, size_t f, size_t rows, size_t K, size_t n, size_t C,
                      float *out);

/* The codes of flat elements [f, f + n) (n <= DT_QCHUNK; f at the start of a block of B,
 * block i scaled by k[i]). amax (may be NULL): the blocks' |x| maxima, which let a chunk whose
 * scaled values all stay finite and in range skip the NaN and overflow steps. */
void dt_fq_codes(const dt_fq *c, size_t f, size_t n, size_t B, const float *k,
                 const float *amax);

/* bfloat16 -> float4 by thresholds (NVFP4, every variant). With k a function of the block's
 * scale code S alone, the code of an element is a step function of its 15 |x| bits: it goes up
 * by one at each of seven thresholds, and (modelopt) loses its sign below the least |x| whose
 * quotient is not 0. dt_fq_thr_init finds them for the scale codes 0 to 127 (the factors k[S]),
 * about 10 us; then 16 elements take seven 16-bit compares instead of the division and the
 * rounding of eight lanes twice. For large tensors (the caller decides). */
typedef struct dt_fq_thr {
    uint32_t t[128][8]; /* threshold - 1 as signed 16 bits, twice: both halves of a dword */
} dt_fq_thr;

/* Whether c's codes can be made by thresholds (AVX2, bfloat16 x, NVFP4's kernels); if so fills
 * *t from k[0..127], the element factor of each scale code. */
bool dt_fq_thr_init(dt_fq_thr *t, const dt_fq *c, const float *k);

/* dt_fq_codes (B 16) for a chunk whose blocks have scale codes S and factors k = k[S]: clean
 * chunks by thresholds, the others as dt_fq_codes. */
void dt_fq_codes_thr(const dt_fq *c, const dt_fq_thr *t, size_t f, size_t n, const float *k,
                     const float *amax, const uint8_t *S);

/* NVFP4's scale steps of nb blocks in one pass (AVX2, the fast path of dt_fq_init's
 * quantizations): S[i] = the float8e4m3fn code of op_in(amax[i], c_in), nearest even, beyond
 * 448 NaN (torch's cast), with zero_fix (ct) a zero code of either sign becoming 0x20;
 * k[i] = op_k(value of S[i], c_k). op_in and op_k are quant.h's DT_QM_ steps. */
typedef struct dt_fq_nv {
    int op_in, op_k;
    float c_in, c_k;
    bool zero_fix;
    const float *table; /* the values of the 256 float8e4m3fn codes */
} dt_fq_nv;
void dt_fq_nv_scales(const dt_fq_nv *p, const float *amax, size_t nb, uint8_t *S, float *k);

/* MX, per block of 32 (nblk <= DT_QCHUNK / 32, f a multiple of 32): the scale byte of each
 * block (modes floor, ceil, even, rceil: docs/quantization.md) into scales, the codes of its
 * elements x * 2^(127 - b) (the fill code where b is 0xFF). emax, mbits and inv_max as mx.c's
 * job has them. */
typedef struct dt_fq_mx {
    dtcast_scale_mode mode;
    int emax, mbits;
    float inv_max;
} dt_fq_mx;
void dt_fq_mx_blocks(const dt_fq *c, const dt_fq_mx *m, size_t f, size_t nblk, uint8_t *scales);

#endif /* DTCAST_FUSED_QUANT_H */
