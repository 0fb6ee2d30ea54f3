/* dtcast diff A B: two tensor files compared tensor by tensor (files/diff.c does it; this prints
 * the result as text or JSON). Exit status 0: everything present on both sides, same shapes, all
 * values close; 1: a difference; 2: usage or unreadable input. */
#include "cli.h"
#include "files/diff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_JSON = CLI_OPT_COMMAND, OPT_ATOL, OPT_RTOL, OPT_TOLERANCE, OPT_RAW, OPT_WORST };

static const cli_option options[] = {
    {"help", 'h', 0, CLI_OPT_HELP},
    {"json", 0, 0, OPT_JSON},
    {"atol", 0, 1, OPT_ATOL},
    {"rtol", 0, 1, OPT_RTOL},
    {"tolerance", 0, 1, OPT_TOLERANCE},
    {"no-dequantize", 0, 0, OPT_RAW},
    {"worst", 'n', 1, OPT_WORST},
    {"threads", 'T', 1, CLI_OPT_THREADS},
    {NULL, 0, 0, 0},
};

static const char help[] =
    "usage: dtcast diff [options] A B\n"
    "\n"
    "Compares two tensor files tensor by tensor: two .npy files, two .safetensors files, two\n"
    "checkpoints (a *.safetensors.index.json or a model folder) or two ONNX models (.onnx:\n"
    "their initializers and Constant tensors), across dtypes (float32 against\n"
    "its bfloat16 copy) and layouts (a side with scaled quantized tensors, e.g. FP8 with\n"
    "weight_scale_inv, is dequantized to float32 on the fly). Both are read once, block by\n"
    "block; every value is decoded to float64. Per tensor: missing / extra, dtype and shape\n"
    "changes, bit-identical or not, max abs and max rel error with where, SQNR (signal = A),\n"
    "NaN and Inf counts; then the tensors worst first.\n"
    "\n"
    "A pair of values (a from A, b from B) is close when both are NaN, equal, or finite with\n"
    "|b - a| <= atol + rtol * |a|.\n"
    "\n"
    "Options:\n"
    "      --atol X          absolute tolerance (default 0)\n"
    "      --rtol X          relative tolerance, of |a| (default 0)\n"
    "      --tolerance X     the same as --atol X\n"
    "      --no-dequantize   compare scaled quantized tensors as stored\n"
    "      --json            the result as JSON on stdout\n"
    "  -n, --worst N         list the N worst tensors (default 10; 0: all)\n"
    "  -T, --threads N       threads (default: one per CPU, at most 4)\n"
    "  -h, --help            show this help\n"
    "\n"
    "Exit status: 0 equal within the tolerance, 1 different (a value not close, a tensor\n"
    "missing, extra, of another shape or not comparable), 2 usage error or unreadable input.\n"
    "\n"
    "Examples:\n"
    "  dtcast diff model-f32.safetensors model-bf16.safetensors\n"
    "  dtcast diff --rtol 1e-2 Llama-f32/ Llama-fp8/\n"
    "  dtcast diff --json a.npy b.npy\n";

static int parse_double(const char *flag, const char *text, double *v)
{
    char *end;
    double x = strtod(text, &end);
    if (end == text || *end || !(x >= 0) || isinf(x))
        return cli_usage("diff", "%s %s: expected a non-negative number", flag, text);
    *v = x;
    return CLI_OK;
}

static void fmt_index(char *buf, size_t size, const dt_diff_tensor *t, uint64_t index)
{
    int64_t idx[DT_MAX_DIMS];
    int part = 0;
    dt_diff_unravel(index, t->parts, t->a.ndim, t->a.dims, idx, &part);
    size_t used = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < t->a.ndim && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? ", " : "",
                                 (long long)idx[i]);
    if (used < size)
        snprintf(buf + used, size - used, "]%s", t->parts == 2 ? (part ? ".im" : ".re") : "");
}

static const char *side_label(char *buf, size_t size, const dt_diff_side *s)
{
    char tn[32];
    cli_type_label(s->type, tn, sizeof tn);
    if (s->layout)
        snprintf(buf, size, "%s (%s, dequantized)", tn, s->layout);
    else
        snprintf(buf, size, "%s", tn);
    return buf;
}

static void print_tensor(const dt_diff_tensor *t)
{
    char name[1024], la[96], lb[96], sa[160], sb[160];
    cli_escape(name, sizeof name, t->name[0] ? t->name : "(array)");
    if (t->a.present) {
        side_label(la, sizeof la, &t->a);
        cli_format_shape(sa, sizeof sa, t->a.ndim, t->a.dims);
    }
    if (t->b.present) {
        side_label(lb, sizeof lb, &t->b);
        cli_format_shape(sb, sizeof sb, t->b.ndim, t->b.dims);
    }
    switch (t->state) {
    case DT_DIFF_MISSING:
        printf("%s: missing in B (A: %s %s)\n", name, la, sa);
        return;
    case DT_DIFF_EXTRA:
        printf("%s: extra in B (B: %s %s)\n", name, lb, sb);
        return;
    case DT_DIFF_SHAPE:
        printf("%s: shape changed: %s %s -> %s %s\n", name, la, sa, lb, sb);
        return;
    case DT_DIFF_UNCOMPARABLE:
        printf("%s: %s %s -> %s %s: %s\n", name, la, sa, lb, sb, t->note);
        return;
    case DT_DIFF_COMPARED:
        break;
    }
    const char *verdict = t->identical ? "identical"
                          : t->unequal == 0 ? "equal values"
                          : t->not_close == 0 ? "close"
                                              : "DIFFERENT";
    printf("%s: ", name);
    if (strcmp(la, lb) != 0)
        printf("%s -> %s", la, lb);
    else
        printf("%s", la);
    printf(", shape %s: %s", sa, verdict);
    if (t->unequal)
        printf(", %llu of %llu values unequal", (unsigned long long)t->unequal,
               (unsigned long long)t->values);
    if (t->not_close && t->not_close != t->unequal)
        printf(", %llu not close", (unsigned long long)t->not_close);
    printf("\n");
    if (t->unequal == 0 && !t->a.nan && !t->b.nan && !t->a.posinf && !t->b.posinf &&
        !t->a.neginf && !t->b.neginf)
        return;
    char where[256];
    if (t->has_first_not_close) {
        fmt_index(where, sizeof where, t, t->first_not_close);
        printf("  first not close at %s (value %llu)\n", where,
               (unsigned long long)t->first_not_close);
    }
    if (t->max_abs.has) {
        fmt_index(where, sizeof where, t, t->max_abs.index);
        printf("  max abs error  %.6g at %s: A %.9g, B %.9g\n", t->max_abs.error, where,
               t->max_abs.a, t->max_abs.b);
    }
    if (t->max_rel.has) {
        fmt_index(where, sizeof where, t, t->max_rel.index);
        printf("  max rel error  %.6g at %s: A %.9g, B %.9g\n", t->max_rel.error, where,
               t->max_rel.a, t->max_rel.b);
    }
    if (isnan(t->sqnr_db))
        printf("  SQNR           - (no finite pair)\n");
    else
        printf("  SQNR           %.2f dB over %llu finite pairs\n", t->sqnr_db,
               (unsigned long long)t->finite);
    printf("  NaN A %llu B %llu, +Inf A %llu B %llu, -Inf A %llu B %llu\n",
           (unsigned long long)t->a.nan, (unsigned long long)t->b.nan,
           (unsigned long long)t->a.posinf, (unsigned long long)t->b.posinf,
           (unsigned long long)t->a.neginf, (unsigned long long)t->b.neginf);
}

static void print_text(const dt_diff_result *r, const char *a, const char *b, size_t worst)
{
    char ea[1024], eb[1024];
    cli_escape(ea, sizeof ea, a);
    cli_escape(eb, sizeof eb, b);
    printf("A: %s\nB: %s\ntolerance: |b - a| <= %g + %g * |a|\n\n", ea, eb, r->atol, r->rtol);
    for (size_t i = 0; i < r->n; i++)
        print_tensor(&r->t[i]);
    size_t shown = worst == 0 || worst > r->n ? r->n : worst;
    size_t bad = 0;
    for (size_t i = 0; i < r->n; i++) {
        const dt_diff_tensor *t = &r->t[r->worst[i]];
        bad += !(t->state == DT_DIFF_COMPARED && t->unequal == 0);
    }
    if (shown > bad)
        shown = bad;
    if (shown) {
        printf("\nworst first (not compared, then NaN/Inf mismatches, then SQNR ascending):\n");
        for (size_t i = 0; i < shown; i++) {
            const dt_diff_tensor *t = &r->t[r->worst[i]];
            char name[1024];
            cli_escape(name, sizeof name, t->name[0] ? t->name : "(array)");
            if (t->state != DT_DIFF_COMPARED)
                printf("  %-40s %s\n", name, dt_diff_state_name(t->state));
            else
                printf("  %-40s SQNR %8.2f dB, %llu not close, %llu NaN/Inf mismatches\n", name,
                       t->sqnr_db, (unsigned long long)t->not_close,
                       (unsigned long long)t->nonfinite_mismatch);
        }
    }
    printf("\n%zu tensors: %zu compared (%zu identical, %zu not close), %zu missing in B, "
           "%zu extra in B, %zu shape changed, %zu not comparable: %s\n",
           r->n, r->compared, r->identical, r->not_close, r->missing, r->extra, r->shape,
           r->uncomparable, r->ok ? "EQUAL within tolerance" : "DIFFERENT");
}

int cmd_diff(int argc, char **argv)
{
    const char *cmd = "diff", *a = NULL, *b = NULL;
    dt_diff_options o;
    dt_diff_options_init(&o);
    int json = 0;
    unsigned long worst = 10;
    cli_args args;
    cli_args_init(&args, cmd, argc, argv, options);
    for (;;) {
        int id = cli_args_next(&args);
        if (id == CLI_ARG_END)
            break;
        if (id == CLI_ARG_ERROR)
            return CLI_USAGE;
        unsigned long v;
        switch (id) {
        case CLI_OPT_HELP:
            fputs(help, stdout);
            return CLI_OK;
        case CLI_ARG_POSITIONAL:
            if (cli_in_out(&args, &a, &b) != CLI_OK)
                return CLI_USAGE;
            break;
        case OPT_JSON:
            json = 1;
            break;
        case OPT_ATOL:
        case OPT_TOLERANCE:
            if (parse_double(args.spelled, args.value, &o.atol) != CLI_OK)
                return CLI_USAGE;
            break;
        case OPT_RTOL:
            if (parse_double(args.spelled, args.value, &o.rtol) != CLI_OK)
                return CLI_USAGE;
            break;
        case OPT_RAW:
            o.no_dequantize = 1;
            break;
        case OPT_WORST:
            if (cli_parse_uint(cmd, args.spelled, args.value, 1000000000ul, &worst) != CLI_OK)
                return CLI_USAGE;
            break;
        case CLI_OPT_THREADS:
            if (cli_parse_uint(cmd, "--threads", args.value, 4096, &v) != CLI_OK)
                return CLI_USAGE;
            o.threads = (unsigned)v;
            break;
        default:
            return cli_usage(cmd, "unexpected option");
        }
    }
    if (!a)
        return cli_usage(cmd, "missing A and B");
    if (!b)
        return cli_usage(cmd, "missing B");
    dt_diff_result r;
    dt_io_error err = DT_IO_ERROR_INIT;
    if (dt_diff_run(a, b, &o, &r, &err) != DTCAST_OK) {
        char msg[sizeof err.message * 4];
        cli_escape(msg, sizeof msg, err.message);
        fprintf(stderr, "dtcast: diff: %s\n", msg);
        return CLI_USAGE;
    }
    if (json) {
        char *text = dt_diff_json(&r);
        if (!text) {
            dt_diff_result_free(&r);
            fprintf(stderr, "dtcast: diff: out of memory\n");
            return CLI_USAGE;
        }
        fputs(text, stdout);
        free(text);
    } else {
        print_text(&r, a, b, (size_t)worst);
    }
    int status = r.ok ? CLI_OK : CLI_FAIL;
    dt_diff_result_free(&r);
    return status;
}
