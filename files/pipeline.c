/* The block loop of a streamed conversion (pipeline.h).
 *
 * Writing a file costs the kernel more than reading and converting cost us, so a writer thread
 * writes block k while this thread reads and converts block k + 1 into the other of two buffer
 * sets. Blocks are written in order; the first error stops both. */
#include "files/pipeline.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Elements per block: a multiple of 64 (whole bytes of every packing, whole float6 groups of
 * four) whose widest form fits DT_BLOCK_BYTES. */
static size_t block_elements(const dt_stream_job *job)
{
    uint64_t widest = 64, bytes;
    const dt_layout native_src = {job->src.type, DT_STORE_NATIVE},
                    native_dst = {job->dst.type, DT_STORE_NATIVE};
    const dt_layout *forms[4] = {&job->src, &job->dst, &native_src, &native_dst};
    for (int i = 0; i < 4; i++)
        if (dt_layout_bytes(forms[i], 64, &bytes) == DTCAST_OK && bytes > widest)
            widest = bytes; /* bytes of 64 elements */
    return DT_BLOCK_BYTES / (size_t)widest * 64;
}

static dtcast_status read_source(const dt_stream_job *job, uint64_t at, void *buf, size_t len,
                                 dt_io_error *err)
{
    if (job->in)
        return dt_infile_read(job->in, at, buf, len, err);
    memcpy(buf, job->mem + at, len);
    return DTCAST_OK;
}

/* ---- the writer thread ------------------------------------------------------------------ */

typedef struct writer {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    dt_outfile *out;
    const uint8_t *buf; /* the block being written, NULL when idle */
    size_t len;
    int quit;
    dtcast_status status;
    dt_io_error err;
} writer;

static void *writer_main(void *arg)
{
    writer *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->buf && !w->quit)
            pthread_cond_wait(&w->changed, &w->lock);
        if (!w->buf)
            break;
        const uint8_t *buf = w->buf;
        size_t len = w->len;
        pthread_mutex_unlock(&w->lock);
        dt_io_error err = DT_IO_ERROR_INIT;
        dtcast_status st = dt_outfile_write(w->out, buf, len, &err);
        pthread_mutex_lock(&w->lock);
        if (st != DTCAST_OK && w->status == DTCAST_OK) {
            w->status = st;
            w->err = err;
        }
        w->buf = NULL;
        pthread_cond_broadcast(&w->changed);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* Waits until the previous block is written; returns the first write error. */
static dtcast_status writer_wait(writer *w, dt_io_error *err)
{
    pthread_mutex_lock(&w->lock);
    while (w->buf)
        pthread_cond_wait(&w->changed, &w->lock);
    dtcast_status st = w->status;
    if (st != DTCAST_OK)
        *err = w->err;
    pthread_mutex_unlock(&w->lock);
    return st;
}

/* Hands a block over after the previous one is written. */
static dtcast_status writer_submit(writer *w, const uint8_t *buf, size_t len, dt_io_error *err)
{
    dtcast_status st = writer_wait(w, err);
    if (st != DTCAST_OK)
        return st;
    pthread_mutex_lock(&w->lock);
    w->buf = buf;
    w->len = len;
    pthread_cond_broadcast(&w->changed);
    pthread_mutex_unlock(&w->lock);
    return DTCAST_OK;
}

static int writer_start(writer *w, dt_outfile *out)
{
    memset(w, 0, sizeof *w);
    w->out = out;
    if (pthread_mutex_init(&w->lock, NULL) != 0)
        return 0;
    if (pthread_cond_init(&w->changed, NULL) != 0) {
        pthread_mutex_destroy(&w->lock);
        return 0;
    }
    if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
        pthread_cond_destroy(&w->changed);
        pthread_mutex_destroy(&w->lock);
        return 0;
    }
    return 1;
}

static void writer_stop(writer *w)
{
    pthread_mutex_lock(&w->lock);
    w->quit = 1;
    pthread_cond_broadcast(&w->changed);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->changed);
    pthread_mutex_destroy(&w->lock);
}

/* ---- the loop ------------------------------------------------------------------------------ */

/* One set of block buffers: the file's bytes, and the elements in dtcast's layout before and
 * after the conversion. The native sides share a buffer. */
typedef struct block_set {
    uint8_t *file_in, *src, *dst, *file_out;
} block_set;

void dt_stream_buffers_free(dt_stream_buffers *b)
{
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 4; k++) {
            free(b->buf[i][k]);
            b->buf[i][k] = NULL;
        }
}

/* Buffer k of set i, allocated on first use and kept: a checkpoint of hundreds of tensors would
 * otherwise fault fresh pages in for every tensor (the kernel zeroes each one). */
static uint8_t *buffer(dt_stream_buffers *b, int i, int k)
{
    if (!b->buf[i][k])
        b->buf[i][k] = malloc(DT_BLOCK_BYTES);
    return b->buf[i][k];
}

static int set_take(block_set *s, dt_stream_buffers *b, int i, const dt_stream_job *job,
                    int src_native, int dst_native)
{
    s->file_in = buffer(b, i, 0);
    s->src = src_native ? s->file_in : buffer(b, i, 1);
    s->file_out = buffer(b, i, 2);
    s->dst = !job->convert ? s->src : dst_native ? s->file_out : buffer(b, i, 3);
    return s->file_in && s->src && s->file_out && s->dst;
}

/* Reads in_bytes at `at`, lays out and converts one block of n elements; *out and *out_len say
 * what to write. */
static dtcast_status convert_one(const dt_stream_job *job, block_set *b, uint64_t at,
                                 uint64_t in_bytes, uint64_t first, size_t n, int src_native,
                                 int dst_native, const uint8_t **out, size_t *out_len,
                                 dt_io_error *err)
{
    uint64_t out_bytes = 0;
    dt_layout_bytes(&job->dst, n, &out_bytes);
    /* open_ended: the block was read already (read_open_ended) */
    dtcast_status st = job->open_ended ? DTCAST_OK
                                       : read_source(job, at, b->file_in, (size_t)in_bytes, err);
    if (st == DTCAST_OK && !src_native)
        st = dt_layout_load(&job->src, b->src, b->file_in, n, first, err);
    if (st == DTCAST_OK && job->convert) {
        dtcast_error e;
        memset(&e, 0, sizeof e);
        st = job->convert(job->convert_ctx, b->dst, b->src, n, &e);
        if (st != DTCAST_OK && e.index != (size_t)-1 && e.message[0])
            return dt_io_fail(err, st, "%s (element %llu of the tensor)", e.message,
                              (unsigned long long)(first + e.index));
        if (st != DTCAST_OK)
            return dt_io_fail(err, st, "%s",
                              e.message[0] ? e.message : dtcast_status_string(st));
    }
    if (st != DTCAST_OK)
        return st;
    if (job->observe)
        job->observe(job->observe_ctx, b->src, b->dst, n);
    *out = b->dst;
    if (!dst_native) {
        dt_layout_store(&job->dst, b->file_out, b->dst, n);
        *out = b->file_out;
    }
    *out_len = (size_t)out_bytes;
    if (job->progress)
        dt_progress_add(job->progress, in_bytes);
    if (dt_progress_cancelled(job->progress))
        return dt_io_fail(err, DTCAST_ERR_IO, "cancelled");
    return DTCAST_OK;
}

/* open_ended: reads up to max elements of the pipe into buf; *n receives how many, *in_bytes
 * their bytes (fewer than max only at the end of the pipe, 0 at its end). */
static dtcast_status read_open_ended(const dt_stream_job *job, uint64_t at, uint8_t *buf,
                                     size_t max, size_t *n, uint64_t *in_bytes, dt_io_error *err)
{
    uint64_t want = 0;
    dt_layout_bytes(&job->src, max, &want);
    size_t got = 0;
    dtcast_status st = dt_infile_read_some(job->in, buf, (size_t)want, &got, err);
    if (st != DTCAST_OK)
        return st;
    *in_bytes = got;
    if (got == want) {
        *n = max;
        return DTCAST_OK;
    }
    unsigned stride = dt_stride_bits(job->src.type);
    if (job->src.store == DT_STORE_F6_PACKED) /* the most whole 6-bit elements in the bytes */
        *n = got / 3 * 4 + got % 3 * 8 / 6;
    else if (stride < 8)
        *n = got * (8 / stride);
    else if (got % (stride / 8) == 0)
        *n = got / (stride / 8);
    else
        return dt_io_at(dt_io_fail(err, DTCAST_ERR_BAD_FILE,
                                   "%s: %llu bytes is not a whole number of %s elements (%u "
                                   "bytes each): the last one is cut short",
                                   job->in->shown, (unsigned long long)(at + got),
                                   dtcast_type_name(job->src.type), stride / 8),
                        err, (size_t)(at + got - got % (stride / 8)));
    return DTCAST_OK;
}

dtcast_status dt_stream_run(const dt_stream_job *job, dt_outfile *out, dt_io_error *err)
{
    size_t per = block_elements(job);
    int src_native = dt_layout_is_native(&job->src), dst_native = dt_layout_is_native(&job->dst);
    /* One block: no thread. More: two buffer sets and the writer thread. */
    int sets = job->count > per || job->open_ended ? 2 : 1;
    dt_stream_buffers own = {{{NULL}}}, *bufs = job->buffers ? job->buffers : &own;
    block_set b[2];
    memset(b, 0, sizeof b);
    dtcast_status st = DTCAST_OK;
    for (int i = 0; i < sets; i++)
        if (!set_take(&b[i], bufs, i, job, src_native, dst_native))
            st = dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory for the block buffers");
    writer w;
    int threaded = st == DTCAST_OK && sets == 2 && writer_start(&w, out);
    uint64_t at = job->offset;
    int k = 0;
    uint64_t first = 0;
    for (; st == DTCAST_OK && (job->open_ended || first < job->count); k ^= sets - 1) {
        size_t n = job->count - first < per ? (size_t)(job->count - first) : per;
        const uint8_t *block = NULL;
        size_t len = 0;
        /* Set k was last written two blocks ago: the writer finished it before taking the
         * block after it (writer_submit waits for that). */
        uint64_t in_bytes = 0;
        if (job->open_ended) {
            st = read_open_ended(job, at, b[k].file_in, per, &n, &in_bytes, err);
            if (st != DTCAST_OK || n == 0)
                break;
        } else {
            dt_layout_bytes(&job->src, n, &in_bytes);
        }
        st = convert_one(job, &b[k], at, in_bytes, first, n, src_native, dst_native, &block, &len,
                         err);
        if (st == DTCAST_OK)
            st = threaded ? writer_submit(&w, block, len, err)
                          : dt_outfile_write(out, block, len, err);
        at += in_bytes;
        first += n;
        if (job->open_ended && n < per)
            break; /* the pipe ended */
    }
    if (job->counted)
        *job->counted = first;
    if (threaded) {
        dt_io_error werr = DT_IO_ERROR_INIT;
        dtcast_status wst = writer_wait(&w, &werr);
        if (st == DTCAST_OK && wst != DTCAST_OK) {
            st = wst;
            *err = werr;
        }
        writer_stop(&w);
    }
    dt_stream_buffers_free(&own);
    return st;
}

dtcast_status dt_stream_copy(dt_infile *in, uint64_t offset, uint64_t len, dt_outfile *out,
                             dt_stream_buffers *buffers, dt_progress *progress, dt_io_error *err)
{
    dt_stream_buffers own = {{{NULL}}}, *bufs = buffers ? buffers : &own;
    uint8_t *buf = buffer(bufs, 0, 0);
    if (!buf)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory for the block buffer");
    dtcast_status st = DTCAST_OK;
    for (uint64_t done = 0; st == DTCAST_OK && done < len;) {
        size_t n = len - done < DT_BLOCK_BYTES ? (size_t)(len - done) : DT_BLOCK_BYTES;
        st = dt_infile_read(in, offset + done, buf, n, err);
        if (st == DTCAST_OK)
            st = dt_outfile_write(out, buf, n, err);
        if (progress)
            dt_progress_add(progress, n);
        if (st == DTCAST_OK && dt_progress_cancelled(progress))
            st = dt_io_fail(err, DTCAST_ERR_IO, "cancelled");
        done += n;
    }
    dt_stream_buffers_free(&own);
    return st;
}

dtcast_status dt_library_convert_block(void *ctx, void *dst, const void *src, size_t count,
                                       dtcast_error *error)
{
    dt_library_convert *c = ctx;
    c->options.element_offset = c->next;
    c->next += count;
    dtcast_status st = dtcast_convert(dst, c->to, src, c->from, count, &c->options, error);
    if (st != DTCAST_OK || !c->clamp)
        return st;
    /* binary32: sign | 8-bit exponent | 23-bit fraction; |x| as bits orders like |x|, and
     * above the bits of Inf (0x7F800000) lie the NaNs, which keep their conversion */
    const uint8_t *s = src;
    uint8_t *d = dst;
    for (size_t i = 0; i < count; i++) {
        uint32_t x;
        memcpy(&x, s + 4 * i, 4);
        const uint32_t a = x & 0x7FFFFFFFu;
        uint16_t code;
        if (a != 0 && a < c->tiny)
            code = c->tiny_code;
        else if (a > c->big && a < 0x7F800000u)
            code = c->big_code;
        else
            continue;
        code = (uint16_t)(code | (x >> 16 & 0x8000u)); /* binary16's sign bit: x's */
        memcpy(d + 2 * i, &code, 2);
    }
    return DTCAST_OK;
}
