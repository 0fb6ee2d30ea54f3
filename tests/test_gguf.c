/* Tests of the GGUF reader (files/gguf.h): handcrafted files breaking each rule once (the
 * categories of ggml's own tests/test-gguf.cpp: magic, versions, counts, key and string sizes,
 * empty and duplicate keys, value types, nested arrays, general.alignment's type and value, tensor
 * names, n_dims, dims, types, block divisibility, offsets, data past the end, overflowing sizes),
 * each refused with the rule and the byte offset, and the type table.
 *
 *   test_gguf                run the tests
 *   test_gguf --dump FILE    parse FILE and print what was read as one JSON object (the Python
 *                            tests compare it with gguf-py's GGUFReader); exit 1 with the error
 *                            on stderr when the file is refused
 *   test_gguf --rewrite IN OUT   parse IN and write its metadata and tensors again with the
 *                            writer (dt_gguf_out): the Python tests check that OUT is IN, byte
 *                            for byte, for files gguf-py's GGUFWriter wrote */
#include "check.h"
#include "files/file.h"
#include "files/gguf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK1(cond) CHECK((cond), #cond, "%s", "false")
/* CHECK_MSG(cond, fmt, what, ...): fmt's first %s is what, the check's name */
#define CHECK_MSG(cond, fmt, what, ...) CHECK((cond), (what), fmt, (what), __VA_ARGS__)

/* ---- --dump --------------------------------------------------------------------------------- */

static void put_str(const uint8_t *s, uint64_t n)
{
    putchar('"');
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t b = s[i];
        if (b == '"' || b == '\\')
            printf("\\%c", b);
        else if (b < 0x20)
            printf("\\u%04x", b);
        else
            putchar(b);
    }
    putchar('"');
}

static void put_scalar(uint32_t type, uint64_t u)
{
    switch (type) {
    case DT_GGUF_INT8: printf("%d", (int)(int8_t)u); break;
    case DT_GGUF_INT16: printf("%d", (int)(int16_t)u); break;
    case DT_GGUF_INT32: printf("%" PRId32, (int32_t)u); break;
    case DT_GGUF_INT64: printf("%" PRId64, (int64_t)u); break;
    case DT_GGUF_BOOL: printf("%s", u ? "true" : "false"); break;
    case DT_GGUF_FLOAT32: { /* the bits: exact, and NaN/Inf survive JSON */
        printf("{\"f32\": %" PRIu64 "}", u & 0xFFFFFFFFu);
        break;
    }
    case DT_GGUF_FLOAT64: printf("{\"f64\": %" PRIu64 "}", u); break;
    default: printf("%" PRIu64, u); break;
    }
}

static uint64_t le_u64(const uint8_t *p, int swap)
{
    uint64_t v = 0;
    for (int k = 0; k < 8; k++)
        v |= (uint64_t)p[k] << (swap ? 8 * (7 - k) : 8 * k);
    return v;
}

static int dump(const char *path)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    dt_io_error err = DT_IO_ERROR_INIT;
    if (dt_read_file(path, &buf, &len, &err) != DTCAST_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 2;
    }
    dt_gguf g;
    if (dt_gguf_parse(buf, len, path, &g, &err) != DTCAST_OK) {
        fprintf(stderr, "%s\n", err.message);
        free(buf);
        return 1;
    }
    printf("{\"version\": %u, \"big_endian\": %s, \"alignment\": %u, \"data_start\": %" PRIu64
           ", \"kv\": [",
           g.version, g.big_endian ? "true" : "false", g.alignment, g.data_start);
    for (uint64_t i = 0; i < g.nkv; i++) {
        const dt_gguf_kv *kv = &g.kv[i];
        printf("%s\n  {\"key\": ", i ? "," : "");
        put_str(kv->key, kv->key_len);
        printf(", \"type\": \"%s\", \"at\": %" PRIu64 ", \"value\": ",
               dt_gguf_value_type_name(kv->type), kv->at);
        if (kv->type == DT_GGUF_STRING) {
            put_str(buf + kv->value_at, kv->count);
        } else if (kv->type == DT_GGUF_ARRAY) {
            printf("{\"elem_type\": \"%s\", \"items\": [", dt_gguf_value_type_name(kv->elem_type));
            uint64_t at = kv->value_at;
            for (uint64_t e = 0; e < kv->count; e++) {
                if (e)
                    printf(", ");
                if (kv->elem_type == DT_GGUF_STRING) {
                    const uint64_t n = le_u64(buf + at, g.big_endian);
                    put_str(buf + at + 8, n);
                    at += 8 + n;
                } else {
                    put_scalar(kv->elem_type, dt_gguf_array_u64(&g, buf, kv, e));
                }
            }
            printf("]}");
        } else {
            put_scalar(kv->type, kv->v.u);
        }
        printf("}");
    }
    printf("],\n \"tensors\": [");
    for (uint64_t i = 0; i < g.ntensors; i++) {
        const dt_gguf_tensor *t = &g.tensors[i];
        printf("%s\n  {\"name\": ", i ? "," : "");
        put_str(t->name, t->name_len);
        printf(", \"type\": \"%s\", \"type_code\": %u, \"ne\": [", dt_ggml_traits_of(t->type)->name,
               t->type);
        for (int d = 0; d < t->n_dims; d++)
            printf("%s%" PRIu64, d ? ", " : "", t->ne[d]);
        printf("], \"elements\": %" PRIu64 ", \"offset\": %" PRIu64 ", \"bytes\": %" PRIu64
               ", \"at\": %" PRIu64 "}",
               t->count, t->offset, t->bytes, t->at);
    }
    printf("]}\n");
    dt_gguf_free(&g);
    free(buf);
    return 0;
}

/* IN's metadata and tensors through the writer: the file's bytes in *out (malloc'd). */
static dtcast_status rewrite(const uint8_t *buf, size_t len, uint8_t **out, size_t *out_len,
                             dt_io_error *err)
{
    dt_gguf g;
    *out = NULL;
    dtcast_status st = dt_gguf_parse(buf, len, "in", &g, err);
    if (st != DTCAST_OK)
        return st;
    dt_gguf_out o;
    dt_gguf_out_init(&o, g.big_endian);
    for (uint64_t i = 0; i < g.nkv; i++)
        dt_gguf_put_kv(&o, &g, buf, &g.kv[i]);
    dt_gguf_info *info = calloc(g.ntensors ? g.ntensors : 1, sizeof *info);
    char (*names)[64] = calloc(g.ntensors ? g.ntensors : 1, sizeof *names);
    uint8_t *header = NULL;
    size_t hlen = 0;
    st = info && names ? DTCAST_OK : DTCAST_ERR_OUT_OF_MEMORY;
    for (uint64_t i = 0; st == DTCAST_OK && i < g.ntensors; i++) {
        memcpy(names[i], g.tensors[i].name, (size_t)g.tensors[i].name_len);
        info[i].name = names[i];
        info[i].type = g.tensors[i].type;
        info[i].n_dims = g.tensors[i].n_dims;
        memcpy(info[i].ne, g.tensors[i].ne, sizeof info[i].ne);
    }
    if (st == DTCAST_OK)
        st = dt_gguf_out_header(&o, info, (size_t)g.ntensors, &header, &hlen, NULL, err);
    size_t total = hlen;
    for (uint64_t i = 0; st == DTCAST_OK && i < g.ntensors; i++)
        total += (size_t)dt_gguf_padded(g.tensors[i].bytes, o.alignment);
    uint8_t *f = st == DTCAST_OK ? calloc(total ? total : 1, 1) : NULL;
    if (f) {
        memcpy(f, header, hlen);
        size_t at = hlen;
        for (uint64_t i = 0; i < g.ntensors; i++) {
            memcpy(f + at, buf + g.tensors[i].at, (size_t)g.tensors[i].bytes);
            at += (size_t)dt_gguf_padded(g.tensors[i].bytes, o.alignment);
        }
        *out = f;
        *out_len = total;
    } else if (st == DTCAST_OK) {
        st = DTCAST_ERR_OUT_OF_MEMORY;
    }
    free(header);
    free(info);
    free(names);
    dt_gguf_out_free(&o);
    dt_gguf_free(&g);
    return st;
}

static int rewrite_file(const char *in, const char *outpath)
{
    uint8_t *buf = NULL, *out = NULL;
    size_t len = 0, out_len = 0;
    dt_io_error err = DT_IO_ERROR_INIT;
    if (dt_read_file(in, &buf, &len, &err) != DTCAST_OK ||
        rewrite(buf, len, &out, &out_len, &err) != DTCAST_OK) {
        fprintf(stderr, "%s\n", err.message);
        free(buf);
        return 1;
    }
    FILE *f = fopen(outpath, "wb");
    const int ok = f && fwrite(out, 1, out_len, f) == out_len;
    if (f)
        fclose(f);
    free(buf);
    free(out);
    return ok ? 0 : 2;
}

/* ---- handcrafted files ---------------------------------------------------------------------- */

typedef struct gbuf {
    uint8_t b[4096];
    size_t n;
    int be;
} gbuf;

static void put(gbuf *g, uint64_t v, int bytes)
{
    for (int k = 0; k < bytes; k++)
        g->b[g->n++] = (uint8_t)(v >> (g->be ? 8 * (bytes - 1 - k) : 8 * k));
}

static void put_string(gbuf *g, const char *s)
{
    put(g, strlen(s), 8);
    memcpy(g->b + g->n, s, strlen(s));
    g->n += strlen(s);
}

static void header(gbuf *g, uint64_t version, uint64_t nt, uint64_t nkv)
{
    memcpy(g->b, "GGUF", 4);
    g->n = 4;
    put(g, version, 4);
    put(g, nt, 8);
    put(g, nkv, 8);
}

static void kv_u32(gbuf *g, const char *key, uint32_t v)
{
    put_string(g, key);
    put(g, DT_GGUF_UINT32, 4);
    put(g, v, 4);
}

/* A tensor info: name, dims, type, offset. */
static void tinfo(gbuf *g, const char *name, int nd, const uint64_t *ne, uint32_t type,
                  uint64_t offset)
{
    put_string(g, name);
    put(g, (uint64_t)nd, 4);
    for (int d = 0; d < nd; d++)
        put(g, ne[d], 8);
    put(g, type, 4);
    put(g, offset, 8);
}

static void pad_to(gbuf *g, size_t a)
{
    while (g->n % a)
        g->b[g->n++] = 0;
}

/* parse: OK, or the error containing `want` and "byte AT" */
static void expect(const char *what, const gbuf *g, const char *want, long at)
{
    dt_gguf r;
    dt_io_error err = DT_IO_ERROR_INIT;
    const dtcast_status st = dt_gguf_parse(g->b, g->n, "f.gguf", &r, &err);
    if (!want) {
        CHECK_MSG(st == DTCAST_OK, "%s: refused: %s", what, err.message);
    } else {
        char where[64];
        snprintf(where, sizeof where, "f.gguf: byte %ld: ", at);
        CHECK_MSG(st == DTCAST_ERR_BAD_FILE && strstr(err.message, want) &&
                      strncmp(err.message, where, strlen(where)) == 0,
                  "%s: got status %d '%s', want '%s%s'", what, (int)st, err.message, where, want);
        CHECK_MSG(r.kv == NULL && r.tensors == NULL, "%s: not emptied%s", what, "");
    }
    dt_gguf_free(&r);
}

/* A valid two-tensor file: F32 [4] and Q8_0 [32 x 2], general.alignment a. */
static void valid(gbuf *g, uint32_t a, int be)
{
    memset(g, 0, sizeof *g);
    g->be = be;
    header(g, 3, 2, 2);
    kv_u32(g, "general.alignment", a);
    put_string(g, "general.architecture");
    put(g, DT_GGUF_STRING, 4);
    put_string(g, "llama");
    const uint64_t ne1[1] = {4}, ne2[2] = {32, 2};
    tinfo(g, "a", 1, ne1, 0, 0);
    tinfo(g, "b", 2, ne2, 8, (16 + a - 1) / a * a);
    pad_to(g, a);
    for (int i = 0; i < 16; i++)
        g->b[g->n++] = 0;
    pad_to(g, a);
    for (int i = 0; i < 68; i++)
        g->b[g->n++] = 0;
    pad_to(g, a);
}

static void test_valid(void)
{
    gbuf g;
    for (int be = 0; be < 2; be++) {
        valid(&g, 32, be);
        dt_gguf r;
        dt_io_error err = DT_IO_ERROR_INIT;
        CHECK1(dt_gguf_parse(g.b, g.n, "f.gguf", &r, &err) == DTCAST_OK);
        CHECK1(r.version == 3 && r.big_endian == be && r.alignment == 32 && r.ntensors == 2 &&
              r.nkv == 2);
        CHECK1(r.tensors[1].type == 8 && r.tensors[1].ne[0] == 32 && r.tensors[1].ne[1] == 2 &&
              r.tensors[1].bytes == 68 && r.tensors[1].offset == 32 &&
              r.tensors[1].at == r.data_start + 32);
        CHECK1(dt_gguf_find(&r, "general.architecture") == 1 && dt_gguf_find(&r, "x") == -1);
        dt_gguf_free(&r);
    }
    valid(&g, 64, 0);
    expect("alignment 64", &g, NULL, 0);
    valid(&g, 1, 0);
    expect("alignment 1 (a power of two: ggml reads it)", &g, NULL, 0);
}

static void test_refused(void)
{
    gbuf g;
    valid(&g, 32, 0);
    g.b[0] = 'X';
    expect("magic", &g, "not a GGUF file", 0);
    valid(&g, 32, 0);
    g.b[4] = 1;
    expect("version 1", &g, "version 1", 4);
    valid(&g, 32, 0);
    g.b[4] = 4;
    expect("version 4", &g, "GGUF version 4", 4);
    valid(&g, 32, 0);
    g.n = 10;
    expect("truncated header", &g, "ends inside the tensor count", 8);
    valid(&g, 32, 0);
    g.b[8 + 7] = 0x7F; /* tensor count 2^62-ish */
    expect("tensor count", &g, "tensor infos cannot fit", 8);
    valid(&g, 32, 0);
    g.b[16 + 5] = 0x01; /* kv count huge */
    expect("kv count", &g, "metadata pairs cannot fit", 16);

    memset(&g, 0, sizeof g);
    header(&g, 3, 0, 1);
    put(&g, UINT64_C(1) << 31, 8); /* key length */
    g.n += 16;
    expect("key length > 2^30", &g, "2^30", 24);
    memset(&g, 0, sizeof g);
    header(&g, 3, 0, 1);
    put(&g, 100, 8);
    g.n += 20;
    expect("key past the end", &g, "runs past the end", 24);
    memset(&g, 0, sizeof g);
    header(&g, 3, 0, 1);
    put_string(&g, "");
    put(&g, DT_GGUF_UINT8, 4);
    put(&g, 1, 1);
    expect("empty key", &g, "empty key", 24);
    memset(&g, 0, sizeof g);
    header(&g, 3, 0, 2);
    kv_u32(&g, "k", 1);
    kv_u32(&g, "k", 2);
    expect("duplicate key", &g, "appears twice (first at byte 24)", 24 + 17);
    memset(&g, 0, sizeof g);
    header(&g, 3, 0, 1);
    put_string(&g, "k");
    put(&g, 13, 4);
    put(&g, 0, 8);
    expect("value type 13", &g, "value type 13", 33);
    memset(&g, 0, sizeof g);
    header(&g, 3, 0, 1);
    put_string(&g, "k");
    put(&g, DT_GGUF_ARRAY, 4);
    put(&g, DT_GGUF_ARRAY, 4);
    put(&g, 0, 8);
    expect("nested array", &g, "array of arrays", 37);
    memset(&g, 0, sizeof g);
    header(&g, 3, 0, 1);
    put_string(&g, "k");
    put(&g, DT_GGUF_ARRAY, 4);
    put(&g, DT_GGUF_UINT64, 4);
    put(&g, UINT64_C(1) << 29, 8); /* 4 GiB of elements in a tiny file */
    expect("array past the end", &g, "runs past the end", 41);
    memset(&g, 0, sizeof g);
    header(&g, 3, 0, 1);
    put_string(&g, "k");
    put(&g, DT_GGUF_ARRAY, 4);
    put(&g, DT_GGUF_UINT8, 4);
    put(&g, UINT64_C(1) << 40, 8);
    expect("array length > 2^30", &g, "2^30", 41);
    memset(&g, 0, sizeof g);
    header(&g, 3, 0, 1);
    put_string(&g, "k");
    put(&g, DT_GGUF_BOOL, 4);
    put(&g, 2, 1);
    expect("bool 2", &g, "a bool is 0 or 1", 37);
    memset(&g, 0, sizeof g);
    header(&g, 3, 0, 1);
    put_string(&g, "general.alignment");
    put(&g, DT_GGUF_UINT64, 4);
    put(&g, 32, 8);
    expect("alignment typed u64", &g, "must be a uint32", 24);
    memset(&g, 0, sizeof g);
    header(&g, 3, 0, 1);
    kv_u32(&g, "general.alignment", 24);
    expect("alignment 24", &g, "not a power of two", 24 + 8 + 17 + 4);
    memset(&g, 0, sizeof g);
    header(&g, 3, 0, 1);
    kv_u32(&g, "general.alignment", 0);
    expect("alignment 0", &g, "not a power of two", 24 + 8 + 17 + 4);

    /* tensor infos */
    const uint64_t ne[5] = {32, 2, 1, 1, 1};
    memset(&g, 0, sizeof g);
    header(&g, 3, 1, 0);
    tinfo(&g, "0123456789012345678901234567890123456789012345678901234567890123", 1, ne, 0, 0);
    expect("name of 64 bytes", &g, "a name of 64 bytes", 24);
    memset(&g, 0, sizeof g);
    header(&g, 3, 1, 0);
    tinfo(&g, "t", 5, ne, 0, 0);
    expect("5 dims", &g, "5 dimensions", 33);
    memset(&g, 0, sizeof g);
    header(&g, 3, 1, 0);
    const uint64_t zero[2] = {32, 0};
    tinfo(&g, "t", 2, zero, 0, 0);
    expect("zero dim", &g, "dimension 1 is 0", 45);
    memset(&g, 0, sizeof g);
    header(&g, 3, 1, 0);
    const uint64_t huge[3] = {UINT64_C(1) << 32, UINT64_C(1) << 32, 2};
    tinfo(&g, "t", 3, huge, 0, 0);
    expect("elements overflow", &g, "overflow 64 bits", 45);
    memset(&g, 0, sizeof g);
    header(&g, 3, 1, 0);
    tinfo(&g, "t", 2, ne, 4, 0);
    expect("removed type 4", &g, "type 4 is not a ggml type", 53);
    memset(&g, 0, sizeof g);
    header(&g, 3, 1, 0);
    tinfo(&g, "t", 2, ne, 43, 0);
    expect("type 43", &g, "type 43", 53);
    memset(&g, 0, sizeof g);
    header(&g, 3, 1, 0);
    const uint64_t odd[2] = {33, 2};
    tinfo(&g, "t", 2, odd, 8, 0);
    expect("Q8_0 row of 33", &g, "not whole Q8_0 blocks of 32", 24);
    memset(&g, 0, sizeof g);
    header(&g, 3, 2, 0);
    tinfo(&g, "t", 1, ne, 0, 0);
    tinfo(&g, "t", 1, ne, 0, 128);
    expect("duplicate name", &g, "tensor 't' appears twice", 24 + 9 + 4 + 8 + 4 + 8);
    memset(&g, 0, sizeof g);
    header(&g, 3, 2, 0);
    tinfo(&g, "a", 1, ne, 0, 0);
    tinfo(&g, "b", 1, ne, 0, 160); /* a's 128 bytes pad to 128, not 160 */
    pad_to(&g, 32);
    g.n += 512;
    expect("offset not dense", &g, "must be 128", 24 + 33);
    memset(&g, 0, sizeof g);
    header(&g, 3, 1, 0);
    tinfo(&g, "a", 1, ne, 0, 0);
    pad_to(&g, 32);
    g.n += 100; /* 128 needed */
    expect("data past the end", &g, "run past the end of the file", 24);
    memset(&g, 0, sizeof g);
    header(&g, 3, 1, 0);
    tinfo(&g, "a\xff", 1, ne, 0, 0);
    expect("name not UTF-8", &g, "not UTF-8", 24);
}

/* The writer gives back the handcrafted files byte for byte, in both byte orders and with a
 * custom alignment; it refuses what the reader refuses. */
static void test_writer(void)
{
    const uint32_t aligns[2] = {32, 64};
    for (int be = 0; be < 2; be++)
        for (int a = 0; a < 2; a++) {
            gbuf g;
            valid(&g, aligns[a], be);
            uint8_t *out = NULL;
            size_t n = 0;
            dt_io_error err = DT_IO_ERROR_INIT;
            const dtcast_status st = rewrite(g.b, g.n, &out, &n, &err);
            CHECK_MSG(st == DTCAST_OK && n == g.n && memcmp(out, g.b, n) == 0,
                      "%s: rewrite (be %d, alignment %u): %s", "writer round trip", be,
                      aligns[a], err.message);
            free(out);
        }
    dt_gguf_out o;
    dt_gguf_out_init(&o, 0);
    dt_gguf_put_scalar(&o, "general.alignment", DT_GGUF_UINT32, 24);
    uint8_t *h;
    size_t n;
    dt_io_error err = DT_IO_ERROR_INIT;
    CHECK1(dt_gguf_out_header(&o, NULL, 0, &h, &n, NULL, &err) == DTCAST_ERR_INVALID_ARGUMENT &&
           strstr(err.message, "power of two") && !h);
    dt_gguf_out_free(&o);
    dt_gguf_out_init(&o, 0);
    const dt_gguf_info bad[2] = {{"w", 8, 2, {33, 2, 1, 1}}, {"w", 0, 1, {4, 1, 1, 1}}};
    CHECK1(dt_gguf_out_header(&o, bad, 1, &h, &n, NULL, &err) == DTCAST_ERR_INVALID_ARGUMENT &&
           strstr(err.message, "whole blocks"));
    CHECK1(dt_gguf_out_header(&o, bad + 1, 1, &h, &n, NULL, &err) == DTCAST_OK && n == 64);
    free(h);
    dt_gguf_out_free(&o);
    dt_gguf_out_init(&o, 1);
    dt_gguf_put_scalar(&o, "a", DT_GGUF_UINT8, 1);
    dt_gguf_put_string(&o, "b", "x", 1);
    dt_gguf_put_scalar(&o, "a", DT_GGUF_INT64, 2);
    CHECK1(dt_gguf_out_header(&o, NULL, 0, &h, &n, NULL, &err) == DTCAST_ERR_INVALID_ARGUMENT &&
           strstr(err.message, "key 'a' is put twice"));
    dt_gguf_out_free(&o);
    dt_gguf_out_init(&o, 0);
    const dt_gguf_info twice[2] = {{"w", 0, 1, {4, 1, 1, 1}}, {"w", 0, 1, {4, 1, 1, 1}}};
    CHECK1(dt_gguf_out_header(&o, twice, 2, &h, &n, NULL, &err) == DTCAST_ERR_INVALID_ARGUMENT &&
           strstr(err.message, "no other tensor"));
    dt_gguf_out_free(&o);
}

static void test_types(void)
{
    CHECK1(dt_ggml_traits_of(0)->plain == DTCAST_FLOAT32 && dt_ggml_traits_of(30)->plain ==
          DTCAST_BFLOAT16);
    CHECK1(dt_ggml_traits_of(12)->block == 256 && dt_ggml_traits_of(12)->bytes == 144);
    CHECK1(dt_ggml_traits_of(9)->bytes == 36); /* Q8_1: ggml's 36, not gguf-py 0.19.0's 40 */
    const uint32_t removed[] = {4, 5, 31, 32, 33, 36, 37, 38, 43, 1000};
    for (size_t i = 0; i < sizeof removed / sizeof removed[0]; i++)
        CHECK1(dt_ggml_traits_of(removed[i]) == NULL);
    int n = 0;
    for (uint32_t c = 0; c < DT_GGML_TYPE_COUNT; c++)
        n += dt_ggml_traits_of(c) != NULL;
    CHECK1(n == 35);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--dump") == 0)
        return dump(argv[2]);
    if (argc == 4 && strcmp(argv[1], "--rewrite") == 0)
        return rewrite_file(argv[2], argv[3]);
    test_valid();
    test_refused();
    test_writer();
    test_types();
    return CHECK_EXIT();
}
