/* ONNX Cast / CastLike: which types each opset takes, and how its attributes map onto options.
 * Source: the Cast-1/6/9/13/19/21/23/24/25/28 and CastLike-15/19/21/23/24/25 schemas, as docs/onnx.md describes them ("Opsets",
 * "Options the profile sets"); where dtcast departs from ONNX's text: docs/differences.md, "ONNX
 * documents". */
#include "internal.h"

#include <string.h>

#define NO_INDEX ((size_t)-1)

/* The newest CastLike schema (opsets 26 to 28 have none of their own). */
#define CASTLIKE_NEWEST 25

/* The first opset whose Cast takes the type; 0 = never (complex, and dtcast's own formats).
 * Opsets 26 and 27 have no Cast of their own (Cast-25 serves them). */
static int onnx_since(dtcast_type t)
{
    switch (dt_type_canonical(t)) {
    case DTCAST_BOOL: case DTCAST_UINT8: case DTCAST_INT8: case DTCAST_UINT16: case DTCAST_INT16:
    case DTCAST_UINT32: case DTCAST_INT32: case DTCAST_UINT64: case DTCAST_INT64:
    case DTCAST_FLOAT16: case DTCAST_FLOAT32: case DTCAST_FLOAT64:
        return 1;
    case DTCAST_STRING:
        return 9;
    case DTCAST_BFLOAT16:
        return 13;
    case DTCAST_FLOAT8E4M3FN: case DTCAST_FLOAT8E4M3FNUZ: case DTCAST_FLOAT8E5M2:
    case DTCAST_FLOAT8E5M2FNUZ:
        return 19;
    case DTCAST_UINT4: case DTCAST_INT4:
        return 21;
    case DTCAST_FLOAT4E2M1:
        return 23;
    case DTCAST_FLOAT8E8M0:
        return 24;
    case DTCAST_UINT2: case DTCAST_INT2:
        return 25;
    case DTCAST_FLOAT6E2M3FN: case DTCAST_FLOAT6E3M2FN:
        return 28;
    default:
        return 0;
    }
}

bool dtcast_onnx_opset_allows(int opset, dtcast_type t)
{
    const int since = onnx_since(t);
    return since != 0 && opset >= since && opset <= DTCAST_ONNX_OPSET_MAX;
}

static bool is_float8(dtcast_type t)
{
    return t == DTCAST_FLOAT8E4M3FN || t == DTCAST_FLOAT8E4M3FNUZ || t == DTCAST_FLOAT8E5M2 ||
           t == DTCAST_FLOAT8E5M2FNUZ || t == DTCAST_FLOAT8E8M0;
}

static dtcast_status check_type(dtcast_error *error, int opset, dtcast_type t, const char *role)
{
    const dt_format *f = dt_format_of(t);
    if (!f)
        return dt_fail(error, DTCAST_ERR_UNKNOWN_TYPE, NO_INDEX, "ONNX Cast: unknown %s type %d", role,
                       (int)t);
    const int since = onnx_since(t);
    if (since == 0)
        return dt_fail(error, DTCAST_ERR_UNSUPPORTED, NO_INDEX,
                       "ONNX Cast does not take %s (%s type) in any opset", f->name, role);
    if (opset < since)
        return dt_fail(error, DTCAST_ERR_UNSUPPORTED, NO_INDEX,
                       "ONNX Cast-%d does not take %s (%s type); it needs opset %d or later", opset,
                       f->name, role, since);
    return DTCAST_OK;
}

static bool is_integer_type(const dt_format *f)
{
    return f->tc == DT_TC_UINT || f->tc == DT_TC_SINT;
}

static bool is_float_type(const dt_format *f)
{
    return f->tc == DT_TC_FLOAT || f->tc == DT_TC_E8M0;
}

dtcast_status dtcast_onnx_options(dtcast_options *out, int64_t to, dtcast_type src_type, int opset,
                                  int64_t saturate, const char *round_mode,
                                  const dtcast_options *base, dtcast_error *error)
{
    dtcast_options o;
    dtcast_status st = dt_options_read(base, &o, error);
    if (st != DTCAST_OK)
        return st;
    if (!out)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX, "ONNX Cast: NULL options");
    if (opset < 1 || opset > DTCAST_ONNX_OPSET_MAX)
        return dt_fail(error, DTCAST_ERR_UNSUPPORTED, NO_INDEX,
                       "ONNX opset %d is not known (dtcast knows 1 to %d)", opset,
                       DTCAST_ONNX_OPSET_MAX);
    if (to <= 0 || to > 1000 || !dt_format_of((dtcast_type)to))
        return dt_fail(error, DTCAST_ERR_UNKNOWN_TYPE, NO_INDEX,
                       "ONNX Cast: 'to' = %lld is not a TensorProto data type", (long long)to);
    const dtcast_type dst_type = dt_type_canonical((dtcast_type)to);
    src_type = dt_type_canonical(src_type);
    st = check_type(error, opset, src_type, "input");
    if (st == DTCAST_OK)
        st = check_type(error, opset, dst_type, "output");
    if (st != DTCAST_OK)
        return st;
    if (saturate != 0 && saturate != 1)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX,
                       "ONNX Cast: saturate must be 0 or 1, not %lld", (long long)saturate);
    if (saturate == 0 && opset < 19)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX,
                       "ONNX Cast-%d has no 'saturate' attribute (it appeared in opset 19)", opset);
    if (round_mode && opset < 24)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX,
                       "ONNX Cast-%d has no 'round_mode' attribute (it appeared in opset 24)",
                       opset);

    /* round_mode applies to float8e8m0 only: up = ceil, down = trunc, nearest = ties up. */
    dtcast_round e8m0_round = DTCAST_ROUND_CEIL;
    if (round_mode && strcmp(round_mode, "up") != 0) {
        if (strcmp(round_mode, "down") == 0)
            e8m0_round = DTCAST_ROUND_TRUNC;
        else if (strcmp(round_mode, "nearest") == 0)
            e8m0_round = DTCAST_ROUND_RNA;
        else
            return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX,
                           "ONNX Cast: round_mode must be \"up\", \"down\" or \"nearest\", not "
                           "\"%.40s\"",
                           round_mode);
    }

    const dt_format *sf = dt_format_of(src_type), *df = dt_format_of(dst_type);
    /* rne everywhere except float -> integer, which truncates; integers wrap. */
    o.round = DTCAST_ROUND_RNE;
    if (is_float_type(sf) && is_integer_type(df))
        o.round = DTCAST_ROUND_TRUNC;
    if (is_integer_type(sf) && is_integer_type(df))
        o.round = DTCAST_ROUND_TRUNC; /* exact anyway */
    if (dst_type == DTCAST_FLOAT8E8M0)
        o.round = e8m0_round;
    /* Strings parsed into integers truncate ("100.5" -> 100), as the spec's example says. */
    if (sf->tc == DT_TC_STRING && is_integer_type(df))
        o.round = DTCAST_ROUND_TRUNC;
    o.int_overflow = DTCAST_INT_OVERFLOW_WRAP;
    /* saturate governs float8 targets only; every other float overflows to Inf. With
     * saturate = 0 a magnitude beyond float8e8m0's range (2^128 and above) is NaN (0xFF) in every
     * round_mode, "down" included, where IEEE 754's rounding toward zero would give 0xFE: the
     * reference and ONNX Runtime take it to float32 Inf, then 0xFF. */
    o.float_overflow = (is_float8(dst_type) && saturate) ? DTCAST_FLOAT_OVERFLOW_SATURATE
                       : dst_type == DTCAST_FLOAT8E8M0   ? DTCAST_FLOAT_OVERFLOW_INF
                                                         : DTCAST_FLOAT_OVERFLOW_IEEE;
    o.discard_imaginary = false;
    o.string_to_bool_numeric = false;
    *out = o;
    return DTCAST_OK;
}

dtcast_status dtcast_onnx_cast(void *dst, int64_t to, const void *src, dtcast_type src_type,
                               size_t count, int opset, int64_t saturate, const char *round_mode,
                               const dtcast_options *opts, dtcast_error *error)
{
    dtcast_options o;
    dtcast_status st =
        dtcast_onnx_options(&o, to, src_type, opset, saturate, round_mode, opts, error);
    if (st != DTCAST_OK)
        return st;
    return dtcast_convert(dst, (dtcast_type)to, src, src_type, count, &o, error);
}

dtcast_status dtcast_onnx_cast_like(void *dst, dtcast_type like_type, const void *src,
                                    dtcast_type src_type, size_t count, int opset, int64_t saturate,
                                    const char *round_mode, const dtcast_options *opts,
                                    dtcast_error *error)
{
    if (opset < 15)
        return dt_fail(error, DTCAST_ERR_UNSUPPORTED, NO_INDEX,
                       "ONNX CastLike needs opset 15 or later (got %d)", opset);
    /* CastLike's newest version is 25: opsets 26 to 28 run CastLike-25, whose types are
     * Cast-25's (no float6), as onnx.defs.get_schema("CastLike", 28).since_version says. */
    if (opset > CASTLIKE_NEWEST && opset <= DTCAST_ONNX_OPSET_MAX) {
        const dtcast_type t[2] = {like_type, src_type};
        for (int i = 0; i < 2; i++)
            if (onnx_since(t[i]) > CASTLIKE_NEWEST)
                return dt_fail(error, DTCAST_ERR_UNSUPPORTED, NO_INDEX,
                               "ONNX CastLike at opset %d is CastLike-%d, which does not take %s "
                               "(%s type); Cast-%d does",
                               opset, CASTLIKE_NEWEST, dtcast_type_name(t[i]),
                               i == 0 ? "target" : "input", onnx_since(t[i]));
    }
    return dtcast_onnx_cast(dst, (int64_t)like_type, src, src_type, count, opset, saturate,
                            round_mode, opts, error);
}
