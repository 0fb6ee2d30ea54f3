/* Every fast path against the reference path (dt_decode + dt_encode), bit for bit, for every
 * kernel variant this CPU runs (portable, AVX2, AVX-512, pinned in turn):
 *   - exhaustively for every source of <= 16 bits, into every target, in every rounding mode
 *     and overflow policy (and nan_as_max), both with and without the 64 KiB tables;
 *   - for 32- and 64-bit sources, edge cases (zeros, subnormals, min/max normal, every midpoint
 *     between neighbours of a target +-1 ulp, overflow thresholds, NaN payloads, Inf) plus random
 *     values: per (source, destination) pair 240000 x DTCAST_TEST_SCALE, spread over the pair's
 *     rule sets with at least 20000 x DTCAST_TEST_SCALE per rule set (tests/long/kernels_wide:
 *     >= 10^8 per pair). The reference is computed once per value and compared with every ISA's
 *     kernel; the work runs on DTCAST_TEST_THREADS worker threads (default 2);
 *   - tails (counts 0..100), unaligned pointers, odd counts of packed outputs, in place.
 * DTCAST_TEST_SCALE below 1 (tests/run-valgrind) also samples: the exhaustive loops over 16-bit
 * sources take every (1/scale)-th code plus the codes next to every exponent boundary and
 * integer limit, and the wide sources' edge values are thinned the same way.
 * The static library exposes the internal symbols used here. */
#include "check.h"
#include "internal.h"
#include "kernels/kernels.h"
#include "kernel_util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* every real type, from the type table (main fills it) */
static dtcast_type all_types[64];
static size_t ntypes;
#define NTYPES ntypes


static double scale = 1.0;
static size_t failures_reported;

static bool rules_equal(const dt_rules *a, const dt_rules *b)
{
    return a->round == b->round && a->saturate_float == b->saturate_float &&
           a->saturate_int == b->saturate_int && a->nan_as_max == b->nan_as_max;
}

/* The distinct rule sets for a destination (normalized, as the tables key them). */
static size_t rule_sets(const dt_format *df, dt_rules *out)
{
    size_t n = 0;
    for (int round = DTCAST_ROUND_RNE; round <= DTCAST_ROUND_ODD; round++)
        for (int sf = 0; sf < 2; sf++)
            for (int si = 0; si < 2; si++)
                for (int nm = 0; nm < 2; nm++) {
                    dt_rules r = {.round = (dtcast_round)round, .saturate_float = sf,
                                  .saturate_int = si, .nan_as_max = nm},
                             norm;
                    dt_rules_normalize(df, &r, &norm);
                    bool dup = false;
                    for (size_t i = 0; i < n; i++)
                        dup = dup || rules_equal(&out[i], &norm);
                    if (!dup)
                        out[n++] = norm;
                }
    return n;
}

static uint64_t reference(const dt_format *df, const dt_format *sf, uint64_t code,
                          const dt_rules *r)
{
    dt_value v;
    dt_decode(sf, code, &v);
    return dt_encode(df, &v, r);
}


/* Runs the kernel over codes[0..n) and compares with the reference; returns mismatches. */
static size_t run_and_compare(const dt_kernel *k, const dt_format *df, const dt_format *sf,
                              const uint64_t *codes, const uint64_t *want, size_t n,
                              uint8_t *in, uint8_t *out, const char *what)
{
    memset(in, 0, bytes_for(sf, n) + 8);
    for (size_t i = 0; i < n; i++)
        dt_store(sf, in, i, codes[i]);
    memset(out, 0xA5, bytes_for(df, n) + 8);
    dt_kernel_run(k, out, in, 0, n);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t got = dt_load(df, out, i);
        if (got != want[i]) {
            if (bad++ == 0 && failures_reported++ < 30)
                printf("  mismatch %s %s -> %s round %d satf %d sati %d nanmax %d: code 0x%llx "
                       "gives 0x%llx, reference 0x%llx\n",
                       what, sf->name, df->name, (int)k->r.round, k->r.saturate_float,
                       k->r.saturate_int, k->r.nan_as_max, (unsigned long long)codes[i],
                       (unsigned long long)got, (unsigned long long)want[i]);
        }
    }
    return bad;
}

static int isa_max;

/* For each ISA, finds the kernel for (df, sf, r) and compares it on codes. */
static void compare_all_isas(const dt_format *df, const dt_format *sf, const dt_rules *r,
                             const uint64_t *codes, size_t n, uint64_t *want, uint8_t *in,
                             uint8_t *out, size_t *checked, size_t *bad, size_t *kernels)
{
    bool have_want = false;
    for (int isa = 0; isa <= isa_max; isa++) {
        if (isa == DT_ISA_SSE2)
            continue;
        dt_isa_pin(isa);
        for (int tab = 0; tab < 2; tab++) {
            if (tab == 1 && sf->stride_bits != 16)
                break;
            dt_tables16_disable(tab == 0 && sf->stride_bits == 16);
            dt_kernel k;
            if (!dt_kernel_find(&k, df, sf, r, 1u << 20))
                continue;
            if (!have_want) {
                for (size_t i = 0; i < n; i++)
                    want[i] = reference(df, sf, codes[i], r);
                have_want = true;
            }
            char what[32];
            snprintf(what, sizeof what, "%s%s", dt_isa_name((dt_isa)isa), tab ? "+table" : "");
            *bad += run_and_compare(&k, df, sf, codes, want, n, in, out, what);
            dt_kernel_release(&k);
            *checked += n;
            ++*kernels;
        }
    }
    dt_tables16_disable(false);
    dt_isa_pin(-1);
}

/* Every source of <= 16 bits, every code, into every target, every rule set. */
static void test_exhaustive(void)
{
    uint64_t *codes = malloc(65536 * sizeof *codes), *want = malloc(65536 * sizeof *want);
    uint8_t *in = malloc(65536 * 2 + 16), *out = malloc(65536 * 8 + 16);
    for (size_t s = 0; s < NTYPES; s++) {
        const dt_format *sf = dt_format_of(all_types[s]);
        if (sf->bits > 16)
            continue;
        size_t checked = 0, bad = 0, kernels = 0;
        for (size_t d = 0; d < NTYPES; d++) {
            const dt_format *df = dt_format_of(all_types[d]);
            const size_t n = sample_codes(sf, scale, d, codes);
            dt_rules rs[64];
            size_t nr = rule_sets(df, rs);
            for (size_t ri = 0; ri < nr; ri++)
                compare_all_isas(df, sf, &rs[ri], codes, n, want, in, out, &checked, &bad,
                                 &kernels);
        }
        char name[96];
        snprintf(name, sizeof name, "kernels %s from %s (%zu kernels, %zu values)",
                 scale < 1 && sf->bits > 8 ? "sampled" : "exhaustive", sf->name, kernels, checked);
        CHECK(bad == 0, name, "%zu mismatches", bad);
    }
    free(codes);
    free(want);
    free(in);
    free(out);
}

/* ---- 32- and 64-bit sources: edges + random ------------------------------------------------ */

static uint64_t rnd_at(uint64_t *state) /* xorshift64*, one state per work item */
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 0x2545F4914F6CDD1Du;
}

static uint64_t mix64(uint64_t z) /* splitmix64's finalizer: seeds from item numbers */
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    z ^= z >> 31;
    return z ? z : 1;
}

/* Float edge values for a source float format (32 or 64 bits): every exponent with mantissas
 * that sit on, just below and just above each possible rounding point, plus specials. */
static size_t float_edges(const dt_format *sf, uint64_t *out, size_t cap, uint64_t *rng)
{
    const int man = sf->man_bits, eb = sf->exp_bits;
    size_t n = 0;
    const uint64_t emax = (UINT64_C(1) << eb) - 1;
    for (int sign = 0; sign < 2; sign++) {
        const uint64_t s = (uint64_t)sign << (sf->bits - 1);
        for (uint64_t e = 0; e <= emax && n + 64 < cap; e++) {
            /* float64: exponents far outside every narrow target are thinned out */
            if (sf->bits == 64 && e > 16 && e < emax - 16 && (e < 1023 - 200 || e > 1023 + 200) &&
                e % 37)
                continue;
            static const int ks[] = {1, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13, 15, 16, 17, 19, 20, 21,
                                     22, 23, 25, 28, 29, 30, 31, 35, 42, 50, 51, 52};
            for (size_t ki = 0; ki < sizeof ks / sizeof ks[0] && n + 8 < cap; ki++) {
                int k = ks[ki];
                if (k > man)
                    continue;
                /* k dropped bits: exactly half, half-1, half+1; with kept lsb 0 and 1 */
                const uint64_t half = UINT64_C(1) << (k - 1);
                const uint64_t top =
                    rnd_at(rng) & ((UINT64_C(1) << man) - 1) & ~((UINT64_C(1) << k) - 1);
                const uint64_t lsb = UINT64_C(1) << (k < man ? k : 0);
                const uint64_t cands[] = {top | half, (top | half) - 1, (top | half) + 1,
                                          (top ^ lsb) | half, top, top + 1,
                                          top | ((UINT64_C(1) << k) - 1)};
                for (size_t c = 0; c < 7; c++)
                    out[n++] = s | (e << man) | (cands[c] & ((UINT64_C(1) << man) - 1));
            }
            out[n++] = s | (e << man);
            out[n++] = s | (e << man) | ((UINT64_C(1) << man) - 1);
            out[n++] = s | (e << man) | 1;
        }
        /* NaN payloads, Inf, zero */
        out[n++] = s | (emax << man) | 1;
        out[n++] = s | (emax << man) | (UINT64_C(1) << (man - 1));
        out[n++] = s | (emax << man) | ((UINT64_C(1) << man) - 1);
        out[n++] = s | (emax << man);
        out[n++] = s;
    }
    return n;
}

/* Every value of every narrow float and integer as an exact source code (+-1 ulp; the 16-bit
 * types every 7th code). */
static size_t exact_targets(const dt_format *sf, uint64_t *out, size_t cap)
{
    static const dt_rules rne = {.round = DTCAST_ROUND_RNE};
    size_t n = 0;
    for (size_t t = 0; t < NTYPES; t++) {
        const dt_format *tf = dt_format_of(all_types[t]);
        const uint64_t step = tf->bits > 8 ? 7 : 1;
        if (tf->bits > 16 || n + 3 * (((UINT64_C(1) << tf->bits) + step - 1) / step) > cap)
            continue;
        for (uint64_t c = 0; c < (UINT64_C(1) << tf->bits); c += step) {
            dt_value v;
            dt_decode(tf, c, &v);
            uint64_t x = dt_encode(sf, &v, &rne);
            out[n++] = x;
            out[n++] = x + 1;
            out[n++] = x - 1;
        }
    }
    return n;
}

/* Integer edges: powers of two and neighbours, their negations, ties and near-ties of float32
 * (24 bits) and float64 (53 bits), both signs. */
static size_t int_edges(uint64_t *codes)
{
    size_t n = 0;
    for (int b = 0; b < 64; b++)
        for (int dlt = -2; dlt <= 2; dlt++)
            codes[n++] = ((UINT64_C(1) << b) + (uint64_t)dlt);
    for (int b = 0; b < 64; b++)
        codes[n++] = ~((UINT64_C(1) << b) - 1);
    for (int b = 24; b < 64; b++)
        for (int p = 24; p <= 53 && p <= b; p += 29)
            for (uint64_t t = 1; t <= 3; t++) {
                const uint64_t x = (UINT64_C(1) << b) + (t << (b - p));
                codes[n++] = x;
                codes[n++] = 0 - x;
                codes[n++] = x + 1;
            }
    return n;
}

#define WIDE_EDGE_CAP 400000
#define WIDE_CHUNK ((size_t)1 << 17)

/* One (source, destination, rule set): its kernels (one per ISA that has one), the number of
 * random values after the edges, and the results. Items are never copied (a kernel's table
 * may point into its own local buffer). */
typedef struct wide_item {
    dt_kernel k[DT_ISA_AVX512 + 1];
    int isa[DT_ISA_AVX512 + 1];
    int nk;
    size_t src_index, pair; /* the pair: index into the source's destination list */
    const dt_format *sf, *df;
    dt_rules r;
    const uint64_t *fixed; /* edges shared by every item of the source */
    size_t nfixed;
    size_t nrand;
    uint64_t seed;
    size_t values; /* distinct values compared (each against every kernel) */
    size_t bad;
} wide_item;

typedef struct wide_job {
    wide_item *items;
    size_t nitems;
    atomic_size_t next;
    pthread_mutex_t print_lock;
} wide_job;

/* Buffers of one worker. */
typedef struct wide_buf {
    uint64_t *edges, *codes;
    uint8_t *in, *want, *out;
} wide_buf;


/* dt_store for the harness's hot loop: little-endian elements of 8/16/32/64 bits, or packed
 * elements of 1/2/4 bits ORed into a zeroed buffer. */
static inline void put_code(int stride_bits, uint8_t *p, size_t i, uint64_t v)
{
    switch (stride_bits) {
    case 64:
        for (int b = 0; b < 8; b++)
            p[8 * i + (size_t)b] = (uint8_t)(v >> (8 * b));
        break;
    case 32:
        for (int b = 0; b < 4; b++)
            p[4 * i + (size_t)b] = (uint8_t)(v >> (8 * b));
        break;
    case 16:
        p[2 * i] = (uint8_t)v;
        p[2 * i + 1] = (uint8_t)(v >> 8);
        break;
    case 8:
        p[i] = (uint8_t)v;
        break;
    default: {
        const size_t per = 8u / (size_t)stride_bits;
        p[i / per] |= (uint8_t)((v & ((1u << stride_bits) - 1)) << (i % per * (size_t)stride_bits));
    }
    }
}

static void wide_report(wide_job *job, const wide_item *it, int j, const uint64_t *codes,
                        const uint8_t *out, const uint8_t *want, size_t n, size_t *bad)
{
    const dt_format *df = it->df, *sf = it->sf;
    size_t first = n, count = 0;
    for (size_t i = 0; i < n; i++)
        if (dt_load(df, out, i) != dt_load(df, want, i)) {
            if (first == n)
                first = i;
            count++;
        }
    const size_t db = bytes_for(df, n);
    bool past = false;
    for (size_t i = db; i < db + 8; i++)
        past = past || out[i] != 0xA5;
    *bad += count + (past ? 1 : 0);
    pthread_mutex_lock(&job->print_lock);
    if (failures_reported++ < 30) {
        const dt_rules *r = &it->r;
        if (count)
            printf("  mismatch %s %s -> %s round %d satf %d sati %d nanmax %d: code 0x%llx "
                   "gives 0x%llx, reference 0x%llx (%zu of %zu values in the block)\n",
                   dt_isa_name((dt_isa)it->isa[j]), sf->name, df->name, (int)r->round,
                   r->saturate_float, r->saturate_int, r->nan_as_max,
                   (unsigned long long)codes[first], (unsigned long long)dt_load(df, out, first),
                   (unsigned long long)dt_load(df, want, first), count, n);
        if (past)
            printf("  %s %s -> %s: writes past the end of a %zu-element output\n",
                   dt_isa_name((dt_isa)it->isa[j]), sf->name, df->name, n);
    }
    pthread_mutex_unlock(&job->print_lock);
}

/* Runs one item: its values in chunks; the reference once per value, every kernel against it. */
static void wide_run_item(wide_job *job, wide_item *it, wide_buf *b)
{
    const dt_format *sf = it->sf, *df = it->df;
    const uint64_t mask = sf->bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << sf->bits) - 1;
    uint64_t rng = it->seed;
    size_t ne = 0;
    if (sf->tc == DT_TC_FLOAT)
        ne = float_edges(sf, b->edges, WIDE_EDGE_CAP, &rng);
    for (size_t i = 0; i < it->nfixed && ne < WIDE_EDGE_CAP; i++)
        b->edges[ne++] = it->fixed[i];
    if (scale < 1) { /* valgrind: every k-th edge */
        const size_t k = (size_t)(1 / scale + 0.5), off = (size_t)(rnd_at(&rng) % k);
        size_t m = 0;
        for (size_t i = off; i < ne; i += k)
            b->edges[m++] = b->edges[i];
        ne = m;
    }
    const size_t total = ne + it->nrand;
    for (size_t pos = 0; pos < total;) {
        const size_t n = total - pos < WIDE_CHUNK ? total - pos : WIDE_CHUNK;
        for (size_t i = 0; i < n; i++) {
            uint64_t x;
            if (pos + i < ne) {
                x = b->edges[pos + i];
            } else {
                x = rnd_at(&rng);
                if ((pos + i - ne) % 4 == 1) /* small magnitudes */
                    x >>= rnd_at(&rng) % 64;
            }
            b->codes[i] = x & mask;
        }
        /* the inputs, and the reference's outputs packed like the kernels' */
        const size_t db = bytes_for(df, n);
        memset(b->want, 0, db + 8);
        for (size_t i = 0; i < n; i++) {
            put_code(sf->stride_bits, b->in, i, b->codes[i]);
            put_code(df->stride_bits, b->want, i, reference(df, sf, b->codes[i], &it->r));
        }
        for (int j = 0; j < it->nk; j++) {
            memset(b->out, 0xA5, db + 8);
            dt_kernel_run(&it->k[j], b->out, b->in, 0, n);
            clear_padding(df, b->out, n);
            static const uint8_t guard[8] = {0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5};
            if (memcmp(b->out, b->want, db) != 0 || memcmp(b->out + db, guard, 8) != 0)
                wide_report(job, it, j, b->codes, b->out, b->want, n, &it->bad);
        }
        it->values += n;
        pos += n;
    }
}

static void *wide_worker(void *arg)
{
    wide_job *job = arg;
    wide_buf b;
    b.edges = malloc(WIDE_EDGE_CAP * sizeof *b.edges);
    b.codes = malloc(WIDE_CHUNK * sizeof *b.codes);
    b.in = malloc(WIDE_CHUNK * 8 + 16);
    b.want = malloc(WIDE_CHUNK * 8 + 16);
    b.out = malloc(WIDE_CHUNK * 8 + 16);
    if (b.edges && b.codes && b.in && b.want && b.out) {
        for (;;) {
            const size_t i = atomic_fetch_add(&job->next, 1);
            if (i >= job->nitems)
                break;
            wide_run_item(job, &job->items[i], &b);
        }
    } else {
        printf("FAIL kernels from wide sources: out of memory\n");
    }
    free(b.edges);
    free(b.codes);
    free(b.in);
    free(b.want);
    free(b.out);
    return NULL;
}

static void test_wide_sources(void)
{
    static const dtcast_type wide[] = {DTCAST_FLOAT32, DTCAST_FLOAT64, DTCAST_INT32,
                                       DTCAST_UINT32, DTCAST_INT64, DTCAST_UINT64};
    enum { NWIDE = sizeof wide / sizeof wide[0] };
    /* random values: per pair 240000 x scale, at least 20000 x scale per rule set */
    const double per_pair = 240000 * scale, per_rule_set = 20000 * scale;
    const size_t max_items = NWIDE * NTYPES * 64; /* sizeof(wide_item) is a multiple of 64 */
    wide_item *items = aligned_alloc(64, max_items * sizeof(wide_item));
    uint64_t *fixed[NWIDE];
    size_t nfixed[NWIDE];
    if (!items) {
        CHECK(0, "kernels from wide sources", "out of memory");
        return;
    }
    /* The kernels, found here with the ISA pinned in turn (dt_isa_pin is global), before any
     * worker runs. */
    size_t nitems = 0;
    for (size_t s = 0; s < NWIDE; s++) {
        const dt_format *sf = dt_format_of(wide[s]);
        fixed[s] = malloc(WIDE_EDGE_CAP * sizeof *fixed[s]);
        if (!fixed[s]) {
            nfixed[s] = 0;
            continue;
        }
        nfixed[s] = sf->tc == DT_TC_FLOAT ? exact_targets(sf, fixed[s], WIDE_EDGE_CAP / 2)
                                          : int_edges(fixed[s]);
        for (size_t d = 0; d < NTYPES; d++) {
            const dt_format *df = dt_format_of(all_types[d]);
            dt_rules rs[64];
            const size_t nr = rule_sets(df, rs), first = nitems;
            for (size_t ri = 0; ri < nr; ri++) {
                wide_item *it = &items[nitems];
                memset(it, 0, sizeof *it);
                for (int isa = 0; isa <= isa_max; isa++) {
                    if (isa == DT_ISA_SSE2)
                        continue;
                    dt_isa_pin(isa);
                    if (dt_kernel_find(&it->k[it->nk], df, sf, &rs[ri], 1u << 20))
                        it->isa[it->nk++] = isa;
                }
                dt_isa_pin(-1);
                if (!it->nk)
                    continue;
                it->src_index = s;
                it->pair = d;
                it->sf = sf;
                it->df = df;
                it->r = rs[ri];
                it->fixed = fixed[s];
                it->nfixed = nfixed[s];
                it->seed = mix64(UINT64_C(0x9E3779B97F4A7C15) * (nitems + 1) + s * 1000003u + d);
                nitems++;
            }
            /* the pair's random values, spread over its rule sets that have kernels */
            const size_t nk_sets = nitems - first;
            for (size_t i = first; i < nitems; i++) {
                const double share = per_pair / (double)nk_sets;
                items[i].nrand = (size_t)(share > per_rule_set ? share + 0.999 : per_rule_set);
            }
        }
    }
    /* The work, on DTCAST_TEST_THREADS workers (default 2) taking items in turn. */
    const char *th = getenv("DTCAST_TEST_THREADS");
    long nthreads = th && *th ? strtol(th, NULL, 10) : 2;
    if (nthreads < 1 || nthreads > 64)
        nthreads = 1;
    wide_job job;
    job.items = items;
    job.nitems = nitems;
    atomic_init(&job.next, 0);
    pthread_mutex_init(&job.print_lock, NULL);
    pthread_t tids[64];
    long started = 0;
    for (long t = 1; t < nthreads; t++)
        if (pthread_create(&tids[started], NULL, wide_worker, &job) == 0)
            started++;
    wide_worker(&job);
    for (long t = 0; t < started; t++)
        pthread_join(tids[t], NULL);
    pthread_mutex_destroy(&job.print_lock);
    /* Per source: kernels, values, the fewest values of a pair. */
    for (size_t s = 0; s < NWIDE; s++) {
        const dt_format *sf = dt_format_of(wide[s]);
        size_t kernels = 0, checked = 0, bad = 0, pairs = 0, min_pair = SIZE_MAX;
        size_t pair_values[64] = {0}; /* by destination index, < ntypes */
        for (size_t i = 0; i < nitems; i++) {
            if (items[i].src_index != s)
                continue;
            kernels += (size_t)items[i].nk;
            checked += items[i].values * (size_t)items[i].nk;
            bad += items[i].bad;
            pair_values[items[i].pair] += items[i].values;
        }
        for (size_t d = 0; d < NTYPES; d++)
            if (pair_values[d]) {
                pairs++;
                if (pair_values[d] < min_pair)
                    min_pair = pair_values[d];
            }
        char name[160];
        snprintf(name, sizeof name,
                 "kernels from %s: edges + random (%zu pairs, >= %zu values each; %zu kernels, "
                 "%zu kernel-values)",
                 sf->name, pairs, pairs ? min_pair : 0, kernels, checked);
        CHECK(bad == 0, name, "%zu mismatches", bad);
        free(fixed[s]);
    }
    for (size_t i = 0; i < nitems; i++)
        for (int j = 0; j < items[i].nk; j++)
            dt_kernel_release(&items[i].k[j]);
    free(items);
}

/* Tails, unaligned pointers, begin offsets (multiples of 8) and in place, through the kernels. */
static void test_layouts(void)
{
    static const dtcast_type srcs[] = {DTCAST_FLOAT32, DTCAST_FLOAT16, DTCAST_BFLOAT16,
                                       DTCAST_FLOAT64, DTCAST_UINT8, DTCAST_INT4,
                                       DTCAST_FLOAT8E4M3FN, DTCAST_INT32, DTCAST_INT16,
                                       DTCAST_INT64, DTCAST_UINT64, DTCAST_UINT32};
    static const dtcast_type dsts[] = {DTCAST_FLOAT16, DTCAST_BFLOAT16, DTCAST_FLOAT8E4M3FN,
                                       DTCAST_FLOAT8E5M2, DTCAST_FLOAT4E2M1, DTCAST_INT4,
                                       DTCAST_INT8, DTCAST_FLOAT32, DTCAST_FLOAT8E8M0,
                                       DTCAST_UINT16, DTCAST_FLOAT64, DTCAST_INT2, DTCAST_UINT2,
                                       DTCAST_UINT1, DTCAST_BOOL, DTCAST_INT64, DTCAST_UINT32,
                                       DTCAST_INT32, DTCAST_INT1};
    uint8_t src[1200], buf[1200], dst[1200], want[1200];
    size_t bad = 0, runs = 0;
    for (int isa = 0; isa <= isa_max; isa++) {
        dt_isa_pin(isa);
        for (size_t s = 0; s < sizeof srcs / sizeof srcs[0]; s++)
            for (size_t d = 0; d < sizeof dsts / sizeof dsts[0]; d++) {
                const dt_format *sf = dt_format_of(srcs[s]), *df = dt_format_of(dsts[d]);
                dt_rules r = {.round = DTCAST_ROUND_RNE};
                dt_kernel k;
                if (!dt_kernel_find(&k, df, sf, &r, 100))
                    continue;
                for (size_t count = 0; count <= 100; count++)
                    for (size_t off = 0; off < 3; off++) {
                        for (size_t i = 0; i < sizeof src; i++)
                            src[i] = (uint8_t)rnd();
                        const size_t sb = bytes_for(sf, count), db = bytes_for(df, count);
                        memset(dst, 0x5A, sizeof dst);
                        memset(want, 0x5A, sizeof want);
                        for (size_t i = 0; i < count; i++)
                            dt_store(df, want + off, i,
                                     reference(df, sf, dt_load(sf, src + off, i), &r));
                        /* the caller's job: padding bits of a packed tail are zeroed */
                        clear_padding(df, want + off, count);
                        dt_kernel_run(&k, dst + off, src + off, 0, count);
                        clear_padding(df, dst + off, count);
                        if (memcmp(dst, want, sizeof dst) != 0 && bad++ < 5)
                            printf("  layout %s: %s -> %s count %zu offset %zu\n",
                                   dt_isa_name((dt_isa)isa), sf->name, df->name, count, off);
                        /* two ranges split at a multiple of 8 */
                        if (count > 16) {
                            memset(dst, 0x5A, sizeof dst);
                            dt_kernel_run(&k, dst + off, src + off, 0, 8);
                            dt_kernel_run(&k, dst + off, src + off, 8, count);
                            clear_padding(df, dst + off, count);
                            if (memcmp(dst, want, sizeof dst) != 0 && bad++ < 5)
                                printf("  split %s: %s -> %s count %zu offset %zu\n",
                                       dt_isa_name((dt_isa)isa), sf->name, df->name, count, off);
                        }
                        /* in place, narrowing or same width */
                        if (df->stride_bits <= sf->stride_bits) {
                            memcpy(buf, src, sizeof buf);
                            dt_kernel_run(&k, buf + off, buf + off, 0, count);
                            clear_padding(df, buf + off, count);
                            if (memcmp(buf + off, want + off, db) != 0 && bad++ < 5)
                                printf("  in place %s: %s -> %s count %zu offset %zu\n",
                                       dt_isa_name((dt_isa)isa), sf->name, df->name, count, off);
                        }
                        (void)sb;
                        runs++;
                    }
                dt_kernel_release(&k);
            }
    }
    dt_isa_pin(-1);
    char name[80];
    snprintf(name, sizeof name, "kernels: tails 0..100, unaligned, split, in place (%zu runs)",
             runs);
    CHECK(bad == 0, name, "%zu layouts differ", bad);
}

/* ---- complex numbers: chains of part kernels ------------------------------------------------ */
/* Every pair with a complex side (complex <-> complex, complex -> every real type keeping the
 * real part, every real type -> complex), every rule set, every ISA: random part codes with a
 * quarter of small magnitudes, through the kernel against the reference part by part. */
static void test_complex(void)
{
    static const dtcast_type cx[] = {DTCAST_COMPLEX32, DTCAST_BCOMPLEX32, DTCAST_COMPLEX64,
                                     DTCAST_COMPLEX128};
    enum { NCX = sizeof cx / sizeof cx[0] };
    enum { N = 4099 };
    uint64_t *in = malloc(2 * N * 8 + 64), *out = malloc(2 * N * 8 + 64),
             *want = malloc(2 * N * 8 + 64);
    size_t pairs = 0, kernels = 0, bad = 0;
    uint64_t rng = UINT64_C(0xC0FFEE);
    for (size_t a = 0; a < NCX + NTYPES; a++)
        for (size_t b = 0; b < NCX + NTYPES; b++) {
            const dt_format *sf = dt_format_of(a < NCX ? cx[a] : all_types[a - NCX]);
            const dt_format *df = dt_format_of(b < NCX ? cx[b] : all_types[b - NCX]);
            if ((a >= NCX && b >= NCX) || sf == df)
                continue;
            const bool cs = sf->tc == DT_TC_COMPLEX, cd = df->tc == DT_TC_COMPLEX;
            const dt_format *sp = cs ? dt_format_of(sf->part) : sf;
            const dt_format *dp = cd ? dt_format_of(df->part) : df;
            const uint64_t mask = sp->bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << sp->bits) - 1;
            dt_rules rs[64];
            const size_t nr = rule_sets(dp, rs);
            pairs++;
            for (size_t ri = 0; ri < nr; ri++) {
                const size_t nparts = cs ? 2 * (size_t)N : N;
                memset(in, 0, 2 * N * 8 + 64);
                for (size_t i = 0; i < nparts; i++) {
                    uint64_t x = rnd_at(&rng);
                    if (i % 4 == 1)
                        x >>= rnd_at(&rng) % 64;
                    dt_store(sp, in, i, x & mask);
                }
                memset(want, 0, 2 * N * 8 + 64);
                for (size_t i = 0; i < N; i++) {
                    const uint64_t re = dt_load(sp, in, cs ? 2 * i : i);
                    const uint64_t im = cs ? dt_load(sp, in, 2 * i + 1) : 0;
                    dt_store(dp, want, cd ? 2 * i : i, reference(dp, sp, re, &rs[ri]));
                    if (cd)
                        dt_store(dp, want, 2 * i + 1,
                                 cs ? reference(dp, sp, im, &rs[ri]) : 0);
                }
                for (int isa = 0; isa <= isa_max; isa++) {
                    if (isa == DT_ISA_SSE2)
                        continue;
                    dt_isa_pin(isa);
                    dt_kernel k;
                    if (!dt_kernel_find(&k, df, sf, &rs[ri], N))
                        continue;
                    kernels++;
                    const size_t db = bytes_for(df, N);
                    memset(out, 0xA5, 2 * N * 8 + 64);
                    dt_kernel_run(&k, out, in, 0, N);
                    clear_padding(df, (uint8_t *)out, N);
                    if (memcmp(out, want, db) != 0 || ((uint8_t *)out)[db] != 0xA5) {
                        if (bad++ < 10)
                            printf("  %s: %s -> %s round %d satf %d: differs from the "
                                   "reference\n", dt_isa_name((dt_isa)isa), sf->name, df->name,
                                   (int)rs[ri].round, rs[ri].saturate_float);
                    }
                    dt_kernel_release(&k);
                }
                dt_isa_pin(-1);
            }
        }
    free(in);
    free(out);
    free(want);
    char name[128];
    snprintf(name, sizeof name, "kernels with a complex side (%zu pairs, %zu kernels, %d values "
             "each)", pairs, kernels, (int)N);
    CHECK(bad == 0 && kernels > 0, name, "%zu differ", bad);
}

int main(void)
{
    const char *sc = getenv("DTCAST_TEST_SCALE");
    if (sc && *sc)
        scale = atof(sc);
    isa_max = (int)dt_isa_detected();
    ntypes = real_types(all_types, 64);
    const char *only = getenv("DTCAST_TEST_ONLY"); /* "wide" for tests/long */
    printf("# ISAs tested: portable%s%s\n", isa_max >= DT_ISA_AVX2 ? " avx2" : "",
           isa_max >= DT_ISA_AVX512 ? " avx512" : "");
    if (!only || strcmp(only, "wide") != 0) {
        test_layouts();
        test_complex();
        test_exhaustive();
    }
    test_wide_sources();
    return CHECK_EXIT();
}
