/* The exhaustive float32 sweep: every one of the 2^32 float32 bit patterns converted to every
 * type of at most 16 bits, in every rounding mode and overflow policy, through dtcast_convert
 * (the fast paths when src/kernels has them), and compared with an independent expectation.
 *
 *   sweep_f32 [--quick] [--threads N] [--only NAME]
 *
 * --quick converts every 4096th pattern (2^20 per combination) for CI. Prints "PASS name" /
 * "FAIL name: why" per target, the time per target and the total.
 *
 * The argument (RELIABILITY.md has the long form):
 *  - Floats (float16, bfloat16, float8 x8, float6 x2, float4): for one sign the float32 bit
 *    patterns are ordered like their values, and a correctly rounded conversion is a monotone
 *    step function of the value. Its steps are fixed by the target's representable values (found
 *    here by decoding every target code from the format parameters, cross-checked against the
 *    library's own decode) and the mode: the midpoint of two neighbours for the nearest modes
 *    (a tie goes to the even neighbour / away from zero), the upper neighbour for round-down,
 *    just above the lower neighbour for round-up, and for round-to-odd whichever neighbour is
 *    odd. One step past the largest finite value stands for overflow, resolved by the policy.
 *    So the expectation over 2^31 patterns of one sign is a list of at most ~2^16 segments
 *    [first pattern, code), and the check of a chunk of outputs is a constant compare per
 *    segment. NaN, Inf and zero follow the rules in dtcast.h.
 *  - Integers (int16 .. uint1): a per-element computation from the float32 bits: the integer
 *    part and the fraction's relation to one half decide the rounding, then wrap modulo 2^bits
 *    or saturate. bool: zero is false, everything else (NaN too) true.
 *  - The reference path (dt_decode / dt_encode, what every fast path must equal) is run on every
 *    segment boundary +-2 patterns, the half-integers +-2 patterns for integer targets, the
 *    specials, and a random sample, and compared with the same expectation.
 */
#include "internal.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNK ((size_t)1 << 22)
#define MAXFAIL 5

/* ---- the targets --------------------------------------------------------------------------- */

enum kind { K_FLOAT, K_E8M0, K_INT, K_BOOL };
enum mm { MM_NEAR_EVEN, MM_NEAR_AWAY, MM_DOWN, MM_UP, MM_ODD, MM_COUNT };

typedef struct segs {
    uint32_t *start; /* first magnitude pattern of each segment, increasing; last = 2^31 */
    uint32_t *idx;   /* index into the value list, or IDX_OVER / IDX_INF / IDX_NAN */
    size_t n;
} segs;

#define IDX_OVER 0xFFFFFF00u
#define IDX_INF 0xFFFFFF01u
#define IDX_NAN 0xFFFFFF02u
#define IDX_HUGE 0xFFFFFF03u /* integers: |x| >= 2^40, a multiple of 2^40 */
#define PERELEM 0xFFFFFFFFu  /* integers that wrap: the expectation is computed per element */

typedef struct target {
    dtcast_type type;
    const dt_format *f;
    dtcast_info info;
    enum kind kind;
    int bits, stride;
    /* floats: the non-negative finite values in increasing order and their codes */
    size_t nvals;
    double *vals;
    uint32_t *codes;
    double virt;  /* one step past the largest finite value: overflow */
    int virt_odd; /* parity of that step's code */
    uint32_t sign_bit, max_code;
    segs seg[MM_COUNT];
} target;

typedef struct combo {
    target *t;
    dtcast_round round;
    int saturate; /* float or integer policy, as the target's kind uses */
    char name[96];
    /* floats: the resolved code of every segment, per sign */
    uint32_t *pos_code, *neg_code; /* PERELEM: compute per element */
    const segs *pos, *neg;
    /* results */
    double convert_s, check_s;
    uint64_t values, failures, ref_checked, ref_failures;
    char first_failure[200];
    pthread_mutex_t lock;
} combo;

static const dtcast_type target_types[] = {
    DTCAST_FLOAT16,       DTCAST_BFLOAT16,      DTCAST_FLOAT8E4M3FN, DTCAST_FLOAT8E4M3FNUZ,
    DTCAST_FLOAT8E5M2,    DTCAST_FLOAT8E5M2FNUZ, DTCAST_FLOAT8E4M3,  DTCAST_FLOAT8E3M4,
    DTCAST_FLOAT8E4M3B11FNUZ, DTCAST_FLOAT8E8M0, DTCAST_FLOAT6E2M3FN, DTCAST_FLOAT6E3M2FN,
    DTCAST_FLOAT4E2M1,    DTCAST_INT16,         DTCAST_UINT16,       DTCAST_INT8,
    DTCAST_UINT8,         DTCAST_INT4,          DTCAST_UINT4,        DTCAST_INT2,
    DTCAST_UINT2,         DTCAST_UINT1,         DTCAST_BOOL,
};
#define NTARGETS (sizeof target_types / sizeof target_types[0])

static const dtcast_round modes[] = {DTCAST_ROUND_RNE,   DTCAST_ROUND_RNA,   DTCAST_ROUND_FLOOR,
                                     DTCAST_ROUND_CEIL,  DTCAST_ROUND_TRUNC, DTCAST_ROUND_ODD};

static double f32_value(uint32_t p)
{
    float f;
    memcpy(&f, &p, sizeof f);
    return (double)f;
}

/* smallest non-negative finite pattern whose value is >= t (0x7F800000 when none) */
static uint32_t at_or_above(double t)
{
    if (t <= 0)
        return 0;
    if (!(t <= (double)3.4028234663852886e38))
        return 0x7F800000u;
    float f = (float)t;
    uint32_t p;
    memcpy(&p, &f, sizeof p);
    while (p < 0x7F800000u && f32_value(p) < t)
        p++;
    while (p > 0 && f32_value(p - 1) >= t)
        p--;
    return p;
}

static uint32_t above(double t)
{
    uint32_t p = at_or_above(t);
    if (p < 0x7F800000u && f32_value(p) == t)
        p++;
    return p;
}

/* The value of a non-negative float code, from the format parameters alone; returns 0 for a code
 * that is not a finite number. */
static int decode_float(const target *t, uint32_t c, double *v)
{
    const dtcast_info *in = &t->info;
    if (t->kind == K_E8M0) {
        if (c == 0xFF)
            return 0;
        *v = ldexp(1.0, (int)c - 127);
        return 1;
    }
    const uint32_t man_mask = (1u << in->mantissa_bits) - 1, exp_ones = (1u << in->exponent_bits) - 1;
    const uint32_t e = (c >> in->mantissa_bits) & exp_ones, m = c & man_mask;
    if (in->has_inf && e == exp_ones)
        return 0; /* IEEE: Inf and NaN */
    if (!in->has_inf && in->has_nan && in->has_negative_zero && e == exp_ones && m == man_mask)
        return 0; /* FN: S.1..1.1..1 */
    if (e == 0)
        *v = ldexp((double)m, 1 - in->bias - in->mantissa_bits);
    else
        *v = ldexp((double)(m | (man_mask + 1)), (int)e - in->bias - in->mantissa_bits);
    return 1;
}

static int fail_count;

static int setup_target(target *t, dtcast_type type)
{
    memset(t, 0, sizeof *t);
    t->type = type;
    t->f = dt_format_of(type);
    if (!t->f || dtcast_type_info(type, &t->info, NULL) != DTCAST_OK)
        return 0;
    t->bits = t->f->bits;
    t->stride = t->f->stride_bits;
    t->kind = t->f->tc == DT_TC_FLOAT ? K_FLOAT
              : t->f->tc == DT_TC_E8M0 ? K_E8M0
              : t->f->tc == DT_TC_BOOL ? K_BOOL
                                       : K_INT;
    if (t->kind == K_BOOL)
        return 1;
    if (t->kind == K_INT) { /* the integers 0 .. 2^bits + 1; beyond them, see resolve() */
        t->nvals = ((size_t)1 << t->bits) + 2;
        t->vals = malloc(t->nvals * sizeof *t->vals);
        t->codes = malloc(t->nvals * sizeof *t->codes);
        if (!t->vals || !t->codes)
            return 0;
        for (size_t k = 0; k < t->nvals; k++) {
            t->vals[k] = (double)k;
            t->codes[k] = (uint32_t)k;
        }
        t->virt = (double)t->nvals;
        t->virt_odd = (int)(t->nvals & 1);
        return 1;
    }
    t->sign_bit = t->kind == K_E8M0 ? 0 : 1u << (t->bits - 1);
    t->max_code = (uint32_t)t->info.max_bits;
    const uint32_t ncodes = t->kind == K_E8M0 ? 256 : t->sign_bit;
    t->vals = malloc(ncodes * sizeof *t->vals);
    t->codes = malloc(ncodes * sizeof *t->codes);
    if (!t->vals || !t->codes)
        return 0;
    int mismatches = 0;
    for (uint32_t c = 0; c < ncodes; c++) {
        double v;
        if (!decode_float(t, c, &v))
            continue;
        /* cross-check with the library's decode (code -> float64) */
        uint8_t in[2] = {(uint8_t)c, (uint8_t)(c >> 8)};
        double lib = 0;
        if (dtcast_convert(&lib, DTCAST_FLOAT64, in, type, 1, NULL, NULL) != DTCAST_OK || lib != v)
            mismatches++;
        if (t->nvals && v <= t->vals[t->nvals - 1]) {
            printf("FAIL sweep/%s/values: code 0x%x is not above its predecessor\n", t->f->name, c);
            fail_count++;
            return 0;
        }
        t->vals[t->nvals] = v;
        t->codes[t->nvals] = c;
        t->nvals++;
    }
    if (mismatches) {
        printf("FAIL sweep/%s/decode: %d codes decode differently in the library\n", t->f->name,
               mismatches);
        fail_count++;
    }
    if (t->codes[t->nvals - 1] != t->max_code || t->vals[t->nvals - 1] != t->info.max) {
        printf("FAIL sweep/%s/max: largest finite code 0x%x, info says 0x%x\n", t->f->name,
               t->codes[t->nvals - 1], t->max_code);
        fail_count++;
    }
    const double max = t->vals[t->nvals - 1], prev = t->vals[t->nvals - 2];
    t->virt = t->kind == K_E8M0 ? 2 * max : max + (max - prev);
    t->virt_odd = (int)((t->max_code + 1) & 1);
    return 1;
}

/* Parity of the neighbours: the last significand bit at the precision of the rounding. For the
 * binary formats that is the code's low bit; for e8m0 every value has significand 1 (odd) and the
 * next power of two is 10 in that precision (even). */
static int is_odd(const target *t, size_t k, int upper)
{
    if (t->kind == K_E8M0)
        return !upper; /* of a pair of neighbours, the lower is odd, the upper even */
    return k < t->nvals ? (int)(t->codes[k] & 1) : t->virt_odd;
}

static int build_segments(target *t)
{
    for (int mm = 0; mm < MM_COUNT; mm++) {
        segs *s = &t->seg[mm];
        s->start = malloc((t->nvals + 6) * sizeof *s->start);
        s->idx = malloc((t->nvals + 6) * sizeof *s->idx);
        if (!s->start || !s->idx)
            return 0;
        size_t n = 0;
        if (t->kind == K_BOOL) { /* zero is false; everything else, NaN too, is true */
            s->start[0] = 0, s->idx[0] = 0;
            s->start[1] = 1, s->idx[1] = 1;
            s->start[2] = 0x7F800000u, s->idx[2] = IDX_INF;
            s->start[3] = 0x7F800001u, s->idx[3] = IDX_NAN;
            s->start[4] = 0x80000000u, s->idx[4] = IDX_NAN;
            s->n = 4;
            continue;
        }
        s->start[n] = 0;
        s->idx[n++] = 0;
        for (size_t k = 0; k < t->nvals; k++) {
            const double a = t->vals[k], b = k + 1 < t->nvals ? t->vals[k + 1] : t->virt;
            uint32_t start;
            switch (mm) {
            case MM_NEAR_EVEN:
            case MM_NEAR_AWAY: {
                const double mid = (a + b) / 2; /* exact: at most 26 significant bits */
                const int tie_up = mm == MM_NEAR_AWAY || !is_odd(t, k + 1, 1);
                start = tie_up ? at_or_above(mid) : above(mid);
                break;
            }
            case MM_DOWN:
                start = at_or_above(b);
                break;
            case MM_UP:
                start = above(a);
                break;
            default: /* odd: the exact values stay, everything between goes to the odd one */
                start = is_odd(t, k, 0) ? at_or_above(b) : above(a);
                break;
            }
            if (start >= 0x7F800000u)
                break;
            s->start[n] = start;
            s->idx[n++] = k + 1 < t->nvals ? (uint32_t)(k + 1) : IDX_OVER;
        }
        if (t->kind == K_INT) { /* |x| >= 2^40: an integer multiple of 2^40 */
            s->start[n] = at_or_above(ldexp(1.0, 40));
            s->idx[n++] = IDX_HUGE;
        }
        s->start[n] = 0x7F800000u;
        s->idx[n++] = IDX_INF;
        s->start[n] = 0x7F800001u;
        s->idx[n++] = IDX_NAN;
        s->start[n] = 0x80000000u; /* sentinel */
        s->idx[n] = IDX_NAN;
        s->n = n;
    }
    return 1;
}

/* ---- the rules of dtcast.h for one float combination ---------------------------------------- */

static int rounds_down(enum mm mm) { return mm == MM_DOWN || mm == MM_ODD; }

static uint32_t resolve(const combo *c, uint32_t idx, int neg, enum mm mm)
{
    const target *t = c->t;
    const dtcast_info *in = &t->info;
    const uint32_t sign = neg ? t->sign_bit : 0;
    if (t->kind == K_BOOL)
        return idx == 0 ? 0 : 1;
    if (t->kind == K_INT) {
        const uint32_t mask = (uint32_t)((1u << t->bits) - 1);
        const int is_signed = in->int_min < 0;
        const uint32_t maxv = is_signed ? mask >> 1 : mask, min_code = is_signed ? (mask >> 1) + 1 : 0;
        const uint32_t sat = neg ? min_code : maxv; /* the clamp of anything out of range */
        switch (idx) {
        case IDX_NAN:
            return 0;
        case IDX_INF:
            return c->saturate ? sat : 0;
        case IDX_HUGE:
            return c->saturate ? sat : 0;
        case IDX_OVER: /* beyond 2^bits + 1: out of range, or wraps differently per integer */
            return c->saturate ? sat : PERELEM;
        default: {
            const uint64_t r = t->codes[idx];
            if (!c->saturate)
                return (uint32_t)((neg ? 0 - r : r) & mask);
            if (!neg)
                return r > maxv ? maxv : (uint32_t)r;
            if (!is_signed)
                return 0;
            return r > min_code ? min_code : (uint32_t)((0 - r) & mask);
        }
        }
    }
    if (t->kind == K_E8M0) { /* no sign: the magnitude decides; NaN and Inf are 0xFF */
        if (idx == IDX_NAN || idx == IDX_INF)
            return 0xFF;
        if (idx == IDX_OVER)
            return (c->saturate || rounds_down(mm)) ? 0xFE : 0xFF;
        return t->codes[idx];
    }
    const int fnuz = in->has_nan && !in->has_negative_zero;
    const uint32_t nan = fnuz ? t->sign_bit : (uint32_t)in->nan_bits | sign;
    switch (idx) {
    case IDX_NAN:
        if (in->has_nan)
            return nan;
        return sign ? 0 : t->sign_bit; /* NaN-less: +NaN -> the -0 code, -NaN -> 0 */
    case IDX_INF:
        if (c->saturate || (!in->has_inf && !in->has_nan))
            return t->max_code | sign;
        return in->has_inf ? ((uint32_t)in->inf_bits | sign) : nan;
    case IDX_OVER:
        if (c->saturate || rounds_down(mm) || (!in->has_inf && !in->has_nan))
            return t->max_code | sign;
        return in->has_inf ? ((uint32_t)in->inf_bits | sign) : nan;
    case 0:
        return in->has_negative_zero ? sign : 0;
    default:
        return t->codes[idx] | sign;
    }
}

static enum mm magnitude_mode(dtcast_round r, int neg)
{
    switch (r) {
    case DTCAST_ROUND_RNE: return MM_NEAR_EVEN;
    case DTCAST_ROUND_RNA: return MM_NEAR_AWAY;
    case DTCAST_ROUND_FLOOR: return neg ? MM_UP : MM_DOWN;
    case DTCAST_ROUND_CEIL: return neg ? MM_DOWN : MM_UP;
    case DTCAST_ROUND_TRUNC: return MM_DOWN;
    default: return MM_ODD;
    }
}

static int setup_combo_codes(combo *c)
{
    target *t = c->t;
    const enum mm pm = magnitude_mode(c->round, 0);
    /* e8m0 ignores the sign, the rounding of -x is that of x */
    const enum mm nm = t->kind == K_E8M0 ? pm : magnitude_mode(c->round, 1);
    c->pos = &t->seg[pm];
    c->neg = &t->seg[nm];
    c->pos_code = malloc((c->pos->n + 1) * sizeof *c->pos_code);
    c->neg_code = malloc((c->neg->n + 1) * sizeof *c->neg_code);
    if (!c->pos_code || !c->neg_code)
        return 0;
    for (size_t k = 0; k <= c->pos->n; k++)
        c->pos_code[k] = resolve(c, c->pos->idx[k], 0, pm);
    for (size_t k = 0; k <= c->neg->n; k++)
        c->neg_code[k] = resolve(c, c->neg->idx[k], 1, nm);
    return 1;
}

/* ---- integers: per element ------------------------------------------------------------------ */

static uint32_t expect_int(const combo *c, uint32_t p)
{
    const target *t = c->t;
    const int neg = (int)(p >> 31);
    const uint32_t ex = (p >> 23) & 0xFF, man = p & 0x7FFFFF;
    if (t->kind == K_BOOL)
        return (p & 0x7FFFFFFFu) != 0;
    const int bits = t->bits;
    const uint32_t mask = (uint32_t)((1u << bits) - 1);
    const int is_signed = t->info.int_min < 0;
    const uint32_t maxv = is_signed ? mask >> 1 : mask, min_code = is_signed ? (mask >> 1) + 1 : 0;
    if (ex == 0xFF) {
        if (man || !c->saturate)
            return 0; /* NaN always, Inf when wrapping */
        return neg ? min_code : maxv;
    }
    const uint64_t sig = ex ? (man | 0x800000u) : man;
    const int e2 = (ex ? (int)ex : 1) - 150; /* value = sig * 2^e2 */
    uint64_t ip;    /* integer part of |x|, modulo 2^64 when huge */
    int huge = 0;   /* |x| >= 2^40 (then ip's low 16 bits are 0 anyway) */
    int half = 0, rest = 0;
    if (sig == 0) {
        ip = 0;
    } else if (e2 >= 0) {
        if (e2 >= 40) {
            ip = 0;
            huge = 1;
        } else {
            ip = sig << e2;
        }
    } else if (-e2 > 24) {
        ip = 0;
        rest = 1; /* below one half */
    } else {
        const int sh = -e2;
        ip = sig >> sh;
        const uint64_t r = sig & ((UINT64_C(1) << sh) - 1), h = UINT64_C(1) << (sh - 1);
        half = r >= h;
        rest = half ? r > h : r != 0;
    }
    const int inexact = half || rest;
    int up;
    switch (c->round) {
    case DTCAST_ROUND_RNE: up = half && (rest || (ip & 1)); break;
    case DTCAST_ROUND_RNA: up = half; break;
    case DTCAST_ROUND_FLOOR: up = neg && inexact; break;
    case DTCAST_ROUND_CEIL: up = !neg && inexact; break;
    case DTCAST_ROUND_TRUNC: up = 0; break;
    default: up = inexact && !(ip & 1); break;
    }
    const uint64_t mag = ip + (uint64_t)up;
    if (!c->saturate)
        return (uint32_t)((neg ? 0 - mag : mag) & mask);
    if (!neg)
        return (huge || mag > maxv) ? maxv : (uint32_t)mag;
    if (!is_signed)
        return 0;
    if (huge || mag > min_code)
        return min_code;
    return (uint32_t)((0 - mag) & mask);
}

/* The expected code of any pattern (slow path: boundary checks and samples). */
static uint32_t expect_seg(const combo *c, uint32_t p)
{
    const int neg = (int)(p >> 31);
    const uint32_t q = p & 0x7FFFFFFFu;
    const segs *s = neg ? c->neg : c->pos;
    const uint32_t *code = neg ? c->neg_code : c->pos_code;
    size_t lo = 0, hi = s->n; /* last k with start[k] <= q */
    while (hi - lo > 1) {
        const size_t mid = (lo + hi) / 2;
        if (s->start[mid] <= q)
            lo = mid;
        else
            hi = mid;
    }
    return code[lo] == PERELEM ? expect_int(c, p) : code[lo];
}

/* The expected code of any pattern: integers by the per-element rule, floats by the segments. */
static uint32_t expect_one(const combo *c, uint32_t p)
{
    if (c->t->kind == K_INT || c->t->kind == K_BOOL)
        return expect_int(c, p);
    return expect_seg(c, p);
}

/* ---- the check of one chunk ------------------------------------------------------------------ */

static void note_failure(combo *c, uint32_t p, uint32_t got, uint32_t want, const char *what)
{
    pthread_mutex_lock(&c->lock);
    if (c->failures == 0 && c->first_failure[0] == '\0')
        snprintf(c->first_failure, sizeof c->first_failure,
                 "%s: float32 0x%08x (%.9g) -> 0x%x, expected 0x%x", what, p, f32_value(p), got,
                 want);
    pthread_mutex_unlock(&c->lock);
}

/* Output element i as an integer code (outputs are unpacked first for sub-byte types). */
static inline uint32_t out_at(const void *out, int wide, size_t i)
{
    return wide ? ((const uint16_t *)out)[i] : ((const uint8_t *)out)[i];
}

/* Chunk: patterns base + i*step, i < n, all of one sign. */
static uint64_t check_chunk(combo *c, const void *out, int wide, uint32_t base, uint32_t step,
                            size_t n)
{
    uint64_t bad = 0;
    const int neg = (int)(base >> 31);
    const segs *s = neg ? c->neg : c->pos;
    const uint32_t *code = neg ? c->neg_code : c->pos_code;
    const uint32_t q0 = base & 0x7FFFFFFFu;
    size_t lo = 0, hi = s->n;
    while (hi - lo > 1) {
        const size_t mid = (lo + hi) / 2;
        if (s->start[mid] <= q0)
            lo = mid;
        else
            hi = mid;
    }
    size_t i = 0;
    for (size_t k = lo; i < n; k++) {
        /* elements of segment k: patterns q < start[k+1] */
        const uint64_t end_q = s->start[k + 1];
        size_t i_end;
        if (end_q <= q0)
            continue;
        i_end = (size_t)((end_q - q0 + step - 1) / step);
        if (i_end > n)
            i_end = n;
        const uint32_t want = code[k];
        if (want == PERELEM) {
            for (size_t j = i; j < i_end; j++) {
                const uint32_t p = base + (uint32_t)j * step;
                const uint32_t w = expect_int(c, p), got = out_at(out, wide, j);
                if (got != w) {
                    if (!bad)
                        note_failure(c, p, got, w, "fast path");
                    bad++;
                }
            }
            i = i_end;
            continue;
        }
        uint32_t diff = 0;
        if (wide) {
            const uint16_t *o = (const uint16_t *)out;
            for (size_t j = i; j < i_end; j++)
                diff |= o[j] ^ want;
        } else {
            const uint8_t *o = (const uint8_t *)out;
            for (size_t j = i; j < i_end; j++)
                diff |= o[j] ^ want;
        }
        if (diff) {
            for (size_t j = i; j < i_end; j++) {
                const uint32_t got = out_at(out, wide, j);
                if (got != want) {
                    if (!bad)
                        note_failure(c, base + (uint32_t)j * step, got, want, "fast path");
                    bad++;
                }
            }
        }
        i = i_end;
    }
    return bad;
}

/* ---- the reference path at the boundaries and on a sample ---------------------------------- */

static uint64_t rng = 0x243F6A8885A308D3u;
static uint32_t rnd32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static void ref_check(combo *c, uint32_t p)
{
    static const dt_format *f32;
    if (!f32)
        f32 = dt_format_of(DTCAST_FLOAT32);
    dtcast_options o;
    dtcast_options_init(&o);
    o.round = c->round;
    if (c->t->kind == K_INT)
        o.int_overflow = c->saturate ? DTCAST_INT_OVERFLOW_SATURATE : DTCAST_INT_OVERFLOW_WRAP;
    else
        o.float_overflow = c->saturate ? DTCAST_FLOAT_OVERFLOW_SATURATE : DTCAST_FLOAT_OVERFLOW_IEEE;
    dt_rules r;
    dt_rules_for(c->t->f, &o, &r);
    dt_value v;
    dt_decode(f32, p, &v);
    const uint32_t got = (uint32_t)dt_encode(c->t->f, &v, &r), want = expect_one(c, p);
    c->ref_checked++;
    if (got != want) {
        if (!c->ref_failures)
            note_failure(c, p, got, want, "reference path");
        c->ref_failures++;
    }
}

/* Integers have two independent expectations (segments, per element): they must agree. */
static void agree_check(combo *c, uint32_t p)
{
    if (c->t->kind != K_INT && c->t->kind != K_BOOL)
        return;
    const uint32_t a = expect_seg(c, p), b = expect_int(c, p);
    if (a != b) {
        if (!c->ref_failures)
            note_failure(c, p, a, b, "checker disagreement (segments vs per element)");
        c->ref_failures++;
    }
}

static void ref_around(combo *c, uint32_t q)
{
    for (int d = -2; d <= 2; d++) {
        const int64_t m = (int64_t)q + d;
        if (m < 0 || m > 0x7FFFFFFF)
            continue;
        ref_check(c, (uint32_t)m);
        ref_check(c, (uint32_t)m | 0x80000000u);
        agree_check(c, (uint32_t)m);
        agree_check(c, (uint32_t)m | 0x80000000u);
    }
}

static void reference_checks(combo *c, int quick)
{
    const target *t = c->t;
    for (size_t k = 0; k < c->pos->n; k++)
        ref_around(c, c->pos->start[k]);
    for (size_t k = 0; k < c->neg->n; k++)
        ref_around(c, c->neg->start[k]);
    if (t->kind == K_INT || t->kind == K_BOOL) {
        const int64_t lim = t->kind == K_BOOL ? 4 : ((int64_t)1 << t->bits) + 2;
        const int64_t step = lim > 70000 ? 3 : 1; /* int16/uint16: every third */
        for (int64_t k = -lim; k <= lim; k += step) {
            float a = (float)k, b = (float)k + 0.5f;
            uint32_t pa, pb;
            memcpy(&pa, &a, 4);
            memcpy(&pb, &b, 4);
            ref_around(c, pa & 0x7FFFFFFFu);
            ref_around(c, pb & 0x7FFFFFFFu);
        }
    }
    static const uint32_t specials[] = {0x00000000u, 0x00000001u, 0x007FFFFFu, 0x00800000u,
                                        0x3F800000u, 0x7F7FFFFFu, 0x7F800000u, 0x7F800001u,
                                        0x7FC00000u, 0x7FFFFFFFu};
    for (size_t k = 0; k < sizeof specials / sizeof specials[0]; k++)
        ref_around(c, specials[k]);
    const int samples = quick ? 1 << 12 : 1 << 16;
    for (int k = 0; k < samples; k++) {
        const uint32_t p = rnd32();
        ref_check(c, p);
        agree_check(c, p);
    }
}

/* ---- the workers ---------------------------------------------------------------------------- */

typedef struct shared {
    combo *combos;
    size_t ncombos;
    uint32_t step;          /* 1, or 4096 for --quick */
    uint64_t nchunks, next; /* chunk queue */
    uint64_t spread;        /* --chunks: chunk k is the (k * spread)-th */
    pthread_mutex_t lock;
} shared;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *worker(void *arg)
{
    shared *sh = arg;
    uint32_t *in = malloc(CHUNK * sizeof *in);
    uint8_t *out = malloc(CHUNK * 2 + 16);
    uint8_t *unpacked = malloc(CHUNK + 64);
    double *conv = calloc(sh->ncombos, sizeof *conv), *chk = calloc(sh->ncombos, sizeof *chk);
    uint64_t *bad = calloc(sh->ncombos, sizeof *bad);
    if (!in || !out || !unpacked || !conv || !chk || !bad) {
        fprintf(stderr, "sweep_f32: out of memory\n");
        exit(2);
    }
    const uint64_t per_chunk = (uint64_t)CHUNK * sh->step;
    for (;;) {
        pthread_mutex_lock(&sh->lock);
        const uint64_t k = sh->next++;
        pthread_mutex_unlock(&sh->lock);
        if (k >= sh->nchunks)
            break;
        const uint64_t first = k * (sh->spread ? sh->spread : 1) * per_chunk;
        size_t n = CHUNK;
        if ((UINT64_C(1) << 32) - first < per_chunk)
            n = (size_t)(((UINT64_C(1) << 32) - first + sh->step - 1) / sh->step);
        for (size_t i = 0; i < n; i++) /* quick: a different offset in every chunk */
            in[i] = (uint32_t)(first + (uint64_t)i * sh->step + (sh->step > 1 ? (k * 977) % sh->step : 0));
        const uint32_t base = in[0];
        for (size_t ci = 0; ci < sh->ncombos; ci++) {
            combo *c = &sh->combos[ci];
            dtcast_options o;
            dtcast_options_init(&o);
            o.round = c->round;
            o.threads = 1;
            if (c->t->kind == K_INT)
                o.int_overflow = c->saturate ? DTCAST_INT_OVERFLOW_SATURATE : DTCAST_INT_OVERFLOW_WRAP;
            else
                o.float_overflow =
                    c->saturate ? DTCAST_FLOAT_OVERFLOW_SATURATE : DTCAST_FLOAT_OVERFLOW_IEEE;
            const double t0 = now();
            if (dtcast_convert(out, c->t->type, in, DTCAST_FLOAT32, n, &o, NULL) != DTCAST_OK) {
                fprintf(stderr, "sweep_f32: dtcast_convert failed for %s\n", c->name);
                exit(2);
            }
            const double t1 = now();
            const int stride = c->t->stride;
            const void *codes = out;
            if (stride < 8) {
                const size_t per = (size_t)(8 / stride);
                const uint8_t m = (uint8_t)((1u << stride) - 1);
                const size_t nbytes = (n + per - 1) / per;
                for (size_t b = 0; b < nbytes; b++) {
                    const unsigned byte = out[b];
                    uint8_t *u = unpacked + b * per;
                    for (size_t j = 0; j < per; j++)
                        u[j] = (uint8_t)((byte >> (j * (size_t)stride)) & m);
                }
                codes = unpacked;
            }
            /* a chunk holds one sign only: split at 2^31 for safety in quick mode */
            size_t split = n;
            for (size_t i = 0; i < n; i++)
                if ((in[i] >> 31) != (base >> 31)) {
                    split = i;
                    break;
                }
            bad[ci] += check_chunk(c, codes, stride == 16, base, sh->step, split);
            if (split < n) {
                const uint8_t *rest = (const uint8_t *)codes + split * (stride == 16 ? 2 : 1);
                bad[ci] += check_chunk(c, rest, stride == 16, in[split], sh->step, n - split);
            }
            const double t2 = now();
            conv[ci] += t1 - t0;
            chk[ci] += t2 - t1;
        }
    }
    for (size_t ci = 0; ci < sh->ncombos; ci++) {
        combo *c = &sh->combos[ci];
        pthread_mutex_lock(&c->lock);
        c->convert_s += conv[ci];
        c->check_s += chk[ci];
        c->failures += bad[ci];
        pthread_mutex_unlock(&c->lock);
    }
    free(in), free(out), free(unpacked), free(conv), free(chk), free(bad);
    return NULL;
}

int main(int argc, char **argv)
{
    int quick = 0;
    unsigned nthreads = 2;
    const char *only = NULL;
    unsigned long long max_chunks = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            nthreads = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--chunks") == 0 && i + 1 < argc) /* timing: the first N */
            max_chunks = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: sweep_f32 [--quick] [--threads N] [--only TYPE[,TYPE]]\n");
            return 2;
        }
    }
    if (nthreads < 1 || nthreads > 64)
        nthreads = 2;
    const double start = now();

    static target targets[NTARGETS];
    static combo combos[NTARGETS * 12];
    size_t ncombos = 0;
    for (size_t k = 0; k < NTARGETS; k++) {
        target *t = &targets[k];
        if (!setup_target(t, target_types[k])) {
            printf("FAIL sweep/%s: setup\n", dtcast_type_name(target_types[k]));
            return 1;
        }
        if (only && !strstr(only, t->f->name))
            continue;
        if (!build_segments(t)) {
            printf("FAIL sweep/%s: out of memory\n", t->f->name);
            return 1;
        }
        const int npol = t->kind == K_BOOL ? 1 : 2;
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
            for (int pol = 0; pol < npol; pol++) {
                combo *c = &combos[ncombos++];
                memset(c, 0, sizeof *c);
                c->t = t;
                c->round = modes[m];
                c->saturate = pol;
                pthread_mutex_init(&c->lock, NULL);
                snprintf(c->name, sizeof c->name, "%s/%s/%s", t->f->name,
                         dtcast_round_name(modes[m]),
                         t->kind == K_BOOL ? "-" : pol ? "saturate"
                                                 : t->kind == K_INT ? "wrap" : "ieee");
                if (!setup_combo_codes(c)) {
                    printf("FAIL sweep/%s: out of memory\n", c->name);
                    return 1;
                }
            }
    }
    const double setup_s = now() - start;

    shared sh = {combos, ncombos, quick ? 4096u : 1u, 0, 0, 0, PTHREAD_MUTEX_INITIALIZER};
    const uint64_t per_chunk = (uint64_t)CHUNK * sh.step;
    sh.nchunks = ((UINT64_C(1) << 32) + per_chunk - 1) / per_chunk;
    if (max_chunks && max_chunks < sh.nchunks) { /* spread over the whole range */
        sh.nchunks = max_chunks;
        sh.spread = (((UINT64_C(1) << 32) + per_chunk - 1) / per_chunk) / max_chunks;
    }
    pthread_t ids[64];
    for (unsigned i = 0; i < nthreads; i++)
        if (pthread_create(&ids[i], NULL, worker, &sh) != 0) {
            fprintf(stderr, "sweep_f32: cannot start a thread\n");
            return 2;
        }
    for (unsigned i = 0; i < nthreads; i++)
        pthread_join(ids[i], NULL);
    const double sweep_s = now() - start - setup_s;

    const double r0 = now();
    for (size_t ci = 0; ci < ncombos; ci++)
        reference_checks(&combos[ci], quick);
    const double ref_s = now() - r0;

    /* per target */
    const uint64_t per_combo = (uint64_t)sh.nchunks * CHUNK < (UINT64_C(1) << 32) / sh.step
                                   ? (uint64_t)sh.nchunks * CHUNK
                                   : (UINT64_C(1) << 32) / sh.step;
    uint64_t total_values = 0, total_ref = 0;
    for (size_t k = 0; k < NTARGETS; k++) {
        const target *t = &targets[k];
        double cs = 0, ks = 0;
        uint64_t bad = 0, rbad = 0, rn = 0, n = 0, nc = 0;
        const char *first = NULL;
        for (size_t ci = 0; ci < ncombos; ci++) {
            combo *c = &combos[ci];
            if (c->t != t)
                continue;
            nc++;
            cs += c->convert_s;
            ks += c->check_s;
            n += per_combo;
            bad += c->failures;
            rbad += c->ref_failures;
            rn += c->ref_checked;
            if (!first && (c->failures || c->ref_failures)) {
                static char msg[400];
                snprintf(msg, sizeof msg, "%s: %s", c->name, c->first_failure);
                first = msg;
            }
        }
        if (!nc)
            continue;
        total_values += n;
        total_ref += rn;
        if (bad || rbad) {
            printf("FAIL sweep/%s: %llu fast-path and %llu reference mismatches; first %s\n",
                   t->f->name, (unsigned long long)bad, (unsigned long long)rbad, first);
            fail_count++;
        } else {
            printf("PASS sweep/%s\n", t->f->name);
        }
        printf("  %-18s %3llu combinations %14llu values  convert %8.1f s  check %7.1f s  "
               "(%.2f ns/value)  reference %llu\n",
               t->f->name, (unsigned long long)nc, (unsigned long long)n, cs, ks,
               n ? (cs + ks) * 1e9 / (double)n : 0.0, (unsigned long long)rn);
    }
    printf("sweep_f32%s: %llu values (%zu combinations x %llu), %llu reference-path checks; "
           "setup %.1f s, sweep %.1f s on %u threads, reference %.1f s, total %.1f s\n",
           quick ? " --quick" : "", (unsigned long long)total_values, ncombos,
           (unsigned long long)per_combo, (unsigned long long)total_ref, setup_s, sweep_s,
           nthreads, ref_s, now() - start);
    return fail_count ? 1 : 0;
}
