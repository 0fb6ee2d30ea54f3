/* libFuzzer harness for the TensorProto reader: a tensor that parses must serialize and parse
 * back to the same type, dims and bytes. */
#include "files/tensor.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_round_trip(const dt_tensor *t)
{
    uint8_t *buf;
    size_t len;
    dt_io_error err;
    dt_tensor back;
    if (dt_pb_serialize(t, &buf, &len, &err) != DTCAST_OK)
        abort();
    if (dt_pb_parse(buf, len, &back, &err) != DTCAST_OK || back.type != t->type ||
        back.ndim != t->ndim || back.count != t->count || back.nbytes != t->nbytes ||
        (t->type != DTCAST_STRING && memcmp(back.data, t->data, t->nbytes) != 0))
        abort();
    for (size_t i = 0; t->type == DTCAST_STRING && i < t->count; i++)
        if (strcmp(((char **)back.data)[i], ((char **)t->data)[i]) != 0)
            abort();
    dt_tensor_free(&back);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dt_tensor t;
    dt_io_error err;
    if (dt_pb_parse(data, size, &t, &err) == DTCAST_OK) {
        check_round_trip(&t);
        dt_tensor_free(&t);
    } else if (t.data || t.name || t.count) {
        abort(); /* a failed parse leaves the tensor empty */
    }
    return 0;
}
