/* The convert-layout job (quantize.h): a quantized checkpoint re-labelled into another layout of
 * the same codes, exactly: block FP8's float32 multipliers (DeepSeek-V3's X.weight_scale_inv)
 * <-> DeepSeek-V4's F8_E8M0 powers of two (X.scale). The codes are copied byte for byte; each
 * scale is converted exactly or the job is refused, naming the tensor and the element; every
 * other tensor is copied. Never prints. */
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

/* ---- the plan ------------------------------------------------------------------------------- */

typedef struct relabel {
    int translated;  /* a group whose parts change layout */
    char *scale_name;  /* block FP8: the scales' new name */
    dtcast_type scale_type;
    uint8_t *scales;   /* ... their bytes */
    size_t scale_bytes;
    char *codes_name;  /* NVFP4: the codes' and the global scale's new names, its value */
    char *global_name;
    float global;
} relabel;

typedef struct rl_job {
    const dt_relayout_request *r;
    dt_qf *c;
    const dt_qplan *plan;
    relabel *rl; /* per group */
} rl_job;

static int to_v4(const dt_relayout_request *r)
{
    return r->to == DT_RELAYOUT_DEEPSEEK_V4;
}

static int to_nvfp4(const dt_relayout_request *r)
{
    return r->to == DT_RELAYOUT_NVFP4_CT || r->to == DT_RELAYOUT_NVFP4_MODELOPT;
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
    l->codes_name = joined(name, base, to_ct ? "_packed" : "");
    l->global_name = joined(name, base, to_ct ? "_global_scale" : "_scale_2");
    if (!l->codes_name || !l->global_name)
        return FAIL(c, "out of memory");
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

/* The new scales of group g (plan.groups[gi]), checked exact. */
static int translate_group(rl_job *j, size_t gi)
{
    if (to_nvfp4(j->r))
        return translate_nvfp4(j, gi);
    dt_qf *c = j->c;
    const dt_qgroup *g = &j->plan->groups[gi];
    relabel *l = &j->rl[gi];
    const dt_qt *s = &c->ck.t[g->scales];
    const uint64_t n = c->ck.at[g->scales].st->count;
    const char *codes = c->ck.t[g->codes].name;
    const size_t base = strlen(codes) - 6; /* "X." of "X.weight" */
    l->scale_name = malloc(base + 20);
    if (!l->scale_name)
        return FAIL(c, "out of memory");
    memcpy(l->scale_name, codes, base);
    strcpy(l->scale_name + base, to_v4(j->r) ? "scale" : "weight_scale_inv");
    uint8_t *in = dt_qf_read(c, g->scales);
    if (!in)
        return JOB_FAIL;
    l->scale_type = to_v4(j->r) ? DTCAST_FLOAT8E8M0 : DTCAST_FLOAT32;
    l->scale_bytes = (size_t)n * (to_v4(j->r) ? 1 : 4);
    l->scales = malloc(l->scale_bytes + 1);
    int status = l->scales ? JOB_OK : FAIL(c, "out of memory");
    for (uint64_t i = 0; status == JOB_OK && i < n; i++) {
        if (to_v4(j->r)) { /* float32 -> E8M0: only powers of two (and NaN) are exact */
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
                                (unsigned long long)i, (double)v, l->scale_name);
            }
        } else { /* E8M0 -> float32: always exact (2^-127 is a float32 subnormal) */
            dtcast_error e;
            if (dtcast_convert(l->scales + 4 * i, DTCAST_FLOAT32, in + i, DTCAST_FLOAT8E8M0, 1,
                               NULL, &e) != DTCAST_OK)
                status = FAIL_T(c, g->scales, "tensor '%s': %s", s->name, e.message);
        }
    }
    free(in);
    if (status == JOB_OK)
        l->translated = 1;
    return status;
}

/* Which groups change: block FP8 in the other naming. Another layout is copied as it is. */
static int plan_job(rl_job *j, size_t *translated)
{
    *translated = 0;
    for (size_t gi = 0; gi < j->plan->ngroups; gi++) {
        const dt_qgroup *g = &j->plan->groups[gi];
        /* to V4: V3's names, or V4's names with F32 scales; to V3: V4's names; NVFP4: the
         * other naming */
        const int f32 = j->c->ck.t[g->scales].type == DTCAST_FLOAT32;
        if (to_nvfp4(j->r)) {
            if (g->layout != (j->r->to == DT_RELAYOUT_NVFP4_CT ? DT_QL_NVFP4_MODELOPT
                                                               : DT_QL_NVFP4_CT))
                continue;
        } else if (g->layout != DT_QL_FP8_BLOCK ||
                   (to_v4(j->r) ? g->deepseek_v4 && !f32 : !g->deepseek_v4)) {
            continue;
        }
        int status = translate_group(j, gi);
        if (status != JOB_OK)
            return status;
        ++*translated;
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

/* The relabelling of tensor i when it is the part that changes (block FP8: its scales; NVFP4:
 * its codes' name and its global scale), else NULL. */
static const relabel *relabel_of(const rl_job *j, size_t i)
{
    if (j->plan->role[i] == DT_QR_PLAIN)
        return NULL;
    const size_t gi = j->plan->group[i];
    const relabel *l = &j->rl[gi];
    const dt_qgroup *g = &j->plan->groups[gi];
    if (!l->translated)
        return NULL;
    return l->codes_name ? (g->codes == i || g->global == i ? l : NULL)
                         : (g->scales == i ? l : NULL);
}

/* The new name of a tensor that relabel_of returned l for. */
static char *out_name(const rl_job *j, size_t i, const relabel *l)
{
    if (!l->codes_name)
        return l->scale_name;
    return j->plan->groups[j->plan->group[i]].codes == i ? l->codes_name : l->global_name;
}

static dtcast_status fill(void *ctx, size_t k, dt_outfile *out, uint64_t nbytes, dt_io_error *err)
{
    rl_fill *f = ctx;
    dt_qf *c = f->j->c;
    const size_t t = f->tensor[k];
    (void)nbytes;
    const relabel *l = relabel_of(f->j, t);
    const dt_qgroup *g = l ? &f->j->plan->groups[f->j->plan->group[t]] : NULL;
    if (l && l->codes_name && g->global == t)
        return dt_outfile_write(out, &l->global, 4, err);
    if (l && !l->codes_name)
        return dt_outfile_write(out, l->scales, l->scale_bytes, err);
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
        const relabel *l = relabel_of(j, i);
        e[k].name = l ? out_name(j, i, l) : (char *)c->ck.t[i].name;
        e[k].type = l && !l->codes_name ? l->scale_type : c->ck.t[i].type;
        e[k].ndim = c->ck.t[i].ndim;
        memcpy(e[k].dims, c->ck.t[i].dims, (size_t)e[k].ndim * sizeof e[k].dims[0]);
        if (l && l->codes_name && j->plan->groups[j->plan->group[i]].global == i) {
            /* compressed-tensors' global scale is [1]; ModelOpt's [] */
            e[k].ndim = j->r->to == DT_RELAYOUT_NVFP4_CT ? 1 : 0;
            e[k].dims[0] = 1;
        }
        tensor[k++] = i;
    }
    rl_fill f = {j, s, tensor, {{{0}}}};
    dtcast_status st = dt_ckpt_out_shard(&c->o, s, e, n, fill, &f, bytes, c->err_out);
    dt_stream_buffers_free(&f.bufs);
    free(e);
    free(tensor);
    return dt_qf_status(c, st);
}

/* The index with the scales' new names, config.json's quantization_config in the target's
 * words (the tiles of the first translated group), the other files; everything committed. */
static int finish(rl_job *j, uint64_t total)
{
    dt_qf *c = j->c;
    const dt_qgroup *first = NULL;
    for (size_t gi = 0; gi < j->plan->ngroups && !first; gi++)
        if (j->rl[gi].translated)
            first = &j->plan->groups[gi];
    char qconfig[1024];
    const char *qc = NULL;
    if (first && to_nvfp4(j->r)) {
        snprintf(qconfig, sizeof qconfig, "%s",
                 dt_nvfp4_qconfig(j->r->to == DT_RELAYOUT_NVFP4_CT ? DT_QL_NVFP4_CT
                                                                  : DT_QL_NVFP4_MODELOPT));
        qc = qconfig;
    } else if (first) {
        if (to_v4(j->r))
            snprintf(qconfig, sizeof qconfig,
                     "{\n    \"fmt\": \"e4m3\",\n    \"quant_method\": \"fp8\",\n"
                     "    \"scale_fmt\": \"ue8m0\",\n    \"weight_block_size\": [\n      %lld,\n"
                     "      %lld\n    ]\n  }",
                     (long long)first->block_rows, (long long)first->block);
        else
            snprintf(qconfig, sizeof qconfig,
                     "{\n    \"activation_scheme\": \"dynamic\",\n    \"fmt\": \"e4m3\",\n"
                     "    \"quant_method\": \"fp8\",\n    \"weight_block_size\": [\n      %lld,\n"
                     "      %lld\n    ]\n  }",
                     (long long)first->block_rows, (long long)first->block);
        qc = qconfig;
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
        const relabel *l = relabel_of(j, t);
        if (l)
            e[i].name = out_name(j, t, l);
    }
    if (status == JOB_OK)
        status = dt_qf_finish(c, e, c->ck.ix.nentries, total, qc, 0);
    free(e);
    return status;
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
    rl_job j = {r, &c, &plan, rl};
    size_t translated = 0;
    if (status == JOB_OK)
        status = plan_job(&j, &translated);
    if (status == JOB_OK && translated == 0)
        status = FAIL(&c, "%s: no %s tensor in the other naming to convert (%zu quantized "
                      "tensors found); nothing is written", r->in,
                      to_nvfp4(r) ? "NVFP4" : "block-FP8", plan.ngroups);
    if (status == JOB_OK)
        status = dt_qf_status(&c, dt_ckpt_out_make_dir(&c.o, err));
    uint64_t total = 0;
    for (size_t s = 0; status == JOB_OK && s < c.ck.nshards; s++)
        status = write_shard(&j, s, &total);
    if (status == JOB_OK)
        status = finish(&j, total);
    if (status == JOB_OK && r->report) {
        char line[256];
        snprintf(line, sizeof line, "%s: %zu tensors converted exactly to %s\n", r->in, translated,
                 r->to == DT_RELAYOUT_DEEPSEEK_V4   ? "F8_E8M0 X.scale (DeepSeek-V4)"
                 : r->to == DT_RELAYOUT_FP8_BLOCK   ? "F32 X.weight_scale_inv (DeepSeek-V3)"
                 : r->to == DT_RELAYOUT_NVFP4_CT    ? "compressed-tensors' NVFP4"
                                                    : "ModelOpt's NVFP4");
        dt_job_report(&r->hooks, line);
    }
    for (size_t gi = 0; rl && gi < plan.ngroups; gi++) {
        free(rl[gi].scale_name);
        free(rl[gi].scales);
        free(rl[gi].codes_name);
        free(rl[gi].global_name);
    }
    free(rl);
    dt_qplan_free(&plan);
    dtcast_status result = dt_qf_result(&c, status);
    dt_qf_close(&c);
    return result;
}
