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
    with pytest.raises(dtcast.Error, match="no quantized tensor in another layout to convert"):
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


# ---- MXFP4 between gpt-oss's, OCP MX's and compressed-tensors' names --------------------------

def raw_tensors(folder):
    """{name: (safetensors dtype, shape, raw bytes)} over every shard of a folder, read from the
    files' headers (numpy has no float4 dtype, so F4 tensors stay bytes)."""
    out = {}
    for fname in sorted(os.listdir(folder)):
        if not fname.endswith(".safetensors"):
            continue
        data = open(os.path.join(folder, fname), "rb").read()
        n = int.from_bytes(data[:8], "little")
        header = json.loads(data[8:8 + n])
        header.pop("__metadata__", None)
        for name, info in header.items():
            b, e = info["data_offsets"]
            out[name] = (info["dtype"], tuple(info["shape"]), data[8 + n + b: 8 + n + e])
    return out


def mx_reference(codes_u8, scale_u8, k, dtype):
    """OCP MX's values of packed FP4 bytes [..., K/2] (low nibble first) under E8M0 bytes
    [..., K/32]: FP4 value x 2^(b - 127), exact in float64, rounded once to dtype."""
    lead = codes_u8.shape[:-1]
    c = np.stack([codes_u8 & 15, codes_u8 >> 4], axis=-1).reshape(*lead, k)
    v = L.FP4_E2M1[c] * np.repeat(np.ldexp(1.0, scale_u8.astype(np.int64) - 127), 32, axis=-1)[..., :k]
    return v.astype(np.float32).astype(dtype)


def gptoss_case(rng, fused=True, ff=False):
    """gpt-oss's MXFP4: X_blocks U8 [..., K/32, 16] + X_scales U8 [..., K/32]; a fused experts
    tensor (gpt-oss's own name, not a module weight) when fused, and a module weight; a BF16
    norm. ff: one scale byte 0xFF."""
    t, ref = {}, {}
    shapes = {"model.layers.0.self_attn.q_proj.weight": (16, 64)}
    if fused:
        shapes["model.layers.0.mlp.experts.gate_up_proj"] = (2, 8, 96)
    for d, shape in shapes.items():
        k = shape[-1]
        codes = rng.integers(0, 256, size=shape[:-1] + (k // 2,), dtype=np.uint8)
        sc = rng.integers(110, 135, size=shape[:-1] + (k // 32,), dtype=np.uint8)
        if ff and d.endswith("q_proj.weight"):
            sc[3, 1] = 0xFF
        t[d + "_blocks"] = codes.reshape(shape[:-1] + (k // 32, 16))
        t[d + "_scales"] = sc
        ref[d] = (codes, sc, k)
    t["model.norm.weight"] = np.ones(8, L.BF16)
    case = L.Case(tensors=t, config={"architectures": ["GptOssForCausalLM"],
                                     "quantization_config": {"quant_method": "mxfp4"}},
                  reference={}, plain=["model.norm.weight"])
    return case, ref


def check_dequantized(folder, ref, tmp_path, tag):
    for to in ("bfloat16", "float32"):
        got = dequantized(folder, tmp_path, tag + to, to)
        for d, (codes, sc, k) in ref.items():
            want = mx_reference(codes, sc, k, L._OUT_DTYPES[to])
            assert got[d].shape == want.shape and got[d].tobytes() == want.tobytes(), (d, to)


def test_mxfp4_gptoss_mx_and_back(tmp_path):
    """gpt-oss -> OCP MX -> gpt-oss: the same bytes under F4 X / F8_E8M0 X_scale (any name: the
    fused experts keep theirs), and back byte for byte; each dequantizes to the OCP MX values."""
    case, ref = gptoss_case(np.random.default_rng(10))
    src, mx, back = tmp_path / "g", tmp_path / "mx", tmp_path / "back"
    L.write_checkpoint(str(src), case)
    dtcast.files.convert_layout(str(src), str(mx), to="mx")
    got = raw_tensors(mx)
    for d, (codes, sc, k) in ref.items():
        assert got[d][:2] == ("F4", codes.shape[:-1] + (k,)) and got[d][2] == codes.tobytes()
        assert got[d + "_scale"][:2] == ("F8_E8M0", sc.shape) and got[d + "_scale"][2] == sc.tobytes()
    assert json.load(open(mx / "config.json"))["quantization_config"]["quant_method"] == "dtcast-mx"
    check_dequantized(src, ref, tmp_path, "g")
    check_dequantized(mx, ref, tmp_path, "mx")
    dtcast.files.convert_layout(str(mx), str(back), to="mxfp4-gptoss")
    a, b = raw_tensors(src), raw_tensors(back)
    assert a == b
    assert json.load(open(back / "config.json"))["quantization_config"] == {"quant_method": "mxfp4"}


def ct_decompress(folder, d):
    """compressed-tensors' own MXFP4 decompressor (MXFP4PackedCompressor) on module d's
    weight_packed / weight_scale, under the scheme of the folder's config.json: bfloat16."""
    torch = pytest.importorskip("torch")
    from compressed_tensors.compressors.mxfp4.base import MXFP4PackedCompressor
    from compressed_tensors.quantization import QuantizationConfig
    qc = QuantizationConfig.model_validate(json.load(open(folder / "config.json"))["quantization_config"])
    scheme = next(iter(qc.config_groups.values()))
    t, _ = L.read_checkpoint(str(folder))
    sd = {"weight_packed": torch.from_numpy(t[d + "_packed"].copy()),
          "weight_scale": torch.from_numpy(t[d + "_scale"].copy())}
    return MXFP4PackedCompressor.decompress(sd, scheme)["weight"]


def test_mxfp4_gptoss_ct_mx_round_trip(tmp_path):
    """gpt-oss -> compressed-tensors -> OCP MX -> gpt-oss, byte for byte at the end; the
    compressed-tensors checkpoint is read by compressed-tensors' own decompressor (its config
    validated by compressed-tensors) to the OCP MX values."""
    case, ref = gptoss_case(np.random.default_rng(11), fused=False)
    src, ct, mx, back = tmp_path / "g", tmp_path / "ct", tmp_path / "mx", tmp_path / "back"
    L.write_checkpoint(str(src), case, shards=2)
    dtcast.files.convert_layout(str(src), str(ct), to="mx-ct")
    got = raw_tensors(ct)
    for d, (codes, sc, k) in ref.items():
        assert got[d + "_packed"] == ("U8", codes.shape, codes.tobytes())
        assert got[d + "_scale"] == ("U8", sc.shape, sc.tobytes())
        w = ct_decompress(ct, d)
        want = mx_reference(codes, sc, k, L.BF16)
        assert w.view(__import__("torch").int16).numpy().tobytes() == want.tobytes(), d
    cfg = json.load(open(ct / "config.json"))["quantization_config"]
    assert cfg["format"] == "mxfp4-pack-quantized"
    check_dequantized(ct, ref, tmp_path, "ct")
    dtcast.files.convert_layout(str(ct), str(mx), to="mx")
    check_dequantized(mx, ref, tmp_path, "mx")
    dtcast.files.convert_layout(str(mx), str(back), to="mxfp4-gptoss")
    assert raw_tensors(src) == raw_tensors(back)
    index = json.load(open(back / "model.safetensors.index.json"))
    assert sorted(index["weight_map"]) == sorted(case.tensors)


def test_mxfp4_refusals(tmp_path):
    """Refused with one line naming the tensor, nothing written: a fused experts tensor into
    compressed-tensors' names (it has none for it); a 0xFF scale between gpt-oss (2^128) and
    OCP MX (NaN) -- while gpt-oss -> compressed-tensors (both 2^128) keeps it; rows that are
    not whole gpt-oss blocks."""
    case, _ = gptoss_case(np.random.default_rng(12))
    src = tmp_path / "g"
    L.write_checkpoint(str(src), case)
    with pytest.raises(dtcast.Error, match="gate_up_proj_blocks.*not a module's weight"):
        dtcast.files.convert_layout(str(src), str(tmp_path / "x1"), to="mx-ct")
    assert not (tmp_path / "x1").exists() or not os.listdir(tmp_path / "x1")
    case, _ = gptoss_case(np.random.default_rng(13), fused=False, ff=True)
    src = tmp_path / "gff"
    L.write_checkpoint(str(src), case)
    with pytest.raises(dtcast.Error) as e:
        dtcast.files.convert_layout(str(src), str(tmp_path / "x2"), to="mx")
    assert "q_proj.weight_scales', element 7" in str(e.value) and "0xFF" in str(e.value)
    assert not (tmp_path / "x2").exists() or not os.listdir(tmp_path / "x2")
    dtcast.files.convert_layout(str(src), str(tmp_path / "ct"), to="mx-ct")
    assert raw_tensors(tmp_path / "ct")["model.layers.0.self_attn.q_proj.weight_scale"][2] == \
        case.tensors["model.layers.0.self_attn.q_proj.weight_scales"].tobytes()
    # OCP MX rows of 48 codes: one short block, no gpt-oss layout
    rng = np.random.default_rng(14)
    t = {"l.weight_packed": rng.integers(0, 256, size=(4, 24), dtype=np.uint8),
         "l.weight_scale": rng.integers(120, 130, size=(4, 2), dtype=np.uint8)}
    ct = tmp_path / "ct48"
    L.write_checkpoint(str(ct), L.Case(tensors=t, config=None, reference={}, plain=[]))
    with pytest.raises(dtcast.Error, match="l.weight_packed.*whole blocks of 32"):
        dtcast.files.convert_layout(str(ct), str(tmp_path / "x3"), to="mxfp4-gptoss")


# ---- DeepSeek-V4's FP4 experts as FP8 tiles ---------------------------------------------------

def dsv4_case(rng, **kw):
    """make_deepseek_v4 with its expert scales kept in a realistic range (the maker's edge byte 0,
    2^-127, next to blocks of 2^-12 cannot share one FP8 tile scale: that is the refusal test)."""
    case = L.make_deepseek_v4(rng, layers=2, n_experts=4, **kw)
    for k, t in case.tensors.items():
        if ".experts." in k and k.endswith(".scale"):
            u = t.view(np.uint8).copy()
            u[u < 100] = 118
            case.tensors[k] = u.view(t.dtype)
    return case


def test_dsv4_fp4_experts_to_fp8(tmp_path):
    """DeepSeek-V4-Flash's FP4 experts (I8, E8M0 per 32) as FP8 with one E8M0 scale per 128 x 128
    tile: each tile's scale is DeepSeek's ue8m0 scale of its values, 2^ceil(log2(amax / 448))
    (2^0 for an all-zero tile), each code the E4M3 of value / scale (ml_dtypes); expert_dtype
    becomes "fp8"; dequantizing gives the bytes the FP4 checkpoint gives."""
    case = dsv4_case(np.random.default_rng(20))
    src, dst = tmp_path / "v4", tmp_path / "fp8"
    L.write_checkpoint(str(src), case, shards=2)
    text = dtcast.files.convert_layout(str(src), str(dst), to="deepseek-v4-fp8", report=True)
    assert "converted exactly" in text
    got, _ = L.read_checkpoint(str(dst))
    values = L.dequantize_deepseek_v4(case.tensors, case.config)  # the numpy model, float32
    n_experts = 0
    for name, t in case.tensors.items():
        if ".experts." in name and name.endswith(".scale"):
            continue
        if not (".experts." in name and name.endswith(".weight")):
            if name in got:
                assert got[name].tobytes() == t.tobytes(), name
            continue
        n_experts += 1
        v = values[name].astype(np.float64)
        N, K = v.shape
        codes, scale = got[name], got[name[:-len("weight")] + "scale"]
        assert codes.dtype == L.F8_E4M3 and codes.shape == (N, K), name
        assert scale.dtype == L.F8_E8M0 and scale.shape == (-(-N // 128), -(-K // 128)), name
        for tr in range(scale.shape[0]):
            for tc in range(scale.shape[1]):
                tile = v[tr * 128:(tr + 1) * 128, tc * 128:(tc + 1) * 128]
                amax = np.abs(tile).max()
                e = 127 if amax == 0 else max(0, 127 + int(np.ceil(np.log2(amax / 448))))
                assert scale.view(np.uint8)[tr, tc] == e, (name, tr, tc)
                want = (tile / 2.0 ** (e - 127)).astype(L.F8_E4M3)
                assert np.array_equal(codes[tr * 128:(tr + 1) * 128, tc * 128:(tc + 1) * 128]
                                      .view(np.uint8), want.view(np.uint8)), (name, tr, tc)
    assert n_experts == 2 * 4 * 3
    cfg = json.load(open(dst / "config.json"))
    assert cfg["expert_dtype"] == "fp8"
    assert cfg["quantization_config"]["scale_fmt"] == "ue8m0"
    for to in ("bfloat16", "float32"):
        a, b = dequantized(src, tmp_path, "a" + to, to), dequantized(dst, tmp_path, "b" + to, to)
        assert sorted(a) == sorted(b)
        for k in a:
            assert a[k].tobytes() == b[k].tobytes(), (k, to)


def test_dsv4_fp4_to_fp8_refused(tmp_path):
    """A tile whose blocks' scales are too far apart (the maker's 2^-127 block beside 2^-12
    ones) and a NaN expert scale are refused naming the tensor and the tile or element, with
    nothing written; the same experts convert to OCP MX (-0 codes written as DeepSeek reads
    them, +0)."""
    case = L.make_deepseek_v4(np.random.default_rng(21))
    src = tmp_path / "v4"
    L.write_checkpoint(str(src), case)
    with pytest.raises(dtcast.Error, match=r"experts\.0\.w1\.weight', tile \(0, 0\).*too far apart"):
        dtcast.files.convert_layout(str(src), str(tmp_path / "x"), to="deepseek-v4-fp8")
    assert not (tmp_path / "x").exists() or not os.listdir(tmp_path / "x")
    nan = dsv4_case(np.random.default_rng(22), nan_scale=True)
    src2 = tmp_path / "v4nan"
    L.write_checkpoint(str(src2), nan)
    with pytest.raises(dtcast.Error, match=r"experts\.1\.w2\.scale', element \d+: the scale is NaN"):
        dtcast.files.convert_layout(str(src2), str(tmp_path / "y"), to="deepseek-v4-fp8")
    mx = tmp_path / "mx"
    dtcast.files.convert_layout(str(src), str(mx), to="mx")
    raw = raw_tensors(mx)
    w = "layers.0.ffn.experts.0.w1.weight"
    assert raw[w][0] == "F4" and raw[w + "_scale"][0] == "F8_E8M0"
    codes = case.tensors[w].view(np.uint8)
    lo, hi = codes & 15, codes >> 4
    want = (np.where(lo == 8, 0, lo) | np.where(hi == 8, 0, hi) << 4).astype(np.uint8)
    assert raw[w][2] == want.tobytes()
    for to in ("bfloat16", "float32"):
        a, b = dequantized(src, tmp_path, "a" + to, to), dequantized(mx, tmp_path, "b" + to, to)
        for k in a:
            assert a[k].tobytes() == b[k].tobytes(), (k, to)


@pytest.mark.parametrize("key", ["ct_mxfp4", "ct_mxfp4_moe", "ct_mxfp8"])
def test_ct_mx_cases_to_ocp_mx_and_back(tmp_path, key):
    """compressed-tensors' MX checkpoints of ckpt_layouts (checked against compressed-tensors'
    own compressor and decompressor) to OCP MX and back: the same bytes at the end, and the
    OCP MX checkpoint dequantizes to the reference (every case has scale bytes 0 and 254, -0
    codes and E4M3's extremes)."""
    case = L.CASES[key](np.random.default_rng(30))
    src, mx, back = tmp_path / "ct", tmp_path / "mx", tmp_path / "back"
    L.write_checkpoint(str(src), case, shards=2)
    dtcast.files.convert_layout(str(src), str(mx), to="mx")
    raw = raw_tensors(mx)
    assert all(raw[k][0] == "F8_E8M0" for k in raw if k.endswith("weight_scale"))
    for to in ("bfloat16", "float32"):
        want = L.expected(case, to)
        got = dequantized(mx, tmp_path, key + to, to)
        assert set(want) <= set(got)
        for k, w in want.items():
            assert got[k].tobytes() == w.tobytes(), (k, to)
    dtcast.files.convert_layout(str(mx), str(back), to="mx-ct")
    assert raw_tensors(src) == raw_tensors(back)
