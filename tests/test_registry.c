/* The kernel registry (src/kernels/registry.c):
 *   - every entry, called directly, against the reference path (dt_decode + dt_encode) on every
 *     pair and rule set it accepts where the finder chooses another kernel (test_kernels covers
 *     the finder's own choices): exhaustively for sources of <= 16 bits (sampled as test_kernels
 *     samples them when DTCAST_TEST_SCALE < 1), edges + random values for wider ones (>= 10^6
 *     per entry, x DTCAST_TEST_SCALE);
 *   - no entry holds a kernel the finder can never choose: every function an entry sets up for
 *     some pair is chosen by the finder, at the entry's instruction set, for some pair and rule
 *     set (directly or as a step of a chain). Set-ups run no vector code, so this part covers
 *     the entries of every instruction set, also those this CPU cannot run.
 * The static library exposes the internal symbols used here. */
#include "check.h"
#include "internal.h"
#include "kernels/kernels.h"
#include "round.h"
#include "kernel_util.h"

#include <stdlib.h>
#include <string.h>

/* every real type, from the type table (main fills it) */
static dtcast_type types[64];
static size_t nt;
#define NT nt
static const size_t counts[] = {100, (size_t)1 << 20}; /* set-ups may depend on the count */

/* Every rule set (round x float policy x int policy x nan_as_max). */
static size_t all_rules(dt_rules *out)
{
    size_t n = 0;
    for (int m = DTCAST_ROUND_RNE; m <= DTCAST_ROUND_STOCHASTIC; m++)
        for (int b = 0; b < 8; b++)
            out[n++] = (dt_rules){.round = (dtcast_round)m, .saturate_float = b & 1,
                                  .saturate_int = (b >> 1) & 1, .nan_as_max = (b >> 2) & 1,
                                  .seed = 0x5EED0000u + (uint64_t)b, .offset = 12345};
    return n;
}

/* ---- reachability ---------------------------------------------------------------------------- */
/* A set of kernel functions: open addressing on the pointer's bits (a linear search made the
 * reachability walk, half a million look-ups, the slowest part of the sanitizer run). */
typedef struct fnset {
    dt_kernel_fn *slot; /* cap slots, NULL = empty */
    size_t n, cap;      /* cap: a power of two, at least twice n */
} fnset;

static size_t fn_hash(dt_kernel_fn f, size_t cap)
{
    uintptr_t u = 0;
    memcpy(&u, &f, sizeof f < sizeof u ? sizeof f : sizeof u);
    return (size_t)((u >> 4) * 0x9E3779B97F4A7C15u >> 20) & (cap - 1);
}
static bool fnset_has(const fnset *s, dt_kernel_fn f)
{
    if (!s->cap)
        return false;
    for (size_t i = fn_hash(f, s->cap); s->slot[i]; i = (i + 1) & (s->cap - 1))
        if (s->slot[i] == f)
            return true;
    return false;
}
static void fnset_add(fnset *s, dt_kernel_fn f)
{
    if (fnset_has(s, f))
        return;
    if (2 * (s->n + 1) > s->cap) { /* grow: re-insert every function */
        fnset g = {calloc(s->cap ? 2 * s->cap : 1024, sizeof *g.slot), 0,
                   s->cap ? 2 * s->cap : 1024};
        if (!g.slot)
            abort();
        for (size_t i = 0; i < s->cap; i++)
            if (s->slot[i])
                fnset_add(&g, s->slot[i]);
        free(s->slot);
        *s = g;
    }
    size_t i = fn_hash(f, s->cap);
    while (s->slot[i])
        i = (i + 1) & (s->cap - 1);
    s->slot[i] = f;
    s->n++;
}

/* The finder's choice at instruction set isa, as dt_kernel_find makes it: the entries of isa and
 * below, a chain, the portable entries; adds its function(s) to chosen. */
static void add_finder_choice(fnset *chosen, dt_isa isa, const dt_format *df,
                              const dt_format *sf, const dt_rules *r, size_t count)
{
    dt_kernel k;
    dt_isa_pin((int)isa);
    if (dt_kernel_find(&k, df, sf, r, count)) {
        fnset_add(chosen, k.fn);
        const dt_kernel *st;
        for (int i = 0; (st = dt_kernel_step(&k, i)) != NULL; i++)
            fnset_add(chosen, st->fn);
        dt_kernel_release(&k);
    }
    dt_isa_pin(-1);
}

static void test_reachable(void)
{
    dt_rules rs[64];
    const size_t nr = all_rules(rs);
    const dt_isa top = dt_isa_detected();
    size_t entries = 0, unreachable = 0, fns = 0;
    /* dt_isa_pin cannot raise the instruction set above this CPU's: entries above it are
     * checked against the finder's walk of the registry alone (dt_registry_find). */
    for (int isa = DT_ISA_PORTABLE; isa <= DT_ISA_AVX512; isa++) {
        fnset chosen = {0}, offered = {0};
        for (size_t s = 0; s < NT; s++)
            for (size_t d = 0; d < NT; d++)
                for (size_t ri = 0; ri < nr; ri++)
                    for (size_t c = 0; c < 2; c++) {
                        const dt_format *sf = dt_format_of(types[s]), *df = dt_format_of(types[d]);
                        if (sf == df)
                            continue;
                        if ((dt_isa)isa <= top) {
                            add_finder_choice(&chosen, (dt_isa)isa, df, sf, &rs[ri], counts[c]);
                        } else {
                            dt_kernel k;
                            if (dt_registry_find(&k, DT_ISA_SSE2, (dt_isa)isa, df, sf, &rs[ri],
                                                 counts[c]))
                                fnset_add(&chosen, k.fn);
                        }
                    }
        const dt_kernel_entry *e;
        for (size_t i = 0; (e = dt_registry_entry(i)) != NULL; i++) {
            if ((int)e->isa != isa)
                continue;
            entries++;
            for (size_t s = 0; s < NT; s++)
                for (size_t d = 0; d < NT; d++)
                    for (size_t ri = 0; ri < nr; ri++)
                        for (size_t c = 0; c < 2; c++) {
                            const dt_format *sf = dt_format_of(types[s]);
                            const dt_format *df = dt_format_of(types[d]);
                            dt_kernel k;
                            if (sf == df || !dt_registry_setup(e, &k, df, sf, &rs[ri], counts[c]) ||
                                fnset_has(&offered, k.fn))
                                continue;
                            fnset_add(&offered, k.fn);
                            fns++;
                            if (!fnset_has(&chosen, k.fn) && unreachable++ < 20)
                                printf("  unreachable: %s: its kernel for %s -> %s round %d "
                                       "satf %d sati %d nanmax %d is never chosen\n",
                                       e->name, sf->name, df->name, (int)rs[ri].round,
                                       rs[ri].saturate_float, rs[ri].saturate_int,
                                       rs[ri].nan_as_max);
                        }
        }
        free(chosen.slot);
        free(offered.slot);
    }
    char name[128];
    snprintf(name, sizeof name, "registry: every kernel of %zu entries is reachable (%zu kernel "
             "functions)", entries, fns);
    CHECK(unreachable == 0, name, "%zu kernel functions are never chosen", unreachable);
}

/* ---- every entry against the reference ------------------------------------------------------- */
/* Element i's reference code (stochastic rounding draws the random bits of its index). */
static uint64_t reference(const dt_format *df, const dt_format *sf, uint64_t code,
                          const dt_rules *r, size_t i)
{
    dt_value v;
    dt_decode(sf, code, &v);
    dt_rules ri = *r;
    if (r->round == DTCAST_ROUND_STOCHASTIC)
        ri.rand = dt_stoch_rand(r->seed, r->offset + i);
    return dt_encode(df, &v, &ri);
}

/* Values of a wide source: edges (zero, +-1, powers of two and their neighbours, the ends of
 * the integer ranges, Inf, NaN for floats), then random bits, a quarter of them shortened to
 * small magnitudes. */
static void wide_codes(const dt_format *sf, uint64_t *codes, size_t n)
{
    const uint64_t mask = sf->bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << sf->bits) - 1;
    size_t i = 0;
    for (int b = 0; b < sf->bits && i + 6 <= n; b++) {
        const uint64_t p = UINT64_C(1) << b;
        codes[i++] = p;
        codes[i++] = p - 1;
        codes[i++] = p + 1;
        codes[i++] = (0 - p) & mask;
        codes[i++] = (0 - p - 1) & mask;
        codes[i++] = (p | (p >> 1)) & mask;
    }
    for (; i < n; i++) {
        uint64_t x = rnd();
        if (i % 4 == 1)
            x >>= x % 64;
        codes[i] = x & mask;
    }
}

static size_t compare(const dt_kernel *k, const dt_format *df, const dt_format *sf,
                      const dt_rules *r, const uint64_t *codes, size_t n, uint8_t *in,
                      uint8_t *out, const char *entry)
{
    memset(in, 0, bytes_for(sf, n) + 8);
    for (size_t i = 0; i < n; i++)
        dt_store(sf, in, i, codes[i]);
    memset(out, 0xA5, bytes_for(df, n) + 8);
    dt_kernel_run(k, out, in, 0, n);
    clear_padding(df, out, n);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        const uint64_t want = reference(df, sf, codes[i], r, i), got = dt_load(df, out, i);
        if (got != want && bad++ == 0)
            printf("  %s: %s -> %s round %d satf %d sati %d nanmax %d: 0x%llx gives 0x%llx, "
                   "reference 0x%llx\n", entry, sf->name, df->name, (int)r->round,
                   r->saturate_float, r->saturate_int, r->nan_as_max,
                   (unsigned long long)codes[i], (unsigned long long)got,
                   (unsigned long long)want);
    }
    return bad;
}

static void test_entries(double scale)
{
    enum { WIDE = 1 << 16 };
    dt_rules rs[64];
    const size_t nr = all_rules(rs);
    uint64_t *codes = malloc(WIDE * sizeof *codes);
    uint8_t *in = malloc(WIDE * 8 + 16), *out = malloc(WIDE * 8 + 16);
    const dt_isa top = dt_isa_detected();
    const dt_kernel_entry *e;
    for (size_t i = 0; (e = dt_registry_entry(i)) != NULL; i++) {
        if (e->isa > top) {
            printf("# %s: not on this CPU\n", e->name);
            continue;
        }
        size_t uses = 0, shadowed = 0, values = 0, bad = 0, wide_pairs = 0;
        /* first pass: count the wide (source, rules) uses to spread >= 10^6 values over */
        for (size_t s = 0; s < NT; s++)
            for (size_t d = 0; d < NT; d++)
                for (size_t ri = 0; ri < nr; ri++) {
                    const dt_format *sf = dt_format_of(types[s]), *df = dt_format_of(types[d]);
                    dt_kernel k;
                    if (sf != df && sf->bits > 16 &&
                        dt_registry_setup(e, &k, df, sf, &rs[ri], counts[1]))
                        wide_pairs++;
                }
        const size_t per_wide =
            wide_pairs ? (size_t)(1e6 * scale / (double)wide_pairs) + 1000 : 0;
        for (size_t s = 0; s < NT; s++)
            for (size_t d = 0; d < NT; d++)
                for (size_t ri = 0; ri < nr; ri++) {
                    const dt_format *sf = dt_format_of(types[s]), *df = dt_format_of(types[d]);
                    dt_kernel k, f;
                    if (sf == df || !dt_registry_setup(e, &k, df, sf, &rs[ri], counts[1]))
                        continue;
                    uses++;
                    dt_isa_pin((int)e->isa);
                    const bool found = dt_kernel_find(&f, df, sf, &rs[ri], counts[1]);
                    dt_isa_pin(-1);
                    const bool same = found && f.fn == k.fn;
                    if (found)
                        dt_kernel_release(&f);
                    if (same && sf->bits <= 16)
                        continue; /* the finder's own choice: test_kernels runs it exhaustively */
                    shadowed += !same;
                    if (sf->bits <= 16) {
                        const size_t n = sample_codes(sf, scale, uses, codes);
                        bad += compare(&k, df, sf, &rs[ri], codes, n, in, out, e->name);
                        values += n;
                    } else {
                        for (size_t done = 0; done < per_wide;) {
                            const size_t n = per_wide - done < WIDE ? per_wide - done : WIDE;
                            wide_codes(sf, codes, n);
                            bad += compare(&k, df, sf, &rs[ri], codes, n, in, out, e->name);
                            done += n;
                            values += n;
                        }
                    }
                }
        /* complex -> its own part type (dispatch.c asks the registry for these too): the
         * finder's choice is counted here; its values are test_kernels' (kernels with a complex
         * side, every ISA) */
        static const dtcast_type cx[] = {DTCAST_COMPLEX32, DTCAST_BCOMPLEX32, DTCAST_COMPLEX64,
                                         DTCAST_COMPLEX128};
        for (size_t c = 0; c < sizeof cx / sizeof cx[0]; c++)
            for (size_t ri = 0; ri < nr; ri++) {
                const dt_format *sf = dt_format_of(cx[c]), *df = dt_format_of(sf->part);
                dt_kernel k, f;
                if (!dt_registry_setup(e, &k, df, sf, &rs[ri], counts[1]))
                    continue;
                uses++;
                dt_isa_pin((int)e->isa);
                const bool found = dt_kernel_find(&f, df, sf, &rs[ri], counts[1]);
                dt_isa_pin(-1);
                shadowed += !(found && f.fn == k.fn);
                if (found)
                    dt_kernel_release(&f);
            }
        char name[256];
        snprintf(name, sizeof name, "registry entry %s: %zu uses (%zu where the finder chooses "
                 "another kernel), %zu values", e->name, uses, shadowed, values);
        CHECK(bad == 0 && (uses > 0), name, "%zu mismatches%s", bad, uses ? "" : ", no uses");
    }
    free(codes);
    free(in);
    free(out);
}

int main(void)
{
    const char *sc = getenv("DTCAST_TEST_SCALE");
    const double scale = sc && *sc ? atof(sc) : 1.0;
    nt = real_types(types, 64);
    size_t n = 0;
    while (dt_registry_entry(n))
        n++;
    printf("# %zu registry entries\n", n);
    /* reachability is a property of the registry's tables, the same in every build: the
     * sanitizer build (scale < 1) leaves it to the first one and runs every set-up below */
    if (scale >= 1)
        test_reachable();
    test_entries(scale);
    return CHECK_EXIT();
}
