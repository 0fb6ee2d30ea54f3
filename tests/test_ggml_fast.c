/* Every fast path of ggml's block functions (src/ggml/fast.c's one list) against the reference
 * block functions of src/ggml/ggml.h, bit for bit, on the CPU at hand (an entry whose ISA the
 * CPU lacks prints SKIP): quantizers on 10^8 finite float32 values of every kind a block can
 * hold (normal, heavy-tailed, constant, zero and -0, tiny and subnormal, huge, integers, ties,
 * random bit patterns), dequantizers on 10^8 elements' worth of random blocks, float32 and the
 * residuals both. Under the sanitizers (which check memory, not bits) 10^6.
 *
 *   test_ggml_fast [SCALE]   SCALE multiplies the counts (make check-long: 1; default 1) */
#include "check.h"
#include "ggml/ggml.h"
#include "kernels/kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

static uint64_t state = 0x243F6A8885A308D3u;
static uint64_t next64(void)
{
    uint64_t z = (state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}
static double unit(void)
{
    return (double)(next64() >> 11) * 0x1p-53;
}
static float normal(void)
{
    const double u = unit() + 1e-300, v = unit();
    return (float)(sqrt(-2 * log(u)) * cos(6.283185307179586 * v));
}

/* one block of n finite values of a random kind */
static void fill_block(float *x, size_t n)
{
    const unsigned kind = (unsigned)(next64() % 12);
    const float scale = (float)pow(10.0, (double)((int)(next64() % 16) - 8));
    for (size_t i = 0; i < n; i++) {
        float v;
        switch (kind) {
        case 0: v = normal(); break;
        case 1: v = normal() * scale; break;
        case 2: v = normal() / (float)(unit() + 1e-3); break; /* heavy tails */
        case 3: v = i == 0 ? normal() : x[0]; break;         /* constant */
        case 4: v = next64() & 1 ? 0.0f : -0.0f; break;
        case 5: v = normal() * (float)pow(10.0, -30.0 - (double)(next64() % 16)); break;
        case 6: v = normal() * (float)pow(10.0, 4.0 + (double)(next64() % 30)); break;
        case 7: v = (float)((int)(next64() % 41) - 20); break;
        case 8: v = (float)((int)(next64() % 33) - 16) * 0.5f; break; /* ties */
        case 9: { /* random bits, finite */
            uint32_t u = (uint32_t)next64();
            if ((u & 0x7F800000u) == 0x7F800000u)
                u &= 0xBFFFFFFFu;
            v = dt_ggml_f32_of(u);
            break;
        }
        case 10: v = i % 7 == 0 ? normal() * 100.0f : normal() * 0.01f; break; /* outliers */
        default: v = next64() % 3 == 0 ? 0.0f : normal(); break;              /* sparse */
        }
        x[i] = v;
    }
}

static void test_quantizer(const dt_ggml_fast *f, const dt_ggml_traits *t, double scale)
{
    const size_t per = 1u << 16; /* values per round (whole blocks: 65536 = 256 * 256) */
    const bool slow = t->block == 256 && t->quantize != NULL && f->code >= 10 && f->code <= 15;
    double want = (SANITIZED ? 1e6 : slow ? 2e7 : 1e8) * scale;
    float *x = malloc(per * sizeof(float));
    const size_t nb = per / t->block, bytes = nb * t->bytes;
    uint8_t *a = malloc(bytes), *b = malloc(bytes);
    size_t done = 0, bad = 0, first = SIZE_MAX;
    while ((double)done < want) {
        for (size_t k = 0; k < nb; k++)
            fill_block(x + k * t->block, t->block);
        memset(a, 0xA5, bytes);
        memset(b, 0x5A, bytes);
        t->quantize(x, a, nb);
        f->quantize(x, b, nb);
        if (memcmp(a, b, bytes) != 0)
            for (size_t k = 0; k < nb; k++)
                if (memcmp(a + k * t->bytes, b + k * t->bytes, t->bytes) != 0) {
                    if (first == SIZE_MAX)
                        first = done + k * t->block;
                    bad++;
                }
        done += per;
    }
    char name[96];
    snprintf(name, sizeof name, "ggml_fast_%s_%s_quantize", t->name, dt_isa_name((dt_isa)f->isa));
    CHECK(bad == 0, name, "%zu of %zu blocks differ (first at value %zu)", bad, done / t->block,
          first);
    free(x);
    free(a);
    free(b);
}

static void test_dequantizer(const dt_ggml_fast *f, const dt_ggml_traits *t, double scale)
{
    const size_t nb = (1u << 16) / t->block, n = nb * t->block, bytes = nb * t->bytes;
    const double want = (SANITIZED ? 1e6 : 1e8) * scale;
    uint8_t *src = malloc(bytes);
    float *ya = malloc(n * 4), *yb = malloc(n * 4), *la = malloc(n * 4), *lb = malloc(n * 4);
    size_t done = 0, bad = 0, first = SIZE_MAX;
    while ((double)done < want) {
        for (size_t i = 0; i < bytes; i++)
            src[i] = (uint8_t)next64();
        for (int with_lo = 0; with_lo < (t->inexact ? 2 : 1); with_lo++) {
            memset(ya, 0x11, n * 4);
            memset(yb, 0x22, n * 4);
            memset(la, 0x33, n * 4);
            memset(lb, 0x33, n * 4);
            t->dequantize(src, ya, with_lo ? la : NULL, nb);
            f->dequantize(src, yb, with_lo ? lb : NULL, nb);
            for (size_t i = 0; i < n; i++)
                if (memcmp(&ya[i], &yb[i], 4) != 0 || (with_lo && memcmp(&la[i], &lb[i], 4) != 0)) {
                    if (first == SIZE_MAX)
                        first = done + i;
                    bad++;
                }
        }
        done += n;
    }
    char name[96];
    snprintf(name, sizeof name, "ggml_fast_%s_%s_dequantize", t->name,
             dt_isa_name((dt_isa)f->isa));
    CHECK(bad == 0, name, "%zu of %zu values differ (first at %zu)", bad, done, first);
    free(src);
    free(ya);
    free(yb);
    free(la);
    free(lb);
}

int main(int argc, char **argv)
{
    const double scale = argc > 1 ? atof(argv[1]) : 1.0;
    const int detected = (int)dt_isa_detected();
    for (size_t i = 0; i < dt_ggml_fast_count; i++) {
        const dt_ggml_fast *f = &dt_ggml_fast_list[i];
        const dt_ggml_traits *t = dt_ggml_traits_of(f->code);
        if (f->isa > detected) {
            printf("SKIP ggml_fast_%s_%s: the CPU lacks %s\n", t->name,
                   dt_isa_name((dt_isa)f->isa), dt_isa_name((dt_isa)f->isa));
            continue;
        }
        if (f->quantize)
            test_quantizer(f, t, scale);
        if (f->dequantize)
            test_dequantizer(f, t, scale);
    }
    /* the selection: the reference under the simple path, a listed one otherwise */
    CHECK(dt_ggml_quantizer(8) != NULL && dt_ggml_dequantizer(12) != NULL, "ggml_fast_selection",
          "%s", "no block function for Q8_0 / Q4_K");
    return CHECK_EXIT();
}
