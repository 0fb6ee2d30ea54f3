/* Stochastic rounding kernels for AVX2 (docs/conversion.md, "Stochastic rounding"): float32,
 * float16 and bfloat16 -> bfloat16, float16, float8e4m3fn, float8e5m2, 8 lanes of float32 bits
 * at a time. SplitMix64 runs on 64-bit lanes, its multiplies by constants made of three
 * _mm256_mul_epu32 (32 x 32 -> 64 bits) each. The rule is stochastic.h's, lane by lane; tails
 * use its scalar element. Compiled for the target through function attributes only. */
#if defined(__x86_64__) && defined(__GNUC__)
#include "stochastic.h"

#include "x86_attrs.h"

#include <immintrin.h>

#define FN DT_TARGET_AVX2
#define INL DT_INLINE DT_TARGET_AVX2

/* a * c modulo 2^64 on 4 lanes, c given as (c_lo, c_hi) per lane and swapped (c_hi in the low
 * dword, c_lo in the high): a_lo c_lo + (a_lo c_hi + a_hi c_lo) 2^32, the cross terms modulo
 * 2^32 by one 32-bit multiply of both dwords */
static INL __m256i mul64(__m256i a, __m256i c, __m256i c_swapped)
{
    const __m256i cross = _mm256_mullo_epi32(a, c_swapped); /* a_lo c_hi | a_hi c_lo */
    const __m256i sum = _mm256_add_epi32(cross, _mm256_srli_epi64(cross, 32));
    return _mm256_add_epi64(_mm256_mul_epu32(a, c), _mm256_slli_epi64(sum, 32));
}

typedef struct rng8 {
    __m256i even, odd;   /* z of elements 0, 2, 4, 6 and 1, 3, 5, 7 of the next 8 */
    __m256i step;        /* 8 gamma */
    __m256i c1lo, c1hi, c2lo, c2hi;
} rng8;

static INL void rng8_init(rng8 *g, const dt_rules *r, size_t begin)
{
    const uint64_t z = dt_stoch_state(r, begin), G = DT_GOLDEN_GAMMA;
    g->even = _mm256_set_epi64x((long long)(z + 7 * G), (long long)(z + 5 * G),
                                (long long)(z + 3 * G), (long long)(z + 1 * G));
    g->odd = _mm256_set_epi64x((long long)(z + 8 * G), (long long)(z + 6 * G),
                               (long long)(z + 4 * G), (long long)(z + 2 * G));
    g->step = _mm256_set1_epi64x((long long)(8 * G));
    g->c1lo = _mm256_set1_epi64x((long long)0xBF58476D1CE4E5B9u);
    g->c1hi = _mm256_set1_epi64x((long long)0x1CE4E5B9BF58476Du);
    g->c2lo = _mm256_set1_epi64x((long long)0x94D049BB133111EBu);
    g->c2hi = _mm256_set1_epi64x((long long)0x133111EB94D049BBu);
}

/* SplitMix64's output function on 4 lanes: the low 32 bits are what counts */
static INL __m256i mix4(const rng8 *g, __m256i z)
{
    z = _mm256_xor_si256(z, _mm256_srli_epi64(z, 30));
    z = mul64(z, g->c1lo, g->c1hi);
    z = _mm256_xor_si256(z, _mm256_srli_epi64(z, 27));
    z = mul64(z, g->c2lo, g->c2hi);
    return _mm256_xor_si256(z, _mm256_srli_epi64(z, 31));
}

/* The random bits of the next 8 elements, in order, as 8 dwords */
static INL __m256i rng8_next(rng8 *g)
{
    const __m256i e = mix4(g, g->even), o = mix4(g, g->odd);
    g->even = _mm256_add_epi64(g->even, g->step);
    g->odd = _mm256_add_epi64(g->odd, g->step);
    return _mm256_blend_epi32(e, _mm256_slli_epi64(o, 32), 0xAA);
}

typedef struct consts8 {
    __m256i abs_mask, inf, e_one, lead, man, s0, ec_hi, m, maxc, ovf, infc, nanc, sign, bias;
} consts8;

static INL void consts8_init(consts8 *c, const dt_narrow *n)
{
    c->abs_mask = _mm256_set1_epi32(0x7FFFFFFF);
    c->inf = _mm256_set1_epi32(0x7F800000);
    c->e_one = _mm256_set1_epi32(1);
    c->lead = _mm256_set1_epi32(0x800000);
    c->man = _mm256_set1_epi32(0x7FFFFF);
    c->s0 = _mm256_set1_epi32((int)(23 - n->s1));
    c->ec_hi = _mm256_set1_epi32((int)n->ec_hi);
    c->m = _mm256_set1_epi32((int)n->s1);
    c->maxc = _mm256_set1_epi32((int)n->maxc);
    c->ovf = _mm256_set1_epi32((int)n->ovf[0]);
    c->infc = _mm256_set1_epi32((int)n->inf[0]);
    c->nanc = _mm256_set1_epi32((int)n->nan[0]);
    c->sign = _mm256_set1_epi32((int)n->sign);
    c->bias = _mm256_set1_epi32((int)0x80000000u);
}

/* dt_stoch_code on 8 lanes of float32 bits x with random bits r */
static INL __m256i code8(const consts8 *c, __m256i x, __m256i r)
{
    const __m256i a = _mm256_and_si256(x, c->abs_mask);
    const __m256i sign = _mm256_and_si256(_mm256_srai_epi32(x, 31), c->sign);
    const __m256i e_field = _mm256_srli_epi32(a, 23);
    const __m256i e = _mm256_max_epi32(e_field, c->e_one); /* subnormals: field 1 */
    const __m256i normal = _mm256_cmpgt_epi32(e_field, _mm256_setzero_si256());
    const __m256i sig = _mm256_or_si256(_mm256_and_si256(a, c->man), _mm256_and_si256(normal, c->lead));
    /* shift = 23 - M + max(ec_hi - e, 0): a shift of 32 or more leaves kept 0 (srlv) */
    const __m256i below = _mm256_max_epi32(_mm256_sub_epi32(c->ec_hi, e), _mm256_setzero_si256());
    const __m256i shift = _mm256_add_epi32(c->s0, below);
    const __m256i kept = _mm256_srlv_epi32(sig, shift);
    /* D = sig << (32 - shift) for shift <= 32, sig >> (shift - 32) above: the counts out of
     * range give 0 in the other term (the variable shifts' rule) */
    const __m256i k32 = _mm256_set1_epi32(32);
    const __m256i dropped = _mm256_or_si256(_mm256_sllv_epi32(sig, _mm256_sub_epi32(k32, shift)),
                                            _mm256_srlv_epi32(sig, _mm256_sub_epi32(shift, k32)));
    /* r < D unsigned: biased signed compare, all ones where true */
    const __m256i up = _mm256_cmpgt_epi32(_mm256_xor_si256(dropped, c->bias),
                                          _mm256_xor_si256(r, c->bias));
    const __m256i steps = _mm256_max_epi32(_mm256_sub_epi32(e, c->ec_hi), _mm256_setzero_si256());
    __m256i code = _mm256_sub_epi32(_mm256_add_epi32(_mm256_sllv_epi32(steps, c->m), kept), up);
    code = _mm256_blendv_epi8(code, c->ovf, _mm256_cmpgt_epi32(code, c->maxc));
    const __m256i special = _mm256_cmpgt_epi32(a, _mm256_sub_epi32(c->inf, c->e_one));
    const __m256i spec_code = _mm256_blendv_epi8(c->nanc, c->infc, _mm256_cmpeq_epi32(a, c->inf));
    code = _mm256_blendv_epi8(code, spec_code, special);
    return _mm256_or_si256(code, sign);
}

/* 8 source elements as float32 bits */
static INL __m256i load_f32(const uint8_t *p) { return _mm256_loadu_si256((const __m256i *)(const void *)p); }
static INL __m256i load_bf16(const uint8_t *p)
{
    return _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)p)), 16);
}
static INL __m256i load_f16(const uint8_t *p)
{
    /* F16C widens exactly; NaN stays NaN (the payload does not matter here) */
    return _mm256_castps_si256(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)p)));
}

/* Elements [begin, end): 16 (16-bit outputs) or 32 (8-bit outputs) per iteration, then the
 * scalar element for the tail. */
#define STOCH_KERNEL(name, load, kind, sbytes, obytes)                                      \
    static FN void name(const dt_kernel *k, void *dst, const void *src, size_t begin,          \
                        size_t end)                                                             \
    {                                                                                           \
        const uint8_t *s = (const uint8_t *)src;                                                \
        uint8_t *d = (uint8_t *)dst;                                                            \
        consts8 c;                                                                              \
        consts8_init(&c, &k->n);                                                                \
        rng8 g;                                                                                 \
        rng8_init(&g, &k->r, begin);                                                            \
        size_t i = begin;                                                                       \
        if (obytes == 2) {                                                                      \
            for (; i + 16 <= end; i += 16) {                                                    \
                const __m256i c0 = code8(&c, load(s + i * sbytes), rng8_next(&g));             \
                const __m256i c1 = code8(&c, load(s + (i + 8) * sbytes), rng8_next(&g));        \
                const __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(c0, c1), 0xD8);   \
                _mm256_storeu_si256((__m256i *)(void *)(d + i * 2), p);                         \
            }                                                                                   \
        } else {                                                                                \
            const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);                    \
            for (; i + 32 <= end; i += 32) {                                                    \
                const __m256i c0 = code8(&c, load(s + i * sbytes), rng8_next(&g));             \
                const __m256i c1 = code8(&c, load(s + (i + 8) * sbytes), rng8_next(&g));        \
                const __m256i c2 = code8(&c, load(s + (i + 16) * sbytes), rng8_next(&g));       \
                const __m256i c3 = code8(&c, load(s + (i + 24) * sbytes), rng8_next(&g));       \
                const __m256i b = _mm256_packus_epi16(_mm256_packus_epi32(c0, c1),              \
                                                      _mm256_packus_epi32(c2, c3));             \
                _mm256_storeu_si256((__m256i *)(void *)(d + i),                                 \
                                    _mm256_permutevar8x32_epi32(b, order));                     \
            }                                                                                   \
        }                                                                                       \
        dt_stoch_tail(k, d, s, i, end, kind, obytes);                                           \
    }

DT_STOCH_ENTRIES(avx2, DT_ISA_AVX2)
#else
typedef int dt_stochastic_avx2_unused; /* ISO C: a translation unit is not empty */
#endif
