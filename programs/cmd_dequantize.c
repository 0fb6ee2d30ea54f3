/* dtcast dequantize: the command line of the dequantize job (files/quantize.h): its options, its
 * error printed. */
#include "cli.h"
#include "files/gguf_job.h"
#include "files/quantize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_QUIET = CLI_OPT_COMMAND, OPT_REPORT, OPT_NO_METADATA };

static const cli_option options[] = {
    {"help", 'h', 0, CLI_OPT_HELP},
    {"to", 't', 1, CLI_OPT_TO},
    {"report", 0, 0, OPT_REPORT},
    {"no-metadata", 0, 0, OPT_NO_METADATA},
    {"quiet", 'q', 0, OPT_QUIET},
    {"threads", 'T', 1, CLI_OPT_THREADS},
    {NULL, 0, 0, 0},
};

static const char help[] =
    "usage: dtcast dequantize [--to TYPE] [--report] [--no-metadata] IN OUT\n"
    "\n"
    "Dequantizes a quantized checkpoint into a plain one. IN is a .safetensors file (OUT then\n"
    "a .safetensors file), a sharded checkpoint's *.safetensors.index.json or a model folder\n"
    "(OUT a folder). The layouts are recognised by their tensor names:\n"
    "  block FP8 (DeepSeek-V3/R1, HF fine-grained FP8)  X.weight + X.weight_scale_inv\n"
    "  MXFP4 (gpt-oss)                 X_blocks + X_scales\n"
    "  MX (dtcast)                     X.weight + X.weight_scale (F8_E8M0)\n"
    "  NVFP4 (ModelOpt)                X.weight + X.weight_scale + X.weight_scale_2\n"
    "  NVFP4 (compressed-tensors)      X.weight_packed + X.weight_scale + X.weight_global_scale\n"
    "  FP8/INT8 (compressed-tensors)   X.weight + X.weight_scale (F32/BF16/F16)\n"
    "  INT4 groups (dtcast)            X.weight_packed + X.weight_scale (F32/BF16/F16)\n"
    "  pack-quantized (compressed-tensors, Kimi K2 INT4)  X.weight_packed I32 + X.weight_scale\n"
    "                                  + X.weight_shape (+ X.weight_zero_point)\n"
    "  DeepSeek-V4 FP8 / FP4 experts   X.weight F8_E4M3 / I8 + X.scale (F8_E8M0)\n"
    "  GPTQ / AWQ                      X.qweight + X.qzeros + X.scales (+ X.g_idx): X.weight [N, K]\n"
    "  scaled FP8 (diffusers, ComfyUI) X.weight + X.weight_scale / X.scale_weight\n"
    "Each becomes one tensor X (X.weight) of TYPE, computed as its producer's dequantizer does\n"
    "(docs/quantization.md); its activation scales (X.input_scale, X.input_global_scale,\n"
    "X.scale_input) and hints are dropped; every other tensor is copied as it is. config.json's\n"
    "quantization_config (bits, group sizes, block sizes, formats) is checked against the\n"
    "tensors: a contradiction is an error naming both. The index is\n"
    "rewritten (weight_map, total_size), quantization_config is removed from config.json,\n"
    "hf_quant_config.json is dropped and the folder's other files are copied.\n"
    "\n"
    "A GGUF model (IN a .gguf, or any file of a split set NAME-00001-of-0000N.gguf) becomes a\n"
    ".safetensors file (a split set: a folder of shards and an index): every tensor under its\n"
    "GGUF name, its shape in numpy's order; F32, F16, BF16, F64 and integer tensors copied as\n"
    "they are, ggml's block types (Q8_0, Q4_K, IQ2_XXS, ...) dequantized to TYPE (float32:\n"
    "ggml's own values; bfloat16 / float16: rounded once); the GGUF metadata kept as\n"
    "__metadata__ strings (arrays as JSON).\n"
    "\n"
    "Options:\n"
    "  -t, --to TYPE     bfloat16 (default), float16 or float32\n"
    "      --report      per quantized tensor, on stderr: its layout and its scales' range\n"
    "      --no-metadata a GGUF model's metadata is not kept\n"
    "  -T, --threads N   threads (default: one per CPU, at most 32)\n"
    "  -q, --quiet       no progress line\n"
    "  -h, --help        show this help\n"
    "\n"
    "Examples:\n"
    "  dtcast dequantize DeepSeek-V3/ DeepSeek-V3-bf16/\n"
    "  dtcast dequantize DeepSeek-V4-Flash/ DeepSeek-V4-Flash-bf16/\n"
    "  dtcast dequantize --to float16 Llama-3-8B-GPTQ/ Llama-3-8B-fp16/\n"
    "  dtcast dequantize --to float32 gpt-oss-20b/original/model.safetensors experts.safetensors\n"
    "  dtcast dequantize Qwen3-8B-Q4_K_M.gguf Qwen3-8B-bf16.safetensors\n";

typedef struct dq_request {
    const char *in, *out;
    dtcast_type to;
    int report, quiet, no_metadata;
    unsigned threads;
} dq_request;

int cmd_dequantize(int argc, char **argv)
{
    dq_request r;
    memset(&r, 0, sizeof r);
    r.to = DTCAST_BFLOAT16;
    cli_args a;
    const char *cmd = "dequantize";
    cli_args_init(&a, cmd, argc, argv, options);
    unsigned long v;
    for (int id; (id = cli_args_next_option(&a, help, &r.in, &r.out)) != CLI_ARG_END;) {
        if (id < 0) /* CLI_ARG_HELP, CLI_ARG_ERROR */
            return id == CLI_ARG_HELP ? CLI_OK : CLI_USAGE;
        switch (id) {
        case CLI_OPT_TO:
            if (cli_parse_type(cmd, "--to", a.value, &r.to) != CLI_OK)
                return CLI_USAGE;
            if (r.to != DTCAST_BFLOAT16 && r.to != DTCAST_FLOAT16 && r.to != DTCAST_FLOAT32)
                return cli_usage(cmd, "--to %s: dequantize writes bfloat16, float16 or float32",
                                 a.value);
            break;
        case OPT_REPORT:
            r.report = 1;
            break;
        case OPT_QUIET:
            r.quiet = 1;
            break;
        case OPT_NO_METADATA:
            r.no_metadata = 1;
            break;
        case CLI_OPT_THREADS:
            if (cli_parse_uint(cmd, "--threads", a.value, 4096, &v) != CLI_OK)
                return CLI_USAGE;
            r.threads = (unsigned)v;
            break;
        default:
            return cli_usage(cmd, "unexpected option");
        }
    }
    if (cli_need_in_out(cmd, r.in, r.out) != CLI_OK)
        return CLI_USAGE;
    cli_progress_line line;
    dt_io_error err = DT_IO_ERROR_INIT;
    if (dt_gguf_path(r.in)) {
        dt_gguf_dequantize_request g = {r.in, r.out, r.to, r.no_metadata, r.threads, {0}};
        cli_job_hooks(&g.hooks, &line, r.quiet);
        return cli_job_status(cmd, &line, dt_gguf_dequantize(&g, &err), &err);
    }
    if (r.no_metadata)
        return cli_usage(cmd, "--no-metadata is for a GGUF model");
    dt_dequantize_request q = {r.in, r.out, r.to, r.report, r.threads, {0}};
    cli_job_hooks(&q.hooks, &line, r.quiet);
    return cli_job_status(cmd, &line, dt_dequantize_checkpoint(&q, &err), &err);
}
