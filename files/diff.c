/* dtcast diff (diff.h): two tensor files compared tensor by tensor, streamed. Each side is a list
 * of tensors sorted by name: the one array of a .npy, or the tensors of a checkpoint (files/
 * checkpoint.h) with its scaled quantized groups (files/quant_layout.h) as one tensor each. A
 * pair of tensors is cut into blocks (whole rows, and whole tiles of block FP8, when a side is
 * dequantized); the workers take every T-th block, decode both sides to float64 and keep running
 * figures, merged in worker order at the end (so the result does not depend on timing). */
#include "files/diff.h"

#include "files/checkpoint.h"
#include "files/file.h"
#include "files/gguf_job.h"
#include "files/json.h"
#include "files/layout.h"
#include "files/npy.h"
#include "files/onnx_model.h"
#include "files/quant_layout.h"
#include "files/safetensors.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#define BLOCK_VALUES ((uint64_t)1 << 17) /* elements per block, about: 2 MiB of complex128 */
#define MAX_WORKERS 4                    /* their buffers stay under 64 MiB */

/* ---- the sides -------------------------------------------------------------------------------- */

typedef struct src_tensor {
    const char *name;
    dtcast_type type;       /* stored (a quantized tensor: its codes' element type) */
    int ndim;
    int64_t dims[DT_MAX_DIMS];
    uint64_t count;
    int fortran;
    /* plain */
    dt_infile *file;
    uint64_t at;
    dt_layout layout;
    const dt_ckpt *ckpt;    /* a checkpoint's tensor: read from its shard's mapping */
    size_t shard;
    /* quantized */
    const dt_qgroup *g;
    dt_infile *cfile, *sfile;
    uint64_t cat, sat, scount;
    float post;             /* absmax-comfyui: the second-level scale (post_scale) */
    dt_infile *zfile;       /* pack-quantized: the zero points, or NULL */
    uint64_t zat, zbytes, wpr;
    dtcast_type stype;
    float global;
    const char *uncomparable; /* why its values are not compared (an ONNX typed field), or NULL */
    int ggml;               /* a GGUF tensor of a ggml block type: its code (>= 2; dequantized
                             * to float32 as ggml's to_float), else 0 */
    char ggml_name[24];     /* "ggml Q4_K": its layout as the result names it */
} src_tensor;

typedef struct src {
    const char *path;
    int npy;
    dt_infile npy_file;
    dt_npy_info npy_info;
    char *npy_name;
    dt_ckpt ckpt;
    int has_ckpt;
    dt_qplan plan;
    int onnx;            /* an ONNX model: its initializers and Constant tensors */
    dt_infile onnx_file;
    dt_infile **ext;     /* its external data files, one per location (each its own
                          * allocation: the tensors point at them) */
    char **ext_loc;
    size_t n_ext, cap_ext;
    int gguf;            /* a GGUF model (one file or a split set) */
    dt_gguf_set gs;
    char **names;        /* the tensors' names (owned) */
    size_t cap;
    size_t n;
    src_tensor *t; /* sorted by name */
} src;

/* err's message prefixed with "PATH: " or "PATH: tensor 'NAME': " (tensor may be NULL). */
static dtcast_status prefixed(dt_io_error *err, dtcast_status st, const char *path,
                              const char *tensor)
{
    char msg[sizeof err->message];
    snprintf(msg, sizeof msg, "%s", err->message);
    int64_t offset = err->offset;
    if (tensor)
        dt_io_fail(err, st, "%s: tensor '%s': %s", path, tensor, msg);
    else
        dt_io_fail(err, st, "%s: %s", path, msg);
    snprintf(err->file, sizeof err->file, "%s", path);
    snprintf(err->tensor, sizeof err->tensor, "%s", tensor ? tensor : "");
    err->offset = offset;
    return st;
}

static int is_complex(dtcast_type type)
{
    dtcast_info info;
    return dtcast_type_info(type, &info, NULL) == DTCAST_OK && info.kind == DTCAST_KIND_COMPLEX;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    if (n < m)
        return 0;
    for (size_t i = 0; i < m; i++) {
        char c = s[n - m + i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != suffix[i])
            return 0;
    }
    return 1;
}

static int by_name(const void *x, const void *y)
{
    return strcmp(((const src_tensor *)x)->name, ((const src_tensor *)y)->name);
}

static dtcast_status open_npy(src *s, dt_io_error *err)
{
    dtcast_status st = dt_infile_open(&s->npy_file, s->path, err);
    if (st != DTCAST_OK)
        return st;
    if (!s->npy_file.seekable)
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "%s: diff reads files, not pipes",
                          s->path);
    uint8_t first[12];
    size_t got = 0, total = 0;
    st = dt_infile_peek(&s->npy_file, first, sizeof first, &got, err);
    if (st == DTCAST_OK)
        st = dt_npy_header_size(first, got, &total, err);
    if (st != DTCAST_OK)
        return prefixed(err, st, s->path, NULL);
    uint8_t *hdr = malloc(total ? total : 1);
    if (!hdr)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "%s: out of memory", s->path);
    st = dt_infile_read(&s->npy_file, 0, hdr, total, err);
    if (st == DTCAST_OK)
        st = dt_npy_read_header(hdr, total, s->npy_file.size, DTCAST_UNDEFINED, &s->npy_info, err);
    free(hdr);
    if (st != DTCAST_OK)
        return prefixed(err, st, s->path, NULL);
    /* The array's name: the file's stem. */
    const char *base = strrchr(s->path, '/');
    base = base ? base + 1 : s->path;
    size_t len = strlen(base);
    if (ends_with(base, ".npy"))
        len -= 4;
    s->npy_name = malloc(len + 1);
    s->t = calloc(1, sizeof *s->t);
    if (!s->npy_name || !s->t)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "%s: out of memory", s->path);
    memcpy(s->npy_name, base, len);
    s->npy_name[len] = 0;
    s->n = 1;
    src_tensor *t = &s->t[0];
    const dt_npy_info *in = &s->npy_info;
    t->name = s->npy_name;
    t->type = in->type;
    t->ndim = in->ndim;
    memcpy(t->dims, in->dims, sizeof t->dims);
    t->count = in->count;
    t->fortran = in->fortran;
    t->file = &s->npy_file;
    t->at = in->data_offset;
    t->layout = in->layout;
    if (in->strings)
        t->type = DTCAST_STRING;
    return DTCAST_OK;
}


/* dt_qplan_pack_shapes' reader: the checkpoint's mapping */
static dtcast_status read_mapped(void *ctx, size_t i, void *buf, size_t len, dt_io_error *err)
{
    (void)err;
    memcpy(buf, dt_ckpt_data((const dt_ckpt *)ctx, i), len);
    return DTCAST_OK;
}

static dtcast_status open_ckpt(src *s, const dt_diff_options *o, dt_io_error *err)
{
    dt_ckpt *c = &s->ckpt;
    s->has_ckpt = 1;
    dtcast_status st = dt_ckpt_open(c, s->path, 0, err);
    if (st != DTCAST_OK)
        return st;
    if (!o->no_dequantize) {
        st = dt_qplan_make(c->t, c->n, &s->plan, err);
        if (st == DTCAST_OK)
            st = dt_qplan_pack_shapes(&s->plan, c->t, read_mapped, c, err);
        if (st != DTCAST_OK)
            return prefixed(err, st, s->path, NULL);
    }
    s->t = calloc(c->n ? c->n : 1, sizeof *s->t);
    if (!s->t)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "%s: out of memory", s->path);
    for (size_t i = 0; i < c->n; i++) {
        dt_qrole role = s->plan.role ? s->plan.role[i] : DT_QR_PLAIN;
        if (role == DT_QR_PART)
            continue;
        src_tensor *t = &s->t[s->n++];
        dt_infile *f = &c->shards[c->at[i].shard].file;
        if (role == DT_QR_CODES) {
            const dt_qgroup *g = &s->plan.groups[s->plan.group[i]];
            t->name = g->name;
            t->type = g->element;
            t->ndim = g->ndim;
            memcpy(t->dims, g->dims, (size_t)g->ndim * sizeof g->dims[0]);
            t->count = 1;
            for (int d = 0; d < g->ndim; d++)
                t->count *= (uint64_t)g->dims[d];
            t->g = g;
            if (g->layout == DT_QL_GPTQ || g->layout == DT_QL_AWQ)
                t->uncomparable = "GPTQ/AWQ codes: not compared (dtcast dequantize them first)";
            t->cfile = f;
            t->cat = c->at[i].at;
            t->sfile = &c->shards[c->at[g->scales].shard].file;
            t->sat = c->at[g->scales].at;
            t->scount = c->at[g->scales].st->count;
            t->stype = dt_qgroup_scale_type(g, c->t[g->scales].type);
            if (g->post_scale != DT_QT_NONE)
                memcpy(&t->post, dt_ckpt_data(c, g->post_scale), 4);
            if (g->packed_i32) {
                t->wpr = (uint64_t)c->t[g->codes].dims[c->t[g->codes].ndim - 1];
                if (g->zero_point != DT_QT_NONE) {
                    t->zfile = &c->shards[c->at[g->zero_point].shard].file;
                    t->zat = c->at[g->zero_point].at;
                    t->zbytes = c->at[g->zero_point].bytes;
                }
            }
            if (g->global != DT_QT_NONE) {
                uint8_t gb[4];
                st = dt_infile_read(&c->shards[c->at[g->global].shard].file,
                                    c->at[g->global].at, gb, 4, err);
                if (st != DTCAST_OK)
                    return st;
                memcpy(&t->global, gb, 4);
            }
        } else {
            t->name = c->t[i].name;
            t->type = c->t[i].type;
            t->ndim = c->t[i].ndim;
            memcpy(t->dims, c->t[i].dims, (size_t)t->ndim * sizeof t->dims[0]);
            t->count = c->at[i].st->count;
            t->file = f;
            t->at = c->at[i].at;
            t->ckpt = c;
            t->shard = c->at[i].shard;
            t->layout.type = t->type;
            t->layout.store = dtcast_type_bits(t->type) == 6 ? DT_STORE_F6_PACKED
                                                             : DT_STORE_NATIVE;
        }
    }
    qsort(s->t, s->n, sizeof *s->t, by_name);
    for (size_t i = 1; i < s->n; i++)
        if (strcmp(s->t[i - 1].name, s->t[i].name) == 0)
            return dt_io_fail(err, DTCAST_ERR_BAD_FILE,
                              "%s: two tensors would be named '%s' (one dequantized)", s->path,
                              s->t[i].name);
    return DTCAST_OK;
}

/* ---- an ONNX model (files/onnx_model.h reads it) ----------------------------------------------- */

typedef struct onnx_scan {
    src *s;
    dt_io_error *err;
    dtcast_status st;
} onnx_scan;

static dt_infile *onnx_external(onnx_scan *o, const char *loc)
{
    src *s = o->s;
    for (size_t i = 0; i < s->n_ext; i++)
        if (strcmp(s->ext_loc[i], loc) == 0)
            return s->ext[i];
    if (s->n_ext == s->cap_ext) {
        size_t cap = s->cap_ext ? 2 * s->cap_ext : 8;
        dt_infile **ext = realloc(s->ext, cap * sizeof *ext);
        char **loc_of = ext ? realloc(s->ext_loc, cap * sizeof *loc_of) : NULL;
        if (ext)
            s->ext = ext;
        if (loc_of)
            s->ext_loc = loc_of;
        if (!ext || !loc_of) {
            o->st = dt_io_fail(o->err, DTCAST_ERR_OUT_OF_MEMORY, "%s: out of memory", s->path);
            return NULL;
        }
        s->cap_ext = cap;
    }
    const char *slash = strrchr(s->path, '/');
    size_t dir = slash ? (size_t)(slash - s->path) + 1 : 0;
    char *path = malloc(dir + strlen(loc) + 1);
    char *copy = strdup(loc);
    dt_infile *f = calloc(1, sizeof *f);
    if (!path || !copy || !f) {
        free(path);
        free(copy);
        free(f);
        o->st = dt_io_fail(o->err, DTCAST_ERR_OUT_OF_MEMORY, "%s: out of memory", s->path);
        return NULL;
    }
    memcpy(path, s->path, dir);
    strcpy(path + dir, loc);
    dt_io_error e = DT_IO_ERROR_INIT;
    dtcast_status st = dt_infile_open(f, path, &e);
    free(path);
    if (st != DTCAST_OK) {
        free(copy);
        free(f);
        o->st = dt_io_fail(o->err, st, "%s: external data: %s", s->path, e.message);
        return NULL;
    }
    s->ext[s->n_ext] = f;
    s->ext_loc[s->n_ext++] = copy;
    return f;
}

static dtcast_status onnx_tensor(void *arg, const dt_onnx_tensor_info *i)
{
    onnx_scan *o = arg;
    src *s = o->s;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        src_tensor *t = realloc(s->t, cap * sizeof *t);
        char **names = t ? realloc(s->names, cap * sizeof *names) : NULL;
        if (t)
            s->t = t;
        if (names)
            s->names = names;
        if (!t || !names) {
            o->st = dt_io_fail(o->err, DTCAST_ERR_OUT_OF_MEMORY, "%s: out of memory", s->path);
            return o->st;
        }
        s->cap = cap;
    }
    src_tensor *t = &s->t[s->n];
    memset(t, 0, sizeof *t);
    /* an initializer whose one reader is a Cast is compared as that Cast's output: weights mode
     * stores X as X_float16 and casts it back to X, so X meets X */
    if (!(s->names[s->n] = strdup(i->cast_output ? i->cast_output : i->name))) {
        o->st = dt_io_fail(o->err, DTCAST_ERR_OUT_OF_MEMORY, "%s: out of memory", s->path);
        return o->st;
    }
    t->name = s->names[s->n++];
    t->type = i->data_type < 1000 && dtcast_type_bits((dtcast_type)i->data_type) > 0
                  ? (dtcast_type)i->data_type : DTCAST_UNDEFINED;
    t->ndim = i->ndim;
    memcpy(t->dims, i->dims, (size_t)i->ndim * sizeof t->dims[0]);
    t->count = i->count;
    t->layout.type = t->type;
    t->layout.store = DT_STORE_NATIVE;
    uint64_t bytes = 0;
    if (t->type == DTCAST_UNDEFINED || dtcast_type_bits(t->type) == 6) {
        t->uncomparable = "a type diff does not read from an ONNX model: not compared";
        return DTCAST_OK;
    }
    if (dt_native_bytes(t->type, t->count, &bytes) != DTCAST_OK) {
        o->st = dt_io_fail(o->err, DTCAST_ERR_SIZE_OVERFLOW, "%s: tensor '%s': too large",
                           s->path, t->name);
        return o->st;
    }
    /* raw_data, and a packed float_data / double_data, are the values' little-endian bytes */
    if (i->where == DT_ONNX_DATA_RAW ||
        (i->where == DT_ONNX_DATA_TYPED && i->data_len == bytes &&
         (t->type == DTCAST_FLOAT32 || t->type == DTCAST_FLOAT64 ||
          t->type == DTCAST_COMPLEX64 || t->type == DTCAST_COMPLEX128))) {
        if (i->data_len != bytes) {
            o->st = dt_io_fail(o->err, DTCAST_ERR_BAD_FILE, "%s: tensor '%s': raw_data holds %llu "
                               "bytes, its %llu elements need %llu", s->path, t->name,
                               (unsigned long long)i->data_len, (unsigned long long)t->count,
                               (unsigned long long)bytes);
            return o->st;
        }
        t->file = &s->onnx_file;
        t->at = i->data_offset;
    } else if (i->where == DT_ONNX_DATA_EXTERNAL) {
        if (!i->location || !i->location[0]) {
            o->st = dt_io_fail(o->err, DTCAST_ERR_BAD_FILE, "%s: tensor '%s': external data "
                               "without a location", s->path, t->name);
            return o->st;
        }
        dt_infile *f = onnx_external(o, i->location);
        if (!f)
            return o->st;
        uint64_t end;
        if ((i->has_length && i->ext_length != bytes) ||
            __builtin_add_overflow(i->ext_offset, bytes, &end) || end > f->size) {
            o->st = dt_io_fail(o->err, DTCAST_ERR_BAD_FILE, "%s: tensor '%s': external data "
                               "'%s' holds %llu bytes; offset %llu + %llu bytes (its %llu "
                               "elements) do not fit%s", s->path, t->name, i->location,
                               (unsigned long long)f->size, (unsigned long long)i->ext_offset,
                               (unsigned long long)bytes, (unsigned long long)t->count,
                               i->has_length && i->ext_length != bytes ? ", or length differs"
                                                                       : "");
            return o->st;
        }
        t->file = f;
        t->at = i->ext_offset;
    } else if (t->count == 0) {
        t->file = &s->onnx_file;
    } else {
        t->uncomparable = "values in a typed field (int32_data, int64_data, ...): not compared";
    }
    return DTCAST_OK;
}

static dtcast_status open_onnx(src *s, dt_io_error *err)
{
    s->onnx = 1;
    dtcast_status st = dt_infile_open(&s->onnx_file, s->path, err);
    if (st != DTCAST_OK)
        return st;
    if (!s->onnx_file.seekable)
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "%s: diff reads files, not pipes",
                          s->path);
    const uint8_t *map = NULL;
    size_t len = 0;
    if ((st = dt_infile_map(&s->onnx_file, &map, &len, err)) != DTCAST_OK)
        return st;
    onnx_scan o = {s, err, DTCAST_OK};
    if ((st = dt_onnx_model_tensors(map, len, s->path, NULL, onnx_tensor, &o, err)) != DTCAST_OK)
        return st;
    qsort(s->t, s->n, sizeof *s->t, by_name);
    for (size_t i = 1; i < s->n; i++)
        if (strcmp(s->t[i - 1].name, s->t[i].name) == 0)
            return dt_io_fail(err, DTCAST_ERR_BAD_FILE, "%s: two tensors are named '%s'",
                              s->path, s->t[i].name);
    return DTCAST_OK;
}

static dtcast_status open_gguf(src *s, dt_io_error *err)
{
    s->gguf = 1;
    dtcast_status st = dt_gguf_set_open(&s->gs, s->path, err);
    if (st != DTCAST_OK)
        return st;
    size_t n = 0;
    for (size_t i = 0; i < s->gs.n; i++)
        n += (size_t)s->gs.shards[i].g.ntensors;
    s->t = calloc(n ? n : 1, sizeof *s->t);
    s->names = calloc(n ? n : 1, sizeof *s->names);
    if (!s->t || !s->names)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "%s: out of memory", s->path);
    for (size_t i = 0; i < s->gs.n; i++) {
        dt_gguf_shard *sh = &s->gs.shards[i];
        for (uint64_t k = 0; k < sh->g.ntensors; k++) {
            const dt_gguf_tensor *e = &sh->g.tensors[k];
            const dt_ggml_traits *gt = dt_ggml_traits_of(e->type);
            src_tensor *t = &s->t[s->n];
            char *name = malloc((size_t)e->name_len + 1);
            if (!name)
                return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "%s: out of memory", s->path);
            memcpy(name, e->name, (size_t)e->name_len);
            name[e->name_len] = '\0';
            s->names[s->n++] = name;
            t->name = name;
            t->ndim = e->n_dims;
            for (int d = 0; d < e->n_dims; d++) /* numpy's order */
                t->dims[d] = (int64_t)e->ne[e->n_dims - 1 - d];
            t->count = e->count;
            t->file = &sh->file;
            t->at = e->at;
            t->ggml = 0;
            if (gt->block == 1) {
                t->type = gt->plain;
                t->layout.type = gt->plain;
                t->layout.store = sh->g.big_endian && gt->bytes > 1 ? DT_STORE_SWAPPED
                                                                    : DT_STORE_NATIVE;
            } else {
                if (sh->g.big_endian)
                    return dt_io_fail(err, DTCAST_ERR_UNSUPPORTED, "%s: tensor '%s': %s blocks "
                                      "of a big-endian GGUF file are not read yet", sh->path,
                                      name, gt->name);
                if (!gt->dequantize)
                    return dt_io_fail(err, DTCAST_ERR_UNSUPPORTED, "%s: tensor '%s': ggml type "
                                      "%s has no conversion to float", sh->path, name, gt->name);
                t->ggml = (int)e->type;
                t->type = DTCAST_FLOAT32;
                snprintf(t->ggml_name, sizeof t->ggml_name, "ggml %s", gt->name);
            }
        }
    }
    qsort(s->t, s->n, sizeof *s->t, by_name);
    for (size_t i = 1; i < s->n; i++)
        if (strcmp(s->t[i - 1].name, s->t[i].name) == 0)
            return dt_io_fail(err, DTCAST_ERR_BAD_FILE, "%s: two tensors are named '%s'",
                              s->path, s->t[i].name);
    return DTCAST_OK;
}

static void src_close(src *s)
{
    if (s->gguf) {
        dt_gguf_set_close(&s->gs);
        for (size_t i = 0; i < s->n; i++)
            free(s->names[i]);
        free(s->names);
    }
    if (s->onnx) {
        dt_infile_close(&s->onnx_file);
        for (size_t i = 0; i < s->n_ext; i++) {
            dt_infile_close(s->ext[i]);
            free(s->ext[i]);
            free(s->ext_loc[i]);
        }
        free(s->ext);
        free(s->ext_loc);
        for (size_t i = 0; i < s->n; i++)
            free(s->names[i]);
        free(s->names);
    }
    if (s->npy)
        dt_infile_close(&s->npy_file);
    if (s->has_ckpt) {
        dt_qplan_free(&s->plan);
        dt_ckpt_close(&s->ckpt);
    }
    free(s->npy_name);
    free(s->t);
    memset(s, 0, sizeof *s);
}

/* ---- one block --------------------------------------------------------------------------------- */

typedef struct buf {
    uint8_t *p;
    size_t size;
} buf;

static int grow(buf *b, size_t need)
{
    if (need == 0)
        need = 1;
    if (b->size >= need)
        return 1;
    uint8_t *p = realloc(b->p, need);
    if (!p)
        return 0;
    b->p = p;
    b->size = need;
    return 1;
}

typedef struct side_bufs {
    buf raw, native, dec, f6, scales, f32, zp, zpacked, via;
    const struct src_tensor *zp_of; /* the tensor whose zero points zp holds */
} side_bufs;

static void side_bufs_free(side_bufs *b)
{
    free(b->raw.p);
    free(b->native.p);
    free(b->dec.p);
    free(b->f6.p);
    free(b->scales.p);
    free(b->zp.p);
    free(b->zpacked.p);
    free(b->via.p);
    free(b->f32.p);
}

/* How a pair is cut: blocks of `step` rows of k elements within matrices of n rows. */
typedef struct plan {
    uint64_t k, n, mats, step, per_mat, nblocks;
    dtcast_type dec;  /* FLOAT64 or COMPLEX128 */
    int parts;
} plan;

static void block_range(const plan *p, uint64_t bi, uint64_t *e0, uint64_t *cnt)
{
    uint64_t m = bi / p->per_mat, r0 = bi % p->per_mat * p->step;
    uint64_t nr = p->n - r0 < p->step ? p->n - r0 : p->step;
    *e0 = (m * p->n + r0) * p->k;
    *cnt = nr * p->k;
}


/* Rows [row, row + nr) of a quantized tensor, dequantized to float32 in b->f32. */
static dtcast_status dequant_rows(const src_tensor *t, const char *path, uint64_t row,
                                  uint64_t nr, side_bufs *b, dt_io_error *err)
{
    const dt_qgroup *g = t->g;
    const uint64_t k = (uint64_t)g->dims[g->ndim - 1];
    const int f6 = dtcast_type_bits(g->element) == 6;
    uint64_t at, len;
    if (g->packed_i32) { /* whole rows of int32 words */
        at = row * t->wpr * 4;
        len = nr * t->wpr * 4;
    } else if (f6) {
        at = row * k / 4 * 3;
        len = (nr * k * 6 + 7) / 8;
    } else {
        uint64_t rb = g->element == DTCAST_FLOAT4E2M1 || g->element == DTCAST_INT4 ? (k + 1) / 2
                                                                                   : k;
        at = row * rb;
        len = nr * rb;
    }
    /* The scales of these rows. */
    const uint64_t sbytes = (uint64_t)dtcast_type_bits(t->stype) / 8;
    uint64_t rows = 1;
    for (int i = 0; i < g->ndim - 1; i++)
        rows *= (uint64_t)g->dims[i];
    uint64_t n = g->layout == DT_QL_FP8_BLOCK ? (uint64_t)g->dims[g->ndim - 2] : rows;
    uint64_t mats = g->layout == DT_QL_FP8_BLOCK && n ? rows / n : 1;
    uint64_t units = g->layout == DT_QL_FP8_BLOCK
                         ? mats * ((n + (uint64_t)g->block_rows - 1) / (uint64_t)g->block_rows)
                         : (g->per_tensor ? 1 : rows);
    uint64_t srow = units ? t->scount / units : 0;
    dtcast_tensor sc;
    memset(&sc, 0, sizeof sc);
    sc.type = t->stype;
    uint64_t s_at, s_len;
    if (g->layout == DT_QL_FP8_BLOCK) {
        const uint64_t br = (uint64_t)g->block_rows, trs = (n + br - 1) / br;
        const uint64_t m = row / n, r0 = row % n;
        const uint64_t t0 = m * trs + r0 / br, tn = (nr + br - 1) / br;
        s_at = t0 * srow * sbytes;
        s_len = tn * srow * sbytes;
        sc.ndim = 2;
        sc.shape[0] = (int64_t)tn;
        sc.shape[1] = (int64_t)srow;
    } else if (g->per_tensor) {
        s_at = 0;
        s_len = sbytes;
        sc.ndim = 1;
        sc.shape[0] = 1;
    } else {
        s_at = row * srow * sbytes;
        s_len = nr * srow * sbytes;
        sc.ndim = 2;
        sc.shape[0] = (int64_t)nr;
        sc.shape[1] = (int64_t)srow;
    }
    if (!grow(&b->raw, (size_t)len) || !grow(&b->scales, (size_t)s_len) ||
        !grow(&b->f32, (size_t)(nr * k * 4)) || (f6 && k % 4 && !grow(&b->f6, (size_t)(nr * k))))
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "%s: tensor '%s': out of memory", path,
                          t->name);
    dtcast_status st = dt_infile_read(t->cfile, t->cat + at, b->raw.p, (size_t)len, err);
    if (st == DTCAST_OK)
        st = dt_infile_read(t->sfile, t->sat + s_at, b->scales.p, (size_t)s_len, err);
    if (st != DTCAST_OK)
        return prefixed(err, st, path, t->name);
    dtcast_quant_params p;
    dt_qgroup_params(g, &p);
    if (g->deepseek_v4 && g->element == DTCAST_FLOAT4E2M1) /* -0 read as DeepSeek reads it */
        dt_qgroup_dsv4_codes(b->raw.p, (size_t)len);
    dtcast_tensor codes = {b->raw.p, (size_t)len, g->element, 2, {(int64_t)nr, (int64_t)k}};
    if (g->packed_i32) { /* int8 codes minus their zero points */
        const int8_t *zp = NULL;
        const uint64_t zg = srow;
        if (t->zfile && b->zp_of != t) { /* unpacked once per tensor, not per chunk */
            b->zp_of = NULL;
            if (!grow(&b->zpacked, (size_t)t->zbytes) || !grow(&b->zp, (size_t)(rows * zg)))
                return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "%s: tensor '%s': out of memory",
                                  path, t->name);
            if ((st = dt_infile_read(t->zfile, t->zat, b->zpacked.p, (size_t)t->zbytes, err)) !=
                DTCAST_OK)
                return prefixed(err, st, path, t->name);
            dt_qgroup_unpack_zero_points(g, b->zpacked.p, zg, (int8_t *)b->zp.p);
            b->zp_of = t;
        }
        if (t->zfile)
            zp = (const int8_t *)b->zp.p;
        if (!grow(&b->f6, (size_t)(nr * k)))
            return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "%s: tensor '%s': out of memory", path,
                              t->name);
        dt_qgroup_unpack_rows(g, b->raw.p, row, nr, t->wpr, zp, zg, (int8_t *)b->f6.p);
        codes.data = b->f6.p;
        codes.bytes = (size_t)(nr * k);
    } else if (f6 && k % 4 == 0) {
        p.float6_packed = true;
    } else if (f6) {
        dt_st_f6_from_bytes(b->f6.p, b->raw.p, (size_t)(nr * k));
        codes.data = b->f6.p;
        codes.bytes = (size_t)(nr * k);
    }
    sc.data = b->scales.p;
    sc.bytes = (size_t)s_len;
    float global = t->global;
    dtcast_tensor gs = {&global, 4, DTCAST_FLOAT32, 1, {1}};
    dtcast_tensor y;
    memset(&y, 0, sizeof y);
    y.data = b->f32.p;
    y.bytes = (size_t)(nr * k * 4);
    y.type = DTCAST_FLOAT32;
    /* the products rounded as their producer rounds them (compressed-tensors: to the scale's
     * type), as dequantize writes them */
    const dtcast_type via = dt_qgroup_product_type(g, t->stype, DTCAST_FLOAT32);
    if (via != DTCAST_UNDEFINED) {
        if (!grow(&b->via, (size_t)(nr * k * 2)))
            return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "%s: tensor '%s': out of memory",
                              path, t->name);
        y.data = b->via.p;
        y.bytes = (size_t)(nr * k * 2);
        y.type = via;
    }
    dtcast_error e;
    memset(&e, 0, sizeof e);
    dtcast_status dq = dtcast_dequantize(&y, &codes, &sc, g->global != DT_QT_NONE ? &gs : NULL,
                                         &p, &e);
    if (dq == DTCAST_OK && via != DTCAST_UNDEFINED)
        dq = dtcast_convert(b->f32.p, DTCAST_FLOAT32, b->via.p, via, (size_t)(nr * k), NULL, &e);
    if (dq == DTCAST_OK && g->post_scale != DT_QT_NONE) { /* musubi's second float32 multiply */
        float *v = (float *)(void *)b->f32.p;
        for (uint64_t i = 0; i < nr * k; i++)
            v[i] = v[i] != v[i] ? v[i] + 0.0f : v[i] * t->post;
    }
    if (dq != DTCAST_OK)
        return dt_io_fail(err, e.status ? e.status : DTCAST_ERR_BAD_FILE,
                          "%s: tensor '%s' (%s), rows %llu..%llu: %s", path, t->name,
                          dt_qgroup_name(g), (unsigned long long)row,
                          (unsigned long long)(row + nr), e.message);
    return DTCAST_OK;
}

/* Elements [e0, e0 + cnt) of t in dtcast's layout: *data (in the mapping, or a buffer of b) of
 * type *type (float32 for a dequantized tensor); *plain: the stored elements (for the byte
 * comparison). */
static dtcast_status load(const src_tensor *t, const char *path, const plan *p, uint64_t e0,
                          uint64_t cnt, side_bufs *b, const uint8_t **data, dtcast_type *type,
                          dt_io_error *err)
{
    if (t->g) {
        dtcast_status st = dequant_rows(t, path, e0 / p->k, cnt / p->k, b, err);
        *data = b->f32.p;
        *type = DTCAST_FLOAT32;
        return st;
    }
    if (t->ggml) { /* whole rows of ggml blocks: to float32 as ggml's to_float */
        const uint64_t block = (uint64_t)dtcast_ggml_block_size(t->ggml);
        const uint64_t bytes = cnt / block * dtcast_ggml_type_size(t->ggml);
        if (!grow(&b->raw, (size_t)bytes) || !grow(&b->f32, (size_t)cnt * 4))
            return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "%s: tensor '%s': out of memory",
                              path, t->name);
        dtcast_status rst = dt_infile_read(t->file, t->at + e0 / block *
                                                           dtcast_ggml_type_size(t->ggml),
                                           b->raw.p, (size_t)bytes, err);
        if (rst != DTCAST_OK)
            return prefixed(err, rst, path, t->name);
        dtcast_tensor y;
        memset(&y, 0, sizeof y);
        y.data = b->f32.p;
        y.type = DTCAST_FLOAT32;
        y.ndim = 1;
        y.shape[0] = (int64_t)cnt;
        y.bytes = (size_t)cnt * 4;
        dtcast_error le;
        if (dtcast_ggml_dequantize(&y, b->raw.p, (size_t)bytes, t->ggml, 1, &le) != DTCAST_OK)
            return dt_io_fail(err, DTCAST_ERR_BAD_FILE, "%s: tensor '%s': %s", path, t->name,
                              le.message);
        *data = b->f32.p;
        *type = DTCAST_FLOAT32;
        return DTCAST_OK;
    }
    uint64_t off = 0, len = 0, nat = 0;
    if (dt_layout_bytes(&t->layout, e0, &off) != DTCAST_OK ||
        dt_layout_bytes(&t->layout, cnt, &len) != DTCAST_OK ||
        dt_native_bytes(t->type, cnt, &nat) != DTCAST_OK)
        return dt_io_fail(err, DTCAST_ERR_SIZE_OVERFLOW, "%s: tensor '%s': too large", path,
                          t->name);
    /* Read (pread: the workers share the file), not taken from a mapping of the shard: a
     * mapping's pages stay resident after madvise(MADV_DONTNEED) when the page cache holds the
     * file in large folios (Linux 6.18, ext4: 400 MiB resident diffing 3 GiB), a read's never. */
    const dt_ckpt_shard *sh = t->ckpt ? &t->ckpt->shards[t->shard] : NULL;
    dt_infile *file = sh ? (dt_infile *)&sh->file : t->file;
    if (!grow(&b->raw, (size_t)len))
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "%s: tensor '%s': out of memory",
                          path, t->name);
    dtcast_status rst = dt_infile_read(file, t->at + off, b->raw.p, (size_t)len, err);
    if (rst != DTCAST_OK)
        return prefixed(err, rst, path, t->name);
    const uint8_t *from = b->raw.p;
    if (!dt_layout_is_native(&t->layout)) {
        if (!grow(&b->native, (size_t)nat))
            return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "%s: tensor '%s': out of memory",
                              path, t->name);
        dtcast_status st = dt_layout_load(&t->layout, b->native.p, from, (size_t)cnt, e0, err);
        if (st != DTCAST_OK)
            return prefixed(err, st, path, t->name);
        from = b->native.p;
    }
    *data = from;
    *type = t->type;
    return DTCAST_OK;
}

/* cnt elements of type at data, decoded to dec into out. */
static dtcast_status decode(const src_tensor *t, const char *path, const void *data,
                            dtcast_type type, dtcast_type dec, uint64_t first, size_t cnt,
                            void *out, dt_io_error *err)
{
    dtcast_error e;
    memset(&e, 0, sizeof e);
    if (dtcast_convert(out, dec, data, type, cnt, NULL, &e) != DTCAST_OK)
        return dt_io_fail(err, e.status ? e.status : DTCAST_ERR_BAD_FILE,
                          "%s: tensor '%s': element %llu: %s", path, t->name,
                          (unsigned long long)(first + (e.index == (size_t)-1 ? 0 : e.index)),
                          e.message);
    return DTCAST_OK;
}

/* ---- the running figures ------------------------------------------------------------------------ */

typedef struct acc {
    uint64_t nan_a, pinf_a, ninf_a, nan_b, pinf_b, ninf_b;
    uint64_t finite, unequal, not_close, nonfinite_mismatch;
    int has_first;
    uint64_t first;
    dt_diff_worst max_abs, max_rel;
    long double sa2, se2;
    int bytes_differ;
} acc;

static void worst_merge(dt_diff_worst *into, const dt_diff_worst *w)
{
    if (!w->has)
        return;
    if (!into->has || w->error > into->error ||
        (w->error == into->error && w->index < into->index))
        *into = *w;
}

static void acc_merge(acc *into, const acc *a)
{
    into->nan_a += a->nan_a;
    into->pinf_a += a->pinf_a;
    into->ninf_a += a->ninf_a;
    into->nan_b += a->nan_b;
    into->pinf_b += a->pinf_b;
    into->ninf_b += a->ninf_b;
    into->finite += a->finite;
    into->unequal += a->unequal;
    into->not_close += a->not_close;
    into->nonfinite_mismatch += a->nonfinite_mismatch;
    if (a->has_first && (!into->has_first || a->first < into->first)) {
        into->has_first = 1;
        into->first = a->first;
    }
    worst_merge(&into->max_abs, &a->max_abs);
    worst_merge(&into->max_rel, &a->max_rel);
    into->sa2 += a->sa2;
    into->se2 += a->se2;
    into->bytes_differ |= a->bytes_differ;
}

static void count_nonfinite(double x, uint64_t *nan, uint64_t *pinf, uint64_t *ninf)
{
    if (isnan(x))
        (*nan)++;
    else if (x > 0)
        (*pinf)++;
    else
        (*ninf)++;
}

/* Values x[0, n) (A) against y[0, n) (B), the first at value index v0. */
static void compare_values(acc *r, const double *x, const double *y, size_t n, uint64_t v0,
                           double atol, double rtol)
{
    double max_abs = r->max_abs.has ? r->max_abs.error : -1.0;
    double max_rel = r->max_rel.has ? r->max_rel.error : -1.0;
    long double sa2 = 0, se2 = 0;
    for (size_t i0 = 0; i0 < n; i0 += 512) {
        size_t i1 = n - i0 < 512 ? n : i0 + 512;
        double s1 = 0, s2 = 0;
        for (size_t i = i0; i < i1; i++) {
            double a = x[i], b = y[i];
            if (isfinite(a) && isfinite(b)) {
                double d = fabs(b - a);
                r->finite++;
                s1 += a * a;
                s2 += d * d;
                if (d > max_abs) {
                    max_abs = d;
                    r->max_abs = (dt_diff_worst){1, d, v0 + i, a, b};
                }
                if (a != 0) {
                    double rel = d / fabs(a);
                    if (rel > max_rel) {
                        max_rel = rel;
                        r->max_rel = (dt_diff_worst){1, rel, v0 + i, a, b};
                    }
                }
                if (d != 0) {
                    r->unequal++;
                    double tol = rtol * fabs(a);
                    tol = tol + atol;
                    if (!(d <= tol)) {
                        r->not_close++;
                        if (!r->has_first) {
                            r->has_first = 1;
                            r->first = v0 + i;
                        }
                    }
                }
            } else {
                if (!isfinite(a))
                    count_nonfinite(a, &r->nan_a, &r->pinf_a, &r->ninf_a);
                if (!isfinite(b))
                    count_nonfinite(b, &r->nan_b, &r->pinf_b, &r->ninf_b);
                if (!((isnan(a) && isnan(b)) || a == b)) {
                    r->unequal++;
                    r->not_close++;
                    r->nonfinite_mismatch++;
                    if (!r->has_first) {
                        r->has_first = 1;
                        r->first = v0 + i;
                    }
                }
            }
        }
        sa2 += s1;
        se2 += s2;
    }
    r->sa2 += sa2;
    r->se2 += se2;
}

/* The same figures as compare_values over pieces of PIECE values, without a branch per value
 * (SSE2 on every x86-64, AVX2 where the CPU has it): a piece whose sums come out finite holds
 * no NaN or Inf (a NaN or Inf on either side, or an overflowing square, makes a sum NaN or
 * Inf); only a piece with a NaN or Inf, a possible new largest error, or the first value not
 * close goes through compare_values. Without SSE2: compare_values. */
#define PIECE 256

typedef struct piece_sums {
    double s1, s2, mx;
    uint64_t neq, nc;
    int cand; /* a value where d / |a| may exceed rlo (or |a| is tiny and d != 0) */
} piece_sums;

#if defined(__SSE2__)
static void piece_sse2(const double *x, const double *y, double rlo, double atol, double rtol,
                       piece_sums *o)
{
    const __m128d absmask = _mm_castsi128_pd(_mm_set1_epi64x(INT64_MAX)), zero = _mm_setzero_pd();
    const __m128d vatol = _mm_set1_pd(atol), vrtol = _mm_set1_pd(rtol);
    const __m128d vtiny = _mm_set1_pd(0x1p-900), vrlo = _mm_set1_pd(rlo);
    const int tolerant = atol != 0 || rtol != 0;
    __m128d s1 = zero, s2 = zero, mx = zero, cand = zero;
    __m128i neq_n = _mm_setzero_si128(), nc_n = neq_n;
    if (x == y) { /* B's values are A's: only the signal */
        __m128d t1 = zero;
        for (size_t i = 0; i < PIECE; i += 4) {
            __m128d a = _mm_loadu_pd(x + i), c = _mm_loadu_pd(x + i + 2);
            s1 = _mm_add_pd(s1, _mm_mul_pd(a, a));
            t1 = _mm_add_pd(t1, _mm_mul_pd(c, c));
        }
        s1 = _mm_add_pd(s1, t1);
    }
    for (size_t i = 0; x != y && i < PIECE; i += 2) {
        __m128d a = _mm_loadu_pd(x + i), b = _mm_loadu_pd(y + i);
        __m128d fa = _mm_and_pd(a, absmask);
        __m128d d = _mm_and_pd(_mm_sub_pd(b, a), absmask);
        s1 = _mm_add_pd(s1, _mm_mul_pd(a, a));
        s2 = _mm_add_pd(s2, _mm_mul_pd(d, d));
        mx = _mm_max_pd(mx, d);
        __m128d ne = _mm_cmpneq_pd(d, zero);
        neq_n = _mm_sub_epi64(neq_n, _mm_castpd_si128(ne));
        if (tolerant) {
            __m128d tol = _mm_add_pd(_mm_mul_pd(vrtol, fa), vatol);
            nc_n = _mm_sub_epi64(nc_n, _mm_castpd_si128(_mm_cmpgt_pd(d, tol)));
        }
        cand = _mm_or_pd(cand, _mm_and_pd(ne, _mm_or_pd(_mm_cmpgt_pd(d, _mm_mul_pd(vrlo, fa)),
                                                        _mm_cmplt_pd(fa, vtiny))));
    }
    int64_t c[2];
    double l[2];
    _mm_storeu_pd(l, s1);
    o->s1 = l[0] + l[1];
    _mm_storeu_pd(l, s2);
    o->s2 = l[0] + l[1];
    _mm_storeu_pd(l, mx);
    o->mx = l[1] > l[0] ? l[1] : l[0];
    _mm_storeu_si128((__m128i *)c, neq_n);
    o->neq = (uint64_t)(c[0] + c[1]);
    _mm_storeu_si128((__m128i *)c, nc_n);
    o->nc = tolerant ? (uint64_t)(c[0] + c[1]) : o->neq; /* no tolerance: close is equal */
    o->cand = _mm_movemask_pd(cand) != 0;
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define HAVE_AVX2_PIECE 1
__attribute__((target("avx2"))) static void piece_avx2(const double *x, const double *y,
                                                       double rlo, double atol, double rtol,
                                                       piece_sums *o)
{
    const __m256d absmask = _mm256_castsi256_pd(_mm256_set1_epi64x(INT64_MAX));
    const __m256d zero = _mm256_setzero_pd();
    const __m256d vatol = _mm256_set1_pd(atol), vrtol = _mm256_set1_pd(rtol);
    const __m256d vtiny = _mm256_set1_pd(0x1p-900), vrlo = _mm256_set1_pd(rlo);
    const int tolerant = atol != 0 || rtol != 0;
    __m256d s1 = zero, s2 = zero, mx = zero, cand = zero;
    __m256i neq_n = _mm256_setzero_si256(), nc_n = neq_n;
    if (x == y) { /* B's values are A's: only the signal */
        __m256d t1 = zero;
        for (size_t i = 0; i < PIECE; i += 8) {
            __m256d a = _mm256_loadu_pd(x + i), c = _mm256_loadu_pd(x + i + 4);
            s1 = _mm256_add_pd(s1, _mm256_mul_pd(a, a));
            t1 = _mm256_add_pd(t1, _mm256_mul_pd(c, c));
        }
        s1 = _mm256_add_pd(s1, t1);
    }
    for (size_t i = 0; x != y && i < PIECE; i += 4) {
        __m256d a = _mm256_loadu_pd(x + i), b = _mm256_loadu_pd(y + i);
        __m256d fa = _mm256_and_pd(a, absmask);
        __m256d d = _mm256_and_pd(_mm256_sub_pd(b, a), absmask);
        s1 = _mm256_add_pd(s1, _mm256_mul_pd(a, a));
        s2 = _mm256_add_pd(s2, _mm256_mul_pd(d, d));
        mx = _mm256_max_pd(mx, d);
        __m256d ne = _mm256_cmp_pd(d, zero, _CMP_NEQ_UQ);
        neq_n = _mm256_sub_epi64(neq_n, _mm256_castpd_si256(ne));
        if (tolerant) {
            __m256d tol = _mm256_add_pd(_mm256_mul_pd(vrtol, fa), vatol);
            nc_n = _mm256_sub_epi64(nc_n, _mm256_castpd_si256(_mm256_cmp_pd(d, tol, _CMP_GT_OQ)));
        }
        __m256d c1 = _mm256_cmp_pd(d, _mm256_mul_pd(vrlo, fa), _CMP_GT_OQ);
        __m256d c2 = _mm256_cmp_pd(fa, vtiny, _CMP_LT_OQ);
        cand = _mm256_or_pd(cand, _mm256_and_pd(ne, _mm256_or_pd(c1, c2)));
    }
    int64_t c[4];
    double l[4];
    _mm256_storeu_pd(l, s1);
    o->s1 = (l[0] + l[1]) + (l[2] + l[3]);
    _mm256_storeu_pd(l, s2);
    o->s2 = (l[0] + l[1]) + (l[2] + l[3]);
    _mm256_storeu_pd(l, mx);
    double m = l[0];
    for (int k = 1; k < 4; k++)
        m = l[k] > m ? l[k] : m;
    o->mx = m;
    _mm256_storeu_si256((__m256i *)c, neq_n);
    o->neq = (uint64_t)(c[0] + c[1] + c[2] + c[3]);
    _mm256_storeu_si256((__m256i *)c, nc_n);
    o->nc = tolerant ? (uint64_t)(c[0] + c[1] + c[2] + c[3]) : o->neq;
    o->cand = _mm256_movemask_pd(cand) != 0;
}
#endif

typedef void (*piece_fn)(const double *, const double *, double, double, double, piece_sums *);

static piece_fn pick_piece(void)
{
#if defined(HAVE_AVX2_PIECE)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2"))
        return piece_avx2;
#endif
    return piece_sse2;
}

static void compare_fast(acc *r, const double *x, const double *y, size_t n, uint64_t v0,
                         double atol, double rtol, piece_fn piece)
{
    size_t i0 = 0;
    for (; i0 + PIECE <= n; i0 += PIECE) {
        /* A hair under the largest relative error so far: rounding of rlo * |a| never hides a
         * candidate for a new largest d / |a| (-1 while there is none). */
        const double rlo = r->max_rel.has ? r->max_rel.error * (1 - 0x1p-48) : -1.0;
        piece_sums o;
        piece(x + i0, y + i0, rlo, atol, rtol, &o);
        const int nonfinite = !(fabs(o.s1) <= DBL_MAX && fabs(o.s2) <= DBL_MAX);
        const int new_abs = !r->max_abs.has || o.mx > r->max_abs.error;
        const int new_rel = o.cand || !r->max_rel.has;
        if (nonfinite || new_abs || new_rel || (o.nc && !r->has_first)) {
            compare_values(r, x + i0, y + i0, PIECE, v0 + i0, atol, rtol);
            continue;
        }
        r->finite += PIECE;
        r->unequal += o.neq;
        r->not_close += o.nc;
        r->sa2 += (long double)o.s1;
        r->se2 += (long double)o.s2;
    }
    if (i0 < n)
        compare_values(r, x + i0, y + i0, n - i0, v0 + i0, atol, rtol);
}
#else
typedef int piece_fn;
static piece_fn pick_piece(void) { return 0; }
static void compare_fast(acc *r, const double *x, const double *y, size_t n, uint64_t v0,
                         double atol, double rtol, piece_fn piece)
{
    (void)piece;
    compare_values(r, x, y, n, v0, atol, rtol);
}
#endif

/* ---- one pair, on the workers ------------------------------------------------------------------- */

typedef struct pair_job {
    const src_tensor *ta, *tb;
    const char *pa, *pb;
    plan p;
    double atol, rtol;
    int check_bytes;
    piece_fn piece; /* bytes of 8 elements in dtcast's layout (byte comparison) */
} pair_job;

typedef struct worker {
    const pair_job *j;
    unsigned id, nworkers;
    side_bufs a, b;
    acc r;
    dtcast_status status;
    dt_io_error err;
} worker;

#define SUB 16384 /* elements decoded at a time: both sides stay in the L1/L2 cache */

static void run_blocks(worker *w)
{
    const pair_job *j = w->j;
    const size_t dsize = j->p.dec == DTCAST_COMPLEX128 ? 16 : 8;
    if (!grow(&w->a.dec, SUB * dsize) || !grow(&w->b.dec, SUB * dsize)) {
        w->status = dt_io_fail(&w->err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
        return;
    }
    for (uint64_t bi = w->id; bi < j->p.nblocks; bi += w->nworkers) {
        uint64_t e0, cnt;
        block_range(&j->p, bi, &e0, &cnt);
        const uint8_t *na, *nb;
        dtcast_type ta, tb;
        w->status = load(j->ta, j->pa, &j->p, e0, cnt, &w->a, &na, &ta, &w->err);
        if (w->status == DTCAST_OK)
            w->status = load(j->tb, j->pb, &j->p, e0, cnt, &w->b, &nb, &tb, &w->err);
        if (w->status != DTCAST_OK)
            return;
        for (uint64_t s0 = 0; s0 < cnt; s0 += SUB) {
            size_t n = (size_t)(cnt - s0 < SUB ? cnt - s0 : SUB);
            uint64_t oa = 0, ob = 0, nbytes = 0;
            dt_native_bytes(ta, s0, &oa);
            dt_native_bytes(tb, s0, &ob);
            /* The same bytes: B's values are A's (decoded once, compared with themselves). */
            int same = 0;
            if (j->check_bytes) {
                dt_native_bytes(ta, n, &nbytes);
                same = memcmp(na + oa, nb + ob, (size_t)nbytes) == 0;
                w->r.bytes_differ |= !same;
            }
            w->status = decode(j->ta, j->pa, na + oa, ta, j->p.dec, e0 + s0, n, w->a.dec.p,
                               &w->err);
            if (w->status == DTCAST_OK && !same)
                w->status = decode(j->tb, j->pb, nb + ob, tb, j->p.dec, e0 + s0, n, w->b.dec.p,
                                   &w->err);
            if (w->status != DTCAST_OK)
                return;
            const size_t parts = (size_t)j->p.parts;
            const double *xb = (const double *)(same ? w->a.dec.p : w->b.dec.p);
            compare_fast(&w->r, (const double *)w->a.dec.p, xb, n * parts, (e0 + s0) * parts,
                         j->atol, j->rtol, j->piece);
        }
    }
}

static void *worker_main(void *arg)
{
    run_blocks(arg);
    return NULL;
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The blocks of a pair; 0 when it cannot be cut (note set). */
static int make_plan(const src_tensor *a, const src_tensor *b, plan *p, char *note, size_t size)
{
    memset(p, 0, sizeof *p);
    int complex = is_complex(a->type) || is_complex(b->type);
    p->dec = complex ? DTCAST_COMPLEX128 : DTCAST_FLOAT64;
    p->parts = complex ? 2 : 1;
    const uint64_t count = a->count;
    if (!a->g && !b->g && !a->ggml && !b->ggml) {
        p->k = 1;
        p->n = count;
        p->mats = 1;
        p->step = BLOCK_VALUES;
    } else {
        const int nd = a->ndim;
        p->k = nd ? (uint64_t)a->dims[nd - 1] : 1;
        uint64_t rows = 1;
        for (int i = 0; i < nd - 1; i++)
            rows *= (uint64_t)a->dims[i];
        int block = (a->g && a->g->layout == DT_QL_FP8_BLOCK) ||
                    (b->g && b->g->layout == DT_QL_FP8_BLOCK);
        p->n = block && nd >= 2 ? (uint64_t)a->dims[nd - 2] : rows;
        p->mats = p->n ? rows / p->n : 0;
        uint64_t step = p->k ? BLOCK_VALUES / p->k : 1;
        if (step == 0)
            step = 1;
        /* Granularity: plain sides start blocks at element indices that are multiples of 8,
         * float6 codes whose rows are not a multiple of 4 at multiples of 4 rows, block FP8 in
         * whole tiles or within one tile row. */
        uint64_t mult = p->k ? 8 / gcd64(p->k, 8) : 1;
        for (int s = 0; s < 2; s++) {
            const src_tensor *t = s ? b : a;
            if (t->g && dtcast_type_bits(t->g->element) == 6 && p->k % 4)
                mult = mult * 4 / gcd64(mult, 4);
        }
        uint64_t br = 0;
        for (int s = 0; s < 2; s++) {
            const src_tensor *t = s ? b : a;
            if (t->g && t->g->layout == DT_QL_FP8_BLOCK) {
                uint64_t r = (uint64_t)t->g->block_rows;
                br = br ? br / gcd64(br, r) * r : r;
            }
        }
        if (br) {
            if (step >= br) {
                uint64_t l = br / gcd64(br, mult) * mult;
                step = step >= l ? step / l * l : l;
            } else {
                while (br % step || step % mult)
                    step--;
                if (step == 0)
                    step = br / gcd64(br, mult) * mult;
            }
        } else {
            step = step >= mult ? step / mult * mult : mult;
        }
        if (p->mats > 1 && p->n % mult) {
            snprintf(note, size, "rows of %llu elements in matrices of %llu rows cannot be cut "
                     "into blocks: not compared", (unsigned long long)p->k,
                     (unsigned long long)p->n);
            return 0;
        }
        p->step = step;
    }
    p->per_mat = p->n ? (p->n + p->step - 1) / p->step : 0;
    p->nblocks = p->mats * p->per_mat;
    return 1;
}

static int same_shape(const src_tensor *a, const src_tensor *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    return 1;
}

static void side_info(dt_diff_side *s, const src_tensor *t)
{
    s->present = 1;
    s->type = t->type;
    s->layout = t->g ? dt_qgroup_name(t->g) : t->ggml ? t->ggml_name : NULL;
    s->ndim = t->ndim;
    memcpy(s->dims, t->dims, sizeof s->dims);
    s->count = t->count;
}

/* Fortran order (both sides): the value index in file order -> C order. */
static uint64_t f_to_c(uint64_t v, int parts, int ndim, const int64_t *dims)
{
    uint64_t e = v / (uint64_t)parts, part = v % (uint64_t)parts;
    int64_t idx[DT_MAX_DIMS];
    for (int i = 0; i < ndim; i++) {
        idx[i] = (int64_t)(e % (uint64_t)dims[i]);
        e /= (uint64_t)dims[i];
    }
    uint64_t c = 0;
    for (int i = 0; i < ndim; i++)
        c = c * (uint64_t)dims[i] + (uint64_t)idx[i];
    return c * (uint64_t)parts + part;
}

static dtcast_status compare_pair(const src *sa, const src *sb, const src_tensor *a,
                                  const src_tensor *b, const dt_diff_options *o,
                                  dt_diff_tensor *t, dt_io_error *err)
{
    side_info(&t->a, a);
    side_info(&t->b, b);
    t->parts = 1;
    if (!same_shape(a, b)) {
        t->state = DT_DIFF_SHAPE;
        return DTCAST_OK;
    }
    if (a->uncomparable || b->uncomparable) {
        t->state = DT_DIFF_UNCOMPARABLE;
        snprintf(t->note, sizeof t->note, "%s", a->uncomparable ? a->uncomparable : b->uncomparable);
        return DTCAST_OK;
    }
    if (a->type == DTCAST_STRING || b->type == DTCAST_STRING) {
        t->state = DT_DIFF_UNCOMPARABLE;
        snprintf(t->note, sizeof t->note, "string tensors are not compared");
        return DTCAST_OK;
    }
    int nontrivial = 0;
    for (int i = 0; i < a->ndim; i++)
        nontrivial += a->dims[i] > 1;
    if (a->fortran != b->fortran && nontrivial > 1) {
        t->state = DT_DIFF_UNCOMPARABLE;
        snprintf(t->note, sizeof t->note, "Fortran order against C order: not compared");
        return DTCAST_OK;
    }
    pair_job j;
    memset(&j, 0, sizeof j);
    j.ta = a;
    j.tb = b;
    j.pa = sa->path;
    j.pb = sb->path;
    j.atol = o->atol;
    j.rtol = o->rtol;
    if (!make_plan(a, b, &j.p, t->note, sizeof t->note)) {
        t->state = DT_DIFF_UNCOMPARABLE;
        return DTCAST_OK;
    }
    t->parts = j.p.parts;
    j.check_bytes = !a->g && !b->g && !a->ggml && !b->ggml && a->type == b->type;
    j.piece = pick_piece();
    unsigned nw = o->threads;
    if (nw == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        nw = cpus > 1 ? (unsigned)cpus : 1;
    }
    if (nw > MAX_WORKERS)
        nw = MAX_WORKERS;
    if (nw > j.p.nblocks)
        nw = j.p.nblocks ? (unsigned)j.p.nblocks : 1;
    worker *w = calloc(nw, sizeof *w);
    pthread_t *th = calloc(nw, sizeof *th);
    if (!w || !th) {
        free(w);
        free(th);
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
    }
    unsigned started = 0;
    for (unsigned i = 0; i < nw; i++) {
        w[i].j = &j;
        w[i].id = i;
        w[i].nworkers = nw;
    }
    for (unsigned i = 1; i < nw; i++) {
        if (pthread_create(&th[i], NULL, worker_main, &w[i]) != 0)
            break;
        started = i;
    }
    if (started + 1 < nw) { /* fewer threads: this thread runs the rest */
        for (unsigned i = started + 1; i < nw; i++)
            run_blocks(&w[i]);
    }
    run_blocks(&w[0]);
    for (unsigned i = 1; i <= started; i++)
        pthread_join(th[i], NULL);
    acc r;
    memset(&r, 0, sizeof r);
    dtcast_status st = DTCAST_OK;
    for (unsigned i = 0; i < nw; i++) {
        if (w[i].status != DTCAST_OK && st == DTCAST_OK) {
            st = w[i].status;
            *err = w[i].err;
        }
        acc_merge(&r, &w[i].r);
        side_bufs_free(&w[i].a);
        side_bufs_free(&w[i].b);
    }
    free(w);
    free(th);
    if (st != DTCAST_OK)
        return st;
    t->state = DT_DIFF_COMPARED;
    t->values = a->count * (uint64_t)j.p.parts;
    t->a.nan = r.nan_a;
    t->a.posinf = r.pinf_a;
    t->a.neginf = r.ninf_a;
    t->b.nan = r.nan_b;
    t->b.posinf = r.pinf_b;
    t->b.neginf = r.ninf_b;
    t->finite = r.finite;
    t->unequal = r.unequal;
    t->not_close = r.not_close;
    t->nonfinite_mismatch = r.nonfinite_mismatch;
    t->has_first_not_close = r.has_first;
    t->first_not_close = r.first;
    t->max_abs = r.max_abs;
    t->max_rel = r.max_rel;
    if (a->fortran && nontrivial > 1) { /* the indices were in file order */
        t->first_not_close = f_to_c(t->first_not_close, t->parts, a->ndim, a->dims);
        t->max_abs.index = f_to_c(t->max_abs.index, t->parts, a->ndim, a->dims);
        t->max_rel.index = f_to_c(t->max_rel.index, t->parts, a->ndim, a->dims);
        snprintf(t->note, sizeof t->note,
                 "Fortran order: first-occurrence ties follow the files' order");
    }
    t->sum_a2 = r.sa2;
    t->sum_err2 = r.se2;
    if (r.finite == 0)
        t->sqnr_db = NAN;
    else if (r.se2 == 0)
        t->sqnr_db = INFINITY;
    else if (r.sa2 == 0)
        t->sqnr_db = -INFINITY;
    else
        t->sqnr_db = (double)(10.0L * log10l(r.sa2 / r.se2));
    t->identical = j.check_bytes && !r.bytes_differ;
    return DTCAST_OK;
}

/* ---- the whole diff ------------------------------------------------------------------------------- */

void dt_diff_options_init(dt_diff_options *o)
{
    memset(o, 0, sizeof *o);
}

const char *dt_diff_state_name(dt_diff_state s)
{
    switch (s) {
    case DT_DIFF_COMPARED:
        return "compared";
    case DT_DIFF_MISSING:
        return "missing";
    case DT_DIFF_EXTRA:
        return "extra";
    case DT_DIFF_SHAPE:
        return "shape";
    case DT_DIFF_UNCOMPARABLE:
        return "uncomparable";
    }
    return "?";
}

static int is_close(const dt_diff_tensor *t)
{
    return t->state == DT_DIFF_COMPARED && t->not_close == 0;
}

/* Badness classes: 0 not compared, 1 NaN/Inf where the other side differs, 2 the rest. */
static int badness_class(const dt_diff_tensor *t)
{
    if (t->state != DT_DIFF_COMPARED)
        return 0;
    return t->nonfinite_mismatch ? 1 : 2;
}

static int by_badness(const void *x, const void *y)
{
    const dt_diff_tensor *a = *(const dt_diff_tensor *const *)x;
    const dt_diff_tensor *b = *(const dt_diff_tensor *const *)y;
    int ca = badness_class(a), cb = badness_class(b);
    if (ca != cb)
        return ca < cb ? -1 : 1;
    if (ca == 1 && a->nonfinite_mismatch != b->nonfinite_mismatch)
        return a->nonfinite_mismatch > b->nonfinite_mismatch ? -1 : 1;
    if (ca != 0) {
        /* SQNR ascending, NaN (no finite pair) first. */
        int na = isnan(a->sqnr_db), nb = isnan(b->sqnr_db);
        if (na != nb)
            return na ? -1 : 1;
        if (!na && a->sqnr_db != b->sqnr_db)
            return a->sqnr_db < b->sqnr_db ? -1 : 1;
        if (a->not_close != b->not_close)
            return a->not_close > b->not_close ? -1 : 1;
    }
    return strcmp(a->name, b->name);
}

static dtcast_status open_side(src *s, const char *path, const dt_diff_options *o,
                               dt_io_error *err)
{
    s->path = path;
    if (ends_with(path, ".npy")) {
        s->npy = 1;
        return open_npy(s, err);
    }
    if (ends_with(path, ".onnx"))
        return open_onnx(s, err);
    if (dt_gguf_path(path))
        return open_gguf(s, err);
    return open_ckpt(s, o, err);
}

static dtcast_status fill(dt_diff_result *r, const src *sa, const src *sb,
                          const dt_diff_options *o, dt_io_error *err)
{
    size_t cap = sa->n + sb->n;
    r->t = calloc(cap ? cap : 1, sizeof *r->t);
    if (!r->t)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
    size_t i = 0, k = 0;
    const int single = sa->npy && sb->npy; /* two arrays: paired whatever their names */
    uint64_t total = 0, done = 0;
    for (size_t n = 0; n < sa->n; n++)
        total += sa->t[n].count;
    for (size_t n = 0; n < sb->n; n++)
        total += sb->t[n].count;
    while (i < sa->n || k < sb->n) {
        if (o->progress && o->progress(o->progress_ctx, done, total))
            return dt_io_fail(err, DTCAST_ERR_IO, "cancelled");
        int c;
        if (single)
            c = 0;
        else if (i == sa->n)
            c = 1;
        else if (k == sb->n)
            c = -1;
        else
            c = strcmp(sa->t[i].name, sb->t[k].name);
        dt_diff_tensor *t = &r->t[r->n];
        const char *name = c <= 0 ? sa->t[i].name : sb->t[k].name;
        t->name = malloc(strlen(name) + 1);
        if (!t->name)
            return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
        strcpy(t->name, name);
        r->n++;
        t->sqnr_db = NAN;
        t->parts = 1;
        if (c < 0) {
            t->state = DT_DIFF_MISSING;
            done += sa->t[i].count;
            side_info(&t->a, &sa->t[i++]);
        } else if (c > 0) {
            t->state = DT_DIFF_EXTRA;
            done += sb->t[k].count;
            side_info(&t->b, &sb->t[k++]);
        } else {
            dtcast_status st = compare_pair(sa, sb, &sa->t[i], &sb->t[k], o, t, err);
            if (st != DTCAST_OK)
                return st;
            done += sa->t[i].count + sb->t[k].count;
            i++;
            k++;
        }
    }
    if (o->progress && o->progress(o->progress_ctx, done, total))
        return dt_io_fail(err, DTCAST_ERR_IO, "cancelled");
    return DTCAST_OK;
}

dtcast_status dt_diff_run(const char *a, const char *b, const dt_diff_options *o,
                          dt_diff_result *r, dt_io_error *err)
{
    memset(r, 0, sizeof *r);
    dt_diff_options defaults;
    if (!o) {
        dt_diff_options_init(&defaults);
        o = &defaults;
    }
    if (!(o->atol >= 0) || !(o->rtol >= 0))
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                          "the tolerances must be non-negative numbers");
    src sa, sb;
    memset(&sa, 0, sizeof sa);
    memset(&sb, 0, sizeof sb);
    dtcast_status st = open_side(&sa, a, o, err);
    if (st == DTCAST_OK)
        st = open_side(&sb, b, o, err);
    if (st == DTCAST_OK && sa.npy != sb.npy)
        st = dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                        "%s is a .npy and %s is not: diff compares two .npy files, two ONNX "
                        "models, or two checkpoints", sa.npy ? a : b, sa.npy ? b : a);
    if (st == DTCAST_OK && sa.onnx != sb.onnx)
        st = dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                        "%s is an ONNX model and %s is not: diff compares two .npy files, two "
                        "ONNX models, or two checkpoints", sa.onnx ? a : b, sa.onnx ? b : a);
    if (st == DTCAST_OK)
        st = fill(r, &sa, &sb, o, err);
    src_close(&sa);
    src_close(&sb);
    if (st == DTCAST_OK) {
        r->worst = malloc((r->n ? r->n : 1) * sizeof *r->worst);
        if (!r->worst)
            st = dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
    }
    if (st != DTCAST_OK) {
        dt_diff_result_free(r);
        return st;
    }
    r->atol = o->atol;
    r->rtol = o->rtol;
    for (size_t i = 0; i < r->n; i++) {
        const dt_diff_tensor *t = &r->t[i];
        r->worst[i] = i;
        r->missing += t->state == DT_DIFF_MISSING;
        r->extra += t->state == DT_DIFF_EXTRA;
        r->shape += t->state == DT_DIFF_SHAPE;
        r->uncomparable += t->state == DT_DIFF_UNCOMPARABLE;
        r->compared += t->state == DT_DIFF_COMPARED;
        r->not_close += t->state == DT_DIFF_COMPARED && !is_close(t);
        r->identical += t->identical != 0;
    }
    const dt_diff_tensor **order = malloc((r->n ? r->n : 1) * sizeof *order);
    if (!order) {
        dt_diff_result_free(r);
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (size_t i = 0; i < r->n; i++)
        order[i] = &r->t[i];
    qsort(order, r->n, sizeof *order, by_badness);
    for (size_t i = 0; i < r->n; i++)
        r->worst[i] = (size_t)(order[i] - r->t);
    free(order);
    r->ok = r->compared == r->n && r->not_close == 0;
    return DTCAST_OK;
}

void dt_diff_result_free(dt_diff_result *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->t[i].name);
    free(r->t);
    free(r->worst);
    memset(r, 0, sizeof *r);
}

void dt_diff_unravel(uint64_t index, int parts, int ndim, const int64_t *dims, int64_t *out,
                     int *part)
{
    uint64_t e = index / (uint64_t)(parts > 0 ? parts : 1);
    if (part)
        *part = (int)(index % (uint64_t)(parts > 0 ? parts : 1));
    for (int i = ndim - 1; i >= 0; i--) {
        uint64_t d = dims[i] > 0 ? (uint64_t)dims[i] : 1;
        out[i] = (int64_t)(e % d);
        e /= d;
    }
}

/* ---- JSON ---------------------------------------------------------------------------------------- */

static void put_double(dt_json_buf *b, double v)
{
    char s[40];
    if (isnan(v))
        dt_json_puts(b, "\"nan\"");
    else if (isinf(v))
        dt_json_puts(b, v > 0 ? "\"inf\"" : "\"-inf\"");
    else {
        snprintf(s, sizeof s, "%.17g", v);
        dt_json_puts(b, s);
    }
}

static void put_str(dt_json_buf *b, const char *s)
{
    size_t n = strlen(s);
    if (dt_json_utf8_check((const uint8_t *)s, n) != n)
        dt_json_puts(b, "null");
    else
        dt_json_put_string(b, s, n, 0);
}

static void put_shape(dt_json_buf *b, int ndim, const int64_t *dims)
{
    dt_json_puts(b, "[");
    for (int i = 0; i < ndim; i++) {
        if (i)
            dt_json_puts(b, ", ");
        dt_json_put_u64(b, (uint64_t)dims[i]);
    }
    dt_json_puts(b, "]");
}

static void put_index(dt_json_buf *b, const dt_diff_tensor *t, uint64_t index)
{
    int64_t idx[DT_MAX_DIMS];
    int part = 0;
    dt_diff_unravel(index, t->parts, t->a.ndim, t->a.dims, idx, &part);
    dt_json_puts(b, "\"index\": ");
    dt_json_put_u64(b, index);
    dt_json_puts(b, ", \"element\": ");
    put_shape(b, t->a.ndim, idx);
    if (t->parts == 2)
        dt_json_puts(b, part ? ", \"part\": \"imag\"" : ", \"part\": \"real\"");
}

static void put_worst(dt_json_buf *b, const char *key, const dt_diff_tensor *t,
                      const dt_diff_worst *w)
{
    dt_json_puts(b, ", \"");
    dt_json_puts(b, key);
    dt_json_puts(b, "\": ");
    if (!w->has) {
        dt_json_puts(b, "null");
        return;
    }
    dt_json_puts(b, "{\"error\": ");
    put_double(b, w->error);
    dt_json_puts(b, ", ");
    put_index(b, t, w->index);
    dt_json_puts(b, ", \"a\": ");
    put_double(b, w->a);
    dt_json_puts(b, ", \"b\": ");
    put_double(b, w->b);
    dt_json_puts(b, "}");
}

static void put_side(dt_json_buf *b, const char *key, const dt_diff_side *s, int compared)
{
    dt_json_puts(b, ", \"");
    dt_json_puts(b, key);
    dt_json_puts(b, "\": ");
    if (!s->present) {
        dt_json_puts(b, "null");
        return;
    }
    dt_json_puts(b, "{\"dtype\": ");
    const char *name = dtcast_type_name(s->type);
    put_str(b, name ? name : "?");
    dt_json_puts(b, ", \"dequantized\": ");
    if (s->layout)
        put_str(b, s->layout);
    else
        dt_json_puts(b, "null");
    dt_json_puts(b, ", \"shape\": ");
    put_shape(b, s->ndim, s->dims);
    dt_json_puts(b, ", \"elements\": ");
    dt_json_put_u64(b, s->count);
    if (compared) {
        dt_json_puts(b, ", \"nan\": ");
        dt_json_put_u64(b, s->nan);
        dt_json_puts(b, ", \"posinf\": ");
        dt_json_put_u64(b, s->posinf);
        dt_json_puts(b, ", \"neginf\": ");
        dt_json_put_u64(b, s->neginf);
    }
    dt_json_puts(b, "}");
}

static void put_tensor(dt_json_buf *b, const dt_diff_tensor *t)
{
    int c = t->state == DT_DIFF_COMPARED;
    dt_json_puts(b, "{\"name\": ");
    put_str(b, t->name);
    dt_json_puts(b, ", \"state\": ");
    put_str(b, dt_diff_state_name(t->state));
    put_side(b, "a", &t->a, c);
    put_side(b, "b", &t->b, c);
    dt_json_puts(b, ", \"dtype_changed\": ");
    dt_json_puts(b, t->a.present && t->b.present && (t->a.type != t->b.type ||
                                                       (t->a.layout != NULL) != (t->b.layout != NULL))
                        ? "true" : "false");
    if (c) {
        dt_json_puts(b, ", \"identical\": ");
        dt_json_puts(b, t->identical ? "true" : "false");
        dt_json_puts(b, ", \"close\": ");
        dt_json_puts(b, t->not_close == 0 ? "true" : "false");
        dt_json_puts(b, ", \"values\": ");
        dt_json_put_u64(b, t->values);
        dt_json_puts(b, ", \"finite\": ");
        dt_json_put_u64(b, t->finite);
        dt_json_puts(b, ", \"unequal\": ");
        dt_json_put_u64(b, t->unequal);
        dt_json_puts(b, ", \"not_close\": ");
        dt_json_put_u64(b, t->not_close);
        dt_json_puts(b, ", \"nonfinite_mismatch\": ");
        dt_json_put_u64(b, t->nonfinite_mismatch);
        dt_json_puts(b, ", \"first_not_close\": ");
        if (t->has_first_not_close) {
            dt_json_puts(b, "{");
            put_index(b, t, t->first_not_close);
            dt_json_puts(b, "}");
        } else {
            dt_json_puts(b, "null");
        }
        put_worst(b, "max_abs", t, &t->max_abs);
        put_worst(b, "max_rel", t, &t->max_rel);
        dt_json_puts(b, ", \"sqnr_db\": ");
        put_double(b, t->sqnr_db);
        dt_json_puts(b, ", \"sum_a2\": ");
        put_double(b, (double)t->sum_a2);
        dt_json_puts(b, ", \"sum_err2\": ");
        put_double(b, (double)t->sum_err2);
    }
    if (t->note[0]) {
        dt_json_puts(b, ", \"note\": ");
        put_str(b, t->note);
    }
    dt_json_puts(b, "}");
}

char *dt_diff_json(const dt_diff_result *r)
{
    dt_json_buf b;
    memset(&b, 0, sizeof b);
    dt_json_puts(&b, "{\"ok\": ");
    dt_json_puts(&b, r->ok ? "true" : "false");
    dt_json_puts(&b, ", \"atol\": ");
    put_double(&b, r->atol);
    dt_json_puts(&b, ", \"rtol\": ");
    put_double(&b, r->rtol);
    dt_json_puts(&b, ",\n \"summary\": {\"tensors\": ");
    dt_json_put_u64(&b, r->n);
    const struct {
        const char *key;
        size_t v;
    } counts[] = {{"compared", r->compared},   {"identical", r->identical},
                  {"not_close", r->not_close}, {"missing", r->missing},
                  {"extra", r->extra},         {"shape", r->shape},
                  {"uncomparable", r->uncomparable}};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        dt_json_puts(&b, ", \"");
        dt_json_puts(&b, counts[i].key);
        dt_json_puts(&b, "\": ");
        dt_json_put_u64(&b, counts[i].v);
    }
    dt_json_puts(&b, "},\n \"tensors\": [");
    for (size_t i = 0; i < r->n; i++) {
        dt_json_puts(&b, i ? ",\n  " : "\n  ");
        put_tensor(&b, &r->t[i]);
    }
    dt_json_puts(&b, "],\n \"worst\": [");
    for (size_t i = 0; i < r->n; i++) {
        if (i)
            dt_json_puts(&b, ", ");
        put_str(&b, r->t[r->worst[i]].name);
    }
    dt_json_puts(&b, "]}\n");
    dt_json_put(&b, "", 1);
    if (b.oom) {
        free(b.data);
        return NULL;
    }
    return b.data;
}
