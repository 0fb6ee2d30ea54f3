/* What the jobs share (job.h). */
#include "files/job.h"

#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>

int dt_glob_match(const char *pattern, const char *name)
{
    return fnmatch(pattern, name, 0) == 0;
}

int dt_glob_any(const dt_globs *g, const char *name)
{
    for (int i = 0; i < g->n; i++)
        if (dt_glob_match(g->pattern[i], name))
            return 1;
    return 0;
}

void dt_job_warn(const dt_job_hooks *h, const char *fmt, ...)
{
    if (!h || !h->warn)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    h->warn(h->warn_ctx, line);
}

void dt_job_report(const dt_job_hooks *h, const char *text)
{
    if (h && h->report)
        h->report(h->report_ctx, text);
}

dtcast_status dt_job_fail(dt_io_error *err, int usage, dtcast_status status, const char *fmt, ...)
{
    if (!err)
        return status;
    char text[sizeof err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    dt_io_fail(err, status, "%s", text);
    err->usage = usage;
    return status;
}

void dt_text_append(char *buf, size_t size, size_t *used, const char *fmt, ...)
{
    if (*used >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *used, size - *used, fmt, ap);
    va_end(ap);
    if (n > 0)
        *used = *used + (size_t)n < size ? *used + (size_t)n : size - 1;
}

const char *dt_type_label(dtcast_type type, char *buf, size_t size)
{
    const char *name = dtcast_type_name(type);
    if (name)
        snprintf(buf, size, "%s", name);
    else
        snprintf(buf, size, "type %d", (int)type);
    return buf;
}

void dt_format_shape(char *buf, size_t size, int ndim, const int64_t *dims)
{
    if (ndim == 0) {
        snprintf(buf, size, "scalar");
        return;
    }
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < ndim && at < size; i++) {
        int n = snprintf(buf + at, size - at, "%s%lld", i ? "x" : "", (long long)dims[i]);
        if (n < 0)
            break;
        at += (size_t)n;
    }
}
