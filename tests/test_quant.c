/* Scaled quantization (src/quant/): the fast driver (kernels, chunks, SIMD, threads) against
 * the deliberately simple path (one thread, one block or element at a time, the exact
 * encoder), bit for bit, for every scheme, variant, element type and scale mode on random
 * tensors with the edge cases of docs/quantization.md planted; and hand-computed values from
 * its formulas. (The independent oracle from its text is tests/python, in numpy.) */
#include "check.h"
#include "internal.h"
#include "kernels/kernels.h"
#include "quant/fused_quant.h"
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

/* The element grid the edge blocks aim at (set by the fused sweep): m significand bits, emin,
 * emax, max; m < 0: MXINT8 (steps of 1/64 up to 127/64). */
static struct {
    int m, emin, emax;
    float max;
} grid = {3, -6, 8, 448.0f};

static bool edge_moderate; /* edge blocks without the huge values (a tensor amax about 2^20) */

/* A block of 32 values of one edge kind (fused sweep): the scaled values land on the element
 * grid, its midpoints (ties) and their neighbours, past the largest value, at powers of two and
 * just below, in the subnormal ranges of the code and of float32, NaN/Inf, zeros of both signs */
static void edge_block(float *f, unsigned kind, bool special)
{
    const int p = (int)(rnd32() % 40) - 20; /* the block's binade: amax about 2^p */
    const float u = ldexpf(1.0f, p - grid.emax); /* the scaled grid's unit: amax -> 2^emax */
    for (int i = 0; i < 32; i++) {
        const float sg = rnd32() & 1 ? -1.0f : 1.0f;
        float v;
        switch (kind % 12) {
        case 0: v = edge_moderate ? sg * ldexpf((float)(rnd32() % 64), p - 6) : sample(1, false); break;
        case 1: v = rnd32() & 1 ? -0.0f : 0.0f; break; /* all zero */
        case 2: /* a NaN or an Inf in a block (MX: its scale is 0xFF) */
            v = special && i == 7   ? (rnd32() & 1 ? NAN : -INFINITY)
                : edge_moderate ? sg * ldexpf((float)(rnd32() % 64), p - 6)
                                : sample(1, false);
            break;
        case 3: v = f32(rnd32() & 0x807FFFFFu); break; /* float32 subnormals */
        case 4: v = sg * ldexpf(1.0f - 0x1p-24f, p) * (i == 0 ? 1.0f : 0.5f); break;
        case 5: case 6: case 7: { /* the grid, its ties and neighbours (an ulp of float32 and
                                   * of bfloat16 either side) */
            float g;
            if (grid.m < 0) {
                g = (float)(rnd32() % 256) / 128.0f; /* the codes / 64 and their ties */
            } else {
                const int e = grid.emin + (int)(rnd32() % (unsigned)(grid.emax - grid.emin + 2));
                const float q = ldexpf(1.0f, (e > grid.emin ? e : grid.emin) - grid.m - 1);
                g = (float)(rnd32() % (2u << grid.m)) * q + (e > grid.emin ? ldexpf(1.0f, e) : 0);
                g = g > 2 * grid.max ? grid.max : g;
            }
            const unsigned nb = rnd32() % 5;
            g *= nb == 1 ? 1.0f + 0x1p-23f : nb == 2 ? 1.0f - 0x1p-24f
                 : nb == 3 ? 1.0f + 0x1p-7f : nb == 4 ? 1.0f - 0x1p-8f : 1.0f;
            v = i == 0 ? ldexpf(1.0f, p) : sg * g * u;
            if (kind % 12 == 7 && i == 1) /* past max after scaling: saturates */
                v = sg * ldexpf(1.9999f, p);
            break;
        }
        case 8: v = sg * ldexpf((float)(rnd32() % 64), p - (int)(rnd32() % 40)); break;
        case 9: v = i % 2 ? -0.0f : -ldexpf(1.0f, -(int)(rnd32() % 150)); break;
        case 10:
            v = sg * ldexpf(1.0f + (float)(rnd32() % 8) / 8.0f,
                            edge_moderate ? p : 120 + (int)(rnd32() % 8));
            break;
        default: v = sg * ldexpf(1.0f + (float)(rnd32() % 8) / 8.0f, -120 - (int)(rnd32() % 29)); break;
        }
        f[i] = v;
    }
}

static bool edge_fill; /* fill() makes edge blocks (the fused sweep) */

/* NVFP4's four cases, v = 0..3: modelopt, torchao, torchao single-level, ct */
static dtcast_quant_params nvfp4_params(int v)
{
    dtcast_quant_params p;
    dtcast_quant_params_init(&p);
    p.scheme = DTCAST_SCHEME_NVFP4;
    p.variant = v == 0 ? DTCAST_VARIANT_MODELOPT : v == 3 ? DTCAST_VARIANT_CT : DTCAST_VARIANT_TORCHAO;
    p.single_level = v == 2;
    return p;
}

static void *fill(dtcast_type t, size_t n, bool special, bool zero_blocks)
{
    float *f = malloc(n * sizeof(float) + 1);
    for (size_t i = 0; i < n; i++)
        f[i] = sample((int)(i / 64 % 2), special && rnd32() % 8 == 0);
    if (edge_fill) { /* the edge kinds in turn, block after block, the random ones between */
        float b[32];
        for (size_t i = 0; i + 32 <= n; i += 32) {
            edge_block(b, (unsigned)(i / 32), special);
            memcpy(f + i, b, sizeof b);
        }
    }
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
        dt_isa_pin(th == 2 ? DT_ISA_PORTABLE : -1); /* the plain-C steps and kernels too */
        quantize(&got, &x, &p);
        dt_isa_pin(-1);
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
            p.threads = th == 3 ? 2 : 1;
            memset(y2, 2, yb + 1);
            dt_isa_pin(th == 3 ? DT_ISA_PORTABLE : -1);
            dtcast_status s2 = dtcast_dequantize(&t2, &c, &s, l.bytes ? &g : NULL, &p, &e);
            dt_isa_pin(-1);
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
                    dtcast_quant_params p = nvfp4_params(v);
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

/* Whether the fused kernels (src/quant/fused_quant.h) take this quantization: dt_fq_init's
 * answer, and for MX mx.c's own conditions (blocks of 32 along the contiguous last axis) */
static bool fused_taken(const dtcast_quant_params *p, dtcast_type xt, int ndim, const int64_t *shape)
{
    dt_quant q;
    if (dt_quant_resolve(&q, p, xt, ndim, shape, DTCAST_UNDEFINED, DTCAST_UNDEFINED, NULL) !=
        DTCAST_OK)
        return false;
    if (q.p.scheme == DTCAST_SCHEME_MX &&
        (q.I != 1 || q.B != 32 || q.D % 32 || q.p.scale_mode == DTCAST_SCALE_LOG2))
        return false;
    const int op = q.p.scheme == DTCAST_SCHEME_MX
                       ? (q.p.element == DTCAST_INT8 ? DT_Q_MUL_I8 : DT_Q_MUL)
                   : q.p.scheme == DTCAST_SCHEME_NVFP4
                       ? (q.p.variant == DTCAST_VARIANT_TORCHAO ? DT_Q_MUL
                          : q.p.variant == DTCAST_VARIANT_CT    ? DT_Q_DIV
                                                                : DT_Q_DIV_MO)
                       : (q.p.variant == DTCAST_VARIANT_DEEPSEEK_ACT ? DT_Q_DIV : DT_Q_MUL);
    dt_fq c;
    static uint8_t dummy[1];
    return dt_fq_init(&c, &q, op, q.B, dummy, dummy);
}

/* Whether NVFP4 on bfloat16 has the threshold kernel (fused_quant.h dt_fq_thr_init) */
static bool thresholds_taken(const dtcast_quant_params *p)
{
    static const int64_t shape[2] = {64, 4096};
    dt_quant q;
    if (dt_quant_resolve(&q, p, DTCAST_BFLOAT16, 2, shape, DTCAST_UNDEFINED, DTCAST_UNDEFINED,
                         NULL) != DTCAST_OK)
        return false;
    const int op = q.p.variant == DTCAST_VARIANT_TORCHAO ? DT_Q_MUL
                   : q.p.variant == DTCAST_VARIANT_CT    ? DT_Q_DIV
                                                         : DT_Q_DIV_MO;
    dt_fq c;
    static uint8_t dummy[1];
    static dt_fq_thr t;
    float k[128];
    for (int i = 0; i < 128; i++)
        k[i] = 1.0f;
    return dt_fq_init(&c, &q, op, 16, dummy, dummy) && dt_fq_thr_init(&t, &c, k);
}

/* The threshold tables (fused_quant.h dt_fq_thr_init) against dtcast_convert: for each NVFP4
 * element step, 128 factors k at a time (2^-40, 2^-35, ..., 2^35 times 1 + j/8, and 128 random
 * ones; under DTCAST_TEST_SCALE < 1 the random ones), every bfloat16 |x| from 0 to the largest
 * finite one: the code the table gives
 * (thresholds reached, and modelopt's sign only where the quotient is not 0) is the code of the
 * quotient (product) converted to float4e2m1 by the library, with modelopt's -0 -> +0. */
static void threshold_tables(void)
{
    if (dt_isa_active() < DT_ISA_AVX2)
        return;
    static const dtcast_variant vs[] = {DTCAST_VARIANT_MODELOPT, DTCAST_VARIANT_CT,
                                        DTCAST_VARIANT_TORCHAO};
    static const int64_t shape[2] = {64, 4096};
    static dt_fq_thr t;
    enum { NX = 0x7F80 }; /* |x| bits 0 .. 0x7F7F */
    const char *sc = getenv("DTCAST_TEST_SCALE");
    const double scale = sc ? atof(sc) : 1.0;
    float *v = malloc(NX * 2 * sizeof(float));
    uint8_t *codes = malloc(NX + 1);
    size_t bad = 0, checked = 0;
    char where[160] = "";
    for (int vi = 0; vi < 3; vi++) {
        dtcast_quant_params p;
        dtcast_quant_params_init(&p);
        p.scheme = DTCAST_SCHEME_NVFP4;
        p.variant = vs[vi];
        const int op = vi == 0 ? DT_Q_DIV_MO : vi == 1 ? DT_Q_DIV : DT_Q_MUL;
        dt_quant q;
        dt_fq c;
        static uint8_t dummy[1];
        if (dt_quant_resolve(&q, &p, DTCAST_BFLOAT16, 2, shape, DTCAST_UNDEFINED,
                             DTCAST_UNDEFINED, NULL) != DTCAST_OK ||
            !dt_fq_init(&c, &q, op, 16, dummy, dummy)) {
            CHECK(0, "threshold tables", "%s: no fused kernel", dtcast_variant_name(vs[vi]));
            continue;
        }
        for (int set = scale < 1 ? 1 : 0; set < 2; set++) {
            float k[128];
            for (int i = 0; i < 128; i++)
                k[i] = set == 0 ? ldexpf(1.0f + (float)(i % 8) / 8.0f, i / 8 * 5 - 40)
                                : f32(0x20000000u + rnd32() % 0x3F000000u); /* 2^-63 .. 2^63 */
            if (!dt_fq_thr_init(&t, &c, k)) {
                CHECK(0, "threshold tables", "%s: not built", dtcast_variant_name(vs[vi]));
                break;
            }
            for (int s = 0; s < 128; s++) {
                for (uint32_t u = 0; u < NX; u++) {
                    const float x = f32(u << 16);
                    v[2 * u] = op == DT_Q_MUL ? x * k[s] : x / k[s];
                    v[2 * u + 1] = op == DT_Q_MUL ? -x * k[s] : -x / k[s];
                    if (op == DT_Q_DIV_MO) /* a quotient of 0 is +0 */
                        for (int h = 0; h < 2; h++)
                            v[2 * u + h] = v[2 * u + h] == 0.0f ? 0.0f : v[2 * u + h];
                }
                dtcast_convert(codes, DTCAST_FLOAT4E2M1, v, DTCAST_FLOAT32, NX * 2, NULL, NULL);
                const uint32_t *row = t.t[s];
                for (uint32_t u = 0; u < NX; u++)
                    for (int h = 0; h < 2; h++) {
                        unsigned want = codes[u] >> (4 * h) & 0xF, got = 0;
                        for (int i = 0; i < 7; i++)
                            got += (int)u > (int16_t)(row[i] & 0xFFFF);
                        if (h && (op != DT_Q_DIV_MO || (int)u > (int16_t)(row[7] & 0xFFFF)))
                            got |= 8;
                        checked++;
                        if (got != want && bad++ == 0)
                            snprintf(where, sizeof where,
                                     "%s k %a x %s%a: code 0x%x, want 0x%x", dtcast_variant_name(vs[vi]),
                                     (double)k[s], h ? "-" : "", (double)f32(u << 16), got, want);
                    }
            }
        }
    }
    CHECK(bad == 0, "threshold tables: every bfloat16 |x| x the factors, each NVFP4 element step",
          "%zu of %zu differ, first %s", bad, checked, where);
    printf("threshold tables: %zu codes compared with dtcast_convert\n", checked);
    free(v);
    free(codes);
}

/* The fused kernels against the simple path: every element type, scale mode, NVFP4 variant and
 * block FP8 variant they take, from float32 and bfloat16, on tensors of edge blocks (edge_block)
 * and random ones; shapes with chunk tails (rows past 2048 elements), odd NVFP4 block counts,
 * short block FP8 tiles. Each case first checks that the fused path is the one taken (AVX2). */
static void fused_quantize(void)
{
    const bool avx2 = dt_isa_active() >= DT_ISA_AVX2;
    static const dtcast_type xts[] = {DTCAST_FLOAT32, DTCAST_BFLOAT16};
    static const struct {
        dtcast_type el;
        int m, emin, emax;
        float max;
    } mx_el[] = {{DTCAST_FLOAT8E4M3FN, 3, -6, 8, 448.0f},  {DTCAST_FLOAT8E5M2, 2, -14, 15, 57344.0f},
                 {DTCAST_FLOAT6E3M2FN, 2, -2, 4, 28.0f},   {DTCAST_FLOAT6E2M3FN, 3, 0, 2, 7.5f},
                 {DTCAST_FLOAT4E2M1, 1, 0, 2, 6.0f},       {DTCAST_INT8, -1, 0, 0, 127.0f / 64.0f}};
    static const dtcast_scale_mode modes[] = {DTCAST_SCALE_FLOOR, DTCAST_SCALE_CEIL,
                                              DTCAST_SCALE_EVEN, DTCAST_SCALE_RCEIL};
    static const int64_t mshape[][3] = {{5, 96, 0}, {3, 4128, 0}, {2, 3, 64}};
    edge_fill = true;
    for (size_t x = 0; x < 2; x++)
        for (size_t e = 0; e < 6; e++)
            for (size_t md = 0; md < 4; md++)
                for (int packed = 0; packed < 2; packed++) {
                    if (packed && mx_el[e].el != DTCAST_FLOAT6E3M2FN &&
                        mx_el[e].el != DTCAST_FLOAT6E2M3FN)
                        continue;
                    grid.m = mx_el[e].m, grid.emin = mx_el[e].emin, grid.emax = mx_el[e].emax;
                    grid.max = mx_el[e].max;
                    for (size_t si = 0; si < 3; si++) {
                        dtcast_quant_params p;
                        dtcast_quant_params_init(&p);
                        p.scheme = DTCAST_SCHEME_MX;
                        p.element = mx_el[e].el;
                        p.scale_mode = modes[md];
                        p.float6_packed = packed;
                        char name[128];
                        snprintf(name, sizeof name, "fused mx %s %s%s", tn(mx_el[e].el),
                                 dtcast_scale_mode_name(modes[md]), packed ? " packed" : "");
                        const int nd = si == 2 ? 3 : 2;
                        CHECK(!avx2 || fused_taken(&p, xts[x], nd, mshape[si]), name, "%s",
                              "the fused path is not taken");
                        compare(name, &p, xts[x], nd, mshape[si], true);
                    }
                }
    /* NVFP4: float4e2m1's grid; rows of 6 and 257 blocks, a chunk tail */
    grid.m = 1, grid.emin = 0, grid.emax = 2, grid.max = 6.0f;
    static const int64_t nshape[][3] = {{7, 96, 0}, {3, 2, 4112}, {1, 16, 0}, {5, 2064, 0}};
    for (size_t x = 0; x < 2; x++)
        for (int v = 0; v < 4; v++)
            for (size_t si = 0; si < 8; si++) { /* with NaN/Inf blocks, then without (the chunks
                                                 * without take the clean kernels) */
                dtcast_quant_params p = nvfp4_params(v);
                char name[128];
                snprintf(name, sizeof name, "fused nvfp4 %s%s%s", dtcast_variant_name(p.variant),
                         p.single_level ? " single_level" : "", si < 4 ? " nan/inf" : "");
                const int nd = si % 4 == 1 ? 3 : 2;
                CHECK(!avx2 || fused_taken(&p, xts[x], nd, nshape[si % 4]), name, "%s",
                      "the fused path is not taken");
                compare(name, &p, xts[x], nd, nshape[si % 4], si < 4);
                if (x == 1 && si % 4 == 3) { /* 2^14 blocks: the codes by thresholds */
                    static const int64_t big[2] = {64, 4096};
                    snprintf(name, sizeof name, "fused nvfp4 %s%s%s, by thresholds",
                             dtcast_variant_name(p.variant), p.single_level ? " single_level" : "",
                             si < 4 ? " nan/inf" : "");
                    CHECK(!avx2 || thresholds_taken(&p), name, "%s",
                          "the threshold kernel is not taken");
                    /* without NaN/Inf, a tensor amax about 2^20: block factors of 1 to 2^22
                     * (with the huge blocks, 2^100 and more) */
                    edge_moderate = si >= 4;
                    compare(name, &p, xts[x], 2, big, si < 4);
                    edge_moderate = false;
                }
            }
    /* block FP8: float8e4m3fn's grid; short edge tiles (200 = 128 + 72 columns, 300 rows), a
     * tile of 129 columns, rows of 34 tiles (chunks of 2048 and a tail) */
    grid.m = 3, grid.emin = -6, grid.emax = 8, grid.max = 448.0f;
    static const int64_t fshape[][3] = {{300, 200, 0}, {2, 130, 257}, {130, 4352, 0}, {1, 5, 0}};
    for (size_t x = 0; x < 2; x++)
        for (int v = 0; v < 3; v++)
            for (size_t si = 0; si < 8; si++) {
                dtcast_quant_params p;
                dtcast_quant_params_init(&p);
                p.scheme = DTCAST_SCHEME_FP8_BLOCK;
                p.variant = v ? DTCAST_VARIANT_DEEPSEEK_ACT : DTCAST_VARIANT_HF;
                p.ue8m0 = v == 2;
                char name[128];
                snprintf(name, sizeof name, "fused fp8-block %s%s%s", v ? "deepseek-act" : "hf",
                         v == 2 ? " ue8m0" : "", si < 4 ? " nan/inf" : "");
                const int nd = si % 4 == 1 ? 3 : 2;
                CHECK(!avx2 || fused_taken(&p, xts[x], nd, fshape[si % 4]), name, "%s",
                      "the fused path is not taken");
                compare(name, &p, xts[x], nd, fshape[si % 4], si < 4);
            }
    /* tiles of 32 (136 to a row: more than one batch of accumulators) and of 16 (row by row) */
    static const int64_t tshape[2] = {40, 4352};
    for (size_t x = 0; x < 2; x++)
        for (int b = 16; b <= 32; b += 16)
            for (int nan = 0; nan < 2; nan++) {
                dtcast_quant_params p;
                dtcast_quant_params_init(&p);
                p.scheme = DTCAST_SCHEME_FP8_BLOCK;
                p.block = b;
                p.block_rows = 8;
                char name[128];
                snprintf(name, sizeof name, "fused fp8-block hf tiles 8x%d%s", b, nan ? " nan/inf" : "");
                CHECK(!avx2 || fused_taken(&p, xts[x], 2, tshape), name, "%s",
                      "the fused path is not taken");
                compare(name, &p, xts[x], 2, tshape, nan);
            }
    edge_fill = false;
}

/* Stochastic element rounding: the same bytes for every chunking and thread count (the draw of
 * element i depends on i alone), and different seeds give different codes. */
static void stochastic(void)
{
    static const int64_t shape[3] = {6, 4, 256};
    static const struct {
        dtcast_scheme s;
        dtcast_variant v;
        dtcast_type e;
    } cases[] = {
        {DTCAST_SCHEME_MX, DTCAST_VARIANT_DEFAULT, DTCAST_FLOAT8E4M3FN},
        {DTCAST_SCHEME_MX, DTCAST_VARIANT_DEFAULT, DTCAST_FLOAT4E2M1},
        {DTCAST_SCHEME_MX, DTCAST_VARIANT_DEFAULT, DTCAST_FLOAT6E2M3FN},
        {DTCAST_SCHEME_MX, DTCAST_VARIANT_DEFAULT, DTCAST_INT8},
        {DTCAST_SCHEME_NVFP4, DTCAST_VARIANT_MODELOPT, DTCAST_FLOAT4E2M1},
        {DTCAST_SCHEME_NVFP4, DTCAST_VARIANT_TORCHAO, DTCAST_FLOAT4E2M1},
        {DTCAST_SCHEME_FP8_BLOCK, DTCAST_VARIANT_HF, DTCAST_FLOAT8E4M3FN},
        {DTCAST_SCHEME_FP8_BLOCK, DTCAST_VARIANT_DEEPSEEK_ACT, DTCAST_FLOAT8E4M3FN},
        {DTCAST_SCHEME_ABSMAX, DTCAST_VARIANT_CT, DTCAST_INT8},
        {DTCAST_SCHEME_ABSMAX, DTCAST_VARIANT_CT, DTCAST_INT4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int axis = -1; axis >= -2; axis--) {
            if (axis == -2 && cases[i].s != DTCAST_SCHEME_MX)
                continue;
            dtcast_quant_params p;
            dtcast_quant_params_init(&p);
            p.scheme = cases[i].s;
            p.variant = cases[i].v;
            p.element = cases[i].e;
            p.round = DTCAST_ROUND_STOCHASTIC;
            p.seed = 42 + i;
            p.axis = axis;
            char name[128];
            snprintf(name, sizeof name, "stochastic %s %s %s axis %d", dtcast_scheme_name(p.scheme),
                     dtcast_variant_name(p.variant), tn(p.element), axis);
            compare(name, &p, DTCAST_FLOAT32, 3, shape, false);
            /* seeds matter */
            float *x = fill(DTCAST_FLOAT32, 6 * 4 * 256, false, false);
            dtcast_tensor t = {x, 6 * 4 * 256 * 4, DTCAST_FLOAT32, 3, {6, 4, 256}};
            result a, b;
            quantize(&a, &t, &p);
            p.seed = 7;
            quantize(&b, &t, &p);
            CHECK(a.st == DTCAST_OK && b.st == DTCAST_OK && memcmp(a.codes, b.codes, a.cb) != 0,
                  name, "two seeds gave the same codes (or failed: %s)", a.msg);
            result_free(&a);
            result_free(&b);
            free(x);
        }
}

/* Hand-computed answers from docs/quantization.md's formulas (independent of the code paths above). */
static void q1(const char *name, dtcast_quant_params *p, const float *x, int64_t n,
               const uint8_t *codes, size_t ncodes, const uint8_t *scales, size_t nscales)
{
    dtcast_tensor t = {(void *)(uintptr_t)x, (size_t)n * 4, DTCAST_FLOAT32, 1, {n}};
    result r;
    quantize(&r, &t, p);
    bool ok = r.st == DTCAST_OK && r.cb == ncodes && r.sb == nscales &&
              memcmp(r.codes, codes, ncodes) == 0 && memcmp(r.scales, scales, nscales) == 0;
    CHECK(ok, name, "status %d (%s), codes %02x %02x.., scales %02x %02x %02x %02x", (int)r.st,
          r.st ? r.msg : "", r.codes ? r.codes[0] : 0, r.codes && ncodes > 1 ? r.codes[1] : 0,
          r.scales ? r.scales[0] : 0, r.scales && nscales > 1 ? r.scales[1] : 0,
          r.scales && nscales > 2 ? r.scales[2] : 0, r.scales && nscales > 3 ? r.scales[3] : 0);
    result_free(&r);
}

static void known(void)
{
    float x[32];
    uint8_t c[32], sc[8];
    dtcast_quant_params p;
    /* mxfp4 floor: amax 7 -> u = 2 - 2 = 0, b = 127; 7 saturates to 6 (0x7) */
    memset(x, 0, sizeof x);
    x[0] = 7.0f;
    x[1] = -1.5f;
    dtcast_quant_params_init(&p);
    dtcast_quant_params_from_recipe(&p, "mxfp4", NULL);
    memset(c, 0, sizeof c);
    c[0] = 0x7 | 0xB << 4; /* 6, -1.5 */
    sc[0] = 127;
    q1("known mxfp4 floor amax 7", &p, x, 32, c, 16, sc, 1);
    /* rceil: d = fl32(7 * fl32(1/6)) = 1.1666.. -> b = 128; 7/2 = 3.5 ties to even 4 (0x6),
     * -1.5/2 = -0.75 ties to even -1.0 (0xA) */
    p.scale_mode = DTCAST_SCALE_RCEIL;
    c[0] = 0x6 | 0xA << 4;
    sc[0] = 128;
    q1("known mxfp4 rceil amax 7", &p, x, 32, c, 16, sc, 1);
    /* rna: -0.75 -> -1.0 as well, 3.5 -> 4 */
    p.round = DTCAST_ROUND_RNA;
    q1("known mxfp4 rceil rna", &p, x, 32, c, 16, sc, 1);
    /* mxfp8 floor vs log2 at amax 8(1 - 2^-24): floor u = 2 - 8 -> b 121; log2 rounds up to 3
     * -> b 122. The element 8(1-2^-24) * 2^6 -> 512 -> saturates to 448 (0x7E) under floor;
     * under log2 * 2^5 = 256 (0x78) */
    memset(x, 0, sizeof x);
    x[0] = 8.0f * (1.0f - 0x1p-24f);
    dtcast_quant_params_init(&p);
    memset(c, 0, sizeof c);
    c[0] = 0x7E;
    sc[0] = 121;
    q1("known mxfp8 floor below 8", &p, x, 32, c, 32, sc, 1);
    p.scale_mode = DTCAST_SCALE_LOG2;
    c[0] = 0x78;
    sc[0] = 122;
    q1("known mxfp8 log2 below 8", &p, x, 32, c, 32, sc, 1);
    /* all-zero block: b 0 (log2: MXINT8 b 1); NaN block: 0xFF and NaN codes 0x7F */
    float z[64];
    memset(z, 0, sizeof z);
    z[40] = NAN;
    dtcast_quant_params_init(&p);
    uint8_t c2[64];
    memset(c2, 0, sizeof c2);
    memset(c2 + 32, 0x7F, 32);
    const uint8_t s2[2] = {0, 0xFF};
    q1("known mxfp8 zero and NaN blocks", &p, z, 64, c2, 64, s2, 2);
    z[40] = 0.0f;
    dtcast_quant_params_from_recipe(&p, "mxint8", NULL);
    p.scale_mode = DTCAST_SCALE_LOG2;
    memset(c2, 0, sizeof c2);
    const uint8_t s3[2] = {0, 0}; /* log2(0) = -Inf: the smallest scale, 0x00 */
    q1("known mxint8 log2 zero blocks", &p, z, 64, c2, 64, s3, 2);
    /* nvfp4, all-zero block next to a block of amax 6: modelopt S 1.0 (0x38), torchao 2^-6
     * (0x08), ct 0 -> 0.125 (0x20). Block 1: modelopt g = 6/2688, S = e4m3(6 / fl32(6 g)) =
     * 448 (0x7E); its element 6 -> 6 / fl32(448 g) = 6 (0x7) */
    memset(x, 0, sizeof x);
    x[16] = 6.0f;
    dtcast_quant_params_init(&p);
    dtcast_quant_params_from_recipe(&p, "nvfp4", NULL);
    memset(c, 0, sizeof c);
    c[8] = 0x7;
    const uint8_t n1[2] = {0x38, 0x7E}, n2[2] = {0x08, 0x7E}, n3[2] = {0x20, 0x7E};
    q1("known nvfp4 modelopt zero block", &p, x, 32, c, 16, n1, 2);
    p.variant = DTCAST_VARIANT_TORCHAO;
    q1("known nvfp4 torchao zero block", &p, x, 32, c, 16, n2, 2);
    p.variant = DTCAST_VARIANT_CT;
    q1("known nvfp4 ct zero block", &p, x, 32, c, 16, n3, 2);
    /* fp8-block hf: amax 448 -> qs 1, s 1.0; deepseek-act all-zero block: s = fl32(1e-4f/448) */
    float w[2] = {448.0f, -3.0f};
    dtcast_quant_params_init(&p);
    dtcast_quant_params_from_recipe(&p, "fp8-block", NULL);
    const uint8_t wc[2] = {0x7E, 0xC4}; /* 448, -3 */
    float one = 1.0f;
    uint8_t sb[4];
    memcpy(sb, &one, 4);
    q1("known fp8-block hf amax 448", &p, w, 2, wc, 2, sb, 4);
    float zz[2] = {0.0f, 0.0f};
    p.variant = DTCAST_VARIANT_DEEPSEEK_ACT;
    p.block = 0, p.block_rows = 0;
    volatile float e4 = 1e-4f;
    float s_act = e4 / 448.0f;
    memcpy(sb, &s_act, 4);
    const uint8_t zc[2] = {0, 0};
    q1("known fp8-block deepseek-act zero block", &p, zz, 2, zc, 2, sb, 4);
    /* ue8m0: amax 1 -> s = 1/448 rounded up to 2^-8 */
    float o1[2] = {1.0f, 0.0f};
    p.ue8m0 = true;
    float s8 = 0x1p-8f;
    memcpy(sb, &s8, 4);
    const uint8_t oc2[2] = {0x78, 0}; /* 1 / 2^-8 = 256 = 2^8: e4m3 0x78 */
    q1("known fp8-block deepseek-act ue8m0", &p, o1, 2, oc2, 2, sb, 4);
    /* absmax int8 per tensor: amax 127.5 -> scale 1.0; 127.5 -> 127 (clamp), -127.5 -> -128 */
    float a8[3] = {127.5f, -127.5f, 2.5f};
    dtcast_quant_params_init(&p);
    dtcast_quant_params_from_recipe(&p, "int8-tensor", NULL);
    const uint8_t ac[3] = {127, 0x80, 2};
    memcpy(sb, &one, 4);
    q1("known int8-tensor amax 127.5", &p, a8, 3, ac, 3, sb, 4);
}

/* Outputs large enough to take the streaming stores (codes >= 4 MiB, float32 output >= 16 MiB) */
static void large(void)
{
    static const int64_t shape[2] = {1024, 4608};
    dtcast_quant_params p;
    dtcast_quant_params_init(&p);
    compare("large mx float8e4m3fn (streaming)", &p, DTCAST_FLOAT32, 2, shape, true);
    dtcast_quant_params_from_recipe(&p, "fp8-block", NULL);
    compare("large fp8-block (streaming)", &p, DTCAST_BFLOAT16, 2, shape, false);
}

/* ---- the fused dequantize kernels (src/quant/fused_dequant_avx2.c) ---------------------------- */

/* Dequantizes c / s / g into `out` on the fast path (which takes the fused kernel where it
 * applies), the output `off` bytes past a 64-byte boundary, streaming stores forced or not, and
 * compares with y1, the simple path's output (yb bytes); the guard bytes around y must be
 * untouched. A NaN x NaN product is the first operand's NaN on every path (dt_mul_nan_first). */
static bool dq_same(const char *label, const dtcast_quant_params *p, dtcast_type out,
                    const dtcast_tensor *c, const dtcast_tensor *s, const dtcast_tensor *g,
                    const uint8_t *y1, size_t yb, size_t off, bool stream)
{
    uint8_t *b2 = malloc(yb + 192);
    uint8_t *y2 = b2 + (64 - (uintptr_t)b2 % 64) + off;
    memset(b2, 0x5A, yb + 192);
    dtcast_tensor t2 = {y2, yb, out, 0, {0}};
    dtcast_error e;
    dt_stream_threshold_set(stream ? 1 : 0);
    const dtcast_status s2 = dtcast_dequantize(&t2, c, s, g, p, &e);
    dt_stream_threshold_set(0);
    bool ok = s2 == DTCAST_OK;
    if (!ok)
        CHECK(0, label, "dequantize failed: %s", e.message);
    const size_t w = out == DTCAST_BFLOAT16 ? 2 : 4;
    for (size_t i = 0; ok && i < yb; i += w)
        if (memcmp(y1 + i, y2 + i, w) != 0) {
            uint32_t a = 0, b = 0;
            memcpy(&a, y1 + i, w);
            memcpy(&b, y2 + i, w);
            CHECK(0, label, "element %zu: 0x%0*x, simple 0x%0*x", i / w, (int)w * 2, b,
                  (int)w * 2, a);
            ok = false;
        }
    for (size_t i = 0; ok && i < yb + 192; i++)
        if ((b2 + i < y2 || b2 + i >= y2 + yb) && b2[i] != 0x5A) {
            CHECK(0, label, "wrote outside y (byte %zd)", (ptrdiff_t)(b2 + i - y2));
            ok = false;
        }
    free(b2);
    return ok;
}

/* Every output placement the fused kernel distinguishes: ordinary stores at two offsets,
 * streaming to a y 32-byte aligned, 16 bytes past, and not 16-byte aligned (which it declines);
 * each against the simple path's output, made once per output type. */
static bool dq_all_outputs(const char *label, const dtcast_quant_params *p, const dtcast_tensor *c,
                           const dtcast_tensor *s, const dtcast_tensor *g, int *runs)
{
    static const dtcast_type outs[] = {DTCAST_BFLOAT16, DTCAST_FLOAT32};
    static const struct {
        size_t off;
        bool stream;
    } places[] = {{0, false}, {2, false}, {0, true}, {16, true}, {4, true}};
    size_t n = 1;
    for (int d = 0; d < c->ndim; d++)
        n *= (size_t)c->shape[d];
    bool ok = true;
    for (size_t o = 0; o < 2; o++) {
        size_t yb;
        dtcast_storage_size(outs[o], n, &yb, NULL);
        uint8_t *b1 = malloc(yb + 64), *y1 = b1 + (64 - (uintptr_t)b1 % 64);
        memset(b1, 0x11, yb + 64);
        dtcast_tensor t1 = {y1, yb, outs[o], 0, {0}};
        dtcast_error e;
        dt_quant_simple_set(true);
        const dtcast_status s1 = dtcast_dequantize(&t1, c, s, g, p, &e);
        dt_quant_simple_set(false);
        for (size_t k = 0; k < sizeof places / sizeof places[0]; k++) {
            char name[200];
            snprintf(name, sizeof name, "%s to %s (+%zu%s)", label, tn(outs[o]), places[k].off,
                     places[k].stream ? " streamed" : "");
            if (s1 != DTCAST_OK) {
                CHECK(0, name, "simple dequantize failed: %s", e.message);
                ok = false;
            } else {
                ok = dq_same(name, p, outs[o], c, s, g, y1, yb, places[k].off, places[k].stream) &&
                     ok;
            }
            ++*runs;
        }
        free(b1);
    }
    return ok;
}

/* float32 factors with the edges of the folded multiply: ±0, ties of bfloat16 after a multiply,
 * NaN canonical and with payloads, ±Inf, subnormals, the largest finite, 2^120 (× 2^8
 * overflows: the unfused steps) and 2^119, products underflowing to bfloat16 subnormals */
static const uint32_t edge_factors[] = {
    0x00000000u, 0x80000000u, 0x3F800000u, 0x3F808000u, 0x3F818000u, 0x7FC00000u, 0xFFC00000u,
    0x7FA00001u, 0xFFF00000u, 0x7F800000u, 0xFF800000u, 0x00000001u, 0x00800000u, 0x7F7FFFFFu,
    0x7B800000u, 0x7B000000u, 0x0DA24260u, 0x01000000u, 0xC0200000u, 0x3B808081u, 0x00400000u,
    0x46000000u,
};
#define EDGE_FACTORS (sizeof edge_factors / sizeof edge_factors[0])

/* codes: every code value in every block position against every scale; `no_nan`: the float8 NaN
 * codes replaced (blocks without NaN take the kernel's fast steps) */
static uint8_t code_at(size_t i, int bits, bool no_nan)
{
    const unsigned c = (unsigned)(i % (bits == 4 ? 16 : 256));
    return (uint8_t)(no_nan ? c & 0xFA : c);
}

static void fused_dequantize(void)
{
    int runs = 0;
    bool ok = true;
    /* MX: [256, 256] codes (every byte value in each row; float4: every nibble), block j of row
     * r scaled by byte (r + 37 j) & 255: every code against every scale byte (0x00, 0x01, 0x7F,
     * 0xFE, 0xFF among them) */
    static const dtcast_type mx_el[] = {DTCAST_FLOAT8E4M3FN, DTCAST_FLOAT8E5M2,
                                        DTCAST_FLOAT6E3M2FN, DTCAST_FLOAT6E2M3FN,
                                        DTCAST_FLOAT4E2M1,   DTCAST_INT8};
    for (size_t e = 0; e < 6; e++)
        for (int blk = 32; blk <= 48; blk += 16)
            for (int nn = 0; nn < 2; nn++) {
                const bool f8 = e < 2;
                if (nn && !f8)
                    continue;
                const int bits = mx_el[e] == DTCAST_FLOAT4E2M1 ? 4 : 8;
                const size_t R = 256, K = blk == 32 ? 256 : 288, nb = K / (size_t)blk;
                uint8_t *codes = calloc(R * K, 1), *sc = malloc(R * nb);
                for (size_t r = 0; r < R; r++) {
                    for (size_t i = 0; i < K; i++) {
                        const uint8_t v = code_at(i + r * (blk == 48), bits, nn);
                        if (bits == 4)
                            codes[(r * K + i) / 2] |= (uint8_t)(v << (i % 2 * 4));
                        else
                            codes[r * K + i] = v;
                    }
                    for (size_t j = 0; j < nb; j++)
                        sc[r * nb + j] = (uint8_t)((r + 37 * j) & 255);
                }
                dtcast_quant_params p;
                dtcast_quant_params_init(&p);
                p.scheme = DTCAST_SCHEME_MX;
                p.element = mx_el[e];
                p.block = blk;
                p.threads = blk == 48 ? 3 : 1; /* ranges of blocks on threads */
                dtcast_tensor c = {codes, R * K * (size_t)bits / 8, mx_el[e], 2, {(int64_t)R, (int64_t)K}};
                dtcast_tensor s = {sc, R * nb, DTCAST_FLOAT8E8M0, 2, {(int64_t)R, (int64_t)nb}};
                char label[160];
                snprintf(label, sizeof label, "fused mx %s block %d threads %u, all codes x all scales%s",
                         tn(mx_el[e]), blk, p.threads, nn ? " (no NaN codes)" : "");
                ok = dq_all_outputs(label, &p, &c, &s, NULL, &runs) && ok;
                free(codes);
                free(sc);
            }
    /* NVFP4: [256, 256] codes, every nibble in each block, block j of row r with scale code
     * (r + 37 j) & 255 (NaN 0x7F / 0xFF, subnormals 0x01..0x07 among them), each variant with
     * the edge globals */
    {
        const size_t R = 256, K = 256, nb = K / 16;
        uint8_t *codes = calloc(R * K / 2, 1), *sc = malloc(R * nb);
        for (size_t r = 0; r < R; r++) {
            for (size_t i = 0; i < K; i++)
                codes[(r * K + i) / 2] |= (uint8_t)(code_at(i, 4, false) << (i % 2 * 4));
            for (size_t j = 0; j < nb; j++)
                sc[r * nb + j] = (uint8_t)((r + 37 * j) & 255);
        }
        dtcast_tensor c = {codes, R * K / 2, DTCAST_FLOAT4E2M1, 2, {(int64_t)R, (int64_t)K}};
        dtcast_tensor s = {sc, R * nb, DTCAST_FLOAT8E4M3FN, 2, {(int64_t)R, (int64_t)nb}};
        for (int v = 0; v < 4; v++)
            for (size_t gi = 0; gi < (v == 2 ? 1 : EDGE_FACTORS); gi++) {
                dtcast_quant_params p = nvfp4_params(v);
                p.threads = v == 3 ? 2 : 1;
                float gv = f32(edge_factors[gi]);
                dtcast_tensor g = {&gv, 4, DTCAST_FLOAT32, 1, {1}};
                char label[160];
                snprintf(label, sizeof label, "fused nvfp4 %s%s global 0x%08x, all codes x all scales",
                         dtcast_variant_name(p.variant), p.single_level ? " single_level" : "",
                         edge_factors[gi]);
                ok = dq_all_outputs(label, &p, &c, &s, v == 2 ? NULL : &g, &runs) && ok;
            }
        free(codes);
        free(sc);
    }
    /* block FP8: rows of every code, tile t of row r with factor edge_factors[(r + 3 t) % n]
     * (one row per tile row); tiles of 128 and 16; rows of 200 (tiles the kernel declines) */
    static const int64_t fk[][2] = {{128, 256}, {16, 256}, {128, 200}};
    for (int v = 0; v < 2; v++)
        for (size_t k = 0; k < 3; k++)
            for (int nn = 0; nn < 2; nn++) {
                const size_t R = EDGE_FACTORS * 2, C = (size_t)fk[k][0], K = (size_t)fk[k][1];
                const size_t nt = (K + C - 1) / C;
                uint8_t *codes = malloc(R * K);
                float *sc = malloc(R * nt * sizeof(float));
                for (size_t r = 0; r < R; r++) {
                    for (size_t i = 0; i < K; i++)
                        codes[r * K + i] = code_at(i + r, 8, nn);
                    for (size_t t = 0; t < nt; t++)
                        sc[r * nt + t] = f32(edge_factors[(r + 3 * t) % EDGE_FACTORS]);
                }
                dtcast_quant_params p;
                dtcast_quant_params_init(&p);
                p.scheme = DTCAST_SCHEME_FP8_BLOCK;
                p.variant = v ? DTCAST_VARIANT_DEEPSEEK_ACT : DTCAST_VARIANT_HF;
                p.block = (int)C;
                p.block_rows = 1;
                p.threads = v ? 2 : 1;
                dtcast_tensor c = {codes, R * K, DTCAST_FLOAT8E4M3FN, 2, {(int64_t)R, (int64_t)K}};
                dtcast_tensor s = {sc, R * nt * 4, DTCAST_FLOAT32, 2, {(int64_t)R, (int64_t)nt}};
                char label[160];
                snprintf(label, sizeof label, "fused fp8-block %s tiles 1x%zu rows %zu, all codes x edge factors%s",
                         v ? "deepseek-act" : "hf", C, K, nn ? " (no NaN codes)" : "");
                ok = dq_all_outputs(label, &p, &c, &s, NULL, &runs) && ok;
                free(codes);
                free(sc);
            }
    CHECK(ok, "fused dequantize: every code x scale edge, bfloat16 and float32, every output placement",
          "%d dequantizations compared", runs);
    printf("fused dequantize: %d dequantizations compared with the simple path\n", runs);
}

/* Bad input: a clear error naming the problem, outputs untouched. */
static void errors(void)
{
    float x[40] = {1.0f};
    uint8_t codes[64], scales[8];
    dtcast_tensor t = {x, sizeof x, DTCAST_FLOAT32, 2, {2, 20}};
    static const struct {
        const char *name;
        int field;
        long value;
        const char *needle;
    } cases[] = {
        {"error nvfp4 last axis 20", 0, DTCAST_SCHEME_NVFP4, "multiple of 16"},
        {"error variant of another scheme", 1, DTCAST_VARIANT_HF, "does not belong"},
        {"error element not of the scheme", 2, DTCAST_INT4, "not one of scheme"},
        {"error reject_short", 3, 1, "reject_short"},
        {"error axis outside", 4, 2, "axis 2"},
        {"error rna outside mx", 5, DTCAST_ROUND_RNA, "rna"},
        {"error codes too small", 6, 0, "codes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dtcast_quant_params p;
        dtcast_quant_params_init(&p);
        size_t room = sizeof codes;
        switch (cases[i].field) {
        case 0: p.scheme = (dtcast_scheme)cases[i].value; break;
        case 1: p.variant = (dtcast_variant)cases[i].value; break;
        case 2: p.element = (dtcast_type)cases[i].value; break;
        case 3: p.reject_short = true; break;
        case 4: p.axis = (int)cases[i].value; break;
        case 5: p.scheme = DTCAST_SCHEME_FP8_BLOCK, p.round = (dtcast_round)cases[i].value; break;
        default: room = 10; break;
        }
        memset(codes, 0xA5, sizeof codes);
        memset(scales, 0xA5, sizeof scales);
        dtcast_tensor c = {codes, room, 0, 0, {0}}, s = {scales, sizeof scales, 0, 0, {0}};
        float g = 0;
        dtcast_tensor gt = {&g, 4, 0, 0, {0}};
        dtcast_error e;
        memset(&e, 0, sizeof e);
        const dtcast_status st = dtcast_quantize(&c, &s, &gt, &t, &p, &e);
        bool untouched = true;
        for (size_t k = 0; k < sizeof codes; k++)
            untouched = untouched && codes[k] == 0xA5;
        for (size_t k = 0; k < sizeof scales; k++)
            untouched = untouched && scales[k] == 0xA5;
        CHECK(st != DTCAST_OK && strstr(e.message, cases[i].needle) && untouched, cases[i].name,
              "status %d, message \"%s\", outputs untouched %d", (int)st, e.message, untouched);
    }
    /* the params struct: not initialised, newer with unknown bytes set, older (shorter) */
    unsigned char big[sizeof(dtcast_quant_params) + 16];
    memset(big, 0, sizeof big);
    dtcast_quant_params_init_sized((dtcast_quant_params *)(void *)big, sizeof big);
    dtcast_tensor c = {codes, sizeof codes, 0, 0, {0}}, s = {scales, sizeof scales, 0, 0, {0}};
    dtcast_error e;
    CHECK(dtcast_quantize(&c, &s, NULL, &t, (dtcast_quant_params *)(void *)big, &e) == DTCAST_OK,
          "params newer, unknown bytes zero", "%s", e.message);
    big[sizeof(dtcast_quant_params) + 3] = 1;
    CHECK(dtcast_quantize(&c, &s, NULL, &t, (dtcast_quant_params *)(void *)big, &e) ==
                  DTCAST_ERR_INVALID_ARGUMENT && strstr(e.message, "newer"),
          "params newer, unknown byte set", "%s", e.message);
    dtcast_quant_params p;
    memset(&p, 0, sizeof p);
    CHECK(dtcast_quantize(&c, &s, NULL, &t, &p, &e) == DTCAST_ERR_INVALID_ARGUMENT &&
              strstr(e.message, "not initialised"),
          "params not initialised", "%s", e.message);
    /* names both ways, recipes */
    static const char *const recipes[] = {"mxfp8", "mxfp8-e5m2", "mxfp6-e2m3", "mxfp6-e3m2",
                                          "mxfp4", "mxint8", "nvfp4", "fp8-block", "fp8-channel",
                                          "fp8-tensor", "int8-channel", "int8-tensor",
                                          "int4-group", "fp4-group", "mx", "absmax"};
    bool ok = true;
    for (size_t i = 0; i < sizeof recipes / sizeof recipes[0]; i++) {
        dtcast_quant_params_init(&p);
        ok = ok && dtcast_quant_params_from_recipe(&p, recipes[i], NULL) == DTCAST_OK;
    }
    CHECK(ok && dtcast_quant_params_from_recipe(&p, "mxfp3", &e) != DTCAST_OK &&
              strstr(e.message, "mxfp3"),
          "recipes", "%s", e.message);
    ok = true;
    for (int v = 0; v <= DTCAST_SCHEME_ABSMAX; v++) {
        dtcast_scheme x2;
        const char *nm = dtcast_scheme_name((dtcast_scheme)v);
        ok = ok && (v == 0 ? nm == NULL
                           : nm && dtcast_scheme_from_name(nm, &x2, NULL) == DTCAST_OK && (int)x2 == v);
    }
    for (int v = 0; v <= DTCAST_VARIANT_DEEPSEEK_ACT; v++) {
        dtcast_variant x2;
        const char *nm = dtcast_variant_name((dtcast_variant)v);
        ok = ok && nm && dtcast_variant_from_name(nm, &x2, NULL) == DTCAST_OK && (int)x2 == v;
    }
    for (int v = 0; v <= DTCAST_SCALE_LOG2; v++) {
        dtcast_scale_mode x2;
        const char *nm = dtcast_scale_mode_name((dtcast_scale_mode)v);
        ok = ok && nm && dtcast_scale_mode_from_name(nm, &x2, NULL) == DTCAST_OK && (int)x2 == v;
    }
    dtcast_scale_mode m;
    CHECK(ok && dtcast_scale_mode_from_name("round", &m, &e) != DTCAST_OK, "names both ways",
          "%s", "a name did not round-trip");
}

int main(void)
{
    errors();
    known();
    fused_quantize();
    threshold_tables();
    large();
    sweep();
    fused_dequantize();
    stochastic();
    return CHECK_EXIT();
}
