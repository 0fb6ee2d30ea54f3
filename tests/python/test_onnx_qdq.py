"""dtcast.quantize_linear / dequantize_linear / dynamic_quantize_linear against an oracle written
in numpy from the words of docs/onnx.md ("Quantization operators") alone, bit for bit, on
random tensors over the type matrix: x float32/float16/bfloat16/int32, every y type of each
opset, scales of x's type and (opset 23+) of their own type incl. int32 and float8e8m0, per
tensor / per axis / blocked (short last block), zero points, saturate 0/1, precision, with NaN,
±Inf and exact .5 ties in x. Where the oracle's numpy steps would round twice (float64 to float8
or bfloat16 through ml_dtypes), the matrix leaves the pair out rather than trust them.

When the `onnx` package imports, its reference implementation (onnx.reference) is a second
oracle on finite inputs; dtcast differs from it by design only as docs/onnx.md says (+Inf and
values beyond int32 through the reference's int32 overflow, NaN signs)."""

import numpy as np
import ml_dtypes
import pytest

import dtcast

RNG = np.random.default_rng(20261124)

F32, F16, BF16, I32 = np.float32, np.float16, ml_dtypes.bfloat16, np.int32
E8M0 = ml_dtypes.float8_e8m0fnu
INT_RANGES = {
    "int8": (np.int8, -128, 127), "uint8": (np.uint8, 0, 255),
    "int16": (np.int16, -32768, 32767), "uint16": (np.uint16, 0, 65535),
    "int4": (ml_dtypes.int4, -8, 7), "uint4": (ml_dtypes.uint4, 0, 15),
    "int2": (ml_dtypes.int2, -2, 1), "uint2": (ml_dtypes.uint2, 0, 3),
}
FLOAT8 = {"float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
          "float8_e5m2": ml_dtypes.float8_e5m2, "float8_e5m2fnuz": ml_dtypes.float8_e5m2fnuz}
FLOAT4 = ml_dtypes.float4_e2m1fn
SINCE = {"int8": 10, "uint8": 10, "float8_e4m3fn": 19, "float8_e4m3fnuz": 19, "float8_e5m2": 19,
         "float8_e5m2fnuz": 19, "int16": 21, "uint16": 21, "int4": 21, "uint4": 21,
         "float4_e2m1fn": 23, "int2": 25, "uint2": 25}


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint8).tobytes() if a.dtype.itemsize else b""


def canon(q):
    """docs/onnx.md: a NaN result is the positive quiet NaN."""
    q = np.array(q)
    nan = np.isnan(q.astype(np.float64))
    if nan.any():
        q[nan] = np.abs(q[nan].astype(np.float32)).astype(q.dtype)
    return q


def expand(s, shape, axis, block):
    """The scale (or zero point) broadcast to x's shape: per tensor, per axis, blocked."""
    s = np.asarray(s)
    if s.size == 1:
        return np.broadcast_to(s.reshape(()), shape)
    axis = axis % len(shape)
    if block == 0:
        view = [1] * len(shape)
        view[axis] = shape[axis]
        return np.broadcast_to(s.reshape(view), shape)
    return np.repeat(s, block, axis=axis).take(range(shape[axis]), axis=axis)


def quotient(x, s, precision):
    """q = x / s in the precision docs/onnx.md names."""
    if precision is not None:
        xp, sp = x.astype(precision), s.astype(precision)
        if np.dtype(precision).itemsize == 2:
            return (xp.astype(F32) / sp.astype(F32)).astype(precision)
        return xp / sp
    if x.dtype == I32 or s.dtype == I32:
        return x.astype(np.float64) / s.astype(np.float64)
    if x.dtype == s.dtype and x.dtype.itemsize == 2:
        return (x.astype(F32) / s.astype(F32)).astype(x.dtype)
    return x.astype(F32) / s.astype(F32)


def oracle_q(x, s, z, axis, block, saturate, y, precision=None):
    se = expand(s, x.shape, axis, block)
    q = canon(quotient(x, se, precision))
    if y in INT_RANGES:
        dt, lo, hi = INT_RANGES[y]
        r = np.rint(q.astype(np.float64))
        nan = np.isnan(r)
        r = np.clip(np.where(nan, 0, r), -2.0**40, 2.0**40)
        if z is not None:
            r = r + expand(z, x.shape, axis, block).astype(np.float64)
        r = np.clip(r, lo, hi)
        r[nan] = lo
        return r.astype(np.int64).astype(dt)
    if y in FLOAT8:
        dt = FLOAT8[y]
        if saturate:
            m = float(ml_dtypes.finfo(dt).max)
            q = np.clip(q.astype(F32), -m, m)  # NaN stays NaN
        return canon(q.astype(F32)).astype(dt)
    # float4e2m1: q + zero point, then saturate; NaN -> 0x8 (the positive NaN's code)
    if z is not None:
        zf = expand(z, x.shape, axis, block)
        q = canon((q.astype(F32) + zf.astype(F32)).astype(q.dtype) if q.dtype.itemsize == 2
                  else q + zf.astype(q.dtype))
    q64 = q.astype(np.float64)
    nan = np.isnan(q64)
    out = np.clip(np.where(nan, 0, q64), -6, 6).astype(F32).astype(FLOAT4)
    out.view(np.uint8)[nan] = 0x8
    return out


def oracle_dq(x, s, z, axis, block, out):
    se = expand(s, x.shape, axis, block)
    if x.dtype == I32 and z is not None:
        v = (x.astype(np.float64) - expand(z, x.shape, axis, block).astype(np.float64)) \
            * se.astype(np.float64)
    else:
        v = x.astype(F32)
        if z is not None:
            v = v - expand(z, x.shape, axis, block).astype(F32)
        v = v * se.astype(F32)
    return canon(v).astype(out)


def random_x(shape, dtype, scale_hint=1.0):
    n = int(np.prod(shape))
    if dtype == I32:
        v = RNG.integers(-2**31, 2**31, n, dtype=np.int64)
        v[: n // 3] = RNG.integers(-3000, 3000, n // 3)
        return v.astype(I32).reshape(shape)
    v = RNG.normal(0, 200, n) * scale_hint
    k = RNG.integers(-300, 300, n)
    ties = RNG.random(n) < 0.3
    v[ties] = (k[ties] + 0.5) * scale_hint
    ints = RNG.random(n) < 0.1
    v[ints] = k[ints] * scale_hint
    specials = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30]
    v[: len(specials)] = specials[: min(len(specials), n)]
    return RNG.permutation(v).astype(dtype).reshape(shape)


def random_scale(shape, dtype):
    n = int(np.prod(shape)) if shape else 1
    if dtype == I32:
        return RNG.integers(1, 9, n).astype(I32).reshape(shape)
    if dtype == E8M0:
        return (2.0 ** RNG.integers(-4, 4, n)).astype(F32).astype(E8M0).reshape(shape)
    v = RNG.choice([0.5, 1.0, 0.1, 3.0, 0.0234, 7.25, -0.5], n) * RNG.choice([1, 1, 1.37], n)
    return v.astype(dtype).reshape(shape)


def random_zp(shape, y):
    if y in INT_RANGES:
        dt, lo, hi = INT_RANGES[y]
        return RNG.integers(lo, hi + 1, int(np.prod(shape)) if shape else 1).astype(dt).reshape(shape)
    if y == "float4_e2m1fn":
        return RNG.choice([0.0, 0.5, -1.0, 1.5], int(np.prod(shape)) if shape else 1) \
            .astype(F32).astype(FLOAT4).reshape(shape)
    return np.zeros(shape, dtype=FLOAT8[y])


GRANS = [("tensor", (), 1, 0), ("axis", (5,), 1, 0), ("blocked", (4, 3, 7), 1, 2)]
X_SHAPE = (4, 5, 7)


def layout(gran):
    name, sshape, axis, block = gran
    if name == "blocked":
        return (4, 3, 7), 1, 2, (4, 5, 7)  # 5 along axis 1 in blocks of 2: the last one short
    return sshape, axis, block, X_SHAPE


# (x dtype, scale dtype, opset) pairs docs/onnx.md allows
PAIRS = [(F32, F32, 13), (I32, F32, 13), (F32, F32, 25), (F16, F16, 19), (BF16, BF16, 21),
         (F16, F32, 23), (F32, F16, 23), (BF16, F16, 23), (F32, BF16, 23), (F32, I32, 23),
         (F32, E8M0, 24), (I32, F32, 25), (F16, F16, 25)]


def y_types(opset, xdtype, sdtype):
    out = [y for y, since in SINCE.items() if since <= opset]
    if np.float64 == np.result_type(np.float32, I32) and (xdtype == I32 or sdtype == I32):
        # a float64 quotient: ml_dtypes' float64 -> float8/float4 may round twice; integers only
        out = [y for y in out if y in INT_RANGES]
    return out


CASES = [(p, g, y, zp, sat) for p in PAIRS for g in GRANS for y in y_types(p[2], p[0], p[1])
         for zp in (False, True) for sat in ((0, 1) if y in FLOAT8 else (1,))
         if not (g[0] == "blocked" and p[2] < 21) and not (g[0] != "tensor" and p[2] < 13)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "%s_%s_op%d_%s_%s%s_sat%d" % (
    np.dtype(c[0][0]).name, np.dtype(c[0][1]).name, c[0][2], c[1][0], c[2],
    "_zp" if c[3] else "", c[4]))
def test_quantize_linear_oracle(case):
    (xd, sd, opset), gran, y, with_zp, sat = case
    sshape, axis, block, xshape = layout(gran)
    s = random_scale(sshape, sd)
    hint = float(np.abs(s.astype(np.float64)).max()) or 1.0
    x = random_x(xshape, xd, hint)
    z = random_zp(sshape, y) if with_zp else None
    if opset < 21 and not with_zp and y != "uint8":
        pytest.skip("no output_dtype before opset 21: y is the zero point's type or uint8")
    got = dtcast.quantize_linear(x, s, z, axis=axis, block_size=block, saturate=sat,
                                 output_dtype=None if (with_zp and opset < 21) else
                                 (y if opset >= 21 else None), opset=opset)
    want = oracle_q(x, s, z, axis, block, sat, y)
    assert got.dtype == want.dtype and got.shape == want.shape
    bad = np.flatnonzero(np.frombuffer(bits(got), np.uint8) != np.frombuffer(bits(want), np.uint8))
    assert bad.size == 0, "byte %d: got %r want %r (x %r)" % (
        bad[0], got.reshape(-1)[bad[0] // got.itemsize], want.reshape(-1)[bad[0] // got.itemsize],
        x.reshape(-1)[bad[0] // got.itemsize])


@pytest.mark.parametrize("precision", [F32, F16, BF16, np.float64])
@pytest.mark.parametrize("xd", [F32, F16, I32])
def test_quantize_linear_precision(precision, xd):
    s = random_scale((), F32)
    x = random_x(X_SHAPE, xd, float(abs(s)) or 1.0)
    for y in ("int8", "uint16"):
        got = dtcast.quantize_linear(x, s, output_dtype=y, precision=precision, opset=23)
        want = oracle_q(x, s, None, 1, 0, 1, y, precision=precision)
        assert bits(got) == bits(want), y


DQ_X = ["int8", "uint8", "int16", "uint16", "int4", "uint4", "int2", "uint2", "int32",
        "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float4_e2m1fn"]


def random_codes(shape, name):
    dt = np.dtype(getattr(ml_dtypes, name, None) or getattr(np, name))
    n = int(np.prod(shape))
    if name == "int32":
        return RNG.integers(-2**31, 2**31, n).astype(np.int32).reshape(shape)
    b = RNG.integers(0, 256, n).astype(np.uint8)
    if name in INT_RANGES and np.dtype(dt).itemsize == 2:
        return RNG.integers(INT_RANGES[name][1], INT_RANGES[name][2] + 1, n).astype(dt).reshape(shape)
    if name in ("int4", "uint4", "int2", "uint2"):
        lo, hi = INT_RANGES[name][1:]
        return RNG.integers(lo, hi + 1, n).astype(dt).reshape(shape)
    if name == "float4_e2m1fn":
        return np.frombuffer((b & 0xF).tobytes(), np.uint8).view(FLOAT4).reshape(shape)
    return b.view(dt).reshape(shape)


@pytest.mark.parametrize("out", [F32, F16, BF16])
@pytest.mark.parametrize("sd", [F32, F16, BF16, E8M0])
@pytest.mark.parametrize("gran", GRANS, ids=lambda g: g[0])
@pytest.mark.parametrize("xname", DQ_X)
def test_dequantize_linear_oracle(xname, gran, sd, out):
    sshape, axis, block, xshape = layout(gran)
    x = random_codes(xshape, xname)
    s = random_scale(sshape, sd)
    with_zp = xname in INT_RANGES or xname == "int32"
    z = None
    if with_zp:
        z = (RNG.integers(-5, 5, int(np.prod(sshape)) if sshape else 1).astype(np.int32)
             .reshape(sshape) if xname == "int32" else random_zp(sshape, xname))
    if xname == "int32" and out != F32:
        pytest.skip("float64 products to 16-bit outputs: the oracle's numpy/ml_dtypes step may "
                    "round twice")
    got = dtcast.dequantize_linear(x, s, z, axis=axis, block_size=block, output_dtype=out)
    want = oracle_dq(x, s, z, axis, block, out)
    assert got.dtype == want.dtype and bits(got) == bits(want)


def test_dequantize_default_output_is_scale_type():
    x = np.array([1, -2, 3], np.int8)
    assert dtcast.dequantize_linear(x, np.float16(0.5)).dtype == np.float16
    with pytest.raises(dtcast.Error, match="output_dtype"):
        dtcast.dequantize_linear(x, np.array(1.0, np.float32).astype(E8M0))


def test_float8_nonzero_zero_point_is_an_error():
    x = np.zeros(4, ml_dtypes.float8_e4m3fn)
    z = np.array([0, 0, 1, 0], np.float32).astype(ml_dtypes.float8_e4m3fn)
    with pytest.raises(dtcast.Error, match="zero_point element 2"):
        dtcast.dequantize_linear(x.reshape(1, 4), np.ones(4, F32), z, axis=1)


def test_opset_refusals():
    x = np.ones(4, F16)
    with pytest.raises(dtcast.Error, match="QuantizeLinear-18"):
        dtcast.quantize_linear(x, F16(1), opset=18)
    with pytest.raises(dtcast.Error, match="opset 25"):
        dtcast.quantize_linear(np.ones(4, F32), F32(1), output_dtype="int2", opset=24)


def oracle_dynamic(x):
    mx = max(F32(0), x.max()) if x.size else F32(0)
    mn = min(F32(0), x.min()) if x.size else F32(0)
    scale = F32(1) / F32(255) if mx == mn else F32(mx - mn) / F32(255)
    zf = F32(F32(0) - mn / scale)
    zp = np.rint(np.clip(zf, 0, 255))
    y = np.clip(np.rint(x / scale) + zp, 0, 255).astype(np.uint8)
    return y, F32(scale), np.uint8(zp)


@pytest.mark.parametrize("kind", ["normal", "positive", "negative", "zeros", "ties", "wide"])
def test_dynamic_quantize_linear_oracle(kind):
    n = 1000
    x = {"normal": RNG.normal(0, 3, n), "positive": RNG.random(n) * 7,
         "negative": -RNG.random(n) * 7, "zeros": np.zeros(n),
         "ties": (RNG.integers(-100, 155, n) + 0.5) * (3.0 / 255), "wide": RNG.normal(0, 1e30, n)
         }[kind].astype(F32)
    y, s, z = dtcast.dynamic_quantize_linear(x)
    wy, ws, wz = oracle_dynamic(x)
    assert bits(s) == bits(np.array(ws)) and int(z) == int(wz) and bits(y) == bits(wy)


def test_dynamic_quantize_linear_refuses_nan():
    x = np.array([1, 2, np.inf], F32)
    with pytest.raises(dtcast.Error, match="element 2"):
        dtcast.dynamic_quantize_linear(x)


# ---- the ONNX reference implementation as a second oracle (when onnx imports) -----------------

def test_onnx_reference_quantize():
    onnx = pytest.importorskip("onnx")
    from onnx import helper, TensorProto
    from onnx.reference import ReferenceEvaluator

    for y, code in (("int8", TensorProto.INT8), ("uint8", TensorProto.UINT8),
                    ("float8_e4m3fn", TensorProto.FLOAT8E4M3FN), ("int4", TensorProto.INT4)):
        node = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], axis=1, output_dtype=code)
        graph = helper.make_graph([node], "g",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, None),
                                   helper.make_tensor_value_info("s", TensorProto.FLOAT, None)],
                                  [helper.make_tensor_value_info("y", code, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
        x = random_x(X_SHAPE, F32, 0.5)
        x = np.where(np.isfinite(x) & (np.abs(x) < 1e6), x, 0).astype(F32)  # docs/onnx.md
        s = np.array([0.5, 1, 0.25, 3, 0.1], F32)
        ref = ReferenceEvaluator(model).run(None, {"x": x, "s": s})[0]
        got = dtcast.quantize_linear(x, s, axis=1, output_dtype=y, opset=21)
        assert bits(got) == bits(np.asarray(ref).astype(got.dtype)), y
