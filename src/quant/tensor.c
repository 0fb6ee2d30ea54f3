/* dtcast_tensor: element counts and the checks every call taking tensors makes first. */
#include "quant.h"

#include <stdint.h>

dtcast_status dtcast_tensor_count(const dtcast_tensor *t, size_t *count, dtcast_error *error)
{
    if (t == NULL || count == NULL)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "tensor or count is NULL");
    if (t->ndim < 0 || t->ndim > DTCAST_MAX_DIMS)
        return dt_fail(error, DTCAST_ERR_BAD_SHAPE, DT_NO_INDEX,
                       "a tensor of %d dimensions (0 to %d are possible)", t->ndim, DTCAST_MAX_DIMS);
    size_t n = 1;
    for (int d = 0; d < t->ndim; d++) {
        int64_t v = t->shape[d];
        if (v < 0)
            return dt_fail(error, DTCAST_ERR_BAD_SHAPE, DT_NO_INDEX,
                           "dimension %d of a tensor is negative (%lld)", d, (long long)v);
        if ((uint64_t)v > SIZE_MAX || (v != 0 && n > SIZE_MAX / (size_t)v))
            return dt_fail(error, DTCAST_ERR_SIZE_OVERFLOW, DT_NO_INDEX,
                           "the element count of a tensor does not fit size_t (dimension %d)", d);
        n *= (size_t)v;
    }
    *count = n;
    return DTCAST_OK;
}

dtcast_status dt_tensor_input(const dtcast_tensor *t, const char *what, size_t *count,
                              dtcast_error *error)
{
    if (t == NULL)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "%s is NULL", what);
    dtcast_error e;
    size_t n;
    if (dtcast_tensor_count(t, &n, &e) != DTCAST_OK)
        return dt_fail(error, e.status, DT_NO_INDEX, "%s: %s", what, e.message);
    size_t need;
    if (dtcast_storage_size(t->type, n, &need, &e) != DTCAST_OK)
        return dt_fail(error, e.status, DT_NO_INDEX, "%s: %s", what, e.message);
    if (need > 0 && t->data == NULL)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "%s: data is NULL", what);
    if (t->bytes < need)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "%s: %zu bytes given, its shape needs %zu", what, t->bytes, need);
    *count = n;
    return DTCAST_OK;
}

dtcast_status dt_tensor_room(const dtcast_tensor *t, const char *what, size_t need,
                             dtcast_error *error)
{
    if (t == NULL)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "%s is NULL", what);
    if (need > 0 && t->data == NULL)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "%s: data is NULL", what);
    if (t->bytes < need)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "%s: %zu bytes of room, %zu needed", what, t->bytes, need);
    return DTCAST_OK;
}
