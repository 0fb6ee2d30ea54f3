"""An independent safetensors reader and writer (docs/files.md, "safetensors"), in plain Python 3
(struct and json only), for checking dtcast's files byte for byte.

    write(path, tensors, metadata=None)   tensors: {name: (dtype, shape, raw_bytes)}
    read(path) -> (tensors, metadata)     every rule of docs/files.md checked (SafetensorsError)
    serialize(tensors, metadata=None) -> bytes, deserialize(data) -> (tensors, metadata)

The writer does what the reference writer (huggingface safetensors) does: tensors sorted by
dtype in the order below, then by name (bytes ascending); offsets back to back; a compact JSON
header (__metadata__ first, then the tensors in offset order, keys dtype, shape, data_offsets)
padded with spaces to a multiple of 8 bytes. The raw bytes are taken as they are: F4 two
elements per byte (first in the low nibble), F6 four elements in three bytes (LSB-first bit
stream) - the caller packs them.
"""
import json
import struct

# bits of one element
BITS = {
    "BOOL": 8, "U8": 8, "I8": 8, "U16": 16, "I16": 16, "U32": 32, "I32": 32, "U64": 64, "I64": 64,
    "F16": 16, "BF16": 16, "F32": 32, "F64": 64, "C64": 64,
    "F8_E4M3": 8, "F8_E5M2": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "F8_E8M0": 8,
    "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6,
}

# the reference writer's order: earlier here = earlier in the file
WRITE_ORDER = [
    "U64", "I64", "F64", "C64", "F32", "U32", "I32", "BF16", "F16", "U16", "I16",
    "F8_E5M2FNUZ", "F8_E4M3FNUZ", "F8_E8M0", "F8_E4M3", "F8_E5M2", "I8", "U8",
    "F6_E3M2", "F6_E2M3", "F4", "BOOL",
]

MAX_HEADER = 100_000_000


class SafetensorsError(ValueError):
    pass


def element_count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def nbytes(dtype, shape):
    """Bytes of a tensor; an error when they are not a whole number."""
    bits = element_count(shape) * BITS[dtype]
    if bits % 8:
        raise SafetensorsError("%d elements of %s are not a whole number of bytes"
                               % (element_count(shape), dtype))
    return bits // 8


def serialize(tensors, metadata=None):
    for name, (dtype, shape, raw) in tensors.items():
        if dtype not in BITS:
            raise SafetensorsError("unknown dtype %r" % dtype)
        if name == "__metadata__":
            raise SafetensorsError("a tensor cannot be called __metadata__")
        if len(raw) != nbytes(dtype, shape):
            raise SafetensorsError("tensor %r: %d bytes for shape %s of %s"
                                   % (name, len(raw), list(shape), dtype))
    order = sorted(tensors, key=lambda n: (WRITE_ORDER.index(tensors[n][0]), n.encode("utf-8")))
    header = {}
    if metadata is not None:
        header["__metadata__"] = dict(metadata)
    offset = 0
    for name in order:
        dtype, shape, raw = tensors[name]
        header[name] = {"dtype": dtype, "shape": [int(d) for d in shape],
                        "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    # compact, non-ASCII as UTF-8, only '"', '\\' and control characters escaped
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    if len(text) > MAX_HEADER:
        raise SafetensorsError("header of %d bytes" % len(text))
    return struct.pack("<Q", len(text)) + text + b"".join(tensors[n][2] for n in order)


def write(path, tensors, metadata=None):
    data = serialize(tensors, metadata)
    with open(path, "wb") as f:
        f.write(data)
    return data


def _pairs_no_duplicates(pairs):
    seen = {}
    for k, v in pairs:
        if k in seen:
            raise SafetensorsError("duplicate key %r" % k)
        seen[k] = v
    return seen


def _no_constant(name):
    raise SafetensorsError("%s is not JSON" % name)


def _check_strings(value, depth=0):
    """No lone surrogates (Python's json accepts them); bounded nesting."""
    if depth > 64:
        raise SafetensorsError("nesting deeper than 64")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise SafetensorsError("lone surrogate in a string")
    elif isinstance(value, list):
        for v in value:
            _check_strings(v, depth + 1)
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_strings(k, depth + 1)
            _check_strings(v, depth + 1)


def _uint(value, what, limit):
    if type(value) is not int or value < 0 or value >= limit:
        raise SafetensorsError("%s is not an integer in [0, %d)" % (what, limit))
    return value


def deserialize(data):
    if len(data) < 8:
        raise SafetensorsError("shorter than 8 bytes")
    (n,) = struct.unpack("<Q", data[:8])
    if n > MAX_HEADER:
        raise SafetensorsError("header length %d over the limit" % n)
    if 8 + n > len(data):
        raise SafetensorsError("header length %d past the end of the file" % n)
    try:
        text = data[8:8 + n].decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        raise SafetensorsError("header is not UTF-8: %s" % e)
    try:
        header = json.loads(text, object_pairs_hook=_pairs_no_duplicates,
                            parse_constant=_no_constant)
    except RecursionError:
        raise SafetensorsError("nesting too deep")
    except json.JSONDecodeError as e:
        raise SafetensorsError("header is not JSON: %s" % e)
    _check_strings(header)
    if not isinstance(header, dict):
        raise SafetensorsError("header is not an object")
    buffer = data[8 + n:]
    metadata = header.pop("__metadata__", None)
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
            raise SafetensorsError("__metadata__ is not a map of strings")
    ranges = []
    tensors = {}
    for name, entry in header.items():
        if "\0" in name:
            raise SafetensorsError("tensor name with a NUL character")
        if not isinstance(entry, dict):
            raise SafetensorsError("tensor %r: not an object" % name)
        for key in ("dtype", "shape", "data_offsets"):
            if key not in entry:
                raise SafetensorsError("tensor %r: no %s" % (name, key))
        dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if not isinstance(dtype, str) or dtype not in BITS:
            raise SafetensorsError("tensor %r: unknown dtype %r" % (name, dtype))
        if not isinstance(shape, list):
            raise SafetensorsError("tensor %r: shape is not a list" % name)
        shape = [_uint(d, "tensor %r: dimension" % name, 1 << 63) for d in shape]
        if not isinstance(offsets, list) or len(offsets) != 2:
            raise SafetensorsError("tensor %r: data_offsets is not two integers" % name)
        begin, end = (_uint(o, "tensor %r: offset" % name, 1 << 64) for o in offsets)
        if end < begin:
            raise SafetensorsError("tensor %r: end before begin" % name)
        if element_count(shape) * BITS[dtype] >= 1 << 64:
            raise SafetensorsError("tensor %r: size overflows 64 bits" % name)
        if end - begin != nbytes(dtype, shape):
            raise SafetensorsError("tensor %r: %d bytes for shape %s of %s"
                                   % (name, end - begin, shape, dtype))
        ranges.append((begin, end, name))
        tensors[name] = (dtype, shape, (begin, end))
    at = 0
    for begin, end, name in sorted(ranges):
        if begin != at:
            raise SafetensorsError("tensor %r: begins at %d, not %d (a hole or an overlap)"
                                   % (name, begin, at))
        at = end
    if at != len(buffer):
        raise SafetensorsError("the tensors cover %d bytes of a %d-byte buffer" % (at, len(buffer)))
    out = {}
    for name, (dtype, shape, (begin, end)) in tensors.items():
        out[name] = (dtype, shape, bytes(buffer[begin:end]))
    return out, metadata


def read(path):
    with open(path, "rb") as f:
        return deserialize(f.read())
