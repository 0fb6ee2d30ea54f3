#!/usr/bin/env python3
"""Random + edge-case conformance test of dtcast_convert against the independent model.

Sources float32, float64, int64, uint64 (full count), int32, complex64, complex128 (a quarter of
the count); every non-string target; every rounding mode (default, rne, round, floor, ceil, trunc,
odd) and both policies of the target's kind.  Inputs per (source, target) pair:
  * random: raw random bit patterns (all NaN payloads, Inf, subnormals), values with the leading
    exponent spread over the target's range, values with tie / near-tie tails at random positions;
  * edges: +-0, +-min subnormal, +-max, +-Inf, NaN with both signs and payloads, integer extremes,
    2^63, 2^64-1, 2^64; every value of the target and every midpoint between neighbouring target
    values (targets <= 16 bits: all of them; float32/float64 targets: random ones), the values just
    above/below them in the source format, the overflow thresholds (midpoint of max and the next
    value with unbounded exponent), k+1/2 around integer targets' limits.
A sample of every pair is also checked against the model's slow Fraction path.

Usage: test_random.py [libdtcast.so] [--count N] [--jobs J] [--seed S]
  --count N  random+edge inputs per pair for the full-count sources (default 1000000, as the
             test plan asks; smaller values make a quick run).
Prints "PASS <group>" / "FAIL <group>: <first mismatch>" per (source, target) pair; exit 1 on
failure.
"""
import argparse
import multiprocessing as mp
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, 'model'))

import numpy as np  # noqa: E402
import dtmodel as M  # noqa: E402
import dtlib  # noqa: E402

U64 = np.uint64
SOURCES_FULL = ['float32', 'float64', 'int64', 'uint64']
SOURCES_QUARTER = ['int32', 'complex64', 'complex128']




# --------------------------------------------------------------------------------------------
# Input generation.  Values are built exactly (M * 2^E) and put into the source format with the
# model's encoder (trunc / saturate), which only decides where they land, not what is checked.
# --------------------------------------------------------------------------------------------

def target_exp_range(t):
    """Leading-bit exponents that matter for target t."""
    if isinstance(t, M.ComplexFmt):
        t = t.part
    if isinstance(t, M.FloatFmt):
        emax = M._floor_log2(M._maxval(t))
        lo = -127 - 3 if t.style == 'e8m0' else t.emin - t.mbits - 3
        return lo, emax + 3
    if isinstance(t, M.IntFmt):
        return -3, t.bits + 2
    return -10, 10


def to_source(s, vals):
    if isinstance(s, M.FloatFmt):
        return M.encode_fast(s, vals, 'trunc', 'saturate')
    return M.encode_fast(s, vals, 'trunc', 'ieee', 'saturate')


def src_precision(s):
    if isinstance(s, M.FloatFmt):
        return s.mbits + 1
    return s.bits - (1 if s.signed else 0)


def random_codes(s, t, n, rng):
    """n random codes of real source s, a mix aimed at target t."""
    parts = []
    q = n // 4
    # raw bit patterns
    parts.append(rng.integers(0, 2 ** s.bits, q, dtype=np.uint64, endpoint=False)
                 if s.bits < 64 else rng.integers(0, 2 ** 64, q, dtype=np.uint64))
    p = src_precision(s)
    lo, hi = target_exp_range(t)
    if isinstance(s, M.FloatFmt):
        lo = max(lo, s.emin - s.mbits - 2)
        hi = min(hi, M._floor_log2(M._maxval(s)) + 2)
    else:
        lo, hi = max(lo, -2), min(hi, s.bits + 1)
    if lo > hi:
        lo, hi = hi - 4, hi
    # leading exponent spread over the target's range, random significand
    m = rng.integers(0, 2 ** 63, q, dtype=np.uint64) | U64(1 << 63)
    e = rng.integers(lo, hi + 1, q)
    neg = rng.random(q) < 0.5
    parts.append(to_source(s, M.Vals(np.zeros(q), neg, m, e - 63)))
    # tie-ish tails: p-bit significand, random cut k, tail 10..0 / 01..1 / 10..01 / 0
    r = n - 2 * q
    pp = min(p, 63)
    m = rng.integers(0, 2 ** (pp - 1), r, dtype=np.uint64) | U64(1 << (pp - 1))
    k = rng.integers(1, pp, r).astype(U64)
    half = U64(1) << (k - U64(1))
    base = (m >> k) << k
    kind_ = rng.integers(0, 4, r)
    tail = np.choose(kind_, [half, half - U64(1), half + U64(1), np.zeros(r, U64)])
    m = base | tail
    e = rng.integers(lo, hi + 1, r)
    neg = rng.random(r) < 0.5
    parts.append(to_source(s, M.Vals(np.zeros(r), neg, m, e - (pp - 1))))
    return np.concatenate(parts).astype(U64)


def float64_nextafters(x, dt):
    """x (float64 array) in source float dtype dt: the representable ones and their neighbours."""
    with np.errstate(over='ignore', invalid='ignore'):
        y = x.astype(dt)
        y = y[(y.astype(np.float64) == x) & np.isfinite(y)]
        out = [y, np.nextafter(y, dt(np.inf)), np.nextafter(y, dt(-np.inf))]
    return np.concatenate(out)


def grid_values(t):
    """Sorted float64 values of all finite values of a float target of <= 16 bits (exact), with
    the next value above max with unbounded exponent (and its negative) appended."""
    codes = M.all_codes(t)
    v = M.value_of_code_float(t, codes)
    v = np.unique(v[np.isfinite(v)])
    b = float(M._beyond_max(t))
    lowb = -b if t.style != 'e8m0' else 0.0
    return np.unique(np.concatenate([v, [b, lowb]]))


def edge_floats(t, rng, n):
    """Edge values (float64, all exact) for target t: grid values, midpoints, limits."""
    if isinstance(t, M.ComplexFmt):
        t = t.part
    c = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 2.0 ** 63, -2.0 ** 63,
         2.0 ** 64, -2.0 ** 64, 2.0 ** 64 - 2048, 2.0 ** 31, -2.0 ** 31, 2.0 ** 32,
         2.0 ** -127, 2.0 ** -128, 2.0 ** 127, 2.0 ** 128, 3 * 2.0 ** 126, 3 * 2.0 ** 127,
         np.finfo(np.float32).max, np.finfo(np.float64).max, 5e-324, 2.0 ** -149, 2.0 ** -150,
         2.0 ** -126, np.finfo(np.float32).max * 1.0000001]
    c = np.array(c, dtype=np.float64)
    extra = []
    if isinstance(t, M.FloatFmt) and t.bits <= 16:
        g = grid_values(t)
        mids = (g[:-1] + g[1:]) / 2        # exact: <= 12-bit significands, in float64 range
        extra += [g, mids]
    elif isinstance(t, M.FloatFmt) and t.bits == 32:
        k = min(n, 100000)
        codes = rng.integers(0, 0x7F800000, k, dtype=np.uint64).astype(np.uint32)
        g = codes.view(np.float32).astype(np.float64)
        nx = np.nextafter(codes.view(np.float32), np.float32(np.inf)).astype(np.float64)
        mids = (g + nx) / 2                 # exact: 25-bit significands
        b = 2.0 ** 128 - 2.0 ** 104         # midpoint of max and 2^128: overflow threshold
        extra += [g, mids, -mids, [b, -b, 2.0 ** 128 - 2.0 ** 103]]
    elif isinstance(t, M.IntFmt):
        ks = []
        for L in (t.minv, t.maxv, 0, 1 << t.bits, -(1 << t.bits), 1 << (t.bits - 1)):
            ks += [L + d for d in range(-3, 4)]
        ks = np.array(ks, dtype=np.float64)
        extra += [ks, ks + 0.5, ks - 0.5]
    allv = np.concatenate([c] + [np.asarray(x, dtype=np.float64) for x in extra])
    return np.concatenate([allv, -allv])


def edge_ints(t, rng, n):
    """Integer edge values (Python ints) for integer sources into target t."""
    if isinstance(t, M.ComplexFmt):
        t = t.part
    out = [0, 1, -1, 2, -2, 3, 2 ** 63, 2 ** 63 - 1, -2 ** 63, -2 ** 63 + 1, 2 ** 64 - 1,
           2 ** 64 - 2, 2 ** 31, -2 ** 31, 2 ** 31 - 1, 2 ** 32 - 1, 2 ** 32, 2 ** 53 + 1,
           2 ** 24 + 1, 2 ** 62 + 2 ** 38 + 1]
    if isinstance(t, M.FloatFmt) and t.bits <= 16:
        g = grid_values(t)
        mids = (g[:-1] + g[1:]) / 2
        for v in np.concatenate([g, mids]):
            if v == int(v) and abs(v) < 2.0 ** 64:
                out += [int(v) - 1, int(v), int(v) + 1]
    elif isinstance(t, M.FloatFmt):
        p = t.mbits + 1
        k = min(n // 8, 50000)
        e = rng.integers(p, 64, k)
        m = rng.integers(0, 2 ** 62, k, dtype=np.uint64)
        for ei, mi in zip(e.tolist(), m.tolist()):
            ulp = 1 << (ei - t.mbits)
            top = mi | (1 << 62)
            top = top >> (62 - ei) if ei <= 62 else top << (ei - 62)
            g = top // ulp * ulp
            mid = g + ulp // 2
            out += [g, mid, mid - 1, mid + 1, -mid, -mid - 1, -mid + 1]
        b = 2 ** 128 - 2 ** 104 if t.bits == 32 else None
        if b:
            out.append(b)
    elif isinstance(t, M.IntFmt):
        for L in (t.minv, t.maxv, 1 << t.bits, -(1 << t.bits)):
            out += [L + d for d in range(-3, 4)]
    return out


def special_float_codes(s):
    """NaNs with both signs and payloads, Infs, zeros, min subnormal, max."""
    f = s
    eall = ((1 << f.ebits) - 1) << f.mbits
    mall = (1 << f.mbits) - 1
    base = [0, 1, 2, mall, 1 << f.mbits, f.maxcode, f.maxcode - 1, eall, eall | 1,
            eall | mall, eall | (1 << (f.mbits - 1)), eall | ((1 << (f.mbits - 1)) + 1),
            eall | 0x55]
    return [c | sg for c in base for sg in (0, f.signbit)]


def input_codes(sn, tn, n, seed):
    """All input codes for the (source, target) pair: random + edges + specials, <= ~n."""
    s = M.TYPES[sn]
    t = M.TYPES[tn]
    rng = np.random.default_rng([seed, s.code, t.code])
    if isinstance(s, M.ComplexFmt):
        re = input_codes(s.part.name, tn, n, seed)
        im = input_codes(s.part.name, tn, n, seed + 1)
        k = min(len(re), len(im))
        im = im[rng.permutation(len(im))[:k]]
        return np.stack([re[:k], im], axis=1)
    if isinstance(s, M.FloatFmt):
        dt = np.float32 if s.bits == 32 else np.float64
        ut = np.uint32 if s.bits == 32 else np.uint64
        e = float64_nextafters(edge_floats(t, rng, n), dt).view(ut).astype(U64)
        e = np.concatenate([np.array(special_float_codes(s), dtype=U64), e])
    else:
        vals = [v for v in edge_ints(t, rng, n) if s.minv <= v <= s.maxv]
        e = np.array([v & s.mask for v in vals], dtype=U64)
    if len(e) > n // 2:
        keep = rng.choice(len(e), n // 2, replace=False)
        e = e[np.sort(keep)]
    r = random_codes(s, t, n - len(e), rng)
    return np.concatenate([e, r]).astype(U64)


# --------------------------------------------------------------------------------------------

_LIB = None


def _init(path):
    global _LIB
    _LIB = dtlib.Lib(path)


def describe(s, code):
    if isinstance(s, M.ComplexFmt):
        return '(%s, %s)' % (describe(s.part, code[0]), describe(s.part, code[1]))
    w = (s.bits + 3) // 4
    k, neg, mag = M.decode_slow(s, int(code))
    if k == 'num':
        v = -mag if neg else mag
        if isinstance(s, M.FloatFmt):
            return '0x%0*x (%r)' % (w, int(code), float(v))
        return '0x%0*x (%d)' % (w, int(code), int(v))
    return '0x%0*x (%s%s)' % (w, int(code), '-' if neg else '+', k)


def hexc(t, c):
    if isinstance(t, M.ComplexFmt):
        return '(%s, %s)' % (hexc(t.part, c[0]), hexc(t.part, c[1]))
    return '0x%0*x' % ((t.bits + 3) // 4, int(c))


def run_pair(args):
    sn, tn, n, seed, nslow = args
    lib = _LIB
    s, t = M.TYPES[sn], M.TYPES[tn]
    codes = input_codes(sn, tn, n, seed)
    cnt = len(codes)
    data = M.pack(s, codes)
    discard = 1 if isinstance(s, M.ComplexFmt) and not isinstance(t, M.ComplexFmt) else 0
    vals = None if isinstance(s, M.ComplexFmt) else M.decode_fast(s, codes)
    checks = 0
    rnd = random.Random(seed * 1000003 + s.code * 1009 + t.code)
    slow_idx = sorted(rnd.sample(range(cnt), min(nslow, cnt)))
    for mode, fov, iov in M.combos(t):
        m = M.resolve(mode, t)
        if vals is not None and not isinstance(t, M.ComplexFmt):
            exp = M.encode_fast(t, vals, m, fov, iov)
        else:
            exp = M.convert_fast(s, t, codes, m, fov, iov)
        pol = fov if M.kind(t) in ('float', 'complex') else iov
        # the fast model against the slow one on a sample
        for i in slow_idx:
            c = tuple(int(x) for x in codes[i]) if codes.ndim == 2 else int(codes[i])
            ref = M.convert_slow(s, t, c, m, fov, iov)
            fe = tuple(int(x) for x in exp[i]) if exp.ndim == 2 else int(exp[i])
            if ref != fe:
                return (False, 'MODEL fast/slow disagree: %s %s -> %s mode=%s policy=%s: '
                        'slow %s, fast %s' % (s, describe(s, codes[i]), t, mode, pol, ref, fe),
                        checks)
        opts = lib.options(mode, fov, iov, discard_imaginary=discard, threads=0)  # 0 = automatic
        st, out, msg = lib.convert(t.code, data, s.code, cnt, M.storage_bytes(t, cnt), opts)
        if st != 0:
            return (False, 'status %d (%s) for %s -> %s mode=%s policy=%s'
                    % (st, msg, s, t, mode, pol), checks)
        got = M.unpack(t, out, cnt)
        bad = got != exp
        if bad.ndim == 2:
            bad = bad.any(axis=1)
        checks += cnt
        if bad.any():
            i = int(np.nonzero(bad)[0][0])
            return (False, '%s %s -> %s, mode=%s, policy=%s: expected %s, got %s (%d of %d differ)'
                    % (s, describe(s, codes[i]), t, mode, pol, hexc(t, exp[i]), hexc(t, got[i]),
                       int(bad.sum()), cnt), checks)
    return (True, '%d inputs x %d modes/policies' % (cnt, len(M.combos(t))), checks)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('lib', nargs='?', default=dtlib.default_path())
    ap.add_argument('--count', type=int, default=1000000,
                    help='inputs per pair (full setting: 1000000)')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--seed', type=int, default=20240601)
    ap.add_argument('--slow', type=int, default=12, help='slow-model samples per pair and combo')
    a = ap.parse_args()
    t0 = time.time()
    tasks = []
    for sn in SOURCES_FULL + SOURCES_QUARTER:
        n = a.count if sn in SOURCES_FULL else max(a.count // 4, 1000)
        for tn in M.ALL_NAMES:
            tasks.append((sn, tn, n, a.seed, a.slow))
    # big targets first would balance better, but keep a stable output order
    failed = 0
    total = 0
    if a.jobs > 1:
        pool = mp.Pool(a.jobs, initializer=_init, initargs=(a.lib,))
        results = pool.imap(run_pair, tasks, chunksize=1)
    else:
        _init(a.lib)
        results = map(run_pair, tasks)
    for (sn, tn, _, _, _), (ok, msg, checks) in zip(tasks, results):
        total += checks
        if ok:
            print('PASS random %s -> %s (%s)' % (sn, tn, msg), flush=True)
        else:
            failed += 1
            print('FAIL random %s -> %s: %s' % (sn, tn, msg), flush=True)
    if a.jobs > 1:
        pool.close()
        pool.join()
    print('# %d pairs, %d element conversions compared, count=%d, %.0fs'
          % (len(tasks), total, a.count, time.time() - t0))
    if failed:
        print('# %d pair(s) failed' % failed)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
