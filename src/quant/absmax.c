/* Symmetric absmax per tensor, per channel or per group (compressed-tensors). */
#include "quant.h"
#include "../parallel.h"

dtcast_status dt_absmax_quantize(const dt_quant *q, dt_qio *io, dtcast_error *error)
{
    (void)q, (void)io;
    return dt_fail(error, DTCAST_ERR_UNSUPPORTED, DT_NO_INDEX, "absmax: not yet");
}

dtcast_status dt_absmax_dequantize(const dt_quant *q, dt_qio *io, dtcast_error *error)
{
    (void)q, (void)io;
    return dt_fail(error, DTCAST_ERR_UNSUPPORTED, DT_NO_INDEX, "absmax: not yet");
}
