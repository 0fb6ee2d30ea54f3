/* dtcast: the command-line tool. main() finds the subcommand in a table and hands it argv. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

typedef struct subcommand {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} subcommand;

static const subcommand subcommands[] = {
    {"cast", cmd_cast, "convert a tensor file (.npy, .pb, raw) to another type"},
    {"compare", cmd_compare, "show a tensor's values converted to several types side by side"},
    {"info", cmd_info, "describe a type: range, encodings, aliases"},
    {"table", cmd_table, "list every code of a type of at most 8 bits with its value"},
    {"types", cmd_types, "list every type with its code, bits and aliases"},
    {"onnx-test", cmd_onnx_test, "run ONNX Cast/CastLike/Q/DQ node test directories"},
    {"onnx-run", cmd_onnx_run, "run a one-node ONNX model (Cast, Q/DQ) on .pb inputs"},
    {"promote", cmd_promote, "the common type of two types under a system's promotion rules"},
    {"convert-promote", cmd_convert_promote, "OpenVINO ConvertPromoteTypes on two tensor files"},
    {"quantize", cmd_quantize, "quantize a checkpoint's weights (fp8-block, mxfp4, nvfp4, ...)"},
    {"dequantize", cmd_dequantize, "dequantize a quantized checkpoint into a plain one"},
    {"convert-layout", cmd_convert_layout, "a quantized checkpoint into another layout, exactly"},
    {"inspect", cmd_inspect, "list a tensor file's or checkpoint's tensors from its headers"},
    {"diff", cmd_diff, "compare two tensor files or checkpoints tensor by tensor"},
};

#define NSUBCOMMANDS (sizeof subcommands / sizeof subcommands[0])

static void print_help(void)
{
    printf("usage: dtcast <command> [options] [args]\n"
           "\n"
           "Converts tensors between ML data types bit-exactly, as ONNX, PyPTO and others\n"
           "define the conversions.\n"
           "\n"
           "Commands:\n");
    for (size_t i = 0; i < NSUBCOMMANDS; i++)
        printf("  %-16s %s\n", subcommands[i].name, subcommands[i].summary);
    printf("  %-16s %s\n", "help", "show the help of a command (dtcast help cast)");
    printf("  %-16s %s\n", "version", "show the version (as --version)");
    printf("\n"
           "Options:\n"
           "  -h, --help      show this help\n"
           "  -V, --version   show the version\n"
           "\n"
           "Examples:\n"
           "  dtcast cast --to float8e4m3fn weights.npy weights_f8.npy\n"
           "  dtcast cast --profile onnx:21 --to int4 input.pb output.pb\n"
           "  dtcast compare weights.npy --to float8e4m3fn,float8e5m2,float4e2m1,bf16\n"
           "  dtcast info float8e4m3fn\n"
           "  dtcast table float4e2m1\n"
           "  dtcast onnx-test onnx/node\n"
           "  dtcast promote --rules torch int32 py:float\n"
           "  dtcast dequantize DeepSeek-V3/ DeepSeek-V3-bf16/\n"
           "  dtcast inspect model.safetensors.index.json\n"
           "  dtcast diff model-f32.safetensors model-bf16.safetensors\n"
           "\n"
           "Run 'dtcast <command> --help' for the options of a command.\n");
}

static const subcommand *find_subcommand(const char *name)
{
    for (size_t i = 0; i < NSUBCOMMANDS; i++)
        if (strcmp(subcommands[i].name, name) == 0)
            return &subcommands[i];
    return NULL;
}

/* "unknown command 'cats' (did you mean 'cast'?)"; options as main() takes them. */
static int unknown_command(const char *name)
{
    static const char *const options[] = {"--help", "--version"};
    cli_suggest s;
    char hint[256];
    cli_suggest_init(&s, name);
    if (name[0] == '-') {
        for (size_t i = 0; i < sizeof options / sizeof options[0]; i++)
            cli_suggest_add(&s, options[i], NULL);
        return cli_usage(NULL, "unknown option '%s'%s", name,
                         cli_suggest_hint(&s, hint, sizeof hint));
    }
    for (size_t i = 0; i < NSUBCOMMANDS; i++)
        cli_suggest_add(&s, subcommands[i].name, NULL);
    cli_suggest_add(&s, "help", NULL);
    cli_suggest_add(&s, "version", NULL);
    return cli_usage(NULL, "unknown command '%s'%s", name,
                     cli_suggest_hint(&s, hint, sizeof hint));
}

static int is_help_flag(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

/* "dtcast help [COMMAND]": the command's own --help, the same text as 'dtcast COMMAND --help'. */
static int run_help(int argc, char **argv)
{
    if (argc < 3 || is_help_flag(argv[2]) || strcmp(argv[2], "help") == 0) {
        print_help();
        return CLI_OK;
    }
    if (argc > 3)
        return cli_usage(NULL, "help takes one command (got '%s' after '%s')", argv[3], argv[2]);
    const subcommand *c = find_subcommand(argv[2]);
    if (!c)
        return unknown_command(argv[2]);
    char help_flag[] = "--help";
    char *args[] = {argv[2], help_flag, NULL};
    return c->run(2, args);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage(NULL, "missing command");
    const char *first = argv[1];
    if (is_help_flag(first)) {
        print_help();
        return CLI_OK;
    }
    if (strcmp(first, "-V") == 0 || strcmp(first, "--version") == 0 ||
        strcmp(first, "version") == 0) {
        /* The library's version (the CLI links it statically: the header's is the library's). */
        printf("dtcast %d.%d.%d\n", DTCAST_VERSION_MAJOR, DTCAST_VERSION_MINOR,
               DTCAST_VERSION_PATCH);
        return CLI_OK;
    }
    if (strcmp(first, "help") == 0)
        return run_help(argc, argv);
    const subcommand *c = find_subcommand(first);
    if (!c)
        return unknown_command(first);
    int status = c->run(argc - 1, argv + 1);
    if (fflush(stdout) != 0 && status == CLI_OK)
        return cli_fail("cannot write to stdout");
    return status;
}
