/* What the jobs of files/ share (docs/files.md, "The file layer as a library"): tensor name
 * patterns, the hooks through which a job reports progress, warnings and the text the user
 * asked for (it never prints), and the labels its messages use. */
#ifndef DTCAST_FILES_JOB_H
#define DTCAST_FILES_JOB_H

#include "dtcast.h"
#include "files/progress.h"
#include "files/tensor.h"

#include <stddef.h>
#include <stdint.h>

#define DT_MAX_GLOBS 64

/* Shell patterns (fnmatch) matched against tensor names (--select, --exclude). */
typedef struct dt_globs {
    int n;
    const char *pattern[DT_MAX_GLOBS];
} dt_globs;

/* 1 when name matches the shell pattern (fnmatch, no flags): THE tensor-name matcher. */
int dt_glob_match(const char *pattern, const char *name);
/* 1 when name matches one of g's patterns (none: 0). */
int dt_glob_any(const dt_globs *g, const char *name);

/* One line (no newline) for the user: a warning (the CLI prints "dtcast: warning: LINE"), or the
 * text a --report asked for (one or more lines, each ending in a newline). Names inside are as
 * the files hold them: the caller escapes what it shows. */
typedef void (*dt_text_fn)(void *ctx, const char *text);

/* How a job talks to its caller; every member may be NULL. */
typedef struct dt_job_hooks {
    dt_progress_fn progress; /* input bytes done of the total; nonzero return cancels */
    void *progress_ctx;
    dt_text_fn warn;         /* a warning line */
    void *warn_ctx;
    dt_text_fn report;       /* --report text */
    void *report_ctx;
} dt_job_hooks;

/* Sends a warning / report text through the hooks (nothing when the hook is NULL). */
void dt_job_warn(const dt_job_hooks *h, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void dt_job_report(const dt_job_hooks *h, const char *text);

/* Fails a job: the message into err (dt_io_fail), err->usage set when usage (the request itself
 * is wrong: the CLI's usage error); returns status. */
dtcast_status dt_job_fail(dt_io_error *err, int usage, dtcast_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* printf at buf + *used, *used advanced (a text longer than size is cut, NUL-terminated). */
void dt_text_append(char *buf, size_t size, size_t *used, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* A type's name for messages: its canonical name, or "type 123". */
const char *dt_type_label(dtcast_type type, char *buf, size_t size);
/* "2x3x4" (or "scalar"). */
void dt_format_shape(char *buf, size_t size, int ndim, const int64_t *dims);

#endif /* DTCAST_FILES_JOB_H */
