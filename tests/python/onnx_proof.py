"""The proof of dtcast.onnx.convert_model's ONNX conversions: models that break the usual float16
converters, a checker/runner for converted models, the two reference converters, and a table.

    .venv/bin/python tests/python/onnx_proof.py [--keep-io-types] [--runtime R] [--out DIR]

Every model here is float32 at its inputs and outputs (half_fp16 also has a float16 input),
small (tensors of a few hundred elements, every weight of >= 16 elements so that dtcast's
weights mode converts it), deterministic (numpy RandomState), valid
(onnx.checker.check_model(full_check=True)) and runnable in onnxruntime's CPU session. Each
one holds a construct that a float16 graph converter has got wrong:

- resize_11, resize_13, resize_18, resize_19: Resize after a Conv or Mul with float weights; its
  roi (float, T2) and scales (float only) are initializers where the opset has them, and
  resize_18 also has a sizes (int64) Resize, with axes and antialias;
- cast_to_float: Cast(to=FLOAT) from an int64 input, from a double intermediate and from float
  tensors (no-op Casts), feeding float math;
- random_normal_like: RandomNormalLike without dtype (the output follows the input's type) and
  with dtype=FLOAT, added to float data (those outputs are compared by shape, type and finiteness
  only), and a deterministic output beside them;
- shared_initializer: one float weight read by a MatMul, by CumSum (opset 13: CumSum-11 has no
  float16) and by a MatMul the caller blocks by name (BLOCK_NODES); a scalar read by Range (float16
  in no opset) and by a Mul;
- if_outer_scope, loop_outer_scope: bodies that read float32 tensors of the outer graph, have
  their own initializers, and (Loop) carry a float32 state and a scan output;
- no_value_info: MatMul, Celu (float only in every opset), CumSum, Mul, with no value_info;
- optional_empty_inputs: Clip with an empty min, Clip with an empty max, Resize-13 with an empty
  roi;
- half_fp16: a float16 input and float16 weights, a Cast to FLOAT, then float32 ops;
- cnn, transformer: tests/data/onnx/*.onnx, exported from torch by onnx_proof_export.py.

``check`` validates and runs a converted model against its float32 original; ``converters``
gives onnxconverter-common's and onnxruntime's convert_float_to_float16; ``initializer_bytes``
the bytes to compare with them; ``main`` prints the table. No pytest here; the tests are
test_onnx_graph.py.
"""
import argparse
import copy
import ctypes
import hashlib
import os
import sys
import tempfile
import warnings

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(REPO, "tests", "data", "onnx")

TARGETS = ("float16", "bfloat16")
MODES = ("weights", "graph")
# the dtcast profile that gives a reference converter's initializer values
PROFILES = {"onnxconverter-common": "onnxconverter-common", "ort-float16": "ort-float16"}
RANDOM_OPS = {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike",
              "Multinomial", "Bernoulli"}
SYMBOLIC_DIM = 2  # a graph input's symbolic (or unknown) dimension is fed with this size

# Tolerances (rtol, atol) of a converted model's outputs against the float32 model's, by target
# and mode, for the tests and the table; test_onnx_graph.py gives the reasons (the models' value
# ranges and the measured errors).
TOLERANCES = {
    ("float16", "weights"): (5e-3, 5e-3),
    ("bfloat16", "weights"): (2e-2, 3e-2),
    ("float16", "graph"): (1e-2, 2e-2),
    ("bfloat16", "graph"): (5e-2, 1e-1),
}


# ---- the models ---------------------------------------------------------------------------------

def _rs(seed):
    return np.random.RandomState(seed)


def _w(rs, *shape, fan_in=None):
    """A float32 weight, N(0, 1/fan_in): each layer keeps unit-size activations."""
    fan_in = fan_in or shape[0]
    return (rs.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def _vi(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


def _name_nodes(g, prefix=""):
    """Every node without a name gets "<graph>/<op>_<index>", in subgraphs too, as exporters
    name them. (onnxconverter-common names its Casts after the nodes they serve: unnamed nodes
    give two Casts one output name, an invalid graph, whatever the construct under test.)"""
    for i, n in enumerate(g.node):
        if not n.name:
            n.name = "%s%s_%d" % (prefix, n.op_type, i)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                _name_nodes(a.g, prefix + a.g.name + "/")
            for sg in a.graphs:
                _name_nodes(sg, prefix + sg.name + "/")


def _model(nodes, inputs, outputs, inits, opset, value_info=(), name="g"):
    g = h.make_graph(nodes, name, inputs, outputs, inits, value_info=list(value_info))
    _name_nodes(g)
    ops = [h.make_opsetid("", opset)]
    m = h.make_model(g, opset_imports=ops, producer_name="dtcast-onnx-proof")
    m.ir_version = h.find_min_ir_version_for(ops)
    onnx.checker.check_model(m, full_check=True)
    return m


def _resize_conv(rs):
    """x [1,3,8,8] -> Conv (4x3x3x3 weights, bias) -> c [1,4,8,8]."""
    inits = [nh.from_array(_w(rs, 4, 3, 3, 3, fan_in=27), "Wc"),
             nh.from_array(_w(rs, 4, fan_in=4) * 0.1, "Bc")]
    return [h.make_node("Conv", ["x", "Wc", "Bc"], ["c"], pads=[1, 1, 1, 1])], inits


def resize_11():
    """Conv -> Resize-11 (tf_crop_and_resize: the roi initializer matters; linear; scales 1.5)
    -> Mul by a 12x12 weight. Resize-11's roi is T2 (float16 allowed), its scales float only."""
    rs = _rs(11)
    nodes, inits = _resize_conv(rs)
    nodes += [h.make_node("Resize", ["c", "roi", "scales"], ["r"], mode="linear",
                          coordinate_transformation_mode="tf_crop_and_resize",
                          extrapolation_value=0.0),
              h.make_node("Mul", ["r", "Wm"], ["y"])]
    inits += [nh.from_array(np.array([0, 0, 0.1, 0.1, 1, 1, 0.9, 0.9], np.float32), "roi"),
              nh.from_array(np.array([1, 1, 1.5, 1.5], np.float32), "scales"),
              nh.from_array(1 + 0.1 * rs.standard_normal((12, 12)).astype(np.float32), "Wm")]
    return _model(nodes, [_vi("x", TP.FLOAT, [1, 3, 8, 8])], [_vi("y", TP.FLOAT, [1, 4, 12, 12])],
                  inits, 11)


def resize_13():
    """Mul by a 6x6 weight -> Resize-13 (cubic, tf_crop_and_resize with a roi initializer,
    scales 2) -> Add a 12x12 bias."""
    rs = _rs(13)
    nodes = [h.make_node("Mul", ["x", "Wm"], ["m"]),
             h.make_node("Resize", ["m", "roi", "scales"], ["r"], mode="cubic",
                         coordinate_transformation_mode="tf_crop_and_resize",
                         cubic_coeff_a=-0.5),
             h.make_node("Add", ["r", "B"], ["y"])]
    inits = [nh.from_array(1 + 0.1 * rs.standard_normal((6, 6)).astype(np.float32), "Wm"),
             nh.from_array(np.array([0, 0, 0.05, 0.05, 1, 1, 0.95, 0.95], np.float32), "roi"),
             nh.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
             nh.from_array(0.1 * rs.standard_normal((12, 12)).astype(np.float32), "B")]
    # small: onnx's ReferenceEvaluator (bfloat16 graph mode's runner) interpolates cubic in Python
    return _model(nodes, [_vi("x", TP.FLOAT, [1, 1, 6, 6])], [_vi("y", TP.FLOAT, [1, 1, 12, 12])],
                  inits, 13)


def resize_18():
    """Conv -> two Resize-18 with axes=[2,3] and antialias (downsampling by 2, linear): one by
    scales (a 2-element float initializer, roi empty), one by sizes (int64, keep_aspect_ratio
    not_larger) -> Add -> Mul by a 4x4 weight."""
    rs = _rs(18)
    nodes, inits = _resize_conv(rs)
    nodes += [h.make_node("Resize", ["c", "", "scales"], ["r1"], mode="linear", antialias=1,
                          axes=[2, 3]),
              h.make_node("Resize", ["c", "", "", "sizes"], ["r2"], mode="linear", antialias=1,
                          axes=[2, 3], keep_aspect_ratio_policy="not_larger"),
              h.make_node("Add", ["r1", "r2"], ["a"]),
              h.make_node("Mul", ["a", "Wm"], ["y"])]
    inits += [nh.from_array(np.array([0.5, 0.5], np.float32), "scales"),
              nh.from_array(np.array([4, 4], np.int64), "sizes"),
              nh.from_array(1 + 0.1 * rs.standard_normal((4, 4)).astype(np.float32), "Wm")]
    return _model(nodes, [_vi("x", TP.FLOAT, [1, 3, 8, 8])], [_vi("y", TP.FLOAT, [1, 4, 4, 4])],
                  inits, 18)


def resize_19():
    """Mul by an 8x8 weight -> Resize-19 (linear, half_pixel_symmetric, the opset's new mode;
    empty roi, scales 1.5) -> Add a bias."""
    rs = _rs(19)
    nodes = [h.make_node("Mul", ["x", "Wm"], ["m"]),
             h.make_node("Resize", ["m", "", "scales"], ["r"], mode="linear",
                         coordinate_transformation_mode="half_pixel_symmetric"),
             h.make_node("Add", ["r", "B"], ["y"])]
    inits = [nh.from_array(1 + 0.1 * rs.standard_normal((8, 8)).astype(np.float32), "Wm"),
             nh.from_array(np.array([1, 1, 1.5, 1.5], np.float32), "scales"),
             nh.from_array(0.1 * rs.standard_normal((12, 12)).astype(np.float32), "B")]
    return _model(nodes, [_vi("x", TP.FLOAT, [1, 2, 8, 8])], [_vi("y", TP.FLOAT, [1, 2, 12, 12])],
                  inits, 19)


def cast_to_float():
    """Cast(to=FLOAT) of an int64 input (times a weight), of a double intermediate (a round
    trip), and of float tensors (no-op Casts of an input and of an intermediate), all feeding
    float math. (No float16 here: onnxconverter-common refuses any model with a Cast to FLOAT16
    as "already converted"; half_fp16 has that.)"""
    rs = _rs(1)
    nodes = [h.make_node("Cast", ["k"], ["kf"], to=TP.FLOAT),
             h.make_node("Mul", ["kf", "Wk"], ["km"]),
             h.make_node("Add", ["x", "km"], ["a"]),
             h.make_node("MatMul", ["a", "W"], ["m"]),
             h.make_node("Cast", ["m"], ["md"], to=TP.DOUBLE),
             h.make_node("Cast", ["md"], ["mf"], to=TP.FLOAT),
             h.make_node("Cast", ["x"], ["xf"], to=TP.FLOAT),
             h.make_node("Cast", ["mf"], ["mff"], to=TP.FLOAT),
             h.make_node("Add", ["mff", "xf"], ["s"]),
             h.make_node("MatMul", ["s", "W2"], ["y"])]
    inits = [nh.from_array(_w(rs, 16, fan_in=9), "Wk"), nh.from_array(_w(rs, 16, 16), "W"),
             nh.from_array(_w(rs, 16, 16), "W2")]
    return _model(nodes, [_vi("x", TP.FLOAT, [4, 16]), _vi("k", TP.INT64, [4, 16])],
                  [_vi("y", TP.FLOAT, [4, 16])], inits, 13)


def random_normal_like():
    """RandomNormalLike without dtype (its output takes the input's type: float16 when the input
    becomes float16) and with dtype=FLOAT (a converter that rewrites the attribute, or does not,
    decides the output's type), each added to float data; plus y, a deterministic MatMul."""
    rs = _rs(2)
    nodes = [h.make_node("MatMul", ["x", "W"], ["y"]),
             h.make_node("RandomNormalLike", ["y"], ["n1"], scale=0.1),
             h.make_node("Add", ["y", "n1"], ["r1"]),
             h.make_node("Mul", ["x", "W2"], ["m2"]),
             h.make_node("RandomNormalLike", ["m2"], ["n2"], dtype=TP.FLOAT, mean=1.0, scale=0.1),
             h.make_node("Add", ["m2", "n2"], ["r2"])]
    inits = [nh.from_array(_w(rs, 16, 16), "W"), nh.from_array(_w(rs, 4, 16, fan_in=1), "W2")]
    return _model(nodes, [_vi("x", TP.FLOAT, [4, 16])],
                  [_vi("y", TP.FLOAT, [4, 16]), _vi("r1", TP.FLOAT, [4, 16]),
                   _vi("r2", TP.FLOAT, [4, 16])], inits, 13)


def shared_initializer():
    """W (16x16) read by a MatMul, by CumSum (opset 13: CumSum-11, no float16; x @ (cumsum(W) / 4)
    is added) and by the MatMul named "blocked_matmul" that the caller blocks (BLOCK_NODES); the
    scalar `step` read by Range (no float16 in any opset) as its delta and by a Mul."""
    rs = _rs(3)
    nodes = [h.make_node("MatMul", ["x", "W"], ["m"]),
             h.make_node("CumSum", ["W", "axis"], ["c"]),
             h.make_node("Mul", ["c", "quarter"], ["cq"]),
             h.make_node("MatMul", ["x", "cq"], ["xc"]),
             h.make_node("Add", ["m", "xc"], ["a"]),
             h.make_node("Range", ["start", "limit", "step"], ["rg"]),
             h.make_node("Mul", ["rg", "step"], ["rs"]),
             h.make_node("Mul", ["rs", "hundredth"], ["rsc"]),
             h.make_node("Add", ["a", "rsc"], ["y"]),
             h.make_node("MatMul", ["m", "W"], ["z"], name="blocked_matmul")]
    inits = [nh.from_array(_w(rs, 16, 16), "W"), nh.from_array(np.array(0, np.int64), "axis"),
             nh.from_array(np.array(0.25, np.float32), "quarter"),
             nh.from_array(np.array(0.0, np.float32), "start"),
             nh.from_array(np.array(8.0, np.float32), "limit"),
             nh.from_array(np.array(0.5, np.float32), "step"),
             nh.from_array(np.array(0.01, np.float32), "hundredth")]
    return _model(nodes, [_vi("x", TP.FLOAT, [4, 16])],
                  [_vi("y", TP.FLOAT, [4, 16]), _vi("z", TP.FLOAT, [4, 16])], inits, 13)


def _if_bodies(rs, tag):
    then_g = h.make_graph(
        [h.make_node("MatMul", ["h", "Wt" + tag], ["tm" + tag]),
         h.make_node("Add", ["tm" + tag, "Bt" + tag], ["t_out" + tag])],
        "then" + tag, [], [_vi("t_out" + tag, TP.FLOAT, [4, 16])],
        [nh.from_array(_w(rs, 16, 16), "Wt" + tag),
         nh.from_array(0.1 * rs.standard_normal(16).astype(np.float32), "Bt" + tag)])
    else_g = h.make_graph(
        [h.make_node("Sigmoid", ["h"], ["es" + tag]),
         h.make_node("Mul", ["es" + tag, "We" + tag], ["e_out" + tag])],
        "else" + tag, [], [_vi("e_out" + tag, TP.FLOAT, [4, 16])],
        [nh.from_array(1 + 0.1 * rs.standard_normal((4, 16)).astype(np.float32), "We" + tag)])
    return then_g, else_g


def if_outer_scope():
    """h = Relu(x @ W) in the main graph; two If nodes whose branches read h from the outer
    scope (then: MatMul + Add with the branch's own initializers; else: Sigmoid * a weight).
    The conditions come from the data (sum(x*x) > 0 is true, < 0 false): both branches run."""
    rs = _rs(4)
    t1, e1 = _if_bodies(rs, "_1")
    t2, e2 = _if_bodies(rs, "_2")
    nodes = [h.make_node("MatMul", ["x", "W"], ["hm"]),
             h.make_node("Relu", ["hm"], ["h"]),
             h.make_node("Mul", ["x", "x"], ["xx"]),
             h.make_node("ReduceSum", ["xx"], ["ss"], keepdims=0),
             h.make_node("Greater", ["ss", "zero"], ["c_true"]),
             h.make_node("Less", ["ss", "zero"], ["c_false"]),
             h.make_node("If", ["c_true"], ["y1"], then_branch=t1, else_branch=e1),
             h.make_node("If", ["c_false"], ["y2"], then_branch=t2, else_branch=e2)]
    inits = [nh.from_array(_w(rs, 16, 16), "W"), nh.from_array(np.array(0, np.float32), "zero")]
    return _model(nodes, [_vi("x", TP.FLOAT, [4, 16])],
                  [_vi("y1", TP.FLOAT, [4, 16]), _vi("y2", TP.FLOAT, [4, 16])], inits, 13)


def loop_outer_scope():
    """u = Tanh(x @ W) in the main graph; a Loop of 3 iterations carries the float32 state
    s (from x): s = Tanh(s @ Wb + u), Wb the body's own initializer, u read from the outer
    scope; outputs the final state and each iteration's column means (a scan output, 3x16).
    (The condition is given and the scan output 1-D: onnx 1.23's ReferenceEvaluator, the
    fallback runner of bfloat16 models, never enters a Loop whose condition is "" and
    concatenates 2-D scan outputs instead of stacking them.)"""
    rs = _rs(5)
    body = h.make_graph(
        [h.make_node("Identity", ["cond_in"], ["cond_out"]),
         h.make_node("MatMul", ["s_in", "Wb"], ["bm"]),
         h.make_node("Add", ["bm", "u"], ["ba"]),
         h.make_node("Tanh", ["ba"], ["s_out"]),
         h.make_node("ReduceMean", ["s_out"], ["scan_out"], axes=[0], keepdims=0)],
        "body", [_vi("i", TP.INT64, []), _vi("cond_in", TP.BOOL, []),
                 _vi("s_in", TP.FLOAT, [4, 16])],
        [_vi("cond_out", TP.BOOL, []), _vi("s_out", TP.FLOAT, [4, 16]),
         _vi("scan_out", TP.FLOAT, [16])],
        [nh.from_array(_w(rs, 16, 16), "Wb")])
    nodes = [h.make_node("MatMul", ["x", "W"], ["um"]),
             h.make_node("Tanh", ["um"], ["u"]),
             h.make_node("Loop", ["trips", "go", "x"], ["s", "scan"], body=body)]
    inits = [nh.from_array(_w(rs, 16, 16), "W"), nh.from_array(np.array(3, np.int64), "trips"),
             nh.from_array(np.array(True), "go")]
    return _model(nodes, [_vi("x", TP.FLOAT, [4, 16])],
                  [_vi("s", TP.FLOAT, [4, 16]), _vi("scan", TP.FLOAT, [3, 16])], inits, 13)


def no_value_info():
    """x @ W1 + B1 -> Celu (float only, every opset) -> @ W2 -> CumSum (no float16 at opset 13)
    -> * W3: no value_info at all (only the graph input and output are typed)."""
    rs = _rs(6)
    nodes = [h.make_node("MatMul", ["x", "W1"], ["m1"]),
             h.make_node("Add", ["m1", "B1"], ["a1"]),
             h.make_node("Celu", ["a1"], ["c1"], alpha=1.0),
             h.make_node("MatMul", ["c1", "W2"], ["m2"]),
             h.make_node("CumSum", ["m2", "axis"], ["cs"]),
             h.make_node("Mul", ["cs", "W3"], ["y"])]
    inits = [nh.from_array(_w(rs, 16, 16), "W1"),
             nh.from_array(0.1 * rs.standard_normal(16).astype(np.float32), "B1"),
             nh.from_array(_w(rs, 16, 16), "W2"), nh.from_array(np.array(1, np.int64), "axis"),
             nh.from_array(0.5 + 0.1 * rs.standard_normal((4, 16)).astype(np.float32), "W3")]
    return _model(nodes, [_vi("x", TP.FLOAT, [4, 16])], [_vi("y", TP.FLOAT, [4, 16])], inits, 13)


def optional_empty_inputs():
    """x * W -> Clip(., "", 0.5) and Clip(., -0.25, "") (the empty name is an absent optional
    input) -> Add -> Resize-13 with an empty roi, scales 2 (nearest)."""
    rs = _rs(7)
    nodes = [h.make_node("Mul", ["x", "W"], ["m"]),
             h.make_node("Clip", ["m", "", "hi"], ["c1"]),
             h.make_node("Clip", ["m", "lo"], ["c2"]),
             h.make_node("Add", ["c1", "c2"], ["a"]),
             h.make_node("Resize", ["a", "", "scales"], ["y"], mode="nearest")]
    inits = [nh.from_array(1 + 0.5 * rs.standard_normal((4, 8)).astype(np.float32), "W"),
             nh.from_array(np.array(0.5, np.float32), "hi"),
             nh.from_array(np.array(-0.25, np.float32), "lo"),
             nh.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]
    return _model(nodes, [_vi("x", TP.FLOAT, [1, 2, 4, 8])], [_vi("y", TP.FLOAT, [1, 2, 8, 16])],
                  inits, 13)


def half_fp16():
    """Already partly float16: x16 (float16 input) @ W16 (float16 weight), Cast to FLOAT, + x
    (float32 input), @ W (float32), + B, Relu."""
    rs = _rs(8)
    nodes = [h.make_node("MatMul", ["x16", "W16"], ["m16"]),
             h.make_node("Cast", ["m16"], ["mf"], to=TP.FLOAT),
             h.make_node("Add", ["mf", "x"], ["a"]),
             h.make_node("MatMul", ["a", "W"], ["b"]),
             h.make_node("Add", ["b", "B"], ["bb"]),
             h.make_node("Relu", ["bb"], ["y"])]
    inits = [nh.from_array(_w(rs, 16, 16).astype(np.float16), "W16"),
             nh.from_array(_w(rs, 16, 16, fan_in=32), "W"),
             nh.from_array(0.1 * rs.standard_normal(16).astype(np.float32), "B")]
    return _model(nodes, [_vi("x16", TP.FLOAT16, [4, 16]), _vi("x", TP.FLOAT, [4, 16])],
                  [_vi("y", TP.FLOAT, [4, 16])], inits, 13)


MODELS = {
    "resize_11": resize_11, "resize_13": resize_13, "resize_18": resize_18,
    "resize_19": resize_19, "cast_to_float": cast_to_float,
    "random_normal_like": random_normal_like, "shared_initializer": shared_initializer,
    "if_outer_scope": if_outer_scope, "loop_outer_scope": loop_outer_scope,
    "no_value_info": no_value_info, "optional_empty_inputs": optional_empty_inputs,
    "half_fp16": half_fp16,
    "cnn": os.path.join(DATA, "cnn.onnx"), "transformer": os.path.join(DATA, "transformer.onnx"),
}
# the nodes the caller blocks by name (dtcast's block_nodes=, the converters' node_block_list=)
BLOCK_NODES = {"shared_initializer": ("blocked_matmul",)}


def load(name):
    """The float32 ModelProto of MODELS[name] (a new copy each call)."""
    src = MODELS[name]
    return onnx.load(src) if isinstance(src, str) else src()


def opset(model):
    return max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


# ---- checking a converted model -----------------------------------------------------------------

_NP = {TP.FLOAT: np.float32, TP.FLOAT16: np.float16, TP.DOUBLE: np.float64, TP.INT64: np.int64,
       TP.INT32: np.int32, TP.BOOL: np.bool_, TP.INT8: np.int8, TP.UINT8: np.uint8}


def _bfloat16():
    try:
        import ml_dtypes
    except ImportError:
        return None
    return ml_dtypes.bfloat16


def _as_model(m):
    """(ModelProto with external data loaded, path or None)."""
    if isinstance(m, onnx.ModelProto):
        return m, None
    return onnx.load(str(m)), str(m)


def _graph_inputs(model):
    inits = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def _np_type(elem):
    if elem == TP.BFLOAT16:
        bf = _bfloat16()
        if bf is None:
            raise _Skip("a bfloat16 input, and ml_dtypes is not installed")
        return bf
    if elem not in _NP:
        raise _Skip("an input of type %s" % TP.DataType.Name(elem))
    return _NP[elem]


class _Skip(Exception):
    pass


def feeds(reference):
    """Deterministic inputs for the float32 model: name -> numpy array of the reference's
    declared type (floats N(0, 1), integers in [-3, 3], booleans random), symbolic dimensions
    SYMBOLIC_DIM."""
    model, _ = _as_model(reference)
    rs = _rs(1234)
    out = {}
    for vi in _graph_inputs(model):
        tt = vi.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else SYMBOLIC_DIM
                 for d in tt.shape.dim]
        dt = _np_type(tt.elem_type)
        if np.issubdtype(np.dtype(dt), np.integer):
            out[vi.name] = rs.randint(-3, 4, size=shape).astype(dt)
        elif dt is np.bool_:
            out[vi.name] = rs.randint(0, 2, size=shape).astype(bool)
        else:
            out[vi.name] = rs.standard_normal(shape).astype(np.float32).astype(dt)
    return out


def _ort_value(arr):
    import onnxruntime as ort
    bf = _bfloat16()
    if bf is not None and arr.dtype == bf:
        return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(
            np.ascontiguousarray(arr).view(np.uint16), onnx_element_type=TP.BFLOAT16)
    return ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(arr))


def _from_ort_value(v):
    if v.data_type() == "tensor(bfloat16)":  # numpy() has no bfloat16: copy the bytes
        shape = v.shape()
        n = int(np.prod(shape, dtype=np.int64))
        raw = ctypes.string_at(v.data_ptr(), 2 * n) if n else b""
        return np.frombuffer(raw, np.uint16).view(_bfloat16()).reshape(shape).copy()
    return v.numpy()


def session(model_or_path):
    """An onnxruntime CPU InferenceSession (one thread, quiet)."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    src = model_or_path.SerializeToString() if isinstance(model_or_path, onnx.ModelProto) \
        else str(model_or_path)
    return ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])


def run_session(sess, inputs):
    """name -> numpy output (bfloat16 as ml_dtypes.bfloat16)."""
    names = [o.name for o in sess.get_outputs()]
    vals = sess.run_with_ort_values(names, {k: _ort_value(v) for k, v in inputs.items()})
    return dict(zip(names, (_from_ort_value(v) for v in vals)))


def _random_outputs(model):
    """The graph outputs that depend on a random op (one inside a subgraph counts)."""
    def has_random(graph):
        for n in graph.node:
            if n.op_type in RANDOM_OPS:
                return True
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH and has_random(a.g):
                    return True
                if any(has_random(g) for g in a.graphs):
                    return True
        return False

    producer = {o: n for n in model.graph.node for o in n.output}
    memo = {}

    def random(name):
        if name in memo:
            return memo[name]
        memo[name] = False
        n = producer.get(name)
        if n is None:
            return False
        r = n.op_type in RANDOM_OPS or any(
            (a.type == onnx.AttributeProto.GRAPH and has_random(a.g))
            or any(has_random(g) for g in a.graphs) for a in n.attribute)
        # a subgraph's outer-scope reads are inputs too; approximated by the node's inputs
        r = r or any(random(i) for i in n.input if i)
        memo[name] = r
        return r

    return {o.name for o in model.graph.output if random(o.name)}


_REF_CACHE = {}


def _reference(reference):
    """(feeds, outputs, random output names) of the float32 model, cached by its bytes."""
    model, path = _as_model(reference)
    key = hashlib.sha256(model.SerializeToString()).hexdigest()
    if key not in _REF_CACHE:
        inputs = feeds(model)
        outs = run_session(session(path or model), inputs)
        _REF_CACHE[key] = (inputs, outs, _random_outputs(model))
    return _REF_CACHE[key]


def _first_line(e):
    text = str(e).strip()
    line = text.splitlines()[0] if text else type(e).__name__
    return line


def _short_ort(e):
    """An onnxruntime error without its '[ONNXRuntimeError] : 9 : ' prefix numbers."""
    line = _first_line(e)
    if line.startswith("[ONNXRuntimeError]"):
        parts = line.split(" : ", 2)
        line = parts[-1] if len(parts) == 3 else line
    return line


def check(model_path_or_proto, reference_fp32_model, *, rtol, atol):
    """Is the converted model valid, does it run, and does it give the float32 model's outputs?

    ``valid``: onnx.checker.check_model(full_check=True) passes (``valid_error`` else).
    ``runs``: onnxruntime's CPU session loads it and runs the reference's inputs (each cast to
    the type the converted model declares); when onnxruntime cannot load a model that the
    checker passes, onnx's ReferenceEvaluator runs it instead (``runner`` says which;
    ``ort_error`` keeps onnxruntime's message). That is bfloat16's case: onnxruntime's CPU
    kernels lack most bfloat16 arithmetic (NOT_IMPLEMENTED), and where an op has an ONNX
    function body it expands that instead, into ops that may not take bfloat16 at the model's
    opset (Clip-13 in bfloat16 becomes Where-9: INVALID_GRAPH). Callers decide whether
    onnxruntime had to run it.
    ``max_abs``, ``max_rel``: the worst over the outputs compared by value (rel over the
    elements with |ref| > atol). ``outputs_match``: every output has the reference's shape and
    the type the converted model declares, and is within rtol/atol of the reference (np.allclose,
    NaN equal NaN); an output that depends on a random op (RandomNormalLike ...) is compared by
    shape, type and finiteness only. ``skipped``: why nothing ran (an input type that cannot be
    fed), else None."""
    res = dict(valid=False, valid_error=None, runs=False, run_error=None, runner=None,
               ort_error=None, max_abs=None, max_rel=None, outputs_match=False, skipped=None,
               mismatch=None)
    model, path = _as_model(model_path_or_proto)
    try:
        onnx.checker.check_model(path or model, full_check=True)
        res["valid"] = True
    except Exception as e:  # onnx.checker.ValidationError, shape inference errors
        res["valid_error"] = "%s: %s" % (type(e).__name__, _first_line(e))
    try:
        ref_in, ref_out, random = _reference(reference_fp32_model)
    except _Skip as e:
        res["skipped"] = str(e)
        return res
    # the inputs, in the types the converted model declares
    try:
        inputs = {}
        for vi in _graph_inputs(model):
            if vi.name not in ref_in:
                raise _Skip("input %r is not an input of the float32 model" % vi.name)
            inputs[vi.name] = ref_in[vi.name].astype(_np_type(vi.type.tensor_type.elem_type))
    except _Skip as e:
        res["skipped"] = str(e)
        return res
    outs = None
    try:
        sess = session(path or model)
    except Exception as e:
        res["ort_error"] = _short_ort(e)
        if res["valid"]:  # onnxruntime cannot load a valid model: the reference runs it
            try:
                from onnx.reference import ReferenceEvaluator
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ev = ReferenceEvaluator(model)
                    vals = ev.run(None, inputs)
                outs = dict(zip(ev.output_names, vals))
                res["runner"] = "onnx.reference"
            except Exception as e2:
                res["run_error"] = "onnxruntime: %s; onnx.reference: %s" % (
                    res["ort_error"], _first_line(e2))
                return res
        else:
            res["run_error"] = res["ort_error"]
            return res
    if outs is None:
        try:
            outs = run_session(sess, inputs)
            res["runner"] = "onnxruntime"
        except Exception as e:
            res["run_error"] = _short_ort(e)
            return res
    res["runs"] = True
    declared = {o.name: o.type.tensor_type.elem_type for o in model.graph.output}
    match, worst_abs, worst_rel, why = True, 0.0, 0.0, []
    for name, want in ref_out.items():
        if name not in outs:
            match = False
            why.append("%s: missing" % name)
            continue
        got = np.asarray(outs[name])
        elem = declared.get(name)
        try:
            want_dtype = np.dtype(_np_type(elem)) if elem else None
        except _Skip:
            want_dtype = None
        if got.shape != want.shape:
            match = False
            why.append("%s: shape %s, not %s" % (name, got.shape, want.shape))
            continue
        if want_dtype is not None and got.dtype != want_dtype:
            match = False
            why.append("%s: %s, the model declares %s" % (name, got.dtype, want_dtype))
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        if name in random:
            if not np.isfinite(g).all():
                match = False
                why.append("%s: not finite" % name)
            continue
        d = np.abs(g - w)
        d = np.where(np.isnan(g) & np.isnan(w), 0.0, d)
        d = np.where(np.isnan(d), np.inf, d)
        if d.size:
            worst_abs = max(worst_abs, float(d.max()))
            big = np.abs(w) > atol
            if big.any():
                worst_rel = max(worst_rel, float((d[big] / np.abs(w[big])).max()))
        if not np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
            match = False
            why.append("%s: max abs %.3g" % (name, float(d.max()) if d.size else 0.0))
    res.update(max_abs=worst_abs, max_rel=worst_rel, outputs_match=match,
               mismatch="; ".join(why) or None)
    return res


# ---- the reference converters -------------------------------------------------------------------

def converters(keep_io_types=False):
    """{"onnxconverter-common": f, "ort-float16": f}: onnxconverter-common 1.16's and
    onnxruntime.transformers' convert_float_to_float16 with their defaults (their own op block
    lists, min_positive_val / max_finite_val) and the same keep_io_types. Each f(model,
    node_block_list=()) converts a copy of the ModelProto and returns the converted ModelProto, or
    the exception the converter raised (returned, not raised). A converter that is not
    installed is left out."""
    out = {}
    try:
        from onnxconverter_common import float16 as occ
    except ImportError:
        occ = None
    try:
        from onnxruntime.transformers import float16 as ortf
    except ImportError:
        ortf = None

    def wrap(fn):
        def convert(model, node_block_list=()):
            m = copy.deepcopy(model)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    return fn(m, keep_io_types=keep_io_types,
                              node_block_list=list(node_block_list) or None)
            except Exception as e:  # AssertionError, ValueError, KeyError ...
                return e
        return convert

    if occ is not None:
        out["onnxconverter-common"] = wrap(occ.convert_float_to_float16)
    if ortf is not None:
        import logging
        logging.getLogger("onnxruntime.transformers.float16").setLevel(logging.ERROR)
        out["ort-float16"] = wrap(ortf.convert_float_to_float16)
    return out


def initializer_bytes(model):
    """{name: (data_type, dims, raw bytes)} of every initializer (external data loaded) and
    every Constant node's tensor value, of the main graph and of every subgraph; a subgraph's
    are named "<graph name>/<name>", a Constant's "<graph>/Constant:<output>" ("" for the main
    graph)."""
    m, path = _as_model(model)
    base = os.path.dirname(path) if path else ""
    out = {}

    def walk(g, prefix):
        for t in g.initializer:
            out[prefix + t.name] = (t.data_type, tuple(t.dims), nh.to_array(t, base).tobytes())
        for n in g.node:
            if n.op_type == "Constant":
                for a in n.attribute:
                    if a.name == "value":
                        out[prefix + "Constant:" + n.output[0]] = (
                            a.t.data_type, tuple(a.t.dims), nh.to_array(a.t, base).tobytes())
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g, a.g.name + "/")
                for sg in a.graphs:
                    walk(sg, sg.name + "/")

    walk(m.graph, "")
    return out


def compare_bytes(ours, theirs):
    """(equal, differ, other_type, only_ours, only_theirs): the names of the tensors
    (initializer_bytes) both models have with the same data type and equal / different bytes,
    those both have in different data types, and those only one has."""
    a, b = initializer_bytes(ours), initializer_bytes(theirs)
    common = [k for k in a if k in b and a[k][0] == b[k][0]]
    equal = [k for k in common if a[k] == b[k]]
    differ = [k for k in common if a[k] != b[k]]
    other = [k for k in a if k in b and a[k][0] != b[k][0]]
    return equal, differ, other, sorted(set(a) - set(b)), sorted(set(b) - set(a))


# ---- dtcast -------------------------------------------------------------------------------------

def _import_dtcast():
    try:
        import dtcast.onnx  # noqa: F401
    except ImportError:
        build = os.environ.get("DTCAST_BUILD", os.path.join(REPO, "build"))
        sys.path.insert(0, os.path.join(build, "python"))
        import dtcast.onnx  # noqa: F401
    import dtcast
    return dtcast


def graph_mode_unavailable(err):
    """True when an error says that mode="graph" is not there yet (the package before it lands:
    "mode: only 'weights' ... converts models today, not 'graph'")."""
    msg = str(err)
    return "only 'weights'" in msg or (msg.startswith("mode") and "graph" in msg and any(
        w in msg for w in ("not available", "not implemented")))


def convert(src, dst, *, to, mode, profile=None, keep_io_types=False, block_nodes=(),
            runtime=None):
    """dtcast.onnx.convert_model(src, dst, ...), its warnings silenced; the keywords graph mode
    adds (keep_io_types, block_nodes, runtime) are passed only when set, so a package without
    them raises TypeError only when they are asked for."""
    dtcast = _import_dtcast()
    kw = dict(to=to, mode=mode)
    if profile:
        kw["profile"] = profile
    if keep_io_types:
        kw["keep_io_types"] = True
    if block_nodes:
        kw["block_nodes"] = tuple(block_nodes)
    if runtime:
        kw["runtime"] = runtime
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dtcast.onnx.convert_model(str(src), str(dst), **kw)


def expected_refusal(name, to, model=None):
    """Why dtcast must refuse the conversion (None if it must not): bfloat16 needs opset 13
    (Cast from bfloat16)."""
    model = model or load(name)
    if to == "bfloat16" and opset(model) < 13:
        return "bfloat16 needs opset 13, the model has %d" % opset(model)
    return None


# ---- the table ----------------------------------------------------------------------------------

def _fmt(x):
    return "-" if x is None else "%.2g" % x


def _tool_status(result, ref, rtol, atol):
    """(status text, check() result or None) of a reference converter's output."""
    if isinstance(result, Exception):
        return "raises %s: %s" % (type(result).__name__, _first_line(result)), None
    r = check(result, ref, rtol=rtol, atol=atol)
    if not r["valid"]:
        ran = ("onnxruntime runs it, max_abs %s" % _fmt(r["max_abs"]) if r["runs"] else
               "does not run either: %s" % (r["run_error"] or r["skipped"]))
        return "invalid: %s (%s)" % (r["valid_error"], ran), r
    if not r["runs"]:
        return "does not run: " + (r["run_error"] or r["skipped"] or ""), r
    s = "ok %s" % _fmt(r["max_abs"])
    if r["runner"] != "onnxruntime":
        s += " (%s)" % r["runner"]
    if not r["outputs_match"]:
        s += " MISMATCH (%s)" % r["mismatch"][:60]
    return s, r


def _bytes_text(ours, theirs, name, tool, notes):
    """The table's byte comparison of dtcast's model with a converter's; details into notes."""
    eq, diff, other, mine, only_theirs = compare_bytes(ours, theirs)
    text = "%d equal, %d differ" % (len(eq), len(diff))
    if diff:
        text += " (%s)" % ", ".join(diff[:4])
        notes.append("%s bytes vs %s: differ: %s" % (name, tool, ", ".join(diff)))
    if other:
        a, b = initializer_bytes(ours), initializer_bytes(theirs)
        text += ", %d in another type" % len(other)
        notes.append("%s bytes vs %s: in another type: %s" % (name, tool, ", ".join(
            "%s (dtcast %s, the tool %s)" % (n, TP.DataType.Name(a[n][0]),
                                             TP.DataType.Name(b[n][0])) for n in other)))
    if mine or only_theirs:
        notes.append("%s bytes vs %s: only dtcast's: %s; only the tool's: %s"
                     % (name, tool, mine, only_theirs))
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description="dtcast's ONNX conversions, checked model by model, "
                                 "beside onnxconverter-common's and onnxruntime's float16 "
                                 "converters")
    ap.add_argument("--keep-io-types", action="store_true",
                    help="graph mode and the converters keep float32 graph inputs/outputs")
    ap.add_argument("--runtime", help="graph mode for this runtime's kernels (dtcast's "
                    "--runtime: onnxruntime-cpu)")
    ap.add_argument("--out", help="write the converted models here (default: a temporary "
                    "folder, removed)")
    ap.add_argument("--models", nargs="*", default=list(MODELS), help="a subset of the models")
    args = ap.parse_args(argv)
    dtcast = _import_dtcast()
    tmp = None
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        out_dir = args.out
    else:
        tmp = tempfile.TemporaryDirectory()
        out_dir = tmp.name
    tools = converters(keep_io_types=args.keep_io_types)
    rows, total, good, not_avail, refused, errors = [], 0, 0, 0, 0, 0
    tool_total = {k: [0, 0] for k in tools}
    notes = []
    for name in args.models:
        ref = load(name)
        src = os.path.join(out_dir, name + ".onnx")
        onnx.save(ref, src)
        blocks = BLOCK_NODES.get(name, ())
        tool_results = {k: f(ref, node_block_list=blocks) for k, f in tools.items()}
        for to in TARGETS:
            for mode in MODES:
                rtol, atol = TOLERANCES[(to, mode)]
                total += 1
                dst = os.path.join(out_dir, "%s.%s.%s.onnx" % (name, to, mode))
                kw = dict(keep_io_types=args.keep_io_types, block_nodes=blocks,
                          runtime=args.runtime) if mode == "graph" else {}
                try:
                    convert(src, dst, to=to, mode=mode, **kw)
                    r = check(dst, ref, rtol=rtol, atol=atol)
                    ok = r["valid"] and r["runs"]
                    good += ok
                    status = "%s/%s/%s" % ("valid" if r["valid"] else "INVALID",
                                            ("runs" if r["runner"] == "onnxruntime" else
                                             "runs(onnx.reference)") if r["runs"]
                                            else "DOES NOT RUN", _fmt(r["max_abs"]))
                    if r["runs"] and not r["outputs_match"]:
                        status += " MISMATCH"
                        notes.append("%s %s %s: outputs: %s (rtol %g, atol %g)"
                                     % (name, to, mode, r["mismatch"], rtol, atol))
                    if not r["valid"]:
                        notes.append("%s %s %s: %s" % (name, to, mode, r["valid_error"]))
                    if not r["runs"]:
                        notes.append("%s %s %s: %s" % (name, to, mode,
                                                       r["run_error"] or r["skipped"]))
                    if r["ort_error"] and r["runs"]:
                        notes.append("%s %s %s: onnxruntime: %s" % (name, to, mode,
                                                                    r["ort_error"]))
                except TypeError as e:
                    not_avail += 1
                    status = "n/a (%s)" % _first_line(e).replace("convert_model() got ", "")
                except dtcast.Error as e:
                    if graph_mode_unavailable(e):
                        not_avail += 1
                        status = "n/a (graph mode not there yet)"
                    elif expected_refusal(name, to, ref):
                        refused += 1
                        status = "refused (ok: %s)" % expected_refusal(name, to, ref)
                    else:
                        errors += 1
                        status = "ERROR %s" % _first_line(e)[:70]
                        notes.append("%s %s %s: dtcast.Error: %s" % (name, to, mode, e))
                cols = [name, to, mode, status]
                if to == "float16" and mode == "graph":
                    for k in tools:
                        st, tr = _tool_status(tool_results[k], ref, rtol, atol)
                        tool_total[k][0] += 1
                        tool_total[k][1] += bool(tr and tr["valid"] and tr["runs"])
                        if not st.startswith("ok") or "MISMATCH" in st:
                            notes.append("%s float16, %s: %s" % (name, k, st))
                        cmp_text = "-"
                        if not isinstance(tool_results[k], Exception) and \
                                not status.startswith("n/a"):
                            pdst = os.path.join(out_dir, "%s.%s.graph.%s.onnx" % (name, to, k))
                            try:
                                # the converters' own graphs: no runtime's kernels asked
                                pkw = {a: v for a, v in kw.items() if a != "runtime"}
                                convert(src, pdst, to=to, mode="graph", profile=PROFILES[k],
                                        **pkw)
                                cmp_text = _bytes_text(pdst, tool_results[k], name, k, notes)
                            except (TypeError, dtcast.Error) as e:
                                cmp_text = "n/a (%s)" % _first_line(e)[:40]
                        cols += [st, cmp_text]
                else:
                    for k in tools:
                        cols += ["", ""]
                rows.append(cols)
    head = ["model", "to", "mode", "dtcast valid/runs/max_abs"]
    for k in tools:
        head += [k + " (float16)", "bytes vs " + k]
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    widths = [min(w, 64) for w in widths]
    line = lambda cols: "  ".join(str(c)[:w].ljust(w) for c, w in zip(cols, widths)).rstrip()
    print(line(head))
    print(line(["-" * w for w in widths]))
    for r in rows:
        print(line(r))
    print()
    made = total - refused - not_avail - errors
    print("%d of %d dtcast models valid and runnable (of %d conversions: %d refused as they "
          "must be, %d not converted: graph mode or its keywords not there yet, %d errors)"
          % (good, made, total, refused, not_avail, errors))
    for k, (n, ok) in tool_total.items():
        print("%s: %d of %d float16 models valid and runnable" % (k, ok, n))
    if notes:
        print("\nnotes:")
        for n in notes:
            print("  " + n)
    if tmp:
        tmp.cleanup()
    return 0 if good == made and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
