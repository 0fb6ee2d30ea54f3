/* Tests of files/onnx_schema.h, the ONNX operator schemas generated from onnx.defs: the table's
 * shape (each domain sorted by (op, since) with no repeat, every schema found at its own
 * since_version and not before, the formals' constraint indices and copied masks, the counts);
 * then facts of ONNX's schemas, each checked with onnx 1.23.2's onnx.defs when written here: the
 * versions of Add, Resize, Cast, Range, Upsample, Scatter, GroupNormalization; the types they
 * allow (Add-7 float16 but not bfloat16, Add-13 both; Resize's scales a literal tensor(float),
 * roi of T2 = float16/float/double, sizes an optional tensor(int64); Cast's float8, int4, float4,
 * float8e8m0 and float6 by opset; Range-11 without float16, Range-27 with it), variadic and
 * non-tensor formals (Concat, Loop, SequenceInsert, ai.onnx.ml CastMap), deprecated schemas;
 * lookups that find nothing (unknown op or domain, opset 0, a prefix of a name, another case);
 * "ai.onnx" is "", op names are (pointer, length). */
#include "check.h"
#include "files/onnx_schema.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* TensorProto.DataType (onnx.proto) */
enum {
    FLOAT = 1, UINT8 = 2, INT8 = 3, UINT16 = 4, INT16 = 5, INT32 = 6, INT64 = 7, STRING = 8,
    BOOL = 9, FLOAT16 = 10, DOUBLE = 11, UINT32 = 12, UINT64 = 13, COMPLEX64 = 14,
    COMPLEX128 = 15, BFLOAT16 = 16, FLOAT8E4M3FN = 17, FLOAT8E4M3FNUZ = 18, FLOAT8E5M2 = 19,
    FLOAT8E5M2FNUZ = 20, UINT4 = 21, INT4 = 22, FLOAT4E2M1 = 23, FLOAT8E8M0 = 24, UINT2 = 25,
    INT2 = 26, FLOAT6E2M3 = 27, FLOAT6E3M2 = 28
};
#define B(t) DT_ONNX_TYPE_BIT(t)
#define F8 (B(FLOAT8E4M3FN) | B(FLOAT8E4M3FNUZ) | B(FLOAT8E5M2) | B(FLOAT8E5M2FNUZ))

static const dt_onnx_schema *find(const char *domain, const char *op, int64_t opset)
{
    return dt_onnx_schema_find(domain, strlen(domain), op, strlen(op), opset);
}

/* The formal named name among s's inputs (NULL if none). */
static const dt_onnx_formal *input(const dt_onnx_schema *s, const char *name)
{
    for (int i = 0; s && i < s->n_in; i++)
        if (strcmp(s->in[i].name, name) == 0)
            return &s->in[i];
    return NULL;
}

/* The constraint of formal f of s (NULL for a literal type). */
static const dt_onnx_constraint *con_of(const dt_onnx_schema *s, const dt_onnx_formal *f)
{
    return s && f && f->constraint >= 0 ? &s->con[f->constraint] : NULL;
}

/* The constraint named name of s (NULL if none). */
static const dt_onnx_constraint *con_named(const dt_onnx_schema *s, const char *name)
{
    for (int i = 0; s && i < s->n_con; i++)
        if (strcmp(s->con[i].name, name) == 0)
            return &s->con[i];
    return NULL;
}

/* The since_version op at opset resolves to; 0 when none. */
static int since(const char *domain, const char *op, int64_t opset)
{
    const dt_onnx_schema *s = find(domain, op, opset);
    return s ? s->since : 0;
}

static int formals_ok(const dt_onnx_schema *s, const dt_onnx_formal *f, int n, char *why,
                      size_t wlen)
{
    if ((n == 0) != (f == NULL)) {
        snprintf(why, wlen, "%s-%d: %d formals, array %p", s->op, s->since, n, (const void *)f);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        const dt_onnx_formal *p = &f[i];
        int ok = p->name && p->name[0] && p->option <= DT_ONNX_VARIADIC && p->homogeneous <= 1 &&
                 p->constraint >= -1 && p->constraint < s->n_con &&
                 (p->constraint < 0 || p->types == s->con[p->constraint].tensor_types) &&
                 (p->types & 1) == 0;
        if (!ok) {
            snprintf(why, wlen, "%s-%d: formal %d (%s)", s->op, s->since, i,
                     p->name ? p->name : "(null)");
            return 0;
        }
    }
    return 1;
}

/* One domain's table: sorted strictly by (op as bytes, since), each schema found at its own
 * since_version (and, at since - 1, the op's previous schema or nothing), fields consistent. */
static void check_table(const char *domain, const char *name, size_t expect_n)
{
    size_t n = 0;
    const dt_onnx_schema *all = dt_onnx_schema_all(domain, strlen(domain), &n);
    char why[256] = "";
    int ok = all != NULL && n > 0;
    for (size_t i = 0; ok && i < n; i++) {
        const dt_onnx_schema *s = &all[i], *prev = i ? &all[i - 1] : NULL;
        int same_op = prev && strcmp(prev->op, s->op) == 0;
        if (prev && !(strcmp(prev->op, s->op) < 0 || (same_op && prev->since < s->since))) {
            snprintf(why, sizeof why, "%s-%d after %s-%d", s->op, s->since, prev->op, prev->since);
            ok = 0;
            break;
        }
        if (find(domain, s->op, s->since) != s ||
            find(domain, s->op, s->since - 1) != (same_op ? prev : NULL)) {
            snprintf(why, sizeof why, "%s-%d not found at its since_version", s->op, s->since);
            ok = 0;
            break;
        }
        if (s->since < 1 || s->deprecated > 1 || (s->n_con == 0) != (s->con == NULL) ||
            s->min_in < 0 || s->min_in > s->max_in || s->min_out < 0 ||
            s->min_out > s->max_out) {
            snprintf(why, sizeof why, "%s-%d: fields", s->op, s->since);
            ok = 0;
            break;
        }
        for (int c = 0; ok && c < s->n_con; c++)
            if (!s->con[c].name || (s->con[c].tensor_types == 0 && !s->con[c].other_types) ||
                (s->con[c].tensor_types & 1) || s->con[c].other_types > 1) {
                snprintf(why, sizeof why, "%s-%d: constraint %d", s->op, s->since, c);
                ok = 0;
            }
        ok = ok && formals_ok(s, s->in, s->n_in, why, sizeof why) &&
             formals_ok(s, s->out, s->n_out, why, sizeof why);
    }
    /* the count of onnx 1.23.2 (len of get_all_schemas_with_history() in the domain) */
    if (ok && expect_n && strcmp(dt_onnx_schema_version(), "1.23.2") == 0 && n != expect_n) {
        snprintf(why, sizeof why, "%zu schemas, onnx 1.23.2 has %zu", n, expect_n);
        ok = 0;
    }
    CHECK(ok, name, "%s", why);
}

static void test_version(void)
{
    const char *v = dt_onnx_schema_version();
    CHECK(v && v[0] >= '1' && v[0] <= '9' && strchr(v, '.'), "version", "\"%s\"", v ? v : "");
}

static void test_add(void)
{
    static const int versions[][2] = {{1, 1}, {5, 1}, {6, 6}, {7, 7}, {12, 7}, {13, 13},
                                      {14, 14}, {28, 14}, {1000, 14}};
    int ok = 1;
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
        ok &= since("", "Add", versions[i][0]) == versions[i][1];
    CHECK(ok, "add_versions", "Add at opset 12 -> %d, 13 -> %d", since("", "Add", 12),
          since("", "Add", 13));

    const dt_onnx_schema *s = find("", "Add", 13);
    const dt_onnx_constraint *t = s ? con_of(s, input(s, "A")) : NULL;
    CHECK(s && s->n_in == 2 && s->n_out == 1 && t && strcmp(t->name, "T") == 0 &&
              con_of(s, input(s, "B")) == t && con_of(s, &s->out[0]) == t &&
              (t->tensor_types & B(FLOAT16)) && (t->tensor_types & B(BFLOAT16)) &&
              (t->tensor_types & B(FLOAT)) && !(t->tensor_types & B(BOOL)) && !t->other_types,
          "add13_float16_bfloat16", "T = %#llx", t ? (unsigned long long)t->tensor_types : 0ull);

    s = find("", "Add", 7);
    t = s ? con_named(s, "T") : NULL;
    CHECK(s && s->since == 7 && t && (t->tensor_types & B(FLOAT16)) &&
              !(t->tensor_types & B(BFLOAT16)),
          "add7_float16_not_bfloat16", "T = %#llx",
          t ? (unsigned long long)t->tensor_types : 0ull);
    /* Add-7's T exactly: double, float, float16, int32, int64, uint32, uint64 */
    CHECK(t && t->tensor_types == (B(DOUBLE) | B(FLOAT) | B(FLOAT16) | B(INT32) | B(INT64) |
                                   B(UINT32) | B(UINT64)),
          "add7_T_exact", "T = %#llx", t ? (unsigned long long)t->tensor_types : 0ull);
}

static void test_resize(void)
{
    static const int versions[][2] = {{9, 0}, {10, 10}, {11, 11}, {12, 11}, {13, 13}, {17, 13},
                                      {18, 18}, {19, 19}, {28, 19}};
    int ok = 1;
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
        ok &= since("", "Resize", versions[i][0]) == versions[i][1];
    CHECK(ok, "resize_versions", "Resize at 11 -> %d, 13 -> %d, 18 -> %d, 19 -> %d",
          since("", "Resize", 11), since("", "Resize", 13), since("", "Resize", 18),
          since("", "Resize", 19));

    static const int opsets[] = {11, 13, 18, 19};
    for (size_t i = 0; i < sizeof opsets / sizeof opsets[0]; i++) {
        int v = opsets[i];
        const dt_onnx_schema *s = find("", "Resize", v);
        const dt_onnx_formal *x = input(s, "X"), *roi = input(s, "roi");
        const dt_onnx_formal *scales = input(s, "scales"), *sizes = input(s, "sizes");
        const dt_onnx_constraint *t2 = con_of(s, roi), *t1 = con_of(s, x);
        /* roi, scales: required at 11, optional from 13 (min_input 3, then 1) */
        int opt = v >= 13 ? DT_ONNX_OPTIONAL : DT_ONNX_SINGLE;
        char name[64];
        snprintf(name, sizeof name, "resize%d_inputs", v);
        CHECK(s && s->since == v && s->n_in == 4 && x == &s->in[0] && roi == &s->in[1] &&
                  scales == &s->in[2] && sizes == &s->in[3] && s->min_in == (v >= 13 ? 1 : 3) &&
                  s->max_in == 4 && s->n_out == 1 && con_of(s, &s->out[0]) == t1,
              name, "since %d, n_in %d, min_in %d", s ? s->since : 0, s ? s->n_in : 0,
              s ? s->min_in : 0);
        snprintf(name, sizeof name, "resize%d_scales_float", v);
        CHECK(scales && scales->constraint == -1 && scales->types == B(FLOAT) &&
                  scales->option == opt,
              name, "constraint %d, types %#llx, option %d", scales ? scales->constraint : 99,
              scales ? (unsigned long long)scales->types : 0ull, scales ? scales->option : 99);
        snprintf(name, sizeof name, "resize%d_roi_T2", v);
        CHECK(t2 && strcmp(t2->name, "T2") == 0 &&
                  t2->tensor_types == (B(FLOAT16) | B(FLOAT) | B(DOUBLE)) && !t2->other_types &&
                  roi->types == t2->tensor_types && roi->option == opt,
              name, "%s = %#llx", t2 ? t2->name : "(none)",
              t2 ? (unsigned long long)t2->tensor_types : 0ull);
        snprintf(name, sizeof name, "resize%d_sizes_int64_optional", v);
        CHECK(sizes && sizes->constraint == -1 && sizes->types == B(INT64) &&
                  sizes->option == DT_ONNX_OPTIONAL,
              name, "constraint %d, types %#llx, option %d", sizes ? sizes->constraint : 99,
              sizes ? (unsigned long long)sizes->types : 0ull, sizes ? sizes->option : 99);
        /* T1: bfloat16 from 13 on */
        snprintf(name, sizeof name, "resize%d_T1", v);
        CHECK(t1 && strcmp(t1->name, "T1") == 0 && (t1->tensor_types & B(FLOAT16)) &&
                  (t1->tensor_types & B(STRING)) && !!(t1->tensor_types & B(BFLOAT16)) == (v >= 13),
              name, "T1 = %#llx", t1 ? (unsigned long long)t1->tensor_types : 0ull);
    }
    /* Resize-10: X, scales (tensor(float)) */
    const dt_onnx_schema *s = find("", "Resize", 10);
    CHECK(s && s->n_in == 2 && input(s, "scales") == &s->in[1] &&
              s->in[1].constraint == -1 && s->in[1].types == B(FLOAT),
          "resize10_scales", "n_in %d", s ? s->n_in : 0);
}

static void test_cast(void)
{
    static const int versions[][2] = {{1, 1}, {6, 6}, {9, 9}, {12, 9}, {13, 13}, {19, 19},
                                      {20, 19}, {21, 21}, {22, 21}, {23, 23}, {24, 24},
                                      {25, 25}, {27, 25}, {28, 28}};
    int ok = 1;
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
        ok &= since("", "Cast", versions[i][0]) == versions[i][1];
    CHECK(ok, "cast_versions", "Cast at 21 -> %d, 25 -> %d", since("", "Cast", 21),
          since("", "Cast", 25));

    /* T2 (the output, `to`) per opset: float8 from 19, int4/uint4 from 21, float4e2m1 from 23,
     * float8e8m0 from 24, int2/uint2 from 25, float6 from 28 */
    for (int v = 13; v <= 28; v++) {
        const dt_onnx_schema *s = find("", "Cast", v);
        const dt_onnx_constraint *t2 = s && s->n_out == 1 ? con_of(s, &s->out[0]) : NULL;
        uint64_t m = t2 ? t2->tensor_types : 0;
        uint64_t want = (v >= 19 ? F8 : 0) | (v >= 21 ? B(INT4) | B(UINT4) : 0) |
                        (v >= 23 ? B(FLOAT4E2M1) : 0) | (v >= 24 ? B(FLOAT8E8M0) : 0) |
                        (v >= 25 ? B(INT2) | B(UINT2) : 0) |
                        (v >= 28 ? B(FLOAT6E2M3) | B(FLOAT6E3M2) : 0);
        uint64_t narrow = F8 | B(INT4) | B(UINT4) | B(FLOAT4E2M1) | B(FLOAT8E8M0) | B(INT2) |
                          B(UINT2) | B(FLOAT6E2M3) | B(FLOAT6E3M2);
        char name[64];
        snprintf(name, sizeof name, "cast%d_T2", v);
        CHECK(t2 && strcmp(t2->name, "T2") == 0 && (m & narrow) == want &&
                  (m & B(FLOAT16)) && (m & B(BFLOAT16)) && (m & B(STRING)) && (m & B(BOOL)) &&
                  !(m & (B(COMPLEX64) | B(COMPLEX128))) && con_named(s, "T1") &&
                  con_named(s, "T1")->tensor_types == m,
              name, "T2 = %#llx, want narrow types %#llx", (unsigned long long)m,
              (unsigned long long)want);
    }
}

static void test_range(void)
{
    const dt_onnx_schema *s = find("", "Range", 11);
    const dt_onnx_constraint *t = con_named(s, "T");
    uint64_t want = B(FLOAT) | B(DOUBLE) | B(INT16) | B(INT32) | B(INT64);
    CHECK(s && s->since == 11 && t && t->tensor_types == want && !(t->tensor_types & B(FLOAT16)),
          "range11_no_float16", "T = %#llx", t ? (unsigned long long)t->tensor_types : 0ull);
    CHECK(since("", "Range", 10) == 0 && since("", "Range", 26) == 11 &&
              since("", "Range", 27) == 27,
          "range_versions", "26 -> %d, 27 -> %d", since("", "Range", 26), since("", "Range", 27));
    s = find("", "Range", 27);
    t = con_named(s, "T");
    CHECK(t && t->tensor_types == (want | B(FLOAT16) | B(BFLOAT16)), "range27_float16",
          "T = %#llx", t ? (unsigned long long)t->tensor_types : 0ull);
}

static void test_variadic_and_other(void)
{
    const dt_onnx_schema *s = find("", "Concat", 13);
    CHECK(s && s->n_in == 1 && s->in[0].option == DT_ONNX_VARIADIC && s->in[0].homogeneous &&
              s->min_in == 1 && s->max_in == INT32_MAX && s->max_out == 1,
          "concat13_variadic", "option %d, max_in %d", s ? s->in[0].option : 0,
          s ? s->max_in : 0);

    s = find("", "Loop", 16);
    const dt_onnx_formal *v = input(s, "v_initial");
    const dt_onnx_constraint *vc = con_of(s, v);
    CHECK(s && s->since == 16 && v && v->option == DT_ONNX_VARIADIC && !v->homogeneous && vc &&
              strcmp(vc->name, "V") == 0 && vc->other_types && (vc->tensor_types & B(FLOAT)) &&
              (vc->tensor_types & B(BFLOAT16)) && s->in[0].option == DT_ONNX_OPTIONAL &&
              con_of(s, &s->in[0])->tensor_types == B(INT64) &&
              con_of(s, &s->in[1])->tensor_types == B(BOOL) && s->min_in == 2 &&
              s->max_in == INT32_MAX && s->max_out == INT32_MAX,
          "loop16_heterogeneous_other", "V = %#llx other %d",
          vc ? (unsigned long long)vc->tensor_types : 0ull, vc ? vc->other_types : 0);

    s = find("", "SequenceInsert", 11);
    const dt_onnx_constraint *seq = con_of(s, input(s, "input_sequence"));
    const dt_onnx_formal *pos = input(s, "position");
    CHECK(seq && strcmp(seq->name, "S") == 0 && seq->tensor_types == 0 && seq->other_types &&
              input(s, "input_sequence")->types == 0 && pos && pos->option == DT_ONNX_OPTIONAL &&
              con_of(s, pos)->tensor_types == (B(INT32) | B(INT64)),
          "sequenceinsert11_seq", "S = %#llx other %d",
          seq ? (unsigned long long)seq->tensor_types : 0ull, seq ? seq->other_types : 0);

    s = find("", "Constant", 13);
    CHECK(s && s->since == 13 && s->n_in == 0 && s->in == NULL && s->min_in == 0 &&
              s->max_in == 0 && s->n_out == 1 && con_of(s, &s->out[0]) &&
              (con_of(s, &s->out[0])->tensor_types & B(BFLOAT16)),
          "constant13_no_inputs", "n_in %d", s ? s->n_in : -1);

    /* ai.onnx.ml: CastMap-1's X is a map (T1: map(int64, float), map(int64, string)) */
    s = find("ai.onnx.ml", "CastMap", 5);
    const dt_onnx_constraint *t1 = con_of(s, input(s, "X"));
    const dt_onnx_constraint *t2 = con_named(s, "T2");
    CHECK(s && s->since == 1 && t1 && t1->tensor_types == 0 && t1->other_types && t2 &&
              t2->tensor_types == (B(FLOAT) | B(INT64) | B(STRING)) && !t2->other_types,
          "ml_castmap_map", "since %d", s ? s->since : 0);
}

static void test_deprecated(void)
{
    const dt_onnx_schema *s9 = find("", "Upsample", 9), *s10 = find("", "Upsample", 10);
    const dt_onnx_schema *s28 = find("", "Upsample", 28);
    CHECK(s9 && s9->since == 9 && !s9->deprecated && s10 && s10->since == 10 &&
              s10->deprecated && s28 == s10,
          "upsample10_deprecated", "9: %d, 10: %d", s9 ? s9->deprecated : -1,
          s10 ? s10->deprecated : -1);
    const dt_onnx_schema *sc = find("", "Scatter", 13);
    CHECK(sc && sc->since == 11 && sc->deprecated && since("", "Scatter", 10) == 9 &&
              !find("", "Scatter", 10)->deprecated,
          "scatter11_deprecated", "since %d", sc ? sc->since : 0);
    const dt_onnx_schema *g18 = find("", "GroupNormalization", 20);
    const dt_onnx_schema *g21 = find("", "GroupNormalization", 21);
    CHECK(g18 && g18->since == 18 && g18->deprecated && g21 && g21->since == 21 &&
              !g21->deprecated,
          "groupnormalization18_deprecated", "%d %d", g18 ? g18->deprecated : -1,
          g21 ? g21->deprecated : -1);
}

static void test_misses(void)
{
    CHECK(find("", "NoSuchOp", 28) == NULL && find("", "", 28) == NULL &&
              find("", "Ad", 13) == NULL && find("", "Addx", 13) == NULL &&
              find("", "add", 13) == NULL && find("", "ADD", 13) == NULL,
          "unknown_op_null", "found something");
    CHECK(find("", "Add", 0) == NULL && find("", "Add", -1) == NULL &&
              find("", "Add", INT64_MIN) == NULL && find("", "Resize", 9) == NULL &&
              find("", "Abs", 0) == NULL,
          "opset_before_first_null", "found something");
    CHECK(find("", "Add", INT64_MAX) && find("", "Add", INT64_MAX)->since == 14,
          "opset_int64_max", "not Add-14");
    CHECK(find("com.microsoft", "Add", 13) == NULL && find("ai.onnx.preview", "Add", 13) == NULL &&
              find("ai.onnx.", "Add", 13) == NULL && find("ai.onnx.m", "Add", 13) == NULL &&
              find("ai.onnx.ml", "Add", 13) == NULL && find("ai.onn", "Add", 13) == NULL,
          "unknown_domain_null", "found something");
    size_t n = 1;
    CHECK(dt_onnx_schema_all("com.microsoft", 13, &n) == NULL && n == 0,
          "all_unknown_domain", "n = %zu", n);
    CHECK(dt_onnx_schema_find(NULL, 3, "Add", 3, 13) == NULL &&
              dt_onnx_schema_find(NULL, 0, "Add", 3, 13) == find("", "Add", 13) &&
              dt_onnx_schema_find("", 0, NULL, 0, 13) == NULL,
          "null_arguments", "unexpected result");
}

static void test_keys(void)
{
    int ok = 1;
    static const char *const ops[] = {"Add", "Resize", "Cast", "Range", "Upsample", "Loop"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        for (int v = 0; v <= 30; v++)
            ok &= find("ai.onnx", ops[i], v) == find("", ops[i], v);
    size_t n1 = 0, n2 = 0;
    ok &= dt_onnx_schema_all("ai.onnx", 7, &n1) == dt_onnx_schema_all("", 0, &n2) && n1 == n2;
    CHECK(ok && find("ai.onnx", "Add", 13) != NULL, "ai_onnx_is_default", "different results");

    /* (pointer, length): neither string is NUL-terminated where the length ends */
    const char *buf = "ai.onnx.mlAddSubResize";
    CHECK(dt_onnx_schema_find(buf, 7, buf + 10, 3, 13) == find("", "Add", 13) &&
              dt_onnx_schema_find(buf, 10, buf + 10, 3, 13) == NULL &&
              dt_onnx_schema_find(buf, 0, buf + 16, 6, 13) == find("", "Resize", 13) &&
              dt_onnx_schema_find(buf, 0, buf + 10, 6, 13) == NULL,
          "lengths_not_nul", "wrong schema");
    /* a NUL inside the op's bytes matches no name */
    CHECK(dt_onnx_schema_find("", 0, "Add\0", 4, 13) == NULL, "op_with_nul", "found one");
}

int main(void)
{
    test_version();
    check_table("", "table_default_sorted", 629);
    check_table("ai.onnx.ml", "table_ml_sorted", 25);
    test_add();
    test_resize();
    test_cast();
    test_range();
    test_variadic_and_other();
    test_deprecated();
    test_misses();
    test_keys();
    return CHECK_EXIT();
}
