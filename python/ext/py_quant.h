/*
 * dtcast._core's scaled quantization functions (python/ext/quant.c): dtcast_quantize_layout,
 * dtcast_quantize and dtcast_dequantize for dtcast.quantize / dtcast.dequantize
 * (python/dtcast/_quant.py). DTC_QUANT_METHODS goes into module.c's method table.
 */
#ifndef DTCAST_PY_PY_QUANT_H
#define DTCAST_PY_PY_QUANT_H

#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x030B0000
#endif
#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

PyObject *dtc_quant_layout(PyObject *self, PyObject *args);
PyObject *dtc_quantize(PyObject *self, PyObject *args);
PyObject *dtc_dequantize(PyObject *self, PyObject *args);

#define DTC_QUANT_METHODS                                                                      \
    {"quant_layout", dtc_quant_layout, METH_VARARGS,                                           \
     "quant_layout(x_type, x_shape, params) -> ((type, shape, bytes) x 3)"},                   \
        {"quantize", dtc_quantize, METH_VARARGS,                                               \
         "quantize(x, x_type, x_shape, params, codes, scales, global_scale) -> None"},         \
        {"dequantize", dtc_dequantize, METH_VARARGS,                                           \
         "dequantize(y, y_type, codes, codes_type, codes_shape, scales, scales_type, "         \
         "scales_shape, global_scale, params) -> None"},

#endif
