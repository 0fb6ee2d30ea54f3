"""dtcast's GGUF container reader (files/gguf.c) against gguf-py, llama.cpp's own Python package
(PyPI gguf, pinned in constraints.txt), as the oracle.

The C reader is driven through `build/tests/test_gguf --dump FILE`, which parses FILE and prints
what it read as JSON (version, byte order, alignment, data_start, every metadata pair with its
offset, type and value -- floats as their bit patterns -- and every tensor info with its ggml
type, ne, element and byte counts and absolute data offset), or refuses it: exit 1 and one line
"FILE: byte N: <rule>" on stderr.

  * Files written by gguf.GGUFWriter -- every metadata value type, arrays of each element kind,
    plain and quantized tensors (gguf.quants.quantize) of 1 to 4 dimensions, both byte orders,
    custom alignments, split shards -- must be read, and what dtcast reads must equal both what
    was written (computed here with struct/numpy, independently of either reader) and what
    gguf.GGUFReader reads: each key's offset, type and value (float bits exact), each tensor's
    name, ggml type, ne (GGUFReader's ReaderTensor.shape is in ggml order too), counts, absolute
    data offset, and the data bytes at that offset.
  * ggml's type table: one tensor of every type gguf-py knows; dtcast's bytes per block must be
    GGML_QUANT_SIZES' -- except Q8_1, where gguf-py 0.19.0 is wrong (see test_type_table).
  * Hostile files, made by changing one field of a valid GGUFWriter file (offsets found with
    GGUFReader's fields and checked against dtcast's own "at" fields): every truncation, bad
    versions, types, dimensions, offsets, duplicate keys and names, bad alignments. dtcast must
    refuse each with exit 1, a one-line message naming the rule and the byte where the mutated
    field (or its record) starts. Where gguf-py is more lenient the table says so: dtcast
    enforces ggml's rules (gguf.cpp) as well as gguf-py's, so it is the stricter of the two.
  * Random blobs and randomly damaged files never crash the reader (exit 0 or 1, no signal).
"""
import contextlib
import json
import math
import os
import random
import struct
import subprocess
import sys

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

from gguf import (GGML_QUANT_SIZES, GGMLQuantizationType as Q, GGUFEndian, GGUFReader,  # noqa: E402
                  GGUFValueType as V, GGUFWriter)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("DTCAST_BUILD", os.path.join(REPO, "build"))
TEST_GGUF = os.path.join(BUILD, "tests", "test_gguf")

pytestmark = pytest.mark.skipif(not os.path.exists(TEST_GGUF),
                                reason=f"{TEST_GGUF} is not built (make tests)")

HOST_BIG = sys.byteorder == "big"


# ---- running the C reader ------------------------------------------------------------------------

def run(path):
    """(exit code, stdout bytes, stderr text) of test_gguf --dump; never a signal."""
    p = subprocess.run([TEST_GGUF, "--dump", str(path)], capture_output=True, timeout=60)
    assert p.returncode >= 0, f"{path}: test_gguf died of signal {-p.returncode}"
    assert p.returncode in (0, 1, 2), f"{path}: exit {p.returncode}"
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def dump(path):
    rc, out, err = run(path)
    assert rc == 0, f"dtcast refused a file gguf-py wrote: {err}"
    return json.loads(out.decode("utf-8"))


def refused(path):
    """The byte offset and the rule of dtcast's one-line refusal of path."""
    rc, out, err = run(path)
    assert rc == 1, f"{path}: expected a refusal (exit 1), got exit {rc}: {err!r}"
    assert out == b"", "a refused file printed a dump"
    assert err.endswith("\n") and err.count("\n") == 1, f"not one line: {err!r}"
    prefix = f"{path}: byte "
    assert err.startswith(prefix), err
    n, _, rule = err[len(prefix):].partition(": ")
    assert n.isdigit() and rule, err
    return int(n), rule.strip()


def canon(v):
    """A comparable spelling of a JSON-shaped value: True and 1 differ, item order counts."""
    return json.dumps(v, sort_keys=True, ensure_ascii=False)


# ---- what was written, computed here -------------------------------------------------------------

def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def expect_scalar(x, t):
    if t == V.FLOAT32:
        return {"f32": f32_bits(x)}
    if t == V.FLOAT64:
        return {"f64": f64_bits(x)}
    if t == V.BOOL:
        return bool(x)
    if t == V.STRING:
        return x
    return int(x)


def expect_value(x, t, sub=None):
    if t == V.ARRAY:
        return {"elem_type": sub.name.lower(), "items": [expect_scalar(e, sub) for e in x]}
    return expect_scalar(x, t)


# (key, value, type, array element type): every value type, the extremes of each integer type,
# float specials, UTF-8 beyond ASCII, the characters JSON escapes, arrays of each element kind
METADATA = [
    ("test.u8", 255, V.UINT8, None),
    ("test.i8", -128, V.INT8, None),
    ("test.i8.pos", 127, V.INT8, None),
    ("test.u16", 65535, V.UINT16, None),
    ("test.i16", -32768, V.INT16, None),
    ("test.u32", 4_000_000_000, V.UINT32, None),
    ("test.i32", -2**31, V.INT32, None),
    ("test.u64", 2**64 - 1, V.UINT64, None),
    ("test.i64", -2**63, V.INT64, None),
    ("test.i64.small", -7, V.INT64, None),
    ("test.f32", -0.1, V.FLOAT32, None),
    ("test.f32.negzero", -0.0, V.FLOAT32, None),
    ("test.f32.inf", math.inf, V.FLOAT32, None),
    ("test.f32.nan", math.nan, V.FLOAT32, None),
    ("test.f32.tiny", 1e-45, V.FLOAT32, None),  # the least subnormal
    ("test.f64", math.pi, V.FLOAT64, None),
    ("test.f64.neg", -1e300, V.FLOAT64, None),
    ("test.bool.true", True, V.BOOL, None),
    ("test.bool.false", False, V.BOOL, None),
    ("test.str.ascii", "plain", V.STRING, None),
    ("test.str.utf8", "Grüße, 世界 \U0001F999 – ñ", V.STRING, None),
    ("test.str.escapes", 'quote " backslash \\ newline \n tab \t', V.STRING, None),
    ("test.ключ.ü", "a key beyond ASCII", V.STRING, None),
    ("test.arr.u8", [0, 1, 255], V.ARRAY, V.UINT8),
    ("test.arr.i8", [-128, 0, 127], V.ARRAY, V.INT8),
    ("test.arr.u16", [65535, 1], V.ARRAY, V.UINT16),
    ("test.arr.i16", [-32768, 32767], V.ARRAY, V.INT16),
    ("test.arr.u32", [2**32 - 1, 0, 7], V.ARRAY, V.UINT32),
    ("test.arr.i32", [-1, 0, 1, 2**31 - 1, -2**31], V.ARRAY, V.INT32),
    ("test.arr.u64", [2**64 - 1, 2**40], V.ARRAY, V.UINT64),
    ("test.arr.i64", [-2**63, 2**63 - 1, -3], V.ARRAY, V.INT64),
    ("test.arr.f32", [1.5, -0.0, math.inf, -math.inf, math.nan, 3.4028234663852886e38],
     V.ARRAY, V.FLOAT32),
    ("test.arr.f64", [0.1, -2.5e-308, math.nan], V.ARRAY, V.FLOAT64),
    ("test.arr.bool", [True, False, True, True], V.ARRAY, V.BOOL),
    ("test.arr.str", ["a", "", "ü", "\U0001F999 llama", 'q"\\'], V.ARRAY, V.STRING),
    ("test.arr.one", [42], V.ARRAY, V.INT32),
]


def rng_f32(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


def model_tensors(rng):
    """(name, array given to GGUFWriter.add_tensor, raw_dtype or None, ggml ne, ggml type code):
    plain types of 1 to 4 dimensions, BF16 and the quantized types gguf-py can make."""
    out = []

    def plain(name, a):
        code = {np.float32: Q.F32, np.float16: Q.F16, np.float64: Q.F64, np.int8: Q.I8,
                np.int16: Q.I16, np.int32: Q.I32, np.int64: Q.I64}[a.dtype.type]
        out.append((name, a, None, list(reversed(a.shape)), int(code)))

    plain("plain.f32.1d", rng_f32(rng, (7,)))
    plain("plain.f32.2d", rng_f32(rng, (3, 5)))
    plain("plain.f32.3d", rng_f32(rng, (2, 3, 4)))
    plain("plain.f32.4d", rng_f32(rng, (2, 1, 3, 5)))
    plain("plain.f16.2d", rng_f32(rng, (4, 9)).astype(np.float16))
    plain("plain.f64.3d", rng.standard_normal((2, 2, 3)))
    plain("plain.i8", rng.integers(-128, 128, (5, 3), dtype=np.int8))
    plain("plain.i16", rng.integers(-2**15, 2**15, (11,), dtype=np.int16))
    plain("plain.i32", rng.integers(-2**31, 2**31, (2, 3), dtype=np.int32))
    plain("plain.i64", rng.integers(-2**63, 2**63, (3,), dtype=np.int64))
    quantized = [(Q.BF16, (4, 8)), (Q.BF16, (3,)), (Q.Q8_0, (3, 64)), (Q.Q8_0, (32,)),
                 (Q.Q4_0, (2, 2, 64)), (Q.Q4_1, (2, 96)), (Q.Q5_0, (1, 2, 1, 32)),
                 (Q.Q5_1, (2, 64)), (Q.TQ1_0, (2, 256)), (Q.TQ2_0, (1, 512))]
    if hasattr(Q, "MXFP4"):
        quantized.append((Q.MXFP4, (3, 64)))
    for k, (qt, shape) in enumerate(quantized):
        data = gguf.quants.quantize(rng_f32(rng, shape), qt)
        assert data.dtype == np.uint8
        out.append((f"quant.{qt.name.lower()}.{k}", data, qt, list(reversed(shape)), int(qt)))
    return out


def write_gguf(path, tensors, metadata=METADATA, endian=GGUFEndian.LITTLE, alignment=None,
               arch="llama", **kw):
    w = GGUFWriter(str(path), arch, endianess=endian, **kw)
    if alignment is not None:
        w.add_custom_alignment(alignment)
    for key, val, t, sub in metadata:
        w.add_key_value(key, val, t, sub_type=sub)
    for name, a, raw, _ne, _code in tensors:
        w.add_tensor(name, a, raw_dtype=raw)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def stored(a, endian):
    """The bytes GGUFWriter stores for array a (it swaps to the file's order; a uint8 array of
    quantized or BF16 blocks is not swapped)."""
    file_big = endian == GGUFEndian.BIG
    return (a.byteswap() if file_big != HOST_BIG else a).tobytes()


# ---- what gguf-py reads --------------------------------------------------------------------------

def reader_scalar(arr, t):
    if t in (V.FLOAT32, V.FLOAT64):
        bits = np.dtype("u4" if t == V.FLOAT32 else "u8").newbyteorder(arr.dtype.byteorder)
        return {"f32" if t == V.FLOAT32 else "f64": int(arr.view(bits)[0])}
    if t == V.BOOL:
        return bool(arr[0])
    if t == V.STRING:
        return bytes(arr).decode("utf-8")
    return int(arr[0])


def reader_value(field):
    t = field.types[0]
    if t == V.ARRAY:
        sub = field.types[-1]
        return {"elem_type": sub.name.lower(),
                "items": [reader_scalar(field.parts[i], sub) for i in field.data]}
    return reader_scalar(field.parts[field.data[0]], t)


def reader_kvs(r):
    return [f for name, f in r.fields.items() if not name.startswith("GGUF.")]


def compare_with_reader(path, d):
    """dtcast's dump d of path equals what gguf.GGUFReader reads of it, field by field."""
    r = GGUFReader(str(path))
    raw = open(path, "rb").read()
    assert d["version"] == int(r.fields["GGUF.version"].parts[0][0]) == 3
    assert d["big_endian"] == (r.endianess == GGUFEndian.BIG)
    assert d["alignment"] == int(r.alignment)
    assert d["data_start"] == r.data_offset
    assert d["data_start"] % d["alignment"] == 0
    fields = reader_kvs(r)
    assert [k["key"] for k in d["kv"]] == [f.name for f in fields]
    for k, f in zip(d["kv"], fields):
        assert k["at"] == f.offset, k["key"]
        assert k["type"] == f.types[0].name.lower(), k["key"]
        assert canon(k["value"]) == canon(reader_value(f)), k["key"]
    assert len(d["tensors"]) == len(r.tensors)
    expect_offset = 0
    for t, rt in zip(d["tensors"], r.tensors):
        assert t["name"] == rt.name
        assert t["type_code"] == int(rt.tensor_type) and t["type"] == rt.tensor_type.name
        assert t["ne"] == [int(x) for x in rt.shape], t["name"]  # both in ggml order
        assert t["elements"] == rt.n_elements and t["bytes"] == rt.n_bytes, t["name"]
        assert t["at"] == rt.data_offset == d["data_start"] + t["offset"], t["name"]
        assert t["offset"] == expect_offset and t["at"] % d["alignment"] == 0, t["name"]
        expect_offset += -(-t["bytes"] // d["alignment"]) * d["alignment"]
        assert raw[t["at"]:t["at"] + t["bytes"]] == rt.data.tobytes(), t["name"]
    return r


def check_against_written(path, d, tensors, metadata, endian, alignment, arch="llama"):
    """dtcast's dump d of path equals what was written, computed without either reader."""
    raw = open(path, "rb").read()
    assert d["big_endian"] == (endian == GGUFEndian.BIG)
    assert d["alignment"] == (alignment or 32)
    want = [("general.architecture", "string", arch)]
    if alignment is not None:
        want.append(("general.alignment", "uint32", alignment))
    want += [(key, t.name.lower(), expect_value(val, t, sub)) for key, val, t, sub in metadata]
    got = [(k["key"], k["type"], k["value"]) for k in d["kv"]]
    assert canon(got) == canon(want)
    assert [t["name"] for t in d["tensors"]] == [n for n, *_ in tensors]
    for t, (name, a, raw_dtype, ne, code) in zip(d["tensors"], tensors):
        block, size = GGML_QUANT_SIZES[Q(code)]
        assert t["type_code"] == code and t["ne"] == ne, name
        assert t["elements"] == math.prod(ne) and t["bytes"] == a.nbytes, name
        assert t["bytes"] == math.prod(ne) // block * size, name
        assert raw[t["at"]:t["at"] + t["bytes"]] == stored(a, endian), name


# ---- 1. files gguf-py writes ---------------------------------------------------------------------

@pytest.mark.parametrize("alignment", [None, 1, 64, 256])
@pytest.mark.parametrize("endian", [GGUFEndian.LITTLE, GGUFEndian.BIG], ids=["le", "be"])
def test_writer_files(tmp_path, endian, alignment):
    tensors = model_tensors(np.random.default_rng(7))
    path = tmp_path / "model.gguf"
    write_gguf(path, tensors, endian=endian, alignment=alignment)
    d = dump(path)
    check_against_written(path, d, tensors, METADATA, endian, alignment)
    compare_with_reader(path, d)


def test_metadata_only_and_empty(tmp_path):
    """No tensors (the data section may be absent), and no metadata beyond the architecture."""
    p = tmp_path / "kv_only.gguf"
    write_gguf(p, [], endian=GGUFEndian.LITTLE)
    d = dump(p)
    assert d["tensors"] == [] and len(d["kv"]) == len(METADATA) + 1
    compare_with_reader(p, d)
    p = tmp_path / "bare.gguf"
    write_gguf(p, [], metadata=[], endian=GGUFEndian.BIG)
    d = dump(p)
    assert [k["key"] for k in d["kv"]] == ["general.architecture"] and d["big_endian"]
    compare_with_reader(p, d)


def test_type_table(tmp_path):
    """One tensor of every ggml type gguf-py knows, made of random block bytes: dtcast's element
    and byte counts are GGML_QUANT_SIZES', but for Q8_1.

    gguf-py 0.19.0 lists Q8_1 as (32, 40) -- a float d and s -- while ggml's block_q8_1 is
    {ggml_half d, s; int8_t qs[32]}, static_assert'ed to 36 bytes (ggml-common.h). dtcast
    follows ggml. A Q8_1 tensor gguf-py writes is 40 bytes a block, so a file of more than one
    such block written by gguf-py is refused by dtcast (its offsets no longer follow)."""
    rng = np.random.default_rng(3)
    tensors = []
    for qt, (block, size) in GGML_QUANT_SIZES.items():
        if qt == Q.Q8_1:
            continue
        rows, blocks = 2, 3
        if block == 1:
            a = rng.integers(0, 256, (rows, blocks * size), dtype=np.uint8)
            ne = [blocks, rows]
        else:
            a = rng.integers(0, 256, (rows, blocks * size), dtype=np.uint8)
            ne = [blocks * block, rows]
        tensors.append((f"t.{qt.name}", a, qt, ne, int(qt)))
    path = tmp_path / "types.gguf"
    write_gguf(path, tensors, metadata=[])
    d = dump(path)
    compare_with_reader(path, d)
    for t, (name, a, qt, ne, code) in zip(d["tensors"], tensors):
        assert t["type"] == Q(code).name and t["ne"] == ne and t["bytes"] == a.nbytes, name

    # Q8_1: one block each is 40 bytes to gguf-py, 36 to dtcast (and ggml); with alignment 32
    # both pad to 64, so the file is readable and the counts show the disagreement
    q81 = [("t.q8_1", rng.integers(0, 256, (1, 40), dtype=np.uint8), Q.Q8_1, [32, 1], 9),
           ("t.after", rng_f32(rng, (3,)), None, [3], 0)]
    path = tmp_path / "q8_1.gguf"
    write_gguf(path, q81, metadata=[])
    d = dump(path)
    assert d["tensors"][0]["type"] == "Q8_1" and d["tensors"][0]["bytes"] == 36
    assert GGUFReader(str(path)).tensors[0].n_bytes == 40  # gguf-py's (wrong) size
    # two blocks: 80 bytes pad to 96, where dtcast expects the next tensor at 96 too; four
    # blocks: 160 bytes (pad 160) against dtcast's 144 (pad 160): equal; six: 240 -> 256 vs
    # 216 -> 224, which dtcast refuses at the next tensor's info
    q81[0] = ("t.q8_1", rng.integers(0, 256, (1, 240), dtype=np.uint8), Q.Q8_1, [192, 1], 9)
    path = tmp_path / "q8_1_6.gguf"
    write_gguf(path, q81, metadata=[])
    n, rule = refused(path)
    assert "offset" in rule and "t.after" in rule


# ---- 2. split files ------------------------------------------------------------------------------

@pytest.mark.parametrize("small_first_shard", [False, True])
@pytest.mark.parametrize("endian", [GGUFEndian.LITTLE, GGUFEndian.BIG], ids=["le", "be"])
def test_split_shards(tmp_path, endian, small_first_shard):
    rng = np.random.default_rng(11)
    tensors = [t for t in model_tensors(rng)][:7]
    path = tmp_path / "model.gguf"
    write_gguf(path, tensors, metadata=METADATA[:5], endian=endian, split_max_tensors=3,
               small_first_shard=small_first_shard)
    count = 3 + small_first_shard  # 7 tensors, 3 a shard (+ a metadata-only first shard)
    shards = [tmp_path / f"model-{i + 1:05d}-of-{count:05d}.gguf" for i in range(count)]
    assert sorted(p.name for p in tmp_path.iterdir()) == [p.name for p in shards]
    names = []
    for i, p in enumerate(shards):
        d = dump(p)
        compare_with_reader(p, d)
        kv = {k["key"]: (k["type"], k["value"]) for k in d["kv"]}
        assert kv["split.no"] == ("uint16", i)
        assert kv["split.count"] == ("uint16", count)
        assert kv["split.tensors.count"] == ("int32", len(tensors))
        assert ("general.architecture" in kv) == (i == 0)  # gguf-py puts metadata in shard 1
        names += [t["name"] for t in d["tensors"]]
        raw = p.read_bytes()
        by_name = {n: (a, raw_dtype) for n, a, raw_dtype, *_ in tensors}
        for t in d["tensors"]:
            assert raw[t["at"]:t["at"] + t["bytes"]] == stored(by_name[t["name"]][0], endian)
    if small_first_shard:
        assert dump(shards[0])["tensors"] == []
    assert names == [n for n, *_ in tensors]


# ---- 3. hostile files ----------------------------------------------------------------------------

HOSTILE_META = [
    ("x.aaa", 7, V.UINT8, None),
    ("x.bbb", "hello", V.STRING, None),
    ("x.flag", True, V.BOOL, None),
    ("x.list", ["p", "qq"], V.ARRAY, V.STRING),
    ("x.ints", [1, 2, 3], V.ARRAY, V.INT32),
    ("x.f", 0.5, V.FLOAT32, None),
]


def hostile_tensors():
    rng = np.random.default_rng(5)
    return [("w0", rng_f32(rng, (4, 8)), None, [8, 4], 0),
            ("w1", gguf.quants.quantize(rng_f32(rng, (2, 64)), Q.Q8_0), Q.Q8_0, [64, 2], 8),
            ("w2", rng_f32(rng, (3,)).astype(np.float16), None, [3], 1)]


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A valid little-endian file (general.alignment 32 present) and where its fields are."""
    path = tmp_path_factory.mktemp("hostile") / "base.gguf"
    write_gguf(path, hostile_tensors(), metadata=HOSTILE_META, alignment=32)
    d = dump(path)
    r = compare_with_reader(path, d)
    raw = path.read_bytes()
    kv = {k["key"]: k for k in d["kv"]}
    for k in d["kv"]:  # the value of a pair follows its key and type: check the "at"s with it
        key = k["key"].encode()
        assert struct.unpack_from("<Q", raw, k["at"])[0] == len(key)
        assert raw[k["at"] + 8:k["at"] + 8 + len(key)] == key
        k["type_at"] = k["at"] + 8 + len(key)
        k["value_at"] = k["type_at"] + 4
    ti = {}
    for t, rt in zip(d["tensors"], r.tensors):
        at = rt.field.offset  # GGUFReader: where the tensor info starts
        name = t["name"].encode()
        nd = len(t["ne"])
        f = {"info": at, "ndims": at + 8 + len(name)}
        f["dims"] = [f["ndims"] + 4 + 8 * i for i in range(nd)]
        f["type"] = f["ndims"] + 4 + 8 * nd
        f["offset"] = f["type"] + 4
        assert struct.unpack_from("<I", raw, f["ndims"])[0] == nd
        assert struct.unpack_from("<I", raw, f["type"])[0] == t["type_code"]
        assert struct.unpack_from("<Q", raw, f["offset"])[0] == t["offset"]
        ti[t["name"]] = f
    return {"path": path, "raw": raw, "dump": d, "kv": kv, "ti": ti}


@contextlib.contextmanager
def memory_cap(extra=1 << 30):
    """Caps this process's address space at its present size + extra while gguf-py reads a
    hostile file: some (an array count taken from the wrong bytes) make GGUFReader build
    Python lists until the machine runs out of memory; capped, that is a MemoryError."""
    try:
        import resource
        with open("/proc/self/status") as f:
            vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    except (ImportError, OSError, StopIteration):
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = vm + extra if hard == resource.RLIM_INFINITY else min(hard, vm + extra)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def gguf_py_reads(path):
    """gguf-py's verdict: True when GGUFReader reads the file, every tensor's data and every
    value."""
    try:
        with memory_cap():
            r = GGUFReader(str(path))
            for t in r.tensors:
                t.data.tobytes()
            for f in r.fields.values():
                f.contents()
        return True
    except (Exception, MemoryError):
        return False


def put(buf, at, fmt, v):
    struct.pack_into("<" + fmt, buf, at, v)


# (id, mutation(buf, base) -> byte where dtcast must say the fault is, a word of the rule,
#  gguf-py 0.19.0's verdict: True = reads it, False = refuses, None = not asked)
def m_version(v):
    return lambda b, s: (put(b, 4, "I", v), 4)[1]


def m_tensor_offset(b, s):
    f = s["ti"]["w1"]
    put(b, f["offset"], "Q", s["dump"]["tensors"][1]["offset"] + 32)
    return f["info"]


def m_type(code):
    def m(b, s):
        put(b, s["ti"]["w0"]["type"], "I", code)
        return s["ti"]["w0"]["type"]
    return m


def m_dim0(b, s):
    put(b, s["ti"]["w0"]["dims"][1], "Q", 0)
    return s["ti"]["w0"]["dims"][1]


def m_ndims5(b, s):
    put(b, s["ti"]["w2"]["ndims"], "I", 5)
    return s["ti"]["w2"]["ndims"]


def m_dup_key(b, s):
    k = s["kv"]["x.bbb"]
    b[k["at"] + 8:k["at"] + 13] = b"x.aaa"
    return k["at"]


def m_dup_tensor(b, s):
    f = s["ti"]["w2"]
    b[f["info"] + 8:f["info"] + 10] = b"w0"
    return f["info"]


def m_alignment(v):
    def m(b, s):
        put(b, s["kv"]["general.alignment"]["value_at"], "I", v)
        return s["kv"]["general.alignment"]["value_at"]
    return m


def m_alignment_type(b, s):  # uint32 -> int32: same size, wrong type
    put(b, s["kv"]["general.alignment"]["type_at"], "I", int(V.INT32))
    return s["kv"]["general.alignment"]["at"]


def m_bool2(b, s):
    put(b, s["kv"]["x.flag"]["value_at"], "B", 2)
    return s["kv"]["x.flag"]["value_at"]


def m_value_type(b, s):
    put(b, s["kv"]["x.aaa"]["type_at"], "I", 13)
    return s["kv"]["x.aaa"]["type_at"]


def m_nested_array(b, s):
    at = s["kv"]["x.ints"]["value_at"]
    put(b, at, "I", int(V.ARRAY))
    return at


def m_array_count(b, s):  # 2^30 + 1 elements
    at = s["kv"]["x.ints"]["value_at"] + 4
    put(b, at, "Q", 2**30 + 1)
    return at


def m_array_past_end(b, s):  # a count within ggml's limit, but more than the file holds
    at = s["kv"]["x.ints"]["value_at"] + 4
    put(b, at, "Q", 2**29)
    return at


def m_key_len(b, s):
    at = s["kv"]["x.f"]["at"]
    put(b, at, "Q", 2**31)
    return at


def m_string_past_end(b, s):
    at = s["kv"]["x.bbb"]["value_at"]
    put(b, at, "Q", len(b))
    return at


def m_empty_key(b, s):  # "x.aaa" -> a zero-length key; its 5 bytes become the value type...
    at = s["kv"]["x.aaa"]["at"]
    put(b, at, "Q", 0)
    return None  # the rule is checked by word; the byte depends on how far it gets


def m_key_not_utf8(b, s):
    at = s["kv"]["x.aaa"]["at"]
    b[at + 8] = 0xFF
    return at


def m_name_not_utf8(b, s):
    f = s["ti"]["w1"]
    b[f["info"] + 8] = 0xC0
    return f["info"]


def m_not_blocks(b, s):  # a Q8_0 row of 48 elements
    put(b, s["ti"]["w1"]["dims"][0], "Q", 48)
    return s["ti"]["w1"]["info"]


def m_tensor_count(b, s):
    put(b, 8, "Q", 2**40)
    return 8


def m_kv_count(b, s):
    put(b, 16, "Q", 2**40)
    return 16


def m_magic(b, s):
    b[0:4] = b"GGUV"
    return 0


def m_data_cut(b, s):  # the last tensor's data cut short
    t = s["dump"]["tensors"][-1]
    del b[t["at"] + t["bytes"] - 1:]
    return s["ti"]["w2"]["info"]


HOSTILE = [
    # id, mutation, word of the rule, gguf-py's verdict
    ("version1", m_version(1), "version", False),
    ("version0", m_version(0), "version", False),
    ("version4", m_version(4), "version", False),
    ("magic", m_magic, "GGUF", False),
    # gguf-py reads a tensor whose offset is not where ggml's packing puts it
    ("tensor_offset+32", m_tensor_offset, "offset", True),
    ("ggml_type4", m_type(4), "type", False),  # Q4_2, removed
    ("ggml_type43", m_type(43), "type", False),
    # gguf-py reads a tensor with a dimension of 0 (as 0 elements)
    ("dim0", m_dim0, "dimension", True),
    # gguf-py takes the 5 "dims" from the bytes that follow and fails further on
    ("ndims5", m_ndims5, "dimensions", False),
    ("dup_key", m_dup_key, "appears twice", False),
    ("dup_tensor", m_dup_tensor, "appears twice", False),
    ("alignment24", m_alignment(24), "power of two", False),
    ("alignment0", m_alignment(0), "power of two", False),
    ("alignment_int32", m_alignment_type, "uint32", False),
    # gguf-py reads the byte 2 as numpy's True
    ("bool2", m_bool2, "bool", True),
    ("value_type13", m_value_type, "value type", False),
    # gguf-py recurses: the element type ARRAY makes it read an element type and a count from
    # the int32 elements, and build parts for ~2^32 "elements" until memory runs out
    ("nested_array", m_nested_array, "array of arrays", None),
    ("array_2^30+1", m_array_count, "2^30", None),
    ("array_past_end", m_array_past_end, "past the end", None),
    ("key_2^31", m_key_len, "2^30", None),
    ("string_past_end", m_string_past_end, "past the end", False),
    ("empty_key", m_empty_key, "", None),
    ("key_not_utf8", m_key_not_utf8, "UTF-8", False),
    ("name_not_utf8", m_name_not_utf8, "UTF-8", False),
    # gguf-py reads a Q8_0 tensor whose rows are not whole blocks
    ("not_whole_blocks", m_not_blocks, "blocks", None),
    ("tensor_count", m_tensor_count, "cannot fit", None),
    ("kv_count", m_kv_count, "cannot fit", None),
    ("data_cut", m_data_cut, "past the end", False),
]


@pytest.mark.parametrize("name,mutate,word,gguf_py", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile(tmp_path, base, name, mutate, word, gguf_py):
    b = bytearray(base["raw"])
    at = mutate(b, base)
    path = tmp_path / f"{name}.gguf"
    path.write_bytes(bytes(b))
    n, rule = refused(path)
    if at is not None:
        assert n == at, f"dtcast names byte {n}, the field is at {at}: {rule}"
    assert word.lower() in rule.lower(), rule
    if gguf_py is not None:
        assert gguf_py_reads(path) == gguf_py, "gguf-py's verdict changed"


def test_hostile_big_endian(tmp_path):
    """The same checks in a big-endian file: the fields are read in its order."""
    path = tmp_path / "be.gguf"
    write_gguf(path, hostile_tensors(), metadata=HOSTILE_META, endian=GGUFEndian.BIG,
               alignment=32)
    d = dump(path)
    raw = path.read_bytes()
    al = next(k for k in d["kv"] if k["key"] == "general.alignment")
    value_at = al["at"] + 8 + len("general.alignment") + 4
    assert struct.unpack_from(">I", raw, value_at)[0] == 32
    b = bytearray(raw)
    struct.pack_into(">I", b, value_at, 48)
    path.write_bytes(bytes(b))
    n, rule = refused(path)
    assert n == value_at and "48" in rule and "power of two" in rule
    b = bytearray(raw)
    struct.pack_into(">I", b, 4, 1)  # version 1, big-endian
    path.write_bytes(bytes(b))
    n, rule = refused(path)
    assert n == 4 and "version 1" in rule


@pytest.mark.parametrize("endian", [GGUFEndian.LITTLE, GGUFEndian.BIG], ids=["le", "be"])
def test_every_truncation(tmp_path, endian):
    """Every prefix shorter than the data section's start is refused, naming a byte inside the
    prefix; so is every prefix that cuts a tensor's data; the last tensor's padding may go."""
    full = tmp_path / "full.gguf"
    write_gguf(full, hostile_tensors(), metadata=HOSTILE_META, endian=endian)
    raw = full.read_bytes()
    d = dump(full)
    last = d["tensors"][-1]
    data_end = last["at"] + last["bytes"]
    path = tmp_path / "cut.gguf"
    for n in range(len(raw)):
        path.write_bytes(raw[:n])
        if n < data_end:
            at, rule = refused(path)
            assert at <= n, f"prefix of {n} bytes: byte {at}: {rule}"
        else:
            assert dump(path)["tensors"] == d["tensors"]


# ---- 4. random input -----------------------------------------------------------------------------

def test_random_blobs(tmp_path):
    """1 KB of random bytes after "GGUF" and version 3 (half the seeds with small counts, so the
    reader gets into the pairs and infos): exit 0 or 1, never a crash."""
    path = tmp_path / "blob.gguf"
    for seed in range(200):
        rng = random.Random(seed)
        body = bytearray(rng.randbytes(1016))
        if seed % 2:
            struct.pack_into("<QQ", body, 0, rng.randrange(4), rng.randrange(6))
        path.write_bytes(b"GGUF" + struct.pack("<I", 3) + bytes(body))
        rc, _, err = run(path)
        assert rc in (0, 1), f"seed {seed}: exit {rc}: {err}"
        if rc == 1:
            assert err.count("\n") == 1 and ": byte " in err, f"seed {seed}: {err!r}"


def gguf_py_fault(path):
    """None when gguf-py reads path and every value; else the exception it raises."""
    try:
        with memory_cap():
            r = GGUFReader(str(path))
            for t in r.tensors:
                t.data.tobytes()
            for f in r.fields.values():
                f.contents()
        return None
    except (Exception, MemoryError) as e:
        return e


# the rules by which dtcast refuses what gguf-py 0.19.0 reads (see HOSTILE)
STRICTER = ("a bool is 0 or 1", "has offset", "dimension", "whole", "past the end")


def test_damaged_files(tmp_path, base):
    """A valid file with 1 to 4 random header bytes changed: exit 0 or 1. Where the verdicts
    differ, it is for a known reason: dtcast refuses by one of its stricter rules, or dtcast
    accepts a string value that is not UTF-8 (neither ggml nor dtcast checks a value's
    encoding; gguf-py's ReaderField.contents() fails decoding it). Both readers read what both
    accept alike."""
    raw = base["raw"]
    path = tmp_path / "damaged.gguf"
    data_start = base["dump"]["data_start"]
    for seed in range(200):
        rng = random.Random(1000 + seed)
        b = bytearray(raw)
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(data_start)] = rng.randrange(256)
        path.write_bytes(bytes(b))
        rc, out, err = run(path)
        assert rc in (0, 1), f"seed {seed}: exit {rc}: {err}"
        fault = gguf_py_fault(path)
        if rc == 1:
            assert err.count("\n") == 1 and ": byte " in err, f"seed {seed}: {err!r}"
            if fault is None:
                assert any(w in err for w in STRICTER), f"seed {seed}: only dtcast refuses: {err}"
            continue
        if fault is not None:
            assert isinstance(fault, UnicodeDecodeError), f"seed {seed}: gguf-py: {fault!r}"
            continue
        compare_with_reader(path, json.loads(out.decode("utf-8")))
