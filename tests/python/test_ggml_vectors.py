"""dtcast's ggml block types (dtcast.gguf.quantize / dequantize) against ggml's own outputs:
the vectors in tests/data/ggml/, which tests/ggml_oracle/make_vectors.py made by running
llama.cpp's ggml (libggml-base.so from the llama-cpp-python 0.3.36 sdist; tests/data/ggml/README.md)
on inputs that tests/ggml_oracle/ggml_cases.py makes again here from their seeds.

  * quantize, per type (Q4_0 ... Q2_0, the K-quants, TQ1_0/TQ2_0, MXFP4, NVFP4, IQ4_NL, IQ4_XS,
    IQ3_XXS, IQ3_S, IQ2_S): 102400 float32 values in five cases (near-normal rows, heavy tails,
    special blocks -- zeros, +-0, constants, subnormal and float16-overflowing scales --, integers,
    exact ties), each case in its own row length; dtcast's bytes must be ggml's, 0 bytes differing.
  * dequantize, per type (the above and IQ2_XXS, IQ2_XS, IQ1_S, IQ1_M; not Q8_1, which ggml
    cannot dequantize): 10240 blocks of random bytes, every 4th with NaN, Inf, subnormal, zero ...
    scale fields; dtcast's float32 bit patterns (NaNs' included) must be ggml's: the first
    blocks' values are stored whole and compared value by value, every block's through a 32-bit
    blake2b digest of its values.
  * the inputs' sha256 must be the stored ones: a difference means the generator drifted, not
    dtcast.
A type dtcast does not implement (NotImplementedError) is skipped with the reason. make check-long
runs ggml itself against dtcast on 10^7 more values per type (make_vectors.py --check).
"""

import json
import os
import sys

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(REPO, "tests", "data", "ggml")
sys.path.insert(0, os.path.join(REPO, "tests", "ggml_oracle"))
import ggml_cases as cases  # noqa: E402

try:
    import dtcast.gguf as G
except ModuleNotFoundError as e:  # the API is not there (yet); any other import error fails
    if e.name not in ("dtcast", "dtcast.gguf"):
        raise
    pytest.skip(f"dtcast.gguf is not importable ({e})", allow_module_level=True)

with open(os.path.join(DATA, "index.json")) as f:
    INDEX = json.load(f)

_stored = {}


def stored(name):
    if name not in _stored:
        _stored[name] = cases.read_npz(os.path.join(DATA, name + ".npz"))
    return _stored[name]


def check_input(case):
    h = cases.sha256(cases.quantize_input(case))
    want = INDEX["quantize_inputs"][case]["input_sha256"]
    assert h == want, (f"input '{case}': sha256 {h}, stored {want}: "
                       "tests/ggml_oracle/ggml_cases.py no longer makes the inputs the vectors "
                       "were made from (generator drift)")


def call(fn, *args, **kw):
    try:
        return fn(*args, **kw)
    except NotImplementedError as e:
        pytest.skip(f"dtcast: {e or 'NotImplementedError'}")


def hexs(b):
    return bytes(b).hex()


def window(want, got):
    """where two blocks' bytes first differ, and 16 bytes of each from there"""
    i = int(np.flatnonzero(want != got)[0])
    j = max(0, i - 4)
    return f"byte {i}: ggml ..{hexs(want[j:j + 16])}.. dtcast ..{hexs(got[j:j + 16])}.."


@pytest.mark.parametrize("case", cases.CASES)
def test_inputs(case):
    check_input(case)


def test_type_table():
    for name, code, block, size, _, _ in cases.TYPES:
        try:
            got = (G.block_size(name), G.type_size(name), G.block_size(code), G.type_size(code),
                   G.type_name(code))
        except NotImplementedError:
            continue
        assert got[:4] == (block, size, block, size), (name, got)
        assert got[4].lower() == name.lower(), (code, got[4], name)


@pytest.mark.parametrize("name", cases.quantized_types())
def test_quantize(name):
    _, code, block, size, _, _ = cases.BY_NAME[name]
    entry = INDEX["types"][name]["quantize"]
    data = stored(name)
    report = []
    failures = []
    for case in cases.CASES:
        check_input(case)
        x = cases.quantize_input_2d(case, block)
        want = data["q_" + case]
        got = np.asarray(call(G.quantize, x, name))
        assert got.dtype == np.uint8, f"{case}: dtype {got.dtype}"
        assert got.shape == want.shape, f"{case}: shape {got.shape}, ggml's {want.shape}"
        diff = got != want
        nbytes = int(np.count_nonzero(diff))
        bad = np.flatnonzero(diff.reshape(-1, size).any(axis=1))
        report.append(f"{case}: {x.size} values, {nbytes} bytes in {bad.size} of "
                      f"{x.size // block} blocks differ")
        if nbytes:
            b = int(bad[0])
            xb = x.reshape(-1, block)[b]
            failures.append(
                f"{case} (rows of {x.shape[1]}): {nbytes} bytes in {bad.size} blocks differ; "
                f"first block {b}: input max|x| {float(np.abs(xb).max())!r}, first values "
                f"{xb[:4].tolist()}; {window(want.reshape(-1, size)[b], got.reshape(-1, size)[b])}")
        assert entry["cases"][case]["shape"] == list(x.shape)
    # the thread count does not change the bytes
    x = cases.quantize_input_2d("randn", block)
    one = np.asarray(call(G.quantize, x, name, threads=1))
    assert np.array_equal(one, np.asarray(call(G.quantize, x, name, threads=0))), \
        "threads=1 and threads=0 give different bytes"
    print(f"{name} quantize: " + "; ".join(report))
    assert not failures, f"{name}: dtcast's bytes differ from ggml's: " + " | ".join(failures)


@pytest.mark.parametrize("name", cases.dequantized_types())
def test_dequantize(name):
    _, code, block, size, _, _ = cases.BY_NAME[name]
    entry = INDEX["types"][name]["dequantize"]
    data = stored(name)
    d = cases.dequantize_input_2d(name)
    assert cases.sha256(d) == entry["input_sha256"], \
        "the random blocks are not the ones the vectors were made from (generator drift)"
    got = np.asarray(call(G.dequantize, d, code))
    assert got.dtype == np.float32, f"dtype {got.dtype}"
    want_shape = (d.shape[0], d.shape[1] // size * block)
    assert got.shape == want_shape, f"shape {got.shape}, expected {want_shape}"
    bits = np.ascontiguousarray(got).view("<u4").reshape(-1)
    full = data["dq_full"]
    nfull = full.size
    vdiff = np.flatnonzero(bits[:nfull] != full)
    digests = cases.block_digests(got, block)
    bdiff = np.flatnonzero((digests != data["dq_digest"]).any(axis=1))
    print(f"{name} dequantize: {cases.DQ_BLOCKS} blocks, {bdiff.size} differ; first "
          f"{nfull // block} blocks stored whole: {vdiff.size} of {nfull} values differ")
    msg = []
    if vdiff.size:
        i = int(vdiff[0])
        b = i // block
        msg.append(f"{vdiff.size} of the {nfull} stored values differ; first: block {b} element "
                   f"{i % block}: ggml 0x{int(full[i]):08x} dtcast 0x{int(bits[i]):08x} "
                   f"(block bytes {hexs(d.reshape(-1, size)[b])})")
    if bdiff.size:
        b = int(bdiff[0])
        msg.append(f"{bdiff.size} of {cases.DQ_BLOCKS} blocks' values differ (digests); first: "
                   f"block {b} (bytes {hexs(d.reshape(-1, size)[b])}), dtcast's first values "
                   f"{got.reshape(-1, block)[b][:4].tolist()}")
    assert not msg, f"{name}: dtcast's float32 differ from ggml's: " + " | ".join(msg)
    # the type may be named by its code or by its name in any case
    head = d[:1]
    for spelling in (name, name.upper()):
        other = np.asarray(call(G.dequantize, head, spelling))
        assert np.array_equal(other.view(np.uint32), got[:1].view(np.uint32)), spelling
