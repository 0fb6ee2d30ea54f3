/* The progress line of the command line (cli.h): percent, GB/s and time left on stderr, redrawn
 * in place at most four times a second, only when stderr is a terminal (never in pipes or
 * logs), and only once the job has run for a second. The jobs count (files/progress.h); this
 * draws. */
#include "cli.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int draw(void *ctx, uint64_t done, uint64_t total)
{
    cli_progress_line *l = ctx;
    if (!l->enabled)
        return 0;
    double now = now_seconds(), elapsed = now - l->start;
    if (elapsed < 1.0 || now - l->last < 0.25)
        return 0;
    l->last = now;
    double rate = (double)done / elapsed; /* bytes per second */
    double left = rate > 0 && total > done ? (double)(total - done) / rate : 0;
    double pct = total ? 100.0 * (double)done / (double)total : 100.0;
    unsigned secs = (unsigned)(left + 0.5);
    fprintf(stderr, "\r%5.1f%%  %6.2f GB/s  %u:%02u left ", pct, rate * 1e-9, secs / 60,
            secs % 60);
    fflush(stderr);
    l->shown = 1;
    return 0;
}

void cli_progress_start(dt_progress *p, cli_progress_line *line, uint64_t total, int want)
{
    memset(line, 0, sizeof *line);
    line->enabled = want && isatty(STDERR_FILENO);
    line->start = line->last = now_seconds();
    dt_progress_init(p, total, draw, line);
}

void cli_progress_clear(dt_progress *p)
{
    cli_progress_line *l = p ? p->ctx : NULL;
    if (!l || !l->shown)
        return;
    fprintf(stderr, "\r%40s\r", "");
    fflush(stderr);
    l->shown = 0;
}
