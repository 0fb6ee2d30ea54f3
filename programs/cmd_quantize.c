/* dtcast quantize: the command line of the quantize job (files/quantize.h): its options, the
 * layout a scheme takes, its error printed. */
#include "cli.h"
#include "files/quantize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_QUIET = CLI_OPT_COMMAND, OPT_REPORT, OPT_SELECT, OPT_EXCLUDE, OPT_SCHEME, OPT_VARIANT,
       OPT_SCALE_MODE, OPT_SEED, OPT_BLOCK, OPT_LAYOUT };

static const cli_option options[] = {
    {"help", 'h', 0, CLI_OPT_HELP},
    {"scheme", 's', 1, OPT_SCHEME},
    {"variant", 0, 1, OPT_VARIANT},
    {"scale-mode", 0, 1, OPT_SCALE_MODE},
    {"round", 'r', 1, CLI_OPT_ROUND},
    {"seed", 0, 1, OPT_SEED},
    {"block", 0, 1, OPT_BLOCK},
    {"select", 0, 1, OPT_SELECT},
    {"exclude", 0, 1, OPT_EXCLUDE},
    {"layout", 0, 1, OPT_LAYOUT},
    {"report", 0, 0, OPT_REPORT},
    {"threads", 'T', 1, CLI_OPT_THREADS},
    {"quiet", 'q', 0, OPT_QUIET},
    {NULL, 0, 0, 0},
};

static const char help[] =
    "usage: dtcast quantize --scheme S [options] IN OUT\n"
    "\n"
    "Quantizes the weights of a checkpoint into a scheme's checkpoint layout. IN is a .npy or\n"
    ".safetensors file (OUT then a .safetensors file), a sharded checkpoint's\n"
    "*.safetensors.index.json or a model folder (OUT a folder: the index is rewritten, a\n"
    "quantization_config is written into config.json, the other files are copied).\n"
    "\n"
    "Schemes and their layouts (--layout; the first is the default):\n"
    "  fp8-block     hf: X.weight F8_E4M3 + X.weight_scale_inv F32 (128x128 tiles)\n"
    "  mxfp4         gpt-oss: X.weight_blocks U8 [..., K/32, 16] + X.weight_scales U8;\n"
    "                mx: X.weight F4 + X.weight_scale F8_E8M0\n"
    "  mxfp8, mxfp8-e5m2, mxfp6-e2m3, mxfp6-e3m2, mxint8\n"
    "                mx: X.weight (F8_E4M3, F8_E5M2, F6_E2M3, F6_E3M2, I8) + X.weight_scale F8_E8M0\n"
    "  nvfp4         modelopt: X.weight U8 + X.weight_scale F8_E4M3 + X.weight_scale_2 F32;\n"
    "                ct: X.weight_packed U8 + X.weight_scale F8_E4M3 + X.weight_global_scale F32\n"
    "  fp8-tensor, fp8-channel, int8-tensor, int8-channel\n"
    "                ct: X.weight (F8_E4M3, I8) + X.weight_scale ([1] or [N, 1])\n"
    "  int4-group    ct: X.weight_packed U8 (two int4 per byte) + X.weight_scale [N, K/128]\n"
    "\n"
    "Which tensors (default): those of at least two axes, of a float type (float32,\n"
    "bfloat16, float16, float64), whose name ends in 'weight' and contains none of 'embed',\n"
    "'norm', 'lm_head' (what quantizers do); a .npy's tensor always. The rest are copied.\n"
    "\n"
    "Options:\n"
    "  -s, --scheme S        the scheme (above)\n"
    "      --variant V       the variant whose intermediates to follow: ocp (MX), modelopt,\n"
    "                        torchao, ct (NVFP4), hf, deepseek-act (fp8-block), ct (absmax)\n"
    "      --scale-mode M    MX scale: floor (default), ceil, even, rceil, log2\n"
    "  -r, --round R         element rounding: rne (default), rna (MX), stochastic\n"
    "      --seed N          the seed of --round stochastic (default 0)\n"
    "      --block RxC       fp8-block tile (default 128x128); N: elements per block\n"
    "      --select GLOB     quantize the tensors whose name matches (repeatable; replaces the\n"
    "                        default choice)\n"
    "      --exclude GLOB    leave out the tensors whose name matches (repeatable)\n"
    "      --layout L        the checkpoint layout (above)\n"
    "      --report          per tensor, on stderr: SQNR and max abs error of the quantization\n"
    "  -T, --threads N       threads (default: one per CPU)\n"
    "  -q, --quiet           no progress line\n"
    "  -h, --help            show this help\n"
    "\n"
    "Examples:\n"
    "  dtcast quantize --scheme fp8-block model/ model-fp8/\n"
    "  dtcast quantize --scheme mxfp4 --scale-mode rceil --select '*experts*' model/ model-mxfp4/\n"
    "  dtcast quantize --scheme nvfp4 --layout ct --report model.safetensors model-nvfp4.safetensors\n";

typedef struct q_request {
    const char *in, *out;
    const char *scheme_name, *layout_name;
    dtcast_quant_params p;
    int variant_given;
    dt_qlayout layout;
    dt_globs select, exclude;
    int report, quiet;
} q_request;

/* ---- the command line ------------------------------------------------------------------------ */

static const char *const layout_names[] = {"hf", "gpt-oss", "mx", "modelopt", "ct", NULL};

/* The layout: --layout, else the scheme's first; refused when the scheme does not have it. */
static int pick_layout(q_request *r)
{
    const char *cmd = "quantize", *allowed;
    const dtcast_quant_params *p = &r->p;
    switch (dt_quantize_pick_layout(&r->p, r->layout_name, r->variant_given, &r->layout,
                                    &r->layout_name, &allowed)) {
    case DT_LAYOUT_OK:
        return CLI_OK;
    case DT_LAYOUT_SINGLE_LEVEL:
        return cli_usage(cmd, "--scheme %s: single-level NVFP4 has no checkpoint layout",
                         r->scheme_name);
    case DT_LAYOUT_VARIANT:
        return cli_usage(cmd, "--layout %s stores %s global scale: give --variant %s",
                         r->layout == DT_QL_NVFP4_CT ? "ct" : "modelopt",
                         r->layout == DT_QL_NVFP4_CT ? "compressed-tensors' (2688/amax)"
                                                     : "ModelOpt's (amax/2688)",
                         r->layout == DT_QL_NVFP4_CT ? "ct" : "modelopt or torchao");
    case DT_LAYOUT_ELEMENT:
        return cli_usage(cmd, "--scheme %s: no checkpoint layout holds %s codes",
                         r->scheme_name, dtcast_type_name(p->element));
    case DT_LAYOUT_SCHEME:
        return cli_usage(cmd, "--scheme %s: unknown scheme", r->scheme_name);
    case DT_LAYOUT_NOT_OF_SCHEME:
        break;
    }
    return cli_usage(cmd, "--layout %s: scheme %s has %s", r->layout_name, r->scheme_name,
                     allowed);
}

static int parse_block(q_request *r, const char *text)
{
    char *end;
    long long rows = 0, cols = strtoll(text, &end, 10);
    if (*end == 'x' || *end == 'X') {
        rows = cols;
        cols = strtoll(end + 1, &end, 10);
    }
    if (*end || cols <= 0 || rows < 0 || cols > ((long long)1 << 40) || rows > ((long long)1 << 40))
        return cli_usage("quantize", "--block %s: give ROWSxCOLS (fp8-block) or a block size",
                         text);
    r->p.block = cols;
    r->p.block_rows = rows;
    return CLI_OK;
}

int cmd_quantize(int argc, char **argv)
{
    q_request r;
    memset(&r, 0, sizeof r);
    dtcast_quant_params_init(&r.p);
    const char *variant = NULL, *scale_mode = NULL, *round = NULL, *block = NULL;
    int have_seed = 0;
    unsigned long seed = 0, threads = 0;
    cli_args a;
    const char *cmd = "quantize";
    cli_args_init(&a, cmd, argc, argv, options);
    for (int id; (id = cli_args_next_option(&a, help, &r.in, &r.out)) != CLI_ARG_END;) {
        if (id == CLI_ARG_HELP || id == CLI_ARG_ERROR)
            return id == CLI_ARG_HELP ? CLI_OK : CLI_USAGE;
        switch (id) {
        case OPT_SCHEME: r.scheme_name = a.value; break;
        case OPT_VARIANT: variant = a.value; break;
        case OPT_SCALE_MODE: scale_mode = a.value; break;
        case CLI_OPT_ROUND: round = a.value; break;
        case OPT_BLOCK: block = a.value; break;
        case OPT_LAYOUT: {
            int i;
            if (cli_parse_choice(cmd, "--layout", a.value, layout_names, &i) != CLI_OK)
                return CLI_USAGE;
            r.layout_name = layout_names[i];
            break;
        }
        case OPT_SEED:
            if (cli_parse_uint(cmd, "--seed", a.value, (unsigned long)-1, &seed) != CLI_OK)
                return CLI_USAGE;
            have_seed = 1;
            break;
        case OPT_SELECT:
        case OPT_EXCLUDE: {
            dt_globs *g = id == OPT_SELECT ? &r.select : &r.exclude;
            if (g->n == DT_MAX_GLOBS)
                return cli_usage(cmd, "%s: at most %d patterns", a.spelled, DT_MAX_GLOBS);
            g->pattern[g->n++] = a.value;
            break;
        }
        case OPT_REPORT: r.report = 1; break;
        case OPT_QUIET: r.quiet = 1; break;
        case CLI_OPT_THREADS:
            if (cli_parse_uint(cmd, "--threads", a.value, 4096, &threads) != CLI_OK)
                return CLI_USAGE;
            break;
        default:
            return cli_usage(cmd, "unexpected option");
        }
    }
    if (!r.scheme_name)
        return cli_usage(cmd, "missing --scheme (fp8-block, mxfp4, nvfp4, ...)");
    dtcast_error e;
    memset(&e, 0, sizeof e);
    if (dtcast_quant_params_from_recipe(&r.p, r.scheme_name, &e) != DTCAST_OK)
        return cli_usage(cmd, "--scheme %s: %s", r.scheme_name, e.message);
    if (variant) {
        if (dtcast_variant_from_name(variant, &r.p.variant, &e) != DTCAST_OK)
            return cli_usage(cmd, "--variant %s: %s", variant, e.message);
        r.variant_given = 1;
    }
    if (scale_mode && dtcast_scale_mode_from_name(scale_mode, &r.p.scale_mode, &e) != DTCAST_OK)
        return cli_usage(cmd, "--scale-mode %s: %s", scale_mode, e.message);
    if (round && dtcast_round_from_name(round, &r.p.round, &e) != DTCAST_OK)
        return cli_usage(cmd, "--round %s: %s", round, e.message);
    if (have_seed && r.p.round != DTCAST_ROUND_STOCHASTIC)
        return cli_usage(cmd, "--seed goes with --round stochastic");
    r.p.seed = seed;
    r.p.threads = (unsigned)threads;
    /* The recipe's 128 x 128 tile is the hf variant's: another variant brings its own. */
    if (r.p.scheme == DTCAST_SCHEME_FP8_BLOCK && r.p.variant == DTCAST_VARIANT_DEEPSEEK_ACT)
        r.p.block = r.p.block_rows = 0;
    if (block && parse_block(&r, block) != CLI_OK)
        return CLI_USAGE;
    if (pick_layout(&r) != CLI_OK)
        return CLI_USAGE;
    if (cli_need_in_out(cmd, r.in, r.out) != CLI_OK)
        return CLI_USAGE;
    dt_quantize_request q = {r.in, r.out, r.scheme_name, r.layout_name, r.p, r.layout,
                             r.select, r.exclude, r.report, {0}};
    cli_progress_line line;
    cli_job_hooks(&q.hooks, &line, r.quiet);
    dt_io_error err = DT_IO_ERROR_INIT;
    return cli_job_status(cmd, &line, dt_quantize_checkpoint(&q, &err), &err);
}
