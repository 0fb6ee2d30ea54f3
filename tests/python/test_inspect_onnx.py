"""dtcast inspect of ONNX models (.onnx) against the onnx package: every initializer and
Constant tensor onnx.load lists (names, data types, dims, external data location / offset /
length), the bytes at each raw_data offset equal to the TensorProto's raw_data, and hostile
models named in one error."""

import json
import os
import subprocess

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import dtcast

from conftest import BUILD

CLI = os.path.join(BUILD, "dtcast")
HERE = os.path.dirname(os.path.abspath(__file__))


def inspect_json(path):
    p = subprocess.run([CLI, "inspect", "--json", str(path)], capture_output=True, timeout=60)
    return p.returncode, json.loads(p.stdout) if p.stdout else None, p.stderr.decode()


def onnx_tensors(g):
    """(TensorProto, in a subgraph, a Constant's value) of the graph, in file order: what the
    model holds, read by onnx."""
    out = []
    for t in g.initializer:
        out.append(t)
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                t = onnx.TensorProto()
                t.CopyFrom(a.t)
                if n.op_type == "Constant" and a.name == "value":
                    t.name = n.output[0]  # listed under the name the graph reads it by
                out.append(t)
            elif a.type == onnx.AttributeProto.GRAPH:
                out.extend(onnx_tensors(a.g))
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sg in a.graphs:
                    out.extend(onnx_tensors(sg))
    return out


def model_with_everything():
    w = nh.from_array(np.arange(64, dtype=np.float32).reshape(8, 8) / 7, "w")
    b16 = nh.from_array(np.arange(8, dtype=np.float16), "b16")
    i64 = h.make_tensor("shape", TP.INT64, [2], [8, 8])  # typed field (int64_data)
    c = h.make_node("Constant", [], ["c"], value=nh.from_array(np.ones((8, 8), np.float32)))
    then_g = h.make_graph([h.make_node("Constant", [], ["t"], value=nh.from_array(
        np.full((8,), 2.0, np.float32), "tv"))], "then", [],
        [h.make_tensor_value_info("t", TP.FLOAT, [8])])
    else_g = h.make_graph([h.make_node("Identity", ["b32"], ["e"])], "else", [],
                          [h.make_tensor_value_info("e", TP.FLOAT, [8])],
                          [nh.from_array(np.zeros(8, np.float32), "b32")])
    nodes = [c, h.make_node("MatMul", ["x", "w"], ["y0"]), h.make_node("Add", ["y0", "c"], ["y1"]),
             h.make_node("Reshape", ["y1", "shape"], ["y"]),
             h.make_node("If", ["cond"], ["z"], then_branch=then_g, else_branch=else_g),
             h.make_node("Cast", ["b16"], ["b"], to=TP.FLOAT)]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [8, 8]),
                                  h.make_tensor_value_info("cond", TP.BOOL, [])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [8, 8]),
                      h.make_tensor_value_info("z", TP.FLOAT, [8]),
                      h.make_tensor_value_info("b", TP.FLOAT, [8])], [w, b16, i64])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 19)])


def check_against_onnx(path, doc):
    m = onnx.load(str(path), load_external_data=False)
    want = onnx_tensors(m.graph)
    got = {t["name"]: t for t in doc["tensors"]}
    assert len(got) == len(doc["tensors"])  # (the models here name every tensor once)
    assert sorted(got) == sorted(t.name for t in want)
    raw = open(path, "rb").read()
    folder = os.path.dirname(str(path))
    for t in want:
        g = got[t.name]
        assert g["shape"] == list(t.dims), t.name
        assert g["dtype"] == h.tensor_dtype_to_np_dtype(t.data_type).name, t.name
        n = int(np.prod(t.dims)) if len(t.dims) else 1
        assert g["elements"] == n
        if t.data_location == TP.EXTERNAL:
            ext = {e.key: e.value for e in t.external_data}
            assert g["file"] == os.path.join(folder, ext["location"])
            assert g["offset"] == int(ext.get("offset", 0))
            assert g["bytes"] == int(ext["length"])
            data = open(os.path.join(folder, ext["location"]), "rb").read()
            arr = nh.to_array(t, base_dir=folder)
            assert data[g["offset"]:g["offset"] + g["bytes"]] == arr.tobytes()
        elif t.HasField("raw_data"):
            assert g["storage"].startswith("raw_data")
            assert raw[g["offset"]:g["offset"] + g["bytes"]] == t.raw_data
        else:
            assert g["storage"].startswith("typed field") and g["offset"] is None
    assert doc["opset"] == [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")][0]


def test_inspect_model_equals_onnx(tmp_path):
    p = tmp_path / "m.onnx"
    onnx.save(model_with_everything(), str(p))
    rc, doc, err = inspect_json(p)
    assert rc == 0, err
    assert doc["kind"] == "onnx" and doc["valid"]
    check_against_onnx(p, doc)
    storage = {t["name"]: t["storage"] for t in doc["tensors"]}
    assert "a Constant's value" in storage["c"]
    assert "in a subgraph" in storage["t"] and "in a subgraph" in storage["b32"]
    py = dtcast.inspect(str(p))  # the Python API: the same listing, in process
    assert py["kind"] == "onnx"
    assert [t["name"] for t in py["tensors"]] == [t["name"] for t in doc["tensors"]]


def test_inspect_external_data_equals_onnx(tmp_path):
    p = tmp_path / "ext.onnx"
    onnx.save(model_with_everything(), str(p), save_as_external_data=True,
              all_tensors_to_one_file=True, location="ext.onnx.data", size_threshold=0)
    rc, doc, err = inspect_json(p)
    assert rc == 0, err
    check_against_onnx(p, doc)
    assert len(doc["files"]) == 2  # the model and its one data file, listed once


def test_inspect_exported_networks():
    for name in ("cnn.onnx", "transformer.onnx"):
        p = os.path.join(HERE, "..", "data", "onnx", name)
        rc, doc, err = inspect_json(p)
        assert rc == 0, err
        check_against_onnx(p, doc)


def test_inspect_hostile_models(tmp_path):
    p = tmp_path / "ext.onnx"
    onnx.save(model_with_everything(), str(p), save_as_external_data=True,
              all_tensors_to_one_file=True, location="ext.onnx.data", size_threshold=0)
    data = tmp_path / "ext.onnx.data"
    data.write_bytes(data.read_bytes()[:100])  # truncated data file
    rc, doc, err = inspect_json(p)
    assert rc == 1 and "go beyond it" in err and "ext.onnx" in err
    m = onnx.load(str(p), load_external_data=False)
    for e in m.graph.initializer[0].external_data:
        if e.key == "location":
            e.value = "../escape.data"
    q = tmp_path / "escape.onnx"
    onnx.save(m, str(q))
    rc, doc, err = inspect_json(q)
    assert rc == 1 and "'../escape.data' is not a relative path inside the model's folder" in err
    whole = open(tmp_path / "m.onnx", "wb")
    whole.write(model_with_everything().SerializeToString()[:-7])  # truncated model
    whole.close()
    rc, doc, err = inspect_json(tmp_path / "m.onnx")
    assert rc == 1 and "m.onnx" in err and err.count("\n") <= 2
