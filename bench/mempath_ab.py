#!/usr/bin/env python3
"""Same-run A/B of memory-path profiles (src/kernels/mempath.c): dtcast-bench rows run under each
DTCAST_MEMPATH setting in turn, round after round (so that every setting sees the same machine),
and the median ratio to memcpy of each row under each setting.

    bench/mempath_ab.py BUILD [--rows headline|all|SUBSTRING] [--rounds 3] [--n 67108864]
                        [--isa avx2] SETTING [SETTING ...]

SETTING is a DTCAST_MEMPATH value ("copy=16,narrow=1024,direct=0") or "chosen" (the CPU's own
profile). --rows headline: the 13 headline pairs (bench/headline.txt). Prints one table: row, then
per setting the median ratio (bytes read + written per second / memcpy's of the larger buffer,
measured alternately with the row by dtcast-bench) and, last, the best setting of the row."""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def headline():
    with open(os.path.join(HERE, "headline.txt")) as f:
        return [l.split("#")[0].strip() for l in f if l.split("#")[0].strip()]


def run_row(exe, row, n, env):
    """the first result of dtcast-bench whose "src->dst mode" is row, one thread"""
    pair, mode = row.split()
    src, dst = pair.split("->")
    out = subprocess.run([exe, "--n", str(n), "--runs", "3", "--budget", "10", "--filter",
                          row + " t1"], capture_output=True, text=True, env=env, check=True).stdout
    for line in out.splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            if (d.get("src"), d.get("dst"), d.get("mode"), d.get("threads")) == (src, dst, mode, 1):
                return d
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("settings", nargs="+")
    ap.add_argument("--rows", default="headline")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--n", type=int, default=64 << 20)
    ap.add_argument("--isa", default=None, help="DTCAST_ISA for every run (avx2, portable)")
    a = ap.parse_args()
    exe = os.path.join(a.build, "dtcast-bench")
    rows = headline() if a.rows == "headline" else [a.rows]
    ratios = {(r, s): [] for r in rows for s in a.settings}
    for rnd in range(a.rounds):
        for r in rows:
            for s in a.settings:
                env = dict(os.environ)
                env.pop("DTCAST_MEMPATH", None)
                if s != "chosen":
                    env["DTCAST_MEMPATH"] = s
                if a.isa:
                    env["DTCAST_ISA"] = a.isa
                d = run_row(exe, r, a.n, env)
                if d:
                    ratios[(r, s)].append(d["ratio"])
        print(f"round {rnd + 1}/{a.rounds} done", file=sys.stderr, flush=True)
    with open("/proc/cpuinfo") as f:
        cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    print(f"CPU: {cpu}; {a.n} elements; one thread; DTCAST_ISA={a.isa or 'native'}; "
          f"medians of {a.rounds} rounds (each the median of 3 runs)")
    print("| row | " + " | ".join(a.settings) + " | best |")
    print("|---|" + "---|" * (len(a.settings) + 1))
    for r in rows:
        meds = [statistics.median(ratios[(r, s)]) if ratios[(r, s)] else float("nan")
                for s in a.settings]
        best = a.settings[max(range(len(meds)), key=lambda i: meds[i])]
        print(f"| {r} | " + " | ".join(f"{m:.2f}" for m in meds) + f" | {best} |")


if __name__ == "__main__":
    main()
