"""ONNX Cast and CastLike (opsets 1 to 28; onnx 1.23, IR 14), as the ONNX specification defines
them (docs/onnx.md): ``dtcast.onnx.cast(x, "FLOAT8E4M3FN", opset=28, saturate=True)``; and
QuantizeLinear, DequantizeLinear (opsets 10 to 28) and DynamicQuantizeLinear
(``quantize_linear``, ``dequantize_linear``, ``dynamic_quantize_linear``, also as
``dtcast.quantize_linear`` ...); and ``convert_model``, an .onnx model's weights stored as
float16 or bfloat16 (docs/onnx_models.md)."""

import numpy as np

from ._cast import _source, convert_array, options
from ._errors import Error, Status
from ._types import lookup
from . import _core

__all__ = ["cast", "cast_like", "quantize_linear", "dequantize_linear",
           "dynamic_quantize_linear", "convert_model", "OPSET_MAX"]

OPSET_MAX = 28
# CastLike's newest version: opsets 26 to 28 run CastLike-25, which has no float6
_CASTLIKE_NEWEST = 25
_FLOAT6 = (27, 28)


def cast(x, to, *, opset=OPSET_MAX, saturate=True, round_mode="up", src=None, packed=False,
         out=None, threads=0, via_float32=False, string_style="python", float4_nan_as_max=False):
    """ONNX Cast of x to ``to`` (a TensorProto number or name, or any dtcast type) at ``opset``:
    the pair is checked against the opset's type constraints (dtcast.Error, status UNSUPPORTED),
    then converted with ONNX's semantics: round to nearest even, float -> integer truncating and
    wrapping, ``saturate`` for float8 targets (opset >= 19), ``round_mode`` ("up", "down",
    "nearest") for float8e8m0 (opset >= 24); float6e2m3fn / float6e3m2fn (FLOAT6E2M3 = 27,
    FLOAT6E3M2 = 28) from opset 28, rounding to nearest even, overflow and +-Inf to +-max, NaN
    to 0x20 (-NaN 0x00) as ml_dtypes gives. via_float32 reproduces the ONNX reference
    implementation, which rounds to float32 first; string_style="ort" formats numbers as ONNX
    Runtime does."""
    arr, source = _source(x, src)
    target = lookup(to)
    base = options(threads=threads, via_float32=via_float32, string_style=string_style,
                   float4_nan_as_max=float4_nan_as_max)
    opts = _core.onnx_options(target.code, source.code, int(opset), int(saturate), round_mode, base)
    return convert_array(arr, source, target, opts, packed=packed, out=out)[0]


def cast_like(x, like, **kwargs):
    """ONNX CastLike (opset >= 15): the target type is that of ``like`` (an array or a type).
    CastLike's newest version is 25: at opsets 26 to 28 it is CastLike-25, which does not take
    float6 (dtcast.Error, status UNSUPPORTED)."""
    t = getattr(like, "dtype", like)
    opset = int(kwargs.get("opset", OPSET_MAX))
    if opset < 15:
        raise Error(f"ONNX CastLike needs opset 15 or later (got {opset})", Status.UNSUPPORTED)
    if _CASTLIKE_NEWEST < opset <= OPSET_MAX:
        src = kwargs.get("src")
        for role, ty in (("target", lookup(t)),
                         ("input", lookup(src) if src is not None else _source(x, None)[1])):
            if ty.code in _FLOAT6:
                raise Error(f"ONNX CastLike at opset {opset} is CastLike-{_CASTLIKE_NEWEST}, "
                            f"which does not take {ty.name} ({role} type); Cast-28 does",
                            Status.UNSUPPORTED)
    return cast(x, t, **kwargs)


# ---- QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear ----------------------------------

def _tensor(a, what):
    """(packed bytes, type code, shape) of an input array (sub-byte types packed as ONNX packs
    them over the flattened tensor; float6 one element per byte, as dtcast_tensor keeps it)."""
    from ._info import pack

    arr, t = _source(a, None)
    if t.code == 8:
        raise Error(f"{what}: strings are not numbers", Status.INVALID_ARGUMENT)
    shape = tuple(int(d) for d in arr.shape)
    if t.sub_byte and t.code not in _FLOAT6:
        data = pack(arr)
    else:
        data = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
    return data, t.code, shape


def _type_code(t, what):
    if t is None:
        return 0
    return lookup(t).code


def _qdq(quantize, x, scale, zero_point, axis, block_size, saturate, output_dtype, precision,
         opset, threads):
    from ._info import unpack

    xb, xt, xs = _tensor(x, "x")
    sb, st, ss = _tensor(scale, "scale")
    if zero_point is None:
        zb, zt, zs = None, 0, ()
    else:
        zb, zt, zs = _tensor(zero_point, "zero_point")
    attrs = (int(opset), int(axis), int(block_size), int(saturate),
             _type_code(output_dtype, "output_dtype"), _type_code(precision, "precision"))
    if not isinstance(threads, (int, np.integer)) or threads < 0:
        raise Error(f"threads must be an integer >= 0, not {threads!r}", Status.INVALID_ARGUMENT)
    out, code = _core.onnx_qdq(bool(quantize), xb, xt, xs, sb, st, ss, zb, zt, zs, attrs,
                               int(threads))
    if code in _FLOAT6:  # one per byte (dtcast_tensor), as ml_dtypes keeps float6
        n = int(np.prod(xs, dtype=np.int64))
        return np.frombuffer(out, dtype=np.uint8)[:n].copy().view(lookup(code).dtype).reshape(xs)
    return unpack(np.frombuffer(out, dtype=np.uint8), code, xs)


def quantize_linear(x, scale, zero_point=None, *, axis=1, block_size=0, saturate=1,
                    output_dtype=None, precision=None, opset=OPSET_MAX, threads=0):
    """ONNX QuantizeLinear at ``opset`` (10 to 28): ``y = saturate(rint(x / scale) +
    zero_point)`` per tensor (a scalar or 1-element scale), per axis (a 1-D scale along ``axis``)
    or blocked (a scale of x's rank, ``block_size`` elements per scale along ``axis``). y's type is
    ``output_dtype`` (a type name, dtype or TensorProto number), else the zero point's, else
    uint8; integer, float8 (``saturate``), float4e2m1 and (opset 28) float6 outputs as the
    operator defines them (float4 / float6: ``x / scale + zero_point`` cast to the type,
    saturating whatever ``saturate`` says),
    the quotient in ``precision`` when given (opset 23+), else in the type NumPy promotes x and
    the scale to. Types or attributes the opset lacks raise dtcast.Error (docs/onnx.md,
    "Quantization operators")."""
    return _qdq(True, x, scale, zero_point, axis, block_size, saturate, output_dtype, precision,
                opset, threads)


def dequantize_linear(x, scale, zero_point=None, *, axis=1, block_size=0, output_dtype=None,
                      opset=OPSET_MAX, threads=0):
    """ONNX DequantizeLinear at ``opset``: ``y = (x - zero_point) * scale`` in float32 (float64
    for int32 x with a zero point), then one cast to ``output_dtype`` (opset 21+; default the
    scale's type; required with a float8e8m0 scale). float8 / float4 x take no zero point, or
    zeros; float6 x (opset 28) subtracts its zero point, as onnx's reference does."""
    return _qdq(False, x, scale, zero_point, axis, block_size, 1, output_dtype, None, opset,
                threads)


def dynamic_quantize_linear(x, *, threads=0):
    """ONNX DynamicQuantizeLinear-11: float32 x -> (y uint8, y_scale float32 0-d, y_zero_point
    uint8 0-d), the scale and zero point from x's range (all-zero x: scale 1/255, as the ONNX
    reference). A NaN or infinity in x raises dtcast.Error naming its index."""
    arr, t = _source(x, None)
    if t.code != 1:
        raise Error(f"DynamicQuantizeLinear takes float32 x, not {t.name}", Status.UNSUPPORTED)
    arr = np.ascontiguousarray(arr)
    out, scale, zp = _core.onnx_dynamic(arr.reshape(-1).view(np.uint8),
                                        tuple(int(d) for d in arr.shape), int(threads))
    y = np.frombuffer(out, dtype=np.uint8).reshape(arr.shape).copy()
    return y, np.array(scale, dtype=np.float32), np.array(zp, dtype=np.uint8)


_EXTERNAL = ("auto", "always", "never")
_RUNTIMES = (None, "onnxruntime-cpu")  # their index: files/onnx_schema.h's dt_onnx_runtime


def convert_model(src, dst, *, to="float16", mode="weights", select=None, exclude=None,
                  select_ops=None, exclude_ops=None, round="rne", profile=None, external_data="auto", keep_io_types=False,
                  block_ops=None, block_nodes=None, runtime=None, threads=0, report=False,
                  progress=None):
    """An ONNX model (.onnx) converted to ``to`` (float16, bfloat16; float32 for float64
    weights), in this process by the C library's job (``dtcast cast model.onnx``;
    docs/onnx_models.md).
    ``mode="weights"`` (the default): every floating-point initializer and Constant value that
    select and exclude pick (globs of tensor names) is stored in the target type under a new
    name, and a Cast back to its type writes the old name; graph inputs, outputs and value_info
    are not changed, so the model stays valid and runs where it ran. Kept as they are, with a
    dtcast.Warning: initializers that are also graph inputs, and tensors with a finite value that
    would become Inf or NaN or whose nonzero values of one sign would all become 0; tensors of
    fewer than 16 elements are kept silently.
    ``select_ops`` / ``exclude_ops`` (globs of op types) pick and leave weights by the nodes
    that read them: a weight is converted when its name matches ``select`` or a reader's op
    type ``select_ops`` (every weight when neither is given), unless its name matches
    ``exclude`` or a reader's op type ``exclude_ops``. ``to`` a float8 type or int8: each
    weight becomes codes and a per-tensor scale, with a DequantizeLinear back (opset 19 for
    float8).
    ``mode="graph"``: the model's graph computes in ``to`` (float16 or bfloat16) wherever the
    ONNX operator schemas at the model's opset admit it, with Casts between; Cast(to=FLOAT) and
    the random ops' dtype are rewritten; nodes with subgraphs (If, Loop, Scan), the op types in
    ``block_ops`` and the node names in ``block_nodes`` (globs) keep their types; the graph's
    inputs and outputs become ``to`` unless ``keep_io_types``. ``runtime="onnxruntime-cpu"``:
    a node computes in ``to`` only where onnxruntime's CPU provider has a kernel for it (its
    bfloat16 kernels are few, and a session refuses a model needing another), so the model
    also loads there. The result is sorted topologically and is a valid model.
    External data is streamed; ``external_data``: "auto" (the output has a data file,
    dst + ".data", when src had external data or the model passes 2 GiB), "always", "never".
    ``profile``: None (dtcast's exact conversion), "ort-float16" or "onnxconverter-common": the
    float32 initializers only, with the values those converters write (a nonzero |x| below
    5.96e-08 / 1e-7 becomes that floor, a finite |x| above 65504 / 1e4 that bound, then round
    to nearest even; no value is kept back for overflow).
    Raises dtcast.Error; on any error nothing is written. Returns the report text when
    ``report`` (else None)."""
    if mode not in ("weights", "graph"):
        raise Error("mode: 'weights' (the weights stored as %s, a Cast back before their "
                    "consumers) or 'graph' (the compute in %s), not %r" % (to, to, mode),
                    Status.INVALID_ARGUMENT)
    if mode == "weights" and (keep_io_types or block_ops or block_nodes or runtime):
        raise Error("keep_io_types, block_ops, block_nodes and runtime apply to mode='graph'",
                    Status.INVALID_ARGUMENT)
    if runtime not in _RUNTIMES:
        raise Error("runtime: None or %s, not %r" % (", ".join(repr(r) for r in _RUNTIMES[1:]),
                                                     runtime), Status.INVALID_ARGUMENT)
    if external_data not in _EXTERNAL:
        raise Error("external_data: one of %s, not %r" % (", ".join(_EXTERNAL), external_data),
                    Status.INVALID_ARGUMENT)
    from . import files
    params = files._options(to, None, select, exclude, round, None, "wrap", profile, None,
                            threads, report, False)
    params["external_data"] = _EXTERNAL.index(external_data)
    params["onnx_graph"] = mode == "graph"
    params["keep_io_types"] = bool(keep_io_types)
    params["onnx_runtime"] = _RUNTIMES.index(runtime)
    params["block_ops"] = files._globs(block_ops, "block_ops")
    params["block_nodes"] = files._globs(block_nodes, "block_nodes")
    params["select_ops"] = files._globs(select_ops, "select_ops")
    params["exclude_ops"] = files._globs(exclude_ops, "exclude_ops")
    text = files._cast(files._path(src, "src"), files._path(dst, "dst"), params, progress)
    return text if report else None
