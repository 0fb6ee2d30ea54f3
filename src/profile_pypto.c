/* Ascend PyPTO pypto.cast: the supported pairs, CastMode defaults and silent fallbacks,
 * saturating integer targets and shape limits. Source: pypto.cast's documentation, as
 * docs/pypto.md describes it ("Types and pairs", "Modes", "Results", "Shapes"). */
#include "internal.h"

#include <string.h>

#define NO_INDEX ((size_t)-1)

enum { F32, F16, BF16, I8, U8, I16, I32, I64, NPYPTO };

static int pypto_index(dtcast_type t)
{
    switch (t) {
    case DTCAST_FLOAT32: return F32;
    case DTCAST_FLOAT16: return F16;
    case DTCAST_BFLOAT16: return BF16;
    case DTCAST_INT8: return I8;
    case DTCAST_UINT8: return U8;
    case DTCAST_INT16: return I16;
    case DTCAST_INT32: return I32;
    case DTCAST_INT64: return I64;
    default: return -1;
    }
}

/* What the hardware offers for a pair. */
enum offer {
    NO = 0,    /* not supported */
    EXACT,     /* widening: every value is exact, the mode is ignored */
    ROUNDS,    /* rne, round, floor, ceil, trunc */
    ROUNDS_ODD /* the five and odd (float32 -> float16 only) */
};

/* offers[src][dst], transcribed from the document's list of conversions (约束说明 2). */
static const unsigned char offers[NPYPTO][NPYPTO] = {
    /*          F32    F16         BF16    I8      U8      I16     I32     I64   */
    [F32]  = {EXACT, ROUNDS_ODD, ROUNDS, NO,     NO,     ROUNDS, ROUNDS, ROUNDS},
    [F16]  = {EXACT, EXACT,      NO,     ROUNDS, ROUNDS, ROUNDS, ROUNDS, NO},
    [BF16] = {EXACT, NO,         EXACT,  NO,     NO,     NO,     ROUNDS, NO},
    [I8]   = {NO,    EXACT,      NO,     EXACT,  NO,     NO,     NO,     NO},
    [U8]   = {NO,    EXACT,      NO,     NO,     EXACT,  NO,     NO,     NO},
    [I16]  = {EXACT, ROUNDS,     NO,     NO,     NO,     EXACT,  NO,     NO},
    [I32]  = {ROUNDS, NO,        NO,     NO,     NO,     ROUNDS, EXACT,  EXACT},
    [I64]  = {ROUNDS, NO,        NO,     NO,     NO,     NO,     ROUNDS, EXACT},
};

static const char *const mode_names[] = {"CAST_NONE",  "CAST_RINT",  "CAST_ROUND", "CAST_FLOOR",
                                         "CAST_CEIL",  "CAST_TRUNC", "CAST_ODD"};

const char *dtcast_pypto_mode_name(dtcast_pypto_mode mode)
{
    if ((unsigned)mode >= sizeof mode_names / sizeof mode_names[0])
        return NULL;
    return mode_names[mode];
}

dtcast_status dtcast_pypto_mode_from_name(const char *name, dtcast_pypto_mode *mode,
                                         dtcast_error *error)
{
    if (!name || !mode)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX, "CastMode: NULL %s",
                       name ? "mode" : "name");
    const char *bare = strncmp(name, "CastMode.", 9) == 0 ? name + 9 : name;
    for (unsigned i = 0; i < sizeof mode_names / sizeof mode_names[0]; i++)
        if (strcmp(bare, mode_names[i]) == 0 || strcmp(bare, mode_names[i] + 5) == 0) {
            *mode = (dtcast_pypto_mode)i;
            return DTCAST_OK;
        }
    return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX,
                   "unknown CastMode \"%.60s\" (CAST_NONE, CAST_RINT, CAST_ROUND, CAST_FLOOR, "
                   "CAST_CEIL, CAST_TRUNC, CAST_ODD)",
                   name);
}

static bool is_float(dtcast_type t)
{
    return t == DTCAST_FLOAT32 || t == DTCAST_FLOAT16 || t == DTCAST_BFLOAT16;
}

static dtcast_round round_of_mode(dtcast_pypto_mode m)
{
    switch (m) {
    case DTCAST_CAST_RINT: return DTCAST_ROUND_RNE;
    case DTCAST_CAST_ROUND: return DTCAST_ROUND_RNA;
    case DTCAST_CAST_FLOOR: return DTCAST_ROUND_FLOOR;
    case DTCAST_CAST_CEIL: return DTCAST_ROUND_CEIL;
    case DTCAST_CAST_TRUNC: return DTCAST_ROUND_TRUNC;
    case DTCAST_CAST_ODD: return DTCAST_ROUND_ODD;
    default: return DTCAST_ROUND_DEFAULT;
    }
}

dtcast_status dtcast_pypto_options(dtcast_options *out, dtcast_type dst_type, dtcast_type src_type,
                                   dtcast_pypto_mode mode, const dtcast_options *base,
                                   dtcast_error *error)
{
    dtcast_options o;
    const dtcast_status st = dt_options_read(base, &o, error);
    if (st != DTCAST_OK)
        return st;
    if (!out)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX, "pypto.cast: NULL options");
    if ((unsigned)mode > DTCAST_CAST_ODD)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX,
                       "pypto.cast: CastMode %d is not a mode", (int)mode);
    const int s = pypto_index(src_type), d = pypto_index(dst_type);
    const char *sn = dtcast_type_name(src_type), *dn = dtcast_type_name(dst_type);
    if (s < 0 || d < 0) {
        const bool bad_src = s < 0;
        const char *n = bad_src ? sn : dn;
        return dt_fail(error, n ? DTCAST_ERR_UNSUPPORTED : DTCAST_ERR_UNKNOWN_TYPE, NO_INDEX,
                       "pypto.cast does not take %s (%s); it takes float32, float16, bfloat16, "
                       "int8, uint8, int16, int32, int64",
                       n ? n : "an unknown type", bad_src ? "input" : "dtype");
    }
    const enum offer offer = (enum offer)offers[s][d];
    if (offer == NO)
        return dt_fail(error, DTCAST_ERR_UNSUPPORTED, NO_INDEX,
                       "pypto.cast does not support %s -> %s", sn, dn);

    /* CAST_NONE: float -> integer truncates, everything else rounds to nearest even. A mode
     * the hardware does not offer for the pair silently falls back to that default. */
    dtcast_round r = round_of_mode(mode);
    if (offer == EXACT || (r == DTCAST_ROUND_ODD && offer != ROUNDS_ODD))
        r = DTCAST_ROUND_DEFAULT;
    if (r == DTCAST_ROUND_DEFAULT)
        r = (is_float(src_type) && !is_float(dst_type)) ? DTCAST_ROUND_TRUNC : DTCAST_ROUND_RNE;
    o.round = r;
    o.int_overflow = DTCAST_INT_OVERFLOW_SATURATE; /* 130.0 fp16 -> int8 127; NaN -> 0 */
    o.float_overflow = DTCAST_FLOAT_OVERFLOW_IEEE;
    o.via_float32 = false;
    *out = o;
    return DTCAST_OK;
}

dtcast_status dtcast_pypto_check_shape(const int64_t *shape, int ndim, dtcast_error *error)
{
    if (ndim < 1 || ndim > 4)
        return dt_fail(error, DTCAST_ERR_BAD_SHAPE, NO_INDEX,
                       "pypto.cast takes tensors of 1 to 4 dimensions, not %d", ndim);
    if (!shape)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, NO_INDEX, "pypto.cast: NULL shape");
    int64_t count = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] <= 0)
            return dt_fail(error, DTCAST_ERR_BAD_SHAPE, NO_INDEX,
                           "pypto.cast: dimension %d is %lld; empty tensors are not supported", i,
                           (long long)shape[i]);
        if (shape[i] > INT32_MAX || count > INT32_MAX / shape[i])
            return dt_fail(error, DTCAST_ERR_BAD_SHAPE, NO_INDEX,
                           "pypto.cast: more than INT32_MAX (2147483647) elements");
        count *= shape[i];
    }
    return DTCAST_OK;
}

dtcast_status dtcast_pypto_cast(void *dst, dtcast_type dst_type, const void *src,
                                dtcast_type src_type, const int64_t *shape, int ndim,
                                dtcast_pypto_mode mode, const dtcast_options *opts,
                                dtcast_error *error)
{
    dtcast_status st = dtcast_pypto_check_shape(shape, ndim, error);
    if (st != DTCAST_OK)
        return st;
    size_t count = 1;
    for (int i = 0; i < ndim; i++)
        count *= (size_t)shape[i]; /* at most INT32_MAX, checked above */
    dtcast_options o;
    st = dtcast_pypto_options(&o, dst_type, src_type, mode, opts, error);
    if (st != DTCAST_OK)
        return st;
    return dtcast_convert(dst, dst_type, src, src_type, count, &o, error);
}
