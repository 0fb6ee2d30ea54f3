/*
 * dtcast._core: scaled quantization (dtcast_quantize_layout, dtcast_quantize, dtcast_dequantize)
 * for python/dtcast/_quant.py. As module.c: thin; Python chooses shapes and allocates the outputs
 * (from quant_layout), this file fills dtcast_tensor structs over the buffers and calls the
 * library with the GIL released. Codes cross in the library's layout (4-bit codes packed per
 * row); Python unpacks them to ml_dtypes' one-per-byte layout when asked.
 *
 * The parameters travel as a tuple (python/dtcast/_quant.py, _params):
 *   (name, variant, element, scale_type, scale_mode, round, seed, axis, block, block_rows,
 *    flags, threads)
 * name is a recipe or scheme name (dtcast_quant_params_from_recipe), variant and scale_mode
 * names or None, element and scale_type type codes (0 = the recipe's), block and block_rows
 * -1 = the recipe's, flags the QP_* bits below.
 */
#include "py_quant.h"

#include "dtcast.h"

#include <stdio.h>
#include <string.h>

enum { QP_PER_TENSOR = 1, QP_SINGLE_LEVEL = 2, QP_UE8M0 = 4, QP_REJECT_SHORT = 8,
       QP_FLOAT6_PACKED = 16 };

/* Raises dtcast.Error(message, status, index) (the class module.c raises; looked up here so
 * this file needs nothing of module.c's). */
static PyObject *quant_raise(const dtcast_error *e)
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

static PyObject *quant_fail(dtcast_status status, const char *message)
{
    dtcast_error e;
    e.status = status;
    e.index = (size_t)-1;
    snprintf(e.message, sizeof e.message, "%s", message);
    return quant_raise(&e);
}

static int parse_params(PyObject *tuple, dtcast_quant_params *p)
{
    const char *name, *variant, *scale_mode;
    int element, scale_type, round, axis;
    unsigned long long seed;
    long long block, block_rows;
    unsigned long flags;
    unsigned threads;
    if (!PyArg_ParseTuple(tuple, "sziiziKiLLkI:params", &name, &variant, &element, &scale_type,
                          &scale_mode, &round, &seed, &axis, &block, &block_rows, &flags,
                          &threads))
        return -1;
    dtcast_error e;
    dtcast_quant_params_init(p);
    if (dtcast_quant_params_from_recipe(p, name, &e) != DTCAST_OK) {
        quant_raise(&e);
        return -1;
    }
    if (variant && dtcast_variant_from_name(variant, &p->variant, &e) != DTCAST_OK) {
        quant_raise(&e);
        return -1;
    }
    if (scale_mode && dtcast_scale_mode_from_name(scale_mode, &p->scale_mode, &e) != DTCAST_OK) {
        quant_raise(&e);
        return -1;
    }
    if (element)
        p->element = (dtcast_type)element;
    if (scale_type)
        p->scale_type = (dtcast_type)scale_type;
    p->round = (dtcast_round)round;
    p->seed = (uint64_t)seed;
    p->axis = axis;
    if (block >= 0)
        p->block = (int64_t)block;
    if (block_rows >= 0)
        p->block_rows = (int64_t)block_rows;
    if (flags & QP_PER_TENSOR)
        p->per_tensor = true;
    if (flags & QP_SINGLE_LEVEL)
        p->single_level = true;
    if (flags & QP_UE8M0)
        p->ue8m0 = true;
    if (flags & QP_REJECT_SHORT)
        p->reject_short = true;
    if (flags & QP_FLOAT6_PACKED)
        p->float6_packed = true;
    p->threads = threads;
    return 0;
}

/* A shape (a sequence of at most DTCAST_MAX_DIMS ints) into t. */
static int parse_shape(PyObject *obj, dtcast_tensor *t)
{
    PyObject *shape = PySequence_Tuple(obj);
    if (!shape)
        return -1;
    Py_ssize_t n = PyTuple_Size(shape);
    if (n > DTCAST_MAX_DIMS) {
        Py_DECREF(shape);
        quant_fail(DTCAST_ERR_BAD_SHAPE, "more than 8 dimensions");
        return -1;
    }
    t->ndim = (int)n;
    for (Py_ssize_t i = 0; i < n; i++)
        t->shape[i] = PyLong_AsLongLong(PyTuple_GetItem(shape, i));
    Py_DECREF(shape);
    return PyErr_Occurred() ? -1 : 0;
}

static PyObject *tensor_tuple(const dtcast_tensor *t)
{
    PyObject *shape = PyTuple_New(t->ndim);
    if (!shape)
        return NULL;
    for (int i = 0; i < t->ndim; i++) {
        PyObject *d = PyLong_FromLongLong(t->shape[i]);
        if (!d) {
            Py_DECREF(shape);
            return NULL;
        }
        PyTuple_SetItem(shape, i, d);
    }
    return Py_BuildValue("(iNn)", (int)t->type, shape, (Py_ssize_t)t->bytes);
}

/* quant_layout(x_type, x_shape, params) -> ((type, shape, bytes) of codes, scales,
 * global_scale); global_scale's type is 0 when the scheme has none. */
PyObject *dtc_quant_layout(PyObject *self, PyObject *args)
{
    (void)self;
    int x_type;
    PyObject *shape_obj, *params_obj;
    if (!PyArg_ParseTuple(args, "iOO:quant_layout", &x_type, &shape_obj, &params_obj))
        return NULL;
    dtcast_quant_params p;
    if (parse_params(params_obj, &p) < 0)
        return NULL;
    dtcast_tensor x = {0}, codes = {0}, scales = {0}, gs = {0};
    x.type = (dtcast_type)x_type;
    if (parse_shape(shape_obj, &x) < 0)
        return NULL;
    dtcast_error e;
    if (dtcast_quantize_layout(&codes, &scales, &gs, &x, &p, &e) != DTCAST_OK)
        return quant_raise(&e);
    return Py_BuildValue("(NNN)", tensor_tuple(&codes), tensor_tuple(&scales), tensor_tuple(&gs));
}

/* A buffer's memory as t's data and bytes. */
static int get_buffer(PyObject *obj, Py_buffer *view, int writable, dtcast_tensor *t)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_SIMPLE | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    t->data = view->buf;
    t->bytes = (size_t)view->len;
    return 0;
}

/* Releases the views whose bits are set in have (bit k: the k-th view). */
static void release_views(int have, Py_buffer *a, Py_buffer *b, Py_buffer *c, Py_buffer *d)
{
    Py_buffer *const v[4] = {a, b, c, d};
    for (int k = 0; k < 4; k++)
        if (have >> k & 1)
            PyBuffer_Release(v[k]);
}

/* quantize(x, x_type, x_shape, params, codes, scales, global_scale or None): the outputs are
 * writable buffers of at least quant_layout's bytes. */
PyObject *dtc_quantize(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *x_obj, *shape_obj, *params_obj, *codes_obj, *scales_obj, *gs_obj;
    int x_type;
    if (!PyArg_ParseTuple(args, "OiOOOOO:quantize", &x_obj, &x_type, &shape_obj, &params_obj,
                          &codes_obj, &scales_obj, &gs_obj))
        return NULL;
    dtcast_quant_params p;
    if (parse_params(params_obj, &p) < 0)
        return NULL;
    dtcast_tensor x = {0}, codes = {0}, scales = {0}, gs = {0};
    x.type = (dtcast_type)x_type;
    if (parse_shape(shape_obj, &x) < 0)
        return NULL;
    Py_buffer xv, cv, sv, gv;
    int have = 0; /* buffers taken: x 1, codes 2, scales 4, gs 8 */
    PyObject *result = NULL;
    if (get_buffer(x_obj, &xv, 0, &x) < 0)
        goto done;
    have |= 1;
    if (get_buffer(codes_obj, &cv, 1, &codes) < 0)
        goto done;
    have |= 2;
    if (get_buffer(scales_obj, &sv, 1, &scales) < 0)
        goto done;
    have |= 4;
    if (gs_obj != Py_None) {
        if (get_buffer(gs_obj, &gv, 1, &gs) < 0)
            goto done;
        have |= 8;
    }
    dtcast_error e;
    dtcast_status s;
    Py_BEGIN_ALLOW_THREADS
    s = dtcast_quantize(&codes, &scales, (have & 8) ? &gs : NULL, &x, &p, &e);
    Py_END_ALLOW_THREADS
    if (s != DTCAST_OK)
        quant_raise(&e);
    else
        result = Py_NewRef(Py_None);
done:
    release_views(have, &xv, &cv, &sv, &gv);
    return result;
}

/* dequantize(y, y_type, codes, codes_type, codes_shape, scales, scales_type, scales_shape,
 * global_scale or None, params): y a writable buffer. */
PyObject *dtc_dequantize(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *y_obj, *codes_obj, *cshape_obj, *scales_obj, *sshape_obj, *gs_obj, *params_obj;
    int y_type, c_type, s_type;
    if (!PyArg_ParseTuple(args, "OiOiOOiOOO:dequantize", &y_obj, &y_type, &codes_obj, &c_type,
                          &cshape_obj, &scales_obj, &s_type, &sshape_obj, &gs_obj, &params_obj))
        return NULL;
    dtcast_quant_params p;
    if (parse_params(params_obj, &p) < 0)
        return NULL;
    dtcast_tensor y = {0}, codes = {0}, scales = {0}, gs = {0};
    y.type = (dtcast_type)y_type;
    codes.type = (dtcast_type)c_type;
    scales.type = (dtcast_type)s_type;
    if (parse_shape(cshape_obj, &codes) < 0 || parse_shape(sshape_obj, &scales) < 0)
        return NULL;
    Py_buffer yv, cv, sv, gv;
    int have = 0;
    PyObject *result = NULL;
    if (get_buffer(y_obj, &yv, 1, &y) < 0)
        goto done;
    have |= 1;
    if (get_buffer(codes_obj, &cv, 0, &codes) < 0)
        goto done;
    have |= 2;
    if (get_buffer(scales_obj, &sv, 0, &scales) < 0)
        goto done;
    have |= 4;
    if (gs_obj != Py_None) {
        gs.type = DTCAST_FLOAT32;
        gs.ndim = 1;
        gs.shape[0] = 1;
        if (get_buffer(gs_obj, &gv, 0, &gs) < 0)
            goto done;
        have |= 8;
    }
    dtcast_error e;
    dtcast_status s;
    Py_BEGIN_ALLOW_THREADS
    s = dtcast_dequantize(&y, &codes, &scales, (have & 8) ? &gs : NULL, &p, &e);
    Py_END_ALLOW_THREADS
    if (s != DTCAST_OK)
        quant_raise(&e);
    else
        result = Py_NewRef(Py_None);
done:
    release_views(have, &yv, &cv, &sv, &gv);
    return result;
}
