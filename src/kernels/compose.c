/* Composed kernels: a pair that no single kernel covers runs as a chain of kernels over blocks
 * small enough to stay in L1, so N decoders and M encoders cover the N x M pairs.
 *
 * One rounding survives the chain because every step before the last is exact or rounds to odd:
 *   - a source whose every value float32 holds (floats of <= 16 bits, integers of <= 16 bits)
 *     goes through float32 exactly;
 *   - float64 and integers of 32/64 bits go to float32 rounded to odd when the target has at most
 *     22 significant bits (every float of <= 16 bits, e8m0, bool): rounding to odd at >= p + 2
 *     bits, then once to p bits in any mode, is the single correct rounding, and odd rounding
 *     never reaches Inf (a magnitude above float32's range stays above every such target's);
 *   - integers of fewer than 8 bits take an 8-bit integer lane: wrapping and saturating compose;
 *   - complex numbers are two real conversions: complex -> complex runs the part kernel over
 *     twice the elements, complex -> real keeps the real parts first, real -> complex adds zero
 *     imaginary parts last. */
#include "kernels.h"

#include <stdlib.h>
#include <string.h>

/* Elements per block: 128 (2 KiB of complex128 source, 1 KiB of a float64 lane) ran complex
 * sources 1.3-1.6x faster here than 512, and wide real sources as fast. */
enum { COMPOSE_BLOCK = 128, MAX_STEPS = 4 };

typedef struct dt_chain {
    int steps;
    int scale; /* 2: the steps run over the parts of complex elements */
    dt_isa lo;  /* every step is a kernel of this instruction set or a better one */
    dt_kernel step[MAX_STEPS];
} dt_chain;

/* ---- the complex steps: keep the real part, add a zero imaginary part (w-byte parts) -------- */
/* Elements of unaligned buffers, as every kernel takes them. */
#define LD(T, p, i) ({ T l_; memcpy(&l_, (const uint8_t *)(p) + (i) * sizeof(T), sizeof l_); l_; })
#define ST(T, p, i, x) do { const T v_ = (x); memcpy((uint8_t *)(p) + (i) * sizeof(T), &v_, sizeof v_); } while (0)
#define PART_STEPS(W, T)                                                                        \
    static void real_part_##W(const dt_kernel *k, void *dst, const void *src, size_t b,         \
                              size_t e)                                                         \
    {                                                                                           \
        (void)k;                                                                                \
        for (size_t i = b; i < e; i++)                                                          \
            ST(T, dst, i, LD(T, src, 2 * i));                                                   \
    }                                                                                           \
    static void to_complex_##W(const dt_kernel *k, void *dst, const void *src, size_t b,        \
                               size_t e)                                                        \
    {                                                                                           \
        (void)k;                                                                                \
        for (size_t i = b; i < e; i++) {                                                        \
            ST(T, dst, 2 * i, LD(T, src, i));                                                   \
            ST(T, dst, 2 * i + 1, (T)0);                                                        \
        }                                                                                       \
    }
PART_STEPS(2, uint16_t)
PART_STEPS(4, uint32_t)
PART_STEPS(8, uint64_t)

/* A part kept in its own type still goes through the rules: NaN -> the canonical quiet NaN
 * with its sign, and under saturation Inf -> the largest finite value. */
#define SAME_STEP(W, T)                                                                         \
    static void same_##W(const dt_kernel *k, void *dst, const void *src, size_t b, size_t e)   \
    {                                                                                           \
        const T sign = (T)1 << (W * 8 - 1), inf = (T)dt_float_inf_code(k->df, false);          \
        const T qnan = (T)dt_float_nan_code(k->df, false);                                      \
        const T top = k->r.saturate_float ? (T)dt_float_max_code(k->df) : inf;                  \
        for (size_t i = b; i < e; i++) {                                                        \
            const T x = LD(T, src, i), a = x & (T)~sign;                                        \
            const T m = a > inf ? qnan : a == inf ? top : a;                                    \
            ST(T, dst, i, (T)((x & sign) | m));                                                 \
        }                                                                                       \
    }
SAME_STEP(2, uint16_t)
SAME_STEP(4, uint32_t)
SAME_STEP(8, uint64_t)

static dt_kernel_fn same_fn(int part_bits)
{
    return part_bits == 16 ? same_2 : part_bits == 32 ? same_4 : same_8;
}

/* A chain of vector kernels (lo >= AVX2) starts with complex_x86.c's step of the active ISA */
static dt_kernel_fn real_part_fn(int part_bits, dt_isa lo)
{
#if defined(DT_HAVE_X86)
    if (lo >= DT_ISA_AVX2)
        return dt_real_part_x86(dt_isa_active(), part_bits);
#else
    (void)lo;
#endif
    return part_bits == 16 ? real_part_2 : part_bits == 32 ? real_part_4 : real_part_8;
}
/* A chain of vector kernels (lo >= AVX2) ends in complex_x86.c's step of the active ISA */
static dt_kernel_fn to_complex_fn(int part_bits, dt_isa lo)
{
#if defined(DT_HAVE_X86)
    if (lo >= DT_ISA_AVX2)
        return dt_to_complex_x86(dt_isa_active(), part_bits);
#else
    (void)lo;
#endif
    return part_bits == 16 ? to_complex_2 : part_bits == 32 ? to_complex_4 : to_complex_8;
}

/* ---- running a chain ------------------------------------------------------------------------ */
/* A buffer for elements [b, e) of a step's output, addressed as the kernels address theirs:
 * base + index * bytes per element (the base itself lies before the buffer; it is never
 * dereferenced outside [b, e)). */
static void *lane_base(uint8_t *buf, size_t b, const dt_format *f)
{
    return (void *)((uintptr_t)buf - b * (size_t)f->stride_bits / 8);
}

static void chain_run(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    const dt_chain *c = k->chain;
    const size_t sb = (size_t)k->sf->stride_bits;
    if (c->steps == 1) { /* one kernel over the parts (complex -> complex) or the elements */
        const dt_kernel *st = &c->step[0];
        st->fn(st, dst, src, begin * (size_t)c->scale, end * (size_t)c->scale);
        return;
    }
    _Alignas(64) uint8_t buf[2][COMPOSE_BLOCK * 8];
    for (size_t i = begin; i < end; i += COMPOSE_BLOCK) {
        const size_t n = end - i < COMPOSE_BLOCK ? end - i : COMPOSE_BLOCK;
        /* the source a few blocks ahead on its way while this block's steps compute */
        dt_prefetch_span((const uint8_t *)src + i * sb / 8, n * sb / 8);
        const size_t b = i * (size_t)c->scale, e = (i + n) * (size_t)c->scale;
        const void *in = src;
        for (int s = 0; s < c->steps; s++) {
            const dt_kernel *st = &c->step[s];
            void *out = s == c->steps - 1 ? dst : lane_base(buf[s & 1], b, st->df);
            st->fn(st, out, in, b, e);
            in = out;
        }
    }
}

/* ---- planning -------------------------------------------------------------------------------- */
static const dt_rules exact_rules = {.round = DTCAST_ROUND_RNE};
static const dt_rules odd_rules = {.round = DTCAST_ROUND_ODD};

/* Whether float32 holds every value of f exactly. */
static bool float32_holds(const dt_format *f)
{
    switch (f->tc) {
    case DT_TC_BOOL:
    case DT_TC_E8M0:
        return true;
    case DT_TC_UINT:
    case DT_TC_SINT:
        return f->bits <= 16;
    case DT_TC_FLOAT:
        return f->bits <= 16;
    default:
        return false;
    }
}

/* Whether one rounding from float32-rounded-to-odd is the correct rounding into f. */
static bool odd_float32_rounds_once(const dt_format *f)
{
    return f->tc == DT_TC_BOOL || f->tc == DT_TC_E8M0 || (f->tc == DT_TC_FLOAT && f->bits <= 16);
}

static bool add_step(dt_chain *c, const dt_format *df, const dt_format *sf, const dt_rules *r,
                     size_t count)
{
    dt_kernel *k = &c->step[c->steps];
    if (!dt_kernel_find_direct(k, df, sf, r, count, c->lo))
        return false;
    k->stream = false; /* a step writes into L1 or into the chain's own output */
    c->steps++;
    return true;
}

static void add_part_step(dt_chain *c, dt_kernel_fn fn, const dt_format *df, const dt_format *sf,
                          const dt_rules *r)
{
    dt_kernel *k = &c->step[c->steps++];
    memset(k, 0, sizeof *k);
    k->fn = fn;
    k->df = df;
    k->sf = sf;
    k->r = *r;
}

/* The steps of a real pair sf -> df: one kernel, or an exact step into a float32 lane then one
 * that rounds. */
static bool plan_real(dt_chain *c, const dt_format *df, const dt_format *sf, const dt_rules *r,
                      size_t count)
{
    if (sf == df) { /* a complex part kept in its type (float16, float32 or float64) */
        add_part_step(c, same_fn(sf->bits), df, sf, r);
        return true;
    }
    const int mark = c->steps;
    if (!dt_chain_preferred(df, sf, r, dt_isa_active()) && add_step(c, df, sf, r, count))
        return true;
    /* integers of fewer than 8 bits through an 8-bit lane of their signedness: wrapping (the
     * value modulo 2^8, then modulo 2^bits) and saturating (to the 8-bit range, then to the
     * narrower one inside it) give what one step gives, NaN and Inf included */
    if ((df->tc == DT_TC_SINT || df->tc == DT_TC_UINT) && df->bits < 8 && sf->bits > 8) {
        const dt_format *lane = dt_format_of(df->tc == DT_TC_SINT ? DTCAST_INT8 : DTCAST_UINT8);
        if (add_step(c, lane, sf, r, count) && add_step(c, df, lane, r, count))
            return true;
        c->steps = mark;
    }
    const dt_format *f32 = dt_format_of(DTCAST_FLOAT32);
    const dt_rules *first = float32_holds(sf)                ? &exact_rules
                            : odd_float32_rounds_once(df) ? &odd_rules
                                                            : NULL;
    if (!first || sf == f32 || df == f32)
        return false;
    if (add_step(c, f32, sf, first, count) && add_step(c, df, f32, r, count))
        return true;
    c->steps = mark;
    return false;
}

static bool plan(dt_chain *c, const dt_format *df, const dt_format *sf, const dt_rules *r,
                 size_t count)
{
    const bool cs = sf->tc == DT_TC_COMPLEX, cd = df->tc == DT_TC_COMPLEX;
    const dt_format *sp = cs ? dt_format_of(sf->part) : sf, *dp = cd ? dt_format_of(df->part) : df;
    c->scale = 1;
    if (cs && cd) {
        c->scale = 2;
        return sp != dp && plan_real(c, dp, sp, r, 2 * count);
    }
    if (cs) {
        /* portable: complex128 -> floats of <= 16 bits in one kernel that reads the real parts
         * in place (no copy through L1; the float64 kernel's speed) */
        if (c->lo == DT_ISA_PORTABLE && sf->type == DTCAST_COMPLEX128) {
            dt_kernel *k = &c->step[0];
            memset(k, 0, sizeof *k);
            k->df = df;
            k->sf = sf;
            k->r = *r;
            if (dt_pfpu_find(k, df, sf, r)) {
                k->compute_bound = true;
                c->steps = 1;
                return true;
            }
        }
        add_part_step(c, real_part_fn(sp->bits, c->lo), sp, sf, &exact_rules);
        return plan_real(c, df, sp, r, count);
    }
    if (cd) {
        if (!plan_real(c, dp, sf, r, count))
            return false;
        add_part_step(c, to_complex_fn(dp->bits, c->lo), df, dp, &exact_rules);
        return true;
    }
    return plan_real(c, df, sf, r, count) && c->steps > 1;
}

/* (dt_chain_preferred) Float64 and 32/64-bit integers into floats of <= 16 bits: two vector
 * kernels (the source rounded to odd into float32, then the float32 kernel) are faster than
 * one kernel that converts the wide lanes element by element, but for AVX2's narrowing
 * template, which loads 32-bit integers rounded to odd itself: one kernel into floats of at
 * most 8 bits and float8e8m0 (measured 1.0-1.4x faster), and for AVX2's fused 32- and 64-bit
 * integer -> float16/bfloat16 kernels (64-bit: 1.6-2x faster than the chain; 32-bit: 2-3.5x in
 * L2). */
bool dt_chain_preferred(const dt_format *df, const dt_format *sf, const dt_rules *r, dt_isa isa)
{
#if defined(DT_HAVE_X86)
    /* float64 -> bfloat16 in rne: one AVX512-BF16 kernel (kernels_avx512bf16.c), 1.5x the chain
     * out of cache on the Intel Xeon (BENCHMARKS.md, issue 32) */
    if (r && sf->type == DTCAST_FLOAT64 && df->type == DTCAST_BFLOAT16 && isa >= DT_ISA_AVX512 &&
        dt_cpu_has_avx512bf16() && dt_mode_of(r->round) == M_RNE && !r->saturate_float)
        return false;
    /* float64 -> float16 in rne and the directed modes: one AVX512-FP16 kernel
     * (kernels_avx512fp16.c: vcvtpd2ph rounds once) */
    if (r && sf->type == DTCAST_FLOAT64 && df->type == DTCAST_FLOAT16 && isa >= DT_ISA_AVX512 &&
        dt_cpu_has_avx512fp16() && dt_mode_of(r->round) != M_RNA && dt_mode_of(r->round) != M_ODD &&
        dt_mode_of(r->round) >= 0)
        return false;
#else
    (void)r;
#endif
    if (sf->tc == DT_TC_COMPLEX)
        sf = dt_format_of(sf->part);
    if (df->tc == DT_TC_COMPLEX)
        df = dt_format_of(df->part);
    const bool int_source = sf->tc == DT_TC_SINT || sf->tc == DT_TC_UINT;
    if (isa == DT_ISA_PORTABLE) /* the portable float64 narrowing beats the chain through float32 */
        return false;
    if (int_source && sf->bits == 32 && isa == DT_ISA_AVX2 &&
        ((df->tc == DT_TC_FLOAT && df->bits <= 8) || df->tc == DT_TC_E8M0))
        return false;
    /* 32- and 64-bit integers into float16 and bfloat16: AVX2's fused kernels
     * (kernels_avx2_half.c) */
    if (int_source && sf->bits >= 32 && isa == DT_ISA_AVX2 &&
        (df->type == DTCAST_FLOAT16 || df->type == DTCAST_BFLOAT16))
        return false;
    return (sf->type == DTCAST_FLOAT64 || (int_source && sf->bits >= 32)) &&
           odd_float32_rounds_once(df);
}

bool dt_kernel_find_chain(dt_kernel *k, const dt_format *df, const dt_format *sf,
                          const dt_rules *r, size_t count, dt_isa step_isa)
{
    dt_chain *c = malloc(sizeof *c);
    if (!c)
        return false;
    c->steps = 0;
    c->lo = step_isa;
    if (!(plan(c, df, sf, r, count) && c->steps > 0)) {
        free(c);
        return false;
    }
    k->fn = chain_run;
    k->chain = c;
    k->compute_bound = false;
    for (int s = 0; s < c->steps; s++)
        k->compute_bound |= c->step[s].compute_bound;
    return true;
}

const dt_kernel *dt_kernel_step(const dt_kernel *k, int i)
{
    return k->chain && i < k->chain->steps ? &k->chain->step[i] : NULL;
}

void dt_kernel_release(dt_kernel *k)
{
    free(k->chain);
    k->chain = NULL;
}
