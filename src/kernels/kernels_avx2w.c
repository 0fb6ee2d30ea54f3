/* AVX2 kernels on 16-bit lanes ("w": words): the narrowing template with 16 lanes holding
 * float16 or bfloat16 bits (int16 and uint16 rounded to odd into bfloat16), for conversions into
 * 8-, 4-, 2- and 1-bit floats and integers: twice the lanes of the float32-lane kernels in
 * kernels_avx2.c. AVX2 has no variable 16-bit shifts: shifts are products by powers of two,
 * looked up with pshufb, and rounding shifts keep both halves of the product
 * (DT_ROUND_BY_PRODUCT). Compiled for the target through function attributes only. */
#if defined(__x86_64__) && defined(__GNUC__)
#include "kernels.h"
#include "x86_attrs.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

#define DT_LANE16 1
#define DT_LANE16_E8M0 1
#define DT_ROUND_BY_PRODUCT 1
#define VW 16
#define FN DT_TARGET_AVX2
#define NAME(x) x##_avx2w
typedef __m256i V;
typedef __m256i K; /* masks are all-ones lanes */
static FN inline V v_set1(uint32_t c) { return _mm256_set1_epi16((short)(uint16_t)c); }
#define v_and _mm256_and_si256
#define v_andn _mm256_andnot_si256
#define v_or _mm256_or_si256
#define v_add _mm256_add_epi16
#define v_sub _mm256_sub_epi16
#define v_srli(a, n) _mm256_srli_epi16((a), (n))
#define v_slli(a, n) _mm256_slli_epi16((a), (n))
#define v_min _mm256_min_epi16
#define v_max _mm256_max_epi16
#define v_minu _mm256_min_epu16
/* every lane shifted right by the same run-time count (integer sources' rounding) */
static FN inline V v_srl(V a, int n) { return _mm256_srl_epi16(a, _mm_cvtsi32_si128(n)); }
#define v_mulhi _mm256_mulhi_epu16
#define v_mullo _mm256_mullo_epi16
#define v_avg _mm256_avg_epu16
#define k_gt _mm256_cmpgt_epi16
#define k_eq _mm256_cmpeq_epi16
#define k_and _mm256_and_si256
#define k_or _mm256_or_si256
static FN inline K k_neg(V x) { return _mm256_cmpgt_epi16(_mm256_setzero_si256(), x); }
static FN inline V v_sel(K k, V a, V b) { return _mm256_blendv_epi8(b, a, k); }

/* pshufb's table of powers: byte i is 2^i below 8, 0 from 8 */
static FN inline V pow2_table(void)
{
    return _mm256_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 0, 0, 0, 0, 0, 0, 0, 0,
                            1, 2, 4, 8, 16, 32, 64, -128, 0, 0, 0, 0, 0, 0, 0, 0);
}
/* 2^(16 - sh) (2^-sh for sh <= 0, 0 from -16 down): the low index byte is n = 16 - sh, the
 * high one n - 8; adding 0x60 with unsigned saturation sets bit 7 (pshufb gives 0) in every
 * byte from 32 (and n - 8 below 0) and keeps the low nibble of the others, which pshufb reads:
 * 2^n from the low byte for n mod 16 < 8, from the high one for n mod 16 >= 8 */
static FN inline V v_pow2r(V sh)
{
    /* n * 0x0101 - 0x0800 = (16 - sh) * 0x0101 - 0x0800 = 0x0810 - sh * 0x0101 */
    const V idx = _mm256_adds_epu8(_mm256_sub_epi16(v_set1(0x0810),
                                                    _mm256_mullo_epi16(sh, v_set1(0x0101))),
                                   v_set1(0x6060));
    return _mm256_shuffle_epi8(pow2_table(), idx);
}
/* a << n, 0 for n >= 16: a product by 2^n. With n clamped to 16, the low index byte is n and
 * the high one n - 8; adding 0x70 with unsigned saturation sets bit 7 (pshufb gives 0) in
 * every byte outside [0, 15] (n = 16; n - 8 below 0) and keeps the low nibble of the others. */
static FN inline V v_sllv(V a, V n)
{
    const V c = _mm256_min_epu16(n, v_set1(16));
    const V idx = _mm256_adds_epu8(_mm256_sub_epi16(_mm256_mullo_epi16(c, v_set1(0x0101)),
                                                    v_set1(0x0800)),
                                   v_set1(0x7070));
    return _mm256_mullo_epi16(a, _mm256_shuffle_epi8(pow2_table(), idx));
}
/* the sign bit of every word: the odd bits of the byte mask */
static FN inline uint32_t v_signs(V x)
{
    return _pext_u32((uint32_t)_mm256_movemask_epi8(x), 0xAAAAAAAAu);
}
#define DT_HAVE_SIGNS 1
/* 2-bit codes c packed: c * 0x4080 puts bit 0 of c at bit 7 and bit 1 at bit 15 (c << 7 and
 * c << 14 do not overlap), the byte mask takes bits 7 and 15 of word i as bits 2i, 2i + 1 */
static FN inline uint32_t v_bits2(V c)
{
    return (uint32_t)_mm256_movemask_epi8(_mm256_mullo_epi16(c, v_set1(0x4080)));
}
#define DT_HAVE_BITS2 1
#define DT_HAVE_PDEP 1

/* the lanes hold the 16-bit source's bits: a plain load for both 16-bit formats */
static FN inline V v_load16h(const uint8_t *p) { return _mm256_loadu_si256((const __m256i *)p); }
#define v_load16b v_load16h
/* The even and odd words as 2 x 8 int32 -> float32 (exact: 16-bit integers) -> 16 bfloat16 bits
 * rounded to odd, in order: the upper halves (even ones moved down, odd ones in place) with the
 * lsb set where the lower half (gathered the same way) is not 0. */
static FN inline V bf16odd(__m256i even, __m256i odd)
{
    const __m256i a = _mm256_castps_si256(_mm256_cvtepi32_ps(even));
    const __m256i b = _mm256_castps_si256(_mm256_cvtepi32_ps(odd));
    const __m256i hi = _mm256_blend_epi16(_mm256_srli_epi32(a, 16), b, 0xAA);
    const __m256i lo = _mm256_blend_epi16(a, _mm256_slli_epi32(b, 16), 0xAA);
    return _mm256_or_si256(hi, _mm256_min_epu16(lo, _mm256_set1_epi16(1)));
}
/* 2 x 8 float32 bits -> 16 bfloat16 bits rounded to odd, in order: pshufb gathers the upper
 * halves of each 128-bit half in its low qword and the lower halves in its high one, unpack
 * pairs the halves of a and b (quarters a0-3 b0-3 | a4-7 b4-7), the lsb is set where the lower
 * half is not 0, and vpermq orders the quarters */
static FN inline V bf16odd32(__m256i a, __m256i b)
{
    const __m256i sel = _mm256_setr_epi8(2, 3, 6, 7, 10, 11, 14, 15, 0, 1, 4, 5, 8, 9, 12, 13,
                                         2, 3, 6, 7, 10, 11, 14, 15, 0, 1, 4, 5, 8, 9, 12, 13);
    const __m256i sa = _mm256_shuffle_epi8(a, sel), sb = _mm256_shuffle_epi8(b, sel);
    const __m256i t = _mm256_or_si256(_mm256_unpacklo_epi64(sa, sb),
                                      _mm256_min_epu16(_mm256_unpackhi_epi64(sa, sb),
                                                       _mm256_set1_epi16(1)));
    return _mm256_permute4x64_epi64(t, 0xD8);
}
/* float32 rounded to odd into bfloat16 (8 bits: two beyond the targets' 5 and fewer; the same
 * exponent range, so no overflow, and NaN stays NaN) */
static FN inline V v_load32(const uint8_t *p)
{
    return bf16odd32(_mm256_loadu_si256((const __m256i *)p),
                     _mm256_loadu_si256((const __m256i *)(p + 32)));
}
/* 8 int32 -> float32 bits, exact below 2^24 and rounded to odd at 2^8 above (16 bits or more,
 * beyond bfloat16's 8): x >> 8 (rounded down) with the lsb set where bits were lost is exact
 * as a float32 (24 bits), then times 2^8 by an exponent add. For a negative x the floor is
 * ~q for the truncated magnitude q, and ~q | 1 = -(q | 1): the magnitude rounded to odd. Every
 * conversion is exact, whatever MXCSR says. */
static FN inline __m256i i32odd8(__m256i x)
{
    const __m256i t = _mm256_srai_epi32(x, 8);
    const __m256i lost = _mm256_min_epu32(_mm256_and_si256(x, _mm256_set1_epi32(0xFF)),
                                          _mm256_set1_epi32(1)); /* 1 where bits were lost */
    const __m256i big = _mm256_add_epi32(
        _mm256_castps_si256(_mm256_cvtepi32_ps(_mm256_or_si256(t, lost))),
        _mm256_set1_epi32(8 << 23));
    const __m256i small = _mm256_castps_si256(_mm256_cvtepi32_ps(x));
    /* small where |t| < 2^16 (|x| < 2^24: exact), big elsewhere (|x| > 2^24 - 2^8) */
    return _mm256_blendv_epi8(small, big,
                              _mm256_cmpgt_epi32(_mm256_abs_epi32(t), _mm256_set1_epi32(0xFFFF)));
}
/* the same for uint32: x >> 8 is below 2^24; x >= 2^24 (above int32's range too) takes big */
static FN inline __m256i u32odd8(__m256i x)
{
    const __m256i t = _mm256_srli_epi32(x, 8);
    const __m256i lost = _mm256_min_epu32(_mm256_and_si256(x, _mm256_set1_epi32(0xFF)),
                                          _mm256_set1_epi32(1));
    const __m256i big = _mm256_add_epi32(
        _mm256_castps_si256(_mm256_cvtepi32_ps(_mm256_or_si256(t, lost))),
        _mm256_set1_epi32(8 << 23));
    const __m256i small = _mm256_castps_si256(_mm256_cvtepi32_ps(x));
    return _mm256_blendv_epi8(small, big, _mm256_cmpgt_epi32(t, _mm256_set1_epi32(0xFFFF)));
}
/* 16 int32 / uint32 rounded to odd into float32, then into bfloat16 (odd twice is odd once) */
#define HAVE_I32ODD 1
static FN inline V v_loadi32odd(const uint8_t *p)
{
    return bf16odd32(i32odd8(_mm256_loadu_si256((const __m256i *)p)),
                     i32odd8(_mm256_loadu_si256((const __m256i *)(p + 32))));
}
static FN inline V v_loadu32odd(const uint8_t *p)
{
    return bf16odd32(u32odd8(_mm256_loadu_si256((const __m256i *)p)),
                     u32odd8(_mm256_loadu_si256((const __m256i *)(p + 32))));
}
#define HAVE_I16 1
static FN inline V v_loadi16(const uint8_t *p) /* words sign-extended: x_even * 1 + x_odd * 0 */
{
    const __m256i x = _mm256_loadu_si256((const __m256i *)p);
    return bf16odd(_mm256_madd_epi16(x, _mm256_set1_epi32(1)), _mm256_srai_epi32(x, 16));
}
static FN inline V v_loadu16(const uint8_t *p) /* zero-extended: a mask and a logical shift */
{
    const __m256i x = _mm256_loadu_si256((const __m256i *)p);
    return bf16odd(_mm256_and_si256(x, _mm256_set1_epi32(0xFFFF)), _mm256_srli_epi32(x, 16));
}

/* 16 words -> 16 bytes (the codes are below 256) */
static FN inline void v_store8(uint8_t *p, V c)
{
    _mm_storeu_si128((__m128i *)p, _mm_packus_epi16(_mm256_castsi256_si128(c),
                                                    _mm256_extracti128_si256(c, 1)));
}
/* 2 x 16 4-bit codes -> 16 bytes of nibble pairs: packus makes bytes (a0-7 b0-7 | a8-15 b8-15),
 * each word's high code joins its low one in the low byte, pshufb gathers those bytes (quarters
 * a0-7 b0-7 | a8-15 b8-15 in dwords 0, 1 of each 128-bit half), vpermd orders the quarters */
static FN inline __m128i nibbles(V a, V b)
{
    const __m256i w = _mm256_packus_epi16(a, b);
    const __m256i t = _mm256_or_si256(w, _mm256_srli_epi16(w, 4));
    const __m256i even = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1,
                                          0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i q = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(t, even),
                                                  _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    return _mm256_castsi256_si128(q);
}
static FN inline void v_store4(uint8_t *p, V c) { _mm_storel_epi64((__m128i *)p, nibbles(c, c)); }
#define DT_HAVE_STORE4X2 1
static FN inline void v_store4x2(uint8_t *p, V a, V b)
{
    _mm_storeu_si128((__m128i *)p, nibbles(a, b));
}
/* keeps a loaded vector in a register (see kernels_x86.h) */
static FN inline void v_opaque(V *x) { __asm__("" : "+v"(*x)); }
#include "kernels_tmpl.h"

/* ---- 4-bit float targets by counting thresholds -----------------------------------------------
 * The lanes' magnitude bits order as their values, and a 4-bit float has 8 magnitudes: in every
 * mode its magnitude code is the number of thresholds (lane bits) that |x| reaches, 8 meaning
 * overflow, and a pshufb of that count per sign gives the whole code (sign, -0, overflow). floor
 * and ceil round the magnitude toward zero on one sign and away on the other: the "away" lanes
 * compare |x| - 1 with the values themselves (code >= j + 1 iff |x| > value j), the "toward"
 * lanes |x| with them (code >= j iff |x| >= value j), one count more. |x| >= Inf and |x| >
 * Inf count too: the counts past the finite ones are Inf and NaN. For float sources (integer
 * ones are faster through the template: one shift rounds them all). Constants in k->local. */
typedef struct f4_consts {
    uint16_t below[9];   /* threshold - 1: a lane counts where its bits are greater */
    uint8_t code[2][16]; /* the code by count, for positive and negative lanes */
} f4_consts;

static FN DT_INLINE V f4_count(V x, const V *below, V tpos, V tneg, int mode, int sk)
{
    const V a = v_and(x, v_set1(L_ABS));
    const K neg = k_neg(x);
    V b = a;
    if (mode == M_FLOOR) /* negative lanes round their magnitude away: |x| - 1 (all-ones mask) */
        b = v_add(a, neg);
    else if (mode == M_CEIL) /* positive lanes do */
        b = v_sub(a, v_andn(neg, v_set1(1)));
    /* minus the count: a sum of all-ones masks, as a tree */
    V s = v_add(v_add(k_gt(b, below[0]), k_gt(b, below[1])),
                v_add(k_gt(b, below[2]), k_gt(b, below[3])));
    s = v_add(s, v_add(v_add(k_gt(b, below[4]), k_gt(b, below[5])),
                       v_add(k_gt(b, below[6]), k_gt(b, below[7]))));
    if (mode == M_FLOOR || mode == M_CEIL)
        s = v_add(s, k_gt(b, below[8]));
    /* Inf and NaN */
    s = v_add(s, v_add(k_gt(a, v_set1(L_INF(sk) - 1)), k_gt(a, v_set1(L_INF(sk)))));
    /* the count in the low byte; bit 15 makes pshufb give 0 in the high one */
    const V c = v_sub(v_set1(0x8000), s);
    return v_sel(neg, _mm256_shuffle_epi8(tneg, c), _mm256_shuffle_epi8(tpos, c));
}

static FN DT_INLINE void f4_loop(const dt_kernel *k, void *dst, const void *src, size_t begin,
                                 size_t end, int mode, int sk)
{
    const size_t sbytes = sk == S_F32 ? 4 : 2;
    const uint8_t *s = (const uint8_t *)src + begin * sbytes;
    uint8_t *d = (uint8_t *)dst + begin / 2;
    const f4_consts *fc = (const f4_consts *)(const void *)k->local;
    V below[9];
    for (int j = 0; j < 9; j++)
        below[j] = v_set1(fc->below[j]);
    const V tpos = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)fc->code[0]));
    const V tneg = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)fc->code[1]));
    const size_t count = end - begin;
    size_t i = 0;
    for (; i + 2 * VW <= count; i += 2 * VW) {
        dt_prefetch_span(s + i * sbytes, 2 * VW * sbytes);
        V x0 = load_any_avx2w(s + i * sbytes, sk), x1 = load_any_avx2w(s + (i + VW) * sbytes, sk);
        v_opaque(&x0);
        v_opaque(&x1);
        v_store4x2(d + i / 2, f4_count(x0, below, tpos, tneg, mode, sk),
                   f4_count(x1, below, tpos, tneg, mode, sk));
    }
    if (i < count) { /* the tail through a zeroed block (read before written: in place works) */
        uint8_t in[2 * VW * 4] = {0}, out[VW] = {0};
        memcpy(in, s + i * sbytes, (count - i) * sbytes);
        v_store4x2(out, f4_count(load_any_avx2w(in, sk), below, tpos, tneg, mode, sk),
                   f4_count(load_any_avx2w(in + VW * sbytes, sk), below, tpos, tneg, mode, sk));
        memcpy(d + i / 2, out, (count - i + 1) / 2);
    }
}

#define DT_F4_FN(mode, sk)                                                                      \
    static FN void f4_##mode##_##sk(const dt_kernel *k, void *dst, const void *src, size_t b,  \
                                    size_t e)                                                   \
    {                                                                                           \
        f4_loop(k, dst, src, b, e, mode, sk);                                                   \
    }
#define DT_F4_MODES(sk)                                                                         \
    DT_F4_FN(M_RNE, sk) DT_F4_FN(M_RNA, sk) DT_F4_FN(M_FLOOR, sk) DT_F4_FN(M_CEIL, sk)          \
    DT_F4_FN(M_TRUNC, sk) DT_F4_FN(M_ODD, sk)
#define DT_F4_ROW(sk)                                                                           \
    {f4_M_RNE_##sk, f4_M_RNA_##sk, f4_M_FLOOR_##sk, f4_M_CEIL_##sk, f4_M_TRUNC_##sk, f4_M_ODD_##sk}
DT_F4_MODES(S_F32)
DT_F4_MODES(S_F16)
DT_F4_MODES(S_BF16)
static const dt_kernel_fn f4_fns[3][M_MODES] = {DT_F4_ROW(S_F32), DT_F4_ROW(S_F16),
                                                DT_F4_ROW(S_BF16)};

/* A 4-bit float whose 8 magnitudes are all finite (float4e2m1) */
static bool f4_target(const dt_format *df)
{
    return df->tc == DT_TC_FLOAT && df->bits == 4 && dt_float_max_code(df) == 7;
}

dt_kernel_fn dt_narrow16_pick_avx2(const dt_format *df, const dt_format *sf, const dt_rules *r,
                                   const dt_format **lane)
{
    const dt_kernel_fn fn = narrow_pick_avx2w(df, sf, r, lane);
    const int sk = source_kind_avx2w(sf);
    if (fn && f4_target(df) && sk <= S_BF16) /* float sources (the integer ones: the template) */
        return f4_fns[sk][dt_mode_of(r->round)];
    return fn;
}

/* The value of magnitude code c of the 4-bit float df (c = 8: the binade above the largest) */
static double f4_value(const dt_format *df, int c)
{
    const int m = df->man_bits, e = c >> m, f = c & ((1 << m) - 1);
    return e == 0 ? ldexp(f, 1 - df->bias - m) : ldexp((1 << m) + f, e - df->bias - m);
}

/* The bits of v (0, or a normal value of a few bits) in the lane format: float16 or bfloat16 */
static uint16_t f4_lane_bits(const dt_format *lane, double v)
{
    const float f = (float)v;
    uint32_t b;
    memcpy(&b, &f, 4);
    if (v == 0)
        return 0;
    if (lane->type == DTCAST_BFLOAT16)
        return (uint16_t)(b >> 16);
    return (uint16_t)((((b >> 23) & 0xFF) - 127 + 15) << 10 | ((b >> 13) & 0x3FF));
}

bool dt_narrow16_setup_avx2(dt_kernel *k, const dt_format *df, const dt_format *sf,
                            const dt_rules *r)
{
    const dt_format *lane;
    k->fn = dt_narrow16_pick_avx2(df, sf, r, &lane);
    if (!k->fn || !dt_narrow_setup_unsigned(&k->n, df, lane, r))
        return false;
    if (!f4_target(df))
        return true;
    const int mode = dt_mode_of(r->round);
    const bool signed_mode = mode == M_FLOOR || mode == M_CEIL;
    f4_consts fc;
    memset(&fc, 0, sizeof fc);
    for (int j = 0; j < 9; j++) {
        /* floor and ceil: the values 0..8 themselves; else code >= j + 1 iff |x| >= t (j = 8:
         * unused) */
        const int c = j + 1;
        const double lo = f4_value(df, c - 1), hi = f4_value(df, c);
        uint32_t t;
        if (signed_mode)
            t = f4_lane_bits(lane, f4_value(df, j));
        else if (j == 8)
            t = 0x8000; /* unused: above every lane */
        else if (mode == M_RNE) /* ties to the even code: an odd code needs more than the tie */
            t = f4_lane_bits(lane, (lo + hi) / 2) + (uint32_t)(c & 1);
        else if (mode == M_RNA)
            t = f4_lane_bits(lane, (lo + hi) / 2);
        else if (mode == M_TRUNC)
            t = f4_lane_bits(lane, hi);
        else /* odd: every value above an even code goes to the odd one after it */
            t = c & 1 ? f4_lane_bits(lane, lo) + 1u : f4_lane_bits(lane, hi);
        fc.below[j] = (uint16_t)(t - 1);
    }
    /* the code of count i: magnitude i (one less on floor's and ceil's "toward" lanes) below 8,
     * the overflow code from 8, then Inf and NaN; the sign where the target keeps it (a zero
     * magnitude is signed only where -0 exists) */
    const int special = signed_mode ? 10 : 9;
    for (int neg = 0; neg < 2; neg++)
        for (int i = 0; i < 16; i++) {
            const int mi = signed_mode && neg != (mode == M_FLOOR) ? i - 1 : i;
            const uint32_t ovf = signed_mode ? k->n.ovf[neg] : k->n.ovf[0];
            uint32_t mag = mi <= 0 ? 0 : mi < 8 ? (uint32_t)mi : ovf;
            if (i == special)
                mag = k->n.inf[neg];
            const uint32_t sg = neg && (mag > 0 || k->n.keep_neg_zero) ? k->n.sign : 0;
            fc.code[neg][i] = (uint8_t)(i > special ? k->n.nan[neg] : mag | sg);
        }
    memcpy(k->local, &fc, sizeof fc);
    return true;
}
#endif
