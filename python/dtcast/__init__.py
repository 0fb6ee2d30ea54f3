"""dtcast: exact conversion between every tensor data type machine learning uses.

    >>> import numpy as np, dtcast
    >>> dtcast.cast(np.float32([0.1, 500]), "float8_e4m3fn", saturate=True)
    array([0.1015625, 448], dtype=float8_e4m3fn)

Every conversion rounds once, in the rounding mode asked for, with the overflow policy asked
for; float64 and int64 sources are rounded once too (never through float32). Types are named as
ml_dtypes and numpy name them; dtcast's and ONNX's names are accepted as well.

- ``cast``: arrays (numpy, ml_dtypes, torch CPU, dlpack, buffers) to any type, at memory speed.
- ``bitcast``: the same bits read as another type of the same width (ONNX BitCast).
- ``onnx.cast`` / ``pypto.cast``: ONNX Cast and Ascend pypto.cast semantics.
- ``quantize_linear``, ``dequantize_linear``, ``dynamic_quantize_linear``: ONNX Q/DQ.
- ``types``, ``finfo``, ``iinfo``, ``pack``, ``unpack``.
- ``promote_types``, ``result_type``: the common type under numpy, torch, JAX, OpenVINO, aclnn.
- ``convert_file``, ``convert_checkpoint``, ``safetensors.open``: files, streamed.
- ``torch.cast``: torch tensors in and out (torch optional).
- ``quantize``, ``dequantize``: scaled quantization (MX, NVFP4, block FP8, absmax);
  ``quantize_checkpoint``, ``dequantize_checkpoint``: checkpoints quantized and back.
- ``inspect``: a file's or checkpoint's tensors, offsets, quantized layouts and problems,
  from its headers alone.
- ``diff``: two tensor files or checkpoints compared tensor by tensor (``dtcast diff``).
"""

from . import _core
from ._errors import Error, Status, Warning  # noqa: A004 (dtcast.Warning)

_core._set_error_class(Error)

from ._cast import cast, Report  # noqa: E402
from ._bitcast import bitcast  # noqa: E402
from ._info import types, finfo, iinfo, pack, unpack, dtype  # noqa: E402
from ._promote import promote_types, result_type  # noqa: E402
from .files import convert_file, convert_checkpoint, checkpoint_shards  # noqa: E402
from .files import quantize_checkpoint, dequantize_checkpoint, convert_layout  # noqa: E402
from ._quant import quantize, dequantize, Quantized  # noqa: E402
from ._inspect import inspect  # noqa: E402
from ._diff import diff  # noqa: E402
from . import gguf, onnx, pypto, safetensors, torch  # noqa: E402
from .onnx import quantize_linear, dequantize_linear, dynamic_quantize_linear  # noqa: E402

__version__ = _core.version

__all__ = [
    "cast", "bitcast", "Report", "Error", "Status", "types", "finfo", "iinfo", "pack", "unpack", "dtype",
    "promote_types", "result_type", "convert_file", "convert_checkpoint", "checkpoint_shards",
    "gguf", "onnx", "pypto", "safetensors", "torch",
    "quantize_linear", "dequantize_linear", "dynamic_quantize_linear",
    "quantize", "dequantize", "Quantized", "quantize_checkpoint", "dequantize_checkpoint", "convert_layout", "inspect", "diff",
]
