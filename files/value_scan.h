/* One pass over a float tensor's values for the ONNX job's checks (files/onnx_model.c): the
 * largest finite magnitude of each sign, and whether an Inf or NaN is there. Whether a tensor
 * survives float16 (its largest magnitude of each sign converted decides, the rounding being
 * monotone) and a per-tensor quantization scale (max |W|) come from it. Private to files/. */
#ifndef DTCAST_FILES_VALUE_SCAN_H
#define DTCAST_FILES_VALUE_SCAN_H

#include "dtcast.h"

#include <stddef.h>
#include <stdint.h>

typedef struct dt_value_extremes {
    /* The largest finite magnitude among the positive / negative values, as magnitude bits of
     * the tensor's type (the sign cleared: for IEEE-style formats their order is the order of
     * the values); 0 when that sign has no finite nonzero value. */
    uint64_t pmax, nmax;
    int nonfinite; /* an Inf or NaN was seen */
} dt_value_extremes;

void dt_value_extremes_init(dt_value_extremes *x);

/* Takes count elements of type (float64, float32, float16 or bfloat16) at p into *x. */
void dt_value_extremes_take(dt_value_extremes *x, dtcast_type type, const void *p, size_t count);

#endif /* DTCAST_FILES_VALUE_SCAN_H */
