#!/usr/bin/env python3
"""ggml's own outputs on fixed inputs (tests/ggml_oracle/ggml_cases.py), kept as test vectors in
tests/data/ggml/ so that make test compares dtcast with ggml (tests/python/test_ggml_vectors.py)
without building llama.cpp; and, in make check-long, the same comparison made afresh.

  make_vectors.py [--lib LIB] [--out DIR]       write DIR/<type>.npz and DIR/index.json
  make_vectors.py --check [--sweep N] [...]     recompute ggml's outputs and compare them with the
                                                stored vectors (FAIL when ggml's output differs),
                                                then, when dtcast.gguf is importable, compare
                                                dtcast with ggml directly on N more elements per
                                                type (default 10^7; --sweep 0: none)

LIB: libggml-base.so (default $GGML_ORACLE_LIB, else build/ggml-oracle/lib/, which
tests/ggml_oracle/build.sh makes); DIR: default tests/data/ggml. --types a,b limits the types.
Each check prints one line "PASS name ..." / "FAIL name: ..." / "SKIP name: ..." (tests/long/run
counts them); the exit status is 1 when any failed.
"""

import argparse
import concurrent.futures
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ggml_cases as cases  # noqa: E402
import ggmllib  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(REPO, "tests", "data", "ggml")
FORMAT = 1


def parallel(fn, items, jobs):
    if jobs <= 1:
        return [fn(i) for i in items]
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        return list(ex.map(fn, items))


def ggml_quantize(g, x, name, jobs):
    """ggml's bytes for x (rows, K), the rows split over jobs threads (the ggml calls release the
    GIL; ggml quantizes each row on its own, so the split does not change the bytes)"""
    if jobs <= 1 or x.shape[0] < 2:
        return g.quantize(x, name)
    parts = np.array_split(np.arange(x.shape[0]), min(jobs * 4, x.shape[0]))
    return np.concatenate(parallel(lambda p: g.quantize(x[p[0]:p[-1] + 1], name), parts, jobs))


def ggml_dequantize(g, d, name, jobs):
    if jobs <= 1 or d.shape[0] < 2:
        return g.dequantize(d, name)
    parts = np.array_split(np.arange(d.shape[0]), min(jobs * 4, d.shape[0]))
    return np.concatenate(parallel(lambda p: g.dequantize(d[p[0]:p[-1] + 1], name), parts, jobs))


def compute(g, name, jobs):
    """{npz key: array} of ggml's outputs for one type, and its index entry"""
    _, code, block, size, how, _ = cases.BY_NAME[name]
    arrays = {}
    entry = {"code": code, "block": block, "bytes": size}
    if how:
        qs = {}
        for case in cases.CASES:
            x = cases.quantize_input_2d(case, block)
            q = ggml_quantize(g, x, name, jobs)
            arrays["q_" + case] = q
            qs[case] = {"shape": list(x.shape), "output_sha256": cases.sha256(q)}
        entry["quantize"] = {
            "how": "ggml_quantize_chunk (no imatrix)" if how == "chunk" else how[4:],
            "elements": sum(cases.SIZES.values()), "cases": qs}
    if name not in cases.NO_DEQUANTIZE:
        d = cases.dequantize_input_2d(name)
        y = ggml_dequantize(g, d, name, jobs)
        nfull = cases.full_blocks(name)
        arrays["dq_full"] = y.reshape(-1)[:nfull * block].view("<u4")
        arrays["dq_digest"] = cases.block_digests(y, block)
        entry["dequantize"] = {
            "how": ("type traits to_float" if g.traits(code)["to_float"]
                    else "dequantize_row_" + name),
            "seed": cases.dequantize_seed(code), "blocks": cases.DQ_BLOCKS,
            "row_blocks": cases.DQ_ROW_BLOCKS, "input_sha256": cases.sha256(d),
            "full_blocks": nfull, "output_sha256": cases.sha256(y)}
    return arrays, entry


def write(g, out, types, jobs):
    os.makedirs(out, exist_ok=True)
    info = ggmllib.info(g.path)
    index = {
        "format": FORMAT, "generator": cases.GEN_VERSION,
        "ggml": {k: info.get(k) for k in ("source", "sdist_sha256", "llama_cpp_commit",
                                          "ggml_version", "library", "compiler", "c_flags",
                                          "machine", "fma_instructions")},
        "quantize_inputs": {c: {"seed": cases.SEEDS[c], "elements": cases.SIZES[c],
                                "row": "block * 2" if c == "ties" else
                                       "block" if c == "ints" else cases.row_length(c, 32),
                                "input_sha256": cases.sha256(cases.quantize_input(c))}
                            for c in cases.CASES if c not in drifted},
        "types": {},
    }
    old = os.path.join(out, "index.json")
    if types != [t[0] for t in cases.TYPES] and os.path.exists(old):
        with open(old) as f:
            index["types"] = json.load(f)["types"]
    for name in types:
        t = time.time()
        arrays, entry = compute(g, name, jobs)
        path = os.path.join(out, name + ".npz")
        cases.write_npz(path, arrays)
        index["types"][name] = entry
        print(f"{name:8s} {os.path.getsize(path):8d} bytes ({time.time() - t:.1f}s)", flush=True)
    index["types"] = {t[0]: index["types"][t[0]] for t in cases.TYPES if t[0] in index["types"]}
    with open(old, "w") as f:
        json.dump(index, f, indent=1)
        f.write("\n")


def diff_count(a, b):
    if a.shape != b.shape:
        return f"shape {a.shape} != {b.shape}"
    return int(np.count_nonzero(a != b))


def check(g, out, types, jobs):
    """the stored vectors against ggml's outputs now; True when every one matches"""
    with open(os.path.join(out, "index.json")) as f:
        index = json.load(f)
    ok = True
    drifted = set()
    for c in cases.CASES:
        h = cases.sha256(cases.quantize_input(c))
        if h != index["quantize_inputs"][c]["input_sha256"]:
            print(f"FAIL ggml-vectors input {c}: sha256 {h} is not the stored one "
                  "(the input generator drifted; ggml is not compared on it)")
            drifted.add(c)
            ok = False
    for name in types:
        entry = index["types"].get(name)
        if entry is None:
            print(f"FAIL ggml-vectors {name}: not in {out}/index.json")
            ok = False
            continue
        stored = cases.read_npz(os.path.join(out, name + ".npz"))
        arrays, fresh = compute(g, name, jobs)
        if "quantize" in fresh:
            bad = {c: diff_count(arrays["q_" + c], stored.get("q_" + c, np.zeros(0, np.uint8)))
                   for c in cases.CASES if c not in drifted}
            bad = {c: n for c, n in bad.items() if n}
            n = fresh["quantize"]["elements"]
            if bad:
                print(f"FAIL ggml-vectors {name} quantize: ggml's bytes differ from the stored "
                      f"vectors ({bad} differing bytes per case)")
                ok = False
            else:
                print(f"PASS ggml-vectors {name} quantize ({n} elements, 0 bytes differ)")
        if "dequantize" in fresh:
            e = entry.get("dequantize", {})
            if e.get("input_sha256") != fresh["dequantize"]["input_sha256"]:
                print(f"FAIL ggml-vectors {name} dequantize: the random blocks' sha256 is not "
                      "the stored one (the input generator drifted)")
                ok = False
                continue
            nd = diff_count(arrays["dq_digest"], stored["dq_digest"])
            nf = diff_count(arrays["dq_full"], stored["dq_full"])
            if nd or nf or e.get("output_sha256") != fresh["dequantize"]["output_sha256"]:
                print(f"FAIL ggml-vectors {name} dequantize: ggml's output differs from the "
                      f"stored vectors ({nd} block digests, {nf} stored values)")
                ok = False
            else:
                print(f"PASS ggml-vectors {name} dequantize ({cases.DQ_BLOCKS} blocks, 0 differ)")
    return ok


# ---- the sweep: dtcast against ggml, directly --------------------------------------------------

def first_diffs(a, b, bsize, limit=3):
    """the first differing blocks (index) of two (rows, bytes) byte arrays"""
    a = a.reshape(-1, bsize)
    b = b.reshape(-1, bsize)
    bad = np.flatnonzero((a != b).any(axis=1))
    return bad[:limit].tolist(), int(bad.size)


def sweep(g, G, types, elements, jobs):
    ok = True
    chunks = max(1, -(-elements // (10 * sum(cases.SIZES.values()))))
    for name in types:
        _, code, block, size, how, _ = cases.BY_NAME[name]
        if how:
            t = time.time()
            n = nbytes = nblocks = 0
            where = []
            try:
                for ch in range(chunks):
                    for case in cases.CASES:
                        x = cases.sweep_input(case, ch, block)
                        want = ggml_quantize(g, x, name, jobs)
                        got = np.asarray(G.quantize(x, name))
                        n += x.size
                        if got.shape != want.shape:
                            raise AssertionError(f"shape {got.shape}, ggml {want.shape}")
                        d = int(np.count_nonzero(got != want))
                        if d:
                            idx, nb = first_diffs(got, want, size)
                            nbytes += d
                            nblocks += nb
                            if len(where) < 3:
                                where.append(f"{case} chunk {ch} blocks {idx}")
            except NotImplementedError as e:
                print(f"SKIP ggml-sweep {name} quantize: dtcast: {e}")
            except Exception as e:  # noqa: BLE001 - reported as the check's failure
                print(f"FAIL ggml-sweep {name} quantize: {type(e).__name__}: {e}")
                ok = False
            else:
                if nbytes:
                    print(f"FAIL ggml-sweep {name} quantize: {nbytes} bytes in {nblocks} of "
                          f"{n // block} blocks differ from ggml (first: {'; '.join(where)})")
                    ok = False
                else:
                    print(f"PASS ggml-sweep {name} quantize ({n} elements, 0 bytes differ, "
                          f"{time.time() - t:.0f}s)")
        if name not in cases.NO_DEQUANTIZE:
            t = time.time()
            rb = cases.DQ_ROW_BLOCKS
            nb = -(-elements // (block * rb)) * rb  # at least `elements` values, whole rows
            try:
                bad = total = 0
                per = 1 << 16
                for start in range(0, nb, per):
                    k = min(per, nb - start)
                    seed = cases.dequantize_seed(code) + 7919 * (start // per + 1)
                    d = cases.dequantize_input(name, seed=seed, nblocks=k)
                    d = d.reshape(-1, rb * size)
                    want = ggml_dequantize(g, d, name, jobs)
                    got = np.asarray(G.dequantize(d, name), dtype=np.float32)
                    if got.shape != want.shape:
                        raise AssertionError(f"shape {got.shape}, ggml {want.shape}")
                    bad += int(np.count_nonzero(got.view(np.uint32) != want.view(np.uint32)))
                    total += want.size
            except NotImplementedError as e:
                print(f"SKIP ggml-sweep {name} dequantize: dtcast: {e}")
            except Exception as e:  # noqa: BLE001
                print(f"FAIL ggml-sweep {name} dequantize: {type(e).__name__}: {e}")
                ok = False
            else:
                if bad:
                    print(f"FAIL ggml-sweep {name} dequantize: {bad} of {total} float32 values "
                          "differ from ggml's (bit patterns)")
                    ok = False
                else:
                    print(f"PASS ggml-sweep {name} dequantize ({nb} blocks, {total} values, 0 "
                          f"differ, {time.time() - t:.0f}s)")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", default=None)
    ap.add_argument("--out", default=DATA)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--sweep", type=float, default=None,
                    help="elements per type of the dtcast-vs-ggml sweep (--check; default 1e7)")
    ap.add_argument("--types", default=None)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()
    g = ggmllib.Ggml(a.lib)
    types = [t[0] for t in cases.TYPES]
    if a.types:
        want = [s.strip() for s in a.types.split(",") if s.strip()]
        unknown = [s for s in want if s not in cases.BY_NAME]
        if unknown:
            ap.error(f"unknown types {unknown}")
        types = [t for t in types if t in want]
    if not a.check:
        if a.sweep:
            ap.error("--sweep goes with --check")
        write(g, a.out, types, a.jobs)
        return 0
    ok = check(g, a.out, types, a.jobs)
    elements = int(1e7 if a.sweep is None else a.sweep)
    if elements > 0:
        try:
            import dtcast.gguf as G
        except ImportError as e:
            print(f"SKIP ggml-sweep: dtcast.gguf is not importable ({e})")
        else:
            ok = sweep(g, G, types, elements, a.jobs) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
