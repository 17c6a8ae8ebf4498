"""The histogram slots and groups of a CUDA search (``backends/cuda/histograms.py``), the fused
search's tables (``histogram_search.fused_layout``) and a refinement block's draws
(``backends/cuda/refine._draws``), host code only: no CuPy, no Numba CUDA launch."""

import types

import numpy as np
import pytest

from gpurules.backends.cuda.histograms import HistogramBuilder, shared_histogram_bytes


def _builder(num_bins, K=2, W=None, shared_limit=48 * 1024, force_global=False):
    b = HistogramBuilder()
    b.features = types.SimpleNamespace(num_features=len(num_bins))
    b._num_bins = np.asarray(num_bins, np.int64)
    b.g, b.h = np.zeros((1, K)), np.zeros((1, K if W is None else W))
    b._shared_limit, b.force_global_atomics, b._geometries = shared_limit, force_global, {}
    return b


def test_groups_by_hand():
    """K = W = 2: 40 bytes a row, 1,228 rows in 48 KiB (the group cap); 2,000 rows need
    80,000 bytes, more than the 64 KiB limit here: that feature goes global."""
    b = _builder([600, 600, 100, 2000, 700, 5], shared_limit=64 * 1024)
    features = np.array([0, 1, 2, 3, 4, 5], np.int64)
    order = b._slot_order(features)
    np.testing.assert_array_equal(order, [0, 1, 2, 4, 5, 3])  # the global one last
    slotted = features[order]
    np.testing.assert_array_equal(b._slot_offset(slotted),
                                  [0, 600, 1200, 1300, 2000, 2005, 4005])
    # 600 + 600 fit together, + 100 would not; 100 + 700 + 5 do
    np.testing.assert_array_equal(b._group_offsets(slotted),
                                  [2, 0, 2, 5, 5, 5, 5, 5, 1, 5, 6])
    assert shared_histogram_bytes(1300, 2) > 48 * 1024 >= shared_histogram_bytes(1200, 2)


def test_forced_global_atomics_leave_no_shared_group():
    b = _builder([3, 4], force_global=True)
    np.testing.assert_array_equal(b._group_offsets(np.array([1, 0])), [0, 0, 0, 0, 1, 0, 2])


@pytest.mark.parametrize("seed", range(5))
def test_a_block_of_draws_is_each_draw_alone(seed):
    """``_draws`` lays out a whole block at once: each row as the single-draw layout of
    that step's features, rows past the block zero; the groups cover the shared slots in
    order, each within the cap or one slot alone."""
    from gpurules.backends.base import floyd_indices
    from gpurules.backends.cuda.refine import _draws

    rng = np.random.default_rng(seed)
    A, K = 12, 3
    b = _builder(rng.integers(1, 900, A), K=K, shared_limit=int(rng.choice([4096, 60000])))
    uniforms = rng.random((5, 4))
    features, order, slot_offset, groups = _draws(b, uniforms, 8)
    for r, u in enumerate(uniforms):
        drawn = floyd_indices(u, A)
        want_order = b._slot_order(drawn)
        slotted = drawn[want_order]
        np.testing.assert_array_equal(order[r], want_order)
        np.testing.assert_array_equal(features[r], slotted)
        np.testing.assert_array_equal(slot_offset[r], b._slot_offset(slotted))
        np.testing.assert_array_equal(groups[r], b._group_offsets(slotted))
        G, offsets = groups[r, 0], groups[r, 1:groups[r, 0] + 2]
        assert offsets[0] == 0 and offsets[-1] == b._in_shared(slotted).sum()
        rows = np.diff(slot_offset[r][offsets])
        alone = np.diff(offsets) == 1
        assert (alone | (shared_histogram_bytes(rows, K) <= 48 * 1024)).all()
        assert list(groups[r, G + 2:]) == [offsets[-1]] * (4 - G) + [1, offsets[-1], 4]
    assert not features[5:].any() and not groups[5:].any()


def test_fused_search_tables_fit_a_block_beside_its_static_arrays():
    """``histogram_search.fused_layout``: a complete head of 20 labels (41 columns) keeps 128
    threads, 64 bins a tile; non-decomposable rows of 23 labels (300 columns) fit 32 threads'
    table, of 24 labels (325) none: their prefix sums are made in place. Every table and the
    2,576 bytes of static shared memory ptxas gives the kernels fit a block's 48 kB."""
    from gpurules.backends.cuda import histogram_search as hs

    assert hs.fused_layout(100_000, 41, 256) == (128, 1563)
    assert hs.fused_layout(20, 23 + 276 + 1, 32) == (32, 2)
    assert hs.fused_layout(20, 24 + 300 + 1, 32) is None
    for C in range(1, 400):
        layout = hs.fused_layout(5000, C, 256)
        if layout is not None:
            assert hs.table_bytes(layout[0], C) + 2576 <= 48 << 10, C
