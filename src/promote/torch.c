/* PyTorch: torch.promote_types (the c10 table; uint16/32/64 and float8 as c10 treats them) and
 * torch.result_type's three participant categories: dimensioned tensors, 0-dim tensors, Python
 * scalars ("wrapped numbers"), combined so a lower-priority participant only decides the result
 * when its category is higher. Default dtype float32 (complex64). */
#include "promote/promote.h"

#include "internal.h"

#include <stddef.h>

#define B1 DTCAST_BOOL
#define U8 DTCAST_UINT8
#define I8 DTCAST_INT8
#define I16 DTCAST_INT16
#define I32 DTCAST_INT32
#define I64 DTCAST_INT64
#define F16 DTCAST_FLOAT16
#define BF DTCAST_BFLOAT16
#define F32 DTCAST_FLOAT32
#define F64 DTCAST_FLOAT64
#define C32 DTCAST_COMPLEX32
#define C64 DTCAST_COMPLEX64
#define C128 DTCAST_COMPLEX128

/* torch: the promotion table's axes. */
static const dtcast_type axis[] = {B1, U8, I8, I16, I32, I64, F16, BF, F32, F64, C32, C64, C128};

#define NAXIS (sizeof axis / sizeof axis[0])

/* torch: c10::promoteTypes' table (as torch.promote_types returns it in torch 1.13). */
static const dtcast_type table[NAXIS][NAXIS] = {
    /*          b1    u8    i8    i16   i32   i64   f16   bf16  f32   f64   c32   c64   c128 */
    /* b1   */ {B1,   U8,   I8,   I16,  I32,  I64,  F16,  BF,   F32,  F64,  C32,  C64,  C128},
    /* u8   */ {U8,   U8,   I16,  I16,  I32,  I64,  F16,  BF,   F32,  F64,  C32,  C64,  C128},
    /* i8   */ {I8,   I16,  I8,   I16,  I32,  I64,  F16,  BF,   F32,  F64,  C32,  C64,  C128},
    /* i16  */ {I16,  I16,  I16,  I16,  I32,  I64,  F16,  BF,   F32,  F64,  C32,  C64,  C128},
    /* i32  */ {I32,  I32,  I32,  I32,  I32,  I64,  F16,  BF,   F32,  F64,  C32,  C64,  C128},
    /* i64  */ {I64,  I64,  I64,  I64,  I64,  I64,  F16,  BF,   F32,  F64,  C32,  C64,  C128},
    /* f16  */ {F16,  F16,  F16,  F16,  F16,  F16,  F16,  F32,  F32,  F64,  C32,  C64,  C128},
    /* bf16 */ {BF,   BF,   BF,   BF,   BF,   BF,   F32,  BF,   F32,  F64,  C64,  C64,  C128},
    /* f32  */ {F32,  F32,  F32,  F32,  F32,  F32,  F32,  F32,  F32,  F64,  C64,  C64,  C128},
    /* f64  */ {F64,  F64,  F64,  F64,  F64,  F64,  F64,  F64,  F64,  F64,  C128, C128, C128},
    /* c32  */ {C32,  C32,  C32,  C32,  C32,  C32,  C32,  C64,  C64,  C128, C32,  C64,  C128},
    /* c64  */ {C64,  C64,  C64,  C64,  C64,  C64,  C64,  C64,  C64,  C128, C64,  C64,  C128},
    /* c128 */ {C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128},
};

static int axis_index(dtcast_type t)
{
    for (size_t i = 0; i < NAXIS; i++)
        if (axis[i] == t)
            return (int)i;
    return -1;
}

/* torch: the "barebones" unsigned types, which promote only with floats or themselves. */
static bool barebones_unsigned(dtcast_type t)
{
    return t == DTCAST_UINT16 || t == DTCAST_UINT32 || t == DTCAST_UINT64;
}

static bool is_float8(dtcast_type t)
{
    switch (t) {
    case DTCAST_FLOAT8E5M2:
    case DTCAST_FLOAT8E4M3FN:
    case DTCAST_FLOAT8E5M2FNUZ:
    case DTCAST_FLOAT8E4M3FNUZ:
    case DTCAST_FLOAT8E8M0:
        return true;
    default:
        return false;
    }
}

/* torch: isFloatingType (float8 included). */
static bool is_floating(dtcast_type t)
{
    return t == F16 || t == BF || t == F32 || t == F64 || is_float8(t);
}

static bool is_complex(dtcast_type t)
{
    return t == C32 || t == C64 || t == C128;
}

/* c10's ScalarType names, as torch's messages print them; NULL for a type torch lacks. */
static const char *scalar_type_name(dtcast_type t)
{
    switch (t) {
    case DTCAST_BOOL: return "Bool";
    case DTCAST_UINT8: return "Byte";
    case DTCAST_INT8: return "Char";
    case DTCAST_INT16: return "Short";
    case DTCAST_INT32: return "Int";
    case DTCAST_INT64: return "Long";
    case DTCAST_FLOAT16: return "Half";
    case DTCAST_BFLOAT16: return "BFloat16";
    case DTCAST_FLOAT32: return "Float";
    case DTCAST_FLOAT64: return "Double";
    case DTCAST_COMPLEX32: return "ComplexHalf";
    case DTCAST_COMPLEX64: return "ComplexFloat";
    case DTCAST_COMPLEX128: return "ComplexDouble";
    case DTCAST_UINT16: return "UInt16";
    case DTCAST_UINT32: return "UInt32";
    case DTCAST_UINT64: return "UInt64";
    case DTCAST_FLOAT8E5M2: return "Float8_e5m2";
    case DTCAST_FLOAT8E4M3FN: return "Float8_e4m3fn";
    case DTCAST_FLOAT8E5M2FNUZ: return "Float8_e5m2fnuz";
    case DTCAST_FLOAT8E4M3FNUZ: return "Float8_e4m3fnuz";
    case DTCAST_FLOAT8E8M0: return "Float8_e8m0fnu";
    default: return NULL;
    }
}

/* torch.promote_types(a, b); DTCAST_UNDEFINED on either side stands for "no participant yet"
 * (c10's promote_skip_undefined). */
static dtcast_status promote(dtcast_type a, dtcast_type b, dtcast_type *out, dtcast_error *m)
{
    if (a == DTCAST_UNDEFINED || a == b) {
        *out = b;
        return DTCAST_OK;
    }
    if (b == DTCAST_UNDEFINED) {
        *out = a;
        return DTCAST_OK;
    }
    /* torch: float8 types promote only with themselves. */
    if (is_float8(a) || is_float8(b))
        return dt_fail(m, DTCAST_ERR_PROMOTION, DT_NO_INDEX,
                       "Promotion for Float8 Types is not supported, attempted to promote %s and %s",
                       scalar_type_name(a), scalar_type_name(b));
    /* torch: uint16/32/64 promote only with floats (to the float) or themselves. */
    if (barebones_unsigned(a) || barebones_unsigned(b)) {
        if (is_floating(a) || is_floating(b)) {
            *out = is_floating(a) ? a : b;
            return DTCAST_OK;
        }
        return dt_fail(m, DTCAST_ERR_PROMOTION, DT_NO_INDEX,
                       "Promotion for uint16, uint32, uint64 types is not supported, attempted to "
                       "promote %s and %s",
                       scalar_type_name(a), scalar_type_name(b));
    }
    *out = table[axis_index(a)][axis_index(b)];
    return DTCAST_OK;
}

/* torch: combine_categories(higher, lower) of c10's result_type: the higher-priority
 * participants decide unless the lower one's category is higher. */
static dtcast_status combine(dtcast_type higher, dtcast_type lower, dtcast_type *out,
                             dtcast_error *m)
{
    if (is_complex(higher)) {
        *out = higher;
        return DTCAST_OK;
    }
    if (is_complex(lower)) {
        if (!is_floating(higher)) { /* torch: an integral input takes the complex type */
            *out = lower;
            return DTCAST_OK;
        }
        /* torch: keep the float's precision in its complex type (toComplexType). */
        dtcast_type c = pr_complex_of(higher);
        if (c == DTCAST_UNDEFINED)
            return dt_fail(m, DTCAST_ERR_PROMOTION, DT_NO_INDEX, "Unknown Complex ScalarType for %s",
                           scalar_type_name(higher));
        *out = c;
        return DTCAST_OK;
    }
    if (is_floating(higher)) {
        *out = higher;
        return DTCAST_OK;
    }
    if (higher == DTCAST_BOOL || is_floating(lower))
        return promote(higher, lower, out, m);
    *out = higher != DTCAST_UNDEFINED ? higher : lower;
    return DTCAST_OK;
}

/* torch: a Python scalar is a wrapped number of the default dtype of its kind. */
static dtcast_type wrapped_type(dtcast_scalar_kind kind)
{
    switch (kind) {
    case DTCAST_SCALAR_BOOL:
        return DTCAST_BOOL;
    case DTCAST_SCALAR_INT:
        return DTCAST_INT64;
    case DTCAST_SCALAR_FLOAT:
        return DTCAST_FLOAT32; /* torch.get_default_dtype() */
    default:
        return DTCAST_COMPLEX64; /* its complex counterpart */
    }
}

dtcast_status pr_torch(const dtcast_operand *a, const dtcast_operand *b, dtcast_type *out,
                       dtcast_error *m)
{
    const dtcast_operand *ops[2] = {a, b};
    for (int i = 0; i < 2; i++)
        if (pr_is_tensor(ops[i]) && !scalar_type_name(ops[i]->type))
            return dt_fail(m, DTCAST_ERR_PROMOTION, DT_NO_INDEX, "torch has no dtype %s",
                           dtcast_type_name(ops[i]->type));
    /* torch: each participant joins its category's running result, in argument order. */
    dtcast_type dim = DTCAST_UNDEFINED, zero = DTCAST_UNDEFINED, wrapped = DTCAST_UNDEFINED;
    dtcast_status st;
    for (int i = 0; i < 2; i++) {
        const dtcast_operand *op = ops[i];
        dtcast_type *slot = !pr_is_tensor(op) ? &wrapped : op->rank > 0 ? &dim : &zero;
        dtcast_type current = pr_is_tensor(op) ? op->type : wrapped_type(op->scalar);
        if ((st = promote(*slot, current, slot, m)) != DTCAST_OK)
            return st;
    }
    dtcast_type lower;
    if ((st = combine(zero, wrapped, &lower, m)) != DTCAST_OK)
        return st;
    return combine(dim, lower, out, m);
}
