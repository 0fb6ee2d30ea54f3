/*
 * dtcast._core: ggml's block types (dtcast_ggml_quantize, dtcast_ggml_dequantize) for
 * python/dtcast/gguf.py. As quant.c: thin; Python checks the arguments, chooses the shapes and
 * allocates the outputs; this file fills dtcast_tensor structs over the buffers and calls the
 * library with the GIL released.
 */
#include "py_ggml.h"

#include "dtcast.h"

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
