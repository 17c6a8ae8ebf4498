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
