/* Quantized checkpoint layouts by tensor names (quant_layout.h). */
#include "files/quant_layout.h"

#include "files/safetensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *dt_qlayout_name(dt_qlayout layout)
{
    switch (layout) {
    case DT_QL_FP8_BLOCK: return "fp8-block";
    case DT_QL_MXFP4_GPTOSS: return "mxfp4-gptoss";
    case DT_QL_MX: return "mx";
    case DT_QL_NVFP4_MODELOPT: return "nvfp4-modelopt";
    case DT_QL_NVFP4_CT: return "nvfp4-ct";
    case DT_QL_ABSMAX: return "absmax";
    case DT_QL_INT4_GROUP: return "int4-group";
    case DT_QL_GPTQ: return "gptq";
    case DT_QL_AWQ: return "awq";
    }
    return "?";
}

const char *dt_qgroup_name(const dt_qgroup *g)
{
    if (g->deepseek_v4)
        return g->layout == DT_QL_FP8_BLOCK ? "deepseek-v4-fp8" : "deepseek-v4-fp4";
    if (g->comfyui)
        return "absmax-comfyui";
    if (g->packed_i32)
        return "pack-quantized";
    if (g->ct_mx)
        return "mx-ct";
    return dt_qlayout_name(g->layout);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* prefix (its first len bytes) + suffix, malloc'd. */
static char *concat(const char *prefix, size_t len, const char *suffix)
{
    size_t k = strlen(suffix);
    char *p = malloc(len + k + 1);
    if (p) {
        memcpy(p, prefix, len);
        memcpy(p + len, suffix, k + 1);
    }
    return p;
}

typedef struct finder {
    const dt_qt *t;
    size_t n;
    size_t *sorted; /* indices by name */
} finder;

static const dt_qt *sort_base;
static int cmp_index(const void *a, const void *b)
{
    return strcmp(sort_base[*(const size_t *)a].name, sort_base[*(const size_t *)b].name);
}

/* The index of the tensor named prefix[0, len) + suffix, or DT_QT_NONE. */
static size_t find(const finder *f, const char *prefix, size_t len, const char *suffix)
{
    char *name = concat(prefix, len, suffix);
    if (!name)
        return DT_QT_NONE;
    size_t lo = 0, hi = f->n;
    size_t found = DT_QT_NONE;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(f->t[f->sorted[mid]].name, name);
        if (c == 0) {
            found = f->sorted[mid];
            break;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    free(name);
    return found;
}

static uint64_t count_of(const dt_qt *t)
{
    uint64_t c = 1;
    for (int i = 0; i < t->ndim; i++)
        c *= (uint64_t)t->dims[i];
    return c;
}

static int is_float_scale(dtcast_type type)
{
    return type == DTCAST_FLOAT32 || type == DTCAST_BFLOAT16 || type == DTCAST_FLOAT16;
}

static void shape_text(char *buf, size_t size, const dt_qt *t)
{
    size_t at = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < t->ndim && at < size; i++)
        at += (size_t)snprintf(buf + at, size - at, "%s%lld", i ? ", " : "",
                               (long long)t->dims[i]);
    if (at < size)
        snprintf(buf + at, size - at, "]");
}

static const char *type_text(dtcast_type type)
{
    const char *n = dtcast_type_name(type);
    return n ? n : "?";
}

/* "tensor 'A' [2, 3] float32 does not fit 'B' [4, 5] uint8: why" */
static dtcast_status misfit(dt_io_error *err, const char *layout, const dt_qt *part,
                            const dt_qt *codes, const char *why)
{
    char a[160], b[160];
    shape_text(a, sizeof a, part);
    shape_text(b, sizeof b, codes);
    return dt_io_fail(err, DTCAST_ERR_BAD_SHAPE,
                      "%s: tensor '%s' (%s %s) does not fit '%s' (%s %s): %s", layout, part->name,
                      type_text(part->type), a, codes->name, type_text(codes->type), b, why);
}

/* Leading dims of a and b equal over the first n. */
static int same_lead(const dt_qt *a, const dt_qt *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    return 1;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return b > 0 ? (a + b - 1) / b : 0;
}

/* Block of a scale axis of `groups` entries over `len` elements: `preferred` when it gives that
 * many, else the smallest power of two that does, else 0. */
static int64_t block_for(int64_t len, int64_t groups, int64_t preferred)
{
    if (groups <= 0)
        return len == 0 ? preferred : 0;
    if (ceil_div(len, preferred) == groups)
        return preferred;
    /* Another power of two (DeepSeek's activations: 1 x 128), the smallest that fits. */
    for (int64_t b = 1; b <= len && b > 0; b *= 2)
        if (ceil_div(len, b) == groups)
            return b;
    return 0;
}

static dtcast_status add_group(dt_qplan *p, dt_qgroup **g, dt_io_error *err)
{
    dt_qgroup *grown = realloc(p->groups, (p->ngroups + 1) * sizeof *grown);
    if (!grown)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
    p->groups = grown;
    *g = &p->groups[p->ngroups++];
    memset(*g, 0, sizeof **g);
    (*g)->codes = (*g)->scales = (*g)->global = (*g)->zero_point = (*g)->g_idx = DT_QT_NONE;
    (*g)->post_scale = (*g)->marker = DT_QT_NONE;
    for (int i = 0; i < 4; i++)
        (*g)->extra[i] = DT_QT_NONE;
    return DTCAST_OK;
}

static void set_shape(dt_qgroup *g, const dt_qt *t)
{
    g->ndim = t->ndim;
    memcpy(g->dims, t->dims, sizeof g->dims);
}

/* X_blocks U8 [..., G, 16] + X_scales U8 / F8_E8M0 [..., G]. */
static dtcast_status check_gptoss(dt_qgroup *g, const dt_qt *b, const dt_qt *s, dt_io_error *err)
{
    const char *L = "mxfp4 (gpt-oss)";
    if (b->type != DTCAST_UINT8 || b->ndim < 2 || b->dims[b->ndim - 1] != 16)
        return misfit(err, L, b, s, "the blocks must be uint8 of shape [..., G, 16]");
    if ((s->type != DTCAST_UINT8 && s->type != DTCAST_FLOAT8E8M0) || s->ndim != b->ndim - 1 ||
        !same_lead(s, b, s->ndim))
        return misfit(err, L, s, b, "the scales must be uint8 of the blocks' shape without its "
                                    "last axis");
    g->element = DTCAST_FLOAT4E2M1;
    g->ndim = b->ndim - 1;
    memcpy(g->dims, b->dims, sizeof g->dims);
    g->dims[g->ndim - 1] = b->dims[b->ndim - 2] * 32;
    g->block = 32;
    return DTCAST_OK;
}

static dtcast_status check_fp8_block(dt_qgroup *g, const dt_qt *c, const dt_qt *s,
                                     dt_io_error *err)
{
    const char *L = g->deepseek_v4 ? "block fp8 (DeepSeek-V4)" : "block fp8";
    if (c->type != DTCAST_FLOAT8E4M3FN || c->ndim < 2)
        return misfit(err, L, c, s, "the weight must be F8_E4M3 with at least two axes");
    if ((s->type != DTCAST_FLOAT32 && !(g->deepseek_v4 && s->type == DTCAST_FLOAT8E8M0)) ||
        s->ndim != c->ndim || !same_lead(s, c, c->ndim - 2))
        return misfit(err, L, s, c,
                      g->deepseek_v4 ? "the scales must be F8_E8M0 (or F32) [..., ceil(N/128), "
                                       "ceil(K/128)]"
                                     : "the scales must be F32 [..., ceil(N/128), ceil(K/128)]");
    int64_t n = c->dims[c->ndim - 2], k = c->dims[c->ndim - 1];
    g->block_rows = block_for(n, s->dims[s->ndim - 2], 128);
    g->block = block_for(k, s->dims[s->ndim - 1], 128);
    if (!g->block_rows || !g->block)
        return misfit(err, L, s, c, "no tile size gives that many scales");
    g->element = DTCAST_FLOAT8E4M3FN;
    set_shape(g, c);
    return DTCAST_OK;
}

/* MX, NVFP4 and absmax groups along the last axis: scales [..., G] over codes [..., K]. */
static dtcast_status check_last_axis(dt_qgroup *g, const dt_qt *c, const dt_qt *s,
                                     int64_t k, int64_t preferred, const char *L,
                                     dt_io_error *err)
{
    if (c->ndim < 1 || s->ndim != c->ndim || !same_lead(s, c, c->ndim - 1))
        return misfit(err, L, s, c, "the scales must have the weight's shape with the last "
                                    "axis divided into blocks");
    g->block = block_for(k, s->dims[s->ndim - 1], preferred);
    if (!g->block)
        return misfit(err, L, s, c, "no block size gives that many scales");
    return DTCAST_OK;
}

static dtcast_status check_global(const dt_qt *gl, const dt_qt *c, const char *L,
                                  dt_io_error *err)
{
    if (gl->type != DTCAST_FLOAT32 || count_of(gl) != 1 || gl->ndim > 1)
        return misfit(err, L, gl, c, "the global scale must be one F32 value");
    return DTCAST_OK;
}

static dtcast_status check_nvfp4(dt_qgroup *g, const dt_qt *c, const dt_qt *s, const dt_qt *gl,
                                 const char *L, dt_io_error *err)
{
    if (c->type != DTCAST_UINT8 || c->ndim < 1)
        return misfit(err, L, c, s, "the weight must be uint8, two float4 codes per byte");
    if (s->type != DTCAST_FLOAT8E4M3FN)
        return misfit(err, L, s, c, "the block scales must be F8_E4M3");
    int64_t k = c->dims[c->ndim - 1] * 2;
    dtcast_status st = check_last_axis(g, c, s, k, 16, L, err);
    if (st == DTCAST_OK && g->block != 16)
        st = misfit(err, L, s, c, "NVFP4 blocks are 16 elements");
    if (st == DTCAST_OK)
        st = check_global(gl, c, L, err);
    if (st != DTCAST_OK)
        return st;
    g->element = DTCAST_FLOAT4E2M1;
    set_shape(g, c);
    g->dims[g->ndim - 1] = k;
    return DTCAST_OK;
}

/* compressed-tensors' MXFP4 (mxfp4-pack-quantized): X.weight_packed U8 [..., K/2] + X.weight_scale
 * U8 [..., K/32] (E8M0 bytes), no global scale. */
static dtcast_status check_ct_mxfp4(dt_qgroup *g, const dt_qt *c, const dt_qt *s,
                                    dt_io_error *err)
{
    const char *L = "mxfp4 (compressed-tensors)";
    if (c->type != DTCAST_UINT8 || c->ndim < 1)
        return misfit(err, L, c, s, "the weight must be uint8, two float4 codes per byte");
    const int64_t k = c->dims[c->ndim - 1] * 2;
    dtcast_status st = check_last_axis(g, c, s, k, 32, L, err);
    if (st == DTCAST_OK && (g->block != 32 || s->dims[s->ndim - 1] != ceil_div(k, 32)))
        st = misfit(err, L, s, c, "one uint8 scale per 32 float4 codes (two per byte): the "
                                  "scales' last axis must be ceil(2 K / 32)");
    if (st != DTCAST_OK)
        return st;
    g->layout = DT_QL_MX;
    g->ct_mx = 1;
    g->element = DTCAST_FLOAT4E2M1;
    set_shape(g, c);
    g->dims[g->ndim - 1] = k;
    return DTCAST_OK;
}

static dtcast_type mx_element(dtcast_type code_type)
{
    switch (code_type) {
    case DTCAST_FLOAT8E4M3FN:
    case DTCAST_FLOAT8E5M2:
    case DTCAST_FLOAT6E2M3FN:
    case DTCAST_FLOAT6E3M2FN:
    case DTCAST_FLOAT4E2M1:
    case DTCAST_INT8:
        return code_type;
    default:
        return DTCAST_UNDEFINED;
    }
}

/* X.weight with X.weight_scale: MX (an F8_E8M0 scale) or absmax (a float scale). */
static dtcast_status check_weight_scale(dt_qgroup *g, const dt_qt *c, const dt_qt *s,
                                        dt_io_error *err)
{
    if (s->type == DTCAST_FLOAT8E8M0 ||
        (s->type == DTCAST_UINT8 && mx_element(c->type) != DTCAST_UNDEFINED &&
         c->type != DTCAST_INT8)) {
        /* F8_E8M0 scales: MX; uint8 ones beside float codes: compressed-tensors' MX
         * (mxfp8-quantized), the same E8M0 bytes */
        g->ct_mx = s->type == DTCAST_UINT8;
        const char *L = g->ct_mx ? "mx (compressed-tensors)" : "mx";
        g->layout = DT_QL_MX;
        g->element = mx_element(c->type);
        if (g->element == DTCAST_UNDEFINED)
            return misfit(err, L, c, s, "MX codes are F8_E4M3, F8_E5M2, F6_E2M3, F6_E3M2, F4 "
                                        "or I8");
        set_shape(g, c);
        dtcast_status st = check_last_axis(g, c, s, c->ndim ? c->dims[c->ndim - 1] : 0, 32, L,
                                           err);
        if (st == DTCAST_OK && g->ct_mx && g->block != 32)
            st = misfit(err, L, s, c, "compressed-tensors' MX blocks are 32 elements: one "
                                      "uint8 scale per 32 codes of a row");
        return st;
    }
    const char *L = g->comfyui ? "scaled fp8 (ComfyUI)" : "absmax (compressed-tensors)";
    g->layout = DT_QL_ABSMAX;
    if (c->type != DTCAST_INT8 && c->type != DTCAST_FLOAT8E4M3FN && c->type != DTCAST_FLOAT8E5M2)
        return misfit(err, L, c, s, "the weight must be I8, F8_E4M3 or F8_E5M2 (uint8 codes with "
                                    "an F8_E4M3 scale need X.weight_scale_2: NVFP4)");
    if (!is_float_scale(s->type))
        return misfit(err, L, s, c, "the scale must be F32, BF16 or F16 (or F8_E8M0: MX)");
    g->element = c->type;
    set_shape(g, c);
    if (count_of(s) == 1 && (s->ndim <= 1 || c->ndim < 2 || c->dims[c->ndim - 2] != 1)) {
        g->per_tensor = 1;
        return DTCAST_OK;
    }
    /* diffusers' block-wise scales [..., N, G, 1]: the groups are the axis before the last */
    const int blockwise = c->ndim >= 2 && s->ndim == c->ndim + 1 && s->dims[s->ndim - 1] == 1;
    if (c->ndim < 2 || (s->ndim != c->ndim && !blockwise) || !same_lead(s, c, c->ndim - 1))
        return misfit(err, L, s, c, "the scale must be [], [1], [..., N, 1], [..., N, G] or "
                                    "[..., N, G, 1]");
    int64_t k = c->dims[c->ndim - 1], groups = s->dims[c->ndim - 1];
    if (groups == 1) {
        g->block = 0; /* per channel */
        return DTCAST_OK;
    }
    if (groups <= 0 || k % groups)
        return misfit(err, L, s, c, "the groups must divide the last axis");
    g->block = k / groups;
    return DTCAST_OK;
}

/* DeepSeek-V4's routed experts: X.weight I8 [..., K/2], two float4e2m1 codes per byte (element
 * 2k in the low nibble), X.scale F8_E8M0 [..., K/32]: MX blocks of 32. */
static dtcast_status check_dsv4_fp4(dt_qgroup *g, const dt_qt *c, const dt_qt *s,
                                    dt_io_error *err)
{
    const char *L = "fp4 experts (DeepSeek-V4)";
    if (s->type != DTCAST_FLOAT8E8M0)
        return misfit(err, L, s, c, "the scales of I8 float4 codes must be F8_E8M0");
    if (c->ndim < 1 || s->ndim != c->ndim || !same_lead(s, c, c->ndim - 1))
        return misfit(err, L, s, c, "the scales must have the weight's shape with the last axis "
                                    "in blocks of 32");
    const int64_t k = c->dims[c->ndim - 1] * 2;
    if (s->dims[s->ndim - 1] != ceil_div(k, 32))
        return misfit(err, L, s, c, "one scale per 32 float4 codes (two per I8 byte): the "
                                    "scales' last axis must be ceil(2 K / 32)");
    g->layout = DT_QL_MX;
    g->element = DTCAST_FLOAT4E2M1;
    g->block = 32;
    set_shape(g, c);
    g->dims[g->ndim - 1] = k;
    return DTCAST_OK;
}

dtcast_status dt_qgroup_set_k(dt_qgroup *g, const dt_qt *c, const dt_qt *s, int64_t k,
                              dt_io_error *err)
{
    const char *L = "pack-quantized (compressed-tensors)";
    const int64_t w = c->dims[c->ndim - 1]; /* words (the file holds them: w * 8 fits) */
    const int fits = k > 0 && k <= w * 8;
    if (fits && ceil_div(k * 4, 32) == w)
        g->bits = 4;
    else if (fits && ceil_div(k * 8, 32) == w)
        g->bits = 8;
    else {
        char why[160];
        snprintf(why, sizeof why, "%lld codes of 4 or 8 bits take ceil(%lld bits / 32) words per "
                 "row, not %lld", (long long)k, (long long)k, (long long)w);
        return misfit(err, L, c, c, why);
    }
    g->element = DTCAST_INT8;
    set_shape(g, c);
    g->dims[g->ndim - 1] = k;
    g->per_tensor = 0;
    g->block = 0;
    if (count_of(s) == 1 && (s->ndim <= 1 || c->ndim < 2)) {
        g->per_tensor = 1;
        return DTCAST_OK;
    }
    if (s->ndim != c->ndim || !same_lead(s, c, c->ndim - 1))
        return misfit(err, L, s, c, "the scale must be [1], [..., N, 1] or [..., N, G]");
    const int64_t groups = s->dims[s->ndim - 1];
    if (groups == 1)
        return DTCAST_OK; /* per channel */
    g->block = block_for(k, groups, 128);
    if (!g->block)
        return misfit(err, L, s, c, "no group size gives that many scales");
    return DTCAST_OK;
}

void dt_qgroup_unpack_rows(const dt_qgroup *g, const uint8_t *words, uint64_t row, uint64_t nr,
                           uint64_t wpr, const int8_t *zp, uint64_t groups, int8_t *out)
{
    const uint64_t k = (uint64_t)g->dims[g->ndim - 1];
    const uint64_t gs = g->per_tensor ? k : g->block ? (uint64_t)g->block : k;
    /*   one int32 word, little-endian in the file (4-bit codes: eight per word):
     *     byte 0          byte 1          byte 2          byte 3
     *     [c1   ][c0   ] [c3   ][c2   ] [c5   ][c4   ] [c7   ][c6   ]   each nibble = code + 8
     *   so code i of a row is nibble i % 2 of byte i / 2 of the row's words, whatever the host's
     *   byte order; 8-bit codes: byte i = code + 128. */
    for (uint64_t r = 0; r < nr; r++) {
        const uint8_t *w = words + r * wpr * 4;
        const int8_t *z = zp && !g->per_tensor ? zp + (row + r) * groups : zp;
        int8_t *o = out + r * k;
        if (g->bits == 4)
            for (uint64_t i = 0; i < k; i++) {
                const int code = ((w[i / 2] >> (4 * (i % 2))) & 15) - 8;
                o[i] = (int8_t)(code - (z ? z[groups > 1 ? i / gs : 0] : 0));
            }
        else
            for (uint64_t i = 0; i < k; i++) {
                const int code = (int)w[i] - 128;
                o[i] = (int8_t)(code - (z ? z[groups > 1 ? i / gs : 0] : 0));
            }
    }
}

void dt_qgroup_unpack_zero_points(const dt_qgroup *g, const uint8_t *packed, uint64_t groups,
                                  int8_t *out)
{
    /* zero point (n, j) of a matrix of N rows: word (n * bits / 32, j), code n % (32 / bits) of
     * it; the matrices of a 3-D (MoE) weight one after another */
    const uint64_t n = g->ndim >= 2 ? (uint64_t)g->dims[g->ndim - 2] : 1;
    uint64_t mats = 1;
    for (int d = 0; d < g->ndim - 2; d++)
        mats *= (uint64_t)g->dims[d];
    const uint64_t per_word = 32 / (uint64_t)g->bits, wrows = (n + per_word - 1) / per_word;
    for (uint64_t m = 0; m < mats; m++)
        for (uint64_t r = 0; r < n; r++)
            for (uint64_t j = 0; j < groups; j++) {
                const uint8_t *w = packed + ((m * wrows + r / per_word) * groups + j) * 4;
                const uint64_t i = r % per_word;
                const int v = g->bits == 4 ? ((w[i / 2] >> (4 * (i % 2))) & 15) - 8
                                           : (int)w[i] - 128;
                out[(m * n + r) * groups + j] = (int8_t)v;
            }
}

dtcast_status dt_qplan_pack_shapes(dt_qplan *plan, const dt_qt *t, dt_qread_fn read, void *ctx,
                                   dt_io_error *err)
{
    const char *L = "pack-quantized (compressed-tensors)";
    for (size_t gi = 0; gi < plan->ngroups; gi++) {
        dt_qgroup *g = &plan->groups[gi];
        if (!g->packed_i32)
            continue;
        const dt_qt *codes = &t[g->codes], *scales = &t[g->scales];
        if (g->extra[2] != DT_QT_NONE) {
            const dt_qt *sh = &t[g->extra[2]];
            const int eb = sh->type == DTCAST_INT64 ? 8 : 4;
            if ((sh->type != DTCAST_INT64 && sh->type != DTCAST_INT32) || sh->ndim != 1 ||
                sh->dims[0] != codes->ndim)
                return misfit(err, L, sh, codes, "the shape tensor must be I64 or I32 [ndim]");
            uint8_t data[DT_MAX_DIMS * 8];
            dtcast_status st = read(ctx, g->extra[2], data, (size_t)(eb * codes->ndim), err);
            if (st != DTCAST_OK)
                return st;
            int64_t dims[DT_MAX_DIMS];
            for (int i = 0; i < codes->ndim; i++) {
                if (eb == 8) {
                    memcpy(&dims[i], data + 8 * i, 8);
                } else {
                    int32_t v;
                    memcpy(&v, data + 4 * i, 4);
                    dims[i] = v;
                }
            }
            for (int d = 0; d + 1 < codes->ndim; d++)
                if (dims[d] != codes->dims[d])
                    return misfit(err, L, sh, codes, "its values are not the weight's leading "
                                                     "dimensions");
            dt_io_error e = DT_IO_ERROR_INIT;
            const dtcast_status s2 = dt_qgroup_set_k(g, codes, scales, dims[codes->ndim - 1], &e);
            if (s2 != DTCAST_OK)
                return dt_io_fail(err, s2, "tensor '%s' says '%s' has %lld columns: %s", sh->name,
                                  codes->name, (long long)dims[codes->ndim - 1], e.message);
        }
        if (g->zero_point != DT_QT_NONE) {
            const dt_qt *zp = &t[g->zero_point];
            const int64_t rows = codes->ndim >= 2 ? codes->dims[codes->ndim - 2] : 1;
            const int64_t per = 32 / g->bits;
            if (codes->ndim < 2 || zp->dims[zp->ndim - 2] != ceil_div(rows, per))
                return misfit(err, L, zp, codes, "the zero points must be packed along N, "
                                                 "32 / bits per I32 word");
        }
    }
    return DTCAST_OK;
}

/* compressed-tensors pack-quantized: X.weight_packed I32 with X.weight_scale (and the shape and
 * zero point beside them). The last dimension is the words' capacity until the caller reads
 * X.weight_shape (dt_qgroup_set_k). */
static dtcast_status check_pack_quantized(dt_qgroup *g, const dt_qt *c, const dt_qt *s,
                                          const dt_qt *zp, int has_shape, dt_io_error *err)
{
    const char *L = "pack-quantized (compressed-tensors)";
    if (c->ndim < 1)
        return misfit(err, L, c, s, "the packed weight needs at least one axis");
    if (!is_float_scale(s->type))
        return misfit(err, L, s, c, "the scale must be F32, BF16 or F16");
    g->layout = DT_QL_ABSMAX;
    g->packed_i32 = 1;
    dtcast_status st = DTCAST_OK;
    if (has_shape) { /* the caller reads X.weight_shape and checks the groups then */
        g->element = DTCAST_INT8;
        g->bits = 4;
        set_shape(g, c);
        g->dims[g->ndim - 1] = c->dims[c->ndim - 1] * 8;
        g->per_tensor = count_of(s) == 1 && (s->ndim <= 1 || c->ndim < 2);
    } else {
        st = dt_qgroup_set_k(g, c, s, c->dims[c->ndim - 1] * 8, err);
    }
    if (st != DTCAST_OK || !zp)
        return st;
    if (zp->type != DTCAST_INT32 || zp->ndim != c->ndim || g->per_tensor ||
        !same_lead(zp, c, c->ndim - 2) || zp->dims[zp->ndim - 1] != s->dims[s->ndim - 1])
        return misfit(err, L, zp, c, "the zero points must be I32 [..., ceil(N bits / 32), G], "
                                     "packed along N");
    return DTCAST_OK;
}

static dtcast_status check_int4(dt_qgroup *g, const dt_qt *c, const dt_qt *s, dt_io_error *err)
{
    const char *L = "int4 groups";
    if (c->type != DTCAST_UINT8 || c->ndim < 1)
        return misfit(err, L, c, s, "the weight must be uint8, two int4 codes per byte");
    if (!is_float_scale(s->type))
        return misfit(err, L, s, c, "the scale must be F32, BF16 or F16");
    int64_t k = c->dims[c->ndim - 1] * 2;
    dtcast_status st = check_last_axis(g, c, s, k, 128, L, err);
    if (st != DTCAST_OK)
        return st;
    g->element = DTCAST_INT4;
    set_shape(g, c);
    g->dims[g->ndim - 1] = k;
    return DTCAST_OK;
}

/* Code i (bits wide) of the little-endian int32 word at w. */
static inline int code_at(const uint8_t *w, int i, int bits)
{
    const uint32_t v = (uint32_t)w[0] | (uint32_t)w[1] << 8 | (uint32_t)w[2] << 16 |
                       (uint32_t)w[3] << 24;
    return (int)((v >> (i * bits)) & ((1u << bits) - 1));
}

void dt_qgroup_gptq_tile(const dt_qgroup *g, const uint8_t *qrows, int64_t k0, int64_t kc,
                         const uint8_t *qzeros, const float *scales, const int32_t *g_idx,
                         float *tile)
{
    const int64_t n = g->dims[0], bits = g->bits, per = 32 / bits;
    const int64_t zw = n / per; /* zero words per group row */
    /* AWQ packs columns 8 to a word in the order 0 2 4 6 1 3 5 7: column c of a word is at
     * position awq_pos[c] (AutoAWQ's reverse order) */
    static const int awq_pos[8] = {0, 4, 1, 5, 2, 6, 3, 7};
    for (int64_t k = k0; k < k0 + kc; k++) {
        const int64_t grp = g_idx ? g_idx[k] : k / g->block;
        const float *srow = scales + grp * n;
        const uint8_t *zrow = qzeros + (size_t)(grp * zw) * 4;
        if (g->layout == DT_QL_GPTQ) {
            /* word (k / per, col) holds rows k of column col; zeros (grp, col / per) */
            const uint8_t *qrow = qrows + (size_t)(((k - k0) / per) * n) * 4;
            const int qi = (int)(k % per);
            for (int64_t c = 0; c < n; c++) {
                const int q = code_at(qrow + c * 4, qi, (int)bits);
                const int z = code_at(zrow + (c / per) * 4, (int)(c % per), (int)bits) +
                              g->zero_offset;
                tile[c * kc + (k - k0)] = (float)(q - z) * srow[c];
            }
        } else {
            const uint8_t *qrow = qrows + (size_t)((k - k0) * (n / 8)) * 4;
            for (int64_t c = 0; c < n; c++) {
                const int q = code_at(qrow + (c / 8) * 4, awq_pos[c % 8], 4);
                const int z = code_at(zrow + (c / 8) * 4, awq_pos[c % 8], 4);
                tile[c * kc + (k - k0)] = (float)(q - z) * srow[c];
            }
        }
    }
}

/* GPTQ and AWQ: X.qweight with X.qzeros and X.scales (and GPTQ's X.g_idx), told apart by the
 * axis the words pack: GPTQ's qweight has the scales' N columns, AWQ's N / (32 / bits). */
static dtcast_status check_gptq_awq(dt_qgroup *g, const dt_qt *q, const dt_qt *z, const dt_qt *s,
                                    const dt_qt *gi, dt_io_error *err)
{
    const char *L = "gptq / awq";
    if (q->type != DTCAST_INT32 || q->ndim != 2)
        return misfit(err, L, q, s, "qweight must be I32 with two axes");
    if (!is_float_scale(s->type) || s->ndim != 2)
        return misfit(err, L, s, q, "scales must be F16, BF16 or F32 [G, N]");
    if (z->type != DTCAST_INT32 || z->ndim != 2 || z->dims[0] != s->dims[0])
        return misfit(err, L, z, s, "qzeros must be I32 [G, N bits / 32], one row per group");
    const int64_t n = s->dims[1], groups = s->dims[0];
    /* bits from the zeros' packing: N bits / 32 words per group row */
    int bits = 0;
    for (int b = 2; b <= 8; b *= 2)
        if (z->dims[1] * 32 == n * b)
            bits = b;
    if (!bits)
        return misfit(err, L, z, s, "qzeros must pack N zeros of 2, 4 or 8 bits into I32 words");
    const int64_t per = 32 / bits;
    int64_t k;
    if (q->dims[1] == n) { /* GPTQ: input rows packed */
        g->layout = DT_QL_GPTQ;
        k = q->dims[0] * per;
        g->zero_offset = 1;
        if (gi && (gi->type != DTCAST_INT32 || gi->ndim != 1 || gi->dims[0] != k))
            return misfit(err, L, gi, q, "g_idx must be I32 [K]: one group per input row");
    } else if (q->dims[1] * per == n) { /* AWQ: columns packed */
        g->layout = DT_QL_AWQ;
        k = q->dims[0];
        if (bits != 4)
            return misfit(err, L, q, s, "AWQ packs 4-bit codes");
        if (gi)
            return misfit(err, L, gi, q, "AWQ has no g_idx");
    } else {
        return misfit(err, L, q, s, "qweight must be [K bits / 32, N] (GPTQ) or [K, N bits / 32] "
                                    "(AWQ) for the scales' N");
    }
    /* the group size: 128 when it gives G groups (the last may be short), else the smallest
     * power of two that does; the config's group_size replaces it (apply_config) */
    g->block = groups == 1 ? k : block_for(k, groups, 128);
    if (!g->block)
        g->block = ceil_div(k, groups);
    if (groups > k || ceil_div(k, g->block) != groups)
        return misfit(err, L, s, q, "no group size splits K into that many groups");
    g->bits = bits;
    g->element = DTCAST_INT8;
    g->ndim = 2;
    g->dims[0] = n;
    g->dims[1] = k;
    return DTCAST_OK;
}

static dtcast_status orphan(dt_io_error *err, const dt_qt *t, const char *want)
{
    return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                      "scale tensor '%s' has no codes tensor '%s' beside it", t->name, want);
}

/* Claims tensor i as part of group gi (an error if another group has it). */
static dtcast_status claim(dt_qplan *p, const dt_qt *t, size_t i, size_t gi, dt_qrole role,
                           dt_io_error *err)
{
    if (i == DT_QT_NONE)
        return DTCAST_OK;
    if (p->role[i] != DT_QR_PLAIN)
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                          "tensor '%s' belongs to two quantized tensors", t[i].name);
    p->role[i] = role;
    p->group[i] = gi;
    return DTCAST_OK;
}

/* The group anchored at tensor i, if it is one. */
static dtcast_status anchor(dt_qplan *p, const finder *f, size_t i, dt_io_error *err)
{
    const dt_qt *t = &f->t[i];
    const char *name = t->name;
    size_t len = strlen(name);
    dt_qgroup *g = NULL;
    dtcast_status st = DTCAST_OK;
    size_t s, gl;
    if (ends_with(name, "qweight") && t->type == DTCAST_INT32) {
        const size_t base = len - 7; /* the prefix "X." */
        const size_t z = find(f, name, base, "qzeros");
        s = find(f, name, base, "scales");
        if (z == DT_QT_NONE || s == DT_QT_NONE)
            return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                              "GPTQ/AWQ tensor '%s' has no '%.*sqzeros' and '%.*sscales' beside it",
                              name, (int)base, name, (int)base, name);
        if ((st = add_group(p, &g, err)) != DTCAST_OK)
            return st;
        g->codes = i;
        g->scales = s;
        g->zero_point = z;
        g->g_idx = find(f, name, base, "g_idx");
        g->name = concat(name, base, "weight");
        st = check_gptq_awq(g, t, &f->t[z], &f->t[s],
                            g->g_idx != DT_QT_NONE ? &f->t[g->g_idx] : NULL, err);
        if (st == DTCAST_OK && g->name)
            st = claim(p, f->t, g->g_idx, p->ngroups - 1, DT_QR_PART, err);
    } else if (ends_with(name, "_blocks") && (s = find(f, name, len - 7, "_scales")) != DT_QT_NONE) {
        if ((st = add_group(p, &g, err)) != DTCAST_OK)
            return st;
        g->layout = DT_QL_MXFP4_GPTOSS;
        g->codes = i;
        g->scales = s;
        g->name = concat(name, len - 7, "");
        st = check_gptoss(g, t, &f->t[s], err);
    } else if (ends_with(name, "weight_packed")) {
        size_t base = len - 7; /* X.weight */
        s = find(f, name, base, "_scale");
        if (s == DT_QT_NONE)
            return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                              "quantized tensor '%s' has no scale tensor '%.*s_scale'", name,
                              (int)base, name);
        if ((st = add_group(p, &g, err)) != DTCAST_OK)
            return st;
        g->codes = i;
        g->scales = s;
        g->name = concat(name, base, "");
        gl = find(f, name, base, "_global_scale");
        if (t->type == DTCAST_INT32) {
            g->zero_point = find(f, name, base, "_zero_point");
            st = check_pack_quantized(g, t, &f->t[s],
                                      g->zero_point != DT_QT_NONE ? &f->t[g->zero_point] : NULL,
                                      find(f, name, base, "_shape") != DT_QT_NONE, err);
        } else if (gl == DT_QT_NONE && (f->t[s].type == DTCAST_UINT8 ||
                                        f->t[s].type == DTCAST_FLOAT8E8M0)) {
            st = check_ct_mxfp4(g, t, &f->t[s], err);
        } else if (gl != DT_QT_NONE) {
            g->layout = DT_QL_NVFP4_CT;
            g->global = gl;
            st = check_nvfp4(g, t, &f->t[s], &f->t[gl], "nvfp4 (compressed-tensors)", err);
        } else {
            g->layout = DT_QL_INT4_GROUP;
            st = check_int4(g, t, &f->t[s], err);
        }
        g->extra[2] = find(f, name, base, "_shape");
    } else if (ends_with(name, "weight")) {
        size_t inv = find(f, name, len, "_scale_inv");
        s = find(f, name, len, "_scale");
        /* ComfyUI: m.weight with m.scale_weight */
        const size_t comfy = inv == DT_QT_NONE && s == DT_QT_NONE && ends_with(name, ".weight")
                                 ? find(f, name, len - 6, "scale_weight")
                                 : DT_QT_NONE;
        /* DeepSeek-V4: X.weight with X.scale */
        const size_t v4 = inv == DT_QT_NONE && s == DT_QT_NONE && ends_with(name, ".weight") &&
                                  (t->type == DTCAST_FLOAT8E4M3FN || t->type == DTCAST_INT8)
                              ? find(f, name, len - 6, "scale")
                              : DT_QT_NONE;
        if (comfy != DT_QT_NONE) {
            if ((st = add_group(p, &g, err)) != DTCAST_OK)
                return st;
            g->codes = i;
            g->scales = comfy;
            g->comfyui = 1;
            g->name = concat(name, len, "");
            st = check_weight_scale(g, t, &f->t[comfy], err);
            g->post_scale = find(f, name, len - 6, "scale_weight_tensor");
            if (st == DTCAST_OK && g->post_scale != DT_QT_NONE &&
                (f->t[g->post_scale].type != DTCAST_FLOAT32 || count_of(&f->t[g->post_scale]) != 1))
                st = misfit(err, "scaled fp8 (ComfyUI)", &f->t[g->post_scale], t,
                            "the second-level scale must be one F32 value");
        } else if (v4 != DT_QT_NONE) {
            if ((st = add_group(p, &g, err)) != DTCAST_OK)
                return st;
            g->codes = i;
            g->scales = v4;
            g->deepseek_v4 = 1;
            g->name = concat(name, len, "");
            if (t->type == DTCAST_FLOAT8E4M3FN) {
                g->layout = DT_QL_FP8_BLOCK;
                st = check_fp8_block(g, t, &f->t[v4], err);
            } else {
                st = check_dsv4_fp4(g, t, &f->t[v4], err);
            }
        } else if (inv == DT_QT_NONE && s == DT_QT_NONE) {
            if (t->type == DTCAST_FLOAT8E4M3FN || t->type == DTCAST_FLOAT8E5M2 ||
                (dtcast_type_bits(t->type) <= 8 && dt_st_is_float(t->type)))
                return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                                  "quantized tensor '%s' (%s) has no scale tensor ('%s_scale_inv' "
                                  "or '%s_scale')",
                                  name, type_text(t->type), name, name);
            return DTCAST_OK;
        } else {
            if ((st = add_group(p, &g, err)) != DTCAST_OK)
                return st;
            g->codes = i;
            g->name = concat(name, len, "");
            if (inv != DT_QT_NONE) {
                g->layout = DT_QL_FP8_BLOCK;
                g->scales = inv;
                st = check_fp8_block(g, t, &f->t[inv], err);
            } else if ((gl = find(f, name, len, "_scale_2")) != DT_QT_NONE) {
                g->layout = DT_QL_NVFP4_MODELOPT;
                g->scales = s;
                g->global = gl;
                st = check_nvfp4(g, t, &f->t[s], &f->t[gl], "nvfp4 (ModelOpt)", err);
            } else {
                g->scales = s;
                st = check_weight_scale(g, t, &f->t[s], err);
            }
        }
    } else if (mx_element(t->type) != DTCAST_UNDEFINED && t->type != DTCAST_INT8 &&
               (s = find(f, name, len, "_scale")) != DT_QT_NONE &&
               f->t[s].type == DTCAST_FLOAT8E8M0) {
        /* MX under a name that is not a module's weight (gpt-oss's fused experts in MX:
         * mlp.experts.gate_up_proj + mlp.experts.gate_up_proj_scale) */
        if ((st = add_group(p, &g, err)) != DTCAST_OK)
            return st;
        g->codes = i;
        g->scales = s;
        g->name = concat(name, len, "");
        st = check_weight_scale(g, t, &f->t[s], err);
    } else {
        return DTCAST_OK;
    }
    if (st == DTCAST_OK && !g->name)
        st = dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
    if (st != DTCAST_OK)
        return st;
    /* Activation scales of the same layer: X.input_scale, X.input_global_scale. */
    const char *dot = strrchr(g->name, '.');
    if (dot && strcmp(dot, ".weight") == 0) {
        size_t pre = (size_t)(dot - g->name) + 1;
        g->extra[0] = find(f, g->name, pre, "input_scale");
        if (g->extra[0] == DT_QT_NONE)
            g->extra[0] = find(f, g->name, pre, "scale_input"); /* ComfyUI */
        g->extra[1] = find(f, g->name, pre, "input_global_scale");
        g->extra[3] = find(f, g->name, pre, "comfy_quant");
    }
    size_t gi = p->ngroups - 1;
    st = claim(p, f->t, g->codes, gi, DT_QR_CODES, err);
    if (st == DTCAST_OK)
        st = claim(p, f->t, g->scales, gi, DT_QR_PART, err);
    if (st == DTCAST_OK)
        st = claim(p, f->t, g->global, gi, DT_QR_PART, err);
    for (int k = 0; st == DTCAST_OK && k < 4; k++)
        st = claim(p, f->t, g->extra[k], gi, DT_QR_PART, err);
    if (st == DTCAST_OK)
        st = claim(p, f->t, g->zero_point, gi, DT_QR_PART, err);
    if (st == DTCAST_OK)
        st = claim(p, f->t, g->post_scale, gi, DT_QR_PART, err);
    return st;
}

/* A scale-named tensor nobody claimed names the codes tensor it lacks: *weight_scale_inv,
 * *weight_scale_2, *weight_global_scale, *weight_scale, and uint8 *_scales (gpt-oss). */
static dtcast_status orphans(const dt_qplan *p, const dt_qt *t, size_t n, dt_io_error *err)
{
    static const char *const suffixes[] = {"_scale_inv", "_scale_2", "_global_scale", "_scale"};
    for (size_t i = 0; i < n; i++) {
        if (p->role[i] != DT_QR_PLAIN)
            continue;
        const char *name = t[i].name;
        size_t len = strlen(name), cut = 0;
        const char *add = "";
        if (ends_with(name, "_scales") &&
            (t[i].type == DTCAST_UINT8 || t[i].type == DTCAST_FLOAT8E8M0)) {
            cut = len - 7;
            add = "_blocks";
        }
        if (!cut && ends_with(name, ".scale") && t[i].type == DTCAST_FLOAT8E8M0) {
            cut = len - 5; /* DeepSeek-V4: X.scale beside X.weight */
            add = "weight";
        }
        for (size_t k = 0; !cut && k < sizeof suffixes / sizeof suffixes[0]; k++) {
            size_t sl = strlen(suffixes[k]);
            if (len >= sl + 6 && strcmp(name + len - sl, suffixes[k]) == 0 &&
                strncmp(name + len - sl - 6, "weight", 6) == 0)
                cut = len - sl;
        }
        if (!cut)
            continue;
        char *want = concat(name, cut, add);
        dtcast_status st = want ? orphan(err, &t[i], want)
                                : dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
        free(want);
        return st;
    }
    return DTCAST_OK;
}

void dt_qplan_free(dt_qplan *p)
{
    for (size_t i = 0; i < p->ngroups; i++)
        free(p->groups[i].name);
    free(p->groups);
    free(p->role);
    free(p->group);
    memset(p, 0, sizeof *p);
}

dtcast_status dt_qplan_make(const dt_qt *t, size_t n, dt_qplan *p, dt_io_error *err)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->role = calloc(n ? n : 1, sizeof *p->role);
    p->group = calloc(n ? n : 1, sizeof *p->group);
    finder f = {t, n, malloc((n ? n : 1) * sizeof(size_t))};
    dtcast_status st = DTCAST_OK;
    if (!p->role || !p->group || !f.sorted)
        st = dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
    if (st == DTCAST_OK) {
        for (size_t i = 0; i < n; i++)
            f.sorted[i] = i;
        sort_base = t;
        qsort(f.sorted, n, sizeof *f.sorted, cmp_index);
    }
    for (size_t i = 0; st == DTCAST_OK && i < n; i++)
        if (p->role[i] == DT_QR_PLAIN)
            st = anchor(p, &f, i, err);
    /* ComfyUI's marker {prefix}scaled_fp8 (an empty F8 tensor [0], or [2]): it tells a loader the
     * file is scaled FP8, so it goes with the scales (to the first ComfyUI group) */
    for (size_t i = 0; st == DTCAST_OK && i < n; i++) {
        if (p->role[i] != DT_QR_PLAIN || !ends_with(t[i].name, "scaled_fp8") || t[i].ndim != 1 ||
            t[i].dims[0] > 2 || dtcast_type_bits(t[i].type) != 8)
            continue;
        for (size_t gi = 0; gi < p->ngroups; gi++)
            if (p->groups[gi].comfyui && p->groups[gi].marker == DT_QT_NONE) {
                p->groups[gi].marker = i;
                st = claim(p, t, i, gi, DT_QR_PART, err);
                break;
            }
    }
    if (st == DTCAST_OK)
        st = orphans(p, t, n, err);
    free(f.sorted);
    if (st != DTCAST_OK)
        dt_qplan_free(p);
    return st;
}

dtcast_status dt_qlayout_names(dt_qlayout layout, const char *name, char *out[3],
                               dt_io_error *err)
{
    size_t len = strlen(name);
    const char *suffix[3] = {"", NULL, NULL};
    switch (layout) {
    case DT_QL_FP8_BLOCK: suffix[1] = "_scale_inv"; break;
    case DT_QL_MXFP4_GPTOSS: suffix[0] = "_blocks"; suffix[1] = "_scales"; break;
    case DT_QL_MX:
    case DT_QL_ABSMAX: suffix[1] = "_scale"; break;
    case DT_QL_NVFP4_MODELOPT: suffix[1] = "_scale"; suffix[2] = "_scale_2"; break;
    case DT_QL_NVFP4_CT:
        suffix[0] = "_packed"; suffix[1] = "_scale"; suffix[2] = "_global_scale";
        break;
    case DT_QL_INT4_GROUP: suffix[0] = "_packed"; suffix[1] = "_scale"; break;
    case DT_QL_GPTQ: /* read only: never written */
    case DT_QL_AWQ:
        return dt_io_fail(err, DTCAST_ERR_UNSUPPORTED, "%s: dtcast reads %s checkpoints, it does "
                          "not write them", name, dt_qlayout_name(layout));
    }
    for (int i = 0; i < 3; i++)
        out[i] = NULL;
    for (int i = 0; i < 3; i++) {
        if (!suffix[i])
            continue;
        if (!(out[i] = concat(name, len, suffix[i]))) {
            for (int k = 0; k < 3; k++) {
                free(out[k]);
                out[k] = NULL;
            }
            return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
        }
    }
    return DTCAST_OK;
}

dtcast_type dt_qgroup_scale_type(const dt_qgroup *g, dtcast_type file_type)
{
    return g->layout == DT_QL_MXFP4_GPTOSS || g->layout == DT_QL_MX ? DTCAST_FLOAT8E8M0
                                                                    : file_type;
}

/* Sixteen nibbles at a time (SWAR): the code 8 (1000, -0) is the only code whose low three bits
 * are zero with bit 3 set, so clearing bit 3 wherever the low three bits are zero makes it 0000
 * (+0) and changes nothing else:
 *
 *     nibble of x:  s mmm          (s: bit 3, the sign; mmm: the magnitude code)
 *     t  = (x & 0x7777...) + 0x7777...   per nibble mmm + 7: bit 3 is set exactly when
 *                                  mmm != 0 (the sum stays in the nibble: 7 + 7 = 14 < 16)
 *     x &= t | 0x7777...          s kept where mmm != 0, cleared where mmm == 0: 1000 -> 0000,
 *                                  and 0000 stays 0000 */
void dt_qgroup_dsv4_codes(uint8_t *p, size_t n)
{
    const uint64_t lo7 = UINT64_C(0x7777777777777777);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, p + i, 8);
        const uint64_t t = (x & lo7) + lo7;
        x &= t | lo7;
        memcpy(p + i, &x, 8);
    }
    for (; i < n; i++) {
        const uint8_t lo = (uint8_t)(p[i] & 15), hi = (uint8_t)(p[i] >> 4);
        p[i] = (uint8_t)((lo == 8 ? 0 : lo) | (hi == 8 ? 0 : hi) << 4);
    }
}

dtcast_type dt_qgroup_codes_type(const dt_qgroup *g)
{
    if (g->layout == DT_QL_GPTQ || g->layout == DT_QL_AWQ) /* unsigned codes with zeros */
        return g->bits == 2 ? DTCAST_UINT2 : g->bits == 4 ? DTCAST_UINT4 : DTCAST_UINT8;
    return g->packed_i32 ? (g->bits == 4 ? DTCAST_INT4 : DTCAST_INT8) : g->element;
}

dtcast_type dt_qgroup_product_type(const dt_qgroup *g, dtcast_type scale_type, dtcast_type to)
{
    const int ct = (g->layout == DT_QL_ABSMAX || g->layout == DT_QL_INT4_GROUP) && !g->comfyui;
    if (!ct || scale_type == to || (scale_type != DTCAST_BFLOAT16 && scale_type != DTCAST_FLOAT16))
        return DTCAST_UNDEFINED;
    return scale_type;
}

void dt_qgroup_params(const dt_qgroup *g, dtcast_quant_params *p)
{
    dtcast_quant_params_init(p);
    p->threads = 1;
    p->axis = -1;
    p->element = g->element;
    switch (g->layout) {
    case DT_QL_FP8_BLOCK:
        p->scheme = DTCAST_SCHEME_FP8_BLOCK;
        p->variant = DTCAST_VARIANT_HF;
        p->block = g->block;
        p->block_rows = g->block_rows;
        break;
    case DT_QL_MXFP4_GPTOSS:
    case DT_QL_MX:
        p->scheme = DTCAST_SCHEME_MX;
        p->block = g->block;
        break;
    case DT_QL_NVFP4_MODELOPT:
        p->scheme = DTCAST_SCHEME_NVFP4;
        p->variant = DTCAST_VARIANT_MODELOPT;
        break;
    case DT_QL_NVFP4_CT:
        p->scheme = DTCAST_SCHEME_NVFP4;
        p->variant = DTCAST_VARIANT_CT;
        break;
    case DT_QL_GPTQ: /* dequantized by the file layer's own loop (dt_qgroup_gptq_rows) */
    case DT_QL_AWQ:
    case DT_QL_ABSMAX:
    case DT_QL_INT4_GROUP:
        p->scheme = DTCAST_SCHEME_ABSMAX;
        p->variant = DTCAST_VARIANT_CT;
        p->block = g->block;
        p->per_tensor = g->per_tensor != 0;
        break;
    }
}
