/* The kernel registry: the entries of every instruction set, best first, and the finder's walk
 * over them (see kernels.h). */
#include "kernels.h"

#include <string.h>

static const dt_kernel_entry *const lists[] = {
#if defined(DT_HAVE_X86)
    dt_entries_stochastic_avx512,
    dt_entries_stochastic_avx2,
    dt_entries_avx512bf16,
    dt_entries_avx512fp16,
    dt_entries_avx512,
    dt_entries_widen8_avx2,
    dt_entries_avx2,
#endif
    dt_entries_stochastic,
    dt_entries_portable,
};

bool dt_entry_is_stochastic(const dt_kernel_entry *e)
{
    const dt_kernel_entry *const stochastic_lists[] = {
#if defined(DT_HAVE_X86)
        dt_entries_stochastic_avx512,
        dt_entries_stochastic_avx2,
#endif
        dt_entries_stochastic,
    };
    for (size_t l = 0; l < sizeof stochastic_lists / sizeof stochastic_lists[0]; l++)
        for (const dt_kernel_entry *s = stochastic_lists[l]; s->name; s++)
            if (s == e)
                return true;
    return false;
}

const dt_kernel_entry *dt_registry_entry(size_t i)
{
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++)
        for (const dt_kernel_entry *e = lists[l]; e->name; e++)
            if (i-- == 0)
                return e;
    return NULL;
}

bool dt_registry_setup(const dt_kernel_entry *e, dt_kernel *k, const dt_format *df,
                       const dt_format *sf, const dt_rules *r, size_t count)
{
    memset(k, 0, sizeof *k);
    if (dt_entry_is_stochastic(e) != (r->round == DTCAST_ROUND_STOCHASTIC))
        return false;
    k->df = df;
    k->sf = sf;
    k->r = *r;
    if (!e->setup(k, df, sf, r, count))
        return false;
    k->entry = e;
    return true;
}

bool dt_registry_find(dt_kernel *k, dt_isa lo, dt_isa hi, const dt_format *df,
                      const dt_format *sf, const dt_rules *r, size_t count)
{
    const dt_kernel_entry *e;
    for (size_t i = 0; (e = dt_registry_entry(i)) != NULL; i++)
        if (e->isa >= lo && e->isa <= hi && dt_registry_setup(e, k, df, sf, r, count))
            return true;
    return false;
}
