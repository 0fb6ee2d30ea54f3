/* One quantization call resolved: parameters checked against x, the shapes and sizes of codes
 * and scales, the element step (float32 <-> codes through the conversion kernels) and the
 * per-row packing of the codes. */
#include "quant.h"

#include "../parallel.h"

#include <string.h>

/* ---- resolving the parameters ------------------------------------------------------------------ */

static dtcast_status bad(dtcast_error *error, const char *fmt, const char *a)
{
    return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, fmt, a);
}

static const char *tname(dtcast_type t)
{
    const char *n = dtcast_type_name(t);
    return n ? n : "an unknown type";
}

static bool element_allowed(dtcast_scheme s, dtcast_type e)
{
    switch (s) {
    case DTCAST_SCHEME_MX:
        return e == DTCAST_FLOAT8E4M3FN || e == DTCAST_FLOAT8E5M2 || e == DTCAST_FLOAT6E3M2FN ||
               e == DTCAST_FLOAT6E2M3FN || e == DTCAST_FLOAT4E2M1 || e == DTCAST_INT8;
    case DTCAST_SCHEME_NVFP4:
        return e == DTCAST_FLOAT4E2M1;
    case DTCAST_SCHEME_FP8_BLOCK:
        return e == DTCAST_FLOAT8E4M3FN;
    case DTCAST_SCHEME_ABSMAX:
        return e == DTCAST_INT8 || e == DTCAST_INT4 || e == DTCAST_FLOAT8E4M3FN ||
               e == DTCAST_FLOAT8E5M2 || e == DTCAST_FLOAT4E2M1;
    }
    return false;
}

static bool high_type(dtcast_type t)
{
    return t == DTCAST_FLOAT32 || t == DTCAST_BFLOAT16 || t == DTCAST_FLOAT16 || t == DTCAST_FLOAT64;
}

static bool mul_ok(size_t a, size_t b, size_t *out)
{
    if (b != 0 && a > SIZE_MAX / b)
        return false;
    *out = a * b;
    return true;
}

dtcast_status dt_quant_resolve(dt_quant *q, const dtcast_quant_params *praw, dtcast_type xtype,
                               int ndim, const int64_t *shape, dtcast_type code_type,
                               dtcast_type scales_type, dtcast_error *error)
{
    memset(q, 0, sizeof *q);
    dtcast_status st = dt_quant_params_read(praw, &q->p, error);
    if (st != DTCAST_OK)
        return st;
    dtcast_quant_params *p = &q->p;
    /* float6's API 1.0 codes (105, 106) are the same types as 27, 28 */
    p->element = dt_type_canonical(p->element);
    p->scale_type = dt_type_canonical(p->scale_type);
    xtype = dt_type_canonical(xtype);
    code_type = dt_type_canonical(code_type);
    scales_type = dt_type_canonical(scales_type);
    const char *sname = dtcast_scheme_name(p->scheme);
    if (!sname)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "unknown scheme %d",
                       (int)p->scheme);
    /* variant */
    if (p->variant == DTCAST_VARIANT_DEFAULT)
        p->variant = p->scheme == DTCAST_SCHEME_MX          ? DTCAST_VARIANT_OCP
                     : p->scheme == DTCAST_SCHEME_NVFP4     ? DTCAST_VARIANT_MODELOPT
                     : p->scheme == DTCAST_SCHEME_FP8_BLOCK ? DTCAST_VARIANT_HF
                                                            : DTCAST_VARIANT_CT;
    bool vok = false;
    switch (p->scheme) {
    case DTCAST_SCHEME_MX: vok = p->variant == DTCAST_VARIANT_OCP; break;
    case DTCAST_SCHEME_NVFP4:
        vok = p->variant == DTCAST_VARIANT_MODELOPT || p->variant == DTCAST_VARIANT_TORCHAO ||
              p->variant == DTCAST_VARIANT_CT;
        break;
    case DTCAST_SCHEME_FP8_BLOCK:
        vok = p->variant == DTCAST_VARIANT_HF || p->variant == DTCAST_VARIANT_DEEPSEEK_ACT;
        break;
    case DTCAST_SCHEME_ABSMAX: vok = p->variant == DTCAST_VARIANT_CT; break;
    }
    if (!vok)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "variant \"%s\" does not belong to scheme %s",
                       dtcast_variant_name(p->variant) ? dtcast_variant_name(p->variant) : "?",
                       sname);
    /* element */
    if (p->element == DTCAST_UNDEFINED)
        p->element = code_type != DTCAST_UNDEFINED ? code_type
                     : p->scheme == DTCAST_SCHEME_MX || p->scheme == DTCAST_SCHEME_FP8_BLOCK
                         ? DTCAST_FLOAT8E4M3FN
                     : p->scheme == DTCAST_SCHEME_NVFP4 ? DTCAST_FLOAT4E2M1
                                                        : DTCAST_INT8;
    if (!element_allowed(p->scheme, p->element))
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "element type %s is not one of scheme %s", tname(p->element), sname);
    if (code_type != DTCAST_UNDEFINED && code_type != p->element)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "codes are %s but the parameters say %s", tname(code_type),
                       tname(p->element));
    q->ef = dt_format_of(p->element);
    if (!high_type(xtype))
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "the high-precision tensor is %s (float32, bfloat16, float16 or float64 "
                       "are possible)",
                       tname(xtype));
    q->xtype = xtype;
    /* rounding */
    if (p->round == DTCAST_ROUND_DEFAULT)
        p->round = DTCAST_ROUND_RNE;
    if (p->round != DTCAST_ROUND_RNE && p->round != DTCAST_ROUND_STOCHASTIC &&
        !(p->round == DTCAST_ROUND_RNA && p->scheme == DTCAST_SCHEME_MX))
        return bad(error, "element rounding %s: rne and stochastic are possible (and rna for mx)",
                   dtcast_round_name(p->round) ? dtcast_round_name(p->round) : "?");
    if (p->round == DTCAST_ROUND_STOCHASTIC) { /* the conversion must know it */
        float one = 1.5f;
        uint8_t c;
        dtcast_options o;
        dtcast_options_init(&o);
        o.round = DTCAST_ROUND_STOCHASTIC;
        if (dtcast_convert(&c, DTCAST_FLOAT8E4M3FN, &one, DTCAST_FLOAT32, 1, &o, NULL) != DTCAST_OK)
            return bad(error, "%s rounding is not available in this build", "stochastic");
    }
    /* scale mode */
    if (p->scale_mode == DTCAST_SCALE_DEFAULT)
        p->scale_mode = p->scheme == DTCAST_SCHEME_MX ? DTCAST_SCALE_FLOOR : DTCAST_SCALE_DEFAULT;
    else if (p->scheme != DTCAST_SCHEME_MX)
        return bad(error, "a scale mode applies to scheme mx only, not %s", sname);
    if (p->scheme == DTCAST_SCHEME_MX && !dtcast_scale_mode_name(p->scale_mode))
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "unknown scale mode %d",
                       (int)p->scale_mode);
    if (p->single_level && p->variant != DTCAST_VARIANT_TORCHAO)
        return bad(error, "single_level applies to nvfp4 variant torchao only (not %s)", sname);
    if (p->ue8m0 && p->scheme != DTCAST_SCHEME_FP8_BLOCK)
        return bad(error, "ue8m0 applies to scheme fp8-block only (not %s)", sname);
    if (p->per_tensor && p->scheme != DTCAST_SCHEME_ABSMAX)
        return bad(error, "per_tensor applies to scheme absmax only (not %s)", sname);
    if (p->block < 0 || p->block_rows < 0)
        return bad(error, "%s: a negative block size", "block");
    if (p->block_rows && p->scheme != DTCAST_SCHEME_FP8_BLOCK)
        return bad(error, "block_rows applies to scheme fp8-block only (not %s)", sname);

    /* shape */
    if (ndim < 1 || ndim > DTCAST_MAX_DIMS)
        return dt_fail(error, DTCAST_ERR_BAD_SHAPE, DT_NO_INDEX,
                       "quantization needs a tensor of 1 to %d dimensions (it has %d)",
                       DTCAST_MAX_DIMS, ndim);
    q->ndim = ndim;
    size_t count = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0)
            return dt_fail(error, DTCAST_ERR_BAD_SHAPE, DT_NO_INDEX, "dimension %d is negative",
                           d);
        q->shape[d] = shape[d];
        if ((uint64_t)shape[d] > SIZE_MAX || !mul_ok(count, (size_t)shape[d], &count))
            return dt_fail(error, DTCAST_ERR_SIZE_OVERFLOW, DT_NO_INDEX,
                           "the element count does not fit size_t");
    }
    q->count = count;
    q->K = (size_t)shape[ndim - 1];
    q->rows = q->K ? count / q->K : 0;
    const int ebits = q->ef->bits;
    q->code_bits = ebits == 4 ? 4 : ebits == 6 && p->float6_packed ? 6 : 8;
    if (p->float6_packed && ebits != 6)
        return bad(error, "float6_packed applies to float6 codes only (not %s)",
                   tname(p->element));
    size_t bits;
    if (!mul_ok(q->K, (size_t)q->code_bits, &bits) || bits > SIZE_MAX - 7)
        return dt_fail(error, DTCAST_ERR_SIZE_OVERFLOW, DT_NO_INDEX, "a row of codes is too long");
    q->row_bytes = (bits + 7) / 8;
    if (!mul_ok(q->rows, q->row_bytes, &q->code_bytes))
        return dt_fail(error, DTCAST_ERR_SIZE_OVERFLOW, DT_NO_INDEX, "the codes do not fit size_t");

    q->sndim = ndim;
    memcpy(q->sshape, shape, sizeof(int64_t) * (size_t)ndim);
    size_t ssize = 4;
    switch (p->scheme) {
    case DTCAST_SCHEME_MX: {
        if (p->axis < -ndim || p->axis >= ndim)
            return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                           "axis %d is outside a tensor of %d dimensions", p->axis, ndim);
        const int a = p->axis < 0 ? p->axis + ndim : p->axis;
        p->axis = a;
        q->B = p->block ? (size_t)p->block : 32;
        if ((uint64_t)q->B > SIZE_MAX / 2)
            return bad(error, "%s is too large", "block");
        q->O = 1;
        for (int d = 0; d < a; d++)
            q->O *= (size_t)shape[d];
        q->D = (size_t)shape[a];
        q->I = 1;
        for (int d = a + 1; d < ndim; d++)
            q->I *= (size_t)shape[d];
        q->nb = (q->D + q->B - 1) / q->B;
        if (p->reject_short && q->D % q->B)
            return dt_fail(error, DTCAST_ERR_BAD_SHAPE, DT_NO_INDEX,
                           "axis %d has %zu elements, not a multiple of the block %zu "
                           "(reject_short)",
                           a, q->D, q->B);
        q->sshape[a] = (int64_t)q->nb;
        q->scale_type = DTCAST_FLOAT8E8M0;
        ssize = 1;
        break;
    }
    case DTCAST_SCHEME_NVFP4:
        if (p->block && p->block != 16)
            return bad(error, "nvfp4 blocks are 16 elements (block %s)", "must be 0 or 16");
        q->B = 16;
        if (q->K % 16)
            return dt_fail(error, DTCAST_ERR_BAD_SHAPE, DT_NO_INDEX,
                           "nvfp4: the last dimension (%zu) must be a multiple of 16", q->K);
        q->sshape[ndim - 1] = (int64_t)(q->K / 16);
        q->scale_type = DTCAST_FLOAT8E4M3FN;
        ssize = 1;
        q->has_global = !p->single_level;
        break;
    case DTCAST_SCHEME_FP8_BLOCK: {
        const bool act = p->variant == DTCAST_VARIANT_DEEPSEEK_ACT;
        q->B = p->block ? (size_t)p->block : 128;
        q->R = p->block_rows ? (size_t)p->block_rows : act ? 1 : 128;
        if (q->B == 0 || q->R == 0 || (uint64_t)q->B > SIZE_MAX / 2 || (uint64_t)q->R > SIZE_MAX / 2)
            return bad(error, "%s: bad tile size", "fp8-block");
        q->N = ndim >= 2 ? (size_t)shape[ndim - 2] : 1;
        q->batch = q->N && q->K ? count / (q->N * q->K) : 0;
        q->tr = (q->N + q->R - 1) / q->R;
        q->tc = (q->K + q->B - 1) / q->B;
        if (ndim >= 2)
            q->sshape[ndim - 2] = (int64_t)q->tr;
        q->sshape[ndim - 1] = (int64_t)q->tc;
        /* float32 multipliers (HF, DeepSeek-V3's weight_scale_inv), or, to dequantize,
         * DeepSeek-V4's F8_E8M0 powers of two (each exact in float32) */
        q->scale_type = scales_type == DTCAST_FLOAT8E8M0 && !act ? DTCAST_FLOAT8E8M0
                                                                 : DTCAST_FLOAT32;
        ssize = q->scale_type == DTCAST_FLOAT32 ? 4 : 1;
        break;
    }
    case DTCAST_SCHEME_ABSMAX:
        q->B = (size_t)p->block;
        if ((uint64_t)q->B > SIZE_MAX / 2)
            return bad(error, "%s is too large", "block");
        if (p->per_tensor) {
            q->sndim = 1;
            q->sshape[0] = 1;
        } else {
            q->sshape[ndim - 1] = q->B ? (int64_t)((q->K + q->B - 1) / q->B) : 1;
        }
        q->scale_type = scales_type != DTCAST_UNDEFINED ? scales_type
                        : p->scale_type != DTCAST_UNDEFINED ? p->scale_type
                        : xtype == DTCAST_FLOAT64           ? DTCAST_FLOAT32
                                                           : xtype;
        if (p->scale_type != DTCAST_UNDEFINED && p->scale_type != q->scale_type)
            return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                           "scales are %s but the parameters say %s", tname(q->scale_type),
                           tname(p->scale_type));
        if (q->scale_type != DTCAST_FLOAT32 && q->scale_type != DTCAST_BFLOAT16 &&
            q->scale_type != DTCAST_FLOAT16)
            return bad(error, "absmax scales are float32, bfloat16 or float16 (not %s)",
                       tname(q->scale_type));
        ssize = q->scale_type == DTCAST_FLOAT32 ? 4 : 2;
        break;
    }
    if (scales_type != DTCAST_UNDEFINED && scales_type != q->scale_type)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "scales are %s, scheme %s stores %s", tname(scales_type), sname,
                       tname(q->scale_type));
    q->scount = 1;
    for (int d = 0; d < q->sndim; d++)
        q->scount *= (size_t)q->sshape[d]; /* each at most x's: fits */
    if (!mul_ok(q->scount, ssize, &q->scale_bytes))
        return dt_fail(error, DTCAST_ERR_SIZE_OVERFLOW, DT_NO_INDEX, "the scales do not fit");
    q->simple = dt_quant_simple();
    q->avx2 = dt_isa_active() >= DT_ISA_AVX2;
    q->threads = q->simple ? 1 : dt_thread_count(p->threads, count);
    return DTCAST_OK;
}

void dt_quant_describe(const dt_quant *q, dtcast_tensor *codes, dtcast_tensor *scales,
                       dtcast_tensor *g)
{
    if (codes) {
        codes->type = q->p.element;
        codes->ndim = q->ndim;
        memset(codes->shape, 0, sizeof codes->shape);
        memcpy(codes->shape, q->shape, sizeof(int64_t) * (size_t)q->ndim);
    }
    if (scales) {
        scales->type = q->scale_type;
        scales->ndim = q->sndim;
        memset(scales->shape, 0, sizeof scales->shape);
        memcpy(scales->shape, q->sshape, sizeof(int64_t) * (size_t)q->sndim);
    }
    if (g) {
        memset(g->shape, 0, sizeof g->shape);
        if (q->has_global) {
            g->type = DTCAST_FLOAT32;
            g->ndim = 1;
            g->shape[0] = 1;
        } else {
            g->type = DTCAST_UNDEFINED;
            g->ndim = 0;
        }
    }
}

/* ---- small conversions ------------------------------------------------------------------------- */

void dt_qconv_init(dt_qconv *c, dtcast_type dst, dtcast_type src, dtcast_round round,
                   bool saturate, uint64_t seed, size_t count, bool exact)
{
    dtcast_options o;
    dtcast_options_init(&o);
    o.round = round;
    o.float_overflow = saturate ? DTCAST_FLOAT_OVERFLOW_SATURATE : DTCAST_FLOAT_OVERFLOW_IEEE;
    o.int_overflow = DTCAST_INT_OVERFLOW_SATURATE;
    o.seed = seed;
    dt_qconv_init_opts(c, dst, src, &o, count, exact);
}

void dt_qconv_init_opts(dt_qconv *c, dtcast_type dst, dtcast_type src, const dtcast_options *o,
                        size_t count, bool exact)
{
    memset(c, 0, sizeof *c);
    c->df = dt_format_of(dst);
    c->sf = dt_format_of(src);
    c->o = *o;
    c->o.threads = 1;
    c->stochastic = o->round == DTCAST_ROUND_STOCHASTIC;
    if (!c->stochastic) {
        dt_rules_for(c->df, &c->o, &c->r);
        if (!exact)
            c->has_kernel = dt_kernel_find(&c->k, c->df, c->sf, &c->r, count);
    }
}

void dt_qconv_run(const dt_qconv *c, void *dst, const void *src, size_t n, size_t first)
{
    if (n == 0)
        return;
    if (c->stochastic) {
        dtcast_options o = c->o;
        o.element_offset = first;
        (void)dtcast_convert(dst, c->df->type, src, c->sf->type, n, &o, NULL);
    } else if (c->has_kernel) {
        c->k.fn(&c->k, dst, src, 0, n);
    } else {
        for (size_t i = 0; i < n; i++) {
            dt_value v;
            dt_decode(c->sf, dt_load(c->sf, src, i), &v);
            dt_store(c->df, dst, i, dt_encode(c->df, &v, &c->r));
        }
    }
}

void dt_qconv_release(dt_qconv *c)
{
    if (c->has_kernel)
        dt_kernel_release(&c->k);
    c->has_kernel = false;
}

/* ---- codes in their per-row layout -------------------------------------------------------------- */

static void put_code(const dt_quant *q, uint8_t *codes, size_t idx, unsigned c)
{
    const size_t row = idx / q->K, pos = idx % q->K;
    uint8_t *r = codes + row * q->row_bytes;
    if (q->code_bits == 8) {
        r[pos] = (uint8_t)c;
    } else if (q->code_bits == 4) {
        uint8_t *b = r + pos / 2;
        if (pos & 1)
            *b = (uint8_t)((*b & 0x0F) | (c & 0xF) << 4);
        else
            *b = (uint8_t)(pos == q->K - 1 ? (c & 0xF) : ((*b & 0xF0) | (c & 0xF)));
    } else {
        const size_t bit = pos * 6, byte = bit / 8;
        const unsigned sh = (unsigned)(bit % 8);
        const bool two = byte + 1 < q->row_bytes;
        unsigned v = r[byte] | (two ? (unsigned)r[byte + 1] << 8 : 0u);
        v = (v & ~(0x3Fu << sh)) | (c & 0x3Fu) << sh;
        if (pos == q->K - 1)
            v &= (1u << (sh + 6)) - 1;
        r[byte] = (uint8_t)v;
        if (two)
            r[byte + 1] = (uint8_t)(v >> 8);
    }
}

static unsigned get_code(const dt_quant *q, const uint8_t *codes, size_t idx)
{
    const size_t row = idx / q->K, pos = idx % q->K;
    const uint8_t *r = codes + row * q->row_bytes;
    if (q->code_bits == 8)
        return r[pos];
    if (q->code_bits == 4)
        return pos & 1 ? r[pos / 2] >> 4 : r[pos / 2] & 0xFu;
    const size_t bit = pos * 6, byte = bit / 8;
    const unsigned sh = (unsigned)(bit % 8);
    unsigned v = r[byte] | (byte + 1 < q->row_bytes ? (unsigned)r[byte + 1] << 8 : 0u);
    return (v >> sh) & 0x3Fu;
}

void dt_emit_init(dt_emit *em, const dt_quant *q, void *codes, bool decode)
{
    em->q = q;
    em->codes = codes;
    em->stream = !decode && !q->simple && q->code_bytes >= ((size_t)4 << 20);
    if (decode)
        dt_qconv_init(&em->conv, DTCAST_FLOAT32, q->p.element, DTCAST_ROUND_RNE, false, 0, q->count,
                      q->simple);
    else
        dt_qconv_init(&em->conv, q->p.element, DTCAST_FLOAT32, q->p.round, true, q->p.seed, q->count,
                      q->simple);
}

void dt_emit_release(dt_emit *em)
{
    dt_qconv_release(&em->conv);
}

void dt_emit_codes(const dt_emit *em, size_t f, const float *vals, size_t n)
{
    const dt_quant *q = em->q;
    uint8_t tmp[DT_QCHUNK];
    size_t i = 0;
    if (q->code_bits == 8 && !q->simple) { /* rows of bytes: the flat layout */
        if (!em->stream) {
            dt_qconv_run(&em->conv, em->codes + f, vals, n, f);
        } else {
            dt_qconv_run(&em->conv, tmp, vals, n, f);
            dt_copy_stream(em->codes + f, tmp, n);
        }
        return;
    }
    dt_qconv_run(&em->conv, tmp, vals, n, f);
    if (q->simple) {
        /* element by element */
    } else if (q->code_bits == 4 && q->K % 2 == 0 && f % 2 == 0) {
        if (em->stream)
            dt_copy_stream(em->codes + f / 2, tmp, n / 2);
        else
            memcpy(em->codes + f / 2, tmp, n / 2);
        i = n & ~(size_t)1;
    } else if (q->code_bits == 6 && q->K % 4 == 0 && f % 4 == 0) {
        uint8_t *o = em->codes + f / 4 * 3;
        for (; i + 4 <= n; i += 4, o += 3) {
            const unsigned a = tmp[i], b = tmp[i + 1], c = tmp[i + 2], d = tmp[i + 3];
            o[0] = (uint8_t)(a | b << 6);
            o[1] = (uint8_t)(b >> 2 | c << 4);
            o[2] = (uint8_t)(c >> 4 | d << 2);
        }
    }
    for (; i < n; i++) {
        const unsigned c = q->code_bits == 4 ? (tmp[i / 2] >> (i % 2 * 4)) & 0xFu : tmp[i];
        put_code(q, em->codes, f + i, c);
    }
}

void dt_emit_values(const dt_emit *em, size_t f, float *vals, size_t n)
{
    const dt_quant *q = em->q;
    uint8_t tmp[DT_QCHUNK];
    const uint8_t *src = tmp;
    size_t i = 0;
    if (!q->simple && (q->code_bits == 8 || (q->code_bits == 4 && q->K % 2 == 0 && f % 2 == 0 &&
                                             n % 2 == 0))) {
        src = em->codes + (q->code_bits == 8 ? f : f / 2);
        i = n;
    } else if (!q->simple && q->code_bits == 6 && q->K % 4 == 0 && f % 4 == 0) {
        const uint8_t *s = em->codes + f / 4 * 3;
        for (; i + 4 <= n; i += 4, s += 3) {
            tmp[i] = s[0] & 0x3F;
            tmp[i + 1] = (uint8_t)((s[0] >> 6 | s[1] << 2) & 0x3F);
            tmp[i + 2] = (uint8_t)((s[1] >> 4 | s[2] << 4) & 0x3F);
            tmp[i + 3] = s[2] >> 2;
        }
    }
    if (i < n && q->code_bits == 4)
        memset(tmp + i / 2, 0, (n + 1) / 2 - i / 2);
    for (; i < n; i++) {
        const unsigned c = get_code(q, em->codes, f + i);
        if (q->code_bits == 4)
            tmp[i / 2] = (uint8_t)(tmp[i / 2] | c << (i % 2 * 4));
        else
            tmp[i] = (uint8_t)c;
    }
    dt_qconv_run(&em->conv, vals, src, n, f);
}

/* ---- the high-precision side ------------------------------------------------------------------- */

void dt_loader_init(dt_loader *l, const void *data, dtcast_type type, bool exact)
{
    l->data = data;
    l->type = type;
    dt_qconv_init(&l->conv, DTCAST_FLOAT32, type, DTCAST_ROUND_RNE, false, 0, DT_QCHUNK, exact);
}

const float *dt_load_f32(const dt_loader *l, size_t f, size_t n, float *buf)
{
    if (l->type == DTCAST_FLOAT32) {
        const uint8_t *src = (const uint8_t *)l->data + f * 4;
        if ((uintptr_t)src % _Alignof(float) == 0)
            return (const float *)(const void *)src;
        memcpy(buf, src, n * 4);
        return buf;
    }
    const size_t size = l->type == DTCAST_FLOAT64 ? 8 : 2;
    dt_qconv_run(&l->conv, buf, (const uint8_t *)l->data + f * size, n, f);
    return buf;
}

void dt_loader_release(dt_loader *l)
{
    dt_qconv_release(&l->conv);
}

void dt_storer_init(dt_storer *s, void *data, dtcast_type type, size_t count, bool exact)
{
    s->data = data;
    s->type = type;
    s->stream = !exact && dt_stream_wanted(dt_format_of(type), dt_format_of(DTCAST_FLOAT32), false,
                                           count);
    dt_qconv_init(&s->conv, type, DTCAST_FLOAT32, DTCAST_ROUND_RNE, false, 0, DT_QCHUNK, exact);
}

void dt_store_f32(const dt_storer *s, size_t f, const float *vals, size_t n)
{
    uint8_t *d = (uint8_t *)s->data;
    if (s->type == DTCAST_FLOAT32) {
        if (s->stream)
            dt_copy_stream(d + f * 4, vals, n * sizeof(float));
        else
            memcpy(d + f * 4, vals, n * sizeof(float));
        return;
    }
    const size_t size = s->type == DTCAST_FLOAT64 ? 8 : 2;
    if (!s->stream) {
        dt_qconv_run(&s->conv, d + f * size, vals, n, f);
        return;
    }
    _Alignas(64) uint8_t buf[DT_QCHUNK * 8];
    dt_qconv_run(&s->conv, buf, vals, n, f);
    dt_copy_stream(d + f * size, buf, n * size);
}

void dt_storer_release(dt_storer *s)
{
    dt_qconv_release(&s->conv);
}

void dt_store_scaled(const dt_storer *s, const dt_quant *q, size_t f, float *vals, size_t n,
                     size_t B, const float *k)
{
    const size_t nbk = n / B, rem = n % B;
    if (s->type == DTCAST_BFLOAT16 && rem % 8 == 0) {
        _Alignas(32) uint16_t tmp[DT_QCHUNK];
        if (dt_q_apply_bf16(q, tmp, vals, nbk, B, k) &&
            (rem == 0 || dt_q_apply_bf16(q, tmp + nbk * B, vals + nbk * B, 1, rem, k + nbk))) {
            uint8_t *d = (uint8_t *)s->data + f * 2;
            if (s->stream)
                dt_copy_stream(d, tmp, n * 2);
            else
                memcpy(d, tmp, n * 2);
            return;
        }
    }
    dt_q_apply(q, DT_Q_MUL, vals, vals, nbk, B, k);
    if (rem)
        dt_q_apply(q, DT_Q_MUL, vals + nbk * B, vals + nbk * B, 1, rem, k + nbk);
    dt_store_f32(s, f, vals, n);
}
