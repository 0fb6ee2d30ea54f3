/* dtcast_bitcast and dtcast_onnx_bitcast: the bits are copied unchanged (checked against the
 * bytes written by hand and against values fixed by the formats: float32 1.0 is 0x3F800000,
 * -2.5 is 0xC0200000, int4 -1 is uint4 15), the width rule over every
 * pair of types (bits from dtcast_type_info, independently of the bitcast code), the ONNX
 * schema's type set and opsets, and the error paths. */
#include "check.h"

#include "dtcast.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void test_values(void)
{
    dtcast_error e;
    float f[3] = {1.0f, -2.5f, 0.0f};
    int32_t i[3] = {0, 0, 0};
    dtcast_status st = dtcast_bitcast(i, DTCAST_INT32, f, DTCAST_FLOAT32, 3, NULL, &e);
    CHECK(st == DTCAST_OK && i[0] == 0x3F800000 && i[1] == (int32_t)0xC0200000u && i[2] == 0,
          "bitcast_float32_int32", "status %d, 0x%08x 0x%08x", (int)st, (unsigned)i[0],
          (unsigned)i[1]);

    /* int4 (two per byte): -1 (0xF) and 7 in byte 0, -8 in the low nibble of byte 1 */
    uint8_t packed[2] = {0x7F, 0x08}, out[2] = {0xAA, 0xAA};
    st = dtcast_bitcast(out, DTCAST_UINT4, packed, DTCAST_INT4, 3, NULL, &e);
    CHECK(st == DTCAST_OK && out[0] == 0x7F && out[1] == 0x08, "bitcast_int4_uint4_packed",
          "status %d, %02x %02x", (int)st, out[0], out[1]);
    float back = 0;
    uint8_t u4[1] = {0};
    st = dtcast_bitcast(u4, DTCAST_UINT4, packed, DTCAST_INT4, 1, NULL, &e);
    if (st == DTCAST_OK)
        st = dtcast_convert(&back, DTCAST_FLOAT32, u4, DTCAST_UINT4, 1, NULL, &e);
    CHECK(st == DTCAST_OK && back == 15.0f, "bitcast_int4_minus1_is_uint4_15", "%g", back);

    uint8_t b[4] = {0, 1, 2, 255}, bo[4];
    st = dtcast_bitcast(bo, DTCAST_BOOL, b, DTCAST_UINT8, 4, NULL, &e);
    CHECK(st == DTCAST_OK && memcmp(b, bo, 4) == 0, "bitcast_uint8_bool_keeps_bytes", "%d",
          (int)st);

    /* in place and overlapping */
    uint16_t h[4] = {0x3C00, 0x1234, 0xFFFF, 0x8000};
    st = dtcast_bitcast(h, DTCAST_BFLOAT16, h, DTCAST_FLOAT16, 4, NULL, &e);
    CHECK(st == DTCAST_OK && h[0] == 0x3C00 && h[3] == 0x8000, "bitcast_in_place", "%d", (int)st);
    uint8_t ov[5] = {1, 2, 3, 4, 5};
    st = dtcast_bitcast(ov + 1, DTCAST_INT8, ov, DTCAST_FLOAT8E4M3FN, 4, NULL, &e);
    CHECK(st == DTCAST_OK && ov[1] == 1 && ov[4] == 4, "bitcast_overlapping", "%d", (int)st);
    st = dtcast_bitcast(NULL, DTCAST_INT8, NULL, DTCAST_UINT8, 0, NULL, &e);
    CHECK(st == DTCAST_OK, "bitcast_zero_elements", "%d", (int)st);
}

/* Every pair of types: allowed exactly when both have bits, are not strings, and the bits agree
 * (dtcast_type_info's, not the function's own view). */
static void test_width_rule(void)
{
    dtcast_type types[64];
    size_t n = dtcast_type_list(types, 64);
    size_t wrong = 0, pairs = 0;
    uint8_t src[64], dst[64];
    memset(src, 0, sizeof src);
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < n; b++) {
            dtcast_info ia, ib;
            dtcast_error e;
            if (dtcast_type_info(types[a], &ia, NULL) != DTCAST_OK ||
                dtcast_type_info(types[b], &ib, NULL) != DTCAST_OK)
                continue;
            int want = ia.kind != DTCAST_KIND_STRING && ib.kind != DTCAST_KIND_STRING &&
                       ia.bits == ib.bits;
            dtcast_status st = dtcast_bitcast(dst, types[b], src, types[a], 2, NULL, &e);
            pairs++;
            if ((st == DTCAST_OK) != want) {
                if (wrong++ < 3)
                    printf("  %s -> %s: status %d\n", ia.name, ib.name, (int)st);
            }
            if (st != DTCAST_OK && ia.kind != DTCAST_KIND_STRING &&
                ib.kind != DTCAST_KIND_STRING) {
                char wa[32], wb[32];
                snprintf(wa, sizeof wa, "(%d bits)", ia.bits);
                snprintf(wb, sizeof wb, "(%d bits)", ib.bits);
                if (st != DTCAST_ERR_UNSUPPORTED || !strstr(e.message, wa) ||
                    !strstr(e.message, wb)) {
                    if (wrong++ < 3)
                        printf("  %s -> %s: %s\n", ia.name, ib.name, e.message);
                }
            }
        }
    CHECK(wrong == 0 && pairs > 500, "bitcast_width_rule_all_pairs", "%zu of %zu pairs wrong",
          wrong, pairs);
}

static void test_onnx(void)
{
    dtcast_error e;
    uint8_t s[8] = {0}, d[8];
    dtcast_status st =
        dtcast_onnx_bitcast(d, DTCAST_INT64, s, DTCAST_COMPLEX64, 1, 26, NULL, &e);
    CHECK(st == DTCAST_OK, "onnx_bitcast_complex64_int64", "%s", e.message);
    st = dtcast_onnx_bitcast(d, DTCAST_INT32, s, DTCAST_FLOAT32, 1, 25, NULL, &e);
    CHECK(st == DTCAST_ERR_UNSUPPORTED && strstr(e.message, "opset 26"), "onnx_bitcast_opset25",
          "%s", e.message);
    st = dtcast_onnx_bitcast(d, DTCAST_INT32, s, DTCAST_FLOAT32, 1, 28, NULL, &e);
    CHECK(st == DTCAST_OK, "onnx_bitcast_opset28", "%s", e.message);
    st = dtcast_onnx_bitcast(d, DTCAST_INT32, s, DTCAST_FLOAT32, 1, 99, NULL, &e);
    CHECK(st == DTCAST_ERR_UNSUPPORTED && strstr(e.message, "opset 99"), "onnx_bitcast_opset99",
          "%s", e.message);
    st = dtcast_onnx_bitcast(d, DTCAST_UINT8, s, DTCAST_FLOAT8E4M3, 1, 26, NULL, &e);
    CHECK(st == DTCAST_ERR_UNSUPPORTED && strstr(e.message, "float8e4m3"),
          "onnx_bitcast_refuses_dtcast_formats", "%s", e.message);
    st = dtcast_onnx_bitcast(d, DTCAST_FLOAT32, s, DTCAST_COMPLEX32, 1, 26, NULL, &e);
    CHECK(st == DTCAST_ERR_UNSUPPORTED, "onnx_bitcast_refuses_complex32", "%s", e.message);
    st = dtcast_onnx_bitcast(d, 8 /* STRING */, s, DTCAST_UINT8, 1, 26, NULL, &e);
    CHECK(st == DTCAST_ERR_UNSUPPORTED, "onnx_bitcast_refuses_string", "%s", e.message);
    st = dtcast_onnx_bitcast(d, 9999, s, DTCAST_UINT8, 1, 26, NULL, &e);
    CHECK(st == DTCAST_ERR_UNKNOWN_TYPE, "onnx_bitcast_unknown_to", "%s", e.message);
    st = dtcast_onnx_bitcast(d, -1, s, DTCAST_UINT8, 1, 26, NULL, &e);
    CHECK(st == DTCAST_ERR_UNKNOWN_TYPE, "onnx_bitcast_negative_to", "%s", e.message);
    st = dtcast_onnx_bitcast(d, DTCAST_INT4, s, DTCAST_INT8, 1, 26, NULL, &e);
    CHECK(st == DTCAST_ERR_UNSUPPORTED && strstr(e.message, "8 bits") &&
              strstr(e.message, "4 bits"),
          "onnx_bitcast_int8_int4_refused", "%s", e.message);
}

static void test_errors(void)
{
    dtcast_error e;
    uint8_t s[4] = {0}, d[4];
    dtcast_status st = dtcast_bitcast(NULL, DTCAST_INT8, s, DTCAST_UINT8, 1, NULL, &e);
    CHECK(st == DTCAST_ERR_INVALID_ARGUMENT, "bitcast_null_dst", "%s", e.message);
    st = dtcast_bitcast(d, DTCAST_INT8, NULL, DTCAST_UINT8, 1, NULL, &e);
    CHECK(st == DTCAST_ERR_INVALID_ARGUMENT, "bitcast_null_src", "%s", e.message);
    st = dtcast_bitcast(d, (dtcast_type)77, s, DTCAST_UINT8, 1, NULL, &e);
    CHECK(st == DTCAST_ERR_UNKNOWN_TYPE && strstr(e.message, "77"), "bitcast_unknown_type", "%s",
          e.message);
    st = dtcast_bitcast(d, DTCAST_UINT64, s, DTCAST_INT64, SIZE_MAX, NULL, &e);
    CHECK(st == DTCAST_ERR_SIZE_OVERFLOW, "bitcast_size_overflow", "%s", e.message);
    dtcast_options o;
    memset(&o, 0, sizeof o);
    st = dtcast_bitcast(d, DTCAST_INT8, s, DTCAST_UINT8, 1, &o, &e);
    CHECK(st == DTCAST_ERR_INVALID_ARGUMENT, "bitcast_uninitialised_options", "%s", e.message);
}

int main(void)
{
    test_values();
    test_width_rule();
    test_onnx();
    test_errors();
    return CHECK_EXIT();
}
