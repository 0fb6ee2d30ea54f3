/* Library robustness: every public entry point with NULL pointers, count 0, overlapping buffers
 * (refused, except dst == src with a destination element no wider than the source, which must
 * give the out-of-place result), unaligned pointers for every type pair, and counts whose byte
 * size overflows size_t (DTCAST_ERR_SIZE_OVERFLOW without touching memory).
 *
 * Every NULL-pointer call runs in a forked child, so a crash is a FAIL line naming the entry
 * point rather than the end of the test program. */
#include "dtcast.h"

#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXT 64
static dtcast_type types[MAXT];
static size_t ntypes;

/* ---- NULL pointers ------------------------------------------------------------------------- */

typedef int (*probe_fn)(void);

/* Runs fn in a child: PASS when it returns 1 and does not crash. */
static void survives(const char *name, probe_fn fn)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        CHECK(0, name, "fork failed");
        return;
    }
    if (pid == 0)
        _exit(fn() ? 0 : 3);
    int ws = 0;
    if (waitpid(pid, &ws, 0) != pid) {
        CHECK(0, name, "waitpid failed");
        return;
    }
    if (WIFSIGNALED(ws))
        CHECK(0, name, "killed by signal %d", WTERMSIG(ws));
    else
        CHECK(WEXITSTATUS(ws) == 0, name, "wrong status or result (exit %d)", WEXITSTATUS(ws));
}

static float f4[4] = {1.0f, -2.5f, 3.0f, 0.5f};

static int p_convert_null_dst(void)
{
    return dtcast_convert(NULL, DTCAST_FLOAT16, f4, DTCAST_FLOAT32, 4, NULL, NULL) ==
           DTCAST_ERR_INVALID_ARGUMENT;
}
static int p_convert_null_src(void)
{
    uint16_t d[4];
    return dtcast_convert(d, DTCAST_FLOAT16, NULL, DTCAST_FLOAT32, 4, NULL, NULL) ==
           DTCAST_ERR_INVALID_ARGUMENT;
}
static int p_convert_null_string_element(void)
{
    const char *s[2] = {"1", NULL};
    float d[2] = {7, 7};
    return dtcast_convert(d, DTCAST_FLOAT32, s, DTCAST_STRING, 2, NULL, NULL) ==
               DTCAST_ERR_INVALID_ARGUMENT &&
           d[0] == 7 && d[1] == 7;
}
static int p_strings_free_null(void)
{
    dtcast_strings_free(NULL, 5);
    char *s[2] = {NULL, NULL};
    dtcast_strings_free(s, 2);
    return 1;
}
static int p_format_null(void)
{
    char buf[8];
    return dtcast_format_element(NULL, 8, f4, DTCAST_FLOAT32, 0, NULL, NULL) != DTCAST_OK &&
           dtcast_format_element(buf, 8, NULL, DTCAST_FLOAT32, 0, NULL, NULL) != DTCAST_OK &&
           dtcast_format_element(buf, 0, f4, DTCAST_FLOAT32, 0, NULL, NULL) != DTCAST_OK;
}
static int p_format_null_string(void)
{
    const char *s[1] = {NULL};
    char buf[8];
    return dtcast_format_element(buf, 8, s, DTCAST_STRING, 0, NULL, NULL) != DTCAST_OK;
}
static int p_parse_null(void)
{
    float d = 0;
    return dtcast_parse_element(NULL, DTCAST_FLOAT32, 0, "1", NULL, NULL) != DTCAST_OK &&
           dtcast_parse_element(&d, DTCAST_FLOAT32, 0, NULL, NULL, NULL) != DTCAST_OK;
}
static int p_status_string(void)
{
    return dtcast_status_string((dtcast_status)-1) != NULL &&
           dtcast_status_string((dtcast_status)999) != NULL;
}
static int p_type_names(void)
{
    return dtcast_type_name((dtcast_type)-5) == NULL &&
           dtcast_type_onnx_name((dtcast_type)99999) == NULL &&
           dtcast_round_name((dtcast_round)-1) == NULL &&
           dtcast_pypto_mode_name((dtcast_pypto_mode)-1) == NULL;
}
static int p_type_from_name_null(void)
{
    dtcast_type t = DTCAST_FLOAT32;
    return dtcast_type_from_name(NULL, &t, NULL) != DTCAST_OK && t == DTCAST_FLOAT32 &&
           dtcast_type_from_name("float16", NULL, NULL) != DTCAST_OK;
}
static int p_round_from_name_null(void)
{
    dtcast_round r = DTCAST_ROUND_ODD;
    return dtcast_round_from_name(NULL, &r, NULL) != DTCAST_OK && r == DTCAST_ROUND_ODD &&
           dtcast_round_from_name("rne", NULL, NULL) != DTCAST_OK;
}
static int p_pypto_mode_from_name_null(void)
{
    dtcast_pypto_mode m = DTCAST_CAST_ODD;
    return dtcast_pypto_mode_from_name(NULL, &m, NULL) != DTCAST_OK && m == DTCAST_CAST_ODD &&
           dtcast_pypto_mode_from_name("CAST_RINT", NULL, NULL) != DTCAST_OK;
}
static int p_storage_size_null(void)
{
    return dtcast_storage_size(DTCAST_FLOAT32, 3, NULL, NULL) != DTCAST_OK;
}
static int p_type_info_null(void)
{
    return dtcast_type_info(DTCAST_FLOAT32, NULL, NULL) != DTCAST_OK;
}
static int p_type_list_null(void)
{
    return dtcast_type_list(NULL, 0) == ntypes;
}
static int p_options_init_null(void)
{
    dtcast_options_init(NULL);
    return 1;
}
static int p_onnx_options_null(void)
{
    return dtcast_onnx_options(NULL, DTCAST_FLOAT16, DTCAST_FLOAT32, 21, 1, NULL, NULL, NULL) !=
           DTCAST_OK;
}
static int p_onnx_cast_null(void)
{
    uint16_t d[4];
    return dtcast_onnx_cast(NULL, DTCAST_FLOAT16, f4, DTCAST_FLOAT32, 4, 21, 1, NULL, NULL, NULL) !=
               DTCAST_OK &&
           dtcast_onnx_cast(d, DTCAST_FLOAT16, NULL, DTCAST_FLOAT32, 4, 21, 1, NULL, NULL, NULL) !=
               DTCAST_OK;
}
static int p_onnx_cast_like_null(void)
{
    uint16_t d[4];
    return dtcast_onnx_cast_like(NULL, DTCAST_FLOAT16, f4, DTCAST_FLOAT32, 4, 21, 1, NULL, NULL,
                                 NULL) != DTCAST_OK &&
           dtcast_onnx_cast_like(d, DTCAST_FLOAT16, NULL, DTCAST_FLOAT32, 4, 21, 1, NULL, NULL,
                                 NULL) != DTCAST_OK;
}
static int p_pypto_options_null(void)
{
    return dtcast_pypto_options(NULL, DTCAST_FLOAT16, DTCAST_FLOAT32, DTCAST_CAST_NONE, NULL,
                                NULL) !=
           DTCAST_OK;
}
static int p_pypto_cast_null(void)
{
    uint16_t d[4];
    const int64_t shape[1] = {4};
    return dtcast_pypto_cast(NULL, DTCAST_FLOAT16, f4, DTCAST_FLOAT32, shape, 1, DTCAST_CAST_NONE,
                             NULL, NULL) != DTCAST_OK &&
           dtcast_pypto_cast(d, DTCAST_FLOAT16, NULL, DTCAST_FLOAT32, shape, 1, DTCAST_CAST_NONE,
                             NULL, NULL) != DTCAST_OK &&
           dtcast_pypto_cast(d, DTCAST_FLOAT16, f4, DTCAST_FLOAT32, NULL, 1, DTCAST_CAST_NONE,
                             NULL, NULL) != DTCAST_OK;
}
static int p_error_message(void)
{
    dtcast_error e;
    dtcast_options o;
    dtcast_options_init(&o);
    memset(&e, 0x55, sizeof e);
    dtcast_status st = dtcast_convert(NULL, DTCAST_FLOAT16, f4, DTCAST_FLOAT32, 4, &o, &e);
    return st == DTCAST_ERR_INVALID_ARGUMENT && e.status == st &&
           memchr(e.message, '\0', sizeof e.message) != NULL && strchr(e.message, '\n') == NULL &&
           strstr(e.message, "NULL") != NULL;
}

static void test_null_pointers(void)
{
    static const struct {
        const char *name;
        probe_fn fn;
    } probes[] = {
        {"null/convert_dst", p_convert_null_dst},
        {"null/convert_src", p_convert_null_src},
        {"null/convert_string_element", p_convert_null_string_element},
        {"null/strings_free", p_strings_free_null},
        {"null/format_element", p_format_null},
        {"null/format_element_string", p_format_null_string},
        {"null/parse_element", p_parse_null},
        {"null/status_string", p_status_string},
        {"null/type_names", p_type_names},
        {"null/type_from_name", p_type_from_name_null},
        {"null/round_from_name", p_round_from_name_null},
        {"null/pypto_mode_from_name", p_pypto_mode_from_name_null},
        {"null/storage_size", p_storage_size_null},
        {"null/type_info", p_type_info_null},
        {"null/type_list", p_type_list_null},
        {"null/options_init", p_options_init_null},
        {"null/onnx_options", p_onnx_options_null},
        {"null/onnx_cast", p_onnx_cast_null},
        {"null/onnx_cast_like", p_onnx_cast_like_null},
        {"null/pypto_options", p_pypto_options_null},
        {"null/pypto_cast", p_pypto_cast_null},
        {"null/error_message", p_error_message},
    };
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
        survives(probes[i].name, probes[i].fn);
}

/* ---- count 0 ------------------------------------------------------------------------------- */

static void test_count_zero(void)
{
    int bad = 0;
    char what[160] = "";
    for (size_t i = 0; i < ntypes; i++)
        for (size_t j = 0; j < ntypes; j++) {
            dtcast_options o;
            dtcast_options_init(&o);
            o.discard_imaginary = 1;
            dtcast_status st = dtcast_convert(NULL, types[j], NULL, types[i], 0, &o, NULL);
            if (st != DTCAST_OK && !bad++)
                snprintf(what, sizeof what, "%s -> %s: %s", dtcast_type_name(types[i]),
                         dtcast_type_name(types[j]), dtcast_status_string(st));
        }
    CHECK(!bad, "count0/convert_every_pair_null_buffers", "%d pairs fail, first %s", bad, what);
    CHECK(dtcast_onnx_cast(NULL, DTCAST_FLOAT16, NULL, DTCAST_FLOAT32, 0, 21, 1, NULL, NULL, NULL) ==
              DTCAST_OK,
          "count0/onnx_cast", "refused");
    size_t bytes = 99;
    CHECK(dtcast_storage_size(DTCAST_INT4, 0, &bytes, NULL) == DTCAST_OK && bytes == 0,
          "count0/storage_size", "bytes %zu", bytes);
    char *none = NULL;
    dtcast_strings_free(&none, 0);
    CHECK(1, "count0/strings_free", "-");
    const int64_t shape[1] = {0};
    CHECK(dtcast_pypto_cast(NULL, DTCAST_FLOAT16, NULL, DTCAST_FLOAT32, shape, 1, DTCAST_CAST_NONE,
                            NULL, NULL) == DTCAST_ERR_BAD_SHAPE,
          "count0/pypto_refuses_empty", "pypto documents 1..4 dims of positive size");
}

/* ---- huge counts ---------------------------------------------------------------------------- */

static void test_huge_counts(void)
{
    int bad = 0;
    char what[200] = "";
    for (size_t i = 0; i < ntypes; i++) {
        for (size_t j = 0; j < ntypes; j++) {
            const dtcast_type s = types[i], d = types[j];
            size_t sb, db;
            /* the largest count whose size overflows for the wider of the two */
            const size_t counts[] = {SIZE_MAX, SIZE_MAX / 2 + 1, SIZE_MAX / 4 + 1,
                                     SIZE_MAX / 8 + 1, SIZE_MAX / 16 + 1};
            for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
                const size_t n = counts[k];
                const int overflows = dtcast_storage_size(s, n, &sb, NULL) != DTCAST_OK ||
                                      dtcast_storage_size(d, n, &db, NULL) != DTCAST_OK;
                if (!overflows)
                    continue;
                uint8_t src[64], dst[64];
                memset(src, 0x11, sizeof src);
                memset(dst, 0x22, sizeof dst);
                dtcast_options o;
                dtcast_options_init(&o);
                o.discard_imaginary = 1;
                dtcast_status st = dtcast_convert(dst, d, src, s, n, &o, NULL);
                int untouched = 1;
                for (size_t b = 0; b < sizeof dst; b++)
                    untouched &= dst[b] == 0x22 && src[b] == 0x11;
                if ((st != DTCAST_ERR_SIZE_OVERFLOW || !untouched) && !bad++)
                    snprintf(what, sizeof what, "%s -> %s count %zu: %s%s",
                             dtcast_type_name(s), dtcast_type_name(d), n,
                             dtcast_status_string(st), untouched ? "" : " (memory touched)");
            }
        }
    }
    CHECK(!bad, "huge/convert_every_pair", "%d cases fail, first %s", bad, what);

    size_t bytes = 0;
    CHECK(dtcast_storage_size(DTCAST_FLOAT32, SIZE_MAX / 4 + 1, &bytes, NULL) ==
              DTCAST_ERR_SIZE_OVERFLOW,
          "huge/storage_size_float32", "no overflow reported");
    CHECK(dtcast_storage_size(DTCAST_COMPLEX128, SIZE_MAX / 16 + 1, &bytes, NULL) ==
              DTCAST_ERR_SIZE_OVERFLOW,
          "huge/storage_size_complex128", "no overflow reported");
    CHECK(dtcast_storage_size(DTCAST_STRING, SIZE_MAX / sizeof(char *) + 1, &bytes, NULL) ==
              DTCAST_ERR_SIZE_OVERFLOW,
          "huge/storage_size_string", "no overflow reported");
    CHECK(dtcast_storage_size(DTCAST_UINT1, SIZE_MAX, &bytes, NULL) == DTCAST_OK &&
              bytes == SIZE_MAX / 8 + 1,
          "huge/storage_size_uint1_exact", "bytes %zu", bytes);
    CHECK(dtcast_storage_size(DTCAST_INT4, SIZE_MAX, &bytes, NULL) == DTCAST_OK &&
              bytes == SIZE_MAX / 2 + 1,
          "huge/storage_size_int4_exact", "bytes %zu", bytes);

    uint16_t d[4] = {1, 2, 3, 4};
    CHECK(dtcast_onnx_cast(d, DTCAST_FLOAT16, f4, DTCAST_FLOAT32, SIZE_MAX / 2, 21, 1, NULL, NULL,
                           NULL) == DTCAST_ERR_SIZE_OVERFLOW &&
              d[0] == 1 && d[3] == 4,
          "huge/onnx_cast", "no overflow reported");
    const int64_t shape[4] = {INT64_MAX, INT64_MAX, 2, 2};
    CHECK(dtcast_pypto_cast(d, DTCAST_FLOAT16, f4, DTCAST_FLOAT32, shape, 4, DTCAST_CAST_NONE,
                            NULL, NULL) == DTCAST_ERR_BAD_SHAPE &&
              d[0] == 1,
          "huge/pypto_shape", "product of dims not refused");
    const int64_t neg[2] = {4, -1};
    CHECK(dtcast_pypto_cast(d, DTCAST_FLOAT16, f4, DTCAST_FLOAT32, neg, 2, DTCAST_CAST_NONE, NULL,
                            NULL) == DTCAST_ERR_BAD_SHAPE,
          "huge/pypto_negative_dim", "not refused");
    CHECK(dtcast_pypto_cast(d, DTCAST_FLOAT16, f4, DTCAST_FLOAT32, neg, 99, DTCAST_CAST_NONE, NULL,
                            NULL) == DTCAST_ERR_BAD_SHAPE,
          "huge/pypto_ndim", "not refused");
    /* a format/parse index far beyond anything: only the caller's buffer matters; index math
     * must not be needed for an unknown type */
    char buf[8];
    CHECK(dtcast_format_element(buf, sizeof buf, f4, (dtcast_type)77, SIZE_MAX, NULL, NULL) ==
              DTCAST_ERR_UNKNOWN_TYPE,
          "huge/format_unknown_type", "wrong status");
}

/* ---- bad option values ----------------------------------------------------------------------- */

static void test_bad_options(void)
{
    uint16_t d[4] = {9, 9, 9, 9};
    dtcast_options o;
    dtcast_options_init(&o);
    o.round = (dtcast_round)42;
    CHECK(dtcast_convert(d, DTCAST_FLOAT16, f4, DTCAST_FLOAT32, 4, &o, NULL) ==
                  DTCAST_ERR_INVALID_ARGUMENT &&
              d[0] == 9,
          "options/bad_round", "accepted");
    dtcast_options_init(&o);
    o.float_overflow = (dtcast_float_overflow)-3;
    CHECK(dtcast_convert(d, DTCAST_FLOAT16, f4, DTCAST_FLOAT32, 4, &o, NULL) ==
              DTCAST_ERR_INVALID_ARGUMENT,
          "options/bad_float_overflow", "accepted");
    dtcast_options_init(&o);
    o.int_overflow = (dtcast_int_overflow)7;
    CHECK(dtcast_convert(d, DTCAST_INT8, f4, DTCAST_FLOAT32, 4, &o, NULL) ==
              DTCAST_ERR_INVALID_ARGUMENT,
          "options/bad_int_overflow", "accepted");
    dtcast_options_init(&o);
    o.string_style = (dtcast_string_style)7;
    char *s[4] = {0};
    CHECK(dtcast_convert(s, DTCAST_STRING, f4, DTCAST_FLOAT32, 4, &o, NULL) ==
              DTCAST_ERR_INVALID_ARGUMENT,
          "options/bad_string_style", "accepted");
    dtcast_options_init(&o);
    o.threads = 100000;
    CHECK(dtcast_convert(d, DTCAST_FLOAT16, f4, DTCAST_FLOAT32, 4, &o, NULL) == DTCAST_OK,
          "options/huge_thread_count", "refused");
    CHECK(dtcast_convert(d, (dtcast_type)-1, f4, DTCAST_FLOAT32, 4, NULL, NULL) ==
              DTCAST_ERR_UNKNOWN_TYPE,
          "options/unknown_dst_type", "accepted");
    CHECK(dtcast_convert(d, DTCAST_FLOAT16, f4, (dtcast_type)0, 4, NULL, NULL) ==
              DTCAST_ERR_UNKNOWN_TYPE,
          "options/undefined_src_type", "accepted");
}

/* ---- element data for every type ---------------------------------------------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint8_t rnd8(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint8_t)(rng_state >> 32);
}

#define N 67 /* odd, and more than 8 so packed tails and whole bytes both occur */

/* ---- overlap -------------------------------------------------------------------------------- */

static void test_overlap(void)
{
    int refused_bad = 0, inplace_bad = 0, partial_bad = 0, tested_inplace = 0, tested_refuse = 0;
    char what[200] = "", what2[200] = "", what3[200] = "";
    for (size_t i = 0; i < ntypes; i++) {
        for (size_t j = 0; j < ntypes; j++) {
            const dtcast_type s = types[i], d = types[j];
            if (s == DTCAST_STRING || d == DTCAST_STRING)
                continue;
            size_t sb, db;
            dtcast_storage_size(s, N, &sb, NULL);
            dtcast_storage_size(d, N, &db, NULL);
            const size_t cap = (sb > db ? sb : db) + 64;
            uint8_t *buf = malloc(cap), *ref = malloc(cap), *orig = malloc(cap);
            if (!buf || !ref || !orig)
                abort();
            for (size_t b = 0; b < cap; b++)
                orig[b] = rnd8();
            /* make every float6 element a valid 6-bit code (the high bits are padding) */
            if (s == DTCAST_FLOAT6E2M3FN || s == DTCAST_FLOAT6E3M2FN)
                for (size_t b = 0; b < cap; b++)
                    orig[b] &= 0x3F;
            dtcast_options o;
            dtcast_options_init(&o);
            o.discard_imaginary = 1;
            memcpy(buf, orig, cap);
            dtcast_status want = dtcast_convert(ref, d, buf, s, N, &o, NULL);
            if (want != DTCAST_OK) {
                free(buf), free(ref), free(orig);
                continue;
            }
            /* for the same count, bytes order the strides: dst no wider than src */
            const int allowed = db <= sb;
            dtcast_status st = dtcast_convert(buf, d, buf, s, N, &o, NULL);
            if (allowed) {
                tested_inplace++;
                if ((st != DTCAST_OK || memcmp(buf, ref, db) != 0) && !inplace_bad++)
                    snprintf(what, sizeof what, "%s -> %s in place: %s%s",
                             dtcast_type_name(s), dtcast_type_name(d), dtcast_status_string(st),
                             st == DTCAST_OK ? " (wrong bytes)" : "");
            } else {
                tested_refuse++;
                if ((st != DTCAST_ERR_INVALID_ARGUMENT || memcmp(buf, orig, cap) != 0) &&
                    !refused_bad++)
                    snprintf(what2, sizeof what2, "%s -> %s in place widening: %s",
                             dtcast_type_name(s), dtcast_type_name(d), dtcast_status_string(st));
            }
            /* partial overlaps are always refused, buffers untouched */
            const size_t shifts[] = {1, 3, 8};
            for (size_t k = 0; k < 3; k++) {
                const size_t sh = shifts[k];
                if (sh >= sb + db)
                    continue;
                memcpy(buf, orig, cap);
                dtcast_status a = sh + db <= cap
                                      ? dtcast_convert(buf + sh, d, buf, s, N, &o, NULL)
                                      : DTCAST_ERR_INVALID_ARGUMENT;
                dtcast_status b = sh + sb <= cap ? dtcast_convert(buf, d, buf + sh, s, N, &o,
                                                                  NULL)
                                                 : DTCAST_ERR_INVALID_ARGUMENT;
                if ((a != DTCAST_ERR_INVALID_ARGUMENT || b != DTCAST_ERR_INVALID_ARGUMENT ||
                     memcmp(buf, orig, cap) != 0) &&
                    !partial_bad++)
                    snprintf(what3, sizeof what3, "%s -> %s shifted by %zu: %s / %s",
                             dtcast_type_name(s), dtcast_type_name(d), sh,
                             dtcast_status_string(a), dtcast_status_string(b));
            }
            free(buf), free(ref), free(orig);
        }
    }
    CHECK(!inplace_bad && tested_inplace > 100, "overlap/in_place_narrowing_matches",
          "%d of %d pairs wrong, first %s", inplace_bad, tested_inplace, what);
    CHECK(!refused_bad && tested_refuse > 100, "overlap/in_place_widening_refused",
          "%d of %d pairs wrong, first %s", refused_bad, tested_refuse, what2);
    CHECK(!partial_bad, "overlap/partial_refused_untouched", "%d pairs wrong, first %s",
          partial_bad, what3);

    /* strings: an in-place string conversion is refused */
    char *strs[2] = {NULL, NULL};
    CHECK(dtcast_convert(strs, DTCAST_STRING, strs, DTCAST_STRING, 2, NULL, NULL) ==
              DTCAST_ERR_INVALID_ARGUMENT,
          "overlap/strings_refused", "accepted");
}

/* ---- unaligned pointers ------------------------------------------------------------------- */

static void test_unaligned(void)
{
    int bad = 0, tested = 0;
    char what[200] = "";
    for (size_t i = 0; i < ntypes; i++) {
        for (size_t j = 0; j < ntypes; j++) {
            const dtcast_type s = types[i], d = types[j];
            if (s == DTCAST_STRING || d == DTCAST_STRING)
                continue;
            size_t sb, db;
            dtcast_storage_size(s, N, &sb, NULL);
            dtcast_storage_size(d, N, &db, NULL);
            uint8_t *sa = malloc(sb + 16), *da = malloc(db + 16), *ref = malloc(db + 16);
            if (!sa || !da || !ref)
                abort();
            uint8_t *src0 = sa + (16 - ((uintptr_t)sa & 15)) % 16; /* 16-aligned inside */
            for (size_t b = 0; b < sb; b++)
                src0[b] = rnd8();
            dtcast_options o;
            dtcast_options_init(&o);
            o.discard_imaginary = 1;
            o.threads = 1;
            if (dtcast_convert(ref, d, src0, s, N, &o, NULL) != DTCAST_OK) {
                free(sa), free(da), free(ref);
                continue;
            }
            uint8_t copy[N * 16 + 16];
            memcpy(copy, src0, sb);
            for (size_t off = 1; off < 8; off += 2) {
                /* a fresh allocation per offset so ASan bounds are exact around the data */
                uint8_t *sbuf = malloc(sb + off), *dbuf = malloc(db + off);
                if (!sbuf || !dbuf)
                    abort();
                memcpy(sbuf + off, copy, sb);
                dtcast_status st = dtcast_convert(dbuf + off, d, sbuf + off, s, N, &o, NULL);
                tested++;
                if ((st != DTCAST_OK || memcmp(dbuf + off, ref, db) != 0) && !bad++)
                    snprintf(what, sizeof what, "%s -> %s at offset %zu: %s",
                             dtcast_type_name(s), dtcast_type_name(d), off,
                             dtcast_status_string(st));
                free(sbuf), free(dbuf);
            }
            free(sa), free(da), free(ref);
        }
    }
    CHECK(!bad && tested > 1000, "unaligned/every_pair", "%d of %d wrong, first %s", bad, tested,
          what);

    /* format/parse at unaligned addresses */
    int fbad = 0;
    for (size_t i = 0; i < ntypes; i++) {
        const dtcast_type t = types[i];
        if (t == DTCAST_STRING)
            continue;
        uint8_t raw[40];
        for (size_t b = 0; b < sizeof raw; b++)
            raw[b] = (uint8_t)(0x31 + b);
        char a[DTCAST_FORMAT_MAX], b2[DTCAST_FORMAT_MAX];
        if (dtcast_format_element(a, sizeof a, raw + 8, t, 1, NULL, NULL) != DTCAST_OK ||
            dtcast_format_element(b2, sizeof b2, raw + 3, t, 1, NULL, NULL) != DTCAST_OK)
            fbad++;
        uint8_t p[40] = {0};
        if (dtcast_parse_element(p + 1, t, 1, "1", NULL, NULL) != DTCAST_OK)
            fbad++;
    }
    CHECK(!fbad, "unaligned/format_parse", "%d failures", fbad);
}

/* ---- no global mutable state: the same call gives the same bytes regardless of history ---- */

static void test_options_not_retained(void)
{
    float in[3] = {1.5f, 2.5f, -0.5f};
    int8_t a[3], b[3];
    dtcast_options o;
    dtcast_options_init(&o);
    o.round = DTCAST_ROUND_RNE;
    dtcast_convert(a, DTCAST_INT8, in, DTCAST_FLOAT32, 3, &o, NULL);
    o.round = DTCAST_ROUND_CEIL;
    dtcast_convert(b, DTCAST_INT8, in, DTCAST_FLOAT32, 3, &o, NULL);
    int8_t c[3];
    dtcast_convert(c, DTCAST_INT8, in, DTCAST_FLOAT32, 3, NULL, NULL); /* defaults: trunc */
    CHECK(a[0] == 2 && a[1] == 2 && b[0] == 2 && b[1] == 3 && c[0] == 1 && c[1] == 2 && c[2] == 0,
          "state/options_per_call", "got %d %d / %d %d / %d %d %d", a[0], a[1], b[0], b[1], c[0],
          c[1], c[2]);
}

int main(void)
{
    ntypes = dtcast_type_list(types, MAXT);
    if (ntypes > MAXT)
        ntypes = MAXT;
    test_null_pointers();
    test_count_zero();
    test_huge_counts();
    test_bad_options();
    test_overlap();
    test_unaligned();
    test_options_not_retained();
    return CHECK_EXIT();
}
