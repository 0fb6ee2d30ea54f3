/* dtcast dequantize: a quantized checkpoint (every layout of docs/files.md, "Quantized
 * checkpoints", recognised by its tensor names) into a plain one. Streamed: one worker per CPU
 * takes the next band of rows of a tensor (whole tiles, about 2 MiB of output), reads its codes,
 * dequantizes them with the library and writes them at their place in the output file, so memory
 * stays bounded (a few MiB per worker) whatever the checkpoint's size. The tensors that are not
 * quantized are copied by the streaming pipeline (files/pipeline.c). */
#include "cli.h"
#include "files/pipeline.h"
#include "quant_files.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BYTES ((size_t)256 << 10) /* output bytes per chunk, about: still in L2 when written */

enum { OPT_QUIET = CLI_OPT_COMMAND, OPT_REPORT };

static const cli_option options[] = {
    {"help", 'h', 0, CLI_OPT_HELP},
    {"to", 't', 1, CLI_OPT_TO},
    {"report", 0, 0, OPT_REPORT},
    {"threads", 'T', 1, CLI_OPT_THREADS},
    {"quiet", 'q', 0, OPT_QUIET},
    {NULL, 0, 0, 0},
};

static const char help[] =
    "usage: dtcast dequantize [--to TYPE] [--report] IN OUT\n"
    "\n"
    "Dequantizes a quantized checkpoint into a plain one. IN is a .safetensors file (OUT then\n"
    "a .safetensors file), a sharded checkpoint's *.safetensors.index.json or a model folder\n"
    "(OUT a folder). The layouts are recognised by their tensor names:\n"
    "  block FP8 (DeepSeek-V3/R1, HF fine-grained FP8)  X.weight + X.weight_scale_inv\n"
    "  MXFP4 (gpt-oss)                 X_blocks + X_scales\n"
    "  MX (dtcast)                     X.weight + X.weight_scale (F8_E8M0)\n"
    "  NVFP4 (ModelOpt)                X.weight + X.weight_scale + X.weight_scale_2\n"
    "  NVFP4 (compressed-tensors)      X.weight_packed + X.weight_scale + X.weight_global_scale\n"
    "  FP8/INT8 (compressed-tensors)   X.weight + X.weight_scale (F32/BF16/F16)\n"
    "  INT4 groups (dtcast)            X.weight_packed + X.weight_scale (F32/BF16/F16)\n"
    "Each becomes one tensor X (X.weight) of TYPE; its activation scales (X.input_scale,\n"
    "X.input_global_scale) are dropped; every other tensor is copied as it is. The index is\n"
    "rewritten (weight_map, total_size), quantization_config is removed from config.json,\n"
    "hf_quant_config.json is dropped and the folder's other files are copied.\n"
    "\n"
    "Options:\n"
    "  -t, --to TYPE     bfloat16 (default), float16 or float32\n"
    "      --report      per quantized tensor, on stderr: its layout and its scales' range\n"
    "  -T, --threads N   threads (default: one per CPU, at most 32)\n"
    "  -q, --quiet       no progress line\n"
    "  -h, --help        show this help\n"
    "\n"
    "Examples:\n"
    "  dtcast dequantize DeepSeek-V3/ DeepSeek-V3-bf16/\n"
    "  dtcast dequantize --to float32 gpt-oss-20b/original/model.safetensors experts.safetensors\n";

typedef struct dq_request {
    const char *in, *out;
    dtcast_type to;
    int report, quiet;
    unsigned threads;
} dq_request;

/* ---- one quantized tensor, streamed --------------------------------------------------------- */

#define MAX_WORKERS 32 /* their buffers stay under 128 MiB */

/* A worker's buffers, kept from one tensor to the next. */
typedef struct dq_buffers {
    uint8_t *out;       /* the chunk dequantized */
    size_t out_size;
    uint8_t *f6;        /* float6 codes one per byte (rows whose length is not a multiple of 4) */
    size_t f6_size;
    uint8_t *in;        /* the chunk's codes, read from the file */
    size_t in_size;
} dq_buffers;

static int grow(uint8_t **buf, size_t *size, size_t need)
{
    if (*size >= need)
        return 1;
    uint8_t *p = realloc(*buf, need);
    if (!p)
        return 0;
    *buf = p;
    *size = need;
    return 1;
}

typedef struct dq_job {
    const dq_request *r;
    qf_ckpt *c;
    dq_buffers *bufs;   /* [workers] */
    unsigned workers;
    dt_progress *progress;
} dq_job;

static dtcast_type scale_type_of(const dt_qgroup *g, dtcast_type file_type)
{
    switch (g->layout) {
    case DT_QL_MXFP4_GPTOSS:
    case DT_QL_MX:
        return DTCAST_FLOAT8E8M0;
    default:
        return file_type;
    }
}

static void params_of(const dt_qgroup *g, const dq_request *r, dtcast_quant_params *p)
{
    dtcast_quant_params_init(p);
    p->threads = r->threads;
    p->axis = -1;
    p->element = g->element;
    switch (g->layout) {
    case DT_QL_FP8_BLOCK:
        p->scheme = DTCAST_SCHEME_FP8_BLOCK;
        p->variant = DTCAST_VARIANT_HF;
        p->block = g->block;
        p->block_rows = g->block_rows;
        break;
    case DT_QL_MXFP4_GPTOSS:
    case DT_QL_MX:
        p->scheme = DTCAST_SCHEME_MX;
        p->block = g->block;
        break;
    case DT_QL_NVFP4_MODELOPT:
        p->scheme = DTCAST_SCHEME_NVFP4;
        p->variant = DTCAST_VARIANT_MODELOPT;
        break;
    case DT_QL_NVFP4_CT:
        p->scheme = DTCAST_SCHEME_NVFP4;
        p->variant = DTCAST_VARIANT_CT;
        break;
    case DT_QL_ABSMAX:
    case DT_QL_INT4_GROUP:
        p->scheme = DTCAST_SCHEME_ABSMAX;
        p->variant = DTCAST_VARIANT_CT;
        p->block = g->block;
        p->per_tensor = g->per_tensor != 0;
        break;
    }
}

/* --report: the scales' range. */
static void report_scales(const dq_job *j, const dt_qgroup *g, const uint8_t *scales,
                          dtcast_type type, size_t count)
{
    float *f = malloc((count ? count : 1) * sizeof *f);
    if (!f)
        return;
    dtcast_error e;
    memset(&e, 0, sizeof e);
    if (dtcast_convert(f, DTCAST_FLOAT32, scales, type, count, NULL, &e) != DTCAST_OK) {
        free(f);
        return;
    }
    double lo = INFINITY, hi = -INFINITY;
    size_t zeros = 0, bad = 0;
    for (size_t i = 0; i < count; i++) {
        if (!isfinite(f[i])) {
            bad++;
            continue;
        }
        if (f[i] == 0)
            zeros++;
        if (f[i] < lo)
            lo = f[i];
        if (f[i] > hi)
            hi = f[i];
    }
    free(f);
    char name[1024], shape[160], tn[32];
    cli_escape(name, sizeof name, g->name);
    cli_format_shape(shape, sizeof shape, g->ndim, g->dims);
    cli_progress_clear(j->progress);
    fprintf(stderr, "%s: %s %s, %zu %s scales", name, dt_qlayout_name(g->layout), shape, count,
            cli_type_label(type, tn, sizeof tn));
    if (count > bad)
        fprintf(stderr, " in [%.6g, %.6g]", lo, hi);
    fprintf(stderr, ", %zu zero, %zu not finite", zeros, bad);
    if (g->global != DT_QT_NONE) {
        float gs;
        memcpy(&gs, qf_data(j->c, g->global), 4);
        fprintf(stderr, ", global %s %.9g",
                g->layout == DT_QL_NVFP4_CT ? "(divisor)" : "(multiplier)", (double)gs);
    }
    fprintf(stderr, "\n");
}

/* One tensor's chunks shared by the workers: each takes the next chunk, reads its codes,
 * dequantizes them (the library on this thread) and writes them at their place in the output
 * file, so the kernel's copies into the page cache run on every CPU too. */
typedef struct dq_tensor_job {
    dq_job *j;
    const dt_qgroup *g;
    dtcast_quant_params p;
    const char *what;
    const uint8_t *scales;
    dtcast_type stype;
    uint64_t srow, sbytes;
    float global;
    int64_t k;
    uint64_t n, step, per_mat, nchunks, row_out;
    int f6;
    int fd;
    uint64_t base; /* where the tensor starts in the output file */
    pthread_mutex_t lock;
    uint64_t next;
    int failed;
    char message[1400];
} dq_tensor_job;

typedef struct dq_worker {
    dq_tensor_job *t;
    dq_buffers *b;
} dq_worker;

static void tensor_fail(dq_tensor_job *t, const char *fmt, ...) CLI_PRINTF(2, 3);
static void tensor_fail(dq_tensor_job *t, const char *fmt, ...)
{
    pthread_mutex_lock(&t->lock);
    if (!t->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(t->message, sizeof t->message, fmt, ap);
        va_end(ap);
        t->failed = 1;
    }
    pthread_mutex_unlock(&t->lock);
}

static int write_at(int fd, const uint8_t *p, size_t len, uint64_t at)
{
    while (len) {
        ssize_t w = pwrite(fd, p, len, (off_t)at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EIO;
        p += w;
        len -= (size_t)w;
        at += (uint64_t)w;
    }
    return 0;
}

/* Chunk ci: rows [r0, r0 + nr) of matrix m (block FP8: whole tiles, or rows within one tile row,
 * which take that tile row's scales as an edge tile would; one matrix otherwise). */
static void run_chunk(dq_tensor_job *t, dq_buffers *b, uint64_t ci)
{
    const dt_qgroup *g = t->g;
    qf_ckpt *c = t->j->c;
    const dt_ckpt_tensor *cat = &c->ck.at[g->codes];
    const uint64_t m = ci / t->per_mat, r0 = ci % t->per_mat * t->step;
    const uint64_t nr = t->n - r0 < t->step ? t->n - r0 : t->step;
    const uint64_t row = m * t->n + r0, k = (uint64_t)t->k;
    uint64_t at, len;
    if (t->f6) {
        at = row * k / 4 * 3;
        len = (nr * k * 6 + 7) / 8;
    } else {
        uint64_t rb = g->element == DTCAST_FLOAT4E2M1 || g->element == DTCAST_INT4 ? (k + 1) / 2 : k;
        at = row * rb;
        len = nr * rb;
    }
    dt_io_error err = DT_IO_ERROR_INIT;
    const uint64_t out_len = nr * t->row_out, f6_len = nr * k;
    if (!grow(&b->in, &b->in_size, len + 1) || !grow(&b->out, &b->out_size, out_len + 1) ||
        (t->f6 && k % 4 && !grow(&b->f6, &b->f6_size, f6_len + 1))) {
        tensor_fail(t, "out of memory for the buffers of tensor '%s'", t->what);
        return;
    }
    /* Read, not mapped: the pages never count in this process's memory. */
    if (dt_infile_read(&c->ck.shards[cat->shard].file, cat->at + at, b->in, (size_t)len, &err) !=
        DTCAST_OK) {
        tensor_fail(t, "%s", err.message);
        return;
    }
    dtcast_quant_params p = t->p;
    dtcast_tensor codes = {b->in, (size_t)len, g->element, 2, {(int64_t)nr, t->k}};
    if (t->f6 && k % 4 == 0) {
        p.float6_packed = true;
    } else if (t->f6) {
        dt_st_f6_from_bytes(b->f6, b->in, (size_t)(nr * k));
        codes.data = b->f6;
        codes.bytes = (size_t)(nr * k);
    }
    dtcast_tensor sc;
    memset(&sc, 0, sizeof sc);
    sc.type = t->stype;
    if (g->layout == DT_QL_FP8_BLOCK) {
        const uint64_t br = (uint64_t)g->block_rows, trs = (t->n + br - 1) / br;
        const uint64_t t0 = m * trs + r0 / br, tn = (nr + br - 1) / br;
        sc.data = (void *)(t->scales + t0 * t->srow * t->sbytes);
        sc.bytes = (size_t)(tn * t->srow * t->sbytes);
        sc.ndim = 2;
        sc.shape[0] = (int64_t)tn;
        sc.shape[1] = (int64_t)t->srow;
    } else if (g->per_tensor) {
        sc.data = (void *)t->scales;
        sc.bytes = (size_t)t->sbytes;
        sc.ndim = 1;
        sc.shape[0] = 1;
    } else {
        sc.data = (void *)(t->scales + row * t->srow * t->sbytes);
        sc.bytes = (size_t)(nr * t->srow * t->sbytes);
        sc.ndim = 2;
        sc.shape[0] = (int64_t)nr;
        sc.shape[1] = (int64_t)t->srow;
    }
    float global = t->global;
    dtcast_tensor gs = {&global, 4, DTCAST_FLOAT32, 1, {1}};
    dtcast_tensor y;
    memset(&y, 0, sizeof y);
    y.data = b->out;
    y.bytes = (size_t)(nr * t->row_out);
    y.type = t->j->r->to;
    dtcast_error e;
    memset(&e, 0, sizeof e);
    if (dtcast_dequantize(&y, &codes, &sc, g->global != DT_QT_NONE ? &gs : NULL, &p, &e) !=
        DTCAST_OK) {
        tensor_fail(t, "%s: tensor '%s' (%s): %s", c->ck.shards[cat->shard].path, t->what,
                    dt_qlayout_name(g->layout), e.message);
        return;
    }
    int werr = write_at(t->fd, y.data, y.bytes, t->base + row * t->row_out);
    if (werr) {
        tensor_fail(t, "cannot write '%s' at byte %llu: %s", c->o.shard_path[cat->shard],
                    (unsigned long long)(t->base + row * t->row_out), strerror(werr));
        return;
    }
    pthread_mutex_lock(&t->lock);
    dt_progress_add(t->j->progress, len);
    pthread_mutex_unlock(&t->lock);
}

static void *worker_main(void *arg)
{
    dq_worker *w = arg;
    dq_tensor_job *t = w->t;
    for (;;) {
        pthread_mutex_lock(&t->lock);
        uint64_t ci = t->next;
        int stop = t->failed || ci >= t->nchunks;
        if (!stop)
            t->next++;
        pthread_mutex_unlock(&t->lock);
        if (stop)
            return NULL;
        run_chunk(t, w->b, ci);
    }
}

static int dequantize_group(dq_job *j, const dt_qgroup *g, dt_outfile *out)
{
    const dq_request *r = j->r;
    qf_ckpt *c = j->c;
    char what[1024];
    cli_escape(what, sizeof what, c->ck.t[g->codes].name);
    dq_tensor_job t;
    memset(&t, 0, sizeof t);
    t.j = j;
    t.g = g;
    t.what = what;
    params_of(g, r, &t.p);
    t.p.threads = 1; /* the workers are the threads */
    t.k = g->dims[g->ndim - 1];
    uint64_t rows = 1;
    for (int i = 0; i < g->ndim - 1; i++)
        rows *= (uint64_t)g->dims[i];
    /* The tile rows of block FP8 run within each matrix of the last two axes. */
    t.n = g->layout == DT_QL_FP8_BLOCK ? (uint64_t)g->dims[g->ndim - 2] : rows;
    const uint64_t mats = g->layout == DT_QL_FP8_BLOCK && t.n ? rows / t.n : 1;
    t.row_out = (uint64_t)t.k * (dtcast_type_bits(r->to) / 8);
    t.step = t.row_out ? CHUNK_BYTES / t.row_out : 1;
    if (t.step == 0)
        t.step = 1;
    if (g->layout == DT_QL_FP8_BLOCK) { /* whole tiles, or a part of one tile row */
        const uint64_t br = (uint64_t)g->block_rows;
        if (t.step >= br)
            t.step = t.step / br * br;
        else
            while (br % t.step)
                t.step--;
    }
    t.f6 = dtcast_type_bits(g->element) == 6;
    if (t.f6)
        t.step = (t.step + 3) / 4 * 4; /* whole groups of four in the packed stream */
    t.per_mat = t.n ? (t.n + t.step - 1) / t.step : 0;
    t.nchunks = mats * t.per_mat;
    /* The scales are small: read whole (aligned). The global scale too. */
    uint8_t *scales = qf_read(c, g->scales);
    if (!scales)
        return CLI_FAIL;
    t.scales = scales;
    t.stype = scale_type_of(g, c->ck.t[g->scales].type);
    const uint64_t scount = c->ck.at[g->scales].st->count;
    if (r->report)
        report_scales(j, g, scales, t.stype, (size_t)scount);
    if (g->global != DT_QT_NONE)
        memcpy(&t.global, qf_data(c, g->global), 4);
    const uint64_t units =
        g->layout == DT_QL_FP8_BLOCK
            ? mats * ((t.n + (uint64_t)g->block_rows - 1) / (uint64_t)g->block_rows)
            : (g->per_tensor ? 1 : rows);
    t.srow = units ? scount / units : 0;
    t.sbytes = (uint64_t)dtcast_type_bits(t.stype) / 8;
    t.fd = out->fd;
    t.base = out->written;
    int status = CLI_OK;
    if (pthread_mutex_init(&t.lock, NULL) != 0) {
        free(scales);
        return cli_fail("cannot make a lock");
    }
    unsigned nw = j->workers;
    if (nw > t.nchunks)
        nw = t.nchunks ? (unsigned)t.nchunks : 1;
    pthread_t threads[MAX_WORKERS];
    dq_worker w[MAX_WORKERS];
    unsigned started = 0;
    for (unsigned i = 1; i < nw; i++) { /* this thread is worker 0 */
        w[i] = (dq_worker){&t, &j->bufs[i]};
        if (pthread_create(&threads[i], NULL, worker_main, &w[i]) != 0)
            break;
        started = i;
    }
    w[0] = (dq_worker){&t, &j->bufs[0]};
    worker_main(&w[0]);
    for (unsigned i = 1; i <= started; i++)
        pthread_join(threads[i], NULL);
    pthread_mutex_destroy(&t.lock);
    free(scales);
    if (t.failed)
        return cli_fail("%s", t.message);
    /* The file position after the tensor, for the sequential writes that follow. */
    uint64_t bytes = rows * t.row_out;
    if (lseek(out->fd, (off_t)(t.base + bytes), SEEK_SET) < 0)
        status = cli_fail("cannot seek in '%s': %s", out->path, strerror(errno));
    out->written = t.base + bytes;
    return status;
}

/* ---- the checkpoint ----------------------------------------------------------------------- */

typedef struct shard_fill {
    dq_job *j;
    const dt_qplan *plan;
    size_t s;
    const size_t *tensor; /* output tensor k: the plain tensor, or the group's codes */
    dt_stream_buffers copy_bufs;
} shard_fill;

static dtcast_status fill_tensor(void *ctx, size_t k, dt_outfile *out, uint64_t nbytes,
                                 dt_io_error *err)
{
    shard_fill *f = ctx;
    qf_ckpt *c = f->j->c;
    size_t t = f->tensor[k];
    (void)nbytes;
    if (f->plan->role[t] == DT_QR_CODES)
        return dequantize_group(f->j, &f->plan->groups[f->plan->group[t]], out) == CLI_OK
                   ? DTCAST_OK
                   : dt_io_fail(err, DTCAST_ERR_IO, "%s", ""); /* printed */
    dtcast_status st = dt_stream_copy(&c->ck.shards[f->s].file, c->ck.at[t].at,
                                      c->ck.at[t].bytes, out, &f->copy_bufs, f->j->progress, err);
    if (st != DTCAST_OK) {
        dt_io_error inner = *err;
        dt_io_fail(err, st, "%s: tensor '%s': %s", c->ck.shards[f->s].path, c->ck.t[t].name,
                   inner.message);
        return dt_io_where(st, err, c->ck.shards[f->s].path, c->ck.t[t].name);
    }
    qf_release(c, f->s, c->ck.at[t].at, c->ck.at[t].bytes);
    return DTCAST_OK;
}

/* Shard s: the groups dequantized under their names, the other tensors copied. */
static int write_shard(dq_job *j, const dt_qplan *plan, size_t s, uint64_t *tensor_bytes)
{
    qf_ckpt *c = j->c;
    size_t n = 0;
    for (size_t i = 0; i < c->ck.n; i++)
        n += c->ck.at[i].shard == s && plan->role[i] != DT_QR_PART;
    dt_st_tensor *e = calloc(n ? n : 1, sizeof *e);
    size_t *tensor = calloc(n ? n : 1, sizeof *tensor);
    if (!e || !tensor) {
        free(e);
        free(tensor);
        return cli_fail("out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < c->ck.n; i++) {
        if (c->ck.at[i].shard != s || plan->role[i] == DT_QR_PART)
            continue;
        const dt_qgroup *g = plan->role[i] == DT_QR_CODES ? &plan->groups[plan->group[i]] : NULL;
        e[k].name = g ? g->name : (char *)c->ck.t[i].name;
        e[k].type = g ? j->r->to : c->ck.t[i].type;
        e[k].ndim = g ? g->ndim : c->ck.t[i].ndim;
        memcpy(e[k].dims, g ? g->dims : c->ck.t[i].dims, (size_t)e[k].ndim * sizeof e[k].dims[0]);
        tensor[k++] = i;
    }
    shard_fill f = {j, plan, s, tensor, {{{0}}}};
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st = dt_ckpt_out_shard(&c->o, s, e, n, fill_tensor, &f, tensor_bytes, &err);
    dt_stream_buffers_free(&f.copy_bufs);
    free(e);
    free(tensor);
    return qf_fail(c, st, &err);
}

typedef struct out_ref {
    const char *name;
    size_t tensor;
} out_ref;

static int by_ref_name(const void *a, const void *b)
{
    return strcmp(((const out_ref *)a)->name, ((const out_ref *)b)->name);
}

/* The index, config.json and the other files, then every output renamed into place. The new
 * weight_map: plain tensors as they were, a group under its new name in its codes'
 * shard, the scales gone. */
static int finish(qf_ckpt *c, const dt_qplan *plan, uint64_t total_size)
{
    if (!c->ck.has_index)
        return qf_finish(c, NULL, 0, total_size, NULL, 1);
    dt_st_index_entry *e = calloc(c->ck.ix.nentries ? c->ck.ix.nentries : 1, sizeof *e);
    if (!e)
        return cli_fail("out of memory");
    /* Tensor index by name, to find each index entry's role. */
    out_ref *refs = calloc(c->ck.n ? c->ck.n : 1, sizeof *refs);
    if (!refs) {
        free(e);
        return cli_fail("out of memory");
    }
    for (size_t i = 0; i < c->ck.n; i++)
        refs[i] = (out_ref){c->ck.t[i].name, i};
    qsort(refs, c->ck.n, sizeof *refs, by_ref_name);
    size_t k = 0;
    int status = CLI_OK;
    for (size_t i = 0; i < c->ck.ix.nentries; i++) {
        out_ref key = {c->ck.ix.entries[i].name, 0};
        const out_ref *ref = bsearch(&key, refs, c->ck.n, sizeof *refs, by_ref_name);
        if (!ref) {
            status = cli_fail("%s: the index names tensor '%s', which no shard holds",
                              c->ck.index_name, key.name);
            break;
        }
        if (c->ck.ix.shards[c->ck.ix.entries[i].shard] != c->ck.shards[c->ck.at[ref->tensor].shard].name &&
            strcmp(c->ck.ix.shards[c->ck.ix.entries[i].shard], c->ck.shards[c->ck.at[ref->tensor].shard].name)) {
            status = cli_fail("%s: the index puts tensor '%s' in %s, but it is in %s",
                              c->ck.index_name, key.name, c->ck.ix.shards[c->ck.ix.entries[i].shard],
                              c->ck.shards[c->ck.at[ref->tensor].shard].name);
            break;
        }
        if (plan->role[ref->tensor] == DT_QR_PART)
            continue;
        e[k] = c->ck.ix.entries[i];
        if (plan->role[ref->tensor] == DT_QR_CODES)
            e[k].name = plan->groups[plan->group[ref->tensor]].name;
        k++;
    }
    if (status == CLI_OK)
        status = qf_finish(c, e, k, total_size, NULL, 1);
    free(refs);
    free(e);
    return status;
}

static int run(const dq_request *r)
{
    qf_ckpt c;
    dt_qplan plan;
    memset(&plan, 0, sizeof plan);
    int status = qf_open(&c, "dequantize", r->in, r->out);
    dt_io_error err = DT_IO_ERROR_INIT;
    if (status == CLI_OK && dt_qplan_make(c.ck.t, c.ck.n, &plan, &err) != DTCAST_OK)
        status = cli_fail("%s: %s", r->in, err.message);
    if (status == CLI_OK && plan.ngroups == 0)
        cli_warn("%s: no quantized tensor found; the tensors are copied as they are", r->in);
    if (status == CLI_OK)
        status = qf_fail(&c, dt_ckpt_out_make_dir(&c.o, &err), &err);
    dt_progress progress;
    cli_progress_line line;
    cli_progress_start(&progress, &line, dt_ckpt_input_bytes(&c.ck), !r->quiet);
    dq_buffers bufs[MAX_WORKERS];
    memset(bufs, 0, sizeof bufs);
    /* Workers: --threads, else one per CPU. */
    unsigned workers = r->threads;
    if (workers == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        workers = cpus > 1 ? (unsigned)cpus : 1;
    }
    if (workers > MAX_WORKERS)
        workers = MAX_WORKERS;
    dq_job j = {r, &c, bufs, workers, &progress};
    uint64_t total = 0;
    for (size_t s = 0; status == CLI_OK && s < c.ck.nshards; s++)
        status = write_shard(&j, &plan, s, &total);
    cli_progress_clear(&progress);
    if (status == CLI_OK)
        status = finish(&c, &plan, total);
    for (unsigned i = 0; i < MAX_WORKERS; i++) {
        free(bufs[i].out);
        free(bufs[i].f6);
        free(bufs[i].in);
    }
    dt_qplan_free(&plan);
    qf_close(&c);
    return status;
}

int cmd_dequantize(int argc, char **argv)
{
    dq_request r;
    memset(&r, 0, sizeof r);
    r.to = DTCAST_BFLOAT16;
    cli_args a;
    const char *cmd = "dequantize";
    cli_args_init(&a, cmd, argc, argv, options);
    for (;;) {
        int id = cli_args_next(&a);
        if (id == CLI_ARG_END)
            break;
        if (id == CLI_ARG_ERROR)
            return CLI_USAGE;
        unsigned long v;
        switch (id) {
        case CLI_OPT_HELP:
            fputs(help, stdout);
            return CLI_OK;
        case CLI_ARG_POSITIONAL:
            if (cli_in_out(&a, &r.in, &r.out) != CLI_OK)
                return CLI_USAGE;
            break;
        case CLI_OPT_TO:
            if (cli_parse_type(cmd, "--to", a.value, &r.to) != CLI_OK)
                return CLI_USAGE;
            if (r.to != DTCAST_BFLOAT16 && r.to != DTCAST_FLOAT16 && r.to != DTCAST_FLOAT32)
                return cli_usage(cmd, "--to %s: dequantize writes bfloat16, float16 or float32",
                                 a.value);
            break;
        case OPT_REPORT:
            r.report = 1;
            break;
        case OPT_QUIET:
            r.quiet = 1;
            break;
        case CLI_OPT_THREADS:
            if (cli_parse_uint(cmd, "--threads", a.value, 4096, &v) != CLI_OK)
                return CLI_USAGE;
            r.threads = (unsigned)v;
            break;
        default:
            return cli_usage(cmd, "unexpected option");
        }
    }
    if (!r.in)
        return cli_usage(cmd, "missing IN and OUT");
    if (!r.out)
        return cli_usage(cmd, "missing OUT");
    return run(&r);
}
