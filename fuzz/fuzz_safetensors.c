/* libFuzzer harness for the safetensors reader and writer and their JSON reader. The first byte
 * picks what the rest is:
 *   0: a whole file (8-byte N, header, data). A header that parses is written again with
 *      dt_st_build and the result must parse back to the same tensors and metadata.
 *   1: 8 bytes of data length, then the header text (no need to guess N).
 *   2: JSON text: parsed, printed as json.dumps(indent=2) would, and parsed again (the same
 *      tree); read as an index, written, read again (the same entries and shards).
 * Every input also runs through the F6 bit stream both ways. Never a crash, never a leak. */
#include "files/json.h"
#include "files/safetensors.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const dt_st_tensor *find(const dt_st_header *h, const char *name)
{
    for (size_t i = 0; i < h->ntensors; i++)
        if (strcmp(h->tensors[i].name, name) == 0)
            return &h->tensors[i];
    return NULL;
}

/* A parsed header, written again, must read back the same. */
static void rebuild(const dt_st_header *h)
{
    dt_st_tensor *copy = malloc((h->ntensors ? h->ntensors : 1) * sizeof *copy);
    if (!copy)
        return;
    memcpy(copy, h->tensors, h->ntensors * sizeof *copy);
    uint8_t *prefix;
    size_t len;
    dt_io_error err;
    if (dt_st_build(copy, h->ntensors, h->has_meta, h->meta, h->nmeta, &prefix, &len, &err) !=
        DTCAST_OK)
        abort(); /* everything a valid header holds can be written */
    uint64_t end = h->ntensors ? copy[h->ntensors - 1].end : 0;
    uint64_t n;
    dt_st_header back;
    if (dt_st_json_length(prefix, len + end, &n, &err) != DTCAST_OK || n != len - 8 ||
        dt_st_parse(prefix + 8, len - 8, len + end, &back, &err) != DTCAST_OK)
        abort();
    if (back.ntensors != h->ntensors || back.has_meta != h->has_meta || back.nmeta != h->nmeta)
        abort();
    for (size_t i = 0; i < h->ntensors; i++) {
        const dt_st_tensor *a = &h->tensors[i], *b = find(&back, a->name);
        if (!b || b->type != a->type || b->ndim != a->ndim || b->count != a->count ||
            b->end - b->begin != a->end - a->begin ||
            memcmp(b->dims, a->dims, (size_t)a->ndim * sizeof a->dims[0]) != 0)
            abort();
    }
    for (size_t i = 0; i < h->nmeta; i++)
        if (strcmp(back.meta[i].key, h->meta[i].key) != 0 ||
            strcmp(back.meta[i].value, h->meta[i].value) != 0)
            abort();
    dt_st_header_free(&back);
    free(prefix);
    free(copy);
}

static void whole_file(const uint8_t *d, size_t n)
{
    dt_st_header h;
    dt_io_error err;
    uint64_t jl;
    if (n < 8 || dt_st_json_length(d, n, &jl, &err) != DTCAST_OK)
        return;
    if (dt_st_parse(d + 8, (size_t)jl, n, &h, &err) == DTCAST_OK)
        rebuild(&h);
    else if (h.tensors || h.meta || h.ntensors)
        abort(); /* a failed parse leaves the header empty */
    dt_st_header_free(&h);
}

static void header_text(const uint8_t *d, size_t n)
{
    if (n < 8)
        return;
    uint64_t data_len = 0;
    for (int i = 7; i >= 0; i--)
        data_len = data_len << 8 | d[i];
    data_len %= 1u << 20;
    dt_st_header h;
    dt_io_error err;
    if (dt_st_parse(d + 8, n - 8, n + data_len, &h, &err) == DTCAST_OK)
        rebuild(&h);
    dt_st_header_free(&h);
}

typedef struct member {
    const char *key;
    uint32_t len, at;
    const dt_json_node *node;
} member;

static int cmp_member(const void *a, const void *b)
{
    const member *x = a, *y = b;
    int c = memcmp(x->key, y->key, x->len < y->len ? x->len : y->len);
    if (c || x->len != y->len)
        return c ? c : x->len < y->len ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* Same tree: kinds, counts, keys, strings and numbers' text; b's objects are a's with the
 * members sorted by key (then text order, which keeps duplicate keys apart). */
static int same_tree(const dt_json_doc *a, const dt_json_node *x, const dt_json_doc *b,
                     const dt_json_node *y)
{
    if (x->kind != y->kind || x->count != y->count)
        return 0;
    if (x->kind == DT_JSON_STRING)
        return x->len == y->len && memcmp(dt_json_str(a, x), dt_json_str(b, y), x->len) == 0;
    if (x->kind == DT_JSON_NUMBER)
        return x->end - x->at == y->end - y->at &&
               memcmp(a->text + x->at, b->text + y->at, x->end - x->at) == 0;
    if (x->kind == DT_JSON_ARRAY) {
        for (const dt_json_node *p = dt_json_first(a, x), *q = dt_json_first(b, y); p;
             p = dt_json_next(a, p), q = dt_json_next(b, q))
            if (!same_tree(a, p, b, q))
                return 0;
        return 1;
    }
    if (x->kind != DT_JSON_OBJECT || x->count == 0)
        return 1;
    member *m = malloc(x->count * sizeof *m);
    if (!m)
        return 1;
    size_t n = 0;
    for (const dt_json_node *p = dt_json_first(a, x); p; p = dt_json_next(a, p))
        m[n++] = (member){dt_json_key(a, p), p->key_len, p->key_at, p};
    qsort(m, n, sizeof *m, cmp_member);
    int ok = 1;
    const dt_json_node *q = dt_json_first(b, y);
    for (size_t i = 0; ok && i < n; i++, q = dt_json_next(b, q))
        ok = q->key_len == m[i].len && memcmp(dt_json_key(b, q), m[i].key, m[i].len) == 0 &&
             same_tree(a, m[i].node, b, q);
    free(m);
    return ok;
}

static void json_text(const uint8_t *d, size_t n)
{
    dt_json_doc doc, again;
    dt_io_error err;
    if (dt_json_parse(d, n, 0, NULL, &doc, &err) == DTCAST_OK) {
        dt_json_buf b = {0};
        dt_json_put_pretty(&b, &doc, &doc.nodes[0], 0);
        if (b.oom)
            abort();
        if (dt_json_parse((const uint8_t *)b.data, b.len, 0, NULL, &again, &err) != DTCAST_OK ||
            !same_tree(&doc, &doc.nodes[0], &again, &again.nodes[0]))
            abort();
        dt_json_free(&again);
        free(b.data);
        dt_json_free(&doc);
    }
    dt_st_index ix, back;
    if (dt_st_index_parse(d, n, &ix, &err) == DTCAST_OK) {
        uint8_t *buf;
        size_t len;
        if (dt_st_index_build(&ix, 12345, &buf, &len, &err) != DTCAST_OK ||
            dt_st_index_parse(buf, len, &back, &err) != DTCAST_OK || back.nentries != ix.nentries ||
            back.nshards != ix.nshards || back.nmeta != ix.nmeta || back.nextra != ix.nextra ||
            !back.has_total_size || back.total_size != 12345)
            abort();
        for (size_t i = 0; i < back.nentries; i++) {
            size_t k = 0;
            while (k < ix.nentries && strcmp(ix.entries[k].name, back.entries[i].name) != 0)
                k++;
            if (k == ix.nentries ||
                strcmp(ix.shards[ix.entries[k].shard], back.shards[back.entries[i].shard]) != 0)
                abort();
        }
        dt_st_index_free(&back);
        free(buf);
    }
    dt_st_index_free(&ix);
}

static void f6(const uint8_t *d, size_t n)
{
    if (n > 64)
        n = 64;
    uint8_t packed[48], back[64];
    dt_st_f6_to_bytes(packed, d, n);
    dt_st_f6_from_bytes(back, packed, n);
    for (size_t i = 0; i < n; i++)
        if (back[i] != (d[i] & 63))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    switch (data[0] % 3) {
    case 0: whole_file(data + 1, size - 1); break;
    case 1: header_text(data + 1, size - 1); break;
    default: json_text(data + 1, size - 1); break;
    }
    f6(data + 1, size - 1);
    return 0;
}
