/* The conversion report and the NaN/Inf watch (report.h). */
#include "files/report.h"
#include "files/json.h"
#include "files/layout.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values decoded per step: two scratch columns of this many 8-byte values stay in L1/L2. */
#define REPORT_CHUNK 4096

/* ---- types ---------------------------------------------------------------------------------- */

static int is_integer_kind(dtcast_kind k)
{
    return k == DTCAST_KIND_BOOL || k == DTCAST_KIND_SIGNED || k == DTCAST_KIND_UNSIGNED;
}

/* Bits one element advances in dtcast's layout (float6: 8): eight elements fill whole bytes. */
static unsigned stride_bits(dtcast_type t)
{
    size_t bytes = 0;
    return dtcast_storage_size(t, 8, &bytes, NULL) == DTCAST_OK ? (unsigned)bytes : 0;
}


/* How a side is decoded: integers (bool included) exactly as int64/uint64, floats as float64. */
static dtcast_type decoded_type(const dtcast_info *info, int parts)
{
    switch (info->kind) {
    case DTCAST_KIND_BOOL:
    case DTCAST_KIND_SIGNED:
        return DTCAST_INT64;
    case DTCAST_KIND_UNSIGNED:
        return DTCAST_UINT64;
    case DTCAST_KIND_COMPLEX:
        return parts == 2 ? DTCAST_COMPLEX128 : DTCAST_FLOAT64; /* else the real part only */
    default:
        return DTCAST_FLOAT64;
    }
}

static dtcast_type scalar_of(dtcast_type decoded)
{
    return decoded == DTCAST_COMPLEX128 ? DTCAST_FLOAT64 : decoded;
}

/* ---- report: set-up ----------------------------------------------------------------------- */

static void worst_reset(dt_report_worst *w)
{
    memset(w, 0, sizeof *w);
    w->error = -1.0L;
}

dtcast_status dt_report_init(dt_report *r, dtcast_type src_type, dtcast_type dst_type,
                             const dtcast_options *opts)
{
    if (!r)
        return DTCAST_ERR_INVALID_ARGUMENT;
    memset(r, 0, sizeof *r);
    worst_reset(&r->max_abs);
    worst_reset(&r->max_rel);
    dtcast_info si, di;
    dtcast_status st = dtcast_type_info(src_type, &si, NULL);
    if (st == DTCAST_OK)
        st = dtcast_type_info(dst_type, &di, NULL);
    if (st != DTCAST_OK)
        return st;
    if (si.kind == DTCAST_KIND_STRING || di.kind == DTCAST_KIND_STRING)
        return DTCAST_ERR_UNSUPPORTED;

    r->src_type = src_type;
    r->dst_type = dst_type;
    if (opts)
        r->opts = *opts;
    else
        dtcast_options_init(&r->opts);
    const int dst_integer = is_integer_kind(di.kind);
    if (r->opts.round == DTCAST_ROUND_DEFAULT)
        r->opts.round = dst_integer ? DTCAST_ROUND_TRUNC : DTCAST_ROUND_RNE;
    r->parts = si.kind == DTCAST_KIND_COMPLEX && di.kind == DTCAST_KIND_COMPLEX ? 2 : 1;

    r->priv.src_drop_imag = si.kind == DTCAST_KIND_COMPLEX && r->parts == 1;
    r->priv.dst_int = dst_integer;
    r->priv.src_dec = decoded_type(&si, r->parts);
    r->priv.dst_dec = decoded_type(&di, r->parts);
    r->priv.src_bits = stride_bits(src_type);
    r->priv.dst_bits = stride_bits(dst_type);
    r->priv.dst_kind = (int)di.kind;
    if (dst_integer) {
        r->priv.int_lo = (long double)di.int_min;
        r->priv.int_hi = (long double)di.int_max;
    } else {
        /* The unit in the last place of the top binade: max + unit is where an unlimited
         * exponent range would continue. */
        const long double unit = ldexpl(1.0L, ilogb(di.max) - di.mantissa_bits);
        r->priv.max = di.max;
        r->priv.top = r->priv.max + unit;
        r->priv.max_odd = fmodl(r->priv.max / unit, 2.0L) != 0.0L;
        r->priv.unsigned_float = di.lowest > 0;
        r->priv.no_negatives = di.lowest == 0; /* its 0 (or NaN) is an overflow past 0 */
    }
    /* As the library decides it: a non-float32 source on its way to a narrow real float. */
    r->priv.via_float32 = r->opts.via_float32 && src_type != DTCAST_FLOAT32 &&
                          di.kind == DTCAST_KIND_FLOAT && di.bits < 32;
    r->priv.scratch = malloc(2 * REPORT_CHUNK * sizeof(double));
    if (!r->priv.scratch)
        return DTCAST_ERR_OUT_OF_MEMORY;
    return DTCAST_OK;
}

void dt_report_free(dt_report *r)
{
    if (!r)
        return;
    free(r->priv.scratch);
    r->priv.scratch = NULL;
}

/* ---- report: one value ---------------------------------------------------------------------- */

/* The per-chunk tallies, kept in locals so the loop does not write through r. */
typedef struct tally {
    uint64_t nan, exact, rounded, underflow, nan_out;
    uint64_t over_inf, over_nan, over_max, over_wrap, over_sat;
    uint64_t finite;
    long double sum_src2, sum_err2;
} tally;

typedef struct column {
    const void *data;
    dtcast_type type; /* FLOAT64, INT64 or UINT64: one per value */
} column;

/* long double holds every int64, uint64 and float64 exactly where its significand has 64 bits or
 * more (x86: 64, aarch64 Linux: 113); where it is double, integers past 2^53 would round. */
static inline long double column_get(const column *c, size_t j)
{
    switch (c->type) {
    case DTCAST_INT64:
        return (long double)((const int64_t *)c->data)[j];
    case DTCAST_UINT64:
        return (long double)((const uint64_t *)c->data)[j];
    default:
        return ((const double *)c->data)[j];
    }
}

static dt_report_value column_value(const column *c, size_t j)
{
    dt_report_value v;
    memset(&v, 0, sizeof v);
    v.type = c->type;
    switch (c->type) {
    case DTCAST_INT64:
        v.v.i = ((const int64_t *)c->data)[j];
        break;
    case DTCAST_UINT64:
        v.v.u = ((const uint64_t *)c->data)[j];
        break;
    default:
        v.v.f = ((const double *)c->data)[j];
        break;
    }
    return v;
}

/* The source as the conversion rounded it first under via_float32: float32, to nearest even. */
static long double through_float32(const column *c, size_t j)
{
    dtcast_options o;
    dtcast_options_init(&o);
    o.threads = 1;
    float f = 0;
    dt_report_value v = column_value(c, j);
    if (dtcast_convert(&f, DTCAST_FLOAT32, &v.v, v.type, 1, &o, NULL) != DTCAST_OK)
        return column_get(c, j);
    return f;
}

/* Whether a finite source whose magnitude a lies past the target's max overflows: IEEE 754 asks
 * whether it rounds, with an unlimited exponent range, above max. Only the band (max, top)
 * depends on the rounding mode; there the candidates are max and top. */
static int beyond_max(const dt_report *r, long double a, int neg)
{
    if (a <= r->priv.max)
        return 0;
    if (a >= r->priv.top)
        return 1;
    const long double mid = r->priv.max + (r->priv.top - r->priv.max) / 2; /* exact */
    switch (r->opts.round) {
    case DTCAST_ROUND_TRUNC:
        return 0;
    case DTCAST_ROUND_FLOOR:
        return neg;
    case DTCAST_ROUND_CEIL:
        return !neg;
    case DTCAST_ROUND_RNA:
        return a >= mid;
    case DTCAST_ROUND_ODD: /* the odd candidate: top when max's last bit is even */
        return !r->priv.max_odd;
    default: /* RNE: at the midpoint the even candidate, top when max is odd */
        return a > mid || (a == mid && r->priv.max_odd);
    }
}

static int float_overflows(const dt_report *r, long double s, const column *src, size_t j)
{
    const int neg = s < 0 && !r->priv.unsigned_float; /* float8e8m0 drops the sign first */
    long double a = fabsl(s);
    if (r->priv.via_float32 && a > r->priv.max && a < r->priv.top)
        a = fabsl(through_float32(src, j));
    return beyond_max(r, a, neg);
}

/* Round a non-integer s to an integer under the conversion's mode (floorl and the fraction are
 * exact). */
static long double round_integer(dtcast_round mode, long double s)
{
    const long double lo = floorl(s), frac = s - lo, hi = lo + 1;
    const int lo_even = fmodl(lo, 2.0L) == 0.0L;
    switch (mode) {
    case DTCAST_ROUND_FLOOR:
        return lo;
    case DTCAST_ROUND_CEIL:
        return hi;
    case DTCAST_ROUND_RNE:
        return frac < 0.5L ? lo : frac > 0.5L ? hi : lo_even ? lo : hi;
    case DTCAST_ROUND_RNA:
        return frac < 0.5L ? lo : frac > 0.5L ? hi : s < 0 ? lo : hi;
    case DTCAST_ROUND_ODD:
        return lo_even ? hi : lo;
    default: /* TRUNC */
        return s < 0 ? hi : lo;
    }
}

static int int_overflows(const dt_report *r, long double s)
{
    if (r->priv.dst_kind == DTCAST_KIND_BOOL) /* every nonzero is 1: outside [0, 1] saturates */
        return s < 0 || s > 1;
    const long double lo = r->priv.int_lo, hi = r->priv.int_hi;
    if (s >= lo && s <= hi)
        return 0;
    if (s >= hi + 1 || s <= lo - 1) /* both exact: 2^64, -2^63 - 1 fit a 64-bit significand */
        return 1;
    const long double q = round_integer(r->opts.round, s);
    return q < lo || q > hi;
}

static void count_overflow(const dt_report *r, tally *t, long double d)
{
    if (r->priv.dst_int) {
        if (r->priv.dst_kind == DTCAST_KIND_BOOL ||
            r->opts.int_overflow == DTCAST_INT_OVERFLOW_SATURATE)
            t->over_sat++;
        else
            t->over_wrap++;
    } else if (isinf(d)) {
        t->over_inf++;
    } else if (isnan(d)) {
        t->over_nan++;
    } else {
        t->over_max++;
    }
}

static void note_worst(dt_report_worst *w, long double e, uint64_t index, const column *src,
                       const column *dst, size_t j)
{
    w->error = e;
    w->index = index;
    w->src = column_value(src, j);
    w->dst = column_value(dst, j);
}

/* Classifies n values of the decoded columns; base is the value index of the first. */
static void classify(dt_report *r, tally *t, const column *src, const column *dst, size_t n,
                     uint64_t base)
{
    const int dst_int = r->priv.dst_int;
    const long double max = r->priv.max;
    for (size_t j = 0; j < n; j++) {
        const long double s = column_get(src, j), d = column_get(dst, j);
        if (isnan(s)) {
            t->nan++;
            t->nan_out += isnan(d) != 0;
            continue;
        }
        if (isnan(d))
            t->nan_out++;
        if (s == d) {
            t->exact++;
            if (isfinite(s)) {
                t->finite++;
                t->sum_src2 += s * s;
                if (r->max_abs.error < 0) /* the first finite value: error 0 so far */
                    note_worst(&r->max_abs, 0, base + j, src, dst, j);
                if (r->max_rel.error < 0 && s != 0)
                    note_worst(&r->max_rel, 0, base + j, src, dst, j);
            }
            continue;
        }
        if (!isfinite(s) || !isfinite(d)) {
            count_overflow(r, t, d);
            continue;
        }
        /* Both finite, not equal. A float target's overflow can only have given +-max, or 0
         * for a negative value into a float without negative values (docs/conversion.md,
         * "Unsigned floats"). */
        if (dst_int ? int_overflows(r, s)
                    : (fabsl(d) == max && float_overflows(r, s, src, j)) ||
                          (r->priv.no_negatives && s < 0))
            count_overflow(r, t, d);
        else if (d == 0)
            t->underflow++;
        else
            t->rounded++;
        const long double e = fabsl(s - d), as = fabsl(s);
        t->finite++;
        t->sum_src2 += s * s;
        t->sum_err2 += e * e;
        if (e > r->max_abs.error)
            note_worst(&r->max_abs, e, base + j, src, dst, j);
        /* e / |s| > best without a division per value; the division settles a candidate. */
        if (as != 0 && e > r->max_rel.error * as) {
            const long double rel = e / as;
            if (rel > r->max_rel.error)
                note_worst(&r->max_rel, rel, base + j, src, dst, j);
        }
    }
}

/* The same for a float target with both columns float64, the usual case, kept fast: comparisons
 * of doubles are exact, so every decision is the same as above; the common categories are
 * counted without branches and the rare ones (overflow, a new largest error) branch off. The
 * largest errors are chosen in long double as above: the double tests only skip values that
 * cannot win (with a margin for their roundings), so the two paths agree however wide long
 * double is (x86: 64 bits, aarch64 Linux: 113). The sums go through double per chunk and are
 * redone in long double when a square could have overflowed or underflowed. */
static void classify_floats(dt_report *r, tally *t, const column *src, const column *dst,
                            size_t n, uint64_t base)
{
    const double *sv = src->data, *dv = dst->data;
    const double max = (double)r->priv.max; /* a double: the target's max is one */
    /* rel_cut: the best relative error less 2^-50, a margin for the roundings of rel_cut * |s| */
    double abs_best = (double)r->max_abs.error, rel_cut = (double)r->max_rel.error * (1 - 0x1p-50);
    double ps2 = 0, pe2 = 0, smax = 0, emax = 0;
    uint64_t nan = 0, nan_out = 0, exact = 0, finite = 0, under = 0;
    const uint64_t over_before = t->over_inf + t->over_nan + t->over_max;
    for (size_t j = 0; j < n; j++) {
        const double s = sv[j], d = dv[j], as = fabs(s);
        const int sn = s != s, eq = s == d;
        const int both = as <= DBL_MAX && fabs(d) <= DBL_MAX; /* both finite */
        const double e = both ? fabs(s - d) : 0;
        nan += (uint64_t)sn;
        nan_out += (uint64_t)(d != d);
        exact += (uint64_t)eq;
        finite += (uint64_t)both;
        const int below = both & !eq & (s < 0) & r->priv.no_negatives; /* to 0: see classify */
        under += (uint64_t)(both & !eq & (d == 0) & !below);
        ps2 += both ? s * s : 0;
        pe2 += e * e;
        smax = both && as > smax ? as : smax;
        emax = e > emax ? e : emax;
        if ((!both & !sn & !eq) | below)
            count_overflow(r, t, d);
        else if (both & !eq && fabs(d) == max && float_overflows(r, s, src, j))
            count_overflow(r, t, d);
        if (both && (e > abs_best || (e == abs_best && e != 0))) {
            const long double le = fabsl((long double)s - d);
            if (le > r->max_abs.error) {
                note_worst(&r->max_abs, le, base + j, src, dst, j);
                abs_best = (double)le;
            }
        }
        const double cut = rel_cut * as; /* a cut near underflow may have lost bits: no skipping */
        if (both && as != 0 && (e != 0 ? e >= cut || cut < 0x1p-1000 : rel_cut < 0)) {
            const long double le = fabsl((long double)s - d), las = as;
            if (le > r->max_rel.error * las) {
                const long double rel = le / las;
                if (rel > r->max_rel.error) {
                    note_worst(&r->max_rel, rel, base + j, src, dst, j);
                    rel_cut = (double)rel * (1 - 0x1p-50);
                }
            }
        }
    }
    const uint64_t over = t->over_inf + t->over_nan + t->over_max - over_before;
    t->nan += nan;
    t->nan_out += nan_out;
    t->exact += exact;
    t->underflow += under;
    t->rounded += n - nan - exact - under - over;
    t->finite += finite;
    /* squares of magnitudes past 2^500 or below 2^-400 may leave double's range */
    if (smax > 0x1p500 || (smax > 0 && ps2 < 0x1p-800) || (emax > 0 && pe2 < 0x1p-800)) {
        long double ls2 = 0, le2 = 0;
        for (size_t j = 0; j < n; j++)
            if (isfinite(sv[j]) && isfinite(dv[j])) {
                const long double ls = sv[j], le = ls - dv[j];
                ls2 += ls * ls;
                le2 += le * le;
            }
        t->sum_src2 += ls2;
        t->sum_err2 += le2;
    } else {
        t->sum_src2 += ps2;
        t->sum_err2 += pe2;
    }
}

static void tally_into(dt_report *r, const tally *t)
{
    r->nan += t->nan;
    r->exact += t->exact;
    r->rounded += t->rounded;
    r->underflow += t->underflow;
    r->nan_out += t->nan_out;
    r->overflow_inf += t->over_inf;
    r->overflow_nan += t->over_nan;
    r->overflow_max += t->over_max;
    r->overflow_wrap += t->over_wrap;
    r->overflow_saturate += t->over_sat;
    r->finite += t->finite;
    r->sum_src2 += t->sum_src2;
    r->sum_err2 += t->sum_err2;
}

/* ---- report: blocks ------------------------------------------------------------------------ */

static dtcast_status decode(void *out, dtcast_type out_type, const void *in, dtcast_type in_type,
                            size_t count)
{
    dtcast_options o;
    dtcast_options_init(&o);
    o.threads = 1;            /* the caller decides the threads */
    o.discard_imaginary = 1;  /* complex against real: the real parts */
    return dtcast_convert(out, out_type, in, in_type, count, &o, NULL);
}

dtcast_status dt_report_add(dt_report *r, const void *src, const void *dst, size_t count)
{
    if (!r || !r->priv.scratch || (count && (!src || !dst)))
        return DTCAST_ERR_INVALID_ARGUMENT;
    const size_t step = REPORT_CHUNK / (size_t)r->parts; /* elements; a multiple of 8 */
    double *sbuf = r->priv.scratch, *dbuf = sbuf + REPORT_CHUNK;
    const column sc = {sbuf, scalar_of(r->priv.src_dec)};
    const column dc = {dbuf, scalar_of(r->priv.dst_dec)};
    for (size_t done = 0; done < count;) {
        const size_t n = count - done < step ? count - done : step;
        /* done is a multiple of 8, so the packed offsets are whole bytes */
        const uint8_t *s = (const uint8_t *)src + done / 8 * r->priv.src_bits;
        const uint8_t *d = (const uint8_t *)dst + done / 8 * r->priv.dst_bits;
        dtcast_status st = decode(sbuf, r->priv.src_dec, s, r->src_type, n);
        if (st == DTCAST_OK)
            st = decode(dbuf, r->priv.dst_dec, d, r->dst_type, n);
        if (st != DTCAST_OK)
            return st;
        tally t;
        memset(&t, 0, sizeof t);
        const uint64_t base = (r->next_index + done) * (uint64_t)r->parts;
        if (sc.type == DTCAST_FLOAT64 && dc.type == DTCAST_FLOAT64 && !r->priv.dst_int &&
            !r->priv.long_double_only)
            classify_floats(r, &t, &sc, &dc, n * (size_t)r->parts, base);
        else
            classify(r, &t, &sc, &dc, n * (size_t)r->parts, base);
        tally_into(r, &t);
        done += n;
    }
    r->elements += count;
    r->values += (uint64_t)count * (uint64_t)r->parts;
    r->next_index += count;
    return DTCAST_OK;
}

static void merge_worst(dt_report_worst *into, const dt_report_worst *from)
{
    /* the larger error; on a tie the earlier value, as one report in order would keep */
    if (from->error > into->error || (from->error == into->error && from->error >= 0 &&
                                      from->index < into->index))
        *into = *from;
}

void dt_report_merge(dt_report *into, const dt_report *from)
{
    into->elements += from->elements;
    into->values += from->values;
    into->nan += from->nan;
    into->exact += from->exact;
    into->rounded += from->rounded;
    into->underflow += from->underflow;
    into->nan_out += from->nan_out;
    into->overflow_inf += from->overflow_inf;
    into->overflow_nan += from->overflow_nan;
    into->overflow_max += from->overflow_max;
    into->overflow_wrap += from->overflow_wrap;
    into->overflow_saturate += from->overflow_saturate;
    into->finite += from->finite;
    into->sum_src2 += from->sum_src2;
    into->sum_err2 += from->sum_err2;
    merge_worst(&into->max_abs, &from->max_abs);
    merge_worst(&into->max_rel, &from->max_rel);
}

/* ---- report: printing ---------------------------------------------------------------------- */

/* A decoded value for printing. The source in its own type's shortest digits (float32 1e-10 as
 * "1e-10", which names that float32); the result in float64's, which for a narrow type is its
 * exact value (float16 65504 stays "65504.0", where float16's shortest is "65500.0"). */
static void format_value(char *buf, size_t size, const dt_report_value *v, dtcast_type type)
{
    dtcast_info info;
    uint8_t code[8];
    if (v->type == DTCAST_FLOAT64 && type != DTCAST_UNDEFINED &&
        dtcast_type_info(type, &info, NULL) == DTCAST_OK &&
        dtcast_convert(code, dt_part_type(&info), &v->v.f, DTCAST_FLOAT64, 1, NULL, NULL) == DTCAST_OK &&
        dtcast_format_element(buf, size, code, dt_part_type(&info), 0, NULL, NULL) == DTCAST_OK)
        return;
    if (dtcast_format_element(buf, size, &v->v, v->type, 0, NULL, NULL) != DTCAST_OK)
        snprintf(buf, size, "?");
}

static void format_index(char *buf, size_t size, const dt_report *r, uint64_t index)
{
    if (r->parts == 2)
        snprintf(buf, size, "[%llu].%s", (unsigned long long)(index / 2), index % 2 ? "im" : "re");
    else
        snprintf(buf, size, "[%llu]", (unsigned long long)index);
}

static int digits(uint64_t n)
{
    int k = 1;
    while (n >= 10) {
        n /= 10;
        k++;
    }
    return k;
}

/* printf into the text. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void outf(dt_json_buf *out, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof line) {
        dt_json_put(out, line, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        out->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    dt_json_put(out, big, (size_t)n);
    free(big);
}

static void print_count(dt_json_buf *out, const dt_report *r, const char *label, uint64_t n, int width,
                        const char *detail)
{
    outf(out, "  %-14s %*llu", label, width, (unsigned long long)n);
    if (r->values) {
        const double pct = 100.0 * (double)n / (double)r->values;
        if (n && pct < 0.005) /* not 0.00%: there are some */
            outf(out, "  %7s", "<0.01%");
        else
            outf(out, "  %6.2f%%", pct);
    }
    if (detail && *detail)
        outf(out, "  %s", detail);
    dt_json_puts(out, "\n");
}

/* Appends ", label N" (the first without the comma) for a nonzero n. */
static void append_part(char *buf, size_t size, const char *label, uint64_t n)
{
    if (!n)
        return;
    size_t len = strlen(buf);
    if (len < size)
        snprintf(buf + len, size - len, "%s%s %llu", len ? ", " : "", label,
                 (unsigned long long)n);
}

static void print_worst(dt_json_buf *out, const dt_report *r, const char *label,
                        const dt_report_worst *w)
{
    if (w->error < 0) {
        outf(out, "  %-14s -\n", label);
        return;
    }
    if (w->error == 0) {
        outf(out, "  %-14s 0\n", label);
        return;
    }
    char at[48], sv[DTCAST_FORMAT_MAX], dv[DTCAST_FORMAT_MAX];
    format_index(at, sizeof at, r, w->index);
    format_value(sv, sizeof sv, &w->src, r->src_type);
    format_value(dv, sizeof dv, &w->dst, DTCAST_UNDEFINED);
    outf(out, "  %-14s %.6Lg  at %s: %s -> %s\n", label, w->error, at, sv, dv);
}

static void report_text(const dt_report *r, const char *tensor_name, dt_json_buf *out)
{
    const char *sn = dtcast_type_name(r->src_type), *dn = dtcast_type_name(r->dst_type);
    if (tensor_name)
        outf(out, "%s: ", tensor_name);
    if (r->rule)
        outf(out, "%s -> %s (%s), %llu values", sn ? sn : "?", dn ? dn : "?", r->rule,
             (unsigned long long)r->values);
    else
        outf(out, "%s -> %s (round %s, %s %s), %llu values", sn ? sn : "?", dn ? dn : "?",
            dtcast_round_name(r->opts.round), r->priv.dst_int ? "int overflow" : "overflow",
            r->priv.dst_int
                ? (r->opts.int_overflow == DTCAST_INT_OVERFLOW_SATURATE ? "saturate" : "wrap")
                : (r->opts.float_overflow == DTCAST_FLOAT_OVERFLOW_SATURATE ? "saturate"
                   : r->opts.float_overflow == DTCAST_FLOAT_OVERFLOW_INF    ? "inf"
                                                                             : "ieee"),
            (unsigned long long)r->values);
    if (r->parts == 2)
        outf(out, " (%llu elements, real and imaginary parts counted separately)",
                (unsigned long long)r->elements);
    else if (r->priv.src_drop_imag)
        dt_json_puts(out, " (real parts; the imaginary parts were discarded)");
    dt_json_puts(out, "\n");

    const uint64_t overflow = r->overflow_inf + r->overflow_nan + r->overflow_max +
                              r->overflow_wrap + r->overflow_saturate;
    uint64_t widest = r->exact;
    const uint64_t counts[] = {r->rounded, r->underflow, overflow, r->nan};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        widest = counts[i] > widest ? counts[i] : widest;
    const int width = digits(widest);

    char detail[160] = "";
    print_count(out, r, "exact", r->exact, width, NULL);
    print_count(out, r, "rounded", r->rounded, width, NULL);
    print_count(out, r, "underflow", r->underflow, width, r->underflow ? "nonzero -> 0" : NULL);
    append_part(detail, sizeof detail, "to Inf", r->overflow_inf);
    append_part(detail, sizeof detail, "to NaN", r->overflow_nan);
    append_part(detail, sizeof detail, "to \xC2\xB1max", r->overflow_max);
    append_part(detail, sizeof detail, "wrapped", r->overflow_wrap);
    append_part(detail, sizeof detail, "saturated", r->overflow_saturate);
    print_count(out, r, "overflow", overflow, width, detail);
    snprintf(detail, sizeof detail, "NaN out %llu", (unsigned long long)r->nan_out);
    print_count(out, r, "NaN", r->nan, width, r->priv.dst_int ? NULL : detail);

    print_worst(out, r, "max abs error", &r->max_abs);
    print_worst(out, r, "max rel error", &r->max_rel);
    if (r->finite == 0)
        outf(out, "  %-14s -\n", "SQNR");
    else if (r->sum_err2 == 0)
        outf(out, "  %-14s inf dB  over %llu values\n", "SQNR", (unsigned long long)r->finite);
    else if (r->sum_src2 == 0)
        outf(out, "  %-14s -inf dB  over %llu values\n", "SQNR",
                (unsigned long long)r->finite);
    else
        outf(out, "  %-14s %.2Lf dB  over %llu values\n", "SQNR",
                10.0L * log10l(r->sum_src2 / r->sum_err2), (unsigned long long)r->finite);
}

char *dt_report_text(const dt_report *r, const char *tensor_name)
{
    dt_json_buf b = {0};
    report_text(r, tensor_name, &b);
    dt_json_put(&b, "", 1);
    if (b.oom) {
        free(b.data);
        return NULL;
    }
    return b.data;
}

/* ---- the watch ----------------------------------------------------------------------------- */

/* The scans. Each says whether any of n codes matches. With gcc and clang, 64
 * bytes a step (128 with AVX2) in four vectors of the GNU vector extension: per vector a load,
 * an and, a compare and an or (SSE2 on any x86-64, NEON on arm64; AVX2 where the CPU has it,
 * chosen at init). The tail, and other compilers, go code by code. */
#if defined(__GNUC__)
#define WATCH_VECTORS 1
#else
#define WATCH_VECTORS 0
#endif
#if WATCH_VECTORS && defined(__x86_64__)
#define WATCH_AVX2 1
#else
#define WATCH_AVX2 0
#endif

#if WATCH_VECTORS
/* name(p, n, mask, value, &hit): scans whole steps, returns how many codes it covered. */
#define DEFINE_SCAN(name, type, vbytes, attributes)                                              \
    typedef type name##_vec __attribute__((vector_size(vbytes)));                                \
    attributes static size_t name(const uint8_t *p, size_t n, type mask, type value, int *hit)   \
    {                                                                                            \
        const size_t lanes = vbytes / sizeof(type);                                              \
        const name##_vec m = (name##_vec){0} + mask, v = (name##_vec){0} + value;                \
        name##_vec a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, x0, x1, x2, x3;                       \
        size_t i = 0;                                                                            \
        for (; i + 4 * lanes <= n; i += 4 * lanes) {                                             \
            memcpy(&x0, p + i * sizeof(type), vbytes);                                           \
            memcpy(&x1, p + i * sizeof(type) + vbytes, vbytes);                                  \
            memcpy(&x2, p + i * sizeof(type) + 2 * vbytes, vbytes);                              \
            memcpy(&x3, p + i * sizeof(type) + 3 * vbytes, vbytes);                              \
            a0 |= (name##_vec)((x0 & m) == v);                                                   \
            a1 |= (name##_vec)((x1 & m) == v);                                                   \
            a2 |= (name##_vec)((x2 & m) == v);                                                   \
            a3 |= (name##_vec)((x3 & m) == v);                                                   \
        }                                                                                        \
        const name##_vec a = a0 | a1 | a2 | a3;                                                  \
        uint64_t w[vbytes / 8], any = 0;                                                         \
        memcpy(w, &a, vbytes);                                                                   \
        for (size_t k = 0; k < vbytes / 8; k++)                                                  \
            any |= w[k];                                                                         \
        *hit = any != 0;                                                                         \
        return i;                                                                                \
    }
DEFINE_SCAN(scan8, uint8_t, 16, )
DEFINE_SCAN(scan16, uint16_t, 16, )
DEFINE_SCAN(scan32, uint32_t, 16, )
DEFINE_SCAN(scan64, uint64_t, 16, )
#endif
#if WATCH_AVX2
DEFINE_SCAN(scan8_avx2, uint8_t, 32, __attribute__((target("avx2"))))
DEFINE_SCAN(scan16_avx2, uint16_t, 32, __attribute__((target("avx2"))))
DEFINE_SCAN(scan32_avx2, uint32_t, 32, __attribute__((target("avx2"))))
DEFINE_SCAN(scan64_avx2, uint64_t, 32, __attribute__((target("avx2"))))
#endif

static int have_avx2(void)
{
#if WATCH_AVX2
    return __builtin_cpu_supports("avx2") != 0;
#else
    return 0;
#endif
}

#define DEFINE_ANY(name, type, scan, scan_avx2)                                                  \
    static int name(const uint8_t *p, size_t n, type mask, type value, int avx2)                 \
    {                                                                                            \
        int any = 0;                                                                             \
        size_t i = 0;                                                                            \
        if (WATCH_AVX2 && avx2)                                                                  \
            i = scan_avx2(p, n, mask, value, &any);                                              \
        else if (WATCH_VECTORS)                                                                  \
            i = scan(p, n, mask, value, &any);                                                   \
        for (; i < n && !any; i++) {                                                             \
            type x;                                                                              \
            memcpy(&x, p + i * sizeof(type), sizeof(type));                                      \
            any = (x & mask) == value;                                                           \
        }                                                                                        \
        return any;                                                                              \
    }

/* Where a scan is missing, a stand-in that covers nothing. */
#if !WATCH_VECTORS
#define scan8(p, n, m, v, hit) 0
#define scan16(p, n, m, v, hit) 0
#define scan32(p, n, m, v, hit) 0
#define scan64(p, n, m, v, hit) 0
#endif
#if !WATCH_AVX2
#define scan8_avx2(p, n, m, v, hit) 0
#define scan16_avx2(p, n, m, v, hit) 0
#define scan32_avx2(p, n, m, v, hit) 0
#define scan64_avx2(p, n, m, v, hit) 0
#endif

DEFINE_ANY(any8, uint8_t, scan8, scan8_avx2)
DEFINE_ANY(any16, uint16_t, scan16, scan16_avx2)
DEFINE_ANY(any32, uint32_t, scan32, scan32_avx2)
DEFINE_ANY(any64, uint64_t, scan64, scan64_avx2)

static uint64_t width_mask(int bytes)
{
    return bytes >= 8 ? UINT64_MAX : (UINT64_C(1) << (8 * bytes)) - 1;
}

/* A little-endian code loaded as a host integer: on a big-endian host, the bytes reversed. */
static uint64_t host_order(uint64_t x, int bytes)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    uint64_t y = 0;
    for (int i = 0; i < bytes; i++)
        y |= ((x >> (8 * i)) & 0xFF) << (8 * (bytes - 1 - i));
    return y;
#else
    (void)bytes;
    return x;
#endif
}

/* A code as the scans load it: host byte order (mask and value are kept that way). */
static uint64_t load_native(const uint8_t *p, int bytes)
{
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    switch (bytes) {
    case 1:
        memcpy(&u8, p, 1);
        return u8;
    case 2:
        memcpy(&u16, p, 2);
        return u16;
    case 4:
        memcpy(&u32, p, 4);
        return u32;
    default:
        memcpy(&u64, p, 8);
        return u64;
    }
}

/* Whether the part code at index i (little-endian, of c->part_type) is NaN or Inf. */
static int code_nonfinite(const dt_nonfinite_code *c, const uint8_t *base, size_t i)
{
    const uint8_t *p = base + i * (size_t)c->bytes;
    if (c->exact_test)
        return (load_native(p, c->bytes) & c->mask) == c->value;
    double v = 0;
    return decode(&v, DTCAST_FLOAT64, p, c->part_type, 1) == DTCAST_OK && !isfinite(v);
}

/* The mask test of a float type: the bits every NaN/Inf code shares, checked against every code
 * of an 8-bit type; wider types are IEEE-like (exponent all ones), checked on their special
 * codes. Without a test that holds, each code is decoded. */
static void code_init(dt_nonfinite_code *c, const dtcast_info *info, int parts)
{
    memset(c, 0, sizeof *c);
    if (info->kind != DTCAST_KIND_FLOAT && info->kind != DTCAST_KIND_COMPLEX)
        return;
    if (!info->has_nan && !info->has_inf)
        return;
    const int bits = info->bits / (info->kind == DTCAST_KIND_COMPLEX ? 2 : 1);
    if (bits % 8)
        return; /* no packed type has NaN or Inf */
    c->bytes = bits / 8;
    c->parts = parts;
    c->part_type = dt_part_type(info);
    const uint64_t all = width_mask(c->bytes);
    uint64_t mask, value;
    int ok = 1;
    if (c->bytes == 1) {
        uint8_t codes[256];
        double v[256];
        for (int i = 0; i < 256; i++)
            codes[i] = (uint8_t)i;
        if (decode(v, DTCAST_FLOAT64, codes, c->part_type, 256) != DTCAST_OK)
            return;
        uint64_t and_ = all, or_ = 0;
        for (int i = 0; i < 256; i++)
            if (!isfinite(v[i])) {
                and_ &= (uint64_t)i;
                or_ |= (uint64_t)i;
            }
        mask = ~(and_ ^ or_) & all;
        value = and_ & mask;
        for (int i = 0; i < 256; i++)
            ok = ok && (((uint64_t)i & mask) == value) == !isfinite(v[i]);
    } else {
        const int man = info->mantissa_bits, exp = info->exponent_bits;
        mask = ((UINT64_C(1) << exp) - 1) << man;
        value = mask;
        const uint64_t sign = UINT64_C(1) << (bits - 1);
        const uint64_t specials[] = {info->inf_bits, info->nan_bits, info->nan_bits | sign};
        const uint64_t finite[] = {0, sign, info->max_bits, info->max_bits | sign, 1};
        ok = info->has_inf && info->nan_count > 0;
        for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
            ok = ok && (specials[i] & mask) == value;
        for (size_t i = 0; i < sizeof finite / sizeof finite[0]; i++)
            ok = ok && (finite[i] & mask) != value;
    }
    c->exact_test = ok;
    c->avx2 = have_avx2();
    c->mask = host_order(mask, c->bytes);
    c->value = host_order(value, c->bytes);
}

/* The largest finite magnitude a type holds. */
static double largest(const dtcast_info *info)
{
    if (is_integer_kind(info->kind)) {
        const double lo = -(double)info->int_min, hi = (double)info->int_max;
        return lo > hi ? lo : hi;
    }
    return info->max;
}

int dt_nonfinite_watch_init(dt_nonfinite_watch *w, dtcast_type src_type, dtcast_type dst_type)
{
    memset(w, 0, sizeof *w);
    dtcast_info si, di;
    if (dtcast_type_info(src_type, &si, NULL) != DTCAST_OK ||
        dtcast_type_info(dst_type, &di, NULL) != DTCAST_OK || si.kind == DTCAST_KIND_STRING ||
        di.kind == DTCAST_KIND_STRING)
        return 0;
    code_init(&w->dst, &di, di.kind == DTCAST_KIND_COMPLEX ? 2 : 1);
    /* Rounding never goes past a representable max: a source within range stays finite,
     * unless it is negative and the target has no negative values (float8e5m3fnu: NaN). */
    const int negatives_nan = di.kind == DTCAST_KIND_FLOAT && di.lowest == 0 &&
                              (is_integer_kind(si.kind) ? si.int_min < 0 : si.lowest < 0);
    if (w->dst.bytes == 0 || (largest(&si) <= largest(&di) && !negatives_nan)) {
        w->dst.bytes = 0;
        return 0;
    }
    code_init(&w->src, &si, si.kind == DTCAST_KIND_COMPLEX ? 2 : 1);
    return 1;
}

static int any_nonfinite(const dt_nonfinite_code *c, const uint8_t *p, size_t n)
{
    if (!c->exact_test)
        return 1; /* no quick test: let the exact pass look */
    switch (c->bytes) {
    case 1:
        return any8(p, n, (uint8_t)c->mask, (uint8_t)c->value, c->avx2);
    case 2:
        return any16(p, n, (uint16_t)c->mask, (uint16_t)c->value, c->avx2);
    case 4:
        return any32(p, n, (uint32_t)c->mask, (uint32_t)c->value, c->avx2);
    default:
        return any64(p, n, c->mask, c->value, c->avx2);
    }
}

uint64_t dt_nonfinite_count(const dt_nonfinite_watch *w, const void *src, const void *dst,
                            size_t count)
{
    const dt_nonfinite_code *dc = &w->dst, *sc = &w->src;
    if (dc->bytes == 0 || count == 0)
        return 0;
    const size_t n = count * (size_t)dc->parts;
    /* One pass over runs of 256 codes; a run holding a NaN or Inf is narrowed to runs of 32,
     * and only those are looked at code by code (data with rare overflows, e.g. one per row,
     * would otherwise pay a per-code test for a large share of the block). */
    uint64_t total = 0;
    const uint8_t *d = dst;
    for (size_t at = 0; at < n; at += 256) {
        const size_t m = n - at < 256 ? n - at : 256;
        if (!any_nonfinite(dc, d + at * (size_t)dc->bytes, m))
            continue;
        for (size_t sub = at; sub < at + m; sub += 32) {
            const size_t k = at + m - sub < 32 ? at + m - sub : 32;
            if (!any_nonfinite(dc, d + sub * (size_t)dc->bytes, k))
                continue;
            for (size_t i = sub; i < sub + k; i++) {
                if (!code_nonfinite(dc, dst, i))
                    continue;
                /* the source value behind dst part i: a real source has a zero imaginary part */
                const size_t element = i / (size_t)dc->parts, part = i % (size_t)dc->parts;
                if (sc->bytes == 0 || part >= (size_t)sc->parts ||
                    !code_nonfinite(sc, src, element * (size_t)sc->parts + part))
                    total++;
            }
        }
    }
    return total;
}

void dt_nonfinite_warning(char *buf, size_t size, dtcast_type dst, uint64_t count,
                          const char *tensor_name)
{
    if (!buf || size == 0)
        return;
    dtcast_info info;
    if (dtcast_type_info(dst, &info, NULL) != DTCAST_OK) {
        snprintf(buf, size, "%s%s%llu finite values became NaN or Inf",
                 tensor_name ? tensor_name : "", tensor_name ? ": " : "",
                 (unsigned long long)count);
        return;
    }
    /* max exactly, as float64 digits (float16's own shortest would be "65500.0") */
    char max[DTCAST_FORMAT_MAX] = "?";
    if (dtcast_format_element(max, sizeof max, &info.max, DTCAST_FLOAT64, 0, NULL, NULL) == DTCAST_OK) {
        size_t len = strlen(max);
        if (len > 2 && strcmp(max + len - 2, ".0") == 0)
            max[len - 2] = '\0';
    }
    const char *pm = info.lowest < 0 ? "\xC2\xB1" : ""; /* float8e8m0 has no sign */
    const char *name = info.name ? info.name : "?";
    const char *s = count == 1 ? "" : "s";
    if (info.kind == DTCAST_KIND_FLOAT && info.lowest == 0) /* float8e5m3fnu: negatives too */
        snprintf(buf, size,
                 "%s%s%llu finite value%s became NaN (%s has no Inf and no negative values; "
                 "--overflow saturate clamps to [0, %s])",
                 tensor_name ? tensor_name : "", tensor_name ? ": " : "",
                 (unsigned long long)count, s, name, max);
    else if (info.has_inf)
        snprintf(buf, size,
                 "%s%s%llu finite value%s became Inf (beyond %s's %s%s; --overflow saturate "
                 "clamps to %s%s)",
                 tensor_name ? tensor_name : "", tensor_name ? ": " : "",
                 (unsigned long long)count, s, name, pm, max, pm, max);
    else
        snprintf(buf, size,
                 "%s%s%llu finite value%s became NaN (%s has no Inf; --overflow saturate clamps "
                 "to %s%s)",
                 tensor_name ? tensor_name : "", tensor_name ? ": " : "",
                 (unsigned long long)count, s, name, pm, max);
}

void dt_report_observe(void *ctx, const void *src, const void *dst, size_t count)
{
    dt_report_add(ctx, src, dst, count);
}
