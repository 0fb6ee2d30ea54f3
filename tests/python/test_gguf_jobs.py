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


# ---- tensors -> GGUF -------------------------------------------------------------------------------

def write_checkpoint(path, rng):
    t = {"model.embed_tokens.weight": rng.standard_normal((64, 256)).astype(np.float32),
         "model.layers.0.self_attn.q_proj.weight": rng.standard_normal((32, 512)).astype(ml_dtypes.bfloat16),
         "model.layers.0.mlp.odd.weight": rng.standard_normal((8, 96)).astype(np.float16),
         "model.layers.0.input_layernorm.weight": rng.standard_normal(256).astype(ml_dtypes.bfloat16),
         "model.layers.0.post_norm.weight": rng.standard_normal((2, 64)).astype(np.float32),
         "model.pos.i32": rng.integers(-9, 9, (3, 4)).astype(np.int32),
         "model.bias": rng.standard_normal(32).astype(np.float64)}
    st.save_file(t, str(path))
    return t


def fallback(qt, k):
    """llama-quantize's fallback for rows that are not whole blocks (docs/gguf.md, "Jobs")"""
    table = {Q.Q2_K: Q.Q4_0, Q.Q3_K: Q.Q4_0, Q.TQ1_0: Q.Q4_0, Q.TQ2_0: Q.Q4_0, Q.Q4_K: Q.Q5_0,
             Q.Q5_K: Q.Q5_1, Q.Q6_K: Q.Q8_0}
    for _ in range(3):
        if k % gguf.GGML_QUANT_SIZES[qt][0] == 0:
            return qt
        qt = table.get(qt, Q.F16)
    return qt


def read_gguf(path):
    r = gguf.GGUFReader(str(path))
    tensors = {t.name: t for t in r.tensors}
    fields = {k: f.contents() for k, f in r.fields.items() if not k.startswith("GGUF.")}
    return tensors, fields


@pytest.mark.parametrize("to", ["q8_0", "q4_0", "q5_1", "mxfp4", "tq2_0", "bf16"])
def test_cast_to_gguf(tmp_path, to):
    rng = np.random.default_rng(11)
    src = write_checkpoint(tmp_path / "m.safetensors", rng)
    out = tmp_path / "m.gguf"
    r = run("cast", "-q", "--to", to, "--arch", "llama", "--kv", "llama.block_count:u32=1",
            "--kv", "general.name=tiny", tmp_path / "m.safetensors", out)
    assert r.returncode == 0, r.stderr
    tensors, fields = read_gguf(out)
    assert fields["general.architecture"] == "llama" and fields["general.name"] == "tiny"
    assert fields["llama.block_count"] == 1
    qt = Q[to.upper()]
    for name, a in src.items():
        t = tensors[name]
        assert tuple(int(d) for d in reversed(t.shape)) == a.shape, name
        f32 = a.astype(np.float32)
        if a.dtype == np.int32:
            assert t.tensor_type == Q.I32 and np.array_equal(t.data, a)
        elif a.ndim <= 1 or name.endswith("norm.weight"):
            assert t.tensor_type == Q.F32 and np.array_equal(t.data.reshape(a.shape), f32), name
        else:
            want = fallback(qt, a.shape[-1])
            assert t.tensor_type == want, (name, t.tensor_type)
            ref = gguf.quants.quantize(f32, want)
            assert np.array_equal(np.asarray(t.data).view(np.uint8).reshape(-1),
                                  ref.view(np.uint8).reshape(-1)), name
    # dtcast reads it back: dequantize gives ggml's values
    back = tmp_path / "back.safetensors"
    r = run("dequantize", "-q", "--to", "float32", out, back)
    assert r.returncode == 0, r.stderr


def test_cast_to_gguf_rules_and_fallbacks(tmp_path):
    rng = np.random.default_rng(12)
    write_checkpoint(tmp_path / "m.safetensors", rng)
    out = tmp_path / "m.gguf"
    r = run("cast", "--to", "q4_k", "--tensor-type", "*q_proj*=q6_k", "--tensor-type",
            "*embed*=q8_0", tmp_path / "m.safetensors", out)
    assert r.returncode == 0, r.stderr
    tensors, fields = read_gguf(out)
    assert fields["general.architecture"] == "unknown"
    assert fields["general.quantization_version"] == 2
    assert tensors["model.layers.0.self_attn.q_proj.weight"].tensor_type == Q.Q6_K
    assert tensors["model.embed_tokens.weight"].tensor_type == Q.Q8_0
    # 96 is not whole 256-blocks: Q4_K -> Q5_0 (32 divides 96)
    assert tensors["model.layers.0.mlp.odd.weight"].tensor_type == Q.Q5_0
    assert "model.layers.0.mlp.odd.weight" in r.stderr and "Q5_0" in r.stderr
    # GGUF -> GGUF: quantized tensors copied, unless --requantize
    out2 = tmp_path / "m2.gguf"
    r = run("cast", "-q", "--to", "q8_0", out, out2)
    assert r.returncode == 0, r.stderr
    t2, f2 = read_gguf(out2)
    for name, t in tensors.items():
        assert t2[name].tensor_type == t.tensor_type and np.array_equal(t2[name].data, t.data)
    out3 = tmp_path / "m3.gguf"
    r = run("cast", "-q", "--to", "q8_0", "--requantize", out, out3)
    assert r.returncode == 0, r.stderr
    t3, _ = read_gguf(out3)
    q = tensors["model.layers.0.self_attn.q_proj.weight"]
    want = gguf.quants.quantize(gguf.quants.dequantize(np.asarray(q.data), Q.Q6_K), Q.Q8_0)
    assert np.array_equal(np.asarray(t3[q.name].data).reshape(-1), want.reshape(-1))


def test_cast_to_gguf_refusals(tmp_path):
    a = {"w.weight": np.zeros((4, 64), ml_dtypes.float8_e4m3fn),
         "w.weight_scale": np.ones((4, 1), np.float32)}
    st.save_file(a, str(tmp_path / "f8.safetensors"))
    r = run("cast", "-q", "--to", "q8_0", tmp_path / "f8.safetensors", tmp_path / "o.gguf")
    assert r.returncode != 0 and "w.weight" in r.stderr and "dequantize" in r.stderr
    assert not (tmp_path / "o.gguf").exists()
    st.save_file({"x": np.zeros((2, 32), np.float32)}, str(tmp_path / "x.safetensors"))
    r = run("cast", "--to", "iq2_xxs", tmp_path / "x.safetensors", tmp_path / "o.gguf")
    assert r.returncode == 2 and "IQ2_XXS" in r.stderr
    r = run("cast", "--to", "q8_0", "--kv", "a:u8=300", tmp_path / "x.safetensors", tmp_path / "o.gguf")
    assert r.returncode == 2 and "--kv a" in r.stderr
    r = run("cast", tmp_path / "x.safetensors", tmp_path / "o.gguf")
    assert r.returncode == 2 and "--to" in r.stderr


def test_cast_to_gguf_nonfinite(tmp_path):
    x = np.random.default_rng(5).standard_normal((4, 64)).astype(np.float32)
    x[1, 3] = np.nan
    x[2, 0] = np.inf
    st.save_file({"w.weight": x}, str(tmp_path / "x.safetensors"))
    r = run("cast", "--to", "q8_0", tmp_path / "x.safetensors", tmp_path / "o.gguf")
    assert r.returncode == 0 and "2 NaN or infinite values" in r.stderr and "element 67" in r.stderr
    y = np.where(np.isfinite(x), x, 0).astype(np.float32)
    t, _ = read_gguf(tmp_path / "o.gguf")
    assert np.array_equal(np.asarray(t["w.weight"].data).reshape(-1),
                          gguf.quants.quantize(y, Q.Q8_0).reshape(-1))


def test_diff_gguf(tmp_path):
    rng = np.random.default_rng(21)
    write_model(tmp_path / "m.gguf", rng)
    r = run("dequantize", "-q", "--to", "float32", tmp_path / "m.gguf", tmp_path / "m.safetensors")
    assert r.returncode == 0, r.stderr
    r = run("diff", tmp_path / "m.gguf", tmp_path / "m.safetensors")
    assert r.returncode == 0 and "EQUAL within tolerance" in r.stdout, r.stdout + r.stderr
    assert "ggml Q4_K, dequantized" in r.stdout
    # a requantized copy differs, and diff says by how much
    r = run("cast", "-q", "--to", "q4_0", "--requantize", tmp_path / "m.gguf", tmp_path / "q.gguf")
    assert r.returncode == 0, r.stderr
    r = run("diff", "--json", tmp_path / "m.gguf", tmp_path / "q.gguf")
    doc = json.loads(r.stdout)
    t = {x["name"]: x for x in doc["tensors"]}
    q = t["blk.4.q8_0.weight"]
    assert q["state"] == "compared" and q["unequal"] > 0 and q["b"]["dequantized"] == "ggml Q4_0"
    assert t["norm.weight"]["identical"]
