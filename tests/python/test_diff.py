"""dtcast.diff and `dtcast diff --json` against numpy computing every figure on the decoded
arrays in float64 (docs/files.md, "dtcast diff"): .npy pairs, safetensors checkpoints with
injected differences (a flipped bit, a NaN, an Inf, a missing tensor, a changed shape, bfloat16
and float16 copies, an FP8 copy with block scales dequantized on the fly), folders, the
tolerances, and the exit statuses 0 / 1 / 2."""

import json
import os
import subprocess

import ml_dtypes
import numpy as np
import pytest
from safetensors.numpy import save_file

import dtcast
from dtcast._diff import _numbers

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ.get("DTCAST_CLI", os.path.join(os.environ.get("DTCAST_BUILD",
                                                               os.path.join(REPO, "build")),
                                                "dtcast"))

SUM_RTOL = 1e-12  # the sums: long double block by block against numpy's pairwise float64


def reference(a, b, atol=0.0, rtol=0.0):
    """Every figure of one compared tensor, by numpy in float64 (A is the reference)."""
    if np.iscomplexobj(a) or np.iscomplexobj(b):
        a = np.ascontiguousarray(a, dtype=np.complex128).view(np.float64)
        b = np.ascontiguousarray(b, dtype=np.complex128).view(np.float64)
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        fin = np.isfinite(a) & np.isfinite(b)
        d = np.abs(b - a)
        equal = (a == b) | (np.isnan(a) & np.isnan(b))
        close = equal | (fin & (d <= atol + rtol * np.abs(a)))
        out = {"values": a.size, "finite": int(fin.sum()), "unequal": int((~equal).sum()),
               "not_close": int((~close).sum()),
               "nonfinite_mismatch": int((~equal & ~fin).sum())}
        bad = np.flatnonzero(~close)
        out["first_not_close"] = int(bad[0]) if bad.size else None
        idx = np.flatnonzero(fin)
        if idx.size:
            k = idx[np.argmax(d[idx])]
            out["max_abs"] = (d[k], int(k), a[k], b[k])
        else:
            out["max_abs"] = None
        idx = np.flatnonzero(fin & (a != 0))
        if idx.size:
            rel = d[idx] / np.abs(a[idx])
            k = idx[np.argmax(rel)]
            out["max_rel"] = (rel.max(), int(k), a[k], b[k])
        else:
            out["max_rel"] = None
        sa2 = float(np.sum(a[fin] ** 2))
        se2 = float(np.sum(d[fin] ** 2))
        out["sum_a2"], out["sum_err2"] = sa2, se2
        if not fin.any():
            out["sqnr_db"] = float("nan")
        elif se2 == 0:
            out["sqnr_db"] = float("inf")
        elif sa2 == 0:
            out["sqnr_db"] = float("-inf")
        else:
            out["sqnr_db"] = 10 * np.log10(sa2 / se2)
    for side, x in (("a", a), ("b", b)):
        out[side] = (int(np.isnan(x).sum()), int(np.isposinf(x).sum()), int(np.isneginf(x).sum()))
    return out


def check(t, a, b, atol=0.0, rtol=0.0):
    """One tensor of a diff result against reference(a, b)."""
    ref = reference(a, b, atol, rtol)
    assert t["state"] == "compared", t
    for key in ("values", "finite", "unequal", "not_close", "nonfinite_mismatch"):
        assert t[key] == ref[key], (t["name"], key, t[key], ref[key])
    assert t["close"] == (ref["not_close"] == 0)
    first = t["first_not_close"]
    assert (first["index"] if first else None) == ref["first_not_close"], t["name"]
    shape = list(np.shape(a))
    for key in ("max_abs", "max_rel"):
        got, want = t[key], ref[key]
        if want is None:
            assert got is None, (t["name"], key)
            continue
        # exact: the same float64 operations on the same decoded values
        assert (got["error"], got["index"], got["a"], got["b"]) == want, (t["name"], key, got,
                                                                          want)
        parts = 2 if np.iscomplexobj(a) or np.iscomplexobj(b) else 1
        assert got["element"] == [int(i) for i in np.unravel_index(want[1] // parts, shape)]
    for key in ("sum_a2", "sum_err2"):
        assert t[key] == pytest.approx(ref[key], rel=SUM_RTOL, abs=0), (t["name"], key)
    want = ref["sqnr_db"]
    if np.isfinite(want):
        assert t["sqnr_db"] == pytest.approx(want, rel=0, abs=1e-9), t["name"]
    elif np.isnan(want):
        assert np.isnan(t["sqnr_db"])
    else:
        assert t["sqnr_db"] == want
    for side in ("a", "b"):
        s = t[side]
        assert (s["nan"], s["posinf"], s["neginf"]) == ref[side], (t["name"], side)


def run_cli(*args):
    p = subprocess.run([CLI, "diff", *map(str, args)], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def both(a, b, **kw):
    """dtcast.diff and the CLI's --json: the same figures (compared as parsed JSON)."""
    r = dtcast.diff(a, b, **kw)
    flags = []
    if kw.get("atol"):
        flags += ["--atol", repr(kw["atol"])]
    if kw.get("rtol"):
        flags += ["--rtol", repr(kw["rtol"])]
    if "threads" in kw:
        flags += ["--threads", str(kw["threads"])]
    code, out, err = run_cli("--json", *flags, a, b)
    assert code == (0 if r["ok"] else 1), (code, err)
    cli = _numbers(json.loads(out))
    assert json.dumps(cli, sort_keys=True) == json.dumps(r, sort_keys=True)
    return r


def by_name(r):
    return {t["name"]: t for t in r["tensors"]}


def flip_bit(x, flat, bit):
    y = x.copy()
    v = y.reshape(-1).view(np.uint32)
    v[flat] ^= np.uint32(1 << bit)
    return y


@pytest.fixture()
def base():
    rng = np.random.default_rng(28)
    return rng.standard_normal((1000, 700)).astype(np.float32)  # several blocks, every worker


def test_npy_injected(tmp_path, base):
    b = flip_bit(base, 12345, 3)
    b[7, 8] = np.nan
    b[400, 1] = np.inf
    b[999, 699] = -np.inf
    a = base.copy()
    a[3, 3] = b[3, 3] = np.nan  # NaN against NaN: equal
    a[5, 0] = b[5, 0] = -np.inf  # the same Inf: equal
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    for threads in (1, 2, 3):
        r = both(tmp_path / "a.npy", tmp_path / "b.npy", threads=threads)
        assert not r["ok"]
        (t,) = r["tensors"]
        check(t, a, b)
        assert t["unequal"] == 4 and t["nonfinite_mismatch"] == 3 and not t["identical"]


def test_npy_identical_and_tolerance(tmp_path, base):
    np.save(tmp_path / "a.npy", base)
    np.save(tmp_path / "c.npy", base)
    r = both(tmp_path / "a.npy", tmp_path / "c.npy")
    assert r["ok"] and r["tensors"][0]["identical"] and r["tensors"][0]["sqnr_db"] == np.inf
    n = base.copy()  # identical bytes with NaN and Inf: B's values are taken as A's
    n[0, 5] = np.nan
    n[900, 3] = np.inf
    n[999, 1] = -np.inf
    n[:, 600] = 0
    np.save(tmp_path / "n.npy", n)
    np.save(tmp_path / "n2.npy", n)
    r = both(tmp_path / "n.npy", tmp_path / "n2.npy", threads=2)
    check(r["tensors"][0], n, n)
    assert r["ok"] and r["tensors"][0]["identical"]
    b = base * np.float32(1 + 2 ** -20)
    np.save(tmp_path / "b.npy", b)
    for atol, rtol in ((0, 0), (0, 1e-7), (0, 1e-6), (1e-7, 0), (1e-6, 1e-8)):
        r = both(tmp_path / "a.npy", tmp_path / "b.npy", atol=atol, rtol=rtol)
        check(r["tensors"][0], base, b, atol, rtol)
        assert r["ok"] == (r["tensors"][0]["not_close"] == 0)
    assert both(tmp_path / "a.npy", tmp_path / "b.npy", rtol=2e-6)["ok"]
    assert not both(tmp_path / "a.npy", tmp_path / "b.npy", rtol=1e-7)["ok"]


def test_npy_dtypes(tmp_path, base):
    a = np.ascontiguousarray(base[:300, :50])
    cases = {"f16": a.astype(np.float16),
             "f64": a.astype(np.float64) + 1e-9, "i32": (a * 100).astype(np.int32),
             "fortran": np.asfortranarray(a * 2)}
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "af.npy", np.asfortranarray(a))
    for name, b in cases.items():
        np.save(tmp_path / f"{name}.npy", b)
        left = "af.npy" if name == "fortran" else "a.npy"
        r = both(tmp_path / left, tmp_path / f"{name}.npy")
        check(r["tensors"][0], a, b.astype(np.float64))
    c = (base[:10, :20] + 1j * base[10:20, :20]).astype(np.complex64)
    c2 = c.copy()
    c2[2, 3] += 0.5j
    np.save(tmp_path / "c.npy", c)
    np.save(tmp_path / "c2.npy", c2)
    r = both(tmp_path / "c.npy", tmp_path / "c2.npy")
    t = r["tensors"][0]
    check(t, c, c2)
    assert t["max_abs"]["part"] == "imag" and t["max_abs"]["element"] == [2, 3]


def fp8_block(w, tile=128):
    """w (float32 [N, K]) as block FP8: codes float8_e4m3fn and float32 scales per tile, and
    the values they stand for (codes * scale in float32)."""
    n, k = w.shape
    tr, tc = -(-n // tile), -(-k // tile)
    scale = np.zeros((tr, tc), np.float32)
    for i in range(tr):
        for j in range(tc):
            amax = np.abs(w[i * tile:(i + 1) * tile, j * tile:(j + 1) * tile]).max()
            scale[i, j] = np.float32(amax / 448) if amax else np.float32(1)
    big = np.repeat(np.repeat(scale, tile, 0), tile, 1)[:n, :k]
    codes = (w / big).astype(ml_dtypes.float8_e4m3fn)
    return codes, scale, (codes.astype(np.float32) * big).astype(np.float32)


def test_checkpoints_injected(tmp_path, base):
    rng = np.random.default_rng(4)
    w1 = base[:200, :300].copy()
    w2 = rng.standard_normal((64, 96)).astype(np.float32)
    w3 = rng.standard_normal((33, 17)).astype(np.float32)
    q = rng.standard_normal((300, 260)).astype(np.float32)
    shaped = rng.standard_normal((4, 8)).astype(np.float32)
    same = rng.standard_normal((10,)).astype(np.float32)
    zero = np.zeros((8,), np.float32)
    save_file({"w1": w1, "w2": w2, "w3": w3, "proj.weight": q, "shaped": shaped,
               "gone": same, "same": same, "zero": zero}, tmp_path / "a.safetensors")
    b1 = flip_bit(w1, 777, 30)
    b1[10, 10] = np.nan
    b1[11, 11] = -np.inf
    codes, scale, deq = fp8_block(q)
    b_zero = zero.copy()
    b_zero[3] = 0.5
    save_file({"w1": b1, "w2": w2.astype(ml_dtypes.bfloat16), "w3": w3.astype(np.float16),
               "proj.weight": codes, "proj.weight_scale_inv": scale,
               "shaped": shaped.reshape(8, 4), "new": same, "same": same, "zero": b_zero},
              tmp_path / "b.safetensors")
    r = both(tmp_path / "a.safetensors", tmp_path / "b.safetensors")
    assert not r["ok"]
    t = by_name(r)
    check(t["w1"], w1, b1)
    check(t["w2"], w2, w2.astype(ml_dtypes.bfloat16).astype(np.float64))
    check(t["w3"], w3, w3.astype(np.float16).astype(np.float64))
    check(t["proj.weight"], q, deq)
    check(t["zero"], zero, b_zero)
    assert t["zero"]["sqnr_db"] == -np.inf
    assert t["proj.weight"]["b"]["dequantized"] == "fp8-block"
    assert t["proj.weight"]["b"]["dtype"] == "float8e4m3fn" and t["proj.weight"]["dtype_changed"]
    assert t["same"]["identical"] and t["same"]["close"]
    assert t["gone"]["state"] == "missing" and t["new"]["state"] == "extra"
    assert t["shaped"]["state"] == "shape" and t["shaped"]["b"]["shape"] == [8, 4]
    assert "proj.weight_scale_inv" not in t
    s = r["summary"]
    assert (s["tensors"], s["compared"], s["missing"], s["extra"], s["shape"],
            s["identical"]) == (9, 6, 1, 1, 1, 1)
    # worst first: not compared (by name), NaN/Inf mismatches, then SQNR ascending
    compared = sorted((x for x in r["tensors"] if x["state"] == "compared"
                       and not x["nonfinite_mismatch"]), key=lambda x: (x["sqnr_db"], x["name"]))
    assert r["worst"] == ["gone", "new", "shaped", "w1"] + [x["name"] for x in compared]
    # as stored: the scales are tensors of their own, the codes compared as float8
    raw = dtcast.diff(tmp_path / "a.safetensors", tmp_path / "b.safetensors", dequantize=False)
    t = by_name(raw)
    assert t["proj.weight_scale_inv"]["state"] == "extra"
    check(t["proj.weight"], q, codes.astype(np.float64))


def test_folders(tmp_path, base):
    for side in "ab":
        (tmp_path / side).mkdir()
    x = np.ascontiguousarray(base[:100, :100])  # save_file writes a view's buffer as it is
    y = np.ascontiguousarray(base[100:150, :64])
    save_file({"x": x}, tmp_path / "a" / "model-00001-of-00002.safetensors")
    save_file({"y": y}, tmp_path / "a" / "model-00002-of-00002.safetensors")
    y2 = y.copy()
    y2[1, 2] += 1
    save_file({"x": x, "y": y2}, tmp_path / "b" / "model.safetensors")
    r = both(tmp_path / "a", tmp_path / "b")
    t = by_name(r)
    assert t["x"]["identical"]
    check(t["y"], y, y2)
    assert r["worst"][0] == "y"


def test_exit_status_and_errors(tmp_path, base):
    np.save(tmp_path / "a.npy", base[:4])
    np.save(tmp_path / "b.npy", base[:4] + 1)
    (tmp_path / "bad.npy").write_bytes(b"\x93NUMPY\x01\x00garbage")
    save_file({"a": base[:4]}, tmp_path / "a.safetensors")
    assert run_cli(tmp_path / "a.npy", tmp_path / "a.npy")[0] == 0
    assert run_cli(tmp_path / "a.npy", tmp_path / "b.npy")[0] == 1
    assert run_cli("--atol", "1.001", tmp_path / "a.npy", tmp_path / "b.npy")[0] == 0
    assert run_cli("--tolerance", "0.5", tmp_path / "a.npy", tmp_path / "b.npy")[0] == 1
    for args in ((tmp_path / "a.npy",), (tmp_path / "a.npy", tmp_path / "nope.npy"),
                 (tmp_path / "a.npy", tmp_path / "bad.npy"),
                 (tmp_path / "a.npy", tmp_path / "a.safetensors"),
                 ("--atol", "-1", tmp_path / "a.npy", tmp_path / "a.npy"),
                 ("--bogus", tmp_path / "a.npy", tmp_path / "a.npy")):
        code, out, err = run_cli(*args)
        assert code == 2 and err.startswith("dtcast: "), (args, code, err)
    code, out, _ = run_cli("--help")
    assert code == 0 and "usage: dtcast diff" in out
    for b in ("nope.npy", "bad.npy", "a.safetensors"):
        with pytest.raises(dtcast.Error):
            dtcast.diff(tmp_path / "a.npy", tmp_path / b)
    with pytest.raises(dtcast.Error):
        dtcast.diff(tmp_path / "a.npy", tmp_path / "a.npy", atol=-1)


def test_edge_values(tmp_path):
    """The vectorised pass against numpy where it must step aside: relative errors growing
    along the tensor (a new largest error in many pieces), zeros in A with B nonzero, values
    whose squares overflow, subnormals, NaN and Inf scattered, a tolerance."""
    rng = np.random.default_rng(7)
    n = 300_000
    a = rng.standard_normal(n)
    b = a * (1 + np.linspace(0, 1e-3, n) * rng.standard_normal(n))
    a[::997] = 0
    b[::1994] = 0.25
    a[5000:5010] = 1e200
    b[5000:5010] = 1e200 * (1 + 1e-9)
    a[7000:7100] = 5e-320
    b[7000:7100] = 7e-320
    b[9000] = np.nan
    a[9500] = np.inf
    b[9500] = np.inf
    a[12000] = -np.inf
    b[200_000] = -np.inf
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    for threads in (1, 2):
        for atol, rtol in ((0, 0), (1e-6, 1e-4)):
            r = both(tmp_path / "a.npy", tmp_path / "b.npy", threads=threads, atol=atol,
                     rtol=rtol)
            check(r["tensors"][0], a, b, atol, rtol)
    zeros = np.zeros(50_000, np.float32)
    np.save(tmp_path / "z.npy", zeros)
    np.save(tmp_path / "z2.npy", zeros)
    r = both(tmp_path / "z.npy", tmp_path / "z2.npy")
    check(r["tensors"][0], zeros, zeros)
    assert r["ok"] and r["tensors"][0]["max_rel"] is None and r["tensors"][0]["max_abs"]


def test_progress(tmp_path):
    # progress(done, total): elements of both sides compared so far, called from the calling
    # thread, done never decreasing, the last call (total, total); an exception cancels the diff
    # and is raised as it is.
    rng = np.random.default_rng(3)
    tensors = {"t%02d" % i: rng.standard_normal(1000 + i).astype(np.float32) for i in range(12)}
    a, b = str(tmp_path / "a.safetensors"), str(tmp_path / "b.safetensors")
    save_file(tensors, a)
    save_file({k: v.astype(ml_dtypes.bfloat16).astype(np.float32) for k, v in tensors.items()}, b)
    total = 2 * sum(v.size for v in tensors.values())
    calls = []
    r = dtcast.diff(a, b, progress=lambda done, tot: calls.append((done, tot)))
    assert r["summary"]["compared"] == 12 and r["summary"]["not_close"] == 12
    assert calls and calls[-1] == (total, total)
    assert all(t == total for _, t in calls)
    assert all(x[0] <= y[0] for x, y in zip(calls, calls[1:]))

    class Stop(Exception):
        pass

    def stop(done, tot):
        raise Stop()
    with pytest.raises(Stop):
        dtcast.diff(a, b, progress=stop)
    with pytest.raises(TypeError):
        dtcast.diff(a, b, progress=3)


def test_onnx_models(tmp_path):
    """Two ONNX models: every figure equals numpy's on the arrays onnx.numpy_helper decodes; a
    weights-mode float16 model meets its float32 original tensor by tensor (X_float16, cast back
    to X, is compared as X); external data, injected differences, a typed field."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto as TP
    from onnx import helper as h
    from onnx import numpy_helper as nh
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((64, 32)) * 0.05).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)

    def model(w, b, shape_typed=True):
        shape = (h.make_tensor("shape", TP.INT64, [2], [-1, 32]) if shape_typed
                 else nh.from_array(np.array([-1, 32], np.int64), "shape"))
        g = h.make_graph([h.make_node("MatMul", ["x", "w"], ["y0"]),
                          h.make_node("Add", ["y0", "b"], ["y1"]),
                          h.make_node("Reshape", ["y1", "shape"], ["y"])], "g",
                         [h.make_tensor_value_info("x", TP.FLOAT, [4, 64])],
                         [h.make_tensor_value_info("y", TP.FLOAT, [4, 32])],
                         [nh.from_array(w, "w"), nh.from_array(b, "b"), shape])
        return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])

    a = str(tmp_path / "a.onnx")
    onnx.save(model(w, b), a)
    # injected: one flipped bit, a NaN, an Inf; stored in external data
    w2 = flip_bit(w, 5, 30)
    w2.reshape(-1)[9] = np.nan
    b2 = b.copy()
    b2[3] = np.inf
    ext = str(tmp_path / "ext.onnx")
    onnx.save(model(w2, b2), ext, save_as_external_data=True, all_tensors_to_one_file=True,
              location="ext.onnx.data", size_threshold=0)
    r = by_name(both(a, ext))
    check(r["w"], w, w2)
    check(r["b"], b, b2)
    assert r["shape"]["state"] == "uncomparable" and "typed field" in r["shape"]["note"]
    # float16 weights (dtcast's weights mode), against the original
    f16 = str(tmp_path / "f16.onnx")
    dtcast.onnx.convert_model(a, f16, to="float16")
    m16 = onnx.load(f16)
    stored = {t.name: nh.to_array(t) for t in m16.graph.initializer}
    r = by_name(both(a, f16))
    assert set(r) == {"w", "b", "shape"}, set(r)
    check(r["w"], w, stored["w_float16"])
    check(r["b"], b, stored["b_float16"])
    assert r["w"]["b"]["dtype"] == "float16"
    # identical models; raw_data shapes compared
    a2 = str(tmp_path / "a2.onnx")
    onnx.save(model(w, b, shape_typed=False), a2)
    r = both(a2, a2)
    assert r["ok"] and all(t["identical"] for t in r["tensors"])
    # a model against a checkpoint: refused
    code, out, err = run_cli(a, os.path.join(str(tmp_path), "x.npy"))
    assert code == 2 or code == 1
