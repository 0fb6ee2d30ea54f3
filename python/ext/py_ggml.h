/*
 * dtcast._core's ggml block-type functions (python/ext/ggml.c): dtcast_ggml_quantize and
 * dtcast_ggml_dequantize for dtcast.gguf.quantize / dequantize (python/dtcast/gguf.py).
 * DTC_GGML_METHODS goes into module.c's method table.
 */
#ifndef DTCAST_PY_PY_GGML_H
#define DTCAST_PY_PY_GGML_H

#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x030B0000
#endif
#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

PyObject *dtc_ggml_types(PyObject *self, PyObject *args);
PyObject *dtc_ggml_quantize(PyObject *self, PyObject *args);
PyObject *dtc_ggml_dequantize(PyObject *self, PyObject *args);
PyObject *dtc_gguf_read(PyObject *self, PyObject *args);

#define DTC_GGML_METHODS                                                                       \
    {"ggml_types", dtc_ggml_types, METH_NOARGS,                                                \
     "ggml_types() -> [(code, name, block, bytes, support)]"},                                 \
        {"ggml_quantize", dtc_ggml_quantize, METH_VARARGS,                                     \
         "ggml_quantize(x, x_type, x_shape, code, dst, threads) -> (nonfinite, first, "        \
         "invalid_scales)"},                                                                   \
        {"ggml_dequantize", dtc_ggml_dequantize, METH_VARARGS,                                 \
         "ggml_dequantize(y, y_type, y_shape, code, src, threads) -> None"},                   \
        {"gguf_read", dtc_gguf_read, METH_VARARGS,                                             \
         "gguf_read(path) -> (files, big_endian, metadata, tensors)"},

#endif
