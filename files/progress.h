/* Progress of a long job on stderr: percent, GB/s and time left, redrawn in place at most a few
 * times a second, only when stderr is a terminal (never in pipes or logs), and only once the job
 * has run for a second. */
#ifndef DTCAST_FILES_PROGRESS_H
#define DTCAST_FILES_PROGRESS_H

#include <stdint.h>

typedef struct dt_progress {
    int enabled;
    uint64_t total, done; /* input bytes */
    double start, last;   /* seconds */
    int shown;            /* a line is on the terminal */
} dt_progress;

/* enabled only if `want` and stderr is a terminal. */
void dt_progress_init(dt_progress *p, uint64_t total, int want);
void dt_progress_add(dt_progress *p, uint64_t bytes);
/* Clears the line (before other output, and at the end). */
void dt_progress_clear(dt_progress *p);
double dt_progress_now(void);

#endif /* DTCAST_FILES_PROGRESS_H */
