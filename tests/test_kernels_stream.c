/* Streamed outputs (src/kernels/stream.c): a large conversion runs its kernel block by block
 * into an L1 buffer and copies each block out with non-temporal stores. Forced on for small
 * sizes here, every kernel of every instruction set must give the same bytes as when it writes
 * the destination itself: counts across several blocks and at block edges, misaligned
 * destinations, split ranges (threads), in place, and no write past the output. Every memory
 * path a profile can choose (mempath.c) is run: each copy width the CPU has, small and large
 * blocks, and the kernels' own streaming stores on and off. */
#include "check.h"
#include "internal.h"
#include "kernels/kernels.h"
#include "kernel_util.h"

#include <stdlib.h>
#include <string.h>

static const dtcast_type types[] = {
    DTCAST_BOOL,  DTCAST_UINT1,      DTCAST_INT2,        DTCAST_INT4,          DTCAST_UINT8,
    DTCAST_INT8,  DTCAST_UINT16,     DTCAST_INT16,       DTCAST_UINT32,        DTCAST_INT32,
    DTCAST_INT64, DTCAST_UINT64,     DTCAST_FLOAT4E2M1,  DTCAST_FLOAT8E4M3FN,  DTCAST_FLOAT8E5M2,
    DTCAST_FLOAT8E8M0, DTCAST_FLOAT16, DTCAST_BFLOAT16, DTCAST_FLOAT32,       DTCAST_FLOAT64,
    DTCAST_INT1,  DTCAST_COMPLEX64,  DTCAST_COMPLEX128};
#define NT (sizeof types / sizeof types[0])

/* DTCAST_MEMPATH's fields: the valid ones applied, the rest ignored */
static void test_parse(void)
{
    const dt_mempath base = {"test", 4096, 1u << 24, 1024, 8192, 16, false, 0, false};
    static const struct {
        const char *text;
        uint32_t prefetch, narrow, wide;
        unsigned copy;
        size_t min;
        bool direct;
        uint32_t far;
        bool pair8;
    } cases[] = {
        {"", 4096, 1024, 8192, 16, 1u << 24, false, 0, false},
        {"copy=64,narrow=4096,direct=1", 4096, 4096, 8192, 64, 1u << 24, true, 0, false},
        {"prefetch=2048,wide=16384,min=1,far=12288,pair8=1", 2048, 1024, 16384, 16, 1, false, 12288, true},
        {"pair8=2,pair8=x", 4096, 1024, 8192, 16, 1u << 24, false, 0, false},
        {"copy=48,narrow=100,wide=32768,direct=2,min=0,far=999999", 4096, 1024, 8192, 16, 1u << 24, false, 0, false},
        {"narrow=4096x,=5,copy,prefetch=99999999,,narrow=,far=", 4096, 1024, 8192, 16, 1u << 24, false, 0, false},
        {"NARROW=2048,narrow=2048,narrow=-64,FAR=64", 4096, 2048, 8192, 16, 1u << 24, false, 0, false},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dt_mempath m = base;
        dt_mempath_parse(&m, cases[i].text);
        if (m.prefetch_ahead != cases[i].prefetch || m.block_narrow != cases[i].narrow ||
            m.block_wide != cases[i].wide || m.copy_width != cases[i].copy ||
            m.stream_min != cases[i].min || m.direct != cases[i].direct ||
            m.prefetch_far != cases[i].far || m.pair8 != cases[i].pair8) {
            printf("  DTCAST_MEMPATH=\"%s\" parsed wrongly\n", cases[i].text);
            bad++;
        }
    }
    CHECK(bad == 0, "DTCAST_MEMPATH fields", "%d cases wrong", bad);
}

int main(void)
{
    test_parse();
    enum { MAXN = 70000, SLACK = 128 };
    if (!dt_stream_wanted(dt_format_of(DTCAST_FLOAT64), dt_format_of(DTCAST_FLOAT64), false,
                          (size_t)1 << 30)) {
        printf("PASS streamed outputs: this build has no streaming stores (never used)\n");
        return 0;
    }
    /* 16 bytes an element at most (complex128) */
    uint8_t *src = malloc(MAXN * 16 + SLACK + 64), *want = malloc(MAXN * 16 + SLACK + 64),
            *got = malloc(MAXN * 16 + SLACK + 64), *inplace = malloc(MAXN * 16 + SLACK + 64);
    for (size_t i = 0; i < MAXN * 16 + SLACK; i++)
        src[i] = (uint8_t)rnd();
    /* counts: one block and its edges for 8-bit (8192 widening, 1024 narrowing), 4-bit (2048
     * narrowing) and 64-bit (1024) outputs, many blocks */
    static const size_t counts[] = {8,    1016, 1024, 1032,  2040,  2048, 2056,  4088, 4096,
                                    4104, 8184, 8192, 8200, 16376, 24577, 65536, 69999};
    const int isa_max = (int)dt_isa_detected();
    const dt_mempath chosen = *dt_mempath_get();
    /* the profiles: {copy width, narrowing block, widening block, direct} */
    static const unsigned paths[][4] = {
        {16, 1024, 8192, 0}, {32, 4096, 16384, 1}, {64, 4096, 8192, 1}, {64, 512, 2048, 0}};
    long bad = 0, runs = 0;
    for (size_t pi = 0; pi < sizeof paths / sizeof paths[0]; pi++) {
        if ((paths[pi][0] == 64 && isa_max < DT_ISA_AVX512) ||
            (paths[pi][0] == 32 && isa_max < DT_ISA_AVX2))
            continue;
        dt_mempath m = chosen;
        m.copy_width = (uint8_t)paths[pi][0];
        m.block_narrow = paths[pi][1];
        m.block_wide = paths[pi][2];
        m.direct = paths[pi][3] != 0;
        dt_mempath_set(&m);
        for (int isa = 0; isa <= isa_max; isa++) {
            if (isa == DT_ISA_SSE2)
                continue;
            dt_isa_pin(isa);
            for (size_t s = 0; s < NT; s++)
                for (size_t d = 0; d < NT; d++) {
                    const dt_format *sf = dt_format_of(types[s]), *df = dt_format_of(types[d]);
                    dtcast_options o;
                    dtcast_options_init(&o);
                    dt_rules r;
                    dt_rules_for(df, &o, &r);
                    dt_kernel plain, streamed;
                    dt_stream_threshold_set(0);
                    if (!dt_kernel_find(&plain, df, sf, &r, MAXN))
                        continue;
                    dt_stream_threshold_set(1);
                    const bool found = dt_kernel_find(&streamed, df, sf, &r, MAXN);
                    if (!found ||
                        streamed.stream != dt_stream_wanted(df, sf, streamed.compute_bound &&
                                                                        !(streamed.nt_capable && m.direct),
                                                            (size_t)1 << 40) ||
                        streamed.fn != plain.fn ||
                        streamed.nt != (streamed.stream && streamed.nt_capable && m.direct)) {
                        if (bad++ < 5)
                            printf("  %s: %s -> %s: not streamed as it should be\n",
                                   dt_isa_name((dt_isa)isa), sf->name, df->name);
                        dt_kernel_release(&plain);
                        dt_kernel_release(&streamed);
                        continue;
                    }
                    streamed.stream = true; /* narrowing too: the block logic must hold for every pair */
                    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
                        for (size_t oi = 0; oi < 4; oi++) {
                            /* destination offsets: 0, 2 (misaligned for 4- and 8-byte
                             * elements), and 8 and 40 (heads before the first 64-byte line
                             * of the kernels' own streaming stores) */
                            static const size_t offs[] = {0, 2, 8, 40};
                            const size_t off = offs[oi];
                            const size_t n = counts[c], db = bytes_for(df, n);
                            memset(want, 0x5A, db + off + SLACK);
                            memset(got, 0x5A, db + off + SLACK);
                            dt_kernel_run(&plain, want + off, src, 0, n);
                            clear_padding(df, want + off, n);
                            /* two ranges split at a multiple of 8, as the threads split them */
                            const size_t mid = n / 16 * 8;
                            dt_kernel_run(&streamed, got + off, src, 0, mid);
                            dt_kernel_run(&streamed, got + off, src, mid, n);
                            clear_padding(df, got + off, n);
                            runs++;
                            if (memcmp(want, got, db + off + SLACK) != 0 && bad++ < 5)
                                printf("  %s: %s -> %s count %zu offset %zu differs\n",
                                       dt_isa_name((dt_isa)isa), sf->name, df->name, n, off);
                            if (df->stride_bits <= sf->stride_bits) { /* in place */
                                memcpy(inplace, src, bytes_for(sf, n));
                                dt_kernel_run(&streamed, inplace, inplace, 0, n);
                                clear_padding(df, inplace, n);
                                if (memcmp(want + off, inplace, db) != 0 && bad++ < 5)
                                    printf("  %s: %s -> %s count %zu in place differs\n",
                                           dt_isa_name((dt_isa)isa), sf->name, df->name, n);
                            }
                        }
                    dt_kernel_release(&plain);
                    dt_kernel_release(&streamed);
                }
        }
    }
    dt_mempath_set(NULL);
    dt_stream_threshold_set(0);
    dt_isa_pin(-1);
    char name[128];
    snprintf(name, sizeof name,
             "streamed outputs equal direct ones (%ld runs, every ISA and memory path)", runs);
    CHECK(bad == 0, name, "%ld differ", bad);
    free(src);
    free(want);
    free(got);
    free(inplace);
    return CHECK_EXIT();
}
