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

#endif /* DTCAST_FILES_QUANTIZE_H */
