#!/usr/bin/python3
"""The pair matrix of the benchmark (bench/run BUILD --matrix): every ordered pair of the
numeric types in default options, one thread, each timed against memcpy of the larger buffer in
the same run (dtcast-bench --matrix); one line per pair and a summary line: pairs, median,
minimum, and how many are below the target. --png draws the matrix as a heatmap (source x
target, coloured by the ratio to memcpy) with Debian's python3-matplotlib.

    bench/matrix.py BUILD [--isa portable|avx2|avx512] [--n N] [--runs R] [--budget SEC]
                          [--target 0.5] [--filter S] [--png FILE] [--json FILE]

--isa runs pinned (DTCAST_ISA). Defaults: 16 Mi elements, median of 3 runs, a pair stops after
--budget seconds (2) with the runs it has (a slow pair is far below any target anyway)."""
import argparse
import json
import os
import statistics
import subprocess
import sys


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--isa", choices=["portable", "avx2", "avx512"])
    ap.add_argument("--n", type=int, default=16 << 20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--budget", type=float, default=2.0)
    ap.add_argument("--target", type=float, default=0.5)
    ap.add_argument("--filter")
    ap.add_argument("--png", help="draw the heatmap into this file")
    ap.add_argument("--json", help="write the rows as JSON lines into this file")
    return ap.parse_args()


def run(a):
    exe = os.path.join(a.build, "dtcast-bench")
    cmd = [exe, "--matrix", "--n", str(a.n), "--runs", str(a.runs), "--budget", str(a.budget)]
    if a.filter:
        cmd += ["--filter", a.filter]
    env = dict(os.environ)
    if a.isa:
        env["DTCAST_ISA"] = a.isa
    rows = []
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env) as p:
        for line in p.stdout:
            r = json.loads(line)
            rows.append(r)
            print(f"{r['src']:>20} -> {r['dst']:<20} {r['gbs']:7.2f} GB/s  ratio {r['ratio']:.3f}",
                  flush=True)
    return rows


def summary(rows, a):
    ratios = [r["ratio"] for r in rows]
    below = sum(1 for x in ratios if x < a.target)
    isa = a.isa or "auto"
    return (f"summary ({isa}): {len(ratios)} pairs, median {statistics.median(ratios):.3f}, "
            f"minimum {min(ratios):.3f}, {below} below {a.target}")


def draw(rows, a, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    order = []
    for r in rows:
        for t in (r["src"], r["dst"]):
            if t not in order:
                order.append(t)
    index = {t: i for i, t in enumerate(order)}
    grid = np.full((len(order), len(order)), np.nan)
    for r in rows:
        grid[index[r["src"]], index[r["dst"]]] = r["ratio"]
    fig, ax = plt.subplots(figsize=(11, 9.5))
    im = ax.imshow(np.clip(grid, 0, 1.5), cmap="RdYlGn", vmin=0, vmax=1.5)
    ax.set_xticks(range(len(order)), order, rotation=90, fontsize=7)
    ax.set_yticks(range(len(order)), order, fontsize=7)
    ax.set_xlabel("target")
    ax.set_ylabel("source")
    ax.set_title(f"dtcast, ratio to memcpy (1 thread, default options): {summary(rows, a)}",
                 fontsize=9)
    fig.colorbar(im, ax=ax, shrink=0.8, label="ratio to memcpy (clipped at 1.5)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    a = parse_args()
    rows = run(a)
    if not rows:
        print("no pairs ran", file=sys.stderr)
        return 1
    print(summary(rows, a), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    if a.png:
        draw(rows, a, a.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
