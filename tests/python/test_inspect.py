"""dtcast.inspect and `dtcast inspect --json` against the safetensors package (safe_open: names,
dtypes, shapes, metadata), the header JSON read here (offsets = 8 + N + data_offsets), the bytes
at each offset (the tensor's own bytes, from safe_open / numpy), and the quantized layouts by
their definitions (docs/files.md, "Quantized checkpoints")."""

import json
import os
import struct
import subprocess
import time

import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import save_file

import dtcast

from conftest import BUILD

CLI = os.path.join(BUILD, "dtcast")


def cli(*args):
    p = subprocess.run([CLI, *map(str, args)], capture_output=True, timeout=60)
    return p.returncode, p.stdout.decode("utf-8", "surrogateescape"), p.stderr.decode()


def cli_json(path):
    rc, out, err = cli("inspect", "--json", path)
    return rc, json.loads(out), err


def header_of(path):
    """The safetensors header, read here: (N, {name: entry}, metadata or None)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        h = json.loads(f.read(n))
    return n, {k: v for k, v in h.items() if k != "__metadata__"}, h.get("__metadata__")


def raw_safetensors(path, tensors, metadata=None):
    """A safetensors file from (name, dtype, shape, bytes), written as the format says (for the
    dtypes safetensors.numpy cannot take: F8_E4M3, F8_E8M0)."""
    header, blobs, at = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [at, at + len(data)]}
        blobs.append(data)
        at += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def check_file(doc, path):
    """Every tensor of the safetensors file at path as inspect lists it, against safe_open, the
    header and the bytes."""
    n, entries, meta = header_of(path)
    mine = {t["name"]: t for t in doc["tensors"] if t["file"] == path}
    with safe_open(path, "numpy") as f:
        names = set(f.keys())
        assert set(mine) == names
        assert (f.metadata() or None) == ([x for x in doc["files"] if x["path"] == path][0]
                                          ["metadata"] or None)
        for name in names:
            s = f.get_slice(name)
            t = mine[name]
            assert t["safetensors_dtype"] == s.get_dtype(), name
            assert t["shape"] == list(s.get_shape()), name
            b, e = entries[name]["data_offsets"]
            assert t["data_offsets"] == [b, e]
            assert t["offset"] == 8 + n + b and t["bytes"] == e - b, name
    # the bytes at the offset are the tensor's
    with open(path, "rb") as fh:
        data = fh.read()
    for name, t in mine.items():
        b, e = entries[name]["data_offsets"]
        assert data[t["offset"]:t["offset"] + t["bytes"]] == data[8 + n + b:8 + n + e]
    return mine


def same_doc(py, js):
    """dtcast.inspect's dict is the --json document with the package's type names."""
    names = {"float8e4m3fn": "float8_e4m3fn", "float8e8m0": "float8_e8m0fnu",
             "float8e5m2": "float8_e5m2", "float4e2m1": "float4_e2m1fn"}
    for t in js["tensors"]:
        t["dtype"] = names.get(t["dtype"], t["dtype"])
    for t in js["totals"]:
        t["dtype"] = names.get(t["dtype"], t["dtype"])
    for g in js["quantized"]:
        g["element"] = names.get(g["element"], g["element"])
    assert py == js


def mixed_tensors(rng):
    return {
        "model.embed.weight": rng.standard_normal((7, 5)).astype(np.float32),
        "model.norm.weight": rng.standard_normal(11).astype(np.float16),
        "lm_head.bias": rng.standard_normal((3, 2, 2)).astype(np.float64),
        "ids": rng.integers(-100, 100, (4, 3)).astype(np.int64),
        "mask": rng.integers(0, 2, 9).astype(np.bool_),
        "q": rng.integers(-128, 127, (2, 8)).astype(np.int8),
        "u": rng.integers(0, 255, 6).astype(np.uint8),
        "scalar": np.array(3.5, np.float32),
        "empty": np.zeros((0, 4), np.int32),
    }


def test_single_file_save_file(tmp_path):
    rng = np.random.default_rng(1)
    path = str(tmp_path / "m.safetensors")
    ts = mixed_tensors(rng)
    save_file(ts, path, metadata={"format": "np", "note": "é ✓"})
    doc = dtcast.inspect(path)
    assert doc["kind"] == "safetensors" and doc["valid"] and doc["problems"] == []
    mine = check_file(doc, path)
    for name, a in ts.items():
        assert mine[name]["elements"] == a.size and mine[name]["bytes"] == a.nbytes
        assert mine[name]["dtype"] == a.dtype.name, name
        assert mine[name]["quant"] is None
    # totals per type, by numpy
    want = {}
    for a in ts.values():
        k = want.setdefault(a.dtype.name, [0, 0, 0])
        k[0] += 1
        k[1] += a.size
        k[2] += a.nbytes
    assert {t["dtype"]: [t["tensors"], t["elements"], t["bytes"]] for t in doc["totals"]} == want
    assert doc["bytes"] == sum(a.nbytes for a in ts.values())
    rc, js, err = cli_json(path)
    assert rc == 0 and err == ""
    same_doc(doc, js)
    rc, out, err = cli("inspect", path)
    assert rc == 0 and "model.embed.weight" in out and "no problems found" in out


def test_written_by_dtcast(tmp_path):
    rng = np.random.default_rng(2)
    src, dst = str(tmp_path / "a.safetensors"), str(tmp_path / "b.safetensors")
    save_file({k: v for k, v in mixed_tensors(rng).items() if v.dtype.kind == "f"}, src)
    rc, _, err = cli("cast", "-q", "--to", "bf16", src, dst)
    assert rc == 0, err
    doc = dtcast.inspect(dst)
    mine = check_file(doc, dst)
    assert {t["safetensors_dtype"] for t in mine.values()} == {"BF16"}
    same_doc(doc, cli_json(dst)[1])


def make_sharded(folder, rng, nshards=3):
    os.makedirs(folder, exist_ok=True)
    ts = mixed_tensors(rng)
    names = sorted(ts)
    weight_map, total = {}, 0
    for i in range(nshards):
        shard = "model-%05d-of-%05d.safetensors" % (i + 1, nshards)
        part = {k: ts[k] for k in names[i::nshards]}
        save_file(part, os.path.join(folder, shard), metadata={"format": "np"})
        weight_map.update({k: shard for k in part})
        total += sum(a.nbytes for a in part.values())
    index = os.path.join(folder, "model.safetensors.index.json")
    with open(index, "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    return index, weight_map


def test_sharded(tmp_path):
    rng = np.random.default_rng(3)
    folder = str(tmp_path / "ck")
    index, weight_map = make_sharded(folder, rng)
    for path in (index, folder):
        doc = dtcast.inspect(path)
        assert doc["valid"], doc["problems"]
        assert doc["kind"] == ("index" if path == index else "folder")
        assert doc["index"]["entries"] == len(weight_map)
        assert [f["kind"] for f in doc["files"]] == ["index"] + ["safetensors"] * 3
        for shard in sorted(set(weight_map.values())):
            mine = check_file(doc, os.path.join(folder, shard))
            assert {k for k, v in weight_map.items() if v == shard} == set(mine)
        same_doc(doc, cli_json(path)[1])
    # and as dtcast cast writes a sharded checkpoint
    out = str(tmp_path / "out")
    rc, _, err = cli("cast", "-q", "--to", "float32", index, out)
    assert rc == 0, err
    doc = dtcast.inspect(out)
    assert doc["valid"], doc["problems"]
    with open(os.path.join(out, "model.safetensors.index.json")) as f:
        wm = json.load(f)["weight_map"]
    for shard in sorted(set(wm.values())):
        check_file(doc, os.path.join(out, shard))


def test_progress(tmp_path):
    """progress= is called after each file's header with the bytes of the files read so far and
    of all of them (os.path.getsize), ending at the total; an exception it raises stops the
    inspection and propagates."""
    folder = str(tmp_path / "ck")
    index, weight_map = make_sharded(folder, np.random.default_rng(5))
    files = [index] + [os.path.join(folder, s) for s in sorted(set(weight_map.values()))]
    total = sum(os.path.getsize(f) for f in files)
    calls = []
    doc = dtcast.inspect(index, progress=lambda d, t: calls.append((d, t)))
    assert doc["valid"]
    assert [t for _, t in calls] == [total] * len(calls) and calls[-1][0] == total
    done = [d for d, _ in calls]
    assert done == sorted(done) and len(calls) >= 2
    npy = str(tmp_path / "w.npy")
    np.save(npy, np.zeros(10, np.float32))
    calls = []
    dtcast.inspect(npy, progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (os.path.getsize(npy),) * 2

    class Stop(Exception):
        pass

    def stop(d, t):
        raise Stop()
    with pytest.raises(Stop):
        dtcast.inspect(index, progress=stop)
    with pytest.raises(TypeError):
        dtcast.inspect(index, progress=3)
    dtcast.inspect(index, progress=True)  # a tqdm bar when tqdm is there, else nothing


def test_quantized_layouts(tmp_path):
    """fp8-block (X.weight F8_E4M3 + X.weight_scale_inv F32 of ceil(N/128) x ceil(K/128)), mx
    (X.weight F8_E4M3 + X.weight_scale F8_E8M0, blocks of 32), absmax per channel
    (X.weight F8_E4M3 + X.weight_scale F32 [N, 1]), as tests/test_quant_cli.py builds them."""
    path = str(tmp_path / "q.safetensors")
    L = "model.layers.0."
    raw_safetensors(path, [
        (L + "mlp.up_proj.weight", "F8_E4M3", [200, 300], bytes(200 * 300)),
        (L + "mlp.up_proj.weight_scale_inv", "F32", [2, 3], bytes(2 * 3 * 4)),
        (L + "self_attn.q_proj.weight", "F8_E4M3", [4, 64], bytes(4 * 64)),
        (L + "self_attn.q_proj.weight_scale", "F8_E8M0", [4, 2], bytes(8)),
        (L + "self_attn.o_proj.weight", "F8_E4M3", [6, 16], bytes(6 * 16)),
        (L + "self_attn.o_proj.weight_scale", "F32", [6, 1], bytes(24)),
        (L + "self_attn.o_proj.input_scale", "F32", [1], bytes(4)),
        ("model.norm.weight", "BF16", [16], bytes(32)),
    ], metadata={"format": "pt"})
    doc = dtcast.inspect(path)
    assert doc["valid"], doc["problems"]
    check_file(doc, path)
    groups = {g["tensor"]: g for g in doc["quantized"]}
    up, q, o = (groups[L + "mlp.up_proj.weight"], groups[L + "self_attn.q_proj.weight"],
                groups[L + "self_attn.o_proj.weight"])
    assert len(groups) == 3
    assert (up["layout"], up["granularity"], up["block"], up["scales"], up["shape"]) == \
        ("fp8-block", "block", [128, 128], L + "mlp.up_proj.weight_scale_inv", [200, 300])
    assert (q["layout"], q["granularity"], q["block"], q["scales"], q["element"]) == \
        ("mx", "block", [1, 32], L + "self_attn.q_proj.weight_scale", "float8_e4m3fn")
    assert (o["layout"], o["granularity"], o["scales"], o["input_scales"]) == \
        ("absmax", "channel", L + "self_attn.o_proj.weight_scale",
         [L + "self_attn.o_proj.input_scale"])
    roles = {t["name"]: (t["quant"] or {}).get("role") for t in doc["tensors"]}
    assert roles == {L + "mlp.up_proj.weight": "codes", L + "mlp.up_proj.weight_scale_inv": "scales",
                     L + "self_attn.q_proj.weight": "codes",
                     L + "self_attn.q_proj.weight_scale": "scales",
                     L + "self_attn.o_proj.weight": "codes",
                     L + "self_attn.o_proj.weight_scale": "scales",
                     L + "self_attn.o_proj.input_scale": "input_scale", "model.norm.weight": None}
    same_doc(doc, cli_json(path)[1])
    rc, out, _ = cli("inspect", path)
    assert rc == 0 and "fp8-block codes, blocks 128x128" in out and "quantized tensors (3)" in out
    # an FP8 weight without its scale reads, with a warning (dequantize would refuse it)
    lone = str(tmp_path / "lone.safetensors")
    raw_safetensors(lone, [("w.weight", "F8_E4M3", [2, 2], bytes(4))])
    doc = dtcast.inspect(lone)
    assert doc["valid"] and doc["quantized"] == []
    assert [p["severity"] for p in doc["problems"]] == ["warning"]
    assert "w.weight" in doc["problems"][0]["message"]


def test_npy_and_pb(tmp_path):
    a = np.arange(30, dtype=np.float32).reshape(5, 6)
    npy, pb = str(tmp_path / "w.npy"), str(tmp_path / "w.pb")
    np.save(npy, a)
    rc, _, err = cli("cast", "-q", "--to", "float32", npy, pb)
    assert rc == 0, err
    for path in (npy, pb):
        doc = dtcast.inspect(path)
        (t,) = doc["tensors"]
        assert (t["dtype"], t["shape"], t["elements"], t["bytes"]) == ("float32", [5, 6], 30, 120)
        with open(path, "rb") as f:
            data = f.read()
        assert data[t["offset"]:t["offset"] + t["bytes"]] == a.tobytes()
        same_doc(doc, cli_json(path)[1])
    with open(npy, "rb") as f:
        np.lib.format.read_magic(f)
        np.lib.format.read_array_header_1_0(f)
        assert dtcast.inspect(npy)["tensors"][0]["offset"] == f.tell()


def test_headers_only_huge_sparse(tmp_path):
    """A 100 GiB checkpoint (a sparse file: the header, then a hole) in well under a second."""
    path = str(tmp_path / "huge.safetensors")
    size = 100 << 30
    per = size // 8
    raw_safetensors(path, [])
    header = {"t%d" % i: {"dtype": "BF16", "shape": [per // 2], "data_offsets": [i * per,
                                                                                 (i + 1) * per]}
              for i in range(8)}
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        f.truncate(8 + len(text) + size)
    t0 = time.perf_counter()
    rc, out, err = cli("inspect", "--json", path)
    dt = time.perf_counter() - t0
    assert rc == 0, err
    assert json.loads(out)["bytes"] == size
    assert dt < 1.0, dt


# ---- bad files: exit 1, the file (and byte) named ---------------------------------------------

def bad(path, *want):
    rc, out, err = cli("inspect", path)
    assert rc == 1, (out, err)
    assert path in err and all(w in err for w in want), err
    with pytest.raises(dtcast.Error) as e:
        dtcast.inspect(path)
    assert path in str(e.value) and all(w in str(e.value) for w in want)
    doc = dtcast.inspect(path, strict=False)
    assert not doc["valid"] and any(p["severity"] == "error" for p in doc["problems"])
    return doc


def test_bad_files(tmp_path):
    good = str(tmp_path / "g.safetensors")
    save_file({"a": np.zeros(4, np.float32), "b": np.zeros(2, np.float32)}, good)
    data = open(good, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    cases = {
        "short.safetensors": (data[:5], ["at byte 0"]),
        "trunc.safetensors": (data[:8 + n // 2], ["at byte 0"]),
        "json.safetensors": (data[:8] + data[8:8 + n].replace(b":", b";", 1) + data[8 + n:],
                             ["at byte"]),
        "oob.safetensors": (data[:-4], ["at byte"]),
    }
    for name, (content, want) in cases.items():
        path = str(tmp_path / name)
        with open(path, "wb") as f:
            f.write(content)
        bad(path, *want)
    # an index naming a missing shard: the others are still listed
    folder = str(tmp_path / "ck")
    index, weight_map = make_sharded(folder, np.random.default_rng(4))
    gone = os.path.join(folder, sorted(set(weight_map.values()))[1])
    os.remove(gone)
    doc = bad(index, gone)
    assert [f["ok"] for f in doc["files"]] == [True, True, False, True]
    listed = {t["name"] for t in doc["tensors"]}
    assert listed == {k for k, v in weight_map.items() if v != os.path.basename(gone)}
    # a bad shard and a weight_map entry its shard lacks: both reported, in one run
    save_file({"x": np.zeros(3, np.float32)}, gone)
    with open(gone, "r+b") as f:
        f.truncate(os.path.getsize(gone) - 4)
    other = os.path.join(folder, sorted(set(weight_map.values()))[0])
    save_file({"renamed": np.zeros(1, np.float32)}, other)
    doc = bad(folder)
    msgs = [p["message"] for p in doc["problems"] if p["severity"] == "error"]
    assert any(gone in m for m in msgs) and any("weight_map" in m for m in msgs), msgs
    rc, _, err = cli("inspect")
    assert rc == 2
    rc, _, err = cli("inspect", str(tmp_path / "x.onnx"))
    assert rc == 1 and "x.onnx" in err


def test_pb_external_and_typed(tmp_path):
    """A TensorProto with external data (the offset is in the data file), a typed field (no
    offset: the values are not one run of bytes), and a location leaving the folder (refused,
    as dtcast cast refuses it)."""
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    with open(tmp_path / "data.bin", "wb") as f:
        f.write(b"\0" * 16 + a.tobytes())
    t = numpy_helper.from_array(a, "ext")
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "data.bin"), ("offset", "16"), ("length", "48")):
        e = t.external_data.add()
        e.key, e.value = k, v
    ext = str(tmp_path / "ext.pb")
    with open(ext, "wb") as f:
        f.write(t.SerializeToString())
    doc = dtcast.inspect(ext)
    (x,) = doc["tensors"]
    assert (x["name"], x["file"], x["offset"], x["bytes"]) == \
        ("ext", str(tmp_path / "data.bin"), 16, 48)
    assert [f["kind"] for f in doc["files"]] == ["pb", "raw"]
    typed = str(tmp_path / "typed.pb")
    with open(typed, "wb") as f:
        f.write(helper.make_tensor("typed", TensorProto.FLOAT, [2, 2], [1, 2, 3, 4])
                .SerializeToString())
    (x,) = dtcast.inspect(typed)["tensors"]
    assert (x["shape"], x["offset"], x["storage"]) == ([2, 2], None, "typed field")
    t.external_data[0].value = "../data.bin"
    escape = str(tmp_path / "escape.pb")
    with open(escape, "wb") as f:
        f.write(t.SerializeToString())
    bad(escape, "leaves the folder", "at byte")
    same_doc(doc, cli_json(ext)[1])


def test_quantized_across_shards(tmp_path):
    """The codes in one shard, their scales in another: one group over the checkpoint."""
    folder = tmp_path / "q"
    folder.mkdir()
    raw_safetensors(str(folder / "model-00001-of-00002.safetensors"),
                    [("l.weight", "F8_E4M3", [130, 64], bytes(130 * 64))])
    raw_safetensors(str(folder / "model-00002-of-00002.safetensors"),
                    [("l.weight_scale_inv", "F32", [2, 1], bytes(8))])
    with open(folder / "model.safetensors.index.json", "w") as f:
        json.dump({"metadata": {"total_size": 130 * 64 + 8},
                   "weight_map": {"l.weight": "model-00001-of-00002.safetensors",
                                  "l.weight_scale_inv": "model-00002-of-00002.safetensors"}}, f)
    doc = dtcast.inspect(folder)
    assert doc["valid"] and doc["problems"] == [], doc["problems"]
    (g,) = doc["quantized"]
    assert (g["layout"], g["block"], g["codes"], g["scales"]) == \
        ("fp8-block", [128, 128], "l.weight", "l.weight_scale_inv")
    files = {t["name"]: os.path.basename(t["file"]) for t in doc["tensors"]}
    assert files == {"l.weight": "model-00001-of-00002.safetensors",
                     "l.weight_scale_inv": "model-00002-of-00002.safetensors"}
    # a total_size that is not the tensors' bytes is a warning only
    with open(folder / "model.safetensors.index.json", "r+") as f:
        ix = json.load(f)
        ix["metadata"]["total_size"] = 5
        f.seek(0)
        f.truncate()
        json.dump(ix, f)
    doc = dtcast.inspect(folder)
    assert doc["valid"] and [p["severity"] for p in doc["problems"]] == ["warning"]
    assert "total_size" in doc["problems"][0]["message"]
