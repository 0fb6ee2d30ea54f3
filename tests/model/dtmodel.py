#!/usr/bin/env python3
"""dtmodel -- an independent reference model of dtcast's numeric conversions.

Written only from docs/formats.md (the types), docs/conversion.md (the conversion model) and
include/dtcast.h.  It does not look at the library's sources.

Two implementations of the same model live in this file, on purpose different in method, and the
conformance tests compare them with each other on samples (so the fast one is itself tested):

* The SLOW model (decode_slow / encode_slow) is scalar and written as plainly as docs/conversion.md
  ("The model") reads:
  a code decodes to an exact value (fractions.Fraction magnitude + sign, or a NaN / Inf marker);
  encoding finds the two neighbours of the exact value among the target's values -- for targets of at
  most 16 bits by listing every code of the target, decoding it and sorting (a "grid"), for float32 /
  float64 by exact Fraction arithmetic -- and picks one per rounding mode, then applies the overflow
  policies.  Nothing is ever rounded by a float.

* The FAST model (decode_fast / encode_fast) is vectorised with numpy and exact because it never
  uses floating point at all: every finite value of every source type is held as
        (-1)^neg * M * 2^E      with M a uint64 (M < 2^64) and E an int64,
  which is exact for all types (float64 has M < 2^53; int64 magnitudes are <= 2^63; uint64 < 2^64).
  Rounding to a target is integer arithmetic: the exponent of the leading bit of M is found by
  shifts, the quantum q of the target at that exponent is max(e, emin) - mantissa_bits, and
  M is shifted right by s = q - E with the discarded bits compared to exactly one half quantum
  (remainder vs 1 << (s-1), all in uint64; s >= 65 means "nonzero and below half").  Integer
  targets use the same shift with q = 0.  Results are codes (uint64 bit patterns).
  Why this is exact: every step is an integer operation on values < 2^64 (shifts never exceed 63
  bits; shifts by >= 64 are handled as separate cases), and the rounding decision uses only the
  exact remainder.  No float64 operation is used on values, so no hidden rounding can occur.

Conventions (docs/conversion.md: "Rounding modes", "Float overflow", "Integer targets"; binding):
  modes: 'rne', 'rna' (= round, ties away), 'floor', 'ceil', 'trunc', 'odd'.
  float overflow policy: 'ieee', 'saturate' or 'inf' (as 'ieee', but the directed modes overflow
  to Inf/NaN too: DTCAST_FLOAT_OVERFLOW_INF); integer overflow policy: 'wrap' or 'saturate'.
  "odd" takes, for inexact results, the neighbour k*q (q = spacing of the two neighbours) with k odd.
  For ties under rne the neighbour with k even is taken.  With this one definition float8e8m0
  (1-bit significand) has lower = 1*2^e (odd), upper = 2*2^e (even): rne ties go up and odd
  behaves like trunc (docs/conversion.md, "float8e8m0 targets").

Run `python3 dtmodel.py` for the model's self-tests.
"""
from fractions import Fraction
import math
import bisect

import numpy as np

U64 = np.uint64
MODES = ('rne', 'rna', 'floor', 'ceil', 'trunc', 'odd')
MODE_CODE = {'default': 0, 'rne': 1, 'rna': 2, 'floor': 3, 'ceil': 4, 'trunc': 5, 'odd': 6}

# --------------------------------------------------------------------------------------------
# Types (docs/formats.md: "Names and codes", "Floating-point formats").  Enum values from
# include/dtcast.h.
# --------------------------------------------------------------------------------------------


class FloatFmt:
    """A binary float format.  style: 'ieee' (Inf = exp all ones, mant 0; NaN = exp all ones,
    mant != 0), 'fn' (no Inf; NaN = all ones magnitude), 'fnuz' (no Inf, no -0; NaN = 0x80),
    'none' (no Inf, no NaN), 'e8m0' (unsigned 2^(c-127), NaN 0xFF).  signed=False: a format
    without a sign bit (float8e5m3fnu; docs/conversion.md, "Unsigned floats")."""

    def __init__(self, name, code, bits, ebits, mbits, bias, style, signed=True):
        self.name, self.code, self.bits = name, code, bits
        self.ebits, self.mbits, self.bias, self.style = ebits, mbits, bias, style
        self.signed = signed and style != 'e8m0'
        self.signbit = 1 << (bits - 1) if self.signed else 0
        self.magmask = (1 << (ebits + mbits)) - 1   # the bits below the sign
        self.has_inf = style == 'ieee'
        self.has_nan = style in ('ieee', 'fn', 'fnuz', 'e8m0')
        self.has_negzero = self.signed and style in ('ieee', 'fn', 'none')
        eall = (1 << ebits) - 1
        mall = (1 << mbits) - 1
        if style == 'ieee':
            self.maxcode = ((eall - 1) << mbits) | mall
            self.infcode = eall << mbits
            self.nancode = (eall << mbits) | (1 << (mbits - 1))
        elif style == 'fn':
            self.maxcode = (eall << mbits) | (mall - 1)
            self.infcode = None
            self.nancode = (eall << mbits) | mall
        elif style == 'fnuz':
            self.maxcode = (1 << (bits - 1)) - 1
            self.infcode = None
            self.nancode = 0x80
        elif style == 'none':
            self.maxcode = (1 << (bits - 1)) - 1
            self.infcode = None
            self.nancode = None
        else:  # e8m0
            self.maxcode = 0xFE
            self.infcode = None
            self.nancode = 0xFF
        self.emin = 1 - bias            # exponent of the smallest normal
        self.maxexpf = self.maxcode >> mbits
        self.maxmant = self.maxcode & mall

    def nan_code(self, neg):
        """Canonical NaN for a NaN input of the given sign (docs/conversion.md, "NaN inputs")."""
        if self.style in ('ieee', 'fn'):
            return self.nancode | (self.signbit if neg else 0)
        return self.nancode  # fnuz 0x80, e8m0 0xFF

    def __repr__(self):
        return self.name


class IntFmt:
    def __init__(self, name, code, bits, signed):
        self.name, self.code, self.bits, self.signed = name, code, bits, signed
        self.mask = (1 << bits) - 1
        self.minv = -(1 << (bits - 1)) if signed else 0
        self.maxv = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1

    def __repr__(self):
        return self.name


class BoolFmt:
    name, code, bits = 'bool', 9, 8

    def __repr__(self):
        return 'bool'


class ComplexFmt:
    def __init__(self, name, code, part):
        self.name, self.code, self.part = name, code, part
        self.bits = 2 * part.bits

    def __repr__(self):
        return self.name


F = {}
for _a in [('float32', 1, 32, 8, 23, 127, 'ieee'), ('float16', 10, 16, 5, 10, 15, 'ieee'),
           ('float64', 11, 64, 11, 52, 1023, 'ieee'), ('bfloat16', 16, 16, 8, 7, 127, 'ieee'),
           ('float8e4m3fn', 17, 8, 4, 3, 7, 'fn'), ('float8e4m3fnuz', 18, 8, 4, 3, 8, 'fnuz'),
           ('float8e5m2', 19, 8, 5, 2, 15, 'ieee'), ('float8e5m2fnuz', 20, 8, 5, 2, 16, 'fnuz'),
           ('float4e2m1', 23, 4, 2, 1, 1, 'none'), ('float8e8m0', 24, 8, 8, 0, 127, 'e8m0'),
           ('float8e4m3', 102, 8, 4, 3, 7, 'ieee'), ('float8e3m4', 103, 8, 3, 4, 3, 'ieee'),
           ('float8e4m3b11fnuz', 104, 8, 4, 3, 11, 'fnuz'),
           ('float6e2m3fn', 105, 6, 2, 3, 1, 'none'), ('float6e3m2fn', 106, 6, 3, 2, 3, 'none'),
           ('float8e5m3fnu', 108, 8, 5, 3, 15, 'fn', False)]:
    F[_a[0]] = FloatFmt(*_a)
I = {}
for _a in [('uint8', 2, 8, False), ('int8', 3, 8, True), ('uint16', 4, 16, False),
           ('int16', 5, 16, True), ('int32', 6, 32, True), ('int64', 7, 64, True),
           ('uint32', 12, 32, False), ('uint64', 13, 64, False), ('uint4', 21, 4, False),
           ('int4', 22, 4, True), ('uint2', 25, 2, False), ('int2', 26, 2, True),
           ('uint1', 107, 1, False), ('int1', 109, 1, True)]:
    I[_a[0]] = IntFmt(*_a)
BOOL = BoolFmt()
C = {'complex32': ComplexFmt('complex32', 101, F['float16']),
     'bcomplex32': ComplexFmt('bcomplex32', 110, F['bfloat16']),
     'complex64': ComplexFmt('complex64', 14, F['float32']),
     'complex128': ComplexFmt('complex128', 15, F['float64'])}
TYPES = {}
TYPES.update(F)
TYPES.update(I)
TYPES['bool'] = BOOL
TYPES.update(C)
ALL_NAMES = sorted(TYPES, key=lambda n: TYPES[n].code)
REAL_NAMES = [n for n in ALL_NAMES if not isinstance(TYPES[n], ComplexFmt)]


def kind(t):
    if isinstance(t, FloatFmt):
        return 'float'
    if isinstance(t, IntFmt):
        return 'int'
    if isinstance(t, BoolFmt):
        return 'bool'
    return 'complex'


def default_mode(t):
    """DTCAST_ROUND_DEFAULT: rne for float targets, trunc for integer targets (dtcast.h)."""
    if isinstance(t, ComplexFmt):
        t = t.part
    return 'trunc' if isinstance(t, IntFmt) else 'rne'


def combos(dst):
    """(mode, float policy, int policy) triples the tests run for a target type: the default mode
    and every named one, with both policies of the target's kind; float targets also take the
    'inf' policy in the directed modes (elsewhere it is 'ieee')."""
    modes = ['default'] + list(MODES)
    k = kind(dst)
    if k in ('float', 'complex'):
        pols = [('ieee', 'wrap'), ('saturate', 'wrap')]
    elif k == 'int':
        pols = [('ieee', 'wrap'), ('ieee', 'saturate')]
    else:
        pols = [('ieee', 'wrap'), ('saturate', 'saturate')]
    out = [(m, f, i) for m in modes for f, i in pols]
    if k in ('float', 'complex'):
        out += [(m, 'inf', 'wrap') for m in ('floor', 'ceil', 'trunc', 'odd')]
    return out


def resolve(mode, dst):
    """The named mode 'default' stands for on this target."""
    return default_mode(dst) if mode == 'default' else mode


# --------------------------------------------------------------------------------------------
# Storage (docs/formats.md, "Memory layout").  Codes are element bit patterns held in uint64 arrays.
# --------------------------------------------------------------------------------------------

def storage_bytes(t, n):
    if isinstance(t, ComplexFmt):
        return n * t.bits // 8
    b = t.bits
    if b == 6:
        return n
    if b < 8:
        per = 8 // b
        return (n + per - 1) // per
    return n * b // 8


def pack(t, codes):
    """codes (uint64 array of element codes; complex: shape (n, 2)) -> bytes as dtcast stores them."""
    codes = np.asarray(codes, dtype=U64)
    if isinstance(t, ComplexFmt):
        return pack(t.part, codes.reshape(-1))
    b = t.bits
    if b == 6 or b == 8:
        return codes.astype(np.uint8).tobytes()
    if b in (16, 32, 64):
        return codes.astype({16: '<u2', 32: '<u4', 64: '<u8'}[b]).tobytes()
    per = 8 // b
    n = len(codes)
    m = (n + per - 1) // per
    padded = np.zeros(m * per, dtype=U64)
    padded[:n] = codes & U64((1 << b) - 1)
    padded = padded.reshape(m, per)
    out = np.zeros(m, dtype=U64)
    for j in range(per):
        out |= padded[:, j] << U64(b * j)
    return out.astype(np.uint8).tobytes()


def unpack(t, data, n):
    """bytes -> element codes (uint64; complex: shape (n, 2)).  Sub-byte: element k*per+j from
    bits b*j..; float6: the whole byte is returned (so stray high bits show up as mismatches)."""
    if isinstance(t, ComplexFmt):
        return unpack(t.part, data, 2 * n).reshape(n, 2)
    b = t.bits
    raw = np.frombuffer(bytes(data), dtype=np.uint8)
    if b == 6 or b == 8:
        return raw[:n].astype(U64)
    if b in (16, 32, 64):
        dt = {16: '<u2', 32: '<u4', 64: '<u8'}[b]
        return np.frombuffer(bytes(data), dtype=dt)[:n].astype(U64)
    per = 8 // b
    r = raw.astype(U64)
    parts = [(r >> U64(b * j)) & U64((1 << b) - 1) for j in range(per)]
    return np.stack(parts, axis=1).reshape(-1)[:n]


def padding_ok(t, data, n):
    """True when the unused high bits of the last byte of a packed sub-byte tensor are zero."""
    b = t.bits if not isinstance(t, ComplexFmt) else 8
    if b >= 8 or b == 6:
        return True
    per = 8 // b
    if n % per == 0:
        return True
    last = bytes(data)[storage_bytes(t, n) - 1]
    used = (n % per) * b
    return (last >> used) == 0


# ============================================================================================
# SLOW model: scalar, Fraction based, as docs/conversion.md ("The model") reads.
# A value is a tuple (kind, neg, mag): kind in 'num', 'inf', 'nan'; mag a Fraction >= 0.
# ============================================================================================

def decode_slow(t, code):
    code = int(code)
    if isinstance(t, BoolFmt):
        return ('num', False, Fraction(code))
    if isinstance(t, IntFmt):
        v = code
        if t.signed and code >= (1 << (t.bits - 1)):
            v = code - (1 << t.bits)
        return ('num', v < 0, Fraction(abs(v)))
    f = t
    if f.style == 'e8m0':
        if code == 0xFF:
            return ('nan', False, None)
        return ('num', False, Fraction(2) ** (code - 127))
    neg = bool(code & f.signbit)
    expf = (code >> f.mbits) & ((1 << f.ebits) - 1)
    mant = code & ((1 << f.mbits) - 1)
    eall = (1 << f.ebits) - 1
    if f.style == 'ieee' and expf == eall:
        return ('inf', neg, None) if mant == 0 else ('nan', neg, None)
    if f.style == 'fn' and expf == eall and mant == (1 << f.mbits) - 1:
        return ('nan', neg, None)
    if f.style == 'fnuz' and code == 0x80:
        return ('nan', False, None)
    if expf == 0:
        mag = Fraction(2) ** (1 - f.bias) * Fraction(mant, 1 << f.mbits)
    else:
        mag = Fraction(2) ** (expf - f.bias) * (1 + Fraction(mant, 1 << f.mbits))
    return ('num', neg, mag)


_GRIDS = {}


def _grid(f):
    """Sorted list of (value, code) for all finite values of a float format of <= 16 bits;
    -0 is left out (the sign of a zero result is decided separately)."""
    g = _GRIDS.get(f.name)
    if g is None:
        seen = {}
        for c in range(1 << f.bits):
            k, neg, mag = decode_slow(f, c)
            if k != 'num':
                continue
            v = -mag if neg else mag
            if v == 0 and neg:
                continue
            assert v not in seen, (f, c)
            seen[v] = c
        vals = sorted(seen)
        g = (vals, seen)
        _GRIDS[f.name] = g
    return g


_MAXVALS = {}


def _maxval(f):
    m = _MAXVALS.get(f.name)  # decoded once per format, as _grid
    if m is None:
        m = _MAXVALS[f.name] = decode_slow(f, f.maxcode)[2]
    return m


_BEYOND = {}


def _beyond_max(f):
    """The next value above max with an unbounded exponent: max + 2^(floor(log2 max) - mbits)."""
    b = _BEYOND.get(f.name)
    if b is None:
        m = _maxval(f)
        b = _BEYOND[f.name] = m + Fraction(2) ** (_floor_log2(m) - f.mbits)
    return b


def _floor_log2(x):
    """floor(log2(x)) for a Fraction x > 0, exactly."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    elif Fraction(2) ** (e + 1) <= x:
        e += 1
    return e


def _choose(v, lo, hi, mode):
    """Pick a neighbour of the exact value v (lo < v < hi, signed Fractions) per the mode.
    q = hi - lo; lo = k*q with an integer k; 'even' and 'odd' refer to that k."""
    q = hi - lo
    k_lo = lo / q
    assert k_lo.denominator == 1, (v, lo, hi)
    lo_even = k_lo.numerator % 2 == 0
    if mode == 'floor':
        return lo
    if mode == 'ceil':
        return hi
    if mode == 'trunc':
        return lo if v > 0 else hi
    if mode == 'odd':
        return hi if lo_even else lo
    dlo, dhi = v - lo, hi - v
    if dlo < dhi:
        return lo
    if dhi < dlo:
        return hi
    if mode == 'rna':
        return hi if v > 0 else lo
    assert mode == 'rne'
    return lo if lo_even else hi


def _rounds_down_magnitude(mode, neg):
    return mode in ('trunc', 'odd') or (mode == 'floor' and not neg) or (mode == 'ceil' and neg)


def _encode_wide_float(f, v):
    """Code of an exact representable nonzero value of float32/float64 (magnitude <= max)."""
    neg = v < 0
    a = -v if neg else v
    e = _floor_log2(a)
    if e < f.emin:
        expf, mant = 0, a / Fraction(2) ** (f.emin - f.mbits)
    else:
        expf, mant = e + f.bias, (a / Fraction(2) ** e - 1) * (1 << f.mbits)
    assert mant.denominator == 1 and 0 <= mant < (1 << f.mbits) and expf < (1 << f.ebits) - 1
    return (f.signbit if neg else 0) | (expf << f.mbits) | int(mant)


def _neighbours_wide(f, v):
    """Neighbours of v (not representable) for float32/float64, unbounded exponent above."""
    a = abs(v)
    e = max(_floor_log2(a), f.emin)
    q = Fraction(2) ** (e - f.mbits)
    lo = math.floor(a / q) * q
    hi = lo + q
    return (lo, hi) if v > 0 else (-hi, -lo)


def encode_slow(t, x, mode='rne', fov='ieee', iov='wrap', nan_as_max=False):
    """Encode the value x = (kind, neg, mag) into a code of the real type t."""
    kind_, neg, mag = x
    if isinstance(t, BoolFmt):
        return 0 if (kind_ == 'num' and mag == 0) else 1
    if isinstance(t, IntFmt):
        if kind_ == 'nan':
            return 0
        if kind_ == 'inf':
            if iov == 'wrap':
                return 0
            return (t.minv if neg else t.maxv) & t.mask
        v = -mag if neg else mag
        lo = math.floor(v)
        n = lo if lo == v else _choose(v, Fraction(lo), Fraction(lo + 1), mode)
        n = int(n)
        if iov == 'saturate':
            n = min(max(n, t.minv), t.maxv)
        return n & t.mask
    f = t
    if f.style == 'e8m0':
        if kind_ != 'num':
            return 0xFF
        if mag < Fraction(2) ** -127:
            return 0x00
        vals, codes = _grid(f)
        big = Fraction(2) ** 128
        if mag in codes:
            return codes[mag]
        if mag >= big:  # 2^128 itself is exact and beyond max: overflow in every mode
            r = big
        else:
            i = bisect.bisect_left(vals, mag)
            lo = vals[i - 1]
            hi = vals[i] if i < len(vals) else big
            r = _choose(mag, lo, hi, mode)
        if r > vals[-1]:
            if fov == 'saturate' or (_rounds_down_magnitude(mode, False) and fov != 'inf'):
                return 0xFE
            return 0xFF
        return codes[r]
    if not f.signed and neg and (kind_ == 'inf' or (kind_ == 'num' and mag != 0)):
        # below the range [0, max] of a format without a sign (docs/conversion.md, "Unsigned
        # floats"): its end 0 when saturating or in a mode that moves no negative value away
        # from zero (a finite one), else NaN -- before any rounding
        if fov == 'saturate' or (kind_ == 'num' and _rounds_down_magnitude(mode, True) and
                                 fov != 'inf'):
            return 0
        return f.nancode
    sign = f.signbit if neg else 0
    maxc = f.maxcode | sign
    if kind_ == 'nan':
        if f.style == 'none':
            if nan_as_max:
                return f.maxcode
            # docs/conversion.md, "Targets without NaN": +NaN -> code of -0, -NaN -> 0 (ONNX data)
            return 0 if neg else f.signbit
        return f.nan_code(neg)
    if kind_ == 'inf':
        if fov == 'saturate':
            return maxc
        if f.has_inf:
            return f.infcode | sign
        if f.has_nan:
            return f.nan_code(neg)
        return maxc
    v = -mag if neg else mag
    if f.bits <= 16:
        vals, codes = _grid(f)
        if v in codes:
            r = v
        else:
            b = _beyond_max(f)
            ext_lo, ext_hi = -b, b
            if v >= ext_hi or v <= ext_lo:
                r = v  # at or beyond the first value past max: overflow in every mode
            else:
                i = bisect.bisect_left(vals, v)
                lo = vals[i - 1] if i > 0 else ext_lo
                hi = vals[i] if i < len(vals) else ext_hi
                r = _choose(v, lo, hi, mode)
    else:
        if v == 0:
            r = v
        else:
            lo, hi = _neighbours_wide(f, v)
            r = v if lo == v or hi == v else _choose(v, lo, hi, mode)
    m = _maxval(f)
    if abs(r) > m:
        if fov == 'saturate' or (_rounds_down_magnitude(mode, neg) and fov != 'inf'):
            return maxc
        if f.has_inf:
            return f.infcode | sign
        if f.has_nan:
            return f.nan_code(neg)
        return maxc
    if r == 0:
        return sign if f.has_negzero else 0
    if f.bits <= 16:
        return _grid(f)[1][r]
    return _encode_wide_float(f, r)


def convert_slow(src, dst, code, mode='rne', fov='ieee', iov='wrap', nan_as_max=False):
    """One element: src code -> dst code (complex: code is a (re, im) pair)."""
    if isinstance(src, ComplexFmt):
        re, im = code
        if isinstance(dst, ComplexFmt):
            return (convert_slow(src.part, dst.part, re, mode, fov, iov, nan_as_max),
                    convert_slow(src.part, dst.part, im, mode, fov, iov, nan_as_max))
        return convert_slow(src.part, dst, re, mode, fov, iov, nan_as_max)
    if isinstance(dst, ComplexFmt):
        return (convert_slow(src, dst.part, code, mode, fov, iov, nan_as_max), 0)
    return encode_slow(dst, decode_slow(src, code), mode, fov, iov, nan_as_max)


# ============================================================================================
# FAST model: numpy, integers only.
# ============================================================================================

class Vals:
    """Exact values, vectorised: cls 0 finite / 1 inf / 2 nan; neg; |x| = M * 2^E (M uint64)."""

    def __init__(self, cls, neg, M, E):
        self.cls = np.asarray(cls, dtype=np.uint8)
        self.neg = np.asarray(neg, dtype=bool)
        self.M = np.asarray(M, dtype=U64)
        self.E = np.asarray(E, dtype=np.int64)
        self._bitlen = None
        self._memo_t = None   # encode_fast's rounding per mode, for the last target (one at a time)
        self._memo = {}

    def bitlen(self):
        """bitlen(M), computed once: every mode and policy of every target takes it."""
        if self._bitlen is None:
            self._bitlen = bitlen(self.M)
        return self._bitlen

    def memo(self, t):
        """A dict for results that depend on the target t and these values only (a new one when
        t changes: the tests take one target at a time, all its modes and policies)."""
        if self._memo_t is not t:
            self._memo_t, self._memo = t, {}
        return self._memo

    def __len__(self):
        return len(self.M)

    def take(self, idx):
        return Vals(self.cls[idx], self.neg[idx], self.M[idx], self.E[idx])

    @staticmethod
    def concat(vs):
        return Vals(np.concatenate([v.cls for v in vs]), np.concatenate([v.neg for v in vs]),
                    np.concatenate([v.M for v in vs]), np.concatenate([v.E for v in vs]))


def decode_fast(t, codes):
    codes = np.asarray(codes, dtype=U64)
    n = len(codes)
    if isinstance(t, BoolFmt):
        return Vals(np.zeros(n), np.zeros(n, bool), codes, np.zeros(n))
    if isinstance(t, IntFmt):
        if t.signed:
            neg = (codes >> U64(t.bits - 1)) & U64(1) == 1
            if t.bits == 64:
                mag = np.where(neg, U64(0) - codes, codes)
            else:
                mag = np.where(neg, (U64(1 << t.bits) - codes), codes)
        else:
            neg = np.zeros(n, bool)
            mag = codes
        return Vals(np.zeros(n), neg, mag, np.zeros(n))
    f = t
    if f.style == 'e8m0':
        cls = np.where(codes == U64(0xFF), 2, 0)
        return Vals(cls, np.zeros(n, bool), np.ones(n, U64), codes.astype(np.int64) - 127)
    neg = (codes & U64(f.signbit)) != U64(0)
    mag = codes & U64(f.magmask)
    expf = (mag >> U64(f.mbits)).astype(np.int64)
    mant = mag & U64((1 << f.mbits) - 1)
    sub = expf == 0
    M = np.where(sub, mant, mant | U64(1 << f.mbits))
    E = np.where(sub, 1 - f.bias - f.mbits, expf - f.bias - f.mbits)
    cls = np.zeros(n, np.uint8)
    eall = (1 << f.ebits) - 1
    if f.style == 'ieee':
        top = expf == eall
        cls = np.where(top & (mant == 0), 1, np.where(top, 2, 0))
    elif f.style == 'fn':
        cls = np.where(mag == U64(f.magmask), 2, 0)
    elif f.style == 'fnuz':
        cls = np.where(codes == U64(0x80), 2, 0)
        neg = neg & (codes != U64(0x80))
    return Vals(cls, neg, M, E)


def bitlen(M):
    """Bit length of each uint64 (0 for 0), by binary search with shifts."""
    x = M.copy()
    L = np.zeros(M.shape, np.int64)
    for sh in (32, 16, 8, 4, 2, 1):
        m = x >= (U64(1) << U64(sh))
        x = np.where(m, x >> U64(sh), x)
        L += m * sh
    return L + (x > 0)


def round_prep(M, s):
    """The part of round_shift(M, s, ., mode) that no mode changes: the truncated quotient, the
    remainder against the half, and the left shifts (computed once for all modes of a target)."""
    s = np.asarray(s, dtype=np.int64)
    left = s <= 0
    sl = np.where(left, -s, 0).clip(0, 63).astype(U64)
    sc = s.clip(1, 64)                                # 1..64
    scm1 = (sc - 1).astype(U64)                       # 0..63
    N = (M >> scm1) >> U64(1)
    rem = M - ((N << scm1) << U64(1))
    half = U64(1) << scm1
    far = s > 64
    gt = (rem > half) & ~far
    eq = (rem == half) & ~far
    inexact = rem != 0
    return M, left, sl, N, gt, eq, inexact


def round_finish(prep, neg, mode):
    """round_shift's result from round_prep's parts."""
    M, left, sl, N, gt, eq, inexact = prep
    if mode == 'rne':
        inc = gt | (eq & ((N & U64(1)) == 1))
    elif mode == 'rna':
        inc = gt | eq
    elif mode == 'floor':
        inc = inexact & neg
    elif mode == 'ceil':
        inc = inexact & ~neg
    elif mode == 'trunc':
        inc = np.zeros(M.shape, bool)
    elif mode == 'odd':
        inc = np.zeros(M.shape, bool)
        N = N | inexact.astype(U64)
    else:
        raise ValueError(mode)
    N = N + inc.astype(U64)
    N = np.where(left, M << sl, N)
    inexact = inexact & ~left
    return N, inexact


def round_shift(M, s, neg, mode):
    """N = M * 2^-s rounded to an integer per mode (for the magnitude of a value with sign neg).
    s <= 0 requires that M << -s fits (callers guarantee it).  Returns (N uint64, inexact bool)."""
    return round_finish(round_prep(M, s), neg, mode)


def _down_mask(mode, neg):
    if mode in ('trunc', 'odd'):
        return np.ones(neg.shape, bool)
    if mode == 'floor':
        return ~neg
    if mode == 'ceil':
        return neg.copy()
    return np.zeros(neg.shape, bool)


def encode_fast(t, v, mode='rne', fov='ieee', iov='wrap', nan_as_max=False):
    """Vectorised encode of exact values v (Vals) into codes (uint64) of the real type t."""
    n = len(v)
    fin = v.cls == 0
    nz = fin & (v.M != 0)
    if isinstance(t, BoolFmt):
        return np.where(nz | (v.cls != 0), U64(1), U64(0))
    if isinstance(t, IntFmt):
        return _encode_int_fast(t, v, mode, iov)
    f = t
    memo = v.memo(f)
    if f.style == 'e8m0' or mode not in memo:
        Ms = np.where(nz, v.M, U64(1))                # dummy 1 where not used
        Es = np.where(nz, v.E, 0)
        L = np.where(nz, v.bitlen(), 1)               # bitlen(Ms)
        e = L - 1 + Es                                # exponent of the leading bit
    if f.style == 'e8m0':
        pos = np.zeros(n, bool)
        N, _ = round_shift(Ms, e - Es, pos, mode)      # q = e (1-bit significand)
        q = e + (N == U64(2))
        ovf = q > 127
        code = (q.clip(-127, 127) + 127).astype(U64)
        if fov == 'saturate' or (mode in ('trunc', 'floor', 'odd') and fov != 'inf'):
            oc = U64(0xFE)
        else:
            oc = U64(0xFF)
        code = np.where(ovf, oc, code)
        code = np.where(e < -127, U64(0), code)
        code = np.where(fin & ~nz, U64(0), code)
        return np.where(v.cls != 0, U64(0xFF), code)
    # the rounding does not depend on the policies: once per (target, mode), from one
    # round_prep per target
    if mode not in memo:
        if ('prep',) not in memo:
            q0 = np.maximum(e, f.emin) - f.mbits      # exponent of the quantum
            memo[('prep',)] = (q0, round_prep(Ms, q0 - Es))
        q, prep = memo[('prep',)]
        N, _ = round_finish(prep, v.neg, mode)
        carry = N == U64(1 << (f.mbits + 1))
        N = np.where(carry, N >> U64(1), N)
        q = q + carry
        sub = N < U64(1 << f.mbits)
        expf = np.where(sub, 0, q + f.mbits + f.bias)
        mant = np.where(sub, N, N - U64(1 << f.mbits))
        ovf = (expf > f.maxexpf) | ((expf == f.maxexpf) & (mant > U64(f.maxmant)))
        sign = np.where(v.neg, U64(f.signbit), U64(0))
        code = (expf.clip(0, (1 << f.ebits) - 1).astype(U64) << U64(f.mbits)) | mant
        code = code | sign
        memo[mode] = (N, ovf, sign, code)
    N, ovf, sign, code = memo[mode]
    maxc = U64(f.maxcode) | sign
    # overflow
    if fov == 'saturate':
        oc = maxc
    else:
        if f.has_inf:
            big = U64(f.infcode) | sign
        elif f.has_nan:
            big = _nan_fast(f, v.neg)
        else:
            big = maxc
        oc = big if fov == 'inf' else np.where(_down_mask(mode, v.neg), maxc, big)
    code = np.where(ovf, oc, code)
    # zero results (rounded to zero, or zero input)
    zcode = sign if f.has_negzero else np.zeros(n, U64)
    code = np.where(nz & (N == U64(0)), zcode, code)
    code = np.where(fin & ~nz, zcode, code)
    # Inf inputs
    if fov == 'saturate':
        ic = maxc
    elif f.has_inf:
        ic = U64(f.infcode) | sign
    elif f.has_nan:
        ic = _nan_fast(f, v.neg)
    else:
        ic = maxc
    code = np.where(v.cls == 1, ic, code)
    # negative nonzero values and -Inf into a format without a sign
    if not f.signed:
        below = v.neg & (nz | (v.cls == 1))
        if fov == 'saturate':
            bc = np.zeros(n, U64)
        elif fov == 'inf':
            bc = np.full(n, U64(f.nancode))
        else:
            bc = np.where(fin & _down_mask(mode, v.neg), U64(0), U64(f.nancode))
        code = np.where(below, bc, code)
    # NaN inputs
    if f.style == 'none':
        if nan_as_max:
            nc = np.full(n, U64(f.maxcode))
        else:
            nc = np.where(v.neg, U64(0), U64(f.signbit))
    else:
        nc = _nan_fast(f, v.neg)
    return np.where(v.cls == 2, nc, code).astype(U64)


def _nan_fast(f, neg):
    if f.style in ('ieee', 'fn'):
        return np.where(neg, U64(f.nancode | f.signbit), U64(f.nancode))
    return np.full(neg.shape, U64(f.nancode))


_INT_ROUNDING = object()  # the memo key of _encode_int_fast's rounding (one for every width)


def _encode_int_fast(t, v, mode, iov):
    mask = U64(t.mask)
    # the rounding depends on neither the policy nor the target's width: once per mode for
    # these values (the memo of the last target), from one round_prep
    memo = v.memo(_INT_ROUNDING)
    if mode not in memo:
        if ('prep',) not in memo:
            fin = v.cls == 0
            M = np.where(fin, v.M, U64(0))
            E = np.where(fin, v.E, 0)
            # E >= 0: exact integer M * 2^E (possibly >= 2^64)
            up = E >= 0
            L = np.where(fin, v.bitlen(), 0)          # bitlen(M)
            big = up & (M != 0) & ((E >= 64) | (L + E > 64))
            shl = np.where(up, E, 0).clip(0, 63).astype(U64)
            exact = np.where(E >= 64, U64(0), M << shl)   # value mod 2^64 (shift drops bits)
            memo[('prep',)] = (up, big, exact, round_prep(M, np.where(up, 0, -E)))
        up, big, exact, prep = memo[('prep',)]
        Nr, _ = round_finish(prep, v.neg, mode)
        N = np.where(up, exact, Nr)                   # |rounded value| mod 2^64
        memo[mode] = (big, N, U64(0) - N)             # and the two's complement of -N
    big, N, negN = memo[mode]
    if iov == 'wrap':
        code = np.where(v.neg, negN, N) & mask
        code = np.where(v.cls != 0, U64(0), code)
        return code
    maxv = U64(t.maxv)
    limneg = U64(-t.minv)                             # |min| (0 for unsigned)
    minc = U64(t.minv & t.mask)
    pos_code = np.where(big | (N > maxv), maxv, N)
    neg_code = np.where(big | (N > limneg), minc, negN & mask)
    code = np.where(v.neg, neg_code, pos_code)
    code = np.where(v.cls == 2, U64(0), code)
    code = np.where(v.cls == 1, np.where(v.neg, minc, maxv), code)
    return code.astype(U64)


def convert_fast(src, dst, codes, mode='rne', fov='ieee', iov='wrap', nan_as_max=False):
    """Vectorised conversion of element codes (complex: shape (n, 2))."""
    codes = np.asarray(codes, dtype=U64)
    if isinstance(src, ComplexFmt):
        if isinstance(dst, ComplexFmt):
            return np.stack([convert_fast(src.part, dst.part, codes[:, 0], mode, fov, iov,
                                          nan_as_max),
                             convert_fast(src.part, dst.part, codes[:, 1], mode, fov, iov,
                                          nan_as_max)], axis=1)
        return convert_fast(src.part, dst, codes[:, 0], mode, fov, iov, nan_as_max)
    if isinstance(dst, ComplexFmt):
        re = convert_fast(src, dst.part, codes, mode, fov, iov, nan_as_max)
        return np.stack([re, np.zeros_like(re)], axis=1)
    return encode_fast(dst, decode_fast(src, codes), mode, fov, iov, nan_as_max)


# --------------------------------------------------------------------------------------------
# Helpers for tests: values -> source codes, all codes of a type.
# --------------------------------------------------------------------------------------------

def all_codes(t):
    """Every code of a real type with <= 16 bits (bool: 0 and 1)."""
    if isinstance(t, BoolFmt):
        return np.array([0, 1], dtype=U64)
    return np.arange(1 << t.bits, dtype=U64)


def value_of_code_float(t, codes):
    """float64 value of codes of a float format of <= 32 bits or of any int of <= 32 bits
    (exact: these values all have <= 53 significant bits and lie within float64's range)."""
    v = decode_fast(t, codes)
    with np.errstate(over='ignore', invalid='ignore'):
        x = np.ldexp(v.M.astype(np.float64), v.E.astype(np.int64).clip(-2000, 2000))
    x = np.where(v.cls == 1, np.inf, np.where(v.cls == 2, np.nan, x))
    return np.where(v.neg, -x, x)


# --------------------------------------------------------------------------------------------
# Self-tests of the model (python3 dtmodel.py).
# --------------------------------------------------------------------------------------------

def _selftest():
    import random
    rng = random.Random(1)
    fails = 0

    def check(name, got, exp):
        nonlocal fails
        if got != exp:
            fails += 1
            print('FAIL', name, 'got', got, 'expected', exp)

    f = lambda n: TYPES[n]
    # docs/formats.md, "Floating-point formats" (e8m0: docs/conversion.md, "float8e8m0 targets")
    e4 = f('float8e4m3fn')
    check('max e4m3fn', _maxval(e4), 448)
    check('max e4m3fnuz', _maxval(f('float8e4m3fnuz')), 240)
    check('max e5m2', _maxval(f('float8e5m2')), 57344)
    check('max e5m2fnuz', _maxval(f('float8e5m2fnuz')), 57344)
    check('max e4m3', _maxval(f('float8e4m3')), 240)
    check('max e3m4', _maxval(f('float8e3m4')), Fraction(31, 2))
    check('max b11', _maxval(f('float8e4m3b11fnuz')), 30)
    check('max f6e2m3', _maxval(f('float6e2m3fn')), Fraction(15, 2))
    check('max f6e3m2', _maxval(f('float6e3m2fn')), 28)
    check('max f4', _maxval(f('float4e2m1')), 6)
    check('max e8m0', _maxval(f('float8e8m0')), Fraction(2) ** 127)
    check('max f16', _maxval(f('float16')), 65504)
    check('e4m3 inf', f('float8e4m3').infcode, 0x78)
    check('e4m3fn maxcode', e4.maxcode, 0x7E)
    num = lambda x: ('num', x < 0, abs(Fraction(x)))
    check('464 -> 448', encode_slow(e4, num(464)), 0x7E)
    check('465 -> NaN ieee', encode_slow(e4, num(465)), 0x7F)
    check('-465 -> -NaN ieee', encode_slow(e4, num(-465)), 0xFF)
    check('465 sat', encode_slow(e4, num(465), fov='saturate'), 0x7E)
    # float8e5m3fnu (docs/formats.md; docs/conversion.md, "Unsigned floats")
    u = f('float8e5m3fnu')
    check('max e5m3fnu', _maxval(u), 114688)
    check('e5m3fnu maxcode', u.maxcode, 0xFE)
    check('e5m3fnu 0x80', decode_slow(u, 0x80), ('num', False, Fraction(2)))
    check('e5m3fnu 0xFF', decode_slow(u, 0xFF)[0], 'nan')
    check('e5m3fnu sub', decode_slow(u, 0x01)[2], Fraction(2) ** -17)
    check('e5m3fnu 118784 tie', encode_slow(u, num(118784)), 0xFE)
    check('e5m3fnu 122880', encode_slow(u, num(122880)), 0xFF)
    check('e5m3fnu 122880 sat', encode_slow(u, num(122880), fov='saturate'), 0xFE)
    check('e5m3fnu 2^-18', encode_slow(u, num(Fraction(2) ** -18)), 0x00)
    check('e5m3fnu -0', encode_slow(u, ('num', True, Fraction(0))), 0x00)
    check('e5m3fnu -nan', encode_slow(u, ('nan', True, None)), 0xFF)
    check('e5m3fnu -nan sat', encode_slow(u, ('nan', True, None), fov='saturate'), 0xFF)
    check('e5m3fnu -2^-20 rne', encode_slow(u, num(-Fraction(2) ** -20)), 0xFF)
    check('e5m3fnu -2^-20 ceil', encode_slow(u, num(-Fraction(2) ** -20), 'ceil'), 0x00)
    check('e5m3fnu -1 trunc', encode_slow(u, num(-1), 'trunc'), 0x00)
    check('e5m3fnu -1 trunc inf', encode_slow(u, num(-1), 'trunc', 'inf'), 0xFF)
    check('e5m3fnu -1 floor', encode_slow(u, num(-1), 'floor'), 0xFF)
    check('e5m3fnu -1 sat', encode_slow(u, num(-1), fov='saturate'), 0x00)
    check('e5m3fnu -inf trunc', encode_slow(u, ('inf', True, None), 'trunc'), 0xFF)
    check('e5m3fnu -inf sat', encode_slow(u, ('inf', True, None), fov='saturate'), 0x00)
    check('e5m3fnu inf sat', encode_slow(u, ('inf', False, None), fov='saturate'), 0xFE)
    check('fnuz 248', encode_slow(f('float8e4m3fnuz'), num(248)), 0x80)
    check('fnuz 247', encode_slow(f('float8e4m3fnuz'), num(247)), 0x7F)
    check('e5m2 61440', encode_slow(f('float8e5m2'), num(61440)), 0x7C)
    check('e5m2 61439', encode_slow(f('float8e5m2'), num(61439)), 0x7B)
    check('f4 -0', encode_slow(f('float4e2m1'), ('num', True, Fraction(0))), 0x8)
    check('f4 +nan', encode_slow(f('float4e2m1'), ('nan', False, None)), 0x8)
    check('f4 -nan', encode_slow(f('float4e2m1'), ('nan', True, None)), 0x0)
    check('f4 nan max', encode_slow(f('float4e2m1'), ('nan', True, None), nan_as_max=True), 0x7)
    check('f4 inf', encode_slow(f('float4e2m1'), ('inf', False, None)), 0x7)
    check('f4 7', encode_slow(f('float4e2m1'), num(7)), 0x7)
    check('int4 -9', encode_slow(f('int4'), num(-9), 'trunc'), 7)
    check('int4 8', encode_slow(f('int4'), num(8), 'trunc'), 8)
    check('uint4 -1', encode_slow(f('uint4'), num(-1), 'trunc'), 15)
    # int1: -1 (code 1) and 0; wraps modulo 2, saturates to [-1, 0] (ml_dtypes' iinfo(int1))
    i1 = f('int1')
    check('int1 range', (i1.minv, i1.maxv), (-1, 0))
    check('int1 code 1', decode_slow(i1, 1), ('num', True, Fraction(1)))
    check('int1 1 wraps', encode_slow(i1, num(1), 'trunc'), 1)
    check('int1 2 wraps', encode_slow(i1, num(2), 'trunc'), 0)
    check('int1 1 sat', encode_slow(i1, num(1), 'trunc', iov='saturate'), 0)
    check('int1 -5 sat', encode_slow(i1, num(-5), 'trunc', iov='saturate'), 1)
    check('int1 -0.5 floor', encode_slow(i1, num(Fraction(-1, 2)), 'floor'), 1)
    check('int1 inf sat', encode_slow(i1, ('inf', False, None), iov='saturate'), 0)
    check('int1 -inf sat', encode_slow(i1, ('inf', True, None), iov='saturate'), 1)
    check('int8 200', encode_slow(f('int8'), num(200), 'trunc'), 200 - 256 + 256)
    check('int8 sat 130', encode_slow(f('int8'), num(130), 'trunc', iov='saturate'), 127)
    check('int8 2.5 rne', encode_slow(f('int8'), num(Fraction(5, 2)), 'rne'), 2)
    check('int8 2.5 rna', encode_slow(f('int8'), num(Fraction(5, 2)), 'rna'), 3)
    check('int8 -2.5 rna', encode_slow(f('int8'), num(Fraction(-5, 2)), 'rna'), 0xFD)
    check('int8 2.5 odd', encode_slow(f('int8'), num(Fraction(5, 2)), 'odd'), 3)
    check('int8 3.5 odd', encode_slow(f('int8'), num(Fraction(7, 2)), 'odd'), 3)
    check('int8 -2.5 floor', encode_slow(f('int8'), num(Fraction(-5, 2)), 'floor'), 0xFD)
    e8 = f('float8e8m0')
    check('e8m0 3 rne', encode_slow(e8, num(3)), 128 + 1)
    check('e8m0 3 trunc', encode_slow(e8, num(3), 'trunc'), 128)
    check('e8m0 -3 floor', encode_slow(e8, num(-3), 'floor'), 128)
    check('e8m0 2^-128', encode_slow(e8, num(Fraction(2) ** -128), 'ceil'), 0)
    check('e8m0 2^128 ieee', encode_slow(e8, num(Fraction(2) ** 128)), 0xFF)
    check('e8m0 2^128 sat', encode_slow(e8, num(Fraction(2) ** 128), fov='saturate'), 0xFE)
    # IEEE 754's overflow under rounding toward zero is the largest finite number, and that is
    # what the 'ieee' policy (dtcast's default, and the exact profile) gives for float8e8m0 too.
    # ONNX's saturate = 0 is not that rule: a value beyond the range is NaN (0xFF) whatever the
    # rounding, round_mode "down" included (its reference and ONNX Runtime make float64 1e300
    # float32 Inf, then 0xFF); the 'inf' policy (DTCAST_FLOAT_OVERFLOW_INF, which the ONNX
    # profile sets for float8e8m0 with saturate = 0) gives it. This check once stood alone and
    # was taken for ONNX's answer: it is IEEE's, not ONNX's.
    check('e8m0 2^128 trunc', encode_slow(e8, num(Fraction(2) ** 128), 'trunc'), 0xFE)
    check('e8m0 2^128 trunc inf', encode_slow(e8, num(Fraction(2) ** 128), 'trunc', fov='inf'),
          0xFF)
    check('e8m0 2^128-1 trunc inf', encode_slow(e8, num(Fraction(2) ** 128 - 1), 'trunc', 'inf'),
          0xFE)
    check('e8m0 1e300 floor inf', encode_slow(e8, num(Fraction(10) ** 300), 'floor', 'inf'), 0xFF)
    check('e8m0 2^128 ceil inf', encode_slow(e8, num(Fraction(2) ** 128), 'ceil', 'inf'), 0xFF)
    check('480 trunc ieee', encode_slow(e4, num(480), 'trunc'), 0x7E)
    check('480 trunc inf', encode_slow(e4, num(480), 'trunc', 'inf'), 0x7F)
    check('479 trunc inf', encode_slow(e4, num(479), 'trunc', 'inf'), 0x7E)
    check('f32 2^128 trunc inf', encode_slow(f('float32'), num(2 ** 128), 'trunc', 'inf'),
          0x7F800000)
    check('f32 -2^128 floor inf', encode_slow(f('float32'), num(-2 ** 128), 'floor', 'inf'),
          0xFF800000)
    check('f32 2^128 floor inf', encode_slow(f('float32'), num(2 ** 128), 'floor', 'inf'),
          0x7F800000)
    check('f4 7 trunc inf', encode_slow(f('float4e2m1'), num(7), 'trunc', 'inf'), 0x7)
    check('e8m0 inf sat', encode_slow(e8, ('inf', False, None), fov='saturate'), 0xFF)
    check('e4m3fn odd 470', encode_slow(e4, num(470), 'odd'), 0x7E)
    check('bf16 tiny rne', encode_slow(f('bfloat16'), num(Fraction(2) ** -134 * 3)), 0x0002)
    check('f32 1+2^-24', encode_slow(f('float32'), num(1 + Fraction(2) ** -24)), 0x3F800000)
    check('f32 1+2^-24 rna', encode_slow(f('float32'), num(1 + Fraction(2) ** -24), 'rna'),
          0x3F800001)
    check('f32 max overflow', encode_slow(f('float32'), num(2 ** 128 - 2 ** 103)), 0x7F800000)
    check('f32 just below', encode_slow(f('float32'), num(2 ** 128 - 2 ** 103 - 1)), 0x7F7FFFFF)
    # fast == slow on every code of every <= 16-bit source into every target (sampled modes)
    small = [n for n in REAL_NAMES if TYPES[n].bits <= 16]
    for sn in small:
        s = TYPES[sn]
        codes = all_codes(s)
        dv = decode_fast(s, codes)
        idx = list(range(len(codes))) if len(codes) <= 256 else rng.sample(range(len(codes)), 300)
        for dn in REAL_NAMES:
            d = TYPES[dn]
            for mode in MODES:
                for pol in ('ieee', 'saturate', 'inf'):
                    fov, iov = (pol, 'wrap') if pol != 'saturate' else ('saturate', 'saturate')
                    got = encode_fast(d, dv.take(np.array(idx)), mode, fov, iov)
                    for j, i in enumerate(idx):
                        exp = encode_slow(d, decode_slow(s, int(codes[i])), mode, fov, iov)
                        if int(got[j]) != exp:
                            fails += 1
                            if fails < 20:
                                print('FAIL fast/slow', sn, hex(int(codes[i])), dn, mode, pol,
                                      hex(exp), hex(int(got[j])))
                            break
    # numpy cross-check: float64/float32 -> float16 and float64 -> float32 are correctly rounded
    x = np.frombuffer(np.random.default_rng(2).integers(0, 2 ** 63, 200000, dtype=np.int64)
                      .astype('<u8').tobytes(), dtype=np.float64)
    x = np.concatenate([x, np.random.default_rng(3).standard_normal(100000) * 1e4,
                        np.ldexp(np.random.default_rng(4).standard_normal(100000),
                                 np.random.default_rng(5).integers(-160, 140, 100000))])
    x = np.concatenate([x, -x])
    src = decode_fast(F['float64'], x.view(np.uint64))
    for dn, dt in (('float16', np.float16), ('float32', np.float32)):
        with np.errstate(over='ignore', invalid='ignore'):
            ref = x.astype(dt).view({'float16': np.uint16, 'float32': np.uint32}[dn]).astype(U64)
        got = encode_fast(F[dn], src, 'rne', 'ieee')
        isn = np.isnan(x)
        bad = np.nonzero((got != ref) & ~isn)[0]
        if len(bad):
            fails += 1
            i = bad[0]
            print('FAIL numpy', dn, repr(x[i]), hex(int(ref[i])), hex(int(got[i])))
    print('selftest', 'FAILED %d' % fails if fails else 'ok')
    return fails == 0


if __name__ == '__main__':
    import sys
    sys.exit(0 if _selftest() else 1)
