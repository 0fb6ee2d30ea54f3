"""promote_types and result_type under the rule sets the library knows (docs/promotion.md):
"numpy" (np.promote_types; np.result_type under NEP 50; numpy's own types), "numpy+ml_dtypes"
(the same with ml_dtypes 0.7's types registered: bfloat16, float8, int4, ...), "torch", "jax",
"openvino", "aclnn"."""

import numbers

import numpy as np

from . import _core
from ._errors import Error, Status
from ._types import lookup, of_dtype
from ._cast import as_array

__all__ = ["promote_types", "result_type"]

_SCALAR_NONE, _SCALAR_BOOL, _SCALAR_INT, _SCALAR_FLOAT, _SCALAR_COMPLEX = range(5)
_DYNAMIC = 127


def _attrs(promote_unsafe, pytorch_scalar_promotion, u64_target, x64, strict):
    u64 = 0 if u64_target is None else lookup(u64_target).code
    return (bool(promote_unsafe), bool(pytorch_scalar_promotion), u64, bool(x64), bool(strict))


def _result(code):
    return "dynamic" if code == _DYNAMIC else lookup(code).dtype


def _operand(x):
    """(type code, rank, scalar kind) of a Python scalar, an array, a dtype or a type name.

    Python bool/int/float/complex are the weak scalars of NEP 50, torch and JAX; numpy scalars
    and 0-d arrays are 0-dim tensors; arrays are tensors of their rank; a dtype or a name alone
    stands for a tensor of rank 1 (any rank >= 1)."""
    if isinstance(x, bool):
        return (0, 0, _SCALAR_BOOL)
    if isinstance(x, numbers.Integral) and not isinstance(x, np.generic):
        return (0, 0, _SCALAR_INT)
    if isinstance(x, numbers.Real) and not isinstance(x, np.generic):
        return (0, 0, _SCALAR_FLOAT)
    if isinstance(x, numbers.Complex) and not isinstance(x, np.generic):
        return (0, 0, _SCALAR_COMPLEX)
    if isinstance(x, str) and x == "dynamic":
        return (_DYNAMIC, 1, _SCALAR_NONE)
    if isinstance(x, np.generic):
        return (lookup(x.dtype).code, 0, _SCALAR_NONE)
    if isinstance(x, (str, np.dtype, type)) or type(x).__module__.startswith("torch") and \
            not hasattr(x, "shape"):
        return (lookup(x).code, 1, _SCALAR_NONE)
    arr = as_array(x)
    t = of_dtype(arr.dtype)
    if t is None:
        raise Error(f"no dtcast type for {arr.dtype}", Status.UNKNOWN_TYPE)
    return (t.code, arr.ndim, _SCALAR_NONE)


def promote_types(a, b, *, rules="numpy", promote_unsafe=False, pytorch_scalar_promotion=False,
                  u64_target=None, x64=False, strict=False):
    """The common type of types a and b under ``rules`` (types as names, dtypes or torch dtypes;
    each stands for a tensor of rank >= 1). Returns the numpy dtype (ml_dtypes for the types
    numpy lacks), or "dynamic" (openvino). Raises dtcast.Error (status PROMOTION) with the
    system's own words when the rules refuse the pair.

    openvino: promote_unsafe, pytorch_scalar_promotion, u64_target (ConvertPromoteTypes-14);
    jax: x64 (jax_enable_x64), strict (jax_numpy_dtype_promotion='strict')."""
    ta = (_DYNAMIC, 1, 0) if isinstance(a, str) and a == "dynamic" else (lookup(a).code, 1, 0)
    tb = (_DYNAMIC, 1, 0) if isinstance(b, str) and b == "dynamic" else (lookup(b).code, 1, 0)
    return _result(_core.promote(rules, ta, tb, _attrs(promote_unsafe, pytorch_scalar_promotion,
                                                       u64_target, x64, strict)))


def result_type(*operands, rules="numpy", promote_unsafe=False, pytorch_scalar_promotion=False,
                u64_target=None, x64=False, strict=False):
    """The type of an operation's result over operands (arrays, 0-d arrays, numpy scalars,
    dtypes, names, and Python bool/int/float/complex as weak scalars) under ``rules``.

    Two operands are exactly the system's rule. More are folded left to right, the running
    result keeping the highest category seen (a tensor of the largest rank, else a 0-dim tensor,
    else a weak scalar of the result's kind), which is what numpy's and JAX's n-ary
    result_type do for the operands those systems take."""
    if not operands:
        raise Error("result_type needs at least one operand", Status.INVALID_ARGUMENT)
    attrs = _attrs(promote_unsafe, pytorch_scalar_promotion, u64_target, x64, strict)
    ops = [_operand(x) for x in operands]
    acc = ops[0]
    if len(ops) == 1:
        if acc[2] != _SCALAR_NONE:  # a lone scalar: its default type under the rules
            acc = (_core.promote(rules, acc, acc, attrs), 0, acc[2])
        return _result(acc[0])
    for op in ops[1:]:
        code = _core.promote(rules, acc, op, attrs)
        scalar = acc[2] if (acc[2] != _SCALAR_NONE and op[2] != _SCALAR_NONE) else _SCALAR_NONE
        if scalar != _SCALAR_NONE:
            scalar = max(acc[2], op[2])
            acc = (code, 0, scalar)
        else:
            rank = max(r for (_, r, s) in (acc, op) if s == _SCALAR_NONE)
            acc = (code, rank, _SCALAR_NONE)
    return _result(acc[0])
