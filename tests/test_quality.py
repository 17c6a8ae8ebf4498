"""objectives.quality: the complete head's vectorised path equals the plain loop bit for bit."""

import numba as nb
import numpy as np
import pytest

from gpurules.objectives.heads import HEAD_COMPLETE, label_gain
from gpurules.objectives.quality import side_quality


@nb.njit(cache=False)
def _both(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, params, gains):
    plain = side_quality(run_g, run_h, tot_g, tot_h, complement, labels, HEAD_COMPLETE,
                         inv_scale, params)
    buffered = side_quality(run_g, run_h, tot_g, tot_h, complement, labels, HEAD_COMPLETE,
                            inv_scale, params, None, gains)
    return plain[0], buffered[0]


def _reference(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, l1, l2):
    g = (tot_g - run_g) if complement else run_g
    h = (tot_h - run_h) if complement else run_h
    total = 0.0
    for k in labels:  # label order, as the CUDA scan sums
        total += label_gain(g[k] * inv_scale, h[k] * inv_scale, l1, l2)
    return total


@pytest.mark.parametrize("K", [1, 3, 8, 14, 45, 159])
@pytest.mark.parametrize("l1, l2", [(0.0, 1.0), (0.5, 0.0), (2.0, 3.0)])
def test_complete_quality_with_gains_buffer_is_bit_identical(K, l1, l2):
    rng = np.random.default_rng(K)
    gains = np.empty(K)
    params = np.array([l1, l2])
    for _ in range(20):
        run_g = rng.integers(-2 ** 40, 2 ** 40, K)
        run_h = rng.integers(-2 ** 20, 2 ** 40, K)  # also H + l2 <= 0 and tiny |G|
        tot_g = run_g + rng.integers(-2 ** 40, 2 ** 40, K)
        tot_h = run_h + rng.integers(-2 ** 20, 2 ** 40, K)
        run_g[rng.random(K) < 0.2] = 0
        for complement in (False, True):
            want = _reference(run_g, run_h, tot_g, tot_h, complement, np.arange(K), 2.0 ** -30,
                              l1, l2)
            plain, buffered = _both(run_g, run_h, tot_g, tot_h, complement,
                                    np.arange(K, dtype=np.int32), 2.0 ** -30, params, gains)
            assert plain == want and buffered == want


def test_complete_quality_over_a_label_subset_ignores_the_buffer():
    rng = np.random.default_rng(0)
    K = 10
    run_g, run_h = rng.integers(-2 ** 30, 2 ** 30, K), rng.integers(0, 2 ** 30, K)
    tot_g, tot_h = run_g * 3, run_h * 3
    labels = np.array([1, 4, 7], np.int32)
    plain, buffered = _both(run_g, run_h, tot_g, tot_h, True, labels, 2.0 ** -20,
                            np.array([0.0, 1.0]), np.empty(K))
    assert plain == buffered == _reference(run_g, run_h, tot_g, tot_h, True, labels,
                                           2.0 ** -20, 0.0, 1.0)
