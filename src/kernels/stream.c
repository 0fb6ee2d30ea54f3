/* Large outputs: the kernel writes blocks into a buffer that stays in L1, and the block is then
 * copied to the destination with non-temporal stores (no read-for-ownership of destination
 * lines, no eviction of the caches for data nobody reads soon: what memcpy does for large
 * copies). The bytes written are the kernel's own, so the result is the same either way.
 * Kernels that store non-temporally themselves (dt_kernel.nt) skip the block.
 *
 * The sizes and the store width come from the CPU's memory-path profile (mempath.c). */
#include "kernels.h"

#include <string.h>
#if defined(__x86_64__) && defined(__SSE2__) && defined(__GNUC__)
#include <immintrin.h>
#include "x86_attrs.h"
#define DT_HAVE_STREAM 1
#endif

static size_t stream_threshold = 0; /* 0: the profile's */

void dt_stream_threshold_set(size_t bytes) { stream_threshold = bytes; }

/* Outputs at least as wide as their source (where the read-for-ownership of ordinary stores is
 * half or more of the traffic): 1.3-1.5x faster on AMD Zen. Narrowing outputs too, unless the
 * kernel is compute-bound (the narrowing template: there the copy costs what the streaming
 * saves); float32 -> float16, float64 -> float32, float64/int64 -> int8 gain 1.1-1.4x. */
bool dt_stream_wanted(const dt_format *df, const dt_format *sf, bool compute_bound, size_t count)
{
#if defined(DT_HAVE_STREAM)
    const size_t min = stream_threshold ? stream_threshold : dt_mempath_get()->stream_min;
    return (df->stride_bits >= sf->stride_bits || !compute_bound) &&
           count / 8 * (size_t)df->stride_bits >= min;
#else
    (void)df;
    (void)sf;
    (void)compute_bound;
    (void)count;
    return false;
#endif
}

#if defined(DT_HAVE_STREAM)
/* The whole aligned 64-byte lines of [d, d + n) from b, one line per iteration: 4, 2 or 1
 * streaming stores a line (the profile's copy_width). */
static void lines16(uint8_t *d, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i += 64) {
        __m128i *p = (__m128i *)(void *)(d + i);
        _mm_stream_si128(p, _mm_loadu_si128((const __m128i *)(const void *)(b + i)));
        _mm_stream_si128(p + 1, _mm_loadu_si128((const __m128i *)(const void *)(b + i + 16)));
        _mm_stream_si128(p + 2, _mm_loadu_si128((const __m128i *)(const void *)(b + i + 32)));
        _mm_stream_si128(p + 3, _mm_loadu_si128((const __m128i *)(const void *)(b + i + 48)));
    }
}

DT_TARGET_AVX2 static void lines32(uint8_t *d, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i += 64) {
        __m256i *p = (__m256i *)(void *)(d + i);
        _mm256_stream_si256(p, _mm256_loadu_si256((const __m256i *)(const void *)(b + i)));
        _mm256_stream_si256(p + 1, _mm256_loadu_si256((const __m256i *)(const void *)(b + i + 32)));
    }
}

DT_TARGET_AVX512 static void lines64(uint8_t *d, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i += 64)
        _mm512_stream_si512((void *)(d + i), _mm512_loadu_si512((const void *)(b + i)));
}
#endif

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
    const size_t body = (n - head) & ~(size_t)63;
    switch (dt_mempath_get()->copy_width) {
    case 64: lines64(d + head, b + head, body); break;
    case 32: lines32(d + head, b + head, body); break;
    default: lines16(d + head, b + head, body); break;
    }
    memcpy(d + head + body, b + head + body, n - head - body);
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
    const dt_mempath *m = dt_mempath_get();
    if (k->nt) { /* the kernel's own streaming stores (dt_kernel_find) */
        k->fn(k, dst, src, begin, end);
        dt_stream_fence();
        return;
    }
    const size_t block = dbits < sbits ? m->block_narrow : m->block_wide;
    const size_t per = block * 8 / dbits; /* elements per block: a multiple of 8 */
    _Alignas(64) uint8_t buf[DT_STREAM_BLOCK_MAX];
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
