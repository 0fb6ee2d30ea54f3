/*
 * dtcast._core's ONNX QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear: buffers and
 * shapes in (sub-byte inputs already packed as the library packs them: dtcast/onnx.py does it),
 * a bytearray out, the GIL released while the library works. dtcast/onnx.py makes the arrays.
 */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "dtcast.h"
#include "onnx_qdq.h" /* python/ext/onnx_qdq.h */

#include <stdio.h>
#include <string.h>

/* A tensor from (buffer, type, shape tuple); the buffer is held in *view until released. */
static int get_tensor(PyObject *buf, int type, PyObject *shape, dtcast_tensor *t, Py_buffer *view,
                      const char *what)
{
    memset(t, 0, sizeof *t);
    if (!PyTuple_Check(shape)) {
        PyErr_Format(PyExc_TypeError, "%s: the shape must be a tuple", what);
        return -1;
    }
    Py_ssize_t nd = PyTuple_Size(shape);
    if (nd > DTCAST_MAX_DIMS) {
        dtcast_error e = {DTCAST_ERR_BAD_SHAPE, (size_t)-1, ""};
        snprintf(e.message, sizeof e.message, "%s has %zd dimensions; at most %d are possible",
                 what, nd, DTCAST_MAX_DIMS);
        dtc_raise_error(&e);
        return -1;
    }
    for (Py_ssize_t d = 0; d < nd; d++) {
        long long v = PyLong_AsLongLong(PyTuple_GetItem(shape, d));
        if (v == -1 && PyErr_Occurred())
            return -1;
        t->shape[d] = v;
    }
    if (PyObject_GetBuffer(buf, view, PyBUF_SIMPLE) < 0)
        return -1;
    t->ndim = (int)nd;
    t->type = (dtcast_type)type;
    t->data = view->buf;
    t->bytes = (size_t)view->len;
    return 0;
}

static PyObject *attrs_and_opts(PyObject *attrs, unsigned threads, dtcast_onnx_qdq_attrs *a,
                                dtcast_options *o)
{
    int opset;
    long long axis, block, sat, od, prec;
    dtcast_onnx_qdq_attrs_init(a);
    if (!PyArg_ParseTuple(attrs, "iLLLLL:attrs", &opset, &axis, &block, &sat, &od, &prec))
        return NULL;
    a->opset = opset;
    a->axis = axis;
    a->block_size = block;
    a->saturate = sat;
    a->output_dtype = od;
    a->precision = prec;
    dtcast_options_init(o);
    o->threads = threads;
    return Py_None;
}

/* onnx_qdq(quantize, x, x_type, x_shape, s, s_type, s_shape, z or None, z_type, z_shape, attrs,
 * threads) -> (bytearray y, y_type) */
PyObject *dtc_onnx_qdq(PyObject *self, PyObject *args)
{
    (void)self;
    int quantize, xt, st, zt;
    PyObject *xb, *xs, *sb, *ss, *zb, *zs, *attrs;
    unsigned threads;
    if (!PyArg_ParseTuple(args, "pOiOOiOOiOOI:onnx_qdq", &quantize, &xb, &xt, &xs, &sb, &st, &ss,
                          &zb, &zt, &zs, &attrs, &threads))
        return NULL;
    dtcast_onnx_qdq_attrs a;
    dtcast_options o;
    if (!attrs_and_opts(attrs, threads, &a, &o))
        return NULL;
    Py_buffer xv, sv, zv;
    dtcast_tensor x, s, z;
    if (get_tensor(xb, xt, xs, &x, &xv, "x") < 0)
        return NULL;
    if (get_tensor(sb, st, ss, &s, &sv, "scale") < 0) {
        PyBuffer_Release(&xv);
        return NULL;
    }
    const int have_z = zb != Py_None;
    if (have_z && get_tensor(zb, zt, zs, &z, &zv, "zero_point") < 0) {
        PyBuffer_Release(&xv);
        PyBuffer_Release(&sv);
        return NULL;
    }
    PyObject *result = NULL, *out = NULL;
    size_t count = 0;
    dtcast_error e;
    if (dtcast_tensor_count(&x, &count, &e) != DTCAST_OK) {
        dtc_raise_error(&e);
        goto done;
    }
    if (count > (size_t)PY_SSIZE_T_MAX / 4) {
        PyErr_SetString(PyExc_MemoryError, "x is too large");
        goto done;
    }
    out = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(count * 4));
    if (!out)
        goto done;
    dtcast_tensor y;
    memset(&y, 0, sizeof y);
    y.data = PyByteArray_AsString(out);
    y.bytes = count * 4;
    dtcast_status status;
    Py_BEGIN_ALLOW_THREADS
    status = quantize ? dtcast_onnx_quantize_linear(&y, &x, &s, have_z ? &z : NULL, &a, &o, &e)
                      : dtcast_onnx_dequantize_linear(&y, &x, &s, have_z ? &z : NULL, &a, &o, &e);
    Py_END_ALLOW_THREADS
    if (status != DTCAST_OK) {
        dtc_raise_error(&e);
        goto done;
    }
    size_t bytes = 0;
    if (dtcast_storage_size(y.type, count, &bytes, &e) != DTCAST_OK ||
        PyByteArray_Resize(out, (Py_ssize_t)bytes) < 0)
        goto done;
    result = Py_BuildValue("(Oi)", out, (int)y.type);
done:
    Py_XDECREF(out);
    PyBuffer_Release(&xv);
    PyBuffer_Release(&sv);
    if (have_z)
        PyBuffer_Release(&zv);
    return result;
}

/* onnx_dynamic(x, x_shape, threads) -> (bytearray y, float scale, int zero_point) */
PyObject *dtc_onnx_dynamic(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *xb, *xs;
    unsigned threads;
    if (!PyArg_ParseTuple(args, "OOI:onnx_dynamic", &xb, &xs, &threads))
        return NULL;
    Py_buffer xv;
    dtcast_tensor x;
    if (get_tensor(xb, DTCAST_FLOAT32, xs, &x, &xv, "x") < 0)
        return NULL;
    PyObject *result = NULL, *out = NULL;
    size_t count = 0;
    dtcast_error e;
    if (dtcast_tensor_count(&x, &count, &e) != DTCAST_OK) {
        dtc_raise_error(&e);
        goto done;
    }
    out = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)count);
    if (!out)
        goto done;
    float scale = 0;
    uint8_t zp = 0;
    dtcast_tensor y, ys, yz;
    memset(&y, 0, sizeof y);
    memset(&ys, 0, sizeof ys);
    memset(&yz, 0, sizeof yz);
    y.data = PyByteArray_AsString(out);
    y.bytes = count;
    ys.data = &scale;
    ys.bytes = sizeof scale;
    yz.data = &zp;
    yz.bytes = 1;
    dtcast_options o;
    dtcast_options_init(&o);
    o.threads = threads;
    dtcast_status status;
    Py_BEGIN_ALLOW_THREADS
    status = dtcast_onnx_dynamic_quantize_linear(&y, &ys, &yz, &x, &o, &e);
    Py_END_ALLOW_THREADS
    if (status != DTCAST_OK) {
        dtc_raise_error(&e);
        goto done;
    }
    result = Py_BuildValue("(Odi)", out, (double)scale, (int)zp);
done:
    Py_XDECREF(out);
    PyBuffer_Release(&xv);
    return result;
}
