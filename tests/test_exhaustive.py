#!/usr/bin/env python3
"""Exhaustive conformance test of dtcast_convert against the independent model (tests/model).

Every code of every type with <= 16 bits (bool: 0/1; plus complex32 and bcomplex32 with every
float16 / bfloat16 real part) is converted to every non-string type, in every rounding mode (default, rne, round, floor, ceil,
trunc, odd) and both policies of the target's kind (float/complex targets: float overflow
ieee/saturate; integer targets: wrap/saturate; bool: both pairs), and compared bit for bit with the
model.  Also: the model's fast path against its slow Fraction path on a sample, the options struct
layout, type_info, storage_size, complex -> real refusal, float4_nan_as_max, sub-byte tail padding.

Usage: test_exhaustive.py [path/to/libdtcast.so]   (default build/libdtcast.so)
Prints "PASS <group>" or "FAIL <group>: <first mismatch>" per check group; exits 1 on any failure.

The model's own self-checks (its fast encoder against its slow Fraction one on a sample, and the
NaN count of type_info from the slow decoder rather than the vectorized one) test the oracle, not
the library: they run with DTCAST_MODEL_SELFCHECK=1 (make check-long), not in make test.

DTCAST_TEST_SCALE below 1 (tests/run-valgrind) samples: sources wider than 8 bits take every
(1/scale)-th code (a different offset per target) plus their special codes and the codes next
to every exponent boundary; each (source, target) pair runs every 4th of its (mode, policy)
combinations (the offset turns with the pair, so each combination runs for a quarter of the
pairs); the NaN count of type_info is taken from the model's vectorized decoder, and the
model's fast == slow self-check (no library calls) is left out.
"""
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
try:
    SCALE = float(os.environ.get('DTCAST_TEST_SCALE') or 1)
except ValueError:
    SCALE = 1.0
if not SCALE > 0:
    SCALE = 1.0
SELFCHECK = os.environ.get('DTCAST_MODEL_SELFCHECK') == '1' and SCALE >= 1
FAILED = []
COUNTS = {'elements': 0, 'calls': 0}


def report(name, msg=None):
    if msg is None:
        print('PASS %s' % name, flush=True)
    else:
        print('FAIL %s: %s' % (name, msg), flush=True)
        FAILED.append(name)


def fmt_code(t, c):
    if isinstance(c, (tuple, list, np.ndarray)) and np.ndim(c) > 0:
        return '(' + ', '.join(fmt_code(t, x) for x in c) + ')'
    w = max(1, (getattr(t, 'bits', 8) + 3) // 4)
    if isinstance(t, M.ComplexFmt):
        w = (t.part.bits + 3) // 4
    return '0x%0*x' % (w, int(c))




def run_pair(lib, src, dst, codes, nan_as_max=0, group=None, off=0):
    """Convert codes (all of src) to dst under every combo (under DTCAST_TEST_SCALE < 1: every
    4th combo, from offset off); return first mismatch or None."""
    n = len(codes)
    data = M.pack(src, codes)
    discard = 1 if isinstance(src, M.ComplexFmt) and not isinstance(dst, M.ComplexFmt) else 0
    vals = None
    if not isinstance(src, M.ComplexFmt):
        vals = M.decode_fast(src, codes)
    combos = M.combos(dst)
    if SCALE < 1:
        combos = combos[off % 4::4]
    for mode, fov, iov in combos:
        m = M.resolve(mode, dst)
        if vals is not None and not isinstance(dst, M.ComplexFmt):
            exp = M.encode_fast(dst, vals, m, fov, iov, bool(nan_as_max))
        else:
            exp = M.convert_fast(src, dst, codes, m, fov, iov, bool(nan_as_max))
        opts = lib.options(mode, fov, iov, discard_imaginary=discard, nan_as_max=nan_as_max)
        st, out, msg = lib.convert(dst.code, data, src.code, n, M.storage_bytes(dst, n), opts)
        COUNTS['calls'] += 1
        COUNTS['elements'] += n
        pol = fov if M.kind(dst) in ('float', 'complex') else iov
        if st != 0:
            return 'status %s (%s) for %s -> %s mode=%s policy=%s' % (
                dtlib.STATUS[st] if st < len(dtlib.STATUS) else st, msg, src, dst, mode, pol)
        got = M.unpack(dst, out, n)
        bad = got != exp
        if bad.ndim == 2:
            bad = bad.any(axis=1)
        if bad.any():
            i = int(np.nonzero(bad)[0][0])
            return ('%s code %s -> %s, mode=%s, policy=%s: expected %s, got %s (%d of %d differ)'
                    % (src, fmt_code(src, codes[i]), dst, mode, pol, fmt_code(dst, exp[i]),
                       fmt_code(dst, got[i]), int(bad.sum()), n))
        if not M.padding_ok(dst, out, n):
            return 'padding bits not zero for %s -> %s' % (src, dst)
    return None


def special_codes(t):
    """Codes worth always sampling: zeros, NaN, Inf, max, min subnormal and their negatives."""
    out = {0, 1}
    if isinstance(t, M.FloatFmt):
        for c in (t.maxcode, t.nancode, t.infcode, 1, t.maxcode - 1, 1 << t.mbits):
            if c is not None:
                out.add(c)
                out.add(c | t.signbit)
    elif isinstance(t, M.IntFmt):
        out |= {t.mask, t.maxv, t.minv & t.mask}
    return sorted(x for x in out if x < (1 << t.bits))


def sample_codes(t, codes, off):
    """codes of t (every code, or (re, im) rows for complex32 / bcomplex32) under DTCAST_TEST_SCALE < 1:
    every k-th row from offset off, the special codes and the codes next to every exponent
    boundary (the two lowest and two highest mantissas of every exponent)."""
    part = t.part if isinstance(t, M.ComplexFmt) else t
    if SCALE >= 1 or getattr(part, 'bits', 1) <= 8:
        return codes
    k = max(1, int(round(1 / SCALE)))
    re = codes[:, 0] if codes.ndim == 2 else codes
    keep = (np.arange(len(re)) % k) == (off % k)
    keep |= np.isin(re, np.array(special_codes(part), dtype=U64))
    if isinstance(part, M.FloatFmt):
        low = re & U64((1 << part.mbits) - 1)
        keep |= (low < U64(2)) | (low >= U64((1 << part.mbits) - 2))
    else:
        n = 1 << part.bits
        idx = re.astype(np.int64)
        keep |= (idx < 256) | (idx >= n - 256) | (abs(idx - n // 2) < 256)
    return codes[keep]


def crosscheck(sources, targets, per_group, rng):
    """Fast model against slow model on samples: returns (checks, first mismatch or None)."""
    checks = 0
    for sn in sources:
        s = M.TYPES[sn]
        codes = M.all_codes(s)
        sample = sorted(set(rng.sample(range(len(codes)), min(per_group, len(codes))))
                        | set(special_codes(s) if not isinstance(s, M.BoolFmt) else [0, 1]))
        sample = np.array(sample, dtype=U64)
        vals = M.decode_fast(s, sample)
        slow = [M.decode_slow(s, int(c)) for c in sample]  # decoded once per source
        for dn in targets:
            d = M.TYPES[dn]
            for mode, fov, iov in M.combos(d):
                m = M.resolve(mode, d)
                for nam in ((False, True) if isinstance(d, M.FloatFmt) and d.style == 'none'
                            else (False,)):
                    got = M.encode_fast(d, vals, m, fov, iov, nam)
                    for j, c in enumerate(sample):
                        exp = M.encode_slow(d, slow[j], m, fov, iov, nam)
                        checks += 1
                        if exp != int(got[j]):
                            return checks, ('%s %s -> %s mode=%s fov=%s iov=%s nan_as_max=%s: '
                                            'slow %s, fast %s' % (sn, hex(int(c)), dn, m, fov,
                                                                  iov, nam, hex(exp),
                                                                  hex(int(got[j]))))
    return checks, None


def check_type_info(lib):
    """type_info against the model's formats (docs/formats.md, "Querying a type")."""
    problems = []
    for name in M.ALL_NAMES:
        t = M.TYPES[name]
        st, info = lib.type_info(t.code)
        if st != 0:
            problems.append('%s: status %d' % (name, st))
            continue
        k = M.kind(t)
        want = {'bits': t.bits}
        if info.name is None or info.name.decode() != name:
            problems.append('%s: name %r' % (name, info.name))
        kind_name = {'float': 'float', 'complex': 'complex', 'bool': 'bool'}.get(k)
        if k == 'int':
            kind_name = 'signed' if t.signed else 'unsigned'
        got_kind = dtlib.KIND[info.kind] if 0 <= info.kind < len(dtlib.KIND) else None
        if got_kind != kind_name:
            problems.append('%s: kind %d' % (name, info.kind))
        f = t.part if k == 'complex' else t
        if isinstance(f, M.FloatFmt):
            mx = float(M._maxval(f))
            if f.style == 'e8m0':
                minsub = minnorm = lowest = 2.0 ** -127
            else:
                minsub = float(M.decode_slow(f, 1)[2])
                minnorm = float(M.decode_slow(f, 1 << f.mbits)[2])
                lowest = -mx if f.signed else 0.0  # float8e5m3fnu: no negative values
            if f.bits > 16:
                ncount = 2 * ((1 << f.mbits) - 1)
            elif SELFCHECK:
                ncount = sum(1 for c in range(1 << f.bits) if M.decode_slow(f, c)[0] == 'nan')
            else:  # the model's vectorized decoder (the slow one: DTCAST_MODEL_SELFCHECK=1)
                ncount = int((M.decode_fast(f, M.all_codes(f)).cls == 2).sum())
            want.update(exponent_bits=f.ebits, mantissa_bits=f.mbits, bias=f.bias,
                        has_inf=int(f.has_inf), has_nan=int(f.has_nan),
                        has_negative_zero=int(f.has_negzero), max=mx, lowest=lowest,
                        min_normal=minnorm, min_subnormal=minsub, epsilon=2.0 ** -f.mbits,
                        max_bits=f.maxcode, inf_bits=f.infcode or 0,
                        nan_bits=f.nancode or 0, nan_count=ncount)
        elif isinstance(f, M.IntFmt):
            want.update(int_min=f.minv, int_max=f.maxv)
        elif isinstance(f, M.BoolFmt):
            want.update(int_min=0, int_max=1)
        for key, v in want.items():
            got = getattr(info, key)
            if key == 'nan_count' and v > 2 ** 31 - 1 and got in (-1, 2 ** 31 - 1):
                continue  # float64's 2^53-2 NaN encodings do not fit the int field
            if got != v:
                problems.append('%s.%s: expected %r, got %r' % (name, key, v, got))
    return problems


def main():
    if len(sys.argv) > 1 and sys.argv[1].startswith('-'):
        print(__doc__)
        return 0
    path = sys.argv[1] if len(sys.argv) > 1 else dtlib.default_path()
    t0 = time.time()
    lib = dtlib.Lib(path)
    rng = random.Random(12345)

    ok, msg = dtlib.layout_check()
    if ok is None:
        print('SKIP layout: %s' % msg)
    else:
        report('layout (dtcast_options/dtcast_info/dtcast_error offsets)', None if ok else msg)

    probs = check_type_info(lib)
    report('type_info (all %d types)' % len(M.ALL_NAMES),
           None if not probs else '%s (%d problems)' % (probs[0], len(probs)))

    probs = []
    for name in M.ALL_NAMES:
        t = M.TYPES[name]
        for n in list(range(0, 18)) + [1000, 1001]:
            st, b = lib.storage_size(t.code, n)
            if st != 0 or b != M.storage_bytes(t, n):
                probs.append('%s n=%d: status %d, %d bytes, expected %d'
                             % (name, n, st, b, M.storage_bytes(t, n)))
        if lib.L.dtcast_type_bits(t.code) != t.bits:
            probs.append('%s: type_bits %d' % (name, lib.L.dtcast_type_bits(t.code)))
    report('storage_size / type_bits', probs[0] if probs else None)

    small = [n for n in M.REAL_NAMES if M.TYPES[n].bits <= 16]
    targets = M.ALL_NAMES

    # the model's shortcut against its plain Fraction version
    t1 = time.time()
    if SELFCHECK:
        nchk, bad = crosscheck(small, M.REAL_NAMES, 16, rng)
        report('model fast == slow (%d sampled element checks, %.0fs)' % (nchk, time.time() - t1),
               bad)
    else:
        print('SKIP model fast == slow: a self-check of the model, no library calls (make '
              'check-long runs it: DTCAST_MODEL_SELFCHECK=1)')

    total_groups = 0
    for si, sn in enumerate(small + ['complex32', 'bcomplex32']):
        s = M.TYPES[sn]
        if isinstance(s, M.ComplexFmt):
            re = M.all_codes(s.part)
            im = re.copy()
            np.random.default_rng(7).shuffle(im)
            codes = np.stack([re, im], axis=1)
        else:
            codes = M.all_codes(s)
        for di, dn in enumerate(targets):
            d = M.TYPES[dn]
            total_groups += 1
            c = sample_codes(s, codes, di)
            report('%s %s -> %s' % ('exhaustive' if SCALE >= 1 else
                                    'sampled (%d codes, every 4th mode/policy)' % len(c), sn, dn),
                   run_pair(lib, s, d, c, off=si + di))

    # NaN-less targets with float4_nan_as_max
    for si, sn in enumerate(small + ['complex32', 'bcomplex32']):
        s = M.TYPES[sn]
        if isinstance(s, M.ComplexFmt):
            re = M.all_codes(s.part)
            codes = np.stack([re, re[::-1].copy()], axis=1)
        else:
            codes = M.all_codes(s)
        if isinstance(s, M.FloatFmt) and not s.has_nan:
            continue
        if isinstance(s, (M.IntFmt, M.BoolFmt)):
            continue
        for di, dn in enumerate(('float4e2m1', 'float6e2m3fn', 'float6e3m2fn')):
            c = sample_codes(s, codes, di)
            report('%s nan_as_max %s -> %s' % ('exhaustive' if SCALE >= 1 else
                                               'sampled (%d codes, every 4th mode/policy)'
                                               % len(c), sn, dn),
                   run_pair(lib, s, M.TYPES[dn], c, nan_as_max=1, off=si + di))

    # complex -> real without discard_imaginary is refused, output untouched
    probs = []
    for cn in ('complex32', 'bcomplex32', 'complex64', 'complex128'):
        c = M.TYPES[cn]
        src = bytes(M.storage_bytes(c, 5))
        for dn in M.REAL_NAMES:
            d = M.TYPES[dn]
            opts = lib.options()
            nbytes = M.storage_bytes(d, 5)
            st, out, msg = lib.convert(d.code, src, c.code, 5, nbytes, opts, fill=0x5A)
            if st != dtlib.ERR_COMPLEX_TO_REAL or out != b'\x5a' * nbytes:
                probs.append('%s -> %s: status %d, output %s' % (cn, dn, st, out.hex()))
    report('complex -> real refused without discard_imaginary', probs[0] if probs else None)

    # sub-byte tails: every count 1..2*per, padding bits zero, elements right
    probs = []
    for dn in [n for n in M.ALL_NAMES if M.TYPES[n].bits < 8 and M.TYPES[n].bits != 6]:
        d = M.TYPES[dn]
        per = 8 // d.bits
        for n in range(1, 2 * per + 1):
            codes = np.array([rng.randrange(1 << d.bits) for _ in range(n)], dtype=U64)
            # float16 -> dst and dst -> dst (identity)
            st, out, msg = lib.convert(d.code, M.pack(d, codes), d.code, n,
                                       M.storage_bytes(d, n), lib.options(), fill=0xFF)
            got = M.unpack(d, out, n)
            exp = M.convert_fast(d, d, codes, M.default_mode(d), 'ieee', 'wrap')
            if st != 0 or (got != exp).any() or not M.padding_ok(d, out, n):
                probs.append('%s -> %s n=%d: status %d, out %s, expected codes %s'
                             % (dn, dn, n, st, out.hex(), [hex(int(x)) for x in exp]))
            src = M.F['float32']
            xs = np.array([rng.choice([0.0, 1.0, -1.0, 0.5, 2.0, 3.0]) for _ in range(n)],
                          dtype=np.float32)
            sc = xs.view(np.uint32).astype(U64)
            st, out, msg = lib.convert(d.code, M.pack(src, sc), src.code, n,
                                       M.storage_bytes(d, n), lib.options(), fill=0xFF)
            exp = M.convert_fast(src, d, sc, M.default_mode(d), 'ieee', 'wrap')
            got = M.unpack(d, out, n)
            if st != 0 or (got != exp).any() or not M.padding_ok(d, out, n):
                probs.append('float32 -> %s n=%d: status %d, out %s, expected codes %s'
                             % (dn, n, st, out.hex(), [hex(int(x)) for x in exp]))
    report('sub-byte tails (padding bits zero, counts 1..2*per)', probs[0] if probs else None)

    dt = time.time() - t0
    print('# %d exhaustive groups, %d library calls, %d element conversions compared, %.0fs'
          % (total_groups, COUNTS['calls'], COUNTS['elements'], dt))
    if FAILED:
        print('# %d group(s) failed' % len(FAILED))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
