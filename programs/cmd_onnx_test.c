/* dtcast onnx-test DIR...: runs ONNX backend node test directories (Cast, CastLike, the
 * quantization operators, BitCast) and judges the outputs bit-exactly, allowing only the
 * generator's two documented artefacts:
 *  - NaN against NaN of another sign or payload (the fnuz NaN-sign artefact);
 *  - FLOAT8E8M0 0x00 -> FLOAT stored as 0x003FFFFF instead of the exact 2^-127 (0x00400000).
 * Elements whose result ONNX leaves undefined (Cast/CastLike: float -> integer out of range, NaN
 * or infinite; a negative value -> FLOAT8E8M0) are decided from the input and the op alone,
 * never judged, and counted and listed (docs/onnx.md, "Undefined elements").
 * Number -> string outputs of the legacy tests were generated from float64 originals, so their
 * text cannot be matched by any formatter: they are judged by parsing both strings into the
 * source type and requiring identical bits. */
#include "cli.h"
#include "onnx_node.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { OPT_QUIET = CLI_OPT_COMMAND, OPT_TAP, OPT_VERBOSE };

#define NOTE_SIZE 512

static const char onnx_test_help[] =
    "usage: dtcast onnx-test [options] DIR...\n"
    "\n"
    "Runs ONNX backend node tests of Cast, CastLike, QuantizeLinear, DequantizeLinear,\n"
    "DynamicQuantizeLinear and BitCast. Each DIR is a test directory (model.onnx and\n"
    "test_data_set_*/{input_K,output_K}.pb) or a directory of them. Prints one line per test\n"
    "and a final 'N passed, N failed' (', N skipped' when models of several nodes, such as an\n"
    "operator's function body, were skipped); exits 0 when every test that ran passes.\n"
    "\n"
    "Outputs must be bit-identical, except NaN against NaN of another sign (the fnuz NaN-sign\n"
    "artefact of the generator) and FLOAT8E8M0 0x00 -> FLOAT stored as 0x003FFFFF. Strings must\n"
    "be equal exactly. Elements ONNX leaves undefined (Cast of a float to an integer type out\n"
    "of range, NaN or infinite; of a negative value to FLOAT8E8M0) are not judged: each test\n"
    "lists them ('N undefined elements: ...') and a last line totals them.\n"
    "\n"
    "  -q, --quiet      print only failures and the summary\n"
    "  -v, --verbose    list every differing element of a failing test\n"
    "      --tap        Test Anything Protocol output\n"
    "  -T, --threads N  worker threads of the conversions (0 = automatic)\n"
    "  -h, --help       show this help\n"
    "\n"
    "Examples:\n"
    "  dtcast onnx-test conformance/onnx/node conformance/onnx/node_legacy\n"
    "  dtcast onnx-test --quiet conformance/onnx/node/test_cast_FLOAT_to_FLOAT8E4M3FN\n";

static const cli_option onnx_test_options[] = {
    {"help", 'h', 0, CLI_OPT_HELP}, {"quiet", 'q', 0, OPT_QUIET},
    {"tap", 0, 0, OPT_TAP},         {"verbose", 'v', 0, OPT_VERBOSE},
    {"threads", 'T', 1, CLI_OPT_THREADS}, {NULL, 0, 0, 0},
};

typedef struct runner {
    int quiet, tap, verbose;
    unsigned threads;
    size_t passed, failed, skipped;
    size_t undefined, undefined_tests; /* elements ONNX leaves undefined, and tests having some */
} runner;

/* What one test came to: pass or fail, and the text after "ok"/"FAIL name". */
typedef struct verdict {
    int failed;
    int skipped;           /* not run: note says why */
    size_t undefined;      /* elements not judged: ONNX leaves their result undefined */
    char undef_list[400];  /* the first of them, for the report */
    char note[NOTE_SIZE];  /* pass: known artefacts, or ""; fail: the reason */
    char detail[4096];     /* --verbose: more lines about a failure */
} verdict;

static int fail(verdict *v, const char *fmt, ...) CLI_PRINTF(2, 3);

static int fail(verdict *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->note, sizeof v->note, fmt, ap);
    va_end(ap);
    v->failed = 1;
    return 1;
}

static void add_note(verdict *v, const char *text)
{
    if (v->note[0] == 0)
        snprintf(v->note, sizeof v->note, "%s", text);
}

static void add_detail(verdict *v, const char *line)
{
    size_t used = strlen(v->detail);
    if (used + strlen(line) + 8 < sizeof v->detail)
        snprintf(v->detail + used, sizeof v->detail - used, "    %s\n", line);
}

/* ---- files ---------------------------------------------------------------------------------- */

static char *join_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s%s%s", dir, (dir[0] && dir[strlen(dir) - 1] == '/') ? "" : "/", name);
    return p;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int has_model(const char *dir)
{
    char *p = join_path(dir, "model.onnx");
    int yes = p && is_file(p);
    free(p);
    return yes;
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct name_list {
    char **items;
    size_t count, cap;
} name_list;

static int list_push(name_list *l, char *item)
{
    if (!item)
        return 0;
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        char **bigger = realloc(l->items, cap * sizeof *bigger);
        if (!bigger) {
            free(item);
            return 0;
        }
        l->items = bigger;
        l->cap = cap;
    }
    l->items[l->count++] = item;
    return 1;
}

static void list_free(name_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        free(l->items[i]);
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* Entries of dir (full paths, sorted) whose name starts with prefix and that pass keep(). */
static int list_dir(const char *dir, const char *prefix, int (*keep)(const char *), name_list *out)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t first = out->count;
    struct dirent *e;
    int ok = 1;
    while (ok && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        char *path = join_path(dir, e->d_name);
        if (path && keep(path))
            ok = list_push(out, path);
        else
            free(path);
    }
    closedir(d);
    qsort(out->items + first, out->count - first, sizeof *out->items, compare_strings);
    return ok;
}

/* A test directory, or a directory of test directories. */
static int collect_tests(const char *arg, name_list *tests)
{
    if (!has_model(arg) && is_dir(arg)) {
        size_t before = tests->count;
        if (!list_dir(arg, "", has_model, tests))
            return 0;
        if (tests->count > before)
            return 1;
    }
    char *copy = malloc(strlen(arg) + 1);
    if (copy)
        memcpy(copy, arg, strlen(arg) + 1);
    return list_push(tests, copy);
}

static const char *base_name(const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    size_t start = n;
    while (start > 0 && path[start - 1] != '/')
        start--;
    static char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(n - start), path + start);
    return name;
}

static int read_pb(const char *dir, const char *name, dt_tensor *t, verdict *v)
{
    char *path = join_path(dir, name);
    uint8_t *buf = NULL;
    size_t len = 0;
    dt_io_error err;
    err.message[0] = 0;
    dt_tensor_init(t);
    if (!path)
        return fail(v, "out of memory");
    dtcast_status st = dt_read_file(path, &buf, &len, &err);
    if (st == DTCAST_OK && (st = dt_pb_parse(buf, len, t, &err)) != DTCAST_OK)
        dt_tensor_free(t);
    free(buf);
    if (st != DTCAST_OK)
        fail(v, "%s: %s", path, err.message);
    free(path);
    return st != DTCAST_OK;
}

/* ---- judging -------------------------------------------------------------------------------- */

static int is_nan_code(dtcast_type type, const uint64_t code[2])
{
    uint8_t buf[16];
    double d = 0;
    dtcast_options opts;
    dtcast_options_init(&opts);
    opts.discard_imaginary = 1;
    cli_element_store(buf, type, code);
    if (dtcast_convert(&d, DTCAST_FLOAT64, buf, type, 1, &opts, NULL) != DTCAST_OK)
        return 0;
    return isnan(d);
}

static int same_shape(const dt_tensor *a, const dt_tensor *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    return 1;
}

static const char *onnx_label(dtcast_type t, char *buf, size_t size)
{
    const char *onnx = dtcast_type_onnx_name(t);
    if (onnx) {
        snprintf(buf, size, "%s", onnx);
        return buf;
    }
    return cli_type_label(t, buf, size);
}

/* The e8m0 generator artefact: exactly input 0x00, expected 0x003FFFFF, got 0x00400000. */
static int is_e8m0_artefact(const dt_tensor *in, size_t i, dtcast_type out_type,
                            uint64_t expected, uint64_t got)
{
    uint64_t c[2];
    if (in->type != DTCAST_FLOAT8E8M0 || out_type != DTCAST_FLOAT32)
        return 0;
    cli_element_code(in->data, in->type, i, c);
    return c[0] == 0 && expected == 0x003FFFFF && got == 0x00400000;
}

/* Whether ONNX leaves the result of element i undefined, from the op and the input value alone
 * (docs/onnx.md, "Undefined elements"): Cast and CastLike of a float to an integer type when the
 * value is NaN, infinite, or truncated toward zero outside the type's range ("fixed point:
 * undefined if OOR"), and of a negative value (-0 and -Inf included) to FLOAT8E8M0. */
static int is_undefined(onnx_op op, const dt_tensor *in, size_t i, dtcast_type out_type)
{
    if (op != ONNX_OP_CAST && op != ONNX_OP_CAST_LIKE)
        return 0;
    dtcast_info src, dst;
    if (in->type == DTCAST_STRING || i >= in->count ||
        dtcast_type_info(in->type, &src, NULL) != DTCAST_OK ||
        dtcast_type_info(out_type, &dst, NULL) != DTCAST_OK)
        return 0;
    const int to_int = dst.kind == DTCAST_KIND_SIGNED || dst.kind == DTCAST_KIND_UNSIGNED;
    const int to_e8m0 = out_type == DTCAST_FLOAT8E8M0;
    if (!(to_int && src.kind == DTCAST_KIND_FLOAT) && !to_e8m0)
        return 0;
    uint8_t buf[16];
    uint64_t c[2];
    double d = 0;
    cli_element_code(in->data, in->type, i, c);
    cli_element_store(buf, in->type, c);
    dtcast_options opts;
    dtcast_options_init(&opts);
    opts.discard_imaginary = 1;
    if (dtcast_convert(&d, DTCAST_FLOAT64, buf, in->type, 1, &opts, NULL) != DTCAST_OK)
        return 0; /* every float and integer converts to float64 (exactly, or rounded: the
                   * integers beyond 2^53 are far from any bound that matters here) */
    if (to_e8m0)
        return !isnan(d) && signbit(d);
    if (isnan(d) || isinf(d))
        return 1;
    const double t = trunc(d);
    if (dst.kind == DTCAST_KIND_UNSIGNED)
        return t < 0 || t >= ldexp(1.0, dst.bits); /* 2^bits: exact, unlike (double)int_max */
    return t < -ldexp(1.0, dst.bits - 1) || t >= ldexp(1.0, dst.bits - 1);
}

static void describe_input(char *buf, size_t size, const dt_tensor *in, size_t i)
{
    if (in->type == DTCAST_STRING) {
        cli_format_value(buf, size, in, i, DTCAST_STRING_PYTHON);
        return;
    }
    uint64_t c[2];
    cli_element_code(in->data, in->type, i, c);
    cli_format_code(buf, size, in->type, c);
}

/* Lists undefined element i in v (the first few; the count is v->undefined). */
static void list_undefined(verdict *v, const dt_tensor *in, size_t i, dtcast_type type,
                           const uint64_t e[2], const uint64_t g[2])
{
    char eh[48], gh[48], ih[96], item[400];
    size_t used = strlen(v->undef_list);
    if (v->undefined > 4) {
        if (used + 6 < sizeof v->undef_list && strstr(v->undef_list, ", ...") == NULL)
            snprintf(v->undef_list + used, sizeof v->undef_list - used, ", ...");
        return;
    }
    char value[DTCAST_FORMAT_MAX] = "?";
    cli_format_code(eh, sizeof eh, type, e);
    cli_format_code(gh, sizeof gh, type, g);
    describe_input(ih, sizeof ih, in, i);
    dtcast_format_element(value, sizeof value, in->data, in->type, i, NULL, NULL);
    if (e[0] == g[0] && e[1] == g[1])
        snprintf(item, sizeof item, "%selement %zu: input %s (%s) gives %s", used ? ", " : "", i,
                 value, ih, gh);
    else
        snprintf(item, sizeof item, "%selement %zu: input %s (%s) gives %s, the data %s",
                 used ? ", " : "", i, value, ih, gh, eh);
    if (used + strlen(item) + 6 < sizeof v->undef_list)
        snprintf(v->undef_list + used, sizeof v->undef_list - used, "%s", item);
    else if (strstr(v->undef_list, ", ...") == NULL)
        snprintf(v->undef_list + used, sizeof v->undef_list - used, ", ...");
}

static int judge_numbers(const runner *r, onnx_op op, const dt_tensor *in, const dt_tensor *exp,
                         const dt_tensor *got, verdict *v)
{
    size_t differ = 0, nan_artefacts = 0, e8m0_artefacts = 0;
    char first_msg[300] = "";
    for (size_t i = 0; i < exp->count; i++) {
        uint64_t e[2], g[2];
        cli_element_code(exp->data, exp->type, i, e);
        cli_element_code(got->data, got->type, i, g);
        if (in->count == exp->count && is_undefined(op, in, i, exp->type)) {
            v->undefined++;
            list_undefined(v, in, i, exp->type, e, g);
            continue;
        }
        if (e[0] == g[0] && e[1] == g[1])
            continue;
        if (is_nan_code(exp->type, e) && is_nan_code(got->type, g)) {
            nan_artefacts++;
            continue;
        }
        if (is_e8m0_artefact(in, i, exp->type, e[0], g[0]) && e[1] == 0 && g[1] == 0) {
            e8m0_artefacts++;
            continue;
        }
        char eh[48], gh[48], ih[96], line[300];
        cli_format_code(eh, sizeof eh, exp->type, e);
        cli_format_code(gh, sizeof gh, got->type, g);
        describe_input(ih, sizeof ih, in, i);
        snprintf(line, sizeof line, "element %zu: expected %s got %s (input %s)", i, eh, gh, ih);
        if (differ++ == 0)
            snprintf(first_msg, sizeof first_msg, "%s", line);
        if (r->verbose)
            add_detail(v, line);
    }
    if (differ)
        return fail(v, "%s; %zu of %zu elements differ", first_msg, differ, exp->count);
    if (e8m0_artefacts)
        add_note(v, "known artefact: FLOAT8E8M0 0x00 -> FLOAT stored as 0x003fffff, exact 2^-127 "
                    "is 0x00400000");
    else if (nan_artefacts) {
        char note[128];
        snprintf(note, sizeof note, "known artefact: NaN sign differs in %zu element%s",
                 nan_artefacts, nan_artefacts == 1 ? "" : "s");
        add_note(v, note);
    }
    return 0;
}

static int judge_strings(const runner *r, const dt_tensor *exp,
                         const dt_tensor *got, verdict *v)
{
    char *const *e = exp->data;
    char *const *g = got->data;
    size_t differ = 0;
    char first_msg[300] = "";
    for (size_t i = 0; i < exp->count; i++) {
        const char *es = e[i] ? e[i] : "", *gs = g[i] ? g[i] : "";
        if (strcmp(es, gs) == 0)
            continue;
        char line[300];
        snprintf(line, sizeof line, "element %zu: expected \"%.100s\" got \"%.100s\"", i, es, gs);
        if (differ++ == 0)
            snprintf(first_msg, sizeof first_msg, "%s", line);
        if (r->verbose)
            add_detail(v, line);
    }
    if (differ)
        return fail(v, "%s; %zu of %zu elements differ", first_msg, differ, exp->count);
    return 0;
}

static int judge(const runner *r, onnx_op op, const dt_tensor *in, const dt_tensor *exp,
                 const dt_tensor *got, verdict *v)
{
    char a[32], b[32];
    if (exp->type != got->type)
        return fail(v, "type: expected %s got %s", onnx_label(exp->type, a, sizeof a),
                    onnx_label(got->type, b, sizeof b));
    if (!same_shape(exp, got)) {
        char es[128], gs[128];
        cli_format_shape(es, sizeof es, exp->ndim, exp->dims);
        cli_format_shape(gs, sizeof gs, got->ndim, got->dims);
        return fail(v, "shape: expected %s got %s", es, gs);
    }
    if (exp->type == DTCAST_STRING)
        return judge_strings(r, exp, got, v);
    return judge_numbers(r, op, in, exp, got, v);
}

static int is_data_set(const char *path)
{
    return is_dir(path);
}

static int exists_in(const char *dir, const char *name)
{
    char *path = join_path(dir, name);
    int yes = path && is_file(path);
    free(path);
    return yes;
}

/* input_K.pb and output_K.pb of a data set, run through the node and judged one by one. */
static int run_data_set(const runner *r, const onnx_node *node, const char *set, verdict *v)
{
    dt_tensor in[ONNX_NODE_MAX_IO], exp[ONNX_NODE_MAX_IO], got[ONNX_NODE_MAX_IO];
    const dt_tensor *inputs[ONNX_NODE_MAX_IO];
    int nin = 0, nexp = 0, ngot = 0, bad = 0; /* a tensor read_pb failed on is initialised */
    char name[32], err[NOTE_SIZE];
    for (; nin < ONNX_NODE_MAX_IO && !bad; nin++) {
        snprintf(name, sizeof name, "input_%d.pb", nin);
        if (!exists_in(set, name))
            break;
        bad = read_pb(set, name, &in[nin], v);
        inputs[nin] = &in[nin];
    }
    for (; nexp < ONNX_NODE_MAX_IO && !bad; nexp++) {
        snprintf(name, sizeof name, "output_%d.pb", nexp);
        if (!exists_in(set, name))
            break;
        bad = read_pb(set, name, &exp[nexp], v);
    }
    if (!bad && nexp == 0)
        bad = fail(v, "%s: no output_0.pb", set);
    if (!bad && onnx_node_run(node, inputs, nin, got, &ngot, r->threads, err, sizeof err))
        bad = fail(v, "%s", err);
    if (!bad && ngot < nexp)
        bad = fail(v, "the node gave %d outputs, the test expects %d", ngot, nexp);
    for (int k = 0; k < nexp && !bad; k++) {
        bad = judge(r, node->op, &in[0], &exp[k], &got[k], v);
        if (bad && nexp > 1) {
            char note[NOTE_SIZE + 32];
            snprintf(note, sizeof note, "output %d: %.*s", k & 7, NOTE_SIZE - 1, v->note);
            snprintf(v->note, sizeof v->note, "%.*s", NOTE_SIZE - 1, note);
        }
    }
    for (int k = 0; k < ngot; k++)
        dt_tensor_free_converted(&got[k]);
    for (int k = 0; k < nexp; k++)
        dt_tensor_free(&exp[k]);
    for (int k = 0; k < nin; k++)
        dt_tensor_free(&in[k]);
    return bad;
}

static void run_test(const runner *r, const char *dir, verdict *v)
{
    onnx_node *node = malloc(sizeof *node);
    name_list sets = {0};
    char err[NOTE_SIZE];
    memset(v, 0, sizeof *v);
    char *model = join_path(dir, "model.onnx");
    if (!node || !model) {
        fail(v, "out of memory");
        free(node);
        free(model);
        return;
    }
    onnx_node_status ns = onnx_node_read(model, node, err, sizeof err);
    free(model);
    if (ns != ONNX_NODE_OK) {
        if (ns == ONNX_NODE_SKIP) {
            v->skipped = 1;
            snprintf(v->note, sizeof v->note, "%s", err);
        } else {
            fail(v, "%s", err);
        }
        free(node);
        return;
    }
    if (!list_dir(dir, "test_data_set_", is_data_set, &sets)) {
        fail(v, "cannot list %s", dir);
    } else if (sets.count == 0) {
        fail(v, "%s: no test_data_set_* directory", dir);
    } else {
        for (size_t i = 0; i < sets.count; i++) {
            verdict one;
            memset(&one, 0, sizeof one);
            int bad = run_data_set(r, node, sets.items[i], &one);
            v->undefined += one.undefined;
            if (!v->undef_list[0])
                memcpy(v->undef_list, one.undef_list, sizeof v->undef_list);
            if (bad) {
                if (sets.count > 1)
                    fail(v, "%s: %s", base_name(sets.items[i]), one.note);
                else
                    fail(v, "%s", one.note);
                memcpy(v->detail, one.detail, sizeof v->detail);
                break;
            }
            add_note(v, one.note);
        }
    }
    list_free(&sets);
    free(node);
}

/* ---- reporting ------------------------------------------------------------------------------ */

static void report(runner *r, size_t number, const char *dir, const verdict *v)
{
    const char *name = base_name(dir);
    if (v->skipped) {
        r->skipped++;
        if (r->tap)
            printf("ok %zu - %s # SKIP %s\n", number, name, v->note);
        else
            printf("SKIP %s: %s\n", name, v->note);
        fflush(stdout);
        return;
    }
    if (v->failed)
        r->failed++;
    else
        r->passed++;
    char note[NOTE_SIZE + sizeof v->undef_list + 64] = "";
    if (v->undefined) {
        r->undefined += v->undefined;
        r->undefined_tests++;
        if (v->failed) /* the failure first */
            snprintf(note, sizeof note, "%s; %zu undefined element%s: %s", v->note, v->undefined,
                     v->undefined == 1 ? "" : "s", v->undef_list);
        else
            snprintf(note, sizeof note, "%zu undefined element%s: %s%s%s", v->undefined,
                     v->undefined == 1 ? "" : "s", v->undef_list, v->note[0] ? "; " : "",
                     v->note);
    } else {
        snprintf(note, sizeof note, "%s", v->note);
    }
    if (r->tap) {
        if (v->failed)
            printf("not ok %zu - %s: %s\n", number, name, note);
        else if (!r->quiet)
            printf("ok %zu - %s%s%s%s\n", number, name, note[0] ? " (" : "", note,
                   note[0] ? ")" : "");
    } else if (v->failed) {
        printf("FAIL %s: %s\n", name, note);
    } else if (!r->quiet) {
        printf("ok   %s%s%s%s\n", name, note[0] ? " (" : "", note, note[0] ? ")" : "");
    }
    if (v->failed && v->detail[0])
        fputs(v->detail, stdout);
    fflush(stdout);
}

/* Returns -1 after --help, else an exit status; positional DIRs go into tests. */
static int parse_onnx_test_args(runner *r, int argc, char **argv, name_list *tests)
{
    cli_args a;
    cli_args_init(&a, "onnx-test", argc, argv, onnx_test_options);
    int ndirs = 0;
    for (;;) {
        int id = cli_args_next(&a);
        unsigned long n;
        switch (id) {
        case CLI_ARG_END:
            if (ndirs == 0)
                return cli_usage("onnx-test", "missing DIR");
            return CLI_OK;
        case CLI_ARG_ERROR:
            return CLI_USAGE;
        case CLI_OPT_HELP:
            fputs(onnx_test_help, stdout);
            return -1;
        case OPT_QUIET:
            r->quiet = 1;
            break;
        case OPT_TAP:
            r->tap = 1;
            break;
        case OPT_VERBOSE:
            r->verbose = 1;
            break;
        case CLI_OPT_THREADS:
            if (cli_parse_uint("onnx-test", a.spelled, a.value, 1024, &n) != CLI_OK)
                return CLI_USAGE;
            r->threads = (unsigned)n;
            break;
        default:
            ndirs++;
            if (!collect_tests(a.value, tests))
                return cli_fail("out of memory listing %s", a.value);
            break;
        }
    }
}

int cmd_onnx_test(int argc, char **argv)
{
    runner r;
    name_list tests = {0};
    memset(&r, 0, sizeof r);
    int status = parse_onnx_test_args(&r, argc, argv, &tests);
    if (status != CLI_OK) {
        list_free(&tests);
        return status < 0 ? CLI_OK : status;
    }
    if (r.tap)
        printf("1..%zu\n", tests.count);
    verdict *v = malloc(sizeof *v);
    if (!v) {
        list_free(&tests);
        return cli_fail("out of memory");
    }
    for (size_t i = 0; i < tests.count; i++) {
        run_test(&r, tests.items[i], v);
        report(&r, i + 1, tests.items[i], v);
    }
    free(v);
    list_free(&tests);
    if (r.skipped)
        printf("%s%zu passed, %zu failed, %zu skipped\n", r.tap ? "# " : "", r.passed, r.failed,
               r.skipped);
    else
        printf("%s%zu passed, %zu failed\n", r.tap ? "# " : "", r.passed, r.failed);
    if (r.undefined)
        printf("%s%zu undefined element%s in %zu test%s, not judged: ONNX leaves their result "
               "undefined\n",
               r.tap ? "# " : "", r.undefined, r.undefined == 1 ? "" : "s", r.undefined_tests,
               r.undefined_tests == 1 ? "" : "s");
    return r.failed ? CLI_FAIL : CLI_OK;
}
