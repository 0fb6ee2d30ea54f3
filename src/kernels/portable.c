/* The portable kernels: plain C, always built. Lookup tables for narrow sources, the narrowing
 * template over 8-lane arrays, widening, float64, integer <-> integer and integer <-> float. */
#include "kernels.h"
#include "scalar.h"

#include <string.h>

/* ---- the template's vector layer: 8 lanes in an array ---------------------------------------- */
#define VW 8
#define FN
#define NAME(x) x##_portable
#define HAVE_F64ODD 1
typedef struct {
    uint32_t l[VW];
} V;
typedef V K;

#define LANES(expr)                                                                             \
    V r_;                                                                                      \
    for (int i_ = 0; i_ < VW; i_++)                                                            \
        r_.l[i_] = (expr);                                                                     \
    return r_

static inline V v_set1(uint32_t c) { LANES(c); }
static inline V v_and(V a, V b) { LANES(a.l[i_] & b.l[i_]); }
static inline V v_andn(V a, V b) { LANES(~a.l[i_] & b.l[i_]); }
static inline V v_or(V a, V b) { LANES(a.l[i_] | b.l[i_]); }
static inline V v_add(V a, V b) { LANES(a.l[i_] + b.l[i_]); }
static inline V v_sub(V a, V b) { LANES(a.l[i_] - b.l[i_]); }
static inline V v_srli(V a, int n) { LANES(a.l[i_] >> n); }
static inline V v_slli(V a, int n) { LANES(a.l[i_] << n); }
static inline V v_srlv(V a, V n) { LANES(n.l[i_] > 31 ? 0 : a.l[i_] >> n.l[i_]); }
static inline V v_sllv(V a, V n) { LANES(n.l[i_] > 31 ? 0 : a.l[i_] << n.l[i_]); }
static inline V v_min(V a, V b) { LANES((int32_t)a.l[i_] < (int32_t)b.l[i_] ? a.l[i_] : b.l[i_]); }
static inline V v_max(V a, V b) { LANES((int32_t)a.l[i_] > (int32_t)b.l[i_] ? a.l[i_] : b.l[i_]); }
static inline V v_minu(V a, V b) { LANES(a.l[i_] < b.l[i_] ? a.l[i_] : b.l[i_]); }
static inline K k_gt(V a, V b) { LANES((int32_t)a.l[i_] > (int32_t)b.l[i_] ? ~0u : 0u); }
static inline K k_eq(V a, V b) { LANES(a.l[i_] == b.l[i_] ? ~0u : 0u); }
static inline K k_neg(V a) { LANES(a.l[i_] >> 31 ? ~0u : 0u); }
static inline uint32_t v_signs(V a)
{
    uint32_t m = 0;
    for (int i = 0; i < VW; i++)
        m |= (a.l[i] >> 31) << i;
    return m;
}
static inline K k_and(K a, K b) { return v_and(a, b); }
static inline K k_or(K a, K b) { return v_or(a, b); }
static inline V v_sel(K k, V a, V b) { LANES(k.l[i_] ? a.l[i_] : b.l[i_]); }

static inline uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static inline uint32_t rd32(const uint8_t *p)
{
    uint32_t u;
    memcpy(&u, p, 4);
    return u;
}
static inline uint64_t rd64(const uint8_t *p)
{
    uint64_t u;
    memcpy(&u, p, 8);
    return u;
}
static inline V v_load32(const uint8_t *p) { LANES(rd32(p + 4 * i_)); }
static inline V v_load16h(const uint8_t *p) { LANES(dt_f16_to_f32(rd16(p + 2 * i_))); }
static inline V v_load16b(const uint8_t *p) { LANES(dt_bf16_to_f32(rd16(p + 2 * i_))); }
static inline V v_load64odd(const uint8_t *p) { LANES(dt_f64_to_f32_odd(rd64(p + 8 * i_))); }
static inline void v_store8(uint8_t *p, V c)
{
    for (int i = 0; i < VW; i++)
        p[i] = (uint8_t)c.l[i];
}
static inline void v_store16(uint8_t *p, V c)
{
    for (int i = 0; i < VW; i++) {
        p[2 * i] = (uint8_t)c.l[i];
        p[2 * i + 1] = (uint8_t)(c.l[i] >> 8);
    }
}
static inline void v_store32(uint8_t *p, V c) { memcpy(p, c.l, 4 * VW); }
static inline void v_store4(uint8_t *p, V c)
{
    for (int i = 0; i < VW / 2; i++)
        p[i] = (uint8_t)((c.l[2 * i] & 0xF) | (c.l[2 * i + 1] & 0xF) << 4);
}

static inline void v_opaque(V *x) { (void)x; }
#define DT_INLINE inline /* 8-lane arrays: forced inlining makes gcc slower here */
#include "kernels_tmpl.h"

/* ---- lookup tables ------------------------------------------------------------------------- */

/* An element code of a source of stride sb (1, 2, 4 or 8 bits) at index i. */
static inline unsigned narrow_code(const uint8_t *s, size_t i, int sb)
{
    if (sb == 8)
        return s[i];
    const unsigned per = 8u / (unsigned)sb;
    return (s[i / per] >> ((i % per) * (unsigned)sb)) & ((1u << sb) - 1);
}

/* A sub-byte source (SB = 1, 2 or 4 bits) into a whole-byte destination of W bytes: each source
 * byte yields 8/SB table entries, so there is no division and no run-time memcpy size. */
#define SUBBYTE_TABLE_RUN(SB, W)                                                                   \
    static void table_sub##SB##_w##W(const dt_kernel *k, void *dst, const void *src, size_t begin, \
                                     size_t end)                                                   \
    {                                                                                              \
        const uint8_t *s = src, *t = k->table;                                                     \
        uint8_t *d = dst;                                                                          \
        enum { PER = 8 / SB, MASK = (1 << SB) - 1 };                                               \
        size_t i = begin; /* a multiple of 8, so a byte boundary of the source */                  \
        for (; i + PER <= end; i += PER) {                                                         \
            unsigned byte = s[i / PER];                                                            \
            for (unsigned j = 0; j < PER; j++, byte >>= SB)                                        \
                memcpy(d + W * (i + j), t + W * (byte & MASK), W);                                 \
        }                                                                                          \
        for (; i < end; i++)                                                                       \
            memcpy(d + W * i, t + W * ((s[i / PER] >> (i % PER * SB)) & MASK), W);                 \
    }
#define SUBBYTE_TABLE_RUNS(SB)                                                                     \
    SUBBYTE_TABLE_RUN(SB, 1) SUBBYTE_TABLE_RUN(SB, 2) SUBBYTE_TABLE_RUN(SB, 4)                     \
    SUBBYTE_TABLE_RUN(SB, 8)
SUBBYTE_TABLE_RUNS(1)
SUBBYTE_TABLE_RUNS(2)
SUBBYTE_TABLE_RUNS(4)

/* [log2 of source bits][log2 of destination bytes] */
static const dt_kernel_fn subbyte_table_runs[3][4] = {
    {table_sub1_w1, table_sub1_w2, table_sub1_w4, table_sub1_w8},
    {table_sub2_w1, table_sub2_w2, table_sub2_w4, table_sub2_w8},
    {table_sub4_w1, table_sub4_w2, table_sub4_w4, table_sub4_w8},
};

static int log2_small(int x) { return x >= 8 ? 3 : x >= 4 ? 2 : x >= 2 ? 1 : 0; }

/* Integers of one width whose bits do not change (wrap between signed and unsigned, or the same
 * type): a copy. */
static void copy_run(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    const size_t w = (size_t)k->df->stride_bits / 8;
    memmove((uint8_t *)dst + w * begin, (const uint8_t *)src + w * begin, w * (end - begin));
}

/* Stores code (already the destination's width) of a sub-byte destination; begin of the range
 * is a multiple of 8, so each byte is written whole by one range: build it, then store. */
static void table_run(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    const uint8_t *s = src;
    uint8_t *d = dst;
    const int sb = k->sf->stride_bits, db = k->df->stride_bits;
    const uint8_t *t = k->table;
    if (db >= 8) { /* whole-byte destination: copy the entry */
        const size_t w = (size_t)db / 8;
        if (sb == 8) {
            switch (w) {
            case 1:
                for (size_t i = begin; i < end; i++)
                    d[i] = t[s[i]];
                return;
            case 2:
                for (size_t i = begin; i < end; i++)
                    memcpy(d + 2 * i, t + 2 * s[i], 2);
                return;
            case 4:
                for (size_t i = begin; i < end; i++)
                    memcpy(d + 4 * i, t + 4 * s[i], 4);
                return;
            default:
                for (size_t i = begin; i < end; i++)
                    memcpy(d + 8 * i, t + 8 * s[i], 8);
                return;
            }
        }
        for (size_t i = begin; i < end; i++)
            memcpy(d + w * i, t + w * narrow_code(s, i, sb), w);
        return;
    }
    const unsigned per = 8u / (unsigned)db;
    for (size_t i = begin; i < end; i += per) { /* one output byte at a time */
        unsigned byte = 0;
        for (unsigned j = 0; j < per && i + j < end; j++) {
            unsigned c = sb == 16 ? t[rd16(s + 2 * (i + j))] : t[narrow_code(s, i + j, sb)];
            byte |= (c & ((1u << db) - 1)) << (j * (unsigned)db);
        }
        d[i / per] = (uint8_t)byte;
    }
}

static void table16_run(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    const uint8_t *s = src;
    uint8_t *d = dst;
    const uint8_t *t = k->table;
    if (k->df->stride_bits == 8) {
        for (size_t i = begin; i < end; i++)
            d[i] = t[rd16(s + 2 * i)];
        return;
    }
    table_run(k, dst, src, begin, end);
}

/* ---- widening floats (exact) --------------------------------------------------------------- */
#define BLOCK 64
/* Element loops run over blocks copied to local arrays: the loop bodies see no aliasing (an
 * in-place call is safe: each block is read whole before it is written) and vectorize. */
#define BLOCK_LOOP(STYPE, DTYPE, EXPR)                                                          \
    const uint8_t *s_ = (const uint8_t *)src;                                                   \
    uint8_t *d_ = (uint8_t *)dst;                                                               \
    for (size_t i0 = begin; i0 < end; i0 += BLOCK) {                                            \
        const size_t n_ = end - i0 < BLOCK ? end - i0 : BLOCK;                                  \
        STYPE in[BLOCK];                                                                        \
        DTYPE out[BLOCK];                                                                       \
        memcpy(in, s_ + i0 * sizeof(STYPE), n_ * sizeof(STYPE));                                \
        for (size_t i = 0; i < n_; i++) {                                                       \
            const STYPE x = in[i];                                                              \
            out[i] = (EXPR);                                                                    \
        }                                                                                       \
        memcpy(d_ + i0 * sizeof(DTYPE), out, n_ * sizeof(DTYPE));                               \
    }

#define SIMPLE_KERNEL(name, STYPE, DTYPE, EXPR)                                                 \
    static void name(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end) \
    {                                                                                           \
        (void)k;                                                                                \
        BLOCK_LOOP(STYPE, DTYPE, EXPR)                                                          \
    }

SIMPLE_KERNEL(f16_f32, uint16_t, uint32_t, dt_f16_to_f32(x))
SIMPLE_KERNEL(bf16_f32, uint16_t, uint32_t, dt_bf16_to_f32(x))
SIMPLE_KERNEL(f32_f64, uint32_t, uint64_t, dt_f32_to_f64(x))
SIMPLE_KERNEL(f16_f64, uint16_t, uint64_t, dt_f32_to_f64(dt_f16_to_f32(x)))
SIMPLE_KERNEL(bf16_f64, uint16_t, uint64_t, dt_f32_to_f64(dt_bf16_to_f32(x)))
/* saturate: an infinite input becomes the largest finite number (Inf - 1 is max, same sign) */
static inline uint32_t sat32(uint32_t u) { return (u & 0x7FFFFFFFu) == 0x7F800000u ? u - 1 : u; }
static inline uint64_t sat64(uint64_t u)
{
    return (u & UINT64_C(0x7FFFFFFFFFFFFFFF)) == UINT64_C(0x7FF0000000000000) ? u - 1 : u;
}
SIMPLE_KERNEL(f16_f32_sat, uint16_t, uint32_t, sat32(dt_f16_to_f32(x)))
SIMPLE_KERNEL(bf16_f32_sat, uint16_t, uint32_t, sat32(dt_bf16_to_f32(x)))
SIMPLE_KERNEL(f32_f64_sat, uint32_t, uint64_t, sat64(dt_f32_to_f64(x)))
SIMPLE_KERNEL(f16_f64_sat, uint16_t, uint64_t, sat64(dt_f32_to_f64(dt_f16_to_f32(x))))
SIMPLE_KERNEL(bf16_f64_sat, uint16_t, uint64_t, sat64(dt_f32_to_f64(dt_bf16_to_f32(x))))

/* float64 -> float32 in any mode: the rounding of dt_f64_to_f32_odd, with the mode's rule. */
static uint32_t f64_to_f32(uint64_t x, const dt_rules *r)
{
    const bool neg = x >> 63;
    const uint32_t s = (uint32_t)neg << 31;
    const uint64_t a = x & UINT64_C(0x7FFFFFFFFFFFFFFF);
    const int e = (int)(a >> 52);
    if (e == 0x7FF) {
        if (a > UINT64_C(0x7FF0000000000000))
            return s | 0x7FC00000u;
        return s | (r->saturate_float ? 0x7F7FFFFFu : 0x7F800000u);
    }
    const uint64_t m = (a & ((UINT64_C(1) << 52) - 1)) | (e ? UINT64_C(1) << 52 : 0);
    int fe = e - 1023 + 127;
    int sh = 29;
    if (fe < 1) {
        sh += 1 - fe;
        fe = 1;
    }
    uint64_t kept;
    bool half, sticky;
    if (sh > 60) {
        kept = 0;
        half = false;
        sticky = a != 0;
    } else {
        kept = m >> sh;
        half = (m >> (sh - 1)) & 1;
        sticky = (m & ((UINT64_C(1) << (sh - 1)) - 1)) != 0;
    }
    if (!a)
        return s;
    kept += dt_round_up(r->round, neg, kept & 1, half, sticky);
    /* kept has the implicit bit at 2^23 for normals: adding (fe - 1) << 23 places the exponent
     * (a carry out of the mantissa bumps it, a subnormal's missing bit leaves it 0) */
    const uint64_t mag = kept + ((uint64_t)(fe - 1) << 23);
    if (mag >= 0x7F800000u) {
        if (r->saturate_float || dt_mag_down(r->round, neg))
            return s | 0x7F7FFFFFu;
        return s | 0x7F800000u;
    }
    return s | (uint32_t)mag;
}

static void f64_f32(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    const dt_rules *r = &k->r;
    BLOCK_LOOP(uint64_t, uint32_t, f64_to_f32(x, r))
}

/* ---- integers ------------------------------------------------------------------------------ */
/* Clamps on 64-bit values (parameters, so no comparison is against its own type's limits). */
static inline uint64_t sat_from_s(int64_t v, int64_t lo, uint64_t hi)
{
    return v < lo ? (uint64_t)lo : (v > 0 && (uint64_t)v > hi) ? hi : (uint64_t)v;
}
static inline uint64_t sat_from_u(uint64_t v, uint64_t hi) { return v > hi ? hi : v; }

/* integer -> integer: wrap keeps the low bits (unsigned conversions are modulo 2^bits);
 * saturate clamps to the destination's range. Storage types are unsigned. */
#define II_KERNEL(S, STYPE, SAT, D, DTYPE, DLO, DHI)                                           \
    SIMPLE_KERNEL(ii_wrap_##S##_##D, STYPE, DTYPE, (DTYPE)x)                                    \
    SIMPLE_KERNEL(ii_sat_##S##_##D, STYPE, DTYPE, (DTYPE)SAT(x, DLO, DHI))
#define SAT_S(x, lo, hi) sat_from_s((int64_t)(x), (lo), (hi))
#define SAT_U(x, lo, hi) sat_from_u((uint64_t)(x), (hi))
#define II_ROW(S, STYPE, SAT)                                                                   \
    II_KERNEL(S, STYPE, SAT, i8, uint8_t, INT8_MIN, INT8_MAX)                                   \
    II_KERNEL(S, STYPE, SAT, u8, uint8_t, 0, UINT8_MAX)                                         \
    II_KERNEL(S, STYPE, SAT, i16, uint16_t, INT16_MIN, INT16_MAX)                               \
    II_KERNEL(S, STYPE, SAT, u16, uint16_t, 0, UINT16_MAX)                                      \
    II_KERNEL(S, STYPE, SAT, i32, uint32_t, INT32_MIN, INT32_MAX)                               \
    II_KERNEL(S, STYPE, SAT, u32, uint32_t, 0, UINT32_MAX)                                      \
    II_KERNEL(S, STYPE, SAT, i64, uint64_t, INT64_MIN, INT64_MAX)                               \
    II_KERNEL(S, STYPE, SAT, u64, uint64_t, 0, UINT64_MAX)
II_ROW(i16, int16_t, SAT_S)
II_ROW(u16, uint16_t, SAT_U)
II_ROW(i32, int32_t, SAT_S)
II_ROW(u32, uint32_t, SAT_U)
II_ROW(i64, int64_t, SAT_S)
II_ROW(u64, uint64_t, SAT_U)

#define II_FNS(S)                                                                               \
    {{ii_wrap_##S##_i8, ii_wrap_##S##_u8, ii_wrap_##S##_i16, ii_wrap_##S##_u16,                 \
      ii_wrap_##S##_i32, ii_wrap_##S##_u32, ii_wrap_##S##_i64, ii_wrap_##S##_u64},              \
     {ii_sat_##S##_i8, ii_sat_##S##_u8, ii_sat_##S##_i16, ii_sat_##S##_u16, ii_sat_##S##_i32,    \
      ii_sat_##S##_u32, ii_sat_##S##_i64, ii_sat_##S##_u64}}
/* [source][saturate][destination], both indexed by int_slot() - 2 */
static const dt_kernel_fn ii_fns[6][2][8] = {II_FNS(i16), II_FNS(u16), II_FNS(i32),
                                             II_FNS(u32), II_FNS(i64), II_FNS(u64)};

/* 0..7 for int8, uint8, int16, uint16, int32, uint32, int64, uint64; -1 otherwise */
static int int_slot(const dt_format *f)
{
    if (f->tc != DT_TC_SINT && f->tc != DT_TC_UINT)
        return -1;
    const int u = f->tc == DT_TC_UINT;
    switch (f->bits) {
    case 8:
        return 0 + u;
    case 16:
        return 2 + u;
    case 32:
        return 4 + u;
    case 64:
        return 6 + u;
    default:
        return -1;
    }
}

/* integer -> float32 / float64: exact widening where it fits, else one rounding per mode. */
SIMPLE_KERNEL(if_i16_f32, int16_t, float, (float)x)
SIMPLE_KERNEL(if_u16_f32, uint16_t, float, (float)x)
SIMPLE_KERNEL(if_i16_f64, int16_t, double, (double)x)
SIMPLE_KERNEL(if_u16_f64, uint16_t, double, (double)x)
SIMPLE_KERNEL(if_i32_f64, int32_t, double, (double)x)
SIMPLE_KERNEL(if_u32_f64, uint32_t, double, (double)x)

static inline uint64_t mag_of_s(int64_t v) { return v < 0 ? 0 - (uint64_t)v : (uint64_t)v; }

#define IF_ROUND_KERNEL(name, STYPE, DTYPE, MAN, BIAS, BITS, MAG, NEG)                         \
    static void name(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end) \
    {                                                                                           \
        const dt_rules *r = &k->r;                                                              \
        BLOCK_LOOP(STYPE, DTYPE, (DTYPE)dt_uint_to_float(MAG, NEG, MAN, BIAS, r, BITS))         \
    }
IF_ROUND_KERNEL(if_i32_f32, int32_t, uint32_t, 23, 127, 32, mag_of_s(x), x < 0)
IF_ROUND_KERNEL(if_u32_f32, uint32_t, uint32_t, 23, 127, 32, (uint64_t)x, false)
IF_ROUND_KERNEL(if_i64_f32, int64_t, uint32_t, 23, 127, 32, mag_of_s(x), x < 0)
IF_ROUND_KERNEL(if_u64_f32, uint64_t, uint32_t, 23, 127, 32, (uint64_t)x, false)
IF_ROUND_KERNEL(if_i64_f64, int64_t, uint64_t, 52, 1023, 64, mag_of_s(x), x < 0)
IF_ROUND_KERNEL(if_u64_f64, uint64_t, uint64_t, 52, 1023, 64, (uint64_t)x, false)

/* float -> integer (float32 -> 64-bit integers, float64 -> any 8..64-bit integer) */
#define FI_KERNEL(name, STYPE, WIDEN)                                                           \
    static void name(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end) \
    {                                                                                           \
        const dt_rules *r = &k->r;                                                              \
        const int bits = k->df->bits;                                                           \
        const bool sg = k->df->tc == DT_TC_SINT;                                                \
        const size_t w = (size_t)bits / 8;                                                      \
        const uint8_t *s = src;                                                                 \
        uint8_t *d = dst;                                                                       \
        for (size_t i = begin; i < end; i++) {                                                  \
            STYPE x;                                                                            \
            memcpy(&x, s + i * sizeof x, sizeof x);                                             \
            const uint64_t c = dt_f64_to_int(WIDEN, bits, sg, r);                               \
            for (size_t b = 0; b < w; b++)                                                      \
                d[i * w + b] = (uint8_t)(c >> (8 * b));                                         \
        }                                                                                       \
    }
FI_KERNEL(fi_f64, uint64_t, x)
FI_KERNEL(fi_f32, uint32_t, dt_f32_to_f64(x))

/* ---- parameters of the narrowing template ---------------------------------------------------- */
bool dt_narrow_setup(dt_narrow *n, const dt_format *df, const dt_format *lane, const dt_rules *r)
{
    memset(n, 0, sizeof *n);
    if (df->tc == DT_TC_BOOL)
        return true;
    if (df->tc == DT_TC_SINT || df->tc == DT_TC_UINT) {
        const bool sg = df->tc == DT_TC_SINT;
        n->imask = df->bits >= 32 ? 0xFFFFFFFFu : (1u << df->bits) - 1;
        n->imax = sg ? n->imask >> 1 : n->imask;
        n->imin_mag = sg ? (n->imask >> 1) + 1 : 0;
        n->isat = r->saturate_int ? ~0u : 0;
        return true;
    }
    if (df->tc == DT_TC_E8M0) {
        n->maxc = (r->saturate_float || dt_mag_down(r->round, false)) ? 0xFE : 0xFF;
        return true;
    }
    if (df->tc != DT_TC_FLOAT || df->bits > 16 || df->man_bits >= lane->man_bits)
        return false;
    n->ec_hi = (uint32_t)(df->bias <= lane->bias ? 1 + lane->bias - df->bias : 1);
    n->up = (uint32_t)(df->bias > lane->bias ? df->bias - lane->bias : 0);
    n->s1 = n->ec_hi + (uint32_t)(lane->man_bits - df->man_bits);
    n->maxc = (uint32_t)dt_float_max_code(df);
    n->sign = 1u << (df->bits - 1);
    n->keep_neg_zero = dt_float_has_neg_zero(df) ? ~0u : 0;
    for (int neg = 0; neg < 2; neg++) {
        /* fnuz NaN 0x80 is the sign bit alone: as a "magnitude" it survives the sign OR */
        const uint32_t nan_mag = dt_float_has_nan(df)
                                     ? (uint32_t)dt_float_nan_code(df, true) & (n->sign | (n->sign - 1))
                                     : 0;
        const uint32_t nan_or_inf =
            dt_float_has_inf(df) ? (uint32_t)dt_float_inf_code(df, false)
            : dt_float_has_nan(df) ? (df->nan == DT_NAN_FNUZ ? n->sign : nan_mag & (n->sign - 1))
                                   : n->maxc;
        n->ovf[neg] = (r->saturate_float || dt_mag_down(r->round, neg)) ? n->maxc : nan_or_inf;
        n->inf[neg] = r->saturate_float ? n->maxc : nan_or_inf;
        if (dt_float_has_nan(df))
            n->nan[neg] = (uint32_t)dt_float_nan_code(df, neg);
        else if (r->nan_as_max)
            n->nan[neg] = n->maxc;
        else
            n->nan[neg] = neg ? 0 : n->sign; /* float4e2m1: +NaN -> 0x8, -NaN -> 0x0 */
    }
    return true;
}

/* ---- the portable finder --------------------------------------------------------------------- */
#define SET(f)                                                                                  \
    do {                                                                                        \
        k->fn = (f);                                                                            \
        return true;                                                                            \
    } while (0)

bool dt_find_portable(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                      size_t count)
{
    const int sb = sf->stride_bits, db = df->stride_bits;
    k->compute_bound = true; /* plain C: narrowing outputs are written directly */
    /* narrow sources: a 256-entry table */
    if (sb <= 8) {
        k->table = dt_table_get(df, sf, r);
        if (!k->table && count >= 256) /* the cache is full: this call's own table */
            k->table = dt_table_build_into(k->local, df, sf, r);
        if (k->table && sb < 8 && db >= 8 && db <= 64)
            SET(subbyte_table_runs[log2_small(sb)][log2_small(db / 8)]);
        if (k->table)
            SET(table_run);
        return false;
    }
    /* same-width integers under wrap keep their bits */
    if ((sf->tc == DT_TC_SINT || sf->tc == DT_TC_UINT) &&
        (df->tc == DT_TC_SINT || df->tc == DT_TC_UINT) && sb == db && sb >= 8 &&
        (!r->saturate_int || sf->type == df->type))
        SET(copy_run);
    /* floats -> narrow floats, e8m0, integers of 1..32 bits, bool */
    dt_kernel_fn f = narrow_pick_portable(df, sf, r);
    if (f && dt_narrow_setup(&k->n, df, dt_format_of(DTCAST_FLOAT32), r)) {
        /* 16-bit sources: the 64 KiB table is faster in plain C, once built */
        if (sb == 16 && db <= 8 && !dt_tables16_disabled() && (count >= 16384 || dt_table_ready(df, sf, r))) {
            k->table = dt_table_get(df, sf, r);
            if (k->table)
                SET(table16_run);
        }
        SET(f);
    }
    /* other 16-bit sources into narrow targets */
    if (sb == 16 && db <= 8 && !dt_tables16_disabled() && (count >= 16384 || dt_table_ready(df, sf, r))) {
        k->table = dt_table_get(df, sf, r);
        if (k->table)
            SET(table16_run);
    }
    const dtcast_type s = sf->type, d = df->type;
    const bool sat = r->saturate_float;
    if (d == DTCAST_FLOAT32 && s == DTCAST_FLOAT16)
        SET(sat ? f16_f32_sat : f16_f32);
    if (d == DTCAST_FLOAT32 && s == DTCAST_BFLOAT16)
        SET(sat ? bf16_f32_sat : bf16_f32);
    if (d == DTCAST_FLOAT64 && s == DTCAST_FLOAT32)
        SET(sat ? f32_f64_sat : f32_f64);
    if (d == DTCAST_FLOAT64 && s == DTCAST_FLOAT16)
        SET(sat ? f16_f64_sat : f16_f64);
    if (d == DTCAST_FLOAT64 && s == DTCAST_BFLOAT16)
        SET(sat ? bf16_f64_sat : bf16_f64);
    if (d == DTCAST_FLOAT32 && s == DTCAST_FLOAT64)
        SET(f64_f32);
    const int is = int_slot(sf), id = int_slot(df);
    if (is >= 2 && id >= 0)
        SET(ii_fns[is - 2][r->saturate_int][id]);
    if (is >= 2 && d == DTCAST_FLOAT32) {
        static const dt_kernel_fn to32[6] = {if_i16_f32, if_u16_f32, if_i32_f32,
                                             if_u32_f32, if_i64_f32, if_u64_f32};
        SET(to32[is - 2]);
    }
    if (is >= 2 && d == DTCAST_FLOAT64) {
        static const dt_kernel_fn to64[6] = {if_i16_f64, if_u16_f64, if_i32_f64,
                                             if_u32_f64, if_i64_f64, if_u64_f64};
        SET(to64[is - 2]);
    }
    if (id >= 0 && s == DTCAST_FLOAT64)
        SET(fi_f64);
    if (id >= 0 && s == DTCAST_FLOAT32)
        SET(fi_f32);
    return false;
}
