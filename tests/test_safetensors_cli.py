"""The CLI on safetensors files (docs/files.md, "safetensors").

    python3 tests/test_safetensors_cli.py build/libdtcast.so      (the CLI is build/dtcast)

Checks `dtcast cast` on .safetensors files and sharded checkpoints against an independent model:
the expected files are written by tests/safetensors_ref.py (the reference writer's layout, from
docs/files.md, "safetensors") and the expected values computed here exactly, in integers checked against fractions (round to nearest even,
IEEE overflow, the canonical NaNs of docs/conversion.md, "NaN inputs"). Every floating-point tensor is converted, the others
(integers, BOOL, C64) are copied byte for byte, __metadata__ is kept; --select / --exclude pick
the converted tensors; hostile files fail with status 1, one line on stderr and no output.
When the real `safetensors` package is importable, it reads dtcast's output too.
Prints PASS/FAIL lines; exits nonzero on a failure.
"""
import fnmatch
import functools
import json
import os
import random
import struct
import sys
import tempfile
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_ref as ref  # noqa: E402
from cli_util import check, failures, runner  # noqa: E402

LIB = sys.argv[1] if len(sys.argv) > 1 else "build/libdtcast.so"
DTCAST = os.path.join(os.path.dirname(os.path.abspath(LIB)), "dtcast")


run = runner(DTCAST)


# ---- the element formats, exactly ---------------------------------------------------------

# dtype: (exponent bits, mantissa bits, bias, kind); kind: ieee (Inf, NaN = all-ones exponent),
# fn (no Inf, NaN = all ones), fnuz (no Inf, no -0, NaN = 0x80), none (every code finite)
FMT = {
    "F16": (5, 10, 15, "ieee"), "BF16": (8, 7, 127, "ieee"), "F32": (8, 23, 127, "ieee"),
    "F64": (11, 52, 1023, "ieee"), "F8_E5M2": (5, 2, 15, "ieee"), "F8_E4M3": (4, 3, 7, "fn"),
    "F8_E4M3FNUZ": (4, 3, 8, "fnuz"), "F8_E5M2FNUZ": (5, 2, 16, "fnuz"),
    "F4": (2, 1, 1, "none"), "F6_E2M3": (2, 3, 1, "none"), "F6_E3M2": (3, 2, 3, "none"),
}
FLOATS = list(FMT) + ["F8_E8M0"]
DTCAST_NAME = {
    "BOOL": "bool", "U8": "uint8", "I8": "int8", "U16": "uint16", "I16": "int16", "U32": "uint32",
    "I32": "int32", "U64": "uint64", "I64": "int64", "F16": "float16", "BF16": "bfloat16",
    "F32": "float32", "F64": "float64", "C64": "complex64", "F8_E4M3": "float8e4m3fn",
    "F8_E5M2": "float8e5m2", "F8_E4M3FNUZ": "float8e4m3fnuz", "F8_E5M2FNUZ": "float8e5m2fnuz",
    "F8_E8M0": "float8e8m0", "F4": "float4e2m1", "F6_E2M3": "float6e2m3fn",
    "F6_E3M2": "float6e3m2fn",
}
BY_DTCAST_NAME = {v: k for k, v in DTCAST_NAME.items()}


def width(dt):
    e, m, _, _ = FMT[dt]
    return 1 + e + m


def emax(dt):
    e, m, bias, kind = FMT[dt]
    return (1 << e) - (2 if kind == "ieee" else 1) - bias


@functools.lru_cache(maxsize=None)
def max_finite(dt):
    e, m, bias, kind = FMT[dt]
    top = (1 << (m + 1)) - (2 if kind == "fn" else 1)  # fn: all-ones mantissa is NaN
    return Fraction(top, 1 << m) * pow2(emax(dt))


def decode(code, dt):
    """('nan', sign) / ('inf', sign) / ('num', sign, magnitude)"""
    if dt == "F8_E8M0":
        return ("nan", 0) if code == 0xFF else ("num", 0, pow2(code - 127))
    e, m, bias, kind = FMT[dt]
    sign = code >> (e + m) & 1
    ex = code >> m & ((1 << e) - 1)
    man = code & ((1 << m) - 1)
    if kind == "fnuz" and code == 1 << (e + m):
        return ("nan", 1)
    if ex == (1 << e) - 1:
        if kind == "ieee":
            return ("inf", sign) if man == 0 else ("nan", sign)
        if kind == "fn" and man == (1 << m) - 1:
            return ("nan", sign)
    if ex == 0:
        mag = Fraction(man, 1 << m) * pow2(1 - bias)
    else:
        mag = Fraction((1 << m) + man, 1 << m) * pow2(ex - bias)
    return ("num", sign, mag)


def round_half_even(q):
    n, r = divmod(q.numerator, q.denominator)
    twice = 2 * r
    if twice > q.denominator or (twice == q.denominator and n % 2 == 1):
        n += 1
    return n


def pow2(k):
    return Fraction(1 << k) if k >= 0 else Fraction(1, 1 << -k)


def floor_log2(x):
    p, q = x.numerator, x.denominator
    e = p.bit_length() - q.bit_length()
    if (p << max(-e, 0)) < (q << max(e, 0)):
        e -= 1
    return e


def encode(v, dt):
    """The code of value v in dt under rne and the ieee overflow policy (docs/conversion.md, "Float overflow")."""
    e, m, bias, kind = FMT[dt]
    top = 1 << (e + m)

    def nan(sign):
        if kind == "ieee":
            return sign * top | ((1 << e) - 1) << m | 1 << (m - 1)
        if kind == "fn":
            return sign * top | (1 << (e + m)) - 1
        if kind == "fnuz":
            return top
        raise ValueError("%s has no NaN" % dt)

    def overflow(sign):
        if kind == "ieee":
            return sign * top | ((1 << e) - 1) << m
        if kind == "none":
            return sign * top | encode(("num", 0, max_finite(dt)), dt)
        return nan(sign)

    if v[0] == "nan":
        return nan(v[1])
    sign = v[1]
    if v[0] == "inf":
        return overflow(sign)
    mag = v[2]
    emin = 1 - bias
    if mag == 0:
        return 0 if kind == "fnuz" else sign * top
    ex = max(floor_log2(mag), emin)
    quantum = pow2(ex - m)
    r = round_half_even(mag / quantum) * quantum
    if r > max_finite(dt):
        return overflow(sign)
    if r == 0:
        return 0 if kind == "fnuz" else sign * top
    ex = floor_log2(r)
    if ex < emin:
        return sign * top | int(r / pow2(emin - m))
    return sign * top | (ex + bias) << m | int(r / pow2(ex - m)) - (1 << m)


def decode_int(code, dt):
    """decode() with the magnitude as integers: ('num', sign, p, k) for p * 2^k."""
    if dt == "F8_E8M0":
        return ("nan", 0) if code == 0xFF else ("num", 0, 1, code - 127)
    e, m, bias, kind = FMT[dt]
    sign = code >> (e + m) & 1
    ex = code >> m & ((1 << e) - 1)
    man = code & ((1 << m) - 1)
    if ex == (1 << e) - 1 or (kind == "fnuz" and code == 1 << (e + m)):
        v = decode(code, dt)  # the Inf and NaN codes (and the numbers beside them) as decode()'s
        if v[0] != "num":
            return v
    if ex == 0:
        return ("num", sign, man, 1 - bias - m)
    return ("num", sign, (1 << m) + man, ex - bias - m)


def encode_int(sign, p, k, dt):
    """encode(('num', sign, p * 2^k), dt) in integer arithmetic (the same steps: the quantum of
    the value's exponent, round half to even, the overflow and zero cases of encode())."""
    e, m, bias, kind = FMT[dt]
    top = 1 << (e + m)
    if p == 0:
        return 0 if kind == "fnuz" else sign * top
    emin = 1 - bias
    ex = max(p.bit_length() - 1 + k, emin)
    s = ex - m - k  # |v| / 2^(ex - m) = p / 2^s
    if s <= 0:
        n = p << -s
    else:
        n, r, half = p >> s, p & ((1 << s) - 1), 1 << (s - 1)
        if r > half or (r == half and n & 1):
            n += 1
    if n == 1 << (m + 1):
        n, ex = n >> 1, ex + 1
    topm = (1 << (m + 1)) - (2 if kind == "fn" else 1)  # max_finite's significand
    if ex > emax(dt) or (ex == emax(dt) and n > topm):
        return encode(("inf", sign), dt)  # encode()'s overflow code of the sign
    if n == 0:
        return 0 if kind == "fnuz" else sign * top
    if n < 1 << m:
        return sign * top | n
    return sign * top | (ex + bias) << m | (n - (1 << m))


@functools.lru_cache(maxsize=None)
def convert(code, src, dst):
    """encode(decode(code, src), dst), by the integer path for numbers (five times faster; the
    oracle check below compares the two paths)."""
    v = decode_int(code, src)
    if v[0] != "num" or dst not in FMT:
        return encode(decode(code, src), dst)
    return encode_int(v[1], v[2], v[3], dst)


def test_oracle_paths():
    """The integer path of convert() against the fraction path: every code of the <= 8-bit
    formats, 300 random and the edge codes of the wider ones, into every format."""
    rng = random.Random(7)
    bad = []
    for src in FLOATS:
        b = 8 if src == "F8_E8M0" else 1 + sum(FMT[src][:2])
        codes = list(range(1 << b)) if b <= 8 else \
            [rng.getrandbits(b) for _ in range(300)] + [0, 1, (1 << (b - 1)) - 1, 1 << (b - 1)]
        for dst in FMT:
            for c in codes:
                try:
                    want = encode(decode(c, src), dst)
                except ValueError:  # a NaN into a format without one: no code to compare
                    continue
                if convert(c, src, dst) != want:
                    bad.append((src, dst, c))
    check(not bad, "oracle.integer_path_equals_fractions", "first: %r" % (bad[:1],))


def canonical(code, dt):
    """What a cast to the same type gives: the code, or the canonical NaN."""
    if dt == "F8_E8M0":
        return code
    return convert(code, dt, dt)


# ---- tensors as codes ---------------------------------------------------------------------

def pack(dt, codes):
    """Element codes -> safetensors bytes."""
    if dt == "F4":
        out = bytearray((len(codes) + 1) // 2)
        for i, c in enumerate(codes):
            out[i // 2] |= (c & 15) << (4 * (i % 2))
        return bytes(out)
    if dt in ("F6_E2M3", "F6_E3M2"):
        acc = 0
        for i, c in enumerate(codes):
            acc |= (c & 63) << (6 * i)
        return acc.to_bytes((6 * len(codes) + 7) // 8, "little")
    size = ref.BITS[dt] // 8
    if dt == "C64":
        return b"".join(struct.pack("<II", re, im) for re, im in codes)
    return b"".join(c.to_bytes(size, "little") for c in codes)


def unpack(dt, raw, count):
    if dt == "F4":
        return [raw[i // 2] >> (4 * (i % 2)) & 15 for i in range(count)]
    if dt in ("F6_E2M3", "F6_E3M2"):
        acc = int.from_bytes(raw, "little")
        return [acc >> (6 * i) & 63 for i in range(count)]
    size = ref.BITS[dt] // 8
    return [int.from_bytes(raw[i * size:(i + 1) * size], "little") for i in range(count)]


def count_of(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def tensor(dt, shape, codes):
    return (dt, list(shape), pack(dt, codes))


def converted(t, dst):
    """A tensor as the cast should write it: floats converted to dst, the others as they are."""
    dt, shape, raw = t
    if dt not in FLOATS:
        return t
    codes = unpack(dt, raw, count_of(shape))
    return tensor(dst, shape, [convert(c, dt, dst) for c in codes])


def random_codes(rng, dt, n):
    if dt == "BOOL":
        return [rng.randrange(2) for _ in range(n)]
    if dt == "C64":
        return [(rng.getrandbits(32), rng.getrandbits(32)) for _ in range(n)]
    codes = [rng.getrandbits(ref.BITS[dt]) for _ in range(n)]
    if dt in ("F8_E4M3FNUZ", "F8_E5M2FNUZ"):
        codes = [0 if c == 0x80 else c for c in codes]  # the NaN's sign is not defined
    return codes


def f32(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


# ---- helpers ------------------------------------------------------------------------------

def describe_difference(out_path, want_tensors, want_meta):
    try:
        got, meta = ref.read(out_path)
    except Exception as e:  # noqa: BLE001
        return "output does not read back: %s" % e
    if meta != want_meta:
        return "metadata %r, want %r" % (meta, want_meta)
    if set(got) != set(want_tensors):
        return "tensors %s, want %s" % (sorted(got), sorted(want_tensors))
    for name in sorted(want_tensors):
        g, w = got[name], want_tensors[name]
        if g[0] != w[0] or g[1] != w[1]:
            return "tensor %s: %s %s, want %s %s" % (name, g[0], g[1], w[0], w[1])
        if g[2] != w[2]:
            n = count_of(w[1])
            if w[0] == "C64":
                return "tensor %s: data differs" % name
            gc, wc = unpack(w[0], g[2], n), unpack(w[0], w[2], n)
            bad = [i for i in range(n) if gc[i] != wc[i]]
            return "tensor %s (%s): %d codes differ, first at %d: 0x%X, want 0x%X" % (
                name, w[0], len(bad), bad[0], gc[bad[0]], wc[bad[0]])
    return "same tensors, different bytes (order or header layout)"


def expect_cast(name, d, src_tensors, src_meta, to, want_tensors, want_meta, extra=()):
    """Writes src, runs dtcast cast, compares the output with ref's file of want_tensors."""
    src = os.path.join(d, name + ".in.safetensors")
    out = os.path.join(d, name + ".out.safetensors")
    ref.write(src, src_tensors, src_meta)
    rc, _, err = run("cast", "--to", to, *extra, src, out)
    if not check(rc == 0, name + ".status", "status %d: %s" % (rc, err.strip())):
        return None
    want = ref.serialize(want_tensors, want_meta)
    got = open(out, "rb").read()
    check(got == want, name + ".bytes",
          got == want or describe_difference(out, want_tensors, want_meta))
    return out


def expect_refusal(name, d, data, words, status=1, args=("--to", "bfloat16")):
    """dtcast refuses the file: status, one 'dtcast: ' line naming the problem, no output."""
    sub = tempfile.mkdtemp(dir=d)
    src = os.path.join(sub, "in.safetensors")
    out = os.path.join(sub, "out.safetensors")
    with open(src, "wb") as f:
        f.write(data)
    rc, _, err = run("cast", *args, src, out)
    lines = err.rstrip("\n").split("\n")
    low = err.lower()
    named = all(any(w.lower() in low for w in alt.split("|")) for alt in words)
    check(rc == status and len(lines) == 1 and lines[0].startswith("dtcast: ") and named and
          os.listdir(sub) == ["in.safetensors"], name,
          "status %d (want %d), stderr %r (want one 'dtcast: ' line with %s), files %s"
          % (rc, status, err, words, os.listdir(sub)))


def raw_file(header, data=b"", n=None):
    h = header.encode("utf-8") if isinstance(header, str) else header
    return struct.pack("<Q", len(h) if n is None else n) + h + data


def entry(name, dtype, shape, begin, end):
    return '"%s":{"dtype":"%s","shape":%s,"data_offsets":[%d,%d]}' % (
        name, dtype, json.dumps(shape).replace(" ", ""), begin, end)


# ---- the tests ----------------------------------------------------------------------------

def interesting_f32():
    v = [0, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
         0x7F800001, 0xFFBFFFFF, 0x7FA00000, 0x00000001, 0x80000001, 0x007FFFFF, 0x00800000,
         0x7F7FFFFF, 0xFF7FFFFF, 0x7F7F7FFF, 0x7F7F8000, 0x3F808000, 0x3F818000, 0x3F808001,
         0x3F80FFFF, 0x3F7FFFFF, 0x00010000, 0x00018000, 0x00008000, 0x80008000, 0x33800000,
         f32(3.14159), f32(-2.5e-40), f32(65504.0), f32(1e-45)]
    rng = random.Random(32)
    return v + [rng.getrandbits(32) for _ in range(300)]


def interesting_f64():
    v = [0, 1 << 63, f64(1.0), f64(-1.0), f64(float("inf")), f64(float("-inf")),
         0x7FF8000000000000, 0xFFF8000000000001,
         f64(1 + 2 ** -8 + 2 ** -30), f64(-(1 + 2 ** -8 + 2 ** -30)),  # once, not via float32
         f64(1 + 2 ** -8), f64(1 + 3 * 2 ** -8),
         f64(3.3895313892515355e38), f64(3.3961775292304718e38),
         f64(3.4e38), f64(1e300), f64(-1e300), f64(1e-300), f64(2 ** -133), f64(2 ** -134),
         f64(2 ** -134 + 2 ** -160), f64(5e-324), f64(0.1), f64(-0.3)]
    rng = random.Random(64)
    for _ in range(300):
        exponent = 1023 + rng.randint(-140, 130)
        v.append(rng.getrandbits(1) << 63 | exponent << 52 | rng.getrandbits(52))
    return v


def all_dtype_tensors():
    """One tensor of each of the 22 dtypes: every code of the small formats and of F16/BF16."""
    rng = random.Random(22)
    t = {
        "f32.values": tensor("F32", [len(interesting_f32())], interesting_f32()),
        "f64.values": tensor("F64", [len(interesting_f64())], interesting_f64()),
        "f16.every_code": tensor("F16", [256, 256], list(range(65536))),
        "bf16.every_code": tensor("BF16", [65536], list(range(65536))),
        "e4m3.every_code": tensor("F8_E4M3", [16, 16], list(range(256))),
        "e5m2.every_code": tensor("F8_E5M2", [256], list(range(256))),
        "e4m3fnuz.codes": tensor("F8_E4M3FNUZ", [255], [c for c in range(256) if c != 0x80]),
        "e5m2fnuz.codes": tensor("F8_E5M2FNUZ", [255], [c for c in range(256) if c != 0x80]),
        "e8m0.every_code": tensor("F8_E8M0", [256], list(range(256))),
        "f4.every_code": tensor("F4", [2, 8], list(range(16))),
        "f6a.every_code": tensor("F6_E2M3", [64], list(range(64))),
        "f6b.every_code": tensor("F6_E3M2", [4, 16], list(range(63, -1, -1))),
        "c64": tensor("C64", [3], random_codes(rng, "C64", 3)),
        "bool": tensor("BOOL", [5], [1, 0, 1, 1, 0]),
    }
    for dt in ("U8", "I8", "U16", "I16", "U32", "I32", "U64", "I64"):
        t[dt.lower()] = tensor(dt, [7], random_codes(rng, dt, 7))
    return t


def test_cast_all_dtypes(d):
    src = all_dtype_tensors()
    meta = {"format": "pt", "note": "kept \"as is\"\n\u00e9"}
    for to in ("BF16", "F32", "F16"):
        want = {n: converted(t, to) for n, t in src.items()}
        out = expect_cast("cast_all_dtypes.to_" + DTCAST_NAME[to], d, src, meta, DTCAST_NAME[to],
                          want, meta)
        if to == "F32" and out:
            numpy_check(out, src)


def same_floats(a, b):
    import numpy as np
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    return np.array_equal(nan_a, nan_b) and np.array_equal(a[~nan_a], b[~nan_b])


def numpy_check(out, src):
    """The real safetensors and numpy, when present, read dtcast's float32 output."""
    try:
        import numpy as np
        from safetensors.numpy import load_file
    except Exception:  # noqa: BLE001
        return
    got = load_file(out)
    f16 = np.frombuffer(src["f16.every_code"][2], dtype="<f2").astype(np.float32)
    same = same_floats(f16, got["f16.every_code"].reshape(-1))
    f64v = np.frombuffer(src["f64.values"][2], dtype="<f8")
    with np.errstate(over="ignore"):
        f64c = f64v.astype(np.float32)
    same64 = same_floats(f64c, got["f64.values"])
    ints = all(np.array_equal(got[dt.lower()], np.frombuffer(src[dt.lower()][2], dtype=np.dtype(k)))
               for dt, k in (("U8", "u1"), ("I16", "<i2"), ("U64", "<u8"), ("I64", "<i8")))
    kinds = got["c64"].dtype == np.complex64 and got["bool"].dtype == np.bool_
    check(same and same64 and ints and kinds,
          "numpy.load_file", "float16 %s, float64 %s, ints %s" % (same, same64, ints))


def test_select_exclude(d):
    rng = random.Random(5)
    src = {
        "model.layers.0.weight": tensor("F32", [2, 3], random_codes(rng, "F32", 6)),
        "model.layers.0.bias": tensor("F32", [3], random_codes(rng, "F32", 3)),
        "model.norm.weight": tensor("F16", [4], random_codes(rng, "F16", 4)),
        "lm_head.weight": tensor("F64", [2], random_codes(rng, "F64", 2)),
        "step": tensor("I64", [], random_codes(rng, "I64", 1)),
    }
    cases = [
        ("select_weights", ["--select", "*.weight"], lambda n: n.endswith(".weight")),
        ("exclude_head", ["--exclude", "lm_head.*"], lambda n: not n.startswith("lm_head.")),
        ("select_twice", ["--select", "*.weight", "--select", "*bias"], lambda n: True),
        ("exclude_twice", ["--exclude", "*norm*", "--exclude", "lm_head.weight"],
         lambda n: "norm" not in n and n != "lm_head.weight"),
        ("select_and_exclude", ["--select", "model.*", "--exclude", "*.bias"],
         lambda n: fnmatch.fnmatchcase(n, "model.*") and not n.endswith(".bias")),
        ("select_int_name", ["--select", "step"], lambda n: False),
        ("select_nothing", ["--select", "nothing*"], lambda n: False),
        ("select_charclass", ["--select", "model.layers.[0-9].*"],
         lambda n: n.startswith("model.layers.")),
    ]
    for name, args, chosen in cases:
        want = {n: converted(t, "BF16") if chosen(n) else t for n, t in src.items()}
        expect_cast("select." + name, d, src, None, "bfloat16", want, None, args)


def valid_shapes(dt):
    shapes = {"s0d": [], "empty": [0], "s3": [3], "s2x5": [2, 5], "s4x3x7": [4, 3, 7]}
    return {k: s for k, s in shapes.items() if count_of(s) * ref.BITS[dt] % 8 == 0}


def test_round_trips(d):
    rng = random.Random(99)
    for dt in ref.BITS:
        src = {k: tensor(dt, s, random_codes(rng, dt, count_of(s)))
               for k, s in valid_shapes(dt).items()}
        if dt in FLOATS:
            same = {}
            for k, (_, shape, raw) in src.items():
                codes = unpack(dt, raw, count_of(shape))
                same[k] = tensor(dt, shape, [canonical(c, dt) for c in codes])
            expect_cast("round_trip.%s.same" % dt, d, src, None, DTCAST_NAME[dt], same, None)
            for to in ("F32", "BF16"):
                want = {k: converted(t, to) for k, t in src.items()}
                expect_cast("round_trip.%s.to_%s" % (dt, DTCAST_NAME[to]), d, src, None,
                            DTCAST_NAME[to], want, None)
        else:
            meta = {"k": "v"}
            expect_cast("round_trip.%s.copied" % dt, d, src, meta, "bfloat16", src, meta)


def f32_values_for(dt, rng):
    """float32 codes that exercise target dt: every tie, the overflow edge, random values."""
    e, m, bias, kind = FMT[dt]
    vals = []
    top = max_finite(dt)
    codes = range(1 << (width(dt) - 1))
    if width(dt) > 8:
        codes = sorted(rng.sample(codes, 1500))
    for c in codes:
        v = decode(c, dt)
        if v[0] != "num":
            continue
        nxt = decode(c + 1, dt)
        if nxt[0] == "num" and nxt[2] > v[2]:
            mid = (v[2] + nxt[2]) / 2
            near = Fraction(1, 1 << 20)
            for x in (v[2], mid, mid * (1 + near), mid * (1 - near)):
                if x < pow2(127):
                    vals.append(f32(float(x)))
                    vals.append(f32(-float(x)))
    ulp = pow2(emax(dt) - m)
    for x in (top, top + ulp / 2, top + ulp / 2 + ulp / 64, top * 2, pow2(-(bias + m + 2))):
        if x < pow2(127):
            vals += [f32(float(x)), f32(-float(x))]
    vals += [0, 0x80000000, 0x7F800000, 0xFF800000]
    if kind != "none":
        vals += [0x7FC00000, 0xFFC00001]
    for _ in range(200):
        ex = min(max(rng.randint(1 - bias - m - 2, emax(dt) + 2), -126), 127)
        vals.append(rng.getrandbits(1) << 31 | (ex + 127) << 23 | rng.getrandbits(23))
    return vals


def test_float32_to_every_float(d):
    rng = random.Random(7)
    for dt in FMT:
        if dt == "F32":
            continue
        vals = f32_values_for(dt, rng) if width(dt) <= 16 else interesting_f32()
        vals += [0] * (-len(vals) % 4)
        src = {"x": tensor("F32", [len(vals) // 4, 4], vals),
               "odd.shape": tensor("F32", [4, 3, 7], vals[:84]),
               "i": tensor("I32", [2], [1, 2])}
        want = {k: converted(t, dt) for k, t in src.items()}
        meta = {"m": "1"}
        expect_cast("float32_to.%s" % DTCAST_NAME[dt], d, src, meta, DTCAST_NAME[dt], want, meta)
    # a tensor whose elements do not fill whole bytes of the target
    src = os.path.join(d, "odd.safetensors")
    ref.write(src, {"x": tensor("F32", [3], [0, 0, 0])})
    for to in ("float4e2m1", "float6e2m3fn"):
        out = os.path.join(d, "odd_out.safetensors")
        rc, _, err = run("cast", "--to", to, src, out)
        one_line = err.startswith("dtcast: ") and err.count("\n") == 1
        check(rc != 0 and one_line and not os.path.exists(out) and "byte" in err,
              "float32_to.%s.not_whole_bytes" % to,
              "status %d, %r" % (rc, err))


def test_type_not_held(d):
    data = ref.serialize({"w": tensor("F32", [2], [0, f32(1.0)])})
    for to in ("float8e4m3", "int4", "float8e4m3b11fnuz", "complex128"):
        expect_refusal("not_held." + to, d, data,
                       [to, "bfloat16", "float8e4m3fn", "float6e3m2fn", "float4e2m1"], status=2,
                       args=("--to", to))


def hostile_files():
    """name -> (file bytes, words the message must hold: each item one of '|'-separated words)"""
    good_header = "{" + entry("a", "F32", [2], 0, 8) + "," + entry("b", "U8", [4], 8, 12) + "}"
    good = raw_file(good_header, bytes(12))
    h = {}

    def add(name, header, data, *words):
        h[name] = (raw_file(header, data), list(words))

    def one(name, dtype, shape, begin, end, data, *words):
        add(name, "{" + entry("w", dtype, shape, begin, end) + "}", data, *words)

    def two(name, a, b, data, *words):
        add(name, "{" + entry("a", *a) + "," + entry("b", *b) + "}", data, *words)

    def w(fields):
        return '{"w":{' + fields + "}}"

    length = "header length|limit|large|short|8 bytes|end of the file|past"
    h["empty_file"] = (b"", [length])
    h["seven_bytes"] = (b"\x10\0\0\0\0\0\0", [length])
    h["n_huge"] = (struct.pack("<Q", 2 ** 64 - 1) + b"{}", [length])
    h["n_over_limit"] = (struct.pack("<Q", 100_000_001) + b"{}" + bytes(100), [length])
    h["n_past_end"] = (struct.pack("<Q", 1000) + b"{}" + bytes(100), [length])
    h["n_limit_file_small"] = (struct.pack("<Q", 100_000_000) + b"{}", [length])
    add("not_json", "hello   ", b"", "expected|json")
    add("json_array", "[]      ", b"", "object")
    add("json_truncated", '{"a":{"dtype":"F32"', b"", "expected|end of the text")
    add("json_trailing", "{} x", b"", "expected|after")
    add("nan_literal", w('"dtype":"F32","shape":[NaN],"data_offsets":[0,4]'), bytes(4), "value")
    u8 = '"dtype":"U8","shape":[1],"data_offsets":[0,1]'
    add("non_utf8", b'{"a\xff":{' + u8.encode() + b"}}", b"x", "UTF-8")
    add("overlong_utf8", b'{"a\xc0\xaf":{' + u8.encode() + b"}}", b"x", "UTF-8")
    add("lone_surrogate", '{"\\ud800":{' + u8 + "}}", b"x", "surrogate")
    add("nul_in_name", '{"a\\u0000b":{' + u8 + "}}", b"x", "NUL")
    add("deep_json", "[" * 100000 + "]" * 100000, b"", "nesting|deep")
    add("deep_in_entry", '{"a":{' + u8 + ',"x":' + "[" * 70 + "]" * 70 + "}}", b"x", "nesting|deep")
    twice = "{" + entry("w", "U8", [1], 0, 1) + "," + entry("w", "U8", [1], 1, 2) + "}"
    add("duplicate_name", twice, b"xy", "duplicate", "'w'")
    add("duplicate_metadata_key", '{"__metadata__":{"k":"1","k":"2"}}', b"", "duplicate", "k")
    add("metadata_not_strings", '{"__metadata__":{"k":1}}', b"", "__metadata__", "string")
    add("metadata_not_object", '{"__metadata__":"x"}', b"", "__metadata__", "object")
    one("bad_dtype", "F7", [1], 0, 1, b"x", "dtype", "F7", "'w'")
    one("dtype_lower_case", "f32", [1], 0, 4, bytes(4), "dtype", "f32")
    add("entry_not_object", '{"w":[1,2]}', b"", "'w'", "object")
    add("missing_dtype", w('"shape":[1],"data_offsets":[0,1]'), b"x", "'w'", "dtype")
    add("missing_shape", w('"dtype":"U8","data_offsets":[0,1]'), b"x", "'w'", "shape")
    add("missing_offsets", w('"dtype":"U8","shape":[1]'), b"x", "'w'", "data_offsets")
    dim = "shape|dimension"
    add("shape_negative", w('"dtype":"U8","shape":[-1],"data_offsets":[0,1]'), b"x", "'w'", dim)
    add("shape_float", w('"dtype":"U8","shape":[1.0],"data_offsets":[0,1]'), b"x", "'w'", dim)
    add("shape_string", w('"dtype":"U8","shape":"1","data_offsets":[0,1]'), b"x", "'w'", "shape")
    add("shape_overflow", w('"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,1]'),
        b"x", "'w'", "64 bits|large|overflow")
    add("count_overflow", w('"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]'),
        bytes(4), "'w'", "overflow")
    offsets = "data_offsets"
    add("offsets_three", w('"dtype":"U8","shape":[1],"data_offsets":[0,1,1]'), b"x", "'w'", offsets)
    add("offsets_negative", w('"dtype":"U8","shape":[1],"data_offsets":[-1,0]'), b"x", "'w'",
        offsets)
    one("end_before_begin", "U8", [0], 4, 0, bytes(4), "'w'", "begin|before")
    one("shape_size_mismatch", "F32", [2, 2], 0, 4, bytes(4), "'w'", "bytes")
    one("f4_not_whole_bytes", "F4", [3], 0, 2, bytes(2), "'w'", "whole number of bytes|byte")
    one("f6_not_whole_bytes", "F6_E2M3", [2], 0, 2, bytes(2), "'w'", "whole number of bytes|byte")
    two("overlap", ("F32", [2], 0, 8), ("F32", [2], 4, 12), bytes(12), "overlap", "'b'")
    two("same_range_twice", ("F32", [2], 0, 8), ("F32", [2], 0, 8), bytes(8), "overlap")
    two("hole", ("F32", [1], 0, 4), ("F32", [1], 8, 12), bytes(12), "hole|no tensor", "'b'")
    one("hole_at_start", "F32", [1], 4, 8, bytes(8), "hole|no tensor")
    one("range_missing_data", "F32", [4], 0, 16, bytes(10), "'w'", "end|past|truncated")
    h["trailing_bytes"] = (good + b"extra", ["after the last|trailing|bytes after"])
    add("data_without_tensors", "{}      ", b"x", "after the last|trailing|bytes after")
    one("offsets_u64_max", "U8", [0], 2 ** 64 - 1, 2 ** 64 - 1, b"", "hole|no tensor|past")
    # truncations of a valid file at many points (the whole file is valid only uncut)
    for cut in sorted(set(list(range(0, 24)) + list(range(24, len(good), 7)) + [len(good) - 1])):
        h["truncated_at_%d" % cut] = (good[:cut], [length + "|truncated|expected|data"])
    return h


def test_hostile(d):
    for name, (data, words) in hostile_files().items():
        expect_refusal("hostile." + name, d, data, words)


def test_sharded(d):
    src_dir = os.path.join(d, "ckpt")
    out_dir = os.path.join(d, "ckpt_bf16")
    os.makedirs(src_dir)
    os.makedirs(out_dir)
    rng = random.Random(3)
    shards = {
        "model-00001-of-00003.safetensors": {
            "embed.weight": tensor("F32", [4, 3], random_codes(rng, "F32", 12)),
            "layer.0.bias": tensor("F16", [3], random_codes(rng, "F16", 3)),
        },
        "model-00002-of-00003.safetensors": {
            "layer.0.weight": tensor("BF16", [3, 3], random_codes(rng, "BF16", 9)),
            "layer.0.steps": tensor("I64", [2], random_codes(rng, "I64", 2)),
            "layer.0.scale": tensor("F8_E4M3", [4], [0x38, 0x40, 0xB8, 0x7E]),
        },
        "model-00003-of-00003.safetensors": {
            "head.weight": tensor("F64", [2, 2], random_codes(rng, "F64", 4)),
        },
    }
    weight_map = {}
    total = 0
    for fname, ts in shards.items():
        ref.write(os.path.join(src_dir, fname), ts, {"format": "pt"})
        for n, t in ts.items():
            weight_map[n] = fname
            total += len(t[2])
    producer = {"name": "test", "version": 2}
    index = {"metadata": {"total_size": total, "format": "pt", "producer": producer},
             "weight_map": weight_map}
    index_path = os.path.join(src_dir, "model.safetensors.index.json")
    with open(index_path, "w") as f:
        json.dump(index, f, indent=2)
    rc, _, err = run("cast", "--to", "bfloat16", index_path, out_dir)
    if not check(rc == 0, "sharded.status", "status %d: %s" % (rc, err.strip())):
        return
    files = sorted(os.listdir(out_dir))
    check(files == sorted(list(shards) + ["model.safetensors.index.json"]), "sharded.files", files)
    new_total = 0
    for fname, ts in shards.items():
        want = {n: converted(t, "BF16") for n, t in ts.items()}
        new_total += sum(len(t[2]) for t in want.values())
        path = os.path.join(out_dir, fname)
        got = open(path, "rb").read() if os.path.exists(path) else b""
        check(got == ref.serialize(want, {"format": "pt"}), "sharded.shard." + fname[6:11],
              got == b"" and "missing" or describe_difference(path, want, {"format": "pt"}))
    want_index = {"metadata": {"total_size": new_total, "format": "pt", "producer": producer},
                  "weight_map": weight_map}
    path = os.path.join(out_dir, "model.safetensors.index.json")
    got = open(path, "rb").read() if os.path.exists(path) else b""
    try:
        parsed = json.loads(got)
    except ValueError:
        parsed = None
    check(parsed == want_index, "sharded.index_content", "got %r" % got[:300])
    hf_layout = (json.dumps(want_index, indent=2, sort_keys=True) + "\n").encode()
    check(got == hf_layout, "sharded.index_bytes",
          "not the HF writer's layout: %r" % got[:300])
    # a shard name that leaves the folder is refused, nothing written
    bad_dir = os.path.join(d, "bad")
    os.makedirs(bad_dir)
    bad_index = os.path.join(src_dir, "bad.safetensors.index.json")
    with open(bad_index, "w") as f:
        json.dump({"metadata": {}, "weight_map": {"a": "../x.safetensors"}}, f)
    rc, _, err = run("cast", "--to", "bfloat16", bad_index, bad_dir)
    check(rc == 1 and err.startswith("dtcast: ") and "plain file name" in err and
          os.listdir(bad_dir) == [],
          "sharded.refuse_path", "status %d: %r, files %s" % (rc, err, os.listdir(bad_dir)))


def test_real_safetensors(d):
    """Files of the real package: read by dtcast, and dtcast's output read by the package."""
    try:
        import numpy as np
        import safetensors
        from safetensors.numpy import save_file
    except Exception:  # noqa: BLE001
        return
    a = np.array([[1.0, -2.5, 3.25], [1e-3, 65504.0, -0.0]], dtype=np.float32)
    b = np.arange(6, dtype=np.int16)
    c = np.array([0.1, 1e300, -1e-300], dtype=np.float64)
    src = os.path.join(d, "real.safetensors")
    out = os.path.join(d, "real_bf16.safetensors")
    save_file({"a": a, "b": b, "c": c}, src, metadata={"format": "np"})
    rc, _, err = run("cast", "--to", "bfloat16", src, out)
    if not check(rc == 0, "real.status", "status %d: %s" % (rc, err.strip())):
        return
    got = {name: t for name, t in safetensors.deserialize(open(out, "rb").read())}
    want = {"a": converted(tensor("F32", [2, 3], [f32(float(x)) for x in a.reshape(-1)]), "BF16"),
            "b": ("I16", [6], b.tobytes()),
            "c": converted(tensor("F64", [3], [f64(float(x)) for x in c]), "BF16")}
    ok = set(got) == set(want) and all(
        (got[n]["dtype"], list(got[n]["shape"]), bytes(got[n]["data"])) == want[n] for n in want)
    check(ok, "real.read_by_safetensors", {n: (t["dtype"], t["shape"]) for n, t in got.items()})
    with safetensors.safe_open(out, framework="numpy") as f:
        check(f.metadata() == {"format": "np"}, "real.metadata", f.metadata())


def main():
    if not os.path.exists(DTCAST):
        check(False, "dtcast", "no CLI at " + DTCAST)
        return 1
    test_oracle_paths()
    with tempfile.TemporaryDirectory() as d:
        test_cast_all_dtypes(d)
        test_select_exclude(d)
        test_round_trips(d)
        test_float32_to_every_float(d)
        test_type_not_held(d)
        test_hostile(d)
        test_sharded(d)
        test_real_safetensors(d)
    return 1 if failures() else 0


if __name__ == "__main__":
    sys.exit(main())
