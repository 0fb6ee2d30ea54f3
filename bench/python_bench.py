#!/usr/bin/env python3
"""Speed of the Python package (issue 14): dtcast.cast against ml_dtypes, numpy, torch and the C
library itself, on one float32 tensor converted to bfloat16, float16, float8_e4m3fn and
float4_e2m1fn.

    PYTHONPATH=build/python python bench/python_bench.py [--n ELEMENTS] [--runs N] [--json]
                                                        [--lib build/libdtcast.so]

Default: 64 Mi elements (256 MiB of float32 normal random values times 100), median of 5 runs,
the runs of all the calls of a row interleaved.
For every target it times

  dtcast out=, t1     dtcast.cast(x, T, out=preallocated, threads=1)
  dtcast out=         the same with threads=0 (the library decides: every core for big tensors)
  dtcast new, t1/new  without out= (a fresh np.empty each call: its page faults are counted)
  dtcast packed out=  float4 only: packed=True into a preallocated buffer, the layout the
                      library writes (two per byte), t1 and default threads
  C library, t1/C     dtcast_convert through ctypes on the same buffers (threads 1 / 0) -- the
                      library's own speed; compared with the package's same call (for float4
                      the packed one; the one-per-byte layout of ml_dtypes is shown beside)
  ml_dtypes           x.astype(T) (numpy's own astype for float16)
  torch t1 / torch    torch.from_numpy(x).to(T) with torch.set_num_threads(1) / the default
                      (float4: torch has only the packed float4_e2m1fn_x2, no .to(); skipped)

and prints GB/s of float32 read (4 bytes per element / median time) and the ratios the issue
sets as targets: dtcast (default threads, fresh output, as a user calls it) >= 10x ml_dtypes,
>= 1x torch (default threads), and the package within 10% of the C library (out=, same
threads). --json prints one JSON document instead of the table."""

import argparse
import ctypes as ct
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
if not any(os.path.isdir(os.path.join(p, "dtcast")) for p in sys.path if p):
    sys.path.insert(0, os.path.join(REPO, "build", "python"))

import dtcast  # noqa: E402
import ml_dtypes  # noqa: E402
from dtcast._types import lookup  # noqa: E402

try:
    import torch
except ImportError:  # torch is optional
    torch = None

TARGETS = ["bfloat16", "float16", "float8_e4m3fn", "float4_e2m1fn"]


# the ctypes structs of include/dtcast.h, as the tests declare them
sys.path.insert(0, os.path.join(REPO, "tests", "model"))
from dtlib import Options, Error  # noqa: E402


def find_lib(path):
    for p in [path, os.path.join(REPO, "build", "libdtcast.so")]:
        if p and os.path.exists(p):
            return p
    return None


class CLib:
    def __init__(self, path):
        self.L = ct.CDLL(os.path.abspath(path))
        self.L.dtcast_options_init_sized.argtypes = [ct.POINTER(Options), ct.c_size_t]
        self.L.dtcast_convert.argtypes = [ct.c_void_p, ct.c_int, ct.c_void_p, ct.c_int,
                                          ct.c_size_t, ct.POINTER(Options), ct.POINTER(Error)]
        self.L.dtcast_convert.restype = ct.c_int

    def convert_fn(self, dst, dst_type, src, src_type, threads):
        o = Options()
        self.L.dtcast_options_init_sized(ct.byref(o), ct.sizeof(o))
        o.threads = threads
        err = Error()
        args = (dst.ctypes.data, dst_type, src.ctypes.data, src_type, src.size, ct.byref(o),
                ct.byref(err))
        f = self.L.dtcast_convert  # ctypes releases the GIL around the call

        def run():
            st = f(*args)
            if st:
                raise RuntimeError(err.message.decode())
        return run


def median_times(fns, runs):
    """Median time of each function, the runs interleaved (run 1 of every function, then run 2,
    ...) so that a change of the machine's load or memory state falls on all of them alike."""
    for fn in fns.values():
        fn()  # warm up (first-touch of outputs, thread pools)
    ts = {label: [] for label in fns}
    for _ in range(runs):
        for label, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            ts[label].append(time.perf_counter() - t0)
    return {label: statistics.median(v) for label, v in ts.items()}


def bench(n, runs, lib_path):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(n, dtype=np.float32) * 100).astype(np.float32)
    lib = CLib(lib_path) if lib_path else None
    cores = os.cpu_count()
    rows = []
    for name in TARGETS:
        t = lookup(name)
        cols = {}
        out = np.empty(n, dtype=t.dtype)
        cols["dtcast out=, t1"] = lambda: dtcast.cast(x, name, out=out, threads=1)
        cols["dtcast out="] = lambda: dtcast.cast(x, name, out=out)
        cols["dtcast new, t1"] = lambda: dtcast.cast(x, name, threads=1)
        cols["dtcast new"] = lambda: dtcast.cast(x, name)
        packed = np.empty(dtcast._core.storage_size(t.code, n, False), dtype=np.uint8)
        if t.sub_byte:  # the layout the C library writes: the same call as dtcast_convert
            cols["dtcast packed out=, t1"] = lambda: dtcast.cast(x, name, out=packed, packed=True,
                                                                 threads=1)
            cols["dtcast packed out="] = lambda: dtcast.cast(x, name, out=packed, packed=True)
        if lib:  # into the buffer the package's same call writes (the packed one for float4)
            dst = packed if t.sub_byte else out
            cols["C t1"] = lib.convert_fn(dst, t.code, x, 1, 1)
            cols["C"] = lib.convert_fn(dst, t.code, x, 1, 0)
        cols["ml_dtypes"] = lambda: x.astype(t.dtype)
        if torch is not None and name != "float4_e2m1fn":
            xt = torch.from_numpy(x)
            dt = getattr(torch, name)
            default_threads = torch.get_num_threads()

            def torch_to(k):
                def run():
                    torch.set_num_threads(k)
                    try:
                        xt.to(dt)
                    finally:
                        torch.set_num_threads(default_threads)
                return run
            cols["torch t1"] = torch_to(1)
            cols["torch"] = torch_to(default_threads)
        times = {}
        times = median_times(cols, runs)
        for label in cols:
            print(f"  {name:14s} {label:16s} {times[label] * 1e3:9.1f} ms", file=sys.stderr,
                  flush=True)
        # correctness of what was timed: the package's bytes equal ml_dtypes' (rne, in range:
        # x has no NaN, and the float8/float4 overflows give NaN resp. max in both -- checked
        # on the whole array here, so a fast wrong path cannot pass unseen)
        mine = dtcast.cast(x, name)
        ref = x.astype(t.dtype)
        same = bool((mine.view(np.uint8) == ref.view(np.uint8)).all() or
                    np.array_equal(mine.astype(np.float32), ref.astype(np.float32), equal_nan=True))
        rows.append({"target": name, "elements": n, "times_s": times, "same_as_ml_dtypes": same})
    return {"elements": n, "runs": runs, "cores": cores, "load": os.getloadavg(),
            "torch": getattr(torch, "__version__", None), "numpy": np.__version__,
            "ml_dtypes": ml_dtypes.__version__, "rows": rows}


def ratios(row):
    t = row["times_s"]
    r = {}
    user = t["dtcast new"]
    r["vs ml_dtypes"] = t["ml_dtypes"] / user
    if "torch" in t:
        r["vs torch"] = t["torch"] / user
        r["t1 vs torch t1"] = t["torch t1"] / t["dtcast new, t1"]
    if "C" in t:
        # the same call as the library's: for sub-byte targets the packed layout it writes
        k = "dtcast packed out=" if "dtcast packed out=" in t else "dtcast out="
        r["vs C (out=)"] = t["C"] / t[k]
        r["t1 vs C t1 (out=)"] = t["C t1"] / t[k.replace("out=", "out=, t1")]
        if k != "dtcast out=":
            r["one per byte vs C"] = t["C"] / t["dtcast out="]
    return r


def table(res):
    n = res["elements"]
    gbs = lambda s: 4 * n / s / 1e9  # noqa: E731  float32 bytes read per second
    labels = ["dtcast out=, t1", "dtcast out=", "dtcast new, t1", "dtcast new",
              "dtcast packed out=, t1", "dtcast packed out=", "C t1", "C", "ml_dtypes",
              "torch t1", "torch"]
    lines = [f"{n} float32 elements ({4 * n >> 20} MiB), median of {res['runs']} runs, "
             f"{res['cores']} cores, load average {res['load'][0]:.2f}; GB/s of float32 read",
             "",
             "| target | " + " | ".join(labels) + " | vs ml_dtypes | vs torch | vs C |",
             "|---" * (len(labels) + 4) + "|"]
    for row in res["rows"]:
        t = row["times_s"]
        r = ratios(row)
        cells = [f"{gbs(t[k]):.2f}" if k in t else "—" for k in labels]
        vt = f"{r['vs torch']:.2f}× (t1 {r['t1 vs torch t1']:.2f}×)" if "vs torch" in r else "—"
        vc = f"{r['vs C (out=)']:.2f} (t1 {r['t1 vs C t1 (out=)']:.2f})" if "vs C (out=)" in r \
            else "—"
        if "one per byte vs C" in r:
            vc += f"; one per byte {r['one per byte vs C']:.2f}"
        lines.append(f"| {row['target']} | " + " | ".join(cells) +
                     f" | {r['vs ml_dtypes']:.1f}× | {vt} | {vc} |")
    lines += ["", "ratios: dtcast.cast as called (default threads, fresh output) against "
              "ml_dtypes astype and torch .to() (default threads); vs C: the package with out= "
              "against dtcast_convert on the same buffers (1.00 = the library's own speed)"]
    bad = [r["target"] for r in res["rows"] if not r["same_as_ml_dtypes"]]
    if bad:
        lines.append(f"WARNING: results differ from ml_dtypes for {bad}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=64 << 20, help="elements (default 64 Mi)")
    ap.add_argument("--runs", type=int, default=5, help="runs per cell; the median is reported")
    ap.add_argument("--lib", default=None, help="libdtcast.so (default build/libdtcast.so)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of the table")
    a = ap.parse_args()
    res = bench(a.n, a.runs, find_lib(a.lib))
    for row in res["rows"]:
        row["ratios"] = ratios(row)
    if a.json:
        print(json.dumps(res, indent=1))
    else:
        print(table(res))


if __name__ == "__main__":
    main()
