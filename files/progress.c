/* Progress counting (progress.h). */
#include "files/progress.h"

#include <string.h>

void dt_progress_init(dt_progress *p, uint64_t total, dt_progress_fn fn, void *ctx)
{
    memset(p, 0, sizeof *p);
    p->total = total;
    p->fn = fn;
    p->ctx = ctx;
}

void dt_progress_add(dt_progress *p, uint64_t bytes)
{
    if (!p)
        return;
    p->done += bytes;
    if (p->fn && p->fn(p->ctx, p->done, p->total))
        p->cancelled = 1;
}

int dt_progress_cancelled(const dt_progress *p)
{
    return p && p->cancelled;
}
