/* The convert-layout job (quantize.h): a quantized checkpoint re-labelled into another layout of
 * the same values, exactly:
 *   block FP8     DeepSeek-V3's float32 multipliers (X.weight_scale_inv) <-> DeepSeek-V4's
 *                 F8_E8M0 powers of two (X.scale);
 *   NVFP4         ModelOpt's names and global scale <-> compressed-tensors';
 *   MXFP4         gpt-oss's X_blocks/X_scales <-> OCP MX's X (F4) + X_scale (F8_E8M0) <->
 *                 compressed-tensors' X.weight_packed + uint8 X.weight_scale (the same bytes);
 *   FP4 -> FP8    DeepSeek-V4's FP4 experts re-encoded as F8_E4M3 with one E8M0 scale per
 *                 128 x 128 tile.
 * Each changed part is converted exactly or the job is refused, naming the tensor and the
 * element (or tile); every other tensor is copied. Never prints. */
#include "files/quantize.h"

#include "files/pipeline.h"
#include "files/quant_job.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one scale ------------------------------------------------------------------------------ */

/* A float32 multiplier as an E8M0 byte, exactly: b with 2^(b - 127) == the value; 0xFF for a NaN
 * (E8M0's one NaN). 0 when there is none (zero, negative, infinite, not a power of two, below
 * 2^-127), *ok = 0.
 *
 *   float32:  s eeeeeeee mmmmmmmmmmmmmmmmmmmmmmm
 *   2^(e-127) for 1 <= e <= 254 when s = 0, m = 0        -> b = e
 *   2^-127 is the subnormal with m = 0x400000, e = 0      -> b = 0
 */
static uint8_t e8m0_of(uint32_t bits, int *ok)
{
    const uint32_t e = bits >> 23 & 0xFF, m = bits & 0x7FFFFF;
    *ok = 1;
    if (e == 0xFF && m) /* NaN */
        return 0xFF;
    if (!(bits >> 31) && e >= 1 && e <= 254 && m == 0)
        return (uint8_t)e;
    if (bits == 0x00400000u)
        return 0;
    *ok = 0;
    return 0;
}

/* ---- float4 codes as float8e4m3fn over a power of two ------------------------------------------ */

/* An FP4 (E2M1) value v times 2^d is exactly an E4M3 value for d in [lo, hi] of its magnitude
 * code (hi: the last d before v 2^d passes E4M3's largest finite value; lo: the first where v 2^d
 * keeps every bit above E4M3's smallest subnormal). Both come from the two formats' tables
 * (dtcast_convert), not from constants; d runs over [D_MIN, D_MAX], which holds them all. */
enum { D_MIN = -24, D_MAX = 24, D_SPAN = D_MAX - D_MIN + 1 };

typedef struct fp4_e4m3 {
    int ready;
    int lo[8], hi[8];           /* per magnitude code 1..7 (the low three bits) */
    int8_t dlo[256], dhi[256];  /* per set of magnitudes present (bit m for code m): the
                                 * intersection of their ranges */
    uint16_t pair[D_SPAN][256]; /* an FP4 byte (two codes, low nibble first) at 2^d: its two
                                 * E4M3 bytes, the low nibble's in the low byte; code 8 (-0)
                                 * gives +0, as DeepSeek-V4 reads it */
} fp4_e4m3;

static int fp4_e4m3_init(fp4_e4m3 *t)
{
    if (t->ready)
        return 1;
    uint8_t code[D_SPAN][16];
    for (int m = 1; m < 8; m++) {
        t->lo[m] = D_MAX + 1;
        t->hi[m] = D_MIN - 1;
    }
    for (int n = 0; n < 16; n++) {
        float v;
        const uint8_t b = (uint8_t)n;
        dtcast_error e;
        if (dtcast_convert(&v, DTCAST_FLOAT32, &b, DTCAST_FLOAT4E2M1, 1, NULL, &e) != DTCAST_OK)
            return 0;
        for (int d = D_MIN; d <= D_MAX; d++) {
            const float x = n == 8 ? 0.0f : ldexpf(v, d); /* exact in float32 */
            uint8_t q;
            float back;
            if (dtcast_convert(&q, DTCAST_FLOAT8E4M3FN, &x, DTCAST_FLOAT32, 1, NULL, &e) !=
                    DTCAST_OK ||
                dtcast_convert(&back, DTCAST_FLOAT32, &q, DTCAST_FLOAT8E4M3FN, 1, NULL, &e) !=
                    DTCAST_OK)
                return 0;
            code[d - D_MIN][n] = q;
            const int m = n & 7;
            if (m && n < 8 && back == x) {
                if (d < t->lo[m])
                    t->lo[m] = d;
                if (d > t->hi[m])
                    t->hi[m] = d;
            }
        }
    }
    for (int set = 0; set < 256; set++) {
        int lo = D_MIN, hi = D_MAX;
        for (int m = 1; m < 8; m++)
            if (set >> m & 1) {
                lo = t->lo[m] > lo ? t->lo[m] : lo;
                hi = t->hi[m] < hi ? t->hi[m] : hi;
            }
        t->dlo[set] = (int8_t)lo;
        t->dhi[set] = (int8_t)hi;
    }
    for (int d = 0; d < D_SPAN; d++)
        for (int b = 0; b < 256; b++)
            t->pair[d][b] = (uint16_t)(code[d][b & 15] | code[d][b >> 4] << 8);
    t->ready = 1;
    return 1;
}

/* The magnitudes present among FP4 bytes p[0, n): bit m for the code m of either nibble (bit 0,
 * zero, is cleared: +0 and -0 fit any scale). */
static unsigned magnitudes(const uint8_t *p, size_t n)
{
    unsigned set = 0;
    for (size_t i = 0; i < n; i++)
        set |= 1u << (p[i] & 7) | 1u << (p[i] >> 4 & 7);
    return set & 0xFE;
}

/* ---- the plan ------------------------------------------------------------------------------- */

enum { P_CODES, P_SCALES, P_GLOBAL, NPARTS };
enum { CODES_COPY, CODES_DSV4_ZERO, CODES_FP4_TO_E4M3 };

/* A tensor of the group as it is written: set, its name, type and shape. */
typedef struct part {
    int set;
    char *name;
    dtcast_type type;
    int ndim;
    int64_t dims[DT_MAX_DIMS];
} part;

typedef struct relabel {
    int translated;  /* a group whose parts change layout */
    part p[NPARTS];
    uint8_t *scales; /* the scales' new bytes, or NULL: copied */
    size_t scale_bytes;
    float global;    /* NVFP4: the global scale's new value */
    int codes_op;    /* CODES_*: how the codes' bytes are written */
} relabel;

typedef struct rl_job {
    const dt_relayout_request *r;
    dt_qf *c;
    const dt_qplan *plan;
    relabel *rl; /* per group */
    fp4_e4m3 tab;
    size_t mx_elements[2]; /* MX targets: groups of float4 codes, of other codes */
} rl_job;

static int to_v4(const dt_relayout_request *r)
{
    return r->to == DT_RELAYOUT_DEEPSEEK_V4 || r->to == DT_RELAYOUT_DEEPSEEK_V4_FP8;
}

static int to_nvfp4(const dt_relayout_request *r)
{
    return r->to == DT_RELAYOUT_NVFP4_CT || r->to == DT_RELAYOUT_NVFP4_MODELOPT;
}

/* The MXFP4 namings, and what each one's dequantizer makes of the scale byte 0xFF. */
typedef enum mx_naming { MXN_NONE, MXN_GPTOSS, MXN_OCP, MXN_CT, MXN_DSV4 } mx_naming;

static mx_naming naming_of(const dt_qgroup *g)
{
    if (g->layout == DT_QL_MXFP4_GPTOSS)
        return MXN_GPTOSS;
    if (g->layout != DT_QL_MX)
        return MXN_NONE;
    return g->deepseek_v4 ? MXN_DSV4 : g->ct_mx ? MXN_CT : MXN_OCP;
}

static mx_naming target_naming(const dt_relayout_request *r)
{
    return r->to == DT_RELAYOUT_MXFP4_GPTOSS ? MXN_GPTOSS
           : r->to == DT_RELAYOUT_MX         ? MXN_OCP
           : r->to == DT_RELAYOUT_MX_CT      ? MXN_CT
                                             : MXN_NONE;
}

/* OCP MX and DeepSeek-V4 (torch's float8_e8m0fnu) read 0xFF as NaN; gpt-oss's ldexp and
 * compressed-tensors' 2 ** (b - 127) as 2^128. */
static int nan_ff(mx_naming n)
{
    return n == MXN_OCP || n == MXN_DSV4;
}

static char *joined(const char *a, size_t n, const char *b)
{
    char *s = malloc(n + strlen(b) + 1);
    if (s) {
        memcpy(s, a, n);
        strcpy(s + n, b);
    }
    return s;
}

static int ends_with(const char *s, const char *suffix)
{
    const size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Part `which` of group g, as tensor i is in the input, named name (malloc'd; NULL: out of
 * memory). */
static int set_part(rl_job *j, relabel *l, int which, size_t i, char *name)
{
    const dt_qt *t = &j->c->ck.t[i];
    part *p = &l->p[which];
    p->set = 1;
    p->name = name;
    p->type = t->type;
    p->ndim = t->ndim;
    memcpy(p->dims, t->dims, sizeof p->dims);
    return name ? JOB_OK : FAIL(j->c, "out of memory");
}

/* fl32(S x g) (ModelOpt's block factor) == fl32(S / gs) (compressed-tensors') for every block
 * scale present (present[code]); the first code that differs in *bad. */
static int factors_equal(const uint8_t present[256], float g, float gs, int *bad)
{
    for (int code = 0; code < 256; code++) {
        if (!present[code])
            continue;
        float s;
        const uint8_t b = (uint8_t)code;
        dtcast_error e;
        if (dtcast_convert(&s, DTCAST_FLOAT32, &b, DTCAST_FLOAT8E4M3FN, 1, NULL, &e) != DTCAST_OK)
            return 0;
        volatile float a = s * g, q = s / gs; /* each one float32 rounding */
        uint32_t ab, qb;
        const float av = a, qv = q;
        memcpy(&ab, &av, 4);
        memcpy(&qb, &qv, 4);
        if (ab != qb && !(av != av && qv != qv)) {
            *bad = code;
            return 0;
        }
    }
    return 1;
}

/* NVFP4 group gi into the other naming: the global scale that gives every block the same
 * factor (the reciprocal rounded to float32, else one of its float32 neighbours), or refused
 * naming the tensor and the first block scale that rounds differently. */
static int translate_nvfp4(rl_job *j, size_t gi)
{
    dt_qf *c = j->c;
    const dt_qgroup *g = &j->plan->groups[gi];
    relabel *l = &j->rl[gi];
    for (int k = 0; k < 4; k++)
        if (g->extra[k] != DT_QT_NONE && k != 2)
            return FAIL_T(c, g->extra[k], "tensor '%s': activation scales are not translated "
                          "between ModelOpt's and compressed-tensors' NVFP4 (their reciprocals "
                          "round); nothing is written", c->ck.t[g->extra[k]].name);
    const char *name = c->ck.t[g->codes].name;
    const size_t len = strlen(name);
    const int to_ct = j->r->to == DT_RELAYOUT_NVFP4_CT;
    /* ModelOpt X.weight -> CT X.weight_packed; CT X.weight_packed -> ModelOpt X.weight */
    const size_t base = to_ct ? len : len - 7;
    int status = set_part(j, l, P_CODES, g->codes, joined(name, base, to_ct ? "_packed" : ""));
    if (status == JOB_OK)
        status = set_part(j, l, P_GLOBAL, g->global,
                          joined(name, base, to_ct ? "_global_scale" : "_scale_2"));
    if (status != JOB_OK)
        return status;
    /* compressed-tensors' global scale is [1]; ModelOpt's [] */
    l->p[P_GLOBAL].ndim = to_ct ? 1 : 0;
    l->p[P_GLOBAL].dims[0] = 1;
    float old;
    memcpy(&old, dt_ckpt_data(&c->ck, g->global), 4);
    uint8_t present[256] = {0};
    const uint8_t *sc = dt_ckpt_data(&c->ck, g->scales);
    const uint64_t ns = c->ck.at[g->scales].bytes;
    for (uint64_t i = 0; i < ns; i++)
        present[sc[i]] = 1;
    volatile float rcp = 1.0f / old;
    const float r0 = rcp;
    const float cands[3] = {r0, nextafterf(r0, 0.0f), nextafterf(r0, 2.0f * r0 + 1.0f)};
    int bad = -1;
    for (int k = 0; k < 3; k++) {
        const float g_mo = to_ct ? old : cands[k], gs_ct = to_ct ? cands[k] : old;
        if (factors_equal(present, g_mo, gs_ct, &bad)) {
            l->global = cands[k];
            l->translated = 1;
            return JOB_OK;
        }
    }
    return FAIL_T(c, g->global, "tensor '%s' (%.9g): no float32 %s gives every block the same "
                  "factor (the block scale 0x%02X rounds differently: fl32(S x g) != fl32(S / gs)); "
                  "nothing is written", c->ck.t[g->global].name, (double)old,
                  to_ct ? "weight_global_scale" : "weight_scale_2", bad < 0 ? 0 : bad);
}

/* Block FP8 group gi's scales in the other naming, checked exact. */
static int translate_fp8(rl_job *j, size_t gi)
{
    dt_qf *c = j->c;
    const dt_qgroup *g = &j->plan->groups[gi];
    relabel *l = &j->rl[gi];
    const dt_qt *s = &c->ck.t[g->scales];
    const uint64_t n = c->ck.at[g->scales].st->count;
    const char *codes = c->ck.t[g->codes].name;
    const size_t base = strlen(codes) - 6; /* "X." of "X.weight" */
    const int v4 = to_v4(j->r);
    int status = set_part(j, l, P_SCALES, g->scales,
                          joined(codes, base, v4 ? "scale" : "weight_scale_inv"));
    if (status != JOB_OK)
        return status;
    const char *new_name = l->p[P_SCALES].name;
    l->p[P_SCALES].type = v4 ? DTCAST_FLOAT8E8M0 : DTCAST_FLOAT32;
    const uint8_t *in = dt_ckpt_data(&c->ck, g->scales);
    l->scale_bytes = (size_t)n * (v4 ? 1 : 4);
    l->scales = malloc(l->scale_bytes + 1);
    status = l->scales ? JOB_OK : FAIL(c, "out of memory");
    for (uint64_t i = 0; status == JOB_OK && i < n; i++) {
        if (v4) { /* float32 -> E8M0: only powers of two (and NaN) are exact */
            uint32_t bits;
            memcpy(&bits, in + 4 * i, 4);
            int ok;
            l->scales[i] = e8m0_of(bits, &ok);
            if (!ok) {
                float v;
                memcpy(&v, &bits, 4);
                status = FAIL_T(c, g->scales, "tensor '%s', element %llu: the scale %.9g is not a "
                                "power of two in [2^-127, 2^127], which an F8_E8M0 '%s' cannot "
                                "hold exactly; nothing is written", s->name,
                                (unsigned long long)i, (double)v, new_name);
            }
        } else { /* E8M0 -> float32: always exact (2^-127 is a float32 subnormal) */
            dtcast_error e;
            if (dtcast_convert(l->scales + 4 * i, DTCAST_FLOAT32, in + i, DTCAST_FLOAT8E8M0, 1,
                               NULL, &e) != DTCAST_OK)
                status = FAIL_T(c, g->scales, "tensor '%s': %s", s->name, e.message);
        }
    }
    if (status == JOB_OK)
        l->translated = 1;
    return status;
}

/* MX group gi (float4 codes of any naming; other codes between OCP's and compressed-tensors'
 * names) into the target naming. The bytes are the same in every naming (codes two per byte,
 * low nibble first, one E8M0 byte per 32); only names, dtypes and the codes' shape change, and
 * DeepSeek-V4's -0 (code 8, read as +0) is written as +0. Refused: a scale byte 0xFF across
 * namings that read it differently, a K the target cannot hold, a name it has no place for. */
static int translate_mx(rl_job *j, size_t gi)
{
    dt_qf *c = j->c;
    const dt_qgroup *g = &j->plan->groups[gi];
    relabel *l = &j->rl[gi];
    const mx_naming from = naming_of(g), to = target_naming(j->r);
    const char *d = g->name; /* the dequantized name: every naming's parts are named from it */
    const size_t dl = strlen(d);
    const int64_t k = g->dims[g->ndim - 1];
    const int fp4 = g->element == DTCAST_FLOAT4E2M1;
    const char *codes = c->ck.t[g->codes].name;
    if (fp4 && k % 2)
        return FAIL_T(c, g->codes, "tensor '%s': rows of %lld float4 codes (an odd count) are "
                      "packed per row in one layout and per tensor in another; nothing is written",
                      codes, (long long)k);
    if (to == MXN_GPTOSS && k % 32)
        return FAIL_T(c, g->codes, "tensor '%s': gpt-oss's layout holds whole blocks of 32 "
                      "codes, and its rows have %lld; nothing is written", codes, (long long)k);
    if (to == MXN_CT && fp4 && !ends_with(d, "weight"))
        return FAIL_T(c, g->codes, "tensor '%s': compressed-tensors names a quantized weight "
                      "X.weight_packed, and '%s' is not a module's weight (gpt-oss's fused "
                      "experts are not); --to mx keeps its name; nothing is written", codes, d);
    if (to == MXN_CT && !fp4 && g->element != DTCAST_FLOAT8E4M3FN)
        return FAIL_T(c, g->codes, "tensor '%s': compressed-tensors' MX formats hold float4 or "
                      "float8e4m3fn codes, not %s; nothing is written", codes,
                      dtcast_type_name(g->element));
    if (nan_ff(from) != nan_ff(to)) {
        const uint8_t *s = dt_ckpt_data(&c->ck, g->scales);
        const uint64_t n = c->ck.at[g->scales].bytes;
        const uint8_t *ff = memchr(s, 0xFF, (size_t)n);
        if (ff)
            return FAIL_T(c, g->scales, "tensor '%s', element %llu: the scale byte 0xFF is NaN "
                          "in %s and 2^128 in %s, so the block's values would change; nothing is "
                          "written", c->ck.t[g->scales].name,
                          (unsigned long long)(ff - s), nan_ff(from) ? "the input's layout"
                                                                     : "the output's layout",
                          nan_ff(from) ? "the output's" : "the input's");
    }
    j->mx_elements[fp4 ? 0 : 1]++;
    char *cn, *sn;
    switch (to) {
    case MXN_GPTOSS:
        cn = joined(d, dl, "_blocks");
        sn = joined(d, dl, "_scales");
        break;
    case MXN_CT:
        cn = joined(d, dl, fp4 ? "_packed" : "");
        sn = joined(d, dl, "_scale");
        break;
    default:
        cn = joined(d, dl, "");
        sn = joined(d, dl, "_scale");
        break;
    }
    int status = set_part(j, l, P_CODES, g->codes, cn);
    if (status == JOB_OK)
        status = set_part(j, l, P_SCALES, g->scales, sn);
    else
        free(sn);
    if (status != JOB_OK)
        return status;
    part *pc = &l->p[P_CODES], *ps = &l->p[P_SCALES];
    ps->type = to == MXN_OCP ? DTCAST_FLOAT8E8M0 : DTCAST_UINT8;
    ps->ndim = g->ndim; /* [..., ceil(K/32)] in every naming */
    memcpy(ps->dims, g->dims, sizeof ps->dims);
    ps->dims[g->ndim - 1] = (k + 31) / 32;
    pc->ndim = g->ndim;
    memcpy(pc->dims, g->dims, sizeof pc->dims);
    if (!fp4) {
        pc->type = g->element;
    } else if (to == MXN_GPTOSS) { /* [..., K/32, 16] */
        pc->type = DTCAST_UINT8;
        pc->ndim = g->ndim + 1;
        pc->dims[g->ndim - 1] = k / 32;
        pc->dims[g->ndim] = 16;
    } else if (to == MXN_CT) { /* [..., K/2] */
        pc->type = DTCAST_UINT8;
        pc->dims[g->ndim - 1] = k / 2;
    } else { /* F4 [..., K] */
        pc->type = DTCAST_FLOAT4E2M1;
    }
    if (pc->ndim > DT_MAX_DIMS)
        return FAIL_T(c, g->codes, "tensor '%s': gpt-oss's blocks would have %d axes, more than "
                      "%d; nothing is written", codes, pc->ndim, DT_MAX_DIMS);
    l->codes_op = from == MXN_DSV4 ? CODES_DSV4_ZERO : CODES_COPY;
    l->translated = 1;
    return JOB_OK;
}

/* DeepSeek-V4 FP4 expert gi as block FP8: codes F8_E4M3 [..., N, K], one E8M0 scale per
 * 128 x 128 tile. A tile's scale 2^(T - 127) must let every value of its blocks,
 * c x 2^(e_b - 127), be an E4M3 code times it exactly: e_b - T within the range of every
 * magnitude the block holds. T is the smallest such exponent (no value above E4M3's largest:
 * the ue8m0 scale DeepSeek's FP8 quantizer gives the dequantized tile, 2^ceil(log2(amax/448)),
 * when every value is exact); an all-zero tile gets 2^0. */
enum { NO_BLOCK = -100000 };

static int translate_dsv4_fp8(rl_job *j, size_t gi)
{
    dt_qf *c = j->c;
    const dt_qgroup *g = &j->plan->groups[gi];
    relabel *l = &j->rl[gi];
    const char *name = c->ck.t[g->codes].name;
    if (g->ndim < 2)
        return FAIL_T(c, g->codes, "tensor '%s': one axis; FP8 tiles are 128 x 128 over the "
                      "last two; nothing is written", name);
    if (!fp4_e4m3_init(&j->tab))
        return FAIL(c, "the float4 and float8e4m3fn tables could not be built");
    const int64_t n = g->dims[g->ndim - 2], k = g->dims[g->ndim - 1];
    const int64_t nb = (k + 31) / 32, tr = (n + 127) / 128, tc = (k + 127) / 128;
    const int64_t rb = (k + 1) / 2; /* code bytes per row */
    int64_t mats = 1;
    for (int a = 0; a < g->ndim - 2; a++)
        mats *= g->dims[a];
    const uint8_t *codes = dt_ckpt_data(&c->ck, g->codes);
    const uint8_t *sc = dt_ckpt_data(&c->ck, g->scales);
    l->scale_bytes = (size_t)(mats * tr * tc);
    l->scales = malloc(l->scale_bytes + 1);
    int *lo = malloc(sizeof(int) * (size_t)(tc ? tc : 1) * 2);
    if (!l->scales || !lo) {
        free(lo);
        return FAIL(c, "out of memory");
    }
    int *hi = lo + tc;
    int status = JOB_OK;
    for (int64_t m = 0; m < mats && status == JOB_OK; m++) {
        for (int64_t t = 0; t < tr && status == JOB_OK; t++) {
            for (int64_t x = 0; x < tc; x++) {
                lo[x] = NO_BLOCK; /* T's range: [lo, hi] over the blocks with nonzero codes */
                hi[x] = -NO_BLOCK;
            }
            const int64_t r1 = t * 128 + 128 < n ? t * 128 + 128 : n;
            for (int64_t r = t * 128; r < r1 && status == JOB_OK; r++) {
                const uint8_t *row = codes + (size_t)((m * n + r) * rb);
                const uint8_t *srow = sc + (size_t)((m * n + r) * nb);
                for (int64_t b = 0; b < nb; b++) {
                    const int64_t b0 = b * 16, b1 = b0 + 16 < rb ? b0 + 16 : rb;
                    const unsigned set = magnitudes(row + b0, (size_t)(b1 - b0));
                    if (!set)
                        continue;
                    const int e = srow[b];
                    if (e == 0xFF) {
                        status = FAIL_T(c, g->scales, "tensor '%s', element %lld: the scale is "
                                        "NaN (0xFF), which no FP8 tile scale reproduces for the "
                                        "block's codes; nothing is written",
                                        c->ck.t[g->scales].name,
                                        (long long)((m * n + r) * nb + b));
                        break;
                    }
                    const int64_t x = b * 32 / 128;
                    const int tl = e - j->tab.dhi[set], th = e - j->tab.dlo[set];
                    if (tl > lo[x])
                        lo[x] = tl;
                    if (th < hi[x])
                        hi[x] = th;
                }
            }
            for (int64_t x = 0; x < tc && status == JOB_OK; x++) {
                /* an all-zero tile: 2^0; else the smallest exponent E8M0 holds in range */
                const int T = lo[x] == NO_BLOCK ? 127 : lo[x] < 0 ? 0 : lo[x];
                if (lo[x] != NO_BLOCK && (T > hi[x] || T > 254))
                    status = FAIL_T(c, g->codes, "tensor '%s', tile (%lld, %lld) (rows %lld.., "
                                    "columns %lld..): its blocks' scales are too far apart for "
                                    "one power of two to hold every value exactly in "
                                    "float8e4m3fn; nothing is written", name, (long long)t,
                                    (long long)x, (long long)(t * 128), (long long)(x * 128));
                l->scales[(size_t)((m * tr + t) * tc + x)] = (uint8_t)T;
            }
            dt_ckpt_release(&c->ck, c->ck.at[g->codes].shard,
                            c->ck.at[g->codes].at + (uint64_t)((m * n + t * 128) * rb),
                            (uint64_t)((r1 - t * 128) * rb));
        }
    }
    free(lo);
    if (status != JOB_OK)
        return status;
    status = set_part(j, l, P_CODES, g->codes, joined(name, strlen(name), ""));
    if (status == JOB_OK)
        status = set_part(j, l, P_SCALES, g->scales,
                          joined(c->ck.t[g->scales].name, strlen(c->ck.t[g->scales].name), ""));
    if (status != JOB_OK)
        return status;
    part *pc = &l->p[P_CODES], *ps = &l->p[P_SCALES];
    pc->type = DTCAST_FLOAT8E4M3FN;
    pc->ndim = g->ndim;
    memcpy(pc->dims, g->dims, sizeof pc->dims);
    ps->type = DTCAST_FLOAT8E8M0;
    ps->ndim = g->ndim;
    memcpy(ps->dims, g->dims, sizeof ps->dims);
    ps->dims[g->ndim - 2] = tr;
    ps->dims[g->ndim - 1] = tc;
    l->codes_op = CODES_FP4_TO_E4M3;
    l->translated = 1;
    return JOB_OK;
}

/* Which groups change, and their new parts. A group already in the target's layout, or of a
 * layout the target does not take, is copied as it is. */
static int plan_job(rl_job *j, size_t *translated)
{
    *translated = 0;
    const mx_naming mx_to = target_naming(j->r);
    for (size_t gi = 0; gi < j->plan->ngroups; gi++) {
        const dt_qgroup *g = &j->plan->groups[gi];
        int status;
        if (mx_to != MXN_NONE) {
            const mx_naming from = naming_of(g);
            if (from == MXN_NONE || from == mx_to ||
                (g->element != DTCAST_FLOAT4E2M1 && mx_to == MXN_GPTOSS))
                continue;
            status = translate_mx(j, gi);
        } else if (to_nvfp4(j->r)) {
            if (g->layout != (j->r->to == DT_RELAYOUT_NVFP4_CT ? DT_QL_NVFP4_MODELOPT
                                                               : DT_QL_NVFP4_CT))
                continue;
            status = translate_nvfp4(j, gi);
        } else if (j->r->to == DT_RELAYOUT_DEEPSEEK_V4_FP8 && g->deepseek_v4 &&
                   g->layout == DT_QL_MX) {
            status = translate_dsv4_fp8(j, gi);
        } else {
            /* to V4: V3's names, or V4's names with F32 scales; to V3: V4's names */
            const int f32 = j->c->ck.t[g->scales].type == DTCAST_FLOAT32;
            if (g->layout != DT_QL_FP8_BLOCK ||
                (to_v4(j->r) ? g->deepseek_v4 && !f32 : !g->deepseek_v4))
                continue;
            status = translate_fp8(j, gi);
        }
        if (status != JOB_OK)
            return status;
        ++*translated;
    }
    if (mx_to == MXN_CT && j->mx_elements[0] && j->mx_elements[1]) {
        for (size_t gi = 0; gi < j->plan->ngroups; gi++)
            if (j->rl[gi].translated && j->plan->groups[gi].element != DTCAST_FLOAT4E2M1)
                return FAIL_T(j->c, j->plan->groups[gi].codes,
                              "tensor '%s' holds float8 codes and others float4: "
                              "compressed-tensors' config describes one MX format per checkpoint "
                              "here (mxfp4-pack-quantized or mxfp8-quantized); nothing is written",
                              j->c->ck.t[j->plan->groups[gi].codes].name);
    }
    return JOB_OK;
}

/* ---- the shards ----------------------------------------------------------------------------- */

typedef struct rl_fill {
    rl_job *j;
    size_t s;
    const size_t *tensor; /* output k: the input tensor */
    dt_stream_buffers bufs;
} rl_fill;

/* Which part of its group tensor i is when that part changes (P_*), else -1; *l its group's. */
static int part_of(const rl_job *j, size_t i, const relabel **l)
{
    if (j->plan->role[i] == DT_QR_PLAIN)
        return -1;
    const size_t gi = j->plan->group[i];
    const dt_qgroup *g = &j->plan->groups[gi];
    *l = &j->rl[gi];
    if (!(*l)->translated)
        return -1;
    const int which = g->codes == i ? P_CODES : g->scales == i ? P_SCALES
                      : g->global == i ? P_GLOBAL : -1;
    return which >= 0 && (*l)->p[which].set ? which : -1;
}

/* The codes of group g re-encoded (codes_op), row by row, into out. */
static dtcast_status write_codes(rl_job *j, const dt_qgroup *g, const relabel *l,
                                 dt_outfile *out, dt_io_error *err)
{
    const dt_ckpt *ck = &j->c->ck;
    const uint8_t *in = dt_ckpt_data(ck, g->codes);
    const uint64_t bytes = ck->at[g->codes].bytes;
    const int64_t kk = g->ndim ? g->dims[g->ndim - 1] : 0;
    const size_t CHUNK = (size_t)(kk > (1 << 20) ? kk : (1 << 20)); /* at least one row */
    uint8_t *buf = malloc(CHUNK);
    if (!buf)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
    dtcast_status st = DTCAST_OK;
    if (l->codes_op == CODES_DSV4_ZERO) {
        for (uint64_t at = 0; at < bytes && st == DTCAST_OK; at += CHUNK) {
            const size_t len = (size_t)(bytes - at < CHUNK ? bytes - at : CHUNK);
            memcpy(buf, in + at, len);
            dt_qgroup_dsv4_codes(buf, len);
            st = dt_outfile_write(out, buf, len, err);
            dt_ckpt_release(ck, ck->at[g->codes].shard, ck->at[g->codes].at + at, len);
        }
        free(buf);
        return st;
    }
    /* FP4 -> E4M3: row r's block b at 2^(e_b - T) of its tile */
    const int64_t n = g->dims[g->ndim - 2], k = g->dims[g->ndim - 1];
    const int64_t nb = (k + 31) / 32, tc = (k + 127) / 128, tr = (n + 127) / 128;
    const int64_t rb = (k + 1) / 2;
    const uint64_t rows = bytes / (uint64_t)(rb ? rb : 1);
    const uint8_t *sc = dt_ckpt_data(ck, g->scales);
    size_t fill = 0;
    for (uint64_t r = 0; r < rows && st == DTCAST_OK; r++) {
        const uint64_t m = r / (uint64_t)n, rr = r % (uint64_t)n;
        const uint8_t *row = in + r * (uint64_t)rb, *srow = sc + r * (uint64_t)nb;
        const uint8_t *tiles = l->scales + (m * (uint64_t)tr + rr / 128) * (uint64_t)tc;
        if (fill + (size_t)k > CHUNK) {
            st = dt_outfile_write(out, buf, fill, err);
            fill = 0;
        }
        for (int64_t b = 0; b < nb && st == DTCAST_OK; b++) {
            int d = (int)srow[b] - (int)tiles[b * 32 / 128];
            d = d < D_MIN ? D_MIN : d > D_MAX ? D_MAX : d; /* only all-zero blocks fall outside */
            const uint16_t *pair = j->tab.pair[d - D_MIN];
            const int64_t b0 = b * 16, b1 = b0 + 16 < rb ? b0 + 16 : rb;
            for (int64_t i = b0; i < b1; i++) {
                const uint16_t v = pair[row[i]];
                buf[fill + (size_t)(2 * i)] = (uint8_t)v;
                if (2 * i + 1 < k)
                    buf[fill + (size_t)(2 * i + 1)] = (uint8_t)(v >> 8);
            }
        }
        fill += (size_t)k;
        if ((r + 1) % 1024 == 0)
            dt_ckpt_release(ck, ck->at[g->codes].shard,
                            ck->at[g->codes].at + (r + 1 - 1024) * (uint64_t)rb,
                            1024 * (uint64_t)rb);
    }
    if (st == DTCAST_OK && fill)
        st = dt_outfile_write(out, buf, fill, err);
    free(buf);
    return st;
}

static dtcast_status fill(void *ctx, size_t k, dt_outfile *out, uint64_t nbytes, dt_io_error *err)
{
    rl_fill *f = ctx;
    dt_qf *c = f->j->c;
    const size_t t = f->tensor[k];
    (void)nbytes;
    const relabel *l = NULL;
    const int which = part_of(f->j, t, &l);
    if (which == P_GLOBAL)
        return dt_outfile_write(out, &l->global, 4, err);
    if (which == P_SCALES && l->scales)
        return dt_outfile_write(out, l->scales, l->scale_bytes, err);
    if (which == P_CODES && l->codes_op != CODES_COPY)
        return write_codes(f->j, &f->j->plan->groups[f->j->plan->group[t]], l, out, err);
    return dt_stream_copy(&c->ck.shards[f->s].file, c->ck.at[t].at, c->ck.at[t].bytes, out,
                          &f->bufs, NULL, err);
}

static int write_shard(rl_job *j, size_t s, uint64_t *bytes)
{
    dt_qf *c = j->c;
    size_t n = 0;
    for (size_t i = 0; i < c->ck.n; i++)
        n += c->ck.at[i].shard == s;
    dt_st_tensor *e = calloc(n ? n : 1, sizeof *e);
    size_t *tensor = calloc(n ? n : 1, sizeof *tensor);
    if (!e || !tensor) {
        free(e);
        free(tensor);
        return FAIL(c, "out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < c->ck.n; i++) {
        if (c->ck.at[i].shard != s)
            continue;
        const relabel *l = NULL;
        const int which = part_of(j, i, &l);
        const part *p = which >= 0 ? &l->p[which] : NULL;
        e[k].name = p ? p->name : (char *)c->ck.t[i].name;
        e[k].type = p ? p->type : c->ck.t[i].type;
        e[k].ndim = p ? p->ndim : c->ck.t[i].ndim;
        memcpy(e[k].dims, p ? p->dims : c->ck.t[i].dims, sizeof e[k].dims);
        tensor[k++] = i;
    }
    rl_fill f = {j, s, tensor, {{{0}}}};
    dtcast_status st = dt_ckpt_out_shard(&c->o, s, e, n, fill, &f, bytes, c->err_out);
    dt_stream_buffers_free(&f.bufs);
    free(e);
    free(tensor);
    return dt_qf_status(c, st);
}

/* config.json's quantization_config in the target's words (the tiles of the first translated
 * block-FP8 group; MX: the element of the translated groups). */
static const char *qconfig_of(const rl_job *j, char *buf, size_t size)
{
    const dt_qgroup *first = NULL, *fp8 = NULL;
    for (size_t gi = 0; gi < j->plan->ngroups; gi++) {
        if (!j->rl[gi].translated)
            continue;
        if (!first)
            first = &j->plan->groups[gi];
        if (!fp8 && j->plan->groups[gi].layout == DT_QL_FP8_BLOCK)
            fp8 = &j->plan->groups[gi];
    }
    if (!first)
        return NULL;
    const long long br = fp8 ? (long long)fp8->block_rows : 128, bc = fp8 ? (long long)fp8->block
                                                                          : 128;
    switch (j->r->to) {
    case DT_RELAYOUT_NVFP4_CT:
        return dt_nvfp4_qconfig(DT_QL_NVFP4_CT);
    case DT_RELAYOUT_NVFP4_MODELOPT:
        return dt_nvfp4_qconfig(DT_QL_NVFP4_MODELOPT);
    case DT_RELAYOUT_MXFP4_GPTOSS:
        return "{\n    \"quant_method\": \"mxfp4\"\n  }";
    case DT_RELAYOUT_MX:
    {
        const int one = !(j->mx_elements[0] && j->mx_elements[1]); /* one element type */
        snprintf(buf, size,
                 "{\n    \"block_size\": 32,\n%s%s%s    \"quant_method\": \"dtcast-mx\"\n  }",
                 one ? "    \"element\": \"" : "", one ? dtcast_type_name(first->element) : "",
                 one ? "\",\n" : "");
        return buf;
    }
    case DT_RELAYOUT_MX_CT: {
        const int fp4 = first->element == DTCAST_FLOAT4E2M1;
        snprintf(buf, size,
                 "{\n    \"config_groups\": {\n      \"group_0\": {\n"
                 "        \"format\": \"%s\",\n        \"targets\": [\n"
                 "          \"Linear\"\n        ],\n        \"weights\": {\n"
                 "          \"dynamic\": false,\n          \"group_size\": 32,\n"
                 "          \"num_bits\": %d,\n          \"scale_dtype\": \"torch.uint8\",\n"
                 "          \"strategy\": \"group\",\n          \"symmetric\": true,\n"
                 "          \"type\": \"float\"\n"
                 "        }\n      }\n    },\n    \"format\": \"%s\",\n"
                 "    \"quant_method\": \"compressed-tensors\",\n"
                 "    \"quantization_status\": \"compressed\"\n  }",
                 fp4 ? "mxfp4-pack-quantized" : "mxfp8-quantized", fp4 ? 4 : 8,
                 fp4 ? "mxfp4-pack-quantized" : "mxfp8-quantized");
        return buf;
    }
    case DT_RELAYOUT_DEEPSEEK_V4:
    case DT_RELAYOUT_DEEPSEEK_V4_FP8:
        snprintf(buf, size,
                 "{\n    \"fmt\": \"e4m3\",\n    \"quant_method\": \"fp8\",\n"
                 "    \"scale_fmt\": \"ue8m0\",\n    \"weight_block_size\": [\n      %lld,\n"
                 "      %lld\n    ]\n  }",
                 br, bc);
        return buf;
    case DT_RELAYOUT_FP8_BLOCK:
        snprintf(buf, size,
                 "{\n    \"activation_scheme\": \"dynamic\",\n    \"fmt\": \"e4m3\",\n"
                 "    \"quant_method\": \"fp8\",\n    \"weight_block_size\": [\n      %lld,\n"
                 "      %lld\n    ]\n  }",
                 br, bc);
        return buf;
    }
    return NULL;
}

/* The index with the new names, config.json's quantization_config in the target's words (and
 * DeepSeek-V4's expert_dtype "fp8" when the experts became FP8), the other files; everything
 * committed. */
static int finish(rl_job *j, uint64_t total)
{
    dt_qf *c = j->c;
    char qconfig[2048];
    const char *qc = qconfig_of(j, qconfig, sizeof qconfig);
    if (j->r->to == DT_RELAYOUT_DEEPSEEK_V4_FP8)
        for (size_t gi = 0; gi < j->plan->ngroups; gi++)
            if (j->rl[gi].translated && j->rl[gi].codes_op == CODES_FP4_TO_E4M3) {
                c->o.config_key = "expert_dtype";
                c->o.config_value = "\"fp8\"";
                break;
            }
    if (!c->ck.has_index)
        return dt_qf_finish(c, NULL, 0, total, qc, 0);
    dt_st_index_entry *e = calloc(c->ck.ix.nentries ? c->ck.ix.nentries : 1, sizeof *e);
    if (!e)
        return FAIL(c, "out of memory");
    int status = JOB_OK;
    for (size_t i = 0; i < c->ck.ix.nentries && status == JOB_OK; i++) {
        e[i] = c->ck.ix.entries[i];
        const size_t t = dt_ckpt_find(&c->ck, e[i].name);
        if (t >= c->ck.n) {
            status = FAIL(c, "%s: the index names tensor '%s', which no shard holds",
                          c->ck.index_name, e[i].name);
            break;
        }
        const relabel *l = NULL;
        const int which = part_of(j, t, &l);
        if (which >= 0)
            e[i].name = l->p[which].name;
    }
    if (status == JOB_OK)
        status = dt_qf_finish(c, e, c->ck.ix.nentries, total, qc, 0);
    free(e);
    return status;
}

static const char *target_text(dt_relayout to)
{
    switch (to) {
    case DT_RELAYOUT_DEEPSEEK_V4: return "F8_E8M0 X.scale (DeepSeek-V4)";
    case DT_RELAYOUT_FP8_BLOCK: return "F32 X.weight_scale_inv (DeepSeek-V3)";
    case DT_RELAYOUT_NVFP4_CT: return "compressed-tensors' NVFP4";
    case DT_RELAYOUT_NVFP4_MODELOPT: return "ModelOpt's NVFP4";
    case DT_RELAYOUT_MXFP4_GPTOSS: return "gpt-oss's MXFP4 (X_blocks, X_scales)";
    case DT_RELAYOUT_MX: return "OCP MX (X, X_scale F8_E8M0)";
    case DT_RELAYOUT_MX_CT: return "compressed-tensors' MX (uint8 X.weight_scale)";
    case DT_RELAYOUT_DEEPSEEK_V4_FP8: return "DeepSeek-V4 block FP8 (F8_E8M0 X.scale per tile)";
    }
    return "?";
}

dtcast_status dt_relayout_checkpoint(const dt_relayout_request *r, dt_io_error *err)
{
    dt_qf c;
    dt_qplan plan;
    memset(&plan, 0, sizeof plan);
    dt_io_error local = DT_IO_ERROR_INIT;
    if (!err)
        err = &local;
    int status = dt_qf_open(&c, "convert-layout", r->in, r->out, err, &r->hooks);
    dt_io_error perr = DT_IO_ERROR_INIT;
    if (status == JOB_OK && dt_qplan_make(c.ck.t, c.ck.n, &plan, &perr) != DTCAST_OK)
        status = FAIL(&c, "%s: %s", r->in, perr.message);
    relabel *rl = status == JOB_OK ? calloc(plan.ngroups ? plan.ngroups : 1, sizeof *rl) : NULL;
    if (status == JOB_OK && !rl)
        status = FAIL(&c, "out of memory");
    rl_job *j = status == JOB_OK ? calloc(1, sizeof *j) : NULL; /* its tables: 26 KiB */
    if (status == JOB_OK && !j)
        status = FAIL(&c, "out of memory");
    if (j) {
        j->r = r;
        j->c = &c;
        j->plan = &plan;
        j->rl = rl;
    }
    size_t translated = 0;
    if (status == JOB_OK)
        status = plan_job(j, &translated);
    if (status == JOB_OK && translated == 0)
        status = FAIL(&c, "%s: no quantized tensor in another layout to convert to %s (%zu "
                      "quantized tensors found); nothing is written", r->in, target_text(r->to),
                      plan.ngroups);
    if (status == JOB_OK)
        status = dt_qf_status(&c, dt_ckpt_out_make_dir(&c.o, err));
    uint64_t total = 0;
    for (size_t s = 0; status == JOB_OK && s < c.ck.nshards; s++)
        status = write_shard(j, s, &total);
    if (status == JOB_OK)
        status = finish(j, total);
    if (status == JOB_OK && r->report) {
        char line[256];
        snprintf(line, sizeof line, "%s: %zu tensors converted exactly to %s\n", r->in, translated,
                 target_text(r->to));
        dt_job_report(&r->hooks, line);
    }
    for (size_t gi = 0; rl && gi < plan.ngroups; gi++) {
        for (int k = 0; k < NPARTS; k++)
            free(rl[gi].p[k].name);
        free(rl[gi].scales);
    }
    free(rl);
    free(j);
    dt_qplan_free(&plan);
    dtcast_status result = dt_qf_result(&c, status);
    dt_qf_close(&c);
    return result;
}
