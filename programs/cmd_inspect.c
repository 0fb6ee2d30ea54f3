/* dtcast inspect PATH: what a tensor file or a checkpoint holds, from its headers alone
 * (files/inspect.h does the reading; this file prints it as a table or as JSON). */
#include "cli.h"

#include "files/inspect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_JSON = CLI_OPT_COMMAND, OPT_SUMMARY };

static const cli_option options[] = {
    {"help", 'h', 0, CLI_OPT_HELP},
    {"json", 0, 0, OPT_JSON},
    {"summary", 's', 0, OPT_SUMMARY},
    {NULL, 0, 0, 0},
};

static const char help[] =
    "usage: dtcast inspect [--json] [--summary] PATH\n"
    "\n"
    "Shows what a tensor file or a checkpoint holds, reading its headers only (never the\n"
    "tensor data, so a checkpoint of any size takes milliseconds). PATH is a .npy, a .pb\n"
    "(ONNX TensorProto), a .safetensors file, a sharded checkpoint's *.safetensors.index.json\n"
    "or a model folder, or an ONNX model (.onnx: its initializers and Constant tensors, its\n"
    "external data files checked). For each tensor: name, type, shape, bytes, the byte offset of\n"
    "its data in its file (the shard, for a sharded checkpoint) and the quantized layout it is\n"
    "part of (the groups dtcast dequantize recognises: scheme, block, scale tensors). Then the\n"
    "totals per type, the safetensors __metadata__, and every problem found: the checks are\n"
    "those of reading the file, with the same messages. In a folder each shard is checked, and\n"
    "the index's weight_map against the shards' headers.\n"
    "\n"
    "Exit status: 0 when everything is valid (warnings allowed), 1 when a problem was found\n"
    "(what could be read is still shown), 2 for a usage error.\n"
    "\n"
    "Options:\n"
    "      --json      one JSON document (docs/files.md, \"dtcast inspect\", has its schema)\n"
    "  -s, --summary   files, quantized layouts, totals and problems, without the tensor list\n"
    "  -h, --help      show this help\n"
    "\n"
    "Examples:\n"
    "  dtcast inspect model.safetensors\n"
    "  dtcast inspect --summary DeepSeek-V3/\n"
    "  dtcast inspect model.onnx\n"
    "  dtcast inspect --json model.safetensors.index.json | jq '.totals'\n";

/* ---- text helpers ----------------------------------------------------------------------------- */

/* text escaped as messages are (cli_escape), malloc'd; NULL when out of memory. */
static char *escaped(const char *text)
{
    size_t size = 4 * strlen(text) + 1;
    char *out = malloc(size);
    if (out)
        cli_escape(out, size, text);
    return out;
}

static void put_padded(const char *text, int width)
{
    char *e = escaped(text);
    const char *shown = e ? e : "?";
    int n = (int)strlen(shown);
    fputs(shown, stdout);
    for (; n < width; n++)
        putchar(' ');
    free(e);
}

static int shown_width(const char *text)
{
    char *e = escaped(text);
    int n = e ? (int)strlen(e) : 1;
    free(e);
    return n;
}

/* "1,234,567" */
static void group_digits(char *buf, size_t size, uint64_t v)
{
    char digits[32];
    snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
    size_t n = strlen(digits), used = 0;
    for (size_t i = 0; i < n && used + 2 < size; i++) {
        if (i && (n - i) % 3 == 0)
            buf[used++] = ',';
        buf[used++] = digits[i];
    }
    buf[used] = 0;
}

/* "10.5 GiB" (or "512 B"). */
static void human_bytes(char *buf, size_t size, uint64_t v)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double x = (double)v;
    int u = 0;
    while (x >= 1024 && u < 5) {
        x /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, "%llu B", (unsigned long long)v);
    else
        snprintf(buf, size, "%.1f %s", x, units[u]);
}

static const char *type_name(dtcast_type type, char *buf, size_t size)
{
    return cli_type_label(type, buf, size);
}

/* A tensor's type: its dtcast type, or a GGUF block type's ggml name (from its storage, "ggml
 * Q4_K blocks"). */
static const char *tensor_type(const dt_insp_tensor *t, char *buf, size_t size)
{
    if (t->type == DTCAST_UNDEFINED && t->storage && strncmp(t->storage, "ggml ", 5) == 0) {
        snprintf(buf, size, "%.*s", (int)strcspn(t->storage + 5, " "), t->storage + 5);
        return buf;
    }
    return type_name(t->type, buf, size);
}

/* What a tensor is in its quantized layout: "fp8-block codes of X [128x128]". */
static void quant_text(const dt_inspect *r, const dt_insp_tensor *t, char *buf, size_t size)
{
    if (t->group == DT_QT_NONE) {
        snprintf(buf, size, "-");
        return;
    }
    const dt_qgroup *g = &r->plan.groups[t->group];
    int64_t block[2];
    const char *gran = dt_insp_granularity(g, block);
    char *name = escaped(g->name);
    if (t->role == DT_INSP_CODES) {
        char *scales = g->scales != DT_QT_NONE ? escaped(r->tensors[g->scales].name) : NULL;
        char how[64];
        if (strcmp(gran, "block") == 0)
            snprintf(how, sizeof how, "blocks %lldx%lld", (long long)block[0],
                     (long long)block[1]);
        else
            snprintf(how, sizeof how, "per %s", gran);
        snprintf(buf, size, "%s codes, %s, scales %s", dt_qgroup_name(g), how,
                 scales ? scales : "?");
        free(scales);
    } else {
        snprintf(buf, size, "%s %s of %s", dt_qgroup_name(g), dt_insp_role_name(t->role),
                 name ? name : "?");
    }
    free(name);
}

/* ---- the table -------------------------------------------------------------------------------- */

static void print_file(const dt_inspect *r, const dt_insp_file *f)
{
    static const char *const kinds[] = {"raw data", "npy", "pb", "safetensors", "index", "onnx",
                                        "?"};
    char size[64], human[32];
    printf("\n");
    put_padded(f->path, 0);
    if (f->size == UINT64_MAX) {
        printf(" (%s, not read)\n", f->gguf ? "gguf" : kinds[(unsigned)f->kind < 7 ? f->kind : 6]);
    } else {
        group_digits(size, sizeof size, f->size);
        human_bytes(human, sizeof human, f->size);
        printf(" (%s, %s bytes", f->gguf ? "gguf" : kinds[(unsigned)f->kind < 7 ? f->kind : 6],
               size);
        if (f->size >= 1024)
            printf(" = %s", human);
        if ((f->kind == DT_FILE_SAFETENSORS || f->gguf) && f->ok)
            printf(", header %llu bytes", (unsigned long long)f->data_start);
        if (f->kind == DT_FILE_SAFETENSORS_INDEX && r->has_index) {
            printf(", %zu weight_map entries", r->index_entries);
            if (r->has_total_size)
                printf(", total_size %llu", (unsigned long long)r->total_size);
        }
        printf("%s)\n", f->ok ? "" : ", not valid");
    }
    if (f->has_meta) {
        printf(f->gguf ? "  metadata:" : "  __metadata__:");
        if (f->nmeta == 0)
            printf(" {}");
        for (size_t k = 0; k < f->nmeta; k++) {
            printf(k ? ", " : " ");
            put_padded(f->meta[k].key, 0);
            printf("=");
            put_padded(f->meta[k].value, 0);
        }
        printf("\n");
    }
}

static void print_tensors(const dt_inspect *r, const dt_insp_file *f)
{
    if (f->ntensors == 0)
        return;
    int wname = 4, wtype = 5, wshape = 5, wbytes = 5, woff = 6;
    char buf[512];
    for (size_t i = f->first; i < f->first + f->ntensors; i++) {
        const dt_insp_tensor *t = &r->tensors[i];
        int n = shown_width(t->name);
        wname = n > wname ? n : wname;
        n = (int)strlen(tensor_type(t, buf, sizeof buf));
        wtype = n > wtype ? n : wtype;
        cli_format_shape(buf, sizeof buf, t->ndim, t->dims);
        n = (int)strlen(buf);
        wshape = n > wshape ? n : wshape;
        n = snprintf(buf, sizeof buf, "%llu", (unsigned long long)t->bytes);
        wbytes = n > wbytes ? n : wbytes;
        n = t->offset == UINT64_MAX ? 1
                                    : snprintf(buf, sizeof buf, "%llu", (unsigned long long)t->offset);
        woff = n > woff ? n : woff;
    }
    if (wname > 64)
        wname = 64;
    printf("  %-*s  %-*s  %-*s  %*s  %*s  %s\n", wname, "NAME", wtype, "DTYPE", wshape, "SHAPE",
           wbytes, "BYTES", woff, "OFFSET", "QUANTIZED");
    for (size_t i = f->first; i < f->first + f->ntensors; i++) {
        const dt_insp_tensor *t = &r->tensors[i];
        char type[32], shape[512], q[1024], off[32];
        cli_format_shape(shape, sizeof shape, t->ndim, t->dims);
        quant_text(r, t, q, sizeof q);
        if (t->offset == UINT64_MAX)
            snprintf(off, sizeof off, "-");
        else
            snprintf(off, sizeof off, "%llu", (unsigned long long)t->offset);
        printf("  ");
        put_padded(t->name, wname);
        printf("  %-*s  %-*s  %*llu  %*s  %s", wtype, tensor_type(t, type, sizeof type),
               wshape, shape, wbytes, (unsigned long long)t->bytes, woff, off, q);
        if (t->storage) {
            printf("  [%s", t->storage);
            if (t->file != (size_t)(f - r->files)) {
                printf(" in ");
                put_padded(r->files[t->file].path, 0);
            }
            printf("]");
        }
        printf("\n");
    }
}

static void print_groups(const dt_inspect *r)
{
    if (!r->has_plan || r->plan.ngroups == 0)
        return;
    printf("\nquantized tensors (%zu):\n", r->plan.ngroups);
    for (size_t i = 0; i < r->plan.ngroups; i++) {
        const dt_qgroup *g = &r->plan.groups[i];
        int64_t block[2];
        const char *gran = dt_insp_granularity(g, block);
        char shape[512], elem[32];
        cli_format_shape(shape, sizeof shape, g->ndim, g->dims);
        printf("  ");
        put_padded(g->name, 0);
        printf(": %s, %s %s", dt_qgroup_name(g), type_name(dt_qgroup_codes_type(g), elem, sizeof elem),
               shape);
        if (strcmp(gran, "block") == 0)
            printf(", blocks of %lldx%lld", (long long)block[0], (long long)block[1]);
        else
            printf(", one scale per %s", gran);
        const size_t parts[3] = {g->codes, g->scales, g->global};
        static const char *const what[3] = {"codes", "scales", "global scale"};
        for (int k = 0; k < 3; k++)
            if (parts[k] != DT_QT_NONE) {
                printf("; %s ", what[k]);
                put_padded(r->tensors[parts[k]].name, 0);
            }
        printf("\n");
    }
}

static void print_totals(const dt_inspect *r)
{
    char elems[48], bytes[48], human[32], type[32];
    printf("\ntotals:\n  %-18s %8s %16s %18s\n", "DTYPE", "TENSORS", "ELEMENTS", "BYTES");
    for (size_t i = 0; i < r->ntotals; i++) {
        const dt_insp_total *t = &r->totals[i];
        group_digits(elems, sizeof elems, t->elements);
        group_digits(bytes, sizeof bytes, t->bytes);
        printf("  %-18s %8llu %16s %18s\n",
               t->type == DTCAST_UNDEFINED && r->kind == DT_INSP_GGUF
                   ? "ggml blocks"
                   : type_name(t->type, type, sizeof type),
               (unsigned long long)t->tensors, elems, bytes);
    }
    group_digits(elems, sizeof elems, r->elements);
    group_digits(bytes, sizeof bytes, r->bytes);
    human_bytes(human, sizeof human, r->bytes);
    printf("  %-18s %8zu %16s %18s (%s)\n", "all", r->ntensors, elems, bytes, human);
}

static void print_text(const dt_inspect *r, int summary)
{
    put_padded(r->path, 0);
    printf(": %s, %zu file%s, %zu tensor%s", dt_insp_kind_name(r->kind), r->nfiles,
           r->nfiles == 1 ? "" : "s", r->ntensors, r->ntensors == 1 ? "" : "s");
    if (r->kind == DT_INSP_ONNX && r->opset >= 0)
        printf(", opset %lld", (long long)r->opset);
    printf("\n");
    for (size_t i = 0; i < r->nfiles; i++) {
        print_file(r, &r->files[i]);
        if (!summary)
            print_tensors(r, &r->files[i]);
    }
    print_groups(r);
    print_totals(r);
    if (r->nproblems) {
        printf("\nproblems (%zu error%s, %zu warning%s):\n", r->nerrors,
               r->nerrors == 1 ? "" : "s", r->nproblems - r->nerrors,
               r->nproblems - r->nerrors == 1 ? "" : "s");
        for (size_t i = 0; i < r->nproblems; i++) {
            printf("  %s: ", r->problems[i].warning ? "warning" : "error");
            put_padded(r->problems[i].message, 0);
            printf("\n");
        }
    } else {
        printf("\nno problems found\n");
    }
}

/* ---- the command ------------------------------------------------------------------------------ */

int cmd_inspect(int argc, char **argv)
{
    cli_args a;
    const char *path = NULL;
    int json = 0, summary = 0;
    cli_args_init(&a, "inspect", argc, argv, options);
    for (;;) {
        int id = cli_args_next(&a);
        if (id == CLI_ARG_END)
            break;
        if (id == CLI_ARG_ERROR)
            return CLI_USAGE;
        switch (id) {
        case CLI_OPT_HELP:
            fputs(help, stdout);
            return CLI_OK;
        case OPT_JSON:
            json = 1;
            break;
        case OPT_SUMMARY:
            summary = 1;
            break;
        case CLI_ARG_POSITIONAL:
            if (path)
                return cli_usage("inspect", "one PATH (got '%s' after '%s')", a.value, path);
            path = a.value;
            break;
        default:
            break;
        }
    }
    if (!path)
        return cli_usage("inspect", "missing PATH");
    if (json && summary)
        return cli_usage("inspect", "--summary does not apply to --json");
    dt_inspect r;
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st = dt_inspect_path(path, &r, NULL, NULL, &err);
    int status = CLI_OK;
    if (st == DTCAST_ERR_OUT_OF_MEMORY) {
        status = cli_fail("%s", err.message);
    } else if (json) {
        char *text = NULL;
        size_t len = 0;
        if (dt_inspect_json(&r, &text, &len, &err) != DTCAST_OK)
            status = cli_fail("%s", err.message);
        else
            fwrite(text, 1, len, stdout);
        free(text);
    } else if (r.kind != DT_INSP_UNKNOWN) {
        print_text(&r, summary);
    }
    if (status == CLI_OK && st != DTCAST_OK) {
        if (r.nerrors > 1)
            status = cli_fail("%s (and %zu more problem%s%s)", err.message, r.nerrors - 1,
                              r.nerrors > 2 ? "s" : "", json ? ": see \"problems\"" : " above");
        else
            status = cli_fail("%s", err.message);
    }
    dt_inspect_free(&r);
    return status;
}
