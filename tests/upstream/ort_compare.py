"""make check-upstream, part 3: ONNX Runtime on the node tests onnx's generator wrote.

    python ort_compare.py DTCAST NODE_DIR...

Runs each test's model in onnxruntime (CPU) and through `dtcast onnx-run`, on the test's own
inputs, and compares the outputs bit for bit (NaN equal to NaN). Prints one line per test that
differs or that onnxruntime refuses, then a summary. ONNX Runtime is a peer, not the reference
(onnx's expected outputs are, and onnx-test checks them): this part informs and never fails.
"""

import ctypes
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper


def load(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


def codes(t):
    """A TensorProto's elements as bytes of its raw layout (what a bit comparison needs)."""
    if t.raw_data:
        return bytes(t.raw_data)
    return numpy_helper.to_array(t).tobytes()


def ort_value(ort, t):
    """A TensorProto as an OrtValue made from its raw bytes (numpy cannot carry float8, int4 or
    float4 into onnxruntime's Python binding)."""
    a = numpy_helper.to_array(t)
    if a.dtype.kind in "biufcUO" and a.dtype.type.__module__ == "numpy":
        return ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(a))
    raw = codes(t) if t.raw_data else bytes(numpy_helper.from_array(a).raw_data)
    ov = ort.OrtValue.ortvalue_from_shape_and_type(list(t.dims), t.data_type)
    if ov.tensor_size_in_bytes() != len(raw):
        raise ValueError(f"{len(raw)} bytes for {ov.tensor_size_in_bytes()}")
    ctypes.memmove(ov.data_ptr(), raw, len(raw))
    return ov


def ort_bytes(ov):
    return ctypes.string_at(ov.data_ptr(), ov.tensor_size_in_bytes())


def same(mine, theirs, elem):
    """dtcast's output TensorProto against onnxruntime's OrtValue's bytes: equal bytes, or equal
    values with NaN equal to NaN."""
    a = codes(mine)
    if a == theirs:
        return True
    try:
        x = numpy_helper.to_array(mine)
        y = np.frombuffer(theirs, x.dtype).reshape(x.shape)
        xf, yf = x.astype(np.float64), y.astype(np.float64)
        return bool(np.all((xf == yf) | (np.isnan(xf) & np.isnan(yf))))
    except Exception:  # noqa: BLE001
        return False


def main():
    import onnxruntime as ort

    dtcast, dirs = sys.argv[1], sys.argv[2:]
    ran = agree = differ = refused = 0
    for d in sorted(dirs):
        name = os.path.basename(os.path.normpath(d))
        data = os.path.join(d, "test_data_set_0")
        model = os.path.join(d, "model.onnx")
        inputs = sorted(f for f in os.listdir(data) if f.startswith("input_"))
        try:
            m = onnx.load(model)
            sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
            feed = {}
            for i, f in enumerate(inputs):
                feed[sess.get_inputs()[i].name] = ort_value(ort, load(os.path.join(data, f)))
            names = [o.name for o in sess.get_outputs()]
            outs = [ort_bytes(v) for v in sess.run_with_ort_values(names, feed)]
        except Exception as e:  # noqa: BLE001 (ORT's errors have many types)
            refused += 1
            print(f"  onnxruntime refuses {name}: {str(e).splitlines()[0][:150]}")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            r = subprocess.run([dtcast, "onnx-run", model] + [os.path.join(data, f) for f in inputs]
                               + ["--out", tmp], capture_output=True, text=True)
            if r.returncode != 0:
                print(f"  dtcast onnx-run refuses {name}: {r.stderr.strip()[:150]}")
                continue
            ran += 1
            ok = True
            for k, o in enumerate(outs):
                mine = load(os.path.join(tmp, f"output_{k}.pb"))
                if not same(mine, o, mine.data_type):
                    ok = False
            if ok:
                agree += 1
            else:
                differ += 1
                print(f"  onnxruntime differs from dtcast: {name}")
    print(f"onnxruntime {ort.__version__}: {ran} node tests run by both, {agree} identical, "
          f"{differ} different, {refused} refused by onnxruntime (informative, not failed)")


if __name__ == "__main__":
    main()
