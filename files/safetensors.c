/* safetensors: the header reader and checker, the writer of the reference's exact header, the
 * F6 bit stream, and the index of sharded checkpoints. The rules are those of docs/files.md
 * ("safetensors", "F4 and F6 layouts", "Sharded checkpoints"); where it is silent this follows
 * huggingface/safetensors (safetensors/src/tensor.rs): N <= 100,000,000, "{}" is a valid header,
 * leading and trailing JSON whitespace is allowed, unknown keys inside an entry are ignored,
 * "__metadata__": null means no metadata. */
#include "files/safetensors.h"
#include "files/json.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- dtypes ------------------------------------------------------------------------------- */

typedef struct st_dtype {
    const char *name;
    dtcast_type type;
    unsigned bits;
    unsigned rank;  /* position in the reference's Dtype enum: the writer sorts by it, descending */
    int is_float;
} st_dtype;

/* In the order of docs/files.md's dtype table, "safetensors" (dt_st_dtype_list and the writer
 * follow it). */
static const st_dtype dtypes[] = {
    {"BOOL", DTCAST_BOOL, 8, 0, 0},
    {"U8", DTCAST_UINT8, 8, 4, 0},
    {"I8", DTCAST_INT8, 8, 5, 0},
    {"U16", DTCAST_UINT16, 16, 12, 0},
    {"I16", DTCAST_INT16, 16, 11, 0},
    {"U32", DTCAST_UINT32, 32, 16, 0},
    {"I32", DTCAST_INT32, 32, 15, 0},
    {"U64", DTCAST_UINT64, 64, 21, 0},
    {"I64", DTCAST_INT64, 64, 20, 0},
    {"F16", DTCAST_FLOAT16, 16, 13, 1},
    {"BF16", DTCAST_BFLOAT16, 16, 14, 1},
    {"F32", DTCAST_FLOAT32, 32, 17, 1},
    {"F64", DTCAST_FLOAT64, 64, 19, 1},
    {"C64", DTCAST_COMPLEX64, 64, 18, 0},
    {"F8_E4M3", DTCAST_FLOAT8E4M3FN, 8, 7, 1},
    {"F8_E5M2", DTCAST_FLOAT8E5M2, 8, 6, 1},
    {"F8_E4M3FNUZ", DTCAST_FLOAT8E4M3FNUZ, 8, 9, 1},
    {"F8_E5M2FNUZ", DTCAST_FLOAT8E5M2FNUZ, 8, 10, 1},
    {"F8_E8M0", DTCAST_FLOAT8E8M0, 8, 8, 1},
    {"F4", DTCAST_FLOAT4E2M1, 4, 1, 1},
    {"F6_E2M3", DTCAST_FLOAT6E2M3FN, 6, 2, 1},
    {"F6_E3M2", DTCAST_FLOAT6E3M2FN, 6, 3, 1},
};
#define NDTYPES (sizeof dtypes / sizeof dtypes[0])

static const st_dtype *by_type(dtcast_type type)
{
    for (size_t i = 0; i < NDTYPES; i++)
        if (dtypes[i].type == type)
            return &dtypes[i];
    return NULL;
}

static const st_dtype *by_name(const char *name, size_t len)
{
    for (size_t i = 0; i < NDTYPES; i++)
        if (strlen(dtypes[i].name) == len && memcmp(dtypes[i].name, name, len) == 0)
            return &dtypes[i];
    return NULL;
}

const char *dt_st_dtype_name(dtcast_type type)
{
    const st_dtype *d = by_type(type);
    return d ? d->name : NULL;
}

dtcast_type dt_st_dtype_type(const char *name)
{
    const st_dtype *d = name ? by_name(name, strlen(name)) : NULL;
    return d ? d->type : DTCAST_UNDEFINED;
}

const char *dt_st_dtype_list(void)
{
    /* a literal, so that no one builds it at run time (the tests check it against the table) */
    return "bool, uint8, int8, uint16, int16, uint32, int32, uint64, int64, float16, bfloat16, "
           "float32, float64, complex64, float8e4m3fn, float8e5m2, float8e4m3fnuz, "
           "float8e5m2fnuz, float8e8m0, float4e2m1, float6e2m3fn, float6e3m2fn";
}

int dt_st_is_float(dtcast_type type)
{
    const st_dtype *d = by_type(type);
    return d ? d->is_float : 0;
}

/* "safetensors cannot hold T; it holds ..." with the list without spaces, so that the longest
 * type name still fits the one-line message. */
static dtcast_status refuse_type(dtcast_type type, dt_io_error *err)
{
    char list[240] = "";
    size_t n = 0;
    for (size_t i = 0; i < NDTYPES && n < sizeof list; i++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? "," : "",
                              dtcast_type_name(dtypes[i].type));
    const char *name = dtcast_type_name(type);
    return dt_io_fail(err, DTCAST_ERR_UNSUPPORTED, "safetensors cannot hold %s; it holds %s",
                      name ? name : "this type", list);
}

static dtcast_status nbytes_of(const st_dtype *d, uint64_t count, uint64_t *nbytes)
{
    *nbytes = 0;
    if (count > UINT64_MAX / d->bits)
        return DTCAST_ERR_SIZE_OVERFLOW;
    uint64_t bits = count * d->bits;
    if (bits % 8)
        return DTCAST_ERR_INVALID_ARGUMENT;
    *nbytes = bits / 8;
    return DTCAST_OK;
}

dtcast_status dt_st_nbytes(dtcast_type type, uint64_t count, uint64_t *nbytes, dt_io_error *err)
{
    *nbytes = 0;
    const st_dtype *d = by_type(type);
    if (!d)
        return refuse_type(type, err);
    dtcast_status st = nbytes_of(d, count, nbytes);
    if (st == DTCAST_ERR_SIZE_OVERFLOW)
        return dt_io_fail(err, st, "safetensors: %" PRIu64 " elements of %s overflow 64 bits",
                          count, d->name);
    if (st != DTCAST_OK)
        return dt_io_fail(err, st,
                          "safetensors: %" PRIu64 " elements of %s are not a whole number of bytes",
                          count, d->name);
    return DTCAST_OK;
}

/* ---- F6 ----------------------------------------------------------------------------------- */

void dt_st_f6_to_bytes(uint8_t *dst, const uint8_t *src, size_t count)
{
    size_t groups = count / 4, i = 0;
    for (size_t g = 0; g < groups; g++, i += 4) {
        unsigned e0 = src[i] & 63, e1 = src[i + 1] & 63, e2 = src[i + 2] & 63, e3 = src[i + 3] & 63;
        dst[3 * g] = (uint8_t)(e0 | e1 << 6);
        dst[3 * g + 1] = (uint8_t)(e1 >> 2 | e2 << 4);
        dst[3 * g + 2] = (uint8_t)(e2 >> 4 | e3 << 2);
    }
    /* the tail: 1 to 3 elements, zero bits after the last */
    size_t tail = count - i, bytes = (6 * tail + 7) / 8;
    uint8_t *o = dst + 3 * groups;
    memset(o, 0, bytes);
    for (size_t k = 0; k < tail; k++) {
        unsigned v = src[i + k] & 63, bit = 6 * (unsigned)k;
        o[bit / 8] |= (uint8_t)(v << bit % 8);
        if (bit % 8 > 2)
            o[bit / 8 + 1] |= (uint8_t)(v >> (8 - bit % 8));
    }
}

void dt_st_f6_from_bytes(uint8_t *dst, const uint8_t *src, size_t count)
{
    size_t groups = count / 4, i = 0;
    for (size_t g = 0; g < groups; g++, i += 4) {
        unsigned b0 = src[3 * g], b1 = src[3 * g + 1], b2 = src[3 * g + 2];
        dst[i] = (uint8_t)(b0 & 63);
        dst[i + 1] = (uint8_t)((b0 >> 6 | b1 << 2) & 63);
        dst[i + 2] = (uint8_t)((b1 >> 4 | b2 << 4) & 63);
        dst[i + 3] = (uint8_t)(b2 >> 2);
    }
    const uint8_t *in = src + 3 * groups;
    for (size_t k = 0; k < count - i; k++) {
        unsigned bit = 6 * (unsigned)k, v = in[bit / 8] >> bit % 8;
        if (bit % 8 > 2)
            v |= (unsigned)in[bit / 8 + 1] << (8 - bit % 8);
        dst[i + k] = (uint8_t)(v & 63);
    }
}

/* ---- messages ----------------------------------------------------------------------------- */

/* A name as messages show it: at most ~48 bytes (cut at a character boundary, then "..."),
 * control characters and quotes as \xNN so that the message stays one line. */
typedef struct shown {
    char s[80];
} shown;

static shown show(const char *name, size_t len)
{
    shown out;
    size_t o = 0, i = 0;
    while (i < len && o < 48) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x20 || c == 0x7F || c == '\'' || c == '\\') {
            o += (size_t)snprintf(out.s + o, sizeof out.s - o, "\\x%02X", c);
            i++;
            continue;
        }
        size_t n = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        if (n > len - i)
            n = len - i;
        memcpy(out.s + o, name + i, n);
        o += n;
        i += n;
    }
    if (i < len) {
        memcpy(out.s + o, "...", 3);
        o += 3;
    }
    out.s[o] = 0;
    return out;
}

#define BAD DTCAST_ERR_BAD_FILE

/* ---- the length prefix -------------------------------------------------------------------- */

dtcast_status dt_st_json_length(const uint8_t first8[8], uint64_t file_size, uint64_t *n,
                                dt_io_error *err)
{
    *n = 0;
    if (file_size < 8)
        return dt_io_fail(err, BAD,
                          "safetensors: the file (%" PRIu64 " bytes) is shorter than the 8-byte "
                          "header length at byte 0", file_size);
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | first8[i];
    if (v > DT_ST_MAX_HEADER)
        return dt_io_fail(err, BAD,
                          "safetensors: header length %" PRIu64 " is over the limit of %u bytes "
                          "at byte 0", v, DT_ST_MAX_HEADER);
    if (v > file_size - 8)
        return dt_io_fail(err, BAD,
                          "safetensors: header length %" PRIu64 " runs past the end of the file "
                          "(%" PRIu64 " bytes) at byte 0", v, file_size);
    *n = v;
    return DTCAST_OK;
}

/* ---- the header --------------------------------------------------------------------------- */

typedef struct item {
    dt_st_tensor t;
    uint64_t at; /* file offset of its data_offsets, for the tiling messages */
} item;

typedef struct reader {
    const dt_json_doc *doc;
    dt_io_error *err;
} reader;

static uint64_t file_at(const reader *r, uint32_t at) { return r->doc->base + at; }

/* A message ending in " at byte N": the text before is cut short if need be, never the offset. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static dtcast_status fail_at(dt_io_error *err, uint64_t at, const char *fmt, ...);
static dtcast_status fail_at(dt_io_error *err, uint64_t at, const char *fmt, ...)
{
    char body[sizeof err->message - 32];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    return dt_io_fail(err, BAD, "%s at byte %" PRIu64, body, at);
}

/* st with err->tensor set to the name (len bytes) of the tensor a failure is about. */
static dtcast_status about_tensor(dtcast_status st, dt_io_error *err, const char *name, size_t len)
{
    if (err) {
        if (len >= sizeof err->tensor)
            len = sizeof err->tensor - 1;
        memcpy(err->tensor, name, len);
        err->tensor[len] = 0;
    }
    return st;
}

/* "safetensors: tensor 'NAME': WHAT at byte N" */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static dtcast_status tensor_fail(const reader *r, const dt_json_node *entry, uint32_t at,
                                 const char *fmt, ...);
static dtcast_status tensor_fail(const reader *r, const dt_json_node *entry, uint32_t at,
                                 const char *fmt, ...)
{
    char what[sizeof r->err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *key = dt_json_key(r->doc, entry);
    return about_tensor(fail_at(r->err, file_at(r, at), "safetensors: tensor '%s': %s",
                                show(key, entry->key_len).s, what),
                        r->err, key, entry->key_len);
}

/* An exact non-negative integer, or an error naming `what`. */
static dtcast_status get_uint(const reader *r, const dt_json_node *entry, const dt_json_node *v,
                              const char *what, uint64_t *out)
{
    if (v->kind == DT_JSON_NUMBER && v->num == DT_JSON_NUM_UINT) {
        *out = v->u;
        return DTCAST_OK;
    }
    if (v->kind == DT_JSON_NUMBER && v->num == DT_JSON_NUM_OVERFLOW)
        return tensor_fail(r, entry, v->at, "%s does not fit in 64 bits", what);
    return tensor_fail(r, entry, v->at, "%s is not a non-negative integer", what);
}

static dtcast_status read_shape(const reader *r, const dt_json_node *entry, const dt_json_node *v,
                                dt_st_tensor *t)
{
    if (v->kind != DT_JSON_ARRAY)
        return tensor_fail(r, entry, v->at, "shape is not an array");
    if (v->count > DT_MAX_DIMS)
        return tensor_fail(r, entry, v->at, "shape has %u dimensions, at most %d supported",
                           v->count, DT_MAX_DIMS);
    t->ndim = 0;
    t->count = 1;
    for (const dt_json_node *d = dt_json_first(r->doc, v); d; d = dt_json_next(r->doc, d)) {
        char what[40];
        snprintf(what, sizeof what, "shape dimension %d", t->ndim);
        uint64_t dim = 0;
        dtcast_status st = get_uint(r, entry, d, what, &dim);
        if (st != DTCAST_OK)
            return st;
        if (dim > INT64_MAX)
            return tensor_fail(r, entry, d->at, "%s (%" PRIu64 ") is too large", what, dim);
        if (dim && t->count > UINT64_MAX / dim)
            return tensor_fail(r, entry, v->at, "the number of elements overflows 64 bits");
        t->count *= dim;
        t->dims[t->ndim++] = (int64_t)dim;
    }
    return DTCAST_OK;
}

/* One tensor entry: "name": {"dtype", "shape", "data_offsets"}. */
static dtcast_status read_entry(const reader *r, const dt_json_node *entry, item *it)
{
    dt_st_tensor *t = &it->t;
    const char *name = dt_json_key(r->doc, entry);
    if (memchr(name, 0, entry->key_len))
        return dt_io_fail(r->err, BAD,
                          "safetensors: tensor name '%s' holds a NUL byte at byte %" PRIu64,
                          show(name, entry->key_len).s, file_at(r, entry->key_at));
    if (entry->kind != DT_JSON_OBJECT)
        return tensor_fail(r, entry, entry->at, "the entry is not an object");
    static const char *const fields[3] = {"dtype", "shape", "data_offsets"};
    const dt_json_node *f[3] = {NULL, NULL, NULL};
    for (const dt_json_node *c = dt_json_first(r->doc, entry); c; c = dt_json_next(r->doc, c))
        for (int k = 0; k < 3; k++)
            if (c->key_len == strlen(fields[k]) && strcmp(dt_json_key(r->doc, c), fields[k]) == 0) {
                if (f[k])
                    return tensor_fail(r, entry, c->key_at, "duplicate field \"%s\"", fields[k]);
                f[k] = c;
            }
    for (int k = 0; k < 3; k++)
        if (!f[k])
            return tensor_fail(r, entry, entry->at, "missing field \"%s\"", fields[k]);
    const st_dtype *d = NULL;
    if (f[0]->kind != DT_JSON_STRING)
        return tensor_fail(r, entry, f[0]->at, "dtype is not a string");
    d = by_name(dt_json_str(r->doc, f[0]), f[0]->len);
    if (!d)
        return tensor_fail(r, entry, f[0]->at, "unknown dtype \"%s\"",
                           show(dt_json_str(r->doc, f[0]), f[0]->len).s);
    t->type = d->type;
    dtcast_status st = read_shape(r, entry, f[1], t);
    if (st != DTCAST_OK)
        return st;
    const dt_json_node *o = f[2];
    if (o->kind != DT_JSON_ARRAY || o->count != 2)
        return tensor_fail(r, entry, o->at, "data_offsets is not an array of two integers");
    const dt_json_node *b = dt_json_first(r->doc, o), *e = dt_json_next(r->doc, b);
    if ((st = get_uint(r, entry, b, "data_offsets begin", &t->begin)) != DTCAST_OK ||
        (st = get_uint(r, entry, e, "data_offsets end", &t->end)) != DTCAST_OK)
        return st;
    it->at = file_at(r, o->at);
    if (t->end < t->begin)
        return tensor_fail(r, entry, o->at,
                           "data_offsets [%" PRIu64 ", %" PRIu64 "] end before they begin",
                           t->begin, t->end);
    uint64_t nbytes;
    st = nbytes_of(d, t->count, &nbytes);
    if (st == DTCAST_ERR_SIZE_OVERFLOW)
        return tensor_fail(r, entry, f[1]->at, "%" PRIu64 " elements of %s overflow 64 bits",
                           t->count, d->name);
    if (st != DTCAST_OK)
        return tensor_fail(r, entry, f[1]->at,
                           "%" PRIu64 " elements of %s are not a whole number of bytes",
                           t->count, d->name);
    if (t->end - t->begin != nbytes)
        return tensor_fail(r, entry, o->at,
                           "data_offsets [%" PRIu64 ", %" PRIu64 "] hold %" PRIu64
                           " bytes, but %" PRIu64 " elements of %s need %" PRIu64,
                           t->begin, t->end, t->end - t->begin, t->count, d->name, nbytes);
    t->name = malloc(entry->key_len + 1);
    if (!t->name)
        return dt_io_fail(r->err, DTCAST_ERR_OUT_OF_MEMORY, "safetensors: out of memory");
    memcpy(t->name, name, entry->key_len + 1);
    return DTCAST_OK;
}

static dtcast_status read_metadata(const reader *r, const dt_json_node *v, dt_st_header *h)
{
    if (v->kind == DT_JSON_NULL)
        return DTCAST_OK; /* the reference reads null as no metadata */
    if (v->kind != DT_JSON_OBJECT)
        return dt_io_fail(r->err, BAD,
                          "safetensors: __metadata__ is not an object at byte %" PRIu64,
                          file_at(r, v->at));
    dtcast_status st;
    const dt_json_node *dup = dt_json_duplicate(r->doc, v, &st);
    if (st != DTCAST_OK)
        return dt_io_fail(r->err, st, "safetensors: out of memory");
    if (dup)
        return dt_io_fail(r->err, BAD,
                          "safetensors: duplicate __metadata__ key '%s' at byte %" PRIu64,
                          show(dt_json_key(r->doc, dup), dup->key_len).s, file_at(r, dup->key_at));
    h->has_meta = 1;
    h->meta = calloc(v->count ? v->count : 1, sizeof *h->meta);
    if (!h->meta)
        return dt_io_fail(r->err, DTCAST_ERR_OUT_OF_MEMORY, "safetensors: out of memory");
    for (const dt_json_node *c = dt_json_first(r->doc, v); c; c = dt_json_next(r->doc, c)) {
        const char *key = dt_json_key(r->doc, c);
        if (c->kind != DT_JSON_STRING)
            return dt_io_fail(r->err, BAD,
                              "safetensors: __metadata__ value of '%s' is not a string "
                              "at byte %" PRIu64, show(key, c->key_len).s, file_at(r, c->at));
        const char *value = dt_json_str(r->doc, c);
        if (memchr(key, 0, c->key_len) || memchr(value, 0, c->len))
            return dt_io_fail(r->err, BAD,
                              "safetensors: __metadata__ entry '%s' holds a NUL byte "
                              "at byte %" PRIu64, show(key, c->key_len).s, file_at(r, c->key_at));
        dt_st_meta *m = &h->meta[h->nmeta++];
        m->key = strdup(key);
        m->value = strdup(value);
        if (!m->key || !m->value)
            return dt_io_fail(r->err, DTCAST_ERR_OUT_OF_MEMORY, "safetensors: out of memory");
    }
    return DTCAST_OK;
}

static int cmp_item(const void *a, const void *b)
{
    const dt_st_tensor *x = &((const item *)a)->t, *y = &((const item *)b)->t;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The ranges, in order, must tile [0, buffer) exactly. */
static dtcast_status check_tiling(const item *items, size_t n, uint64_t buffer,
                                  uint64_t data_start, dt_io_error *err)
{
    uint64_t expect = 0;
    for (size_t i = 0; i < n; i++) {
        const dt_st_tensor *t = &items[i].t;
        shown name = show(t->name, strlen(t->name));
        const char *prev = i ? items[i - 1].t.name : "";
        if (t->begin > expect)
            return about_tensor(fail_at(err, items[i].at,
                           "safetensors: bytes [%" PRIu64 ", %" PRIu64 ") of the data belong to no "
                           "tensor (a hole before tensor '%s')", expect, t->begin, name.s),
                                err, t->name, strlen(t->name));
        if (t->begin < expect)
            return about_tensor(fail_at(err, items[i].at,
                           "safetensors: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64
                           "] overlap tensor '%s' (which ends at %" PRIu64 ")", name.s, t->begin,
                           t->end, show(prev, strlen(prev)).s, expect),
                                err, t->name, strlen(t->name));
        if (t->end > buffer)
            return about_tensor(fail_at(err, items[i].at,
                           "safetensors: tensor '%s': data_offsets end %" PRIu64 " is past the end "
                           "of the data (%" PRIu64 " bytes; a truncated file?)", name.s, t->end,
                           buffer),
                                err, t->name, strlen(t->name));
        expect = t->end;
    }
    if (expect < buffer)
        return fail_at(err, data_start + expect,
                       "safetensors: %" PRIu64 " bytes after the last tensor's data (the data is "
                       "%" PRIu64 " bytes, the tensors end at %" PRIu64 ")", buffer - expect,
                       buffer, expect);
    return DTCAST_OK;
}

void dt_st_header_free(dt_st_header *h)
{
    for (size_t i = 0; i < h->ntensors; i++)
        free(h->tensors[i].name);
    free(h->tensors);
    for (size_t i = 0; i < h->nmeta; i++) {
        free(h->meta[i].key);
        free(h->meta[i].value);
    }
    free(h->meta);
    memset(h, 0, sizeof *h);
}

static dtcast_status parse_header(const dt_json_doc *doc, uint64_t buffer, dt_st_header *h,
                                  item **items_out, size_t *nitems, dt_io_error *err)
{
    reader r = {doc, err};
    const dt_json_node *root = &doc->nodes[0];
    if (root->kind != DT_JSON_OBJECT)
        return dt_io_fail(err, BAD, "safetensors: the header is not a JSON object at byte %" PRIu64,
                          file_at(&r, root->at));
    dtcast_status st;
    const dt_json_node *dup = dt_json_duplicate(doc, root, &st);
    if (st != DTCAST_OK)
        return dt_io_fail(err, st, "safetensors: out of memory");
    if (dup)
        return dt_io_fail(err, BAD, "safetensors: duplicate %s '%s' at byte %" PRIu64,
                          strcmp(dt_json_key(doc, dup), "__metadata__") == 0 ? "key"
                                                                             : "tensor name",
                          show(dt_json_key(doc, dup), dup->key_len).s, file_at(&r, dup->key_at));
    item *items = calloc(root->count ? root->count : 1, sizeof *items);
    if (!items)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "safetensors: out of memory");
    *items_out = items;
    for (const dt_json_node *c = dt_json_first(doc, root); c; c = dt_json_next(doc, c)) {
        if (c->key_len == 12 && strcmp(dt_json_key(doc, c), "__metadata__") == 0)
            st = read_metadata(&r, c, h);
        else if ((st = read_entry(&r, c, &items[*nitems])) == DTCAST_OK)
            ++*nitems;
        if (st != DTCAST_OK)
            return st;
    }
    qsort(items, *nitems, sizeof *items, cmp_item);
    return check_tiling(items, *nitems, buffer, h->data_start, err);
}

dtcast_status dt_st_parse(const uint8_t *json, size_t n, uint64_t file_size, dt_st_header *h,
                          dt_io_error *err)
{
    memset(h, 0, sizeof *h);
    if (n > DT_ST_MAX_HEADER || file_size < 8 || n > file_size - 8)
        return dt_io_fail(err, BAD,
                          "safetensors: header length %zu does not fit the limit (%u) or the file "
                          "(%" PRIu64 " bytes) at byte 0", n, DT_ST_MAX_HEADER, file_size);
    h->json_len = n;
    h->data_start = 8 + (uint64_t)n;
    dt_json_doc doc;
    dtcast_status st = dt_json_parse(json, n, 8, "safetensors: header", &doc, err);
    if (st != DTCAST_OK)
        return st;
    item *items = NULL;
    size_t nitems = 0;
    st = parse_header(&doc, file_size - h->data_start, h, &items, &nitems, err);
    dt_json_free(&doc);
    if (st == DTCAST_OK) {
        h->tensors = malloc((nitems ? nitems : 1) * sizeof *h->tensors);
        if (!h->tensors)
            st = dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "safetensors: out of memory");
    }
    if (st != DTCAST_OK) {
        for (size_t i = 0; i < nitems; i++)
            free(items[i].t.name);
        free(items);
        dt_st_header_free(h);
        return st;
    }
    for (size_t i = 0; i < nitems; i++)
        h->tensors[i] = items[i].t;
    h->ntensors = nitems;
    free(items);
    return DTCAST_OK;
}

/* ---- the writer --------------------------------------------------------------------------- */

static int cmp_write_order(const void *a, const void *b)
{
    const dt_st_tensor *x = a, *y = b;
    unsigned rx = by_type(x->type)->rank, ry = by_type(y->type)->rank;
    if (rx != ry)
        return rx > ry ? -1 : 1; /* dtype descending */
    return strcmp(x->name, y->name); /* bytes ascending (strcmp compares unsigned chars) */
}

static int cmp_str_ptr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first string that appears twice in strs[0, n) (sorted in place), or NULL. */
static const char *find_twice(const char **strs, size_t n)
{
    qsort(strs, n, sizeof *strs, cmp_str_ptr);
    for (size_t i = 1; i < n; i++)
        if (strcmp(strs[i - 1], strs[i]) == 0)
            return strs[i];
    return NULL;
}

static int valid_utf8(const char *s)
{
    return dt_json_utf8_check((const uint8_t *)s, strlen(s)) == strlen(s);
}

static dtcast_status check_for_writing(dt_st_tensor *tensors, size_t n, const dt_st_meta *meta,
                                       size_t nmeta, dt_io_error *err)
{
    for (size_t i = 0; i < n; i++) {
        dt_st_tensor *t = &tensors[i];
        if (!t->name || !valid_utf8(t->name))
            return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                              "safetensors: tensor %zu has no name or a name that is not UTF-8", i);
        if (!by_type(t->type))
            return refuse_type(t->type, err);
        if (t->ndim < 0 || t->ndim > DT_MAX_DIMS)
            return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                              "safetensors: tensor '%s' has %d dimensions",
                              show(t->name, strlen(t->name)).s, t->ndim);
        uint64_t count = 1;
        for (int k = 0; k < t->ndim; k++) {
            if (t->dims[k] < 0 || (t->dims[k] && count > UINT64_MAX / (uint64_t)t->dims[k]))
                return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                                  "safetensors: tensor '%s' has a negative or too large shape",
                                  show(t->name, strlen(t->name)).s);
            count *= (uint64_t)t->dims[k];
        }
        t->count = count;
        uint64_t nbytes;
        dtcast_status st = dt_st_nbytes(t->type, count, &nbytes, err);
        if (st != DTCAST_OK)
            return st;
    }
    for (size_t i = 0; i < nmeta; i++)
        if (!meta[i].key || !meta[i].value || !valid_utf8(meta[i].key) ||
            !valid_utf8(meta[i].value))
            return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                              "safetensors: __metadata__ entry %zu is missing or not UTF-8", i);
    size_t most = n > nmeta ? n : nmeta;
    const char **strs = malloc((most ? most : 1) * sizeof *strs);
    if (!strs)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "safetensors: out of memory");
    for (size_t i = 0; i < n; i++)
        strs[i] = tensors[i].name;
    const char *twice = find_twice(strs, n);
    dtcast_status st = DTCAST_OK;
    if (twice) {
        st = dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "safetensors: duplicate tensor name '%s'",
                        show(twice, strlen(twice)).s);
    } else {
        for (size_t i = 0; i < nmeta; i++)
            strs[i] = meta[i].key;
        if ((twice = find_twice(strs, nmeta)) != NULL)
            st = dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                            "safetensors: duplicate __metadata__ key '%s'",
                            show(twice, strlen(twice)).s);
    }
    free(strs);
    return st;
}

dtcast_status dt_st_build(dt_st_tensor *tensors, size_t n, int has_meta, const dt_st_meta *meta,
                          size_t nmeta, uint8_t **prefix, size_t *prefix_len, dt_io_error *err)
{
    *prefix = NULL;
    *prefix_len = 0;
    if ((n && !tensors) || (nmeta && !meta))
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                          "safetensors: NULL tensors or metadata");
    if (!has_meta)
        nmeta = 0;
    dtcast_status st = check_for_writing(tensors, n, meta, nmeta, err);
    if (st != DTCAST_OK)
        return st;
    if (n)
        qsort(tensors, n, sizeof *tensors, cmp_write_order);
    dt_json_buf b = {0};
    dt_json_put(&b, "\0\0\0\0\0\0\0\0{", 9); /* N is filled in below */
    if (has_meta) {
        dt_json_puts(&b, "\"__metadata__\":{");
        for (size_t i = 0; i < nmeta; i++) {
            if (i)
                dt_json_puts(&b, ",");
            dt_json_put_string(&b, meta[i].key, strlen(meta[i].key), 0);
            dt_json_puts(&b, ":");
            dt_json_put_string(&b, meta[i].value, strlen(meta[i].value), 0);
        }
        dt_json_puts(&b, "}");
    }
    uint64_t offset = 0;
    for (size_t i = 0; i < n; i++) {
        dt_st_tensor *t = &tensors[i];
        uint64_t nbytes;
        dt_st_nbytes(t->type, t->count, &nbytes, NULL); /* checked above */
        if (nbytes > UINT64_MAX - offset) {
            free(b.data);
            return dt_io_fail(err, DTCAST_ERR_SIZE_OVERFLOW,
                              "safetensors: the data overflows 64 bits");
        }
        t->begin = offset;
        t->end = offset += nbytes;
        if (i || has_meta)
            dt_json_puts(&b, ",");
        dt_json_put_string(&b, t->name, strlen(t->name), 0);
        dt_json_puts(&b, ":{\"dtype\":\"");
        dt_json_puts(&b, dt_st_dtype_name(t->type));
        dt_json_puts(&b, "\",\"shape\":[");
        for (int k = 0; k < t->ndim; k++) {
            if (k)
                dt_json_puts(&b, ",");
            dt_json_put_u64(&b, (uint64_t)t->dims[k]);
        }
        dt_json_puts(&b, "],\"data_offsets\":[");
        dt_json_put_u64(&b, t->begin);
        dt_json_puts(&b, ",");
        dt_json_put_u64(&b, t->end);
        dt_json_puts(&b, "]}");
    }
    dt_json_puts(&b, "}");
    while (!b.oom && (b.len - 8) % 8)
        dt_json_puts(&b, " "); /* the reference pads with spaces to a multiple of 8 */
    if (b.oom) {
        free(b.data);
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "safetensors: out of memory");
    }
    uint64_t len = b.len - 8;
    if (len > DT_ST_MAX_HEADER) {
        free(b.data);
        return dt_io_fail(err, DTCAST_ERR_SIZE_OVERFLOW,
                          "safetensors: the header would be %" PRIu64
                          " bytes, over the limit of %u",
                          len, DT_ST_MAX_HEADER);
    }
    for (int i = 0; i < 8; i++)
        b.data[i] = (char)(len >> (8 * i) & 0xFF);
    *prefix = (uint8_t *)b.data;
    *prefix_len = b.len;
    return DTCAST_OK;
}

/* ---- the index of sharded checkpoints ----------------------------------------------------- */

#define IX "safetensors index"

void dt_st_index_free(dt_st_index *ix)
{
    for (size_t i = 0; i < ix->nentries; i++)
        free(ix->entries[i].name);
    free(ix->entries);
    for (size_t i = 0; i < ix->nshards; i++)
        free(ix->shards[i]);
    free(ix->shards);
    for (size_t i = 0; i < ix->nmeta; i++) {
        free(ix->meta[i].key);
        free(ix->meta[i].json);
    }
    free(ix->meta);
    for (size_t i = 0; i < ix->nextra; i++) {
        free(ix->extra[i].key);
        free(ix->extra[i].json);
    }
    free(ix->extra);
    memset(ix, 0, sizeof *ix);
}

static int plain_file_name(const char *s, size_t len)
{
    return len > 0 && !memchr(s, 0, len) && !memchr(s, '/', len) && !memchr(s, '\\', len) &&
           strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

/* Keeps member c's key and its value's text. */
static int keep_raw(const dt_json_doc *doc, const dt_json_node *c, dt_st_index_raw *out)
{
    out->key = strdup(dt_json_key(doc, c));
    out->json = malloc(c->end - c->at + 1);
    if (!out->key || !out->json)
        return 0;
    memcpy(out->json, doc->text + c->at, c->end - c->at);
    out->json[c->end - c->at] = 0;
    return 1;
}

typedef struct shard_ref {
    const char *s;
    size_t entry;
} shard_ref;

static int cmp_shard_ref(const void *a, const void *b)
{
    const shard_ref *x = a, *y = b;
    int c = strcmp(x->s, y->s);
    return c ? c : x->entry < y->entry ? -1 : x->entry > y->entry;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* The distinct shard names in first-seen order: sorting (name, entry) pairs groups the entries
 * of a shard; each group's first entry gives its place. */
static dtcast_status collect_shards(dt_st_index *ix, const char **names, dt_io_error *err)
{
    size_t n = ix->nentries;
    shard_ref *refs = malloc((n ? n : 1) * sizeof *refs);
    size_t *firsts = malloc((n ? n : 1) * sizeof *firsts);
    ix->shards = calloc(n ? n : 1, sizeof *ix->shards);
    if (!refs || !firsts || !ix->shards) {
        free(refs);
        free(firsts);
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, IX ": out of memory");
    }
    for (size_t i = 0; i < n; i++)
        refs[i] = (shard_ref){names[i], i};
    qsort(refs, n, sizeof *refs, cmp_shard_ref);
    size_t groups = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(refs[i].s, refs[i - 1].s) != 0)
            firsts[groups++] = refs[i].entry;
    qsort(firsts, groups, sizeof *firsts, cmp_size);
    dtcast_status st = DTCAST_OK;
    for (size_t g = 0; g < groups && st == DTCAST_OK; g++)
        if (!(ix->shards[ix->nshards++] = strdup(names[firsts[g]])))
            st = dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, IX ": out of memory");
    /* each entry's shard: its group's place, found by binary search on the first entries */
    for (size_t i = 0, g = 0; i < n && st == DTCAST_OK; i++) {
        if (i == 0 || strcmp(refs[i].s, refs[i - 1].s) != 0) {
            size_t first = refs[i].entry;
            const size_t *hit = bsearch(&first, firsts, groups, sizeof *firsts, cmp_size);
            g = (size_t)(hit - firsts);
        }
        ix->entries[refs[i].entry].shard = g;
    }
    free(refs);
    free(firsts);
    return st;
}

static dtcast_status read_index(const dt_json_doc *doc, dt_st_index *ix, dt_io_error *err)
{
    const dt_json_node *root = &doc->nodes[0];
    if (root->kind != DT_JSON_OBJECT)
        return dt_io_fail(err, BAD, IX ": not a JSON object at byte %" PRIu32, root->at);
    dtcast_status st;
    const dt_json_node *dup = dt_json_duplicate(doc, root, &st);
    if (!dup && st == DTCAST_OK) {
        const dt_json_node *wm = dt_json_get(doc, root, "weight_map");
        if (wm && wm->kind == DT_JSON_OBJECT)
            dup = dt_json_duplicate(doc, wm, &st);
    }
    if (st != DTCAST_OK)
        return dt_io_fail(err, st, IX ": out of memory");
    if (dup)
        return dt_io_fail(err, BAD, IX ": duplicate key '%s' at byte %" PRIu32,
                          show(dt_json_key(doc, dup), dup->key_len).s, dup->key_at);
    const dt_json_node *wm = dt_json_get(doc, root, "weight_map");
    if (!wm || wm->kind != DT_JSON_OBJECT)
        return dt_io_fail(err, BAD, IX ": no \"weight_map\" object at byte %" PRIu32,
                          wm ? wm->at : root->at);
    ix->entries = calloc(wm->count ? wm->count : 1, sizeof *ix->entries);
    ix->extra = calloc(root->count ? root->count : 1, sizeof *ix->extra);
    const char **names = calloc(wm->count ? wm->count : 1, sizeof *names);
    if (!ix->entries || !ix->extra || !names) {
        free(names);
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, IX ": out of memory");
    }
    st = DTCAST_OK;
    for (const dt_json_node *c = dt_json_first(doc, wm); c && st == DTCAST_OK;
         c = dt_json_next(doc, c)) {
        const char *name = dt_json_key(doc, c), *shard = dt_json_str(doc, c);
        if (memchr(name, 0, c->key_len))
            st = dt_io_fail(err, BAD, IX ": tensor name '%s' holds a NUL byte at byte %" PRIu32,
                            show(name, c->key_len).s, c->key_at);
        else if (c->kind != DT_JSON_STRING || !plain_file_name(shard, c->len))
            st = dt_io_fail(err, BAD,
                            IX ": the shard of tensor '%s' is not a plain file name "
                               "at byte %" PRIu32,
                            show(name, c->key_len).s, c->at);
        else if (!(ix->entries[ix->nentries].name = strdup(name)))
            st = dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, IX ": out of memory");
        else
            names[ix->nentries++] = shard;
    }
    if (st == DTCAST_OK)
        st = collect_shards(ix, names, err);
    free(names);
    if (st != DTCAST_OK)
        return st;
    const dt_json_node *meta = dt_json_get(doc, root, "metadata");
    if (meta && meta->kind != DT_JSON_OBJECT)
        return dt_io_fail(err, BAD, IX ": \"metadata\" is not an object at byte %" PRIu32,
                          meta->at);
    if (meta) {
        if ((dup = dt_json_duplicate(doc, meta, &st)) != NULL || st != DTCAST_OK)
            return dup ? dt_io_fail(err, BAD, IX ": duplicate metadata key '%s' at byte %" PRIu32,
                                    show(dt_json_key(doc, dup), dup->key_len).s, dup->key_at)
                       : dt_io_fail(err, st, IX ": out of memory");
        ix->meta = calloc(meta->count ? meta->count : 1, sizeof *ix->meta);
        if (!ix->meta)
            return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, IX ": out of memory");
        for (const dt_json_node *c = dt_json_first(doc, meta); c; c = dt_json_next(doc, c)) {
            if (memchr(dt_json_key(doc, c), 0, c->key_len))
                return dt_io_fail(err, BAD, IX ": a metadata key holds a NUL byte at byte %" PRIu32,
                                  c->key_at);
            if (strcmp(dt_json_key(doc, c), "total_size") == 0) {
                ix->has_total_size = c->kind == DT_JSON_NUMBER && c->num == DT_JSON_NUM_UINT;
                ix->total_size = c->u;
            } else if (!keep_raw(doc, c, &ix->meta[ix->nmeta++])) {
                return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, IX ": out of memory");
            }
        }
    }
    for (const dt_json_node *c = dt_json_first(doc, root); c; c = dt_json_next(doc, c)) {
        const char *key = dt_json_key(doc, c);
        if (memchr(key, 0, c->key_len))
            return dt_io_fail(err, BAD, IX ": a key holds a NUL byte at byte %" PRIu32, c->key_at);
        if (strcmp(key, "metadata") != 0 && strcmp(key, "weight_map") != 0 &&
            !keep_raw(doc, c, &ix->extra[ix->nextra++]))
            return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, IX ": out of memory");
    }
    return DTCAST_OK;
}

dtcast_status dt_st_index_parse(const uint8_t *json, size_t n, dt_st_index *ix, dt_io_error *err)
{
    memset(ix, 0, sizeof *ix);
    dt_json_doc doc;
    dtcast_status st = dt_json_parse(json, n, 0, IX, &doc, err);
    if (st != DTCAST_OK)
        return st;
    st = read_index(&doc, ix, err);
    dt_json_free(&doc);
    if (st != DTCAST_OK)
        dt_st_index_free(ix);
    return st;
}

/* One member of an object being written: key and what to write for it. */
typedef struct out_member {
    const char *key;
    const char *json;  /* a kept value, or NULL */
    int what;          /* 0 kept value, 1 metadata, 2 weight_map, 3 total_size */
} out_member;

static int cmp_out_member(const void *a, const void *b)
{
    return strcmp(((const out_member *)a)->key, ((const out_member *)b)->key);
}

static int cmp_entry_name(const void *a, const void *b)
{
    return strcmp((*(const dt_st_index_entry *const *)a)->name,
                  (*(const dt_st_index_entry *const *)b)->name);
}

/* A kept value, re-parsed and printed as json.dumps(indent=2) prints it at this level. */
static void put_kept(dt_json_buf *b, const char *json, int level)
{
    dt_json_doc doc;
    if (dt_json_parse((const uint8_t *)json, strlen(json), 0, NULL, &doc, NULL) != DTCAST_OK) {
        b->oom = 1; /* kept text always parses (it came from a parse); treat failure as fatal */
        return;
    }
    dt_json_put_pretty(b, &doc, &doc.nodes[0], level);
    dt_json_free(&doc);
}

static void put_weight_map(dt_json_buf *b, const dt_st_index *ix)
{
    if (ix->nentries == 0) {
        dt_json_puts(b, "{}");
        return;
    }
    const dt_st_index_entry **sorted = malloc(ix->nentries * sizeof *sorted);
    if (!sorted) {
        b->oom = 1;
        return;
    }
    for (size_t i = 0; i < ix->nentries; i++)
        sorted[i] = &ix->entries[i];
    qsort(sorted, ix->nentries, sizeof *sorted, cmp_entry_name);
    dt_json_puts(b, "{");
    for (size_t i = 0; i < ix->nentries; i++) {
        const char *shard = ix->shards[sorted[i]->shard];
        dt_json_puts(b, i ? ",\n    " : "\n    ");
        dt_json_put_string(b, sorted[i]->name, strlen(sorted[i]->name), 1);
        dt_json_puts(b, ": ");
        dt_json_put_string(b, shard, strlen(shard), 1);
    }
    dt_json_puts(b, "\n  }");
    free(sorted);
}

/* Writes members (sorted here) at `level` as a json.dumps(indent=2) object. */
static void put_members(dt_json_buf *b, const dt_st_index *ix, out_member *m, size_t n,
                        uint64_t total_size, int level)
{
    qsort(m, n, sizeof *m, cmp_out_member);
    dt_json_puts(b, "{");
    for (size_t i = 0; i < n; i++) {
        dt_json_puts(b, i ? ",\n" : "\n");
        for (int k = 0; k <= level; k++)
            dt_json_puts(b, "  ");
        dt_json_put_string(b, m[i].key, strlen(m[i].key), 1);
        dt_json_puts(b, ": ");
        if (m[i].what == 0) {
            put_kept(b, m[i].json, level + 1);
        } else if (m[i].what == 3) {
            dt_json_put_u64(b, total_size);
        } else if (m[i].what == 2) {
            put_weight_map(b, ix);
        } else {
            out_member *mm = malloc((ix->nmeta + 1) * sizeof *mm);
            if (!mm) {
                b->oom = 1;
                return;
            }
            for (size_t k = 0; k < ix->nmeta; k++)
                mm[k] = (out_member){ix->meta[k].key, ix->meta[k].json, 0};
            mm[ix->nmeta] = (out_member){"total_size", NULL, 3};
            put_members(b, ix, mm, ix->nmeta + 1, total_size, level + 1);
            free(mm);
        }
    }
    dt_json_puts(b, "\n");
    for (int k = 0; k < level; k++)
        dt_json_puts(b, "  ");
    dt_json_puts(b, "}");
}

dtcast_status dt_st_index_build(const dt_st_index *ix, uint64_t total_size, uint8_t **buf,
                                size_t *len, dt_io_error *err)
{
    *buf = NULL;
    *len = 0;
    for (size_t i = 0; i < ix->nentries; i++)
        if (ix->entries[i].shard >= ix->nshards || !valid_utf8(ix->entries[i].name))
            return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                              IX ": entry %zu has no shard or a name that is not UTF-8", i);
    for (size_t i = 0; i < ix->nshards; i++)
        if (!valid_utf8(ix->shards[i]))
            return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, IX ": shard %zu is not UTF-8", i);
    out_member *top = malloc((ix->nextra + 2) * sizeof *top);
    if (!top)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, IX ": out of memory");
    size_t n = 0;
    top[n++] = (out_member){"metadata", NULL, 1};
    top[n++] = (out_member){"weight_map", NULL, 2};
    for (size_t i = 0; i < ix->nextra; i++)
        top[n++] = (out_member){ix->extra[i].key, ix->extra[i].json, 0};
    dt_json_buf b = {0};
    put_members(&b, ix, top, n, total_size, 0);
    dt_json_puts(&b, "\n");
    free(top);
    if (b.oom) {
        free(b.data);
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, IX ": out of memory");
    }
    *buf = (uint8_t *)b.data;
    *len = b.len;
    return DTCAST_OK;
}
