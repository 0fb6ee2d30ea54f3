/* Helpers shared by the kernel tests (test_kernels.c, test_kernels_stream.c, test_registry.c). */
#ifndef DTCAST_TESTS_KERNEL_UTIL_H
#define DTCAST_TESTS_KERNEL_UTIL_H

#include "internal.h"

#include <stddef.h>
#include <stdint.h>

/* xorshift64*: a fixed sequence per test program */
static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Du;
}

/* bytes of n elements of f */
static size_t bytes_for(const dt_format *f, size_t n) { return (n * (size_t)f->stride_bits + 7) / 8; }

/* Zeroes the padding bits after element n of a packed output (the caller's job, as convert.c's). */
static void clear_padding(const dt_format *f, uint8_t *p, size_t n)
{
    const size_t per = f->stride_bits < 8 ? 8u / (size_t)f->stride_bits : 1;
    if (per > 1 && n % per)
        p[n / per] &= (uint8_t)((1u << (n % per * (size_t)f->stride_bits)) - 1);
}

/* Every real type of the library's type table (dtcast_type_list(), without complex and string
 * types), in its order, into out (room for max); returns the count. */
static inline size_t real_types(dtcast_type *out, size_t max)
{
    dtcast_type all[64];
    const size_t n = dtcast_type_list(all, 64);
    size_t k = 0;
    for (size_t i = 0; i < n && i < 64; i++) {
        dtcast_info info;
        if (k < max && dtcast_type_info(all[i], &info, NULL) == DTCAST_OK &&
            info.kind != DTCAST_KIND_COMPLEX && info.kind != DTCAST_KIND_STRING)
            out[k++] = all[i];
    }
    return k;
}

/* The codes of a source of <= 16 bits to test: all of them, or under DTCAST_TEST_SCALE < 1
 * (valgrind, the sanitizer build) for sources wider than 8 bits every k-th code (k = 1/scale,
 * from offset off) plus the codes next to every exponent boundary (floats: the two lowest and two highest mantissas
 * of every exponent and sign) or next to the integer limits (256 codes at 0, the middle, the
 * top). Returns the count. */
static inline size_t sample_codes(const dt_format *sf, double scale, size_t off, uint64_t *codes)
{
    const size_t n = (size_t)1 << sf->bits;
    const size_t k = scale < 1 ? (size_t)(1 / scale + 0.5) : 1;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        bool keep = k <= 1 || sf->bits <= 8 || i % k == off % k;
        if (!keep && sf->tc == DT_TC_FLOAT) {
            const size_t mant = (size_t)1 << sf->man_bits, low = i & (mant - 1);
            keep = low < 2 || low + 2 >= mant;
        } else if (!keep) {
            keep = i < 256 || i >= n - 256 || (i >= n / 2 - 256 && i < n / 2 + 256);
        }
        if (keep)
            codes[m++] = i;
    }
    return m;
}

#endif
