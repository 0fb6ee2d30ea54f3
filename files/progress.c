/* The progress line (progress.h). */
#include "files/progress.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double dt_progress_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void dt_progress_init(dt_progress *p, uint64_t total, int want)
{
    memset(p, 0, sizeof *p);
    p->enabled = want && isatty(STDERR_FILENO);
    p->total = total;
    p->start = p->last = dt_progress_now();
}

void dt_progress_add(dt_progress *p, uint64_t bytes)
{
    p->done += bytes;
    if (!p->enabled)
        return;
    double now = dt_progress_now(), elapsed = now - p->start;
    if (elapsed < 1.0 || now - p->last < 0.25)
        return;
    p->last = now;
    double rate = (double)p->done / elapsed; /* bytes per second */
    double left = rate > 0 && p->total > p->done ? (double)(p->total - p->done) / rate : 0;
    double pct = p->total ? 100.0 * (double)p->done / (double)p->total : 100.0;
    unsigned secs = (unsigned)(left + 0.5);
    fprintf(stderr, "\r%5.1f%%  %6.2f GB/s  %u:%02u left ", pct, rate * 1e-9, secs / 60,
            secs % 60);
    fflush(stderr);
    p->shown = 1;
}

void dt_progress_clear(dt_progress *p)
{
    if (!p->shown)
        return;
    fprintf(stderr, "\r%40s\r", "");
    fflush(stderr);
    p->shown = 0;
}
