#!/usr/bin/env python3
"""dtcast cast reading real pipes (not a file given as stdin): memory stays bounded for a stream
larger than the 64 MiB bound, whether the elements stream straight through (raw data to raw
output), are spooled to a temporary file (raw data without --shape to .npy / .safetensors, a .pb
from a named pipe) or come with their length (.npy, --shape); the output equals numpy's
conversion and the same conversion from a file; a stream of the wrong length is refused naming
<stdin> and the byte offset, and leaves no output and no spool file behind.

    python3 tests/test_pipe_cli.py build/libdtcast.so      (the CLI is build/dtcast beside it)

Independent of dtcast's code: the expected values are numpy's float32 -> float16 conversion
(round to nearest even), .npy files are read by numpy, the safetensors header is parsed here.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import threading

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_util import check, failures, runner  # noqa: E402

CLI = os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])), "dtcast")
TMP = tempfile.mkdtemp(prefix="dtcast-pipe.")
run = runner(CLI, text=False, timeout=None)
LIMIT_KIB = 64 * 1024
N = 24 * 1024 * 1024  # 96 MiB of float32: larger than the bound, so holding it would show


def path(name):
    return os.path.join(TMP, name)


# The probe feeds dtcast through a real pipe from a thread of its own and reports the peak RSS
# of its only child, dtcast.
PROBE = r"""
import json, os, resource, subprocess, sys, threading
src, out, env = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
e = dict(os.environ); e.update(env)
o = open(out, 'wb') if out != '-' else subprocess.DEVNULL
p = subprocess.Popen(sys.argv[4:], stdin=subprocess.PIPE if src != '-' else subprocess.DEVNULL,
                     stdout=o, stderr=subprocess.PIPE, env=e)
def feed():
    try:
        with open(src, 'rb') as f:
            while True:
                b = f.read(1 << 20)
                if not b:
                    break
                p.stdin.write(b)
    except BrokenPipeError:
        pass
    try:
        p.stdin.close()
    except BrokenPipeError:
        pass
t = None
if src != '-':
    t = threading.Thread(target=feed); t.start()
err = p.stderr.read()
p.wait()
if t:
    t.join()
sys.stderr.write(err.decode())
print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def piped(args, src, out="-", env=None):
    """(exit status, peak RSS in KiB, stderr) of dtcast ARGS reading the file src through a
    pipe and writing its stdout to out."""
    p = subprocess.run([sys.executable, "-c", PROBE, src, out, json.dumps(env or {}), CLI,
                        *args], capture_output=True)
    code, kib = p.stdout.decode().split()
    return int(code), int(kib), p.stderr.decode()


def same_file(a, b):
    with open(a, "rb") as x, open(b, "rb") as y:
        while True:
            p, q = x.read(1 << 20), y.read(1 << 20)
            if p != q:
                return False
            if not p:
                return True


def fifo_feed(fifo, src):
    """Writes the file src into the named pipe fifo from a thread (started; join it)."""
    def feed():
        with open(fifo, "wb") as w, open(src, "rb") as r:
            while True:
                b = r.read(1 << 20)
                if not b:
                    break
                w.write(b)
    t = threading.Thread(target=feed)
    t.start()
    return t


def leftovers(folder):
    return [f for f in os.listdir(folder) if f.startswith(".dtcast-spool") or ".tmp" in f]


def test_bounded():
    a = np.tile(np.linspace(-70000, 70000, 1 << 20, dtype=np.float32), N >> 20)
    a[::7] = np.float32(1e-6)  # some subnormal results
    a.tofile(path("in.raw"))
    np.save(path("in.npy"), a)
    with np.errstate(over="ignore"):
        want = a.astype(np.float16)  # beyond 65504: inf
    want_bytes = want.tobytes()
    limit = f"(bound {LIMIT_KIB} KiB)"

    # raw data to raw output: streamed, no count needed
    code, kib, err = piped(["cast", "-q", "--from", "float32", "--to", "float16", "-",
                            path("o.raw")], path("in.raw"))
    ok = code == 0 and open(path("o.raw"), "rb").read() == want_bytes
    check(ok and kib < LIMIT_KIB, "pipe.raw_to_raw_streamed", f"exit {code}, {kib} KiB {limit}: {err}")
    code, kib, err = piped(["cast", "-q", "--from", "float32", "--to", "float16", "-", "-"],
                           path("in.raw"), out=path("o2.raw"))
    check(code == 0 and kib < LIMIT_KIB and same_file(path("o.raw"), path("o2.raw")),
          "pipe.raw_to_stdout_streamed", f"exit {code}, {kib} KiB: {err}")

    # raw data without --shape to .npy: spooled beside the output, unlinked at once
    out_dir = os.path.join(TMP, "out")
    os.mkdir(out_dir)
    code, kib, err = piped(["cast", "-q", "--from", "float32", "--to", "float16", "-",
                            os.path.join(out_dir, "o.npy")], path("in.raw"))
    got = np.load(os.path.join(out_dir, "o.npy")) if code == 0 else None
    check(code == 0 and kib < LIMIT_KIB and got.shape == (N,) and got.dtype == np.float16 and
          got.tobytes() == want_bytes, "pipe.raw_to_npy_spooled", f"exit {code}, {kib} KiB: {err}")
    check(leftovers(out_dir) == [] and os.listdir(out_dir) == ["o.npy"],
          "pipe.spool_leaves_nothing", os.listdir(out_dir))
    run("cast", "-q", "--from", "float32", "--to", "float16", path("in.raw"), path("f.npy"))
    check(code == 0 and same_file(path("f.npy"), os.path.join(out_dir, "o.npy")),
          "pipe.raw_to_npy_same_as_file")

    # raw data with --shape: streamed with its length known
    code, kib, err = piped(["cast", "-q", "--from", "float32", "--shape", f"{N // 1024}x1024",
                            "--to", "float16", "-", path("s.npy")], path("in.raw"))
    got = np.load(path("s.npy")) if code == 0 else None
    check(code == 0 and kib < LIMIT_KIB and got.shape == (N // 1024, 1024) and
          got.tobytes() == want_bytes, "pipe.raw_shape_to_npy", f"exit {code}, {kib} KiB: {err}")

    # raw data to safetensors: spooled
    code, kib, err = piped(["cast", "-q", "--from", "float32", "--to", "float16", "-",
                            path("o.safetensors")], path("in.raw"))
    ok = False
    if code == 0:
        blob = open(path("o.safetensors"), "rb").read()
        (hlen,) = struct.unpack("<Q", blob[:8])
        head = json.loads(blob[8:8 + hlen])
        e = head.get("tensor", {})
        ok = (e.get("dtype") == "F16" and e.get("shape") == [N] and
              blob[8 + hlen + e["data_offsets"][0]:8 + hlen + e["data_offsets"][1]] == want_bytes)
    check(ok and kib < LIMIT_KIB, "pipe.raw_to_safetensors_spooled",
          f"exit {code}, {kib} KiB: {err}")

    # .npy through a pipe: the header gives the length; output as from the file
    code, kib, err = piped(["cast", "-q", "--to", "float16", "-", path("n.npy")], path("in.npy"))
    run("cast", "-q", "--to", "float16", path("in.npy"), path("nf.npy"))
    check(code == 0 and kib < LIMIT_KIB and same_file(path("n.npy"), path("nf.npy")) and
          np.load(path("n.npy")).tobytes() == want_bytes, "pipe.npy_to_npy",
          f"exit {code}, {kib} KiB: {err}")

    # a .pb from a named pipe: spooled (its fields may come in any order), then read as a file;
    # beside the output, or in $TMPDIR for stdout
    run("cast", "-q", "--to", "float32", path("in.npy"), path("in.pb"))
    fifo = path("fifo.pb")
    os.mkfifo(fifo)
    t = fifo_feed(fifo, path("in.pb"))
    code, kib, err = piped(["cast", "-q", "--to", "float16", fifo, path("pb.npy")], "-")
    t.join()
    check(code == 0 and kib < LIMIT_KIB and same_file(path("pb.npy"), path("nf.npy")),
          "pipe.pb_fifo_spooled", f"exit {code}, {kib} KiB: {err}")
    spool = os.path.join(TMP, "spool")
    os.mkdir(spool)
    t = fifo_feed(fifo, path("in.pb"))
    code, kib, err = piped(["cast", "-q", "--to", "float16", fifo, "-"], "-", out=path("pb.raw"),
                           env={"TMPDIR": spool})
    t.join()
    check(code == 0 and kib < LIMIT_KIB and open(path("pb.raw"), "rb").read() == want_bytes and
          os.listdir(spool) == [], "pipe.pb_fifo_tmpdir",
          f"exit {code}, {kib} KiB, {os.listdir(spool)}: {err}")

    for f in os.listdir(TMP):
        p = path(f)
        if os.path.isfile(p) or os.path.islink(p) or f == "fifo.pb":
            os.remove(p)


def test_lengths():
    a = np.arange(250, dtype=np.float32)
    odd = a.tobytes() + b"\x01"  # 1001 bytes: the 251st element is cut short at byte 1000
    for out, name in (("o.raw", "streamed"), ("o.npy", "spooled"), ("o.safetensors", "spooled_st")):
        code, _, err = run("cast", "--from", "float32", "--to", "float16", "-", path(out),
                           stdin=odd)

        check(code == 1 and "<stdin>" in err and "1001 bytes" in err and "byte 1000" in err and
              not os.path.exists(path(out)) and leftovers(TMP) == [],
              f"pipe.cut_element_{name}", f"exit {code}: {err}")
    code, _, err = run("cast", "--from", "float32", "--to", "float16", "-", "-", stdin=odd)
    check(code == 1 and "byte 1000" in err, "pipe.cut_element_stdout", err)
    # sub-byte and packed float6: every byte count is whole elements
    code, out, err = run("cast", "--from", "float4e2m1fn", "--to", "float32", "-", "-",
                         stdin=bytes([0x21, 0x7f, 0x0a]))
    # codes low nibble first: 1 (0.5), 2 (1), 15 (-6), 7 (6), 10 (-1), 0
    check(code == 0 and out == struct.pack("<6f", 0.5, 1, -6, 6, -1, 0), "pipe.fp4_any_length",
          (code, err))
    # --shape: the pipe must hold exactly that much
    code, _, err = run("cast", "--from", "float32", "--shape", "300", "--to", "float16", "-",
                       path("o.npy"), stdin=a.tobytes())
    check(code == 1 and "<stdin>" in err and "1000" in err and
          not os.path.exists(path("o.npy")), "pipe.shape_short", err)
    code, _, err = run("cast", "--from", "float32", "--shape", "200", "--to", "float16", "-",
                       path("o.npy"), stdin=a.tobytes())
    check(code == 1 and "byte 800" in err and not os.path.exists(path("o.npy")),
          "pipe.shape_long", err)
    code, out, err = run("cast", "--from", "float32", "--shape", "5x50", "--to", "float16", "-",
                         path("o.npy"), stdin=a.tobytes())
    check(code == 0 and np.array_equal(np.load(path("o.npy")), a.reshape(5, 50)),
          "pipe.shape_exact", err)
    # .npy from a pipe with bytes after its data
    np.save(path("a.npy"), a)
    data = open(path("a.npy"), "rb").read()
    code, _, err = run("cast", "--to", "float16", "-", path("t.npy"), stdin=data + b"junk")
    check(code == 1 and f"byte {len(data)}" in err and not os.path.exists(path("t.npy")),
          "pipe.npy_trailing", err)
    # the spool's folder cannot be written: the message names the input and the folder
    code, _, err = piped(["cast", "--from", "float32", "--to", "float16", "-",
                          "/nonexistent-dtcast-dir/o.npy"], path("a.npy"))
    check(code == 1 and "<stdin>" in err and "/nonexistent-dtcast-dir" in err,
          "pipe.spool_folder_missing", err)


if __name__ == "__main__":
    test_bounded()
    test_lengths()
    for f in sorted(os.listdir(TMP), reverse=True):
        p = path(f)
        if os.path.isdir(p):
            for g in os.listdir(p):
                os.remove(os.path.join(p, g))
            os.rmdir(p)
        else:
            os.remove(p)
    os.rmdir(TMP)
    sys.exit(1 if failures() else 0)
