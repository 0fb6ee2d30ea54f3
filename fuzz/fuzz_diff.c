/* Differential libFuzzer harness: the fast paths against the reference path.
 *
 * Random bytes are read as elements of a source type and converted to a destination type under
 * a rounding mode and overflow policies, once through dtcast_convert (which takes a fast path
 * when src/kernels has one, on 1..4 threads, from a misaligned buffer) and once through a plain
 * per-element dt_decode/dt_encode loop (the reference, written here independently of
 * convert.c's loop). The output bytes must be identical, padding included; so must an in-place
 * conversion where the API allows one (dst == src, destination element no wider).
 *
 * Input: byte 0 source type, byte 1 destination type (one past the list: every type), byte 2
 * mode (7 values with default) + flags, byte 3 threads and misalignment, then the element data. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void through_float32(dt_value *v)
{
    static const dt_rules rne = {.round = DTCAST_ROUND_RNE};
    const dt_format *f32 = dt_format_of(DTCAST_FLOAT32);
    dt_decode(f32, dt_encode(f32, v, &rne), v);
}

/* The reference: returns the status dtcast_convert must return. */
static dtcast_status reference(uint8_t *dst, const dt_format *df, const uint8_t *src,
                               const dt_format *sf, size_t count, const dtcast_options *o)
{
    const bool scomplex = sf->tc == DT_TC_COMPLEX, dcomplex = df->tc == DT_TC_COMPLEX;
    if (scomplex && !dcomplex && !o->discard_imaginary)
        return DTCAST_ERR_COMPLEX_TO_REAL;
    const dt_format *sp = scomplex ? dt_format_of(sf->part) : sf;
    const dt_format *dp = dcomplex ? dt_format_of(df->part) : df;
    const bool f32first = o->via_float32 && sp->type != DTCAST_FLOAT32 &&
                          (dp->tc == DT_TC_FLOAT || dp->tc == DT_TC_E8M0) && dp->bits < 32;
    dt_rules r;
    dt_rules_for(dp, o, &r);
    for (size_t i = 0; i < count; i++) {
        dt_value re, im;
        memset(&im, 0, sizeof im);
        im.cls = DT_ZERO;
        if (scomplex) {
            dt_decode(sp, dt_load(sp, src, 2 * i), &re);
            dt_decode(sp, dt_load(sp, src, 2 * i + 1), &im);
        } else {
            dt_decode(sf, dt_load(sf, src, i), &re);
        }
        if (f32first) {
            through_float32(&re);
            through_float32(&im);
        }
        if (dcomplex) {
            dt_store(dp, dst, 2 * i, dt_encode(dp, &re, &r));
            dt_store(dp, dst, 2 * i + 1, dt_encode(dp, &im, &r));
        } else {
            dt_store(df, dst, i, dt_encode(df, &re, &r));
        }
    }
    return DTCAST_OK;
}

static void diff(const dt_format *sf, const dt_format *df, const uint8_t *bytes, size_t nbytes,
                 const dtcast_options *o, size_t misalign)
{
    const size_t count = nbytes * 8 / (size_t)sf->stride_bits;
    size_t sbytes, dbytes;
    if (dtcast_storage_size(sf->type, count, &sbytes, NULL) != DTCAST_OK ||
        dtcast_storage_size(df->type, count, &dbytes, NULL) != DTCAST_OK)
        abort();
    uint8_t *want = calloc(dbytes + 1, 1);
    uint8_t *sbuf = malloc(sbytes + misalign + 1);
    uint8_t *dbuf = malloc(dbytes + misalign + 1);
    if (!want || !sbuf || !dbuf)
        abort();
    uint8_t *src = sbuf + misalign, *dst = dbuf + misalign;
    memcpy(src, bytes, sbytes);
    memset(dst, 0xCC, dbytes);
    const dtcast_status ws = reference(want, df, src, sf, count, o);
    const dtcast_status gs = dtcast_convert(dst, df->type, src, sf->type, count, o, NULL);
    if (ws != gs)
        abort();
    if (gs == DTCAST_OK && count && memcmp(want, dst, dbytes) != 0)
        abort();
    if (gs == DTCAST_OK && count && df->stride_bits <= sf->stride_bits) {
        /* in place: the library documents dst == src as allowed here */
        memcpy(src, bytes, sbytes);
        dtcast_options single = *o;
        if (dtcast_convert(src, df->type, src, sf->type, count, &single, NULL) != DTCAST_OK ||
            memcmp(want, src, dbytes) != 0)
            abort();
    }
    free(want);
    free(sbuf);
    free(dbuf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dtcast_type types[64];
    const size_t ntypes = dtcast_type_list(types, 64);
    if (size < 4 || ntypes == 0 || ntypes > 64)
        return 0;
    const dt_format *sf = dt_format_of(types[data[0] % ntypes]);
    if (!sf || sf->tc == DT_TC_STRING)
        return 0;
    dtcast_options o;
    dtcast_options_init(&o);
    o.round = (dtcast_round)(data[2] % 7);
    o.float_overflow = (data[2] & 8) ? DTCAST_FLOAT_OVERFLOW_SATURATE : DTCAST_FLOAT_OVERFLOW_IEEE;
    o.int_overflow = (data[2] & 16) ? DTCAST_INT_OVERFLOW_SATURATE : DTCAST_INT_OVERFLOW_WRAP;
    o.float4_nan_as_max = (data[2] & 32) != 0;
    o.via_float32 = (data[2] & 64) != 0;
    o.discard_imaginary = (data[2] & 128) != 0;
    o.threads = 1u + (data[3] & 3);
    const size_t misalign = (data[3] >> 2) & 7;
    const size_t pick = data[1] % (ntypes + 1);
    for (size_t k = 0; k < ntypes; k++) {
        if (pick != ntypes && k != pick)
            continue;
        const dt_format *df = dt_format_of(types[k]);
        if (!df || df->tc == DT_TC_STRING)
            continue;
        diff(sf, df, data + 4, size - 4, &o, misalign);
    }
    return 0;
}
