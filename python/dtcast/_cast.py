"""dtcast.cast and the helpers around it: arrays in, arrays out, one exact rounding.

An input is anything numpy can see as an array without copying its bytes: numpy and ml_dtypes
arrays, torch CPU tensors (bfloat16 and float8 included), objects with ``__dlpack__`` or
``__array__``, buffer-protocol objects (memoryview, bytes) and Python scalars or lists. The
output is a numpy array of the target's dtype (ml_dtypes for the types numpy lacks) with the
input's shape; with ``packed=True`` a sub-byte target (int4, uint4, int2, uint2, uint1, int1,
float4_e2m1fn, and float6 four in three bytes) is a uint8 array in the ONNX / safetensors packed
layout instead: the input's leading dimensions kept and the last one packed, as torch's
``float4_e2m1fn_x2`` does ((3, 5, 8) float4 -> (3, 5, 4) bytes), when the last dimension packs
into whole bytes; otherwise (an odd last dimension of int4, a 0-d input) the bytes of the
row-major stream, 1-D.
"""

import numpy as np

from . import _core
from ._errors import Error, Status
from ._types import lookup, of_dtype

__all__ = ["cast", "options", "as_array", "Report"]

_ROUND = {
    "default": 0, "rne": 1, "nearest_even": 1, "rint": 1, "round": 2, "rna": 2,
    "nearest_away": 2, "floor": 3, "ceil": 4, "trunc": 5, "odd": 6, "stochastic": 7,
}
_OVERFLOW = {"ieee": 0, "saturate": 1, "inf": 2}
_INT_OVERFLOW = {"wrap": 0, "saturate": 1}

# Bits of the options tuple's flags (python/ext/module.c).
DISCARD_IMAG, STRING_BOOL_NUMERIC, FLOAT4_NAN_MAX, VIA_FLOAT32, FLOAT6_PACKED, STRING_ORT = (
    1, 2, 4, 8, 16, 32)
# Layout flags of _core.convert: the side stores sub-byte elements one per byte.
SRC_BYTES, DST_BYTES = 1, 2


def _choice(table, value, what):
    try:
        return table[value.lower() if isinstance(value, str) else value]
    except (KeyError, AttributeError):
        names = ", ".join(k for k in table if k != "default")
        raise Error(f"unknown {what} {value!r} (one of: {names})", Status.INVALID_ARGUMENT) from None


def options(*, round="default", saturate=False, overflow=None, int_overflow="wrap", threads=0,
            discard_imaginary=False, string_to_bool_numeric=False, float4_nan_as_max=False,
            via_float32=False, float6_packed=False, string_style="python", seed=None):
    """The options tuple _core takes, from keyword arguments (names as in dtcast.cast)."""
    if seed is None:
        seed = 0
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or \
            not 0 <= int(seed) < 1 << 64:
        raise Error(f"seed must be an integer from 0 to 2**64 - 1, not {seed!r}",
                    Status.INVALID_ARGUMENT)
    if overflow is None:
        overflow = "saturate" if saturate else "ieee"
    elif saturate and overflow != "saturate":
        raise Error(f"saturate=True contradicts overflow={overflow!r}", Status.INVALID_ARGUMENT)
    if not isinstance(threads, (int, np.integer)) or threads < 0:
        raise Error(f"threads must be an integer >= 0, not {threads!r}", Status.INVALID_ARGUMENT)
    flags = ((DISCARD_IMAG if discard_imaginary else 0)
             | (STRING_BOOL_NUMERIC if string_to_bool_numeric else 0)
             | (FLOAT4_NAN_MAX if float4_nan_as_max else 0)
             | (VIA_FLOAT32 if via_float32 else 0)
             | (FLOAT6_PACKED if float6_packed else 0)
             | (STRING_ORT if _choice({"python": 0, "ort": 1}, string_style, "string_style") else 0))
    return (_choice(_ROUND, round, "rounding mode"), _choice(_OVERFLOW, overflow, "overflow policy"),
            _choice(_INT_OVERFLOW, int_overflow, "int_overflow policy"), int(threads), flags,
            int(seed))


def _torch_to_numpy(t):
    """A torch CPU tensor as a numpy array over the same memory (any dtype)."""
    import torch

    if t.device.type != "cpu":
        raise Error(f"a torch tensor on {t.device} (dtcast converts CPU memory; call .cpu())",
                    Status.INVALID_ARGUMENT)
    t = t.detach()
    if t.is_conj():
        t = t.resolve_conj()
    if not t.is_contiguous():
        t = t.contiguous()
    name = str(t.dtype).split(".")[-1]
    if name == "float4_e2m1fn_x2":
        raise Error("torch.float4_e2m1fn_x2 holds two elements per byte: pass "
                    "t.view(torch.uint8) with src='float4_e2m1fn' to dtcast.unpack",
                    Status.UNSUPPORTED)
    t_type = lookup(t.dtype)
    if t_type.dtype.kind in "biufc" and t_type.dtype.itemsize * 8 == t_type.bits:
        try:
            return t.numpy()
        except TypeError:
            pass
    raw = t.view(torch.uint8).numpy() if t.element_size() == 1 else \
        t.reshape(-1).view(torch.uint8).numpy()
    return raw.view(t_type.dtype).reshape(tuple(t.shape))


def as_array(x):
    """x as a numpy array without copying where possible."""
    if isinstance(x, np.ndarray):
        return x
    if type(x).__module__.startswith("torch") and hasattr(x, "device"):
        return _torch_to_numpy(x)
    if hasattr(x, "__array__") or hasattr(x, "__array_interface__"):
        return np.asarray(x)
    if hasattr(x, "__dlpack__"):
        return np.from_dlpack(x)
    if isinstance(x, (bytes, bytearray, memoryview)):
        return np.frombuffer(x, dtype=np.uint8) if not isinstance(x, memoryview) else np.asarray(x)
    return np.asarray(x)


def _source(x, src):
    """(array, source type) for dtcast.cast's x and src."""
    arr = as_array(x)
    if arr.dtype.byteorder == ">" and arr.dtype.itemsize > 1:  # the library reads little-endian
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    if src is None:
        t = of_dtype(arr.dtype)
        if t is None:
            raise Error(f"dtcast has no type for numpy dtype {arr.dtype}; give src=",
                        Status.UNKNOWN_TYPE)
        if arr.dtype.kind == "O" and arr.size and not isinstance(arr.flat[0], (str, bytes)):
            raise Error("an object array is taken as strings; its elements are not str",
                        Status.INVALID_ARGUMENT)
        return arr, t
    t = lookup(src)
    if t.code == 8:
        return arr, t
    width = 1 if t.sub_byte else t.dtype.itemsize
    if arr.dtype == t.dtype:
        return arr, t
    if arr.dtype == np.uint8 and arr.ndim == 1 and width > 1 and arr.size % width == 0:
        # raw bytes (bytes, memoryview, a uint8 buffer): the elements of src, little-endian
        return np.ascontiguousarray(arr).view(t.dtype), t
    if arr.dtype.itemsize != width or arr.dtype.kind == "O":
        raise Error(f"src={t.name} needs {width}-byte elements; the array's dtype {arr.dtype} has "
                    f"{arr.dtype.itemsize}", Status.INVALID_ARGUMENT)
    if not arr.flags.c_contiguous:
        arr = arr.copy(order="C")
    return arr.view(t.dtype), t


class Report:
    """What a conversion did to the values (the CLI's --report), as attributes: the counts
    ``elements``, ``values`` (complex parts count one each), ``exact``, ``rounded``,
    ``underflow``, ``nan``, ``overflow`` (the sum of ``overflow_inf``, ``overflow_nan``,
    ``overflow_max``, ``overflow_wrap``, ``overflow_saturate``), ``nan_out``, ``finite``; the
    largest errors ``max_abs_error`` and ``max_rel_error`` as (error, value index, source,
    result) or None; ``sqnr_db``. ``str(report)`` is the CLI's text; ``asdict()`` all of it."""

    def __init__(self, fields):
        self._fields = dict(fields)
        self.__dict__.update(fields)

    @property
    def overflow(self):
        return (self.overflow_inf + self.overflow_nan + self.overflow_max + self.overflow_wrap
                + self.overflow_saturate)

    def asdict(self):
        return dict(self._fields)

    def __str__(self):
        return self.text

    def __repr__(self):
        return (f"Report(values={self.values}, exact={self.exact}, rounded={self.rounded}, "
                f"underflow={self.underflow}, overflow={self.overflow}, nan={self.nan}, "
                f"sqnr_db={self.sqnr_db:.2f})")


def _packed_shape(shape, bits, nbytes):
    """The shape of a packed result: the leading dimensions and the last one in bytes when the
    last dimension's elements fill whole bytes (so each row is its own bytes), else 1-D."""
    if len(shape) >= 1 and (shape[-1] * bits) % 8 == 0:
        return tuple(shape[:-1]) + (shape[-1] * bits // 8,)
    return (nbytes,)


def _output(out, shape, target, packed_bytes, packed_bits=0):
    """The array to write: the caller's out= after checking it, else a new one."""
    if out is None:
        if packed_bytes is not None:
            return np.empty(_packed_shape(shape, packed_bits, packed_bytes), dtype=np.uint8)
        return np.empty(shape, dtype=target.dtype)
    if not isinstance(out, np.ndarray):
        out = as_array(out)
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise Error("out= must be a writeable C-contiguous array", Status.INVALID_ARGUMENT)
    if packed_bytes is not None:
        if out.nbytes != packed_bytes:
            raise Error(f"out= holds {out.nbytes} bytes; the packed {target.name} result needs "
                        f"{packed_bytes}", Status.INVALID_ARGUMENT)
        return out
    if out.dtype != target.dtype:
        raise Error(f"out= has dtype {out.dtype}; the target {target.name} needs {target.dtype}",
                    Status.INVALID_ARGUMENT)
    if out.shape != tuple(shape):
        raise Error(f"out= has shape {out.shape}; the input has {tuple(shape)}",
                    Status.INVALID_ARGUMENT)
    return out


def convert_array(arr, source, target, opts, *, packed=False, out=None, report=False):
    """The conversion under an options tuple: arr (of type source) -> a new or the caller's
    array of type target. Returns (result, report dict or None)."""
    float6 = target.code in (27, 28)
    if packed and not (target.sub_byte or float6):
        packed = False  # packing concerns sub-byte targets only; others have one layout
    if packed and float6:
        opts = opts[:4] + (opts[4] | FLOAT6_PACKED,) + opts[5:]
    elif not packed and (target.code in (27, 28) or source.code in (27, 28)):
        opts = opts[:4] + (opts[4] & ~FLOAT6_PACKED,) + opts[5:]
    if not arr.flags.c_contiguous:  # (np.ascontiguousarray would make a 0-d array 1-d)
        arr = arr.copy(order="C")
    count = arr.size
    packed_bytes = _core.storage_size(target.code, count, bool(opts[4] & FLOAT6_PACKED)) \
        if packed else None
    if target.code == 8:  # -> strings
        if source.code == 8:
            strings = [str(s) for s in arr.reshape(-1)]
        else:
            layout_src = arr.view(np.uint8) if source.sub_byte else arr
            if source.sub_byte:
                tmp = np.empty(_core.storage_size(source.code, count, False), dtype=np.uint8)
                _core.convert(layout_src, source.code, tmp, source.code, count, opts, SRC_BYTES, False)
                layout_src = tmp
            strings = _core.to_strings(layout_src, source.code, count, opts)
        res = np.array(strings, dtype=np.str_).reshape(arr.shape) if strings else \
            np.empty(arr.shape, dtype=np.str_)
        if out is not None:
            out[...] = res
            return out, None
        return res, None
    result = _output(out, arr.shape, target, packed_bytes, 6 if float6 else target.bits)
    if source.code == 8:  # strings ->
        items = [s.decode() if isinstance(s, bytes) else str(s) for s in arr.reshape(-1)]
        _core.from_strings(items, result.reshape(-1).view(np.uint8), target.code, opts,
                           0 if packed else DST_BYTES)
        return result, None
    layout = (SRC_BYTES if source.sub_byte else 0) | (0 if packed else DST_BYTES)
    if float6 and not packed:
        layout &= ~DST_BYTES
    rep = _core.convert(arr.reshape(-1).view(np.uint8) if arr.size else b"", source.code,
                        result.reshape(-1).view(np.uint8), target.code, count, opts, layout,
                        bool(report))
    return result, (Report(rep) if rep is not None else None)


def cast(x, to, *, src=None, round=None, saturate=False, overflow=None, int_overflow="wrap",
         packed=False, out=None, threads=0, report=False, discard_imaginary=False,
         via_float32=False, seed=None):
    """Converts x to type ``to``, rounding each value once.

    x: an array-like (numpy, ml_dtypes, torch CPU, dlpack, buffer, list); ``src`` names its type
    when the dtype does not (a uint8 array of float8 codes: ``src="float8_e4m3fn"``).
    to: a type name (ml_dtypes/numpy spelling, dtcast's or ONNX's), a dtype, or a torch dtype.
    round: None (the default: "rne" for float targets, "trunc" for integer targets as numpy's
    astype does), "rne" (nearest, ties to even), "round" (ties away), "floor", "ceil", "trunc",
    "odd", or "stochastic" (up or down at random, up with probability equal to the dropped
    fraction; docs/conversion.md, "Stochastic rounding").
    seed: round="stochastic"'s seed, an integer 0 .. 2**64 - 1; None means 0. Element i of x
    (in C order) always draws the same bits for a seed: the same bytes on every thread count.
    saturate: float results beyond the largest finite value become +-max (and +-Inf inputs too),
    instead of Inf or NaN; ``overflow="ieee"|"saturate"|"inf"`` says the same in full.
    int_overflow: "wrap" (modulo 2^bits, NaN -> 0) or "saturate" (clamp, NaN -> 0).
    packed: sub-byte targets in the ONNX / safetensors packed layout (uint8), not one per byte:
        x's leading dimensions and its last one in bytes when that packs evenly, else 1-D.
    out: an array to write into (the target's dtype and x's shape; for packed, the bytes).
    threads: 0 = the library decides (large tensors use every core), 1 = this thread.
    report: also return a Report of what happened to the values.

    Returns the array, or (array, Report) with report=True. Raises dtcast.Error.
    """
    round_name = "default" if round is None else round
    stochastic = isinstance(round_name, str) and round_name.lower() == "stochastic"
    if seed is not None and not stochastic:
        raise Error("seed is for round=\"stochastic\"", Status.INVALID_ARGUMENT)
    if report and stochastic:
        raise Error("report=True predicts each value's rounding: not with round=\"stochastic\"",
                    Status.INVALID_ARGUMENT)
    arr, source = _source(x, src)
    target = lookup(to)
    opts = options(round=round_name, saturate=saturate, overflow=overflow,
                   int_overflow=int_overflow, threads=threads, discard_imaginary=discard_imaginary,
                   via_float32=via_float32, seed=seed)
    result, rep = convert_array(arr, source, target, opts, packed=packed, out=out, report=report)
    return (result, rep) if report else result
