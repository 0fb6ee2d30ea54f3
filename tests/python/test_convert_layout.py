"""dtcast convert-layout (dtcast.files.convert_layout): block FP8 between DeepSeek-V3's F32
X.weight_scale_inv and DeepSeek-V4's F8_E8M0 X.scale, exactly. Checked against things the
conversion does not compute: the E8M0 byte of each scale is its float32 exponent field (numpy);
dequantizing the output gives the bytes dequantizing the input gives (and, for V4, the numpy
model of DeepSeek's dequantizer in ckpt_layouts.py); a scale that is not a power of two is
refused naming the tensor and the element, and nothing is written."""
import json
import os

import ml_dtypes
import numpy as np
import pytest

import dtcast

import ckpt_layouts as L


def v3_case(rng, power_of_two=True):
    """A DeepSeek-V3-style block-FP8 checkpoint: two weights (one with edge tiles), their F32
    weight_scale_inv per 128 x 128 tile, a BF16 norm."""
    tensors, plain = {}, []
    for name, (n, k) in {"model.layers.0.self_attn.q_a_proj.weight": (200, 300),
                         "model.layers.0.mlp.down_proj.weight": (256, 128)}.items():
        tensors[name] = L.rand_e4m3_codes(rng, (n, k)).view(ml_dtypes.float8_e4m3fn)
        tiles = (-(-n // 128), -(-k // 128))
        e = rng.integers(-20, 5, size=tiles)
        s = np.ldexp(np.float32(1), e).astype(np.float32)
        if not power_of_two:
            s[-1, -1] *= np.float32(1.5)
        tensors[name + "_scale_inv"] = s
    tensors["model.layers.0.input_layernorm.weight"] = rng.standard_normal(64).astype(
        ml_dtypes.bfloat16)
    plain.append("model.layers.0.input_layernorm.weight")
    cfg = {"architectures": ["DeepseekV3ForCausalLM"],
           "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3",
                                   "quant_method": "fp8", "weight_block_size": [128, 128]}}
    return L.Case(tensors=tensors, config=cfg, reference={}, plain=plain, layout="fp8_block",
                  name="v3")


def dequantized(folder, tmp_path, tag, to="bfloat16"):
    out = tmp_path / ("dq_" + tag)
    dtcast.files.dequantize_checkpoint(str(folder), str(out), to=to)
    return L.read_checkpoint(str(out))[0]


@pytest.mark.parametrize("shards", [1, 2])
def test_v3_to_v4_and_back(tmp_path, shards):
    case = v3_case(np.random.default_rng(1))
    src, v4, back = tmp_path / "v3", tmp_path / "v4", tmp_path / "back"
    L.write_checkpoint(str(src), case, shards=shards)
    dtcast.files.convert_layout(str(src), str(v4), to="deepseek-v4")
    got, _ = L.read_checkpoint(str(v4))
    for name, t in case.tensors.items():
        if name.endswith("_scale_inv"):
            new = name[:-len("weight_scale_inv")] + "scale"
            assert name not in got and str(got[new].dtype) == "float8_e8m0fnu"
            want = (t.view(np.uint32) >> 23).astype(np.uint8)  # the exponent field
            assert np.array_equal(got[new].view(np.uint8), want), new
        else:
            assert got[name].tobytes() == t.tobytes(), name
    cfg = json.load(open(v4 / "config.json"))
    assert cfg["quantization_config"] == {"fmt": "e4m3", "quant_method": "fp8",
                                          "scale_fmt": "ue8m0", "weight_block_size": [128, 128]}
    assert cfg["architectures"] == ["DeepseekV3ForCausalLM"]
    if shards > 1:
        index = json.load(open(v4 / "model.safetensors.index.json"))
        assert sorted(index["weight_map"]) == sorted(got)
    for to in ("bfloat16", "float32"):
        a, b = dequantized(src, tmp_path, "a" + to, to), dequantized(v4, tmp_path, "b" + to, to)
        assert sorted(a) == sorted(b)
        for k in a:
            assert a[k].tobytes() == b[k].tobytes(), (k, to)
    dtcast.files.convert_layout(str(v4), str(back), to="fp8-block")
    again, _ = L.read_checkpoint(str(back))
    assert sorted(again) == sorted(case.tensors)
    for k, t in case.tensors.items():
        assert again[k].tobytes() == t.tobytes(), k


def test_v4_to_fp8_block(tmp_path):
    """DeepSeek-V4 (FP8 with E8M0 tiles, FP4 experts) to V3's F32 scales: the experts are copied,
    and dequantizing gives DeepSeek's values, as from the V4 checkpoint."""
    case = L.make_deepseek_v4(np.random.default_rng(2))
    src, dst = tmp_path / "v4", tmp_path / "v3"
    L.write_checkpoint(str(src), case)
    text = dtcast.files.convert_layout(str(src), str(dst), to="fp8-block", report=True)
    assert "converted exactly" in text
    got, _ = L.read_checkpoint(str(dst))
    assert any(k.endswith(".weight_scale_inv") for k in got)
    a = dequantized(dst, tmp_path, "v3", "float32")
    want = L.expected(case, "float32")
    for k, w in want.items():
        assert a[k].tobytes() == w.tobytes(), k


def test_inexact_refused(tmp_path):
    case = v3_case(np.random.default_rng(3), power_of_two=False)
    src, dst = tmp_path / "v3", tmp_path / "v4"
    L.write_checkpoint(str(src), case)
    with pytest.raises(dtcast.Error) as e:
        dtcast.files.convert_layout(str(src), str(dst), to="deepseek-v4")
    text = str(e.value)
    assert "\n" not in text and "weight_scale_inv" in text and "q_a_proj.weight_scale_inv', element 5" in text and \
        "not a power of two" in text, text
    assert not dst.exists() or not os.listdir(dst)
    with pytest.raises(dtcast.Error, match="no block-FP8 tensor in the other naming"):
        dtcast.files.convert_layout(str(src), str(tmp_path / "x"), to="fp8-block")
    with pytest.raises(dtcast.Error, match="to: one of"):
        dtcast.files.convert_layout(str(src), str(tmp_path / "x"), to="gguf")
