#!/usr/bin/env python3
"""Regenerates onnx/node/ from ONNX's own backend test generator.

    python3 tests/conformance/generate.py [--output DIR] [--check]

ONNX stopped shipping the generated node test files; it keeps the generator, the Python code in
onnx.backend.test.case.node (one export_* function per test, each calling expect() with a node,
its inputs and the expected outputs computed with numpy and ml_dtypes). This script runs that
generator (onnx.backend.test.case.node.collect_testcases), keeps the tests of the operators dtcast
runs, and writes each one as ONNX's `cmd_tools generate-data` writes node tests: model.onnx and
test_data_set_N/input_K.pb, output_K.pb (TensorProto, numpy_helper.from_array).

Kept: every test whose model is one node of Cast, CastLike, QuantizeLinear, DequantizeLinear,
DynamicQuantizeLinear or BitCast, and the `_expanded` variants of those tests (the operator's
function body as a graph). The default output is onnx/node/ beside this script; the directories
of the kept tests are replaced, other directories there are left alone. --check writes nothing
and exits 1 when a kept test's files differ from the ones on disk (or are missing).

The expected values depend on the onnx, numpy and ml_dtypes versions the generator runs on (for
instance float -> int4 out of range: ml_dtypes 0.5 wraps, 0.7 gives 0), so the versions are
printed and belong in README.md next to the data.
"""
import argparse
import os
import shutil
import sys
import warnings

OPS = ("Cast", "CastLike", "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear",
       "BitCast")


def selected(cases):
    """The test cases of OPS: single-node tests and their _expanded function bodies."""
    base = set()
    for c in cases:
        if c.kind != "node" or c.model is None:
            continue
        nodes = c.model.graph.node
        if len(nodes) == 1 and nodes[0].op_type in OPS:
            base.add(c.name)
    out = []
    for c in cases:
        if c.kind != "node" or c.model is None:
            continue
        if c.name in base or any(c.name.startswith(b + "_expanded") for b in base):
            out.append(c)
    return sorted(out, key=lambda c: c.name)


def tensor_bytes(value, name):
    from onnx import TensorProto, numpy_helper
    if isinstance(value, TensorProto):
        return value.SerializeToString()
    return numpy_helper.from_array(value, name).SerializeToString()


def files_of(case):
    """{relative path: bytes} of one test directory, as cmd_tools generate-data writes it."""
    files = {"model.onnx": case.model.SerializeToString()}
    graph = case.model.graph
    for i, (inputs, outputs) in enumerate(case.data_sets):
        d = "test_data_set_%d" % i
        for j, value in enumerate(inputs):
            if not graph.input[j].type.HasField("tensor_type"):
                raise SystemExit("%s: input %d is not a tensor" % (case.name, j))
            files[d + "/input_%d.pb" % j] = tensor_bytes(value, graph.input[j].name)
        for j, value in enumerate(outputs):
            if not graph.output[j].type.HasField("tensor_type"):
                raise SystemExit("%s: output %d is not a tensor" % (case.name, j))
            files[d + "/output_%d.pb" % j] = tensor_bytes(value, graph.output[j].name)
    return files


def on_disk(directory):
    found = {}
    for root, _, names in os.walk(directory):
        for n in names:
            path = os.path.join(root, n)
            with open(path, "rb") as f:
                found[os.path.relpath(path, directory)] = f.read()
    return found


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--output", default=os.path.join(here, "onnx", "node"))
    ap.add_argument("--check", action="store_true",
                    help="compare with the files on disk instead of writing")
    args = ap.parse_args()

    import ml_dtypes
    import numpy
    import onnx
    import onnx.backend.test.case.node as node_tests

    print("onnx %s, numpy %s, ml_dtypes %s" % (onnx.__version__, numpy.__version__,
                                                ml_dtypes.__version__))
    with warnings.catch_warnings():
        # the generator casts NaN and out-of-range floats to integers on purpose
        warnings.simplefilter("ignore", RuntimeWarning)
        cases = selected(node_tests.collect_testcases())
    differ = 0
    for case in cases:
        files = files_of(case)
        target = os.path.join(args.output, case.name)
        if args.check:
            if on_disk(target) != files:
                print("differs: %s" % case.name)
                differ += 1
            continue
        if os.path.exists(target):
            shutil.rmtree(target)
        for rel, data in files.items():
            path = os.path.join(target, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
    counts = {}
    ops = {c.name: c.model.graph.node[0].op_type for c in cases if "_expanded" not in c.name}
    for case in cases:
        op = ops[case.name.split("_expanded")[0]]
        op += " expanded" if "_expanded" in case.name else ""
        counts[op] = counts.get(op, 0) + 1
    print("%d tests (%s)%s" % (len(cases), ", ".join("%s %d" % kv for kv in sorted(counts.items())),
                                "" if args.check else " written to " + args.output))
    if args.check and differ:
        print("%d tests differ from the generator's output" % differ)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
