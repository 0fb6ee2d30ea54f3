"""dtcast.inspect (and `dtcast inspect`) on GGUF files, against gguf-py 0.19.0: a file its
GGUFWriter writes is listed with gguf-py's GGUFReader's names, numpy-order shapes, ggml types,
data offsets and byte counts, and its metadata; a hostile file is a problem naming the byte."""
import os
import subprocess

import numpy as np
import pytest

import dtcast

gguf = pytest.importorskip("gguf")


def write(path, endian=None):
    w = gguf.GGUFWriter(str(path), "llama", **({"endianess": endian} if endian else {}))
    w.add_uint32("llama.block_count", 3)
    w.add_string("general.name", "tiny")
    w.add_array("tokenizer.ggml.tokens", ["<s>", "a", "b"])
    rng = np.random.default_rng(0)
    w.add_tensor("token_embd.weight", rng.standard_normal((6, 64)).astype(np.float32))
    w.add_tensor("output_norm.weight", np.ones(64, np.float16))
    for qt in (gguf.GGMLQuantizationType.Q8_0, gguf.GGMLQuantizationType.Q4_0,
               gguf.GGMLQuantizationType.Q5_1):
        q = gguf.quants.quantize(rng.standard_normal((4, 96)).astype(np.float32), qt)
        w.add_tensor(f"blk.0.{qt.name.lower()}.weight", q, raw_dtype=qt)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


@pytest.mark.parametrize("big", [False, True])
def test_inspect_matches_gguf_reader(tmp_path, big):
    path = tmp_path / "m.gguf"
    write(path, gguf.GGUFEndian.BIG if big else None)
    r = dtcast.inspect(str(path))
    assert r["kind"] == "gguf" and r["valid"] and r["problems"] == []
    f = r["files"][0]
    assert f["kind"] == "gguf"
    meta = f["metadata"]
    assert meta["general.architecture"] == "llama" and meta["general.name"] == "tiny"
    assert meta["llama.block_count"] == "3"
    assert meta["tokenizer.ggml.tokens"] == "[3 string: '<s>', 'a', 'b']"
    reader = gguf.GGUFReader(str(path), "r")
    assert len(r["tensors"]) == len(reader.tensors)
    for got, t in zip(r["tensors"], reader.tensors):
        assert got["name"] == t.name
        assert got["storage"].split()[1] == t.tensor_type.name
        assert got["shape"] == [int(x) for x in reversed(t.shape.tolist())]
        assert got["elements"] == int(t.n_elements)
        assert got["bytes"] == int(t.n_bytes)
        assert got["offset"] == int(t.data_offset)
        plain = {"F32": "float32", "F16": "float16"}.get(t.tensor_type.name)
        assert got["dtype"] == plain


def test_hostile_is_a_problem_naming_the_byte(tmp_path):
    path = tmp_path / "m.gguf"
    write(path)
    data = bytearray(path.read_bytes())
    data[4] = 1  # version 1
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(bytes(data))
    r = dtcast.inspect(str(bad), strict=False)
    assert not r["valid"] and "byte 4: GGUF version 1" in r["problems"][0]["message"]
    dt = os.path.join(os.environ.get("DTCAST_BUILD", "build"), "dtcast")
    p = subprocess.run([dt, "inspect", str(bad)], capture_output=True, text=True)
    assert p.returncode == 1 and "byte 4: GGUF version 1" in p.stderr
    trunc = tmp_path / "trunc.gguf"
    trunc.write_bytes(path.read_bytes()[:200])
    r = dtcast.inspect(str(trunc), strict=False)
    assert not r["valid"] and ": byte " in r["problems"][0]["message"]
