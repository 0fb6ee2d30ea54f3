/* libFuzzer harness for the .npy reader: the first byte picks the hint; a tensor that parses
 * must serialize and parse back to the same type, element count and bytes. */
#include "files/npy.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const dtcast_type hints[] = {
    DTCAST_UNDEFINED, DTCAST_INT4,     DTCAST_UINT2,  DTCAST_UINT1,   DTCAST_FLOAT8E4M3FN,
    DTCAST_BFLOAT16,  DTCAST_FLOAT32,  DTCAST_STRING, DTCAST_FLOAT6E2M3FN, DTCAST_COMPLEX128,
    DTCAST_COMPLEX32, (dtcast_type)77,
};

static void check_round_trip(const dt_tensor *t, dtcast_type hint)
{
    uint8_t *buf;
    size_t len;
    dt_io_error err;
    dt_tensor back;
    if (dt_npy_serialize(t, &buf, &len, &err) != DTCAST_OK)
        return; /* e.g. strings that are not UTF-8 (|S arrays) */
    if (dt_npy_parse(buf, len, t->type == DTCAST_STRING ? DTCAST_UNDEFINED : hint, &back, &err) !=
            DTCAST_OK ||
        back.type != t->type || back.nbytes != t->nbytes ||
        (t->type != DTCAST_STRING && memcmp(back.data, t->data, t->nbytes) != 0))
        abort();
    dt_tensor_free(&back);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    dtcast_type hint = hints[data[0] % (sizeof hints / sizeof hints[0])];
    dt_tensor t;
    dt_io_error err;
    if (dt_npy_parse(data + 1, size - 1, hint, &t, &err) == DTCAST_OK) {
        check_round_trip(&t, t.type);
        dt_tensor_free(&t);
    } else if (t.data || t.name || t.count) {
        abort(); /* a failed parse leaves the tensor empty */
    }
    return 0;
}
