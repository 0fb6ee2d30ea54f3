/* The block loop of a streamed conversion (pipeline.h). */
#include "fileio/pipeline.h"

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

dtcast_status dt_stream_run(const dt_stream_job *job, dt_outfile *out, dt_io_error *err)
{
    size_t per = block_elements(job);
    int src_native = dt_layout_is_native(&job->src), dst_native = dt_layout_is_native(&job->dst);
    /* Four buffers when both sides need a transform; the native sides share theirs. */
    uint8_t *file_in = malloc(DT_BLOCK_BYTES), *file_out = malloc(DT_BLOCK_BYTES);
    uint8_t *src = src_native ? file_in : malloc(DT_BLOCK_BYTES);
    uint8_t *dst = !job->convert ? src : dst_native ? file_out : malloc(DT_BLOCK_BYTES);
    dtcast_status st = DTCAST_OK;
    if (!file_in || !file_out || !src || !dst)
        st = dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory for the block buffers");
    uint64_t at = job->offset;
    for (uint64_t first = 0; st == DTCAST_OK && first < job->count;) {
        size_t n = job->count - first < per ? (size_t)(job->count - first) : per;
        uint64_t in_bytes = 0, out_bytes = 0;
        dt_layout_bytes(&job->src, n, &in_bytes);
        dt_layout_bytes(&job->dst, n, &out_bytes);
        st = read_source(job, at, file_in, (size_t)in_bytes, err);
        if (st == DTCAST_OK && !src_native)
            st = dt_layout_load(&job->src, src, file_in, n, first, err);
        if (st == DTCAST_OK && job->convert) {
            dtcast_error e;
            memset(&e, 0, sizeof e);
            st = job->convert(job->convert_ctx, dst, src, n, &e);
            if (st != DTCAST_OK) {
                if (e.index != (size_t)-1 && e.message[0])
                    dt_io_fail(err, st, "%s (element %llu of the tensor)", e.message,
                               (unsigned long long)(first + e.index));
                else
                    dt_io_fail(err, st, "%s", e.message[0] ? e.message
                                                            : dtcast_status_string(st));
            }
        }
        if (st != DTCAST_OK)
            break;
        if (job->observe)
            job->observe(job->observe_ctx, src, dst, n);
        const uint8_t *write_from = dst;
        if (!dst_native || (!job->convert && !src_native)) {
            dt_layout_store(&job->dst, file_out, dst, n);
            write_from = file_out;
        }
        st = dt_outfile_write(out, write_from, (size_t)out_bytes, err);
        if (job->progress)
            dt_progress_add(job->progress, in_bytes);
        at += in_bytes;
        first += n;
    }
    if (dst != src && dst != file_out)
        free(dst);
    if (src != file_in)
        free(src);
    free(file_in);
    free(file_out);
    return st;
}

dtcast_status dt_stream_copy(dt_infile *in, uint64_t offset, uint64_t len, dt_outfile *out,
                             dt_progress *progress, dt_io_error *err)
{
    uint8_t *buf = malloc(DT_BLOCK_BYTES);
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
        done += n;
    }
    free(buf);
    return st;
}
