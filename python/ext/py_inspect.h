/*
 * dtcast._core's inspect (python/ext/inspect.c): files/inspect.c's dt_inspect_path in process,
 * its JSON document handed to dtcast.inspect (python/dtcast/_inspect.py). DTC_INSPECT_METHODS
 * goes into module.c's method table.
 */
#ifndef DTCAST_PY_PY_INSPECT_H
#define DTCAST_PY_PY_INSPECT_H

#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x030B0000
#endif
#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

PyObject *dtc_inspect(PyObject *self, PyObject *args);

#define DTC_INSPECT_METHODS                                                                    \
    {"inspect", dtc_inspect, METH_VARARGS,                                                     \
     "inspect(path: bytes, progress=None) -> (status, message: bytes, json_text)"},

#endif
