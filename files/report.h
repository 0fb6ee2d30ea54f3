/* What a conversion did to the values of one tensor: the conversion report (CLI --report), and
 * the cheap watch for finite values that became NaN or Inf, which always runs.
 *
 * Both take the source and converted blocks in dtcast's layout (little-endian, sub-byte types
 * packed as ONNX packs them, float6 one per byte, complex as (real, imag) pairs); a block starts
 * at an element index that is a multiple of 8. Neither keeps global state: one dt_report or
 * dt_nonfinite_watch per thread.
 *
 * Values. A real element is one value; when source and target are both complex each part is one
 * value (a complex -> real conversion compares the real parts only, a real -> complex one the
 * real parts only). Source and result are decoded exactly (floats as float64, integers as int64
 * or uint64) and compared exactly. Every value falls in exactly one of:
 *
 *   nan        the source is NaN (whatever the result: NaN, 0 for integers and float4, ...).
 *   exact      the result equals the source (+0 equals -0; +Inf equals +Inf).
 *   overflow   the source is +-Inf and the result is not the same Inf, or the source is finite,
 *              the result is NaN or Inf, or the source rounded under the conversion's mode with
 *              an unlimited range lies outside the target's finite range (IEEE 754's definition;
 *              so 449 -> 448 in float8e4m3fn under rne is rounded, 470 -> 448 under saturate is
 *              overflow). Split by result: to Inf, to NaN, to +-max (float targets), wrapped or
 *              saturated (integer targets, after int_overflow; +-Inf -> 0 under wrap is wrapped).
 *              A bool target is 1 for every nonzero source: sources outside [0, 1] count as
 *              saturated, those inside (0, 1) as rounded.
 *   underflow  a finite nonzero source became zero (an integer target too: 0.3 -> 0).
 *   rounded    anything else: a finite source, a finite result, not equal. (float8e8m0 has no
 *              zero and no sign: 0 -> 2^-127 and -2 -> 2 count here.)
 *
 * nan_out counts NaN results of any cause (a NaN source, or overflow to NaN). The error figures
 * cover the values whose source and result are both finite: the largest |src - dst|, the
 * largest |src - dst| / |src| (sources other than 0), and SQNR = 10 log10(sum src^2 /
 * sum (src - dst)^2) in dB, +inf when there is no error. The decisions compare the exact
 * decoded values (doubles with doubles; integers in long double, exact where it has a 64-bit
 * significand or more: x86, aarch64 Linux); the sums are long double, the errors to a double's
 * or a long double's rounding. On a ~3 GHz x86 core float32 -> bfloat16 or float8 runs at about
 * 100 M values/s (half of it decoding), integer targets at about 40 M/s.
 */
#ifndef DTCAST_FILES_REPORT_H
#define DTCAST_FILES_REPORT_H

#include "dtcast.h"

#include <stdint.h>

/* A decoded value as the report keeps it for printing: float64, int64 or uint64. */
typedef struct dt_report_value {
    dtcast_type type; /* DTCAST_FLOAT64, DTCAST_INT64 or DTCAST_UINT64 */
    union {
        double f;
        int64_t i;
        uint64_t u;
    } v;
} dt_report_value;

/* Where a largest error occurred: value index (element * parts + part) and the two values. */
typedef struct dt_report_worst {
    long double error; /* -1 while no value qualified */
    uint64_t index;
    dt_report_value src, dst;
} dt_report_worst;

typedef struct dt_report {
    /* The conversion (set by dt_report_init). */
    dtcast_type src_type, dst_type;
    dtcast_options opts; /* resolved: round is never DEFAULT */
    const char *rule;    /* NULL, or what the caller sets after init when the conversion is
                          * more than opts say (a converter's clamp): shown in their place */
    int parts;           /* values per element: 2 when both types are complex, else 1 */

    /* Element index of the next dt_report_add's first element: 0 after init, advanced by add.
     * A caller that splits one tensor over several reports sets it before adding, then merges. */
    uint64_t next_index;

    /* The counts (values, not elements, for complex). nan + exact + overflow_* + underflow +
     * rounded == values. */
    uint64_t elements, values;
    uint64_t nan, exact, rounded, underflow;
    uint64_t overflow_inf, overflow_nan, overflow_max, overflow_wrap, overflow_saturate;
    uint64_t nan_out;

    /* Over the values with both sides finite. */
    uint64_t finite;
    long double sum_src2, sum_err2;
    dt_report_worst max_abs, max_rel;

    /* Private: fixed at init. */
    struct {
        int dst_int;                   /* an integer or bool target */
        dtcast_type src_dec, dst_dec;  /* decoded as FLOAT64, COMPLEX128, INT64 or UINT64 */
        int src_drop_imag;             /* complex -> real: the real parts are compared */
        unsigned src_bits, dst_bits;   /* bits one element advances */
        int dst_kind;                  /* dtcast_kind of the target (of its parts) */
        long double max, top;          /* float target: max finite, max + one unit at the top */
        int max_odd;                   /* max's last significant bit (for ties and odd) */
        int unsigned_float;            /* float8e8m0: the sign is dropped */
        int no_negatives;              /* float8e5m3fnu: a negative value is below the range */
        long double int_lo, int_hi;    /* integer target range */
        int via_float32;               /* the conversion rounds to float32 first */
        int long_double_only;          /* tests: every value through the long double path */
        void *scratch;                 /* decoded blocks */
    } priv;
} dt_report;

/* src_type -> dst_type under opts (NULL = defaults), the options the conversion used. Strings
 * are UNSUPPORTED; allocation failure is OUT_OF_MEMORY. */
dtcast_status dt_report_init(dt_report *r, dtcast_type src_type, dtcast_type dst_type,
                             const dtcast_options *opts);
/* Adds count elements: src and dst in dtcast's layout, starting at element r->next_index. */
dtcast_status dt_report_add(dt_report *r, const void *src, const void *dst, size_t count);
/* dt_report_add as a streaming job's observer (files/pipeline.h; ctx: the dt_report). */
void dt_report_observe(void *ctx, const void *src, const void *dst, size_t count);
/* Adds the counts and figures of `from` (same pair and options) into `into`. */
void dt_report_merge(dt_report *into, const dt_report *from);
/* The report as text (one line, then one per count; what the CLI prints), e.g. (float32 [0.1, -1.5, 3.14159, 100, 448, 500, -0, 0.001, 7, -8.5, 0.333,
 * 65504, 1e-10, NaN] -> float8e4m3fn, the defaults):
 *
 *   weights: float32 -> float8e4m3fn (round rne, overflow ieee), 14 values
 *     exact          4   28.57%
 *     rounded        6   42.86%
 *     underflow      1    7.14%  nonzero -> 0
 *     overflow       2   14.29%  to NaN 2
 *     NaN            1    7.14%  NaN out 3
 *     max abs error  4  at [3]: 100.0 -> 96.0
 *     max rel error  1  at [12]: 1e-10 -> 0.0
 *     SQNR           41.13 dB  over 11 values
 *
 * The header names the tensor (omitted when tensor_name is NULL), the pair, the rounding and the
 * overflow policy that applies ("int overflow wrap|saturate" for integer targets). The counts are
 * right-aligned, then their share of all values ("<0.01%" for a tiny nonzero share); overflow
 * lists its nonzero parts (to Inf, to NaN, to ±max, wrapped, saturated); "NaN out" is left out
 * for integer targets. The largest errors give the flat element index, [i].re / [i].im for
 * complex pairs, the source in its own type's shortest digits and the result exactly; they say
 * "0" without a place when every value was exact and "-" when no value was finite, as SQNR does
 * ("inf dB" for no error at all). Complex pairs add "(N elements, real and imaginary parts
 * counted separately)" to the header, complex -> real "(real parts; the imaginary parts were
 * discarded)". */
char *dt_report_text(const dt_report *r, const char *tensor_name); /* malloc'd; NULL: no memory */
void dt_report_free(dt_report *r);

/* ---- the watch ----------------------------------------------------------------------------
 * Counts the values that were finite in src and are NaN or +-Inf in dst. A float code is NaN or
 * Inf exactly when (code & mask) == value for one mask and value per format (float8e4m3fn
 * 0x7F/0x7F, fnuz 0xFF/0x80, float16 0x7C00/0x7C00, ...), derived at init from the codes
 * themselves, so the test over dst is branch-free and vectorises; only when it finds a code
 * are the source values at those positions looked at. */
typedef struct dt_nonfinite_code {
    int bytes;              /* 1, 2, 4 or 8 bytes per part; 0: never NaN/Inf */
    int parts;              /* 2 for complex */
    int exact_test;         /* (code & mask) == value decides; else a dtcast decode does */
    int avx2;               /* the scan may use AVX2 */
    dtcast_type part_type;  /* the type of one part, for the decode */
    uint64_t mask, value;   /* in host byte order, as a little-endian code loads */
} dt_nonfinite_code;

typedef struct dt_nonfinite_watch {
    dt_nonfinite_code src, dst;
} dt_nonfinite_watch;

/* Returns 0 when the pair can never turn a finite value into NaN/Inf (integer, bool, float4
 * and float6 targets, and float targets whose range covers the source's), and then the
 * pipeline skips the watch; 1 otherwise. The count does not depend on the options: under
 * --overflow saturate it is 0 unless a conversion is wrong. */
int dt_nonfinite_watch_init(dt_nonfinite_watch *w, dtcast_type src_type, dtcast_type dst_type);
/* Values (complex parts count one each) finite in src and NaN/Inf in dst, over count elements. */
uint64_t dt_nonfinite_count(const dt_nonfinite_watch *w, const void *src, const void *dst,
                            size_t count);
/* One line (no newline) for a nonzero count, e.g. "weights: 12 finite values became NaN
 * (float8e4m3fn has no Inf; its largest finite value is 448, --overflow saturate clamps to
 * it)". tensor_name may be NULL. */
void dt_nonfinite_warning(char *buf, size_t size, dtcast_type dst, uint64_t count,
                          const char *tensor_name);

#endif /* DTCAST_FILES_REPORT_H */
