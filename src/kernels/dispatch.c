/* Chooses a fast path for a conversion: the best instruction set allowed (cpu.c) that has a
 * kernel for the pair, else a chain of kernels (compose.c), else the portable kernels, else
 * none (the reference path runs). */
#include "kernels.h"

#include <string.h>

static void kernel_init(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r)
{
    memset(k, 0, sizeof *k);
    k->df = df;
    k->sf = sf;
    k->r = *r;
}

static bool find_x86(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                     size_t count)
{
#if defined(DT_HAVE_X86)
    const dt_isa isa = dt_isa_active();
    return (isa >= DT_ISA_AVX512 && dt_find_avx512(k, df, sf, r, count)) ||
           (isa >= DT_ISA_AVX2 && dt_find_avx2(k, df, sf, r, count));
#else
    (void)k, (void)df, (void)sf, (void)r, (void)count;
    return false;
#endif
}

static bool is_real(const dt_format *f) { return f->tc != DT_TC_COMPLEX && f->tc != DT_TC_STRING; }

bool dt_kernel_find_direct(dt_kernel *k, const dt_format *df, const dt_format *sf,
                           const dt_rules *r, size_t count)
{
    if (!is_real(sf) || !is_real(df))
        return false;
    kernel_init(k, df, sf, r);
    return find_x86(k, df, sf, r, count) || dt_find_portable(k, df, sf, r, count);
}

bool dt_kernel_find(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                    size_t count)
{
    if (sf->tc == DT_TC_STRING || df->tc == DT_TC_STRING)
        return false;
    kernel_init(k, df, sf, r);
    bool found = is_real(sf) && is_real(df) && find_x86(k, df, sf, r, count);
    if (!found)
        found = dt_kernel_find_chain(k, df, sf, r, count);
    if (!found && is_real(sf) && is_real(df))
        found = dt_find_portable(k, df, sf, r, count);
    k->stream = found && dt_stream_wanted(df, sf, k->compute_bound, count);
    return found;
}
