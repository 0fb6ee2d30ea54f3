#!/usr/bin/env python3
"""A synthetic ONNX model with its weights in one external data file, for bench/onnx_model.sh:
LAYERS MatMul + Add + Relu layers of float32 weights [D, D] and biases [D], the data written
straight to DIR/model.onnx.data (nothing held in memory but one layer), the graph to
DIR/model.onnx with external_data entries (location, offset, length).

    bench/make_onnx_model.py DIR [--gib 3] [--dim 8192]"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("dir")
    ap.add_argument("--gib", type=float, default=3)
    ap.add_argument("--dim", type=int, default=8192)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    d = a.dim
    layers = max(1, int(round(a.gib * (1 << 30) / (4 * d * d))))
    rng = np.random.default_rng(0)
    inits, nodes, offset = [], [], 0
    with open(os.path.join(a.dir, "model.onnx.data"), "wb") as f:
        for i in range(layers):
            for name, shape in (("w%d" % i, (d, d)), ("b%d" % i, (d,))):
                x = (rng.standard_normal(shape, dtype=np.float32) * 0.02)
                f.write(x.tobytes())
                t = h.make_tensor_value_info(name, TP.FLOAT, shape)  # placeholder for dims
                tp = onnx.TensorProto(name=name, data_type=TP.FLOAT, dims=list(shape),
                                      data_location=TP.EXTERNAL)
                for k, v in (("location", "model.onnx.data"), ("offset", str(offset)),
                             ("length", str(x.nbytes))):
                    tp.external_data.add(key=k, value=v)
                offset += x.nbytes
                inits.append(tp)
                del t
            src = "x" if i == 0 else "r%d" % (i - 1)
            nodes += [h.make_node("MatMul", [src, "w%d" % i], ["m%d" % i]),
                      h.make_node("Add", ["m%d" % i, "b%d" % i], ["a%d" % i]),
                      h.make_node("Relu", ["a%d" % i], ["r%d" % i])]
    g = h.make_graph(nodes, "big", [h.make_tensor_value_info("x", TP.FLOAT, [1, d])],
                     [h.make_tensor_value_info("r%d" % (layers - 1), TP.FLOAT, [1, d])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, os.path.join(a.dir, "model.onnx"))
    print("%s: %d layers of [%d, %d], %.2f GiB of weights" % (a.dir, layers, d, d,
                                                             offset / (1 << 30)))


if __name__ == "__main__":
    main()
