/* Tests of the conversion report and the NaN/Inf watch (files/report.h): counts on
 * data whose every answer is known by construction, errors and SQNR worked out by hand, the
 * overflow rule against the library's own IEEE results, and the watch against a per-element
 * check for every ordered pair of numeric types.
 *
 *   test_report           the checks
 *   test_report --bench   also the speed: the watch against the conversion it follows, and
 *                         the report's elements per second */
#include "check.h"
#include "files/report.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- helpers ------------------------------------------------------------------------------- */

static void *alloc_elems(dtcast_type t, size_t n)
{
    size_t bytes = 0;
    dtcast_storage_size(t, n, &bytes, NULL);
    return calloc(bytes + 16, 1);
}

static size_t stride_bits(dtcast_type t)
{
    size_t bytes = 0;
    dtcast_storage_size(t, 8, &bytes, NULL);
    return bytes;
}

/* Converts src (n elements of st) to dt under o, then reports it in blocks of 64 elements, as
 * the pipeline hands them over. Returns the converted data (caller frees) or NULL. */
static void *report_raw(dt_report *r, dtcast_type st, const void *src, size_t n, dtcast_type dt,
                        const dtcast_options *o)
{
    void *dst = alloc_elems(dt, n);
    if (!dst || dtcast_convert(dst, dt, src, st, n, o, NULL) != DTCAST_OK ||
        dt_report_init(r, st, dt, o) != DTCAST_OK) {
        free(dst);
        return NULL;
    }
    const size_t sb = stride_bits(st), db = stride_bits(dt);
    for (size_t at = 0; at < n; at += 64) {
        const size_t k = n - at < 64 ? n - at : 64;
        if (dt_report_add(r, (const uint8_t *)src + at / 8 * sb, (const uint8_t *)dst + at / 8 * db,
                          k) != DTCAST_OK) {
            free(dst);
            return NULL;
        }
    }
    return dst;
}

/* The same from float64 values, first stored exactly in st. */
static int report_of(dt_report *r, dtcast_type st, const double *v, size_t n, dtcast_type dt,
                     const dtcast_options *o)
{
    void *src = alloc_elems(st, n);
    dtcast_options exact;
    dtcast_options_init(&exact);
    exact.discard_imaginary = 1;
    int ok = src && dtcast_convert(src, st, v, DTCAST_FLOAT64, n, &exact, NULL) == DTCAST_OK;
    void *dst = ok ? report_raw(r, st, src, n, dt, o) : NULL;
    free(src);
    free(dst);
    return dst != NULL;
}

static dtcast_options options(dtcast_round round, int float_saturate, int int_saturate)
{
    dtcast_options o;
    dtcast_options_init(&o);
    o.round = round;
    o.float_overflow = float_saturate ? DTCAST_FLOAT_OVERFLOW_SATURATE : DTCAST_FLOAT_OVERFLOW_IEEE;
    o.int_overflow = int_saturate ? DTCAST_INT_OVERFLOW_SATURATE : DTCAST_INT_OVERFLOW_WRAP;
    o.discard_imaginary = 1;
    return o;
}

typedef struct want {
    uint64_t nan, exact, rounded, underflow, o_inf, o_nan, o_max, o_wrap, o_sat, nan_out;
} counts;

static void check_counts(const char *name, const dt_report *r, counts w)
{
    const uint64_t total = r->nan + r->exact + r->rounded + r->underflow + r->overflow_inf +
                           r->overflow_nan + r->overflow_max + r->overflow_wrap +
                           r->overflow_saturate;
    CHECK(r->nan == w.nan && r->exact == w.exact && r->rounded == w.rounded &&
              r->underflow == w.underflow && r->overflow_inf == w.o_inf &&
              r->overflow_nan == w.o_nan && r->overflow_max == w.o_max &&
              r->overflow_wrap == w.o_wrap && r->overflow_saturate == w.o_sat &&
              r->nan_out == w.nan_out && total == r->values,
          name,
          "nan %llu exact %llu rounded %llu underflow %llu overflow inf/nan/max/wrap/sat "
          "%llu/%llu/%llu/%llu/%llu nan_out %llu (of %llu values)",
          (unsigned long long)r->nan, (unsigned long long)r->exact,
          (unsigned long long)r->rounded, (unsigned long long)r->underflow,
          (unsigned long long)r->overflow_inf, (unsigned long long)r->overflow_nan,
          (unsigned long long)r->overflow_max, (unsigned long long)r->overflow_wrap,
          (unsigned long long)r->overflow_saturate, (unsigned long long)r->nan_out,
          (unsigned long long)r->values);
}

static int close_to(long double a, long double b, long double rel)
{
    return fabsl(a - b) <= rel * fabsl(b);
}

static long double sqnr_of(const dt_report *r)
{
    return 10.0L * log10l(r->sum_src2 / r->sum_err2);
}

/* ---- the categories -------------------------------------------------------------------------- */

/* float32 -> float8e4m3fn (max 448, unit 32 at the top, 448 = 1.110b x 2^8 has an even last
 * bit, no Inf): every value's fate worked out by hand. */
static const double e4m3_src[] = {
    0.1,     /*  0 rounded: 0.1015625 */
    1.0,     /*  1 exact */
    500,     /*  2 overflow: >= 480, past max + unit */
    1e-10,   /*  3 underflow: far below half the smallest subnormal 2^-9 */
    NAN,     /*  4 nan */
    INFINITY, /* 5 overflow (no Inf in the target) */
    -448.5,  /*  6 rounded: below the midpoint 464 */
    449,     /*  7 rounded */
    464,     /*  8 rounded: the midpoint, ties to the even max */
    465,     /*  9 overflow: past the midpoint */
    -0.0,    /* 10 exact */
    0.0,     /* 11 exact */
    1e-3,    /* 12 rounded: 2^-9 */
    -INFINITY, /* 13 overflow */
    2.0,     /* 14 exact */
    480,     /* 15 overflow: max + unit */
};
#define E4M3_N (sizeof e4m3_src / sizeof e4m3_src[0])

static void test_float8_categories(void)
{
    dt_report r;
    dtcast_options o = options(DTCAST_ROUND_DEFAULT, 0, 0);
    if (report_of(&r, DTCAST_FLOAT32, e4m3_src, E4M3_N, DTCAST_FLOAT8E4M3FN, &o))
        check_counts("report e4m3fn ieee counts", &r,
                     (counts){.nan = 1, .exact = 4, .rounded = 5, .underflow = 1, .o_nan = 5,
                            .nan_out = 6});
    /* errors over the 11 finite pairs: largest |e| is 464 -> 448; largest e/|s| is 1e-10 -> 0 */
    CHECK(r.finite == 10 && r.max_abs.error == 16 && r.max_abs.index == 8 &&
              r.max_abs.src.v.f == 464 && r.max_abs.dst.v.f == 448,
          "report e4m3fn max abs error", "finite %llu, %Lg at %llu",
          (unsigned long long)r.finite, r.max_abs.error, (unsigned long long)r.max_abs.index);
    CHECK(r.max_rel.error == 1 && r.max_rel.index == 3, "report e4m3fn max rel error",
          "%Lg at %llu", r.max_rel.error, (unsigned long long)r.max_rel.index);
    dt_report_free(&r);

    o = options(DTCAST_ROUND_RNE, 1, 0);
    if (report_of(&r, DTCAST_FLOAT32, e4m3_src, E4M3_N, DTCAST_FLOAT8E4M3FN, &o))
        check_counts("report e4m3fn saturate counts", &r,
                     (counts){.nan = 1, .exact = 4, .rounded = 5, .underflow = 1, .o_max = 5,
                            .nan_out = 1});
    /* saturated values are finite: 500, 465, 480 -> 448 join the error figures (+-Inf not) */
    CHECK(r.finite == 13 && r.max_abs.error == 52 && r.max_abs.index == 2,
          "report e4m3fn saturate errors", "finite %llu, %Lg at %llu",
          (unsigned long long)r.finite, r.max_abs.error, (unsigned long long)r.max_abs.index);
    dt_report_free(&r);

    /* trunc: 465 -> 448 is a rounding (toward zero the candidates are 448 and 480); 480 and up
     * overflow to +-max (directed), Inf still gives NaN under ieee; 1e-3 (0.51 of the smallest
     * subnormal) becomes 0 */
    o = options(DTCAST_ROUND_TRUNC, 0, 0);
    if (report_of(&r, DTCAST_FLOAT32, e4m3_src, E4M3_N, DTCAST_FLOAT8E4M3FN, &o))
        check_counts("report e4m3fn trunc counts", &r,
                     (counts){.nan = 1, .exact = 4, .rounded = 5, .underflow = 2, .o_max = 2,
                            .o_nan = 2, .nan_out = 3});
    dt_report_free(&r);

    /* rna: the midpoint 464 rounds away: overflow */
    o = options(DTCAST_ROUND_RNA, 0, 0);
    if (report_of(&r, DTCAST_FLOAT32, e4m3_src, E4M3_N, DTCAST_FLOAT8E4M3FN, &o))
        check_counts("report e4m3fn rna counts", &r,
                     (counts){.nan = 1, .exact = 4, .rounded = 4, .underflow = 1, .o_nan = 6,
                            .nan_out = 7});
    dt_report_free(&r);

    /* odd: between 448 (even) and 480 the odd candidate is 480, so everything past 448
     * overflows, and odd delivers +-max; 1e-3 rounds to the odd 2^-9 as before, 1e-10 too
     * (odd never gives zero for a nonzero value) */
    o = options(DTCAST_ROUND_ODD, 0, 0);
    if (report_of(&r, DTCAST_FLOAT32, e4m3_src, E4M3_N, DTCAST_FLOAT8E4M3FN, &o))
        check_counts("report e4m3fn odd counts", &r,
                     (counts){.nan = 1, .exact = 4, .rounded = 3, .o_max = 6, .o_nan = 2,
                            .nan_out = 3});
    dt_report_free(&r);
}

/* SQNR and the error figures on values whose sums are exact: 3, 17, 100, -449 -> 3, 16, 96,
 * -448 (ties to even at 17 and 100). sum s^2 = 211899, sum e^2 = 0 + 1 + 16 + 1 = 18. */
static void test_errors_by_hand(void)
{
    static const double v[] = {3, 17, 100, -449};
    dt_report r;
    dtcast_options o = options(DTCAST_ROUND_RNE, 0, 0);
    if (!report_of(&r, DTCAST_FLOAT32, v, 4, DTCAST_FLOAT8E4M3FN, &o)) {
        CHECK(0, "report sqnr by hand", "setup failed");
        return;
    }
    check_counts("report sqnr counts", &r, (counts){.exact = 1, .rounded = 3});
    CHECK(r.sum_src2 == 211899 && r.sum_err2 == 18 &&
              close_to(sqnr_of(&r), 10.0L * log10l(211899.0L / 18.0L), 1e-15L),
          "report sqnr by hand", "sums %Lg %Lg, %Lg dB", r.sum_src2, r.sum_err2, sqnr_of(&r));
    CHECK(r.max_abs.error == 4 && r.max_abs.index == 2 &&
              close_to(r.max_rel.error, 1.0L / 17, 1e-18L) && r.max_rel.index == 1,
          "report errors by hand", "abs %Lg at %llu, rel %Lg at %llu", r.max_abs.error,
          (unsigned long long)r.max_abs.index, r.max_rel.error,
          (unsigned long long)r.max_rel.index);
    dt_report_free(&r);

    /* no error at all: SQNR is +inf (sum e^2 == 0) */
    if (report_of(&r, DTCAST_FLOAT32, v, 1, DTCAST_BFLOAT16, &o))
        CHECK(r.sum_err2 == 0 && r.finite == 1 && r.max_abs.error == 0,
              "report sqnr without error", "err2 %Lg", r.sum_err2);
    dt_report_free(&r);
}

/* Integers decoded exactly: int64 2^53 + 1 -> float32 2^53 is rounded, not exact. */
static void test_integer_sources(void)
{
    const int64_t v[] = {(INT64_C(1) << 53) + 1, INT64_C(1) << 53, INT64_MAX, INT64_MIN, -7};
    dt_report r;
    dtcast_options o = options(DTCAST_ROUND_DEFAULT, 0, 0);
    void *dst = report_raw(&r, DTCAST_INT64, v, 5, DTCAST_FLOAT32, &o);
    if (dst)
        check_counts("report int64 -> float32", &r, (counts){.exact = 3, .rounded = 2});
    /* INT64_MAX -> 2^63 is off by 1, as is 2^53 + 1: the first one keeps the record */
    CHECK(r.max_abs.error == 1 && r.max_abs.index == 0 && r.max_abs.src.type == DTCAST_INT64 &&
              r.max_abs.src.v.i == v[0],
          "report int64 2^53+1 error", "%Lg at %llu", r.max_abs.error,
          (unsigned long long)r.max_abs.index);
    free(dst);
    dt_report_free(&r);

    /* float16 max 65504 = 1.1111111111b x 2^15 has an odd last bit: the midpoint 65520 to the
     * next 65536 goes to 65536, so it overflows; 65519 rounds to 65504 */
    const int64_t h[] = {65519, 65520, 65536, -65520, 65504, 1000000};
    dst = report_raw(&r, DTCAST_INT64, h, 6, DTCAST_FLOAT16, &o);
    if (dst)
        check_counts("report int64 -> float16 edge", &r,
                     (counts){.exact = 1, .rounded = 1, .o_inf = 4});
    free(dst);
    dt_report_free(&r);

    /* uint64 beyond int64, and bool */
    const uint64_t u[] = {UINT64_MAX, UINT64_C(1) << 63, 3};
    dst = report_raw(&r, DTCAST_UINT64, u, 3, DTCAST_FLOAT8E5M2, &o);
    if (dst)
        check_counts("report uint64 -> e5m2", &r, (counts){.o_inf = 2, .exact = 1});
    free(dst);
    dt_report_free(&r);
    const uint8_t b[] = {0, 1, 1};
    dst = report_raw(&r, DTCAST_BOOL, b, 3, DTCAST_FLOAT4E2M1, &o);
    if (dst)
        check_counts("report bool -> float4", &r, (counts){.exact = 3});
    free(dst);
    dt_report_free(&r);
}

static void test_integer_targets(void)
{
    dt_report r;
    /* int32 -> int8: 300 and -300 wrap to 44 and -44, or saturate to 127 and -128 */
    const int32_t v[] = {300, -300, 127, -128, 0, 5};
    dtcast_options wrap = options(DTCAST_ROUND_DEFAULT, 0, 0);
    dtcast_options sat = options(DTCAST_ROUND_DEFAULT, 0, 1);
    void *dst = report_raw(&r, DTCAST_INT32, v, 6, DTCAST_INT8, &wrap);
    if (dst)
        check_counts("report int32 -> int8 wrap", &r, (counts){.exact = 4, .o_wrap = 2});
    CHECK(r.max_abs.error == 256 && r.max_abs.index == 0 && ((int8_t *)dst)[0] == 44,
          "report int32 300 -> int8 error", "%Lg", r.max_abs.error);
    free(dst);
    dt_report_free(&r);
    dst = report_raw(&r, DTCAST_INT32, v, 6, DTCAST_INT8, &sat);
    if (dst)
        check_counts("report int32 -> int8 saturate", &r, (counts){.exact = 4, .o_sat = 2});
    free(dst);
    dt_report_free(&r);

    /* float32 -> int8 and uint8: whether the edge band overflows depends on the rounding */
    static const double f[] = {127.7, -128.5, 1.5, -0.5, 0.3, NAN, INFINITY, -INFINITY, 300};
    dtcast_options o = options(DTCAST_ROUND_TRUNC, 0, 0);
    /* trunc: 127, -128, 1, 0 (underflow), 0 (underflow), nan, Inf -> 0 and 300 -> 44 wrap */
    if (report_of(&r, DTCAST_FLOAT32, f, 9, DTCAST_INT8, &o))
        check_counts("report float32 -> int8 trunc wrap", &r,
                     (counts){.nan = 1, .rounded = 3, .underflow = 2, .o_wrap = 3});
    dt_report_free(&r);
    /* rne: 128 wraps, -128 (tie to even), 2, -0 (underflow), 0 (underflow) */
    o = options(DTCAST_ROUND_RNE, 0, 1);
    if (report_of(&r, DTCAST_FLOAT32, f, 9, DTCAST_INT8, &o))
        check_counts("report float32 -> int8 rne saturate", &r,
                     (counts){.nan = 1, .rounded = 2, .underflow = 2, .o_sat = 4});
    dt_report_free(&r);
    /* rna: -128.5 -> -129 overflows too, -0.5 -> -1 is a rounding */
    o = options(DTCAST_ROUND_RNA, 0, 0);
    if (report_of(&r, DTCAST_FLOAT32, f, 9, DTCAST_INT8, &o))
        check_counts("report float32 -> int8 rna wrap", &r,
                     (counts){.nan = 1, .rounded = 2, .underflow = 1, .o_wrap = 5});
    dt_report_free(&r);
    /* uint8, floor: -0.5 -> -1 wraps to 255; 127.7 -> 127, -128.5 -> -129 wraps, 1.5 -> 1,
     * 0.3 -> 0 */
    o = options(DTCAST_ROUND_FLOOR, 0, 0);
    if (report_of(&r, DTCAST_FLOAT32, f, 9, DTCAST_UINT8, &o))
        check_counts("report float32 -> uint8 floor wrap", &r,
                     (counts){.nan = 1, .rounded = 2, .underflow = 1, .o_wrap = 5});
    dt_report_free(&r);
    /* uint8, trunc: -0.5 -> 0 is an underflow, not an overflow */
    o = options(DTCAST_ROUND_TRUNC, 0, 1);
    if (report_of(&r, DTCAST_FLOAT32, f, 9, DTCAST_UINT8, &o))
        check_counts("report float32 -> uint8 trunc saturate", &r,
                     (counts){.nan = 1, .rounded = 2, .underflow = 2, .o_sat = 4});
    dt_report_free(&r);

    /* bool: nonzero is true */
    static const double b[] = {0, 1, 0.5, 2, -1, NAN, INFINITY};
    o = options(DTCAST_ROUND_DEFAULT, 0, 0);
    if (report_of(&r, DTCAST_FLOAT32, b, 7, DTCAST_BOOL, &o))
        check_counts("report float32 -> bool", &r,
                     (counts){.nan = 1, .exact = 2, .rounded = 1, .o_sat = 3});
    dt_report_free(&r);

    /* int4 wraps -9 to 7, uint1 keeps the low bit */
    const int16_t s[] = {-9, 7, -8, 8, 2, 1, 0, -1};
    dst = report_raw(&r, DTCAST_INT16, s, 8, DTCAST_INT4, &wrap);
    if (dst)
        check_counts("report int16 -> int4", &r, (counts){.exact = 6, .o_wrap = 2});
    free(dst);
    dt_report_free(&r);
    dst = report_raw(&r, DTCAST_INT16, s, 8, DTCAST_UINT1, &sat);
    if (dst)
        check_counts("report int16 -> uint1 saturate", &r, (counts){.exact = 2, .o_sat = 6});
    free(dst);
    dt_report_free(&r);
}

static void test_complex(void)
{
    /* (1, 0.1), (70000, NaN), (1e-10, -2.5) -> complex32 (float16 parts) */
    const float v[] = {1.0f, 0.1f, 70000.0f, NAN, 1e-10f, -2.5f};
    dt_report r;
    dtcast_options o = options(DTCAST_ROUND_DEFAULT, 0, 0);
    void *dst = report_raw(&r, DTCAST_COMPLEX64, v, 3, DTCAST_COMPLEX32, &o);
    if (dst)
        check_counts("report complex64 -> complex32", &r,
                     (counts){.nan = 1, .exact = 2, .rounded = 1, .underflow = 1, .o_inf = 1,
                            .nan_out = 1});
    CHECK(r.values == 6 && r.elements == 3 && r.parts == 2 && r.max_rel.index == 4 &&
              r.max_rel.error == 1 && r.max_abs.index == 1,
          "report complex parts and indices", "values %llu, rel at %llu, abs at %llu",
          (unsigned long long)r.values, (unsigned long long)r.max_rel.index,
          (unsigned long long)r.max_abs.index);
    free(dst);
    dt_report_free(&r);

    /* complex -> real (discard_imaginary): the real parts only */
    dst = report_raw(&r, DTCAST_COMPLEX64, v, 3, DTCAST_FLOAT16, &o);
    if (dst)
        check_counts("report complex64 -> float16", &r,
                     (counts){.exact = 1, .underflow = 1, .o_inf = 1});
    free(dst);
    dt_report_free(&r);
    /* real -> complex: the real parts (the imaginary parts are zero) */
    dst = report_raw(&r, DTCAST_FLOAT32, v, 6, DTCAST_COMPLEX32, &o);
    if (dst)
        check_counts("report float32 -> complex32", &r,
                     (counts){.nan = 1, .exact = 2, .rounded = 1, .underflow = 1, .o_inf = 1,
                            .nan_out = 1});
    free(dst);
    dt_report_free(&r);
}

/* float8e8m0 has no zero, no sign and no Inf; float4e2m1 no NaN and no Inf. */
static void test_odd_formats(void)
{
    /* 0 -> 2^-127, -2 -> 2, 1e-45 -> 2^-127, 3 -> 4 (rne), 2^127 exact, 3e38 past the
     * midpoint 1.5 x 2^127 -> NaN, NaN, Inf -> NaN */
    const double v[] = {0, -2, 1e-45, 3, ldexp(1, 127), 3e38, NAN, INFINITY};
    dt_report r;
    dtcast_options o = options(DTCAST_ROUND_DEFAULT, 0, 0);
    if (report_of(&r, DTCAST_FLOAT32, v, 8, DTCAST_FLOAT8E8M0, &o))
        check_counts("report float32 -> e8m0", &r,
                     (counts){.nan = 1, .exact = 1, .rounded = 4, .o_nan = 2, .nan_out = 3});
    dt_report_free(&r);
    o = options(DTCAST_ROUND_DEFAULT, 1, 0);
    if (report_of(&r, DTCAST_FLOAT32, v, 8, DTCAST_FLOAT8E8M0, &o)) /* Inf -> NaN always */
        check_counts("report float32 -> e8m0 saturate", &r,
                     (counts){.nan = 1, .exact = 1, .rounded = 4, .o_max = 1, .o_nan = 1,
                            .nan_out = 2});
    dt_report_free(&r);

    /* float4e2m1, max 6 = 1.1b x 2^2 (odd last bit, unit 2): 7 is the midpoint to 8 and
     * overflows under rne, 6.5 rounds; NaN -> a zero code, Inf -> 6 */
    const double f[] = {7, 6.5, NAN, INFINITY, -100, 0.2};
    if (report_of(&r, DTCAST_FLOAT32, f, 6, DTCAST_FLOAT4E2M1, &o))
        check_counts("report float32 -> float4e2m1", &r,
                     (counts){.nan = 1, .rounded = 1, .underflow = 1, .o_max = 3});
    dt_report_free(&r);
}

/* via_float32: the library rounds to float32 first; 464 + 2^-30 becomes the midpoint 464 on
 * the way, then 448 (a rounding), while a single rounding overflows. */
static void test_via_float32(void)
{
    const double v[] = {464 + ldexp(1, -30)};
    dt_report r;
    dtcast_options o = options(DTCAST_ROUND_RNE, 0, 0);
    if (report_of(&r, DTCAST_FLOAT64, v, 1, DTCAST_FLOAT8E4M3FN, &o))
        check_counts("report float64 -> e4m3fn once", &r, (counts){.o_nan = 1, .nan_out = 1});
    dt_report_free(&r);
    o.via_float32 = 1;
    if (report_of(&r, DTCAST_FLOAT64, v, 1, DTCAST_FLOAT8E4M3FN, &o))
        check_counts("report float64 -> e4m3fn via float32", &r, (counts){.rounded = 1});
    dt_report_free(&r);
    o.float_overflow = DTCAST_FLOAT_OVERFLOW_SATURATE;
    if (report_of(&r, DTCAST_FLOAT64, v, 1, DTCAST_FLOAT8E4M3FN, &o))
        check_counts("report float64 -> e4m3fn via float32 saturate", &r, (counts){.rounded = 1});
    dt_report_free(&r);
}

/* The overflow rule against the library: for targets with Inf or NaN, under ieee and a mode
 * that rounds away at overflow (rne, rna, ceil for positives, floor for negatives), a value
 * overflows exactly when its result is Inf or NaN; saturate must count the same overflows. */
static void test_overflow_rule(void)
{
    dtcast_type types[64];
    const size_t nt = dtcast_type_list(types, 64);
    static const dtcast_round modes[] = {DTCAST_ROUND_RNE, DTCAST_ROUND_RNA, DTCAST_ROUND_CEIL,
                                         DTCAST_ROUND_FLOOR};
    int bad = 0, pairs = 0;
    char why[200] = "";
    for (size_t t = 0; t < nt; t++) {
        dtcast_info di;
        dtcast_type_info(types[t], &di, NULL);
        if (di.kind != DTCAST_KIND_FLOAT || (!di.has_inf && !di.has_nan) || di.bits >= 64)
            continue;
        /* both sides of max, through the band to max + unit and past it, in eighths */
        const double unit = ldexp(1, ilogb(di.max) - di.mantissa_bits);
        double v[80];
        size_t n = 0;
        for (int k = -4; k <= 20; k++) {
            v[n++] = di.max + k * unit / 8;
            v[n++] = -(di.max + k * unit / 8);
        }
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            const int away_sign = modes[m] == DTCAST_ROUND_CEIL ? 1
                                  : modes[m] == DTCAST_ROUND_FLOOR ? -1 : 0;
            double *w = malloc(n * sizeof *w);
            size_t wn = 0;
            for (size_t i = 0; i < n; i++) /* directed modes: the side that rounds away */
                if (away_sign == 0 || (v[i] > 0) == (away_sign > 0) || di.lowest > 0)
                    w[wn++] = v[i];
            if (di.lowest > 0 && away_sign < 0) {
                free(w);
                continue; /* float8e8m0 drops the sign: floor rounds its values down */
            }
            double *out = malloc(wn * sizeof *out);
            uint8_t *dst = alloc_elems(types[t], wn);
            dtcast_options ieee = options(modes[m], 0, 0), sat = options(modes[m], 1, 0);
            dtcast_convert(dst, types[t], w, DTCAST_FLOAT64, wn, &ieee, NULL);
            dtcast_convert(out, DTCAST_FLOAT64, dst, types[t], wn, NULL, NULL);
            uint64_t nonfinite = 0;
            for (size_t i = 0; i < wn; i++)
                nonfinite += !isfinite(out[i]);
            dt_report a, b;
            int ok = report_of(&a, DTCAST_FLOAT64, w, wn, types[t], &ieee) &&
                     report_of(&b, DTCAST_FLOAT64, w, wn, types[t], &sat);
            const uint64_t over_a = a.overflow_inf + a.overflow_nan + a.overflow_max;
            const uint64_t over_b = b.overflow_inf + b.overflow_nan + b.overflow_max;
            pairs++;
            if (!ok || a.overflow_max != 0 || over_a != nonfinite || over_b != over_a ||
                b.overflow_max != over_b || a.rounded != b.rounded) {
                if (!bad++)
                    snprintf(why, sizeof why, "%s %s: ieee overflow %llu (max %llu), results "
                             "non-finite %llu, saturate overflow %llu", di.name,
                             dtcast_round_name(modes[m]), (unsigned long long)over_a,
                             (unsigned long long)a.overflow_max, (unsigned long long)nonfinite,
                             (unsigned long long)over_b);
            }
            dt_report_free(&a);
            dt_report_free(&b);
            free(w);
            free(out);
            free(dst);
        }
    }
    CHECK(bad == 0 && pairs > 30, "report overflow rule matches the library", "%d of %d: %s", bad,
          pairs, why);
}

/* The fast float path against the long double one, on random and edge values of every float
 * pair with a float64-decoded source, in every mode and policy: the same counts, the same
 * largest errors at the same places, the same sums to rounding. */
static int same_report(const dt_report *a, const dt_report *b)
{
    return a->nan == b->nan && a->exact == b->exact && a->rounded == b->rounded &&
           a->underflow == b->underflow && a->overflow_inf == b->overflow_inf &&
           a->overflow_nan == b->overflow_nan && a->overflow_max == b->overflow_max &&
           a->nan_out == b->nan_out && a->finite == b->finite &&
           a->max_abs.index == b->max_abs.index && a->max_rel.index == b->max_rel.index &&
           close_to(a->max_abs.error, b->max_abs.error, 1e-15L) &&
           close_to(a->max_rel.error, b->max_rel.error, 1e-15L) &&
           close_to(a->sum_src2, b->sum_src2, 1e-12L) && close_to(a->sum_err2, b->sum_err2, 1e-12L);
}

static void *watch_source(dtcast_type st, size_t n, uint64_t *seed);

static void test_fast_path(void)
{
    static const dtcast_type srcs[] = {DTCAST_FLOAT64, DTCAST_FLOAT32, DTCAST_FLOAT16,
                                       DTCAST_BFLOAT16, DTCAST_COMPLEX64};
    dtcast_type types[64];
    const size_t nt = dtcast_type_list(types, 64);
    const size_t n = 3000;
    uint64_t seed = 99;
    int bad = 0, runs = 0;
    char why[160] = "";
    for (size_t s = 0; s < sizeof srcs / sizeof srcs[0]; s++) {
        void *src = watch_source(srcs[s], n, &seed);
        for (size_t d = 0; d < nt; d++) {
            dtcast_info di;
            dtcast_type_info(types[d], &di, NULL);
            if (di.kind != DTCAST_KIND_FLOAT && di.kind != DTCAST_KIND_COMPLEX)
                continue;
            for (int m = DTCAST_ROUND_RNE; m <= DTCAST_ROUND_ODD; m++)
                for (int sat = 0; sat < 2; sat++) {
                    dtcast_options o = options((dtcast_round)m, sat, 0);
                    o.via_float32 = m == DTCAST_ROUND_RNE && sat; /* once, the double rounding */
                    void *dst = alloc_elems(types[d], n);
                    dt_report a, b;
                    dtcast_convert(dst, types[d], src, srcs[s], n, &o, NULL);
                    int ok = dt_report_init(&a, srcs[s], types[d], &o) == DTCAST_OK &&
                             dt_report_init(&b, srcs[s], types[d], &o) == DTCAST_OK;
                    b.priv.long_double_only = 1;
                    ok = ok && dt_report_add(&a, src, dst, n) == DTCAST_OK &&
                         dt_report_add(&b, src, dst, n) == DTCAST_OK;
                    runs++;
                    if (!ok || !same_report(&a, &b)) {
                        if (!bad++)
                            snprintf(why, sizeof why, "%s -> %s %s%s", dtcast_type_name(srcs[s]),
                                     dtcast_type_name(types[d]), dtcast_round_name(o.round),
                                     sat ? " saturate" : "");
                    }
                    dt_report_free(&a);
                    dt_report_free(&b);
                    free(dst);
                }
        }
        free(src);
    }
    CHECK(bad == 0 && runs > 300, "report fast path matches the long double path",
          "%d of %d differ, first %s", bad, runs, why);
}

/* Blocks, chunks beyond 4096 values, merging split reports, and indices. */
static void test_blocks_and_merge(void)
{
    const size_t n = 10000;
    float *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(i % 97) * 0.37f - 11.0f;
    v[9000] = 1000.5f;
    dtcast_options o = options(DTCAST_ROUND_DEFAULT, 0, 0);
    dt_report whole;
    void *dst = report_raw(&whole, DTCAST_FLOAT32, v, n, DTCAST_BFLOAT16, &o);
    /* 1000.5 in bfloat16 (8 significant bits, unit 4 in [512, 1024)) is 1000: error 0.5; the
     * rest lie in [-11, 24.52], where the unit is at most 0.125 and errors at most 0.0625 */
    CHECK(dst && whole.max_abs.index == 9000 && whole.max_abs.error == 0.5L,
          "report index past the first chunk", "%Lg at %llu", whole.max_abs.error,
          (unsigned long long)whole.max_abs.index);

    /* the same as two reports over halves (split at a multiple of 64), merged */
    dt_report a, b;
    const size_t half = 4992;
    int ok = dt_report_init(&a, DTCAST_FLOAT32, DTCAST_BFLOAT16, &o) == DTCAST_OK &&
             dt_report_init(&b, DTCAST_FLOAT32, DTCAST_BFLOAT16, &o) == DTCAST_OK && dst &&
             dt_report_add(&a, v, dst, half) == DTCAST_OK;
    b.next_index = half;
    ok = ok && dt_report_add(&b, v + half, (uint16_t *)dst + half, n - half) == DTCAST_OK;
    dt_report_merge(&b, &a); /* merged the other way round on purpose */
    CHECK(ok && b.values == whole.values && b.exact == whole.exact &&
              b.rounded == whole.rounded && b.finite == whole.finite &&
              b.max_abs.index == 9000 && b.max_rel.index == whole.max_rel.index &&
              b.max_rel.error == whole.max_rel.error &&
              close_to(b.sum_err2, whole.sum_err2, 1e-15L) &&
              close_to(b.sum_src2, whole.sum_src2, 1e-15L),
          "report merge of split blocks", "values %llu/%llu rel at %llu/%llu",
          (unsigned long long)b.values, (unsigned long long)whole.values,
          (unsigned long long)b.max_rel.index, (unsigned long long)whole.max_rel.index);
    dt_report_free(&a);
    dt_report_free(&b);
    dt_report_free(&whole);
    free(dst);
    free(v);

    /* packed types over many blocks: int4 -> uint2 */
    const size_t m = 5000;
    uint8_t *p = malloc(m / 2);
    for (size_t i = 0; i < m / 2; i++)
        p[i] = (uint8_t)(i * 37 + 11);
    uint64_t inrange = 0, zero = 0;
    for (size_t i = 0; i < m; i++) { /* int4 codes: element 2k low nibble */
        int x = (p[i / 2] >> (4 * (i % 2))) & 0xF;
        x = x >= 8 ? x - 16 : x;
        inrange += x >= 0 && x <= 3;
        zero += x == 0;
    }
    dt_report r;
    dst = report_raw(&r, DTCAST_INT4, p, m, DTCAST_UINT2, &o);
    CHECK(dst && r.exact == inrange && r.overflow_wrap == m - inrange && r.values == m,
          "report packed blocks", "exact %llu of %llu, wrap %llu", (unsigned long long)r.exact,
          (unsigned long long)inrange, (unsigned long long)r.overflow_wrap);
    (void)zero;
    free(dst);
    free(p);
    dt_report_free(&r);

    dt_report s;
    CHECK(dt_report_init(&s, DTCAST_STRING, DTCAST_FLOAT32, NULL) == DTCAST_ERR_UNSUPPORTED &&
              dt_report_init(&s, (dtcast_type)999, DTCAST_FLOAT32, NULL) != DTCAST_OK,
          "report refuses strings and unknown types", "accepted");
}

/* ---- printing ------------------------------------------------------------------------------ */

static char *printed(const dt_report *r, const char *name)
{
    return dt_report_text(r, name);
}

static void test_print(void)
{
    static const double v[] = {0.1, -1.5, 3.14159, 100.0, 448.0, 500.0, -0.0, 0.001, 7.0, -8.5,
                               0.333, 65504.0, 1e-10, NAN};
    dt_report r;
    dtcast_options o = options(DTCAST_ROUND_DEFAULT, 0, 0);
    if (!report_of(&r, DTCAST_FLOAT32, v, 14, DTCAST_FLOAT8E4M3FN, &o)) {
        CHECK(0, "report print", "setup failed");
        return;
    }
    char *text = printed(&r, "weights");
    const char *want =
        "weights: float32 -> float8e4m3fn (round rne, overflow ieee), 14 values\n"
        "  exact          4   28.57%\n"
        "  rounded        6   42.86%\n"
        "  underflow      1    7.14%  nonzero -> 0\n"
        "  overflow       2   14.29%  to NaN 2\n"
        "  NaN            1    7.14%  NaN out 3\n"
        "  max abs error  4  at [3]: 100.0 -> 96.0\n"
        "  max rel error  1  at [12]: 1e-10 -> 0.0\n"
        "  SQNR           41.13 dB  over 11 values\n"; /* 41.1277731 with exact rationals */
    CHECK(text && strcmp(text, want) == 0, "report print float8", "got\n%s", text ? text : "");
    /* the same SQNR in exact rationals (Python fractions over the float32 and float8 values) */
    CHECK(close_to(sqnr_of(&r), 41.1277731028056L, 1e-12L), "report sqnr against fractions",
          "%.15Lg", sqnr_of(&r));
    if (text)
        fputs(text, stdout);
    free(text);
    dt_report_free(&r);

    const float c[] = {1.0f, 0.1f, 70000.0f, -3.0f};
    void *dst = report_raw(&r, DTCAST_COMPLEX64, c, 2, DTCAST_COMPLEX32, &o);
    text = printed(&r, NULL);
    CHECK(text && strstr(text, "complex64 -> complex32 (round rne, overflow ieee), 4 values (2 "
                               "elements, real and imaginary parts counted separately)\n") &&
              strstr(text, "to Inf 1") && strstr(text, "at [0].im: 0.1 -> 0.0999755859375"),
          "report print complex", "got\n%s", text ? text : "");
    if (text)
        fputs(text, stdout);
    free(text);
    free(dst);
    dt_report_free(&r);

    const int32_t i[] = {300, 5};
    dst = report_raw(&r, DTCAST_INT32, i, 2, DTCAST_INT8, &o);
    text = printed(&r, "ids");
    CHECK(text && strstr(text, "(round trunc, int overflow wrap)") && strstr(text, "wrapped 1") &&
              strstr(text, "at [0]: 300 -> 44") && !strstr(text, "NaN out"),
          "report print integers", "got\n%s", text ? text : "");
    if (text)
        fputs(text, stdout);
    free(text);
    free(dst);
    dt_report_free(&r);

    /* nothing finite: the error lines say "-" */
    const float nan[] = {NAN};
    dst = report_raw(&r, DTCAST_FLOAT32, nan, 1, DTCAST_FLOAT16, &o);
    text = printed(&r, "n");
    CHECK(text && strstr(text, "max abs error  -\n") && strstr(text, "SQNR           -\n"),
          "report print without finite values", "got\n%s", text ? text : "");
    free(text);
    free(dst);
    dt_report_free(&r);
}

/* ---- the watch ------------------------------------------------------------------------------- */

static void test_watch_masks(void)
{
    static const struct {
        dtcast_type t;
        uint64_t mask, value;
    } want[] = {
        {DTCAST_FLOAT8E4M3FN, 0x7F, 0x7F},   {DTCAST_FLOAT8E4M3FNUZ, 0xFF, 0x80},
        {DTCAST_FLOAT8E5M2, 0x7C, 0x7C},     {DTCAST_FLOAT8E5M2FNUZ, 0xFF, 0x80},
        {DTCAST_FLOAT8E8M0, 0xFF, 0xFF},     {DTCAST_FLOAT8E4M3, 0x78, 0x78},
        {DTCAST_FLOAT8E3M4, 0x70, 0x70},     {DTCAST_FLOAT8E4M3B11FNUZ, 0xFF, 0x80},
        {DTCAST_FLOAT16, 0x7C00, 0x7C00},    {DTCAST_BFLOAT16, 0x7F80, 0x7F80},
        {DTCAST_COMPLEX32, 0x7C00, 0x7C00},  {DTCAST_FLOAT32, 0x7F800000, 0x7F800000},
    };
    int bad = 0;
    char why[120] = "";
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        dt_nonfinite_watch w;
        int on = dt_nonfinite_watch_init(&w, DTCAST_FLOAT64, want[i].t);
        if (!on || !w.dst.exact_test || w.dst.mask != want[i].mask ||
            w.dst.value != want[i].value) {
            if (!bad++)
                snprintf(why, sizeof why, "%s: on %d test %d mask %llx value %llx",
                         dtcast_type_name(want[i].t), on, w.dst.exact_test,
                         (unsigned long long)w.dst.mask, (unsigned long long)w.dst.value);
        }
    }
    CHECK(bad == 0, "watch masks from the codes", "%s", why);

    dt_nonfinite_watch w;
    CHECK(!dt_nonfinite_watch_init(&w, DTCAST_FLOAT32, DTCAST_INT8) &&
              !dt_nonfinite_watch_init(&w, DTCAST_FLOAT32, DTCAST_FLOAT4E2M1) &&
              !dt_nonfinite_watch_init(&w, DTCAST_FLOAT32, DTCAST_FLOAT6E3M2FN) &&
              !dt_nonfinite_watch_init(&w, DTCAST_FLOAT16, DTCAST_FLOAT32) &&
              !dt_nonfinite_watch_init(&w, DTCAST_BFLOAT16, DTCAST_FLOAT32) &&
              !dt_nonfinite_watch_init(&w, DTCAST_INT16, DTCAST_FLOAT16) &&
              !dt_nonfinite_watch_init(&w, DTCAST_FLOAT8E4M3FN, DTCAST_FLOAT8E5M2) &&
              !dt_nonfinite_watch_init(&w, DTCAST_FLOAT32, DTCAST_FLOAT64) &&
              !dt_nonfinite_watch_init(&w, DTCAST_UINT64, DTCAST_FLOAT32) &&
              dt_nonfinite_watch_init(&w, DTCAST_FLOAT32, DTCAST_FLOAT8E4M3FN) &&
              dt_nonfinite_watch_init(&w, DTCAST_INT32, DTCAST_FLOAT16) &&
              dt_nonfinite_watch_init(&w, DTCAST_FLOAT16, DTCAST_FLOAT8E4M3FN) &&
              dt_nonfinite_watch_init(&w, DTCAST_FLOAT8E8M0, DTCAST_BFLOAT16) == 0 &&
              dt_nonfinite_watch_init(&w, DTCAST_FLOAT8E8M0, DTCAST_FLOAT16) &&
              dt_nonfinite_watch_init(&w, DTCAST_COMPLEX64, DTCAST_COMPLEX32) &&
              dt_nonfinite_watch_init(&w, DTCAST_FLOAT64, DTCAST_FLOAT32),
          "watch skips the pairs that cannot overflow", "wrong decision");
}

/* A source block of n elements of type st: edge values of every format, then random values of
 * every magnitude and random codes. */
static void *watch_source(dtcast_type st, size_t n, uint64_t *seed)
{
    static const double edges[] = {
        NAN, INFINITY, -INFINITY, 0, -0.0, 1, -1, 6, 7.5, 15.5, 28, 30, 31, 240, 248, 448,
        449, 464, 465, 480, -500, 57344, 61440, 65504, 65519, 65520, 65536, -1e5,
        3.3895313892515355e38, 3.4e38, 3.4028234663852886e38, 3.5e38, 1.7014118346046923e38,
        1e300, -1e300, 1e-40, 255, 256, -129, 4294967296.0, 1.8446744073709552e19, 9.3e18};
    const size_t ne = sizeof edges / sizeof edges[0];
    double *v = malloc(2 * n * sizeof *v);
    for (size_t i = 0; i < 2 * n; i++) {
        *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
        const uint64_t x = *seed >> 11;
        if (i < 2 * ne)
            v[i] = edges[i / 2] * (i % 2 ? -1 : 1);
        else
            v[i] = ldexp((double)(x & 0xFFFFF) / 1048576.0 + 0.5, (int)((x >> 20) % 300) - 150) *
                   ((x >> 40) & 1 ? -1 : 1);
    }
    dtcast_options o = options(DTCAST_ROUND_RNE, 0, 0);
    void *src = alloc_elems(st, n);
    dtcast_info info;
    dtcast_type_info(st, &info, NULL);
    dtcast_type in = info.kind == DTCAST_KIND_COMPLEX ? DTCAST_COMPLEX128 : DTCAST_FLOAT64;
    dtcast_convert(src, st, v, in, n, &o, NULL);
    /* raw codes in the last quarter, for whole-byte float types */
    if ((info.kind == DTCAST_KIND_FLOAT || info.kind == DTCAST_KIND_COMPLEX) &&
        info.bits % 8 == 0) {
        uint8_t *p = src;
        const size_t bytes = n * (size_t)info.bits / 8;
        for (size_t i = bytes * 3 / 4; i < bytes; i++) {
            *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
            p[i] = (uint8_t)(*seed >> 56);
        }
    }
    free(v);
    return src;
}

/* The slow check: decode both sides, count finite -> NaN/Inf per value. */
static uint64_t watch_slow(dtcast_type st, const void *src, dtcast_type dt, const void *dst,
                           size_t n)
{
    dtcast_info si, di;
    dtcast_type_info(st, &si, NULL);
    dtcast_type_info(dt, &di, NULL);
    const int both = si.kind == DTCAST_KIND_COMPLEX && di.kind == DTCAST_KIND_COMPLEX;
    const size_t parts = both ? 2 : 1;
    double *a = malloc(n * parts * sizeof *a), *b = malloc(n * parts * sizeof *b);
    dtcast_options o = options(DTCAST_ROUND_DEFAULT, 0, 0);
    dtcast_convert(a, both ? DTCAST_COMPLEX128 : DTCAST_FLOAT64, src, st, n, &o, NULL);
    dtcast_convert(b, both ? DTCAST_COMPLEX128 : DTCAST_FLOAT64, dst, dt, n, &o, NULL);
    uint64_t k = 0;
    for (size_t i = 0; i < n * parts; i++)
        k += isfinite(a[i]) && !isfinite(b[i]);
    /* a real -> complex conversion: a finite source has a zero, finite imaginary part */
    free(a);
    free(b);
    return k;
}

static void test_watch_pairs(void)
{
    dtcast_type types[64];
    const size_t nt = dtcast_type_list(types, 64);
    /* not a multiple of 64: the tails too; under DTCAST_TEST_SCALE < 1 (the sanitizer tree of
     * make test, valgrind) fewer, every pair and both tails still */
    const char *sc = getenv("DTCAST_TEST_SCALE");
    const double scale = sc && *sc ? atof(sc) : 1;
    const size_t n = scale < 1 ? 200 + (size_t)(800 * (scale > 0 ? scale : 0)) + 3 : 1000;
    uint64_t seed = 12345;
    int skipped_wrong = 0, pairs_with_hits = 0;
    for (size_t s = 0; s < nt; s++) {
        if (types[s] == DTCAST_STRING)
            continue;
        void *src = watch_source(types[s], n, &seed);
        int bad = 0, nonzero = 0;
        char why[200] = "";
        for (size_t d = 0; d < nt; d++) {
            if (types[d] == DTCAST_STRING)
                continue;
            for (int sat = 0; sat < 2; sat++) {
                dtcast_options o = options(DTCAST_ROUND_DEFAULT, sat, 0);
                void *dst = alloc_elems(types[d], n);
                dtcast_convert(dst, types[d], src, types[s], n, &o, NULL);
                const uint64_t want = watch_slow(types[s], src, types[d], dst, n);
                dt_nonfinite_watch w;
                const int on = dt_nonfinite_watch_init(&w, types[s], types[d]);
                const uint64_t got = dt_nonfinite_count(&w, src, dst, n);
                /* the decode fallback, for a format a mask could not describe */
                dt_nonfinite_watch slow = w;
                slow.src.exact_test = slow.dst.exact_test = 0;
                const uint64_t got_slow = dt_nonfinite_count(&slow, src, dst, n);
                nonzero += want != 0;
                if (got != want || got_slow != want || (!on && want)) {
                    skipped_wrong += !on && want;
                    if (!bad++)
                        snprintf(why, sizeof why,
                                 "-> %s (%s): watch %llu (decoding %llu), slow %llu, on %d",
                                 dtcast_type_name(types[d]), sat ? "saturate" : "ieee",
                                 (unsigned long long)got, (unsigned long long)got_slow,
                                 (unsigned long long)want, on);
                }
                free(dst);
            }
        }
        char name[80];
        snprintf(name, sizeof name, "watch from %s to every type", dtcast_type_name(types[s]));
        CHECK(bad == 0, name, "%d pairs wrong, first %s", bad, why);
        pairs_with_hits += nonzero;
        free(src);
    }
    CHECK(skipped_wrong == 0, "watch never skips a pair that overflows", "%d", skipped_wrong);
    /* the data must make the check mean something: many pairs do overflow */
    CHECK(pairs_with_hits > 100, "watch test data overflows many pairs", "%d", pairs_with_hits);

    /* a hit in the middle of a clean block, a NaN source that stays NaN (not counted) */
    float *v = calloc(4096, sizeof *v);
    uint8_t *q = malloc(4096);
    v[3000] = 1e6f;
    v[3001] = NAN;
    v[4095] = -1e9f;
    dtcast_options o = options(DTCAST_ROUND_DEFAULT, 0, 0);
    dtcast_convert(q, DTCAST_FLOAT8E4M3FN, v, DTCAST_FLOAT32, 4096, &o, NULL);
    dt_nonfinite_watch w;
    dt_nonfinite_watch_init(&w, DTCAST_FLOAT32, DTCAST_FLOAT8E4M3FN);
    CHECK(dt_nonfinite_count(&w, v, q, 4096) == 2 && dt_nonfinite_count(&w, v, q, 3000) == 0 &&
              dt_nonfinite_count(&w, v + 3001, q + 3001, 1) == 0,
          "watch counts sparse hits", "%llu",
          (unsigned long long)dt_nonfinite_count(&w, v, q, 4096));
    free(v);
    free(q);
}

static void test_watch_warning(void)
{
    char buf[200];
    dt_nonfinite_warning(buf, sizeof buf, DTCAST_FLOAT8E4M3FN, 12, "weights");
    CHECK(strcmp(buf, "weights: 12 finite values became NaN (float8e4m3fn has no Inf; "
                      "--overflow saturate clamps to \xC2\xB1" "448)") == 0,
          "watch warning float8e4m3fn", "%s", buf);
    dt_nonfinite_warning(buf, sizeof buf, DTCAST_FLOAT16, 1, NULL);
    CHECK(strcmp(buf, "1 finite value became Inf (beyond float16's \xC2\xB1" "65504; --overflow "
                      "saturate clamps to \xC2\xB1" "65504)") == 0,
          "watch warning float16", "%s", buf);
    dt_nonfinite_warning(buf, sizeof buf, DTCAST_FLOAT8E8M0, 3, "s");
    CHECK(strstr(buf, "3 finite values became NaN (float8e8m0 has no Inf; --overflow saturate "
                      "clamps to 1.7014118346046923e+38)") != NULL,
          "watch warning float8e8m0", "%s", buf);
    dt_nonfinite_warning(buf, sizeof buf, DTCAST_COMPLEX32, 2, "z");
    CHECK(strstr(buf, "became Inf (beyond complex32's") != NULL, "watch warning complex32", "%s",
          buf);
    char tiny[8];
    dt_nonfinite_warning(tiny, sizeof tiny, DTCAST_FLOAT16, 5, "a long tensor name");
    CHECK(strlen(tiny) == 7, "watch warning truncates", "%s", tiny);
}

/* ---- speed (--bench) ------------------------------------------------------------------------ */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The pipeline's shape: convert a block, then watch it while it is in cache. float32 source. */
static void bench_watch(dtcast_type dt, size_t n, size_t block)
{
    const dtcast_type st = DTCAST_FLOAT32;
    const size_t sb = stride_bits(st) / 8, db = stride_bits(dt) / 8;
    uint8_t *src = malloc(n * sb), *dst = malloc(n * db);
    float *f = (float *)src;
    uint64_t seed = 7;
    for (size_t i = 0; i < n * sb / 4; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        f[i] = (float)((double)(seed >> 11) / 9007199254740992.0 * 200.0 - 100.0);
    }
    dtcast_options o;
    dtcast_options_init(&o);
    o.threads = 1;
    dt_nonfinite_watch w;
    dt_nonfinite_watch_init(&w, st, dt);
    /* best of 7: the conversion alone, and with the watch (whose own time is also taken) */
    double best[2] = {1e9, 1e9}, watch_best = 1e9;
    uint64_t hits = 0;
    for (int rep = 0; rep < 7; rep++)
        for (int watch = 0; watch < 2; watch++) {
            double in_watch = 0;
            const double t0 = now();
            for (size_t at = 0; at < n; at += block) {
                const size_t k = n - at < block ? n - at : block;
                dtcast_convert(dst + at * db, dt, src + at * sb, st, k, &o, NULL);
                if (watch) {
                    const double w0 = now();
                    hits += dt_nonfinite_count(&w, src + at * sb, dst + at * db, k);
                    in_watch += now() - w0;
                }
            }
            const double t = now() - t0;
            best[watch] = t < best[watch] ? t : best[watch];
            if (watch)
                watch_best = in_watch < watch_best ? in_watch : watch_best;
        }
    const double gb = (double)n * (double)(sb + db) / 1e9;
    printf("bench watch %s -> %s, %zu elements in blocks of %zu: convert %.1f GB/s, with the "
           "watch %.1f GB/s; the watch's own time is %.1f%% of the conversion's; %llu hits\n",
           dtcast_type_name(st), dtcast_type_name(dt), n, block, gb / best[0], gb / best[1],
           100.0 * watch_best / best[0], (unsigned long long)hits);
    /* the scan alone over data in cache */
    const double t0 = now();
    for (int rep = 0; rep < 200; rep++)
        hits += dt_nonfinite_count(&w, src, dst, block);
    printf("bench watch scan alone over %zu cached codes: %.1f GB/s\n", block,
           200.0 * (double)block * (double)db / 1e9 / (now() - t0));
    free(src);
    free(dst);
}

static void bench_report(dtcast_type dt, size_t n)
{
    float *src = malloc(n * sizeof *src);
    uint8_t *dst = malloc(n * 2);
    uint64_t seed = 9;
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        src[i] = (float)((double)(seed >> 11) / 9007199254740992.0 * 20.0 - 10.0);
    }
    dtcast_convert(dst, dt, src, DTCAST_FLOAT32, n, NULL, NULL);
    dt_report r;
    dt_report_init(&r, DTCAST_FLOAT32, dt, NULL);
    const double t0 = now();
    dt_report_add(&r, src, dst, n);
    const double t = now() - t0;
    printf("bench report float32 -> %s: %.0f M elements/s\n", dtcast_type_name(dt),
           (double)n / t / 1e6);
    char *text = dt_report_text(&r, "bench");
    fputs(text ? text : "", stdout);
    free(text);
    dt_report_free(&r);
    free(src);
    free(dst);
}

int main(int argc, char **argv)
{
    test_float8_categories();
    test_errors_by_hand();
    test_integer_sources();
    test_integer_targets();
    test_complex();
    test_odd_formats();
    test_via_float32();
    test_overflow_rule();
    test_fast_path();
    test_blocks_and_merge();
    test_print();
    test_watch_masks();
    test_watch_pairs();
    test_watch_warning();
    if (argc > 1 && strcmp(argv[1], "--bench") == 0) {
        const size_t n = (size_t)64 << 20;
        bench_watch(DTCAST_FLOAT8E4M3FN, n, 8192);
        bench_watch(DTCAST_FLOAT8E4M3FN, n, 65536);
        bench_watch(DTCAST_FLOAT8E4M3FN, n, 1 << 20);
        bench_watch(DTCAST_BFLOAT16, n, 65536);
        bench_watch(DTCAST_FLOAT16, n, 65536);
        bench_report(DTCAST_BFLOAT16, (size_t)16 << 20);
        bench_report(DTCAST_FLOAT8E4M3FN, (size_t)16 << 20);
    }
    return CHECK_EXIT();
}
