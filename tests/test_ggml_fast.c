/* Every fast path of ggml's block functions (src/ggml/fast.c's one list) against the reference
 * block functions of src/ggml/ggml.h, bit for bit, on the CPU at hand (an entry whose ISA the
 * CPU lacks prints SKIP): quantizers on 10^8 finite float32 values of every kind a block can
 * hold (normal, heavy-tailed, constant, zero and -0, tiny and subnormal, huge, integers, ties,
 * random bit patterns), dequantizers on 10^8 elements' worth of random blocks, float32 and the
 * residuals both. Under the sanitizers (which check memory, not bits) 10^6.
 *
 * Then dequantization to bfloat16 through dtcast_ggml_dequantize, per type: the fast path (on
 * AVX-512 with AVX512-BF16 the blocks straight to bfloat16, fast_dequant_avx512bf16.c, whose
 * entries are also called directly; else the one-pass store) against the reference path
 * (dt_quant_simple: dequant.c, round to odd, the library's conversion), bit for bit, on 10^8
 * elements' worth of random blocks whose scales are of every kind (random bytes, normal,
 * far apart, subnormal, few mantissa bits, near overflow, Inf and NaN).
 *
 * Then the quantizers' input readers (fast_input.h) of each ISA the CPU has: every bfloat16 and
 * float16 bit pattern widened (against the exact widening; NaN only as NaN: vcvtph2ps quiets),
 * and the nonfinite verdict of every chunk length 0..130 with the one nonfinite element at every
 * position, float32 too.
 *
 *   test_ggml_fast [SCALE]   SCALE multiplies the counts (make check-long: 1; default 1) */
#include "check.h"
#include "ggml/fast_dequant.h"
#include "ggml/fast_input.h"
#include "ggml/ggml.h"
#include "kernels/kernels.h"
#include "quant/quant.h"

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

/* ---- dequantization to bfloat16: fast path against the reference path ------------------- */
/* the fp16 scale fields of code's block (byte offsets; -1: none), the ones api.c's
 * invalid_blocks and dequant.c's row functions test */
static void scale_fields(int code, int off[2])
{
    off[0] = off[1] = -1;
    switch (code) {
    case 2: case 6: case 8: case 9: case 41: case 42: case 16: case 17: case 18: case 19:
    case 20: case 21: case 22: case 23: off[0] = 0; break;
    case 3: case 7: case 12: case 13: off[0] = 0; off[1] = 2; break;
    case 10: off[0] = 80; off[1] = 82; break;
    case 11: off[0] = 108; break;
    case 14: off[0] = 208; break;
    case 34: off[0] = 52; break;
    case 35: off[0] = 64; break;
    default: break; /* IQ1_M (split d), Q8_K (float32 d), MXFP4, NVFP4: their own */
    }
}

/* an fp16 of the given kind */
static uint16_t f16_of_kind(unsigned kind)
{
    const uint16_t sign = (uint16_t)((next64() & 1) << 15), man = (uint16_t)(next64() & 0x3FF);
    switch (kind) {
    case 0: return (uint16_t)(sign | (1 + next64() % 30) << 10 | man);          /* normal */
    case 1: return (uint16_t)(sign | man);                                       /* subnormal */
    case 2: return (uint16_t)(sign | 0x7C00 | (next64() % 4 == 0 ? 0 : man));    /* Inf / NaN */
    case 3: return (uint16_t)(sign | (1 + next64() % 30) << 10 | (man & 0x380)); /* few bits */
    case 4: return (uint16_t)(sign | (29 + next64() % 2) << 10 | man);          /* near 65504 */
    default: return (uint16_t)(sign | (1 + next64() % 4) << 10 | man);          /* tiny */
    }
}

/* random bytes, then the scales of one kind (or left random) */
static void fill_blocks_bf16(int code, const dt_ggml_traits *t, uint8_t *src, size_t nb)
{
    for (size_t i = 0; i < nb * t->bytes; i++)
        src[i] = (uint8_t)next64();
    for (size_t b = 0; b < nb; b++) {
        uint8_t *x = src + b * t->bytes;
        const unsigned kind = (unsigned)(next64() % 10);
        if (kind >= 8)
            continue; /* the random bytes' scales */
        /* 0: normal; 1: normal and few-bit; 2: far apart (a huge and a tiny one: large
         * residuals); 3: subnormal;
         * 4: few mantissa bits (ties); 5: near overflow; 6: tiny; 7: Inf or NaN */
        static const unsigned k1[8] = {0, 0, 4, 1, 3, 4, 5, 2};
        static const unsigned k2[8] = {0, 3, 5, 1, 3, 4, 5, 0};
        int off[2];
        scale_fields(code, off);
        for (int k = 0; k < 2; k++)
            if (off[k] >= 0)
                dt_ggml_wr16(x + off[k], f16_of_kind(k ? k2[kind] : k1[kind]));
        if (code == 29) { /* IQ1_M: d in the top nibbles of the words at 48, 50, 52, 54 */
            const uint16_t d = f16_of_kind(k1[kind]);
            for (int n = 0; n < 4; n++) {
                const uint16_t w = dt_ggml_rd16(x + 48 + 2 * n);
                dt_ggml_wr16(x + 48 + 2 * n, (uint16_t)((w & 0x0FFF) | ((d >> (4 * n)) & 15) << 12));
            }
        } else if (code == 39) { /* MXFP4: E8M0, the subnormal scales, 0xFE, 0xFF */
            static const uint8_t e[8] = {127, 0, 1, 2, 0xFE, 0xFF, 100, 150};
            x[0] = e[kind];
        } else if (code == 15) { /* Q8_K: a float32 d */
            static const uint32_t ex[8] = {127, 1, 254, 0, 100, 0xFF, 246, 247}; /* 1 and 246: the fast path's ends */
            dt_ggml_wr32(x, (uint32_t)(next64() & 0x807FFFFFu) | ex[kind] << 23);
        }
    }
}

static void test_bf16(double scale)
{
    const size_t n = 1u << 16; /* elements per round: whole blocks of every size */
    const double want = (SANITIZED ? 1e6 : 1e8) * scale;
    uint8_t *src = malloc(n * 2);
    uint16_t *ref = malloc(n * 2), *got = malloc(n * 2), *direct = malloc(n * 2);
#if defined(__x86_64__) && defined(__GNUC__)
    const bool has_bf16 = dt_isa_detected() >= DT_ISA_AVX512 && dt_cpu_has_avx512bf16();
#endif
    for (int code = 0; code < DT_GGML_TYPE_COUNT; code++) {
        const dt_ggml_traits *t = dt_ggml_traits_of((uint32_t)code);
        if (!t || !t->dequantize)
            continue;
        const size_t nb = n / t->block, bytes = nb * t->bytes;
        void (*fn)(const uint8_t *, uint16_t *, size_t) = NULL; /* the entry, called directly */
#if defined(__x86_64__) && defined(__GNUC__)
        for (size_t i = 0; i < dt_ggml_bf16_count; i++)
            if (dt_ggml_bf16_list[i].code == (uint32_t)code && has_bf16)
                fn = dt_ggml_bf16_list[i].fn;
#endif
        size_t done = 0, bad = 0, bad_direct = 0, first = SIZE_MAX;
        dtcast_tensor y;
        memset(&y, 0, sizeof y);
        y.type = DTCAST_BFLOAT16;
        y.ndim = 2;
        y.shape[0] = 1;
        y.shape[1] = (int64_t)n;
        y.bytes = n * 2;
        bool ok = true;
        while ((double)done < want && ok) {
            fill_blocks_bf16(code, t, src, nb);
            memset(ref, 0x11, n * 2);
            memset(got, 0x22, n * 2);
            dt_quant_simple_set(true);
            y.data = ref;
            ok &= dtcast_ggml_dequantize(&y, src, bytes, code, 1, NULL) == DTCAST_OK;
            dt_quant_simple_set(false);
            y.data = got;
            ok &= dtcast_ggml_dequantize(&y, src, bytes, code, 1, NULL) == DTCAST_OK;
            if (fn) {
                memset(direct, 0x33, n * 2);
                fn(src, direct, nb);
            }
            for (size_t i = 0; i < n; i++) {
                const bool b1 = got[i] != ref[i], b2 = fn && direct[i] != ref[i];
                if ((b1 || b2) && first == SIZE_MAX)
                    first = done + i;
                bad += b1;
                bad_direct += b2;
            }
            done += n;
        }
        char name[96];
        snprintf(name, sizeof name, "ggml_fast_%s_bf16_dequantize%s", t->name,
                 fn ? "_avx512bf16" : "");
        CHECK(ok && bad == 0 && bad_direct == 0, name,
              "status %s; %zu (api) and %zu (direct) of %zu values differ (first at %zu)",
              ok ? "ok" : "failed", bad, bad_direct, done, first);
    }
    free(src);
    free(ref);
    free(got);
    free(direct);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* the exact float32 of a 16-bit pattern and whether it is NaN or infinite (the reference) */
static float widen16(uint16_t h, bool bf16, bool *nonfinite)
{
    float f = 0.0f;
    if (bf16) {
        const uint32_t u = (uint32_t)h << 16;
        memcpy(&f, &u, 4);
    } else
        dtcast_convert(&f, DTCAST_FLOAT32, &h, DTCAST_FLOAT16, 1, NULL, NULL);
    *nonfinite = !isfinite(f);
    return f;
}

static void test_input(void)
{
    struct {
        const char *name;
        dt_isa isa;
        dtcast_type t;
        dt_ggml_input_fn fn;
    } const in[] = {
        {"f32_avx2", DT_ISA_AVX2, DTCAST_FLOAT32, dt_ggml_input_f32_avx2},
        {"bf16_avx2", DT_ISA_AVX2, DTCAST_BFLOAT16, dt_ggml_input_bf16_avx2},
        {"f16_avx2", DT_ISA_AVX2, DTCAST_FLOAT16, dt_ggml_input_f16_avx2},
        {"f32_avx512", DT_ISA_AVX512, DTCAST_FLOAT32, dt_ggml_input_f32_avx512},
        {"bf16_avx512", DT_ISA_AVX512, DTCAST_BFLOAT16, dt_ggml_input_bf16_avx512},
        {"f16_avx512", DT_ISA_AVX512, DTCAST_FLOAT16, dt_ggml_input_f16_avx512},
    };
    const size_t N = 1u << 16;
    uint16_t *h = malloc(N * 2);
    uint32_t *u = malloc(N * 4);
    float *buf = malloc((N + 64) * 4);
    for (size_t k = 0; k < sizeof in / sizeof *in; k++) {
        char name[64];
        snprintf(name, sizeof name, "ggml_fast_input_%s", in[k].name);
        if (in[k].isa > dt_isa_detected()) {
            printf("SKIP %s: the CPU lacks %s\n", name, dt_isa_name(in[k].isa));
            continue;
        }
        const bool is16 = in[k].t != DTCAST_FLOAT32, bf16 = in[k].t == DTCAST_BFLOAT16;
        size_t bad = 0, first = SIZE_MAX;
        if (is16) { /* every pattern, widened, in one call */
            for (size_t i = 0; i < N; i++)
                h[i] = (uint16_t)i;
            for (size_t i = 0; i < N + 64; i++)
                buf[i] = -1.0f;
            in[k].fn(h, N, buf);
            for (size_t i = 0; i < N; i++) {
                bool nf;
                const float want = widen16(h[i], bf16, &nf);
                const bool ok = isnan(want) ? isnan(buf[i]) : memcmp(&want, &buf[i], 4) == 0;
                if (!ok && first == SIZE_MAX)
                    first = i;
                bad += !ok;
            }
            for (size_t i = N; i < N + 64; i++)
                bad += buf[i] != -1.0f; /* nothing past n written */
        }
        /* the verdict and the tails: lengths 0..130, a finite filler (random bits, exponents not all ones),
         * then each position in turn holding one nonfinite value of each kind */
        for (size_t n = 0; n <= 130; n++) {
            for (size_t i = 0; i < n; i++) {
                const uint64_t r = next64();
                h[i] = (uint16_t)(bf16 ? (r & 0x807F) | ((r >> 16) % 0xFF) << 7
                                       : (r & 0x83FF) | ((r >> 16) % 0x1F) << 10);
                u[i] = (uint32_t)((r & 0x807FFFFFu) | ((r >> 32) % 0xFF) << 23);
            }
            const void *src = is16 ? (const void *)h : (const void *)u;
            for (size_t i = 0; i < n + 64; i++)
                buf[i] = -1.0f;
            bool none = in[k].fn(src, n, is16 ? buf : NULL);
            for (size_t i = 0; is16 && i < n + 64; i++) { /* the values, nothing past n */
                bool nf;
                const float want = i < n ? widen16(h[i], bf16, &nf) : -1.0f;
                none |= memcmp(&want, &buf[i], 4) != 0;
            }
            bad += none;
            if (none && first == SIZE_MAX)
                first = 1000000 + n;
            for (size_t p = 0; p < n; p++) {
                const uint16_t sh = h[p];
                const uint32_t su = u[p];
                for (int kind = 0; kind < 3; kind++) { /* +Inf, -Inf, a NaN */
                    h[p] = (uint16_t)(bf16 ? (kind == 2 ? 0x7FC1 : 0x7F80 | (kind << 15))
                                           : (kind == 2 ? 0x7E01 : 0x7C00 | (kind << 15)));
                    u[p] = kind == 2 ? 0x7FC00001u : 0x7F800000u | (uint32_t)kind << 31;
                    const bool got = in[k].fn(src, n, is16 ? buf : NULL);
                    bad += !got;
                    if (!got && first == SIZE_MAX)
                        first = 2000000 + n * 1000 + p;
                }
                h[p] = sh;
                u[p] = su;
            }
        }
        CHECK(bad == 0, name, "%zu wrong (first: case %zu)", bad, first);
    }
    free(h);
    free(u);
    free(buf);
}
#endif

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
    test_bf16(scale);
#if defined(__x86_64__) && defined(__GNUC__)
    test_input();
#endif
    /* the selection: the reference under the simple path, a listed one otherwise */
    CHECK(dt_ggml_quantizer(8) != NULL && dt_ggml_dequantizer(12) != NULL, "ggml_fast_selection",
          "%s", "no block function for Q8_0 / Q4_K");
    return CHECK_EXIT();
}
