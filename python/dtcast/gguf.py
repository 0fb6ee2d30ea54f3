"""dtcast.gguf: ggml's block types (llama.cpp's GGUF tensors), as gguf-py's ``gguf.quants`` offers
them, bit-exact with ggml's reference C (docs/gguf.md, "Block types").

    >>> import numpy as np, dtcast.gguf as G
    >>> x = np.random.default_rng(0).standard_normal((4, 256), dtype=np.float32)
    >>> q = G.quantize(x, "q4_K")           # uint8 rows: (4, 144)
    >>> G.dequantize(q, "q4_K").shape       # float32 (4, 256)
    (4, 256)
    >>> G.dequantize(q, "q4_K", dtype="bfloat16").dtype   # one rounding, no float32 detour
    dtype(bfloat16)

A type is ggml's name in any letter case ("q8_0", "Q4_K", "iq2_xxs", "bf16"), its code, or a
``gguf.GGMLQuantizationType``. Rows run along the last axis, whose length must be a multiple of
the type's block.
"""

import numpy as np

from . import _core
from ._cast import as_array
from ._errors import Error, Status
from ._types import lookup, of_dtype

__all__ = ["quantize", "dequantize", "block_size", "type_size", "type_name", "type_code",
           "types", "QuantizeStats"]

_TYPES = {code: (name, block, size, support) for code, name, block, size, support
          in _core.ggml_types()}
_BY_NAME = {name.upper(): code for code, (name, _, _, _) in _TYPES.items()}
_INPUTS = ("float32", "bfloat16", "float16", "float64")


class QuantizeStats(tuple):
    """What ``quantize(..., stats=True)`` met that ggml leaves undefined or refuses:
    ``nonfinite`` (NaN / infinite inputs, quantized as 0), ``first_nonfinite`` (flat index of
    the first, or None) and ``invalid_scales`` (blocks ggml's validation refuses: an infinite
    float16 scale, an MXFP4 exponent 0xFF)."""

    __slots__ = ()

    def __new__(cls, nonfinite, first_nonfinite, invalid_scales):
        return super().__new__(cls, (nonfinite, first_nonfinite, invalid_scales))

    nonfinite = property(lambda self: self[0])
    first_nonfinite = property(lambda self: self[1])
    invalid_scales = property(lambda self: self[2])

    def __repr__(self):
        return (f"QuantizeStats(nonfinite={self[0]}, first_nonfinite={self[1]}, "
                f"invalid_scales={self[2]})")


def type_code(t):
    """ggml's code of a type given by name (any case), code or gguf.GGMLQuantizationType."""
    if isinstance(t, str):
        code = _BY_NAME.get(t.upper())
        if code is None:
            raise Error(f"unknown ggml type {t!r}", Status.UNKNOWN_TYPE)
        return code
    if isinstance(t, (int, np.integer)) and not isinstance(t, bool):
        if int(t) not in _TYPES:
            raise Error(f"ggml type {int(t)} is not one ggml defines", Status.UNKNOWN_TYPE)
        return int(t)
    raise Error(f"a ggml type is a name or a code, not {t!r}", Status.INVALID_ARGUMENT)


def type_name(t):
    """ggml's name of a type ("Q4_K")."""
    return _TYPES[type_code(t)][0]


def block_size(t):
    """Elements per block (1 for the element-wise types)."""
    return _TYPES[type_code(t)][1]


def type_size(t):
    """Bytes per block."""
    return _TYPES[type_code(t)][2]


def types():
    """Every type ggml defines: a list of dicts (code, name, block, bytes, quantize,
    dequantize), quantize / dequantize telling what dtcast does with it."""
    return [{"code": c, "name": n, "block": b, "bytes": s, "quantize": bool(f & 1),
             "dequantize": bool(f & 2)} for c, (n, b, s, f) in sorted(_TYPES.items())]


def _check_threads(threads):
    if not isinstance(threads, (int, np.integer)) or isinstance(threads, bool) or threads < 0:
        raise Error(f"threads must be an integer >= 0, not {threads!r}", Status.INVALID_ARGUMENT)
    return int(threads)


def quantize(x, type, *, threads=0, stats=False):
    """x (float32, bfloat16, float16 or float64 [..., K], K a multiple of the block) as ggml type
    `type`: uint8 rows [..., K / block * bytes], the bytes ggml's reference quantizer writes
    (gguf.quants.quantize's for the types it has). stats=True returns (rows, QuantizeStats)."""
    code = type_code(type)
    name, block, size, support = _TYPES[code]
    if not support & 1:
        raise NotImplementedError(f"dtcast does not quantize to ggml type {name}")
    arr = as_array(x)
    t = of_dtype(arr.dtype)
    if t is None or t.name not in _INPUTS:
        raise Error(f"quantize takes float32, bfloat16, float16 or float64 arrays, not "
                    f"{arr.dtype}", Status.UNSUPPORTED)
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    arr = np.ascontiguousarray(arr)
    shape = arr.shape if arr.ndim else (1,)
    if shape[-1] % block:
        raise Error(f"{name}: the last dimension ({shape[-1]}) is not a multiple of the block "
                    f"({block})", Status.BAD_SHAPE)
    out = np.empty(shape[:-1] + (shape[-1] // block * size,), np.uint8)
    n, first, invalid = _core.ggml_quantize(arr, t.code, shape, code, out, _check_threads(threads))
    if stats:
        return out, QuantizeStats(n, None if first == (1 << 64) - 1 else first, invalid)
    return out


def dequantize(data, type, *, dtype=np.float32, threads=0):
    """uint8 rows of ggml type `type` [..., row_bytes] as `dtype` (float32, bfloat16, float16 or
    float64) [..., row_bytes / bytes * block]: float32 is ggml's to_float bit for bit; the
    others round the exact value once."""
    code = type_code(type)
    name, block, size, support = _TYPES[code]
    if not support & 2:
        raise NotImplementedError(f"dtcast does not dequantize ggml type {name}")
    raw = np.ascontiguousarray(np.asarray(data))
    if raw.dtype != np.uint8:
        if block != 1:
            raise Error(f"{name} rows are uint8 arrays, not {raw.dtype}", Status.INVALID_ARGUMENT)
        raw = raw.view(np.uint8).reshape(raw.shape[:-1] + (-1,)) if raw.ndim else \
            raw.reshape(1).view(np.uint8)
    if raw.ndim == 0:
        raw = raw.reshape(1)
    if raw.shape[-1] % size:
        raise Error(f"{name}: a row of {raw.shape[-1]} bytes is not a whole number of "
                    f"{size}-byte blocks", Status.BAD_SHAPE)
    t = lookup(dtype)
    if t.name not in _INPUTS:
        raise Error(f"dequantize writes float32, bfloat16, float16 or float64, not {t.name}",
                    Status.UNSUPPORTED)
    shape = raw.shape[:-1] + (raw.shape[-1] // size * block,)
    out = np.empty(shape, t.dtype)
    _core.ggml_dequantize(out, t.code, shape, code, raw, _check_threads(threads))
    return out
