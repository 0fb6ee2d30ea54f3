/* dtcast cast: one tensor file to another type (the conversion settings it shares with compare:
 * cli_settings.c). */
#include "cli.h"
#include "files/cast.h"
#include "files/onnx_schema.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char cast_help[] =
    "usage: dtcast cast --to TYPE [options] IN OUT\n"
    "\n"
    "Converts the tensors in IN to TYPE and writes them to OUT, streamed in blocks (memory stays\n"
    "small whatever the file size). Files, by name:\n"
    "  .npy           numpy arrays; a type numpy lacks keeps its shape: 16-bit types as <u2,\n"
    "                 8-bit as |u1, sub-byte types one element per |u1 byte (read back with\n"
    "                 --from TYPE)\n"
    "  .pb            ONNX TensorProto; over 2 GiB written as external data in OUT.data\n"
    "  .safetensors   checkpoints: the floating-point tensors are converted, the others copied\n"
    "                 byte for byte, __metadata__ kept\n"
    "  X.safetensors.index.json\n"
    "                 a sharded checkpoint, converted shard by shard into the folder OUT\n"
    "                 (or in steps, one process per shard: --shards, then --index-only)\n"
    "  .onnx          an ONNX model (OUT .onnx too): its floating-point weights stored as\n"
    "                 TYPE (float16, bfloat16; float32 for float64 ones), a Cast back to\n"
    "                 their type before their consumers; graph inputs, outputs and\n"
    "                 value_info unchanged (or --mode graph, below); external data\n"
    "                 streamed (docs/onnx_models.md)\n"
    "  .gguf          OUT only: a GGUF model of ggml's types (--to q8_0, q4_k, bf16, ...);\n"
    "                 its options: --tensor-type GLOB=TYPE, --arch NAME, --kv KEY=VALUE,\n"
    "                 --requantize ('dtcast cast --help x.gguf' lists them)\n"
    "  .raw .bin -    raw little-endian elements (needs --from); - is stdin/stdout\n"
    "Other kinds are refused. Strings in raw data are one per line. On error nothing is written.\n"
    "\n"
    "  -t, --to TYPE          target type (see 'dtcast types')\n"
    "      --select GLOB      convert only the tensors whose name matches (repeatable); a\n"
    "                         single-tensor OUT (.npy, .pb, raw) takes the one chosen\n"
    "      --exclude GLOB     do not convert the tensors whose name matches (repeatable)\n"
    "      --report           per tensor: exact, rounded, overflowed, underflowed and NaN\n"
    "                         counts, the largest errors and the SQNR (on stderr)\n"
    "      --external-data W  .pb output: auto (default: over 2 GiB) | always | never;\n"
    "                         .onnx: auto (as IN has it, or over 2 GiB) | always | never\n"
    "      --float6-packed    raw float6 input and output: four elements in three bytes (the\n"
    "                         bit stream of safetensors F6), not one per byte; .npy keeps one\n"
    "                         per byte, .pb is always packed (ONNX IR 14)\n"
    "      --raw-codes        cast the codes of scaled tensors (a weight with its weight_scale,\n"
    "                         _blocks with _scales, ...) as plain values; without it such a\n"
    "                         tensor is refused: its values are the codes times the scales,\n"
    "                         which 'dtcast dequantize' computes\n"
    "  -q, --quiet            no progress line, no warning about values that became NaN/Inf\n"
    "\n"
    "ONNX models (.onnx):\n"
    "      --mode M           weights (default): the weights stored as TYPE, a Cast back before\n"
    "                         their consumers (float8*, int8: codes and a scale per tensor, a\n"
    "                         DequantizeLinear back), the graph's types unchanged | graph:\n"
    "                         the compute in TYPE (float16, bfloat16) wherever the operator\n"
    "                         schemas at the model's opset admit it, Casts between, the model\n"
    "                         valid\n"
    "      --select-op GLOB   convert the weights that a node of these op types reads (with\n"
    "                         --select: either picks a weight; repeatable)\n"
    "      --exclude-op GLOB  keep the weights that a node of these op types reads (repeatable);\n"
    "                         in graph mode a weight kept feeds its nodes through a Cast\n"
    "      --keep-io-types    graph: the graph's inputs and outputs keep their types\n"
    "      --block-op GLOB    graph: nodes of these op types keep their types (repeatable)\n"
    "      --block-node GLOB  graph: nodes of these names keep their types (repeatable)\n"
    "      --runtime R        graph: a node computes in TYPE only where runtime R has a kernel\n"
    "                         for it: onnxruntime-cpu (its CPU provider has few bfloat16\n"
    "                         kernels and refuses a model that needs others) | any (default)\n"
    "\n"
    "Sharded checkpoint in steps (IN is X.safetensors.index.json):\n"
    "      --shards LIST      convert only these shards into OUT and write no index; LIST is\n"
    "                         comma-separated shard file names, or 0-based positions in the\n"
    "                         sorted list of the index's shard files\n"
    "      --index-only       convert nothing: check that every shard is in OUT, then write the\n"
    "                         index there (as the one-step conversion would; --to optional)\n"
    "\n";

static const char cast_examples[] =
    "\n"
    "Examples:\n"
    "  dtcast cast --to float8e4m3fn weights.npy weights_f8.npy\n"
    "  dtcast cast --to bfloat16 model.safetensors model_bf16.safetensors\n"
    "  dtcast cast --to bf16 --exclude '*norm*' model.safetensors.index.json out_dir/\n"
    "  dtcast cast --to float16 model.onnx model_fp16.onnx\n"
    "  dtcast cast --to float8e4m3fn --select-op MatMul --select-op Gemm model.onnx m_f8.onnx\n"
    "  dtcast cast --to float16 --mode graph --keep-io-types model.onnx model_fp16.onnx\n"
    "  dtcast cast --to bf16 --mode graph --runtime onnxruntime-cpu model.onnx model_bf16.onnx\n"
    "  dtcast cast --to bf16 --shards 0,1 model.safetensors.index.json out_dir/\n"
    "  dtcast cast --index-only model.safetensors.index.json out_dir/\n"
    "  dtcast cast --to float8e4m3fn --overflow saturate --report w.npy w8.npy\n"
    "  dtcast cast --to bf16 --round trunc in.npy out.pb\n"
    "  dtcast cast --to int8 --int-overflow saturate --round round in.npy out.npy\n"
    "  dtcast cast --profile onnx:19 --to float8e5m2 --saturate 0 in.pb out.pb\n"
    "  dtcast cast --profile pypto --to int32 --cast-mode CAST_FLOOR in.npy out.npy\n"
    "  dtcast cast --from float32 --to float16 - - < in.raw > out.raw\n"
    "  dtcast cast --to string --string-style ort weights.npy -     # one value per line\n";

/* Options of cast alone. */
enum { OPT_QUIET = CLI_OPT_COMMAND, OPT_REPORT, OPT_SELECT, OPT_EXCLUDE, OPT_FORMAT,
       OPT_EXTERNAL, OPT_FLOAT6_PACKED, OPT_SHARDS, OPT_INDEX_ONLY, OPT_RAW_CODES,
       OPT_MODE, OPT_KEEP_IO, OPT_BLOCK_OP, OPT_BLOCK_NODE, OPT_RUNTIME, OPT_SELECT_OP,
       OPT_EXCLUDE_OP };

/* ---- the command ---------------------------------------------------------------------------- */

static const cli_option cast_options[] = {
    {"help", 'h', 0, CLI_OPT_HELP},
    {"to", 't', 1, CLI_OPT_TO},
    {"quiet", 'q', 0, OPT_QUIET},
    {"report", 0, 0, OPT_REPORT},
    {"select", 0, 1, OPT_SELECT},
    {"exclude", 0, 1, OPT_EXCLUDE},
    {"format", 0, 1, OPT_FORMAT},
    {"external-data", 0, 1, OPT_EXTERNAL},
    {"float6-packed", 0, 0, OPT_FLOAT6_PACKED},
    {"shards", 0, 1, OPT_SHARDS},
    {"index-only", 0, 0, OPT_INDEX_ONLY},
    {"raw-codes", 0, 0, OPT_RAW_CODES},
    {"mode", 0, 1, OPT_MODE},
    {"keep-io-types", 0, 0, OPT_KEEP_IO},
    {"block-op", 0, 1, OPT_BLOCK_OP},
    {"block-node", 0, 1, OPT_BLOCK_NODE},
    {"runtime", 0, 1, OPT_RUNTIME},
    {"select-op", 0, 1, OPT_SELECT_OP},
    {"exclude-op", 0, 1, OPT_EXCLUDE_OP},
    CLI_CONVERSION_OPTIONS,
    {NULL, 0, 0, 0},
};

static void print_cast_help(void)
{
    fputs(cast_help, stdout);
    fputs(cli_conversion_help, stdout);
    fputs(cast_examples, stdout);
}

/* The request the command line builds. */
typedef struct cast_request {
    cli_settings settings;
    const char *to_name;
    dtcast_type to;
    const char *in;
    const char *out;
    int quiet;           /* -q: no progress, no warning */
    int report;          /* --report */
    dt_globs select, exclude;
    dt_external external_data;
    int float6_packed;   /* --float6-packed: raw float6 input and output four in three bytes */
    const char *shards;  /* --shards LIST */
    int index_only;      /* --index-only */
    int raw_codes;       /* --raw-codes */
    int onnx_graph;      /* --mode graph */
    int keep_io_types;   /* --keep-io-types */
    dt_globs block_ops, block_nodes; /* --block-op, --block-node */
    int onnx_runtime;    /* --runtime: a dt_onnx_runtime */
    dt_globs select_ops, exclude_ops; /* --select-op, --exclude-op */
} cast_request;

static int add_glob(dt_globs *g, const char *option, const char *pattern)
{
    if (g->n == DT_MAX_GLOBS)
        return cli_usage("cast", "%s: at most %d patterns", option, DT_MAX_GLOBS);
    g->pattern[g->n++] = pattern;
    return CLI_OK;
}

/* The options of cast alone (not shared with compare). */
static int cast_option(cast_request *r, int id, const char *value)
{
    static const char *const formats[] = {"raw", NULL};
    static const char *const external[] = {"auto", "always", "never", NULL};
    static const char *const modes[] = {"weights", "graph", NULL};
    static const char *const runtimes[] = {"any", "onnxruntime-cpu", NULL};
    int i;
    switch (id) {
    case OPT_QUIET:
        r->quiet = 1;
        return CLI_OK;
    case OPT_REPORT:
        r->report = 1;
        return CLI_OK;
    case OPT_SELECT:
        return add_glob(&r->select, "--select", value);
    case OPT_EXCLUDE:
        return add_glob(&r->exclude, "--exclude", value);
    case OPT_FORMAT:
        if (cli_parse_choice("cast", "--format", value, formats, &i) != CLI_OK)
            return CLI_USAGE;
        r->settings.input.format_raw = 1;
        return CLI_OK;
    case OPT_EXTERNAL:
        if (cli_parse_choice("cast", "--external-data", value, external, &i) != CLI_OK)
            return CLI_USAGE;
        r->external_data = (dt_external)i;
        return CLI_OK;
    case OPT_FLOAT6_PACKED:
        r->float6_packed = 1;
        return CLI_OK;
    case OPT_SHARDS:
        /* The names and positions are checked against the index (cast_files.c). */
        if (!value[0])
            return cli_usage("cast", "--shards: an empty list (give shard file names or "
                                     "positions, comma-separated)");
        r->shards = value;
        return CLI_OK;
    case OPT_INDEX_ONLY:
        r->index_only = 1;
        return CLI_OK;
    case OPT_RAW_CODES:
        r->raw_codes = 1;
        return CLI_OK;
    case OPT_MODE:
        if (cli_parse_choice("cast", "--mode", value, modes, &i) != CLI_OK)
            return CLI_USAGE;
        r->onnx_graph = i == 1;
        return CLI_OK;
    case OPT_KEEP_IO:
        r->keep_io_types = 1;
        return CLI_OK;
    case OPT_BLOCK_OP:
        return add_glob(&r->block_ops, "--block-op", value);
    case OPT_BLOCK_NODE:
        return add_glob(&r->block_nodes, "--block-node", value);
    case OPT_SELECT_OP:
        return add_glob(&r->select_ops, "--select-op", value);
    case OPT_EXCLUDE_OP:
        return add_glob(&r->exclude_ops, "--exclude-op", value);
    case OPT_RUNTIME:
        if (cli_parse_choice("cast", "--runtime", value, runtimes, &i) != CLI_OK)
            return CLI_USAGE;
        r->onnx_runtime = i == 0 ? DT_ONNX_RUNTIME_ANY : DT_ONNX_RUNTIME_ORT_CPU;
        return CLI_OK;
    default:
        return -1;
    }
}

/* Parses the command line; returns -1 after --help, else an exit status. */
static int parse_cast_args(cast_request *r, int argc, char **argv)
{
    cli_args a;
    const char *cmd = "cast";
    cli_args_init(&a, cmd, argc, argv, cast_options);
    for (;;) {
        int id = cli_args_next(&a);
        if (id == CLI_ARG_END)
            break;
        if (id == CLI_ARG_ERROR)
            return CLI_USAGE;
        if (id == CLI_OPT_HELP) {
            print_cast_help();
            return -1;
        }
        if (id == CLI_ARG_POSITIONAL) {
            if (cli_in_out(&a, &r->in, &r->out) != CLI_OK)
                return CLI_USAGE;
            continue;
        }
        if (id == CLI_OPT_TO) {
            r->to_name = a.value;
            r->settings.given |= 1u << CLI_OPT_TO; /* for the messages that name it */
            snprintf(r->settings.given_spelling[CLI_OPT_TO], sizeof r->settings.given_spelling[0],
                     "%s", a.spelled);
            continue;
        }
        int own = cast_option(r, id, a.value);
        if (own == CLI_OK)
            continue;
        if (own == CLI_USAGE)
            return CLI_USAGE;
        if (cli_settings_option(&r->settings, cmd, &a, id) != CLI_OK)
            return CLI_USAGE;
    }
    if (r->shards && r->index_only)
        return cli_usage(cmd, "--shards and --index-only are two steps: give one of them");
    if (r->report && r->settings.options.round == DTCAST_ROUND_STOCHASTIC)
        return cli_usage(cmd, "--report predicts each element's rounding from its value: not "
                              "under --round stochastic");
    /* The index does not depend on the type: --index-only needs none. */
    if (!r->to_name && !r->index_only)
        return cli_usage(cmd, "missing --to TYPE");
    if (r->to_name && cli_parse_type(cmd, cli_settings_flag(&r->settings, CLI_OPT_TO, "--to"),
                                     r->to_name, &r->to) != CLI_OK)
        return CLI_USAGE;
    if (!r->in)
        return cli_usage(cmd, "missing IN and OUT");
    if (!r->out)
        return cli_usage(cmd, "missing OUT (use - for stdout)");
    if ((r->shards || r->index_only) && dt_file_kind_of(r->in) != DT_FILE_SAFETENSORS_INDEX)
        return cli_usage(cmd, "%s: IN must be a sharded checkpoint's *.safetensors.index.json, "
                              "not '%s'",
                         r->shards ? "--shards" : "--index-only", r->in);
    return cli_settings_check(&r->settings, cmd);
}

static const char *error_text(void *ctx, dtcast_status status, const char *message, char *buf,
                              size_t size)
{
    return cli_error_text(ctx, status, message, buf, size);
}

static const char *suggest(void *ctx, const char *typed, const char *const *candidates, size_t n,
                           char *buf, size_t size)
{
    (void)ctx;
    cli_suggest sg;
    cli_suggest_init(&sg, typed);
    for (size_t k = 0; k < n; k++)
        cli_suggest_add(&sg, candidates[k], NULL);
    return cli_suggest_hint(&sg, buf, size);
}

/* The file job (files/cast.h): its error printed, its exit status returned. */
static int cast_files(cast_request *r)
{
    dt_cast_request q;
    memset(&q, 0, sizeof q);
    q.in = r->in;
    q.out = r->out;
    if (cli_file_kind(r->in, r->settings.input.format_raw, &q.in_kind) != CLI_OK)
        return CLI_FAIL;
    /* A sharded checkpoint goes to a folder: OUT has no kind of its own. */
    q.out_kind = DT_FILE_UNKNOWN;
    if (q.in_kind != DT_FILE_SAFETENSORS_INDEX && cli_file_kind(r->out, 0, &q.out_kind) != CLI_OK)
        return CLI_FAIL;
    const cli_settings *s = &r->settings;
    q.to = r->to;
    cli_conversion(s, &q.conversion);
    q.input = s->input;
    q.report = r->report;
    q.watch = !r->quiet;
    q.select = r->select;
    q.exclude = r->exclude;
    q.external_data = r->external_data;
    q.float6_packed = r->float6_packed;
    q.shards = r->shards;
    q.index_only = r->index_only;
    q.raw_codes = r->raw_codes;
    q.onnx_graph = r->onnx_graph;
    q.keep_io_types = r->keep_io_types;
    q.block_ops = r->block_ops;
    q.block_nodes = r->block_nodes;
    q.onnx_runtime = r->onnx_runtime;
    q.select_ops = r->select_ops;
    q.exclude_ops = r->exclude_ops;
    char profile[32];
    cli_profile_label(s, profile, sizeof profile);
    q.profile_label = profile;
    q.to_flag = cli_settings_flag(s, CLI_OPT_TO, "--to");
    q.error_text = error_text;
    q.error_text_ctx = (void *)s;
    q.suggest = suggest;
    cli_progress_line line;
    cli_job_hooks(&q.hooks, &line, r->quiet);
    dt_io_error err = DT_IO_ERROR_INIT;
    return cli_job_status("cast", &line, dt_cast_files(&q, &err), &err);
}

/* OUT (the last argument) a .gguf: the GGUF writer's own options (cmd_cast_gguf.c) */
static int gguf_out(int argc, char **argv)
{
    const char *last = argc > 1 ? argv[argc - 1] : "";
    const size_t n = strlen(last);
    return last[0] != '-' && n >= 5 && strcasecmp(last + n - 5, ".gguf") == 0;
}

int cmd_cast(int argc, char **argv)
{
    if (gguf_out(argc, argv))
        return cmd_cast_gguf(argc, argv);
    cast_request r;
    memset(&r, 0, sizeof r);
    cli_settings_init(&r.settings);
    int status = parse_cast_args(&r, argc, argv);
    if (status != CLI_OK)
        return status < 0 ? CLI_OK : status;

    return cast_files(&r);
}
