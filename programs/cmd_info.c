/* dtcast info TYPE, dtcast table TYPE, dtcast types: what the types are. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- aliases -------------------------------------------------------------------------------- */

/* Spellings users write; each is shown for the type dtcast_type_from_name() maps it to, so the
 * list can never claim an alias the library does not accept. */
static const char *const alias_candidates[] = {
    "float", "f32", "fp32", "single", "float_", "half", "f16", "fp16", "double", "f64", "fp64",
    "bf16", "bfloat", "i8", "s8", "u8", "byte", "ubyte", "char", "i16", "s16", "short", "u16",
    "ushort", "i32", "s32", "int", "u32", "uint", "i64", "s64", "long", "u64", "ulong", "b8",
    "bool_", "boolean", "str", "text", "c32", "c64", "c128", "complex", "cfloat", "cdouble",
    "chalf", "complex_half", "complex_float", "complex_double", "f8e4m3fn", "fp8_e4m3fn",
    "fp8e4m3fn", "float8_e4m3fn", "e4m3fn", "fp8_e4m3", "fp8e4m3", "e4m3", "f8e4m3fnuz",
    "fp8_e4m3fnuz", "float8_e4m3fnuz", "e4m3fnuz", "f8e5m2", "fp8_e5m2", "fp8e5m2",
    "float8_e5m2", "e5m2", "f8e5m2fnuz", "fp8_e5m2fnuz", "float8_e5m2fnuz", "e5m2fnuz", "u4", "i4",
    "s4", "f4e2m1", "fp4", "fp4_e2m1", "float4_e2m1fn", "float4e2m1fn", "e2m1", "f8e8m0",
    "fp8_e8m0", "float8_e8m0fnu", "float8e8m0fnu", "e8m0", "e8m0fnu", "u2", "i2", "s2", "u1",
    "bit", "f8e4m3", "float8_e4m3", "f8e3m4", "fp8_e3m4", "float8_e3m4", "e3m4",
    "f8e4m3b11fnuz", "float8_e4m3b11fnuz", "float8_e4m3b11", "e4m3b11", "f6e2m3fn",
    "fp6_e2m3", "float6_e2m3fn", "e2m3", "f6e3m2fn", "fp6_e3m2", "float6_e3m2fn", "e3m2",
    "f8e5m3fnu", "float8_e5m3fnu", "e5m3fnu", "i1", "s1", "bc32", NULL,
};

static void append(char *buf, size_t size, const char *text)
{
    size_t used = strlen(buf);
    if (used + 1 < size)
        snprintf(buf + used, size - used, "%s%s", used ? ", " : "", text);
}

void cli_type_aliases(dtcast_type type, char *buf, size_t size)
{
    const char *name = dtcast_type_name(type);
    const char *onnx = dtcast_type_onnx_name(type);
    buf[0] = 0;
    if (onnx)
        append(buf, size, onnx);
    for (int i = 0; alias_candidates[i]; i++) {
        const char *c = alias_candidates[i];
        dtcast_type t;
        if ((name && strcasecmp(c, name) == 0) || (onnx && strcasecmp(c, onnx) == 0))
            continue;
        if (dtcast_type_from_name(c, &t, NULL) == DTCAST_OK && t == type)
            append(buf, size, c);
    }
}

/* ---- numbers -------------------------------------------------------------------------------- */

/* The shortest %g text that reads back as the same double. */
static void format_double(char *buf, size_t size, double v)
{
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

/* The encoding of v in type (rounded to nearest even), as hex text. */
static void encode_double(char *buf, size_t size, dtcast_type type, double v)
{
    uint8_t out[16] = {0};
    uint64_t code[2];
    dtcast_options opts;
    dtcast_options_init(&opts);
    opts.round = DTCAST_ROUND_RNE;
    if (dtcast_convert(out, type, &v, DTCAST_FLOAT64, 1, &opts, NULL) != DTCAST_OK) {
        snprintf(buf, size, "?");
        return;
    }
    cli_element_code(out, type, 0, code);
    cli_format_code(buf, size, type, code);
}

/* ---- info ----------------------------------------------------------------------------------- */

static const char *kind_name(dtcast_kind kind)
{
    switch (kind) {
    case DTCAST_KIND_BOOL:
        return "bool";
    case DTCAST_KIND_UNSIGNED:
        return "unsigned integer";
    case DTCAST_KIND_SIGNED:
        return "signed integer";
    case DTCAST_KIND_FLOAT:
        return "float";
    case DTCAST_KIND_COMPLEX:
        return "complex";
    case DTCAST_KIND_STRING:
        return "string";
    }
    return "?";
}


static void print_value_row(const char *label, dtcast_type part, double v)
{
    char num[40], code[48];
    format_double(num, sizeof num, v);
    encode_double(code, sizeof code, part, v);
    printf("  %-15s%-26s %s\n", label, num, code);
}

static void print_float_info(const dtcast_info *info)
{
    dtcast_type part = dt_part_type(info);
    char code[48], pname[32];
    if (info->kind == DTCAST_KIND_COMPLEX)
        printf("  %-15s(real, imaginary), each %s\n", "parts", cli_type_label(part, pname,
                                                                               sizeof pname));
    printf("  %-15s%d exponent, %d mantissa bits, bias %d%s\n", "layout", info->exponent_bits,
           info->mantissa_bits, info->bias, info->has_negative_zero || info->lowest < 0
                                                ? ", sign bit"
                                                : ", unsigned");
    print_value_row("max", part, info->max);
    print_value_row("lowest", part, info->lowest);
    print_value_row("min normal", part, info->min_normal);
    print_value_row("min subnormal", part, info->min_subnormal);
    char num[40];
    format_double(num, sizeof num, info->epsilon);
    printf("  %-15s%s\n", "epsilon", num);
    uint64_t c[2] = {info->inf_bits, 0};
    cli_format_code(code, sizeof code, part, c);
    printf("  %-15s%s\n", "infinity", info->has_inf ? code : "none");
    c[0] = info->nan_bits;
    cli_format_code(code, sizeof code, part, c);
    if (info->has_nan)
        printf("  %-15s%s (%d encoding%s)\n", "nan", code, info->nan_count,
               info->nan_count == 1 ? "" : "s");
    else
        printf("  %-15snone\n", "nan");
    encode_double(code, sizeof code, part, -0.0);
    printf("  %-15s%s\n", "negative zero", info->has_negative_zero ? code : "none");
}

static void print_integer_info(const dtcast_info *info)
{
    char lo[48], hi[48];
    uint64_t c[2] = {0, 0};
    int bits = cli_element_stride_bits(info->type);
    uint64_t mask = bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
    c[0] = (uint64_t)info->int_min & mask;
    cli_format_code(lo, sizeof lo, info->type, c);
    c[0] = info->int_max & mask;
    cli_format_code(hi, sizeof hi, info->type, c);
    char num[32];
    snprintf(num, sizeof num, "%lld", (long long)info->int_min);
    printf("  %-15s%-26s %s\n", "min", num, lo);
    snprintf(num, sizeof num, "%llu", (unsigned long long)info->int_max);
    printf("  %-15s%-26s %s\n", "max", num, hi);
}

/* "opset 19 and later" or "never". */
static void print_onnx_support(dtcast_type type)
{
    for (int opset = 1; opset <= DTCAST_ONNX_OPSET_MAX; opset++)
        if (dtcast_onnx_opset_allows(opset, type)) {
            printf("  %-15sopset %d and later\n", "onnx cast", opset);
            return;
        }
    printf("  %-15snot allowed\n", "onnx cast");
}

static void print_pypto_support(dtcast_type type)
{
    dtcast_type types[128];
    size_t n = dtcast_type_list(types, 128);
    char to[512] = "", from[512] = "";
    for (size_t i = 0; i < n && i < 128; i++) {
        dtcast_options o;
        const char *name = dtcast_type_name(types[i]);
        if (!name || types[i] == type)
            continue;
        if (dtcast_pypto_options(&o, types[i], type, DTCAST_CAST_NONE, NULL, NULL) == DTCAST_OK)
            append(to, sizeof to, name);
        if (dtcast_pypto_options(&o, type, types[i], DTCAST_CAST_NONE, NULL, NULL) == DTCAST_OK)
            append(from, sizeof from, name);
    }
    printf("  %-15s%s\n", "pypto cast to", to[0] ? to : "-");
    printf("  %-15s%s\n", "pypto from", from[0] ? from : "-");
}

static int print_info(dtcast_type type)
{
    dtcast_info info;
    char aliases[512];
    if (dtcast_type_info(type, &info, NULL) != DTCAST_OK)
        return cli_fail("no information on type %d", (int)type);
    const char *onnx = dtcast_type_onnx_name(type);
    if (onnx)
        printf("%s  (ONNX %s = %d)\n", info.name, onnx, (int)type);
    else
        printf("%s  (dtcast code %d; not an ONNX type)\n", info.name, (int)type);
    cli_type_aliases(type, aliases, sizeof aliases);
    printf("  %-15s%s\n", "aliases", aliases[0] ? aliases : "-");
    if (type == DTCAST_STRING)
        printf("  %-15s%s\n", "kind", "string (variable length; one char * per element)");
    else
        printf("  %-15s%s, %d bit%s\n", "kind", kind_name(info.kind), info.bits,
               info.bits == 1 ? "" : "s");
    if (info.kind == DTCAST_KIND_FLOAT || info.kind == DTCAST_KIND_COMPLEX)
        print_float_info(&info);
    else if (info.kind != DTCAST_KIND_STRING)
        print_integer_info(&info);
    print_onnx_support(type);
    print_pypto_support(type);
    return CLI_OK;
}

static const char info_help[] =
    "usage: dtcast info TYPE...\n"
    "\n"
    "Describes a type: its ONNX name and code, aliases, layout, range (max, lowest, smallest\n"
    "normal and subnormal, epsilon, with their encodings), Inf, NaN and -0 encodings, the ONNX\n"
    "opsets whose Cast accepts it and the pypto.cast pairs it is part of.\n"
    "\n"
    "  -h, --help   show this help\n"
    "\n"
    "Examples:\n"
    "  dtcast info float8e4m3fn\n"
    "  dtcast info bf16 FLOAT4E2M1 17\n";

static const cli_option help_only_options[] = {
    {"help", 'h', 0, CLI_OPT_HELP},
    {NULL, 0, 0, 0},
};

/* Collects TYPE arguments; returns -1 after --help. */
static int parse_type_args(const char *cmd, const char *help, int argc, char **argv,
                           dtcast_type *types, int max, int *n)
{
    cli_args a;
    cli_args_init(&a, cmd, argc, argv, help_only_options);
    *n = 0;
    for (;;) {
        int id = cli_args_next(&a);
        if (id == CLI_ARG_END)
            break;
        if (id == CLI_ARG_ERROR)
            return CLI_USAGE;
        if (id == CLI_OPT_HELP) {
            fputs(help, stdout);
            return -1;
        }
        if (*n == max)
            return cli_usage(cmd, "too many types (at most %d)", max);
        if (cli_parse_type(cmd, NULL, a.value, &types[*n]) != CLI_OK)
            return CLI_USAGE;
        (*n)++;
    }
    if (*n == 0)
        return cli_usage(cmd, "missing TYPE");
    return CLI_OK;
}

int cmd_info(int argc, char **argv)
{
    dtcast_type types[64];
    int n;
    int status = parse_type_args("info", info_help, argc, argv, types, 64, &n);
    if (status != CLI_OK)
        return status < 0 ? CLI_OK : status;
    for (int i = 0; i < n && status == CLI_OK; i++) {
        if (i)
            printf("\n");
        status = print_info(types[i]);
    }
    return status;
}

/* ---- table ---------------------------------------------------------------------------------- */

static const char *float_class(double v, const dtcast_info *info)
{
    if (isnan(v))
        return "nan";
    if (isinf(v))
        return v < 0 ? "-inf" : "+inf";
    if (v == 0)
        return signbit(v) ? "-zero" : "zero";
    double m = fabs(v);
    if (m == info->max)
        return v < 0 ? "-max" : "max";
    if (m < info->min_normal)
        return "subnormal";
    return "normal";
}

static void print_table_row(dtcast_type type, int bits, uint64_t code, const dtcast_info *info,
                            dtcast_string_style style)
{
    uint8_t buf[16];
    uint64_t c[2] = {code, 0};
    char hex[24], bin[40], value[DTCAST_FORMAT_MAX];
    cli_element_store(buf, type, c);
    cli_format_code(hex, sizeof hex, type, c);
    cli_format_binary(bin, sizeof bin, bits, c);
    dt_tensor t;
    dt_tensor_init(&t);
    t.type = type;
    t.data = buf;
    cli_format_value(value, sizeof value, &t, 0, style);
    if (info->kind != DTCAST_KIND_FLOAT) {
        printf("%-6s %-10s %s\n", hex, bin, value);
        return;
    }
    double v = 0;
    dtcast_options opts;
    dtcast_options_init(&opts);
    if (dtcast_convert(&v, DTCAST_FLOAT64, buf, type, 1, &opts, NULL) != DTCAST_OK)
        v = NAN;
    printf("%-6s %-10s %-16s %s\n", hex, bin, value, float_class(v, info));
}

static const char table_help[] =
    "usage: dtcast table [--string-style python|ort] TYPE\n"
    "\n"
    "Lists every code of a type of at most 8 bits: the code in hex and binary, its value, and\n"
    "for floats its class (zero, subnormal, normal, max, inf, nan).\n"
    "\n"
    "      --string-style S   value text: python (default: 0.5, nan) | ort (%.8g: 0.5, NaN)\n"
    "  -h, --help             show this help\n"
    "\n"
    "Examples:\n"
    "  dtcast table float4e2m1\n"
    "  dtcast table float8e4m3fn | grep subnormal\n";

static const cli_option table_options[] = {
    {"help", 'h', 0, CLI_OPT_HELP},
    {"string-style", 0, 1, CLI_OPT_STRING_STYLE},
    {NULL, 0, 0, 0},
};

static int parse_table_args(int argc, char **argv, dtcast_type *type, dtcast_string_style *style)
{
    static const char *const styles[] = {"python", "ort", NULL};
    const char *name = NULL;
    cli_args a;
    cli_args_init(&a, "table", argc, argv, table_options);
    for (;;) {
        int id = cli_args_next(&a), i;
        if (id == CLI_ARG_END)
            break;
        if (id == CLI_ARG_ERROR)
            return CLI_USAGE;
        if (id == CLI_OPT_HELP) {
            fputs(table_help, stdout);
            return -1;
        }
        if (id == CLI_OPT_STRING_STYLE) {
            if (cli_parse_choice("table", a.spelled, a.value, styles, &i) != CLI_OK)
                return CLI_USAGE;
            *style = i ? DTCAST_STRING_ORT : DTCAST_STRING_PYTHON;
        } else if (name) {
            return cli_usage("table", "unexpected argument '%s' (one TYPE)", a.value);
        } else {
            name = a.value;
        }
    }
    if (!name)
        return cli_usage("table", "missing TYPE");
    return cli_parse_type("table", NULL, name, type);
}

int cmd_table(int argc, char **argv)
{
    dtcast_type type;
    dtcast_string_style style = DTCAST_STRING_PYTHON;
    int status = parse_table_args(argc, argv, &type, &style);
    if (status != CLI_OK)
        return status < 0 ? CLI_OK : status;
    dtcast_info info;
    int stride = cli_element_stride_bits(type);
    char name[32];
    cli_type_label(type, name, sizeof name);
    if (dtcast_type_info(type, &info, NULL) != DTCAST_OK || stride <= 0)
        return cli_usage("table", "%s is not a fixed-width type: a table lists the codes of "
                                  "types of at most 8 bits", name);
    if (stride > 8)
        return cli_usage("table", "%s has %d bits: a table lists the codes of types of at most "
                                  "8 bits", name, stride);
    /* bool: only 0 and 1 are codes (a byte that holds either). */
    int bits = info.kind == DTCAST_KIND_BOOL ? 1 : (info.bits < stride ? info.bits : stride);
    uint64_t codes = (uint64_t)1 << bits;
    printf("# %s: %llu codes\n", info.name, (unsigned long long)codes);
    if (info.kind == DTCAST_KIND_FLOAT)
        printf("%-6s %-10s %-16s %s\n", "code", "binary", "value", "class");
    else
        printf("%-6s %-10s %s\n", "code", "binary", "value");
    for (uint64_t c = 0; c < codes; c++)
        print_table_row(type, bits, c, &info, style);
    return CLI_OK;
}

/* ---- types ---------------------------------------------------------------------------------- */

static const char types_help[] =
    "usage: dtcast types\n"
    "\n"
    "Lists every type: its code (the ONNX TensorProto.DataType where ONNX has the type), bits,\n"
    "canonical name, ONNX name and the other names dtcast accepts for it. Names are\n"
    "case-insensitive everywhere; the code works too.\n"
    "\n"
    "  -h, --help   show this help\n";

int cmd_types(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, "types", argc, argv, help_only_options);
    for (;;) {
        int id = cli_args_next(&a);
        if (id == CLI_ARG_END)
            break;
        if (id == CLI_ARG_ERROR)
            return CLI_USAGE;
        if (id == CLI_OPT_HELP) {
            fputs(types_help, stdout);
            return CLI_OK;
        }
        return cli_usage("types", "unexpected argument '%s'", a.value);
    }
    dtcast_type types[128];
    size_t n = dtcast_type_list(types, 128);
    printf("%4s  %4s  %-18s %-16s %s\n", "code", "bits", "name", "onnx", "aliases");
    for (size_t i = 0; i < n && i < 128; i++) {
        char aliases[512], bits[8];
        const char *onnx = dtcast_type_onnx_name(types[i]);
        int b = dtcast_type_bits(types[i]);
        cli_type_aliases(types[i], aliases, sizeof aliases);
        /* The ONNX name has its own column. */
        const char *rest = aliases;
        if (onnx && strncmp(rest, onnx, strlen(onnx)) == 0) {
            rest += strlen(onnx);
            rest += strspn(rest, ", ");
        }
        snprintf(bits, sizeof bits, "%d", b);
        printf("%4d  %4s  %-18s %-16s %s\n", (int)types[i], b ? bits : "-",
               dtcast_type_name(types[i]), onnx ? onnx : "-", rest);
    }
    return CLI_OK;
}
