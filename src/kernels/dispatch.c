/* Chooses a fast path for a conversion: the first registry entry (registry.c) of the best
 * instruction set allowed (cpu.c) that accepts the pair, else a chain of vector kernels, else a
 * chain of any kernels (compose.c), else a portable entry, else none (the reference path runs). */
#include "kernels.h"

#include <string.h>

static bool is_real(const dt_format *f) { return f->tc != DT_TC_COMPLEX && f->tc != DT_TC_STRING; }

bool dt_kernel_find_direct(dt_kernel *k, const dt_format *df, const dt_format *sf,
                           const dt_rules *r, size_t count, dt_isa lo)
{
    return is_real(sf) && is_real(df) && dt_registry_find(k, lo, dt_isa_active(), df, sf, r, count);
}

/* A chain of kernels of lo or better into a cleared k. */
static bool chain(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                  size_t count, dt_isa lo)
{
    memset(k, 0, sizeof *k);
    k->df = df;
    k->sf = sf;
    k->r = *r;
    return dt_kernel_find_chain(k, df, sf, r, count, lo);
}

bool dt_kernel_find(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                    size_t count)
{
    memset(k, 0, sizeof *k);
    if (sf->tc == DT_TC_STRING || df->tc == DT_TC_STRING)
        return false;
    (void)dt_mempath_get(); /* the profile (its prefetch distance) before any kernel runs */
    const bool real = is_real(sf) && is_real(df);
    const dt_isa isa = dt_isa_active();
    k->df = df;
    k->sf = sf;
    k->r = *r;
    if (r->round == DTCAST_ROUND_STOCHASTIC) /* its own entries, never a chain; never streamed
                                              * (stream.c calls blocks from index 0) */
        return real && dt_registry_find(k, DT_ISA_PORTABLE, isa, df, sf, r, count);
    /* a chain of vector kernels first where it is the faster (dt_chain_preferred) */
    bool found = dt_chain_preferred(df, sf, r, isa) &&
                 dt_kernel_find_chain(k, df, sf, r, count,
                                      isa > DT_ISA_PORTABLE ? DT_ISA_AVX2 : DT_ISA_PORTABLE);
    /* complex -> its own part type (the real part, through the rules): a registry entry where
     * an ISA has one (one pass, no chain) */
    const bool own_part = sf->tc == DT_TC_COMPLEX && dt_format_of(sf->part) == df;
    if (!found)
        found = (real || own_part) && isa > DT_ISA_PORTABLE &&
                dt_registry_find(k, DT_ISA_SSE2, isa, df, sf, r, count);
    /* then a chain of vector kernels, then a chain of any kernels */
    if (!found && isa > DT_ISA_PORTABLE)
        found = chain(k, df, sf, r, count, DT_ISA_AVX2);
    if (!found)
        found = chain(k, df, sf, r, count, DT_ISA_PORTABLE);
    if (!found && real)
        found = dt_registry_find(k, DT_ISA_PORTABLE, DT_ISA_PORTABLE, df, sf, r, count);
    /* a kernel that streams its own stores is not slowed by streaming, compute-bound or not */
    const bool direct = found && k->nt_capable && dt_mempath_get()->direct;
    k->stream = found && dt_stream_wanted(df, sf, k->compute_bound && !direct, count);
    k->nt = k->stream && direct;
    return found;
}
