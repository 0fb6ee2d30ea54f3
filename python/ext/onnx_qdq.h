/* What python/ext/module.c and python/ext/onnx_qdq.c share. */
#ifndef DTCAST_PY_ONNX_QDQ_H
#define DTCAST_PY_ONNX_QDQ_H

/* Raises dtcast.Error from a dtcast_error (module.c). */
PyObject *dtc_raise_error(const dtcast_error *e);
/* _core.onnx_qdq and _core.onnx_dynamic (onnx_qdq.c). */
PyObject *dtc_onnx_qdq(PyObject *self, PyObject *args);
PyObject *dtc_onnx_dynamic(PyObject *self, PyObject *args);

#endif
