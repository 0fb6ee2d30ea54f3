/* .npy files: the numpy array format, versions 1.0, 2.0 and 3.0.
 *
 * A file is "\x93NUMPY", two version bytes, the header length (uint16 for 1.0, uint32 after), a
 * Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)} and the raw items. */
#include "files/npy.h"
#include "files/tensor.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC "\x93NUMPY"
#define MAGIC_LEN 6
#define HEADER_ALIGN 64

/* What the 'descr' of a file says about one item. */
typedef enum item_kind {
    ITEM_NUMBER, /* stored exactly as dtcast stores `type` (after byte order) */
    ITEM_BYTES,  /* |u1 or |V<n>: opaque bytes, reinterpreted by the caller's hint */
    ITEM_UTF32,  /* <U<n>: n UTF-32 code units */
    ITEM_CHARS,  /* |S<n>: n bytes */
    ITEM_UNPACKED /* an ml_dtypes sub-byte type: one element per byte, low bits */
} item_kind;

typedef struct npy_dtype {
    item_kind kind;
    dtcast_type type;
    size_t itemsize;
    size_t swap_unit; /* bytes reversed together for a big-endian file (0: none) */
} npy_dtype;

typedef struct npy_header {
    char descr[64];
    bool fortran;
    int ndim;
    int64_t dims[DT_MAX_DIMS];
    size_t shape_at; /* file offset of the shape tuple, for messages */
    size_t data_offset;
} npy_header;

/* ---- the preamble ---------------------------------------------------------------------- */

static uint32_t load_le(const uint8_t *p, int bytes)
{
    uint32_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Finds the header text: [*start, *start + *hlen). */
static dtcast_status parse_preamble(const uint8_t *buf, size_t len, size_t *start, size_t *hlen,
                                    bool whole, dt_io_error *err)
{
    if (len < MAGIC_LEN || memcmp(buf, MAGIC, MAGIC_LEN) != 0)
        return dt_io_fail(err, DTCAST_ERR_BAD_FILE, "npy: no \\x93NUMPY magic at byte 0");
    if (len < 10)
        return dt_io_fail(err, DTCAST_ERR_BAD_FILE, "npy: file ends at byte %zu inside the preamble",
                          len);
    int major = buf[6];
    if (major < 1 || major > 3)
        return dt_io_fail(err, DTCAST_ERR_BAD_FILE, "npy: unsupported version %d.%d at byte 6",
                          major, buf[7]);
    int width = major == 1 ? 2 : 4;
    if (len < (size_t)(8 + width))
        return dt_io_fail(err, DTCAST_ERR_BAD_FILE, "npy: file ends at byte %zu inside the preamble",
                          len);
    *hlen = load_le(buf + 8, width);
    *start = 8 + (size_t)width;
    if (whole && *hlen > len - *start)
        return dt_io_fail(err, DTCAST_ERR_BAD_FILE,
                          "npy: header length %zu exceeds file size %zu at byte 8", *hlen, len);
    return DTCAST_OK;
}

/* ---- the header dict (a small subset of Python literal syntax) -------------------------- */

typedef struct cursor {
    const uint8_t *s;
    size_t pos, end;
    size_t base; /* file offset of s[0], for messages */
    dt_io_error *err;
} cursor;

static dtcast_status bad_header(cursor *c, const char *what)
{
    dt_io_fail(c->err, DTCAST_ERR_BAD_FILE, "npy: header: %s at byte %zu", what,
               c->base + c->pos);
    return DTCAST_ERR_BAD_FILE; /* a constant lets the compiler see the outputs are not used */
}

static void skip_space(cursor *c)
{
    while (c->pos < c->end && (c->s[c->pos] == ' ' || c->s[c->pos] == '\t' ||
                               c->s[c->pos] == '\n' || c->s[c->pos] == '\r'))
        c->pos++;
}

/* Skips white space, then consumes ch if it is next. */
static bool accept(cursor *c, char ch)
{
    skip_space(c);
    if (c->pos < c->end && c->s[c->pos] == (uint8_t)ch) {
        c->pos++;
        return true;
    }
    return false;
}

static bool accept_word(cursor *c, const char *word)
{
    skip_space(c);
    size_t n = strlen(word);
    if (c->end - c->pos >= n && memcmp(c->s + c->pos, word, n) == 0) {
        c->pos += n;
        return true;
    }
    return false;
}

static dtcast_status parse_string(cursor *c, char *out, size_t size)
{
    skip_space(c);
    if (c->pos >= c->end || (c->s[c->pos] != '\'' && c->s[c->pos] != '"'))
        return bad_header(c, "expected a quoted string");
    uint8_t quote = c->s[c->pos++];
    size_t n = 0;
    while (c->pos < c->end && c->s[c->pos] != quote) {
        if (c->s[c->pos] == '\\' || n + 1 >= size)
            return bad_header(c, "string too long or escaped");
        if (c->s[c->pos] < 0x20 || c->s[c->pos] == 0x7F) /* a NUL would cut the C string */
            return bad_header(c, "control character in a string");
        out[n++] = (char)c->s[c->pos++];
    }
    if (c->pos >= c->end)
        return bad_header(c, "unterminated string");
    c->pos++;
    out[n] = '\0';
    return DTCAST_OK;
}

static dtcast_status parse_bool(cursor *c, bool *out)
{
    if (accept_word(c, "True"))
        *out = true;
    else if (accept_word(c, "False"))
        *out = false;
    else
        return bad_header(c, "expected True or False");
    return DTCAST_OK;
}

static dtcast_status parse_dim(cursor *c, int64_t *out)
{
    skip_space(c);
    size_t first = c->pos;
    uint64_t v = 0;
    while (c->pos < c->end && c->s[c->pos] >= '0' && c->s[c->pos] <= '9') {
        uint64_t digit = (uint64_t)(c->s[c->pos] - '0');
        if (v > ((uint64_t)INT64_MAX - digit) / 10)
            return bad_header(c, "dimension too large");
        v = v * 10 + digit;
        c->pos++;
    }
    if (c->pos == first)
        return bad_header(c, "expected a non-negative integer");
    if (c->pos < c->end && c->s[c->pos] == 'L') /* Python 2 long literal */
        c->pos++;
    *out = (int64_t)v;
    return DTCAST_OK;
}

/* "()", "(5,)", "(2, 3)", "(2, 3,)". */
static dtcast_status parse_shape(cursor *c, npy_header *h)
{
    if (!accept(c, '('))
        return bad_header(c, "expected a shape tuple");
    h->ndim = 0;
    if (accept(c, ')'))
        return DTCAST_OK;
    for (;;) {
        if (h->ndim == DT_MAX_DIMS)
            return bad_header(c, "more dimensions than supported (32)");
        dtcast_status st = parse_dim(c, &h->dims[h->ndim++]);
        if (st != DTCAST_OK)
            return st;
        if (accept(c, ')'))
            return DTCAST_OK;
        if (!accept(c, ','))
            return bad_header(c, "expected ',' or ')' in the shape");
        if (accept(c, ')'))
            return DTCAST_OK;
    }
}

static dtcast_status parse_entry(cursor *c, npy_header *h, unsigned *seen)
{
    char key[32];
    dtcast_status st = parse_string(c, key, sizeof key);
    if (st != DTCAST_OK)
        return st;
    if (!accept(c, ':'))
        return bad_header(c, "expected ':'");
    if (strcmp(key, "descr") == 0) {
        *seen |= 1;
        skip_space(c);
        if (c->pos < c->end && c->s[c->pos] == '[')
            return bad_header(c, "structured dtypes are not supported");
        return parse_string(c, h->descr, sizeof h->descr);
    }
    if (strcmp(key, "fortran_order") == 0) {
        *seen |= 2;
        return parse_bool(c, &h->fortran);
    }
    if (strcmp(key, "shape") == 0) {
        *seen |= 4;
        h->shape_at = c->base + c->pos;
        return parse_shape(c, h);
    }
    return bad_header(c, "unknown key");
}

static dtcast_status parse_dict(cursor *c, npy_header *h)
{
    unsigned seen = 0;
    if (!accept(c, '{'))
        return bad_header(c, "expected '{'");
    while (!accept(c, '}')) {
        dtcast_status st = parse_entry(c, h, &seen);
        if (st != DTCAST_OK)
            return st;
        if (!accept(c, ',')) {
            if (!accept(c, '}'))
                return bad_header(c, "expected ',' or '}'");
            break;
        }
    }
    skip_space(c);
    if (c->pos != c->end)
        return bad_header(c, "unexpected text after the dict");
    if (seen != 7)
        return bad_header(c, "missing 'descr', 'fortran_order' or 'shape'");
    return DTCAST_OK;
}

static dtcast_status parse_header(const uint8_t *buf, size_t len, npy_header *h, dt_io_error *err)
{
    size_t start = 0, hlen = 0;
    dtcast_status st = parse_preamble(buf, len, &start, &hlen, true, err);
    if (st != DTCAST_OK)
        return st;
    memset(h, 0, sizeof *h);
    cursor c = {buf + start, 0, hlen, start, err};
    st = parse_dict(&c, h);
    h->data_offset = start + hlen;
    return st;
}

/* ---- descr ------------------------------------------------------------------------------ */

static bool parse_size(const char *s, size_t *out)
{
    size_t v = 0;
    if (!*s)
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (SIZE_MAX - 9) / 10)
            return false;
        v = v * 10 + (size_t)(*s - '0');
    }
    *out = v;
    return true;
}

/* The numeric numpy kinds: kind letter and item size -> dtcast type. */
static dtcast_type numpy_number(char kind, size_t size)
{
    static const struct {
        char kind;
        size_t size;
        dtcast_type type;
    } table[] = {
        {'b', 1, DTCAST_BOOL},        {'i', 1, DTCAST_INT8},       {'i', 2, DTCAST_INT16},
        {'i', 4, DTCAST_INT32},       {'i', 8, DTCAST_INT64},      {'u', 1, DTCAST_UINT8},
        {'u', 2, DTCAST_UINT16},      {'u', 4, DTCAST_UINT32},     {'u', 8, DTCAST_UINT64},
        {'f', 2, DTCAST_FLOAT16},     {'f', 4, DTCAST_FLOAT32},    {'f', 8, DTCAST_FLOAT64},
        {'c', 8, DTCAST_COMPLEX64},   {'c', 16, DTCAST_COMPLEX128},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].kind == kind && table[i].size == size)
            return table[i].type;
    return DTCAST_UNDEFINED;
}

/* An ml_dtypes name written as the descr ("bfloat16", "float8_e4m3fn", "int4"). */
static bool parse_named_descr(const char *descr, npy_dtype *d)
{
    dtcast_type type;
    if (dtcast_type_from_name(descr, &type, NULL) != DTCAST_OK || type == DTCAST_STRING)
        return false;
    unsigned stride = dt_stride_bits(type);
    d->type = type;
    /* ml_dtypes keeps sub-byte types one per byte; they are packed after reading. */
    d->kind = stride < 8 ? ITEM_UNPACKED : ITEM_NUMBER;
    d->itemsize = stride < 8 ? 1 : stride / 8;
    d->swap_unit = 0;
    return true;
}

/* "f4", "i8", "U3": a numpy type string without its byte-order character. */
static bool is_bare_typestr(const char *descr)
{
    if (!descr[0] || !strchr("biufcUSaVO", descr[0]))
        return false;
    for (const char *p = descr + 1; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

static dtcast_status parse_descr(const char *descr, size_t at, npy_dtype *d, dt_io_error *err)
{
    char order = descr[0];
    const char *code = descr + 1;
    if (order != '<' && order != '>' && order != '|' && order != '=') {
        /* numpy's own codes first: "i8" is int64 to numpy, not dtcast's int8 alias */
        if (!is_bare_typestr(descr) && parse_named_descr(descr, d))
            return DTCAST_OK;
        if (!is_bare_typestr(descr))
            return dt_io_fail(err, DTCAST_ERR_BAD_FILE,
                              "npy: unsupported dtype '%s' at byte %zu", descr, at);
        order = '|';
        code = descr;
    }
    char kind = code[0];
    size_t size;
    if (kind == 'O')
        return dt_io_fail(err, DTCAST_ERR_BAD_FILE,
                          "npy: object arrays (pickled) are not supported at byte %zu", at);
    if (kind == '\0' || !parse_size(code + 1, &size))
        return dt_io_fail(err, DTCAST_ERR_BAD_FILE, "npy: unsupported dtype '%s' at byte %zu",
                          descr, at);
    bool big = order == '>';
    d->type = numpy_number(kind, size);
    if (d->type != DTCAST_UNDEFINED) {
        d->kind = kind == 'u' && size == 1 ? ITEM_BYTES : ITEM_NUMBER;
        d->itemsize = size;
        d->swap_unit = big && size > 1 ? (kind == 'c' ? size / 2 : size) : 0;
        return DTCAST_OK;
    }
    /* Zero-width items are refused: with no bytes in the file, any count would be believed. */
    if (kind == 'U' && size > 0 && size <= SIZE_MAX / 4) {
        *d = (npy_dtype){ITEM_UTF32, DTCAST_STRING, size * 4, big ? 4 : 0};
        return DTCAST_OK;
    }
    if ((kind == 'S' || kind == 'a') && size > 0) {
        *d = (npy_dtype){ITEM_CHARS, DTCAST_STRING, size, 0};
        return DTCAST_OK;
    }
    if (kind == 'V' && size > 0) {
        *d = (npy_dtype){ITEM_BYTES, DTCAST_UNDEFINED, size, 0};
        return DTCAST_OK;
    }
    return dt_io_fail(err, DTCAST_ERR_BAD_FILE, "npy: unsupported dtype '%s' at byte %zu", descr,
                      at);
}

/* ---- items: C order, little-endian ------------------------------------------------------ */

static void swap_units(uint8_t *p, size_t n, size_t unit)
{
    for (size_t at = 0; at + unit <= n; at += unit)
        for (size_t i = 0, j = unit - 1; i < j; i++, j--) {
            uint8_t tmp = p[at + i];
            p[at + i] = p[at + j];
            p[at + j] = tmp;
        }
}

/* Copies count items from Fortran order (first index fastest) into C order (last fastest). */
static void fortran_to_c(uint8_t *dst, const uint8_t *src, int ndim, const int64_t *dims,
                         size_t count, size_t itemsize)
{
    size_t stride[DT_MAX_DIMS], index[DT_MAX_DIMS] = {0};
    size_t s = 1; /* every prefix product is <= count, so none overflows when count > 0 */
    for (int k = 0; k < ndim; k++) {
        stride[k] = s;
        s *= (size_t)dims[k];
    }
    for (size_t n = 0; n < count; n++) {
        size_t from = 0;
        for (int k = 0; k < ndim; k++)
            from += index[k] * stride[k];
        memcpy(dst + n * itemsize, src + from * itemsize, itemsize);
        for (int k = ndim - 1; k >= 0; k--) {
            if (++index[k] < (size_t)dims[k])
                break;
            index[k] = 0;
        }
    }
}

/* ---- items -> tensor -------------------------------------------------------------------- */

/* Appends code point cp as UTF-8; false for surrogates and values beyond U+10FFFF. */
static bool put_utf8(char *out, size_t *n, uint32_t cp)
{
    if (cp < 0x80) {
        out[(*n)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*n)++] = (char)(0xC0 | cp >> 6);
        out[(*n)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        if (cp >= 0xD800 && cp <= 0xDFFF)
            return false;
        out[(*n)++] = (char)(0xE0 | cp >> 12);
        out[(*n)++] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[(*n)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp <= 0x10FFFF) {
        out[(*n)++] = (char)(0xF0 | cp >> 18);
        out[(*n)++] = (char)(0x80 | (cp >> 12 & 0x3F));
        out[(*n)++] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[(*n)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        return false;
    }
    return true;
}

/* One fixed-width item as a NUL-terminated UTF-8 string; numpy drops trailing NULs. */
static char *item_to_string(const uint8_t *item, const npy_dtype *d, bool *bad)
{
    size_t units = d->kind == ITEM_UTF32 ? d->itemsize / 4 : d->itemsize;
    size_t unit = d->kind == ITEM_UTF32 ? 4 : 1;
    while (units > 0 && load_le(item + (units - 1) * unit, (int)unit) == 0)
        units--;
    char *s = malloc(units * 4 + 1); /* units <= itemsize, so this cannot overflow */
    if (!s)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < units; i++) {
        uint32_t cp = load_le(item + i * unit, (int)unit);
        if (unit == 1)
            s[n++] = (char)cp;
        else if (!put_utf8(s, &n, cp)) {
            free(s);
            *bad = true;
            return NULL;
        }
    }
    s[n] = '\0';
    return s;
}

static dtcast_status items_to_strings(dt_tensor *t, const uint8_t *items, const npy_dtype *d,
                                      dt_io_error *err)
{
    t->type = DTCAST_STRING;
    dtcast_status st = dt_tensor_alloc(t, err);
    if (st != DTCAST_OK)
        return st;
    char **strings = t->data;
    for (size_t i = 0; i < t->count; i++) {
        bool bad = false;
        strings[i] = item_to_string(items + i * d->itemsize, d, &bad);
        if (!strings[i])
            return bad ? dt_io_fail(err, DTCAST_ERR_BAD_FILE,
                                    "npy: string element %zu holds an invalid code point", i)
                       : dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "npy: out of memory");
    }
    return DTCAST_OK;
}

static dtcast_status set_shape(dt_npy_info *info, int ndim, const int64_t *dims, size_t at,
                               dt_io_error *err)
{
    dt_tensor shape;
    dt_tensor_init(&shape);
    dtcast_status st = dt_io_at(dt_tensor_set_shape(&shape, ndim, dims, "npy", err), err, at);
    if (st != DTCAST_OK)
        return st;
    info->ndim = shape.ndim;
    memcpy(info->dims, shape.dims, sizeof info->dims);
    info->count = shape.count;
    return DTCAST_OK;
}

/* What the elements of an array of opaque bytes are: without a hint, |u1 is uint8; with one,
 * a sub-byte type is one element per byte (the shape stays), and a wider type reinterprets the
 * last dimension (|u1 (n,) as float32 gives (n / 4,); <u2 as bfloat16 keeps the shape). */
static dtcast_status reinterpret_bytes(dt_npy_info *info, const npy_header *h, const npy_dtype *d,
                                       dtcast_type hint, dt_io_error *err)
{
    unsigned stride = dt_stride_bits(hint);
    if (hint == DTCAST_UNDEFINED && d->itemsize == 1) {
        info->type = DTCAST_UINT8;
        return DTCAST_OK;
    }
    if (hint == DTCAST_UNDEFINED || stride == 0)
        return dt_io_fail(err, DTCAST_ERR_BAD_FILE,
                          "npy: dtype '%s' holds opaque bytes; give the element type (--from) "
                          "at byte %zu",
                          h->descr, h->data_offset);
    info->type = hint;
    size_t item_bits = d->itemsize * 8;
    if (stride < 8 && d->itemsize == 1) {
        info->layout.store = DT_STORE_BYTE_EACH;
        return DTCAST_OK;
    }
    if (stride == item_bits)
        return DTCAST_OK; /* one element per item: the shape stays */
    int64_t dims[DT_MAX_DIMS];
    int ndim = info->ndim ? info->ndim : 1;
    for (int k = 0; k < ndim; k++)
        dims[k] = info->ndim ? info->dims[k] : 1;
    uint64_t last = (uint64_t)dims[ndim - 1], bits;
    if (stride < 8 || __builtin_mul_overflow(last, (uint64_t)item_bits, &bits) ||
        bits % stride != 0 || bits / stride > INT64_MAX)
        return dt_io_fail(err, DTCAST_ERR_BAD_FILE,
                          "npy: last dimension %llu of '%s' items is not a whole number of %s "
                          "elements at byte %zu",
                          (unsigned long long)last, h->descr, dtcast_type_name(hint),
                          h->data_offset);
    dims[ndim - 1] = (int64_t)(bits / stride);
    return set_shape(info, ndim, dims, h->shape_at, err);
}

dtcast_status dt_npy_header_size(const uint8_t *buf, size_t len, size_t *total, dt_io_error *err)
{
    size_t start = 0, hlen = 0;
    dtcast_status st = parse_preamble(buf, len, &start, &hlen, false, err);
    if (st == DTCAST_OK)
        *total = start + hlen;
    return st;
}

dtcast_status dt_npy_read_header(const uint8_t *buf, size_t len, uint64_t file_size,
                                 dtcast_type hint, dt_npy_info *info, dt_io_error *err)
{
    npy_header h;
    npy_dtype d = {ITEM_NUMBER, DTCAST_UNDEFINED, 0, 0};
    memset(info, 0, sizeof *info);
    dtcast_status st = parse_header(buf, len, &h, err);
    if (st == DTCAST_OK)
        st = parse_descr(h.descr, h.data_offset, &d, err);
    if (st == DTCAST_OK)
        st = set_shape(info, h.ndim, h.dims, h.shape_at, err);
    if (st != DTCAST_OK)
        return st;
    snprintf(info->descr, sizeof info->descr, "%s", h.descr);
    /* The data: exactly as many bytes as the shape and dtype need. */
    uint64_t need;
    if (__builtin_mul_overflow((uint64_t)info->count, (uint64_t)d.itemsize, &need))
        return dt_io_fail(err, DTCAST_ERR_SIZE_OVERFLOW,
                          "npy: %zu items of %zu bytes overflow at byte %zu", info->count,
                          d.itemsize, h.data_offset);
    info->data_bytes = need;
    if (file_size != UINT64_MAX && file_size - h.data_offset != need)
        return dt_io_fail(err, DTCAST_ERR_BAD_FILE,
                          "npy: data is %llu bytes but shape and dtype '%s' need %llu at byte %zu",
                          (unsigned long long)(file_size - h.data_offset), h.descr,
                          (unsigned long long)need, h.data_offset);
    info->fortran = h.fortran && h.ndim > 1;
    info->data_offset = h.data_offset;
    info->itemsize = d.itemsize;
    info->type = d.type;
    info->layout.store = d.swap_unit ? DT_STORE_SWAPPED : DT_STORE_NATIVE;
    /* A type numpy lacks is stored as the unsigned integer of its width (bfloat16 as <u2): the
     * hint says what the integers hold. */
    if (d.kind == ITEM_NUMBER && hint != DTCAST_UNDEFINED && hint != d.type &&
        (d.type == DTCAST_UINT16 || d.type == DTCAST_UINT32 || d.type == DTCAST_UINT64) &&
        dt_stride_bits(hint) == d.itemsize * 8)
        d.kind = ITEM_BYTES;
    switch (d.kind) {
    case ITEM_BYTES:
        st = reinterpret_bytes(info, &h, &d, hint, err);
        break;
    case ITEM_UNPACKED:
        info->layout.store = DT_STORE_BYTE_EACH;
        break;
    case ITEM_UTF32:
    case ITEM_CHARS:
        info->strings = 1;
        info->string_kind = d.kind == ITEM_UTF32 ? 4 : 1;
        info->string_swap = d.swap_unit != 0;
        break;
    case ITEM_NUMBER:
        break;
    }
    if (st != DTCAST_OK)
        return st;
    info->layout.type = info->type;
    return DTCAST_OK;
}

/* Reads the whole array into t (C order, dtcast layout). */
static dtcast_status fill_tensor(dt_tensor *t, const uint8_t *buf, const dt_npy_info *info,
                                 dt_io_error *err)
{
    const uint8_t *items = buf + info->data_offset;
    uint8_t *c_order = NULL;
    if ((info->fortran || info->string_swap) && info->count > 0) {
        c_order = malloc(info->data_bytes);
        if (!c_order)
            return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "npy: out of memory for %llu bytes",
                              (unsigned long long)info->data_bytes);
        if (info->fortran)
            fortran_to_c(c_order, items, info->ndim, info->dims, info->count, info->itemsize);
        else
            memcpy(c_order, items, info->data_bytes);
        if (info->string_swap)
            swap_units(c_order, info->data_bytes, 4);
        items = c_order;
    }
    dtcast_status st;
    if (info->strings) {
        npy_dtype d = {info->string_kind == 4 ? ITEM_UTF32 : ITEM_CHARS, DTCAST_STRING,
                       info->itemsize, 0};
        st = items_to_strings(t, items, &d, err);
    } else {
        t->type = info->type;
        st = dt_tensor_alloc(t, err);
        if (st == DTCAST_OK)
            st = dt_layout_load(&info->layout, t->data, items, t->count, 0, err);
    }
    free(c_order);
    return st;
}

dtcast_status dt_npy_parse(const uint8_t *buf, size_t len, dtcast_type hint, dt_tensor *t,
                           dt_io_error *err)
{
    if (!t)
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "npy: NULL tensor");
    dt_tensor_init(t);
    if (!buf && len)
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "npy: NULL buffer");
    dt_npy_info info;
    dtcast_status st = dt_npy_read_header(buf, len, len, hint, &info, err);
    if (st == DTCAST_OK)
        st = dt_tensor_set_shape(t, info.ndim, info.dims, "npy", err);
    if (st == DTCAST_OK)
        st = fill_tensor(t, buf, &info, err);
    if (st != DTCAST_OK)
        dt_tensor_free(t);
    return st;
}

/* ---- writing ---------------------------------------------------------------------------- */

/* The numpy descr of a type numpy has, or NULL. */
static const char *numpy_descr(dtcast_type type)
{
    switch (type) {
    case DTCAST_BOOL: return "|b1";
    case DTCAST_INT8: return "|i1";
    case DTCAST_UINT8: return "|u1";
    case DTCAST_INT16: return "<i2";
    case DTCAST_UINT16: return "<u2";
    case DTCAST_INT32: return "<i4";
    case DTCAST_UINT32: return "<u4";
    case DTCAST_INT64: return "<i8";
    case DTCAST_UINT64: return "<u8";
    case DTCAST_FLOAT16: return "<f2";
    case DTCAST_FLOAT32: return "<f4";
    case DTCAST_FLOAT64: return "<f8";
    case DTCAST_COMPLEX64: return "<c8";
    case DTCAST_COMPLEX128: return "<c16";
    default: return NULL;
    }
}

/* Decodes one UTF-8 sequence at s[*i]; false when malformed. */
static bool next_code_point(const uint8_t *s, size_t *i, uint32_t *cp)
{
    uint32_t c = s[*i];
    int extra = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2
              : (c & 0xF8) == 0xF0 ? 3 : -1;
    if (extra < 0)
        return false;
    static const uint32_t smallest[] = {0, 0x80, 0x800, 0x10000};
    uint32_t v = extra ? c & (0x3Fu >> extra) : c;
    for (int k = 1; k <= extra; k++) {
        uint8_t b = s[*i + (size_t)k]; /* a NUL stops here: it is not a continuation byte */
        if ((b & 0xC0) != 0x80)
            return false;
        v = v << 6 | (b & 0x3F);
    }
    if (v < smallest[extra] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return false; /* overlong, out of range or a surrogate */
    *i += (size_t)extra + 1;
    *cp = v;
    return true;
}

/* Code points of a UTF-8 string; false when malformed. */
static bool utf8_length(const char *s, size_t *n)
{
    size_t i = 0, count = 0;
    uint32_t cp;
    while (s[i]) {
        if (!next_code_point((const uint8_t *)s, &i, &cp))
            return false;
        count++;
    }
    *n = count;
    return true;
}

static void store_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Strings become '<U<width>' items: UTF-32, padded with NULs. */
static dtcast_status strings_to_items(const dt_tensor *t, uint8_t **items, size_t *bytes,
                                      size_t *width, dt_io_error *err)
{
    char *const *strings = t->data;
    size_t w = 1;
    for (size_t i = 0; i < t->count; i++) {
        size_t n;
        if (strings[i] && !utf8_length(strings[i], &n))
            return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                              "npy: string element %zu is not valid UTF-8", i);
        if (strings[i] && n > w)
            w = n;
    }
    size_t total;
    if (w > SIZE_MAX / 4 || __builtin_mul_overflow(t->count, w * 4, &total))
        return dt_io_fail(err, DTCAST_ERR_SIZE_OVERFLOW, "npy: %zu strings of %zu characters",
                          t->count, w);
    uint8_t *out = calloc(total ? total : 1, 1);
    if (!out)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "npy: out of memory for %zu bytes",
                          total);
    for (size_t i = 0; i < t->count; i++) {
        const uint8_t *s = (const uint8_t *)(strings[i] ? strings[i] : "");
        size_t at = 0, k = 0;
        uint32_t cp;
        while (s[at] && next_code_point(s, &at, &cp))
            store_le32(out + (i * w + k++) * 4, cp);
    }
    *items = out;
    *bytes = total;
    *width = w;
    return DTCAST_OK;
}

static void format_shape(char *out, size_t size, int ndim, const int64_t *dims)
{
    size_t n = (size_t)snprintf(out, size, "(");
    for (int k = 0; k < ndim && n < size; k++)
        n += (size_t)snprintf(out + n, size - n, k ? ", %lld" : "%lld", (long long)dims[k]);
    if (n < size)
        snprintf(out + n, size - n, ndim == 1 ? ",)" : ")");
}

/* Header text padded with spaces and a newline so the data starts on a 64-byte boundary. */
static dtcast_status build_header(const char *descr, int fortran, int ndim, const int64_t *dims,
                                  uint8_t **buf, size_t *len, dt_io_error *err)
{
    char shape[DT_MAX_DIMS * 24 + 8], dict[DT_MAX_DIMS * 24 + 128];
    format_shape(shape, sizeof shape, ndim, dims);
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }",
                     descr, fortran ? "True" : "False", shape);
    size_t dict_len = (size_t)n;
    size_t pre = dict_len + 1 + 10 > 65535 ? 12 : 10; /* version 2.0 only when 1.0 cannot say it */
    size_t hlen = (dict_len + 1 + pre + HEADER_ALIGN - 1) / HEADER_ALIGN * HEADER_ALIGN - pre;
    uint8_t *out = malloc(pre + hlen);
    if (!out)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "npy: out of memory");
    memcpy(out, MAGIC, MAGIC_LEN);
    out[6] = pre == 10 ? 1 : 2;
    out[7] = 0;
    for (size_t i = 0; i < pre - 8; i++)
        out[8 + i] = (uint8_t)(hlen >> (8 * i));
    memcpy(out + pre, dict, dict_len);
    memset(out + pre + dict_len, ' ', hlen - dict_len - 1);
    out[pre + hlen - 1] = '\n';
    *buf = out;
    *len = pre + hlen;
    return DTCAST_OK;
}

/* How a type numpy lacks is kept so that its shape survives: a 16-bit type as <u2, an 8-bit
 * type as |u1, a sub-byte type as |u1 with one element per byte (the code in the low bits). */
static const char *stand_in_descr(dtcast_type type, dt_layout *layout)
{
    unsigned stride = dt_stride_bits(type);
    layout->type = type;
    layout->store = stride < 8 ? DT_STORE_BYTE_EACH : DT_STORE_NATIVE;
    const char *descr = numpy_descr(type);
    if (descr)
        return descr;
    switch (stride) {
    case 16: return "<u2";
    case 32: return "<u4"; /* complex32: a pair of float16 */
    default: return stride <= 8 ? "|u1" : NULL;
    }
}

dtcast_status dt_npy_write_header(dtcast_type type, int ndim, const int64_t *dims, int fortran,
                                  uint8_t **buf, size_t *len, dt_layout *layout, dt_io_error *err)
{
    if (ndim < 0 || ndim > DT_MAX_DIMS)
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "npy: %d dimensions", ndim);
    const char *descr = stand_in_descr(type, layout);
    if (!descr)
        return dt_io_fail(err, DTCAST_ERR_UNSUPPORTED, "npy: cannot store %s",
                          dtcast_type_name(type) ? dtcast_type_name(type) : "this type");
    return build_header(descr, fortran, ndim, dims, buf, len, err);
}

static dtcast_status join(uint8_t *head, size_t head_len, const uint8_t *data, size_t nbytes,
                          uint8_t **buf, size_t *len, dt_io_error *err)
{
    size_t total;
    uint8_t *out = NULL;
    if (__builtin_add_overflow(head_len, nbytes, &total) || !(out = realloc(head, total))) {
        free(head);
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "npy: out of memory for %zu data bytes",
                          nbytes);
    }
    if (nbytes)
        memcpy(out + head_len, data, nbytes);
    *buf = out;
    *len = total;
    return DTCAST_OK;
}

dtcast_status dt_npy_serialize(const dt_tensor *t, uint8_t **buf, size_t *len, dt_io_error *err)
{
    if (!t || !buf || !len || (!t->data && t->count))
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "npy: NULL argument");
    if (!dtcast_type_name(t->type))
        return dt_io_fail(err, DTCAST_ERR_UNKNOWN_TYPE, "npy: unknown type %d", (int)t->type);
    if (t->ndim < 0 || t->ndim > DT_MAX_DIMS)
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "npy: %d dimensions", t->ndim);
    uint8_t *head = NULL;
    size_t head_len = 0;
    dtcast_status st;
    if (t->type == DTCAST_STRING) {
        uint8_t *items = NULL;
        size_t bytes = 0, width = 0;
        st = strings_to_items(t, &items, &bytes, &width, err);
        if (st != DTCAST_OK)
            return st;
        char descr[32];
        snprintf(descr, sizeof descr, "<U%zu", width);
        st = build_header(descr, 0, t->ndim, t->dims, &head, &head_len, err);
        if (st == DTCAST_OK)
            st = join(head, head_len, items, bytes, buf, len, err);
        free(items);
        return st;
    }
    dt_layout layout;
    uint64_t nbytes = 0;
    st = dt_npy_write_header(t->type, t->ndim, t->dims, 0, &head, &head_len, &layout, err);
    if (st != DTCAST_OK)
        return st;
    if (dt_layout_bytes(&layout, t->count, &nbytes) != DTCAST_OK || nbytes > SIZE_MAX) {
        free(head);
        return dt_io_fail(err, DTCAST_ERR_SIZE_OVERFLOW, "npy: %zu elements", t->count);
    }
    if (dt_layout_is_native(&layout))
        return join(head, head_len, t->data, (size_t)nbytes, buf, len, err);
    uint8_t *items = malloc(nbytes ? (size_t)nbytes : 1);
    if (!items) {
        free(head);
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "npy: out of memory");
    }
    dt_layout_store(&layout, items, t->data, t->count);
    st = join(head, head_len, items, (size_t)nbytes, buf, len, err);
    free(items);
    return st;
}
