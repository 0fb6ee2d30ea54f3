"""The jobs on GGUF models (files/gguf_job.c) against gguf-py 0.19.0 and the safetensors
package: `dtcast dequantize model.gguf out.safetensors` on files gguf-py's GGUFWriter wrote
(every block type ggml dequantizes, element-wise types, 0-d..4-d shapes, split sets), read back
with safetensors.numpy; float32 equals gguf.quants.dequantize bit for bit, bfloat16 / float16
the exact value (dtcast's float64) rounded once, F32/F16/BF16/I32 copied byte for byte; the
metadata kept as strings; damaged and missing inputs refused with the file named."""
import json
import os
import subprocess

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")
st = pytest.importorskip("safetensors.numpy")
ml_dtypes = pytest.importorskip("ml_dtypes")
import dtcast.gguf as G  # noqa: E402

DTCAST = os.path.join(os.environ.get("DTCAST_BUILD", "build"), "dtcast")
Q = gguf.GGMLQuantizationType
# every block type gguf-py writes and ggml dequantizes (Q8_1: gguf-py's size is wrong)
BLOCK_TYPES = [Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1, Q.Q8_0, Q.Q2_K, Q.Q3_K, Q.Q4_K, Q.Q5_K, Q.Q6_K,
               Q.IQ2_XXS, Q.IQ2_XS, Q.IQ2_S, Q.IQ3_XXS, Q.IQ3_S, Q.IQ1_S, Q.IQ1_M, Q.IQ4_NL,
               Q.IQ4_XS, Q.TQ1_0, Q.TQ2_0, Q.MXFP4, Q.NVFP4]


def blocks(rng, qt, rows, k):
    """Random blocks whose float16 scales are tame (random bytes elsewhere)."""
    bs, size = gguf.GGML_QUANT_SIZES[qt]
    raw = rng.integers(0, 256, (rows, k // bs * size), dtype=np.uint8)
    if qt in (Q.Q8_0, Q.Q4_0, Q.Q5_0, Q.Q4_1, Q.Q5_1, Q.MXFP4):
        return gguf.quants.quantize(rng.standard_normal((rows, k)).astype(np.float32), qt)
    return raw


def write_model(path, rng, split=0):
    kw = {"split_max_tensors": split} if split else {}
    w = gguf.GGUFWriter(str(path), "llama", **kw)
    w.add_uint32("llama.block_count", 2)
    w.add_float32("llama.rope.freq_base", 500000.0)
    w.add_string("tokenizer.ggml.model", "gpt2")
    w.add_array("tokenizer.ggml.tokens", ["<s>", "a\"b", "\u00e9", "\n"])
    w.add_array("tokenizer.ggml.scores", [0.5, -1.25])
    src = {}
    for i, qt in enumerate(BLOCK_TYPES):
        rows, k = (3, 512) if gguf.GGML_QUANT_SIZES[qt][0] == 256 else (5, 128)
        raw = blocks(rng, qt, rows, k)
        name = f"blk.{i}.{qt.name.lower()}.weight"
        w.add_tensor(name, raw, raw_dtype=qt)
        src[name] = (qt, raw, (rows, k))
    plain = {"norm.weight": rng.standard_normal(64).astype(np.float32),
             "f16.weight": rng.standard_normal((4, 8)).astype(np.float16),
             "pos.i32": rng.integers(-9, 9, (2, 3, 4)).astype(np.int32),
             "four.f32": rng.standard_normal((2, 1, 3, 2)).astype(np.float32),
             "scalar": np.array(2.5, np.float32)}
    for name, a in plain.items():
        w.add_tensor(name, a)
        src[name] = (None, a, a.shape)
    bf = gguf.quants.quantize(rng.standard_normal((3, 16)).astype(np.float32), Q.BF16)
    w.add_tensor("bf16.weight", bf, raw_shape=bf.shape, raw_dtype=Q.BF16)
    src["bf16.weight"] = (Q.BF16, bf, (3, 16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return src


def run(*args):
    return subprocess.run([DTCAST, *map(str, args)], capture_output=True, text=True)


def expected(qt, raw, shape, to):
    if qt is None:
        return raw
    if qt == Q.BF16:
        return raw.view(ml_dtypes.bfloat16).reshape(shape)
    if to == "float32":
        return gguf.quants.dequantize(raw, qt).reshape(shape)
    exact = G.dequantize(raw, qt.value, dtype=np.float64).reshape(shape)
    return exact.astype(ml_dtypes.bfloat16 if to == "bfloat16" else np.float16)


def same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f" or a.dtype == ml_dtypes.bfloat16:
        fa, fb = a.astype(np.float64), b.astype(np.float64)
        nan = np.isnan(fa) & np.isnan(fb)
        return bool(np.all(nan | (a.view(np.uint8).reshape(a.shape + (-1,)) ==
                                  b.view(np.uint8).reshape(b.shape + (-1,))).all(-1)))
    return np.array_equal(a.view(np.uint8), b.view(np.uint8))


def header(path):
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        return json.loads(f.read(n))


@pytest.mark.parametrize("to", ["float32", "bfloat16", "float16"])
def test_dequantize_gguf(tmp_path, to):
    rng = np.random.default_rng(7)
    src = write_model(tmp_path / "m.gguf", rng)
    out = tmp_path / "m.safetensors"
    r = run("dequantize", "-q", "--to", to, tmp_path / "m.gguf", out)
    assert r.returncode == 0, r.stderr
    got = st.load_file(str(out))
    assert sorted(got) == sorted(src)
    bad = [n for n, (qt, raw, shape) in src.items() if not same_bits(got[n], expected(qt, raw, shape, to))]
    assert not bad, bad
    meta = header(out)["__metadata__"]
    assert meta["general.architecture"] == "llama" and meta["llama.block_count"] == "2"
    assert json.loads(meta["tokenizer.ggml.tokens"]) == ["<s>", "a\"b", "\u00e9", "\n"]
    assert json.loads(meta["tokenizer.ggml.scores"]) == [0.5, -1.25]
    assert "general.alignment" not in meta


def test_dequantize_no_metadata(tmp_path):
    write_model(tmp_path / "m.gguf", np.random.default_rng(1))
    r = run("dequantize", "-q", "--no-metadata", tmp_path / "m.gguf", tmp_path / "o.safetensors")
    assert r.returncode == 0, r.stderr
    assert "__metadata__" not in header(tmp_path / "o.safetensors")
    r = run("dequantize", "--no-metadata", tmp_path / "o.safetensors", tmp_path / "p.safetensors")
    assert r.returncode == 2 and "--no-metadata is for a GGUF model" in r.stderr


def test_dequantize_split(tmp_path):
    rng = np.random.default_rng(2)
    src = write_model(tmp_path / "m.gguf", rng, split=10)
    shards = sorted(p.name for p in tmp_path.glob("m-*.gguf"))
    assert len(shards) >= 3
    out = tmp_path / "out"
    # any shard of the set names the whole set
    r = run("dequantize", "-q", "--to", "float32", tmp_path / shards[1], out)
    assert r.returncode == 0, r.stderr
    index = json.loads((out / "model.safetensors.index.json").read_text())
    files = sorted(set(index["weight_map"].values()))
    assert len(files) == len(shards) and sorted(index["weight_map"]) == sorted(src)
    got = {}
    for f in files:
        got.update(st.load_file(str(out / f)))
    bad = [n for n, (qt, raw, shape) in src.items()
           if not same_bits(got[n], expected(qt, raw, shape, "float32"))]
    assert not bad, bad
    total = sum(a.nbytes for a in got.values())
    assert index["metadata"]["total_size"] == total
    # a missing shard
    os.remove(tmp_path / shards[-1])
    r = run("dequantize", "-q", tmp_path / shards[0], tmp_path / "out2")
    assert r.returncode != 0 and shards[-1] in r.stderr


def test_dequantize_refusals(tmp_path):
    src = tmp_path / "m.gguf"
    write_model(src, np.random.default_rng(3))
    data = bytearray(src.read_bytes())
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(bytes(data[: len(data) - 100]))  # the last tensor's data cut
    out = tmp_path / "o.safetensors"
    r = run("dequantize", "-q", bad, out)
    assert r.returncode != 0 and "bad.gguf" in r.stderr and "byte" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not out.exists()
    r = run("dequantize", "-q", tmp_path / "none.gguf", out)
    assert r.returncode != 0 and "none.gguf" in r.stderr
