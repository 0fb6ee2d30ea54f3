#!/usr/bin/env python3
"""`dtcast cast --to string --string-style ort` against the C library's own printf("%.8g"),
called through ctypes (ONNX Runtime prints every float type, float64 included, with "%.8g" of the
value as a double, and spells NaN, INF, -INF).

    python3 tests/test_ort_text_cli.py build/libdtcast.so      (the CLI is build/dtcast beside it)

Values: float64 random bit patterns, subnormals, values near 1, the edges (+-0, +-min, +-max,
+-Inf, NaN with either sign and other payloads), and float32 random bits; written as raw files
and as .npy output (numpy reads the strings back).
"""
import ctypes
import ctypes.util
import os
import random
import struct
import subprocess
import sys
import tempfile

import numpy as np

CLI = os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])), "dtcast")
TMP = tempfile.mkdtemp(prefix="dtcast-ort.")
LIBC = ctypes.CDLL(ctypes.util.find_library("c") or None)
LIBC.snprintf.restype = ctypes.c_int
failures = 0


def check(ok, name, why=""):
    global failures
    if ok:
        print(f"PASS {name}")
    else:
        failures += 1
        print(f"FAIL {name}: {why}")


def printf_8g(x):
    """ONNX Runtime's text of the double x: C's snprintf "%.8g", NaN, INF, -INF."""
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "-INF" if x < 0 else "INF"
    buf = ctypes.create_string_buffer(64)
    LIBC.snprintf(buf, 64, b"%.8g", ctypes.c_double(x))
    return buf.value.decode()


def float64_bits():
    rng = random.Random(13)
    edges = [0, 1 << 63, 1, (1 << 63) | 1, 0x000FFFFFFFFFFFFF, 0x0010000000000000,
             0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF, 0x7FF0000000000000, 0xFFF0000000000000,
             0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0xFFFFFFFFFFFFFFFF,
             0x3FF0000000000000, 0x3FB999999999999A, 0x7E37E43C8800759C, 0x3FD5555555555555]
    bits = list(edges)
    for i in range(60000):
        c = rng.getrandbits(64)
        if i % 3 == 1:
            c &= 0x800FFFFFFFFFFFFF  # subnormal
        elif i % 3 == 2:
            c = (c & 0xC00FFFFFFFFFFFFF) | ((0x3C0 + c % 128) << 52)  # 2^-63 .. 2^64
        bits.append(c)
    return bits


def run_cli(src_type, raw, out):
    src = os.path.join(TMP, "in.raw")
    with open(src, "wb") as f:
        f.write(raw)
    p = subprocess.run([CLI, "cast", "--from", src_type, "--to", "string", "--string-style",
                        "ort", "-q", src, out], capture_output=True)
    return p.returncode, p.stderr.decode(errors="replace")


def compare(name, got, want, labels):
    bad = [i for i in range(len(want)) if i >= len(got) or got[i] != want[i]]
    first = ""
    if bad:
        i = bad[0]
        first = "%s: dtcast %r, printf %r" % (labels[i], got[i] if i < len(got) else None, want[i])
    check(not bad and len(got) == len(want), name,
          "%d of %d differ (%d lines); first %s" % (len(bad), len(want), len(got), first))


bits = float64_bits()
values = [struct.unpack("<d", struct.pack("<Q", b))[0] for b in bits]
want = [printf_8g(x) for x in values]
labels = ["0x%016x" % b for b in bits]
raw = struct.pack("<%dQ" % len(bits), *bits)

out = os.path.join(TMP, "out.raw")
code, err = run_cli("float64", raw, out)
check(code == 0, "cli float64 -> string ort runs", err)
if code == 0:
    with open(out, "rb") as f:
        compare("cli float64 ort == printf %%.8g (%d values, raw)" % len(want),
                f.read().decode().split("\n")[:-1], want, labels)

npy = os.path.join(TMP, "out.npy")
code, err = run_cli("float64", raw, npy)
check(code == 0, "cli float64 -> string ort .npy runs", err)
if code == 0:
    compare("cli float64 ort == printf %%.8g (%d values, .npy)" % len(want),
            [str(s) for s in np.load(npy)], want, labels)

# the two cases the old float64 text (%.17g) got wrong, spelled out
check(want[labels.index("0x7e37e43c8800759c")] == "1e+300", "printf gives 1e+300 for 1e300")

rng = random.Random(31)
bits32 = [0, 0x80000000, 1, 0x7F7FFFFF, 0xFF800000, 0x7FC00000, 0xFFC00001] + \
    [rng.getrandbits(32) for _ in range(30000)]
values32 = [struct.unpack("<f", struct.pack("<I", b))[0] for b in bits32]
code, err = run_cli("float32", struct.pack("<%dI" % len(bits32), *bits32), out)
check(code == 0, "cli float32 -> string ort runs", err)
if code == 0:
    with open(out, "rb") as f:
        compare("cli float32 ort == printf %%.8g (%d values)" % len(bits32),
                f.read().decode().split("\n")[:-1], [printf_8g(x) for x in values32],
                ["0x%08x" % b for b in bits32])

print("%d failed" % failures if failures else "all passed")
sys.exit(1 if failures else 0)
