/* libFuzzer harness for number -> string, every type, both styles, through the public API:
 * dtcast_format_element (caller's buffer of every size from 0 to DTCAST_FORMAT_MAX) and
 * dtcast_convert(..., DTCAST_STRING, ...). Both must agree, never write past the buffer, fail
 * cleanly when it is too small, and the Python-style text must parse back (dtcast_convert from
 * DTCAST_STRING, round to nearest even) to the same code (any NaN to a NaN; bool excluded: its
 * text "True"/"False" is not a number).
 *
 * Input: byte 0 picks the type, byte 1 the style and flags, then the element bytes. */
#include "dtcast.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Same number: equal bytes, or both NaN (as decided by a conversion to float64). */
static int same(dtcast_type t, const uint8_t *a, const uint8_t *b, size_t n)
{
    if (memcmp(a, b, n) == 0)
        return 1;
    dtcast_options o;
    dtcast_options_init(&o);
    o.discard_imaginary = 1;
    double da[2], db[2];
    dtcast_type to = (t == DTCAST_COMPLEX32 || t == DTCAST_BCOMPLEX32 || t == DTCAST_COMPLEX64 ||
                      t == DTCAST_COMPLEX128)
                         ? DTCAST_COMPLEX128
                         : DTCAST_FLOAT64;
    if (dtcast_convert(da, to, a, t, 1, &o, NULL) != DTCAST_OK ||
        dtcast_convert(db, to, b, t, 1, &o, NULL) != DTCAST_OK)
        return 0;
    const int parts = to == DTCAST_COMPLEX128 ? 2 : 1;
    for (int k = 0; k < parts; k++) {
        const int na = da[k] != da[k], nb = db[k] != db[k];
        if (na != nb || (!na && memcmp(&da[k], &db[k], sizeof(double)) != 0))
            return 0;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dtcast_type types[64];
    const size_t ntypes = dtcast_type_list(types, 64);
    if (size < 2 || ntypes == 0 || ntypes > 64)
        return 0;
    const dtcast_type t = types[data[0] % ntypes];
    if (t == DTCAST_STRING)
        return 0;
    dtcast_options o;
    dtcast_options_init(&o);
    o.string_style = (data[1] & 1) ? DTCAST_STRING_ORT : DTCAST_STRING_PYTHON;
    const size_t index = (data[1] >> 1) & 7; /* element index inside the buffer */

    uint8_t elem[16 * 9] = {0};
    size_t bytes = 0;
    if (dtcast_storage_size(t, index + 1, &bytes, NULL) != DTCAST_OK || bytes > sizeof elem)
        abort();
    memcpy(elem, data + 2, size - 2 < bytes ? size - 2 : bytes);

    /* Every buffer size: a heap buffer of exactly that size, so ASan sees an overrun. */
    char reference[DTCAST_FORMAT_MAX];
    if (dtcast_format_element(reference, sizeof reference, elem, t, index, &o, NULL) != DTCAST_OK)
        abort();
    const size_t len = strlen(reference);
    if (len == 0 || len >= DTCAST_FORMAT_MAX)
        abort();
    for (size_t n = 0; n <= len + 1; n++) {
        char *buf = malloc(n ? n : 1);
        if (!buf)
            return 0;
        memset(buf, 'x', n ? n : 1);
        dtcast_status st = dtcast_format_element(n ? buf : NULL, n, elem, t, index, &o, NULL);
        if (n > len ? (st != DTCAST_OK || strcmp(buf, reference) != 0) : st == DTCAST_OK)
            abort();
        free(buf);
    }

    /* dtcast_convert to strings gives the same text for every element. */
    char *strings[9] = {0};
    if (dtcast_convert(strings, DTCAST_STRING, elem, t, index + 1, &o, NULL) != DTCAST_OK)
        abort();
    if (!strings[index] || strcmp(strings[index], reference) != 0)
        abort();

    /* Python text parses back to the same code (ORT text is %.8g: not round-trip for float64). */
    if (o.string_style == DTCAST_STRING_PYTHON && t != DTCAST_BOOL) {
        dtcast_options p;
        dtcast_options_init(&p);
        p.round = DTCAST_ROUND_RNE;
        uint8_t back[16 * 9] = {0};
        if (dtcast_convert(back, t, strings, DTCAST_STRING, index + 1, &p, NULL) != DTCAST_OK)
            abort();
        size_t one = 0;
        dtcast_storage_size(t, 1, &one, NULL);
        const int bits = dtcast_type_bits(t);
        if (bits >= 8) {
            const size_t es = t == DTCAST_FLOAT6E2M3FN || t == DTCAST_FLOAT6E3M2FN ? 1 : (size_t)bits / 8;
            for (size_t i = 0; i <= index; i++)
                if (!same(t, elem + i * es, back + i * es, es))
                    abort();
        } else {
            /* packed: compare element by element through a one-byte copy */
            for (size_t i = 0; i <= index; i++) {
                const unsigned per = 8u / (unsigned)bits, sh = (unsigned)(i % per) * (unsigned)bits;
                const unsigned m = (1u << bits) - 1;
                if (((elem[i / per] >> sh) & m) != ((back[i / per] >> sh) & m))
                    abort();
            }
        }
    }
    dtcast_strings_free(strings, index + 1);
    return 0;
}
