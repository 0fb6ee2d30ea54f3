"""ONNX models' weights to float16 / bfloat16 (dtcast.onnx.convert_model, dtcast cast model.onnx):
the result passes onnx.checker.check_model(full_check=True), runs in onnxruntime's CPU session
with outputs close to the float32 model's, each converted initializer holds exactly the bytes
numpy / ml_dtypes round it to (one rounding to nearest even), a Cast back to its type is the
first node, and nothing the graph's users see (inputs, outputs, value_info) changes. Tensors
whose values would not survive, and initializers that are graph inputs, are kept with a
warning; external data in and out; bad files raise and write nothing."""
import os
import subprocess
import warnings

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import dtcast
from dtcast.onnx import convert_model

RNG = np.random.default_rng(0)
NUMPY_OF = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}
ONNX_OF = {"float16": TP.FLOAT16, "bfloat16": TP.BFLOAT16}


def mlp_model(opset=17):
    """MatMul/Add/Relu with initializers, an epsilon that float16 flushes, a Constant, and an
    If whose then-branch has its own initializer and reads h2 from the outer scope."""
    r = np.random.default_rng(0)
    w1 = r.standard_normal((64, 32)).astype(np.float32) * 0.1
    b1 = r.standard_normal((32,)).astype(np.float32)
    w2 = r.standard_normal((32, 8)).astype(np.float32) * 0.1
    eps = np.full((32,), 1e-12, np.float32)
    w3 = r.standard_normal((8, 8)).astype(np.float32)
    then_g = h.make_graph([h.make_node("MatMul", ["h2", "W3"], ["t_out"])], "then", [],
                          [h.make_tensor_value_info("t_out", TP.FLOAT, None)],
                          [nh.from_array(w3, "W3")])
    else_g = h.make_graph([h.make_node("Identity", ["h2"], ["e_out"])], "else", [],
                          [h.make_tensor_value_info("e_out", TP.FLOAT, None)])
    cst = r.standard_normal((16, 8)).astype(np.float32)
    nodes = [
        h.make_node("MatMul", ["x", "W1"], ["m1"]),
        h.make_node("Add", ["m1", "B1"], ["a1"]),
        h.make_node("Add", ["a1", "eps"], ["a1e"]),
        h.make_node("Relu", ["a1e"], ["r1"]),
        h.make_node("MatMul", ["r1", "W2"], ["h1"]),
        h.make_node("Constant", [], ["cst"], value=nh.from_array(cst, "cv")),
        h.make_node("ReduceMean", ["cst"], ["cm"], axes=[0], keepdims=0) if opset < 18 else
        h.make_node("ReduceMean", ["cst", "axes"], ["cm"], keepdims=0),
        h.make_node("Add", ["h1", "cm"], ["h2"]),
        h.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g),
    ]
    inits = [nh.from_array(w1, "W1"), nh.from_array(b1, "B1"), nh.from_array(w2, "W2"),
             nh.from_array(eps, "eps")]
    if opset >= 18:
        inits.append(nh.from_array(np.array([0], np.int64), "axes"))
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [4, 64]),
                                  h.make_tensor_value_info("cond", TP.BOOL, [])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [4, 8])], inits,
                     value_info=[h.make_tensor_value_info("h1", TP.FLOAT, [4, 8])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    return m


def run(path, feeds):
    s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return [s.run(None, f)[0] for f in feeds]


def tensors(g, prefix=""):
    """name -> array of every initializer (subgraphs too) and Constant value."""
    out = {}
    for t in g.initializer:
        out[prefix + t.name] = nh.to_array(t)
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                out.update(tensors(a.g, prefix + a.name + "/"))
            elif a.type == onnx.AttributeProto.TENSOR and n.op_type == "Constant":
                out[prefix + n.output[0]] = nh.to_array(a.t)
    return out


def save(m, path, external=False):
    """m saved to path (external: its tensors of 64 bytes or more in path + ".bin"); m itself
    is left as it is (onnx.save would move its data out)."""
    if external:
        copy = onnx.ModelProto()
        copy.CopyFrom(m)
        onnx.save(copy, path, save_as_external_data=True, all_tensors_to_one_file=True,
                  location=os.path.basename(path) + ".bin", size_threshold=64)
    else:
        onnx.save(m, path)


@pytest.mark.parametrize("external", [False, True], ids=["embedded", "external"])
@pytest.mark.parametrize("to", ["float16", "bfloat16"])
def test_weights_mode(tmp_path, to, external):
    m = mlp_model()
    src, dst = str(tmp_path / "m.onnx"), str(tmp_path / "out.onnx")
    save(m, src, external)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        convert_model(src, dst, to=to)
    onnx.checker.check_model(dst, full_check=True)
    out = onnx.load(dst)
    # what users of the graph see is unchanged
    for field in ("input", "output", "value_info"):
        assert [v.SerializeToString() for v in getattr(out.graph, field)] == \
               [v.SerializeToString() for v in getattr(m.graph, field)]
    # the output's external data: a file beside it when the input had one
    assert os.path.exists(dst + ".data") == external
    before, after = tensors(m.graph), tensors(out.graph)
    np_t = NUMPY_OF[to]
    converted = {k[:-len(to) - 1]: v for k, v in after.items() if k.endswith("_" + to)}
    want = {"W1", "B1", "W2", "cst", "then_branch/W3"} | ({"eps"} if to == "bfloat16" else set())
    assert set(converted) == want
    for name, v in converted.items():
        assert v.dtype == np_t
        ref = before[name].astype(np_t)  # numpy / ml_dtypes: one rounding to nearest even
        assert v.view(np.uint16).tobytes() == ref.view(np.uint16).tobytes(), name
    if to == "float16":  # 1e-12 would become 0: kept, and said
        assert after["eps"].dtype == np.float32
        assert any("eps" in str(w.message) and "0" in str(w.message) for w in caught)
    # the Casts come first, back to float32, one per converted initializer of the main graph
    casts = [n for n in out.graph.node if n.op_type == "Cast"]
    heads = out.graph.node[:len([k for k in want if "/" not in k and k != "cst"])]
    assert all(n.op_type == "Cast" and n.attribute[0].i == TP.FLOAT for n in heads)
    assert {n.output[0] for n in casts} >= {"W1", "B1", "W2", "cst"}
    # it runs where the float32 model runs, with close outputs
    x = RNG.standard_normal((4, 64)).astype(np.float32)
    feeds = [{"x": x, "cond": np.array(c)} for c in (True, False)]
    for a, b in zip(run(src, feeds), run(dst, feeds)):
        assert np.allclose(a, b, rtol=0.05 if to == "float16" else 0.3, atol=0.05)


def test_cli_same_bytes(tmp_path):
    """dtcast cast model.onnx writes the bytes of dtcast.onnx.convert_model."""
    m = mlp_model()
    src = str(tmp_path / "m.onnx")
    save(m, src)
    convert_model(src, str(tmp_path / "py.onnx"), to="bfloat16")
    cli = os.environ.get("DTCAST_CLI") or os.path.join(os.environ["DTCAST_BUILD"], "dtcast")
    subprocess.run([cli, "cast", "-q", "--to", "bfloat16", src, str(tmp_path / "cli.onnx")],
                   check=True)
    assert open(tmp_path / "py.onnx", "rb").read() == open(tmp_path / "cli.onnx", "rb").read()


@pytest.mark.parametrize("mode", ["always", "never"])
def test_external_data_modes(tmp_path, mode):
    m = mlp_model()
    src, dst = str(tmp_path / "m.onnx"), str(tmp_path / "o.onnx")
    save(m, src, external=mode == "never")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        convert_model(src, dst, to="float16", external_data=mode)
    assert os.path.exists(dst + ".data") == (mode == "always")
    onnx.checker.check_model(dst, full_check=True)
    out = onnx.load(dst, load_external_data=False)
    offsets = [int(e.value) for t in out.graph.initializer for e in t.external_data
               if e.key == "offset"]
    assert (len(offsets) > 0) == (mode == "always") and all(o % 64 == 0 for o in offsets)
    x = RNG.standard_normal((4, 64)).astype(np.float32)
    feeds = [{"x": x, "cond": np.array(True)}]
    assert np.allclose(run(src, feeds)[0], run(dst, feeds)[0], rtol=0.05, atol=0.05)


def test_graph_input_initializer_kept(tmp_path):
    """An initializer that is also a graph input (a default a caller may override) keeps its
    type: changing it would change the model's interface."""
    w = RNG.standard_normal((16, 16)).astype(np.float32)
    g = h.make_graph([h.make_node("MatMul", ["x", "W"], ["y"])], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [2, 16]),
                      h.make_tensor_value_info("W", TP.FLOAT, [16, 16])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [2, 16])], [nh.from_array(w, "W")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    src, dst = str(tmp_path / "m.onnx"), str(tmp_path / "o.onnx")
    onnx.save(m, src)
    with pytest.warns(dtcast.Warning, match="graph input"):
        convert_model(src, dst, to="float16")
    out = onnx.load(dst)
    assert out.graph.initializer[0].data_type == TP.FLOAT
    onnx.checker.check_model(out, full_check=True)


@pytest.mark.parametrize("opset", [11, 13, 18, 19])
def test_resize_and_double(tmp_path, opset):
    """Resize's roi/scales stay float (they are small), a Conv weight is converted, a float64
    initializer is stored as float16 / bfloat16 / float32 with a Cast back to DOUBLE; valid and
    runnable at each opset."""
    wc = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    wd = RNG.standard_normal((4 * 8 * 8,)).astype(np.float64)
    scales = np.array([1, 1, 1.5, 1.5], np.float32)
    roi = np.array([], np.float32)
    nodes = [h.make_node("Conv", ["x", "Wc"], ["c"], pads=[1, 1, 1, 1]),
             h.make_node("Resize", ["c", "roi", "scales"], ["r"], mode="nearest"),
             h.make_node("Cast", ["Wd"], ["wd32"], to=TP.FLOAT),
             h.make_node("ReduceSum", ["wd32"], ["s"], keepdims=1),
             h.make_node("Add", ["r", "s"], ["y"])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [1, 3, 8, 8])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [1, 4, 12, 12])],
                     [nh.from_array(wc, "Wc"), nh.from_array(roi, "roi"),
                      nh.from_array(scales, "scales"), nh.from_array(wd, "Wd")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 7
    onnx.checker.check_model(m, full_check=True)
    src = str(tmp_path / "m.onnx")
    onnx.save(m, src)
    x = RNG.standard_normal((1, 3, 8, 8)).astype(np.float32)
    for to in ("float16", "bfloat16") if opset >= 13 else ("float16",):
        dst = str(tmp_path / ("o_%s.onnx" % to))
        convert_model(src, dst, to=to)
        onnx.checker.check_model(dst, full_check=True)
        out = {t.name: t for t in onnx.load(dst).graph.initializer}
        assert out["scales"].data_type == TP.FLOAT and out["roi"].data_type == TP.FLOAT
        assert out["Wc_" + to].data_type == ONNX_OF[to]
        assert out["Wd_" + to].data_type == ONNX_OF[to]  # float64 too, Cast back to DOUBLE
        assert np.array_equal(nh.to_array(out["Wd_" + to]).view(np.uint16),
                              wd.astype(NUMPY_OF[to]).view(np.uint16))
        a, b = run(src, [{"x": x}])[0], run(dst, [{"x": x}])[0]
        assert a.shape == b.shape and np.allclose(a, b, rtol=0.1, atol=0.2)
    # float64 -> float32: Cast back to DOUBLE
    dst = str(tmp_path / "o32.onnx")
    convert_model(src, dst, to="float32")
    out = onnx.load(dst)
    assert {t.name: t.data_type for t in out.graph.initializer}["Wd_float32"] == TP.FLOAT
    assert any(n.op_type == "Cast" and n.output[0] == "Wd" and n.attribute[0].i == TP.DOUBLE
               for n in out.graph.node)
    onnx.checker.check_model(out, full_check=True)
    assert np.array_equal(run(src, [{"x": x}])[0].shape, run(dst, [{"x": x}])[0].shape)


def test_bfloat16_needs_opset_13(tmp_path):
    m = mlp_model(opset=12)
    src, dst = str(tmp_path / "m.onnx"), str(tmp_path / "o.onnx")
    onnx.save(m, src)
    with pytest.raises(dtcast.Error, match="opset 12") as e:
        convert_model(src, dst, to="bfloat16")
    assert e.value.status == dtcast.Status.UNSUPPORTED and not os.path.exists(dst)


def test_bad_files(tmp_path):
    """One-line errors, nothing written: a truncated model, external data past the end of its
    file, locations outside the model's folder, a file that is not a model."""
    m = mlp_model()
    good = str(tmp_path / "m.onnx")
    onnx.save(m, good)
    data = open(good, "rb").read()
    cases = {"truncated.onnx": data[:len(data) // 2], "junk.onnx": b"\x08" + b"\xff" * 20}
    ext = mlp_model()
    path = str(tmp_path / "e.onnx")
    save(ext, path, external=True)
    base = onnx.load(path, load_external_data=False)
    for label, key, value in (("past_end", "length", "99999999"),
                              ("escape", "location", "../outside.bin"),
                              ("absolute", "location", "/etc/passwd")):
        mm = onnx.ModelProto()
        mm.CopyFrom(base)
        for t in mm.graph.initializer:
            for e in t.external_data:
                if e.key == key:
                    e.value = value
            if key == "length" and not any(e.key == "length" for e in t.external_data):
                t.external_data.add(key="length", value=value)
        cases[label + ".onnx"] = mm.SerializeToString()
    for name, blob in cases.items():
        src = str(tmp_path / name)
        with open(src, "wb") as f:
            f.write(blob)
        dst = str(tmp_path / ("out_" + name))
        with pytest.raises(dtcast.Error) as e:
            convert_model(src, dst, to="float16")
        msg = str(e.value)
        assert "\n" not in msg and name in msg, msg
        assert not os.path.exists(dst) and not os.path.exists(dst + ".data"), name
        assert not [n for n in os.listdir(tmp_path) if n.startswith("out_")], name


def test_report(tmp_path):
    """report=True: one section per converted tensor (initializers, Constant values, subgraph
    initializers), none for the kept epsilon, and each section's max abs error is numpy's on
    the same values."""
    m = mlp_model()
    src, dst = str(tmp_path / "m.onnx"), str(tmp_path / "o.onnx")
    save(m, src)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dtcast.Warning)
        text = convert_model(src, dst, to="float16", report=True)
    values = {k.rsplit("/", 1)[-1]: v for k, v in tensors(m.graph).items()}
    sections = {}
    for line in text.splitlines():
        if not line.startswith(" "):
            name = line.split(":", 1)[0]
            sections[name] = line
        elif line.lstrip().startswith("max abs error"):
            sections[name] = float(line.split()[3])
    assert set(sections) == {"W1", "B1", "W2", "W3", "cst"}, text
    for name, reported in sections.items():
        x = values[name].astype(np.float64)
        err = np.abs(x - values[name].astype(np.float16).astype(np.float64)).max()
        assert reported == pytest.approx(err, rel=1e-5), name


# ---- the converters' profiles: their initializer values, byte for byte -------------------------

def _converter(profile):
    """(convert_np_to_float16, convert_float_to_float16) of the converter a profile follows."""
    if profile == "ort-float16":
        from onnxruntime.transformers import float16 as f16
    else:
        f16 = pytest.importorskip("onnxconverter_common.float16")
    return f16.convert_np_to_float16, f16.convert_float_to_float16


def edge_float32(n=4096, seed=5):
    """float32 values around both converters' floors (5.96e-08, 1e-7) and bounds (65504, 1e4),
    float16's subnormals, halfway cases and overflow, ±0, ±Inf and NaN, among normal ones."""
    r = np.random.default_rng(seed)
    f = np.float32
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, 5.96e-08, 1e-7, 2.0 ** -24, 2.0 ** -25,
             3 * 2.0 ** -26, 5.9e-08, 6e-08, 9.9e-08, 1.01e-7, 1e-30, 1e-45, 6.1e-05, 65504.0,
             65519.996, 65520.0, 7e4, 1e4, 10000.001, 9999.999, 1e30, 3.4e38]
    edges = np.array(edges + [-e for e in edges], f)
    spread = (r.standard_normal(n) * 2.0 ** r.integers(-40, 30, n)).astype(f)
    bits = r.integers(0, 2 ** 32, n // 4, dtype=np.uint64).astype(np.uint32).view(f)
    bits = np.where(np.isnan(bits), f(1.5), bits)  # NaN payloads: the CPU's cast decides them
    return np.concatenate([edges, spread, bits]).astype(f)


@pytest.mark.parametrize("profile", ["ort-float16", "onnxconverter-common"])
def test_profile_values_equal_converter(tmp_path, profile):
    """dtcast cast --profile P of a float32 .npy gives the float16 bytes of the converter's
    convert_np_to_float16 on every value."""
    to_f16, _ = _converter(profile)
    a = edge_float32()
    np.save(tmp_path / "a.npy", a)
    text = dtcast.convert_file(str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), to="float16",
                               profile=profile, report=True)
    assert "float32 -> float16 (%s: 0 < |x| < " % profile in text  # the report names the clamp
    got = np.load(tmp_path / "b.npy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = to_f16(a.copy())
    assert got.dtype == np.float16
    bad = np.nonzero(got.view(np.uint16) != want.view(np.uint16))[0]
    assert bad.size == 0, "%d values differ, first %r: 0x%04x, the converter 0x%04x" % (
        bad.size, a[bad[0]], got.view(np.uint16)[bad[0]], want.view(np.uint16)[bad[0]])


@pytest.mark.parametrize("profile", ["ort-float16", "onnxconverter-common"])
def test_profile_model_initializers_equal_converter(tmp_path, profile):
    """convert_model(profile=P) stores every float32 initializer with the bytes the converter's
    convert_float_to_float16 gives it, keeps the float64 one (as the converter does), and the
    model stays valid and runs."""
    _, convert_graph = _converter(profile)
    w = edge_float32(64 * 32, seed=6)[:64 * 32].reshape(64, 32)
    b = edge_float32(32, seed=7)[20:52]
    d = np.linspace(-1e6, 1e6, 32)
    nodes = [h.make_node("MatMul", ["x", "W"], ["m"]), h.make_node("Add", ["m", "B"], ["y"]),
             h.make_node("Cast", ["D"], ["d32"], to=TP.FLOAT), h.make_node("Add", ["y", "d32"],
                                                                            ["z"])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [2, 64])],
                     [h.make_tensor_value_info("z", TP.FLOAT, [2, 32])],
                     [nh.from_array(w, "W"), nh.from_array(b, "B"), nh.from_array(d, "D")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    save(m, str(tmp_path / "m.onnx"))
    convert_model(str(tmp_path / "m.onnx"), str(tmp_path / "o.onnx"), profile=profile)
    out = onnx.load(str(tmp_path / "o.onnx"))
    onnx.checker.check_model(out, full_check=True)
    run(str(tmp_path / "o.onnx"), [{"x": np.ones((2, 64), np.float32)}])
    inits = {t.name: nh.to_array(t) for t in out.graph.initializer}
    mine = {n.output[0]: inits[n.input[0]] for n in out.graph.node  # the inserted Casts'
            if n.op_type == "Cast" and n.input[0] in inits and n.input[0] not in ("W", "B", "D")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = convert_graph(onnx.load(str(tmp_path / "m.onnx")), keep_io_types=True)
    theirs = {t.name: nh.to_array(t) for t in ref.graph.initializer}
    assert sorted(mine) == ["B", "W"] and inits["D"].dtype == np.float64
    for name in ("W", "B"):
        assert theirs[name].dtype == np.float16 and mine[name].dtype == np.float16
        assert mine[name].tobytes() == theirs[name].tobytes(), name


def test_profile_refusals(tmp_path):
    """A converter's profile converts float32 to float16 only, and takes none of the exact
    profile's options."""
    np.save(tmp_path / "a.npy", np.ones(4, np.float64))
    with pytest.raises(dtcast.Error, match="float32 to float16 only"):
        dtcast.convert_file(str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), to="float16",
                            profile="ort-float16")
    assert not os.path.exists(tmp_path / "b.npy")
    with pytest.raises(dtcast.Error, match="round"):
        dtcast.convert_file(str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), to="float16",
                            profile="onnxconverter-common", round="floor")
    p = subprocess.run([os.environ["DTCAST_CLI"], "cast", "-p", "ort-float16", "--overflow",
                        "saturate", "--to", "float16", str(tmp_path / "a.npy"),
                        str(tmp_path / "b.npy")], capture_output=True, text=True)
    assert p.returncode == 2 and "--overflow is not an option of" in p.stderr, p.stderr


def test_graph_mode_bad_graphs(tmp_path):
    """--mode graph: a cycle, a value two nodes write, a value read but given by nothing, and a
    target graph mode does not compute in: one line naming the node, nothing written."""
    x = h.make_tensor_value_info("x", TP.FLOAT, [4])
    y = h.make_tensor_value_info("y", TP.FLOAT, [4])
    graphs = {
        "cycle": ([h.make_node("Add", ["x", "b"], ["a"], name="n_a"),
                   h.make_node("Relu", ["a"], ["b"], name="n_b"),
                   h.make_node("Identity", ["a"], ["y"])], "cycle"),
        "twice": ([h.make_node("Relu", ["x"], ["y"], name="first"),
                   h.make_node("Abs", ["x"], ["y"], name="second")], "'second'"),
        "missing": ([h.make_node("Add", ["x", "nowhere"], ["y"], name="adder")], "'nowhere'"),
    }
    for label, (nodes, want) in graphs.items():
        g = h.make_graph(nodes, label, [x], [y])
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
        src, dst = str(tmp_path / (label + ".onnx")), str(tmp_path / ("out_" + label + ".onnx"))
        with open(src, "wb") as f:  # onnx.save would not mind; the checker would
            f.write(m.SerializeToString())
        with pytest.raises(dtcast.Error, match=want) as e:
            convert_model(src, dst, to="float16", mode="graph")
        assert "\n" not in str(e.value) and label in str(e.value)
        assert not os.path.exists(dst), label
    src = str(tmp_path / "ok.onnx")
    onnx.save(mlp_model(), src)
    with pytest.raises(dtcast.Error, match="float16 or bfloat16"):
        convert_model(src, str(tmp_path / "f8.onnx"), to="float8e4m3fn", mode="graph")
    with pytest.raises(dtcast.Error, match="mode='graph'"):
        convert_model(src, str(tmp_path / "w.onnx"), to="float16", keep_io_types=True)


def test_graph_mode_identity_casts(tmp_path):
    """--mode graph: a Cast that would cast to its input's own type (Cast(to=FLOAT) of a float16
    value; the second Cast of a float16 -> float32 -> float16 pair) is written as Identity, and
    onnxruntime computes the same as with the Casts."""
    x = h.make_tensor_value_info("x", TP.FLOAT16, [4])
    y = h.make_tensor_value_info("y", TP.FLOAT, [4])
    nodes = [h.make_node("Cast", ["x"], ["xf"], to=TP.FLOAT, name="up"),
             h.make_node("Relu", ["xf"], ["r"], name="relu"),
             h.make_node("Cast", ["r"], ["r16"], to=TP.FLOAT16, name="down"),
             h.make_node("Cast", ["r16"], ["y"], to=TP.FLOAT, name="up2")]
    m = h.make_model(h.make_graph(nodes, "g", [x], [y]), opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    src, dst = str(tmp_path / "m.onnx"), str(tmp_path / "o.onnx")
    onnx.save(m, src)
    convert_model(src, dst, to="float16", mode="graph", keep_io_types=True)
    out = onnx.load(dst)
    onnx.checker.check_model(out, full_check=True)
    ops = {n.name: n.op_type for n in out.graph.node}
    assert ops["up"] == "Identity" and ops["down"] == "Identity", ops
    assert not [n for n in out.graph.node if n.op_type == "Identity" and n.attribute]
    feed = {"x": np.array([-1.5, 0.25, 3.0, -0.0], np.float16)}
    want = ort.InferenceSession(src, providers=["CPUExecutionProvider"]).run(None, feed)[0]
    got = ort.InferenceSession(dst, providers=["CPUExecutionProvider"]).run(None, feed)[0]
    assert got.dtype == np.float32 and np.array_equal(got, want)


def test_graph_mode_sorts_outer_scope_reads(tmp_path):
    """--mode graph on nodes out of order: an If placed before the node that writes the value
    its branches read from the outer graph comes after that node in the output."""
    x = h.make_tensor_value_info("x", TP.FLOAT, [4])
    y = h.make_tensor_value_info("y", TP.FLOAT, [4])
    out = h.make_tensor_value_info("o", TP.FLOAT, [4])
    then_g = h.make_graph([h.make_node("Neg", ["hidden"], ["o"])], "then", [], [out])
    else_g = h.make_graph([h.make_node("Abs", ["hidden"], ["o"])], "else", [], [out])
    cond = nh.from_array(np.array(True), "cond")
    nodes = [h.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g, name="if"),
             h.make_node("Relu", ["x"], ["hidden"], name="relu")]
    m = h.make_model(h.make_graph(nodes, "g", [x], [y], [cond]),
                     opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    src, dst = str(tmp_path / "m.onnx"), str(tmp_path / "o.onnx")
    with open(src, "wb") as f:  # unsorted: onnx's checker would refuse it
        f.write(m.SerializeToString())
    convert_model(src, dst, to="float16", mode="graph", keep_io_types=True)
    got = onnx.load(dst)
    onnx.checker.check_model(got, full_check=True)
    assert [n.name for n in got.graph.node if n.name in ("if", "relu")] == ["relu", "if"]
    feed = {"x": np.array([-1.0, 2.0, -3.0, 4.0], np.float32)}
    r = ort.InferenceSession(dst, providers=["CPUExecutionProvider"]).run(None, feed)[0]
    assert np.array_equal(r, -np.maximum(feed["x"], 0))


def test_cli_runtime(tmp_path):
    """dtcast cast --mode graph --runtime onnxruntime-cpu: a bfloat16 graph that onnxruntime's
    CPU session loads (without the option it refuses the MatMul), the report counting the nodes
    kept; an unknown runtime and --runtime in weights mode: usage errors, nothing written."""
    ort = pytest.importorskip("onnxruntime")
    cli = os.environ.get("DTCAST_CLI") or os.path.join(os.environ["DTCAST_BUILD"], "dtcast")
    src, dst = str(tmp_path / "m.onnx"), str(tmp_path / "o.onnx")
    onnx.save(mlp_model(), src)
    p = subprocess.run([cli, "cast", "-q", "--report", "--to", "bf16", "--mode", "graph",
                        "--runtime", "onnxruntime-cpu", "--keep-io-types", src, dst],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "for want of a kernel in bfloat16 in onnxruntime-cpu" in p.stderr, p.stderr
    onnx.checker.check_model(onnx.load(dst), full_check=True)
    ort.InferenceSession(dst, providers=["CPUExecutionProvider"])
    plain = str(tmp_path / "plain.onnx")
    p = subprocess.run([cli, "cast", "-q", "--to", "bf16", "--mode", "graph", src, plain],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    with pytest.raises(Exception, match="NOT_IMPLEMENTED|bfloat16"):
        ort.InferenceSession(plain, providers=["CPUExecutionProvider"])
    for args, want in ((["--mode", "graph", "--runtime", "tvm"], "--runtime"),
                       (["--runtime", "onnxruntime-cpu"], "apply to --mode graph")):
        out = str(tmp_path / "bad.onnx")
        p = subprocess.run([cli, "cast", "--to", "bf16", *args, src, out], capture_output=True,
                           text=True)
        assert p.returncode == 2 and want in p.stderr and p.stderr.count("\n") <= 2, p.stderr
        assert not os.path.exists(out)


def test_select_and_exclude_by_op_type(tmp_path):
    """select_ops / exclude_ops choose weights by the op types of their readers (in subgraphs
    too: W3 is read by the If's then-branch MatMul); in graph mode a weight left out stays
    float32 and feeds its float16 node through a Cast; refused for files other than .onnx."""
    src = str(tmp_path / "m.onnx")
    onnx.save(mlp_model(), src)

    def types(path):
        return {k: v.dtype for k, v in tensors(onnx.load(path).graph).items()}

    def convert(dst, **kw):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            convert_model(src, str(tmp_path / dst), to="float16", **kw)
        return str(tmp_path / dst)

    base = types(convert("all.onnx"))
    assert {"W1_float16", "W2_float16", "then_branch/W3_float16", "B1_float16"} <= set(base)
    got = types(convert("nomm.onnx", exclude_ops=["MatMul"]))
    assert got["W1"] == got["W2"] == got["then_branch/W3"] == np.float32, got
    assert "B1_float16" in got and "W1_float16" not in got
    got = types(convert("mm.onnx", select_ops=["Mat*"]))
    assert {"W1_float16", "W2_float16", "then_branch/W3_float16"} <= set(got)
    assert got["B1"] == np.float32 and "B1_float16" not in got
    got = types(convert("mix.onnx", select_ops=["MatMul"], select=["B1"], exclude=["W2"]))
    assert "W1_float16" in got and "B1_float16" in got and got["W2"] == np.float32
    # graph mode: W1 left out stays float32, a Cast feeds the float16 MatMul
    out = convert("graph.onnx", mode="graph", exclude_ops=["MatMul"], keep_io_types=True)
    m = onnx.load(out)
    onnx.checker.check_model(m, full_check=True)
    inits = {t.name: t.data_type for t in m.graph.initializer}
    assert inits["W1"] == TP.FLOAT and inits["B1"] == TP.FLOAT16, inits
    assert any(n.op_type == "Cast" and n.input[0] == "W1" for n in m.graph.node)
    feeds = [{"x": RNG.standard_normal((4, 64)).astype(np.float32), "cond": np.array(c)}
             for c in (True, False)]
    for a, b in zip(run(src, feeds), run(out, feeds)):
        np.testing.assert_allclose(b, a, rtol=1e-2, atol=2e-2)
    npy = str(tmp_path / "a.npy")
    np.save(npy, np.ones(4, np.float32))
    cli = os.environ.get("DTCAST_CLI") or os.path.join(os.environ["DTCAST_BUILD"], "dtcast")
    for flag in (["--select-op", "MatMul"], ["--mode", "graph"], ["--keep-io-types"]):
        p = subprocess.run([cli, "cast", "--to", "f16", *flag, npy, str(tmp_path / "b.npy")],
                           capture_output=True, text=True)
        assert p.returncode == 2 and "apply to ONNX models (.onnx)" in p.stderr, p.stderr
        assert not os.path.exists(str(tmp_path / "b.npy"))
