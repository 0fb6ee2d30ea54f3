/* NVFP4: 16-element blocks along the last axis, float4e2m1 codes, float8e4m3fn block scales and
 * an optional float32 global scale (docs/quantization.md, "NVFP4"). */
#include "quant.h"
#include "../parallel.h"

dtcast_status dt_nvfp4_quantize(const dt_quant *q, dt_qio *io, dtcast_error *error)
{
    (void)q, (void)io;
    return dt_fail(error, DTCAST_ERR_UNSUPPORTED, DT_NO_INDEX, "nvfp4: not yet");
}

dtcast_status dt_nvfp4_dequantize(const dt_quant *q, dt_qio *io, dtcast_error *error)
{
    (void)q, (void)io;
    return dt_fail(error, DTCAST_ERR_UNSUPPORTED, DT_NO_INDEX, "nvfp4: not yet");
}
