/* Number <-> text: formatting against CPython's repr and exact Python-made vectors
 * (tests/gen_text_vectors.py), parsing against exact fractions, round trips of random codes. */
#include "check.h"
#include "internal.h"
#include "bignum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---------------------------------------------------------------------------------- */

static const dt_format *fmt(dtcast_type t) { return dt_format_of(t); }

static dt_rules rules(dtcast_round mode)
{
    dt_rules r;
    memset(&r, 0, sizeof r);
    r.round = mode;
    return r;
}

static const char *format_code(char *buf, size_t size, dtcast_type t, uint64_t code,
                               dtcast_string_style style)
{
    if (dt_text_format(buf, size, fmt(t), code, style) == 0)
        snprintf(buf, size, "<format failed>");
    return buf;
}

static bool is_nan_code(const dt_format *f, uint64_t code)
{
    dt_value v;
    dt_decode(f, code, &v);
    return v.cls == DT_NAN;
}

/* Parses text and rounds it into f under mode; false if the text does not parse. */
static bool parse_to(const char *text, const dt_format *f, dtcast_round mode, uint64_t *code)
{
    dt_value v;
    dt_int_parts ip;
    if (!dt_text_parse(text, &v, &ip))
        return false;
    const dt_rules r = rules(mode);
    *code = dt_encode(f, &v, &r);
    return true;
}

static uint64_t rng_next(uint64_t *s) /* xorshift64* */
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}

static FILE *open_vectors(const char *name)
{
    static const char *const dirs[] = {"tests/text_vectors/", "../tests/text_vectors/",
                                       "../../tests/text_vectors/"};
    char path[256];
    const char *env = getenv("DTCAST_TEXT_VECTORS");
    if (env) {
        snprintf(path, sizeof path, "%s/%s", env, name);
        return fopen(path, "r");
    }
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(path, sizeof path, "%s%s", dirs[i], name);
        FILE *fh = fopen(path, "r");
        if (fh)
            return fh;
    }
    return NULL;
}

/* Reads one line (any length) into *line (grown with realloc); false at end of file. */
static bool read_line(FILE *fh, char **line, size_t *cap)
{
    size_t n = 0;
    int c;
    while ((c = fgetc(fh)) != EOF && c != '\n') {
        if (n + 2 > *cap) {
            size_t ncap = *cap ? *cap * 2 : 256;
            char *p = realloc(*line, ncap);
            if (!p)
                return false;
            *line = p;
            *cap = ncap;
        }
        (*line)[n++] = (char)c;
    }
    if (c == EOF && n == 0)
        return false;
    if (!*line)
        return false;
    (*line)[n] = '\0';
    return true;
}

/* Splits line at tabs in place; returns the number of fields (at most max). */
static int split_tabs(char *line, char **fields, int max)
{
    int n = 0;
    fields[n++] = line;
    for (char *p = line; *p && n < max; p++) {
        if (*p == '\t') {
            *p = '\0';
            fields[n++] = p + 1;
        }
    }
    return n;
}

/* ---- formatting ------------------------------------------------------------------------------- */

/* Every line "hex<TAB>repr": formats as repr, and repr parses (RNE) back to the code. */
static void check_repr_file(const char *file, dtcast_type t)
{
    const dt_format *f = fmt(t);
    char name[96];
    snprintf(name, sizeof name, "repr vectors %s", file);
    FILE *fh = open_vectors(file);
    if (!CHECK(fh != NULL, name, "cannot open tests/text_vectors/%s", file))
        return;
    char *line = NULL, *fields[3];
    size_t cap = 0;
    long lines = 0, bad_format = 0, bad_parse = 0;
    char first[256] = "";
    while (read_line(fh, &line, &cap)) {
        if (split_tabs(line, fields, 3) != 2)
            continue;
        lines++;
        const uint64_t code = strtoull(fields[0], NULL, 16);
        char got[DTCAST_FORMAT_MAX];
        format_code(got, sizeof got, t, code, DTCAST_STRING_PYTHON);
        if (strcmp(got, fields[1]) != 0) {
            if (!bad_format++)
                snprintf(first, sizeof first, "code %s: got %s, want %s", fields[0], got,
                         fields[1]);
        }
        uint64_t back = 0;
        const bool parsed = parse_to(fields[1], f, DTCAST_ROUND_RNE, &back);
        const bool same = parsed && (back == code || (is_nan_code(f, code) && is_nan_code(f, back)));
        if (!same && !bad_parse++ && !bad_format)
            snprintf(first, sizeof first, "code %s: %s parses back to %llx", fields[0],
                     fields[1], (unsigned long long)back);
    }
    free(line);
    fclose(fh);
    CHECK(lines > 1000 && bad_format == 0 && bad_parse == 0, name,
          "%ld lines, %ld format mismatches, %ld parse mismatches; first: %s", lines, bad_format,
          bad_parse, first);
}

static void check_format(dtcast_type t, uint64_t code, dtcast_string_style style, const char *want)
{
    char got[DTCAST_FORMAT_MAX], name[128];
    format_code(got, sizeof got, t, code, style);
    snprintf(name, sizeof name, "format %s 0x%llx %s -> %s", dtcast_type_name(t),
             (unsigned long long)code, style == DTCAST_STRING_ORT ? "ort" : "python", want);
    CHECK(strcmp(got, want) == 0, name, "got \"%s\"", got);
}

static void check_format_complex(dtcast_type part, uint64_t re, uint64_t im,
                                 dtcast_string_style style, const char *want)
{
    char got[DTCAST_FORMAT_MAX], name[128];
    if (dt_text_format_complex(got, sizeof got, fmt(part), re, im, style) == 0)
        snprintf(got, sizeof got, "<format failed>");
    snprintf(name, sizeof name, "format complex(%s) -> %s", dtcast_type_name(part), want);
    CHECK(strcmp(got, want) == 0, name, "got \"%s\"", got);
}

static void test_format_table(void)
{
    const dtcast_string_style py = DTCAST_STRING_PYTHON, ort = DTCAST_STRING_ORT;
    /* docs/conversion.md, "Numbers to strings" */
    check_format(DTCAST_FLOAT32, 0x3F800000, py, "1.0");
    check_format(DTCAST_FLOAT32, 0x42C80000, py, "100.0");
    check_format(DTCAST_FLOAT32, 0x80000000, py, "-0.0");
    check_format(DTCAST_FLOAT32, 0x4CEB79A3, py, "123456790.0"); /* 123456792 */
    check_format(DTCAST_FLOAT32, 0x3727C5AC, py, "1e-05");
    check_format(DTCAST_FLOAT32, 0x60AD78EC, py, "1e+20");
    check_format(DTCAST_FLOAT32, 0x7F7FFFFF, py, "3.4028235e+38");
    check_format(DTCAST_FLOAT32, 0x34210FB0, py, "1.5e-07");
    check_format(DTCAST_FLOAT32, 0x3421FF2E, py, "1.5087127e-07");
    check_format(DTCAST_FLOAT32, 0x7FC00000, py, "nan");
    check_format(DTCAST_FLOAT32, 0xFFC00000, py, "nan");
    check_format(DTCAST_FLOAT32, 0x7F800000, py, "inf");
    check_format(DTCAST_FLOAT32, 0xFF800000, py, "-inf");
    check_format(DTCAST_FLOAT32, 0x38D1B717, py, "0.0001");
    check_format(DTCAST_FLOAT32, 0x3DCCCCCD, py, "0.1");
    check_format(DTCAST_FLOAT32, 0x5A0E1BCA, py, "1e+16");
    check_format(DTCAST_FLOAT32, 0x5A0E1BC9, py, "9999999000000000.0");
    check_format(DTCAST_FLOAT32, 0x00000001, py, "1e-45");
    check_format(DTCAST_BOOL, 1, py, "True");
    check_format(DTCAST_BOOL, 0, py, "False");
    check_format(DTCAST_FLOAT64, 0x3FB999999999999A, py, "0.1");
    check_format(DTCAST_FLOAT64, 0x3FD3333333333334, py, "0.30000000000000004");
    check_format(DTCAST_FLOAT64, 0x7FEFFFFFFFFFFFFF, py, "1.7976931348623157e+308");
    check_format(DTCAST_FLOAT64, 0x0000000000000001, py, "5e-324");
    check_format(DTCAST_FLOAT64, 0x4415AF1D78B58C40, py, "1e+20");
    check_format(DTCAST_FLOAT16, 0x7BFF, py, "65500.0"); /* shortest at float16 precision */
    check_format(DTCAST_FLOAT16, 0x3555, py, "0.3333");
    check_format(DTCAST_FLOAT16, 0x0001, py, "6e-08");
    /* other floats print their value as float32 would */
    check_format(DTCAST_BFLOAT16, 0x3F81, py, "1.0078125");
    check_format(DTCAST_BFLOAT16, 0x7F7F, py, "3.3895314e+38");
    check_format(DTCAST_BFLOAT16, 0x3E9A, py, "0.30078125");
    check_format(DTCAST_FLOAT8E4M3FN, 0x7E, py, "448.0");
    check_format(DTCAST_FLOAT8E4M3FN, 0x7F, py, "nan");
    check_format(DTCAST_FLOAT8E4M3FN, 0x01, py, "0.001953125");
    check_format(DTCAST_FLOAT8E4M3FNUZ, 0x80, py, "nan");
    check_format(DTCAST_FLOAT8E5M2, 0xFC, py, "-inf");
    check_format(DTCAST_FLOAT4E2M1, 0x7, py, "6.0");
    check_format(DTCAST_FLOAT4E2M1, 0x9, py, "-0.5");
    check_format(DTCAST_FLOAT8E8M0, 0x00, py, "5.877472e-39");
    check_format(DTCAST_FLOAT8E8M0, 0xFE, py, "1.7014118e+38");
    check_format(DTCAST_FLOAT8E8M0, 0x7F, py, "1.0");
    check_format(DTCAST_FLOAT8E8M0, 0xFF, py, "nan");
    check_format(DTCAST_FLOAT6E3M2FN, 0x1F, py, "28.0");
    /* integers */
    check_format(DTCAST_INT4, 0x8, py, "-8");
    check_format(DTCAST_INT4, 0x7, py, "7");
    check_format(DTCAST_UINT4, 0xF, py, "15");
    check_format(DTCAST_INT2, 0x2, py, "-2");
    check_format(DTCAST_UINT1, 0x1, py, "1");
    check_format(DTCAST_INT8, 0x80, py, "-128");
    check_format(DTCAST_INT64, UINT64_C(0x8000000000000000), py, "-9223372036854775808");
    check_format(DTCAST_UINT64, UINT64_MAX, py, "18446744073709551615");
    check_format(DTCAST_INT32, 0xFFFFFFFF, py, "-1");
    /* ORT style */
    check_format(DTCAST_FLOAT32, 0x3F1AD728, ort, "0.60484552");
    check_format(DTCAST_FLOAT32, 0x3F800000, ort, "1");
    check_format(DTCAST_FLOAT32, 0x7FC00000, ort, "NaN");
    check_format(DTCAST_FLOAT32, 0x7F800000, ort, "INF");
    check_format(DTCAST_FLOAT32, 0xFF800000, ort, "-INF");
    check_format(DTCAST_FLOAT64, 0x3FB999999999999A, ort, "0.1"); /* %.8g for float64 too */
    check_format(DTCAST_FLOAT64, 0x7E37E43C8800759C, ort, "1e+300");
    check_format(DTCAST_FLOAT64, 0xFFF8000000000000, ort, "NaN");
    check_format(DTCAST_FLOAT16, 0x3555, ort, "0.33325195");
    check_format(DTCAST_BOOL, 1, ort, "1");
    check_format(DTCAST_BOOL, 0, ort, "0");
    check_format(DTCAST_INT8, 0xFF, ort, "-1");
    /* complex (Python's complex repr) */
    check_format_complex(DTCAST_FLOAT32, 0x3F800000, 0x40000000, py, "(1+2j)");
    check_format_complex(DTCAST_FLOAT32, 0x3F800000, 0x80000000, py, "(1-0j)");
    check_format_complex(DTCAST_FLOAT32, 0x00000000, 0x3F800000, py, "1j");
    check_format_complex(DTCAST_FLOAT32, 0x00000000, 0x80000000, py, "-0j");
    check_format_complex(DTCAST_FLOAT32, 0x80000000, 0x3F800000, py, "(-0+1j)");
    check_format_complex(DTCAST_FLOAT32, 0x7FC00000, 0x7F800000, py, "(nan+infj)");
    check_format_complex(DTCAST_FLOAT32, 0x3F800000, 0xFFC00000, py, "(1+nanj)");
    check_format_complex(DTCAST_FLOAT32, 0x3DCCCCCD, 0xBF000000, py, "(0.1-0.5j)");
    check_format_complex(DTCAST_FLOAT32, 0x60AD78EC, 0x3727C5AC, py, "(1e+20+1e-05j)");
    check_format_complex(DTCAST_FLOAT64, 0x3FB999999999999A, 0x3FD3333333333334, py,
                         "(0.1+0.30000000000000004j)");
    check_format_complex(DTCAST_FLOAT64, UINT64_C(0xFFEFFFFFFFFFFFFF),
                         UINT64_C(0xFFEFFFFFFFFFFFFF), py,
                         "(-1.7976931348623157e+308-1.7976931348623157e+308j)");
    check_format_complex(DTCAST_FLOAT16, 0x3555, 0x3C00, py, "(0.3333+1j)");
    check_format_complex(DTCAST_FLOAT32, 0x3F800000, 0x40000000, ort, "(1+2j)");
    check_format_complex(DTCAST_FLOAT32, 0x00000000, 0xFF800000, ort, "(0-INFj)");
    check_format_complex(DTCAST_FLOAT32, 0x7FC00000, 0x7FC00000, ort, "(NaN+NaNj)");

    /* a buffer too small gives 0 and NUL-terminated results fit exactly */
    char small[4];
    CHECK(dt_text_format(small, sizeof small, fmt(DTCAST_FLOAT32), 0x3DCCCCCD,
                         DTCAST_STRING_PYTHON) == 3 && strcmp(small, "0.1") == 0,
          "format fits exactly", "got %s", small);
    CHECK(dt_text_format(small, sizeof small, fmt(DTCAST_FLOAT32), 0x42C80000,
                         DTCAST_STRING_PYTHON) == 0,
          "format too small -> 0", "100.0 in 4 bytes");
}

/* ---- ORT style against C's printf ------------------------------------------------------------ */

/* What ONNX Runtime prints for a double: NaN (any sign or payload), INF, -INF, else "%.8g". */
static void ort_expected(char *buf, size_t size, double x)
{
    if (x != x)
        snprintf(buf, size, "NaN");
    else if (x == HUGE_VAL || x == -HUGE_VAL)
        snprintf(buf, size, x < 0 ? "-INF" : "INF");
    else
        snprintf(buf, size, "%.8g", x);
}

/* float64 (and float32) -> text in the ORT style through the public API, dtcast_format_element
 * and dtcast_convert to strings, against the C library's own printf("%.8g"). */
static void test_ort_printf(void)
{
    enum { N = 200000, EDGES = 24 };
    static const uint64_t edges[EDGES] = {
        0, UINT64_C(0x8000000000000000), 1, UINT64_C(0x8000000000000001),
        UINT64_C(0x000FFFFFFFFFFFFF), UINT64_C(0x0010000000000000), UINT64_C(0x7FEFFFFFFFFFFFFF),
        UINT64_C(0xFFEFFFFFFFFFFFFF), UINT64_C(0x7FF0000000000000), UINT64_C(0xFFF0000000000000),
        UINT64_C(0x7FF8000000000000), UINT64_C(0xFFF8000000000000), UINT64_C(0x7FF0000000000001),
        UINT64_C(0x3FF0000000000000), UINT64_C(0x3FB999999999999A), UINT64_C(0x7E37E43C8800759C),
        UINT64_C(0x4197D78400000000), UINT64_C(0x3E45798EE2308C3A), UINT64_C(0x3F1A36E2EB1C432D),
        UINT64_C(0x4415AF1D78B58C40), UINT64_C(0x3FEFFFFFFFFFFFFF), UINT64_C(0x4058FFFFFFFFFFFF),
        UINT64_C(0x3F50624DD2F1A9FC), UINT64_C(0x0000000000000003)};
    uint64_t *bits = malloc(N * sizeof *bits);
    char **strs = calloc(N, sizeof *strs);
    if (!bits || !strs) {
        CHECK(0, "ort printf: memory", "malloc failed");
        free(bits);
        free(strs);
        return;
    }
    uint64_t seed = UINT64_C(0x2545F4914F6CDD1D);
    for (size_t i = 0; i < N; i++) {
        uint64_t c = i < EDGES ? edges[i] : rng_next(&seed);
        if (i >= EDGES && i % 4 == 1)
            c &= UINT64_C(0x800FFFFFFFFFFFFF); /* subnormals */
        else if (i >= EDGES && i % 4 == 2)
            c = (c & UINT64_C(0xC00FFFFFFFFFFFFF)) | (UINT64_C(0x3C0) + c % 128) << 52; /* near 1 */
        bits[i] = c;
    }
    dtcast_options o;
    dtcast_options_init(&o);
    o.string_style = DTCAST_STRING_ORT;
    const dtcast_status st = dtcast_convert(strs, DTCAST_STRING, bits, DTCAST_FLOAT64, N, &o, NULL);
    long bad_format = 0, bad_convert = 0;
    char first[200] = "", want[64], got[DTCAST_FORMAT_MAX];
    for (size_t i = 0; i < N; i++) {
        double x;
        memcpy(&x, &bits[i], sizeof x);
        ort_expected(want, sizeof want, x);
        if (dtcast_format_element(got, sizeof got, bits, DTCAST_FLOAT64, i, &o, NULL) != DTCAST_OK)
            snprintf(got, sizeof got, "<error>");
        if (strcmp(got, want) != 0 && !bad_format++)
            snprintf(first, sizeof first, "0x%016llx: \"%s\", printf \"%s\"",
                     (unsigned long long)bits[i], got, want);
        if ((st != DTCAST_OK || !strs[i] || strcmp(strs[i], want) != 0) && !bad_convert++ &&
            !first[0])
            snprintf(first, sizeof first, "convert 0x%016llx: \"%s\", printf \"%s\"",
                     (unsigned long long)bits[i], strs[i] ? strs[i] : "(null)", want);
    }
    CHECK(bad_format == 0 && bad_convert == 0, "ort style float64 == printf %.8g (200000 values)",
          "%ld format_element, %ld convert mismatches; first %s", bad_format, bad_convert, first);
    if (st == DTCAST_OK)
        dtcast_strings_free(strs, N);

    /* float32 in the same style: the value as a double, "%.8g" */
    long bad32 = 0;
    first[0] = '\0';
    for (uint32_t i = 0; i < N; i++) {
        const uint32_t c = i < 4 ? (uint32_t[]){0x00000001, 0x80000000, 0x7F7FFFFF, 0xFFC00001}[i]
                                 : (uint32_t)rng_next(&seed);
        float f;
        memcpy(&f, &c, sizeof f);
        ort_expected(want, sizeof want, (double)f);
        if (dtcast_format_element(got, sizeof got, &c, DTCAST_FLOAT32, 0, &o, NULL) != DTCAST_OK)
            snprintf(got, sizeof got, "<error>");
        if (strcmp(got, want) != 0 && !bad32++)
            snprintf(first, sizeof first, "0x%08x: \"%s\", printf \"%s\"", c, got, want);
    }
    CHECK(bad32 == 0, "ort style float32 == printf %.8g (200000 values)", "%ld mismatches; first %s",
          bad32, first);
    free(bits);
    free(strs);
}

/* ---- round trips of random codes --------------------------------------------------------------- */

static void round_trip_random(dtcast_type t, long count)
{
    const dt_format *f = fmt(t);
    uint64_t seed = UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)t;
    long bad = 0;
    char first[160] = "", text[DTCAST_FORMAT_MAX], name[96];
    for (long i = 0; i < count; i++) {
        uint64_t code = rng_next(&seed);
        if (f->bits < 64)
            code &= (UINT64_C(1) << f->bits) - 1;
        uint64_t back = 0;
        format_code(text, sizeof text, t, code, DTCAST_STRING_PYTHON);
        const bool ok = parse_to(text, f, DTCAST_ROUND_RNE, &back) &&
                        (back == code || (is_nan_code(f, code) && is_nan_code(f, back)));
        if (!ok && !bad++)
            snprintf(first, sizeof first, "0x%llx -> \"%s\" -> 0x%llx", (unsigned long long)code,
                     text, (unsigned long long)back);
    }
    snprintf(name, sizeof name, "round trip %ld random %s", count, dtcast_type_name(t));
    CHECK(bad == 0, name, "%ld failures; first %s", bad, first);
}

/* ---- parsing ----------------------------------------------------------------------------------- */

static void test_parse_errors(void)
{
    static const char *const bad[] = {"",     " ",     "abc",   "1.2.3", "1e",    "--1",  "0x10",
                                      "1_000", ".",    "+",     "e5",    "1e+",   "1 2",  "inf1",
                                      "nanx",  "infinit", "1.5f", "(1)",   "1j",   "++1",  "- 1",
                                      "1e5.5", "0x1p3", "\x01", "1,5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dt_value v;
        dt_int_parts ip;
        char name[64];
        snprintf(name, sizeof name, "parse rejects \"%s\"", bad[i]);
        CHECK(!dt_text_parse(bad[i], &v, &ip), name, "accepted");
    }
    static const char *const good[] = {"3.14",  "-1e-5", "1E8",   ".5",       "5.",      "+2",
                                       " 7 ",   "\t\n\v\f\r 8\r\n", "inf", "INF", "+inf",
                                       "-Infinity", "NaN", "-nan", "+NAN",   "0e0",  "-0.0e-99"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        dt_value v;
        dt_int_parts ip;
        char name[64];
        snprintf(name, sizeof name, "parse accepts \"%s\"", good[i]);
        CHECK(dt_text_parse(good[i], &v, &ip), name, "rejected");
    }
    dt_value v;
    dt_int_parts ip;
    CHECK(dt_text_parse("-Infinity", &v, &ip) && v.cls == DT_INF && v.neg && ip.cls == DT_INF,
          "parse -Infinity", "cls %d neg %d", v.cls, v.neg);
    CHECK(dt_text_parse(" nan ", &v, &ip) && v.cls == DT_NAN && ip.cls == DT_NAN, "parse nan",
          "cls %d", v.cls);
    CHECK(dt_text_parse("-0.0", &v, &ip) && v.cls == DT_ZERO && v.neg && ip.cls == DT_ZERO &&
              ip.neg,
          "parse -0.0", "cls %d neg %d", v.cls, v.neg);
}

/* Huge and tiny exponents: bounded work, and results beyond every format. */
static void test_parse_extremes(void)
{
    uint64_t c = 0;
    const dt_format *f64 = fmt(DTCAST_FLOAT64);
    CHECK(parse_to("1e999999999999999999999999", f64, DTCAST_ROUND_RNE, &c) &&
              c == UINT64_C(0x7FF0000000000000),
          "parse 1e999999999999999999999999 -> inf", "got %llx", (unsigned long long)c);
    CHECK(parse_to("-1e-999999999999", f64, DTCAST_ROUND_RNE, &c) &&
              c == UINT64_C(0x8000000000000000),
          "parse -1e-999999999999 -> -0", "got %llx", (unsigned long long)c);
    CHECK(parse_to("1e-999999999999", f64, DTCAST_ROUND_CEIL, &c) && c == 1,
          "parse 1e-999999999999 ceil -> min subnormal", "got %llx", (unsigned long long)c);
    CHECK(parse_to("1e401", f64, DTCAST_ROUND_TRUNC, &c) && c == UINT64_C(0x7FEFFFFFFFFFFFFF),
          "parse 1e401 trunc -> max", "got %llx", (unsigned long long)c);
    /* 10^6 zeros then 1: correct and the digits beyond 800 count */
    const size_t n = 1000000;
    char *s = malloc(n + 8);
    if (!CHECK(s != NULL, "malloc", "out of memory"))
        return;
    strcpy(s, "0.");
    memset(s + 2, '0', n);
    strcpy(s + 2 + n, "1");
    CHECK(parse_to(s, f64, DTCAST_ROUND_CEIL, &c) && c == 1, "parse 0.(10^6 zeros)1 ceil",
          "got %llx", (unsigned long long)c);
    /* 1 followed by 10^6 digits: 1.000...0001 (ceil one ulp up, rne 1.0) */
    s[0] = '1';
    s[1] = '.';
    CHECK(parse_to(s, f64, DTCAST_ROUND_CEIL, &c) && c == UINT64_C(0x3FF0000000000001) &&
              parse_to(s, f64, DTCAST_ROUND_RNE, &c) && c == UINT64_C(0x3FF0000000000000),
          "parse 1.(10^6 zeros)1", "got %llx", (unsigned long long)c);
    /* an integer of 10^6 digits: float overflow, integer parts huge with exact low bits */
    memset(s, '9', n);
    s[n] = '\0';
    dt_value v;
    dt_int_parts ip;
    memset(&ip, 0, sizeof ip); /* the message's arguments may be read before the parse runs */
    bool parsed = dt_text_parse(s, &v, &ip);
    CHECK(parsed && ip.huge && ip.low == 0 - UINT64_C(1) && /* 10^n - 1 */
              parse_to(s, f64, DTCAST_ROUND_RNE, &c) && c == UINT64_C(0x7FF0000000000000),
          "parse 10^(10^6)-1", "huge %d low %llx", ip.huge, (unsigned long long)ip.low);
    free(s);
}

static dt_frac frac_of_name(const char *s)
{
    if (!strcmp(s, "below"))
        return DT_FRAC_BELOW;
    if (!strcmp(s, "half"))
        return DT_FRAC_HALF;
    if (!strcmp(s, "above"))
        return DT_FRAC_ABOVE;
    return DT_FRAC_ZERO;
}

static void check_int_parts(const char *text, dt_class cls, bool neg, bool huge, uint64_t low,
                            dt_frac frac, char *first, size_t first_size, long *bad)
{
    dt_value v;
    dt_int_parts ip;
    const bool ok = dt_text_parse(text, &v, &ip) && ip.cls == cls && ip.neg == neg &&
                    ip.huge == huge && ip.low == low && ip.frac == frac;
    if (!ok && !(*bad)++)
        snprintf(first, first_size, "%.60s: cls %d neg %d huge %d low %llx frac %d", text, ip.cls,
                 ip.neg, ip.huge, (unsigned long long)ip.low, ip.frac);
}

static void test_int_parts(void)
{
    static const struct {
        const char *text;
        dt_class cls;
        bool neg, huge;
        uint64_t low;
        dt_frac frac;
    } cases[] = {
        {"100.5", DT_FINITE, false, false, 100, DT_FRAC_HALF},
        {"-7.5", DT_FINITE, true, false, 7, DT_FRAC_HALF},
        {"1e30", DT_FINITE, false, true, UINT64_C(0x4674EDEA40000000), DT_FRAC_ZERO},
        {"18446744073709551616", DT_FINITE, false, true, 0, DT_FRAC_ZERO},
        {"18446744073709551615.9", DT_FINITE, false, false, UINT64_MAX, DT_FRAC_ABOVE},
        {"0.5", DT_FINITE, false, false, 0, DT_FRAC_HALF},
        {"0.49999999999999999999999999", DT_FINITE, false, false, 0, DT_FRAC_BELOW},
        {"0.50000000000000000000000001", DT_FINITE, false, false, 0, DT_FRAC_ABOVE},
        {"-0.7", DT_FINITE, true, false, 0, DT_FRAC_ABOVE},
        {"1e-999999999999", DT_FINITE, false, false, 0, DT_FRAC_BELOW},
        {"5e-1", DT_FINITE, false, false, 0, DT_FRAC_HALF},
        {"2.5e1", DT_FINITE, false, false, 25, DT_FRAC_ZERO},
        {"1e999999999999", DT_FINITE, false, true, 0, DT_FRAC_ZERO},
        {"3e19", DT_FINITE, false, true, UINT64_C(0xA055690D9DB80000), DT_FRAC_ZERO},
        {"-0", DT_ZERO, true, false, 0, DT_FRAC_ZERO},
        {"-inf", DT_INF, true, false, 0, DT_FRAC_ZERO},
        {"nan", DT_NAN, false, false, 0, DT_FRAC_ZERO},
    };
    long bad = 0;
    char first[200] = "";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        long before = bad;
        check_int_parts(cases[i].text, cases[i].cls, cases[i].neg, cases[i].huge, cases[i].low,
                        cases[i].frac, first, sizeof first, &bad);
        char name[80];
        snprintf(name, sizeof name, "int parts of \"%s\"", cases[i].text);
        CHECK(bad == before, name, "%s", first);
    }

    FILE *fh = open_vectors("parse_int.txt");
    if (!CHECK(fh != NULL, "int parts vectors", "cannot open parse_int.txt"))
        return;
    char *line = NULL, *fields[7];
    size_t cap = 0;
    long lines = 0;
    bad = 0;
    while (read_line(fh, &line, &cap)) {
        if (split_tabs(line, fields, 7) != 6)
            continue;
        lines++;
        const dt_class cls = !strcmp(fields[1], "zero") ? DT_ZERO : DT_FINITE;
        check_int_parts(fields[0], cls, fields[2][0] == '1', fields[3][0] == '1',
                        strtoull(fields[4], NULL, 16), frac_of_name(fields[5]), first,
                        sizeof first, &bad);
    }
    free(line);
    fclose(fh);
    CHECK(lines > 500 && bad == 0, "int parts vectors", "%ld lines, %ld bad; first %s", lines, bad,
          first);
}

/* The 64-bit truncation and sticky bit, against Python's exact fractions. */
static void test_parse_sig(void)
{
    FILE *fh = open_vectors("parse_sig.txt");
    if (!CHECK(fh != NULL, "parse sig vectors", "cannot open parse_sig.txt"))
        return;
    char *line = NULL, *fields[6];
    size_t cap = 0;
    long lines = 0, bad = 0;
    char first[200] = "";
    while (read_line(fh, &line, &cap)) {
        if (split_tabs(line, fields, 6) != 5)
            continue;
        lines++;
        dt_value v;
        dt_int_parts ip;
        bool ok = dt_text_parse(fields[0], &v, &ip) && v.cls == DT_FINITE;
        if (ok && !v.sticky) { /* exact results need not be normalized */
            while (!(v.sig >> 63)) {
                v.sig <<= 1;
                v.exp--;
            }
        }
        ok = ok && v.neg == (fields[1][0] == '1') && v.sig == strtoull(fields[2], NULL, 16) &&
             v.exp == atoi(fields[3]) && v.sticky == (fields[4][0] == '1');
        if (!ok && !bad++)
            snprintf(first, sizeof first, "%.60s: sig %llx exp %d sticky %d", fields[0],
                     (unsigned long long)v.sig, (int)v.exp, v.sticky);
    }
    free(line);
    fclose(fh);
    CHECK(lines > 500 && bad == 0, "parse sig vectors", "%ld lines, %ld bad; first %s", lines, bad,
          first);
}

/* Parse, then one rounding into float16, bfloat16, float32, float64 under six modes. */
static void test_parse_round(void)
{
    static const dtcast_type types[] = {DTCAST_FLOAT16, DTCAST_BFLOAT16, DTCAST_FLOAT32,
                                        DTCAST_FLOAT64};
    static const dtcast_round modes[] = {DTCAST_ROUND_RNE,   DTCAST_ROUND_RNA, DTCAST_ROUND_FLOOR,
                                         DTCAST_ROUND_CEIL,  DTCAST_ROUND_TRUNC, DTCAST_ROUND_ODD};
    FILE *fh = open_vectors("parse_round.txt");
    if (!CHECK(fh != NULL, "parse round vectors", "cannot open parse_round.txt"))
        return;
    char *line = NULL, *fields[3];
    size_t cap = 0;
    long lines = 0, bad = 0;
    char first[200] = "";
    while (read_line(fh, &line, &cap)) {
        if (split_tabs(line, fields, 3) != 2)
            continue;
        lines++;
        char *p = fields[1];
        for (int t = 0; t < 4; t++) {
            for (int m = 0; m < 6; m++) {
                const uint64_t want = strtoull(p, &p, 16);
                uint64_t got = 0;
                if ((!parse_to(fields[0], fmt(types[t]), modes[m], &got) || got != want) &&
                    !bad++)
                    snprintf(first, sizeof first, "%.60s -> %s %s: got %llx want %llx", fields[0],
                             dtcast_type_name(types[t]), dtcast_round_name(modes[m]),
                             (unsigned long long)got, (unsigned long long)want);
            }
        }
    }
    free(line);
    fclose(fh);
    CHECK(lines > 500 && bad == 0, "parse round vectors", "%ld lines, %ld bad; first %s", lines,
          bad, first);
}

/* ---- complex parsing --------------------------------------------------------------------------- */

static void check_complex(const char *text, bool ok, double re, double im)
{
    dt_value vr, vi;
    dt_int_parts ir, ii;
    char name[80];
    snprintf(name, sizeof name, "parse complex \"%s\"", text);
    const bool got_ok = dt_text_parse_complex(text, &vr, &ir, &vi, &ii);
    if (!ok) {
        CHECK(!got_ok, name, "accepted");
        return;
    }
    if (!CHECK(got_ok, name, "rejected"))
        return;
    /* compare via float64 codes */
    const dt_format *f64 = fmt(DTCAST_FLOAT64);
    const dt_rules r = rules(DTCAST_ROUND_RNE);
    const uint64_t cr = dt_encode(f64, &vr, &r), ci = dt_encode(f64, &vi, &r);
    uint64_t wr, wi;
    memcpy(&wr, &re, 8);
    memcpy(&wi, &im, 8);
    const bool nan_r = re != re, nan_i = im != im;
    CHECK((nan_r ? is_nan_code(f64, cr) : cr == wr) && (nan_i ? is_nan_code(f64, ci) : ci == wi),
          name, "got %llx %llx", (unsigned long long)cr, (unsigned long long)ci);
}

static void test_parse_complex(void)
{
    const double inf = 1.0 / 0.0, nan = 0.0 / 0.0;
    check_complex("1", true, 1, 0);
    check_complex("-2.5j", true, 0, -2.5);
    check_complex("1+2j", true, 1, 2);
    check_complex("1e3-4E-2J", true, 1000, -0.04);
    check_complex("nanj", true, 0, nan);
    check_complex("inf+nanj", true, inf, nan);
    check_complex("-infj", true, 0, -inf);
    check_complex("(1+2j)", true, 1, 2);
    check_complex(" ( 1-0j ) ", true, 1, -0.0);
    check_complex("\t(-0+1j)\n", true, -0.0, 1);
    check_complex("j", true, 0, 1);
    check_complex("-j", true, 0, -1);
    check_complex("+J", true, 0, 1);
    check_complex("1+j", true, 1, 1);
    check_complex("1-j", true, 1, -1);
    check_complex("(2)", true, 2, 0);
    check_complex("-0", true, -0.0, 0);
    check_complex("1e-5-infinityj", true, 1e-5, -inf);
    check_complex(".5+.5j", true, 0.5, 0.5);
    check_complex("", false, 0, 0);
    check_complex("()", false, 0, 0);
    check_complex("1+2", false, 0, 0);
    check_complex("1 + 2j", false, 0, 0);
    check_complex("(1+2j", false, 0, 0);
    check_complex("1+2j)", false, 0, 0);
    check_complex("1+2jj", false, 0, 0);
    check_complex("j1", false, 0, 0);
    check_complex("1j+2", false, 0, 0);
    check_complex("1+-2j", false, 0, 0);
    check_complex("abc", false, 0, 0);
    check_complex("1e+j", false, 0, 0);
    check_complex("((1))", false, 0, 0);
    dt_value vr, vi;
    dt_int_parts ir, ii;
    CHECK(dt_text_parse_complex("100.5-7.5j", &vr, &ir, &vi, &ii) && ir.low == 100 &&
              ir.frac == DT_FRAC_HALF && ii.neg && ii.low == 7 && ii.frac == DT_FRAC_HALF,
          "complex int parts", "re %llu im %llu", (unsigned long long)ir.low,
          (unsigned long long)ii.low);
}

/* ---- bignum ------------------------------------------------------------------------------------ */

static void test_bignum(void)
{
    dt_bn a, b;
    dt_bn_set_u64(&a, 1);
    bool ok = dt_bn_mul_pow10(&a, 30); /* 10^30 = 0xC9F2C9CD04674EDEA40000000 */
    ok = ok && dt_bn_bit_length(&a) == 100 && dt_bn_bits_at(&a, 36) == UINT64_C(0xC9F2C9CD04674EDE) &&
         dt_bn_any_below(&a, 31) == true && dt_bn_any_below(&a, 30) == false;
    CHECK(ok, "bignum 10^30", "bits %d", dt_bn_bit_length(&a));
    dt_bn_set_u64(&b, 1);
    ok = dt_bn_shl(&b, 100) && dt_bn_cmp(&a, &b) < 0 && dt_bn_cmp(&b, &a) > 0;
    dt_bn_sub(&b, &a); /* 2^100 - 10^30 = 267650600228229401496703205376 - 10^30 */
    ok = ok && dt_bn_bits_at(&b, 0) == UINT64_C(0xB98B1215C0000000) &&
         dt_bn_bit_length(&b) == 98;
    CHECK(ok, "bignum sub/shl", "bits %d low %llx", dt_bn_bit_length(&b),
          (unsigned long long)dt_bn_bits_at(&b, 0));
    dt_bn_set_u64(&a, 1);
    CHECK(dt_bn_shl(&a, 3199) && dt_bn_bit_length(&a) == 3200 && !dt_bn_shl(&a, 1) &&
              (dt_bn_set_u64(&a, 3), !dt_bn_shl(&a, 3199)),
          "bignum capacity", "bits %d", dt_bn_bit_length(&a));
    dt_bn_set_u64(&a, UINT64_MAX);
    ok = dt_bn_add_small(&a, 1) && dt_bn_bit_length(&a) == 65;
    dt_bn_shr1(&a);
    CHECK(ok && dt_bn_bits_at(&a, 0) == UINT64_C(0x8000000000000000) && a.len == 2,
          "bignum carry/shr1", "len %d", a.len);
}

int main(void)
{
    test_bignum();
    test_format_table();
    test_ort_printf();
    check_repr_file("float16_repr.txt", DTCAST_FLOAT16);
    check_repr_file("float32_repr.txt", DTCAST_FLOAT32);
    check_repr_file("float64_repr.txt", DTCAST_FLOAT64);
    test_parse_errors();
    test_parse_extremes();
    test_int_parts();
    test_parse_sig();
    test_parse_round();
    test_parse_complex();
    round_trip_random(DTCAST_FLOAT32, 1000000);
    round_trip_random(DTCAST_FLOAT64, 1000000);
    round_trip_random(DTCAST_FLOAT16, 100000);
    round_trip_random(DTCAST_BFLOAT16, 100000);
    return CHECK_EXIT();
}
