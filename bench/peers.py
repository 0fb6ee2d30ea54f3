"""Peers for bench/run: numpy astype and torch's preallocated copy_ on the same bytes.

    python3 peers.py JOBS.json

JOBS.json is a list of {"src", "dst", "n", "runs", "file"}; "file" holds the source data that
dtcast-bench generated (dtcast-bench --dump). One JSON object per line on stdout per peer and
job: {"src", "dst", "peer", "gbs", "seconds", "runs"}, or {"peer", "skip": reason} once per
missing peer. Single thread for both (numpy is; torch.set_num_threads(1)). Throughput counts
bytes read plus bytes written, as dtcast-bench does."""
import json
import statistics
import sys
import time

try:
    import numpy as np
except ImportError:  # without numpy there is nothing to read the data with
    np = None
try:
    import torch
except ImportError:
    torch = None

NP_TYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
            "float16", "float32", "float64"]
TORCH_TYPES = {"bool": "bool", "int8": "int8", "uint8": "uint8", "int16": "int16",
               "int32": "int32", "int64": "int64", "float16": "float16",
               "bfloat16": "bfloat16", "float32": "float32", "float64": "float64"}
ITEM = {"bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4,
        "int64": 8, "uint64": 8, "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}


def emit(obj):
    print(json.dumps(obj), flush=True)


def load(job):
    """The source as a numpy array (bfloat16 as its int16 bits)."""
    dtype = "int16" if job["src"] == "bfloat16" else job["src"]
    return np.fromfile(job["file"], dtype=dtype, count=job["n"])


def timed(fn, runs):
    fn()  # warm-up
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def report(job, peer, seconds):
    bytes_moved = job["n"] * (ITEM[job["src"]] + ITEM[job["dst"]])
    emit({"src": job["src"], "dst": job["dst"], "peer": peer, "runs": job["runs"],
          "seconds": seconds, "gbs": bytes_moved / seconds * 1e-9})


def run_numpy(job, arr):
    if job["src"] not in NP_TYPES or job["dst"] not in NP_TYPES:
        return
    dst = np.dtype(job["dst"])
    with np.errstate(all="ignore"):
        report(job, "numpy", timed(lambda: arr.astype(dst), job["runs"]))


def run_torch(job, arr):
    if job["src"] not in TORCH_TYPES or job["dst"] not in TORCH_TYPES:
        return
    src = torch.from_numpy(arr)
    if job["src"] == "bfloat16":
        src = src.view(torch.bfloat16)
    out = torch.empty(job["n"], dtype=getattr(torch, TORCH_TYPES[job["dst"]]))
    out.fill_(0)  # preallocated and touched, as dtcast's output
    report(job, "torch", timed(lambda: out.copy_(src), job["runs"]))


def main():
    jobs = json.load(open(sys.argv[1]))
    if np is None:
        emit({"peer": "numpy", "skip": "numpy is not installed for " + sys.executable})
        emit({"peer": "torch", "skip": "numpy is not installed for " + sys.executable})
        return
    emit({"peer": "numpy", "version": np.__version__})
    if torch is None:
        emit({"peer": "torch", "skip": "torch is not installed for " + sys.executable})
    else:
        torch.set_num_threads(1)
        emit({"peer": "torch", "version": torch.__version__})
    for job in jobs:
        arr = load(job)
        run_numpy(job, arr)
        if torch is not None:
            run_torch(job, arr)
        del arr


if __name__ == "__main__":
    main()
