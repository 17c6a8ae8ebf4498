"""Statistics on the CPU: compute, update, aggregate (Numba).

Per example ``i`` and label ``k`` the backend keeps the score ``P[i, k]`` (float64) and the
fixed-point gradient ``g[i, k]`` (int64, or int32 with ``statistic_type="32-bit"``:
``learners.boosting.statistic_dtype``), already multiplied by the example's base weight
(``sample_weight``). The Hessian ``h``, of the same dtype, is (n, K) for decomposable losses
(``h[i, k]``) and (n, K (K + 1) / 2) for non-decomposable ones (example ``i``'s packed Hessian,
``objectives.non_decomposable``); the ``*_nd`` functions compute those, and all ``K``
gradients and the whole Hessian of an example change when any of its scores does.
"""

import numba as nb
import numpy as np

from gpurules.jit.cache import njit
from gpurules.jit.rows import copy_row
from gpurules.jit.variants import parallel_kernel
from gpurules.objectives.compiled import (loss_gradient_hessian,
                                         loss_gradient_hessian_inlined_exp, quantize)
from gpurules.objectives.complete_head import is_prefix
from gpurules.objectives.losses import LOGISTIC
from gpurules.objectives.non_decomposable import gradient_hessian, largest_statistic


@nb.njit(inline="always")
def _quantized(gg, hh, base_weight, scale):
    """The fixed-point (int64) gradient and Hessian of one label, weighted."""
    return (np.int64(quantize(gg * base_weight, scale)),
            np.int64(quantize(hh * base_weight, scale)))


@nb.njit(inline="always")
def _encode(loss, y, score, base_weight, scale):
    gg, hh = loss_gradient_hessian(loss, y, score)
    return _quantized(gg, hh, base_weight, scale)


@nb.njit(inline="always")
def _encode_logistic(y, score, base_weight, scale):
    """``_encode(LOGISTIC, ...)`` with ``exp`` inlined: a loop of it vectorises."""
    gg, hh = loss_gradient_hessian_inlined_exp(LOGISTIC, y, score)
    return _quantized(gg, hh, base_weight, scale)


@njit
def compute_all(loss, Y, P, base_weight, scale, g, h):
    """Statistics of every (example, label) from the scores ``P``."""
    n, K = Y.shape
    for i in range(n):
        for k in range(K):
            g[i, k], h[i, k] = _encode(loss, Y[i, k], P[i, k], base_weight[i], scale)


@njit(error_model="numpy")
def _update_examples(loss, Y, P, base_weight, scale, g, h, mask, indicator, labels, scores,
                     start, stop, sum_g, sum_h):
    """:func:`_update_covered_py` for the examples ``start .. stop - 1``, their changes
    added to ``sum_g``, ``sum_h`` (int64 (K,)).

    The logistic loss with a head of every label in order (complete heads) takes three
    loops over each covered example's contiguous row, and the encoding's vectorises
    (``exp`` inlined and branch-free; ``error_model="numpy"``: no zero-division check, the
    loss's divisors are >= 1). Other losses and heads go label by label."""
    K = Y.shape[1]
    contiguous = loss == LOGISTIC and labels.shape[0] == K and is_prefix(labels)
    new_g = np.empty(K, np.int64)
    new_h = np.empty(K, np.int64)
    for i in range(start, stop):
        if mask[i] != indicator:
            continue
        if contiguous:
            for k in range(K):
                P[i, k] += scores[k]
            for k in range(K):
                new_g[k], new_h[k] = _encode_logistic(Y[i, k], P[i, k], base_weight[i], scale)
            for k in range(K):
                sum_g[k] += new_g[k] - g[i, k]
                sum_h[k] += new_h[k] - h[i, k]
                g[i, k] = new_g[k]
                h[i, k] = new_h[k]
        else:
            for idx in range(labels.shape[0]):
                k = labels[idx]
                P[i, k] += scores[idx]
                gk, hk = _encode(loss, Y[i, k], P[i, k], base_weight[i], scale)
                sum_g[k] += gk - g[i, k]
                sum_h[k] += hk - h[i, k]
                g[i, k] = gk
                h[i, k] = hk


def _update_covered_py(loss, Y, P, base_weight, scale, g, h, mask, indicator, labels, scores,
                       delta_g, delta_h):
    """Add ``scores`` to the covered examples' ``labels`` and re-encode their statistics.

    The changes of the statistics are summed into ``delta_g``, ``delta_h`` (int64 (C, K),
    overwritten): chunk ``c`` of the examples (:func:`_update_examples`) writes row ``c``,
    so the parallel variant needs no atomics and the row sums are exact."""
    n = Y.shape[0]
    chunks = delta_g.shape[0]
    for c in nb.prange(chunks):
        sum_g = np.zeros(delta_g.shape[1], np.int64)
        sum_h = np.zeros(delta_g.shape[1], np.int64)
        _update_examples(loss, Y, P, base_weight, scale, g, h, mask, indicator, labels, scores,
                         c * n // chunks, (c + 1) * n // chunks, sum_g, sum_h)
        copy_row(delta_g[c], sum_g)  # not delta_g[c] = sum_g: jit/rows.py
        copy_row(delta_h[c], sum_h)


update_covered = parallel_kernel(_update_covered_py)


@nb.njit(inline="always")
def _replace(values, weight, scale, stored, sums):
    """stored[k] <- quantize(values[k] * weight, scale) (int64), adding the change to sums[k]
    (``objectives.non_decomposable.encode``'s rounding, fused with the update: one pass)."""
    for k in range(stored.shape[0]):
        q = np.int64(quantize(values[k] * weight, scale))
        sums[k] += q - stored[k]
        stored[k] = q


@njit
def compute_all_nd(loss, Y, P, base_weight, scale, g, h):
    """Non-decomposable statistics of every example from the scores ``P``.

    Returns the largest |statistic| per unit weight (float64), for the fixed-point bound."""
    g_tmp = np.empty(g.shape[1])
    h_tmp = np.empty(h.shape[1])
    sum_g = np.zeros(g.shape[1], np.int64)  # unused: _replace's sums
    sum_h = np.zeros(h.shape[1], np.int64)
    largest = 0.0
    for i in range(Y.shape[0]):
        gradient_hessian(loss, Y[i], P[i], g_tmp, h_tmp)
        largest = max(largest, largest_statistic(loss, g_tmp, h_tmp))
        _replace(g_tmp, base_weight[i], scale, g[i], sum_g)
        _replace(h_tmp, base_weight[i], scale, h[i], sum_h)
    return largest


def _update_covered_nd_py(loss, Y, P, base_weight, scale, g, h, mask, indicator, labels,
                          scores, delta_g, delta_h, largest):
    """As :func:`_update_covered_py` for non-decomposable statistics: every gradient and
    Hessian entry of a covered example is re-encoded; ``delta_h`` is (C, W). ``largest``
    (float64 (C,)): chunk ``c``'s largest |statistic| per unit weight."""
    n = Y.shape[0]
    chunks = delta_g.shape[0]
    for c in nb.prange(chunks):
        sum_g = np.zeros(g.shape[1], np.int64)
        sum_h = np.zeros(h.shape[1], np.int64)
        g_tmp = np.empty(g.shape[1])
        h_tmp = np.empty(h.shape[1])
        big = 0.0
        for i in range(c * n // chunks, (c + 1) * n // chunks):
            if mask[i] != indicator:
                continue
            for idx in range(labels.shape[0]):
                P[i, labels[idx]] += scores[idx]
            gradient_hessian(loss, Y[i], P[i], g_tmp, h_tmp)
            big = max(big, largest_statistic(loss, g_tmp, h_tmp))
            _replace(g_tmp, base_weight[i], scale, g[i], sum_g)
            _replace(h_tmp, base_weight[i], scale, h[i], sum_h)
        copy_row(delta_g[c], sum_g)
        copy_row(delta_h[c], sum_h)
        largest[c] = big


update_covered_nd = parallel_kernel(_update_covered_nd_py)


@njit
def covered_totals(mask, indicator, weights, g, h):
    """Weighted sums over the covered examples: (g int64 (K,), h int64 (W,), count)."""
    tot_g = np.zeros(g.shape[1], np.int64)
    tot_h = np.zeros(h.shape[1], np.int64)
    count = 0
    for i in range(mask.shape[0]):
        w = weights[i]
        if mask[i] == indicator and w != 0:
            count += 1
            for k in range(g.shape[1]):
                tot_g[k] += w * g[i, k]
            for k in range(h.shape[1]):
                tot_h[k] += w * h[i, k]
    return tot_g, tot_h, count
