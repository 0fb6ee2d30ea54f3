/* Bit reinterpretation (dtcast_bitcast) and the ONNX BitCast operator (dtcast_onnx_bitcast):
 * see include/dtcast.h, "Bit reinterpretation", and docs/onnx.md, "BitCast". */
#include "internal.h"

#include <string.h>

/* BitCast-26 is the operator's only version through opset 28 (onnx 1.23), the newest opset the
 * library knows. */
#define BITCAST_SINCE 26

dtcast_status dtcast_bitcast(void *dst, dtcast_type dst_type, const void *src,
                             dtcast_type src_type, size_t count, const dtcast_options *opts,
                             dtcast_error *error)
{
    dtcast_options o;
    dtcast_status st = dt_options_read(opts, &o, error);
    if (st != DTCAST_OK)
        return st;
    const dt_format *fs = dt_format_in(src_type, &o);
    const dt_format *fd = dt_format_in(dst_type, &o);
    if (!fs)
        return dt_fail(error, DTCAST_ERR_UNKNOWN_TYPE, DT_NO_INDEX,
                       "bitcast: unknown input type %d", (int)src_type);
    if (!fd)
        return dt_fail(error, DTCAST_ERR_UNKNOWN_TYPE, DT_NO_INDEX,
                       "bitcast: unknown output type %d", (int)dst_type);
    if (fs->tc == DT_TC_STRING || fd->tc == DT_TC_STRING)
        return dt_fail(error, DTCAST_ERR_UNSUPPORTED, DT_NO_INDEX,
                       "bitcast from %s to %s: strings have no bits to reinterpret", fs->name,
                       fd->name);
    if (fs->bits != fd->bits || fs->stride_bits != fd->stride_bits)
        return dt_fail(error, DTCAST_ERR_UNSUPPORTED, DT_NO_INDEX,
                       "bitcast from %s (%d bits) to %s (%d bits): the bit widths differ",
                       fs->name, fs->bits, fd->name, fd->bits);
    size_t bytes;
    if (!dt_format_bytes(fs, count, &bytes))
        return dt_fail(error, DTCAST_ERR_SIZE_OVERFLOW, DT_NO_INDEX,
                       "%zu elements of %s do not fit in memory", count, fs->name);
    if (bytes == 0)
        return DTCAST_OK;
    if (!dst || !src)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "bitcast: NULL %s",
                       dst ? "src" : "dst");
    if (dst != src)
        memmove(dst, src, bytes);
    return DTCAST_OK;
}

/* all_non_string_tensor_types_ir13: every TensorProto type of IR 13 (codes 1 to 26, float32 to
 * int2; the float6 codes 27/28 came with IR 14) except string. */
static bool bitcast_takes(dtcast_type t)
{
    return t >= DTCAST_FLOAT32 && t <= DTCAST_INT2 && t != DTCAST_STRING;
}

static dtcast_status check_onnx_type(dtcast_error *error, int opset, dtcast_type t,
                                     const char *role)
{
    const dt_format *f = dt_format_of(t);
    if (!f)
        return dt_fail(error, DTCAST_ERR_UNKNOWN_TYPE, DT_NO_INDEX,
                       "ONNX BitCast: unknown %s type %d", role, (int)t);
    if (!bitcast_takes(t))
        return dt_fail(error, DTCAST_ERR_UNSUPPORTED, DT_NO_INDEX,
                       "ONNX BitCast (opset %d) does not take %s (%s type)", opset, f->name,
                       role);
    return DTCAST_OK;
}

dtcast_status dtcast_onnx_bitcast(void *dst, int64_t to, const void *src, dtcast_type src_type,
                                  size_t count, int opset, const dtcast_options *opts,
                                  dtcast_error *error)
{
    if (opset < 1 || opset > DTCAST_ONNX_OPSET_MAX)
        return dt_fail(error, DTCAST_ERR_UNSUPPORTED, DT_NO_INDEX,
                       "ONNX opset %d is not known (dtcast's BitCast knows 1 to %d)", opset,
                       DTCAST_ONNX_OPSET_MAX);
    if (opset < BITCAST_SINCE)
        return dt_fail(error, DTCAST_ERR_UNSUPPORTED, DT_NO_INDEX,
                       "ONNX BitCast needs opset %d or later (got %d)", BITCAST_SINCE, opset);
    if (to < 0 || to > 0x7fffffff)
        return dt_fail(error, DTCAST_ERR_UNKNOWN_TYPE, DT_NO_INDEX,
                       "ONNX BitCast: 'to' = %lld is not a TensorProto.DataType", (long long)to);
    dtcast_status st = check_onnx_type(error, opset, src_type, "input");
    if (st == DTCAST_OK)
        st = check_onnx_type(error, opset, (dtcast_type)to, "output");
    if (st != DTCAST_OK)
        return st;
    return dtcast_bitcast(dst, (dtcast_type)to, src, src_type, count, opts, error);
}
