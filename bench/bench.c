/* dtcast-bench: throughput of dtcast_convert against memcpy, and of dtcast's number <-> text
 * against snprintf / strtof / strtod, one JSON object per line (bench/run makes the table).
 *
 *   dtcast-bench [--n ELEMENTS] [--runs R] [--filter SUBSTRING] [--budget SECONDS] [--list]
 *                [--matrix]                  every ordered pair of numeric types, default options
 *                [--entries]                 every kernel registry entry, called directly
 *                [--round stochastic]        the stochastic-rounding rows (seed 1) instead
 *   dtcast-bench --dump TYPE ELEMENTS FILE      the source data of TYPE, for the peers
 *
 * Every row: the source is generated once per type (same seed, so the peers can get the same
 * bytes with --dump), the output is preallocated and touched, then memcpy of the larger buffer
 * and the conversion are timed alternately, R times each; the medians are reported. Throughput
 * counts bytes read plus bytes written (memcpy: twice the larger buffer). */
#include "dtcast.h"
#include "internal.h"          /* --entries: the kernel registry (libdtcast.a's internals) */
#include "kernels/kernels.h"
#include "quant.h"         /* --quant */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- options ----------------------------------------------------------------------------- */

typedef struct config {
    size_t n;            /* elements per conversion */
    int runs;            /* timed runs per row (median) */
    const char *filter;  /* only rows whose name contains it */
    double budget;       /* seconds per row after which a slow row stops early (>= 1 run) */
    int list;            /* print the row names only */
    int matrix;          /* every ordered pair of numeric types instead of the curated rows */
    int entries;         /* every kernel registry entry */
    dtcast_round round;  /* --round: DTCAST_ROUND_STOCHASTIC runs the stochastic rows */
} config;

/* ---- time and random data ---------------------------------------------------------------- */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void die(const char *what)
{
    fprintf(stderr, "dtcast-bench: %s\n", what);
    exit(2);
}

static void *alloc_touched(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        die("out of memory");
    memset(p, 0x5A, bytes); /* fault every page in before timing */
    return p;
}

static size_t storage(dtcast_type t, size_t n)
{
    size_t bytes = 0;
    if (dtcast_storage_size(t, n, &bytes, NULL) != DTCAST_OK)
        die("size overflow");
    return bytes;
}

/* A float32 weight-like value: |x| in [2^-12, 2^10), random sign and 23 fraction bits; one in
 * 64 is any finite float32 (overflow, underflow and subnormals for the narrow targets). */
static uint32_t float32_sample(uint64_t r)
{
    if ((r & 63) == 0) {
        uint32_t any = (uint32_t)(r >> 32);
        return (any & 0x7F800000u) == 0x7F800000u ? any & 0xBFFFFFFFu : any;
    }
    const uint32_t e = 127 - 12 + (uint32_t)((r >> 8) % 22);
    return (uint32_t)((r >> 40) & 1) << 31 | e << 23 | (uint32_t)(r >> 41);
}

static uint64_t float64_sample(uint64_t r, uint64_t r2)
{
    if ((r & 63) == 0) {
        uint64_t any = r2;
        return (any & UINT64_C(0x7FF0000000000000)) == UINT64_C(0x7FF0000000000000)
                   ? any & UINT64_C(0xBFFFFFFFFFFFFFFF)
                   : any;
    }
    const uint64_t e = 1023 - 12 + (r >> 8) % 22;
    return ((r >> 40) & 1) << 63 | e << 52 | (r2 >> 12);
}

/* Source data of type t: weight-like floats, uniformly random bits for everything else. */
static void *make_source(dtcast_type t, size_t n)
{
    uint64_t seed = UINT64_C(0xD7CA57) + (uint64_t)t;
    const size_t bytes = storage(t, n);
    uint8_t *p = alloc_touched(bytes);
    if (t == DTCAST_FLOAT32 || t == DTCAST_FLOAT16 || t == DTCAST_BFLOAT16) {
        uint32_t *f = t == DTCAST_FLOAT32 ? (uint32_t *)p : malloc(n * 4);
        if (!f)
            die("out of memory");
        seed = UINT64_C(0xD7CA57) + DTCAST_FLOAT32; /* half formats: the float32 values, rounded */
        for (size_t i = 0; i < n; i++)
            f[i] = float32_sample(splitmix64(&seed));
        if (t != DTCAST_FLOAT32) {
            dtcast_options o;
            dtcast_options_init(&o);
            dtcast_convert(p, t, f, DTCAST_FLOAT32, n, &o, NULL);
            free(f);
        }
    } else if (t == DTCAST_FLOAT64) {
        uint64_t *f = (uint64_t *)p;
        for (size_t i = 0; i < n; i++) {
            const uint64_t r = splitmix64(&seed);
            f[i] = float64_sample(r, splitmix64(&seed));
        }
    } else {
        for (size_t i = 0; i + 8 <= bytes; i += 8) {
            const uint64_t r = splitmix64(&seed);
            memcpy(p + i, &r, 8);
        }
        for (size_t i = bytes & ~(size_t)7; i < bytes; i++)
            p[i] = (uint8_t)splitmix64(&seed);
        if (t == DTCAST_BOOL)
            for (size_t i = 0; i < bytes; i++)
                p[i] &= 1;
        if (t == DTCAST_FLOAT6E2M3FN || t == DTCAST_FLOAT6E3M2FN)
            for (size_t i = 0; i < bytes; i++)
                p[i] &= 0x3F;
    }
    return p;
}

/* One cached source buffer per type (the largest row needs them all at most once). */
#define TYPE_SLOTS 128
static void *source_cache[TYPE_SLOTS];
static size_t source_cache_n[TYPE_SLOTS];

static const void *source_of(dtcast_type t, size_t n)
{
    const int slot = (int)t % TYPE_SLOTS;
    if (!source_cache[slot] || source_cache_n[slot] < n) {
        free(source_cache[slot]);
        source_cache[slot] = make_source(t, n);
        source_cache_n[slot] = n;
    }
    return source_cache[slot];
}

/* ---- rows -------------------------------------------------------------------------------- */

typedef struct row {
    const char *group;  /* target class of issue 4 */
    dtcast_type src, dst;
    dtcast_round round;
    int saturate;
    unsigned threads;
    double target;      /* ratio to memcpy, 0 = informative */
} row;

static const char *mode_name(const row *r, char *buf, size_t size)
{
    snprintf(buf, size, "%s%s", dtcast_round_name(r->round), r->saturate ? "+sat" : "");
    return buf;
}

static int row_selected(const config *c, const row *r)
{
    if (!c->filter)
        return 1;
    char name[160], mode[32];
    snprintf(name, sizeof name, "%s %s->%s %s t%u", r->group, dtcast_type_name(r->src),
             dtcast_type_name(r->dst), mode_name(r, mode, sizeof mode), r->threads);
    return strstr(name, c->filter) != NULL;
}

static void memcpy_buffers(size_t bytes, void **a, void **b)
{
    static void *ma, *mb;
    static size_t have;
    if (bytes > have) {
        free(ma);
        free(mb);
        ma = alloc_touched(bytes);
        mb = alloc_touched(bytes);
        have = bytes;
    }
    *a = ma;
    *b = mb;
}

static void print_row_json(const row *r, size_t n, int runs, double t, double t_mem,
                           size_t bytes, size_t mem_bytes, const char *extra)
{
    char mode[32];
    const double gbs = (double)bytes / t * 1e-9;
    const double mem_gbs = 2.0 * (double)mem_bytes / t_mem * 1e-9;
    printf("{\"kind\":\"convert\",\"group\":\"%s\",\"src\":\"%s\",\"dst\":\"%s\",\"mode\":\"%s\","
           "\"threads\":%u,\"n\":%zu,\"runs\":%d,\"seconds\":%.6g,\"gbs\":%.4g,"
           "\"memcpy_gbs\":%.4g,\"ratio\":%.4g,\"time_ratio\":%.4g,\"target\":%.3g%s}\n",
           r->group, dtcast_type_name(r->src), dtcast_type_name(r->dst),
           mode_name(r, mode, sizeof mode), r->threads, n, runs, t, gbs, mem_gbs, gbs / mem_gbs,
           t_mem / t, r->target, extra ? extra : "");
    fflush(stdout);
}

static void options_for(const row *r, dtcast_options *o)
{
    dtcast_options_init(o);
    o->round = r->round;
    o->float_overflow = r->saturate ? DTCAST_FLOAT_OVERFLOW_SATURATE : DTCAST_FLOAT_OVERFLOW_IEEE;
    o->int_overflow = r->saturate ? DTCAST_INT_OVERFLOW_SATURATE : DTCAST_INT_OVERFLOW_WRAP;
    o->threads = r->threads;
    o->discard_imaginary = 1; /* complex -> real in the matrix: the real part, as numpy */
    o->seed = 1;              /* stochastic rows */
}

/* Times one row: memcpy and the conversion alternately, the medians. */
static void run_row(const config *c, const row *r)
{
    const size_t n = c->n;
    const void *src = source_of(r->src, n);
    const size_t sb = storage(r->src, n), db = storage(r->dst, n);
    void *dst = alloc_touched(db);
    void *ma, *mb;
    const size_t mem_bytes = sb > db ? sb : db;
    memcpy_buffers(mem_bytes, &ma, &mb);
    dtcast_options o;
    options_for(r, &o);
    /* Warm-up on a slice: code, tables, lazy init. */
    if (dtcast_convert(dst, r->dst, src, r->src, n < 65536 ? n : 65536, &o, NULL) != DTCAST_OK)
        die("conversion failed");
    double tc[64], tm[64];
    int runs = 0;
    const double start = now_seconds();
    while (runs < c->runs && runs < 64) {
        double t0 = now_seconds();
        memcpy(ma, mb, mem_bytes);
        double t1 = now_seconds();
        dtcast_convert(dst, r->dst, src, r->src, n, &o, NULL);
        double t2 = now_seconds();
        tm[runs] = t1 - t0;
        tc[runs] = t2 - t1;
        runs++;
        if (now_seconds() - start > c->budget)
            break; /* a slow row: far below any target; keep the session bounded */
    }
    free(dst);
    print_row_json(r, n, runs, median(tc, runs), median(tm, runs), sb + db, mem_bytes, NULL);
}

/* Small tensors (< 64 KiB in + out): automatic threads must cost nothing over one thread. */
static void run_small(const config *c, dtcast_type s, dtcast_type d, size_t n)
{
    row r1 = {"small", s, d, DTCAST_ROUND_RNE, 0, 1, 0};
    row r0 = {"small", s, d, DTCAST_ROUND_RNE, 0, 0, 0};
    if (!row_selected(c, &r0))
        return;
    const void *src = source_of(s, n);
    const size_t sb = storage(s, n), db = storage(d, n), mem_bytes = sb > db ? sb : db;
    void *dst = alloc_touched(db), *ma, *mb;
    memcpy_buffers(mem_bytes, &ma, &mb);
    dtcast_options o1, o0;
    options_for(&r1, &o1);
    options_for(&r0, &o0);
    /* Blocks of 50 calls, alternating one thread / automatic / memcpy, 60 blocks: the medians
     * of many short blocks keep other load on the machine out of the comparison. */
    const int reps = 50, blocks = 60;
    double t1[64], t0[64], tm[64];
    for (int k = 0; k < blocks; k++) {
        double a = now_seconds();
        for (int i = 0; i < reps; i++)
            memcpy(ma, mb, mem_bytes);
        double b = now_seconds();
        for (int i = 0; i < reps; i++)
            dtcast_convert(dst, d, src, s, n, &o1, NULL);
        double e = now_seconds();
        for (int i = 0; i < reps; i++)
            dtcast_convert(dst, d, src, s, n, &o0, NULL);
        double f = now_seconds();
        tm[k] = (b - a) / reps;
        t1[k] = (e - b) / reps;
        t0[k] = (f - e) / reps;
    }
    const int runs = blocks;
    const double m1 = median(t1, runs), m0 = median(t0, runs), mm = median(tm, runs);
    char extra[96];
    snprintf(extra, sizeof extra, ",\"vs_one_thread\":%.4g", m1 / m0);
    print_row_json(&r1, n, runs, m1, mm, sb + db, mem_bytes, NULL);
    print_row_json(&r0, n, runs, m0, mm, sb + db, mem_bytes, extra);
    free(dst);
}

/* ---- text -------------------------------------------------------------------------------- */

/* Random finite values of t (float32: all finite bit patterns; float64 likewise). */
static void *text_values(dtcast_type t, size_t n)
{
    uint64_t seed = UINT64_C(0x7E57) + (uint64_t)t;
    if (t == DTCAST_FLOAT32) {
        uint32_t *v = malloc(n * 4);
        if (!v)
            die("out of memory");
        for (size_t i = 0; i < n; i++) {
            uint32_t x;
            do
                x = (uint32_t)splitmix64(&seed);
            while ((x & 0x7F800000u) == 0x7F800000u);
            v[i] = x;
        }
        return v;
    }
    uint64_t *v = malloc(n * 8);
    if (!v)
        die("out of memory");
    for (size_t i = 0; i < n; i++) {
        uint64_t x;
        do
            x = splitmix64(&seed);
        while ((x & UINT64_C(0x7FF0000000000000)) == UINT64_C(0x7FF0000000000000));
        v[i] = x;
    }
    return v;
}

typedef struct text_times {
    double dt_format, dt_parse, libc_format, libc_parse;             /* per element */
    double dt_array_format, dt_array_parse, libc_array_format, libc_array_parse; /* arrays */
} text_times;

static void libc_format_one(char *buf, size_t size, const void *vals, size_t i, int f64)
{
    if (f64) {
        double x;
        memcpy(&x, (const uint64_t *)vals + i, 8);
        snprintf(buf, size, "%.17g", x);
    } else {
        float x;
        memcpy(&x, (const uint32_t *)vals + i, 4);
        snprintf(buf, size, "%.9g", (double)x);
    }
}

static void libc_parse_one(const char *s, void *out, size_t i, int f64)
{
    if (f64) {
        double x = strtod(s, NULL);
        memcpy((uint64_t *)out + i, &x, 8);
    } else {
        float x = strtof(s, NULL);
        memcpy((uint32_t *)out + i, &x, 4);
    }
}

/* One timed pass of each loop. Per element: dtcast_format_element / dtcast_parse_element into a
 * flat table of 32-byte slots, against snprintf / strtof (strtod) on the same slots. Arrays:
 * dtcast_convert to DTCAST_STRING (one malloc'ed string per element) and back, against a loop
 * of snprintf + strdup (the same per-string allocation) and a loop of strtof (strtod) over the
 * strdup'ed strings. Freeing the strings is not timed on either side. Each side parses its own
 * text (dtcast: shortest round trip; libc: %.9g / %.17g), and both must give back the values. */
static void time_text_once(dtcast_type t, const void *vals, size_t n, char *slots, void *out,
                           char **strs, text_times *tt, int *mismatch)
{
    const int f64 = t == DTCAST_FLOAT64;
    const size_t bytes = n * (f64 ? 8 : 4);
    double a = now_seconds();
    for (size_t i = 0; i < n; i++)
        dtcast_format_element(slots + 32 * i, 32, vals, t, i, NULL, NULL);
    double b = now_seconds();
    for (size_t i = 0; i < n; i++)
        dtcast_parse_element(out, t, i, slots + 32 * i, NULL, NULL);
    double c = now_seconds();
    *mismatch += memcmp(out, vals, bytes) != 0;
    for (size_t i = 0; i < n; i++)
        libc_format_one(slots + 32 * i, 32, vals, i, f64);
    double d = now_seconds();
    for (size_t i = 0; i < n; i++)
        libc_parse_one(slots + 32 * i, out, i, f64);
    double e = now_seconds();
    *mismatch += memcmp(out, vals, bytes) != 0;
    tt->dt_format = b - a;
    tt->dt_parse = c - b;
    tt->libc_format = d - c;
    tt->libc_parse = e - d;

    memset(out, 0, bytes);
    a = now_seconds();
    if (dtcast_convert(strs, DTCAST_STRING, vals, t, n, NULL, NULL) != DTCAST_OK)
        die("dtcast_convert to strings failed");
    b = now_seconds();
    if (dtcast_convert(out, t, strs, DTCAST_STRING, n, NULL, NULL) != DTCAST_OK)
        die("dtcast_convert from strings failed");
    c = now_seconds();
    *mismatch += memcmp(out, vals, bytes) != 0;
    dtcast_strings_free(strs, n);
    memset(out, 0, bytes);
    d = now_seconds();
    for (size_t i = 0; i < n; i++) {
        char buf[32];
        libc_format_one(buf, sizeof buf, vals, i, f64);
        strs[i] = strdup(buf);
        if (!strs[i])
            die("out of memory");
    }
    e = now_seconds();
    for (size_t i = 0; i < n; i++)
        libc_parse_one(strs[i], out, i, f64);
    const double g = now_seconds();
    *mismatch += memcmp(out, vals, bytes) != 0;
    for (size_t i = 0; i < n; i++)
        free(strs[i]);
    tt->dt_array_format = b - a;
    tt->dt_array_parse = c - b;
    tt->libc_array_format = e - d;
    tt->libc_array_parse = g - e;
}

static void run_text(const config *c, dtcast_type t)
{
    char name[64];
    snprintf(name, sizeof name, "text %s", dtcast_type_name(t));
    if (c->filter && !strstr(name, c->filter))
        return;
    size_t n = c->n / 16; /* 4 Mi of the 64 Mi default */
    if (n < 1024)
        n = 1024;
    void *vals = text_values(t, n);
    char *slots = alloc_touched(32 * n);
    void *out = alloc_touched(n * 8);
    char **strs = alloc_touched(n * sizeof *strs);
    enum { F, P, LF, LP, AF, AP, LAF, LAP, KINDS };
    double tm[KINDS][64];
    int mismatch = 0, runs = 0;
    const double start = now_seconds();
    while (runs < c->runs && runs < 64) {
        text_times tt;
        time_text_once(t, vals, n, slots, out, strs, &tt, &mismatch);
        const double got[KINDS] = {tt.dt_format,       tt.dt_parse,        tt.libc_format,
                                   tt.libc_parse,      tt.dt_array_format, tt.dt_array_parse,
                                   tt.libc_array_format, tt.libc_array_parse};
        for (int k = 0; k < KINDS; k++)
            tm[k][runs] = got[k];
        runs++;
        if (now_seconds() - start > 4 * c->budget)
            break;
    }
    double m[KINDS];
    for (int k = 0; k < KINDS; k++)
        m[k] = median(tm[k], runs);
    const double ns = 1e9 / (double)n;
    printf("{\"kind\":\"text\",\"type\":\"%s\",\"n\":%zu,\"runs\":%d,\"libc\":\"%s\","
           "\"format_ns\":%.4g,\"parse_ns\":%.4g,\"libc_format_ns\":%.4g,\"libc_parse_ns\":%.4g,"
           "\"format_speedup\":%.4g,\"parse_speedup\":%.4g,\"roundtrip_speedup\":%.4g,"
           "\"array_format_ns\":%.4g,\"array_parse_ns\":%.4g,\"libc_array_format_ns\":%.4g,"
           "\"libc_array_parse_ns\":%.4g,\"array_format_speedup\":%.4g,"
           "\"array_parse_speedup\":%.4g,\"array_roundtrip_speedup\":%.4g,"
           "\"roundtrip_exact\":%s,\"target\":3}\n",
           dtcast_type_name(t), n, runs,
           t == DTCAST_FLOAT64 ? "snprintf(%.17g)+strtod" : "snprintf(%.9g)+strtof",
           m[F] * ns, m[P] * ns, m[LF] * ns, m[LP] * ns, m[LF] / m[F], m[LP] / m[P],
           (m[LF] + m[LP]) / (m[F] + m[P]), m[AF] * ns, m[AP] * ns, m[LAF] * ns, m[LAP] * ns,
           m[LAF] / m[AF], m[LAP] / m[AP], (m[LAF] + m[LAP]) / (m[AF] + m[AP]),
           mismatch ? "false" : "true");
    fflush(stdout);
    free(vals);
    free(slots);
    free(out);
    free(strs);
}

/* ---- the row list ------------------------------------------------------------------------ */

static const dtcast_type narrow_targets[] = {
    DTCAST_FLOAT8E4M3FN, DTCAST_FLOAT8E4M3FNUZ, DTCAST_FLOAT8E5M2,  DTCAST_FLOAT8E5M2FNUZ,
    DTCAST_FLOAT8E4M3,   DTCAST_FLOAT8E3M4,     DTCAST_FLOAT8E4M3B11FNUZ, DTCAST_FLOAT8E8M0,
    DTCAST_FLOAT4E2M1,   DTCAST_INT4,           DTCAST_INT8};
static const dtcast_type small_sources[] = {
    DTCAST_BOOL,         DTCAST_UINT8,          DTCAST_INT8,        DTCAST_FLOAT8E4M3FN,
    DTCAST_FLOAT8E4M3FNUZ, DTCAST_FLOAT8E5M2,   DTCAST_FLOAT8E5M2FNUZ, DTCAST_FLOAT8E4M3,
    DTCAST_FLOAT8E3M4,   DTCAST_FLOAT8E4M3B11FNUZ, DTCAST_FLOAT8E8M0, DTCAST_FLOAT6E2M3FN,
    DTCAST_FLOAT6E3M2FN, DTCAST_FLOAT4E2M1,     DTCAST_UINT4,       DTCAST_INT4,
    DTCAST_UINT2,        DTCAST_INT2,           DTCAST_UINT1};
static const dtcast_type ints[] = {DTCAST_INT8,  DTCAST_UINT8,  DTCAST_INT16, DTCAST_UINT16,
                                   DTCAST_INT32, DTCAST_UINT32, DTCAST_INT64, DTCAST_UINT64};
static const dtcast_type halves[] = {DTCAST_FLOAT16, DTCAST_BFLOAT16};
static const dtcast_type wide_sources[] = {DTCAST_FLOAT32, DTCAST_FLOAT16, DTCAST_BFLOAT16};
static const dtcast_round rounds[] = {DTCAST_ROUND_RNE,   DTCAST_ROUND_RNA,  DTCAST_ROUND_FLOOR,
                                      DTCAST_ROUND_CEIL,  DTCAST_ROUND_TRUNC, DTCAST_ROUND_ODD};
static const dtcast_type f64_targets[] = {
    DTCAST_FLOAT32,      DTCAST_FLOAT16,        DTCAST_BFLOAT16,    DTCAST_FLOAT8E4M3FN,
    DTCAST_FLOAT8E4M3FNUZ, DTCAST_FLOAT8E5M2,   DTCAST_FLOAT8E5M2FNUZ, DTCAST_FLOAT8E4M3,
    DTCAST_FLOAT8E3M4,   DTCAST_FLOAT8E4M3B11FNUZ};

#define COUNT(a) (sizeof(a) / sizeof(a)[0])

typedef void (*row_fn)(const config *c, const row *r);

static void list_row(const config *c, const row *r)
{
    char mode[32];
    (void)c;
    printf("%s %s->%s %s t%u\n", r->group, dtcast_type_name(r->src), dtcast_type_name(r->dst),
           mode_name(r, mode, sizeof mode), r->threads);
}

static void visit(const config *c, row_fn fn, row r)
{
    if (row_selected(c, &r))
        fn(c, &r);
}

static void all_rows(const config *c, row_fn fn)
{
    for (size_t i = 0; i < COUNT(halves); i++) { /* float32 <-> float16 / bfloat16: 0.9 */
        visit(c, fn, (row){"f32<->f16/bf16", DTCAST_FLOAT32, halves[i], DTCAST_ROUND_RNE, 0, 1, 0.9});
        visit(c, fn, (row){"f32<->f16/bf16", halves[i], DTCAST_FLOAT32, DTCAST_ROUND_RNE, 0, 1, 0.9});
    }
    for (size_t s = 0; s < COUNT(wide_sources); s++) /* -> narrow, every mode, sat on/off: 0.7 */
        for (size_t d = 0; d < COUNT(narrow_targets); d++)
            for (size_t m = 0; m < COUNT(rounds); m++)
                for (int sat = 0; sat < 2; sat++)
                    visit(c, fn, (row){"->narrow", wide_sources[s], narrow_targets[d], rounds[m],
                                       sat, 1, 0.7});
    for (size_t s = 0; s < COUNT(small_sources); s++) { /* <= 8 bits -> f32/f16/bf16: 0.8 */
        visit(c, fn, (row){"<=8bit->wide", small_sources[s], DTCAST_FLOAT32, DTCAST_ROUND_RNE, 0, 1, 0.8});
        for (size_t h = 0; h < COUNT(halves); h++)
            visit(c, fn, (row){"<=8bit->wide", small_sources[s], halves[h], DTCAST_ROUND_RNE, 0, 1, 0.8});
    }
    for (size_t s = 0; s < COUNT(ints); s++) /* integer <-> integer: 0.8 */
        for (size_t d = 0; d < COUNT(ints); d++)
            if (s != d)
                visit(c, fn, (row){"int<->int", ints[s], ints[d], DTCAST_ROUND_TRUNC, 0, 1, 0.8});
    for (size_t s = 0; s < COUNT(ints); s++) { /* integer <-> float32 / float64: 0.8 */
        visit(c, fn, (row){"int<->float", ints[s], DTCAST_FLOAT32, DTCAST_ROUND_RNE, 0, 1, 0.8});
        visit(c, fn, (row){"int<->float", ints[s], DTCAST_FLOAT64, DTCAST_ROUND_RNE, 0, 1, 0.8});
        visit(c, fn, (row){"int<->float", DTCAST_FLOAT32, ints[s], DTCAST_ROUND_TRUNC, 0, 1, 0.8});
        visit(c, fn, (row){"int<->float", DTCAST_FLOAT64, ints[s], DTCAST_ROUND_TRUNC, 0, 1, 0.8});
    }
    for (size_t d = 0; d < COUNT(f64_targets); d++) /* float64 -> narrower floats: 0.6 */
        visit(c, fn, (row){"f64->narrow", DTCAST_FLOAT64, f64_targets[d], DTCAST_ROUND_RNE, 0, 1, 0.6});
    /* threads: the headline pairs (bench/headline.txt lists the same 13) on one, two and the
     * automatic number of threads; issue 32's target for two is 0.9 */
    static const dtcast_type headline[][2] = {
        {DTCAST_FLOAT32, DTCAST_FLOAT16},       {DTCAST_FLOAT16, DTCAST_FLOAT32},
        {DTCAST_FLOAT32, DTCAST_BFLOAT16},      {DTCAST_BFLOAT16, DTCAST_FLOAT32},
        {DTCAST_FLOAT32, DTCAST_FLOAT8E4M3FN},  {DTCAST_FLOAT32, DTCAST_FLOAT4E2M1},
        {DTCAST_FLOAT32, DTCAST_INT8},          {DTCAST_FLOAT16, DTCAST_FLOAT8E4M3FN},
        {DTCAST_BFLOAT16, DTCAST_FLOAT8E4M3FN}, {DTCAST_FLOAT8E4M3FN, DTCAST_FLOAT32},
        {DTCAST_INT8, DTCAST_FLOAT32},          {DTCAST_FLOAT64, DTCAST_FLOAT32},
        {DTCAST_FLOAT64, DTCAST_BFLOAT16}};
    static const unsigned thread_counts[] = {1, 2, 0};
    for (size_t h = 0; h < COUNT(headline); h++)
        for (size_t t = 0; t < COUNT(thread_counts); t++)
            visit(c, fn, (row){"threads", headline[h][0], headline[h][1], DTCAST_ROUND_RNE, 0,
                               thread_counts[t], thread_counts[t] == 2 ? 0.9 : 0});
}

/* Stochastic rounding (issue 15): float32 -> bfloat16/float8 at 0.5 of memcpy; float16 and
 * bfloat16 sources, float16 targets informative. */
static void stochastic_rows(const config *c, row_fn fn)
{
    static const dtcast_type sources[] = {DTCAST_FLOAT32, DTCAST_FLOAT16, DTCAST_BFLOAT16};
    static const dtcast_type targets[] = {DTCAST_BFLOAT16, DTCAST_FLOAT16, DTCAST_FLOAT8E4M3FN,
                                          DTCAST_FLOAT8E5M2};
    for (size_t s = 0; s < COUNT(sources); s++)
        for (size_t d = 0; d < COUNT(targets); d++)
            for (int sat = 0; sat < 2; sat++) {
                const bool goal = sources[s] == DTCAST_FLOAT32 && targets[d] != DTCAST_FLOAT16;
                if (sources[s] != targets[d])
                    visit(c, fn, (row){"stochastic", sources[s], targets[d],
                                       DTCAST_ROUND_STOCHASTIC, sat, 1, goal ? 0.5 : 0});
            }
}

/* Every ordered pair of the numeric types, default options (rne / trunc, ieee, wrap), one
 * thread: what a user can ask for, against the target of issue 11 (0.5 of memcpy). */
static void matrix_rows(const config *c, row_fn fn)
{
    dtcast_type types[64];
    size_t n = dtcast_type_list(types, COUNT(types));
    for (size_t s = 0; s < n; s++)
        for (size_t d = 0; d < n; d++)
            if (s != d && types[s] != DTCAST_STRING && types[d] != DTCAST_STRING)
                visit(c, fn, (row){"matrix", types[s], types[d], DTCAST_ROUND_DEFAULT, 0, 1, 0.5});
}

/* Every registry entry this CPU runs, called directly (no finder, no threads, no streaming
 * wrapper) on the first pair in type order it accepts in default options: its own speed. */
static void run_entries(const config *c)
{
    dtcast_type types[64];
    const size_t nt = dtcast_type_list(types, COUNT(types));
    const dt_kernel_entry *e;
    for (size_t i = 0; (e = dt_registry_entry(i)) != NULL; i++) {
        if (e->isa > dt_isa_detected() || (c->filter && !strstr(e->name, c->filter)))
            continue;
        dt_kernel k;
        dtcast_type s = DTCAST_UNDEFINED, d = DTCAST_UNDEFINED;
        for (size_t a = 0; a < nt && s == DTCAST_UNDEFINED; a++)
            for (size_t b = 0; b < nt && s == DTCAST_UNDEFINED; b++) {
                const dt_format *sf = dt_format_of(types[a]), *df = dt_format_of(types[b]);
                dt_rules r;
                if (a == b || sf->tc == DT_TC_STRING || df->tc == DT_TC_STRING)
                    continue;
                dt_rules_for(df, NULL, &r);
                if (dt_registry_setup(e, &k, df, sf, &r, c->n))
                    s = types[a], d = types[b];
            }
        if (s == DTCAST_UNDEFINED)
            continue;
        const size_t n = c->n, sb = storage(s, n), db = storage(d, n);
        const size_t mem_bytes = sb > db ? sb : db;
        const void *src = source_of(s, n);
        void *dst = alloc_touched(db), *ma, *mb;
        memcpy_buffers(mem_bytes, &ma, &mb);
        double tc[64], tm[64];
        int runs = 0;
        while (runs < c->runs && runs < 64) {
            const double t0 = now_seconds();
            memcpy(ma, mb, mem_bytes);
            const double t1 = now_seconds();
            k.fn(&k, dst, src, 0, n);
            const double t2 = now_seconds();
            tm[runs] = t1 - t0;
            tc[runs++] = t2 - t1;
        }
        free(dst);
        const double t = median(tc, runs), t_mem = median(tm, runs);
        const double gbs = (double)(sb + db) / t * 1e-9, mem_gbs = 2.0 * (double)mem_bytes / t_mem * 1e-9;
        printf("{\"kind\":\"entry\",\"entry\":\"%s\",\"src\":\"%s\",\"dst\":\"%s\",\"n\":%zu,"
               "\"runs\":%d,\"gbs\":%.4g,\"memcpy_gbs\":%.4g,\"ratio\":%.4g}\n",
               e->name, dtcast_type_name(s), dtcast_type_name(d), n, runs, gbs, mem_gbs,
               gbs / mem_gbs);
        fflush(stdout);
    }
}

/* ---- main -------------------------------------------------------------------------------- */

static int dump_source(const char *type_name, const char *count, const char *path)
{
    dtcast_type t;
    if (dtcast_type_from_name(type_name, &t, NULL) != DTCAST_OK)
        die("unknown type");
    const size_t n = (size_t)strtoull(count, NULL, 10);
    const void *src = source_of(t, n);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(src, 1, storage(t, n), f) != storage(t, n) || fclose(f) != 0)
        die("cannot write the dump");
    return 0;
}

static void parse_args(int argc, char **argv, config *c)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--list")) {
            c->list = 1;
            continue;
        }
        if (!strcmp(a, "--matrix")) {
            c->matrix = 1;
            continue;
        }
        if (!strcmp(a, "--entries")) {
            c->entries = 1;
            continue;
        }
        if (!v)
            die("usage: dtcast-bench [--n N] [--runs R] [--filter S] [--budget SEC] [--list] "
                "[--matrix] [--entries] [--round stochastic]");
        if (!strcmp(a, "--n"))
            c->n = (size_t)strtoull(v, NULL, 10);
        else if (!strcmp(a, "--round")) {
            if (dtcast_round_from_name(v, &c->round, NULL) != DTCAST_OK ||
                c->round != DTCAST_ROUND_STOCHASTIC)
                die("--round: only stochastic has rows of its own");
        }
        else if (!strcmp(a, "--runs"))
            c->runs = atoi(v);
        else if (!strcmp(a, "--filter"))
            c->filter = v;
        else if (!strcmp(a, "--budget"))
            c->budget = atof(v);
        else
            die("unknown option");
        i++;
    }
    if (c->n < 1024 || c->runs < 1)
        die("need --n >= 1024 and --runs >= 1");
}

int bench_onnx_qdq_main(int argc, char **argv); /* bench_onnx_qdq.c */

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "--onnx-qdq"))
        return bench_onnx_qdq_main(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "--quant"))
        return dt_bench_quant(argc - 1, argv + 1);
    if (argc == 5 && !strcmp(argv[1], "--dump"))
        return dump_source(argv[2], argv[3], argv[4]);
    config c = {(size_t)64 << 20, 5, NULL, 5.0, 0, 0, 0, DTCAST_ROUND_DEFAULT};
    parse_args(argc, argv, &c);
    if (c.entries) {
        run_entries(&c);
        return 0;
    }
    if (c.round == DTCAST_ROUND_STOCHASTIC) {
        stochastic_rows(&c, c.list ? list_row : run_row);
        return 0;
    }
    if (c.list) {
        (c.matrix ? matrix_rows : all_rows)(&c, list_row);
        return 0;
    }
    if (c.matrix) {
        matrix_rows(&c, run_row);
        return 0;
    }
    all_rows(&c, run_row);
    run_small(&c, DTCAST_FLOAT32, DTCAST_FLOAT16, 8192);     /* 32 KiB + 16 KiB */
    run_small(&c, DTCAST_FLOAT32, DTCAST_FLOAT8E4M3FN, 8192); /* 32 KiB + 8 KiB */
    run_text(&c, DTCAST_FLOAT32);
    run_text(&c, DTCAST_FLOAT64);
    return 0;
}
