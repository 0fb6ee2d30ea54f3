/* The GGUF reader (gguf.h): header, metadata and tensor infos of a mapped file, every field
 * checked against the rules of docs/gguf.md before it is used. */
#include "files/gguf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const value_names[DT_GGUF_VALUE_TYPES] = {
    "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
    "bool", "string", "array", "uint64", "int64", "float64"};

const char *dt_gguf_value_type_name(uint32_t type)
{
    return type < DT_GGUF_VALUE_TYPES ? value_names[type] : "?";
}

/* Bytes of one scalar of a value type; 0 for STRING and ARRAY. */
static uint64_t scalar_bytes(uint32_t type)
{
    static const uint8_t b[DT_GGUF_VALUE_TYPES] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return type < DT_GGUF_VALUE_TYPES ? b[type] : 0;
}

/* ---- the cursor ----------------------------------------------------------------------------- */

typedef struct cursor {
    const uint8_t *buf;
    uint64_t size, at;
    int swap; /* big-endian file */
    const char *name;
    dt_io_error *err;
} cursor;

#define BAD(c, at, ...) bad_f((c), (at), __VA_ARGS__)

static dtcast_status bad_f(cursor *c, uint64_t at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static dtcast_status bad_f(cursor *c, uint64_t at, const char *fmt, ...)
{
    char what[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return dt_io_fail(c->err, DTCAST_ERR_BAD_FILE, "%s: byte %llu: %s", c->name,
                      (unsigned long long)at, what);
}

/* n bytes as an unsigned scalar in the file's order (n <= 8); the caller checked the bounds. */
static uint64_t load(const cursor *c, uint64_t at, unsigned n)
{
    uint64_t v = 0;
    for (unsigned k = 0; k < n; k++) {
        const unsigned shift = c->swap ? 8 * (n - 1 - k) : 8 * k;
        v |= (uint64_t)c->buf[at + k] << shift;
    }
    return v;
}

static int have(const cursor *c, uint64_t n)
{
    return c->size - c->at >= n;
}

static dtcast_status take(cursor *c, unsigned n, const char *what, uint64_t *v)
{
    if (!have(c, n))
        return BAD(c, c->at, "the file ends inside %s (%u bytes needed, %llu left)", what, n,
                   (unsigned long long)(c->size - c->at));
    *v = load(c, c->at, n);
    c->at += n;
    return DTCAST_OK;
}

/* A string: its length (<= 2^30 and within the file) and where its bytes are. */
static dtcast_status take_string(cursor *c, const char *what, const uint8_t **p, uint64_t *len)
{
    const uint64_t at = c->at;
    uint64_t n;
    dtcast_status st = take(c, 8, what, &n);
    if (st != DTCAST_OK)
        return st;
    if (n > DT_GGUF_MAX_STRING)
        return BAD(c, at, "%s is %llu bytes long, more than GGUF's limit of 2^30 (ggml's "
                   "GGUF_MAX_STRING_LENGTH)", what, (unsigned long long)n);
    if (!have(c, n))
        return BAD(c, at, "%s of %llu bytes runs past the end of the file (%llu bytes left)",
                   what, (unsigned long long)n, (unsigned long long)(c->size - c->at));
    *p = c->buf + c->at;
    *len = n;
    c->at += n;
    return DTCAST_OK;
}

/* Strict UTF-8 (no overlongs, no surrogates, at most U+10FFFF), as Python's decode. */
static int utf8_ok(const uint8_t *s, uint64_t n)
{
    uint64_t i = 0;
    while (i < n) {
        const uint8_t b = s[i];
        unsigned len, cp, min;
        if (b < 0x80) {
            i++;
            continue;
        } else if ((b & 0xE0) == 0xC0) {
            len = 2, cp = b & 0x1F, min = 0x80;
        } else if ((b & 0xF0) == 0xE0) {
            len = 3, cp = b & 0x0F, min = 0x800;
        } else if ((b & 0xF8) == 0xF0) {
            len = 4, cp = b & 0x07, min = 0x10000;
        } else {
            return 0;
        }
        if (n - i < len)
            return 0;
        for (unsigned k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += len;
    }
    return 1;
}

/* A name for messages: the first bytes of s, printable ASCII kept, others as '?'. */
static const char *shown(const uint8_t *s, uint64_t n, char out[80])
{
    size_t k = 0;
    for (uint64_t i = 0; i < n && k < 72; i++)
        out[k++] = s[i] >= 0x20 && s[i] < 0x7F ? (char)s[i] : '?';
    if (n > 72) {
        memcpy(out + k, "...", 3);
        k += 3;
    }
    out[k] = '\0';
    return out;
}

/* ---- metadata ------------------------------------------------------------------------------- */

static dtcast_status take_value(cursor *c, dt_gguf_kv *kv, const char *key)
{
    const uint64_t at = c->at;
    uint64_t t;
    dtcast_status st = take(c, 4, "a value type", &t);
    if (st != DTCAST_OK)
        return st;
    if (t >= DT_GGUF_VALUE_TYPES)
        return BAD(c, at, "key '%s': value type %llu is not a GGUF type (0..12)", key,
                   (unsigned long long)t);
    kv->type = (uint32_t)t;
    kv->value_at = c->at;
    if (t == DT_GGUF_STRING) {
        const uint8_t *p;
        st = take_string(c, "a string value", &p, &kv->count);
        kv->value_at = (uint64_t)(p - c->buf);
        kv->value_bytes = kv->count;
        return st;
    }
    if (t != DT_GGUF_ARRAY) {
        const unsigned n = (unsigned)scalar_bytes((uint32_t)t);
        if ((st = take(c, n, "a value", &kv->v.u)) != DTCAST_OK)
            return st;
        kv->value_bytes = n;
        if (t == DT_GGUF_BOOL && kv->v.u > 1)
            return BAD(c, kv->value_at, "key '%s': a bool is 0 or 1, not %llu", key,
                       (unsigned long long)kv->v.u);
        return DTCAST_OK;
    }
    uint64_t et, count;
    const uint64_t eat = c->at;
    if ((st = take(c, 4, "an array's element type", &et)) != DTCAST_OK ||
        (st = take(c, 8, "an array's length", &count)) != DTCAST_OK)
        return st;
    if (et >= DT_GGUF_VALUE_TYPES)
        return BAD(c, eat, "key '%s': array element type %llu is not a GGUF type (0..12)", key,
                   (unsigned long long)et);
    if (et == DT_GGUF_ARRAY)
        return BAD(c, eat, "key '%s': an array of arrays (ggml does not read nested arrays)",
                   key);
    if (count > DT_GGUF_MAX_ARRAY)
        return BAD(c, eat + 4, "key '%s': an array of %llu elements, more than GGUF's limit of "
                   "2^30 (ggml's GGUF_MAX_ARRAY_ELEMENTS)", key, (unsigned long long)count);
    kv->elem_type = (uint32_t)et;
    kv->count = count;
    kv->value_at = c->at;
    if (et == DT_GGUF_STRING) {
        for (uint64_t i = 0; i < count; i++) {
            const uint8_t *p;
            uint64_t len;
            char what[96];
            snprintf(what, sizeof what, "element %llu of the string array",
                     (unsigned long long)i);
            if ((st = take_string(c, what, &p, &len)) != DTCAST_OK)
                return st;
        }
    } else {
        const uint64_t n = scalar_bytes((uint32_t)et);
        if ((c->size - c->at) / n < count)
            return BAD(c, eat + 4, "key '%s': an array of %llu %s elements runs past the end of "
                       "the file (%llu bytes left)", key, (unsigned long long)count,
                       value_names[et], (unsigned long long)(c->size - c->at));
        if (et == DT_GGUF_BOOL)
            for (uint64_t i = 0; i < count; i++)
                if (c->buf[c->at + i] > 1)
                    return BAD(c, c->at + i, "key '%s': element %llu: a bool is 0 or 1, not %u",
                               key, (unsigned long long)i, c->buf[c->at + i]);
        c->at += n * count;
    }
    kv->value_bytes = c->at - kv->value_at;
    return DTCAST_OK;
}

/* ---- tensor infos --------------------------------------------------------------------------- */

static dtcast_status take_tensor(cursor *c, dt_gguf_tensor *t)
{
    t->info_at = c->at;
    dtcast_status st = take_string(c, "a tensor name", &t->name, &t->name_len);
    if (st != DTCAST_OK)
        return st;
    char nm[80];
    shown(t->name, t->name_len, nm);
    if (t->name_len == 0)
        return BAD(c, t->info_at, "a tensor with an empty name");
    if (t->name_len > DT_GGUF_MAX_NAME)
        return BAD(c, t->info_at, "tensor '%s': a name of %llu bytes (ggml's limit is 63)", nm,
                   (unsigned long long)t->name_len);
    if (!utf8_ok(t->name, t->name_len))
        return BAD(c, t->info_at, "tensor '%s': the name is not UTF-8", nm);
    if (memchr(t->name, 0, (size_t)t->name_len)) /* ggml's ggml_set_name stops at it */
        return BAD(c, t->info_at, "tensor '%s': the name holds a NUL byte", nm);
    uint64_t nd;
    const uint64_t dat = c->at;
    if ((st = take(c, 4, "a tensor's n_dims", &nd)) != DTCAST_OK)
        return st;
    if (nd > DT_GGUF_MAX_DIMS)
        return BAD(c, dat, "tensor '%s': %llu dimensions (ggml has at most 4)", nm,
                   (unsigned long long)nd);
    t->n_dims = (int)nd;
    uint64_t count = 1;
    for (int d = 0; d < DT_GGUF_MAX_DIMS; d++)
        t->ne[d] = 1;
    for (int d = 0; d < t->n_dims; d++) {
        const uint64_t at = c->at;
        if ((st = take(c, 8, "a tensor's dimension", &t->ne[d])) != DTCAST_OK)
            return st;
        if (t->ne[d] == 0 || t->ne[d] > (uint64_t)INT64_MAX)
            return BAD(c, at, "tensor '%s': dimension %d is %lld (each must be at least 1)", nm,
                       d, (long long)t->ne[d]);
        if (count > (uint64_t)INT64_MAX / t->ne[d])
            return BAD(c, at, "tensor '%s': %llu x ... elements overflow 64 bits", nm,
                       (unsigned long long)count);
        count *= t->ne[d];
    }
    t->count = count;
    uint64_t type;
    const uint64_t tat = c->at;
    if ((st = take(c, 4, "a tensor's type", &type)) != DTCAST_OK)
        return st;
    const dt_ggml_traits *gt = type <= UINT32_MAX ? dt_ggml_traits_of((uint32_t)type) : NULL;
    if (!gt)
        return BAD(c, tat, "tensor '%s': type %llu is not a ggml type (or one ggml removed)", nm,
                   (unsigned long long)type);
    t->type = (uint32_t)type;
    if (t->ne[0] % gt->block)
        return BAD(c, t->info_at, "tensor '%s': rows of %llu elements are not whole %s blocks "
                   "of %u", nm, (unsigned long long)t->ne[0], gt->name, gt->block);
    const uint64_t blocks = count / gt->block;
    if (blocks > (uint64_t)INT64_MAX / gt->bytes)
        return BAD(c, t->info_at, "tensor '%s': its %llu blocks of %u bytes overflow 64 bits",
                   nm, (unsigned long long)blocks, gt->bytes);
    t->bytes = blocks * gt->bytes;
    return take(c, 8, "a tensor's offset", &t->offset);
}

/* ---- the file ------------------------------------------------------------------------------- */

void dt_gguf_free(dt_gguf *g)
{
    free(g->kv);
    free(g->tensors);
    memset(g, 0, sizeof *g);
}

static int name_cmp(const uint8_t *a, uint64_t an, const uint8_t *b, uint64_t bn)
{
    const int r = memcmp(a, b, an < bn ? an : bn);
    return r ? r : an < bn ? -1 : an > bn;
}

static const dt_gguf *sort_g;
static int by_kv(const void *a, const void *b)
{
    const dt_gguf_kv *x = &sort_g->kv[*(const size_t *)a], *y = &sort_g->kv[*(const size_t *)b];
    return name_cmp(x->key, x->key_len, y->key, y->key_len);
}
static int by_tensor(const void *a, const void *b)
{
    const dt_gguf_tensor *x = &sort_g->tensors[*(const size_t *)a];
    const dt_gguf_tensor *y = &sort_g->tensors[*(const size_t *)b];
    return name_cmp(x->name, x->name_len, y->name, y->name_len);
}

/* The first pair of equal keys (kv) or tensor names, by sorting indices; -1 when none. */
static long first_duplicate(const dt_gguf *g, int tensors, long *other)
{
    const size_t n = tensors ? g->ntensors : g->nkv;
    if (n < 2)
        return -1;
    size_t *ix = malloc(n * sizeof *ix);
    if (!ix)
        return -2;
    for (size_t i = 0; i < n; i++)
        ix[i] = i;
    sort_g = g;
    qsort(ix, n, sizeof *ix, tensors ? by_tensor : by_kv);
    long dup = -1;
    for (size_t i = 1; i < n && dup < 0; i++) {
        const int eq = tensors ? by_tensor(&ix[i - 1], &ix[i]) == 0 : by_kv(&ix[i - 1], &ix[i]) == 0;
        if (eq) {
            const size_t a = ix[i - 1] < ix[i] ? ix[i - 1] : ix[i], b = ix[i - 1] ^ ix[i] ^ a;
            dup = (long)b;
            *other = (long)a;
        }
    }
    free(ix);
    return dup;
}

long dt_gguf_find(const dt_gguf *g, const char *key)
{
    const uint64_t n = strlen(key);
    for (uint64_t i = 0; i < g->nkv; i++)
        if (g->kv[i].key_len == n && memcmp(g->kv[i].key, key, n) == 0)
            return (long)i;
    return -1;
}

uint64_t dt_gguf_array_u64(const dt_gguf *g, const uint8_t *buf, const dt_gguf_kv *kv,
                           uint64_t i)
{
    const unsigned n = (unsigned)scalar_bytes(kv->elem_type);
    const cursor c = {buf, g->size, 0, g->big_endian, "", NULL};
    return n ? load(&c, kv->value_at + i * n, n) : 0;
}

static dtcast_status parse(cursor *c, dt_gguf *g)
{
    dtcast_status st;
    if (c->size < 4 || memcmp(c->buf, "GGUF", 4) != 0)
        return BAD(c, 0, "not a GGUF file (it does not start with the bytes \"GGUF\")");
    c->at = 4;
    uint64_t version;
    if ((st = take(c, 4, "the version", &version)) != DTCAST_OK)
        return st;
    if ((version & 0xFFFF) == 0 && version != 0) { /* written by a big-endian host */
        c->swap = 1;
        version = load(c, 4, 4);
    }
    g->big_endian = c->swap;
    if (version == 1)
        return BAD(c, 4, "GGUF version 1 (32-bit counts) is no longer read by ggml or gguf-py; "
                   "convert it with a 2023 llama.cpp");
    if (version != 2 && version != 3)
        return BAD(c, 4, "GGUF version %llu (dtcast reads versions 2 and 3)",
                   (unsigned long long)version);
    g->version = (uint32_t)version;
    uint64_t nt, nkv;
    if ((st = take(c, 8, "the tensor count", &nt)) != DTCAST_OK ||
        (st = take(c, 8, "the metadata count", &nkv)) != DTCAST_OK)
        return st;
    /* a pair takes at least 13 bytes (key length, a one-byte key, type, a one-byte value), a
     * tensor info at least 25: counts the rest of the file cannot hold are refused before any
     * allocation */
    const uint64_t left = c->size - c->at;
    if (nkv > left / 13)
        return BAD(c, 16, "%llu metadata pairs cannot fit in the %llu bytes left",
                   (unsigned long long)nkv, (unsigned long long)left);
    if (nt > left / 25)
        return BAD(c, 8, "%llu tensor infos cannot fit in the %llu bytes left",
                   (unsigned long long)nt, (unsigned long long)left);
    g->kv = calloc(nkv ? nkv : 1, sizeof *g->kv);
    g->tensors = calloc(nt ? nt : 1, sizeof *g->tensors);
    if (!g->kv || !g->tensors)
        return dt_io_fail(c->err, DTCAST_ERR_OUT_OF_MEMORY, "%s: out of memory", c->name);
    g->nkv = nkv;
    g->ntensors = nt;
    g->alignment = DT_GGUF_DEFAULT_ALIGNMENT;
    for (uint64_t i = 0; i < nkv; i++) {
        dt_gguf_kv *kv = &g->kv[i];
        kv->at = c->at;
        if ((st = take_string(c, "a key", &kv->key, &kv->key_len)) != DTCAST_OK)
            return st;
        char key[80];
        shown(kv->key, kv->key_len, key);
        if (kv->key_len == 0)
            return BAD(c, kv->at, "metadata pair %llu has an empty key", (unsigned long long)i);
        if (!utf8_ok(kv->key, kv->key_len))
            return BAD(c, kv->at, "key '%s' is not UTF-8", key);
        /* ggml finds keys with strcmp: "general.alignment\0x" would be general.alignment */
        if (memchr(kv->key, 0, (size_t)kv->key_len))
            return BAD(c, kv->at, "key '%s' holds a NUL byte (ggml reads a key up to it)", key);
        if ((st = take_value(c, kv, key)) != DTCAST_OK)
            return st;
        if (kv->key_len == 17 && memcmp(kv->key, "general.alignment", 17) == 0) {
            if (kv->type != DT_GGUF_UINT32)
                return BAD(c, kv->at, "general.alignment is a %s; it must be a uint32",
                           value_names[kv->type]);
            if (kv->v.u == 0 || (kv->v.u & (kv->v.u - 1)))
                return BAD(c, kv->value_at, "general.alignment %llu is not a power of two",
                           (unsigned long long)kv->v.u);
            g->alignment = (uint32_t)kv->v.u;
        }
    }
    long other = -1, dup = first_duplicate(g, 0, &other);
    if (dup == -2)
        return dt_io_fail(c->err, DTCAST_ERR_OUT_OF_MEMORY, "%s: out of memory", c->name);
    if (dup >= 0) {
        char key[80];
        return BAD(c, g->kv[dup].at, "key '%s' appears twice (first at byte %llu)",
                   shown(g->kv[dup].key, g->kv[dup].key_len, key),
                   (unsigned long long)g->kv[other].at);
    }
    for (uint64_t i = 0; i < nt; i++)
        if ((st = take_tensor(c, &g->tensors[i])) != DTCAST_OK)
            return st;
    dup = first_duplicate(g, 1, &other);
    if (dup == -2)
        return dt_io_fail(c->err, DTCAST_ERR_OUT_OF_MEMORY, "%s: out of memory", c->name);
    if (dup >= 0) {
        char nm[80];
        return BAD(c, g->tensors[dup].info_at, "tensor '%s' appears twice (first at byte %llu)",
                   shown(g->tensors[dup].name, g->tensors[dup].name_len, nm),
                   (unsigned long long)g->tensors[other].info_at);
    }
    const uint64_t a = g->alignment;
    if (c->at > UINT64_MAX - a)
        return BAD(c, c->at, "the data section's start overflows 64 bits");
    g->data_start = (c->at + a - 1) / a * a;
    if (nt && g->data_start > c->size)
        return BAD(c, c->at, "the file ends before its data section (at byte %llu)",
                   (unsigned long long)g->data_start);
    /* ggml's rule: the data in tensor-info order, back to back, each padded to alignment */
    uint64_t expect = 0;
    for (uint64_t i = 0; i < nt; i++) {
        dt_gguf_tensor *t = &g->tensors[i];
        char nm[80];
        shown(t->name, t->name_len, nm);
        if (t->offset != expect)
            return BAD(c, t->info_at, "tensor '%s' has offset %llu; the data of each tensor "
                       "follows the previous one's, padded to %u bytes, so it must be %llu", nm,
                       (unsigned long long)t->offset, g->alignment, (unsigned long long)expect);
        if (t->bytes > c->size - g->data_start || t->offset > c->size - g->data_start - t->bytes)
            return BAD(c, t->info_at, "tensor '%s': its %llu bytes at %llu run past the end of "
                       "the file (%llu bytes)", nm, (unsigned long long)t->bytes,
                       (unsigned long long)(g->data_start + t->offset),
                       (unsigned long long)c->size);
        t->at = g->data_start + t->offset;
        const uint64_t padded = (t->bytes + a - 1) / a * a;
        if (padded < t->bytes || expect > UINT64_MAX - padded)
            return BAD(c, t->info_at, "tensor '%s': the padded size overflows 64 bits", nm);
        expect += padded;
    }
    return DTCAST_OK;
}

dtcast_status dt_gguf_parse(const uint8_t *buf, uint64_t size, const char *name, dt_gguf *g,
                            dt_io_error *err)
{
    memset(g, 0, sizeof *g);
    g->size = size;
    cursor c = {buf, size, 0, 0, name, err};
    dtcast_status st = parse(&c, g);
    if (st != DTCAST_OK)
        dt_gguf_free(g);
    return st;
}

/* ---- the writer ----------------------------------------------------------------------------- */

void dt_gguf_out_init(dt_gguf_out *o, int big_endian)
{
    memset(o, 0, sizeof *o);
    o->big_endian = big_endian;
    o->alignment = DT_GGUF_DEFAULT_ALIGNMENT;
}

void dt_gguf_out_free(dt_gguf_out *o)
{
    free(o->kv);
    free(o->key_at);
    memset(o, 0, sizeof *o);
}

static void out_bytes(dt_gguf_out *o, const void *p, uint64_t n)
{
    if (o->oom)
        return;
    if (n > SIZE_MAX - o->len) {
        o->oom = 1;
        return;
    }
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 256;
        while (cap < o->len + n)
            cap = cap > SIZE_MAX / 2 ? o->len + (size_t)n : cap * 2;
        uint8_t *k = realloc(o->kv, cap);
        if (!k) {
            o->oom = 1;
            return;
        }
        o->kv = k;
        o->cap = cap;
    }
    if (n)
        memcpy(o->kv + o->len, p, (size_t)n);
    o->len += (size_t)n;
}

/* n bytes of v in the file's order. */
static void out_u(dt_gguf_out *o, uint64_t v, unsigned n)
{
    uint8_t b[8];
    for (unsigned k = 0; k < n; k++)
        b[k] = (uint8_t)(v >> (o->big_endian ? 8 * (n - 1 - k) : 8 * k));
    out_bytes(o, b, n);
}

static void out_str(dt_gguf_out *o, const void *s, uint64_t n)
{
    out_u(o, n, 8);
    out_bytes(o, s, n);
}

static void refuse(dt_gguf_out *o, const char *key, const char *why)
{
    if (!o->bad)
        snprintf(o->why, sizeof o->why, "key '%.80s': %s", key, why);
    o->bad = 1;
}

static void out_key_n(dt_gguf_out *o, const uint8_t *key, uint64_t n, uint32_t type)
{
    if (!o->oom && (o->nkv & (o->nkv - 1)) == 0) { /* grown at powers of two */
        size_t *k = realloc(o->key_at, (size_t)(o->nkv ? 2 * o->nkv : 1) * sizeof *k);
        if (!k)
            o->oom = 1;
        else
            o->key_at = k;
    }
    if (!o->oom)
        o->key_at[o->nkv] = o->len;
    out_str(o, key, n);
    out_u(o, type, 4);
    o->nkv++;
}

static void out_key(dt_gguf_out *o, const char *key, uint32_t type)
{
    const size_t n = strlen(key);
    if (n == 0 || !utf8_ok((const uint8_t *)key, n))
        refuse(o, key, "a key is a non-empty UTF-8 string");
    out_key_n(o, (const uint8_t *)key, n, type);
}

void dt_gguf_put_kv(dt_gguf_out *o, const dt_gguf *g, const uint8_t *buf, const dt_gguf_kv *kv)
{
    out_key_n(o, kv->key, kv->key_len, kv->type);
    if (kv->key_len == 17 && memcmp(kv->key, "general.alignment", 17) == 0)
        o->alignment = (uint32_t)kv->v.u; /* the reader checked it */
    if (kv->type == DT_GGUF_STRING) {
        out_str(o, buf + kv->value_at, kv->count);
        return;
    }
    if (kv->type != DT_GGUF_ARRAY) {
        out_u(o, kv->v.u, (unsigned)scalar_bytes(kv->type));
        return;
    }
    out_u(o, kv->elem_type, 4);
    out_u(o, kv->count, 8);
    if (o->big_endian == g->big_endian) {
        out_bytes(o, buf + kv->value_at, kv->value_bytes); /* the same byte order */
        return;
    }
    const cursor c = {buf, g->size, 0, g->big_endian, "", NULL};
    uint64_t at = kv->value_at;
    for (uint64_t e = 0; e < kv->count; e++) {
        if (kv->elem_type == DT_GGUF_STRING) {
            const uint64_t n = load(&c, at, 8);
            out_str(o, buf + at + 8, n);
            at += 8 + n;
        } else {
            out_u(o, dt_gguf_array_u64(g, buf, kv, e), (unsigned)scalar_bytes(kv->elem_type));
        }
    }
}

void dt_gguf_put_scalar(dt_gguf_out *o, const char *key, uint32_t type, uint64_t bits)
{
    if (type >= DT_GGUF_VALUE_TYPES || type == DT_GGUF_STRING || type == DT_GGUF_ARRAY) {
        refuse(o, key, "not a number or bool type");
        return;
    }
    if (type == DT_GGUF_BOOL && bits > 1)
        refuse(o, key, "a bool is 0 or 1");
    if (strcmp(key, "general.alignment") == 0) {
        if (type != DT_GGUF_UINT32 || bits == 0 || (bits & (bits - 1)) || bits > UINT32_MAX)
            refuse(o, key, "general.alignment is a uint32 power of two");
        else
            o->alignment = (uint32_t)bits;
    }
    out_key(o, key, type);
    out_u(o, bits, (unsigned)scalar_bytes(type));
}

void dt_gguf_put_string(dt_gguf_out *o, const char *key, const void *s, uint64_t n)
{
    if (n > DT_GGUF_MAX_STRING)
        refuse(o, key, "a string of more than 2^30 bytes");
    out_key(o, key, DT_GGUF_STRING);
    out_str(o, s, n);
}

void dt_gguf_put_array(dt_gguf_out *o, const char *key, uint32_t elem_type, uint64_t count)
{
    if (elem_type >= DT_GGUF_VALUE_TYPES || elem_type == DT_GGUF_ARRAY)
        refuse(o, key, "an array's elements are numbers, bools or strings");
    if (count > DT_GGUF_MAX_ARRAY)
        refuse(o, key, "an array of more than 2^30 elements");
    out_key(o, key, DT_GGUF_ARRAY);
    out_u(o, elem_type, 4);
    out_u(o, count, 8);
}

void dt_gguf_put_elem(dt_gguf_out *o, uint32_t elem_type, uint64_t bits)
{
    out_u(o, bits, (unsigned)scalar_bytes(elem_type));
}

void dt_gguf_put_elem_string(dt_gguf_out *o, const void *s, uint64_t n)
{
    out_str(o, s, n);
}

uint64_t dt_gguf_tensor_bytes(uint32_t type, int n_dims, const uint64_t *ne)
{
    const dt_ggml_traits *gt = dt_ggml_traits_of(type);
    if (!gt || n_dims < 0 || n_dims > DT_GGUF_MAX_DIMS)
        return 0;
    uint64_t count = 1;
    for (int d = 0; d < n_dims; d++) {
        if (ne[d] == 0 || count > (uint64_t)INT64_MAX / ne[d])
            return 0;
        count *= ne[d];
    }
    if ((n_dims ? ne[0] : 1) % gt->block)
        return 0;
    const uint64_t blocks = count / gt->block;
    return blocks > (uint64_t)INT64_MAX / gt->bytes ? 0 : blocks * gt->bytes;
}

uint64_t dt_gguf_padded(uint64_t bytes, uint32_t alignment)
{
    return (bytes + alignment - 1) / alignment * alignment;
}

dtcast_status dt_gguf_out_header(const dt_gguf_out *o, const dt_gguf_info *t, size_t n,
                                 uint8_t **header, size_t *len, uint64_t *offsets,
                                 dt_io_error *err)
{
    *header = NULL;
    *len = 0;
    if (o->oom)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "GGUF header: out of memory");
    if (o->bad)
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "GGUF header: %s", o->why);
    /* a key twice: the metadata read back (the reader's own duplicate check) */
    if (o->nkv > 1) {
        dt_gguf kv;
        memset(&kv, 0, sizeof kv);
        kv.nkv = o->nkv;
        kv.kv = calloc((size_t)o->nkv, sizeof *kv.kv);
        if (!kv.kv)
            return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "GGUF header: out of memory");
        const cursor c = {o->kv, o->len, 0, o->big_endian, "", NULL};
        for (uint64_t i = 0; i < o->nkv; i++) {
            kv.kv[i].key_len = load(&c, o->key_at[i], 8);
            kv.kv[i].key = o->kv + o->key_at[i] + 8;
        }
        long other = -1;
        const long dup = first_duplicate(&kv, 0, &other);
        char key[80];
        if (dup >= 0)
            shown(kv.kv[dup].key, kv.kv[dup].key_len, key);
        free(kv.kv);
        if (dup == -2)
            return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "GGUF header: out of memory");
        if (dup >= 0)
            return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "GGUF header: key '%s' is put "
                              "twice", key);
    }
    dt_gguf_out h;
    dt_gguf_out_init(&h, o->big_endian);
    out_bytes(&h, "GGUF", 4);
    out_u(&h, 3, 4);
    out_u(&h, n, 8);
    out_u(&h, o->nkv, 8);
    out_bytes(&h, o->kv, o->len);
    uint64_t offset = 0;
    for (size_t i = 0; i < n; i++) {
        const size_t nl = strlen(t[i].name);
        const uint64_t bytes = dt_gguf_tensor_bytes(t[i].type, t[i].n_dims, t[i].ne);
        const char *why = nl == 0 || nl > DT_GGUF_MAX_NAME ? "a name of 1 to 63 bytes"
                          : !utf8_ok((const uint8_t *)t[i].name, nl) ? "a UTF-8 name"
                          : !dt_ggml_traits_of(t[i].type) ? "a ggml type"
                          : t[i].n_dims < 0 || t[i].n_dims > DT_GGUF_MAX_DIMS ? "0 to 4 dims"
                          : bytes == 0 && t[i].n_dims ? "dims of at least 1, rows of whole blocks"
                                                      : NULL;
        for (size_t k = 0; !why && k < i; k++)
            if (strcmp(t[k].name, t[i].name) == 0)
                why = "a name no other tensor has";
        if (why) {
            dt_gguf_out_free(&h);
            return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                              "GGUF header: tensor '%.80s' needs %s", t[i].name, why);
        }
        out_str(&h, t[i].name, nl);
        out_u(&h, (uint64_t)t[i].n_dims, 4);
        for (int d = 0; d < t[i].n_dims; d++)
            out_u(&h, t[i].ne[d], 8);
        out_u(&h, t[i].type, 4);
        out_u(&h, offset, 8);
        if (offsets)
            offsets[i] = offset;
        offset += dt_gguf_padded(bytes, o->alignment);
    }
    const size_t end = (size_t)dt_gguf_padded(h.len, o->alignment);
    while (!h.oom && h.len < end)
        out_bytes(&h, "", 1);
    if (h.oom) {
        dt_gguf_out_free(&h);
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "GGUF header: out of memory");
    }
    *header = h.kv;
    *len = h.len;
    return DTCAST_OK;
}

/* A GGUF scalar as text; a float from its bits, shortest round-trip (%.9g / %.17g). */
void dt_gguf_scalar_text(char *out, size_t size, uint32_t type, uint64_t u)
{
    switch (type) {
    case DT_GGUF_INT8: snprintf(out, size, "%d", (int)(int8_t)u); break;
    case DT_GGUF_INT16: snprintf(out, size, "%d", (int)(int16_t)u); break;
    case DT_GGUF_INT32: snprintf(out, size, "%ld", (long)(int32_t)u); break;
    case DT_GGUF_INT64: snprintf(out, size, "%lld", (long long)(int64_t)u); break;
    case DT_GGUF_BOOL: snprintf(out, size, "%s", u ? "true" : "false"); break;
    case DT_GGUF_FLOAT32: {
        const uint32_t b = (uint32_t)u;
        float f;
        memcpy(&f, &b, 4);
        snprintf(out, size, "%.9g", (double)f);
        break;
    }
    case DT_GGUF_FLOAT64: {
        double d;
        memcpy(&d, &u, 8);
        snprintf(out, size, "%.17g", d);
        break;
    }
    default: snprintf(out, size, "%llu", (unsigned long long)u); break;
    }
}
