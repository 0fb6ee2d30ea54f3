/* Promote-and-convert: OpenVINO ConvertPromoteTypes-14 and the aclnn binary-operator derivation.
 * The common type of the two inputs, then each input converted to it, keeping its own shape. */
#include "promote/promote.h"

#include "internal.h"

#define NO_INDEX ((size_t)-1)

static dtcast_status check_view(const dtcast_tensor_view *v, const char *which,
                                dtcast_error *error)
{
    if (!v)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX, "%s is NULL", which);
    if (v->count > 0 && !v->data)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX, "%s: data is NULL", which);
    return DTCAST_OK;
}

/* The output buffer for count elements of type, checked against its size. */
static dtcast_status check_output(const void *out, size_t bytes, dtcast_type type, size_t count,
                                  const char *which, dtcast_error *error)
{
    size_t need;
    dtcast_status st = dtcast_storage_size(type, count, &need, NULL);
    if (st != DTCAST_OK)
        return dt_fail(error, st, NO_INDEX, "%s: %zu elements of %s do not fit in memory", which,
                       count, dtcast_type_name(type));
    if (need > 0 && !out)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX, "%s is NULL", which);
    if (bytes < need)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX,
                       "%s holds %zu bytes; %zu elements of %s need %zu", which, bytes, count,
                       dtcast_type_name(type), need);
    return DTCAST_OK;
}

static dtcast_status convert_promoted(dtcast_promote_rules rules, void *out0, size_t out0_bytes,
                                      void *out1, size_t out1_bytes, dtcast_type *common,
                                      const dtcast_tensor_view *in0,
                                      const dtcast_tensor_view *in1,
                                      const dtcast_promote_attrs *attrs,
                                      const dtcast_options *opts, dtcast_error *error)
{
    /* The options are checked first, so that a bad struct never half-converts. */
    dtcast_options o;
    dtcast_status st = dt_options_read(opts, &o, error);
    if (st != DTCAST_OK)
        return st;
    if ((st = check_view(in0, "input 0", error)) != DTCAST_OK ||
        (st = check_view(in1, "input 1", error)) != DTCAST_OK)
        return st;
    if (!common)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX, "common is NULL");
    dtcast_operand a = {in0->type, in0->rank, DTCAST_SCALAR_NONE};
    dtcast_operand b = {in1->type, in1->rank, DTCAST_SCALAR_NONE};
    dtcast_type type;
    st = dtcast_promote(&type, rules, &a, &b, attrs, error);
    if (st != DTCAST_OK)
        return st;
    if (type == DTCAST_TYPE_DYNAMIC)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX,
                       "the common type is dynamic (a dynamic input, or an unknown rank under "
                       "pytorch_scalar_promotion): there is no type to convert to");
    if ((st = check_output(out0, out0_bytes, type, in0->count, "output 0", error)) != DTCAST_OK ||
        (st = check_output(out1, out1_bytes, type, in1->count, "output 1", error)) != DTCAST_OK)
        return st;
    /* The types are numeric and the buffers checked: neither conversion can fail midway. */
    if (in0->count > 0 &&
        (st = dtcast_convert(out0, type, in0->data, in0->type, in0->count, &o, error)) != DTCAST_OK)
        return st;
    if (in1->count > 0 &&
        (st = dtcast_convert(out1, type, in1->data, in1->type, in1->count, &o, error)) != DTCAST_OK)
        return st;
    *common = type;
    return DTCAST_OK;
}

dtcast_status dtcast_convert_promote_types(void *out0, size_t out0_bytes, void *out1,
                                           size_t out1_bytes, dtcast_type *common,
                                           const dtcast_tensor_view *in0,
                                           const dtcast_tensor_view *in1,
                                           const dtcast_promote_attrs *attrs,
                                           const dtcast_options *opts, dtcast_error *error)
{
    return convert_promoted(DTCAST_RULES_OPENVINO, out0, out0_bytes, out1, out1_bytes, common, in0,
                            in1, attrs, opts, error);
}

dtcast_status dtcast_aclnn_promote_binary(void *out0, size_t out0_bytes, void *out1,
                                          size_t out1_bytes, dtcast_type *common,
                                          const dtcast_tensor_view *in0,
                                          const dtcast_tensor_view *in1,
                                          const dtcast_options *opts, dtcast_error *error)
{
    return convert_promoted(DTCAST_RULES_ACLNN, out0, out0_bytes, out1, out1_bytes, common, in0,
                            in1, NULL, opts, error);
}
