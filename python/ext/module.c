/*
 * dtcast._core: the C library seen from Python. Thin on purpose: Python (dtcast/__init__.py)
 * decides types, shapes and output arrays; this file moves bytes between buffers through
 * dtcast_convert with the GIL released, and turns a dtcast_status into dtcast.Error.
 *
 * Written against the limited API of Python 3.11 (one abi3 module for every later Python):
 * buffers come in through PyObject_GetBuffer, which the limited API has since 3.11.
 *
 * Layouts. The library packs sub-byte types as ONNX does (int4 two per byte, uint1 and int1
 * eight per byte, ...); ml_dtypes stores them one element per byte, the code in the low bits. A
 * conversion with such a side runs in blocks of DTC_BLOCK elements: pack the source block (or
 * convert into a packed block), then unpack, so the temporary stays in cache. The blocks are shared among the
 * library's threads (dt_parallel_for, as the options' threads ask), each thread with its own
 * temporaries; 4-bit codes are packed and unpacked eight at a time in a 64-bit word.
 */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "dtcast.h"
#include "files/diff.h"
#include "files/report.h"
#include "parallel.h"
#include "onnx_qdq.h"
#include "py_ggml.h"
#include "py_quant.h"
#include "py_inspect.h"
#include "py_jobs.h"

#include <pthread.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Options travel from Python as a tuple (round, float_overflow, int_overflow, threads, flags
 * [, seed]): seed is DTCAST_ROUND_STOCHASTIC's (0 when absent). */
enum {
    OPT_DISCARD_IMAG = 1,
    OPT_STRING_BOOL_NUMERIC = 2,
    OPT_FLOAT4_NAN_MAX = 4,
    OPT_VIA_FLOAT32 = 8,
    OPT_FLOAT6_PACKED = 16,
    OPT_STRING_ORT = 32
};
/* Layout flags of convert(): which side holds sub-byte elements one per byte. */
enum { LAYOUT_SRC_BYTES = 1, LAYOUT_DST_BYTES = 2 };

#define DTC_BLOCK ((size_t)1 << 18)

static PyObject *error_class; /* dtcast.Error, set by _set_error_class at import */

/* Raises dtcast.Error(message, status, index). */
static PyObject *raise_error(const dtcast_error *e)
{
    PyObject *index = e->index == (size_t)-1 ? Py_NewRef(Py_None) : PyLong_FromSize_t(e->index);
    if (!index)
        return NULL;
    PyObject *cls = error_class ? error_class : PyExc_ValueError;
    PyObject *exc = PyObject_CallFunction(cls, "siO", e->message, (int)e->status, index);
    Py_DECREF(index);
    if (exc) {
        PyErr_SetObject(cls, exc);
        Py_DECREF(exc);
    }
    return NULL;
}

PyObject *dtc_raise_error(const dtcast_error *e) { return raise_error(e); }

static PyObject *raise_status(dtcast_status status, const char *message)
{
    dtcast_error e;
    e.status = status;
    e.index = (size_t)-1;
    snprintf(e.message, sizeof e.message, "%s", message);
    return raise_error(&e);
}

static PyObject *set_error_class(PyObject *self, PyObject *cls)
{
    (void)self;
    PyObject *old = error_class;
    error_class = Py_NewRef(cls);
    Py_XDECREF(old);
    Py_RETURN_NONE;
}

static int parse_options(PyObject *tuple, dtcast_options *o)
{
    int round, fo, io;
    unsigned threads;
    unsigned long flags;
    unsigned long long seed = 0;
    if (!PyArg_ParseTuple(tuple, "iiiIk|K:options", &round, &fo, &io, &threads, &flags, &seed))
        return -1;
    dtcast_options_init(o);
    o->round = (dtcast_round)round;
    o->float_overflow = (dtcast_float_overflow)fo;
    o->int_overflow = (dtcast_int_overflow)io;
    o->threads = threads;
    o->discard_imaginary = flags & OPT_DISCARD_IMAG;
    o->string_to_bool_numeric = flags & OPT_STRING_BOOL_NUMERIC;
    o->float4_nan_as_max = flags & OPT_FLOAT4_NAN_MAX;
    o->via_float32 = flags & OPT_VIA_FLOAT32;
    o->float6_packed = flags & OPT_FLOAT6_PACKED;
    o->string_style = (flags & OPT_STRING_ORT) ? DTCAST_STRING_ORT : DTCAST_STRING_PYTHON;
    o->seed = (uint64_t)seed;
    return 0;
}

static PyObject *options_tuple(const dtcast_options *o)
{
    unsigned long flags = (o->discard_imaginary ? OPT_DISCARD_IMAG : 0) |
                          (o->string_to_bool_numeric ? OPT_STRING_BOOL_NUMERIC : 0) |
                          (o->float4_nan_as_max ? OPT_FLOAT4_NAN_MAX : 0) |
                          (o->via_float32 ? OPT_VIA_FLOAT32 : 0) |
                          (o->float6_packed ? OPT_FLOAT6_PACKED : 0) |
                          (o->string_style == DTCAST_STRING_ORT ? OPT_STRING_ORT : 0);
    return Py_BuildValue("(iiiIkK)", (int)o->round, (int)o->float_overflow, (int)o->int_overflow,
                         o->threads, flags, (unsigned long long)o->seed);
}

/* ---- sub-byte layouts ------------------------------------------------------------------------ */

/* Bits of one element as the library stores it, when that is under 8 (else 0). float6 counts
 * only when packed four in three bytes. */
static int sub_bits(dtcast_type t, const dtcast_options *o)
{
    if ((t == DTCAST_FLOAT6E2M3FN || t == DTCAST_FLOAT6E3M2FN))
        return o->float6_packed ? 6 : 0;
    int bits = dtcast_type_bits(t);
    return bits > 0 && bits < 8 ? bits : 0;
}

/* count codes, one per byte (low bits), into the packed bit stream (element i at bit i*bits). */
static void pack_bits(uint8_t *dst, const uint8_t *src, size_t count, int bits)
{
    const unsigned mask = (1u << bits) - 1;
    if (bits == 6) {
        size_t i = 0, o = 0;
        for (; i + 4 <= count; i += 4, o += 3) {
            unsigned e0 = src[i] & mask, e1 = src[i + 1] & mask, e2 = src[i + 2] & mask,
                     e3 = src[i + 3] & mask;
            dst[o] = (uint8_t)(e0 | e1 << 6);
            dst[o + 1] = (uint8_t)(e1 >> 2 | e2 << 4);
            dst[o + 2] = (uint8_t)(e2 >> 4 | e3 << 2);
        }
        uint32_t acc = 0;
        for (size_t k = 0; i + k < count; k++)
            acc |= (uint32_t)(src[i + k] & mask) << (6 * k);
        for (size_t k = 0; k * 8 < (count - i) * 6; k++)
            dst[o + k] = (uint8_t)(acc >> (8 * k));
        return;
    }
    const int per = 8 / bits;
    size_t full = count / (size_t)per;
    size_t b = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (bits == 4) /* eight codes (bytes b0..b7) -> four bytes b0 | b1 << 4, ... */
        for (; b + 4 <= full; b += 4) {
            uint64_t t;
            memcpy(&t, src + 2 * b, 8);
            t &= 0x0F0F0F0F0F0F0F0Full;
            t = (t | t >> 4) & 0x00FF00FF00FF00FFull;
            t = (t | t >> 8) & 0x0000FFFF0000FFFFull;
            uint32_t o = (uint32_t)(t | t >> 16);
            memcpy(dst + b, &o, 4);
        }
#endif
    for (; b < full; b++) {
        unsigned byte = 0;
        for (int k = 0; k < per; k++)
            byte |= (src[b * per + k] & mask) << (k * bits);
        dst[b] = (uint8_t)byte;
    }
    if (count % per) {
        unsigned byte = 0;
        for (size_t k = 0; full * per + k < count; k++)
            byte |= (src[full * per + k] & mask) << (k * bits);
        dst[full] = (uint8_t)byte;
    }
}

/* The packed bit stream into count codes, one per byte. */
static void unpack_bits(uint8_t *dst, const uint8_t *src, size_t count, int bits)
{
    const unsigned mask = (1u << bits) - 1;
    if (bits == 6) {
        for (size_t i = 0; i < count; i++) {
            size_t bit = 6 * i;
            unsigned v = src[bit / 8] >> (bit % 8);
            if (bit % 8 > 2)
                v |= (unsigned)src[bit / 8 + 1] << (8 - bit % 8);
            dst[i] = (uint8_t)(v & mask);
        }
        return;
    }
    const int per = 8 / bits;
    size_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (bits == 4) /* four bytes -> eight codes: low nibble first */
        for (; i + 8 <= count; i += 8) {
            uint32_t w;
            memcpy(&w, src + i / 2, 4);
            uint64_t t = w;
            t = (t | t << 16) & 0x0000FFFF0000FFFFull;
            t = (t | t << 8) & 0x00FF00FF00FF00FFull;
            t = (t | t << 4) & 0x0F0F0F0F0F0F0F0Full;
            memcpy(dst + i, &t, 8);
        }
#endif
    for (; i < count; i++)
        dst[i] = (uint8_t)((src[i / per] >> ((i % per) * bits)) & mask);
}

/* ---- convert ---------------------------------------------------------------------------------- */

typedef struct job {
    uint8_t *dst;
    dtcast_type dst_type;
    const uint8_t *src;
    dtcast_type src_type;
    size_t count;
    dtcast_options opts;
    int src_bytes, dst_bytes; /* sub-byte side stored one element per byte: its bits, else 0 */
    dt_report *report;        /* optional */
    dtcast_error error;
} job;

/* Bytes that count elements take in the library's layout; count a multiple of 8. */
static size_t lib_bytes(dtcast_type t, size_t count, const dtcast_options *o)
{
    size_t n = 0;
    dtcast_storage_size_opts(t, count, o, &n, NULL);
    return n;
}

/* The blocks of one chunk [begin, end) of a job with a sub-byte side one per byte, on one
 * thread: its own temporaries, the library on this thread (threads = 1). */
typedef struct block_ctx {
    job *j;
    unsigned threads;
    pthread_mutex_t lock; /* guards status and error when threads > 1 */
    dtcast_status status; /* the error of the lowest element index wins */
    dtcast_error error;
} block_ctx;

static void block_fail(block_ctx *c, dtcast_status s, const dtcast_error *e)
{
    if (c->threads > 1)
        pthread_mutex_lock(&c->lock);
    if (c->status == DTCAST_OK || (e->index != (size_t)-1 && e->index < c->error.index)) {
        c->status = s;
        c->error = *e;
        if (c->error.status == DTCAST_OK)
            c->error.status = s;
    }
    if (c->threads > 1)
        pthread_mutex_unlock(&c->lock);
}

static void run_blocks(void *ctx, size_t begin, size_t end)
{
    block_ctx *c = ctx;
    job *j = c->j;
    size_t count = end - begin;
    size_t block = count < DTC_BLOCK ? count : DTC_BLOCK;
    uint8_t *sbuf = j->src_bytes ? malloc(block) : NULL;
    uint8_t *dbuf = j->dst_bytes ? malloc(block * 2 + 16) : NULL;
    dtcast_error err;
    memset(&err, 0, sizeof err);
    if ((j->src_bytes && !sbuf) || (j->dst_bytes && !dbuf)) {
        free(sbuf);
        free(dbuf);
        err.status = DTCAST_ERR_OUT_OF_MEMORY;
        err.index = (size_t)-1;
        snprintf(err.message, sizeof err.message, "out of memory");
        block_fail(c, DTCAST_ERR_OUT_OF_MEMORY, &err);
        return;
    }
    dtcast_options opts = j->opts;
    if (c->threads > 1)
        opts.threads = 1;
    dtcast_status s = DTCAST_OK;
    for (size_t at = begin; at < end && s == DTCAST_OK; at += block) {
        size_t n = end - at < block ? end - at : block;
        const uint8_t *src = j->src_bytes ? j->src + at : j->src + lib_bytes(j->src_type, at, &opts);
        if (j->src_bytes) {
            pack_bits(sbuf, src, n, j->src_bytes);
            src = sbuf;
        }
        uint8_t *dst = j->dst_bytes ? dbuf : j->dst + lib_bytes(j->dst_type, at, &opts);
        opts.element_offset = j->opts.element_offset + at; /* stochastic: the tensor's index */
        s = dtcast_convert(dst, j->dst_type, src, j->src_type, n, &opts, &err);
        if (s == DTCAST_OK && j->report)
            s = dt_report_add(j->report, src, dst, n);
        if (s != DTCAST_OK) {
            if (err.status == DTCAST_OK) {
                err.status = s;
                err.index = (size_t)-1;
                snprintf(err.message, sizeof err.message, "%s", dtcast_status_string(s));
            } else if (err.index != (size_t)-1) {
                err.index += at;
            }
            block_fail(c, s, &err);
        } else if (j->dst_bytes) {
            unpack_bits(j->dst + at, dbuf, n, j->dst_bytes);
        }
    }
    free(sbuf);
    free(dbuf);
}

/* Runs the job without the GIL. A report wants float6 one per byte: float6_packed is refused
 * before this. */
static dtcast_status run_job(job *j)
{
    if (!j->src_bytes && !j->dst_bytes) {
        dtcast_status s = dtcast_convert(j->dst, j->dst_type, j->src, j->src_type, j->count,
                                         &j->opts, &j->error);
        if (s == DTCAST_OK && j->report)
            s = dt_report_add(j->report, j->src, j->dst, j->count);
        if (s != DTCAST_OK && j->error.status == DTCAST_OK) {
            j->error.status = s;
            j->error.index = (size_t)-1;
            snprintf(j->error.message, sizeof j->error.message, "%s", dtcast_status_string(s));
        }
        return s;
    }
    /* Sub-byte side one per byte: [0, count) in chunks (multiples of 8 elements, so packed
     * offsets are whole bytes), one per thread, each converting its chunk block by block. */
    block_ctx c = {.j = j, .status = DTCAST_OK};
    unsigned threads = j->report ? 1 : dt_thread_count(j->opts.threads, j->count);
    if (threads > 1 && pthread_mutex_init(&c.lock, NULL) != 0)
        threads = 1;
    c.threads = threads;
    dt_parallel_for(j->count, threads, run_blocks, &c);
    if (threads > 1)
        pthread_mutex_destroy(&c.lock);
    if (c.status != DTCAST_OK)
        j->error = c.error;
    return c.status;
}

static PyObject *report_dict(const dt_report *r);

/* convert(src, src_type, dst, dst_type, count, options, layout, report) -> None or dict */

/* The source buffer (read) and the destination buffer (written), each checked to hold the bytes
 * `count` elements need. 0, or -1 with a Python exception set and neither buffer held. */
static int get_buffers(PyObject *src_obj, size_t need_src, PyObject *dst_obj, size_t need_dst,
                       size_t count, Py_buffer *sb, Py_buffer *db)
{
    if (PyObject_GetBuffer(src_obj, sb, PyBUF_SIMPLE) < 0)
        return -1;
    if (PyObject_GetBuffer(dst_obj, db, PyBUF_SIMPLE | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(sb);
        return -1;
    }
    if ((size_t)sb->len >= need_src && (size_t)db->len >= need_dst)
        return 0;
    const bool src_short = (size_t)sb->len < need_src;
    char msg[160];
    snprintf(msg, sizeof msg, "%s buffer holds %zd bytes; %zu elements need %zu",
             src_short ? "source" : "destination", src_short ? sb->len : db->len, count,
             src_short ? need_src : need_dst);
    raise_status(DTCAST_ERR_INVALID_ARGUMENT, msg);
    PyBuffer_Release(db);
    PyBuffer_Release(sb);
    return -1;
}
static PyObject *convert(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *src_obj, *dst_obj, *opt_obj;
    int src_type, dst_type, layout, want_report;
    Py_ssize_t count;
    if (!PyArg_ParseTuple(args, "OiOinOip:convert", &src_obj, &src_type, &dst_obj, &dst_type,
                          &count, &opt_obj, &layout, &want_report))
        return NULL;
    job j;
    memset(&j, 0, sizeof j);
    if (parse_options(opt_obj, &j.opts) < 0)
        return NULL;
    if (count < 0)
        return raise_status(DTCAST_ERR_INVALID_ARGUMENT, "count is negative");
    j.src_type = (dtcast_type)src_type;
    j.dst_type = (dtcast_type)dst_type;
    j.count = (size_t)count;
    j.src_bytes = (layout & LAYOUT_SRC_BYTES) ? sub_bits(j.src_type, &j.opts) : 0;
    j.dst_bytes = (layout & LAYOUT_DST_BYTES) ? sub_bits(j.dst_type, &j.opts) : 0;
    if (j.src_type == DTCAST_STRING || j.dst_type == DTCAST_STRING)
        return raise_status(DTCAST_ERR_INVALID_ARGUMENT, "strings go through to_strings/from_strings");

    /* The buffers must hold what the types and count need. */
    size_t need_src = j.src_bytes ? j.count : 0, need_dst = j.dst_bytes ? j.count : 0;
    dtcast_error e;
    if ((!j.src_bytes && dtcast_storage_size_opts(j.src_type, j.count, &j.opts, &need_src, &e)) ||
        (!j.dst_bytes && dtcast_storage_size_opts(j.dst_type, j.count, &j.opts, &need_dst, &e)))
        return raise_error(&e);
    Py_buffer sb, db;
    if (get_buffers(src_obj, need_src, dst_obj, need_dst, j.count, &sb, &db) < 0)
        return NULL;
    PyObject *result = NULL;
    dt_report report;
    int have_report = 0;
    if (want_report) {
        if (j.opts.float6_packed &&
            (j.src_type == DTCAST_FLOAT6E2M3FN || j.src_type == DTCAST_FLOAT6E3M2FN ||
             j.dst_type == DTCAST_FLOAT6E2M3FN || j.dst_type == DTCAST_FLOAT6E3M2FN)) {
            raise_status(DTCAST_ERR_UNSUPPORTED, "report=True takes float6 one element per byte, "
                                                 "not packed");
            goto done;
        }
        dtcast_status s = dt_report_init(&report, j.src_type, j.dst_type, &j.opts);
        if (s != DTCAST_OK) {
            raise_status(s, s == DTCAST_ERR_UNSUPPORTED ? "no report for this pair"
                                                        : dtcast_status_string(s));
            goto done;
        }
        have_report = 1;
        j.report = &report;
    }
    j.src = sb.buf;
    j.dst = db.buf;
    dtcast_status s;
    Py_BEGIN_ALLOW_THREADS
    s = run_job(&j);
    Py_END_ALLOW_THREADS
    if (s != DTCAST_OK)
        raise_error(&j.error);
    else if (have_report)
        result = report_dict(&report);
    else
        result = Py_NewRef(Py_None);
done:
    if (have_report)
        dt_report_free(&report);
    PyBuffer_Release(&db);
    PyBuffer_Release(&sb);
    return result;
}

/* ---- the report ------------------------------------------------------------------------------- */

static PyObject *report_value(const dt_report_value *v)
{
    switch (v->type) {
    case DTCAST_INT64: return PyLong_FromLongLong(v->v.i);
    case DTCAST_UINT64: return PyLong_FromUnsignedLongLong(v->v.u);
    default: return PyFloat_FromDouble(v->v.f);
    }
}

static PyObject *worst_tuple(const dt_report_worst *w)
{
    if (w->error < 0)
        return Py_NewRef(Py_None);
    PyObject *s = report_value(&w->src), *d = report_value(&w->dst);
    PyObject *t = s && d ? Py_BuildValue("(dKOO)", (double)w->error,
                                          (unsigned long long)w->index, s, d)
                         : NULL;
    Py_XDECREF(s);
    Py_XDECREF(d);
    return t;
}

static PyObject *report_dict(const dt_report *r)
{
    char *text = dt_report_text(r, NULL);
    double sqnr = r->sum_err2 > 0 ? (double)(10 * log10l(r->sum_src2 / r->sum_err2)) : INFINITY;
    if (r->finite == 0)
        sqnr = NAN;
    PyObject *abs_w = worst_tuple(&r->max_abs), *rel_w = worst_tuple(&r->max_rel);
    PyObject *d = NULL;
    if (abs_w && rel_w)
        d = Py_BuildValue(
            "{sKsKsKsKsKsKsKsKsKsKsKsKsKsdsOsOss}", "elements", (unsigned long long)r->elements,
            "values", (unsigned long long)r->values, "exact", (unsigned long long)r->exact,
            "rounded", (unsigned long long)r->rounded, "underflow",
            (unsigned long long)r->underflow, "nan", (unsigned long long)r->nan, "overflow_inf",
            (unsigned long long)r->overflow_inf, "overflow_nan",
            (unsigned long long)r->overflow_nan, "overflow_max",
            (unsigned long long)r->overflow_max, "overflow_wrap",
            (unsigned long long)r->overflow_wrap, "overflow_saturate",
            (unsigned long long)r->overflow_saturate, "nan_out", (unsigned long long)r->nan_out,
            "finite", (unsigned long long)r->finite, "sqnr_db", sqnr, "max_abs_error", abs_w,
            "max_rel_error", rel_w, "text", text ? text : "");
    Py_XDECREF(abs_w);
    Py_XDECREF(rel_w);
    free(text);
    return d;
}

/* ---- strings ---------------------------------------------------------------------------------- */

/* to_strings(src, src_type, count, options) -> list[str] */
static PyObject *to_strings(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *src_obj, *opt_obj;
    int src_type;
    Py_ssize_t count;
    if (!PyArg_ParseTuple(args, "OinO:to_strings", &src_obj, &src_type, &count, &opt_obj))
        return NULL;
    dtcast_options o;
    if (parse_options(opt_obj, &o) < 0)
        return NULL;
    if (count < 0)
        return raise_status(DTCAST_ERR_INVALID_ARGUMENT, "count is negative");
    size_t need;
    dtcast_error e;
    if (dtcast_storage_size_opts((dtcast_type)src_type, (size_t)count, &o, &need, &e))
        return raise_error(&e);
    Py_buffer sb;
    if (PyObject_GetBuffer(src_obj, &sb, PyBUF_SIMPLE) < 0)
        return NULL;
    PyObject *list = NULL;
    char **strs = NULL;
    if ((size_t)sb.len < need) {
        raise_status(DTCAST_ERR_INVALID_ARGUMENT, "source buffer too small");
        goto done;
    }
    strs = calloc(count ? (size_t)count : 1, sizeof *strs);
    if (!strs) {
        PyErr_NoMemory();
        goto done;
    }
    dtcast_status s;
    Py_BEGIN_ALLOW_THREADS
    s = dtcast_convert(strs, DTCAST_STRING, sb.buf, (dtcast_type)src_type, (size_t)count, &o, &e);
    Py_END_ALLOW_THREADS
    if (s != DTCAST_OK) {
        raise_error(&e);
        goto done;
    }
    list = PyList_New(count);
    for (Py_ssize_t i = 0; list && i < count; i++) {
        PyObject *u = PyUnicode_FromString(strs[i]);
        if (!u) {
            Py_CLEAR(list);
            break;
        }
        PyList_SetItem(list, i, u);
    }
    dtcast_strings_free(strs, (size_t)count);
done:
    free(strs);
    PyBuffer_Release(&sb);
    return list;
}

/* from_strings(list_of_str, dst, dst_type, options, layout) -> None */
static PyObject *from_strings(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *seq, *dst_obj, *opt_obj;
    int dst_type, layout;
    if (!PyArg_ParseTuple(args, "OOiOi:from_strings", &seq, &dst_obj, &dst_type, &opt_obj,
                          &layout))
        return NULL;
    dtcast_options o;
    if (parse_options(opt_obj, &o) < 0)
        return NULL;
    PyObject *fast = PySequence_Tuple(seq);
    if (!fast)
        return NULL;
    Py_ssize_t count = PyTuple_Size(fast);
    const char **ptrs = calloc(count ? (size_t)count : 1, sizeof *ptrs);
    PyObject *result = NULL;
    Py_buffer db;
    int have_db = 0;
    if (!ptrs) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PyTuple_GetItem(fast, i);
        if (PyUnicode_Check(item)) {
            ptrs[i] = PyUnicode_AsUTF8AndSize(item, NULL);
        } else if (PyBytes_Check(item)) {
            ptrs[i] = PyBytes_AsString(item);
        } else {
            PyErr_Format(PyExc_TypeError, "element %zd is not a str", i);
            goto done;
        }
        if (!ptrs[i])
            goto done;
    }
    int bits = (layout & LAYOUT_DST_BYTES) ? sub_bits((dtcast_type)dst_type, &o) : 0;
    size_t need;
    dtcast_error e;
    if (dtcast_storage_size_opts((dtcast_type)dst_type, (size_t)count, &o, &need, &e)) {
        raise_error(&e);
        goto done;
    }
    if (PyObject_GetBuffer(dst_obj, &db, PyBUF_SIMPLE | PyBUF_WRITABLE) < 0)
        goto done;
    have_db = 1;
    if ((size_t)db.len < (bits ? (size_t)count : need)) {
        raise_status(DTCAST_ERR_INVALID_ARGUMENT, "destination buffer too small");
        goto done;
    }
    uint8_t *tmp = bits ? malloc(need ? need : 1) : NULL;
    if (bits && !tmp) {
        PyErr_NoMemory();
        goto done;
    }
    dtcast_status s;
    Py_BEGIN_ALLOW_THREADS
    s = dtcast_convert(bits ? (void *)tmp : db.buf, (dtcast_type)dst_type, ptrs, DTCAST_STRING,
                       (size_t)count, &o, &e);
    if (s == DTCAST_OK && bits)
        unpack_bits(db.buf, tmp, (size_t)count, bits);
    Py_END_ALLOW_THREADS
    free(tmp);
    if (s != DTCAST_OK)
        raise_error(&e);
    else
        result = Py_NewRef(Py_None);
done:
    if (have_db)
        PyBuffer_Release(&db);
    free(ptrs);
    Py_DECREF(fast);
    return result;
}

/* ---- profiles --------------------------------------------------------------------------------- */

/* onnx_options(to, src_type, opset, saturate, round_mode, base) -> options tuple */
static PyObject *onnx_options(PyObject *self, PyObject *args)
{
    (void)self;
    long long to, saturate;
    int src_type, opset;
    const char *round_mode;
    PyObject *base_obj;
    if (!PyArg_ParseTuple(args, "LiiLzO:onnx_options", &to, &src_type, &opset, &saturate,
                          &round_mode, &base_obj))
        return NULL;
    dtcast_options base, out;
    dtcast_error e;
    if (parse_options(base_obj, &base) < 0)
        return NULL;
    dtcast_options_init(&out);
    if (dtcast_onnx_options(&out, to, (dtcast_type)src_type, opset, saturate, round_mode, &base,
                            &e) != DTCAST_OK)
        return raise_error(&e);
    return options_tuple(&out);
}

/* pypto_options(dst_type, src_type, mode_name, shape, base) -> options tuple */
static PyObject *pypto_options(PyObject *self, PyObject *args)
{
    (void)self;
    int dst_type, src_type;
    const char *mode_name;
    PyObject *shape_obj, *base_obj;
    if (!PyArg_ParseTuple(args, "iisOO:pypto_options", &dst_type, &src_type, &mode_name,
                          &shape_obj, &base_obj))
        return NULL;
    dtcast_options base, out;
    dtcast_error e;
    dtcast_pypto_mode mode;
    if (parse_options(base_obj, &base) < 0)
        return NULL;
    if (dtcast_pypto_mode_from_name(mode_name, &mode, &e) != DTCAST_OK)
        return raise_error(&e);
    PyObject *shape = PySequence_Tuple(shape_obj);
    if (!shape)
        return NULL;
    int64_t dims[8];
    Py_ssize_t ndim = PyTuple_Size(shape);
    for (Py_ssize_t i = 0; i < ndim && i < 8; i++)
        dims[i] = PyLong_AsLongLong(PyTuple_GetItem(shape, i));
    Py_DECREF(shape);
    if (PyErr_Occurred())
        return NULL;
    if (dtcast_pypto_check_shape(dims, ndim > 8 ? 9 : (int)ndim, &e) != DTCAST_OK)
        return raise_error(&e);
    dtcast_options_init(&out);
    if (dtcast_pypto_options(&out, (dtcast_type)dst_type, (dtcast_type)src_type, mode, &base,
                             &e) != DTCAST_OK)
        return raise_error(&e);
    return options_tuple(&out);
}

/* ---- types ------------------------------------------------------------------------------------ */

/* type_list() -> [(code, name, onnx_name or None), ...] */
static PyObject *type_list(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    dtcast_type t[64];
    size_t n = dtcast_type_list(t, 64);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        const char *onnx = dtcast_type_onnx_name(t[i]);
        PyObject *item = Py_BuildValue("(isz)", (int)t[i], dtcast_type_name(t[i]), onnx);
        if (!item) {
            Py_CLEAR(list);
            break;
        }
        PyList_SetItem(list, (Py_ssize_t)i, item);
    }
    return list;
}

/* type_from_name(name) -> code */
static PyObject *type_from_name(PyObject *self, PyObject *args)
{
    (void)self;
    const char *name;
    if (!PyArg_ParseTuple(args, "s:type_from_name", &name))
        return NULL;
    dtcast_type t;
    dtcast_error e;
    if (dtcast_type_from_name(name, &t, &e) != DTCAST_OK)
        return raise_error(&e);
    return PyLong_FromLong((long)t);
}

/* type_info(code) -> dict */
static PyObject *type_info(PyObject *self, PyObject *args)
{
    (void)self;
    int code;
    if (!PyArg_ParseTuple(args, "i:type_info", &code))
        return NULL;
    dtcast_info in;
    dtcast_error e;
    if (dtcast_type_info((dtcast_type)code, &in, &e) != DTCAST_OK)
        return raise_error(&e);
    static const char *const kinds[] = {"bool", "unsigned", "signed", "float", "complex", "string"};
    return Py_BuildValue("{sisssssisisisisOsOsOsdsdsdsdsdsKsKsKsisLsK}", "code", (int)in.type,
                         "name", in.name, "kind", kinds[in.kind], "bits", in.bits,
                         "exponent_bits", in.exponent_bits, "mantissa_bits", in.mantissa_bits,
                         "bias", in.bias, "has_inf", in.has_inf ? Py_True : Py_False, "has_nan",
                         in.has_nan ? Py_True : Py_False, "has_negative_zero",
                         in.has_negative_zero ? Py_True : Py_False, "max", in.max, "lowest",
                         in.lowest, "min_normal", in.min_normal, "min_subnormal",
                         in.min_subnormal, "epsilon", in.epsilon, "max_bits",
                         (unsigned long long)in.max_bits, "inf_bits",
                         (unsigned long long)in.inf_bits, "nan_bits",
                         (unsigned long long)in.nan_bits, "nan_count", in.nan_count, "int_min",
                         (long long)in.int_min, "int_max", (unsigned long long)in.int_max);
}

/* storage_size(code, count, float6_packed) -> bytes */
static PyObject *storage_size(PyObject *self, PyObject *args)
{
    (void)self;
    int code, f6;
    Py_ssize_t count;
    if (!PyArg_ParseTuple(args, "inp:storage_size", &code, &count, &f6))
        return NULL;
    if (count < 0)
        return raise_status(DTCAST_ERR_INVALID_ARGUMENT, "count is negative");
    dtcast_options o;
    dtcast_options_init(&o);
    o.float6_packed = f6;
    size_t n;
    dtcast_error e;
    if (dtcast_storage_size_opts((dtcast_type)code, (size_t)count, &o, &n, &e) != DTCAST_OK)
        return raise_error(&e);
    return PyLong_FromSize_t(n);
}

/* bitcast(src, src_type, dst, dst_type, count) -> None: count elements' bits, in the library's
 * packed layout on both sides (dtcast_bitcast checks the widths). */
static PyObject *bitcast(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *src_obj, *dst_obj;
    int src_type, dst_type;
    Py_ssize_t count;
    if (!PyArg_ParseTuple(args, "OiOin:bitcast", &src_obj, &src_type, &dst_obj, &dst_type, &count))
        return NULL;
    if (count < 0)
        return raise_status(DTCAST_ERR_INVALID_ARGUMENT, "count is negative");
    dtcast_error e;
    /* the width check first, so a mismatch is reported as such rather than as a buffer size */
    if (dtcast_bitcast(NULL, (dtcast_type)dst_type, NULL, (dtcast_type)src_type, 0, NULL, &e) !=
        DTCAST_OK)
        return raise_error(&e);
    size_t need;
    if (dtcast_storage_size((dtcast_type)src_type, (size_t)count, &need, &e) != DTCAST_OK)
        return raise_error(&e);
    Py_buffer sb, db;
    if (get_buffers(src_obj, need, dst_obj, need, (size_t)count, &sb, &db) < 0)
        return NULL;
    PyObject *result = NULL;
    if (dtcast_bitcast(db.buf, (dtcast_type)dst_type, sb.buf, (dtcast_type)src_type,
                              (size_t)count, NULL, &e) != DTCAST_OK) {
        raise_error(&e);
    } else {
        result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&db);
    PyBuffer_Release(&sb);
    return result;
}

/* ---- promotion -------------------------------------------------------------------------------- */

static int parse_operand(PyObject *t, dtcast_operand *op)
{
    int type, rank, scalar;
    if (!PyArg_ParseTuple(t, "iii:operand", &type, &rank, &scalar))
        return -1;
    op->type = (dtcast_type)type;
    op->rank = rank;
    op->scalar = (dtcast_scalar_kind)scalar;
    return 0;
}

/* promote(rules_name, a, b, (promote_unsafe, pytorch_scalar_promotion, u64_target, x64,
 * strict)) -> code; a and b are (type, rank, scalar kind). */
static PyObject *promote(PyObject *self, PyObject *args)
{
    (void)self;
    const char *rules_name;
    PyObject *a_obj, *b_obj;
    int unsafe, scalar_promo, u64_target, x64, strict;
    if (!PyArg_ParseTuple(args, "sOO(ppipp):promote", &rules_name, &a_obj, &b_obj, &unsafe,
                          &scalar_promo, &u64_target, &x64, &strict))
        return NULL;
    dtcast_operand a, b;
    if (parse_operand(a_obj, &a) < 0 || parse_operand(b_obj, &b) < 0)
        return NULL;
    dtcast_promote_rules rules;
    dtcast_error e;
    if (dtcast_promote_rules_from_name(rules_name, &rules, &e) != DTCAST_OK)
        return raise_error(&e);
    dtcast_promote_attrs at;
    dtcast_promote_attrs_init(&at);
    at.promote_unsafe = unsafe;
    at.pytorch_scalar_promotion = scalar_promo;
    at.u64_target = (dtcast_type)u64_target;
    at.x64 = x64;
    at.strict = strict;
    dtcast_type r;
    if (dtcast_promote(&r, rules, &a, &b, &at, &e) != DTCAST_OK)
        return raise_error(&e);
    return PyLong_FromLong((long)r);
}

/* diff(a, b, atol, rtol, no_dequantize, threads) -> JSON text of files/diff.c's result (the
 * same text as `dtcast diff --json`), the comparison run with the GIL released. */
static PyObject *dtc_diff(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *pa, *pb, *progress;
    double atol, rtol;
    int raw;
    unsigned int threads;
    if (!PyArg_ParseTuple(args, "O&O&ddpIO", PyUnicode_FSConverter, &pa, PyUnicode_FSConverter,
                          &pb, &atol, &rtol, &raw, &threads, &progress))
        return NULL;
    dt_diff_options o;
    dt_diff_options_init(&o);
    o.atol = atol;
    o.rtol = rtol;
    o.no_dequantize = raw;
    o.threads = threads;
    dt_diff_result r;
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status s;
    const char *a = PyBytes_AsString(pa), *b = PyBytes_AsString(pb);
    void *pctx = a && b ? py_progress_begin(progress) : NULL;
    if (!pctx) {
        Py_DECREF(pa);
        Py_DECREF(pb);
        return NULL;
    }
    o.progress = py_progress_call;
    o.progress_ctx = pctx;
    Py_BEGIN_ALLOW_THREADS
    s = dt_diff_run(a, b, &o, &r, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(pa);
    Py_DECREF(pb);
    if (py_progress_end(pctx, s == DTCAST_OK) < 0) { /* the callable's exception */
        if (s == DTCAST_OK)
            dt_diff_result_free(&r);
        return NULL;
    }
    if (s != DTCAST_OK) {
        dtcast_error e;
        e.status = s;
        e.index = (size_t)-1;
        size_t n = strlen(err.message);
        if (n >= sizeof e.message)
            n = sizeof e.message - 1;
        memcpy(e.message, err.message, n);
        e.message[n] = 0;
        return raise_error(&e);
    }
    char *text = dt_diff_json(&r);
    dt_diff_result_free(&r);
    if (!text)
        return PyErr_NoMemory();
    PyObject *out = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "strict");
    free(text);
    return out;
}

static PyMethodDef methods[] = {
    {"_set_error_class", set_error_class, METH_O, "Sets the exception raised on errors."},
    {"convert", convert, METH_VARARGS,
     "convert(src, src_type, dst, dst_type, count, options, layout, report) -> None | dict"},
    {"to_strings", to_strings, METH_VARARGS, "to_strings(src, src_type, count, options) -> list"},
    {"from_strings", from_strings, METH_VARARGS,
     "from_strings(strings, dst, dst_type, options, layout) -> None"},
    {"onnx_options", onnx_options, METH_VARARGS,
     "onnx_options(to, src_type, opset, saturate, round_mode, base) -> options"},
    {"pypto_options", pypto_options, METH_VARARGS,
     "pypto_options(dst_type, src_type, mode, shape, base) -> options"},
    {"diff", dtc_diff, METH_VARARGS, "diff(a, b, atol, rtol, no_dequantize, threads, progress) -> json"},
    {"bitcast", bitcast, METH_VARARGS, "bitcast(src, src_type, dst, dst_type, count) -> None"},
    {"type_list", type_list, METH_NOARGS, "type_list() -> [(code, name, onnx_name)]"},
    {"type_from_name", type_from_name, METH_VARARGS, "type_from_name(name) -> code"},
    {"type_info", type_info, METH_VARARGS, "type_info(code) -> dict"},
    {"storage_size", storage_size, METH_VARARGS, "storage_size(code, count, float6_packed)"},
    {"promote", promote, METH_VARARGS, "promote(rules, a, b, attrs) -> code"},
    {"onnx_qdq", dtc_onnx_qdq, METH_VARARGS,
     "onnx_qdq(quantize, x, x_type, x_shape, s, s_type, s_shape, z, z_type, z_shape, attrs, "
     "threads) -> (bytearray, type)"},
    {"onnx_dynamic", dtc_onnx_dynamic, METH_VARARGS,
     "onnx_dynamic(x, x_shape, threads) -> (bytearray, scale, zero_point)"},
    DTC_QUANT_METHODS
    DTC_GGML_METHODS
    DTC_INSPECT_METHODS
    DTC_JOBS_METHODS
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "dtcast._core",
                                    "dtcast's C library (see the dtcast package).", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__core(void);
PyMODINIT_FUNC PyInit__core(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m && (PyModule_AddStringConstant(m, "version", DTCAST_VERSION_STRING) < 0 ||
              PyModule_AddIntConstant(m, "ONNX_OPSET_MAX", DTCAST_ONNX_OPSET_MAX) < 0))
        Py_CLEAR(m);
    return m;
}
