/* The protobuf wire format, as ONNX's files use it (onnx_proto.c: TensorProto and the Cast
 * tests' ModelProto; onnx_model.c: whole models): a bounds-checked reader over a buffer whose
 * positions are file offsets, and the few writers of keys and lengths.
 *
 * Each field is a varint key (field number << 3 | wire type) and a value: 0 varint, 1 fixed64,
 * 2 length-delimited, 5 fixed32 (3 and 4, groups, are not used by ONNX). Repeated numbers come
 * packed (one length-delimited run) or one per key; readers must take both. Every error names
 * the byte offset (pb.what is the prefix of the message: "pb", "onnx model", a file name). */
#ifndef DTCAST_FILES_PROTOBUF_H
#define DTCAST_FILES_PROTOBUF_H

#include "files/tensor.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { WT_VARINT = 0, WT_FIXED64 = 1, WT_BYTES = 2, WT_FIXED32 = 5 };

/* ---- reading the wire format ------------------------------------------------------------- */

typedef struct pb {
    const uint8_t *buf; /* the whole file: positions are file offsets */
    size_t pos, end;
    const char *what; /* "pb" or "onnx model", the prefix of messages */
    dt_io_error *err;
} pb;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static inline dtcast_status pb_fail(const pb *r, size_t at, const char *fmt, ...)
{
    char text[192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    dt_io_fail(r->err, DTCAST_ERR_BAD_FILE, "%s: %s at byte %zu", r->what, text, at);
    return DTCAST_ERR_BAD_FILE; /* a constant lets the compiler see the outputs are not used */
}

static inline bool pb_more(const pb *r) { return r->pos < r->end; }

static inline dtcast_status pb_varint(pb *r, uint64_t *v)
{
    uint64_t value = 0;
    size_t at = r->pos;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->pos >= r->end)
            return pb_fail(r, at, "truncated varint");
        uint8_t b = r->buf[r->pos++];
        value |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            *v = value;
            return DTCAST_OK;
        }
    }
    return pb_fail(r, at, "varint longer than 10 bytes");
}

static inline dtcast_status pb_fixed(pb *r, int bytes, uint64_t *v)
{
    if (r->end - r->pos < (size_t)bytes)
        return pb_fail(r, r->pos, "truncated %d-byte value", bytes);
    uint64_t value = 0;
    for (int i = bytes - 1; i >= 0; i--)
        value = value << 8 | r->buf[r->pos + (size_t)i];
    r->pos += (size_t)bytes;
    *v = value;
    return DTCAST_OK;
}

static inline dtcast_status pb_key(pb *r, uint32_t *field, int *wt, size_t *at)
{
    uint64_t key = 0;
    *at = r->pos;
    dtcast_status st = pb_varint(r, &key);
    if (st != DTCAST_OK)
        return st;
    if (key >> 3 == 0 || key >> 3 > 0x1FFFFFFF)
        return pb_fail(r, *at, "invalid field number %llu", (unsigned long long)(key >> 3));
    *field = (uint32_t)(key >> 3);
    *wt = (int)(key & 7);
    return DTCAST_OK;
}

/* The loop over a message's fields, while *st stays DTCAST_OK:
 *     while (pb_next(&r, &field, &wt, &at, &st)) { ... st = ...; }
 * false at the end of r, or with the error in *st (a bad key, or one the body set). */
static inline bool pb_next(pb *r, uint32_t *field, int *wt, size_t *at, dtcast_status *st)
{
    return *st == DTCAST_OK && pb_more(r) && (*st = pb_key(r, field, wt, at)) == DTCAST_OK;
}

/* A length-delimited value: a sub-reader over its bytes. */
static inline dtcast_status pb_sub(pb *r, pb *sub)
{
    uint64_t n = 0;
    size_t at = r->pos;
    dtcast_status st = pb_varint(r, &n);
    if (st != DTCAST_OK)
        return st;
    if (n > r->end - r->pos)
        return pb_fail(r, at, "length %llu runs past the end (%zu bytes left)",
                       (unsigned long long)n, r->end - r->pos);
    *sub = *r;
    sub->end = r->pos + (size_t)n;
    r->pos = sub->end;
    return DTCAST_OK;
}

static inline dtcast_status pb_skip(pb *r, int wt, size_t at)
{
    uint64_t v = 0;
    pb sub = {NULL, 0, 0, NULL, NULL};
    switch (wt) {
    case WT_VARINT: return pb_varint(r, &v);
    case WT_FIXED64: return pb_fixed(r, 8, &v);
    case WT_FIXED32: return pb_fixed(r, 4, &v);
    case WT_BYTES: return pb_sub(r, &sub);
    default: return pb_fail(r, at, "unsupported wire type %d", wt);
    }
}

static inline dtcast_status pb_expect(const pb *r, const char *name, int wt, int expected, size_t at)
{
    if (wt == expected)
        return DTCAST_OK;
    return pb_fail(r, at, "field %s has wire type %d, expected %d", name, wt, expected);
}

/* Two's complement without the implementation-defined conversion. */
static inline int64_t to_int64(uint64_t v)
{
    return v > (uint64_t)INT64_MAX ? -(int64_t)(~v) - 1 : (int64_t)v;
}

/* Values of a repeated number field: one (wire type elem_wt) or a packed run (wire type 2).
 * emit(ctx, value) is called for each; returns how many in *n. */
typedef void (*pb_emit)(void *ctx, uint64_t value);

static inline dtcast_status pb_read_one(pb *r, int elem_wt, uint64_t *v)
{
    if (elem_wt == WT_VARINT)
        return pb_varint(r, v);
    return pb_fixed(r, elem_wt == WT_FIXED64 ? 8 : 4, v);
}

static inline dtcast_status pb_numbers(pb *r, const char *name, int wt, int elem_wt, size_t at,
                                pb_emit emit, void *ctx, size_t *n)
{
    uint64_t v = 0;
    dtcast_status st;
    if (wt == elem_wt) {
        if ((st = pb_read_one(r, elem_wt, &v)) != DTCAST_OK)
            return st;
        emit(ctx, v);
        *n = 1;
        return DTCAST_OK;
    }
    if (wt != WT_BYTES)
        return pb_fail(r, at, "field %s has wire type %d, expected %d or 2", name, wt, elem_wt);
    pb run = {NULL, 0, 0, NULL, NULL};
    if ((st = pb_sub(r, &run)) != DTCAST_OK)
        return st;
    size_t count = 0;
    while (pb_more(&run)) {
        if ((st = pb_read_one(&run, elem_wt, &v)) != DTCAST_OK)
            return st;
        emit(ctx, v);
        count++;
    }
    *n = count;
    return DTCAST_OK;
}

static inline void ignore_value(void *ctx, uint64_t value)
{
    (void)ctx;
    (void)value;
}

/* Copies a length-delimited text into out (NUL-terminated). */
static inline dtcast_status pb_text(pb *r, char *out, size_t size, const char *name)
{
    pb s = {NULL, 0, 0, NULL, NULL};
    dtcast_status st = pb_sub(r, &s);
    if (st != DTCAST_OK)
        return st;
    size_t n = s.end - s.pos;
    if (n >= size)
        return pb_fail(r, s.pos, "%s of %zu bytes is longer than %zu", name, n, size - 1);
    memcpy(out, r->buf + s.pos, n);
    out[n] = '\0';
    return DTCAST_OK;
}

/* ---- writing ------------------------------------------------------------------------------ */

static inline size_t varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint8_t *put_bytes(uint8_t *p, uint32_t field, const void *data, size_t len)
{
    p = put_varint(p, (uint64_t)field << 3 | WT_BYTES);
    p = put_varint(p, len);
    if (len)
        memcpy(p, data, len);
    return p + len;
}


#endif /* DTCAST_FILES_PROTOBUF_H */
