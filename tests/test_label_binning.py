"""Gradient-based label binning (``objectives.label_binning``) against a brute-force NumPy
reference (bin membership matrices + ``np.linalg.solve``) and a worked example computed by
hand.

The seed paper's Fig. 1 (Rapp et al. 2021) could not be retrieved here (the stored copies
of the paper have only its abstract), so ``test_worked_example`` is an equivalent example
whose bins, aggregated gradient and Hessian are written out by hand below.
"""

import numba as nb
import numpy as np
import pytest

from gpurules.objectives import label_binning as lb
from tests.reference import non_decomposable_reference as ref


@nb.njit
def _binned(g, h, packed, l1, l2, ratio, min_bins, max_bins):
    m = g.shape[0]
    crit = np.empty(m)
    bin_of = np.empty(m, np.int64)
    counts = np.empty(m)
    remap = np.empty(m, np.int64)
    g_bin = np.empty(m)
    h_bin = np.empty(m * (m + 1) // 2)
    scores = np.empty(m)
    gain, num_bins, zero = lb.binned_head(g, h, m, packed, l1, l2, ratio, min_bins, max_bins,
                                          crit, bin_of, counts, remap, g_bin, h_bin,
                                          np.empty(m * m), np.empty(m, np.int64), np.empty(m),
                                          scores)
    return scores, gain, num_bins, bin_of, counts[:num_bins].copy(), g_bin[:num_bins].copy(), \
        h_bin[:num_bins * (num_bins + 1) // 2].copy()


def _worked_example():
    """Six labels, l2 = 1, H_kk = 1, so c_k = -g_k / 2 = (1.0, 0.9, -0.5, 0, -1.5, 0.2)."""
    g = np.array([-2.0, -1.8, 1.0, 0.0, 3.0, -0.4])
    H = np.eye(6)
    for (i, j), v in {(0, 1): 0.5, (0, 2): 0.1, (2, 4): 0.2, (4, 5): -0.3, (0, 5): 0.25,
                      (1, 3): 0.7}.items():
        H[i, j] = H[j, i] = v
    return g, H


def test_worked_example():
    g, H = _worked_example()
    scores, gain, num_bins, bin_of, counts, g_bin, h_bin = _binned(
        g, ref.pack(H), True, 0.0, 1.0, 0.5, 1, 0)
    # negative criteria {-0.5 (label 2), -1.5 (label 4)}: ceil(0.5 * 2) = 1 bin -> bin 0;
    # positive {1.0, 0.9, 0.2}: ceil(0.5 * 3) = 2 bins of width (1.0 - 0.2) / 2 = 0.4:
    # 0.2 -> bin 1, 0.9 and 1.0 -> bin 2 (floor(1.75), floor(2) clipped); label 3 (c = 0) out
    assert num_bins == 3
    np.testing.assert_array_equal(bin_of, [2, 2, 0, -1, 0, 1])
    np.testing.assert_array_equal(counts, [2, 1, 2])
    # g~ = (g2 + g4, g5, g0 + g1)
    np.testing.assert_allclose(g_bin, [4.0, -0.4, -3.8])
    # H~ diagonal: H22 + H44, H55, H00 + H11 (H24 and H01 lie inside a bin: not added);
    # H~01 = H25 + H45 = -0.3, H~02 = H20 + H21 + H40 + H41 = 0.1, H~12 = H50 + H51 = 0.25;
    # H13 involves the zero label: not added
    Hb = np.array([[2.0, -0.3, 0.1], [-0.3, 1.0, 0.25], [0.1, 0.25, 2.0]])
    np.testing.assert_allclose(ref.unpack(h_bin, 3), Hb)
    # R = diag(l2 |B_b|) = diag(2, 1, 2); b = -g~
    A = Hb + np.diag([2.0, 1.0, 2.0])
    p = np.linalg.solve(A, -np.array([4.0, -0.4, -3.8]))
    np.testing.assert_allclose(scores, [p[2], p[2], p[0], 0.0, p[0], p[1]], rtol=1e-12)
    expected_gain = -(np.array([4.0, -0.4, -3.8]) @ p + 0.5 * p @ Hb @ p
                      + 0.5 * np.sum(np.array([2.0, 1.0, 2.0]) * p * p))
    assert gain == pytest.approx(expected_gain, rel=1e-12)


@pytest.mark.parametrize("l1,l2", [(0.0, 1.0), (0.0, 0.5), (0.2, 1.0)])
@pytest.mark.parametrize("ratio,min_bins,max_bins", [(0.04, 1, 0), (0.3, 2, 0), (0.5, 1, 3),
                                                     (0.9, 1, 0)])
def test_matches_brute_force_reference(l1, l2, ratio, min_bins, max_bins):
    rng = np.random.default_rng(int(ratio * 100) + min_bins)
    for m in (1, 2, 7, 30):
        for _ in range(6):
            g = rng.normal(size=m)
            g[rng.random(m) < 0.1] = 0.0            # some zero criteria
            M = rng.normal(size=(m, m))
            H = M @ M.T / m + 0.1 * np.eye(m)
            scores, gain, num_bins, bin_of, *_ = _binned(g, ref.pack(H), True, l1, l2, ratio,
                                                         min_bins, max_bins)
            p_ref, gain_ref, bins_ref = ref.gblb_head(g, H, l1, l2, ratio, min_bins, max_bins)
            np.testing.assert_array_equal(bin_of, bins_ref)
            np.testing.assert_allclose(scores, p_ref, rtol=1e-9, atol=1e-12)
            assert gain == pytest.approx(gain_ref, rel=1e-9, abs=1e-12)


def _pair_loop_aggregate(g, h, bin_of, num_bins):
    """The plain pair loop in Python floats (float64): per (i, j < i) of different bins,
    ``H~[b_i, b_j] += H[i, j]``, i then j ascending; diagonals from H's diagonal."""
    m = g.shape[0]
    g_bin, H_bin = [0.0] * num_bins, [[0.0] * num_bins for _ in range(num_bins)]
    for i in range(m):
        if bin_of[i] >= 0:
            g_bin[bin_of[i]] += float(g[i])
            H_bin[bin_of[i]][bin_of[i]] += float(h[i * (i + 1) // 2 + i])
    for i in range(m):
        for j in range(i):
            bi, bj = bin_of[i], bin_of[j]
            if bi >= 0 and bj >= 0 and bi != bj:
                H_bin[max(bi, bj)][min(bi, bj)] += float(h[i * (i + 1) // 2 + j])
    packed = [H_bin[i][j] for i in range(num_bins) for j in range(i + 1)]
    return np.array(g_bin), np.array(packed)


@pytest.mark.parametrize("m,ratio", [(2, 0.5), (9, 0.3), (53, 0.04), (53, 0.2), (40, 1.0)])
def test_bins_are_summed_in_the_pair_loops_order(m, ratio):
    """aggregate_bins keeps each bin pair's sum in a register, row by row: bit for bit the
    plain pair loop's sums (whose order of additions it keeps), with outputs out of the bins
    (zero criteria) and bins of one output."""
    rng = np.random.default_rng(m)
    for _ in range(5):
        g = rng.normal(size=m)
        g[rng.random(m) < 0.15] = 0.0
        h = rng.normal(size=m * (m + 1) // 2) * 10.0 ** rng.integers(-3, 4, m * (m + 1) // 2)
        *_, num_bins, bin_of, _, g_bin, h_bin = _binned(g, h, True, 0.0, 1.0, ratio, 1, 0)
        g_ref, h_ref = _pair_loop_aggregate(g, h, bin_of, num_bins)
        np.testing.assert_array_equal(g_bin, g_ref)
        np.testing.assert_array_equal(h_bin, h_ref)


def test_decomposable_statistics_bin_with_a_diagonal_hessian():
    rng = np.random.default_rng(3)
    g = rng.normal(size=12)
    h = rng.random(12) + 0.1
    scores, gain, *_ = _binned(g, h, False, 0.0, 1.0, 0.25, 1, 0)
    p_ref, gain_ref, _ = ref.gblb_head(g, np.diag(h), 0.0, 1.0, 0.25, 1, 0)
    np.testing.assert_allclose(scores, p_ref, rtol=1e-12)
    assert gain == pytest.approx(gain_ref, rel=1e-12)


def test_one_bin_per_label_equals_the_complete_head_of_a_diagonal_hessian():
    """Bins that hold one label each drop nothing: GBLB is then the complete head."""
    g = np.array([-3.0, -1.0, 2.0, 4.0])
    H = np.diag([1.0, 2.0, 1.5, 0.5])
    H[0, 3] = H[3, 0] = 0.2
    scores, gain, num_bins, _, counts, *_ = _binned(g, ref.pack(H), True, 0.0, 1.0, 0.99, 1, 0)
    assert num_bins == 4 and (counts == 1).all()
    p_ref, gain_ref = ref.complete_head(g, H, 0.0, 1.0)
    np.testing.assert_allclose(scores, p_ref, rtol=1e-12)
    assert gain == pytest.approx(gain_ref)


def test_all_zero_gradients_give_no_bins_and_zero_scores():
    scores, gain, num_bins, bin_of, *_ = _binned(np.zeros(5), ref.pack(np.eye(5)), True,
                                                 0.0, 1.0, 0.04, 1, 0)
    assert num_bins == 0 and gain == 0.0
    np.testing.assert_array_equal(scores, 0.0)
    np.testing.assert_array_equal(bin_of, -1)


def test_equal_criteria_share_the_first_bin():
    g = np.full(6, -1.0)
    scores, gain, num_bins, bin_of, counts, g_bin, _ = _binned(g, ref.pack(np.eye(6)), True,
                                                              0.0, 1.0, 0.5, 1, 0)
    assert num_bins == 1 and counts[0] == 6 and g_bin[0] == -6.0
    np.testing.assert_allclose(scores, 6.0 / (6.0 + 6.0))


def test_negative_and_positive_criteria_never_share_a_bin():
    rng = np.random.default_rng(4)
    for _ in range(50):
        g = rng.normal(size=20)
        _, _, _, bin_of, *_ = _binned(g, ref.pack(np.eye(20)), True, 0.0, 1.0, 0.04, 1, 0)
        assert not set(bin_of[g > 0]) & set(bin_of[g < 0])


def test_workspace_sizes():
    ws = lb.workspace(5)
    assert ws["a"].shape == (25,) and ws["h_bin"].shape == (15,) and ws["ipiv"].dtype == np.int64
