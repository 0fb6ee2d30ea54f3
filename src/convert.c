/* dtcast_convert: checks the arguments, then moves every element through decode -> encode.
 * Strings and complex numbers are handled here; the rounding itself lives in exact.c. */
#include "internal.h"
#include "kernels/kernels.h"
#include "parallel.h"
#include "round.h"
#include "text_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#if defined(DT_HAVE_X86)
#include <xmmintrin.h>
#endif

#define NO_INDEX ((size_t)-1)

/* ---- argument checks ---------------------------------------------------------------------- */

static dtcast_status check_options(const dtcast_options *o, dtcast_error *error)
{
    if ((unsigned)o->round > DTCAST_ROUND_STOCHASTIC)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX, "invalid rounding mode %d",
                       (int)o->round);
    if ((unsigned)o->float_overflow > DTCAST_FLOAT_OVERFLOW_INF)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX,
                       "invalid float overflow policy %d", (int)o->float_overflow);
    if ((unsigned)o->int_overflow > DTCAST_INT_OVERFLOW_SATURATE)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX,
                       "invalid integer overflow policy %d", (int)o->int_overflow);
    if ((unsigned)o->string_style > DTCAST_STRING_ORT)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX, "invalid string style %d",
                       (int)o->string_style);
    return DTCAST_OK;
}

/* Overlapping buffers are refused, except the in-place case that a forward pass handles:
 * dst == src and the destination element is not wider than the source element. */
static bool overlap_is_safe(const void *dst, size_t dst_bytes, const dt_format *df,
                            const void *src, size_t src_bytes, const dt_format *sf)
{
    const uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    if (d + dst_bytes <= s || s + src_bytes <= d)
        return true;
    if (df->tc == DT_TC_STRING || sf->tc == DT_TC_STRING)
        return false;
    return d == s && df->stride_bits <= sf->stride_bits;
}

/* ---- numbers -> numbers ------------------------------------------------------------------- */

/* One element of src as an exact value; complex sources give both parts. */
static void load_value(const dt_format *f, const dt_format *part, const void *src, size_t i,
                       dt_value *re, dt_value *im)
{
    if (f->tc == DT_TC_COMPLEX) {
        dt_decode(part, dt_load(part, src, 2 * i), re);
        dt_decode(part, dt_load(part, src, 2 * i + 1), im);
        return;
    }
    dt_decode(f, dt_load(f, src, i), re);
    memset(im, 0, sizeof *im);
    im->cls = DT_ZERO;
}

/* The ONNX reference rounds to float32 first on the way to narrower floats (double rounding).
 * via_float32 reproduces it; by default dtcast rounds once. */
static void through_float32(dt_value *v)
{
    static const dt_rules rne = {.round = DTCAST_ROUND_RNE};
    const dt_format *f32 = dt_format_of(DTCAST_FLOAT32);
    dt_decode(f32, dt_encode(f32, v, &rne), v);
}

static bool wants_float32_first(const dtcast_options *o, const dt_format *sf, const dt_format *df)
{
    if (!o->via_float32 || sf->type == DTCAST_FLOAT32)
        return false;
    return (df->tc == DT_TC_FLOAT || df->tc == DT_TC_E8M0) && df->bits < 32;
}

typedef struct number_job {
    void *dst;
    const dt_format *df, *dpart;
    const void *src;
    const dt_format *sf, *spart;
    bool float32_first;
    dt_rules rules;
    bool has_kernel; /* a fast path was found: kernel runs instead of the element loop */
    dt_kernel kernel;
} number_job;

static void convert_number_range(void *ctx, size_t begin, size_t end)
{
    const number_job *j = ctx;
    if (j->has_kernel) {
#if defined(DT_HAVE_X86)
        /* the kernels see no flush-to-zero or denormals-are-zero of the caller's MXCSR (the
         * vector conversions honour both, even with a rounding mode of their own) */
        const unsigned csr = _mm_getcsr();
        _mm_setcsr(csr & ~0x8040u);
        dt_kernel_run(&j->kernel, j->dst, j->src, begin, end);
        _mm_setcsr(csr);
#else
        dt_kernel_run(&j->kernel, j->dst, j->src, begin, end);
#endif
        return;
    }
    /* stochastic rounding: the random bits of each destination number, by its index in the
     * tensor (a complex destination counts its parts: element i is numbers 2i and 2i + 1) */
    const bool stochastic = j->rules.round == DTCAST_ROUND_STOCHASTIC;
    dt_rules rules = j->rules;
    for (size_t i = begin; i < end; i++) {
        dt_value re, im;
        load_value(j->sf, j->spart, j->src, i, &re, &im);
        if (j->float32_first) {
            through_float32(&re);
            through_float32(&im);
        }
        const uint64_t n = rules.offset + i; /* modulo 2^64, as the index of the formula */
        if (j->df->tc == DT_TC_COMPLEX) {
            if (stochastic)
                rules.rand = dt_stoch_rand(rules.seed, 2 * n);
            dt_store(j->dpart, j->dst, 2 * i, dt_encode(j->dpart, &re, &rules));
            if (stochastic)
                rules.rand = dt_stoch_rand(rules.seed, 2 * n + 1);
            dt_store(j->dpart, j->dst, 2 * i + 1, dt_encode(j->dpart, &im, &rules));
        } else {
            if (stochastic)
                rules.rand = dt_stoch_rand(rules.seed, n);
            dt_store(j->df, j->dst, i, dt_encode(j->df, &re, &rules));
        }
    }
}

static void convert_numbers(void *dst, const dt_format *df, const void *src, const dt_format *sf,
                            size_t count, const dtcast_options *o)
{
    number_job j;
    memset(&j, 0, sizeof j);
    j.dst = dst;
    j.df = j.dpart = df;
    j.src = src;
    j.sf = j.spart = sf;
    if (sf->tc == DT_TC_COMPLEX)
        j.spart = dt_format_of(sf->part);
    if (df->tc == DT_TC_COMPLEX)
        j.dpart = dt_format_of(df->part);
    j.float32_first = wants_float32_first(o, j.spart, j.dpart);
    dt_rules_for(j.dpart, o, &j.rules);
    /* packed float6 (stride 6) and the inf overflow policy: the reference path alone */
    if (!j.float32_first && !j.rules.overflow_any_round && df->stride_bits != 6 &&
        sf->stride_bits != 6)
        j.has_kernel = dt_kernel_find(&j.kernel, df, sf, &j.rules, count);

    /* In place, only a forward pass on one thread is safe. A fast kernel moves bytes, not
     * elements: it gets threads only when there are enough bytes for each (dt_thread_count). */
    size_t work = count; /* in units of one reference-path element (~30 ns) */
    if (j.has_kernel)    /* a kernel moves ~16 bytes (read + written) in that time */
        work = count / 16 * (size_t)(sf->stride_bits + df->stride_bits) / 8;
    const unsigned threads = dst == src ? 1 : dt_thread_count(o->threads, work);
    dt_parallel_for(count, threads, convert_number_range, &j);
    if (j.has_kernel)
        dt_kernel_release(&j.kernel);

    if (df->stride_bits < 8) { /* zero the padding bits after the last element */
        const unsigned used = (unsigned)(count % 8 * (size_t)df->stride_bits % 8); /* in the last byte */
        size_t bytes;
        if (used && dt_format_bytes(df, count, &bytes))
            ((uint8_t *)dst)[bytes - 1] &= (uint8_t)((1u << used) - 1);
    }
}

/* ---- numbers -> strings ------------------------------------------------------------------- */

/* Element i of a byte-aligned array of 1, 2, 4 or 8 byte elements (little-endian, as dt_load);
 * the byte-wise form compiles to one load. */
static uint64_t load_bytes(const void *base, size_t i, int size)
{
    const uint8_t *p = (const uint8_t *)base + i * (size_t)size;
    switch (size) {
    case 1:
        return p[0];
    case 2:
        return (uint64_t)p[0] | (uint64_t)p[1] << 8;
    case 4:
        return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
    default:
        return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
               (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
               (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
    }
}

/* What formatting one element of sf takes, decided once per call. */
typedef struct string_source {
    const dt_format *sf;
    dtcast_string_style style;
    int fast_bytes; /* > 0: Python-style float16/bfloat16/float32/float64 straight from the bits */
} string_source;

static void string_source_init(string_source *ss, const dt_format *sf, dtcast_string_style style)
{
    ss->sf = sf;
    ss->style = style;
    ss->fast_bytes = 0;
    if (style != DTCAST_STRING_ORT && sf->tc == DT_TC_FLOAT && dt_text_float_is_fast(sf))
        ss->fast_bytes = sf->stride_bits / 8;
}

/* Element i as text into buf (DTCAST_FORMAT_MAX bytes): its length, 0 on failure. */
static size_t format_element(char *buf, const string_source *ss, const void *src, size_t i)
{
    const dt_format *sf = ss->sf;
    if (ss->fast_bytes)
        return dt_text_format_float(buf, sf, load_bytes(src, i, ss->fast_bytes));
    if (sf->tc == DT_TC_COMPLEX) {
        const dt_format *part = dt_format_of(sf->part);
        return dt_text_format_complex(buf, DTCAST_FORMAT_MAX, part, dt_load(part, src, 2 * i),
                                      dt_load(part, src, 2 * i + 1), ss->style);
    }
    return dt_text_format(buf, DTCAST_FORMAT_MAX, sf, dt_load(sf, src, i), ss->style);
}

static char *copy_string(const char *s, size_t n) /* n = strlen(s) */
{
    char *c = malloc(n + 1);
    if (c)
        memcpy(c, s, n + 1);
    return c;
}

void dtcast_strings_free(char **strings, size_t count)
{
    if (!strings)
        return;
    for (size_t i = 0; i < count; i++) {
        free(strings[i]);
        strings[i] = NULL;
    }
}

/* All strings are made in a scratch array first, so a failure leaves dst untouched. Each is
 * its own malloc'ed copy (dtcast_strings_free frees them one by one). */
static dtcast_status convert_to_strings(char **dst, const void *src, const dt_format *sf,
                                        size_t count, const dtcast_options *o,
                                        dtcast_error *error)
{
    char **made = malloc(count * sizeof *made);
    if (!made)
        return dt_fail(error, DTCAST_ERR_OUT_OF_MEMORY, NO_INDEX, "out of memory for %zu strings",
                       count);
    string_source ss;
    string_source_init(&ss, sf, o->string_style);
    for (size_t i = 0; i < count; i++) {
        char buf[DTCAST_FORMAT_MAX];
        if (sf->tc == DT_TC_STRING) {
            const char *s = ((const char *const *)src)[i];
            if (!s) {
                dtcast_strings_free(made, i);
                free(made);
                return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, i, "string element %zu is NULL", i);
            }
            made[i] = copy_string(s, strlen(s));
        } else {
            const size_t n = format_element(buf, &ss, src, i);
            if (n == 0) {
                dtcast_strings_free(made, i);
                free(made);
                return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, i,
                               "element %zu of %s could not be formatted", i, sf->name);
            }
            made[i] = copy_string(buf, n);
        }
        if (!made[i]) {
            dtcast_strings_free(made, i);
            free(made);
            return dt_fail(error, DTCAST_ERR_OUT_OF_MEMORY, i, "out of memory at string %zu", i);
        }
    }
    memcpy(dst, made, count * sizeof *made);
    free(made);
    return DTCAST_OK;
}

/* ---- strings -> numbers ------------------------------------------------------------------- */

/* The first 60 bytes of s for a one-line message: control bytes become '?'. */
static void quote_for_message(char *out, size_t size, const char *s)
{
    size_t n = 0;
    for (; s[n] && n < 60 && n + 4 < size; n++)
        out[n] = iscntrl((unsigned char)s[n]) ? '?' : s[n];
    if (s[n])
        memcpy(out + n, "...", 4);
    else
        out[n] = '\0';
}

static dtcast_status bad_string(dtcast_error *error, size_t i, const char *s)
{
    char shown[72];
    quote_for_message(shown, sizeof shown, s);
    return dt_fail(error, DTCAST_ERR_BAD_STRING, i, "element %zu: \"%s\" is not a number", i, shown);
}

/* 1 for "true", 0 for "false" (any case, surrounding white space), -1 otherwise. */
static int bool_word(const char *s)
{
    static const char *const words[2] = {"false", "true"};
    while (isspace((unsigned char)*s))
        s++;
    for (int w = 0; w < 2; w++) {
        size_t n = strlen(words[w]), k = 0;
        while (k < n && s[k] && tolower((unsigned char)s[k]) == words[w][k])
            k++;
        if (k != n)
            continue;
        const char *rest = s + n;
        while (isspace((unsigned char)*rest))
            rest++;
        if (*rest == '\0')
            return w;
    }
    return -1;
}

/* What parsing into one element of df takes, decided once per call: the rules resolved for the
 * element (or part) type, and a direct store for byte-aligned elements. */
typedef struct string_target {
    const dt_format *df, *part; /* part: complex targets */
    const dtcast_options *o;
    dtcast_error *error;
    dt_rules rules;
    int store_bytes; /* 1, 2, 4, 8: element i is those bytes at i * store_bytes; 0: dt_store */
} string_target;

static void string_target_init(string_target *t, const dt_format *df, const dtcast_options *o,
                               dtcast_error *error)
{
    t->df = df;
    t->part = df->tc == DT_TC_COMPLEX ? dt_format_of(df->part) : NULL;
    t->o = o;
    t->error = error;
    dt_rules_for(t->part ? t->part : df, o, &t->rules);
    const int s = df->stride_bits;
    t->store_bytes = df->tc != DT_TC_COMPLEX && (s == 8 || s == 16 || s == 32 || s == 64) ? s / 8 : 0;
}

/* Element i of out = code, little-endian (as dt_store); the byte-wise form compiles to one
 * store. */
static void store_code(const string_target *t, void *out, size_t i, uint64_t code)
{
    const int size = t->store_bytes;
    if (!size) {
        dt_store(t->df, out, i, code);
        return;
    }
    uint8_t *p = (uint8_t *)out + i * (size_t)size;
    switch (size) {
    case 1:
        p[0] = (uint8_t)code;
        break;
    case 2:
        p[0] = (uint8_t)code;
        p[1] = (uint8_t)(code >> 8);
        break;
    case 4:
        p[0] = (uint8_t)code;
        p[1] = (uint8_t)(code >> 8);
        p[2] = (uint8_t)(code >> 16);
        p[3] = (uint8_t)(code >> 24);
        break;
    default:
        p[0] = (uint8_t)code;
        p[1] = (uint8_t)(code >> 8);
        p[2] = (uint8_t)(code >> 16);
        p[3] = (uint8_t)(code >> 24);
        p[4] = (uint8_t)(code >> 32);
        p[5] = (uint8_t)(code >> 40);
        p[6] = (uint8_t)(code >> 48);
        p[7] = (uint8_t)(code >> 56);
        break;
    }
}

/* Parses s and writes its code(s) into element i of out. */
static dtcast_status parse_into(void *out, const string_target *t, size_t i, const char *s)
{
    const dt_format *df = t->df;
    uint64_t code;
    if (df->tc == DT_TC_FLOAT) { /* the common case first: one exact rounding of the decimal */
        if (!dt_text_parse_to_code(s, df, &t->rules, &code))
            return bad_string(t->error, i, s);
        store_code(t, out, i, code);
        return DTCAST_OK;
    }
    if (df->tc == DT_TC_COMPLEX) {
        dt_value re, im;
        dt_int_parts rip, iip;
        if (!dt_text_parse_complex(s, &re, &rip, &im, &iip))
            return bad_string(t->error, i, s);
        dt_store(t->part, out, 2 * i, dt_encode(t->part, &re, &t->rules));
        dt_store(t->part, out, 2 * i + 1, dt_encode(t->part, &im, &t->rules));
        return DTCAST_OK;
    }
    if (df->tc == DT_TC_BOOL && !t->o->string_to_bool_numeric) { /* ONNX: "" is false, else true */
        store_code(t, out, i, s[0] != '\0');
        return DTCAST_OK;
    }
    if (df->tc == DT_TC_BOOL) { /* numeric: the words dtcast prints, or any number */
        int word = bool_word(s);
        if (word >= 0) {
            store_code(t, out, i, (uint64_t)word);
            return DTCAST_OK;
        }
    }
    /* One exact rounding of the decimal (integer targets from its exact integer parts). */
    if (!dt_text_parse_to_code(s, df, &t->rules, &code))
        return bad_string(t->error, i, s);
    store_code(t, out, i, code);
    return DTCAST_OK;
}

/* Decimal text is parsed to 64 significant bits and a sticky bit, fewer than the first 32
 * dropped bits of a float64 need: stochastic rounding takes numbers only. */
static dtcast_status stochastic_from_text(dtcast_error *error)
{
    return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX,
                   "stochastic rounding of strings is not supported (convert the strings to "
                   "float64 or an integer first, or choose another rounding mode)");
}

/* Every string is parsed into a scratch copy first, so a failure leaves dst untouched. */
static dtcast_status convert_from_strings(void *dst, const dt_format *df, const char *const *src,
                                          size_t count, size_t dst_bytes, const dtcast_options *o,
                                          dtcast_error *error)
{
    uint8_t *scratch = calloc(dst_bytes ? dst_bytes : 1, 1);
    if (!scratch)
        return dt_fail(error, DTCAST_ERR_OUT_OF_MEMORY, NO_INDEX, "out of memory (%zu bytes)",
                       dst_bytes);
    string_target t;
    string_target_init(&t, df, o, error);
    for (size_t i = 0; i < count; i++) {
        if (!src[i]) {
            free(scratch);
            return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, i, "string element %zu is NULL", i);
        }
        dtcast_status st = parse_into(scratch, &t, i, src[i]);
        if (st != DTCAST_OK) {
            free(scratch);
            return st;
        }
    }
    memcpy(dst, scratch, dst_bytes);
    free(scratch);
    return DTCAST_OK;
}

/* ---- the entry point ---------------------------------------------------------------------- */

dtcast_status dtcast_convert(void *dst, dtcast_type dst_type, const void *src,
                             dtcast_type src_type, size_t count, const dtcast_options *opts,
                             dtcast_error *error)
{
    dtcast_options o;
    dtcast_status st = dt_options_read(opts, &o, error);
    if (st != DTCAST_OK)
        return st;
    opts = &o;
    const dt_format *df = dt_format_in(dst_type, opts);
    const dt_format *sf = dt_format_in(src_type, opts);
    if (!sf)
        return dt_fail(error, DTCAST_ERR_UNKNOWN_TYPE, NO_INDEX, "unknown source type %d",
                       (int)src_type);
    if (!df)
        return dt_fail(error, DTCAST_ERR_UNKNOWN_TYPE, NO_INDEX, "unknown destination type %d",
                       (int)dst_type);
    st = check_options(opts, error);
    if (st != DTCAST_OK)
        return st;
    if (sf->tc == DT_TC_COMPLEX && df->tc != DT_TC_COMPLEX && df->tc != DT_TC_STRING &&
        !opts->discard_imaginary)
        return dt_fail(error, DTCAST_ERR_COMPLEX_TO_REAL, NO_INDEX,
                       "%s -> %s would discard the imaginary part (set discard_imaginary)",
                       sf->name, df->name);
    size_t src_bytes, dst_bytes;
    if (!dt_format_bytes(sf, count, &src_bytes) || !dt_format_bytes(df, count, &dst_bytes))
        return dt_fail(error, DTCAST_ERR_SIZE_OVERFLOW, NO_INDEX,
                       "%zu elements of %s -> %s do not fit in memory", count, sf->name, df->name);
    if (count == 0)
        return DTCAST_OK;
    if (!src)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX, "source buffer is NULL");
    if (!dst)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX, "destination buffer is NULL");
    if (!overlap_is_safe(dst, dst_bytes, df, src, src_bytes, sf))
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX,
                       "source and destination overlap (only dst == src with a destination "
                       "element no wider than the source is allowed)");

    if (df->tc == DT_TC_STRING)
        return convert_to_strings(dst, src, sf, count, opts, error);
    if (sf->tc == DT_TC_STRING && opts->round == DTCAST_ROUND_STOCHASTIC && df->tc != DT_TC_BOOL)
        return stochastic_from_text(error);
    if (sf->tc == DT_TC_STRING)
        return convert_from_strings(dst, df, src, count, dst_bytes, opts, error);
    convert_numbers(dst, df, src, sf, count, opts);
    return DTCAST_OK;
}

/* ---- single elements with caller-owned text ------------------------------------------------ */

dtcast_status dtcast_format_element(char *buf, size_t size, const void *src, dtcast_type src_type,
                                    size_t index, const dtcast_options *opts, dtcast_error *error)
{
    dtcast_options o;
    dtcast_status st = dt_options_read(opts, &o, error);
    if (st != DTCAST_OK)
        return st;
    opts = &o;
    const dt_format *sf = dt_format_in(src_type, opts);
    if (!sf)
        return dt_fail(error, DTCAST_ERR_UNKNOWN_TYPE, NO_INDEX, "unknown type %d", (int)src_type);
    if (!buf || !src || size == 0)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, index, "NULL or empty buffer");
    if (sf->tc == DT_TC_STRING) {
        const char *s = ((const char *const *)src)[index];
        if (!s || strlen(s) >= size)
            return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, index,
                           "string element %zu is NULL or longer than the buffer", index);
        memcpy(buf, s, strlen(s) + 1);
        return DTCAST_OK;
    }
    string_source ss;
    string_source_init(&ss, sf, opts->string_style);
    char tmp[DTCAST_FORMAT_MAX];
    char *out = size >= DTCAST_FORMAT_MAX ? buf : tmp; /* straight into a large enough buf */
    const size_t n = format_element(out, &ss, src, index);
    if (n == 0 || n >= size)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, index,
                       "buffer of %zu bytes is too small for element %zu", size, index);
    if (out != buf)
        memcpy(buf, tmp, n + 1);
    return DTCAST_OK;
}

dtcast_status dtcast_parse_element(void *dst, dtcast_type dst_type, size_t index, const char *text,
                                   const dtcast_options *opts, dtcast_error *error)
{
    dtcast_options o;
    dtcast_status st = dt_options_read(opts, &o, error);
    if (st != DTCAST_OK)
        return st;
    opts = &o;
    const dt_format *df = dt_format_of(dst_type);
    if (!df)
        return dt_fail(error, DTCAST_ERR_UNKNOWN_TYPE, NO_INDEX, "unknown type %d", (int)dst_type);
    if (df->tc == DT_TC_STRING)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, index,
                       "parse into a string element: use dtcast_convert");
    if (!dst || !text)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, index, "NULL buffer or text");
    st = check_options(opts, error);
    if (st != DTCAST_OK)
        return st;
    if (opts->round == DTCAST_ROUND_STOCHASTIC && df->tc != DT_TC_BOOL)
        return stochastic_from_text(error);
    if (df->tc == DT_TC_FLOAT && df->stride_bits >= 16) { /* the common case: a code, one store */
        dt_rules r;
        dt_rules_for(df, opts, &r);
        uint64_t code;
        if (!dt_text_parse_to_code(text, df, &r, &code))
            return bad_string(error, index, text);
        string_target t = {.df = df, .store_bytes = df->stride_bits / 8};
        store_code(&t, dst, index, code);
        return DTCAST_OK;
    }
    if (opts->float6_packed && dt_format_in(dst_type, opts) != df) {
        /* packed float6: the code parsed into a byte, then stored in the element's 6 bits */
        uint8_t code = 0;
        string_target t;
        string_target_init(&t, df, opts, error);
        st = parse_into(&code, &t, 0, text);
        if (st == DTCAST_OK)
            dt_store(dt_format_in(dst_type, opts), dst, index, code);
        return st;
    }
    string_target t;
    string_target_init(&t, df, opts, error);
    /* Parse into a scratch element first so that a failure leaves dst untouched. */
    uint8_t scratch[16] = {0};
    const size_t bits = (size_t)df->stride_bits;
    const size_t sub_index = bits < 8 ? index % (8 / bits) : 0;
    if (bits < 8)
        scratch[0] = ((const uint8_t *)dst)[index / (8 / bits)];
    st = parse_into(scratch, &t, sub_index, text);
    if (st != DTCAST_OK)
        return st;
    if (bits < 8)
        ((uint8_t *)dst)[index / (8 / bits)] = scratch[0];
    else
        memcpy((uint8_t *)dst + index * (bits / 8), scratch, bits / 8);
    return DTCAST_OK;
}
