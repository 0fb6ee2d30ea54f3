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
