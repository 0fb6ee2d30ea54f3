/* dtcast._core.inspect (py_inspect.h): the headers of a tensor file or checkpoint read by
 * files/inspect.c, with the GIL released (progress: a callable or None, as the file jobs take); the result goes back as the JSON document the CLI's
 * --json prints, so that dtcast.inspect and `dtcast inspect --json` give the same data. */
#include "py_inspect.h"
#include "py_jobs.h"

#include "files/inspect.h"

#include <stdlib.h>
#include <string.h>

PyObject *dtc_inspect(PyObject *self, PyObject *args)
{
    (void)self;
    const char *path;
    Py_ssize_t path_len;
    PyObject *progress = Py_None;
    if (!PyArg_ParseTuple(args, "y#|O", &path, &path_len, &progress))
        return NULL;
    if ((size_t)path_len != strlen(path)) {
        PyErr_SetString(PyExc_ValueError, "inspect: the path holds a NUL byte");
        return NULL;
    }
    dt_inspect r;
    dt_io_error err = DT_IO_ERROR_INIT, jerr = DT_IO_ERROR_INIT;
    char *text = NULL;
    size_t len = 0;
    dtcast_status st, js;
    void *pctx = py_progress_begin(progress);
    if (!pctx)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    st = dt_inspect_path(path, &r, py_progress_call, pctx, &err);
    js = dt_inspect_json(&r, &text, &len, &jerr);
    dt_inspect_free(&r);
    Py_END_ALLOW_THREADS
    if (py_progress_end(pctx, st == DTCAST_OK) < 0) { /* the callable's exception */
        free(text);
        return NULL;
    }
    if (js != DTCAST_OK)
        return Py_BuildValue("iyO", (int)js, jerr.message, Py_None);
    /* Stray bytes of file names come as \udcXX escapes: the text itself is ASCII-safe UTF-8. */
    PyObject *out = Py_BuildValue("iys#", (int)st, err.message, text, (Py_ssize_t)len);
    free(text);
    return out;
}
