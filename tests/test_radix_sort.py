"""The radix sort of float32 values (``data.radix_sort``) and the pre-sort built on it:
NumPy's stable argsort, bit for bit."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from gpurules.data import presorted
from gpurules.data.presorted import presort_dense
from gpurules.data.radix_sort import from_keys, radix_argsort, to_keys

NAN = np.float32(np.nan)
# float32 values of every kind: ties, signed zeros, infinities, NaNs (also with the sign
# bit or another payload), subnormals
_SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, NAN, -NAN, 1e-45, -1e-45, 1.0, -1.0],
                    dtype=np.float32)
_ODD_NAN = np.array([0x7FC00001, 0xFF800001], dtype=np.uint32).view(np.float32)


def _values(draw_floats):
    return arrays(np.float32, st.integers(0, 300), elements=draw_floats)


@settings(max_examples=200, deadline=None)
@given(_values(st.floats(width=32, allow_nan=True, allow_infinity=True,
                         allow_subnormal=True) | st.sampled_from(list(_SPECIAL))))
def test_radix_argsort_is_numpys_stable_argsort(x):
    keys = x.copy().view(np.uint32)
    to_keys(keys)
    order = np.empty(x.shape[0], np.int32)
    radix_argsort(keys, order)
    np.testing.assert_array_equal(order, np.argsort(x, kind="stable"))
    assert (np.diff(keys.astype(np.int64)) >= 0).all()


def test_keys_read_back_as_the_values():
    """:func:`from_keys` inverts :func:`to_keys` bit for bit, except that -0.0 comes back
    as +0.0 and a NaN as a NaN."""
    x = np.concatenate([_SPECIAL, _ODD_NAN, np.random.default_rng(0).normal(
        size=1000).astype(np.float32) * 1e20])
    keys = x.copy().view(np.uint32)
    to_keys(keys)
    from_keys(keys)
    back = keys.view(np.float32)
    plain = ~np.isnan(x) & ~((x == 0) & np.signbit(x))
    np.testing.assert_array_equal(back[plain].view(np.uint32), x[plain].view(np.uint32))
    assert np.isnan(back[np.isnan(x)]).all()
    assert not np.signbit(back[x == 0]).any()


def _problem(seed, n, A):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, A)).astype(np.float32)
    X[:, 0] = np.round(X[:, 0])  # many ties
    X[rng.random(X.shape) < 0.05] = NAN
    X[rng.random(X.shape) < 0.05] = -NAN
    for value in (0.0, -0.0, np.inf, -np.inf, 1e-45):
        X[rng.random(X.shape) < 0.02] = value
    X.flat[rng.integers(0, X.size, 2)] = _ODD_NAN
    return X


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("layout", ["C float32", "F float32", "C float64"])
def test_presort_by_radix_sort_equals_numpys(threads, layout, monkeypatch):
    """``presort_dense`` from :data:`presorted.RADIX_EXAMPLES` examples on (the compiled
    sort, the columns gathered in blocks from a C-ordered float32 X) gives the arrays of
    NumPy's stable sort bit for bit: each value's own bits (signed zeros, NaN payloads)."""
    X = _problem(threads, 700, 6)
    if layout == "F float32":
        X = np.asfortranarray(X)
    elif layout == "C float64":
        with np.errstate(invalid="ignore"):  # the signalling NaN
            X = X.astype(np.float64)
    nominal = np.array([True, False, False, True, False, False])
    monkeypatch.setattr(presorted, "PARALLEL_SORT_ELEMENTS", 0)
    monkeypatch.setattr(presorted, "RADIX_EXAMPLES", 10 ** 9)
    want = presort_dense(np.asarray(X, np.float32), nominal, threads)
    monkeypatch.setattr(presorted, "RADIX_EXAMPLES", 1)
    got = presort_dense(np.asarray(X, np.float32), nominal, threads)
    for name in ("sorted_index", "sorted_value", "n_present", "nominal"):
        a, b = getattr(got, name), getattr(want, name)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))
