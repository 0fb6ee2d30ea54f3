/* dtcast-bench --onnx-qdq [--n N] [--runs R]: ONNX QuantizeLinear / DequantizeLinear throughput,
 * one thread, against memcpy of the larger buffer (the float32 side) in the same run; medians of R
 * runs. Cases: float32 -> int8 / uint8 / float8e4m3fn / float8e5m2 per tensor and per axis
 * (axis 0 of [4096, N/4096]: runs of N/4096 elements; axis 1: a scale per element's column),
 * and back to float32. */
#include "dtcast.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int bench_onnx_qdq_main(int argc, char **argv);

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

int bench_onnx_qdq_main(int argc, char **argv)
{
    size_t n = (size_t)1 << 24;
    int runs = 7;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--n"))
            n = (size_t)strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--runs"))
            runs = atoi(argv[++i]);
    }
    if (runs < 1 || runs > 101)
        runs = 7;
    n = n / 4096 * 4096;
    if (n == 0)
        n = 4096;
    float *x = malloc(n * 4), *back = malloc(n * 4), *copy = malloc(n * 4);
    uint8_t *q = malloc(n);
    const size_t rows = 4096, cols = n / 4096;
    float *scales = malloc((rows > cols ? rows : cols) * 4);
    uint8_t *zps = calloc(rows > cols ? rows : cols, 1);
    double *t = malloc((size_t)runs * sizeof *t);
    if (!x || !back || !copy || !q || !scales || !zps || !t)
        return 1;
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        x[i] = (float)((int64_t)(s >> 40) - (1 << 23)) * 0x1p-16f; /* about +-128 */
    }
    for (size_t k = 0; k < (rows > cols ? rows : cols); k++)
        scales[k] = 0.5f + 0.001f * (float)(k % 97);
    /* memcpy of the float32 buffer */
    for (int r = 0; r < runs; r++) {
        double t0 = now();
        memcpy(copy, x, n * 4);
        t[r] = now() - t0;
    }
    const double mc = median(t, runs);
    printf("ONNX Q/DQ, one thread, %zu elements; memcpy of %zu MiB: %.3f ms (%.1f GB/s read+write)\n",
           n, n * 4 >> 20, mc * 1e3, 2.0 * (double)n * 4 / mc / 1e9);
    printf("%-40s %10s %10s %8s\n", "case", "ms", "Melem/s", "/memcpy");
    static const dtcast_type ys[] = {DTCAST_INT8, DTCAST_UINT8, DTCAST_FLOAT8E4M3FN,
                                     DTCAST_FLOAT8E5M2};
    static const char *const grans[] = {"per-tensor", "per-axis0", "per-axis1"};
    dtcast_options o;
    dtcast_options_init(&o);
    o.threads = 1;
    int worst_ok = 1;
    for (size_t yi = 0; yi < sizeof ys / sizeof ys[0]; yi++) {
        for (int g = 0; g < 3; g++) {
            dtcast_tensor X = {x, n * 4, DTCAST_FLOAT32, 2, {(int64_t)rows, (int64_t)cols}};
            dtcast_tensor S = {scales, 4, DTCAST_FLOAT32, 0, {0}};
            dtcast_tensor Z = {zps, 1, ys[yi], 0, {0}};
            dtcast_onnx_qdq_attrs a;
            dtcast_onnx_qdq_attrs_init(&a);
            if (g > 0) {
                a.axis = g - 1;
                S.ndim = Z.ndim = 1;
                S.shape[0] = Z.shape[0] = g == 1 ? (int64_t)rows : (int64_t)cols;
                S.bytes = (size_t)S.shape[0] * 4;
                Z.bytes = (size_t)Z.shape[0];
            }
            for (int dir = 0; dir < 2; dir++) {
                dtcast_error e;
                for (int r = 0; r < runs; r++) {
                    dtcast_tensor Y = {q, n, DTCAST_UNDEFINED, 0, {0}};
                    dtcast_tensor B = {back, n * 4, DTCAST_UNDEFINED, 0, {0}};
                    dtcast_tensor C = {q, n, ys[yi], 2, {(int64_t)rows, (int64_t)cols}};
                    double t0 = now();
                    dtcast_status st =
                        dir == 0 ? dtcast_onnx_quantize_linear(&Y, &X, &S, &Z, &a, &o, &e)
                                 : dtcast_onnx_dequantize_linear(&B, &C, &S, &Z, &a, &o, &e);
                    t[r] = now() - t0;
                    if (st != DTCAST_OK) {
                        fprintf(stderr, "%s\n", e.message);
                        return 1;
                    }
                }
                const double m = median(t, runs);
                char name[64];
                snprintf(name, sizeof name, "%s %s %s", dir ? "DQ" : "Q ",
                         dtcast_type_name(ys[yi]), grans[g]);
                const double ratio = mc / m;
                worst_ok &= ratio >= 0.5;
                printf("%-40s %10.3f %10.1f %8.2f\n", name, m * 1e3, (double)n / m / 1e6, ratio);
            }
        }
    }
    printf("target (issue 15): >= 0.50 of memcpy: %s\n", worst_ok ? "met" : "NOT met");
    free(x), free(back), free(copy), free(q), free(scales), free(zps), free(t);
    return 0;
}
