/* The quantize and dequantize jobs (docs/files.md, "The file layer as a library"): a checkpoint
 * (a .safetensors file, an index, a model folder; a .npy for quantize) into a scheme's
 * checkpoint layout, and a quantized checkpoint back into a plain one; the index rewritten,
 * config.json edited, the other files copied. Never print: errors fill a dt_io_error (usage
 * errors flagged), progress, warnings and --report lines go through the hooks. */
#ifndef DTCAST_FILES_QUANTIZE_H
#define DTCAST_FILES_QUANTIZE_H

#include "files/job.h"
#include "files/quant_layout.h"

typedef struct dt_quantize_request {
    const char *in, *out;
    const char *scheme_name;  /* for messages and the report */
    const char *layout_name;  /* the layout's name ("hf", "mx", ...) */
    dtcast_quant_params p;    /* the scheme, variant, rounding, block, threads */
    dt_qlayout layout;
    dt_globs select, exclude; /* select replaces the default choice of tensors */
    int report;               /* a line per quantized tensor: SQNR, max abs error */
    dt_job_hooks hooks;
} dt_quantize_request;

/* Why a scheme has no such checkpoint layout (dt_quantize_pick_layout); each caller words it
 * with its own spellings of the options. */
typedef enum dt_layout_problem {
    DT_LAYOUT_OK = 0,
    DT_LAYOUT_SINGLE_LEVEL, /* single-level NVFP4 has no checkpoint layout */
    DT_LAYOUT_VARIANT,      /* the NVFP4 layout stores the other variant's global scale */
    DT_LAYOUT_ELEMENT,      /* no absmax layout holds these codes */
    DT_LAYOUT_SCHEME,       /* an unknown scheme */
    DT_LAYOUT_NOT_OF_SCHEME /* the layout asked for is not one of the scheme's (*allowed) */
} dt_layout_problem;

/* The checkpoint layout of p's scheme, as `dtcast quantize --layout` picks it: want (NULL: the
 * scheme's first, whose name *name then receives; else *name = want), NVFP4's variant set to
 * the layout's unless variant_given; *allowed lists the scheme's layouts ("gpt-oss, mx"). */
dt_layout_problem dt_quantize_pick_layout(dtcast_quant_params *p, const char *want,
                                          int variant_given, dt_qlayout *layout,
                                          const char **name, const char **allowed);

/* The quantization_config (JSON text, indented for config.json) of NVFP4 in ModelOpt's layout
 * (DT_QL_NVFP4_MODELOPT) or compressed-tensors' (DT_QL_NVFP4_CT). */
const char *dt_nvfp4_qconfig(dt_qlayout layout);

/* Quantizes the chosen tensors of r->in into r->out (docs/cli.md, "Quantized checkpoints"). */
dtcast_status dt_quantize_checkpoint(const dt_quantize_request *r, dt_io_error *err);

typedef struct dt_dequantize_request {
    const char *in, *out;
    dtcast_type to;           /* bfloat16, float16 or float32 */
    int report;               /* a line per quantized tensor: its layout and scales' range */
    unsigned threads;         /* workers (0: one per CPU, at most 32) */
    dt_job_hooks hooks;
} dt_dequantize_request;

/* Dequantizes every quantized tensor of r->in into r->out; the others are copied. */
dtcast_status dt_dequantize_checkpoint(const dt_dequantize_request *r, dt_io_error *err);

/* The layouts convert-layout writes (the same codes, relabelled exactly). */
typedef enum dt_relayout {
    DT_RELAYOUT_DEEPSEEK_V4 = 1, /* block FP8 with F8_E8M0 X.scale (powers of two) */
    DT_RELAYOUT_FP8_BLOCK,       /* block FP8 with F32 X.weight_scale_inv (DeepSeek-V3, HF) */
    DT_RELAYOUT_NVFP4_CT,        /* NVFP4 in compressed-tensors' names (global 1/g) */
    DT_RELAYOUT_NVFP4_MODELOPT,  /* NVFP4 in ModelOpt's names (weight_scale_2 g) */
    DT_RELAYOUT_MXFP4_GPTOSS,    /* MXFP4 as gpt-oss ships it: X_blocks + X_scales */
    DT_RELAYOUT_MX,              /* OCP MX: X F4 (or F8, F6) + X_scale F8_E8M0 */
    DT_RELAYOUT_MX_CT,           /* compressed-tensors' MX: X.weight_packed / X.weight + uint8
                                  * X.weight_scale */
    DT_RELAYOUT_DEEPSEEK_V4_FP8, /* DEEPSEEK_V4, and the FP4 experts as FP8 with one F8_E8M0
                                  * scale per 128 x 128 tile (expert_dtype "fp8") */
    DT_RELAYOUT_LAST = DT_RELAYOUT_DEEPSEEK_V4_FP8
} dt_relayout;

typedef struct dt_relayout_request {
    const char *in, *out;
    dt_relayout to;
    int report;               /* a line: how many tensors changed layout */
    dt_job_hooks hooks;
} dt_relayout_request;

/* Rewrites r->in's quantized tensors of another layout into r->to's, exactly (convert_layout.c,
 * docs/files.md "convert-layout"), so that dequantizing the output gives the bytes dequantizing
 * the input gives; a tensor that would round is an error naming it and the element or tile,
 * and nothing is written. Block FP8: F32 -> E8M0 only for powers of two in [2^-127, 2^127] or
 * NaN. NVFP4 between ModelOpt's X.weight + X.weight_scale_2 (g, which multiplies) and
 * compressed-tensors' X.weight_packed + X.weight_global_scale (gs, which divides): exact when a
 * float32 global gives every block scale S of the tensor the same factor. MXFP4 between
 * gpt-oss's, OCP MX's and compressed-tensors' names (the same bytes; a 0xFF scale, NaN in OCP
 * MX and 2^128 in the others, refused across). DeepSeek-V4's FP4 experts -> FP8 tiles: the codes
 * re-encoded, one power of two per tile, refused where E4M3 cannot hold a value exactly. Every
 * other tensor is copied; the index renamed; config.json's quantization_config in the
 * target's words. */
dtcast_status dt_relayout_checkpoint(const dt_relayout_request *r, dt_io_error *err);

#endif /* DTCAST_FILES_QUANTIZE_H */
