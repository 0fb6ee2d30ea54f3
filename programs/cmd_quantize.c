/* dtcast quantize: the chosen tensors of a checkpoint (or a .npy) into a scheme's checkpoint
 * layout (docs/cli.md, "Quantized checkpoints"; the names in files/quant_layout.h). Each chosen
 * tensor is quantized whole in memory by the library (on every thread); the others are copied. */
#include "files/job.h"
#include "cli.h"
#include "files/pipeline.h"
#include "quant_files.h"

#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_QUIET = CLI_OPT_COMMAND, OPT_REPORT, OPT_SELECT, OPT_EXCLUDE, OPT_SCHEME, OPT_VARIANT,
       OPT_SCALE_MODE, OPT_SEED, OPT_BLOCK, OPT_LAYOUT };

static const cli_option options[] = {
    {"help", 'h', 0, CLI_OPT_HELP},
    {"scheme", 's', 1, OPT_SCHEME},
    {"variant", 0, 1, OPT_VARIANT},
    {"scale-mode", 0, 1, OPT_SCALE_MODE},
    {"round", 'r', 1, CLI_OPT_ROUND},
    {"seed", 0, 1, OPT_SEED},
    {"block", 0, 1, OPT_BLOCK},
    {"select", 0, 1, OPT_SELECT},
    {"exclude", 0, 1, OPT_EXCLUDE},
    {"layout", 0, 1, OPT_LAYOUT},
    {"report", 0, 0, OPT_REPORT},
    {"threads", 'T', 1, CLI_OPT_THREADS},
    {"quiet", 'q', 0, OPT_QUIET},
    {NULL, 0, 0, 0},
};

static const char help[] =
    "usage: dtcast quantize --scheme S [options] IN OUT\n"
    "\n"
    "Quantizes the weights of a checkpoint into a scheme's checkpoint layout. IN is a .npy or\n"
    ".safetensors file (OUT then a .safetensors file), a sharded checkpoint's\n"
    "*.safetensors.index.json or a model folder (OUT a folder: the index is rewritten, a\n"
    "quantization_config is written into config.json, the other files are copied).\n"
    "\n"
    "Schemes and their layouts (--layout; the first is the default):\n"
    "  fp8-block     hf: X.weight F8_E4M3 + X.weight_scale_inv F32 (128x128 tiles)\n"
    "  mxfp4         gpt-oss: X.weight_blocks U8 [..., K/32, 16] + X.weight_scales U8;\n"
    "                mx: X.weight F4 + X.weight_scale F8_E8M0\n"
    "  mxfp8, mxfp8-e5m2, mxfp6-e2m3, mxfp6-e3m2, mxint8\n"
    "                mx: X.weight (F8_E4M3, F8_E5M2, F6_E2M3, F6_E3M2, I8) + X.weight_scale F8_E8M0\n"
    "  nvfp4         modelopt: X.weight U8 + X.weight_scale F8_E4M3 + X.weight_scale_2 F32;\n"
    "                ct: X.weight_packed U8 + X.weight_scale F8_E4M3 + X.weight_global_scale F32\n"
    "  fp8-tensor, fp8-channel, int8-tensor, int8-channel\n"
    "                ct: X.weight (F8_E4M3, I8) + X.weight_scale ([1] or [N, 1])\n"
    "  int4-group    ct: X.weight_packed U8 (two int4 per byte) + X.weight_scale [N, K/128]\n"
    "\n"
    "Which tensors (default): those of at least two axes, of a float type (float32,\n"
    "bfloat16, float16, float64), whose name ends in 'weight' and contains none of 'embed',\n"
    "'norm', 'lm_head' (what quantizers do); a .npy's tensor always. The rest are copied.\n"
    "\n"
    "Options:\n"
    "  -s, --scheme S        the scheme (above)\n"
    "      --variant V       the variant whose intermediates to follow: ocp (MX), modelopt,\n"
    "                        torchao, ct (NVFP4), hf, deepseek-act (fp8-block), ct (absmax)\n"
    "      --scale-mode M    MX scale: floor (default), ceil, even, rceil, log2\n"
    "  -r, --round R         element rounding: rne (default), rna (MX), stochastic\n"
    "      --seed N          the seed of --round stochastic (default 0)\n"
    "      --block RxC       fp8-block tile (default 128x128); N: elements per block\n"
    "      --select GLOB     quantize the tensors whose name matches (repeatable; replaces the\n"
    "                        default choice)\n"
    "      --exclude GLOB    leave out the tensors whose name matches (repeatable)\n"
    "      --layout L        the checkpoint layout (above)\n"
    "      --report          per tensor, on stderr: SQNR and max abs error of the quantization\n"
    "  -T, --threads N       threads (default: one per CPU)\n"
    "  -q, --quiet           no progress line\n"
    "  -h, --help            show this help\n"
    "\n"
    "Examples:\n"
    "  dtcast quantize --scheme fp8-block model/ model-fp8/\n"
    "  dtcast quantize --scheme mxfp4 --scale-mode rceil --select '*experts*' model/ model-mxfp4/\n"
    "  dtcast quantize --scheme nvfp4 --layout ct --report model.safetensors model-nvfp4.safetensors\n";

typedef struct q_request {
    const char *in, *out;
    const char *scheme_name, *layout_name;
    dtcast_quant_params p;
    int variant_given;
    dt_qlayout layout;
    dt_globs select, exclude;
    int report, quiet;
} q_request;

/* ---- choosing ------------------------------------------------------------------------------ */

static int is_input_type(dtcast_type t)
{
    return t == DTCAST_FLOAT32 || t == DTCAST_BFLOAT16 || t == DTCAST_FLOAT16 ||
           t == DTCAST_FLOAT64;
}

static int glob_any(const dt_globs *g, const char *name)
{
    for (int i = 0; i < g->n; i++)
        if (fnmatch(g->pattern[i], name, 0) == 0)
            return 1;
    return 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int chosen(const q_request *r, const qf_ckpt *c, size_t i)
{
    const dt_qt *t = &c->ck.t[i];
    if (!is_input_type(t->type) || glob_any(&r->exclude, t->name))
        return 0;
    if (r->select.n)
        return glob_any(&r->select, t->name);
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
static int plan_tensor(const q_request *r, const qf_ckpt *c, size_t i, qtensor *q)
{
    const dt_qt *t = &c->ck.t[i];
    char what[1024];
    cli_escape(what, sizeof what, t->name);
    dtcast_tensor x, codes, scales, global;
    memset(&x, 0, sizeof x);
    x.type = t->type;
    x.ndim = t->ndim;
    memcpy(x.shape, t->dims, (size_t)t->ndim * sizeof t->dims[0]);
    x.bytes = (size_t)c->ck.at[i].bytes;
    dtcast_error e;
    memset(&e, 0, sizeof e);
    if (dtcast_quantize_layout(&codes, &scales, &global, &x, &r->p, &e) != DTCAST_OK)
        return cli_fail("tensor '%s': %s: %s", what, r->scheme_name, e.message);
    int64_t k = t->ndim ? t->dims[t->ndim - 1] : 1;
    dt_io_error err = DT_IO_ERROR_INIT;
    char *names[3];
    if (dt_qlayout_names(r->layout, t->name, names, &err) != DTCAST_OK)
        return cli_fail("%s", err.message);
    for (int p = 0; p < 3; p++)
        q->parts[p].name = names[p];
    if (t->ndim < 1)
        return cli_fail("tensor '%s': a 0-dimensional tensor is not quantized", what);
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
            return cli_fail("tensor '%s': the gpt-oss layout needs a last axis that is a multiple "
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
            return cli_fail("tensor '%s': the last axis (%lld) must be even for two codes per "
                            "byte",
                            what, (long long)k);
        pc->dims[t->ndim - 1] = k / 2;
        break;
    case DT_QL_MX:
        if (codes.type == DTCAST_FLOAT4E2M1 && k % 2)
            return cli_fail("tensor '%s': the last axis (%lld) must be even for F4", what,
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
            return cli_fail("tensor '%s': %s has no global scale for layout %s", what,
                            r->scheme_name, r->layout_name);
    }
    q->chosen = 1;
    return CLI_OK;
}

/* Quantizes tensor i: codes (malloc'd, *codes, unless codes is NULL), scales and global. */
static int quantize_tensor(const q_request *r, const qf_ckpt *c, size_t i, qtensor *q,
                           uint8_t **codes_out, size_t *codes_bytes, dt_progress *progress)
{
    const dt_qt *t = &c->ck.t[i];
    char what[1024];
    cli_escape(what, sizeof what, t->name);
    uint8_t *xdata = qf_read(c, i);
    if (!xdata)
        return CLI_FAIL;
    dtcast_tensor x, codes, scales, global;
    memset(&x, 0, sizeof x);
    x.data = xdata;
    x.type = t->type;
    x.ndim = t->ndim;
    memcpy(x.shape, t->dims, (size_t)t->ndim * sizeof t->dims[0]);
    x.bytes = (size_t)c->ck.at[i].bytes;
    dtcast_error e;
    memset(&e, 0, sizeof e);
    int status = CLI_OK;
    if (dtcast_quantize_layout(&codes, &scales, &global, &x, &r->p, &e) != DTCAST_OK)
        status = cli_fail("tensor '%s': %s", what, e.message);
    codes.data = status == CLI_OK ? malloc(codes.bytes ? codes.bytes : 1) : NULL;
    scales.data = status == CLI_OK ? malloc(scales.bytes ? scales.bytes : 1) : NULL;
    global.data = &q->global;
    global.bytes = sizeof q->global;
    if (status == CLI_OK && (!codes.data || !scales.data))
        status = cli_fail("out of memory for tensor '%s'", what);
    if (status == CLI_OK &&
        dtcast_quantize(&codes, &scales, global.type != DTCAST_UNDEFINED ? &global : NULL, &x,
                        &r->p, &e) != DTCAST_OK)
        status = cli_fail("tensor '%s': %s: %s", what, r->scheme_name, e.message);
    if (status == CLI_OK && r->report && codes_out) {
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
            status = cli_fail("out of memory for the report of '%s'", what);
        else if (dtcast_convert(a, DTCAST_FLOAT32, xdata, t->type, count, NULL, &e) != DTCAST_OK ||
                 dtcast_dequantize(&y, &codes, &scales,
                                   global.type != DTCAST_UNDEFINED ? &global : NULL, &r->p,
                                   &e) != DTCAST_OK)
            status = cli_fail("tensor '%s': the report: %s", what, e.message);
        if (status == CLI_OK) {
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
            cli_progress_clear(progress);
            fprintf(stderr, "%s: %s %s", what, r->scheme_name, r->layout_name);
            if (noise == 0)
                fprintf(stderr, ", SQNR inf dB");
            else if (sig == 0)
                fprintf(stderr, ", SQNR -inf dB");
            else
                fprintf(stderr, ", SQNR %.2f dB", 10 * log10(sig / noise));
            if (worst >= 0)
                fprintf(stderr, ", max abs error %.6g at [%zu] (%.9g -> %.9g)", worst, at,
                        (double)a[at], (double)b[at]);
            if (nonfinite)
                fprintf(stderr, ", %zu NaN/Inf values left out", nonfinite);
            fprintf(stderr, " over %zu values\n", count);
        }
        free(a);
        free(b);
    }
    free(xdata);
    if (status == CLI_OK && !q->have) {
        q->scales = scales.data;
        q->scales_bytes = scales.bytes;
        q->have = 1;
        scales.data = NULL;
    }
    free(scales.data);
    if (status == CLI_OK && codes_out) {
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
    const q_request *r;
    qf_ckpt *c;
    qtensor *q;
    size_t s;
    const out_ref *refs;
    dt_progress *progress;
} shard_fill;

static int write_part(const q_request *r, qf_ckpt *c, size_t i, qtensor *q, int p,
                      dt_outfile *out, uint64_t file_bytes, dt_progress *progress)
{
    dt_io_error err = DT_IO_ERROR_INIT;
    uint8_t *data = NULL;
    size_t len = 0;
    int status = CLI_OK;
    if (p == 0) {
        status = quantize_tensor(r, c, i, q, &data, &len, progress);
        dt_progress_add(progress, c->ck.at[i].bytes);
        /* float6: one per byte from the library, the packed stream in the file. */
        if (status == CLI_OK && dtcast_type_bits(q->parts[0].type) == 6) {
            uint8_t *packed = malloc(file_bytes ? (size_t)file_bytes : 1);
            if (!packed)
                status = cli_fail("out of memory");
            else
                dt_st_f6_to_bytes(packed, data, len);
            free(data);
            data = packed;
            len = (size_t)file_bytes;
        }
    } else {
        if (!q->have)
            status = quantize_tensor(r, c, i, q, NULL, NULL, progress);
        if (status == CLI_OK && p == 1) {
            data = q->scales;
            len = q->scales_bytes;
            q->scales = NULL;
        } else if (status == CLI_OK) {
            if (!(data = malloc(4)))
                status = cli_fail("out of memory");
            else
                memcpy(data, &q->global, 4);
            len = 4;
        }
    }
    if (status == CLI_OK && len != file_bytes)
        status = cli_fail("tensor '%s': %zu bytes of %s where the file takes %llu (internal)",
                          q->parts[p].name, len, p ? "scales" : "codes",
                          (unsigned long long)file_bytes);
    if (status == CLI_OK && dt_outfile_write(out, data, len, &err) != DTCAST_OK)
        status = cli_fail("%s", err.message);
    free(data);
    return status;
}

static dtcast_status fill_tensor(void *ctx, size_t k, dt_outfile *out, uint64_t nbytes,
                                 dt_io_error *err)
{
    shard_fill *f = ctx;
    qf_ckpt *c = f->c;
    size_t t = f->refs[k].tensor;
    if (f->refs[k].part >= 0)
        return write_part(f->r, c, t, &f->q[t], f->refs[k].part, out, nbytes, f->progress) ==
                       CLI_OK
                   ? DTCAST_OK
                   : dt_io_fail(err, DTCAST_ERR_IO, "%s", ""); /* printed */
    dtcast_status st = dt_stream_copy(&c->ck.shards[f->s].file, c->ck.at[t].at,
                                      c->ck.at[t].bytes, out, NULL, f->progress, err);
    if (st != DTCAST_OK) {
        dt_io_error inner = *err;
        dt_io_fail(err, st, "%s: tensor '%s': %s", c->ck.shards[f->s].path, c->ck.t[t].name,
                   inner.message);
        return dt_io_where(st, err, c->ck.shards[f->s].path, c->ck.t[t].name);
    }
    qf_release(c, f->s, c->ck.at[t].at, c->ck.at[t].bytes);
    return DTCAST_OK;
}

static int write_shard(const q_request *r, qf_ckpt *c, qtensor *q, size_t s, uint64_t *bytes,
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
        return cli_fail("out of memory");
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
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st = dt_ckpt_out_shard(&c->o, s, e, n, fill_tensor, &f, bytes, &err);
    free(e);
    free(refs);
    return qf_fail(c, st, &err);
}

static void qconfig_text(const q_request *r, char *buf, size_t size);

/* The index, config.json and the other files, then every output renamed into place. */
static int finish(const q_request *r, qf_ckpt *c, const qtensor *q, uint64_t total)
{
    if (!c->ck.has_index) {
        char qconfig[2048];
        qconfig_text(r, qconfig, sizeof qconfig);
        return qf_finish(c, NULL, 0, total, qconfig, 0);
    }
    size_t n = 0;
    for (size_t i = 0; i < c->ck.n; i++)
        n += q[i].chosen ? 3 : 1;
    dt_st_index_entry *e = calloc(n ? n : 1, sizeof *e);
    if (!e)
        return cli_fail("out of memory");
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
    int status = qf_finish(c, e, k, total, qconfig, 0);
    free(e);
    return status;
}

/* The quantization_config written into config.json (docs/cli.md). */
static void qconfig_text(const q_request *r, char *buf, size_t size)
{
    const dtcast_quant_params *p = &r->p;
    const char *ename = dtcast_type_name(p->element);
    switch (r->layout) {
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
        snprintf(buf, size,
                 "{\n    \"group_size\": 16,\n    \"quant_algo\": \"NVFP4\",\n"
                 "    \"quant_method\": \"modelopt\"\n  }");
        break;
    case DT_QL_NVFP4_CT:
        snprintf(buf, size,
                 "{\n    \"config_groups\": {\n      \"group_0\": {\n        \"targets\": [\n"
                 "          \"Linear\"\n        ],\n        \"weights\": {\n"
                 "          \"dynamic\": false,\n          \"group_size\": 16,\n"
                 "          \"num_bits\": 4,\n          \"strategy\": \"tensor_group\",\n"
                 "          \"symmetric\": true,\n          \"type\": \"float\"\n        }\n"
                 "      }\n    },\n    \"format\": \"nvfp4-pack-quantized\",\n"
                 "    \"quant_method\": \"compressed-tensors\"\n  }");
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

static int run(q_request *r)
{
    qf_ckpt c;
    dt_qplan plan;
    memset(&plan, 0, sizeof plan);
    int status = qf_open(&c, "quantize", r->in, r->out);
    dt_io_error err = DT_IO_ERROR_INIT;
    if (status == CLI_OK && dt_qplan_make(c.ck.t, c.ck.n, &plan, &err) == DTCAST_OK &&
        plan.ngroups > 0)
        status = cli_fail("%s is quantized already (tensor '%s' is %s): dequantize it first",
                          r->in, plan.groups[0].name, dt_qlayout_name(plan.groups[0].layout));
    qtensor *q = status == CLI_OK ? calloc(c.ck.n ? c.ck.n : 1, sizeof *q) : NULL;
    if (status == CLI_OK && !q)
        status = cli_fail("out of memory");
    size_t nchosen = 0;
    uint64_t chosen_bytes = 0;
    for (size_t i = 0; status == CLI_OK && i < c.ck.n; i++)
        if (chosen(r, &c, i)) {
            status = plan_tensor(r, &c, i, &q[i]);
            nchosen++;
            chosen_bytes += c.ck.at[i].bytes;
        }
    if (status == CLI_OK && nchosen == 0)
        cli_warn("%s: no tensor is chosen (see --select); the tensors are copied as they are",
                 r->in);
    if (status == CLI_OK)
        status = qf_fail(&c, dt_ckpt_out_make_dir(&c.o, &err), &err);
    dt_progress progress;
    cli_progress_line line;
    cli_progress_start(&progress, &line, dt_ckpt_input_bytes(&c.ck), !r->quiet);
    (void)chosen_bytes;
    uint64_t total = 0;
    for (size_t s = 0; status == CLI_OK && s < c.ck.nshards; s++)
        status = write_shard(r, &c, q, s, &total, &progress);
    cli_progress_clear(&progress);
    if (status == CLI_OK)
        status = finish(r, &c, q, total);
    for (size_t i = 0; q && i < c.ck.n; i++) {
        for (int p = 0; p < 3; p++)
            free(q[i].parts[p].name);
        free(q[i].scales);
    }
    free(q);
    dt_qplan_free(&plan);
    qf_close(&c);
    return status;
}

/* ---- the command line ------------------------------------------------------------------------ */

static const char *const layout_names[] = {"hf", "gpt-oss", "mx", "modelopt", "ct", NULL};

/* The layout: --layout, else the scheme's first; refused when the scheme does not have it. */
static int pick_layout(q_request *r)
{
    const char *cmd = "quantize";
    dtcast_quant_params *p = &r->p;
    const char *want = r->layout_name;
    const char *allowed;
    switch (p->scheme) {
    case DTCAST_SCHEME_FP8_BLOCK:
        allowed = "hf";
        r->layout = DT_QL_FP8_BLOCK;
        break;
    case DTCAST_SCHEME_MX:
        if (p->element == DTCAST_FLOAT4E2M1) {
            allowed = "gpt-oss, mx";
            r->layout = want && strcmp(want, "mx") == 0 ? DT_QL_MX : DT_QL_MXFP4_GPTOSS;
        } else {
            allowed = "mx";
            r->layout = DT_QL_MX;
        }
        break;
    case DTCAST_SCHEME_NVFP4:
        allowed = "modelopt, ct";
        r->layout = want && strcmp(want, "ct") == 0 ? DT_QL_NVFP4_CT : DT_QL_NVFP4_MODELOPT;
        if (!r->variant_given)
            p->variant = r->layout == DT_QL_NVFP4_CT ? DTCAST_VARIANT_CT : DTCAST_VARIANT_MODELOPT;
        if (p->single_level)
            return cli_usage(cmd, "--scheme %s: single-level NVFP4 has no checkpoint layout",
                             r->scheme_name);
        if ((r->layout == DT_QL_NVFP4_CT) != (p->variant == DTCAST_VARIANT_CT))
            return cli_usage(cmd, "--layout %s stores %s global scale: give --variant %s",
                             r->layout == DT_QL_NVFP4_CT ? "ct" : "modelopt",
                             r->layout == DT_QL_NVFP4_CT ? "compressed-tensors' (2688/amax)"
                                                         : "ModelOpt's (amax/2688)",
                             r->layout == DT_QL_NVFP4_CT ? "ct" : "modelopt or torchao");
        break;
    case DTCAST_SCHEME_ABSMAX:
        allowed = "ct";
        if (p->element == DTCAST_INT4)
            r->layout = DT_QL_INT4_GROUP;
        else if (p->element == DTCAST_INT8 || p->element == DTCAST_FLOAT8E4M3FN ||
                 p->element == DTCAST_UNDEFINED)
            r->layout = DT_QL_ABSMAX;
        else
            return cli_usage(cmd, "--scheme %s: no checkpoint layout holds %s codes",
                             r->scheme_name, dtcast_type_name(p->element));
        break;
    default:
        return cli_usage(cmd, "--scheme %s: unknown scheme", r->scheme_name);
    }
    if (!want) {
        const char *comma = strchr(allowed, ',');
        r->layout_name = comma ? (r->layout == DT_QL_MX ? "mx" : r->layout == DT_QL_NVFP4_CT
                                                                  ? "ct"
                                                                  : p->scheme == DTCAST_SCHEME_MX
                                                                        ? "gpt-oss"
                                                                        : "modelopt")
                               : allowed;
        return CLI_OK;
    }
    size_t wl = strlen(want);
    for (const char *a = allowed; *a;) {
        size_t l = strcspn(a, ",");
        if (l == wl && strncmp(a, want, l) == 0)
            return CLI_OK;
        a += l;
        while (*a == ',' || *a == ' ')
            a++;
    }
    return cli_usage(cmd, "--layout %s: scheme %s has %s", want, r->scheme_name, allowed);
}

static int parse_block(q_request *r, const char *text)
{
    char *end;
    long long rows = 0, cols = strtoll(text, &end, 10);
    if (*end == 'x' || *end == 'X') {
        rows = cols;
        cols = strtoll(end + 1, &end, 10);
    }
    if (*end || cols <= 0 || rows < 0 || cols > ((long long)1 << 40) || rows > ((long long)1 << 40))
        return cli_usage("quantize", "--block %s: give ROWSxCOLS (fp8-block) or a block size",
                         text);
    r->p.block = cols;
    r->p.block_rows = rows;
    return CLI_OK;
}

int cmd_quantize(int argc, char **argv)
{
    q_request r;
    memset(&r, 0, sizeof r);
    dtcast_quant_params_init(&r.p);
    const char *variant = NULL, *scale_mode = NULL, *round = NULL, *block = NULL;
    int have_seed = 0;
    unsigned long seed = 0, threads = 0;
    cli_args a;
    const char *cmd = "quantize";
    cli_args_init(&a, cmd, argc, argv, options);
    for (;;) {
        int id = cli_args_next(&a);
        if (id == CLI_ARG_END)
            break;
        if (id == CLI_ARG_ERROR)
            return CLI_USAGE;
        switch (id) {
        case CLI_OPT_HELP:
            fputs(help, stdout);
            return CLI_OK;
        case CLI_ARG_POSITIONAL:
            if (cli_in_out(&a, &r.in, &r.out) != CLI_OK)
                return CLI_USAGE;
            break;
        case OPT_SCHEME: r.scheme_name = a.value; break;
        case OPT_VARIANT: variant = a.value; break;
        case OPT_SCALE_MODE: scale_mode = a.value; break;
        case CLI_OPT_ROUND: round = a.value; break;
        case OPT_BLOCK: block = a.value; break;
        case OPT_LAYOUT: {
            int i;
            if (cli_parse_choice(cmd, "--layout", a.value, layout_names, &i) != CLI_OK)
                return CLI_USAGE;
            r.layout_name = layout_names[i];
            break;
        }
        case OPT_SEED:
            if (cli_parse_uint(cmd, "--seed", a.value, (unsigned long)-1, &seed) != CLI_OK)
                return CLI_USAGE;
            have_seed = 1;
            break;
        case OPT_SELECT:
        case OPT_EXCLUDE: {
            dt_globs *g = id == OPT_SELECT ? &r.select : &r.exclude;
            if (g->n == DT_MAX_GLOBS)
                return cli_usage(cmd, "%s: at most %d patterns", a.spelled, DT_MAX_GLOBS);
            g->pattern[g->n++] = a.value;
            break;
        }
        case OPT_REPORT: r.report = 1; break;
        case OPT_QUIET: r.quiet = 1; break;
        case CLI_OPT_THREADS:
            if (cli_parse_uint(cmd, "--threads", a.value, 4096, &threads) != CLI_OK)
                return CLI_USAGE;
            break;
        default:
            return cli_usage(cmd, "unexpected option");
        }
    }
    if (!r.scheme_name)
        return cli_usage(cmd, "missing --scheme (fp8-block, mxfp4, nvfp4, ...)");
    dtcast_error e;
    memset(&e, 0, sizeof e);
    if (dtcast_quant_params_from_recipe(&r.p, r.scheme_name, &e) != DTCAST_OK)
        return cli_usage(cmd, "--scheme %s: %s", r.scheme_name, e.message);
    if (variant) {
        if (dtcast_variant_from_name(variant, &r.p.variant, &e) != DTCAST_OK)
            return cli_usage(cmd, "--variant %s: %s", variant, e.message);
        r.variant_given = 1;
    }
    if (scale_mode && dtcast_scale_mode_from_name(scale_mode, &r.p.scale_mode, &e) != DTCAST_OK)
        return cli_usage(cmd, "--scale-mode %s: %s", scale_mode, e.message);
    if (round && dtcast_round_from_name(round, &r.p.round, &e) != DTCAST_OK)
        return cli_usage(cmd, "--round %s: %s", round, e.message);
    if (have_seed && r.p.round != DTCAST_ROUND_STOCHASTIC)
        return cli_usage(cmd, "--seed goes with --round stochastic");
    r.p.seed = seed;
    r.p.threads = (unsigned)threads;
    /* The recipe's 128 x 128 tile is the hf variant's: another variant brings its own. */
    if (r.p.scheme == DTCAST_SCHEME_FP8_BLOCK && r.p.variant == DTCAST_VARIANT_DEEPSEEK_ACT)
        r.p.block = r.p.block_rows = 0;
    if (block && parse_block(&r, block) != CLI_OK)
        return CLI_USAGE;
    if (pick_layout(&r) != CLI_OK)
        return CLI_USAGE;
    if (!r.in)
        return cli_usage(cmd, "missing IN and OUT");
    if (!r.out)
        return cli_usage(cmd, "missing OUT");
    return run(&r);
}
