/* A parallel for over element ranges (parallel.c). */
#ifndef DTCAST_PARALLEL_H
#define DTCAST_PARALLEL_H

#include <stdbool.h>
#include <stddef.h>

typedef void (*dt_range_fn)(void *ctx, size_t begin, size_t end);

/* Threads to use for count elements: requested (0 = automatic: one per CPU, but none for
 * small inputs). */
unsigned dt_thread_count(unsigned requested, size_t count);
/* Calls fn(ctx, begin, end) over [0, count) split into at most `threads` chunks whose
 * boundaries are multiples of 8 elements; returns when all are done. */
void dt_parallel_for(size_t count, unsigned threads, dt_range_fn fn, void *ctx);

#endif
