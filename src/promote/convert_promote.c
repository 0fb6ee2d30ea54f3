/* Promote-and-convert: OpenVINO ConvertPromoteTypes-14 and the aclnn binary-operator derivation.
 * The common type of the two inputs, then each input converted to it, keeping its own shape. */
#include "promote/promote.h"

#include "internal.h"

#define NO_INDEX ((size_t)-1)

static dtcast_status check_view(const dtcast_tensor_view *v, const char *which,
                                const dtcast_options *opts)
{
    if (!v)
        return dt_fail(opts, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX, "%s is NULL", which);
    if (v->count > 0 && !v->data)
        return dt_fail(opts, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX, "%s: data is NULL", which);
    return DTCAST_OK;
}

/* The output buffer for count elements of type, checked against its size. */
static dtcast_status check_output(const void *out, size_t bytes, dtcast_type type, size_t count,
                                  const char *which, const dtcast_options *opts)
{
    size_t need;
    dtcast_status st = dtcast_storage_size(type, count, &need);
    if (st != DTCAST_OK)
        return dt_fail(opts, st, NO_INDEX, "%s: %zu elements of %s do not fit in memory", which,
                       count, dtcast_type_name(type));
    if (need > 0 && !out)
        return dt_fail(opts, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX, "%s is NULL", which);
    if (bytes < need)
        return dt_fail(opts, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX,
                       "%s holds %zu bytes; %zu elements of %s need %zu", which, bytes, count,
                       dtcast_type_name(type), need);
    return DTCAST_OK;
}

static dtcast_status convert_promoted(dtcast_promote_rules rules, const dtcast_tensor_view *in0,
                                      const dtcast_tensor_view *in1,
                                      const dtcast_promote_attrs *attrs, void *out0,
                                      size_t out0_bytes, void *out1, size_t out1_bytes,
                                      dtcast_type *common, const dtcast_options *opts)
{
    dtcast_status st;
    if ((st = check_view(in0, "input 0", opts)) != DTCAST_OK ||
        (st = check_view(in1, "input 1", opts)) != DTCAST_OK)
        return st;
    if (!common)
        return dt_fail(opts, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX, "common is NULL");
    dtcast_operand a = {in0->type, in0->rank, DTCAST_SCALAR_NONE};
    dtcast_operand b = {in1->type, in1->rank, DTCAST_SCALAR_NONE};
    char message[DTCAST_PROMOTE_MESSAGE_MAX];
    dtcast_type type;
    st = dtcast_promote(rules, &a, &b, attrs, &type, message, sizeof message);
    if (st != DTCAST_OK)
        return dt_fail(opts, st, NO_INDEX, "%s", message);
    if (type == DTCAST_TYPE_DYNAMIC)
        return dt_fail(opts, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX,
                       "the common type is dynamic (a dynamic input, or an unknown rank under "
                       "pytorch_scalar_promotion): there is no type to convert to");
    if ((st = check_output(out0, out0_bytes, type, in0->count, "output 0", opts)) != DTCAST_OK ||
        (st = check_output(out1, out1_bytes, type, in1->count, "output 1", opts)) != DTCAST_OK)
        return st;
    /* The types are numeric and the buffers checked: neither conversion can fail midway. */
    if (in0->count > 0 &&
        (st = dtcast_convert(out0, type, in0->data, in0->type, in0->count, opts)) != DTCAST_OK)
        return st;
    if (in1->count > 0 &&
        (st = dtcast_convert(out1, type, in1->data, in1->type, in1->count, opts)) != DTCAST_OK)
        return st;
    *common = type;
    return DTCAST_OK;
}

dtcast_status dtcast_convert_promote_types(const dtcast_tensor_view *in0,
                                           const dtcast_tensor_view *in1,
                                           const dtcast_promote_attrs *attrs, void *out0,
                                           size_t out0_bytes, void *out1, size_t out1_bytes,
                                           dtcast_type *common, const dtcast_options *opts)
{
    return convert_promoted(DTCAST_RULES_OPENVINO, in0, in1, attrs, out0, out0_bytes, out1,
                            out1_bytes, common, opts);
}

dtcast_status dtcast_aclnn_promote_binary(const dtcast_tensor_view *in0,
                                          const dtcast_tensor_view *in1, void *out0,
                                          size_t out0_bytes, void *out1, size_t out1_bytes,
                                          dtcast_type *common, const dtcast_options *opts)
{
    return convert_promoted(DTCAST_RULES_ACLNN, in0, in1, NULL, out0, out0_bytes, out1,
                            out1_bytes, common, opts);
}
