"""dtcast.quantize / dtcast.dequantize against tests/quant_oracle.py, an oracle written from the
specification's text alone (docs/quantization.md): every scheme and variant, bit for bit, on random
tensors and on the edge cases the specification names (all-zero blocks, subnormal amax, amax just
below a power of two, NaN/Inf blocks, ties at every rounding boundary, short blocks and edge
tiles, -0). Plus torchao's to_mx / NVFP4 and torch's float8 casts where they are installed."""

import os
import sys

import ml_dtypes
import numpy as np
import pytest

import dtcast

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
import quant_oracle as O  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)
RNG = np.random.default_rng(20261115)


def _same(name, got, want, x=None, skip=None):
    """Asserts got == want byte for byte (NaN == NaN for float outputs), naming the first
    differences with the input there."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
    if got.dtype.kind == "f" or got.dtype in (BF16,) or want.dtype.kind == "f" or \
            want.dtype == BF16:
        g, w = got.astype(np.float64), want.astype(np.float64)
        diff = ~((g == w) & (np.signbit(g) == np.signbit(w)) | (np.isnan(g) & np.isnan(w)))
    else:
        diff = got.view(np.uint8) != want.astype(got.dtype).view(np.uint8) \
            if got.dtype.itemsize == 1 else got != want
    if skip is not None:
        diff &= ~skip
    if diff.any():
        idx = np.argwhere(diff)[:6]
        lines = []
        for i in idx:
            t = tuple(i)
            xi = "" if x is None or x.shape != got.shape else f" x={np.asarray(x)[t]!r}"
            gi = got[t].view(np.uint8) if got.dtype.itemsize == 1 else got[t]
            wi = want[t].view(np.uint8) if want.dtype.itemsize == 1 else want[t]
            lines.append(f"  at {t}:{xi} got {gi!r} want {wi!r}")
        pytest.fail(f"{name}: {int(diff.sum())} of {diff.size} differ\n" + "\n".join(lines))


def _codes_u8(codes):
    return np.asarray(codes).view(np.uint8)


def _random(shape, dtype=np.float32, spread=20, rng=RNG):
    """Normal values times 2^k, k random per row (scale bytes of every size), with zeros, -0
    and values snapped to short mantissas (ties)."""
    x = rng.standard_normal(shape).astype(np.float64)
    k = rng.integers(-spread, spread + 1, size=shape[:-1] + (1,)) if len(shape) > 1 else 0
    x = x * np.exp2(k)
    m = rng.random(shape)
    x = np.where(m < 0.03, 0.0, x)
    x = np.where((m > 0.03) & (m < 0.05), -0.0, x)
    short = (m > 0.5) & (m < 0.8)  # 4-6 significant bits: ties for every element type
    e = np.floor(np.log2(np.abs(np.where(x == 0, 1, x))))
    x = np.where(short, np.round(x / np.exp2(e - 5)) * np.exp2(e - 5), x)
    x = x.astype(np.float32)
    if dtype == BF16:
        return O.to_type(x, "bfloat16")
    return x.astype(dtype)


def _torch_available():
    try:
        import torch  # noqa: F401

        return True
    except ImportError:
        return False


# ---- MX ------------------------------------------------------------------------------------------

MX_ELEMENTS = list(O.MX_ELEMENTS)
MX_MODES = ["floor", "ceil", "even", "rceil", "log2"]
MX_RECIPES = {"float8e4m3fn": "mxfp8", "float8e5m2": "mxfp8-e5m2", "float6e3m2fn": "mxfp6-e3m2",
              "float6e2m3fn": "mxfp6-e2m3", "float4e2m1": "mxfp4", "int8": "mxint8"}
CODE_DTYPES = {"float8e4m3fn": ml_dtypes.float8_e4m3fn, "float8e5m2": ml_dtypes.float8_e5m2,
               "float6e3m2fn": ml_dtypes.float6_e3m2fn, "float6e2m3fn": ml_dtypes.float6_e2m3fn,
               "float4e2m1": ml_dtypes.float4_e2m1fn, "int8": np.int8}


def _mx_check(x, element, mode="floor", rnd="rne", axis=-1, block=32, recipe=True, name=""):
    kw = dict(axis=axis, scale_mode=mode, round=rnd)
    if block != 32:
        kw["block"] = block
    if recipe:
        q = dtcast.quantize(x, MX_RECIPES[element], **kw)
    else:
        q = dtcast.quantize(x, "mx", element=element, **kw)
    codes, scales = O.mx_quantize(x, element, axis=axis, mode=mode, rnd=rnd, block=block)
    assert q.global_scale is None
    assert q.scales.dtype == np.dtype(ml_dtypes.float8_e8m0fnu)
    assert q.codes.dtype == np.dtype(CODE_DTYPES[element])
    tag = f"mx {element} {mode} {rnd} axis={axis} {x.dtype} {x.shape}{name}"
    _same(tag + " scales", q.scales.view(np.uint8), scales)
    # elements of a 0xFF block: dtcast's choice, no reference agrees (quantization.md, MX): not compared
    bad = np.repeat(scales == 255, block, axis=axis % x.ndim)
    bad = np.take(bad, np.arange(x.shape[axis]), axis=axis % x.ndim)
    _same(tag + " codes", _codes_u8(q.codes), codes.view(np.uint8), x, skip=bad)
    return q, codes, scales


@pytest.mark.parametrize("element", MX_ELEMENTS)
@pytest.mark.parametrize("mode", MX_MODES)
def test_mx_random(element, mode):
    for shape, axis, dtype in [((6, 96), -1, np.float32), ((5, 50), -1, BF16),
                               ((70, 5), 0, np.float32), ((2, 45, 3), 1, np.float16),
                               ((33,), 0, np.float32)]:
        x = _random(shape, dtype)
        _mx_check(x, element, mode, axis=axis)


@pytest.mark.parametrize("element", MX_ELEMENTS)
def test_mx_rna_and_scheme_name(element):
    x = _random((8, 64), BF16)
    _mx_check(x, element, "floor", "rna")
    _mx_check(x, element, "rceil", "rna", recipe=False)


def _edge_blocks(element):
    """Blocks of 32 (rows) exercising the MX edge cases of docs/quantization.md, one element type."""
    emax, _, max_elem = O.MX_ELEMENTS[element]
    rows = []

    def row(vals):
        r = np.zeros(32, np.float64)
        r[:len(vals)] = vals
        rows.append(r)

    row([])  # all zero
    row([-0.0] * 5)  # -0 only
    tiny = np.float32(2.0 ** -149)
    row([tiny, -tiny, 3 * tiny])  # subnormal amax
    row([2.0 ** -130, 2.0 ** -127 * 0.75, -(2.0 ** -140)])
    row([float(np.float32(2.0 ** -126) - tiny)])  # the largest subnormal
    for k in (-126, -100, -10, -2, -1, 0, 1, 2, 3, 8, 9, 15, 100, 127):
        below = float(np.nextafter(np.float32(2.0 ** k), np.float32(0)))
        row([below, below / 3, -below / 7])  # just below a power of two
        row([2.0 ** k, -(2.0 ** k) / 5])
    for v in (6, 7, 7.5, 28, 30, 448, 464, 480, 511.99, 57344, 61440, 1.984375, 2.0):
        row([v, -v / 2, v / 3])
        row([-v, v * 0.999])
    fmax = float(np.finfo(np.float32).max)
    row([fmax, -fmax, 1.0])
    row([np.nan, 1.0, 2.0])
    row([1.0, np.inf])
    row([-np.inf, 0.0])
    # ties at every rounding boundary: amax = max_elem gives scale 2^0 under floor, so the
    # midpoints of the element grid arrive unscaled (and scaled by powers of two otherwise)
    if element == "int8":
        mids = (np.arange(-127, 127) + 0.5) / 64.0
    else:
        t = O.FLOATS[element].table
        mids = (t[:-1] + t[1:]) / 2
        mids = np.concatenate([mids, -mids, [t[-1] + (t[-1] - t[-2]) / 2]])  # + the one past max
    for i in range(0, len(mids), 30):
        chunk = mids[i:i + 30]
        row(np.concatenate([[max_elem], chunk]))
        row(np.concatenate([[-max_elem], -chunk * 2.0 ** -20]))
    return np.array(rows, np.float64).astype(np.float32)


@pytest.mark.parametrize("element", MX_ELEMENTS)
@pytest.mark.parametrize("mode", MX_MODES)
@pytest.mark.parametrize("rnd", ["rne", "rna"])
def test_mx_edge_cases(element, mode, rnd):
    x = _edge_blocks(element)
    _mx_check(x, element, mode, rnd)
    # the same blocks along axis 0, and with a short last block (29 of 32)
    _mx_check(np.ascontiguousarray(x.T), element, mode, rnd, axis=0)
    _mx_check(np.ascontiguousarray(x[:, :29]), element, mode, rnd, name=" short")


@pytest.mark.parametrize("element", MX_ELEMENTS)
def test_mx_dequantize(element):
    x = np.concatenate([_random((6, 64)), _edge_blocks(element)[:, :64 - 32].repeat(2, axis=1)])
    x = np.ascontiguousarray(x)
    for mode in ("floor", "rceil"):
        q = dtcast.quantize(x, MX_RECIPES[element], scale_mode=mode)
        codes, scales = O.mx_quantize(x, element, mode=mode)
        for to in ("float32", "bfloat16", "float16"):
            want = O.mx_dequantize(_codes_u8(q.codes) if element != "int8" else q.codes.view(np.int8),
                                   q.scales.view(np.uint8), element, to=to)
            got = dtcast.dequantize(q.codes, q.scales, MX_RECIPES[element], to=to)
            _same(f"mx dequantize {element} {mode} -> {to}", got, want)
            got2 = dtcast.dequantize(q.codes, q.scales.view(np.uint8), "mx", to=to)
            _same(f"mx dequantize {element} (uint8 scales, scheme mx) -> {to}", got2, want)


def test_mx_dequantize_axis0_short():
    x = _random((45, 3), np.float32)
    for element in ("float4e2m1", "float8e5m2", "int8"):
        q = dtcast.quantize(x, MX_RECIPES[element], axis=0)
        want = O.mx_dequantize(_codes_u8(q.codes) if element != "int8" else q.codes.view(np.int8),
                               q.scales.view(np.uint8), element, axis=0)
        _same(f"mx dequantize axis 0 {element}", dtcast.dequantize(q.codes, q.scales,
                                                                   MX_RECIPES[element], axis=0),
              want)


def test_mx_reject_short():
    x = _random((2, 40))
    with pytest.raises(dtcast.Error):
        dtcast.quantize(x, "mxfp8", reject_short=True)
    dtcast.quantize(x[:, :32].copy(), "mxfp8", reject_short=True)


@pytest.mark.parametrize("element", ["float4e2m1", "float6e2m3fn", "float6e3m2fn"])
def test_packed_codes(element):
    x = _random((5, 64))
    q = dtcast.quantize(x, MX_RECIPES[element])
    p = dtcast.quantize(x, MX_RECIPES[element], packed=True)
    codes = _codes_u8(q.codes)
    if element == "float4e2m1":
        _same("mxfp4 packed", p.codes, O.pack_rows(codes))
        assert p.codes.dtype == np.uint8 and p.codes.shape == (5, 32)
    else:  # four codes in three bytes per row, LSB first (docs/formats.md's stream)
        want = np.zeros((5, 48), np.uint8)
        for r in range(5):
            acc = 0
            for i, c in enumerate(codes[r]):
                acc |= int(c) << (6 * i)
            want[r] = np.frombuffer(acc.to_bytes(48, "little"), np.uint8)
        _same(f"{element} packed", p.codes, want)
    _same("packed scales", p.scales.view(np.uint8), q.scales.view(np.uint8))
    y1 = dtcast.dequantize(q.codes, q.scales, MX_RECIPES[element])
    y2 = dtcast.dequantize(p.codes, p.scales, MX_RECIPES[element])
    _same("dequantize of packed codes", y2, y1)


def test_odd_rows_packed():
    x = _random((3, 33))
    q = dtcast.quantize(x, "mxfp4")
    p = dtcast.quantize(x, "mxfp4", packed=True)
    assert p.codes.shape == (3, 17)
    _same("odd row packed", p.codes, O.pack_rows(_codes_u8(q.codes)))
    y = dtcast.dequantize(p.codes, p.scales, "mxfp4", shape=(3, 33))
    _same("odd row dequantize", y, dtcast.dequantize(q.codes, q.scales, "mxfp4"))


# ---- NVFP4 ---------------------------------------------------------------------------------------

NV_VARIANTS = [("modelopt", False), ("torchao", False), ("torchao", True), ("ct", False)]


def _nv_check(x, variant, single, name=""):
    q = dtcast.quantize(x, "nvfp4", variant=variant, single_level=single)
    codes, scales, gs = O.nvfp4_quantize(x, variant, single)
    tag = f"nvfp4 {variant}{' single' if single else ''} {x.dtype} {x.shape}{name}"
    assert q.codes.dtype == np.dtype(ml_dtypes.float4_e2m1fn)
    assert q.scales.dtype == np.dtype(ml_dtypes.float8_e4m3fn)
    if gs is None:
        assert q.global_scale is None, tag
    else:
        assert q.global_scale is not None and q.global_scale.shape == (1,), tag
        _same(tag + " global scale", q.global_scale.view(np.uint32), gs.view(np.uint32))
    _same(tag + " scales", q.scales.view(np.uint8), scales)
    _same(tag + " codes", _codes_u8(q.codes), codes, x)
    return q


def _nv_edge(variant):
    """Rows of 16-element blocks: the tensor amax block, all-zero blocks, tiny blocks (scale
    underflow to e4m3 subnormals), ties at every fp4 boundary once scaled by 1, -0."""
    rows = []
    mids = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0]
    # amax_t = 2688 = 448 x 6 makes g = 1 (gs = 1); a block of amax 6 then has S = 1.0
    rows.append([2688.0, -1000.0, 3.0] + [0.0] * 13)
    rows.append([6.0] + mids + [-m for m in mids] + [-0.0])
    rows.append([0.0] * 16)
    rows.append([-0.0] * 16)
    rows.append([6.0, 0.1, -0.1, 0.2, -0.24, 0.26, 1e-30, -1e-30] + [0.0] * 8)
    rows.append([1e-3, 2e-3, -5e-4] + [0.0] * 13)
    rows.append([1e-6, -1e-7] + [0.0] * 14)
    rows.append([float(np.nextafter(np.float32(2), np.float32(0)))] * 4 + [1.0] * 12)
    rows.append([7.0, 6.5, 6.25, -7.0, -5.5, 4.5] + [0.0] * 10)
    rows.append([448.0 * 6, 448.0 * 5.9, 448.0] + [1.0] * 13)
    return np.array(rows, np.float32)


@pytest.mark.parametrize("variant,single", NV_VARIANTS)
def test_nvfp4_random(variant, single):
    for shape, dtype in [((8, 64), np.float32), ((3, 2, 32), BF16), ((4, 48), np.float16)]:
        _nv_check(_random(shape, dtype, spread=6), variant, single)


@pytest.mark.parametrize("variant,single", NV_VARIANTS)
def test_nvfp4_edge_cases(variant, single):
    x = _nv_edge(variant)
    _nv_check(x, variant, single)
    _nv_check(x.reshape(5, 32), variant, single, " 2 blocks a row")


@pytest.mark.parametrize("variant,single", NV_VARIANTS)
def test_nvfp4_dequantize(variant, single):
    x = np.concatenate([_random((6, 32), spread=6), _nv_edge(variant).reshape(5, 32)])
    q = dtcast.quantize(x, "nvfp4", variant=variant, single_level=single)
    for to in ("float32", "bfloat16", "float16"):
        want = O.nvfp4_dequantize(_codes_u8(q.codes), q.scales.view(np.uint8), q.global_scale,
                                  variant, to=to)
        got = dtcast.dequantize(q.codes, q.scales, "nvfp4", variant=variant,
                                global_scale=q.global_scale, single_level=single, to=to)
        _same(f"nvfp4 {variant} dequantize -> {to}", got, want)
    packed = dtcast.quantize(x, "nvfp4", variant=variant, single_level=single, packed=True)
    _same("nvfp4 packed", packed.codes, O.pack_rows(_codes_u8(q.codes)))


def test_nvfp4_needs_multiple_of_16():
    with pytest.raises(dtcast.Error):
        dtcast.quantize(np.ones((2, 20), np.float32), "nvfp4")


# ---- block FP8 -----------------------------------------------------------------------------------


def _fp8_check(x, variant="hf", block=None, ue8m0=False, name=""):
    kw = {}
    if block:
        kw["block"] = block
    q = dtcast.quantize(x, "fp8-block", variant=variant, ue8m0=ue8m0, **kw)
    codes, scales = O.fp8_block_quantize(x, variant, block, ue8m0)
    tag = f"fp8-block {variant}{' ue8m0' if ue8m0 else ''} {block} {x.dtype} {x.shape}{name}"
    assert q.codes.dtype == np.dtype(ml_dtypes.float8_e4m3fn)
    assert q.scales.dtype == np.float32 and q.global_scale is None
    _same(tag + " scales", q.scales.view(np.uint32), scales.view(np.uint32))
    _same(tag + " codes", _codes_u8(q.codes), codes, x)
    return q


def _fp8_data(shape, dtype=np.float32):
    x = _random(shape, np.float32, spread=3)
    # per-tile magnitudes differ by powers of two; some tiles all zero; ties of e4m3 ( snapped)
    x[..., :64, :64] = 0
    x[..., -3:, -5:] *= 2.0 ** -30  # an edge tile with a tiny amax
    return x if dtype == np.float32 else (O.to_type(x, "bfloat16") if dtype == BF16 else
                                          x.astype(dtype))


@pytest.mark.parametrize("shape", [(576, 200), (130, 256), (2, 130, 129), (128, 128)])
def test_fp8_block_hf(shape):
    _fp8_check(_fp8_data(shape))
    _fp8_check(_fp8_data(shape, BF16))


def test_fp8_block_other_tiles():
    _fp8_check(_fp8_data((100, 70)), block=(64, 32))
    _fp8_check(_fp8_data((9, 70)), block=(1, 16))


@pytest.mark.parametrize("ue8m0", [False, True])
def test_fp8_deepseek_act(ue8m0):
    for shape, dtype in [((5, 300), np.float32), ((2, 3, 256), BF16), ((4, 128), np.float16)]:
        x = _fp8_data(shape, dtype)
        _fp8_check(x, "deepseek-act", ue8m0=ue8m0)
    x = np.zeros((3, 256), np.float32)  # amax clamped at 1e-4: zero and tiny blocks
    x[1, :128] = 1e-6
    x[2, 128:] = -3e-5
    x[2, :128] = 1e-4
    _fp8_check(x, "deepseek-act", ue8m0=ue8m0, name=" tiny")


def test_fp8_block_ties():
    t = O.E4M3.table
    mids = (t[:-1] + t[1:]) / 2
    x = np.zeros((4, 256), np.float32)
    x[0, 0] = 448  # qs = 1: the midpoints arrive unscaled
    x[0, 1:1 + len(mids)] = mids
    x[1, 0] = -448
    x[1, 1:1 + len(mids)] = -mids
    x[:2, 128:] = x[:2, :128] * 2.0 ** 5
    x[2:, :] = x[:2, :] * 2.0 ** -7  # scales of powers of two: still exact ties
    _fp8_check(x, "hf", block=(1, 128))
    _fp8_check(x, "deepseek-act")


@pytest.mark.parametrize("variant", ["hf", "deepseek-act"])
def test_fp8_block_dequantize(variant):
    x = _fp8_data((576, 200))
    q = dtcast.quantize(x, "fp8-block", variant=variant)
    block = (128, 128) if variant == "hf" else (1, 128)
    for to in ("bfloat16", "float32", "float16"):
        want = O.fp8_block_dequantize(_codes_u8(q.codes), q.scales, block, to=to)
        got = dtcast.dequantize(q.codes, q.scales, "fp8-block", variant=variant, to=to)
        _same(f"fp8-block {variant} dequantize -> {to}", got, want)


def test_fp8_block_dequantize_checkpoint_bytes():
    """DeepSeek's weight_dequant on raw checkpoint bytes: U8-viewed e4m3 codes, F32 scales of
    a ceil grid (576 rows: 5 scale rows)."""
    codes = RNG.integers(0, 256, size=(576, 300), dtype=np.uint8)
    codes[(codes & 0x7F) == 0x7F] = 0  # no NaN codes
    scales = (RNG.random((5, 3)) * 1e-3).astype(np.float32)
    got = dtcast.dequantize(codes.view(ml_dtypes.float8_e4m3fn), scales, "fp8-block",
                            to="bfloat16")
    _same("fp8-block dequantize of checkpoint bytes", got,
          O.fp8_block_dequantize(codes, scales, (128, 128), to="bfloat16"))


# ---- absmax --------------------------------------------------------------------------------------

ABSMAX_RECIPES = {("int8", "channel"): "int8-channel", ("int8", "tensor"): "int8-tensor",
                  ("int4", "group"): "int4-group", ("float8e4m3fn", "channel"): "fp8-channel",
                  ("float8e4m3fn", "tensor"): "fp8-tensor", ("float4e2m1", "group"): "fp4-group"}
ABSMAX_DTYPES = {"int8": np.int8, "int4": ml_dtypes.int4, "float8e4m3fn": ml_dtypes.float8_e4m3fn,
                 "float4e2m1": ml_dtypes.float4_e2m1fn}


def _absmax_kw(element, gran, group):
    kw = dict(element=element)
    if gran == "tensor":
        kw["per_tensor"] = True
    elif gran == "channel":
        kw["block"] = 0
    else:
        kw["block"] = group
    return kw


def _absmax_check(x, element, gran, group=128, scale_type=None, name=""):
    kw = _absmax_kw(element, gran, group)
    q = dtcast.quantize(x, "absmax", scale_dtype=scale_type, **kw)
    codes, scales = O.absmax_quantize(x, element, gran, group, scale_type)
    tag = f"absmax {element} {gran} {group} scale {scale_type} {x.dtype} {x.shape}{name}"
    assert q.codes.dtype == np.dtype(ABSMAX_DTYPES[element]), tag
    assert q.scales.dtype == scales.dtype, f"{tag}: scales {q.scales.dtype} != {scales.dtype}"
    _same(tag + " scales", q.scales, scales)
    got = q.codes.astype(np.int8) if element in ("int8", "int4") else _codes_u8(q.codes)
    _same(tag + " codes", got, codes, x)
    return q, codes, scales


def _absmax_data(shape, dtype):
    x = _random(shape, np.float32, spread=8)
    r = x.reshape(-1, shape[-1])
    r[0] = 0  # a zero row: the scale is the dtype's eps
    if shape[-1] > 10:
        r[1, :] = -0.0
        r[2, 3] = 127.5 * 2.0 ** -3  # amax/scale = 127.5 and its halves: ties for rint
        r[2, 4:12] = np.arange(-8, 8, 2) * 2.0 ** -3 + 2.0 ** -4
    return x if dtype == np.float32 else (O.to_type(x, "bfloat16") if dtype == BF16 else
                                          x.astype(dtype))


@pytest.mark.parametrize("element", list(O.ABSMAX))
@pytest.mark.parametrize("gran", ["tensor", "channel", "group"])
@pytest.mark.parametrize("dtype", [np.float32, BF16, np.float16])
def test_absmax(element, gran, dtype):
    for shape, group in [((8, 300), 128), ((5, 7), 4), ((2, 3, 40), 16)]:
        x = _absmax_data(shape, dtype)
        _absmax_check(x, element, gran, group)
        if dtype != np.float32:
            _absmax_check(x, element, gran, group, scale_type="float32")


@pytest.mark.parametrize("recipe", sorted(set(ABSMAX_RECIPES.values())))
def test_absmax_recipes(recipe):
    (element, gran), = [k for k, v in ABSMAX_RECIPES.items() if v == recipe]
    group = 128 if element == "int4" else 16
    x = _absmax_data((6, 256), BF16)
    q = dtcast.quantize(x, recipe)
    codes, scales = O.absmax_quantize(x, element, gran, group)
    _same(recipe + " scales", q.scales, scales)
    got = q.codes.astype(np.int8) if element in ("int8", "int4") else _codes_u8(q.codes)
    _same(recipe + " codes", got, codes, x)


@pytest.mark.parametrize("element", list(O.ABSMAX))
@pytest.mark.parametrize("gran", ["tensor", "channel", "group"])
def test_absmax_dequantize(element, gran):
    for dtype in (np.float32, BF16):
        x = _absmax_data((8, 300), dtype)
        q = dtcast.quantize(x, "absmax", **_absmax_kw(element, gran, 128))
        raw = q.codes.astype(np.int8) if element in ("int8", "int4") else _codes_u8(q.codes)
        for to in ("float32", "bfloat16"):
            want = O.absmax_dequantize(raw, q.scales, element, gran, 128, to=to)
            kw = {} if gran == "tensor" else {"block": 0 if gran == "channel" else 128}
            got = dtcast.dequantize(q.codes, q.scales, "absmax", to=to, **kw)
            _same(f"absmax dequantize {element} {gran} {dtype} -> {to}", got, want)


def test_int4_packed():
    x = _absmax_data((4, 37), np.float32)
    q = dtcast.quantize(x, "int4-group")
    p = dtcast.quantize(x, "int4-group", packed=True)
    assert p.codes.shape == (4, 19)
    _same("int4 packed", p.codes, O.pack_rows(q.codes.astype(np.int8)))


# ---- the API itself ------------------------------------------------------------------------------


def test_inputs_of_every_kind():
    x = _random((4, 64))
    want = dtcast.quantize(x, "mxfp8")
    for other in (x.tolist(), x.astype(np.float64)):
        got = dtcast.quantize(other, "mxfp8")
        _same("mxfp8 of another input", got.codes.view(np.uint8), want.codes.view(np.uint8))
    if _torch_available():
        import torch

        got = dtcast.quantize(torch.from_numpy(x), "mxfp8")
        _same("mxfp8 of a torch tensor", got.codes.view(np.uint8), want.codes.view(np.uint8))
    got = dtcast.quantize(np.asfortranarray(x), "mxfp8")
    _same("mxfp8 of a Fortran-order array", got.codes.view(np.uint8), want.codes.view(np.uint8))


def test_bad_arguments():
    x = np.ones((2, 32), np.float32)
    for kw in (dict(scheme="nosuch"), dict(scheme="mx", variant="nosuch"),
               dict(scheme="mx", scale_mode="nosuch"), dict(scheme="mx", round="nosuch"),
               dict(scheme="mx", seed=3)):
        with pytest.raises(dtcast.Error):
            dtcast.quantize(x, **kw)
    with pytest.raises(dtcast.Error):
        dtcast.quantize(np.ones((2, 32), np.int32), "mxfp8")
    with pytest.raises(dtcast.Error):
        dtcast.dequantize(np.zeros((2, 32), np.float32), np.zeros((2, 1), np.uint8), "mxfp8")


def test_stochastic_is_seeded():
    x = _random((16, 64))
    try:
        a = dtcast.quantize(x, "mxfp4", round="stochastic", seed=7)
    except dtcast.Error as e:
        if e.status != dtcast.Status.UNSUPPORTED and "not available" not in str(e):
            raise
        pytest.skip(f"no stochastic rounding in this build ({e})")
    b = dtcast.quantize(x, "mxfp4", round="stochastic", seed=7, threads=1)
    c = dtcast.quantize(x, "mxfp4", round="stochastic", seed=8)
    _same("stochastic, same seed", a.codes.view(np.uint8), b.codes.view(np.uint8))
    assert (a.codes.view(np.uint8) != c.codes.view(np.uint8)).any()
    # the scales do not depend on the element rounding
    _same("stochastic scales", a.scales.view(np.uint8), dtcast.quantize(x, "mxfp4").scales.view(np.uint8))


# ---- torch and torchao (differential, skipped when absent) ---------------------------------------


def test_torch_float8_casts_agree_with_the_oracle():
    """The oracle's element encoders against torch's own float8 casts (RNE; saturating after a
    clamp): a check of the oracle."""
    torch = pytest.importorskip("torch")
    x = _random((4096,), np.float32, spread=0) * 100
    for name, fmt in (("float8_e4m3fn", O.E4M3), ("float8_e5m2", O.E5M2)):
        v = np.clip(x, -fmt.max, fmt.max)
        got = torch.from_numpy(v).to(getattr(torch, name)).view(torch.uint8).numpy()
        _same(f"torch {name}", got, fmt.encode(v.astype(np.float64)))


def _torchao_mx():
    pytest.importorskip("torch")
    try:
        from torchao.prototype.mx_formats.mx_tensor import to_mx
    except Exception as e:  # absent, or a version without the prototype
        pytest.skip(f"torchao's to_mx is not available ({type(e).__name__}: {e})")
    return to_mx


_TORCHAO_ELEMENTS = {"float8e4m3fn": "float8_e4m3fn", "float8e5m2": "float8_e5m2",
                     "float4e2m1": "float4_e2m1fn_x2", "float6e2m3fn": "fp6_e2m3",
                     "float6e3m2fn": "fp6_e3m2"}


@pytest.mark.parametrize("element", list(_TORCHAO_ELEMENTS))
@pytest.mark.parametrize("mode", ["floor", "rceil", "even", "ceil"])
def test_torchao_to_mx(element, mode):
    to_mx = _torchao_mx()
    import torch
    from torchao.prototype.mx_formats import config

    scm = getattr(config.ScaleCalculationMode, mode.upper(), None)
    if scm is None:
        pytest.skip(f"torchao has no ScaleCalculationMode.{mode.upper()}")
    x = _random((16, 128), np.float32, spread=10)
    name = _TORCHAO_ELEMENTS[element]
    tdt = name if name.startswith("fp6") else getattr(torch, name, None)  # fp6: torchao's names
    if tdt is None:
        pytest.skip(f"torch has no {_TORCHAO_ELEMENTS[element]}")
    try:
        scale, data = to_mx(torch.from_numpy(x), tdt, 32, scm)
    except Exception as e:
        pytest.skip(f"torchao to_mx refused ({type(e).__name__}: {e})")
    # torchao's codes: fp8 as themselves, fp4 packed per row, fp6 one per byte (low 6 bits)
    q = dtcast.quantize(x, MX_RECIPES[element], scale_mode=mode)
    oc, osc = O.mx_quantize(x, element, mode=mode)
    _same(f"oracle vs torchao to_mx {element} {mode} scales", osc,
          scale.view(torch.uint8).numpy().reshape(osc.shape))
    _same(f"torchao to_mx {element} {mode} scales", q.scales.view(np.uint8),
          scale.view(torch.uint8).numpy().reshape(q.scales.shape))
    raw = data.view(torch.uint8).numpy()
    if element == "float4e2m1":
        _same(f"torchao to_mx {element} {mode} codes", O.pack_rows(_codes_u8(q.codes)),
              raw.reshape(16, 64))
    else:
        _same(f"torchao to_mx {element} {mode} codes", _codes_u8(q.codes), raw.reshape(16, 128))


def test_torchao_nvfp4():
    pytest.importorskip("torch")
    try:
        from torchao.prototype.mx_formats.nvfp4_tensor import (nvfp4_quantize,
                                                               per_tensor_amax_to_scale)
    except Exception as e:
        pytest.skip(f"torchao's nvfp4_quantize is not available ({type(e).__name__}: {e})")
    import torch

    x = _random((8, 64), np.float32, spread=6)
    t = torch.from_numpy(x)
    for single in (True, False):
        try:
            if single:
                scales, data = nvfp4_quantize(t, block_size=16)
            else:
                g = per_tensor_amax_to_scale(torch.max(torch.abs(t)))
                scales, data = nvfp4_quantize(t, block_size=16, per_tensor_scale=g)
        except Exception as e:
            pytest.skip(f"torchao nvfp4_quantize refused ({type(e).__name__}: {e})")
        q = dtcast.quantize(x, "nvfp4", variant="torchao", single_level=single, packed=True)
        _same(f"torchao nvfp4 single={single} scales", q.scales.view(np.uint8),
              scales.view(torch.uint8).numpy().reshape(q.scales.shape))
        _same(f"torchao nvfp4 single={single} codes", q.codes,
              data.view(torch.uint8).numpy().reshape(q.codes.shape))


# ---- random bit patterns and non-finite values ---------------------------------------------------


def _bits(shape, seed, lo_exp=0, hi_exp=254):
    """float32 values of random bit patterns with exponent fields in [lo_exp, hi_exp] (zero:
    subnormals too): every magnitude the format has."""
    rng = np.random.default_rng(seed)
    b = rng.integers(0, 1 << 32, size=shape, dtype=np.uint64).astype(np.uint32)
    e = rng.integers(lo_exp, hi_exp + 1, size=shape).astype(np.uint32)
    b = (b & np.uint32(0x807FFFFF)) | (e << np.uint32(23))
    return b.view(np.float32)


@pytest.mark.parametrize("element", MX_ELEMENTS)
def test_mx_random_bits(element):
    for seed, (lo, hi) in enumerate([(0, 254), (0, 20), (100, 140), (230, 254)]):
        x = _bits((8, 96), seed, lo, hi)
        for mode in MX_MODES:
            _mx_check(x, element, mode, name=f" bits {lo}..{hi}")


@pytest.mark.parametrize("variant,single", NV_VARIANTS)
def test_nvfp4_random_bits(variant, single):
    for seed, (lo, hi) in enumerate([(100, 140), (0, 254), (0, 30), (200, 254)]):
        _nv_check(_bits((6, 64), seed, lo, hi), variant, single, f" bits {lo}..{hi}")


def test_fp8_block_random_bits():
    for seed, (lo, hi) in enumerate([(100, 140), (0, 254), (0, 30), (200, 254)]):
        x = _bits((130, 140), seed, lo, hi)
        _fp8_check(x, "hf", name=f" bits {lo}..{hi}")
        _fp8_check(x, "deepseek-act", name=f" bits {lo}..{hi}")
        _fp8_check(x, "deepseek-act", ue8m0=True, name=f" bits {lo}..{hi}")


@pytest.mark.parametrize("element", list(O.ABSMAX))
def test_absmax_random_bits(element):
    for seed, (lo, hi) in enumerate([(100, 140), (0, 254), (0, 30)]):
        x = _bits((6, 50), seed, lo, hi)
        for gran in ("tensor", "channel", "group"):
            _absmax_check(x, element, gran, 16, name=f" bits {lo}..{hi}")
            _absmax_check(O.to_type(x, "bfloat16"), element, gran, 16, name=f" bits {lo}..{hi}")


def test_nonfinite_nvfp4_fp8_absmax():
    """NaN / Inf blocks, an all-zero and a subnormal tensor, FLT_MAX: the scales (and the global
    scale) always; the codes where quantization.md says what they are (NVFP4 modelopt: NaN -> +6; the
    float4 code of NaN elsewhere is not specified)."""
    f = np.float32
    xs = [np.array([[np.nan] + [1.0] * 15, [2.0] * 16], f),
          np.array([[np.inf] + [1.0] * 15, [-2.0] * 16], f),
          np.zeros((2, 16), f), np.full((2, 16), 1e-40, f),
          np.array([[3e38] + [1.0] * 15, [-3e38] * 16], f)]
    for x in xs:
        for variant, single in NV_VARIANTS:
            q = dtcast.quantize(x, "nvfp4", variant=variant, single_level=single)
            codes, scales, gs = O.nvfp4_quantize(x, variant, single)
            tag = f"nvfp4 {variant} {x[0, :2]}"
            _same(tag + " scales", q.scales.view(np.uint8), scales)
            if gs is not None:
                _same(tag + " gs", q.global_scale.view(np.uint32), gs.view(np.uint32))
            if variant == "modelopt" or not np.isnan(x).any():
                _same(tag + " codes", _codes_u8(q.codes), codes)
        for variant in ("hf", "deepseek-act"):
            _fp8_check(x, variant, block=(1, 16) if variant == "deepseek-act" else (2, 16))
        for element in O.ABSMAX:
            q = dtcast.quantize(x, "absmax", element=element, block=0)
            codes, scales = O.absmax_quantize(x, element, "channel")
            _same(f"absmax {element} {x[0, :2]} scales", q.scales, scales)
            if element != "float4e2m1" or not np.isnan(x).any():
                got = q.codes.astype(np.int8) if element in ("int8", "int4") else _codes_u8(q.codes)
                _same(f"absmax {element} {x[0, :2]} codes", got, codes)


# ---- dequantize_checkpoint (the CLI's `dequantize`) ----------------------------------------------


def _cli_has_dequantize():
    import subprocess

    from dtcast._cli import cli_path

    try:
        p = subprocess.run([cli_path(), "dequantize", "--help"], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except (OSError, FileNotFoundError):
        return False
    return p.returncode == 0


def test_dequantize_checkpoint(tmp_path):
    """A DeepSeek-style block-FP8 checkpoint (576-row edge tiles, a tensor without scales, a
    config.json with quantization_config) through dtcast.dequantize_checkpoint: the weights as the
    oracle dequantizes them, the rest copied, quantization_config gone."""
    st_numpy = pytest.importorskip("safetensors.numpy")
    if not _cli_has_dequantize():
        pytest.skip("the dtcast program has no 'dequantize' command in this build")
    import json

    x = _fp8_data((576, 200))
    q = dtcast.quantize(x, "fp8-block")
    norm = RNG.standard_normal(200).astype(np.float32)
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.mkdir()
    tensors = [("layers.0.attn.kv_a_proj_with_mqa.weight", "F8_E4M3", _codes_u8(q.codes)),
               ("layers.0.attn.kv_a_proj_with_mqa.weight_scale_inv", "F32", q.scales),
               ("layers.0.attn_norm.weight", "F32", norm)]
    header, blobs, off = {}, [], 0
    for name, dt, a in tensors:  # a safetensors file written by hand: F8_E4M3 as checkpoints
        b = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    (src / "model.safetensors").write_bytes(len(text).to_bytes(8, "little") + text + b"".join(blobs))
    (src / "config.json").write_text(json.dumps({"model_type": "x", "quantization_config": {
        "quant_method": "fp8", "weight_block_size": [128, 128]}}))
    assert dtcast.dequantize_checkpoint(src, dst, to="bfloat16") == str(dst)
    out = st_numpy.load_file(str(dst / "model.safetensors"))
    want = O.fp8_block_dequantize(_codes_u8(q.codes), q.scales, (128, 128), to="bfloat16")
    w = out["layers.0.attn.kv_a_proj_with_mqa.weight"]
    _same("dequantize_checkpoint weight", w.view(np.uint16), want.view(np.uint16))
    assert "layers.0.attn.kv_a_proj_with_mqa.weight_scale_inv" not in out
    _same("dequantize_checkpoint copies other tensors", out["layers.0.attn_norm.weight"], norm)
    assert "quantization_config" not in json.loads((dst / "config.json").read_text())


def test_dequantize_checkpoint_bad_arguments(tmp_path):
    with pytest.raises(dtcast.Error):
        dtcast.dequantize_checkpoint(tmp_path / "a", tmp_path / "b", to="int8")
    with pytest.raises(dtcast.Error):
        dtcast.dequantize_checkpoint(tmp_path / "a", tmp_path / "b", threads=-1)
    if _cli_has_dequantize():
        with pytest.raises(dtcast.Error):
            dtcast.dequantize_checkpoint(tmp_path / "missing", tmp_path / "b")
