/* make check-long: every kernel variant against the reference path on >= 10^8 random plus edge
 * values per 32/64-bit source pair (spread over the pair's rounding modes and overflow
 * policies). The program is tests/test_kernels.c at a larger scale (DTCAST_TEST_SCALE, default
 * 400: 20000 x 400 = 8 * 10^6 random values per rule set, ~10^8 per pair). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

static int kernels_main(void);
#define main kernels_main
#include "../test_kernels.c"
#undef main

int main(void)
{
    if (!getenv("DTCAST_TEST_SCALE"))
        setenv("DTCAST_TEST_SCALE", "400", 1);
    setenv("DTCAST_TEST_ONLY", "wide", 1);
    return kernels_main();
}
