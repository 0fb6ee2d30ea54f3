#!/usr/bin/env python3
"""dtcast onnx-run on the ONNX Q/DQ and BitCast node tests: every non-expanded test directory's model and
inputs are run, and each output_K.pb written is compared with the expected one value for value
(element codes after unpacking, data type, shape and name): the expected files keep some types
in int32_data where dtcast writes raw_data, so the bytes of the files may differ while the
values are the same. Also: a function-body model is refused with the reason, a missing --out is
a usage error, and a bad input leaves no output behind.

    python3 tests/test_onnx_run_cli.py build/libdtcast.so

The TensorProto reader below is written from onnx.proto alone (it shares no code with dtcast).
"""
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_util import check, failures, program, runner  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
NODE = os.path.join(HERE, "conformance", "onnx", "node")

# TensorProto.DataType -> bits per element as ONNX packs them
BITS = {1: 32, 2: 8, 3: 8, 4: 16, 5: 16, 6: 32, 7: 64, 9: 8, 10: 16, 11: 64, 12: 32, 13: 64, 16: 16,
        17: 8, 18: 8, 19: 8, 20: 8, 21: 4, 22: 4, 23: 4, 24: 8, 25: 2, 26: 2}


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field number, wire type, value) of a protobuf message."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        else:
            raise ValueError("wire type %d" % wt)
        yield f, wt, v


def packed_varints(v):
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def read_tensor(path):
    """(data_type, dims, name, element codes) of a TensorProto file."""
    dims, dtype, name, raw, ints = [], 0, "", None, []
    with open(path, "rb") as fh:
        b = fh.read()
    for f, wt, v in fields(b):
        if f == 1:
            dims += packed_varints(v) if wt == 2 else [v]
        elif f == 2:
            dtype = v
        elif f == 8:
            name = v.decode()
        elif f == 9:
            raw = bytes(v)
        elif f == 5:  # int32_data: one value per element (sub-byte types: packed bytes)
            ints += packed_varints(v) if wt == 2 else [v]
        elif f == 4:  # float_data
            vals = [v[k:k + 4] for k in range(0, len(v), 4)] if wt == 2 else [v]
            ints += [struct.unpack("<I", x)[0] for x in vals]
    count = 1
    for d in dims:
        count *= d
    bits = BITS[dtype]
    mask = (1 << bits) - 1
    if raw is not None:
        acc = int.from_bytes(raw, "little")
        codes = [(acc >> (bits * k)) & mask for k in range(count)]
    elif bits < 8:
        # sub-byte types in int32_data hold packed bytes
        acc = 0
        for k, x in enumerate(ints):
            acc |= (x & 0xFF) << (8 * k)
        codes = [(acc >> (bits * k)) & mask for k in range(count)]
    else:
        codes = [x & mask for x in ints]
    return dtype, dims, name, codes


def main():
    lib = sys.argv[1] if len(sys.argv) > 1 else "build/libdtcast.so"
    run = runner(program(lib))
    tests = sorted(d for d in os.listdir(NODE) if "quantizelinear" in d or "bitcast" in d) \
        if os.path.isdir(NODE) else []
    if not tests:
        print("SKIP test_onnx_run_cli: no Q/DQ tests in %s" % NODE)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        for t in tests:
            d = os.path.join(NODE, t)
            sets = os.path.join(d, "test_data_set_0")
            inputs = sorted(f for f in os.listdir(sets) if f.startswith("input_"))
            expected = sorted(f for f in os.listdir(sets) if f.startswith("output_"))
            out = os.path.join(tmp, t)
            status, _, err = run("onnx-run", os.path.join(d, "model.onnx"),
                                 *[os.path.join(sets, f) for f in inputs], "--out", out)
            if t.endswith("_expanded"):
                check(status == 1 and "function body" in err and not os.path.exists(out),
                      "onnx_run_refuses_" + t, "exit %d: %s" % (status, err))
                continue
            if not check(status == 0, "onnx_run_" + t, "exit %d: %s" % (status, err)):
                continue
            for f in expected:
                want = read_tensor(os.path.join(sets, f))
                got = read_tensor(os.path.join(out, f))
                check(got == want, "onnx_run_%s_%s" % (t, f[:-3]),
                      "got %s, expected %s" % (got, want))
        # usage and errors
        q = os.path.join(NODE, "test_quantizelinear")
        qin = [os.path.join(q, "test_data_set_0", f) for f in ("input_0.pb", "input_1.pb")]
        status, _, err = run("onnx-run", os.path.join(q, "model.onnx"), *qin)
        check(status == 2 and "--out" in err, "onnx_run_needs_out", "exit %d: %s" % (status, err))
        bad = os.path.join(tmp, "bad")
        status, _, err = run("onnx-run", os.path.join(q, "model.onnx"), qin[0], qin[0], "--out", bad)
        check(status == 1 and not os.path.exists(os.path.join(bad, "output_0.pb")),
              "onnx_run_bad_input_writes_nothing", "exit %d: %s" % (status, err))
        status, out, _ = run("onnx-run", "--help")
        check(status == 0 and "--out" in out, "onnx_run_help")
    return 1 if failures() else 0


if __name__ == "__main__":
    sys.exit(main())
