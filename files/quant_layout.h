/* The checkpoint layouts of scaled quantization (docs/cli.md, "Quantized checkpoints"): which
 * tensors of a checkpoint belong together (codes, block scales, a global scale) by their names,
 * dtypes and shapes, and the names a quantized tensor's parts get. Used by `dtcast quantize` and
 * `dtcast dequantize`; not part of the installed API.
 *
 *   fp8-block     X.weight F8_E4M3 [..., N, K] + X.weight_scale_inv F32 [..., ceil(N/R), ceil(K/C)]
 *   mxfp4-gptoss  X_blocks U8 [..., G, 16] + X_scales U8 [..., G]   (X of shape [..., 32 G])
 *   mx            X.weight F8_E4M3 / F8_E5M2 / F6_E2M3 / F6_E3M2 / F4 / I8 [..., K]
 *                 + X.weight_scale F8_E8M0 [..., ceil(K/32)]; a float-coded tensor X of
 *                 any other name with an F8_E8M0 X_scale too
 *   mx-ct         compressed-tensors' MX: X.weight F8_E4M3 / F8_E5M2 (mxfp8-quantized) or
 *                 X.weight_packed U8 [..., K/2] (float4e2m1, mxfp4-pack-quantized)
 *                 + X.weight_scale U8 [..., K/32] holding E8M0 bytes
 *   nvfp4-modelopt X.weight U8 [..., K/2] + X.weight_scale F8_E4M3 [..., K/16]
 *                 + X.weight_scale_2 F32 [] or [1]   (g = amax/2688)
 *   nvfp4-ct      X.weight_packed U8 [..., K/2] + X.weight_scale F8_E4M3 [..., K/16]
 *                 + X.weight_global_scale F32 [1]     (gs = 2688/amax)
 *   absmax        X.weight F8_E4M3 / F8_E5M2 / I8 [..., N, K] + X.weight_scale F32/BF16/F16 of
 *                 shape [] or [1] (per tensor), [..., N, 1] (per channel), [..., N, G] or
 *                 [..., N, G, 1] (groups of K/G: diffusers' block-wise FP8)
 *   int4-group    X.weight_packed U8 [..., ceil(K/2)] (int4, low nibble first)
 *                 + X.weight_scale F32/BF16/F16 [..., G] + optional X.weight_shape I64 [ndim]
 *   pack-quantized X.weight_packed I32 [..., N, ceil(K bits / 32)] (compressed-tensors: element i
 *                 in bits [i bits, (i + 1) bits) of the row's little-endian words, stored plus
 *                 2^(bits-1)) + X.weight_scale F32/BF16/F16 [..., N, G] (or [1], [..., N, 1])
 *                 + X.weight_shape [ndim] (K) + optional X.weight_zero_point I32
 *                 [..., ceil(N bits / 32), G] (packed along N, the same offset); bits 4 or 8.
 *                 Read as int8 codes (code - zero point) under the absmax layout
 *   gptq          X.qweight I32 [K bits/32, N] (input rows packed into words: row k is code
 *                 k % (32/bits) of word row k / (32/bits)), X.qzeros I32 [G, N bits/32] (packed
 *                 along N), X.scales F16/BF16/F32 [G, N], optional X.g_idx I32 [K] (row k's
 *                 group; else k / (K/G)); value (q - z) * s, z stored minus 1 unless the config
 *                 says checkpoint_format gptq_v2; the output X.weight [N, K] (nn.Linear's)
 *   awq           X.qweight I32 [K, N/8], X.qzeros I32 [G, N/8] (columns packed eight per word
 *                 in the order 0 2 4 6 1 3 5 7), X.scales F16 [G, N]; value (q - z) * s; the
 *                 output X.weight [N, K]
 * ComfyUI's scaled FP8 names the scale X.scale_weight (m.weight + m.scale_weight: absmax), with
 * m.scale_input and a m.comfy_quant U8 tensor (JSON) beside it, both consumed.
 * DeepSeek-V4 names the scale X.scale (X.weight's name with "weight" replaced by "scale"):
 *   deepseek-v4-fp8  X.weight F8_E4M3 [..., N, K] + X.scale F8_E8M0 (or F32)
 *                 [..., ceil(N/128), ceil(K/128)]: the fp8-block layout, one power of two per tile
 *   deepseek-v4-fp4  X.weight I8 [..., K/2] (float4e2m1, two per byte, low nibble first)
 *                 + X.scale F8_E8M0 [..., K/32]: the mx layout of float4e2m1 codes
 * X.input_scale and X.input_global_scale (activation scales) belong to the group too. */
#ifndef DTCAST_FILES_QUANT_LAYOUT_H
#define DTCAST_FILES_QUANT_LAYOUT_H

#include "files/tensor.h"

#include <stddef.h>
#include <stdint.h>

typedef enum dt_qlayout {
    DT_QL_FP8_BLOCK = 1,
    DT_QL_MXFP4_GPTOSS,
    DT_QL_MX,
    DT_QL_NVFP4_MODELOPT,
    DT_QL_NVFP4_CT,
    DT_QL_ABSMAX,
    DT_QL_INT4_GROUP,
    DT_QL_GPTQ, /* read only (dequantize): X.qweight, X.qzeros, X.scales, X.g_idx */
    DT_QL_AWQ   /* read only: X.qweight, X.qzeros, X.scales (AutoAWQ GEMM) */
} dt_qlayout;

/* "fp8-block", "mxfp4-gptoss", ... as above. */
const char *dt_qlayout_name(dt_qlayout layout);

/* One tensor of a checkpoint as the recognition sees it. */
typedef struct dt_qt {
    const char *name;
    dtcast_type type;
    int ndim;
    int64_t dims[DT_MAX_DIMS];
} dt_qt;

#define DT_QT_NONE ((size_t)-1)

typedef enum dt_qrole {
    DT_QR_PLAIN = 0, /* not quantized: copied */
    DT_QR_CODES,     /* the codes of group `group` */
    DT_QR_PART       /* a scale (or shape) tensor of group `group`: consumed */
} dt_qrole;

/* A quantized tensor: its parts (indices into the tensor list) and what it dequantizes to. */
typedef struct dt_qgroup {
    dt_qlayout layout;
    char *name;                   /* the dequantized tensor's name (malloc'd) */
    size_t codes, scales, global; /* global: DT_QT_NONE when the layout has none */
    size_t extra[4];              /* input_scale (or scale_input), input_global_scale,
                                   * weight_shape, comfy_quant; or NONE */
    dtcast_type element;          /* the codes' element type (float4e2m1 for packed U8) */
    int ndim;                     /* the dequantized shape */
    int64_t dims[DT_MAX_DIMS];
    int64_t block;                /* elements per block along the last axis (0: per channel) */
    int64_t block_rows;           /* fp8-block: tile rows */
    int per_tensor;               /* absmax: one scale */
    int deepseek_v4;              /* fp8-block / mx under DeepSeek-V4's names (X.scale) */
    int comfyui;                  /* absmax under ComfyUI's names (X.scale_weight) */
    int ct_mx;                    /* mx under compressed-tensors' names: uint8 E8M0 scales, and
                                   * float4 codes as X.weight_packed U8 */
    int packed_i32;               /* compressed-tensors pack-quantized: int32 words of `bits`-bit
                                   * codes, unpacked (dt_qgroup_unpack_rows) to int8 codes */
    int bits;                     /* packed_i32: 4 or 8 */
    size_t zero_point;            /* packed_i32: X.weight_zero_point; gptq/awq: X.qzeros; or
                                   * DT_QT_NONE */
    size_t g_idx;                 /* gptq: X.g_idx, or DT_QT_NONE */
    size_t post_scale;            /* absmax-comfyui: musubi-tuner's m.scale_weight_tensor F32 [],
                                   * a second float32 multiply after the block scale; or NONE */
    size_t marker;                /* absmax-comfyui: ComfyUI's model-wide {prefix}scaled_fp8
                                   * marker (claimed by the first such group), or NONE */
    int zero_offset;              /* gptq: added to each stored zero (1: the v1 format) */
} dt_qgroup;

typedef struct dt_qplan {
    size_t n;          /* tensors */
    dt_qrole *role;    /* per tensor */
    size_t *group;     /* per tensor: its group (codes and parts) */
    size_t ngroups;
    dt_qgroup *groups;
} dt_qplan;

/* Finds every group of the layouts of docs/quantization.md among t[0, n). Errors (a scale
 * tensor without its codes, codes without their scales, shapes or dtypes that do not fit) name
 * the tensor. On failure the plan is empty (safe to free). */
dtcast_status dt_qplan_make(const dt_qt *t, size_t n, dt_qplan *plan, dt_io_error *err);
void dt_qplan_free(dt_qplan *plan);

/* The group's layout as inspect and the reports name it: dt_qlayout_name, or "deepseek-v4-fp8"
 * and "deepseek-v4-fp4" for DeepSeek-V4's names. */
const char *dt_qgroup_name(const dt_qgroup *g);

/* pack-quantized: sets the group's last dimension to k (X.weight_shape's last value, read by the
 * caller; without it the plan takes the words' whole capacity, 32 W / bits) with the bits per code
 * it implies (4 when ceil(4 k / 32) == W, else 8 when ceil(8 k / 32) == W) and the group size
 * the scales give; an error naming the tensor when no bits fit or the groups do not. */
dtcast_status dt_qgroup_set_k(dt_qgroup *g, const dt_qt *codes, const dt_qt *scales, int64_t k,
                              dt_io_error *err);

/* Reads len bytes of tensor i's data into buf (dt_qplan_pack_shapes' access to the files). */
typedef dtcast_status (*dt_qread_fn)(void *ctx, size_t i, void *buf, size_t len,
                                     dt_io_error *err);

/* pack-quantized groups of the plan: their last dimension and bits from X.weight_shape's data
 * (dt_qgroup_set_k), the zero points' shape checked against them; an error names the tensor. */
dtcast_status dt_qplan_pack_shapes(dt_qplan *plan, const dt_qt *t, dt_qread_fn read, void *ctx,
                                   dt_io_error *err);

/* pack-quantized: rows [row, row + nr) of the codes (words: those rows' int32 words, W per row,
 * as in the file) into int8 codes out[nr][k], each code minus its zero point (zp: the zero
 * points unpacked by dt_qgroup_unpack_zero_points, [rows][G] int8; NULL: none). */
void dt_qgroup_unpack_rows(const dt_qgroup *g, const uint8_t *words, uint64_t row, uint64_t nr,
                           uint64_t words_per_row, const int8_t *zp, uint64_t groups, int8_t *out);

/* pack-quantized: the zero points packed along N ([..., ceil(N bits / 32), G] int32, as the file
 * holds them) as int8 values out[rows][G], rows the product of the weight's leading dims. */
void dt_qgroup_unpack_zero_points(const dt_qgroup *g, const uint8_t *packed, uint64_t groups,
                                  int8_t *out);

/* gptq / awq: the products (q - z) * s of input rows [k0, k0 + kc) of the weight, in float32
 * (exact: the caller rounds them to the scale's type, as the producers' half-precision multiply
 * does), transposed into tile[n * kc + (k - k0)] for the output [N, K]. qrows: those rows'
 * qweight words as the file holds them (GPTQ: word rows k0 / per .. (k0 + kc) / per of N words;
 * AWQ: rows k0 .. k0 + kc of N / 8 words); qzeros: the whole X.qzeros; scales: X.scales as
 * float32 [G][N]; g_idx: X.g_idx or NULL (row k in group k / block). k0 and kc are multiples of
 * 32 / bits for GPTQ. */
void dt_qgroup_gptq_tile(const dt_qgroup *g, const uint8_t *qrows, int64_t k0, int64_t kc,
                         const uint8_t *qzeros, const float *scales, const int32_t *g_idx,
                         float *tile);

/* DeepSeek-V4's FP4 experts: the codes of rows as read (two per byte) with the code 8 (-0) made
 * 0 (+0), as DeepSeek's own table reads it (inference/convert.py: FP4_TABLE[8] = 0.0). */
void dt_qgroup_dsv4_codes(uint8_t *packed, size_t bytes);

/* The codes' element type as a reader names it: g->element, or int4 / int8 for pack-quantized
 * words (dequantized as int8 codes minus zero points). */
dtcast_type dt_qgroup_codes_type(const dt_qgroup *g);

/* The element type dtcast_dequantize reads a group's scales as: MX scales (E8M0 exponents,
 * stored as U8 by gpt-oss) as float8e8m0, the others as the file stores them. */
dtcast_type dt_qgroup_scale_type(const dt_qgroup *g, dtcast_type file_type);
/* The type its producer rounds each product (code x scale) to before the output's, when that is
 * not the output type itself: compressed-tensors' absmax, int4 and pack-quantized layouts
 * multiply in the scale's dtype (BF16 or F16 scales: the product rounded to it, then cast);
 * DTCAST_UNDEFINED when the products go straight into `to`. */
dtcast_type dt_qgroup_product_type(const dt_qgroup *g, dtcast_type scale_type, dtcast_type to);
/* The dtcast_quant_params that dequantize a group of this layout (one thread; the caller sets
 * threads and the shapes). */
void dt_qgroup_params(const dt_qgroup *g, dtcast_quant_params *p);

/* The names a quantized tensor `name` gets in a layout: codes, scales, global scale (NULL when
 * none), malloc'd into out[0..2] (NULL entries for none). */
dtcast_status dt_qlayout_names(dt_qlayout layout, const char *name, char *out[3],
                               dt_io_error *err);

#endif /* DTCAST_FILES_QUANT_LAYOUT_H */
