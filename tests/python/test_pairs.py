"""dtcast.cast against the C library's own bytes, for every ordered pair of numeric types.

For each source type (dtcast.types() minus "string"), a vector of inputs -- every code of the
types of at most 16 bits; edge values, NaN, Inf, +-0, +-max, ties of every narrow type and
random bit patterns for the wider ones -- is converted to every numeric target under every
rounding mode (default, rne, round, floor, ceil, trunc, odd), every float overflow policy
(ieee, saturate, inf; for float targets) and both int_overflow policies (for integer targets).
The package's result must be byte for byte what libdtcast.so's dtcast_convert writes for the
same call (through ctypes, tests/model/dtlib.py), in the packed layout the C library uses:
``cast(..., packed=True)`` directly and ``dtcast.pack(cast(...))`` of the one-per-byte arrays
ml_dtypes uses (the package's own unpacking path, python/ext/module.c). Errors must agree too
(complex -> real without discard_imaginary).

One test per source type; each loops over targets and options in-process (vectorised: one
call per pair and option set), so the whole file runs in a few seconds."""

import numpy as np
import ml_dtypes
import pytest

import dtcast
from dtcast._types import lookup

MODES = ["default", "rne", "round", "floor", "ceil", "trunc", "odd"]
# dtcast.cast's spelling -> dtlib's (tests/model/dtlib.py ROUND)
LIB_MODE = {"default": "default", "rne": "rne", "round": "rna", "floor": "floor",
            "ceil": "ceil", "trunc": "trunc", "odd": "odd"}
FLOAT_OVERFLOW = ["ieee", "saturate", "inf"]
INT_OVERFLOW = ["wrap", "saturate"]

NUMERIC = [t for t in dtcast.types() if t != "string"]
FLOAT6 = ("float6_e2m3fn", "float6_e3m2fn")

RNG_SEED = 14


# ---------------------------------------------------------------------------------------------
# Inputs

def _narrow_float_values():
    """Every finite value of every float type of at most 16 bits, as float64, with the
    midpoints between neighbours (the ties of rne / round) and the floats just beside them."""
    vals = []
    for t in dtcast.types("float"):
        ti = lookup(t)
        if ti.bits > 16:
            continue
        n = 1 << ti.bits
        codes = np.arange(n, dtype=np.uint16 if ti.bits > 8 else np.uint8)
        if ti.bits == 16:
            codes = codes.astype(np.uint16)
        v = dtcast.cast(codes.view(ti.dtype) if ti.bits in (8, 16) else
                        codes.astype(np.uint8).view(ti.dtype), "float64")
        v = np.unique(v[np.isfinite(v)])
        if ti.bits == 16:  # keep the file fast: every 16th value, and the ends
            v = np.unique(np.concatenate([v[::16], v[:64], v[-64:]]))
        mid = (v[:-1] + v[1:]) / 2
        vals += [v, mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf)]
        # just beyond max: overflow thresholds (max + half an ulp is the rne boundary)
        top = v[-1]
        ulp = top - v[-2] if v.size > 1 else top
        vals.append(np.array([top + ulp / 2, top + ulp, top * 2, -(top + ulp / 2)]))
    return np.unique(np.concatenate(vals))


def _float_inputs(dtype, rng):
    """Edge and random values of float32 or float64."""
    info = np.finfo(dtype)
    narrow = _narrow_float_values()
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, info.max, -info.max,
                        info.tiny, -info.tiny, info.smallest_subnormal, -info.smallest_subnormal,
                        1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 3.5, 127.5, 128.5, -128.5, 255.5, 256.0,
                        2.0 ** 31, -2.0 ** 31, 2.0 ** 32, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64,
                        1e30, -1e30, 2.0 ** 127 * 1.5, 2.0 ** -127, 2.0 ** -128, 2.0 ** -149,
                        2.0 ** 128 if dtype == np.float64 else 0.0], dtype=np.float64)
    ints = 2.0 ** np.arange(0, 65)
    ints = np.concatenate([ints, ints + 0.5, ints - 0.5, ints + 1, ints - 1])
    ints = np.concatenate([ints, -ints])
    nbits = 8 * np.dtype(dtype).itemsize
    ubits = np.uint32 if nbits == 32 else np.uint64
    rand_bits = rng.integers(0, 2 ** nbits, 1500, dtype=ubits, endpoint=False).view(dtype)
    rand_small = (rng.standard_normal(500) * 4).astype(dtype)
    with np.errstate(over="ignore"):
        base = np.concatenate([special, narrow, ints]).astype(dtype)
    out = np.concatenate([base, rand_bits, rand_small])
    if dtype == np.float64:
        # values a float32 step would round to a tie first (double rounding would show)
        f32 = rng.standard_normal(300).astype(np.float32).astype(np.float64)
        out = np.concatenate([out, f32 + np.abs(f32) * 2.0 ** -30, f32 - np.abs(f32) * 2.0 ** -30])
    return out


def _int_inputs(t, rng):
    """Ends of the range, powers of two and their neighbours (the rounding boundaries of the
    float targets), random bit patterns."""
    info = np.iinfo(t)
    bits = info.bits
    cand = [0, 1, -1, int(info.min), int(info.max), int(info.max) - 1, int(info.min) + 1]
    for k in range(bits):
        for d in (0, 1, -1, 2, 3):
            cand += [(1 << k) + d, -(1 << k) - d]
        # ties of float targets with m-bit mantissas: 2^k + 2^(k-m-1), +-1
        for m in (1, 2, 3, 7, 10, 23, 52):
            if k > m + 1:
                tie = (1 << k) + (1 << (k - m - 1))
                cand += [tie, tie + 1, tie - 1, -tie, -tie - 1]
    cand = [c for c in cand if int(info.min) <= c <= int(info.max)]
    rand = rng.integers(int(info.min), int(info.max), 1500, dtype=t, endpoint=True)
    return np.concatenate([np.array(cand, dtype=t), rand])


def inputs(name):
    """The test vector of source type `name`, as an array of its dtype (ml_dtypes' layout:
    sub-byte types one element per byte)."""
    rng = np.random.default_rng(RNG_SEED)
    ti = lookup(name)
    if ti.kind == "bool":
        return np.array([False, True, True, False])
    if ti.bits <= 16 and ti.kind != "complex":  # every code
        n = 1 << (ti.bits if ti.code not in (27, 28) else 6)
        codes = np.arange(n, dtype=np.uint16 if ti.bits > 8 else np.uint8)
        return codes.view(ti.dtype)
    if name in ("float32", "float64"):
        return _float_inputs(np.dtype(name).type, rng)
    if ti.kind in ("signed", "unsigned"):
        return _int_inputs(ti.dtype.type, rng)
    if ti.kind == "complex":
        part = {"complex32": "float16", "bcomplex32": "bfloat16", "complex64": "float32",
                "complex128": "float64"}[name]
        if part == "float16":
            re = np.concatenate([np.arange(0, 65536, 37, dtype=np.uint16),
                                 np.array([0x7C00, 0xFC00, 0x7E00, 0x7BFF, 0xFBFF, 0x8000,
                                           0x0001], np.uint16)]).view(np.float16)
        elif part == "bfloat16":
            re = np.concatenate([np.arange(0, 65536, 37, dtype=np.uint16),
                                 np.array([0x7F80, 0xFF80, 0x7FC0, 0x7F7F, 0xFF7F, 0x8000,
                                           0x0001], np.uint16)]).view(lookup("bfloat16").dtype)
        else:
            re = _float_inputs(np.dtype(part).type, rng)
        im = rng.permutation(re)
        z = np.empty(re.size, dtype=ti.dtype)
        zv = z.view(re.dtype).reshape(-1, 2)
        zv[:, 0], zv[:, 1] = re, im
        return z
    raise AssertionError(name)


# ---------------------------------------------------------------------------------------------
# The C library's answer

def c_convert(lib, x, src, dst, mode, fov, iov, discard_imaginary, float6_packed):
    """(status, bytes) of dtcast_convert for the packed form of x."""
    s, d = lookup(src), lookup(dst)
    opts = lib.options(LIB_MODE[mode], fov, iov, discard_imaginary=discard_imaginary)
    opts.float6_packed = float6_packed
    if s.code in (27, 28) and not float6_packed:
        src_bytes = x.view(np.uint8).tobytes()  # float6 unpacked: one code per byte
    elif s.bits < 8 and s.kind != "bool":
        src_bytes = dtcast.pack(x).tobytes()  # int4 two per byte, float6 four in three, ...
    else:
        src_bytes = x.view(np.uint8).tobytes()
    count = x.size
    if d.code in (27, 28):
        size = (count * 6 + 7) // 8 if float6_packed else count
    else:
        size = lib.storage_size(d.code, count)[1]
    st, out, msg = lib.convert(d.code, src_bytes, s.code, count, size, opts)
    return st, out


def py_bytes(x, dst, mode, fov, iov, discard_imaginary, packed):
    kw = dict(round=None if mode == "default" else mode, overflow=fov, int_overflow=iov,
              discard_imaginary=discard_imaginary, packed=packed)
    r = dtcast.cast(x, dst, **kw)
    return r


# ---------------------------------------------------------------------------------------------
# The tests

@pytest.mark.parametrize("src", NUMERIC)
def test_pair_bytes_equal_library(src, libdtcast):
    x = inputs(src)
    s = lookup(src)
    bad = []
    calls = 0
    for dst in NUMERIC:
        d = lookup(dst)
        is_int = d.kind in ("signed", "unsigned", "bool")
        fovs = ["ieee"] if is_int else FLOAT_OVERFLOW
        iovs = INT_OVERFLOW if is_int else ["wrap"]
        # complex -> real needs discard_imaginary; check the refusal once, then discard
        discard = s.kind == "complex" and d.kind != "complex"
        if discard:
            st, _ = c_convert(libdtcast, x, src, dst, "default", "ieee", "wrap", False, False)
            assert st == dtcast.Status.COMPLEX_TO_REAL, (src, dst, st)
            with pytest.raises(dtcast.Error) as e:
                dtcast.cast(x, dst)
            assert e.value.status == dtcast.Status.COMPLEX_TO_REAL
        for mode in MODES:
            for fov in fovs:
                for iov in iovs:
                    calls += 1
                    where = (src, dst, mode, fov, iov)
                    if d.code in (27, 28):
                        # float6: one code per byte unpacked, 4 in 3 bytes packed
                        for packed in (False, True):
                            st, want = c_convert(libdtcast, x, src, dst, mode, fov, iov, discard,
                                                 packed)
                            assert st == 0, where
                            got = py_bytes(x, dst, mode, fov, iov, discard, packed)
                            if got.view(np.uint8).tobytes() != want:
                                bad.append(where + (f"packed={packed}",))
                        continue
                    st, want = c_convert(libdtcast, x, src, dst, mode, fov, iov, discard, False)
                    assert st == 0, (where, st)
                    got = py_bytes(x, dst, mode, fov, iov, discard, True)
                    if got.view(np.uint8).tobytes() != want:
                        bad.append(where + ("packed=True",))
                    if d.bits < 8 and d.kind != "bool":
                        # the one-per-byte result (ml_dtypes' layout), packed afterwards
                        one = py_bytes(x, dst, mode, fov, iov, discard, False)
                        assert one.dtype == d.dtype and one.shape == x.shape
                        if dtcast.pack(one).tobytes() != want:
                            bad.append(where + ("packed=False",))
    assert calls > 0
    assert not bad, f"{len(bad)} option sets differ from the C library, e.g. {bad[:5]}"


def test_inputs_cover_specials():
    """The vectors hold what the file's docstring says (so a thinned generator fails here)."""
    f32 = inputs("float32")
    assert np.isnan(f32).any() and np.isposinf(f32).any() and np.isneginf(f32).any()
    assert (f32 == np.finfo(np.float32).max).any() and (np.signbit(f32) & (f32 == 0)).any()
    assert 2000 < f32.size < 60000
    # a tie of float8_e4m3fn (1 + 1/16 lies halfway between 1 and 1.125)
    assert (f32 == 1.0625).any()
    assert inputs("float8_e4m3fn").size == 256 and inputs("int4").size == 16
    assert inputs("float6_e3m2fn").size == 64 and inputs("bfloat16").size == 65536
    i64 = inputs("int64")
    assert (i64 == np.iinfo(np.int64).min).any() and (i64 == 2 ** 53 + 1).any()


@pytest.mark.parametrize("sub", ["int4", "uint4", "float4_e2m1fn", "int2", "uint1",
                                 "float6_e2m3fn"])
def test_large_one_per_byte_paths(sub, libdtcast):
    """The package's one-per-byte path over many blocks and threads (python/ext/module.c
    converts a sub-byte side in blocks, shared among threads): a tensor of several blocks,
    not a multiple of 8 elements, to and from a sub-byte type, with threads 1, 2 and 0 (the
    library decides), equals the C library's packed bytes."""
    rng = np.random.default_rng(7)
    n = (1 << 20) * 3 + 5
    x = (rng.standard_normal(n) * 4).astype(np.float32)
    x[::1001] = np.nan
    d = lookup(sub)
    float6 = d.code in (27, 28)
    for threads in (1, 2, 0):
        for packed in (False, True):
            if packed and float6:
                continue
            opts = libdtcast.options("default", "ieee", "wrap", threads=threads)
            size = n if float6 else libdtcast.storage_size(d.code, n)[1]
            st, want, _ = libdtcast.convert(d.code, x.tobytes(), 1, n, size, opts)
            assert st == 0
            r = dtcast.cast(x, sub, threads=threads, packed=packed)
            got = r.tobytes() if packed or float6 else dtcast.pack(r).tobytes()
            assert got == want, (sub, threads, packed)
        # back to float32 from the one-per-byte array
        one = dtcast.cast(x, sub)
        src = one.view(np.uint8).tobytes() if float6 else dtcast.pack(one).tobytes()
        st, want, _ = libdtcast.convert(1, src, d.code, n, 4 * n,
                                        libdtcast.options("default", "ieee", "wrap", threads=1))
        assert st == 0
        assert dtcast.cast(one, "float32", threads=threads).tobytes() == want, (sub, threads)
