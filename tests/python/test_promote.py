"""dtcast.promote_types / dtcast.result_type with rules="numpy+ml_dtypes" against the installed
numpy and ml_dtypes themselves (the pins of requirements.txt: numpy 2.4.6, ml_dtypes 0.7.0): every
ordered pair of numpy's and ml_dtypes' dtypes, as dtypes, arrays and 0-d arrays, and each with a
Python bool, int, float and complex in both orders. ml_dtypes' types that dtcast does not have
(tests/promote_tables/generate.py, ML_DTYPES_ABSENT: none with ml_dtypes 0.7.0) would be left out
while dtcast refuses them."""

import os
import sys

import ml_dtypes
import numpy as np
import pytest

import dtcast

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "promote_tables"))
import generate  # noqa: E402  (the generator of the checked-in tables: the same type list)

RULES = "numpy+ml_dtypes"
SCALARS = [True, 1, 1.0, 1j]


def known(dt):
    try:
        dtcast.dtype(dt)
        return True
    except dtcast.Error:
        return False


ALL = [np.dtype(n) for n in generate.NUMPY_NAMES] + [dt for _, dt in generate.ml_dtypes_types()]
TYPES = [dt for dt in ALL if known(dt)]
ABSENT = [dt for dt in ALL if not known(dt)]


def expected(x, y):
    try:
        if isinstance(x, np.dtype) and isinstance(y, np.dtype):
            return np.promote_types(x, y)
        return np.result_type(x, y)
    except TypeError:  # numpy's DTypePromotionError
        return "error"


def ours(x, y):
    try:
        if isinstance(x, np.dtype) and isinstance(y, np.dtype):
            return np.dtype(dtcast.promote_types(x, y, rules=RULES))
        return np.dtype(dtcast.result_type(x, y, rules=RULES))
    except dtcast.Error:
        return "error"


def test_versions_are_the_pins():
    assert (np.__version__, ml_dtypes.__version__) == ("2.4.6", "0.7.0")


def test_absent_types_are_the_known_ones():
    # a type of ml_dtypes that dtcast lacks and generate.py does not list would be missed here
    names = [generate.ML_DTYPES_NAMES[dt.name] for dt in ABSENT]
    assert set(names) <= set(generate.ML_DTYPES_ABSENT), names
    assert len(TYPES) + len(ABSENT) == 14 + len(generate.ml_dtypes_types())


@pytest.mark.parametrize("a", TYPES, ids=lambda d: d.name)
def test_every_pair_of_dtypes(a):
    bad = [(b.name, str(expected(a, b)), str(ours(a, b))) for b in TYPES
           if expected(a, b) != ours(a, b)]
    assert not bad, bad


@pytest.mark.parametrize("a", TYPES, ids=lambda d: d.name)
def test_arrays_and_zero_dim(a):
    bad = []
    for b in TYPES:
        for x, y in [(np.zeros(2, a), np.zeros(3, b)), (np.zeros((), a), np.zeros(2, b)),
                     (np.zeros(2, a), np.zeros((), b)), (np.zeros((), a), np.zeros((), b))]:
            if expected(x, y) != ours(x, y):
                bad.append((b.name, x.ndim, y.ndim, str(expected(x, y)), str(ours(x, y))))
    assert not bad, bad


@pytest.mark.parametrize("a", TYPES, ids=lambda d: d.name)
def test_python_scalars_both_orders(a):
    bad = []
    for arr in (np.zeros(2, a), np.zeros((), a)):
        for s in SCALARS:
            for x, y in ((arr, s), (s, arr)):
                if expected(x, y) != ours(x, y):
                    bad.append((repr(x if x is s else arr.ndim), repr(y if y is s else arr.ndim),
                                str(expected(x, y)), str(ours(x, y))))
    assert not bad, bad


def test_two_python_scalars():
    for s in SCALARS:
        for t in SCALARS:
            assert ours(s, t) == expected(s, t), (s, t)


def test_the_surprises():
    # float8 with int8 stays float8: ml_dtypes registers int8 -> float8 as a safe cast
    assert dtcast.promote_types("float8_e4m3fn", "int8", rules=RULES) == ml_dtypes.float8_e4m3fn
    assert dtcast.promote_types("bfloat16", "float16", rules=RULES) == np.float32
    assert dtcast.promote_types("int4", "uint4", rules=RULES) == np.int8
    assert dtcast.promote_types("uint1", "uint2", rules=RULES) == np.uint8
    assert dtcast.result_type(np.zeros(1, ml_dtypes.bfloat16), 1e-3, rules=RULES) == \
        ml_dtypes.bfloat16
    assert dtcast.result_type(1e-3, np.zeros(1, ml_dtypes.bfloat16), rules=RULES) == np.float32


def test_numpy_alone_refuses_ml_dtypes():
    with pytest.raises(dtcast.Error, match="not understood"):
        dtcast.promote_types("bfloat16", "float16")
