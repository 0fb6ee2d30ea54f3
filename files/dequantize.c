/* The dequantize job (quantize.h): a quantized checkpoint (every layout of docs/files.md,
 * "Quantized checkpoints", recognised by its tensor names) into a plain one. Streamed: one
 * worker per CPU takes the next band of rows of a tensor (whole tiles, about 2 MiB of output),
 * reads its codes, dequantizes them with the library and writes them at their place in the
 * output file, so memory stays bounded (a few MiB per worker) whatever the checkpoint's size.
 * The tensors that are not quantized are copied by the streaming pipeline (pipeline.c). Never
 * prints. */
#include "files/quantize.h"

#include "files/pipeline.h"
#include "files/json.h"
#include "files/quant_job.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#if defined(__GNUC__)
#define DQ_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define DQ_PRINTF(f, a)
#endif

#define CHUNK_BYTES ((size_t)256 << 10) /* output bytes per chunk, about: still in L2 when written */

#define APPEND(line, used, ...) dt_text_append((line), sizeof(line), &(used), __VA_ARGS__)

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
    uint8_t *via;       /* the chunk in the product's type (compressed-tensors: the scale's) */
    size_t via_size;
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
    const dt_dequantize_request *r;
    dt_qf *c;
    dq_buffers *bufs;   /* [workers] */
    unsigned workers;
    dt_progress *progress;
} dq_job;


static void params_of(const dt_qgroup *g, const dt_dequantize_request *r, dtcast_quant_params *p)
{
    dt_qgroup_params(g, p);
    p->threads = r->threads;
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
    char shape[160], tn[32], line[2048];
    size_t used = 0;
    dt_format_shape(shape, sizeof shape, g->ndim, g->dims);
    APPEND(line, used, "%s: %s %s, %zu %s scales", g->name, dt_qgroup_name(g), shape,
           count, dt_type_label(type, tn, sizeof tn));
    if (count > bad)
        APPEND(line, used, " in [%.6g, %.6g]", lo, hi);
    APPEND(line, used, ", %zu zero, %zu not finite", zeros, bad);
    if (g->global != DT_QT_NONE) {
        float gs;
        memcpy(&gs, dt_ckpt_data(&j->c->ck, g->global), 4);
        APPEND(line, used, ", global %s %.9g",
               g->layout == DT_QL_NVFP4_CT ? "(divisor)" : "(multiplier)", (double)gs);
    }
    APPEND(line, used, "\n");
    dt_job_report(&j->r->hooks, line);
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
    uint64_t wpr;        /* pack-quantized: int32 words per row */
    int8_t *zp;          /* pack-quantized: the zero points [rows][zgroups], or NULL */
    dtcast_type via;     /* the type the producer rounds each product to before the output's
                          * (compressed-tensors: the scale's), or UNDEFINED */
    int has_post;        /* post: the second-level scale (musubi), multiplied in float32 */
    float post;
    uint64_t zgroups;
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

/* a x b in float32 (one rounding), the NaN of a first when both are NaN (docs/quantization.md,
 * "NaN signs") */
static float dt_mul_f32(float a, float b)
{
    if (a != a)
        return a + 0.0f;
    return a * b;
}

static void tensor_fail(dq_tensor_job *t, const char *fmt, ...) DQ_PRINTF(2, 3);
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
    dt_qf *c = t->j->c;
    const dt_ckpt_tensor *cat = &c->ck.at[g->codes];
    const uint64_t m = ci / t->per_mat, r0 = ci % t->per_mat * t->step;
    const uint64_t nr = t->n - r0 < t->step ? t->n - r0 : t->step;
    const uint64_t row = m * t->n + r0, k = (uint64_t)t->k;
    uint64_t at, len;
    if (g->packed_i32) { /* whole rows of int32 words */
        at = row * t->wpr * 4;
        len = nr * t->wpr * 4;
    } else if (t->f6) {
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
        ((t->f6 && k % 4) || g->packed_i32 ? !grow(&b->f6, &b->f6_size, f6_len + 1) : 0)) {
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
    if (g->deepseek_v4 && g->element == DTCAST_FLOAT4E2M1) /* -0 read as DeepSeek reads it */
        dt_qgroup_dsv4_codes(b->in, (size_t)len);
    dtcast_tensor codes = {b->in, (size_t)len, g->element, 2, {(int64_t)nr, t->k}};
    if (g->packed_i32) { /* int8 codes minus their zero points, one per byte */
        dt_qgroup_unpack_rows(g, b->in, row, nr, t->wpr, t->zp, t->zgroups, (int8_t *)b->f6);
        codes.data = b->f6;
        codes.bytes = (size_t)(nr * k);
    } else if (t->f6 && k % 4 == 0) {
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
    if (t->via != DTCAST_UNDEFINED) { /* the products rounded to t->via first */
        const size_t vb = (size_t)(nr * k) * (size_t)(dtcast_type_bits(t->via) / 8);
        if (!grow(&b->via, &b->via_size, vb + 1)) {
            tensor_fail(t, "out of memory for the buffers of tensor '%s'", t->what);
            return;
        }
        y.data = b->via;
        y.bytes = vb;
        y.type = t->via;
    }
    dtcast_error e;
    memset(&e, 0, sizeof e);
    dtcast_status dst = dtcast_dequantize(&y, &codes, &sc, g->global != DT_QT_NONE ? &gs : NULL,
                                          &p, &e);
    if (dst == DTCAST_OK && t->has_post) {
        float *v = (float *)(void *)b->via;
        for (uint64_t i = 0; i < nr * k; i++)
            v[i] = dt_mul_f32(v[i], t->post);
    }
    if (dst == DTCAST_OK && t->via != DTCAST_UNDEFINED) {
        dtcast_options o;
        dtcast_options_init(&o);
        o.threads = 1;
        dst = dtcast_convert(b->out, t->j->r->to, b->via, t->via, (size_t)(nr * k), &o, &e);
        y.data = b->out;
        y.bytes = (size_t)(nr * t->row_out);
    }
    if (dst != DTCAST_OK) {
        tensor_fail(t, "%s: tensor '%s' (%s): %s", c->ck.shards[cat->shard].path, t->what,
                    dt_qgroup_name(g), e.message);
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
    int cancelled = dt_progress_cancelled(t->j->progress);
    pthread_mutex_unlock(&t->lock);
    if (cancelled)
        tensor_fail(t, "cancelled");
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

/* ---- GPTQ and AWQ ----------------------------------------------------------------------------- */

/* A whole small tensor of the group (scales, zeros, g_idx) as float32 or as its bytes. */
static float *scales_f32(dt_qf *c, size_t i)
{
    uint8_t *raw = dt_qf_read(c, i);
    const uint64_t n = c->ck.at[i].st->count;
    float *f = raw ? malloc((size_t)n * sizeof *f + 1) : NULL;
    dtcast_error e;
    if (f && dtcast_convert(f, DTCAST_FLOAT32, raw, c->ck.t[i].type, (size_t)n, NULL, &e) !=
                 DTCAST_OK) {
        free(f);
        f = NULL;
    }
    if (raw && !f)
        FAIL(c, "out of memory for the scales '%s'", c->ck.t[i].name);
    free(raw);
    return f;
}

/* X.qweight (GPTQ, AWQ) into X.weight [N, K]: blocks of input rows, each row's products
 * (q - z) * s rounded to the scale's type as the producers' half-precision multiply rounds
 * them, then to the output type, written as N runs of the output rows. */
static int dequantize_gptq(dq_job *j, const dt_qgroup *g, dt_outfile *out)
{
    dt_qf *c = j->c;
    const dt_dequantize_request *r = j->r;
    const int64_t n = g->dims[0], k = g->dims[1], groups = c->ck.t[g->scales].dims[0];
    const int64_t per = 32 / g->bits;
    const dtcast_type stype = c->ck.t[g->scales].type, to = r->to;
    const uint64_t ob = (uint64_t)dtcast_type_bits(to) / 8;
    /* blocks of input rows: about 4 MiB of float32 products, a multiple of a word's rows */
    int64_t kc = n ? (int64_t)((4u << 20) / (uint64_t)(n * 4)) : k;
    kc = kc < per ? per : kc / per * per;
    if (kc > k)
        kc = k;
    float *scales = scales_f32(c, g->scales);
    uint8_t *zeros = scales ? dt_qf_read(c, g->zero_point) : NULL;
    int32_t *gidx = NULL;
    if (zeros && g->g_idx != DT_QT_NONE) {
        gidx = (int32_t *)(void *)dt_qf_read(c, g->g_idx);
        for (int64_t i = 0; gidx && i < k; i++)
            if (gidx[i] < 0 || gidx[i] >= groups) {
                FAIL_T(c, g->g_idx, "tensor '%s': g_idx[%lld] = %d is not a group of the %lld "
                       "scale rows", c->ck.t[g->g_idx].name, (long long)i, (int)gidx[i],
                       (long long)groups);
                free(gidx);
                gidx = NULL;
                free(zeros);
                zeros = NULL;
            }
    }
    const uint64_t wrow = g->layout == DT_QL_GPTQ ? (uint64_t)n * 4 : (uint64_t)(n / 8) * 4;
    const uint64_t rows_per_word = g->layout == DT_QL_GPTQ ? (uint64_t)per : 1;
    float *tile = zeros ? malloc((size_t)(n * kc) * sizeof *tile + 1) : NULL;
    uint8_t *via = tile ? malloc((size_t)(n * kc) * 4 + 1) : NULL;
    uint8_t *outb = via ? malloc((size_t)((uint64_t)(n * kc) * ob) + 1) : NULL;
    uint8_t *qrows = outb ? malloc((size_t)((uint64_t)kc / rows_per_word * wrow) + 1) : NULL;
    int status = JOB_OK;
    if (!qrows) {
        if (zeros && (g->g_idx == DT_QT_NONE || gidx))
            status = FAIL(c, "out of memory for the buffers of '%s'", g->name);
        else
            status = JOB_FAIL;
    }
    const dt_ckpt_tensor *cat = &c->ck.at[g->codes];
    const uint64_t base = out->written;
    dtcast_options o;
    dtcast_options_init(&o);
    dtcast_error e;
    for (int64_t k0 = 0; status == JOB_OK && k0 < k; k0 += kc) {
        const int64_t m = k - k0 < kc ? k - k0 : kc;
        const uint64_t at = (uint64_t)k0 / rows_per_word * wrow;
        const uint64_t len = ((uint64_t)m + rows_per_word - 1) / rows_per_word * wrow;
        dt_io_error err = DT_IO_ERROR_INIT;
        if (dt_infile_read(&c->ck.shards[cat->shard].file, cat->at + at, qrows, (size_t)len, &err) !=
            DTCAST_OK) {
            status = FAIL(c, "%s", err.message);
            break;
        }
        dt_qgroup_gptq_tile(g, qrows, k0, m, zeros, scales, gidx, tile);
        const size_t cnt = (size_t)(n * m);
        dtcast_status st = DTCAST_OK;
        if (stype != DTCAST_FLOAT32 && stype != to) { /* the product in the scale's type */
            if ((st = dtcast_convert(via, stype, tile, DTCAST_FLOAT32, cnt, &o, &e)) == DTCAST_OK)
                st = dtcast_convert(outb, to, via, stype, cnt, &o, &e);
        } else {
            st = dtcast_convert(outb, to, tile, DTCAST_FLOAT32, cnt, &o, &e);
        }
        if (st != DTCAST_OK) {
            status = FAIL_T(c, g->codes, "tensor '%s' (%s): %s", c->ck.t[g->codes].name,
                            dt_qgroup_name(g), e.message);
            break;
        }
        for (int64_t row = 0; row < n && status == JOB_OK; row++) {
            const int werr = write_at(out->fd, outb + (uint64_t)(row * m) * ob, (size_t)((uint64_t)m * ob),
                                      base + ((uint64_t)(row * k) + (uint64_t)k0) * ob);
            if (werr)
                status = FAIL(c, "cannot write '%s': %s", out->path, strerror(werr));
        }
        dt_progress_add(j->progress, len);
        if (dt_progress_cancelled(j->progress))
            status = FAIL(c, "cancelled");
    }
    free(qrows);
    free(outb);
    free(via);
    free(tile);
    free(gidx);
    free(zeros);
    free(scales);
    if (status != JOB_OK)
        return status;
    const uint64_t bytes = (uint64_t)(n * k) * ob;
    if (lseek(out->fd, (off_t)(base + bytes), SEEK_SET) < 0)
        return FAIL(c, "cannot seek in '%s': %s", out->path, strerror(errno));
    out->written = base + bytes;
    return JOB_OK;
}

static int dequantize_group(dq_job *j, const dt_qgroup *g, dt_outfile *out)
{
    if (g->layout == DT_QL_GPTQ || g->layout == DT_QL_AWQ)
        return dequantize_gptq(j, g, out);
    const dt_dequantize_request *r = j->r;
    dt_qf *c = j->c;
    char what[1024];
    snprintf(what, sizeof what, "%s", c->ck.t[g->codes].name);
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
    if (g->packed_i32) {
        t.wpr = (uint64_t)c->ck.t[g->codes].dims[c->ck.t[g->codes].ndim - 1];
        if (g->zero_point != DT_QT_NONE) {
            const dt_qt *zq = &c->ck.t[g->zero_point];
            t.zgroups = (uint64_t)zq->dims[zq->ndim - 1];
            uint8_t *packed = dt_qf_read(c, g->zero_point);
            if (!packed || !(t.zp = malloc((size_t)(rows * t.zgroups) + 1))) {
                free(packed);
                return packed ? FAIL(c, "out of memory for the zero points of '%s'", what)
                              : JOB_FAIL;
            }
            dt_qgroup_unpack_zero_points(g, packed, t.zgroups, t.zp);
            free(packed);
        }
    }
    t.nchunks = mats * t.per_mat;
    /* The scales are small: read whole (aligned). The global scale too. */
    uint8_t *scales = dt_qf_read(c, g->scales);
    if (!scales) {
        free(t.zp);
        return JOB_FAIL;
    }
    t.scales = scales;
    t.stype = dt_qgroup_scale_type(g, c->ck.t[g->scales].type);
    t.via = dt_qgroup_product_type(g, t.stype, r->to);
    if (g->post_scale != DT_QT_NONE) { /* float32(float32(code x scale) x scale2) */
        memcpy(&t.post, dt_ckpt_data(&c->ck, g->post_scale), 4);
        t.has_post = 1;
        t.via = DTCAST_FLOAT32;
    }
    const uint64_t scount = c->ck.at[g->scales].st->count;
    if (r->report)
        report_scales(j, g, scales, t.stype, (size_t)scount);
    if (g->global != DT_QT_NONE)
        memcpy(&t.global, dt_ckpt_data(&c->ck, g->global), 4);
    const uint64_t units =
        g->layout == DT_QL_FP8_BLOCK
            ? mats * ((t.n + (uint64_t)g->block_rows - 1) / (uint64_t)g->block_rows)
            : (g->per_tensor ? 1 : rows);
    t.srow = units ? scount / units : 0;
    t.sbytes = (uint64_t)dtcast_type_bits(t.stype) / 8;
    t.fd = out->fd;
    t.base = out->written;
    int status = JOB_OK;
    if (pthread_mutex_init(&t.lock, NULL) != 0) {
        free(scales);
        free(t.zp);
        return FAIL(c, "cannot make a lock");
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
    free(t.zp);
    if (t.failed)
        return FAIL_T(c, g->codes, "%s", t.message);
    /* The file position after the tensor, for the sequential writes that follow. */
    uint64_t bytes = rows * t.row_out;
    if (lseek(out->fd, (off_t)(t.base + bytes), SEEK_SET) < 0)
        status = FAIL(c, "cannot seek in '%s': %s", out->path, strerror(errno));
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
    dt_qf *c = f->j->c;
    size_t t = f->tensor[k];
    (void)nbytes;
    if (f->plan->role[t] == DT_QR_CODES)
        return dequantize_group(f->j, &f->plan->groups[f->plan->group[t]], out) == JOB_OK
                   ? DTCAST_OK
                   : DTCAST_ERR_BAD_FILE; /* the error is in err (c->err_out) */
    dtcast_status st = dt_stream_copy(&c->ck.shards[f->s].file, c->ck.at[t].at,
                                      c->ck.at[t].bytes, out, &f->copy_bufs, f->j->progress, err);
    if (st != DTCAST_OK) {
        dt_io_error inner = *err;
        dt_io_fail(err, st, "%s: tensor '%s': %s", c->ck.shards[f->s].path, c->ck.t[t].name,
                   inner.message);
        return dt_io_where(st, err, c->ck.shards[f->s].path, c->ck.t[t].name);
    }
    dt_ckpt_release(&c->ck, f->s, c->ck.at[t].at, c->ck.at[t].bytes);
    return DTCAST_OK;
}

/* Shard s: the groups dequantized under their names, the other tensors copied. */
static int write_shard(dq_job *j, const dt_qplan *plan, size_t s, uint64_t *tensor_bytes)
{
    dt_qf *c = j->c;
    size_t n = 0;
    for (size_t i = 0; i < c->ck.n; i++)
        n += c->ck.at[i].shard == s && plan->role[i] != DT_QR_PART;
    dt_st_tensor *e = calloc(n ? n : 1, sizeof *e);
    size_t *tensor = calloc(n ? n : 1, sizeof *tensor);
    if (!e || !tensor) {
        free(e);
        free(tensor);
        return FAIL(c, "out of memory");
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
    dtcast_status st = dt_ckpt_out_shard(&c->o, s, e, n, fill_tensor, &f, tensor_bytes,
                                         c->err_out);
    dt_stream_buffers_free(&f.copy_bufs);
    free(e);
    free(tensor);
    return dt_qf_status(c, st);
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
static int finish(dt_qf *c, const dt_qplan *plan, uint64_t total_size)
{
    if (!c->ck.has_index)
        return dt_qf_finish(c, NULL, 0, total_size, NULL, 1);
    dt_st_index_entry *e = calloc(c->ck.ix.nentries ? c->ck.ix.nentries : 1, sizeof *e);
    if (!e)
        return FAIL(c, "out of memory");
    /* Tensor index by name, to find each index entry's role. */
    out_ref *refs = calloc(c->ck.n ? c->ck.n : 1, sizeof *refs);
    if (!refs) {
        free(e);
        return FAIL(c, "out of memory");
    }
    for (size_t i = 0; i < c->ck.n; i++)
        refs[i] = (out_ref){c->ck.t[i].name, i};
    qsort(refs, c->ck.n, sizeof *refs, by_ref_name);
    size_t k = 0;
    int status = JOB_OK;
    for (size_t i = 0; i < c->ck.ix.nentries; i++) {
        out_ref key = {c->ck.ix.entries[i].name, 0};
        const out_ref *ref = bsearch(&key, refs, c->ck.n, sizeof *refs, by_ref_name);
        if (!ref) {
            status = FAIL(c, "%s: the index names tensor '%s', which no shard holds",
                              c->ck.index_name, key.name);
            break;
        }
        if (c->ck.ix.shards[c->ck.ix.entries[i].shard] != c->ck.shards[c->ck.at[ref->tensor].shard].name &&
            strcmp(c->ck.ix.shards[c->ck.ix.entries[i].shard], c->ck.shards[c->ck.at[ref->tensor].shard].name)) {
            status = FAIL(c, "%s: the index puts tensor '%s' in %s, but it is in %s",
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
    if (status == JOB_OK)
        status = dt_qf_finish(c, e, k, total_size, NULL, 1);
    free(refs);
    free(e);
    return status;
}

/* ---- config.json ------------------------------------------------------------------------------ */

/* An integer member of obj (a JSON integer, maybe negative), or `absent`. */
static int64_t json_int(const dt_json_doc *d, const dt_json_node *obj, const char *key,
                        int64_t absent)
{
    const dt_json_node *n = obj ? dt_json_get(d, obj, key) : NULL;
    if (!n || n->kind != DT_JSON_NUMBER)
        return absent;
    if (n->num == DT_JSON_NUM_UINT)
        return n->u > (uint64_t)INT64_MAX ? absent : (int64_t)n->u;
    return n->end - n->at == 2 && d->text[n->at] == '-' && d->text[n->at + 1] == '1' ? -1
                                                                                    : absent;
}

static const char *json_text(const dt_json_doc *d, const dt_json_node *obj, const char *key)
{
    const dt_json_node *n = obj ? dt_json_get(d, obj, key) : NULL;
    return n && n->kind == DT_JSON_STRING ? dt_json_str(d, n) : NULL;
}

/* The element type a hint's "format" names (ComfyUI's QUANT_ALGOS keys), UNDEFINED if none. */
static dtcast_type hint_format(const char *f)
{
    if (!f)
        return DTCAST_UNDEFINED;
    if (strcmp(f, "float8_e4m3fn") == 0)
        return DTCAST_FLOAT8E4M3FN;
    if (strcmp(f, "float8_e5m2") == 0)
        return DTCAST_FLOAT8E5M2;
    return DTCAST_UNDEFINED;
}

/* ComfyUI's hints against the tensors: each m.comfy_quant must be JSON whose "format" (when it
 * names an FP8 type) is m.weight's dtype; the header's _quantization_metadata must be JSON whose
 * "layers" are layers of the checkpoint, their "format" their weights' dtype. */
static int check_comfy_hints(dt_qf *c, const dt_qplan *plan)
{
    int status = JOB_OK;
    for (size_t gi = 0; gi < plan->ngroups && status == JOB_OK; gi++) {
        const dt_qgroup *g = &plan->groups[gi];
        if (g->extra[3] == DT_QT_NONE)
            continue;
        const size_t h = g->extra[3];
        const uint64_t n = c->ck.at[h].bytes;
        dt_json_doc d;
        memset(&d, 0, sizeof d);
        dt_io_error e = DT_IO_ERROR_INIT;
        if (c->ck.t[h].type != DTCAST_UINT8 ||
            dt_json_parse(dt_ckpt_data(&c->ck, h), (size_t)n, 0, c->ck.t[h].name, &d, &e) !=
                DTCAST_OK ||
            d.nodes[0].kind != DT_JSON_OBJECT) {
            status = FAIL_T(c, h, "tensor '%s': a comfy_quant hint must be U8 bytes of a JSON "
                            "object%s%s", c->ck.t[h].name, e.message[0] ? ": " : "", e.message);
        } else {
            const dtcast_type want = hint_format(json_text(&d, &d.nodes[0], "format"));
            const dtcast_type have = c->ck.t[g->codes].type;
            if (want != DTCAST_UNDEFINED && want != have)
                status = FAIL_T(c, h, "tensor '%s' says format \"%s\", but '%s' is %s",
                                c->ck.t[h].name, json_text(&d, &d.nodes[0], "format"),
                                c->ck.t[g->codes].name, dtcast_type_name(have));
        }
        dt_json_free(&d);
    }
    for (size_t s = 0; s < c->ck.nshards && status == JOB_OK; s++) {
        const dt_st_header *hd = &c->ck.shards[s].h;
        for (size_t m = 0; m < hd->nmeta && status == JOB_OK; m++) {
            if (strcmp(hd->meta[m].key, "_quantization_metadata") != 0)
                continue;
            const char *text = hd->meta[m].value;
            dt_json_doc d;
            memset(&d, 0, sizeof d);
            dt_io_error e = DT_IO_ERROR_INIT;
            if (dt_json_parse((const uint8_t *)text, strlen(text), 0, "_quantization_metadata", &d,
                              &e) != DTCAST_OK || d.nodes[0].kind != DT_JSON_OBJECT) {
                status = FAIL(c, "%s: __metadata__ _quantization_metadata is not a JSON object%s%s",
                              c->ck.shards[s].path, e.message[0] ? ": " : "", e.message);
                dt_json_free(&d);
                break;
            }
            const dt_json_node *layers = dt_json_get(&d, &d.nodes[0], "layers");
            for (const dt_json_node *l = layers && layers->kind == DT_JSON_OBJECT
                                             ? dt_json_first(&d, layers) : NULL;
                 l && status == JOB_OK; l = dt_json_next(&d, l)) {
                const char *layer = dt_json_key(&d, l);
                size_t ln = strlen(layer);
                char *wname = malloc(ln + 8);
                if (!wname) {
                    status = FAIL(c, "out of memory");
                    break;
                }
                memcpy(wname, layer, ln);
                memcpy(wname + ln, ".weight", 8);
                const size_t wi = dt_ckpt_find(&c->ck, wname);
                if (wi == DT_QT_NONE || wi >= c->ck.n) {
                    status = FAIL(c, "%s: _quantization_metadata names layer '%s', which the "
                                  "checkpoint does not hold ('%s')", c->ck.shards[s].path, layer,
                                  wname);
                } else if (l->kind == DT_JSON_OBJECT) {
                    const char *f = json_text(&d, l, "format");
                    const dtcast_type want = hint_format(f);
                    if (want != DTCAST_UNDEFINED && want != c->ck.t[wi].type)
                        status = FAIL(c, "%s: _quantization_metadata says layer '%s' is \"%s\", "
                                      "but '%s' is %s", c->ck.shards[s].path, layer, f, wname,
                                      dtcast_type_name(c->ck.t[wi].type));
                }
                free(wname);
            }
            dt_json_free(&d);
        }
    }
    return status;
}

/* DeepSeek's quantization_config (quant_method fp8: weight_block_size [R, C]) and V4's
 * expert_dtype against the tensors: every block-FP8 group's tiles R x C; "fp8" experts with FP4
 * codes, or an I8 / F8 X.weight without its X.scale where the config describes DeepSeek-V4, are
 * contradictions named with the key and the tensor. */
static int check_fp8_config(dt_qf *c, const dt_qplan *plan, const dt_json_doc *d,
                            const char *path)
{
    const dt_json_node *root = d->nnodes && d->nodes[0].kind == DT_JSON_OBJECT ? &d->nodes[0]
                                                                                : NULL;
    const dt_json_node *q = root ? dt_json_get(d, root, "quantization_config") : NULL;
    if (q && q->kind != DT_JSON_OBJECT)
        q = NULL;
    const char *method = json_text(d, q, "quant_method");
    const dt_json_node *wbs = q ? dt_json_get(d, q, "weight_block_size") : NULL;
    int64_t br = 0, bc = 0;
    if (wbs && wbs->kind == DT_JSON_ARRAY && wbs->count == 2) {
        const dt_json_node *a = dt_json_first(d, wbs), *b = a ? dt_json_next(d, a) : NULL;
        if (a && b && a->num == DT_JSON_NUM_UINT && b->num == DT_JSON_NUM_UINT) {
            br = (int64_t)a->u;
            bc = (int64_t)b->u;
        }
    }
    const char *experts = json_text(d, root, "expert_dtype");
    const char *sfmt = json_text(d, q, "scale_fmt");
    const int v4 = experts || (sfmt && strcmp(sfmt, "ue8m0") == 0);
    for (size_t i = 0; i < plan->ngroups; i++) {
        const dt_qgroup *g = &plan->groups[i];
        if (g->layout == DT_QL_FP8_BLOCK && method && strcmp(method, "fp8") == 0 && br > 0 &&
            (g->block_rows != br || g->block != bc))
            return FAIL(c, "%s: quantization_config says weight_block_size [%lld, %lld], but the "
                        "scales '%s' of '%s' are one per %lld x %lld tile", path, (long long)br,
                        (long long)bc, c->ck.t[g->scales].name, c->ck.t[g->codes].name,
                        (long long)g->block_rows, (long long)g->block);
        if (g->deepseek_v4 && g->element == DTCAST_FLOAT4E2M1 && experts &&
            strcmp(experts, "fp4") != 0)
            return FAIL(c, "%s: expert_dtype is \"%s\", but '%s' holds FP4 codes (I8, two per "
                        "byte) with F8_E8M0 scales per 32", path, experts, c->ck.t[g->codes].name);
    }
    for (size_t i = 0; v4 && i < c->ck.n; i++) {
        const dt_qt *t = &c->ck.t[i];
        const size_t len = strlen(t->name);
        if (plan->role[i] == DT_QR_PLAIN && len > 7 && strcmp(t->name + len - 7, ".weight") == 0 &&
            (t->type == DTCAST_INT8 || t->type == DTCAST_FLOAT8E4M3FN))
            return FAIL_T(c, i, "quantized tensor '%s' (%s) has no scale tensor '%.*sscale' "
                          "(config.json describes DeepSeek-V4's FP8/FP4 layout)", t->name,
                          dtcast_type_name(t->type), (int)(len - 6), t->name);
    }
    return JOB_OK;
}

/* compressed-tensors' config_groups against its pack-quantized tensors: some int group of the
 * config must have the tensor's bits (num_bits), group size (group_size, strategy "group") and
 * zero points (symmetric false: present; true: absent). */
static int check_ct_config(dt_qf *c, const dt_qplan *plan, const dt_json_doc *d,
                           const dt_json_node *q, const char *path)
{
    const char *method = json_text(d, q, "quant_method");
    const dt_json_node *groups = q ? dt_json_get(d, q, "config_groups") : NULL;
    if (!method || strcmp(method, "compressed-tensors") != 0 || !groups ||
        groups->kind != DT_JSON_OBJECT)
        return JOB_OK;
    for (size_t i = 0; i < plan->ngroups; i++) {
        const dt_qgroup *g = &plan->groups[i];
        if (!g->packed_i32)
            continue;
        const char *name = c->ck.t[g->codes].name;
        const char *why = NULL, *key = NULL;
        int candidates = 0;
        for (const dt_json_node *cg = dt_json_first(d, groups); cg; cg = dt_json_next(d, cg)) {
            const dt_json_node *w = cg->kind == DT_JSON_OBJECT ? dt_json_get(d, cg, "weights")
                                                               : NULL;
            if (!w || w->kind != DT_JSON_OBJECT)
                continue;
            const char *type = json_text(d, w, "type");
            if (type && strcmp(type, "int") != 0)
                continue;
            candidates++;
            const int64_t bits = json_int(d, w, "num_bits", 0), gs = json_int(d, w, "group_size", 0);
            const char *strategy = json_text(d, w, "strategy");
            const dt_json_node *sym = dt_json_get(d, w, "symmetric");
            if (bits && bits != g->bits) {
                why = "num_bits";
                key = "the words hold codes of another width";
            } else if (strategy && strcmp(strategy, "group") == 0 && gs > 0 && gs != g->block) {
                why = "group_size";
                key = "the scales' groups are of another size";
            } else if (sym && sym->kind == DT_JSON_FALSE && g->zero_point == DT_QT_NONE) {
                why = "symmetric";
                key = "symmetric false needs a weight_zero_point beside it";
            } else if (sym && sym->kind == DT_JSON_TRUE && g->zero_point != DT_QT_NONE) {
                why = "symmetric";
                key = "symmetric true has no zero points";
            } else {
                why = NULL;
                break; /* this config group describes the tensor */
            }
        }
        if (candidates && why)
            return FAIL(c, "%s: tensor '%s' (scales '%s') does not fit quantization_config's "
                        "config_groups: %s (%s; %d bits, groups of %lld, %s zero points)", path,
                        name, c->ck.t[g->scales].name, why, key, g->bits,
                        (long long)g->block, g->zero_point != DT_QT_NONE ? "with" : "no");
    }
    return JOB_OK;
}

/* What config.json's quantization_config says of the GPTQ and AWQ groups: GPTQ's zero offset
 * (checkpoint_format gptq_v2: none; else the v1 format's 1), and the bits and group size the
 * tensors must agree with; AWQ's version (only gemm's packing is read). A contradiction is an
 * error naming the tensor and the key. */
static int apply_config(dt_qf *c, dt_qplan *plan)
{
    if (!c->ck.has_config)
        return JOB_OK;
    char *path = dt_path_join(c->ck.dir, "config.json");
    uint8_t *text = NULL;
    size_t len = 0;
    dt_json_doc d;
    memset(&d, 0, sizeof d);
    dt_io_error err = DT_IO_ERROR_INIT;
    if (!path)
        return FAIL(c, "out of memory");
    if (dt_read_file(path, &text, &len, &err) != DTCAST_OK ||
        dt_json_parse(text, len, 0, path, &d, &err) != DTCAST_OK) {
        free(text);
        free(path);
        return FAIL(c, "%s", err.message);
    }
    const dt_json_node *q = d.nnodes && d.nodes[0].kind == DT_JSON_OBJECT
                                ? dt_json_get(&d, &d.nodes[0], "quantization_config")
                                : NULL;
    if (q && q->kind != DT_JSON_OBJECT)
        q = NULL;
    const char *method = json_text(&d, q, "quant_method");
    const char *format = json_text(&d, q, "checkpoint_format");
    if (!format)
        format = json_text(&d, q, "format");
    const char *version = json_text(&d, q, "version");
    const int64_t bits = json_int(&d, q, "bits", 0), gs = json_int(&d, q, "group_size", 0);
    int status = JOB_OK;
    for (size_t i = 0; i < plan->ngroups && status == JOB_OK; i++) {
        dt_qgroup *g = &plan->groups[i];
        if (g->layout != DT_QL_GPTQ && g->layout != DT_QL_AWQ)
            continue;
        const char *name = c->ck.t[g->codes].name;
        const char *want = g->layout == DT_QL_GPTQ ? "gptq" : "awq";
        if (method && strcmp(method, want) != 0)
            status = FAIL(c, "%s: tensor '%s' is %s-packed, but quantization_config says "
                          "quant_method \"%s\"", path, name, want, method);
        else if (bits > 0 && bits != g->bits)
            status = FAIL(c, "%s: tensor '%s' holds %d-bit codes, quantization_config says bits "
                          "%lld", path, name, g->bits, (long long)bits);
        else if (gs > 0 && (g->dims[1] + gs - 1) / gs != c->ck.t[g->scales].dims[0])
            status = FAIL(c, "%s: tensor '%s' has %lld groups of its %lld rows, quantization_config "
                          "says group_size %lld", path, c->ck.t[g->scales].name,
                          (long long)c->ck.t[g->scales].dims[0], (long long)g->dims[1],
                          (long long)gs);
        else if (gs == -1 && c->ck.t[g->scales].dims[0] != 1)
            status = FAIL(c, "%s: quantization_config says group_size -1 (one group), tensor "
                          "'%s' has %lld", path, c->ck.t[g->scales].name,
                          (long long)c->ck.t[g->scales].dims[0]);
        else if (g->layout == DT_QL_AWQ && version && strcmp(version, "gemm") != 0 &&
                 strcmp(version, "GEMM") != 0)
            status = FAIL(c, "%s: tensor '%s': AWQ version \"%s\" packs its words another way; "
                          "only gemm's is read", path, name, version);
        if (status == JOB_OK && gs > 0)
            g->block = gs;
        if (g->layout == DT_QL_GPTQ)
            g->zero_offset = format && strcmp(format, "gptq_v2") == 0 ? 0 : 1;
    }
    if (status == JOB_OK)
        status = check_fp8_config(c, plan, &d, path);
    if (status == JOB_OK)
        status = check_ct_config(c, plan, &d, q, path);
    dt_json_free(&d);
    free(text);
    free(path);
    return status;
}

dtcast_status dt_dequantize_checkpoint(const dt_dequantize_request *r, dt_io_error *err)
{
    dt_qf c;
    dt_qplan plan;
    memset(&plan, 0, sizeof plan);
    dt_io_error local = DT_IO_ERROR_INIT;
    if (!err)
        err = &local;
    int status = dt_qf_open(&c, "dequantize", r->in, r->out, err, &r->hooks);
    if (status == JOB_OK) /* ComfyUI's header hint describes the quantized tensors: not kept */
        c.o.drop_meta = "_quantization_metadata";
    dt_io_error perr = DT_IO_ERROR_INIT;
    if (status == JOB_OK && dt_qplan_make(c.ck.t, c.ck.n, &plan, &perr) != DTCAST_OK)
        status = FAIL(&c, "%s: %s", r->in, perr.message);
    if (status == JOB_OK)
        status = dt_qf_pack_shapes(&c, &plan);
    if (status == JOB_OK)
        status = apply_config(&c, &plan);
    if (status == JOB_OK)
        status = check_comfy_hints(&c, &plan);
    if (status == JOB_OK && plan.ngroups == 0)
        dt_job_warn(&r->hooks, "%s: no quantized tensor found; the tensors are copied as they are", r->in);
    if (status == JOB_OK)
        status = dt_qf_status(&c, dt_ckpt_out_make_dir(&c.o, err));
    dt_progress progress;
    dt_progress_init(&progress, dt_ckpt_input_bytes(&c.ck), r->hooks.progress,
                     r->hooks.progress_ctx);
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
    for (size_t s = 0; status == JOB_OK && s < c.ck.nshards; s++)
        status = write_shard(&j, &plan, s, &total);
    if (status == JOB_OK)
        status = finish(&c, &plan, total);
    for (unsigned i = 0; i < MAX_WORKERS; i++) {
        free(bufs[i].out);
        free(bufs[i].f6);
        free(bufs[i].in);
        free(bufs[i].via);
    }
    dt_qplan_free(&plan);
    dtcast_status result = dt_qf_result(&c, status);
    dt_qf_close(&c);
    return result;
}

