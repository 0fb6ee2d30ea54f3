"""dtcast's files against the `safetensors` package, numpy and ml_dtypes: dtcast.convert_file,
convert_checkpoint, checkpoint_shards, dtcast.safetensors.open and python -m dtcast.

The CLI is found through DTCAST_CLI (conftest.py points it at build/dtcast)."""
import json
import os
import struct
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import dtcast
from dtcast import Error, Status

st = pytest.importorskip("safetensors")
st_numpy = pytest.importorskip("safetensors.numpy")

# dtcast type -> (safetensors dtype, ml_dtypes/numpy dtype)
TARGETS = {
    "bfloat16": ("BF16", ml_dtypes.bfloat16),
    "float16": ("F16", np.float16),
    "float8e4m3fn": ("F8_E4M3", ml_dtypes.float8_e4m3fn),
    "float8e5m2": ("F8_E5M2", ml_dtypes.float8_e5m2),
}


def read(path):
    with open(path, "rb") as f:
        return f.read()


def header(path):
    data = read(path)
    n = struct.unpack("<Q", data[:8])[0]
    return json.loads(data[8:8 + n])


def values_in_range(dtype, n=1000, seed=0):
    """float32 values spread over the finite range of dtype (normals and subnormals, both
    signs), so that no conversion overflows: RNE agrees between dtcast and ml_dtypes there."""
    rng = np.random.default_rng(seed)
    fi = ml_dtypes.finfo(dtype)
    top = float(fi.max) * 0.99
    tiny = float(fi.smallest_subnormal)
    mags = np.exp(rng.uniform(np.log(tiny), np.log(top), n))
    signs = rng.choice([-1.0, 1.0], n)
    return (mags * signs).astype(np.float32)


# ---- files written by dtcast, read by the safetensors package -------------------------------

@pytest.mark.parametrize("to", sorted(TARGETS))
def test_dtcast_output_read_by_safetensors(tmp_path, to):
    dtype_name, dtype = TARGETS[to]
    src, out = tmp_path / "w.safetensors", tmp_path / "w_out.safetensors"
    w = values_in_range(dtype).reshape(20, 50)
    exact = np.array([0.0, -0.0, 1.0, -2.0, 0.5, 1.5, 3.0, -0.25], dtype=np.float32)
    steps = np.arange(10, dtype=np.int64)
    st_numpy.save_file({"w": w, "exact": exact, "steps": steps}, str(src),
                       metadata={"format": "np"})
    assert dtcast.convert_file(src, out, to=to) is None
    # the package's own reader: dtypes, shapes and bytes as it sees them
    tensors = dict(st.deserialize(read(out)))
    assert {n: t["dtype"] for n, t in tensors.items()} == {"w": dtype_name, "exact": dtype_name,
                                                           "steps": "I64"}
    assert list(tensors["w"]["shape"]) == [20, 50]
    got = np.frombuffer(bytes(tensors["w"]["data"]), dtype).reshape(20, 50)
    np.testing.assert_array_equal(got.view(np.uint8), w.astype(dtype).view(np.uint8))
    got = np.frombuffer(bytes(tensors["exact"]["data"]), dtype)
    assert got.astype(np.float32).tolist() == exact.tolist()
    assert np.signbit(got.astype(np.float32)).tolist() == np.signbit(exact).tolist()
    assert bytes(tensors["steps"]["data"]) == steps.tobytes()
    with st.safe_open(str(out), framework="numpy") as f:
        assert f.metadata() == {"format": "np"}
        assert sorted(f.keys()) == ["exact", "steps", "w"]
    if to == "float16":
        loaded = st_numpy.load_file(str(out))
        np.testing.assert_array_equal(loaded["w"], w.astype(np.float16))


@pytest.mark.parametrize("to", ["bfloat16", "float8e4m3fn", "float8e5m2"])
def test_dtcast_output_read_by_torch(tmp_path, to):
    torch = pytest.importorskip("torch")
    dtype_name, dtype = TARGETS[to]
    src, out = tmp_path / "w.npy", tmp_path / "w.safetensors"
    w = values_in_range(dtype, 256, seed=1)
    np.save(src, w)
    dtcast.convert_file(src, out, to=to)
    from safetensors.torch import load_file
    t = load_file(str(out))["w"]  # a tensor named after the input file
    assert t.dtype == {"bfloat16": torch.bfloat16, "float8e4m3fn": torch.float8_e4m3fn,
                       "float8e5m2": torch.float8_e5m2}[to]
    assert t.float().numpy().tolist() == w.astype(dtype).astype(np.float32).tolist()


# ---- files written by the safetensors package, read by dtcast -------------------------------

def test_same_type_is_a_byte_copy(tmp_path):
    """dtcast writes the reference writer's layout (tensors by dtype then name, compact JSON
    padded with spaces to 8 bytes), so converting a save_file output to the type its floats
    already have gives the file back byte for byte. __metadata__ has one key: with several,
    the reference writer's order is not deterministic (a hash map), dtcast keeps the input's."""
    rng = np.random.default_rng(2)
    tensors = {
        "b.weight": rng.standard_normal((3, 5)).astype(np.float32),
        "a.weight": rng.standard_normal(7).astype(np.float32),
        "ids": np.arange(4, dtype=np.int64),
        "mask": np.array([True, False, True]),
        "u8": np.arange(3, dtype=np.uint8),
        "c": np.array([1 + 2j], dtype=np.complex64),
        "i16": np.arange(5, dtype=np.int16),
        "scalar": np.array(1.5, dtype=np.float32),
        "empty": np.zeros((0, 3), dtype=np.float32),
    }
    src, out = tmp_path / "m.safetensors", tmp_path / "m_out.safetensors"
    st_numpy.save_file(tensors, str(src), metadata={"format": "np"})
    dtcast.convert_file(src, out, to="float32")
    assert read(out) == read(src)
    # and so for float16 floats converted to float16
    half = {"w": rng.standard_normal(9).astype(np.float16), "n": np.arange(2, dtype=np.int32)}
    st_numpy.save_file(half, str(src))
    dtcast.convert_file(src, out, to="float16")
    assert read(out) == read(src)


def test_save_file_converted_values(tmp_path):
    w = values_in_range(ml_dtypes.bfloat16, 500, seed=3).astype(np.float64)
    src, out = tmp_path / "m.safetensors", tmp_path / "m_bf16.safetensors"
    st_numpy.save_file({"w": w, "k": np.arange(3, dtype=np.uint32)}, str(src))
    dtcast.convert_file(src, out, to="bf16")
    with dtcast.safetensors.open(out) as f:
        assert f["w"].dtype == ml_dtypes.bfloat16
        np.testing.assert_array_equal(f["w"].view(np.uint16),
                                      w.astype(ml_dtypes.bfloat16).view(np.uint16))
        np.testing.assert_array_equal(f["k"], np.arange(3, dtype=np.uint32))


# ---- .npy ------------------------------------------------------------------------------------

@pytest.mark.parametrize("to", sorted(TARGETS))
def test_npy_round_trip(tmp_path, to):
    _, dtype = TARGETS[to]
    w = values_in_range(dtype, 300, seed=4).reshape(3, 100)
    src, mid, back = tmp_path / "w.npy", tmp_path / "w_low.npy", tmp_path / "w_back.npy"
    np.save(src, w)
    dtcast.convert_file(src, mid, to=to)
    low = np.load(mid)
    assert low.shape == (3, 100)
    # numpy lacks the type: dtcast writes its codes (<u2 for 16 bits, |u1 for 8), unless numpy
    # has it (float16)
    codes = low.view(dtype)
    np.testing.assert_array_equal(codes.view(low.dtype), w.astype(dtype).view(low.dtype))
    dtcast.convert_file(mid, back, to="float32", src_type=to)
    np.testing.assert_array_equal(np.load(back), w.astype(dtype).astype(np.float32))


def test_npy_options(tmp_path):
    src, out = tmp_path / "x.npy", tmp_path / "y.npy"
    np.save(src, np.array([1e6, -1e6, 2.5, 3.5, -2.5], dtype=np.float32))
    dtcast.convert_file(src, out, to="float8e4m3fn", saturate=True)
    assert np.load(out).view(ml_dtypes.float8_e4m3fn).astype(np.float32)[:2].tolist() == \
        [448.0, -448.0]
    dtcast.convert_file(src, out, to="int8", int_overflow="saturate", round="nearest_away")
    assert np.load(out).tolist() == [127, -128, 3, 4, -3]
    dtcast.convert_file(src, out, to="int8", int_overflow="saturate", round="floor")
    assert np.load(out).tolist() == [127, -128, 2, 3, -3]
    dtcast.convert_file(src, out, to="float8e4m3fn", profile="onnx", opset=21)
    assert np.load(out).view(ml_dtypes.float8_e4m3fn).astype(np.float32)[0] == 448.0
    # the package's type names and dtypes
    dtcast.convert_file(src, out, to=ml_dtypes.bfloat16)
    assert np.load(out).dtype == np.uint16
    dtcast.convert_file(src, out, to="float8_e4m3fn", saturate=True)
    assert np.load(out).view(ml_dtypes.float8_e4m3fn).astype(np.float32)[0] == 448.0
    with pytest.raises(Error, match="to: "):
        dtcast.convert_file(src, out, to="float7")
    report = dtcast.convert_file(src, out, to="bfloat16", report=True, threads=2)
    assert "x: float32 -> bfloat16" in report and "exact" in report


def test_paths_that_look_like_flags(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.save("-w.npy", np.ones(3, dtype=np.float32))
    dtcast.convert_file("-w.npy", "--out.npy", to="float16")
    assert np.load("--out.npy").dtype == np.float16
    import pathlib
    dtcast.convert_file(pathlib.Path("-w.npy"), pathlib.Path("out2.npy"), to="float16")
    assert os.path.exists("out2.npy")


# ---- errors ----------------------------------------------------------------------------------

def test_missing_file(tmp_path):
    with pytest.raises(Error) as e:
        dtcast.convert_file(tmp_path / "nothere.npy", tmp_path / "o.npy", to="bfloat16")
    assert "nothere.npy" in str(e.value) and "No such file" in str(e.value)
    assert e.value.status == Status.IO
    assert not str(e.value).startswith("dtcast:")
    assert not os.path.exists(tmp_path / "o.npy")


def test_truncated_files(tmp_path):
    src = tmp_path / "m.safetensors"
    st_numpy.save_file({"w": np.ones(100, dtype=np.float32)}, str(src))
    data = read(src)
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes(data[:-10])
    with pytest.raises(Error) as e:
        dtcast.convert_file(cut, tmp_path / "o.safetensors", to="bf16")
    assert e.value.status == Status.BAD_FILE and "cut.safetensors" in str(e.value)
    assert "at byte" in str(e.value)
    with pytest.raises(Error) as e2:
        dtcast.safetensors.open(cut)
    assert e2.value.status == Status.BAD_FILE and "at byte" in str(e2.value)
    npy = tmp_path / "w.npy"
    np.save(npy, np.ones(10, dtype=np.float32))
    (tmp_path / "t.npy").write_bytes(read(npy)[:-4])
    with pytest.raises(Error) as e3:
        dtcast.convert_file(tmp_path / "t.npy", tmp_path / "o.npy", to="bf16")
    assert e3.value.status == Status.BAD_FILE and "t.npy" in str(e3.value)


def test_bad_options():
    with pytest.raises(Error, match="round"):
        dtcast.convert_file("a.npy", "b.npy", to="bf16", round="sideways")
    with pytest.raises(Error, match="int_overflow"):
        dtcast.convert_file("a.npy", "b.npy", to="bf16", int_overflow="clamp")
    with pytest.raises(Error, match="profile"):
        dtcast.convert_file("a.npy", "b.npy", to="bf16", profile="tpu")
    with pytest.raises(Error, match="opset"):
        dtcast.convert_file("a.npy", "b.npy", to="bf16", opset=19)
    with pytest.raises(TypeError):
        dtcast.convert_file(1.5, "b.npy", to="bf16")


def test_cli_refusal_status(tmp_path):
    np.save(tmp_path / "w.npy", np.ones(2, dtype=np.float32))
    with pytest.raises(Error) as e:
        dtcast.convert_file(tmp_path / "w.npy", tmp_path / "o.npy", to="floatx")
    assert e.value.status == Status.UNKNOWN_TYPE and "floatx" in str(e.value)
    np.save(tmp_path / "c.npy", np.ones(2, dtype=np.complex64))
    with pytest.raises(Error) as e:
        dtcast.convert_file(tmp_path / "c.npy", tmp_path / "o.npy", to="float32")
    assert e.value.status == Status.COMPLEX_TO_REAL and "imaginary" in str(e.value)


# ---- dtcast.safetensors.open -----------------------------------------------------------------

NUMPY_DTYPES = [np.float64, np.float32, np.float16, np.int64, np.uint64, np.int32, np.uint32,
                np.int16, np.uint16, np.int8, np.uint8, np.bool_, np.complex64]


@pytest.mark.parametrize("dtype", NUMPY_DTYPES, ids=lambda d: np.dtype(d).name)
def test_open_equals_load_file(tmp_path, dtype):
    rng = np.random.default_rng(5)
    raw = rng.integers(0, 256, size=(4, 6) + (np.dtype(dtype).itemsize,), dtype=np.uint8)
    a = raw.view(dtype).reshape(4, 6) if dtype is not np.bool_ else raw[..., 0] % 2 == 1
    tensors = {"a": a, "z": np.zeros((2, 0), dtype=dtype), "s": np.array(a.flat[0])}
    path = tmp_path / "f.safetensors"
    st_numpy.save_file(tensors, str(path), metadata={"k": "v"})
    want = st_numpy.load_file(str(path))
    with dtcast.safetensors.open(path) as f:
        assert set(f) == set(want) and len(f) == 3 and "a" in f and "b" not in f
        assert f.metadata == {"k": "v"}
        for name in want:
            assert f[name].dtype == want[name].dtype and f[name].shape == want[name].shape
            assert f[name].tobytes() == want[name].tobytes()
            assert not f[name].flags.writeable


def test_open_keys_in_file_order_and_no_copy(tmp_path):
    path = tmp_path / "f.safetensors"
    st_numpy.save_file({"b": np.arange(4, dtype=np.float32), "a": np.arange(3, dtype=np.int64),
                        "c": np.ones(2, dtype=np.float32)}, str(path))
    f = dtcast.safetensors.open(path)
    assert list(f) == list(header(path))  # the header's order: I64 first, then F32 by name
    assert list(f) == ["a", "b", "c"]
    assert f.metadata == {}
    a = f["b"]
    assert not a.flags.owndata  # a view on the map
    f.close()
    assert f.closed
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0]  # arrays stay valid after close
    with pytest.raises(ValueError):
        f["b"]
    assert list(f) == ["a", "b", "c"]
    g = dtcast.safetensors.open(path)
    g.close()  # no array: released at once
    assert g.closed


def test_open_ml_dtypes(tmp_path):
    src = tmp_path / "w.safetensors"
    w = np.array([0.5, 1.0, 1.5, 2.0, -3.0, 6.0, 0.0, -0.5], dtype=np.float32)
    st_numpy.save_file({"w": w}, str(src))
    for to, dtype in [("bfloat16", ml_dtypes.bfloat16), ("float8e4m3fn", ml_dtypes.float8_e4m3fn),
                      ("float8e5m2", ml_dtypes.float8_e5m2),
                      ("float8e4m3fnuz", ml_dtypes.float8_e4m3fnuz),
                      ("float8e5m2fnuz", ml_dtypes.float8_e5m2fnuz)]:
        out = tmp_path / ("w_%s.safetensors" % to)
        dtcast.convert_file(src, out, to=to)
        with dtcast.safetensors.open(out) as f:
            assert f["w"].dtype == np.dtype(dtype), to
            assert f["w"].astype(np.float32).tolist() == w.tolist(), to
            assert f.info("w").type == to and not f.info("w").packed
    out = tmp_path / "w_e8m0.safetensors"
    dtcast.convert_file(src, out, to="float8e8m0", select="w", exclude=["nothing*"])
    with dtcast.safetensors.open(out) as f:
        assert f["w"].dtype == np.dtype(ml_dtypes.float8_e8m0fnu)


def test_open_packed_types(tmp_path):
    src = tmp_path / "w.safetensors"
    w = np.array([0.5, 1.0, 1.5, 2.0, -3.0, 6.0, 0.0, -0.5], dtype=np.float32)
    st_numpy.save_file({"w": w.reshape(2, 4)}, str(src))
    out = tmp_path / "w_f4.safetensors"
    dtcast.convert_file(src, out, to="float4e2m1")
    codes = w.astype(ml_dtypes.float4_e2m1fn).view(np.uint8)
    with dtcast.safetensors.open(out) as f:
        info = f.info("w")
        assert (info.dtype, info.type, info.shape, info.packed) == ("F4", "float4e2m1", (2, 4),
                                                                    True)
        b = f["w"]
        assert b.dtype == np.uint8 and b.shape == (4,)
        assert b.tolist() == [int(codes[2 * i] | codes[2 * i + 1] << 4) for i in range(4)]
        # dtcast.unpack turns the packed bytes into the ml_dtypes array
        np.testing.assert_array_equal(dtcast.unpack(b, info.type, info.shape),
                                      w.reshape(2, 4).astype(ml_dtypes.float4_e2m1fn))
    for to, dtype, name in [("float6e2m3fn", ml_dtypes.float6_e2m3fn, "F6_E2M3"),
                            ("float6e3m2fn", ml_dtypes.float6_e3m2fn, "F6_E3M2")]:
        out = tmp_path / ("w_%s.safetensors" % to)
        dtcast.convert_file(src, out, to=to)
        codes = [int(c) for c in w.astype(dtype).view(np.uint8)]
        stream = sum(c << (6 * i) for i, c in enumerate(codes))  # LSB-first bit stream
        with dtcast.safetensors.open(out) as f:
            assert f.info("w").dtype == name and f.info("w").shape == (2, 4)
            assert f["w"].tobytes() == stream.to_bytes(6, "little")
            info = f.info("w")
            np.testing.assert_array_equal(dtcast.unpack(f["w"], info.type, info.shape),
                                          w.reshape(2, 4).astype(dtype))


def raw_file(head, data=b"", n=None):
    text = json.dumps(head).encode() if isinstance(head, dict) else head
    return struct.pack("<Q", len(text) if n is None else n) + text + data


REFUSALS = [
    ("short", b"\x01\x02", ["too short", "at byte 0"]),
    ("length_beyond", raw_file({}, n=1000), ["runs past the end", "at byte 0"]),
    ("huge_length", raw_file({}, n=10 ** 12), ["over the limit", "at byte 0"]),
    ("bad_json", raw_file(b'{"a": '), ["bad JSON", "at byte 14"]),
    ("not_object", raw_file(b"[1, 2]"), ["not a JSON object", "at byte 8"]),
    ("duplicate", raw_file(b'{"a": 1, "a": 2}'), ["duplicate key"]),
    ("unknown_dtype", raw_file({"w": {"dtype": "F12", "shape": [1], "data_offsets": [0, 2]}},
                               b"\0\0"), ["unknown dtype 'F12'", "'w'", "at byte 9"]),
    ("wrong_size", raw_file({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}},
                            b"\0" * 4), ["need 8", "'w'"]),
    ("past_end", raw_file({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}},
                          b"\0" * 4), ["run past the end", "'w'"]),
    ("overlap", raw_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                          "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}},
                         b"\0" * 8), ["overlap", "'b'"]),
    ("gap", raw_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8),
     ["gap of 4 bytes", "'a'"]),
    ("spare", raw_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 8),
     ["4 bytes after the last tensor"]),
    ("f6_not_whole", raw_file({"a": {"dtype": "F6_E2M3", "shape": [3], "data_offsets": [0, 3]}},
                              b"\0" * 3), ["not a whole number of bytes"]),
    ("bad_shape", raw_file({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 0]}}),
     ["shape"]),
    ("bad_metadata", raw_file({"__metadata__": {"k": 1}}), ["__metadata__"]),
]


@pytest.mark.parametrize("name,data,words", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_open_refuses(tmp_path, name, data, words):
    path = tmp_path / (name + ".safetensors")
    path.write_bytes(data)
    with pytest.raises(Error) as e:
        dtcast.safetensors.open(path)
    assert e.value.status == Status.BAD_FILE
    for w in words:
        assert w in str(e.value), (w, str(e.value))
    assert str(path) in str(e.value)


def test_open_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        dtcast.safetensors.open(tmp_path / "nothere.safetensors")


# ---- sharded checkpoints ---------------------------------------------------------------------

def make_sharded(folder, nshards=3):
    os.makedirs(folder)
    rng = np.random.default_rng(6)
    weight_map = {}
    for k in range(nshards):
        name = "model-%05d-of-%05d.safetensors" % (k + 1, nshards)
        tensors = {"l%d.w" % k: rng.standard_normal((4, 4)).astype(np.float32),
                   "l%d.n" % k: np.arange(3, dtype=np.int32)}
        st_numpy.save_file(tensors, os.path.join(folder, name), metadata={"format": "pt"})
        weight_map.update({n: name for n in tensors})
    path = os.path.join(folder, "model.safetensors.index.json")
    with open(path, "w") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f)
    return path


def folder_bytes(d):
    return {n: read(os.path.join(d, n)) for n in sorted(os.listdir(d))}


def test_checkpoint_steps_equal_one_step(tmp_path):
    index = make_sharded(str(tmp_path / "src"))
    names = dtcast.checkpoint_shards(index)
    assert names == sorted(names) and len(names) == 3
    assert dtcast.checkpoint_shards(tmp_path / "src") == names
    one = tmp_path / "one"
    written = dtcast.convert_checkpoint(tmp_path / "src", one, to="bfloat16")
    assert sorted(os.path.basename(p) for p in written) == \
        sorted(names + ["model.safetensors.index.json"])
    want = folder_bytes(one)
    # by position and by name, in any order, then the index
    steps = tmp_path / "steps"
    assert dtcast.convert_checkpoint(index, steps, to="bfloat16", shards=[2],
                                     write_index=False) == [os.path.join(str(steps), names[2])]
    dtcast.convert_checkpoint(index, steps, to="bfloat16", shards=[names[0], "1"],
                              write_index=False)
    assert sorted(os.listdir(steps)) == names
    assert dtcast.convert_checkpoint(index, steps, index_only=True) == \
        [os.path.join(str(steps), "model.safetensors.index.json")]
    assert folder_bytes(steps) == want
    # shards=[] with write_index=True is the final step too
    os.remove(os.path.join(str(steps), "model.safetensors.index.json"))
    dtcast.convert_checkpoint(index, steps, to="bfloat16", shards=[])
    assert folder_bytes(steps) == want
    # the last shard with write_index=True writes the index after it
    steps2 = tmp_path / "steps2"
    dtcast.convert_checkpoint(index, steps2, to="bfloat16", shards=[0, 1], write_index=False)
    dtcast.convert_checkpoint(index, steps2, to="bfloat16", shards=[2])
    assert folder_bytes(steps2) == want


def test_checkpoint_errors(tmp_path):
    index = make_sharded(str(tmp_path / "src"))
    with pytest.raises(Error, match="position 7"):
        dtcast.convert_checkpoint(index, tmp_path / "o", to="bf16", shards=[7])
    with pytest.raises(Error, match="not a shard"):
        dtcast.convert_checkpoint(index, tmp_path / "o", to="bf16", shards=["x.safetensors"])
    with pytest.raises(Error) as e:
        dtcast.convert_checkpoint(index, tmp_path / "o", index_only=True)
    assert e.value.status == Status.IO and "not a folder" in str(e.value)
    dtcast.convert_checkpoint(index, tmp_path / "o", to="bf16", shards=[0, 2], write_index=False)
    with pytest.raises(Error) as e:
        dtcast.convert_checkpoint(index, tmp_path / "o", index_only=True)
    assert e.value.status == Status.IO and "model-00002-of-00003.safetensors" in str(e.value)
    assert "missing" in str(e.value)
    with pytest.raises(Error, match="no \\*.safetensors.index.json"):
        dtcast.checkpoint_shards(tmp_path)


def test_checkpoint_single_file(tmp_path):
    src = tmp_path / "m.safetensors"
    st_numpy.save_file({"w": np.ones(3, dtype=np.float32)}, str(src))
    out = dtcast.convert_checkpoint(src, tmp_path / "out", to="float16")
    assert out == [os.path.join(str(tmp_path / "out"), "m.safetensors")]
    assert st_numpy.load_file(out[0])["w"].dtype == np.float16


# ---- python -m dtcast ------------------------------------------------------------------------

def test_python_m_dtcast(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(dtcast.__file__))] +
        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    p = subprocess.run([sys.executable, "-m", "dtcast", "types"], capture_output=True, env=env)
    assert p.returncode == 0 and b"bfloat16" in p.stdout
    p = subprocess.run([sys.executable, "-m", "dtcast", "cast", "--to", "nope", "a", "b"],
                       capture_output=True, env=env)
    assert p.returncode == 2 and p.stderr.startswith(b"dtcast: ")


def test_scaled_tensors_are_not_cast_as_values(tmp_path):
    """A float8 weight with its weight_scale: convert_file refuses to cast the codes as values
    (dtcast.Error naming both tensors), writes nothing; raw_codes=True casts the codes; a
    select of the unscaled tensors alone works; dequantize gives the values."""
    sn = pytest.importorskip("safetensors.numpy")
    w = np.random.default_rng(3).standard_normal((4, 64)).astype(np.float32) * 0.01
    s = np.float32([np.abs(w).max() / 448])
    codes = (w / s).astype(ml_dtypes.float8_e4m3fn)
    src, dst = str(tmp_path / "q.safetensors"), str(tmp_path / "bf16.safetensors")
    sn.save_file({"l.weight": codes, "l.weight_scale": s, "l.bias": np.ones(4, np.float32)}, src)
    with pytest.raises(Error) as e:
        dtcast.convert_file(src, dst, to="bfloat16")
    assert "'l.weight'" in str(e.value) and "'l.weight_scale'" in str(e.value)
    assert "dequantize" in str(e.value) and not os.path.exists(dst)
    dtcast.convert_file(src, dst, to="bfloat16", raw_codes=True)
    got = sn.load_file(dst)["l.weight"]
    assert np.array_equal(got.astype(np.float32), codes.astype(np.float32))  # the codes, as asked
    dtcast.convert_file(src, dst, to="bfloat16", select="l.bias")
    from safetensors import safe_open
    with safe_open(dst, framework="np") as f:  # (numpy has no float8 for the copied codes)
        assert f.get_tensor("l.bias").astype(np.float32).tolist() == [1, 1, 1, 1]
