"""Weights mode to a scaled target (float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz,
int8; docs/onnx_models.md): each weight W is stored as codes W_<type> with a scalar scale W_scale
of W's own type, and DequantizeLinear(W_<type>, W_scale) -> W replaces it; the graph is otherwise
unchanged.

Checked against things dtcast does not compute: the scale is numpy's max |W| / (the format's
largest finite value from ml_dtypes.finfo, or 127) rounded once to W's type; the codes are what
onnx's ReferenceEvaluator's QuantizeLinear (saturate=1, the model's opset) writes for W and that
scale, byte for byte; the model passes onnx.checker (full_check) and onnxruntime's CPU session
runs it (onnx's ReferenceEvaluator where onnxruntime has no kernel), within the quantization's
error of the original outputs."""
import os
import warnings

import ml_dtypes
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper as h  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import dtcast  # noqa: E402
from dtcast.onnx import convert_model  # noqa: E402

TARGETS = {"float8e4m3fn": (TP.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn),
           "float8e4m3fnuz": (TP.FLOAT8E4M3FNUZ, ml_dtypes.float8_e4m3fnuz),
           "float8e5m2": (TP.FLOAT8E5M2, ml_dtypes.float8_e5m2),
           "float8e5m2fnuz": (TP.FLOAT8E5M2FNUZ, ml_dtypes.float8_e5m2fnuz),
           "int8": (TP.INT8, np.int8)}
WEIGHTS = {"float32": (TP.FLOAT, np.float32), "float16": (TP.FLOAT16, np.float16),
           "bfloat16": (TP.BFLOAT16, ml_dtypes.bfloat16)}
OPSET = 21


def model(wtype, opset=OPSET):
    """x -> MatMul W1 -> Add B1 -> Relu -> MatMul W2 -> Add (a Constant) -> y, all in wtype;
    W2 heavy-tailed, an all-zero weight Z, a small epsilon (fewer than 16 elements: kept)."""
    onnx_t, np_t = WEIGHTS[wtype]
    r = np.random.default_rng(3)
    w1 = (r.standard_normal((64, 32)) * 0.1).astype(np_t)
    b1 = r.standard_normal((32,)).astype(np_t)
    w2 = (r.standard_t(2, (32, 8)) * 0.1).astype(np_t)
    z = np.zeros((32, 32), np_t)
    eps = np.full((8,), 1e-3, np_t)
    cst = r.standard_normal((16, 8)).astype(np_t)
    nodes = [h.make_node("MatMul", ["x", "W1"], ["m1"]),
             h.make_node("Add", ["m1", "B1"], ["a1"]),
             h.make_node("Relu", ["a1"], ["r1"]),
             h.make_node("MatMul", ["r1", "Z"], ["zz"]),
             h.make_node("Add", ["r1", "zz"], ["r2"]),
             h.make_node("MatMul", ["r2", "W2"], ["m2"]),
             h.make_node("Constant", [], ["cst"], value=nh.from_array(cst, "cv")),
             h.make_node("ReduceMean", ["cst", "axes"], ["cm"], keepdims=0),
             h.make_node("Add", ["m2", "cm"], ["m3"]),
             h.make_node("Add", ["m3", "eps"], ["y"])]
    inits = [nh.from_array(w1, "W1"), nh.from_array(b1, "B1"), nh.from_array(w2, "W2"),
             nh.from_array(z, "Z"), nh.from_array(eps, "eps"),
             nh.from_array(np.array([0], np.int64), "axes")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", onnx_t, [4, 64])],
                     [h.make_tensor_value_info("y", onnx_t, [4, 8])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 10
    onnx.checker.check_model(m, full_check=True)
    return m


def weights_of(m):
    """name -> array of the float initializers and Constant values of m's graph."""
    out = {t.name: nh.to_array(t) for t in m.graph.initializer if t.data_type != TP.INT64}
    for n in m.graph.node:
        if n.op_type == "Constant":
            out[n.output[0]] = nh.to_array(n.attribute[0].t)
    return out


def reference_codes(w, scale, to):
    """onnx's ReferenceEvaluator: QuantizeLinear(w, scale, zero point 0 of `to`), saturate=1."""
    onnx_t, np_t = TARGETS[to]
    zp = nh.from_array(np.zeros((), np_t), "zp") if to == "int8" else \
        h.make_tensor("zp", onnx_t, [], [0])
    wt = WEIGHTS[str(w.dtype)][0]
    g = h.make_graph([h.make_node("QuantizeLinear", ["w", "s", "zp"], ["q"], saturate=1)
                      if to != "int8" else h.make_node("QuantizeLinear", ["w", "s", "zp"], ["q"])],
                     "q", [h.make_tensor_value_info("w", wt, list(w.shape)),
                           h.make_tensor_value_info("s", wt, [])],
                     [h.make_tensor_value_info("q", onnx_t, list(w.shape))], [zp])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", OPSET)])
    q = ReferenceEvaluator(m).run(None, {"w": w, "s": np.asarray(scale, w.dtype)})[0]
    return np.ascontiguousarray(q).view(np.uint8)


def expected_scale(w, to):
    amax = float(np.max(np.abs(w.astype(np.float64))))
    qmax = 127.0 if to == "int8" else float(ml_dtypes.finfo(TARGETS[to][1]).max)
    return np.asarray(amax / qmax if amax > 0 else 1.0, np.float64).astype(w.dtype)


def run_model(path, feeds):
    """(outputs, runner): onnxruntime's CPU session, or onnx's ReferenceEvaluator when
    onnxruntime has no kernel for a node."""
    try:
        s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        return s.run(None, feeds), "onnxruntime"
    except Exception as e:  # noqa: BLE001
        if "NOT_IMPLEMENTED" not in str(e):
            raise
        return ReferenceEvaluator(path).run(None, feeds), "onnx.reference"


@pytest.mark.parametrize("external", [False, True])
@pytest.mark.parametrize("wtype", sorted(WEIGHTS))
@pytest.mark.parametrize("to", sorted(TARGETS))
def test_scaled_weights(tmp_path, to, wtype, external):
    m = model(wtype)
    src, dst = str(tmp_path / "m.onnx"), str(tmp_path / "o.onnx")
    if external:
        onnx.save(m, src, save_as_external_data=True, all_tensors_to_one_file=True,
                  location="m.onnx.data", size_threshold=64)
        m = model(wtype)
    else:
        onnx.save(m, src)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Z's scale 1; eps kept as small
        convert_model(src, dst, to=to)
    out = onnx.load(dst)
    onnx.checker.check_model(dst, full_check=True)
    onnx_t, _ = TARGETS[to]
    before, after = weights_of(m), weights_of(out)
    dq = {n.output[0]: n for n in out.graph.node if n.op_type == "DequantizeLinear"}
    # converted: 16 elements or more, and a scale that is a normal number of W's type (float8e5m2
    # of float16 weights: max |W| / 57344 is subnormal in float16 unless |W| reaches 3.5)
    tiny = float(ml_dtypes.finfo(WEIGHTS[wtype][1]).smallest_normal)
    converted = [k for k, v in before.items()
                 if v.size >= 16 and float(expected_scale(v, to)) >= tiny]
    assert converted
    assert sorted(dq) == sorted(converted), (sorted(dq), converted)
    assert "eps" in after and after["eps"].dtype == before["eps"].dtype  # small: kept
    inits = {t.name: t for t in out.graph.initializer}
    for name in converted:
        w = before[name]
        codes_name, scale_name = dq[name].input
        assert codes_name == name + "_" + to and scale_name == name + "_scale"
        codes = inits.get(codes_name)
        if codes is None:  # a Constant's codes and scale come from Constant nodes
            assert name == "cst"
            codes = next(n.attribute[0].t for n in out.graph.node
                         if n.op_type == "Constant" and n.output[0] == codes_name)
            scale_t = next(n.attribute[0].t for n in out.graph.node
                           if n.op_type == "Constant" and n.output[0] == scale_name)
        else:
            scale_t = inits[scale_name]
        assert codes.data_type == onnx_t and list(codes.dims) == list(w.shape)
        assert scale_t.data_type == WEIGHTS[wtype][0] and list(scale_t.dims) == []
        scale = nh.to_array(scale_t)
        want = expected_scale(w, to)
        assert scale.tobytes() == want.tobytes(), (name, scale, want)
        got = np.frombuffer(codes.raw_data if codes.raw_data else
                            open(os.path.join(str(tmp_path), codes.external_data[0].value),
                                 "rb").read()[int(codes.external_data[1].value):][:w.size],
                            np.uint8)
        if codes.raw_data == b"" and not external:
            got = np.frombuffer(nh.to_array(codes).tobytes(), np.uint8)
        ref = reference_codes(w, scale, to).reshape(-1)
        assert got.shape == ref.shape and np.array_equal(got, ref), \
            "%s: %d codes differ from onnx's QuantizeLinear" % (name, int(np.sum(got != ref)))
    # it runs, within the quantization's error of the original
    x = np.random.default_rng(9).standard_normal((4, 64)).astype(WEIGHTS[wtype][1])
    (y0,), _ = run_model(src, {"x": x})
    (y1,), runner = run_model(dst, {"x": x})
    if wtype == "float32":
        assert runner == "onnxruntime"
    y0, y1 = y0.astype(np.float64), y1.astype(np.float64)
    err = float(np.max(np.abs(y0 - y1))) / max(1.0, float(np.max(np.abs(y0))))
    # measured: at most 0.042 (e4m3, int8) and 0.052 (e5m2) of max(1, |y|)
    assert err < (0.12 if "e5m2" in to else 0.08), err


def test_scaled_refusals(tmp_path):
    """Below opset 19 float8 codes have no DequantizeLinear: refused, nothing written; int8 at
    opset 13 converts float32 weights and keeps float16 ones (DequantizeLinear-13 outputs
    float32 only), with a warning; a converter's profile writes float16 only."""
    src, dst = str(tmp_path / "m.onnx"), str(tmp_path / "o.onnx")
    m = model("float32", opset=18)
    onnx.save(m, src)
    with pytest.raises(dtcast.Error, match="opset 18 has no DequantizeLinear") as e:
        convert_model(src, dst, to="float8e4m3fn")
    assert e.value.status == dtcast.Status.UNSUPPORTED and not os.path.exists(dst)
    with pytest.raises(dtcast.Error, match="profiles write float16"):
        convert_model(src, dst, to="int8", profile="ort-float16")
    assert not os.path.exists(dst)
    onnx.save(model("float16", opset=18), src)
    with pytest.warns(dtcast.Warning, match="DequantizeLinear at opset 18 does not output float16"):
        convert_model(src, dst, to="int8")
    assert not any(n.op_type == "DequantizeLinear" for n in onnx.load(dst).graph.node)
    m = model("float32", opset=21)
    m.graph.initializer[0].raw_data = np.where(
        np.arange(64 * 32) == 5, np.inf, nh.to_array(m.graph.initializer[0]).reshape(-1)
    ).astype(np.float32).tobytes()
    onnx.save(m, src)
    with pytest.warns(dtcast.Warning, match="'W1': it holds an Inf or NaN"):
        convert_model(src, dst, to="float8e4m3fn")
    assert "W1" in {t.name for t in onnx.load(dst).graph.initializer}
