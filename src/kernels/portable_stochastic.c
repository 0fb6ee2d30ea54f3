/* Stochastic rounding kernels in plain C (docs/conversion.md, "Stochastic rounding"): float32,
 * float16 and bfloat16 -> bfloat16, float16, float8e4m3fn, float8e5m2 on float32's bits. The
 * registry entries that take DTCAST_ROUND_STOCHASTIC rules; every other pair under that mode
 * runs the reference path. */
#include "stochastic.h"

#include "portable.h"

bool dt_stoch_setup(dt_narrow *n, const dt_format *df, const dt_format *sf, const dt_rules *r)
{
    if (r->round != DTCAST_ROUND_STOCHASTIC || sf == df)
        return false;
    if (sf->type != DTCAST_FLOAT32 && sf->type != DTCAST_FLOAT16 && sf->type != DTCAST_BFLOAT16)
        return false;
    if (df->type != DTCAST_BFLOAT16 && df->type != DTCAST_FLOAT16 &&
        df->type != DTCAST_FLOAT8E4M3FN && df->type != DTCAST_FLOAT8E5M2)
        return false;
    memset(n, 0, sizeof *n);
    n->s1 = (uint32_t)df->man_bits;
    n->ec_hi = (uint32_t)(1 - df->bias + 127);
    n->maxc = (uint32_t)dt_float_max_code(df);
    n->sign = (uint32_t)1 << (df->bits - 1);
    const uint32_t special = dt_float_has_inf(df) ? (uint32_t)dt_float_inf_code(df, false)
                                                  : (uint32_t)dt_float_nan_code(df, false);
    n->ovf[0] = r->saturate_float ? n->maxc : special; /* stochastic never "rounds down" */
    n->inf[0] = r->saturate_float ? n->maxc : special;
    n->nan[0] = (uint32_t)dt_float_nan_code(df, false);
    return true;
}

/* The random bits of elements begin .. begin + n - 1 (n <= DT_PBLOCK): a loop the compiler
 * vectorises where the target has 64-bit multiplies in vectors */
static inline __attribute__((always_inline)) void rand_block(uint32_t *r, const dt_rules *rules,
                                                             size_t begin, size_t n)
{
    const uint64_t z0 = dt_stoch_state(rules, begin);
    for (size_t j = 0; j < n; j++)
        r[j] = (uint32_t)dt_splitmix64_mix(z0 + (uint64_t)(j + 1) * DT_GOLDEN_GAMMA);
}

/* Elements [begin, end) in blocks: the random bits first, then the codes (source loads as
 * float32 bits, stores of 1 or 2 bytes). */
#define STOCH_LOOP(load, T)                                                                     \
    do {                                                                                        \
        uint32_t r[DT_PBLOCK];                                                                  \
        for (size_t b = begin; b < end; b += DT_PBLOCK) {                                       \
            const size_t n = end - b < DT_PBLOCK ? end - b : DT_PBLOCK;                         \
            rand_block(r, &k->r, b, n);                                                         \
            for (size_t j = 0; j < n; j++) {                                                    \
                const size_t i = b + j;                                                         \
                ((T *)dst)[i] = (T)dt_stoch_code(&k->n, load, r[j]);                            \
            }                                                                                   \
        }                                                                                       \
    } while (0)

static void f32_to8(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    STOCH_LOOP(((const uint32_t *)src)[i], uint8_t);
}
static void f32_to16(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    STOCH_LOOP(((const uint32_t *)src)[i], uint16_t);
}
static void f16_to8(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    STOCH_LOOP(dt_f16_to_f32(((const uint16_t *)src)[i]), uint8_t);
}
static void f16_to16(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    STOCH_LOOP(dt_f16_to_f32(((const uint16_t *)src)[i]), uint16_t);
}
static void bf16_to8(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    STOCH_LOOP((uint32_t)((const uint16_t *)src)[i] << 16, uint8_t);
}
static void bf16_to16(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    STOCH_LOOP((uint32_t)((const uint16_t *)src)[i] << 16, uint16_t);
}

bool dt_stoch_pick(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                   const dt_kernel_fn fns[3][2])
{
    if (!dt_stoch_setup(&k->n, df, sf, r))
        return false;
    const int source = sf->type == DTCAST_FLOAT32 ? 0 : sf->type == DTCAST_FLOAT16 ? 1 : 2;
    k->fn = fns[source][df->bits == 8];
    k->compute_bound = true;
    return true;
}

static bool e_stoch(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                    size_t count)
{
    static const dt_kernel_fn fns[3][2] = {
        {f32_to16, f32_to8}, {f16_to16, f16_to8}, {bf16_to16, bf16_to8}};
    (void)count;
    return dt_stoch_pick(k, df, sf, r, fns);
}

const dt_kernel_entry dt_entries_stochastic[] = {
    {"portable stochastic: float32/float16/bfloat16 -> bfloat16, float16, float8e4m3fn/e5m2",
     DT_ISA_PORTABLE, e_stoch},
    {NULL, DT_ISA_PORTABLE, NULL},
};
