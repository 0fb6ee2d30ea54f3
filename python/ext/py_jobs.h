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

#include <stdint.h>

PyObject *dtc_cast_files(PyObject *self, PyObject *args);
PyObject *dtc_quantize_checkpoint(PyObject *self, PyObject *args);
PyObject *dtc_dequantize_checkpoint(PyObject *self, PyObject *args);
PyObject *dtc_convert_layout(PyObject *self, PyObject *args);
PyObject *dtc_gguf_dequantize(PyObject *self, PyObject *args);
PyObject *dtc_gguf_write(PyObject *self, PyObject *args);

/* A progress callable (or None) for a job that runs with the GIL released and takes a
 * dt_progress_fn: py_progress_begin returns its context (NULL with an exception set: progress
 * is not callable); py_progress_call is the dt_progress_fn (a few calls a second; the callable's
 * exception, or a signal, cancels); py_progress_end frees the context and returns -1 with the
 * callable's exception restored (after ok, the last call says done == total), else 0. */
void *py_progress_begin(PyObject *progress);
int py_progress_call(void *ctx, uint64_t done, uint64_t total);
int py_progress_end(void *ctx, int ok);

#define DTC_JOBS_METHODS                                                                       \
    {"cast_files", dtc_cast_files, METH_VARARGS,                                               \
     "cast_files(in, out, params, progress) -> (error, report, warnings)"},         \
        {"quantize_checkpoint", dtc_quantize_checkpoint, METH_VARARGS,                         \
         "quantize_checkpoint(in, out, params, progress) -> (error, report, warnings)"},    \
        {"dequantize_checkpoint", dtc_dequantize_checkpoint, METH_VARARGS,                     \
         "dequantize_checkpoint(in, out, params, progress) -> (error, report, warnings)"},    \
        {"convert_layout", dtc_convert_layout, METH_VARARGS,                                   \
         "convert_layout(in, out, params, progress) -> (error, report, warnings)"},           \
        {"gguf_dequantize", dtc_gguf_dequantize, METH_VARARGS,                                 \
         "gguf_dequantize(in, out, params, progress) -> (error, report, warnings)"},          \
        {"gguf_write", dtc_gguf_write, METH_VARARGS,                                           \
         "gguf_write(in, out, params, progress) -> (error, report, warnings)"},

#endif
