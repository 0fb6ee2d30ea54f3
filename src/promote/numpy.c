/* NumPy: np.promote_types (the smallest type both can be cast to safely) and, for Python
 * scalars, NEP 50's weak promotion: a Python int, float or complex never widens an array of its
 * own category or above. 0-dim arrays are arrays like any other under NEP 50. */
#include "promote/promote.h"

#include "internal.h"

#include <stdio.h>

/* NumPy has these types; the others (bfloat16, float8, int4, complex32, ...) are not numpy's. */
static bool numpy_has(dtcast_type t)
{
    switch (t) {
    case DTCAST_BOOL:
    case DTCAST_INT8:
    case DTCAST_INT16:
    case DTCAST_INT32:
    case DTCAST_INT64:
    case DTCAST_UINT8:
    case DTCAST_UINT16:
    case DTCAST_UINT32:
    case DTCAST_UINT64:
    case DTCAST_FLOAT16:
    case DTCAST_FLOAT32:
    case DTCAST_FLOAT64:
    case DTCAST_COMPLEX64:
    case DTCAST_COMPLEX128:
        return true;
    default:
        return false;
    }
}

static dtcast_type signed_of_bits(int bits)
{
    switch (bits) {
    case 8:
        return DTCAST_INT8;
    case 16:
        return DTCAST_INT16;
    case 32:
        return DTCAST_INT32;
    default:
        return DTCAST_INT64;
    }
}

static dtcast_type wider(dtcast_type a, dtcast_type b)
{
    return dtcast_type_bits(a) >= dtcast_type_bits(b) ? a : b;
}

/* NumPy: the smallest float that holds every value of an integer of `bits` bits safely
 * (8 -> float16, 16 -> float32, 32 and 64 -> float64). */
static dtcast_type float_for_int(int bits)
{
    return bits <= 8 ? DTCAST_FLOAT16 : bits <= 16 ? DTCAST_FLOAT32 : DTCAST_FLOAT64;
}

/* NumPy: the smallest complex whose parts hold a float (float16, float32 -> complex64). */
static dtcast_type complex_for_float(dtcast_type f)
{
    return f == DTCAST_FLOAT64 ? DTCAST_COMPLEX128 : DTCAST_COMPLEX64;
}

/* np.promote_types(a, b) for two numpy types. */
static dtcast_type promote_types(dtcast_type a, dtcast_type b)
{
    if (a == b || b == DTCAST_BOOL)
        return a;
    if (a == DTCAST_BOOL)
        return b;
    pr_category ca = pr_category_of(a), cb = pr_category_of(b);
    if (ca > cb) { /* keep a the lower category */
        dtcast_type t = a;
        a = b;
        b = t;
        pr_category c = ca;
        ca = cb;
        cb = c;
    }
    int abits = dtcast_type_bits(a);
    if (ca == PR_INT && cb == PR_INT) {
        if (pr_is_signed_int(a) == pr_is_signed_int(b))
            return wider(a, b);
        /* NumPy: signed with unsigned -> a signed type wider than the unsigned one; int64 with
         * uint64 has none and becomes float64. */
        dtcast_type s = pr_is_signed_int(a) ? a : b, u = pr_is_signed_int(a) ? b : a;
        int ubits = dtcast_type_bits(u);
        if (dtcast_type_bits(s) > ubits)
            return s;
        return ubits >= 64 ? DTCAST_FLOAT64 : signed_of_bits(2 * ubits);
    }
    if (ca == PR_INT && cb == PR_FLOAT)
        return wider(b, float_for_int(abits));
    if (ca == PR_INT) /* with complex */
        return wider(b, complex_for_float(float_for_int(abits)));
    if (ca == PR_FLOAT && cb == PR_FLOAT)
        return wider(a, b);
    if (ca == PR_FLOAT) /* with complex */
        return wider(b, complex_for_float(a));
    return wider(a, b); /* two complex types */
}

/* NEP 50: the default type of a Python scalar kind (bool, int64, float64, complex128). */
static dtcast_type python_default(dtcast_scalar_kind kind)
{
    switch (kind) {
    case DTCAST_SCALAR_BOOL:
        return DTCAST_BOOL;
    case DTCAST_SCALAR_INT:
        return DTCAST_INT64;
    case DTCAST_SCALAR_FLOAT:
        return DTCAST_FLOAT64;
    default:
        return DTCAST_COMPLEX128;
    }
}

/* NEP 50: a weak Python scalar of `kind` with an array of type t. */
static dtcast_type weak_with(dtcast_scalar_kind kind, dtcast_type t)
{
    pr_category ck = pr_scalar_category(kind), ct = pr_category_of(t);
    if (ct >= ck)
        return t; /* NEP 50: the array's type when its category is not lower */
    if (ck == PR_COMPLEX && ct == PR_FLOAT)
        return complex_for_float(t); /* NEP 50: float32 + 1j -> complex64 */
    return python_default(kind);     /* NEP 50: int8 + 1.0 -> float64 */
}

dtcast_status pr_numpy(const dtcast_operand *a, const dtcast_operand *b, dtcast_type *out,
                       dtcast_error *m)
{
    const dtcast_operand *ops[2] = {a, b};
    for (int i = 0; i < 2; i++)
        if (pr_is_tensor(ops[i]) && !numpy_has(ops[i]->type))
            return dt_fail(m, DTCAST_ERR_PROMOTION, DT_NO_INDEX, "data type '%s' not understood",
                           dtcast_type_name(ops[i]->type));
    bool ta = pr_is_tensor(a), tb = pr_is_tensor(b);
    if (ta && tb)
        *out = promote_types(a->type, b->type);
    else if (ta)
        *out = weak_with(b->scalar, a->type);
    else if (tb)
        *out = weak_with(a->scalar, b->type);
    else /* NEP 50: two Python scalars promote as their default types */
        *out = promote_types(python_default(a->scalar), python_default(b->scalar));
    return DTCAST_OK;
}
