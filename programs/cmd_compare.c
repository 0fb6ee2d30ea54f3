/* dtcast compare IN --to T1,T2,...: the input values and what each type makes of them, side by
 * side in an aligned table. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COMPARE_MAX_TYPES 32
#define CELL_SIZE 96

enum { OPT_HEX = CLI_OPT_COMMAND, OPT_LIMIT, OPT_ALL, OPT_FORMAT };

static const char compare_help[] =
    "usage: dtcast compare [options] IN --to TYPE[,TYPE...]\n"
    "\n"
    "Converts the tensor in IN to each TYPE and prints the input values and the converted\n"
    "values side by side, one row per element.\n"
    "\n"
    "  -t, --to TYPES         comma-separated target types (repeatable)\n"
    "  -x, --hex              also show each value's encoding\n"
    "  -n, --limit N          show the first N elements (default 50)\n"
    "  -a, --all              show every element\n"
    "\n";

static const char compare_examples[] =
    "\n"
    "Examples:\n"
    "  dtcast compare examples/weights.npy --to float8e4m3fn,float8e5m2,float4e2m1,bf16,int4\n"
    "  dtcast compare --hex --profile onnx:23 weights.npy --to f8e4m3fn,float4e2m1\n"
    "  dtcast compare --round trunc --overflow saturate weights.npy --to float8e4m3fn\n";

static const cli_option compare_options[] = {
    {"help", 'h', 0, CLI_OPT_HELP},
    {"to", 't', 1, CLI_OPT_TO},
    {"hex", 'x', 0, OPT_HEX},
    {"limit", 'n', 1, OPT_LIMIT},
    {"all", 'a', 0, OPT_ALL},
    {"format", 0, 1, OPT_FORMAT}, /* in cli_conversion_help's Input section */
    CLI_CONVERSION_OPTIONS,
    {NULL, 0, 0, 0},
};

typedef struct compare_request {
    cli_settings settings;
    const char *in;
    int ntypes;
    dtcast_type types[COMPARE_MAX_TYPES];
    int hex;
    size_t limit;
} compare_request;

static int add_types(compare_request *r, const char *flag, const char *list)
{
    char name[64];
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof name)
            return cli_usage("compare", "%s: bad type list '%s'", flag, list);
        memcpy(name, p, len);
        name[len] = 0;
        if (r->ntypes == COMPARE_MAX_TYPES)
            return cli_usage("compare", "%s: at most %d types", flag, COMPARE_MAX_TYPES);
        if (cli_parse_type("compare", flag, name, &r->types[r->ntypes]) != CLI_OK)
            return CLI_USAGE;
        r->ntypes++;
        p += len;
        if (*p == ',')
            p++;
    }
    return CLI_OK;
}

static int compare_option(compare_request *r, const cli_args *a, int id)
{
    unsigned long n;
    switch (id) {
    case CLI_OPT_TO:
        return add_types(r, a->spelled, a->value);
    case OPT_HEX:
        r->hex = 1;
        return CLI_OK;
    case OPT_LIMIT:
        if (cli_parse_uint("compare", a->spelled, a->value, 1000000000ul, &n) != CLI_OK)
            return CLI_USAGE;
        r->limit = n;
        return CLI_OK;
    case OPT_ALL:
        r->limit = (size_t)-1;
        return CLI_OK;
    case OPT_FORMAT: {
        static const char *const formats[] = {"raw", NULL};
        int i;
        if (cli_parse_choice("compare", a->spelled, a->value, formats, &i) != CLI_OK)
            return CLI_USAGE;
        r->settings.input.format_raw = 1;
        return CLI_OK;
    }
    default:
        return cli_settings_option(&r->settings, "compare", a, id) == CLI_OK ? CLI_OK
                                                                              : CLI_USAGE;
    }
}

/* Returns -1 after --help, else an exit status. */
static int parse_compare_args(compare_request *r, int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, "compare", argc, argv, compare_options);
    for (;;) {
        int id = cli_args_next(&a);
        if (id == CLI_ARG_END)
            break;
        if (id == CLI_ARG_ERROR)
            return CLI_USAGE;
        if (id == CLI_OPT_HELP) {
            fputs(compare_help, stdout);
            fputs(cli_conversion_help, stdout);
            fputs(compare_examples, stdout);
            return -1;
        }
        if (id == CLI_ARG_POSITIONAL) {
            if (r->in)
                return cli_usage("compare", "unexpected argument '%s' (one IN)", a.value);
            r->in = a.value;
            continue;
        }
        if (compare_option(r, &a, id) != CLI_OK)
            return CLI_USAGE;
    }
    if (!r->in)
        return cli_usage("compare", "missing IN");
    if (r->ntypes == 0)
        return cli_usage("compare", "missing --to TYPE[,TYPE...]");
    return cli_settings_check(&r->settings, "compare");
}

/* ---- the table ------------------------------------------------------------------------------ */

typedef struct grid {
    size_t rows, cols; /* rows include the header */
    char *cells;       /* rows * cols cells of CELL_SIZE */
    int *width;
} grid;

static char *cell(grid *g, size_t row, size_t col)
{
    return g->cells + (row * g->cols + col) * CELL_SIZE;
}

static void fill_column(grid *g, size_t col, const dt_tensor *t, int hex,
                        dtcast_string_style style)
{
    for (size_t row = 1; row < g->rows; row++) {
        char *c = cell(g, row, col);
        cli_format_value(c, CELL_SIZE, t, row - 1, style);
        if (hex && t->type != DTCAST_STRING) {
            uint64_t code[2];
            char h[48];
            cli_element_code(t->data, t->type, row - 1, code);
            cli_format_code(h, sizeof h, t->type, code);
            size_t used = strlen(c);
            snprintf(c + used, CELL_SIZE - used, " (%s)", h);
        }
    }
}

static void print_grid(grid *g)
{
    for (size_t col = 0; col < g->cols; col++) {
        g->width[col] = 0;
        for (size_t row = 0; row < g->rows; row++) {
            int w = (int)strlen(cell(g, row, col));
            if (w > g->width[col])
                g->width[col] = w;
        }
    }
    for (size_t row = 0; row < g->rows; row++) {
        for (size_t col = 0; col < g->cols; col++)
            printf("%s%*s", col ? "   " : "", g->width[col], cell(g, row, col));
        printf("\n");
    }
}

static int fill_converted(compare_request *r, grid *g, const dt_tensor *src, const char *what)
{
    for (int k = 0; k < r->ntypes; k++) {
        dt_tensor dst;
        char name[32];
        int status = cli_convert_tensor(&r->settings, src, r->types[k], &dst, what);
        if (status != CLI_OK)
            return status;
        snprintf(cell(g, 0, (size_t)k + 2), CELL_SIZE, "%s",
                 cli_type_label(r->types[k], name, sizeof name));
        fill_column(g, (size_t)k + 2, &dst, r->hex, r->settings.options.string_style);
        dt_tensor_free_converted(&dst);
    }
    return CLI_OK;
}

static int print_comparison(compare_request *r, const dt_tensor *src, const char *what)
{
    size_t shown = src->count < r->limit ? src->count : r->limit;
    grid g;
    g.rows = shown + 1;
    g.cols = (size_t)r->ntypes + 2;
    g.cells = calloc(g.rows * g.cols, CELL_SIZE);
    g.width = calloc(g.cols, sizeof *g.width);
    if (!g.cells || !g.width) {
        free(g.cells);
        free(g.width);
        return cli_fail("out of memory");
    }
    char name[32];
    snprintf(cell(&g, 0, 0), CELL_SIZE, "#");
    snprintf(cell(&g, 0, 1), CELL_SIZE, "%s", cli_type_label(src->type, name, sizeof name));
    for (size_t row = 1; row < g.rows; row++)
        snprintf(cell(&g, row, 0), CELL_SIZE, "%zu", row - 1);
    fill_column(&g, 1, src, r->hex, r->settings.options.string_style);
    int status = fill_converted(r, &g, src, what);
    if (status == CLI_OK) {
        char shape[128], profile[32], file[4096];
        cli_format_shape(shape, sizeof shape, src->ndim, src->dims);
        cli_profile_label(&r->settings, profile, sizeof profile);
        cli_escape(file, sizeof file, what);
        printf("%s: %s, shape %s (%zu element%s), profile %s\n", file, name, shape,
               src->count, src->count == 1 ? "" : "s", profile);
        print_grid(&g);
        if (shown < src->count)
            printf("... %zu more (use --all)\n", src->count - shown);
    }
    free(g.cells);
    free(g.width);
    return status;
}

int cmd_compare(int argc, char **argv)
{
    compare_request r;
    memset(&r, 0, sizeof r);
    cli_settings_init(&r.settings);
    r.limit = 50;
    int status = parse_compare_args(&r, argc, argv);
    if (status != CLI_OK)
        return status < 0 ? CLI_OK : status;
    dt_tensor src;
    status = cli_load_tensor("compare", r.in, &r.settings.input, &src);
    if (status != CLI_OK)
        return status;
    const char *what = strcmp(r.in, "-") == 0 ? "<stdin>" : r.in;
    status = print_comparison(&r, &src, what);
    dt_tensor_free(&src);
    return status;
}
