/* One template, instantiated once per instruction set (kernels_avx2.c, kernels_avx2w.c,
 * kernels_avx512.c, kernels_avx512w.c): float bits -> a narrow float, float8e8m0 or integer
 * code, in every rounding mode, with integer ops only. The lanes hold float32 bits (loaded from
 * float32, float16, bfloat16, or float64, int32 and uint32 rounded to odd) or, with DT_LANE16,
 * 16-bit floats (twice the lanes per register; float and integer targets of 4 and 8 bits, and
 * of 1 and 2 bits or float8e8m0 where the layer asks): bfloat16 or float16 as they are,
 * float32, float64, int16, uint16, int32 and uint32 rounded to odd into bfloat16 (v_load32,
 * v_load64odd, v_loadi16/u16, v_loadi32odd/u32odd: for targets of at most 5 significand bits,
 * which it keeps two bits beyond). The including file
 * defines, for its lanes:
 *   VW            lanes per vector           V, K          vector and lane-mask types
 *   FN            function attributes        NAME(x)       x with the ISA's suffix
 *   v_set1(c) v_and v_andn(a,b) (~a & b) v_or v_add v_sub v_srli(a,imm) v_slli(a,imm)
 *   v_srlv(a,n) (not with DT_ROUND_BY_PRODUCT) v_sllv(a,n) (counts >= the lane width give 0)
 *   v_min(a,b) v_max(a,b) (signed, operands below the sign bit)  v_minu(a,b) (unsigned)
 *   k_gt(a,b) k_eq(a,b) (signed)  k_neg(x) (sign bit set)  k_and k_or k_not  v_sel(k,a,b) = k?a:b
 *   v_load32/16h/16b(p) (p: VW elements of float32 / float16 / bfloat16 -> lane bits)
 *   v_store8/16/32(p, v) (low bits of each lane)  v_store4(p, v) (VW/2 bytes, nibble pairs)
 *   DT_HAVE_STORE4X2 + v_store4x2(p, a, b): VW bytes, the nibble pairs of a then b
 *   v_signs(v) (the sign bit of every lane as the bits of a uint32_t, lane 0 in bit 0)
 *   v_opaque(&v) (keeps v in a register: no refolded loads)
 *   HAVE_F64ODD + v_load64odd(p): VW float64 -> float32 bits rounded to odd.
 *   HAVE_I32ODD + v_loadi32odd/u32odd(p): VW int32 / uint32 -> the lane bits rounded to odd
 *   (float targets; float8e8m0 too on 16-bit lanes).
 *   v_srl(a, n) (every lane shifted right by one run-time count): with integer sources.
 * and, with DT_LANE16, optionally:
 *   DT_NO_LOAD32: no v_load32 (16-bit sources only); float64 sources need HAVE_F64ODD too
 *   HAVE_I16 + v_loadi16/u16(p): VW int16 / uint16 -> bfloat16 bits rounded to odd (float targets)
 *   DT_LANE16_E8M0: float8e8m0 targets on bfloat16 lanes (its exponent is bfloat16's)
 *   v_signs(v): packed 1- and 2-bit targets (the lanes' sign bits; VW <= 16 unless the layer
 *   has v_bits2, whose 2-bit codes may fill 64 bits)
 *   DT_HAVE_BITS2 + v_bits2(c): the 2-bit codes of the lanes packed (lane i in bits 2i, 2i + 1)
 * and, on lanes without variable shifts:
 *   DT_ROUND_BY_PRODUCT + v_pow2r(sh) (2^(L_BITS - sh) for 1 <= sh < L_BITS, 2^-sh for
 *   -L_BITS < sh <= 0, 0 for -240 < sh <= -L_BITS: the low half of v times it is v << -sh)
 *   v_mulhi(a,b) v_mullo(a,b) (high and low halves of the unsigned product)
 *   v_avg(a,b) ((a + b + 1) >> 1 without overflow): shifts by a product.
 */

enum { K_FLOAT, K_FLOAT_UP, K_E8M0, K_INT, K_BOOL };
enum { S_F32, S_F16, S_BF16, S_F64, S_I16, S_U16, S_I32, S_U32 };

/* Packed 1- and 2-bit targets: 32-bit lanes always, 16-bit lanes where the layer has v_signs. */
#if !defined(DT_LANE16) || defined(DT_HAVE_SIGNS)
#define T_SUBBYTE 1
#endif
/* float8e8m0: 32-bit lanes always, 16-bit lanes (bfloat16 bits) where the layer asks. */
#if !defined(DT_LANE16) || defined(DT_LANE16_E8M0)
#define T_E8M0 1
#endif

/* The lanes' float format: significand bits L_MAN and bias L_BIAS for a source kind sk. */
#if defined(DT_LANE16) /* float16 bits, or bfloat16 bits (wider and integer sources: to odd) */
#define L_BITS 16
#define L_MAN(sk) ((sk) == S_F16 ? 10 : 7)
#define L_BIAS(sk) ((sk) == S_F16 ? 15 : 127)
#else
#define L_BITS 32
#define L_MAN(sk) ((void)(sk), 23)
#define L_BIAS(sk) ((void)(sk), 127)
#endif
#define L_ABS ((1u << (L_BITS - 1)) - 1)              /* |x|: all bits but the sign */
#define L_INF(sk) (L_ABS - ((1u << L_MAN(sk)) - 1))   /* the bits of +Inf */
#define L_BIG(sk) (((uint32_t)(L_BIAS(sk) + L_BITS) << L_MAN(sk)) - 1) /* below 2^L_BITS */

/* The template's pieces are always inlined into each (mode, kind, source, width) function, so
 * that those constant arguments fold away (left to itself, gcc keeps shared out-of-line copies
 * with run-time switches). */
#ifndef DT_INLINE
#define DT_INLINE __attribute__((always_inline)) inline
#endif

/* No all-ones vector constant appears below (nor x - 1, which gcc turns into x + all-ones):
 * gcc 12 materializes a 512-bit all-ones with vpternlogd r,r,r,0xFF inside the loop, which
 * waits for the last writer of r (often the previous iteration's result) and serializes the
 * loop (3x slower). */

/* |v| (the significand with its implicit bit, or the bits above a clamped exponent) shifted
 * right by sh (1..L_MAN + 2) and rounded per mode; sgn: all ones in lanes whose value is
 * negative. v plus the dropped range stays below 2^L_BITS. */
#if defined(DT_ROUND_BY_PRODUCT)
/* v * 2^(L_BITS - sh): the kept bits in the high half (returned), the dropped bits left-aligned
 * in the low half (*lo); for sh <= 0 the low half is v << -sh. */
static FN DT_INLINE V NAME(shift_product)(V v, V sh, V *lo)
{
    const V p = v_pow2r(sh);
    *lo = v_mullo(v, p);
    return v_mulhi(v, p);
}

/* t rounded per mode by the dropped bits lo: a round-up is the carry out of lo plus an
 * increment */
static FN DT_INLINE V NAME(round_product)(V t, V lo, V sgn, int mode)
{
    const V one = v_set1(1);
    switch (mode) {
    case M_RNE: /* up when lo + lsb > half: the carry of lo + lsb + half - 1, bit L_BITS - 1 of
                 * avg(lo, lsb + half - 2) (the sum plus one, halved) */
        return v_add(t, v_srli(v_avg(lo, v_add(v_and(t, one), v_set1(L_ABS - 1))), L_BITS - 1));
    case M_RNA: /* up when lo >= half: its top bit */
        return v_add(t, v_srli(lo, L_BITS - 1));
    case M_FLOOR: /* negative values round their magnitude up when inexact (min(lo, 1)) */
        return v_add(t, v_and(v_minu(lo, one), sgn));
    case M_CEIL: /* positive values do */
        return v_add(t, v_andn(sgn, v_minu(lo, one)));
    case M_TRUNC:
        return t;
    default: /* odd: an inexact result gets its lsb set */
        return v_or(t, v_minu(lo, one));
    }
}

static FN DT_INLINE V NAME(round_shift)(V v, V sh, V sgn, int mode)
{
    V lo;
    const V t = NAME(shift_product)(v, sh, &lo);
    return NAME(round_product)(t, lo, sgn, mode);
}
#else
static FN DT_INLINE V NAME(round_shift)(V v, V sh, V sgn, int mode)
{
    const V one = v_set1(1);
    const V t = v_srlv(v, sh); /* truncated */
    /* half the dropped range minus one, 2^(sh-1) - 1: L_ABS shifted right by L_BITS - sh */
    const V hm1 = v_srlv(v_set1(L_ABS), v_sub(v_set1(L_BITS), sh));
    /* the bits shifted out, 2^sh - 1: L_ABS shifted right by L_BITS - 1 - sh (sh < L_BITS) */
    const V mask = v_srlv(v_set1(L_ABS), v_sub(v_set1(L_BITS - 1), sh));
    switch (mode) {
    case M_RNE: /* add half - 1, plus one more if the kept lsb is odd: ties go to even */
        return v_srlv(v_add(v_add(v, hm1), v_and(t, one)), sh);
    case M_RNA: /* add half: ties go away from zero */
        return v_srlv(v_add(v, v_add(hm1, one)), sh);
    case M_FLOOR: /* negative values round their magnitude up: add all dropped-bit ones */
        return v_srlv(v_add(v, v_and(mask, sgn)), sh);
    case M_CEIL: /* positive values do */
        return v_srlv(v_add(v, v_andn(sgn, mask)), sh);
    case M_TRUNC:
        return t;
    default: /* odd: an inexact result gets its lsb set (min(dropped bits, 1) is that bit) */
        return v_or(t, v_minu(v_and(v, mask), one));
    }
}
#endif

#if defined(HAVE_I16) || defined(HAVE_I32ODD)
/* Narrow float target from an integer source: a nonzero integer is at least 1, normal in every
 * target (bias >= 1), so the clamped exponent is ec_hi and the rounding shift s1 - ec_hi the
 * same in every lane (the layer's v_srl: a shift by one run-time count); 0 stays 0 (the
 * subtraction saturates), and no result is -0, Inf or NaN. */
static FN DT_INLINE V NAME(narrow_float_int)(V x, const dt_narrow *n, int mode)
{
    const V a = v_and(x, v_set1(L_ABS));
    const K neg = k_neg(x);
    const V c = v_set1((n->ec_hi - 1) << L_MAN(S_I16));
    const V v = v_sub(a, v_minu(a, c)); /* a - ((ec_hi - 1) << L_MAN), 0 for 0 */
    const int sh = (int)(n->s1 - n->ec_hi);
    const V one = v_set1(1);
    const V hm1 = v_set1((1u << sh >> 1) - 1); /* half the dropped range minus one */
    const V mask = v_set1((1u << sh) - 1);     /* the dropped bits */
    const V t = v_srl(v, sh);
    const V sgn = v_sub(v_set1(0), v_srli(x, L_BITS - 1));
    V mag;
    switch (mode) {
    case M_RNE: /* add half - 1, plus one more if the kept lsb is odd: ties go to even */
        mag = v_srl(v_add(v_add(v, hm1), v_and(t, one)), sh);
        break;
    case M_RNA: /* add half: ties go away from zero */
        mag = v_srl(v_add(v, v_add(hm1, one)), sh);
        break;
    case M_FLOOR: /* negative values round their magnitude up: add all dropped-bit ones */
        mag = v_srl(v_add(v, v_and(mask, sgn)), sh);
        break;
    case M_CEIL: /* positive values do */
        mag = v_srl(v_add(v, v_andn(sgn, mask)), sh);
        break;
    case M_TRUNC:
        mag = t;
        break;
    default: /* odd: an inexact result gets its lsb set */
        mag = v_or(t, v_minu(v_and(v, mask), one));
        break;
    }
    const V ovf = mode == M_FLOOR || mode == M_CEIL
                      ? v_sel(neg, v_set1(n->ovf[1]), v_set1(n->ovf[0])) : v_set1(n->ovf[0]);
    mag = v_sel(k_gt(mag, v_set1(n->maxc)), ovf, mag);
    return v_or(mag, v_sel(neg, v_set1(n->sign), v_set1(0))); /* negative values are never 0 */
}

#endif
/* Narrow float target: a format of fewer significand bits than the lanes'. Its bias B is at
 * most the lanes' (up = 0), or above it (up = 1: float16 lanes -> float8e5m2fnuz). */
static FN DT_INLINE V NAME(narrow_float)(V x, const dt_narrow *n, int mode, int sk, int up)
{
#if defined(HAVE_I16) || defined(HAVE_I32ODD)
    if (sk >= S_I16 && !up)
        return NAME(narrow_float_int)(x, n, mode);
#endif
    const V a = v_and(x, v_set1(L_ABS));
    const K neg = k_neg(x);
    const V e = v_srli(a, L_MAN(sk));
    /* Clamp the exponent to [1, ec_hi] (ec_hi: the lane exponent of the target's exponent 1):
     * below, the target is subnormal (its quantum is fixed, so the shift grows); 1 also covers
     * the lanes' own subnormals, whose implicit bit is 0. */
    const V ec = v_min(v_max(e, v_set1(1)), v_set1(n->ec_hi));
    /* v = a - ((ec - 1) << L_MAN): the significand with its implicit bit, plus the exponent
     * above ec (normal targets: the biased target exponent lands right above the kept bits). */
    V v = v_sub(v_add(a, v_set1(1u << L_MAN(sk))), v_slli(ec, L_MAN(sk)));
    if (up) /* ec is 1, so v = a: a normal lane's exponent moves up by n->up, a subnormal
             * lane's significand moves up by n->up bits */
        v = v_sel(k_eq(e, v_set1(0)), v_sllv(a, v_set1(n->up)),
                  v_add(a, v_set1(n->up << L_MAN(sk))));
    const V sh = v_min(v_sub(v_set1(n->s1), ec), v_set1(L_MAN(sk) + 2)); /* + 2: below half
                                                                         * the quantum */
    V mag = NAME(round_shift)(v, sh, v_sub(v_set1(0), v_srli(x, L_BITS - 1)), mode);
    /* The sign, unless the result is a zero the target cannot sign (fnuz); the rounded
     * magnitude of an infinite input is not zero either, so the overflow and infinite results
     * below (never zero) take it too. */
    const V sg = v_sel(neg, v_set1(n->sign), v_set1(0));
    const V sm = v_sel(k_gt(mag, v_set1(0)), sg, v_and(sg, v_set1(n->keep_neg_zero)));
    /* Overflow: the rounded magnitude passed the largest finite code (per sign where the mode
     * is floor or ceil: they give max on one side). Then infinite and NaN inputs. */
    const V ovf = mode == M_FLOOR || mode == M_CEIL
                      ? v_sel(neg, v_set1(n->ovf[1]), v_set1(n->ovf[0])) : v_set1(n->ovf[0]);
    mag = v_sel(k_gt(mag, v_set1(n->maxc)), ovf, mag);
    if (sk >= S_I16) /* integer sources have neither */
        return v_or(mag, sm);
    mag = v_sel(k_eq(a, v_set1(L_INF(sk))), v_sel(neg, v_set1(n->inf[1]), v_set1(n->inf[0])),
                mag);
    return v_sel(k_gt(a, v_set1(L_INF(sk))), v_sel(neg, v_set1(n->nan[1]), v_set1(n->nan[0])),
                 v_or(mag, sm));
}

#if defined(T_E8M0)
/* float8e8m0: the power of two nearest |x| per mode (the sign is ignored, so floor is trunc and
 * ceil rounds up; the 1-bit significand is odd, so rne ties go up and odd truncates). The lanes
 * have float32's exponent (float32 or bfloat16 bits). */
static FN DT_INLINE V NAME(narrow_e8m0)(V x, const dt_narrow *n, int mode, int sk)
{
    const uint32_t bias = mode == M_CEIL ? (1u << L_MAN(sk)) - 1
                          : (mode == M_RNE || mode == M_RNA) ? 1u << (L_MAN(sk) - 1) : 0;
    const V a = v_and(x, v_set1(L_ABS));
    /* normal lanes: the biased exponent plus a carry from the rounded significand */
    const V cn = v_srli(v_add(a, v_set1(bias)), L_MAN(sk));
    /* subnormal lanes (|x| < 2^-126): 2a is |x| in units where 2^-127 is exponent 1; codes
     * below 2^-127 (and zero) are 0x00, the format's smallest value */
    const V ys = v_srli(v_add(v_slli(a, 1), v_set1(bias)), L_MAN(sk));
    const V cs = v_sub(ys, v_minu(ys, v_set1(1))); /* max(ys, 1) - 1 */
    V c = v_sel(k_gt(v_set1(1u << L_MAN(sk)), a), cs, cn);
    c = v_minu(c, v_set1(n->maxc)); /* 0xFE (saturate, trunc) or 0xFF */
    return v_sel(k_gt(a, v_set1(L_INF(sk) - 1)), v_set1(0xFF), c);
}

#endif

/* Integer target of at most L_BITS bits: round |x| to an integer, then wrap or saturate. */
static FN DT_INLINE V NAME(narrow_int)(V x, const dt_narrow *n, int mode, int sk)
{
    const uint32_t q = L_BIAS(sk) + L_MAN(sk); /* the exponent of a lane whose quantum is 1 */
    const V a = v_and(x, v_set1(L_ABS));
    const K neg = k_neg(x);
    const V e = v_srli(a, L_MAN(sk));
    const V ec = v_max(e, v_set1(1));
    const V v = v_sub(v_add(a, v_set1(1u << L_MAN(sk))), v_slli(ec, L_MAN(sk))); /* significand */
    /* |x| = v * 2^(ec - q): right shifts below 2^L_MAN (rounded), left shifts above (modulo
     * 2^L_BITS: counts >= L_BITS give 0, as the value is then a multiple of 2^L_BITS) */
    const V sh = v_min(v_sub(v_set1(q), ec), v_set1(L_MAN(sk) + 2));
    const V sgn = v_sub(v_set1(0), v_srli(x, L_BITS - 1));
    const K left = k_gt(ec, v_set1(q - 1)); /* no fraction: shift left by ec - q >= 0 */
#if defined(DT_ROUND_BY_PRODUCT) /* there (sh = q - ec <= 0) the product's low half */
    V lo;
    const V t = NAME(shift_product)(v, sh, &lo);
    V mag = v_sel(left, lo, NAME(round_product)(t, lo, sgn, mode));
#else
    V mag = v_sel(left, v_sllv(v, v_sub(ec, v_set1(q))), NAME(round_shift)(v, sh, sgn, mode));
#endif
    /* saturate: |x| >= 2^L_BITS (Inf too) is beyond every target; clamp per sign */
    const V lim = v_sel(neg, v_set1(n->imin_mag), v_set1(n->imax));
    const V sat_mag = v_sel(k_gt(a, v_set1(L_BIG(sk))), lim, v_minu(mag, lim));
    const V m2 = v_sel(k_eq(v_set1(n->isat), v_set1(0)), mag, sat_mag);
    /* two's complement of the magnitude for negative values, then the target's bits */
    V code = v_and(v_sel(neg, v_sub(v_set1(0), m2), m2), v_set1(n->imask));
    /* NaN -> 0; Inf -> 0 (wrap) or the clamp above (saturate) */
    const K special = k_gt(a, v_set1(L_INF(sk) - 1));
    const K zero = k_or(k_gt(a, v_set1(L_INF(sk))),
                        k_and(special, k_eq(v_set1(n->isat), v_set1(0))));
    return v_sel(zero, v_set1(0), code);
}

#if !defined(DT_LANE16)
/* bool: nonzero (NaN too) is 1; |x| + 0x7FFFFFFF carries into bit 31 exactly when |x| != 0 */
static FN DT_INLINE V NAME(narrow_bool)(V x)
{
    return v_srli(v_add(v_and(x, v_set1(0x7FFFFFFF)), v_set1(0x7FFFFFFF)), 31);
}

#endif

/* A float target without a sign bit (n->no_sign; float8e5m3fnu): code c was computed for |x|
 * (n->sign is 0); a negative nonzero input that is not NaN gives the rules' code of a negative
 * finite value or of -Inf instead (integer sources: never infinite). */
static FN DT_INLINE V NAME(unsigned_fix)(V x, V c, const dt_narrow *n, int sk)
{
    const V a = v_and(x, v_set1(L_ABS));
    K neg = k_and(k_neg(x), k_gt(a, v_set1(0)));
    if (sk >= S_I16)
        return v_sel(neg, v_set1(n->neg_fin), c);
    neg = k_and(neg, k_gt(v_set1(L_INF(sk) + 1), a)); /* not NaN */
    return v_sel(neg, v_sel(k_eq(a, v_set1(L_INF(sk))), v_set1(n->neg_inf), v_set1(n->neg_fin)),
                 c);
}

static FN DT_INLINE V NAME(narrow_any)(V x, const dt_narrow *n, int mode, int kind, int sk)
{
    if (kind == K_FLOAT || kind == K_FLOAT_UP) {
        const V c = NAME(narrow_float)(x, n, mode, sk, kind == K_FLOAT_UP);
        return n->no_sign ? NAME(unsigned_fix)(x, c, n, sk) : c;
    }
#if defined(T_E8M0)
    if (kind == K_E8M0)
        return NAME(narrow_e8m0)(x, n, mode, sk);
#endif
#if !defined(DT_LANE16)
    if (kind == K_BOOL)
        return NAME(narrow_bool)(x);
#endif
    return NAME(narrow_int)(x, n, mode, sk);
}

static FN DT_INLINE V NAME(load_any)(const uint8_t *p, int src)
{
    switch (src) {
#if !defined(DT_NO_LOAD32)
    case S_F32:
        return v_load32(p);
#endif
#if defined(HAVE_F64ODD)
    case S_F64:
        return v_load64odd(p);
#endif
#if defined(HAVE_I16)
    case S_I16:
        return v_loadi16(p);
    case S_U16:
        return v_loadu16(p);
#endif
#if defined(HAVE_I32ODD)
    case S_I32:
        return v_loadi32odd(p);
    case S_U32:
        return v_loadu32odd(p);
#endif
    case S_BF16:
        return v_load16b(p);
    default:
        return v_load16h(p);
    }
}

#if defined(T_SUBBYTE)
/* 16 mask bits spread to the even bits of 32: each step moves the upper half of every group
 * up by half the group's width (pdep where the ISA has BMI2) */
static DT_INLINE uint32_t NAME(spread2)(uint32_t x)
{
    x = (x | x << 8) & 0x00FF00FFu;
    x = (x | x << 4) & 0x0F0F0F0Fu;
    x = (x | x << 2) & 0x33333333u;
    return (x | x << 1) & 0x55555555u;
}

/* packed sub-byte codes: bit j of every lane's code, moved to bit 31, gathered as one mask */
static FN DT_INLINE void NAME(store_bits)(uint8_t *p, V c, int obits)
{
    uint64_t w = v_signs(v_slli(c, L_BITS - 1)); /* VW <= 32: 2-bit codes fill <= 64 bits */
    if (obits == 2) { /* element i in bits 2i (bit 0 of its code) and 2i + 1 (bit 1) */
#if defined(DT_HAVE_BITS2)
        w = v_bits2(c);
#else
        const uint32_t hi = v_signs(v_slli(c, L_BITS - 2));
#if defined(DT_HAVE_PDEP)
        w = _pdep_u32((uint32_t)w, 0x55555555u) | _pdep_u32(hi, 0xAAAAAAAAu);
#else
        w = NAME(spread2)((uint32_t)w) | NAME(spread2)(hi) << 1;
#endif
#endif
    }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &w, VW * (size_t)obits / 8);
#else
    for (int i = 0; i < VW * obits / 8; i++)
        p[i] = (uint8_t)(w >> (8 * i));
#endif
}

#endif

static FN DT_INLINE void NAME(store_any)(uint8_t *p, V c, int obits)
{
    switch (obits) {
#if defined(T_SUBBYTE)
    case 1:
    case 2:
        NAME(store_bits)(p, c, obits);
        break;
#endif
    case 4:
        v_store4(p, c);
        break;
#if !defined(DT_LANE16)
    case 16:
        v_store16(p, c);
        break;
    case 32:
        v_store32(p, c);
        break;
#endif
    default:
        v_store8(p, c);
        break;
    }
}

/* The loop: whole vectors, then the tail through a zeroed block (reads before writes, so an
 * in-place narrowing conversion is safe). */
static FN DT_INLINE void NAME(narrow_span)(const dt_kernel *k, void *dst, const void *src,
                                        size_t begin, size_t end, int mode, int kind, int sk,
                                        int obits)
{
    const size_t sbytes = sk == S_F64 ? 8 : sk == S_F32 || sk >= S_I32 ? 4 : 2;
    const uint8_t *s = (const uint8_t *)src + begin * sbytes;
    uint8_t *d = (uint8_t *)dst + begin * (size_t)obits / 8;
    const dt_narrow nl = k->n, *n = &nl; /* a local copy: the stores cannot alias it */
    size_t count = end - begin, i = 0;
#if defined(DT_HAVE_STORE4X2)
    if (obits == 4) /* nibble pairs of two vectors at once: one shuffle, one store */
        for (; i + 2 * VW <= count; i += 2 * VW) {
            dt_prefetch_span(s + i * sbytes, 2 * VW * sbytes);
            V x0 = NAME(load_any)(s + i * sbytes, sk), x1 = NAME(load_any)(s + (i + VW) * sbytes, sk);
            v_opaque(&x0);
            v_opaque(&x1);
            v_store4x2(d + i / 2, NAME(narrow_any)(x0, n, mode, kind, sk),
                       NAME(narrow_any)(x1, n, mode, kind, sk));
        }
#endif
    for (; i + VW <= count; i += VW) {
        dt_prefetch_span(s + i * sbytes, VW * sbytes);
        V x = NAME(load_any)(s + i * sbytes, sk);
        v_opaque(&x); /* loaded once (see the ISA layer) */
        NAME(store_any)(d + i * (size_t)obits / 8, NAME(narrow_any)(x, n, mode, kind, sk), obits);
    }
    if (i < count) {
        uint8_t in[VW * 8] = {0}, out[VW * 4];
        const size_t rest = count - i;
        memcpy(in, s + i * sbytes, rest * sbytes);
        V x = NAME(load_any)(in, sk);
        NAME(store_any)(out, NAME(narrow_any)(x, n, mode, kind, sk), obits);
        memcpy(d + i * (size_t)obits / 8, out, (rest * (size_t)obits + 7) / 8);
    }
}

/* With the kernel's own streaming stores (dt_kernel.nt; an ISA with DT_HAVE_NT_LINE8, 8-bit
 * outputs): the head up to the first 64-byte boundary of the output and the tail by
 * narrow_span, the lines between from 64 / VW vectors each, one non-temporal store a line.
 * In place stays safe: a line's 64 sources are read before it is written, and it lies below
 * every later source. */
static FN DT_INLINE void NAME(narrow_loop)(const dt_kernel *k, void *dst, const void *src,
                                        size_t begin, size_t end, int mode, int kind, int sk,
                                        int obits)
{
#if defined(DT_HAVE_NT_LINE8)
    if (obits == 8 && k->nt) {
        const size_t sbytes = sk == S_F64 ? 8 : sk == S_F32 || sk >= S_I32 ? 4 : 2;
        uint8_t *d = (uint8_t *)dst;
        const uint8_t *s = (const uint8_t *)src;
        size_t i = begin + (size_t)(-(uintptr_t)(d + begin) & 63);
        i = i < end ? i : end;
        NAME(narrow_span)(k, dst, src, begin, i, mode, kind, sk, obits);
        const dt_narrow nl = k->n, *n = &nl;
        for (; i + 64 <= end; i += 64) {
            V c[64 / VW];
            dt_prefetch_span(s + i * sbytes, 64 * sbytes);
            for (int j = 0; j < 64 / VW; j++) {
                V x = NAME(load_any)(s + (i + (size_t)j * VW) * sbytes, sk);
                v_opaque(&x);
                c[j] = NAME(narrow_any)(x, n, mode, kind, sk);
            }
            v_nt_line8(d + i, c);
        }
        NAME(narrow_span)(k, dst, src, i, end, mode, kind, sk, obits);
        return;
    }
#endif
    NAME(narrow_span)(k, dst, src, begin, end, mode, kind, sk, obits);
}

/* The template's source kind of sf (S_F32 ..), or -1. */
static int NAME(source_kind)(const dt_format *sf)
{
    switch (sf->type) {
    case DTCAST_FLOAT32:
        return S_F32;
    case DTCAST_FLOAT16:
        return S_F16;
    case DTCAST_BFLOAT16:
        return S_BF16;
    case DTCAST_FLOAT64:
        return S_F64;
#if defined(HAVE_I16)
    case DTCAST_INT16:
        return S_I16;
    case DTCAST_UINT16:
        return S_U16;
#endif
#if defined(HAVE_I32ODD)
    case DTCAST_INT32:
        return S_I32;
    case DTCAST_UINT32:
        return S_U32;
#endif
    default:
        return -1;
    }
}

/* The output widths (stride bits) a kind has targets of: floats are float4, float8 and (32-bit
 * lanes) float16/bfloat16, and from 32-bit integers at most 8 bits; float8e8m0 and bool are
 * bytes; integers are every width the lanes hold. narrow_pick takes no other width and
 * narrow_width compiles a loop for these only (with kind and sk constant, the others fold
 * away: a third less code in these files, the same kernels). */
static DT_INLINE bool NAME(width_ok)(int kind, int sk, int obits)
{
    switch (kind) {
    case K_E8M0:
    case K_BOOL:
        return obits == 8;
    case K_FLOAT:
    case K_FLOAT_UP:
        return obits == 4 || obits == 8 || (obits == 16 && L_BITS == 32 && sk < S_I32);
    default:
        return true;
    }
}

/* The output width, chosen once per call. */
static FN DT_INLINE void NAME(narrow_width)(const dt_kernel *k, void *dst, const void *src,
                                         size_t b, size_t e, int mode, int kind, int sk)
{
#define T_WIDTH(w)                                                                              \
    if (NAME(width_ok)(kind, sk, w))                                                            \
        NAME(narrow_loop)(k, dst, src, b, e, mode, kind, sk, w);                                \
    break
    switch (k->df->stride_bits) {
#if defined(T_SUBBYTE)
    case 1:
        T_WIDTH(1);
    case 2:
        T_WIDTH(2);
#endif
#if !defined(DT_LANE16)
    case 16:
        T_WIDTH(16);
    case 32:
        T_WIDTH(32);
#endif
    case 4:
        T_WIDTH(4);
    default:
        T_WIDTH(8);
    }
#undef T_WIDTH
}

/* One function per (mode, kind, source). */
#define DT_NARROW_FN(mode, kind, sk)                                                            \
    static FN void NAME(narrow_##mode##_##kind##_##sk)(const dt_kernel *k, void *dst,           \
                                                       const void *src, size_t b, size_t e)     \
    {                                                                                           \
        NAME(narrow_width)(k, dst, src, b, e, mode, kind, sk);                                  \
    }
/* The modes of a (kind, source): round-to-nearest-even, the default and what nearly every
 * caller asks for, has its own function with the mode folded in; the five others (rna, floor,
 * ceil, trunc, odd) call one body that takes the mode at run time: always-predicted branches
 * in the loop, 1 % slower from float32 and 5 % from 16-bit sources on AMD EPYC (BENCHMARKS.md,
 * "one body for the directed modes"), where six folded bodies were two thirds of the compile
 * time of the files that include this one (make test: 30 CPU s).
 * DT_KERNEL_RUNTIME_MODES (the sanitizer build, Makefile SAN=1): rne through that body too, so
 * one instrumented body runs the same lines on the same memory as the folded one, which the
 * plain build compiles and its tests check bit for bit. */
#define DT_NARROW_MODE_FN(mode, kind, sk)                                                       \
    static FN void NAME(narrow_##mode##_##kind##_##sk)(const dt_kernel *k, void *dst,           \
                                                       const void *src, size_t b, size_t e)     \
    {                                                                                           \
        NAME(narrow_rt_##kind##_##sk)(k, dst, src, b, e, mode);                                 \
    }
#if defined(DT_KERNEL_RUNTIME_MODES)
#define DT_NARROW_RNE(kind, sk) DT_NARROW_MODE_FN(M_RNE, kind, sk)
#else
#define DT_NARROW_RNE(kind, sk) DT_NARROW_FN(M_RNE, kind, sk)
#endif
#define DT_NARROW_MODES(kind, sk)                                                               \
    static FN DT_NOCLONE void NAME(narrow_rt_##kind##_##sk)(                                    \
        const dt_kernel *k, void *dst, const void *src, size_t b, size_t e, int mode)           \
    {                                                                                           \
        NAME(narrow_width)(k, dst, src, b, e, mode, kind, sk);                                  \
    }                                                                                           \
    DT_NARROW_RNE(kind, sk)                                                                     \
    DT_NARROW_MODE_FN(M_RNA, kind, sk)                                                          \
    DT_NARROW_MODE_FN(M_FLOOR, kind, sk)                                                        \
    DT_NARROW_MODE_FN(M_CEIL, kind, sk)                                                         \
    DT_NARROW_MODE_FN(M_TRUNC, kind, sk)                                                        \
    DT_NARROW_MODE_FN(M_ODD, kind, sk)
#define DT_NARROW_ROW(kind, sk)                                                                 \
    {NAME(narrow_M_RNE_##kind##_##sk), NAME(narrow_M_RNA_##kind##_##sk),                        \
     NAME(narrow_M_FLOOR_##kind##_##sk), NAME(narrow_M_CEIL_##kind##_##sk),                     \
     NAME(narrow_M_TRUNC_##kind##_##sk), NAME(narrow_M_ODD_##kind##_##sk)}

#if defined(DT_LANE16)
DT_NARROW_MODES(K_FLOAT, S_F16)
DT_NARROW_MODES(K_FLOAT_UP, S_F16)
DT_NARROW_MODES(K_INT, S_F16)
DT_NARROW_MODES(K_FLOAT, S_BF16)
DT_NARROW_MODES(K_INT, S_BF16)
#if !defined(DT_NO_LOAD32)
DT_NARROW_MODES(K_FLOAT, S_F32)
DT_NARROW_MODES(K_INT, S_F32)
#define T_ROW_F32 {DT_NARROW_ROW(K_FLOAT, S_F32), {NULL}, DT_NARROW_ROW(K_INT, S_F32), {NULL}}
#else
#define T_ROW_F32 {{NULL}}
#endif
#if !defined(DT_NO_LOAD32) && defined(HAVE_F64ODD)
DT_NARROW_MODES(K_FLOAT, S_F64)
#define T_ROW_F64 {DT_NARROW_ROW(K_FLOAT, S_F64), {NULL}, {NULL}, {NULL}}
#else
#define T_ROW_F64 {{NULL}}
#endif
#if defined(T_E8M0)
DT_NARROW_MODES(K_E8M0, S_BF16)
#define T_E8M0_ROW(sk) DT_NARROW_ROW(K_E8M0, sk)
#else
#define T_E8M0_ROW(sk) {NULL}
#endif
#if defined(HAVE_I16)
DT_NARROW_MODES(K_FLOAT, S_I16)
DT_NARROW_MODES(K_FLOAT, S_U16)
#if defined(T_E8M0)
DT_NARROW_MODES(K_E8M0, S_I16)
DT_NARROW_MODES(K_E8M0, S_U16)
#endif
#define T_ROW_I16(sk) {DT_NARROW_ROW(K_FLOAT, sk), {NULL}, {NULL}, T_E8M0_ROW(sk)}
#else
#define T_ROW_I16(sk) {{NULL}}
#endif
#if defined(HAVE_I32ODD) /* int32 and uint32 rounded to odd into bfloat16, as int16 and uint16 */
DT_NARROW_MODES(K_FLOAT, S_I32)
DT_NARROW_MODES(K_FLOAT, S_U32)
#if defined(T_E8M0)
DT_NARROW_MODES(K_E8M0, S_I32)
DT_NARROW_MODES(K_E8M0, S_U32)
#endif
#define T_SOURCES 8
#else
#define T_SOURCES 6
#endif

/* [source][kind: float, float with a larger bias, integer, e8m0][mode] */
static const dt_kernel_fn NAME(narrow_fns)[T_SOURCES][4][6] = {
    T_ROW_F32,
    {DT_NARROW_ROW(K_FLOAT, S_F16), DT_NARROW_ROW(K_FLOAT_UP, S_F16), DT_NARROW_ROW(K_INT, S_F16),
     {NULL}},
    {DT_NARROW_ROW(K_FLOAT, S_BF16), {NULL}, DT_NARROW_ROW(K_INT, S_BF16), T_E8M0_ROW(S_BF16)},
    T_ROW_F64,
    T_ROW_I16(S_I16),
    T_ROW_I16(S_U16),
#if defined(HAVE_I32ODD)
    T_ROW_I16(S_I32),
    T_ROW_I16(S_U32),
#endif
};

/* The kernel for sf -> df under r on 16-bit lanes, or NULL; *lane: the lanes' float format,
 * for dt_narrow_setup. Targets: floats of fewer significand bits and integers, of 4 or 8 bits
 * (integers of 1 and 2 bits too where the layer packs them); float8e8m0 on bfloat16 lanes where
 * the layer asks. From float32, float64 and integers (rounded to odd into bfloat16): floats
 * of at most 5 significand bits, and from float32 saturating 4-bit integers (|x| < 2^6 keeps two
 * bits below 1, larger values saturate). */
static dt_kernel_fn NAME(narrow_pick)(const dt_format *df, const dt_format *sf, const dt_rules *r,
                                      const dt_format **lane)
{
    const int sk = NAME(source_kind)(sf);
    if (sk < 0)
        return NULL;
    const int sb = df->stride_bits;
#if defined(T_SUBBYTE)
    if (sb != 1 && sb != 2 && sb != 4 && sb != 8)
#else
    if (sb != 4 && sb != 8)
#endif
        return NULL;
    if (dt_mode_of(r->round) < 0)
        return NULL;
    const bool wide = sk != S_F16 && sk != S_BF16;
    *lane = wide ? dt_format_of(DTCAST_BFLOAT16) : sf;
    int kind;
    if (df->tc == DT_TC_FLOAT && df->man_bits < (*lane)->man_bits &&
        (!wide || df->man_bits <= (*lane)->man_bits - 2))
        kind = df->bias <= (*lane)->bias ? 0 : 1;
    else if ((df->tc == DT_TC_SINT || df->tc == DT_TC_UINT) &&
             (!wide || (sk == S_F32 && r->saturate_int && df->bits <= 4)))
        kind = 2;
    else if (df->tc == DT_TC_E8M0)
        kind = 3; /* the table has it for bfloat16 lanes only */
    else
        return NULL;
    static const int kinds[4] = {K_FLOAT, K_FLOAT_UP, K_INT, K_E8M0};
    if (!NAME(width_ok)(kinds[kind], sk, sb))
        return NULL;
    return NAME(narrow_fns)[sk][kind][dt_mode_of(r->round)];
}
#else
#define DT_NARROW_KINDS(sk)                                                                     \
    DT_NARROW_MODES(K_FLOAT, sk) DT_NARROW_MODES(K_E8M0, sk) DT_NARROW_MODES(K_INT, sk)
DT_NARROW_KINDS(S_F32)
DT_NARROW_KINDS(S_F16)
DT_NARROW_KINDS(S_BF16)
/* bool ignores the mode: one function per source */
DT_NARROW_FN(M_RNE, K_BOOL, S_F32)
DT_NARROW_FN(M_RNE, K_BOOL, S_F16)
DT_NARROW_FN(M_RNE, K_BOOL, S_BF16)
#if defined(HAVE_F64ODD)
DT_NARROW_MODES(K_FLOAT, S_F64)
DT_NARROW_MODES(K_E8M0, S_F64)
DT_NARROW_FN(M_RNE, K_BOOL, S_F64) /* rounded to odd, a nonzero stays nonzero, NaN stays NaN */
#endif
#if defined(HAVE_I32ODD) /* rounded to odd: >= 17 bits, two beyond every float target here */
DT_NARROW_MODES(K_FLOAT, S_I32)
DT_NARROW_MODES(K_FLOAT, S_U32)
#define T_ROW_I32(sk) {DT_NARROW_ROW(K_FLOAT, sk), {NULL}, {NULL}}
#else
#define T_ROW_I32(sk) {{NULL}}
#endif

/* [source][kind: float, e8m0, integer][mode] */
static const dt_kernel_fn NAME(narrow_fns)[8][3][6] = {
    {DT_NARROW_ROW(K_FLOAT, S_F32), DT_NARROW_ROW(K_E8M0, S_F32), DT_NARROW_ROW(K_INT, S_F32)},
    {DT_NARROW_ROW(K_FLOAT, S_F16), DT_NARROW_ROW(K_E8M0, S_F16), DT_NARROW_ROW(K_INT, S_F16)},
    {DT_NARROW_ROW(K_FLOAT, S_BF16), DT_NARROW_ROW(K_E8M0, S_BF16), DT_NARROW_ROW(K_INT, S_BF16)},
#if defined(HAVE_F64ODD)
    {DT_NARROW_ROW(K_FLOAT, S_F64), DT_NARROW_ROW(K_E8M0, S_F64), {NULL}},
#else
    {{NULL}},
#endif
    {{NULL}},
    {{NULL}},
    T_ROW_I32(S_I32),
    T_ROW_I32(S_U32),
};

static const dt_kernel_fn NAME(bool_fns)[4] = {
    NAME(narrow_M_RNE_K_BOOL_S_F32), NAME(narrow_M_RNE_K_BOOL_S_F16),
    NAME(narrow_M_RNE_K_BOOL_S_BF16),
#if defined(HAVE_F64ODD)
    NAME(narrow_M_RNE_K_BOOL_S_F64),
#else
    NULL,
#endif
};

/* The narrowing kernel for sf -> df under r, or NULL. */
static dt_kernel_fn NAME(narrow_pick)(const dt_format *df, const dt_format *sf, const dt_rules *r)
{
    const int sk = NAME(source_kind)(sf);
    int kind;
    if (sk < 0)
        return NULL;
    const int sb = df->stride_bits;
    if (sb != 1 && sb != 2 && sb != 4 && sb != 8 && sb != 16 && sb != 32)
        return NULL;
    if (df->tc == DT_TC_BOOL)
        return sk < S_I16 && NAME(width_ok)(K_BOOL, sk, sb) ? NAME(bool_fns)[sk] : NULL;
    if (df->tc == DT_TC_FLOAT && df->bits <= 16 && df->bias <= 127)
        kind = 0;
    else if (df->tc == DT_TC_E8M0)
        kind = 1;
    else if ((df->tc == DT_TC_SINT || df->tc == DT_TC_UINT) && df->bits <= 32)
        kind = 2;
    else
        return NULL;
    if ((sk == S_F64 || sk >= S_I16) && kind == 2)
        return NULL;
    /* 32-bit integers: float targets of at most 8 bits (into float16 and bfloat16 a chain
     * through float32 is faster) */
    if (sk >= S_I32 && (kind != 0 || df->bits > 8))
        return NULL;
    static const int kinds[3] = {K_FLOAT, K_E8M0, K_INT};
    if (dt_mode_of(r->round) < 0 || !NAME(width_ok)(kinds[kind], sk, sb))
        return NULL;
    return NAME(narrow_fns)[sk][kind][dt_mode_of(r->round)];
}
#endif
