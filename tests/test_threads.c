/* Thread safety: many threads call every public entry point at once, starting together at a
 * barrier so that the first use of any lazily built table (kernels, lookup tables, CPU feature
 * detection) happens from all of them simultaneously. Each thread records its results; after the
 * join the main thread recomputes everything alone and demands identical bytes. Built normally it
 * is a functional test; under ThreadSanitizer (make check-tsan) any data race is a report.
 *
 * DTCAST_THREADS_N overrides the element count of the big conversions (default 1 << 17). */
#include "dtcast.h"

#include "check.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 8
#define MAXT 64

static size_t big_n = (size_t)1 << 17;
static float *src_f32;
static dtcast_type types[MAXT];
static size_t ntypes;
static pthread_barrier_t barrier;

/* What one thread computes: for every target type, the bytes of a conversion of src_f32, plus
 * texts, parses and profile casts. */
typedef struct result {
    uint8_t *conv[MAXT];
    size_t conv_bytes[MAXT];
    char text[MAXT][DTCAST_FORMAT_MAX];
    uint8_t parsed[MAXT][16];
    uint16_t onnx[64];
    uint16_t pypto[64];
    int status_bad;
} result;

static void compute(result *r, unsigned seed, int lib_threads)
{
    /* each thread visits the types in its own order, so first uses collide across types */
    for (size_t k = 0; k < ntypes; k++) {
        const size_t i = (k + seed * 7) % ntypes;
        const dtcast_type t = types[i];
        if (t == DTCAST_STRING)
            continue;
        dtcast_options o;
        dtcast_options_init(&o);
        o.threads = (unsigned)lib_threads;
        o.round = (dtcast_round)(1 + (i % 6));
        o.float_overflow = (i & 1) ? DTCAST_FLOAT_OVERFLOW_SATURATE : DTCAST_FLOAT_OVERFLOW_IEEE;
        size_t bytes = 0;
        dtcast_storage_size(t, big_n, &bytes, NULL);
        r->conv[i] = malloc(bytes ? bytes : 1);
        r->conv_bytes[i] = bytes;
        if (!r->conv[i] || dtcast_convert(r->conv[i], t, src_f32, DTCAST_FLOAT32, big_n, &o, NULL) != DTCAST_OK)
            r->status_bad++;

        /* type queries */
        dtcast_info info;
        dtcast_type back;
        if (dtcast_type_info(t, &info, NULL) != DTCAST_OK ||
            dtcast_type_from_name(dtcast_type_name(t), &back, NULL) != DTCAST_OK || back != t ||
            dtcast_type_bits(t) <= 0)
            r->status_bad++;

        /* text: format element 5 of the conversion, parse it back into the same type */
        o.threads = 1;
        if (dtcast_format_element(r->text[i], sizeof r->text[i], r->conv[i], t, 5, &o, NULL) !=
            DTCAST_OK)
            r->status_bad++;
        memset(r->parsed[i], 0, sizeof r->parsed[i]);
        if (t != DTCAST_BOOL &&
            dtcast_parse_element(r->parsed[i], t, 0, r->text[i], &o, NULL) != DTCAST_OK)
            r->status_bad++;
    }
    if (dtcast_onnx_cast(r->onnx, DTCAST_FLOAT16, src_f32, DTCAST_FLOAT32, 64, 21, 1, NULL, NULL,
                         NULL) != DTCAST_OK)
        r->status_bad++;
    const int64_t shape[2] = {8, 8};
    if (dtcast_pypto_cast(r->pypto, DTCAST_FLOAT16, src_f32, DTCAST_FLOAT32, shape, 2,
                          DTCAST_CAST_RINT, NULL, NULL) != DTCAST_OK)
        r->status_bad++;
    /* strings: a short conversion to and from DTCAST_STRING */
    char *strs[16] = {0};
    float back[16];
    if (dtcast_convert(strs, DTCAST_STRING, src_f32, DTCAST_FLOAT32, 16, NULL, NULL) != DTCAST_OK ||
        dtcast_convert(back, DTCAST_FLOAT32, strs, DTCAST_STRING, 16, NULL, NULL) != DTCAST_OK ||
        memcmp(back, src_f32, sizeof back) != 0)
        r->status_bad++;
    dtcast_strings_free(strs, 16);
}

typedef struct arg {
    result r;
    unsigned seed;
} arg;

static void *run(void *p)
{
    arg *a = p;
    pthread_barrier_wait(&barrier);
    compute(&a->r, a->seed, a->seed % 2 ? 3 : 0); /* library threads: 3 or automatic */
    return NULL;
}

static void release(result *r)
{
    for (size_t i = 0; i < MAXT; i++)
        free(r->conv[i]);
}

int main(void)
{
    const char *n = getenv("DTCAST_THREADS_N");
    if (n && atol(n) > 64)
        big_n = (size_t)atol(n);
    ntypes = dtcast_type_list(types, MAXT);
    if (ntypes > MAXT)
        ntypes = MAXT;
    src_f32 = malloc(big_n * sizeof *src_f32);
    if (!src_f32)
        return 1;
    uint32_t x = 0x12345678u;
    for (size_t i = 0; i < big_n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        /* mostly finite values of every magnitude, some specials; the first 64 modest */
        uint32_t bits = i < 64 ? 0x3E000000u + (x & 0x01FFFFFFu) : x;
        memcpy(&src_f32[i], &bits, sizeof bits);
    }
    if (pthread_barrier_init(&barrier, NULL, NTHREADS) != 0)
        return 1;
    static arg args[NTHREADS];
    pthread_t ids[NTHREADS];
    int started = 0;
    for (unsigned i = 0; i < NTHREADS; i++) {
        args[i].seed = i;
        if (pthread_create(&ids[i], NULL, run, &args[i]) == 0)
            started++;
    }
    CHECK(started == NTHREADS, "threads/start", "%d of %d threads started", started, NTHREADS);
    if (started != NTHREADS)
        return 1;
    for (unsigned i = 0; i < NTHREADS; i++)
        pthread_join(ids[i], NULL);
    pthread_barrier_destroy(&barrier);

    static result alone;
    compute(&alone, 0, 1);
    CHECK(alone.status_bad == 0, "threads/single_thread_calls", "%d calls failed",
          alone.status_bad);
    int bad_status = 0, bad_conv = 0, bad_text = 0, bad_other = 0;
    char first[160] = "";
    for (unsigned i = 0; i < NTHREADS; i++) {
        result *r = &args[i].r;
        bad_status += r->status_bad;
        for (size_t k = 0; k < ntypes; k++) {
            if (types[k] == DTCAST_STRING)
                continue;
            if (r->conv_bytes[k] != alone.conv_bytes[k] ||
                memcmp(r->conv[k], alone.conv[k], alone.conv_bytes[k]) != 0) {
                if (!bad_conv++)
                    snprintf(first, sizeof first, "thread %u, %s", i, dtcast_type_name(types[k]));
            }
            if (strcmp(r->text[k], alone.text[k]) != 0 ||
                memcmp(r->parsed[k], alone.parsed[k], sizeof r->parsed[k]) != 0)
                bad_text++;
        }
        if (memcmp(r->onnx, alone.onnx, sizeof r->onnx) != 0 ||
            memcmp(r->pypto, alone.pypto, sizeof r->pypto) != 0)
            bad_other++;
        release(r);
    }
    release(&alone);
    CHECK(bad_status == 0, "threads/concurrent_calls_succeed", "%d calls failed", bad_status);
    CHECK(bad_conv == 0, "threads/convert_same_bytes", "%d differ, first %s", bad_conv, first);
    CHECK(bad_text == 0, "threads/format_parse_same", "%d differ", bad_text);
    CHECK(bad_other == 0, "threads/onnx_pypto_same", "%d differ", bad_other);
    free(src_f32);
    return CHECK_EXIT();
}
