/* Tests of ggml's block types in the library (src/ggml/, dtcast.h "ggml's block types") that
 * need no ggml: the binary16 conversions against dtcast's exact reference path (every binary16,
 * 10^7 binary32 bit patterns (10^6 under the sanitizers) plus every rounding boundary), the one rounding of dequantization to
 * bfloat16 / float16 against dtcast_convert of the exact float64 result, the same bytes for any
 * thread count, the non-finite count, and the argument errors. ggml's own bytes are compared in
 * tests/python/test_ggml_vectors.py (stored vectors) and test_ggml_quants.py (gguf-py). */
#include "check.h"
#include "ggml/ggml.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK1(cond) CHECK((cond), #cond, "%s", "false")

/* The sanitizer build checks memory, not bits (the plain build runs the full counts). */
#if defined(__SANITIZE_ADDRESS__)
#define RANDOM_FP16 1000000
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RANDOM_FP16 1000000
#endif
#endif
#ifndef RANDOM_FP16
#define RANDOM_FP16 10000000
#endif

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t next64(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}
static float normalish(void) /* a rough normal: the sum of four uniforms, centred */
{
    double s = 0;
    for (int k = 0; k < 4; k++)
        s += (double)(next64() >> 11) * 0x1p-53;
    return (float)((s - 2.0) * 1.7);
}

/* ---- binary16 ---------------------------------------------------------------------------------- */
static uint16_t ref_fp16(float v)
{
    /* dtcast's exact path: nearest even, IEEE overflow; ggml's NaN is sign | 0x7E00 */
    if (isnan(v))
        return (uint16_t)((signbit(v) ? 0x8000u : 0u) | 0x7E00u);
    uint16_t h;
    dtcast_options o;
    dtcast_options_init(&o);
    o.float_overflow = DTCAST_FLOAT_OVERFLOW_IEEE;
    dtcast_convert(&h, DTCAST_FLOAT16, &v, DTCAST_FLOAT32, 1, &o, NULL);
    return h;
}

static void test_fp16(void)
{
    size_t bad = 0, n = 0;
    uint32_t first = 0;
    /* every binary16 and the binary32 values on both sides of each rounding boundary */
    for (uint32_t h = 0; h < 0x10000u; h++) {
        float f;
        dtcast_convert(&f, DTCAST_FLOAT32, &h, DTCAST_FLOAT16, 1, NULL, NULL);
        const uint32_t fb = dt_ggml_bits_of(f), gb = dt_ggml_bits_of(dt_ggml_fp16_to_f32((uint16_t)h));
        /* NaN: quieted, the payload kept (shifted) */
        if (fb != gb && !(isnan(f) && (gb & 0x7FC00000u) == 0x7FC00000u &&
                          (gb & 0x003FFFFFu) == (uint32_t)(h & 0x1FFu) << 13)) {
            if (!bad++)
                first = h;
        }
        n++;
        /* boundaries: midpoints between h and h + 1 (the binary32 bits around them) */
        if ((h & 0x7C00u) == 0x7C00u)
            continue;
        float g;
        const uint32_t h1 = h + 1;
        dtcast_convert(&g, DTCAST_FLOAT32, &h1, DTCAST_FLOAT16, 1, NULL, NULL);
        const double mid = ((double)f + (double)g) / 2;
        const uint32_t mb = dt_ggml_bits_of((float)mid);
        for (int d = -2; d <= 2; d++) {
            const float v = dt_ggml_f32_of(mb + (uint32_t)d);
            if (dt_ggml_fp16(v) != ref_fp16(v) && !bad++)
                first = dt_ggml_bits_of(v);
            n++;
        }
    }
    for (int i = 0; i < RANDOM_FP16; i++) {
        const float v = dt_ggml_f32_of((uint32_t)next64());
        if (dt_ggml_fp16(v) != ref_fp16(v) && !bad++)
            first = dt_ggml_bits_of(v);
        n++;
    }
    CHECK(bad == 0, "ggml_fp16_exact", "%zu of %zu differ (first 0x%08x)", bad, n, first);
}

/* ---- the public calls --------------------------------------------------------------------------- */
static dtcast_tensor tensor(void *data, dtcast_type type, int64_t rows, int64_t k, size_t bytes)
{
    dtcast_tensor t;
    memset(&t, 0, sizeof t);
    t.data = data;
    t.type = type;
    t.ndim = 2;
    t.shape[0] = rows;
    t.shape[1] = k;
    t.bytes = bytes;
    return t;
}

static void test_one_rounding(void)
{
    /* every type dtcast dequantizes: random blocks (their scales sometimes huge, NaN or
     * infinite) to bfloat16 / float16 directly, against dtcast_convert of the float64 result,
     * which is the exact value of the formula rounded once */
    const int64_t rows = 8, K = 1024;
    uint8_t *src = malloc((size_t)(rows * K) * 8);
    double *y64 = malloc((size_t)(rows * K) * sizeof(double));
    uint16_t *y16 = malloc((size_t)(rows * K) * 2), *ref = malloc((size_t)(rows * K) * 2);
    for (int code = 0; code < DT_GGML_TYPE_COUNT; code++) {
        const dt_ggml_traits *t = dt_ggml_traits_of((uint32_t)code);
        if (!t || !t->dequantize)
            continue;
        size_t bad = 0, n = 0;
        for (int rep = 0; rep < 16; rep++) {
            const size_t bytes = (size_t)(rows * K / t->block) * t->bytes;
            for (size_t i = 0; i < bytes; i++)
                src[i] = (uint8_t)next64();
            dtcast_tensor d = tensor(y64, DTCAST_FLOAT64, rows, K, (size_t)(rows * K) * 8);
            if (dtcast_ggml_dequantize(&d, src, bytes, code, 1, NULL) != DTCAST_OK) {
                bad = SIZE_MAX;
                break;
            }
            for (int w = 0; w < 2; w++) {
                const dtcast_type yt = w ? DTCAST_FLOAT16 : DTCAST_BFLOAT16;
                dtcast_tensor h = tensor(y16, yt, rows, K, (size_t)(rows * K) * 2);
                dtcast_ggml_dequantize(&h, src, bytes, code, 1, NULL);
                dtcast_options o;
                dtcast_options_init(&o);
                o.float_overflow = DTCAST_FLOAT_OVERFLOW_IEEE;
                dtcast_convert(ref, yt, y64, DTCAST_FLOAT64, (size_t)(rows * K), &o, NULL);
                for (int64_t i = 0; i < rows * K; i++) {
                    const bool nan_ref = (ref[i] & 0x7FFFu) > (w ? 0x7C00u : 0x7F80u);
                    const bool nan_got = (y16[i] & 0x7FFFu) > (w ? 0x7C00u : 0x7F80u);
                    bad += nan_ref ? !nan_got : y16[i] != ref[i];
                }
                n += (size_t)(rows * K);
            }
        }
        char name[64];
        snprintf(name, sizeof name, "ggml_one_rounding_%s", t->name);
        CHECK(bad == 0, name, "%zu of %zu bfloat16/float16 values differ", bad, n);
    }
    free(src);
    free(y64);
    free(y16);
    free(ref);
}

static void test_threads_and_stats(void)
{
    const int64_t rows = 64, K = 4096;
    float *x = malloc((size_t)(rows * K) * sizeof(float));
    for (int64_t i = 0; i < rows * K; i++)
        x[i] = normalish() * (i % 7 == 0 ? 1e3f : 1.0f);
    x[70000] = NAN;
    x[5] = INFINITY;
    x[90000] = -INFINITY;
    dtcast_tensor xt = tensor(x, DTCAST_FLOAT32, rows, K, (size_t)(rows * K) * 4);
    const size_t cap = (size_t)(rows * K) * 8;
    uint8_t *a = malloc(cap), *b = malloc(cap);
    for (int code = 0; code < DT_GGML_TYPE_COUNT; code++) {
        if (!(dtcast_ggml_support(code) & 1))
            continue;
        dtcast_ggml_stats sa, sb;
        memset(a, 0xAA, cap);
        memset(b, 0x55, cap);
        const dtcast_status s1 = dtcast_ggml_quantize(a, cap, code, &xt, 1, &sa, NULL);
        const dtcast_status s2 = dtcast_ggml_quantize(b, cap, code, &xt, 2, &sb, NULL);
        const size_t bytes = (size_t)(rows * K / dtcast_ggml_block_size(code)) *
                             dtcast_ggml_type_size(code);
        char name[64];
        snprintf(name, sizeof name, "ggml_threads_%s", dtcast_ggml_type_name(code));
        CHECK(s1 == DTCAST_OK && s2 == DTCAST_OK && memcmp(a, b, bytes) == 0, name,
              "1 and 2 threads differ (status %d %d)", (int)s1, (int)s2);
        const dt_ggml_traits *t = dt_ggml_traits_of((uint32_t)code);
        if (t->block > 1) {
            snprintf(name, sizeof name, "ggml_nonfinite_%s", t->name);
            CHECK(sa.nonfinite == 3 && sa.first_nonfinite == 5 && sb.nonfinite == 3 &&
                      sb.first_nonfinite == 5,
                  name, "nonfinite %llu first %llu", (unsigned long long)sa.nonfinite,
                  (unsigned long long)sa.first_nonfinite);
        }
    }
    /* a NaN quantizes as 0: the block holding it equals the block with a 0 there */
    x[70000] = 0.0f;
    x[5] = 0.0f;
    x[90000] = 0.0f;
    for (int code = 2; code < DT_GGML_TYPE_COUNT; code++) {
        const dt_ggml_traits *t = dt_ggml_traits_of((uint32_t)code);
        if (!t || !t->quantize)
            continue;
        const size_t bytes = (size_t)(rows * K / t->block) * t->bytes;
        x[70000] = NAN;
        dtcast_ggml_quantize(a, cap, code, &xt, 1, NULL, NULL);
        x[70000] = 0.0f;
        dtcast_ggml_quantize(b, cap, code, &xt, 1, NULL, NULL);
        char name[64];
        snprintf(name, sizeof name, "ggml_nan_is_zero_%s", t->name);
        CHECK(memcmp(a, b, bytes) == 0, name, "%s", "a NaN does not quantize as 0");
    }
    free(x);
    free(a);
    free(b);
}

static void test_errors(void)
{
    float x[96] = {0};
    uint8_t out[256];
    memset(out, 0x77, sizeof out);
    dtcast_error e;
    dtcast_tensor t = tensor(x, DTCAST_FLOAT32, 3, 32, sizeof x);
    CHECK1(dtcast_ggml_quantize(out, sizeof out, 4, &t, 1, NULL, &e) == DTCAST_ERR_UNKNOWN_TYPE);
    CHECK1(dtcast_ggml_quantize(out, sizeof out, 99, &t, 1, NULL, &e) == DTCAST_ERR_UNKNOWN_TYPE);
    CHECK1(dtcast_ggml_quantize(out, sizeof out, 12, &t, 1, NULL, &e) == DTCAST_ERR_BAD_SHAPE);
    CHECK(strstr(e.message, "multiple of the block (256)") != NULL, "ggml_error_names_block",
          "%s", e.message);
    CHECK1(dtcast_ggml_quantize(out, 3 * 34 - 1, 8, &t, 1, NULL, &e) ==
           DTCAST_ERR_INVALID_ARGUMENT);
    CHECK1(dtcast_ggml_quantize(out, sizeof out, 16, &t, 1, NULL, &e) == DTCAST_ERR_UNSUPPORTED);
    CHECK1(dtcast_ggml_quantize(out, sizeof out, 24, &t, 1, NULL, &e) == DTCAST_ERR_UNSUPPORTED);
    bool untouched = true;
    for (size_t i = 0; i < sizeof out; i++)
        untouched &= out[i] == 0x77;
    CHECK(untouched, "ggml_error_output_untouched", "%s", "an error wrote to dst");
    dtcast_tensor i8 = tensor(out, DTCAST_INT8, 3, 32, 96);
    CHECK1(dtcast_ggml_quantize(out, sizeof out, 8, &i8, 1, NULL, &e) == DTCAST_ERR_UNSUPPORTED);
    CHECK1(dtcast_ggml_quantize(out, sizeof out, 8, &t, 1, NULL, &e) == DTCAST_OK);
    dtcast_tensor y = tensor(x, DTCAST_FLOAT32, 3, 32, sizeof x);
    CHECK1(dtcast_ggml_dequantize(&y, out, 3 * 34 + 1, 8, 1, &e) == DTCAST_ERR_INVALID_ARGUMENT);
    CHECK1(dtcast_ggml_dequantize(&y, out, 3 * 34, 8, 1, &e) == DTCAST_OK);
    CHECK1(dtcast_ggml_dequantize(&y, out, 3 * 34, 15 + 100, 1, &e) == DTCAST_ERR_UNKNOWN_TYPE);
    /* names, sizes, support */
    CHECK1(dtcast_ggml_type_from_name("q4_k") == 12 && dtcast_ggml_type_from_name("BF16") == 30);
    CHECK1(dtcast_ggml_type_from_name("q4_2") == -1 && dtcast_ggml_type_from_name("") == -1);
    CHECK1(dtcast_ggml_type_name(4) == NULL && strcmp(dtcast_ggml_type_name(39), "MXFP4") == 0);
    CHECK1(dtcast_ggml_block_size(9) == 32 && dtcast_ggml_type_size(9) == 36);
    CHECK1(dtcast_ggml_support(12) == 3 && dtcast_ggml_support(16) == 2 &&
           dtcast_ggml_support(0) == 3 && dtcast_ggml_support(26) == 0);
}

int main(void)
{
    test_fp16();
    test_errors();
    test_threads_and_stats();
    test_one_rounding();
    return CHECK_EXIT();
}
