/* The type table: every format as data, its names and aliases, and the queries over it. */
#include "internal.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Indexed by type code, so dt_format_of is one lookup. Codes without a type have no name.
 *                                  type                      name                 onnx name          class         bits stride e  m   bias  NaN style    part */
static const dt_format formats[DTCAST_BCOMPLEX32 + 1] = {
    [DTCAST_BOOL] =                {DTCAST_BOOL,              "bool",              "BOOL",            DT_TC_BOOL,   8,  8,  0, 0,  0,   DT_NAN_NONE, DTCAST_UNDEFINED},
    [DTCAST_UINT1] =               {DTCAST_UINT1,             "uint1",             NULL,              DT_TC_UINT,   1,  1,  0, 0,  0,   DT_NAN_NONE, DTCAST_UNDEFINED},
    [DTCAST_UINT2] =               {DTCAST_UINT2,             "uint2",             "UINT2",           DT_TC_UINT,   2,  2,  0, 0,  0,   DT_NAN_NONE, DTCAST_UNDEFINED},
    [DTCAST_INT2] =                {DTCAST_INT2,              "int2",              "INT2",            DT_TC_SINT,   2,  2,  0, 0,  0,   DT_NAN_NONE, DTCAST_UNDEFINED},
    [DTCAST_UINT4] =               {DTCAST_UINT4,             "uint4",             "UINT4",           DT_TC_UINT,   4,  4,  0, 0,  0,   DT_NAN_NONE, DTCAST_UNDEFINED},
    [DTCAST_INT4] =                {DTCAST_INT4,              "int4",              "INT4",            DT_TC_SINT,   4,  4,  0, 0,  0,   DT_NAN_NONE, DTCAST_UNDEFINED},
    [DTCAST_UINT8] =               {DTCAST_UINT8,             "uint8",             "UINT8",           DT_TC_UINT,   8,  8,  0, 0,  0,   DT_NAN_NONE, DTCAST_UNDEFINED},
    [DTCAST_INT8] =                {DTCAST_INT8,              "int8",              "INT8",            DT_TC_SINT,   8,  8,  0, 0,  0,   DT_NAN_NONE, DTCAST_UNDEFINED},
    [DTCAST_UINT16] =              {DTCAST_UINT16,            "uint16",            "UINT16",          DT_TC_UINT,  16, 16,  0, 0,  0,   DT_NAN_NONE, DTCAST_UNDEFINED},
    [DTCAST_INT16] =               {DTCAST_INT16,             "int16",             "INT16",           DT_TC_SINT,  16, 16,  0, 0,  0,   DT_NAN_NONE, DTCAST_UNDEFINED},
    [DTCAST_UINT32] =              {DTCAST_UINT32,            "uint32",            "UINT32",          DT_TC_UINT,  32, 32,  0, 0,  0,   DT_NAN_NONE, DTCAST_UNDEFINED},
    [DTCAST_INT32] =               {DTCAST_INT32,             "int32",             "INT32",           DT_TC_SINT,  32, 32,  0, 0,  0,   DT_NAN_NONE, DTCAST_UNDEFINED},
    [DTCAST_UINT64] =              {DTCAST_UINT64,            "uint64",            "UINT64",          DT_TC_UINT,  64, 64,  0, 0,  0,   DT_NAN_NONE, DTCAST_UNDEFINED},
    [DTCAST_INT64] =               {DTCAST_INT64,             "int64",             "INT64",           DT_TC_SINT,  64, 64,  0, 0,  0,   DT_NAN_NONE, DTCAST_UNDEFINED},
    [DTCAST_FLOAT4E2M1] =          {DTCAST_FLOAT4E2M1,        "float4e2m1",        "FLOAT4E2M1",      DT_TC_FLOAT,  4,  4,  2, 1,  1,   DT_NAN_NONE, DTCAST_UNDEFINED},
    [DTCAST_FLOAT6E2M3FN] =        {DTCAST_FLOAT6E2M3FN,      "float6e2m3fn",      "FLOAT6E2M3",      DT_TC_FLOAT,  6,  8,  2, 3,  1,   DT_NAN_NONE, DTCAST_UNDEFINED},
    [DTCAST_FLOAT6E3M2FN] =        {DTCAST_FLOAT6E3M2FN,      "float6e3m2fn",      "FLOAT6E3M2",      DT_TC_FLOAT,  6,  8,  3, 2,  3,   DT_NAN_NONE, DTCAST_UNDEFINED},
    [DTCAST_FLOAT8E4M3FN] =        {DTCAST_FLOAT8E4M3FN,      "float8e4m3fn",      "FLOAT8E4M3FN",    DT_TC_FLOAT,  8,  8,  4, 3,  7,   DT_NAN_FN,   DTCAST_UNDEFINED},
    [DTCAST_FLOAT8E4M3FNUZ] =      {DTCAST_FLOAT8E4M3FNUZ,    "float8e4m3fnuz",    "FLOAT8E4M3FNUZ",  DT_TC_FLOAT,  8,  8,  4, 3,  8,   DT_NAN_FNUZ, DTCAST_UNDEFINED},
    [DTCAST_FLOAT8E5M2] =          {DTCAST_FLOAT8E5M2,        "float8e5m2",        "FLOAT8E5M2",      DT_TC_FLOAT,  8,  8,  5, 2, 15,   DT_NAN_IEEE, DTCAST_UNDEFINED},
    [DTCAST_FLOAT8E5M2FNUZ] =      {DTCAST_FLOAT8E5M2FNUZ,    "float8e5m2fnuz",    "FLOAT8E5M2FNUZ",  DT_TC_FLOAT,  8,  8,  5, 2, 16,   DT_NAN_FNUZ, DTCAST_UNDEFINED},
    [DTCAST_FLOAT8E4M3] =          {DTCAST_FLOAT8E4M3,        "float8e4m3",        NULL,              DT_TC_FLOAT,  8,  8,  4, 3,  7,   DT_NAN_IEEE, DTCAST_UNDEFINED},
    [DTCAST_FLOAT8E3M4] =          {DTCAST_FLOAT8E3M4,        "float8e3m4",        NULL,              DT_TC_FLOAT,  8,  8,  3, 4,  3,   DT_NAN_IEEE, DTCAST_UNDEFINED},
    [DTCAST_FLOAT8E4M3B11FNUZ] =   {DTCAST_FLOAT8E4M3B11FNUZ, "float8e4m3b11fnuz", NULL,              DT_TC_FLOAT,  8,  8,  4, 3, 11,   DT_NAN_FNUZ, DTCAST_UNDEFINED},
    [DTCAST_FLOAT8E5M3FNU] =       {DTCAST_FLOAT8E5M3FNU,     "float8e5m3fnu",     NULL,              DT_TC_FLOAT,  8,  8,  5, 3, 15,   DT_NAN_FN,   DTCAST_UNDEFINED},
    [DTCAST_FLOAT8E8M0] =          {DTCAST_FLOAT8E8M0,        "float8e8m0",        "FLOAT8E8M0",      DT_TC_E8M0,   8,  8,  8, 0, 127,  DT_NAN_NONE, DTCAST_UNDEFINED},
    [DTCAST_FLOAT16] =             {DTCAST_FLOAT16,           "float16",           "FLOAT16",         DT_TC_FLOAT, 16, 16,  5, 10, 15,  DT_NAN_IEEE, DTCAST_UNDEFINED},
    [DTCAST_BFLOAT16] =            {DTCAST_BFLOAT16,          "bfloat16",          "BFLOAT16",        DT_TC_FLOAT, 16, 16,  8, 7, 127,  DT_NAN_IEEE, DTCAST_UNDEFINED},
    [DTCAST_FLOAT32] =             {DTCAST_FLOAT32,           "float32",           "FLOAT",           DT_TC_FLOAT, 32, 32,  8, 23, 127, DT_NAN_IEEE, DTCAST_UNDEFINED},
    [DTCAST_FLOAT64] =             {DTCAST_FLOAT64,           "float64",           "DOUBLE",          DT_TC_FLOAT, 64, 64, 11, 52, 1023, DT_NAN_IEEE, DTCAST_UNDEFINED},
    [DTCAST_COMPLEX32] =           {DTCAST_COMPLEX32,         "complex32",         NULL,              DT_TC_COMPLEX, 32, 32, 0, 0, 0,   DT_NAN_NONE, DTCAST_FLOAT16},
    [DTCAST_COMPLEX64] =           {DTCAST_COMPLEX64,         "complex64",         "COMPLEX64",       DT_TC_COMPLEX, 64, 64, 0, 0, 0,   DT_NAN_NONE, DTCAST_FLOAT32},
    [DTCAST_COMPLEX128] =          {DTCAST_COMPLEX128,        "complex128",        "COMPLEX128",      DT_TC_COMPLEX, 128, 128, 0, 0, 0, DT_NAN_NONE, DTCAST_FLOAT64},
    [DTCAST_INT1] =                {DTCAST_INT1,              "int1",              NULL,              DT_TC_SINT,   1,  1,  0, 0,  0,   DT_NAN_NONE, DTCAST_UNDEFINED},
    [DTCAST_BCOMPLEX32] =          {DTCAST_BCOMPLEX32,        "bcomplex32",        NULL,              DT_TC_COMPLEX, 32, 32, 0, 0, 0,   DT_NAN_NONE, DTCAST_BFLOAT16},
    [DTCAST_STRING] =              {DTCAST_STRING,            "string",            "STRING",          DT_TC_STRING, 0,  0,  0, 0,  0,   DT_NAN_NONE, DTCAST_UNDEFINED},
};

/* The order dtcast_type_list() and `dtcast types` show: by kind, then by width. */
static const dtcast_type listing_order[] = {
    DTCAST_BOOL,
    DTCAST_UINT1,
    DTCAST_INT1,
    DTCAST_UINT2,
    DTCAST_INT2,
    DTCAST_UINT4,
    DTCAST_INT4,
    DTCAST_UINT8,
    DTCAST_INT8,
    DTCAST_UINT16,
    DTCAST_INT16,
    DTCAST_UINT32,
    DTCAST_INT32,
    DTCAST_UINT64,
    DTCAST_INT64,
    DTCAST_FLOAT4E2M1,
    DTCAST_FLOAT6E2M3FN,
    DTCAST_FLOAT6E3M2FN,
    DTCAST_FLOAT8E4M3FN,
    DTCAST_FLOAT8E4M3FNUZ,
    DTCAST_FLOAT8E5M2,
    DTCAST_FLOAT8E5M2FNUZ,
    DTCAST_FLOAT8E4M3,
    DTCAST_FLOAT8E3M4,
    DTCAST_FLOAT8E4M3B11FNUZ,
    DTCAST_FLOAT8E5M3FNU,
    DTCAST_FLOAT8E8M0,
    DTCAST_FLOAT16,
    DTCAST_BFLOAT16,
    DTCAST_FLOAT32,
    DTCAST_FLOAT64,
    DTCAST_COMPLEX32,
    DTCAST_BCOMPLEX32,
    DTCAST_COMPLEX64,
    DTCAST_COMPLEX128,
    DTCAST_STRING,
};

#define NFORMATS (sizeof listing_order / sizeof listing_order[0])

dtcast_type dt_type_canonical(dtcast_type type)
{
    /* API 1.0 numbered float6 105 and 106; ONNX IR 14 gave them 27 and 28 */
    return type == DTCAST_FLOAT6E2M3FN_1_0   ? DTCAST_FLOAT6E2M3FN
           : type == DTCAST_FLOAT6E3M2FN_1_0 ? DTCAST_FLOAT6E3M2FN
                                             : type;
}

const dt_format *dt_format_of(dtcast_type type)
{
    type = dt_type_canonical(type);
    if ((unsigned)type >= sizeof formats / sizeof formats[0] || !formats[type].name)
        return NULL;
    return &formats[type];
}

/* float6 packed four in three bytes: the same formats, 6 bits apart */
static const dt_format float6_packed[2] = {
    {DTCAST_FLOAT6E2M3FN, "float6e2m3fn", "FLOAT6E2M3", DT_TC_FLOAT, 6, 6, 2, 3, 1, DT_NAN_NONE, DTCAST_UNDEFINED},
    {DTCAST_FLOAT6E3M2FN, "float6e3m2fn", "FLOAT6E3M2", DT_TC_FLOAT, 6, 6, 3, 2, 3, DT_NAN_NONE, DTCAST_UNDEFINED},
};

const dt_format *dt_format_in(dtcast_type type, const dtcast_options *opts)
{
    type = dt_type_canonical(type);
    if (opts && opts->float6_packed && type == DTCAST_FLOAT6E2M3FN)
        return &float6_packed[0];
    if (opts && opts->float6_packed && type == DTCAST_FLOAT6E3M2FN)
        return &float6_packed[1];
    return dt_format_of(type);
}

bool dt_format_bytes(const dt_format *f, size_t count, size_t *bytes)
{
    if (f->tc == DT_TC_STRING) {
        if (count > SIZE_MAX / sizeof(char *))
            return false;
        *bytes = count * sizeof(char *);
        return true;
    }
    const size_t stride = (size_t)f->stride_bits;
    if (stride < 8) { /* ceil(count * stride / 8), as count / 8 whole bytes per stride bit */
        *bytes = count / 8 * stride + (count % 8 * stride + 7) / 8;
        return true;
    }
    if (count > SIZE_MAX / (stride / 8))
        return false;
    *bytes = count * (stride / 8);
    return true;
}

/* ---- float encodings derived from the parameters ------------------------------------------ */

static uint64_t exp_all_ones(const dt_format *f) { return (UINT64_C(1) << f->exp_bits) - 1; }
static uint64_t man_all_ones(const dt_format *f) { return (UINT64_C(1) << f->man_bits) - 1; }
/* 0 for a format without a sign bit */
static uint64_t sign_bit(const dt_format *f)
{
    return dt_float_has_sign(f) ? UINT64_C(1) << (f->bits - 1) : 0;
}

uint64_t dt_float_max_code(const dt_format *f)
{
    if (f->tc == DT_TC_E8M0)
        return 0xFE;
    switch (f->nan) {
    case DT_NAN_IEEE: /* exponent all ones is reserved: the largest normal exponent, full mantissa */
        return ((exp_all_ones(f) - 1) << f->man_bits) | man_all_ones(f);
    case DT_NAN_FN: /* only S.1111.111 is NaN: the largest is one below it */
        return (exp_all_ones(f) << f->man_bits) | (man_all_ones(f) - 1);
    default: /* FNUZ and NONE use every positive code */
        return (exp_all_ones(f) << f->man_bits) | man_all_ones(f);
    }
}

uint64_t dt_float_nan_code(const dt_format *f, bool neg)
{
    uint64_t s = neg ? sign_bit(f) : 0;
    if (f->tc == DT_TC_E8M0)
        return 0xFF;
    switch (f->nan) {
    case DT_NAN_IEEE: /* quiet NaN: exponent all ones, top mantissa bit set */
        return s | (exp_all_ones(f) << f->man_bits) | (UINT64_C(1) << (f->man_bits - 1));
    case DT_NAN_FN:
        return s | (exp_all_ones(f) << f->man_bits) | man_all_ones(f);
    case DT_NAN_FNUZ:
        return sign_bit(f);
    default:
        return 0;
    }
}

uint64_t dt_float_inf_code(const dt_format *f, bool neg)
{
    if (!dt_float_has_inf(f))
        return 0;
    return (neg ? sign_bit(f) : 0) | (exp_all_ones(f) << f->man_bits);
}

/* ---- names ------------------------------------------------------------------------------ */

const char *dtcast_type_name(dtcast_type type)
{
    const dt_format *f = dt_format_of(type);
    return f ? f->name : NULL;
}

const char *dtcast_type_onnx_name(dtcast_type type)
{
    const dt_format *f = dt_format_of(type);
    return f ? f->onnx_name : NULL;
}

/* Aliases beyond the canonical and ONNX names: short names, numpy / ml_dtypes / torch names. */
static const struct {
    const char *alias;
    dtcast_type type;
} aliases[] = {
    {"f32", DTCAST_FLOAT32},          {"float", DTCAST_FLOAT32},        {"fp32", DTCAST_FLOAT32},
    {"single", DTCAST_FLOAT32},       {"f64", DTCAST_FLOAT64},          {"double", DTCAST_FLOAT64},
    {"fp64", DTCAST_FLOAT64},         {"f16", DTCAST_FLOAT16},          {"half", DTCAST_FLOAT16},
    {"fp16", DTCAST_FLOAT16},         {"bf16", DTCAST_BFLOAT16},        {"u8", DTCAST_UINT8},
    {"i8", DTCAST_INT8},              {"s8", DTCAST_INT8},              {"u16", DTCAST_UINT16},
    {"i16", DTCAST_INT16},            {"s16", DTCAST_INT16},            {"u32", DTCAST_UINT32},
    {"i32", DTCAST_INT32},            {"s32", DTCAST_INT32},            {"u64", DTCAST_UINT64},
    {"i64", DTCAST_INT64},            {"s64", DTCAST_INT64},            {"u4", DTCAST_UINT4},
    {"i4", DTCAST_INT4},              {"s4", DTCAST_INT4},              {"u2", DTCAST_UINT2},
    {"i2", DTCAST_INT2},              {"s2", DTCAST_INT2},              {"u1", DTCAST_UINT1},
    {"boolean", DTCAST_BOOL},         {"b8", DTCAST_BOOL},              {"str", DTCAST_STRING},
    {"c64", DTCAST_COMPLEX64},        {"c128", DTCAST_COMPLEX128},      {"c32", DTCAST_COMPLEX32},
    {"cfloat", DTCAST_COMPLEX64},     {"cdouble", DTCAST_COMPLEX128},   {"chalf", DTCAST_COMPLEX32},
    {"f8e4m3fn", DTCAST_FLOAT8E4M3FN}, {"fp8_e4m3", DTCAST_FLOAT8E4M3FN},
    {"float8_e4m3fn", DTCAST_FLOAT8E4M3FN}, {"e4m3fn", DTCAST_FLOAT8E4M3FN},
    {"f8e4m3fnuz", DTCAST_FLOAT8E4M3FNUZ}, {"float8_e4m3fnuz", DTCAST_FLOAT8E4M3FNUZ},
    {"fp8_e4m3fnuz", DTCAST_FLOAT8E4M3FNUZ}, {"e4m3fnuz", DTCAST_FLOAT8E4M3FNUZ},
    {"f8e5m2", DTCAST_FLOAT8E5M2},    {"fp8_e5m2", DTCAST_FLOAT8E5M2},
    {"float8_e5m2", DTCAST_FLOAT8E5M2}, {"e5m2", DTCAST_FLOAT8E5M2}, {"fp8e5m2", DTCAST_FLOAT8E5M2},
    {"f8e5m2fnuz", DTCAST_FLOAT8E5M2FNUZ}, {"float8_e5m2fnuz", DTCAST_FLOAT8E5M2FNUZ},
    {"fp8_e5m2fnuz", DTCAST_FLOAT8E5M2FNUZ}, {"e5m2fnuz", DTCAST_FLOAT8E5M2FNUZ},
    {"float8_e4m3", DTCAST_FLOAT8E4M3}, {"float8_e3m4", DTCAST_FLOAT8E3M4},
    {"f8e3m4", DTCAST_FLOAT8E3M4},    {"e3m4", DTCAST_FLOAT8E3M4},
    {"float8_e4m3b11fnuz", DTCAST_FLOAT8E4M3B11FNUZ}, {"f8e4m3b11fnuz", DTCAST_FLOAT8E4M3B11FNUZ},
    {"f8e8m0", DTCAST_FLOAT8E8M0},    {"float8_e8m0fnu", DTCAST_FLOAT8E8M0},
    {"e8m0", DTCAST_FLOAT8E8M0},      {"fp8_e8m0", DTCAST_FLOAT8E8M0}, {"f8e8m0fnu", DTCAST_FLOAT8E8M0},
    {"f4e2m1", DTCAST_FLOAT4E2M1},    {"float4_e2m1fn", DTCAST_FLOAT4E2M1},
    {"fp4_e2m1", DTCAST_FLOAT4E2M1},  {"e2m1", DTCAST_FLOAT4E2M1}, {"f4e2m1fn", DTCAST_FLOAT4E2M1},
    {"float4e2m1fn", DTCAST_FLOAT4E2M1},
    {"f6e2m3fn", DTCAST_FLOAT6E2M3FN}, {"float6_e2m3fn", DTCAST_FLOAT6E2M3FN},
    {"fp6_e2m3", DTCAST_FLOAT6E2M3FN}, {"f6e3m2fn", DTCAST_FLOAT6E3M2FN},
    {"float6_e3m2fn", DTCAST_FLOAT6E3M2FN}, {"fp6_e3m2", DTCAST_FLOAT6E3M2FN},
    {"float8_e5m3fnu", DTCAST_FLOAT8E5M3FNU}, {"f8e5m3fnu", DTCAST_FLOAT8E5M3FNU},
    {"e5m3fnu", DTCAST_FLOAT8E5M3FNU},
    {"i1", DTCAST_INT1},              {"s1", DTCAST_INT1},              {"bc32", DTCAST_BCOMPLEX32},
};

static bool equal_ignoring_case(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    return *a == *b;
}

dtcast_status dtcast_type_from_name(const char *name, dtcast_type *type, dtcast_error *error)
{
    if (!name || !type)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "type name: NULL %s",
                       name ? "type" : "name");
    for (size_t i = 0; i < NFORMATS; i++) {
        const dt_format *f = &formats[listing_order[i]];
        if (equal_ignoring_case(name, f->name) ||
            (f->onnx_name && equal_ignoring_case(name, f->onnx_name))) {
            *type = f->type;
            return DTCAST_OK;
        }
    }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (equal_ignoring_case(name, aliases[i].alias)) {
            *type = aliases[i].type;
            return DTCAST_OK;
        }
    /* An ONNX enum number (or dtcast's own code above 100). */
    if (*name >= '0' && *name <= '9') {
        char *end;
        long n = strtol(name, &end, 10);
        if (*end == '\0' && n > 0 && n < 1000 && dt_format_of((dtcast_type)n)) {
            *type = dt_format_of((dtcast_type)n)->type; /* 105, 106 (API 1.0) -> 27, 28 */
            return DTCAST_OK;
        }
    }
    return dt_fail(error, DTCAST_ERR_UNKNOWN_TYPE, DT_NO_INDEX, "unknown type name \"%.60s\"",
                   name);
}

size_t dtcast_type_list(dtcast_type *types, size_t max)
{
    for (size_t i = 0; i < NFORMATS && i < max && types; i++)
        types[i] = listing_order[i];
    return NFORMATS;
}

int dtcast_type_bits(dtcast_type type)
{
    const dt_format *f = dt_format_of(type);
    return f ? f->bits : 0;
}

static dtcast_status too_large(dtcast_error *error, const dt_format *f, size_t count)
{
    return dt_fail(error, DTCAST_ERR_SIZE_OVERFLOW, DT_NO_INDEX,
                   "%zu elements of %s do not fit in memory", count, f->name);
}

dtcast_status dtcast_storage_size(dtcast_type type, size_t count, size_t *bytes,
                                  dtcast_error *error)
{
    const dt_format *f = dt_format_of(type);
    if (!f)
        return dt_fail(error, DTCAST_ERR_UNKNOWN_TYPE, DT_NO_INDEX, "unknown type %d", (int)type);
    if (!bytes)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "storage size: NULL bytes");
    if (!dt_format_bytes(f, count, bytes))
        return too_large(error, f, count);
    return DTCAST_OK;
}

dtcast_status dtcast_storage_size_opts(dtcast_type type, size_t count, const dtcast_options *opts,
                                       size_t *bytes, dtcast_error *error)
{
    dtcast_options o;
    dtcast_status st = dt_options_read(opts, &o, error);
    if (st != DTCAST_OK)
        return st;
    const dt_format *f = dt_format_in(type, &o);
    if (!f)
        return dt_fail(error, DTCAST_ERR_UNKNOWN_TYPE, DT_NO_INDEX, "unknown type %d", (int)type);
    if (!bytes)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "storage size: NULL bytes");
    if (!dt_format_bytes(f, count, bytes))
        return too_large(error, f, count);
    return DTCAST_OK;
}

/* ---- info --------------------------------------------------------------------------------- */

static double value_of_code(const dt_format *f, uint64_t code)
{
    dt_value v;
    dt_decode(f, code, &v);
    if (v.cls == DT_ZERO)
        return v.neg ? -0.0 : 0.0;
    double m = ldexp((double)v.sig, v.exp); /* exact: at most 53 significant bits */
    return v.neg ? -m : m;
}

dtcast_status dtcast_type_info(dtcast_type type, dtcast_info *info, dtcast_error *error)
{
    const dt_format *f = dt_format_of(type);
    if (!f)
        return dt_fail(error, DTCAST_ERR_UNKNOWN_TYPE, DT_NO_INDEX, "unknown type %d", (int)type);
    if (!info)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "type info: NULL info");
    memset(info, 0, sizeof *info);
    info->type = f->type;
    info->name = f->name;
    info->bits = f->bits;
    const dt_format *p = f->tc == DT_TC_COMPLEX ? dt_format_of(f->part) : f;
    switch (f->tc) {
    case DT_TC_BOOL:
        info->kind = DTCAST_KIND_BOOL;
        info->int_min = 0;
        info->int_max = 1;
        return DTCAST_OK;
    case DT_TC_UINT:
        info->kind = DTCAST_KIND_UNSIGNED;
        info->int_max = f->bits == 64 ? UINT64_MAX : (UINT64_C(1) << f->bits) - 1;
        return DTCAST_OK;
    case DT_TC_SINT:
        info->kind = DTCAST_KIND_SIGNED;
        info->int_max = (UINT64_C(1) << (f->bits - 1)) - 1;
        info->int_min = -(int64_t)(info->int_max) - 1;
        return DTCAST_OK;
    case DT_TC_STRING:
        info->kind = DTCAST_KIND_STRING;
        return DTCAST_OK;
    case DT_TC_COMPLEX:
        info->kind = DTCAST_KIND_COMPLEX;
        break;
    default:
        info->kind = DTCAST_KIND_FLOAT;
        break;
    }
    info->exponent_bits = p->exp_bits;
    info->mantissa_bits = p->man_bits;
    info->bias = p->bias;
    info->has_inf = dt_float_has_inf(p);
    info->has_nan = dt_float_has_nan(p);
    info->has_negative_zero = dt_float_has_neg_zero(p);
    info->max_bits = dt_float_max_code(p);
    info->max = value_of_code(p, info->max_bits);
    info->inf_bits = dt_float_inf_code(p, false);
    info->nan_bits = dt_float_nan_code(p, false);
    if (p->tc == DT_TC_E8M0) {
        info->lowest = ldexp(1.0, -127);
        info->min_normal = info->min_subnormal = ldexp(1.0, -127);
        info->epsilon = 1.0; /* the gap above 1 is 1 (next value 2) */
        info->nan_count = 1;
        return DTCAST_OK;
    }
    info->lowest = dt_float_has_sign(p) ? -info->max : 0.0;
    info->min_normal = ldexp(1.0, 1 - p->bias);
    info->min_subnormal = ldexp(1.0, 1 - p->bias - p->man_bits);
    info->epsilon = ldexp(1.0, -p->man_bits);
    switch (p->nan) {
    case DT_NAN_IEEE: /* both signs, every nonzero mantissa */
        info->nan_count = (int)(2 * ((UINT64_C(1) << (p->man_bits < 30 ? p->man_bits : 30)) - 1));
        if (p->man_bits >= 30)
            info->nan_count = -1; /* too many to count in an int: 2^53 - 2 etc. */
        break;
    case DT_NAN_FN: /* S.1111.111 of both signs */
        info->nan_count = dt_float_has_sign(p) ? 2 : 1;
        break;
    case DT_NAN_FNUZ:
        info->nan_count = 1;
        break;
    default:
        info->nan_count = 0;
        break;
    }
    return DTCAST_OK;
}

/* ---- rounding names, options, status ------------------------------------------------------- */

static const char *const round_names[] = {"default", "rne",   "round", "floor",
                                          "ceil",    "trunc", "odd",   "stochastic"};
_Static_assert(sizeof round_names / sizeof round_names[0] == DTCAST_ROUND_STOCHASTIC + 1,
               "a name for every rounding mode");

const char *dtcast_round_name(dtcast_round round)
{
    if ((unsigned)round >= sizeof round_names / sizeof round_names[0])
        return NULL;
    return round_names[round];
}

dtcast_status dtcast_round_from_name(const char *name, dtcast_round *round, dtcast_error *error)
{
    if (!name || !round)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "rounding mode: NULL %s",
                       name ? "round" : "name");
    for (unsigned i = 0; i < sizeof round_names / sizeof round_names[0]; i++)
        if (equal_ignoring_case(name, round_names[i])) {
            *round = (dtcast_round)i;
            return DTCAST_OK;
        }
    if (equal_ignoring_case(name, "rna") || equal_ignoring_case(name, "nearest-away")) {
        *round = DTCAST_ROUND_RNA;
        return DTCAST_OK;
    }
    return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                   "unknown rounding mode \"%.60s\" (rne, round, floor, ceil, trunc, odd, "
                   "stochastic)", name);
}

/* ---- sized structs (dtcast_options, dtcast_quant_params) ---------------------------------- */

void dt_sized_init(void *dst, size_t size, const void *defaults, size_t full)
{
    /* The caller's struct may be shorter (older header) or longer (newer header) than ours:
     * fill what both know, zero what only the caller knows; its first member is its size. */
    if (size > full) {
        memcpy(dst, defaults, full);
        memset((unsigned char *)dst + full, 0, size - full);
    } else {
        memcpy(dst, defaults, size);
    }
    memcpy(dst, &size, sizeof size);
}

dtcast_status dt_sized_read(void *out, const void *in, size_t full, size_t min, const char *what,
                            const char *init, dtcast_error *error)
{
    size_t size;
    memcpy(&size, in, sizeof size);
    if (size < min)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "%s not initialised: call %s (size is %zu)", what, init, size);
    if (size > full) {
        const unsigned char *extra = (const unsigned char *)in + full;
        for (size_t i = 0; i < size - full; i++)
            if (extra[i] != 0)
                return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                               "%s from a newer dtcast with settings this library does not "
                               "know (byte %zu of %zu is set)",
                               what, full + i, size);
        memcpy(out, in, full);
    } else {
        memcpy(out, in, size);
    }
    memcpy(out, &full, sizeof full);
    return DTCAST_OK;
}

/* ---- options ------------------------------------------------------------------------------ */

/* The end of the last field of the 1.0 struct: no caller's options can be shorter. */
#define OPTIONS_SIZE_1_0 (offsetof(dtcast_options, float6_packed) + sizeof(bool))

static void options_defaults(dtcast_options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->size = sizeof *opts;
    opts->round = DTCAST_ROUND_DEFAULT;
    opts->float_overflow = DTCAST_FLOAT_OVERFLOW_IEEE;
    opts->int_overflow = DTCAST_INT_OVERFLOW_WRAP;
    opts->string_style = DTCAST_STRING_PYTHON;
}

void dtcast_options_init_sized(dtcast_options *opts, size_t size)
{
    if (!opts || size < OPTIONS_SIZE_1_0)
        return;
    dtcast_options d;
    options_defaults(&d);
    dt_sized_init(opts, size, &d, sizeof d);
}

dtcast_status dt_options_read(const dtcast_options *opts, dtcast_options *out, dtcast_error *error)
{
    options_defaults(out);
    if (!opts)
        return DTCAST_OK;
    return dt_sized_read(out, opts, sizeof *out, OPTIONS_SIZE_1_0, "options",
                         "dtcast_options_init", error);
}

const char *dtcast_status_string(dtcast_status status)
{
    switch (status) {
    case DTCAST_OK: return "ok";
    case DTCAST_ERR_INVALID_ARGUMENT: return "invalid argument";
    case DTCAST_ERR_UNKNOWN_TYPE: return "unknown type";
    case DTCAST_ERR_UNSUPPORTED: return "conversion not supported";
    case DTCAST_ERR_COMPLEX_TO_REAL: return "complex to real conversion would discard the imaginary part";
    case DTCAST_ERR_SIZE_OVERFLOW: return "size overflow";
    case DTCAST_ERR_BAD_STRING: return "string is not a number";
    case DTCAST_ERR_OUT_OF_MEMORY: return "out of memory";
    case DTCAST_ERR_BAD_SHAPE: return "shape not supported";
    case DTCAST_ERR_PROMOTION: return "no common type";
    case DTCAST_ERR_IO: return "input/output error";
    case DTCAST_ERR_BAD_FILE: return "malformed file";
    }
    return "unknown status";
}

dtcast_status dt_fail(dtcast_error *error, dtcast_status status, size_t index, const char *fmt, ...)
{
    if (error) {
        dtcast_error *e = error;
        e->status = status;
        e->index = index;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->message, sizeof e->message, fmt, ap);
        va_end(ap);
    }
    return status;
}
