/* Type promotion (docs/promotion.md): every rule set against the systems' own facts.
 *
 *   - torch and numpy: every pair of the tables generated from the real torch 1.13 and numpy 1.24
 *     (the CSV files of tests/promote_tables, written by tests/promote_tables/generate.py);
 *   - openvino: every example of the ConvertPromoteTypes-14 document, the cases of OpenVINO's own
 *     type_prop tests, every rule of docs/promotion.md ("openvino") with its exact error text,
 *     the attributes with ranks;
 *   - aclnn: the document's table cell by cell (its wrong cells as docs/promotion.md and
 *     docs/differences.md, "aclnn", correct them), the bool and uint16/32/64 rules, 0-dim tensors;
 *   - torch types 1.13 lacks (uint16/32/64, float8) and numpy's NEP 50, by docs/promotion.md
 *     ("torch", "numpy") and NEP 50 text;
 *   - jax: the promotion table of JAX's "Type promotion semantics" document, x64 off, strict mode,
 *     the small types, each error text;
 *   - order independence where the system has it, and the asymmetries where it does not;
 *   - ConvertPromoteTypes and the aclnn binary helper converting real data. */
#include "check.h"
#include "dtcast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers -------------------------------------------------------------------------------- */

#define OUTCOME_MAX (DTCAST_ERROR_MESSAGE_MAX + 16)

/* The outcome of promote(a, b) as text: the result's name ("dynamic" for OpenVINO's), "error: "
 * and the system's message for a refusal, "invalid: ..." for operands the rules cannot take. */
static void outcome(char *buf, size_t size, dtcast_promote_rules rules, const char *a,
                    const char *b, const dtcast_promote_attrs *attrs)
{
    dtcast_operand oa, ob;
    if (dtcast_operand_parse(a, &oa, NULL) != DTCAST_OK ||
        dtcast_operand_parse(b, &ob, NULL) != DTCAST_OK) {
        snprintf(buf, size, "unparsable operand");
        return;
    }
    dtcast_error error;
    memset(&error, 0, sizeof error);
    dtcast_type result = DTCAST_UNDEFINED;
    dtcast_status st = dtcast_promote(&result, rules, &oa, &ob, attrs, &error);
    if (st == DTCAST_ERR_PROMOTION)
        snprintf(buf, size, "error: %s", error.message);
    else if (st != DTCAST_OK)
        snprintf(buf, size, "invalid: %s", error.message);
    else if (result == DTCAST_TYPE_DYNAMIC)
        snprintf(buf, size, "dynamic");
    else
        snprintf(buf, size, "%s", dtcast_type_name(result) ? dtcast_type_name(result) : "?");
}

/* Checks one expectation; an expected "error" matches any refusal, "error: TEXT" only TEXT. */
static int matches(const char *got, const char *want)
{
    if (strcmp(want, "error") == 0)
        return strncmp(got, "error: ", 7) == 0;
    return strcmp(got, want) == 0;
}

static void expect(dtcast_promote_rules rules, const dtcast_promote_attrs *attrs, const char *a,
                   const char *b, const char *want, const char *label)
{
    char got[OUTCOME_MAX], name[200];
    outcome(got, sizeof got, rules, a, b, attrs);
    snprintf(name, sizeof name, "%s %s: %s x %s", dtcast_promote_rules_name(rules), label, a, b);
    CHECK(matches(got, want), name, "got \"%s\", expected \"%s\"", got, want);
}

/* ---- CSV tables of the real systems --------------------------------------------------------- */

typedef struct csv {
    char *text;
    char **lines;
    size_t nlines;
} csv;

static char *read_whole(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 2) {
            char *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[len] = 0;
    return buf;
}

/* Finds tests/promote_tables/NAME from the working directory or from the test binary's folder
 * (build/tests, build/san/tests). */
static char *read_table(const char *argv0, const char *name, char *path, size_t size)
{
    snprintf(path, size, "tests/promote_tables/%s", name);
    char *text = read_whole(path);
    char dir[512];
    snprintf(dir, sizeof dir, "%s", argv0);
    for (int up = 0; !text && up < 5; up++) {
        char *slash = strrchr(dir, '/');
        if (!slash)
            break;
        *slash = 0;
        snprintf(path, size, "%s/tests/promote_tables/%s", dir, name);
        text = read_whole(path);
    }
    return text;
}

/* Splits the text into lines, skipping comments and blank lines. */
static int csv_load(csv *c, const char *argv0, const char *name)
{
    char path[700];
    memset(c, 0, sizeof *c);
    c->text = read_table(argv0, name, path, sizeof path);
    if (!c->text)
        return 0;
    size_t cap = 16;
    c->lines = malloc(cap * sizeof *c->lines);
    for (char *line = strtok(c->text, "\r\n"); line && c->lines; line = strtok(NULL, "\r\n")) {
        if (line[0] == '#' || line[0] == 0)
            continue;
        if (c->nlines == cap) {
            char **bigger = realloc(c->lines, 2 * cap * sizeof *bigger);
            if (!bigger)
                break;
            c->lines = bigger;
            cap *= 2;
        }
        c->lines[c->nlines++] = line;
    }
    return c->lines != NULL;
}

static void csv_free(csv *c)
{
    free(c->lines);
    free(c->text);
}

/* Splits a line at commas in place; returns the field count. */
static size_t split(char *line, char **fields, size_t max)
{
    size_t n = 0;
    char *p = line;
    while (n < max) {
        fields[n++] = p;
        char *comma = strchr(p, ',');
        if (!comma)
            break;
        *comma = 0;
        p = comma + 1;
    }
    return n;
}

#define MAX_FIELDS 64

/* ml_dtypes' types that dtcast did not have: tests/promote_tables/generate.py wrote their rows
 * and columns under these names (ML_DTYPES_ABSENT). dtcast has all three now (codes 108-110): a
 * name the library parses is checked like every other, and the tables' skip count is 0. */
static const char *const ml_dtypes_absent[] = {"int1", "bcomplex32", "float8e5m3fnu"};

/* An operand of the table ("int1", "int1@0") whose type is one of those and unknown to dtcast. */
static int absent_operand(const char *label)
{
    char name[64];
    snprintf(name, sizeof name, "%s", label);
    char *at = strchr(name, '@');
    if (at)
        *at = 0;
    dtcast_operand op;
    for (size_t i = 0; i < sizeof ml_dtypes_absent / sizeof ml_dtypes_absent[0]; i++)
        if (strcmp(name, ml_dtypes_absent[i]) == 0)
            return dtcast_operand_parse(label, &op, NULL) != DTCAST_OK;
    return 0;
}

/* A grid: header "rules,label...", rows "label,result...". One check per row. With skip_absent,
 * the rows and columns of absent_operand() are left out (their count goes into the name of the
 * check that the file loads). */
static void check_grid_of(const char *argv0, const char *file, dtcast_promote_rules rules,
                          size_t want_rows, int skip_absent)
{
    csv c;
    char name[160];
    snprintf(name, sizeof name, "%s loads", file);
    if (!CHECK(csv_load(&c, argv0, file) && c.nlines > 1, name, "cannot read %s", file)) {
        csv_free(&c);
        return;
    }
    char *header[MAX_FIELDS];
    size_t ncols = split(c.lines[0], header, MAX_FIELDS);
    snprintf(name, sizeof name, "%s has %zu rows of %zu cells", file, want_rows, want_rows);
    CHECK(c.nlines - 1 == want_rows && ncols - 1 == want_rows, name, "%zu rows, %zu columns",
          c.nlines - 1, ncols - 1);
    size_t skipped = 0;
    for (size_t i = 1; i < c.nlines; i++) {
        char *row[MAX_FIELDS];
        size_t n = split(c.lines[i], row, MAX_FIELDS);
        int bad = 0;
        size_t checked = 0;
        char first[OUTCOME_MAX + 200] = "";
        if (skip_absent && absent_operand(row[0])) {
            skipped += n - 1;
            continue;
        }
        for (size_t j = 1; j < n && j < ncols; j++) {
            char got[OUTCOME_MAX];
            if (skip_absent && absent_operand(header[j])) {
                skipped++;
                continue;
            }
            checked++;
            outcome(got, sizeof got, rules, row[0], header[j], NULL);
            if (!matches(got, row[j])) {
                if (!bad++)
                    snprintf(first, sizeof first, "%s x %s: got \"%s\", %s says \"%s\"", row[0],
                             header[j], got, file, row[j]);
            }
        }
        snprintf(name, sizeof name, "%s row %s (%zu pairs)", file, row[0], checked);
        CHECK(bad == 0 && n == ncols, name, "%d differ; first %s", bad, first);
    }
    if (skip_absent) {
        snprintf(name, sizeof name, "%s: %zu pairs of the types dtcast lacks skipped", file,
                 skipped);
        CHECK(skipped == 0, name, "dtcast has every type of ml_dtypes 0.7.0");
    }
    csv_free(&c);
}

static void check_grid(const char *argv0, const char *file, dtcast_promote_rules rules,
                       size_t want_rows)
{
    check_grid_of(argv0, file, rules, want_rows, 0);
}

/* Long form "a,b,result": one check per distinct first operand; skip_absent as check_grid_of. */
static void check_ranked_of(const char *argv0, const char *file, dtcast_promote_rules rules,
                            size_t want_pairs, int skip_absent)
{
    csv c;
    char name[160];
    snprintf(name, sizeof name, "%s loads", file);
    if (!CHECK(csv_load(&c, argv0, file) && c.nlines > 0, name, "cannot read %s", file)) {
        csv_free(&c);
        return;
    }
    snprintf(name, sizeof name, "%s has %zu pairs", file, want_pairs);
    CHECK(c.nlines == want_pairs, name, "%zu pairs", c.nlines);
    size_t i = 0, skipped = 0;
    while (i < c.nlines) {
        char *f[3];
        split(c.lines[i], f, 3);
        char a[64];
        snprintf(a, sizeof a, "%s", f[0]);
        int bad = 0;
        size_t pairs = 0, lines = 0;
        char first[OUTCOME_MAX + 200] = "";
        for (; i < c.nlines; i++) {
            if (lines++ > 0) {
                split(c.lines[i], f, 3);
                if (strcmp(f[0], a) != 0)
                    break;
            }
            if (skip_absent && (absent_operand(f[0]) || absent_operand(f[1]))) {
                skipped++;
                continue;
            }
            pairs++;
            char got[OUTCOME_MAX];
            outcome(got, sizeof got, rules, f[0], f[1], NULL);
            if (!matches(got, f[2]) && !bad++)
                snprintf(first, sizeof first, "%s x %s: got \"%s\", %s says \"%s\"", f[0], f[1],
                         got, file, f[2]);
        }
        if (pairs == 0)
            continue; /* an operand of a type dtcast lacks */
        snprintf(name, sizeof name, "%s %s with every operand (%zu pairs)", file, a, pairs);
        CHECK(bad == 0, name, "%d differ; first %s", bad, first);
    }
    if (skip_absent) {
        snprintf(name, sizeof name, "%s: %zu pairs of the types dtcast lacks skipped", file,
                 skipped);
        CHECK(skipped == 0, name, "dtcast has every type of ml_dtypes 0.7.0");
    }
    csv_free(&c);
}

static void check_ranked(const char *argv0, const char *file, dtcast_promote_rules rules,
                         size_t want_pairs)
{
    check_ranked_of(argv0, file, rules, want_pairs, 0);
}

static void test_real_tables(const char *argv0)
{
    /* torch 1.13: 13 dtypes and 4 Python scalars; 13 x 2 ranks + 4 scalars = 30 operands. */
    check_grid(argv0, "torch_table.csv", DTCAST_RULES_TORCH, 17);
    check_ranked(argv0, "torch_ranked.csv", DTCAST_RULES_TORCH, 30 * 30);
    /* numpy 1.24 under NEP 50: 14 dtypes and 4 Python scalars; 14 x 2 + 4 = 32 operands. */
    check_grid(argv0, "numpy_table.csv", DTCAST_RULES_NUMPY, 18);
    check_ranked(argv0, "numpy_ranked.csv", DTCAST_RULES_NUMPY, 32 * 32);
    /* numpy 2.4.6 + ml_dtypes 0.7.0: numpy's 14 dtypes, the 21 of ml_dtypes (3 of them not dtcast
     * types: skipped while the library does not know them) and 4 Python scalars;
     * 35 x 2 + 4 = 74 operands. */
    check_grid_of(argv0, "numpy_ml_dtypes_table.csv", DTCAST_RULES_NUMPY_ML_DTYPES, 39, 1);
    check_ranked_of(argv0, "numpy_ml_dtypes_ranked.csv", DTCAST_RULES_NUMPY_ML_DTYPES, 74 * 74, 1);
}

/* ---- OpenVINO ------------------------------------------------------------------------------- */

static const char OV_INT_FLOAT[] = "error: Integer input cannot be safely promoted to floating-point.";
static const char OV_SCALAR[] =
    "error: Scalar input cannot be PyTorch-like promoted using safe promotion rules.";
static const char OV_UNSIGNED[] =
    "error: Unsigned integer input cannot be safely promoted into any supported signed integer.";
static const char OV_UNSUPPORTED[] =
    "error: Unsupported input element types for ConvertPromoteTypes with given attributes.";

typedef struct ov_case {
    const char *a, *b;
    int unsafe, torch_mode;
    const char *u64_target; /* NULL = default f32 */
    const char *want;
} ov_case;

static void run_ov_cases(const ov_case *cases, size_t n, const char *label)
{
    for (size_t i = 0; i < n; i++) {
        dtcast_promote_attrs attrs;
        dtcast_promote_attrs_init(&attrs);
        attrs.promote_unsafe = cases[i].unsafe;
        attrs.pytorch_scalar_promotion = cases[i].torch_mode;
        if (cases[i].u64_target &&
            dtcast_type_from_name(cases[i].u64_target, &attrs.u64_target, NULL) != DTCAST_OK)
            attrs.u64_target = DTCAST_UNDEFINED;
        char name[96];
        snprintf(name, sizeof name, "%s (unsafe %d, pytorch %d%s%s)", label, cases[i].unsafe,
                 cases[i].torch_mode, cases[i].u64_target ? ", u64 target " : "",
                 cases[i].u64_target ? cases[i].u64_target : "");
        expect(DTCAST_RULES_OPENVINO, &attrs, cases[i].a, cases[i].b, cases[i].want, name);
    }
}

/* The examples of openvino-convert-promote-types.en.txt. */
static void test_openvino_document(void)
{
    static const ov_case cases[] = {
        /* Regular promotions with attributes set to default values. */
        {"i8", "f32", 0, 0, NULL, "float32"},
        {"i32", "u8", 0, 0, NULL, "int32"},
        /* Promotions that raise with promote_unsafe false: the result when it is true. */
        {"f16", "i64", 0, 0, NULL, OV_INT_FLOAT},
        {"f16", "i64", 1, 0, NULL, "float16"},
        {"f64", "u64", 0, 0, NULL, OV_INT_FLOAT},
        {"f64", "u64", 1, 0, NULL, "float64"},
        {"i8", "u8", 0, 0, NULL, OV_UNSIGNED},
        {"i8", "u8", 1, 0, NULL, "int16"},
        {"f16", "bf16", 0, 0, NULL, OV_UNSUPPORTED},
        {"f16", "bf16", 1, 0, NULL, "float32"},
        {"float8e4m3fn", "float8e5m2", 0, 0, NULL, OV_UNSUPPORTED},
        {"float8e4m3fn", "float8e5m2", 1, 0, NULL, "float16"},
        {"u64", "i8", 0, 0, NULL, OV_UNSIGNED},
        {"u64", "i8", 1, 0, NULL, "float32"},
        /* PyTorch-like mode: S(i64), D(u8) -> u8, with the safe rules applying; S(f16), D(i8). */
        {"i64@0", "u8@1", 1, 1, NULL, "uint8"},
        {"i64@0", "u8@1", 0, 1, NULL, OV_SCALAR},
        {"f16@0", "i8@1", 0, 1, NULL, "float16"},
        {"f16@0", "i8@1", 1, 1, NULL, "float16"},
        /* Example 1: FP16 [256,56] and FP32 [3] -> FP32. */
        {"f16@2", "f32@1", 0, 0, "f32", "float32"},
        /* Example 2: I16 and U32, promote_unsafe -> I64. */
        {"i16@2", "u32@1", 1, 0, "f32", "int64"},
        /* Example 3: I16 and U64, promote_unsafe -> the target, f32. */
        {"i16@2", "u64@1", 1, 0, "f32", "float32"},
    };
    run_ov_cases(cases, sizeof cases / sizeof cases[0], "document");
}

/* OpenVINO's own type_prop tests of ConvertPromoteTypes (their first boolean is promote_unsafe,
 * the second pytorch_scalar_promotion), and its exception tests with their texts. */
static void test_openvino_upstream(void)
{
    static const ov_case cases[] = {
        {"dynamic@4", "dynamic@3", 1, 0, NULL, "dynamic"},
        {"dynamic@3", "f16@1", 0, 1, NULL, "dynamic"},
        {"i64@4", "dynamic@1", 0, 1, NULL, "dynamic"},
        {"dynamic@0", "f32@1", 1, 1, NULL, "dynamic"},
        {"bool@1", "bool@4", 1, 0, NULL, "bool"},
        {"bool@?", "u32@4", 1, 0, NULL, "uint32"},
        {"i16@1", "bool@1", 0, 1, NULL, "int16"},
        {"f16@1", "bool@1", 0, 1, NULL, "float16"},
        {"u8", "u8", 1, 0, NULL, "uint8"},
        {"u8", "u4", 1, 0, NULL, "uint8"},
        {"u1", "u4", 1, 0, NULL, "uint4"},
        {"u1", "u1", 1, 0, NULL, "uint1"},
        {"i8", "i8", 1, 0, NULL, "int8"},
        {"i4", "i8", 1, 0, NULL, "int8"},
        {"f32", "f32", 1, 0, NULL, "float32"},
        {"float8e4m3fn", "f32", 1, 0, NULL, "float32"},
        {"f64", "f32", 1, 0, NULL, "float64"},
        {"u1", "i4", 1, 0, NULL, "int4"},
        {"u16", "i8", 1, 0, NULL, "int32"},
        {"i4", "u32", 1, 0, NULL, "int64"},
        {"u1", "float8e5m2", 1, 0, NULL, "float8e5m2"},
        {"u16", "f32", 0, 0, NULL, "float32"},
        {"f16", "u32", 1, 0, NULL, "float16"},
        {"i16", "f32", 0, 0, NULL, "float32"},
        {"f16", "i32", 1, 0, NULL, "float16"},
        /* PyTorch mode. */
        {"i32@0", "u8@?", 1, 1, NULL, "dynamic"},
        {"i32@0", "f16@?", 1, 1, NULL, "float16"},
        {"f16@0", "u32@1", 1, 1, NULL, "float16"},
        {"i32@1", "u8@0", 1, 1, NULL, "int32"},
        {"f16@2", "u32@0", 1, 1, NULL, "float16"},
        {"f16@0", "u64@0", 1, 1, NULL, "float16"},
        {"u8@0", "i8@0", 1, 1, NULL, "int16"},
        {"f16@0", "f32@1", 0, 1, NULL, "float32"},
        {"u8@0", "i16@1", 0, 1, NULL, "int16"},
        {"u8@0", "u16@1", 0, 1, NULL, "uint16"},
        {"u8@0", "f16@1", 0, 0, NULL, "float16"},
        /* Special cases. */
        {"float8e4m3fn", "float8e5m2", 1, 0, NULL, "float16"},
        {"float8e4m3fn", "float8e4m3fn", 1, 0, NULL, "float8e4m3fn"},
        {"float8e4m3fn", "bf16", 1, 0, NULL, "bfloat16"},
        {"float8e4m3fn", "i64", 1, 0, NULL, "float8e4m3fn"},
        {"bf16", "bf16", 1, 0, NULL, "bfloat16"},
        {"f16", "bf16", 1, 0, NULL, "float32"},
        {"u64", "bf16", 1, 0, NULL, "bfloat16"},
        {"u64", "i4", 1, 0, NULL, "float32"},
        {"u64", "float8e4m3fn", 1, 0, NULL, "float8e4m3fn"},
        {"u64", "u32", 1, 0, NULL, "uint64"},
        {"u64", "i4", 1, 0, "i64", "int64"},
        {"u64", "i4", 1, 0, "i4", "int4"},
        {"u64", "i4", 1, 0, "u64", "uint64"},
        /* Exceptions (make_op(in0, in1, promote_unsafe, pytorch_scalar_promotion)). */
        {"u8@0", "i8@0", 0, 0, NULL, OV_UNSIGNED},
        {"u64@0", "i8@0", 0, 0, NULL, OV_UNSIGNED},
        {"u16@0", "f16@0", 0, 0, NULL, OV_INT_FLOAT},
        {"i32@0", "f16@0", 0, 0, NULL, OV_INT_FLOAT},
        {"i64@0", "u4@1", 0, 1, NULL, OV_SCALAR},
        {"u64@0", "u4@1", 0, 1, NULL, OV_SCALAR},
        {"f64@0", "f16@1", 0, 1, NULL, OV_SCALAR},
        {"f16@1", "bf16@1", 0, 0, NULL, OV_UNSUPPORTED},
        {"float8e4m3fn@1", "float8e5m2@1", 0, 0, NULL, OV_UNSUPPORTED},
    };
    run_ov_cases(cases, sizeof cases / sizeof cases[0], "upstream type_prop");
}

/* docs/promotion.md, "openvino", rule by rule in its order, and how the two booleans interact with ranks. */
static void test_openvino_spec(void)
{
    static const ov_case cases[] = {
        /* Unsupported types fail before anything else, dynamic included. */
        {"float8e4m3fnuz", "f32", 1, 0, NULL,
         "error: Check 'is_type_supported(input_0_type) && is_type_supported(input_1_type)' "
         "failed: ConvertPromoteTypes does not support element type float8e4m3fnuz."},
        {"dynamic", "complex64", 1, 1, NULL,
         "error: Check 'is_type_supported(input_0_type) && is_type_supported(input_1_type)' "
         "failed: ConvertPromoteTypes does not support element type complex64."},
        {"int2", "int2", 1, 0, NULL, "error"},
        {"float4e2m1", "bool", 1, 0, NULL, "error"},
        {"float8e8m0", "f32", 1, 0, NULL, "error"},
        {"string", "string", 1, 0, NULL, "error"},
        {"float8e4m3", "f32", 1, 0, NULL, "error"}, /* OpenVINO's f8e4m3 is float8e4m3fn */
        /* dynamic -> dynamic (before equal types and bool). */
        {"dynamic", "dynamic", 0, 0, NULL, "dynamic"},
        {"dynamic", "bool", 0, 0, NULL, "dynamic"},
        {"u64", "dynamic", 0, 0, NULL, "dynamic"},
        /* equal -> that type, whatever the ranks and attributes. */
        {"i64@0", "i64@?", 0, 1, NULL, "int64"},
        {"u64@0", "u64@1", 0, 1, NULL, "uint64"},
        /* bool -> the other, safe mode too, before ranks. */
        {"bool@0", "u64@?", 0, 1, NULL, "uint64"},
        {"float8e5m2", "bool", 0, 0, NULL, "float8e5m2"},
        /* int with float: float bits >= 2 x int bits in safe mode; ranks never matter. */
        {"i4", "float8e4m3fn", 0, 0, NULL, "float8e4m3fn"},
        {"u4", "float8e5m2", 0, 0, NULL, "float8e5m2"},
        {"i8", "float8e4m3fn", 0, 0, NULL, OV_INT_FLOAT},
        {"i8", "f16", 0, 0, NULL, "float16"},
        {"u8", "bf16", 0, 0, NULL, "bfloat16"},
        {"i16", "bf16", 0, 0, NULL, OV_INT_FLOAT},
        {"i32", "f64", 0, 0, NULL, "float64"},
        {"i64", "f64", 0, 0, NULL, OV_INT_FLOAT},
        {"i64", "float8e4m3fn", 1, 0, NULL, "float8e4m3fn"},
        {"i64@?", "f16@0", 0, 1, NULL, OV_INT_FLOAT},
        {"i64@?", "f16@0", 1, 1, NULL, "float16"},
        /* pytorch_scalar_promotion: an unknown rank on either side -> dynamic (same category). */
        {"i8@?", "i16@0", 0, 1, NULL, "dynamic"},
        {"f32@1", "f16@?", 0, 1, NULL, "dynamic"},
        {"u8@?", "i64@?", 0, 1, NULL, "dynamic"},
        /* ... without it, unknown ranks change nothing. */
        {"i8@?", "i16@0", 0, 0, NULL, "int16"},
        {"u8@?", "i8@?", 1, 0, NULL, "int16"},
        /* exactly one rank-0 input -> the other's type; safe mode: same signedness and target
         * bits >= scalar bits, or signed target, unsigned scalar, 2 x target bits >= scalar. */
        {"i16@0", "i8@3", 0, 1, NULL, OV_SCALAR},
        {"i16@0", "i8@3", 1, 1, NULL, "int8"},
        {"i8@0", "i16@3", 0, 1, NULL, "int16"},
        {"u16@0", "i8@1", 0, 1, NULL, "int8"},
        {"u32@0", "i8@1", 0, 1, NULL, OV_SCALAR},
        {"u32@0", "i8@1", 1, 1, NULL, "int8"},
        {"i8@0", "u64@1", 0, 1, NULL, OV_SCALAR},
        {"i8@0", "u64@1", 1, 1, NULL, "uint64"},
        {"u64@0", "i32@1", 0, 1, NULL, "int32"},
        {"u64@0", "i16@1", 0, 1, NULL, OV_SCALAR},
        {"bf16@0", "f16@1", 0, 1, NULL, "float16"},
        {"f16@1", "bf16@0", 0, 1, NULL, "float16"},
        {"float8e5m2@0", "float8e4m3fn@2", 0, 1, NULL, "float8e4m3fn"},
        {"f32@0", "bf16@1", 0, 1, NULL, OV_SCALAR},
        {"f32@0", "bf16@1", 1, 1, NULL, "bfloat16"},
        /* both rank 0, or both dimensioned: the ordinary rules. */
        {"f32@0", "bf16@0", 0, 1, NULL, "float32"},
        {"u8@2", "i8@3", 0, 1, NULL, OV_UNSIGNED},
        {"u8@0", "i8@0", 0, 1, NULL, OV_UNSIGNED},
        /* signed with unsigned: u <= 32 bits -> signed int of max(2 x u, s) bits. */
        {"u8", "i16", 0, 0, NULL, "int16"},
        {"u8", "i64", 0, 0, NULL, "int64"},
        {"u16", "i32", 0, 0, NULL, "int32"},
        {"u32", "i64", 0, 0, NULL, "int64"},
        {"u32", "i32", 0, 0, NULL, OV_UNSIGNED},
        {"u32", "i32", 1, 0, NULL, "int64"},
        {"u4", "i4", 0, 0, NULL, OV_UNSIGNED},
        {"u4", "i4", 1, 0, NULL, "int8"},
        {"u1", "i8", 0, 0, NULL, "int8"},
        {"u16", "i16", 1, 0, NULL, "int32"},
        /* u64 with signed: error in safe mode, the target in unsafe mode (any type). */
        {"u64", "i64", 0, 0, NULL, OV_UNSIGNED},
        {"u64", "i64", 1, 0, NULL, "float32"},
        {"i64", "u64", 1, 0, "f64", "float64"},
        {"i8", "u64", 1, 0, "bf16", "bfloat16"},
        {"i8", "u64", 1, 0, "float8e8m0", "float8e8m0"},
        /* same sign -> the wider (floats included; no safe-mode condition). */
        {"u16", "u64", 0, 0, NULL, "uint64"},
        {"i4", "i64", 0, 0, NULL, "int64"},
        {"float8e5m2", "bf16", 0, 0, NULL, "bfloat16"},
        {"float8e4m3fn", "f16", 0, 0, NULL, "float16"},
        {"bf16", "f64", 0, 0, NULL, "float64"},
        {"f16", "f32", 0, 0, NULL, "float32"},
    };
    run_ov_cases(cases, sizeof cases / sizeof cases[0], "docs");
}

static const char *const ov_types[] = {
    "bool", "u1", "u4", "u8", "u16", "u32", "u64", "i4", "i8", "i16", "i32", "i64",
    "float8e4m3fn", "float8e5m2", "bf16", "f16", "f32", "f64", "dynamic",
};
#define N_OV_TYPES (sizeof ov_types / sizeof ov_types[0])

/* "Promotion rules does not depend on order of inputs": every pair, every attribute set, every
 * combination of ranks 1, 0 and unknown. */
static void test_openvino_order(void)
{
    static const char *const ranks[] = {"@1", "@0", "@?"};
    int bad = 0;
    char first[2 * OUTCOME_MAX + 200] = "";
    size_t pairs = 0;
    for (int attr = 0; attr < 4; attr++) {
        dtcast_promote_attrs attrs;
        dtcast_promote_attrs_init(&attrs);
        attrs.promote_unsafe = attr & 1;
        attrs.pytorch_scalar_promotion = (attr >> 1) & 1;
        for (size_t i = 0; i < N_OV_TYPES; i++)
            for (size_t j = 0; j < N_OV_TYPES; j++)
                for (int ri = 0; ri < 3; ri++)
                    for (int rj = 0; rj < 3; rj++) {
                        char a[40], b[40], ab[OUTCOME_MAX], ba[OUTCOME_MAX];
                        snprintf(a, sizeof a, "%s%s", ov_types[i], ranks[ri]);
                        snprintf(b, sizeof b, "%s%s", ov_types[j], ranks[rj]);
                        outcome(ab, sizeof ab, DTCAST_RULES_OPENVINO, a, b, &attrs);
                        outcome(ba, sizeof ba, DTCAST_RULES_OPENVINO, b, a, &attrs);
                        pairs++;
                        if (strcmp(ab, ba) != 0 && !bad++)
                            snprintf(first, sizeof first, "%s x %s = %s but %s x %s = %s", a, b,
                                     ab, b, a, ba);
                    }
    }
    char name[96];
    snprintf(name, sizeof name, "openvino order independence (%zu ordered pairs)", pairs);
    CHECK(bad == 0, name, "%d differ; first: %s", bad, first);
}

/* Ranks only matter under pytorch_scalar_promotion, and only within a category. */
static void test_openvino_ranks_matter_only_with_pytorch_mode(void)
{
    int bad = 0;
    char first[300] = "";
    dtcast_promote_attrs attrs;
    for (int unsafe = 0; unsafe < 2; unsafe++) {
        dtcast_promote_attrs_init(&attrs);
        attrs.promote_unsafe = unsafe;
        for (size_t i = 0; i + 1 < N_OV_TYPES; i++)
            for (size_t j = 0; j + 1 < N_OV_TYPES; j++) {
                char a0[40], a1[40], ab0[OUTCOME_MAX], ab1[OUTCOME_MAX];
                snprintf(a0, sizeof a0, "%s@0", ov_types[i]);
                snprintf(a1, sizeof a1, "%s@?", ov_types[i]);
                outcome(ab0, sizeof ab0, DTCAST_RULES_OPENVINO, a0, ov_types[j], &attrs);
                outcome(ab1, sizeof ab1, DTCAST_RULES_OPENVINO, a1, ov_types[j], &attrs);
                if (strcmp(ab0, ab1) != 0 && !bad++)
                    snprintf(first, sizeof first, "%s x %s: %.100s / %.100s", ov_types[i],
                             ov_types[j], ab0, ab1);
            }
    }
    CHECK(bad == 0, "openvino ranks change nothing without pytorch_scalar_promotion",
          "%d differ; first %s", bad, first);
}

static void test_openvino_arguments(void)
{
    dtcast_promote_attrs attrs;
    dtcast_promote_attrs_init(&attrs);
    expect(DTCAST_RULES_OPENVINO, &attrs, "py:int", "i8", "invalid: operand a: the openvino rules take tensors, not Python scalars", "argument");
    attrs.u64_target = (dtcast_type)99;
    expect(DTCAST_RULES_OPENVINO, &attrs, "u64", "i8", "invalid: u64_integer_promotion_target: unknown type 99", "argument");
    attrs.u64_target = DTCAST_TYPE_DYNAMIC;
    attrs.promote_unsafe = 1;
    expect(DTCAST_RULES_OPENVINO, &attrs, "u64", "i8", "dynamic", "u64 target dynamic");
}

/* ---- aclnn ---------------------------------------------------------------------------------- */

/* aclnn-promotion.zh.txt's table exactly as the document prints it. */
static const char *const aclnn_axis[] = {"f32", "f16", "f64", "bf16", "s8", "u8",
                                         "s16", "s32", "s64", "c32",  "c64", "c128"};
static const char *const aclnn_doc[12][12] = {
    {"f32", "f32", "f64", "f32", "f32", "f32", "f32", "f32", "f32", "c64", "c64", "c128"},
    {"f32", "f16", "f64", "f32", "f16", "f16", "f16", "f16", "f16", "c32", "c64", "c128"},
    {"f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "c64", "c64", "c128"},
    {"f32", "f64", "f64", "bf16", "bf16", "bf16", "bf16", "bf16", "bf16", "c32", "c64", "c128"},
    {"f32", "f16", "f64", "bf16", "s8", "s16", "s16", "s32", "s64", "c32", "c64", "c128"},
    {"f32", "f16", "f64", "bf16", "s16", "u8", "s16", "s32", "s64", "c32", "c64", "c128"},
    {"f32", "f16", "f64", "bf16", "s16", "s16", "s16", "s32", "s64", "c32", "c64", "c128"},
    {"f32", "f16", "f64", "bf16", "s32", "s32", "s32", "s32", "s64", "c32", "c64", "c128"},
    {"f32", "f16", "f64", "bf16", "s64", "s64", "s64", "s64", "s64", "c32", "c64", "c128"},
    {"c64", "c32", "c64", "c32", "c32", "c32", "c32", "c32", "c32", "c32", "c64", "c128"},
    {"c64", "c64", "c64", "c64", "c64", "c64", "c64", "c64", "c64", "c64", "c64", "c128"},
    {"c128", "c128", "c128", "c128", "c128", "c128", "c128", "c128", "c128", "c128", "c128",
     "c128"},
};

/* docs/promotion.md and docs/differences.md, "aclnn": the document's wrong cells and the library's values. */
static const struct {
    const char *a, *b, *value;
} aclnn_fixed[] = {
    {"bf16", "f16", "f32"}, {"f64", "c32", "c128"}, {"c32", "f64", "c128"},
    {"f64", "c64", "c128"}, {"c64", "f64", "c128"}, {"bf16", "c32", "c64"},
    {"c32", "bf16", "c64"},
};

static dtcast_type aclnn_short(const char *s)
{
    dtcast_type t = DTCAST_UNDEFINED;
    dtcast_type_from_name(s, &t, NULL);
    return t;
}

static void test_aclnn_document(void)
{
    for (size_t i = 0; i < 12; i++) {
        int bad = 0;
        char first[200] = "";
        for (size_t j = 0; j < 12; j++) {
            const char *want = aclnn_doc[i][j];
            for (size_t k = 0; k < sizeof aclnn_fixed / sizeof aclnn_fixed[0]; k++)
                if (strcmp(aclnn_fixed[k].a, aclnn_axis[i]) == 0 &&
                    strcmp(aclnn_fixed[k].b, aclnn_axis[j]) == 0)
                    want = aclnn_fixed[k].value;
            char got[OUTCOME_MAX];
            outcome(got, sizeof got, DTCAST_RULES_ACLNN, aclnn_axis[i], aclnn_axis[j], NULL);
            const char *want_name = dtcast_type_name(aclnn_short(want));
            if ((!want_name || strcmp(got, want_name) != 0) && !bad++)
                snprintf(first, sizeof first, "%s x %s: got %.100s, want %s", aclnn_axis[i],
                         aclnn_axis[j], got, want);
        }
        char name[80];
        snprintf(name, sizeof name, "aclnn document table row %s", aclnn_axis[i]);
        CHECK(bad == 0, name, "%d differ; first %s", bad, first);
    }
    /* The document's own examples. */
    expect(DTCAST_RULES_ACLNN, NULL, "float16", "float32", "float32", "example");
    expect(DTCAST_RULES_ACLNN, NULL, "float32", "bool", "float32", "example");
}

static void test_aclnn_rules(void)
{
    static const char *const all[] = {"bool", "u8", "u16", "u32", "u64", "s8", "s16", "s32",
                                      "s64", "f16", "bf16", "f32", "f64", "c32", "c64", "c128"};
    const size_t n = sizeof all / sizeof all[0];
    /* bool with anything but u16/u32/u64 -> the other; u16/u32/u64 only with themselves. */
    for (size_t i = 0; i < n; i++) {
        const char *t = all[i];
        int wide = strcmp(t, "u16") == 0 || strcmp(t, "u32") == 0 || strcmp(t, "u64") == 0;
        char want[64];
        snprintf(want, sizeof want, "%s", wide ? "error" : dtcast_type_name(aclnn_short(t)));
        expect(DTCAST_RULES_ACLNN, NULL, "bool", t, want, "bool rule");
        expect(DTCAST_RULES_ACLNN, NULL, t, "bool", want, "bool rule");
        for (size_t j = 0; j < n && wide; j++) {
            if (i == j)
                expect(DTCAST_RULES_ACLNN, NULL, t, t, dtcast_type_name(aclnn_short(t)),
                       "uint16/32/64 with itself");
            else {
                expect(DTCAST_RULES_ACLNN, NULL, t, all[j], "error", "uint16/32/64 NA");
                expect(DTCAST_RULES_ACLNN, NULL, all[j], t, "error", "uint16/32/64 NA");
            }
        }
    }
    expect(DTCAST_RULES_ACLNN, NULL, "u16", "s32",
           "error: Self dtype DT_UINT16 and other dtype DT_INT32 can not promote dtype.", "message");
    expect(DTCAST_RULES_ACLNN, NULL, "bool", "u64",
           "error: Self dtype DT_BOOL and other dtype DT_UINT64 can not promote dtype.", "message");
    expect(DTCAST_RULES_ACLNN, NULL, "float8e4m3fn", "f32",
           "error: Self dtype DT_FLOAT8_E4M3FN and other dtype DT_FLOAT can not promote dtype.",
           "type outside the table");
    expect(DTCAST_RULES_ACLNN, NULL, "int4", "int4", "error", "type outside the table");
    expect(DTCAST_RULES_ACLNN, NULL, "py:float", "f32",
           "invalid: operand a: the aclnn rules take tensors, not Python scalars", "argument");
    expect(DTCAST_RULES_ACLNN, NULL, "f32@?", "f32",
           "invalid: operand a: the aclnn rules need the rank (0 or at least 1)", "argument");
}

/* docs/promotion.md, "aclnn": with exactly one 0-dim tensor, a category that is not higher leaves the dimensioned
 * type; a higher-category complex 0-dim makes a float tensor its complex counterpart. */
static void test_aclnn_zero_dim(void)
{
    static const struct {
        const char *a, *b, *want;
    } cases[] = {
        {"f16", "f32@0", "float16"},          {"f32@0", "f16", "float16"},
        {"bf16", "f64@0", "bfloat16"},        {"s8", "s64@0", "int8"},
        {"u8", "s8@0", "uint8"},              {"s8", "u8@0", "int8"},
        {"s32", "bool@0", "int32"},           {"bool", "s32@0", "int32"},
        {"bool", "f16@0", "float16"},         {"s8", "f64@0", "float64"},
        {"u8", "bf16@0", "bfloat16"},         {"s64", "c32@0", "complex32"},
        {"f16", "c128@0", "complex32"},       {"f16", "c64@0", "complex32"},
        {"bf16", "c32@0", "complex64"},       {"bf16", "c128@0", "complex64"},
        {"f32", "c128@0", "complex64"},       {"f64", "c32@0", "complex128"},
        {"f64", "c64@0", "complex128"},       {"c32", "c128@0", "complex32"},
        {"c64", "f64@0", "complex64"},        {"c32", "s64@0", "complex32"},
        {"f16@0", "bf16@0", "float32"},       {"f16@0", "bf16@3", "bfloat16"},
        {"s8@0", "u8@0", "int16"},            {"u16", "u16@0", "uint16"},
        {"u16", "bool@0", "error"},           {"bool@0", "u32", "error"},
        {"u64@0", "s64", "error"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect(DTCAST_RULES_ACLNN, NULL, cases[i].a, cases[i].b, cases[i].want, "0-dim");
}

/* The library's aclnn table is symmetric, with and without 0-dim tensors (the document's is
 * not: bf16 x f16 = f64 but f16 x bf16 = f32 there). */
static void test_aclnn_order(void)
{
    static const char *const all[] = {"bool", "u8", "u16", "u32", "u64", "s8", "s16", "s32",
                                      "s64", "f16", "bf16", "f32", "f64", "c32", "c64", "c128"};
    static const char *const ranks[] = {"@1", "@0"};
    const size_t n = sizeof all / sizeof all[0];
    int bad = 0;
    char first[300] = "";
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            for (int ri = 0; ri < 2; ri++)
                for (int rj = 0; rj < 2; rj++) {
                    char a[16], b[16], ab[OUTCOME_MAX], ba[OUTCOME_MAX];
                    snprintf(a, sizeof a, "%s%s", all[i], ranks[ri]);
                    snprintf(b, sizeof b, "%s%s", all[j], ranks[rj]);
                    outcome(ab, sizeof ab, DTCAST_RULES_ACLNN, a, b, NULL);
                    outcome(ba, sizeof ba, DTCAST_RULES_ACLNN, b, a, NULL);
                    /* The message names self and other in order; compare results only. */
                    int same = strncmp(ab, "error", 5) == 0 ? strncmp(ba, "error", 5) == 0
                                                             : strcmp(ab, ba) == 0;
                    if (!same && !bad++)
                        snprintf(first, sizeof first, "%s x %s = %.80s, reversed %.80s", a, b, ab,
                                 ba);
                }
    CHECK(bad == 0, "aclnn order independence (every pair, ranks 1 and 0)", "%d differ; first %s",
          bad, first);
    expect(DTCAST_RULES_ACLNN, NULL, "s32", "u16",
           "error: Self dtype DT_INT32 and other dtype DT_UINT16 can not promote dtype.",
           "message names self first");
}

/* ---- torch ---------------------------------------------------------------------------------- */

/* docs/promotion.md, "torch", for the dtypes torch 1.13 lacks: uint16/32/64 promote only with floats or themselves,
 * float8 only with itself; the texts are c10's. */
static void test_torch_newer_types(void)
{
    static const struct {
        const char *a, *b, *want;
    } cases[] = {
        {"uint16", "uint16", "uint16"},
        {"uint32", "float16", "float16"},
        {"bfloat16", "uint64", "bfloat16"},
        {"uint64", "float64", "float64"},
        {"uint16", "int8", "error: Promotion for uint16, uint32, uint64 types is not supported, "
                           "attempted to promote UInt16 and Char"},
        {"int8", "uint16", "error: Promotion for uint16, uint32, uint64 types is not supported, "
                           "attempted to promote Char and UInt16"},
        {"uint32", "uint64", "error: Promotion for uint16, uint32, uint64 types is not supported, "
                             "attempted to promote UInt32 and UInt64"},
        {"uint8", "uint32", "error"},
        {"bool", "uint32", "error"},
        {"uint16", "complex64", "error"},
        {"float8e4m3fn", "float8e4m3fn", "float8e4m3fn"},
        {"float8e8m0", "float8e8m0", "float8e8m0"},
        {"float8e4m3fn", "float32", "error: Promotion for Float8 Types is not supported, attempted "
                                    "to promote Float8_e4m3fn and Float"},
        {"float32", "float8e4m3fn", "error: Promotion for Float8 Types is not supported, attempted "
                                    "to promote Float and Float8_e4m3fn"},
        {"float8e5m2", "float8e4m3fn", "error"},
        {"float8e5m2fnuz", "bool", "error"},
        {"uint16", "float8e4m3fnuz", "error: Promotion for Float8 Types is not supported, "
                                     "attempted to promote UInt16 and Float8_e4m3fnuz"},
        /* result_type with the newer dtypes. */
        {"uint16", "py:int", "uint16"},
        {"uint32", "py:float", "float32"},
        {"uint64", "py:complex", "complex64"},
        {"py:bool", "uint16", "uint16"},
        {"uint16", "int64@0", "uint16"},
        {"bool", "uint16@0", "error"},
        {"int8", "float8e4m3fn@0", "error"},
        {"float8e5m2", "py:float", "float8e5m2"},
        {"float8e5m2", "float64@0", "float8e5m2"},
        {"float8e4m3fn", "py:complex", "error: Unknown Complex ScalarType for Float8_e4m3fn"},
        /* dtypes torch does not have. */
        {"int4", "int4", "error: torch has no dtype int4"},
        {"float32", "float8e4m3", "error: torch has no dtype float8e4m3"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect(DTCAST_RULES_TORCH, NULL, cases[i].a, cases[i].b, cases[i].want, "docs");
}

/* The categories of torch.result_type, by the rules of its documentation. */
static void test_torch_result_type(void)
{
    static const struct {
        const char *a, *b, *want;
    } cases[] = {
        {"int32", "py:float", "float32"},     /* default dtype */
        {"float16", "py:complex", "complex32"},
        {"bfloat16", "py:complex", "complex64"},
        {"int8", "int64@0", "int8"},          /* a 0-dim tensor of the same category */
        {"int8", "float64@0", "float64"},     /* ... of a higher one keeps its type */
        {"float16", "complex128@0", "complex32"},
        {"float16@0", "int8@0", "float16"},
        {"uint8", "py:int", "uint8"},
        {"bool", "py:int", "int64"},
        {"int64@0", "py:float", "float32"},
        {"py:int", "py:float", "float32"},
        {"py:bool", "py:bool", "bool"},
        {"int32@0", "int16@0", "int32"},
        {"float64@0", "float32", "float32"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect(DTCAST_RULES_TORCH, NULL, cases[i].a, cases[i].b, cases[i].want, "result_type");
    expect(DTCAST_RULES_TORCH, NULL, "int8@?", "int8",
           "invalid: operand a: the torch rules need the rank (0 or at least 1)", "argument");
    expect(DTCAST_RULES_TORCH, NULL, "dynamic", "int8",
           "invalid: operand a: dynamic is OpenVINO's element type; the torch rules do not take it",
           "argument");
}

static const char *const torch_operands[] = {
    "bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
    "float8e4m3fn", "float8e5m2", "float8e4m3fnuz", "float8e5m2fnuz", "float8e8m0", "float16",
    "bfloat16", "float32", "float64", "complex32", "complex64", "complex128",
};

/* Symmetric results in every category combination; messages name the arguments in order. */
static void test_torch_order(void)
{
    static const char *const suffix[] = {"", "@0"};
    static const char *const scalars[] = {"py:bool", "py:int", "py:float", "py:complex"};
    const size_t n = sizeof torch_operands / sizeof torch_operands[0];
    char ops[2 * 21 + 4][32];
    size_t nops = 0;
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < n; i++)
            snprintf(ops[nops++], sizeof ops[0], "%s%s", torch_operands[i], suffix[s]);
    for (size_t i = 0; i < 4; i++)
        snprintf(ops[nops++], sizeof ops[0], "%s", scalars[i]);
    int bad = 0;
    char first[300] = "";
    for (size_t i = 0; i < nops; i++)
        for (size_t j = 0; j < nops; j++) {
            char ab[OUTCOME_MAX], ba[OUTCOME_MAX];
            outcome(ab, sizeof ab, DTCAST_RULES_TORCH, ops[i], ops[j], NULL);
            outcome(ba, sizeof ba, DTCAST_RULES_TORCH, ops[j], ops[i], NULL);
            int same = strncmp(ab, "error", 5) == 0 ? strncmp(ba, "error", 5) == 0
                                                     : strcmp(ab, ba) == 0;
            if (!same && !bad++)
                snprintf(first, sizeof first, "%.31s x %.31s = %.80s, reversed %.80s", ops[i],
                         ops[j], ab, ba);
        }
    CHECK(bad == 0, "torch order independence of results (46 operands, every pair)",
          "%d differ; first %s", bad, first);
}

/* ---- numpy ---------------------------------------------------------------------------------- */

/* docs/promotion.md's examples ("numpy") and NEP 50's weak Python scalars (numpy 1.24 itself is value-based). */
static void test_numpy_nep50(void)
{
    static const struct {
        const char *a, *b, *want;
    } cases[] = {
        {"int64", "uint64", "float64"},   {"int8", "uint8", "int16"},
        {"int16", "float16", "float32"},  {"int32", "float32", "float64"},
        {"int8", "py:int", "int8"},       {"int8", "py:float", "float64"},
        {"float16", "py:float", "float16"}, {"float32", "py:complex", "complex64"},
        {"uint8", "py:int", "uint8"},     {"float32", "py:int", "float32"},
        {"bool", "py:int", "int64"},      {"bool", "py:float", "float64"},
        {"int16", "py:complex", "complex128"}, {"float64", "py:complex", "complex128"},
        {"complex64", "py:float", "complex64"}, {"py:int", "py:float", "float64"},
        {"uint8@0", "py:int", "uint8"},   {"int8@0", "int64", "int64"}, /* 0-dim is not weak */
        {"float32@0", "float64", "float64"}, {"float64@0", "float32", "float64"},
        {"int8@?", "int16", "int16"},
        {"bfloat16", "float32", "error: data type 'bfloat16' not understood"},
        {"float32", "float8e4m3fn", "error: data type 'float8e4m3fn' not understood"},
        {"complex32", "py:float", "error"}, {"int4", "int8", "error"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect(DTCAST_RULES_NUMPY, NULL, cases[i].a, cases[i].b, cases[i].want, "NEP 50");
}

static void test_symmetric(dtcast_promote_rules rules, const dtcast_promote_attrs *attrs,
                           const char *const *ops, size_t n, const char *label)
{
    int bad = 0;
    char first[300] = "";
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            char ab[OUTCOME_MAX], ba[OUTCOME_MAX];
            outcome(ab, sizeof ab, rules, ops[i], ops[j], attrs);
            outcome(ba, sizeof ba, rules, ops[j], ops[i], attrs);
            int same = strncmp(ab, "error", 5) == 0 ? strncmp(ba, "error", 5) == 0
                                                     : strcmp(ab, ba) == 0;
            if (!same && !bad++)
                snprintf(first, sizeof first, "%s x %s = %.80s, reversed %.80s", ops[i], ops[j],
                         ab, ba);
        }
    CHECK(bad == 0, label, "%d differ; first %s", bad, first);
}

static void test_numpy_order(void)
{
    static const char *const ops[] = {
        "bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
        "float16", "float32", "float64", "complex64", "complex128", "int8@0", "float16@0",
        "py:bool", "py:int", "py:float", "py:complex",
    };
    test_symmetric(DTCAST_RULES_NUMPY, NULL, ops, sizeof ops / sizeof ops[0],
                   "numpy order independence (every pair)");
}

/* ---- jax ------------------------------------------------------------------------------------ */

/* The promotion table of JAX's "Type promotion semantics" document (jax_enable_x64 on): i*, f*
 * and c* are the weak types, which result_type turns into int64, float64 and complex128. */
static const char *const jax_axis[] = {"b1", "u8",  "u16", "u32", "u64", "i8",  "i16", "i32", "i64",
                                       "bf16", "f16", "f32", "f64", "c64", "c128", "i*", "f*", "c*"};
static const char *const jax_doc[18][18] = {
    /* b1 */ {"b1", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "bf16", "f16", "f32", "f64", "c64", "c128", "i*", "f*", "c*"},
    /* u8 */ {"u8", "u8", "u16", "u32", "u64", "i16", "i16", "i32", "i64", "bf16", "f16", "f32", "f64", "c64", "c128", "u8", "f*", "c*"},
    /* u16 */ {"u16", "u16", "u16", "u32", "u64", "i32", "i32", "i32", "i64", "bf16", "f16", "f32", "f64", "c64", "c128", "u16", "f*", "c*"},
    /* u32 */ {"u32", "u32", "u32", "u32", "u64", "i64", "i64", "i64", "i64", "bf16", "f16", "f32", "f64", "c64", "c128", "u32", "f*", "c*"},
    /* u64 */ {"u64", "u64", "u64", "u64", "u64", "f*", "f*", "f*", "f*", "bf16", "f16", "f32", "f64", "c64", "c128", "u64", "f*", "c*"},
    /* i8 */ {"i8", "i16", "i32", "i64", "f*", "i8", "i16", "i32", "i64", "bf16", "f16", "f32", "f64", "c64", "c128", "i8", "f*", "c*"},
    /* i16 */ {"i16", "i16", "i32", "i64", "f*", "i16", "i16", "i32", "i64", "bf16", "f16", "f32", "f64", "c64", "c128", "i16", "f*", "c*"},
    /* i32 */ {"i32", "i32", "i32", "i64", "f*", "i32", "i32", "i32", "i64", "bf16", "f16", "f32", "f64", "c64", "c128", "i32", "f*", "c*"},
    /* i64 */ {"i64", "i64", "i64", "i64", "f*", "i64", "i64", "i64", "i64", "bf16", "f16", "f32", "f64", "c64", "c128", "i64", "f*", "c*"},
    /* bf16 */ {"bf16", "bf16", "bf16", "bf16", "bf16", "bf16", "bf16", "bf16", "bf16", "bf16", "f32", "f32", "f64", "c64", "c128", "bf16", "bf16", "c64"},
    /* f16 */ {"f16", "f16", "f16", "f16", "f16", "f16", "f16", "f16", "f16", "f32", "f16", "f32", "f64", "c64", "c128", "f16", "f16", "c64"},
    /* f32 */ {"f32", "f32", "f32", "f32", "f32", "f32", "f32", "f32", "f32", "f32", "f32", "f32", "f64", "c64", "c128", "f32", "f32", "c64"},
    /* f64 */ {"f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "c128", "c128", "f64", "f64", "c128"},
    /* c64 */ {"c64", "c64", "c64", "c64", "c64", "c64", "c64", "c64", "c64", "c64", "c64", "c64", "c128", "c64", "c128", "c64", "c64", "c64"},
    /* c128 */ {"c128", "c128", "c128", "c128", "c128", "c128", "c128", "c128", "c128", "c128", "c128", "c128", "c128", "c128", "c128", "c128", "c128", "c128"},
    /* i* */ {"i*", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "bf16", "f16", "f32", "f64", "c64", "c128", "i*", "f*", "c*"},
    /* f* */ {"f*", "f*", "f*", "f*", "f*", "f*", "f*", "f*", "f*", "bf16", "f16", "f32", "f64", "c64", "c128", "f*", "f*", "c*"},
    /* c* */ {"c*", "c*", "c*", "c*", "c*", "c*", "c*", "c*", "c*", "c64", "c64", "c64", "c128", "c64", "c128", "c*", "c*", "c*"},
};

/* A document name as an operand and as the result_type it stands for (x64 on). */
static void jax_name(const char *doc, char *operand, size_t osize, char *result, size_t rsize)
{
    static const struct {
        const char *doc, *operand, *result;
    } map[] = {{"b1", "bool", "bool"}, {"i*", "py:int", "int64"}, {"f*", "py:float", "float64"},
               {"c*", "py:complex", "complex128"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(doc, map[i].doc) == 0) {
            snprintf(operand, osize, "%s", map[i].operand);
            snprintf(result, rsize, "%s", map[i].result);
            return;
        }
    dtcast_type t = DTCAST_UNDEFINED;
    dtcast_type_from_name(doc, &t, NULL);
    snprintf(operand, osize, "%s", doc);
    snprintf(result, rsize, "%s", dtcast_type_name(t) ? dtcast_type_name(t) : "?");
}

static void test_jax_document(void)
{
    dtcast_promote_attrs attrs;
    dtcast_promote_attrs_init(&attrs);
    attrs.x64 = 1;
    for (size_t i = 0; i < 18; i++) {
        int bad = 0;
        char first[300] = "";
        for (size_t j = 0; j < 18; j++) {
            char a[24], b[24], want[24], unused[24], got[OUTCOME_MAX];
            jax_name(jax_axis[i], a, sizeof a, unused, sizeof unused);
            jax_name(jax_axis[j], b, sizeof b, unused, sizeof unused);
            jax_name(jax_doc[i][j], unused, sizeof unused, want, sizeof want);
            outcome(got, sizeof got, DTCAST_RULES_JAX, a, b, &attrs);
            if (strcmp(got, want) != 0 && !bad++)
                snprintf(first, sizeof first, "%s x %s: got %.100s, document %s (%s)", a, b, got,
                         jax_doc[i][j], want);
        }
        char name[80];
        snprintf(name, sizeof name, "jax document table row %s (x64)", jax_axis[i]);
        CHECK(bad == 0, name, "%d differ; first %s", bad, first);
    }
}

/* The same table with x64 off: every result canonical (64-bit types become 32-bit). */
static void test_jax_x32(void)
{
    dtcast_promote_attrs x64, x32;
    dtcast_promote_attrs_init(&x64);
    dtcast_promote_attrs_init(&x32);
    x64.x64 = 1;
    int bad = 0;
    char first[300] = "";
    for (size_t i = 0; i < 18; i++)
        for (size_t j = 0; j < 18; j++) {
            char a[24], b[24], unused[24], wide[OUTCOME_MAX], narrow[OUTCOME_MAX];
            jax_name(jax_axis[i], a, sizeof a, unused, sizeof unused);
            jax_name(jax_axis[j], b, sizeof b, unused, sizeof unused);
            outcome(wide, sizeof wide, DTCAST_RULES_JAX, a, b, &x64);
            outcome(narrow, sizeof narrow, DTCAST_RULES_JAX, a, b, &x32);
            const char *want = strcmp(wide, "int64") == 0        ? "int32"
                               : strcmp(wide, "uint64") == 0     ? "uint32"
                               : strcmp(wide, "float64") == 0    ? "float32"
                               : strcmp(wide, "complex128") == 0 ? "complex64"
                                                                 : wide;
            if (strcmp(narrow, want) != 0 && !bad++)
                snprintf(first, sizeof first, "%s x %s: %.60s with x64, %.60s without", a, b, wide,
                         narrow);
        }
    CHECK(bad == 0, "jax x64 off canonicalizes every result of the table", "%d differ; first %s",
          bad, first);
    static const struct {
        const char *a, *b, *want;
    } cases[] = {
        {"uint64", "int8", "float32"}, {"int64", "int8", "int32"},  {"py:int", "bool", "int32"},
        {"py:float", "int8", "float32"}, {"py:complex", "int8", "complex64"},
        {"uint64", "py:int", "uint32"}, {"float64", "float16", "float32"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect(DTCAST_RULES_JAX, NULL, cases[i].a, cases[i].b, cases[i].want, "x64 off");
}

static const char JAX_F8[] =
    ". To avoid unintended promotion, 8-bit floats do not support implicit promotion. If you'd "
    "like your inputs to be promoted to another type, you can do so explicitly using e.g. "
    "x.astype('float32')";
static const char JAX_INTN[] =
    ". To avoid unintended promotion, 1-bit, 2-bit and 4-bit integers do not support implicit "
    "promotion. If you'd like your inputs to be promoted to another type, you can do so "
    "explicitly using e.g. x.astype('int32')";
static const char JAX_STRICT[] =
    " when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired output "
    "type, or set jax_numpy_dtype_promotion=standard.";

static void jax_error(const dtcast_promote_attrs *attrs, const char *a, const char *b,
                      const char *dtypes, const char *why, const char *label)
{
    char want[OUTCOME_MAX];
    snprintf(want, sizeof want,
             "error: Input dtypes %s have no available implicit dtype promotion path%s", dtypes,
             why);
    expect(DTCAST_RULES_JAX, attrs, a, b, want, label);
}

static void test_jax_small_types_and_strict(void)
{
    dtcast_promote_attrs attrs;
    dtcast_promote_attrs_init(&attrs);
    attrs.x64 = 1;
    static const struct {
        const char *a, *b, *want;
    } cases[] = {
        /* float8 only with integers, bool, the weak int and float, or itself. */
        {"float8e4m3fn", "int8", "float8e4m3fn"},   {"uint64", "float8e5m2", "float8e5m2"},
        {"bool", "float8e4m3fnuz", "float8e4m3fnuz"}, {"float8e3m4", "py:float", "float8e3m4"},
        {"py:int", "float8e8m0", "float8e8m0"},      {"float8e4m3b11fnuz", "float8e4m3b11fnuz",
                                                     "float8e4m3b11fnuz"},
        {"float4e2m1", "int32", "float4e2m1"},       {"float6e3m2fn", "py:int", "float6e3m2fn"},
        {"float8e4m3", "py:complex", "error"},       {"float8e4m3fn", "bfloat16", "error"},
        /* 2- and 4-bit integers: only with bool, the weak int, or themselves. */
        {"int4", "py:int", "int4"},  {"bool", "uint4", "uint4"}, {"int2", "int2", "int2"},
        {"uint2", "py:int", "uint2"}, {"int4", "py:float", "error"}, {"uint4", "uint8", "error"},
        /* the docstring of jnp.promote_types */
        {"uint8", "py:int", "uint8"}, {"float16", "py:float", "float16"},
        {"int32", "float32", "float32"},
        /* bfloat16 + float16 -> float32; uint64 + signed -> the weak float (float64 with x64) */
        {"bfloat16", "float16", "float32"}, {"uint64", "int64", "float64"},
        {"py:bool", "py:int", "int64"},
        {"complex32", "float32",
         "error: dtype=dtype('complex32') is not a valid dtype for JAX type promotion."},
        {"string", "string", "error"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect(DTCAST_RULES_JAX, &attrs, cases[i].a, cases[i].b, cases[i].want, "lattice");
    jax_error(&attrs, "float8e4m3fn", "float16", "('float8_e4m3fn', 'float16')", JAX_F8, "8-bit");
    jax_error(&attrs, "float16", "float8e4m3fn", "('float16', 'float8_e4m3fn')", JAX_F8,
              "8-bit, reversed");
    jax_error(&attrs, "float8e5m2", "float8e4m3fn", "('float8_e5m2', 'float8_e4m3fn')", JAX_F8,
              "8-bit");
    jax_error(&attrs, "int4", "int8", "('int4', 'int8')", JAX_INTN, "4-bit");
    jax_error(&attrs, "int4", "py:float", "('int4', \"<class 'float'>\")", JAX_INTN, "4-bit");
    jax_error(&attrs, "float8e4m3fn", "int4", "('float8_e4m3fn', 'int4')", JAX_F8,
              "8-bit before 4-bit");
    jax_error(&attrs, "float6e2m3fn", "bfloat16", "('float6_e2m3fn', 'bfloat16')",
              ". To avoid unintended promotion, 6-bit floats do not support implicit promotion. "
              "If you'd like your inputs to be promoted to another type, you can do so explicitly "
              "using e.g. x.astype('float32')",
              "6-bit");

    /* Strict: only the weak types promote. */
    attrs.strict = 1;
    static const struct {
        const char *a, *b, *want;
    } strict[] = {
        {"int8", "int8", "int8"},          {"int8", "py:int", "int8"},
        {"float32", "py:float", "float32"}, {"float16", "py:int", "float16"},
        {"complex64", "py:float", "complex64"}, {"py:int", "py:float", "float64"},
        {"float8e4m3fn", "py:float", "float8e4m3fn"}, {"int4", "py:int", "int4"},
        {"bool", "bool", "bool"},          {"bool", "py:int", "error"},
        {"int32", "py:float", "error"},    {"float32", "py:complex", "error"},
        {"bfloat16", "float16", "error"},  {"uint64", "int64", "error"},
    };
    for (size_t i = 0; i < sizeof strict / sizeof strict[0]; i++)
        expect(DTCAST_RULES_JAX, &attrs, strict[i].a, strict[i].b, strict[i].want, "strict");
    jax_error(&attrs, "int32", "int16", "('int32', 'int16')", JAX_STRICT, "strict");
    jax_error(&attrs, "float32", "int32", "('float32', 'int32')", JAX_STRICT, "strict");
    jax_error(&attrs, "float8e4m3fn", "float16", "('float8_e4m3fn', 'float16')", JAX_STRICT,
              "strict before 8-bit");
}

static void test_jax_order(void)
{
    static const char *const ops[] = {
        "bool", "uint1", "uint2", "uint4", "uint8", "uint16", "uint32", "uint64", "int2", "int4",
        "int8", "int16", "int32", "int64", "float4e2m1", "float6e2m3fn", "float8e4m3fn",
        "float8e5m2", "float8e3m4", "bfloat16", "float16", "float32", "float64", "complex64",
        "complex128", "py:int", "py:float", "py:complex", "py:bool", "int8@0",
    };
    dtcast_promote_attrs attrs;
    for (int mode = 0; mode < 4; mode++) {
        dtcast_promote_attrs_init(&attrs);
        attrs.x64 = mode & 1;
        attrs.strict = mode >> 1;
        char label[80];
        snprintf(label, sizeof label, "jax order independence (x64 %d, strict %d)", attrs.x64,
                 attrs.strict);
        test_symmetric(DTCAST_RULES_JAX, &attrs, ops, sizeof ops / sizeof ops[0], label);
    }
}

/* ---- the API -------------------------------------------------------------------------------- */

static void test_operand_parse(void)
{
    static const struct {
        const char *text;
        dtcast_status st;
        dtcast_type type;
        int rank;
        dtcast_scalar_kind scalar;
    } cases[] = {
        {"float16", DTCAST_OK, DTCAST_FLOAT16, 1, DTCAST_SCALAR_NONE},
        {"int64@0", DTCAST_OK, DTCAST_INT64, 0, DTCAST_SCALAR_NONE},
        {"uint8@?", DTCAST_OK, DTCAST_UINT8, DTCAST_RANK_UNKNOWN, DTCAST_SCALAR_NONE},
        {"bf16@4", DTCAST_OK, DTCAST_BFLOAT16, 4, DTCAST_SCALAR_NONE},
        {"dynamic@?", DTCAST_OK, DTCAST_TYPE_DYNAMIC, DTCAST_RANK_UNKNOWN, DTCAST_SCALAR_NONE},
        {"py:int", DTCAST_OK, DTCAST_UNDEFINED, 0, DTCAST_SCALAR_INT},
        {"PY:Complex", DTCAST_OK, DTCAST_UNDEFINED, 0, DTCAST_SCALAR_COMPLEX},
        {"py:str", DTCAST_ERR_UNKNOWN_TYPE, 0, 0, 0},
        {"float7", DTCAST_ERR_UNKNOWN_TYPE, 0, 0, 0},
        {"int8@", DTCAST_ERR_INVALID_ARGUMENT, 0, 0, 0},
        {"int8@x", DTCAST_ERR_INVALID_ARGUMENT, 0, 0, 0},
        {"int8@-1", DTCAST_ERR_INVALID_ARGUMENT, 0, 0, 0},
        {"@0", DTCAST_ERR_UNKNOWN_TYPE, 0, 0, 0},
        {"", DTCAST_ERR_UNKNOWN_TYPE, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dtcast_operand op = {DTCAST_UNDEFINED, 0, DTCAST_SCALAR_NONE};
        dtcast_status st = dtcast_operand_parse(cases[i].text, &op, NULL);
        int ok = st == cases[i].st &&
                 (st != DTCAST_OK || (op.type == cases[i].type && op.rank == cases[i].rank &&
                                      op.scalar == cases[i].scalar));
        char name[80];
        snprintf(name, sizeof name, "operand parse \"%s\"", cases[i].text);
        CHECK(ok, name, "status %d type %d rank %d scalar %d", (int)st, (int)op.type, op.rank,
              (int)op.scalar);
    }
    CHECK(dtcast_operand_parse(NULL, NULL, NULL) == DTCAST_ERR_INVALID_ARGUMENT, "operand parse NULL",
          "accepted");
}

static void test_api_errors(void)
{
    dtcast_operand f32 = {DTCAST_FLOAT32, 1, DTCAST_SCALAR_NONE};
    dtcast_operand bad_type = {(dtcast_type)99, 1, DTCAST_SCALAR_NONE};
    dtcast_operand bad_rank = {DTCAST_FLOAT32, -2, DTCAST_SCALAR_NONE};
    dtcast_operand bad_kind = {DTCAST_FLOAT32, 1, (dtcast_scalar_kind)9};
    dtcast_type out = DTCAST_UNDEFINED;
    dtcast_error e;
    memset(&e, 0, sizeof e);
    const char *msg = e.message;
    CHECK(dtcast_promote(NULL, DTCAST_RULES_TORCH, &f32, &f32, NULL,
                         &e) ==
              DTCAST_ERR_INVALID_ARGUMENT,
          "promote NULL result", "accepted");
    CHECK(dtcast_promote(&out, DTCAST_RULES_TORCH, NULL, &f32, NULL,
                         &e) ==
                  DTCAST_ERR_INVALID_ARGUMENT &&
              strcmp(msg, "operand a is NULL") == 0,
          "promote NULL operand", "%s", msg);
    CHECK(dtcast_promote(&out, (dtcast_promote_rules)7, &f32, &f32, NULL,
                         &e) ==
              DTCAST_ERR_INVALID_ARGUMENT,
          "promote unknown rules", "accepted");
    CHECK(dtcast_promote(&out, DTCAST_RULES_NUMPY, &f32, &bad_type, NULL,
                         &e) ==
                  DTCAST_ERR_UNKNOWN_TYPE &&
              strcmp(msg, "operand b: unknown type 99") == 0,
          "promote unknown type", "%s", msg);
    CHECK(dtcast_promote(&out, DTCAST_RULES_NUMPY, &bad_rank, &f32, NULL,
                         &e) ==
              DTCAST_ERR_INVALID_ARGUMENT,
          "promote bad rank", "%s", msg);
    CHECK(dtcast_promote(&out, DTCAST_RULES_JAX, &bad_kind, &f32, NULL,
                         &e) ==
              DTCAST_ERR_INVALID_ARGUMENT,
          "promote bad scalar kind", "%s", msg);
    out = DTCAST_INT8;
    CHECK(dtcast_promote(&out, DTCAST_RULES_OPENVINO, &bad_type, &f32, NULL,
                         NULL) ==
                  DTCAST_ERR_UNKNOWN_TYPE && out == DTCAST_INT8,
          "promote failure leaves result, NULL error", "out %d", (int)out);
    /* A refusal fills status and index; a success leaves the error as it was. */
    dtcast_operand i8 = {DTCAST_INT8, 1, DTCAST_SCALAR_NONE};
    dtcast_operand f16 = {DTCAST_FLOAT16, 1, DTCAST_SCALAR_NONE};
    dtcast_operand i64 = {DTCAST_INT64, 1, DTCAST_SCALAR_NONE};
    CHECK(dtcast_promote(&out, DTCAST_RULES_OPENVINO, &i64, &f16, NULL, &e) ==
                  DTCAST_ERR_PROMOTION &&
              e.status == DTCAST_ERR_PROMOTION && e.index == (size_t)-1 &&
              strncmp(msg, "Integer", 7) == 0,
          "promote error fields", "\"%s\"", msg);
    CHECK(dtcast_promote(&out, DTCAST_RULES_OPENVINO, &i8, &f16, NULL, &e) == DTCAST_OK &&
              out == DTCAST_FLOAT16 && e.status == DTCAST_ERR_PROMOTION,
          "promote success leaves the error alone", "\"%s\"", msg);
    static const char *const names[] = {"openvino", "aclnn", "torch", "numpy", "jax",
                                        "numpy+ml_dtypes"};
    for (int r = 0; r < 6; r++) {
        dtcast_promote_rules rules;
        char name[48];
        snprintf(name, sizeof name, "rules name %s", names[r]);
        CHECK(dtcast_promote_rules_from_name(names[r], &rules, NULL) == DTCAST_OK &&
                  (int)rules == r &&
                  strcmp(dtcast_promote_rules_name(rules), names[r]) == 0,
              name, "round trip failed");
    }
    dtcast_promote_rules rules;
    CHECK(dtcast_promote_rules_from_name("tensorflow", &rules, NULL) == DTCAST_ERR_INVALID_ARGUMENT &&
              dtcast_promote_rules_name((dtcast_promote_rules)6) == NULL,
          "rules name unknown", "accepted");
    CHECK(dtcast_type_name(DTCAST_TYPE_DYNAMIC) == NULL, "dynamic is not a data type",
          "has a name");
}

/* ---- converting --------------------------------------------------------------------------- */

static void test_convert_promote_types(void)
{
    dtcast_error error;
    dtcast_options opts;
    dtcast_options_init(&opts);
    dtcast_promote_attrs attrs;
    dtcast_promote_attrs_init(&attrs);

    /* Example 2 of the document: I16 and U32 with promote_unsafe -> I64. */
    int16_t a[3] = {1, -2, 300};
    uint32_t b[2] = {7, 4000000000u};
    dtcast_tensor_view in0 = {a, DTCAST_INT16, 3, 2}, in1 = {b, DTCAST_UINT32, 2, 1};
    int64_t o0[3] = {0}, o1[2] = {0};
    dtcast_type common = DTCAST_UNDEFINED;
    memset(&error, 0, sizeof error);
    dtcast_status st = dtcast_convert_promote_types(o0, sizeof o0, o1, sizeof o1, &common, &in0,
                                                    &in1, &attrs, &opts, &error);
    CHECK(st == DTCAST_ERR_PROMOTION &&
              strcmp(error.message, "Unsigned integer input cannot be safely promoted into any "
                                    "supported signed integer.") == 0 &&
              o0[0] == 0 && common == DTCAST_UNDEFINED,
          "ConvertPromoteTypes i16 x u32 safe refuses, writes nothing", "status %d: %s", (int)st,
          error.message);
    attrs.promote_unsafe = 1;
    st = dtcast_convert_promote_types(o0, sizeof o0, o1, sizeof o1, &common, &in0, &in1, &attrs,
                                      &opts, &error);
    CHECK(st == DTCAST_OK && common == DTCAST_INT64 && o0[0] == 1 && o0[1] == -2 &&
              o0[2] == 300 && o1[0] == 7 && o1[1] == 4000000000LL,
          "ConvertPromoteTypes i16 x u32 unsafe -> int64 values", "status %d common %d", (int)st,
          (int)common);

    /* Example 3: I16 and U64 unsafe -> the target, f32 (2^63 + 1 rounds to 2^63). */
    uint64_t c[1] = {(UINT64_C(1) << 63) + 1};
    dtcast_tensor_view in2 = {c, DTCAST_UINT64, 1, 1};
    float f0[3], f1[1];
    st = dtcast_convert_promote_types(f0, sizeof f0, f1, sizeof f1, &common, &in0, &in2, &attrs,
                                      &opts, &error);
    CHECK(st == DTCAST_OK && common == DTCAST_FLOAT32 && f0[1] == -2.0f &&
              f1[0] == 9223372036854775808.0f,
          "ConvertPromoteTypes i16 x u64 unsafe -> float32", "status %d common %d", (int)st,
          (int)common);

    /* Example 1: FP16 and FP32 -> FP32 (1.0 and 65504 in half precision). */
    uint16_t h[2] = {0x3C00, 0x7BFF};
    float g[1] = {0.5f};
    dtcast_tensor_view inh = {h, DTCAST_FLOAT16, 2, 2}, ing = {g, DTCAST_FLOAT32, 1, 1};
    float r0[2], r1[1];
    dtcast_promote_attrs_init(&attrs);
    st = dtcast_convert_promote_types(r0, sizeof r0, r1, sizeof r1, &common, &inh, &ing, NULL,
                                      &opts, &error);
    CHECK(st == DTCAST_OK && common == DTCAST_FLOAT32 && r0[0] == 1.0f && r0[1] == 65504.0f &&
              r1[0] == 0.5f,
          "ConvertPromoteTypes f16 x f32 -> float32", "status %d", (int)st);

    /* A buffer too small is refused before anything is written. */
    float small[1] = {-1.0f};
    st = dtcast_convert_promote_types(small, sizeof small, r1, sizeof r1, &common, &inh, &ing,
                                      NULL, &opts, &error);
    CHECK(st == DTCAST_ERR_INVALID_ARGUMENT && small[0] == -1.0f &&
              strstr(error.message, "output 0 holds 4 bytes") != NULL,
          "ConvertPromoteTypes output too small", "status %d: %s", (int)st, error.message);

    /* A dynamic result has nothing to convert to. */
    attrs.pytorch_scalar_promotion = 1;
    dtcast_tensor_view unknown = {g, DTCAST_FLOAT32, 1, DTCAST_RANK_UNKNOWN};
    st = dtcast_convert_promote_types(r0, sizeof r0, r1, sizeof r1, &common, &inh, &unknown,
                                      &attrs, &opts, &error);
    CHECK(st == DTCAST_ERR_INVALID_ARGUMENT && strstr(error.message, "dynamic") != NULL,
          "ConvertPromoteTypes dynamic result refused", "status %d: %s", (int)st, error.message);

    /* pytorch_scalar_promotion: a 0-dim f32 joins a dimensioned f16 as f16 (unsafe). */
    attrs.promote_unsafe = 1;
    dtcast_tensor_view scalar = {g, DTCAST_FLOAT32, 1, 0};
    uint16_t hh0[2], hh1[1];
    st = dtcast_convert_promote_types(hh0, sizeof hh0, hh1, sizeof hh1, &common, &inh, &scalar,
                                      &attrs, &opts, &error);
    CHECK(st == DTCAST_OK && common == DTCAST_FLOAT16 && hh0[0] == 0x3C00 && hh1[0] == 0x3800,
          "ConvertPromoteTypes pytorch mode S(f32) D(f16) -> float16", "status %d", (int)st);

    /* Empty tensors and NULL inputs. */
    dtcast_tensor_view empty = {NULL, DTCAST_INT8, 0, 1};
    st = dtcast_convert_promote_types(NULL, 0, r1, sizeof r1, &common, &empty, &ing, NULL, &opts,
                                      &error);
    CHECK(st == DTCAST_OK && common == DTCAST_FLOAT32, "ConvertPromoteTypes empty input",
          "status %d: %s", (int)st, error.message);
    st = dtcast_convert_promote_types(r0, sizeof r0, r1, sizeof r1, &common, NULL, &ing, NULL,
                                      &opts, &error);
    CHECK(st == DTCAST_ERR_INVALID_ARGUMENT, "ConvertPromoteTypes NULL input", "status %d",
          (int)st);
}

static void test_aclnn_binary(void)
{
    dtcast_error error;
    dtcast_options opts;
    dtcast_options_init(&opts);
    /* aclnnAdd(self f16 tensor, other 0-dim f32) -> f16: the 0-dim does not widen. */
    uint16_t h[2] = {0x3C00, 0xC000};
    float g[1] = {0.25f};
    dtcast_tensor_view self = {h, DTCAST_FLOAT16, 2, 1}, other = {g, DTCAST_FLOAT32, 1, 0};
    uint16_t o0[2], o1[1];
    dtcast_type common = DTCAST_UNDEFINED;
    dtcast_status st = dtcast_aclnn_promote_binary(o0, sizeof o0, o1, sizeof o1, &common, &self,
                                                   &other, &opts, &error);
    CHECK(st == DTCAST_OK && common == DTCAST_FLOAT16 && o0[1] == 0xC000 && o1[0] == 0x3400,
          "aclnn binary f16 x 0-dim f32 -> float16", "status %d common %d", (int)st, (int)common);
    /* Both dimensioned: f32 wins; bool becomes 1.0. */
    uint8_t flags[2] = {1, 0};
    dtcast_tensor_view bools = {flags, DTCAST_BOOL, 2, 1}, floats = {g, DTCAST_FLOAT32, 1, 3};
    float f0[2], f1[1];
    st = dtcast_aclnn_promote_binary(f1, sizeof f1, f0, sizeof f0, &common, &floats, &bools, &opts,
                                     &error);
    CHECK(st == DTCAST_OK && common == DTCAST_FLOAT32 && f0[0] == 1.0f && f0[1] == 0.0f,
          "aclnn binary f32 x bool -> float32", "status %d", (int)st);
    uint16_t u[1] = {5};
    dtcast_tensor_view u16 = {u, DTCAST_UINT16, 1, 1};
    st = dtcast_aclnn_promote_binary(f0, sizeof f0, f1, sizeof f1, &common, &u16, &floats, &opts,
                                     &error);
    CHECK(st == DTCAST_ERR_PROMOTION &&
              strcmp(error.message,
                     "Self dtype DT_UINT16 and other dtype DT_FLOAT can not promote dtype.") == 0,
          "aclnn binary u16 x f32 refused", "status %d: %s", (int)st, error.message);
}

int main(int argc, char **argv)
{
    (void)argc;
    test_real_tables(argv[0]);
    test_openvino_document();
    test_openvino_upstream();
    test_openvino_spec();
    test_openvino_order();
    test_openvino_ranks_matter_only_with_pytorch_mode();
    test_openvino_arguments();
    test_aclnn_document();
    test_aclnn_rules();
    test_aclnn_zero_dim();
    test_aclnn_order();
    test_torch_newer_types();
    test_torch_result_type();
    test_torch_order();
    test_numpy_nep50();
    test_numpy_order();
    test_jax_document();
    test_jax_x32();
    test_jax_small_types_and_strict();
    test_jax_order();
    test_operand_parse();
    test_api_errors();
    test_convert_promote_types();
    test_aclnn_binary();
    return CHECK_EXIT();
}
