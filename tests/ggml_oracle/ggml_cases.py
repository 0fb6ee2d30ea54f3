"""The inputs of the ggml test vectors (tests/data/ggml/), made from fixed seeds, and the vector
files' layout: shared by make_vectors.py (which runs ggml on them) and
tests/python/test_ggml_vectors.py (which runs dtcast on them and compares with what ggml gave).

Only ggml's outputs are stored; the inputs are made again from their seeds here. They are built
from the raw 64-bit outputs of numpy's PCG64 (`np.random.PCG64(seed).random_raw`, a fixed
algorithm) with integer arithmetic and single IEEE operations only (+, *, /, conversions: no
log, exp or sin, whose last bits vary between numpy builds and CPUs), so every machine makes the
same bits; the index keeps each input's sha256, and a difference is reported as generator drift.

Quantize inputs (float32, the same for every type; rows of K elements, K per case):
  randn    40960  K=4096  near-normal rows (Irwin-Hall, 6 uniforms), each row its own scale
                          2^-12..2^12 and odd rows an offset mean
  heavy    16384  K=512   heavy-tailed: near-normal / uniform (slash distribution), 1 in 256 times
                          100 more; all finite
  special  20480  K=1024  32-element segments (whole 256-element chunks alike every other chunk,
                          mixed in the others) of: +0, +-0, constants, float32-subnormal scale
                          (1e-30..1e-45), float16-subnormal scale (1e-5..1e-9), float16-overflowing
                          scale (|x| 1e5..1e9), a lone spike among zeros, a constant with one
                          outlier, near-normal
  ints      8192  K=B     integer values, each segment in one range of [-1,1] .. [-128,127], [0,255]
  ties     16384  K=2B    exact grids: k/2 * 2^e/L for L in 1..128, one element at +-2^e, so that
                          x/scale lands exactly on the rounding boundaries
(B is the type's block; 102400 elements per type in all.)

Dequantize inputs: 10240 blocks of random bytes per type (rows of 16 blocks), every 4th block's
scale fields (float16 d / m / dmin, Q8_K's float32 d, MXFP4's E8M0, NVFP4's UE4M3 scales, IQ1_M's
scattered float16) set to NaN, Inf, subnormal, zero, max, ... in turn.
"""

import hashlib
import io
import zipfile

import numpy as np

GEN_VERSION = 1

# name (ggml's type_name), code, elements per block, bytes per block,
# how ggml quantizes it ("chunk": ggml_quantize_chunk; "row:<symbol>": the exported row function;
# None: not quantized here), scale fields for the dequantize specials [(byte offset, kind)]
TYPES = [
    ("q4_0", 2, 32, 18, "chunk", [(0, "f16")]),
    ("q4_1", 3, 32, 20, "chunk", [(0, "f16"), (2, "f16")]),
    ("q5_0", 6, 32, 22, "chunk", [(0, "f16")]),
    ("q5_1", 7, 32, 24, "chunk", [(0, "f16"), (2, "f16")]),
    ("q8_0", 8, 32, 34, "chunk", [(0, "f16")]),
    ("q8_1", 9, 32, 36, "row:quantize_row_q8_1_ref", [(0, "f16"), (2, "f16")]),
    ("q2_K", 10, 256, 84, "chunk", [(80, "f16"), (82, "f16")]),
    ("q3_K", 11, 256, 110, "chunk", [(108, "f16")]),
    ("q4_K", 12, 256, 144, "chunk", [(0, "f16"), (2, "f16")]),
    ("q5_K", 13, 256, 176, "chunk", [(0, "f16"), (2, "f16")]),
    ("q6_K", 14, 256, 210, "chunk", [(208, "f16")]),
    ("q8_K", 15, 256, 292, "row:quantize_row_q8_K_ref", [(0, "f32")]),
    ("iq2_xxs", 16, 256, 66, None, [(0, "f16")]),
    ("iq2_xs", 17, 256, 74, None, [(0, "f16")]),
    ("iq3_xxs", 18, 256, 98, "chunk", [(0, "f16")]),
    ("iq1_s", 19, 256, 50, None, [(0, "f16")]),
    ("iq4_nl", 20, 32, 18, "chunk", [(0, "f16")]),
    ("iq3_s", 21, 256, 110, "chunk", [(0, "f16")]),
    ("iq2_s", 22, 256, 82, "chunk", [(0, "f16")]),
    ("iq4_xs", 23, 256, 136, "chunk", [(0, "f16")]),
    ("iq1_m", 29, 256, 56, None, [(48, "iq1m")]),
    ("tq1_0", 34, 256, 54, "chunk", [(52, "f16")]),
    ("tq2_0", 35, 256, 66, "chunk", [(64, "f16")]),
    ("mxfp4", 39, 32, 17, "chunk", [(0, "e8m0")]),
    ("nvfp4", 40, 64, 36, "chunk", [(0, "ue4m3"), (1, "ue4m3"), (2, "ue4m3"), (3, "ue4m3")]),
    ("q1_0", 41, 128, 18, "chunk", [(0, "f16")]),
    ("q2_0", 42, 64, 18, "chunk", [(0, "f16")]),
]
# ggml has no to_float (nor any dequantize_row_) for Q8_1, its activation type
NO_DEQUANTIZE = {"q8_1"}

BY_NAME = {t[0]: t for t in TYPES}


def quantized_types():
    return [t[0] for t in TYPES if t[4]]


def dequantized_types():
    return [t[0] for t in TYPES if t[0] not in NO_DEQUANTIZE]


# ---- raw bits -> numbers, deterministically ----------------------------------------------------

class Bits:
    """Successive draws from one PCG64 stream."""

    def __init__(self, seed):
        self.bg = np.random.PCG64(seed)

    def u64(self, n):
        return np.asarray(self.bg.random_raw(n), dtype=np.uint64)

    def uniform(self, n):
        """[0, 1) float64, multiples of 2^-53"""
        return (self.u64(n) >> np.uint64(11)).astype(np.float64) * (2.0 ** -53)

    def ints(self, n, lo, hi):
        """integers in [lo, hi] (int64)"""
        span = np.uint64(hi - lo + 1)
        return (self.u64(n) % span).astype(np.int64) + lo

    def choice(self, n, seq):
        return [seq[i] for i in self.ints(n, 0, len(seq) - 1)]

    def normal(self, n):
        """near-normal (Irwin-Hall of 6 uniforms: mean 0, variance 1, |x| < 4.25)"""
        s = self.uniform(n)
        for _ in range(5):
            s = s + self.uniform(n)
        return (s - 3.0) * 1.4142135623730951

    def bytes(self, n):
        return self.u64((n + 7) // 8).astype("<u8").view(np.uint8)[:n].copy()


# ---- quantize inputs ---------------------------------------------------------------------------

SEEDS = {"randn": 101, "heavy": 102, "special": 103, "ints": 104, "ties": 105}
SIZES = {"randn": 40960, "heavy": 16384, "special": 20480, "ints": 8192, "ties": 16384}
CASES = list(SEEDS)


def row_length(case, block):
    return {"randn": 4096, "heavy": 512, "special": 1024, "ints": block, "ties": 2 * block}[case]


def _randn(b, n):
    k = 4096
    rows = n // k
    out = np.empty(n, np.float64)
    e = b.ints(rows, -12, 12)
    f = b.uniform(rows)
    m = b.uniform(rows)
    for r in range(rows):
        s = np.ldexp(1.0, int(e[r])) * (0.5 + f[r])
        x = b.normal(k) * s
        if r % 2:
            x = x + (m[r] - 0.5) * 4.0 * s
        out[r * k:(r + 1) * k] = x
    return out


def _heavy(b, n):
    x = b.normal(n) / (b.uniform(n) + 2.0 ** -12)
    spikes = b.ints(n, 0, 255) == 0
    x = np.where(spikes, x * 100.0, x)
    rows = n // 512
    e = b.ints(rows, -16, 8)
    return x * np.repeat(np.ldexp(1.0, e), 512)


CONSTS = [1.0, -1.0, 0.5, -3.25, 7.0, -8.0, 1e-3, -1e4, 65504.0, 1e-7, 3.0e-39, -2.5e-42,
          0.1, 123.456, -65520.0, 1e6]
SUBNORMAL_SCALES = [1e-30, 1e-32, 1e-34, 1e-36, 1e-37, 1e-38, 1e-39, 1e-40, 1e-41, 1e-42, 1e-43,
                    1e-44, 1e-45]
F16_SMALL_SCALES = [1e-5, 3e-6, 1e-6, 3e-7, 1e-7, 3e-8, 1e-8, 1e-9]
BIG_SCALES = [1e5, 3e5, 5.24e5, 1e6, 2.1e6, 4.2e6, 8.32e6, 1e7, 3e7, 1e8, 1e9]
KINDS = ["zero", "pmzero", "const", "subnormal", "f16small", "overflow", "spike", "const_spike",
         "normal"]


def _segment(b, kind, n):
    if kind == "zero":
        return np.zeros(n)
    if kind == "pmzero":
        return np.where(b.ints(n, 0, 1) == 1, -0.0, 0.0)
    if kind == "const":
        c = b.choice(1, CONSTS)[0] if b.ints(1, 0, 3)[0] else float(b.normal(1)[0]) * 10.0
        return np.full(n, c)
    if kind in ("subnormal", "f16small", "overflow"):
        scales = {"subnormal": SUBNORMAL_SCALES, "f16small": F16_SMALL_SCALES,
                  "overflow": BIG_SCALES}[kind]
        return b.normal(n) * b.choice(1, scales)[0]
    if kind == "spike":
        x = np.zeros(n)
        v = float(b.normal(1)[0]) * b.choice(1, [1.0, 1e-3, 1e4, 1e-40])[0]
        x[int(b.ints(1, 0, n - 1)[0])] = v
        return x
    if kind == "const_spike":
        x = np.full(n, b.choice(1, CONSTS)[0])
        x[int(b.ints(1, 0, n - 1)[0])] = float(b.normal(1)[0]) * 1e3
        return x
    return b.normal(n) * np.ldexp(1.0, int(b.ints(1, -8, 8)[0]))


def _special(b, n):
    out = []
    for c in range(n // 256):
        if c % 2 == 0:
            kind = KINDS[(c // 2) % len(KINDS)]
            if kind in ("const", "spike") and c % 4 == 2:  # 8 segments, each its own value
                seg = [_segment(b, kind, 32) for _ in range(8)]
            else:
                seg = [_segment(b, kind, 256)]
        else:
            seg = [_segment(b, k, 32) for k in b.choice(8, KINDS)]
        out.extend(seg)
    return np.concatenate(out)


INT_RANGES = [(-1, 1), (-2, 1), (-4, 3), (-8, 7), (-7, 8), (-16, 15), (-32, 31), (-127, 127),
              (-128, 127), (0, 1), (0, 15), (0, 255), (-3, 3), (-6, 6)]


def _ints(b, n):
    out = []
    for r in b.choice(n // 32, INT_RANGES):
        out.append(b.ints(32, r[0], r[1]).astype(np.float64))
    return np.concatenate(out)


TIE_L = [1, 2, 3, 4, 5, 6, 7, 8, 12, 15, 16, 31, 32, 63, 64, 127, 128]


def _ties(b, n):
    out = []
    for _ in range(n // 32):
        L = b.choice(1, TIE_L)[0]
        e = int(b.ints(1, -8, 8)[0])
        step = np.ldexp(1.0, e) / L
        x = b.ints(32, -2 * L, 2 * L).astype(np.float64) * 0.5 * step
        x[int(b.ints(1, 0, 31)[0])] = np.ldexp(1.0, e) * (1.0 if b.ints(1, 0, 1)[0] else -1.0)
        out.append(x)
    return np.concatenate(out)


_MAKERS = {"randn": _randn, "heavy": _heavy, "special": _special, "ints": _ints, "ties": _ties}
_cache = {}


def make_input(case, seed, n):
    """n float32 values of a case's kind from seed (n: a multiple of the case's SIZES' unit)"""
    x = _MAKERS[case](Bits(seed), n)
    assert x.size == n, (case, x.size)
    x = x.astype(np.float32)
    assert np.isfinite(x).all()
    return x


def quantize_input(case):
    """The flat float32 input of a case (the same for every type; reshape with row_length)."""
    if case not in _cache:
        x = make_input(case, SEEDS[case], SIZES[case])
        x.setflags(write=False)
        _cache[case] = x
    return _cache[case]


def quantize_input_2d(case, block):
    x = quantize_input(case)
    return x.reshape(-1, row_length(case, block))


def sweep_input(case, chunk, block, scale=10):
    """The check-long sweep's chunk `chunk` of a case: scale times its SIZES, other seeds"""
    x = make_input(case, SEEDS[case] + 1000 * (chunk + 1), SIZES[case] * scale)
    return x.reshape(-1, row_length(case, block))


# ---- dequantize inputs -------------------------------------------------------------------------

DQ_BLOCKS = 10240
DQ_ROW_BLOCKS = 16
DQ_FULL_ELEMENTS = 8192  # the first blocks' outputs are stored whole: this many elements' worth

F16_SPECIALS = [0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 0xFDFF, 0x0000, 0x8000, 0x0001, 0x8001,
                0x03FF, 0x83FF, 0x0400, 0x7BFF, 0xFBFF, 0x3C00, 0x0200, 0x1400]
F32_SPECIALS = [0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF,
                0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF,
                0xFF7FFFFF, 0x3F800000, 0x4B000000, 0x1F800000]
E8M0_SPECIALS = [0x00, 0xFF, 0xFE, 0x01, 0x7F, 0x80, 0x02, 0xFD]
UE4M3_SPECIALS = [0x7F, 0xFF, 0x00, 0x80, 0x01, 0x7E, 0xFE, 0x81, 0x08, 0x38]


def dequantize_seed(code):
    return 1000 + code


def dequantize_input(name, seed=None, nblocks=DQ_BLOCKS):
    """(nblocks, bytes) uint8: random blocks, every 4th with special scale fields."""
    _, code, block, size, _, fields = BY_NAME[name]
    b = Bits(dequantize_seed(code) if seed is None else seed)
    data = b.bytes(nblocks * size).reshape(nblocks, size)
    sel = data[::4]  # a view: every 4th block
    k0 = np.arange(sel.shape[0])
    for j, (off, kind) in enumerate(fields):
        k = k0 + 5 * j
        if kind in ("f16", "iq1m"):
            v = np.array(F16_SPECIALS, np.uint16)[k % len(F16_SPECIALS)]
            if kind == "f16":
                sel[:, off] = v & 0xFF
                sel[:, off + 1] = v >> 8
            else:
                # the float16 scale is the top nibbles of the four uint16 scales[] (LE)
                for t in range(4):
                    hi = off + 2 * t + 1
                    nib = (((v >> (4 * t)) & 0xF) << 4).astype(np.uint8)
                    sel[:, hi] = (sel[:, hi] & 0x0F) | nib
        elif kind == "f32":
            v = np.array(F32_SPECIALS, np.uint32)[k % len(F32_SPECIALS)]
            for t in range(4):
                sel[:, off + t] = (v >> (8 * t)) & 0xFF
        elif kind == "e8m0":
            sel[:, off] = np.array(E8M0_SPECIALS, np.uint8)[k % len(E8M0_SPECIALS)]
        elif kind == "ue4m3":
            sel[:, off] = np.array(UE4M3_SPECIALS, np.uint8)[(k + 3 * j) % len(UE4M3_SPECIALS)]
        else:
            raise ValueError(kind)
    return data


def dequantize_input_2d(name):
    size = BY_NAME[name][3]
    return dequantize_input(name).reshape(DQ_BLOCKS // DQ_ROW_BLOCKS, DQ_ROW_BLOCKS * size)


def full_blocks(name):
    return max(1, DQ_FULL_ELEMENTS // BY_NAME[name][2])


def block_digests(values, block):
    """(nblocks, 4) uint8: blake2b-32 of each block's float32 output bits (little-endian)"""
    flat = np.ascontiguousarray(values, dtype="<f4").reshape(-1, block).view(np.uint8)
    return np.frombuffer(b"".join(hashlib.blake2b(r.tobytes(), digest_size=4).digest()
                                  for r in flat), np.uint8).reshape(-1, 4)


def sha256(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


# ---- the vector files --------------------------------------------------------------------------

def write_npz(path, arrays):
    """np.savez_compressed's format (np.load reads it), with fixed timestamps: the same arrays
    give the same bytes"""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for key in sorted(arrays):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(arrays[key]), allow_pickle=False)
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, buf.getvalue(), compresslevel=9)


def read_npz(path):
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}
