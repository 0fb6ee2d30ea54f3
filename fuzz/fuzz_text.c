/* libFuzzer harness for number <-> text (src/text/).
 *
 *   clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *       fuzz/fuzz_text.c src/text/[a-z]*.c src/bignum.c src/exact.c src/types.c -lm -o fuzz_text
 *   ./fuzz_text -max_len=4096
 *
 * Each input is used twice:
 *  1. as text: dt_text_parse and dt_text_parse_complex must not crash, and a parsed value must
 *     keep the contract (finite: sig != 0; sticky: bit 63 of sig set);
 *  2. as codes: its first byte picks a type, the next bytes give a code; the code is formatted in
 *     both styles, and the Python text must parse back (rounded to nearest even) to the same
 *     code (NaN to some NaN; bool and string excluded), complex pairs too. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *text)
{
    fprintf(stderr, "fuzz_text: %s: \"%s\"\n", what, text);
    abort();
}

static void check_value(const dt_value *v, const char *text)
{
    if (v->cls == DT_FINITE) {
        if (v->sig == 0)
            fail("finite value with sig 0", text);
        if (v->sticky && !(v->sig >> 63))
            fail("sticky value not normalized", text);
    } else if (v->sticky) {
        fail("sticky on a non-finite value", text);
    }
}

static void fuzz_parse(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return;
    memcpy(text, data, size);
    text[size] = '\0';
    dt_value v, im;
    dt_int_parts ip, im_ip;
    if (dt_text_parse(text, &v, &ip))
        check_value(&v, text);
    if (dt_text_parse_complex(text, &v, &ip, &im, &im_ip)) {
        check_value(&v, text);
        check_value(&im, text);
    }
    free(text);
}

static bool same_number(const dt_format *f, uint64_t a, uint64_t b)
{
    dt_value va, vb;
    dt_decode(f, a, &va);
    dt_decode(f, b, &vb);
    if (va.cls == DT_NAN)
        return vb.cls == DT_NAN;
    return a == b;
}

static uint64_t mask_of(const dt_format *f)
{
    return f->bits >= 64 ? UINT64_MAX : (UINT64_C(1) << f->bits) - 1;
}

/* Text of one real code of type f, parsed back and rounded to nearest even into f. */
static void fuzz_real(const dt_format *f, uint64_t code)
{
    char text[DTCAST_FORMAT_MAX];
    code &= mask_of(f);
    if (dt_text_format(text, sizeof text, f, code, DTCAST_STRING_ORT) == 0)
        fail("ORT format failed", f->name);
    if (dt_text_format(text, sizeof text, f, code, DTCAST_STRING_PYTHON) == 0)
        fail("format failed", f->name);
    if (f->tc == DT_TC_BOOL)
        return;
    dt_value v;
    dt_int_parts ip;
    if (!dt_text_parse(text, &v, &ip))
        fail("formatted text does not parse", text);
    const dt_rules r = {.round = DTCAST_ROUND_RNE};
    uint64_t back;
    if (f->tc == DT_TC_UINT || f->tc == DT_TC_SINT)
        back = dt_encode_int_parts(f, &ip, &r);
    else
        back = dt_encode(f, &v, &r);
    if (!same_number(f, code, back))
        fail("round trip changed the code", text);
}

static void fuzz_complex(const dt_format *part, uint64_t re, uint64_t im)
{
    char text[DTCAST_FORMAT_MAX];
    re &= mask_of(part);
    im &= mask_of(part);
    if (dt_text_format_complex(text, sizeof text, part, re, im, DTCAST_STRING_ORT) == 0)
        fail("ORT complex format failed", part->name);
    if (dt_text_format_complex(text, sizeof text, part, re, im, DTCAST_STRING_PYTHON) == 0)
        fail("complex format failed", part->name);
    dt_value vr, vi;
    dt_int_parts ir, ii;
    if (!dt_text_parse_complex(text, &vr, &ir, &vi, &ii))
        fail("formatted complex does not parse", text);
    const dt_rules r = {.round = DTCAST_ROUND_RNE};
    if (!same_number(part, re, dt_encode(part, &vr, &r)) ||
        !same_number(part, im, dt_encode(part, &vi, &r)))
        fail("complex round trip changed a part", text);
}

static void fuzz_format(const uint8_t *data, size_t size)
{
    dtcast_type types[64];
    const size_t n = dtcast_type_list(types, 64);
    if (size < 1 || n == 0)
        return;
    const dt_format *f = dt_format_of(types[data[0] % (n < 64 ? n : 64)]);
    uint64_t code[2] = {0, 0};
    for (size_t i = 1; i < size && i <= 16; i++)
        code[(i - 1) / 8] |= (uint64_t)data[i] << (8 * ((i - 1) % 8));
    if (!f || f->tc == DT_TC_STRING)
        return;
    if (f->tc == DT_TC_COMPLEX)
        fuzz_complex(dt_format_of(f->part), code[0], code[1]);
    else
        fuzz_real(f, code[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_parse(data, size);
    fuzz_format(data, size);
    return 0;
}
