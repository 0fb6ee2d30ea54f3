/*
 * dtcast._core's file jobs (python/ext/jobs.c): files/'s cast, quantize and dequantize jobs in
 * process, for dtcast.convert_file, convert_checkpoint, quantize_checkpoint and
 * dequantize_checkpoint (python/dtcast/files.py). DTC_JOBS_METHODS goes into module.c's method
 * table.
 */
#ifndef DTCAST_PY_PY_JOBS_H
#define DTCAST_PY_PY_JOBS_H

#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x030B0000
#endif
#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

PyObject *dtc_cast_files(PyObject *self, PyObject *args);
PyObject *dtc_quantize_checkpoint(PyObject *self, PyObject *args);
PyObject *dtc_dequantize_checkpoint(PyObject *self, PyObject *args);

#define DTC_JOBS_METHODS                                                                       \
    {"cast_files", dtc_cast_files, METH_VARARGS,                                               \
     "cast_files(in, out, params, progress) -> (error, report, warnings, in_memory)"},         \
        {"quantize_checkpoint", dtc_quantize_checkpoint, METH_VARARGS,                         \
         "quantize_checkpoint(in, out, params, progress) -> (error, report, warnings, _)"},    \
        {"dequantize_checkpoint", dtc_dequantize_checkpoint, METH_VARARGS,                     \
         "dequantize_checkpoint(in, out, params, progress) -> (error, report, warnings, _)"},

#endif
