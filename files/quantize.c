/* The quantize job (quantize.h): the chosen tensors of a checkpoint (or a .npy) into a scheme's
 * checkpoint layout (docs/cli.md, "Quantized checkpoints"; the names in files/quant_layout.h).
 * Each chosen tensor is quantized whole in memory by the library (on every thread); the others
 * are copied. Never prints. */
#include "files/quantize.h"

#include "files/pipeline.h"
#include "files/quant_job.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define APPEND(line, used, ...) dt_text_append((line), sizeof(line), &(used), __VA_ARGS__)

/* ---- choosing ------------------------------------------------------------------------------ */

static int is_input_type(dtcast_type t)
{
    return t == DTCAST_FLOAT32 || t == DTCAST_BFLOAT16 || t == DTCAST_FLOAT16 ||
           t == DTCAST_FLOAT64;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int chosen(const dt_quantize_request *r, const dt_qf *c, size_t i)
{
    const dt_qt *t = &c->ck.t[i];
    if (!is_input_type(t->type) || dt_glob_any(&r->exclude, t->name))
        return 0;
    if (r->select.n)
        return dt_glob_any(&r->select, t->name);
    if (c->ck.npy)
        return 1;
    return t->ndim >= 2 && ends_with(t->name, "weight") && !strstr(t->name, "embed") &&
           !strstr(t->name, "norm") && !strstr(t->name, "lm_head");
}

/* ---- one tensor's parts --------------------------------------------------------------------- */

typedef struct part {
    char *name;
    dtcast_type type;
    int ndim;
    int64_t dims[DT_MAX_DIMS];
} part;

typedef struct qtensor {
    int chosen;
    part parts[3];   /* codes, scales, global (name NULL when none) */
    uint8_t *scales; /* kept between the writes of the scales and of the codes */
    size_t scales_bytes;
    float global;
    int have;        /* scales and global computed */
} qtensor;

static dtcast_type codes_file_type(dt_qlayout l, dtcast_type element)
{
    switch (l) {
    case DT_QL_MXFP4_GPTOSS:
    case DT_QL_NVFP4_MODELOPT:
    case DT_QL_NVFP4_CT:
    case DT_QL_INT4_GROUP:
        return DTCAST_UINT8;
    default:
        return element;
    }
}

/* The parts of tensor i in the file, from the library's layout of its quantization. */
static int plan_tensor(const dt_quantize_request *r, const dt_qf *c, size_t i, qtensor *q)
{
    const dt_qt *t = &c->ck.t[i];
    char what[1024];
    snprintf(what, sizeof what, "%s", t->name);
    dtcast_tensor x, codes, scales, global;
    memset(&x, 0, sizeof x);
    x.type = t->type;
    x.ndim = t->ndim;
    memcpy(x.shape, t->dims, (size_t)t->ndim * sizeof t->dims[0]);
    x.bytes = (size_t)c->ck.at[i].bytes;
    dtcast_error e;
    memset(&e, 0, sizeof e);
    if (dtcast_quantize_layout(&codes, &scales, &global, &x, &r->p, &e) != DTCAST_OK)
        return FAIL_T(c, i, "tensor '%s': %s: %s", what, r->scheme_name, e.message);
    int64_t k = t->ndim ? t->dims[t->ndim - 1] : 1;
    dt_io_error err = DT_IO_ERROR_INIT;
    char *names[3];
    if (dt_qlayout_names(r->layout, t->name, names, &err) != DTCAST_OK)
        return FAIL(c, "%s", err.message);
    for (int p = 0; p < 3; p++)
        q->parts[p].name = names[p];
    if (t->ndim < 1)
        return FAIL_T(c, i, "tensor '%s': a 0-dimensional tensor is not quantized", what);
    part *pc = &q->parts[0], *ps = &q->parts[1], *pg = &q->parts[2];
    pc->type = codes_file_type(r->layout, codes.type);
    pc->ndim = codes.ndim;
    memcpy(pc->dims, codes.shape, sizeof codes.shape);
    ps->type = scales.type;
    ps->ndim = scales.ndim;
    memcpy(ps->dims, scales.shape, sizeof scales.shape);
    switch (r->layout) {
    case DT_QL_MXFP4_GPTOSS:
        if (k % 32)
            return FAIL_T(c, i, "tensor '%s': the gpt-oss layout needs a last axis that is a multiple "
                            "of 32 (it is %lld): use --layout mx",
                            what, (long long)k);
        pc->ndim = t->ndim + 1;
        pc->dims[t->ndim - 1] = k / 32;
        pc->dims[t->ndim] = 16;
        ps->type = DTCAST_UINT8;
        break;
    case DT_QL_NVFP4_MODELOPT:
    case DT_QL_NVFP4_CT:
    case DT_QL_INT4_GROUP:
        if (k % 2)
            return FAIL_T(c, i, "tensor '%s': the last axis (%lld) must be even for two codes per "
                            "byte",
                            what, (long long)k);
        pc->dims[t->ndim - 1] = k / 2;
        break;
    case DT_QL_MX:
        if (codes.type == DTCAST_FLOAT4E2M1 && k % 2)
            return FAIL_T(c, i, "tensor '%s': the last axis (%lld) must be even for F4", what,
                            (long long)k);
        break;
    default:
        break;
    }
    if (pg->name) {
        pg->type = DTCAST_FLOAT32;
        pg->ndim = r->layout == DT_QL_NVFP4_MODELOPT ? 0 : 1;
        pg->dims[0] = 1;
        if (global.type == DTCAST_UNDEFINED)
            return FAIL_T(c, i, "tensor '%s': %s has no global scale for layout %s", what,
                            r->scheme_name, r->layout_name);
    }
    q->chosen = 1;
    return JOB_OK;
}

/* Quantizes tensor i: codes (malloc'd, *codes, unless codes is NULL), scales and global. */
static int quantize_tensor(const dt_quantize_request *r, const dt_qf *c, size_t i, qtensor *q,
                           uint8_t **codes_out, size_t *codes_bytes, dt_progress *progress)
{
    (void)progress; /* the report goes through the hooks, which clear the progress line */
    const dt_qt *t = &c->ck.t[i];
    char what[1024];
    snprintf(what, sizeof what, "%s", t->name);
    uint8_t *xdata = dt_qf_read(c, i);
    if (!xdata)
        return JOB_FAIL;
    dtcast_tensor x, codes, scales, global;
    memset(&x, 0, sizeof x);
    x.data = xdata;
    x.type = t->type;
    x.ndim = t->ndim;
    memcpy(x.shape, t->dims, (size_t)t->ndim * sizeof t->dims[0]);
    x.bytes = (size_t)c->ck.at[i].bytes;
    dtcast_error e;
    memset(&e, 0, sizeof e);
    int status = JOB_OK;
    if (dtcast_quantize_layout(&codes, &scales, &global, &x, &r->p, &e) != DTCAST_OK)
        status = FAIL_T(c, i, "tensor '%s': %s", what, e.message);
    codes.data = status == JOB_OK ? malloc(codes.bytes ? codes.bytes : 1) : NULL;
    scales.data = status == JOB_OK ? malloc(scales.bytes ? scales.bytes : 1) : NULL;
    global.data = &q->global;
    global.bytes = sizeof q->global;
    if (status == JOB_OK && (!codes.data || !scales.data))
        status = FAIL_T(c, i, "out of memory for tensor '%s'", what);
    if (status == JOB_OK &&
        dtcast_quantize(&codes, &scales, global.type != DTCAST_UNDEFINED ? &global : NULL, &x,
                        &r->p, &e) != DTCAST_OK)
        status = FAIL_T(c, i, "tensor '%s': %s: %s", what, r->scheme_name, e.message);
    if (status == JOB_OK && r->report && codes_out) {
        /* SQNR and max abs error against the input, in float64 over float32 values. */
        size_t count = 0;
        dtcast_tensor_count(&x, &count, NULL);
        float *a = malloc((count ? count : 1) * sizeof *a), *b = malloc((count ? count : 1) * sizeof *b);
        dtcast_tensor y;
        memset(&y, 0, sizeof y);
        y.data = b;
        y.bytes = count * sizeof *b;
        y.type = DTCAST_FLOAT32;
        if (!a || !b)
            status = FAIL_T(c, i, "out of memory for the report of '%s'", what);
        else if (dtcast_convert(a, DTCAST_FLOAT32, xdata, t->type, count, NULL, &e) != DTCAST_OK ||
                 dtcast_dequantize(&y, &codes, &scales,
                                   global.type != DTCAST_UNDEFINED ? &global : NULL, &r->p,
                                   &e) != DTCAST_OK)
            status = FAIL_T(c, i, "tensor '%s': the report: %s", what, e.message);
        if (status == JOB_OK) {
            double sig = 0, noise = 0, worst = -1;
            size_t at = 0, nonfinite = 0;
            for (size_t k = 0; k < count; k++) {
                if (!isfinite(a[k]) || !isfinite(b[k])) {
                    nonfinite++;
                    continue;
                }
                double d = (double)a[k] - (double)b[k];
                sig += (double)a[k] * (double)a[k];
                noise += d * d;
                if (fabs(d) > worst) {
                    worst = fabs(d);
                    at = k;
                }
            }
            char line[2048];
            size_t used = 0;
            APPEND(line, used, "%s: %s %s", what, r->scheme_name, r->layout_name);
            if (noise == 0)
                APPEND(line, used, ", SQNR inf dB");
            else if (sig == 0)
                APPEND(line, used, ", SQNR -inf dB");
            else
                APPEND(line, used, ", SQNR %.2f dB", 10 * log10(sig / noise));
            if (worst >= 0)
                APPEND(line, used, ", max abs error %.6g at [%zu] (%.9g -> %.9g)", worst, at,
                       (double)a[at], (double)b[at]);
            if (nonfinite)
                APPEND(line, used, ", %zu NaN/Inf values left out", nonfinite);
            APPEND(line, used, " over %zu values\n", count);
            dt_job_report(&r->hooks, line);
        }
        free(a);
        free(b);
    }
    free(xdata);
    if (status == JOB_OK && !q->have) {
        q->scales = scales.data;
        q->scales_bytes = scales.bytes;
        q->have = 1;
        scales.data = NULL;
    }
    free(scales.data);
    if (status == JOB_OK && codes_out) {
        *codes_out = codes.data;
        *codes_bytes = codes.bytes;
        codes.data = NULL;
    }
    free(codes.data);
    return status;
}

/* ---- the checkpoint ------------------------------------------------------------------------- */

/* What output tensor k of a shard is: tensor `tensor` copied (part -1) or part p of it. */
typedef struct out_ref {
    size_t tensor;
    int part;
} out_ref;

typedef struct shard_fill {
    const dt_quantize_request *r;
    dt_qf *c;
    qtensor *q;
    size_t s;
    const out_ref *refs;
    dt_progress *progress;
} shard_fill;

static int write_part(const dt_quantize_request *r, dt_qf *c, size_t i, qtensor *q, int p,
                      dt_outfile *out, uint64_t file_bytes, dt_progress *progress)
{
    dt_io_error err = DT_IO_ERROR_INIT;
    uint8_t *data = NULL;
    size_t len = 0;
    int status = JOB_OK;
    if (p == 0) {
        status = quantize_tensor(r, c, i, q, &data, &len, progress);
        dt_progress_add(progress, c->ck.at[i].bytes);
        if (status == JOB_OK && dt_progress_cancelled(progress))
            status = FAIL(c, "cancelled");
        /* float6: one per byte from the library, the packed stream in the file. */
        if (status == JOB_OK && dtcast_type_bits(q->parts[0].type) == 6) {
            uint8_t *packed = malloc(file_bytes ? (size_t)file_bytes : 1);
            if (!packed)
                status = FAIL(c, "out of memory");
            else
                dt_st_f6_to_bytes(packed, data, len);
            free(data);
            data = packed;
            len = (size_t)file_bytes;
        }
    } else {
        if (!q->have)
            status = quantize_tensor(r, c, i, q, NULL, NULL, progress);
        if (status == JOB_OK && p == 1) {
            data = q->scales;
            len = q->scales_bytes;
            q->scales = NULL;
        } else if (status == JOB_OK) {
            if (!(data = malloc(4)))
                status = FAIL(c, "out of memory");
            else
                memcpy(data, &q->global, 4);
            len = 4;
        }
    }
    if (status == JOB_OK && len != file_bytes)
        status = FAIL(c, "tensor '%s': %zu bytes of %s where the file takes %llu (internal)",
                          q->parts[p].name, len, p ? "scales" : "codes",
                          (unsigned long long)file_bytes);
    if (status == JOB_OK && dt_outfile_write(out, data, len, &err) != DTCAST_OK)
        status = FAIL(c, "%s", err.message);
    free(data);
    return status;
}

static dtcast_status fill_tensor(void *ctx, size_t k, dt_outfile *out, uint64_t nbytes,
                                 dt_io_error *err)
{
    shard_fill *f = ctx;
    dt_qf *c = f->c;
    size_t t = f->refs[k].tensor;
    if (f->refs[k].part >= 0)
        return write_part(f->r, c, t, &f->q[t], f->refs[k].part, out, nbytes, f->progress) ==
                       JOB_OK
                   ? DTCAST_OK
                   : DTCAST_ERR_BAD_FILE; /* the error is in err (c->err_out) */
    dtcast_status st = dt_stream_copy(&c->ck.shards[f->s].file, c->ck.at[t].at,
                                      c->ck.at[t].bytes, out, NULL, f->progress, err);
    if (st != DTCAST_OK) {
        dt_io_error inner = *err;
        dt_io_fail(err, st, "%s: tensor '%s': %s", c->ck.shards[f->s].path, c->ck.t[t].name,
                   inner.message);
        return dt_io_where(st, err, c->ck.shards[f->s].path, c->ck.t[t].name);
    }
    dt_ckpt_release(&c->ck, f->s, c->ck.at[t].at, c->ck.at[t].bytes);
    return DTCAST_OK;
}

static int write_shard(const dt_quantize_request *r, dt_qf *c, qtensor *q, size_t s, uint64_t *bytes,
                       dt_progress *progress)
{
    size_t n = 0;
    for (size_t i = 0; i < c->ck.n; i++)
        if (c->ck.at[i].shard == s)
            n += q[i].chosen ? 2 + (q[i].parts[2].name != NULL) : 1;
    dt_st_tensor *e = calloc(n ? n : 1, sizeof *e);
    out_ref *refs = calloc(n ? n : 1, sizeof *refs);
    if (!e || !refs) {
        free(e);
        free(refs);
        return FAIL(c, "out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < c->ck.n; i++) {
        if (c->ck.at[i].shard != s)
            continue;
        if (!q[i].chosen) {
            e[k].name = (char *)c->ck.t[i].name;
            e[k].type = c->ck.t[i].type;
            e[k].ndim = c->ck.t[i].ndim;
            memcpy(e[k].dims, c->ck.t[i].dims, (size_t)c->ck.t[i].ndim * sizeof c->ck.t[i].dims[0]);
            refs[k++] = (out_ref){i, -1};
            continue;
        }
        for (int p = 0; p < 3; p++) {
            const part *pt = &q[i].parts[p];
            if (!pt->name)
                continue;
            e[k].name = pt->name;
            e[k].type = pt->type;
            e[k].ndim = pt->ndim;
            memcpy(e[k].dims, pt->dims, (size_t)pt->ndim * sizeof pt->dims[0]);
            refs[k++] = (out_ref){i, p};
        }
    }
    shard_fill f = {r, c, q, s, refs, progress};
    dtcast_status st = dt_ckpt_out_shard(&c->o, s, e, n, fill_tensor, &f, bytes, c->err_out);
    free(e);
    free(refs);
    return dt_qf_status(c, st);
}

static void qconfig_text(const dt_quantize_request *r, char *buf, size_t size);

/* The index, config.json and the other files, then every output renamed into place. */
static int finish(const dt_quantize_request *r, dt_qf *c, const qtensor *q, uint64_t total)
{
    if (!c->ck.has_index) {
        char qconfig[2048];
        qconfig_text(r, qconfig, sizeof qconfig);
        return dt_qf_finish(c, NULL, 0, total, qconfig, 0);
    }
    size_t n = 0;
    for (size_t i = 0; i < c->ck.n; i++)
        n += q[i].chosen ? 3 : 1;
    dt_st_index_entry *e = calloc(n ? n : 1, sizeof *e);
    if (!e)
        return FAIL(c, "out of memory");
    /* The shard of each tensor as the index names it (the index's own shard numbering). */
    size_t k = 0;
    for (size_t i = 0; i < c->ck.n; i++) {
        size_t shard = 0;
        while (shard < c->ck.ix.nshards &&
               strcmp(c->ck.ix.shards[shard], c->ck.shards[c->ck.at[i].shard].name) != 0)
            shard++;
        if (!q[i].chosen) {
            e[k++] = (dt_st_index_entry){(char *)c->ck.t[i].name, shard};
            continue;
        }
        for (int p = 0; p < 3; p++)
            if (q[i].parts[p].name)
                e[k++] = (dt_st_index_entry){q[i].parts[p].name, shard};
    }
    char qconfig[2048];
    qconfig_text(r, qconfig, sizeof qconfig);
    int status = dt_qf_finish(c, e, k, total, qconfig, 0);
    free(e);
    return status;
}

const char *dt_nvfp4_qconfig(dt_qlayout layout)
{
    if (layout == DT_QL_NVFP4_MODELOPT)
        return "{\n    \"group_size\": 16,\n    \"quant_algo\": \"NVFP4\",\n"
               "    \"quant_method\": \"modelopt\"\n  }";
    return "{\n    \"config_groups\": {\n      \"group_0\": {\n        \"targets\": [\n"
           "          \"Linear\"\n        ],\n        \"weights\": {\n"
           "          \"dynamic\": false,\n          \"group_size\": 16,\n"
           "          \"num_bits\": 4,\n          \"strategy\": \"tensor_group\",\n"
           "          \"symmetric\": true,\n          \"type\": \"float\"\n        }\n"
           "      }\n    },\n    \"format\": \"nvfp4-pack-quantized\",\n"
           "    \"quant_method\": \"compressed-tensors\"\n  }";
}

/* The quantization_config written into config.json (docs/cli.md). */
static void qconfig_text(const dt_quantize_request *r, char *buf, size_t size)
{
    const dtcast_quant_params *p = &r->p;
    const char *ename = dtcast_type_name(p->element);
    switch (r->layout) {
    case DT_QL_GPTQ: /* read only: dt_quantize_pick_layout never picks them */
    case DT_QL_AWQ:
        snprintf(buf, size, "{}");
        break;
    case DT_QL_FP8_BLOCK:
        snprintf(buf, size,
                 "{\n    \"activation_scheme\": \"dynamic\",\n    \"fmt\": \"e4m3\",\n"
                 "    \"quant_method\": \"fp8\",\n    \"weight_block_size\": [\n      %lld,\n"
                 "      %lld\n    ]\n  }",
                 (long long)(p->block_rows                              ? p->block_rows
                             : p->variant == DTCAST_VARIANT_DEEPSEEK_ACT ? 1
                                                                          : 128),
                 (long long)(p->block ? p->block : 128));
        break;
    case DT_QL_MXFP4_GPTOSS:
        snprintf(buf, size, "{\n    \"quant_method\": \"mxfp4\"\n  }");
        break;
    case DT_QL_NVFP4_MODELOPT:
    case DT_QL_NVFP4_CT:
        snprintf(buf, size, "%s", dt_nvfp4_qconfig(r->layout));
        break;
    case DT_QL_ABSMAX:
    case DT_QL_INT4_GROUP: {
        int fp = p->element == DTCAST_FLOAT8E4M3FN;
        int bits = p->element == DTCAST_INT4 ? 4 : 8;
        const char *strategy = p->per_tensor ? "tensor" : p->block ? "group" : "channel";
        char group[64] = "";
        if (p->block && !p->per_tensor)
            snprintf(group, sizeof group, "          \"group_size\": %lld,\n",
                     (long long)p->block);
        snprintf(buf, size,
                 "{\n    \"config_groups\": {\n      \"group_0\": {\n        \"targets\": [\n"
                 "          \"Linear\"\n        ],\n        \"weights\": {\n"
                 "          \"dynamic\": false,\n%s          \"num_bits\": %d,\n"
                 "          \"strategy\": \"%s\",\n          \"symmetric\": true,\n"
                 "          \"type\": \"%s\"\n        }\n      }\n    },\n"
                 "    \"format\": \"%s\",\n    \"quant_method\": \"compressed-tensors\"\n  }",
                 group, bits, strategy, fp ? "float" : "int",
                 fp ? "float-quantized" : bits == 4 ? "dtcast-int4-packed" : "int-quantized");
        break;
    }
    case DT_QL_MX:
        snprintf(buf, size,
                 "{\n    \"block_size\": 32,\n    \"element\": \"%s\",\n"
                 "    \"quant_method\": \"dtcast-mx\"\n  }",
                 ename ? ename : "?");
        break;
    }
}

dtcast_status dt_quantize_checkpoint(const dt_quantize_request *r, dt_io_error *err)
{
    dt_qf c;
    dt_qplan plan;
    memset(&plan, 0, sizeof plan);
    dt_io_error local = DT_IO_ERROR_INIT;
    if (!err)
        err = &local;
    int status = dt_qf_open(&c, "quantize", r->in, r->out, err, &r->hooks);
    dt_io_error perr = DT_IO_ERROR_INIT;
    if (status == JOB_OK && dt_qplan_make(c.ck.t, c.ck.n, &plan, &perr) == DTCAST_OK &&
        plan.ngroups > 0)
        status = FAIL(&c, "%s is quantized already (tensor '%s' is %s): dequantize it first",
                          r->in, plan.groups[0].name, dt_qlayout_name(plan.groups[0].layout));
    qtensor *q = status == JOB_OK ? calloc(c.ck.n ? c.ck.n : 1, sizeof *q) : NULL;
    if (status == JOB_OK && !q)
        status = FAIL(&c, "out of memory");
    size_t nchosen = 0;
    uint64_t chosen_bytes = 0;
    for (size_t i = 0; status == JOB_OK && i < c.ck.n; i++)
        if (chosen(r, &c, i)) {
            status = plan_tensor(r, &c, i, &q[i]);
            nchosen++;
            chosen_bytes += c.ck.at[i].bytes;
        }
    if (status == JOB_OK && nchosen == 0)
        dt_job_warn(&r->hooks, "%s: no tensor is chosen (see --select); the tensors are copied as they are",
                 r->in);
    if (status == JOB_OK)
        status = dt_qf_status(&c, dt_ckpt_out_make_dir(&c.o, err));
    dt_progress progress;
    dt_progress_init(&progress, dt_ckpt_input_bytes(&c.ck), r->hooks.progress,
                     r->hooks.progress_ctx);
    (void)chosen_bytes;
    uint64_t total = 0;
    for (size_t s = 0; status == JOB_OK && s < c.ck.nshards; s++)
        status = write_shard(r, &c, q, s, &total, &progress);
    if (status == JOB_OK)
        status = finish(r, &c, q, total);
    for (size_t i = 0; q && i < c.ck.n; i++) {
        for (int p = 0; p < 3; p++)
            free(q[i].parts[p].name);
        free(q[i].scales);
    }
    free(q);
    dt_qplan_free(&plan);
    dtcast_status result = dt_qf_result(&c, status);
    dt_qf_close(&c);
    return result;
}

dt_layout_problem dt_quantize_pick_layout(dtcast_quant_params *p, const char *want,
                                          int variant_given, dt_qlayout *layout,
                                          const char **name, const char **allowed)
{
    *name = want;
    *allowed = "";
    switch (p->scheme) {
    case DTCAST_SCHEME_FP8_BLOCK:
        *allowed = "hf";
        *layout = DT_QL_FP8_BLOCK;
        break;
    case DTCAST_SCHEME_MX:
        if (p->element == DTCAST_FLOAT4E2M1) {
            *allowed = "gpt-oss, mx";
            *layout = want && strcmp(want, "mx") == 0 ? DT_QL_MX : DT_QL_MXFP4_GPTOSS;
        } else {
            *allowed = "mx";
            *layout = DT_QL_MX;
        }
        break;
    case DTCAST_SCHEME_NVFP4:
        *allowed = "modelopt, ct";
        *layout = want && strcmp(want, "ct") == 0 ? DT_QL_NVFP4_CT : DT_QL_NVFP4_MODELOPT;
        if (!variant_given)
            p->variant = *layout == DT_QL_NVFP4_CT ? DTCAST_VARIANT_CT : DTCAST_VARIANT_MODELOPT;
        if (p->single_level)
            return DT_LAYOUT_SINGLE_LEVEL;
        if ((*layout == DT_QL_NVFP4_CT) != (p->variant == DTCAST_VARIANT_CT))
            return DT_LAYOUT_VARIANT;
        break;
    case DTCAST_SCHEME_ABSMAX:
        *allowed = "ct";
        if (p->element == DTCAST_INT4)
            *layout = DT_QL_INT4_GROUP;
        else if (p->element == DTCAST_INT8 || p->element == DTCAST_FLOAT8E4M3FN ||
                 p->element == DTCAST_UNDEFINED)
            *layout = DT_QL_ABSMAX;
        else
            return DT_LAYOUT_ELEMENT;
        break;
    default:
        return DT_LAYOUT_SCHEME;
    }
    if (!want) {
        const char *comma = strchr(*allowed, ',');
        *name = !comma                              ? *allowed
                : *layout == DT_QL_MX               ? "mx"
                : *layout == DT_QL_NVFP4_CT         ? "ct"
                : p->scheme == DTCAST_SCHEME_MX     ? "gpt-oss"
                                                    : "modelopt";
        return DT_LAYOUT_OK;
    }
    size_t wl = strlen(want);
    for (const char *a = *allowed; *a;) {
        size_t l = strcspn(a, ",");
        if (l == wl && strncmp(a, want, l) == 0)
            return DT_LAYOUT_OK;
        a += l;
        while (*a == ',' || *a == ' ')
            a++;
    }
    return DT_LAYOUT_NOT_OF_SCHEME;
}
