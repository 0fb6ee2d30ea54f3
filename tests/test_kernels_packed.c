/* Packed sources (int4, uint4, float4e2m1, int2, uint2, uint1, int1) through every fast path of every
 * instruction set, against the reference path element by element: many counts (block and tail
 * boundaries of the 16- and 32-element vectors), odd byte offsets, and no write past the output. */
#include "check.h"
#include "internal.h"
#include "kernels/kernels.h"

#include <stdlib.h>
#include <string.h>

static const dtcast_type sources[] = {DTCAST_INT4, DTCAST_UINT4, DTCAST_FLOAT4E2M1,
                                      DTCAST_INT2, DTCAST_UINT2, DTCAST_UINT1, DTCAST_INT1};
static const dtcast_type targets[] = {DTCAST_FLOAT32, DTCAST_FLOAT16, DTCAST_BFLOAT16,
                                      DTCAST_FLOAT64, DTCAST_INT8,    DTCAST_INT16,
                                      DTCAST_INT32,   DTCAST_UINT16,  DTCAST_FLOAT8E4M3FN,
                                      DTCAST_INT4,    DTCAST_BOOL,    DTCAST_INT1,
                                      DTCAST_UINT1};

/* Returns the number of mismatches of one (source, target) pair over every count and offset. */
static long check_pair(const dt_format *sf, const dt_format *df, const uint8_t *in, size_t max,
                       uint8_t *out)
{
    long bad = 0;
    dtcast_options o;
    dtcast_options_init(&o);
    o.threads = 1;
    dt_rules r;
    dt_rules_for(df, &o, &r);
    for (size_t n = 0; n <= max; n += n < 200 ? 1 : 331) {
        for (size_t off = 0; off < 2; off++) {
            size_t bytes = 0;
            dtcast_storage_size(df->type, n, &bytes, NULL);
            memset(out, 0xAB, bytes + off + 8);
            if (dtcast_convert(out + off, df->type, in + off, sf->type, n, &o, NULL) != DTCAST_OK)
                return bad + 1;
            for (size_t i = 0; i < n; i++) {
                dt_value v;
                dt_decode(sf, dt_load(sf, in + off, i), &v);
                if (dt_load(df, out + off, i) != dt_encode(df, &v, &r))
                    bad++;
            }
            if (out[off + bytes] != 0xAB)
                bad++;
        }
    }
    return bad;
}

int main(void)
{
    const size_t max = 3000;
    uint8_t *in = malloc(max + 16), *out = malloc(8 * max + 64);
    uint32_t seed = 7;
    for (size_t i = 0; i < max + 16; i++) {
        seed = seed * 1103515245u + 12345u;
        in[i] = (uint8_t)(seed >> 16);
    }
    static const char *const isa_names[] = {"portable", "sse2", "avx2", "avx512"};
    for (int isa = DT_ISA_AVX512; isa >= DT_ISA_PORTABLE; isa--) {
        dt_isa_pin(isa);
        if ((int)dt_isa_active() != isa)
            continue; /* not on this CPU */
        for (size_t s = 0; s < sizeof sources / sizeof sources[0]; s++)
            for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
                const dt_format *sf = dt_format_of(sources[s]), *df = dt_format_of(targets[t]);
                long bad = check_pair(sf, df, in, max, out);
                char label[96];
                snprintf(label, sizeof label, "%s: %s -> %s, counts 0..%zu, offsets 0/1",
                         isa_names[isa], sf->name, df->name, max);
                CHECK(bad == 0, label, "%ld mismatches or overruns", bad);
            }
    }
    free(in);
    free(out);
    return CHECK_EXIT();
}
