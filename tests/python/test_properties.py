"""Properties of dtcast.cast that hold for every input, checked with hypothesis.

Against exact arithmetic (fractions.Fraction, Python integers) and the conversion's own
definition (docs/conversion.md), not against another library:

- round trip: a narrow float code -> float32 -> the same type is the same code (non-NaN codes),
  under every rounding mode (an exact value never rounds);
- monotonicity: x <= y implies cast(x) <= cast(y), for every float target and every mode
  (saturating, so overflow to NaN in types without Inf does not break the order);
- saturation: with saturate=True a finite input never becomes Inf or NaN and stays in
  [-max, max] (float8_e8m0fnu: never 0xFF);
- directed modes bracket the exact value: floor(x) <= x <= ceil(x), |trunc(x)| <= |x|, the
  two are neighbours (or equal, when x is representable), and odd picks one of them;
- integer targets: trunc then modulo 2^bits under int_overflow="wrap", clamped under
  "saturate", NaN -> 0 under both.
"""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

import dtcast
from dtcast._types import lookup

SETTINGS = settings(max_examples=500, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])

FLOATS = [t for t in dtcast.types("float")]
NARROW = [t for t in FLOATS if lookup(t).bits <= 16]
INTS = dtcast.types("signed") + dtcast.types("unsigned")
MODES = ["rne", "round", "floor", "ceil", "trunc", "odd"]

finite64 = st.floats(allow_nan=False, allow_infinity=False, width=64)
# values at the scale of the narrow types (most of the interesting ones are here)
scaled = st.builds(lambda m, e: m * 2.0 ** e, st.floats(-2, 2, allow_nan=False, width=64),
                   st.integers(-140, 130))
values = st.one_of(finite64, scaled, st.sampled_from([0.0, -0.0, 1.0, 1.5, 2.5, 448.0, 464.0,
                                                      57344.0, 65520.0, 2.0 ** -127, 6.0]))


def as_f64(a):
    return dtcast.cast(a, "float64")


def fr(v):
    return Fraction(float(v))


@SETTINGS
@given(st.sampled_from(NARROW), st.lists(st.integers(0, 65535), min_size=1, max_size=64),
       st.sampled_from(MODES))
def test_round_trip_through_float32(t, raw, mode):
    ti = lookup(t)
    nbits = 6 if ti.code in (27, 28) else ti.bits
    codes = np.array([r % (1 << nbits) for r in raw], dtype=np.uint16 if nbits > 8 else np.uint8)
    x = codes.view(ti.dtype)
    keep = ~np.isnan(as_f64(x))
    x, codes = x[keep], codes[keep]
    back = dtcast.cast(dtcast.cast(x, "float32", round=mode), t, round=mode)
    assert (back.view(codes.dtype) == codes).all(), (t, mode, codes, back.view(codes.dtype))


@SETTINGS
@given(st.sampled_from(FLOATS), st.lists(values, min_size=2, max_size=40),
       st.sampled_from(MODES), st.sampled_from(["float64", "float32"]))
def test_monotonic(t, xs, mode, src):
    with np.errstate(over="ignore"):
        x = np.sort(np.array(xs, dtype=np.float64).astype(src))
    if t == "float8_e8m0fnu":  # encodes the magnitude: monotonic on positive values
        x = x[x > 0]
    r = as_f64(dtcast.cast(x, t, round=mode, saturate=True))
    assert not np.isnan(r).any()
    assert (np.diff(r) >= 0).all(), (t, mode, x, r)


@SETTINGS
@given(st.sampled_from(FLOATS), st.lists(st.one_of(values, st.sampled_from([1e308, -1e308])),
                                         min_size=1, max_size=40),
       st.sampled_from(MODES + ["default"]))
def test_saturation_bounds(t, xs, mode):
    x = np.array(xs, dtype=np.float64)
    r = dtcast.cast(x, t, round=None if mode == "default" else mode, saturate=True)
    v = as_f64(r)
    big = float(dtcast.finfo(t).max)
    assert np.isfinite(v).all(), (t, mode, x, v)
    assert (np.abs(v) <= big).all()
    # the same for +-Inf inputs: +-max (float8_e8m0fnu, which gives 0xFF, is the documented
    # exception: docs/conversion.md "Infinity inputs")
    if t != "float8_e8m0fnu":
        inf = as_f64(dtcast.cast(np.float64([np.inf, -np.inf]), t, saturate=True))
        assert inf.tolist() == [big, float(dtcast.finfo(t).min)]


@SETTINGS
@given(st.sampled_from(FLOATS), st.lists(values, min_size=1, max_size=40))
def test_directed_modes_bracket_exact(t, xs):
    x = np.array(xs, dtype=np.float64)
    if t == "float8_e8m0fnu":  # the magnitude, from the smallest value 2^-127 up
        x = x[np.abs(x) >= 2.0 ** -127]
        x = np.abs(x)
    lo = as_f64(dtcast.cast(x, t, round="floor", overflow="saturate"))
    hi = as_f64(dtcast.cast(x, t, round="ceil", overflow="saturate"))
    tr = as_f64(dtcast.cast(x, t, round="trunc", overflow="saturate"))
    od_r = dtcast.cast(x, t, round="odd", overflow="saturate")
    od = as_f64(od_r)
    od_codes = od_r.view(f"u{od_r.dtype.itemsize}").tolist()
    big = Fraction(float(dtcast.finfo(t).max))
    low = Fraction(float(dtcast.finfo(t).min))  # 0 for float8_e5m3fnu, else -max
    for xv, a, b, c, d, dc in zip(x, lo, hi, tr, od, od_codes):
        e = fr(xv)
        if abs(e) > big or e < low:  # saturated: both are +-max (or 0, the unsigned end)
            continue
        assert fr(a) <= e <= fr(b), (t, xv, a, b)
        assert abs(fr(c)) <= abs(e), (t, xv, c)
        assert c in (a, b) and d in (a, b), (t, xv, a, b, c, d)
        if a == b:
            assert fr(a) == e  # equal only when x is representable
        else:
            # neighbours: nothing representable strictly between them
            mid = as_f64(dtcast.cast(np.float64([(a + b) / 2]), t, round="rne"))[0]
            assert mid in (a, b)
            # round to odd: the neighbour whose last mantissa bit is 1 (float8_e8m0fnu has no
            # mantissa: its odd is the power of two below)
            if t == "float8_e8m0fnu":
                assert d == a
            else:
                assert dc & 1 == 1, (t, xv, d, hex(dc))


@SETTINGS
@given(st.sampled_from(INTS), st.lists(st.one_of(values, st.just(float("nan")),
                                                 st.floats(-1e20, 1e20)), min_size=1,
                                       max_size=40))
def test_int_overflow_policies(t, xs):
    x = np.array(xs, dtype=np.float64)
    info = dtcast.iinfo(t)
    wrap = dtcast.cast(x, t, int_overflow="wrap")
    sat = dtcast.cast(x, t, int_overflow="saturate")
    for xv, w, s in zip(x, wrap.tolist(), sat.tolist()):
        if np.isnan(xv):
            assert w == 0 and s == 0
            continue
        n = int(fr(xv))  # trunc toward zero, exactly
        assert s == min(max(n, info.min), info.max), (t, xv, s)
        m = n % (1 << info.bits)
        if info.kind == "i" and m > info.max:
            m -= 1 << info.bits
        assert w == m, (t, xv, w)


@SETTINGS
@given(st.sampled_from(INTS), st.sampled_from(INTS), st.lists(st.integers(-2 ** 63, 2 ** 64 - 1),
                                                              min_size=1, max_size=40))
def test_int_to_int_saturate_clamps(src, dst, vals):
    si, di = dtcast.iinfo(src), dtcast.iinfo(dst)
    vals = [min(max(v, si.min), si.max) for v in vals]
    x = dtcast.cast(np.array(vals, dtype=object).astype(np.float64), src) \
        if si.bits < 8 else np.array(vals, dtype=dtcast.dtype(src))
    vals = [int(v) for v in x.tolist()]
    sat = dtcast.cast(x, dst, int_overflow="saturate").tolist()
    assert sat == [min(max(v, di.min), di.max) for v in vals], (src, dst)


def test_properties_can_fail():
    """A wrong rounding is caught: rne's result is not below the exact value for ceil."""
    x = np.float64([1 + 2.0 ** -5])  # float8_e4m3fn: between 1 and 1.125, nearer 1
    assert as_f64(dtcast.cast(x, "float8_e4m3fn", round="rne"))[0] < fr(x[0])
    with pytest.raises(AssertionError):
        assert fr(as_f64(dtcast.cast(x, "float8_e4m3fn", round="rne"))[0]) >= fr(x[0])
