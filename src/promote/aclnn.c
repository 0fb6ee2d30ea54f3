/* Ascend aclnn type derivation (互推导关系): the table of Ascend's type-derivation document as
 * the shipped library computes it, the bool and uint16/32/64 rules beside it, and 0-dim tensors
 * (docs/promotion.md, "aclnn"). */
#include "promote/promote.h"

#include "internal.h"

#include <stddef.h>


/* aclnn: the table's axes, in the document's order. */
static const dtcast_type axis[] = {
    DTCAST_FLOAT32, DTCAST_FLOAT16, DTCAST_FLOAT64,   DTCAST_BFLOAT16,  DTCAST_INT8,
    DTCAST_UINT8,   DTCAST_INT16,   DTCAST_INT32,     DTCAST_INT64,     DTCAST_COMPLEX32,
    DTCAST_COMPLEX64, DTCAST_COMPLEX128,
};

#define NAXIS (sizeof axis / sizeof axis[0])

#define F32 DTCAST_FLOAT32
#define F16 DTCAST_FLOAT16
#define F64 DTCAST_FLOAT64
#define BF DTCAST_BFLOAT16
#define S8 DTCAST_INT8
#define U8 DTCAST_UINT8
#define S16 DTCAST_INT16
#define S32 DTCAST_INT32
#define S64 DTCAST_INT64
#define C32 DTCAST_COMPLEX32
#define C64 DTCAST_COMPLEX64
#define C128 DTCAST_COMPLEX128

/* aclnn: the document's table. Cells marked * are where the document is wrong and the library's
 * value is used (docs/differences.md and docs/promotion.md, "aclnn"): bf16 x f16 (document: f64),
 * f64 x c32 and f64 x c64 (document: c64), c32 x f64 (document: c64), c64 x f64 (document: c64),
 * bf16 x c32 and c32 x bf16 (document: c32). */
static const dtcast_type table[NAXIS][NAXIS] = {
    /*          f32   f16   f64    bf16  s8    u8    s16   s32   s64   c32    c64    c128 */
    /* f32  */ {F32,  F32,  F64,   F32,  F32,  F32,  F32,  F32,  F32,  C64,   C64,   C128},
    /* f16  */ {F32,  F16,  F64,   F32,  F16,  F16,  F16,  F16,  F16,  C32,   C64,   C128},
    /* f64  */ {F64,  F64,  F64,   F64,  F64,  F64,  F64,  F64,  F64,  C128 /* * */, C128 /* * */, C128},
    /* bf16 */ {F32,  F32 /* * */, F64, BF, BF,  BF,   BF,   BF,   BF,   C64 /* * */, C64, C128},
    /* s8   */ {F32,  F16,  F64,   BF,   S8,   S16,  S16,  S32,  S64,  C32,   C64,   C128},
    /* u8   */ {F32,  F16,  F64,   BF,   S16,  U8,   S16,  S32,  S64,  C32,   C64,   C128},
    /* s16  */ {F32,  F16,  F64,   BF,   S16,  S16,  S16,  S32,  S64,  C32,   C64,   C128},
    /* s32  */ {F32,  F16,  F64,   BF,   S32,  S32,  S32,  S32,  S64,  C32,   C64,   C128},
    /* s64  */ {F32,  F16,  F64,   BF,   S64,  S64,  S64,  S64,  S64,  C32,   C64,   C128},
    /* c32  */ {C64,  C32,  C128 /* * */, C64 /* * */, C32, C32, C32, C32, C32, C32, C64, C128},
    /* c64  */ {C64,  C64,  C128 /* * */, C64, C64, C64,  C64,  C64,  C64,  C64,   C64,   C128},
    /* c128 */ {C128, C128, C128,  C128, C128, C128, C128, C128, C128, C128,  C128,  C128},
};

static int axis_index(dtcast_type t)
{
    for (size_t i = 0; i < NAXIS; i++)
        if (axis[i] == t)
            return (int)i;
    return -1;
}

/* aclnn: uint16, uint32 and uint64 derive only with themselves. */
static bool wide_unsigned(dtcast_type t)
{
    return t == DTCAST_UINT16 || t == DTCAST_UINT32 || t == DTCAST_UINT64;
}

/* The type pair alone (both dimensioned, or both 0-dim). */
static dtcast_type derive(dtcast_type a, dtcast_type b)
{
    if (wide_unsigned(a) || wide_unsigned(b))
        return a == b ? a : DTCAST_UNDEFINED; /* aclnn: u16/u32/u64 only with themselves */
    if (a == DTCAST_BOOL) /* aclnn: bool with anything else -> the other */
        return axis_index(b) >= 0 || b == DTCAST_BOOL ? b : DTCAST_UNDEFINED;
    if (b == DTCAST_BOOL)
        return axis_index(a) >= 0 ? a : DTCAST_UNDEFINED;
    int i = axis_index(a), j = axis_index(b);
    return i >= 0 && j >= 0 ? table[i][j] : DTCAST_UNDEFINED;
}

/* aclnn's op::ToString(DataType) names, for the message. */
static const char *ge_name(dtcast_type t)
{
    switch (t) {
    case DTCAST_FLOAT32: return "DT_FLOAT";
    case DTCAST_FLOAT16: return "DT_FLOAT16";
    case DTCAST_FLOAT64: return "DT_DOUBLE";
    case DTCAST_BFLOAT16: return "DT_BF16";
    case DTCAST_INT8: return "DT_INT8";
    case DTCAST_UINT8: return "DT_UINT8";
    case DTCAST_INT16: return "DT_INT16";
    case DTCAST_UINT16: return "DT_UINT16";
    case DTCAST_INT32: return "DT_INT32";
    case DTCAST_UINT32: return "DT_UINT32";
    case DTCAST_INT64: return "DT_INT64";
    case DTCAST_UINT64: return "DT_UINT64";
    case DTCAST_BOOL: return "DT_BOOL";
    case DTCAST_COMPLEX32: return "DT_COMPLEX32";
    case DTCAST_COMPLEX64: return "DT_COMPLEX64";
    case DTCAST_COMPLEX128: return "DT_COMPLEX128";
    case DTCAST_STRING: return "DT_STRING";
    case DTCAST_INT4: return "DT_INT4";
    case DTCAST_UINT1: return "DT_UINT1";
    case DTCAST_INT2: return "DT_INT2";
    case DTCAST_UINT2: return "DT_UINT2";
    case DTCAST_FLOAT8E4M3FN: return "DT_FLOAT8_E4M3FN";
    case DTCAST_FLOAT8E5M2: return "DT_FLOAT8_E5M2";
    case DTCAST_FLOAT8E8M0: return "DT_FLOAT8_E8M0";
    case DTCAST_FLOAT4E2M1: return "DT_FLOAT4_E2M1";
    case DTCAST_FLOAT6E2M3FN: return "DT_FLOAT6_E2M3";
    case DTCAST_FLOAT6E3M2FN: return "DT_FLOAT6_E3M2";
    default: return dtcast_type_name(t);
    }
}

dtcast_status pr_aclnn(const dtcast_operand *a, const dtcast_operand *b, dtcast_type *out,
                       dtcast_error *m)
{
    dtcast_type joined = derive(a->type, b->type);
    if (joined == DTCAST_UNDEFINED)
        return dt_fail(m, DTCAST_ERR_PROMOTION, DT_NO_INDEX, "Self dtype %s and other dtype %s can not promote dtype.",
                       ge_name(a->type), ge_name(b->type));
    bool zero_a = a->rank == 0, zero_b = b->rank == 0;
    if (zero_a != zero_b) {
        /* aclnn: a 0-dim tensor whose category is not higher leaves the dimensioned type; a
         * higher-category complex 0-dim joins a float tensor as the tensor's complex type. */
        dtcast_type dim = zero_a ? b->type : a->type;
        dtcast_type zero = zero_a ? a->type : b->type;
        pr_category cd = pr_category_of(dim), cz = pr_category_of(zero);
        if (cz <= cd)
            joined = dim;
        else if (cz == PR_COMPLEX && cd == PR_FLOAT)
            joined = pr_complex_of(dim);
    }
    *out = joined;
    return DTCAST_OK;
}
