"""The file jobs run in process: convert_file, convert_checkpoint, quantize_checkpoint and
dequantize_checkpoint start no child process, raise dtcast.Error naming the tensor, the file and
the byte offset, report progress (an exception in the callback cancels and leaves nothing),
release the GIL, and write the same bytes as the dtcast program (DTCAST_CLI) for the same job.
The expected values come from the files themselves (sizes, safetensors headers), numpy and the
`safetensors` package."""
import json
import os
import struct
import subprocess
import sys
import threading
import types
import warnings

import ml_dtypes
import numpy as np
import pytest

import dtcast
from dtcast import Error, Status

st_numpy = pytest.importorskip("safetensors.numpy")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def data_bytes(path):
    """The bytes of tensor data in a .safetensors file: its size less the header."""
    n = struct.unpack("<Q", read(path)[:8])[0]
    return os.path.getsize(path) - 8 - n


def make_model(folder, nshards=2, scaled=False):
    """A sharded checkpoint of float32 weights (and an int tensor); scaled: the second shard
    holds a float8 weight with its weight_scale (a quantized tensor)."""
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(11)
    weight_map = {}
    for k in range(nshards):
        name = "model-%05d-of-%05d.safetensors" % (k + 1, nshards)
        t = {"layers.%d.mlp.weight" % k: rng.standard_normal((64, 256)).astype(np.float32),
             "layers.%d.n" % k: np.arange(5, dtype=np.int32)}
        if scaled and k == 1:
            s = np.float32([0.01])
            t["layers.1.q.weight"] = (rng.standard_normal((8, 32)) / 0.01).astype(
                ml_dtypes.float8_e4m3fn)
            t["layers.1.q.weight_scale"] = s
        st_numpy.save_file(t, os.path.join(folder, name), metadata={"format": "pt"})
        weight_map.update({n: name for n in t})
    path = os.path.join(folder, "model.safetensors.index.json")
    with open(path, "w") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f)
    return path


def folder_bytes(d):
    return {n: read(os.path.join(d, n)) for n in sorted(os.listdir(d))}


@pytest.fixture
def no_child(monkeypatch):
    """Every way of starting a program raises."""
    def refuse(*a, **k):
        raise AssertionError("a child process was started")
    monkeypatch.setattr(subprocess, "Popen", refuse)
    for name in ("posix_spawn", "posix_spawnp", "fork", "forkpty", "execv", "execve", "system",
                 "spawnv", "spawnve"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, refuse)


def test_every_job_in_process(tmp_path, no_child):
    index = make_model(str(tmp_path / "src"))
    shard = os.path.join(tmp_path, "src", "model-00001-of-00002.safetensors")
    # one file, each kind
    w = np.random.default_rng(1).standard_normal((33, 7)).astype(np.float32)
    np.save(tmp_path / "w.npy", w)
    dtcast.convert_file(tmp_path / "w.npy", tmp_path / "w16.npy", to="float16")
    assert np.array_equal(np.load(tmp_path / "w16.npy"), w.astype(np.float16))
    dtcast.convert_file(shard, tmp_path / "s.safetensors", to="bfloat16")
    got = st_numpy.load_file(str(tmp_path / "s.safetensors"))
    want = st_numpy.load_file(shard)
    assert np.array_equal(got["layers.0.mlp.weight"],
                          want["layers.0.mlp.weight"].astype(ml_dtypes.bfloat16))
    assert np.array_equal(got["layers.0.n"], want["layers.0.n"])
    report = dtcast.convert_file(tmp_path / "w.npy", tmp_path / "w8.npy", to="float8_e4m3fn",
                                 report=True)
    assert "float32 -> float8e4m3fn" in report
    # a sharded checkpoint in one step, in steps, the index alone
    written = dtcast.convert_checkpoint(index, tmp_path / "one", to="bfloat16")
    assert sorted(os.path.basename(p) for p in written) == sorted(os.listdir(tmp_path / "one"))
    for n in dtcast.checkpoint_shards(index):
        dtcast.convert_checkpoint(index, tmp_path / "steps", to="bfloat16", shards=[n],
                                  write_index=False)
    dtcast.convert_checkpoint(index, tmp_path / "steps", index_only=True)
    assert folder_bytes(tmp_path / "one") == folder_bytes(tmp_path / "steps")
    # quantize and back
    q = dtcast.quantize_checkpoint(shard, tmp_path / "q.safetensors", scheme="mxfp8")
    assert q == str(tmp_path / "q.safetensors")
    names = set(json.loads(read(q)[8:8 + struct.unpack("<Q", read(q)[:8])[0]]))
    assert {"layers.0.mlp.weight", "layers.0.mlp.weight_scale"} <= names
    d = dtcast.dequantize_checkpoint(q, tmp_path / "d.safetensors", to="float32")
    back = st_numpy.load_file(d)["layers.0.mlp.weight"]
    orig = want["layers.0.mlp.weight"]
    # MXFP8 E4M3: 3 mantissa bits, a power-of-two scale per 32: within 2^-4 relative of the
    # block's largest element (|x| / max <= 1)
    blocks = np.abs(orig).reshape(64, 8, 32).max(axis=2, keepdims=True)
    assert np.all(np.abs(back - orig).reshape(64, 8, 32) <= blocks * 2.0 ** -3)


def test_strings_in_process(tmp_path, no_child):
    """String tensors are converted whole in this process too: numbers to text and back give the
    same float32 values (the shortest strings that round-trip), raw text lines are read, and a
    checkpoint is refused by name."""
    w = np.float32([0.1, -2.5, 3e38, 1e-45, np.inf, -0.0])
    np.save(tmp_path / "w.npy", w)
    dtcast.convert_file(tmp_path / "w.npy", tmp_path / "s.npy", to="string")
    text = np.load(tmp_path / "s.npy")
    assert text.dtype.kind == "U" and [np.float32(t) for t in text] == list(w)
    dtcast.convert_file(tmp_path / "s.npy", tmp_path / "back.npy", to="float32")
    assert read(tmp_path / "back.npy") == read(tmp_path / "w.npy")
    (tmp_path / "lines.txt.raw").write_bytes(b"1.5\r\n-2\n7e-3\n")
    dtcast.convert_file(tmp_path / "lines.txt.raw", tmp_path / "l.npy", to="float64",
                        src_type="string")
    assert np.load(tmp_path / "l.npy").tolist() == [1.5, -2.0, 7e-3]
    st_numpy.save_file({"a": w}, str(tmp_path / "c.safetensors"))
    with pytest.raises(Error) as e:
        dtcast.convert_file(tmp_path / "c.safetensors", tmp_path / "c.npy", to="string")
    assert "not checkpoints" in str(e.value)
    assert not os.path.exists(tmp_path / "c.npy")


def test_errors_name_the_tensor(tmp_path, no_child):
    # a scaled tensor refused by convert_checkpoint
    index = make_model(str(tmp_path / "src"), scaled=True)
    with pytest.raises(Error) as e:
        dtcast.convert_checkpoint(index, tmp_path / "o", to="bfloat16")
    assert e.value.tensor == "layers.1.q.weight"
    assert "'layers.1.q.weight'" in str(e.value) and "dtcast dequantize" in str(e.value)
    assert "raw_codes=True" in str(e.value)
    assert e.value.file in (index, os.path.join(tmp_path, "src", "model-00002-of-00002.safetensors"))
    assert not os.path.isdir(tmp_path / "o") or os.listdir(tmp_path / "o") == []
    # a bad shard: the second one cut inside its last tensor's data
    index = make_model(str(tmp_path / "cut"))
    shard = os.path.join(tmp_path, "cut", "model-00002-of-00002.safetensors")
    data = read(shard)
    n = struct.unpack("<Q", data[:8])[0]
    hdr = json.loads(data[8:8 + n])
    with open(shard, "wb") as f:
        f.write(data[:-10])
    with pytest.raises(Error) as e:
        dtcast.convert_checkpoint(index, tmp_path / "o2", to="bfloat16")
    assert e.value.status == Status.BAD_FILE
    assert e.value.file == shard and os.path.basename(shard) in str(e.value)
    assert isinstance(e.value.offset, int) and 0 <= e.value.offset <= len(data)
    assert "at byte %d" % e.value.offset in str(e.value)
    # the tensor whose data_offsets run past the cut end: the last one in the file, its
    # header entry (within the header)
    last = max((k for k in hdr if k != "__metadata__"), key=lambda k: hdr[k]["data_offsets"][1])
    assert e.value.tensor == last and "'%s'" % last in str(e.value)
    assert 8 <= e.value.offset < 8 + n
    # a missing file: the file named, no tensor
    with pytest.raises(Error) as e:
        dtcast.convert_file(tmp_path / "none.npy", tmp_path / "x.npy", to="float16")
    assert e.value.status == Status.IO and e.value.tensor is None
    assert "none.npy" in str(e.value)
    # a file of no kind dtcast reads
    with pytest.raises(Error) as e:
        dtcast.convert_file(tmp_path / "none.npy", tmp_path / "x.xyz", to="float16")
    assert e.value.status == Status.INVALID_ARGUMENT and e.value.file == str(tmp_path / "x.xyz")
    assert "unknown file kind" in str(e.value)
    # a request the job refuses: usage
    with pytest.raises(Error) as e:
        dtcast.quantize_checkpoint(tmp_path / "w.npy", tmp_path / "q.safetensors",
                                   scheme="nvfp4", layout="mx")
    assert e.value.status == Status.INVALID_ARGUMENT and e.value.usage
    assert "layout mx" in str(e.value)


def test_progress_monotonic_with_the_total(tmp_path, no_child):
    src = str(tmp_path / "m.safetensors")
    rng = np.random.default_rng(2)
    st_numpy.save_file({"a.weight": rng.standard_normal((512, 1024)).astype(np.float32),
                        "b": np.arange(100, dtype=np.int64),
                        "c.weight": rng.standard_normal((1024, 256)).astype(np.float32)}, src)
    for job in (lambda p: dtcast.convert_file(src, tmp_path / "o.safetensors", to="bf16",
                                              progress=p, threads=1),
                lambda p: dtcast.quantize_checkpoint(src, tmp_path / "q.safetensors",
                                                     scheme="fp8-block", progress=p),
                lambda p: dtcast.dequantize_checkpoint(tmp_path / "q.safetensors",
                                                       tmp_path / "d.safetensors", progress=p)):
        calls = []
        job(lambda done, total: calls.append((done, total)))
        assert calls, "progress never called"
        dones = [d for d, _ in calls]
        assert dones == sorted(dones) and len(set(dones)) == len(dones)
        totals = {t for _, t in calls}
        assert len(totals) == 1
        total = totals.pop()
        assert calls[-1] == (total, total)
    # the cast job counts the tensor data of its input
    calls = []
    dtcast.convert_file(src, tmp_path / "o.safetensors", to="bf16",
                        progress=lambda d, t: calls.append((d, t)))
    assert calls[-1][1] == data_bytes(src)
    # rate-limited: a few calls, not one per block (the file is 4 MiB, 1 block of 4 MiB or more)
    assert len(calls) <= 5


def test_progress_true_and_bad(tmp_path, no_child, monkeypatch):
    np.save(tmp_path / "w.npy", np.ones(1000, np.float32))
    # no tqdm: nothing, silently
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    dtcast.convert_file(tmp_path / "w.npy", tmp_path / "o.npy", to="bf16", progress=True)
    # a tqdm: a bar, updated to the total and closed
    seen = []

    class Bar:
        def __init__(self, total, **kw):
            self.total, self.n, self.closed = total, 0, False
            seen.append(self)

        def update(self, k):
            self.n += k

        def close(self):
            self.closed = True
    fake = types.ModuleType("tqdm.auto")
    fake.tqdm = Bar
    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", fake)
    dtcast.convert_file(tmp_path / "w.npy", tmp_path / "o.npy", to="bf16", progress=True)
    assert len(seen) == 1 and seen[0].total == 4000 and seen[0].n == 4000 and seen[0].closed
    with pytest.raises(TypeError, match="progress"):
        dtcast.convert_file(tmp_path / "w.npy", tmp_path / "o.npy", to="bf16", progress=3)


class Stop(Exception):
    pass


def test_cancel_leaves_nothing(tmp_path, no_child):
    index = make_model(str(tmp_path / "src"), nshards=3)
    src = os.path.join(tmp_path, "src", "model-00001-of-00003.safetensors")

    def stop(done, total):
        raise Stop(done)
    for job in (lambda: dtcast.convert_file(src, tmp_path / "out" / "o.safetensors",
                                            to="bf16", progress=stop),
                lambda: dtcast.convert_checkpoint(index, tmp_path / "out", to="bf16",
                                                  progress=stop),
                lambda: dtcast.quantize_checkpoint(index, tmp_path / "out", scheme="mxfp4",
                                                   progress=stop)):
        os.makedirs(tmp_path / "out", exist_ok=True)
        with pytest.raises(Stop):
            job()
        assert os.listdir(tmp_path / "out") == []
        os.rmdir(tmp_path / "out")


def test_warnings_go_to_warnings(tmp_path, no_child):
    src = str(tmp_path / "m.safetensors")
    st_numpy.save_file({"x": np.ones(4, np.float32)}, src)
    with pytest.warns(dtcast.Warning, match="no quantized tensor found"):
        dtcast.dequantize_checkpoint(src, tmp_path / "d.safetensors")
    assert issubclass(dtcast.Warning, UserWarning)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        dtcast.convert_file(src, tmp_path / "c.safetensors", to="bf16")
    assert not w


def test_gil_released(tmp_path):
    """A Python thread keeps counting while a conversion runs on one thread."""
    np.save(tmp_path / "big.npy", np.ones(24 << 20, np.float32))  # 96 MiB
    count = [0]
    running = threading.Event()
    stop = threading.Event()

    def spin():
        running.set()
        while not stop.is_set():
            count[0] += 1
    t = threading.Thread(target=spin)
    t.start()
    running.wait()
    calls = []
    try:
        before = count[0]
        dtcast.convert_file(tmp_path / "big.npy", tmp_path / "o.npy", to="bf16", threads=1,
                            progress=lambda d, tot: calls.append((d, before)))
        during = count[0] - before
    finally:
        stop.set()
        t.join()
    assert calls and calls[-1][0] == (24 << 20) * 4
    # With the GIL held for the whole job the other thread would run only in the callbacks'
    # switch intervals; released, it runs all along (millions of iterations a second).
    assert during > 100000, during


def cli(*args):
    p = subprocess.run([os.environ["DTCAST_CLI"]] + [str(a) for a in args],
                       stdin=subprocess.DEVNULL, capture_output=True)
    assert p.returncode == 0, p.stderr.decode()


def test_same_bytes_as_the_cli(tmp_path):
    index = make_model(str(tmp_path / "src"), nshards=3)
    shard = os.path.join(tmp_path, "src", "model-00002-of-00003.safetensors")
    np.save(tmp_path / "w.npy", np.random.default_rng(4).standard_normal((100, 3)) * 300)
    dtcast.convert_file(tmp_path / "w.npy", tmp_path / "py.npy", to="float8_e4m3fn",
                        saturate=True, round="floor")
    cli("cast", "-q", "--to", "float8e4m3fn", "--overflow", "saturate", "--round", "floor",
        tmp_path / "w.npy", tmp_path / "cli.npy")
    assert read(tmp_path / "py.npy") == read(tmp_path / "cli.npy")
    dtcast.convert_file(tmp_path / "w.npy", tmp_path / "py.pb", to="float8_e5m2", profile="onnx",
                        opset=21, saturate=False)
    cli("cast", "-q", "--to", "float8e5m2", "--profile", "onnx:21", "--saturate", "0",
        tmp_path / "w.npy", tmp_path / "cli.pb")
    assert read(tmp_path / "py.pb") == read(tmp_path / "cli.pb")
    dtcast.convert_file(tmp_path / "w.npy", tmp_path / "py_s.npy", to="string")
    cli("cast", "-q", "--to", "string", tmp_path / "w.npy", tmp_path / "cli_s.npy")
    assert read(tmp_path / "py_s.npy") == read(tmp_path / "cli_s.npy")
    dtcast.convert_checkpoint(index, tmp_path / "py", to="float16", exclude="*.n")
    cli("cast", "-q", "--to", "float16", "--exclude", "*.n", index, tmp_path / "cli")
    assert folder_bytes(tmp_path / "py") == folder_bytes(tmp_path / "cli")
    for scheme, extra in (("nvfp4", {"layout": "ct", "variant": "ct"}),
                          ("fp8-block", {"block": (32, 64)}), ("int4-group", {})):
        dtcast.quantize_checkpoint(shard, tmp_path / "pyq.safetensors", scheme=scheme, **extra)
        flags = []
        if "layout" in extra:
            flags += ["--layout", extra["layout"], "--variant", extra["variant"]]
        if "block" in extra:
            flags += ["--block", "%dx%d" % extra["block"]]
        cli("quantize", "-q", "--scheme", scheme, *flags, shard, tmp_path / "cliq.safetensors")
        assert read(tmp_path / "pyq.safetensors") == read(tmp_path / "cliq.safetensors"), scheme
        dtcast.dequantize_checkpoint(tmp_path / "pyq.safetensors", tmp_path / "pyd.safetensors",
                                     to="float16")
        cli("dequantize", "-q", "--to", "float16", tmp_path / "cliq.safetensors",
            tmp_path / "clid.safetensors")
        assert read(tmp_path / "pyd.safetensors") == read(tmp_path / "clid.safetensors"), scheme
