#!/usr/bin/env python3
"""Writes the promotion tables of the real torch, numpy and numpy + ml_dtypes, the ground truth
test_promote.c reads.

    /usr/bin/python3 tests/promote_tables/generate.py [OUTDIR]     (default: this folder)
    .venv/bin/python tests/promote_tables/generate.py --only numpy+ml_dtypes [OUTDIR]

Every cell is asked of the installed system (Debian's python3-torch 1.13 and python3-numpy 1.24
when the torch and numpy files were generated; numpy 2.4.6 and ml_dtypes 0.7.0, the pins of
tests/python/requirements.txt, for the numpy+ml_dtypes files). A system that does not import is
skipped with a message and its files are left alone; --only SYSTEM (torch, numpy,
numpy+ml_dtypes) writes one system's files:

  torch_table.csv    grid: torch.promote_types for tensor x tensor, torch.result_type for the
                     Python scalar rows and columns (a tensor of rank 1 against True, 1, 1.0, 1j)
  torch_ranked.csv   a,b,result: torch.result_type over every pair of operands: each dtype as a
                     tensor of rank 1 ("int8") and of rank 0 ("int8@0"), and the Python scalars
  numpy_table.csv    grid: np.promote_types, and np.result_type against Python scalars under
                     NEP 50 (numpy 1.24: np._set_promotion_state("weak"))
  numpy_ranked.csv   a,b,result: np.result_type under NEP 50 over every pair of operands
  numpy_ml_dtypes_table.csv, numpy_ml_dtypes_ranked.csv
                     the same with ml_dtypes imported: numpy's types, then every dtype of
                     dir(ml_dtypes); np.promote_types, np.result_type (NEP 50 is numpy 2's rule)

Names are dtcast's canonical type names and the CLI's operand syntax ("py:int", "int8@0"); a
refused pair is "error". ml_dtypes' names become dtcast's (float8_e4m3fn -> float8e4m3fn,
float4_e2m1fn -> float4e2m1, float8_e8m0fnu -> float8e8m0, ...); its types dtcast does not have
would keep a name of their own (ML_DTYPES_ABSENT: none with ml_dtypes 0.7.0, whose int1,
bcomplex32 and float8_e5m3fnu are dtcast's int1, bcomplex32 and float8e5m3fnu). The grids have the layout of `dtcast promote --rules R --table --format
csv`. test_promote_live.py imports this module to compare the live systems with the library.
"""
import os
import warnings
import sys

PY_SCALARS = [("py:bool", True), ("py:int", 1), ("py:float", 1.0), ("py:complex", 1j)]

TORCH_NAMES = [
    ("bool", "bool"), ("uint8", "uint8"), ("int8", "int8"), ("int16", "int16"),
    ("int32", "int32"), ("int64", "int64"), ("float16", "float16"), ("bfloat16", "bfloat16"),
    ("float32", "float32"), ("float64", "float64"), ("complex32", "complex32"),
    ("complex64", "complex64"), ("complex128", "complex128"),
]

NUMPY_NAMES = [
    "bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
    "float16", "float32", "float64", "complex64", "complex128",
]


def torch_tables():
    """(grid_labels, grid, ranked): grid[i][j] for labels i, j; ranked = [(a, b, result)]."""
    import torch

    warnings.filterwarnings("ignore", message="ComplexHalf support is experimental")

    dtypes = {name: getattr(torch, attr) for name, attr in TORCH_NAMES}
    rev = {v: k for k, v in dtypes.items()}

    def tensor(name, rank):
        return torch.zeros((1,) * rank, dtype=dtypes[name])

    def result(x, y, promote=False):
        try:
            if promote:
                return rev[torch.promote_types(x, y)]
            return rev[torch.result_type(x, y)]
        except Exception:  # a refusal of the system is a cell of the table
            return "error"

    names = [n for n, _ in TORCH_NAMES]
    labels = names + [p for p, _ in PY_SCALARS]
    values = dict(PY_SCALARS)

    def grid_cell(a, b):
        if a in dtypes and b in dtypes:
            return result(dtypes[a], dtypes[b], promote=True)
        x = tensor(a, 1) if a in dtypes else values[a]
        y = tensor(b, 1) if b in dtypes else values[b]
        return result(x, y)

    grid = [[grid_cell(a, b) for b in labels] for a in labels]
    operands = [(n, lambda n=n: tensor(n, 1)) for n in names]
    operands += [(n + "@0", lambda n=n: tensor(n, 0)) for n in names]
    operands += [(p, lambda v=v: v) for p, v in PY_SCALARS]
    ranked = [(a, b, result(fa(), fb())) for a, fa in operands for b, fb in operands]
    return labels, grid, ranked, "torch " + torch.__version__


def numpy_tables():
    import numpy as np

    # NEP 50: numpy 1.24-1.26 offer it as the experimental "weak" state; numpy 2 has it always.
    weak = getattr(np, "_set_promotion_state", None)
    if weak:
        weak("weak")
    try:
        values = dict(PY_SCALARS)

        def operand(label, rank):
            if label in values:
                return values[label]
            return np.zeros((1,) * rank, dtype=label)

        def result(x, y):
            try:
                if isinstance(x, np.dtype) and isinstance(y, np.dtype):
                    return np.promote_types(x, y).name
                return np.result_type(x, y).name
            except Exception:
                return "error"

        labels = NUMPY_NAMES + [p for p, _ in PY_SCALARS]

        def grid_cell(a, b):
            if a in values or b in values:
                return result(operand(a, 1), operand(b, 1))
            return result(np.dtype(a), np.dtype(b))

        grid = [[grid_cell(a, b) for b in labels] for a in labels]
        operands = [(n, n, 1) for n in NUMPY_NAMES] + [(n + "@0", n, 0) for n in NUMPY_NAMES]
        operands += [(p, p, 0) for p, _ in PY_SCALARS]
        ranked = [(a, b, result(operand(x, rx), operand(y, ry)))
                  for a, x, rx in operands for b, y, ry in operands]
        return labels, grid, ranked, "numpy " + np.__version__
    finally:
        if weak:
            weak("legacy")


# ml_dtypes' names of its types -> dtcast's canonical names. Every dtype of dir(ml_dtypes) must be
# here (numpy_ml_dtypes_tables refuses a new one), those dtcast lacks in ML_DTYPES_ABSENT too.
ML_DTYPES_NAMES = {
    "bfloat16": "bfloat16", "complex32": "complex32", "bcomplex32": "bcomplex32",
    "float4_e2m1fn": "float4e2m1", "float6_e2m3fn": "float6e2m3fn",
    "float6_e3m2fn": "float6e3m2fn", "float8_e3m4": "float8e3m4", "float8_e4m3": "float8e4m3",
    "float8_e4m3b11fnuz": "float8e4m3b11fnuz", "float8_e4m3fn": "float8e4m3fn",
    "float8_e4m3fnuz": "float8e4m3fnuz", "float8_e5m2": "float8e5m2",
    "float8_e5m2fnuz": "float8e5m2fnuz", "float8_e5m3fnu": "float8e5m3fnu",
    "float8_e8m0fnu": "float8e8m0", "int1": "int1", "int2": "int2", "int4": "int4",
    "uint1": "uint1", "uint2": "uint2", "uint4": "uint4",
}
# ml_dtypes types without a dtcast type (yet): their rows and columns are in the tables, and the
# tests skip them while the library does not know the name. None with ml_dtypes 0.7.0.
ML_DTYPES_ABSENT = []


def ml_dtypes_types():
    """[(dtcast name, np.dtype)] of every dtype ml_dtypes exports, in the order of dir()."""
    import numpy as np
    import ml_dtypes

    found = []
    for attr in dir(ml_dtypes):
        obj = getattr(ml_dtypes, attr)
        if attr.startswith("_") or not isinstance(obj, type):
            continue
        try:
            dt = np.dtype(obj)
        except TypeError:  # finfo, iinfo
            continue
        if dt.type is not obj:
            continue
        if attr not in ML_DTYPES_NAMES:
            raise SystemExit("ml_dtypes.%s is new: name it in ML_DTYPES_NAMES" % attr)
        found.append((ML_DTYPES_NAMES[attr], dt))
    return found


def numpy_ml_dtypes_tables():
    import numpy as np
    import ml_dtypes

    dtypes = [(n, np.dtype(n)) for n in NUMPY_NAMES] + ml_dtypes_types()
    by_name = dict(dtypes)
    rev = {dt: name for name, dt in dtypes}
    values = dict(PY_SCALARS)

    def operand(label, rank):
        if label in values:
            return values[label]
        return np.zeros((1,) * rank, dtype=by_name[label])

    def result(x, y):
        try:
            if isinstance(x, np.dtype) and isinstance(y, np.dtype):
                r = np.promote_types(x, y)
            else:
                r = np.result_type(x, y)
        except (TypeError, ValueError):  # DTypePromotionError is a TypeError
            return "error"
        return rev.get(r, "unknown:" + r.name)

    names = [n for n, _ in dtypes]
    labels = names + [p for p, _ in PY_SCALARS]

    def grid_cell(a, b):
        if a in values or b in values:
            return result(operand(a, 1), operand(b, 1))
        return result(by_name[a], by_name[b])

    grid = [[grid_cell(a, b) for b in labels] for a in labels]
    operands = [(n, n, 1) for n in names] + [(n + "@0", n, 0) for n in names]
    operands += [(p, p, 0) for p, _ in PY_SCALARS]
    ranked = [(a, b, result(operand(x, rx), operand(y, ry)))
              for a, x, rx in operands for b, y, ry in operands]
    return labels, grid, ranked, "numpy %s + ml_dtypes %s" % (np.__version__, ml_dtypes.__version__)


SYSTEMS = [("torch", torch_tables), ("numpy", numpy_tables),
           ("numpy+ml_dtypes", numpy_ml_dtypes_tables)]


def file_stem(rules):
    return rules.replace("+", "_")



def write_grid(path, rules, labels, grid, source):
    with open(path, "w") as f:
        f.write("# %s, from %s by tests/promote_tables/generate.py\n" % (rules, source))
        f.write(",".join([rules] + labels) + "\n")
        for label, row in zip(labels, grid):
            f.write(",".join([label] + row) + "\n")


def write_ranked(path, ranked, source):
    with open(path, "w") as f:
        f.write("# a,b,result: from %s by tests/promote_tables/generate.py\n" % source)
        for a, b, r in ranked:
            f.write("%s,%s,%s\n" % (a, b, r))


def main():
    args = sys.argv[1:]
    only = None
    if args[:1] == ["--only"] and len(args) >= 2:
        only, args = args[1], args[2:]
        if only not in [r for r, _ in SYSTEMS]:
            raise SystemExit("--only: one of %s" % ", ".join(r for r, _ in SYSTEMS))
    out = args[0] if args else os.path.dirname(os.path.abspath(__file__))
    for rules, make in SYSTEMS:
        if only and rules != only:
            continue
        try:
            labels, grid, ranked, source = make()
        except ImportError as e:
            print("skipped %s: %s" % (rules, e), file=sys.stderr)
            continue
        stem = file_stem(rules)
        write_grid(os.path.join(out, stem + "_table.csv"), rules, labels, grid, source)
        write_ranked(os.path.join(out, stem + "_ranked.csv"), ranked, source)


if __name__ == "__main__":
    main()
