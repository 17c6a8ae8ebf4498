"""The CUDA C kernels of ``kernels/histogram.cu`` compiled for the host by
``tests/reference/cuda_host_harness.cpp`` (the threads of a block as real threads), against
the NumPy histograms. Blocks do not run concurrently, so races between blocks are not found
here. (The Numba CUDA kernels run under the simulator in ``test_cuda_simulator.py``.) The
``host_kernels`` fixture is in ``conftest.py``.
"""

import numpy as np
import pytest

from gpurules.backends.cuda.histograms import shared_histogram_bytes
from gpurules.data.binning import bin_features
from tests.reference.cuda_reference import exact_bins, random_problem, slot_histograms, slot_layout


def _host_histograms(host_kernels, use_shared, binned, features, g, h, weights, mask,
                     shared_slack=0, group_offset=None, grid=(3, 2)):
    """zero_histograms then a histogram kernel on a grid with fewer y-blocks than groups of
    features (default: one group per feature), in the slot layout; histograms start as -7
    and have 3 rows more than the slots need. Returns (status, (hist_g, hist_h,
    hist_count))."""
    K = g.shape[1]
    slot_offset, _ = slot_layout(binned, features)
    if group_offset is None:
        group_offset = np.arange(features.shape[0] + 1, dtype=np.int64)
    R = int(slot_offset[-1]) + 3
    hists = (np.full((R, K), -7, np.int64), np.full((R, K), -7, np.int64),
             np.full(R, -7, np.int64))
    host_kernels.zero_histograms((2, 2), 32, slot_offset, K, hists)
    need = int(shared_histogram_bytes(np.diff(slot_offset[group_offset]), K).max())
    status = host_kernels.histogram(use_shared, grid, 32, need - shared_slack, features,
                                    slot_offset, binned, mask, 1, weights, g, h, hists,
                                    group_offset)
    return status, hists


@pytest.mark.parametrize("groups", [None, [0, 2, 3], [0, 3], [0, 0, 2, 2, 3, 3]],
                         ids=["per-feature", "groups-2-1", "one-group", "empty-groups"])
@pytest.mark.parametrize("grid", [(3, 2), (1, 2)], ids=["6-blocks", "2-blocks"])
@pytest.mark.parametrize("use_shared", [True, False, "by-slot"],
                         ids=["shared", "global", "global-by-slot"])
@pytest.mark.parametrize("binning", ["exact", "equal-frequency"])
def test_cuda_c_histograms_on_host_equal_reference(host_kernels, use_shared, binning, groups,
                                                   grid):
    """The CUDA C kernels (32 concurrent threads per block, 6 blocks or 2, 3 sampled features
    in groups, some empty: one pass over the statistics per group, in chunks where the
    blocks outnumber the groups, several groups per block where not) give the NumPy
    histograms of the sampled features bit for bit in their slots, with signed sums beyond
    32 bits; the rows past the slots are left alone."""
    rng = np.random.default_rng(9)
    X, nominal, g, h, weights, mask = random_problem(rng, 300, 5, 3, n_distinct=12)
    g, h = g * 2 ** 20, h * 2 ** 20
    binned = exact_bins(X, nominal) if binning == "exact" else \
        bin_features(X, nominal, "equal-frequency", bin_ratio=0.5)
    features = np.array([3, 0, 4], np.int64)
    status, got = _host_histograms(
        host_kernels, use_shared, binned, features, g, h, weights, mask,
        group_offset=None if groups is None else np.array(groups, np.int64), grid=grid)
    assert status == 0
    _, *want = slot_histograms(binned, features, mask, 1, weights, g, h)
    for a, b, name in zip(got, want, ("g", "h", "count")):
        np.testing.assert_array_equal(a[:len(b)], b, err_msg=f"hist_{name}")
        assert (a[len(b):] == -7).all(), f"hist_{name}: rows past the slots changed"


def test_host_harness_catches_short_shared_memory(host_kernels):
    """The harness notices a kernel using more shared memory than the launch gave it."""
    X, nominal, g, h, weights, mask = random_problem(np.random.default_rng(10), 100, 2, 3)
    status, _ = _host_histograms(host_kernels, True, exact_bins(X, nominal),
                                 np.array([0, 1], np.int64), g, h, weights, mask,
                                 shared_slack=64, group_offset=np.array([0, 2], np.int64))
    assert status == -1


def _packed_rows(host_kernels, binned, row_features):
    """``pack_sorted``'s rows (int64 (F, n)) of ``row_features`` (row r: feature
    ``row_features[r]``), each from a stable argsort of the feature's bins (missing first)."""
    return np.stack([host_kernels.pack_sorted((2, 1), 64, np.argsort(
        binned.bin_index[f], kind="stable").astype(np.int64), binned.bin_index[f])
        for f in row_features])


def test_pack_sorted_on_host(host_kernels):
    """An entry of a sorted row holds the bin (signed, -1 = missing) in its high and the
    example in its low 32 bits."""
    X, nominal, *_ = random_problem(np.random.default_rng(11), 200, 2, 1, n_distinct=9)
    binned = exact_bins(X, nominal)
    (row,) = _packed_rows(host_kernels, binned, [1])
    order = np.argsort(binned.bin_index[1], kind="stable")
    np.testing.assert_array_equal(row >> 32, binned.bin_index[1][order])
    np.testing.assert_array_equal(row & 0xFFFFFFFF, order)
    assert (row >> 32 == -1).sum() == np.isnan(X[:, 1]).sum() > 0


@pytest.mark.parametrize("W, span, grid, block", [
    (3, 32, (3, 2), 64), (3, 64, (1, 1), 32), (70, 32, (2, 1), 96), (70, 96, (4, 3), 32)],
    ids=["decomposable-span-32", "one-warp", "two-passes", "two-passes-span-96"])
def test_cuda_c_sorted_histograms_on_host_equal_reference(host_kernels, W, span, grid, block):
    """``histogram_sorted`` (warps walking spans of the features' examples in bin order; bins
    longer than a span, so shared first and last bins go through atomics; W + K + 1 > 64
    columns in two passes) gives the NumPy histograms of the launch's slots bit for bit, with
    missing values, weights 0 and 2 and uncovered examples left out; the slot outside the
    launch and the rows past the slots are left alone."""
    rng = np.random.default_rng(12)
    X, nominal, g, _, weights, mask = random_problem(rng, 300, 5, 3, n_distinct=12)
    g = g * 2 ** 20
    h = rng.integers(-2 ** 40, 2 ** 40, size=(300, W)).astype(np.int64)
    binned = exact_bins(X, nominal)
    features = np.array([3, 0, 4], np.int64)
    row_features = np.array([4, 1, 0, 3], np.int64)
    sorted_row = np.full(5, -1, np.int64)
    sorted_row[row_features] = np.arange(4)
    slot_offset, _ = slot_layout(binned, features)
    R = int(slot_offset[-1]) + 3
    hists = (np.full((R, 3), -7, np.int64), np.full((R, W), -7, np.int64),
             np.full(R, -7, np.int64))
    host_kernels.zero_histograms((2, 2), 32, slot_offset, 3, hists)
    status = host_kernels.histogram_sorted(
        grid, block, block * 16, features, slot_offset, np.array([1, 1, 3], np.int64),
        _packed_rows(host_kernels, binned, row_features), sorted_row, mask, 1, weights, g, h,
        hists, span)
    assert status == 0
    _, *want = slot_histograms(binned, features, mask, 1, weights, g, h)
    first = int(slot_offset[1])
    for a, b, name in zip(hists, want, ("g", "h", "count")):
        assert (a[:first] == 0).all(), f"hist_{name}: the slot outside the launch changed"
        np.testing.assert_array_equal(a[first:len(b)], b[first:], err_msg=f"hist_{name}")
        assert (a[len(b):] == -7).all(), f"hist_{name}: rows past the slots changed"
