/* ONNX operator schemas (onnx_schema.h): the generated table (onnx_schemas.inc, from onnx.defs
 * by files/onnx_schemas.py) and its lookup.
 *
 * Each domain's schemas are one array sorted by (op_type as bytes, since_version), so that the
 * schema an opset uses is found by one binary search: the last entry <= (op, opset) in that
 * order is the op's latest version at or before the opset, if that entry is the op at all. */
#include "files/onnx_schema.h"

#include <string.h>

typedef struct dt_onnx_schema_table {
    const char *domain;
    size_t dlen;
    const dt_onnx_schema *schemas;
    size_t n;
} dt_onnx_schema_table;

#include "files/onnx_schemas.inc"

typedef struct dt_onnx_kernel_table {
    dt_onnx_runtime runtime;
    const char *domain;
    size_t dlen;
    const dt_onnx_kernel *kernels;
    size_t n;
} dt_onnx_kernel_table;

#include "files/onnx_kernels.inc"

#define DT_ONNX_NTABLES (sizeof dt_onnx_schema_tables / sizeof dt_onnx_schema_tables[0])

/* The table of domain; "ai.onnx" is the default domain "". NULL if none. */
static const dt_onnx_schema_table *table_of(const char *domain, size_t dlen)
{
    if (dlen == 7 && memcmp(domain, "ai.onnx", 7) == 0)
        dlen = 0;
    for (size_t i = 0; i < DT_ONNX_NTABLES; i++) {
        const dt_onnx_schema_table *t = &dt_onnx_schema_tables[i];
        if (t->dlen == dlen && (dlen == 0 || memcmp(t->domain, domain, dlen) == 0))
            return t;
    }
    return NULL;
}

/* name (NUL-terminated) against op (oplen bytes), as unsigned bytes, a prefix first: < 0, 0, > 0.
 * A NUL inside op compares as the byte 0 (so "Add\0" is after "Add", matching nothing). */
static int op_cmp(const char *name, const char *op, size_t oplen)
{
    for (size_t k = 0; k < oplen; k++) {
        unsigned char a = (unsigned char)name[k], b = (unsigned char)op[k];
        if (a == 0)
            return -1; /* name is a proper prefix of op */
        if (a != b)
            return a < b ? -1 : 1;
    }
    return name[oplen] != 0;
}

const dt_onnx_schema *dt_onnx_schema_find(const char *domain, size_t dlen, const char *op,
                                          size_t oplen, int64_t opset)
{
    if ((!domain && dlen) || !op)
        return NULL;
    const dt_onnx_schema_table *t = table_of(domain, dlen);
    if (!t)
        return NULL;
    /* [0, lo) <= (op, opset) < [hi, n) */
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = op_cmp(t->schemas[mid].op, op, oplen);
        if (c < 0 || (c == 0 && t->schemas[mid].since <= opset))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || op_cmp(t->schemas[lo - 1].op, op, oplen) != 0)
        return NULL;
    return &t->schemas[lo - 1];
}

const dt_onnx_schema *dt_onnx_schema_all(const char *domain, size_t dlen, size_t *n)
{
    const dt_onnx_schema_table *t = !domain && dlen ? NULL : table_of(domain, dlen);
    if (n)
        *n = t ? t->n : 0;
    return t ? t->schemas : NULL;
}

const char *dt_onnx_schema_version(void)
{
    return DT_ONNX_SCHEMAS_ONNX_VERSION;
}

const dt_onnx_formal *dt_onnx_formal_at(const dt_onnx_formal *f, int n, int k)
{
    if (!f || n <= 0 || k < 0)
        return NULL;
    if (k < n)
        return &f[k];
    return f[n - 1].option == DT_ONNX_VARIADIC ? &f[n - 1] : NULL;
}

/* Whether every argument (types[0 .. n), formals f[0 .. nf)) that constraint c names has one of
 * its types: by the schema constraint's name (the formal's constraint index into con) or by the
 * formal parameter's own name. */
static int args_match(const dt_onnx_constraint *c, const dt_onnx_formal *f, int nf,
                      const dt_onnx_constraint *con, const int32_t *types, int n)
{
    for (int k = 0; k < n; k++) {
        const dt_onnx_formal *p = dt_onnx_formal_at(f, nf, k);
        if (!p || !types[k])
            continue;
        const int named = strcmp(p->name, c->name) == 0 ||
                          (p->constraint >= 0 && strcmp(con[p->constraint].name, c->name) == 0);
        if (named && (types[k] < 1 || types[k] > 63 ||
                      !(c->tensor_types & DT_ONNX_TYPE_BIT(types[k]))))
            return 0;
    }
    return 1;
}

int dt_onnx_kernel_exists(dt_onnx_runtime rt, const char *domain, size_t dlen, const char *op,
                          size_t oplen, int64_t opset, const dt_onnx_schema *s,
                          const int32_t *in_types, int n_in, const int32_t *out_types, int n_out)
{
    if (rt == DT_ONNX_RUNTIME_ANY)
        return 1;
    if ((!domain && dlen) || !op || !s)
        return 0;
    if (dlen == 7 && memcmp(domain, "ai.onnx", 7) == 0)
        dlen = 0;
    const size_t ntab = sizeof dt_onnx_kernel_tables / sizeof dt_onnx_kernel_tables[0];
    for (size_t i = 0; i < ntab; i++) {
        const dt_onnx_kernel_table *t = &dt_onnx_kernel_tables[i];
        if (t->runtime != rt || t->dlen != dlen || (dlen && memcmp(t->domain, domain, dlen)))
            continue;
        /* the first row of op: rows are sorted by op */
        size_t lo = 0, hi = t->n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (op_cmp(t->kernels[mid].op, op, oplen) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < t->n && op_cmp(t->kernels[lo].op, op, oplen) == 0; lo++) {
            const dt_onnx_kernel *k = &t->kernels[lo];
            if (opset < k->since || opset > k->end)
                continue;
            int ok = 1;
            for (int c = 0; c < k->n_con && ok; c++)
                ok = args_match(&k->con[c], s->in, s->n_in, s->con, in_types, n_in) &&
                     args_match(&k->con[c], s->out, s->n_out, s->con, out_types, n_out);
            if (ok)
                return 1;
        }
    }
    return 0;
}

const char *dt_onnx_runtime_name(dt_onnx_runtime rt)
{
    switch (rt) {
    case DT_ONNX_RUNTIME_ANY: return "any";
    case DT_ONNX_RUNTIME_ORT_CPU: return "onnxruntime-cpu";
    }
    return NULL;
}

const char *dt_onnx_runtime_version(dt_onnx_runtime rt)
{
    return rt == DT_ONNX_RUNTIME_ORT_CPU ? DT_ONNX_KERNELS_ORT_VERSION : "";
}
