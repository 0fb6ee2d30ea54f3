/* The kernels' own streaming stores, for the AVX-512 kernel files (kernels_avx512.c,
 * kernels_avx512bf16.c, kernels_avx512fp16.c): one loop that every such kernel expands. Each
 * file defines FN (its target attributes) before using it. */
#ifndef DTCAST_KERNELS_LINES_NT_H
#define DTCAST_KERNELS_LINES_NT_H

#include <immintrin.h>
#include <stdint.h>

/* The kernels' own streaming stores (dt_kernel.nt: large outputs, the memory path's "direct"):
 * the output in whole aligned 64-byte lines, each written by one non-temporal store of a
 * register, with no block in L1 and no copy. PLAIN converts the partial lines at both ends
 * (the head up to the first line boundary, the tail); BODY(in, out) converts PER elements at in
 * into whole lines at out (aligned), stored with _mm512_stream_si512. An output not aligned to its
 * element size, or not streamed, goes through PLAIN whole.
 *
 *   dst:  |head (plain)|  line  |  line  |  ...  |  line  |tail (plain)|
 *                      ^ 64-byte boundary                  ^ fewer than PER elements left
 *
 * In place (dst == src, destination not wider) works: a line's source is read before its
 * store, and the line lies at or below the source still to be read. */
#define LINES_NT(name, PLAIN, PER, SB, DB, SETUP, BODY)                                          \
    static FN void name(const dt_kernel *k, void *dst, const void *src, size_t begin,            \
                        size_t end)                                                              \
    {                                                                                            \
        uint8_t *d = (uint8_t *)dst;                                                             \
        const uint8_t *sp = (const uint8_t *)src;                                                \
        if (!k->nt || ((uintptr_t)(d + begin * (DB)) % (DB)) != 0) {                             \
            PLAIN(k, dst, src, begin, end);                                                      \
            return;                                                                              \
        }                                                                                        \
        size_t i = begin + (size_t)(-(uintptr_t)(d + begin * (DB)) & 63) / (DB);                 \
        i = i < end ? i : end;                                                                   \
        PLAIN(k, dst, src, begin, i);                                                            \
        SETUP                                                                                    \
        for (; i + (PER) <= end; i += (PER)) {                                                   \
            dt_prefetch_span(sp + i * (SB), (PER) * (SB));                                       \
            BODY(sp + i * (SB), d + i * (DB));                                                   \
        }                                                                                        \
        PLAIN(k, dst, src, i, end);                                                              \
    }

/* one line from a register */
#define NT_LINE(LINE, in, out) _mm512_stream_si512((void *)(out), LINE(in))

#endif
