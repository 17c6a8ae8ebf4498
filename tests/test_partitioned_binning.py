"""The pieces of a distributed fit that need no dask: the binning of row partitions
(``data.partitioned_binning``) equals ``bin_features`` of the concatenated rows, and
``CpuBackend.partial_histograms`` returns the build's rows with empty rows zeroed."""

import numpy as np
import pytest

from gpurules.backends.factory import get_backend
from gpurules.data import partitioned_binning as pb
from gpurules.data.binning import BinnedFeatures, bin_features, drop_empty_bins


def _data():
    rng = np.random.default_rng(0)
    n, A = 300, 6
    X = rng.normal(size=(n, A)).astype(np.float32)
    X[:, 2] = rng.integers(0, 4, n)
    X[:, 3] = np.round(X[:, 3], 1)
    X[rng.random((n, A)) < 0.1] = np.nan
    X[:, 5] = 1.0
    X[5, 4] = -0.0
    nominal = np.zeros(A, bool)
    nominal[2] = True
    return X, nominal


@pytest.mark.parametrize("method", ["equal-width", "equal-frequency"])
@pytest.mark.parametrize("options", [{}, {"bin_ratio": 0.1}, {"max_bins": 8}])
def test_partitions_bin_as_the_whole(method, options):
    X, nominal = _data()
    ref = drop_empty_bins(bin_features(X, nominal, method, **options))
    parts = [X[:100] + np.float32(0), X[100:180] + np.float32(0), X[180:] + np.float32(0)]
    distinct = pb.distinct_features(nominal, method)
    plan = pb.plan_bins([pb.partition_summary(p, distinct) for p in parts], nominal, method,
                        **options)
    results = [pb.assign_bins(p, plan) for p in parts]
    layout, compact = pb.merge_layout(plan, [r[1:] for r in results])
    index = np.concatenate([drop_empty_bins(BinnedFeatures(
        r[0], layout.num_bins, layout.bin_offset, layout.bin_min, layout.bin_max,
        layout.nominal)).bin_index for r in results], axis=1)
    np.testing.assert_array_equal(index, ref.bin_index)
    for name in ("num_bins", "bin_offset", "bin_min", "bin_max", "nominal"):
        np.testing.assert_array_equal(getattr(compact, name), getattr(ref, name),
                                      err_msg=name)


def test_equal_width_needs_finite_values():
    X, nominal = _data()
    X[0, 0] = np.inf
    summary = pb.partition_summary(X, pb.distinct_features(nominal, "equal-width"))
    with pytest.raises(ValueError, match="finite"):
        pb.plan_bins([summary], nominal, "equal-width")


def test_partial_histograms_are_the_build_rows():
    from gpurules.estimators.boomer_tables import LOSSES

    X, nominal = _data()
    rng = np.random.default_rng(1)
    Y = (rng.random((X.shape[0], 2)) < 0.4).astype(np.uint8)
    features = drop_empty_bins(bin_features(X, nominal, "equal-width"))
    backend = get_backend("cpu")
    backend.start_fit(features, Y, LOSSES["logistic-decomposable"], np.ones(X.shape[0]),
                      2.0 ** 20)
    sampled = np.array([4, 0, 2], np.int64)
    weights = rng.integers(0, 3, X.shape[0]).astype(np.int32)
    backend.partial_histograms(sampled, weights)  # fills the rows at full coverage
    backend.apply_refinement(_condition_on(features, 1))  # then a partial coverage
    rows = backend.partial_histograms(sampled, weights)
    K = Y.shape[1]
    assert rows.dtype == np.int64 and rows.shape[1] == 2 * K + 1
    offsets = features.bin_offset
    expected_rows = np.concatenate([np.arange(offsets[f], offsets[f + 1]) for f in sampled])
    assert rows.shape[0] == expected_rows.shape[0]
    covered = backend.covered_mask()
    for r, b in enumerate(expected_rows):
        f = np.searchsorted(offsets, b, side="right") - 1
        members = covered & (features.bin_index[f] == b - offsets[f]) & (weights > 0)
        assert rows[r, -1] == members.sum()
        np.testing.assert_array_equal(rows[r, :K], (backend.g[members] *
                                                    weights[members, None]).sum(0))
        np.testing.assert_array_equal(rows[r, K:2 * K], (backend.h[members] *
                                                         weights[members, None]).sum(0))


def _condition_on(features, f):
    """A ``<=`` refinement on feature ``f`` at its middle non-empty bin."""
    from gpurules.backends.base import Refinement
    from gpurules.conditions import OP_LEQ

    first, stop = features.bin_offset[f], features.bin_offset[f + 1]
    threshold = features.bin_max[(first + stop) // 2]
    return Refinement(f, OP_LEQ, np.float32(threshold), 0.0, 0, -1, None, None)


def test_import_gpurules_never_imports_dask():
    import subprocess
    import sys

    code = ("import sys, gpurules, gpurules.dask; "
            "assert not any(m == 'dask' or m.startswith(('dask.', 'distributed')) "
            "for m in sys.modules), sorted(m for m in sys.modules if 'dask' in m)")
    subprocess.run([sys.executable, "-c", code], check=True)
