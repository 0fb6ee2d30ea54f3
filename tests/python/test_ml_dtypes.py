"""dtcast.cast against ml_dtypes' (and numpy's) ``astype``, which uses round to nearest even.

Every code of every type of at most 16 bits that ml_dtypes or numpy has (float16, bfloat16,
the float8, float6 and float4 types, float8_e8m0fnu, int1/int2/uint2/int4/uint4, int8..uint16,
bool) is converted to every other such type and to float32/float64/int32/uint32/int64/uint64;
float32 and float64 edge + random arrays are converted to every narrow type. The complex types
of 16-bit parts, complex32 and bcomplex32 (every real part, the imaginary parts a permutation of
the same codes), go to every complex type and (discard_imaginary) to every type above; every
source above, and complex64/complex128 edge + random arrays, go to complex32 and bcomplex32.
dtcast.cast's default (rne for float targets, trunc for integer ones) must give ml_dtypes'
bytes.

The references are pinned (tests/python/constraints.txt): ml_dtypes 0.7.0 and numpy 2.4.6.
Where the two differ, the difference must be one of the explained kinds below, and at each such
element the test asserts what each side gives, with dtcast's value checked against exact
arithmetic (fractions.Fraction) where rounding is involved. Each kind is counted, and the counts
must be the ones recorded in EXPECTED_CODES / EXPECTED_WIDE: a new difference, or one that went
away (a reference that changed), fails.

1. NaN payloads and signs: ml_dtypes keeps NaN payloads (float16 0x7C01 -> float32 0x7F802000)
   and reads the fnuz NaN 0x80 as a negative NaN; dtcast writes the canonical NaN and reads 0x80
   as +NaN (docs/conversion.md "NaN inputs"). Both sides are NaN; in targets without NaN (float4,
   float6) that is -0 from dtcast (+NaN) and +0 from ml_dtypes (-NaN).
2. Float -> integer of NaN, +-Inf and out-of-range values, which numpy and ONNX leave undefined:
   ml_dtypes 0.7 gives 0 for them (0.6 gave whatever the C cast gave), dtcast wraps modulo
   2^bits, NaN/Inf -> 0 (docs/differences.md "NumPy"). Checked with Python integers.
3. float8_e8m0fnu targets: ml_dtypes gives NaN (0xFF) for 0 and negative values; dtcast ignores
   the sign and gives 0x00 (2^-127) for 0 and everything below 2^-127 (docs/conversion.md
   "float8e8m0 targets").
4. complex -> bool: numpy's truth of a complex number is "either part nonzero"; dtcast with
   discard_imaginary converts the real part alone, so 0 + 1j is true in numpy and false in
   dtcast (docs/differences.md "NumPy").
ml_dtypes before 0.7 also rounded float64 twice (through float32) and misrounded float32
subnormals into float8_e8m0fnu; 0.7.0 rounds once, and test_documented_examples shows it.
Anything else is a failure."""

import os
import warnings
from fractions import Fraction

import numpy as np
import ml_dtypes
import pytest

import dtcast
from dtcast._types import lookup

NARROW_FLOATS = ["float16", "bfloat16", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
                 "float8_e5m2fnuz", "float8_e4m3", "float8_e3m4", "float8_e4m3b11fnuz",
                 "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn",
                 "float8_e5m3fnu"]
NARROW_INTS = ["int4", "uint4", "int2", "uint2", "int8", "uint8", "int16", "uint16", "int1"]
SOURCES = NARROW_FLOATS + NARROW_INTS + ["bool"]
TARGETS = SOURCES + ["float32", "float64", "int32", "uint32", "int64", "uint64"]
FNUZ = ("float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz")
NO_NAN = ("float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn")


def all_codes(name):
    """Every code of a type of at most 16 bits, in ml_dtypes' layout (one per byte below 8)."""
    if name == "bool":
        return np.array([False, True])
    t = lookup(name)
    n = 1 << (6 if t.code in (27, 28) else t.bits)
    return np.arange(n, dtype=np.uint16 if t.bits > 8 else np.uint8).view(t.dtype)


def code_view(a):
    return a.view(np.uint8) if a.dtype.itemsize == 1 else a.view(f"u{a.dtype.itemsize}")


def ml_astype(x, target):
    """ml_dtypes' / numpy's astype; where ml_dtypes refuses a pair (float8_e8m0fnu with most
    types, some sub-byte pairs), through float32 or int64 first, which is exact for every
    source here, so the result is still ml_dtypes' one rounding of the source value."""
    dd = dtcast.dtype(target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            try:
                return x.astype(dd)
            except TypeError:
                mid = np.int64 if lookup(x.dtype).kind in ("signed", "unsigned", "bool") \
                    else np.float32
                return x.astype(mid).astype(dd)


def exact(v):
    """A finite float as a Fraction (exactly)."""
    return Fraction(float(v))


# --- the one correct rne rounding, in exact arithmetic -------------------------------------

_GRIDS = {}


def grid(target):
    """(sorted finite values as float64, their codes) of a float type of at most 16 bits,
    positive and negative, -0 left out."""
    if target not in _GRIDS:
        codes = all_codes(target)
        vals = dtcast.cast(codes, "float64")
        keep = np.isfinite(vals) & ~((vals == 0) & np.signbit(vals))
        order = np.argsort(vals[keep], kind="stable")
        _GRIDS[target] = (vals[keep][order], code_view(codes)[keep][order].astype(np.int64))
    return _GRIDS[target]


def rne_exact(x, target):
    """The value round-to-nearest-even gives for the finite float x in a float target (with
    ml_dtypes' and dtcast's overflow rule: beyond max + half an ulp it is Inf or NaN), as a
    float64 (NaN for overflow in a type without Inf)."""
    vals, codes = grid(target)
    info = dtcast.finfo(target)
    fx = exact(x)
    if target == "float8_e8m0fnu":  # powers of two only; ties go up (docs/conversion.md)
        ax = abs(fx)
        if ax <= Fraction(2) ** -127:
            return 2.0 ** -127
        k = ax.numerator.bit_length() - ax.denominator.bit_length()
        while Fraction(2) ** (k + 1) <= ax:
            k += 1
        while Fraction(2) ** k > ax:
            k -= 1
        lo, hi = Fraction(2) ** k, Fraction(2) ** (k + 1)
        r = hi if ax - lo >= hi - ax else lo
        return float(r) if r <= Fraction(2) ** 127 else float("nan")
    i = int(np.searchsorted(vals, float(x)))
    if i < len(vals) and vals[i] == float(x):
        return float(vals[i])
    if i == 0 or i == len(vals):  # beyond +-max: overflow unless within half an ulp
        j = 0 if i == 0 else len(vals) - 1
        ulp = exact(vals[1] - vals[0]) if i == 0 else exact(vals[-1] - vals[-2])
        edge = exact(vals[j])
        if abs(fx - edge) < ulp / 2 or (abs(fx - edge) == ulp / 2 and codes[j] % 2 == 0):
            return float(vals[j])
        return np.copysign(np.inf if info.has_inf else np.nan, float(x))
    lo, hi = exact(vals[i - 1]), exact(vals[i])
    if fx - lo < hi - fx:
        r = i - 1
    elif fx - lo > hi - fx:
        r = i
    else:
        r = i - 1 if codes[i - 1] % 2 == 0 else i
    out = float(vals[r])
    if out == 0 and x < 0 and lookup(target).info["has_negative_zero"]:
        out = -0.0
    return out


def wrap_int(x, target):
    """dtcast's float -> integer rule (trunc, then modulo 2^bits; NaN, Inf -> 0)."""
    if not np.isfinite(x):
        return 0
    info = dtcast.iinfo(target)
    v = int(exact(x))  # int() of a Fraction truncates toward zero
    v %= 1 << info.bits
    if info.kind == "i" and v > info.max:
        v -= 1 << info.bits
    return v


def same(a, b):
    """Float values equal, NaN equal to NaN, -0 distinct from +0."""
    a, b = float(a), float(b)
    if np.isnan(a) or np.isnan(b):
        return np.isnan(a) and np.isnan(b)
    return a == b and np.signbit(a) == np.signbit(b)


# --- the comparison --------------------------------------------------------------------------

SAMPLE = 150  # elements of each kind and pair checked one by one (the rest by kind only)


def explain(x, target, got, ref):
    """Checks the elements where dtcast's bytes differ from ml_dtypes': each must be of one of
    the explained kinds (decided for all of them, vectorised), and up to SAMPLE of each kind,
    spread over them, are checked value by value. Returns the count of each kind; an
    unexplained difference fails."""
    src = lookup(x.dtype)
    t = lookup(target)
    diff = code_view(got) != code_view(ref)
    if not diff.any():
        return {}
    xs = dtcast.cast(x, "float64") if x.dtype != np.float64 else x
    with np.errstate(all="ignore"):
        gs = dtcast.cast(got, "float64") if t.kind == "float" else got
        rs = ref.astype(np.float64) if t.kind == "float" else ref
    kinds = {}
    left = diff.copy()

    def take(name, mask, check):
        nonlocal left
        mask = mask & left
        idx = np.nonzero(mask)[0]
        if idx.size:
            for i in idx[::max(1, idx.size // SAMPLE)]:
                check(xs[i], gs[i], rs[i], i)
            kinds[name] = idx.size
            left = left & ~mask

    if t.kind == "float":
        # (1) NaN in, NaN out on both sides, with another payload or sign
        take("nan payload/sign", np.isnan(xs) & np.isnan(gs) & np.isnan(rs),
             lambda xv, gv, rv, i: None)
        if target in NO_NAN and src.name in FNUZ:
            # (1) the fnuz NaN into a type without NaN: dtcast's +NaN -> -0, ml_dtypes' +0
            def fnuz(xv, gv, rv, i):
                assert same(gv, -0.0) and same(rv, 0.0), (gv, rv)
            take("fnuz nan sign", np.isnan(xs), fnuz)
    if t.kind in ("signed", "unsigned") and src.kind == "float":
        # (2) undefined in numpy / C: NaN, Inf and values whose integer part is out of range
        info = dtcast.iinfo(target)
        with np.errstate(all="ignore"):
            tr = np.trunc(xs)
            # the bounds as exact float64 values (-2^(b-1) and 2^(b-1), 2^b): int64's max
            # 2^63 - 1 is not a float64 and numpy would compare against 2^63
            undefined = ~np.isfinite(xs) | (tr < float(info.min)) | (tr >= float(info.max + 1))

        def wrap(xv, gv, rv, i):
            assert int(gv) == wrap_int(xv, target), (xv, gv)
        take("float->int undefined", undefined, wrap)
    if target == "float8_e8m0fnu":
        # (3) dtcast's encoding of |x|, 0x00 at and below 2^-127; ml_dtypes NaN for 0 and
        # negatives (and tiny float64 values its float32 step flushes), or a misrounding
        def e8m0(xv, gv, rv, i):
            want = rne_exact(xv, target) if np.isfinite(xv) else np.nan
            assert same(gv, want), (x.dtype, xv, gv, want)
            assert not same(rv, want), (xv, rv)  # ml_dtypes' value is not the nearest
        small = (xs <= 0) | (np.abs(xs) < 2.0 ** -127)
        take("e8m0 zero/negative/tiny", small & (np.isnan(rs) | (np.abs(xs) < 2.0 ** -126)), e8m0)
    if target == "float8_e8m0fnu":
        # (3) ml_dtypes misrounds float32 subnormals (1.0156 * 2^-127 -> 2^-126)
        take("e8m0 misrounded by ml_dtypes", np.isfinite(xs) & (xs > 0), e8m0)
    if left.any():
        i = int(np.nonzero(left)[0][0])
        raise AssertionError(f"unexplained ({int(left.sum())}): {x.dtype} {xs[i]!r} -> {target}: "
                             f"dtcast {gs[i]!r} (0x{int(code_view(got)[i]):x}), ml_dtypes "
                             f"{rs[i]!r} (0x{int(code_view(ref)[i]):x})")
    return kinds


# The differences of each kind, per source, against ml_dtypes 0.7.0 (every code of the source
# into every type of TARGETS; the wide sets into every narrow type).
NAN, UNDEF, E8M0, FNUZ_NAN = ("nan payload/sign", "float->int undefined",
                              "e8m0 zero/negative/tiny", "fnuz nan sign")
EXPECTED_CODES = {
    "float16": {NAN: 6132, E8M0: 31745, UNDEF: 92287},
    "bfloat16": {NAN: 756, E8M0: 32577, UNDEF: 36476},
    "float8_e4m3fn": {E8M0: 128, UNDEF: 555},
    "float8_e4m3fnuz": {NAN: 8, E8M0: 128, UNDEF: 510, FNUZ_NAN: 3},
    "float8_e5m2": {NAN: 4, E8M0: 125, UNDEF: 347},
    "float8_e5m2fnuz": {NAN: 8, E8M0: 128, UNDEF: 347, FNUZ_NAN: 3},
    "float8_e4m3": {NAN: 12, E8M0: 121, UNDEF: 510},
    "float8_e3m4": {NAN: 28, E8M0: 113, UNDEF: 566},
    "float8_e4m3b11fnuz": {NAN: 8, E8M0: 128, UNDEF: 359, FNUZ_NAN: 3},
    "float8_e8m0fnu": {UNDEF: 7},
    "float6_e2m3fn": {E8M0: 33, UNDEF: 196},
    "float6_e3m2fn": {E8M0: 33, UNDEF: 161},
    "float4_e2m1fn": {E8M0: 9, UNDEF: 45},
    "float8_e5m3fnu": {E8M0: 1, UNDEF: 164},
    "int4": {E8M0: 9}, "uint4": {E8M0: 1}, "int2": {E8M0: 3}, "uint2": {E8M0: 1},
    "int8": {E8M0: 129}, "uint8": {E8M0: 1}, "int16": {E8M0: 32769}, "uint16": {E8M0: 1},
    "int1": {E8M0: 2}, "bool": {E8M0: 1},
}
EXPECTED_WIDE = {
    "float32": {E8M0: 21587, UNDEF: 53495},
    "float64": {E8M0: 21585, UNDEF: 60814},
}
DOCUMENTED = {NAN, UNDEF, E8M0, FNUZ_NAN, "complex->bool imaginary"}
# make check-upstream (tests/upstream/run) sets DTCAST_DIFF_REPORT to a file: against whatever
# ml_dtypes is installed, the counts of each class are written there instead of compared with
# the recorded ones, and only a class not documented fails.
REPORT = os.environ.get("DTCAST_DIFF_REPORT")


def settle(label, seen, expected):
    """The classes seen for one source: equal to the recorded counts, or (check-upstream) each
    documented and written to the report."""
    if REPORT:
        with open(REPORT, "a") as f:
            for k, n in sorted(seen.items()):
                f.write(f"ml_dtypes {ml_dtypes.__version__} (numpy {np.__version__})\t{k}\t{n}\t{label}\n")
        assert set(seen) <= DOCUMENTED, seen
    else:
        assert seen == expected, seen


@pytest.mark.parametrize("src", SOURCES)
def test_every_code_to_every_type(src):
    x = all_codes(src)
    seen = {}
    for target in TARGETS:
        got = dtcast.cast(x, target)
        ref = ml_astype(x, target)
        assert got.dtype == ref.dtype and got.shape == ref.shape
        for k, n in explain(x, target, got, ref).items():
            seen[k] = seen.get(k, 0) + n
    # the differences each source shows are the documented ones, as many as recorded
    settle(f"every {src} code", seen, EXPECTED_CODES.get(src, {}))


def wide_inputs(dtype):
    """float32 / float64 edge values (ties and neighbours of every narrow type, +-0, +-Inf,
    NaN, max, subnormals) and random values at several scales."""
    rng = np.random.default_rng(1414)
    vals = [np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -1e-300, 5e-324, 1e300,
                      np.finfo(np.float32).max, np.finfo(np.float32).tiny, 2.0 ** -149,
                      1.0156 * 2.0 ** -127, 2.0 ** -127, 1.5 * 2.0 ** -127])]
    for t in NARROW_FLOATS:
        v, _ = grid(t)
        if v.size > 2000:
            v = v[::64]
        mid = (v[:-1] + v[1:]) / 2
        vals += [v, mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf),
                 mid * (1 + 2.0 ** -30), mid * (1 - 2.0 ** -30)]
    # 4000 per scale here; make check-upstream takes 400000 (2 * 10^6 random values in all)
    per_scale = int(os.environ.get("DTCAST_DIFF_RANDOM", "4000"))
    for scale in (1e-3, 1, 30, 1e4, 1e30):
        vals.append(rng.standard_normal(per_scale) * scale)
    with np.errstate(over="ignore"):
        return np.concatenate(vals).astype(dtype)


@pytest.mark.parametrize("src", ["float32", "float64"])
def test_wide_to_narrow(src):
    x = wide_inputs(np.dtype(src).type)
    seen = {}
    for target in NARROW_FLOATS + NARROW_INTS:
        got = dtcast.cast(x, target)
        ref = ml_astype(x, target)
        for k, n in explain(x, target, got, ref).items():
            seen[k] = seen.get(k, 0) + n
    settle(f"{x.size} {src} values", seen, EXPECTED_WIDE[src])


# --- complex types of 16-bit parts (complex32: float16, bcomplex32: bfloat16) ---------------

COMPLEX16 = ["complex32", "bcomplex32"]
PART = {"complex32": "float16", "bcomplex32": "bfloat16", "complex64": "float32",
        "complex128": "float64"}
CX_BOOL = "complex->bool imaginary"


def parts(a, cname):
    """A complex array's parts, interleaved (real, imag, ...), as an array of the part type."""
    return np.ascontiguousarray(a).reshape(-1).view(dtcast.dtype(PART[cname]))


def complex_codes(cname):
    """Every code of the part type as a real part; the imaginary parts the same codes in a fixed
    random order."""
    re = code_view(all_codes(PART[cname]))
    im = np.random.default_rng(27).permutation(re)
    both = np.empty(2 * re.size, dtype=re.dtype)
    both[0::2], both[1::2] = re, im
    return both.view(dtcast.dtype(cname))


def ml_astype_complex(x, target):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return x.astype(dtcast.dtype(target))


def add(seen, kinds):
    for k, n in kinds.items():
        seen[k] = seen.get(k, 0) + n


def explain_complex_bool(x, cname, got, ref):
    """(4) complex -> bool: where dtcast's bool of the real part differs from numpy's truth of
    the complex number, the real part is zero and the imaginary part is not (NaN included)."""
    with np.errstate(invalid="ignore"):
        p = parts(x, cname).astype(np.float64)
    re, im = p[0::2], p[1::2]
    assert np.array_equal(got, re != 0), "dtcast's bool is not the real part's"
    diff = got != ref
    assert np.array_equal(diff, (re == 0) & (im != 0)), "not numpy's either-part truth"
    return {CX_BOOL: int(diff.sum())} if diff.any() else {}


# against ml_dtypes 0.7.0: every complex32 / bcomplex32 code pair to every type; every source of
# test_every_code_to_every_type and the wide arrays to complex32 and bcomplex32. complex32's
# real parts into integers differ more often than float16's codes (179303 against 92287): for
# the undefined values ml_dtypes' complex32 -> integer casts give 0 where its float16 ones often
# give the wrapped value, as dtcast does (float16 300 -> int8 44); class 2 all the same, every
# element checked as dtcast's wrap.
EXPECTED_COMPLEX = {
    "complex32": {NAN: 16352, E8M0: 31745, UNDEF: 179303, CX_BOOL: 2},
    "bcomplex32": {NAN: 2016, E8M0: 32577, UNDEF: 36476, CX_BOOL: 2},
    "float8_e4m3fnuz": {NAN: 2}, "float8_e5m2fnuz": {NAN: 2}, "float8_e4m3b11fnuz": {NAN: 2},
}


@pytest.mark.parametrize("src", COMPLEX16)
def test_complex16_codes_to_every_type(src):
    x = complex_codes(src)
    seen = {}
    for target in COMPLEX16 + ["complex64", "complex128"]:
        got, ref = dtcast.cast(x, target), ml_astype_complex(x, target)
        assert got.dtype == ref.dtype and got.shape == ref.shape == x.shape
        add(seen, explain(parts(x, src), PART[target], parts(got, target), parts(ref, target)))
    with pytest.raises(dtcast.Error):  # complex -> real only with discard_imaginary
        dtcast.cast(x, "float32")
    for target in TARGETS:
        got = dtcast.cast(x, target, discard_imaginary=True)
        ref = ml_astype_complex(x, target)
        assert got.dtype == ref.dtype and got.shape == ref.shape == x.shape
        if target == "bool":
            add(seen, explain_complex_bool(x, src, got, ref))
        else:
            add(seen, explain(parts(x, src)[0::2], target, got, ref))
    settle(f"every {src} code pair", seen, EXPECTED_COMPLEX.get(src, {}))


@pytest.mark.parametrize("src", SOURCES + ["float32", "float64", "complex64", "complex128"])
def test_every_type_to_complex16(src):
    if src in ("float32", "float64"):
        x = wide_inputs(np.dtype(src).type)
    elif src in ("complex64", "complex128"):
        w = wide_inputs(np.float64)
        with np.errstate(all="ignore"):
            x = (w + 1j * w[::-1]).astype(src)
    else:
        x = all_codes(src)
    seen = {}
    for target in COMPLEX16:
        got, ref = dtcast.cast(x, target), ml_astype_complex(x, target)
        assert got.dtype == ref.dtype and got.shape == ref.shape == x.shape
        gp, rp = parts(got, target), parts(ref, target)
        if lookup(src).kind == "complex":
            add(seen, explain(parts(x, src), PART[target], gp, rp))
        else:  # a real source: imaginary part +0 on both sides
            assert not code_view(gp[1::2]).any() and not code_view(rp[1::2]).any()
            xs = x.astype(np.float64) if src == "bool" else x
            add(seen, explain(xs, PART[target], gp[0::2], rp[0::2]))
    settle(f"{x.size} {src} values to complex32/bcomplex32", seen, EXPECTED_COMPLEX.get(src, {}))


def test_documented_examples():
    """The differences of the docstring, one value each, with exact arithmetic."""
    e4m3 = ml_dtypes.float8_e4m3fn
    assert REPORT or ml_dtypes.__version__ == "0.7.0", ml_dtypes.__version__
    # ml_dtypes 0.7 rounds float64 once (0.6 went through float32): 1 + 2^-4 + 2^-30 is just
    # above the tie between 1 and 1.125, so both give 1.125
    x = 1 + 2.0 ** -4 + 2.0 ** -30
    assert abs(Fraction(x) - Fraction(9, 8)) < abs(Fraction(x) - 1)
    assert float(dtcast.cast(np.float64([x]), e4m3).astype(np.float64)[0]) == 1.125
    assert float(np.float64([x]).astype(e4m3).astype(np.float64)[0]) == 1.125  # ml_dtypes
    # ... bfloat16: 1 + 2^-8 + 2^-30 is nearer 1 + 2^-7 (through float32 it would be a tie -> 1)
    x = 1 + 2.0 ** -8 + 2.0 ** -30
    assert abs(Fraction(x) - (1 + Fraction(1, 128))) < abs(Fraction(x) - 1)
    assert float(dtcast.cast(np.float64([x]), "bfloat16").astype(np.float64)[0]) == 1 + 2.0 ** -7
    assert float(np.float64([x]).astype(ml_dtypes.bfloat16).astype(np.float64)[0]) == 1 + 2.0 ** -7
    # ... and int64 -> bfloat16 once from the integer: 2^40 + 2^32 + 1 is above the tie between
    # 2^40 and 2^40 + 2^33 (float32 would drop the 1, and the tie would go to 2^40)
    n = np.int64([2 ** 40 + 2 ** 32 + 1])
    assert float(dtcast.cast(n, "bfloat16").astype(np.float64)[0]) == 2.0 ** 40 + 2.0 ** 33
    assert float(n.astype(ml_dtypes.bfloat16).astype(np.float64)[0]) == 2.0 ** 40 + 2.0 ** 33
    x = 1 + 2.0 ** -11 + 2.0 ** -40
    assert np.float64([x]).astype(np.float16)[0] == dtcast.cast(np.float64([x]), "float16")[0]
    # (3) float8_e8m0fnu: 0 and -4 are NaN in ml_dtypes; dtcast 0x00 (2^-127) and 0x81 (4)
    e8m0 = ml_dtypes.float8_e8m0fnu
    with np.errstate(all="ignore"):
        assert np.isnan(np.float32([0, -4]).astype(e8m0).astype(np.float32)).all()
    assert dtcast.cast(np.float32([0, -4]), e8m0).view(np.uint8).tolist() == [0x00, 0x81]
    # ... a float32 subnormal just above 2^-127: nearer 2^-127 than 2^-126, and 0.7 agrees
    # (0.6 gave 2^-126)
    x = np.float32(1.0156 * 2.0 ** -127)
    assert Fraction(float(x)) - Fraction(2) ** -127 < Fraction(2) ** -126 - Fraction(float(x))
    assert dtcast.cast(np.float32([x]), e8m0).view(np.uint8)[0] == 0x00  # 2^-127
    assert np.float32([x]).astype(e8m0).view(np.uint8)[0] == 0x00  # ml_dtypes 0.7
    # ... and 1.5 * 2^k, a tie, goes up in both
    assert dtcast.cast(np.float32([1.5, 3]), e8m0).view(np.uint8).tolist() == \
        np.float32([1.5, 3]).astype(e8m0).view(np.uint8).tolist() == [0x80, 0x81]
    # (1) NaN payload: ml_dtypes keeps it (and leaves a signalling NaN signalling)
    s = np.uint16([0x7C01]).view(np.float16)
    assert s.astype(np.float32).view(np.uint32)[0] == 0x7F802000
    assert dtcast.cast(s, "float32").view(np.uint32)[0] == 0x7FC00000
    # (1) the fnuz NaN 0x80: ml_dtypes reads it as -NaN, dtcast as +NaN
    n = np.uint8([0x80]).view(ml_dtypes.float8_e4m3fnuz)
    assert np.signbit(n.astype(np.float32))[0] and not np.signbit(dtcast.cast(n, "float32"))[0]
    # (2) float -> int: dtcast wraps (300.5 -> 44), Inf is 0; ml_dtypes 0.7 gives 0 out of range
    assert dtcast.cast(np.float32([np.inf, 300.5, -1]), "int8").tolist() == [0, 44, -1]
    with np.errstate(all="ignore"):
        assert np.float32([300.5]).astype(ml_dtypes.bfloat16).astype(ml_dtypes.int4).tolist() == [0]


def test_e5m3fnu_unsigned():
    """float8_e5m3fnu has no sign bit: ml_dtypes gives NaN for every negative nonzero value
    and for -Inf, even one that would round to -0 (-2^-20), and 0 for -0; dtcast's default
    (rne, overflow "ieee") gives the same bytes. Saturating, and in trunc/ceil/odd, dtcast
    takes a negative finite value to 0, the end of the range [0, 114688] (docs/conversion.md,
    "Unsigned floats"), and -Inf saturates to 0 too."""
    u = ml_dtypes.float8_e5m3fnu
    x = np.float64([-0.0, -2.0 ** -20, -2.0 ** -18, -2.0 ** -17, -1.0, -1e300, -np.inf, -np.nan,
                    np.nan, 2.0 ** -18, 3 * 2.0 ** -19, 114688.0, 118784.0, 118785.0, 122880.0,
                    np.inf])
    with np.errstate(all="ignore"):
        ref = x.astype(u).view(np.uint8).tolist()
    nan = 0xFF
    assert ref == [0, nan, nan, nan, nan, nan, nan, nan, nan, 0, 1, 0xFE, 0xFE, nan, nan, nan]
    for src in (np.float64, np.float32, ml_dtypes.bfloat16, np.float16):
        with np.errstate(all="ignore"):
            xs = x.astype(src)
            want = xs.astype(u).view(np.uint8).tolist()
        assert dtcast.cast(xs, u).view(np.uint8).tolist() == want, src
    neg = np.float32([-2.0 ** -20, -1.0, -1e30])
    for mode in ("trunc", "ceil", "odd"):
        assert dtcast.cast(neg, u, round=mode).view(np.uint8).tolist() == [0, 0, 0], mode
        assert dtcast.cast(neg, u, round=mode, overflow="inf").view(np.uint8).tolist() == \
            [nan] * 3, mode
    for mode in ("rne", "round", "floor"):
        assert dtcast.cast(neg, u, round=mode).view(np.uint8).tolist() == [nan] * 3, mode
    sat = dtcast.cast(np.float32([-1.0, -np.inf, np.inf, 1e30, np.nan]), u, saturate=True)
    assert sat.view(np.uint8).tolist() == [0, 0, 0xFE, 0xFE, nan]
    # as a source: every code decodes as ml_dtypes decodes it (no sign: 0x80 is 2.0)
    codes = np.arange(256, dtype=np.uint8).view(u)
    assert dtcast.cast(codes, "float32").tobytes() == codes.astype(np.float32).tobytes()
    assert dtcast.cast(np.uint8([0x80]).view(u), "float32")[0] == 2.0
    # the limits, as ml_dtypes.finfo gives them
    fi, ref = dtcast.finfo(u), ml_dtypes.finfo(u)
    for k in ("max", "min", "tiny", "smallest_subnormal", "eps", "epsneg", "maxexp", "minexp",
              "nexp", "nmant", "bits"):
        assert float(getattr(fi, k)) == float(getattr(ref, k)), k
    assert fi.dtype == np.dtype(u) and not fi.has_negative_zero and fi.nan_count == 1


def test_without_float8_e5m3fnu_dtype():
    """With an ml_dtypes that lacks float8_e5m3fnu (before 0.7) the package imports and works;
    the type is listed, and what needs its dtype raises dtcast.Error (UNSUPPORTED)."""
    import subprocess
    import sys
    code = """
import ml_dtypes, numpy as np
del ml_dtypes.float8_e5m3fnu
import dtcast
assert "float8_e5m3fnu" in dtcast.types()
assert dtcast.cast(np.float32([1.5]), "float8_e4m3fn").view(np.uint8)[0] == 0x3C
fi = dtcast.finfo("float8_e5m3fnu")
assert fi.dtype is None and fi.max == 114688 and fi.min == 0 and not fi.has_negative_zero
for f in (lambda: dtcast.dtype("float8_e5m3fnu"),
          lambda: dtcast.cast(np.float32([1.0]), "float8_e5m3fnu"),
          lambda: dtcast.cast(np.uint8([0x3C]), "float32", src="float8_e5m3fnu")):
    try:
        f()
    except dtcast.Error as e:
        assert e.status == dtcast.Status.UNSUPPORTED and "ml_dtypes 0.7" in str(e), e
    else:
        raise AssertionError("no error")
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


def test_rne_reference_is_live():
    """The exact reference can disagree with dtcast: a wrong result fails (so `explain`
    cannot pass by construction)."""
    assert rne_exact(1 + 2.0 ** -4, "float8_e4m3fn") == 1.0  # a tie, to the even 1.0
    assert rne_exact(1 + 2.0 ** -4 + 2.0 ** -30, "float8_e4m3fn") == 1.125
    assert rne_exact(464.0, "float8_e4m3fn") == 448.0 and np.isnan(rne_exact(465.0, "float8_e4m3fn"))
    assert rne_exact(65520.0, "float16") == np.inf and rne_exact(-3.0, "float8_e8m0fnu") == 4.0
    # a "dtcast" that rounded twice (1.0, code 0x38), compared with the correct answer, is not
    # explained
    x = np.float64([1 + 2.0 ** -4 + 2.0 ** -30])
    wrong = np.uint8([0x38]).view(ml_dtypes.float8_e4m3fn)
    with pytest.raises(AssertionError):
        explain(x, "float8_e4m3fn", wrong, dtcast.cast(x, "float8_e4m3fn"))
    # and a wrong integer result is not taken for numpy's undefined behaviour
    x = np.float32([3.5])
    with pytest.raises(AssertionError):
        explain(x, "int8", np.int8([4]), x.astype(np.int8))
