"""safetensors files read lazily: dtcast.safetensors.open(path) -> a Mapping name -> numpy array.

    with dtcast.safetensors.open("model.safetensors") as f:
        w = f["embed.weight"]            # a read-only view on the file's memory map, no copy
        f.metadata                       # the __metadata__ dict, or {}
        for name in f: ...               # the names in the header's order
        f.info("embed.weight")           # TensorInfo(dtype='F32', type='float32', shape=(4, 3), ...)

The header (docs/files.md, "safetensors") is parsed and checked here, in Python, by the rules
dtcast's reader applies; a file that breaks one raises dtcast.Error with status BAD_FILE and a
message naming the problem, the tensor and the byte offset in the file. A file that cannot be
opened raises OSError, as Python's open() does.

Arrays. Each f[name] is a new numpy array viewing the mapped bytes (read-only, in the file's
little-endian layout, possibly unaligned). The types numpy lacks come from ml_dtypes: BF16 is
ml_dtypes.bfloat16, F8_E4M3 float8_e4m3fn, F8_E5M2 float8_e5m2, F8_E4M3FNUZ float8_e4m3fnuz,
F8_E5M2FNUZ float8_e5m2fnuz, F8_E8M0 float8_e8m0fnu. The packed types have no numpy element
type, so F4 (two elements per byte, the first in the low nibble) and F6_E2M3 / F6_E3M2 (four
elements in three bytes, dtcast's LSB-first bit stream) are returned as a 1-D uint8 view of the
packed bytes; f.info(name) gives their shape and dtcast type, and
``dtcast.unpack(buf, info.type, info.shape)`` turns them into ml_dtypes arrays.

Closing. close() (or leaving the with block) releases the mapping at once when no array from
it is alive. Arrays handed out keep it alive instead: they stay valid, and the mapping is
released when the last of them is garbage collected. After close, f[name] raises ValueError;
names, metadata and info() still answer.
"""

import builtins
import collections
import collections.abc
import json
import mmap
import os

import numpy as np

from ._errors import Error, Status

__all__ = ["open", "SafetensorsFile", "TensorInfo", "DTYPES", "MAX_HEADER"]

MAX_HEADER = 100_000_000  # the reference reader's limit on the header length
MAX_DIMS = 32


def _ml(name):
    import ml_dtypes
    return np.dtype(getattr(ml_dtypes, name))


# dtype: (bits of one element, dtcast type name, numpy dtype or None for a packed type)
def _dtype_table():
    t = {
        "BOOL": (8, "bool", np.dtype("?")),
        "U8": (8, "uint8", np.dtype("u1")), "I8": (8, "int8", np.dtype("i1")),
        "U16": (16, "uint16", np.dtype("<u2")), "I16": (16, "int16", np.dtype("<i2")),
        "U32": (32, "uint32", np.dtype("<u4")), "I32": (32, "int32", np.dtype("<i4")),
        "U64": (64, "uint64", np.dtype("<u8")), "I64": (64, "int64", np.dtype("<i8")),
        "F16": (16, "float16", np.dtype("<f2")), "F32": (32, "float32", np.dtype("<f4")),
        "F64": (64, "float64", np.dtype("<f8")), "C64": (64, "complex64", np.dtype("<c8")),
        "BF16": (16, "bfloat16", _ml("bfloat16")),
        "F8_E4M3": (8, "float8e4m3fn", _ml("float8_e4m3fn")),
        "F8_E5M2": (8, "float8e5m2", _ml("float8_e5m2")),
        "F8_E4M3FNUZ": (8, "float8e4m3fnuz", _ml("float8_e4m3fnuz")),
        "F8_E5M2FNUZ": (8, "float8e5m2fnuz", _ml("float8_e5m2fnuz")),
        "F8_E8M0": (8, "float8e8m0", _ml("float8_e8m0fnu")),
        "F4": (4, "float4e2m1", None),
        "F6_E2M3": (6, "float6e2m3fn", None),
        "F6_E3M2": (6, "float6e3m2fn", None),
    }
    return t


DTYPES = _dtype_table()

TensorInfo = collections.namedtuple("TensorInfo", "dtype type shape data_offsets packed")
TensorInfo.__doc__ = """One tensor of the header: dtype ("F32"), type (dtcast's name, "float32"),
shape (tuple), data_offsets ((begin, end) from the start of the data area) and packed (True for
F4 and F6: f[name] is then the uint8 bytes)."""


def _bad(message, at):
    return Error("%s at byte %d" % (message, at), Status.BAD_FILE)


def _unique_object(pairs):
    """json object_pairs_hook: an object whose keys are distinct (the order kept)."""
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError("duplicate key %r" % k)
        out[k] = v
    return out


def _where(text, name):
    """The byte offset of the key `name` in the header text (for messages), else the header's
    start."""
    for key in (json.dumps(name, ensure_ascii=False), json.dumps(name)):
        i = text.find(key.encode("utf-8"))
        if i >= 0:
            return 8 + i
    return 8


def _parse_header(first8, header, file_size, shown):
    """(entries {name: TensorInfo} in header order, metadata, data_start), every rule checked."""
    if len(first8) < 8:
        raise _bad("%s: safetensors: a file of %d bytes is too short for the 8-byte header "
                   "length" % (shown, file_size), 0)
    n = int.from_bytes(first8, "little")
    if n > MAX_HEADER:
        raise _bad("%s: safetensors: header length %d is over the limit of %d"
                   % (shown, n, MAX_HEADER), 0)
    if 8 + n > file_size:
        raise _bad("%s: safetensors: header length %d runs past the end of the file (%d bytes)"
                   % (shown, n, file_size), 0)
    try:
        text = header.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _bad("%s: safetensors: the header is not UTF-8" % shown, 8 + e.start) from None
    try:
        doc = json.loads(text, object_pairs_hook=_unique_object)
    except RecursionError:
        raise _bad("%s: safetensors: the header nests too deeply" % shown, 8) from None
    except json.JSONDecodeError as e:
        raise _bad("%s: safetensors: bad JSON header: %s" % (shown, e.msg),
                   8 + len(text[:e.pos].encode("utf-8"))) from None
    except ValueError as e:  # a duplicate key
        raise _bad("%s: safetensors: bad JSON header: %s" % (shown, e), 8) from None
    if not isinstance(doc, dict):
        raise _bad("%s: safetensors: the header is not a JSON object" % shown, 8)
    data_start = 8 + n
    data_len = file_size - data_start
    meta = doc.pop("__metadata__", None)
    if meta is None:
        meta = {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise _bad("%s: safetensors: __metadata__ must map strings to strings" % shown,
                   _where(header, "__metadata__"))
    entries = {}
    for name, e in doc.items():
        at = _where(header, name)
        what = "%s: safetensors: tensor %r" % (shown, name)
        if not isinstance(e, dict) or not {"dtype", "shape", "data_offsets"} <= set(e):
            raise _bad(what + ": an entry needs dtype, shape and data_offsets", at)
        dtype, shape, offsets = e["dtype"], e["shape"], e["data_offsets"]
        if dtype not in DTYPES:
            raise _bad(what + ": unknown dtype %r (dtcast reads %s)"
                       % (dtype, ", ".join(DTYPES)), at)
        if (not isinstance(shape, list) or len(shape) > MAX_DIMS or
                not all(type(d) is int and d >= 0 for d in shape)):
            raise _bad(what + ": shape %r is not a list of at most %d non-negative integers"
                       % (shape, MAX_DIMS), at)
        if (not isinstance(offsets, list) or len(offsets) != 2 or
                not all(type(o) is int and o >= 0 for o in offsets) or offsets[0] > offsets[1]):
            raise _bad(what + ": data_offsets %r are not [begin, end] with 0 <= begin <= end"
                       % (offsets,), at)
        count = 1
        for d in shape:
            count *= d
        bits = count * DTYPES[dtype][0]
        if bits % 8:
            raise _bad(what + ": %d elements of %s are not a whole number of bytes"
                       % (count, dtype), at)
        if offsets[1] - offsets[0] != bits // 8:
            raise _bad(what + ": data_offsets [%d, %d] hold %d bytes, but %d elements of %s "
                       "need %d" % (offsets[0], offsets[1], offsets[1] - offsets[0], count,
                                    dtype, bits // 8), at)
        entries[name] = TensorInfo(dtype, DTYPES[dtype][1], tuple(shape), tuple(offsets),
                                   DTYPES[dtype][2] is None)
    # Sorted by offset, the tensors tile the data area: no gap, no shared byte, nothing after.
    end = 0
    for name, t in sorted(entries.items(), key=lambda kv: (kv[1].data_offsets, kv[0])):
        begin, stop = t.data_offsets
        if stop > data_len:
            raise _bad("%s: safetensors: tensor %r: data_offsets [%d, %d] run past the end of "
                       "the file (%d bytes of data)" % (shown, name, begin, stop, data_len),
                       data_start + min(begin, data_len))
        if begin < end:
            raise _bad("%s: safetensors: tensor %r: data_offsets [%d, %d] overlap the tensor "
                       "before (ending at %d)" % (shown, name, begin, stop, end),
                       data_start + begin)
        if begin > end:
            raise _bad("%s: safetensors: tensor %r: a gap of %d bytes before its data"
                       % (shown, name, begin - end), data_start + end)
        end = stop
    if end != data_len:
        raise _bad("%s: safetensors: %d bytes after the last tensor's data"
                   % (shown, data_len - end), data_start + end)
    return entries, meta, data_start


class SafetensorsFile(collections.abc.Mapping):
    """A safetensors file opened by :func:`open`: a read-only Mapping name -> numpy array."""

    def __init__(self, path):
        self.path = os.fsdecode(os.fspath(path))
        with builtins.open(self.path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            first8 = f.read(8)
            n = int.from_bytes(first8, "little") if len(first8) == 8 else 0
            header = f.read(n) if len(first8) == 8 and n <= MAX_HEADER and 8 + n <= size \
                else b""
            self._entries, self.metadata, self._data_start = _parse_header(
                first8, header, size, self.path)
            # An empty data area of a header-only file maps fine: the file is not empty.
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)

    # ---- Mapping

    def __getitem__(self, name):
        t = self._entries[name]
        if self._map is None:
            raise ValueError("%s: the file is closed" % self.path)
        begin, end = t.data_offsets
        offset = self._data_start + begin
        if t.packed:
            a = np.frombuffer(self._map, np.uint8, end - begin, offset)
        else:
            dtype = DTYPES[t.dtype][2]
            count = (end - begin) // dtype.itemsize
            a = np.frombuffer(self._map, dtype, count, offset).reshape(t.shape)
        return a  # read-only: the map is

    def __iter__(self):
        return iter(self._entries)

    def __len__(self):
        return len(self._entries)

    def __contains__(self, name):
        return name in self._entries

    def info(self, name):
        """The header's entry of tensor `name` as a TensorInfo (dtype, type, shape,
        data_offsets, packed)."""
        return self._entries[name]

    # ---- closing

    def close(self):
        """Releases the mapping now, or when the last array viewing it is gone."""
        m, self._map = self._map, None
        if m is not None:
            try:
                m.close()
            except BufferError:
                pass  # arrays view it: it closes when they are garbage collected

    @property
    def closed(self):
        return self._map is None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<dtcast.safetensors file %r, %d tensors%s>" % (
            self.path, len(self), ", closed" if self.closed else "")


def open(path):  # noqa: A001 - the module's reader, as safetensors.safe_open
    """Opens the safetensors file at path (str or os.PathLike) lazily; see the module's doc.

    Raises dtcast.Error (status BAD_FILE) for a file that breaks the format, OSError when the
    file cannot be opened."""
    return SafetensorsFile(path)
