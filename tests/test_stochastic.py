#!/usr/bin/env python3
"""Stochastic rounding (DTCAST_ROUND_STOCHASTIC) against an oracle written from the rule alone:

  for an inexact value between its neighbours lo < hi (in magnitude), D = floor(2^32 (|x| - lo) /
  (hi - lo)); r = the low 32 bits of SplitMix64(seed + (i + 1) * 0x9E3779B97F4A7C15), i the
  element's index in the tensor; the magnitude rounds up iff r < D; exact values never change;
  a result past the largest finite value follows the overflow policy.

Checks, each printing "PASS name" / "FAIL name: why":
  * oracle/<pair>: the bytes of 10^6 values per pair (random bits, values spread over the target's
    range, edges: 0, max, the overflow region, below the smallest subnormal, NaN, Inf) equal a
    numpy computation of the rule (float64 arithmetic: scaling by powers of two, floor); a sample
    of every pair is also checked with fractions.Fraction and a table of the target's values;
  * offset/<pair>: converting in pieces with element_offset gives the bytes of one call;
  * threads/<pair>: 1, 2 and 8 threads give the same bytes;
  * isa/<pair>: every instruction set DTCAST_ISA allows (portable, avx2, avx512 where the CPU has
    them) gives the same bytes;
  * stats/<value>: over 10^6 draws (indexes), the share rounded up is the dropped fraction within
    4 standard deviations (exactly 0 or 1 where the fraction is);
  * complex: a complex128 -> complex64 conversion rounds its parts as numbers 2i and 2i + 1.

Usage: test_stochastic.py [libdtcast.so] [--count N]
"""
import argparse
import hashlib
import os
import subprocess
import sys
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, 'model'))

import numpy as np  # noqa: E402
import dtlib  # noqa: E402

GAMMA = 0x9E3779B97F4A7C15
M64 = (1 << 64) - 1

# ---- the random bits -------------------------------------------------------------------------


def rand32_py(seed, i):
    """The rule in Python integers."""
    z = (seed + (i + 1) * GAMMA) & M64
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) & M64
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & M64
    z ^= z >> 31
    return z & 0xFFFFFFFF


def rand32_np(seed, idx):
    """The rule on uint64 arrays (numpy's array arithmetic wraps modulo 2^64)."""
    with np.errstate(over='ignore'):
        z = np.uint64(seed) + (idx.astype(np.uint64) + np.uint64(1)) * np.uint64(GAMMA)
        z ^= z >> np.uint64(30)
        z *= np.uint64(0xBF58476D1CE4E5B9)
        z ^= z >> np.uint64(27)
        z *= np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return z & np.uint64(0xFFFFFFFF)


# ---- the formats (from their definitions: exponent bits, mantissa bits, bias, special values) --

class Float:
    def __init__(self, name, e, m, bias, style):
        self.name, self.e, self.m, self.bias, self.style = name, e, m, bias, style
        self.bits = 1 + e + m
        self.emin = 1 - bias
        top = (1 << e) - 1  # the largest exponent field
        if style == 'ieee':  # all-ones exponent: Inf / NaN
            self.max = (2 - Fraction(1, 1 << m)) * Fraction(2) ** (top - 1 - bias)
        elif style == 'fn':  # only S.1111.111 is NaN
            self.max = (2 - Fraction(2, 1 << m)) * Fraction(2) ** (top - bias)
        else:  # fnuz, none: every exponent field is a number
            self.max = (2 - Fraction(1, 1 << m)) * Fraction(2) ** (top - bias)
        self.maxf = float(self.max)
        self.sign = 1 << (self.bits - 1)

    def has_inf(self):
        return self.style == 'ieee'

    def has_nan(self):
        return self.style in ('ieee', 'fn', 'fnuz')

    def nan(self, neg):
        return {'ieee': ((1 << self.e) - 1) << self.m | 1 << (self.m - 1),
                'fn': (1 << (self.bits - 1)) - 1,
                'fnuz': self.sign}[self.style] | (self.sign if neg and self.style != 'fnuz' else 0)

    def inf(self, neg):
        return ((1 << self.e) - 1) << self.m | (self.sign if neg else 0)

    def max_code(self, neg):
        code = self.encode_exact(self.maxf)
        return code | (self.sign if neg else 0)

    def zero(self, neg):
        return self.sign if neg and self.style != 'fnuz' else 0

    def encode_exact(self, a):
        """Code of a nonnegative float a that the format holds exactly."""
        if a == 0:
            return 0
        _, ex = np.frexp(a)
        E = int(ex) - 1
        if E < self.emin:
            return int(np.ldexp(a, self.m - self.emin))
        return (E + self.bias) << self.m | (int(np.ldexp(a, self.m - E)) - (1 << self.m))

    def overflow_code(self, neg, policy):
        if policy == 'saturate' or not (self.has_inf() or self.has_nan()):
            return self.max_code(neg)
        return self.inf(neg) if self.has_inf() else self.nan(neg)


class Int:
    def __init__(self, name, bits, signed):
        self.name, self.bits, self.signed = name, bits, signed
        self.lo = -(1 << (bits - 1)) if signed else 0
        self.hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1


FORMATS = {
    'float32': Float('float32', 8, 23, 127, 'ieee'),
    'float64': Float('float64', 11, 52, 1023, 'ieee'),
    'float16': Float('float16', 5, 10, 15, 'ieee'),
    'bfloat16': Float('bfloat16', 8, 7, 127, 'ieee'),
    'float8e4m3fn': Float('float8e4m3fn', 4, 3, 7, 'fn'),
    'float8e5m2': Float('float8e5m2', 5, 2, 15, 'ieee'),
    'float8e4m3fnuz': Float('float8e4m3fnuz', 4, 3, 8, 'fnuz'),
    'float8e5m2fnuz': Float('float8e5m2fnuz', 5, 2, 16, 'fnuz'),
    'float6e2m3fn': Float('float6e2m3fn', 2, 3, 1, 'none'),
    'float4e2m1': Float('float4e2m1', 2, 1, 1, 'none'),
    'int8': Int('int8', 8, True), 'uint8': Int('uint8', 8, False),
    'int16': Int('int16', 16, True), 'int32': Int('int32', 32, True),
    'uint32': Int('uint32', 32, False), 'int64': Int('int64', 64, True),
}

# (source, target, float or int overflow policy)
PAIRS = [
    ('float32', 'bfloat16', 'ieee'),
    ('float32', 'float8e4m3fn', 'ieee'),
    ('float32', 'float8e4m3fn', 'saturate'),
    ('float32', 'float8e5m2', 'ieee'),
    ('float32', 'float8e5m2', 'saturate'),
    ('float32', 'float16', 'ieee'),
    ('float64', 'float16', 'ieee'),
    ('float64', 'bfloat16', 'saturate'),
    ('float16', 'float8e4m3fn', 'ieee'),
    ('float16', 'float8e5m2', 'saturate'),
    ('bfloat16', 'float8e4m3fn', 'saturate'),
    ('bfloat16', 'float8e5m2', 'ieee'),
    ('float32', 'float8e4m3fnuz', 'ieee'),
    ('float64', 'float8e5m2fnuz', 'saturate'),
    ('float32', 'float6e2m3fn', 'ieee'),
    ('float32', 'float4e2m1', 'saturate'),
    ('float64', 'float32', 'ieee'),
    ('float32', 'int8', 'saturate'),
    ('float32', 'int8', 'wrap'),
    ('float32', 'uint8', 'saturate'),
    ('float64', 'int32', 'saturate'),
    ('float64', 'uint32', 'wrap'),
    ('float16', 'int16', 'saturate'),
    ('float64', 'int64', 'saturate'),
]

# ---- sources ----------------------------------------------------------------------------------


def source_bytes(name, x64):
    """The source buffer for float64 values that the source format holds exactly."""
    if name == 'float64':
        return x64.astype(np.float64).tobytes()
    if name == 'float32':
        return x64.astype(np.float32).tobytes()
    if name == 'float16':
        return x64.astype(np.float16).tobytes()
    if name == 'bfloat16':  # the high half of float32 (the values were made to fit)
        return (x64.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16).tobytes()
    raise ValueError(name)


def to_source(name, x):
    """x (float64) put into the source format, by truncation toward zero where it does not fit
    (only where the inputs land matters)."""
    if name == 'float64':
        return x
    if name == 'float32':
        return x.astype(np.float32).astype(np.float64)
    if name == 'float16':
        with np.errstate(over='ignore'):
            return x.astype(np.float16).astype(np.float64)
    if name == 'bfloat16':
        b = x.astype(np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
        nan = np.isnan(x)
        b[nan] = np.uint32(0x7FC00000)
        return b.view(np.float32).astype(np.float64)
    raise ValueError(name)


def make_inputs(src, dst, n, rng):
    S = FORMATS[src]
    T = FORMATS[dst]
    parts = []
    # random bit patterns of the source (NaN payloads, Inf, subnormals, huge and tiny values)
    k = n // 8
    if S.bits == 64:
        bits = rng.integers(0, 1 << 63, k, dtype=np.uint64) * np.uint64(2) + \
            rng.integers(0, 2, k, dtype=np.uint64)
        parts.append(bits.view(np.float64))
    elif S.bits == 32:
        parts.append(rng.integers(0, 1 << 32, k, dtype=np.uint64).astype(np.uint32)
                     .view(np.float32).astype(np.float64))
    elif src == 'float16':
        parts.append(rng.integers(0, 1 << 16, k, dtype=np.uint64).astype(np.uint16)
                     .view(np.float16).astype(np.float64))
    else:  # bfloat16
        b = rng.integers(0, 1 << 16, k, dtype=np.uint64).astype(np.uint32) << np.uint32(16)
        parts.append(b.view(np.float32).astype(np.float64))
    # values spread over the target's range, a few binades beyond it on both sides
    m = n - k - 4096
    if isinstance(T, Float):
        top = int(np.floor(np.log2(T.maxf)))
        e = rng.integers(T.emin - T.m - 4, top + 3, m)
    else:
        e = rng.integers(-4, T.bits + 2, m)
    mant = 1 + rng.random(m)
    sign = np.where(rng.random(m) < 0.5, -1.0, 1.0)
    parts.append(sign * np.ldexp(mant, e))
    # edges
    edge = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5]
    if isinstance(T, Float):
        mx = T.maxf
        tiny = 2.0 ** (T.emin - T.m)
        ulp_top = 2.0 ** (int(np.floor(np.log2(mx))) - T.m)
        for v in (mx, mx + ulp_top / 4, mx + ulp_top / 2, mx + ulp_top * 3 / 4, mx + ulp_top,
                  mx + ulp_top * 1.5, mx * 2, tiny, tiny / 2, tiny / 4, tiny * 0.75, tiny * 1.5,
                  2.0 ** T.emin, 2.0 ** T.emin * 1.25, 2.0 ** T.emin - tiny / 2):
            edge += [v, -v]
    else:
        for v in (T.hi, T.hi + 0.5, T.hi + 0.25, T.hi + 1, T.lo, T.lo - 0.5, T.lo - 0.75,
                  T.lo - 1, 2.0 ** T.bits, 2.0 ** 63, 2.0 ** 64, 1e30, 0.25, 0.75):
            edge += [float(v), -float(v)]
    edge = np.array(edge, dtype=np.float64)
    parts.append(np.resize(edge, 4096))
    x = np.concatenate(parts)[:n]
    x = x[rng.permutation(len(x))]
    return to_source(src, x)


# ---- the oracle, vectorised (bulk) -------------------------------------------------------------


def oracle_float(x, idx, seed, T, policy):
    """Codes (uint64) of the float target T for the float64 values x at tensor indexes idx."""
    out = np.zeros(len(x), dtype=np.uint64)
    neg = np.signbit(x)
    a = np.abs(x)
    nan = np.isnan(x)
    inf = np.isinf(x)
    fin = ~(nan | inf)
    nz = fin & (a != 0)
    _, ex = np.frexp(np.where(nz, a, 1.0))
    q = np.maximum(ex.astype(np.int64) - 1, T.emin) - T.m  # the exponent of one unit (ulp)
    t = np.ldexp(np.where(nz, a, 0.0), -q)  # exact: a power-of-two scaling into [0, 2^(m+1))
    kept = np.floor(t)
    frac = t - kept  # exact
    D = np.floor(np.ldexp(frac, 32)).astype(np.uint64)
    r = rand32_np(seed, idx)
    up = (r < D)
    mag = kept + up
    with np.errstate(over='ignore'):
        v = np.ldexp(mag, q)  # the chosen neighbour, exactly (or inf beyond float64)
    over = nz & (v > T.maxf)
    zero = fin & ~over & (v == 0)
    normal = nz & ~over & (v != 0)
    out[normal] = encode_exact_np(T, v[normal]) | np.where(neg[normal], np.uint64(T.sign),
                                                             np.uint64(0))
    out[zero] = np.where(neg[zero], np.uint64(T.zero(True)), np.uint64(T.zero(False)))
    ovf = over | inf
    out[ovf] = np.where(neg[ovf], np.uint64(T.overflow_code(True, policy)),
                        np.uint64(T.overflow_code(False, policy)))
    if T.has_nan():
        nan_codes = (np.uint64(T.nan(False)), np.uint64(T.nan(True)))
    else:  # float4e2m1: +NaN -> 0x8, -NaN -> 0x0 (ONNX's conformance data)
        nan_codes = (np.uint64(T.sign), np.uint64(0))
    out[nan] = np.where(neg[nan], nan_codes[1], nan_codes[0])
    return out


def encode_exact_np(T, v):
    """Codes of positive float64 values that T holds exactly."""
    _, ex = np.frexp(v)
    E = ex.astype(np.int64) - 1
    sub = E < T.emin
    sub_code = np.ldexp(v, T.m - T.emin)
    Ec = np.maximum(E, T.emin)
    norm_code = (Ec + T.bias).astype(np.uint64) << np.uint64(T.m) | \
        (np.ldexp(v, T.m - Ec) - (1 << T.m)).astype(np.uint64)
    return np.where(sub, sub_code.astype(np.uint64), norm_code)


def oracle_int(x, idx, seed, T, policy):
    out = np.zeros(len(x), dtype=np.uint64)
    neg = np.signbit(x)
    a = np.abs(x)
    nan = np.isnan(x)
    inf = np.isinf(x)
    fin = ~(nan | inf)
    kept = np.floor(np.where(fin, a, 0.0))
    frac = np.where(fin, a, 0.0) - kept
    D = np.floor(np.ldexp(frac, 32)).astype(np.uint64)
    up = rand32_np(seed, idx) < D
    mag = np.where(fin, kept + up, 0.0)  # exact: a fraction exists only below 2^52
    mask = np.uint64((1 << T.bits) - 1)
    if policy == 'saturate':
        val = np.where(neg, -mag, mag)
        # integer-valued: val > hi iff val >= hi + 1, a power of two that float64 holds
        high = (val >= float(T.hi + 1)) | (inf & ~neg)
        low = (val < float(T.lo)) | (inf & neg)
        inside = np.where(high | low, 0.0, val).astype(np.int64).astype(np.uint64)
        out = np.where(high, np.uint64(T.hi), np.where(low, np.uint64(T.lo & ((1 << 64) - 1)),
                                                       inside)) & mask
    else:  # modulo 2^bits: fmod is exact
        m = np.fmod(mag, 2.0 ** T.bits)
        m = np.where(m >= 2.0 ** 63, m - 2.0 ** 64, m).astype(np.int64).astype(np.uint64)
        with np.errstate(over='ignore'):
            out = np.where(neg, ~m + np.uint64(1), m) & mask
    out[nan] = 0
    return out


# ---- the oracle, exact (sample) ----------------------------------------------------------------


class Table:
    """value -> code of every finite code of a float target of <= 16 bits (decoded here)."""

    def __init__(self, T):
        self.T = T
        self.code_of = {}
        for c in range(1 << T.bits):
            v = self.decode(c)
            if v is not None and v >= 0 and (v != 0 or c == 0):
                self.code_of.setdefault(v, c)

    def decode(self, c):
        T = self.T
        s = -1 if c & T.sign else 1
        e = (c >> T.m) & ((1 << T.e) - 1)
        f = c & ((1 << T.m) - 1)
        top = (1 << T.e) - 1
        if T.style == 'ieee' and e == top:
            return None
        if T.style == 'fn' and e == top and f == (1 << T.m) - 1:
            return None
        if T.style == 'fnuz' and c == T.sign:
            return None
        # |v| = sig * 2^k: the significand as an integer, scaled by a power of two
        sig, k = (f, T.emin - T.m) if e == 0 else ((1 << T.m) | f, e - T.bias - T.m)
        v = Fraction(sig << k) if k >= 0 else Fraction(sig, 1 << -k)
        return -v if s < 0 else v


_tables = {}


def table_of(T):
    """The Table of T, made once per target."""
    if id(T) not in _tables:
        _tables[id(T)] = Table(T)
    return _tables[id(T)]


# values per pair also checked in fractions (the numpy oracle checks every value)
SAMPLE = 600


def exact_expected(xv, i, seed, T, policy, table):
    """The code by the rule, in fractions, for one float64 value xv at tensor index i."""
    if isinstance(T, Int):
        mask = (1 << T.bits) - 1
        if xv != xv:
            return 0
        if xv in (float('inf'), float('-inf')):
            return ((T.lo if xv < 0 else T.hi) & mask) if policy == 'saturate' else 0
        X = abs(Fraction(xv))
        lo = X.numerator // X.denominator
        D = (Fraction(1 << 32) * (X - lo)).numerator // (Fraction(1 << 32) * (X - lo)).denominator
        mag = lo + (1 if rand32_py(seed, i) < D else 0)
        val = -mag if xv < 0 else mag
        if policy == 'saturate':
            val = min(max(val, T.lo), T.hi)
        return val & mask
    neg = np.signbit(xv)
    if xv != xv:
        return T.nan(bool(neg)) if T.has_nan() else (0 if neg else T.sign)
    if xv in (float('inf'), float('-inf')):
        return T.overflow_code(bool(neg), policy)
    X = abs(Fraction(xv))
    if X == 0:
        return T.zero(bool(neg))
    # E = floor(log2 X): from the bit lengths of X = n / d, one step off at most
    n, d = X.numerator, X.denominator
    E = n.bit_length() - d.bit_length()
    if (n << max(-E, 0)) < (d << max(E, 0)):  # X < 2^E
        E -= 1
    ulp = Fraction(2) ** (max(E, T.emin) - T.m)
    k = X / ulp
    lo = (k.numerator // k.denominator) * ulp
    hi = lo + ulp
    f = Fraction(1 << 32) * (X - lo) / (hi - lo)
    D = f.numerator // f.denominator
    res = hi if rand32_py(seed, i) < D else lo
    if res > T.max:
        return T.overflow_code(bool(neg), policy)
    if res == 0:
        return T.zero(bool(neg))
    return table.code_of[res] | (T.sign if neg else 0)


# ---- running the library -----------------------------------------------------------------------

class Runner:
    def __init__(self, path):
        self.lib = dtlib.Lib(path)
        self.types = {self.lib.L.dtcast_type_name(t).decode(): t for t in self.lib.type_list()}

    def nbytes(self, name, n):
        st, b = self.lib.storage_size(self.types[name], n)
        assert st == 0
        return b

    def convert(self, src, dst, data, n, policy, seed, offset=0, threads=1):
        fov, iov = ('ieee', 'wrap')
        if isinstance(FORMATS.get(dst), Int):
            iov = policy
        else:
            fov = policy
        o = self.lib.options('stochastic', fov=fov, iov=iov, threads=threads, seed=seed,
                             element_offset=offset)
        st, out, msg = self.lib.convert(self.types[dst], data, self.types[src], n,
                                        self.nbytes(dst, n), o)
        if st != 0:
            raise RuntimeError('%s -> %s: status %d: %s' % (src, dst, st, msg))
        return out


def codes_of(out, name, n):
    T = FORMATS[name]
    if T.bits == 4:
        b = np.frombuffer(out, np.uint8)
        c = np.empty(2 * len(b), np.uint64)
        c[0::2] = b & 15
        c[1::2] = b >> 4
        return c[:n]
    if T.bits == 6:
        return np.frombuffer(out, np.uint8).astype(np.uint64)[:n]
    dt = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[T.bits]
    return np.frombuffer(out, dt).astype(np.uint64)[:n]


# ---- the checks --------------------------------------------------------------------------------

results = []


def report(name, ok, why=''):
    results.append(ok)
    print(('PASS %s' % name) if ok else ('FAIL %s: %s' % (name, why)), flush=True)


def check_oracle(R, count, rng):
    seeds = [0, 1, 0x123456789ABCDEF0, M64]
    offsets = [0, 1000, (1 << 64) - 3000]
    for p, (src, dst, policy) in enumerate(PAIRS):
        seed = seeds[p % len(seeds)]
        offset = offsets[p % len(offsets)]
        T = FORMATS[dst]
        n = count if isinstance(T, Float) and T.bits <= 16 else count // 4
        x = make_inputs(src, dst, n, rng)
        out = R.convert(src, dst, source_bytes(src, x), n, policy, seed, offset)
        got = codes_of(out, dst, n)
        with np.errstate(over='ignore'):
            idx = np.arange(n, dtype=np.uint64) + np.uint64(offset)
        want = oracle_float(x, idx, seed, T, policy) if isinstance(T, Float) else \
            oracle_int(x, idx, seed, T, policy)
        name = 'oracle/%s->%s %s seed=%#x offset=%d n=%d' % (src, dst, policy, seed, offset, n)
        bad = np.nonzero(got != want)[0]
        if len(bad):
            i = bad[0]
            report(name, False, '%d mismatches; first: index %d value %r: got %#x, want %#x' %
                   (len(bad), i, float(x[i]), int(got[i]), int(want[i])))
            continue
        # the sample in fractions (a table of the target's values for the encoding)
        table = table_of(T) if isinstance(T, Float) and T.bits <= 16 else None
        if isinstance(T, Float) and table is None:
            report(name, True)
            continue
        sample = rng.choice(n, min(n, SAMPLE), replace=False)
        sample = np.concatenate([sample, np.arange(n - 50, n)])  # and the last ones
        wrong = None
        for i in sample:
            e = exact_expected(float(x[i]), (offset + int(i)) & M64, seed, T, policy, table)
            if e != int(got[i]):
                wrong = 'index %d value %r: got %#x, fractions say %#x' % (i, float(x[i]),
                                                                           int(got[i]), e)
                break
        report(name + ' (+fractions)', wrong is None, wrong or '')


def check_stats(R):
    n = 10 ** 6
    cases = [  # (source, target, value): values whose dropped fraction is known
        ('float32', 'bfloat16', 1 + 2.0 ** -9),                 # 1/4
        ('float32', 'bfloat16', -(3 + 2.0 ** -6 + 2.0 ** -20)),  # 1/2 + 2^-14
        ('float32', 'bfloat16', 1 + 2.0 ** -8 + 2.0 ** -23),    # 1/2 + 2^-16
        ('float32', 'float8e4m3fn', 1.0 + 1 / 3),               # 2/3 (float32's 4/3)
        ('float32', 'float8e4m3fn', 2.0 ** -9 * 0.1),           # 0.1 of the smallest subnormal
        ('float32', 'float8e5m2', 1000.0),                      # between 896 and 1024: 0.8125
        ('float32', 'float8e5m2', 1 + 2.0 ** -20),              # 2^-18: rare ups
        ('float32', 'float8e5m2', 1.75 - 2.0 ** -20),           # 1 - 2^-18: rare downs
        ('float64', 'float16', 0.1),
        ('float32', 'int8', 2.7),
        ('float32', 'int8', -0.3),
        ('float32', 'float8e4m3fn', 1.125),                     # exact: never changes
    ]
    for src, dst, v in cases:
        T = FORMATS[dst]
        xv = float(to_source(src, np.array([v]))[0])
        x = np.full(n, xv)
        out = R.convert(src, dst, source_bytes(src, x), n,
                        'saturate' if isinstance(T, Int) else 'ieee', 12345)
        got = codes_of(out, dst, n)
        X = abs(Fraction(xv))
        if isinstance(T, Int):
            lo = Fraction(X.numerator // X.denominator)
            ulp = Fraction(1)
        else:
            E = int(np.frexp(abs(xv))[1]) - 1
            ulp = Fraction(2) ** (max(E, T.emin) - T.m)
            lo = (X / ulp).numerator // (X / ulp).denominator * ulp
        p = float((X - lo) / ulp)
        lo_code = int(oracle_float(np.array([np.copysign(float(lo), xv)]), np.zeros(1, np.uint64),
                                   0, T, 'ieee')[0]) if isinstance(T, Float) else \
            (int(-lo if xv < 0 else lo) & ((1 << T.bits) - 1))
        ups = int(np.count_nonzero(got != lo_code))
        share = ups / n
        if p in (0.0, 1.0):
            ok = share == p
            why = 'share %g, want exactly %g' % (share, p)
        else:
            sigma = (p * (1 - p) / n) ** 0.5
            ok = abs(share - p) <= 4 * sigma
            why = 'share %.6f, fraction %.6f, %.1f sigma' % (share, p, abs(share - p) / sigma)
        if ok and len(np.unique(got)) > 2:
            ok, why = False, 'more than two results: %s' % np.unique(got)[:5]
        report('stats/%s %r -> %s (fraction %.6f)' % (src, xv, dst, p), ok, why)


def check_offsets_threads(R, rng):
    n = 1 << 20
    for src, dst, policy in [('float32', 'bfloat16', 'ieee'), ('float32', 'float8e4m3fn', 'saturate'),
                             ('float32', 'float8e5m2', 'ieee'), ('float16', 'float8e4m3fn', 'ieee'),
                             ('bfloat16', 'float8e5m2', 'saturate'), ('float64', 'float16', 'ieee'),
                             ('float32', 'int8', 'saturate'), ('float32', 'float4e2m1', 'ieee')]:
        x = make_inputs(src, dst, n, rng)
        data = source_bytes(src, x)
        whole = R.convert(src, dst, data, n, policy, 77, 5)
        # pieces at cut points (even ones: packed 4-bit targets cut on whole bytes)
        cuts = [0, 2, 1000, 4096, 65538, 500000, n]
        sb = len(data) // n
        parts = []
        for a, b in zip(cuts, cuts[1:]):
            parts.append(R.convert(src, dst, data[a * sb:b * sb], b - a, policy, 77, 5 + a))
        report('offset/%s->%s' % (src, dst), b''.join(parts) == whole,
               'pieces with element_offset differ from one call')
        same = all(R.convert(src, dst, data, n, policy, 77, 5, threads=t) == whole for t in (2, 8))
        report('threads/%s->%s (1, 2, 8)' % (src, dst), same, 'the bytes depend on the threads')


def check_complex(R, rng):
    n = 4096
    x = make_inputs('float64', 'float32', 2 * n, rng)
    data = x.astype(np.float64).tobytes()
    t = R.types
    o = R.lib.options('stochastic', seed=9, element_offset=10)
    st, out, msg = R.lib.convert(t['complex64'], data, t['complex128'], n, 8 * n, o)
    with np.errstate(over='ignore'):
        want = oracle_float(x, np.arange(2 * n, dtype=np.uint64) + np.uint64(20), 9,
                            FORMATS['float32'], 'ieee')
    got = np.frombuffer(out, np.uint32).astype(np.uint64)
    report('complex128 -> complex64: parts are numbers 2i, 2i+1', st == 0 and
           np.array_equal(got, want), msg or 'bytes differ')


def digest_child(path):
    """Prints one digest per pair under this process's DTCAST_ISA."""
    R = Runner(path)
    rng = np.random.default_rng(5)
    for src, dst, policy in ISA_PAIRS:
        x = make_inputs(src, dst, 300000, rng)
        out = R.convert(src, dst, source_bytes(src, x), len(x), policy, 31, 7)
        print(src, dst, hashlib.sha256(out).hexdigest())


ISA_PAIRS = [('float32', 'bfloat16', 'ieee'), ('float32', 'float8e4m3fn', 'saturate'),
             ('float32', 'float8e5m2', 'ieee'), ('float32', 'float8e4m3fn', 'ieee'),
             ('float32', 'float8e5m2', 'saturate'), ('float16', 'float8e4m3fn', 'ieee'),
             ('float16', 'float8e5m2', 'saturate'), ('bfloat16', 'float8e4m3fn', 'saturate'),
             ('bfloat16', 'float8e5m2', 'ieee'), ('float64', 'float16', 'ieee')]


def check_isas(path):
    digests = {}
    for isa in ('portable', 'avx2', 'avx512'):
        env = dict(os.environ, DTCAST_ISA=isa)
        p = subprocess.run([sys.executable, __file__, path, '--digests'], env=env,
                           capture_output=True, text=True)
        if p.returncode != 0:
            report('isa/%s runs' % isa, False, p.stderr.strip()[-300:])
            return
        digests[isa] = p.stdout
    base = digests['portable'].splitlines()
    for k, line in enumerate(base):
        pair = ' '.join(line.split()[:2])
        same = all(d.splitlines()[k] == line for d in digests.values())
        report('isa/%s (portable, avx2, avx512 where present)' % pair, same,
               'the bytes depend on the instruction set')


def check_refusals(R):
    t = R.types
    o = R.lib.options('stochastic')
    strings = (dtlib.ct.c_char_p * 1)(b'1.5')
    dst = np.zeros(4, np.uint8)
    err = dtlib.Error()
    st = R.lib.L.dtcast_convert(dst.ctypes.data, t['float16'], dtlib.ct.addressof(strings),
                                t['string'], 1, dtlib.ct.byref(o), dtlib.ct.byref(err))
    report('string sources refused with a message', st != 0 and b'stochastic' in err.message,
           'status %d %r' % (st, err.message))
    R.lib.L.dtcast_round_name.restype = dtlib.ct.c_char_p
    report('round name', R.lib.L.dtcast_round_name(7) == b'stochastic', 'dtcast_round_name(7)')


def check_cli(R, path):
    """dtcast cast --round stochastic --seed: a file converted in blocks gives the bytes of one
    call over the tensor (the CLI sets element_offset per block)."""
    exe = os.path.join(os.path.dirname(os.path.abspath(path)), 'dtcast')
    if not os.access(exe, os.X_OK):
        print('SKIP cli: no dtcast beside %s' % path)
        return
    import tempfile
    n = 3 * 1024 * 1024 + 5  # 12 MiB of float32: several of the CLI's 4 MiB blocks
    x = np.random.default_rng(8).standard_normal(n).astype(np.float32)
    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, 'in.npy'), os.path.join(d, 'out.npy')
        np.save(src, x)
        for to, threads in (('bfloat16', '1'), ('float8e4m3fn', '2')):
            p = subprocess.run([exe, 'cast', '--to', to, '--round', 'stochastic', '--seed',
                                '0x1234567890', '-T', threads, src, dst], capture_output=True,
                               text=True)
            if p.returncode != 0:
                report('cli/cast --round stochastic -> %s' % to, False, p.stderr.strip())
                continue
            raw = open(dst, 'rb').read()
            want = R.convert('float32', to, x.tobytes(), n, 'ieee', 0x1234567890)
            report('cli/cast --round stochastic --seed -> %s: one call\'s bytes' % to,
                   raw.endswith(want), 'the file differs from one call over the tensor')
        p = subprocess.run([exe, 'cast', '--to', 'bfloat16', '--seed', '1', src, dst],
                           capture_output=True, text=True)
        report('cli/--seed without --round stochastic refused', p.returncode != 0 and
               'stochastic' in p.stderr, p.stderr)


def main():
    np.seterr(all='ignore')  # NaN / Inf inputs pass through float arithmetic on purpose
    ap = argparse.ArgumentParser()
    ap.add_argument('lib', nargs='?', default=dtlib.default_path())
    ap.add_argument('--count', type=int, default=10 ** 6)
    ap.add_argument('--digests', action='store_true')
    a = ap.parse_args()
    if a.digests:
        digest_child(a.lib)
        return 0
    R = Runner(a.lib)
    rng = np.random.default_rng(2024)
    check_oracle(R, a.count, rng)
    check_stats(R)
    check_offsets_threads(R, rng)
    check_complex(R, rng)
    check_isas(a.lib)
    check_refusals(R)
    check_cli(R, a.lib)
    return 0 if all(results) else 1


if __name__ == '__main__':
    sys.exit(main())
