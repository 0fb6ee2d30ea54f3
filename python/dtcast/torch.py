"""torch tensors in and out: ``dtcast.torch.cast(t, torch.float8_e4m3fn, saturate=True)``.

torch is optional: this module imports it when used. The result is a CPU tensor of the target
dtype over the converted memory (no copy); dtcast types torch lacks (float6, int2, uint1 ...)
are refused here: use dtcast.cast for those (numpy arrays)."""

import numpy as np

from ._cast import cast as _cast
from ._errors import Error, Status
from ._types import lookup

__all__ = ["cast"]


def _torch_dtype(t):
    import torch

    if isinstance(t, torch.dtype):
        return t
    name = lookup(t).name
    alias = {"float8_e8m0fnu": "float8_e8m0fnu"}.get(name, name)
    d = getattr(torch, alias, None)
    if not isinstance(d, torch.dtype):
        raise Error(f"torch has no dtype for {name}", Status.UNSUPPORTED)
    return d


def cast(t, to, **kwargs):
    """dtcast.cast on a torch CPU tensor, returning a torch tensor of dtype ``to`` (a torch
    dtype or a type name torch has). Keywords as dtcast.cast (round, saturate, int_overflow,
    threads, report, ...; not packed, out)."""
    import torch

    dt = _torch_dtype(to)
    if "packed" in kwargs or "out" in kwargs:
        raise Error("dtcast.torch.cast takes neither packed= nor out=", Status.INVALID_ARGUMENT)
    res = _cast(t, lookup(dt), **kwargs)
    rep = None
    if kwargs.get("report"):
        res, rep = res
    if res.dtype.type.__module__ == "numpy":  # a dtype torch.from_numpy knows
        out = torch.from_numpy(res)
    else:  # ml_dtypes: the same bytes, viewed as torch's dtype
        out = torch.from_numpy(res.view(np.dtype(f"u{res.dtype.itemsize}"))).view(dt)
    return (out, rep) if rep is not None else out
