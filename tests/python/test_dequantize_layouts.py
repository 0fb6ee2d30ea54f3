"""`dtcast dequantize` (dtcast.files.dequantize_checkpoint) on every quantized checkpoint layout of
tests/python/ckpt_layouts.py: DeepSeek-V4 (FP8 with F8_E8M0 tile scales, FP4 experts in I8),
compressed-tensors pack-quantized INT4/INT8 (symmetric, asymmetric, MoE) and mixed-precision,
GPTQ (v1, v2, act-order, 8-bit, per channel), AWQ GEMM, and diffusion scaled FP8 (ComfyUI,
comfy_quant, diffusers, block-wise).

The reference is ckpt_layouts.py's: each producer's own dequantizer modelled in numpy from its
documents and code, never from dtcast (and checked against compressed-tensors' own decompressor
by test_ckpt_layouts_ref.py). For every case and output type, every dequantized tensor must
equal the producer's values rounded to that type, byte for byte; every plain tensor is copied
byte for byte; the scales, zero points, shapes, g_idx, hints and markers are gone; config.json
keeps everything but quantization_config. Sharded checkpoints (a layer's parts in different
shards) give the same bytes. Each malformed variant is refused with one line naming what it
should, and nothing is written."""
import json
import os

import numpy as np
import pytest

import dtcast

import ckpt_layouts as L

TARGETS = ("bfloat16", "float16", "float32")
CASES = {c.name: c for c in L.all_cases(seed=3)}
COUNTS = {"tensors": 0, "elements": 0}


def run(case, tmp_path, to, shards=1, split_groups=False):
    src, dst = tmp_path / "in", tmp_path / ("out_" + to)
    L.write_checkpoint(str(src), case, shards=shards, split_groups=split_groups)
    dtcast.files.dequantize_checkpoint(str(src), str(dst), to=to)
    return src, dst


def nvfp4_products(case, out_name):
    """compressed-tensors' NVFP4 arithmetic without its last cast: f32(fp4) * f32(f32(scale) /
    global_scale) (ckpt_layouts.nvfp4_reference before its bf16), which the output type then
    rounds once: the decompressor's final cast is to its model dtype, which dequantize's --to
    replaces."""
    members = case.groups[out_name]
    codes = case.tensors[next(m for m in members if m.endswith("weight_packed"))]
    scale = case.tensors[next(m for m in members if m.endswith("weight_scale"))]
    gs = case.tensors[next(m for m in members if m.endswith("weight_global_scale"))]
    q = L.unpack_nibbles_low_first(codes)
    s = L.decode_e4m3fn(scale).astype(np.float32)
    g = np.float32(np.asarray(gs, dtype=np.float32).reshape(-1)[0])
    k = q.shape[-1]
    v = L.FP4_E2M1[q].astype(np.float32)
    return (v * np.repeat((s / g).astype(np.float32), k // s.shape[-1], axis=-1)).astype(np.float32)


def expected(case, to):
    """ckpt_layouts.expected, with NVFP4's products before the decompressor's own bf16 cast."""
    want = L.expected(case, to)
    for out_name, members in case.groups.items():
        if any(m.endswith("weight_global_scale") for m in members):
            want[out_name] = nvfp4_products(case, out_name).astype(want[out_name].dtype)
    return want


def as_bits(a):
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


@pytest.mark.parametrize("to", TARGETS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_dequantized_bytes_equal_the_producers(tmp_path, name, to):
    case = CASES[name]
    _, dst = run(case, tmp_path, to)
    tensors, _ = L.read_checkpoint(str(dst))
    want = expected(case, to)
    assert set(want) <= set(tensors), sorted(set(want) - set(tensors))
    for out_name, w in want.items():
        g = tensors[out_name]
        assert g.shape == w.shape, (out_name, g.shape, w.shape)
        assert str(g.dtype) == str(w.dtype), (out_name, g.dtype, w.dtype)
        bad = np.flatnonzero(as_bits(g).reshape(-1) != as_bits(w).reshape(-1))
        assert bad.size == 0, "%s: %d of %d elements differ; first at %d: %r, the producer's %r" % (
            out_name, bad.size, w.size, bad[0], g.reshape(-1)[bad[0]], w.reshape(-1)[bad[0]])
        COUNTS["tensors"] += 1
        COUNTS["elements"] += int(w.size)
    for p in case.plain:
        assert p in tensors, p
        assert tensors[p].tobytes() == case.tensors[p].tobytes(), p
    consumed = {m for members in case.groups.values() for m in members} | set(case.markers)
    left = consumed & set(tensors) - set(want)
    assert not left, "scales or markers left in the output: %s" % sorted(left)
    if case.config is not None:
        cfg = json.load(open(dst / "config.json"))
        assert "quantization_config" not in cfg
        assert cfg == {k: v for k, v in case.config.items() if k != "quantization_config"}


@pytest.mark.parametrize("name", ["deepseek_v4_2layers_4experts", "ct_mixed_bf16",
                                  "gptq_v1_4bit_act_asym", "scaled_fp8_block"])
def test_sharded_with_split_groups(tmp_path, name):
    """The same checkpoint in three shards, a layer's codes and scales in different ones: the
    same dequantized bytes, shard by shard as the index says."""
    case = CASES[name]
    _, one = run(case, tmp_path / "a", "bfloat16")
    _, three = run(case, tmp_path / "b", "bfloat16", shards=3, split_groups=True)
    (ta, _), (tb, _) = L.read_checkpoint(str(one)), L.read_checkpoint(str(three))
    assert sorted(ta) == sorted(tb)
    for k in ta:
        assert ta[k].tobytes() == tb[k].tobytes(), k
    index = json.load(open(three / "model.safetensors.index.json"))
    assert sorted(index["weight_map"]) == sorted(tb)


@pytest.mark.parametrize("name", sorted(L.MALFORMED))
def test_malformed_refused(tmp_path, name):
    m = L.malformed(name)
    src, dst = tmp_path / "in", tmp_path / "out"
    L.write_checkpoint(str(src), m.case)
    if name.endswith("nan_scale"):
        # a NaN scale is a value the format has (E8M0 0xFF, E4M3 0x7F): its block dequantizes
        # to NaN, as the producer's own dequantizer gives, and the rest is exact
        dtcast.files.dequantize_checkpoint(str(src), str(dst), to="float32")
        got, _ = L.read_checkpoint(str(dst))
        want = expected(m.case, "float32")
        for k, w in want.items():
            assert np.array_equal(np.isnan(got[k]), np.isnan(w)), k
            ok = ~np.isnan(w)
            assert np.array_equal(got[k][ok], w[ok]), k
        return
    with pytest.raises(dtcast.Error) as e:
        dtcast.files.dequantize_checkpoint(str(src), str(dst), to="bfloat16")
    text = str(e.value)
    assert "\n" not in text, text
    for want in m.mentions:
        assert want in text, "%s: %r does not name %r (%s)" % (name, text, want, m.description)
    assert not any(f.endswith(".safetensors") for f in os.listdir(dst)) if dst.exists() else True


def test_counts_reported():
    """Runs last (file order): how many tensors and elements the byte comparison covered."""
    print("\ncompared %d dequantized tensors, %d elements" % (COUNTS["tensors"],
                                                            COUNTS["elements"]))


LAYOUT_NAMES = {"deepseek_v4": {"deepseek-v4-fp8", "deepseek-v4-fp4", "fp8-block"},
                "ct_pack_quantized": {"pack-quantized"},
                "ct_mixed_precision": {"absmax", "nvfp4-ct"},
                "gptq": {"gptq"}, "awq": {"awq"},
                "scaled_fp8": {"absmax", "absmax-comfyui"},
                "ct_mx": {"mx-ct"}}


@pytest.mark.parametrize("name", sorted(CASES))
def test_inspect_names_and_cast_refuses(tmp_path, name):
    """inspect lists every quantized tensor of the case under its layout's name, and cast
    refuses the checkpoint (its codes are not its values), naming a quantized tensor."""
    case = CASES[name]
    src = tmp_path / "in"
    L.write_checkpoint(str(src), case)
    r = dtcast.inspect(str(src))
    got = {q["tensor"]: q["layout"] for q in r["quantized"]}
    assert set(got) == set(case.reference), sorted(set(case.reference) ^ set(got))
    assert set(got.values()) <= LAYOUT_NAMES[case.layout], set(got.values())
    with pytest.raises(dtcast.Error) as e:
        dtcast.files.convert_file(str(src / "model.safetensors"),
                                  str(tmp_path / "out.safetensors"), to="bfloat16")
    assert not (tmp_path / "out.safetensors").exists()
    assert "dequantize" in str(e.value) and any(
        m in str(e.value) for ms in case.groups.values() for m in ms), str(e.value)
