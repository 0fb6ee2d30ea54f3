"""dtcast.quantize and dtcast.dequantize: the scaled quantization schemes (docs/quantization.md).

    >>> q = dtcast.quantize(np.float32([[0.1, -3, 500, 7]] * 8).reshape(1, 32), "mxfp8")
    >>> q.scales.dtype, q.codes.dtype, q.global_scale
    (dtype(float8_e8m0fnu), dtype(float8_e4m3fn), None)
    >>> dtcast.dequantize(q.codes, q.scales, "mxfp8")

A scheme is a recipe name (``"mxfp8"``, ``"mxfp8-e5m2"``, ``"mxfp6-e2m3"``, ``"mxfp6-e3m2"``,
``"mxfp4"``, ``"mxint8"``, ``"nvfp4"``, ``"fp8-block"``, ``"fp8-channel"``, ``"fp8-tensor"``,
``"int8-channel"``, ``"int8-tensor"``, ``"int4-group"``, ``"fp4-group"``) or a scheme name
(``"mx"``, ``"nvfp4"``, ``"fp8-block"``, ``"absmax"``) with the element type in ``element=``.
Every intermediate of each variant is pinned by the library (the detail in
docs/quantization.md); this module only moves arrays and lays the codes out as ml_dtypes does.
"""

from collections import namedtuple

import numpy as np

from . import _core
from ._cast import as_array
from ._errors import Error, Status
from ._types import lookup, of_dtype

__all__ = ["quantize", "dequantize", "Quantized"]

Quantized = namedtuple("Quantized", ["codes", "scales", "global_scale"])
Quantized.__doc__ = """What dtcast.quantize returns: ``codes`` (the element type's dtype, x's
shape; uint8 rows with packed=True), ``scales`` (float8_e8m0fnu for MX, float8_e4m3fn for NVFP4,
float32 for block FP8, the scale type for absmax) and ``global_scale`` (float32 [1], or None
where the scheme has none)."""

_ROUND = {"default": 0, "rne": 1, "nearest_even": 1, "rna": 2, "round": 2, "nearest_away": 2,
          "stochastic": 7}
# flags of the parameters tuple (python/ext/quant.c)
_PER_TENSOR, _SINGLE_LEVEL, _UE8M0, _REJECT_SHORT, _FLOAT6_PACKED = 1, 2, 4, 8, 16
_INPUTS = ("float32", "bfloat16", "float16", "float64")


def _params(scheme, *, axis=-1, variant=None, scale_mode=None, round="rne", seed=None,
            block=None, element=None, scale_dtype=None, per_tensor=False, single_level=False,
            ue8m0=False, reject_short=False, float6_packed=False, threads=0):
    if not isinstance(scheme, str):
        raise Error(f"scheme must be a name, not {scheme!r}", Status.INVALID_ARGUMENT)
    try:
        rnd = _ROUND[round.lower() if isinstance(round, str) else round]
    except (KeyError, AttributeError):
        raise Error(f"unknown rounding {round!r} for quantize (rne, rna or stochastic)",
                    Status.INVALID_ARGUMENT) from None
    if seed is not None and rnd != 7:
        raise Error("seed= is for round='stochastic'", Status.INVALID_ARGUMENT)
    if isinstance(seed, bool) or (seed is not None and (
            not isinstance(seed, (int, np.integer)) or not 0 <= seed < 1 << 64)):
        raise Error(f"seed must be an integer in [0, 2**64), not {seed!r}", Status.INVALID_ARGUMENT)
    rows = cols = -1
    if block is not None:
        if isinstance(block, (tuple, list)):
            if len(block) != 2:
                raise Error(f"block must be an int or (rows, cols), not {block!r}",
                            Status.INVALID_ARGUMENT)
            rows, cols = (int(b) for b in block)
        else:
            cols = int(block)
        if rows < -1 or cols < 0 or (rows == 0 and cols) or (cols == 0 and rows > 0):
            raise Error(f"block sizes must be positive, not {block!r}", Status.INVALID_ARGUMENT)
    if not isinstance(threads, (int, np.integer)) or threads < 0:
        raise Error(f"threads must be an integer >= 0, not {threads!r}", Status.INVALID_ARGUMENT)
    flags = ((_PER_TENSOR if per_tensor else 0) | (_SINGLE_LEVEL if single_level else 0)
             | (_UE8M0 if ue8m0 else 0) | (_REJECT_SHORT if reject_short else 0)
             | (_FLOAT6_PACKED if float6_packed else 0))
    return (scheme, variant, lookup(element).code if element is not None else 0,
            lookup(scale_dtype).code if scale_dtype is not None else 0, scale_mode, rnd,
            int(seed or 0), int(axis), cols, rows, flags, int(threads))


def _input(x):
    arr = as_array(x)
    t = of_dtype(arr.dtype)
    if t is None or t.name not in _INPUTS:
        raise Error(f"quantize takes float32, bfloat16, float16 or float64 arrays, not {arr.dtype}",
                    Status.UNSUPPORTED)
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return np.ascontiguousarray(arr), t


def _rows(shape):
    """(rows, length of a row) of a shape's last axis (one row for 0-dimensional)."""
    if not shape:
        return 1, 1
    k = int(shape[-1])
    return (int(np.prod(shape[:-1], dtype=np.int64)) if len(shape) > 1 else 1), k


def _unpack4(raw, shape, signed):
    """Packed-per-row 4-bit codes -> one per byte (int4: sign-extended, as ml_dtypes holds it)."""
    rows, k = _rows(shape)
    p = raw.reshape(rows, -1) if rows else raw.reshape(0, (k + 1) // 2)
    out = np.empty((rows, 2 * p.shape[1]), np.uint8)
    out[:, 0::2] = p & 0xF
    out[:, 1::2] = p >> 4
    out = out[:, :k]
    if signed:
        out = ((out.astype(np.int16) ^ 8) - 8).astype(np.int8).view(np.uint8)
    return out.reshape(shape)


def _pack4(codes):
    """One-per-byte 4-bit codes -> packed per row (low nibble first, odd rows padded)."""
    c = np.ascontiguousarray(codes).view(np.uint8) & 0xF
    if c.ndim == 0:
        c = c.reshape(1)
    if c.shape[-1] % 2:
        c = np.concatenate([c, np.zeros(c.shape[:-1] + (1,), np.uint8)], axis=-1)
    return np.ascontiguousarray(c[..., 0::2] | (c[..., 1::2] << 4))


def _block(variant, block):
    """block as _params takes it: the deepseek-act variant's own 1 x 128 tiles unless given
    (the fp8-block recipe names 128 x 128, the hf variant's)."""
    if block is None and isinstance(variant, str) and variant.lower() == "deepseek-act":
        return (0, 0)
    return block


def quantize(x, scheme, *, axis=-1, variant=None, scale_mode=None, round="rne", seed=None,
             packed=False, block=None, element=None, scale_dtype=None, per_tensor=False,
             single_level=False, ue8m0=False, reject_short=False, threads=0):
    """Quantizes x (float32, bfloat16, float16 or float64; numpy, ml_dtypes or torch CPU) with
    a scaled scheme; returns ``Quantized(codes, scales, global_scale)``.

    scheme: a recipe (``"mxfp8"``, ``"mxfp4"``, ``"nvfp4"``, ``"fp8-block"``,
    ``"int8-channel"``, ...) or a scheme (``"mx"``, ``"nvfp4"``, ``"fp8-block"``, ``"absmax"``)
    with ``element=`` the code type. axis: MX's block axis. variant: ``"ocp"`` (MX),
    ``"modelopt"`` / ``"torchao"`` / ``"ct"`` (NVFP4), ``"hf"`` / ``"deepseek-act"`` (block FP8),
    ``"ct"`` (absmax). scale_mode (MX): ``"floor"`` (default), ``"ceil"``, ``"even"``,
    ``"rceil"``, ``"log2"``. round: ``"rne"``, ``"rna"`` (MX) or ``"stochastic"`` with ``seed``.
    block: elements per block (MX, absmax groups) or ``(rows, cols)`` tiles (block FP8).
    packed: 4-bit codes two per byte along the last axis (uint8, first element in the low
    nibble), float6 codes four in three bytes per row, instead of one per byte.
    scale_dtype (absmax): float32 or, by default, x's type. per_tensor (absmax),
    single_level (NVFP4 torchao), ue8m0 (block FP8 deepseek-act), reject_short (MX: a short
    last block is an error instead of zero-padded)."""
    arr, t = _input(x)
    kw = dict(axis=axis, variant=variant, scale_mode=scale_mode, round=round, seed=seed,
              block=_block(variant, block), element=element, scale_dtype=scale_dtype,
              per_tensor=per_tensor, single_level=single_level, ue8m0=ue8m0,
              reject_short=reject_short, threads=threads)
    params = _params(scheme, **kw)
    layout = _core.quant_layout(t.code, arr.shape, params)
    if packed and lookup(layout[0][0]).bits == 6:  # float6 codes four in three bytes a row
        params = _params(scheme, float6_packed=True, **kw)
        layout = _core.quant_layout(t.code, arr.shape, params)
    (ct, cshape, cbytes), (st, sshape, sbytes), (gt, gshape, gbytes) = layout
    ctype, stype = lookup(ct), lookup(st)
    raw = np.empty(cbytes, np.uint8)
    scales = np.empty(sshape, stype.dtype)
    if scales.nbytes != sbytes:
        raise Error(f"scales of {sbytes} bytes do not fit shape {sshape} of {stype.name}",
                    Status.INVALID_ARGUMENT)
    gs = np.empty(gshape if gshape else (1,), np.float32) if gt else None
    _core.quantize(arr, t.code, arr.shape, params, raw, scales, gs)
    if ctype.bits == 4:
        if packed:
            rows, k = _rows(cshape)
            codes = raw.reshape(tuple(cshape[:-1]) + (-1,)) if rows else \
                raw.reshape(tuple(cshape[:-1]) + ((k + 1) // 2,))
        else:
            codes = _unpack4(raw, tuple(cshape), ctype.kind == "signed").view(ctype.dtype)
    elif ctype.bits == 6 and packed:
        rows, _ = _rows(cshape)
        codes = raw.reshape(tuple(cshape[:-1]) + (cbytes // rows if rows else 0,))
    else:
        codes = raw.view(ctype.dtype).reshape(cshape)
    return Quantized(codes, scales, gs)


def dequantize(codes, scales, scheme, *, axis=-1, variant=None, global_scale=None,
               to="float32", block=None, shape=None, per_tensor=False, single_level=False,
               ue8m0=False, threads=0):
    """The inverse of :func:`quantize`: the values ``codes x scales`` of the scheme, rounded
    once into ``to`` (float32, bfloat16, float16 or float64), as an array of codes' shape.

    codes: as quantize returns them (the element type's dtype), or uint8 packed rows (then the
    element type is the recipe's, and ``shape`` the logical shape when the last axis is odd).
    scales: their dtype, or uint8 bytes (MX's e8m0 and NVFP4's e4m3 scales as checkpoints store
    them). global_scale: NVFP4's float32 per-tensor scale (a number or a [1] array).
    per_tensor: one absmax scale for the whole tensor (also taken from scales of shape [1])."""
    c = as_array(codes)
    s = np.ascontiguousarray(as_array(scales))
    out_t = lookup(to)
    if out_t.name not in _INPUTS:
        raise Error(f"dequantize writes float32, bfloat16, float16 or float64, not {out_t.name}",
                    Status.UNSUPPORTED)
    ctype = of_dtype(c.dtype)
    packed = c.dtype == np.uint8
    element = None if packed or ctype is None else ctype.name
    float6_packed = False
    block = _block(variant, block)
    params = _params(scheme, axis=axis, variant=variant, block=block, element=element,
                     single_level=single_level, ue8m0=ue8m0, threads=threads)
    if packed:  # the element type is the recipe's: ask the layout of a float32 tensor
        probe = tuple(c.shape[:-1]) + (32,) if c.ndim else (32,)
        try:
            (pt, _, _), _, _ = _core.quant_layout(lookup("float32").code, probe, params)
        except Error:
            pt = None
        if pt is None:
            raise Error("uint8 codes: the scheme's element type is not known; pass codes of the "
                        "element's dtype", Status.INVALID_ARGUMENT)
        ctype = lookup(pt)
        if shape is None:
            k = c.shape[-1] * 2 if ctype.bits == 4 else (c.shape[-1] * 8 // 6 if ctype.bits == 6
                                                          else c.shape[-1])
            shape = tuple(c.shape[:-1]) + (k,)
        float6_packed = ctype.bits == 6
        params = _params(scheme, axis=axis, variant=variant, block=block, element=ctype.name,
                         single_level=single_level, ue8m0=ue8m0, float6_packed=float6_packed,
                         threads=threads)
        shape = tuple(int(d) for d in shape)
        data = np.ascontiguousarray(c)
    else:
        if ctype is None:
            raise Error(f"codes of dtype {c.dtype} (give the element type's dtype or uint8)",
                        Status.INVALID_ARGUMENT)
        shape = tuple(c.shape)
        data = _pack4(c) if ctype.bits == 4 else np.ascontiguousarray(c)
    # the scales' type: theirs, or the scheme's for raw bytes
    (_, _, _), (lst, lss, _), _ = _core.quant_layout(lookup("float32").code, shape, params)
    if per_tensor or (tuple(lss) != tuple(s.shape) and s.shape == (1,)):
        kw = dict(axis=axis, variant=variant, block=block, element=ctype.name,
                  single_level=single_level, ue8m0=ue8m0, float6_packed=float6_packed,
                  threads=threads)
        params = _params(scheme, per_tensor=True, **kw)  # one scale for the tensor (absmax)
    stype = lookup(lst) if s.dtype == np.uint8 else of_dtype(s.dtype)
    if stype is None:
        raise Error(f"scales of dtype {s.dtype}", Status.INVALID_ARGUMENT)
    gs = None
    if global_scale is not None:
        gs = np.ascontiguousarray(np.asarray(as_array(global_scale), np.float32).reshape(-1))
        if gs.size != 1:
            raise Error(f"global_scale must hold one float32, not {gs.size}",
                        Status.INVALID_ARGUMENT)
    y = np.empty(shape, out_t.dtype)
    _core.dequantize(y, out_t.code, data, ctype.code, shape, s, stype.code, s.shape, gs, params)
    return y
