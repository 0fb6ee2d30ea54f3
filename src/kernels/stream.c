/* Large outputs: the kernel writes blocks into a buffer that stays in L1, and the block is then
 * copied to the destination with non-temporal stores (no read-for-ownership of destination
 * lines, no eviction of the caches for data nobody reads soon: what memcpy does for large
 * copies). The bytes written are the kernel's own, so the result is the same either way. */
#include "kernels.h"

#include <string.h>
#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#define DT_HAVE_STREAM 1
#endif

/* Output bytes per block, multiples of 64. Widening: 8 KiB, a sixth of L1d. Narrowing: 1 KiB,
 * so that the source's reads (8 KiB or more per block) pause only briefly for the copy (8 KiB
 * blocks made float32 -> float16 no faster; 1 KiB made it 1.36x faster). */
enum { BLOCK_BYTES = 8192, NARROW_BLOCK_BYTES = 1024 };

static size_t stream_threshold = (size_t)16 << 20; /* output bytes; about half of L3 here */

void dt_stream_threshold_set(size_t bytes) { stream_threshold = bytes ? bytes : ((size_t)16 << 20); }

/* Outputs at least as wide as their source (where the read-for-ownership of ordinary stores is
 * half or more of the traffic): 1.3-1.5x faster here. Narrowing outputs too, unless the kernel
 * is compute-bound (the narrowing template: there the copy costs what the streaming saves);
 * float32 -> float16, float64 -> float32, float64/int64 -> int8 gain 1.1-1.4x. */
bool dt_stream_wanted(const dt_format *df, const dt_format *sf, bool compute_bound, size_t count)
{
#if defined(DT_HAVE_STREAM)
    return (df->stride_bits >= sf->stride_bits || !compute_bound) &&
           count / 8 * (size_t)df->stride_bits >= stream_threshold;
#else
    (void)df;
    (void)sf;
    (void)compute_bound;
    (void)count;
    return false;
#endif
}

/* n bytes from the L1 buffer b to d: whole aligned 64-byte lines with streaming stores, the
 * partial lines at either end with ordinary ones */
void dt_copy_stream(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *b = src;
#if defined(DT_HAVE_STREAM)
    const size_t head = (size_t)(-(uintptr_t)d & 63);
    if (head >= n) {
        memcpy(d, b, n);
        return;
    }
    memcpy(d, b, head);
    size_t i = head;
    for (; i + 64 <= n; i += 64) {
        __m128i *p = (__m128i *)(void *)(d + i); /* 64-byte aligned */
        _mm_stream_si128(p, _mm_loadu_si128((const __m128i *)(const void *)(b + i)));
        _mm_stream_si128(p + 1, _mm_loadu_si128((const __m128i *)(const void *)(b + i + 16)));
        _mm_stream_si128(p + 2, _mm_loadu_si128((const __m128i *)(const void *)(b + i + 32)));
        _mm_stream_si128(p + 3, _mm_loadu_si128((const __m128i *)(const void *)(b + i + 48)));
    }
    memcpy(d + i, b + i, n - i);
#else
    memcpy(d, b, n);
#endif
}

void dt_stream_fence(void)
{
#if defined(DT_HAVE_STREAM)
    _mm_sfence();
#endif
}

void dt_kernel_run_stream(const dt_kernel *k, void *dst, const void *src, size_t begin,
                          size_t end)
{
    const size_t sbits = (size_t)k->sf->stride_bits, dbits = (size_t)k->df->stride_bits;
    const size_t block = dbits < sbits ? NARROW_BLOCK_BYTES : BLOCK_BYTES;
    const size_t per = block * 8 / dbits; /* elements per block: a multiple of 8 */
    _Alignas(64) uint8_t buf[BLOCK_BYTES];
    /* begin and every block start are multiples of 8: whole bytes of packed sources and
     * outputs; a block reads all of its source before the copy writes (in place works) */
    for (size_t i = begin; i < end; i += per) {
        const size_t n = end - i < per ? end - i : per;
        k->fn(k, buf, (const uint8_t *)src + i * sbits / 8, 0, n);
        dt_copy_stream((uint8_t *)dst + i * dbits / 8, buf, (n * dbits + 7) / 8);
    }
#if defined(DT_HAVE_STREAM)
    _mm_sfence(); /* the streamed lines are visible before another thread reads them */
#endif
}
