/* ONNX QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear in C:
 *  - the fast paths (float32 <-> int8/uint8/float8, per tensor and per axis) give the bytes of
 *    the simple path, on every ISA the CPU has and on 1 and 3 threads, over random bit patterns
 *    (NaN, Inf, subnormals), values near every rounding tie, and edge scales (0, subnormal, huge,
 *    NaN, negative);
 *  - a few values worked out by hand from docs/onnx.md's rules (rint ties to even, NaN -> the
 *    minimum, +Inf -> the maximum, DynamicQuantizeLinear's all-zero scale 1/255);
 *  - refusals: types and attributes an opset does not have, bad shapes and block sizes, a
 *    non-zero float8 zero point, NaN in DynamicQuantizeLinear; the output untouched on error.
 * The Python oracle tests (tests/python/test_onnx_qdq.py) check the values of every type. */
#include "check.h"
#include "internal.h"
#include "kernels/kernels.h"
#include "quant/onnx_qdq.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static float bits_f(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static float random_x(float s)
{
    switch (next32() % 6) {
    case 0: return bits_f(next32());                                  /* any pattern */
    case 1: return ((float)(int)(next32() % 600) - 300.0f) * s;       /* integers */
    case 2: return ((float)(int)(next32() % 600) - 300.0f + 0.5f) * s; /* ties */
    case 3: return ((float)(int)(next32() % 2000000) - 1000000.0f) * 1e-3f;
    case 4: return bits_f(next32() & 0x807FFFFFu);                     /* subnormals, zeros */
    default: return bits_f((next32() & 0x80FFFFFFu) | 0x3E000000u);     /* around 0.1 .. 1 */
    }
}

static const float edge_scales[] = {1.0f, 0.5f, 0.1f, 3.0f, -0.25f, 1e-40f, 3e38f, 0.0f,
                                    0x1p-20f, 7.0f / 3.0f};

static dtcast_tensor tensor(void *data, size_t bytes, dtcast_type t, int ndim, const int64_t *shape)
{
    dtcast_tensor x;
    memset(&x, 0, sizeof x);
    x.data = data;
    x.bytes = bytes;
    x.type = t;
    x.ndim = ndim;
    for (int d = 0; d < ndim; d++)
        x.shape[d] = shape[d];
    return x;
}

static int isas[4], nisas;

/* Runs f with the fast paths off, then on every ISA x threads, comparing the bytes. */
typedef dtcast_status (*qdq_fn)(dtcast_tensor *, const dtcast_tensor *, const dtcast_tensor *,
                                const dtcast_tensor *, const dtcast_onnx_qdq_attrs *,
                                const dtcast_options *, dtcast_error *);

static int same_as_simple(qdq_fn f, const dtcast_tensor *x, const dtcast_tensor *s,
                          const dtcast_tensor *z, const dtcast_onnx_qdq_attrs *a, size_t ybytes,
                          char *why, size_t whysize)
{
    uint8_t *want = malloc(ybytes), *got = malloc(ybytes);
    dtcast_options o;
    dtcast_options_init(&o);
    o.threads = 1;
    dtcast_tensor y = tensor(want, ybytes, DTCAST_UNDEFINED, 0, NULL);
    dtcast_error e;
    int ok = 1;
    dt_qdq_fast_disable(true);
    if (f(&y, x, s, z, a, &o, &e) != DTCAST_OK) {
        snprintf(why, whysize, "simple path failed: %.200s", e.message);
        ok = 0;
    }
    dt_qdq_fast_disable(false);
    for (int i = 0; ok && i < nisas; i++) {
        dt_isa_pin(isas[i]);
        for (unsigned th = 1; ok && th <= 3; th += 2) {
            o.threads = th;
            memset(got, 0xA5, ybytes);
            dtcast_tensor g = tensor(got, ybytes, DTCAST_UNDEFINED, 0, NULL);
            if (f(&g, x, s, z, a, &o, &e) != DTCAST_OK) {
                snprintf(why, whysize, "failed: %.200s", e.message);
                ok = 0;
            } else if (memcmp(got, want, ybytes) != 0) {
                size_t k = 0;
                while (got[k] == want[k])
                    k++;
                snprintf(why, whysize, "isa %d threads %u: byte %zu is 0x%02x, simple 0x%02x",
                         isas[i], th, k, got[k], want[k]);
                ok = 0;
            }
        }
    }
    dt_isa_pin(-1);
    free(want);
    free(got);
    return ok;
}

static void fast_vs_simple(void)
{
    static const dtcast_type qtypes[] = {DTCAST_INT8, DTCAST_UINT8, DTCAST_FLOAT8E4M3FN,
                                         DTCAST_FLOAT8E4M3FNUZ, DTCAST_FLOAT8E5M2,
                                         DTCAST_FLOAT8E5M2FNUZ};
    /* shapes: per tensor [n]; per axis [3, 37, 41] along 1 (inner 41) and 2 (inner 1) */
    const int64_t shape3[3] = {3, 37, 41};
    const size_t n = 3 * 37 * 41;
    float *x = malloc(n * 4), *sc = malloc(41 * 4), *out = malloc(n * 4);
    uint8_t *zp = malloc(41), *codes = malloc(n);
    char name[128], why[256];
    for (size_t t = 0; t < sizeof qtypes / sizeof qtypes[0]; t++) {
        const dtcast_type yt = qtypes[t];
        const bool isint = yt == DTCAST_INT8 || yt == DTCAST_UINT8;
        for (int gran = 0; gran < 3; gran++) {
            for (int sat = 0; sat <= 1; sat++) {
                if (isint && sat == 0)
                    continue;
                for (int withzp = 0; withzp <= (isint ? 1 : 0); withzp++) {
                    int ok = 1;
                    for (int round = 0; ok && round < 12; round++) {
                        const int axis = gran == 2 ? 2 : 1;
                        const size_t ns = gran == 0 ? 1 : (size_t)shape3[axis];
                        for (size_t k = 0; k < ns; k++) {
                            sc[k] = round < 10 ? edge_scales[(round + k) % 10]
                                               : bits_f(next32() & 0x3FFFFFFFu);
                            if (round == 11 && k == 0)
                                sc[k] = bits_f(0x7FC00000u); /* NaN scale */
                            zp[k] = (uint8_t)next32();
                        }
                        for (size_t i = 0; i < n; i++)
                            x[i] = random_x(sc[gran == 0 ? 0 : gran == 1 ? (i / 41) % 37 : i % 41]);
                        dtcast_tensor X = tensor(x, n * 4, DTCAST_FLOAT32, gran == 0 ? 1 : 3,
                                                 gran == 0 ? (const int64_t[]){(int64_t)n} : shape3);
                        const int64_t sshape[1] = {(int64_t)ns};
                        dtcast_tensor S = tensor(sc, ns * 4, DTCAST_FLOAT32, gran == 0 ? 0 : 1, sshape);
                        dtcast_tensor Z = tensor(zp, ns, yt, gran == 0 ? 0 : 1, sshape);
                        dtcast_onnx_qdq_attrs a;
                        dtcast_onnx_qdq_attrs_init(&a);
                        a.axis = axis;
                        a.saturate = sat;
                        a.output_dtype = yt;
                        snprintf(name, sizeof name, "fast_q_%s_%s_sat%d%s",
                                 dtcast_type_name(yt), gran == 0 ? "tensor" : gran == 1 ? "axis1" : "axis2",
                                 sat, withzp ? "_zp" : "");
                        ok = same_as_simple(dtcast_onnx_quantize_linear, &X, &S,
                                            withzp ? &Z : NULL, &a, n, why, sizeof why);
                        /* and back: DequantizeLinear of random codes */
                        if (ok) {
                            for (size_t i = 0; i < n; i++)
                                codes[i] = (uint8_t)next32();
                            dtcast_tensor C = tensor(codes, n, yt, X.ndim, X.shape);
                            a.output_dtype = 0;
                            for (size_t k = 0; k < ns && !isint; k++)
                                zp[k] = 0;
                            ok = same_as_simple(dtcast_onnx_dequantize_linear, &C, &S,
                                                withzp ? &Z : NULL, &a, n * 4, why, sizeof why);
                            if (!ok)
                                strcat(name, "_dq");
                        }
                    }
                    CHECK(ok, name, "%s", why);
                }
            }
        }
    }
    (void)out;
    free(x);
    free(sc);
    free(out);
    free(zp);
    free(codes);
}

/* ---- values worked out by hand -------------------------------------------------------------- */

static void by_hand(void)
{
    const float x[8] = {0.0f, 1.5f, 2.5f, -1.0f, bits_f(0x7FC00000u), INFINITY, 300.0f, -INFINITY};
    float s = 1.0f;
    int8_t zp8 = 0;
    uint8_t y[8];
    const int64_t sh[1] = {8};
    dtcast_tensor X = tensor((void *)x, sizeof x, DTCAST_FLOAT32, 1, sh);
    dtcast_tensor S = tensor(&s, 4, DTCAST_FLOAT32, 0, NULL);
    dtcast_tensor Y = tensor(y, sizeof y, DTCAST_UNDEFINED, 0, NULL);
    dtcast_onnx_qdq_attrs a;
    dtcast_onnx_qdq_attrs_init(&a);
    dtcast_error e;
    /* uint8 (no zero point): rint ties to even, NaN -> 0, +Inf/300 -> 255, -Inf -> 0 */
    const uint8_t want_u8[8] = {0, 2, 2, 0, 0, 255, 255, 0};
    dtcast_status st = dtcast_onnx_quantize_linear(&Y, &X, &S, NULL, &a, NULL, &e);
    CHECK(st == DTCAST_OK && Y.type == DTCAST_UINT8 && memcmp(y, want_u8, 8) == 0, "hand_uint8",
          "status %d type %d y %u %u %u %u %u %u %u %u", st, Y.type, y[0], y[1], y[2], y[3], y[4],
          y[5], y[6], y[7]);
    /* int8 with zero point 0: NaN -> -128 */
    dtcast_tensor Z = tensor(&zp8, 1, DTCAST_INT8, 0, NULL);
    const int8_t want_i8[8] = {0, 2, 2, -1, -128, 127, 127, -128};
    st = dtcast_onnx_quantize_linear(&Y, &X, &S, &Z, &a, NULL, &e);
    CHECK(st == DTCAST_OK && Y.type == DTCAST_INT8 && memcmp(y, want_i8, 8) == 0, "hand_int8",
          "status %d", st);
    /* DynamicQuantizeLinear of zeros: scale fl32(1/255) = 0x3b808081, zero point 0 */
    float zeros[4] = {0, 0, -0.0f, 0};
    float ys;
    uint8_t yz = 99, yq[4];
    const int64_t sh4[1] = {4};
    dtcast_tensor DX = tensor(zeros, sizeof zeros, DTCAST_FLOAT32, 1, sh4);
    dtcast_tensor DY = tensor(yq, 4, 0, 0, NULL), DS = tensor(&ys, 4, 0, 0, NULL),
                  DZ = tensor(&yz, 1, 0, 0, NULL);
    st = dtcast_onnx_dynamic_quantize_linear(&DY, &DS, &DZ, &DX, NULL, &e);
    uint32_t sb;
    memcpy(&sb, &ys, 4);
    CHECK(st == DTCAST_OK && sb == 0x3b808081u && yz == 0 && yq[0] == 0 && yq[2] == 0,
          "hand_dynamic_all_zero", "status %d scale 0x%08x zp %u", st, sb, yz);
    /* x = [-1, 0, 2]: mx 2, mn -1, scale 3/255, zp rint(255/3) = 85; y = rint(x*85) + 85 */
    float d3[3] = {-1.0f, 0.0f, 2.0f};
    const int64_t sh3[1] = {3};
    DX = tensor(d3, sizeof d3, DTCAST_FLOAT32, 1, sh3);
    st = dtcast_onnx_dynamic_quantize_linear(&DY, &DS, &DZ, &DX, NULL, &e);
    CHECK(st == DTCAST_OK && yz == 85 && yq[0] == 0 && yq[1] == 85 && yq[2] == 255 &&
              ys == 3.0f / 255.0f,
          "hand_dynamic", "status %d zp %u y %u %u %u", st, yz, yq[0], yq[1], yq[2]);

    /* QuantizeLinear-28 to float6e3m2fn (code 28, also by its 1.0 code 106) with scale 0.5 and
     * zero point 1.0 (0x0C): q = x / 0.5 + 1. x = 0.25 -> 1.5 (0x0E); -3 -> -5 (0x35);
     * 13.5 -> 28 = max (0x1F); 20 -> 41, beyond max, saturates (0x1F); -100 -> 0x3F. Codes
     * worked out from the format (3 exponent bits, bias 3, 2 mantissa bits). */
    float q6x[5] = {0.25f, -3.0f, 13.5f, 20.0f, -100.0f}, half = 0.5f;
    uint8_t zp6 = 0x0C, y6[5] = {0};
    const int64_t sh5[1] = {5};
    dtcast_tensor QX = tensor(q6x, sizeof q6x, DTCAST_FLOAT32, 1, sh5),
                  QS = tensor(&half, 4, DTCAST_FLOAT32, 0, NULL),
                  QZ = tensor(&zp6, 1, (dtcast_type)106, 0, NULL), QY = tensor(y6, 5, 0, 0, NULL);
    a.opset = 28;
    st = dtcast_onnx_quantize_linear(&QY, &QX, &QS, &QZ, &a, NULL, &e);
    CHECK(st == DTCAST_OK && QY.type == 28 && y6[0] == 0x0E && y6[1] == 0x35 && y6[2] == 0x1F &&
              y6[3] == 0x1F && y6[4] == 0x3F,
          "hand_quantize_float6", "status %d type %d: %02x %02x %02x %02x %02x", st, QY.type,
          y6[0], y6[1], y6[2], y6[3], y6[4]);
    /* DequantizeLinear-28 back: (y - 1) * 0.5 = 0.25, -3, 13.5, 13.5, -14.5 */
    float d6[5] = {0};
    QZ.type = DTCAST_FLOAT6E3M2FN;
    dtcast_tensor DQX = tensor(y6, 5, DTCAST_FLOAT6E3M2FN, 1, sh5),
                  DQY = tensor(d6, sizeof d6, 0, 0, NULL);
    st = dtcast_onnx_dequantize_linear(&DQY, &DQX, &QS, &QZ, &a, NULL, &e);
    CHECK(st == DTCAST_OK && DQY.type == DTCAST_FLOAT32 && d6[0] == 0.25f && d6[1] == -3.0f &&
              d6[2] == 13.5f && d6[3] == 13.5f && d6[4] == -14.5f,
          "hand_dequantize_float6", "status %d: %g %g %g %g %g", st, d6[0], d6[1], d6[2], d6[3],
          d6[4]);
}

/* ---- refusals ------------------------------------------------------------------------------- */

static void refuse(const char *name, dtcast_status st, dtcast_status want, const uint8_t *y,
                   size_t n, const dtcast_error *e, const char *needle)
{
    int untouched = 1;
    for (size_t i = 0; i < n; i++)
        untouched &= y[i] == 0xEE;
    CHECK(st == want && untouched && strstr(e->message, needle) != NULL, name,
          "status %d (want %d), untouched %d, message \"%s\" (want \"%s\")", st, want, untouched,
          e->message, needle);
}

static void refusals(void)
{
    uint16_t h[4] = {0x3C00, 0x4000, 0x4200, 0x4400};
    float f[4] = {1, 2, 3, 4}, s = 1.0f;
    uint16_t hs = 0x3C00;
    uint8_t y[16], e8 = 127, f8zp[2] = {0x00, 0x38};
    const int64_t sh[1] = {4}, sh2[2] = {2, 2}, one[1] = {2};
    dtcast_tensor XH = tensor(h, 8, DTCAST_FLOAT16, 1, sh), XF = tensor(f, 16, DTCAST_FLOAT32, 1, sh);
    dtcast_tensor SF = tensor(&s, 4, DTCAST_FLOAT32, 0, NULL), SH = tensor(&hs, 2, DTCAST_FLOAT16, 0, NULL);
    dtcast_tensor SE = tensor(&e8, 1, DTCAST_FLOAT8E8M0, 0, NULL);
    dtcast_tensor Y = tensor(y, sizeof y, 0, 0, NULL);
    dtcast_onnx_qdq_attrs a;
    dtcast_error e;
#define RESET() (memset(y, 0xEE, sizeof y), dtcast_onnx_qdq_attrs_init(&a), memset(&e, 0, sizeof e))
    RESET();
    a.opset = 18;
    refuse("refuse_float16_x_opset18",
           dtcast_onnx_quantize_linear(&Y, &XH, &SH, NULL, &a, NULL, &e), DTCAST_ERR_UNSUPPORTED,
           y, sizeof y, &e, "QuantizeLinear-18");
    RESET();
    a.opset = 20;
    a.output_dtype = DTCAST_INT4;
    refuse("refuse_output_dtype_opset20",
           dtcast_onnx_quantize_linear(&Y, &XF, &SF, NULL, &a, NULL, &e),
           DTCAST_ERR_INVALID_ARGUMENT, y, sizeof y, &e, "output_dtype");
    RESET();
    a.opset = 22;
    a.output_dtype = DTCAST_FLOAT4E2M1;
    refuse("refuse_float4_opset22", dtcast_onnx_quantize_linear(&Y, &XF, &SF, NULL, &a, NULL, &e),
           DTCAST_ERR_UNSUPPORTED, y, sizeof y, &e, "opset 23");
    RESET();
    a.opset = 27;
    a.output_dtype = 27; /* FLOAT6E2M3: QuantizeLinear-28 */
    refuse("refuse_float6_opset27", dtcast_onnx_quantize_linear(&Y, &XF, &SF, NULL, &a, NULL, &e),
           DTCAST_ERR_UNSUPPORTED, y, sizeof y, &e, "opset 28");
    RESET();
    a.opset = 24;
    a.output_dtype = DTCAST_INT2;
    refuse("refuse_int2_opset24", dtcast_onnx_quantize_linear(&Y, &XF, &SF, NULL, &a, NULL, &e),
           DTCAST_ERR_UNSUPPORTED, y, sizeof y, &e, "opset 25");
    RESET();
    a.opset = 21;
    refuse("refuse_scale_type_opset21",
           dtcast_onnx_quantize_linear(&Y, &XF, &SH, NULL, &a, NULL, &e), DTCAST_ERR_UNSUPPORTED,
           y, sizeof y, &e, "x's type");
    RESET();
    a.opset = 23;
    refuse("refuse_e8m0_scale_opset23",
           dtcast_onnx_quantize_linear(&Y, &XF, &SE, NULL, &a, NULL, &e), DTCAST_ERR_UNSUPPORTED,
           y, sizeof y, &e, "opset 24");
    RESET();
    a.opset = 22;
    a.precision = DTCAST_FLOAT32;
    refuse("refuse_precision_opset22",
           dtcast_onnx_quantize_linear(&Y, &XF, &SF, NULL, &a, NULL, &e),
           DTCAST_ERR_INVALID_ARGUMENT, y, sizeof y, &e, "precision");
    RESET();
    uint8_t c[4] = {1, 2, 3, 4};
    dtcast_tensor C = tensor(c, 4, DTCAST_UINT8, 1, sh);
    refuse("refuse_e8m0_scale_without_output_dtype",
           dtcast_onnx_dequantize_linear(&Y, &C, &SE, NULL, &a, NULL, &e),
           DTCAST_ERR_INVALID_ARGUMENT, y, sizeof y, &e, "output_dtype");
    RESET();
    float s2[2] = {1, 2};
    dtcast_tensor C8 = tensor(c, 4, DTCAST_FLOAT8E4M3FN, 2, sh2);
    dtcast_tensor S2 = tensor(s2, 8, DTCAST_FLOAT32, 1, one);
    dtcast_tensor Z8 = tensor(f8zp, 2, DTCAST_FLOAT8E4M3FN, 1, one);
    a.axis = 0;
    refuse("refuse_float8_nonzero_zero_point",
           dtcast_onnx_dequantize_linear(&Y, &C8, &S2, &Z8, &a, NULL, &e),
           DTCAST_ERR_INVALID_ARGUMENT, y, sizeof y, &e, "zero_point element 1");
    CHECK(e.index == 1, "refuse_float8_zero_point_index", "index %zu", e.index);
    RESET();
    dtcast_tensor X2 = tensor(f, 16, DTCAST_FLOAT32, 2, sh2);
    const int64_t bsh[2] = {2, 1};
    dtcast_tensor SB = tensor(s2, 8, DTCAST_FLOAT32, 2, bsh);
    a.block_size = 1; /* 2 along axis 1 needs 2 blocks of 1, the scale has 1 */
    refuse("refuse_block_size", dtcast_onnx_quantize_linear(&Y, &X2, &SB, NULL, &a, NULL, &e),
           DTCAST_ERR_BAD_SHAPE, y, sizeof y, &e, "block_size");
    RESET();
    a.block_size = 2;
    a.opset = 20;
    refuse("refuse_block_size_opset20",
           dtcast_onnx_quantize_linear(&Y, &X2, &SB, NULL, &a, NULL, &e),
           DTCAST_ERR_INVALID_ARGUMENT, y, sizeof y, &e, "block_size");
    RESET();
    a.opset = 10;
    refuse("refuse_per_axis_opset10",
           dtcast_onnx_quantize_linear(&Y, &X2, &S2, NULL, &a, NULL, &e), DTCAST_ERR_UNSUPPORTED,
           y, sizeof y, &e, "scalar scale");
    RESET();
    Y.bytes = 3;
    refuse("refuse_small_output", dtcast_onnx_quantize_linear(&Y, &XF, &SF, NULL, &a, NULL, &e),
           DTCAST_ERR_INVALID_ARGUMENT, y, sizeof y, &e, "y:");
    Y.bytes = sizeof y;
    RESET();
    float bad[4] = {1, 2, NAN, 4};
    float ys;
    uint8_t yz;
    dtcast_tensor BX = tensor(bad, 16, DTCAST_FLOAT32, 1, sh);
    dtcast_tensor DS = tensor(&ys, 4, 0, 0, NULL), DZ = tensor(&yz, 1, 0, 0, NULL);
    refuse("refuse_dynamic_nan", dtcast_onnx_dynamic_quantize_linear(&Y, &DS, &DZ, &BX, NULL, &e),
           DTCAST_ERR_INVALID_ARGUMENT, y, sizeof y, &e, "element 2 is NaN");
#undef RESET
}

int main(void)
{
    isas[nisas++] = DT_ISA_PORTABLE;
    if (dt_isa_detected() >= DT_ISA_AVX2)
        isas[nisas++] = DT_ISA_AVX2;
    fast_vs_simple();
    by_hand();
    refusals();
    printf("%d passed, %d failed\n", check_passes, check_failures);
    return CHECK_EXIT();
}
