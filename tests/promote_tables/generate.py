#!/usr/bin/env python3
"""Writes the promotion tables of the real torch and numpy, the ground truth test_promote.c reads.

    /usr/bin/python3 tests/promote_tables/generate.py [OUTDIR]     (default: this folder)

Four files, every cell asked of the installed system (Debian's python3-torch 1.13 and
python3-numpy 1.24 when they were generated):

  torch_table.csv    grid: torch.promote_types for tensor x tensor, torch.result_type for the
                     Python scalar rows and columns (a tensor of rank 1 against True, 1, 1.0, 1j)
  torch_ranked.csv   a,b,result: torch.result_type over every pair of operands: each dtype as a
                     tensor of rank 1 ("int8") and of rank 0 ("int8@0"), and the Python scalars
  numpy_table.csv    grid: np.promote_types, and np.result_type against Python scalars under
                     NEP 50 (numpy 1.24: np._set_promotion_state("weak"))
  numpy_ranked.csv   a,b,result: np.result_type under NEP 50 over every pair of operands

Names are dtcast's canonical type names and the CLI's operand syntax ("py:int", "int8@0"); a
refused pair is "error". The grids have the layout of `dtcast promote --rules R --table --format
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
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    labels, grid, ranked, source = torch_tables()
    write_grid(os.path.join(out, "torch_table.csv"), "torch", labels, grid, source)
    write_ranked(os.path.join(out, "torch_ranked.csv"), ranked, source)
    labels, grid, ranked, source = numpy_tables()
    write_grid(os.path.join(out, "numpy_table.csv"), "numpy", labels, grid, source)
    write_ranked(os.path.join(out, "numpy_ranked.csv"), ranked, source)


if __name__ == "__main__":
    main()
