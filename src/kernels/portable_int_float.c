/* The portable integer -> float kernels: int32, uint32, int64 and uint64 into float32, float64,
 * the floats of at most 16 bits and float8e8m0, in every rounding mode. Each rounds once, from a
 * value that rounds like the integer: rounding to odd at q bits (the last bit set when bits were
 * dropped), then once to p <= q - 2 bits, is the single correct rounding.
 *   - Narrow floats but bfloat16 overflow at or below 2^24: the source saturated to int32 keeps
 *     its code, and its float32 conversion is exact below 2^24, so |x| clamped to the value of
 *     the overflow code is exact where it matters (narrow_clamped). Every target's smallest normal
 *     is at most 1, so no integer needs a subnormal code.
 *   - bfloat16 and float8e8m0: 32-bit integers from float32 lanes rounded to odd at >= 17 bits
 *     (lane_i32, lane_u32), 64-bit ones from an exact double rounded to odd at >= 42 bits
 *     (i64_double: the 11 low bits folded from 2^53), rounded on its bits (dbl_round).
 *   - float32 and float64: the same doubles (float32), or the 11 low bits rounded in integers
 *     (float64: int64_f64); round to nearest even by the hardware's conversion where the
 *     floating-point environment rounds to nearest (tested at each call: env_nearest).
 * Float arithmetic is exact everywhere else (no operand or result is subnormal), so neither the
 * caller's rounding mode nor flush-to-zero changes a bit. */
#include "portable.h"

#include <float.h>

#define INLINE DT_PINLINE
#define MASK DT_PMASK
#define sel dt_psel


enum { S_I32, S_U32, S_I64, S_U64 };

INLINE uint32_t nz_m(uint32_t x) { return MASK(x != 0); }

/* The words of the element at e: a 32-bit one, or the low and high halves of a 64-bit one */
INLINE uint32_t ld32(const uint8_t *e, int half)
{
    uint32_t w;
    memcpy(&w, e + 4 * half, 4);
    return w;
}
#define X32(e) ld32(e, 0)
#define LO64(e) ld32(e, HALF_LO)
#define HI64(e) ld32(e, HALF_HI)

/* ---- integers -> float32 lanes that round like them -------------------------------------------- */
/* 32-bit integers: the float32 bits of x, exact below 2^24; from there of x / 256 (rounded to odd:
 * bit 0 set when the 8 dropped bits are not 0) times 256, exact too, still >= 17 significant bits */
INLINE uint32_t lane_i32(uint32_t x)
{
    const uint32_t big = nz_m((x ^ (uint32_t)((int32_t)x >> 31)) >> 24); /* |x| >= 2^24 */
    const uint32_t j = (uint32_t)((int32_t)x >> 8) | (nz_m(x & 0xFFu) & 1);
    return dt_bits_of_f32((float)(int32_t)sel(big, j, x)) + (big & (8u << 23));
}
INLINE uint32_t lane_u32(uint32_t x)
{
    const uint32_t big = nz_m(x >> 24);
    const uint32_t j = (x >> 8) | (nz_m(x & 0xFFu) & 1);
    return dt_bits_of_f32((float)(int32_t)sel(big, j, x)) + (big & (8u << 23));
}

/* A 64-bit integer (signed or not, as its words) as a double that rounds like it to float32 and
 * narrower in every mode: from 2^53 up the 11 low bits fold into a sticky bit 11 (the value is
 * then a multiple of 2^11 below 2^64, exact; a float32 ulp there is >= 2^30). The sum of the
 * exact parts (hi + 1/2) * 2^32 and lo - 2^31 is the value, so it is exact too. */
INLINE uint32_t fold11(uint32_t lo, uint32_t small)
{
    const uint32_t f = (lo | ((lo & 0x7FFu) + 0x7FFu)) & ~0x7FFu; /* bit 11 |= low bits != 0 */
    return f ^ ((f ^ lo) & small);
}
INLINE double i64_double(uint32_t hi, uint32_t lo)
{
    const uint32_t t = hi ^ (uint32_t)((int32_t)hi >> 31); /* |hi| - (hi < 0) */
    const uint32_t l = fold11(lo, MASK((t >> 21) == 0));
    return ((double)(int32_t)hi + 0.5) * 0x1p32 + (double)(int32_t)(l ^ 0x80000000u);
}
INLINE double u64_double(uint32_t hi, uint32_t lo)
{
    const uint32_t l = fold11(lo, MASK((hi >> 21) == 0));
    return ((double)(int32_t)(hi ^ 0x80000000u) + (0x1p31 + 0.5)) * 0x1p32 +
           (double)(int32_t)(l ^ 0x80000000u);
}

/* An integer-valued double (|v| < 2^64) rounded per mode to a float of the same exponent range
 * and 52 - sh significand bits (float32: sh = 29, bfloat16: 45; float8e8m0: 52, by its own rule:
 * e8 = 1), on the 64-bit pattern of its magnitude (a carry moves into the exponent), the exponent
 * then rebiased (modulo 2^32: an integer's lies in [127, 191]); negm: all ones for v < 0, nz: all
 * ones unless v is 0. The magnitude's code: */
INLINE uint32_t dbl_round(double v, int sh, uint32_t negm, uint32_t nz, int mode, int e8)
{
    const uint64_t a = dt_bits_of_f64(v) & ~(UINT64_C(1) << 63), low = (UINT64_C(1) << sh) - 1;
    const uint64_t neg = (uint64_t)(int64_t)(int32_t)negm;
    uint64_t r;
    if (e8) /* as narrow_e8m0: up from 1.5 (nearest), up (ceil), else down; the sign ignored */
        r = (a + (mode == M_CEIL ? low : mode == M_RNE || mode == M_RNA ? (low >> 1) + 1 : 0)) >> sh;
    else
        switch (mode) {
        case M_RNE: r = (a + (low >> 1) + ((a >> sh) & 1)) >> sh; break;
        case M_RNA: r = (a + (low >> 1) + 1) >> sh; break;
        case M_FLOOR: r = (a + (low & neg)) >> sh; break;
        case M_CEIL: r = (a + (low & ~neg)) >> sh; break;
        case M_TRUNC: r = a >> sh; break;
        default: r = (a >> sh) | (((a & low) + low) >> sh); break; /* | low bits != 0 */
        }
    return ((uint32_t)r - (896u << (52 - sh))) & nz;
}

/* ---- integers -> narrow codes ------------------------------------------------------------------ */
/* The constants, in the kernel's local bytes. */
typedef struct ifn_par ifn_par;
typedef void (*ifn_block)(uint8_t *out, const uint8_t *src, size_t n, const ifn_par *p);
struct ifn_par {
    ifn_block block; /* codes of n <= DT_PBLOCK elements (1 or 2 bytes each) */
    int obits;       /* the destination's stride bits */
    int sbytes;      /* source bytes per element */
    uint32_t d, hm1, dmask; /* the shift of the significand (23 - M), 2^(d-1) - 1, 2^d - 1 */
    uint32_t vn_off;        /* (127 - B) << 23: a - vn_off keeps the target's exponent */
    float lo, top;          /* the clamp of |x|: 2^-B, and the top for + (float32) */
    uint32_t topx;          /* the top for - as float32 bits ^ the top for + */
    uint32_t sshift, sign;  /* the target's sign bit (<< d but in fnuz), the shift taking bit 31
                             * there */
};

/* Targets whose overflow threshold lies at or below 2^24 (every narrow float but bfloat16): the
 * source saturated to int32 keeps its code, and its float32 conversion is exact below the
 * threshold, so |x| clamped to [2^-B, top] is exact where it matters. top is the value whose code
 * is the overflow code (Inf, the NaN standing for it, or the largest finite), 2^-B the value of
 * code 0; between them the code is the significand shifted right by d and rounded (a carry moves
 * into the exponent). Each source saturated to int32: */
INLINE int32_t sat_u32(uint32_t x)
{
    const uint32_t m = (uint32_t)((int32_t)x >> 31); /* from 2^31: INT32_MAX */
    return (int32_t)((x & ~m) | (m >> 1));
}
INLINE int32_t sat_i64(uint32_t hi, uint32_t lo)
{
    const uint32_t fits = MASK(hi == (uint32_t)((int32_t)lo >> 31));
    return (int32_t)sel(fits, lo, 0x7FFFFFFFu ^ (uint32_t)((int32_t)hi >> 31));
}
INLINE int32_t sat_u64(uint32_t hi, uint32_t lo)
{
    return (int32_t)sel(MASK(hi == 0), (uint32_t)sat_u32(lo), 0x7FFFFFFFu);
}
INLINE int32_t load_sat(const uint8_t *s, size_t i, int sk)
{
    if (sk == S_I32 || sk == S_U32)
        return sk == S_I32 ? (int32_t)X32(s + 4 * i) : sat_u32(X32(s + 4 * i));
    const uint32_t hi = HI64(s + 8 * i), lo = LO64(s + 8 * i);
    return sk == S_I64 ? sat_i64(hi, lo) : sat_u64(hi, lo);
}
INLINE uint32_t narrow_clamped(int32_t x, const ifn_par *p, int mode, int sg, int fnuz)
{
    const uint32_t fb = dt_bits_of_f32((float)x), negm = (uint32_t)((int32_t)fb >> 31);
    const float top = mode == M_RNE || mode == M_RNA
                          ? p->top
                          : dt_f32_of_bits(dt_bits_of_f32(p->top) ^ (negm & p->topx));
    float fa = dt_f32_of_bits(fb & 0x7FFFFFFFu);
    fa = fa > p->lo ? fa : p->lo;
    fa = fa < top ? fa : top;
    /* the sign joins above the magnitude before the rounding (one narrowing of the codes, not
     * two), where no carry reaches it: the magnitude rounds to the overflow code at most, below
     * the sign bit but in fnuz formats (NaN 0x80: there the sign joins after) */
    const uint32_t d = p->d, sgn = sg ? (fb >> p->sshift) & p->sign : 0;
    const uint32_t vn = (dt_bits_of_f32(fa) - p->vn_off) | (fnuz ? 0 : sgn);
    uint32_t c = dt_pround_shift(vn, d, p->hm1, p->dmask, negm, mode);
    return fnuz ? c | sgn : c;
}

/* bfloat16 from the lane: its bits rounded at bit 16 as they are (the sign rides along; no
 * integer overflows bfloat16 and 0 stays 0) */
INLINE uint32_t narrow_bf16(uint32_t u, int mode)
{
    const uint32_t negm = (uint32_t)((int32_t)u >> 31);
    switch (mode) {
    case M_RNE: return (u + 0x7FFFu + ((u >> 16) & 1)) >> 16;
    case M_RNA: return (u + 0x8000u) >> 16;
    case M_FLOOR: return (u + (0xFFFFu & negm)) >> 16;
    case M_CEIL: return (u + (0xFFFFu & ~negm)) >> 16;
    case M_TRUNC: return u >> 16;
    default: return (u >> 16) | (nz_m(u & 0xFFFFu) & 1);
    }
}
/* float8e8m0 from the lane: the power of two nearest |x| per mode (as portable_narrow.c; 0 gives
 * code 0, and no integer reaches the largest code) */
INLINE uint32_t narrow_e8m0(uint32_t u, int mode)
{
    const uint32_t bias = mode == M_CEIL ? (1u << 23) - 1
                          : (mode == M_RNE || mode == M_RNA) ? 1u << 22 : 0;
    return ((u & 0x7FFFFFFFu) + bias) >> 23;
}

/* bfloat16 and float8e8m0 codes of element i: from the float32 lane of a 32-bit source, from the
 * exact double of a 64-bit one */
INLINE uint32_t wide_code(const uint8_t *s, size_t i, int sk, int e8, int mode)
{
    if (sk == S_I32 || sk == S_U32) {
        const uint32_t x = X32(s + 4 * i), u = sk == S_I32 ? lane_i32(x) : lane_u32(x);
        return e8 ? narrow_e8m0(u, mode) : narrow_bf16(u, mode);
    }
    const uint32_t hi = HI64(s + 8 * i), lo = LO64(s + 8 * i);
    const uint32_t negm = sk == S_I64 ? (uint32_t)((int32_t)hi >> 31) : 0;
    const double v = sk == S_I64 ? i64_double(hi, lo) : u64_double(hi, lo);
    const uint32_t c = dbl_round(v, e8 ? 52 : 45, negm, nz_m(hi | lo), mode, e8);
    return e8 ? c : c | (negm & 0x8000u);
}

/* The block functions: n codes of T into out. The codes of 64-bit sources into bfloat16 and
 * float8e8m0 go through a uint32 block (its loop over 4-lane vectors keeps the constants in
 * registers, where one producing 16 bytes per step spills them); the others straight (the source
 * block is read as it goes, a vector's elements before their codes are stored, so an in-place
 * call works; out is a block of the kernel's own then). */
enum { K_F, K_FNUZ, K_BF16, K_E8M0 };
#define IFN_CODE(sk, kind, mode)                                                                \
    (kind <= K_FNUZ ? narrow_clamped(load_sat(src, i, sk), &p, mode, sk == S_I32 || sk == S_I64, \
                                     kind == K_FNUZ)                                            \
                    : wide_code(src, i, sk, kind == K_E8M0, mode))
#define IFN_BLOCK(sk, kind, mode, T)                                                            \
    static void ifn_##sk##_##kind##_##mode##_##T(uint8_t *out, const uint8_t *src, size_t n,    \
                                                 const ifn_par *pp)                             \
    {                                                                                           \
        const ifn_par p = *pp;                                                                  \
        if (kind >= K_BF16 && sk >= S_I64) {                                                    \
            _Alignas(64) uint32_t c[DT_PBLOCK];                                                 \
            for (size_t i = 0; i < n; i++)                                                      \
                c[i] = IFN_CODE(sk, kind, mode);                                                \
            for (size_t i = 0; i < n; i++) {                                                    \
                const T t = (T)c[i];                                                            \
                memcpy(out + i * sizeof(T), &t, sizeof t);                                      \
            }                                                                                   \
            return;                                                                             \
        }                                                                                       \
        for (size_t i = 0; i < n; i++) {                                                        \
            const T t = (T)IFN_CODE(sk, kind, mode);                                            \
            memcpy(out + i * sizeof(T), &t, sizeof t);                                          \
        }                                                                                       \
    }
#define IFN_MODES(sk, kind, T)                                                                  \
    IFN_BLOCK(sk, kind, M_RNE, T) IFN_BLOCK(sk, kind, M_RNA, T) IFN_BLOCK(sk, kind, M_FLOOR, T) \
    IFN_BLOCK(sk, kind, M_CEIL, T) IFN_BLOCK(sk, kind, M_TRUNC, T) IFN_BLOCK(sk, kind, M_ODD, T)
#define IFN_ROW(sk, kind, T)                                                                    \
    {ifn_##sk##_##kind##_M_RNE_##T, ifn_##sk##_##kind##_M_RNA_##T,                              \
     ifn_##sk##_##kind##_M_FLOOR_##T, ifn_##sk##_##kind##_M_CEIL_##T,                           \
     ifn_##sk##_##kind##_M_TRUNC_##T, ifn_##sk##_##kind##_M_ODD_##T}
#define IFN_KIND(kind, T)                                                                       \
    IFN_MODES(S_I32, kind, T) IFN_MODES(S_U32, kind, T) IFN_MODES(S_I64, kind, T)               \
    IFN_MODES(S_U64, kind, T)
#define IFN_TABLE(kind, T)                                                                      \
    {IFN_ROW(S_I32, kind, T), IFN_ROW(S_U32, kind, T), IFN_ROW(S_I64, kind, T),                 \
     IFN_ROW(S_U64, kind, T)}
IFN_KIND(K_F, uint8_t)
IFN_KIND(K_F, uint16_t)
IFN_KIND(K_FNUZ, uint8_t)
IFN_KIND(K_BF16, uint16_t)
IFN_KIND(K_E8M0, uint8_t)
/* [floats into 8 bits, into 16 bits, fnuz floats, bfloat16, float8e8m0][source][mode] */
static const ifn_block ifn_blocks[5][4][6] = {
    IFN_TABLE(K_F, uint8_t),     IFN_TABLE(K_F, uint16_t),   IFN_TABLE(K_FNUZ, uint8_t),
    IFN_TABLE(K_BF16, uint16_t), IFN_TABLE(K_E8M0, uint8_t)};

/* Blocks of codes written out directly; 4-bit ones (float4e2m1) through a block of code bytes,
 * two to a byte (element 2k in the low nibble, as ONNX) as 16-bit lanes. */
static void ifn_run(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    ifn_par p;
    memcpy(&p, k->local, sizeof p);
    const size_t sb = (size_t)p.sbytes, ob = (size_t)p.obits;
    const uint8_t *s = (const uint8_t *)src + begin * sb;
    uint8_t *d = (uint8_t *)dst + begin * ob / 8;
    _Alignas(64) uint8_t b[DT_PBLOCK];
    const size_t n = end - begin;
    for (size_t i = 0; i < n; i += DT_PBLOCK) { /* i: a multiple of 8 (begin is one too) */
        const size_t m = n - i < DT_PBLOCK ? n - i : DT_PBLOCK;
        dt_prefetch_span(s + i * sb, m * sb);
        if (ob >= 8) {
            p.block(d + i * ob / 8, s + i * sb, m, &p);
            continue;
        }
        p.block(b, s + i * sb, m, &p);
        if (m & 1)
            b[m] = 0; /* the padding code of an odd count (below DT_PBLOCK) */
        for (size_t j = 0; j < (m + 1) / 2; j++) {
            uint16_t w;
            memcpy(&w, b + 2 * j, 2);
#if defined(DT_LE)
            d[i / 2 + j] = (uint8_t)((w & 0xFu) | ((w >> 4) & 0xF0u));
#else
            d[i / 2 + j] = (uint8_t)(((w >> 8) & 0xFu) | ((w & 0xFu) << 4));
#endif
        }
    }
}

/* The narrow kernel's constants for sk -> df under r into *p; false when it has none. */
static bool ifn_setup(ifn_par *p, const dt_format *df, int sk, const dt_rules *r, int mode)
{
    memset(p, 0, sizeof *p);
    const int ob = df->stride_bits;
    dt_narrow n;
    if ((ob != 4 && ob != 8 && ob != 16) || !dt_narrow_setup(&n, df, dt_format_of(DTCAST_FLOAT32), r))
        return false;
    p->obits = ob;
    p->sbytes = sk >= S_I64 ? 8 : 4;
    if (df->tc == DT_TC_E8M0) {
        p->block = ifn_blocks[4][sk][mode];
        return ob == 8 && n.maxc > 127 + 64; /* no integer reaches the largest code (2^64: 191) */
    }
    if (df->type == DTCAST_BFLOAT16) {
        p->block = ifn_blocks[3][sk][mode];
        return true;
    }
    if (df->tc != DT_TC_FLOAT || df->bias < 1 || df->bias > 127)
        return false;
    p->d = 23 - (uint32_t)df->man_bits;
    p->hm1 = (1u << (p->d - 1)) - 1;
    p->dmask = (1u << p->d) - 1;
    p->vn_off = (uint32_t)(127 - df->bias) << 23;
    uint32_t top[2];
    for (int neg = 0; neg < 2; neg++) {
        /* the overflow code is the largest finite one or the next (as the narrowing kernels) */
        if (n.ovf[neg] != n.maxc && n.ovf[neg] != n.maxc + 1)
            return false;
        top[neg] = (n.ovf[neg] << p->d) + p->vn_off;
        if (top[neg] > 0x4B800000u) /* above 2^24 */
            return false;
    }
    p->lo = dt_f32_of_bits(p->vn_off);
    p->top = dt_f32_of_bits(top[0]);
    p->topx = top[0] ^ top[1];
    const bool fnuz = df->nan == DT_NAN_FNUZ;
    if (fnuz && ob != 8)
        return false;
    p->sign = fnuz ? n.sign : n.sign << p->d;
    p->sshift = (uint32_t)(32 - df->bits) - (fnuz ? 0 : p->d);
    p->block = ifn_blocks[fnuz ? 2 : ob == 16][sk][mode];
    /* the nearest modes take p->top for both signs */
    return !((mode == M_RNE || mode == M_RNA) && p->topx);
}

/* ---- integers -> float32 / float64 ------------------------------------------------------------ */
/* An unsigned 32-bit value as a double (exact: the signed conversion of u - 2^31, plus 2^31). */
INLINE double u32_double(uint32_t u) { return (double)(int32_t)(u ^ 0x80000000u) + 0x1p31; }

/* The bits of an exact double magnitude (an integer: never subnormal, never beyond float32)
 * rounded to float32 per mode, with the sign bit sg (0/1); nz: all ones unless it is 0. */
INLINE uint32_t dbits_f32(uint64_t db, uint32_t sg, uint32_t nz, int mode)
{
    const uint32_t hi = (uint32_t)(db >> 32), lo = (uint32_t)db;
    uint32_t kn = ((hi << 3) | (lo >> 29)) - (896u << 23);
    const uint32_t half = (lo >> 28) & 1, st = MASK((lo & 0x0FFFFFFFu) != 0) & 1;
    switch (mode) {
    case M_RNE: kn += half & (st | (kn & 1)); break;
    case M_RNA: kn += half; break;
    case M_FLOOR: kn += (half | st) & sg; break;
    case M_CEIL: kn += (half | st) & (sg ^ 1); break;
    case M_TRUNC: break;
    default: kn |= half | st; break;
    }
    return (sg << 31) | (kn & nz);
}

/* A 64-bit integer (signed: sg) rounded to float64 per mode. From 2^53 its p = msb - 52 <= 11
 * low bits are dropped, all within the 11 low bits xl of lo: the rest, x - xl (a multiple of
 * 2^11: exact as a double), is already on the grid of 2^p, so the rounding is xl's, in integers
 * (floor-based, which holds for two's complement); the two parts then add exactly. 2^p comes from
 * the exponent of t (|hi| - (hi < 0), or hi / 2 unsigned) as a float, exact with its 7 low bits
 * cleared. */
INLINE uint64_t int64_f64(uint32_t hi, uint32_t lo, int mode, int sg)
{
    const uint32_t t = sg ? hi ^ (uint32_t)((int32_t)hi >> 31) : hi >> 1;
    const float ft = (float)(int32_t)(t & ~0x7Fu);
    const float pf = dt_f32_of_bits(dt_bits_of_f32(ft) & 0x7F800000u) * (sg ? 0x1p-20f : 0x1p-19f);
    const uint32_t pw = (uint32_t)(int32_t)(pf > 1.0f ? pf : 1.0f), mask = pw - 1;
    const uint32_t negm = sg ? (uint32_t)((int32_t)hi >> 31) : 0;
    const uint32_t xl = lo & 0x7FFu, one = mask & 1; /* one: 1 when bits are dropped */
    const uint32_t odd = nz_m(lo & pw);              /* bit p of the floor */
    uint32_t r;
    switch (mode) {
    case M_RNE: r = (xl + (mask >> 1) + (odd & one)) & ~mask; break;
    case M_RNA: r = (xl + (mask >> 1) + (~negm & one)) & ~mask; break; /* ties away from 0 */
    case M_FLOOR: r = xl & ~mask; break;
    case M_CEIL: r = (xl + mask) & ~mask; break;
    case M_TRUNC: r = (xl + (negm & mask)) & ~mask; break;
    default: r = (xl & ~mask) + (nz_m(xl & mask) & ~odd & pw); break;
    }
    const double xh = ((double)(int32_t)(sg ? hi : hi ^ 0x80000000u) + (sg ? 0.5 : 0x1p31 + 0.5)) *
                          0x1p32 +
                      (double)(int32_t)((lo & ~0x7FFu) ^ 0x80000000u);
    /* the sign from x: rounding down, 0 sums to -0 */
    const uint64_t m = dt_bits_of_f64(xh + (double)(int32_t)r) & ~(UINT64_C(1) << 63);
    return m | (uint64_t)(negm & 0x80000000u) << 32;
}

/* The codes go straight into the destination (an element is read before its code is stored, so
 * an in-place call works). */
#define IF_KERNEL(name, SBYTES, DTYPE, EXPR)                                                    \
    static void name(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end) \
    {                                                                                           \
        (void)k;                                                                                \
        const uint8_t *s = (const uint8_t *)src + begin * SBYTES;                               \
        uint8_t *d = (uint8_t *)dst + begin * sizeof(DTYPE);                                    \
        const size_t n = end - begin;                                                           \
        for (size_t i0 = 0; i0 < n; i0 += DT_PBLOCK) {                                          \
            const size_t m = n - i0 < DT_PBLOCK ? n - i0 : DT_PBLOCK;                           \
            dt_prefetch_span(s + i0 * SBYTES, m * SBYTES);                                      \
            for (size_t i = i0; i < i0 + m; i++) {                                              \
                const uint8_t *e = s + i * SBYTES;                                              \
                const DTYPE c = (EXPR);                                                         \
                memcpy(d + i * sizeof(DTYPE), &c, sizeof c);                                    \
            }                                                                                   \
        }                                                                                       \
    }

#define I32_F32(e, mode)                                                                        \
    dbits_f32(dt_bits_of_f64((double)(int32_t)X32(e)) & ~(UINT64_C(1) << 63), X32(e) >> 31,       \
              MASK(X32(e) != 0), mode)
#define U32_F32(e, mode) dbits_f32(dt_bits_of_f64(u32_double(X32(e))), 0, MASK(X32(e) != 0), mode)
#define I64_F32(e, mode)                                                                        \
    (dbl_round(i64_double(HI64(e), LO64(e)), 29, (uint32_t)((int32_t)HI64(e) >> 31),             \
               nz_m(HI64(e) | LO64(e)), mode, 0) |                                              \
     (HI64(e) & 0x80000000u))
#define U64_F32(e, mode)                                                                        \
    dbl_round(u64_double(HI64(e), LO64(e)), 29, 0, nz_m(HI64(e) | LO64(e)), mode, 0)
#define I64_F64(e, mode) int64_f64(HI64(e), LO64(e), mode, 1)
#define U64_F64(e, mode) int64_f64(HI64(e), LO64(e), mode, 0)

/* Round to nearest even has a faster way when the floating-point environment rounds to nearest
 * (as it does unless the caller changed it): the exact value converted or summed in one float
 * operation (64-bit sources into float32 through the exact double of i64_double). Whether it
 * does is tested at each call (volatile: at run time; 1 + 2^-53 ties to 1, 1 + 3 * 2^-54 goes to
 * the nearest), and the integer kernel runs where it does not, or where floats are evaluated in
 * a wider format (FLT_EVAL_METHOD != 0: a second rounding). */
static bool env_nearest(void)
{
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
    volatile double one = 1.0, tie = 0x1p-53, above = 0x1.8p-53;
    return one + tie == 1.0 && one + above == 1.0 + 0x1p-52;
#else
    return false;
#endif
}
#define HW_I32_F32(e) dt_bits_of_f32((float)(int32_t)X32(e))
#define HW_U32_F32(e) dt_bits_of_f32((float)u32_double(X32(e)))
#define HW_I64_F32(e) dt_bits_of_f32((float)i64_double(HI64(e), LO64(e)))
#define HW_U64_F32(e) dt_bits_of_f32((float)u64_double(HI64(e), LO64(e)))
#define HW_I64_F64(e)                                                                           \
    dt_bits_of_f64(((double)(int32_t)HI64(e) + 0.5) * 0x1p32 +                                  \
                   (double)(int32_t)(LO64(e) ^ 0x80000000u))
#define HW_U64_F64(e)                                                                           \
    dt_bits_of_f64(((double)(int32_t)(HI64(e) ^ 0x80000000u) + (0x1p31 + 0.5)) * 0x1p32 +       \
                   (double)(int32_t)(LO64(e) ^ 0x80000000u))

#define IF_MODES(name, SBYTES, DTYPE, F, HW)                                                    \
    IF_KERNEL(name##_M_RNE, SBYTES, DTYPE, F(e, M_RNE))                                         \
    IF_KERNEL(name##_M_RNA, SBYTES, DTYPE, F(e, M_RNA))                                         \
    IF_KERNEL(name##_M_FLOOR, SBYTES, DTYPE, F(e, M_FLOOR))                                     \
    IF_KERNEL(name##_M_CEIL, SBYTES, DTYPE, F(e, M_CEIL))                                       \
    IF_KERNEL(name##_M_TRUNC, SBYTES, DTYPE, F(e, M_TRUNC))                                     \
    IF_KERNEL(name##_M_ODD, SBYTES, DTYPE, F(e, M_ODD))                                         \
    IF_KERNEL(name##_hw, SBYTES, DTYPE, HW(e))                                                  \
    static void name##_rne(const dt_kernel *k, void *dst, const void *src, size_t begin,       \
                           size_t end)                                                          \
    {                                                                                           \
        (env_nearest() ? name##_hw : name##_M_RNE)(k, dst, src, begin, end);                    \
    }
#define IF_ROW(name)                                                                            \
    {name##_rne, name##_M_RNA, name##_M_FLOOR, name##_M_CEIL, name##_M_TRUNC, name##_M_ODD}
IF_MODES(if_i32_f32, 4, uint32_t, I32_F32, HW_I32_F32)
IF_MODES(if_u32_f32, 4, uint32_t, U32_F32, HW_U32_F32)
IF_MODES(if_i64_f32, 8, uint32_t, I64_F32, HW_I64_F32)
IF_MODES(if_u64_f32, 8, uint32_t, U64_F32, HW_U64_F32)
IF_MODES(if_i64_f64, 8, uint64_t, I64_F64, HW_I64_F64)
IF_MODES(if_u64_f64, 8, uint64_t, U64_F64, HW_U64_F64)
/* [int32, uint32, int64, uint64][float32, float64][mode] */
static const dt_kernel_fn if_fns[4][2][6] = {
    {IF_ROW(if_i32_f32), {NULL}},
    {IF_ROW(if_u32_f32), {NULL}},
    {IF_ROW(if_i64_f32), IF_ROW(if_i64_f64)},
    {IF_ROW(if_u64_f32), IF_ROW(if_u64_f64)},
};

/* ---- the picker ------------------------------------------------------------------------------- */
bool dt_pint_float_find(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r)
{
    const int mode = dt_mode_of(r->round);
    if (mode < 0 || (sf->tc != DT_TC_SINT && sf->tc != DT_TC_UINT) ||
        sf->bits != sf->stride_bits || (sf->bits != 32 && sf->bits != 64))
        return false;
    const int sk = (sf->bits == 64 ? S_I64 : S_I32) + (sf->tc == DT_TC_UINT);
    if (df->type == DTCAST_FLOAT32 || df->type == DTCAST_FLOAT64) {
        k->fn = if_fns[sk][df->type == DTCAST_FLOAT64][mode];
        return k->fn != NULL;
    }
    ifn_par p;
    if (!ifn_setup(&p, df, sk, r, mode))
        return false;
    _Static_assert(sizeof p <= sizeof k->local, "the constants fit the kernel's bytes");
    memcpy(k->local, &p, sizeof p);
    k->fn = ifn_run;
    return true;
}
