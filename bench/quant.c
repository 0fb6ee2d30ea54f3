/* dtcast-bench --quant: throughput of dtcast_quantize / dtcast_dequantize for every scheme,
 * variant, element type and (MX) scale mode, from / to float32 and bfloat16, against memcpy of
 * the larger buffer timed alternately in the same run; one JSON object per line. gbs counts the
 * bytes read plus written (codes + scales included); memcpy_gbs twice the larger buffer, as the
 * conversion rows of dtcast-bench; ratio = gbs / memcpy_gbs. Medians of R runs. */
#include "quant.h"

#include "dtcast.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmpd(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double med(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmpd);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void *touched(size_t bytes)
{
    uint8_t *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "dtcast-bench: out of memory\n");
        exit(1);
    }
    memset(p, 0x11, bytes);
    return p;
}

typedef struct qrow {
    const char *name;
    dtcast_scheme scheme;
    dtcast_variant variant;
    dtcast_type element;
    dtcast_scale_mode mode;
    bool single;
    double target_q, target_dq;
} qrow;

static const qrow rows[] = {
    {"mx", DTCAST_SCHEME_MX, 0, DTCAST_FLOAT8E4M3FN, DTCAST_SCALE_FLOOR, false, 0.5, 0.7},
    {"mx", DTCAST_SCHEME_MX, 0, DTCAST_FLOAT8E4M3FN, DTCAST_SCALE_RCEIL, false, 0.5, 0.7},
    {"mx", DTCAST_SCHEME_MX, 0, DTCAST_FLOAT8E5M2, DTCAST_SCALE_FLOOR, false, 0.5, 0.7},
    {"mx", DTCAST_SCHEME_MX, 0, DTCAST_FLOAT8E5M2, DTCAST_SCALE_RCEIL, false, 0.5, 0.7},
    {"mx", DTCAST_SCHEME_MX, 0, DTCAST_FLOAT6E3M2FN, DTCAST_SCALE_FLOOR, false, 0.5, 0.7},
    {"mx", DTCAST_SCHEME_MX, 0, DTCAST_FLOAT6E3M2FN, DTCAST_SCALE_RCEIL, false, 0.5, 0.7},
    {"mx", DTCAST_SCHEME_MX, 0, DTCAST_FLOAT6E2M3FN, DTCAST_SCALE_FLOOR, false, 0.5, 0.7},
    {"mx", DTCAST_SCHEME_MX, 0, DTCAST_FLOAT6E2M3FN, DTCAST_SCALE_RCEIL, false, 0.5, 0.7},
    {"mx", DTCAST_SCHEME_MX, 0, DTCAST_FLOAT4E2M1, DTCAST_SCALE_FLOOR, false, 0.5, 0.7},
    {"mx", DTCAST_SCHEME_MX, 0, DTCAST_FLOAT4E2M1, DTCAST_SCALE_RCEIL, false, 0.5, 0.7},
    {"mx", DTCAST_SCHEME_MX, 0, DTCAST_INT8, DTCAST_SCALE_FLOOR, false, 0.5, 0.7},
    {"mx", DTCAST_SCHEME_MX, 0, DTCAST_INT8, DTCAST_SCALE_RCEIL, false, 0.5, 0.7},
    {"nvfp4", DTCAST_SCHEME_NVFP4, DTCAST_VARIANT_MODELOPT, DTCAST_FLOAT4E2M1, 0, false, 0.5, 0.7},
    {"nvfp4", DTCAST_SCHEME_NVFP4, DTCAST_VARIANT_TORCHAO, DTCAST_FLOAT4E2M1, 0, false, 0.5, 0.7},
    {"nvfp4", DTCAST_SCHEME_NVFP4, DTCAST_VARIANT_TORCHAO, DTCAST_FLOAT4E2M1, 0, true, 0.5, 0.7},
    {"nvfp4", DTCAST_SCHEME_NVFP4, DTCAST_VARIANT_CT, DTCAST_FLOAT4E2M1, 0, false, 0.5, 0.7},
    {"fp8-block", DTCAST_SCHEME_FP8_BLOCK, DTCAST_VARIANT_HF, DTCAST_FLOAT8E4M3FN, 0, false, 0.5,
     0.7},
    {"fp8-block", DTCAST_SCHEME_FP8_BLOCK, DTCAST_VARIANT_DEEPSEEK_ACT, DTCAST_FLOAT8E4M3FN, 0,
     false, 0.5, 0.7},
    {"absmax", DTCAST_SCHEME_ABSMAX, 0, DTCAST_INT8, 0, false, 0, 0},
    {"absmax", DTCAST_SCHEME_ABSMAX, 0, DTCAST_FLOAT8E4M3FN, 0, false, 0, 0},
};

static size_t tsize(dtcast_type t)
{
    return t == DTCAST_FLOAT32 ? 4 : 2;
}

int dt_bench_quant(int argc, char **argv)
{
    size_t n = (size_t)16 << 20;
    int runs = 7;
    unsigned threads = 1;
    const char *filter = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--n"))
            n = (size_t)strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--runs"))
            runs = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--filter"))
            filter = argv[i + 1];
        else if (!strcmp(argv[i], "--threads"))
            threads = (unsigned)atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: dtcast-bench --quant [--n N] [--runs R] [--filter S] "
                            "[--threads T]\n");
            return 2;
        }
    }
    if (runs < 1 || runs > 64 || n < 4096)
        return 2;
    const size_t K = 4096, N = n / K; /* a [N, 4096] weight */
    n = N * K;
    float *xf = touched(n * 4);
    uint64_t s = 0x5EED;
    for (size_t i = 0; i < n; i++) { /* weight-like: normal-ish, a spread of row magnitudes */
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        const double u = (double)(int32_t)(s >> 32) / 2147483648.0;
        xf[i] = (float)(u * u * u * (1.0 + (double)(i / K % 7)));
    }
    uint16_t *xb = touched(n * 2);
    dtcast_convert(xb, DTCAST_BFLOAT16, xf, DTCAST_FLOAT32, n, NULL, NULL);
    uint8_t *ma = touched(n * 4), *mb = touched(n * 4);
    static const dtcast_type hs[] = {DTCAST_FLOAT32, DTCAST_BFLOAT16};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        const qrow *q = &rows[r];
        for (int h = 0; h < 2; h++)
            for (int dir = 0; dir < 2; dir++) {
                dtcast_quant_params p;
                dtcast_quant_params_init(&p);
                p.scheme = q->scheme;
                p.variant = q->variant;
                p.element = q->element;
                p.scale_mode = q->mode;
                p.single_level = q->single;
                p.threads = threads;
                char name[160];
                snprintf(name, sizeof name, "%s %s%s%s%s%s %s %s %s", q->name,
                         dtcast_type_name(q->element),
                         q->variant ? " " : "", q->variant ? dtcast_variant_name(q->variant) : "",
                         q->single ? " single_level" : "",
                         q->mode ? (q->mode == DTCAST_SCALE_FLOOR ? " floor" : " rceil") : "",
                         dir ? "dequantize" : "quantize", dir ? "to" : "from",
                         dtcast_type_name(hs[h]));
                if (filter && !strstr(name, filter))
                    continue;
                dtcast_tensor x = {h ? (void *)xb : (void *)xf, n * tsize(hs[h]), hs[h], 2,
                                   {(int64_t)N, (int64_t)K}};
                dtcast_tensor c, sc, g;
                memset(&g, 0, sizeof g);
                dtcast_error e;
                if (dtcast_quantize_layout(&c, &sc, &g, &x, &p, &e) != DTCAST_OK) {
                    fprintf(stderr, "%s: %s\n", name, e.message);
                    return 1;
                }
                c.data = touched(c.bytes);
                sc.data = touched(sc.bytes);
                float gv = 0;
                g.data = &gv;
                dtcast_tensor *gp = g.bytes ? &g : NULL;
                if (dtcast_quantize(&c, &sc, gp, &x, &p, &e) != DTCAST_OK) {
                    fprintf(stderr, "%s: %s\n", name, e.message);
                    return 1;
                }
                void *y = touched(n * tsize(hs[h]));
                dtcast_tensor yt = {y, n * tsize(hs[h]), hs[h], 0, {0}};
                const size_t hb = n * tsize(hs[h]);
                const size_t bytes = hb + c.bytes + sc.bytes;
                double tq[64], tm[64];
                for (int k = 0; k < runs; k++) {
                    const double t0 = now();
                    memcpy(ma, mb, hb);
                    const double t1 = now();
                    dtcast_status st = dir ? dtcast_dequantize(&yt, &c, &sc, gp, &p, &e)
                                           : dtcast_quantize(&c, &sc, gp, &x, &p, &e);
                    const double t2 = now();
                    if (st != DTCAST_OK) {
                        fprintf(stderr, "%s: %s\n", name, e.message);
                        return 1;
                    }
                    tm[k] = t1 - t0;
                    tq[k] = t2 - t1;
                }
                const double t = med(tq, runs), t_mem = med(tm, runs);
                const double gbs = (double)bytes / t * 1e-9, mgbs = 2.0 * (double)hb / t_mem * 1e-9;
                printf("{\"kind\":\"quant\",\"name\":\"%s\",\"threads\":%u,\"n\":%zu,\"runs\":%d,"
                       "\"seconds\":%.6g,\"gbs\":%.4g,\"memcpy_gbs\":%.4g,\"ratio\":%.4g,"
                       "\"target\":%.2g}\n",
                       name, threads, n, runs, t, gbs, mgbs, gbs / mgbs,
                       dir ? q->target_dq : q->target_q);
                fflush(stdout);
                free(y);
                free(c.data);
                free(sc.data);
            }
    }
    free(xf);
    free(xb);
    free(ma);
    free(mb);
    return 0;
}
