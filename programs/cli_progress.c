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

int cli_progress_draw(void *ctx, uint64_t done, uint64_t total)
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

void cli_progress_line_init(cli_progress_line *line, int want)
{
    memset(line, 0, sizeof *line);
    line->enabled = want && isatty(STDERR_FILENO);
    line->start = line->last = now_seconds();
}

void cli_progress_line_clear(cli_progress_line *l)
{
    if (!l || !l->shown)
        return;
    fprintf(stderr, "\r%40s\r", "");
    fflush(stderr);
    l->shown = 0;
}

void cli_progress_start(dt_progress *p, cli_progress_line *line, uint64_t total, int want)
{
    cli_progress_line_init(line, want);
    dt_progress_init(p, total, cli_progress_draw, line);
}

void cli_progress_clear(dt_progress *p)
{
    cli_progress_line_clear(p ? p->ctx : NULL);
}

void cli_print_warning(void *line, const char *text)
{
    cli_progress_line_clear(line);
    cli_warn("%s", text);
}

void cli_print_report(void *line, const char *text)
{
    cli_progress_line_clear(line);
    /* line by line, escaped as messages are (names come as the files hold them) */
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char raw[4096], shown[4 * sizeof raw];
        if (n >= sizeof raw)
            n = sizeof raw - 1;
        memcpy(raw, p, n);
        raw[n] = 0;
        cli_escape(shown, sizeof shown, raw);
        fprintf(stderr, "%s\n", shown);
        p = nl ? nl + 1 : p + strlen(p);
    }
}
