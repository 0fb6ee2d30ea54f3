/* The reference path: decode any code into its exact value, round that value once into any
 * format. Every conversion in dtcast is defined by these functions; every fast path is checked
 * against them. Slow is fine here; obviously right is not negotiable. */
#include "internal.h"
#include "round.h"

#include <string.h>

static uint64_t low_mask(int bits) { return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1; }

/* Number of significant bits: 0 for 0, 64 for 2^63 and above. */
static int bit_length(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return x ? 64 - __builtin_clzll(x) : 0;
#else
    int n = 0;
    for (; x; x >>= 1)
        n++;
    return n;
#endif
}

/* ---- decode ------------------------------------------------------------------------------ */

static void set_finite(dt_value *v, bool neg, uint64_t sig, int32_t exp)
{
    v->cls = DT_FINITE;
    v->neg = neg;
    v->sig = sig;
    v->exp = exp;
}

static void decode_float(const dt_format *f, uint64_t code, dt_value *v)
{
    const uint64_t sign = dt_float_has_sign(f) ? UINT64_C(1) << (f->bits - 1) : 0;
    const uint64_t exp_ones = low_mask(f->exp_bits);
    const uint64_t man_ones = low_mask(f->man_bits);
    const bool neg = (code & sign) != 0;
    const uint64_t e = (code >> f->man_bits) & exp_ones;
    const uint64_t m = code & man_ones;

    v->neg = neg;
    switch (f->nan) {
    case DT_NAN_IEEE:
        if (e == exp_ones) {
            v->cls = m ? DT_NAN : DT_INF;
            return;
        }
        break;
    case DT_NAN_FN: /* S.1111.111 is NaN; S.1111.110 is an ordinary number */
        if (e == exp_ones && m == man_ones) {
            v->cls = DT_NAN;
            return;
        }
        break;
    case DT_NAN_FNUZ: /* the would-be -0 is the only NaN; it has no meaningful sign */
        if (code == sign) {
            v->cls = DT_NAN;
            v->neg = false;
            return;
        }
        break;
    case DT_NAN_NONE:
        break;
    }
    if (e == 0) {
        if (m == 0) {
            v->cls = DT_ZERO;
            return;
        }
        set_finite(v, neg, m, 1 - f->bias - f->man_bits); /* subnormal: 0.m * 2^(1-bias) */
        return;
    }
    /* normal: 1.m * 2^(e-bias) = (2^man + m) * 2^(e - bias - man) */
    set_finite(v, neg, m | (UINT64_C(1) << f->man_bits), (int32_t)e - f->bias - f->man_bits);
}

void dt_decode(const dt_format *f, uint64_t code, dt_value *v)
{
    memset(v, 0, sizeof *v);
    code &= low_mask(f->bits);
    switch (f->tc) {
    case DT_TC_BOOL:
        if (code)
            set_finite(v, false, 1, 0);
        else
            v->cls = DT_ZERO;
        return;
    case DT_TC_UINT:
        if (code)
            set_finite(v, false, code, 0);
        else
            v->cls = DT_ZERO;
        return;
    case DT_TC_SINT: {
        const uint64_t sign = UINT64_C(1) << (f->bits - 1);
        if (!code) {
            v->cls = DT_ZERO;
        } else if (code & sign) { /* two's complement: magnitude = 2^bits - code */
            set_finite(v, true, (~code + 1) & low_mask(f->bits), 0);
        } else {
            set_finite(v, false, code, 0);
        }
        return;
    }
    case DT_TC_E8M0: /* 2^(code - 127); 0xFF is NaN; there is no zero */
        if (code == 0xFF)
            v->cls = DT_NAN;
        else
            set_finite(v, false, 1, (int32_t)code - 127);
        return;
    case DT_TC_FLOAT:
        decode_float(f, code, v);
        return;
    default: /* complex and string are not single codes */
        v->cls = DT_NAN;
        return;
    }
}

/* ---- encode: floats ------------------------------------------------------------------------ */

static uint64_t sign_of(const dt_format *f, bool neg)
{
    return neg && dt_float_has_sign(f) ? UINT64_C(1) << (f->bits - 1) : 0;
}

static uint64_t nan_result(const dt_format *f, bool neg, const dt_rules *r)
{
    if (dt_float_has_nan(f))
        return dt_float_nan_code(f, neg);
    if (r->nan_as_max) /* the older ONNX text: NaN -> +max */
        return dt_float_max_code(f);
    /* Current ONNX data for float4e2m1: +NaN -> 0x8 (the -0 code), -NaN -> 0x0. */
    return sign_of(f, !neg);
}

static uint64_t overflow_result(const dt_format *f, bool neg, const dt_rules *r)
{
    if (r->saturate_float || (dt_mag_down(r->round, neg) && !r->overflow_any_round))
        return sign_of(f, neg) | dt_float_max_code(f);
    if (dt_float_has_inf(f))
        return dt_float_inf_code(f, neg);
    if (dt_float_has_nan(f))
        return dt_float_nan_code(f, neg);
    return sign_of(f, neg) | dt_float_max_code(f);
}

static uint64_t zero_result(const dt_format *f, bool neg)
{
    return dt_float_has_neg_zero(f) ? sign_of(f, neg) : 0;
}

/* A negative nonzero value (finite or -Inf) into a format without a sign bit: it lies below the
 * format's range [0, max], and is handled as an overflow past that end (docs/conversion.md,
 * "Unsigned floats"). Saturating, and in the modes that never move a negative value away from
 * zero (trunc, ceil, odd: as IEEE 754 gives the largest finite number on overflow there), the
 * end itself: 0. Else NaN (the format has no -Inf), before any rounding, as ml_dtypes does:
 * even a value that would round to -0 is NaN there. */
static uint64_t below_range_result(const dt_format *f, const dt_value *v, const dt_rules *r)
{
    if (r->saturate_float ||
        (v->cls == DT_FINITE && dt_mag_down(r->round, true) && !r->overflow_any_round))
        return 0;
    return dt_float_nan_code(f, false);
}

static uint64_t encode_float(const dt_format *f, const dt_value *v, const dt_rules *r)
{
    if (v->neg && !dt_float_has_sign(f) && (v->cls == DT_FINITE || v->cls == DT_INF))
        return below_range_result(f, v, r);
    switch (v->cls) {
    case DT_NAN:
        return nan_result(f, v->neg, r);
    case DT_INF:
        if (r->saturate_float || !(dt_float_has_inf(f) || dt_float_has_nan(f)))
            return sign_of(f, v->neg) | dt_float_max_code(f);
        return dt_float_has_inf(f) ? dt_float_inf_code(f, v->neg) : dt_float_nan_code(f, v->neg);
    case DT_ZERO:
        return zero_result(f, v->neg);
    case DT_FINITE:
        break;
    }
    const int man = f->man_bits;
    const int32_t emin = 1 - f->bias;                     /* exponent of the smallest normal */
    const int32_t e = v->exp + bit_length(v->sig) - 1;    /* 2^e <= |v| < 2^(e+1) */
    int32_t q = (e < emin ? emin : e) - man;              /* exponent of one unit in the last place */
    const int32_t shift = q - v->exp;                     /* bits of sig below that unit */

    uint64_t m;
    if (shift <= 0) /* exact: sig << -shift < 2^(man+1), see the bound on e */
        m = v->sig << -shift;
    else
        m = dt_shift_right_round_r(v->sig, v->sticky, shift, r->round, v->neg, r->rand);
    if (m == 0)
        return zero_result(f, v->neg); /* rounded below the smallest subnormal */
    if (m >> (man + 1)) {             /* rounding carried into a new binade: m == 2^(man+1) */
        m >>= 1;
        q++;
    }

    uint64_t biased_exp, mant;
    if (m >> man) { /* normal: the leading 1 is implicit */
        int64_t be = (int64_t)q + man + f->bias;
        if (be > (int64_t)low_mask(f->exp_bits))
            return overflow_result(f, v->neg, r);
        biased_exp = (uint64_t)be;
        mant = m & low_mask(man);
    } else { /* subnormal: q is the subnormal quantum, exponent field 0 */
        biased_exp = 0;
        mant = m;
    }
    const uint64_t magnitude = (biased_exp << man) | mant;
    if (magnitude > dt_float_max_code(f)) /* the codes above max are Inf/NaN or do not exist */
        return overflow_result(f, v->neg, r);
    return sign_of(f, v->neg) | magnitude;
}

/* float8e8m0: unsigned powers of two 2^-127 .. 2^127, 0xFF NaN, no zero. The sign is ignored. */
static uint64_t encode_e8m0(const dt_value *v, const dt_rules *r)
{
    switch (v->cls) {
    case DT_NAN:
    case DT_INF:
        return 0xFF;
    case DT_ZERO:
        return 0x00;
    case DT_FINITE:
        break;
    }
    int32_t e = v->exp + bit_length(v->sig) - 1; /* 2^e <= |v| < 2^(e+1) */
    if (e < -127)
        return 0x00; /* below the smallest value: the format has nothing smaller */
    const int shift = bit_length(v->sig) - 1;     /* keep one significant bit */
    if (shift > 0 || v->sticky) {
        uint64_t m = shift > 0 ? dt_shift_right_round_r(v->sig, v->sticky, shift, r->round,
                                                        false, r->rand)
                               : v->sig;
        if (m == 2) /* rounded up to the next power of two */
            e++;
    }
    if (e > 127) {
        if (r->saturate_float || (dt_mag_down(r->round, false) && !r->overflow_any_round))
            return 0xFE;
        return 0xFF;
    }
    return (uint64_t)(e + 127);
}

/* ---- encode: integers ---------------------------------------------------------------------- */

void dt_int_parts_of(const dt_value *v, dt_int_parts *p)
{
    memset(p, 0, sizeof *p);
    p->cls = v->cls;
    p->neg = v->neg;
    p->frac = DT_FRAC_ZERO;
    if (v->cls != DT_FINITE)
        return;
    if (v->exp >= 0) { /* an integer; keep it modulo 2^64 and note whether it reached 2^64 */
        if (v->exp >= 64) {
            p->low = 0;
            p->huge = true;
        } else {
            p->low = v->sig << v->exp;
            p->huge = v->exp > 0 && (v->sig >> (64 - v->exp)) != 0;
        }
        return;
    }
    const int k = -v->exp; /* fraction bits */
    bool half, rest;
    if (k > 64) {
        p->low = 0;
        half = false;
        rest = v->sig != 0;
    } else if (k == 64) {
        p->low = 0;
        half = (v->sig >> 63) != 0;
        rest = (v->sig << 1) != 0;
    } else {
        p->low = v->sig >> k;
        half = ((v->sig >> (k - 1)) & 1) != 0;
        rest = (v->sig & low_mask(k - 1)) != 0;
    }
    rest = rest || v->sticky;
    p->frac32 = dt_dropped32(v->sig, k);
    p->frac = half ? (rest ? DT_FRAC_ABOVE : DT_FRAC_HALF) : (rest ? DT_FRAC_BELOW : DT_FRAC_ZERO);
}

uint64_t dt_encode_int_parts(const dt_format *f, const dt_int_parts *p, const dt_rules *r)
{
    if (f->tc == DT_TC_BOOL) /* nonzero, NaN included, is true */
        return p->cls != DT_ZERO;
    const bool is_signed = f->tc == DT_TC_SINT;
    switch (p->cls) {
    case DT_NAN:
    case DT_ZERO:
        return 0;
    case DT_INF: /* wraps to 0, saturates to the end of the range */
        return r->saturate_int ? dt_int_pack(0, true, p->neg, f->bits, is_signed, true) : 0;
    case DT_FINITE:
        break;
    }
    uint64_t mag = p->low;
    bool huge = p->huge;
    const bool half = p->frac == DT_FRAC_HALF || p->frac == DT_FRAC_ABOVE;
    const bool sticky = p->frac == DT_FRAC_BELOW || p->frac == DT_FRAC_ABOVE;
    const bool up = r->round == DTCAST_ROUND_STOCHASTIC
                        ? r->rand < p->frac32
                        : dt_round_up(r->round, p->neg, mag & 1, half, sticky);
    if (up) {
        mag++;
        if (mag == 0)
            huge = true; /* carried out of 64 bits */
    }
    return dt_int_pack(mag, huge, p->neg, f->bits, is_signed, r->saturate_int);
}

/* ---- encode: dispatch -------------------------------------------------------------------- */

uint64_t dt_encode(const dt_format *f, const dt_value *v, const dt_rules *r)
{
    switch (f->tc) {
    case DT_TC_FLOAT:
        return encode_float(f, v, r);
    case DT_TC_E8M0:
        return encode_e8m0(v, r);
    case DT_TC_BOOL:
        return v->cls != DT_ZERO;
    case DT_TC_UINT:
    case DT_TC_SINT: {
        dt_int_parts p;
        dt_int_parts_of(v, &p);
        return dt_encode_int_parts(f, &p, r);
    }
    default:
        return 0;
    }
}

void dt_rules_for(const dt_format *target, const dtcast_options *opts, dt_rules *r)
{
    dtcast_options defaults;
    if (!opts) {
        dtcast_options_init(&defaults);
        opts = &defaults;
    }
    const bool integer = target->tc == DT_TC_UINT || target->tc == DT_TC_SINT ||
                         target->tc == DT_TC_BOOL;
    r->round = opts->round;
    if (r->round == DTCAST_ROUND_DEFAULT)
        r->round = integer ? DTCAST_ROUND_TRUNC : DTCAST_ROUND_RNE;
    r->saturate_float = opts->float_overflow == DTCAST_FLOAT_OVERFLOW_SATURATE;
    r->saturate_int = opts->int_overflow == DTCAST_INT_OVERFLOW_SATURATE;
    r->nan_as_max = opts->float4_nan_as_max != 0;
    const bool stochastic = r->round == DTCAST_ROUND_STOCHASTIC; /* else they stay 0 */
    r->seed = stochastic ? opts->seed : 0;
    r->offset = stochastic ? opts->element_offset : 0;
    r->rand = 0;
    /* only where it changes a result: float8e8m0 ignores the sign, other floats round some
     * magnitude down in every directed mode */
    const bool directed = r->round != DTCAST_ROUND_RNE && r->round != DTCAST_ROUND_RNA &&
                          r->round != DTCAST_ROUND_STOCHASTIC; /* never rounds down by rule */
    r->overflow_any_round = opts->float_overflow == DTCAST_FLOAT_OVERFLOW_INF &&
                            (target->tc == DT_TC_E8M0 ? dt_mag_down(r->round, false)
                                                      : target->tc == DT_TC_FLOAT && directed);
}

/* ---- element access ------------------------------------------------------------------------ */

uint64_t dt_load(const dt_format *f, const void *base, size_t index)
{
    const uint8_t *p = base;
    const int stride = f->stride_bits;
    if (stride == 6) { /* packed float6: bits 6i .. 6i+5 of a stream from bit 0 of byte 0 */
        const size_t bit = index / 4 * 24 + index % 4 * 6; /* 4 elements per 3 bytes */
        const unsigned shift = (unsigned)(bit % 8);
        unsigned v = p[bit / 8] >> shift;
        if (shift > 2) /* the element runs into the next byte */
            v |= (unsigned)p[bit / 8 + 1] << (8 - shift);
        return v & 63u;
    }
    if (stride < 8) { /* sub-byte: element k of a byte sits at bit k*stride */
        const size_t per_byte = (size_t)(8 / stride);
        const unsigned shift = (unsigned)(index % per_byte) * (unsigned)stride;
        return (uint64_t)(p[index / per_byte] >> shift) & low_mask(stride);
    }
    const size_t size = (size_t)stride / 8;
    const uint8_t *e = p + index * size;
    uint64_t code = 0;
    for (size_t i = 0; i < size && i < 8; i++) /* little-endian, any alignment */
        code |= (uint64_t)e[i] << (8 * i);
    return code & low_mask(f->bits);
}

void dt_store(const dt_format *f, void *base, size_t index, uint64_t code)
{
    uint8_t *p = base;
    const int stride = f->stride_bits;
    if (stride == 6) { /* packed float6: only the element's own bits change */
        const size_t bit = index / 4 * 24 + index % 4 * 6;
        const unsigned shift = (unsigned)(bit % 8), v = (unsigned)code & 63u;
        uint8_t *b = &p[bit / 8];
        *b = (uint8_t)((*b & ~(63u << shift)) | v << shift); /* the bits that fit in this byte */
        if (shift > 2) /* the rest: the low shift - 2 bits of the next byte */
            b[1] = (uint8_t)((b[1] & ~(63u >> (8 - shift))) | v >> (8 - shift));
        return;
    }
    if (stride < 8) {
        const size_t per_byte = (size_t)(8 / stride);
        const unsigned shift = (unsigned)(index % per_byte) * (unsigned)stride;
        uint8_t *b = &p[index / per_byte];
        *b = (uint8_t)((*b & ~(low_mask(stride) << shift)) | ((code & low_mask(stride)) << shift));
        return;
    }
    const size_t size = (size_t)stride / 8;
    uint8_t *e = p + index * size;
    for (size_t i = 0; i < size && i < 8; i++)
        e[i] = (uint8_t)(code >> (8 * i));
}
