/* libFuzzer harness for string -> number, every target type, through the public API.
 *
 * Input: byte 0 picks the rounding mode (7 values incl. default) and the overflow policies and
 * flags; the rest is the text (NUL-terminated copy). For every non-string target type the text
 * goes through dtcast_convert(DTCAST_STRING -> type) and dtcast_parse_element (at index 0 and,
 * for packed types, at a sub-byte index of a larger buffer). Both must agree on the status and
 * the code; a failure must leave the destination untouched and produce a one-line message;
 * buffers are heap-allocated at exactly their size so ASan sees any overrun. */
#include "dtcast.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The message is one line, whatever bytes the text holds. */
static void check_message(const dtcast_error *e, dtcast_status st)
{
    if (st == DTCAST_OK)
        return;
    if (e->status != st || e->message[0] == '\0' || strlen(e->message) >= sizeof e->message)
        abort();
    if (strpbrk(e->message, "\n\r"))
        abort();
}

static uint64_t code_at(const uint8_t *buf, int bits, int stride, size_t i)
{
    if (stride < 8) {
        const unsigned per = 8u / (unsigned)stride, sh = (unsigned)(i % per) * (unsigned)stride;
        return (uint64_t)(buf[i / per] >> sh) & ((1u << stride) - 1);
    }
    uint64_t c = 0;
    for (int b = 0; b < stride / 8 && b < 8; b++)
        c |= (uint64_t)buf[i * (size_t)(stride / 8) + (size_t)b] << (8 * b);
    (void)bits;
    return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    dtcast_options o;
    dtcast_options_init(&o);
    o.round = (dtcast_round)(data[0] % 7);
    o.float_overflow = (data[0] & 8) ? DTCAST_FLOAT_OVERFLOW_SATURATE : DTCAST_FLOAT_OVERFLOW_IEEE;
    o.int_overflow = (data[0] & 16) ? DTCAST_INT_OVERFLOW_SATURATE : DTCAST_INT_OVERFLOW_WRAP;
    o.string_to_bool_numeric = (data[0] & 32) != 0;
    o.float4_nan_as_max = (data[0] & 64) != 0;
    o.threads = (data[0] & 128) ? 2 : 1;
    dtcast_error err;

    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    const char *strings[1] = {text};

    dtcast_type types[64];
    const size_t ntypes = dtcast_type_list(types, 64);
    for (size_t k = 0; k < ntypes && k < 64; k++) {
        const dtcast_type t = types[k];
        if (t == DTCAST_STRING)
            continue;
        int bits = dtcast_type_bits(t);
        int stride = bits;
        if (t == DTCAST_FLOAT6E2M3FN || t == DTCAST_FLOAT6E3M2FN)
            stride = 8;
        const int complex = t == DTCAST_COMPLEX32 || t == DTCAST_BCOMPLEX32 ||
                            t == DTCAST_COMPLEX64 || t == DTCAST_COMPLEX128;
        size_t one = 0, four = 0;
        if (dtcast_storage_size(t, 1, &one, NULL) != DTCAST_OK ||
            dtcast_storage_size(t, 4, &four, NULL) != DTCAST_OK)
            abort();
        uint8_t *a = malloc(one), *b = malloc(one), *c = malloc(four);
        if (!a || !b || !c)
            abort();
        memset(a, 0xA5, one);
        memset(b, 0xA5, one);
        memset(c, 0x5A, four);

        memset(&err, 0, sizeof err);
        const dtcast_status sa = dtcast_convert(a, t, strings, DTCAST_STRING, 1, &o, &err);
        check_message(&err, sa);
        memset(&err, 0, sizeof err);
        const dtcast_status sb = dtcast_parse_element(b, t, 0, text, &o, &err);
        check_message(&err, sb);
        memset(&err, 0, sizeof err);
        const size_t idx = stride < 8 ? 3 % (size_t)(8 / stride) : 3;
        const dtcast_status sc = dtcast_parse_element(c, t, idx, text, &o, &err);
        check_message(&err, sc);
        if (sa != sb || sa != sc)
            abort();
        if (sa != DTCAST_OK) {
            if (sa != DTCAST_ERR_BAD_STRING)
                abort();
            for (size_t i = 0; i < one; i++)
                if (a[i] != 0xA5 || b[i] != 0xA5)
                    abort(); /* untouched on error */
            for (size_t i = 0; i < four; i++)
                if (c[i] != 0x5A)
                    abort();
        } else {
            const size_t parts = complex ? 2 : 1;
            const int pstride = complex ? stride / 2 : stride;
            for (size_t p = 0; p < parts; p++) {
                const uint64_t ca = code_at(a, bits, pstride, p);
                if (ca != code_at(b, bits, pstride, p) ||
                    ca != code_at(c, bits, pstride, idx * parts + p))
                    abort();
            }
            /* the other elements of the four-element buffer are untouched */
            uint8_t orig[16 * 4];
            memset(orig, 0x5A, sizeof orig);
            for (size_t i = 0; i < 4 * parts; i++)
                if (i / parts != idx && code_at(c, bits, pstride, i) != code_at(orig, bits, pstride, i))
                    abort();
        }
        free(a);
        free(b);
        free(c);
    }
    free(text);
    return 0;
}
