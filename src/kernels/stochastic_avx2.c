/* Stochastic rounding kernels for AVX2 (docs/conversion.md, "Stochastic rounding"). Compiled
 * for the target through function attributes only. */
#if defined(__x86_64__) && defined(__GNUC__)
#include "kernels.h"

const dt_kernel_entry dt_entries_stochastic_avx2[] = {
    {NULL, DT_ISA_PORTABLE, NULL},
};
#else
typedef int dt_stochastic_avx2_unused; /* ISO C: a translation unit is not empty */
#endif
