"""The CPU statistics update (``backends/cpu/statistics.py``): a head of every label in
order takes contiguous, vectorised loops; any other head goes label by label. Both must
give the same scores, statistics and sums, bit for bit (the CUDA kernel's equality with
the CPU is ``tests/test_cuda_simulator.py``'s)."""

import numpy as np
import pytest

from gpurules.backends.cpu import statistics
from gpurules.objectives.losses import DECOMPOSABLE_LOSSES

SCALE = 2.0 ** 44


def _problem(loss_code, n=120, K=13, seed=0):
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, K)) < 0.3).astype(np.uint8)
    P = rng.normal(size=(n, K)) * 20.0
    P[0, :6] = [800.0, -800.0, 0.0, -0.0, 745.5, -745.5]  # exp's zero range and its edge
    base_weight = rng.integers(0, 3, n).astype(np.float64)
    g, h = np.zeros((n, K), np.int64), np.zeros((n, K), np.int64)
    statistics.compute_all(loss_code, Y, P, base_weight, SCALE, g, h)
    mask = (rng.random(n) < 0.6).astype(np.int32) * 7
    mask[0] = 7
    return Y, P, base_weight, g, h, mask


def _update(loss_code, problem, labels, scores, chunks):
    Y, P, base_weight, g, h, mask = (a.copy() for a in problem)
    delta_g = np.full((chunks, Y.shape[1]), -1, np.int64)  # overwritten, not added to
    delta_h = np.full((chunks, Y.shape[1]), -1, np.int64)
    statistics.update_covered.form(False)(
        loss_code, Y, P, base_weight, SCALE, g, h, mask, 7, np.asarray(labels, np.int32),
        np.asarray(scores, np.float64), delta_g, delta_h)
    return P, g, h, delta_g.sum(0), delta_h.sum(0)


@pytest.mark.parametrize("loss", sorted(DECOMPOSABLE_LOSSES))
@pytest.mark.parametrize("chunks", [1, 3])
def test_every_label_equals_label_by_label(loss, chunks):
    code = DECOMPOSABLE_LOSSES[loss].code
    problem = _problem(code)
    K = problem[0].shape[1]
    scores = np.random.default_rng(1).normal(size=K) * 3.0
    order = np.arange(K)[::-1]  # the same head, not in order: label by label
    every = _update(code, problem, np.arange(K), scores, chunks)
    by_label = _update(code, problem, order, scores[order], chunks)
    for name, a, b in zip(("P", "g", "h", "delta_g", "delta_h"), every, by_label):
        np.testing.assert_array_equal(a, b, err_msg=name)
    P, g, h, delta_g, delta_h = every
    np.testing.assert_array_equal(delta_g, (g - problem[3]).sum(0))  # the sums' changes
    np.testing.assert_array_equal(delta_h, (h - problem[4]).sum(0))
    covered = problem[5] == 7
    assert np.array_equal(P[covered], problem[1][covered] + scores)
    assert np.array_equal(P[~covered], problem[1][~covered])
