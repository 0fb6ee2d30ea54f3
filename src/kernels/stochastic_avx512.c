/* Stochastic rounding kernels for AVX-512 (docs/conversion.md, "Stochastic rounding"): the
 * pairs of stochastic_avx2.c, 16 lanes of float32 bits at a time. The difference that pays:
 * SplitMix64's 64-bit multiplies are one instruction each (vpmullq) instead of three 32-bit
 * ones, and the random bits were most of the AVX2 kernel's work. The rule is stochastic.h's,
 * lane by lane, with masks for its selects; tails use its scalar element. */
#if defined(__x86_64__) && defined(__GNUC__)
#include "stochastic.h"

#include "x86_attrs.h"

#include <immintrin.h>

#define FN DT_TARGET_AVX512
#define INL DT_INLINE DT_TARGET_AVX512

typedef struct rng16 {
    __m512i lo, hi;   /* z of elements 0-7 and 8-15 of the next 16 */
    __m512i step;     /* 16 gamma */
    __m512i c1, c2;   /* SplitMix64's multipliers */
    __m512i low_idx;  /* the low dwords of lo's then hi's lanes, in order */
} rng16;

static INL void rng16_init(rng16 *g, const dt_rules *r, size_t begin)
{
    const uint64_t z = dt_stoch_state(r, begin), G = DT_GOLDEN_GAMMA;
    const __m512i i8 = _mm512_setr_epi64(1, 2, 3, 4, 5, 6, 7, 8);
    /* z + (j + 1) G for lane j: element begin + j's state after its step */
    g->lo = _mm512_add_epi64(_mm512_set1_epi64((long long)z),
                             _mm512_mullo_epi64(i8, _mm512_set1_epi64((long long)G)));
    g->hi = _mm512_add_epi64(g->lo, _mm512_set1_epi64((long long)(8 * G)));
    g->step = _mm512_set1_epi64((long long)(16 * G));
    g->c1 = _mm512_set1_epi64((long long)0xBF58476D1CE4E5B9u);
    g->c2 = _mm512_set1_epi64((long long)0x94D049BB133111EBu);
    g->low_idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
}

/* SplitMix64's output function on 8 lanes (the low 32 bits are what counts) */
static INL __m512i mix8(const rng16 *g, __m512i z)
{
    z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 30));
    z = _mm512_mullo_epi64(z, g->c1);
    z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 27));
    z = _mm512_mullo_epi64(z, g->c2);
    return _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
}

/* The random bits of the next 16 elements, in order, as 16 dwords */
static INL __m512i rng16_next(rng16 *g)
{
    const __m512i r = _mm512_permutex2var_epi32(mix8(g, g->lo), g->low_idx, mix8(g, g->hi));
    g->lo = _mm512_add_epi64(g->lo, g->step);
    g->hi = _mm512_add_epi64(g->hi, g->step);
    return r;
}

typedef struct consts16 {
    __m512i abs_mask, inf, e_one, lead, man, s0, ec_hi, m, maxc, ovf, infc, nanc, sign, k32;
} consts16;

static INL void consts16_init(consts16 *c, const dt_narrow *n)
{
    c->abs_mask = _mm512_set1_epi32(0x7FFFFFFF);
    c->inf = _mm512_set1_epi32(0x7F800000);
    c->e_one = _mm512_set1_epi32(1);
    c->lead = _mm512_set1_epi32(0x800000);
    c->man = _mm512_set1_epi32(0x7FFFFF);
    c->s0 = _mm512_set1_epi32((int)(23 - n->s1));
    c->ec_hi = _mm512_set1_epi32((int)n->ec_hi);
    c->m = _mm512_set1_epi32((int)n->s1);
    c->maxc = _mm512_set1_epi32((int)n->maxc);
    c->ovf = _mm512_set1_epi32((int)n->ovf[0]);
    c->infc = _mm512_set1_epi32((int)n->inf[0]);
    c->nanc = _mm512_set1_epi32((int)n->nan[0]);
    c->sign = _mm512_set1_epi32((int)n->sign);
    c->k32 = _mm512_set1_epi32(32);
}

/* dt_stoch_code on 16 lanes of float32 bits x with random bits r */
static INL __m512i code16(const consts16 *c, __m512i x, __m512i r)
{
    const __m512i zero = _mm512_setzero_si512();
    const __m512i a = _mm512_and_si512(x, c->abs_mask);
    const __m512i sign = _mm512_and_si512(_mm512_srai_epi32(x, 31), c->sign);
    const __m512i e_field = _mm512_srli_epi32(a, 23);
    const __m512i e = _mm512_max_epi32(e_field, c->e_one); /* subnormals: field 1 */
    const __mmask16 normal = _mm512_cmpgt_epi32_mask(e_field, zero);
    const __m512i m = _mm512_and_si512(a, c->man);
    const __m512i sig = _mm512_mask_or_epi32(m, normal, m, c->lead);
    /* shift = 23 - M + max(ec_hi - e, 0): a shift of 32 or more leaves kept 0 (srlv) */
    const __m512i shift = _mm512_add_epi32(c->s0, _mm512_max_epi32(_mm512_sub_epi32(c->ec_hi, e), zero));
    const __m512i kept = _mm512_srlv_epi32(sig, shift);
    /* D = sig << (32 - shift) for shift <= 32, sig >> (shift - 32) above: the counts out of
     * range give 0 in the other term */
    const __m512i dropped = _mm512_or_si512(_mm512_sllv_epi32(sig, _mm512_sub_epi32(c->k32, shift)),
                                            _mm512_srlv_epi32(sig, _mm512_sub_epi32(shift, c->k32)));
    const __mmask16 up = _mm512_cmplt_epu32_mask(r, dropped);
    const __m512i steps = _mm512_max_epi32(_mm512_sub_epi32(e, c->ec_hi), zero);
    __m512i code = _mm512_add_epi32(_mm512_sllv_epi32(steps, c->m), kept);
    code = _mm512_mask_add_epi32(code, up, code, c->e_one);
    code = _mm512_mask_mov_epi32(code, _mm512_cmpgt_epi32_mask(code, c->maxc), c->ovf);
    const __mmask16 special = _mm512_cmpge_epi32_mask(a, c->inf);
    const __m512i spec_code = _mm512_mask_mov_epi32(c->nanc, _mm512_cmpeq_epi32_mask(a, c->inf), c->infc);
    code = _mm512_mask_mov_epi32(code, special, spec_code);
    return _mm512_or_si512(code, sign);
}

/* 16 source elements as float32 bits */
static INL __m512i load_f32(const uint8_t *p) { return _mm512_loadu_si512((const void *)p); }
static INL __m512i load_bf16(const uint8_t *p)
{
    return _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)p)), 16);
}
static INL __m512i load_f16(const uint8_t *p)
{
    /* widened exactly; NaN stays NaN (the payload does not matter here) */
    return _mm512_castps_si512(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)p)));
}

/* Elements [begin, end): 16 per iteration (the codes' low 16 or 8 bits stored), then the
 * scalar element for the tail. */
#define STOCH_KERNEL(name, load, kind, sbytes, obytes)                                      \
    static FN void name(const dt_kernel *k, void *dst, const void *src, size_t begin,          \
                        size_t end)                                                             \
    {                                                                                           \
        const uint8_t *s = (const uint8_t *)src;                                                \
        uint8_t *d = (uint8_t *)dst;                                                            \
        consts16 c;                                                                             \
        consts16_init(&c, &k->n);                                                               \
        rng16 g;                                                                                \
        rng16_init(&g, &k->r, begin);                                                           \
        size_t i = begin;                                                                       \
        for (; i + 16 <= end; i += 16) {                                                        \
            const __m512i code = code16(&c, load(s + i * sbytes), rng16_next(&g));              \
            if (obytes == 2)                                                                    \
                _mm256_storeu_si256((__m256i *)(void *)(d + i * 2), _mm512_cvtepi32_epi16(code)); \
            else                                                                                \
                _mm_storeu_si128((__m128i *)(void *)(d + i), _mm512_cvtepi32_epi8(code));       \
        }                                                                                       \
        dt_stoch_tail(k, d, s, i, end, kind, obytes);                                           \
    }

DT_STOCH_ENTRIES(avx512, DT_ISA_AVX512)
#else
typedef int dt_stochastic_avx512_unused; /* ISO C: a translation unit is not empty */
#endif
