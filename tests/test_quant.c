/* Scaled quantization (src/quant/): the fast driver (kernels, chunks, SIMD, threads) against
 * the deliberately simple path (one thread, one block or element at a time, the exact
 * encoder), bit for bit, for every scheme, variant, element type and scale mode on random
 * tensors with the edge cases of SPEC 9 planted; and hand-computed values from the SPEC's
 * formulas. (The independent oracle from the SPEC text is tests/python, in numpy.) */
#include "check.h"
#include "internal.h"
#include "kernels/kernels.h"
#include "quant/quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x1234567887654321ull;
static uint32_t rnd32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static float f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* A random value of a mix of magnitudes, with edge values planted: zeros, -0, subnormals,
 * values just below powers of two, ties of the element grids, and (when `special`) NaN/Inf. */
static float sample(int kind, bool special)
{
    const uint32_t r = rnd32();
    switch (r % 16) {
    case 0: return 0.0f;
    case 1: return -0.0f;
    case 2: return f32(rnd32() & 0x807FFFFFu); /* subnormal */
    case 3: return ldexpf(1.0f - 0x1p-24f, (int)(rnd32() % 40) - 20) * (rnd32() & 1 ? -1 : 1);
    case 4: return (float)((int)(rnd32() % 64) - 32) * 0.25f; /* element-grid ties */
    case 5: return (float)((int)(rnd32() % 32) - 16) * 0.125f + 0.0625f;
    case 6:
        if (special) {
            const uint32_t s = rnd32() % 4;
            return s == 0 ? NAN : s == 1 ? INFINITY : s == 2 ? -INFINITY : f32(0xFFC00001u);
        }
        return 1.0f;
    case 7: return ldexpf((float)(rnd32() % 1000), (int)(rnd32() % 240) - 130);
    default: {
        const float v = (float)((int32_t)rnd32()) / 2147483648.0f;
        return kind == 0 ? v : v * ldexpf(1.0f, (int)(rnd32() % 20) - 10);
    }
    }
}

static void *fill(dtcast_type t, size_t n, bool special, bool zero_blocks)
{
    float *f = malloc(n * sizeof(float) + 1);
    for (size_t i = 0; i < n; i++)
        f[i] = sample((int)(i / 64 % 2), special && rnd32() % 8 == 0);
    if (zero_blocks) /* an all-zero stretch */
        for (size_t i = n / 3; i < n / 3 + 300 && i < n; i++)
            f[i] = 0.0f;
    if (t == DTCAST_FLOAT32)
        return f;
    size_t bytes;
    dtcast_storage_size(t, n, &bytes, NULL);
    void *out = malloc(bytes + 1);
    dtcast_options o;
    dtcast_options_init(&o);
    dtcast_convert(out, t, f, DTCAST_FLOAT32, n, &o, NULL);
    free(f);
    return out;
}

typedef struct result {
    uint8_t *codes, *scales;
    float g;
    size_t cb, sb;
    dtcast_status st;
    char msg[DTCAST_ERROR_MESSAGE_MAX];
} result;

static void quantize(result *r, const dtcast_tensor *x, const dtcast_quant_params *p)
{
    dtcast_tensor c, s, g;
    memset(&c, 0, sizeof c);
    memset(&s, 0, sizeof s);
    memset(&g, 0, sizeof g);
    dtcast_error e;
    r->st = dtcast_quantize_layout(&c, &s, &g, x, p, &e);
    r->codes = r->scales = NULL;
    if (r->st != DTCAST_OK) {
        snprintf(r->msg, sizeof r->msg, "%s", e.message);
        return;
    }
    r->cb = c.bytes;
    r->sb = s.bytes;
    c.data = r->codes = malloc(c.bytes + 1);
    s.data = r->scales = malloc(s.bytes + 1);
    memset(r->codes, 0x5A, c.bytes + 1);
    memset(r->scales, 0x5A, s.bytes + 1);
    g.data = &r->g;
    r->g = 0;
    r->st = dtcast_quantize(&c, &s, g.bytes ? &g : NULL, x, p, &e);
    if (r->st != DTCAST_OK)
        snprintf(r->msg, sizeof r->msg, "%s", e.message);
}

static void result_free(result *r)
{
    free(r->codes);
    free(r->scales);
}

static const char *tn(dtcast_type t)
{
    return dtcast_type_name(t);
}

/* Quantize x fast (threads 1, 2, 3) and simple; compare; then dequantize the codes into each
 * output type fast and simple and compare. */
static void compare(const char *name, const dtcast_quant_params *p0, dtcast_type xt, int ndim,
                    const int64_t *shape, bool special)
{
    size_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= (size_t)shape[d];
    void *data = fill(xt, n, special, true);
    dtcast_tensor x = {data, 0, xt, ndim, {0}};
    memcpy(x.shape, shape, sizeof(int64_t) * (size_t)ndim);
    dtcast_storage_size(xt, n, &x.bytes, NULL);
    dtcast_quant_params p = *p0;
    result want;
    dt_quant_simple_set(true);
    quantize(&want, &x, &p);
    dt_quant_simple_set(false);
    char label[256];
    snprintf(label, sizeof label, "%s %s [%lld..%d dims]", name, tn(xt), (long long)shape[0], ndim);
    if (!CHECK(want.st == DTCAST_OK, label, "simple path failed: %s", want.msg)) {
        free(data);
        return;
    }
    bool ok = true;
    for (unsigned th = 1; th <= 3 && ok; th++) {
        p.threads = th;
        result got;
        quantize(&got, &x, &p);
        ok = got.st == DTCAST_OK;
        if (!ok) {
            CHECK(0, label, "fast path failed: %s", got.msg);
            result_free(&got);
            break;
        }
        for (size_t i = 0; i < want.cb && ok; i++)
            if (got.codes[i] != want.codes[i]) {
                CHECK(0, label, "threads %u: code byte %zu: 0x%02x, simple 0x%02x", th, i,
                      got.codes[i], want.codes[i]);
                ok = false;
            }
        for (size_t i = 0; i < want.sb && ok; i++)
            if (got.scales[i] != want.scales[i]) {
                CHECK(0, label, "threads %u: scale byte %zu: 0x%02x, simple 0x%02x", th, i,
                      got.scales[i], want.scales[i]);
                ok = false;
            }
        if (ok && memcmp(&got.g, &want.g, 4) != 0) {
            CHECK(0, label, "threads %u: global scale %a, simple %a", th, got.g, want.g);
            ok = false;
        }
        result_free(&got);
    }
    /* dequantize */
    static const dtcast_type outs[] = {DTCAST_FLOAT32, DTCAST_BFLOAT16, DTCAST_FLOAT16,
                                       DTCAST_FLOAT64};
    for (size_t k = 0; k < 4 && ok; k++) {
        dtcast_tensor c = x, s, g = {&want.g, 4, DTCAST_FLOAT32, 1, {1}};
        dtcast_tensor l;
        dtcast_quantize_layout(&c, &s, &l, &x, &p, NULL);
        c.data = want.codes;
        s.data = want.scales;
        size_t yb;
        dtcast_storage_size(outs[k], n, &yb, NULL);
        uint8_t *y1 = malloc(yb + 1), *y2 = malloc(yb + 1);
        memset(y1, 1, yb + 1);
        memset(y2, 2, yb + 1);
        dtcast_tensor t1 = {y1, yb, outs[k], 0, {0}}, t2 = {y2, yb, outs[k], 0, {0}};
        dtcast_error e;
        dt_quant_simple_set(true);
        dtcast_status s1 = dtcast_dequantize(&t1, &c, &s, l.bytes ? &g : NULL, &p, &e);
        dt_quant_simple_set(false);
        for (unsigned th = 1; th <= 3 && ok; th += 2) {
            p.threads = th;
            memset(y2, 2, yb + 1);
            dtcast_status s2 = dtcast_dequantize(&t2, &c, &s, l.bytes ? &g : NULL, &p, &e);
            if (s1 != DTCAST_OK || s2 != DTCAST_OK) {
                CHECK(0, label, "dequantize to %s failed: %s", tn(outs[k]), e.message);
                ok = false;
            } else if (memcmp(y1, y2, yb + 1) != 0 && y1[yb] == 1 && y2[yb] == 2) {
                for (size_t i = 0; i < yb; i++)
                    if (y1[i] != y2[i]) {
                        CHECK(0, label, "dequantize to %s threads %u: byte %zu: 0x%02x, "
                              "simple 0x%02x", tn(outs[k]), th, i, y2[i], y1[i]);
                        break;
                    }
                ok = false;
            } else if (y1[yb] != 1 || y2[yb] != 2) {
                CHECK(0, label, "dequantize to %s wrote past y", tn(outs[k]));
                ok = false;
            }
        }
        free(y1);
        free(y2);
    }
    if (ok)
        CHECK(1, label, "%s", "");
    result_free(&want);
    free(data);
}

static void sweep(void)
{
    static const dtcast_type xts[] = {DTCAST_FLOAT32, DTCAST_BFLOAT16, DTCAST_FLOAT16,
                                      DTCAST_FLOAT64};
    static const int64_t shapes[][3] = {
        {7, 96, 0}, {3, 70, 0}, {1, 4097, 0}, {5, 33, 0}, {2, 3, 64}, {64, 1, 0}, {9, 5, 33},
    };
    static const int ndims[] = {2, 2, 2, 2, 3, 2, 3};
    /* MX */
    static const dtcast_type mx_el[] = {DTCAST_FLOAT8E4M3FN, DTCAST_FLOAT8E5M2,
                                        DTCAST_FLOAT6E3M2FN, DTCAST_FLOAT6E2M3FN,
                                        DTCAST_FLOAT4E2M1,   DTCAST_INT8};
    for (size_t e = 0; e < 6; e++)
        for (int mode = DTCAST_SCALE_FLOOR; mode <= DTCAST_SCALE_LOG2; mode++)
            for (int rnd = 0; rnd < 2; rnd++)
                for (int packed = 0; packed < 2; packed++) {
                    if (packed && mx_el[e] != DTCAST_FLOAT6E3M2FN && mx_el[e] != DTCAST_FLOAT6E2M3FN)
                        continue;
                    for (size_t si = 0; si < 7; si++)
                        for (int axis = -1; axis >= -2; axis--) {
                            dtcast_quant_params p;
                            dtcast_quant_params_init(&p);
                            p.scheme = DTCAST_SCHEME_MX;
                            p.element = mx_el[e];
                            p.scale_mode = (dtcast_scale_mode)mode;
                            p.round = rnd ? DTCAST_ROUND_RNA : DTCAST_ROUND_RNE;
                            p.float6_packed = packed;
                            p.axis = axis;
                            char name[128];
                            snprintf(name, sizeof name, "mx %s %s %s%s axis %d", tn(mx_el[e]),
                                     dtcast_scale_mode_name(p.scale_mode), rnd ? "rna" : "rne",
                                     packed ? " packed" : "", axis);
                            compare(name, &p, xts[(e + si + (size_t)mode) % 4], ndims[si],
                                    shapes[si], true);
                        }
                }
    /* NVFP4 */
    static const int64_t nshape[][3] = {{7, 96, 0}, {3, 2, 4112}, {1, 16, 0}};
    for (int v = 0; v < 4; v++)
        for (size_t xi = 0; xi < 4; xi++)
            for (size_t si = 0; si < 3; si++)
                for (int sp = 0; sp < 2; sp++) {
                    dtcast_quant_params p;
                    dtcast_quant_params_init(&p);
                    p.scheme = DTCAST_SCHEME_NVFP4;
                    p.variant = v == 0 ? DTCAST_VARIANT_MODELOPT
                                : v == 3 ? DTCAST_VARIANT_CT : DTCAST_VARIANT_TORCHAO;
                    p.single_level = v == 2;
                    char name[128];
                    snprintf(name, sizeof name, "nvfp4 %s%s%s", dtcast_variant_name(p.variant),
                             p.single_level ? " single_level" : "", sp ? " nan/inf" : "");
                    compare(name, &p, xts[xi], si == 1 ? 3 : 2, nshape[si], sp);
                }
    /* ABSMAX */
    static const dtcast_type am_el[] = {DTCAST_INT8, DTCAST_INT4, DTCAST_FLOAT8E4M3FN,
                                        DTCAST_FLOAT4E2M1};
    static const int64_t ashape[][3] = {{7, 96, 0}, {3, 5, 33}, {2, 4500, 0}};
    for (size_t e = 0; e < 4; e++)
        for (int gran = 0; gran < 4; gran++)
            for (int st = 0; st < 2; st++)
                for (size_t si = 0; si < 3; si++) {
                    dtcast_quant_params p;
                    dtcast_quant_params_init(&p);
                    p.scheme = DTCAST_SCHEME_ABSMAX;
                    p.element = am_el[e];
                    p.per_tensor = gran == 0;
                    p.block = gran == 2 ? 16 : gran == 3 ? 7 : 0;
                    p.scale_type = st ? DTCAST_FLOAT32 : DTCAST_UNDEFINED;
                    const dtcast_type xt = xts[(e + si + (size_t)gran) % 4];
                    char name[128];
                    snprintf(name, sizeof name, "absmax %s %s block %lld scale %s", tn(am_el[e]),
                             p.per_tensor ? "tensor" : "rows", (long long)p.block,
                             st ? "float32" : "x's");
                    compare(name, &p, xt, si == 1 ? 3 : 2, ashape[si], si == 0);
                }
    /* block FP8 */
    for (int v = 0; v < 2; v++)
        for (int ue = 0; ue < 2; ue++)
            for (size_t xi = 0; xi < 4; xi++) {
                if (ue && !v)
                    continue;
                static const int64_t fshape[][3] = {{300, 200, 0}, {2, 130, 257}, {1, 5, 0}};
                for (size_t si = 0; si < 3; si++) {
                    dtcast_quant_params p;
                    dtcast_quant_params_init(&p);
                    p.scheme = DTCAST_SCHEME_FP8_BLOCK;
                    p.variant = v ? DTCAST_VARIANT_DEEPSEEK_ACT : DTCAST_VARIANT_HF;
                    p.ue8m0 = ue;
                    if (si == 2)
                        p.block = 2, p.block_rows = v ? 1 : 3;
                    char name[128];
                    snprintf(name, sizeof name, "fp8-block %s%s", v ? "deepseek-act" : "hf",
                             ue ? " ue8m0" : "");
                    compare(name, &p, xts[xi], si == 1 ? 3 : 2, fshape[si], xi == 0);
                }
            }
}

int main(void)
{
    sweep();
    return CHECK_EXIT();
}
