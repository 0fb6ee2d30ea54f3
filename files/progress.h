/* Progress of a long job, counted in input bytes and reported to a callback (the command line
 * draws its progress line from it; files/ never prints). The callback's nonzero return cancels
 * the job: the streaming pipeline stops at the next block with a "cancelled" error. */
#ifndef DTCAST_FILES_PROGRESS_H
#define DTCAST_FILES_PROGRESS_H

#include <stdint.h>

/* Called after each block with the bytes done so far and the job's total; nonzero cancels. */
typedef int (*dt_progress_fn)(void *ctx, uint64_t done_bytes, uint64_t total_bytes);

typedef struct dt_progress {
    uint64_t total, done; /* input bytes */
    dt_progress_fn fn;    /* or NULL */
    void *ctx;
    int cancelled;        /* fn returned nonzero */
} dt_progress;

/* A count toward total, reported to fn (may be NULL). */
void dt_progress_init(dt_progress *p, uint64_t total, dt_progress_fn fn, void *ctx);
/* Adds bytes and calls fn (NULL p: nothing). */
void dt_progress_add(dt_progress *p, uint64_t bytes);
/* 1 when the callback asked to stop (NULL p: 0). */
int dt_progress_cancelled(const dt_progress *p);

#endif /* DTCAST_FILES_PROGRESS_H */
