"""ONNX Cast and CastLike (opsets 1 to 25), as the ONNX specification defines them
(docs/onnx.md): ``dtcast.onnx.cast(x, "FLOAT8E4M3FN", opset=25, saturate=True)``."""

import numpy as np

from ._cast import _source, convert_array, options
from ._types import lookup
from . import _core

__all__ = ["cast", "cast_like", "OPSET_MAX"]

OPSET_MAX = 25


def cast(x, to, *, opset=OPSET_MAX, saturate=True, round_mode="up", src=None, packed=False,
         out=None, threads=0, via_float32=False, string_style="python", float4_nan_as_max=False):
    """ONNX Cast of x to ``to`` (a TensorProto number or name, or any dtcast type) at ``opset``:
    the pair is checked against the opset's type constraints (dtcast.Error, status UNSUPPORTED),
    then converted with ONNX's semantics: round to nearest even, float -> integer truncating and
    wrapping, ``saturate`` for float8 targets (opset >= 19), ``round_mode`` ("up", "down",
    "nearest") for float8e8m0 (opset >= 24). via_float32 reproduces the ONNX reference
    implementation, which rounds to float32 first; string_style="ort" formats numbers as ONNX
    Runtime does."""
    arr, source = _source(x, src)
    target = lookup(to)
    base = options(threads=threads, via_float32=via_float32, string_style=string_style,
                   float4_nan_as_max=float4_nan_as_max)
    opts = _core.onnx_options(target.code, source.code, int(opset), int(saturate), round_mode, base)
    return convert_array(arr, source, target, opts, packed=packed, out=out)[0]


def cast_like(x, like, **kwargs):
    """ONNX CastLike (opset >= 15): the target type is that of ``like`` (an array or a type)."""
    t = getattr(like, "dtype", like)
    return cast(x, t, **kwargs)
