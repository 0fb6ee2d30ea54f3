/* dtcast dequantize: a quantized checkpoint (every layout of docs/cli.md, "Quantized
 * checkpoints", recognised by its tensor names) into a plain one. Streamed: the codes are read
 * from the mapped shards a few tile rows at a time, dequantized by the library on every thread
 * into one of two buffers while the writer thread (fileio/pipeline.c) writes the other, and the
 * pages read are released, so memory stays bounded whatever the checkpoint's size. */
#include "cli.h"
#include "fileio/pipeline.h"
#include "quant_files.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BYTES ((size_t)2 << 20) /* output bytes per chunk, about: still in cache when written */

enum { OPT_QUIET = CLI_OPT_COMMAND, OPT_REPORT };

static const cli_option options[] = {
    {"help", 'h', 0, CLI_OPT_HELP},
    {"to", 't', 1, CLI_OPT_TO},
    {"report", 0, 0, OPT_REPORT},
    {"threads", 'T', 1, CLI_OPT_THREADS},
    {"quiet", 'q', 0, OPT_QUIET},
    {NULL, 0, 0, 0},
};

static const char help[] =
    "usage: dtcast dequantize [--to TYPE] [--report] IN OUT\n"
    "\n"
    "Dequantizes a quantized checkpoint into a plain one. IN is a .safetensors file (OUT then\n"
    "a .safetensors file), a sharded checkpoint's *.safetensors.index.json or a model folder\n"
    "(OUT a folder). The layouts are recognised by their tensor names:\n"
    "  block FP8 (DeepSeek-V3/R1, HF fine-grained FP8)  X.weight + X.weight_scale_inv\n"
    "  MXFP4 (gpt-oss)                 X_blocks + X_scales\n"
    "  MX (dtcast)                     X.weight + X.weight_scale (F8_E8M0)\n"
    "  NVFP4 (ModelOpt)                X.weight + X.weight_scale + X.weight_scale_2\n"
    "  NVFP4 (compressed-tensors)      X.weight_packed + X.weight_scale + X.weight_global_scale\n"
    "  FP8/INT8 (compressed-tensors)   X.weight + X.weight_scale (F32/BF16/F16)\n"
    "  INT4 groups (dtcast)            X.weight_packed + X.weight_scale (F32/BF16/F16)\n"
    "Each becomes one tensor X (X.weight) of TYPE; its activation scales (X.input_scale,\n"
    "X.input_global_scale) are dropped; every other tensor is copied as it is. The index is\n"
    "rewritten (weight_map, total_size), quantization_config is removed from config.json,\n"
    "hf_quant_config.json is dropped and the folder's other files are copied.\n"
    "\n"
    "Options:\n"
    "  -t, --to TYPE     bfloat16 (default), float16 or float32\n"
    "      --report      per quantized tensor, on stderr: its layout and its scales' range\n"
    "  -T, --threads N   threads (default: one per CPU)\n"
    "  -q, --quiet       no progress line\n"
    "  -h, --help        show this help\n"
    "\n"
    "Examples:\n"
    "  dtcast dequantize DeepSeek-V3/ DeepSeek-V3-bf16/\n"
    "  dtcast dequantize --to float32 gpt-oss-20b/original/model.safetensors experts.safetensors\n";

typedef struct dq_request {
    const char *in, *out;
    dtcast_type to;
    int report, quiet;
    unsigned threads;
} dq_request;

/* ---- one quantized tensor, streamed --------------------------------------------------------- */

typedef struct dq_buffers {
    uint8_t *out[2];
    size_t out_size;
    uint8_t *f6;        /* float6 codes one per byte (rows whose length is not a multiple of 4) */
    size_t f6_size;
    uint8_t *in;        /* the chunk's codes, read from the file */
    size_t in_size;
} dq_buffers;

static int grow(uint8_t **buf, size_t *size, size_t need)
{
    if (*size >= need)
        return 1;
    uint8_t *p = realloc(*buf, need);
    if (!p)
        return 0;
    *buf = p;
    *size = need;
    return 1;
}

typedef struct dq_job {
    const dq_request *r;
    qf_ckpt *c;
    dq_buffers *bufs;
    dt_progress *progress;
} dq_job;

static dtcast_type scale_type_of(const dt_qgroup *g, dtcast_type file_type)
{
    switch (g->layout) {
    case DT_QL_MXFP4_GPTOSS:
    case DT_QL_MX:
        return DTCAST_FLOAT8E8M0;
    default:
        return file_type;
    }
}

static void params_of(const dt_qgroup *g, const dq_request *r, dtcast_quant_params *p)
{
    dtcast_quant_params_init(p);
    p->threads = r->threads;
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
    case DT_QL_ABSMAX:
    case DT_QL_INT4_GROUP:
        p->scheme = DTCAST_SCHEME_ABSMAX;
        p->variant = DTCAST_VARIANT_CT;
        p->block = g->block;
        p->per_tensor = g->per_tensor != 0;
        break;
    }
}

/* --report: the scales' range. */
static void report_scales(const dq_job *j, const dt_qgroup *g, const uint8_t *scales,
                          dtcast_type type, size_t count)
{
    float *f = malloc((count ? count : 1) * sizeof *f);
    if (!f)
        return;
    dtcast_error e;
    memset(&e, 0, sizeof e);
    if (dtcast_convert(f, DTCAST_FLOAT32, scales, type, count, NULL, &e) != DTCAST_OK) {
        free(f);
        return;
    }
    double lo = INFINITY, hi = -INFINITY;
    size_t zeros = 0, bad = 0;
    for (size_t i = 0; i < count; i++) {
        if (!isfinite(f[i])) {
            bad++;
            continue;
        }
        if (f[i] == 0)
            zeros++;
        if (f[i] < lo)
            lo = f[i];
        if (f[i] > hi)
            hi = f[i];
    }
    free(f);
    char name[1024], shape[160], tn[32];
    cli_escape(name, sizeof name, g->name);
    cli_format_shape(shape, sizeof shape, g->ndim, g->dims);
    dt_progress_clear(j->progress);
    fprintf(stderr, "%s: %s %s, %zu %s scales", name, dt_qlayout_name(g->layout), shape, count,
            cli_type_label(type, tn, sizeof tn));
    if (count > bad)
        fprintf(stderr, " in [%.6g, %.6g]", lo, hi);
    fprintf(stderr, ", %zu zero, %zu not finite", zeros, bad);
    if (g->global != DT_QT_NONE) {
        float gs;
        memcpy(&gs, qf_data(j->c, g->global), 4);
        fprintf(stderr, ", global %s %.9g",
                g->layout == DT_QL_NVFP4_CT ? "(divisor)" : "(multiplier)", (double)gs);
    }
    fprintf(stderr, "\n");
}

/* Codes bytes of `rows` rows of k elements as the file holds them. */
static uint64_t code_row_bytes(const dt_qgroup *g, dtcast_type file_type, int64_t k)
{
    if (g->element == DTCAST_FLOAT4E2M1 || g->element == DTCAST_INT4)
        return (uint64_t)(k + 1) / 2;
    (void)file_type;
    return (uint64_t)k; /* float6: handled by the caller */
}

static int dequantize_group(dq_job *j, const dt_qgroup *g, dt_outfile *out)
{
    const dq_request *r = j->r;
    qf_ckpt *c = j->c;
    const dt_qt *ct = &c->t[g->codes], *stt = &c->t[g->scales];
    char what[1024];
    cli_escape(what, sizeof what, c->t[g->codes].name);
    dtcast_quant_params p;
    params_of(g, r, &p);
    int64_t k = g->dims[g->ndim - 1];
    uint64_t rows = 1;
    for (int i = 0; i < g->ndim - 1; i++)
        rows *= (uint64_t)g->dims[i];
    /* The tile rows of block FP8 run within each matrix of the last two axes. */
    uint64_t n = g->layout == DT_QL_FP8_BLOCK ? (uint64_t)g->dims[g->ndim - 2] : rows;
    uint64_t mats = g->layout == DT_QL_FP8_BLOCK && n ? rows / n : 1;
    const int out_bytes = (int)(dtcast_type_bits(r->to) / 8);
    const uint64_t row_out = (uint64_t)k * (uint64_t)out_bytes;
    uint64_t step = row_out ? CHUNK_BYTES / row_out : rows;
    if (step == 0)
        step = 1;
    if (g->layout == DT_QL_FP8_BLOCK)
        step = step < (uint64_t)g->block_rows ? (uint64_t)g->block_rows
                                               : step / (uint64_t)g->block_rows * (uint64_t)g->block_rows;
    const int f6 = dtcast_type_bits(g->element) == 6;
    if (f6)
        step = (step + 3) / 4 * 4; /* whole groups of four in the packed stream */
    /* The scales are small: read whole (aligned). The global scale too. */
    uint8_t *scales = qf_read(c, g->scales);
    if (!scales)
        return CLI_FAIL;
    const dtcast_type stype = scale_type_of(g, stt->type);
    const uint64_t scount = c->at[g->scales].st->count;
    if (r->report)
        report_scales(j, g, scales, stype, (size_t)scount);
    float global = 0;
    if (g->global != DT_QT_NONE)
        memcpy(&global, qf_data(c, g->global), 4);
    const uint64_t srow = scount / (g->layout == DT_QL_FP8_BLOCK
                                        ? mats * (uint64_t)((n + (uint64_t)g->block_rows - 1) /
                                                            (uint64_t)g->block_rows)
                                        : (g->per_tensor ? 1 : (rows ? rows : 1)));
    const uint64_t sbytes = (uint64_t)dtcast_type_bits(stype) / 8;
    uint64_t need = step * row_out;
    dq_buffers *b = j->bufs;
    int status = CLI_OK;
    size_t dummy = b->out_size;
    if (!grow(&b->out[0], &dummy, need) || !grow(&b->out[1], &b->out_size, need))
        status = cli_fail("out of memory for %llu-byte buffers", (unsigned long long)need);
    if (status == CLI_OK && f6 && k % 4 && !grow(&b->f6, &b->f6_size, step * (uint64_t)k))
        status = cli_fail("out of memory");
    dt_writer *w = status == CLI_OK ? dt_writer_start(out) : NULL;
    dt_io_error err = {""};
    const qf_tensor *cat = &c->at[g->codes];
    int which = 0;
    for (uint64_t m = 0; status == CLI_OK && m < mats; m++) {
        for (uint64_t r0 = 0; status == CLI_OK && r0 < n; r0 += step) {
            uint64_t nr = n - r0 < step ? n - r0 : step;
            uint64_t row = m * n + r0; /* over all rows */
            /* Codes: where these rows start in the file. */
            uint64_t cat_at, clen;
            const uint8_t *codes_ptr;
            if (f6) {
                uint64_t first = row * (uint64_t)k, cnt = nr * (uint64_t)k;
                cat_at = first / 4 * 3;
                clen = (cnt * 6 + 7) / 8;
            } else {
                uint64_t rb = code_row_bytes(g, ct->type, k);
                cat_at = row * rb;
                clen = nr * rb;
            }
            /* Read, not mapped: a read costs the kernel less than faulting the pages in. */
            if (!grow(&b->in, &b->in_size, clen ? clen : 1) ||
                dt_infile_read(&c->shards[cat->shard].file, cat->at + cat_at, b->in, (size_t)clen,
                               &err) != DTCAST_OK) {
                status = b->in ? cli_fail("%s", err.message) : cli_fail("out of memory");
                break;
            }
            codes_ptr = b->in;
            dtcast_tensor codes = {(void *)codes_ptr, (size_t)clen, g->element, 2,
                                   {(int64_t)nr, k}};
            if (f6 && k % 4 == 0) {
                p.float6_packed = true;
            } else if (f6) {
                dt_st_f6_from_bytes(b->f6, codes_ptr, (size_t)(nr * (uint64_t)k));
                codes.data = b->f6;
                codes.bytes = (size_t)(nr * (uint64_t)k);
            }
            dtcast_tensor sc;
            memset(&sc, 0, sizeof sc);
            sc.type = stype;
            if (g->layout == DT_QL_FP8_BLOCK) {
                uint64_t br = (uint64_t)g->block_rows, trs = (n + br - 1) / br;
                uint64_t t0 = m * trs + r0 / br, tn = (nr + br - 1) / br;
                sc.data = scales + t0 * srow * sbytes;
                sc.bytes = (size_t)(tn * srow * sbytes);
                sc.ndim = 2;
                sc.shape[0] = (int64_t)tn;
                sc.shape[1] = (int64_t)srow;
            } else if (g->per_tensor) {
                sc.data = scales;
                sc.bytes = (size_t)sbytes;
                sc.ndim = 1;
                sc.shape[0] = 1;
            } else {
                sc.data = scales + row * srow * sbytes;
                sc.bytes = (size_t)(nr * srow * sbytes);
                sc.ndim = 2;
                sc.shape[0] = (int64_t)nr;
                sc.shape[1] = (int64_t)srow;
            }
            dtcast_tensor gs = {&global, 4, DTCAST_FLOAT32, 1, {1}};
            dtcast_tensor y;
            memset(&y, 0, sizeof y);
            y.data = b->out[which];
            y.bytes = (size_t)(nr * row_out);
            y.type = r->to;
            dtcast_error e;
            memset(&e, 0, sizeof e);
            if (dtcast_dequantize(&y, &codes, &sc, g->global != DT_QT_NONE ? &gs : NULL, &p,
                                  &e) != DTCAST_OK) {
                status = cli_fail("%s: tensor '%s' (%s): %s", c->shards[cat->shard].in_path, what,
                                  dt_qlayout_name(g->layout), e.message);
                break;
            }
            dt_progress_add(j->progress, clen);
            dtcast_status st = w ? dt_writer_submit(w, y.data, y.bytes, &err)
                                 : dt_outfile_write(out, y.data, y.bytes, &err);
            if (st != DTCAST_OK)
                status = cli_fail("%s", err.message);
            which ^= w ? 1 : 0;
        }
    }
    if (w) {
        if (dt_writer_wait(w, &err) != DTCAST_OK && status == CLI_OK)
            status = cli_fail("%s", err.message);
        dt_writer_stop(w);
    }
    free(scales);
    return status;
}

/* ---- the checkpoint ----------------------------------------------------------------------- */

typedef struct out_ref {
    const char *name;
    size_t tensor; /* the plain tensor, or the group's codes */
} out_ref;

static int by_ref_name(const void *a, const void *b)
{
    return strcmp(((const out_ref *)a)->name, ((const out_ref *)b)->name);
}

static int write_shard(dq_job *j, const dt_qplan *plan, size_t s, uint64_t *tensor_bytes)
{
    qf_ckpt *c = j->c;
    qf_shard *sh = &c->shards[s];
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        n += c->at[i].shard == s && plan->role[i] != DT_QR_PART;
    dt_st_tensor *e = calloc(n ? n : 1, sizeof *e);
    out_ref *refs = calloc(n ? n : 1, sizeof *refs);
    if (!e || !refs) {
        free(e);
        free(refs);
        return cli_fail("out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->at[i].shard != s || plan->role[i] == DT_QR_PART)
            continue;
        if (plan->role[i] == DT_QR_CODES) {
            const dt_qgroup *g = &plan->groups[plan->group[i]];
            e[k].name = g->name;
            e[k].type = j->r->to;
            e[k].ndim = g->ndim;
            memcpy(e[k].dims, g->dims, (size_t)g->ndim * sizeof g->dims[0]);
        } else {
            e[k].name = (char *)c->t[i].name;
            e[k].type = c->t[i].type;
            e[k].ndim = c->t[i].ndim;
            memcpy(e[k].dims, c->t[i].dims, (size_t)c->t[i].ndim * sizeof c->t[i].dims[0]);
        }
        refs[k] = (out_ref){e[k].name, i};
        k++;
    }
    qsort(refs, n, sizeof *refs, by_ref_name);
    int status = CLI_OK;
    for (size_t i = 1; i < n; i++)
        if (strcmp(refs[i - 1].name, refs[i].name) == 0)
            status = cli_fail("%s: two output tensors would be named '%s'", sh->in_path,
                              refs[i].name);
    dt_io_error err = {""};
    uint8_t *prefix = NULL;
    size_t prefix_len = 0;
    if (status == CLI_OK && dt_st_build(e, n, sh->h.has_meta, sh->h.meta, sh->h.nmeta, &prefix,
                                        &prefix_len, &err) != DTCAST_OK)
        status = cli_fail("%s: %s", sh->out_path, err.message);
    if (status == CLI_OK && (dt_outfile_open(&sh->out, sh->out_path, &err) != DTCAST_OK ||
                             dt_outfile_write(&sh->out, prefix, prefix_len, &err) != DTCAST_OK))
        status = cli_fail("%s", err.message);
    free(prefix);
    dt_stream_buffers copy_bufs;
    memset(&copy_bufs, 0, sizeof copy_bufs);
    for (size_t i = 0; status == CLI_OK && i < n; i++) {
        out_ref key = {e[i].name, 0};
        const out_ref *ref = bsearch(&key, refs, n, sizeof *refs, by_ref_name);
        size_t t = ref->tensor;
        *tensor_bytes += e[i].end - e[i].begin;
        if (plan->role[t] == DT_QR_CODES) {
            status = dequantize_group(j, &plan->groups[plan->group[t]], &sh->out);
        } else if (dt_stream_copy(&sh->file, c->at[t].at, c->at[t].bytes, &sh->out, &copy_bufs,
                                  j->progress, &err) != DTCAST_OK) {
            status = cli_fail("%s: tensor '%s': %s", sh->in_path, c->t[t].name, err.message);
        } else {
            qf_release(c, s, c->at[t].at, c->at[t].bytes);
        }
    }
    dt_stream_buffers_free(&copy_bufs);
    free(e);
    free(refs);
    return status;
}

/* The new weight_map: plain tensors as they were, a group under its new name in its codes'
 * shard, the scales gone. */
static int write_index(qf_ckpt *c, const dt_qplan *plan, uint64_t total_size)
{
    if (!c->has_index)
        return CLI_OK;
    dt_st_index_entry *e = calloc(c->ix.nentries ? c->ix.nentries : 1, sizeof *e);
    if (!e)
        return cli_fail("out of memory");
    /* Tensor index by name, to find each index entry's role. */
    out_ref *refs = calloc(c->n ? c->n : 1, sizeof *refs);
    if (!refs) {
        free(e);
        return cli_fail("out of memory");
    }
    for (size_t i = 0; i < c->n; i++)
        refs[i] = (out_ref){c->t[i].name, i};
    qsort(refs, c->n, sizeof *refs, by_ref_name);
    size_t k = 0;
    int status = CLI_OK;
    for (size_t i = 0; i < c->ix.nentries; i++) {
        out_ref key = {c->ix.entries[i].name, 0};
        const out_ref *ref = bsearch(&key, refs, c->n, sizeof *refs, by_ref_name);
        if (!ref) {
            status = cli_fail("%s: the index names tensor '%s', which no shard holds",
                              c->index_name, key.name);
            break;
        }
        if (c->ix.shards[c->ix.entries[i].shard] != c->shards[c->at[ref->tensor].shard].name &&
            strcmp(c->ix.shards[c->ix.entries[i].shard], c->shards[c->at[ref->tensor].shard].name)) {
            status = cli_fail("%s: the index puts tensor '%s' in %s, but it is in %s",
                              c->index_name, key.name, c->ix.shards[c->ix.entries[i].shard],
                              c->shards[c->at[ref->tensor].shard].name);
            break;
        }
        if (plan->role[ref->tensor] == DT_QR_PART)
            continue;
        e[k] = c->ix.entries[i];
        if (plan->role[ref->tensor] == DT_QR_CODES)
            e[k].name = plan->groups[plan->group[ref->tensor]].name;
        k++;
    }
    if (status == CLI_OK)
        status = qf_write_index(c, e, k, total_size);
    free(refs);
    free(e);
    return status;
}

static int run(const dq_request *r)
{
    qf_ckpt c;
    dt_qplan plan;
    memset(&plan, 0, sizeof plan);
    int status = qf_open(&c, "dequantize", r->in, r->out);
    dt_io_error err = {""};
    if (status == CLI_OK && dt_qplan_make(c.t, c.n, &plan, &err) != DTCAST_OK)
        status = cli_fail("%s: %s", r->in, err.message);
    if (status == CLI_OK && plan.ngroups == 0)
        cli_warn("%s: no quantized tensor found; the tensors are copied as they are", r->in);
    if (status == CLI_OK)
        status = qf_make_out_dir(&c);
    dt_progress progress;
    dt_progress_init(&progress, qf_input_bytes(&c), !r->quiet);
    dq_buffers bufs;
    memset(&bufs, 0, sizeof bufs);
    /* The writer thread is busy as long as the computing ones (writing 2 bytes of bfloat16
     * per byte read costs the kernel about what dequantizing costs us): one CPU is left to it. */
    dq_request req = *r;
    if (req.threads == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        req.threads = cpus > 2 ? (unsigned)(cpus - 1) : 1;
    }
    dq_job j = {&req, &c, &bufs, &progress};
    uint64_t total = 0;
    for (size_t s = 0; status == CLI_OK && s < c.nshards; s++)
        status = write_shard(&j, &plan, s, &total);
    dt_progress_clear(&progress);
    if (status == CLI_OK)
        status = write_index(&c, &plan, total);
    if (status == CLI_OK)
        status = qf_write_extras(&c, NULL, 1);
    if (status == CLI_OK)
        status = qf_commit(&c);
    free(bufs.out[0]);
    free(bufs.out[1]);
    free(bufs.f6);
    free(bufs.in);
    dt_qplan_free(&plan);
    qf_close(&c);
    return status;
}

int cmd_dequantize(int argc, char **argv)
{
    dq_request r;
    memset(&r, 0, sizeof r);
    r.to = DTCAST_BFLOAT16;
    cli_args a;
    const char *cmd = "dequantize";
    cli_args_init(&a, cmd, argc, argv, options);
    for (;;) {
        int id = cli_args_next(&a);
        if (id == CLI_ARG_END)
            break;
        if (id == CLI_ARG_ERROR)
            return CLI_USAGE;
        unsigned long v;
        switch (id) {
        case CLI_OPT_HELP:
            fputs(help, stdout);
            return CLI_OK;
        case CLI_ARG_POSITIONAL:
            if (!r.in)
                r.in = a.value;
            else if (!r.out)
                r.out = a.value;
            else
                return cli_usage(cmd, "unexpected argument '%s' (only IN and OUT)", a.value);
            break;
        case CLI_OPT_TO:
            if (cli_parse_type(cmd, "--to", a.value, &r.to) != CLI_OK)
                return CLI_USAGE;
            if (r.to != DTCAST_BFLOAT16 && r.to != DTCAST_FLOAT16 && r.to != DTCAST_FLOAT32)
                return cli_usage(cmd, "--to %s: dequantize writes bfloat16, float16 or float32",
                                 a.value);
            break;
        case OPT_REPORT:
            r.report = 1;
            break;
        case OPT_QUIET:
            r.quiet = 1;
            break;
        case CLI_OPT_THREADS:
            if (cli_parse_uint(cmd, "--threads", a.value, 4096, &v) != CLI_OK)
                return CLI_USAGE;
            r.threads = (unsigned)v;
            break;
        default:
            return cli_usage(cmd, "unexpected option");
        }
    }
    if (!r.in)
        return cli_usage(cmd, "missing IN and OUT");
    if (!r.out)
        return cli_usage(cmd, "missing OUT");
    return run(&r);
}
