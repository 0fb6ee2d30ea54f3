/* libFuzzer harness for the name parsers: dtcast_type_from_name, dtcast_round_from_name,
 * dtcast_pypto_mode_from_name. The input is a NUL-terminated copy of the bytes. A name that
 * parses must give a type whose canonical and ONNX names parse back to it, whose queries agree
 * (bits, info, storage size of a count taken from the input), and nothing may read past the
 * string. A failed parse must leave the output untouched. */
#include "dtcast.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_type(dtcast_type t, size_t count)
{
    const char *name = dtcast_type_name(t);
    if (!name)
        abort();
    dtcast_type back = DTCAST_UNDEFINED;
    if (dtcast_type_from_name(name, &back, NULL) != DTCAST_OK || back != t)
        abort();
    const char *onnx = dtcast_type_onnx_name(t);
    if (onnx && (dtcast_type_from_name(onnx, &back, NULL) != DTCAST_OK || back != t))
        abort();
    dtcast_info info;
    if (dtcast_type_info(t, &info, NULL) != DTCAST_OK || info.type != t || strcmp(info.name, name) != 0)
        abort();
    if (info.bits != dtcast_type_bits(t) && t != DTCAST_STRING)
        abort();
    size_t bytes = 0;
    dtcast_status st = dtcast_storage_size(t, count, &bytes, NULL);
    if (st == DTCAST_OK) {
        /* never fewer bytes than the elements need */
        const size_t stride = t == DTCAST_STRING ? 8 * sizeof(char *)
                              : (t == DTCAST_FLOAT6E2M3FN || t == DTCAST_FLOAT6E3M2FN)
                                  ? 8
                                  : (size_t)info.bits;
        if (count && bytes / (stride < 8 ? 1 : stride / 8) < (stride < 8 ? count / (8 / stride) : count))
            abort();
    } else if (st != DTCAST_ERR_SIZE_OVERFLOW) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    size_t count = 0;
    for (size_t i = 0; i < size && i < sizeof count; i++)
        count = (count << 8) | data[i];

    dtcast_type t = (dtcast_type)12345;
    dtcast_status st = dtcast_type_from_name(s, &t, NULL);
    if (st == DTCAST_OK)
        check_type(t, count);
    else if (t != (dtcast_type)12345 || st != DTCAST_ERR_UNKNOWN_TYPE)
        abort();

    dtcast_round r = (dtcast_round)77;
    if (dtcast_round_from_name(s, &r, NULL) == DTCAST_OK) {
        const char *n = dtcast_round_name(r);
        dtcast_round back;
        if (!n || dtcast_round_from_name(n, &back, NULL) != DTCAST_OK || back != r)
            abort();
    } else if (r != (dtcast_round)77) {
        abort();
    }

    dtcast_pypto_mode m = (dtcast_pypto_mode)77;
    if (dtcast_pypto_mode_from_name(s, &m, NULL) == DTCAST_OK) {
        const char *n = dtcast_pypto_mode_name(m);
        dtcast_pypto_mode back;
        if (!n || dtcast_pypto_mode_from_name(n, &back, NULL) != DTCAST_OK || back != m)
            abort();
    } else if (m != (dtcast_pypto_mode)77) {
        abort();
    }

    /* Names of arbitrary enum values: NULL or a real string, never a crash. */
    int v = 0;
    for (size_t i = 0; i < size && i < 4; i++)
        v = (int)((unsigned)v << 8 | data[i]);
    const char *n1 = dtcast_type_name((dtcast_type)v);
    const char *n2 = dtcast_type_onnx_name((dtcast_type)v);
    const char *n3 = dtcast_round_name((dtcast_round)v);
    const char *n4 = dtcast_pypto_mode_name((dtcast_pypto_mode)v);
    const char *n5 = dtcast_status_string((dtcast_status)v);
    size_t total = (n1 ? strlen(n1) : 0) + (n2 ? strlen(n2) : 0) + (n3 ? strlen(n3) : 0) +
                   (n4 ? strlen(n4) : 0) + (n5 ? strlen(n5) : 0);
    if (total > 10000)
        abort();
    (void)dtcast_type_bits((dtcast_type)v);
    dtcast_info info;
    (void)dtcast_type_info((dtcast_type)v, &info, NULL);
    free(s);
    return 0;
}
