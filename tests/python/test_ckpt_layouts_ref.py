"""Tests of tests/python/ckpt_layouts.py itself (not of dtcast): its file writer against the
safetensors package, its decoders against ml_dtypes, its packers against hand-computed words,
its references against hand-computed values, its makers against its decoders, and, where the
producer's package is installed (compressed-tensors 0.20.0), its encoders and references
against the producer's own compressor and decompressor."""

import json
import os

import ml_dtypes
import numpy as np
import pytest

import ckpt_layouts as L

CASE_KEYS = list(L.CASES)


@pytest.fixture(scope="module")
def cases():
    return {c.name: c for c in L.all_cases(seed=3)}


def bits32(a):
    return np.ascontiguousarray(np.asarray(a, dtype=np.float32)).view(np.uint32)


# --------------------------------------------------------------------------------------------
# element decoders
# --------------------------------------------------------------------------------------------


def test_e4m3_decoder_matches_ml_dtypes_for_every_code():
    codes = np.arange(256, dtype=np.uint8)
    mine = L.decode_e4m3fn(codes)
    theirs = codes.view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    assert np.array_equal(mine, theirs, equal_nan=True)
    assert np.array_equal(np.signbit(mine), np.signbit(theirs))
    assert np.isnan(mine[[0x7F, 0xFF]]).all() and np.isnan(mine).sum() == 2
    assert mine[0x38] == 1.0 and mine[0x7E] == 448.0 and mine[0x01] == 2.0 ** -9
    assert mine[0x80] == 0.0 and np.signbit(mine[0x80])


def test_e5m2_decoder_matches_ml_dtypes_for_every_code():
    codes = np.arange(256, dtype=np.uint8)
    mine = L.decode_e5m2(codes)
    theirs = codes.view(ml_dtypes.float8_e5m2).astype(np.float64)
    assert np.array_equal(mine, theirs, equal_nan=True)
    assert mine[0x7C] == np.inf and mine[0x7B] == 57344.0 and mine[0x01] == 2.0 ** -16


def test_e8m0_decoder_is_a_power_of_two_and_matches_ml_dtypes():
    codes = np.arange(256, dtype=np.uint8)
    mine = L.decode_e8m0(codes)
    theirs = codes.view(ml_dtypes.float8_e8m0fnu).astype(np.float64)
    assert np.array_equal(mine, theirs, equal_nan=True)
    assert mine[127] == 1.0 and mine[128] == 2.0 and mine[120] == 2.0 ** -7
    assert mine[0] == 2.0 ** -127 and np.isnan(mine[255])
    # vllm#51946: byte 120 read as the number 120.0 instead of 2**-7
    assert mine[120] != 120.0


def test_fp4_tables():
    theirs = np.arange(16, dtype=np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float64)
    assert np.array_equal(L.FP4_E2M1, theirs)
    assert np.array_equal(np.signbit(L.FP4_E2M1), np.signbit(theirs))
    # DeepSeek-V4's FP4_TABLE: the same values, but +0.0 for code 8
    assert np.array_equal(L.DEEPSEEK_FP4_TABLE, L.FP4_E2M1)
    assert not np.signbit(L.DEEPSEEK_FP4_TABLE[8]) and np.signbit(L.FP4_E2M1[8])


# --------------------------------------------------------------------------------------------
# packing, by hand
# --------------------------------------------------------------------------------------------


def test_low_nibble_first_by_hand():
    # element 0 in bits 0-3, element 1 in bits 4-7
    assert L.pack_nibbles_low_first(np.array([[1, 2, 0xF, 0x8]])).tolist() == [[0x21, 0x8F]]
    # DeepSeek stores the bytes as I8: 0x8F is -113
    assert L.pack_nibbles_low_first(np.array([[0xF, 0x8]])).view(np.int8).tolist() == [[-113]]
    assert L.unpack_nibbles_low_first(np.array([[0x21, 0x8F]], np.uint8)).tolist() == \
        [[1, 2, 0xF, 0x8]]


def test_ct_pack_by_hand():
    q = np.arange(-8, 8)[None, :]           # codes -8..7 -> stored 0..15
    w = L.ct_pack_to_int32(q, 4)
    assert w.dtype == np.int32 and w.shape == (1, 2)
    assert w.view(np.uint32).tolist() == [[0x76543210, 0xFEDCBA98]]
    assert w.tolist() == [[0x76543210, 0xFEDCBA98 - (1 << 32)]]
    # K = 9 is not a multiple of 8: two words, the second's padding nibbles are 0 (not 8)
    w = L.ct_pack_to_int32(np.array([[0] * 8 + [-3]]), 4)
    assert w.view(np.uint32).tolist() == [[0x88888888, 0x00000005]]
    # 3 bits straddle words: 11 codes of +3 (stored 7 = 0b111) are 33 one bits
    w = L.ct_pack_to_int32(np.full((1, 11), 3), 3)
    assert w.view(np.uint32).tolist() == [[0xFFFFFFFF, 0x00000001]]
    # zero points pack down the rows (packed_dim=0): zp[r, g] for r = 0..8 -> [2, G]
    zp = np.array([[-8], [-7], [-6], [-5], [-4], [-3], [-2], [-1], [7]])
    w = L.ct_pack_to_int32(zp, 4, packed_dim=0)
    assert w.shape == (2, 1) and w.view(np.uint32).tolist() == [[0x76543210], [0x0000000F]]
    for bits in range(1, 9):
        rng = np.random.default_rng(bits)
        q = rng.integers(-(1 << (bits - 1)), 1 << (bits - 1), size=(5, 37))
        for dim in (0, 1):
            back = L.ct_unpack_from_int32(L.ct_pack_to_int32(q, bits, dim), bits, q.shape[dim], dim)
            assert np.array_equal(back, q)


def test_gptq_pack_by_hand():
    q = np.arange(8)[:, None] * np.ones((1, 2), dtype=np.int64)   # rows 0..7 hold 0..7
    w = L.pack_words(q, 4, axis=0)
    assert w.shape == (1, 2) and w.view(np.uint32).tolist() == [[0x76543210, 0x76543210]]
    # 8 bits: four rows per word, row 4i+j in bits 8j
    w = L.pack_words(np.array([[1], [2], [3], [0xFF]]), 8, axis=0)
    assert w.view(np.uint32).tolist() == [[0xFF030201]]
    # v1 qzeros of a symmetric 4-bit model: zero 8 stored as 7 in every nibble
    qz = L.pack_words(np.full((1, 8), 7), 4, axis=1)
    assert qz.view(np.uint32).tolist() == [[0x77777777]]
    assert L.gptq_v1_to_v2_qzeros(qz, 4).view(np.uint32).tolist() == [[0x88888888]]
    assert L.gptq_v1_to_v2_qzeros(np.array([[0x7F7F7F7F]], np.int32), 8).view(
        np.uint32).tolist() == [[0x80808080]]


def test_awq_pack_by_hand():
    # columns 0..7 holding 0..7: nibbles (low first) hold columns 0 2 4 6 1 3 5 7
    w = L.pack_words(np.arange(8)[None, :], 4, axis=1, order=L.AWQ_ORDER)
    assert w.view(np.uint32).tolist() == [[0x75316420]]
    assert L.unpack_words(w, 4, axis=1, order=L.AWQ_ORDER).tolist() == [list(range(8))]
    # the reverse order: column c sits in nibble AWQ_REVERSE_ORDER[c]
    nib = [(0x75316420 >> (4 * L.AWQ_REVERSE_ORDER[c])) & 0xF for c in range(8)]
    assert nib == list(range(8))


# --------------------------------------------------------------------------------------------
# references, by hand
# --------------------------------------------------------------------------------------------


def test_deepseek_reference_by_hand():
    cfg = {"quantization_config": {"weight_block_size": [128, 128]}}
    # FP8: 1.0 (0x38) and -448 (0xFE) with tile scale bytes 128 (2.0) and 0 (2**-127)
    w = np.full((2, 129), 0x38, dtype=np.uint8)
    w[1, 128] = 0xFE
    s = np.array([[128, 0]], dtype=np.uint8)
    out = L.dequantize_deepseek_v4({"a.weight": w.view(L.F8_E4M3), "a.scale": s.view(L.F8_E8M0)},
                                   cfg)["a.weight"]
    assert out[0, 0] == 2.0 and out[0, 127] == 2.0
    assert out[0, 128] == np.float32(2.0 ** -127)          # a float32 subnormal, exact
    assert out[1, 128] == np.float32(-448 * 2.0 ** -127)
    # FP4: byte 0x97 = codes [7, 9] = [6.0, -0.5], scale byte 126 = 0.5
    x = np.array([[0x97] * 16], dtype=np.uint8).view(np.int8)
    s = np.array([[126]], dtype=np.uint8).view(L.F8_E8M0)
    out = L.dequantize_deepseek_v4({"e.weight": x, "e.scale": s}, cfg)["e.weight"]
    assert out.shape == (1, 32) and out[0, :2].tolist() == [3.0, -0.25]
    # code 8 reads as +0.0 in DeepSeek's table
    x = np.array([[0x88] * 16], dtype=np.uint8).view(np.int8)
    out = L.dequantize_deepseek_v4({"e.weight": x, "e.scale": s}, cfg)["e.weight"]
    assert (out == 0).all() and not np.signbit(out).any()


def test_ct_reference_rounds_in_the_scale_dtype():
    # bf16(0.1) = 205/128 * 2**-4 = 0.10009765625; 3 * that = 615 * 2**-11 has 10 significant
    # bits; bf16 keeps 8: 616 * 2**-11 = 0.30078125
    s = np.array([[0.1]], dtype=np.float32).astype(L.BF16)
    assert float(s[0, 0]) == 0.10009765625
    out = L.ct_int_reference(np.array([[3]]), None, s)
    assert out[0, 0] == 0.30078125 and out.dtype == np.float32
    # asymmetric: (q - zp) first: (-8 - (-5)) * s = -3 * s
    assert L.ct_int_reference(np.array([[-8]]), np.array([[-5]]), s)[0, 0] == -0.30078125
    # f16 scale: f16(0.1) = 1638 * 2**-14 = 0.0999755859375; 3x = 4914 * 2**-14 =
    # 0.2999267578125; the f16 ulp in [0.25, 0.5) is 2**-12 = 4 * 2**-14, and 4914 / 4 =
    # 1228.5 is a tie: to even, 1228 * 2**-12 = 0.2998046875
    s16 = np.array([[0.1]], dtype=np.float16)
    assert float(s16[0, 0]) == 0.0999755859375
    got = float(L.ct_int_reference(np.array([[3]]), None, s16)[0, 0])
    assert got == 0.2998046875


def test_gptq_awq_reference_by_hand():
    # f16(0.01) = 1311 * 2**-17; 7 * that = 9177 * 2**-17 = 0.0700149536...; f16 ulp there is
    # 2**-14: 9177 / 8 = 1147.125 -> 1147 * 2**-14 = 0.07000732421875
    s = np.array([[0.01]], dtype=np.float16)
    assert float(s[0, 0]) == 1311 * 2.0 ** -17
    assert L.gptq_reference(np.array([[15]]), np.array([[8]]), s, [0])[0, 0] == 0.07000732421875
    assert L.awq_reference(np.array([[15]]), np.array([[8]]), s, 1)[0, 0] == 0.07000732421875
    # a whole v1 layer by hand: 8 inputs, 8 outputs, one group, symmetric (stored zero 7)
    q = np.arange(64).reshape(8, 8) % 16                      # [K, N]
    tensors = {"l.qweight": L.pack_words(q, 4, axis=0),
               "l.qzeros": L.pack_words(np.full((1, 8), 7), 4, axis=1),
               "l.scales": np.full((1, 8), 0.5, dtype=np.float16),
               "l.g_idx": np.zeros(8, dtype=np.int32)}
    cfg = {"quantization_config": {"bits": 4, "group_size": 128, "checkpoint_format": "gptq"}}
    out = L.dequantize_gptq(tensors, cfg)["l.weight"]
    assert out.shape == (8, 8) and np.array_equal(out, ((q - 8) * 0.5).T)
    cfg["quantization_config"]["checkpoint_format"] = "gptq_v2"       # stored 7 now means 7
    assert np.array_equal(L.dequantize_gptq(tensors, cfg)["l.weight"], ((q - 7) * 0.5).T)


def test_nvfp4_and_fp8_channel_reference_by_hand():
    # fp4 code 5 (3.0), block scale 0x40 (E4M3 2.0), global scale 4: 3 * (2 / 4) = 1.5
    out = L.nvfp4_reference(np.array([[5] * 16]), np.array([[0x40]], np.uint8),
                            np.array([4.0], np.float32))
    assert out[0, 0] == 1.5
    # code 8 is -0.0 in compressed-tensors' unpack (kE2M1ToFloat * where(sign, -1, 1))
    out = L.nvfp4_reference(np.array([[8] * 16]), np.array([[0x40]], np.uint8),
                            np.array([4.0], np.float32))
    assert (out == 0).all() and np.signbit(out).all()
    # FP8 channel, bf16 scale: 1.5 (0x3C) * bf16(0.1) = 0.150146484375 -> bf16 0.150390625
    s = np.array([[0.1]], np.float32).astype(L.BF16)
    out = L.fp8_channel_reference(np.array([[0x3C]], np.uint8), s)
    assert out[0, 0] == 0.150390625
    # f32 scale: one float32 rounding
    out = L.fp8_channel_reference(np.array([[0x3C]], np.uint8), np.array([[0.1]], np.float32))
    assert out[0, 0] == np.float32(1.5) * np.float32(0.1)


def test_scaled_fp8_reference_and_comfy_eager_by_hand():
    codes = np.array([[0x31]], np.uint8).view(L.F8_E4M3)     # 0.5625
    out = L.dequantize_scaled_fp8({"m.weight": codes,
                                   "m.scale_weight": np.array(0.1, np.float32)})["m.weight"]
    assert out[0, 0] == np.float32(0.5625) * np.float32(0.1)
    # bf16 of the float32 product: 0.05625000083 / 2**-12 = 230.4 -> 230 * 2**-12
    assert float(out.astype(L.BF16)[0, 0]) == 0.05615234375
    # comfy_kitchen eager in bf16: 0.5625 * bf16(0.1) = 0.056304931640625 -> 231 * 2**-12
    assert L.scaled_fp8_eager(codes, np.float32(0.1), "bfloat16")[0, 0] == 0.056396484375
    # musubi block scales [out, n_blocks, 1] run along the input axis
    codes = np.full((1, 4), 0x38, np.uint8).view(L.F8_E4M3)   # 1.0
    sc = np.array([[[2.0], [3.0]]], np.float32)
    out = L.dequantize_scaled_fp8({"m.weight": codes, "m.scale_weight": sc})["m.weight"]
    assert out.tolist() == [[2.0, 2.0, 3.0, 3.0]]


# --------------------------------------------------------------------------------------------
# every case: structure, and the maker agreeing with the decoder
# --------------------------------------------------------------------------------------------

_EXPECTED_DTYPES = {
    # layout: {suffix of a group member: allowed safetensors dtypes}
    "deepseek_v4": {".weight": {"F8_E4M3", "I8"}, ".scale": {"F8_E8M0", "F32"}},
    "ct_pack_quantized": {".weight_packed": {"I32"}, ".weight_scale": {"BF16", "F16", "F32"},
                          ".weight_shape": {"I64"}, ".weight_zero_point": {"I32"}},
    "ct_mixed_precision": {".weight": {"F8_E4M3"}, ".weight_packed": {"U8"},
                           ".weight_scale": {"F8_E4M3", "BF16", "F32"},
                           ".weight_global_scale": {"F32"}, ".input_global_scale": {"F32"}},
    "ct_mx": {".weight": {"F8_E4M3"}, ".weight_packed": {"U8"}, ".weight_scale": {"U8"}},
    "gptq": {".qweight": {"I32"}, ".qzeros": {"I32"}, ".scales": {"F16"}, ".g_idx": {"I32"}},
    "awq": {".qweight": {"I32"}, ".qzeros": {"I32"}, ".scales": {"F16"}},
    "scaled_fp8": {".weight": {"F8_E4M3", "F8_E5M2"}, ".scale_weight": {"F32"},
                   ".weight_scale": {"F32"}, ".scale_input": {"F32"}, ".input_scale": {"F32"},
                   ".comfy_quant": {"U8"}, ".scale_weight_tensor": {"F32"}},
}


@pytest.mark.parametrize("key", CASE_KEYS)
def test_case_structure(cases, key):
    c = cases[key]
    names = set(c.tensors)
    members = [m for ms in c.groups.values() for m in ms]
    # plain, groups and markers cover every tensor once
    assert len(members) == len(set(members))
    assert not set(members) & set(c.plain)
    assert set(members) | set(c.plain) | set(c.markers) == names
    assert set(c.reference) == set(c.groups) == set(c.exact)
    allowed = _EXPECTED_DTYPES[c.layout]
    for out, ms in c.groups.items():
        ref = c.reference[out]
        assert ref.dtype == np.float32 and c.exact[out].dtype == np.float64
        assert ref.shape == c.exact[out].shape and ref.ndim == 2
        for m in ms:
            suffix = "." + m.rpartition(".")[2]
            assert L.st_dtype(c.tensors[m]) in allowed[suffix], (m, c.tensors[m].dtype)
    for p in c.plain:
        assert L.st_dtype(c.tensors[p]) in {"BF16", "F16", "F32"}
    if c.layout != "scaled_fp8":
        assert c.config is not None and "quantization_config" in c.config


@pytest.mark.parametrize("key", CASE_KEYS)
def test_decoder_agrees_with_maker(cases, key):
    """The maker computed the reference from its codes before packing; the decoder recomputes
    it from the stored bytes: bit for bit the same (so packing and unpacking are inverse and
    the arithmetic is the same code path's)."""
    c = cases[key]
    got = L.dequantize_reference(c)
    assert set(got) == set(c.reference)
    for k, v in got.items():
        assert np.array_equal(bits32(v), bits32(c.reference[k])), k


@pytest.mark.parametrize("key", CASE_KEYS)
def test_reference_is_the_exact_value_rounded_as_documented(cases, key):
    c = cases[key]
    for k, ref in c.reference.items():
        ex = c.exact[k]
        both_nan = np.isnan(ex) & np.isnan(ref)
        assert (np.isnan(ex) == np.isnan(ref)).all()
        diff = np.abs(ref.astype(np.float64) - ex)
        # every producer's result is within half an ulp of its result dtype (bf16: 2**-9
        # relative; NVFP4 rounds three times, so allow a little more) of the exact value
        tol = 2.0 ** -8 * np.abs(ex) + 1e-45
        assert ((diff <= tol) | both_nan).all(), k
        if c.layout == "deepseek_v4" and "_base" not in key:
            # exact for DeepSeek E8M0 (but for the sign of FP4's code 8)
            assert np.array_equal(ref, ex.astype(np.float32), equal_nan=True)


def test_cases_contain_their_edge_cases(cases):
    ds = cases["deepseek_v4"]
    w = ds.tensors["layers.0.attn.wq_a.weight"]
    assert w.shape == (136, 160) and ds.tensors["layers.0.attn.wq_a.scale"].shape == (2, 2)
    assert (L._u8(w)[:128, :128] == 0).all()
    assert L._u8(ds.tensors["layers.0.attn.wkv.scale"])[0, 1] == 0
    e = ds.tensors["layers.0.ffn.experts.0.w1.weight"]
    assert e.dtype == np.int8 and e.shape == (96, 80)
    assert ds.tensors["layers.0.ffn.experts.0.w1.scale"].shape == (96, 5)
    assert ds.tensors["layers.0.ffn.experts.2.w2.weight"].shape == (160, 48)
    assert ds.config["expert_dtype"] == "fp4"
    assert ds.config["quantization_config"] == {"quant_method": "fp8", "fmt": "e4m3",
                                                "scale_fmt": "ue8m0",
                                                "weight_block_size": [128, 128]}
    assert not any(L._u8(ds.tensors[n]).max() == 255 for n in ds.tensors if n.endswith(".scale"))
    ch = cases["ct_w4a16_channel_asym_f32_k100"]
    x = "model.layers.0.self_attn.q_proj"
    assert ch.tensors[f"{x}.weight_packed"].shape == (100, 13)
    assert ch.tensors[f"{x}.weight_zero_point"].shape == (13, 1)
    assert ch.tensors[f"{x}.weight_shape"].tolist() == [100, 100]
    g = cases["gptq_v1_4bit_act_asym"]
    gi = g.tensors["model.layers.0.self_attn.q_proj.g_idx"]
    assert gi.shape == (160,) and np.bincount(gi).tolist() == [128, 32]
    assert not np.array_equal(gi, np.sort(gi))               # act-order: shuffled
    assert g.tensors["model.layers.0.mlp.down_proj.scales"].shape == (1, 160)
    assert cases["scaled_fp8_comfy_0d"].markers == ["model.diffusion_model.scaled_fp8"]


def test_nan_flags():
    c = L.make_deepseek_v4(np.random.default_rng(0), nan_scale=True)
    assert L._u8(c.tensors["layers.0.attn.wo_b.scale"])[0, 0] == 0xFF
    ref = c.reference["layers.0.attn.wo_b.weight"]
    assert np.isnan(ref[:128, :128]).all() and not np.isnan(ref[:, 128:]).any()
    assert np.isnan(c.reference["layers.0.ffn.experts.1.w2.weight"][3, 32:64]).all()
    got = L.dequantize_reference(c)
    for k in c.reference:
        assert np.array_equal(got[k], c.reference[k], equal_nan=True)
    m = L.make_ct_mixed_precision(np.random.default_rng(0), nan_scale=True)
    r = m.reference["model.layers.0.mlp.gate_proj.weight"]
    assert np.isnan(r[3, 16:32]).all() and np.isnan(r).sum() == 16


def test_expected_rounds_to_the_output_dtype(cases):
    c = cases["gptq_v1_4bit"]
    for dt, npdt in (("bfloat16", L.BF16), ("float16", np.float16), ("float32", np.float32)):
        e = L.expected(c, dt)
        for k, v in e.items():
            assert v.dtype == npdt
            assert np.array_equal(v.astype(np.float32),
                                  c.reference[k].astype(npdt).astype(np.float32))
    # GPTQ's values are float16 already: expected(float16) is the reference itself
    for k, v in L.expected(c, "float16").items():
        assert np.array_equal(v.astype(np.float32), c.reference[k])


# --------------------------------------------------------------------------------------------
# files
# --------------------------------------------------------------------------------------------


def _torch_bytes(t):
    import torch

    if not t.numel():
        return b""
    return t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def _np_bytes(a):
    return np.ascontiguousarray(a).tobytes()


@pytest.mark.parametrize("key", ["deepseek_v4", "ct_mixed_bf16", "scaled_fp8_comfy_1_e5m2",
                                 "scaled_fp8_comfy_header", "gptq_v1_8bit_asym"])
def test_files_read_back_with_safetensors(cases, tmp_path, key):
    """safe_open (the Rust reader) accepts every file written here: dtypes, shapes, bytes,
    metadata; torch reads F8_E4M3 / F8_E5M2 / F8_E8M0 / BF16 / [] / [0] tensors."""
    torch = pytest.importorskip("torch")
    from safetensors import safe_open

    c = cases[key]
    L.write_checkpoint(tmp_path, c)
    path = tmp_path / "model.safetensors"
    assert (len(open(path, "rb").read(8)) == 8)
    n = int.from_bytes(open(path, "rb").read(8), "little")
    assert (8 + n) % 8 == 0
    torch_dtypes = {"F8_E4M3": torch.float8_e4m3fn, "F8_E5M2": torch.float8_e5m2,
                    "F8_E8M0": torch.float8_e8m0fnu, "BF16": torch.bfloat16,
                    "F16": torch.float16, "F32": torch.float32, "I8": torch.int8,
                    "U8": torch.uint8, "I32": torch.int32, "I64": torch.int64}
    with safe_open(str(path), framework="pt") as f:
        assert set(f.keys()) == set(c.tensors)
        assert f.metadata() == c.metadata
        for name, a in c.tensors.items():
            t = f.get_tensor(name)
            assert t.dtype == torch_dtypes[L.st_dtype(a)], name
            assert tuple(t.shape) == a.shape, name
            assert _torch_bytes(t) == _np_bytes(a), name
    with safe_open(str(path), framework="numpy") as f:
        for name, a in c.tensors.items():
            if L.st_dtype(a) in ("F16", "F32", "I8", "U8", "I32", "I64"):
                got = f.get_tensor(name)
                assert got.dtype == a.dtype and np.array_equal(got, a), name
    back, meta = L.read_checkpoint(tmp_path)
    assert meta == {"model.safetensors": c.metadata}
    for name, a in c.tensors.items():
        assert back[name].dtype == a.dtype and _np_bytes(back[name]) == _np_bytes(a)
    if c.config is not None:
        assert json.loads((tmp_path / "config.json").read_text()) == c.config
    else:
        assert not (tmp_path / "config.json").exists()


@pytest.mark.parametrize("split", [False, True])
def test_sharded_checkpoint(cases, tmp_path, split):
    from safetensors import safe_open

    c = cases["deepseek_v4"]
    written = L.write_checkpoint(tmp_path, c, shards=3, split_groups=split)
    files = sorted(os.listdir(tmp_path))
    assert files == ["config.json", "model-00001-of-00003.safetensors",
                     "model-00002-of-00003.safetensors", "model-00003-of-00003.safetensors",
                     "model.safetensors.index.json"]
    assert len(written) == 5
    index = json.loads((tmp_path / "model.safetensors.index.json").read_text())
    wm = index["weight_map"]
    assert set(wm) == set(c.tensors)
    assert index["metadata"]["total_size"] == sum(a.nbytes for a in c.tensors.values())
    for fname in set(wm.values()):
        with safe_open(str(tmp_path / fname), framework="numpy") as f:
            assert set(f.keys()) == {n for n, v in wm.items() if v == fname}
    apart = [out for out, ms in c.groups.items() if len({wm[m] for m in ms}) > 1]
    if split:
        assert len(apart) == len(c.groups)      # every group straddles shards
    else:
        assert apart == []
    back, _ = L.read_checkpoint(tmp_path)
    assert set(back) == set(c.tensors)
    assert L.dequantize_deepseek_v4(back, c.config).keys() == c.reference.keys()


def test_writer_checks():
    with pytest.raises(TypeError):
        L.write_safetensors(os.devnull, {"a": np.zeros(1, np.complex64)})
    with pytest.raises(TypeError):
        L.write_safetensors(os.devnull, {"a": np.zeros(1)}, {"k": 1})
    c = L.make_awq(np.random.default_rng(0))
    with pytest.raises(ValueError):
        L._assign_shards(c, 1000, False)


# --------------------------------------------------------------------------------------------
# malformed variants
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(L.MALFORMED))
def test_malformed(name, tmp_path):
    m = L.malformed(name)
    assert isinstance(m, L.Malformed) and m.description and m.mentions
    c = m.case
    text = json.dumps(c.config or {}) + json.dumps(c.metadata or {}) + " ".join(c.tensors)
    for s in m.mentions:
        assert s in text or any(n.startswith(s) for n in c.tensors), s
    # it really differs from the valid case it came from
    layout = name.split("/")[0]
    assert c.name.endswith(":" + name.split("/")[1])
    L.write_checkpoint(tmp_path, c)
    back, _ = L.read_checkpoint(tmp_path)
    assert set(back) == set(c.tensors)
    if "nan" in name:
        assert any(np.isnan(v).any() for v in c.reference.values())
    else:
        assert c.reference == {}
    assert layout in ("deepseek_v4", "ct", "gptq", "awq", "scaled_fp8")


@pytest.mark.parametrize("name", ["deepseek_v4/wrong_scale_shape", "deepseek_v4/expert_group16",
                                  "deepseek_v4/config_block64", "ct/group_size_mismatch",
                                  "ct/wrong_scale_shape", "ct/missing_scale",
                                  "ct/missing_zero_point", "ct/missing_global_scale",
                                  "ct/mxfp4_scale_group16", "ct/mxfp8_scale_group16",
                                  "ct/mxfp4_missing_scale",
                                  "gptq/missing_scales", "gptq/qzeros_shape",
                                  "gptq/g_idx_out_of_range", "awq/missing_qzeros",
                                  "scaled_fp8/wrong_scale_shape", "scaled_fp8/missing_scale"])
def test_reference_decoder_refuses_structural_malformations(name):
    m = L.malformed(name)
    with pytest.raises((ValueError, KeyError, IndexError)):
        L.dequantize_reference(m.case)


def test_malformed_is_deterministic():
    a, b = L.malformed("gptq/g_idx_length"), L.malformed("gptq/g_idx_length")
    for k in a.case.tensors:
        assert _np_bytes(a.case.tensors[k]) == _np_bytes(b.case.tensors[k])


# --------------------------------------------------------------------------------------------
# against torch's own float8 conversions (DeepSeek's and ComfyUI's arithmetic)
# --------------------------------------------------------------------------------------------


def _to_torch(a):
    import torch

    a = np.ascontiguousarray(a)
    views = {L.F8_E4M3: torch.float8_e4m3fn, L.F8_E5M2: torch.float8_e5m2,
             L.F8_E8M0: torch.float8_e8m0fnu, L.BF16: torch.bfloat16}
    if a.dtype in views:
        return torch.from_numpy(a.view(np.uint8).copy()).view(views[a.dtype]).reshape(a.shape)
    return torch.from_numpy(a.copy())


def test_deepseek_reference_matches_torch_arithmetic(cases):
    """DeepSeek's inference: weight.float() * scale.float() per tile (fp8) and FP4_TABLE[nibble]
    * scale.float() per 32 (experts), with torch's own E4M3 / E8M0 conversions."""
    torch = pytest.importorskip("torch")
    table = torch.tensor(L.DEEPSEEK_FP4_TABLE, dtype=torch.float32)
    for key in ("deepseek_v4", "deepseek_v4_base"):
        c = cases[key]
        for w, (wn, sn) in c.groups.items():
            x, s = _to_torch(c.tensors[wn]), _to_torch(c.tensors[sn]).float()
            if x.dtype == torch.int8:
                b = x.view(torch.uint8)
                v = torch.stack([table[(b & 0xF).long()], table[(b >> 4).long()]], -1)
                v = v.flatten(1)
                got = v * s.repeat_interleave(32, dim=1)
            else:
                s = s.repeat_interleave(128, 0).repeat_interleave(128, 1)
                got = x.float() * s[: x.shape[0], : x.shape[1]]
            assert np.array_equal(bits32(got.numpy()), bits32(c.reference[w])), w


def test_scaled_fp8_reference_matches_torch_arithmetic(cases):
    torch = pytest.importorskip("torch")
    for key in ("scaled_fp8_comfy_0d", "scaled_fp8_comfy_1_e5m2", "scaled_fp8_diffusers",
                "scaled_fp8_block_2level"):
        c = cases[key]
        for w, ms in c.groups.items():
            x = _to_torch(c.tensors[w])
            s = _to_torch(c.tensors[ms[1]])
            if s.ndim == 3:                       # musubi: weight.to(scale.dtype).view(...) * s
                r = x.to(s.dtype).view(s.shape[0], s.shape[1], -1) * s
                ts = f"{w[:-len('.weight')]}.scale_weight_tensor"
                if ts in c.tensors:
                    r = r * _to_torch(c.tensors[ts])
                got = r.view(x.shape)
            else:
                got = x.float() * s.float()
            assert np.array_equal(bits32(got.numpy()), bits32(c.reference[w])), w
            eager = L.scaled_fp8_eager(c.tensors[w], c.tensors[ms[1]].reshape(-1)[0], "bfloat16") \
                if s.numel() == 1 else None
            if eager is not None:   # comfy_kitchen eager: x.to(bf16) * scale.to(bf16)
                t = (x.to(torch.bfloat16) * s.to(torch.bfloat16)).float().numpy()
                assert np.array_equal(bits32(t), bits32(eager)), w


# --------------------------------------------------------------------------------------------
# against compressed-tensors itself (pip install compressed-tensors==0.20.0)
# --------------------------------------------------------------------------------------------

CT_KEYS = [k for k in CASE_KEYS if k.startswith("ct_")]
CT_MX_KEYS = [k for k in CT_KEYS if k.startswith("ct_mx")]


@pytest.fixture(scope="module")
def ct():
    """compressed-tensors 0.20.0 and what it pulls in (torch, transformers); skipped when it
    is missing or does not import."""
    try:
        import importlib.metadata

        import compressed_tensors
        from compressed_tensors.entrypoints.convert.converters import ct_dequantizer  # noqa
    except Exception as e:  # noqa: BLE001 - a missing or broken install both mean "skip"
        pytest.skip(f"compressed-tensors does not import: {e}")
    if importlib.metadata.version("compressed-tensors") != "0.20.0":
        pytest.skip("these checks pin compressed-tensors 0.20.0")
    return compressed_tensors


def test_ct_pack_to_int32_is_compressed_tensors(ct):
    import torch
    from compressed_tensors.compressors.pack_quantized.helpers import (
        pack_to_int32, unpack_from_int32)

    rng = np.random.default_rng(11)
    for bits in range(1, 9):
        for shape in ((13, 37), (8, 64), (3, 1)):
            q = rng.integers(-(1 << (bits - 1)), 1 << (bits - 1), size=shape)
            for dim in (0, 1):
                mine = L.ct_pack_to_int32(q, bits, dim)
                theirs = pack_to_int32(torch.from_numpy(q.astype(np.int8)), bits,
                                       packed_dim=dim).numpy()
                assert mine.shape == theirs.shape and np.array_equal(mine, theirs), (bits, dim)
                back = unpack_from_int32(torch.from_numpy(mine), bits, torch.Size(shape),
                                         packed_dim=dim).numpy()
                assert np.array_equal(back, q)


@pytest.mark.parametrize("key", CT_KEYS)
def test_ct_config_is_valid_for_compressed_tensors(ct, cases, key):
    from compressed_tensors.quantization import QuantizationConfig

    qc = QuantizationConfig.model_validate(cases[key].config["quantization_config"])
    assert qc.quant_method == "compressed-tensors"


@pytest.mark.parametrize("key", CT_KEYS)
@pytest.mark.parametrize("shards", [1, 3])
def test_ct_dequantizer_gives_the_reference(ct, cases, key, shards, tmp_path):
    """compressed-tensors' own CompressedTensorsDequantizer (entrypoints/convert, the Kimi-K2.6
    -> bf16 converter) on the checkpoint folder written here: with dtype float32 it returns
    the decompressors' values untouched, bit for bit the reference; with its default bf16,
    expected(case, "bfloat16").  Its validate() also finds no leftover quantization params.
    MX: the decompressors compute in bf16, so float32 holds expected(case, "bfloat16"); and
    MXFP8's compressed parameter is ``weight`` itself, which with targets ["Linear"] the
    converter (names only, no modules) looks for under every ``X.weight``, so the plain
    tensors' modules are passed as ``ignore`` (as its CLI's --ignore would)."""
    import torch
    from compressed_tensors.entrypoints.convert.converters.ct_dequantizer import (
        CompressedTensorsDequantizer)
    from safetensors.torch import load_file

    c = cases[key]
    L.write_checkpoint(tmp_path, c, shards=shards, split_groups=shards > 1)
    tensors = {}
    for f in os.listdir(tmp_path):
        if f.endswith(".safetensors"):
            tensors.update(load_file(str(tmp_path / f)))
    ignore = []
    if key == "ct_mxfp8":
        ignore = [p.rpartition(".")[0] for p in c.plain]
    ref32 = c.reference
    if c.layout == "ct_mx":
        ref32 = {k: v.astype(np.float32) for k, v in L.expected(c, "bfloat16").items()}
    out = CompressedTensorsDequantizer(str(tmp_path), ignore, dtype=torch.float32).validate(
        dict(tensors))
    assert set(out) == set(c.reference) | set(c.plain)
    for k, ref in ref32.items():
        assert out[k].dtype == torch.float32
        assert np.array_equal(bits32(out[k].numpy()), bits32(ref)), k
    for k in c.plain:
        assert _torch_bytes(out[k]) == _np_bytes(c.tensors[k]), k
    out = CompressedTensorsDequantizer(str(tmp_path), ignore).process(dict(tensors))
    exp = L.expected(c, "bfloat16")
    for k in c.reference:
        assert out[k].dtype == torch.bfloat16
        assert _torch_bytes(out[k]) == _np_bytes(exp[k]), k


@pytest.mark.parametrize("key", [k for k in CT_KEYS if "mixed" not in k and k not in CT_MX_KEYS])
def test_ct_compressor_writes_the_same_words(ct, cases, key):
    """PackedQuantizationCompressor.compress of the exact float weights with this case's
    scales and zero points gives this case's weight_packed / weight_zero_point words."""
    import torch
    from compressed_tensors.compressors import PackedQuantizationCompressor
    from compressed_tensors.quantization import QuantizationConfig

    c = cases[key]
    scheme = QuantizationConfig.model_validate(
        c.config["quantization_config"]).config_groups["group_0"]
    b = scheme.weights.num_bits
    for out_name, ms in c.groups.items():
        x = out_name[: -len(".weight")]
        N = int(c.tensors[f"{x}.weight_shape"][0])
        sd = {"weight": torch.from_numpy(c.exact[out_name].astype(np.float32)),
              "weight_scale": _to_torch(c.tensors[f"{x}.weight_scale"]).float()}
        if f"{x}.weight_zero_point" in c.tensors:
            zp = L.ct_unpack_from_int32(c.tensors[f"{x}.weight_zero_point"], b, N, 0)
            sd["weight_zero_point"] = torch.from_numpy(zp.astype(np.int8))
        got = PackedQuantizationCompressor.compress(sd, scheme)
        assert np.array_equal(got["weight_packed"].numpy(), c.tensors[f"{x}.weight_packed"])
        assert got["weight_shape"].tolist() == c.tensors[f"{x}.weight_shape"].tolist()
        if "weight_zero_point" in sd:
            assert np.array_equal(got["weight_zero_point"].numpy(),
                                  c.tensors[f"{x}.weight_zero_point"])
        else:
            assert "weight_zero_point" not in got


def test_ct_nvfp4_packer_writes_the_same_bytes(ct, cases):
    """pack_fp4_to_uint8 of the FP4 values gives this case's weight_packed bytes, code 8
    included; compressed-tensors' quantizer itself never writes code 8 (its rounding to FP4
    drops the sign of zero), so from the float weights the bytes agree but for -0 -> +0."""
    import torch
    from compressed_tensors.compressors.nvfp4.helpers import (
        pack_fp4_to_uint8, quantize_and_pack_fp4)

    c = cases["ct_mixed_bf16"]
    for out_name, ms in c.groups.items():
        x = out_name[: -len(".weight")]
        if f"{x}.weight_packed" not in c.tensors:
            continue
        packed = c.tensors[f"{x}.weight_packed"]
        codes = L.unpack_nibbles_low_first(packed)
        vals = torch.from_numpy(L.FP4_E2M1[codes].astype(np.float32))
        assert np.array_equal(pack_fp4_to_uint8(vals).numpy(), packed)
        s = torch.from_numpy(L.decode_e4m3fn(c.tensors[f"{x}.weight_scale"]).astype(np.float32))
        gs = torch.from_numpy(c.tensors[f"{x}.weight_global_scale"])
        q = quantize_and_pack_fp4(torch.from_numpy(c.exact[out_name].astype(np.float32)), s,
                                  global_scale=gs, group_size=16).numpy()
        theirs = L.unpack_nibbles_low_first(q)
        mine = np.where(codes == 8, 0, codes)
        mine[np.repeat(s.numpy() == 0, 16, axis=1)] = 0       # a zero block scale: 0/0
        theirs = np.where(np.repeat(s.numpy() == 0, 16, axis=1), 0, theirs)
        assert np.array_equal(theirs, mine), x


def test_awq_reference_matches_compressed_tensors_converter(ct, cases):
    """compressed-tensors' AutoAWQConverter (its own AWQ_REVERSE_ORDER) turns the AWQ tensors
    into pack-quantized ones; their decompression in the scale's dtype (f16) is the AWQ
    reference: an independent check of AWQ_ORDER and of the float16 arithmetic."""
    import torch
    from compressed_tensors.compressors import PackedQuantizationCompressor
    from compressed_tensors.entrypoints.convert.converters.autoawq import AutoAWQConverter

    c = cases["awq_gemm"]
    conv = AutoAWQConverter.from_autoawq_config(c.config["quantization_config"])
    tensors = {k: _to_torch(v) for k, v in c.tensors.items()}
    out = conv.process(dict(tensors))
    scheme = conv._build_quant_config().config_groups["config_group_0"]
    for w in c.reference:
        x = w[: -len(".weight")]
        sd = {p: out[f"{x}.{p}"] for p in ("weight_packed", "weight_scale", "weight_shape",
                                             "weight_zero_point")}
        got = PackedQuantizationCompressor.decompress(sd, scheme)["weight"]
        assert got.dtype == torch.float16
        assert np.array_equal(bits32(got.float().numpy()), bits32(c.reference[w])), w


# ---- compressed-tensors' MX formats (MXFP4A16, MXFP8) ---------------------------------------


def _ct_mx_state_dict(c, out_name):
    """The per-module state dict compressed-tensors' MX decompressors take: weight_packed U8
    (MXFP4) or weight float8_e4m3fn (MXFP8), weight_scale U8."""
    x = out_name[: -len(".weight")]
    sd = {"weight_scale": _to_torch(c.tensors[f"{x}.weight_scale"])}
    if f"{x}.weight_packed" in c.tensors:
        sd["weight_packed"] = _to_torch(c.tensors[f"{x}.weight_packed"])
    else:
        sd["weight"] = _to_torch(c.tensors[out_name])
    return x, sd


def _ct_mx_compressor(fmt):
    from compressed_tensors.compressors.mxfp4.base import MXFP4PackedCompressor
    from compressed_tensors.compressors.mxfp8.base import MXFP8QuantizationCompressor

    return {"mxfp4-pack-quantized": MXFP4PackedCompressor,
            "mxfp8-quantized": MXFP8QuantizationCompressor}[fmt]


def _as_u16(t):
    import torch

    return t.contiguous().view(torch.int16).numpy().view(np.uint16)


@pytest.mark.parametrize("key", CT_MX_KEYS)
def test_ct_mx_decompressor_gives_the_reference(ct, cases, key):
    """MXFP4PackedCompressor.decompress / MXFP8QuantizationCompressor.decompress, under the
    scheme of the case's config (the group _ct_scheme_for finds for each module), on each
    module's stored tensors: bfloat16, bit for bit the reference rounded once to bfloat16
    (expected(case, "bfloat16"); -0.0 included)."""
    import torch
    from compressed_tensors.quantization import QuantizationConfig

    c = cases[key]
    qc = c.config["quantization_config"]
    groups = QuantizationConfig.model_validate(qc).config_groups
    exp = L.expected(c, "bfloat16")
    for out_name in c.reference:
        x, sd = _ct_mx_state_dict(c, out_name)
        name = next(n for n, g in qc["config_groups"].items()
                    if g is L._ct_scheme_for(qc, x, next(iter(sd))))
        scheme = groups[name]
        got = _ct_mx_compressor(scheme.format).decompress(sd, scheme)["weight"]
        assert got.dtype == torch.bfloat16 and tuple(got.shape) == exp[out_name].shape
        assert np.array_equal(_as_u16(got), exp[out_name].view(np.uint16)), out_name
    assert any((np.signbit(v) & (v == 0)).any() for v in exp.values())     # -0.0 compared


@pytest.mark.parametrize("key", CT_MX_KEYS)
def test_ct_mx_config_is_what_compressed_tensors_writes(ct, cases, key, tmp_path):
    """ModelCompressor.update_config for a module quantized with the preset (MXFP4A16 or
    MXFP8, targets ["Linear"]) writes this case's quantization_config, but for ``ignore``
    (it lists the modules left out) and the status ("initialized" before compression)."""
    import torch
    from compressed_tensors.compressors import ModelCompressor
    from compressed_tensors.quantization import (
        QuantizationConfig, apply_quantization_config, preset_name_to_scheme)

    c = cases[key]
    qc = c.config["quantization_config"]
    preset = {"mxfp4-pack-quantized": "MXFP4A16", "mxfp8-quantized": "MXFP8"}[qc["format"]]
    model = torch.nn.Module()
    model.q_proj = torch.nn.Linear(64, 32, bias=False)
    model.lm_head = torch.nn.Linear(64, 48, bias=False)
    apply_quantization_config(model, QuantizationConfig(
        config_groups={"group_0": preset_name_to_scheme(preset, ["Linear"])},
        ignore=["lm_head"]))
    (tmp_path / "config.json").write_text("{}")
    ModelCompressor.from_pretrained_model(model).update_config(str(tmp_path))
    theirs = json.loads((tmp_path / "config.json").read_text())["quantization_config"]
    assert theirs["quantization_status"] == "initialized"
    assert qc["quantization_status"] == "compressed"
    assert theirs["ignore"] == ["lm_head"] and qc["ignore"][0] == "lm_head"
    drop = ("ignore", "quantization_status")
    assert {k: v for k, v in theirs.items() if k not in drop} == \
        {k: v for k, v in qc.items() if k not in drop}


@pytest.mark.parametrize("key", CT_MX_KEYS)
def test_ct_mx_compressor_writes_the_same_bytes(ct, cases, key):
    """The compressors' compress of the exact float weights with the float scales 2**(b-127)
    gives this case's weight_scale bytes and codes, but for the sign of zero: their rounding
    to FP4 writes -0.0 as code 0, not 8 (E4M3 keeps 0x80)."""
    import torch
    from compressed_tensors.quantization import QuantizationConfig

    c = cases[key]
    scheme = QuantizationConfig.model_validate(
        c.config["quantization_config"]).config_groups["group_0"]
    comp = _ct_mx_compressor(scheme.format)
    for out_name in c.reference:
        x = out_name[: -len(".weight")]
        e = c.tensors[f"{x}.weight_scale"]
        sd = {"weight": torch.from_numpy(c.exact[out_name].astype(np.float32)),
              "weight_scale": torch.from_numpy(L.decode_e8m0(e).astype(np.float32))}
        got = comp.compress(sd, scheme)
        assert np.array_equal(got["weight_scale"].numpy(), e), x
        if f"{x}.weight_packed" in c.tensors:
            mine = L.unpack_nibbles_low_first(c.tensors[f"{x}.weight_packed"])
            theirs = L.unpack_nibbles_low_first(got["weight_packed"].numpy())
            assert np.array_equal(theirs, np.where(mine == 8, 0, mine)), x
        else:
            assert got["weight"].dtype == torch.float8_e4m3fn
            assert _torch_bytes(got["weight"]) == _np_bytes(c.tensors[out_name]), x


def test_ct_mx_cases_contain_their_edge_cases(cases):
    for key in CT_MX_KEYS:
        c = cases[key]
        fp4 = "mxfp4" in key
        scales = [L._u8(c.tensors[m]) for ms in c.groups.values() for m in ms
                  if m.endswith(".weight_scale")]
        allb = np.concatenate([s.reshape(-1) for s in scales])
        assert allb.max() == 254 and allb.min() == 0 and 255 not in allb, key
        assert all((s == 0).any() and (s == 254).any() for s in scales), key
        first = next(iter(c.groups))
        codes = c.tensors[c.groups[first][0]]
        if fp4:
            q = L.unpack_nibbles_low_first(codes)
            assert q[0, :32].tolist() == list(range(16)) * 2 and (q[1, :32] == 8).all()
            assert codes.dtype == np.uint8 and codes.shape[1] * 2 == q.shape[1]
        else:
            q = L._u8(codes)
            assert q[0, :5].tolist() == [0x7E, 0xFE, 0x01, 0x80, 0x00]
            assert not np.isnan(L.decode_e4m3fn(q)).any()
        e = L._u8(c.tensors[c.groups[first][1]])
        assert e[2, 0] == 0 and e[3, -1] == 254
        for out_name, ref in c.reference.items():
            e = L._u8(c.tensors[c.groups[out_name][1]])
            big = np.repeat(e == 254, 32, axis=1)
            assert np.isfinite(ref).all() and big.any()
            assert (np.abs(c.exact[out_name][big]) < 2.0 ** 128).all()    # |element| < 2
            assert np.array_equal(ref.astype(np.float64), c.exact[out_name]), out_name
            assert np.isfinite(L.expected(c, "bfloat16")[out_name].astype(np.float32)).all()
        assert c.tensors["model.layers.0.self_attn.q_proj.weight_scale" if "moe" not in key
                         else "model.layers.1.mlp.experts.0.gate_proj.weight_scale"].shape[1] == 3
        if "moe" in key:
            assert all(".mlp.experts." in k for k in c.reference) and len(c.reference) == 6


def test_ct_mx_decompressor_on_255_and_negative_zero(ct):
    """What compressed-tensors 0.20 makes of two bytes the standard cases leave alone or hold
    once: scale byte 255 is 2**(255-127) = 2**128 in bf16, +inf (decompress_mx_scale; the OCP
    spec says NaN): nonzero elements come out +-inf, +0 and -0 NaN (0 * inf); FP4 code 8 is
    -0.0 (kE2M1ToFloat[0] * -1.0), E4M3 0x80 stays -0.0."""
    import torch
    from compressed_tensors.compressors.mx_utils import decompress_mx_scale
    from compressed_tensors.quantization import preset_name_to_scheme

    assert torch.isposinf(decompress_mx_scale(torch.tensor([255], dtype=torch.uint8))).all()
    codes = np.tile(np.arange(16, dtype=np.uint8), 4).reshape(2, 32)
    sd = {"weight_packed": torch.from_numpy(L.pack_nibbles_low_first(codes)),
          "weight_scale": torch.tensor([[255], [127]], dtype=torch.uint8)}
    comp = _ct_mx_compressor("mxfp4-pack-quantized")
    w = comp.decompress(sd, preset_name_to_scheme("MXFP4A16", ["Linear"]))["weight"].float()
    w = w.numpy()
    assert np.isnan(w[0, [0, 8]]).all()
    assert np.isposinf(w[0, 1:8]).all() and np.isneginf(w[0, 9:16]).all()
    assert w[1, 8] == 0 and np.signbit(w[1, 8]) and not np.signbit(w[1, 0])
    assert np.array_equal(w[1, :16], L.FP4_E2M1.astype(np.float32))
    c8 = np.array([[0x38, 0x80, 0x00, 0xB8] + [0x38] * 28] * 2, dtype=np.uint8)
    sd = {"weight": torch.from_numpy(c8).view(torch.float8_e4m3fn),
          "weight_scale": torch.tensor([[255], [127]], dtype=torch.uint8)}
    comp = _ct_mx_compressor("mxfp8-quantized")
    w = comp.decompress(sd, preset_name_to_scheme("MXFP8", ["Linear"]))["weight"].float()
    w = w.numpy()
    assert np.isposinf(w[0, 0]) and np.isnan(w[0, 1:3]).all() and np.isneginf(w[0, 3])
    assert w[1, 1] == 0 and np.signbit(w[1, 1]) and w[1, 3] == -1.0
    # the reference follows the OCP spec instead: byte 255 is NaN over the whole block
    assert np.isnan(L.ct_mx_reference(L.FP4_E2M1[codes[:1]], np.array([[255]], np.uint8))).all()
