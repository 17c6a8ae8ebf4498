"""Statistics of decomposable losses on the CPU: compute, update, aggregate (Numba).

Per example ``i`` and label ``k`` the backend keeps the score ``P[i, k]`` (float64) and the
fixed-point gradient ``g[i, k]`` and Hessian ``h[i, k]`` (int64), already multiplied by the
example's base weight (``sample_weight``).
"""

import numba as nb
import numpy as np

from gpurules.backends.cpu.kernels import loss_gradient_hessian, quantize


@nb.njit(inline="always")
def _encode(loss, y, score, base_weight, scale):
    gg, hh = loss_gradient_hessian(loss, y, score)
    return (np.int64(quantize(gg * base_weight, scale)),
            np.int64(quantize(hh * base_weight, scale)))


@nb.njit(cache=True)
def compute_all(loss, Y, P, base_weight, scale, g, h):
    """Statistics of every (example, label) from the scores ``P``."""
    n, K = Y.shape
    for i in range(n):
        for k in range(K):
            g[i, k], h[i, k] = _encode(loss, Y[i, k], P[i, k], base_weight[i], scale)


def _update_covered_py(loss, Y, P, base_weight, scale, g, h, mask, indicator, labels, scores,
                       delta_g, delta_h):
    """Add ``scores`` to the covered examples' ``labels`` and re-encode their statistics.

    The changes of the statistics are summed into ``delta_g``, ``delta_h`` (int64 (C, K),
    zeroed by the caller): chunk ``c`` of the examples writes row ``c``, so the parallel
    variant needs no atomics and the row sums are exact."""
    n = Y.shape[0]
    chunks = delta_g.shape[0]
    for c in nb.prange(chunks):
        sum_g = np.zeros(delta_g.shape[1], np.int64)
        sum_h = np.zeros(delta_g.shape[1], np.int64)
        for i in range(c * n // chunks, (c + 1) * n // chunks):
            if mask[i] == indicator:
                for idx in range(labels.shape[0]):
                    k = labels[idx]
                    P[i, k] += scores[idx]
                    new_g, new_h = _encode(loss, Y[i, k], P[i, k], base_weight[i], scale)
                    sum_g[k] += new_g - g[i, k]
                    sum_h[k] += new_h - h[i, k]
                    g[i, k] = new_g
                    h[i, k] = new_h
        delta_g[c] = sum_g
        delta_h[c] = sum_h


update_covered_serial = nb.njit(cache=True)(_update_covered_py)
update_covered_parallel = nb.njit(cache=True, parallel=True)(_update_covered_py)


@nb.njit(cache=True)
def covered_totals(mask, indicator, weights, g, h):
    """Weighted sums over the covered examples: (g int64 (K,), h int64 (K,), count)."""
    K = g.shape[1]
    tot_g = np.zeros(K, np.int64)
    tot_h = np.zeros(K, np.int64)
    count = 0
    for i in range(mask.shape[0]):
        w = weights[i]
        if mask[i] == indicator and w != 0:
            count += 1
            for k in range(K):
                tot_g[k] += w * g[i, k]
                tot_h[k] += w * h[i, k]
    return tot_g, tot_h, count
