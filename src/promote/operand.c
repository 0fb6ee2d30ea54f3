/* The operand model the rule sets share: categories of types, Python scalar kinds, the operand
 * syntax of the CLI ("int64@0", "py:float"). */
#include "promote/promote.h"

#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

pr_category pr_category_of(dtcast_type type)
{
    const dt_format *f = dt_format_of(type);
    if (!f)
        return PR_OTHER;
    switch (f->tc) {
    case DT_TC_BOOL:
        return PR_BOOL;
    case DT_TC_UINT:
    case DT_TC_SINT:
        return PR_INT;
    case DT_TC_FLOAT:
    case DT_TC_E8M0:
        return PR_FLOAT;
    case DT_TC_COMPLEX:
        return PR_COMPLEX;
    default:
        return PR_OTHER;
    }
}

pr_category pr_scalar_category(dtcast_scalar_kind kind)
{
    switch (kind) {
    case DTCAST_SCALAR_BOOL:
        return PR_BOOL;
    case DTCAST_SCALAR_INT:
        return PR_INT;
    case DTCAST_SCALAR_FLOAT:
        return PR_FLOAT;
    case DTCAST_SCALAR_COMPLEX:
        return PR_COMPLEX;
    default:
        return PR_OTHER;
    }
}

bool pr_is_signed_int(dtcast_type type)
{
    const dt_format *f = dt_format_of(type);
    return f && f->tc == DT_TC_SINT;
}

bool pr_is_unsigned_int(dtcast_type type)
{
    const dt_format *f = dt_format_of(type);
    return f && f->tc == DT_TC_UINT;
}

dtcast_type pr_complex_of(dtcast_type float_type)
{
    switch (float_type) {
    case DTCAST_FLOAT16:
        return DTCAST_COMPLEX32;
    case DTCAST_BFLOAT16: /* torch: "BFloat16 has range equivalent to Float" */
    case DTCAST_FLOAT32:
        return DTCAST_COMPLEX64;
    case DTCAST_FLOAT64:
        return DTCAST_COMPLEX128;
    case DTCAST_COMPLEX32:
    case DTCAST_COMPLEX64:
    case DTCAST_COMPLEX128:
        return float_type;
    default:
        return DTCAST_UNDEFINED;
    }
}

bool pr_is_tensor(const dtcast_operand *op)
{
    return op->scalar == DTCAST_SCALAR_NONE;
}

/* ---- the operand syntax --------------------------------------------------------------------- */

static const struct {
    const char *name;
    dtcast_scalar_kind kind;
} python_scalars[] = {
    {"bool", DTCAST_SCALAR_BOOL},
    {"int", DTCAST_SCALAR_INT},
    {"float", DTCAST_SCALAR_FLOAT},
    {"complex", DTCAST_SCALAR_COMPLEX},
};

/* "0", "3", "?" after the '@' (ranks up to 99). */
static bool parse_rank(const char *text, int *rank)
{
    if (strcmp(text, "?") == 0) {
        *rank = DTCAST_RANK_UNKNOWN;
        return true;
    }
    size_t n = strlen(text);
    if (n == 0 || n > 2 || strspn(text, "0123456789") != n)
        return false;
    int r = 0;
    for (size_t i = 0; i < n; i++)
        r = r * 10 + (text[i] - '0');
    *rank = r;
    return true;
}

dtcast_status dtcast_operand_parse(const char *text, dtcast_operand *operand, dtcast_error *error)
{
    if (!text || !operand)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "operand: NULL %s",
                       text ? "operand" : "text");
    if (strncasecmp(text, "py:", 3) == 0) {
        for (size_t i = 0; i < sizeof python_scalars / sizeof python_scalars[0]; i++) {
            if (strcasecmp(text + 3, python_scalars[i].name) == 0) {
                operand->type = DTCAST_UNDEFINED;
                operand->rank = 0;
                operand->scalar = python_scalars[i].kind;
                return DTCAST_OK;
            }
        }
        return dt_fail(error, DTCAST_ERR_UNKNOWN_TYPE, DT_NO_INDEX,
                       "operand \"%.60s\": Python scalars are py:bool, py:int, py:float, "
                       "py:complex",
                       text);
    }
    char name[64];
    const char *at = strchr(text, '@');
    size_t len = at ? (size_t)(at - text) : strlen(text);
    if (len == 0 || len >= sizeof name)
        return dt_fail(error, DTCAST_ERR_UNKNOWN_TYPE, DT_NO_INDEX,
                       "operand \"%.60s\": no type name", text);
    memcpy(name, text, len);
    name[len] = 0;
    int rank = 1; /* a bare type name is a dimensioned tensor */
    if (at && !parse_rank(at + 1, &rank))
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "operand \"%.60s\": the rank after '@' is 0 to 99 or ?", text);
    dtcast_type type;
    if (strcasecmp(name, "dynamic") == 0)
        type = DTCAST_TYPE_DYNAMIC;
    else if (dtcast_type_from_name(name, &type, NULL) != DTCAST_OK)
        return dt_fail(error, DTCAST_ERR_UNKNOWN_TYPE, DT_NO_INDEX, "operand \"%.60s\": unknown type",
                       text);
    operand->type = type;
    operand->rank = rank;
    operand->scalar = DTCAST_SCALAR_NONE;
    return DTCAST_OK;
}
