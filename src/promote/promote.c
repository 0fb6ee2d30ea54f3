/* dtcast_promote(): checks what every rule set needs checked, then asks the one named. */
#include "promote/promote.h"

#include "internal.h"

#include <string.h>
#include <strings.h>

/* Indexed by dtcast_promote_rules. */
static const char *const rules_names[] = {"openvino", "aclnn", "torch", "numpy", "jax",
                                          "numpy+ml_dtypes"};

#define NRULES (sizeof rules_names / sizeof rules_names[0])

void dtcast_promote_attrs_init(dtcast_promote_attrs *attrs)
{
    if (attrs)
        memset(attrs, 0, sizeof *attrs);
}

const char *dtcast_promote_rules_name(dtcast_promote_rules rules)
{
    if ((unsigned)rules >= NRULES)
        return NULL;
    return rules_names[rules];
}

dtcast_status dtcast_promote_rules_from_name(const char *name, dtcast_promote_rules *rules,
                                             dtcast_error *error)
{
    if (!name || !rules)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "rule set: NULL %s",
                       name ? "rules" : "name");
    for (size_t i = 0; i < NRULES; i++) {
        if (strcasecmp(name, rules_names[i]) == 0) {
            *rules = (dtcast_promote_rules)i;
            return DTCAST_OK;
        }
    }
    return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                   "unknown rule set \"%.60s\" (openvino, aclnn, torch, numpy, jax, "
                   "numpy+ml_dtypes)",
                   name);
}

/* The checks that do not depend on the rule set: a known scalar kind, a rank of -1 or more, a
 * type that is a type (or dynamic). */
static dtcast_status check_operand(const dtcast_operand *op, const char *which, dtcast_error *m)
{
    if (!op)
        return dt_fail(m, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "operand %s is NULL", which);
    if ((unsigned)op->scalar > (unsigned)DTCAST_SCALAR_COMPLEX)
        return dt_fail(m, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "operand %s: invalid Python scalar kind %d",
                       which, (int)op->scalar);
    if (!pr_is_tensor(op))
        return DTCAST_OK;
    if (op->rank < DTCAST_RANK_UNKNOWN)
        return dt_fail(m, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "operand %s: invalid rank %d", which,
                       op->rank);
    if (op->type != DTCAST_TYPE_DYNAMIC && !dtcast_type_name(op->type))
        return dt_fail(m, DTCAST_ERR_UNKNOWN_TYPE, DT_NO_INDEX, "operand %s: unknown type %d", which,
                       (int)op->type);
    return DTCAST_OK;
}

/* What only some rule sets take: dynamic (openvino), Python scalars (torch, numpy,
 * numpy+ml_dtypes, jax), an unknown rank (openvino; numpy and jax never look at ranks). */
static dtcast_status check_for_rules(dtcast_promote_rules rules, const dtcast_operand *op,
                                     const char *which, dtcast_error *m)
{
    const char *name = rules_names[rules];
    if (pr_is_tensor(op) && op->type == DTCAST_TYPE_DYNAMIC && rules != DTCAST_RULES_OPENVINO)
        return dt_fail(m, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "operand %s: dynamic is OpenVINO's element type; the %s rules do not take it",
                       which, name);
    if (!pr_is_tensor(op) && (rules == DTCAST_RULES_OPENVINO || rules == DTCAST_RULES_ACLNN))
        return dt_fail(m, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "operand %s: the %s rules take tensors, not Python scalars", which, name);
    if (pr_is_tensor(op) && op->rank == DTCAST_RANK_UNKNOWN &&
        (rules == DTCAST_RULES_TORCH || rules == DTCAST_RULES_ACLNN))
        return dt_fail(m, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "operand %s: the %s rules need the rank (0 or at least 1)", which, name);
    return DTCAST_OK;
}

dtcast_status dtcast_promote(dtcast_type *result, dtcast_promote_rules rules,
                             const dtcast_operand *a, const dtcast_operand *b,
                             const dtcast_promote_attrs *attrs, dtcast_error *error)
{
    dtcast_error *m = error;
    if ((unsigned)rules >= NRULES)
        return dt_fail(m, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "unknown rule set %d",
                       (int)rules);
    if (!result)
        return dt_fail(m, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "result is NULL");
    dtcast_status st;
    if ((st = check_operand(a, "a", m)) != DTCAST_OK ||
        (st = check_operand(b, "b", m)) != DTCAST_OK ||
        (st = check_for_rules(rules, a, "a", m)) != DTCAST_OK ||
        (st = check_for_rules(rules, b, "b", m)) != DTCAST_OK)
        return st;
    /* float6's API 1.0 codes (105, 106) are the same types as 27, 28 */
    dtcast_operand ca = *a, cb = *b;
    ca.type = dt_type_canonical(ca.type);
    cb.type = dt_type_canonical(cb.type);
    a = &ca;
    b = &cb;
    dtcast_promote_attrs defaults;
    dtcast_promote_attrs_init(&defaults);
    if (!attrs)
        attrs = &defaults;

    dtcast_type out = DTCAST_UNDEFINED;
    switch (rules) {
    case DTCAST_RULES_OPENVINO:
        st = pr_openvino(a, b, attrs, &out, m);
        break;
    case DTCAST_RULES_ACLNN:
        st = pr_aclnn(a, b, &out, m);
        break;
    case DTCAST_RULES_TORCH:
        st = pr_torch(a, b, &out, m);
        break;
    case DTCAST_RULES_NUMPY:
        st = pr_numpy(a, b, &out, m);
        break;
    case DTCAST_RULES_NUMPY_ML_DTYPES:
        st = pr_numpy_ml_dtypes(a, b, &out, m);
        break;
    default:
        st = pr_jax(a, b, attrs, &out, m);
        break;
    }
    if (st == DTCAST_OK)
        *result = out;
    return st;
}
