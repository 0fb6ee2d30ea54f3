/* The streaming conversion of one tensor: its elements are read from a file (or memory) in
 * blocks, brought into dtcast's layout, converted by the library on all threads, brought into
 * the output's layout and written. Memory: two sets of at most four buffers of DT_BLOCK_BYTES
 * (32 MiB), whatever the tensor's size. */
#ifndef DTCAST_FILES_PIPELINE_H
#define DTCAST_FILES_PIPELINE_H

#include "files/file.h"
#include "files/layout.h"
#include "files/progress.h"

#include <stdint.h>

#define DT_BLOCK_BYTES ((size_t)4 << 20)

/* Converts count elements from src (dtcast layout) into dst; error receives the message. */
typedef dtcast_status (*dt_convert_fn)(void *ctx, void *dst, const void *src, size_t count,
                                       dtcast_error *error);
/* Sees every block after its conversion (the report, the NaN/Inf watch). */
typedef void (*dt_observe_fn)(void *ctx, const void *src, const void *dst, size_t count);

/* The convert step of a conversion job: dtcast_convert from -> to under options, block after
 * block, with options.element_offset advanced so that stochastic rounding gives the bytes of one
 * call over the whole tensor (blocks come in order). Zero-initialise `next`. */
typedef struct dt_library_convert {
    dtcast_type from, to;
    dtcast_options options;
    uint64_t next; /* the tensor index of the next block's first element */
    /* float32 -> float16 under a converter's profile (files/cast.h): inputs with
     * 0 < |x| < tiny take the code of +-tiny, tiny and big as float32 bits of |x|, the codes
     * those of +tiny and +big */
    int clamp;
    uint32_t tiny, big;
    uint16_t tiny_code, big_code;
    const char *rule; /* the clamp in words, for the report */
} dt_library_convert;
dtcast_status dt_library_convert_block(void *ctx, void *dst, const void *src, size_t count,
                                       dtcast_error *error);

/* Block buffers kept from one tensor to the next (zero-initialise; free at the end). */
typedef struct dt_stream_buffers {
    uint8_t *buf[2][4];
} dt_stream_buffers;
void dt_stream_buffers_free(dt_stream_buffers *b);

typedef struct dt_stream_job {
    dt_infile *in;          /* the source file, or NULL when the elements are in memory */
    const uint8_t *mem;     /* ... here */
    uint64_t offset;        /* of the first element, in the file or in mem */
    dt_layout src;          /* how the source elements sit */
    uint64_t count;
    dt_layout dst;          /* how the output elements are written */
    dt_convert_fn convert;  /* NULL: the types are equal, the elements are copied */
    void *convert_ctx;
    dt_observe_fn observe;  /* optional */
    void *observe_ctx;
    dt_progress *progress;  /* optional: advanced by the source bytes of each block */
    dt_stream_buffers *buffers; /* optional: reused block buffers */
    int open_ended;         /* count unknown: the elements run to the end of `in` (a pipe of raw
                             * data, read forward from where it is); count is ignored. Input
                             * that ends inside an element is a BAD_FILE error naming the byte */
    uint64_t *counted;      /* open_ended (optional): receives the elements converted */
} dt_stream_job;

/* Runs the job, writing to out. Errors name the element or byte. */
dtcast_status dt_stream_run(const dt_stream_job *job, dt_outfile *out, dt_io_error *err);
/* Copies len bytes of in from offset to out unchanged. */
dtcast_status dt_stream_copy(dt_infile *in, uint64_t offset, uint64_t len, dt_outfile *out,
                             dt_stream_buffers *buffers, dt_progress *progress, dt_io_error *err);

#endif /* DTCAST_FILES_PIPELINE_H */
