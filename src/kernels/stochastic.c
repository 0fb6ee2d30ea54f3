/* Stochastic rounding kernels in plain C (docs/conversion.md, "Stochastic rounding"): the
 * registry entries that take DTCAST_ROUND_STOCHASTIC rules. Every other pair under that mode
 * runs the reference path. */
#include "kernels.h"

const dt_kernel_entry dt_entries_stochastic[] = {
    {NULL, DT_ISA_PORTABLE, NULL},
};
