"""dtcast.diff: two tensor files compared tensor by tensor (docs/files.md, "dtcast diff")."""

import json
import os

from . import _core
from ._errors import Error, Status

__all__ = ["diff"]

_NONFINITE = {"inf": float("inf"), "-inf": float("-inf"), "nan": float("nan")}


def _numbers(v):
    """The JSON's "inf", "-inf" and "nan" strings as floats (only where a number belongs)."""
    if isinstance(v, dict):
        return {k: (_NONFINITE.get(x, x) if k in ("error", "a", "b", "sqnr_db", "sum_a2",
                                                    "sum_err2") and isinstance(x, str)
                    else _numbers(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [_numbers(x) for x in v]
    return v


def diff(a, b, *, atol=0.0, rtol=0.0, dequantize=True, threads=0, progress=None):
    """Compares the tensor files a and b (two .npy files, two .safetensors files, or two
    checkpoints: an index or a model folder) in process, streamed, as ``dtcast diff --json``
    does, and returns the same figures as a dict: ``ok`` (every tensor on both sides, the same
    shapes, every value close: |b - a| <= atol + rtol * |a|, NaN matching NaN), ``summary``,
    ``tensors`` (per tensor, by name: state, both sides' dtype / shape / NaN and Inf counts,
    identical, unequal and not-close counts, max_abs and max_rel with their index, sqnr_db) and
    ``worst`` (tensor names, worst first). Sides with scaled quantized tensors are dequantized
    to float32 unless ``dequantize=False``. Raises :class:`dtcast.Error` for a file it cannot
    read.

    ``progress``: None (default) nothing; a callable ``progress(done, total)`` called after
    each tensor (a few times a second at most) with the elements of both sides compared so far
    and their total, from the calling thread; an exception it raises cancels the diff and is
    raised; True shows a tqdm bar when tqdm is installed. The GIL is released while the files
    are compared."""
    def path(p, what):
        try:
            p = os.fspath(p)
        except TypeError:
            raise TypeError("%s: expected a str or os.PathLike path, not %s"
                            % (what, type(p).__name__)) from None
        if not p:
            raise Error("%s: an empty path" % what, Status.INVALID_ARGUMENT)
        return p
    atol = float(atol)
    rtol = float(rtol)
    if not (atol >= 0 and rtol >= 0) or atol == float("inf") or rtol == float("inf"):
        raise Error("atol and rtol must be finite non-negative numbers", Status.INVALID_ARGUMENT)
    from .files import _progress_fn
    fn, close = _progress_fn(progress, "diff")
    try:
        text = _core.diff(path(a, "a"), path(b, "b"), atol, rtol, not dequantize, int(threads),
                          fn)
    finally:
        if close:
            close()
    return _numbers(json.loads(text))
