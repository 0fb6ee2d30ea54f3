/* OpenVINO ConvertPromoteTypes-14: the common type of two inputs, by the ordered rules of
 * docs/promotion.md, "openvino" (the upstream evaluate_common_type), with the operation's own
 * error texts. */
#include "promote/promote.h"

#include "internal.h"

#include <stdio.h>

/* OpenVINO: the element types ConvertPromoteTypes supports (f8e4m3 is OpenVINO's name for
 * float8e4m3fn); anything else fails before any rule is tried. */
static bool ov_supported(dtcast_type t)
{
    if (t == DTCAST_TYPE_DYNAMIC)
        return true;
    switch (t) {
    case DTCAST_BOOL:
    case DTCAST_FLOAT16:
    case DTCAST_FLOAT32:
    case DTCAST_FLOAT64:
    case DTCAST_BFLOAT16:
    case DTCAST_FLOAT8E4M3FN:
    case DTCAST_FLOAT8E5M2:
    case DTCAST_INT4:
    case DTCAST_INT8:
    case DTCAST_INT16:
    case DTCAST_INT32:
    case DTCAST_INT64:
    case DTCAST_UINT1:
    case DTCAST_UINT4:
    case DTCAST_UINT8:
    case DTCAST_UINT16:
    case DTCAST_UINT32:
    case DTCAST_UINT64:
        return true;
    default:
        return false;
    }
}

/* OpenVINO element::Type::is_real(). */
static bool ov_is_real(dtcast_type t)
{
    return pr_category_of(t) == PR_FLOAT;
}

/* OpenVINO element::Type::is_signed(): floats and signed integers. */
static bool ov_is_signed(dtcast_type t)
{
    return ov_is_real(t) || pr_is_signed_int(t);
}

/* OpenVINO: a signed integer of the given width (bitwidth_to_int: 4, 8, 16, 32, else 64). */
static dtcast_type ov_signed_of_bits(int bits)
{
    switch (bits) {
    case 4:
        return DTCAST_INT4;
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

static const char *label(dtcast_type t)
{
    const char *name = dtcast_type_name(t);
    return name ? name : "dynamic";
}

static const char msg_int_float[] = "Integer input cannot be safely promoted to floating-point.";
static const char msg_scalar[] =
    "Scalar input cannot be PyTorch-like promoted using safe promotion rules.";
static const char msg_unsigned[] =
    "Unsigned integer input cannot be safely promoted into any supported signed integer.";
static const char msg_unsupported[] =
    "Unsupported input element types for ConvertPromoteTypes with given attributes.";

/* OpenVINO pytorch_scalar_promotion: the rank-0 input takes the dimensioned input's type, in
 * safe mode only when the target holds the scalar's values. */
static dtcast_status ov_scalar_promotion(dtcast_type target, dtcast_type scalar, bool unsafe,
                                         dtcast_type *out, dtcast_error *m)
{
    int tbits = dtcast_type_bits(target), sbits = dtcast_type_bits(scalar);
    bool tsigned = ov_is_signed(target), ssigned = ov_is_signed(scalar);
    bool safe = (tsigned == ssigned && tbits >= sbits) || (tsigned && !ssigned && 2 * tbits >= sbits);
    if (!unsafe && !safe)
        return dt_fail(m, DTCAST_ERR_PROMOTION, DT_NO_INDEX, "%s", msg_scalar);
    *out = target;
    return DTCAST_OK;
}

dtcast_status pr_openvino(const dtcast_operand *a, const dtcast_operand *b,
                          const dtcast_promote_attrs *attrs, dtcast_type *out, dtcast_error *m)
{
    const bool unsafe = attrs->promote_unsafe != 0;
    const bool torch_mode = attrs->pytorch_scalar_promotion != 0;
    dtcast_type u64_target = attrs->u64_target == DTCAST_UNDEFINED ? DTCAST_FLOAT32
                                                                    : attrs->u64_target;
    u64_target = dt_type_canonical(u64_target); /* float6's 1.0 codes 105, 106 */
    if (u64_target != DTCAST_TYPE_DYNAMIC && !dtcast_type_name(u64_target))
        return dt_fail(m, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "u64_integer_promotion_target: unknown type %d", (int)u64_target);
    const dtcast_type t0 = a->type, t1 = b->type;

    /* OpenVINO: unsupported element types fail first (a check without its own text). */
    if (!ov_supported(t0) || !ov_supported(t1))
        return dt_fail(m, DTCAST_ERR_PROMOTION, DT_NO_INDEX,
                       "Check 'is_type_supported(input_0_type) && is_type_supported(input_1_type)' "
                       "failed: ConvertPromoteTypes does not support element type %s.",
                       label(ov_supported(t0) ? t1 : t0));
    /* OpenVINO: dynamic -> dynamic; equal -> that type; bool -> the other. */
    if (t0 == DTCAST_TYPE_DYNAMIC || t1 == DTCAST_TYPE_DYNAMIC) {
        *out = DTCAST_TYPE_DYNAMIC;
        return DTCAST_OK;
    }
    if (t0 == t1 || t1 == DTCAST_BOOL) {
        *out = t0;
        return DTCAST_OK;
    }
    if (t0 == DTCAST_BOOL) {
        *out = t1;
        return DTCAST_OK;
    }
    const int bits0 = dtcast_type_bits(t0), bits1 = dtcast_type_bits(t1);

    /* OpenVINO: integer with float -> the float; safe mode wants float bits >= 2 x int bits. */
    if (ov_is_real(t0) != ov_is_real(t1)) {
        dtcast_type real = ov_is_real(t0) ? t0 : t1;
        int ibits = ov_is_real(t0) ? bits1 : bits0;
        if (!unsafe && dtcast_type_bits(real) < 2 * ibits)
            return dt_fail(m, DTCAST_ERR_PROMOTION, DT_NO_INDEX, "%s", msg_int_float);
        *out = real;
        return DTCAST_OK;
    }

    /* OpenVINO pytorch_scalar_promotion (same category): an unknown rank makes the type
     * dynamic; exactly one rank-0 input takes the other's type. */
    if (torch_mode) {
        if (a->rank == DTCAST_RANK_UNKNOWN || b->rank == DTCAST_RANK_UNKNOWN) {
            *out = DTCAST_TYPE_DYNAMIC;
            return DTCAST_OK;
        }
        bool s0 = a->rank == 0, s1 = b->rank == 0;
        if (s0 != s1)
            return s0 ? ov_scalar_promotion(t1, t0, unsafe, out, m)
                      : ov_scalar_promotion(t0, t1, unsafe, out, m);
    }

    /* OpenVINO: signed with unsigned -> a signed integer of max(2 x ubits, sbits) bits (safe
     * mode: 2 x ubits <= sbits); u64 -> u64_integer_promotion_target, unsafe mode only. */
    if (ov_is_signed(t0) != ov_is_signed(t1)) {
        int ubits = ov_is_signed(t0) ? bits1 : bits0;
        int sbits = ov_is_signed(t0) ? bits0 : bits1;
        if (ubits <= 32 && (unsafe || 2 * ubits <= sbits)) {
            *out = ov_signed_of_bits(2 * ubits > sbits ? 2 * ubits : sbits);
            return DTCAST_OK;
        }
        if (!unsafe)
            return dt_fail(m, DTCAST_ERR_PROMOTION, DT_NO_INDEX, "%s", msg_unsigned);
        *out = u64_target;
        return DTCAST_OK;
    }
    /* OpenVINO: same sign and category -> the wider. */
    if (bits0 != bits1) {
        *out = bits0 > bits1 ? t0 : t1;
        return DTCAST_OK;
    }
    /* OpenVINO, unsafe only: {f8e4m3, f8e5m2} -> f16 and {bf16, f16} -> f32. */
    if (unsafe && bits0 == 8 && ov_is_real(t0)) {
        *out = DTCAST_FLOAT16;
        return DTCAST_OK;
    }
    if (unsafe && bits0 == 16 && ov_is_real(t0)) {
        *out = DTCAST_FLOAT32;
        return DTCAST_OK;
    }
    return dt_fail(m, DTCAST_ERR_PROMOTION, DT_NO_INDEX, "%s", msg_unsupported);
}
