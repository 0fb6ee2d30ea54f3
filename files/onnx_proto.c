/* ONNX protobuf files: the wire format, TensorProto (read and write) and the few ModelProto
 * fields a Cast test needs (read).
 *
 * Wire format: each field is a varint key (field number << 3 | wire type) and a value: 0 varint,
 * 1 fixed64, 2 length-delimited, 5 fixed32 (3 and 4, groups, are not used by ONNX). Repeated
 * numbers come packed (one length-delimited run) or one per key; readers must take both. */
#include "internal.h"
#include "files/safetensors.h" /* the float6 bit stream, which ONNX packs as safetensors does */
#include "files/protobuf.h"
#include "files/tensor.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- TensorProto: where each type keeps its values ---------------------------------------- */

enum {
    TP_DIMS = 1, TP_DATA_TYPE = 2, TP_SEGMENT = 3, TP_FLOAT = 4, TP_INT32 = 5, TP_STRING = 6,
    TP_INT64 = 7, TP_NAME = 8, TP_RAW = 9, TP_DOUBLE = 10, TP_UINT64 = 11, TP_EXTERNAL = 13,
    TP_LOCATION = 14, TP_NFIELDS = 16
};

static const char *field_name(uint32_t field)
{
    switch (field) {
    case TP_FLOAT: return "float_data";
    case TP_INT32: return "int32_data";
    case TP_STRING: return "string_data";
    case TP_INT64: return "int64_data";
    case TP_DOUBLE: return "double_data";
    case TP_UINT64: return "uint64_data";
    case TP_RAW: return "raw_data";
    default: return "?";
    }
}

static bool is_typed_field(uint32_t field)
{
    return field == TP_FLOAT || field == TP_INT32 || field == TP_STRING || field == TP_INT64 ||
           field == TP_DOUBLE || field == TP_UINT64;
}

static int element_wire_type(uint32_t field)
{
    return field == TP_FLOAT ? WT_FIXED32 : field == TP_DOUBLE ? WT_FIXED64 : WT_VARINT;
}

/* The typed field of a type and how many bytes of the packed storage one value carries
 * (ONNX: complex parts are separate values; int32_data holds 16-bit patterns, one byte of
 * 8-bit and packed sub-byte data, or an int32). */
typedef struct tp_layout {
    uint32_t field;
    size_t width;
} tp_layout;

static tp_layout layout_of(const dt_format *f)
{
    switch (f->type) {
    case DTCAST_FLOAT32:
    case DTCAST_COMPLEX64: return (tp_layout){TP_FLOAT, 4};
    case DTCAST_FLOAT64:
    case DTCAST_COMPLEX128: return (tp_layout){TP_DOUBLE, 8};
    case DTCAST_INT64: return (tp_layout){TP_INT64, 8};
    case DTCAST_UINT32: return (tp_layout){TP_UINT64, 4};
    case DTCAST_UINT64: return (tp_layout){TP_UINT64, 8};
    case DTCAST_STRING: return (tp_layout){TP_STRING, 0};
    case DTCAST_COMPLEX32: return (tp_layout){TP_INT32, 2}; /* two float16 patterns */
    case DTCAST_BCOMPLEX32: return (tp_layout){TP_INT32, 2}; /* two bfloat16 patterns */
    default: return (tp_layout){TP_INT32, f->stride_bits <= 8 ? 1 : (size_t)f->stride_bits / 8};
    }
}

/* float6 (ONNX IR 14): raw_data (and external data) packed four elements in three bytes, element
 * i in bits [6i, 6i+6) from bit 0 of byte 0, ceil(6n/8) bytes; int32_data one element per entry.
 * In memory, as everywhere in dtcast, one element per byte. */
static bool is_float6(const dt_format *f)
{
    return f->tc == DT_TC_FLOAT && f->bits == 6;
}

/* ---- TensorProto: the first pass records what is where ------------------------------------- */

typedef struct tp_scan {
    bool has_type;
    uint64_t data_type;
    size_t type_at;
    int ndim;
    int64_t dims[DT_MAX_DIMS];
    size_t dims_at; /* offset of the first dims field, for messages */
    bool has_name;
    size_t name_at, name_len;
    bool has_raw;
    size_t raw_at, raw_len;
    size_t values[TP_NFIELDS]; /* values seen per typed field */
    size_t first_at[TP_NFIELDS];
    bool external;             /* data_location EXTERNAL */
    size_t location_at;
    bool has_ext_location, has_ext_offset, has_ext_length;
    size_t ext_location_at, ext_location_len, ext_at;
    uint64_t ext_offset, ext_length;
} tp_scan;

typedef struct dims_ctx {
    tp_scan *s;
    bool too_many;
} dims_ctx;

static void add_dim(void *ctx, uint64_t value)
{
    dims_ctx *d = ctx;
    if (d->s->ndim == DT_MAX_DIMS)
        d->too_many = true;
    else
        d->s->dims[d->s->ndim++] = to_int64(value);
}

static dtcast_status scan_dims(pb *r, int wt, size_t at, tp_scan *s)
{
    dims_ctx d = {s, false};
    size_t n;
    if (s->ndim == 0)
        s->dims_at = at;
    dtcast_status st = pb_numbers(r, "dims", wt, WT_VARINT, at, add_dim, &d, &n);
    if (st == DTCAST_OK && d.too_many)
        return pb_fail(r, at, "more than %d dims", DT_MAX_DIMS);
    return st;
}

static dtcast_status scan_location(pb *r, int wt, size_t at, tp_scan *s)
{
    uint64_t v = 0;
    dtcast_status st = pb_expect(r, "data_location", wt, WT_VARINT, at);
    if (st == DTCAST_OK)
        st = pb_varint(r, &v);
    if (st == DTCAST_OK && v > 1)
        return pb_fail(r, at, "unknown data_location %llu", (unsigned long long)v);
    s->external = v == 1;
    s->location_at = at;
    return st;
}

static dtcast_status scan_bytes(pb *r, int wt, size_t at, const char *name, size_t *start,
                                size_t *len)
{
    pb sub = {NULL, 0, 0, NULL, NULL};
    dtcast_status st = pb_expect(r, name, wt, WT_BYTES, at);
    if (st == DTCAST_OK)
        st = pb_sub(r, &sub);
    if (st == DTCAST_OK) {
        *start = sub.pos;
        *len = sub.end - sub.pos;
    }
    return st;
}

/* A decimal u64 of an external_data entry ("offset", "length"). */
static dtcast_status parse_decimal(const pb *r, size_t at, size_t start, size_t len,
                                   const char *key, uint64_t *v)
{
    *v = 0;
    if (len == 0 || len > 20)
        return pb_fail(r, at, "external_data %s is not a number", key);
    for (size_t i = 0; i < len; i++) {
        uint8_t c = r->buf[start + i];
        if (c < '0' || c > '9' || *v > (UINT64_MAX - (uint64_t)(c - '0')) / 10)
            return pb_fail(r, at, "external_data %s is not a number", key);
        *v = *v * 10 + (uint64_t)(c - '0');
    }
    return DTCAST_OK;
}

/* external_data: repeated StringStringEntryProto {key = 1, value = 2}. */
static dtcast_status scan_external(pb *r, int wt, size_t at, tp_scan *s)
{
    pb sub = {NULL, 0, 0, NULL, NULL};
    dtcast_status st = pb_expect(r, "external_data", wt, WT_BYTES, at);
    if (st == DTCAST_OK)
        st = pb_sub(r, &sub);
    size_t key_at = 0, key_len = 0, val_at = 0, val_len = 0;
    bool has_key = false;
    while (st == DTCAST_OK && pb_more(&sub)) {
        uint32_t field = 0;
        int fwt = 0;
        size_t fat = 0;
        st = pb_key(&sub, &field, &fwt, &fat);
        if (st == DTCAST_OK && field == 1) {
            has_key = true;
            st = scan_bytes(&sub, fwt, fat, "external_data key", &key_at, &key_len);
        } else if (st == DTCAST_OK && field == 2) {
            st = scan_bytes(&sub, fwt, fat, "external_data value", &val_at, &val_len);
        } else if (st == DTCAST_OK) {
            st = pb_skip(&sub, fwt, fat);
        }
    }
    if (st != DTCAST_OK)
        return st;
    if (!has_key)
        return pb_fail(r, at, "external_data entry without a key");
    const char *key = (const char *)r->buf + key_at;
    s->ext_at = at;
    if (key_len == 8 && memcmp(key, "location", 8) == 0) {
        s->has_ext_location = true;
        s->ext_location_at = val_at;
        s->ext_location_len = val_len;
    } else if (key_len == 6 && memcmp(key, "offset", 6) == 0) {
        s->has_ext_offset = true;
        return parse_decimal(r, at, val_at, val_len, "offset", &s->ext_offset);
    } else if (key_len == 6 && memcmp(key, "length", 6) == 0) {
        s->has_ext_length = true;
        return parse_decimal(r, at, val_at, val_len, "length", &s->ext_length);
    }
    return DTCAST_OK; /* "checksum" and others: not needed to read the data */
}

static dtcast_status scan_typed(pb *r, uint32_t field, int wt, size_t at, tp_scan *s)
{
    size_t n = 1, start = 0, len = 0;
    dtcast_status st =
        field == TP_STRING
            ? scan_bytes(r, wt, at, "string_data", &start, &len)
            : pb_numbers(r, field_name(field), wt, element_wire_type(field), at, ignore_value,
                         NULL, &n);
    if (st != DTCAST_OK)
        return st;
    if (s->values[field] == 0)
        s->first_at[field] = at;
    s->values[field] += n; /* cannot overflow: each value takes at least one byte of the file */
    return DTCAST_OK;
}

/* Walks the fields of a message, handing each to visit(r, field, wt, at, ctx). */
typedef dtcast_status (*pb_visit)(pb *r, uint32_t field, int wt, size_t at, void *ctx);

static dtcast_status pb_message(pb *r, pb_visit visit, void *ctx)
{
    while (pb_more(r)) {
        uint32_t field = 0;
        int wt = 0;
        size_t at = 0;
        dtcast_status st = pb_key(r, &field, &wt, &at);
        if (st == DTCAST_OK)
            st = visit(r, field, wt, at, ctx);
        if (st != DTCAST_OK)
            return st;
    }
    return DTCAST_OK;
}

/* A sub-message field: expects wire type 2, then visits its fields. */
static dtcast_status scan_field(pb *r, uint32_t field, int wt, size_t at, void *ctx)
{
    tp_scan *s = ctx;
    dtcast_status st;
    switch (field) {
    case TP_DIMS: return scan_dims(r, wt, at, s);
    case TP_DATA_TYPE:
        s->has_type = true;
        s->type_at = at;
        st = pb_expect(r, "data_type", wt, WT_VARINT, at);
        return st == DTCAST_OK ? pb_varint(r, &s->data_type) : st;
    case TP_NAME:
        s->has_name = true;
        s->name_at = at;
        return scan_bytes(r, wt, at, "name", &s->name_at, &s->name_len);
    case TP_RAW:
        s->has_raw = true;
        return scan_bytes(r, wt, at, "raw_data", &s->raw_at, &s->raw_len);
    case TP_SEGMENT: return pb_fail(r, at, "segmented tensors are not supported");
    case TP_EXTERNAL: return scan_external(r, wt, at, s);
    case TP_LOCATION: return scan_location(r, wt, at, s);
    default:
        if (is_typed_field(field))
            return scan_typed(r, field, wt, at, s);
        return pb_skip(r, wt, at);
    }
}

static dtcast_status scan_tensor(pb *r, tp_scan *s)
{
    memset(s, 0, sizeof *s);
    return pb_message(r, scan_field, s);
}

/* ---- TensorProto: checks between the passes ----------------------------------------------- */

static dtcast_status check_type(const pb *r, const tp_scan *s, const dt_format **f)
{
    if (!s->has_type || s->data_type == 0)
        return pb_fail(r, s->has_type ? s->type_at : r->end, "data_type is missing or UNDEFINED");
    *f = s->data_type < 1000 ? dt_format_of((dtcast_type)s->data_type) : NULL;
    if (!*f)
        return pb_fail(r, s->type_at, "unknown data_type %llu",
                       (unsigned long long)s->data_type);
    return DTCAST_OK;
}

/* The values must sit in the type's own field (or raw_data), and be exactly as many as the
 * dims ask for. */
static dtcast_status check_payload(const pb *r, const tp_scan *s, const dt_format *f,
                                   size_t count, size_t nbytes)
{
    tp_layout l = layout_of(f);
    for (uint32_t k = 0; k < TP_NFIELDS; k++)
        if (s->values[k] && k != l.field)
            return pb_fail(r, s->first_at[k], "data_type %s keeps its values in %s, not %s",
                           f->name, field_name(l.field), field_name(k));
    if (s->has_raw && f->type == DTCAST_STRING)
        return pb_fail(r, s->raw_at, "raw_data cannot hold a string tensor");
    if (s->has_raw && s->values[l.field])
        return pb_fail(r, s->raw_at, "both raw_data and %s are present", field_name(l.field));
    if (s->has_raw && s->raw_len != nbytes)
        return pb_fail(r, s->raw_at, "raw_data is %zu bytes but %zu %s elements need %zu%s",
                       s->raw_len, count, f->name, nbytes,
                       is_float6(f) && s->data_type < 100 ? " (packed four in three bytes)" : "");
    size_t want = l.field == TP_STRING || is_float6(f) ? count : nbytes / l.width;
    if (!s->has_raw && s->values[l.field] != want)
        return pb_fail(r, s->values[l.field] ? s->first_at[l.field] : r->end,
                       "%s has %zu values but %zu %s elements need %zu", field_name(l.field),
                       s->values[l.field], count, f->name, want);
    return DTCAST_OK;
}

/* ---- TensorProto: the second pass copies the values ----------------------------------------- */

typedef struct fill_ctx {
    uint8_t *data;
    size_t width, n, cap;
    uint64_t max;   /* the largest value an entry may hold (float6: 63), 0 = any */
    size_t bad;     /* the first entry beyond it, or SIZE_MAX */
    uint64_t bad_value;
} fill_ctx;

/* Stores the low `width` bytes of a value, little-endian (int32_data holds narrower patterns). */
static void store_value(void *ctx, uint64_t value)
{
    fill_ctx *c = ctx;
    if (c->n >= c->cap)
        return;
    if (c->max && value > c->max && c->bad == SIZE_MAX) {
        c->bad = c->n;
        c->bad_value = value;
    }
    for (size_t i = 0; i < c->width; i++)
        c->data[c->n * c->width + i] = (uint8_t)(value >> (8 * i));
    c->n++;
}

static dtcast_status fill_strings(pb *r, int wt, size_t at, char **strings, size_t *n,
                                  size_t cap, dt_io_error *err)
{
    size_t start = 0, len = 0;
    dtcast_status st = scan_bytes(r, wt, at, "string_data", &start, &len);
    if (st != DTCAST_OK || *n >= cap)
        return st;
    char *s = malloc(len + 1);
    if (!s)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "pb: out of memory for a string");
    memcpy(s, r->buf + start, len);
    s[len] = '\0';
    strings[(*n)++] = s;
    return DTCAST_OK;
}

static dtcast_status fill_values(pb *r, dt_tensor *t, const tp_layout *l)
{
    const dt_format *f = dt_format_of(t->type);
    fill_ctx c = {t->data, l->width, 0, l->width ? t->nbytes / l->width : t->count,
                  is_float6(f) ? 63 : 0, SIZE_MAX, 0};
    while (pb_more(r)) {
        uint32_t field = 0;
        int wt = 0;
        size_t at = 0, n = 0;
        dtcast_status st = pb_key(r, &field, &wt, &at);
        if (st != DTCAST_OK)
            return st;
        if (field != l->field)
            st = pb_skip(r, wt, at);
        else if (field == TP_STRING)
            st = fill_strings(r, wt, at, t->data, &c.n, c.cap, r->err);
        else
            st = pb_numbers(r, field_name(field), wt, element_wire_type(field), at, store_value,
                            &c, &n);
        if (st != DTCAST_OK)
            return st;
    }
    if (c.bad != SIZE_MAX)
        return dt_io_fail(r->err, DTCAST_ERR_BAD_FILE,
                          "pb: int32_data entry %zu is %llu, not a %s code (6 bits, 0 to 63)",
                          c.bad, (unsigned long long)(uint32_t)c.bad_value, f->name);
    return DTCAST_OK;
}

static dtcast_status copy_name(const pb *r, const tp_scan *s, dt_tensor *t)
{
    if (!s->has_name)
        return DTCAST_OK;
    t->name = malloc(s->name_len + 1);
    if (!t->name)
        return dt_io_fail(r->err, DTCAST_ERR_OUT_OF_MEMORY, "pb: out of memory for the name");
    memcpy(t->name, r->buf + s->name_at, s->name_len);
    t->name[s->name_len] = '\0';
    return DTCAST_OK;
}

/* External data: the location is required, and nothing may sit in the message as well. */
static dtcast_status check_external(const pb *r, const tp_scan *s, size_t nbytes)
{
    if (s->has_raw)
        return pb_fail(r, s->raw_at, "raw_data beside data_location EXTERNAL");
    for (uint32_t k = 0; k < TP_NFIELDS; k++)
        if (s->values[k])
            return pb_fail(r, s->first_at[k], "%s beside data_location EXTERNAL", field_name(k));
    if (!s->has_ext_location || s->ext_location_len == 0)
        return pb_fail(r, s->location_at, "data_location EXTERNAL without an external_data location");
    if (s->has_ext_length && s->ext_length != nbytes)
        return pb_fail(r, s->ext_at, "external_data length is %llu but the tensor needs %zu bytes",
                       (unsigned long long)s->ext_length, nbytes);
    return DTCAST_OK;
}

/* The first pass and its checks: type, shape, where the values are. */
static dtcast_status locate_tensor(pb *r, tp_scan *s, dt_tensor *t, const dt_format **f,
                                   size_t *nbytes)
{
    dtcast_status st = scan_tensor(r, s);
    if (st == DTCAST_OK)
        st = check_type(r, s, f);
    if (st == DTCAST_OK)
        st = dt_io_at(dt_tensor_set_shape(t, s->ndim, s->dims, "pb", r->err), r->err, s->dims_at);
    /* float6 under ONNX's codes 27, 28 is stored packed (file bytes, not memory bytes); under
     * dtcast 1.0's own codes 105, 106 one element per byte, as 1.0 wrote it */
    dtcast_options packed;
    dtcast_options_init(&packed);
    packed.float6_packed = s->data_type == DTCAST_FLOAT6E2M3FN ||
                           s->data_type == DTCAST_FLOAT6E3M2FN;
    if (st == DTCAST_OK &&
        (st = dtcast_storage_size_opts((*f)->type, t->count, &packed, nbytes, NULL)) != DTCAST_OK)
        return dt_io_fail(r->err, st, "pb: %zu %s elements do not fit in memory", t->count,
                          (*f)->name);
    if (st != DTCAST_OK)
        return st;
    t->type = (*f)->type;
    if (s->external)
        return (*f)->type == DTCAST_STRING
                   ? pb_fail(r, s->location_at, "string tensors cannot be external data")
                   : check_external(r, s, *nbytes);
    return check_payload(r, s, *f, t->count, *nbytes);
}

static dtcast_status parse_tensor(pb *r, dt_tensor *t)
{
    tp_scan s;
    const dt_format *f = NULL;
    size_t nbytes = 0, start = r->pos;
    dtcast_status st = locate_tensor(r, &s, t, &f, &nbytes);
    if (st != DTCAST_OK)
        return st;
    if (s.external)
        return pb_fail(r, s.location_at,
                       "the data is external (in another file): read the .pb by its path");
    if ((st = dt_tensor_alloc(t, r->err)) != DTCAST_OK || (st = copy_name(r, &s, t)) != DTCAST_OK)
        return st;
    if (s.has_raw && is_float6(f) && s.data_type < 100) {
        dt_st_f6_from_bytes(t->data, r->buf + s.raw_at, t->count);
        return DTCAST_OK;
    }
    if (s.has_raw) {
        memcpy(t->data, r->buf + s.raw_at, nbytes);
        return DTCAST_OK;
    }
    tp_layout l = layout_of(f);
    r->pos = start;
    return fill_values(r, t, &l);
}

dtcast_status dt_pb_parse(const uint8_t *buf, size_t len, dt_tensor *t, dt_io_error *err)
{
    if (!t)
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "pb: NULL tensor");
    dt_tensor_init(t);
    if (!buf && len)
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "pb: NULL buffer");
    pb r = {buf, 0, len, "pb", err};
    dtcast_status st = parse_tensor(&r, t);
    if (st != DTCAST_OK)
        dt_tensor_free(t);
    return st;
}

dtcast_status dt_pb_locate(const uint8_t *buf, size_t len, dt_pb_info *info, dt_io_error *err)
{
    memset(info, 0, sizeof *info);
    if (!buf && len)
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "pb: NULL buffer");
    pb r = {buf, 0, len, "pb", err};
    tp_scan s;
    const dt_format *f = NULL;
    size_t nbytes = 0;
    dt_tensor shape;
    dt_tensor_init(&shape);
    dtcast_status st = locate_tensor(&r, &s, &shape, &f, &nbytes);
    if (st != DTCAST_OK)
        return st;
    info->type = shape.type;
    info->ndim = shape.ndim;
    memcpy(info->dims, shape.dims, sizeof info->dims);
    info->count = shape.count;
    info->nbytes = nbytes;
    info->float6_byte_each = is_float6(f) && s.data_type > 100;
    if (s.has_name && !(info->name = malloc(s.name_len + 1)))
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "pb: out of memory");
    if (s.has_name) {
        memcpy(info->name, buf + s.name_at, s.name_len);
        info->name[s.name_len] = '\0';
    }
    if (s.external) {
        info->where = DT_PB_EXTERNAL;
        info->location = malloc(s.ext_location_len + 1);
        if (!info->location) {
            dt_pb_info_free(info);
            return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "pb: out of memory");
        }
        memcpy(info->location, buf + s.ext_location_at, s.ext_location_len);
        info->location[s.ext_location_len] = '\0';
        info->location_at = s.ext_location_at;
        info->ext_offset = s.ext_offset;
        if (strlen(info->location) != s.ext_location_len) {
            dt_pb_info_free(info);
            return pb_fail(&r, s.ext_location_at, "external_data location holds a NUL byte");
        }
    } else if (s.has_raw || nbytes == 0) {
        info->where = DT_PB_RAW;
        info->raw_at = s.has_raw ? s.raw_at : 0;
    } else {
        info->where = DT_PB_TYPED;
    }
    return DTCAST_OK;
}

void dt_pb_info_free(dt_pb_info *info)
{
    free(info->name);
    free(info->location);
    info->name = info->location = NULL;
}

/* ---- writing TensorProto ----------------------------------------------------------------- */

/* Bytes of a length-delimited field with a one-byte key, added to *total. */
static bool add_bytes_field(size_t *total, size_t len)
{
    size_t field;
    return !__builtin_add_overflow(1 + varint_size(len), len, &field) &&
           !__builtin_add_overflow(*total, field, total);
}

/* Bytes of the payload in the file: float6 packed (memory keeps one element per byte). */
static size_t file_bytes(const dt_tensor *t)
{
    const dt_format *f = dt_format_of(t->type);
    return f && is_float6(f) ? t->count / 4 * 3 + (t->count % 4 * 6 + 7) / 8 : t->nbytes;
}

static bool serialized_size(const dt_tensor *t, size_t *total)
{
    *total = 0;
    for (int k = 0; k < t->ndim; k++)
        *total += 1 + varint_size((uint64_t)t->dims[k]);
    *total += 1 + varint_size((uint64_t)t->type);
    if (t->type == DTCAST_STRING) {
        char *const *strings = t->data;
        for (size_t i = 0; i < t->count; i++)
            if (!add_bytes_field(total, strings[i] ? strlen(strings[i]) : 0))
                return false;
    }
    if (t->name && !add_bytes_field(total, strlen(t->name)))
        return false;
    return t->type == DTCAST_STRING || t->nbytes == 0 || add_bytes_field(total, file_bytes(t));
}

dtcast_status dt_pb_serialize(const dt_tensor *t, uint8_t **buf, size_t *len, dt_io_error *err)
{
    if (!t || !buf || !len || (!t->data && t->count))
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "pb: NULL argument");
    if (!dt_format_of(t->type) || t->ndim < 0 || t->ndim > DT_MAX_DIMS)
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "pb: bad tensor (type %d, %d dims)",
                          (int)t->type, t->ndim);
    size_t total;
    if (!serialized_size(t, &total))
        return dt_io_fail(err, DTCAST_ERR_SIZE_OVERFLOW, "pb: tensor too large to serialize");
    uint8_t *out = malloc(total ? total : 1), *p = out;
    if (!out)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "pb: out of memory for %zu bytes", total);
    /* Fields in number order, as protobuf writes them; dims unpacked (proto2 without packed). */
    for (int k = 0; k < t->ndim; k++) {
        p = put_varint(p, TP_DIMS << 3 | WT_VARINT);
        p = put_varint(p, (uint64_t)t->dims[k]);
    }
    p = put_varint(p, TP_DATA_TYPE << 3 | WT_VARINT);
    p = put_varint(p, (uint64_t)t->type);
    if (t->type == DTCAST_STRING) {
        char *const *strings = t->data;
        for (size_t i = 0; i < t->count; i++)
            p = put_bytes(p, TP_STRING, strings[i], strings[i] ? strlen(strings[i]) : 0);
    }
    if (t->name)
        p = put_bytes(p, TP_NAME, t->name, strlen(t->name));
    if (t->type != DTCAST_STRING && t->nbytes) { /* an empty tensor has no raw_data, as in ONNX */
        const size_t n = file_bytes(t);
        if (n != t->nbytes) { /* float6: packed into the field's place */
            p = put_varint(p, TP_RAW << 3 | WT_BYTES);
            p = put_varint(p, n);
            dt_st_f6_to_bytes(p, t->data, t->count);
            p += n;
        } else {
            p = put_bytes(p, TP_RAW, t->data, t->nbytes);
        }
    }
    *buf = out;
    *len = (size_t)(p - out);
    return DTCAST_OK;
}

/* Fields before the payload: dims, data_type, name; in number order as protobuf writes them. */
static size_t head_size(int ndim, const int64_t *dims, dtcast_type type, const char *name)
{
    size_t total = 1 + varint_size((uint64_t)type);
    for (int k = 0; k < ndim; k++)
        total += 1 + varint_size((uint64_t)dims[k]);
    if (name)
        total += 1 + varint_size(strlen(name)) + strlen(name);
    return total;
}

static uint8_t *put_head(uint8_t *p, int ndim, const int64_t *dims, dtcast_type type,
                         const char *name)
{
    for (int k = 0; k < ndim; k++) {
        p = put_varint(p, TP_DIMS << 3 | WT_VARINT);
        p = put_varint(p, (uint64_t)dims[k]);
    }
    p = put_varint(p, TP_DATA_TYPE << 3 | WT_VARINT);
    p = put_varint(p, (uint64_t)type);
    if (name)
        p = put_bytes(p, TP_NAME, name, strlen(name));
    return p;
}

dtcast_status dt_pb_write_prefix(dtcast_type type, int ndim, const int64_t *dims, const char *name,
                                 uint64_t nbytes, uint8_t **buf, size_t *len, dt_io_error *err)
{
    if (ndim < 0 || ndim > DT_MAX_DIMS || type == DTCAST_STRING)
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "pb: bad tensor for streaming");
    size_t total = head_size(ndim, dims, type, name) + 1 + varint_size(nbytes);
    uint8_t *out = malloc(total), *p = out;
    if (!out)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "pb: out of memory");
    p = put_head(p, ndim, dims, type, name);
    if (nbytes) { /* an empty tensor has no raw_data, as in ONNX */
        p = put_varint(p, TP_RAW << 3 | WT_BYTES);
        p = put_varint(p, nbytes);
    }
    *buf = out;
    *len = (size_t)(p - out);
    return DTCAST_OK;
}

static uint8_t *put_entry(uint8_t *p, const char *key, const char *value)
{
    size_t k = strlen(key), v = strlen(value);
    p = put_varint(p, TP_EXTERNAL << 3 | WT_BYTES);
    p = put_varint(p, 1 + varint_size(k) + k + 1 + varint_size(v) + v);
    p = put_bytes(p, 1, key, k);
    return put_bytes(p, 2, value, v);
}

dtcast_status dt_pb_write_external(dtcast_type type, int ndim, const int64_t *dims,
                                   const char *name, const char *location, uint64_t offset,
                                   uint64_t length, uint8_t **buf, size_t *len, dt_io_error *err)
{
    if (ndim < 0 || ndim > DT_MAX_DIMS || type == DTCAST_STRING)
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "pb: bad tensor for external data");
    char off[24], size[24];
    snprintf(off, sizeof off, "%llu", (unsigned long long)offset);
    snprintf(size, sizeof size, "%llu", (unsigned long long)length);
    size_t total = head_size(ndim, dims, type, name) + 3 * (16 + 2 * 10) + strlen(location) + 64;
    uint8_t *out = malloc(total), *p = out;
    if (!out)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "pb: out of memory");
    p = put_head(p, ndim, dims, type, name);
    p = put_entry(p, "location", location);
    p = put_entry(p, "offset", off);
    p = put_entry(p, "length", size);
    p = put_varint(p, TP_LOCATION << 3 | WT_VARINT);
    p = put_varint(p, 1); /* EXTERNAL */
    *buf = out;
    *len = (size_t)(p - out);
    return DTCAST_OK;
}

/* ---- ModelProto ----------------------------------------------------------------------------- */

static dtcast_status pb_nested(pb *r, const char *name, int wt, size_t at, pb_visit visit,
                               void *ctx)
{
    pb sub = {NULL, 0, 0, NULL, NULL};
    dtcast_status st = pb_expect(r, name, wt, WT_BYTES, at);
    if (st == DTCAST_OK)
        st = pb_sub(r, &sub);
    return st == DTCAST_OK ? pb_message(&sub, visit, ctx) : st;
}

static dtcast_status pb_uint(pb *r, const char *name, int wt, size_t at, uint64_t *v)
{
    dtcast_status st = pb_expect(r, name, wt, WT_VARINT, at);
    return st == DTCAST_OK ? pb_varint(r, v) : st;
}

/* TypeProto.tensor_type.elem_type; anything else (sequence, map, ...) stays UNDEFINED. */
static dtcast_status visit_tensor_type(pb *r, uint32_t field, int wt, size_t at, void *ctx)
{
    dtcast_type *type = ctx;
    uint64_t v = 0;
    if (field != 1)
        return pb_skip(r, wt, at);
    dtcast_status st = pb_uint(r, "elem_type", wt, at, &v);
    if (st == DTCAST_OK)
        *type = v < 1000 && dt_format_of((dtcast_type)v) ? (dtcast_type)v : DTCAST_UNDEFINED;
    return st;
}

static dtcast_status visit_type_proto(pb *r, uint32_t field, int wt, size_t at, void *ctx)
{
    if (field != 1)
        return pb_skip(r, wt, at);
    return pb_nested(r, "tensor_type", wt, at, visit_tensor_type, ctx);
}

/* A name kept for display and for naming outputs: one too long for the 64 bytes is cut short. */
static dtcast_status pb_name(pb *r, char *out, size_t size)
{
    pb s = {NULL, 0, 0, NULL, NULL};
    dtcast_status st = pb_sub(r, &s);
    if (st != DTCAST_OK)
        return st;
    size_t n = s.end - s.pos;
    n = n < size ? n : size - 1;
    memcpy(out, r->buf + s.pos, n);
    out[n] = '\0';
    return DTCAST_OK;
}

typedef struct value_info {
    dtcast_type *type;
    char *name; /* 64 bytes, or NULL */
} value_info;

static dtcast_status visit_value_info(pb *r, uint32_t field, int wt, size_t at, void *ctx)
{
    value_info *vi = ctx;
    if (field == 1 && vi->name) {
        dtcast_status st = pb_expect(r, "value name", wt, WT_BYTES, at);
        return st == DTCAST_OK ? pb_name(r, vi->name, 64) : st;
    }
    if (field != 2)
        return pb_skip(r, wt, at);
    return pb_nested(r, "type", wt, at, visit_type_proto, vi->type);
}

static dtcast_status node_name(pb *r, int wt, size_t at, char (*names)[64], int *n,
                               const char *what)
{
    if (*n == 8)
        return pb_fail(r, at, "more than 8 node %ss", what);
    dtcast_status st = pb_expect(r, what, wt, WT_BYTES, at);
    return st == DTCAST_OK ? pb_name(r, names[(*n)++], 64) : st;
}

static dtcast_status visit_attribute(pb *r, uint32_t field, int wt, size_t at, void *ctx)
{
    dt_onnx_attr *a = ctx;
    uint64_t v = 0;
    dtcast_status st;
    switch (field) {
    case 1:
        st = pb_expect(r, "attribute name", wt, WT_BYTES, at);
        return st == DTCAST_OK ? pb_text(r, a->name, sizeof a->name, "attribute name") : st;
    case 2:
        st = pb_expect(r, "attribute f", wt, WT_FIXED32, at);
        if (st == DTCAST_OK && (st = pb_fixed(r, 4, &v)) == DTCAST_OK) {
            uint32_t bits = (uint32_t)v;
            float f;
            memcpy(&f, &bits, sizeof f);
            a->f = f;
            a->kind = a->kind ? a->kind : 1;
        }
        return st;
    case 3:
        st = pb_uint(r, "attribute i", wt, at, &v);
        a->i = to_int64(v);
        a->kind = a->kind ? a->kind : 2;
        return st;
    case 4:
        st = pb_expect(r, "attribute s", wt, WT_BYTES, at);
        a->kind = a->kind ? a->kind : 3;
        return st == DTCAST_OK ? pb_text(r, a->s, sizeof a->s, "attribute string") : st;
    case 20: /* type: wins over the guess from the value fields (old models omit it) */
        st = pb_uint(r, "attribute type", wt, at, &v);
        a->kind = v >= 1 && v <= 3 ? (int)v : -1;
        return st;
    default: return pb_skip(r, wt, at);
    }
}

static dtcast_status visit_node(pb *r, uint32_t field, int wt, size_t at, void *ctx)
{
    dt_onnx_model *m = ctx;
    dtcast_status st;
    if (field == 1)
        return node_name(r, wt, at, m->node_inputs, &m->node_ninputs, "input");
    if (field == 2)
        return node_name(r, wt, at, m->node_outputs, &m->node_noutputs, "output");
    if (field == 4) {
        st = pb_expect(r, "op_type", wt, WT_BYTES, at);
        return st == DTCAST_OK ? pb_text(r, m->op_type, sizeof m->op_type, "op_type") : st;
    }
    if (field != 5)
        return pb_skip(r, wt, at);
    if (m->nattrs == (int)(sizeof m->attrs / sizeof m->attrs[0]))
        return pb_fail(r, at, "more than %d attributes", m->nattrs);
    dt_onnx_attr *a = &m->attrs[m->nattrs++];
    memset(a, 0, sizeof *a);
    return pb_nested(r, "attribute", wt, at, visit_attribute, a);
}

typedef struct graph_ctx {
    dt_onnx_model *m;
    bool have_node;
} graph_ctx;

static dtcast_status add_value_info(pb *r, int wt, size_t at, dtcast_type *types, int *n,
                                    const char *name, char (*names)[64])
{
    if (*n == 8)
        return pb_fail(r, at, "more than 8 graph %ss", name);
    types[*n] = DTCAST_UNDEFINED;
    value_info vi = {&types[*n], names ? names[*n] : NULL};
    (*n)++;
    return pb_nested(r, name, wt, at, visit_value_info, &vi);
}

static dtcast_status visit_graph(pb *r, uint32_t field, int wt, size_t at, void *ctx)
{
    graph_ctx *g = ctx;
    switch (field) {
    case 1: /* node: the first one only */
        g->m->nnodes++;
        if (g->have_node)
            return pb_skip(r, wt, at);
        g->have_node = true;
        return pb_nested(r, "node", wt, at, visit_node, g->m);
    case 11: return add_value_info(r, wt, at, g->m->input_types, &g->m->ninputs, "input", NULL);
    case 12:
        return add_value_info(r, wt, at, g->m->output_types, &g->m->noutputs, "output",
                              g->m->output_names);
    default: return pb_skip(r, wt, at);
    }
}

typedef struct opset_ctx {
    char domain[64];
    uint64_t version;
} opset_ctx;

static dtcast_status visit_opset(pb *r, uint32_t field, int wt, size_t at, void *ctx)
{
    opset_ctx *o = ctx;
    dtcast_status st;
    if (field == 1) {
        st = pb_expect(r, "domain", wt, WT_BYTES, at);
        return st == DTCAST_OK ? pb_text(r, o->domain, sizeof o->domain, "domain") : st;
    }
    if (field == 2)
        return pb_uint(r, "version", wt, at, &o->version);
    return pb_skip(r, wt, at);
}

static dtcast_status visit_model(pb *r, uint32_t field, int wt, size_t at, void *ctx)
{
    graph_ctx *g = ctx;
    if (field == 7)
        return pb_nested(r, "graph", wt, at, visit_graph, g);
    if (field != 8)
        return pb_skip(r, wt, at);
    opset_ctx o = {"", 0};
    dtcast_status st = pb_nested(r, "opset_import", wt, at, visit_opset, &o);
    if (st == DTCAST_OK && (o.domain[0] == '\0' || strcmp(o.domain, "ai.onnx") == 0))
        g->m->opset = to_int64(o.version);
    return st;
}

dtcast_status dt_onnx_model_parse(const uint8_t *buf, size_t len, dt_onnx_model *m,
                                  dt_io_error *err)
{
    if (!m || (!buf && len))
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "onnx model: NULL argument");
    memset(m, 0, sizeof *m);
    pb r = {buf, 0, len, "onnx model", err};
    graph_ctx g = {m, false};
    dtcast_status st = pb_message(&r, visit_model, &g);
    for (int k = 0; k < m->nattrs; k++)
        if (m->attrs[k].kind < 0)
            m->attrs[k].kind = 0; /* a type other than FLOAT, INT, STRING */
    if (st != DTCAST_OK)
        memset(m, 0, sizeof *m);
    return st;
}

const dt_onnx_attr *dt_onnx_model_attr(const dt_onnx_model *m, const char *name)
{
    if (!m || !name)
        return NULL;
    for (int k = 0; k < m->nattrs; k++)
        if (strcmp(m->attrs[k].name, name) == 0)
            return &m->attrs[k];
    return NULL;
}
