/* The value scan of files/value_scan.h: a branch-free loop of signed integer masks and maxima
 * that the compiler vectorises (this file is built with -O3, as the portable kernels are: gcc's
 * -O2 cost model leaves the loop scalar). The scan then costs about a read of the data.
 *
 * One element, float32 (the 16-bit types the same in 16 bits, widened to int32):
 *
 *     s eeeeeeee mmmmmmmmmmmmmmmmmmmmmmm      s: the sign bit
 *     a   = bits & 0x7FFFFFFF                 the magnitude bits: 0 <= a < 2^31, so signed
 *                                             comparisons order them (SSE2 has no unsigned
 *                                             32-bit compare; pcmpgtd is signed)
 *     neg = bits >> 31  (arithmetic)          -1 for a negative value, else 0
 *     fin = -(a < 0x7F800000)                 -1 for a finite value (exponent not all ones)
 *     p   = a & ~neg & fin                    the magnitude of a finite positive value, else 0
 *     n   = a &  neg & fin                    ... of a finite negative value, else 0
 *     pmax = max(pmax, p), nmax = max(nmax, n), nonfinite |= ~fin
 *
 * A zero adds 0 to its sign's maximum, which means "none" there: exactly what the checks need
 * (a sign whose values are all zero has no magnitude to keep). */
#include "files/value_scan.h"

#include <string.h>

void dt_value_extremes_init(dt_value_extremes *x)
{
    x->pmax = x->nmax = 0;
    x->nonfinite = 0;
}

/* 16- and 32-bit elements: W the element type, BITS its width, INF its +Inf magnitude bits. */
#define TAKE_NARROW(W, BITS, INF)                                                              \
    do {                                                                                       \
        const W *q = p;                                                                        \
        int32_t pmax = 0, nmax = 0, nf = 0;                                                    \
        for (size_t i = 0; i < count; i++) {                                                   \
            W w;                                                                               \
            memcpy(&w, q + i, sizeof w);                                                       \
            /* the element's sign bit moved to bit 31, its magnitude below it */               \
            const int32_t s = (int32_t)((uint32_t)w << (32 - (BITS)));                         \
            const int32_t a = (int32_t)((uint32_t)w & ((UINT32_C(1) << ((BITS)-1)) - 1));      \
            const int32_t neg = s >> 31;                                                       \
            const int32_t fin = -(int32_t)(a < (int32_t)(INF));                                \
            const int32_t pv = a & ~neg & fin, nv = a & neg & fin;                             \
            pmax = pv > pmax ? pv : pmax;                                                      \
            nmax = nv > nmax ? nv : nmax;                                                      \
            nf |= ~fin;                                                                        \
        }                                                                                      \
        x->pmax = (uint64_t)pmax > x->pmax ? (uint64_t)pmax : x->pmax;                         \
        x->nmax = (uint64_t)nmax > x->nmax ? (uint64_t)nmax : x->nmax;                         \
        x->nonfinite |= nf != 0;                                                               \
    } while (0)

void dt_value_extremes_take(dt_value_extremes *x, dtcast_type type, const void *p, size_t count)
{
    if (type == DTCAST_FLOAT32) {
        TAKE_NARROW(uint32_t, 32, 0x7F800000);
    } else if (type == DTCAST_FLOAT16) {
        TAKE_NARROW(uint16_t, 16, 0x7C00);
    } else if (type == DTCAST_BFLOAT16) {
        TAKE_NARROW(uint16_t, 16, 0x7F80);
    } else if (type == DTCAST_FLOAT64) { /* 64-bit masks: the same steps in int64 */
        const uint64_t *q = p;
        int64_t pmax = 0, nmax = 0, nf = 0;
        for (size_t i = 0; i < count; i++) {
            uint64_t w;
            memcpy(&w, q + i, sizeof w);
            const int64_t a = (int64_t)(w & UINT64_C(0x7FFFFFFFFFFFFFFF));
            const int64_t neg = -(int64_t)(w >> 63);
            const int64_t fin = -(int64_t)(a < INT64_C(0x7FF0000000000000));
            const int64_t pv = a & ~neg & fin, nv = a & neg & fin;
            pmax = pv > pmax ? pv : pmax;
            nmax = nv > nmax ? nv : nmax;
            nf |= ~fin;
        }
        x->pmax = (uint64_t)pmax > x->pmax ? (uint64_t)pmax : x->pmax;
        x->nmax = (uint64_t)nmax > x->nmax ? (uint64_t)nmax : x->nmax;
        x->nonfinite |= nf != 0;
    }
}
