/* dtcast promote: the common type of two operands under one system's promotion rules, or the
 * rule set's whole table. dtcast convert-promote: OpenVINO ConvertPromoteTypes-14 (or the aclnn
 * binary derivation) on two tensor files. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    OPT_RULES = CLI_OPT_COMMAND,
    OPT_UNSAFE,
    OPT_PYTORCH,
    OPT_U64_TARGET,
    OPT_X64,
    OPT_STRICT,
    OPT_TABLE,
    OPT_FORMAT
};

static const cli_option promote_options[] = {
    {"help", 'h', 0, CLI_OPT_HELP},
    {"rules", 'r', 1, OPT_RULES},
    {"promote-unsafe", 0, 0, OPT_UNSAFE},
    {"pytorch-scalar-promotion", 0, 0, OPT_PYTORCH},
    {"u64-target", 0, 1, OPT_U64_TARGET},
    {"x64", 0, 1, OPT_X64},
    {"strict", 0, 0, OPT_STRICT},
    {"table", 0, 0, OPT_TABLE},
    {"format", 0, 1, OPT_FORMAT},
    {NULL, 0, 0, 0},
};

static const char promote_help[] =
    "usage: dtcast promote --rules R [attributes] A B\n"
    "       dtcast promote --rules R [attributes] --table [--format grid|csv]\n"
    "\n"
    "Prints the common type of A and B under a system's type promotion rules, or the error\n"
    "message of the system (on stderr, exit status 1). With --table, prints the rule set's whole\n"
    "matrix: rows x columns, tensors of rank >= 1 and the Python scalars the rules know.\n"
    "\n"
    "Operands:\n"
    "  TYPE                   a tensor of rank >= 1: float16, bf16, int8, ...\n"
    "  TYPE@0                 a 0-dim (scalar) tensor; TYPE@N a tensor of rank N\n"
    "  TYPE@?                 a tensor of unknown rank (openvino)\n"
    "  dynamic                OpenVINO's dynamic element type (openvino)\n"
    "  py:bool, py:int, py:float, py:complex\n"
    "                         Python scalars (torch, numpy, numpy+ml_dtypes, jax): the weak types\n"
    "\n"
    "Rules:\n"
    "  -r, --rules R          openvino   OpenVINO ConvertPromoteTypes-14\n"
    "                         aclnn      Ascend aclnn type derivation (0-dim tensors too)\n"
    "                         torch      torch.promote_types / torch.result_type\n"
    "                         numpy      np.promote_types / np.result_type under NEP 50\n"
    "                         jax        jax.numpy.result_type\n"
    "                         numpy+ml_dtypes\n"
    "                                    numpy 2 with ml_dtypes 0.7's types (bfloat16, float8, int4...)\n"
    "\n"
    "Attributes (openvino):\n"
    "      --promote-unsafe   allow promotions that widen or lose range (default: refuse)\n"
    "      --pytorch-scalar-promotion\n"
    "                         a 0-dim input of the same category takes the other input's type\n"
    "      --u64-target TYPE  u64_integer_promotion_target: uint64 with a signed integer\n"
    "                         (default float32)\n"
    "Attributes (jax):\n"
    "      --x64 0|1          jax_enable_x64 (default 0, as JAX: 64-bit results become 32-bit)\n"
    "      --strict           jax_numpy_dtype_promotion='strict'\n"
    "\n"
    "Table:\n"
    "      --table            the matrix of the rule set (with the attributes given)\n"
    "      --format F         grid (default: aligned, short names) | csv (canonical names,\n"
    "                         \"error\" where there is no common type)\n"
    "  -h, --help             show this help\n"
    "\n"
    "Examples:\n"
    "  dtcast promote --rules openvino i8 f32                        # float32\n"
    "  dtcast promote --rules openvino --promote-unsafe i8 u8        # int16\n"
    "  dtcast promote --rules openvino --pytorch-scalar-promotion --promote-unsafe int64@0 uint8\n"
    "  dtcast promote --rules torch int32 py:float                   # float32\n"
    "  dtcast promote --rules numpy int8 py:int                      # int8 (NEP 50)\n"
    "  dtcast promote --rules jax --x64 1 uint64 int8                # float64\n"
    "  dtcast promote --rules jax --table\n";

static const char convert_promote_help[] =
    "usage: dtcast convert-promote [--rules openvino|aclnn] [attributes] IN0 IN1 OUT0 OUT1\n"
    "\n"
    "OpenVINO ConvertPromoteTypes-14 on two tensor files: the common type of IN0 and IN1 (their\n"
    "element types and ranks) under the openvino rules, then IN0 converted to it into OUT0 and IN1\n"
    "into OUT1, each keeping its shape. --rules aclnn does the same with the aclnn derivation of a\n"
    "binary operator (aclnnAdd, aclnnMul). Files are .npy or ONNX TensorProto .pb; the output\n"
    "format follows the name. A refused promotion prints the system's message and writes nothing.\n"
    "\n"
    "  -r, --rules R          openvino (default) | aclnn\n"
    "      --promote-unsafe   openvino promote_unsafe\n"
    "      --pytorch-scalar-promotion\n"
    "                         openvino pytorch_scalar_promotion\n"
    "      --u64-target TYPE  openvino u64_integer_promotion_target (default float32)\n"
    "  -h, --help             show this help\n"
    "\n"
    "Example:\n"
    "  dtcast convert-promote --promote-unsafe a.npy b.npy a_out.npy b_out.npy\n";

/* ---- the command line ----------------------------------------------------------------------- */

typedef struct promote_request {
    const char *cmd;
    int rules_given;
    dtcast_promote_rules rules;
    dtcast_promote_attrs attrs;
    char openvino_flag[24]; /* an openvino attribute as spelled, if given */
    char jax_flag[24];      /* a jax attribute as spelled, if given */
    char rules_flag[24];    /* --rules as spelled */
    int table;
    int csv;
    int npositional;
    const char *positional[4];
} promote_request;

/* The attribute flags both commands share; returns -1 when id is not one of them. */
static int attribute_option(promote_request *r, const cli_args *a, int id)
{
    /* a->spelled lasts until the next option: the request keeps copies. */
    switch (id) {
    case OPT_RULES: {
        snprintf(r->rules_flag, sizeof r->rules_flag, "%s", a->spelled);
        if (dtcast_promote_rules_from_name(a->value, &r->rules, NULL) == DTCAST_OK) {
            r->rules_given = 1;
            return CLI_OK;
        }
        /* The library's names of its rule sets. */
        cli_suggest sg;
        const char *name;
        char hint[256];
        cli_suggest_init(&sg, a->value);
        for (int i = 0; (name = dtcast_promote_rules_name((dtcast_promote_rules)i)) != NULL; i++)
            cli_suggest_add(&sg, name, NULL);
        if (cli_suggest_hint(&sg, hint, sizeof hint)[0])
            return cli_usage(r->cmd, "%s: unknown rule set '%s'%s", a->spelled, a->value, hint);
        return cli_usage(r->cmd,
                         "%s: unknown rule set '%s' (one of: openvino, aclnn, torch, numpy, jax, "
                         "numpy+ml_dtypes)",
                         a->spelled, a->value);
    }
    case OPT_UNSAFE:
        r->attrs.promote_unsafe = 1;
        snprintf(r->openvino_flag, sizeof r->openvino_flag, "%s", a->spelled);
        return CLI_OK;
    case OPT_PYTORCH:
        r->attrs.pytorch_scalar_promotion = 1;
        snprintf(r->openvino_flag, sizeof r->openvino_flag, "%s", a->spelled);
        return CLI_OK;
    case OPT_U64_TARGET:
        snprintf(r->openvino_flag, sizeof r->openvino_flag, "%s", a->spelled);
        return cli_parse_type(r->cmd, a->spelled, a->value, &r->attrs.u64_target);
    case OPT_X64: {
        static const char *const choices[] = {"0", "1", "false", "true", "off", "on", NULL};
        int i;
        snprintf(r->jax_flag, sizeof r->jax_flag, "%s", a->spelled);
        if (cli_parse_choice(r->cmd, a->spelled, a->value, choices, &i) != CLI_OK)
            return CLI_USAGE;
        r->attrs.x64 = i % 2;
        return CLI_OK;
    }
    case OPT_STRICT:
        r->attrs.strict = 1;
        snprintf(r->jax_flag, sizeof r->jax_flag, "%s", a->spelled);
        return CLI_OK;
    default:
        return -1;
    }
}

/* Refuses attributes the chosen rules do not have. */
static int check_attributes(const promote_request *r)
{
    const char *name = dtcast_promote_rules_name(r->rules);
    const char *rules = r->rules_flag[0] ? r->rules_flag : "--rules";
    if (r->openvino_flag[0] && r->rules != DTCAST_RULES_OPENVINO)
        return cli_usage(r->cmd, "%s is an attribute of %s openvino, not %s", r->openvino_flag,
                         rules, name);
    if (r->jax_flag[0] && r->rules != DTCAST_RULES_JAX)
        return cli_usage(r->cmd, "%s is an attribute of %s jax, not %s", r->jax_flag, rules,
                         name);
    return CLI_OK;
}

/* Parses argv; returns -1 after --help, else an exit status. */
static int parse_args(promote_request *r, int argc, char **argv, const char *help, int max_pos)
{
    cli_args a;
    cli_args_init(&a, r->cmd, argc, argv, promote_options);
    int is_promote = strcmp(r->cmd, "promote") == 0;
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
        if (id == CLI_ARG_POSITIONAL) {
            if (r->npositional >= max_pos)
                return cli_usage(r->cmd, "unexpected argument '%s'", a.value);
            r->positional[r->npositional++] = a.value;
            continue;
        }
        if ((id == OPT_TABLE || id == OPT_FORMAT) && !is_promote)
            return cli_usage(r->cmd, "unknown option '%s'", a.spelled);
        if (id == OPT_TABLE) {
            r->table = 1;
            continue;
        }
        if (id == OPT_FORMAT) {
            static const char *const formats[] = {"grid", "csv", NULL};
            int i;
            if (cli_parse_choice(r->cmd, a.spelled, a.value, formats, &i) != CLI_OK)
                return CLI_USAGE;
            r->csv = i == 1;
            continue;
        }
        int status = attribute_option(r, &a, id);
        if (status != CLI_OK)
            return status < 0 ? cli_usage(r->cmd, "unknown option '%s'", a.spelled) : status;
    }
    return CLI_OK;
}

/* ---- names ---------------------------------------------------------------------------------- */

static const char *const scalar_names[] = {NULL, "py:bool", "py:int", "py:float", "py:complex"};
static const char *const scalar_short[] = {NULL, "b*", "i*", "f*", "c*"};

/* Canonical name of a result type ("dynamic" for OpenVINO's). */
static const char *type_label(dtcast_type t)
{
    const char *name = dtcast_type_name(t);
    return name ? name : t == DTCAST_TYPE_DYNAMIC ? "dynamic" : "?";
}

/* The grid's short spelling: u8, i64, f16, bf16, c64, e4m3fn (float8/6/4), b* i* f* c*. */
static void short_label(char *buf, size_t size, dtcast_type t)
{
    const char *name = type_label(t);
    static const struct {
        const char *prefix, *abbrev;
    } rules[] = {{"bfloat", "bf"}, {"float8e", "e"}, {"float6e", "e"}, {"float4e", "e"},
                 {"float", "f"},   {"uint", "u"},    {"int", "i"},     {"complex", "c"},
                 {"dynamic", "dyn"}};
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        size_t n = strlen(rules[i].prefix);
        if (strncmp(name, rules[i].prefix, n) == 0) {
            snprintf(buf, size, "%s%s", rules[i].abbrev, name + n);
            return;
        }
    }
    snprintf(buf, size, "%s", name);
}

static void operand_label(char *buf, size_t size, const dtcast_operand *op, int csv)
{
    if (op->scalar != DTCAST_SCALAR_NONE)
        snprintf(buf, size, "%s", (csv ? scalar_names : scalar_short)[op->scalar]);
    else if (csv)
        snprintf(buf, size, "%s", type_label(op->type));
    else
        short_label(buf, size, op->type);
}

/* ---- promote A B ---------------------------------------------------------------------------- */

static int parse_operand(const promote_request *r, const char *which, const char *text,
                         dtcast_operand *op)
{
    dtcast_status st = dtcast_operand_parse(text, op, NULL);
    if (st == DTCAST_OK)
        return CLI_OK;
    if (st == DTCAST_ERR_INVALID_ARGUMENT)
        return cli_usage(r->cmd, "%s: bad rank in '%s' (TYPE@0, TYPE@N or TYPE@?)", which, text);
    /* A close name: a Python scalar, dynamic, or a type (keeping the @RANK the user gave). */
    size_t head = strcspn(text, "@");
    char typed[64], hint[256];
    snprintf(typed, sizeof typed, "%.*s", (int)(head < 60 ? head : 60), text);
    cli_suggest sg;
    cli_suggest_init(&sg, typed);
    for (size_t i = 1; i < sizeof scalar_names / sizeof scalar_names[0]; i++)
        cli_suggest_add(&sg, scalar_names[i], NULL);
    cli_suggest_add(&sg, "dynamic", NULL);
    if (!cli_suggest_hint(&sg, hint, sizeof hint)[0]) {
        dtcast_type types[256];
        size_t n = dtcast_type_list(types, 256);
        for (size_t i = 0; i < n && i < 256; i++) {
            const char *name = dtcast_type_name(types[i]);
            char shown[64];
            if (!name)
                continue;
            snprintf(shown, sizeof shown, "%s%.20s", name, text + head);
            cli_suggest_add(&sg, name, shown);
        }
    }
    if (cli_suggest_hint(&sg, hint, sizeof hint)[0])
        return cli_usage(r->cmd, "%s: unknown type '%s'%s", which, text, hint);
    return cli_usage(r->cmd,
                     "%s: unknown type '%s' (a type, TYPE@RANK, dynamic, or py:bool, py:int, "
                     "py:float, py:complex)",
                     which, text);
}

static int promote_pair(const promote_request *r)
{
    dtcast_operand a, b;
    if (parse_operand(r, "A", r->positional[0], &a) != CLI_OK ||
        parse_operand(r, "B", r->positional[1], &b) != CLI_OK)
        return CLI_USAGE;
    dtcast_error error;
    memset(&error, 0, sizeof error);
    dtcast_type result;
    dtcast_status st = dtcast_promote(&result, r->rules, &a, &b, &r->attrs, &error);
    if (st != DTCAST_OK)
        return cli_fail("%s", error.message[0] ? error.message : dtcast_status_string(st));
    printf("%s\n", type_label(result));
    return CLI_OK;
}

/* ---- promote --table ------------------------------------------------------------------------ */

#define T(x) {DTCAST_##x, 1, DTCAST_SCALAR_NONE}
#define PY(x) {DTCAST_UNDEFINED, 0, DTCAST_SCALAR_##x}
#define END {DTCAST_UNDEFINED, 0, DTCAST_SCALAR_NONE}

/* Each rule set's domain, in the order of its table. */
static const dtcast_operand openvino_axis[] = {
    T(BOOL),  T(UINT1),  T(UINT4),   T(UINT8),   T(UINT16),       T(UINT32),     T(UINT64),
    T(INT4),  T(INT8),   T(INT16),   T(INT32),   T(INT64),        T(FLOAT8E4M3FN), T(FLOAT8E5M2),
    T(BFLOAT16), T(FLOAT16), T(FLOAT32), T(FLOAT64), END};
static const dtcast_operand aclnn_axis[] = {
    T(BOOL),    T(UINT8),    T(UINT16),   T(UINT32),    T(UINT64),    T(INT8),
    T(INT16),   T(INT32),    T(INT64),    T(FLOAT16),   T(BFLOAT16),  T(FLOAT32),
    T(FLOAT64), T(COMPLEX32), T(COMPLEX64), T(COMPLEX128), END};
static const dtcast_operand torch_axis[] = {
    T(BOOL),          T(UINT8),       T(UINT16),         T(UINT32),         T(UINT64),
    T(INT8),          T(INT16),       T(INT32),          T(INT64),          T(FLOAT8E4M3FN),
    T(FLOAT8E5M2),    T(FLOAT8E4M3FNUZ), T(FLOAT8E5M2FNUZ), T(FLOAT8E8M0),    T(FLOAT16),
    T(BFLOAT16),      T(FLOAT32),     T(FLOAT64),        T(COMPLEX32),      T(COMPLEX64),
    T(COMPLEX128),    PY(BOOL),       PY(INT),           PY(FLOAT),         PY(COMPLEX),
    END};
static const dtcast_operand numpy_axis[] = {
    T(BOOL),    T(UINT8),   T(UINT16),    T(UINT32),     T(UINT64), T(INT8),  T(INT16),
    T(INT32),   T(INT64),   T(FLOAT16),   T(FLOAT32),    T(FLOAT64), T(COMPLEX64),
    T(COMPLEX128), PY(BOOL), PY(INT),     PY(FLOAT),     PY(COMPLEX), END};
static const dtcast_operand jax_axis[] = {
    T(BOOL),          T(UINT1),          T(UINT2),        T(UINT4),         T(UINT8),
    T(UINT16),        T(UINT32),         T(UINT64),       T(INT2),          T(INT4),
    T(INT8),          T(INT16),          T(INT32),        T(INT64),         T(FLOAT4E2M1),
    T(FLOAT6E2M3FN),  T(FLOAT6E3M2FN),   T(FLOAT8E3M4),   T(FLOAT8E4M3),    T(FLOAT8E8M0),
    T(FLOAT8E4M3B11FNUZ), T(FLOAT8E4M3FN), T(FLOAT8E4M3FNUZ), T(FLOAT8E5M2), T(FLOAT8E5M2FNUZ),
    T(BFLOAT16),      T(FLOAT16),        T(FLOAT32),      T(FLOAT64),       T(COMPLEX64),
    T(COMPLEX128),    PY(INT),           PY(FLOAT),       PY(COMPLEX),      END};
/* numpy's types, then ml_dtypes' in the order of dir(ml_dtypes) (tests/promote_tables/generate.py) */
static const dtcast_operand numpy_ml_dtypes_axis[] = {
    T(BOOL),          T(UINT8),          T(UINT16),       T(UINT32),        T(UINT64),
    T(INT8),          T(INT16),          T(INT32),        T(INT64),         T(FLOAT16),
    T(FLOAT32),       T(FLOAT64),        T(COMPLEX64),    T(COMPLEX128),    T(BCOMPLEX32),
    T(BFLOAT16),      T(COMPLEX32),      T(FLOAT4E2M1),   T(FLOAT6E2M3FN),  T(FLOAT6E3M2FN),
    T(FLOAT8E3M4),    T(FLOAT8E4M3),     T(FLOAT8E4M3B11FNUZ), T(FLOAT8E4M3FN), T(FLOAT8E4M3FNUZ),
    T(FLOAT8E5M2),    T(FLOAT8E5M2FNUZ), T(FLOAT8E5M3FNU), T(FLOAT8E8M0),   T(INT1),
    T(INT2),          T(INT4),           T(UINT1),        T(UINT2),         T(UINT4),
    PY(BOOL),         PY(INT),           PY(FLOAT),       PY(COMPLEX),      END};

#undef T
#undef PY
#undef END

static const dtcast_operand *axis_of(dtcast_promote_rules rules, size_t *n)
{
    static const dtcast_operand *const axes[] = {openvino_axis, aclnn_axis, torch_axis,
                                                 numpy_axis,    jax_axis,   numpy_ml_dtypes_axis};
    const dtcast_operand *axis = axes[rules];
    size_t k = 0;
    while (axis[k].type != DTCAST_UNDEFINED || axis[k].scalar != DTCAST_SCALAR_NONE)
        k++;
    *n = k;
    return axis;
}

#define CELL_MAX 24

/* Cell text of row i, column j: the result's label, or "-" / "error". */
static void cell_text(char *buf, size_t size, const promote_request *r, const dtcast_operand *a,
                      const dtcast_operand *b)
{
    dtcast_type result;
    if (dtcast_promote(&result, r->rules, a, b, &r->attrs, NULL) != DTCAST_OK)
        snprintf(buf, size, "%s", r->csv ? "error" : "-");
    else if (r->csv)
        snprintf(buf, size, "%s", type_label(result));
    else
        short_label(buf, size, result);
}

static void print_csv(const promote_request *r, const dtcast_operand *axis, size_t n)
{
    char text[CELL_MAX];
    printf("%s", dtcast_promote_rules_name(r->rules));
    for (size_t j = 0; j < n; j++) {
        operand_label(text, sizeof text, &axis[j], 1);
        printf(",%s", text);
    }
    printf("\n");
    for (size_t i = 0; i < n; i++) {
        operand_label(text, sizeof text, &axis[i], 1);
        printf("%s", text);
        for (size_t j = 0; j < n; j++) {
            cell_text(text, sizeof text, r, &axis[i], &axis[j]);
            printf(",%s", text);
        }
        printf("\n");
    }
}

/* The legend under the grid: the spellings that are not obvious. */
static void print_legend(const promote_request *r, const dtcast_operand *axis, size_t n)
{
    int scalars = 0, small_floats = 0;
    for (size_t i = 0; i < n; i++) {
        scalars |= axis[i].scalar != DTCAST_SCALAR_NONE;
        const char *name = dtcast_type_name(axis[i].type);
        small_floats |= axis[i].scalar == DTCAST_SCALAR_NONE && name &&
                        (strncmp(name, "float8e", 7) == 0 || strncmp(name, "float6e", 7) == 0 ||
                         strncmp(name, "float4e", 7) == 0);
    }
    printf("\nrow x column under --rules %s", dtcast_promote_rules_name(r->rules));
    if (r->rules == DTCAST_RULES_OPENVINO) {
        char u64[16];
        short_label(u64, sizeof u64,
                    r->attrs.u64_target ? r->attrs.u64_target : DTCAST_FLOAT32);
        printf(" (promote_unsafe %s, u64_integer_promotion_target %s)",
               r->attrs.promote_unsafe ? "true" : "false", u64);
    } else if (r->rules == DTCAST_RULES_JAX) {
        printf(" (x64 %s, %s promotion)", r->attrs.x64 ? "on" : "off",
               r->attrs.strict ? "strict" : "standard");
    }
    printf("; tensors of rank >= 1; - = no common type (an error)\n");
    if (small_floats)
        printf("e4m3fn = float8e4m3fn, e2m1 = float4e2m1, e2m3fn = float6e2m3fn, and so on\n");
    if (scalars)
        printf("%s = Python %s (weak)\n",
               r->rules == DTCAST_RULES_JAX ? "i* f* c*" : "b* i* f* c*",
               r->rules == DTCAST_RULES_JAX ? "int, float, complex" : "bool, int, float, complex");
}

static int print_grid(const promote_request *r, const dtcast_operand *axis, size_t n)
{
    size_t cells = (n + 1) * (n + 1);
    char(*text)[CELL_MAX] = calloc(cells, sizeof *text);
    size_t *width = calloc(n + 1, sizeof *width);
    if (!text || !width) {
        free(text);
        free(width);
        return cli_fail("out of memory");
    }
    /* Row 0 and column 0 are the labels; the corner names the rule set. */
    snprintf(text[0], CELL_MAX, "%s", dtcast_promote_rules_name(r->rules));
    for (size_t i = 0; i < n; i++) {
        operand_label(text[i + 1], CELL_MAX, &axis[i], 0);
        operand_label(text[(i + 1) * (n + 1)], CELL_MAX, &axis[i], 0);
        for (size_t j = 0; j < n; j++)
            cell_text(text[(i + 1) * (n + 1) + j + 1], CELL_MAX, r, &axis[i], &axis[j]);
    }
    for (size_t i = 0; i <= n; i++)
        for (size_t j = 0; j <= n; j++) {
            size_t len = strlen(text[i * (n + 1) + j]);
            if (len > width[j])
                width[j] = len;
        }
    for (size_t i = 0; i <= n; i++) {
        for (size_t j = 0; j <= n; j++) {
            const char *cell = text[i * (n + 1) + j];
            if (j == n)
                printf("%s\n", cell);
            else
                printf("%-*s ", (int)width[j], cell);
        }
    }
    free(text);
    free(width);
    print_legend(r, axis, n);
    return CLI_OK;
}

int cmd_promote(int argc, char **argv)
{
    promote_request r;
    memset(&r, 0, sizeof r);
    r.cmd = "promote";
    dtcast_promote_attrs_init(&r.attrs);
    int status = parse_args(&r, argc, argv, promote_help, 2);
    if (status != CLI_OK)
        return status < 0 ? CLI_OK : status;
    if (!r.rules_given)
        return cli_usage(r.cmd, "missing --rules (openvino, aclnn, torch, numpy, jax or "
                                 "numpy+ml_dtypes)");
    if ((status = check_attributes(&r)) != CLI_OK)
        return status;
    if (r.table) {
        if (r.npositional)
            return cli_usage(r.cmd, "--table takes no operands (got '%s')", r.positional[0]);
        size_t n;
        const dtcast_operand *axis = axis_of(r.rules, &n);
        if (r.csv) {
            print_csv(&r, axis, n);
            return CLI_OK;
        }
        return print_grid(&r, axis, n);
    }
    if (r.csv)
        return cli_usage(r.cmd, "--format applies to --table");
    if (r.npositional < 2)
        return cli_usage(r.cmd, r.npositional ? "missing operand B" : "missing operands A and B");
    return promote_pair(&r);
}

/* ---- convert-promote ------------------------------------------------------------------------ */

/* A tensor of type `type` with src's shape, zero-filled. */
static int allocate_output(const dt_tensor *src, dtcast_type type, dt_tensor *dst,
                           const char *what)
{
    dt_io_error err;
    dt_tensor_init(dst);
    dst->type = type;
    if (dt_tensor_set_shape(dst, src->ndim, src->dims, what, &err) != DTCAST_OK ||
        dt_tensor_alloc(dst, &err) != DTCAST_OK) {
        dt_tensor_free(dst);
        return cli_fail("%s", err.message);
    }
    return CLI_OK;
}

static int convert_files(const promote_request *r, dt_tensor in[2])
{
    const char *const *paths = r->positional;
    dtcast_operand ops[2];
    for (int i = 0; i < 2; i++) {
        ops[i].type = in[i].type;
        ops[i].rank = in[i].ndim;
        ops[i].scalar = DTCAST_SCALAR_NONE;
    }
    dtcast_error error;
    memset(&error, 0, sizeof error);
    dtcast_type common;
    dtcast_status st = dtcast_promote(&common, r->rules, &ops[0], &ops[1], &r->attrs, &error);
    if (st != DTCAST_OK)
        return cli_fail("%s", error.message[0] ? error.message : dtcast_status_string(st));
    if (common == DTCAST_TYPE_DYNAMIC)
        return cli_fail("the common type is dynamic: nothing to convert to");

    dt_tensor out[2];
    if (allocate_output(&in[0], common, &out[0], paths[2]) != CLI_OK)
        return CLI_FAIL;
    if (allocate_output(&in[1], common, &out[1], paths[3]) != CLI_OK) {
        dt_tensor_free(&out[0]);
        return CLI_FAIL;
    }
    dtcast_tensor_view views[2];
    for (int i = 0; i < 2; i++) {
        views[i].data = in[i].data;
        views[i].type = in[i].type;
        views[i].count = in[i].count;
        views[i].rank = in[i].ndim;
    }
    dtcast_options opts;
    dtcast_options_init(&opts);
    dtcast_type got;
    if (r->rules == DTCAST_RULES_OPENVINO)
        st = dtcast_convert_promote_types(out[0].data, out[0].nbytes, out[1].data, out[1].nbytes,
                                          &got, &views[0], &views[1], &r->attrs, &opts, &error);
    else
        st = dtcast_aclnn_promote_binary(out[0].data, out[0].nbytes, out[1].data, out[1].nbytes,
                                         &got, &views[0], &views[1], &opts, &error);
    int status = CLI_OK;
    if (st != DTCAST_OK)
        status = cli_fail("%s", error.message[0] ? error.message : dtcast_status_string(st));
    if (status == CLI_OK)
        status = cli_save_tensor(paths[2], &out[0]);
    if (status == CLI_OK) {
        status = cli_save_tensor(paths[3], &out[1]);
        if (status != CLI_OK && strcmp(paths[2], "-") != 0)
            unlink(paths[2]); /* nothing is left behind on failure */
    }
    dt_tensor_free(&out[0]);
    dt_tensor_free(&out[1]);
    return status;
}

int cmd_convert_promote(int argc, char **argv)
{
    promote_request r;
    memset(&r, 0, sizeof r);
    r.cmd = "convert-promote";
    dtcast_promote_attrs_init(&r.attrs);
    int status = parse_args(&r, argc, argv, convert_promote_help, 4);
    if (status != CLI_OK)
        return status < 0 ? CLI_OK : status;
    if (r.rules_given && r.rules != DTCAST_RULES_OPENVINO && r.rules != DTCAST_RULES_ACLNN)
        return cli_usage(r.cmd, "%s: convert-promote takes openvino or aclnn", r.rules_flag);
    if ((status = check_attributes(&r)) != CLI_OK)
        return status;
    if (r.npositional < 4)
        return cli_usage(r.cmd, "missing %s (IN0 IN1 OUT0 OUT1)",
                         r.npositional < 2 ? "inputs and outputs" : "outputs");
    if (strcmp(r.positional[2], r.positional[3]) == 0)
        return cli_usage(r.cmd, "OUT0 and OUT1 are the same file '%s'", r.positional[2]);

    cli_input_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.from = DTCAST_UNDEFINED;
    dt_tensor in[2];
    if ((status = cli_load_tensor(r.cmd, r.positional[0], &spec, &in[0])) != CLI_OK)
        return status;
    if ((status = cli_load_tensor(r.cmd, r.positional[1], &spec, &in[1])) != CLI_OK) {
        dt_tensor_free(&in[0]);
        return status;
    }
    status = convert_files(&r, in);
    dt_tensor_free(&in[0]);
    dt_tensor_free(&in[1]);
    return status;
}
