/* dtcast convert-layout: the command line of the convert-layout job (files/quantize.h): its
 * options, its error printed. */
#include "cli.h"
#include "files/quantize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_QUIET = CLI_OPT_COMMAND, OPT_REPORT, OPT_LAYOUT };

static const cli_option options[] = {
    {"help", 'h', 0, CLI_OPT_HELP},
    {"to", 't', 1, OPT_LAYOUT},
    {"report", 0, 0, OPT_REPORT},
    {"quiet", 'q', 0, OPT_QUIET},
    {NULL, 0, 0, 0},
};

static const char help[] =
    "usage: dtcast convert-layout --to LAYOUT [--report] IN OUT\n"
    "\n"
    "Rewrites a quantized checkpoint into another layout of the same codes, exactly: the codes\n"
    "are copied byte for byte and every scale is converted without rounding, so dequantizing\n"
    "the output gives the bytes dequantizing IN gives. A scale that cannot be converted exactly\n"
    "is an error naming the tensor and the element, and nothing is written. IN and OUT as for\n"
    "dequantize (a .safetensors file, an index, a model folder); the index is rewritten and\n"
    "config.json's quantization_config set to the target layout's.\n"
    "\n"
    "Layouts (--to):\n"
    "  deepseek-v4   block FP8 with F8_E8M0 X.scale, one power of two per tile (DeepSeek-V4),\n"
    "                from F32 X.weight_scale_inv (DeepSeek-V3, HF fine-grained FP8): every\n"
    "                scale must be a power of two in [2^-127, 2^127] (or NaN)\n"
    "  fp8-block     block FP8 with F32 X.weight_scale_inv, from DeepSeek-V4's X.scale\n"
    "                (always exact)\n"
    "  nvfp4-ct      NVFP4 in compressed-tensors' names (X.weight_packed, X.weight_global_scale\n"
    "                = 1/g), from ModelOpt's (X.weight, X.weight_scale_2 = g): exact when a\n"
    "                float32 global gives every block scale S the same factor, fl32(S x g) ==\n"
    "                fl32(S / gs); activation scales are refused\n"
    "  nvfp4-modelopt  the reverse\n"
    "  mxfp4-gptoss  MXFP4 as gpt-oss ships it (X_blocks U8 [..., K/32, 16], X_scales U8), from\n"
    "                OCP MX, compressed-tensors' MXFP4 or DeepSeek-V4's FP4 experts\n"
    "  mx            OCP MX (X F4 [..., K], X_scale F8_E8M0), from gpt-oss's, compressed-\n"
    "                tensors' (MXFP4 and MXFP8) or DeepSeek-V4's FP4 experts\n"
    "  mx-ct         compressed-tensors' MX (X.weight_packed U8 [..., K/2] or X.weight F8_E4M3,\n"
    "                uint8 X.weight_scale), from the others; one element type per checkpoint\n"
    "                (the MX namings hold the same bytes: a scale byte 0xFF, NaN in OCP MX and\n"
    "                DeepSeek-V4, 2^128 in gpt-oss and compressed-tensors, is refused across)\n"
    "  deepseek-v4-fp8  DeepSeek-V4 with every weight block FP8: deepseek-v4, and the FP4\n"
    "                experts (I8) re-encoded as F8_E4M3 with one F8_E8M0 scale per 128 x 128\n"
    "                tile (expert_dtype \"fp8\"); a tile whose values E4M3 cannot hold over one\n"
    "                power of two is refused"
    "\n"
    "Options:\n"
    "  -t, --to LAYOUT   deepseek-v4 | deepseek-v4-fp8 | fp8-block | nvfp4-ct |\n"
    "                    nvfp4-modelopt | mxfp4-gptoss | mx | mx-ct\n"
    "      --report      how many tensors changed layout, on stderr\n"
    "  -q, --quiet       no progress line\n"
    "  -h, --help        show this help\n"
    "\n"
    "Examples:\n"
    "  dtcast convert-layout --to fp8-block DeepSeek-V4-Flash-Base/ v4-as-v3/\n"
    "  dtcast convert-layout --to deepseek-v4 model-fp8/ model-fp8-ue8m0/\n"
    "  dtcast convert-layout --to nvfp4-ct DeepSeek-R1-NVFP4/ r1-nvfp4-ct/\n"
    "  dtcast convert-layout --to mx gpt-oss-20b/ gpt-oss-20b-ocp-mx/\n"
    "  dtcast convert-layout --to deepseek-v4-fp8 DeepSeek-V4-Flash/ v4-flash-fp8/\n";

int cmd_convert_layout(int argc, char **argv)
{
    dt_relayout_request q;
    memset(&q, 0, sizeof q);
    int quiet = 0;
    static const char *const layouts[] = {"deepseek-v4", "fp8-block", "nvfp4-ct", "nvfp4-modelopt",
                                          "mxfp4-gptoss", "mx", "mx-ct", "deepseek-v4-fp8",
                                          NULL};
    static const dt_relayout codes[] = {DT_RELAYOUT_DEEPSEEK_V4,     DT_RELAYOUT_FP8_BLOCK,
                                        DT_RELAYOUT_NVFP4_CT,        DT_RELAYOUT_NVFP4_MODELOPT,
                                        DT_RELAYOUT_MXFP4_GPTOSS,    DT_RELAYOUT_MX,
                                        DT_RELAYOUT_MX_CT,           DT_RELAYOUT_DEEPSEEK_V4_FP8};
    cli_args a;
    const char *cmd = "convert-layout";
    cli_args_init(&a, cmd, argc, argv, options);
    for (int id; (id = cli_args_next_option(&a, help, &q.in, &q.out)) != CLI_ARG_END;) {
        if (id < 0) /* CLI_ARG_HELP, CLI_ARG_ERROR */
            return id == CLI_ARG_HELP ? CLI_OK : CLI_USAGE;
        int i;
        switch (id) {
        case OPT_LAYOUT:
            if (cli_parse_choice(cmd, "--to", a.value, layouts, &i) != CLI_OK)
                return CLI_USAGE;
            q.to = codes[i];
            break;
        case OPT_REPORT:
            q.report = 1;
            break;
        case OPT_QUIET:
            quiet = 1;
            break;
        default:
            return cli_usage(cmd, "unexpected option");
        }
    }
    if (!q.to)
        return cli_usage(cmd, "--to LAYOUT is required (deepseek-v4, deepseek-v4-fp8, "
                              "fp8-block, nvfp4-ct, nvfp4-modelopt, mxfp4-gptoss, mx or mx-ct)");
    if (cli_need_in_out(cmd, q.in, q.out) != CLI_OK)
        return CLI_USAGE;
    cli_progress_line line;
    cli_job_hooks(&q.hooks, &line, quiet);
    dt_io_error err = DT_IO_ERROR_INIT;
    return cli_job_status(cmd, &line, dt_relayout_checkpoint(&q, &err), &err);
}
