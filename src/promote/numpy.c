/* NumPy: np.promote_types (the smallest type both can be cast to safely) and, for Python
 * scalars, NEP 50's weak promotion: a Python int, float or complex never widens an array of its
 * own category or above. 0-dim arrays are arrays like any other under NEP 50.
 *
 * "numpy+ml_dtypes" adds the types ml_dtypes 0.7.0 registers with numpy 2 (bfloat16, the float8,
 * float6 and float4 types, float8_e8m0fnu, int1/int2/int4/uint1/uint2/uint4, complex32,
 * bcomplex32), as their
 * common_dtype computes it: if one type casts safely to the other, that type; else the first of
 * numpy's builtin types, from the smallest of the higher kind (bool < unsigned < signed < float <
 * complex) upward, that both cast to safely. Two different ml_dtypes integers skip the first step
 * (uint1 + uint2 -> uint8 although uint1 casts safely to uint2). Which casts are safe is
 * ml_safe() below. */
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

/* ---- numpy + ml_dtypes 0.7.0 ------------------------------------------------------------------ */

/* The types of ml_dtypes 0.7.0 that dtcast has: all of them (ml_safe() derives their casts from
 * their formats). */
static bool ml_dtypes_has(dtcast_type t)
{
    switch (t) {
    case DTCAST_BFLOAT16:
    case DTCAST_FLOAT8E3M4:
    case DTCAST_FLOAT8E4M3:
    case DTCAST_FLOAT8E4M3B11FNUZ:
    case DTCAST_FLOAT8E4M3FN:
    case DTCAST_FLOAT8E4M3FNUZ:
    case DTCAST_FLOAT8E5M2:
    case DTCAST_FLOAT8E5M2FNUZ:
    case DTCAST_FLOAT8E5M3FNU:
    case DTCAST_FLOAT8E8M0:
    case DTCAST_FLOAT6E2M3FN:
    case DTCAST_FLOAT6E3M2FN:
    case DTCAST_FLOAT4E2M1:
    case DTCAST_INT2:
    case DTCAST_INT4:
    case DTCAST_UINT1:
    case DTCAST_INT1:
    case DTCAST_UINT2:
    case DTCAST_UINT4:
    case DTCAST_COMPLEX32:
    case DTCAST_BCOMPLEX32:
        return true;
    default:
        return false;
    }
}

/* numpy's legacy scalar kinds, the order its promotion search climbs: bool, unsigned, signed,
 * float, complex. */
static int ml_kind(dtcast_type t)
{
    switch (pr_category_of(t)) {
    case PR_BOOL:
        return 0;
    case PR_INT:
        return pr_is_signed_int(t) ? 2 : 1;
    case PR_FLOAT:
        return 3;
    default:
        return 4;
    }
}

/* Two values are the same number (the sign of a zero aside). */
static bool same_value(const dt_value *x, const dt_value *y)
{
    if (x->cls != y->cls)
        return false;
    if (x->cls != DT_FINITE)
        return x->cls != DT_INF || x->neg == y->neg;
    uint64_t xs = x->sig, ys = y->sig;
    int32_t xe = x->exp, ye = y->exp;
    while (!(xs & 1)) {
        xs >>= 1;
        xe++;
    }
    while (!(ys & 1)) {
        ys >>= 1;
        ye++;
    }
    return x->neg == y->neg && xs == ys && xe == ye;
}

/* Every finite value of `from` (at most 16 bits wide) is one of float `to`'s, and so are its
 * infinities; NaNs and the sign of zero do not count (ml_dtypes: float4_e2m1fn casts safely to
 * float8_e4m3b11fnuz, which has no -0; float8_e4m3 with its Inf does not to float8_e4m3fnuz). */
static bool values_within(dtcast_type from, dtcast_type to)
{
    if (from == to)
        return true;
    const dt_format *ff = dt_format_of(from), *ft = dt_format_of(to);
    if (!ff || !ft || ff->bits > 16)
        return false;
    dt_rules rules;
    dt_rules_for(ft, NULL, &rules);
    for (uint64_t code = 0; code < (UINT64_C(1) << ff->bits); code++) {
        dt_value v, back;
        dt_decode(ff, code, &v);
        if (v.cls == DT_NAN)
            continue;
        dt_decode(ft, dt_encode(ft, &v, &rules), &back);
        if (!same_value(&v, &back))
            return false;
    }
    return true;
}

/* Integer a's range lies within integer b's. */
static bool int_within(dtcast_type a, dtcast_type b)
{
    int na = dtcast_type_bits(a), nb = dtcast_type_bits(b);
    if (pr_is_signed_int(a))
        return pr_is_signed_int(b) && nb >= na;
    return pr_is_signed_int(b) ? nb > na : nb >= na;
}

/* np.can_cast(a, b, "safe") with ml_dtypes 0.7.0 loaded. */
static bool ml_safe(dtcast_type a, dtcast_type b)
{
    if (a == b || a == DTCAST_BOOL)
        return true; /* bool casts safely to every type, float8_e8m0fnu (no zero) included */
    bool ma = ml_dtypes_has(a), mb = ml_dtypes_has(b);
    if (!ma && !mb)
        return promote_types(a, b) == b; /* numpy's own types */
    pr_category ca = pr_category_of(a), cb = pr_category_of(b);
    if (cb < ca || cb == PR_BOOL)
        return false;
    if (ca == PR_INT && cb == PR_INT)
        return int_within(a, b);
    /* ml_dtypes registers int8 and uint8 as casting safely to each of its floats and complex
     * types (float8_e4m3fn, float4_e2m1fn, float8_e8m0fnu, ...), holding their values or not */
    if (a == DTCAST_INT8 || a == DTCAST_UINT8)
        return true;
    if (ca == PR_COMPLEX) /* complex32, bcomplex32 to complex64, complex128; numpy's complex to
                           * none of its */
        return ma && (b == DTCAST_COMPLEX64 || b == DTCAST_COMPLEX128);
    if (ca == PR_FLOAT && ma && !mb) /* its floats to float32 and up, not to float16 */
        return b == DTCAST_FLOAT32 || b == DTCAST_FLOAT64 || b == DTCAST_COMPLEX64 ||
               b == DTCAST_COMPLEX128;
    /* the rest (an ml_dtypes integer to a float or complex, one of its floats to another or to
     * complex32, float16 to complex32): where every value fits */
    const dt_format *fb = dt_format_of(b);
    return values_within(a, cb == PR_COMPLEX ? fb->part : b);
}

/* np.promote_types(a, b) with ml_dtypes 0.7.0 loaded; DTCAST_UNDEFINED if there is none. */
static dtcast_type ml_promote_types(dtcast_type a, dtcast_type b)
{
    bool ma = ml_dtypes_has(a), mb = ml_dtypes_has(b);
    if (!ma && !mb)
        return promote_types(a, b);
    if (a == b)
        return a;
    if (!(ma && mb && pr_category_of(a) == PR_INT && pr_category_of(b) == PR_INT)) {
        if (ml_safe(b, a))
            return a;
        if (ml_safe(a, b))
            return b;
    }
    /* numpy's types by kind and width, each kind from its smallest */
    static const dtcast_type ladder[] = {
        DTCAST_UINT8,   DTCAST_UINT16,  DTCAST_UINT32,    DTCAST_UINT64,    DTCAST_INT8,
        DTCAST_INT16,   DTCAST_INT32,   DTCAST_INT64,     DTCAST_FLOAT16,   DTCAST_FLOAT32,
        DTCAST_FLOAT64, DTCAST_COMPLEX64, DTCAST_COMPLEX128};
    static const size_t kind_start[] = {0, 0, 4, 8, 11};
    int k = ml_kind(a) > ml_kind(b) ? ml_kind(a) : ml_kind(b);
    for (size_t i = kind_start[k]; i < sizeof ladder / sizeof ladder[0]; i++)
        if (ml_safe(a, ladder[i]) && ml_safe(b, ladder[i]))
            return ladder[i];
    return DTCAST_UNDEFINED;
}

/* NEP 50 with ml_dtypes, the array's type asked first (np.result_type(array, scalar)): as
 * weak_with; a Python complex with a float takes the first complex type the float casts to
 * safely (every ml_dtypes float -> complex64). */
static dtcast_type ml_weak_with(dtcast_scalar_kind kind, dtcast_type t)
{
    pr_category ck = pr_scalar_category(kind), ct = pr_category_of(t);
    if (ct >= ck)
        return t;
    if (ck == PR_COMPLEX && ct == PR_FLOAT)
        return ml_safe(t, DTCAST_COMPLEX64) ? DTCAST_COMPLEX64 : DTCAST_COMPLEX128;
    return python_default(kind);
}

/* np.result_type(scalar, array): numpy asks the Python scalar's abstract DType first. Its
 * common_dtype with a type that is not numpy's falls back to that type's common type with
 * uint8 (a Python int), float16 (a float) or complex64 (a complex): 1.0 with a bfloat16 array
 * gives float32 and 1 with an int4 array int16 in this order, bfloat16 and int4 in the other.
 * A Python bool is numpy's bool, in either order. */
static dtcast_type ml_scalar_first(dtcast_scalar_kind kind, dtcast_type t)
{
    if (!ml_dtypes_has(t) || kind == DTCAST_SCALAR_BOOL)
        return ml_weak_with(kind, t);
    dtcast_type probe = kind == DTCAST_SCALAR_INT     ? DTCAST_UINT8
                        : kind == DTCAST_SCALAR_FLOAT ? DTCAST_FLOAT16
                                                      : DTCAST_COMPLEX64;
    return ml_promote_types(t, probe);
}

dtcast_status pr_numpy_ml_dtypes(const dtcast_operand *a, const dtcast_operand *b,
                                 dtcast_type *out, dtcast_error *m)
{
    const dtcast_operand *ops[2] = {a, b};
    for (int i = 0; i < 2; i++)
        if (pr_is_tensor(ops[i]) && !numpy_has(ops[i]->type) && !ml_dtypes_has(ops[i]->type))
            return dt_fail(m, DTCAST_ERR_PROMOTION, DT_NO_INDEX, "data type '%s' not understood",
                           dtcast_type_name(ops[i]->type));
    bool ta = pr_is_tensor(a), tb = pr_is_tensor(b);
    dtcast_type r;
    if (ta && tb)
        r = ml_promote_types(a->type, b->type);
    else if (ta)
        r = ml_weak_with(b->scalar, a->type);
    else if (tb)
        r = ml_scalar_first(a->scalar, b->type);
    else
        r = promote_types(python_default(a->scalar), python_default(b->scalar));
    if (r == DTCAST_UNDEFINED) /* numpy's DTypePromotionError; no pair of 0.7.0's types has it
                                * (only two tensors get here) */
        return dt_fail(m, DTCAST_ERR_PROMOTION, DT_NO_INDEX,
                       "invalid type promotion with custom data type (%s and %s)",
                       ta ? dtcast_type_name(a->type) : "a Python scalar",
                       tb ? dtcast_type_name(b->type) : "a Python scalar");
    *out = r;
    return DTCAST_OK;
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
