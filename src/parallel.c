/* Runs an element loop over chunks on several threads. Chunks start at multiples of 8 elements
 * so that no two threads ever share a byte of packed sub-byte storage. */
#include "parallel.h"

#include <pthread.h>
#include <unistd.h>

/* Work is counted in units of one reference-path element (~30 ns; a fast kernel counts 16 bytes
 * read + written as one unit). Automatic: below this much work per thread a thread costs more
 * than it saves (65536 units: ~2 ms of reference work, or 1 MiB moved by a kernel). */
#define MIN_ELEMENTS_PER_THREAD (size_t)65536
/* Even when the caller asks for threads, each gets at least this much (64 KiB for a kernel). */
#define MIN_EXPLICIT_PER_THREAD (size_t)4096
#define MAX_THREADS 64

typedef struct chunk {
    dt_range_fn fn;
    void *ctx;
    size_t begin, end;
} chunk;

static void *run_chunk(void *arg)
{
    chunk *c = arg;
    c->fn(c->ctx, c->begin, c->end);
    return NULL;
}

/* sysconf reads /sys on every call (microseconds): ask once. */
static unsigned cpu_count;
static pthread_once_t cpu_count_once = PTHREAD_ONCE_INIT;

static void count_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_count = n < 1 ? 1u : n > MAX_THREADS ? MAX_THREADS : (unsigned)n;
}

static unsigned online_cpus(void)
{
    pthread_once(&cpu_count_once, count_cpus);
    return cpu_count;
}

unsigned dt_thread_count(unsigned requested, size_t count)
{
    const size_t by_size = count / MIN_ELEMENTS_PER_THREAD;
    if (requested == 0 && by_size < 2) /* automatic: small tensors stay on this thread */
        return 1;
    unsigned n = requested ? requested : online_cpus();
    if (n > MAX_THREADS)
        n = MAX_THREADS;
    if (requested == 0 && by_size < n)
        n = (unsigned)by_size;
    size_t by_floor = count / MIN_EXPLICIT_PER_THREAD;
    if (by_floor < n) /* asked for: small tensors still do not pay for threads */
        n = by_floor ? (unsigned)by_floor : 1;
    if ((size_t)n > count / 8 + 1)
        n = (unsigned)(count / 8 + 1);
    return n ? n : 1;
}

void dt_parallel_for(size_t count, unsigned threads, dt_range_fn fn, void *ctx)
{
    if (threads <= 1 || count < 16) {
        fn(ctx, 0, count);
        return;
    }
    chunk chunks[MAX_THREADS];
    pthread_t ids[MAX_THREADS];
    bool started[MAX_THREADS] = {false};
    size_t per = (count / threads + 7) & ~(size_t)7; /* a multiple of 8 elements */
    size_t begin = 0;
    unsigned n = 0;
    for (; n < threads && begin < count; n++) {
        size_t end = (n == threads - 1 || count - begin < per) ? count : begin + per;
        chunks[n] = (chunk){fn, ctx, begin, end};
        begin = end;
    }
    /* Chunk 0 runs here; a thread that cannot start runs its chunk here too. */
    for (unsigned i = 1; i < n; i++)
        started[i] = pthread_create(&ids[i], NULL, run_chunk, &chunks[i]) == 0;
    run_chunk(&chunks[0]);
    for (unsigned i = 1; i < n; i++) {
        if (started[i])
            pthread_join(ids[i], NULL);
        else
            run_chunk(&chunks[i]);
    }
}
