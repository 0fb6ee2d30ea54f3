"""An independent oracle of the scaled quantization schemes (docs/quantization.md), written from the
specification's text alone: numpy float32 arithmetic where the text says fl32(...), bit views where
it speaks of exponent fields, and exact element encoders of its own (a value table per format and
a search for the neighbours, so no library cast is trusted for the rounding).

Every function takes and returns numpy arrays:

- codes: the code of each element, one per byte, of x's shape (uint8: the format's bit pattern;
  int8 for int8/MXINT8 and int4, the integer itself). ``pack_rows`` packs 4-bit codes two per
  byte along the last axis, first element in the low nibble, as the C API's layouts do.
- scales: uint8 (float8e8m0 bytes, float8e4m3fn bytes) or float32 / bfloat16 / float16 arrays
  (ml_dtypes dtypes for the 16-bit ones).
- global_scale: float32 [1] or None.

Dequantize functions take the same and return the output as a numpy array of the output type
(float32, or ml_dtypes bfloat16 / numpy float16), rounded by this file's own encoder.

Where the text leaves a choice open the oracle says so in a comment marked "docs silent" (each is
listed in the report the tests print on a mismatch), and the tests avoid asserting on it.
"""

import numpy as np

try:
    import ml_dtypes

    _BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # the oracle itself needs only numpy; bfloat16 arrays need ml_dtypes
    ml_dtypes = None
    _BF16 = None

# ---- formats ------------------------------------------------------------------------------------


class Fmt:
    """A binary floating-point format: exponent bits, mantissa bits, bias; whether the all-ones
    exponent is Inf/NaN (ieee), or only the all-ones code is NaN (fn, as float8e4m3fn), or
    nothing is special (no Inf, no NaN: float6, float4)."""

    def __init__(self, name, ebits, mbits, bias, special):
        self.name, self.ebits, self.mbits, self.bias, self.special = name, ebits, mbits, bias, special
        self.bits = 1 + ebits + mbits
        self.sign = 1 << (ebits + mbits)
        top = (1 << (ebits + mbits)) - 1  # the largest magnitude code
        if special == "ieee":
            self.max_code = ((1 << ebits) - 2) << mbits | ((1 << mbits) - 1)
            self.inf_code = ((1 << ebits) - 1) << mbits
            self.nan_code = self.inf_code | (1 << (mbits - 1))
        elif special == "fn":
            self.max_code = top - 1
            self.inf_code = None
            self.nan_code = top
        else:
            self.max_code = top
            self.inf_code = None
            self.nan_code = None
        codes = np.arange(self.max_code + 1, dtype=np.int64)
        self.table = self._decode_mag(codes)  # float64, ascending with the code
        self.max = float(self.table[-1])
        # the value one step above max, where a rounding past max lands (ulp of the top binade)
        self.above = float(self.table[-1] + (self.table[-1] - self.table[-2]))

    def _decode_mag(self, c):
        e = c >> self.mbits
        f = c & ((1 << self.mbits) - 1)
        sub = f.astype(np.float64) * 2.0 ** (1 - self.bias - self.mbits)
        nor = (f + (1 << self.mbits)).astype(np.float64) * np.exp2(
            (e - self.bias - self.mbits).astype(np.float64))
        return np.where(e == 0, sub, nor)

    def decode(self, codes):
        """float64 values of codes (uint array of bit patterns)."""
        c = np.asarray(codes).astype(np.int64) & ((1 << self.bits) - 1)
        mag = c & (self.sign - 1)
        neg = (c & self.sign) != 0
        val = self._decode_mag(np.minimum(mag, self.max_code))
        if self.special == "ieee":
            val = np.where(mag == self.inf_code, np.inf, val)
            val = np.where(mag > self.inf_code, np.nan, val)
        elif self.special == "fn":
            val = np.where(mag == self.nan_code, np.nan, val)
        return np.where(neg, -val, val)

    def encode(self, v, rnd="rne", saturate=True, nan_code=None):
        """Codes of the exact values v (float64 holds every float32/16-bit value exactly): one
        rounding, `rne` (ties to the even code) or `rna` (ties away from zero); beyond the largest
        finite value: ±max when saturate, else ±Inf (or NaN where there is no Inf) as IEEE. The
        sign of zero is kept. nan_code: the code of NaN (default the format's NaN, with its sign)."""
        v = np.asarray(v, dtype=np.float64)
        neg = np.signbit(v)
        a = np.abs(v)
        nan = np.isnan(a)
        a0 = np.where(nan, 0.0, a)
        t = self.table
        lo = np.searchsorted(t, a0, side="right") - 1  # t[lo] <= a
        lo = np.clip(lo, 0, len(t) - 1)
        top = np.concatenate([t, [self.above]])
        hi = np.minimum(lo + 1, len(t))
        tl, th = top[lo], top[hi]
        mid = (tl + th) / 2  # exact: a handful of significant bits
        exact = a0 == tl
        up = a0 > mid
        tie = a0 == mid
        if rnd == "rne":
            up = up | (tie & (hi % 2 == 0))
        elif rnd == "rna":
            up = up | tie
        else:
            raise ValueError(rnd)
        code = np.where(exact, lo, np.where(up, hi, lo)).astype(np.int64)
        over = (code > self.max_code) | np.isinf(a0)
        if saturate:
            code = np.where(over, self.max_code, code)
        elif self.special == "ieee":
            code = np.where(over, self.inf_code, code)
        elif self.special == "fn":
            code = np.where(over, self.nan_code, code)
        else:
            code = np.where(over, self.max_code, code)
        code = code | np.where(neg, self.sign, 0)
        if nan.any():
            if nan_code is None:
                if self.nan_code is None:
                    raise ValueError(f"NaN has no code in {self.name}")
                nan_code = self.nan_code
                code = np.where(nan, nan_code | np.where(neg, self.sign, 0), code)
            else:
                code = np.where(nan, nan_code, code)
        return code.astype(np.uint16 if self.bits > 8 else np.uint8)


E4M3 = Fmt("float8e4m3fn", 4, 3, 7, "fn")
E5M2 = Fmt("float8e5m2", 5, 2, 15, "ieee")
E3M2 = Fmt("float6e3m2fn", 3, 2, 3, "none")
E2M3 = Fmt("float6e2m3fn", 2, 3, 1, "none")
E2M1 = Fmt("float4e2m1", 2, 1, 1, "none")
BF16 = Fmt("bfloat16", 8, 7, 127, "ieee")
F16 = Fmt("float16", 5, 10, 15, "ieee")

FLOATS = {f.name: f for f in (E4M3, E5M2, E3M2, E2M3, E2M1)}


def f32(x):
    return np.asarray(x, dtype=np.float32)


def bits(x):
    """The float32 bit patterns of float32 values."""
    return np.ascontiguousarray(f32(x)).view(np.uint32)


def from_bits(b):
    return np.ascontiguousarray(np.asarray(b, dtype=np.uint32)).view(np.float32)


def expfield(x):
    return ((bits(x) >> 23) & 0xFF).astype(np.int64)


def mantfield(x):
    return (bits(x) & 0x7FFFFF).astype(np.int64)


def widen(x):
    """x (float32, bfloat16, float16) as float32, exactly."""
    x = np.asarray(x)
    if x.dtype == np.float32:
        return x
    if x.dtype == np.float16:
        return x.astype(np.float32)  # exact
    if _BF16 is not None and x.dtype == _BF16:
        u = np.ascontiguousarray(x).view(np.uint16).astype(np.uint32) << 16
        return u.view(np.float32)
    raise TypeError(f"oracle input must be float32, bfloat16 or float16, not {x.dtype}")


def to_type(v, name):
    """Exact values v (float64 or float32) rounded once (RNE, IEEE overflow) to float32,
    bfloat16 or float16, as an array of that type. NaN stays NaN (bits not compared)."""
    v = np.asarray(v, dtype=np.float64)
    if name == "float32":
        return v.astype(np.float32)  # the hardware's conversion: one RNE rounding
    fmt = {"bfloat16": BF16, "float16": F16}[name]
    codes = fmt.encode(v, "rne", saturate=False)
    return codes.view(_BF16 if name == "bfloat16" else np.float16)


def type_name(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.float32:
        return "float32"
    if dtype == np.float16:
        return "float16"
    if _BF16 is not None and dtype == _BF16:
        return "bfloat16"
    raise TypeError(dtype)


def round_int(v, rnd="rne"):
    """v (float64) rounded to an integer value: ties to even (rne) or away from zero (rna)."""
    v = np.asarray(v, dtype=np.float64)
    if rnd == "rne":
        return np.rint(v)
    fl = np.floor(np.abs(v))
    frac = np.abs(v) - fl
    return np.copysign(np.where(frac >= 0.5, fl + 1, fl), v)


def pack_rows(codes):
    """4-bit codes (one per byte, any integer dtype) packed two per byte along the last axis:
    element 2k in the low nibble, a row of odd length padded with a zero nibble."""
    c = np.asarray(codes).astype(np.int64) & 0xF
    if c.ndim == 0:
        c = c.reshape(1)
    k = c.shape[-1]
    if k % 2:
        c = np.concatenate([c, np.zeros(c.shape[:-1] + (1,), np.int64)], axis=-1)
    return (c[..., 0::2] | (c[..., 1::2] << 4)).astype(np.uint8)


def unpack_rows(packed, k):
    """The inverse of pack_rows: k codes per row (uint8, low 4 bits)."""
    p = np.asarray(packed).astype(np.uint8)
    out = np.empty(p.shape[:-1] + (2 * p.shape[-1],), np.uint8)
    out[..., 0::2] = p & 0xF
    out[..., 1::2] = p >> 4
    return out[..., :k]


# ---- MX (docs/quantization.md, "MX") -------------------------------------------------------------

# element -> (emax, mantissa bits for the `even` mode, largest magnitude)
MX_ELEMENTS = {
    "float8e4m3fn": (8, 3, 448.0),
    "float8e5m2": (15, 2, 57344.0),
    "float6e3m2fn": (4, 2, 28.0),
    "float6e2m3fn": (2, 3, 7.5),
    "float4e2m1": (2, 1, 6.0),
    # MXINT8: code = value x 64 in [-127, 127], so the largest element is 127/64 = 1.111111b:
    # six fraction bits. docs silent: the mantissa width `even` uses for MXINT8 (6 here) and
    # max_elem for `rceil` (127/64 here).
    "int8": (0, 6, 127.0 / 64.0),
}


def _blocks_last(xf, axis, block):
    """xf moved so the block axis is last and zero-padded to a multiple of block:
    (blocks [..., nb, block], original last length)."""
    xm = np.moveaxis(xf, axis, -1)
    d = xm.shape[-1]
    nb = -(-d // block)
    pad = nb * block - d
    if pad:
        xm = np.concatenate([xm, np.zeros(xm.shape[:-1] + (pad,), xm.dtype)], axis=-1)
    return xm.reshape(xm.shape[:-1] + (nb, block)), d


def mx_scale_bytes(amax, element, mode):
    """The e8m0 byte of each (finite) float32 amax under a scale mode (quantization.md, MX)."""
    emax, mbits, max_elem = MX_ELEMENTS[element]
    amax = f32(amax)
    if mode == "floor":
        u = expfield(amax) - 127 - emax
    elif mode == "ceil":
        u = expfield(amax) - 127 - emax + (mantfield(amax) != 0)
    elif mode == "even":
        b = (bits(amax).astype(np.uint64) + (1 << (22 - mbits))).astype(np.uint32)
        u = ((b >> 23) & 0xFF).astype(np.int64) - 127 - emax
    elif mode == "log2":
        with np.errstate(divide="ignore"):
            # a correctly rounded float32 log2, through float64 (a float64 log2 is within an
            # ulp of float64, far inside the float32 rounding): rounds up just below 2^k
            lg = np.log2(amax.astype(np.float64)).astype(np.float32)
        fl = np.floor(lg.astype(np.float64))
        fl = np.where(np.isneginf(fl), -100000.0, fl)
        u = fl.astype(np.int64) - emax
    elif mode == "rceil":
        d = f32(amax * f32(np.float32(1) / np.float32(max_elem)))
        e, m = expfield(d), mantfield(d)
        b = np.where(e > 0, e + (m != 0),  # normal d
                     np.where(d > np.float32(2.0 ** -127), 1, 0))  # subnormal or zero d
        # docs silent: a normal d above 2^127 (only MXINT8, max_elem < 2, reaches it) would give
        # 255 (the NaN byte); the oracle keeps finite blocks finite: at most 254
        return np.minimum(b, 254).astype(np.uint8)
    else:
        raise ValueError(mode)
    return (np.clip(u, -127, 127) + 127).astype(np.uint8)


def mx_quantize(x, element="float8e4m3fn", axis=-1, mode="floor", rnd="rne", block=32):
    """MX codes (x's shape; uint8 bit patterns, int8 for MXINT8) and e8m0 scale bytes (x's
    shape with the axis -> ceil(D / block)). Codes of a 0xFF block: NaN or 0 (not to be
    compared)."""
    xf = widen(x)
    axis = axis % xf.ndim
    blk, d = _blocks_last(xf, axis, block)
    finite = np.isfinite(blk).all(axis=-1)
    a = np.abs(blk)
    amax = np.where(finite, np.max(np.where(np.isfinite(a), a, 0), axis=-1), 0).astype(np.float32)
    b = mx_scale_bytes(amax, element, mode)
    b = np.where(finite, b, 255).astype(np.uint8)
    # elements: x * 2^(127 - b), exact (float64), one rounding
    bb = np.where(b == 255, 127, b).astype(np.float64)
    v = blk.astype(np.float64) * np.exp2(127.0 - bb)[..., None]
    v = np.where(np.isfinite(v), v, 0.0)
    if element == "int8":
        q = np.clip(round_int(v * 64.0, rnd), -127, 127).astype(np.int8)
        q = np.where(finite[..., None], q, 0).astype(np.int8)
    else:
        fmt = FLOATS[element]
        q = fmt.encode(v, rnd, saturate=True)
        q = np.where(finite[..., None], q, fmt.nan_code if fmt.nan_code is not None else 0)
        q = q.astype(np.uint8)
    q = q.reshape(q.shape[:-2] + (-1,))[..., :d]
    return np.moveaxis(q, -1, axis), np.moveaxis(b, -1, axis)


def mx_element_values(codes, element):
    if element == "int8":
        return np.asarray(codes).astype(np.int8).astype(np.float64) / 64.0
    return FLOATS[element].decode(codes)


def mx_dequantize(codes, scales, element="float8e4m3fn", axis=-1, block=32, to="float32"):
    """code x 2^(b - 127), exact, rounded once to `to`; b = 0xFF -> NaN."""
    v = mx_element_values(codes, element)
    axis = axis % v.ndim
    s = np.repeat(np.asarray(scales).astype(np.int64), block, axis=axis)
    s = np.take(s, np.arange(v.shape[axis]), axis=axis)
    y = v * np.exp2(s.astype(np.float64) - 127.0)
    y = np.where(s == 255, np.nan, y)
    return to_type(y, to)


# ---- NVFP4 (docs/quantization.md, "NVFP4") -------------------------------------------------------


def _e4m3_rne(v):
    return E4M3.encode(f32(v).astype(np.float64), "rne", saturate=False)


def _e2m1_rne_sat(v, nan_code=0):
    """docs silent on NaN elements except for modelopt (+6): 0 here, not compared."""
    return E2M1.encode(f32(v).astype(np.float64), "rne", saturate=True, nan_code=nan_code)


def _e4m3_val(c):
    return E4M3.decode(c).astype(np.float32)


def nvfp4_quantize(x, variant="modelopt", single_level=False):
    """NVFP4 codes (float4e2m1 bit patterns, x's shape), e4m3 scale bytes [..., K/16] and the
    global scale (float32 [1]: g for modelopt/torchao, gs = its reciprocal for ct; None single)."""
    xf = widen(x)
    k = xf.shape[-1]
    assert k % 16 == 0
    blk = xf.reshape(xf.shape[:-1] + (k // 16, 16))
    amax_b = np.max(np.abs(blk), axis=-1).astype(np.float32)
    amax_t = np.float32(np.max(np.abs(xf))) if xf.size else np.float32(0)
    one = np.float32(1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if variant == "modelopt":
            g = f32(amax_t / np.float32(2688))
            sb = f32(amax_b / f32(np.float32(6) * g))
            sb = np.maximum(sb, np.float32(2.0 ** -9))
            s = _e4m3_rne(sb)
            s = np.where(amax_b == 0, 0x38, s).astype(np.uint8)  # all-zero block: 1.0
            m = f32(_e4m3_val(s) * g)
            q = f32(blk / m[..., None])
            # NaN -> +6; -0 -> +0 (the sign is that of q < 0)
            codes = _e2m1_rne_sat(np.abs(q), nan_code=0x7)
            codes = np.where(q < 0, codes | 0x8, codes)
            codes = np.where(np.isnan(q), 0x7, codes).astype(np.uint8)
            gs = np.array([g], np.float32)
        elif variant == "torchao" and not single_level:
            g = f32(amax_t / np.float32(2688))
            sb = f32(f32(amax_b / np.float32(6)) / g)
            s = _e4m3_rne(np.clip(sb, np.float32(2.0 ** -6), np.float32(448)))
            m = f32(f32(one / g) / _e4m3_val(s))
            codes = _e2m1_rne_sat(f32(blk * m[..., None]))
            gs = np.array([g], np.float32)
        elif variant == "torchao":
            sb = f32(amax_b / np.float32(6))
            s = _e4m3_rne(np.clip(sb, np.float32(2.0 ** -6), np.float32(448)))
            m = f32(one / _e4m3_val(s))
            codes = _e2m1_rne_sat(f32(blk * m[..., None]))
            gs = None
        elif variant == "ct":
            gsv = f32(np.float32(2688) / amax_t)
            sb = f32(gsv * f32(amax_b / np.float32(6)))
            s = _e4m3_rne(np.clip(sb, np.float32(-448), np.float32(448)))
            s = np.where((s & 0x7F) == 0, 0x20, s).astype(np.uint8)  # a zero scale -> 0.125
            m = f32(_e4m3_val(s) / gsv)
            codes = _e2m1_rne_sat(f32(blk / m[..., None]))
            gs = np.array([gsv], np.float32)
        else:
            raise ValueError(variant)
    return codes.reshape(xf.shape).astype(np.uint8), np.asarray(s, np.uint8), gs


def nvfp4_dequantize(codes, scales, global_scale, variant="modelopt", to="float32"):
    v = E2M1.decode(codes).astype(np.float32)
    sv = _e4m3_val(scales)
    if global_scale is None:
        m = sv
    elif variant == "ct":
        m = f32(sv / np.float32(np.asarray(global_scale).reshape(-1)[0]))
    else:  # modelopt fl32(float(S) x g), torchao fl32(g x float(S)): the same product
        m = f32(sv * np.float32(np.asarray(global_scale).reshape(-1)[0]))
    y = f32(v.reshape(v.shape[:-1] + (-1, 16)) * m[..., None]).reshape(v.shape)
    return to_type(y, to)


# ---- block FP8 (docs/quantization.md, "Block FP8") -----------------------------------------------


def _tiles(shape, rows, cols):
    n, k = shape[-2], shape[-1]
    return -(-n // rows), -(-k // cols)


def _tile_amax(xf, rows, cols):
    """max |x| per rows x cols tile of the last two axes (edge tiles short)."""
    n, k = xf.shape[-2], xf.shape[-1]
    tn, tk = _tiles(xf.shape, rows, cols)
    a = np.abs(xf)
    pad = np.zeros(xf.shape[:-2] + (tn * rows, tk * cols), np.float32)
    pad[..., :n, :k] = a
    t = pad.reshape(xf.shape[:-2] + (tn, rows, tk, cols))
    return t.max(axis=(-3, -1)).astype(np.float32)


def _expand(s, rows, cols, n, k):
    return np.repeat(np.repeat(s, rows, axis=-2), cols, axis=-1)[..., :n, :k]


def fp8_block_quantize(x, variant="hf", block=None, ue8m0=False):
    """Block FP8 codes (e4m3 bit patterns, x's shape) and float32 scales (the dequantization
    multiplier) [..., ceil(N/rows), ceil(K/cols)]."""
    xf = widen(x)
    if xf.ndim == 1:
        raise ValueError("fp8-block needs 2 dimensions")
    rows, cols = block if block else ((128, 128) if variant == "hf" else (1, 128))
    n, k = xf.shape[-2], xf.shape[-1]
    amax = _tile_amax(xf, rows, cols)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if variant == "hf":
            qs = np.where(amax == 0, np.float32(1), f32(np.float32(448) / amax)).astype(np.float32)
            qx = f32(xf * _expand(qs, rows, cols, n, k))
            codes = E4M3.encode(np.clip(qx, np.float32(-448), np.float32(448)).astype(np.float64),
                                "rne", saturate=False)
            s = f32(np.float32(1) / qs)
        elif variant == "deepseek-act":
            amax = np.maximum(amax, np.float32(1e-4))
            s = f32(amax / np.float32(448))
            if ue8m0:  # up to a power of two (s is normal: >= 1e-4 / 448)
                e, m = expfield(s), mantfield(s)
                s = from_bits(((e + (m != 0)) << 23).astype(np.uint32)).reshape(s.shape)
            qx = f32(xf / _expand(s, rows, cols, n, k))
            codes = E4M3.encode(qx.astype(np.float64), "rne", saturate=True)
        else:
            raise ValueError(variant)
    return codes.astype(np.uint8), s.astype(np.float32)


def fp8_block_dequantize(codes, scales, block=(128, 128), to="bfloat16"):
    """to(fl32(float32(q) x s)) per tile."""
    v = E4M3.decode(codes).astype(np.float32)
    rows, cols = block
    n, k = v.shape[-2], v.shape[-1]
    y = f32(v * _expand(np.asarray(scales, np.float32), rows, cols, n, k))
    return to_type(y, to)


# ---- absmax (docs/quantization.md, "Absmax") -----------------------------------------------------

ABSMAX = {  # element -> (divisor c = (qmax - qmin) / 2, qmin, qmax)
    "int8": (127.5, -128, 127),
    "int4": (7.5, -8, 7),
    "float8e4m3fn": (448.0, -448.0, 448.0),
    "float4e2m1": (6.0, -6.0, 6.0),
}
_EPS = {"float32": 2.0 ** -23, "bfloat16": 2.0 ** -7, "float16": 2.0 ** -10}


def _in_type(v32, name):
    """float32 values rounded to the dtype `name`, back as float32 (exact)."""
    if name == "float32":
        return f32(v32)
    return widen(to_type(f32(v32), name))


def absmax_quantize(x, element="int8", granularity="channel", group=128, scale_type=None):
    """Symmetric absmax (variant ct). granularity: "tensor" (scales [1]), "channel" ([..., N, 1])
    or "group" ([..., N, ceil(K / group)]). scale_type: "float32" or None = x's type. Codes:
    int8 values for int8/int4, bit patterns for float8e4m3fn/float4e2m1. Scales in the scale
    type's dtype."""
    xf = widen(x)
    st = scale_type or type_name(np.asarray(x).dtype)
    c, qmin, qmax = ABSMAX[element]
    k = xf.shape[-1]
    if granularity == "tensor":
        amax = np.array([np.max(np.abs(xf))], np.float32)
        g = None
    elif granularity == "channel":
        amax = np.max(np.abs(xf), axis=-1, keepdims=True).astype(np.float32)
        g = k
    else:
        g = group
        nb = -(-k // g)
        pad = np.zeros(xf.shape[:-1] + (nb * g,), np.float32)
        pad[..., :k] = np.abs(xf)
        amax = pad.reshape(xf.shape[:-1] + (nb, g)).max(axis=-1).astype(np.float32)
    # scale = to_dtype(amax / c); a zero scale -> the dtype's eps
    s = _in_type(f32(amax / np.float32(c)), st)
    s = np.where(s == 0, np.float32(_EPS[st]), s).astype(np.float32)
    if granularity == "tensor":
        se = np.broadcast_to(s.reshape(()), xf.shape)
    else:
        se = np.repeat(s, g, axis=-1)[..., :k]
    with np.errstate(divide="ignore", invalid="ignore"):
        q = _in_type(f32(xf / se), st)  # the division in the scale's dtype
    q = np.clip(q, np.float32(qmin), np.float32(qmax))
    if element in ("int8", "int4"):
        codes = np.rint(q.astype(np.float64)).astype(np.int8)
    elif element == "float8e4m3fn":
        codes = E4M3.encode(q.astype(np.float64), "rne", saturate=True)
    else:  # docs silent on NaN (no float4 NaN): 0 here, not compared
        codes = E2M1.encode(q.astype(np.float64), "rne", saturate=True, nan_code=0)
    return codes, to_type(s, st)


def absmax_dequantize(codes, scales, element="int8", granularity="channel", group=128,
                      to="float32"):
    """docs silent on the dequantization of absmax: the oracle computes fl32(q x s), rounds it
    to the scale's type (the product in that dtype), then to `to`."""
    if element in ("int8", "int4"):
        v = np.asarray(codes).astype(np.float32)
    elif element == "float8e4m3fn":
        v = E4M3.decode(codes).astype(np.float32)
    else:
        v = E2M1.decode(codes).astype(np.float32)
    st = type_name(np.asarray(scales).dtype)
    s = widen(scales)
    k = v.shape[-1]
    if granularity == "tensor":
        se = np.broadcast_to(s.reshape(()), v.shape)
    else:
        g = k if granularity == "channel" else group
        se = np.repeat(s, g, axis=-1)[..., :k]
    y = _in_type(f32(v * se), st)
    return to_type(y, to)
