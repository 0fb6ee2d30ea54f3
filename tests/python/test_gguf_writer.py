"""The GGUF writer (files/gguf.h, dt_gguf_out) against gguf-py 0.19.0's GGUFWriter: a file
GGUFWriter writes, read by dtcast's reader and written again by dtcast's writer from what was
read (`test_gguf --rewrite`), is the same file byte for byte: every metadata value type, both
byte orders, custom alignments, element-wise and block-quantized tensors, 0-d to 4-d shapes,
and the shards of a split model."""
import json
import os
import subprocess

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

TOOL = os.path.join(os.environ.get("DTCAST_BUILD", "build"), "tests", "test_gguf")
Q = gguf.GGMLQuantizationType


def make(path, rng, *, endian=None, alignment=None, split=0):
    kw = {"endianess": endian} if endian else {}
    if split:
        kw["split_max_tensors"] = split
    w = gguf.GGUFWriter(str(path), "llama", **kw)
    if alignment:
        w.add_custom_alignment(alignment)
    w.add_uint8("t.u8", 255)
    w.add_int8("t.i8", -128)
    w.add_uint16("t.u16", 65535)
    w.add_int16("t.i16", -32768)
    w.add_uint32("t.u32", 4294967295)
    w.add_int32("t.i32", -2147483648)
    w.add_float32("t.f32", -0.1)
    w.add_uint64("t.u64", 2 ** 64 - 1)
    w.add_int64("t.i64", -2 ** 63)
    w.add_float64("t.f64", 1e300)
    w.add_bool("t.bool", False)
    w.add_string("t.str", "héllo \u4e16\u754c")
    w.add_array("t.tokens", ["<s>", "", "é", "x" * 300])
    w.add_array("t.scores", [0.5, -1.25, float("inf")])
    w.add_array("t.ints", [1, -2, 3])
    w.add_array("t.bools", [True, False, True])
    w.add_key_value("t.u64s", [1, 2 ** 63], gguf.GGUFValueType.ARRAY, sub_type=gguf.GGUFValueType.UINT64)
    w.add_tensor("scalar", np.array(3.5, np.float32))
    w.add_tensor("v.f16", rng.standard_normal(7).astype(np.float16))
    w.add_tensor("m.f32", rng.standard_normal((3, 5)).astype(np.float32))
    w.add_tensor("c.i32", rng.integers(-9, 9, size=(2, 3, 4)).astype(np.int32))
    w.add_tensor("d.f64", rng.standard_normal((2, 1, 3, 2)))
    w.add_tensor("e.i8", rng.integers(-9, 9, size=11).astype(np.int8))
    for qt in (Q.Q8_0, Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1, Q.BF16, Q.TQ1_0, Q.TQ2_0, Q.MXFP4):
        k = 256 if qt in (Q.TQ1_0, Q.TQ2_0) else 64
        q = gguf.quants.quantize(rng.standard_normal((3, k)).astype(np.float32), qt)
        w.add_tensor(f"q.{qt.name.lower()}", q, raw_dtype=qt)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def rewritten_equal(src, tmp_path):
    out = tmp_path / ("rw-" + os.path.basename(src))
    p = subprocess.run([TOOL, "--rewrite", str(src), str(out)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return out.read_bytes() == open(src, "rb").read()


@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("alignment", [None, 64, 8])
def test_rewrite_is_gguf_writer_byte_for_byte(tmp_path, endian, alignment):
    path = tmp_path / "m.gguf"
    make(path, np.random.default_rng(1), alignment=alignment,
         endian=gguf.GGUFEndian.BIG if endian == "big" else None)
    assert rewritten_equal(path, tmp_path)
    r = gguf.GGUFReader(str(tmp_path / "rw-m.gguf"), "r")  # gguf-py reads dtcast's output
    assert len(r.tensors) == 15


def test_split_shards(tmp_path):
    make(tmp_path / "m.gguf", np.random.default_rng(2), split=5)
    shards = sorted(f for f in os.listdir(tmp_path) if f.endswith(".gguf"))
    assert shards == [f"m-{i:05d}-of-00003.gguf" for i in range(1, 4)], shards  # 15 tensors, 5 each
    for s in shards:
        assert rewritten_equal(tmp_path / s, tmp_path), s
    out = subprocess.run([TOOL, "--dump", str(tmp_path / shards[1])], capture_output=True,
                         text=True, check=True).stdout
    kv = {e["key"]: e for e in json.loads(out)["kv"]}
    assert (kv["split.no"]["type"], kv["split.no"]["value"]) == ("uint16", 1)
    assert (kv["split.count"]["type"], kv["split.count"]["value"]) == ("uint16", 3)
    assert (kv["split.tensors.count"]["type"], kv["split.tensors.count"]["value"]) == ("int32", 15)
