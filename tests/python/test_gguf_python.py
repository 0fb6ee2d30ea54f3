"""dtcast.gguf (python/dtcast/gguf.py) against gguf-py 0.19.0: quantize equals gguf.quants.quantize
bit for bit for every type gguf-py quantizes, on the tensors the issue names (normal,
heavy-tailed, constant rows, all-zero blocks, +-0, subnormal-scale blocks, float16-overflowing
blocks, every row length that is a few blocks); dequantize equals gguf.quants.dequantize for
every type gguf-py dequantizes, on dtcast's own output and on random bytes; bfloat16 / float16 /
float64 results are the exact value rounded once; open() reads what GGUFReader reads; the jobs
run in process."""
import os

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")
ml_dtypes = pytest.importorskip("ml_dtypes")
import dtcast  # noqa: E402
import dtcast.gguf as G  # noqa: E402

Q = gguf.GGMLQuantizationType
QUANTIZED_BY_GGUF_PY = [Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1, Q.Q8_0, Q.TQ1_0, Q.TQ2_0, Q.MXFP4]
DEQUANTIZED_BY_GGUF_PY = [t for t in gguf.quants._type_traits if t not in (Q.Q8_1,)] \
    if hasattr(gguf.quants, "_type_traits") else []


def inputs(rng, k, rows=48):
    """The kinds of rows the issue lists, each rows x k float32."""
    out = {"normal": rng.standard_normal((rows, k), dtype=np.float32),
           "heavy": rng.standard_t(1.5, (rows, k)).astype(np.float32),
           "constant": np.repeat(rng.standard_normal((rows, 1), dtype=np.float32), k, 1)}
    z = rng.standard_normal((rows, k), dtype=np.float32)
    z[::2] = 0.0
    z[1::4] = -0.0
    out["zeros"] = z
    out["subnormal"] = (rng.standard_normal((rows, k)) * 10.0 **
                        rng.integers(-45, -36, (rows, 1))).astype(np.float32)
    out["overflow"] = (rng.standard_normal((rows, k)) * 10.0 **
                       rng.integers(5, 10, (rows, 1))).astype(np.float32)
    out["ties"] = (rng.integers(-16, 17, (rows, k)) * 0.5).astype(np.float32)
    return out


def bits_equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    return np.array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.parametrize("qt", QUANTIZED_BY_GGUF_PY, ids=lambda t: t.name)
def test_quantize_equals_gguf_py(qt):
    rng = np.random.default_rng(int(qt))
    block = gguf.GGML_QUANT_SIZES[qt][0]
    n = 0
    for mult in (1, 2, 3, 5, 16):
        for kind, x in inputs(rng, block * mult).items():
            with np.errstate(all="ignore"):
                ref = gguf.quants.quantize(x, qt)
            got = G.quantize(x, qt.value)
            if qt in (Q.Q4_0, Q.Q5_0):
                # a block of zeros whose first is -0: ggml's strict scan keeps max = +0, so
                # d = +0 / -8 = -0 (bytes 00 80, what dtcast writes); gguf-py's argmax takes
                # the -0 and writes d = +0 (00 00): the only difference
                b = x.reshape(-1, block)
                neg0 = np.all(b == 0, axis=1) & np.signbit(b[:, 0])
                r = np.array(ref).reshape(len(b), -1)
                assert np.all(r[neg0, 0:2] == 0)
                r[neg0, 1] = 0x80
                ref = r.reshape(ref.shape)
            assert bits_equal(got, ref), (kind, mult)
            # and its dequantization, bit for bit (NaN from overflowed scales included)
            with np.errstate(all="ignore"):
                dref = gguf.quants.dequantize(ref, qt)
            assert bits_equal(G.dequantize(got, qt.value), dref), (kind, mult)
            n += x.size
    assert n > 10 ** 5


@pytest.mark.parametrize("qt", [Q.BF16, Q.F16], ids=lambda t: t.name)
def test_element_wise_equals_gguf_py(qt):
    x = np.random.default_rng(3).standard_normal((8, 100)).astype(np.float32)
    x[0, :5] = [np.nan, np.inf, -np.inf, 1e-40, 65520.0]
    ref = gguf.quants.quantize(x, qt)
    got = G.quantize(x, qt.value)
    assert bits_equal(got.view(np.uint16), np.asarray(ref).view(np.uint16)[..., :got.shape[-1] // 2]
                      .reshape(got.view(np.uint16).shape)) or qt == Q.F16
    if qt == Q.F16:  # numpy keeps NaN payloads, ggml (and dtcast) write 0x7E00
        r16, g16 = np.asarray(ref).view(np.uint16), got.view(np.uint16)
        finite = ~np.isnan(x)
        assert np.array_equal(r16[finite], g16[finite]) and np.all(g16[~finite] == 0x7E00)


@pytest.mark.parametrize("qt", [t for t in Q if t not in (Q.Q8_1,) and G.type_code(t.value) in
                                [c["code"] for c in G.types() if c["dequantize"] and c["block"] > 1]
                                and t in gguf.GGML_QUANT_SIZES], ids=lambda t: t.name)
def test_dequantize_random_blocks(qt):
    """Random bytes as blocks (scales NaN, Inf, subnormal among them) against gguf-py; the
    IQ2/IQ3 types may differ only in the sign of NaN (ggml's C and gguf-py disagree there)."""
    rng = np.random.default_rng(100 + int(qt))
    block, size = gguf.GGML_QUANT_SIZES[qt]
    raw = rng.integers(0, 256, (64, 4096 // block * size), dtype=np.uint8)
    try:
        with np.errstate(all="ignore"):
            ref = gguf.quants.dequantize(raw, qt)
    except NotImplementedError:
        pytest.skip(f"gguf-py does not dequantize {qt.name}")
    got = G.dequantize(raw, qt.value)
    same = (ref.view(np.uint32) == got.view(np.uint32)) | (np.isnan(ref) & np.isnan(got))
    assert same.all(), int((~same).sum())
    if qt not in (Q.IQ2_XXS, Q.IQ2_XS, Q.IQ2_S, Q.IQ3_XXS, Q.IQ3_S):
        assert np.array_equal(ref.view(np.uint32), got.view(np.uint32))


@pytest.mark.parametrize("name", ["Q4_1", "Q5_1", "Q2_K", "Q4_K", "Q5_K", "Q8_K", "Q6_K", "Q8_0",
                                  "IQ4_XS", "MXFP4", "NVFP4", "TQ1_0"])
def test_one_rounding(name):
    """bfloat16 / float16 are float64 (the exact value) rounded once, as ml_dtypes rounds
    float64; and float64 is within half a float32 ulp of ggml's float32 (the exact value of the
    formula whose rounding ggml's float32 is)."""
    rng = np.random.default_rng(7)
    size = G.type_size(name)
    raw = rng.integers(0, 256, (32, 2048 // G.block_size(name) * size), dtype=np.uint8)
    exact = G.dequantize(raw, name, dtype=np.float64)
    f32 = G.dequantize(raw, name)
    ok = np.isfinite(exact)
    assert np.array_equal(exact[ok].astype(np.float32), f32[ok])
    for dt in (ml_dtypes.bfloat16, np.float16):
        got = G.dequantize(raw, name, dtype=dt)
        with np.errstate(all="ignore"):
            ref = exact.astype(dt)
        assert np.array_equal(got[ok].view(np.uint16), ref[ok].view(np.uint16)), dt


def write_model(path, rng):
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_uint32("llama.block_count", 1)
    w.add_string("general.name", "t")
    w.add_array("tokenizer.ggml.tokens", ["a", "\u00e9"])
    w.add_array("tokenizer.ggml.scores", [0.5, -2.0])
    w.add_bool("x.flag", True)
    src = {}
    for qt in (Q.Q8_0, Q.Q4_K, Q.IQ4_NL, Q.F32, Q.F16, Q.BF16):
        if qt in (Q.F32,):
            a = rng.standard_normal((3, 64)).astype(np.float32)
            w.add_tensor("f32", a)
            src["f32"] = (qt, a)
            continue
        if qt in (Q.F16,):
            a = rng.standard_normal((2, 3, 4)).astype(np.float16)
            w.add_tensor("f16", a)
            src["f16"] = (qt, a)
            continue
        block, size = gguf.GGML_QUANT_SIZES[qt]
        raw = rng.integers(0, 256, (4, 512 // block * size), dtype=np.uint8)
        if qt == Q.Q8_0:
            raw = gguf.quants.quantize(rng.standard_normal((4, 512)).astype(np.float32), qt)
        if qt == Q.BF16:
            raw = gguf.quants.quantize(rng.standard_normal((4, 16)).astype(np.float32), qt)
            w.add_tensor(qt.name, raw, raw_shape=raw.shape, raw_dtype=qt)
        else:
            w.add_tensor(qt.name, raw, raw_dtype=qt)
        src[qt.name] = (qt, raw)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return src


def test_open_matches_gguf_reader(tmp_path):
    path = tmp_path / "m.gguf"
    write_model(path, np.random.default_rng(1))
    r = gguf.GGUFReader(str(path))
    with G.open(path) as m:
        assert list(m.tensors) == [t.name for t in r.tensors]
        for t in r.tensors:
            mt = m.tensors[t.name]
            assert mt.code == int(t.tensor_type) and mt.nbytes == int(t.n_bytes)
            assert mt.shape == tuple(int(d) for d in reversed(t.shape))
            assert mt.offset == int(t.data_offset)
            assert np.array_equal(np.asarray(m.raw(t.name)).view(np.uint8).reshape(-1),
                                  np.asarray(t.data).view(np.uint8).reshape(-1))
            if int(t.tensor_type) not in (0, 1, 30):
                with np.errstate(all="ignore"):
                    ref = gguf.quants.dequantize(np.asarray(t.data), t.tensor_type)
                got = m[t.name]
                assert got.dtype == np.float32 and got.shape == mt.shape
                same = (got.view(np.uint32) == ref.view(np.uint32)) | (np.isnan(got) & np.isnan(ref))
                assert same.all()
        fields = {k: f.contents() for k, f in r.fields.items() if not k.startswith("GGUF.")}
        for k, v in fields.items():
            got = m.metadata[k]
            assert (np.allclose(got, v) if isinstance(v, (float, list)) and not
                    isinstance(v[0] if isinstance(v, list) and v else 0, str) else got == v), k
        assert m.metadata_types["tokenizer.ggml.tokens"] == "array[string]"
        assert m.metadata_types["x.flag"] == "bool"
        assert m["f32"].dtype == np.float32 and m.array("f16", "float32").dtype == np.float32
        assert m.array("BF16").dtype == ml_dtypes.bfloat16


def test_open_refuses_damaged(tmp_path):
    path = tmp_path / "m.gguf"
    write_model(path, np.random.default_rng(2))
    data = bytearray(path.read_bytes())
    data[4] = 9  # version
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(bytes(data))
    with pytest.raises(dtcast.Error) as e:
        G.open(bad)
    assert "bad.gguf" in str(e.value) and "byte 4" in str(e.value)


def test_jobs_in_process(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    path = tmp_path / "m.gguf"
    src = write_model(path, np.random.default_rng(3))
    out = G.to_safetensors(path, tmp_path / "m.safetensors", dtype="float32")
    got = st.load_file(out)
    assert sorted(got) == sorted(src)
    # the package's dequantize_checkpoint takes a GGUF model too
    dtcast.dequantize_checkpoint(path, tmp_path / "n.safetensors", to="float16")
    assert st.load_file(str(tmp_path / "n.safetensors"))["Q8_0"].dtype == np.float16
    # and back: safetensors -> GGUF, in process
    g = G.convert(out, tmp_path / "back.gguf", "q8_0", tensor_types={"f32": "f32"},
                  arch="llama", kv={"llama.block_count": 1, "x.ratio": 0.5, "x.big": ("u64", 7)})
    r = gguf.GGUFReader(g)
    tt = {t.name: t for t in r.tensors}
    assert tt["Q4_K"].tensor_type == Q.Q8_0 and tt["f32"].tensor_type == Q.F32
    f = {k: v.contents() for k, v in r.fields.items()}
    assert f["general.architecture"] == "llama" and f["llama.block_count"] == 1
    assert f["x.big"] == 7 and r.fields["x.big"].types[0] == gguf.GGUFValueType.UINT64
    assert np.array_equal(np.asarray(tt["Q4_K"].data).reshape(-1),
                          gguf.quants.quantize(got["Q4_K"], Q.Q8_0).reshape(-1))
    with pytest.raises(dtcast.Error):
        G.convert(out, tmp_path / "x.gguf", "iq2_xxs")
    with pytest.raises(NotImplementedError):
        G.quantize(np.zeros((1, 256), np.float32), "iq2_xxs")
    assert not os.path.exists(tmp_path / "x.gguf")
