/* What the quantization files share: checking the dtcast_tensor arguments of the public calls. */
#ifndef DTCAST_QUANT_H
#define DTCAST_QUANT_H

#include "../internal.h"

/* Checks an input tensor named `what` ("x", "scale", ...): not NULL, 0 <= ndim <= DTCAST_MAX_DIMS,
 * no negative dimension, the element count fits, data not NULL when there are elements, and
 * bytes >= the storage the shape needs in t->type (packed over the flattened tensor). Sets
 * *count. */
dtcast_status dt_tensor_input(const dtcast_tensor *t, const char *what, size_t *count,
                              dtcast_error *error);

/* Checks that an output `what` has room: data not NULL (when need > 0) and bytes >= need. */
dtcast_status dt_tensor_room(const dtcast_tensor *t, const char *what, size_t need,
                             dtcast_error *error);

#endif /* DTCAST_QUANT_H */
