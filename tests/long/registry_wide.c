/* make check-long: every registry entry called directly against the reference path, as
 * tests/test_registry.c does, with DTCAST_TEST_SCALE (default 100) x 10^6 = 10^8 random plus
 * edge values per entry for the wide sources (sources of <= 16 bits stay exhaustive). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

static int registry_main(void);
#define main registry_main
#include "../test_registry.c"
#undef main

int main(void)
{
    if (!getenv("DTCAST_TEST_SCALE"))
        setenv("DTCAST_TEST_SCALE", "100", 1);
    return registry_main();
}
