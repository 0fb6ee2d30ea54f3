/*
 * dtcast._core: ggml's block types (dtcast_ggml_quantize, dtcast_ggml_dequantize) for
 * python/dtcast/gguf.py. As quant.c: thin; Python checks the arguments, chooses the shapes and
 * allocates the outputs; this file fills dtcast_tensor structs over the buffers and calls the
 * library with the GIL released.
 */
#include "py_ggml.h"

#include "dtcast.h"
#include "files/gguf_job.h"

#include <string.h>

#include <stdio.h>

/* Raises dtcast.Error(message, status, index) (as quant.c does). */
static PyObject *ggml_raise(const dtcast_error *e)
{
    PyObject *mod = PyImport_ImportModule("dtcast._errors");
    PyObject *cls = mod ? PyObject_GetAttrString(mod, "Error") : NULL;
    Py_XDECREF(mod);
    if (!cls) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError, e->message);
        return NULL;
    }
    PyObject *index = e->index == (size_t)-1 ? Py_NewRef(Py_None) : PyLong_FromSize_t(e->index);
    if (index) {
        PyObject *exc = PyObject_CallFunction(cls, "siO", e->message, (int)e->status, index);
        Py_DECREF(index);
        if (exc) {
            PyErr_SetObject(cls, exc);
            Py_DECREF(exc);
        }
    }
    Py_DECREF(cls);
    return NULL;
}

PyObject *dtc_ggml_types(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    PyObject *list = PyList_New(0);
    for (int c = 0; list && c < 64; c++) {
        const char *name = dtcast_ggml_type_name(c);
        if (!name)
            continue;
        PyObject *t = Py_BuildValue("(isLni)", c, name, (long long)dtcast_ggml_block_size(c),
                                    (Py_ssize_t)dtcast_ggml_type_size(c), dtcast_ggml_support(c));
        if (!t || PyList_Append(list, t) < 0)
            Py_CLEAR(list);
        Py_XDECREF(t);
    }
    return list;
}

static int parse_shape(PyObject *obj, dtcast_tensor *t)
{
    PyObject *shape = PySequence_Tuple(obj);
    if (!shape)
        return -1;
    Py_ssize_t n = PyTuple_Size(shape);
    if (n > DTCAST_MAX_DIMS) {
        Py_DECREF(shape);
        PyErr_SetString(PyExc_ValueError, "more than 8 dimensions");
        return -1;
    }
    t->ndim = (int)n;
    for (Py_ssize_t i = 0; i < n; i++)
        t->shape[i] = PyLong_AsLongLong(PyTuple_GetItem(shape, i));
    Py_DECREF(shape);
    return PyErr_Occurred() ? -1 : 0;
}

PyObject *dtc_ggml_quantize(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *x_obj, *shape_obj, *dst_obj;
    int x_type, code;
    unsigned threads;
    if (!PyArg_ParseTuple(args, "OiOiOI:ggml_quantize", &x_obj, &x_type, &shape_obj, &code,
                          &dst_obj, &threads))
        return NULL;
    dtcast_tensor x = {0};
    x.type = (dtcast_type)x_type;
    if (parse_shape(shape_obj, &x) < 0)
        return NULL;
    Py_buffer xv, dv;
    if (PyObject_GetBuffer(x_obj, &xv, PyBUF_SIMPLE) < 0)
        return NULL;
    if (PyObject_GetBuffer(dst_obj, &dv, PyBUF_SIMPLE | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&xv);
        return NULL;
    }
    x.data = xv.buf;
    x.bytes = (size_t)xv.len;
    dtcast_ggml_stats st;
    dtcast_error e;
    dtcast_status s;
    Py_BEGIN_ALLOW_THREADS
    s = dtcast_ggml_quantize(dv.buf, (size_t)dv.len, code, &x, threads, &st, &e);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&xv);
    PyBuffer_Release(&dv);
    if (s != DTCAST_OK)
        return ggml_raise(&e);
    return Py_BuildValue("(KKK)", (unsigned long long)st.nonfinite,
                         (unsigned long long)st.first_nonfinite,
                         (unsigned long long)st.invalid_scales);
}

PyObject *dtc_ggml_dequantize(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *y_obj, *shape_obj, *src_obj;
    int y_type, code;
    unsigned threads;
    if (!PyArg_ParseTuple(args, "OiOiOI:ggml_dequantize", &y_obj, &y_type, &shape_obj, &code,
                          &src_obj, &threads))
        return NULL;
    dtcast_tensor y = {0};
    y.type = (dtcast_type)y_type;
    if (parse_shape(shape_obj, &y) < 0)
        return NULL;
    Py_buffer yv, sv;
    if (PyObject_GetBuffer(y_obj, &yv, PyBUF_SIMPLE | PyBUF_WRITABLE) < 0)
        return NULL;
    if (PyObject_GetBuffer(src_obj, &sv, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&yv);
        return NULL;
    }
    y.data = yv.buf;
    y.bytes = (size_t)yv.len;
    dtcast_error e;
    dtcast_status s;
    Py_BEGIN_ALLOW_THREADS
    s = dtcast_ggml_dequantize(&y, sv.buf, (size_t)sv.len, code, threads, &e);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&yv);
    PyBuffer_Release(&sv);
    if (s != DTCAST_OK)
        return ggml_raise(&e);
    Py_RETURN_NONE;
}

/* ---- reading a GGUF model (dtcast.gguf.open) -------------------------------------------------- */

static uint64_t rd64(const uint8_t *p, int be)
{
    uint64_t v = 0;
    for (int k = 0; k < 8; k++)
        v |= (uint64_t)p[k] << (be ? 8 * (7 - k) : 8 * k);
    return v;
}

static PyObject *text(const uint8_t *s, uint64_t n)
{
    return PyUnicode_DecodeUTF8((const char *)s, (Py_ssize_t)n, "surrogateescape");
}

static PyObject *scalar(uint32_t type, uint64_t u)
{
    switch (type) {
    case DT_GGUF_INT8: return PyLong_FromLong((int8_t)u);
    case DT_GGUF_INT16: return PyLong_FromLong((int16_t)u);
    case DT_GGUF_INT32: return PyLong_FromLong((int32_t)u);
    case DT_GGUF_INT64: return PyLong_FromLongLong((long long)(int64_t)u);
    case DT_GGUF_BOOL: return PyBool_FromLong(u != 0);
    case DT_GGUF_FLOAT32: {
        const uint32_t b = (uint32_t)u;
        float f;
        memcpy(&f, &b, 4);
        return PyFloat_FromDouble((double)f);
    }
    case DT_GGUF_FLOAT64: {
        double d;
        memcpy(&d, &u, 8);
        return PyFloat_FromDouble(d);
    }
    default: return PyLong_FromUnsignedLongLong((unsigned long long)u);
    }
}

static PyObject *value(const dt_gguf *g, const uint8_t *buf, const dt_gguf_kv *kv)
{
    if (kv->type == DT_GGUF_STRING)
        return text(buf + kv->value_at, kv->count);
    if (kv->type != DT_GGUF_ARRAY)
        return scalar(kv->type, kv->v.u);
    PyObject *list = PyList_New((Py_ssize_t)kv->count);
    uint64_t at = kv->value_at;
    for (uint64_t e = 0; list && e < kv->count; e++) {
        PyObject *v;
        if (kv->elem_type == DT_GGUF_STRING) {
            const uint64_t len = rd64(buf + at, g->big_endian);
            v = text(buf + at + 8, len);
            at += 8 + len;
        } else {
            v = scalar(kv->elem_type, dt_gguf_array_u64(g, buf, kv, e));
        }
        if (!v)
            Py_CLEAR(list);
        else
            PyList_SetItem(list, (Py_ssize_t)e, v);
    }
    return list;
}

/* gguf_read(path) -> (files, big_endian, [(key, value_type, value)], [(name, ggml_type,
 * shape, file, offset, nbytes)]): a lone file or a whole split set; the metadata of every file
 * (the split keys of the later ones too), shapes in numpy's order, offsets absolute */
PyObject *dtc_gguf_read(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *pathb;
    if (!PyArg_ParseTuple(args, "S:gguf_read", &pathb))
        return NULL;
    const char *path = PyBytes_AsString(pathb);
    if (!path)
        return NULL;
    dt_gguf_set s;
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dt_gguf_set_open(&s, path, &err);
    Py_END_ALLOW_THREADS
    if (st != DTCAST_OK) {
        dt_gguf_set_close(&s);
        dtcast_error e;
        e.status = st;
        e.index = (size_t)-1;
        const size_t n = strlen(err.message) < sizeof e.message - 1 ? strlen(err.message)
                                                                    : sizeof e.message - 1;
        memcpy(e.message, err.message, n);
        e.message[n] = '\0';
        return ggml_raise(&e);
    }
    PyObject *files = PyList_New(0), *meta = PyList_New(0), *tensors = PyList_New(0);
    int be = 0;
    for (size_t i = 0; files && meta && tensors && i < s.n; i++) {
        const dt_gguf_shard *sh = &s.shards[i];
        be |= sh->g.big_endian;
        PyObject *f = PyUnicode_DecodeFSDefault(sh->path);
        if (!f || PyList_Append(files, f) < 0)
            Py_CLEAR(files);
        Py_XDECREF(f);
        for (uint64_t k = 0; files && meta && k < sh->g.nkv; k++) {
            const dt_gguf_kv *kv = &sh->g.kv[k];
            PyObject *key = text(kv->key, kv->key_len), *v = value(&sh->g, sh->map, kv);
            const char *tn = dt_gguf_value_type_name(kv->type == DT_GGUF_ARRAY ? kv->elem_type
                                                                              : kv->type);
            PyObject *t = key && v ? Py_BuildValue("(OsiO)", key, tn, kv->type == DT_GGUF_ARRAY, v)
                                   : NULL;
            if (!t || PyList_Append(meta, t) < 0)
                Py_CLEAR(meta);
            Py_XDECREF(key);
            Py_XDECREF(v);
            Py_XDECREF(t);
        }
        for (uint64_t k = 0; tensors && k < sh->g.ntensors; k++) {
            const dt_gguf_tensor *e = &sh->g.tensors[k];
            PyObject *shape = PyTuple_New(e->n_dims);
            for (int d = 0; shape && d < e->n_dims; d++)
                PyTuple_SetItem(shape, d,
                                PyLong_FromUnsignedLongLong(e->ne[e->n_dims - 1 - d]));
            PyObject *name = text(e->name, e->name_len);
            PyObject *t = shape && name ? Py_BuildValue("(OIOnKK)", name, e->type, shape,
                                                        (Py_ssize_t)i,
                                                        (unsigned long long)e->at,
                                                        (unsigned long long)e->bytes)
                                        : NULL;
            if (!t || PyList_Append(tensors, t) < 0)
                Py_CLEAR(tensors);
            Py_XDECREF(shape);
            Py_XDECREF(name);
            Py_XDECREF(t);
        }
    }
    dt_gguf_set_close(&s);
    if (!files || !meta || !tensors) {
        Py_XDECREF(files);
        Py_XDECREF(meta);
        Py_XDECREF(tensors);
        return NULL;
    }
    return Py_BuildValue("(NiNN)", files, be, meta, tensors);
}
