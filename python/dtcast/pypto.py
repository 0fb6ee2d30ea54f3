"""Ascend PyPTO ``pypto.cast`` (docs/pypto.md): its supported pairs, CastMode defaults and
fallbacks, saturating integers, shapes of 1 to 4 dimensions."""

from ._cast import _source, convert_array, options
from ._types import lookup
from . import _core

__all__ = ["cast"]


def cast(x, to, *, mode="CAST_NONE", src=None, out=None, threads=0):
    """pypto.cast(x, to, mode): mode is a CastMode name ("CAST_NONE", "CAST_RINT", "CAST_ROUND",
    "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC", "CAST_ODD"); the pair and the shape are checked as
    pypto checks them (dtcast.Error)."""
    arr, source = _source(x, src)
    target = lookup(to)
    opts = _core.pypto_options(target.code, source.code, str(mode), tuple(arr.shape),
                               options(threads=threads))
    return convert_array(arr, source, target, opts, out=out)[0]
