/* The checkpoint the jobs read (checkpoint.h): found, opened, every header checked. Never
 * prints. */
#define _DEFAULT_SOURCE 1 /* madvise: glibc makes posix_madvise(POSIX_MADV_DONTNEED) a no-op */

#include "files/checkpoint.h"

#include "files/npy.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

char *dt_path_join(const char *dir, const char *name)
{
    size_t d = strlen(dir), k = strlen(name);
    char *p = malloc(d + k + 2);
    if (!p)
        return NULL;
    memcpy(p, dir, d);
    size_t at = d;
    if (d && dir[d - 1] != '/')
        p[at++] = '/';
    memcpy(p + at, name, k + 1);
    return p;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static dtcast_status oom(dt_io_error *err)
{
    return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
}

/* A warning line added to the list (dropped when out of memory: a warning is not an error). */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void warn(dt_ckpt *c, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    char **grown = realloc(c->warnings, (c->nwarnings + 1) * sizeof *grown);
    if (!grown)
        return;
    c->warnings = grown;
    if ((grown[c->nwarnings] = strdup(line)))
        c->nwarnings++;
}

static dtcast_status add_shard(dt_ckpt *c, const char *name, dt_io_error *err)
{
    dt_ckpt_shard *grown = realloc(c->shards, (c->nshards + 1) * sizeof *grown);
    if (!grown)
        return oom(err);
    c->shards = grown;
    dt_ckpt_shard *s = &c->shards[c->nshards++];
    memset(s, 0, sizeof *s);
    s->file.fd = -1;
    s->name = strdup(name);
    s->path = c->folder ? dt_path_join(c->dir, name) : strdup(c->in);
    if (!s->name || !s->path)
        return oom(err);
    return DTCAST_OK;
}

static dtcast_status add_other(dt_ckpt *c, const char *name, dt_io_error *err)
{
    char **grown = realloc(c->other, (c->nother + 1) * sizeof *grown);
    if (!grown)
        return oom(err);
    c->other = grown;
    if (!(c->other[c->nother] = strdup(name)))
        return oom(err);
    c->nother++;
    return DTCAST_OK;
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

dtcast_status dt_ckpt_load_index(const char *path, dt_st_index *ix, dt_io_error *err)
{
    dt_infile f;
    uint8_t *json = NULL;
    size_t len = 0;
    memset(ix, 0, sizeof *ix);
    dtcast_status st = dt_infile_open(&f, path, err);
    if (st != DTCAST_OK)
        return st;
    st = dt_infile_slurp(&f, &json, &len, err);
    dt_infile_close(&f);
    if (st == DTCAST_OK) {
        st = dt_st_index_parse(json, len, ix, err);
        if (st != DTCAST_OK) {
            dt_io_error inner = *err;
            dt_io_fail(err, st, "%s: %s", path, inner.message);
            err->offset = inner.offset;
            dt_io_where(st, err, path, NULL);
        }
    }
    free(json);
    return st;
}

/* The folder's files: an index (*.safetensors.index.json, model.safetensors.index.json first),
 * the shards, config.json and the others. */
static dtcast_status scan_folder(dt_ckpt *c, const char *index_name, dt_io_error *err)
{
    DIR *d = opendir(c->dir);
    if (!d) {
        dtcast_status st = dt_io_fail(err, DTCAST_ERR_IO, "cannot read the folder '%s': %s",
                                      c->dir, strerror(errno));
        dt_io_where(st, err, c->dir, NULL);
        return st;
    }
    char **names = NULL;
    size_t n = 0;
    dtcast_status st = DTCAST_OK;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char **grown = realloc(names, (n + 1) * sizeof *grown);
        if (!grown || !(grown[n] = strdup(e->d_name))) {
            names = grown ? grown : names;
            st = oom(err);
            break;
        }
        names = grown;
        n++;
    }
    closedir(d);
    if (st == DTCAST_OK)
        qsort(names, n, sizeof *names, by_str);
    /* The index: the one named, else model.safetensors.index.json, else the only one. */
    const char *ixname = index_name;
    size_t nindex = 0;
    for (size_t i = 0; st == DTCAST_OK && !index_name && i < n; i++)
        if (ends_with(names[i], ".safetensors.index.json")) {
            nindex++;
            if (!ixname || strcmp(names[i], "model.safetensors.index.json") == 0)
                ixname = names[i];
        }
    if (st == DTCAST_OK && nindex > 1 && strcmp(ixname, "model.safetensors.index.json") != 0) {
        st = dt_io_fail(err, DTCAST_ERR_BAD_FILE,
                        "%s holds %zu *.safetensors.index.json files: give the one to use", c->dir,
                        nindex);
        dt_io_where(st, err, c->dir, NULL);
    }
    if (st == DTCAST_OK && ixname && !(c->index_name = strdup(ixname)))
        st = oom(err);
    if (st == DTCAST_OK && c->index_name) {
        char *path = dt_path_join(c->dir, c->index_name);
        st = path ? dt_ckpt_load_index(path, &c->ix, err) : oom(err);
        c->has_index = st == DTCAST_OK;
        free(path);
        for (size_t i = 0; st == DTCAST_OK && i < c->ix.nshards; i++)
            st = add_shard(c, c->ix.shards[i], err);
    }
    for (size_t i = 0; st == DTCAST_OK && i < n; i++) {
        const char *name = names[i];
        char *path = dt_path_join(c->dir, name);
        int dir = path && is_dir(path);
        free(path);
        if (c->index_name && strcmp(name, c->index_name) == 0)
            continue;
        if (dir) {
            warn(c, "%s/%s: a folder inside the model folder is not copied", c->dir, name);
        } else if (strcmp(name, "config.json") == 0) {
            c->has_config = 1;
        } else if (ends_with(name, ".safetensors")) {
            int listed = 0;
            for (size_t k = 0; k < c->nshards; k++)
                listed |= strcmp(c->shards[k].name, name) == 0;
            if (!c->has_index)
                st = add_shard(c, name, err);
            else if (!listed)
                warn(c, "%s/%s: not in the index: left out", c->dir, name);
        } else if (ends_with(name, ".safetensors.index.json")) {
            warn(c, "%s/%s: another index: left out", c->dir, name);
        } else {
            st = add_other(c, name, err);
        }
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (st == DTCAST_OK && c->nshards == 0) {
        st = dt_io_fail(err, DTCAST_ERR_BAD_FILE, "%s: no *.safetensors file (and no index)",
                        c->dir);
        dt_io_where(st, err, c->dir, NULL);
    }
    return st;
}

/* A .npy as a one-tensor shard. */
static dtcast_status open_npy(dt_ckpt *c, dt_ckpt_shard *s, dt_io_error *err)
{
    dt_npy_info info;
    dtcast_status st =
        dt_npy_read_header(s->map, s->map_len, s->file.size, DTCAST_UNDEFINED, &info, err);
    if (st != DTCAST_OK) {
        dt_io_error inner = *err;
        dt_io_fail(err, st, "%s: %s", c->in, inner.message);
        err->offset = inner.offset;
        dt_io_where(st, err, c->in, NULL);
        return st;
    }
    if (info.strings || info.fortran || !dt_layout_is_native(&info.layout)) {
        st = dt_io_fail(err, DTCAST_ERR_UNSUPPORTED,
                        "%s: %s arrays are not quantized (give a C-order little-endian float "
                        "array)",
                        c->in, info.descr);
        dt_io_where(st, err, c->in, NULL);
        return st;
    }
    s->h.tensors = calloc(1, sizeof *s->h.tensors);
    const char *slash = strrchr(c->in, '/');
    char *stem = strdup(slash ? slash + 1 : c->in);
    if (!s->h.tensors || !stem) {
        free(stem);
        return oom(err);
    }
    char *dot = strrchr(stem, '.');
    if (dot && dot != stem)
        *dot = '\0';
    s->h.ntensors = 1;
    s->h.data_start = info.data_offset;
    dt_st_tensor *t = &s->h.tensors[0];
    t->name = stem;
    t->type = info.type;
    t->ndim = info.ndim;
    memcpy(t->dims, info.dims, sizeof t->dims);
    t->count = info.count;
    t->begin = 0;
    t->end = info.data_bytes;
    return DTCAST_OK;
}

dtcast_status dt_st_read_header(dt_infile *f, dt_st_header *h, dt_io_error *err)
{
    uint8_t first8[8];
    uint64_t n = 0;
    dtcast_status st = dt_infile_read(f, 0, first8, f->size < 8 ? f->size : 8, err);
    if (st == DTCAST_OK)
        st = dt_st_json_length(first8, f->size, &n, err);
    uint8_t *json = st == DTCAST_OK ? malloc(n ? (size_t)n : 1) : NULL;
    if (st == DTCAST_OK && !json)
        st = dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory for a %llu-byte header",
                        (unsigned long long)n);
    if (st == DTCAST_OK)
        st = dt_infile_read(f, 8, json, (size_t)n, err);
    if (st == DTCAST_OK)
        st = dt_st_parse(json, (size_t)n, f->size, h, err);
    free(json);
    return st;
}

typedef struct named {
    const char *name;
    size_t i;
} named;

static int by_named(const void *a, const void *b)
{
    return strcmp(((const named *)a)->name, ((const named *)b)->name);
}

/* The tensor list over all shards, and the names sorted (two of one name are an error). */
static dtcast_status list_tensors(dt_ckpt *c, size_t total, dt_io_error *err)
{
    c->t = calloc(total ? total : 1, sizeof *c->t);
    c->at = calloc(total ? total : 1, sizeof *c->at);
    c->by_name = calloc(total ? total : 1, sizeof *c->by_name);
    if (!c->t || !c->at || !c->by_name)
        return oom(err);
    for (size_t i = 0; i < c->nshards; i++) {
        const dt_st_header *h = &c->shards[i].h;
        for (size_t k = 0; k < h->ntensors; k++) {
            const dt_st_tensor *e = &h->tensors[k];
            dt_qt *t = &c->t[c->n];
            if (e->ndim > DTCAST_MAX_DIMS) {
                dtcast_status st =
                    dt_io_fail(err, DTCAST_ERR_BAD_FILE, "%s: tensor '%s' has %d axes (at most %d)",
                               c->shards[i].path, e->name, e->ndim, DTCAST_MAX_DIMS);
                dt_io_where(st, err, c->shards[i].path, e->name);
                return st;
            }
            t->name = e->name;
            t->type = e->type;
            t->ndim = e->ndim;
            memcpy(t->dims, e->dims, (size_t)e->ndim * sizeof e->dims[0]);
            c->at[c->n] = (dt_ckpt_tensor){e, i, h->data_start + e->begin, e->end - e->begin};
            c->n++;
        }
    }
    /* Names are unique over the shards (the plan and dt_ckpt_find look them up). */
    named *names = malloc((c->n ? c->n : 1) * sizeof *names);
    if (!names)
        return oom(err);
    for (size_t i = 0; i < c->n; i++)
        names[i] = (named){c->t[i].name, i};
    qsort(names, c->n, sizeof *names, by_named);
    dtcast_status st = DTCAST_OK;
    for (size_t i = 0; i < c->n; i++)
        c->by_name[i] = names[i].i;
    for (size_t i = 1; st == DTCAST_OK && i < c->n; i++)
        if (strcmp(names[i - 1].name, names[i].name) == 0) {
            st = dt_io_fail(err, DTCAST_ERR_BAD_FILE, "%s: two tensors are named '%s'", c->in,
                            names[i].name);
            dt_io_where(st, err, c->in, names[i].name);
        }
    free(names);
    return st;
}

dtcast_status dt_ckpt_open(dt_ckpt *c, const char *in, unsigned flags, dt_io_error *err)
{
    memset(c, 0, sizeof *c);
    if (!(c->in = strdup(in)))
        return oom(err);
    dtcast_status st = DTCAST_OK;
    dt_file_kind kind = dt_file_kind_of(in);
    int npy_ok = (flags & DT_CKPT_NPY) != 0;
    if (is_dir(in)) {
        c->folder = 1;
        if (!(c->dir = strdup(in)))
            return oom(err);
        st = scan_folder(c, NULL, err);
    } else if (kind == DT_FILE_SAFETENSORS_INDEX) {
        c->folder = 1;
        const char *slash = strrchr(in, '/');
        c->dir = slash ? strndup(in, (size_t)(slash - in)) : strdup(".");
        if (!c->dir)
            return oom(err);
        st = scan_folder(c, slash ? slash + 1 : in, err);
    } else if (kind == DT_FILE_SAFETENSORS || (kind == DT_FILE_NPY && npy_ok)) {
        c->npy = kind == DT_FILE_NPY;
        if (!(c->dir = strdup("")))
            return oom(err);
        st = add_shard(c, in, err);
    } else {
        char why[512];
        if (kind == DT_FILE_UNKNOWN || kind == DT_FILE_RAW || kind == DT_FILE_PB)
            st = dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                            "IN '%s': give a .safetensors file, a *.safetensors.index.json, a "
                            "model folder%s (%s)",
                            in, npy_ok ? " or a .npy" : "",
                            dt_file_kind_refusal(in, why, sizeof why) ? why : "not one of those");
        else
            st = dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "IN '%s' is not a checkpoint", in);
        dt_io_where(st, err, in, NULL);
        return st;
    }
    size_t total = 0;
    for (size_t i = 0; st == DTCAST_OK && i < c->nshards; i++) {
        dt_ckpt_shard *s = &c->shards[i];
        st = dt_infile_open(&s->file, s->path, err);
        if (st == DTCAST_OK)
            st = dt_infile_map(&s->file, &s->map, &s->map_len, err);
        if (st != DTCAST_OK) {
            dt_io_where(st, err, s->path, NULL);
            break;
        }
        if (c->npy) {
            st = open_npy(c, s, err);
        } else if ((st = dt_st_read_header(&s->file, &s->h, err)) != DTCAST_OK) {
            dt_io_error inner = *err;
            if (!strstr(inner.message, s->path))
                dt_io_fail(err, st, "%s: %s", s->path, inner.message);
            err->offset = inner.offset;
            dt_io_where(st, err, s->path, inner.tensor);
        }
        total += s->h.ntensors;
    }
    if (st == DTCAST_OK)
        st = list_tensors(c, total, err);
    return st;
}

void dt_ckpt_close(dt_ckpt *c)
{
    for (size_t i = 0; i < c->nshards; i++) {
        dt_ckpt_shard *s = &c->shards[i];
        if (c->npy) {
            free(s->h.tensors ? s->h.tensors[0].name : NULL);
            free(s->h.tensors);
            s->h.tensors = NULL;
            s->h.ntensors = 0;
        }
        dt_st_header_free(&s->h);
        dt_infile_close(&s->file);
        free(s->name);
        free(s->path);
    }
    for (size_t i = 0; i < c->nother; i++)
        free(c->other[i]);
    for (size_t i = 0; i < c->nwarnings; i++)
        free(c->warnings[i]);
    free(c->warnings);
    free(c->other);
    free(c->shards);
    free(c->t);
    free(c->at);
    free(c->by_name);
    free(c->in);
    free(c->dir);
    free(c->index_name);
    dt_st_index_free(&c->ix);
    memset(c, 0, sizeof *c);
}

dtcast_status dt_ckpt_read(const dt_ckpt *c, size_t i, uint8_t **buf, dt_io_error *err)
{
    const dt_ckpt_tensor *t = &c->at[i];
    *buf = NULL;
    dtcast_status st = DTCAST_OK;
    if (t->bytes > SIZE_MAX - 64)
        st = dt_io_fail(err, DTCAST_ERR_SIZE_OVERFLOW, "tensor '%s' is too large", c->t[i].name);
    else if (!(*buf = malloc(t->bytes ? (size_t)t->bytes : 1)))
        st = dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory for tensor '%s' (%llu bytes)",
                        c->t[i].name, (unsigned long long)t->bytes);
    if (st != DTCAST_OK) {
        dt_io_where(st, err, c->shards[t->shard].path, c->t[i].name);
        err->offset = (int64_t)t->at;
        return st;
    }
    memcpy(*buf, dt_ckpt_data(c, i), (size_t)t->bytes);
    dt_ckpt_release(c, t->shard, t->at, t->bytes);
    return DTCAST_OK;
}

void dt_ckpt_release(const dt_ckpt *c, size_t s, uint64_t at, uint64_t len)
{
    const dt_ckpt_shard *sh = &c->shards[s];
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || !sh->map || !sh->map_len || len == 0)
        return;
    uint64_t lo = at / (uint64_t)page * (uint64_t)page, hi = at + len;
    if (hi > sh->map_len)
        hi = sh->map_len;
    if (hi > lo)
        (void)madvise((void *)(sh->map + lo), (size_t)(hi - lo), MADV_DONTNEED);
}

uint64_t dt_ckpt_input_bytes(const dt_ckpt *c)
{
    uint64_t total = 0;
    for (size_t i = 0; i < c->nshards; i++)
        total += c->shards[i].file.size;
    return total;
}

size_t dt_ckpt_find(const dt_ckpt *c, const char *name)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int cmp = strcmp(c->t[c->by_name[mid]].name, name);
        if (cmp == 0)
            return c->by_name[mid];
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return c->n;
}
