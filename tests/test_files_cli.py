#!/usr/bin/env python3
"""dtcast cast on files, checked from outside: shapes survive .npy round trips for every type,
memory stays bounded for a file larger than the bound, pipes stream, ONNX external data round
trips, unknown kinds are refused, the NaN/Inf warning and the report.

    python3 tests/test_files_cli.py build/libdtcast.so      (the CLI is build/dtcast beside it)

Independent of dtcast's code: .npy headers are read by numpy, TensorProto bytes are parsed here
from the protobuf wire format, expected values come from numpy or are written out by hand.
"""
import os
import resource
import struct
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_util import check, failures, runner  # noqa: E402

CLI = os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])), "dtcast")
TMP = tempfile.mkdtemp(prefix="dtcast-files.")
run = runner(CLI, text=False, timeout=None)


def path(name):
    return os.path.join(TMP, name)


# ---- shapes survive for every type ----------------------------------------------------------

NUMPY_HAS = {"bool": "|b1", "uint8": "|u1", "int8": "|i1", "uint16": "<u2", "int16": "<i2",
             "int32": "<i4", "uint32": "<u4", "int64": "<i8", "uint64": "<u8",
             "float16": "<f2", "float32": "<f4", "float64": "<f8", "complex64": "<c8",
             "complex128": "<c16"}
SUB_BYTE = {"int4", "uint4", "float4e2m1", "int2", "uint2", "uint1", "int1"}
SIXTEEN = {"bfloat16"}
THIRTY_TWO = {"complex32", "bcomplex32"}


def all_types():
    code, out, _ = run("types")
    names = []
    for line in out.decode().splitlines()[1:]:  # code, bits, name, onnx, aliases
        parts = line.split()
        if len(parts) >= 3 and parts[0].isdigit() and parts[2] != "string":
            names.append(parts[2])
    return names


def expected_descr(t):
    if t in NUMPY_HAS:
        return NUMPY_HAS[t]
    if t in SIXTEEN:
        return "<u2"
    if t in THIRTY_TWO:
        return "<u4"
    return "|u1"


def test_shapes():
    rng = np.random.default_rng(7)
    types = [t for t in all_types() if t != "string"]
    check(len(types) >= 32, "types.listed", f"{len(types)} types: {types}")
    shapes = [(), (0,), (5,), (3, 5), (2, 3, 7), (4, 0, 3)]
    for t in types:
        bad = []
        for shape in shapes:
            src = (rng.standard_normal(shape) * 3).astype(np.float32)
            np.save(path("s.npy"), src)
            code, _, err = run("cast", "--to", t, "-q", path("s.npy"), path("t.npy"))
            if code != 0:
                bad.append(f"{shape}: cast exit {code}: {err.strip()}")
                continue
            a = np.load(path("t.npy"))
            descr = np.lib.format.dtype_to_descr(a.dtype)
            if a.shape != shape or descr != expected_descr(t):
                bad.append(f"{shape}: wrote {descr} {a.shape}, want {expected_descr(t)} {shape}")
                continue
            if t in SUB_BYTE and a.size and int(a.max()) >= (1 << (1 if t in ("uint1", "int1") else
                                                              2 if t.endswith("2") else 4)):
                bad.append(f"{shape}: a byte holds more than one element")
                continue
            # Back through the same file, and through raw files (a different path): same values.
            wide = "complex128" if "complex" in t else "float64"
            code, _, err = run("cast", "--from", t, "--to", wide, "-q", path("t.npy"),
                               path("b.npy"))
            code2, _, err2 = run("cast", "--to", t, "-q", path("s.npy"), path("t.raw"))
            code3, _, err3 = run("cast", "--from", t, "--to", wide, "--shape",
                                 "x".join(map(str, shape)) if shape else "scalar", "-q",
                                 path("t.raw"), path("r.npy"))
            if code or code2 or code3:
                bad.append(f"{shape}: back: {err}{err2}{err3}".strip())
                continue
            b, r = np.load(path("b.npy")), np.load(path("r.npy"))
            if b.shape != shape or r.shape != shape or not np.array_equal(b, r, equal_nan=True):
                bad.append(f"{shape}: values differ after the round trip")
        check(not bad, f"npy.shape_round_trip.{t}", "; ".join(bad[:3]))


def test_npy_reshape_and_order():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.save(path("a.npy"), a)
    code, _, err = run("cast", "--to", "float16", "--shape", "6x4", path("a.npy"), path("h.npy"))
    h = np.load(path("h.npy")) if code == 0 else None
    check(code == 0 and h.shape == (6, 4) and np.array_equal(h, a.reshape(6, 4)),
          "npy.shape_reshapes", err)
    code, _, err = run("cast", "--to", "float16", "--shape", "5x5", path("a.npy"), path("h2.npy"))
    check(code == 1 and "25 elements" in err and not os.path.exists(path("h2.npy")),
          "npy.shape_wrong_count_refused", err)
    f = np.asfortranarray(a)
    np.save(path("f.npy"), f)
    code, _, err = run("cast", "--to", "float64", path("f.npy"), path("g.npy"))
    g = np.load(path("g.npy")) if code == 0 else None
    check(code == 0 and g.flags.f_contiguous and np.array_equal(g, a), "npy.fortran_kept", err)
    big = np.array([1.5, -2.25], dtype=">f4")
    np.save(path("be.npy"), big)
    code, _, err = run("cast", "--to", "float64", path("be.npy"), path("le.npy"))
    check(code == 0 and np.array_equal(np.load(path("le.npy")), [1.5, -2.25]),
          "npy.big_endian", err)


# ---- bounded memory ---------------------------------------------------------------------------

def child_peak_kib(args, stdin_path=None, stdout_path=None):
    """Peak RSS of one dtcast run, from a fresh process (so earlier children do not count)."""
    probe = ("import resource, subprocess, sys\n"
             "i = open(sys.argv[1], 'rb') if sys.argv[1] != '-' else None\n"
             "o = open(sys.argv[2], 'wb') if sys.argv[2] != '-' else subprocess.DEVNULL\n"
             "p = subprocess.run(sys.argv[3:], stdin=i, stdout=o, stderr=subprocess.PIPE)\n"
             "sys.stderr.write(p.stderr.decode())\n"
             "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    p = subprocess.run([sys.executable, "-c", probe, stdin_path or "-", stdout_path or "-",
                        CLI, *args], capture_output=True)
    code, kib = p.stdout.decode().split()
    return int(code), int(kib), p.stderr.decode()


def test_memory_bound():
    # 96 MiB of float32 (384 MiB as complex128): larger than the 64 MiB bound, so a job that
    # held its input or its output whole would show (tests/test_pipe_cli.py does the same)
    n = 24 * 1024 * 1024
    big = np.lib.format.open_memmap(path("big.npy"), mode="w+", dtype=np.float32, shape=(n,))
    step = 4 * 1024 * 1024
    for i in range(0, n, step):
        big[i:i + step] = np.linspace(-3, 3, step, dtype=np.float32)
    big.flush()
    del big
    limit = 64 * 1024  # KiB
    for to in ("bfloat16", "float8e4m3fn", "complex128"):
        code, kib, err = child_peak_kib(["cast", "-q", "--to", to, path("big.npy"), path("o.npy")])
        check(code == 0 and kib < limit, f"memory.file_96MiB_to_{to}",
              f"exit {code}, peak {kib} KiB (bound {limit}): {err}")
    code, kib, err = child_peak_kib(["cast", "-q", "--to", "float16", "-", "-"],
                                    stdin_path=path("big.npy"), stdout_path=path("o.raw"))
    check(code == 0 and kib < limit and os.path.getsize(path("o.raw")) == 2 * n,
          "memory.pipe_96MiB", f"exit {code}, peak {kib} KiB: {err}")
    o = np.load(path("o.npy"), mmap_mode="r")
    check(o.shape == (n,) and o.dtype == np.complex128 and o[0] == -3 and o[-1] == 3,
          "memory.output_complete", f"{o.shape} {o.dtype}")
    for f in ("big.npy", "o.npy", "o.raw"):
        os.remove(path(f))


# ---- pipes ---------------------------------------------------------------------------------------

def test_pipes():
    a = np.linspace(-1, 1, 1000, dtype=np.float32).reshape(10, 100)
    np.save(path("p.npy"), a)
    data = open(path("p.npy"), "rb").read()
    code, out, err = run("cast", "--to", "float16", "-", "-", stdin=data)
    check(code == 0 and out == a.astype(np.float16).tobytes(), "pipe.npy_in_raw_out", err)
    code, out, err = run("cast", "--from", "float32", "--to", "float64", "-", "-",
                         stdin=a.tobytes())
    check(code == 0 and out == a.astype(np.float64).tobytes(), "pipe.raw_in_raw_out", err)
    code, out, err = run("cast", "--to", "bfloat16", path("p.npy"), path("p.pb"))
    pb = open(path("p.pb"), "rb").read() if code == 0 else b""
    code, out, err = run("cast", "--to", "float32", "-", "-", "--from", "bfloat16",
                         "--format", "raw", stdin=b"\x80\x3f\x00\x40")
    check(code == 0 and out == struct.pack("<2f", 1.0, 2.0), "pipe.format_raw", err)


# ---- ONNX external data ------------------------------------------------------------------------

def pb_fields(buf):
    """(field, wire type, value) of a protobuf message: an independent wire-format reader."""
    i, out = 0, []

    def varint():
        nonlocal i
        v = s = 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7F) << s
            s += 7
            if b < 0x80:
                return v
    while i < len(buf):
        key = varint()
        field, wt = key >> 3, key & 7
        if wt == 0:
            out.append((field, wt, varint()))
        elif wt == 2:
            n = varint()
            out.append((field, wt, buf[i:i + n]))
            i += n
        elif wt == 5:
            out.append((field, wt, buf[i:i + 4]))
            i += 4
        elif wt == 1:
            out.append((field, wt, buf[i:i + 8]))
            i += 8
        else:
            raise ValueError(f"wire type {wt}")
    return out


def test_external_data():
    a = np.arange(-50, 50, dtype=np.float32).reshape(4, 25) / 8
    np.save(path("e.npy"), a)
    code, _, err = run("cast", "--to", "float16", "--external-data", "always", path("e.npy"),
                       path("e.pb"))
    ok = code == 0 and os.path.exists(path("e.pb.data"))
    fields = pb_fields(open(path("e.pb"), "rb").read()) if ok else []
    entries = {}
    for f, wt, v in fields:
        if f == 13:
            kv = dict((k, val) for k, _, val in pb_fields(v))
            entries[kv[1].decode()] = kv[2].decode()
    dims = [v for f, _, v in fields if f == 1]
    location = [v for f, _, v in fields if f == 14]
    ok = ok and dims == [4, 25] and location == [1] and entries.get("location") == "e.pb.data" \
        and entries.get("offset") == "0" and entries.get("length") == str(a.size * 2) and \
        not any(f == 9 for f, _, _ in fields)
    data = open(path("e.pb.data"), "rb").read() if ok else b""
    check(ok and data == a.astype(np.float16).tobytes(), "pb.external.write",
          f"{err} {fields[:6]} {entries}")
    code, _, err = run("cast", "--to", "float32", path("e.pb"), path("back.npy"))
    check(code == 0 and np.array_equal(np.load(path("back.npy")), a), "pb.external.read", err)
    # a data file shorter than offset + length
    with open(path("e.pb.data"), "r+b") as f:
        f.truncate(max(len(data) - 2, 0))
    code, _, err = run("cast", "--to", "float32", path("e.pb"), path("back2.npy"))
    check(code == 1 and "go beyond it" in err and not os.path.exists(path("back2.npy")),
          "pb.external.truncated", err)
    # a location that leaves the folder of the .pb
    hostile = bytearray(open(path("e.pb"), "rb").read()).replace(b"e.pb.data", b"../x.data")
    open(path("h.pb"), "wb").write(hostile)
    code, _, err = run("cast", "--to", "float32", path("h.pb"), path("back3.npy"))
    check(code == 1 and "leaves the folder" in err and not os.path.exists(path("back3.npy")),
          "pb.external.escape_refused", err)
    code, _, err = run("cast", "--to", "float16", path("e.npy"), path("small.pb"))
    check(code == 0 and not os.path.exists(path("small.pb.data")), "pb.small_stays_inline", err)
    try:
        import onnx
        from onnx import numpy_helper
    except ImportError:
        return
    t = onnx.load_tensor(path("small.pb"))
    check(np.array_equal(numpy_helper.to_array(t), a.astype(np.float16)), "pb.onnx_reads_inline")


# ---- refusals, warnings, report ------------------------------------------------------------------

def test_refusals():
    np.save(path("w.npy"), np.ones(4, np.float32))
    for name, words in (("m.gguf", "GGUF"), ("m.pt", "PyTorch"),
                        ("m.npz", "numpy archive"), ("m.xyz", "unknown file kind '.xyz'")):
        open(path(name), "wb").write(b"\x00" * 64)
        code, _, err = run("cast", "--from", "float32", "--to", "float16", path(name),
                           path("o.raw"))
        check(code == 1 and words in err and not os.path.exists(path("o.raw")),
              f"refuse.input{os.path.splitext(name)[1]}", err)
    # an ONNX model converts into an ONNX model (usage error otherwise); one that is not a
    # model is a one-line error, nothing written
    open(path("m.onnx"), "wb").write(b"\x00" * 64)
    code, _, err = run("cast", "--to", "float16", path("m.onnx"), path("o.raw"))
    check(code == 2 and "ONNX model" in err and not os.path.exists(path("o.raw")),
          "refuse.onnx_to_raw", err)
    code, _, err = run("cast", "--to", "float16", path("m.onnx"), path("o.onnx"))
    check(code == 1 and "m.onnx" in err and len(err.strip().splitlines()) == 1 and
          not os.path.exists(path("o.onnx")), "refuse.onnx_not_a_model", err)
    # a .gguf OUT is the GGUF writer's (docs/gguf.md, "Jobs"); a .pt is refused by name
    code, _, err = run("cast", "--to", "float16", path("w.npy"), path("o.pt"))
    check(code == 1 and "PyTorch" in err and not os.path.exists(path("o.pt")), "refuse.output",
          err)
    code, _, err = run("cast", "--to", "float16", path("w.npy"), path("o.gguf"))
    check(code == 0 and open(path("o.gguf"), "rb").read(4) == b"GGUF", "gguf.output", err)


def test_warning_and_report():
    np.save(path("v.npy"), np.array([0.1, 1.0, 500.0, 1e-10, np.nan, -600.0], np.float32))
    code, _, err = run("cast", "--to", "float8e4m3fn", path("v.npy"), path("v8.npy"))
    lines = [l for l in err.splitlines() if l]
    check(code == 0 and len(lines) == 1 and "warning" in lines[0] and " 2 finite values became "
          "NaN" in lines[0], "warn.finite_to_nan", err)
    code, _, err = run("cast", "-q", "--to", "float8e4m3fn", path("v.npy"), path("v8.npy"))
    check(code == 0 and err == "", "warn.quiet", err)
    code, _, err = run("cast", "--overflow", "saturate", "--to", "float8e4m3fn", path("v.npy"),
                       path("v8.npy"))
    check(code == 0 and err == "", "warn.none_when_saturating", err)
    code, _, err = run("cast", "--report", "--to", "float8e4m3fn", path("v.npy"), path("v8.npy"))
    want = {"exact": "1", "rounded": "1", "underflow": "1", "overflow": "2", "NaN": "1"}
    got = {}
    for line in err.splitlines():
        parts = line.split()
        if parts and parts[0] in want:
            got[parts[0]] = parts[1]
    check(code == 0 and got == want and "6 values" in err and "to NaN 2" in err,
          "report.counts", err)


def main():
    if not os.path.exists(CLI):
        print(f"FAIL files_cli: no {CLI}")
        return 1
    test_shapes()
    test_npy_reshape_and_order()
    test_pipes()
    test_external_data()
    test_refusals()
    test_warning_and_report()
    test_memory_bound()
    subprocess.run(["rm", "-rf", TMP])
    return 1 if failures() else 0


if __name__ == "__main__":
    sys.exit(main())
