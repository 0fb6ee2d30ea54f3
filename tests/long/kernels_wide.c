/* make check-long: every kernel variant (portable, AVX2, AVX-512 as this CPU has them) against
 * the reference path on >= 10^8 random plus edge values per 32/64-bit source pair (source type,
 * destination type), spread over the pair's rounding modes and overflow policies. The program
 * is tests/test_kernels.c's test_wide_sources at a larger scale: DTCAST_TEST_SCALE (default 420)
 * x 240000 random values per pair = 1.008 * 10^8, plus the edge values of every rule set. The
 * reference result is computed once per value and compared with every ISA's kernel; the work
 * runs on DTCAST_TEST_THREADS worker threads (default 2). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

static int kernels_main(void);
#define main kernels_main
#include "../test_kernels.c"
#undef main

int main(void)
{
    if (!getenv("DTCAST_TEST_SCALE"))
        setenv("DTCAST_TEST_SCALE", "420", 1);
    setenv("DTCAST_TEST_ONLY", "wide", 1);
    return kernels_main();
}
