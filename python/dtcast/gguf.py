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

import os

import numpy as np

from . import _core
from ._cast import as_array
from ._errors import Error, Status
from ._types import lookup, of_dtype

__all__ = ["quantize", "dequantize", "block_size", "type_size", "type_name", "type_code",
           "types", "QuantizeStats", "open", "Model", "Tensor", "convert", "to_safetensors"]

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


def _out(out, shape, dtype, what):
    if out is None:
        return np.empty(shape, dtype)
    if not isinstance(out, np.ndarray) or out.shape != tuple(shape) or out.dtype != dtype or \
            not out.flags.c_contiguous or not out.flags.writeable:
        raise Error(f"{what}: out must be a writable C-contiguous {np.dtype(dtype)} array of "
                    f"shape {tuple(shape)}", Status.INVALID_ARGUMENT)
    return out


def quantize(x, type, *, threads=0, stats=False, out=None):
    """x (float32, bfloat16, float16 or float64 [..., K], K a multiple of the block) as ggml type
    `type`: uint8 rows [..., K / block * bytes], the bytes ggml's reference quantizer writes
    (gguf.quants.quantize's for the types it has). stats=True returns (rows, QuantizeStats);
    out: an array to write them into (as numpy's out=)."""
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
    out = _out(out, shape[:-1] + (shape[-1] // block * size,), np.uint8, "quantize")
    n, first, invalid = _core.ggml_quantize(arr, t.code, shape, code, out, _check_threads(threads))
    if stats:
        return out, QuantizeStats(n, None if first == (1 << 64) - 1 else first, invalid)
    return out


def dequantize(data, type, *, dtype=np.float32, threads=0, out=None):
    """uint8 rows of ggml type `type` [..., row_bytes] as `dtype` (float32, bfloat16, float16 or
    float64) [..., row_bytes / bytes * block]: float32 is ggml's to_float bit for bit; the
    others round the exact value once. out: an array to write them into (as numpy's out=)."""
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
    out = _out(out, shape, t.dtype, "dequantize")
    _core.ggml_dequantize(out, t.code, shape, code, raw, _check_threads(threads))
    return out


# ---- GGUF models ---------------------------------------------------------------------------------

class Tensor(tuple):
    """A tensor of a GGUF model as its header describes it: ``name``, ``type`` (ggml's name),
    ``code``, ``shape`` (numpy's order: GGUF's ne reversed), ``nbytes``, ``file`` (the path of the
    file holding it) and ``offset`` (of its data in that file)."""

    __slots__ = ()
    _fields = ("name", "type", "code", "shape", "nbytes", "file", "offset")

    def __new__(cls, *values):
        return super().__new__(cls, values)

    name = property(lambda self: self[0])
    type = property(lambda self: self[1])
    code = property(lambda self: self[2])
    shape = property(lambda self: self[3])
    nbytes = property(lambda self: self[4])
    file = property(lambda self: self[5])
    offset = property(lambda self: self[6])

    def __repr__(self):
        return f"Tensor({self.name!r}, {self.type}, shape={self.shape}, nbytes={self.nbytes})"


class Model:
    """A GGUF model opened by dtcast.gguf.open: every file of a split set, read and checked by
    dtcast's reader (docs/gguf.md: a damaged file is refused naming the rule and the byte);
    ``metadata`` (dict: key -> str, int, float, bool or list), ``metadata_types`` (key -> the
    GGUF value type, "array[string]" for arrays), ``tensors`` (dict: name -> Tensor, in file
    order). Data is read on access, from a memory map:

        m = dtcast.gguf.open("model-Q4_K_M.gguf")
        m.raw("blk.0.attn_q.weight")                 # uint8 rows [..., row bytes], no copy
        m.array("blk.0.attn_q.weight", "bfloat16")   # dequantized, one rounding
        m["output_norm.weight"]                      # float32 (F32 tensors as they are)
    """

    def __init__(self, path):
        files, big_endian, meta, tensors = _core.gguf_read(os.fsencode(os.fspath(path)))
        self.path = os.fsdecode(os.fspath(path))
        self.files = files
        self.big_endian = bool(big_endian)
        self.metadata, self.metadata_types = {}, {}
        for key, vtype, is_array, value in meta:
            self.metadata.setdefault(key, value)
            self.metadata_types.setdefault(key, f"array[{vtype}]" if is_array else vtype)
        self.tensors = {}
        for name, code, shape, fi, offset, nbytes in tensors:
            self.tensors[name] = Tensor(name, _TYPES[code][0], code, tuple(shape), nbytes,
                                        files[fi], offset)
        self._maps = {}

    def __repr__(self):
        return (f"<dtcast.gguf.Model {self.path!r}: {len(self.tensors)} tensors, "
                f"{len(self.metadata)} metadata keys, {len(self.files)} file(s)>")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Drops the memory maps (arrays returned by raw() keep theirs alive)."""
        self._maps.clear()

    def __len__(self):
        return len(self.tensors)

    def __iter__(self):
        return iter(self.tensors)

    def __contains__(self, name):
        return name in self.tensors

    def keys(self):
        return self.tensors.keys()

    def _map(self, f):
        m = self._maps.get(f)
        if m is None:
            m = self._maps[f] = np.memmap(f, np.uint8, mode="r")
        return m

    def raw(self, name):
        """The tensor's data as stored, without a copy: element-wise types (F32, F16, BF16,
        F64, I8..I64) as their numpy / ml_dtypes dtype and shape (a big-endian file's in its
        byte order), block types as uint8 rows [..., row bytes]."""
        t = self.tensors[name]
        data = self._map(t.file)[t.offset:t.offset + t.nbytes]
        name_, block, size, _ = _TYPES[t.code]
        if block == 1:
            dt = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I8": np.int8,
                  "I16": np.int16, "I32": np.int32, "I64": np.int64}.get(name_)
            if dt is None:  # BF16
                import ml_dtypes
                dt = ml_dtypes.bfloat16
            dt = np.dtype(dt)
            if self.big_endian and dt.itemsize > 1:
                dt = dt.newbyteorder(">")
            return data.view(dt).reshape(t.shape)
        k = t.shape[-1] if t.shape else 1
        return data.reshape(t.shape[:-1] + (k // block * size,))

    def array(self, name, dtype=None, *, threads=0):
        """The tensor's values as a new array of dtype (float32, bfloat16, float16 or float64):
        block types dequantized (float32: ggml's to_float bit for bit; the others the exact
        value rounded once); element-wise types converted by dtcast (copied when dtype is
        theirs). dtype None: float32 for block types, the tensor's own type otherwise."""
        t = self.tensors[name]
        raw = self.raw(name)
        if _TYPES[t.code][1] == 1:
            arr = np.asarray(raw)
            if arr.dtype.byteorder == ">":
                arr = arr.astype(arr.dtype.newbyteorder("<"))
            if dtype is None:
                return np.array(arr)
            from ._cast import cast
            return cast(arr, dtype)
        if self.big_endian:
            raise Error(f"{t.file}: tensor {name!r}: {t.type} blocks of a big-endian GGUF file "
                        "are not read yet", Status.UNSUPPORTED)
        return dequantize(raw, t.code, dtype=np.float32 if dtype is None else dtype,
                          threads=threads)

    def __getitem__(self, name):
        return self.array(name)


def open(path):  # noqa: A001 (dtcast.gguf.open, as the module's own name says)
    """Opens a GGUF model (a .gguf file, or any file of a split set NAME-0000k-of-0000N.gguf:
    the whole set): its metadata and tensor infos now, its data on access (Model)."""
    return Model(path)


_KV_TYPES = {"u8": 0, "i8": 1, "u16": 2, "i16": 3, "u32": 4, "i32": 5, "f32": 6, "bool": 7,
             "str": 8, "u64": 10, "i64": 11, "f64": 12}


def _kv_item(key, value):
    if isinstance(value, tuple) and len(value) == 2 and value[0] in _KV_TYPES:
        t, v = value
    elif isinstance(value, bool):
        t, v = "bool", value
    elif isinstance(value, (int, np.integer)):
        t, v = ("u32" if 0 <= value < 1 << 32 else "i64"), value
    elif isinstance(value, (float, np.floating)):
        t, v = "f32", value
    elif isinstance(value, str):
        t, v = "str", value
    else:
        raise Error(f"kv {key!r}: a str, int, float, bool or (type, value), not {value!r}",
                    Status.INVALID_ARGUMENT)
    text = ("true" if v else "false") if t == "bool" else repr(float(v)) if t in ("f32", "f64") \
        else str(v)
    return (key, _KV_TYPES[t], text)


def convert(src, dst, type, *, tensor_types=None, arch=None, kv=None, requantize=False,
            threads=0, progress=None):
    """Writes the tensors of src (a .safetensors file, a sharded checkpoint's index or folder, a
    .npy, or a GGUF model) to the GGUF file dst, as ``dtcast cast --to TYPE src dst.gguf``
    does (docs/gguf.md, "Jobs"): ggml's reference bytes, llama.cpp's conventions (1-D and
    *norm.weight tensors F32; rows that are not whole blocks fall back as llama-quantize does),
    streamed in this process with bounded memory. tensor_types: {glob: type}, the first match
    wins; arch: general.architecture; kv: {key: value} metadata (str, int -> uint32 or int64,
    float -> float32, bool, or (type, value) with type one of u8 i8 u16 i16 u32 i32 u64 i64 f32
    f64 bool str). Warnings (fallbacks, NaN/Inf counts) go to warnings.warn. Returns dst."""
    from .files import _job, _path, _threads
    code = type_code(type)
    if not _TYPES[code][3] & 1:
        raise Error(f"dtcast does not write ggml type {_TYPES[code][0]}", Status.UNSUPPORTED)
    rules = [(str(g), type_code(t)) for g, t in (tensor_types or {}).items()]
    params = {"type": code, "threads": _threads(threads), "requantize": bool(requantize),
              "arch": arch, "rules": rules,
              "kv": [_kv_item(k, v) for k, v in (kv or {}).items()]}
    src_p, dst_p = _path(src, "src"), _path(dst, "dst")
    _job(_core.gguf_write, src_p, dst_p, params, progress, os.path.basename(src_p))
    return dst_p


def to_safetensors(src, dst, *, dtype="bfloat16", metadata=True, threads=0, progress=None):
    """A GGUF model (src: a .gguf, or any file of a split set) as safetensors, as ``dtcast
    dequantize src dst`` does: one .safetensors file (a split set: a folder of shards and an
    index), GGUF names, numpy shapes, element-wise tensors copied, block types dequantized to
    dtype (bfloat16, float16 or float32), the metadata as __metadata__ strings (metadata=False:
    none). Streamed in this process. Returns dst."""
    from .files import _job, _path, _threads
    t = lookup(dtype)
    if t.name not in ("bfloat16", "float16", "float32"):
        raise Error(f"dtype: dequantize writes bfloat16, float16 or float32, not {t.name}",
                    Status.INVALID_ARGUMENT)
    params = {"to": t.code, "threads": _threads(threads), "no_metadata": not metadata}
    src_p, dst_p = _path(src, "src"), _path(dst, "dst")
    _job(_core.gguf_dequantize, src_p, dst_p, params, progress, os.path.basename(src_p))
    return dst_p
