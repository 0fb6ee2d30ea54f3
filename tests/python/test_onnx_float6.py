"""ONNX 1.23 (opset 28, IR 14) float6 against the real onnx package as the oracle:

- the type codes and names are onnx's (TensorProto.FLOAT6E2M3 = 27, FLOAT6E3M2 = 28), and the
  opsets that take them are those whose schemas list them (onnx.defs);
- Cast-28 into float6 from every float16 value and many float32 values (ties, overflow, ±Inf,
  NaN, subnormals), and out of float6 (every code) into the other types, byte for byte against
  onnx.reference.ReferenceEvaluator (which casts with ml_dtypes 0.7);
- QuantizeLinear-28 / DequantizeLinear-28 with float6 y / x against the same reference;
- TensorProto float6 files made by onnx.numpy_helper.from_array and onnx.helper.make_tensor
  (raw_data and int32_data) round-trip through `dtcast cast` byte for byte, files dtcast writes
  read back with onnx.numpy_helper.to_array, wrong sizes are refused naming the byte count;
- `dtcast onnx-run` runs a Cast-28 model as the reference does.
"""
import os
import subprocess

import ml_dtypes
import numpy as np
import pytest

import dtcast
from dtcast._types import lookup

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

SEED = 20261201
F6 = {TensorProto.FLOAT6E2M3: ml_dtypes.float6_e2m3fn, TensorProto.FLOAT6E3M2: ml_dtypes.float6_e3m2fn}
DTCAST = os.path.join(os.environ.get("DTCAST_BUILD", "build"), "dtcast")


def u8(a):
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


def run_ref(node, inputs, opset=28):
    """The node run by onnx's reference at `opset`; inputs: (name, array) pairs."""
    vis = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
           for n, a in inputs]
    graph = helper.make_graph([node], "g", vis,
                              [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return ReferenceEvaluator(model).run(None, dict(inputs))[0]


def float32_values():
    """Edges of both float6 formats and random float32 in and around their ranges (the same
    values in every test, whichever tests run)."""
    rng = np.random.default_rng(SEED)
    edges = []
    for t in F6.values():
        codes = np.arange(64, dtype=np.uint8).view(t).astype(np.float64)
        mids = (codes[1:32] + codes[:31]) / 2  # ties between neighbours (positive half)
        edges += list(codes) + list(mids) + list(-mids) + list(np.nextafter(mids, 0)) + \
            list(np.nextafter(mids, 100))
    edges += [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 7.75, 8.0, 30.0, 32.0, 1e30, -1e30,
              3.4028235e38, 1e-45, -1e-45, 0.0625, 0.03125, 0.0624, 0.0626]
    rand = np.concatenate([rng.uniform(-40, 40, 20000), rng.uniform(-1, 1, 10000),
                           rng.standard_normal(10000) * 1e-2,
                           rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32)
                           .view(np.float32).astype(np.float64)])
    return np.array(edges + list(rand), dtype=np.float64).astype(np.float32)


def test_codes_and_names_are_onnx():
    assert TensorProto.FLOAT6E2M3 == 27 and TensorProto.FLOAT6E3M2 == 28
    assert onnx.IR_VERSION == 14 and onnx.defs.onnx_opset_version() == 28
    assert dtcast.onnx.OPSET_MAX == onnx.defs.onnx_opset_version()
    for code, t in F6.items():
        name = TensorProto.DataType.Name(code)
        assert lookup(name).code == code and lookup(str(code)).code == code
        assert lookup(t).code == code and dtcast.dtype(name) == np.dtype(t)


def allowed(op, opset):
    """Type codes the schema of op at opset lists for its first type constraint (T1)."""
    schema = onnx.defs.get_schema(op, opset)
    names = schema.type_constraints[0].allowed_type_strs
    return {getattr(TensorProto, s[len("tensor("):-1].upper(), None) for s in names}


@pytest.mark.parametrize("opset", [24, 25, 26, 27, 28])
def test_cast_opsets_take_what_the_schema_lists(opset):
    x = np.array([1.5], np.float32)
    takes = allowed("Cast", opset)
    for code in F6:
        if code in takes:
            assert dtcast.onnx.cast(x, code, opset=opset).dtype == F6[code]
        else:
            with pytest.raises(dtcast.Error, match="opset 28"):
                dtcast.onnx.cast(x, code, opset=opset)
    assert (TensorProto.FLOAT6E2M3 in takes) == (opset >= 28)


def test_castlike_28_is_castlike_25():
    schema = onnx.defs.get_schema("CastLike", 28)
    assert schema.since_version == 25
    assert not set(F6) & allowed("CastLike", 28)
    x = np.array([1.5], np.float32)
    for code, t in F6.items():
        with pytest.raises(dtcast.Error, match="CastLike-25"):
            dtcast.onnx.cast_like(x, np.zeros(1, t), opset=28)
        with pytest.raises(dtcast.Error, match="CastLike-25"):
            dtcast.onnx.cast_like(np.zeros(1, t), x, opset=27)
    y = dtcast.onnx.cast_like(x, np.zeros(1, ml_dtypes.float8_e4m3fn), opset=28)
    assert u8(y).tolist() == u8(run_ref(helper.make_node("CastLike", ["x", "l"], ["y"]),
                                        [("x", x), ("l", np.zeros(1, ml_dtypes.float8_e4m3fn))]
                                        )).tolist()


@pytest.mark.parametrize("code", sorted(F6))
@pytest.mark.parametrize("saturate", [0, 1])
def test_cast28_into_float6(code, saturate):
    f16 = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    bf16 = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(ml_dtypes.bfloat16)
    # float64 just beside the ties, where a pass through float32 would round twice (the
    # reference casts float64 to float6 directly: ml_dtypes rounds once)
    codes = np.unique(np.arange(64, dtype=np.uint8).view(F6[code]).astype(np.float64))
    ties = (codes[1:] + codes[:-1]) / 2
    f64 = np.concatenate([ties, ties + 2.0**-40, ties - 2.0**-40, -ties - 2.0**-40,
                          np.random.default_rng(SEED).uniform(-40, 40, 20000)])
    for x in (float32_values(), f16, bf16, f64):
        node = helper.make_node("Cast", ["x"], ["y"], to=code, saturate=saturate)
        want = run_ref(node, [("x", x)])
        got = dtcast.onnx.cast(x, code, opset=28, saturate=bool(saturate))
        assert got.dtype == want.dtype == F6[code]
        bad = np.flatnonzero(u8(got) != u8(want))
        assert bad.size == 0, [(float(x[i]), int(u8(got)[i]), int(u8(want)[i])) for i in bad[:8]]


# Targets of Cast-28 from float6 whose every result ONNX defines (the integer ones hold every
# float6 value, 28 at most; uint8 and the small integers would take negatives or 28 out of range,
# which ONNX leaves undefined: docs/onnx.md)
FROM_F6 = [TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.DOUBLE,
           TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64,
           TensorProto.BOOL, TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ,
           TensorProto.FLOAT8E5M2, TensorProto.FLOAT8E5M2FNUZ, TensorProto.FLOAT4E2M1,
           TensorProto.FLOAT6E2M3, TensorProto.FLOAT6E3M2]


@pytest.mark.parametrize("src", sorted(F6))
@pytest.mark.parametrize("to", FROM_F6)
def test_cast28_out_of_float6(src, to):
    x = np.arange(64, dtype=np.uint8).view(F6[src])
    want = run_ref(helper.make_node("Cast", ["x"], ["y"], to=to), [("x", x)])
    got = dtcast.onnx.cast(x, to, opset=28)
    assert got.dtype == want.dtype
    assert u8(got).tolist() == u8(want).tolist()


def qdq_inputs(x, scale, zp):
    return [("x", x), ("s", scale)] + ([("z", zp)] if zp is not None else [])


# float4e2m1 too: its y takes the zero point the same way (a float16 quotient plus the zero point
# is float32 in NumPy, a bfloat16 one bfloat16)
Q_TYPES = {**F6, TensorProto.FLOAT4E2M1: ml_dtypes.float4_e2m1fn}


def near_ties(t, xtype, scale, zp):
    """x (3 columns) whose quotient x / scale plus the zero point lands on, or a few ulps of
    xtype beside, each tie between neighbouring codes of t: where rounding the sum to the
    quotient's type first would move it across the tie."""
    codes = np.arange(256 if t == ml_dtypes.float4_e2m1fn else 64, dtype=np.uint8)
    codes = codes[codes < (16 if t == ml_dtypes.float4_e2m1fn else 64)].view(t)
    v = np.unique(codes.astype(np.float64))
    ties = (v[1:] + v[:-1]) / 2
    s = np.broadcast_to(scale.astype(np.float64).reshape(-1), (3,))
    z = np.broadcast_to(zp.astype(np.float64).reshape(-1), (3,)) if zp is not None else np.zeros(3)
    with np.errstate(over="ignore"):
        cols = [((ties - z[j]) * s[j]).astype(xtype) for j in range(3)]
    ut = np.uint32 if np.dtype(xtype).itemsize == 4 else np.uint16
    out = []
    for c in cols:  # the encodings k = -3..3 steps away: neighbours in xtype's own ulps
        b = c.view(ut).astype(np.int64)
        out.append(np.concatenate([(b + k).astype(ut).view(xtype) for k in range(-3, 4)]))
    return np.stack(out, axis=1)


@pytest.mark.parametrize("code", sorted(Q_TYPES))
@pytest.mark.parametrize("xtype", [np.float32, np.float16, ml_dtypes.bfloat16])
@pytest.mark.parametrize("saturate", [0, 1])
@pytest.mark.parametrize("with_zp", [False, True])
def test_quantize_linear_28_float6(code, xtype, saturate, with_zp):
    t = Q_TYPES[code]
    with np.errstate(over="ignore"):
        base = np.concatenate([float32_values()[:6000], [np.nan, np.inf, -np.inf]]).astype(xtype)
    base = base[: base.size // 3 * 3].reshape(-1, 3)
    for scale in (np.array(0.37, xtype), np.array([0.5, 2.0, 0.0625], xtype)):
        zp = None
        if with_zp:
            zp = np.array([0.5, -1.0, 1.5][: scale.size], np.float32).astype(t).reshape(scale.shape)
        x = np.concatenate([base, near_ties(t, xtype, scale, zp)])
        node = helper.make_node("QuantizeLinear", ["x", "s"] + (["z"] if with_zp else []), ["y"],
                                saturate=saturate, axis=1,
                                **({} if with_zp else {"output_dtype": code}))
        want = run_ref(node, qdq_inputs(x, scale, zp))
        # a NaN quotient is +NaN in dtcast's Q (docs/onnx.md), which ml_dtypes casts to 0x20;
        # the reference keeps x's NaN sign through its division (-NaN -> 0x00)
        want[np.isnan(x.astype(np.float32))] = np.array(np.nan, np.float32).astype(t)
        got = dtcast.onnx.quantize_linear(x, scale, zp, axis=1, saturate=saturate,
                                          output_dtype=None if with_zp else code, opset=28)
        assert got.dtype == want.dtype == t and got.shape == x.shape
        bad = np.flatnonzero(u8(got) != u8(want))
        assert bad.size == 0, [(float(x.reshape(-1)[i]), int(u8(got)[i]), int(u8(want)[i]))
                               for i in bad[:8]]
    if code in F6:
        with pytest.raises(dtcast.Error, match="opset 28"):
            dtcast.onnx.quantize_linear(x, np.array(1.0, xtype), output_dtype=code, opset=27)


@pytest.mark.parametrize("code", sorted(F6))
@pytest.mark.parametrize("stype", [np.float32, np.float16, ml_dtypes.bfloat16])
@pytest.mark.parametrize("with_zp", [False, True])
def test_dequantize_linear_28_float6(code, stype, with_zp):
    t = F6[code]
    x = np.tile(np.arange(64, dtype=np.uint8), 3).view(t).reshape(-1, 4)
    for scale in (np.array(0.37, stype), np.array([0.5, 3.0, 0.0625, 1e-3], stype)):
        zp = np.array([0.5, -1.0, 1.5, 0.25][: scale.size], np.float32).astype(t).reshape(
            scale.shape) if with_zp else None
        node = helper.make_node("DequantizeLinear", ["x", "s"] + (["z"] if with_zp else []),
                                ["y"], axis=1)
        want = run_ref(node, qdq_inputs(x, scale, zp))
        got = dtcast.onnx.dequantize_linear(x, scale, zp, axis=1, opset=28)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert u8(got).tolist() == u8(want).tolist()


# ---- TensorProto files ------------------------------------------------------------------------

def cli(*args):
    return subprocess.run([DTCAST, *args], capture_output=True, text=True)


def random_float6(t, shape):
    return np.random.default_rng(SEED + int(np.prod(shape))).integers(0, 64, int(np.prod(shape)), dtype=np.uint8).view(t).reshape(shape)


SHAPES = [(0,), (1,), (2,), (3,), (4,), (5,), (6,), (7,), (8,), (9,), (3, 5), (2, 3, 7), (1000,)]


@pytest.mark.parametrize("code", sorted(F6))
def test_pb_from_array_round_trips(code, tmp_path):
    t = F6[code]
    for shape in SHAPES:
        a = random_float6(t, shape)
        tp = numpy_helper.from_array(a, "w")
        assert len(tp.raw_data) == -(-a.size * 6 // 8)
        src, dst = tmp_path / "a.pb", tmp_path / "b.pb"
        src.write_bytes(tp.SerializeToString())
        r = cli("cast", "--to", str(code), str(src), str(dst))
        assert r.returncode == 0, r.stderr
        if a.size:  # onnx writes an empty raw_data field for no elements; dtcast writes none
            assert dst.read_bytes() == src.read_bytes(), shape
        # and through float32: dtcast's float32 values are ml_dtypes', its float6 bytes onnx's
        mid, back = tmp_path / "f.pb", tmp_path / "c.pb"
        assert cli("cast", "--to", "float32", str(src), str(mid)).returncode == 0
        f = numpy_helper.to_array(onnx.load_tensor(str(mid)))
        assert f.dtype == np.float32 and f.shape == shape
        assert u8(f).tolist() == u8(a.astype(np.float32)).tolist()
        assert cli("cast", "--to", TensorProto.DataType.Name(code), str(mid), str(back)
                   ).returncode == 0
        if a.size:
            assert back.read_bytes() == src.read_bytes()


@pytest.mark.parametrize("code", sorted(F6))
@pytest.mark.parametrize("raw", [False, True])
def test_pb_make_tensor_round_trips(code, raw, tmp_path):
    t = F6[code]
    for shape in SHAPES[:12]:
        a = random_float6(t, shape)
        tp = helper.make_tensor("w", code, shape, a.astype(np.float32).reshape(-1).tolist(),
                                raw=False) if not raw else \
            helper.make_tensor("w", code, shape, a.reshape(-1), raw=True)
        if not raw:
            assert len(tp.int32_data) == a.size and not tp.raw_data
        src, dst = tmp_path / "a.pb", tmp_path / "b.pb"
        src.write_bytes(tp.SerializeToString())
        r = cli("cast", "--to", str(code), str(src), str(dst))
        assert r.returncode == 0, r.stderr
        out = onnx.load_tensor(str(dst))
        # dtcast writes raw_data: the bytes onnx itself writes for these values
        assert a.size == 0 or dst.read_bytes() == numpy_helper.from_array(numpy_helper.to_array(tp), "w"
                                                           ).SerializeToString()
        assert u8(numpy_helper.to_array(out)).tolist() == u8(a).tolist()


@pytest.mark.parametrize("code", sorted(F6))
def test_pb_written_from_npy_is_what_onnx_reads(code, tmp_path):
    x = float32_values()[:4001]
    np.save(tmp_path / "x.npy", x)
    r = cli("cast", "--profile", "onnx", "--to", str(code), str(tmp_path / "x.npy"),
            str(tmp_path / "y.pb"))
    assert r.returncode == 0, r.stderr
    tp = onnx.load_tensor(str(tmp_path / "y.pb"))
    assert tp.data_type == code and list(tp.dims) == [x.size]
    want = run_ref(helper.make_node("Cast", ["x"], ["y"], to=code), [("x", x)])
    assert u8(numpy_helper.to_array(tp)).tolist() == u8(want).tolist()


@pytest.mark.parametrize("code", sorted(F6))
def test_pb_wrong_sizes_refused(code, tmp_path):
    name = {27: "float6e2m3fn", 28: "float6e3m2fn"}[code]
    good = numpy_helper.from_array(random_float6(F6[code], (5,)), "w")  # 4 bytes
    for n in (3, 5, 8):
        tp = onnx.TensorProto()
        tp.CopyFrom(good)
        tp.raw_data = bytes(n)
        (tmp_path / "a.pb").write_bytes(tp.SerializeToString())
        r = cli("cast", "--to", "float32", str(tmp_path / "a.pb"), str(tmp_path / "b.pb"))
        assert r.returncode != 0
        assert f"raw_data is {n} bytes but 5 {name} elements need 4" in r.stderr, r.stderr
        assert not (tmp_path / "b.pb").exists()
    tp = helper.make_tensor("w", code, [3], [1.0, 2.0, 0.5])
    tp.int32_data[1] = 64
    (tmp_path / "a.pb").write_bytes(tp.SerializeToString())
    r = cli("cast", "--to", "float32", str(tmp_path / "a.pb"), str(tmp_path / "b.pb"))
    assert r.returncode != 0 and "int32_data entry 1 is 64" in r.stderr, r.stderr
    del tp.int32_data[2]
    (tmp_path / "a.pb").write_bytes(tp.SerializeToString())
    r = cli("cast", "--to", "float32", str(tmp_path / "a.pb"), str(tmp_path / "b.pb"))
    assert r.returncode != 0 and "int32_data has 2 values but 3" in r.stderr, r.stderr


@pytest.mark.parametrize("code", sorted(F6))
def test_pb_of_dtcast_1_0_still_read(code, tmp_path):
    """dtcast 1.0 wrote float6 .pb files with its own codes 105/106, one code per byte."""
    a = random_float6(F6[code], (9,))
    tp = helper.make_tensor("w", TensorProto.FLOAT, [9], np.zeros(9, np.float32))
    tp.ClearField("float_data")
    tp.data_type = code + 78  # 27 -> 105, 28 -> 106
    tp.raw_data = u8(a).tobytes()
    (tmp_path / "old.pb").write_bytes(tp.SerializeToString())
    r = cli("cast", "--to", str(code), str(tmp_path / "old.pb"), str(tmp_path / "new.pb"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "new.pb").read_bytes() == numpy_helper.from_array(a, "w").SerializeToString()


@pytest.mark.parametrize("code", sorted(F6))
def test_onnx_run_cast28(code, tmp_path):
    x = float32_values()[:3000].reshape(3, -1)
    node = helper.make_node("Cast", ["x"], ["y"], to=code)
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", code, x.shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 28)])
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(tmp_path / "model.onnx"))
    (tmp_path / "x.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    r = cli("onnx-run", str(tmp_path / "model.onnx"), str(tmp_path / "x.pb"), "--out",
            str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    got = onnx.load_tensor(str(tmp_path / "out" / "output_0.pb"))
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    assert got.SerializeToString() == numpy_helper.from_array(want, "y").SerializeToString()
    # the opset-27 model is refused by onnx's checker (its shape inference) and by dtcast alike
    model27 = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 27)])
    with pytest.raises(onnx.shape_inference.InferenceError, match="unsupported type"):
        onnx.checker.check_model(model27, full_check=True)
    onnx.save(model27, str(tmp_path / "model27.onnx"))
    r = cli("onnx-run", str(tmp_path / "model27.onnx"), str(tmp_path / "x.pb"), "--out",
            str(tmp_path / "out27"))
    assert r.returncode != 0 and "opset 28" in r.stderr, r.stderr
