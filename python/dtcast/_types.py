"""The types: dtcast's codes, the names Python users write, and the numpy dtype of each.

The canonical names are ml_dtypes' and numpy's spellings (``float8_e4m3fn``, ``bfloat16``,
``float4_e2m1fn``, ``float8_e8m0fnu``, ``int4``); every name the C library accepts is an alias
(dtcast's own ``float8e4m3fn``, ONNX's ``FLOAT8E4M3FN`` and its TensorProto numbers, ``bf16``,
``fp8_e4m3``, ...). The list of types comes from the library (``dtcast_type_list``).
"""

import numpy as np
import ml_dtypes

from . import _core
from ._errors import Error, Status

__all__ = ["TypeInfo", "lookup", "of_dtype", "all_types"]

# dtcast's name -> the ml_dtypes/numpy spelling, where the two differ.
_PY_NAME = {
    "float8e4m3fn": "float8_e4m3fn",
    "float8e4m3fnuz": "float8_e4m3fnuz",
    "float8e5m2": "float8_e5m2",
    "float8e5m2fnuz": "float8_e5m2fnuz",
    "float8e4m3": "float8_e4m3",
    "float8e3m4": "float8_e3m4",
    "float8e4m3b11fnuz": "float8_e4m3b11fnuz",
    "float8e8m0": "float8_e8m0fnu",
    "float6e2m3fn": "float6_e2m3fn",
    "float6e3m2fn": "float6_e3m2fn",
    "float4e2m1": "float4_e2m1fn",
    "float8e5m3fnu": "float8_e5m3fnu",
}


class TypeInfo:
    """One type: ``code`` (dtcast's / ONNX's number), ``name`` (the Python spelling),
    ``c_name`` (dtcast's), ``onnx_name`` (or None), ``bits`` per element, ``kind`` ('bool',
    'unsigned', 'signed', 'float', 'complex', 'string') and ``dtype``: the numpy dtype an array
    of it has (ml_dtypes for the types numpy lacks; ``<U`` strings for string). ``sub_byte``
    types are stored one element per byte in arrays, as ml_dtypes stores them. A type whose
    dtype the installed ml_dtypes lacks (float8_e5m3fnu before ml_dtypes 0.7) has none:
    ``dtype`` raises :class:`Error` (UNSUPPORTED), and so does every array operation on it."""

    __slots__ = ("code", "name", "c_name", "onnx_name", "bits", "kind", "_dtype", "info")

    def __init__(self, code, c_name, onnx_name):
        self.code = code
        self.c_name = c_name
        self.name = _PY_NAME.get(c_name, c_name)
        self.onnx_name = onnx_name
        if c_name == "string":
            self.info = {"kind": "string", "bits": 0}
            self._dtype = np.dtype(np.str_)
        else:
            self.info = _core.type_info(code)
            scalar = getattr(np, self.name, None) if hasattr(np, self.name) \
                else getattr(ml_dtypes, self.name, None)
            self._dtype = None if scalar is None else np.dtype(scalar)
        self.kind = self.info["kind"]
        self.bits = self.info["bits"]

    @property
    def dtype(self):
        if self._dtype is None:
            raise Error(f"{self.name} has no numpy dtype here: it needs ml_dtypes 0.7 or later "
                        f"(ml_dtypes {getattr(ml_dtypes, '__version__', '?')} is installed)",
                        Status.UNSUPPORTED)
        return self._dtype

    @property
    def has_dtype(self):
        """Whether the installed numpy / ml_dtypes has this type's dtype."""
        return self._dtype is not None

    @property
    def sub_byte(self):
        return 0 < self.bits < 8

    def __repr__(self):
        return f"dtcast type {self.name} ({self.bits} bits, code {self.code})"


_BY_CODE = {}
_BY_NAME = {}
_BY_DTYPE = {}
for _code, _c_name, _onnx in _core.type_list():
    _t = TypeInfo(_code, _c_name, _onnx)
    _BY_CODE[_code] = _t
    _BY_NAME[_t.name] = _t
    _BY_NAME[_c_name] = _t
    if _c_name != "string" and _t.has_dtype:
        _BY_DTYPE[_t.dtype] = _t
del _code, _c_name, _onnx, _t


def all_types():
    """Every type, in the library's order."""
    return list(_BY_CODE.values())


def of_dtype(dtype):
    """The type of a numpy dtype, or None (strings: 'U', 'S' and object arrays)."""
    dtype = np.dtype(dtype)
    t = _BY_DTYPE.get(dtype)
    if t is None and dtype.kind in "USO":
        return _BY_CODE[8]
    if t is None and dtype.byteorder == ">":
        raise Error(f"big-endian arrays ({dtype.str}) are not supported: use .astype('{dtype.newbyteorder('<').str}')",
                    Status.UNSUPPORTED)
    return t


def lookup(t):
    """A type from what a user writes: a name (any spelling), a TensorProto number, a numpy or
    ml_dtypes dtype or scalar type, a torch dtype, or a TypeInfo."""
    if isinstance(t, TypeInfo):
        return t
    if isinstance(t, str):
        hit = _BY_NAME.get(t)
        if hit is None:
            hit = _BY_CODE[_core.type_from_name(t)]
        return hit
    if isinstance(t, (int, np.integer)) and not isinstance(t, bool):
        if int(t) in _BY_CODE:
            return _BY_CODE[int(t)]
        raise Error(f"{int(t)} is not a type code (see dtcast.types())", Status.UNKNOWN_TYPE)
    mod = type(t).__module__
    if mod.startswith("torch"):
        name = str(t).split(".")[-1]
        return lookup(_TORCH_NAMES.get(name, name))
    try:
        dtype = np.dtype(t)
    except TypeError:
        raise Error(f"{t!r} is not a type", Status.UNKNOWN_TYPE) from None
    hit = of_dtype(dtype)
    if hit is None:
        raise Error(f"dtcast has no type for numpy dtype {dtype}", Status.UNKNOWN_TYPE)
    return hit


# torch's dtype names that are not dtcast spellings.
_TORCH_NAMES = {
    "float": "float32", "double": "float64", "half": "float16", "cfloat": "complex64",
    "cdouble": "complex128", "chalf": "complex32", "long": "int64", "int": "int32",
    "short": "int16",
}
