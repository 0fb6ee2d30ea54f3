"""dtcast.bitcast: the bits of an array read as another type of the same width (ONNX BitCast,
numpy's ``view`` for types of one byte or more, and for the sub-byte types too)."""

import numpy as np

from . import _core
from ._cast import SRC_BYTES, DST_BYTES, _source, options
from ._errors import Error, Status
from ._types import lookup

__all__ = ["bitcast"]


def bitcast(x, to, *, src=None):
    """The bits of each element of x, unchanged, as type ``to``: a new array of the target's
    dtype with x's shape.

    Both types must have the same bit width (float32 <-> int32 <-> uint32, float16 <-> bfloat16
    <-> int16, the 8-bit types among themselves and bool, int4 <-> uint4 <-> float4_e2m1fn,
    int2 <-> uint2, complex64 <-> float64 <-> int64, ...); strings have no bits. A sub-byte
    element keeps its 4 (or 2, 1, 6) bits whatever numpy or ml_dtypes keep in the rest of its
    byte; every other element keeps its bytes exactly (a uint8 2 becomes a bool whose byte is 2,
    as ``view`` gives). ``src`` names x's type when its dtype does not (as in dtcast.cast).
    Raises dtcast.Error naming both widths when they differ.
    """
    arr, source = _source(x, src)
    target = lookup(to)
    if source.code == 8 or target.code == 8:
        raise Error(f"bitcast from {source.name} to {target.name}: strings have no bits to "
                    "reinterpret", Status.UNSUPPORTED)
    if not arr.flags.c_contiguous:  # (np.ascontiguousarray would make a 0-d array 1-d)
        arr = arr.copy(order="C")
    count = arr.size
    opts = options()
    flat = arr.reshape(-1).view(np.uint8) if count else np.empty(0, dtype=np.uint8)
    if source.sub_byte and count:  # one element per byte -> the library's packed layout
        packed = np.empty(_core.storage_size(source.code, count, False), dtype=np.uint8)
        _core.convert(flat, source.code, packed, source.code, count, opts, SRC_BYTES, False)
        flat = packed
    bits = np.empty(_core.storage_size(source.code, count, False), dtype=np.uint8)
    _core.bitcast(flat, source.code, bits, target.code, count)
    result = np.empty(arr.shape, dtype=target.dtype)
    if target.sub_byte:
        if count:
            _core.convert(bits, target.code, result.reshape(-1).view(np.uint8), target.code,
                          count, opts, DST_BYTES, False)
    elif count:
        result.reshape(-1).view(np.uint8)[...] = bits
    return result
