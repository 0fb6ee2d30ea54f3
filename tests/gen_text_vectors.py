#!/usr/bin/env python3
"""Generates the text conversion vectors in tests/text_vectors/ (checked in; rerun to refresh).

Independent of dtcast's C code: everything here is exact rational arithmetic (fractions) and
CPython's own float repr (David Gay's dtoa) for float64.

  float16_repr.txt  every float16 code: "hex<TAB>repr" (shortest round-trip digits, Python layout)
  float32_repr.txt  chosen float32 codes, the same
  float64_repr.txt  chosen float64 codes: repr(x)
  parse_round.txt   "text<TAB>codes": the text rounded once into float16, bfloat16, float32 and
                    float64 under rne, round (ties away), floor, ceil, trunc, odd (24 hex codes)
  parse_sig.txt     "text<TAB>neg<TAB>sig<TAB>exp<TAB>sticky": the top 64 bits of |value|
                    (sig has bit 63 set, truncated) and whether any bit below is set
  parse_int.txt     "text<TAB>cls<TAB>neg<TAB>huge<TAB>low<TAB>frac": integer part of |value|
                    modulo 2^64, whether it is >= 2^64, the fraction against 1/2

Usage: python3 tests/gen_text_vectors.py [output-dir]
"""
import os
import random
import struct
import sys
from fractions import Fraction


# ---- binary formats ---------------------------------------------------------------------------

class Fmt:
    def __init__(self, name, exp_bits, man_bits):
        self.name = name
        self.exp_bits = exp_bits
        self.man_bits = man_bits
        self.bias = (1 << (exp_bits - 1)) - 1
        self.bits = 1 + exp_bits + man_bits
        self.emin = 1 - self.bias              # exponent of the smallest normal
        self.emax = (1 << exp_bits) - 2 - self.bias
        self.sign = 1 << (self.bits - 1)
        self.inf = ((1 << exp_bits) - 1) << man_bits
        self.max = self.inf - 1

    def value(self, code):
        """Exact value of a finite code as a Fraction, or None for Inf/NaN."""
        e = (code >> self.man_bits) & ((1 << self.exp_bits) - 1)
        m = code & ((1 << self.man_bits) - 1)
        if e == (1 << self.exp_bits) - 1:
            return None
        if e == 0:
            v = Fraction(m) * Fraction(2) ** (self.emin - self.man_bits)
        else:
            v = Fraction(m + (1 << self.man_bits)) * Fraction(2) ** (e - self.bias - self.man_bits)
        return -v if code & self.sign else v

    def is_nan(self, code):
        e = (code >> self.man_bits) & ((1 << self.exp_bits) - 1)
        return e == (1 << self.exp_bits) - 1 and (code & ((1 << self.man_bits) - 1)) != 0


F16 = Fmt("float16", 5, 10)
BF16 = Fmt("bfloat16", 8, 7)
F32 = Fmt("float32", 8, 23)
F64 = Fmt("float64", 11, 52)

MODES = ["rne", "round", "floor", "ceil", "trunc", "odd"]


def floor_log2(a):
    """floor(log2(a)) for a Fraction a > 0."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if e >= 0:
        if a.numerator < a.denominator << e:
            e -= 1
    elif a.numerator << -e < a.denominator:
        e -= 1
    return e


def round_to(q, f, mode):
    """Rounds the Fraction q once into format f under mode; IEEE overflow rules. Returns the code."""
    neg = q < 0
    sign = f.sign if neg else 0
    a = -q if neg else q
    if a == 0:
        return sign
    e = max(floor_log2(a), f.emin)
    ulp = Fraction(2) ** (e - f.man_bits)
    n = a / ulp
    fl = n.numerator // n.denominator
    rem = n - fl
    half = Fraction(1, 2)
    if mode == "rne":
        up = rem > half or (rem == half and fl & 1)
    elif mode == "round":
        up = rem >= half
    elif mode == "floor":
        up = neg and rem > 0
    elif mode == "ceil":
        up = not neg and rem > 0
    elif mode == "trunc":
        up = False
    elif mode == "odd":
        up = False
        if rem > 0:
            fl |= 1
    else:
        raise ValueError(mode)
    m = fl + (1 if up else 0)
    if m == 1 << (f.man_bits + 1):
        m >>= 1
        e += 1
    if e > f.emax:  # overflow
        to_inf = {"rne": True, "round": True, "trunc": False, "odd": False,
                  "floor": neg, "ceil": not neg}[mode]
        return sign | (f.inf if to_inf else f.max)
    if m < 1 << f.man_bits:  # subnormal (or zero)
        return sign | m
    return sign | ((e + f.bias) << f.man_bits) | (m - (1 << f.man_bits))


# ---- shortest round-trip digits (Python repr layout) ------------------------------------------

def floor_log10(a):
    """floor(log10(a)) for a Fraction a > 0."""
    k = int(floor_log2(a) * 0.30102999566398) - 2
    while Fraction(10) ** (k + 1) <= a:
        k += 1
    while Fraction(10) ** k > a:
        k -= 1
    return k


def shortest(code, f):
    """(digits, point): the shortest decimal 0.digits * 10^point that rounds (rne) back to code in
    f, the nearest to the value among those, the even last digit on a tie."""
    x = abs(f.value(code))
    k = floor_log10(x)
    for n in range(1, 40):
        q = k - n + 1
        unit = Fraction(10) ** q
        lo = (x / unit).numerator // (x / unit).denominator
        cands = []
        for d in (lo, lo + 1):
            c = d * unit
            if round_to(c, f, "rne") == code & ~f.sign:
                cands.append((abs(c - x), d & 1, d))
        if cands:
            cands.sort()
            d = cands[0][2]
            s = str(d)
            point = len(s) + q
            return s.rstrip("0"), point
    raise AssertionError("no shortest digits for %x" % code)


def python_layout(digits, point, add_dot_0=True):
    """CPython format_float_short, mode 'r'."""
    n = len(digits)
    if point <= -4 or point > 16:
        mant = digits[0] + ("." + digits[1:] if n > 1 else "")
        x = point - 1
        return "%se%s%02d" % (mant, "-" if x < 0 else "+", abs(x))
    if point <= 0:
        return "0." + "0" * -point + digits
    if point < n:
        return digits[:point] + "." + digits[point:]
    return digits + "0" * (point - n) + (".0" if add_dot_0 else "")


def repr_in(code, f):
    if f.is_nan(code):
        return "nan"
    neg = "-" if code & f.sign else ""
    v = f.value(code)
    if v is None:
        return neg + "inf"
    if v == 0:
        return neg + "0.0"
    digits, point = shortest(code, f)
    return neg + python_layout(digits, point)


# ---- exact decimal strings ----------------------------------------------------------------------

def exact_decimal(q):
    """The exact decimal expansion of a dyadic Fraction q, in scientific notation."""
    neg = q < 0
    a = -q if neg else q
    den = a.denominator
    t = 0
    while den > 1:
        assert den % 2 == 0
        den //= 2
        t += 1
    num = a.numerator * 5 ** t  # a = num / 10^t
    s = str(num)
    exp = len(s) - 1 - t
    body = s[0] + ("." + s[1:] if len(s) > 1 else "")
    return ("-" if neg else "") + body + "e" + str(exp)


def fraction_of(text):
    """Exact value of a decimal text (no inf/nan), with absurd exponents tamed: beyond 10^400 or
    below 10^-400 every format gives the same result as for 10^500 or 10^-500."""
    t = text.strip().lower()
    neg = t.startswith("-")
    t = t.lstrip("+-")
    mant, _, exp = t.partition("e")
    e = int(exp) if exp else 0
    ip, _, fp = mant.partition(".")
    digits = (ip + fp).lstrip("0")
    if not digits:
        return Fraction(0) * (-1 if neg else 1), False
    mag = len(ip.lstrip("0")) - 1 + e if ip.lstrip("0") else e - (len(fp) - len(fp.lstrip("0"))) - 1
    tamed = False
    if mag > 400:
        q, tamed = Fraction(10) ** 500, True
    elif mag < -400:
        q, tamed = Fraction(1, 10 ** 500), True
    else:
        q = Fraction(int(ip + fp) if ip + fp else 0) * Fraction(10) ** (e - len(fp))
    return (-q if neg else q), tamed


def significant_digit_count(text):
    t = text.strip().lower().lstrip("+-").partition("e")[0].replace(".", "")
    return len(t.lstrip("0").rstrip("0"))


# ---- choosing inputs ----------------------------------------------------------------------------

def f32_codes(rng):
    codes = set()
    for e in range(256):
        for m in (0, 1, 2, 0x400000, 0x7FFFFE, 0x7FFFFF):
            codes.add((e << 23) | m)
    codes.update([0x3F1AD728, 0x4CEB79A3, 0x7F7FFFFF, 0x00800000, 0x007FFFFF, 0x00000001,
                  0x3DCCCCCD, 0x3EAAAAAB, 0x4B3C614E])
    while len(codes) < 3000:
        codes.add(rng.getrandbits(31))
    out = sorted(codes)
    return out + [c | 0x80000000 for c in out[::7]]


def f64_codes(rng):
    codes = set()
    for e in range(0, 2048, 3):
        codes.add(e << 52)
        codes.add((e << 52) | 1)
        codes.add((e << 52) | ((1 << 52) - 1))
    codes.update([0x7FEFFFFFFFFFFFFF, 0x0010000000000000, 0x000FFFFFFFFFFFFF, 1,
                  0x3FB999999999999A, 0x4340000000000000, 0x433FFFFFFFFFFFFF, 0x3F1A36E2EB1C432D,
                  0x44B52D02C7E14AF6])
    while len(codes) < 3000:
        codes.add(rng.getrandbits(63))
    out = sorted(codes)
    return out + [c | (1 << 63) for c in out[::7]]


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def f64_of(bits):
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def parse_texts(rng):
    texts = ["0", "-0", "0.0", "-0.0", "1", "-1", "0.1", "3.14", "-1e-5", "1E8", ".5", "5.",
             "+2", "100.5", "-7.5", "1e30", "18446744073709551616", "18446744073709551615",
             "0.5", "0.49999999999999999999999999", "1.5", "2.5", "-2.5", "65504", "65520",
             "65519.99", "3.4028235e38", "3.4028235677973366e38", "3.4028236e38",
             "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
             "2.4703282292062327e-324", "2.4703282292062328e-324", "4.9406564584124654e-324",
             "1e-400", "1e400", "-1e-401", "1e-45", "7.006492321624085e-46",
             "7.006492321624086e-46", "1.401298464324817e-45", "5.960464477539063e-08",
             "2.9802322387695312e-08", "2.9802322387695313e-08", "123456789012345678901234567890",
             "0.000000000000000000000000000000000000000000001", "9007199254740993",
             "9007199254740993.0000000000000000000001", "1e23", "8.98846567431158e307",
             "0.30000000000000004", "1e-5", "1.0e+0", "00000.000001e6", "-.0e-0", "1e0",
             "1e999999999999999999999", "-1e-999999999999999999999", "0e999999999999999999",
             "340282356779733661637539395458142568448", "4951760157141521099596496896"]
    # Midpoints between neighbouring floats of each format, exactly and a hair off either side.
    for f, count in ((F16, 25), (BF16, 25), (F32, 40), (F64, 16)):
        for i in range(count):
            code = rng.getrandbits(f.bits - 1)
            if code >= f.inf - 1:
                continue
            mid = (f.value(code) + f.value(code + 1)) / 2
            s = exact_decimal(mid)
            mant, _, e = s.partition("e")
            if "." not in mant:
                mant += "."
            texts.append(s)
            texts.append("-" + s)
            texts.append(mant + "000000000000000000001e" + e)
            if i % 6 == 0:
                texts.append(mant + "0" * 900 + "1e" + e)  # the decisive digit beyond 800
            # a hair below: the digits minus one unit 30 places further down
            digits = mant.replace(".", "")
            below = str(int(digits) * 10 ** 30 - 1).zfill(len(digits) + 30)
            texts.append(below[0] + "." + below[1:] + "e" + e)
    # Random short decimals and random long ones across the whole range.
    for _ in range(160):
        n = rng.randint(1, 25)
        d = "".join(rng.choice("0123456789") for _ in range(n))
        e = rng.randint(-340, 320)
        texts.append(("-" if rng.random() < 0.3 else "") + d[:1] + "." + d[1:] + "e" + str(e))
    for _ in range(12):
        n = rng.randint(26, 1200)
        d = "".join(rng.choice("0123456789") for _ in range(n))
        e = rng.randint(-330, 310)
        texts.append(d + "e" + str(e - n))
    # repr of random float64 and float32 values, and a digit more or less.
    for _ in range(60):
        x = f64_of(rng.getrandbits(63))
        if x != x or x == float("inf"):
            continue
        texts.append(repr(x))
    return texts


# ---- writing ------------------------------------------------------------------------------------

def int_parts(q):
    a = abs(q)
    ip = a.numerator // a.denominator
    frac = a - ip
    half = Fraction(1, 2)
    fc = "zero" if frac == 0 else "below" if frac < half else "half" if frac == half else "above"
    return ip, fc


def write(path, lines):
    with open(path, "w", newline="\n") as fh:
        fh.write("\n".join(lines) + "\n")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__),
                                                              "text_vectors")
    os.makedirs(out, exist_ok=True)
    rng = random.Random(20240611)

    write(os.path.join(out, "float16_repr.txt"),
          ["%04x\t%s" % (c, repr_in(c, F16)) for c in range(1 << 16)])
    write(os.path.join(out, "float32_repr.txt"),
          ["%08x\t%s" % (c, repr_in(c, F32)) for c in f32_codes(rng)])

    lines = []
    for c in f64_codes(rng):
        x = f64_of(c)
        r = repr(x)
        if x == x and abs(x) != float("inf"):  # the generator's own algorithm must agree
            mine = repr_in(c, F64)
            assert mine == r, (hex(c), mine, r)
        lines.append("%016x\t%s" % (c, r))
    write(os.path.join(out, "float64_repr.txt"), lines)

    rounds, sigs, ints = [], [], []
    for t in parse_texts(rng):
        q, tamed = fraction_of(t)
        neg = t.strip().startswith("-")
        codes = []
        for f in (F16, BF16, F32, F64):
            for mode in MODES:
                c = round_to(q, f, mode)
                if q == 0 and neg:
                    c |= f.sign
                codes.append("%x" % c)
        rounds.append(t + "\t" + " ".join(codes))
        if not tamed and q != 0 and significant_digit_count(t) <= 800:
            a = abs(q)
            e = floor_log2(a) - 63
            scaled = a / Fraction(2) ** e
            sig = scaled.numerator // scaled.denominator
            sigs.append("%s\t%d\t%016x\t%d\t%d" % (t, neg, sig, e, scaled != sig))
        if not tamed and len(t) <= 120:
            ip, fc = int_parts(q)
            cls = "zero" if q == 0 else "finite"
            ints.append("%s\t%s\t%d\t%d\t%016x\t%s" % (t, cls, neg, ip >= 1 << 64,
                                                      ip % (1 << 64), fc))
    write(os.path.join(out, "parse_round.txt"), rounds)
    write(os.path.join(out, "parse_sig.txt"), sigs)
    write(os.path.join(out, "parse_int.txt"), ints)


if __name__ == "__main__":
    main()
