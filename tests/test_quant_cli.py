"""dtcast quantize / dtcast dequantize on checkpoints (docs/cli.md, "Quantized checkpoints").

    python3 tests/test_quant_cli.py build/libdtcast.so      (the CLI is build/dtcast)

Small synthetic checkpoints with the real tensor names and shapes: DeepSeek-V3 block FP8 (a
576-row tensor: a short last tile row; a scale in another shard than its weight), gpt-oss MXFP4
experts (*_blocks / *_scales), NVFP4 in ModelOpt's and compressed-tensors' names, compressed-
tensors FP8 per channel. `dtcast dequantize`'s output is read with the safetensors package (the
reference reader; tests/safetensors_ref.py when the package is missing) and compared bit for bit
with numpy computing the dequantization formulas of docs/quantization.md from the bit fields. Then the
folder around the tensors: quantization_config removed from config.json, the index's weight_map
and total_size, tokenizer files copied. `dtcast quantize` round trips: its layout (names, dtypes,
shapes), the quantization_config it writes, block-FP8 codes and scales equal to numpy's `hf`
variant, and dequantize(quantize(x)) close to x. Bad input fails naming the tensor, OUT untouched.
`dtcast cast` refuses every layout and naming (hand-built, and as each scheme writes it), --select
of any part too; --raw-codes and --select/--exclude of unscaled tensors still cast.
Prints PASS/FAIL lines; exits nonzero on a failure.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import safetensors
    READER = "safetensors %s" % safetensors.__version__
except ImportError:  # the tests' virtual environment has it (make test)
    venv = os.path.join(HERE, "..", os.environ.get("PYVENV", ".venv"), "bin", "python")
    if os.path.exists(venv) and not os.environ.get("DTCAST_QUANT_CLI_REEXEC"):
        os.environ["DTCAST_QUANT_CLI_REEXEC"] = "1"
        os.execv(venv, [venv] + sys.argv)
    safetensors = None
    READER = "tests/safetensors_ref.py (no safetensors package)"

sys.path.insert(0, HERE)
import safetensors_ref as ref  # noqa: E402
from cli_util import check, failures, runner  # noqa: E402

LIB = sys.argv[1] if len(sys.argv) > 1 else "build/libdtcast.so"
DTCAST = os.path.join(os.path.dirname(os.path.abspath(LIB)), "dtcast")
run = runner(DTCAST)

# ---- the formats, from their bit fields (docs/formats.md, docs/quantization.md) ------------------


def e4m3_values():
    c = np.arange(256)
    e, m, s = (c >> 3) & 15, c & 7, np.where(c & 0x80, -1.0, 1.0)
    v = np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * 2.0 ** (e - 7)) * s
    v[(c & 0x7F) == 0x7F] = np.nan
    return v.astype(np.float32)


def e2m1_values():
    c = np.arange(16)
    e, m, s = (c >> 1) & 3, c & 1, np.where(c & 8, -1.0, 1.0)
    return (np.where(e == 0, m * 0.5, (1 + m / 2) * 2.0 ** (e - 1)) * s).astype(np.float32)


E4M3, E2M1 = e4m3_values(), e2m1_values()


def bf16_bits(f):
    """float32 -> bfloat16 bits, round to nearest even (NaN -> a quiet NaN)."""
    u = np.ascontiguousarray(f, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(f), (u >> 16).astype(np.uint16) | 0x40, r)


def bf16_to_f32(bits):
    return (np.asarray(bits, dtype=np.uint32) << 16).view(np.float32)


def e4m3_rne(v):
    """float32 (|v| <= 448) -> float8e4m3fn code, nearest, ties to the even code."""
    table = E4M3[:127].astype(np.float64)  # codes 0..126, ascending
    a = np.abs(v.astype(np.float64))
    hi = np.clip(np.searchsorted(table, a), 1, 126)
    lo = hi - 1
    dlo, dhi = a - table[lo], table[hi] - a
    code = np.where(dlo < dhi, lo, np.where(dhi < dlo, hi, np.where(lo % 2 == 0, lo, hi)))
    code = np.where(a >= table[126], 126, code)
    return (code | np.where(np.signbit(v), 0x80, 0)).astype(np.uint8)


def unpack4(b, k):
    """Two codes per byte along the last axis, the first in the low nibble -> [..., k]."""
    out = np.stack([b & 15, b >> 4], axis=-1).reshape(b.shape[:-1] + (b.shape[-1] * 2,))
    return out[..., :k]


def tile(s, rows, cols, n, k):
    return np.repeat(np.repeat(s, rows, axis=-2), cols, axis=-1)[..., :n, :k]


# ---- files --------------------------------------------------------------------------------


def read(path):
    """{name: (dtype, shape, bytes)} with the safetensors package (else the reference reader)."""
    with open(path, "rb") as f:
        data = f.read()
    if safetensors is None:
        return ref.deserialize(data)[0]
    return {name: (t["dtype"], list(t["shape"]), bytes(t["data"]))
            for name, t in safetensors.deserialize(data)}


def array(t, dtype):
    return np.frombuffer(t[2], dtype=dtype).reshape(t[1])


def write(path, tensors):
    ref.write(path, {n: (d, list(s), np.ascontiguousarray(a).tobytes())
                     for n, (d, s, a) in tensors.items()}, {"format": "pt"})


def write_folder(d, shards, config=None, extra=None):
    """shards: {file name: {tensor: (dtype, shape, array)}}; an index when there are several."""
    os.makedirs(d, exist_ok=True)
    weight_map, total = {}, 0
    for name, tensors in shards.items():
        write(os.path.join(d, name), tensors)
        for t, (dt, shape, a) in tensors.items():
            weight_map[t] = name
            total += ref.nbytes(dt, shape)
    if len(shards) > 1:
        with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total, "format": "pt"},
                       "weight_map": weight_map}, f, indent=2)
    if config is not None:
        with open(os.path.join(d, "config.json"), "w") as f:
            f.write(json.dumps(config, indent=2, sort_keys=True) + "\n")
    for name, text in (extra or {}).items():
        with open(os.path.join(d, name), "w") as f:
            f.write(text)


def folder_tensors(d):
    out = {}
    for name in sorted(os.listdir(d)):
        if name.endswith(".safetensors"):
            for t, v in read(os.path.join(d, name)).items():
                out[t] = v
    return out


def rand_codes(rng, shape, nan_free=True):
    b = rng.integers(0, 256, shape, dtype=np.uint8)
    if nan_free:
        b[(b & 0x7F) == 0x7F] = 0x7E
    return b


def same_bits(name, got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return check(False, name, "shape %s, expected %s" % (got.shape, want.shape))
    bad = np.flatnonzero(got.ravel() != want.ravel())
    return check(len(bad) == 0, name, "%d of %d differ, first at %s: %r vs %r" % (
        len(bad), got.size, bad[:1], got.ravel()[bad[:1]], want.ravel()[bad[:1]]))


# ---- dequantize -------------------------------------------------------------------------------

CONFIG = {"architectures": ["DeepseekV3ForCausalLM"], "hidden_size": 320, "torch_dtype": "bfloat16",
          "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3",
                                  "quant_method": "fp8", "weight_block_size": [128, 128]}}


def cast_refuses(src, tmp, label):
    """dtcast cast of a scaled checkpoint stops with exit 1 and one line naming the codes, their
    scale tensor and the command that does the job, and writes nothing; --raw-codes casts the
    codes as they are, on purpose."""
    dst = os.path.join(tmp, "cast-" + label.replace(" ", "_").replace("/", "_"))
    if src.endswith(".safetensors"):
        dst += ".safetensors"
    st, out, err = run("cast", "-q", "--to", "bfloat16", src, dst)
    check(st == 1 and "codes scaled by" in err and "dtcast dequantize" in err and
          "--raw-codes" in err and len(err.strip().splitlines()) == 1 and not os.path.exists(dst),
          label + ": cast refuses the scaled codes", err)
    st, out, err = run("cast", "-q", "--raw-codes", "--to", "bfloat16", src, dst)
    check(st == 0 and os.path.exists(dst), label + ": cast --raw-codes casts the codes", err)


def test_block_fp8(tmp, rng):
    """DeepSeek names: 576-row kv_a_proj (a short last tile row), a K of 320 (short last tile
    column), an expert stack of two layers; one scale in another shard than its weight; a wide
    up_proj (K = 2200) that dequantize writes in pieces of a tile row."""
    kv, kv_s = rand_codes(rng, (576, 320)), (2.0 ** rng.uniform(-12, -4, (5, 3))).astype(np.float32)
    gate, gate_s = rand_codes(rng, (256, 320)), (2.0 ** rng.uniform(-12, -4, (2, 3))).astype(np.float32)
    down, down_s = rand_codes(rng, (320, 256)), (2.0 ** rng.uniform(-12, -4, (3, 2))).astype(np.float32)
    up, up_s = rand_codes(rng, (200, 2200)), (2.0 ** rng.uniform(-12, -4, (2, 18))).astype(np.float32)
    norm = bf16_bits(rng.standard_normal(320).astype(np.float32))
    bias = rng.standard_normal(8).astype(np.float32)
    L = "model.layers.0."
    shards = {
        "model-00001-of-00002.safetensors": {
            L + "self_attn.kv_a_proj_with_mqa.weight": ("F8_E4M3", [576, 320], kv),
            L + "self_attn.kv_a_proj_with_mqa.weight_scale_inv": ("F32", [5, 3], kv_s),
            L + "mlp.experts.0.gate_proj.weight": ("F8_E4M3", [256, 320], gate),
            L + "input_layernorm.weight": ("BF16", [320], norm),
        },
        "model-00002-of-00002.safetensors": {
            L + "mlp.experts.0.gate_proj.weight_scale_inv": ("F32", [2, 3], gate_s),
            L + "mlp.experts.0.down_proj.weight": ("F8_E4M3", [320, 256], down),
            L + "mlp.experts.0.down_proj.weight_scale_inv": ("F32", [3, 2], down_s),
            L + "mlp.experts.0.up_proj.weight": ("F8_E4M3", [200, 2200], up),
            L + "mlp.experts.0.up_proj.weight_scale_inv": ("F32", [2, 18], up_s),
            L + "mlp.gate.e_score_correction_bias": ("F32", [8], bias),
        },
    }
    src, dst = os.path.join(tmp, "fp8"), os.path.join(tmp, "fp8-bf16")
    write_folder(src, shards, CONFIG, {"tokenizer.json": '{"x": 1}\n', "hf_quant_config.json": "{}"})
    cast_refuses(os.path.join(src, "model.safetensors.index.json"), tmp, "block fp8")
    st, out, err = run("dequantize", "-q", src, dst)
    if not check(st == 0 and err == "", "block fp8: dequantize a DeepSeek-named folder", err):
        return
    got = folder_tensors(dst)
    for name, q, s in ((L + "self_attn.kv_a_proj_with_mqa.weight", kv, kv_s),
                       (L + "mlp.experts.0.gate_proj.weight", gate, gate_s),
                       (L + "mlp.experts.0.down_proj.weight", down, down_s),
                       (L + "mlp.experts.0.up_proj.weight", up, up_s)):
        n, k = q.shape
        want = bf16_bits(E4M3[q] * tile(s, 128, 128, n, k))  # fl32(q * s), then bfloat16
        t = got.get(name)
        if check(t is not None and t[0] == "BF16" and t[1] == [n, k],
                 "block fp8: %s is BF16 %s" % (name.split(".")[-2], [n, k]), t and t[:2]):
            same_bits("block fp8: %s = bfloat16(fl32(q x s)) per tile (%s)" % (
                name.split(".")[-2], READER), array(t, "<u2"), want)
    check(sorted(got) == sorted([L + "self_attn.kv_a_proj_with_mqa.weight",
                                 L + "mlp.experts.0.gate_proj.weight",
                                 L + "mlp.experts.0.down_proj.weight",
                                 L + "mlp.experts.0.up_proj.weight",
                                 L + "input_layernorm.weight", L + "mlp.gate.e_score_correction_bias"]),
          "block fp8: the scales are gone, the other tensors kept", sorted(got))
    same_bits("block fp8: a BF16 norm copied as it is",
              array(got[L + "input_layernorm.weight"], "<u2"), norm)
    same_bits("block fp8: an F32 bias copied as it is",
              array(got[L + "mlp.gate.e_score_correction_bias"], "<f4"), bias)
    with open(os.path.join(dst, "config.json")) as f:
        cfg = json.load(f)
    want_cfg = dict(CONFIG)
    del want_cfg["quantization_config"]
    check(cfg == want_cfg, "block fp8: config.json without quantization_config, the rest kept", cfg)
    with open(os.path.join(dst, "model.safetensors.index.json")) as f:
        ix = json.load(f)
    sizes = sum(ref.nbytes(t[0], t[1]) for t in got.values())
    check(ix["metadata"] == {"total_size": sizes, "format": "pt"},
          "block fp8: index total_size = the output tensors' bytes, other metadata kept",
          ix["metadata"])
    want_map = {L + "self_attn.kv_a_proj_with_mqa.weight": "model-00001-of-00002.safetensors",
                L + "mlp.experts.0.gate_proj.weight": "model-00001-of-00002.safetensors",
                L + "input_layernorm.weight": "model-00001-of-00002.safetensors",
                L + "mlp.experts.0.down_proj.weight": "model-00002-of-00002.safetensors",
                L + "mlp.experts.0.up_proj.weight": "model-00002-of-00002.safetensors",
                L + "mlp.gate.e_score_correction_bias": "model-00002-of-00002.safetensors"}
    check(ix["weight_map"] == want_map, "block fp8: index weight_map (scales gone, shards kept)",
          ix["weight_map"])
    with open(os.path.join(dst, "tokenizer.json")) as f:
        check(f.read() == '{"x": 1}\n', "block fp8: tokenizer.json copied")
    check(not os.path.exists(os.path.join(dst, "hf_quant_config.json")),
          "block fp8: hf_quant_config.json dropped")
    for to, dtype, conv in (("float32", "<f4", lambda f: f), ("float16", "<f2",
                                                              lambda f: f.astype(np.float16))):
        d2 = dst + "-" + to
        st, out, err = run("dequantize", "-q", "--to", to, src, d2)
        if check(st == 0, "block fp8: --to %s" % to, err):
            for name, q, s in ((L + "self_attn.kv_a_proj_with_mqa.weight", kv, kv_s),
                               (L + "mlp.experts.0.up_proj.weight", up, up_s)):
                t = folder_tensors(d2)[name]
                want = conv(E4M3[q] * tile(s, 128, 128, *q.shape))
                same_bits("block fp8: --to %s = %s(fl32(q x s)) (%s)" % (to, to, name.split(".")[-2]),
                          array(t, dtype).view(np.uint32 if to == "float32" else np.uint16),
                          np.asarray(want).view(np.uint32 if to == "float32" else np.uint16))
    # The index as IN: the same folder.
    d3 = dst + "-ix"
    st, out, err = run("dequantize", "-q", os.path.join(src, "model.safetensors.index.json"), d3)
    check(st == 0 and sorted(os.listdir(d3)) == sorted(os.listdir(dst)) and all(
        open(os.path.join(d3, n), "rb").read() == open(os.path.join(dst, n), "rb").read()
        for n in os.listdir(dst)), "block fp8: IN the index gives the same folder", err)
    # --report: one line per quantized tensor, naming it.
    st, out, err = run("dequantize", "-q", "--report", src, dst + "-r")
    check(st == 0 and err.count("fp8-block") == 4 and "kv_a_proj_with_mqa.weight" in err,
          "block fp8: --report has a line per quantized tensor", err)


def test_gptoss(tmp, rng):
    """gpt-oss MXFP4 experts: *_blocks U8 [E, R, G, 16], *_scales U8 [E, R, G]."""
    E, R, G = 2, 6, 3
    blocks = rng.integers(0, 256, (E, R, G, 16), dtype=np.uint8)
    scales = rng.integers(118, 136, (E, R, G), dtype=np.uint8)
    scales[1, 2, 1] = 0xFF  # NaN block (docs/quantization.md, "MX"; gpt-oss's ldexp gives Inf)
    pre = "model.layers.0.mlp.experts."
    bias = bf16_bits(rng.standard_normal((E, R)).astype(np.float32))
    src, dst = os.path.join(tmp, "oss.safetensors"), os.path.join(tmp, "oss-bf16.safetensors")
    write(src, {pre + "gate_up_proj_blocks": ("U8", [E, R, G, 16], blocks),
                pre + "gate_up_proj_scales": ("U8", [E, R, G], scales),
                pre + "gate_up_proj_bias": ("BF16", [E, R], bias),
                "model.embed_tokens.weight": ("BF16", [E, R], bias)})
    cast_refuses(src, tmp, "mxfp4 gpt-oss")
    st, out, err = run("dequantize", "-q", src, dst)
    if not check(st == 0, "mxfp4 gpt-oss: dequantize", err):
        return
    got = read(dst)
    t = got.get(pre + "gate_up_proj")
    if not check(t is not None and t[0] == "BF16" and t[1] == [E, R, G * 32],
                 "mxfp4 gpt-oss: X_blocks + X_scales -> X BF16 [E, R, 32 G]", t and t[:2]):
        return
    codes = unpack4(blocks.reshape(E, R, G * 16), G * 32)
    f = E2M1[codes] * np.repeat(np.ldexp(1.0, scales.astype(np.int32) - 127), 32, axis=-1)
    with np.errstate(over="ignore"):  # the 0xFF block: 2^128 (checked apart)
        want = bf16_bits(f.astype(np.float32))
    got_bits = array(t, "<u2")
    nan_block = np.zeros((E, R, G * 32), bool)
    nan_block[1, 2, 32:64] = True
    same_bits("mxfp4 gpt-oss: bfloat16(code x 2^(b-127)), low nibble first", got_bits[~nan_block],
              want[~nan_block])
    check(np.all(np.isnan(bf16_to_f32(got_bits[nan_block]))), "mxfp4 gpt-oss: a 0xFF scale gives NaN")
    check(sorted(got) == sorted([pre + "gate_up_proj", pre + "gate_up_proj_bias",
                                 "model.embed_tokens.weight"]),
          "mxfp4 gpt-oss: names", sorted(got))


def test_nvfp4(tmp, rng):
    """NVFP4 in ModelOpt's names (g = weight_scale_2 multiplies) and compressed-tensors' (gs =
    weight_global_scale divides), with activation scales dropped."""
    N, K = 24, 64
    packed = rng.integers(0, 256, (N, K // 2), dtype=np.uint8)
    sc = rand_codes(rng, (N, K // 16)) & 0x7F  # positive block scales
    g = np.float32(0.0123)
    codes = unpack4(packed, K)
    S = np.repeat(E4M3[sc], 16, axis=-1)
    L = "model.layers.3.mlp.down_proj."
    for naming, tensors, mult in (
            ("ModelOpt", {L + "weight": ("U8", [N, K // 2], packed),
                          L + "weight_scale": ("F8_E4M3", [N, K // 16], sc),
                          L + "weight_scale_2": ("F32", [], np.array(g)),
                          L + "input_scale": ("F32", [], np.array(np.float32(0.5)))},
             (S * g).astype(np.float32)),
            ("compressed-tensors", {L + "weight_packed": ("U8", [N, K // 2], packed),
                                    L + "weight_scale": ("F8_E4M3", [N, K // 16], sc),
                                    L + "weight_global_scale": ("F32", [1], np.array([g])),
                                    L + "input_global_scale": ("F32", [1], np.array([g]))},
             (S / g).astype(np.float32))):
        src = os.path.join(tmp, "nv-%s.safetensors" % naming[:2])
        dst = os.path.join(tmp, "nv-%s-bf16.safetensors" % naming[:2])
        write(src, tensors)
        cast_refuses(src, tmp, "nvfp4 " + naming)
        st, out, err = run("dequantize", "-q", src, dst)
        if not check(st == 0, "nvfp4 %s: dequantize" % naming, err):
            continue
        got = read(dst)
        check(sorted(got) == [L + "weight"], "nvfp4 %s: one tensor X.weight, the scales and "
              "activation scales gone" % naming, sorted(got))
        t = got.get(L + "weight")
        if t is not None and check(t[0] == "BF16" and t[1] == [N, K],
                                   "nvfp4 %s: BF16 [N, K]" % naming, t[:2]):
            same_bits("nvfp4 %s: bfloat16(code x fl32(S %s g))" % (
                naming, "x" if naming == "ModelOpt" else "/"), array(t, "<u2"),
                bf16_bits(E2M1[codes] * mult))


def test_ct_fp8(tmp, rng):
    N, K = 40, 48
    q = rand_codes(rng, (N, K))
    s = bf16_bits((2.0 ** rng.uniform(-10, -2, (N, 1))).astype(np.float32))
    src, dst = os.path.join(tmp, "ct.safetensors"), os.path.join(tmp, "ct-bf16.safetensors")
    write(src, {"model.layers.0.self_attn.o_proj.weight": ("F8_E4M3", [N, K], q),
                "model.layers.0.self_attn.o_proj.weight_scale": ("BF16", [N, 1], s)})
    cast_refuses(src, tmp, "compressed-tensors fp8")
    st, out, err = run("dequantize", "-q", src, dst)
    if check(st == 0, "compressed-tensors fp8 per channel: dequantize", err):
        t = read(dst)["model.layers.0.self_attn.o_proj.weight"]
        same_bits("compressed-tensors fp8 per channel: bfloat16(q x s)", array(t, "<u2"),
                  bf16_bits(E4M3[q] * bf16_to_f32(s)))


def test_errors(tmp, rng):
    q = rand_codes(rng, (256, 128))
    cases = [
        ("a weight without its scale", {"model.layers.0.mlp.up_proj.weight": ("F8_E4M3", [256, 128], q)},
         "model.layers.0.mlp.up_proj.weight"),
        ("a scale without its weight",
         {"model.layers.0.mlp.up_proj.weight_scale_inv": ("F32", [2, 1], np.ones((2, 1), np.float32))},
         "model.layers.0.mlp.up_proj.weight_scale_inv"),
        ("a scale of the wrong shape",
         {"model.layers.0.mlp.up_proj.weight": ("F8_E4M3", [256, 128], q),
          "model.layers.0.mlp.up_proj.weight_scale_inv": ("F32", [3, 1], np.ones((3, 1), np.float32))},
         "model.layers.0.mlp.up_proj.weight_scale_inv"),
        ("gpt-oss scales of the wrong shape",
         {"e.gate_up_proj_blocks": ("U8", [2, 3, 16], np.zeros((2, 3, 16), np.uint8)),
          "e.gate_up_proj_scales": ("U8", [2, 4], np.zeros((2, 4), np.uint8))},
         "e.gate_up_proj_scales"),
    ]
    for i, (what, tensors, name) in enumerate(cases):
        src, dst = os.path.join(tmp, "bad%d.safetensors" % i), os.path.join(tmp, "bad%d-out.safetensors" % i)
        write(src, tensors)
        st, out, err = run("dequantize", "-q", src, dst)
        check(st == 1 and name in err and err.count("\n") == 1 and not os.path.exists(dst) and
              not [n for n in os.listdir(tmp) if n.startswith("bad%d-out" % i)],
              "errors: %s names '%s', nothing written" % (what, name), "%d %r" % (st, err))
    st, out, err = run("dequantize", os.path.join(tmp, "nothing-here"), os.path.join(tmp, "x"))
    check(st != 0 and "nothing-here" in err, "errors: a missing IN is named", err)


# ---- quantize ---------------------------------------------------------------------------------


def bf16_model(tmp, rng):
    """A small bf16 model folder: two layers of linear weights (one 576 rows), norms, embeddings,
    lm_head; config.json without quantization_config."""
    d = os.path.join(tmp, "model")
    t = {}

    def w(name, shape, scale=0.05):
        t[name] = ("BF16", list(shape), bf16_bits((rng.standard_normal(shape) * scale).astype(np.float32)))
    w("model.embed_tokens.weight", (64, 128))
    w("lm_head.weight", (64, 128))
    for n in range(2):
        w("model.layers.%d.self_attn.kv_a_proj_with_mqa.weight" % n, (576, 128))
        w("model.layers.%d.mlp.down_proj.weight" % n, (128, 256))
        w("model.layers.%d.input_layernorm.weight" % n, (128,), 1.0)
    write_folder(d, {"model-00001-of-00002.safetensors": {k: v for k, v in t.items() if ".0." in k or "embed" in k},
                     "model-00002-of-00002.safetensors": {k: v for k, v in t.items() if not (".0." in k or "embed" in k)}},
                 {"architectures": ["X"], "hidden_size": 128}, {"tokenizer_config.json": "{}\n"})
    return d, t


def fp8_block_oracle(x):
    """quantization.md, Block FP8 `hf`: qs = fl32(448/amax) per 128x128 tile (1 for an all-zero tile), q =
    e4m3_rne(clamp(fl32(x qs), +-448)), s = fl32(1/qs)."""
    n, k = x.shape
    tr, tc = -(-n // 128), -(-k // 128)
    pad = np.zeros((tr * 128, tc * 128), np.float32)
    pad[:n, :k] = np.abs(x)
    amax = pad.reshape(tr, 128, tc, 128).max(axis=(1, 3)).astype(np.float32)
    with np.errstate(divide="ignore"):
        qs = np.where(amax == 0, np.float32(1), np.float32(448) / amax).astype(np.float32)
    v = np.clip((x * tile(qs, 128, 128, n, k)).astype(np.float32), -448, 448)
    return e4m3_rne(v), (np.float32(1) / qs).astype(np.float32)


def test_quantize(tmp, rng):
    src, t = bf16_model(tmp, rng)
    chosen = [n for n in t if n.endswith("proj.weight") or n.endswith("mqa.weight")]
    # fp8-block: the layout, the codes and scales of numpy's hf variant, the config, the round trip.
    dst = os.path.join(tmp, "model-fp8")
    st, out, err = run("quantize", "-q", "--scheme", "fp8-block", src, dst)
    if not check(st == 0, "quantize fp8-block: a bf16 folder", err):
        return
    got = folder_tensors(dst)
    want_names = sorted([n for n in t if n not in chosen] + chosen + [n + "_scale_inv" for n in chosen])
    check(sorted(got) == want_names, "quantize fp8-block: X.weight + X.weight_scale_inv for the "
          "chosen, norms/embeddings/lm_head kept", sorted(got))
    for n in chosen:
        x = bf16_to_f32(t[n][2])
        q, s = fp8_block_oracle(x)
        if n in got and n + "_scale_inv" in got:
            ok = got[n][0] == "F8_E4M3" and got[n + "_scale_inv"][0] == "F32"
            if check(ok, "quantize fp8-block: dtypes of %s" % n, (got[n][:2], got[n + "_scale_inv"][:2])):
                same_bits("quantize fp8-block: %s codes = numpy hf" % n, array(got[n], "u1"), q)
                same_bits("quantize fp8-block: %s scales = numpy hf" % n,
                          array(got[n + "_scale_inv"], "<f4").view(np.uint32), s.view(np.uint32))
    same_bits("quantize fp8-block: lm_head copied", array(got["lm_head.weight"], "<u2"),
              t["lm_head.weight"][2])
    with open(os.path.join(dst, "config.json")) as f:
        cfg = json.load(f)
    check(cfg.get("quantization_config") == {"activation_scheme": "dynamic", "fmt": "e4m3",
                                             "quant_method": "fp8", "weight_block_size": [128, 128]}
          and cfg.get("hidden_size") == 128, "quantize fp8-block: DeepSeek's quantization_config "
          "written into config.json", cfg)
    with open(os.path.join(dst, "model.safetensors.index.json")) as f:
        ix = json.load(f)
    check(sorted(ix["weight_map"]) == want_names and ix["metadata"]["total_size"] ==
          sum(ref.nbytes(v[0], v[1]) for v in got.values()),
          "quantize fp8-block: index weight_map and total_size", ix)
    back = dst + "-back"
    st, out, err = run("dequantize", "-q", dst, back)
    if check(st == 0, "quantize fp8-block: dequantize it back", err):
        with open(os.path.join(back, "config.json")) as f:
            check("quantization_config" not in json.load(f), "round trip: config.json plain again")
        b = folder_tensors(back)
        check(sorted(b) == sorted(t), "round trip fp8-block: the original names", sorted(b))
    # --report: SQNR and max abs error per chosen tensor.
    st, out, err = run("quantize", "-q", "--report", "--scheme", "fp8-block", src, dst + "-r")
    check(st == 0 and err.count("SQNR") == len(chosen) and "max abs error" in err,
          "quantize --report: a line per chosen tensor", err)
    # Every other scheme: its layout's names, and dequantize(quantize(x)) near x.
    schemes = [("mxfp4", [], ["_blocks", "_scales"], 12), ("mxfp4", ["--layout", "mx"], ["", "_scale"], 12),
               ("mxfp8", [], ["", "_scale"], 25), ("mxfp8-e5m2", [], ["", "_scale"], 18),
               ("mxfp6-e2m3", [], ["", "_scale"], 20), ("mxfp6-e3m2", [], ["", "_scale"], 15),
               ("mxint8", [], ["", "_scale"], 30),
               ("nvfp4", [], ["", "_scale", "_scale_2"], 15),
               ("nvfp4", ["--layout", "ct"], ["_packed", "_scale", "_global_scale"], 15),
               ("fp8-channel", [], ["", "_scale"], 25), ("fp8-tensor", [], ["", "_scale"], 20),
               ("int8-channel", [], ["", "_scale"], 30), ("int4-group", [], ["_packed", "_scale"], 12)]
    for scheme, extra, suffixes, min_db in schemes:
        label = " ".join(["quantize", scheme] + extra)
        d = os.path.join(tmp, "q-" + scheme + "-".join(extra))
        st, out, err = run("quantize", "-q", "--scheme", scheme, *extra, src, d)
        if not check(st == 0, label, err):
            continue
        got = folder_tensors(d)
        want = sorted([n for n in t if n not in chosen] + [n + s for n in chosen for s in suffixes])
        check(sorted(got) == want, label + ": names", sorted(got))
        with open(os.path.join(d, "config.json")) as f:
            check("quant_method" in json.load(f).get("quantization_config", {}),
                  label + ": a quantization_config in config.json")
        st, out, err = run("dequantize", "-q", "--to", "float32", d, d + "-back")
        if not check(st == 0, label + ": dequantize it back", err):
            continue
        back = folder_tensors(d + "-back")
        worst = 1e9
        for n in chosen:
            x = bf16_to_f32(t[n][2]).astype(np.float64)
            y = array(back[n], "<f4").astype(np.float64) if n in back else np.zeros(1)
            if y.shape != x.shape:
                worst = -1
                break
            worst = min(worst, 10 * np.log10((x * x).sum() / max(((x - y) ** 2).sum(), 1e-300)))
        check(worst >= min_db, label + ": dequantize(quantize(x)) has SQNR >= %d dB" % min_db,
              "%.1f dB" % worst)
    # A .npy: its one tensor, named after the file.
    x = (rng.standard_normal((256, 384)) * 0.1).astype(np.float32)
    npy = os.path.join(tmp, "w.npy")
    np.save(npy, x)
    st, out, err = run("quantize", "-q", "--scheme", "fp8-block", npy, os.path.join(tmp, "w.safetensors"))
    if check(st == 0, "quantize a .npy", err):
        got = read(os.path.join(tmp, "w.safetensors"))
        q, s = fp8_block_oracle(x)
        same_bits("quantize a .npy: codes of tensor 'w' = numpy hf", array(got["w"], "u1"), q)
    # Usage errors.
    st, out, err = run("quantize", "--scheme", "nvfp4", "--layout", "hf", src, os.path.join(tmp, "u"))
    check(st == 2 and "--layout" in err, "quantize: a layout the scheme lacks is a usage error", err)
    st, out, err = run("quantize", "--scheme", "fp8-block", os.path.join(tmp, "model-fp8"),
                       os.path.join(tmp, "u2"))
    check(st == 1 and "dequantize it first" in err and not os.path.exists(os.path.join(tmp, "u2")),
          "quantize: a quantized input is refused", err)


# ---- the cast refusal on every layout and naming ------------------------------------------------

PLAIN = "model.norm.weight"  # an unscaled F32 tensor beside the groups


def refusal_cases(rng):
    """(label, {name: (dtype, shape, array)}, codes name, [companions]) for every layout and
    naming the recognizer takes (files/quant_layout.h), built by hand."""
    N, K = 8, 64
    L = "model.layers.0.mlp.down_proj."
    E = "model.layers.0.mlp.experts."
    f32 = lambda *shape: (2.0 ** rng.uniform(-8, -2, shape)).astype(np.float32)
    u8 = lambda *shape: rng.integers(0, 256, shape, dtype=np.uint8)
    e8m0 = lambda *shape: rng.integers(110, 130, shape, dtype=np.uint8)
    cases = [
        ("fp8-block 2-D", {L + "weight": ("F8_E4M3", [N, K], rand_codes(rng, (N, K))),
                           L + "weight_scale_inv": ("F32", [1, 1], f32(1, 1))},
         L + "weight", [L + "weight_scale_inv"]),
        ("fp8-block expert stack", {E + "w.weight": ("F8_E4M3", [2, N, K], rand_codes(rng, (2, N, K))),
                                    E + "w.weight_scale_inv": ("F32", [2, 1, 1], f32(2, 1, 1))},
         E + "w.weight", [E + "w.weight_scale_inv"]),
        ("mxfp4 gpt-oss U8 scales", {E + "gate_up_proj_blocks": ("U8", [2, N, 2, 16], u8(2, N, 2, 16)),
                                     E + "gate_up_proj_scales": ("U8", [2, N, 2], e8m0(2, N, 2))},
         E + "gate_up_proj_blocks", [E + "gate_up_proj_scales"]),
        ("mxfp4 gpt-oss F8_E8M0 scales", {E + "down_proj_blocks": ("U8", [N, 2, 16], u8(N, 2, 16)),
                                          E + "down_proj_scales": ("F8_E8M0", [N, 2], e8m0(N, 2))},
         E + "down_proj_blocks", [E + "down_proj_scales"]),
    ]
    for dt, nbytes in (("F8_E4M3", K), ("F8_E5M2", K), ("F6_E2M3", K * 3 // 4),
                       ("F6_E3M2", K * 3 // 4), ("F4", K // 2), ("I8", K)):
        cases.append(("mx %s" % dt, {L + "weight": (dt, [N, K], u8(N, nbytes) & 0x3F
                                                    if dt.startswith("F8") else u8(N, nbytes)),
                                     L + "weight_scale": ("F8_E8M0", [N, K // 32], e8m0(N, K // 32))},
                      L + "weight", [L + "weight_scale"]))
    sc = rand_codes(rng, (N, K // 16)) & 0x7F
    for shape2 in ([], [1]):
        cases.append(("nvfp4 ModelOpt, weight_scale_2 %s" % shape2,
                      {L + "weight": ("U8", [N, K // 2], u8(N, K // 2)),
                       L + "weight_scale": ("F8_E4M3", [N, K // 16], sc),
                       L + "weight_scale_2": ("F32", shape2, np.array(np.float32(0.01)).reshape(shape2)),
                       L + "input_scale": ("F32", [], np.array(np.float32(0.5)))},
                      L + "weight", [L + "weight_scale", L + "weight_scale_2", L + "input_scale"]))
    cases.append(("nvfp4 compressed-tensors", {
        L + "weight_packed": ("U8", [N, K // 2], u8(N, K // 2)),
        L + "weight_scale": ("F8_E4M3", [N, K // 16], sc),
        L + "weight_global_scale": ("F32", [1], np.array([np.float32(300)])),
        L + "input_global_scale": ("F32", [1], np.array([np.float32(300)]))},
        L + "weight_packed", [L + "weight_scale", L + "weight_global_scale", L + "input_global_scale"]))
    for codes_dt, sdt, sshape, what in (("F8_E4M3", "F32", [1], "per tensor"),
                                        ("I8", "F16", [1], "per tensor"),
                                        ("I8", "BF16", [N, 1], "per channel"),
                                        ("F8_E4M3", "F32", [N, 1], "per channel"),
                                        ("F8_E4M3", "F16", [N, 2], "groups"),
                                        ("I8", "F32", [N, 4], "groups")):
        s = f32(*sshape)
        s = (bf16_bits(s) if sdt == "BF16" else s.astype(np.float16) if sdt == "F16" else s)
        cases.append(("absmax %s %s, %s scale" % (codes_dt, what, sdt),
                      {L + "weight": (codes_dt, [N, K], rand_codes(rng, (N, K))),
                       L + "weight_scale": (sdt, sshape, s)},
                      L + "weight", [L + "weight_scale"]))
    for with_shape in (False, True):
        t = {L + "weight_packed": ("U8", [N, K // 2], u8(N, K // 2)),
             L + "weight_scale": ("BF16", [N, 2], bf16_bits(f32(N, 2)))}
        parts = [L + "weight_scale"]
        if with_shape:
            t[L + "weight_shape"] = ("I64", [2], np.array([N, K], dtype=np.int64))
            parts.append(L + "weight_shape")
        cases.append(("int4-group%s" % (" with weight_shape" if with_shape else ""), t,
                      L + "weight_packed", parts))
    return cases


def refusal_checks(label, src, codes, parts, tmp, plain=True):
    """cast refuses the group (all tensors; --select of each part), naming the codes, their
    scale and dequantize, writing nothing; --raw-codes casts the codes as a plain cast of them
    alone does; --select/--exclude of only the unscaled tensor work."""
    dst = os.path.join(tmp, "refuse.safetensors")
    st, out, err = run("cast", "-q", "--to", "bfloat16", src, dst)
    one = err.strip().splitlines()
    check(st == 1 and len(one) == 1 and "tensor '%s'" % codes in err and
          "scaled by '%s'" % parts[0] in err and "'dtcast dequantize'" in err and
          "--raw-codes" in err and not os.path.exists(dst), label + ": cast refuses it", err)
    for part in parts:
        st, out, err = run("cast", "-q", "--select", part, "--to", "bfloat16", src, dst)
        check(st == 1 and "tensor '%s'" % codes in err and not os.path.exists(dst),
              label + ": cast --select %s refuses it" % part.rsplit(".", 1)[-1], err)
    if not plain:
        return
    st, out, err = run("cast", "-q", "--raw-codes", "--to", "bfloat16", src, dst)
    raw = read(dst) if st == 0 else {}
    alone = os.path.join(tmp, "alone.safetensors")
    tensors = read(src)
    ref.write(alone, {n: tensors[n] for n in (codes, PLAIN)}, {"format": "pt"})
    dst2 = os.path.join(tmp, "alone-bf16.safetensors")
    st2, out, err2 = run("cast", "-q", "--to", "bfloat16", alone, dst2)
    plain_cast = read(dst2) if st2 == 0 else {}
    check(st == 0 and st2 == 0 and codes in raw and raw.get(codes) == plain_cast.get(codes) and
          raw.get(PLAIN) == plain_cast.get(PLAIN) and all(raw.get(p) is not None for p in parts),
          label + ": --raw-codes casts the codes as a plain cast of them alone", err + err2)
    c = tensors[codes]
    if c[0] == "F8_E4M3":
        want = bf16_bits(E4M3[np.frombuffer(c[2], np.uint8)])
        check(raw.get(codes, ("", [], b""))[2] == want.tobytes(),
              label + ": --raw-codes: bfloat16 of the e4m3 codes (numpy)")
    elif c[0] in ("U8", "I8"):  # a checkpoint's integer tensors are copied, not converted
        check(raw.get(codes) == c, label + ": --raw-codes: the %s codes copied as they are" % c[0])
    norm = np.frombuffer(tensors[PLAIN][2], np.float32)
    for how in (("--select", PLAIN), ("--exclude", "model.layers.*")):
        st, out, err = run("cast", "-q", *how, "--to", "bfloat16", src, dst)
        got = read(dst) if st == 0 else {}
        check(st == 0 and got.get(PLAIN, ("",))[0] == "BF16" and
              got[PLAIN][2] == bf16_bits(norm).tobytes() and
              all(got.get(n) == tensors[n] for n in [codes] + parts),
              label + ": cast %s of only the unscaled tensor converts it, the group copied" % how[0],
              err)
    for f in (dst, dst2, alone):
        if os.path.exists(f):
            os.remove(f)


def test_cast_refusal_layouts(tmp, rng):
    """Every layout and naming of files/quant_layout.h, built by hand, then each scheme's layout
    as dtcast quantize writes it."""
    norm = rng.standard_normal(16).astype(np.float32)
    src = os.path.join(tmp, "refusal.safetensors")
    for label, tensors, codes, parts in refusal_cases(rng):
        t = dict(tensors)
        t[PLAIN] = ("F32", [16], norm)
        write(src, t)
        refusal_checks(label, src, codes, parts, tmp)
    x = {"model.layers.0.mlp.down_proj.weight":
         ("BF16", [128, 256], bf16_bits((rng.standard_normal((128, 256)) * 0.05).astype(np.float32))),
         PLAIN: ("F32", [16], norm)}
    model = os.path.join(tmp, "refusal-bf16.safetensors")
    write(model, x)
    L = "model.layers.0.mlp.down_proj."
    for args, codes, scale in ((["fp8-block"], L + "weight", L + "weight_scale_inv"),
                               (["mxfp4"], L + "weight_blocks", L + "weight_scales"),
                               (["mxfp4", "--layout", "mx"], L + "weight", L + "weight_scale"),
                               (["mxfp8"], L + "weight", L + "weight_scale"),
                               (["mxfp8-e5m2"], L + "weight", L + "weight_scale"),
                               (["mxfp6-e2m3"], L + "weight", L + "weight_scale"),
                               (["mxfp6-e3m2"], L + "weight", L + "weight_scale"),
                               (["mxint8"], L + "weight", L + "weight_scale"),
                               (["nvfp4"], L + "weight", L + "weight_scale"),
                               (["nvfp4", "--layout", "ct", "--variant", "ct"], L + "weight_packed",
                                L + "weight_scale"),
                               (["fp8-tensor"], L + "weight", L + "weight_scale"),
                               (["fp8-channel"], L + "weight", L + "weight_scale"),
                               (["int8-tensor"], L + "weight", L + "weight_scale"),
                               (["int8-channel"], L + "weight", L + "weight_scale"),
                               (["int4-group"], L + "weight_packed", L + "weight_scale")):
        label = "quantize --scheme " + " ".join(args)
        q = os.path.join(tmp, "refusal-q.safetensors")
        st, out, err = run("quantize", "-q", "--scheme", *args, model, q)
        if not check(st == 0, label + ": written", err):
            continue
        names = sorted(read(q))
        parts = [n for n in names if n not in (codes, PLAIN)]
        if not check(codes in names and scale in parts, label + ": its names", names):
            continue
        parts.remove(scale)
        refusal_checks(label, q, codes, [scale] + parts, tmp)
        os.remove(q)


def main():
    if not os.path.exists(DTCAST):
        print("FAIL setup: no %s" % DTCAST)
        return 1
    rng = np.random.default_rng(15)
    tmp = tempfile.mkdtemp(prefix="dtcast-quant-cli.")
    try:
        for test in (test_block_fp8, test_gptoss, test_nvfp4, test_ct_fp8, test_errors, test_quantize,
                     test_cast_refusal_layouts):
            try:
                test(tmp, rng)
            except Exception as e:  # a crash is one failure, the others still run
                check(False, test.__name__, "%s: %s" % (type(e).__name__, e))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failures() else 0


if __name__ == "__main__":
    sys.exit(main())
