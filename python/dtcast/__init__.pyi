# Type stubs of the dtcast package (docs/python.md).
import enum
import os
from typing import Any, Callable, Iterator, Literal, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from . import gguf as gguf, onnx as onnx, pypto as pypto, safetensors as safetensors, torch as torch

__version__: str

_Type = str | int | np.dtype[Any] | type | Any
_Round = Literal["rne", "round", "floor", "ceil", "trunc", "odd", "stochastic", "nearest_even",
                 "nearest_away"]

class Status(enum.IntEnum):
    OK = 0
    INVALID_ARGUMENT = 1
    UNKNOWN_TYPE = 2
    UNSUPPORTED = 3
    COMPLEX_TO_REAL = 4
    SIZE_OVERFLOW = 5
    BAD_STRING = 6
    OUT_OF_MEMORY = 7
    BAD_SHAPE = 8
    PROMOTION = 9
    IO = 10
    BAD_FILE = 11

class Error(ValueError):
    status: Status
    index: int | None
    result: dict[str, Any] | None
    file: str | None
    tensor: str | None
    offset: int | None
    usage: bool
    def __init__(self, message: str, status: int = ..., index: int | None = ...) -> None: ...

class Warning(UserWarning): ...

class Report:
    elements: int
    values: int
    exact: int
    rounded: int
    underflow: int
    nan: int
    overflow_inf: int
    overflow_nan: int
    overflow_max: int
    overflow_wrap: int
    overflow_saturate: int
    nan_out: int
    finite: int
    sqnr_db: float
    max_abs_error: tuple[float, int, float | int, float | int] | None
    max_rel_error: tuple[float, int, float | int, float | int] | None
    text: str
    @property
    def overflow(self) -> int: ...
    def asdict(self) -> dict[str, Any]: ...

def cast(x: Any, to: _Type, *, src: _Type | None = ..., round: _Round | None = ...,
         saturate: bool = ..., overflow: Literal["ieee", "saturate", "inf"] | None = ...,
         int_overflow: Literal["wrap", "saturate"] = ..., packed: bool = ...,
         out: npt.NDArray[Any] | None = ..., threads: int = ..., report: bool = ...,
         discard_imaginary: bool = ..., via_float32: bool = ...,
         seed: int | None = ...) -> Any: ...

def bitcast(x: Any, to: _Type, *, src: _Type | None = ...) -> npt.NDArray[Any]: ...

def types(kind: Literal["bool", "unsigned", "signed", "float", "complex", "string"] | None = ...) -> list[str]: ...
def dtype(t: _Type) -> np.dtype[Any]: ...

class finfo:
    dtype: np.dtype[Any]
    bits: int
    nexp: int
    nmant: int
    bias: int
    has_inf: bool
    has_nan: bool
    has_negative_zero: bool
    nan_count: int
    max: Any
    min: Any
    tiny: Any
    smallest_normal: Any
    smallest_subnormal: Any
    eps: Any
    epsneg: Any
    maxexp: int
    minexp: int
    resolution: float
    def __init__(self, t: _Type) -> None: ...

class iinfo:
    dtype: np.dtype[Any]
    bits: int
    min: int
    max: int
    kind: str
    def __init__(self, t: _Type) -> None: ...

def pack(x: Any, type: _Type | None = ...) -> npt.NDArray[np.uint8]: ...
def unpack(data: Any, type: _Type, shape: int | Sequence[int] | None = ...) -> npt.NDArray[Any]: ...

def promote_types(a: _Type, b: _Type, *, rules: str = ..., promote_unsafe: bool = ...,
                  pytorch_scalar_promotion: bool = ..., u64_target: _Type | None = ...,
                  x64: bool = ..., strict: bool = ...) -> np.dtype[Any] | str: ...
def result_type(*operands: Any, rules: str = ..., promote_unsafe: bool = ...,
                pytorch_scalar_promotion: bool = ..., u64_target: _Type | None = ...,
                x64: bool = ..., strict: bool = ...) -> np.dtype[Any] | str: ...

def convert_file(src: str | os.PathLike[str], dst: str | os.PathLike[str], *, to: _Type,
                 progress: Callable[[int, int], Any] | bool | None = ...,
                 **options: Any) -> str | None: ...
def convert_checkpoint(src: str | os.PathLike[str], dst_dir: str | os.PathLike[str], *,
                       to: _Type, shards: Sequence[str | int] | None = ...,
                       write_index: bool = ...,
                       progress: Callable[[int, int], Any] | bool | None = ...,
                       **options: Any) -> list[str]: ...
def checkpoint_shards(src: str | os.PathLike[str]) -> list[str]: ...

# ONNX QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear (also in dtcast.onnx)
def quantize_linear(x: Any, scale: Any, zero_point: Any | None = ..., *, axis: int = ...,
                    block_size: int = ..., saturate: int = ..., output_dtype: _Type | None = ...,
                    precision: _Type | None = ..., opset: int = ...,
                    threads: int = ...) -> npt.NDArray[Any]: ...
def dequantize_linear(x: Any, scale: Any, zero_point: Any | None = ..., *, axis: int = ...,
                      block_size: int = ..., output_dtype: _Type | None = ..., opset: int = ...,
                      threads: int = ...) -> npt.NDArray[Any]: ...
def dynamic_quantize_linear(x: Any, *, threads: int = ...) -> tuple[npt.NDArray[np.uint8],
                                                                    npt.NDArray[np.float32],
                                                                    npt.NDArray[np.uint8]]: ...
class Quantized(tuple[npt.NDArray[Any], npt.NDArray[Any], npt.NDArray[np.float32] | None]):
    codes: npt.NDArray[Any]
    scales: npt.NDArray[Any]
    global_scale: npt.NDArray[np.float32] | None

def quantize(x: Any, scheme: str, *, axis: int = ..., variant: str | None = ...,
             scale_mode: Literal["floor", "ceil", "even", "rceil", "log2"] | None = ...,
             round: Literal["rne", "rna", "stochastic"] = ..., seed: int | None = ...,
             packed: bool = ..., block: int | tuple[int, int] | None = ...,
             element: _Type | None = ..., scale_dtype: _Type | None = ...,
             per_tensor: bool = ..., single_level: bool = ..., ue8m0: bool = ...,
             reject_short: bool = ..., threads: int = ...) -> Quantized: ...
def dequantize(codes: Any, scales: Any, scheme: str, *, axis: int = ...,
               variant: str | None = ..., global_scale: Any = ..., to: _Type = ...,
               block: int | tuple[int, int] | None = ..., shape: Sequence[int] | None = ...,
               per_tensor: bool = ...,
               single_level: bool = ..., ue8m0: bool = ..., threads: int = ...) -> npt.NDArray[Any]: ...
def quantize_checkpoint(src: str | os.PathLike[str], dst: str | os.PathLike[str], *,
                        scheme: str, variant: str | None = ..., scale_mode: str | None = ...,
                        round: str | None = ..., seed: int | None = ...,
                        block: int | tuple[int, int] | str | None = ...,
                        select: str | Sequence[str] | None = ...,
                        exclude: str | Sequence[str] | None = ..., layout: str | None = ...,
                        report: bool = ..., threads: int = ...,
                        progress: Callable[[int, int], Any] | bool | None = ...) -> str: ...
def dequantize_checkpoint(src: str | os.PathLike[str], dst: str | os.PathLike[str], *,
                          to: _Type = ..., threads: int = ..., report: bool = ...,
                          progress: Callable[[int, int], Any] | bool | None = ...) -> str: ...
def convert_layout(src: str | os.PathLike[str], dst: str | os.PathLike[str], *, to: str,
                   report: bool = ...,
                   progress: Callable[[int, int], Any] | bool | None = ...) -> str: ...
def inspect(path: str | bytes | os.PathLike[str] | os.PathLike[bytes], *,
            strict: bool = ...) -> dict[str, Any]: ...

def diff(a: str | os.PathLike[str], b: str | os.PathLike[str], *, atol: float = ...,
         rtol: float = ..., dequantize: bool = ..., threads: int = ...,
         progress: bool | Callable[[int, int], object] | None = ...) -> dict[str, Any]: ...
