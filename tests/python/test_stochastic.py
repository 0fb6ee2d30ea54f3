"""dtcast.cast(x, to, round="stochastic", seed=S): the bytes of the rule computed here in numpy
from its definition (docs/conversion.md, "Stochastic rounding"), the seed and thread contract,
and the refusals."""

import numpy as np
import ml_dtypes
import pytest

import dtcast

GAMMA = 0x9E3779B97F4A7C15


def rand32(seed, n, offset=0):
    """The low 32 bits of SplitMix64(seed + (i + 1) * gamma), numpy uint64 (wrapping)."""
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + (np.arange(n, dtype=np.uint64) + np.uint64(offset + 1)) * np.uint64(GAMMA)
        z ^= z >> np.uint64(30)
        z *= np.uint64(0xBF58476D1CE4E5B9)
        z ^= z >> np.uint64(27)
        z *= np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return z & np.uint64(0xFFFFFFFF)


def bf16_oracle(x, seed):
    """float32 -> bfloat16 codes for finite x: the dropped fraction is the low 16 bits, so
    D = low16 << 16; the kept code plus one (a carry moves the exponent, up to Inf) iff r < D."""
    b = x.view(np.uint32).astype(np.uint64)
    D = (b & np.uint64(0xFFFF)) << np.uint64(16)
    up = (rand32(seed, len(x)) < D).astype(np.uint64)
    sign = b & np.uint64(0x80000000)
    mag = ((b & np.uint64(0x7FFFFFFF)) >> np.uint64(16)) + up
    return ((sign >> np.uint64(16)) | mag).astype(np.uint16)


def test_bytes_equal_the_rule():
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(200_000) * 10.0 ** rng.integers(-30, 30, 200_000)).astype(np.float32)
    x[:4] = [np.float32(3.4e38), -np.float32(3.4e38), 1e-40, -1e-45]  # overflow, subnormals
    for seed in (0, 7, 2**64 - 1):
        r = dtcast.cast(x, "bfloat16", round="stochastic", seed=seed)
        assert r.dtype == ml_dtypes.bfloat16
        assert np.array_equal(r.view(np.uint16), bf16_oracle(x, seed))


def test_seed_none_is_zero_and_threads_do_not_matter():
    x = np.random.default_rng(2).standard_normal(1 << 20).astype(np.float32)
    a = dtcast.cast(x, "float8_e4m3fn", round="stochastic")
    b = dtcast.cast(x, "float8_e4m3fn", round="stochastic", seed=0, threads=1)
    c = dtcast.cast(x, "float8_e4m3fn", round="stochastic", seed=0, threads=8)
    assert np.array_equal(a.view(np.uint8), b.view(np.uint8))
    assert np.array_equal(b.view(np.uint8), c.view(np.uint8))
    d = dtcast.cast(x, "float8_e4m3fn", round="stochastic", seed=1)
    assert not np.array_equal(a.view(np.uint8), d.view(np.uint8))


def test_unbiased_on_average():
    x = np.full(1_000_000, 1 + 2.0 ** -9, np.float32)  # a quarter of a bfloat16 step
    r = dtcast.cast(x, "bfloat16", round="stochastic", seed=3).astype(np.float64)
    p = np.mean(r > 1)
    assert abs(p - 0.25) < 4 * (0.25 * 0.75 / len(x)) ** 0.5


def test_exact_values_and_sub_byte_targets():
    x = np.float32([0.5, 1.0, -6.0, 0.0, 3.0])
    r = dtcast.cast(x, "float4_e2m1fn", round="stochastic", seed=5)
    assert r.astype(np.float32).tolist() == [0.5, 1.0, -6.0, 0.0, 3.0]
    # int4 through the one-per-byte layout: element i draws index i whatever the blocks
    y = np.random.default_rng(4).uniform(-7, 7, 100_001).astype(np.float32)
    r = dtcast.cast(y, "int4", round="stochastic", seed=9, int_overflow="saturate")
    a = np.abs(y.astype(np.float64))
    Da = np.floor((a - np.floor(a)) * 2.0 ** 32).astype(np.uint64)
    want = np.sign(y) * (np.floor(a) + (rand32(9, len(y)) < Da))
    assert np.array_equal(r.astype(np.float64), want)


def test_refusals():
    with pytest.raises(dtcast.Error, match="seed"):
        dtcast.cast(np.float32([1.5]), "bfloat16", seed=1)
    with pytest.raises(dtcast.Error, match="seed"):
        dtcast.cast(np.float32([1.5]), "bfloat16", round="stochastic", seed=-1)
    with pytest.raises(dtcast.Error, match="stochastic"):
        dtcast.cast(np.float32([1.5]), "bfloat16", round="stochastic", report=True)
