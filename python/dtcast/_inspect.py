"""dtcast.inspect: what a tensor file or a checkpoint holds, from its headers alone.

The C library reads the file in this process (files/inspect.c: the same parsers, and so the
same checks and messages, as reading the file; never the tensor data) and builds the document
``dtcast inspect --json`` prints (docs/files.md, "dtcast inspect", has its schema); this module
parses it and gives the types their Python names.
"""

import json
import os

from . import _core
from ._errors import Error, Status

__all__ = ["inspect"]


def _py_name(c_name):
    if c_name is None:
        return None
    try:
        from ._types import _PY_NAME
    except ImportError:  # numpy or ml_dtypes missing: dtcast's own names
        return c_name
    return _PY_NAME.get(c_name, c_name)


def inspect(path, *, strict=True, progress=None):
    """The tensors of ``path`` (a .npy, a .pb, a .safetensors file, a
    ``*.safetensors.index.json``, a model folder, an ONNX model or a GGUF file) as a dict:

    - ``path``, ``kind`` ("npy", "pb", "safetensors", "index", "folder", "onnx", "gguf"),
      ``valid`` (and ``opset`` for an ONNX model);
    - ``files``: one dict per file read (``path``, ``kind``, ``ok``, ``size``, ``data_start``,
      ``tensors``, ``metadata``: the safetensors ``__metadata__`` dict or None);
    - ``index``: ``{"path", "entries", "total_size"}`` or None;
    - ``tensors``: ``name``, ``dtype`` (the package's type name: ``"float8_e4m3fn"``),
      ``safetensors_dtype`` (``"F8_E4M3"``, or None), ``shape`` (list), ``elements``,
      ``bytes``, ``offset`` (absolute byte offset of the data in ``file``; None for a .pb's
      typed field), ``file``, ``data_offsets`` (safetensors) or ``storage`` (.npy, .pb), and
      ``quant``: None or ``{"tensor", "layout", "role"}``;
    - ``quantized``: one dict per quantized tensor (``tensor``, ``layout``, ``element``,
      ``shape``, ``granularity``, ``block``, ``codes``, ``scales``, ``global_scale``,
      ``input_scales``, ``shape_tensor``);
    - ``totals``: ``{"dtype", "tensors", "elements", "bytes"}`` per type, and ``elements``,
      ``bytes`` over all;
    - ``problems``: ``{"severity": "error" | "warning", "file", "message"}``.

    A file with an error raises :class:`dtcast.Error` (the message names the file and the byte
    offset; ``e.result`` holds the dict of what could be read); with ``strict=False`` the dict
    is returned instead, its errors in ``problems`` and ``valid`` False.

    ``progress``: None (default), a callable ``progress(done_bytes, total_bytes)`` called after
    each file's header is read (the bytes of the files read so far, of all the files; an
    exception it raises stops the inspection and propagates), or True for a tqdm bar when tqdm
    is installed. Only headers are read, so it is quick even on a 100 GB checkpoint.
    """
    try:
        p = os.fsencode(os.fspath(path))
    except TypeError:
        raise TypeError("inspect: expected a str or os.PathLike path, not %s"
                        % type(path).__name__) from None
    if not p:
        raise Error("inspect: an empty path", Status.INVALID_ARGUMENT)
    if b"\0" in p:
        raise Error("inspect: the path holds a NUL byte", Status.INVALID_ARGUMENT)
    from .files import _progress_fn
    fn, close = _progress_fn(progress, "inspect")
    try:
        status, message, text = _core.inspect(p, fn)
    finally:
        if close:
            close()
    message = message.decode("utf-8", "surrogateescape")
    if text is None:
        raise Error(message, status)
    doc = json.loads(text)
    for t in doc["tensors"]:
        t["dtype"] = _py_name(t["dtype"])
    for g in doc["quantized"]:
        g["element"] = _py_name(g["element"])
    for t in doc["totals"]:
        t["dtype"] = _py_name(t["dtype"])
    if status != 0 and strict:
        e = Error(message, status)
        e.result = doc
        raise e
    return doc
