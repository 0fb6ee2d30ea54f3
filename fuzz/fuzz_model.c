/* libFuzzer harness for the ModelProto reader. */
#include "files/tensor.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dt_onnx_model m;
    dt_io_error err;
    if (dt_onnx_model_parse(data, size, &m, &err) != DTCAST_OK)
        return 0;
    if (m.nattrs < 0 || m.nattrs > 16 || m.ninputs < 0 || m.ninputs > 8 || m.noutputs < 0 ||
        m.noutputs > 8 || strlen(m.op_type) >= sizeof m.op_type)
        abort();
    for (int k = 0; k < m.nattrs; k++)
        if (dt_onnx_model_attr(&m, m.attrs[k].name) == NULL)
            abort();
    return 0;
}
