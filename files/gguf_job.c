/* GGUF models as the jobs read them (gguf_job.h): lone files and split sets, the dequantize job
 * GGUF -> safetensors and the writer job tensors -> GGUF. Streamed: a tensor is read a few MiB
 * at a time (pread: the header's mapping is touched only where it was parsed), converted by the
 * library on every thread (dtcast_ggml_dequantize / dtcast_ggml_quantize), written, so memory
 * stays a few MiB whatever the model's size. */
#include "files/gguf_job.h"

#include "files/checkpoint.h"
#include "files/json.h"
#include "files/progress.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK_OUT ((size_t)4 << 20) /* output bytes per step, about */

static dtcast_status oom(dt_io_error *err)
{
    return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
}

int dt_gguf_path(const char *path)
{
    const size_t n = path ? strlen(path) : 0;
    return n >= 5 && strcasecmp(path + n - 5, ".gguf") == 0;
}

/* NAME-0000k-of-0000N.gguf: the length of NAME, k and N (0 when path is not so named) */
static size_t split_name(const char *path, unsigned *k, unsigned *n)
{
    const size_t len = strlen(path);
    /* "-00001-of-00003.gguf" is 20 characters */
    if (len < 21 || strcasecmp(path + len - 5, ".gguf") != 0)
        return 0;
    const char *p = path + len - 20;
    if (p[0] != '-' || strncmp(p + 6, "-of-", 4) != 0)
        return 0;
    unsigned a = 0, b = 0;
    for (int i = 0; i < 5; i++) {
        if (!isdigit((unsigned char)p[1 + i]) || !isdigit((unsigned char)p[10 + i]))
            return 0;
        a = a * 10 + (unsigned)(p[1 + i] - '0');
        b = b * 10 + (unsigned)(p[10 + i] - '0');
    }
    if (a < 1 || b < 1 || a > b)
        return 0;
    *k = a;
    *n = b;
    return len - 20;
}

static uint64_t kv_uint(const dt_gguf *g, const char *key, int *found)
{
    const long i = dt_gguf_find(g, key);
    *found = i >= 0 && g->kv[i].type != DT_GGUF_STRING && g->kv[i].type != DT_GGUF_ARRAY;
    return *found ? g->kv[i].v.u : 0;
}

static dtcast_status open_shard(dt_gguf_shard *sh, const char *path, dt_io_error *err)
{
    sh->file.fd = -1;
    sh->path = strdup(path);
    if (!sh->path)
        return oom(err);
    dtcast_status st = dt_infile_open(&sh->file, path, err);
    if (st == DTCAST_OK && !sh->file.seekable)
        st = dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "%s: a GGUF model is read from a file",
                        path);
    if (st == DTCAST_OK)
        st = dt_infile_map(&sh->file, &sh->map, &sh->len, err);
    if (st == DTCAST_OK)
        st = dt_gguf_parse(sh->map, sh->len, path, &sh->g, err);
    return st;
}

dtcast_status dt_gguf_set_open(dt_gguf_set *s, const char *path, dt_io_error *err)
{
    memset(s, 0, sizeof *s);
    unsigned k = 0, n = 0;
    const size_t stem = split_name(path, &k, &n);
    s->split = stem > 0;
    const size_t count = s->split ? n : 1;
    s->shards = calloc(count, sizeof *s->shards);
    if (!s->shards)
        return oom(err);
    for (size_t i = 0; i < count; i++) {
        char *p = NULL;
        if (s->split) {
            p = malloc(stem + 21);
            if (p)
                snprintf(p, stem + 21, "%.*s-%05u-of-%05u.gguf", (int)stem, path,
                         (unsigned)(i + 1), n);
        } else {
            p = strdup(path);
        }
        if (!p)
            return oom(err);
        s->n = i + 1;
        dtcast_status st = open_shard(&s->shards[i], p, err);
        free(p);
        if (st != DTCAST_OK)
            return st;
        const dt_gguf *g = &s->shards[i].g;
        int has_no, has_count;
        const uint64_t no = kv_uint(g, "split.no", &has_no);
        const uint64_t cnt = kv_uint(g, "split.count", &has_count);
        if (s->split && ((has_no && no != i) || (has_count && cnt != n)))
            return dt_io_fail(err, DTCAST_ERR_BAD_FILE,
                              "%s: split.no %llu / split.count %llu, but the file is %zu of %u "
                              "by its name",
                              s->shards[i].path, (unsigned long long)no,
                              (unsigned long long)cnt, i + 1, n);
        if (!s->split && has_count && cnt > 1)
            return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                              "%s: one file of a split set of %llu (split.count); give the "
                              "first, NAME-00001-of-%05llu.gguf",
                              path, (unsigned long long)cnt, (unsigned long long)cnt);
    }
    return DTCAST_OK;
}

void dt_gguf_set_close(dt_gguf_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        dt_gguf_free(&s->shards[i].g);
        dt_infile_close(&s->shards[i].file);
        free(s->shards[i].path);
    }
    free(s->shards);
    memset(s, 0, sizeof *s);
}

/* ---- metadata as safetensors __metadata__ strings ---------------------------------------------- */

/* The container's own keys: what they say does not hold for a safetensors file. */
static int container_key(const uint8_t *k, uint64_t n)
{
    static const char *const keys[] = {"general.alignment", "split.no", "split.count",
                                       "split.tensors.count"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strlen(keys[i]) == n && memcmp(keys[i], k, (size_t)n) == 0)
            return 1;
    return 0;
}

static uint64_t rd_u64(const uint8_t *p, int be)
{
    uint64_t v = 0;
    for (int k = 0; k < 8; k++)
        v |= (uint64_t)p[k] << (be ? 8 * (7 - k) : 8 * k);
    return v;
}

/* text of a string value / array element: valid UTF-8 without NUL (else 0) */
static int text_ok(const uint8_t *s, uint64_t n)
{
    return memchr(s, 0, (size_t)n) == NULL && dt_json_utf8_check(s, (size_t)n) == (size_t)n;
}

/* kv's value as metadata text into b: a string as it is, a scalar as dt_gguf_scalar_text, an
 * array as a JSON array. 0 when it cannot be text (a string that is not UTF-8 or holds NUL). */
static int value_text(const dt_gguf *g, const uint8_t *buf, const dt_gguf_kv *kv,
                      dt_json_buf *b)
{
    char num[64];
    if (kv->type == DT_GGUF_STRING) {
        if (!text_ok(buf + kv->value_at, kv->count))
            return 0;
        dt_json_put(b, buf + kv->value_at, (size_t)kv->count);
        return 1;
    }
    if (kv->type != DT_GGUF_ARRAY) {
        dt_gguf_scalar_text(num, sizeof num, kv->type, kv->v.u);
        dt_json_puts(b, num);
        return 1;
    }
    dt_json_puts(b, "[");
    uint64_t at = kv->value_at;
    for (uint64_t e = 0; e < kv->count; e++) {
        if (e)
            dt_json_puts(b, ", ");
        if (kv->elem_type == DT_GGUF_STRING) {
            const uint64_t len = rd_u64(buf + at, g->big_endian);
            if (!text_ok(buf + at + 8, len))
                return 0;
            dt_json_put_string(b, (const char *)buf + at + 8, (size_t)len, 0);
            at += 8 + len;
        } else {
            dt_gguf_scalar_text(num, sizeof num, kv->elem_type, dt_gguf_array_u64(g, buf, kv, e));
            dt_json_puts(b, num);
        }
    }
    dt_json_puts(b, "]");
    return 1;
}

static void free_meta(dt_st_header *h)
{
    for (size_t i = 0; i < h->nmeta; i++) {
        free(h->meta[i].key);
        free(h->meta[i].value);
    }
    free(h->meta);
    memset(h, 0, sizeof *h);
}

static dtcast_status shard_meta(const dt_gguf_shard *sh, const dt_job_hooks *hooks,
                                dt_st_header *h, dt_io_error *err)
{
    memset(h, 0, sizeof *h);
    const dt_gguf *g = &sh->g;
    h->meta = calloc(g->nkv ? (size_t)g->nkv : 1, sizeof *h->meta);
    if (!h->meta)
        return oom(err);
    for (uint64_t i = 0; i < g->nkv; i++) {
        const dt_gguf_kv *kv = &g->kv[i];
        if (container_key(kv->key, kv->key_len))
            continue;
        dt_json_buf b = {0};
        if (!text_ok(kv->key, kv->key_len) || !value_text(g, sh->map, kv, &b)) {
            free(b.data);
            dt_job_warn(hooks, "%s: metadata key '%.*s' dropped: its text is not UTF-8 (or holds "
                        "a NUL byte)", sh->path, (int)(kv->key_len < 200 ? kv->key_len : 200),
                        (const char *)kv->key);
            continue;
        }
        dt_json_put(&b, "", 1);
        dt_st_meta *m = &h->meta[h->nmeta];
        m->key = malloc((size_t)kv->key_len + 1);
        if (b.oom || !m->key) {
            free(b.data);
            free(m->key);
            return oom(err);
        }
        memcpy(m->key, kv->key, (size_t)kv->key_len);
        m->key[kv->key_len] = '\0';
        m->value = b.data;
        h->nmeta++;
    }
    h->has_meta = h->nmeta > 0;
    return DTCAST_OK;
}

/* ---- dequantize --------------------------------------------------------------------------------- */

typedef struct dq_ctx {
    const dt_gguf_dequantize_request *r;
    const dt_gguf_shard *sh;
    const dt_st_tensor *items; /* the shard's output tensors, in its tensor order */
    uint8_t *buf;              /* CHUNK_OUT (and a little) */
    size_t buf_size;
    uint8_t *in;               /* the input bytes of a step, read with pread (a mapping's pages
                                * can stay resident after madvise under large folios) */
    size_t in_size;
    dt_progress progress;
} dq_ctx;

static dtcast_status grow_buf(uint8_t **b, size_t *size, size_t need, dt_io_error *err)
{
    if (*size >= need)
        return DTCAST_OK;
    uint8_t *p = realloc(*b, need);
    if (!p)
        return oom(err);
    *b = p;
    *size = need;
    return DTCAST_OK;
}

static dtcast_status grow(dq_ctx *c, size_t need, dt_io_error *err)
{
    return grow_buf(&c->buf, &c->buf_size, need, err);
}

/* the bytes of an element-wise tensor of a big-endian file, swapped to little-endian */
static void swap_to(uint8_t *dst, const uint8_t *src, size_t n, size_t size)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < size; k++)
            dst[i * size + k] = src[i * size + size - 1 - k];
}

static dtcast_status fill(void *ctx, size_t item, dt_outfile *out, uint64_t nbytes,
                          dt_io_error *err)
{
    dq_ctx *c = ctx;
    const dt_gguf_tensor *e = &c->sh->g.tensors[item];
    const dt_ggml_traits *t = dt_ggml_traits_of(e->type);
    const char *tname = c->items[item].name;
    dt_infile *file = (dt_infile *)&c->sh->file;
    dtcast_status st = DTCAST_OK;
    if (t->block == 1) { /* copied (big-endian: swapped) */
        const size_t step = CHUNK_OUT / t->bytes * t->bytes;
        if ((st = grow(c, step, err)) != DTCAST_OK ||
            (st = grow_buf(&c->in, &c->in_size, step, err)) != DTCAST_OK)
            return st;
        for (uint64_t done = 0; done < nbytes && st == DTCAST_OK;) {
            const size_t n = nbytes - done < step ? (size_t)(nbytes - done) : step;
            if ((st = dt_infile_read(file, e->at + done, c->in, n, err)) != DTCAST_OK)
                break;
            if (c->sh->g.big_endian && t->bytes > 1) {
                swap_to(c->buf, c->in, n / t->bytes, t->bytes);
                st = dt_outfile_write(out, c->buf, n, err);
            } else {
                st = dt_outfile_write(out, c->in, n, err);
            }
            dt_progress_add(&c->progress, n);
            done += n;
            if (dt_progress_cancelled(&c->progress))
                st = dt_io_fail(err, DTCAST_ERR_IO, "cancelled");
        }
        return st;
    }
    if (c->sh->g.big_endian)
        return dt_io_fail(err, DTCAST_ERR_UNSUPPORTED,
                          "%s: tensor '%s': %s blocks of a big-endian GGUF file are not read yet",
                          c->sh->path, tname, t->name);
    const size_t osize = c->r->to == DTCAST_FLOAT32 ? 4 : 2;
    size_t nb = CHUNK_OUT / (osize * t->block);
    if (nb == 0)
        nb = 1;
    if ((st = grow(c, nb * t->block * osize, err)) != DTCAST_OK ||
        (st = grow_buf(&c->in, &c->in_size, nb * t->bytes, err)) != DTCAST_OK)
        return st;
    const uint64_t blocks = e->count / t->block;
    for (uint64_t b = 0; b < blocks && st == DTCAST_OK;) {
        const size_t n = blocks - b < nb ? (size_t)(blocks - b) : nb;
        dtcast_tensor y;
        memset(&y, 0, sizeof y);
        y.data = c->buf;
        y.type = c->r->to;
        y.ndim = 1;
        y.shape[0] = (int64_t)(n * t->block);
        y.bytes = n * t->block * osize;
        dtcast_error le;
        if ((st = dt_infile_read(file, e->at + b * t->bytes, c->in, n * t->bytes, err)) !=
            DTCAST_OK)
            break;
        if (dtcast_ggml_dequantize(&y, c->in, n * t->bytes, (int)e->type, c->r->threads,
                                   &le) != DTCAST_OK)
            return dt_io_fail(err, DTCAST_ERR_BAD_FILE, "%s: tensor '%s': %s", c->sh->path,
                              tname, le.message);
        st = dt_outfile_write(out, c->buf, y.bytes, err);
        dt_progress_add(&c->progress, n * t->bytes);
        b += n;
        if (dt_progress_cancelled(&c->progress))
            st = dt_io_fail(err, DTCAST_ERR_IO, "cancelled");
    }
    return st;
}

static int is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* The output tensors of a shard: GGUF names, numpy shapes, the types they become. */
static dtcast_status shard_items(const dt_gguf_shard *sh, dtcast_type to, dt_st_tensor **out,
                                 dt_io_error *err)
{
    const dt_gguf *g = &sh->g;
    dt_st_tensor *it = calloc(g->ntensors ? (size_t)g->ntensors : 1, sizeof *it);
    if (!it)
        return oom(err);
    *out = it;
    for (uint64_t i = 0; i < g->ntensors; i++) {
        const dt_gguf_tensor *e = &g->tensors[i];
        const dt_ggml_traits *t = dt_ggml_traits_of(e->type);
        it[i].name = malloc((size_t)e->name_len + 1);
        if (!it[i].name)
            return oom(err);
        memcpy(it[i].name, e->name, (size_t)e->name_len);
        it[i].name[e->name_len] = '\0';
        if (memchr(e->name, 0, (size_t)e->name_len))
            return dt_io_fail(err, DTCAST_ERR_BAD_FILE,
                              "%s: a tensor name holds a NUL byte (byte %llu): safetensors "
                              "cannot name it", sh->path, (unsigned long long)e->info_at);
        if (t->block == 1) {
            it[i].type = t->plain;
        } else if (!t->dequantize) {
            return dt_io_fail(err, DTCAST_ERR_UNSUPPORTED, "%s: tensor '%s': ggml type %s has "
                              "no conversion to float", sh->path, it[i].name, t->name);
        } else {
            it[i].type = to;
        }
        it[i].ndim = e->n_dims;
        it[i].count = e->count;
        for (int d = 0; d < e->n_dims; d++) /* numpy's order: ne reversed */
            it[i].dims[d] = (int64_t)e->ne[e->n_dims - 1 - d];
    }
    return DTCAST_OK;
}

static void free_items(dt_st_tensor *it, uint64_t n)
{
    if (!it)
        return;
    for (uint64_t i = 0; i < n; i++)
        free(it[i].name);
    free(it);
}

dtcast_status dt_gguf_dequantize(const dt_gguf_dequantize_request *r, dt_io_error *err)
{
    if (r->to != DTCAST_BFLOAT16 && r->to != DTCAST_FLOAT16 && r->to != DTCAST_FLOAT32)
        return dt_job_fail(err, 1, DTCAST_ERR_INVALID_ARGUMENT,
                           "dequantize writes bfloat16, float16 or float32");
    dt_gguf_set s;
    dtcast_status st = dt_gguf_set_open(&s, r->in, err);
    dq_ctx c;
    memset(&c, 0, sizeof c);
    c.r = r;
    uint64_t total = 0;
    for (size_t i = 0; st == DTCAST_OK && i < s.n; i++)
        for (uint64_t k = 0; k < s.shards[i].g.ntensors; k++)
            total += s.shards[i].g.tensors[k].bytes;
    dt_progress_init(&c.progress, total, r->hooks.progress, r->hooks.progress_ctx);
    /* outputs: a lone file, or a folder of shards and an index */
    const size_t nout = s.split ? s.n : 1;
    dt_outfile *outs = calloc(nout + 1, sizeof *outs);
    char **paths = calloc(nout + 1, sizeof *paths);
    char **names = calloc(nout, sizeof *names);
    dt_st_index_entry *entries = NULL;
    size_t nentries = 0;
    uint64_t tensor_bytes = 0;
    if (st == DTCAST_OK && (!outs || !paths || !names))
        st = oom(err);
    for (size_t i = 0; outs && i <= nout; i++)
        outs[i].fd = -1;
    if (st == DTCAST_OK && s.split) {
        if (!is_dir(r->out) && mkdir(r->out, 0777) != 0)
            st = dt_io_fail(err, DTCAST_ERR_IO, "%s: cannot create the folder: %s", r->out,
                            strerror(errno));
        for (size_t i = 0; st == DTCAST_OK && i < nout; i++) {
            char name[64];
            snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", i + 1, nout);
            names[i] = strdup(name);
            paths[i] = names[i] ? dt_path_join(r->out, name) : NULL;
            if (!paths[i])
                st = oom(err);
        }
        paths[nout] = st == DTCAST_OK ? dt_path_join(r->out, "model.safetensors.index.json")
                                      : NULL;
        if (st == DTCAST_OK && !paths[nout])
            st = oom(err);
    } else if (st == DTCAST_OK) {
        if (is_dir(r->out)) {
            const char *base = strrchr(r->in, '/');
            base = base ? base + 1 : r->in;
            char name[512];
            snprintf(name, sizeof name, "%.*s.safetensors", (int)(strlen(base) - 5), base);
            paths[0] = dt_path_join(r->out, name);
        } else {
            paths[0] = strdup(r->out);
        }
        if (!paths[0])
            st = oom(err);
    }
    for (size_t i = 0; st == DTCAST_OK && i < nout; i++) {
        c.sh = &s.shards[i];
        dt_st_tensor *items = NULL;
        dt_st_header meta;
        memset(&meta, 0, sizeof meta);
        st = shard_items(c.sh, r->to, &items, err);
        if (st == DTCAST_OK && !r->no_metadata)
            st = shard_meta(c.sh, &r->hooks, &meta, err);
        c.items = items;
        if (st == DTCAST_OK)
            st = dt_ckpt_write_shard(&outs[i], paths[i], items, (size_t)c.sh->g.ntensors,
                                     meta.has_meta ? &meta : NULL, c.sh->path, fill, &c,
                                     &tensor_bytes, err);
        if (st == DTCAST_OK && s.split) {
            dt_st_index_entry *grown =
                realloc(entries, (nentries + (size_t)c.sh->g.ntensors + 1) * sizeof *entries);
            if (!grown) {
                st = oom(err);
            } else {
                entries = grown;
                for (uint64_t k = 0; k < c.sh->g.ntensors; k++) {
                    entries[nentries].name = items[k].name;
                    items[k].name = NULL; /* now the entry's */
                    entries[nentries++].shard = i;
                }
            }
        }
        free_items(items, c.sh->g.ntensors);
        free_meta(&meta);
    }
    if (st == DTCAST_OK && s.split) {
        dt_st_index ix;
        memset(&ix, 0, sizeof ix);
        ix.nshards = nout;
        ix.shards = names;
        st = dt_ckpt_write_index(&outs[nout], paths[nout], &ix, entries, nentries, tensor_bytes,
                                 paths[nout], err);
    }
    for (size_t i = 0; st == DTCAST_OK && i < nout + (s.split ? 1 : 0); i++)
        st = dt_outfile_commit(&outs[i], err);
    for (size_t i = 0; outs && i <= nout; i++)
        dt_outfile_abort(&outs[i]);
    for (size_t i = 0; i < nentries; i++)
        free(entries[i].name);
    free(entries);
    for (size_t i = 0; paths && i <= nout; i++)
        free(paths[i]);
    for (size_t i = 0; names && i < nout; i++)
        free(names[i]);
    free(paths);
    free(names);
    free(outs);
    free(c.buf);
    free(c.in);
    dt_gguf_set_close(&s);
    return st;
}

/* ---- tensors -> GGUF ------------------------------------------------------------------------------ */

int dt_gguf_fallback_type(int type, int64_t k)
{
    for (int step = 0; step < 3; step++) {
        const int64_t block = dtcast_ggml_block_size(type);
        if (block > 0 && k % block == 0)
            return type;
        switch (type) { /* llama-quantize's fallbacks, then F16 */
        case 10: case 11: case 34: case 35: case 41: case 42: type = 2; break; /* -> Q4_0 */
        case 12: type = 6; break;                                              /* Q4_K -> Q5_0 */
        case 13: type = 7; break;                                              /* Q5_K -> Q5_1 */
        case 14: type = 8; break;                                              /* Q6_K -> Q8_0 */
        default: type = 1; break;                                              /* F16 */
        }
    }
    return type;
}

/* One input tensor, wherever it comes from. */
typedef struct w_src {
    const char *name;
    int ggml;          /* a GGUF source's ggml type code; -1 for a checkpoint's */
    dtcast_type type;  /* its element type (DTCAST_UNDEFINED for a block type) */
    int ndim;
    int64_t dims[DT_MAX_DIMS]; /* numpy order */
    uint64_t count;
    dt_infile *file;   /* read with pread, not from the mapping: a mapping's pages can stay
                        * resident after madvise when the page cache holds large folios */
    uint64_t at;       /* absolute offset of its data in file */
    uint64_t bytes;
} w_src;

typedef struct w_job {
    const dt_gguf_write_request *r;
    uint8_t *in;       /* a band of a tensor's input bytes */
    size_t in_size;
    dt_ckpt ck;
    dt_gguf_set gs;
    int from_gguf;
    size_t n;
    w_src *src;
    int *type;         /* the output type of each */
    uint8_t *buf, *buf2;
    size_t buf_size, buf2_size;
    dt_progress progress;
} w_job;

static int ggml_of_plain(dtcast_type t)
{
    switch (t) {
    case DTCAST_FLOAT32: return 0;
    case DTCAST_FLOAT16: return 1;
    case DTCAST_BFLOAT16: return 30;
    case DTCAST_FLOAT64: return 28;
    case DTCAST_INT8: return 24;
    case DTCAST_INT16: return 25;
    case DTCAST_INT32: return 26;
    case DTCAST_INT64: return 27;
    default: return -1;
    }
}

static int is_float_src(dtcast_type t)
{
    return t == DTCAST_FLOAT32 || t == DTCAST_FLOAT16 || t == DTCAST_BFLOAT16 ||
           t == DTCAST_FLOAT64;
}

static int ends_with(const char *s, const char *tail)
{
    const size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

static dtcast_status w_sources(w_job *j, dt_io_error *err)
{
    const dt_gguf_write_request *r = j->r;
    dtcast_status st;
    if (dt_gguf_path(r->in)) {
        j->from_gguf = 1;
        if ((st = dt_gguf_set_open(&j->gs, r->in, err)) != DTCAST_OK)
            return st;
        for (size_t s = 0; s < j->gs.n; s++)
            j->n += (size_t)j->gs.shards[s].g.ntensors;
    } else {
        if ((st = dt_ckpt_open(&j->ck, r->in, DT_CKPT_NPY, err)) != DTCAST_OK)
            return st;
        j->n = j->ck.n;
    }
    j->src = calloc(j->n ? j->n : 1, sizeof *j->src);
    j->type = calloc(j->n ? j->n : 1, sizeof *j->type);
    if (!j->src || !j->type)
        return oom(err);
    size_t k = 0;
    if (j->from_gguf) {
        for (size_t s = 0; s < j->gs.n; s++) {
            const dt_gguf_shard *sh = &j->gs.shards[s];
            for (uint64_t i = 0; i < sh->g.ntensors; i++, k++) {
                const dt_gguf_tensor *e = &sh->g.tensors[i];
                const dt_ggml_traits *t = dt_ggml_traits_of(e->type);
                w_src *o = &j->src[k];
                char *name = malloc((size_t)e->name_len + 1);
                if (!name)
                    return oom(err);
                memcpy(name, e->name, (size_t)e->name_len);
                name[e->name_len] = '\0';
                o->name = name;
                o->ggml = (int)e->type;
                o->type = t->plain;
                o->ndim = e->n_dims;
                for (int d = 0; d < e->n_dims; d++)
                    o->dims[d] = (int64_t)e->ne[e->n_dims - 1 - d];
                o->count = e->count;
                o->file = &j->gs.shards[s].file;
                o->at = e->at;
                o->bytes = e->bytes;
                if (sh->g.big_endian)
                    return dt_io_fail(err, DTCAST_ERR_UNSUPPORTED, "%s: a big-endian GGUF file "
                                      "is not read by this job yet", sh->path);
            }
        }
        return DTCAST_OK;
    }
    for (; k < j->n; k++) {
        w_src *o = &j->src[k];
        o->name = j->ck.t[k].name;
        o->ggml = -1;
        o->type = j->ck.t[k].type;
        o->ndim = j->ck.t[k].ndim;
        o->count = 1;
        for (int d = 0; d < o->ndim; d++) {
            o->dims[d] = j->ck.t[k].dims[d];
            o->count *= (uint64_t)o->dims[d];
        }
        o->file = &j->ck.shards[j->ck.at[k].shard].file;
        o->at = j->ck.at[k].at;
        o->bytes = j->ck.at[k].bytes;
    }
    return DTCAST_OK;
}

/* The output type of source s, or an error naming it. */
static dtcast_status w_choose(w_job *j, size_t i, dt_io_error *err)
{
    const dt_gguf_write_request *r = j->r;
    const w_src *s = &j->src[i];
    const char *where = s->file->shown;
    if (s->ndim > DT_GGUF_MAX_DIMS)
        return dt_io_fail(err, DTCAST_ERR_UNSUPPORTED, "%s: tensor '%s' has %d dimensions; GGUF "
                          "holds at most 4", where, s->name, s->ndim);
    if (strlen(s->name) > 63)
        return dt_io_fail(err, DTCAST_ERR_UNSUPPORTED, "%s: tensor '%s': GGUF names are at most "
                          "63 bytes", where, s->name);
    int t = -1;
    for (size_t k = 0; k < r->nrules && t < 0; k++)
        if (dt_glob_match(r->rules[k].glob, s->name))
            t = r->rules[k].type;
    const int plain = s->ggml >= 0 && s->type == DTCAST_UNDEFINED ? -1 : ggml_of_plain(s->type);
    const int is_block = s->ggml >= 0 && s->type == DTCAST_UNDEFINED;
    if (!is_block && plain < 0)
        return dt_io_fail(err, DTCAST_ERR_UNSUPPORTED,
                          "%s: tensor '%s' is %s, which GGUF has no type for%s", where, s->name,
                          dtcast_type_name(s->type),
                          strncmp(dtcast_type_name(s->type), "float", 5) == 0
                              ? " (scaled codes? 'dtcast dequantize' gives their values)"
                              : "");
    if (t < 0) {
        if (!is_float_src(s->type) && !is_block)
            t = plain; /* integers: as they are */
        else if (is_block && !r->requantize)
            t = s->ggml;
        else if (s->ndim <= 1 || ends_with(s->name, "norm.weight"))
            t = s->ggml >= 0 ? s->ggml : 0;
        else
            t = r->type;
    }
    if ((t == s->ggml) && s->ggml >= 0) {
        j->type[i] = t; /* copied */
        return DTCAST_OK;
    }
    if (!is_float_src(s->type) && !is_block && t != plain)
        return dt_io_fail(err, DTCAST_ERR_UNSUPPORTED, "%s: tensor '%s' is %s: it is copied as "
                          "%s, not converted to %s", where, s->name, dtcast_type_name(s->type),
                          dtcast_ggml_type_name(plain), dtcast_ggml_type_name(t));
    if (t != plain && !(dtcast_ggml_support(t) & 1))
        return dt_io_fail(err, DTCAST_ERR_UNSUPPORTED, "tensor '%s': dtcast does not quantize to "
                          "%s", s->name, dtcast_ggml_type_name(t));
    if (is_block && !(dtcast_ggml_support(s->ggml) & 2))
        return dt_io_fail(err, DTCAST_ERR_UNSUPPORTED, "%s: tensor '%s': %s cannot be read as "
                          "floats", where, s->name, dtcast_ggml_type_name(s->ggml));
    const int64_t k = s->ndim ? s->dims[s->ndim - 1] : 1;
    const int f = dt_gguf_fallback_type(t, k);
    if (f != t)
        dt_job_warn(&r->hooks, "tensor '%s': rows of %lld are not whole %s blocks: written as %s",
                    s->name, (long long)k, dtcast_ggml_type_name(t), dtcast_ggml_type_name(f));
    j->type[i] = f;
    return DTCAST_OK;
}

static dtcast_status w_grow(uint8_t **b, size_t *size, size_t need, dt_io_error *err)
{
    if (*size >= need)
        return DTCAST_OK;
    uint8_t *p = realloc(*b, need);
    if (!p)
        return oom(err);
    *b = p;
    *size = need;
    return DTCAST_OK;
}

static dtcast_status w_tensor(w_job *j, size_t i, dt_outfile *out, dt_io_error *err)
{
    const w_src *s = &j->src[i];
    const int t = j->type[i];
    dtcast_status st = DTCAST_OK;
    const int src_code = s->ggml >= 0 ? s->ggml : ggml_of_plain(s->type);
    if (t == src_code) { /* copied */
        if ((st = w_grow(&j->in, &j->in_size, CHUNK_OUT, err)) != DTCAST_OK)
            return st;
        for (uint64_t done = 0; done < s->bytes && st == DTCAST_OK;) {
            const size_t n = s->bytes - done < CHUNK_OUT ? (size_t)(s->bytes - done) : CHUNK_OUT;
            st = dt_infile_read(s->file, s->at + done, j->in, n, err);
            if (st == DTCAST_OK)
                st = dt_outfile_write(out, j->in, n, err);
            dt_progress_add(&j->progress, n);
            done += n;
        }
        return st;
    }
    /* converted: rows of K, a band of them at a time */
    const int64_t K = s->ndim ? s->dims[s->ndim - 1] : 1;
    const uint64_t rows = K ? s->count / (uint64_t)K : 0;
    const size_t obs = dtcast_ggml_type_size(t), oblk = (size_t)dtcast_ggml_block_size(t);
    const size_t row_out = (size_t)K / oblk * obs;
    const int is_block = s->ggml >= 0 && s->type == DTCAST_UNDEFINED;
    const size_t row_in = is_block ? (size_t)K / (size_t)dtcast_ggml_block_size(s->ggml) *
                                         dtcast_ggml_type_size(s->ggml)
                                   : (size_t)K * (size_t)(dtcast_type_bits(s->type) / 8);
    size_t band = CHUNK_OUT / ((size_t)K * 4 + 1);
    if (band == 0)
        band = 1;
    if ((st = w_grow(&j->buf, &j->buf_size, band * row_out, err)) != DTCAST_OK ||
        (st = w_grow(&j->in, &j->in_size, band * row_in, err)) != DTCAST_OK ||
        (is_block && (st = w_grow(&j->buf2, &j->buf2_size, band * (size_t)K * 4, err)) != DTCAST_OK))
        return st;
    uint64_t nonfinite = 0, first = UINT64_MAX, invalid = 0;
    for (uint64_t r0 = 0; r0 < rows && st == DTCAST_OK;) {
        const size_t nr = rows - r0 < band ? (size_t)(rows - r0) : band;
        dtcast_tensor x;
        memset(&x, 0, sizeof x);
        x.ndim = 2;
        x.shape[0] = (int64_t)nr;
        x.shape[1] = K;
        dtcast_error le;
        if ((st = dt_infile_read(s->file, s->at + r0 * row_in, j->in, nr * row_in, err)) !=
            DTCAST_OK)
            return st;
        if (is_block) { /* to float32 first (ggml's to_float) */
            x.data = j->buf2;
            x.type = DTCAST_FLOAT32;
            x.bytes = nr * (size_t)K * 4;
            if (dtcast_ggml_dequantize(&x, j->in, nr * row_in, s->ggml,
                                       j->r->threads, &le) != DTCAST_OK)
                return dt_io_fail(err, DTCAST_ERR_BAD_FILE, "tensor '%s': %s", s->name,
                                  le.message);
        } else {
            x.data = j->in;
            x.type = s->type;
            x.bytes = nr * row_in;
        }
        dtcast_ggml_stats stats;
        if (dtcast_ggml_quantize(j->buf, nr * row_out, t, &x, j->r->threads, &stats, &le) !=
            DTCAST_OK)
            return dt_io_fail(err, le.status, "tensor '%s': %s", s->name, le.message);
        if (stats.nonfinite && first == UINT64_MAX)
            first = r0 * (uint64_t)K + stats.first_nonfinite;
        nonfinite += stats.nonfinite;
        invalid += stats.invalid_scales;
        st = dt_outfile_write(out, j->buf, nr * row_out, err);
        dt_progress_add(&j->progress, nr * row_in);
        r0 += nr;
    }
    if (nonfinite)
        dt_job_warn(&j->r->hooks, "tensor '%s': %llu NaN or infinite values quantized as 0 (the "
                    "first at element %llu)", s->name, (unsigned long long)nonfinite,
                    (unsigned long long)first);
    if (invalid)
        dt_job_warn(&j->r->hooks, "tensor '%s': %llu %s blocks have a scale float16 cannot hold "
                    "(infinite): llama.cpp's validation refuses them", s->name,
                    (unsigned long long)invalid, dtcast_ggml_type_name(t));
    return st;
}

/* general.architecture, the source's pairs, the given ones, quantization_version */
static dtcast_status w_meta(w_job *j, dt_gguf_out *o, dt_io_error *err)
{
    const dt_gguf_write_request *r = j->r;
    const dt_gguf *g0 = j->from_gguf ? &j->gs.shards[0].g : NULL;
    const char *arch = r->arch;
    long ai = g0 ? dt_gguf_find(g0, "general.architecture") : -1;
    if (arch)
        dt_gguf_put_string(o, "general.architecture", arch, strlen(arch));
    else if (ai >= 0)
        dt_gguf_put_kv(o, g0, j->gs.shards[0].map, &g0->kv[ai]);
    else
        dt_gguf_put_string(o, "general.architecture", "unknown", 7);
    int has_qv = 0;
    for (uint64_t i = 0; g0 && i < g0->nkv; i++) {
        const dt_gguf_kv *kv = &g0->kv[i];
        if ((long)i == ai || (container_key(kv->key, kv->key_len) &&
                              !(kv->key_len == 17 && memcmp(kv->key, "general.alignment", 17) == 0)))
            continue;
        int given = 0;
        for (size_t k = 0; k < r->nkv && !given; k++)
            given = strlen(r->kv[k].key) == kv->key_len &&
                    memcmp(r->kv[k].key, kv->key, (size_t)kv->key_len) == 0;
        if (given)
            continue;
        has_qv |= kv->key_len == 28 && memcmp(kv->key, "general.quantization_version", 28) == 0;
        dt_gguf_put_kv(o, g0, j->gs.shards[0].map, &g0->kv[i]);
    }
    for (size_t k = 0; k < r->nkv; k++) {
        const dt_gguf_kv_arg *a = &r->kv[k];
        has_qv |= strcmp(a->key, "general.quantization_version") == 0;
        if (strcmp(a->key, "general.architecture") == 0)
            return dt_job_fail(err, 1, DTCAST_ERR_INVALID_ARGUMENT,
                               "--kv general.architecture: give it with --arch");
        if (a->type == DT_GGUF_STRING) {
            dt_gguf_put_string(o, a->key, a->text, strlen(a->text));
            continue;
        }
        char *end = NULL;
        uint64_t bits = 0;
        errno = 0;
        if (a->type == DT_GGUF_FLOAT32 || a->type == DT_GGUF_FLOAT64) {
            const double d = strtod(a->text, &end);
            if (a->type == DT_GGUF_FLOAT32) {
                const float f = (float)d;
                uint32_t b;
                memcpy(&b, &f, 4);
                bits = b;
            } else {
                memcpy(&bits, &d, 8);
            }
        } else if (a->type == DT_GGUF_BOOL) {
            bits = strcmp(a->text, "true") == 0 || strcmp(a->text, "1") == 0;
            end = (char *)a->text + strlen(a->text);
            if (!bits && strcmp(a->text, "false") != 0 && strcmp(a->text, "0") != 0)
                end = (char *)a->text;
        } else if (a->type == DT_GGUF_INT8 || a->type == DT_GGUF_INT16 ||
                   a->type == DT_GGUF_INT32 || a->type == DT_GGUF_INT64) {
            const long long v = strtoll(a->text, &end, 10);
            const int bitsz = a->type == DT_GGUF_INT8 ? 8 : a->type == DT_GGUF_INT16 ? 16
                              : a->type == DT_GGUF_INT32 ? 32 : 64;
            if (bitsz < 64 && (v < -(1LL << (bitsz - 1)) || v >= (1LL << (bitsz - 1))))
                errno = ERANGE;
            bits = (uint64_t)v;
        } else {
            const unsigned long long v = strtoull(a->text, &end, 10);
            const int bitsz = a->type == DT_GGUF_UINT8 ? 8 : a->type == DT_GGUF_UINT16 ? 16
                              : a->type == DT_GGUF_UINT32 ? 32 : 64;
            if (a->text[0] == '-' || (bitsz < 64 && v >> bitsz))
                errno = ERANGE;
            bits = v;
        }
        if (!end || end == a->text || *end || errno)
            return dt_job_fail(err, 1, DTCAST_ERR_INVALID_ARGUMENT, "--kv %s: '%s' is not a %s",
                               a->key, a->text, dt_gguf_value_type_name(a->type));
        dt_gguf_put_scalar(o, a->key, a->type, bits);
    }
    int quantized = 0;
    for (size_t i = 0; i < j->n; i++)
        quantized |= dtcast_ggml_block_size(j->type[i]) > 1;
    if (quantized && !has_qv)
        dt_gguf_put_scalar(o, "general.quantization_version", DT_GGUF_UINT32, 2);
    return DTCAST_OK;
}

dtcast_status dt_gguf_write(const dt_gguf_write_request *r, dt_io_error *err)
{
    w_job j;
    memset(&j, 0, sizeof j);
    j.r = r;
    dt_gguf_out o;
    dt_gguf_out_init(&o, 0);
    dt_outfile out;
    memset(&out, 0, sizeof out);
    out.fd = -1;
    dt_gguf_info *infos = NULL;
    uint64_t *offsets = NULL;
    uint8_t *hdr = NULL;
    size_t hlen = 0;
    dtcast_status st = w_sources(&j, err);
    for (size_t i = 0; st == DTCAST_OK && i < j.n; i++)
        st = w_choose(&j, i, err);
    if (st == DTCAST_OK)
        st = w_meta(&j, &o, err);
    if (st == DTCAST_OK) {
        infos = calloc(j.n ? j.n : 1, sizeof *infos);
        offsets = calloc(j.n ? j.n : 1, sizeof *offsets);
        if (!infos || !offsets)
            st = oom(err);
    }
    uint64_t total = 0;
    for (size_t i = 0; st == DTCAST_OK && i < j.n; i++) {
        const w_src *s = &j.src[i];
        infos[i].name = s->name;
        infos[i].type = (uint32_t)j.type[i];
        infos[i].n_dims = s->ndim;
        for (int d = 0; d < DT_GGUF_MAX_DIMS; d++)
            infos[i].ne[d] = d < s->ndim ? (uint64_t)s->dims[s->ndim - 1 - d] : 1;
        total += s->bytes;
    }
    if (st == DTCAST_OK)
        st = dt_gguf_out_header(&o, infos, j.n, &hdr, &hlen, offsets, err);
    dt_progress_init(&j.progress, total, r->hooks.progress, r->hooks.progress_ctx);
    if (st == DTCAST_OK)
        st = dt_outfile_open(&out, r->out, err);
    if (st == DTCAST_OK)
        st = dt_outfile_write(&out, hdr, hlen, err);
    static const uint8_t zeros[256];
    for (size_t i = 0; st == DTCAST_OK && i < j.n; i++) {
        st = w_tensor(&j, i, &out, err);
        const uint64_t bytes = dt_gguf_tensor_bytes(infos[i].type, infos[i].n_dims, infos[i].ne);
        const uint64_t pad = dt_gguf_padded(bytes, o.alignment) - bytes;
        for (uint64_t p = 0; st == DTCAST_OK && p < pad;) {
            const size_t n = pad - p < sizeof zeros ? (size_t)(pad - p) : sizeof zeros;
            st = dt_outfile_write(&out, zeros, n, err);
            p += n;
        }
        if (st == DTCAST_OK && dt_progress_cancelled(&j.progress))
            st = dt_io_fail(err, DTCAST_ERR_IO, "cancelled");
    }
    if (st == DTCAST_OK)
        st = dt_outfile_commit(&out, err);
    dt_outfile_abort(&out);
    free(hdr);
    free(infos);
    free(offsets);
    dt_gguf_out_free(&o);
    if (j.from_gguf)
        for (size_t i = 0; i < j.n; i++)
            free((char *)(uintptr_t)j.src[i].name);
    free(j.src);
    free(j.type);
    free(j.buf);
    free(j.buf2);
    free(j.in);
    if (j.from_gguf)
        dt_gguf_set_close(&j.gs);
    else
        dt_ckpt_close(&j.ck);
    return st;
}
