/* dtcast cast ... OUT.gguf: the command line of the GGUF writer job (files/gguf_job.h): its
 * options, its error printed. cmd_cast.c hands over when OUT ends in .gguf. */
#include "cli.h"
#include "files/gguf_job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_QUIET = CLI_OPT_COMMAND, OPT_TENSOR_TYPE, OPT_ARCH, OPT_KV, OPT_REQUANTIZE,
       OPT_GTO };

static const cli_option options[] = {
    {"help", 'h', 0, CLI_OPT_HELP},
    {"to", 't', 1, OPT_GTO},
    {"tensor-type", 0, 1, OPT_TENSOR_TYPE},
    {"arch", 0, 1, OPT_ARCH},
    {"kv", 0, 1, OPT_KV},
    {"requantize", 0, 0, OPT_REQUANTIZE},
    {"quiet", 'q', 0, OPT_QUIET},
    {"threads", 'T', 1, CLI_OPT_THREADS},
    {NULL, 0, 0, 0},
};

static const char help[] =
    "usage: dtcast cast --to TYPE [options] IN OUT.gguf\n"
    "\n"
    "Writes the tensors of IN (a .safetensors file, a sharded checkpoint's index or folder, a\n"
    ".npy, or a GGUF model) as a GGUF file, streamed. TYPE is a ggml type: q8_0, q4_0, q4_1,\n"
    "q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, tq1_0, tq2_0, mxfp4, nvfp4, q1_0, q2_0, bf16,\n"
    "f16, f32 (any case); the bytes are ggml's reference quantizer's. Per tensor, in order:\n"
    "  1. the first --tensor-type GLOB=TYPE whose GLOB matches its name;\n"
    "  2. a GGUF tensor already in a block type is copied (unless --requantize);\n"
    "  3. a tensor of at most one dimension, or named *norm.weight, is F32 (a GGUF\n"
    "     tensor's: copied);\n"
    "  4. TYPE.\n"
    "Rows that are not whole blocks fall back as llama-quantize does (Q2_K, Q3_K, TQ1_0, TQ2_0,\n"
    "Q1_0, Q2_0 -> Q4_0; Q4_K -> Q5_0; Q5_K -> Q5_1; Q6_K -> Q8_0; then F16), with a warning.\n"
    "Integer tensors become I8..I64; other types are refused. Names and numpy shapes are kept\n"
    "(GGUF stores the dims reversed). Metadata: general.architecture, a GGUF source's pairs, the\n"
    "--kv pairs, general.quantization_version.\n"
    "\n"
    "Options:\n"
    "  -t, --to TYPE             the ggml type of the tensors no rule names\n"
    "      --tensor-type G=TYPE  tensors whose name matches the glob G get TYPE (repeatable,\n"
    "                            the first match wins; TYPE may be f32 to keep one in float)\n"
    "      --arch NAME           general.architecture (default: the GGUF source's, else\n"
    "                            'unknown')\n"
    "      --kv KEY=VALUE        a metadata pair (repeatable): a string, or KEY:T=VALUE with T\n"
    "                            one of u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool str\n"
    "      --requantize          GGUF block tensors are quantized again to their rule's type\n"
    "  -T, --threads N           threads (default: one per CPU)\n"
    "  -q, --quiet               no progress line\n"
    "  -h, --help                show this help\n"
    "\n"
    "Examples:\n"
    "  dtcast cast --to q8_0 model.safetensors model-q8_0.gguf\n"
    "  dtcast cast --to q4_k --tensor-type '*attn_v*=q6_k' --arch flux flux.safetensors f.gguf\n"
    "  dtcast cast --to q4_k --requantize model-f16.gguf model-q4_k.gguf\n";

static int parse_ggml(const char *cmd, const char *opt, const char *text, int *code)
{
    static const struct {
        const char *name;
        int code;
    } alias[] = {{"float32", 0}, {"float16", 1}, {"bfloat16", 30}};
    for (size_t i = 0; i < sizeof alias / sizeof *alias; i++)
        if (strcmp(text, alias[i].name) == 0) {
            *code = alias[i].code;
            return CLI_OK;
        }
    const int c = dtcast_ggml_type_from_name(text);
    if (c < 0)
        return cli_usage(cmd, "%s %s: not a ggml type (q8_0, q4_k, bf16, ...)", opt, text);
    if (!(dtcast_ggml_support(c) & 1))
        return cli_usage(cmd, "%s %s: dtcast does not write %s", opt, text,
                         dtcast_ggml_type_name(c));
    *code = c;
    return CLI_OK;
}

static int parse_kv(const char *cmd, char *text, dt_gguf_kv_arg *kv)
{
    static const struct {
        const char *name;
        uint32_t type;
    } types[] = {{"u8", DT_GGUF_UINT8},   {"i8", DT_GGUF_INT8},     {"u16", DT_GGUF_UINT16},
                 {"i16", DT_GGUF_INT16},  {"u32", DT_GGUF_UINT32},  {"i32", DT_GGUF_INT32},
                 {"u64", DT_GGUF_UINT64}, {"i64", DT_GGUF_INT64},   {"f32", DT_GGUF_FLOAT32},
                 {"f64", DT_GGUF_FLOAT64}, {"bool", DT_GGUF_BOOL},  {"str", DT_GGUF_STRING}};
    char *eq = strchr(text, '=');
    if (!eq || eq == text)
        return cli_usage(cmd, "--kv %s: give KEY=VALUE", text);
    *eq = '\0';
    kv->text = eq + 1;
    kv->type = DT_GGUF_STRING;
    char *colon = strrchr(text, ':');
    if (colon) {
        *colon = '\0';
        size_t i = 0;
        while (i < sizeof types / sizeof *types && strcmp(types[i].name, colon + 1) != 0)
            i++;
        if (i == sizeof types / sizeof *types)
            return cli_usage(cmd, "--kv %s:%s: unknown value type '%s'", text, colon + 1,
                             colon + 1);
        kv->type = types[i].type;
    }
    kv->key = text;
    return *text ? CLI_OK : cli_usage(cmd, "--kv: an empty key");
}

int cmd_cast_gguf(int argc, char **argv)
{
    const char *cmd = "cast";
    dt_gguf_write_request r;
    memset(&r, 0, sizeof r);
    r.type = -1;
    int quiet = 0;
    dt_gguf_rule *rules = calloc((size_t)argc, sizeof *rules);
    dt_gguf_kv_arg *kvs = calloc((size_t)argc, sizeof *kvs);
    char **copies = calloc((size_t)argc, sizeof *copies);
    size_t ncopies = 0;
    int status = CLI_OK;
    if (!rules || !kvs || !copies)
        status = cli_fail("out of memory");
    cli_args a;
    cli_args_init(&a, cmd, argc, argv, options);
    unsigned long v;
    for (int id; status == CLI_OK && (id = cli_args_next_option(&a, help, &r.in, &r.out)) !=
                                         CLI_ARG_END;) {
        if (id < 0) { /* CLI_ARG_HELP, CLI_ARG_ERROR */
            status = id == CLI_ARG_HELP ? -1 : CLI_USAGE;
            break;
        }
        switch (id) {
        case OPT_GTO:
            status = parse_ggml(cmd, "--to", a.value, &r.type);
            break;
        case OPT_TENSOR_TYPE: {
            char *t = strdup(a.value);
            char *eq = t ? strrchr(t, '=') : NULL;
            if (!t) {
                status = cli_fail("out of memory");
                break;
            }
            copies[ncopies++] = t;
            if (!eq || eq == t) {
                status = cli_usage(cmd, "--tensor-type %s: give GLOB=TYPE", a.value);
                break;
            }
            *eq = '\0';
            rules[r.nrules].glob = t;
            status = parse_ggml(cmd, "--tensor-type", eq + 1, &rules[r.nrules].type);
            r.nrules++;
            break;
        }
        case OPT_ARCH:
            r.arch = a.value;
            break;
        case OPT_KV: {
            char *t = strdup(a.value);
            if (!t) {
                status = cli_fail("out of memory");
                break;
            }
            copies[ncopies++] = t;
            status = parse_kv(cmd, t, &kvs[r.nkv]);
            r.nkv++;
            break;
        }
        case OPT_REQUANTIZE:
            r.requantize = 1;
            break;
        case OPT_QUIET:
            quiet = 1;
            break;
        case CLI_OPT_THREADS:
            if (cli_parse_uint(cmd, "--threads", a.value, 4096, &v) != CLI_OK)
                status = CLI_USAGE;
            r.threads = (unsigned)v;
            break;
        default:
            status = cli_usage(cmd, "%s: not an option of a GGUF output (see --help)",
                               a.spelled);
        }
    }
    if (status == CLI_OK && cli_need_in_out(cmd, r.in, r.out) != CLI_OK)
        status = CLI_USAGE;
    if (status == CLI_OK && r.type < 0)
        status = cli_usage(cmd, "a GGUF output needs --to TYPE (q8_0, q4_k, bf16, ...)");
    if (status == CLI_OK) {
        r.rules = rules;
        r.kv = kvs;
        cli_progress_line line;
        cli_job_hooks(&r.hooks, &line, quiet);
        dt_io_error err = DT_IO_ERROR_INIT;
        status = cli_job_status(cmd, &line, dt_gguf_write(&r, &err), &err);
    }
    for (size_t i = 0; i < ncopies; i++)
        free(copies[i]);
    free(copies);
    free(rules);
    free(kvs);
    return status < 0 ? CLI_OK : status;
}
