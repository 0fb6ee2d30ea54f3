"""dtcast.onnx.convert_model on the proof models (onnx_proof.py: the constructs that break float16
graph converters, and a CNN and a transformer block exported from torch): for every model, target
(float16, bfloat16) and mode (weights, graph), the converted model passes
onnx.checker.check_model(full_check=True), runs (onnxruntime's CPU session; bfloat16 graph-mode
models, which onnxruntime's CPU kernels mostly lack, in onnx's ReferenceEvaluator) and gives the
float32 model's outputs within the target's tolerance. Under a converter's profile, graph mode
writes the initializer bytes that converter writes; keep_io_types keeps the graph's interface.

mode="graph" and its keywords (keep_io_types, block_nodes) came after weights mode: with a
package that lacks them (convert_model raises "mode: only 'weights' ...", or TypeError), their
tests skip, and the rest still runs."""
import os
import sys

import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import dtcast  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_proof as P  # noqa: E402

from onnx import TensorProto as TP  # noqa: E402

# Tolerances (rtol, atol) of the outputs against the float32 model's, per target and mode. The
# models' float32 outputs all lie within |y| <= 5.3 (cast_to_float; most within 1 to 4.3, cnn's
# logits within 0.26): the weights are N(0, 1/fan-in), so each layer keeps unit-size values.
# Measured (onnxruntime 1.31.1 CPU, onnx 1.23.2's ReferenceEvaluator for bfloat16 graphs):
# - weights mode, one rounding per weight (2^-11 relative in float16, 2^-8 in bfloat16) and
#   float32 compute: worst abs error float16 1.1e-3, bfloat16 1.1e-2 (no_value_info: two
#   16-term dot products and a CumSum of 16 in a row). (5e-3, 5e-3) and (2e-2, 3e-2) leave
#   3-5x of margin at |y| ~ 4, and a weight wrong by more than its rounding still fails.
# - graph mode, every activation rounded too, up to ~25 ops in a row (the transformer block):
#   float16, dtcast's and both converters' models, worst 3.1e-3 (resize_13: cubic Resize in
#   float16); (1e-2, 2e-2). bfloat16 rounds 8x coarser: dtcast's worst 2.0e-2 (transformer);
#   the converters' float16 models with every float16 made bfloat16 reach 3.1e-2, and 8.1e-2
#   when the roi of a tf_crop_and_resize Resize is rounded to bfloat16 too (resize_11 through
#   onnxruntime's converter); (5e-2, 1e-1).
TOLERANCES = P.TOLERANCES  # {(to, mode): (rtol, atol)}, used by onnx_proof.py's table too
assert TOLERANCES == {("float16", "weights"): (5e-3, 5e-3), ("bfloat16", "weights"): (2e-2, 3e-2),
                      ("float16", "graph"): (1e-2, 2e-2), ("bfloat16", "graph"): (5e-2, 1e-1)}

NAMES = list(P.MODELS)
ONNX_OF = {"float16": TP.FLOAT16, "bfloat16": TP.BFLOAT16}
# a reference converter does not run on these: their constructs are what it gets wrong
# (onnxconverter-common 1.16, onnxruntime 1.31.1's transformers.float16, keep_io_types=False)
BREAKS_A_CONVERTER = ["cast_to_float", "random_normal_like", "shared_initializer",
                      "no_value_info", "half_fp16"]

_CACHE = {}


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("onnx_graph")


def source(work, name):
    """(path, ModelProto) of the float32 model, written once."""
    key = ("src", name)
    if key not in _CACHE:
        m = P.load(name)
        path = work / (name + ".onnx")
        onnx.save(m, str(path))
        _CACHE[key] = (str(path), m)
    return _CACHE[key]


def convert(work, name, to, mode, **kw):
    """The converted model's path, cached; skips when graph mode (or a keyword it adds) is not
    there yet; None when dtcast refused as it must (checked here)."""
    src, ref = source(work, name)
    key = (name, to, mode, tuple(sorted(kw.items())))
    if key not in _CACHE:
        dst = work / ("%s.%s.%s.%d.onnx" % (name, to, mode, len(_CACHE)))
        try:
            P.convert(src, str(dst), to=to, mode=mode, **kw)
            _CACHE[key] = str(dst)
        except TypeError as e:  # keep_io_types=, block_nodes= before graph mode lands
            _CACHE[key] = ("skip", "convert_model does not take these keywords yet: %s" % e)
        except dtcast.Error as e:
            if mode == "graph" and P.graph_mode_unavailable(e):
                _CACHE[key] = ("skip", "graph mode is not there yet: %s" % e)
            elif P.expected_refusal(name, to, ref):
                assert e.status == dtcast.Status.UNSUPPORTED, e
                _CACHE[key] = None
            else:
                raise
    got = _CACHE[key]
    if isinstance(got, tuple):
        pytest.skip(got[1])
    why = P.expected_refusal(name, to, ref)
    assert (got is None) == (why is not None), "dtcast should have refused: %s" % why
    return got


def reference_tool(work, tool, name):
    """(the converter's model or its exception, check() of the model or None), cached; None
    when the converter is not installed."""
    key = ("tool", tool, name)
    if key not in _CACHE:
        tools = P.converters()
        if tool not in tools:
            _CACHE[key] = None
        else:
            _, ref = source(work, name)
            out = tools[tool](ref, node_block_list=P.BLOCK_NODES.get(name, ()))
            r = None if isinstance(out, Exception) else P.check(
                out, ref, rtol=TOLERANCES[("float16", "graph")][0],
                atol=TOLERANCES[("float16", "graph")][1])
            _CACHE[key] = (out, r)
    return _CACHE[key]


def graph_kwargs(name, **kw):
    if P.BLOCK_NODES.get(name):
        kw["block_nodes"] = P.BLOCK_NODES[name]
    return kw


def assert_valid_runs_matches(path, ref, to, mode):
    rtol, atol = TOLERANCES[(to, mode)]
    r = P.check(path, ref, rtol=rtol, atol=atol)
    if r["skipped"]:  # bfloat16 inputs without ml_dtypes
        pytest.skip(r["skipped"])
    assert r["valid"], r["valid_error"]
    assert r["runs"], r["run_error"]
    if to == "bfloat16" and mode == "graph":
        # onnxruntime's CPU session lacks most bfloat16 kernels (NOT_IMPLEMENTED), or expands
        # an op's function body into ops without bfloat16 at the opset (Clip-13 -> Where-9);
        # onnx's ReferenceEvaluator ran the model instead. Any other refusal is a fault.
        e = r["ort_error"] or ""
        assert r["runner"] == "onnxruntime" or "NOT_IMPLEMENTED" in e or (
            "INVALID_GRAPH" in e and "Type 'tensor(bfloat16)'" in e), e
    else:  # weights mode runs wherever the model ran; float16 kernels are all there
        assert r["runner"] == "onnxruntime", r["ort_error"]
    assert r["outputs_match"], "%s (rtol %g, atol %g)" % (r["mismatch"], rtol, atol)
    return r


def io_types(model):
    return {v.name: v.type.tensor_type.elem_type for v in list(model.graph.input) +
            list(model.graph.output)}


def value_types(model):
    """name -> element type of every value of the main graph (shape inference)."""
    g = onnx.shape_inference.infer_shapes(model).graph
    types = {v.name: v.type.tensor_type.elem_type for v in
             list(g.input) + list(g.value_info) + list(g.output)}
    types.update((t.name, t.data_type) for t in g.initializer)
    return types


# ---- the proof models themselves ----------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_model_is_a_valid_float32_model(work, name):
    """Each proof model passes the full check and runs in onnxruntime as float32; the exported
    ones are small."""
    path, m = source(work, name)
    r = P.check(path, m, rtol=0, atol=0)
    assert r["valid"] and r["runner"] == "onnxruntime" and r["outputs_match"], r
    assert all(t in (TP.FLOAT, TP.FLOAT16, TP.INT64) for t in io_types(m).values())
    if isinstance(P.MODELS[name], str):
        assert os.path.getsize(P.MODELS[name]) < 300_000


@pytest.mark.parametrize("name", BREAKS_A_CONVERTER)
def test_model_breaks_a_reference_converter(work, name):
    """The constructs are the converters' failures: on each of these models, at least one of the
    two converters raises, or writes a model that the checker rejects or onnxruntime cannot run.
    (If a converter upgrade fixes both, the model no longer proves anything.)"""
    broken = []
    for tool in sorted(P.PROFILES):
        got = reference_tool(work, tool, name)
        if got is None:
            pytest.skip("%s is not installed" % tool)
        out, r = got
        if isinstance(out, Exception) or not (r["valid"] and r["runs"] and r["outputs_match"]):
            broken.append(tool)
    assert broken, "both converters convert %s correctly" % name


# ---- dtcast's conversions -----------------------------------------------------------------------

@pytest.mark.parametrize("mode", P.MODES)
@pytest.mark.parametrize("to", P.TARGETS)
@pytest.mark.parametrize("name", NAMES)
def test_converted_model_valid_runs_matches(work, name, to, mode):
    """The converted model is valid, runs, and gives the float32 outputs within tolerance;
    weights mode keeps the graph's interface; graph mode computes in the target type (some of
    the main graph's values have it)."""
    kw = graph_kwargs(name) if mode == "graph" else {}
    path = convert(work, name, to, mode, **kw)
    if path is None:
        return  # refused, as it must be (bfloat16 below opset 13)
    _, ref = source(work, name)
    assert_valid_runs_matches(path, ref, to, mode)
    out = onnx.load(path)
    if mode == "weights":
        assert io_types(out) == io_types(ref)
        return
    types = value_types(out)
    assert ONNX_OF[to] in types.values(), "nothing is computed in %s" % to
    for node in out.graph.node:  # the nodes the caller blocked compute as they did
        if node.name in P.BLOCK_NODES.get(name, ()):
            got = [types.get(v) for v in list(node.input) + list(node.output) if v]
            assert got and all(t == TP.FLOAT for t in got), (node.name, got)
    blocked = {n.name for n in out.graph.node} & set(P.BLOCK_NODES.get(name, ()))
    assert blocked == set(P.BLOCK_NODES.get(name, ())), "blocked nodes lost their names"


@pytest.mark.parametrize("to", P.TARGETS)
@pytest.mark.parametrize("name", NAMES)
def test_keep_io_types(work, name, to):
    """graph mode, keep_io_types=True: every graph input and output keeps its type (float32,
    half_fp16's float16 input, int64), and the model is valid, runs and matches."""
    path = convert(work, name, to, "graph", **graph_kwargs(name, keep_io_types=True))
    if path is None:
        return
    _, ref = source(work, name)
    assert io_types(onnx.load(path)) == io_types(ref)
    assert_valid_runs_matches(path, ref, to, "graph")


@pytest.mark.parametrize("keep_io", [False, True])
@pytest.mark.parametrize("to", P.TARGETS)
@pytest.mark.parametrize("name", NAMES)
def test_runtime_onnxruntime_cpu(work, name, to, keep_io):
    """graph mode, runtime="onnxruntime-cpu": a node computes in the target type only where
    onnxruntime's CPU provider has a kernel for it, so onnxruntime's CPU session itself loads
    and runs every model (bfloat16 too, which it refuses without the option), valid and within
    the graph-mode tolerance."""
    path = convert(work, name, to, "graph",
                   **graph_kwargs(name, runtime="onnxruntime-cpu", keep_io_types=keep_io))
    if path is None:
        return
    _, ref = source(work, name)
    r = assert_valid_runs_matches(path, ref, to, "graph")
    assert r["runner"] == "onnxruntime", r["ort_error"]
    if keep_io:
        assert io_types(onnx.load(path)) == io_types(ref)


def test_runtime_keeps_what_onnxruntime_cannot_run(work):
    """The transformer block in bfloat16 for onnxruntime-cpu: some nodes compute in bfloat16
    (the table is not empty), its MatMuls stay float32 (onnxruntime 1.31's CPU provider has no
    bfloat16 MatMul: a session refuses one), and the report says how many were kept."""
    src, _ = source(work, "transformer")
    dst = str(work / "transformer.bf16.ort.onnx")
    text = dtcast.onnx.convert_model(src, dst, to="bfloat16", mode="graph",
                                     runtime="onnxruntime-cpu", report=True)
    assert "for want of a kernel in bfloat16 in onnxruntime-cpu" in text, text
    types = value_types(onnx.load(dst))
    out = onnx.load(dst)
    mm = [n for n in out.graph.node if n.op_type == "MatMul"]
    assert mm and all(types.get(n.output[0]) == TP.FLOAT for n in mm)
    assert TP.BFLOAT16 in {types.get(o) for n in out.graph.node for o in n.output
                           if n.op_type != "Cast"}, "no node computes in bfloat16"
    with pytest.raises(dtcast.Error, match="runtime"):
        dtcast.onnx.convert_model(src, dst + ".x", to="bfloat16", runtime="onnxruntime-cpu")
    with pytest.raises(dtcast.Error, match="runtime"):
        dtcast.onnx.convert_model(src, dst + ".x", to="bfloat16", mode="graph", runtime="tvm")
    assert not os.path.exists(dst + ".x")


@pytest.mark.parametrize("tool", sorted(P.PROFILES))
@pytest.mark.parametrize("name", NAMES)
def test_profile_initializers_equal_converter(work, name, tool):
    """graph mode under a converter's profile (float16) stores each initializer that the
    converter stores in the same type, under the same name, with the converter's bytes; on the
    models where that converter writes a valid, runnable model."""
    path = convert(work, name, "float16", "graph",
                   **graph_kwargs(name, profile=P.PROFILES[tool]))
    got = reference_tool(work, tool, name)
    if got is None:
        pytest.skip("%s is not installed" % tool)
    theirs, r = got
    if isinstance(theirs, Exception):
        pytest.skip("%s raises on %s: %s" % (tool, name, P._first_line(theirs)))
    if not (r["valid"] and r["runs"]):
        pytest.skip("%s writes a broken model of %s: %s" % (
            tool, name, r["valid_error"] or r["run_error"]))
    equal, differ, _, _, _ = P.compare_bytes(path, theirs)
    assert not differ, "%d tensors differ from %s's: %s" % (len(differ), tool, differ[:8])
    mine = P.initializer_bytes(path)
    f16 = [k for k, v in P.initializer_bytes(theirs).items() if v[0] == TP.FLOAT16]
    assert not f16 or any(k in mine for k in f16), \
        "none of %s's float16 tensors (%s ...) has its name in dtcast's model" % (tool, f16[:4])
