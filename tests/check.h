/* A minimal test harness: each check prints "PASS name" or "FAIL name: why"; tests/run counts
 * the lines of every test program and prints the summary. */
#ifndef DTCAST_TESTS_CHECK_H
#define DTCAST_TESTS_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int check_failures;
static int check_passes;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static inline int check_report(int ok, const char *name, const char *fmt, ...)
{
    if (ok) {
        printf("PASS %s\n", name);
        check_passes++;
    } else {
        printf("FAIL %s: ", name);
        va_list ap;
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
        check_failures++;
    }
    fflush(stdout);
    return ok;
}

/* CHECK(cond, name, fmt, ...) reports one named check. */
#define CHECK(cond, name, ...) check_report((cond) ? 1 : 0, (name), __VA_ARGS__)

/* Exit status of a test program. */
#define CHECK_EXIT() (check_failures ? 1 : 0)

#endif
