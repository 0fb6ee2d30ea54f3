/* The public ggml calls (dtcast.h, "ggml's block types"): check the tensors, then run the block
 * functions of ggml.h over chunks of whole blocks, in parallel, in the default floating-point
 * environment.
 *
 * Quantize: each chunk of x is read as float32 (bfloat16 / float16 widened exactly, float64
 * rounded to nearest even), NaN and infinities are replaced by 0 and counted, and the type's
 * quantizer writes the chunk's blocks. The element-wise targets F16 and BF16 are one rounding
 * from x with ggml's NaN spelling.
 *
 * Dequantize: the type's dequantizer gives float32 (and, for the types whose float32 can be
 * rounded, each element's residual); float64 is their exact sum, bfloat16 and float16 round the
 * exact value once: the float32 is first rounded to odd (a nonzero residual sets the lowest bit
 * by stepping toward it), which makes the one nearest-even rounding to the narrower type the
 * correct rounding of the exact value (24 bits >= 11 + 2). On x86-64 with AVX-512 and
 * AVX512-BF16, bfloat16 comes straight from the blocks instead (fast_dequant_avx512bf16.c: the
 * same bits, without the float32 buffer). */
#include "ggml.h"
#include "fast_dequant.h"
#include "fast_input.h"
#include "../kernels/kernels.h"
#include "../parallel.h"
#include "../quant/quant.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

/* elements per chunk: a multiple of every block size (32, 64, 128, 256) */
#define CHUNK DT_QCHUNK

static dtcast_status check_type(int code, const dt_ggml_traits **out, dtcast_error *error)
{
    const dt_ggml_traits *t = code >= 0 ? dt_ggml_traits_of((uint32_t)code) : NULL;
    if (!t)
        return dt_fail(error, DTCAST_ERR_UNKNOWN_TYPE, DT_NO_INDEX,
                       "ggml type %d is not one ggml defines", code);
    *out = t;
    return DTCAST_OK;
}

static bool float_source(dtcast_type t)
{
    return t == DTCAST_FLOAT32 || t == DTCAST_BFLOAT16 || t == DTCAST_FLOAT16 ||
           t == DTCAST_FLOAT64;
}

/* The rows of a [..., K] tensor of `count` elements in ggml type t: their bytes, or an error
 * naming what does not fit. */
static dtcast_status row_bytes(const dt_ggml_traits *t, const dtcast_tensor *x, size_t count,
                               size_t *bytes, dtcast_error *error)
{
    const int64_t K = x->ndim > 0 ? x->shape[x->ndim - 1] : 1;
    if (count > 0 && K % t->block != 0)
        return dt_fail(error, DTCAST_ERR_BAD_SHAPE, DT_NO_INDEX,
                       "%s: the last dimension (%lld) is not a multiple of the block (%u)",
                       t->name, (long long)K, t->block);
    const size_t nb = count / t->block;
    if (nb > SIZE_MAX / t->bytes)
        return dt_fail(error, DTCAST_ERR_SIZE_OVERFLOW, DT_NO_INDEX, "%s: %zu blocks overflow",
                       t->name, nb);
    *bytes = nb * t->bytes;
    return DTCAST_OK;
}

/* ---- quantize --------------------------------------------------------------------------------- */
typedef struct q_job {
    const dt_ggml_traits *t;
    dt_ggml_quantize_fn quantize; /* the reference or a fast path (fast.c) */
    dt_ggml_input_fn input;       /* the chunk's reader and scan, or NULL (fast_input.h) */
    int code;
    const void *x;
    dtcast_type xtype;
    uint8_t *dst;
    size_t count;
    atomic_uint_fast64_t nonfinite, first_nonfinite, invalid;
} q_job;

/* Blocks ggml's validation (ggml_validate_row_data) would refuse: an infinite float16 scale or
 * min, an MXFP4 exponent 0xFF. The quantizers never write a NaN scale from finite input. */
static uint64_t invalid_blocks(int code, const uint8_t *y, size_t nb, size_t bytes)
{
    int off[2] = {-1, -1};
    switch (code) {
    case 2: case 6: case 8: case 41: case 42: off[0] = 0; break; /* Q4_0 Q5_0 Q8_0 Q1_0 Q2_0 */
    case 3: case 7: case 12: case 13: off[0] = 0; off[1] = 2; break; /* d, m / dmin */
    case 9: off[0] = 0; off[1] = 2; break;                         /* Q8_1: d, s */
    case 10: off[0] = 80; off[1] = 82; break;                      /* Q2_K */
    case 11: off[0] = 108; break;                                  /* Q3_K */
    case 14: off[0] = 208; break;                                  /* Q6_K */
    case 34: off[0] = 52; break;                                   /* TQ1_0 */
    case 35: off[0] = 64; break;                                   /* TQ2_0 */
    case 39: {                                                     /* MXFP4 */
        uint64_t n = 0;
        for (size_t b = 0; b < nb; b++)
            n += y[b * bytes] == 0xFF;
        return n;
    }
    default: return 0; /* NVFP4: every byte valid; Q8_K: float32 d from finite input */
    }
    uint64_t n = 0;
    for (size_t b = 0; b < nb; b++) {
        bool bad = false;
        for (int k = 0; k < 2; k++)
            if (off[k] >= 0 && (dt_ggml_rd16(y + b * bytes + off[k]) & 0x7C00u) == 0x7C00u)
                bad = true;
        n += bad;
    }
    return n;
}

static void note_first(atomic_uint_fast64_t *first, uint64_t i)
{
    uint_fast64_t cur = atomic_load(first);
    while (i < cur && !atomic_compare_exchange_weak(first, &cur, i)) {
    }
}

/* bfloat16 as ggml rounds it: nearest even, subnormals kept, NaN -> the high half | 0x40 */
static uint16_t ggml_bf16(float v)
{
    const uint32_t u = dt_ggml_bits_of(v);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

/* whether a NaN or an infinity is among v[0, n): an exponent of all ones (branch-free: the
 * compiler vectorizes it) */
static bool any_nonfinite(const float *v, size_t n)
{
    const uint32_t *b = (const uint32_t *)(const void *)v;
    uint32_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad |= (uint32_t)((b[i] & 0x7F800000u) == 0x7F800000u);
    return bad != 0;
}

static void q_range(void *ctx, size_t begin, size_t end)
{
    q_job *j = ctx;
    const dt_ggml_traits *t = j->t;
    dt_loader ld;
    dt_loader_init(&ld, j->x, j->xtype, false);
    _Alignas(64) float buf[CHUNK], clean[CHUNK];
    uint64_t nonfinite = 0, invalid = 0;
    for (size_t c = begin; c < end; c++) {
        const size_t f = c * CHUNK, n = j->count - f < CHUNK ? j->count - f : CHUNK;
        const float *v = buf;
        bool bad = false; /* a NaN or an infinity among the chunk's n (block types only) */
        if (t->block > 1 && j->input && j->xtype != DTCAST_FLOAT32) /* widened and scanned */
            bad = j->input((const uint8_t *)j->x + f * 2, n, buf);
        else {
            v = dt_load_f32(&ld, f, n, buf);
            if (t->block > 1)
                bad = j->input ? j->input(v, n, NULL) : any_nonfinite(v, n);
        }
        if (t->block == 1) { /* F16 / BF16 from float32 (F32 and float64 sources: not here) */
            uint8_t *o = j->dst + f * 2;
            for (size_t i = 0; i < n; i++)
                dt_ggml_wr16(o + 2 * i, t->plain == DTCAST_FLOAT16 ? dt_ggml_fp16(v[i])
                                                                   : ggml_bf16(v[i]));
            continue;
        }
        const float *use = v;
        if (bad)
            for (size_t i = 0; i < n; i++)
                if (!isfinite(v[i])) {
                    if (use == v) {
                        memcpy(clean, v, n * sizeof(float));
                        use = clean;
                    }
                    clean[i] = 0.0f;
                    if (nonfinite++ == 0)
                        note_first(&j->first_nonfinite, f + i);
                }
        const size_t nb = n / t->block;
        uint8_t *y = j->dst + f / t->block * t->bytes;
        j->quantize(use, y, nb);
        invalid += invalid_blocks(j->code, y, nb, t->bytes);
    }
    dt_loader_release(&ld);
    atomic_fetch_add(&j->nonfinite, nonfinite);
    atomic_fetch_add(&j->invalid, invalid);
}

/* float64 -> F16 / BF16 / F32: one rounding (dtcast_convert), NaN as ggml spells it from the
 * float32 the value would have been */
static dtcast_status from_f64(const dt_ggml_traits *t, void *dst, const dtcast_tensor *x,
                              size_t count, unsigned threads, dtcast_error *error)
{
    dtcast_options o;
    dtcast_options_init(&o);
    o.threads = threads;
    dtcast_status st = dtcast_convert(dst, t->plain, x->data, DTCAST_FLOAT64, count, &o, error);
    if (st != DTCAST_OK || t->plain == DTCAST_FLOAT32)
        return st;
    const double *s = x->data;
    uint8_t *o8 = dst;
    for (size_t i = 0; i < count; i++)
        if (isnan(s[i])) {
            const float v = (float)s[i];
            dt_ggml_wr16(o8 + 2 * i, t->plain == DTCAST_FLOAT16 ? dt_ggml_fp16(v) : ggml_bf16(v));
        }
    return DTCAST_OK;
}

dtcast_status dtcast_ggml_quantize(void *dst, size_t dst_bytes, int code, const dtcast_tensor *x,
                                   unsigned threads, dtcast_ggml_stats *stats,
                                   dtcast_error *error)
{
    const dt_ggml_traits *t = NULL;
    size_t count, need = 0;
    dtcast_status st;
    if ((st = check_type(code, &t, error)) != DTCAST_OK ||
        (st = dt_tensor_input(x, "x", &count, error)) != DTCAST_OK)
        return st;
    if (!float_source(x->type))
        return dt_fail(error, DTCAST_ERR_UNSUPPORTED, DT_NO_INDEX,
                       "ggml quantization reads float32, bfloat16, float16 or float64 (x is %s)",
                       dtcast_type_name(x->type));
    const bool plain_float = t->block == 1 && dt_format_of(t->plain)->tc == DT_TC_FLOAT;
    if (!plain_float && !t->quantize)
        return dt_fail(error, DTCAST_ERR_UNSUPPORTED, DT_NO_INDEX,
                       "dtcast does not quantize to ggml type %s", t->name);
    if ((st = row_bytes(t, x, count, &need, error)) != DTCAST_OK)
        return st;
    if (need > 0 && !dst)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "dst is NULL");
    if (dst_bytes < need)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "dst holds %zu bytes; %s rows of this x need %zu", dst_bytes, t->name,
                       need);
    if (stats) {
        stats->nonfinite = 0;
        stats->first_nonfinite = UINT64_MAX;
        stats->invalid_scales = 0;
    }
    if (count == 0)
        return DTCAST_OK;
    if (plain_float && (x->type == DTCAST_FLOAT64 || t->plain == DTCAST_FLOAT32 ||
                        t->plain == DTCAST_FLOAT64)) {
        if (x->type == DTCAST_FLOAT64)
            return from_f64(t, dst, x, count, threads, error);
        dtcast_options o; /* widening (exact) or a float32 copy */
        dtcast_options_init(&o);
        o.threads = threads;
        return dtcast_convert(dst, t->plain, x->data, x->type, count, &o, error);
    }
    q_job j = {.t = t, .quantize = dt_ggml_quantizer((uint32_t)code),
               .input = dt_ggml_input(x->type), .code = code,
               .x = x->data, .xtype = x->type, .dst = dst, .count = count};
    atomic_init(&j.nonfinite, 0);
    atomic_init(&j.first_nonfinite, UINT64_MAX);
    atomic_init(&j.invalid, 0);
    const size_t chunks = (count + CHUNK - 1) / CHUNK;
    dt_quant_for(chunks, dt_thread_count(threads, count), q_range, &j);
    if (stats) {
        stats->nonfinite = atomic_load(&j.nonfinite);
        stats->first_nonfinite = atomic_load(&j.first_nonfinite);
        stats->invalid_scales = atomic_load(&j.invalid);
    }
    return DTCAST_OK;
}

/* ---- dequantize ------------------------------------------------------------------------------- */
typedef struct d_job {
    const dt_ggml_traits *t;
    bool bf16_avx512; /* bfloat16 output in one pass (store_avx512.c) */
#if defined(__x86_64__) && defined(__GNUC__)
    dt_ggml_bf16_fn bf16; /* or straight from the blocks (fast_dequant_avx512bf16.c) */
#endif
    dt_ggml_dequantize_fn dequantize; /* the reference or a fast path (fast.c) */
    const uint8_t *src;
    void *y;
    dtcast_type ytype;
    size_t count;
} d_job;

/* y rounded to odd with respect to the exact y + lo (|lo| <= half an ulp of y, y finite, not
 * a binary32 subnormal, lo = 0 where y is not finite): y if exact or odd, else its neighbour
 * on lo's side. */
/* round_odd over n elements, branch-free (the compiler vectorizes it):
 *
 *   step = 0 when lo == 0 or y's lowest bit is set; else +1 (away from zero: lo has y's sign)
 *   or -1 (toward zero), added to y's bits */
static void round_odd_all(float *v, const float *lo, size_t n)
{
    uint32_t *u = (uint32_t *)(void *)v;
    const uint32_t *l = (const uint32_t *)(const void *)lo;
    for (size_t i = 0; i < n; i++) {
        const uint32_t lb = l[i], yb = u[i];
        const uint32_t need = ((lb & 0x7FFFFFFFu) != 0) & ~yb & 1u;
        const uint32_t toward = (lb ^ yb) >> 31; /* signs differ: toward zero */
        u[i] = yb + need * (1u - 2u * toward);   /* +1, or -1 mod 2^32 */
    }
}

static void d_range(void *ctx, size_t begin, size_t end)
{
    d_job *j = ctx;
    const dt_ggml_traits *t = j->t;
    const bool want_lo = t->inexact && j->ytype != DTCAST_FLOAT32;
    dt_storer sto;
    if (j->ytype != DTCAST_FLOAT64)
        dt_storer_init(&sto, j->y, j->ytype, j->count, false);
    _Alignas(64) float v[CHUNK], lo[CHUNK];
    for (size_t c = begin; c < end; c++) {
        const size_t f = c * CHUNK, n = j->count - f < CHUNK ? j->count - f : CHUNK;
        const uint8_t *blocks = j->src + f / t->block * t->bytes;
#if defined(__x86_64__) && defined(__GNUC__)
        if (j->bf16) {
            j->bf16(blocks, (uint16_t *)j->y + f, n / t->block);
            continue;
        }
#endif
        j->dequantize(blocks, v, want_lo ? lo : NULL, n / t->block);
        if (j->ytype == DTCAST_FLOAT64) {
            double *o = (double *)j->y + f;
            for (size_t i = 0; i < n; i++)
                o[i] = want_lo && lo[i] != 0.0f ? (double)v[i] + (double)lo[i] : (double)v[i];
            continue;
        }
#if defined(__x86_64__) && defined(__GNUC__)
        if (j->bf16_avx512) {
            dt_ggml_store_bf16_avx512((uint16_t *)j->y + f, v, want_lo ? lo : NULL, n);
            continue;
        }
#endif
        if (want_lo)
            round_odd_all(v, lo, n);
        dt_store_f32(&sto, f, v, n);
    }
    if (j->ytype != DTCAST_FLOAT64)
        dt_storer_release(&sto);
}

dtcast_status dtcast_ggml_dequantize(dtcast_tensor *y, const void *src, size_t src_bytes,
                                     int code, unsigned threads, dtcast_error *error)
{
    const dt_ggml_traits *t = NULL;
    size_t count, need = 0;
    dtcast_status st;
    if ((st = check_type(code, &t, error)) != DTCAST_OK)
        return st;
    if (!y)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "y is NULL");
    if (!float_source(y->type))
        return dt_fail(error, DTCAST_ERR_UNSUPPORTED, DT_NO_INDEX,
                       "ggml dequantization writes float32, bfloat16, float16 or float64 (y is "
                       "%s)",
                       dtcast_type_name(y->type));
    if ((st = dtcast_tensor_count(y, &count, error)) != DTCAST_OK ||
        (st = row_bytes(t, y, count, &need, error)) != DTCAST_OK)
        return st;
    const bool plain_float = t->block == 1 && dt_format_of(t->plain)->tc == DT_TC_FLOAT;
    if (!plain_float && !t->dequantize)
        return dt_fail(error, DTCAST_ERR_UNSUPPORTED, DT_NO_INDEX,
                       "ggml type %s has no conversion to float", t->name);
    if (src_bytes != need)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "%zu bytes of %s given; y's shape needs %zu", src_bytes, t->name, need);
    if (need > 0 && !src)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "src is NULL");
    size_t ybytes;
    if (!dt_format_bytes(dt_format_of(y->type), count, &ybytes))
        return dt_fail(error, DTCAST_ERR_SIZE_OVERFLOW, DT_NO_INDEX, "y's size overflows");
    if ((st = dt_tensor_room(y, "y", ybytes, error)) != DTCAST_OK)
        return st;
    if (count == 0)
        return DTCAST_OK;
    if (plain_float) {
        dtcast_options o;
        dtcast_options_init(&o);
        o.threads = threads;
        return dtcast_convert(y->data, y->type, src, t->plain, count, &o, error);
    }
    d_job j = {.t = t, .dequantize = dt_ggml_dequantizer((uint32_t)code), .src = src,
               .y = y->data, .ytype = y->type, .count = count};
#if defined(__x86_64__) && defined(__GNUC__)
    j.bf16_avx512 = y->type == DTCAST_BFLOAT16 && !dt_quant_simple() &&
                    dt_isa_active() >= DT_ISA_AVX512;
    j.bf16 = j.bf16_avx512 ? dt_ggml_bf16_dequantizer((uint32_t)code) : NULL;
#endif
    const size_t chunks = (count + CHUNK - 1) / CHUNK;
    dt_quant_for(chunks, dt_thread_count(threads, count), d_range, &j);
    return DTCAST_OK;
}
