/* The memory path: how the streaming loops prefetch and how large outputs reach memory (stream.c),
 * chosen once per process for the CPU at hand, as the instruction set is (cpu.c).
 *
 * Each profile is a measurement: BENCHMARKS.md has the same-run A/B of every value that differs
 * from the default, on the CPU model it names. A CPU no profile names gets the default, the
 * values first measured on AMD Zen 3/Zen 5, which later held on Zen 2 as well.
 *
 * DTCAST_MEMPATH overrides fields for such A/B runs (read once, like DTCAST_ISA):
 *     DTCAST_MEMPATH="prefetch=4096,far=12288,narrow=1024,wide=8192,copy=64,min=16777216,direct=1,pair8=1"
 * Unknown names and malformed values are ignored. */
#include "kernels.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const dt_mempath profiles[] = {
    /* AMD Zen 2/3/5 (2 vCPUs, 32 MiB L3): 1 KiB narrowing blocks were 1.36x faster than 8 KiB
     * for float32 -> float16; 16-byte streaming stores; prefetch 4 KiB ahead */
    {"default", 4096, (size_t)16 << 20, 1024, 8192, 16, false, 0, false},
    /* Intel Xeon with AVX-512 (family 6; measured on models 207 and 167): the copy out of the
     * L1 block with one 64-byte streaming store per line, 4 KiB narrowing blocks, the kernels
     * that can store non-temporally themselves doing so, and a second prefetch 12 KiB ahead into
     * L2 (the L2 streamer stops at each 4 KiB page; BENCHMARKS.md, issue 32) */
    {"intel-avx512", 4096, (size_t)16 << 20, 4096, 8192, 64, true, 12288, true},
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static dt_mempath active;

void dt_mempath_parse(dt_mempath *m, const char *e)
{
    while (e && *e) {
        const char *eq = strchr(e, '='), *end = strchr(e, ',');
        if (!end)
            end = e + strlen(e);
        if (eq && eq < end) {
            char *stop = NULL;
            const unsigned long long v = strtoull(eq + 1, &stop, 10);
            const size_t klen = (size_t)(eq - e);
            if (stop == end) {
                if (klen == 8 && memcmp(e, "prefetch", 8) == 0 && v <= 65536)
                    m->prefetch_ahead = (uint32_t)v;
                else if (klen == 6 && memcmp(e, "narrow", 6) == 0 && v >= 64 &&
                         v <= DT_STREAM_BLOCK_MAX && v % 64 == 0)
                    m->block_narrow = (uint32_t)v;
                else if (klen == 4 && memcmp(e, "wide", 4) == 0 && v >= 64 &&
                         v <= DT_STREAM_BLOCK_MAX && v % 64 == 0)
                    m->block_wide = (uint32_t)v;
                else if (klen == 4 && memcmp(e, "copy", 4) == 0 && (v == 16 || v == 32 || v == 64))
                    m->copy_width = (uint8_t)v;
                else if (klen == 3 && memcmp(e, "min", 3) == 0 && v > 0)
                    m->stream_min = (size_t)v;
                else if (klen == 6 && memcmp(e, "direct", 6) == 0 && v <= 1)
                    m->direct = v == 1;
                else if (klen == 3 && memcmp(e, "far", 3) == 0 && v <= 262144)
                    m->prefetch_far = (uint32_t)v;
                else if (klen == 5 && memcmp(e, "pair8", 5) == 0 && v <= 1)
                    m->pair8 = v == 1;
            }
        }
        e = *end ? end + 1 : end;
    }
}

static void init(void)
{
    const dt_cpu_id id = dt_cpu_id_get();
    const dt_isa isa = dt_isa_active();
    active = profiles[0];
    /* on an Intel CPU with AVX-512, its profile under DTCAST_ISA=avx2 too (there: float32 ->
     * float16 0.78 -> 0.97 of memcpy, complex128 -> float8e4m3fn 0.33 -> 0.43; BENCHMARKS.md,
     * issue 32), its copy width then the widest the ISA has (below); not for the portable
     * kernels, where it measured within noise of the default */
    if (id.vendor == DT_CPU_INTEL && id.family == 6 && dt_isa_detected() >= DT_ISA_AVX512 &&
        isa >= DT_ISA_AVX2)
        active = profiles[1];
    /* The portable 8-bit tables are a property of the caches, not of the instruction set (they
     * run under DTCAST_ISA=portable too): on the Intel Xeon (model 167, 2 MiB L2) the pair table
     * of random codes ran 1.25x faster than the byte table, on AMD Zen 1.3x slower
     * (BENCHMARKS.md, issue 32; portable_pair.c). */
    active.pair8 = id.vendor == DT_CPU_INTEL && id.family == 6;
    if (active.copy_width == 64 && isa < DT_ISA_AVX512)
        active.copy_width = isa >= DT_ISA_AVX2 ? 32 : 16;
    dt_mempath_parse(&active, getenv("DTCAST_MEMPATH"));
    if ((active.copy_width == 64 && isa < DT_ISA_AVX512) ||
        (active.copy_width == 32 && isa < DT_ISA_AVX2))
        active.copy_width = 16; /* never an instruction the CPU (or the DTCAST_ISA pin) lacks */
    dt_prefetch_ahead = active.prefetch_ahead;
    dt_prefetch_far = active.prefetch_far;
}

const dt_mempath *dt_mempath_get(void)
{
    pthread_once(&once, init);
    return &active;
}

void dt_mempath_set(const dt_mempath *m)
{
    pthread_once(&once, init);
    if (m)
        active = *m;
    else
        init();
    dt_prefetch_ahead = active.prefetch_ahead;
    dt_prefetch_far = active.prefetch_far;
}

uint32_t dt_prefetch_ahead = 4096, dt_prefetch_far = 0;
