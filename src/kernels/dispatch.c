/* Chooses a fast path for a conversion: the best instruction set allowed (cpu.c) that has a
 * kernel for the pair, else the portable kernels, else none (the reference path runs). */
#include "kernels.h"

#include <string.h>

bool dt_kernel_find(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                    size_t count)
{
    if (sf->tc == DT_TC_COMPLEX || df->tc == DT_TC_COMPLEX || sf->tc == DT_TC_STRING ||
        df->tc == DT_TC_STRING)
        return false;
    memset(k, 0, sizeof *k);
    k->df = df;
    k->sf = sf;
    k->r = *r;
    const dt_isa isa = dt_isa_active();
    (void)isa;
    bool found = false;
#if defined(DT_HAVE_X86)
    found = (isa >= DT_ISA_AVX512 && dt_find_avx512(k, df, sf, r, count)) ||
            (isa >= DT_ISA_AVX2 && dt_find_avx2(k, df, sf, r, count));
#endif
    if (!found)
        found = dt_find_portable(k, df, sf, r, count);
    k->stream = found && dt_stream_wanted(df, sf, k->compute_bound, count);
    return found;
}
