#!/usr/bin/env python3
"""Asks the installed torch, numpy and numpy + ml_dtypes again and compares every answer with
libdtcast.

    python3 tests/test_promote_live.py [build/libdtcast.so]
    .venv/bin/python tests/test_promote_live.py [build/libdtcast.so]     (numpy+ml_dtypes: the
                                         pinned numpy 2.4.6 and ml_dtypes 0.7.0)

For each system that imports here, the tables of tests/promote_tables/generate.py are made live
and compared (1) cell by cell with dtcast_promote() through ctypes and (2) with the checked-in
CSV files test_promote.c reads, so a stale table is noticed too. Prints "PASS name" /
"FAIL name: why" lines; a system that does not import prints a "SKIP" line and no PASS.
numpy+ml_dtypes pairs with a type dtcast does not have (generate.ML_DTYPES_ABSENT, while the
library cannot parse its name) are left out of (1) and counted; tests/python/test_promote.py
asks the same of the Python package in the pinned environment.
"""
import ctypes
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "promote_tables"))

import generate  # noqa: E402  (the generator of the checked-in tables)

RULES = {"torch": 2, "numpy": 3, "numpy+ml_dtypes": 5}
failures = 0


class Operand(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("rank", ctypes.c_int), ("scalar", ctypes.c_int)]


def load_library(path):
    lib = ctypes.CDLL(path)
    lib.dtcast_operand_parse.argtypes = [ctypes.c_char_p, ctypes.POINTER(Operand), ctypes.c_void_p]
    lib.dtcast_operand_parse.restype = ctypes.c_int
    lib.dtcast_promote.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int,
                                   ctypes.POINTER(Operand), ctypes.POINTER(Operand),
                                   ctypes.c_void_p, ctypes.c_void_p]
    lib.dtcast_promote.restype = ctypes.c_int
    lib.dtcast_type_name.argtypes = [ctypes.c_int]
    lib.dtcast_type_name.restype = ctypes.c_char_p
    return lib


def library_result(lib, rules, a, b):
    """The library's answer as the tables spell it: a type name, or "error"."""
    oa, ob = Operand(), Operand()
    if lib.dtcast_operand_parse(a.encode(), ctypes.byref(oa), None) != 0:
        return "unparsable %s" % a
    if lib.dtcast_operand_parse(b.encode(), ctypes.byref(ob), None) != 0:
        return "unparsable %s" % b
    out = ctypes.c_int(0)
    st = lib.dtcast_promote(ctypes.byref(out), RULES[rules], ctypes.byref(oa), ctypes.byref(ob),
                            None, None)
    if st != 0:
        return "error"
    name = lib.dtcast_type_name(out.value)
    return name.decode() if name else "?"


def report(ok, name, why=""):
    global failures
    if ok:
        print("PASS %s" % name)
    else:
        failures += 1
        print("FAIL %s: %s" % (name, why))


def read_csv(path):
    with open(path) as f:
        return [line.rstrip("\n").split(",") for line in f if line.strip() and line[0] != "#"]


def absent(lib, label):
    """A label of a type dtcast lacks (int1, bcomplex32, ...) while the library cannot parse it."""
    return label.split("@")[0] in generate.ML_DTYPES_ABSENT and \
        lib.dtcast_operand_parse(label.encode(), ctypes.byref(Operand()), None) != 0


def compare(rules, lib, labels, grid, ranked, source):
    pairs = [(a, b, grid[i][j]) for i, a in enumerate(labels) for j, b in enumerate(labels)]
    for what, items in (("table", pairs), ("ranked", ranked)):
        kept = [(a, b, r) for a, b, r in items if not (absent(lib, a) or absent(lib, b))]
        skipped = len(items) - len(kept)
        items = kept
        bad = [(a, b, want, got) for a, b, want in items
               for got in [library_result(lib, rules, a, b)] if got != want]
        report(not bad, "%s live %s vs libdtcast (%d pairs%s, %s)"
               % (rules, what, len(items), ", %d of types dtcast lacks left out" % skipped
                  if skipped else "", source),
               "%d differ, first: %s x %s: %s says %s, libdtcast %s"
               % ((len(bad),) + bad[0][:2] + (rules,) + bad[0][2:]) if bad else "")
    stem = generate.file_stem(rules)
    rows = read_csv(os.path.join(HERE, "promote_tables", "%s_table.csv" % stem))
    stored_grid = [[r[0]] + r[1:] for r in rows[1:]]
    live_grid = [[labels[i]] + grid[i] for i in range(len(labels))]
    report(rows[0][1:] == labels and stored_grid == live_grid,
           "%s_table.csv matches the live %s" % (stem, source), "the checked-in table is stale")
    stored = [tuple(r) for r in read_csv(os.path.join(HERE, "promote_tables",
                                                      "%s_ranked.csv" % stem))]
    report(stored == [tuple(x) for x in ranked], "%s_ranked.csv matches the live %s"
           % (stem, source), "the checked-in table is stale")


def main():
    lib_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "build",
                                                                   "libdtcast.so")
    lib = load_library(lib_path)
    for rules, make in generate.SYSTEMS:
        try:
            labels, grid, ranked, source = make()
        except ImportError as e:
            print("SKIP %s promotion tables: %s is not installed (%s)" % (rules, rules, e))
            continue
        compare(rules, lib, labels, grid, ranked, source)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
