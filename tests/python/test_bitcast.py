"""dtcast.bitcast and the BitCast node of `dtcast onnx-run`, against independent oracles:
numpy's ``view`` (bytes of every pair of byte-or-wider types of one width, on random bits), the
sub-byte codes computed here from the formats' definitions (int4 two's complement, float4e2m1
sign/exponent/mantissa), and ONNX's reference implementation (onnx.reference) on BitCast-26
models. Width mismatches and strings are refused with both widths named."""

import os
import subprocess
import tempfile

import ml_dtypes
import numpy as np
import pytest

import dtcast

from conftest import BUILD

RNG = np.random.default_rng(20260126)

BY_WIDTH = {
    8: [np.uint8, np.int8, np.bool_, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz,
        ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz, ml_dtypes.float8_e8m0fnu,
        ml_dtypes.float8_e4m3, ml_dtypes.float8_e3m4, ml_dtypes.float8_e4m3b11fnuz],
    16: [np.uint16, np.int16, np.float16, ml_dtypes.bfloat16],
    32: [np.uint32, np.int32, np.float32],
    64: [np.uint64, np.int64, np.float64, np.complex64],
    128: [np.complex128],
}
PAIRS = [(a, b, w) for w, ts in BY_WIDTH.items() for a in ts for b in ts]


def name(t):
    return np.dtype(t).name


@pytest.mark.parametrize("src,dst,width", PAIRS,
                         ids=[f"{name(a)}-{name(b)}" for a, b, _ in PAIRS])
def test_bitcast_is_numpy_view(src, dst, width):
    raw = RNG.integers(0, 256, size=(3, 5, width // 8), dtype=np.uint8)
    if np.dtype(src) == np.bool_:
        raw = raw & 1  # a numpy bool holds 0 or 1
    x = raw.reshape(-1).view(src).reshape(3, 5)
    y = dtcast.bitcast(x, dst)
    assert y.dtype == np.dtype(dst) and y.shape == (3, 5)
    assert y.tobytes() == x.view(dst).tobytes()


def test_bitcast_keeps_every_byte_of_a_bool():
    x = np.array([0, 1, 2, 255], dtype=np.uint8)
    y = dtcast.bitcast(x, "bool")
    assert y.dtype == np.bool_ and y.view(np.uint8).tolist() == [0, 1, 2, 255]


def test_bitcast_shapes():
    x = np.float32(-2.5)
    y = dtcast.bitcast(np.array(x), "int32")
    assert y.shape == () and int(y) == int(np.array(x).view(np.int32))
    e = dtcast.bitcast(np.zeros((0, 3), np.float16), "bfloat16")
    assert e.shape == (0, 3) and e.dtype == ml_dtypes.bfloat16
    t = np.arange(24, dtype=np.int16).reshape(2, 3, 4)[:, ::2]  # not contiguous
    assert dtcast.bitcast(t, "float16").tobytes() == np.ascontiguousarray(t).view(np.float16).tobytes()


def int_of(code, bits):
    return code - (1 << bits) if code >> (bits - 1) else code


def float4_of(code):
    sign = -1.0 if code & 8 else 1.0
    e, m = (code >> 1) & 3, code & 1
    return sign * (m / 2 if e == 0 else 2.0 ** (e - 1) * (1 + m / 2))


SUB = {"int4": (4, ml_dtypes.int4, lambda c: int_of(c, 4)),
       "uint4": (4, ml_dtypes.uint4, lambda c: c),
       "float4_e2m1fn": (4, ml_dtypes.float4_e2m1fn, float4_of),
       "int2": (2, ml_dtypes.int2, lambda c: int_of(c, 2)),
       "uint2": (2, ml_dtypes.uint2, lambda c: c)}
SUB_PAIRS = [(a, b) for a in SUB for b in SUB if SUB[a][0] == SUB[b][0]]


@pytest.mark.parametrize("src,dst", SUB_PAIRS, ids=[f"{a}-{b}" for a, b in SUB_PAIRS])
def test_bitcast_sub_byte_codes(src, dst):
    bits, sdt, sval = SUB[src]
    _, ddt, dval = SUB[dst]
    codes = list(range(1 << bits)) * 3
    x = np.array([sval(c) for c in codes], dtype=np.float64).astype(sdt).reshape(3, -1)
    y = dtcast.bitcast(x, dst)
    assert y.dtype == np.dtype(ddt) and y.shape == x.shape
    got = y.astype(np.float64).reshape(-1)
    want = np.array([dval(c) for c in codes])
    assert got.tolist() == want.tolist()
    assert np.signbit(got).tolist() == np.signbit(want).tolist()  # float4 -0 is code 8


def test_bitcast_float6_keeps_the_six_bits():
    codes = np.arange(64, dtype=np.uint8)
    x = codes.view(ml_dtypes.float6_e2m3fn)  # ml_dtypes: one element per byte, low 6 bits
    y = dtcast.bitcast(x, "float6_e3m2fn")
    assert y.dtype == ml_dtypes.float6_e3m2fn
    assert y.view(np.uint8).tolist() == codes.tolist()
    with pytest.raises(dtcast.Error, match="6 bits.*8 bits"):
        dtcast.bitcast(x, "uint8")


def test_bitcast_width_mismatch_names_both():
    with pytest.raises(dtcast.Error) as e:
        dtcast.bitcast(np.zeros(4, np.float32), "float16")
    assert "32 bits" in str(e.value) and "16 bits" in str(e.value)
    assert e.value.status == dtcast.Status.UNSUPPORTED
    with pytest.raises(dtcast.Error, match="8 bits.*4 bits"):
        dtcast.bitcast(np.zeros(4, np.int8), "int4")
    with pytest.raises(dtcast.Error, match="strings"):
        dtcast.bitcast(np.array(["1"]), "uint8")


# ---- ONNX: BitCast-26 through `dtcast onnx-run`, against onnx.reference ------------------------

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

DTCAST = os.path.join(BUILD, "dtcast")


def model(src_code, to, opset=26):
    node = helper.make_node("BitCast", ["x"], ["y"], to=to)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", src_code, None)],
                          [helper.make_tensor_value_info("y", to, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def onnx_run(m, x):
    with tempfile.TemporaryDirectory() as tmp:
        mp, xp, out = (os.path.join(tmp, n) for n in ("model.onnx", "x.pb", "out"))
        with open(mp, "wb") as f:
            f.write(m.SerializeToString())
        with open(xp, "wb") as f:
            f.write(numpy_helper.from_array(x, "x").SerializeToString())
        p = subprocess.run([DTCAST, "onnx-run", mp, xp, "--out", out], capture_output=True,
                           text=True)
        if p.returncode != 0:
            return None, p.stderr
        return numpy_helper.to_array(onnx.load_tensor(os.path.join(out, "output_0.pb"))), ""


ONNX_CASES = [
    (np.float32, TensorProto.INT32), (np.int32, TensorProto.UINT32),
    (np.float16, TensorProto.BFLOAT16), (ml_dtypes.bfloat16, TensorProto.INT16),
    (np.uint8, TensorProto.FLOAT8E4M3FN), (ml_dtypes.float8_e5m2fnuz, TensorProto.INT8),
    (np.int8, TensorProto.FLOAT8E8M0), (np.bool_, TensorProto.UINT8),
    (np.complex64, TensorProto.INT64), (np.float64, TensorProto.COMPLEX64),
    (np.complex128, TensorProto.COMPLEX128),
]


@pytest.mark.skipif(not os.path.exists(DTCAST), reason="no dtcast CLI in the build")
@pytest.mark.parametrize("src,to", ONNX_CASES,
                         ids=[f"{name(s)}-{TensorProto.DataType.Name(t)}" for s, t in ONNX_CASES])
def test_onnx_run_bitcast_is_the_reference(src, to):
    width = np.dtype(src).itemsize
    raw = RNG.integers(0, 256, size=6 * width, dtype=np.uint8)
    if np.dtype(src) == np.bool_:
        raw &= 1
    x = raw.view(src).reshape(2, 3)
    m = model(helper.np_dtype_to_tensor_dtype(np.dtype(src)), to)
    want = ReferenceEvaluator(m).run(None, {"x": x})[0]
    got, err = onnx_run(m, x)
    assert got is not None, err
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


@pytest.mark.skipif(not os.path.exists(DTCAST), reason="no dtcast CLI in the build")
def test_onnx_run_bitcast_sub_byte_is_the_reference():
    x = np.array([1, -8, 7, -1, 0], dtype=ml_dtypes.int4)
    for to in (TensorProto.UINT4, TensorProto.FLOAT4E2M1):
        m = model(TensorProto.INT4, to)
        want = ReferenceEvaluator(m).run(None, {"x": x})[0]
        got, err = onnx_run(m, x)
        assert got is not None, err
        assert got.dtype == want.dtype
        assert got.astype(np.float64).tolist() == want.astype(np.float64).tolist()


@pytest.mark.skipif(not os.path.exists(DTCAST), reason="no dtcast CLI in the build")
def test_onnx_run_bitcast_refusals():
    # the schema's shape inference refuses int8 -> int4 (8 and 4 bits); so does dtcast
    with pytest.raises(Exception, match="bit-width"):
        onnx.shape_inference.infer_shapes(model(TensorProto.INT8, TensorProto.INT4), strict_mode=True)
    got, err = onnx_run(model(TensorProto.INT8, TensorProto.INT4), np.zeros(3, np.int8))
    assert got is None and "8 bits" in err and "4 bits" in err
    got, err = onnx_run(model(TensorProto.FLOAT, TensorProto.INT32, opset=25),
                        np.zeros(3, np.float32))
    assert got is None and "opset 26" in err
    got, err = onnx_run(model(TensorProto.FLOAT, TensorProto.INT64), np.zeros(3, np.float32))
    assert got is None and "32 bits" in err and "64 bits" in err
