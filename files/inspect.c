/* dtcast inspect's library part (inspect.h): headers read with the readers' own parsers, the
 * results gathered into a dt_inspect; nothing printed. */
#include "files/inspect.h"

#include "files/checkpoint.h"
#include "files/file.h"
#include "files/gguf.h"
#include "files/json.h"
#include "files/npy.h"
#include "files/onnx_model.h"
#include "files/progress.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define NOMEM DTCAST_ERR_OUT_OF_MEMORY

const char *dt_insp_kind_name(dt_insp_kind kind)
{
    switch (kind) {
    case DT_INSP_NPY: return "npy";
    case DT_INSP_PB: return "pb";
    case DT_INSP_SAFETENSORS: return "safetensors";
    case DT_INSP_INDEX: return "index";
    case DT_INSP_FOLDER: return "folder";
    case DT_INSP_ONNX: return "onnx";
    case DT_INSP_GGUF: return "gguf";
    case DT_INSP_UNKNOWN: return "unknown";
    }
    return "?";
}

const char *dt_insp_role_name(dt_insp_role role)
{
    switch (role) {
    case DT_INSP_PLAIN: return "plain";
    case DT_INSP_CODES: return "codes";
    case DT_INSP_SCALES: return "scales";
    case DT_INSP_GLOBAL: return "global_scale";
    case DT_INSP_INPUT_SCALE: return "input_scale";
    case DT_INSP_SHAPE: return "shape";
    case DT_INSP_HINT: return "hint";
    case DT_INSP_ZERO_POINT: return "zero_point";
    case DT_INSP_G_IDX: return "g_idx";
    }
    return "?";
}

/* ---- building the result ------------------------------------------------------------------ */

typedef struct insp {
    dt_inspect *r;
    dt_io_error *err;    /* the first error's message */
    dtcast_status first; /* the first error's status */
    int oom;             /* out of memory: stop */
    int ckpt_refused;    /* dt_ckpt_open's own error was recorded (two names, ...) */
    dt_progress progress; /* over the files' bytes, advanced as each file's header is read */
    int cancelled;       /* the progress callback asked to stop */
} insp;

static int has_prefix_path(const char *message, const char *path)
{
    return path && strstr(message, path) != NULL;
}

/* Records a problem: "FILE: message" (the file left out when the message names it already). */
static void problem(insp *c, int warning, dtcast_status status, const char *file,
                    const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static void problem(insp *c, int warning, dtcast_status status, const char *file,
                    const char *fmt, ...)
{
    char body[1200], line[1800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    if (file && !has_prefix_path(body, file))
        snprintf(line, sizeof line, "%s: %s", file, body);
    else
        snprintf(line, sizeof line, "%s", body);
    if (status == NOMEM)
        c->oom = 1;
    if (!warning && c->first == DTCAST_OK) {
        c->first = status;
        dt_io_fail(c->err, status, "%s", line);
    }
    dt_inspect *r = c->r;
    dt_insp_problem *grown = realloc(r->problems, (r->nproblems + 1) * sizeof *grown);
    if (!grown) {
        c->oom = 1;
        return;
    }
    r->problems = grown;
    dt_insp_problem *p = &r->problems[r->nproblems];
    p->status = status;
    p->warning = warning;
    p->file = file ? strdup(file) : NULL;
    p->message = strdup(line);
    if (!p->message || (file && !p->file)) {
        free(p->file);
        free(p->message);
        c->oom = 1;
        return;
    }
    r->nproblems++;
    if (!warning)
        r->nerrors++;
}

static void no_memory(insp *c, const char *file)
{
    problem(c, 0, NOMEM, file, "out of memory");
}

static size_t add_file(insp *c, const char *path, dt_file_kind kind)
{
    dt_inspect *r = c->r;
    dt_insp_file *grown = realloc(r->files, (r->nfiles + 1) * sizeof *grown);
    if (!grown) {
        no_memory(c, path);
        return (size_t)-1;
    }
    r->files = grown;
    dt_insp_file *f = &r->files[r->nfiles];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->size = UINT64_MAX;
    f->first = r->ntensors;
    if (!(f->path = strdup(path))) {
        no_memory(c, path);
        return (size_t)-1;
    }
    return r->nfiles++;
}

static dt_insp_tensor *add_tensor(insp *c, size_t file)
{
    dt_inspect *r = c->r;
    dt_insp_tensor *grown = realloc(r->tensors, (r->ntensors + 1) * sizeof *grown);
    if (!grown) {
        no_memory(c, r->files[file].path);
        return NULL;
    }
    r->tensors = grown;
    dt_insp_tensor *t = &r->tensors[r->ntensors++];
    memset(t, 0, sizeof *t);
    t->file = file;
    t->group = DT_QT_NONE;
    r->files[file].ntensors++;
    return t;
}

static void set_shape(dt_insp_tensor *t, int ndim, const int64_t *dims, uint64_t count)
{
    t->ndim = ndim;
    memcpy(t->dims, dims, (size_t)ndim * sizeof dims[0]);
    t->count = count;
}

/* ---- a file's bytes: a regular file, or a buffer (dt_inspect_memory) ------------------------ */

typedef struct source {
    const char *path;
    dt_infile f;
    int opened;
    const uint8_t *mem; /* a buffer instead of a file */
    size_t mem_len;
    uint64_t size;
} source;

static dtcast_status source_open(source *s, const char *path, dt_io_error *err)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    dtcast_status st = dt_infile_open(&s->f, path, err);
    if (st != DTCAST_OK)
        return st;
    s->opened = 1;
    if (!s->f.seekable)
        return dt_io_fail(err, DTCAST_ERR_IO, "%s: not a regular file", path);
    s->size = s->f.size;
    return DTCAST_OK;
}

static void source_close(source *s)
{
    if (s->opened)
        dt_infile_close(&s->f);
    s->opened = 0;
}

/* The whole file, mapped (only the pages a parser touches are read). */
static dtcast_status source_all(source *s, const uint8_t **buf, size_t *len, dt_io_error *err)
{
    if (!s->opened) {
        *buf = s->mem;
        *len = s->mem_len;
        return DTCAST_OK;
    }
    return dt_infile_map(&s->f, buf, len, err);
}

static dtcast_status source_read(source *s, uint64_t at, void *buf, size_t len, dt_io_error *err)
{
    if (s->opened)
        return dt_infile_read(&s->f, at, buf, len, err);
    if (at > s->mem_len || len > s->mem_len - at)
        return dt_io_fail(err, DTCAST_ERR_BAD_FILE, "%s: file ends at byte %zu (truncated)",
                          s->path, s->mem_len);
    memcpy(buf, s->mem + at, len);
    return DTCAST_OK;
}

/* ---- the single-file formats -------------------------------------------------------------- */

/* The header of a safetensors file into files[fi] and its tensors; *h keeps the parsed header
 * (empty on failure) for the caller's checks. Returns the parser's status. */
static dtcast_status read_safetensors(insp *c, size_t fi, source *s, dt_st_header *h)
{
    dt_io_error err = DT_IO_ERROR_INIT;
    dt_insp_file *f = &c->r->files[fi];
    memset(h, 0, sizeof *h);
    uint8_t first8[8] = {0};
    uint64_t n = 0;
    dtcast_status st = source_read(s, 0, first8, s->size < 8 ? (size_t)s->size : 8, &err);
    if (st == DTCAST_OK)
        st = dt_st_json_length(first8, s->size, &n, &err);
    uint8_t *json = st == DTCAST_OK ? malloc(n ? (size_t)n : 1) : NULL;
    if (st == DTCAST_OK && !json)
        st = dt_io_fail(&err, NOMEM, "out of memory for a %llu-byte header",
                        (unsigned long long)n);
    if (st == DTCAST_OK)
        st = source_read(s, 8, json, (size_t)n, &err);
    if (st == DTCAST_OK)
        st = dt_st_parse(json, (size_t)n, s->size, h, &err);
    free(json);
    if (st != DTCAST_OK) {
        problem(c, 0, st, f->path, "%s", err.message);
        return st;
    }
    f->data_start = h->data_start;
    f->has_meta = h->has_meta;
    f->nmeta = h->nmeta;
    f->meta = h->meta; /* moved */
    h->meta = NULL;
    h->nmeta = 0;
    for (size_t i = 0; i < h->ntensors && !c->oom; i++) {
        dt_st_tensor *e = &h->tensors[i];
        dt_insp_tensor *t = add_tensor(c, fi);
        if (!t)
            break;
        t->name = e->name; /* moved */
        e->name = NULL;
        t->type = e->type;
        set_shape(t, e->ndim, e->dims, e->count);
        t->begin = e->begin;
        t->end = e->end;
        t->bytes = e->end - e->begin;
        t->offset = h->data_start + e->begin;
    }
    if (c->oom)
        return NOMEM;
    c->r->files[fi].ok = 1;
    return DTCAST_OK;
}

static char *stem_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *stem = strdup(slash ? slash + 1 : path);
    char *dot = stem ? strrchr(stem, '.') : NULL;
    if (dot && dot != stem)
        *dot = '\0';
    return stem;
}

static void read_npy(insp *c, size_t fi, source *s)
{
    dt_io_error err = DT_IO_ERROR_INIT;
    const uint8_t *buf = NULL;
    size_t len = 0;
    dt_npy_info info;
    const char *path = c->r->files[fi].path;
    dtcast_status st = source_all(s, &buf, &len, &err);
    if (st == DTCAST_OK)
        st = dt_npy_read_header(buf, len, s->size, DTCAST_UNDEFINED, &info, &err);
    if (st != DTCAST_OK) {
        problem(c, 0, st, path, "%s", err.message);
        return;
    }
    c->r->files[fi].data_start = info.data_offset;
    dt_insp_tensor *t = add_tensor(c, fi);
    if (!t)
        return;
    char storage[128];
    snprintf(storage, sizeof storage, "'%s', %s order%s", info.descr,
             info.fortran ? "Fortran" : "C",
             info.layout.store == DT_STORE_BYTE_EACH ? ", one element per byte" : "");
    t->name = stem_of(path);
    t->storage = strdup(storage);
    if (!t->name || !t->storage) {
        no_memory(c, path);
        return;
    }
    t->type = info.type;
    set_shape(t, info.ndim, info.dims, info.count);
    t->bytes = info.data_bytes;
    t->offset = info.data_offset;
    c->r->files[fi].ok = 1;
}

/* external_data location: relative to the .pb's folder, and staying inside it (as cast reads
 * it). */
static int leaves_folder(const char *loc)
{
    size_t n = strlen(loc);
    return loc[0] == '/' || strcmp(loc, "..") == 0 || strncmp(loc, "../", 3) == 0 ||
           strstr(loc, "/../") || (n >= 3 && strcmp(loc + n - 3, "/..") == 0);
}

/* Tensor ti's data is in the external file loc (relative to files[pbi]'s folder) at ext_offset,
 * nbytes long: the file is added (once) and checked. what: ".pb" or "model". */
static void read_external(insp *c, size_t pbi, const char *loc, size_t location_at,
                          uint64_t ext_offset, uint64_t nbytes, size_t ti, int in_memory,
                          const char *what)
{
    const char *pbpath = c->r->files[pbi].path;
    if (leaves_folder(loc)) {
        problem(c, 0, DTCAST_ERR_BAD_FILE, pbpath,
                "external_data location '%s' leaves the folder of the %s at byte %zu", loc, what,
                location_at);
        return;
    }
    const char *slash = strrchr(pbpath, '/');
    size_t dir = slash ? (size_t)(slash - pbpath) + 1 : 0;
    char *path = malloc(dir + strlen(loc) + 1);
    if (!path) {
        no_memory(c, pbpath);
        return;
    }
    memcpy(path, pbpath, dir);
    strcpy(path + dir, loc);
    size_t fi = (size_t)-1;
    for (size_t i = pbi + 1; i < c->r->nfiles; i++) /* a model's tensors share data files */
        if (c->r->files[i].kind == DT_FILE_RAW && strcmp(c->r->files[i].path, path) == 0)
            fi = i;
    const int seen = fi != (size_t)-1;
    if (!seen)
        fi = add_file(c, path, DT_FILE_RAW);
    free(path);
    if (fi == (size_t)-1)
        return;
    /* The tensor belongs to the .pb's (the model's) list but its data is in the external file. */
    dt_insp_tensor *t = &c->r->tensors[ti];
    t->file = fi;
    t->offset = ext_offset;
    if (in_memory)
        return;
    dt_insp_file *f = &c->r->files[fi];
    if (seen && f->size != UINT64_MAX) {
        uint64_t end;
        if (__builtin_add_overflow(ext_offset, nbytes, &end) || end > f->size)
            problem(c, 0, DTCAST_ERR_BAD_FILE, pbpath,
                    "tensor '%s': external data '%s' holds %llu bytes, but offset %llu + length "
                    "%llu go beyond it", t->name, loc, (unsigned long long)f->size,
                    (unsigned long long)ext_offset, (unsigned long long)nbytes);
        return;
    }
    source s;
    dt_io_error err = DT_IO_ERROR_INIT;
    if (source_open(&s, f->path, &err) != DTCAST_OK) {
        source_close(&s);
        problem(c, 0, DTCAST_ERR_BAD_FILE, pbpath, "external data: %s", err.message);
        return;
    }
    f->size = s.size;
    source_close(&s);
    uint64_t end;
    if (__builtin_add_overflow(ext_offset, nbytes, &end) || end > f->size) {
        problem(c, 0, DTCAST_ERR_BAD_FILE, pbpath,
                "external data '%s' holds %llu bytes, but offset %llu + length %llu go beyond it",
                loc, (unsigned long long)f->size, (unsigned long long)ext_offset,
                (unsigned long long)nbytes);
        return;
    }
    f->ok = 1;
}

static void read_pb(insp *c, size_t fi, source *s)
{
    dt_io_error err = DT_IO_ERROR_INIT;
    const uint8_t *buf = NULL;
    size_t len = 0;
    dt_pb_info info;
    memset(&info, 0, sizeof info);
    const char *path = c->r->files[fi].path;
    dtcast_status st = source_all(s, &buf, &len, &err);
    if (st == DTCAST_OK)
        st = dt_pb_locate(buf, len, &info, &err);
    if (st != DTCAST_OK) {
        problem(c, 0, st, path, "%s", err.message);
        dt_pb_info_free(&info);
        return;
    }
    dt_insp_tensor *t = add_tensor(c, fi);
    if (!t) {
        dt_pb_info_free(&info);
        return;
    }
    t->name = strdup(info.name ? info.name : "");
    const char *where = info.where == DT_PB_RAW        ? "raw_data"
                        : info.where == DT_PB_EXTERNAL ? "external data"
                                                       : "typed field";
    char storage[128];
    snprintf(storage, sizeof storage, "%s%s", where,
             dtcast_type_bits(info.type) == 6 && info.where != DT_PB_TYPED
                 ? info.float6_byte_each ? ", one element per byte" : ", packed 4 in 3 bytes"
                 : "");
    t->storage = strdup(storage);
    if (!t->name || !t->storage) {
        dt_pb_info_free(&info);
        no_memory(c, path);
        return;
    }
    t->type = info.type;
    set_shape(t, info.ndim, info.dims, info.count);
    t->bytes = info.nbytes;
    t->offset = info.where == DT_PB_RAW ? info.raw_at : UINT64_MAX; /* typed: not one run */
    c->r->files[fi].ok = 1;
    if (info.where == DT_PB_EXTERNAL)
        read_external(c, fi, info.location, info.location_at, info.ext_offset, info.nbytes,
                      c->r->ntensors - 1, !s->opened, ".pb");
    dt_pb_info_free(&info);
}

/* ---- an ONNX model: its initializers and Constant tensors (files/onnx_model.h) -------------- */

typedef struct onnx_ctx {
    insp *c;
    size_t fi;
    int in_memory;
} onnx_ctx;

static dtcast_status onnx_tensor(void *arg, const dt_onnx_tensor_info *i)
{
    onnx_ctx *o = arg;
    insp *c = o->c;
    if (c->oom)
        return NOMEM;
    dt_insp_tensor *t = add_tensor(c, o->fi);
    if (!t)
        return NOMEM;
    const char *where = i->where == DT_ONNX_DATA_RAW        ? "raw_data"
                        : i->where == DT_ONNX_DATA_EXTERNAL ? "external data"
                        : i->where == DT_ONNX_DATA_TYPED    ? "typed field"
                                                            : "no data";
    const char *role = i->kind == 0 ? "" : i->kind == 1 ? ", a Constant's value" : ", an attribute";
    char storage[160];
    snprintf(storage, sizeof storage, "%s%s%s", where, role, i->depth > 1 ? ", in a subgraph" : "");
    t->name = strdup(i->name);
    t->storage = strdup(storage);
    if (!t->name || !t->storage) {
        no_memory(c, c->r->files[o->fi].path);
        return NOMEM;
    }
    t->type = i->data_type < 1000 ? (dtcast_type)i->data_type : DTCAST_UNDEFINED;
    set_shape(t, i->ndim, i->dims, i->count);
    const int bits = t->type != DTCAST_UNDEFINED ? dtcast_type_bits(t->type) : 0;
    uint64_t bytes = 0;
    if (bits > 0 && i->count <= UINT64_MAX / (uint64_t)bits)
        bytes = (i->count * (uint64_t)bits + 7) / 8;
    t->bytes = i->where == DT_ONNX_DATA_RAW ? i->data_len
               : i->where == DT_ONNX_DATA_EXTERNAL && i->has_length ? i->ext_length
                                                                    : bytes;
    t->offset = i->where == DT_ONNX_DATA_RAW ? i->data_offset : UINT64_MAX;
    if (i->where == DT_ONNX_DATA_EXTERNAL) {
        if (!i->location || !i->location[0])
            problem(c, 0, DTCAST_ERR_BAD_FILE, c->r->files[o->fi].path,
                    "tensor '%s': external data without a location", t->name);
        else
            read_external(c, o->fi, i->location, 0, i->ext_offset, t->bytes, c->r->ntensors - 1,
                          o->in_memory, "model");
    }
    return DTCAST_OK;
}

static void read_onnx(insp *c, size_t fi, source *s)
{
    dt_io_error err = DT_IO_ERROR_INIT;
    const uint8_t *buf = NULL;
    size_t len = 0;
    const char *path = c->r->files[fi].path;
    dtcast_status st = source_all(s, &buf, &len, &err);
    onnx_ctx o = {c, fi, !s->opened};
    int64_t opset = -1;
    if (st == DTCAST_OK)
        st = dt_onnx_model_tensors(buf, len, path, &opset, onnx_tensor, &o, &err);
    if (c->oom)
        return;
    if (st != DTCAST_OK) {
        problem(c, 0, st, path, "%s", err.message);
        return;
    }
    c->r->opset = opset;
    c->r->files[fi].ok = 1;
}

/* ---- checkpoints: an index, a folder (files/checkpoint.h finds the shards) ---------------- */

typedef struct named {
    const char *name;
    size_t file; /* files[] index */
} named;

static int by_named(const void *a, const void *b)
{
    const named *x = a, *y = b;
    int k = strcmp(x->name, y->name);
    return k ? k : x->file < y->file ? -1 : x->file > y->file;
}

/* The index's entries against the shards' headers: every entry's tensor in the shard it names
 * (shard k of the index is files[first_shard + k]), every shard tensor listed. */
static void check_index(insp *c, const dt_st_index *ix, size_t first_shard)
{
    enum { SHOWN = 20 };
    dt_inspect *r = c->r;
    const char *ixpath = r->files[0].path;
    named *have = malloc((r->ntensors ? r->ntensors : 1) * sizeof *have);
    unsigned char *listed = calloc(r->ntensors ? r->ntensors : 1, 1);
    if (!have || !listed) {
        free(have);
        free(listed);
        no_memory(c, ixpath);
        return;
    }
    for (size_t i = 0; i < r->ntensors; i++)
        have[i] = (named){r->tensors[i].name, r->tensors[i].file};
    qsort(have, r->ntensors, sizeof *have, by_named);
    size_t missing = 0, unlisted = 0;
    for (size_t e = 0; e < ix->nentries && !c->oom; e++) {
        const dt_st_index_entry *en = &ix->entries[e];
        size_t fi = first_shard + en->shard;
        if (fi >= r->nfiles || !r->files[fi].ok)
            continue; /* the shard's own problem is reported */
        named key = {en->name, fi};
        named *hit = bsearch(&key, have, r->ntensors, sizeof *have, by_named);
        if (hit) {
            listed[hit - have] = 1;
            continue;
        }
        if (++missing > SHOWN)
            continue;
        size_t lo = 0, hi = r->ntensors; /* the first tensor of that name, in another shard? */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (strcmp(have[mid].name, en->name) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < r->ntensors && strcmp(have[lo].name, en->name) == 0)
            problem(c, 0, DTCAST_ERR_BAD_FILE, ixpath,
                    "weight_map puts tensor '%s' in %s, but it is in %s", en->name,
                    ix->shards[en->shard], r->files[have[lo].file].path);
        else
            problem(c, 0, DTCAST_ERR_BAD_FILE, ixpath,
                    "weight_map puts tensor '%s' in %s, which has no such tensor", en->name,
                    ix->shards[en->shard]);
    }
    for (size_t k = 0; k < r->ntensors && !c->oom; k++)
        if (!listed[k] && r->files[have[k].file].ok && ++unlisted <= SHOWN)
            problem(c, 0, DTCAST_ERR_BAD_FILE, r->files[have[k].file].path,
                    "tensor '%s' is not in the index's weight_map", have[k].name);
    if (missing > SHOWN)
        problem(c, 0, DTCAST_ERR_BAD_FILE, ixpath,
                "... and %zu more weight_map entries not found in their shards", missing - SHOWN);
    if (unlisted > SHOWN)
        problem(c, 0, DTCAST_ERR_BAD_FILE, ixpath,
                "... and %zu more shard tensors not in the weight_map", unlisted - SHOWN);
    free(have);
    free(listed);
}

static uint64_t size_of(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : UINT64_MAX;
}

/* File fi is read: its bytes count as done. Returns 1 when the callback asks to stop (the
 * inspection ends with a "cancelled" error). */
static int advance(insp *c, size_t fi)
{
    uint64_t size = c->r->files[fi].size;
    dt_progress_add(&c->progress, size == UINT64_MAX ? 0 : size);
    if (!dt_progress_cancelled(&c->progress) || c->cancelled)
        return c->cancelled;
    c->cancelled = 1;
    problem(c, 0, DTCAST_ERR_IO, NULL, "%s: cancelled", c->r->path);
    return 1;
}

/* Shard headers dt_ckpt_open read, into files[fi] and the tensors (names copied). */
static void take_header(insp *c, size_t fi, const dt_st_header *h)
{
    dt_insp_file *f = &c->r->files[fi];
    f->data_start = h->data_start;
    f->has_meta = h->has_meta;
    if (h->nmeta && !(f->meta = calloc(h->nmeta, sizeof *f->meta))) {
        no_memory(c, f->path);
        return;
    }
    for (size_t k = 0; k < h->nmeta; k++) {
        f->meta[k].key = strdup(h->meta[k].key);
        f->meta[k].value = strdup(h->meta[k].value);
        f->nmeta++;
        if (!f->meta[k].key || !f->meta[k].value) {
            no_memory(c, f->path);
            return;
        }
    }
    for (size_t i = 0; i < h->ntensors && !c->oom; i++) {
        const dt_st_tensor *e = &h->tensors[i];
        dt_insp_tensor *t = add_tensor(c, fi);
        if (!t)
            return;
        if (!(t->name = strdup(e->name))) {
            no_memory(c, c->r->files[fi].path);
            return;
        }
        t->type = e->type;
        set_shape(t, e->ndim, e->dims, e->count);
        t->begin = e->begin;
        t->end = e->end;
        t->bytes = e->end - e->begin;
        t->offset = h->data_start + e->begin;
    }
    c->r->files[fi].ok = !c->oom;
}

/* An index or a folder. dt_ckpt_open finds the index and the shards and checks every header;
 * it stops at the first problem, so after one each shard is read again on its own (the same
 * reader, so the same message) to report every shard's problem and list the others. */
static void read_checkpoint(insp *c, const char *path)
{
    dt_inspect *r = c->r;
    dt_ckpt ck;
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st = dt_ckpt_open(&ck, path, 0, &err);
    if (st == NOMEM) {
        no_memory(c, path);
        dt_ckpt_close(&ck);
        return;
    }
    if (ck.index_name) {
        char *ixpath = dt_path_join(ck.dir, ck.index_name);
        size_t fi = ixpath ? add_file(c, ixpath, DT_FILE_SAFETENSORS_INDEX) : (size_t)-1;
        if (!ixpath)
            no_memory(c, path);
        free(ixpath);
        if (fi != (size_t)-1) {
            r->files[fi].size = size_of(r->files[fi].path);
            r->files[fi].ok = ck.has_index;
        }
        if (ck.has_index) {
            r->has_index = 1;
            r->index_entries = ck.ix.nentries;
            r->has_total_size = ck.ix.has_total_size;
            r->total_size = ck.ix.total_size;
        }
    }
    uint64_t total = r->nfiles && r->files[0].size != UINT64_MAX ? r->files[0].size : 0;
    for (size_t i = 0; i < ck.nshards; i++) {
        uint64_t size = st == DTCAST_OK ? ck.shards[i].file.size : size_of(ck.shards[i].path);
        total += size == UINT64_MAX ? 0 : size;
    }
    c->progress.total = total;
    if (r->nfiles && advance(c, 0)) {
        dt_ckpt_close(&ck);
        return;
    }
    size_t first_shard = r->nfiles, before = r->nerrors;
    for (size_t i = 0; i < ck.nshards && !c->oom && !c->cancelled; i++) {
        const dt_ckpt_shard *s = &ck.shards[i];
        size_t fi = add_file(c, s->path, DT_FILE_SAFETENSORS);
        if (fi == (size_t)-1)
            break;
        if (st == DTCAST_OK) {
            r->files[fi].size = s->file.size;
            take_header(c, fi, &s->h);
            advance(c, fi);
            continue;
        }
        source src;
        dt_io_error e = DT_IO_ERROR_INIT;
        dt_st_header h;
        dtcast_status os = source_open(&src, r->files[fi].path, &e);
        if (os == DTCAST_OK) {
            r->files[fi].size = src.size;
            read_safetensors(c, fi, &src, &h);
            dt_st_header_free(&h);
        } else if (ck.has_index) {
            problem(c, 0, os, r->files[fi].path, "%s (a shard the index %s names)", e.message,
                    r->files[0].path);
        } else {
            problem(c, 0, os, r->files[fi].path, "%s", e.message);
        }
        source_close(&src);
        advance(c, fi);
    }
    if (c->cancelled) {
        dt_ckpt_close(&ck);
        return;
    }
    /* What dt_ckpt_open refused beyond the shards' own problems (the index, the folder, two
     * tensors of one name, too many axes). */
    if (st != DTCAST_OK && r->nerrors == before) {
        problem(c, 0, st, err.file[0] ? err.file : path, "%s", err.message);
        c->ckpt_refused = 1;
    }
    for (size_t i = 0; i < ck.nwarnings; i++)
        problem(c, 1, DTCAST_OK, NULL, "%s", ck.warnings[i]);
    if (ck.has_index && !c->oom)
        check_index(c, &ck.ix, first_shard);
    if (ck.has_index && ck.ix.has_total_size && !c->oom) {
        uint64_t sum = 0;
        int all_ok = 1;
        for (size_t i = 0; i < r->ntensors; i++)
            sum += r->tensors[i].bytes;
        for (size_t i = 0; i < r->nfiles; i++)
            all_ok &= r->files[i].ok;
        if (all_ok && sum != ck.ix.total_size)
            problem(c, 1, DTCAST_OK, r->files[0].path,
                    "metadata.total_size is %llu, but the shards' tensors hold %llu bytes",
                    (unsigned long long)ck.ix.total_size, (unsigned long long)sum);
    }
    dt_ckpt_close(&ck);
}

/* ---- after reading: names, layouts, totals ------------------------------------------------- */

static int by_total(const void *a, const void *b)
{
    const dt_insp_total *x = a, *y = b;
    return (x->type > y->type) - (x->type < y->type);
}

static void summarise(insp *c)
{
    dt_inspect *r = c->r;
    for (size_t i = 0; i < r->ntensors && !c->oom; i++) {
        const dt_insp_tensor *t = &r->tensors[i];
        size_t k = 0;
        while (k < r->ntotals && r->totals[k].type != t->type)
            k++;
        if (k == r->ntotals) {
            dt_insp_total *grown = realloc(r->totals, (r->ntotals + 1) * sizeof *grown);
            if (!grown) {
                no_memory(c, r->path);
                return;
            }
            r->totals = grown;
            r->totals[r->ntotals++] = (dt_insp_total){t->type, 0, 0, 0};
        }
        r->totals[k].tensors++;
        r->totals[k].elements += t->count;
        r->totals[k].bytes += t->bytes;
        r->elements += t->count;
        r->bytes += t->bytes;
    }
    if (r->ntotals > 1)
        qsort(r->totals, r->ntotals, sizeof *r->totals, by_total);
}

/* Names must be distinct over the files; then the quantized layouts (a layout that does not fit
 * is a warning: the file reads, dequantize would refuse it). */
/* Tensor i's first len bytes (dt_qplan_pack_shapes: the small shape tensors). */
static dtcast_status read_tensor(void *ctx, size_t i, void *buf, size_t len, dt_io_error *err)
{
    const dt_inspect *r = ctx;
    const dt_insp_tensor *t = &r->tensors[i];
    if (len > t->bytes)
        return dt_io_fail(err, DTCAST_ERR_BAD_FILE, "tensor '%s' holds %llu bytes, not %zu",
                          t->name, (unsigned long long)t->bytes, len);
    dt_infile f;
    dtcast_status st = dt_infile_open(&f, r->files[t->file].path, err);
    if (st == DTCAST_OK) {
        st = dt_infile_read(&f, t->offset, buf, len, err);
        dt_infile_close(&f);
    }
    return st;
}

static void layouts(insp *c)
{
    dt_inspect *r = c->r;
    if (r->ntensors == 0 || c->oom)
        return;
    named *all = malloc(r->ntensors * sizeof *all);
    dt_qt *qt = calloc(r->ntensors, sizeof *qt);
    if (!all || !qt) {
        free(all);
        free(qt);
        no_memory(c, r->path);
        return;
    }
    for (size_t i = 0; i < r->ntensors; i++)
        all[i] = (named){r->tensors[i].name, r->tensors[i].file};
    qsort(all, r->ntensors, sizeof *all, by_named);
    int dup = 0;
    for (size_t i = 1; i < r->ntensors && !c->oom; i++)
        if (strcmp(all[i - 1].name, all[i].name) == 0 && dup++ < 20 && !c->ckpt_refused)
            problem(c, 0, DTCAST_ERR_BAD_FILE, r->files[all[i].file].path,
                    "tensor '%s' is also in %s", all[i].name, r->files[all[i - 1].file].path);
    free(all);
    if (dup || c->oom) {
        free(qt);
        return;
    }
    for (size_t i = 0; i < r->ntensors; i++) {
        const dt_insp_tensor *t = &r->tensors[i];
        qt[i].name = t->name;
        qt[i].type = t->type;
        qt[i].ndim = t->ndim;
        memcpy(qt[i].dims, t->dims, sizeof qt[i].dims);
    }
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st = dt_qplan_make(qt, r->ntensors, &r->plan, &err);
    /* pack-quantized: the last dimension from X.weight_shape's data */
    if (st == DTCAST_OK && (st = dt_qplan_pack_shapes(&r->plan, qt, read_tensor, r, &err)) !=
                               DTCAST_OK)
        dt_qplan_free(&r->plan);
    free(qt);
    if (st != DTCAST_OK) {
        problem(c, st != NOMEM, st, r->path, "quantized layouts: %s (dtcast dequantize refuses "
                                             "this checkpoint)",
                err.message);
        return;
    }
    r->has_plan = 1;
    for (size_t i = 0; i < r->ntensors; i++) {
        dt_insp_tensor *t = &r->tensors[i];
        if (r->plan.role[i] == DT_QR_PLAIN)
            continue;
        size_t g = r->plan.group[i];
        const dt_qgroup *q = &r->plan.groups[g];
        t->group = g;
        t->role = i == q->codes    ? DT_INSP_CODES
                  : i == q->scales ? DT_INSP_SCALES
                  : i == q->global ? DT_INSP_GLOBAL
                  : i == q->extra[2] ? DT_INSP_SHAPE
                  : i == q->extra[3] || i == q->marker ? DT_INSP_HINT
                  : i == q->post_scale ? DT_INSP_GLOBAL
                  : i == q->zero_point ? DT_INSP_ZERO_POINT
                  : i == q->g_idx ? DT_INSP_G_IDX
                                     : DT_INSP_INPUT_SCALE;
    }
}

/* ---- entry points -------------------------------------------------------------------------- */

/* A GGUF value as metadata text (NULL: out of memory): a string as it is, a scalar in decimal,
 * an array as "[N TYPE: first items ...]". */
static char *gguf_text(const dt_gguf *g, const uint8_t *buf, const dt_gguf_kv *kv)
{
    if (kv->type == DT_GGUF_STRING) {
        char *t = malloc((size_t)kv->count + 1);
        if (t) {
            memcpy(t, buf + kv->value_at, (size_t)kv->count);
            t[kv->count] = '\0';
        }
        return t;
    }
    char text[400];
    if (kv->type != DT_GGUF_ARRAY) {
        dt_gguf_scalar_text(text, sizeof text, kv->type, kv->v.u);
        return strdup(text);
    }
    size_t n = (size_t)snprintf(text, sizeof text, "[%llu %s",
                                (unsigned long long)kv->count,
                                dt_gguf_value_type_name(kv->elem_type));
    uint64_t at = kv->value_at;
    for (uint64_t e = 0; e < kv->count && e < 8 && n < sizeof text - 80; e++) {
        n += (size_t)snprintf(text + n, sizeof text - n, e ? ", " : ": ");
        if (kv->elem_type == DT_GGUF_STRING) {
            uint64_t len = 0;
            for (int k = 0; k < 8; k++)
                len |= (uint64_t)buf[at + (uint64_t)k] << (g->big_endian ? 8 * (7 - k) : 8 * k);
            const size_t shown = len < 24 ? (size_t)len : 24;
            n += (size_t)snprintf(text + n, sizeof text - n, "'%.*s%s'", (int)shown,
                                  (const char *)buf + at + 8, len > 24 ? "..." : "");
            at += 8 + len;
        } else {
            dt_gguf_scalar_text(text + n, sizeof text - n, kv->elem_type,
                        dt_gguf_array_u64(g, buf, kv, e));
            n += strlen(text + n);
        }
    }
    snprintf(text + n, sizeof text - n, "%s]", kv->count > 8 ? ", ..." : "");
    return strdup(text);
}

static void read_gguf(insp *c, size_t fi, source *s)
{
    dt_insp_file *f = &c->r->files[fi];
    f->gguf = 1;
    const uint8_t *buf;
    size_t len;
    dt_io_error err = DT_IO_ERROR_INIT;
    dt_gguf g;
    dtcast_status st = source_all(s, &buf, &len, &err);
    if (st == DTCAST_OK)
        st = dt_gguf_parse(buf, len, f->path, &g, &err);
    if (st != DTCAST_OK) {
        problem(c, 0, st, f->path, "%s", err.message);
        return;
    }
    f->data_start = g.data_start;
    f->has_meta = 1;
    f->meta = calloc(g.nkv ? (size_t)g.nkv : 1, sizeof *f->meta);
    if (!f->meta)
        c->oom = 1;
    for (uint64_t i = 0; i < g.nkv && !c->oom; i++) {
        dt_st_meta *m = &f->meta[f->nmeta];
        m->key = malloc((size_t)g.kv[i].key_len + 1);
        m->value = gguf_text(&g, buf, &g.kv[i]);
        if (m->key) {
            memcpy(m->key, g.kv[i].key, (size_t)g.kv[i].key_len);
            m->key[g.kv[i].key_len] = '\0';
        }
        f->nmeta++;
        if (!m->key || !m->value)
            c->oom = 1;
    }
    for (uint64_t i = 0; i < g.ntensors && !c->oom; i++) {
        const dt_gguf_tensor *e = &g.tensors[i];
        const dt_ggml_traits *gt = dt_ggml_traits_of(e->type);
        dt_insp_tensor *t = add_tensor(c, fi);
        if (!t)
            break;
        int64_t dims[DT_MAX_DIMS];
        for (int d = 0; d < e->n_dims; d++) /* numpy's order: ne reversed */
            dims[d] = (int64_t)e->ne[e->n_dims - 1 - d];
        set_shape(t, e->n_dims, dims, e->count);
        t->name = malloc((size_t)e->name_len + 1);
        char storage[64];
        snprintf(storage, sizeof storage, "ggml %s%s", gt->name,
                 gt->block > 1 ? " blocks" : "");
        t->storage = strdup(storage);
        if (!t->name || !t->storage) {
            c->oom = 1;
            break;
        }
        memcpy(t->name, e->name, (size_t)e->name_len);
        t->name[e->name_len] = '\0';
        t->type = gt->plain;
        t->bytes = e->bytes;
        t->offset = e->at;
        t->begin = e->offset;
        t->end = e->offset + e->bytes;
    }
    dt_gguf_free(&g);
    if (!c->oom)
        f->ok = 1;
}

static void read_single(insp *c, dt_insp_kind kind, size_t fi, source *s)
{
    dt_st_header h;
    switch (kind) {
    case DT_INSP_NPY: read_npy(c, fi, s); break;
    case DT_INSP_PB: read_pb(c, fi, s); break;
    case DT_INSP_ONNX: read_onnx(c, fi, s); break;
    case DT_INSP_GGUF: read_gguf(c, fi, s); break;
    default:
        read_safetensors(c, fi, s, &h);
        dt_st_header_free(&h);
        break;
    }
}

static dtcast_status finish(insp *c)
{
    if (!c->oom && !c->cancelled && c->r->kind != DT_INSP_GGUF) /* GGUF: ggml's own types */
        layouts(c);
    if (!c->oom && !c->cancelled)
        summarise(c);
    if (c->oom && c->first == DTCAST_OK) {
        c->first = NOMEM;
        dt_io_fail(c->err, NOMEM, "%s: out of memory", c->r->path ? c->r->path : "inspect");
    }
    return c->first;
}

static void start(insp *c, dt_inspect *r, dt_progress_fn progress, void *progress_ctx,
                  dt_io_error *err)
{
    memset(r, 0, sizeof *r);
    memset(c, 0, sizeof *c);
    dt_progress_init(&c->progress, 0, progress, progress_ctx);
    c->r = r;
    c->err = err;
    c->first = DTCAST_OK;
    c->oom = 0;
    if (err)
        err->message[0] = '\0';
}

dtcast_status dt_inspect_path(const char *path, dt_inspect *r, dt_progress_fn progress,
                              void *progress_ctx, dt_io_error *err)
{
    insp c;
    start(&c, r, progress, progress_ctx, err);
    if (!(r->path = strdup(path)))
        return dt_io_fail(err, NOMEM, "out of memory");
    struct stat sb;
    if (stat(path, &sb) != 0) {
        r->kind = DT_INSP_UNKNOWN;
        problem(&c, 0, DTCAST_ERR_IO, NULL, "cannot open '%s': %s", path, strerror(errno));
        return finish(&c);
    }
    if (S_ISDIR(sb.st_mode)) {
        r->kind = DT_INSP_FOLDER;
        read_checkpoint(&c, path);
        return finish(&c);
    }
    dt_file_kind kind = dt_file_kind_of(path);
    const size_t plen = strlen(path);
    if (plen >= 5 && strcasecmp(path + plen - 5, ".gguf") == 0) {
        r->kind = DT_INSP_GGUF;
    } else {
        switch (kind) {
        case DT_FILE_NPY: r->kind = DT_INSP_NPY; break;
        case DT_FILE_PB: r->kind = DT_INSP_PB; break;
        case DT_FILE_ONNX_MODEL: r->kind = DT_INSP_ONNX; break;
        case DT_FILE_SAFETENSORS: r->kind = DT_INSP_SAFETENSORS; break;
        case DT_FILE_SAFETENSORS_INDEX: r->kind = DT_INSP_INDEX; break;
        default: {
            /* what the file probably is, when its name says (not raw data: inspect reads none) */
            char why[512];
            const char *what =
                kind == DT_FILE_UNKNOWN ? dt_file_kind_refusal(path, why, sizeof why) : NULL;
            r->kind = DT_INSP_UNKNOWN;
            if (what && !strstr(what, "--format raw"))
                problem(&c, 0, DTCAST_ERR_UNSUPPORTED, NULL, "%s", what);
            else
                problem(&c, 0, DTCAST_ERR_UNSUPPORTED, NULL,
                        "'%s': not a file inspect reads (give a .npy, .pb, .onnx, .safetensors, "
                        "*.safetensors.index.json, .gguf or a checkpoint folder)",
                        path);
            return finish(&c);
        }
        }
    }
    if (r->kind == DT_INSP_INDEX) {
        read_checkpoint(&c, path);
        return finish(&c);
    }
    size_t fi = add_file(&c, path, kind);
    if (fi == (size_t)-1)
        return finish(&c);
    source s;
    dt_io_error e = DT_IO_ERROR_INIT;
    dtcast_status os = source_open(&s, path, &e);
    if (os == DTCAST_OK) {
        r->files[fi].size = s.size;
        c.progress.total = s.size;
        read_single(&c, r->kind, fi, &s);
    } else {
        problem(&c, 0, os, path, "%s", e.message);
    }
    source_close(&s);
    advance(&c, fi);
    return finish(&c);
}

dtcast_status dt_inspect_memory(const uint8_t *buf, size_t len, dt_insp_kind kind,
                                const char *name, dt_inspect *r, dt_io_error *err)
{
    insp c;
    start(&c, r, NULL, NULL, err);
    if (!(r->path = strdup(name)))
        return dt_io_fail(err, NOMEM, "out of memory");
    if (kind != DT_INSP_NPY && kind != DT_INSP_PB && kind != DT_INSP_SAFETENSORS &&
        kind != DT_INSP_ONNX && kind != DT_INSP_GGUF)
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                          "inspect: only a .npy, .pb, .safetensors, .onnx or .gguf is read from "
                          "memory");
    r->kind = kind;
    size_t fi = add_file(&c, name, kind == DT_INSP_NPY    ? DT_FILE_NPY
                                   : kind == DT_INSP_PB   ? DT_FILE_PB
                                   : kind == DT_INSP_ONNX ? DT_FILE_ONNX_MODEL
                                   : kind == DT_INSP_GGUF ? DT_FILE_UNKNOWN
                                                          : DT_FILE_SAFETENSORS);
    if (fi == (size_t)-1)
        return finish(&c);
    source s;
    memset(&s, 0, sizeof s);
    s.path = r->files[fi].path;
    s.mem = buf ? buf : (const uint8_t *)"";
    s.mem_len = len;
    s.size = len;
    r->files[fi].size = len;
    read_single(&c, kind, fi, &s);
    return finish(&c);
}

void dt_inspect_free(dt_inspect *r)
{
    for (size_t i = 0; i < r->nfiles; i++) {
        dt_insp_file *f = &r->files[i];
        for (size_t k = 0; k < f->nmeta; k++) {
            free(f->meta[k].key);
            free(f->meta[k].value);
        }
        free(f->meta);
        free(f->path);
    }
    for (size_t i = 0; i < r->ntensors; i++) {
        free(r->tensors[i].name);
        free(r->tensors[i].storage);
    }
    for (size_t i = 0; i < r->nproblems; i++) {
        free(r->problems[i].file);
        free(r->problems[i].message);
    }
    if (r->has_plan)
        dt_qplan_free(&r->plan);
    free(r->files);
    free(r->tensors);
    free(r->totals);
    free(r->problems);
    free(r->path);
    memset(r, 0, sizeof *r);
}

/* ---- JSON ---------------------------------------------------------------------------------- */

/* A JSON string of any bytes: valid UTF-8 as it is (control characters, '"' and '\\'
 * escaped), each byte that breaks UTF-8 as \udcXX (Python's surrogateescape: json.loads and
 * os.fsencode give the bytes back). */
static void put_text(dt_json_buf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *u = (const uint8_t *)s;
    size_t len = strlen(s), i = 0;
    dt_json_put(b, "\"", 1);
    while (i < len) {
        size_t valid = dt_json_utf8_check(u + i, len - i);
        for (size_t k = i; k < i + valid; k++) {
            uint8_t ch = u[k];
            if (ch == '"' || ch == '\\') {
                char e[2] = {'\\', (char)ch};
                dt_json_put(b, e, 2);
            } else if (ch < 0x20) {
                char e[6] = {'\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15]};
                dt_json_put(b, e, 6);
            } else {
                dt_json_put(b, &u[k], 1);
            }
        }
        i += valid;
        if (i < len) {
            char e[6] = {'\\', 'u', 'd', 'c', hex[u[i] >> 4], hex[u[i] & 15]};
            dt_json_put(b, e, 6);
            i++;
        }
    }
    dt_json_put(b, "\"", 1);
}

static void put_key(dt_json_buf *b, const char *key)
{
    put_text(b, key);
    dt_json_puts(b, ": ");
}

static void put_u64_or_null(dt_json_buf *b, uint64_t v)
{
    if (v == UINT64_MAX)
        dt_json_puts(b, "null");
    else
        dt_json_put_u64(b, v);
}

static void put_i64(dt_json_buf *b, int64_t v)
{
    char s[32];
    snprintf(s, sizeof s, "%lld", (long long)v);
    dt_json_puts(b, s);
}

static void put_dims(dt_json_buf *b, int ndim, const int64_t *dims)
{
    dt_json_puts(b, "[");
    for (int i = 0; i < ndim; i++) {
        if (i)
            dt_json_puts(b, ", ");
        put_i64(b, dims[i]);
    }
    dt_json_puts(b, "]");
}

static void put_type(dt_json_buf *b, dtcast_type type)
{
    const char *name = dtcast_type_name(type);
    if (name)
        put_text(b, name);
    else
        dt_json_puts(b, "null");
}

static void put_tensor_name(dt_json_buf *b, const dt_inspect *r, size_t i)
{
    if (i == DT_QT_NONE)
        dt_json_puts(b, "null");
    else
        put_text(b, r->tensors[i].name);
}

static void put_file(dt_json_buf *b, const dt_insp_file *f)
{
    static const char *const kinds[] = {"raw", "npy", "pb", "safetensors", "index", "onnx",
                                        "unknown"};
    dt_json_puts(b, "{");
    put_key(b, "path");
    put_text(b, f->path);
    dt_json_puts(b, ", ");
    put_key(b, "kind");
    put_text(b, f->gguf ? "gguf" : (unsigned)f->kind < 7 ? kinds[f->kind] : "unknown");
    dt_json_puts(b, ", ");
    put_key(b, "ok");
    dt_json_puts(b, f->ok ? "true" : "false");
    dt_json_puts(b, ", ");
    put_key(b, "size");
    put_u64_or_null(b, f->size);
    dt_json_puts(b, ", ");
    put_key(b, "data_start");
    dt_json_put_u64(b, f->data_start);
    dt_json_puts(b, ", ");
    put_key(b, "tensors");
    dt_json_put_u64(b, f->ntensors);
    dt_json_puts(b, ", ");
    put_key(b, "metadata");
    if (!f->has_meta) {
        dt_json_puts(b, "null");
    } else {
        dt_json_puts(b, "{");
        for (size_t k = 0; k < f->nmeta; k++) {
            if (k)
                dt_json_puts(b, ", ");
            put_key(b, f->meta[k].key);
            put_text(b, f->meta[k].value);
        }
        dt_json_puts(b, "}");
    }
    dt_json_puts(b, "}");
}

static void put_tensor(dt_json_buf *b, const dt_inspect *r, size_t i)
{
    const dt_insp_tensor *t = &r->tensors[i];
    const char *st = dt_st_dtype_name(t->type);
    dt_json_puts(b, "{");
    put_key(b, "name");
    put_text(b, t->name);
    dt_json_puts(b, ", ");
    put_key(b, "dtype");
    put_type(b, t->type);
    dt_json_puts(b, ", ");
    put_key(b, "safetensors_dtype");
    if (st)
        put_text(b, st);
    else
        dt_json_puts(b, "null");
    dt_json_puts(b, ", ");
    put_key(b, "shape");
    put_dims(b, t->ndim, t->dims);
    dt_json_puts(b, ", ");
    put_key(b, "elements");
    dt_json_put_u64(b, t->count);
    dt_json_puts(b, ", ");
    put_key(b, "bytes");
    dt_json_put_u64(b, t->bytes);
    dt_json_puts(b, ", ");
    put_key(b, "offset");
    put_u64_or_null(b, t->offset);
    dt_json_puts(b, ", ");
    put_key(b, "file");
    put_text(b, r->files[t->file].path);
    if (t->storage) {
        dt_json_puts(b, ", ");
        put_key(b, "storage");
        put_text(b, t->storage);
    } else {
        dt_json_puts(b, ", ");
        put_key(b, "data_offsets");
        dt_json_puts(b, "[");
        dt_json_put_u64(b, t->begin);
        dt_json_puts(b, ", ");
        dt_json_put_u64(b, t->end);
        dt_json_puts(b, "]");
    }
    dt_json_puts(b, ", ");
    put_key(b, "quant");
    if (t->group == DT_QT_NONE) {
        dt_json_puts(b, "null");
    } else {
        const dt_qgroup *g = &r->plan.groups[t->group];
        dt_json_puts(b, "{");
        put_key(b, "tensor");
        put_text(b, g->name);
        dt_json_puts(b, ", ");
        put_key(b, "layout");
        put_text(b, dt_qgroup_name(g));
        dt_json_puts(b, ", ");
        put_key(b, "role");
        put_text(b, dt_insp_role_name(t->role));
        dt_json_puts(b, "}");
    }
    dt_json_puts(b, "}");
}

/* granularity and block of a group: "tensor" (one scale), "channel" (one per row) or "block"
 * (rows x cols elements per scale; rows 1 unless the layout tiles rows). */
const char *dt_insp_granularity(const dt_qgroup *g, int64_t block[2])
{
    block[0] = g->block_rows > 0 ? g->block_rows : 1;
    block[1] = g->block;
    if (g->per_tensor)
        return "tensor";
    if (g->block == 0)
        return "channel";
    return "block";
}

static void put_group(dt_json_buf *b, const dt_inspect *r, const dt_qgroup *g)
{
    int64_t block[2];
    const char *gran = dt_insp_granularity(g, block);
    dt_json_puts(b, "{");
    put_key(b, "tensor");
    put_text(b, g->name);
    dt_json_puts(b, ", ");
    put_key(b, "layout");
    put_text(b, dt_qgroup_name(g));
    dt_json_puts(b, ", ");
    put_key(b, "element");
    put_type(b, dt_qgroup_codes_type(g));
    dt_json_puts(b, ", ");
    put_key(b, "shape");
    put_dims(b, g->ndim, g->dims);
    dt_json_puts(b, ", ");
    put_key(b, "granularity");
    put_text(b, gran);
    dt_json_puts(b, ", ");
    put_key(b, "block");
    if (strcmp(gran, "block") == 0)
        put_dims(b, 2, block);
    else
        dt_json_puts(b, "null");
    dt_json_puts(b, ", ");
    put_key(b, "codes");
    put_tensor_name(b, r, g->codes);
    dt_json_puts(b, ", ");
    put_key(b, "scales");
    put_tensor_name(b, r, g->scales);
    dt_json_puts(b, ", ");
    put_key(b, "global_scale");
    put_tensor_name(b, r, g->global);
    dt_json_puts(b, ", ");
    put_key(b, "input_scales");
    dt_json_puts(b, "[");
    int n = 0;
    for (int k = 0; k < 2; k++)
        if (g->extra[k] != DT_QT_NONE) {
            if (n++)
                dt_json_puts(b, ", ");
            put_tensor_name(b, r, g->extra[k]);
        }
    dt_json_puts(b, "], ");
    put_key(b, "shape_tensor");
    put_tensor_name(b, r, g->extra[2]);
    dt_json_puts(b, "}");
}

dtcast_status dt_inspect_json(const dt_inspect *r, char **text, size_t *len, dt_io_error *err)
{
    dt_json_buf b = {0};
    *text = NULL;
    *len = 0;
    dt_json_puts(&b, "{\n  ");
    put_key(&b, "path");
    put_text(&b, r->path ? r->path : "");
    dt_json_puts(&b, ",\n  ");
    put_key(&b, "kind");
    put_text(&b, dt_insp_kind_name(r->kind));
    dt_json_puts(&b, ",\n  ");
    if (r->kind == DT_INSP_ONNX && r->opset >= 0) {
        put_key(&b, "opset");
        char num[32];
        snprintf(num, sizeof num, "%lld", (long long)r->opset);
        dt_json_puts(&b, num);
        dt_json_puts(&b, ",\n  ");
    }
    put_key(&b, "valid");
    dt_json_puts(&b, r->nerrors ? "false" : "true");
    dt_json_puts(&b, ",\n  ");
    put_key(&b, "files");
    dt_json_puts(&b, "[");
    for (size_t i = 0; i < r->nfiles; i++) {
        dt_json_puts(&b, i ? ",\n    " : "\n    ");
        put_file(&b, &r->files[i]);
    }
    dt_json_puts(&b, r->nfiles ? "\n  ],\n  " : "],\n  ");
    put_key(&b, "index");
    if (!r->has_index) {
        dt_json_puts(&b, "null");
    } else {
        dt_json_puts(&b, "{");
        put_key(&b, "path");
        put_text(&b, r->files[0].path);
        dt_json_puts(&b, ", ");
        put_key(&b, "entries");
        dt_json_put_u64(&b, r->index_entries);
        dt_json_puts(&b, ", ");
        put_key(&b, "total_size");
        put_u64_or_null(&b, r->has_total_size ? r->total_size : UINT64_MAX);
        dt_json_puts(&b, "}");
    }
    dt_json_puts(&b, ",\n  ");
    put_key(&b, "tensors");
    dt_json_puts(&b, "[");
    for (size_t i = 0; i < r->ntensors; i++) {
        dt_json_puts(&b, i ? ",\n    " : "\n    ");
        put_tensor(&b, r, i);
    }
    dt_json_puts(&b, r->ntensors ? "\n  ],\n  " : "],\n  ");
    put_key(&b, "quantized");
    dt_json_puts(&b, "[");
    size_t ngroups = r->has_plan ? r->plan.ngroups : 0;
    for (size_t i = 0; i < ngroups; i++) {
        dt_json_puts(&b, i ? ",\n    " : "\n    ");
        put_group(&b, r, &r->plan.groups[i]);
    }
    dt_json_puts(&b, ngroups ? "\n  ],\n  " : "],\n  ");
    put_key(&b, "totals");
    dt_json_puts(&b, "[");
    for (size_t i = 0; i < r->ntotals; i++) {
        const dt_insp_total *t = &r->totals[i];
        dt_json_puts(&b, i ? ",\n    {" : "\n    {");
        put_key(&b, "dtype");
        put_type(&b, t->type);
        dt_json_puts(&b, ", ");
        put_key(&b, "tensors");
        dt_json_put_u64(&b, t->tensors);
        dt_json_puts(&b, ", ");
        put_key(&b, "elements");
        dt_json_put_u64(&b, t->elements);
        dt_json_puts(&b, ", ");
        put_key(&b, "bytes");
        dt_json_put_u64(&b, t->bytes);
        dt_json_puts(&b, "}");
    }
    dt_json_puts(&b, r->ntotals ? "\n  ],\n  " : "],\n  ");
    put_key(&b, "elements");
    dt_json_put_u64(&b, r->elements);
    dt_json_puts(&b, ",\n  ");
    put_key(&b, "bytes");
    dt_json_put_u64(&b, r->bytes);
    dt_json_puts(&b, ",\n  ");
    put_key(&b, "problems");
    dt_json_puts(&b, "[");
    for (size_t i = 0; i < r->nproblems; i++) {
        const dt_insp_problem *p = &r->problems[i];
        dt_json_puts(&b, i ? ",\n    {" : "\n    {");
        put_key(&b, "severity");
        put_text(&b, p->warning ? "warning" : "error");
        dt_json_puts(&b, ", ");
        put_key(&b, "file");
        if (p->file)
            put_text(&b, p->file);
        else
            dt_json_puts(&b, "null");
        dt_json_puts(&b, ", ");
        put_key(&b, "message");
        put_text(&b, p->message);
        dt_json_puts(&b, "}");
    }
    dt_json_puts(&b, r->nproblems ? "\n  ]\n}\n" : "]\n}\n");
    dt_json_put(&b, "", 1); /* the terminator, not counted */
    if (b.oom) {
        free(b.data);
        return dt_io_fail(err, NOMEM, "out of memory for the JSON of %zu tensors", r->ntensors);
    }
    *text = b.data;
    *len = b.len - 1;
    return DTCAST_OK;
}
