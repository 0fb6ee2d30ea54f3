/* Tests of the safetensors module and its JSON reader: the header rules of docs/files.md, "safetensors" (each broken
 * once, with the tensor and the file offset named), the 22 dtypes, the F6 bit stream, the
 * writer's order, padding and escaping (the expected bytes are the reference's own test vectors
 * and outputs of huggingface safetensors 0.8.0 for the same tensors), and the index of sharded
 * checkpoints (expected text: Python's json.dumps(indent=2, sort_keys=True)). */
#include "check.h"
#include "files/json.h"
#include "files/safetensors.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* "name":{"dtype":...,"shape":...,"data_offsets":[b,e]} */
#define E(name, dtype, shape, b, e)                                                               \
    "\"" name "\":{\"dtype\":\"" dtype "\",\"shape\":" shape ",\"data_offsets\":[" #b "," #e "]}"

/* Parses text[0, n) as the header of a file with data_len bytes of data after it. */
static dtcast_status parse_n(const char *text, size_t n, uint64_t data_len, dt_st_header *h,
                             dt_io_error *err)
{
    return dt_st_parse((const uint8_t *)text, n, 8 + n + data_len, h, err);
}

static dtcast_status parse(const char *text, uint64_t data_len, dt_st_header *h, dt_io_error *err)
{
    return parse_n(text, strlen(text), data_len, h, err);
}

static int header_empty(const dt_st_header *h)
{
    return h->ntensors == 0 && !h->tensors && !h->meta && h->nmeta == 0 && !h->has_meta;
}

/* The file offset of the `nth` (0-based) occurrence of marker in text: 8 + its position. */
static uint64_t at_of(const char *text, const char *marker, int nth)
{
    const char *p = text;
    for (int i = 0; p && i <= nth; i++)
        p = strstr(i ? p + 1 : p, marker);
    return p ? 8 + (uint64_t)(p - text) : UINT64_MAX;
}

/* Expects status `want` and a message holding `what` and " at byte AT" (AT < UINT64_MAX). */
static void expect_bad_n(const char *name, const char *text, size_t n, uint64_t data_len,
                         dtcast_status want, const char *what, uint64_t at)
{
    dt_st_header h;
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st = parse_n(text, n, data_len, &h, &err);
    char where[48] = "";
    if (at != UINT64_MAX)
        snprintf(where, sizeof where, " at byte %" PRIu64, at);
    int ok = st == want && header_empty(&h) && strstr(err.message, what) &&
             strstr(err.message, where) && strchr(err.message, '\n') == NULL;
    CHECK(ok, name, "status %d (want %d), message \"%s\" (want \"%s\" and \"%s\")", st, want,
          err.message, what, where);
    dt_st_header_free(&h);
}

static void expect_bad(const char *name, const char *text, uint64_t data_len, const char *what,
                       uint64_t at)
{
    expect_bad_n(name, text, strlen(text), data_len, DTCAST_ERR_BAD_FILE, what, at);
}

/* ---- dtypes ------------------------------------------------------------------------------- */

static const struct {
    const char *st;
    dtcast_type type;
    unsigned bits;
    int is_float;
} all_dtypes[22] = {
    {"BOOL", DTCAST_BOOL, 8, 0},
    {"U8", DTCAST_UINT8, 8, 0},
    {"I8", DTCAST_INT8, 8, 0},
    {"U16", DTCAST_UINT16, 16, 0},
    {"I16", DTCAST_INT16, 16, 0},
    {"U32", DTCAST_UINT32, 32, 0},
    {"I32", DTCAST_INT32, 32, 0},
    {"U64", DTCAST_UINT64, 64, 0},
    {"I64", DTCAST_INT64, 64, 0},
    {"F16", DTCAST_FLOAT16, 16, 1},
    {"BF16", DTCAST_BFLOAT16, 16, 1},
    {"F32", DTCAST_FLOAT32, 32, 1},
    {"F64", DTCAST_FLOAT64, 64, 1},
    {"C64", DTCAST_COMPLEX64, 64, 0},
    {"F8_E4M3", DTCAST_FLOAT8E4M3FN, 8, 1},
    {"F8_E5M2", DTCAST_FLOAT8E5M2, 8, 1},
    {"F8_E4M3FNUZ", DTCAST_FLOAT8E4M3FNUZ, 8, 1},
    {"F8_E5M2FNUZ", DTCAST_FLOAT8E5M2FNUZ, 8, 1},
    {"F8_E8M0", DTCAST_FLOAT8E8M0, 8, 1},
    {"F4", DTCAST_FLOAT4E2M1, 4, 1},
    {"F6_E2M3", DTCAST_FLOAT6E2M3FN, 6, 1},
    {"F6_E3M2", DTCAST_FLOAT6E3M2FN, 6, 1},
};

static void test_dtypes(void)
{
    char list[512] = "";
    int ok = 1;
    for (int i = 0; i < 22; i++) {
        const char *name = dt_st_dtype_name(all_dtypes[i].type);
        uint64_t nb = 0;
        dt_io_error err;
        dtcast_status st = dt_st_nbytes(all_dtypes[i].type, 12, &nb, &err);
        if (!name || strcmp(name, all_dtypes[i].st) != 0 ||
            dt_st_dtype_type(all_dtypes[i].st) != all_dtypes[i].type ||
            dt_st_is_float(all_dtypes[i].type) != all_dtypes[i].is_float || st != DTCAST_OK ||
            nb != 12 * all_dtypes[i].bits / 8) {
            ok = 0;
            printf("# dtype %s: name %s, nbytes %" PRIu64 "\n", all_dtypes[i].st,
                   name ? name : "NULL", nb);
        }
        if (i)
            strcat(list, ", ");
        strcat(list, dtcast_type_name(all_dtypes[i].type));
    }
    CHECK(ok, "dtypes.all_22", "see the lines above");
    CHECK(strcmp(list, dt_st_dtype_list()) == 0, "dtypes.list", "\"%s\" vs \"%s\"",
          dt_st_dtype_list(), list);

    static const dtcast_type missing[] = {DTCAST_FLOAT8E4M3, DTCAST_INT4, DTCAST_UINT4,
                                          DTCAST_UINT2, DTCAST_COMPLEX128, DTCAST_STRING,
                                          DTCAST_COMPLEX32, DTCAST_UINT1, DTCAST_UNDEFINED};
    ok = 1;
    for (size_t i = 0; i < sizeof missing / sizeof missing[0]; i++) {
        uint64_t nb = 7;
        dt_io_error err;
        if (dt_st_dtype_name(missing[i]) || dt_st_is_float(missing[i]) ||
            dt_st_nbytes(missing[i], 1, &nb, &err) != DTCAST_ERR_UNSUPPORTED || nb != 0 ||
            !strstr(err.message, "; it holds bool,uint8,int8,uint16,") ||
            !strstr(err.message, ",float4e2m1,float6e2m3fn,float6e3m2fn"))
            ok = 0;
    }
    CHECK(ok, "dtypes.not_held", "a type safetensors lacks was accepted");
    CHECK(dt_st_dtype_type("f32") == DTCAST_UNDEFINED && dt_st_dtype_type("") == DTCAST_UNDEFINED &&
              dt_st_dtype_type("F8_E4M3FN") == DTCAST_UNDEFINED &&
              dt_st_dtype_type(NULL) == DTCAST_UNDEFINED,
          "dtypes.names_exact", "a wrong name was accepted");

    uint64_t nb = 9;
    dt_io_error err;
    CHECK(dt_st_nbytes(DTCAST_FLOAT4E2M1, 3, &nb, &err) == DTCAST_ERR_INVALID_ARGUMENT && nb == 0 &&
              strstr(err.message, "3 elements of F4 are not a whole number of bytes"),
          "dtypes.nbytes_f4_odd", "%s", err.message);
    CHECK(dt_st_nbytes(DTCAST_FLOAT6E2M3FN, 6, &nb, &err) == DTCAST_ERR_INVALID_ARGUMENT &&
              dt_st_nbytes(DTCAST_FLOAT6E3M2FN, 8, &nb, &err) == DTCAST_OK && nb == 6 &&
              dt_st_nbytes(DTCAST_FLOAT6E3M2FN, 0, &nb, &err) == DTCAST_OK && nb == 0,
          "dtypes.nbytes_f6", "%s", err.message);
    CHECK(dt_st_nbytes(DTCAST_FLOAT32, UINT64_MAX / 4 + 1, &nb, &err) == DTCAST_ERR_SIZE_OVERFLOW &&
              dt_st_nbytes(DTCAST_FLOAT32, UINT64_MAX / 32, &nb, &err) == DTCAST_OK &&
              nb == UINT64_MAX / 32 * 4 &&
              dt_st_nbytes(DTCAST_FLOAT4E2M1, UINT64_MAX / 4 - 1, &nb, &err) == DTCAST_OK,
          "dtypes.nbytes_overflow", "%s", err.message);
}

/* ---- the length prefix -------------------------------------------------------------------- */

static void le8(uint8_t *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

static void test_json_length(void)
{
    uint8_t b[8];
    uint64_t n = 1;
    dt_io_error err;
    le8(b, 8);
    CHECK(dt_st_json_length(b, 16, &n, &err) == DTCAST_OK && n == 8, "length.ok", "%s",
          err.message);
    CHECK(dt_st_json_length(b, 15, &n, &err) == DTCAST_ERR_BAD_FILE && n == 0 &&
              strstr(err.message, "header length 8 runs past the end of the file (15 bytes) at byte 0"),
          "length.past_end", "%s", err.message);
    le8(b, 100000000);
    CHECK(dt_st_json_length(b, 200000000, &n, &err) == DTCAST_OK && n == 100000000,
          "length.limit_ok", "%s", err.message);
    le8(b, 100000001);
    CHECK(dt_st_json_length(b, 200000000, &n, &err) == DTCAST_ERR_BAD_FILE &&
              strstr(err.message, "header length 100000001 is over the limit of 100000000 bytes at byte 0"),
          "length.over_limit", "%s", err.message);
    le8(b, UINT64_MAX);
    CHECK(dt_st_json_length(b, UINT64_MAX, &n, &err) == DTCAST_ERR_BAD_FILE &&
              strstr(err.message, "header length 18446744073709551615 is over the limit"),
          "length.huge", "%s", err.message);
    le8(b, 0);
    CHECK(dt_st_json_length(b, 7, &n, &err) == DTCAST_ERR_BAD_FILE &&
              strstr(err.message, "shorter than the 8-byte header length at byte 0") &&
              dt_st_json_length(b, 8, &n, &err) == DTCAST_OK && n == 0,
          "length.short_file", "%s", err.message);
}

/* ---- valid headers ------------------------------------------------------------------------ */

static int dims_are(const dt_st_tensor *t, int ndim, const int64_t *dims)
{
    if (t->ndim != ndim)
        return 0;
    for (int i = 0; i < ndim; i++)
        if (t->dims[i] != dims[i])
            return 0;
    return 1;
}

static void test_parse_valid(void)
{
    dt_st_header h;
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st = parse("{}      ", 0, &h, &err);
    CHECK(st == DTCAST_OK && h.ntensors == 0 && !h.has_meta && h.json_len == 8 &&
              h.data_start == 16,
          "parse.empty", "%d %s", st, err.message);
    dt_st_header_free(&h);
    st = parse(" \t\r\n{} \n\t\r", 0, &h, &err);
    CHECK(st == DTCAST_OK && h.ntensors == 0, "parse.whitespace_around", "%s", err.message);
    dt_st_header_free(&h);

    /* the reference's own examples (test_deserialization, test_empty_shapes_allowed,
     * test_zero_sized_tensor) */
    st = parse("{\"test\":{\"dtype\":\"I32\",\"shape\":[2,2],\"data_offsets\":[0,16]}}", 16, &h, &err);
    CHECK(st == DTCAST_OK && h.ntensors == 1 && strcmp(h.tensors[0].name, "test") == 0 &&
              h.tensors[0].type == DTCAST_INT32 && h.tensors[0].count == 4 &&
              h.tensors[0].begin == 0 && h.tensors[0].end == 16,
          "parse.reference_example", "%s", err.message);
    dt_st_header_free(&h);
    st = parse("{\"test\":{\"dtype\":\"I32\",\"shape\":[],\"data_offsets\":[0,4]}}", 4, &h, &err);
    CHECK(st == DTCAST_OK && h.ntensors == 1 && h.tensors[0].ndim == 0 && h.tensors[0].count == 1,
          "parse.zero_d", "%s", err.message);
    dt_st_header_free(&h);
    st = parse("{\"test\":{\"dtype\":\"I32\",\"shape\":[2,0],\"data_offsets\":[0, 0]}}", 0, &h, &err);
    CHECK(st == DTCAST_OK && h.ntensors == 1 && h.tensors[0].count == 0 && h.tensors[0].ndim == 2,
          "parse.empty_tensor", "%s", err.message);
    dt_st_header_free(&h);

    /* every dtype, in a file whose entries are out of data order, with metadata */
    const char *all = "{" E("bool", "BOOL", "[4]", 0, 4) ","
                      E("f6b", "F6_E3M2", "[4,3,7]", 218, 281) ","
                      E("u8", "U8", "[4]", 4, 8) "," E("i8", "I8", "[4]", 8, 12) ","
                      E("u16", "U16", "[4]", 12, 20) "," E("i16", "I16", "[4]", 20, 28) ","
                      E("u32", "U32", "[4]", 28, 44) "," E("i32", "I32", "[4]", 44, 60) ","
                      E("u64", "U64", "[4]", 60, 92) "," E("i64", "I64", "[4]", 92, 124) ","
                      E("f16", "F16", "[4]", 124, 132) "," E("bf16", "BF16", "[4]", 132, 140) ","
                      E("f32", "F32", "[4]", 140, 156) "," E("f64", "F64", "[4]", 156, 188) ","
                      "\"__metadata__\":{\"format\":\"pt\",\"a\":\"\\u00e9\\n\\ud83d\\ude00\"},"
                      E("c64", "C64", "[]", 188, 196) "," E("e4m3", "F8_E4M3", "[4]", 196, 200) ","
                      E("e5m2", "F8_E5M2", "[4]", 200, 204) ","
                      E("e4m3fnuz", "F8_E4M3FNUZ", "[1]", 204, 205) ","
                      E("e5m2fnuz", "F8_E5M2FNUZ", "[1]", 205, 206) ","
                      E("e8m0", "F8_E8M0", "[1]", 206, 207) ","
                      E("f4", "F4", "[2,5]", 207, 212) "," E("f6a", "F6_E2M3", "[8]", 212, 218) "}";
    st = parse(all, 281, &h, &err);
    int ok = st == DTCAST_OK && h.ntensors == 22 && h.has_meta && h.nmeta == 2 &&
             strcmp(h.meta[0].key, "format") == 0 && strcmp(h.meta[0].value, "pt") == 0 &&
             strcmp(h.meta[1].key, "a") == 0 &&
             strcmp(h.meta[1].value, "\xC3\xA9\n\xF0\x9F\x98\x80") == 0;
    for (size_t i = 1; ok && i < h.ntensors; i++)
        ok = h.tensors[i].begin == h.tensors[i - 1].end;
    if (ok) {
        static const int64_t f4[] = {2, 5}, f6[] = {4, 3, 7};
        ok = strcmp(h.tensors[0].name, "bool") == 0 && h.tensors[0].type == DTCAST_BOOL &&
             strcmp(h.tensors[19].name, "f4") == 0 && dims_are(&h.tensors[19], 2, f4) &&
             h.tensors[19].count == 10 && h.tensors[19].type == DTCAST_FLOAT4E2M1 &&
             strcmp(h.tensors[21].name, "f6b") == 0 && dims_are(&h.tensors[21], 3, f6) &&
             h.tensors[21].count == 84 && h.tensors[21].type == DTCAST_FLOAT6E3M2FN &&
             h.tensors[13].type == DTCAST_COMPLEX64 && h.tensors[13].ndim == 0 &&
             h.tensors[16].type == DTCAST_FLOAT8E4M3FNUZ;
    }
    CHECK(ok, "parse.all_dtypes", "status %d %s", st, err.message);
    dt_st_header_free(&h);

    /* as the reference reads: unknown keys in an entry ignored, null metadata, any key order */
    st = parse("{\"__metadata__\":null,\"w\":{\"extra\":[1,{\"x\":null}],\"data_offsets\":[0,2],"
               "\"shape\":[2],\"dtype\":\"U8\",\"more\":\"x\"}}", 2, &h, &err);
    CHECK(st == DTCAST_OK && h.ntensors == 1 && !h.has_meta && h.tensors[0].end == 2,
          "parse.as_the_reference", "%s", err.message);
    dt_st_header_free(&h);
    st = parse("{\"__metadata__\":{}}", 0, &h, &err);
    CHECK(st == DTCAST_OK && h.has_meta && h.nmeta == 0, "parse.empty_metadata", "%s", err.message);
    dt_st_header_free(&h);
    /* zero-sized tensors at one offset, and between others: ties sorted by end, then name */
    st = parse("{" E("z2", "F32", "[0]", 4, 4) "," E("b", "F32", "[1]", 4, 8) ","
        E("a", "F32", "[1]", 0, 4)
               "," E("z1", "F32", "[0,3]", 4, 4) "}", 8, &h, &err);
    CHECK(st == DTCAST_OK && h.ntensors == 4 && strcmp(h.tensors[0].name, "a") == 0 &&
              strcmp(h.tensors[1].name, "z1") == 0 && strcmp(h.tensors[2].name, "z2") == 0 &&
              strcmp(h.tensors[3].name, "b") == 0,
          "parse.zero_sized_order", "%s", err.message);
    dt_st_header_free(&h);
    /* offsets up to 2^64 - 1 are read exactly */
    st = parse("{" E("a", "U8", "[0]", 18446744073709551615, 18446744073709551615) "}", 0, &h, &err);
    CHECK(st == DTCAST_ERR_BAD_FILE &&
              strstr(err.message, "bytes [0, 18446744073709551615) of the data belong to no tensor"),
          "parse.offset_u64_max", "%s", err.message);
    dt_st_header_free(&h);
    /* names: any UTF-8, escapes decoded */
    st = parse("{\"a\\\"b\\\\c\\/\\t\\u0001\\u00E9\\uD834\\uDD1E\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}",
               1, &h, &err);
    CHECK(st == DTCAST_OK && h.ntensors == 1 &&
              strcmp(h.tensors[0].name, "a\"b\\c/\t\x01\xC3\xA9\xF0\x9D\x84\x9E") == 0,
          "parse.name_escapes", "%s", err.message);
    dt_st_header_free(&h);
}

/* ---- every rule broken once --------------------------------------------------------------- */

static void test_parse_errors(void)
{
    const char *t;
    t = "[]";
    expect_bad("bad.not_object", t, 0, "the header is not a JSON object", 8);
    t = "{\"a\" {}}";
    expect_bad("bad.json_colon", t, 0, "safetensors: header: expected ':', found '{'",
               at_of(t, " {", 0) + 1);
    t = "{\"a\":{}";
    expect_bad("bad.json_truncated", t, 0, "expected ',' or '}', found the end of the text",
               8 + strlen(t));
    t = "";
    expect_bad("bad.json_empty", t, 0, "expected a value, found the end of the text", 8);
    t = "{} x";
    expect_bad("bad.json_trailing", t, 0, "expected the end of the text after the value, found 'x'",
               11);
    t = "{}\0   ";
    expect_bad_n("bad.json_nul_padding", t, 6, 0, DTCAST_ERR_BAD_FILE, "found byte 0x00", 10);
    t = "{\"a\xff\":1}";
    expect_bad("bad.utf8", t, 0, "safetensors: header: invalid UTF-8", 11);
    t = "{\"a\xc0\x80\":1}";
    expect_bad("bad.utf8_overlong", t, 0, "invalid UTF-8", 11);
    t = "{\"a\xed\xa0\x80\":1}";
    expect_bad("bad.utf8_surrogate", t, 0, "invalid UTF-8", 11);
    t = "{\"a\xf4\x90\x80\x80\":1}";
    expect_bad("bad.utf8_above_max", t, 0, "invalid UTF-8", 11);
    t = "{\"a\xe2\x82\":1}";
    expect_bad("bad.utf8_cut", t, 0, "invalid UTF-8", 11);
    t = "{\"\\ud800\":1}";
    expect_bad("bad.lone_surrogate", t, 0, "high surrogate in a \\u escape without a low surrogate",
               10);
    t = "{\"\\udc00\":1}";
    expect_bad("bad.lone_low_surrogate", t, 0, "lone low surrogate", 10);
    t = "{\"\\q\":1}";
    expect_bad("bad.escape", t, 0, "invalid escape '\\q'", 10);
    t = "{\"\\u12G4\":1}";
    expect_bad("bad.u_escape", t, 0, "invalid \\u escape", 10);
    t = "{\"a\tb\":1}";
    expect_bad("bad.control_char", t, 0, "control character 0x09 in a string", 11);
    t = "{\"a\":01}";
    expect_bad("bad.leading_zero", t, 0, "expected ',' or '}', found '1'", 14);
    t = "{\"a\":-}";
    expect_bad("bad.minus_alone", t, 0, "a digit must follow '-'", 14);
    t = "{\"a\":1.}";
    expect_bad("bad.dot_alone", t, 0, "a digit must follow '.'", 15);
    t = "{\"a\":1e}";
    expect_bad("bad.exp_alone", t, 0, "a digit must follow the exponent mark", 15);
    t = "{\"a\":tru}";
    expect_bad("bad.literal", t, 0, "expected a value, found 't'", 13);
    t = "{\"a\":[1,]}";
    expect_bad("bad.trailing_comma", t, 0, "expected a value, found ']'", 16);
    t = "{,}";
    expect_bad("bad.key_missing", t, 0, "expected a string key, found ','", 9);

    /* nesting: 64 levels parse (in an ignored key), 65 do not */
    char deep[400];
    strcpy(deep, "{\"w\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[0,1],\"x\":");
    size_t at = strlen(deep);
    for (int i = 0; i < 62; i++)
        strcat(deep, "[");
    for (int i = 0; i < 62; i++)
        strcat(deep, "]");
    strcat(deep, "}}");
    dt_st_header h;
    dt_io_error err;
    CHECK(parse(deep, 1, &h, &err) == DTCAST_OK && h.ntensors == 1, "deep.64_levels", "%s",
          err.message);
    dt_st_header_free(&h);
    deep[at] = 0;
    for (int i = 0; i < 63; i++)
        strcat(deep, "[");
    for (int i = 0; i < 63; i++)
        strcat(deep, "]");
    strcat(deep, "}}");
    expect_bad("deep.65_levels", deep, 1, "nesting deeper than 64 levels", 8 + at + 62);
    char *very = malloc(200001);
    memset(very, '[', 100000);
    memset(very + 100000, ']', 100000);
    very[200000] = 0;
    expect_bad("deep.100000_levels", very, 0, "nesting deeper than 64 levels", 8 + 64);
    free(very);

    /* names and metadata */
    t = "{" E("w", "U8", "[1]", 0, 1) "," E("w", "U8", "[1]", 1, 2) "}";
    expect_bad("bad.duplicate_name", t, 2, "duplicate tensor name 'w'", at_of(t, "\"w\"", 1));
    t = "{\"__metadata__\":{},\"__metadata__\":{}}";
    expect_bad("bad.duplicate_metadata", t, 0, "duplicate key '__metadata__'",
               at_of(t, "\"__metadata__\"", 1));
    t = "{\"__metadata__\":[]}";
    expect_bad("bad.metadata_not_object", t, 0, "__metadata__ is not an object", at_of(t, "[", 0));
    t = "{\"__metadata__\":{\"k\":1}}";
    expect_bad("bad.metadata_value", t, 0, "__metadata__ value of 'k' is not a string",
               at_of(t, "1", 0));
    t = "{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}";
    expect_bad("bad.metadata_duplicate_key", t, 0, "duplicate __metadata__ key 'k'",
               at_of(t, "\"k\"", 1));
    t = "{\"__metadata__\":{\"k\":\"a\\u0000b\"}}";
    expect_bad("bad.metadata_nul", t, 0, "__metadata__ entry 'k' holds a NUL byte",
               at_of(t, "\"k\"", 0));
    t = "{\"a\\u0000b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}";
    expect_bad("bad.name_nul", t, 1, "tensor name 'a\\x00b' holds a NUL byte", 9);

    /* entries */
    t = "{\"w\":[]}";
    expect_bad("bad.entry_not_object", t, 0, "tensor 'w': the entry is not an object", 13);
    t = "{\"w\":{\"shape\":[1],\"data_offsets\":[0,1]}}";
    expect_bad("bad.missing_dtype", t, 1, "tensor 'w': missing field \"dtype\"", 13);
    t = "{\"w\":{\"dtype\":\"U8\",\"data_offsets\":[0,1]}}";
    expect_bad("bad.missing_shape", t, 1, "tensor 'w': missing field \"shape\"", 13);
    t = "{\"w\":{\"dtype\":\"U8\",\"shape\":[1]}}";
    expect_bad("bad.missing_offsets", t, 1, "tensor 'w': missing field \"data_offsets\"", 13);
    t = "{\"w\":{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}";
    expect_bad("bad.duplicate_field", t, 1, "tensor 'w': duplicate field \"dtype\"",
               at_of(t, "\"dtype\"", 1));
    t = "{\"w\":{\"dtype\":8,\"shape\":[1],\"data_offsets\":[0,1]}}";
    expect_bad("bad.dtype_not_string", t, 1, "tensor 'w': dtype is not a string", at_of(t, "8", 0));
    t = "{\"w\":{\"dtype\":\"F7\",\"shape\":[1],\"data_offsets\":[0,1]}}";
    expect_bad("bad.dtype_unknown", t, 1, "tensor 'w': unknown dtype \"F7\"",
               at_of(t, "\"F7\"", 0));
    t = "{\"w\":{\"dtype\":\"f32\",\"shape\":[1],\"data_offsets\":[0,4]}}";
    expect_bad("bad.dtype_case", t, 4, "tensor 'w': unknown dtype \"f32\"", at_of(t, "\"f32\"", 0));
    t = "{\"w\":{\"dtype\":\"U8\",\"shape\":1,\"data_offsets\":[0,1]}}";
    expect_bad("bad.shape_not_array", t, 1, "tensor 'w': shape is not an array", at_of(t, "1,", 0));
    t = "{\"w\":{\"dtype\":\"U8\",\"shape\":[1,-2],\"data_offsets\":[0,1]}}";
    expect_bad("bad.shape_negative", t, 1, "tensor 'w': shape dimension 1 is not a non-negative integer",
               at_of(t, "-2", 0));
    t = "{\"w\":{\"dtype\":\"U8\",\"shape\":[2.0],\"data_offsets\":[0,2]}}";
    expect_bad("bad.shape_float", t, 2, "shape dimension 0 is not a non-negative integer",
               at_of(t, "2.0", 0));
    t = "{\"w\":{\"dtype\":\"U8\",\"shape\":[1e0],\"data_offsets\":[0,1]}}";
    expect_bad("bad.shape_exponent", t, 1, "shape dimension 0 is not a non-negative integer",
               at_of(t, "1e0", 0));
    t = "{\"w\":{\"dtype\":\"U8\",\"shape\":[\"1\"],\"data_offsets\":[0,1]}}";
    expect_bad("bad.shape_string", t, 1, "shape dimension 0 is not a non-negative integer",
               at_of(t, "\"1\"", 0));
    t = "{\"w\":{\"dtype\":\"U8\",\"shape\":[18446744073709551616],\"data_offsets\":[0,1]}}";
    expect_bad("bad.shape_u64_overflow", t, 1, "shape dimension 0 does not fit in 64 bits",
               at_of(t, "1844", 0));
    t = "{\"w\":{\"dtype\":\"U8\",\"shape\":[9223372036854775808],\"data_offsets\":[0,1]}}";
    expect_bad("bad.shape_over_int64", t, 1, "shape dimension 0 (9223372036854775808) is too large",
               at_of(t, "9223", 0));
    t = "{\"w\":{\"dtype\":\"U8\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,1]}}";
    expect_bad("bad.count_overflow", t, 1, "tensor 'w': the number of elements overflows 64 bits",
               at_of(t, "[4294967296", 0));
    t = "{\"test\":{\"dtype\":\"I32\",\"shape\":[2,9223372036854775807],\"data_offsets\":[0,16]}}";
    expect_bad("bad.bytes_overflow", t, 16,
               "tensor 'test': 18446744073709551614 elements of I32 overflow 64 bits", at_of(t, "[2,", 0));
    t = "{\"w\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"
        "\"data_offsets\":[0,1]}}";
    expect_bad("bad.too_many_dims", t, 1, "tensor 'w': shape has 33 dimensions, at most 32 supported",
               at_of(t, "[1,", 0));
    t = "{\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1,1]}}";
    expect_bad("bad.offsets_three", t, 1, "tensor 'w': data_offsets is not an array of two integers",
               at_of(t, "[0,", 0));
    t = "{\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":{}}}";
    expect_bad("bad.offsets_object", t, 1, "data_offsets is not an array of two integers",
               at_of(t, "{}", 0));
    t = "{\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1.0]}}";
    expect_bad("bad.offsets_float", t, 1, "tensor 'w': data_offsets end is not a non-negative integer",
               at_of(t, "1.0", 0));
    t = "{\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[18446744073709551616,1]}}";
    expect_bad("bad.offsets_overflow", t, 1, "tensor 'w': data_offsets begin does not fit in 64 bits",
               at_of(t, "1844", 0));
    t = "{\"w\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[4,0]}}";
    expect_bad("bad.end_before_begin", t, 4, "tensor 'w': data_offsets [4, 0] end before they begin",
               at_of(t, "[4,", 0));
    t = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,4]}}";
    expect_bad("bad.size_mismatch", t, 4,
               "tensor 'w': data_offsets [0, 4] hold 4 bytes, but 4 elements of F32 need 16", at_of(t, "[0,", 0));
    t = "{\"w\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,2]}}";
    expect_bad("bad.f4_odd", t, 2, "tensor 'w': 3 elements of F4 are not a whole number of bytes",
               at_of(t, "[3]", 0));
    t = "{\"w\":{\"dtype\":\"F6_E2M3\",\"shape\":[2,5],\"data_offsets\":[0,8]}}";
    expect_bad("bad.f6_not_whole", t, 8, "tensor 'w': 10 elements of F6_E2M3 are not a whole number of bytes",
               at_of(t, "[2,5]", 0));
    t = "{\"w\":{\"dtype\":\"F6_E2M3\",\"shape\":[4],\"data_offsets\":[0,4]}}";
    expect_bad("bad.f6_size", t, 4, "hold 4 bytes, but 4 elements of F6_E2M3 need 3",
               at_of(t, "[0,", 0));

    /* the ranges */
    t = "{" E("a", "F32", "[1]", 0, 4) "," E("b", "F32", "[1]", 8, 12) "}";
    expect_bad("bad.hole", t, 12, "bytes [4, 8) of the data belong to no tensor (a hole before tensor 'b')",
               at_of(t, "[8,", 0));
    t = "{" E("a", "F32", "[1]", 4, 8) "}";
    expect_bad("bad.hole_at_start", t, 8, "bytes [0, 4) of the data belong to no tensor (a hole before tensor 'a')",
               at_of(t, "[4,", 0));
    t = "{" E("a", "F32", "[2]", 0, 8) "," E("b", "F32", "[2]", 4, 12) "}";
    expect_bad("bad.overlap", t, 12, "tensor 'b': data_offsets [4, 12] overlap tensor 'a' (which ends at 8)",
               at_of(t, "[4,", 0));
    t = "{" E("a", "F32", "[2]", 0, 8) "," E("b", "F32", "[2]", 0, 8) "}";
    expect_bad("bad.same_range", t, 8, "tensor 'b': data_offsets [0, 8] overlap tensor 'a'",
               at_of(t, "[0,", 1));
    t = "{" E("a", "F32", "[2]", 0, 8) "," E("z", "F32", "[0]", 4, 4) "}";
    expect_bad("bad.empty_inside", t, 8, "tensor 'z': data_offsets [4, 4] overlap tensor 'a'",
               at_of(t, "[4,", 0));
    t = "{" E("a", "F32", "[2]", 0, 8) "}";
    expect_bad("bad.trailing_data", t, 9, "1 bytes after the last tensor's data (the data is 9 bytes, the tensors end at 8)",
               8 + strlen(t) + 8);
    expect_bad("bad.truncated_data", t, 7, "tensor 'a': data_offsets end 8 is past the end of the data (7 bytes",
               at_of(t, "[0,", 0));
    t = "{}";
    expect_bad("bad.data_without_tensors", t, 3, "3 bytes after the last tensor's data", 10);
    /* the reference's test_metadata_incomplete_buffer, test_invalid_info, test_json_attack */
    t = "{\"test\":{\"dtype\":\"I32\",\"shape\":[2,2],\"data_offsets\":[0,16]}}";
    expect_bad("bad.reference_extra_data", t, 16 + 34, "34 bytes after the last tensor's data",
               8 + strlen(t) + 16);
    expect_bad("bad.reference_missing_data", t, 14, "past the end of the data (14 bytes",
               at_of(t, "[0,", 0));
    t = "{\"test\":{\"dtype\":\"I32\",\"shape\":[2,2],\"data_offsets\":[0, 4]}}";
    expect_bad("bad.reference_invalid_info", t, 4, "hold 4 bytes, but 4 elements of I32 need 16",
               at_of(t, "[0,", 0));
    t = "{" E("weight_0", "F32", "[2,2]", 0, 16) "," E("weight_1", "F32", "[2,2]", 0, 16) "}";
    expect_bad("bad.reference_json_attack", t, 16, "overlap tensor 'weight_0'", at_of(t, "[0,", 1));

    /* names in messages stay one short line */
    t = "{\"a\\nb'c\\u0007\":[]}";
    expect_bad("bad.name_shown_escaped", t, 0, "tensor 'a\\x0Ab\\x27c\\x07': the entry",
               at_of(t, "[]", 0));
    t = "{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\":[]}";
    expect_bad("bad.name_shown_cut", t, 0, "tensor 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...': the entry",
               at_of(t, "[]", 0));
    t = "{\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\":"
        "{\"dtype\":\"F8_E8M0\",\"shape\":[2305843009213693951],"
        "\"data_offsets\":[18446744073709551615,18446744073709551615]}}";
    expect_bad("bad.long_message_keeps_offset", t, 0, "safetensors: tensor 'xxxxxxxxxxxx",
               at_of(t, "[1844", 0));
    t = "{" E("\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001", "U64", "[4]", 0, 32) ","
        E("\\u0002\\u0002\\u0002\\u0002\\u0002\\u0002\\u0002\\u0002\\u0002\\u0002\\u0002\\u0002\\u0002\\u0002\\u0002", "U64", "[2]", 16, 32) "}";
    expect_bad("bad.long_overlap_keeps_offset", t, 32, "overlap tensor '\\x01\\x01",
               at_of(t, "[16,", 0));
    /* the parse arguments themselves */
    CHECK(dt_st_parse((const uint8_t *)"{}", 2, 9, &h, &err) == DTCAST_ERR_BAD_FILE &&
              header_empty(&h),
          "bad.file_size_too_small", "%s", err.message);
}

/* ---- F6 ----------------------------------------------------------------------------------- */

/* The bit stream, one bit at a time (independent of the module's arithmetic). */
static void f6_pack_bits(uint8_t *dst, const uint8_t *src, size_t count)
{
    memset(dst, 0, (6 * count + 7) / 8);
    for (size_t i = 0; i < count; i++)
        for (unsigned b = 0; b < 6; b++)
            if (src[i] >> b & 1)
                dst[(6 * i + b) / 8] |= (uint8_t)(1u << ((6 * i + b) % 8));
}

static void test_f6(void)
{
    /* every group of four 6-bit values against the formula of docs/files.md, "F4 and F6 layouts", and back */
    int ok = 1;
    uint8_t src[4], packed[3], back[4];
    for (unsigned v = 0; v < 1u << 24 && ok; v++) {
        unsigned e0 = v & 63, e1 = v >> 6 & 63, e2 = v >> 12 & 63, e3 = v >> 18;
        src[0] = (uint8_t)e0, src[1] = (uint8_t)e1, src[2] = (uint8_t)e2, src[3] = (uint8_t)e3;
        dt_st_f6_to_bytes(packed, src, 4);
        dt_st_f6_from_bytes(back, packed, 4);
        ok = packed[0] == (uint8_t)(e0 | e1 << 6) && packed[1] == (uint8_t)(e1 >> 2 | e2 << 4) &&
             packed[2] == (uint8_t)(e2 >> 4 | e3 << 2) && memcmp(back, src, 4) == 0;
        if (!ok)
            printf("# group %06X: %02X %02X %02X\n", v, packed[0], packed[1], packed[2]);
    }
    CHECK(ok, "f6.every_group", "see above");

    /* counts 0..9, every value in every position, others pseudo-random; no byte written past
     * (6 * count + 7) / 8; high bits of the input ignored */
    uint32_t seed = 12345;
    ok = 1;
    for (size_t count = 0; count <= 9 && ok; count++)
        for (size_t pos = 0; pos < (count ? count : 1) && ok; pos++)
            for (unsigned v = 0; v < 64 && ok; v++) {
                uint8_t in[9], in_dirty[9], want[8], got[10], out[10];
                for (size_t i = 0; i < count; i++) {
                    seed = seed * 1103515245u + 12345u;
                    in[i] = (uint8_t)(seed >> 16 & 63);
                    in_dirty[i] = (uint8_t)(in[i] | (seed >> 8 & 0xC0));
                }
                if (count) {
                    in[pos] = (uint8_t)v;
                    in_dirty[pos] = (uint8_t)(v | 0xC0);
                }
                size_t nb = (6 * count + 7) / 8;
                f6_pack_bits(want, in, count);
                memset(got, 0xA5, sizeof got);
                dt_st_f6_to_bytes(got, in_dirty, count);
                memset(out, 0x5A, sizeof out);
                dt_st_f6_from_bytes(out, got, count);
                ok = memcmp(got, want, nb) == 0 && got[nb] == 0xA5 && memcmp(out, in, count) == 0 &&
                     out[count] == 0x5A;
                if (!ok)
                    printf("# count %zu pos %zu value %u\n", count, pos, v);
            }
    CHECK(ok, "f6.counts_0_to_9", "see above");
    /* unpacking ignores the padding bits of a partial last byte */
    uint8_t one[1] = {0xFF}, e[1];
    dt_st_f6_from_bytes(e, one, 1);
    CHECK(e[0] == 63, "f6.padding_ignored", "%u", e[0]);
}

/* ---- the writer --------------------------------------------------------------------------- */

static dt_st_tensor tensor(const char *name, dtcast_type type, int ndim, const int64_t *dims)
{
    dt_st_tensor t;
    memset(&t, 0, sizeof t);
    t.name = (char *)name;
    t.type = type;
    t.ndim = ndim;
    for (int i = 0; i < ndim; i++)
        t.dims[i] = dims[i];
    return t;
}

/* Builds and compares with the expected prefix: 8-byte N, then text. */
static void expect_prefix(const char *name, dt_st_tensor *ts, size_t n, int has_meta,
                          const dt_st_meta *meta, size_t nmeta, const char *text)
{
    uint8_t *prefix;
    size_t len;
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st = dt_st_build(ts, n, has_meta, meta, nmeta, &prefix, &len, &err);
    size_t tl = strlen(text);
    uint64_t N = 0;
    for (int i = 7; st == DTCAST_OK && i >= 0; i--)
        N = N << 8 | prefix[i];
    int ok = st == DTCAST_OK && len == 8 + tl && N == tl && memcmp(prefix + 8, text, tl) == 0;
    CHECK(ok, name, "status %d %s: got \"%.*s\" (N %" PRIu64 "), want \"%s\"", st, err.message,
          st == DTCAST_OK ? (int)(len - 8) : 0, st == DTCAST_OK ? (const char *)prefix + 8 : "", N, text);
    free(prefix);
}

static void test_writer(void)
{
    /* the reference's test_serialization, test_serialization_forced_alignement,
     * test_serialization_fp4 and test_empty */
    static const int64_t s123[] = {1, 2, 3}, s1123[] = {1, 1, 2, 3}, s12[] = {1, 2};
    dt_st_tensor t1 = tensor("attn.0", DTCAST_FLOAT32, 3, s123);
    expect_prefix("write.reference_serialization", &t1, 1, 0, NULL, 0,
                  "{\"attn.0\":{\"dtype\":\"F32\",\"shape\":[1,2,3],\"data_offsets\":[0,24]}}");
    CHECK(t1.begin == 0 && t1.end == 24 && t1.count == 6, "write.offsets_set", "%" PRIu64, t1.end);
    dt_st_tensor t2 = tensor("attn0", DTCAST_FLOAT32, 4, s1123);
    expect_prefix("write.reference_alignment", &t2, 1, 0, NULL, 0,
                  "{\"attn0\":{\"dtype\":\"F32\",\"shape\":[1,1,2,3],\"data_offsets\":[0,24]}}       ");
    dt_st_tensor t3 = tensor("attn.0", DTCAST_FLOAT4E2M1, 2, s12);
    expect_prefix("write.reference_fp4", &t3, 1, 0, NULL, 0,
                  "{\"attn.0\":{\"dtype\":\"F4\",\"shape\":[1,2],\"data_offsets\":[0,1]}}    ");
    expect_prefix("write.reference_empty", NULL, 0, 0, NULL, 0, "{}      ");
    dt_st_meta pt = {"framework", "pt"};
    expect_prefix("write.reference_empty_metadata", NULL, 0, 1, &pt, 1,
                  "{\"__metadata__\":{\"framework\":\"pt\"}}     ");
    expect_prefix("write.empty_metadata_object", NULL, 0, 1, NULL, 0, "{\"__metadata__\":{}}     ");

    /* all 22 dtypes, names given in an order unlike the result; checked against huggingface
     * safetensors 0.8.0's serialize() of the same tensors */
    static const int64_t four[] = {4};
    dt_st_tensor all[22];
    static const char *const names[22] = {"t00", "t01", "t02", "t03", "t04", "t05", "t06", "t07",
                                          "t08", "t09", "t10", "t11", "t12", "t13", "t14", "t15",
                                          "t16", "t17", "t18", "t19", "t20", "t21"};
    for (int i = 0; i < 22; i++)
        all[i] = tensor(names[i], all_dtypes[i].type, 1, four);
    dt_st_meta m2[2] = {{"b", "2"}, {"a", "1"}};
    expect_prefix("write.all_dtypes_order", all, 22, 1, m2, 2,
                  "{\"__metadata__\":{\"b\":\"2\",\"a\":\"1\"},"
                  E("t07", "U64", "[4]", 0, 32) "," E("t08", "I64", "[4]", 32, 64) ","
                  E("t12", "F64", "[4]", 64, 96) "," E("t13", "C64", "[4]", 96, 128) ","
                  E("t11", "F32", "[4]", 128, 144) "," E("t05", "U32", "[4]", 144, 160) ","
                  E("t06", "I32", "[4]", 160, 176) "," E("t10", "BF16", "[4]", 176, 184) ","
                  E("t09", "F16", "[4]", 184, 192) "," E("t03", "U16", "[4]", 192, 200) ","
                  E("t04", "I16", "[4]", 200, 208) "," E("t17", "F8_E5M2FNUZ", "[4]", 208, 212) ","
                  E("t16", "F8_E4M3FNUZ", "[4]", 212, 216) ","
                  E("t18", "F8_E8M0", "[4]", 216, 220) ","
                  E("t14", "F8_E4M3", "[4]", 220, 224) "," E("t15", "F8_E5M2", "[4]", 224, 228) ","
                  E("t02", "I8", "[4]", 228, 232) "," E("t01", "U8", "[4]", 232, 236) ","
                  E("t21", "F6_E3M2", "[4]", 236, 239) "," E("t20", "F6_E2M3", "[4]", 239, 242) ","
                  E("t19", "F4", "[4]", 242, 244) "," E("t00", "BOOL", "[4]", 244, 248) "} ");

    /* same dtype: names by bytes ascending; 0-d and empty shapes; escaping as serde_json */
    static const int64_t zero[] = {0}, big[] = {1, 2305843009213693951};
    dt_st_tensor same[6] = {
        tensor("b", DTCAST_UINT8, 0, NULL),
        tensor("a.b", DTCAST_UINT8, 1, zero),
        tensor("\xC3\xA9", DTCAST_UINT8, 0, NULL),
        tensor("B", DTCAST_UINT8, 0, NULL),
        tensor("a\"\\\b\f\n\r\t\x01\x1f\x7f/", DTCAST_UINT8, 0, NULL),
        tensor("ab", DTCAST_BOOL, 2, big),
    };
    dt_st_meta esc = {"k\"\x02", "v\xE2\x82\xAC\\"};
    expect_prefix("write.names_and_escapes", same, 6, 1, &esc, 1,
                  "{\"__metadata__\":{\"k\\\"\\u0002\":\"v\xE2\x82\xAC\\\\\"},"
                  E("B", "U8", "[]", 0, 1) ","
                  E("a\\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001f\x7f/", "U8", "[]", 1, 2) ","
                  E("a.b", "U8", "[0]", 2, 2) "," E("b", "U8", "[]", 2, 3) ","
                  E("\xC3\xA9", "U8", "[]", 3, 4) ","
                  E("ab", "BOOL", "[1,2305843009213693951]", 4, 2305843009213693955) "}     ");

    /* refusals */
    uint8_t *prefix = (uint8_t *)"x";
    size_t len = 1;
    dt_io_error err;
    dt_st_tensor bad = tensor("w", DTCAST_FLOAT8E4M3, 1, four);
    CHECK(dt_st_build(&bad, 1, 0, NULL, 0, &prefix, &len, &err) == DTCAST_ERR_UNSUPPORTED &&
              !prefix &&
              len == 0 && strstr(err.message, "safetensors cannot hold float8e4m3; it holds bool,uint8,") &&
              strstr(err.message, ",float6e3m2fn"),
          "write.refuse_type", "%s", err.message);
    static const int64_t three[] = {3};
    bad = tensor("w", DTCAST_FLOAT4E2M1, 1, three);
    CHECK(dt_st_build(&bad, 1, 0, NULL, 0, &prefix, &len, &err) == DTCAST_ERR_INVALID_ARGUMENT &&
              strstr(err.message, "3 elements of F4 are not a whole number of bytes"),
          "write.refuse_f4_odd", "%s", err.message);
    dt_st_tensor dup[3] = {tensor("w", DTCAST_FLOAT32, 0, NULL), tensor("x", DTCAST_FLOAT32, 0, NULL),
                           tensor("w", DTCAST_INT8, 0, NULL)};
    CHECK(dt_st_build(dup, 3, 0, NULL, 0, &prefix, &len, &err) == DTCAST_ERR_INVALID_ARGUMENT &&
              strstr(err.message, "duplicate tensor name 'w'"),
          "write.refuse_duplicate", "%s", err.message);
    dt_st_meta mdup[2] = {{"k", "1"}, {"k", "2"}};
    CHECK(dt_st_build(NULL, 0, 1, mdup, 2, &prefix, &len, &err) == DTCAST_ERR_INVALID_ARGUMENT &&
              strstr(err.message, "duplicate __metadata__ key 'k'"),
          "write.refuse_duplicate_metadata", "%s", err.message);
    bad = tensor("\xff", DTCAST_FLOAT32, 0, NULL);
    CHECK(dt_st_build(&bad, 1, 0, NULL, 0, &prefix, &len, &err) == DTCAST_ERR_INVALID_ARGUMENT,
          "write.refuse_non_utf8", "%s", err.message);
    static const int64_t neg[] = {-1};
    bad = tensor("w", DTCAST_FLOAT32, 1, neg);
    CHECK(dt_st_build(&bad, 1, 0, NULL, 0, &prefix, &len, &err) == DTCAST_ERR_INVALID_ARGUMENT,
          "write.refuse_negative_dim", "%s", err.message);
    static const int64_t huge[] = {INT64_MAX, INT64_MAX};
    bad = tensor("w", DTCAST_FLOAT32, 2, huge);
    CHECK(dt_st_build(&bad, 1, 0, NULL, 0, &prefix, &len, &err) == DTCAST_ERR_INVALID_ARGUMENT,
          "write.refuse_huge_shape", "%s", err.message);
    static const int64_t half[] = {INT64_MAX};
    dt_st_tensor two[2] = {tensor("a", DTCAST_UINT64, 1, half), tensor("b", DTCAST_UINT64, 1, half)};
    CHECK(dt_st_build(two, 2, 0, NULL, 0, &prefix, &len, &err) == DTCAST_ERR_SIZE_OVERFLOW,
          "write.refuse_total_overflow", "%s", err.message);
}

/* ---- build -> parse ----------------------------------------------------------------------- */

static void test_round_trip(void)
{
    static const int64_t shapes[5][3] = {{0}, {0}, {3}, {2, 5}, {4, 3, 7}};
    static const int ndims[5] = {0, 1, 1, 2, 3};
    dt_st_tensor ts[22 * 5];
    char names[22 * 5][16];
    size_t n = 0;
    for (int d = 0; d < 22; d++)
        for (int s = 0; s < 5; s++) {
            dt_st_tensor t = tensor(NULL, all_dtypes[d].type, ndims[s], shapes[s]);
            uint64_t nb;
            t.count = 1;
            for (int k = 0; k < ndims[s]; k++)
                t.count *= (uint64_t)shapes[s][k];
            if (dt_st_nbytes(t.type, t.count, &nb, NULL) != DTCAST_OK)
                continue; /* F4 with 3 elements, F6 with 1, 3 or 10 */
            snprintf(names[n], sizeof names[n], "%s.%d", all_dtypes[d].st, s);
            t.name = names[n];
            ts[n++] = t;
        }
    dt_st_meta meta[2] = {{"z", "last?"}, {"a", "\"quoted\"\n"}};
    uint8_t *prefix;
    size_t len;
    dt_io_error err;
    dtcast_status st = dt_st_build(ts, n, 1, meta, 2, &prefix, &len, &err);
    dt_st_header h;
    memset(&h, 0, sizeof h);
    if (st == DTCAST_OK)
        st = dt_st_parse(prefix + 8, len - 8, len + ts[n - 1].end, &h, &err);
    int ok = st == DTCAST_OK && h.ntensors == n && h.has_meta && h.nmeta == 2 &&
             strcmp(h.meta[0].key, "z") == 0 && strcmp(h.meta[1].value, "\"quoted\"\n") == 0 &&
             h.data_start == len;
    for (size_t i = 0; ok && i < n; i++) {
        /* ties of empty tensors: the parse orders by name, the writer by dtype first */
        const dt_st_tensor *a = &ts[i], *b = NULL;
        for (size_t k = 0; k < h.ntensors; k++)
            if (strcmp(h.tensors[k].name, a->name) == 0)
                b = &h.tensors[k];
        ok = b && b->type == a->type && dims_are(b, a->ndim, a->dims) && b->count == a->count &&
             b->begin == a->begin && b->end == a->end;
        if (!ok)
            printf("# %s\n", a->name);
    }
    for (size_t i = 1; ok && i < h.ntensors; i++)
        ok = h.tensors[i].begin >= h.tensors[i - 1].begin;
    CHECK(ok, "round_trip.all_dtypes_and_shapes", "status %d: %s (%zu tensors)", st, err.message,
          n);
    dt_st_header_free(&h);
    free(prefix);
}

/* ---- the JSON reader itself --------------------------------------------------------------- */

static void test_json(void)
{
    dt_json_doc doc;
    dt_io_error err;
    const char *t = " {\"a\" : [1, -2, 3.5e-1, 18446744073709551615, 18446744073709551616, 0, true,"
                    " false, null, \"x\\u0041\"], \"b\": {}, \"a\": []} ";
    dtcast_status st = dt_json_parse((const uint8_t *)t, strlen(t), 100, NULL, &doc, &err);
    int ok = st == DTCAST_OK && doc.nodes[0].kind == DT_JSON_OBJECT && doc.nodes[0].count == 3;
    const dt_json_node *a = ok ? dt_json_get(&doc, &doc.nodes[0], "a") : NULL;
    if (ok && a && a->kind == DT_JSON_ARRAY && a->count == 10) {
        const dt_json_node *v[10];
        v[0] = dt_json_first(&doc, a);
        for (int i = 1; i < 10; i++)
            v[i] = dt_json_next(&doc, v[i - 1]);
        ok = v[0]->num == DT_JSON_NUM_UINT && v[0]->u == 1 && v[1]->num == DT_JSON_NUM_OTHER &&
             v[2]->num == DT_JSON_NUM_OTHER && v[3]->num == DT_JSON_NUM_UINT &&
             v[3]->u == UINT64_MAX && v[4]->num == DT_JSON_NUM_OVERFLOW &&
             v[5]->num == DT_JSON_NUM_UINT && v[5]->u == 0 && v[6]->kind == DT_JSON_TRUE &&
             v[7]->kind == DT_JSON_FALSE && v[8]->kind == DT_JSON_NULL &&
             v[9]->kind == DT_JSON_STRING && strcmp(dt_json_str(&doc, v[9]), "xA") == 0 &&
             v[9]->len == 2 && dt_json_next(&doc, v[9]) == NULL &&
             v[2]->at == (uint32_t)(strstr(t, "3.5e-1") - t) && v[2]->end == v[2]->at + 6;
    } else {
        ok = 0;
    }
    CHECK(ok, "json.values", "%s", err.message);
    dtcast_status dst;
    const dt_json_node *dup = ok ? dt_json_duplicate(&doc, &doc.nodes[0], &dst) : NULL;
    CHECK(dup && dup->kind == DT_JSON_ARRAY && dup->count == 0 &&
              dup->key_at == (uint32_t)(strstr(t, "\"a\": [") - t),
          "json.duplicate_found", "not found");
    if (st == DTCAST_OK)
        dt_json_free(&doc);
    t = "{\"a\":1,\"ab\":2,\"a\\u0000\":3,\"b\":{\"a\":1,\"a\":2}}";
    st = dt_json_parse((const uint8_t *)t, strlen(t), 0, NULL, &doc, &err);
    CHECK(st == DTCAST_OK && !dt_json_duplicate(&doc, &doc.nodes[0], &dst) && dst == DTCAST_OK,
          "json.no_duplicate", "%s", err.message);
    if (st == DTCAST_OK)
        dt_json_free(&doc);
    st = dt_json_parse((const uint8_t *)"{\"a\" 1}", 7, 116, NULL, &doc, &err);
    CHECK(st == DTCAST_ERR_BAD_FILE &&
              strcmp(err.message, "json: expected ':', found '1' at byte 121") == 0 &&
              !doc.nodes && !doc.pool,
          "json.error_offset", "%s", err.message);
    st = dt_json_parse((const uint8_t *)"\"\\ud83d\\ude00\\u00e9\\u20ac\"", 26, 0, NULL, &doc, &err);
    CHECK(st == DTCAST_OK && doc.nodes[0].len == 9 &&
              memcmp(dt_json_str(&doc, &doc.nodes[0]), "\xF0\x9F\x98\x80\xC3\xA9\xE2\x82\xAC", 10) == 0,
          "json.surrogate_pair", "%s", err.message);
    if (st == DTCAST_OK)
        dt_json_free(&doc);
    CHECK(dt_json_utf8_check((const uint8_t *)"a\xC3\xA9\xF4\x8F\xBF\xBF", 7) == 7 &&
              dt_json_utf8_check((const uint8_t *)"ab\xE0\x9F\x80", 5) == 2 &&
              dt_json_utf8_check((const uint8_t *)"\xF0\x8F\xBF\xBF", 4) == 0 &&
              dt_json_utf8_check((const uint8_t *)"\x80", 1) == 0,
          "json.utf8_check", "wrong offsets");

    /* writing: serde_json's and Python's escapes */
    dt_json_buf b = {0};
    const char *s = "a\"\\/\b\f\n\r\t\x01\x7f\xC3\xA9\xF0\x9F\x98\x80";
    dt_json_put_string(&b, s, strlen(s), 0);
    dt_json_puts(&b, " ");
    dt_json_put_string(&b, s, strlen(s), 1);
    dt_json_put(&b, "", 1);
    const char *want = "\"a\\\"\\\\/\\b\\f\\n\\r\\t\\u0001\x7f\xC3\xA9\xF0\x9F\x98\x80\" "
                       "\"a\\\"\\\\/\\b\\f\\n\\r\\t\\u0001\\u007f\\u00e9\\ud83d\\ude00\"";
    CHECK(!b.oom && strcmp(b.data, want) == 0, "json.write_escapes", "%s", b.data);
    free(b.data);
}

/* ---- the index ---------------------------------------------------------------------------- */

static void test_index(void)
{
    const char *t =
        "{\"metadata\": {\"total_size\": 123, \"format\": \"pt\", \"nested\": {\"b\": [1, 2.5e3, {}, []],"
        " \"a\": null, \"\\u00e9\": \"\\u20ac\"}}, \"weight_map\": {\"z.w\": \"m-2.safetensors\","
        " \"a.w\": \"m-1.safetensors\", \"\\u00e9\": \"m-3.safetensors\", \"b.w\": \"m-1.safetensors\","
        " \"c.w\": \"m-2.safetensors\"}, \"extra\": true}";
    dt_st_index ix;
    dt_io_error err;
    dtcast_status st = dt_st_index_parse((const uint8_t *)t, strlen(t), &ix, &err);
    int ok = st == DTCAST_OK && ix.nentries == 5 && ix.nshards == 3 && ix.has_total_size &&
             ix.total_size == 123 && ix.nmeta == 2 && ix.nextra == 1;
    if (ok)
        ok = strcmp(ix.entries[0].name, "z.w") == 0 && ix.entries[0].shard == 0 &&
             strcmp(ix.entries[1].name, "a.w") == 0 && ix.entries[1].shard == 1 &&
             strcmp(ix.entries[2].name, "\xC3\xA9") == 0 && ix.entries[2].shard == 2 &&
             ix.entries[3].shard == 1 && ix.entries[4].shard == 0 &&
             strcmp(ix.shards[0], "m-2.safetensors") == 0 &&
             strcmp(ix.shards[1], "m-1.safetensors") == 0 &&
             strcmp(ix.shards[2], "m-3.safetensors") == 0 &&
             strcmp(ix.meta[0].key, "format") == 0 &&
             strcmp(ix.meta[0].json, "\"pt\"") == 0 && strcmp(ix.meta[1].key, "nested") == 0 &&
             strncmp(ix.meta[1].json, "{\"b\": [1, 2.5e3", 15) == 0 &&
             strcmp(ix.extra[0].key, "extra") == 0 && strcmp(ix.extra[0].json, "true") == 0;
    CHECK(ok, "index.parse", "status %d: %s", st, err.message);
    uint8_t *buf = NULL;
    size_t len = 0;
    if (st == DTCAST_OK)
        st = dt_st_index_build(&ix, 18446744073709551615u, &buf, &len, &err);
    /* what Python prints for json.dumps(index, indent=2, sort_keys=True) + "\n" */
    const char *want =
        "{\n"
        "  \"extra\": true,\n"
        "  \"metadata\": {\n"
        "    \"format\": \"pt\",\n"
        "    \"nested\": {\n"
        "      \"a\": null,\n"
        "      \"b\": [\n"
        "        1,\n"
        "        2.5e3,\n"
        "        {},\n"
        "        []\n"
        "      ],\n"
        "      \"\\u00e9\": \"\\u20ac\"\n"
        "    },\n"
        "    \"total_size\": 18446744073709551615\n"
        "  },\n"
        "  \"weight_map\": {\n"
        "    \"a.w\": \"m-1.safetensors\",\n"
        "    \"b.w\": \"m-1.safetensors\",\n"
        "    \"c.w\": \"m-2.safetensors\",\n"
        "    \"z.w\": \"m-2.safetensors\",\n"
        "    \"\\u00e9\": \"m-3.safetensors\"\n"
        "  }\n"
        "}\n";
    CHECK(st == DTCAST_OK && len == strlen(want) && memcmp(buf, want, len) == 0, "index.build",
          "status %d %s: got\n%.*s", st, err.message, (int)len, buf ? (const char *)buf : "");
    free(buf);
    dt_st_index_free(&ix);

    /* the smallest index: no metadata, empty weight_map */
    t = "{\"weight_map\":{}}";
    st = dt_st_index_parse((const uint8_t *)t, strlen(t), &ix, &err);
    buf = NULL;
    if (st == DTCAST_OK)
        st = dt_st_index_build(&ix, 0, &buf, &len, &err);
    want = "{\n  \"metadata\": {\n    \"total_size\": 0\n  },\n  \"weight_map\": {}\n}\n";
    CHECK(st == DTCAST_OK && !ix.has_total_size && len == strlen(want) &&
              memcmp(buf, want, len) == 0,
          "index.minimal", "status %d %s: got\n%.*s", st, err.message, (int)len, buf ? (const char *)buf : "");
    free(buf);
    dt_st_index_free(&ix);

    static const struct {
        const char *name, *text, *what;
    } bad[] = {
        {"index.bad.not_object", "[]", "not a JSON object at byte 0"},
        {"index.bad.no_weight_map", "{\"metadata\":{}}", "no \"weight_map\" object at byte 0"},
        {"index.bad.weight_map_array", "{\"weight_map\":[]}", "no \"weight_map\" object at byte 14"},
        {"index.bad.slash", "{\"weight_map\":{\"a\":\"../m.safetensors\"}}",
         "the shard of tensor 'a' is not a plain file name at byte 19"},
        {"index.bad.absolute", "{\"weight_map\":{\"a\":\"/m.safetensors\"}}", "not a plain file name"},
        {"index.bad.backslash", "{\"weight_map\":{\"a\":\"x\\\\m.safetensors\"}}", "not a plain file name"},
        {"index.bad.dotdot", "{\"weight_map\":{\"a\":\"..\"}}", "not a plain file name"},
        {"index.bad.dot", "{\"weight_map\":{\"a\":\".\"}}", "not a plain file name"},
        {"index.bad.empty_shard", "{\"weight_map\":{\"a\":\"\"}}", "not a plain file name"},
        {"index.bad.nul_shard", "{\"weight_map\":{\"a\":\"m\\u0000\"}}", "not a plain file name"},
        {"index.bad.shard_not_string", "{\"weight_map\":{\"a\":1}}", "not a plain file name"},
        {"index.bad.duplicate_name", "{\"weight_map\":{\"a\":\"m\",\"a\":\"n\"}}", "duplicate key 'a' at byte 23"},
        {"index.bad.duplicate_top", "{\"weight_map\":{},\"weight_map\":{}}", "duplicate key 'weight_map' at byte 17"},
        {"index.bad.metadata_array", "{\"metadata\":[],\"weight_map\":{}}", "\"metadata\" is not an object at byte 12"},
        {"index.bad.metadata_duplicate", "{\"metadata\":{\"x\":1,\"x\":2},\"weight_map\":{}}",
         "duplicate metadata key 'x' at byte 19"},
        {"index.bad.json", "{\"weight_map\":{}", "safetensors index: expected ',' or '}', found the end of the text at byte 16"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        st = dt_st_index_parse((const uint8_t *)bad[i].text, strlen(bad[i].text), &ix, &err);
        CHECK(st == DTCAST_ERR_BAD_FILE && strstr(err.message, bad[i].what) && ix.nentries == 0 &&
                  !ix.entries && !ix.shards && !ix.meta && !ix.extra,
              bad[i].name, "status %d: %s", st, err.message);
    }
}

int main(void)
{
    test_dtypes();
    test_json_length();
    test_parse_valid();
    test_parse_errors();
    test_f6();
    test_writer();
    test_round_trip();
    test_json();
    test_index();
    return CHECK_EXIT();
}
