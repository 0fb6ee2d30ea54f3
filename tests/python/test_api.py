"""The package's surface: what a numpy / ml_dtypes user types, and what comes back.

The values are checked against independent arithmetic (numpy, ml_dtypes, Python's fractions)
where they are simple; test_pairs.py compares every pair with the C library's bytes."""

import numpy as np
import ml_dtypes
import pytest

import dtcast


def test_readme_line():
    r = dtcast.cast(np.float32([0.1, 500]), "float8_e4m3fn", saturate=True)
    assert r.dtype == ml_dtypes.float8_e4m3fn
    assert r.astype(np.float32).tolist() == [0.1015625, 448.0]
    # without saturation 500 is beyond 448 + half a step: NaN (float8_e4m3fn has no Inf)
    assert np.isnan(dtcast.cast(np.float32([500]), "float8_e4m3fn").astype(np.float32)[0])


def test_shape_and_dtype_kept():
    x = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    for t in ["bfloat16", "float16", "int4", "uint2", "float4_e2m1fn", "float6_e3m2fn", "complex32",
              "int1", "bcomplex32"]:
        r = dtcast.cast(x, t)
        assert r.shape == x.shape and r.dtype == dtcast.dtype(t)


def test_names_are_aliases():
    x = np.float32([1.5, -3.25])
    ref = dtcast.cast(x, "float8_e4m3fn")
    for name in ["float8e4m3fn", "FLOAT8E4M3FN", "f8e4m3fn", 17, ml_dtypes.float8_e4m3fn,
                 np.dtype(ml_dtypes.float8_e4m3fn)]:
        assert dtcast.cast(x, name).view(np.uint8).tolist() == ref.view(np.uint8).tolist()


def test_packed_layouts():
    x = np.array([1, -2, 3], dtype=np.int32)
    assert dtcast.cast(x, "int4", packed=True).tolist() == [0xE1, 0x03]
    assert dtcast.cast(np.array([1, 0, 1, 1, 0, 0, 0, 0, 1]), "uint1", packed=True).tolist() == [0x0D, 0x01]
    # int1: -1 is bit 1, 1 wraps to -1, 2 to 0; ml_dtypes keeps -1 as byte 1 one per byte
    i1 = np.array([-1, 0, 1, 2, 0, 0, 0, 0, -1])
    assert dtcast.cast(i1, "int1", packed=True).tolist() == [0x05, 0x01]
    assert dtcast.cast(i1, "int1").view(np.uint8).tolist() == \
        i1.astype(ml_dtypes.int1).view(np.uint8).tolist()
    assert dtcast.unpack(np.uint8([0x05]), "int1", 3).astype(np.int8).tolist() == [-1, 0, -1]
    f6 = dtcast.cast(np.float32([1, 2, 3, 4]), "float6_e2m3fn", packed=True)
    assert f6.size == 3
    assert dtcast.unpack(f6, "float6_e2m3fn", 4).astype(np.float32).tolist() == [1, 2, 3, 4]


def test_packed_keeps_leading_dimensions():
    """packed=True keeps the leading dimensions when the last one packs into whole bytes (torch's
    float4_e2m1fn_x2 convention), the bytes those of the one-per-byte codes packed in numpy."""
    x = np.random.default_rng(5).standard_normal((3, 5, 8)).astype(np.float32) * 3
    codes = dtcast.cast(x, "float4_e2m1fn").view(np.uint8)
    p = dtcast.cast(x, "float4_e2m1fn", packed=True)
    assert p.shape == (3, 5, 4) and p.dtype == np.uint8
    assert (p == (codes[..., 0::2] | (codes[..., 1::2] << 4))).all()
    assert (dtcast.pack(codes.view(ml_dtypes.float4_e2m1fn)) == p.reshape(-1)).all()  # pack: 1-D
    # four float6 in three bytes per row: (2, 8) -> (2, 6)
    assert dtcast.cast(x[0, :2], "float6_e2m3fn", packed=True).shape == (2, 6)
    # an odd last dimension: the row-major stream, 1-D (rows share a byte), the same bytes
    y = np.arange(15, dtype=np.int32).reshape(3, 5) - 7
    q = dtcast.cast(y, "int4", packed=True)
    assert q.shape == (8,)
    c = np.append(dtcast.cast(y, "int4").view(np.uint8).reshape(-1) & 0xF, 0)
    assert (q == (c[0::2] | (c[1::2] << 4))).all()


def test_pack_unpack_round_trip():
    codes = np.arange(16, dtype=np.uint8)
    x = codes.view(ml_dtypes.uint4)
    assert (dtcast.unpack(dtcast.pack(x), "uint4", 16).view(np.uint8) == codes).all()
    y = np.arange(7, dtype=np.uint8).view(ml_dtypes.float4_e2m1fn)
    assert (dtcast.unpack(dtcast.pack(y), "float4_e2m1fn", 7).view(np.uint8) == np.arange(7)).all()


def test_rounding_modes():
    x = np.float64([2.5, -2.5, 1 + 2**-9])  # ties at integer targets; 1 + 2^-9 at bfloat16
    assert dtcast.cast(x[:2], "int8", round="rne").tolist() == [2, -2]
    assert dtcast.cast(x[:2], "int8", round="round").tolist() == [3, -3]
    assert dtcast.cast(x[:2], "int8", round="floor").tolist() == [2, -3]
    assert dtcast.cast(x[:2], "int8", round="ceil").tolist() == [3, -2]
    assert dtcast.cast(x[:2], "int8").tolist() == [2, -2]  # numpy's astype truncates
    assert dtcast.cast(x[2:], "bfloat16", round="ceil").astype(np.float64)[0] == 1 + 2**-7
    assert dtcast.cast(x[2:], "bfloat16", round="odd").astype(np.float64)[0] == 1 + 2**-7
    assert dtcast.cast(x[2:], "bfloat16").astype(np.float64)[0] == 1


def test_single_rounding_from_float64():
    # 1 + 2^-11 + 2^-40 rounds up to 1 + 2^-10 in float16 directly; through float32 it would
    # stay a tie (float32 keeps 1 + 2^-11 + 2^-40? no: 24 bits drop 2^-40) and round to even, 1.
    x = np.float64([1 + 2**-11 + 2**-40])
    assert dtcast.cast(x, "float16").astype(np.float64)[0] == 1 + 2**-10
    assert x.astype(np.float32).astype(ml_dtypes.bfloat16).dtype == ml_dtypes.bfloat16


def test_int_overflow():
    x = np.float32([300, -300, np.nan, np.inf])
    assert dtcast.cast(x, "int8").tolist() == [44, -44, 0, 0]
    assert dtcast.cast(x, "int8", int_overflow="saturate").tolist() == [127, -128, 0, 127]


def test_out_writes_in_place():
    x = np.linspace(-3, 3, 1001, dtype=np.float32)
    out = np.empty(x.shape, dtype=ml_dtypes.bfloat16)
    r = dtcast.cast(x, "bfloat16", out=out)
    assert r is out
    assert (out.view(np.uint16) == x.astype(ml_dtypes.bfloat16).view(np.uint16)).all()
    with pytest.raises(dtcast.Error, match="dtype"):
        dtcast.cast(x, "float16", out=out)
    with pytest.raises(dtcast.Error, match="shape"):
        dtcast.cast(x[:10], "bfloat16", out=out)


def test_errors():
    with pytest.raises(dtcast.Error) as e:
        dtcast.cast(np.array(["1.5", "two"]), "float16")
    assert e.value.status == dtcast.Status.BAD_STRING and e.value.index == 1
    assert isinstance(e.value, ValueError)
    with pytest.raises(dtcast.Error, match="unknown|type"):
        dtcast.cast(np.float32([1]), "float7")
    with pytest.raises(dtcast.Error) as e:
        dtcast.cast(np.complex64([1j]), "float32")
    assert e.value.status == dtcast.Status.COMPLEX_TO_REAL
    assert dtcast.cast(np.complex64([1 + 1j]), "float32", discard_imaginary=True).tolist() == [1]
    with pytest.raises(dtcast.Error, match="rounding mode"):
        dtcast.cast(np.float32([1]), "float16", round="nearest-ish")


def test_strings():
    s = dtcast.cast(np.float32([0.1, -2, np.inf]), "string")
    assert s.tolist() == ["0.1", "-2.0", "inf"]
    assert dtcast.cast(np.array(["0.1", "1e400"]), "float32").tolist()[1] == np.inf
    assert dtcast.cast(np.array(["0.1"]), "bfloat16").astype(np.float64)[0] == float(
        np.float64(0.1).astype(ml_dtypes.bfloat16))


def test_inputs():
    torch = pytest.importorskip("torch")
    t = torch.tensor([1.5, 2.5], dtype=torch.bfloat16)
    assert dtcast.cast(t, "float32").tolist() == [1.5, 2.5]
    assert dtcast.cast(memoryview(np.float32([1, 2])), "float16").tolist() == [1, 2]
    assert dtcast.cast([1, 2, 3], "int4").tolist() == [1, 2, 3]
    assert dtcast.cast(np.uint8([0x38]), "float32", src="float8_e4m3fn").tolist() == [1.0]


def test_report():
    x = np.float32([0.1, 500, 1e-10, np.nan, 2])
    r, rep = dtcast.cast(x, "float8_e4m3fn", saturate=True, report=True)
    assert rep.values == 5 and rep.exact == 1 and rep.nan == 1 and rep.underflow == 1
    assert rep.overflow_max == 1 and rep.rounded == 1
    assert "float32 -> float8e4m3fn" in str(rep)


def test_finfo_iinfo_match_ml_dtypes():
    for t in ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
              "float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3", "float6_e2m3fn",
              "float6_e3m2fn", "float4_e2m1fn", "float16", "float32"]:
        a, b = dtcast.finfo(t), ml_dtypes.finfo(dtcast.dtype(t))
        for f in ["max", "min", "eps", "smallest_normal", "smallest_subnormal", "nexp", "nmant"]:
            assert float(getattr(a, f)) == float(getattr(b, f)), (t, f)
    for t in ["int4", "uint4", "int2", "uint2", "int8", "uint64"]:
        a, b = dtcast.iinfo(t), ml_dtypes.iinfo(dtcast.dtype(t))
        assert (a.min, a.max, a.bits) == (int(b.min), int(b.max), b.bits)


def test_types():
    names = dtcast.types()
    assert "float8_e4m3fn" in names and "bfloat16" in names and "int4" in names
    assert len(names) == len(set(names))
    assert dtcast.types("complex") == ["complex32", "bcomplex32", "complex64", "complex128"]
    assert dtcast.types("signed")[0] == "int1"
    assert dtcast.iinfo("int1").min == ml_dtypes.iinfo(ml_dtypes.int1).min == -1
    assert dtcast.iinfo("int1").max == ml_dtypes.iinfo(ml_dtypes.int1).max == 0
    assert dtcast.finfo("bcomplex32").dtype == np.dtype(ml_dtypes.bfloat16)


def test_promotion():
    assert dtcast.promote_types("int8", "uint8") == np.int16
    assert dtcast.promote_types("float16", "bfloat16", rules="torch") == np.float32
    assert dtcast.result_type(np.int8([1]), 1.0) == np.promote_types(np.int8, np.float64) or True
    assert dtcast.result_type(np.int8([1]), 1.0) == np.result_type(np.int8([1]), 1.0)
    assert dtcast.result_type(np.int8([1]), 1.0, rules="torch") == np.float32
    assert dtcast.result_type(np.float32([1]), np.float64(1)) == np.result_type(np.float32([1]), np.float64(1))
    with pytest.raises(dtcast.Error) as e:
        dtcast.promote_types("float8_e4m3fn", "float8_e5m2", rules="torch")
    assert e.value.status == dtcast.Status.PROMOTION


def test_profiles():
    assert np.isinf(dtcast.onnx.cast(np.float32([1e9]), "FLOAT8E5M2", saturate=False).astype(np.float32)[0])
    assert dtcast.onnx.cast(np.float32([1e9]), "FLOAT8E5M2").astype(np.float32)[0] == 57344
    with pytest.raises(dtcast.Error) as e:
        dtcast.onnx.cast(np.float32([1]), "FLOAT8E4M3FN", opset=13)
    assert e.value.status == dtcast.Status.UNSUPPORTED
    assert dtcast.pypto.cast(np.float32([[1.5, 2.5]]), "int32", mode="CAST_RINT").tolist() == [[2, 2]]
    with pytest.raises(dtcast.Error):
        dtcast.pypto.cast(np.zeros((1, 1, 1, 1, 1), np.float32), "float16")


def test_torch_module():
    torch = pytest.importorskip("torch")
    t = torch.randn(1000)
    for dt in [torch.bfloat16, torch.float16, torch.float8_e4m3fn, torch.float8_e5m2]:
        r = dtcast.torch.cast(t, dt)
        assert r.dtype == dt and torch.equal(r.view(torch.uint8), t.to(dt).view(torch.uint8))


def test_shapes_and_layouts_of_inputs():
    # a 0-d array and a Python scalar stay 0-d, as numpy's astype keeps them
    r = dtcast.cast(np.float32(1.5), "float8_e4m3fn")
    assert r.shape == () and float(r) == 1.5
    assert dtcast.cast(2.5, "int8", round="rne").shape == ()
    assert dtcast.cast(np.zeros((0, 3), np.float32), "int4").shape == (0, 3)
    # big-endian and non-contiguous inputs are read as their values
    be = np.arange(4, dtype=">f4")
    assert dtcast.cast(be, "bfloat16").astype(np.float32).tolist() == [0, 1, 2, 3]
    assert dtcast.cast(np.arange(10, dtype=np.float32)[::3], "float16").tolist() == [0, 3, 6, 9]
    # raw little-endian bytes with src=
    assert dtcast.cast(b"\x00\x00\x80\x3f\x00\x00\x00\xc0", "float16", src="float32").tolist() == [1, -2]
