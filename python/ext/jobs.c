/* dtcast._core's file jobs (py_jobs.h): files/'s dt_cast_files, dt_quantize_checkpoint and
 * dt_dequantize_checkpoint run in this process with the GIL released, for dtcast.convert_file,
 * convert_checkpoint, quantize_checkpoint and dequantize_checkpoint (python/dtcast/files.py).
 *
 * Each takes (in, out, params, progress): paths as bytes, a dict of the request's fields
 * (checked by files.py, named by their Python keywords), and a callable or None. It returns
 * (error, report, warnings): error None or (status, message, file, tensor, offset, usage), the
 * report text ("" when not asked) and the warning lines.
 *
 * Progress: the job's hook runs on the job's threads without the GIL; at most five times a
 * second (and for the last block) it takes the GIL, checks for a signal (Ctrl-C) and calls
 * progress(done_bytes, total_bytes). An exception there cancels the job (the pipeline stops at
 * its next block and removes its temporary outputs) and is raised again once the job is over.
 * Warnings and report text are collected under a lock and handed back as strings. */
#include "py_jobs.h"

#include "files/cast.h"
#include "files/onnx_schema.h"
#include "files/gguf_job.h"
#include "files/quantize.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the hooks ------------------------------------------------------------------------------- */

typedef struct text_buf {
    char *data;
    size_t len, cap;
    int failed; /* out of memory: the rest dropped */
} text_buf;

static void text_add(text_buf *b, const char *text, size_t n, int newline)
{
    size_t need = b->len + n + (newline ? 1 : 0) + 1;
    if (b->failed)
        return;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < need)
            cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, text, n);
    b->len += n;
    if (newline)
        b->data[b->len++] = '\n';
    b->data[b->len] = 0;
}

typedef struct job_ctx {
    PyObject *progress;   /* callable or NULL */
    pthread_mutex_t lock; /* the fields below */
    double last_call;     /* monotonic seconds of the last call, or < 0 */
    uint64_t last_done;   /* of the last call */
    uint64_t total;       /* the job's total, as last reported */
    int stop;             /* the callable raised, or a signal came: cancel */
    PyObject *exc_type, *exc_value, *exc_tb;
    text_buf report, warnings;
} job_ctx;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define PROGRESS_INTERVAL 0.2 /* seconds between calls */

static int on_progress(void *vctx, uint64_t done, uint64_t total)
{
    job_ctx *c = vctx;
    pthread_mutex_lock(&c->lock);
    int stop = c->stop;
    double t = now_seconds();
    c->total = total;
    int last = done >= total;
    if (stop || done < c->last_done || (done == c->last_done && c->last_call >= 0) ||
        (!last && c->last_call >= 0 && t - c->last_call < PROGRESS_INTERVAL)) {
        pthread_mutex_unlock(&c->lock);
        return stop;
    }
    c->last_call = t;
    c->last_done = done;
    PyGILState_STATE g = PyGILState_Ensure();
    int failed = PyErr_CheckSignals() < 0;
    if (!failed && c->progress) {
        PyObject *r = PyObject_CallFunction(c->progress, "KK", (unsigned long long)done,
                                            (unsigned long long)total);
        failed = r == NULL;
        Py_XDECREF(r);
    }
    if (failed) {
        PyErr_Fetch(&c->exc_type, &c->exc_value, &c->exc_tb);
        c->stop = 1;
    }
    PyGILState_Release(g);
    pthread_mutex_unlock(&c->lock);
    return failed;
}

static void on_warning(void *vctx, const char *text)
{
    job_ctx *c = vctx;
    pthread_mutex_lock(&c->lock);
    text_add(&c->warnings, text, strlen(text), 1);
    pthread_mutex_unlock(&c->lock);
}

static void on_report(void *vctx, const char *text)
{
    job_ctx *c = vctx;
    pthread_mutex_lock(&c->lock);
    text_add(&c->report, text, strlen(text), 0);
    pthread_mutex_unlock(&c->lock);
}

static int ctx_init(job_ctx *c, PyObject *progress, dt_job_hooks *hooks)
{
    memset(c, 0, sizeof *c);
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        PyErr_SetString(PyExc_RuntimeError, "cannot create a mutex");
        return -1;
    }
    if (progress != Py_None) {
        if (!PyCallable_Check(progress)) {
            pthread_mutex_destroy(&c->lock);
            PyErr_SetString(PyExc_TypeError, "progress must be callable, True, or None");
            return -1;
        }
        c->progress = progress;
    }
    c->last_call = -1;
    hooks->progress = on_progress;
    hooks->progress_ctx = c;
    hooks->warn = on_warning;
    hooks->warn_ctx = c;
    hooks->report = on_report;
    hooks->report_ctx = c;
    return 0;
}

/* ---- progress for the other jobs run with the GIL released (dtcast.diff) -------------------- */

void *py_progress_begin(PyObject *progress)
{
    job_ctx *c = malloc(sizeof *c);
    dt_job_hooks hooks;
    if (!c)
        return PyErr_NoMemory(), NULL;
    if (ctx_init(c, progress, &hooks) < 0) {
        free(c);
        return NULL;
    }
    return c;
}

int py_progress_call(void *ctx, uint64_t done, uint64_t total)
{
    return on_progress(ctx, done, total);
}

int py_progress_end(void *ctx, int ok)
{
    job_ctx *c = ctx;
    int status = 0;
    pthread_mutex_destroy(&c->lock);
    if (c->exc_type) {
        PyErr_Restore(c->exc_type, c->exc_value, c->exc_tb);
        status = -1;
    } else if (ok && c->progress && c->last_call >= 0 && c->last_done != c->total) {
        PyObject *r = PyObject_CallFunction(c->progress, "KK", (unsigned long long)c->total,
                                            (unsigned long long)c->total);
        status = r ? 0 : -1;
        Py_XDECREF(r);
    }
    free(c->report.data); /* diff sends no warning or report: both stay empty */
    free(c->warnings.data);
    free(c);
    return status;
}

static PyObject *text_of(const char *s, size_t n)
{
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "surrogateescape");
}

/* The job's result as the tuple described above (NULL with the callable's exception). */
static PyObject *ctx_finish(job_ctx *c, dtcast_status st, const dt_io_error *err)
{
    PyObject *out = NULL, *error = NULL, *report = NULL, *warnings = NULL;
    pthread_mutex_destroy(&c->lock);
    if (c->exc_type) {
        PyErr_Restore(c->exc_type, c->exc_value, c->exc_tb);
        goto done;
    }
    if (c->report.failed || c->warnings.failed) {
        PyErr_NoMemory();
        goto done;
    }
    if (st == DTCAST_OK) {
        /* Done: the last call says so, whatever bytes the job counted (a job may count only
         * the tensors it converts against the whole input). */
        if (c->progress && c->last_call >= 0 && c->last_done != c->total) {
            PyObject *r = PyObject_CallFunction(c->progress, "KK", (unsigned long long)c->total,
                                                (unsigned long long)c->total);
            if (!r)
                goto done;
            Py_DECREF(r);
        }
        error = Py_NewRef(Py_None);
    } else {
        PyObject *msg = text_of(err->message, strlen(err->message));
        PyObject *file = err->file[0] ? text_of(err->file, strlen(err->file)) : Py_NewRef(Py_None);
        PyObject *tensor =
            err->tensor[0] ? text_of(err->tensor, strlen(err->tensor)) : Py_NewRef(Py_None);
        PyObject *offset = err->offset >= 0 ? PyLong_FromLongLong((long long)err->offset)
                                            : Py_NewRef(Py_None);
        if (msg && file && tensor && offset)
            error = Py_BuildValue("iOOOOi", (int)st, msg, file, tensor, offset, err->usage);
        Py_XDECREF(msg);
        Py_XDECREF(file);
        Py_XDECREF(tensor);
        Py_XDECREF(offset);
        if (!error)
            goto done;
    }
    report = text_of(c->report.data ? c->report.data : "", c->report.len);
    warnings = PyList_New(0);
    if (!report || !warnings)
        goto done;
    for (const char *p = c->warnings.data; p && *p;) {
        const char *nl = strchr(p, '\n');
        PyObject *line = text_of(p, (size_t)(nl - p));
        if (!line || PyList_Append(warnings, line) < 0) {
            Py_XDECREF(line);
            goto done;
        }
        Py_DECREF(line);
        p = nl + 1;
    }
    out = Py_BuildValue("OOO", error, report, warnings);
done:
    Py_XDECREF(error);
    Py_XDECREF(report);
    Py_XDECREF(warnings);
    free(c->report.data);
    free(c->warnings.data);
    return out;
}

/* ---- reading params -------------------------------------------------------------------------- */

/* params[key] as a long long (def when absent or None); -1 with an exception on a bad value. */
static int get_int(PyObject *params, const char *key, long long def, long long *v)
{
    PyObject *o = PyDict_GetItemString(params, key); /* borrowed */
    if (!o || o == Py_None) {
        *v = def;
        return 0;
    }
    *v = PyLong_AsLongLong(o);
    if (*v == -1 && PyErr_Occurred())
        return -1;
    return 0;
}

/* params[key] as a UTF-8 string kept alive by params (NULL when absent or None). */
static int get_str(PyObject *params, const char *key, const char **s)
{
    PyObject *o = PyDict_GetItemString(params, key);
    *s = NULL;
    if (!o || o == Py_None)
        return 0;
    if (PyBytes_Check(o)) {
        *s = PyBytes_AsString(o);
        return *s ? 0 : -1;
    }
    *s = PyUnicode_AsUTF8AndSize(o, NULL);
    return *s ? 0 : -1;
}

/* params[key]: a list of str into g (the strings kept alive by the list in params). */
static int get_globs(PyObject *params, const char *key, dt_globs *g)
{
    PyObject *o = PyDict_GetItemString(params, key);
    g->n = 0;
    if (!o || o == Py_None)
        return 0;
    if (!PyList_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a list of str", key);
        return -1;
    }
    Py_ssize_t n = PyList_Size(o);
    if (n > DT_MAX_GLOBS) {
        PyErr_Format(PyExc_ValueError, "%s: at most %d patterns", key, DT_MAX_GLOBS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *s = PyUnicode_AsUTF8AndSize(PyList_GetItem(o, i), NULL);
        if (!s)
            return -1;
        g->pattern[g->n++] = s;
    }
    return 0;
}

static int get_path(PyObject *o, const char **s)
{
    Py_ssize_t n;
    char *p;
    if (PyBytes_AsStringAndSize(o, &p, &n) < 0)
        return -1;
    if ((size_t)n != strlen(p)) {
        PyErr_SetString(PyExc_ValueError, "a path holds a NUL byte");
        return -1;
    }
    *s = p;
    return 0;
}

/* ---- cast ------------------------------------------------------------------------------------ */

PyObject *dtc_cast_files(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *pin, *pout, *params, *progress;
    if (!PyArg_ParseTuple(args, "SSO!O", &pin, &pout, &PyDict_Type, &params, &progress))
        return NULL;
    dt_cast_request q;
    memset(&q, 0, sizeof q);
    long long to, from, profile, opset, ovf, sat, iovf, threads, report, f6, raw_codes, index_only,
        watch, seed, external, graph, keep_io, runtime;
    const char *round_name;
    if (get_path(pin, &q.in) < 0 || get_path(pout, &q.out) < 0 ||
        get_int(params, "to", -1, &to) < 0 || get_int(params, "src_type", -1, &from) < 0 ||
        get_int(params, "profile", 0, &profile) < 0 ||
        get_int(params, "opset", DTCAST_ONNX_OPSET_MAX, &opset) < 0 ||
        get_int(params, "float_overflow", 0, &ovf) < 0 ||
        get_int(params, "saturate", 1, &sat) < 0 ||
        get_int(params, "int_overflow", 0, &iovf) < 0 ||
        get_int(params, "threads", 0, &threads) < 0 || get_int(params, "report", 0, &report) < 0 ||
        get_int(params, "float6_packed", 0, &f6) < 0 ||
        get_int(params, "raw_codes", 0, &raw_codes) < 0 ||
        get_int(params, "index_only", 0, &index_only) < 0 ||
        get_int(params, "watch", 0, &watch) < 0 || get_int(params, "seed", 0, &seed) < 0 ||
        get_int(params, "external_data", DT_EXTERNAL_AUTO, &external) < 0 ||
        get_str(params, "round", &round_name) < 0 || get_str(params, "shards", &q.shards) < 0 ||
        get_globs(params, "select", &q.select) < 0 || get_globs(params, "exclude", &q.exclude) < 0 ||
        get_int(params, "onnx_graph", 0, &graph) < 0 ||
        get_int(params, "keep_io_types", 0, &keep_io) < 0 ||
        get_int(params, "onnx_runtime", 0, &runtime) < 0 ||
        get_globs(params, "block_ops", &q.block_ops) < 0 ||
        get_globs(params, "block_nodes", &q.block_nodes) < 0 ||
        get_globs(params, "select_ops", &q.select_ops) < 0 ||
        get_globs(params, "exclude_ops", &q.exclude_ops) < 0)
        return NULL;
    if (threads < 0 || threads > 4096 || profile < 0 || profile > 4 || opset < 1 ||
        opset > DTCAST_ONNX_OPSET_MAX || external < DT_EXTERNAL_AUTO ||
        external > DT_EXTERNAL_NEVER || runtime < DT_ONNX_RUNTIME_ANY ||
        runtime > DT_ONNX_RUNTIME_ORT_CPU) {
        PyErr_SetString(PyExc_ValueError, "cast_files: a parameter out of range");
        return NULL;
    }
    q.in_kind = dt_file_kind_of(q.in);
    q.out_kind = DT_FILE_UNKNOWN;
    char why[512];
    if (q.in_kind == DT_FILE_UNKNOWN || (q.in_kind != DT_FILE_SAFETENSORS_INDEX &&
                                         (q.out_kind = dt_file_kind_of(q.out)) == DT_FILE_UNKNOWN)) {
        dt_io_error err = DT_IO_ERROR_INIT;
        const char *bad = q.in_kind == DT_FILE_UNKNOWN ? q.in : q.out;
        dt_io_fail(&err, DTCAST_ERR_INVALID_ARGUMENT, "%s",
                   dt_file_kind_refusal(bad, why, sizeof why));
        return Py_BuildValue("(iNNOOi)sN", (int)DTCAST_ERR_INVALID_ARGUMENT,
                             text_of(err.message, strlen(err.message)), text_of(bad, strlen(bad)),
                             Py_None, Py_None, 0, "", PyList_New(0));
    }
    q.to = to < 0 ? DTCAST_UNDEFINED : (dtcast_type)to;
    q.conversion.profile = (dt_profile)profile;
    q.conversion.opset = (int)opset;
    dtcast_options_init(&q.conversion.options);
    if (round_name && dtcast_round_from_name(round_name, &q.conversion.options.round, NULL) !=
                          DTCAST_OK) {
        PyErr_Format(PyExc_ValueError, "round: unknown mode %s", round_name);
        return NULL;
    }
    q.conversion.options.float_overflow =
        ovf ? DTCAST_FLOAT_OVERFLOW_SATURATE : DTCAST_FLOAT_OVERFLOW_IEEE;
    q.conversion.options.int_overflow = iovf ? DTCAST_INT_OVERFLOW_SATURATE : DTCAST_INT_OVERFLOW_WRAP;
    q.conversion.options.threads = (unsigned)threads;
    q.conversion.options.seed = (uint64_t)seed;
    q.conversion.saturate = sat;
    q.conversion.round_mode = NULL;
    q.conversion.cast_mode = DTCAST_CAST_NONE;
    q.input.from = from < 0 ? DTCAST_UNDEFINED : (dtcast_type)from;
    q.report = report != 0;
    q.watch = watch != 0;
    q.external_data = (dt_external)external;
    q.float6_packed = f6 != 0;
    q.index_only = index_only != 0;
    q.raw_codes = raw_codes != 0;
    q.onnx_graph = graph != 0;
    q.keep_io_types = keep_io != 0;
    q.onnx_runtime = (int)runtime;
    char label[32];
    dt_profile_label((dt_profile)profile, (int)opset, label, sizeof label);
    q.profile_label = label;
    q.to_flag = "to";
    job_ctx c;
    if (ctx_init(&c, progress, &q.hooks) < 0)
        return NULL;
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dt_cast_files(&q, &err);
    Py_END_ALLOW_THREADS
    return ctx_finish(&c, st, &err);
}

/* ---- quantize -------------------------------------------------------------------------------- */

/* The checkpoint layout of a scheme: the one asked for (NULL: the scheme's first), as `dtcast
 * quantize --layout` picks it; a usage error's text into why (returns -1). */
static int pick_layout(dt_quantize_request *r, int variant_given, char *why, size_t size)
{
    const char *allowed;
    const dtcast_quant_params *p = &r->p;
    switch (dt_quantize_pick_layout(&r->p, r->layout_name, variant_given, &r->layout,
                                    &r->layout_name, &allowed)) {
    case DT_LAYOUT_OK:
        return 0;
    case DT_LAYOUT_SINGLE_LEVEL:
        snprintf(why, size, "scheme %s: single-level NVFP4 has no checkpoint layout",
                 r->scheme_name);
        return -1;
    case DT_LAYOUT_VARIANT:
        snprintf(why, size, "layout %s stores %s global scale: give variant=%s",
                 r->layout == DT_QL_NVFP4_CT ? "ct" : "modelopt",
                 r->layout == DT_QL_NVFP4_CT ? "compressed-tensors' (2688/amax)"
                                             : "ModelOpt's (amax/2688)",
                 r->layout == DT_QL_NVFP4_CT ? "'ct'" : "'modelopt' or 'torchao'");
        return -1;
    case DT_LAYOUT_ELEMENT:
        snprintf(why, size, "scheme %s: no checkpoint layout holds %s codes", r->scheme_name,
                 dtcast_type_name(p->element));
        return -1;
    case DT_LAYOUT_SCHEME:
        snprintf(why, size, "scheme %s: unknown scheme", r->scheme_name);
        return -1;
    case DT_LAYOUT_NOT_OF_SCHEME:
        break;
    }
    snprintf(why, size, "layout %s: scheme %s has %s", r->layout_name, r->scheme_name, allowed);
    return -1;
}

/* A request refused before the job: the usage error tuple. */
static PyObject *usage_result(const char *why)
{
    return Py_BuildValue("(iNOOOi)sN", (int)DTCAST_ERR_INVALID_ARGUMENT, text_of(why, strlen(why)),
                         Py_None, Py_None, Py_None, 1, "", PyList_New(0));
}

PyObject *dtc_quantize_checkpoint(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *pin, *pout, *params, *progress;
    if (!PyArg_ParseTuple(args, "SSO!O", &pin, &pout, &PyDict_Type, &params, &progress))
        return NULL;
    dt_quantize_request q;
    memset(&q, 0, sizeof q);
    dtcast_quant_params_init(&q.p);
    const char *variant, *scale_mode, *round;
    long long seed, rows, cols, threads, report;
    if (get_path(pin, &q.in) < 0 || get_path(pout, &q.out) < 0 ||
        get_str(params, "scheme", &q.scheme_name) < 0 || get_str(params, "variant", &variant) < 0 ||
        get_str(params, "scale_mode", &scale_mode) < 0 || get_str(params, "round", &round) < 0 ||
        get_str(params, "layout", &q.layout_name) < 0 || get_int(params, "seed", -1, &seed) < 0 ||
        get_int(params, "block_rows", 0, &rows) < 0 || get_int(params, "block", 0, &cols) < 0 ||
        get_int(params, "threads", 0, &threads) < 0 || get_int(params, "report", 0, &report) < 0 ||
        get_globs(params, "select", &q.select) < 0 || get_globs(params, "exclude", &q.exclude) < 0)
        return NULL;
    if (!q.scheme_name) {
        PyErr_SetString(PyExc_ValueError, "quantize_checkpoint: no scheme");
        return NULL;
    }
    char why[1024];
    dtcast_error e;
    memset(&e, 0, sizeof e);
    if (dtcast_quant_params_from_recipe(&q.p, q.scheme_name, &e) != DTCAST_OK) {
        snprintf(why, sizeof why, "scheme %s: %s", q.scheme_name, e.message);
        return usage_result(why);
    }
    if (variant && dtcast_variant_from_name(variant, &q.p.variant, &e) != DTCAST_OK) {
        snprintf(why, sizeof why, "variant %s: %s", variant, e.message);
        return usage_result(why);
    }
    if (scale_mode && dtcast_scale_mode_from_name(scale_mode, &q.p.scale_mode, &e) != DTCAST_OK) {
        snprintf(why, sizeof why, "scale_mode %s: %s", scale_mode, e.message);
        return usage_result(why);
    }
    if (round && dtcast_round_from_name(round, &q.p.round, &e) != DTCAST_OK) {
        snprintf(why, sizeof why, "round %s: %s", round, e.message);
        return usage_result(why);
    }
    if (seed >= 0 && q.p.round != DTCAST_ROUND_STOCHASTIC)
        return usage_result("seed goes with round='stochastic'");
    q.p.seed = seed >= 0 ? (uint64_t)seed : 0;
    q.p.threads = (unsigned)threads;
    /* The recipe's 128 x 128 tile is the hf variant's: another variant brings its own. */
    if (q.p.scheme == DTCAST_SCHEME_FP8_BLOCK && q.p.variant == DTCAST_VARIANT_DEEPSEEK_ACT)
        q.p.block = q.p.block_rows = 0;
    if (cols > 0) {
        q.p.block = cols;
        q.p.block_rows = rows;
    }
    if (pick_layout(&q, variant != NULL, why, sizeof why) < 0)
        return usage_result(why);
    q.report = report != 0;
    job_ctx c;
    if (ctx_init(&c, progress, &q.hooks) < 0)
        return NULL;
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dt_quantize_checkpoint(&q, &err);
    Py_END_ALLOW_THREADS
    return ctx_finish(&c, st, &err);
}

/* ---- dequantize ------------------------------------------------------------------------------ */

PyObject *dtc_dequantize_checkpoint(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *pin, *pout, *params, *progress;
    if (!PyArg_ParseTuple(args, "SSO!O", &pin, &pout, &PyDict_Type, &params, &progress))
        return NULL;
    dt_dequantize_request q;
    memset(&q, 0, sizeof q);
    long long to, threads, report;
    if (get_path(pin, &q.in) < 0 || get_path(pout, &q.out) < 0 ||
        get_int(params, "to", DTCAST_BFLOAT16, &to) < 0 ||
        get_int(params, "threads", 0, &threads) < 0 || get_int(params, "report", 0, &report) < 0)
        return NULL;
    if (threads < 0 || threads > 4096) {
        PyErr_SetString(PyExc_ValueError, "threads: out of range");
        return NULL;
    }
    q.to = (dtcast_type)to;
    q.threads = (unsigned)threads;
    q.report = report != 0;
    job_ctx c;
    if (ctx_init(&c, progress, &q.hooks) < 0)
        return NULL;
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dt_dequantize_checkpoint(&q, &err);
    Py_END_ALLOW_THREADS
    return ctx_finish(&c, st, &err);
}

/* ---- convert-layout --------------------------------------------------------------------------- */

PyObject *dtc_convert_layout(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *pin, *pout, *params, *progress;
    if (!PyArg_ParseTuple(args, "SSO!O", &pin, &pout, &PyDict_Type, &params, &progress))
        return NULL;
    dt_relayout_request q;
    memset(&q, 0, sizeof q);
    long long to, report;
    if (get_path(pin, &q.in) < 0 || get_path(pout, &q.out) < 0 ||
        get_int(params, "to", 0, &to) < 0 || get_int(params, "report", 0, &report) < 0)
        return NULL;
    if (to < DT_RELAYOUT_DEEPSEEK_V4 || to > DT_RELAYOUT_LAST) {
        PyErr_SetString(PyExc_ValueError, "to: out of range");
        return NULL;
    }
    q.to = (dt_relayout)to;
    q.report = report != 0;
    job_ctx c;
    if (ctx_init(&c, progress, &q.hooks) < 0)
        return NULL;
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dt_relayout_checkpoint(&q, &err);
    Py_END_ALLOW_THREADS
    return ctx_finish(&c, st, &err);
}

/* ---- GGUF ------------------------------------------------------------------------------------- */

PyObject *dtc_gguf_dequantize(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *pin, *pout, *params, *progress;
    if (!PyArg_ParseTuple(args, "SSO!O", &pin, &pout, &PyDict_Type, &params, &progress))
        return NULL;
    dt_gguf_dequantize_request q;
    memset(&q, 0, sizeof q);
    long long to, threads, no_meta;
    if (get_path(pin, &q.in) < 0 || get_path(pout, &q.out) < 0 ||
        get_int(params, "to", DTCAST_BFLOAT16, &to) < 0 ||
        get_int(params, "threads", 0, &threads) < 0 ||
        get_int(params, "no_metadata", 0, &no_meta) < 0)
        return NULL;
    if (threads < 0 || threads > 4096) {
        PyErr_SetString(PyExc_ValueError, "threads: out of range");
        return NULL;
    }
    q.to = (dtcast_type)to;
    q.threads = (unsigned)threads;
    q.no_metadata = no_meta != 0;
    job_ctx c;
    if (ctx_init(&c, progress, &q.hooks) < 0)
        return NULL;
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dt_gguf_dequantize(&q, &err);
    Py_END_ALLOW_THREADS
    return ctx_finish(&c, st, &err);
}

/* params: type, threads, requantize, arch (str or None), rules [(glob, code)], kv [(key, type,
 * text)] (the strings borrowed from params, which outlives the call) */
PyObject *dtc_gguf_write(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *pin, *pout, *params, *progress;
    if (!PyArg_ParseTuple(args, "SSO!O", &pin, &pout, &PyDict_Type, &params, &progress))
        return NULL;
    dt_gguf_write_request q;
    memset(&q, 0, sizeof q);
    long long type, threads, requant;
    if (get_path(pin, &q.in) < 0 || get_path(pout, &q.out) < 0 ||
        get_int(params, "type", 8, &type) < 0 || get_int(params, "threads", 0, &threads) < 0 ||
        get_int(params, "requantize", 0, &requant) < 0 || get_str(params, "arch", &q.arch) < 0)
        return NULL;
    if (threads < 0 || threads > 4096) {
        PyErr_SetString(PyExc_ValueError, "threads: out of range");
        return NULL;
    }
    q.type = (int)type;
    q.threads = (unsigned)threads;
    q.requantize = requant != 0;
    PyObject *rules = PyDict_GetItemString(params, "rules"), *kv = PyDict_GetItemString(params, "kv");
    const Py_ssize_t nr = rules && PyList_Check(rules) ? PyList_Size(rules) : 0;
    const Py_ssize_t nk = kv && PyList_Check(kv) ? PyList_Size(kv) : 0;
    dt_gguf_rule *r = calloc((size_t)nr + 1, sizeof *r);
    dt_gguf_kv_arg *k = calloc((size_t)nk + 1, sizeof *k);
    if (!r || !k) {
        free(r);
        free(k);
        return PyErr_NoMemory();
    }
    int bad = 0;
    for (Py_ssize_t i = 0; i < nr && !bad; i++) {
        int code;
        if (!PyArg_ParseTuple(PyList_GetItem(rules, i), "si", &r[i].glob, &code))
            bad = 1;
        r[i].type = code;
    }
    for (Py_ssize_t i = 0; i < nk && !bad; i++) {
        unsigned int t;
        if (!PyArg_ParseTuple(PyList_GetItem(kv, i), "sIs", &k[i].key, &t, &k[i].text))
            bad = 1;
        k[i].type = t;
    }
    job_ctx c;
    if (bad || ctx_init(&c, progress, &q.hooks) < 0) {
        free(r);
        free(k);
        return NULL;
    }
    q.rules = r;
    q.nrules = (size_t)nr;
    q.kv = k;
    q.nkv = (size_t)nk;
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dt_gguf_write(&q, &err);
    Py_END_ALLOW_THREADS
    free(r);
    free(k);
    return ctx_finish(&c, st, &err);
}
