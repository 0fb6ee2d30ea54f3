"""Tensor files converted by the C library's file jobs, in this process: convert_file,
convert_checkpoint, checkpoint_shards, quantize_checkpoint, dequantize_checkpoint.

The conversions call files/'s jobs (the code of ``dtcast cast``, ``quantize`` and
``dequantize``) through the extension module (python/ext/jobs.c) with the GIL released, so a
file is converted exactly as the CLI does it: the same streaming pipeline (memory stays at a
few 4 MiB blocks whatever the file size), the same speed on all threads, the same checks and
the same messages, and nothing is written on an error. String tensors (``to="string"``) are
converted whole in memory, as the CLI does. docs/files.md describes the files; the options below are the CLI's (``dtcast
cast --help``) under Python names; docs/python.md, "File jobs in process", describes
progress=, the errors and the warnings.

A sharded checkpoint (``X.safetensors.index.json``) can be converted in steps, so that a batch
engine spreads the shards over processes or machines sharing the output folder::

    for name in checkpoint_shards(src):                 # one task each, anywhere, any order
        convert_checkpoint(src, dst, to="bfloat16", shards=[name], write_index=False)
    convert_checkpoint(src, dst, index_only=True)       # the final step

which gives the same bytes as ``convert_checkpoint(src, dst, to="bfloat16")``
(examples/dask_checkpoint.py does it with Dask).
"""

import json
import os
import warnings

from . import _core

from ._errors import Error, Status, Warning

__all__ = ["convert_file", "convert_checkpoint", "checkpoint_shards", "quantize_checkpoint",
           "dequantize_checkpoint"]

INDEX_SUFFIX = ".safetensors.index.json"

# dtcast's rounding modes, and the longer names of the first two.
_ROUND = {"rne": "rne", "round": "round", "floor": "floor", "ceil": "ceil", "trunc": "trunc",
          "odd": "odd", "nearest_even": "rne", "nearest_away": "round"}
_PROFILES = ("exact", "onnx", "pypto", "ort-float16", "onnxconverter-common")  # dt_profile's order
_INT_OVERFLOW = ("wrap", "saturate")


# ---- options ------------------------------------------------------------------------

def _path(p, what):
    """A path as the CLI takes it: str, and never read as a flag or as stdin/stdout ("-")."""
    try:
        p = os.fsdecode(os.fspath(p))
    except TypeError:
        raise TypeError("%s: expected a str or os.PathLike path, not %s"
                        % (what, type(p).__name__)) from None
    if not p:
        raise Error("%s: an empty path" % what, Status.INVALID_ARGUMENT)
    # The CLI stops reading options at "--", so only "-" itself (stdin/stdout) needs a change.
    return os.path.join(".", p) if p == "-" else p


def _type_name(t, what):
    """dtcast's name of a type given as any name, code, numpy/ml_dtypes dtype or type the
    package takes (dtcast.types()); a str is passed on as it is when the extension module is
    not there (the CLI then checks it)."""
    try:
        from ._types import lookup
    except ImportError:
        if isinstance(t, str):
            return t
        raise
    try:
        return lookup(t).c_name
    except Error as e:
        raise Error("%s: %s" % (what, e), e.status) from None


def _globs(value, what):
    if value is None:
        return []
    if isinstance(value, (str, bytes, os.PathLike)):
        value = [value]
    out = []
    for g in value:
        if not isinstance(g, str):
            raise TypeError("%s: expected a str or a list of str, found %r" % (what, g))
        out.append(g)
    return out


def _options(to, src_type, select, exclude, round, saturate, int_overflow, profile, opset,
             threads, report, float6_packed, raw_codes=False):
    """The request of the cast job for these options, as a dict of its fields (checked here, so
    that a mistake is named by its Python keyword rather than by a flag the caller never
    wrote)."""
    params = {"report": bool(report), "float6_packed": bool(float6_packed),
              "raw_codes": bool(raw_codes)}
    if to is not None:
        params["to_name"] = _type_name(to, "to")
    if src_type is not None:
        params["src_name"] = _type_name(src_type, "src_type")
    params["select"] = _globs(select, "select")
    params["exclude"] = _globs(exclude, "exclude")
    prof = "exact" if profile is None else str(profile).lower()
    if prof not in _PROFILES:
        raise Error("profile: unknown profile %r (one of: %s)" % (profile, ", ".join(_PROFILES)),
                    Status.INVALID_ARGUMENT)
    if opset is not None and prof != "onnx":
        raise Error("opset: only the onnx profile takes an opset (profile=%r)" % prof,
                    Status.INVALID_ARGUMENT)
    params["profile"] = _PROFILES.index(prof)
    if prof == "onnx":
        if opset is not None:
            params["opset"] = int(opset)
            if not 1 <= params["opset"] <= _core.ONNX_OPSET_MAX:
                raise Error("opset: %d is not an ONNX opset (1 to %d)"
                            % (params["opset"], _core.ONNX_OPSET_MAX), Status.INVALID_ARGUMENT)
    mode = _ROUND.get(str(round).lower())
    if mode is None:
        raise Error("round: unknown rounding mode %r (one of: %s)" % (round, ", ".join(_ROUND)),
                    Status.INVALID_ARGUMENT)
    if mode != "rne":
        if prof != "exact":
            raise Error("round=%r: the %s profile rounds by its own rules" % (round, prof),
                        Status.INVALID_ARGUMENT)
        params["round"] = mode
    # saturate: None is the profile's default (exact: IEEE overflow; onnx: Cast's saturate=1).
    if saturate is not None:
        if prof == "exact":
            if saturate:
                params["float_overflow"] = 1
        elif prof == "onnx":
            params["saturate"] = 1 if saturate else 0
            if not saturate and params.get("opset", _core.ONNX_OPSET_MAX) < 19:
                raise Error("saturate=False needs ONNX opset 19 or later (Cast-%d has no "
                            "saturate attribute)" % params["opset"], Status.INVALID_ARGUMENT)
        else:
            raise Error("saturate: the pypto profile has no float overflow option",
                        Status.INVALID_ARGUMENT)
    if int_overflow not in _INT_OVERFLOW:
        raise Error("int_overflow: %r is not one of %s" % (int_overflow, ", ".join(_INT_OVERFLOW)),
                    Status.INVALID_ARGUMENT)
    if int_overflow == "saturate":
        if prof != "exact":
            raise Error("int_overflow='saturate': only the exact profile takes it",
                        Status.INVALID_ARGUMENT)
        params["int_overflow"] = 1
    params["threads"] = _threads(threads)
    return params


def _threads(threads):
    if threads is None:
        return 0
    if not hasattr(threads, "__index__") or isinstance(threads, bool) or threads < 0:
        raise Error("threads must be an integer >= 0, not %r" % (threads,), Status.INVALID_ARGUMENT)
    if threads > 4096:
        raise Error("threads: at most 4096, not %d" % threads, Status.INVALID_ARGUMENT)
    return int(threads)


# ---- the jobs in process ----------------------------------------------------------------------

def _code(name):
    from ._types import lookup
    return lookup(name).code


def _progress_fn(progress, what):
    """The callable the job calls and the function that closes a tqdm bar: progress=True is a
    tqdm bar when tqdm is installed (else nothing), a callable is called as it is."""
    if progress is None or progress is False:
        return None, None
    if progress is True:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return None, None
        bar = []

        def draw(done, total):
            if not bar:
                bar.append(tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024,
                                desc=what, leave=False))
            bar[0].update(done - bar[0].n)

        def close():
            if bar:
                bar[0].close()
        return draw, close
    if not callable(progress):
        raise TypeError("progress: expected a callable progress(done_bytes, total_bytes), True "
                        "or None, not %s" % type(progress).__name__)
    return progress, None


def _job(func, src, dst, params, progress, what):
    """Runs a job of the C library in this process (the GIL released while it runs); returns
    its report text. Its warnings go to warnings.warn (category dtcast.Warning); its
    error is raised as dtcast.Error with the tensor, file and offset it names."""
    fn, close = _progress_fn(progress, what)
    try:
        error, report, warned = func(os.fsencode(src), os.fsencode(dst), params, fn)
    finally:
        if close:
            close()
    for line in warned:
        warnings.warn(line, Warning, stacklevel=3)
    if error is not None:
        status, message, file, tensor, offset, usage = error
        # The job's status: the library's, the reader's or writer's (IO for a file that cannot
        # be opened or written), OUT_OF_MEMORY, BAD_FILE for a file that breaks its format.
        if usage:
            status = Status.INVALID_ARGUMENT
        e = Error(message.replace("--raw-codes casts", "raw_codes=True casts"), status)
        e.file, e.tensor, e.offset, e.usage = file, tensor, offset, bool(usage)
        raise e
    return report


def _cast(src, dst, params, progress, shards=None, index_only=False):
    """The cast job on src -> dst; returns its report text."""
    job = {k: v for k, v in params.items() if k not in ("to_name", "src_name")}
    if "to_name" in params:
        job["to"] = _code(params["to_name"])
    if "src_name" in params:
        job["src_type"] = _code(params["src_name"])
    if shards is not None:
        job["shards"] = shards
    job["index_only"] = bool(index_only)
    return _job(_core.cast_files, src, dst, job, progress, os.path.basename(src))


# ---- one file ---------------------------------------------------------------------------------

def convert_file(src, dst, *, to, src_type=None, select=None, exclude=None, round="rne",
                 saturate=None, int_overflow="wrap", profile=None, opset=None, threads=0,
                 report=False, float6_packed=False, raw_codes=False, progress=None):
    """Converts the tensors of the file src to type `to` and writes them to dst.

    The kinds of src and dst come from their names (.npy, .pb, .safetensors, .raw/.bin; see
    docs/files.md); a checkpoint converts its floating-point tensors and copies the others.
    Streamed in this process by the C library's cast job (the code of ``dtcast cast``, on all
    threads, with the GIL released): memory stays small whatever the file size, and on any
    error dst is left untouched.

    to            the target type: a name ("bfloat16", "bf16", "float8_e4m3fn", "float8e4m3fn"),
                  an ONNX code, or a numpy / ml_dtypes dtype (ml_dtypes.bfloat16)
    src_type      the type of raw input, or what a .npy uint8/uint16 array holds (--from)
    select        a glob or a list of globs: convert only the tensors whose name matches
    exclude       a glob or a list of globs: do not convert the tensors whose name matches
    round         "rne" (default), "round", "floor", "ceil", "trunc", "odd"; also
                  "nearest_even" (rne) and "nearest_away" (round)
    saturate      True: results beyond the max finite become +-max (--overflow saturate; under
                  profile "onnx", Cast's saturate=1); False: Inf/NaN (onnx: saturate=0);
                  None (default): the profile's default (exact: IEEE, onnx: saturate=1)
    int_overflow  "wrap" (default) or "saturate": integer results out of range
    profile       None or "exact" (default), "onnx" (ONNX Cast at `opset`, default the
                  latest), "pypto" (Ascend pypto.cast)
    threads       worker threads (0: automatic)
    report        True: return the per-tensor report (exact, rounded, overflowed ... counts,
                  the largest errors, the SQNR) as text; else None is returned
    float6_packed raw float6 input and output four elements in three bytes
    raw_codes     True: cast the codes of scaled tensors (a float8 weight with its weight_scale,
                  _blocks with _scales, ...) as plain values. Without it a checkpoint holding
                  such a tensor (one that select/exclude pick) raises dtcast.Error naming it:
                  its values are the codes times the scales (dtcast dequantize)
    progress      None (default): nothing; a callable progress(done_bytes, total_bytes), called
                  from the job a few times a second and for the last block (an exception it
                  raises cancels the job, nothing is written, and the exception propagates);
                  True: a tqdm bar when tqdm is installed (else nothing)

    Raises dtcast.Error (the job's one-line message, e.g. "w.npy: npy: no \\x93NUMPY magic at
    byte 0"; status IO for files that cannot be opened or written, BAD_FILE for a file that
    breaks its format, INVALID_ARGUMENT for a bad option; e.file, e.tensor, e.offset: the file,
    the tensor and the byte offset it is about, or None). Warnings go to warnings.warn with the
    category dtcast.Warning. A string source or target (``to="string"``) is converted whole in
    memory (strings have no fixed size), from and to .npy, .pb or raw files.
    """
    params = _options(to, src_type, select, exclude, round, saturate, int_overflow, profile, opset,
                      threads, report, float6_packed, raw_codes)
    text = _cast(_path(src, "src"), _path(dst, "dst"), params, progress)
    return text if report else None


# ---- sharded checkpoints ----------------------------------------------------------------------

def _find_index(src):
    """The index path of src: itself, or the one *.safetensors.index.json in the folder src."""
    src = os.fsdecode(os.fspath(src))
    if not os.path.isdir(src):
        return src
    found = sorted(n for n in os.listdir(src) if n.endswith(INDEX_SUFFIX))
    if not found:
        raise Error("%s: the folder holds no *%s" % (src, INDEX_SUFFIX), Status.IO)
    if len(found) > 1:
        raise Error("%s: the folder holds %d indexes (%s); give the index's path"
                    % (src, len(found), ", ".join(found)), Status.INVALID_ARGUMENT)
    return os.path.join(src, found[0])


def checkpoint_shards(src):
    """The shard file names of a sharded checkpoint, sorted, each once.

    src is the *.safetensors.index.json, or a folder holding exactly one. Positions in this
    list are what convert_checkpoint(shards=[0, 1]) and `dtcast cast --shards 0,1` take.
    """
    path = _find_index(src)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise Error("cannot open '%s': %s" % (path, e.strerror or e), Status.IO) from None
    try:
        index = json.loads(data)
    except ValueError as e:
        raise Error("%s: safetensors index: not JSON (%s)" % (path, e), Status.BAD_FILE) from None
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if not isinstance(weight_map, dict) or not all(isinstance(v, str)
                                                   for v in weight_map.values()):
        raise Error("%s: safetensors index: no \"weight_map\" object of shard file names" % path,
                    Status.BAD_FILE)
    return sorted(set(weight_map.values()))


def _pick(names, shards, index):
    """The shard names that the items of `shards` (names, or positions in the sorted list
    `names`; a name first, as the CLI does) stand for, in order, each once."""
    if isinstance(shards, (str, int)):
        shards = [shards]
    picked = []
    for item in shards:
        if isinstance(item, str) and item in names:
            name = item
        elif (hasattr(item, "__index__") and not isinstance(item, bool)) or (
                isinstance(item, str) and item.isdigit()):
            pos = int(item) if isinstance(item, str) else item.__index__()
            if not 0 <= pos < len(names):
                raise Error("shards: position %d is beyond the %d shards of %s (0 to %d)"
                            % (pos, len(names), index, len(names) - 1), Status.INVALID_ARGUMENT)
            name = names[pos]
        else:
            raise Error("shards: %r is not a shard of %s" % (item, index),
                        Status.INVALID_ARGUMENT)
        if name not in picked:
            picked.append(name)
    return picked


def convert_checkpoint(src, dst_dir, *, to=None, shards=None, write_index=True, index_only=False,
                       progress=None, **options):
    """Converts a checkpoint into the folder dst_dir; returns the paths of the files written.

    src is a sharded checkpoint's *.safetensors.index.json, a folder holding exactly one, or a
    single .safetensors file (converted into dst_dir under its own name). dst_dir is created
    when missing. The options are those of convert_file (to, select, exclude, round, ...,
    progress); it runs in process as convert_file does, and raises dtcast.Error the same way
    (e.tensor: the tensor refused, e.g. a scaled quantized one without raw_codes=True: its
    message names it and ``dtcast dequantize``).

    shards        None (default): every shard. A list of shard file names or positions in
                  checkpoint_shards(src): only those.
    write_index   True (default): write the index into dst_dir after the shards; with a list
                  of shards, every other shard must already be there. False: no index.
    index_only    True: convert nothing, write only the index (every shard must be in dst_dir;
                  `to` is not needed). shards=[] with write_index=True does the same.

    The steps (each shard on its own, in any order or process, with write_index=False; then
    index_only=True) give the same bytes as the one-step conversion.
    """
    if not os.path.isdir(src) and not os.fsdecode(os.fspath(src)).endswith(INDEX_SUFFIX):
        if shards is not None or index_only:
            raise Error("%s: shards and index_only are for a sharded checkpoint "
                        "(*%s)" % (os.fsdecode(os.fspath(src)), INDEX_SUFFIX),
                        Status.INVALID_ARGUMENT)
        if to is None:
            raise Error("to: the target type is required", Status.INVALID_ARGUMENT)
        dst_dir = os.fsdecode(os.fspath(dst_dir))
        os.makedirs(dst_dir, exist_ok=True)
        out = os.path.join(dst_dir, os.path.basename(os.fsdecode(os.fspath(src))))
        convert_file(src, out, to=to, progress=progress, **options)
        return [out]
    index = _find_index(src)
    dst_dir = os.fsdecode(os.fspath(dst_dir))
    index_out = os.path.join(dst_dir, os.path.basename(index))
    index_only = index_only or (shards is not None and len(shards) == 0 and write_index)
    src_p, dst_p = _path(index, "src"), _path(dst_dir, "dst_dir")
    if index_only:
        _cast(src_p, dst_p, {}, None, index_only=True)
        return [index_out]
    if to is None:
        raise Error("to: the target type is required", Status.INVALID_ARGUMENT)
    params = _options(to, None, report=False, **_with_defaults(options))
    names = checkpoint_shards(index)
    if shards is None and write_index:
        _cast(src_p, dst_p, params, progress)
        return [os.path.join(dst_dir, n) for n in names] + [index_out]
    picked = names if shards is None else _pick(names, shards, index)
    written = []
    if picked:
        # names as the index gives them; a name with a comma by its position
        items = [str(names.index(n)) if "," in n else n for n in picked]
        _cast(src_p, dst_p, params, progress, shards=",".join(items))
        written = [os.path.join(dst_dir, n) for n in picked]
    if write_index:
        _cast(src_p, dst_p, {}, None, index_only=True)
        written.append(index_out)
    return written


def _with_defaults(options):
    """convert_file's keyword options with their defaults; unknown ones refused (src_type and
    report too: a checkpoint knows its types, and the report is convert_file's)."""
    known = dict(select=None, exclude=None, round="rne", saturate=None, int_overflow="wrap",
                 profile=None, opset=None, threads=0, float6_packed=False, raw_codes=False)
    for k in options:
        if k not in known:
            raise TypeError("convert_checkpoint() got an unexpected keyword argument %r" % k)
    known.update(options)
    return known


# ---- quantized checkpoints --------------------------------------------------------------------

def _opt_str(value, what):
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError("%s: expected a str, not %s" % (what, type(value).__name__))
    return value


def _block(block):
    """block= as (rows, cols): an int (elements per block), (rows, cols) or "RxC"."""
    if block is None:
        return None, None
    if isinstance(block, str):
        r, sep, c = block.lower().partition("x")
        try:
            rows, cols = (int(r), int(c)) if sep else (0, int(r))
        except ValueError:
            rows = cols = -1
    elif isinstance(block, (tuple, list)) and len(block) == 2:
        rows, cols = block
    elif hasattr(block, "__index__") and not isinstance(block, bool):
        rows, cols = 0, block
    else:
        rows = cols = -1
    if not (hasattr(rows, "__index__") and hasattr(cols, "__index__")) or isinstance(
            rows, bool) or isinstance(cols, bool) or not (cols > 0 and rows >= 0) or max(
            rows, cols) > 1 << 40:
        raise Error("block: give (rows, cols) or 'RxC' (fp8-block) or a block size, not %r"
                    % (block,), Status.INVALID_ARGUMENT)
    return int(rows), int(cols)


def quantize_checkpoint(src, dst, *, scheme, variant=None, scale_mode=None, round=None, seed=None,
                        block=None, select=None, exclude=None, layout=None, report=False,
                        threads=0, progress=None):
    """Quantizes a checkpoint into a scheme's checkpoint layout, as ``dtcast quantize`` does
    (docs/cli.md, "Quantized checkpoints"), in this process with the GIL released.

    src is a .safetensors file or a .npy (dst then a .safetensors file), a sharded checkpoint's
    *.safetensors.index.json or a model folder (dst a folder: the index rewritten, a
    quantization_config written into config.json, the other files copied).

    scheme      "fp8-block", "mxfp4", "mxfp8", "mxfp8-e5m2", "mxfp6-e2m3", "mxfp6-e3m2",
                "mxint8", "nvfp4", "fp8-tensor", "fp8-channel", "int8-tensor", "int8-channel",
                "int4-group" (--scheme)
    variant     whose intermediates to follow: "ocp" (MX), "modelopt", "torchao", "ct"
                (NVFP4), "hf", "deepseek-act" (fp8-block), "ct" (absmax) (--variant)
    scale_mode  MX scale: "floor" (default), "ceil", "even", "rceil", "log2"
    round       element rounding: "rne" (default), "rna" (MX), "stochastic"; seed: its seed
    block       fp8-block tile as (rows, cols) or "RxC" (default 128x128); an int: elements
                per block
    select      globs: quantize the tensors whose name matches (replaces the default choice:
                float tensors of two axes or more whose name ends in "weight" and holds none
                of "embed", "norm", "lm_head"); exclude: globs left out
    layout      the checkpoint layout: "hf", "gpt-oss", "mx", "modelopt", "ct" (default: the
                scheme's first)
    report      True: return the report text (per tensor: SQNR, max abs error) instead of dst
    threads     worker threads (0: one per CPU)
    progress    as convert_file's

    Returns dst (the report text when report=True). Raises dtcast.Error (INVALID_ARGUMENT for
    an option the scheme does not take; e.tensor, e.file, e.offset as convert_file's).
    """
    scheme = _opt_str(scheme, "scheme")
    if not scheme:
        raise Error("scheme: give a scheme (fp8-block, mxfp4, nvfp4, ...)",
                    Status.INVALID_ARGUMENT)
    rows, cols = _block(block)
    if seed is not None and (not hasattr(seed, "__index__") or isinstance(seed, bool) or
                             not 0 <= seed < 1 << 64):
        raise Error("seed: an integer from 0 to 2^64 - 1, not %r" % (seed,),
                    Status.INVALID_ARGUMENT)
    params = {"scheme": scheme, "variant": _opt_str(variant, "variant"),
              "scale_mode": _opt_str(scale_mode, "scale_mode"), "round": _opt_str(round, "round"),
              "seed": None if seed is None else int(seed), "block": cols, "block_rows": rows,
              "layout": _opt_str(layout, "layout"), "select": _globs(select, "select"),
              "exclude": _globs(exclude, "exclude"), "report": bool(report),
              "threads": _threads(threads)}
    if params["layout"] is not None and params["layout"] not in ("hf", "gpt-oss", "mx",
                                                                 "modelopt", "ct"):
        raise Error("layout: unknown layout %r (one of: hf, gpt-oss, mx, modelopt, ct)" % layout,
                    Status.INVALID_ARGUMENT)
    src_p, dst_p = _path(src, "src"), _path(dst, "dst")
    text = _job(_core.quantize_checkpoint, src_p, dst_p, params, progress,
                   os.path.basename(src_p))
    return text if report else os.fsdecode(os.fspath(dst))


_LAYOUTS = {"deepseek-v4": 1, "fp8-block": 2, "nvfp4-ct": 3, "nvfp4-modelopt": 4,
            "mxfp4-gptoss": 5, "mx": 6, "mx-ct": 7,
            "deepseek-v4-fp8": 8}  # files/quantize.h's dt_relayout


def convert_layout(src, dst, *, to, report=False, progress=None):
    """A quantized checkpoint rewritten into another layout of the same codes, exactly, as
    ``dtcast convert-layout`` does: ``to="deepseek-v4"`` (block FP8 with F8_E8M0 ``X.scale``,
    from F32 ``X.weight_scale_inv``: every scale must be a power of two in [2^-127, 2^127]),
    ``to="fp8-block"`` (the reverse, always exact), ``to="nvfp4-ct"`` / ``"nvfp4-modelopt"``
    (NVFP4 between ModelOpt's ``weight_scale_2`` g and compressed-tensors' reciprocal
    ``weight_global_scale``: exact when every block's factor fl32(S x g) == fl32(S / gs)),
    ``to="mxfp4-gptoss"`` / ``"mx"`` / ``"mx-ct"`` (MXFP4 between gpt-oss's ``X_blocks``, OCP
    MX's F4 ``X`` + F8_E8M0 ``X_scale`` and compressed-tensors' ``X.weight_packed`` + uint8
    ``X.weight_scale``: the same bytes; a 0xFF scale is refused across namings that read it
    differently), ``to="deepseek-v4-fp8"`` (DeepSeek-V4's FP4 experts as FP8 with one F8_E8M0
    scale per 128 x 128 tile, refused where a value would round). The codes are copied byte
    for byte (or re-encoded exactly) and the other tensors as they are; the index is rewritten
    and config.json's quantization_config set to the target's. A scale that cannot be converted exactly raises dtcast.Error naming the
    tensor and the element, and nothing is written. Returns dst (the report text with
    report=True)."""
    if to not in _LAYOUTS:
        raise Error("to: one of %s, not %r" % (", ".join(sorted(_LAYOUTS)), to),
                    Status.INVALID_ARGUMENT)
    src_p, dst_p = _path(src, "src"), _path(dst, "dst")
    text = _job(_core.convert_layout, src_p, dst_p, {"to": _LAYOUTS[to], "report": bool(report)},
                progress, os.path.basename(src_p))
    return text if report else os.fsdecode(os.fspath(dst))


def dequantize_checkpoint(src, dst, *, to="bfloat16", threads=0, report=False, progress=None):
    """Dequantizes a quantized checkpoint into a plain one, as ``dtcast dequantize`` does
    (docs/quantization.md): block FP8 (DeepSeek-V3/R1 ``weight_scale_inv``; DeepSeek-V4's F8_E8M0
    ``.scale`` and its FP4 experts), gpt-oss MXFP4 (``*_blocks`` / ``*_scales``), NVFP4 (ModelOpt
    and compressed-tensors names), compressed-tensors FP8/INT8 and ``pack-quantized`` INT4/INT8,
    GPTQ and AWQ (into ``X.weight`` [N, K]) and diffusion scaled FP8 (ComfyUI, diffusers),
    recognised by their tensor names and checked against config.json; every other tensor copied.

    A GGUF model (src a .gguf) becomes safetensors as dtcast.gguf.to_safetensors makes it.
    Otherwise src is a .safetensors file (dst then a .safetensors file), a sharded checkpoint's
    *.safetensors.index.json or a model folder (dst a folder: the index rewritten,
    ``quantization_config`` removed from config.json, the other files copied). to: bfloat16
    (default), float16 or float32. Streamed in this process (the GIL released) on every thread
    (threads=0) or on `threads`, with bounded memory. progress: as convert_file's. Returns dst;
    with report=True, the report text instead (per quantized tensor: its layout and its
    scales' range). Raises dtcast.Error as convert_file does."""
    name = _type_name(to, "to")
    if name not in ("bfloat16", "float16", "float32"):
        raise Error("to: dequantize writes bfloat16, float16 or float32, not %s" % name,
                    Status.INVALID_ARGUMENT)
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 0:
        raise Error("threads must be an integer >= 0, not %r" % (threads,), Status.INVALID_ARGUMENT)
    if _path(src, "src").lower().endswith(".gguf"):  # a GGUF model: dtcast.gguf.to_safetensors
        from .gguf import to_safetensors
        return to_safetensors(src, dst, dtype=name, threads=threads, progress=progress)
    params = {"to": _code(name), "threads": _threads(threads), "report": bool(report)}
    src_p, dst_p = _path(src, "src"), _path(dst, "dst")
    text = _job(_core.dequantize_checkpoint, src_p, dst_p, params, progress,
                   os.path.basename(src_p))
    return text if report else os.fsdecode(os.fspath(dst))
