"""ggml's block types: dtcast's quantize and dequantize throughput, one thread, against memcpy of
the larger buffer, gguf-py 0.19.0's numpy codec and ggml's own C (libggml-base from the
llama-cpp-python sdist, tests/ggml_oracle/build.sh, where it is built), on the same tensors in the
same run. Medians of --repeat runs.

    PYTHONPATH=build/python .venv/bin/python bench/ggml_bench.py [--mib 64] [--repeat 5]
        [--types q8_0,q4_0,q4_K,...] [--ggml build/ggml-oracle/lib/libggml-base.so] [--json]

ratio = (bytes of the larger buffer / s) / (memcpy bytes / s): quantize from float32 reads 4 bytes
per element (the larger side), from bfloat16 2; dequantize to float32 writes 4, to bfloat16 2.
memcpy is numpy's copyto of as many bytes as the larger buffer (one thread), timed alternately
with each operation so that the two see the same machine (its median is the row's "memcpy").
Every output, memcpy's too, goes to a buffer allocated and touched before the timing (out=): a
fresh buffer's page faults cost as much as the copy itself and are not what is measured."""
import argparse
import ctypes
import json
import os
import platform
import statistics
import time

import numpy as np

import dtcast.gguf as G

try:
    import ml_dtypes
except ImportError:  # pragma: no cover
    ml_dtypes = None
try:
    import gguf
    from gguf import quants as gq
except ImportError:  # pragma: no cover
    gguf = gq = None

QUANT = ["q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K",
         "tq1_0", "tq2_0", "mxfp4", "nvfp4", "q1_0", "q2_0"]
DEQUANT_ONLY = ["iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq1_s", "iq1_m", "iq4_nl",
                "iq4_xs"]


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def median_time(fn, repeat):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


class Copier:
    """memcpy of the first nbytes of two preallocated, touched buffers, timed alternately with
    an operation: paired(fn, nbytes) -> (median seconds of fn, memcpy bytes/s of nbytes)."""

    def __init__(self, nbytes, repeat):
        self.a = np.ones(nbytes, np.uint8)
        self.b = np.zeros(nbytes, np.uint8)
        self.repeat = repeat

    def paired(self, fn, nbytes):
        a, b = self.a[:nbytes], self.b[:nbytes]
        ts, tc = [], []
        fn()  # warm: the output's pages, the kernel's tables
        np.copyto(b, a)
        for _ in range(self.repeat):
            t0 = time.perf_counter()
            fn()
            t1 = time.perf_counter()
            np.copyto(b, a)
            t2 = time.perf_counter()
            ts.append(t1 - t0)
            tc.append(t2 - t1)
        return statistics.median(ts), nbytes / statistics.median(tc)


def load_ggml(path):
    if not path or not os.path.exists(path):
        return None
    lib = ctypes.CDLL(path)
    lib.ggml_quantize_chunk.restype = ctypes.c_size_t
    lib.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                        ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                                        ctypes.c_void_p]
    lib.ggml_quantize_init.argtypes = [ctypes.c_int]
    return lib


def ggml_to_float(lib, code):
    name = G.type_name(code).lower()  # ggml's row functions: q4_K, iq2_xxs, ...
    if name.endswith("_k"):
        name = name[:-2] + "_K"
    name = "dequantize_row_" + name
    fn = getattr(lib, name, None)
    if fn is None:
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    return fn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=float, default=64, help="float32 MiB per tensor")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--types", default=None)
    ap.add_argument("--ggml", default="build/ggml-oracle/lib/libggml-base.so")
    ap.add_argument("--no-gguf-py", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    n = int(a.mib * 2 ** 20 // 4) // 4096 * 4096
    rows = n // 4096
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, 4096), dtype=np.float32)
    xb = x.astype(ml_dtypes.bfloat16) if ml_dtypes else None
    cp = Copier(x.nbytes, a.repeat)
    memcpy = cp.paired(lambda: None, x.nbytes)[1]
    lib = load_ggml(a.ggml)
    types = a.types.split(",") if a.types else QUANT + DEQUANT_ONLY
    out = {"cpu": cpu_model(), "elements": n, "memcpy_GBps": memcpy / 1e9, "rows": []}
    if not a.json:
        print(f"CPU: {out['cpu']}; {n} elements ({x.nbytes / 2**20:.0f} MiB float32); memcpy "
              f"{memcpy / 1e9:.2f} GB/s at the start (each row: its own, alternately); one thread; "
              f"medians of {a.repeat}")
        print(f"{'type':8} {'op':18} {'GB/s':>7} {'memcpy':>7} {'ratio':>6} {'vs gguf-py':>11} "
              f"{'vs ggml C':>10}")
    for name in types:
        code = G.type_code(name)
        block, size = G.block_size(code), G.type_size(code)
        can_q = G.types()[[t["code"] for t in G.types()].index(code)]["quantize"]
        try:
            qtype = gguf.GGMLQuantizationType(code) if gguf else None
        except ValueError:  # a type gguf-py 0.19.0 does not know (Q2_0)
            qtype = None
        if can_q:
            q = G.quantize(x, code)
        else:  # random blocks with sane scales: dequantize a quantization of another type? no:
            q = rng.integers(0, 256, (rows, 4096 // block * size), dtype=np.uint8)
            # float16 scales at the block start (all IQ types keep d first): 1/64
            q.reshape(-1, size)[:, 0:2] = np.frombuffer(np.float16(1 / 64).tobytes(), np.uint8)
        results = []
        if can_q:
            for src, label in ((x, "quantize f32"), (xb, "quantize bf16")):
                if src is None:
                    continue
                qo = np.empty_like(q)
                nbytes = max(src.nbytes, qo.nbytes)
                t, mc = cp.paired(lambda: G.quantize(src, code, threads=1, out=qo), nbytes)
                row = {"type": G.type_name(code), "op": label, "GBps": nbytes / t / 1e9,
                       "memcpy_GBps": mc / 1e9, "ratio": (nbytes / t) / mc}
                if label == "quantize f32" and qtype is not None and not a.no_gguf_py:
                    try:
                        tg = median_time(lambda: gq.quantize(x, qtype), max(1, a.repeat // 2))
                        row["vs_gguf_py"] = tg / t
                    except (NotImplementedError, KeyError, ValueError):
                        pass
                if label == "quantize f32" and lib is not None:
                    lib.ggml_quantize_init(code)
                    buf = np.empty(rows * (4096 // block) * size, np.uint8)
                    tc = median_time(lambda: lib.ggml_quantize_chunk(
                        code, x.ctypes.data, buf.ctypes.data, 0, rows, 4096, None), a.repeat)
                    row["vs_ggml"] = tc / t
                results.append(row)
        for dt, label, width in ((np.float32, "dequantize f32", 4),
                                 (ml_dtypes.bfloat16 if ml_dtypes else None, "dequantize bf16", 2)):
            if dt is None:
                continue
            yo = np.empty(q.shape[:-1] + (q.shape[-1] // size * block,), dt)
            nbytes = max(n * width, q.nbytes)
            t, mc = cp.paired(lambda: G.dequantize(q, code, dtype=dt, threads=1, out=yo), nbytes)
            row = {"type": G.type_name(code), "op": label, "GBps": nbytes / t / 1e9,
                   "memcpy_GBps": mc / 1e9, "ratio": (nbytes / t) / mc}
            if label == "dequantize f32" and qtype is not None and not a.no_gguf_py:
                try:
                    with np.errstate(all="ignore"):
                        tg = median_time(lambda: gq.dequantize(q, qtype), max(1, a.repeat // 2))
                    row["vs_gguf_py"] = tg / t
                except (NotImplementedError, KeyError, ValueError):
                    pass
            if label == "dequantize f32" and lib is not None:
                fn = ggml_to_float(lib, code)
                if fn is not None:
                    yb = np.empty(n, np.float32)
                    tc = median_time(lambda: fn(q.ctypes.data, yb.ctypes.data, n), a.repeat)
                    row["vs_ggml"] = tc / t
            results.append(row)
        out["rows"] += results
        if not a.json:
            for r in results:
                g = f"{r['vs_gguf_py']:.0f}x" if "vs_gguf_py" in r else "-"
                c = f"{r['vs_ggml']:.1f}x" if "vs_ggml" in r else "-"
                print(f"{r['type']:8} {r['op']:18} {r['GBps']:7.2f} {r['memcpy_GBps']:7.2f} "
                      f"{r['ratio']:6.2f} {g:>11} "
                      f"{c:>10}")
    if a.json:
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
