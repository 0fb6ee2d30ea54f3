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


def nvfp4_modelopt_case(rng, g):
    """A ModelOpt NVFP4 checkpoint: two weights of random float4 codes (two per byte) and E4M3
    block scales (no NaN), the global scale g, a plain norm."""
    t = {}
    for x, (n, k) in {"model.layers.0.mlp.up_proj": (64, 128),
                      "model.layers.0.mlp.down_proj": (32, 64)}.items():
        t[x + ".weight"] = rng.integers(0, 256, size=(n, k // 2), dtype=np.uint8)
        t[x + ".weight_scale"] = L.rand_e4m3_codes(rng, (n, k // 16)).view(ml_dtypes.float8_e4m3fn)
        t[x + ".weight_scale_2"] = np.array(g, np.float32)
    t["model.norm.weight"] = np.ones(8, np.float32)
    return L.Case(tensors=t, config={"architectures": ["X"], "quantization_config": {
        "quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16}},
        reference={}, plain=["model.norm.weight"])


@pytest.mark.parametrize("shards", [1, 2])
def test_nvfp4_modelopt_to_ct_and_back(tmp_path, shards):
    """NVFP4 in ModelOpt's layout with a power-of-two global scale (its reciprocal exact), to
    compressed-tensors' names and back: the codes and block scales byte for byte, the global
    scale the reciprocal (compressed-tensors' [1], ModelOpt's []), and the dequantized bytes
    the same from all three."""
    case = nvfp4_modelopt_case(np.random.default_rng(4), 2.0 ** -7)
    mo, ct, back = tmp_path / "mo", tmp_path / "ct", tmp_path / "back"
    L.write_checkpoint(str(mo), case, shards=shards)
    dtcast.files.convert_layout(str(mo), str(ct), to="nvfp4-ct")
    a, _ = L.read_checkpoint(str(mo))
    b, _ = L.read_checkpoint(str(ct))
    for x in ("model.layers.0.mlp.up_proj", "model.layers.0.mlp.down_proj"):
        assert b[x + ".weight_packed"].tobytes() == a[x + ".weight"].tobytes()
        assert b[x + ".weight_scale"].tobytes() == a[x + ".weight_scale"].tobytes()
        g, gs = a[x + ".weight_scale_2"], b[x + ".weight_global_scale"]
        assert g.shape == () and gs.shape == (1,) and float(gs[0]) == 128.0
    cfg = json.load(open(ct / "config.json"))["quantization_config"]
    assert cfg["quant_method"] == "compressed-tensors" and cfg["format"] == "nvfp4-pack-quantized"
    dtcast.files.convert_layout(str(ct), str(back), to="nvfp4-modelopt")
    c, _ = L.read_checkpoint(str(back))
    assert sorted(c) == sorted(a)
    for k in a:
        assert c[k].tobytes() == a[k].tobytes(), k
    for to in ("bfloat16", "float32"):
        d1 = dequantized(mo, tmp_path, "mo" + to, to)
        d2 = dequantized(ct, tmp_path, "ct" + to, to)
        for k in d1:
            assert d1[k].tobytes() == d2[k].tobytes(), (k, to)


def test_nvfp4_inexact_global_refused(tmp_path):
    """A ModelOpt global scale (ModelOpt's amax / 2688) for which no float32 reciprocal gives
    every block scale the same factor -- the usual case: fl32(S x g) and fl32(S / gs) round
    apart for some S -- is refused naming the global scale tensor, with nothing written."""
    def exact(scales, g):  # numpy: some float32 near 1/g gives each S the same factor
        s = L.decode_e4m3fn(np.unique(scales.view(np.uint8))).astype(np.float32)
        r = np.float32(1) / g
        return any(np.array_equal((s * g).astype(np.float32), (s / gs).astype(np.float32))
                   for gs in (r, np.nextafter(r, np.float32(0)), np.nextafter(r, np.float32(np.inf))))

    for amax in np.arange(1, 200, dtype=np.float32) * np.float32(0.37):
        g = np.float32(amax / np.float32(2688))
        case = nvfp4_modelopt_case(np.random.default_rng(5), g)
        if not all(exact(case.tensors[k], g) for k in case.tensors if k.endswith("weight_scale")):
            break
    else:
        pytest.fail("every global scale tried was exact")
    src, dst = tmp_path / "mo", tmp_path / "ct"
    L.write_checkpoint(str(src), case)
    with pytest.raises(dtcast.Error, match="weight_scale_2.*no float32 weight_global_scale"):
        dtcast.files.convert_layout(str(src), str(dst), to="nvfp4-ct")
    assert not dst.exists() or not [f for f in os.listdir(dst) if f.endswith(".safetensors")]
