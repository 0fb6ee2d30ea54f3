/* Core behaviour checked against facts stated by docs/ (formats.md, conversion.md, onnx.md,
 * pypto.md) and the systems' documents (values written down here by hand, not computed by the
 * library): type table, thresholds, special encodings, single rounding, the ONNX and PyPTO
 * profiles, and every error path of docs/errors.md ("What is checked", "Bad input"). */
#include "check.h"
#include "dtcast.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint32_t bits_of_float(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float float_of_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static double double_of_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

/* Converts one float32 to an 8-bit-or-less code under the given options. */
static unsigned f32_to_code(float x, dtcast_type t, const dtcast_options *o)
{
    uint8_t out = 0;
    dtcast_status st = dtcast_convert(&out, t, &x, DTCAST_FLOAT32, 1, o, NULL);
    return st == DTCAST_OK ? out : 0xFFFFu;
}

static void test_type_table(void)
{
    static const struct {
        const char *name;
        dtcast_type type;
        int bits;
    } names[] = {
        {"float32", DTCAST_FLOAT32, 32},   {"FLOAT", DTCAST_FLOAT32, 32},
        {"1", DTCAST_FLOAT32, 32},         {"double", DTCAST_FLOAT64, 64},
        {"DOUBLE", DTCAST_FLOAT64, 64},    {"bf16", DTCAST_BFLOAT16, 16},
        {"f8e4m3fn", DTCAST_FLOAT8E4M3FN, 8}, {"fp8_e4m3", DTCAST_FLOAT8E4M3FN, 8},
        {"float8_e4m3fn", DTCAST_FLOAT8E4M3FN, 8}, {"FLOAT8E4M3FN", DTCAST_FLOAT8E4M3FN, 8},
        {"17", DTCAST_FLOAT8E4M3FN, 8},    {"float8e4m3", DTCAST_FLOAT8E4M3, 8},
        {"i8", DTCAST_INT8, 8},            {"s8", DTCAST_INT8, 8},
        {"u8", DTCAST_UINT8, 8},           {"int4", DTCAST_INT4, 4},
        {"UINT2", DTCAST_UINT2, 2},        {"26", DTCAST_INT2, 2},
        {"float4e2m1", DTCAST_FLOAT4E2M1, 4}, {"float8e8m0", DTCAST_FLOAT8E8M0, 8},
        {"complex32", DTCAST_COMPLEX32, 32}, {"COMPLEX64", DTCAST_COMPLEX64, 64},
        {"complex128", DTCAST_COMPLEX128, 128}, {"float6e2m3fn", DTCAST_FLOAT6E2M3FN, 6},
        {"uint1", DTCAST_UINT1, 1},        {"string", DTCAST_STRING, 0},
        {"BOOL", DTCAST_BOOL, 8},          {"float8_e5m2fnuz", DTCAST_FLOAT8E5M2FNUZ, 8},
        {"int1", DTCAST_INT1, 1},          {"109", DTCAST_INT1, 1},
        {"bcomplex32", DTCAST_BCOMPLEX32, 32}, {"110", DTCAST_BCOMPLEX32, 32},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        dtcast_type t = DTCAST_UNDEFINED;
        dtcast_status st = dtcast_type_from_name(names[i].name, &t, NULL);
        char label[96];
        snprintf(label, sizeof label, "type name %s", names[i].name);
        CHECK(st == DTCAST_OK && t == names[i].type && dtcast_type_bits(t) == names[i].bits, label,
              "status %d type %d bits %d", (int)st, (int)t, dtcast_type_bits(t));
    }
    dtcast_type t;
    CHECK(dtcast_type_from_name("float7", &t, NULL) == DTCAST_ERR_UNKNOWN_TYPE, "unknown type name",
          "float7 was accepted");
    CHECK(dtcast_type_from_name("99", &t, NULL) == DTCAST_ERR_UNKNOWN_TYPE, "unknown type number",
          "99 was accepted");
    CHECK(dtcast_type_name((dtcast_type)99) == NULL, "name of a non-type", "not NULL");
}

static void test_info(void)
{
    /* max finite, from docs/formats.md, "Floating-point formats". */
    static const struct {
        dtcast_type type;
        double max;
        uint64_t max_bits;
    } maxima[] = {
        {DTCAST_FLOAT8E4M3FN, 448, 0x7E},  {DTCAST_FLOAT8E4M3FNUZ, 240, 0x7F},
        {DTCAST_FLOAT8E5M2, 57344, 0x7B},  {DTCAST_FLOAT8E5M2FNUZ, 57344, 0x7F},
        {DTCAST_FLOAT4E2M1, 6, 0x7},       {DTCAST_FLOAT16, 65504, 0x7BFF},
        {DTCAST_FLOAT8E4M3, 240, 0x77},    {DTCAST_FLOAT8E3M4, 15.5, 0x6F},
        {DTCAST_FLOAT8E4M3B11FNUZ, 30, 0x7F}, {DTCAST_FLOAT6E2M3FN, 7.5, 0x1F},
        {DTCAST_FLOAT6E3M2FN, 28, 0x1F},   {DTCAST_FLOAT8E8M0, 0x1p127, 0xFE},
        {DTCAST_FLOAT8E5M3FNU, 114688, 0xFE},
        {DTCAST_BFLOAT16, 3.3895313892515355e38, 0x7F7F},
        {DTCAST_FLOAT32, 3.4028234663852886e38, 0x7F7FFFFF},
        {DTCAST_FLOAT64, 1.7976931348623157e308, 0x7FEFFFFFFFFFFFFF},
    };
    for (size_t i = 0; i < sizeof maxima / sizeof maxima[0]; i++) {
        dtcast_info info;
        dtcast_status st = dtcast_type_info(maxima[i].type, &info, NULL);
        char label[96];
        snprintf(label, sizeof label, "info max %s", dtcast_type_name(maxima[i].type));
        CHECK(st == DTCAST_OK && info.max == maxima[i].max && info.max_bits == maxima[i].max_bits,
              label, "max %.17g bits 0x%llx", info.max, (unsigned long long)info.max_bits);
    }
    dtcast_info info;
    dtcast_type_info(DTCAST_FLOAT16, &info, NULL);
    CHECK(info.min_normal == 0x1p-14 && info.min_subnormal == 0x1p-24 && info.epsilon == 0x1p-10 &&
              info.inf_bits == 0x7C00 && info.nan_bits == 0x7E00,
          "info float16 limits", "min normal %g subnormal %g eps %g", info.min_normal,
          info.min_subnormal, info.epsilon);
    dtcast_type_info(DTCAST_FLOAT8E8M0, &info, NULL);
    CHECK(info.min_subnormal == 0x1p-127 && info.nan_bits == 0xFF && !info.has_negative_zero,
          "info float8e8m0", "min %g nan 0x%llx", info.min_subnormal,
          (unsigned long long)info.nan_bits);
    /* float8e5m3fnu: ml_dtypes 0.7's finfo (min 0, smallest subnormal 2^-17, no -0, one NaN) */
    dtcast_type_info(DTCAST_FLOAT8E5M3FNU, &info, NULL);
    CHECK(info.lowest == 0 && info.min_subnormal == 0x1p-17 && info.min_normal == 0x1p-14 &&
              info.nan_bits == 0xFF && info.nan_count == 1 && !info.has_negative_zero &&
              !info.has_inf,
          "info float8e5m3fnu", "lowest %g min %g nan 0x%llx (%d)", info.lowest,
          info.min_subnormal, (unsigned long long)info.nan_bits, info.nan_count);
    {
        /* ml_dtypes 0.7.0: float32 -> float8_e5m3fnu (rne), and dtcast's saturating rule */
        static const float in[] = {-0.0f, -0x1p-20f, -1.0f, 0x1p-18f, 0x3p-19f, 2.0f,
                                   118784.0f, 122880.0f, -INFINITY, NAN};
        static const uint8_t rne[] = {0x00, 0xFF, 0xFF, 0x00, 0x01, 0x80, 0xFE, 0xFF, 0xFF, 0xFF};
        static const uint8_t sat[] = {0x00, 0x00, 0x00, 0x00, 0x01, 0x80, 0xFE, 0xFE, 0x00, 0xFF};
        uint8_t out[10];
        dtcast_options o;
        dtcast_options_init(&o);
        CHECK(dtcast_convert(out, DTCAST_FLOAT8E5M3FNU, in, DTCAST_FLOAT32, 10, &o, NULL) ==
                      DTCAST_OK &&
                  memcmp(out, rne, sizeof rne) == 0,
              "float32 -> float8e5m3fnu (ml_dtypes)", "got %02x %02x %02x %02x %02x", out[0],
              out[1], out[2], out[7], out[8]);
        o.float_overflow = DTCAST_FLOAT_OVERFLOW_SATURATE;
        CHECK(dtcast_convert(out, DTCAST_FLOAT8E5M3FNU, in, DTCAST_FLOAT32, 10, &o, NULL) ==
                      DTCAST_OK &&
                  memcmp(out, sat, sizeof sat) == 0,
              "float32 -> float8e5m3fnu saturating", "got %02x %02x %02x %02x %02x", out[0],
              out[1], out[2], out[7], out[8]);
        dtcast_type t;
        CHECK(dtcast_type_from_name("float8_e5m3fnu", &t, NULL) == DTCAST_OK &&
                  t == DTCAST_FLOAT8E5M3FNU && dtcast_type_onnx_name(t) == NULL,
              "float8_e5m3fnu is a name", "type %d", (int)t);
    }
    dtcast_type_info(DTCAST_INT4, &info, NULL);
    CHECK(info.int_min == -8 && info.int_max == 7, "info int4", "[%lld, %llu]",
          (long long)info.int_min, (unsigned long long)info.int_max);
    /* ml_dtypes 0.7's iinfo(int1): min -1, max 0 */
    dtcast_type_info(DTCAST_INT1, &info, NULL);
    CHECK(info.int_min == -1 && info.int_max == 0 && info.kind == DTCAST_KIND_SIGNED &&
              info.bits == 1 && dtcast_type_onnx_name(DTCAST_INT1) == NULL,
          "info int1", "[%lld, %llu]", (long long)info.int_min, (unsigned long long)info.int_max);
    /* bcomplex32: the parts are bfloat16's */
    dtcast_type_info(DTCAST_BCOMPLEX32, &info, NULL);
    CHECK(info.kind == DTCAST_KIND_COMPLEX && info.bits == 32 && info.exponent_bits == 8 &&
              info.mantissa_bits == 7 && info.max_bits == 0x7F7F && info.nan_bits == 0x7FC0,
          "info bcomplex32", "bits %d e%d m%d max 0x%llx", info.bits, info.exponent_bits,
          info.mantissa_bits, (unsigned long long)info.max_bits);
    dtcast_type_info(DTCAST_UINT64, &info, NULL);
    CHECK(info.int_min == 0 && info.int_max == UINT64_MAX, "info uint64", "max %llu",
          (unsigned long long)info.int_max);
    size_t bytes = 0;
    CHECK(dtcast_storage_size(DTCAST_INT4, 5, &bytes, NULL) == DTCAST_OK && bytes == 3,
          "storage int4 x5 = 3 bytes", "%zu", bytes);
    CHECK(dtcast_storage_size(DTCAST_UINT2, 9, &bytes, NULL) == DTCAST_OK && bytes == 3,
          "storage uint2 x9 = 3 bytes", "%zu", bytes);
    CHECK(dtcast_storage_size(DTCAST_UINT1, 17, &bytes, NULL) == DTCAST_OK && bytes == 3,
          "storage uint1 x17 = 3 bytes", "%zu", bytes);
    CHECK(dtcast_storage_size(DTCAST_INT1, 17, &bytes, NULL) == DTCAST_OK && bytes == 3,
          "storage int1 x17 = 3 bytes", "%zu", bytes);
    CHECK(dtcast_storage_size(DTCAST_BCOMPLEX32, 3, &bytes, NULL) == DTCAST_OK && bytes == 12,
          "storage bcomplex32 x3 = 12 bytes", "%zu", bytes);
    CHECK(dtcast_storage_size(DTCAST_COMPLEX128, 3, &bytes, NULL) == DTCAST_OK && bytes == 48,
          "storage complex128 x3 = 48 bytes", "%zu", bytes);
    CHECK(dtcast_storage_size(DTCAST_FLOAT64, SIZE_MAX / 4, &bytes, NULL) == DTCAST_ERR_SIZE_OVERFLOW,
          "storage overflow", "not detected");
}

/* docs/onnx.md, "saturate": thresholds and the ONNX saturate tables. */
static void test_float8_thresholds(void)
{
    dtcast_options sat, ieee;
    dtcast_options_init(&sat);
    dtcast_options_init(&ieee);
    sat.float_overflow = DTCAST_FLOAT_OVERFLOW_SATURATE;
    const float inf = (float)INFINITY;
    const struct {
        dtcast_type t;
        float x;
        unsigned ieee, sat;
    } cases[] = {
        /* float8e4m3fn overflows above 464 (464 ties to even 448) */
        {DTCAST_FLOAT8E4M3FN, 464.0f, 0x7E, 0x7E},
        {DTCAST_FLOAT8E4M3FN, 464.03125f, 0x7F, 0x7E},
        {DTCAST_FLOAT8E4M3FN, -500.0f, 0xFF, 0xFE},
        /* float8e4m3fnuz at 248 and above */
        {DTCAST_FLOAT8E4M3FNUZ, 247.99998f, 0x7F, 0x7F},
        {DTCAST_FLOAT8E4M3FNUZ, 248.0f, 0x80, 0x7F},
        {DTCAST_FLOAT8E4M3FNUZ, -248.0f, 0x80, 0xFF},
        /* float8e5m2 and fnuz at 61440 and above */
        {DTCAST_FLOAT8E5M2, 61439.996f, 0x7B, 0x7B},
        {DTCAST_FLOAT8E5M2, 61440.0f, 0x7C, 0x7B},
        {DTCAST_FLOAT8E5M2, -61440.0f, 0xFC, 0xFB},
        {DTCAST_FLOAT8E5M2FNUZ, 61440.0f, 0x80, 0x7F},
        /* Inf: saturate gives +-max for all four; ieee Inf/NaN */
        {DTCAST_FLOAT8E4M3FN, inf, 0x7F, 0x7E},
        {DTCAST_FLOAT8E4M3FN, -inf, 0xFF, 0xFE},
        {DTCAST_FLOAT8E5M2, inf, 0x7C, 0x7B},
        {DTCAST_FLOAT8E5M2, -inf, 0xFC, 0xFB},
        {DTCAST_FLOAT8E4M3FNUZ, inf, 0x80, 0x7F},
        {DTCAST_FLOAT8E5M2FNUZ, -inf, 0x80, 0xFF},
        /* -0: kept where the format has it, +0 for fnuz */
        {DTCAST_FLOAT8E4M3FN, -0.0f, 0x80, 0x80},
        {DTCAST_FLOAT8E4M3FNUZ, -0.0f, 0x00, 0x00},
        {DTCAST_FLOAT8E5M2FNUZ, -1e-30f, 0x00, 0x00},
        /* float4e2m1: |x| > 6 and Inf -> +-6, -0 -> 0x8 */
        {DTCAST_FLOAT4E2M1, 7.0f, 0x7, 0x7},
        {DTCAST_FLOAT4E2M1, -inf, 0xF, 0xF},
        {DTCAST_FLOAT4E2M1, -0.0f, 0x8, 0x8},
        {DTCAST_FLOAT4E2M1, 5.0f, 0x6, 0x6}, /* tie between 4 and 6 -> even 4 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char label[128];
        snprintf(label, sizeof label, "%s(%g) ieee/saturate", dtcast_type_name(cases[i].t),
                 (double)cases[i].x);
        unsigned a = f32_to_code(cases[i].x, cases[i].t, &ieee);
        unsigned b = f32_to_code(cases[i].x, cases[i].t, &sat);
        CHECK(a == cases[i].ieee && b == cases[i].sat, label, "got 0x%02x/0x%02x want 0x%02x/0x%02x",
              a, b, cases[i].ieee, cases[i].sat);
    }
}

static void test_nan_encodings(void)
{
    const float qnan = float_of_bits(0x7FC00000), nnan = float_of_bits(0xFFC00001);
    static const struct {
        dtcast_type t;
        uint64_t pos, neg;
    } nans[] = {
        {DTCAST_FLOAT8E4M3FN, 0x7F, 0xFF},  {DTCAST_FLOAT8E5M2, 0x7E, 0xFE},
        {DTCAST_FLOAT8E4M3FNUZ, 0x80, 0x80}, {DTCAST_FLOAT8E5M2FNUZ, 0x80, 0x80},
        {DTCAST_FLOAT16, 0x7E00, 0xFE00},   {DTCAST_BFLOAT16, 0x7FC0, 0xFFC0},
        {DTCAST_FLOAT8E8M0, 0xFF, 0xFF},    {DTCAST_FLOAT4E2M1, 0x8, 0x0},
        {DTCAST_FLOAT32, 0x7FC00000, 0xFFC00000}, {DTCAST_INT8, 0, 0},
        {DTCAST_BOOL, 1, 1},
    };
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
        uint64_t a = 0, b = 0;
        dtcast_convert(&a, nans[i].t, &qnan, DTCAST_FLOAT32, 1, NULL, NULL);
        dtcast_convert(&b, nans[i].t, &nnan, DTCAST_FLOAT32, 1, NULL, NULL);
        char label[96];
        snprintf(label, sizeof label, "NaN -> %s", dtcast_type_name(nans[i].t));
        CHECK(a == nans[i].pos && b == nans[i].neg, label, "got 0x%llx/0x%llx", (unsigned long long)a,
              (unsigned long long)b);
    }
    dtcast_options o;
    dtcast_options_init(&o);
    o.float4_nan_as_max = 1;
    CHECK(f32_to_code(qnan, DTCAST_FLOAT4E2M1, &o) == 0x7, "NaN -> float4e2m1 legacy +6",
          "got 0x%x", f32_to_code(qnan, DTCAST_FLOAT4E2M1, &o));
    /* float64 NaN payloads and float16 signalling NaN become the canonical quiet NaN */
    uint16_t snan16 = 0x7D00;
    float f = 0;
    dtcast_convert(&f, DTCAST_FLOAT32, &snan16, DTCAST_FLOAT16, 1, NULL, NULL);
    CHECK(bits_of_float(f) == 0x7FC00000, "float16 sNaN -> float32 canonical", "0x%08x",
          bits_of_float(f));
}

static void test_integers(void)
{
    /* ONNX examples (docs/onnx.md, "Rounding and integers"): int16 200 -> int8 -56; float -> int4
     * -9 -> 7, 8 -> -8; float -> uint4 -1 -> 15; NaN and Inf -> 0 under wrap. */
    int16_t s = 200;
    int8_t r = 0;
    dtcast_convert(&r, DTCAST_INT8, &s, DTCAST_INT16, 1, NULL, NULL);
    CHECK(r == -56, "int16 200 -> int8 wrap", "got %d", r);
    float in[4] = {-9.0f, 8.0f, float_of_bits(0x7FC00000), float_of_bits(0x7F800000)};
    uint8_t packed[2] = {0xAA, 0xAA};
    dtcast_convert(packed, DTCAST_INT4, in, DTCAST_FLOAT32, 4, NULL, NULL);
    CHECK(packed[0] == 0x87 && packed[1] == 0x00, "float -> int4 wrap", "got %02x %02x", packed[0],
          packed[1]);
    float m1 = -1.0f;
    uint8_t u4 = 0xFF;
    dtcast_convert(&u4, DTCAST_UINT4, &m1, DTCAST_FLOAT32, 1, NULL, NULL);
    CHECK(u4 == 0x0F, "float -1 -> uint4 15 (padding bits zero)", "got %02x", u4);
    dtcast_options sat;
    dtcast_options_init(&sat);
    sat.int_overflow = DTCAST_INT_OVERFLOW_SATURATE;
    float xs[5] = {130.0f, -1e30f, float_of_bits(0x7FC00000), float_of_bits(0xFF800000), 2.9f};
    int8_t i8[5];
    dtcast_convert(i8, DTCAST_INT8, xs, DTCAST_FLOAT32, 5, &sat, NULL);
    CHECK(i8[0] == 127 && i8[1] == -128 && i8[2] == 0 && i8[3] == -128 && i8[4] == 2,
          "float -> int8 saturate", "%d %d %d %d %d", i8[0], i8[1], i8[2], i8[3], i8[4]);
    /* Rounding modes to an integer: 2.5 and -2.5 */
    static const struct {
        dtcast_round mode;
        int8_t up, down;
    } modes[] = {
        {DTCAST_ROUND_RNE, 2, -2},  {DTCAST_ROUND_RNA, 3, -3}, {DTCAST_ROUND_FLOOR, 2, -3},
        {DTCAST_ROUND_CEIL, 3, -2}, {DTCAST_ROUND_TRUNC, 2, -2}, {DTCAST_ROUND_ODD, 3, -3},
    };
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        dtcast_options o;
        dtcast_options_init(&o);
        o.round = modes[i].mode;
        float v[2] = {2.5f, -2.5f};
        int8_t out[2];
        dtcast_convert(out, DTCAST_INT8, v, DTCAST_FLOAT32, 2, &o, NULL);
        char label[64];
        snprintf(label, sizeof label, "+-2.5 -> int8 %s", dtcast_round_name(modes[i].mode));
        CHECK(out[0] == modes[i].up && out[1] == modes[i].down, label, "got %d %d", out[0], out[1]);
    }
    /* 1e19 float64 -> uint64 is exact; -> int64 wraps modulo 2^64 exactly */
    double big = 1e19;
    uint64_t u = 0;
    int64_t i64 = 0;
    dtcast_convert(&u, DTCAST_UINT64, &big, DTCAST_FLOAT64, 1, NULL, NULL);
    dtcast_convert(&i64, DTCAST_INT64, &big, DTCAST_FLOAT64, 1, NULL, NULL);
    CHECK(u == UINT64_C(10000000000000000000) &&
              i64 == (int64_t)(UINT64_C(10000000000000000000) - UINT64_C(9223372036854775808)) +
                         INT64_MIN,
          "float64 1e19 -> uint64 / int64 wrap", "u %llu i %lld", (unsigned long long)u,
          (long long)i64);
    float b[3] = {0.0f, -0.0f, 1e-45f};
    uint8_t bo[3];
    dtcast_convert(bo, DTCAST_BOOL, b, DTCAST_FLOAT32, 3, NULL, NULL);
    CHECK(bo[0] == 0 && bo[1] == 0 && bo[2] == 1, "float -> bool", "%d %d %d", bo[0], bo[1], bo[2]);
}

/* One rounding: float64 -> float8 and int64 -> bfloat16 never pass through float32. */
static void test_single_rounding(void)
{
    /* 1 + 2^-4 + 2^-30 as float64: just above the midpoint between 1 and 1.125 in e4m3fn, so it
     * rounds up to 1.125 (0x39). Through float32 it would become exactly the midpoint (the
     * 2^-30 survives in float32? no: float32 keeps 24 bits, 2^-30 is lost) and tie to 1.0. */
    double x = 1.0 + 0x1p-4 + 0x1p-30;
    uint8_t once = 0, twice = 0;
    dtcast_options o;
    dtcast_options_init(&o);
    dtcast_convert(&once, DTCAST_FLOAT8E4M3FN, &x, DTCAST_FLOAT64, 1, &o, NULL);
    o.via_float32 = 1;
    dtcast_convert(&twice, DTCAST_FLOAT8E4M3FN, &x, DTCAST_FLOAT64, 1, &o, NULL);
    CHECK(once == 0x39 && twice == 0x38, "float64 -> e4m3fn rounds once", "once %02x twice %02x",
          once, twice);
    /* int64 2^40 + 2^32 + 1 -> bfloat16: 1.00000001 x 2^40 -> above the midpoint -> 2^40+2^33 */
    int64_t n = (INT64_C(1) << 40) + (INT64_C(1) << 32) + 1;
    uint16_t bf = 0;
    dtcast_convert(&bf, DTCAST_BFLOAT16, &n, DTCAST_INT64, 1, NULL, NULL);
    CHECK(bf == 0x5381, "int64 -> bfloat16 rounds once", "got %04x", bf);
    /* float32 -> bfloat16 RNE, subnormal input (docs/differences.md, "Processors"):
     * 0x00018000 -> 0x0002 */
    uint32_t sub = 0x00018000;
    dtcast_convert(&bf, DTCAST_BFLOAT16, &sub, DTCAST_FLOAT32, 1, NULL, NULL);
    CHECK(bf == 0x0002, "float32 subnormal -> bfloat16 RNE", "got %04x", bf);
    /* float64 smallest subnormal -> float16 under ceil is the smallest float16 subnormal */
    double tiny = double_of_bits(1);
    uint16_t h = 0;
    dtcast_options_init(&o);
    o.round = DTCAST_ROUND_CEIL;
    dtcast_convert(&h, DTCAST_FLOAT16, &tiny, DTCAST_FLOAT64, 1, &o, NULL);
    CHECK(h == 0x0001, "float64 min subnormal -> float16 ceil", "got %04x", h);
    o.round = DTCAST_ROUND_RNE;
    dtcast_convert(&h, DTCAST_FLOAT16, &tiny, DTCAST_FLOAT64, 1, &o, NULL);
    CHECK(h == 0x0000, "float64 min subnormal -> float16 rne", "got %04x", h);
    /* Directed modes on overflow: trunc gives max, ceil of a negative gives -max */
    float big = 1e6f, nbig = -1e6f;
    o.round = DTCAST_ROUND_TRUNC;
    dtcast_convert(&h, DTCAST_FLOAT16, &big, DTCAST_FLOAT32, 1, &o, NULL);
    CHECK(h == 0x7BFF, "float16 overflow under trunc -> max", "got %04x", h);
    o.round = DTCAST_ROUND_CEIL;
    dtcast_convert(&h, DTCAST_FLOAT16, &nbig, DTCAST_FLOAT32, 1, &o, NULL);
    CHECK(h == 0xFBFF, "float16 negative overflow under ceil -> -max", "got %04x", h);
    dtcast_convert(&h, DTCAST_FLOAT16, &big, DTCAST_FLOAT32, 1, &o, NULL);
    CHECK(h == 0x7C00, "float16 overflow under ceil -> Inf", "got %04x", h);
}

static void test_e8m0(void)
{
    /* ONNX round_mode on float8e8m0: values 1.5 (tie), 3 (1.5 * 2), 0.75, 2^-127 exact. */
    static const struct {
        const char *mode;
        float x;
        unsigned want;
    } cases[] = {
        {"up", 1.5f, 128},       {"down", 1.5f, 127},      {"nearest", 1.5f, 128},
        {"up", 1.25f, 128},      {"nearest", 1.25f, 127},  {"down", 1.99f, 127},
        {"up", 0x1p-127f, 0x00}, {"up", 0.0f, 0x00},       {"up", -4.0f, 129},
        {"up", 0x1p-140f, 0x00}, {"up", 0x1p127f, 0xFE},   {"up", 0x1.8p127f, 0xFE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t out = 0;
        dtcast_status st = dtcast_onnx_cast(&out, DTCAST_FLOAT8E8M0, &cases[i].x, DTCAST_FLOAT32,
                                            1, 25, 1, cases[i].mode, NULL, NULL);
        char label[96];
        snprintf(label, sizeof label, "e8m0 %s %g", cases[i].mode, (double)cases[i].x);
        CHECK(st == DTCAST_OK && out == cases[i].want, label, "got 0x%02x want 0x%02x", out,
              cases[i].want);
    }
    float big = 0x1.8p127f, inf = float_of_bits(0x7F800000);
    uint8_t out = 0;
    dtcast_onnx_cast(&out, DTCAST_FLOAT8E8M0, &big, DTCAST_FLOAT32, 1, 25, 0, "up", NULL, NULL);
    CHECK(out == 0xFF, "e8m0 saturate=0 overflow -> 0xFF", "got %02x", out);
    dtcast_onnx_cast(&out, DTCAST_FLOAT8E8M0, &inf, DTCAST_FLOAT32, 1, 25, 1, "up", NULL, NULL);
    CHECK(out == 0xFF, "e8m0 Inf -> 0xFF", "got %02x", out);
    uint8_t code = 0;
    float v = 0;
    dtcast_convert(&v, DTCAST_FLOAT32, &code, DTCAST_FLOAT8E8M0, 1, NULL, NULL);
    CHECK(bits_of_float(v) == 0x00400000, "e8m0 0x00 -> float32 2^-127 exact", "got %08x",
          bits_of_float(v));
}

static void test_complex(void)
{
    float c[4] = {1.5f, -2.0f, 0.0f, 3.0f};
    double out[4] = {0};
    dtcast_status st = dtcast_convert(out, DTCAST_COMPLEX128, c, DTCAST_COMPLEX64, 2, NULL, NULL);
    CHECK(st == DTCAST_OK && out[0] == 1.5 && out[1] == -2.0 && out[3] == 3.0,
          "complex64 -> complex128", "%g %g", out[0], out[1]);
    float r[2] = {7.0f, 8.0f};
    st = dtcast_convert(r, DTCAST_FLOAT32, c, DTCAST_COMPLEX64, 2, NULL, NULL);
    CHECK(st == DTCAST_ERR_COMPLEX_TO_REAL && r[0] == 7.0f, "complex -> real refused",
          "status %d", (int)st);
    dtcast_options o;
    dtcast_options_init(&o);
    o.discard_imaginary = 1;
    st = dtcast_convert(r, DTCAST_FLOAT32, c, DTCAST_COMPLEX64, 2, &o, NULL);
    CHECK(st == DTCAST_OK && r[0] == 1.5f && r[1] == 0.0f, "complex -> real discarding",
          "status %d", (int)st);
    int8_t i8[2] = {-3, 5};
    uint16_t c32[4];
    st = dtcast_convert(c32, DTCAST_COMPLEX32, i8, DTCAST_INT8, 2, NULL, NULL);
    CHECK(st == DTCAST_OK && c32[0] == 0xC200 && c32[1] == 0 && c32[2] == 0x4500 && c32[3] == 0,
          "int8 -> complex32", "%04x %04x", c32[0], c32[1]);
    /* bcomplex32: bfloat16 parts (-3 = 0xC040, 5 = 0x40A0), imag 0 from a real source; back to
     * real only discarding the imaginary part */
    st = dtcast_convert(c32, DTCAST_BCOMPLEX32, i8, DTCAST_INT8, 2, NULL, NULL);
    CHECK(st == DTCAST_OK && c32[0] == 0xC040 && c32[1] == 0 && c32[2] == 0x40A0 && c32[3] == 0,
          "int8 -> bcomplex32", "%04x %04x %04x %04x", c32[0], c32[1], c32[2], c32[3]);
    {
        /* complex64 (1 + 2^-8 + 2^-20, 3.3) -> bcomplex32: each part rounded to nearest even on
         * its own (ml_dtypes 0.7.0 gives 0x3F81 0x4053) */
        const float cz[2] = {1.0f + 0x1p-8f + 0x1p-20f, 3.3f};
        uint16_t bz[2];
        st = dtcast_convert(bz, DTCAST_BCOMPLEX32, cz, DTCAST_COMPLEX64, 1, NULL, NULL);
        CHECK(st == DTCAST_OK && bz[0] == 0x3F81 && bz[1] == 0x4053, "complex64 -> bcomplex32",
              "%04x %04x", bz[0], bz[1]);
        float back[1] = {7.0f};
        st = dtcast_convert(back, DTCAST_FLOAT32, bz, DTCAST_BCOMPLEX32, 1, NULL, NULL);
        CHECK(st == DTCAST_ERR_COMPLEX_TO_REAL && back[0] == 7.0f, "bcomplex32 -> real refused",
              "status %d", (int)st);
        st = dtcast_convert(back, DTCAST_FLOAT32, bz, DTCAST_BCOMPLEX32, 1, &o, NULL);
        CHECK(st == DTCAST_OK && back[0] == 1.0078125f, "bcomplex32 -> real discarding",
              "status %d %g", (int)st, (double)back[0]);
        uint16_t h[2];
        st = dtcast_convert(h, DTCAST_COMPLEX32, bz, DTCAST_BCOMPLEX32, 1, NULL, NULL);
        CHECK(st == DTCAST_OK && h[0] == 0x3C08 && h[1] == 0x4298, "bcomplex32 -> complex32",
              "%04x %04x", h[0], h[1]);
    }
    {
        /* int1 holds -1 and 0: integers wrap modulo 2 (1 -> -1, 2 -> 0) or saturate to
         * [-1, 0]; packed 8 per byte, element 8k+j in bit j, sign-extended on read */
        const int8_t in[8] = {-2, -1, 0, 1, 2, 3, 100, -100};
        uint8_t p = 0xAB;
        dtcast_options so;
        dtcast_options_init(&so);
        st = dtcast_convert(&p, DTCAST_INT1, in, DTCAST_INT8, 8, &so, NULL);
        CHECK(st == DTCAST_OK && p == 0x2A, "int8 -> int1 wraps", "status %d 0x%02x", (int)st, p);
        so.int_overflow = DTCAST_INT_OVERFLOW_SATURATE;
        st = dtcast_convert(&p, DTCAST_INT1, in, DTCAST_INT8, 8, &so, NULL);
        CHECK(st == DTCAST_OK && p == 0x83, "int8 -> int1 saturates", "status %d 0x%02x", (int)st,
              p);
        int8_t wide[8];
        p = 0xA5;
        st = dtcast_convert(wide, DTCAST_INT8, &p, DTCAST_INT1, 8, NULL, NULL);
        CHECK(st == DTCAST_OK && wide[0] == -1 && wide[1] == 0 && wide[2] == -1 && wide[5] == -1 &&
                  wide[6] == 0 && wide[7] == -1,
              "int1 -> int8 sign-extends", "%d %d %d", wide[0], wide[1], wide[2]);
        const float f[4] = {-1.0f, -0.5f, 0.75f, -1.75f};
        so.round = DTCAST_ROUND_FLOOR;
        st = dtcast_convert(&p, DTCAST_INT1, f, DTCAST_FLOAT32, 4, &so, NULL);
        CHECK(st == DTCAST_OK && p == 0x0B, "float32 -> int1 floor saturating", "0x%02x", p);
    }
}

static void test_onnx_profile(void)
{
    float x = 1.0f;
    uint8_t out = 0xAB;
    dtcast_error err;
    dtcast_options o;
    dtcast_options_init(&o);
    dtcast_status st = dtcast_onnx_cast(&out, DTCAST_FLOAT8E4M3FN, &x, DTCAST_FLOAT32, 1, 13, 1,
                                        NULL, &o, &err);
    CHECK(st == DTCAST_ERR_UNSUPPORTED && out == 0xAB && strstr(err.message, "13") &&
              strstr(err.message, "19"),
          "onnx opset 13 refuses float8", "status %d: %s", (int)st, err.message);
    st = dtcast_onnx_cast(&out, DTCAST_FLOAT8E4M3FN, &x, DTCAST_FLOAT32, 1, 19, 1, NULL, &o, &err);
    CHECK(st == DTCAST_OK && out == 0x38, "onnx opset 19 float8", "status %d out %02x", (int)st,
          out);
    st = dtcast_onnx_cast(&out, DTCAST_INT4, &x, DTCAST_FLOAT32, 1, 20, 1, NULL, &o, &err);
    CHECK(st == DTCAST_ERR_UNSUPPORTED, "onnx opset 20 refuses int4", "status %d", (int)st);
    st = dtcast_onnx_cast(&out, DTCAST_FLOAT4E2M1, &x, DTCAST_FLOAT32, 1, 22, 1, NULL, &o, &err);
    CHECK(st == DTCAST_ERR_UNSUPPORTED, "onnx opset 22 refuses float4e2m1", "status %d", (int)st);
    st = dtcast_onnx_cast(&out, DTCAST_FLOAT8E8M0, &x, DTCAST_FLOAT32, 1, 23, 1, NULL, &o, &err);
    CHECK(st == DTCAST_ERR_UNSUPPORTED, "onnx opset 23 refuses float8e8m0", "status %d", (int)st);
    st = dtcast_onnx_cast(&out, DTCAST_INT2, &x, DTCAST_FLOAT32, 1, 24, 1, NULL, &o, &err);
    CHECK(st == DTCAST_ERR_UNSUPPORTED, "onnx opset 24 refuses int2", "status %d", (int)st);
    st = dtcast_onnx_cast(&out, DTCAST_BFLOAT16, &x, DTCAST_FLOAT32, 1, 12, 1, NULL, &o, &err);
    CHECK(st == DTCAST_ERR_UNSUPPORTED, "onnx opset 12 refuses bfloat16", "status %d", (int)st);
    st = dtcast_onnx_cast(&out, DTCAST_COMPLEX64, &x, DTCAST_FLOAT32, 1, 25, 1, NULL, &o, &err);
    CHECK(st == DTCAST_ERR_UNSUPPORTED, "onnx refuses complex", "status %d", (int)st);
    st = dtcast_onnx_cast(&out, DTCAST_FLOAT8E4M3, &x, DTCAST_FLOAT32, 1, 25, 1, NULL, &o, &err);
    CHECK(st == DTCAST_ERR_UNSUPPORTED, "onnx refuses non-ONNX float8e4m3", "status %d", (int)st);
    st = dtcast_onnx_cast(&out, DTCAST_FLOAT8E4M3FN, &x, DTCAST_FLOAT32, 1, 23, 1, "up", &o, &err);
    CHECK(st == DTCAST_ERR_INVALID_ARGUMENT && strstr(err.message, "round_mode"),
          "onnx round_mode before opset 24", "status %d: %s", (int)st, err.message);
    st = dtcast_onnx_cast(&out, DTCAST_FLOAT8E8M0, &x, DTCAST_FLOAT32, 1, 25, 1, "sideways", &o,
                          &err);
    CHECK(st == DTCAST_ERR_INVALID_ARGUMENT, "onnx bad round_mode", "status %d", (int)st);
    st = dtcast_onnx_cast(&out, DTCAST_UINT8, &x, DTCAST_FLOAT32, 1, 13, 0, NULL, &o, &err);
    CHECK(st == DTCAST_ERR_INVALID_ARGUMENT, "onnx saturate before opset 19", "status %d", (int)st);
    st = dtcast_onnx_cast(&out, DTCAST_UINT8, &x, DTCAST_FLOAT32, 1, 29, 1, NULL, &o, &err);
    CHECK(st == DTCAST_ERR_UNSUPPORTED, "onnx unknown opset 29", "status %d", (int)st);
    st = dtcast_onnx_cast(&out, 0, &x, DTCAST_FLOAT32, 1, 25, 1, NULL, &o, &err);
    CHECK(st == DTCAST_ERR_UNKNOWN_TYPE, "onnx to=0", "status %d", (int)st);
    st = dtcast_onnx_cast_like(&out, DTCAST_UINT8, &x, DTCAST_FLOAT32, 1, 14, 1, NULL, &o, &err);
    CHECK(st == DTCAST_ERR_UNSUPPORTED, "onnx CastLike before opset 15", "status %d", (int)st);
    /* float -> integer truncates, integers wrap: -2.7 -> -2, 300.9 -> 44 */
    float xs[2] = {-2.7f, 300.9f};
    uint8_t u8[2];
    int8_t i8[2];
    dtcast_onnx_cast(i8, DTCAST_INT8, xs, DTCAST_FLOAT32, 2, 25, 1, NULL, NULL, NULL);
    dtcast_onnx_cast(u8, DTCAST_UINT8, xs, DTCAST_FLOAT32, 2, 25, 1, NULL, NULL, NULL);
    CHECK(i8[0] == -2 && i8[1] == 44 && u8[0] == 254 && u8[1] == 44, "onnx float -> int trunc+wrap",
          "%d %d %u %u", i8[0], i8[1], u8[0], u8[1]);
    /* saturate does not touch float16: 1e6 -> Inf */
    uint16_t h = 0;
    float big = 1e6f;
    dtcast_onnx_cast(&h, DTCAST_FLOAT16, &big, DTCAST_FLOAT32, 1, 25, 1, NULL, NULL, NULL);
    CHECK(h == 0x7C00, "onnx float16 overflow -> Inf", "got %04x", h);
    /* Cast-28 (onnx 1.23, IR 14) adds FLOAT6E2M3 = 27 and FLOAT6E3M2 = 28; 26 and 27 take
     * Cast-25's types; 29 does not exist yet. The 1.0 codes 105, 106 name the same types. */
    CHECK(DTCAST_ONNX_OPSET_MAX == 28 && DTCAST_FLOAT6E2M3FN == 27 && DTCAST_FLOAT6E3M2FN == 28,
          "onnx opset 28, float6 codes 27/28", "max %d", DTCAST_ONNX_OPSET_MAX);
    for (int opset = 1; opset <= 29; opset++) {
        const bool f6 = opset == 28;
        char label[64];
        snprintf(label, sizeof label, "onnx opset %d float6: %s", opset, f6 ? "yes" : "no");
        CHECK(dtcast_onnx_opset_allows(opset, (dtcast_type)27) == f6 &&
                  dtcast_onnx_opset_allows(opset, (dtcast_type)28) == f6 &&
                  dtcast_onnx_opset_allows(opset, (dtcast_type)105) == f6 &&
                  dtcast_onnx_opset_allows(opset, (dtcast_type)106) == f6 &&
                  dtcast_onnx_opset_allows(opset, DTCAST_INT2) == (opset >= 25 && opset <= 28) &&
                  dtcast_onnx_opset_allows(opset, DTCAST_FLOAT32) == (opset <= 28),
              label, "constraint table wrong");
    }
    {
        /* 7.75 lies halfway between float6e2m3fn's max 7.5 (odd mantissa) and 8: rne gives 8,
         * beyond the range, so max; 100 and Inf give max; 0.0625 is half of the smallest
         * subnormal 0.125 and rounds to even 0; -0 keeps its sign; NaN gives 0x20 and -NaN
         * 0x00 (ml_dtypes 0.7, onnx 1.23's reference) */
        const float in[7] = {7.75f, 100.0f, INFINITY, 0.0625f, -0.0f, NAN, -NAN};
        uint8_t o6[7] = {0};
        dtcast_error e6;
        memset(&e6, 0, sizeof e6);
        dtcast_status s6 = dtcast_onnx_cast(o6, 27, in, DTCAST_FLOAT32, 7, 28, 1, NULL, NULL, &e6);
        CHECK(s6 == DTCAST_OK && o6[0] == 0x1F && o6[1] == 0x1F && o6[2] == 0x1F &&
                  o6[3] == 0x00 && o6[4] == 0x20 && o6[5] == 0x20 && o6[6] == 0x00,
              "onnx cast-28 float32 -> float6e2m3fn", "%s: %02x %02x %02x %02x %02x %02x %02x",
              e6.message, o6[0], o6[1], o6[2], o6[3], o6[4], o6[5], o6[6]);
        s6 = dtcast_onnx_cast(o6, 28, in, DTCAST_FLOAT32, 7, 27, 1, NULL, NULL, &e6);
        CHECK(s6 == DTCAST_ERR_UNSUPPORTED && strstr(e6.message, "opset 28") != NULL,
              "onnx cast-27 refuses float6", "%d %s", (int)s6, e6.message);
        s6 = dtcast_onnx_cast_like(o6, (dtcast_type)27, in, DTCAST_FLOAT32, 7, 28, 1, NULL, NULL,
                                   &e6);
        CHECK(s6 == DTCAST_ERR_UNSUPPORTED && strstr(e6.message, "CastLike-25") != NULL,
              "onnx castlike at opset 28 is castlike-25: no float6", "%d %s", (int)s6,
              e6.message);
        s6 = dtcast_onnx_cast_like(o6, DTCAST_FLOAT8E4M3FN, in, DTCAST_FLOAT32, 1, 28, 1, NULL,
                                   NULL, &e6);
        CHECK(s6 == DTCAST_OK && o6[0] == 0x50, "onnx castlike at opset 28 float8", "%d %s",
              (int)s6, e6.message);
    }
    for (int opset = 1; opset <= 25; opset++) {
        char label[48];
        snprintf(label, sizeof label, "onnx opset %d takes float/int64/bool", opset);
        CHECK(dtcast_onnx_opset_allows(opset, DTCAST_FLOAT32) &&
                  dtcast_onnx_opset_allows(opset, DTCAST_INT64) &&
                  dtcast_onnx_opset_allows(opset, DTCAST_BOOL) &&
                  dtcast_onnx_opset_allows(opset, DTCAST_STRING) == (opset >= 9),
              label, "constraint table wrong");
    }
}

static void test_pypto_profile(void)
{
    int64_t shape[5] = {2, 1, 1, 1, 1};
    uint16_t h[2] = {0x5810, 0xD810}; /* 130.0, -130.0 in float16 */
    int8_t i8[2] = {0, 0};
    dtcast_status st = dtcast_pypto_cast(i8, DTCAST_INT8, h, DTCAST_FLOAT16, shape, 1,
                                         DTCAST_CAST_NONE, NULL, NULL);
    CHECK(st == DTCAST_OK && i8[0] == 127 && i8[1] == -128, "pypto fp16 130 -> int8 127",
          "status %d: %d %d", (int)st, i8[0], i8[1]);
    float f[2] = {2.5f, -2.5f};
    int32_t i32[2];
    dtcast_pypto_cast(i32, DTCAST_INT32, f, DTCAST_FLOAT32, shape, 1, DTCAST_CAST_NONE, NULL,
                      NULL);
    CHECK(i32[0] == 2 && i32[1] == -2, "pypto CAST_NONE float -> int truncates", "%d %d", i32[0],
          i32[1]);
    dtcast_pypto_cast(i32, DTCAST_INT32, f, DTCAST_FLOAT32, shape, 1, DTCAST_CAST_ROUND, NULL,
                      NULL);
    CHECK(i32[0] == 3 && i32[1] == -3, "pypto CAST_ROUND", "%d %d", i32[0], i32[1]);
    /* CAST_ODD is not offered for float32 -> int32: falls back to the default (trunc) */
    dtcast_pypto_cast(i32, DTCAST_INT32, f, DTCAST_FLOAT32, shape, 1, DTCAST_CAST_ODD, NULL, NULL);
    CHECK(i32[0] == 2 && i32[1] == -2, "pypto CAST_ODD falls back for float -> int", "%d %d",
          i32[0], i32[1]);
    /* CAST_ODD is offered for float32 -> float16: 1 + 2^-11 + 2^-12 is inexact -> odd neighbour */
    float g[2] = {1.0f + 0x1p-12f, 1.0f};
    uint16_t o16[2];
    dtcast_pypto_cast(o16, DTCAST_FLOAT16, g, DTCAST_FLOAT32, shape, 1, DTCAST_CAST_ODD, NULL,
                      NULL);
    CHECK(o16[0] == 0x3C01 && o16[1] == 0x3C00, "pypto CAST_ODD float32 -> float16", "%04x %04x",
          o16[0], o16[1]);
    dtcast_pypto_cast(o16, DTCAST_BFLOAT16, g, DTCAST_FLOAT32, shape, 1, DTCAST_CAST_ODD, NULL,
                      NULL);
    CHECK(o16[0] == 0x3F80, "pypto CAST_ODD float32 -> bfloat16 falls back to rne", "%04x", o16[0]);
    dtcast_error err;
    dtcast_options o;
    dtcast_options_init(&o);
    st = dtcast_pypto_cast(i8, DTCAST_INT8, f, DTCAST_FLOAT32, shape, 1, DTCAST_CAST_NONE, &o,
                           &err);
    CHECK(st == DTCAST_ERR_UNSUPPORTED && strstr(err.message, "float32 -> int8"),
          "pypto refuses float32 -> int8", "status %d: %s", (int)st, err.message);
    st = dtcast_pypto_cast(i8, DTCAST_FLOAT64, f, DTCAST_FLOAT32, shape, 1, DTCAST_CAST_NONE, &o,
                           &err);
    CHECK(st == DTCAST_ERR_UNSUPPORTED, "pypto refuses float64", "status %d", (int)st);
    st = dtcast_pypto_cast(i32, DTCAST_INT32, f, DTCAST_FLOAT32, shape, 5, DTCAST_CAST_NONE, &o,
                           &err);
    CHECK(st == DTCAST_ERR_BAD_SHAPE, "pypto refuses 5 dimensions", "status %d", (int)st);
    int64_t empty[1] = {0};
    st = dtcast_pypto_cast(i32, DTCAST_INT32, f, DTCAST_FLOAT32, empty, 1, DTCAST_CAST_NONE, &o,
                           &err);
    CHECK(st == DTCAST_ERR_BAD_SHAPE, "pypto refuses empty tensor", "status %d", (int)st);
    int64_t huge[2] = {65536, 32768};
    st = dtcast_pypto_cast(i32, DTCAST_INT32, f, DTCAST_FLOAT32, huge, 2, DTCAST_CAST_NONE, &o,
                           &err);
    CHECK(st == DTCAST_ERR_BAD_SHAPE && strstr(err.message, "INT32_MAX"),
          "pypto refuses more than INT32_MAX elements", "status %d", (int)st);
    dtcast_pypto_mode m;
    CHECK(dtcast_pypto_mode_from_name("CAST_RINT", &m, NULL) == DTCAST_OK && m == DTCAST_CAST_RINT &&
              dtcast_pypto_mode_from_name("CastMode.CAST_ODD", &m, NULL) == DTCAST_OK &&
              m == DTCAST_CAST_ODD,
          "pypto mode names", "not parsed");
}

/* docs/errors.md: every entry point validates, names the problem, leaves the output untouched. */
static void test_errors(void)
{
    dtcast_error err;
    dtcast_options o;
    dtcast_options_init(&o);
    float x[4] = {1, 2, 3, 4};
    uint8_t out[4] = {9, 9, 9, 9};
    CHECK(dtcast_convert(out, (dtcast_type)77, x, DTCAST_FLOAT32, 4, &o, &err) == DTCAST_ERR_UNKNOWN_TYPE &&
              strstr(err.message, "77"),
          "error: unknown destination type", "%s", err.message);
    CHECK(dtcast_convert(out, DTCAST_UINT8, NULL, DTCAST_FLOAT32, 4, &o, &err) ==
                  DTCAST_ERR_INVALID_ARGUMENT &&
              strstr(err.message, "source"),
          "error: NULL source", "%s", err.message);
    CHECK(dtcast_convert(NULL, DTCAST_UINT8, x, DTCAST_FLOAT32, 4, &o, &err) ==
              DTCAST_ERR_INVALID_ARGUMENT,
          "error: NULL destination", "%s", err.message);
    CHECK(dtcast_convert(NULL, DTCAST_UINT8, NULL, DTCAST_FLOAT32, 0, &o, &err) == DTCAST_OK,
          "count 0 with NULL buffers is fine", "%s", err.message);
    CHECK(dtcast_convert(out, DTCAST_FLOAT64, x, DTCAST_FLOAT32, SIZE_MAX / 2, &o, &err) ==
              DTCAST_ERR_SIZE_OVERFLOW,
          "error: size overflow", "%s", err.message);
    o.round = (dtcast_round)42;
    CHECK(dtcast_convert(out, DTCAST_UINT8, x, DTCAST_FLOAT32, 4, &o, &err) ==
                  DTCAST_ERR_INVALID_ARGUMENT &&
              strstr(err.message, "rounding"),
          "error: bad rounding mode", "%s", err.message);
    dtcast_options_init(&o);
    /* overlap: widening in place is refused, narrowing in place works */
    CHECK(dtcast_convert(x, DTCAST_FLOAT64, x, DTCAST_FLOAT32, 2, &o, &err) == DTCAST_ERR_INVALID_ARGUMENT &&
              strstr(err.message, "overlap"),
          "error: widening in place refused", "%s", err.message);
    CHECK(dtcast_convert(x + 1, DTCAST_FLOAT32, x, DTCAST_FLOAT32, 2, &o, &err) ==
              DTCAST_ERR_INVALID_ARGUMENT,
          "error: shifted overlap refused", "%s", err.message);
    float y[4] = {1.5f, -2.0f, 3.0f, 448.0f};
    CHECK(dtcast_convert(y, DTCAST_FLOAT8E4M3FN, y, DTCAST_FLOAT32, 4, &o, &err) == DTCAST_OK &&
              ((uint8_t *)y)[0] == 0x3C && ((uint8_t *)y)[1] == 0xC0 && ((uint8_t *)y)[3] == 0x7E,
          "narrowing in place", "%02x %02x", ((uint8_t *)y)[0], ((uint8_t *)y)[1]);
    /* Unaligned buffers work */
    uint8_t raw[9] = {0};
    float one = 1.0f;
    memcpy(raw + 1, &one, 4);
    uint8_t res[3] = {0};
    CHECK(dtcast_convert(res + 1, DTCAST_BFLOAT16, raw + 1, DTCAST_FLOAT32, 1, &o, &err) == DTCAST_OK &&
              res[1] == 0x80 && res[2] == 0x3F,
          "unaligned buffers", "%02x %02x", res[1], res[2]);
    CHECK(strcmp(dtcast_status_string(DTCAST_OK), "ok") == 0 &&
              strlen(dtcast_status_string(DTCAST_ERR_BAD_STRING)) > 0,
          "status strings", "missing");
}

static void test_strings(void)
{
    dtcast_error err;
    dtcast_options o;
    dtcast_options_init(&o);
    const char *in[4] = {"1.5", " -2e3 ", "100.5", "hello"};
    float out[4] = {7, 7, 7, 7};
    dtcast_status st = dtcast_convert(out, DTCAST_FLOAT32, in, DTCAST_STRING, 4, &o, &err);
    CHECK(st == DTCAST_ERR_BAD_STRING && err.index == 3 && strstr(err.message, "hello") &&
              strstr(err.message, "3") && out[0] == 7.0f,
          "bad string names its index, output untouched", "status %d: %s", (int)st, err.message);
    const char *nl[1] = {"1\n2\r3\t"};
    st = dtcast_convert(out, DTCAST_FLOAT32, nl, DTCAST_STRING, 1, &o, &err);
    CHECK(st == DTCAST_ERR_BAD_STRING && !strpbrk(err.message, "\n\r\t"),
          "bad string message stays one line", "%s", err.message);
    st = dtcast_convert(out, DTCAST_FLOAT32, in, DTCAST_STRING, 3, &o, &err);
    CHECK(st == DTCAST_OK && out[0] == 1.5f && out[1] == -2000.0f && out[2] == 100.5f,
          "strings -> float32", "status %d", (int)st);
    int32_t i[3];
    dtcast_onnx_cast(i, DTCAST_INT32, in, DTCAST_STRING, 3, 25, 1, NULL, &o, &err);
    CHECK(i[0] == 1 && i[1] == -2000 && i[2] == 100, "strings -> int32 truncates (\"100.5\" -> 100)",
          "%d %d %d", i[0], i[1], i[2]);
    const char *bools[3] = {"", "0", "false"};
    uint8_t b[3];
    dtcast_convert(b, DTCAST_BOOL, bools, DTCAST_STRING, 3, &o, &err);
    CHECK(b[0] == 0 && b[1] == 1 && b[2] == 1, "strings -> bool (\"\" false, others true)",
          "%d %d %d", b[0], b[1], b[2]);
    float vals[6] = {1.0f, 100.0f, -0.0f, 123456792.0f, 1e-5f, 3.4028235e38f};
    char *s[6] = {0};
    st = dtcast_convert(s, DTCAST_STRING, vals, DTCAST_FLOAT32, 6, &o, &err);
    static const char *const want[6] = {"1.0", "100.0", "-0.0", "123456790.0", "1e-05",
                                        "3.4028235e+38"};
    int same = st == DTCAST_OK;
    for (int k = 0; same && k < 6; k++)
        same = s[k] && strcmp(s[k], want[k]) == 0;
    CHECK(same, "float32 -> strings (Python repr)", "status %d first %s", (int)st,
          s[0] ? s[0] : "(null)");
    dtcast_strings_free(s, 6);
    CHECK(s[0] == NULL, "strings_free clears entries", "not cleared");
    uint8_t tf[2] = {1, 0};
    char *bs[2] = {0};
    dtcast_convert(bs, DTCAST_STRING, tf, DTCAST_BOOL, 2, &o, &err);
    CHECK(bs[0] && bs[1] && strcmp(bs[0], "True") == 0 && strcmp(bs[1], "False") == 0,
          "bool -> strings True/False", "%s %s", bs[0] ? bs[0] : "-", bs[1] ? bs[1] : "-");
    dtcast_strings_free(bs, 2);
    char buf[DTCAST_FORMAT_MAX];
    double d = 0.1;
    CHECK(dtcast_format_element(buf, sizeof buf, &d, DTCAST_FLOAT64, 0, &o, &err) == DTCAST_OK &&
              strcmp(buf, "0.1") == 0,
          "format_element float64 0.1", "%s", buf);
    CHECK(dtcast_format_element(buf, 2, &d, DTCAST_FLOAT64, 0, &o, &err) == DTCAST_ERR_INVALID_ARGUMENT,
          "format_element small buffer refused", "%s", err.message);
    uint8_t packed = 0x00;
    CHECK(dtcast_parse_element(&packed, DTCAST_INT4, 1, "-3", &o, &err) == DTCAST_OK && packed == 0xD0,
          "parse_element into the high nibble", "%02x", packed);
    CHECK(dtcast_parse_element(&packed, DTCAST_INT4, 0, "x", &o, &err) == DTCAST_ERR_BAD_STRING &&
              packed == 0xD0,
          "parse_element bad text leaves dst", "%02x", packed);
}

/* threads = 1, 3 and automatic give identical bytes, also for a packed target with a tail. */
static void test_threads(void)
{
    const size_t n = 300001;
    float *x = malloc(n * sizeof *x);
    uint8_t *a = malloc(n), *b = malloc(n), *c = malloc(n);
    uint32_t seed = 12345;
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = float_of_bits(seed);
    }
    static const dtcast_type targets[] = {DTCAST_FLOAT8E4M3FN, DTCAST_INT4, DTCAST_UINT1};
    for (size_t t = 0; t < 3; t++) {
        dtcast_options o;
        dtcast_options_init(&o);
        size_t bytes = 0;
        dtcast_storage_size(targets[t], n, &bytes, NULL);
        memset(a, 0xEE, n);
        memset(b, 0x11, n);
        memset(c, 0x77, n);
        o.threads = 1;
        dtcast_convert(a, targets[t], x, DTCAST_FLOAT32, n, &o, NULL);
        o.threads = 3;
        dtcast_convert(b, targets[t], x, DTCAST_FLOAT32, n, &o, NULL);
        o.threads = 0;
        dtcast_convert(c, targets[t], x, DTCAST_FLOAT32, n, &o, NULL);
        char label[64];
        snprintf(label, sizeof label, "threads 1/3/auto agree (%s)", dtcast_type_name(targets[t]));
        CHECK(memcmp(a, b, bytes) == 0 && memcmp(a, c, bytes) == 0, label, "results differ");
    }
    free(x);
    free(a);
    free(b);
    free(c);
}

/* Every code of every type of at most 16 bits prints as text that parses back to the same code
 * (NaN to a NaN), in both string styles: the string direction of the exhaustive tests. */
static void test_string_round_trip_all(void)
{
    dtcast_type types[64];
    size_t n = dtcast_type_list(types, 64);
    for (size_t t = 0; t < n; t++) {
        dtcast_info info;
        dtcast_type_info(types[t], &info, NULL);
        if (info.bits == 0 || info.bits > 16 || info.kind == DTCAST_KIND_STRING)
            continue;
        for (int style = 0; style < 2; style++) {
            const size_t count = (size_t)1 << (info.bits == 6 ? 6 : info.bits);
            size_t bytes = 0;
            dtcast_storage_size(types[t], count, &bytes, NULL);
            uint8_t *codes = calloc(bytes + 2, 1), *back = calloc(bytes + 2, 1);
            char **text = calloc(count, sizeof *text);
            for (size_t c = 0; c < count; c++) { /* element c holds code c */
                if (info.bits >= 8)
                    for (int k = 0; k < info.bits / 8; k++)
                        codes[c * (size_t)(info.bits / 8) + (size_t)k] = (uint8_t)(c >> (8 * k));
                else if (info.bits == 6)
                    codes[c] = (uint8_t)c;
                else
                    codes[c * (size_t)info.bits / 8] |=
                        (uint8_t)(c << ((c * (size_t)info.bits) % 8));
            }
            dtcast_options o;
            dtcast_options_init(&o);
            o.string_style = (dtcast_string_style)style;
            o.string_to_bool_numeric = 1;
            o.round = DTCAST_ROUND_RNE;
            dtcast_status st1 = dtcast_convert(text, DTCAST_STRING, codes, types[t], count, &o,
                                               NULL);
            dtcast_status st2 = st1 == DTCAST_OK
                                    ? dtcast_convert(back, types[t], text, DTCAST_STRING, count,
                                                     &o, NULL)
                                    : st1;
            size_t bad = count;
            for (size_t c = 0; st2 == DTCAST_OK && c < count && bad == count; c++) {
                char a[DTCAST_FORMAT_MAX], b[DTCAST_FORMAT_MAX];
                dtcast_format_element(a, sizeof a, codes, types[t], c, &o, NULL);
                dtcast_format_element(b, sizeof b, back, types[t], c, &o, NULL);
                /* equal text of the parsed-back element means the same value (NaN prints nan) */
                if (strcmp(a, b) != 0)
                    bad = c;
            }
            /* Also the bits: compare everything but NaN-class codes, which may canonicalise. */
            char label[96];
            snprintf(label, sizeof label, "every %s code -> string (%s) -> back", info.name,
                     style ? "ort" : "python");
            CHECK(st1 == DTCAST_OK && st2 == DTCAST_OK && bad == count, label,
                  "status %d/%d, first bad code 0x%zx: \"%s\"", (int)st1, (int)st2, bad,
                  bad < count && text[bad] ? text[bad] : "-");
            dtcast_strings_free(text, count);
            free(text);
            free(codes);
            free(back);
        }
    }
}

int main(void)
{
    test_type_table();
    test_info();
    test_float8_thresholds();
    test_nan_encodings();
    test_integers();
    test_single_rounding();
    test_e8m0();
    test_complex();
    test_onnx_profile();
    test_pypto_profile();
    test_errors();
    test_strings();
    test_threads();
    test_string_round_trip_all();
    return CHECK_EXIT();
}
