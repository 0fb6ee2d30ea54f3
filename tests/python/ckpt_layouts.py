"""Independent numpy references for the quantized checkpoint layouts `dtcast dequantize` learns.

Nothing here imports dtcast or reads its code.  Each layout is built from the producers' own
documents and code (cited at each rule), so a test can write a small synthetic checkpoint with
the producer's tensor names, dtypes, shapes and config.json, run dtcast on it, and compare what
dtcast wrote with what the producer's own dequantizer computes.

The API
-------
``make_<layout>(rng, **options) -> Case`` for each layout:

==========================  ==================================================================
``make_deepseek_v4``        DeepSeek-V4(-Flash): FP8 128x128 tiles with F8_E8M0 ``.scale``,
                            FP4 routed experts in I8 with F8_E8M0 ``.scale`` per 32 inputs
``make_ct_pack_quantized``  compressed-tensors ``pack-quantized`` INT4/INT8 (Kimi-K2 style)
``make_ct_mixed_precision`` compressed-tensors ``mixed-precision``: FP8 per channel + NVFP4
``make_ct_mx``              compressed-tensors MX: ``mxfp4-pack-quantized``, ``mxfp8-quantized``
``make_gptq``               GPTQ (AutoGPTQ / GPTQModel), v1 ``gptq`` or ``gptq_v2``
``make_awq``                AutoAWQ GEMM
``make_scaled_fp8``         diffusion "scaled FP8" (ComfyUI, comfy_quant, diffusers, musubi)
==========================  ==================================================================

``write_checkpoint(folder, case, shards=1, split_groups=False)`` writes the case as a
checkpoint folder; ``read_checkpoint(folder)`` reads one back (tensors and header metadata);
``write_safetensors`` / ``read_safetensors`` do one file.
``dequantize_reference(case)`` recomputes the reference from the stored tensors alone (the
"reference decoder"; the tests check that it agrees with what each maker computed from its
codes).  ``expected(case, dtype)`` rounds the reference to an output dtype ("bfloat16",
"float16", "float32"); ``expected_exact`` rounds Case.exact once instead.
``CASES`` maps a name to a factory of each standard case; ``all_cases(seed)`` builds them all.
``malformed(name) -> Malformed(case, description, mentions)`` returns a hostile variant
(``MALFORMED`` lists the names, "layout/what").
Lower-level pieces, each documented where defined: the decoders ``decode_e4m3fn``,
``decode_e5m2``, ``decode_e8m0``, ``FP4_E2M1`` / ``DEEPSEEK_FP4_TABLE``; the packers
``pack_nibbles_low_first``, ``pack_words`` (GPTQ, AWQ with ``AWQ_ORDER``), ``ct_pack_to_int32``
and their inverses; the per-format references ``ct_int_reference``, ``nvfp4_reference``,
``fp8_channel_reference``, ``ct_mx_reference``, ``gptq_reference``, ``gptq_v1_to_v2_qzeros``,
``awq_reference``, ``scaled_fp8_eager`` (ComfyUI's CPU arithmetic, an alternative to the
float32 reference).

Precision, in one line each (details in each maker's docstring):

* DeepSeek-V4: code * 2**(e-127) is exact (float64), stored as float32 (exact unless it
  overflows float32).  Base variant (F32 scales): float32(code * scale), one rounding.
* compressed-tensors int: ``(q - zp) * scale`` in the scale's dtype (bf16 / f16 / f32):
  one rounding of the exact product to that dtype.
* compressed-tensors FP8 channel: ``code.to(scale.dtype) * scale`` in the scale's dtype.
* compressed-tensors NVFP4: ``bf16(f32(fp4) * f32(f32(scale_fp8) / global_scale))``.
* compressed-tensors MX (MXFP4, MXFP8): element * 2**(b-127), exact in float32; the
  decompressor's bf16 multiply rounds it once (``expected(case, "bfloat16")``).
* GPTQ / AWQ: ``fp16(scale * (q - z))``: one rounding of the exact product to float16.
* scaled FP8: ``float32(code * scale)``: one rounding (two for musubi's two-level scales).
"""

from __future__ import annotations

import copy
import json
import os
import struct
import zlib
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

# --------------------------------------------------------------------------------------------
# dtypes
# --------------------------------------------------------------------------------------------

BF16 = np.dtype(ml_dtypes.bfloat16)
F8_E4M3 = np.dtype(ml_dtypes.float8_e4m3fn)
F8_E5M2 = np.dtype(ml_dtypes.float8_e5m2)
F8_E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)

# safetensors dtype strings (the format's README) and the numpy dtypes this module uses for them
ST_DTYPES = {
    "F8_E4M3": F8_E4M3,
    "F8_E5M2": F8_E5M2,
    "F8_E8M0": F8_E8M0,
    "BF16": BF16,
    "F16": np.dtype(np.float16),
    "F32": np.dtype(np.float32),
    "F64": np.dtype(np.float64),
    "I8": np.dtype(np.int8),
    "U8": np.dtype(np.uint8),
    "I16": np.dtype(np.int16),
    "U16": np.dtype(np.uint16),
    "I32": np.dtype(np.int32),
    "U32": np.dtype(np.uint32),
    "I64": np.dtype(np.int64),
    "U64": np.dtype(np.uint64),
    "BOOL": np.dtype(np.bool_),
}
_ST_NAME = {v: k for k, v in ST_DTYPES.items()}

_OUT_DTYPES = {"bfloat16": BF16, "bf16": BF16, "float16": np.dtype(np.float16),
               "f16": np.dtype(np.float16), "float32": np.dtype(np.float32),
               "f32": np.dtype(np.float32)}


def st_dtype(arr) -> str:
    """The safetensors dtype string of a numpy array ("F8_E4M3", "BF16", "I32", ...)."""
    dt = np.dtype(arr.dtype).newbyteorder("=")
    try:
        return _ST_NAME[dt]
    except KeyError:
        raise TypeError(f"no safetensors dtype for numpy dtype {arr.dtype}") from None


# --------------------------------------------------------------------------------------------
# The Case
# --------------------------------------------------------------------------------------------


@dataclass
class Case:
    """One synthetic checkpoint and what it must dequantize to.

    tensors    name -> numpy array exactly as stored in the safetensors file (ml_dtypes
               float8_e4m3fn / float8_e5m2 / float8_e8m0fnu / bfloat16 where the file says
               F8_E4M3 / F8_E5M2 / F8_E8M0 / BF16; plain numpy dtypes otherwise).
    config     the config.json dict, or None (diffusion files have none).
    reference  output tensor name -> float32 array: the values the producer's own dequantizer
               computes, in the producer's arithmetic (see the maker's docstring).  The
               producer's result dtype may be narrower (bf16, f16); its values are held
               exactly in float32.
    plain      names of stored tensors that are not quantized and must be copied unchanged.
    layout     which layout ("deepseek_v4", "ct_pack_quantized", "ct_mixed_precision",
               "ct_mx", "gptq", "awq", "scaled_fp8").
    name       a short name for test ids.
    groups     output name -> the stored tensors it is made of (codes first, then scales,
               zero points, shapes, g_idx, input scales, comfy_quant markers).  These are
               consumed; with ``plain`` and ``markers`` they cover every stored tensor.
    exact      output name -> float64: the exact value of the documented formula (no
               intermediate rounding), for tests of a tool that rounds once.  Where the
               formula divides (NVFP4's global scale) it is the float64 of the quotient.
    metadata   the safetensors header's ``__metadata__`` (str -> str), or None.
    notes      what is special about this case (edge cases it contains, producer quirks).
    """

    tensors: dict
    config: dict | None
    reference: dict
    plain: list
    layout: str = ""
    name: str = ""
    groups: dict = field(default_factory=dict)
    exact: dict = field(default_factory=dict)
    metadata: dict | None = None
    notes: str = ""

    @property
    def markers(self) -> list:
        """Stored tensors that are neither plain nor part of a group: model-wide markers such as
        ComfyUI's ``scaled_fp8`` (a loader would re-detect the file as scaled FP8 if it
        survived next to dequantized weights, so a dequantizer should drop it)."""
        used = set(self.plain)
        for members in self.groups.values():
            used.update(members)
        return [n for n in self.tensors if n not in used]

    def copy(self) -> "Case":
        c = copy.deepcopy(self)
        return c


@dataclass
class Malformed:
    """A hostile variant: ``case`` (its ``reference`` says what a lenient tool would compute,
    or is empty when there is no meaningful value), ``description`` of what is wrong, and
    ``mentions``: strings (tensor names, config keys) an error message should contain."""

    case: Case
    description: str
    mentions: tuple


# --------------------------------------------------------------------------------------------
# safetensors files, written and read without the safetensors package
# --------------------------------------------------------------------------------------------
#
# safetensors 0.8.0's numpy API (safetensors.numpy.save_file) handles ml_dtypes.bfloat16 but
# fails on float8_e4m3fn / float8_e5m2 / float8_e8m0fnu ("module 'numpy' has no attribute
# 'float8_e4m3fn'"), so the file is written here, following the format's README:
#
#   bytes 0..7    N, the header's length, unsigned 64-bit little-endian
#   bytes 8..8+N  the header: UTF-8 JSON {name: {"dtype", "shape", "data_offsets": [b, e]},
#                 "__metadata__": {str: str}}, padded with spaces so 8 + N is a multiple of 8
#   then          the data: each tensor's bytes, little-endian, row-major, at [b, e) relative
#                 to the start of the data; the tensors cover it without gaps.
#
# test_ckpt_layouts_ref.py reads every file written here back with safetensors.safe_open.


def write_safetensors(path, tensors: dict, metadata: dict | None = None) -> None:
    header = {}
    if metadata:
        for k, v in metadata.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError("safetensors __metadata__ maps str to str")
        header["__metadata__"] = dict(metadata)
    blobs, offset = [], 0
    for name, arr in tensors.items():
        a = np.asarray(arr)
        if a.dtype.byteorder == ">":
            a = a.astype(a.dtype.newbyteorder("<"))
        raw = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": st_dtype(a), "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    hb = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hb += b" " * ((-len(hb)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hb)))
        f.write(hb)
        for raw in blobs:
            f.write(raw)


def read_safetensors(path):
    """(tensors, metadata) of one .safetensors file; tensors keep the file's order."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    metadata = header.pop("__metadata__", None)
    base = 8 + n
    out = {}
    for name, info in header.items():
        dt = ST_DTYPES[info["dtype"]]
        b, e = info["data_offsets"]
        arr = np.frombuffer(data[base + b: base + e], dtype=dt.newbyteorder("<"))
        out[name] = arr.astype(dt).reshape(info["shape"])
    return out, metadata


def shard_name(k: int, n: int) -> str:
    """Hugging Face's shard names: model-00001-of-00003.safetensors (1-based, five digits)."""
    return f"model-{k:05d}-of-{n:05d}.safetensors"


def _assign_shards(case: Case, shards: int, split_groups: bool) -> dict:
    """name -> shard index (0-based).  Kept together (split_groups=False), a group's tensors go
    to one shard; split (True), member j of group g goes to shard (g + j) % shards, so every
    group of two or more tensors straddles shards (a scale far from its codes, as DeepSeek's
    index allows)."""
    where = {}
    if split_groups:
        for g, members in enumerate(case.groups.values()):
            for j, name in enumerate(members):
                where[name] = (g + j) % shards
        rest = [n for n in case.tensors if n not in where]
        for i, name in enumerate(rest):
            where[name] = i % shards
    else:
        units = [list(m) for m in case.groups.values()]
        grouped = {n for m in units for n in m}
        units += [[n] for n in case.tensors if n not in grouped]
        if len(units) < shards:
            raise ValueError(f"{len(units)} groups/tensors cannot fill {shards} shards")
        for i, unit in enumerate(units):
            for name in unit:
                where[name] = i % shards
    used = set(where.values())
    if used != set(range(shards)):
        raise ValueError(f"shards {sorted(set(range(shards)) - used)} would be empty")
    return where


def write_checkpoint(folder, case: Case, shards: int = 1, split_groups: bool = False,
                     metadata: dict | None = None) -> list:
    """Write ``case`` as a checkpoint folder and return the paths written.

    shards == 1: model.safetensors.  shards > 1: model-0000k-of-0000n.safetensors plus
    model.safetensors.index.json ({"metadata": {"total_size": bytes of tensor data},
    "weight_map": {name: file}}), split by tensor; ``split_groups`` puts a quantized tensor's
    companions in different shards.  config.json when the case has a config.  ``metadata``
    (default: the case's) goes into every file's ``__metadata__``."""
    os.makedirs(folder, exist_ok=True)
    meta = case.metadata if metadata is None else metadata
    written = []
    if shards == 1:
        path = os.path.join(folder, "model.safetensors")
        write_safetensors(path, case.tensors, meta)
        written.append(path)
    else:
        where = _assign_shards(case, shards, split_groups)
        weight_map, total = {}, 0
        for k in range(shards):
            fname = shard_name(k + 1, shards)
            part = {n: a for n, a in case.tensors.items() if where[n] == k}
            write_safetensors(os.path.join(folder, fname), part, meta)
            written.append(os.path.join(folder, fname))
            for n, a in part.items():
                weight_map[n] = fname
                total += np.asarray(a).nbytes
        index = {"metadata": {"total_size": total}, "weight_map": weight_map}
        path = os.path.join(folder, "model.safetensors.index.json")
        with open(path, "w") as f:
            json.dump(index, f, indent=2)
        written.append(path)
    if case.config is not None:
        path = os.path.join(folder, "config.json")
        with open(path, "w") as f:
            json.dump(case.config, f, indent=2)
        written.append(path)
    return written


def read_checkpoint(folder):
    """(tensors, metadata) of a checkpoint folder: the index's shards when
    model.safetensors.index.json exists, else every .safetensors file in it.  metadata maps
    each file name to its header's __metadata__."""
    index = os.path.join(folder, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = sorted(f for f in os.listdir(folder) if f.endswith(".safetensors"))
    tensors, metadata = {}, {}
    for fname in files:
        t, m = read_safetensors(os.path.join(folder, fname))
        dup = set(t) & set(tensors)
        if dup:
            raise ValueError(f"tensors {sorted(dup)} are in more than one file")
        tensors.update(t)
        metadata[fname] = m
    return tensors, metadata


# --------------------------------------------------------------------------------------------
# Element codes, decoded from their bit fields (ml_dtypes is only the container; the tests
# check these decoders against ml_dtypes for every code)
# --------------------------------------------------------------------------------------------

# FP4 E2M1 (OCP MX spec v1.0 section 5.3.3): S EE M, exponent bias 1, E=0 subnormal (M * 0.5),
# no Inf/NaN.  Index = the 4-bit code, sign in bit 3.
FP4_E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
                     -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0], dtype=np.float64)

# DeepSeek-V4's own table (inference/convert.py of deepseek-ai/DeepSeek-V4-Flash, FP4_TABLE,
# used by cast_e2m1fn_to_e4m3fn): the same values, but code 8 reads as +0.0, not -0.0.
DEEPSEEK_FP4_TABLE = FP4_E2M1.copy()
DEEPSEEK_FP4_TABLE[8] = 0.0


def decode_e4m3fn(codes) -> np.ndarray:
    """float8 E4M3 "fn" (OCP 8-bit FP spec; torch.float8_e4m3fn): S EEEE MMM, bias 7,
    E=0 subnormal (M/8 * 2**-6), no Inf, S.1111.111 is NaN (0x7F, 0xFF).  -> float64."""
    c = np.asarray(codes).view(np.uint8).astype(np.int64)
    s, e, m = c >> 7, (c >> 3) & 0xF, c & 0x7
    mag = np.where(e == 0, m / 8.0 * 2.0 ** -6, (1.0 + m / 8.0) * np.exp2(e - 7.0))
    mag = np.where((e == 15) & (m == 7), np.nan, mag)
    return np.where(s == 1, -mag, mag)


def decode_e5m2(codes) -> np.ndarray:
    """float8 E5M2 (IEEE-like): S EEEEE MM, bias 15, E=0 subnormal (M/4 * 2**-14), E=31 is
    Inf (M=0) or NaN.  -> float64."""
    c = np.asarray(codes).view(np.uint8).astype(np.int64)
    s, e, m = c >> 7, (c >> 2) & 0x1F, c & 0x3
    mag = np.where(e == 0, m / 4.0 * 2.0 ** -14, (1.0 + m / 4.0) * np.exp2(e - 15.0))
    mag = np.where(e == 31, np.where(m == 0, np.inf, np.nan), mag)
    return np.where(s == 1, -mag, mag)


def decode_e8m0(codes) -> np.ndarray:
    """E8M0 scale byte (OCP MX spec section 5.4.1; torch.float8_e8m0fnu): byte e means
    2**(e - 127), e = 0..254; 0xFF is NaN.  No sign, no zero.  -> float64 (exact)."""
    e = np.asarray(codes).view(np.uint8).astype(np.int64)
    return np.where(e == 255, np.nan, np.ldexp(1.0, (e - 127).astype(np.int32)))


def decode_fp4(codes, table=FP4_E2M1) -> np.ndarray:
    return table[np.asarray(codes).astype(np.int64) & 0xF]


def _u8(arr) -> np.ndarray:
    return np.asarray(arr).view(np.uint8)


def rand_e4m3_codes(rng, shape) -> np.ndarray:
    """Random finite E4M3 codes (uint8), every code but the two NaNs; 0x00 and 0x80 (+0, -0)
    are made to appear."""
    c = rng.integers(0, 256, size=shape, dtype=np.int64)
    c = np.where((c & 0x7F) == 0x7F, c - 1, c).astype(np.uint8)
    flat = c.reshape(-1)
    if flat.size >= 4:
        flat[1], flat[2] = 0x00, 0x80
    return c


def rand_e5m2_codes(rng, shape) -> np.ndarray:
    """Random finite E5M2 codes (no Inf/NaN: exponent field 31 excluded)."""
    c = rng.integers(0, 256, size=shape, dtype=np.int64)
    c = np.where(((c >> 2) & 0x1F) == 31, c & 0x83, c).astype(np.uint8)
    flat = c.reshape(-1)
    if flat.size >= 4:
        flat[1], flat[2] = 0x00, 0x80
    return c


def _bf16(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).astype(BF16)


def _rand_scales(rng, shape, dtype, lo=0.002, hi=0.05) -> np.ndarray:
    return np.asarray(rng.uniform(lo, hi, size=shape), dtype=np.float32).astype(dtype)


# --------------------------------------------------------------------------------------------
# Packing into words
# --------------------------------------------------------------------------------------------


def pack_nibbles_low_first(codes) -> np.ndarray:
    """Two 4-bit codes per byte along the last axis, the even element in the LOW nibble:

        byte k of a row:   bit 7 .. 4      bit 3 .. 0
                           code[2k + 1]    code[2k]

    (DeepSeek-V4 inference/convert.py: ``low = x & 0x0F`` is element 2k, ``high = x >> 4`` is
    2k+1; compressed-tensors pack_fp4_to_uint8: ``packed = idx[:, 0] | idx[:, 1] << 4``.)
    -> uint8 [..., K/2]."""
    c = np.asarray(codes).astype(np.uint8)
    if c.shape[-1] % 2:
        raise ValueError("two codes per byte needs an even last axis")
    return (c[..., 0::2] & 0xF) | ((c[..., 1::2] & 0xF) << 4)


def unpack_nibbles_low_first(packed) -> np.ndarray:
    b = _u8(packed)
    out = np.empty(b.shape[:-1] + (b.shape[-1] * 2,), dtype=np.uint8)
    out[..., 0::2] = b & 0xF
    out[..., 1::2] = b >> 4
    return out


def pack_words(values, bits: int, axis: int, order=None) -> np.ndarray:
    """Pack ``32 // bits`` consecutive elements along ``axis`` into one int32 word.

    Without ``order``, element j of each run of 32/bits sits at bits [bits*j, bits*j + bits):

        4-bit word:  bits 31..28  27..24  ...  7..4   3..0
                     v[7]         v[6]    ...  v[1]   v[0]

    With ``order`` (AutoAWQ's AWQ_ORDER), slot j holds element ``order[j]`` of the run.
    ``values`` are unsigned codes < 2**bits.  -> int32 (the words' bit patterns)."""
    pf = 32 // bits
    if 32 % bits:
        raise ValueError("bits must divide 32")
    v = np.moveaxis(np.asarray(values).astype(np.uint64), axis, -1)
    if np.any(v >> np.uint64(bits)):
        raise ValueError(f"values do not fit {bits} bits")
    if v.shape[-1] % pf:
        raise ValueError(f"axis length {v.shape[-1]} is not a multiple of {pf}")
    v = v.reshape(v.shape[:-1] + (v.shape[-1] // pf, pf))
    if order is not None:
        v = v[..., list(order)]
    shifts = (np.arange(pf, dtype=np.uint64) * np.uint64(bits))
    w = np.bitwise_or.reduce(v << shifts, axis=-1).astype(np.uint32)
    return np.ascontiguousarray(np.moveaxis(w.view(np.int32), -1, axis))


def unpack_words(words, bits: int, axis: int, order=None) -> np.ndarray:
    """The inverse of pack_words: int32 words -> unsigned codes (int64), 32/bits per word."""
    pf = 32 // bits
    w = np.moveaxis(np.asarray(words, dtype=np.int32).view(np.uint32).astype(np.uint64),
                    axis, -1)
    shifts = (np.arange(pf, dtype=np.uint64) * np.uint64(bits))
    slots = (w[..., None] >> shifts) & np.uint64((1 << bits) - 1)
    if order is not None:
        out = np.empty_like(slots)
        out[..., list(order)] = slots
        slots = out
    vals = slots.reshape(w.shape[:-1] + (w.shape[-1] * pf,)).astype(np.int64)
    return np.ascontiguousarray(np.moveaxis(vals, -1, axis))


def ct_pack_to_int32(q, num_bits: int, packed_dim: int = 1) -> np.ndarray:
    """compressed-tensors ``pack_to_int32`` (compressors/pack_quantized/helpers.py, 0.20.0).

    ``q`` holds signed codes in [-2**(b-1), 2**(b-1) - 1]; the stored value is q + 2**(b-1)
    ("offset binary": ``offset = 1 << (num_bits - 1); value = value.to(int32) + offset``).
    Packing is dense along ``packed_dim``: element i of a row sits at bit i*b of the row's bit
    stream, the stream filling int32 words from bit 0 up (b=3,5,6,7 straddle words).  For 4 bits
    that is "nibble j of word w = code[8w + j] + 8":

        word w:  bits 31..28        ...   7..4              3..0
                 q[8w+7] + 8        ...   q[8w+1] + 8       q[8w] + 8

    The row is padded with zero bits to whole words (compressed-tensors pads the *offset*
    values with 0, so padding nibbles are 0x0, not 0x8): ceil(cols * b / 32) words.
    packed_dim=0 (zero points) packs down the columns instead: [N, G] -> [ceil(N*b/32), G]."""
    q = np.asarray(q).astype(np.int64)
    if q.ndim != 2:
        raise ValueError("2-D only")
    lo, hi = -(1 << (num_bits - 1)), (1 << (num_bits - 1)) - 1
    if q.min(initial=0) < lo or q.max(initial=0) > hi:
        raise ValueError(f"codes outside [{lo}, {hi}]")
    u = (q + (1 << (num_bits - 1))).astype(np.uint64)
    if packed_dim == 0:
        u = u.T
    rows, cols = u.shape
    nwords = -(-cols * num_bits // 32)
    bits = ((u[:, :, None] >> np.arange(num_bits, dtype=np.uint64)) & np.uint64(1)).astype(np.uint8)
    bits = bits.reshape(rows, cols * num_bits)
    bits = np.pad(bits, ((0, 0), (0, nwords * 32 - cols * num_bits)))
    by = np.packbits(bits, axis=1, bitorder="little")
    words = np.ascontiguousarray(by).view("<u4").astype(np.uint32).view(np.int32)
    words = words.reshape(rows, nwords)
    return np.ascontiguousarray(words.T if packed_dim == 0 else words)


def ct_unpack_from_int32(words, num_bits: int, count: int, packed_dim: int = 1) -> np.ndarray:
    """The inverse of ct_pack_to_int32: the first ``count`` signed codes of each row."""
    w = np.asarray(words, dtype=np.int32)
    if packed_dim == 0:
        w = w.T
    w = np.ascontiguousarray(w)
    rows, nwords = w.shape
    by = w.astype("<i4").view(np.uint8).reshape(rows, nwords * 4)
    bits = np.unpackbits(by, axis=1, bitorder="little")[:, :count * num_bits]
    bits = bits.reshape(rows, count, num_bits).astype(np.int64)
    vals = (bits << np.arange(num_bits, dtype=np.int64)).sum(axis=-1) - (1 << (num_bits - 1))
    return vals.T.copy() if packed_dim == 0 else vals


# AutoAWQ awq/utils/packing_utils.py: AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7] (nibble j of a word
# holds column 8w + AWQ_ORDER[j], as WQLinear_GEMM.from_linear packs it) and its inverse
# AWQ_REVERSE_ORDER = [0, 4, 1, 5, 2, 6, 3, 7] (column c of the run sits in nibble
# AWQ_REVERSE_ORDER[c]); compressed-tensors' AutoAWQConverter has the same reverse order.
AWQ_ORDER = (0, 2, 4, 6, 1, 3, 5, 7)
AWQ_REVERSE_ORDER = (0, 4, 1, 5, 2, 6, 3, 7)


# --------------------------------------------------------------------------------------------
# Helpers for references
# --------------------------------------------------------------------------------------------


def _expand_tiles(scale, rows, cols, bh, bw) -> np.ndarray:
    """One scale per bh x bw tile -> one per element, edge tiles cut to the tensor."""
    s = np.repeat(np.repeat(np.asarray(scale), bh, axis=0), bw, axis=1)
    return s[:rows, :cols]


def _round_to(x32, dtype) -> np.ndarray:
    """float32 values rounded (to nearest even) to ``dtype`` and held again in float32."""
    return np.asarray(x32, dtype=np.float32).astype(dtype).astype(np.float32)


def expected(case: Case, dtype="bfloat16") -> dict:
    """The reference rounded (to nearest even) to an output dtype: what a tool that takes the
    producer's values and writes ``dtype`` must produce.  (A tool that rounds the *exact*
    value once may differ by one ulp where the producer already rounded; see Case.exact.)"""
    dt = _OUT_DTYPES.get(dtype, dtype) if isinstance(dtype, str) else np.dtype(dtype)
    return {k: np.asarray(v, dtype=np.float32).astype(dt) for k, v in case.reference.items()}


def expected_exact(case: Case, dtype="bfloat16") -> dict:
    """Case.exact rounded once (float64 -> dtype).  Note float64 -> bf16 goes through float32
    here (ml_dtypes), a possible double rounding only when the exact value has more than 24
    significant bits, which no layout here produces except NVFP4's quotient."""
    dt = _OUT_DTYPES.get(dtype, dtype) if isinstance(dtype, str) else np.dtype(dtype)
    out = {}
    for k, v in case.exact.items():
        v = np.asarray(v, dtype=np.float64)
        out[k] = v.astype(dt) if dt != BF16 else v.astype(np.float32).astype(BF16)
    return out


def _check_case(case: Case) -> Case:
    names = set(case.tensors)
    for out, members in case.groups.items():
        missing = [m for m in members if m not in names]
        if missing:
            raise AssertionError(f"{case.name}: group {out} names missing tensors {missing}")
    for n in case.plain:
        if n not in names:
            raise AssertionError(f"{case.name}: plain tensor {n} is not stored")
    for k, v in case.reference.items():
        if v.dtype != np.float32:
            raise AssertionError(f"{case.name}: reference {k} is {v.dtype}, not float32")
    return case


# --------------------------------------------------------------------------------------------
# 1. DeepSeek-V4
# --------------------------------------------------------------------------------------------


def make_deepseek_v4(rng, *, dim=160, q_lora_rank=136, n_heads=2, head_dim=72, kv_dim=72,
                     o_rank=200, moe_inter=96, n_experts=3, vocab=64, layers=1, block=128,
                     variant="flash", nan_scale=False) -> Case:
    """DeepSeek-V4-Flash as deepseek-ai ships it (names unprefixed, as in the release).

    Sources: anthony-chaudhary/fak#12639 (dense ``…weight`` F8_E4M3 + ``…scale`` F8_E8M0, one
    per 128 x 128 tile, ``wo_a [8192,4096]`` with scale ``[64,32]``; "scale companions use the
    .scale suffix, not .weight_scale_inv"); NVIDIA-NeMo/Automodel#2034 (Flash: ``w1.weight``
    I8 ``[2048, 2048]`` "FP4 packed 2-per-byte", ``w1.scale`` F8_E8M0 ``[2048, 128]`` per 32
    inputs; Flash-Base: F8_E4M3 experts with F32 128x128 ``.scale``); the release's
    inference/convert.py (``cast_e2m1fn_to_e4m3fn``: ``x.view(uint8)``, low nibble = element
    2k, ``FP4_TABLE`` with +0.0 at code 8, ``scale.float()``); RobTand/prismaquant#26 for
    config.json (``expert_dtype``, ``quantization_config`` fmt / scale_fmt / weight_block_size).

    Stored, per layer L (``n`` = n_heads * head_dim):
      layers.L.attn.{wq_a [q_lora, dim], wq_b [n, q_lora], wkv [kv_dim, dim],
                     wo_a [o_rank, n], wo_b [dim, o_rank]}.weight    F8_E4M3
      … .scale                       F8_E8M0 [ceil(N/128), ceil(K/128)]   (edge tiles partial)
      layers.L.ffn.shared_experts.w{1,3} [moe_inter, dim], w2 [dim, moe_inter]   FP8 + .scale
      layers.L.ffn.experts.E.w{1,3}.weight  I8 [moe_inter, dim/2]   FP4 E2M1 codes, two per
                                     byte, LOW nibble first; .scale F8_E8M0 [moe_inter, dim/32]
      layers.L.ffn.experts.E.w2.weight      I8 [dim, moe_inter/2];  .scale [dim, moe_inter/32]
      plain: attn_norm / ffn_norm / attn.q_norm / attn.kv_norm .weight BF16, attn.attn_sink
             F32, ffn.gate.weight BF16, ffn.gate.bias F32, hc_attn_scale F32, embed.weight,
             norm.weight, head.weight BF16.

    variant="flash_base": experts are F8_E4M3 [N, K] like the dense weights and every ``.scale``
    is F32 (one per 128x128 tile); config ``expert_dtype: "fp8"`` and no ``scale_fmt``.

    Reference (DeepSeek's inference: ``weight.float() * scale.float()``, then bf16):
      FP8:  decode_e4m3(code) * 2**(e-127), exact in float64, held in float32 (exact: E4M3
            codes are multiples of 2**-9 below 2**9, so the product is representable unless
            it overflows float32; the cases keep e <= 140).
      FP4:  DEEPSEEK_FP4_TABLE[code] * 2**(e-127), exact; code 8 gives +0.0 (``exact`` has the
            OCP -0.0).
      Base: float32(code * scale): float32 multiply, one rounding.
    E8M0 byte 0xFF is NaN; ``nan_scale=True`` puts one in a dense scale and one in an expert
    scale (the format allows it; the reference then has NaN over that tile / block).

    Edge cases: every dense shape ends on a partial tile both ways (136, 144, 160, 72, 200, 96
    are not multiples of 128); wq_a's first tile is all zero codes; -0 codes (0x80, 0x8) appear;
    wkv's tile (0, 1) has scale byte 0 (2**-127: float32 subnormal products); expert 0's w1
    has an all-zero 32-block and a block of code 8 (negative zero)."""
    if dim % 32 or moe_inter % 32:
        raise ValueError("FP4 experts need dim and moe_inter multiples of 32")
    base = variant == "flash_base"
    if variant not in ("flash", "flash_base"):
        raise ValueError(variant)
    n = n_heads * head_dim
    tensors, reference, exact, groups, plain = {}, {}, {}, {}, []

    def put_plain(name, arr):
        tensors[name] = arr
        plain.append(name)

    def dense(name, N, K, zero_tile=False, tiny_tile=None):
        codes = rand_e4m3_codes(rng, (N, K))
        if zero_tile:
            codes[:min(block, N), :min(block, K)] = 0
        tn, tk = -(-N // block), -(-K // block)
        if base:
            sc = _rand_scales(rng, (tn, tk), np.float32, 1e-4, 1e-2)
            s_full = _expand_tiles(sc, N, K, block, block).astype(np.float32)
            ref = (decode_e4m3fn(codes).astype(np.float32) * s_full).astype(np.float32)
            ex = decode_e4m3fn(codes) * s_full.astype(np.float64)
            sc_stored = sc
        else:
            e = rng.integers(112, 130, size=(tn, tk)).astype(np.uint8)
            if tiny_tile is not None and tiny_tile[0] < tn and tiny_tile[1] < tk:
                e[tiny_tile] = 0
            s_full = _expand_tiles(decode_e8m0(e), N, K, block, block)
            ex = decode_e4m3fn(codes) * s_full
            ref = ex.astype(np.float32)
            sc_stored = e.view(F8_E8M0)
        w = f"{name}.weight"
        tensors[w] = codes.view(F8_E4M3)
        tensors[f"{name}.scale"] = sc_stored
        reference[w], exact[w] = ref, ex
        groups[w] = [w, f"{name}.scale"]

    def fp4_expert(name, N, K, edge=False):
        codes = rng.integers(0, 16, size=(N, K)).astype(np.uint8)
        e = rng.integers(115, 126, size=(N, K // 32)).astype(np.uint8)
        if edge:
            codes[0, :32] = 0          # an all-zero block
            codes[1, :32] = 8          # a block of negative zeros
            e[2, 0] = 0                # 0.5 * 2**-127 = 2**-128: a float32 subnormal
        s_full = np.repeat(decode_e8m0(e), 32, axis=1)
        w = f"{name}.weight"
        tensors[w] = pack_nibbles_low_first(codes).view(np.int8)
        tensors[f"{name}.scale"] = e.view(F8_E8M0)
        reference[w] = (DEEPSEEK_FP4_TABLE[codes] * s_full).astype(np.float32)
        exact[w] = FP4_E2M1[codes] * s_full
        groups[w] = [w, f"{name}.scale"]

    put_plain("embed.weight", _bf16(rng.normal(0, 0.02, (vocab, dim))))
    for L in range(layers):
        p = f"layers.{L}"
        put_plain(f"{p}.attn_norm.weight", _bf16(rng.normal(1, 0.1, dim)))
        dense(f"{p}.attn.wq_a", q_lora_rank, dim, zero_tile=(L == 0))
        put_plain(f"{p}.attn.q_norm.weight", _bf16(rng.normal(1, 0.1, q_lora_rank)))
        dense(f"{p}.attn.wq_b", n, q_lora_rank)
        dense(f"{p}.attn.wkv", kv_dim, dim, tiny_tile=(0, 1))
        put_plain(f"{p}.attn.kv_norm.weight", _bf16(rng.normal(1, 0.1, kv_dim)))
        dense(f"{p}.attn.wo_a", o_rank, n)
        dense(f"{p}.attn.wo_b", dim, o_rank)
        put_plain(f"{p}.attn.attn_sink", rng.normal(0, 1, n_heads).astype(np.float32))
        put_plain(f"{p}.hc_attn_scale", rng.normal(0, 1, 3).astype(np.float32))
        put_plain(f"{p}.ffn_norm.weight", _bf16(rng.normal(1, 0.1, dim)))
        put_plain(f"{p}.ffn.gate.weight", _bf16(rng.normal(0, 0.02, (n_experts, dim))))
        put_plain(f"{p}.ffn.gate.bias", rng.normal(0, 0.1, n_experts).astype(np.float32))
        for E in range(n_experts):
            for wn, (N, K) in (("w1", (moe_inter, dim)), ("w2", (dim, moe_inter)),
                               ("w3", (moe_inter, dim))):
                name = f"{p}.ffn.experts.{E}.{wn}"
                if base:
                    dense(name, N, K)
                else:
                    fp4_expert(name, N, K, edge=(E == 0 and wn == "w1"))
        for wn, (N, K) in (("w1", (moe_inter, dim)), ("w2", (dim, moe_inter)),
                           ("w3", (moe_inter, dim))):
            dense(f"{p}.ffn.shared_experts.{wn}", N, K)
    put_plain("norm.weight", _bf16(rng.normal(1, 0.1, dim)))
    put_plain("head.weight", _bf16(rng.normal(0, 0.02, (vocab, dim))))

    if nan_scale and not base:
        s = "layers.0.attn.wo_b.scale"
        e = _u8(tensors[s]).copy()
        e[0, 0] = 0xFF
        tensors[s] = e.view(F8_E8M0)
        w = "layers.0.attn.wo_b.weight"
        rows, cols = min(block, dim), min(block, o_rank)
        for d in (reference, exact):
            d[w] = d[w].copy()
            d[w][:rows, :cols] = np.nan
        s = "layers.0.ffn.experts.1.w2.scale"
        e = _u8(tensors[s]).copy()
        e[3, 1] = 0xFF
        tensors[s] = e.view(F8_E8M0)
        w = "layers.0.ffn.experts.1.w2.weight"
        for d in (reference, exact):
            d[w] = d[w].copy()
            d[w][3, 32:64] = np.nan

    qc = {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [block, block]}
    if not base:
        qc["scale_fmt"] = "ue8m0"
    config = {
        "architectures": ["DeepseekV4ForCausalLM"],
        "model_type": "deepseek_v4",
        "hidden_size": dim,
        "num_hidden_layers": layers,
        "num_attention_heads": n_heads,
        "head_dim": head_dim,
        "q_lora_rank": q_lora_rank,
        "o_lora_rank": o_rank,
        "n_routed_experts": n_experts,
        "n_shared_experts": 1,
        "moe_intermediate_size": moe_inter,
        "vocab_size": vocab,
        "torch_dtype": "bfloat16",
        "expert_dtype": "fp8" if base else "fp4",
        "quantization_config": qc,
    }
    notes = ("DeepSeek-V4-Flash" + ("-Base (F32 scales, FP8 experts)" if base else "")
             + ": partial edge tiles, an all-zero tile, -0 codes, a subnormal-product tile"
             + ("" if base else ", FP4 experts with a zero block and a -0 block")
             + ("; NaN scale bytes (0xFF) in wo_b tile (0,0) and expert 1 w2 [3, 32:64]"
                if nan_scale and not base else ""))
    return _check_case(Case(tensors, config, reference, plain, "deepseek_v4",
                            "deepseek_v4" + ("_base" if base else "")
                            + ("_nan" if nan_scale else ""),
                            groups, exact, {"format": "pt"}, notes))


def dequantize_deepseek_v4(tensors, config) -> dict:
    """Reference decoder: from the stored tensors and config.json alone."""
    block = tuple(config["quantization_config"].get("weight_block_size", [128, 128]))
    out = {}
    for sname in tensors:
        if not sname.endswith(".scale"):
            continue
        w = sname[: -len(".scale")] + ".weight"
        codes, sc = tensors[w], tensors[sname]
        if codes.dtype == np.int8:
            c = unpack_nibbles_low_first(codes)
            N, K = c.shape
            if sc.shape != (N, K // 32):
                raise ValueError(f"{sname}: shape {sc.shape}, expected {(N, K // 32)}")
            s = np.repeat(decode_e8m0(sc), 32, axis=1)
            out[w] = (DEEPSEEK_FP4_TABLE[c] * s).astype(np.float32)
        else:
            N, K = codes.shape
            tn, tk = -(-N // block[0]), -(-K // block[1])
            if sc.shape != (tn, tk):
                raise ValueError(f"{sname}: shape {sc.shape}, expected {(tn, tk)}")
            v = decode_e4m3fn(codes)
            if sc.dtype == F8_E8M0:
                out[w] = (v * _expand_tiles(decode_e8m0(sc), N, K, *block)).astype(np.float32)
            else:
                s = _expand_tiles(sc.astype(np.float32), N, K, *block)
                out[w] = (v.astype(np.float32) * s).astype(np.float32)
    return out


# --------------------------------------------------------------------------------------------
# 2. compressed-tensors
# --------------------------------------------------------------------------------------------

_SCALE_DTYPES = {"bf16": BF16, "f16": np.dtype(np.float16), "f32": np.dtype(np.float32)}


def _llama_linears(hidden, inter, kv):
    return {"self_attn.q_proj": (hidden, hidden), "self_attn.k_proj": (kv, hidden),
            "self_attn.v_proj": (kv, hidden), "self_attn.o_proj": (hidden, hidden),
            "mlp.gate_proj": (inter, hidden), "mlp.up_proj": (inter, hidden),
            "mlp.down_proj": (hidden, inter)}


def _ct_weights_args(num_bits, symmetric, strategy, group_size):
    return {"num_bits": num_bits, "type": "int", "symmetric": symmetric,
            "group_size": group_size if strategy == "group" else None,
            "strategy": strategy, "dynamic": False, "actorder": None,
            "block_structure": None, "observer": "minmax", "observer_kwargs": {}}


def _ct_model_body(rng, put_plain, quantized, *, hidden, inter, kv, vocab, moe, n_experts):
    """The tensors of the compressed-tensors makers' small models (see make_ct_pack_quantized):
    ``put_plain(name, array)`` for the BF16 ones, ``quantized(module, N, K, first)`` for each
    quantized Linear (``first`` for the first one only, where a maker puts its edge cases).
    moe=False: one Llama layer, every Linear quantized.  moe=True: two DeepSeek-V3 layers,
    layer 0 and all attention and shared experts BF16, layer 1's routed experts
    ``model.layers.1.mlp.experts.E.{gate,up,down}_proj`` quantized.  -> the number of layers."""
    put_plain("model.embed_tokens.weight", _bf16(rng.normal(0, 0.02, (vocab, hidden))))
    first = True
    n_layers = 2 if moe else 1
    for L in range(n_layers):
        p = f"model.layers.{L}"
        put_plain(f"{p}.input_layernorm.weight", _bf16(rng.normal(1, 0.1, hidden)))
        put_plain(f"{p}.post_attention_layernorm.weight", _bf16(rng.normal(1, 0.1, hidden)))
        lin = _llama_linears(hidden, inter, kv)
        for sub, (N, K) in lin.items():
            name = f"{p}.{sub}"
            if moe and (sub.startswith("self_attn") or L == 0):
                put_plain(f"{name}.weight", _bf16(rng.normal(0, 0.02, (N, K))))
            elif moe and sub.startswith("mlp"):
                continue
            else:
                quantized(name, N, K, first)
                first = False
        if moe and L == 1:
            put_plain(f"{p}.mlp.gate.weight", _bf16(rng.normal(0, 0.02, (n_experts, hidden))))
            put_plain(f"{p}.mlp.gate.e_score_correction_bias",
                      rng.normal(0, 0.1, n_experts).astype(np.float32))
            for E in range(n_experts):
                for sub in ("gate_proj", "up_proj", "down_proj"):
                    N, K = (hidden, inter) if sub == "down_proj" else (inter, hidden)
                    quantized(f"{p}.mlp.experts.{E}.{sub}", N, K, first)
                    first = False
            for sub in ("gate_proj", "up_proj", "down_proj"):
                N, K = (hidden, inter) if sub == "down_proj" else (inter, hidden)
                put_plain(f"{p}.mlp.shared_experts.{sub}.weight",
                          _bf16(rng.normal(0, 0.02, (N, K))))
    put_plain("model.norm.weight", _bf16(rng.normal(1, 0.1, hidden)))
    put_plain("lm_head.weight", _bf16(rng.normal(0, 0.02, (vocab, hidden))))
    return n_layers


def ct_int_reference(q, zp, scale) -> np.ndarray:
    """compressed-tensors 0.20 decompress of an int layout (lifecycle/forward.py _dequantize via
    _process_group / _apply_quantize_op): ``dequant = x_q.to(scale.dtype)``, ``- zero_point.
    to(scale.dtype)``, ``* scale``, then ``.to(scale.dtype)`` (``dequantize``'s dtype defaults
    to ``scale.dtype``).  q - zp is a small integer, exact in every scale dtype; the product of
    it and a bf16/f16 scale is exact in float32, so the one rounding is float32 -> scale dtype
    (torch's CPU bf16/f16 multiply computes in float and rounds once; ml_dtypes / numpy round
    to nearest even the same way).  For F32 scales the float32 multiply rounds.

    q [N, K] int; zp [N, G] int or None; scale [N, G] in its stored dtype -> float32."""
    q = np.asarray(q, dtype=np.int64)
    N, K = q.shape
    G = scale.shape[1]
    gs = K // G
    z = 0 if zp is None else np.repeat(np.asarray(zp, dtype=np.int64), gs, axis=1)
    d = (q - z).astype(np.float32)
    s = np.repeat(scale.astype(np.float32), gs, axis=1)
    prod = (d * s).astype(np.float32)
    if scale.dtype == np.float32:
        return prod
    return _round_to(prod, scale.dtype)


def _ct_model_config(qc, *, moe, hidden, inter, n_layers, vocab, n_experts) -> dict:
    """config.json of the compressed-tensors cases: a Llama, or a DeepSeek-V3-style MoE (Kimi K2's
    architecture) whose first layer is dense."""
    config = {"architectures": ["DeepseekV3ForCausalLM" if moe else "LlamaForCausalLM"],
              "model_type": "deepseek_v3" if moe else "llama",
              "hidden_size": hidden, "intermediate_size": inter,
              "num_hidden_layers": n_layers, "vocab_size": vocab,
              "torch_dtype": "bfloat16", "quantization_config": qc}
    if moe:
        config.update({"n_routed_experts": n_experts, "moe_intermediate_size": inter,
                       "first_k_dense_replace": 1})
    return config


def make_ct_pack_quantized(rng, *, num_bits=4, group_size=32, strategy="group",
                           symmetric=True, scale_dtype="bf16", moe=False, hidden=96,
                           inter=160, kv=32, n_experts=2, vocab=64) -> Case:
    """compressed-tensors ``pack-quantized`` W4A16 (Kimi-K2 / K2-Thinking style) or W8A16.

    Sources: compressed-tensors 0.20.0 (installed from PyPI and read): compressors/
    pack_quantized/base.py (PackedQuantizationCompressor: ``weight_packed``, ``weight_scale``,
    ``weight_shape = torch.tensor(weight.shape)`` (I64 [2]), ``weight_zero_point`` only when not
    symmetric, packed with ``pack_to_int32(zero_point, num_bits, packed_dim=0)``); helpers.py
    (pack_to_int32, see ct_pack_to_int32 here); lifecycle/forward.py (dequantize, see
    ct_int_reference).  NovaSky-AI/SkyRL PR #2019 (Kimi K2.6: "nibble j of each int32 is code j
    plus 8"; "the group multiply happens in the scale's dtype").

    Stored per quantized Linear X [N, K]:
      X.weight_packed      I32 [N, ceil(K * b / 32)]    offset-binary codes, dense bit stream
      X.weight_scale       BF16 / F16 / F32 [N, K / group_size]   ([N, 1] for "channel")
      X.weight_shape       I64 [2] = [N, K]
      X.weight_zero_point  I32 [ceil(N * b / 32), G]     (asymmetric only; signed zp + 2**(b-1)
                           packed DOWN the rows, packed_dim=0: zp[8r + j, g] in nibble j of
                           word [r, g])
    Codes q and zero points are signed, in [-2**(b-1), 2**(b-1) - 1] (quantization/utils/
    helpers.py calculate_range: q_min = -bit_range/2, q_max = bit_range/2 - 1).

    moe=False: a Llama-style layer, every Linear quantized, ignore ["lm_head"].
    moe=True: Kimi-K2's DeepSeek-V3 names: layer 0 dense MLP and all attention and shared
    experts BF16 (ignored by regex, as Kimi-K2-Thinking's config does); layer 1's routed
    experts ``model.layers.1.mlp.experts.E.{gate,up,down}_proj`` quantized.

    Reference: ct_int_reference (bf16 scale: bf16(round((q - zp) * s))).  Output X.weight
    [N, K].  compressed-tensors' CompressedTensorsDequantizer then casts to its dtype
    (bf16 by default): that is ``expected(case, "bfloat16")``.

    Edge cases: min and max codes; an all-zero group (q == zp); with strategy="channel" and
    hidden=100, K = 100 is not a multiple of 8 (13 words, the last with 4 zero-padding nibbles)
    and N = 100 is not a multiple of 8 (zero points: 13 word rows).  compressed-tensors needs
    K % group_size == 0 for "group" (_process_group raises), so K is never a partial group."""
    sdt = _SCALE_DTYPES[scale_dtype]
    qmin, qmax = -(1 << (num_bits - 1)), (1 << (num_bits - 1)) - 1
    tensors, reference, exact, groups, plain = {}, {}, {}, {}, []

    def put_plain(name, arr):
        tensors[name] = arr
        plain.append(name)

    def quantized(x, N, K, first=False):
        if strategy == "group":
            if K % group_size:
                raise ValueError(f"K={K} is not a multiple of group_size={group_size}")
            G = K // group_size
        else:
            G = 1
        gs = K // G
        q = rng.integers(qmin, qmax + 1, size=(N, K))
        zp = None if symmetric else rng.integers(qmin, qmax + 1, size=(N, G))
        if first:
            q[0, 0], q[0, 1] = qmin, qmax
            q[1, :gs] = 0 if symmetric else zp[1, 0]      # an all-zero group
        scale = _rand_scales(rng, (N, G), sdt)
        tensors[f"{x}.weight_packed"] = ct_pack_to_int32(q, num_bits)
        tensors[f"{x}.weight_scale"] = scale
        tensors[f"{x}.weight_shape"] = np.array([N, K], dtype=np.int64)
        members = [f"{x}.weight_packed", f"{x}.weight_scale", f"{x}.weight_shape"]
        if not symmetric:
            tensors[f"{x}.weight_zero_point"] = ct_pack_to_int32(zp, num_bits, packed_dim=0)
            members.append(f"{x}.weight_zero_point")
        w = f"{x}.weight"
        reference[w] = ct_int_reference(q, zp, scale)
        zf = 0 if zp is None else np.repeat(zp, gs, axis=1)
        exact[w] = (q - zf).astype(np.float64) * np.repeat(scale.astype(np.float64), gs, axis=1)
        groups[w] = members

    n_layers = _ct_model_body(rng, put_plain, quantized, hidden=hidden, inter=inter, kv=kv,
                              vocab=vocab, moe=moe, n_experts=n_experts)
    ignore = ["lm_head"]
    if moe:
        ignore += ["re:.*self_attn.*", "re:.*shared_experts.*",
                   "re:.*mlp\\.(gate|up|gate_up|down)_proj.*"]
    qc = {
        "config_groups": {"group_0": {
            "targets": ["Linear"],
            "weights": _ct_weights_args(num_bits, symmetric, strategy, group_size),
            "input_activations": None, "output_activations": None,
            "format": "pack-quantized"}},
        "format": "pack-quantized",
        "ignore": ignore,
        "kv_cache_scheme": None,
        "quant_method": "compressed-tensors",
        "quantization_status": "compressed",
    }
    config = _ct_model_config(qc, moe=moe, hidden=hidden, inter=inter, n_layers=n_layers,
                              vocab=vocab, n_experts=n_experts)
    name = (f"ct_w{num_bits}a16_{strategy}{group_size if strategy == 'group' else ''}"
            f"_{'sym' if symmetric else 'asym'}_{scale_dtype}{'_moe' if moe else ''}")
    notes = (f"compressed-tensors pack-quantized int{num_bits} {strategy} "
             f"{'symmetric' if symmetric else 'asymmetric (packed zero points)'}, "
             f"{scale_dtype} scales{', Kimi-K2 style MoE' if moe else ''}")
    return _check_case(Case(tensors, config, reference, plain, "ct_pack_quantized", name,
                            groups, exact, {"format": "pt"}, notes))


def nvfp4_reference(codes, scale_fp8, global_scale) -> np.ndarray:
    """compressed-tensors 0.20 NVFP4PackedCompressor.decompress (compressors/nvfp4/base.py):
    ``unpacked = unpack_fp4_from_uint8(...)`` (fp4 values, bf16: ``kE2M1ToFloat[abs] *
    where(sign, -1.0, 1.0)``, so code 8 is -0.0), ``scale_float = scale.to(bf16)`` (exact for
    E4M3), then dequantize(..., global_scale, dtype=bf16): ``_dequantize`` computes ``scale =
    scale / global_scale`` -- bf16 [N,G,1] / F32 [1] promotes to float32 -- then
    ``x_q.to(float32) * scale`` in float32, and _process_group casts to bf16.  So:
    bf16( f32(fp4) * f32( f32(scale) / global_scale ) ), three roundings.
    (A 0-dim global scale would not promote: bf16 / 0-dim f32 stays bf16.  The stored
    ``weight_global_scale`` is [1].)"""
    N, K = codes.shape
    G = scale_fp8.shape[1]
    s = decode_e4m3fn(scale_fp8).astype(np.float32)
    gs = np.float32(np.asarray(global_scale, dtype=np.float32).reshape(-1)[0])
    q = (s / gs).astype(np.float32)
    v = FP4_E2M1[codes].astype(np.float32)
    prod = (v * np.repeat(q, K // G, axis=1)).astype(np.float32)
    return _round_to(prod, BF16)


def fp8_channel_reference(codes, scale) -> np.ndarray:
    """compressed-tensors FloatQuantizationCompressor / naive_quantized decompress: dequantize
    -> _dequantize: ``x_q.to(scale.dtype) * scale`` (E4M3 -> bf16 is exact) in the scale's dtype,
    result in the scale's dtype.  scale [N, 1]."""
    v = decode_e4m3fn(codes).astype(np.float32)
    prod = (v * scale.astype(np.float32)).astype(np.float32)
    return prod if scale.dtype == np.float32 else _round_to(prod, scale.dtype)


def make_ct_mixed_precision(rng, *, hidden=64, inter=96, kv=32, vocab=48,
                            fp8_scale_dtype="bf16", input_global_scale=True,
                            nan_scale=False) -> Case:
    """compressed-tensors ``"format": "mixed-precision"``: two config groups, FP8 per channel
    for the attention projections and lm_head, NVFP4 for the MLPs (unslothai/llama.cpp PR #195
    describes such a checkpoint; compressed-tensors 0.20 compressors/format.py _flatten_formats
    gives "mixed-precision" when a model has more than one format).

      FP8 group ("float-quantized", FP8_DYNAMIC: weights channel, activations dynamic token):
        X.weight        F8_E4M3 [N, K]
        X.weight_scale  BF16 or F32 [N, 1]
      NVFP4 group ("nvfp4-pack-quantized", NVFP4: group_size 16, strategy tensor_group):
        X.weight_packed       U8 [N, K/2]   FP4 E2M1, low nibble = element 2k
                              (nvfp4/helpers.py pack_fp4_to_uint8)
        X.weight_scale        F8_E4M3 [N, K/16]
        X.weight_global_scale F32 [1]     (divides: ``scale / global_scale``)
        X.input_global_scale  F32 [1]     (activations, static; consumed, not an output)

    Reference: fp8_channel_reference and nvfp4_reference (bf16 results).  Outputs X.weight.
    Edge: NVFP4 code 8 (-0.0), an all-zero 16-block, a zero block scale (code 0x00);
    nan_scale=True puts E4M3 NaN (0x7F) in one NVFP4 block scale."""
    sdt = _SCALE_DTYPES[fp8_scale_dtype]
    tensors, reference, exact, groups, plain = {}, {}, {}, {}, []

    def put_plain(name, arr):
        tensors[name] = arr
        plain.append(name)

    def fp8(x, N, K):
        codes = rand_e4m3_codes(rng, (N, K))
        scale = _rand_scales(rng, (N, 1), sdt, 1e-4, 1e-2)
        w = f"{x}.weight"
        tensors[w] = codes.view(F8_E4M3)
        tensors[f"{x}.weight_scale"] = scale
        reference[w] = fp8_channel_reference(codes, scale)
        exact[w] = decode_e4m3fn(codes) * scale.astype(np.float64)
        groups[w] = [w, f"{x}.weight_scale"]

    first = [True]

    def nvfp4(x, N, K):
        codes = rng.integers(0, 16, size=(N, K)).astype(np.uint8)
        sc = rng.integers(0x20, 0x60, size=(N, K // 16)).astype(np.uint8)  # E4M3 2**-4..2**4
        if first[0]:
            codes[0, :16] = 0
            codes[1, :16] = 8
            sc[2, 0] = 0
            if nan_scale:
                sc[3, 1] = 0x7F
            first[0] = False
        gs = np.array([rng.uniform(500.0, 3000.0)], dtype=np.float32)
        w = f"{x}.weight"
        tensors[f"{x}.weight_packed"] = pack_nibbles_low_first(codes)
        tensors[f"{x}.weight_scale"] = sc.view(F8_E4M3)
        tensors[f"{x}.weight_global_scale"] = gs
        members = [f"{x}.weight_packed", f"{x}.weight_scale", f"{x}.weight_global_scale"]
        if input_global_scale:
            tensors[f"{x}.input_global_scale"] = np.array([rng.uniform(100, 1000)],
                                                          dtype=np.float32)
            members.append(f"{x}.input_global_scale")
        reference[w] = nvfp4_reference(codes, sc, gs)
        exact[w] = FP4_E2M1[codes] * np.repeat(decode_e4m3fn(sc), 16, axis=1) / float(gs[0])
        groups[w] = members

    put_plain("model.embed_tokens.weight", _bf16(rng.normal(0, 0.02, (vocab, hidden))))
    p = "model.layers.0"
    put_plain(f"{p}.input_layernorm.weight", _bf16(rng.normal(1, 0.1, hidden)))
    put_plain(f"{p}.post_attention_layernorm.weight", _bf16(rng.normal(1, 0.1, hidden)))
    for sub, (N, K) in _llama_linears(hidden, inter, kv).items():
        (fp8 if sub.startswith("self_attn") else nvfp4)(f"{p}.{sub}", N, K)
    put_plain("model.norm.weight", _bf16(rng.normal(1, 0.1, hidden)))
    fp8("lm_head", vocab, hidden)

    nv_weights = {"num_bits": 4, "type": "float", "symmetric": True, "group_size": 16,
                  "strategy": "tensor_group", "dynamic": False, "observer": "minmax"}
    nv_inputs = None
    if input_global_scale:
        nv_inputs = {"num_bits": 4, "type": "float", "symmetric": True, "group_size": 16,
                     "strategy": "tensor_group", "dynamic": False, "observer": "minmax"}
    qc = {
        "config_groups": {
            "group_0": {"targets": ["re:.*self_attn\\.(q|k|v|o)_proj$", "lm_head"],
                        "weights": {"num_bits": 8, "type": "float", "symmetric": True,
                                    "group_size": None, "strategy": "channel",
                                    "dynamic": False, "observer": "minmax"},
                        "input_activations": {"num_bits": 8, "type": "float",
                                              "symmetric": True, "group_size": None,
                                              "strategy": "token", "dynamic": True,
                                              "observer": None},
                        "output_activations": None, "format": "float-quantized"},
            "group_1": {"targets": ["re:.*mlp\\.(gate|up|down)_proj$"],
                        "weights": nv_weights, "input_activations": nv_inputs,
                        "output_activations": None, "format": "nvfp4-pack-quantized"},
        },
        "format": "mixed-precision",
        "ignore": [],
        "kv_cache_scheme": None,
        "quant_method": "compressed-tensors",
        "quantization_status": "compressed",
    }
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
              "hidden_size": hidden, "intermediate_size": inter, "num_hidden_layers": 1,
              "vocab_size": vocab, "torch_dtype": "bfloat16", "quantization_config": qc}
    return _check_case(Case(tensors, config, reference, plain, "ct_mixed_precision",
                            f"ct_mixed_fp8{fp8_scale_dtype}_nvfp4" + ("_nan" if nan_scale else ""),
                            groups, exact, {"format": "pt"},
                            "FP8 per-channel attention + lm_head, NVFP4 MLPs"
                            + ("; E4M3 NaN block scale in gate_proj [3, 16:32]"
                               if nan_scale else "")))


def _ct_mx_args(num_bits, dynamic=False):
    """compressed-tensors 0.20's MX QuantizationArgs (quantization/quant_scheme.py presets
    MXFP4A16, MXFP8: float, group 32, symmetric, ``scale_dtype=torch.uint8``) as its
    serializer writes them (quant_args.py ``_serialize``: observer, zp_dtype, actorder,
    block_structure left out when not given; the dtype as the string "torch.uint8")."""
    return {"num_bits": num_bits, "type": "float", "symmetric": True, "group_size": 32,
            "strategy": "group", "dynamic": dynamic, "scale_dtype": "torch.uint8"}


def ct_mx_reference(values, scale) -> np.ndarray:
    """The OCP MX value of compressed-tensors' MX layouts: element value (FP4 E2M1 or E4M3,
    float64) times 2**(b - 127) for the U8 scale byte b of its block of 32 along the last
    axis (decode_e8m0: 255 reads as NaN, as the OCP spec says; compressed-tensors reads it as
    2**128 = inf, see make_ct_mx).  The product is exact in float64 and, for the bytes the
    cases hold, in float32: it has at most 4 significant bits and lies in [2**-136, 2**128)
    (FP4 >= 0.5, E4M3 >= 2**-9 times 2**-127 at the bottom, float32 subnormals reaching
    2**-149; at the top the cases keep |element| < 2 in blocks of byte 254, where 2 * 2**127
    would overflow).  values [..., K], scale [..., K/32] -> float32."""
    v = np.asarray(values, dtype=np.float64)
    s = decode_e8m0(scale)
    if s.shape[-1] * 32 != v.shape[-1]:
        raise ValueError(f"scale {s.shape} does not give one byte per 32 of {v.shape}")
    return (v * np.repeat(s, 32, axis=-1)).astype(np.float32)


_CT_MX_FORMATS = {"mxfp4": ("MXFP4A16", "mxfp4-pack-quantized"),
                  "mxfp8": ("MXFP8", "mxfp8-quantized")}


def make_ct_mx(rng, *, fmt="mxfp4", moe=False, hidden=96, inter=160, kv=32, n_experts=2,
               vocab=64) -> Case:
    """compressed-tensors' MX formats: ``mxfp4-pack-quantized`` (preset MXFP4A16) and
    ``mxfp8-quantized`` (preset MXFP8), the small model of make_ct_pack_quantized (moe=True:
    its Kimi-K2 / DeepSeek-V3 MoE, routed experts quantized, the router ``mlp.gate`` ignored
    too; compressed-tensors has no names for fused experts).

    Sources: compressed-tensors 0.20.0 (installed from PyPI and read): quantization/
    quant_scheme.py (MXFP4A16: weights float 4 bits, group 32, symmetric, static,
    ``scale_dtype=torch.uint8``; MXFP8: the same with 8 bits plus dynamic 8-bit group-32 input
    activations, which store nothing); compressors/mxfp4/base.py (MXFP4PackedCompressor, an
    NVFP4PackedCompressor without ``weight_global_scale``); compressors/mxfp8/base.py
    (MXFP8QuantizationCompressor, NaiveQuantizationCompressor with uint8 scales);
    compressors/mx_utils.py (``compress_mx_scale``: ``127 + floor(log2(scale))`` as uint8;
    ``decompress_mx_scale``: ``2.0 ** (scale.to(int32) - 127).to(bfloat16)``); the config is
    what ModelCompressor.update_config writes for the preset (ignore, status aside).

    Stored per quantized Linear X [N, K] (K a multiple of 32):
      fmt="mxfp4": X.weight_packed  U8 [N, K/2]   FP4 E2M1 codes, low nibble = element 2k
                                    (nvfp4/helpers.py pack_fp4_to_uint8)
                   X.weight_scale   U8 [N, K/32]  E8M0 bytes: 2**(b - 127)
      fmt="mxfp8": X.weight         F8_E4M3 [N, K]
                   X.weight_scale   U8 [N, K/32]  E8M0 bytes
    No global scale, no zero point, no weight_shape.

    Reference: ct_mx_reference, the exact products (exact in float32).  compressed-tensors'
    decompress works in bfloat16: ``unpack_fp4_from_uint8`` (FP4 values in bf16, code 8 is
    -0.0) or the E4M3 weight ``.to(bf16)`` (exact) times the bf16 scale ``2**(b-127)`` (exact:
    bf16 has float32's exponent range, 2**-127 a subnormal), one bf16 rounding of the exact
    product: ``expected(case, "bfloat16")`` (the rounding only shows for E4M3 below bf16's
    subnormals, byte 0).  It reads byte 255 as 2**128 = +inf in bf16 (not the OCP NaN):
    nonzero elements become +-inf, +-0 elements NaN; the cases hold no 255.

    Edge cases: hidden=96 is not a multiple of 64 (three blocks of 32); the first quantized
    Linear's row 0 starts with FP4 codes 0..15 twice (E4M3: 448, -448, 2**-9, -0, +0), row 1
    is a block of code 8 (-0.0; E4M3 0x80), block (2, 0) has scale byte 0 (2**-127: float32
    subnormal products, 2**-128 for FP4 0.5) and the last block of row 3 byte 254 (2**127);
    every Linear has one more random block of byte 0 and one of byte 254.  In blocks of byte
    254 the elements are kept below 2 in magnitude (FP4 0, 0.5, 1, 1.5; E4M3 exponent field
    <= 7), so that nothing overflows float32 or bf16 (float16 outputs are +-inf there).
    Scale bytes are otherwise 110..130 (2**-17 .. 2**3)."""
    if fmt not in _CT_MX_FORMATS:
        raise ValueError(fmt)
    preset, ct_format = _CT_MX_FORMATS[fmt]
    fp4 = fmt == "mxfp4"
    tensors, reference, exact, groups, plain = {}, {}, {}, {}, []

    def put_plain(name, arr):
        tensors[name] = arr
        plain.append(name)

    def quantized(x, N, K, first=False):
        if K % 32:
            raise ValueError(f"K={K} is not a multiple of 32")
        G = K // 32
        if fp4:
            codes = rng.integers(0, 16, size=(N, K)).astype(np.uint8)
        else:
            codes = rand_e4m3_codes(rng, (N, K))
        e = rng.integers(110, 131, size=(N, G)).astype(np.uint8)
        if first:
            if fp4:
                codes[0, :32] = np.tile(np.arange(16, dtype=np.uint8), 2)
                codes[1, :32] = 8
            else:
                codes[0, :5] = [0x7E, 0xFE, 0x01, 0x80, 0x00]
                codes[1, :32] = 0x80
            e[2, 0] = 0
            e[3, G - 1] = 254
        i0, i254 = rng.choice((N - 4) * G, size=2, replace=False) + 4 * G
        e.reshape(-1)[[i0, i254]] = [0, 254]
        big = np.repeat(e == 254, 32, axis=1)
        codes = np.where(big, codes & (0xB if fp4 else 0xBF), codes).astype(np.uint8)
        w, s = f"{x}.weight", f"{x}.weight_scale"
        if fp4:
            vals = FP4_E2M1[codes]
            tensors[f"{x}.weight_packed"] = pack_nibbles_low_first(codes)
            members = [f"{x}.weight_packed", s]
        else:
            vals = decode_e4m3fn(codes)
            tensors[w] = codes.view(F8_E4M3)
            members = [w, s]
        tensors[s] = e
        reference[w] = ct_mx_reference(vals, e)
        exact[w] = vals * np.repeat(decode_e8m0(e), 32, axis=1)
        groups[w] = members

    n_layers = _ct_model_body(rng, put_plain, quantized, hidden=hidden, inter=inter, kv=kv,
                              vocab=vocab, moe=moe, n_experts=n_experts)
    ignore = ["lm_head"]
    if moe:
        ignore += ["re:.*self_attn.*", "re:.*shared_experts.*",
                   "re:.*mlp\\.(gate|up|gate_up|down)_proj.*", "re:.*mlp\\.gate$"]
    # ModelCompressor.update_config: json.dump(..., sort_keys=True) of QuantizationConfig.
    # model_dump plus version, quant_method, sparsity_config and transform_config
    qc = {
        "config_groups": {"group_0": {
            "format": ct_format,
            "input_activations": None if fp4 else _ct_mx_args(8, dynamic=True),
            "output_activations": None,
            "targets": ["Linear"],
            "weights": _ct_mx_args(4 if fp4 else 8)}},
        "format": ct_format,
        "global_compression_ratio": None,
        "ignore": ignore,
        "kv_cache_scheme": None,
        "moe_sparsity_config": None,
        "quant_method": "compressed-tensors",
        "quantization_status": "compressed",
        "sparsity_config": {},
        "transform_config": {},
        "version": "0.20.0",
    }
    config = _ct_model_config(qc, moe=moe, hidden=hidden, inter=inter, n_layers=n_layers,
                              vocab=vocab, n_experts=n_experts)
    notes = (f"compressed-tensors {ct_format} (preset {preset}), U8 E8M0 scales per 32, "
             f"bytes 0 and 254 in some blocks{', Kimi-K2 style MoE' if moe else ''}")
    return _check_case(Case(tensors, config, reference, plain, "ct_mx",
                            f"ct_{fmt}{'_moe' if moe else ''}", groups, exact,
                            {"format": "pt"}, notes))


def dequantize_ct(tensors, config) -> dict:
    """Reference decoder for the compressed-tensors cases, from stored tensors + config."""
    qc = config["quantization_config"]
    out = {}
    for name, arr in tensors.items():
        x, _, param = name.rpartition(".")
        if param == "weight_packed" and arr.dtype == np.int32:
            scheme = _ct_scheme_for(qc, x, "weight_packed")
            wa = scheme["weights"]
            b = wa["num_bits"]
            N, K = (int(v) for v in tensors[f"{x}.weight_shape"])
            q = ct_unpack_from_int32(arr, b, K)
            scale = tensors[f"{x}.weight_scale"]
            zp = None
            if not wa.get("symmetric", True):
                zp = ct_unpack_from_int32(tensors[f"{x}.weight_zero_point"], b, N, packed_dim=0)
            if wa["strategy"] == "group" and scale.shape[1] * wa["group_size"] != K:
                raise ValueError(f"{x}.weight_scale: {scale.shape} does not fit K={K}, "
                                 f"group_size={wa['group_size']}")
            out[f"{x}.weight"] = ct_int_reference(q, zp, scale)
        elif param == "weight_packed" and arr.dtype == np.uint8:
            codes = unpack_nibbles_low_first(arr)
            scale = tensors[f"{x}.weight_scale"]
            if scale.dtype == np.uint8:                   # MXFP4: E8M0 bytes, no global
                _ct_mx_check(qc, x, param, scale, codes.shape)
                out[f"{x}.weight"] = ct_mx_reference(FP4_E2M1[codes], scale)
            else:
                out[f"{x}.weight"] = nvfp4_reference(codes, scale,
                                                     tensors[f"{x}.weight_global_scale"])
        elif param == "weight" and arr.dtype == F8_E4M3 and f"{x}.weight_scale" in tensors:
            scale = tensors[f"{x}.weight_scale"]
            if scale.dtype == np.uint8:                   # MXFP8
                _ct_mx_check(qc, x, param, scale, arr.shape)
                out[name] = ct_mx_reference(decode_e4m3fn(arr), scale)
            else:
                out[name] = fp8_channel_reference(arr, scale)
    return out


def _ct_mx_check(qc, module, param, scale, shape):
    wa = _ct_scheme_for(qc, module, param)["weights"]
    if wa.get("group_size") != 32 or scale.shape[-1] * 32 != shape[-1]:
        raise ValueError(f"{module}.weight_scale: {scale.shape} is not one E8M0 byte per 32 "
                         f"of {tuple(shape)} (group_size {wa.get('group_size')})")


def _ct_scheme_for(qc, module, param):
    import re

    for ign in qc.get("ignore", []):
        if (ign.startswith("re:") and re.match(ign[3:], module)) or ign == module:
            raise ValueError(f"{module}.{param} is quantized but {ign!r} ignores it")
    for g in qc["config_groups"].values():
        for t in g["targets"]:
            if t == "Linear" or t == module or (t.startswith("re:") and re.match(t[3:], module)):
                return g
    raise ValueError(f"no config group targets {module}")


# --------------------------------------------------------------------------------------------
# 3. GPTQ
# --------------------------------------------------------------------------------------------


def gptq_reference(q, z, s, g_idx) -> np.ndarray:
    """GPTQModel's dequantize (gptqmodel/nn_modules/qlinear/__init__.py, PackableQuantLinear.
    dequantize_weight): ``weights = self.scales[self.g_idx.long()] * (weight - zeros[self.
    g_idx.long()])``: weight and zeros are integer tensors (dequant_dtype int8/int16), scales
    float16, so the product is float16: one rounding of the exact value s * (q - z) (a 9-bit
    integer times an 11-bit scale is exact in float32).  q [K, N] (in x out), z and s [G, N],
    g_idx [K].  Returns W [K, N]; the nn.Linear weight is W.T."""
    g = np.asarray(g_idx, dtype=np.int64)
    d = (np.asarray(q, dtype=np.int64) - np.asarray(z, dtype=np.int64)[g]).astype(np.float32)
    prod = (s.astype(np.float32)[g] * d).astype(np.float32)
    return _round_to(prod, np.float16)


_GPTQ_V1_ADD = {2: 0x55555555, 4: 0x11111111, 8: 0x01010101}


def gptq_v1_to_v2_qzeros(qzeros, bits) -> np.ndarray:
    """GPTQModel convert_gptq_v1_to_v2_format_module: ``module.qzeros.data +=
    0b00010001000100010001000100010001`` (4 bits; 0x01010101 for 8): one int32 addition per
    word, which adds 1 to each zero point because v1 files stored zero - 1 ("v1 checkpoint
    format used to do `qzeros -= 1` before serialization, thus the additions here do not
    overflow").  The addition wraps modulo 2**32 and a nibble 0xF would carry into its
    neighbour; v1 files with a stored 0xF (zero point 16, impossible for 4 bits) or with zero
    point 0 (AutoGPTQ's ``-1`` corrupts the word) are not made here."""
    w = np.asarray(qzeros, dtype=np.int32).view(np.uint32).astype(np.uint64)
    return ((w + _GPTQ_V1_ADD[bits]) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


def make_gptq(rng, *, bits=4, group_size=128, desc_act=False, sym=True,
              checkpoint_format="gptq", hidden=160, inter=96, kv=32, vocab=48,
              with_g_idx=True) -> Case:
    """GPTQ as AutoGPTQ / GPTQModel / optimum write it (quant_method "gptq").

    Sources: GPTQModel gptqmodel/nn_modules/qlinear/__init__.py (pack_block:
    ``_pack_rows_2_4_8`` views 32 input rows as [bits, 32/bits, N] and ORs row 8i+j << 4j into
    qweight row i; qzeros ``qzeros_np[:, col] |= zeros_np[:, col*pf + j] << (bits * j)``; scales
    ``.to(float16)``; dequantize_weight, see gptq_reference), gptqmodel/utils/model.py
    (convert_gptq_v1_to_v2_format_module, see gptq_v1_to_v2_qzeros), transformers 5.24
    utils/quantization_config.py GPTQConfig (fields; ``checkpoint_format`` is the legacy name of
    ``format``: "gptq" (v1) or "gptq_v2").

    Stored per Linear X with in_features K, out_features N, pf = 32 / bits:
      X.qweight  I32 [K/pf, N]   packed DOWN the input rows:
                   qweight[i, n] bits [bits*j, bits*j + bits) = q[pf*i + j, n]
                   (4 bits: row 8i+j in nibble j)
      X.qzeros   I32 [G, N/pf]   packed ALONG the outputs, same slot order:
                   qzeros[g, i] slot j = z[g, pf*i + j]  (v1: z - 1; v2: z)
      X.scales   F16 [G, N]
      X.g_idx    I32 [K]         group of each input row; G = ceil(K / group_size)
    Codes q and zero points z are unsigned in [0, 2**bits - 1]; sym: z = 2**(bits-1) (v1 stores
    7 = 0x77777777 per word for 4 bits).  desc_act=False: g_idx[k] = k // group_size;
    desc_act=True: the act-order permutation ``perm``: g_idx[perm[i]] = i // group_size (rows
    stay in their original order in qweight).  group_size=-1: one group.  with_g_idx=False
    leaves g_idx out (old GPTQ-for-LLaMa files; desc_act must be False).

    Reference: gptq_reference (float16 arithmetic), output X.weight [N, K] = W.T.
    Edge cases: hidden=160 with group 128 ends on a partial group (K % group_size != 0),
    down_proj's K = 96 < 128 is one partial group; an all-zero block (q == z) in q_proj."""
    if checkpoint_format not in ("gptq", "gptq_v2"):
        raise ValueError(checkpoint_format)
    if desc_act and not with_g_idx:
        raise ValueError("desc_act needs g_idx")
    pf = 32 // bits
    maxq = (1 << bits) - 1
    v1 = checkpoint_format == "gptq"
    tensors, reference, exact, groups, plain = {}, {}, {}, {}, []

    def put_plain(name, arr):
        tensors[name] = arr
        plain.append(name)

    def quantized(x, N, K, first=False):
        if K % pf or N % pf:
            raise ValueError(f"{x}: K={K} and N={N} must be multiples of {pf}")
        gsz = K if group_size == -1 else group_size
        G = -(-K // gsz)
        if desc_act:
            perm = rng.permutation(K)
            g_idx = np.empty(K, dtype=np.int32)
            g_idx[perm] = np.arange(K) // gsz
        else:
            g_idx = (np.arange(K) // gsz).astype(np.int32)
        q = rng.integers(0, maxq + 1, size=(K, N))
        if sym:
            z = np.full((G, N), 1 << (bits - 1), dtype=np.int64)
        else:
            z = rng.integers(1 if v1 else 0, maxq + 1, size=(G, N))
        if first:
            rows = np.nonzero(g_idx == 0)[0][:4]
            q[rows, :pf] = z[0, :pf]                     # an all-zero block
            q[0, pf], q[1, pf] = 0, maxq
        s = _rand_scales(rng, (G, N), np.float16, 0.001, 0.03)
        stored_z = z - 1 if v1 else z
        tensors[f"{x}.qweight"] = pack_words(q, bits, axis=0)
        tensors[f"{x}.qzeros"] = pack_words(stored_z, bits, axis=1)
        tensors[f"{x}.scales"] = s
        members = [f"{x}.qweight", f"{x}.qzeros", f"{x}.scales"]
        if with_g_idx:
            tensors[f"{x}.g_idx"] = g_idx
            members.append(f"{x}.g_idx")
        w = f"{x}.weight"
        reference[w] = np.ascontiguousarray(gptq_reference(q, z, s, g_idx).T)
        exact[w] = np.ascontiguousarray(
            (s.astype(np.float64)[g_idx] * (q - z[g_idx]).astype(np.float64)).T)
        groups[w] = members

    put_plain("model.embed_tokens.weight",
              rng.normal(0, 0.02, (vocab, hidden)).astype(np.float16))
    p = "model.layers.0"
    put_plain(f"{p}.input_layernorm.weight", rng.normal(1, 0.1, hidden).astype(np.float16))
    put_plain(f"{p}.post_attention_layernorm.weight",
              rng.normal(1, 0.1, hidden).astype(np.float16))
    for i, (sub, (N, K)) in enumerate(_llama_linears(hidden, inter, kv).items()):
        quantized(f"{p}.{sub}", N, K, first=(i == 0))
    put_plain(f"{p}.self_attn.o_proj.bias", rng.normal(0, 0.01, hidden).astype(np.float16))
    put_plain("model.norm.weight", rng.normal(1, 0.1, hidden).astype(np.float16))
    put_plain("lm_head.weight", rng.normal(0, 0.02, (vocab, hidden)).astype(np.float16))

    qc = {"bits": bits, "group_size": group_size, "desc_act": desc_act, "sym": sym,
          "lm_head": False, "quant_method": "gptq", "checkpoint_format": checkpoint_format,
          "damp_percent": 0.05, "true_sequential": True, "static_groups": False,
          "pack_dtype": "int32", "meta": {"quantizer": ["gptqmodel:4.2.5"]}}
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
              "hidden_size": hidden, "intermediate_size": inter, "num_hidden_layers": 1,
              "vocab_size": vocab, "torch_dtype": "float16", "quantization_config": qc}
    name = (f"gptq_{'v1' if v1 else 'v2'}_{bits}bit_g{group_size}"
            f"{'_act' if desc_act else ''}_{'sym' if sym else 'asym'}"
            f"{'' if with_g_idx else '_nogidx'}")
    return _check_case(Case(tensors, config, reference, plain, "gptq", name, groups, exact,
                            {"format": "pt"},
                            "GPTQ: partial last group, desc_act permutation" if desc_act
                            else "GPTQ: partial last group"))


def dequantize_gptq(tensors, config) -> dict:
    qc = config["quantization_config"]
    bits, gsz = qc["bits"], qc["group_size"]
    v1 = qc.get("checkpoint_format", qc.get("format", "gptq")) == "gptq"
    out = {}
    for name in tensors:
        if not name.endswith(".qweight"):
            continue
        x = name[: -len(".qweight")]
        q = unpack_words(tensors[name], bits, axis=0)
        qz = tensors[f"{x}.qzeros"]
        if v1:
            qz = gptq_v1_to_v2_qzeros(qz, bits)
        z = unpack_words(qz, bits, axis=1)
        s = tensors[f"{x}.scales"]
        K = q.shape[0]
        g_idx = tensors.get(f"{x}.g_idx")
        if g_idx is None:
            g_idx = np.arange(K) // (K if gsz == -1 else gsz)
        out[f"{x}.weight"] = np.ascontiguousarray(gptq_reference(q, z, s, g_idx).T)
    return out


# --------------------------------------------------------------------------------------------
# 4. AWQ
# --------------------------------------------------------------------------------------------


def awq_reference(q, z, s, group_size) -> np.ndarray:
    """AutoAWQ awq/utils/packing_utils.py dequantize_gemm: unpack, reverse_awq_order, ``& 0xF``,
    ``scales.repeat_interleave(group_size, 0)``, ``izeros.repeat_interleave(group_size, 0)``,
    ``iweight = (iweight - izeros) * scales``: int8 - int8, times float16 -> float16 (one
    rounding of the exact product).  transformers' AWQ integration and compressed-tensors'
    AutoAWQConverter -> pack-quantized decompress (``(q-8) - (z-8)`` times the f16 scale, in
    f16) compute the same.  q [K, N], z and s [K/group, N] -> W [K, N]."""
    zf = np.repeat(np.asarray(z, dtype=np.int64), group_size, axis=0)
    sf = np.repeat(s.astype(np.float32), group_size, axis=0)
    prod = ((np.asarray(q, dtype=np.int64) - zf).astype(np.float32) * sf).astype(np.float32)
    return _round_to(prod, np.float16)


def make_awq(rng, *, group_size=128, hidden=256, inter=384, kv=64, vocab=48) -> Case:
    """AutoAWQ GEMM (quant_method "awq", version "gemm", bits 4, zero_point true).

    Sources: AutoAWQ awq/utils/packing_utils.py (AWQ_ORDER / AWQ_REVERSE_ORDER, unpack_awq:
    ``bitwise_right_shift(qweight[:, :, None], arange(0, 32, 4))`` along dim 1,
    dequantize_gemm, see awq_reference); compressed-tensors 0.20 entrypoints/convert/
    converters/autoawq.py (AutoAWQConverter: the same reverse order, qweight [K, N/8]);
    transformers 5.24 AwqConfig (``version`` is the legacy name of ``format``).

    Stored per Linear X (K in, N out):
      X.qweight  I32 [K, N/8]           packed ALONG the outputs, interleaved:
                   word [k, w] nibble j = q[k, 8w + AWQ_ORDER[j]]
                   nibbles (bits 3..0 first): q0 q2 q4 q6 q1 q3 q5 q7
      X.qzeros   I32 [K/group, N/8]     zero points 0..15, same order, no offset
      X.scales   F16 [K/group, N]
    Reference: awq_reference (float16), output X.weight [N, K] = W.T.  K must be a multiple
    of group_size (dequantize_gemm repeats each group's row group_size times).
    Edge: an all-zero block (q == z), min and max codes."""
    tensors, reference, exact, groups, plain = {}, {}, {}, {}, []

    def put_plain(name, arr):
        tensors[name] = arr
        plain.append(name)

    def quantized(x, N, K, first=False):
        if K % group_size or N % 8:
            raise ValueError(f"{x}: K={K} must be a multiple of {group_size}, N={N} of 8")
        G = K // group_size
        q = rng.integers(0, 16, size=(K, N))
        z = rng.integers(0, 16, size=(G, N))
        if first:
            q[:4, :8] = z[0, :8]
            q[5, 0], q[5, 1] = 0, 15
        s = _rand_scales(rng, (G, N), np.float16, 0.001, 0.03)
        tensors[f"{x}.qweight"] = pack_words(q, 4, axis=1, order=AWQ_ORDER)
        tensors[f"{x}.qzeros"] = pack_words(z, 4, axis=1, order=AWQ_ORDER)
        tensors[f"{x}.scales"] = s
        w = f"{x}.weight"
        reference[w] = np.ascontiguousarray(awq_reference(q, z, s, group_size).T)
        exact[w] = np.ascontiguousarray(
            ((q - np.repeat(z, group_size, 0)).astype(np.float64)
             * np.repeat(s.astype(np.float64), group_size, 0)).T)
        groups[w] = [f"{x}.qweight", f"{x}.qzeros", f"{x}.scales"]

    put_plain("model.embed_tokens.weight",
              rng.normal(0, 0.02, (vocab, hidden)).astype(np.float16))
    p = "model.layers.0"
    put_plain(f"{p}.input_layernorm.weight", rng.normal(1, 0.1, hidden).astype(np.float16))
    put_plain(f"{p}.post_attention_layernorm.weight",
              rng.normal(1, 0.1, hidden).astype(np.float16))
    for i, (sub, (N, K)) in enumerate(_llama_linears(hidden, inter, kv).items()):
        quantized(f"{p}.{sub}", N, K, first=(i == 0))
    put_plain("model.norm.weight", rng.normal(1, 0.1, hidden).astype(np.float16))
    put_plain("lm_head.weight", rng.normal(0, 0.02, (vocab, hidden)).astype(np.float16))
    qc = {"quant_method": "awq", "bits": 4, "group_size": group_size, "zero_point": True,
          "version": "gemm", "modules_to_not_convert": None}
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
              "hidden_size": hidden, "intermediate_size": inter, "num_hidden_layers": 1,
              "vocab_size": vocab, "torch_dtype": "float16", "quantization_config": qc}
    return _check_case(Case(tensors, config, reference, plain, "awq", f"awq_gemm_g{group_size}",
                            groups, exact, {"format": "pt"}, "AutoAWQ GEMM"))


def dequantize_awq(tensors, config) -> dict:
    qc = config["quantization_config"]
    gsz = qc["group_size"]
    out = {}
    for name in tensors:
        if not name.endswith(".qweight"):
            continue
        x = name[: -len(".qweight")]
        q = unpack_words(tensors[name], 4, axis=1, order=AWQ_ORDER)
        z = unpack_words(tensors[f"{x}.qzeros"], 4, axis=1, order=AWQ_ORDER)
        out[f"{x}.weight"] = np.ascontiguousarray(
            awq_reference(q, z, tensors[f"{x}.scales"], gsz).T)
    return out


# --------------------------------------------------------------------------------------------
# 5. Diffusion "scaled FP8"
# --------------------------------------------------------------------------------------------

_FLUX_LINEARS = {"double_blocks.0.img_attn.qkv": (96, 32),
                 "double_blocks.0.img_attn.proj": (32, 32),
                 "double_blocks.0.img_mlp.0": (64, 32), "double_blocks.0.img_mlp.2": (32, 64),
                 "single_blocks.0.linear1": (80, 32)}
_DIFFUSERS_LINEARS = {"transformer_blocks.0.attn.to_q": (32, 32),
                      "transformer_blocks.0.attn.to_k": (32, 32),
                      "transformer_blocks.0.attn.to_out.0": (32, 32),
                      "transformer_blocks.0.ff.net.0.proj": (64, 32),
                      "transformer_blocks.0.ff.net.2": (32, 64)}
_WAN_LINEARS = {"blocks.0.self_attn.q": (48, 64), "blocks.0.self_attn.o": (48, 48),
                "blocks.0.ffn.0": (96, 64), "blocks.0.ffn.2": (64, 96)}


def comfy_quant_bytes(conf: dict) -> np.ndarray:
    """A ``.comfy_quant`` tensor: ComfyUI comfy/utils.py convert_old_quants writes
    ``torch.tensor(list(json.dumps(v).encode('utf-8')), dtype=torch.uint8)`` (Python's default
    separators: '{"format": "float8_e4m3fn"}')."""
    return np.frombuffer(json.dumps(conf).encode("utf-8"), dtype=np.uint8).copy()


def scaled_fp8_eager(codes, scale, dtype) -> np.ndarray:
    """comfy_kitchen's eager (CPU) backend ``dequantize_per_tensor_fp8``:
    ``x.to(dtype=output_type) * scale.to(dtype=output_type)``: the scale is first rounded to
    the compute dtype and the product rounded in it (its CUDA kernel and the AMD one compute
    ``(x.float() * scale.float()).to(dtype)`` instead).  An alternative to the float32
    reference, for bf16/f16 outputs; returns float32 holding ``dtype`` values."""
    dt = _OUT_DTYPES[dtype] if isinstance(dtype, str) else np.dtype(dtype)
    dec = decode_e4m3fn if np.dtype(codes.dtype) == F8_E4M3 else decode_e5m2
    v = _round_to(dec(codes).astype(np.float32), dt)
    s = _round_to(np.asarray(scale, dtype=np.float32), dt)
    return _round_to((v * s).astype(np.float32), dt)


def make_scaled_fp8(rng, *, spelling="comfy", fp8="e4m3", scale_shape=(), input_scale=True,
                    hint="comfy_quant", block_size=16, two_level=False,
                    full_precision_mm=False) -> Case:
    """Diffusion "scaled FP8": an FP8 weight times a float32 scale.

    spelling="comfy" (ComfyUI's own repackages, e.g. flux1-dev-fp8-scaled), names under
    ``model.diffusion_model.``:
        m.weight        F8_E4M3 (or F8_E5M2) [out, in]
        m.scale_weight  F32 [] (scale_shape=()) or [1]
        m.scale_input   F32 []  (input_scale=True; 1.0 is common)
        model.diffusion_model.scaled_fp8   the marker: an empty F8 tensor [0] whose dtype is
                        the FP8 type ([2] elements means full_precision_matrix_mult)
      (comfy/utils.py convert_old_quants: finds ``{prefix}scaled_fp8``, renames
      ``.scale_weight`` -> ``.weight_scale`` and ``.scale_input`` -> ``.input_scale``, drops an
      input scale of 1.0, and labels each layer {"format": "float8_e4m3fn"} whatever the marker's
      dtype ("TODO: check if anyone did some non e4m3fn scaled checkpoints").)
    spelling="comfy_quant" (ComfyUI's current mixed-precision files, QUANTIZATION.md):
        m.weight F8, m.weight_scale F32 [], m.input_scale F32 [] and the per-layer hint:
        hint="comfy_quant": ``m.comfy_quant`` U8 = JSON {"format": "float8_e4m3fn"} (or
        "float8_e5m2", QUANT_ALGOS' keys); hint="header": the header's ``__metadata__``
        ``_quantization_metadata`` = JSON {"format_version": "1.0", "layers": {m: {"format":
        ...}}}; hint="both".  The layer config's keys are ComfyUI's: "format" and, with
        full_precision_mm=True, "full_precision_matrix_mult": true (what convert_old_quants
        writes for a two-element scaled_fp8 marker; "group_size" belongs to block formats).
    spelling="diffusers": ``transformer_blocks.0.attn.to_q.weight`` F8 + ``.weight_scale`` F32 [1]
        + ``.input_scale`` F32 [1] (the Lightricks LTX-2 / diffusers spelling).
    spelling="block" (kohya-ss/musubi-tuner fp8_optimization_utils.py, block mode): ``m.weight``
        F8 [out, in] + ``m.scale_weight`` F32 [out, in/block_size, 1], blocks along the input
        axis (dequant: ``weight.to(scale.dtype).view(out, n_blocks, -1) * scale_weight``);
        two_level=True adds musubi's newer ``m.scale_weight_tensor`` F32 [] (then multiplied:
        ``dequantized_weight * weight_tensor_scale``, a second float32 rounding).

    Reference: float32(code * scale): the FP8 code is exact in float32 and one float32
    multiply rounds (musubi: ``weight.to(scale.dtype) * scale_weight`` with F32 scales;
    comfy_kitchen's CUDA kernel: ``(x.float() * scale.float()).to(dtype)``).  ComfyUI's CPU
    path (comfy_kitchen eager) multiplies in the compute dtype instead: scaled_fp8_eager.
    Plain: biases and norms (BF16) and the layers left unquantized (img_in, final_layer).
    Edge: -0 codes, an all-zero weight row, a layer with a tiny scale (1e-3 / 448: the
    stable-diffusion.cpp PR #1898 white-image case)."""
    fdt, dec = (F8_E4M3, decode_e4m3fn) if fp8 == "e4m3" else (F8_E5M2, decode_e5m2)
    fmt = "float8_e4m3fn" if fp8 == "e4m3" else "float8_e5m2"
    tensors, reference, exact, groups, plain = {}, {}, {}, {}, []
    metadata = None
    layers_meta = {}

    def put_plain(name, arr):
        tensors[name] = arr
        plain.append(name)

    if spelling == "comfy":
        prefix, linears = "model.diffusion_model.", _FLUX_LINEARS
    elif spelling == "comfy_quant":
        prefix, linears = "model.diffusion_model.", _FLUX_LINEARS
    elif spelling == "diffusers":
        prefix, linears = "", _DIFFUSERS_LINEARS
    elif spelling == "block":
        prefix, linears = "model.diffusion_model.", _WAN_LINEARS
    else:
        raise ValueError(spelling)

    if spelling in ("comfy", "comfy_quant"):
        put_plain(f"{prefix}img_in.weight", _bf16(rng.normal(0, 0.02, (32, 16))))
        put_plain(f"{prefix}img_in.bias", _bf16(rng.normal(0, 0.02, 32)))
    for i, (m, (N, K)) in enumerate(linears.items()):
        x = prefix + m
        codes = (rand_e4m3_codes if fp8 == "e4m3" else rand_e5m2_codes)(rng, (N, K))
        if i == 0:
            codes[3, :] = 0x80                     # a row of negative zeros
            codes[4, :] = 0x00                     # an all-zero row
        w = f"{x}.weight"
        tensors[w] = codes.view(fdt)
        v = dec(codes)
        if spelling == "block":
            if K % block_size:
                raise ValueError(f"{x}: in={K} is not a multiple of block_size={block_size}")
            nb = K // block_size
            sc = _rand_scales(rng, (N, nb, 1), np.float32, 1e-4, 1e-2)
            sname = f"{x}.scale_weight"
            tensors[sname] = sc
            members = [w, sname]
            s_full = np.repeat(sc[:, :, 0], block_size, axis=1)
            ref = (v.astype(np.float32) * s_full).astype(np.float32)
            ex = v * s_full.astype(np.float64)
            if two_level:
                ts = np.array(rng.uniform(0.5, 2.0), dtype=np.float32)
                tensors[f"{x}.scale_weight_tensor"] = ts
                members.append(f"{x}.scale_weight_tensor")
                ref = (ref * ts).astype(np.float32)
                ex = ex * float(ts)
        else:
            val = (1e-3 / 448.0) if i == 1 else rng.uniform(1e-4, 1e-2)
            shape = (1,) if spelling == "diffusers" else tuple(scale_shape)
            sc = np.full(shape, val, dtype=np.float32)
            sname = f"{x}.scale_weight" if spelling == "comfy" else f"{x}.weight_scale"
            tensors[sname] = sc
            members = [w, sname]
            ref = (v.astype(np.float32) * np.float32(sc.reshape(-1)[0])).astype(np.float32)
            ex = v * float(sc.reshape(-1)[0])
            if input_scale:
                iname = f"{x}.scale_input" if spelling == "comfy" else f"{x}.input_scale"
                tensors[iname] = np.full(shape, 1.0 if i % 2 else rng.uniform(0.01, 1),
                                         dtype=np.float32)
                members.append(iname)
            if spelling == "comfy_quant":
                conf = {"format": fmt}
                if full_precision_mm:
                    conf["full_precision_matrix_mult"] = True
                layers_meta[x] = conf
                if hint in ("comfy_quant", "both"):
                    tensors[f"{x}.comfy_quant"] = comfy_quant_bytes(conf)
                    members.append(f"{x}.comfy_quant")
        reference[w], exact[w] = ref, ex
        groups[w] = members
        put_plain(f"{x}.bias", _bf16(rng.normal(0, 0.01, N)))
    if spelling in ("comfy", "comfy_quant"):
        put_plain(f"{prefix}final_layer.linear.weight", _bf16(rng.normal(0, 0.02, (16, 32))))
        put_plain(f"{prefix}double_blocks.0.img_attn.norm.query_norm.scale",
                  _bf16(rng.normal(1, 0.1, 16)))
    if spelling == "comfy":
        tensors[f"{prefix}scaled_fp8"] = np.zeros(2 if full_precision_mm else 0, dtype=fdt)
    if spelling == "comfy_quant" and hint in ("header", "both"):
        metadata = {"_quantization_metadata": json.dumps({"format_version": "1.0",
                                                          "layers": layers_meta})}
    name = f"scaled_fp8_{spelling}_{fp8}"
    if spelling == "comfy":
        name += "_s" + ("1" if tuple(scale_shape) == (1,) else "0d")
    if spelling == "comfy_quant":
        name += f"_{hint}"
    if spelling == "block" and two_level:
        name += "_2level"
    return _check_case(Case(tensors, None, reference, plain, "scaled_fp8", name, groups, exact,
                            metadata, f"diffusion scaled FP8, {spelling} spelling"))


def dequantize_scaled_fp8(tensors, metadata=None) -> dict:
    out = {}
    for w, arr in tensors.items():
        if not w.endswith(".weight") or np.dtype(arr.dtype) not in (F8_E4M3, F8_E5M2):
            continue
        x = w[: -len(".weight")]
        sc = tensors.get(f"{x}.scale_weight", tensors.get(f"{x}.weight_scale"))
        if sc is None:
            raise ValueError(f"{w} holds FP8 codes without a scale")
        v = (decode_e4m3fn if np.dtype(arr.dtype) == F8_E4M3 else decode_e5m2)(arr)
        v = v.astype(np.float32)
        N, K = arr.shape
        if sc.ndim == 3:
            nb = sc.shape[1]
            r = (v.reshape(N, nb, K // nb) * sc.astype(np.float32)).astype(np.float32)
            ts = tensors.get(f"{x}.scale_weight_tensor")
            if ts is not None:
                r = (r * np.float32(ts)).astype(np.float32)
            out[w] = r.reshape(N, K)
        elif sc.size == 1:
            out[w] = (v * np.float32(sc.reshape(-1)[0])).astype(np.float32)
        elif sc.shape == (N, 1):
            out[w] = (v * sc.astype(np.float32)).astype(np.float32)
        else:
            raise ValueError(f"{x}: scale shape {sc.shape} does not fit {arr.shape}")
    return out


# --------------------------------------------------------------------------------------------
# Dispatch
# --------------------------------------------------------------------------------------------


def dequantize_reference(case: Case) -> dict:
    """The reference recomputed from ``case.tensors`` (+ config / metadata) alone."""
    if case.layout == "deepseek_v4":
        return dequantize_deepseek_v4(case.tensors, case.config)
    if case.layout in ("ct_pack_quantized", "ct_mixed_precision", "ct_mx"):
        return dequantize_ct(case.tensors, case.config)
    if case.layout == "gptq":
        return dequantize_gptq(case.tensors, case.config)
    if case.layout == "awq":
        return dequantize_awq(case.tensors, case.config)
    if case.layout == "scaled_fp8":
        return dequantize_scaled_fp8(case.tensors, case.metadata)
    raise ValueError(case.layout)


# name -> factory(rng): the standard valid cases
CASES = {
    "deepseek_v4": lambda rng: make_deepseek_v4(rng),
    "deepseek_v4_2layers_4experts": lambda rng: make_deepseek_v4(rng, layers=2, n_experts=4),
    "deepseek_v4_base": lambda rng: make_deepseek_v4(rng, variant="flash_base"),
    "ct_w4a16_group32_sym_bf16": lambda rng: make_ct_pack_quantized(rng),
    "ct_w4a16_group32_sym_f16": lambda rng: make_ct_pack_quantized(rng, scale_dtype="f16"),
    "ct_w4a16_group32_asym_bf16": lambda rng: make_ct_pack_quantized(rng, symmetric=False),
    "ct_w4a16_channel_asym_f32_k100": lambda rng: make_ct_pack_quantized(
        rng, strategy="channel", symmetric=False, scale_dtype="f32", hidden=100),
    "ct_w8a16_group32_sym_bf16": lambda rng: make_ct_pack_quantized(rng, num_bits=8),
    "ct_w4a16_group32_sym_bf16_moe": lambda rng: make_ct_pack_quantized(rng, moe=True),
    "ct_mixed_bf16": lambda rng: make_ct_mixed_precision(rng),
    "ct_mixed_f32": lambda rng: make_ct_mixed_precision(rng, fp8_scale_dtype="f32"),
    "gptq_v1_4bit": lambda rng: make_gptq(rng),
    "gptq_v1_4bit_act_asym": lambda rng: make_gptq(rng, desc_act=True, sym=False),
    "gptq_v2_4bit_act_asym": lambda rng: make_gptq(rng, desc_act=True, sym=False,
                                                   checkpoint_format="gptq_v2"),
    "gptq_v1_8bit_asym": lambda rng: make_gptq(rng, bits=8, sym=False),
    "gptq_v1_4bit_perchannel": lambda rng: make_gptq(rng, group_size=-1),
    "gptq_v1_4bit_no_g_idx": lambda rng: make_gptq(rng, with_g_idx=False),
    "awq_gemm": lambda rng: make_awq(rng),
    "scaled_fp8_comfy_0d": lambda rng: make_scaled_fp8(rng),
    "scaled_fp8_comfy_1_e5m2": lambda rng: make_scaled_fp8(rng, fp8="e5m2", scale_shape=(1,)),
    "scaled_fp8_comfy_quant": lambda rng: make_scaled_fp8(rng, spelling="comfy_quant"),
    "scaled_fp8_comfy_header": lambda rng: make_scaled_fp8(rng, spelling="comfy_quant",
                                                           hint="header"),
    "scaled_fp8_diffusers": lambda rng: make_scaled_fp8(rng, spelling="diffusers"),
    "scaled_fp8_block": lambda rng: make_scaled_fp8(rng, spelling="block"),
    "scaled_fp8_block_2level": lambda rng: make_scaled_fp8(rng, spelling="block",
                                                           two_level=True),
    # (after the others, so that adding them left the others' seeds as they were)
    "ct_mxfp4": lambda rng: make_ct_mx(rng),
    "ct_mxfp4_moe": lambda rng: make_ct_mx(rng, moe=True),
    "ct_mxfp8": lambda rng: make_ct_mx(rng, fmt="mxfp8"),
}


def all_cases(seed: int = 0) -> list:
    """Every standard case (named by its CASES key), each from its own generator seeded from
    ``seed`` and the case's position."""
    out = []
    for i, (key, f) in enumerate(CASES.items()):
        c = f(np.random.default_rng([seed, i]))
        c.name = key
        out.append(c)
    return out


# --------------------------------------------------------------------------------------------
# Malformed variants
# --------------------------------------------------------------------------------------------


def _without(case, *names):
    c = case.copy()
    for n in names:
        del c.tensors[n]
    for out in list(c.groups):
        c.groups[out] = [m for m in c.groups[out] if m not in names]
    c.reference = {}
    c.exact = {}
    return c


def _mal(case, tag, description, mentions, keep_reference=False):
    c = case
    c.name = f"{case.name}:{tag}"
    if not keep_reference:
        c.reference, c.exact = {}, {}
    return Malformed(c, description, tuple(mentions))


def _m_ds_wrong_scale_shape(rng):
    c = make_deepseek_v4(rng).copy()
    s = "layers.0.attn.wq_b.scale"
    e = _u8(c.tensors[s])
    c.tensors[s] = np.concatenate([e, e[:1]], axis=0).view(F8_E8M0)
    return _mal(c, "wrong_scale_shape",
                "a dense scale with one tile row too many ([3, 2] for a [144, 136] weight)",
                ["layers.0.attn.wq_b.scale", "layers.0.attn.wq_b.weight"])


def _m_ds_missing_scale(rng):
    c = _without(make_deepseek_v4(rng), "layers.0.ffn.experts.1.w3.scale")
    return _mal(c, "missing_scale", "an FP4 expert (I8 packed codes) without its .scale",
                ["layers.0.ffn.experts.1.w3.weight"])


def _m_ds_expert_group16(rng):
    c = make_deepseek_v4(rng).copy()
    s = "layers.0.ffn.experts.0.w2.scale"
    e = _u8(c.tensors[s])
    c.tensors[s] = np.repeat(e, 2, axis=1).view(F8_E8M0)
    return _mal(c, "expert_group16",
                "an FP4 expert scale with one column per 16 inputs instead of 32",
                ["layers.0.ffn.experts.0.w2.scale"])


def _m_ds_scale_u8(rng):
    c = make_deepseek_v4(rng).copy()
    s = "layers.0.attn.wkv.scale"
    c.tensors[s] = _u8(c.tensors[s]).copy()
    return _mal(c, "scale_u8",
                "a .scale stored U8 rather than F8_E8M0: bytes that are exponents, typed as "
                "numbers (vllm#51946 read byte 120 as 120.0)",
                ["layers.0.attn.wkv.scale"])


def _m_ds_weight_e5m2(rng):
    c = make_deepseek_v4(rng).copy()
    w = "layers.0.attn.wo_a.weight"
    c.tensors[w] = _u8(c.tensors[w]).view(F8_E5M2)
    return _mal(c, "weight_e5m2", "a dense weight stored F8_E5M2 while config says fmt e4m3",
                ["layers.0.attn.wo_a.weight"])


def _m_ds_config_block64(rng):
    c = make_deepseek_v4(rng).copy()
    c.config["quantization_config"]["weight_block_size"] = [64, 64]
    return _mal(c, "config_block64",
                "config.json says weight_block_size [64, 64]; the scales are 128x128 tiles",
                ["weight_block_size"])


def _m_ds_config_fp8_experts(rng):
    c = make_deepseek_v4(rng).copy()
    c.config["expert_dtype"] = "fp8"
    return _mal(c, "config_fp8_experts",
                "config.json says expert_dtype fp8 but the experts are I8 packed FP4 "
                "(tokenspeed PR #1095 allocated them as FP8)",
                ["expert_dtype"])


def _m_ds_nan(rng):
    return _mal(make_deepseek_v4(rng, nan_scale=True), "nan_scale",
                "E8M0 byte 0xFF (NaN) in two scales: the format allows it; a tool either "
                "refuses naming the scale or writes NaN over the tile / block (reference kept)",
                ["layers.0.attn.wo_b.scale"], keep_reference=True)


def _m_ct_group_mismatch(rng):
    c = make_ct_pack_quantized(rng).copy()
    c.config["quantization_config"]["config_groups"]["group_0"]["weights"]["group_size"] = 64
    return _mal(c, "group_size_mismatch",
                "config group_size 64, weight_scale has K/32 columns",
                ["group_size", "model.layers.0.self_attn.q_proj.weight_scale"])


def _m_ct_scale_shape(rng):
    c = make_ct_pack_quantized(rng).copy()
    s = "model.layers.0.mlp.down_proj.weight_scale"
    c.tensors[s] = c.tensors[s][:, :-1].copy()
    return _mal(c, "wrong_scale_shape", "down_proj weight_scale [96, 4] for K=160, group 32",
                [s])


def _m_ct_missing_scale(rng):
    c = _without(make_ct_pack_quantized(rng), "model.layers.0.mlp.up_proj.weight_scale")
    return _mal(c, "missing_scale", "weight_packed without weight_scale",
                ["model.layers.0.mlp.up_proj.weight_packed"])


def _m_ct_missing_zero_point(rng):
    c = _without(make_ct_pack_quantized(rng, symmetric=False),
                 "model.layers.0.self_attn.k_proj.weight_zero_point")
    return _mal(c, "missing_zero_point",
                "symmetric: false but k_proj has no weight_zero_point",
                ["model.layers.0.self_attn.k_proj"])


def _m_ct_scale_i32(rng):
    c = make_ct_pack_quantized(rng).copy()
    s = "model.layers.0.self_attn.v_proj.weight_scale"
    c.tensors[s] = c.tensors[s].astype(np.float32).view(np.int32).copy()
    return _mal(c, "scale_i32", "weight_scale stored I32 (float bits typed as integers)", [s])


def _m_ct_shape_contradicts(rng):
    c = make_ct_pack_quantized(rng).copy()
    s = "model.layers.0.self_attn.o_proj.weight_shape"
    c.tensors[s] = np.array([96, 104], dtype=np.int64)
    return _mal(c, "weight_shape_contradicts",
                "weight_shape [96, 104] but weight_packed holds 12 words (96 codes) per row",
                [s])


def _m_ct_config_bits8(rng):
    c = make_ct_pack_quantized(rng).copy()
    c.config["quantization_config"]["config_groups"]["group_0"]["weights"]["num_bits"] = 8
    return _mal(c, "config_num_bits8", "config num_bits 8; the words hold 4-bit codes",
                ["num_bits"])


def _m_ct_missing_global(rng):
    c = _without(make_ct_mixed_precision(rng),
                 "model.layers.0.mlp.gate_proj.weight_global_scale")
    return _mal(c, "missing_global_scale", "NVFP4 weight_packed without weight_global_scale",
                ["model.layers.0.mlp.gate_proj"])


def _m_ct_nvfp4_nan(rng):
    return _mal(make_ct_mixed_precision(rng, nan_scale=True), "nvfp4_nan_scale",
                "E4M3 NaN (0x7F) in an NVFP4 block scale (reference kept: NaN over the block)",
                ["model.layers.0.mlp.gate_proj.weight_scale"], keep_reference=True)


def _m_ct_mxfp4_group16(rng):
    c = make_ct_mx(rng).copy()
    s = "model.layers.0.mlp.down_proj.weight_scale"
    c.tensors[s] = np.repeat(c.tensors[s], 2, axis=1)
    return _mal(c, "mxfp4_scale_group16",
                "MXFP4 down_proj weight_scale U8 [96, 10] for K=160: a byte per 16, not 32", [s])


def _m_ct_mxfp8_group16(rng):
    c = make_ct_mx(rng, fmt="mxfp8").copy()
    s = "model.layers.0.self_attn.q_proj.weight_scale"
    c.tensors[s] = np.repeat(c.tensors[s], 2, axis=1)
    return _mal(c, "mxfp8_scale_group16",
                "MXFP8 q_proj weight_scale U8 [96, 6] for K=96: E8M0 per 16 is not MX", [s])


def _m_ct_mx_missing_scale(rng):
    c = _without(make_ct_mx(rng, moe=True), "model.layers.1.mlp.experts.1.up_proj.weight_scale")
    return _mal(c, "mxfp4_missing_scale", "an MXFP4 expert's weight_packed without weight_scale",
                ["model.layers.1.mlp.experts.1.up_proj"])


def _m_gptq_qzeros_shape(rng):
    c = make_gptq(rng).copy()
    s = "model.layers.0.self_attn.q_proj.qzeros"
    c.tensors[s] = c.tensors[s][:, :-1].copy()
    return _mal(c, "qzeros_shape", "qzeros [2, 19] for N=160 (needs N/8 = 20 columns)", [s])


def _m_gptq_g_idx_range(rng):
    c = make_gptq(rng).copy()
    s = "model.layers.0.mlp.up_proj.g_idx"
    g = c.tensors[s].copy()
    g[5] = 7
    c.tensors[s] = g
    return _mal(c, "g_idx_out_of_range", "g_idx names group 7 of 2", [s])


def _m_gptq_g_idx_len(rng):
    c = make_gptq(rng).copy()
    s = "model.layers.0.mlp.gate_proj.g_idx"
    c.tensors[s] = c.tensors[s][:-8].copy()
    return _mal(c, "g_idx_length", "g_idx has 152 entries for 160 input rows", [s])


def _m_gptq_bits8_config(rng):
    c = make_gptq(rng).copy()
    c.config["quantization_config"]["bits"] = 8
    return _mal(c, "config_bits8", "config bits 8, tensors packed 8 codes per word",
                ["bits", "model.layers.0.self_attn.q_proj.qweight"])


def _m_gptq_missing_scales(rng):
    c = _without(make_gptq(rng), "model.layers.0.self_attn.o_proj.scales")
    return _mal(c, "missing_scales", "qweight without scales",
                ["model.layers.0.self_attn.o_proj"])


def _m_gptq_scales_i32(rng):
    c = make_gptq(rng).copy()
    s = "model.layers.0.self_attn.k_proj.scales"
    c.tensors[s] = c.tensors[s].astype(np.int32)
    return _mal(c, "scales_i32", "scales stored I32", [s])


def _m_awq_group_mismatch(rng):
    c = make_awq(rng).copy()
    c.config["quantization_config"]["group_size"] = 64
    return _mal(c, "group_size_mismatch", "config group_size 64, scales have K/128 rows",
                ["group_size"])


def _m_awq_gemv(rng):
    c = make_awq(rng).copy()
    c.config["quantization_config"]["version"] = "gemv"
    return _mal(c, "version_gemv", "version gemv (another packing) with GEMM-shaped tensors",
                ["gemv"])


def _m_awq_missing_qzeros(rng):
    c = _without(make_awq(rng), "model.layers.0.mlp.down_proj.qzeros")
    return _mal(c, "missing_qzeros", "zero_point true but down_proj has no qzeros",
                ["model.layers.0.mlp.down_proj"])


def _m_awq_scales_shape(rng):
    c = make_awq(rng).copy()
    s = "model.layers.0.mlp.down_proj.scales"
    c.tensors[s] = c.tensors[s][:-1].copy()
    return _mal(c, "wrong_scales_shape", "down_proj scales [2, 256] for K=384, group 128", [s])


def _m_fp8_scale_shape(rng):
    c = make_scaled_fp8(rng).copy()
    s = "model.diffusion_model.double_blocks.0.img_attn.proj.scale_weight"
    c.tensors[s] = np.full(3, 0.01, dtype=np.float32)
    return _mal(c, "wrong_scale_shape", "scale_weight [3] for a [32, 32] weight", [s])


def _m_fp8_scale_i32(rng):
    c = make_scaled_fp8(rng, spelling="diffusers").copy()
    s = "transformer_blocks.0.attn.to_k.weight_scale"
    c.tensors[s] = np.array([3], dtype=np.int32)
    return _mal(c, "scale_i32", "weight_scale stored I32", [s])


def _m_fp8_comfy_quant_contradicts(rng):
    c = make_scaled_fp8(rng, spelling="comfy_quant").copy()
    s = "model.diffusion_model.double_blocks.0.img_mlp.0.comfy_quant"
    c.tensors[s] = comfy_quant_bytes({"format": "float8_e5m2"})
    return _mal(c, "comfy_quant_contradicts",
                "comfy_quant says float8_e5m2, the weight is F8_E4M3", [s])


def _m_fp8_comfy_quant_not_json(rng):
    c = make_scaled_fp8(rng, spelling="comfy_quant").copy()
    s = "model.diffusion_model.single_blocks.0.linear1.comfy_quant"
    c.tensors[s] = np.frombuffer(b'{"format": float8', dtype=np.uint8).copy()
    return _mal(c, "comfy_quant_not_json", "a comfy_quant tensor that is not JSON", [s])


def _m_fp8_missing_scale(rng):
    c = _without(make_scaled_fp8(rng, spelling="comfy_quant"),
                 "model.diffusion_model.double_blocks.0.img_attn.qkv.weight_scale")
    return _mal(c, "missing_scale", "an FP8 weight with a comfy_quant marker but no scale",
                ["model.diffusion_model.double_blocks.0.img_attn.qkv.weight"])


def _m_fp8_header_names_missing_layer(rng):
    c = make_scaled_fp8(rng, spelling="comfy_quant", hint="header").copy()
    meta = json.loads(c.metadata["_quantization_metadata"])
    meta["layers"]["model.diffusion_model.double_blocks.9.img_attn.qkv"] = {"format":
                                                                            "float8_e4m3fn"}
    c.metadata = {"_quantization_metadata": json.dumps(meta)}
    return _mal(c, "header_names_missing_layer",
                "_quantization_metadata lists a layer the file does not hold",
                ["model.diffusion_model.double_blocks.9.img_attn.qkv"])


def _m_fp8_block_uneven(rng):
    c = make_scaled_fp8(rng, spelling="block").copy()
    s = "model.diffusion_model.blocks.0.ffn.2.scale_weight"
    sc = c.tensors[s]
    c.tensors[s] = np.concatenate([sc, sc[:, :1]], axis=1)
    return _mal(c, "block_uneven", "block scale_weight [64, 7, 1] for in=96 (96 % 7 != 0)",
                [s])


MALFORMED = {
    "deepseek_v4/wrong_scale_shape": _m_ds_wrong_scale_shape,
    "deepseek_v4/missing_scale": _m_ds_missing_scale,
    "deepseek_v4/expert_group16": _m_ds_expert_group16,
    "deepseek_v4/scale_u8": _m_ds_scale_u8,
    "deepseek_v4/weight_e5m2": _m_ds_weight_e5m2,
    "deepseek_v4/config_block64": _m_ds_config_block64,
    "deepseek_v4/config_fp8_experts": _m_ds_config_fp8_experts,
    "deepseek_v4/nan_scale": _m_ds_nan,
    "ct/group_size_mismatch": _m_ct_group_mismatch,
    "ct/wrong_scale_shape": _m_ct_scale_shape,
    "ct/missing_scale": _m_ct_missing_scale,
    "ct/missing_zero_point": _m_ct_missing_zero_point,
    "ct/scale_i32": _m_ct_scale_i32,
    "ct/weight_shape_contradicts": _m_ct_shape_contradicts,
    "ct/config_num_bits8": _m_ct_config_bits8,
    "ct/missing_global_scale": _m_ct_missing_global,
    "ct/nvfp4_nan_scale": _m_ct_nvfp4_nan,
    "ct/mxfp4_scale_group16": _m_ct_mxfp4_group16,
    "ct/mxfp8_scale_group16": _m_ct_mxfp8_group16,
    "ct/mxfp4_missing_scale": _m_ct_mx_missing_scale,
    "gptq/qzeros_shape": _m_gptq_qzeros_shape,
    "gptq/g_idx_out_of_range": _m_gptq_g_idx_range,
    "gptq/g_idx_length": _m_gptq_g_idx_len,
    "gptq/config_bits8": _m_gptq_bits8_config,
    "gptq/missing_scales": _m_gptq_missing_scales,
    "gptq/scales_i32": _m_gptq_scales_i32,
    "awq/group_size_mismatch": _m_awq_group_mismatch,
    "awq/version_gemv": _m_awq_gemv,
    "awq/missing_qzeros": _m_awq_missing_qzeros,
    "awq/wrong_scales_shape": _m_awq_scales_shape,
    "scaled_fp8/wrong_scale_shape": _m_fp8_scale_shape,
    "scaled_fp8/scale_i32": _m_fp8_scale_i32,
    "scaled_fp8/comfy_quant_contradicts": _m_fp8_comfy_quant_contradicts,
    "scaled_fp8/comfy_quant_not_json": _m_fp8_comfy_quant_not_json,
    "scaled_fp8/missing_scale": _m_fp8_missing_scale,
    "scaled_fp8/header_names_missing_layer": _m_fp8_header_names_missing_layer,
    "scaled_fp8/block_uneven": _m_fp8_block_uneven,
}


def malformed(name: str, rng=None) -> Malformed:
    """A hostile variant by name (see MALFORMED): ``Malformed(case, description, mentions)``."""
    if rng is None:
        rng = np.random.default_rng(zlib.crc32(name.encode()))
    try:
        f = MALFORMED[name]
    except KeyError:
        raise KeyError(f"no malformed case {name!r}; have {sorted(MALFORMED)}") from None
    return f(rng)
