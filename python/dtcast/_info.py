"""Type queries (types, dtype, finfo, iinfo) and the packed layouts (pack, unpack)."""

import numpy as np

from . import _core
from ._errors import Error, Status
from ._types import lookup, all_types
from ._cast import as_array, convert_array, options, SRC_BYTES, DST_BYTES, FLOAT6_PACKED

__all__ = ["types", "dtype", "finfo", "iinfo", "pack", "unpack"]


def types(kind=None):
    """The names of every type, in the library's order (kind: 'float', 'signed', 'unsigned',
    'bool', 'complex' or 'string' to keep only those)."""
    return [t.name for t in all_types() if kind is None or t.kind == kind]


def dtype(t):
    """The numpy dtype of type t (ml_dtypes for the types numpy lacks)."""
    return lookup(t).dtype


def _scalar(value, t):
    """value (a float exactly representable in t) as a numpy scalar of t."""
    return convert_array(np.array([value], dtype=np.float64), lookup("float64"), t,
                         options())[0][0]


class finfo:
    """Machine limits of a floating-point type, as numpy.finfo / ml_dtypes.finfo give them:
    bits, eps, epsneg, max, min, tiny (= smallest_normal), smallest_subnormal, nexp, nmant,
    maxexp, minexp, dtype; plus what dtcast knows: has_inf, has_nan, has_negative_zero,
    nan_count, bias. Complex types give the limits of their parts."""

    def __init__(self, t):
        ti = lookup(t)
        if ti.kind not in ("float", "complex"):
            raise Error(f"finfo: {ti.name} is not a floating-point type", Status.INVALID_ARGUMENT)
        part = ti if ti.kind == "float" else lookup({"complex32": "float16", "bcomplex32": "bfloat16",
                                                      "complex64": "float32",
                                                      "complex128": "float64"}[ti.name])
        info = part.info
        # without its dtype (float8_e5m3fnu before ml_dtypes 0.7): dtype None, float64 values
        self.dtype = part.dtype if part.has_dtype else None
        scalar = _scalar if part.has_dtype else (lambda value, _t: np.float64(value))
        self.bits = info["bits"]
        self.nexp = info["exponent_bits"]
        self.nmant = info["mantissa_bits"]
        self.bias = info["bias"]
        self.has_inf = info["has_inf"]
        self.has_nan = info["has_nan"]
        self.has_negative_zero = info["has_negative_zero"]
        self.nan_count = info["nan_count"]
        self.max = scalar(info["max"], part)
        self.min = scalar(info["lowest"], part)
        self.tiny = self.smallest_normal = scalar(info["min_normal"], part)
        self.smallest_subnormal = scalar(info["min_subnormal"], part)
        self.eps = scalar(info["epsilon"], part)
        self.epsneg = scalar(info["epsilon"] / 2 if self.nmant else info["epsilon"], part)
        self.maxexp = int(np.frexp(info["max"])[1])
        self.minexp = int(np.frexp(info["min_normal"])[1]) - 1
        self.resolution = 10.0 ** -int(np.floor(self.nmant * np.log10(2))) if self.nmant else 1.0

    def __repr__(self):
        return (f"finfo(max={self.max}, min={self.min}, tiny={self.tiny}, eps={self.eps}, "
                f"smallest_subnormal={self.smallest_subnormal}, nexp={self.nexp}, "
                f"nmant={self.nmant}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer (or bool) type, as numpy.iinfo gives them: bits, min, max, dtype,
    kind ('i' or 'u')."""

    def __init__(self, t):
        ti = lookup(t)
        if ti.kind not in ("signed", "unsigned", "bool"):
            raise Error(f"iinfo: {ti.name} is not an integer type", Status.INVALID_ARGUMENT)
        info = ti.info
        self.dtype = ti.dtype
        self.bits = info["bits"]
        self.min = int(info["int_min"])
        self.max = int(info["int_max"])
        self.kind = "i" if ti.kind == "signed" else "u"

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


def pack(x, type=None):
    """x's elements in the library's packed layout, as a 1-D uint8 array: sub-byte types as ONNX
    and safetensors pack them (int4 two per byte, element 2k in the low nibble; int2/uint2 four per
    byte; uint1 and int1 eight; float6 four in three bytes), an odd tail padded with zero bits;
    every other type its little-endian bytes. ``type`` names x's type when its dtype does not."""
    from ._cast import _source

    arr, t = _source(x, type)
    return convert_array(arr, t, t, options(), packed=True)[0].reshape(-1) if (t.sub_byte or t.code in (27, 28)) \
        else np.ascontiguousarray(arr).reshape(-1).view(np.uint8).copy()


def unpack(data, type, shape=None):
    """The packed bytes of ``pack`` (or of an ONNX / safetensors tensor) back into an array of
    ``type`` (ml_dtypes' one-element-per-byte layout for sub-byte types). ``shape`` defaults to
    every element the bytes hold (for sub-byte types: all of them, padding included)."""
    t = lookup(type)
    buf = np.ascontiguousarray(as_array(data)).reshape(-1).view(np.uint8)
    float6 = t.code in (27, 28)
    per_bits = 6 if float6 else (t.bits if t.sub_byte else 8 * t.dtype.itemsize)
    if shape is None:
        count = buf.size * 8 // per_bits
        shape = (count,)
    else:
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        count = int(np.prod(shape, dtype=np.int64))
    need = _core.storage_size(t.code, count, float6)
    if buf.size < need:
        raise Error(f"unpack: {count} {t.name} elements need {need} bytes; got {buf.size}",
                    Status.INVALID_ARGUMENT)
    out = np.empty(shape, dtype=t.dtype)
    if t.sub_byte or float6:
        opts = options(float6_packed=float6)
        _core.convert(buf, t.code, out.reshape(-1).view(np.uint8), t.code, count, opts,
                      DST_BYTES, False)
    else:
        out.reshape(-1).view(np.uint8)[...] = buf[:need]
    return out
