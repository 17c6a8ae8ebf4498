"""Non-decomposable (example-wise) losses of BOOMER: per example a gradient vector and a packed
symmetric Hessian.

For one example with labels ``y`` (uint8 (K,), 0/1) and scores ``p`` (float64 (K,)) the losses
are, with ``y'_k = 2 y_k - 1``:

* ``logistic-non-decomposable``: ``L = log(1 + sum_k exp(-y'_k p_k))``. With
  ``s_k = exp(-y'_k p_k) / (1 + sum_j exp(-y'_j p_j))`` (computed with the log-sum-exp shift
  ``m = max(0, max_k -y'_k p_k)``): ``g_k = -y'_k s_k``, ``H_kk = s_k (1 - s_k)``,
  ``H_kl = -y'_k y'_l s_k s_l = -g_k g_l``.
* ``squared-error-non-decomposable``: ``L = ||d||`` with ``d_k = p_k - y'_k``, ``S = ||d||^2``:
  ``g_k = d_k / sqrt(S)``, ``H_kk = (S - d_k^2) / S^1.5``, ``H_kl = -d_k d_l / S^1.5``.
* ``squared-hinge-non-decomposable``: ``L = ||d||`` with ``d_k = p_k - 1`` for a relevant label
  scored below 1, ``d_k = p_k`` for an irrelevant label scored above 0, else ``d_k = 0``
  (satisfied); ``g``, ``H`` as for the squared error except that a satisfied label gets
  ``g_k = 0``, ``H_kk = 1`` and ``H_kl = 0`` (mlrl-boomer's convention).
* regression's ``squared-error-non-decomposable`` (``REGRESSION_SQUARED_ERROR``, for
  ``BoomerRegressor``): as the squared error with ``d_k = p_k - y_k`` for real-valued
  targets ``y`` (float64 (K,)).

Any quotient with a zero denominator is 0 (mlrl-boomer's ``divideOrZero``), e.g. every
statistic of a squared-error example that is predicted exactly.

**Packing.** The Hessian is stored as the lower triangle row by row (``packed_index(i, j) =
i (i + 1) / 2 + j`` for ``j <= i``), which is the same memory order as LAPACK's column-major
*upper* packed storage that mlrl-boomer uses (``dspmv`` with ``uplo='U'``): ``K (K + 1) / 2``
values per example.

Every function here is ``register_jitable``: compiled for the CPU with ``numba.njit`` and for
the GPU with ``numba.cuda.jit(device=True)``, and none allocates (scratch is an argument).
"""

import math
from dataclasses import dataclass

import numpy as np

from gpurules.jit.helpers import register_jitable
from gpurules.objectives import fixed_point
from gpurules.objectives.exponential import exp_nonpositive

# loss codes (distinct from the decomposable codes 0..3 of ``losses`` so that one integer can
# select any loss in code that handles both, e.g. the example-wise binary predictor)
LOGISTIC = 10
SQUARED_ERROR = 11
SQUARED_HINGE = 12
# regression's squared error: ``y`` holds real-valued targets (float64), d_k = p_k - y_k
REGRESSION_SQUARED_ERROR = 13

_quantize = register_jitable(fixed_point.quantize)


@register_jitable
def packed_size(n):
    """Number of values of a packed symmetric n x n matrix: n (n + 1) / 2."""
    return n * (n + 1) // 2


@register_jitable
def packed_index(i, j):
    """Position of element (i, j) (either order) in a packed symmetric matrix."""
    if i < j:
        i, j = j, i
    return i * (i + 1) // 2 + j


@register_jitable
def divide_or_zero(a, b):
    """a / b, or 0 when b == 0."""
    if b == 0.0:
        return 0.0
    return a / b


@register_jitable
def _logistic_shift(y, p):
    """max(0, max_k -y'_k p_k): the log-sum-exp shift of the logistic loss."""
    m = 0.0
    for k in range(p.shape[0]):
        x = -p[k] if y[k] else p[k]
        if x > m:
            m = x
    return m


@register_jitable
def _logistic_sum(y, p, m):
    """exp(-m) + sum_k exp(-y'_k p_k - m) (>= 1 for the shift m of ``_logistic_shift``)."""
    z = exp_nonpositive(-m)
    for k in range(p.shape[0]):
        x = -p[k] if y[k] else p[k]
        z += exp_nonpositive(x - m)
    return z


@register_jitable
def _logistic_statistics(y, p, g, h):
    K = p.shape[0]
    m = _logistic_shift(y, p)
    z = exp_nonpositive(-m)  # _logistic_sum, keeping each exp(x_k - m) in g[k]
    for k in range(K):
        x = -p[k] if y[k] else p[k]
        g[k] = exp_nonpositive(x - m)
        z += g[k]
    for k in range(K):
        s = g[k] / z
        g[k] = -s if y[k] else s
    for i in range(K):
        row = i * (i + 1) // 2
        for j in range(i):
            h[row + j] = -g[i] * g[j]
        s = abs(g[i])
        h[row + i] = s * (1.0 - s)


@register_jitable
def _residual(loss, y, score):
    """d_k of the squared error (p - y'), the squared hinge (0 where satisfied) or the
    regression squared error (p - y, ``y`` a float64 target)."""
    if loss == REGRESSION_SQUARED_ERROR:
        return score - y
    if loss == SQUARED_ERROR:
        return score - 1.0 if y else score + 1.0
    if y:
        return score - 1.0 if score < 1.0 else 0.0
    return score if score > 0.0 else 0.0


@register_jitable
def _residual_statistics(loss, y, p, g, h):
    """Squared error / squared hinge statistics; ``g`` holds d_k until it is overwritten."""
    K = p.shape[0]
    total = 0.0
    for k in range(K):
        d = _residual(loss, y[k], p[k])
        g[k] = d
        total += d * d
    norm = math.sqrt(total)
    norm3 = total * norm
    for i in range(K):
        row = i * (i + 1) // 2
        di = g[i]
        hinge_satisfied = loss == SQUARED_HINGE and di == 0.0
        for j in range(i):
            h[row + j] = 0.0 if hinge_satisfied else divide_or_zero(-di * g[j], norm3)
        h[row + i] = 1.0 if hinge_satisfied else divide_or_zero(total - di * di, norm3)
    for k in range(K):
        g[k] = divide_or_zero(g[k], norm)


@register_jitable
def gradient_hessian(loss, y, p, g, h):
    """Gradient and packed Hessian of one example.

    Args:
        loss: int, ``LOGISTIC``, ``SQUARED_ERROR`` or ``SQUARED_HINGE``.
        y: uint8 (K,) labels (0/1); float64 (K,) targets for ``REGRESSION_SQUARED_ERROR``.
        p: float64 (K,) scores.
        g: float64 (K,) output, the gradient.
        h: float64 (K(K+1)/2,) output, the packed Hessian.
    """
    if loss == LOGISTIC:
        _logistic_statistics(y, p, g, h)
    else:
        _residual_statistics(loss, y, p, g, h)


@register_jitable
def largest_statistic(loss, g, h):
    """max(|g_k|, |H_kl|) of one example's float64 statistics (as :func:`gradient_hessian`
    writes them). For the logistic loss in O(K): |H_kl| = |g_k| |g_l| off the diagonal, whose
    largest value is the product of the two largest |g_k| (rounding is monotone), and the
    K diagonal entries; for the squared losses over all entries."""
    largest = 0.0
    if loss != LOGISTIC:
        for k in range(g.shape[0]):
            largest = max(largest, abs(g[k]))
        for k in range(h.shape[0]):
            largest = max(largest, abs(h[k]))
        return largest
    first = 0.0
    second = 0.0
    for k in range(g.shape[0]):
        a = abs(g[k])
        largest = max(largest, a, abs(h[k * (k + 1) // 2 + k]))
        if a > first:
            second = first
            first = a
        elif a > second:
            second = a
    return max(largest, first * second)


@register_jitable
def loss_value(loss, y, p):
    """The loss of one example (float64): log(1 + sum exp(-y'p)) or ||d|| (see the module)."""
    if loss == LOGISTIC:
        m = _logistic_shift(y, p)
        return m + math.log(_logistic_sum(y, p, m))
    total = 0.0
    for k in range(p.shape[0]):
        d = _residual(loss, y[k], p[k])
        total += d * d
    return math.sqrt(total)


@register_jitable
def encode(loss, y, p, weight, scale, g_tmp, h_tmp, g_out, h_out):
    """Fixed-point statistics of one example: ``quantize(statistic * weight, scale)``.

    Args:
        loss, y, p: as for :func:`gradient_hessian`.
        weight: float64, the example's weight.
        scale: float64, the power-of-two scale of ``fixed_point.choose_scale``.
        g_tmp, h_tmp: float64 (K,), (K(K+1)/2,) scratch.
        g_out, h_out: int64 (K,), (K(K+1)/2,) outputs.
    """
    gradient_hessian(loss, y, p, g_tmp, h_tmp)
    for k in range(g_out.shape[0]):
        g_out[k] = np.int64(_quantize(g_tmp[k] * weight, scale))
    for k in range(h_out.shape[0]):
        h_out[k] = np.int64(_quantize(h_tmp[k] * weight, scale))


def max_abs_statistic(g, h):
    """Largest |value| in the float64 statistics ``g`` and ``h`` (host side, any shapes)."""
    g = np.asarray(g)
    h = np.asarray(h)
    return float(max(np.abs(g).max(initial=0.0), np.abs(h).max(initial=0.0)))


@dataclass(frozen=True)
class NonDecomposableLossSpec:
    """Host-side description of a non-decomposable loss.

    Attributes:
        name: the mlrl-boomer value string.
        code: the integer code passed to compiled kernels.
        decision_threshold: output-wise, scores above it predict a relevant label
            (mlrl-boomer's ``getDefaultPrediction``).
        has_probabilities: whether scores map to probabilities (logistic function, chain rule).
    """

    name: str
    code: int
    decision_threshold: float
    has_probabilities: bool

    def statistic_bound(self, max_abs_score, observed=0.0):
        """Upper bound on |g_k| and |H_kl| per unit weight.

        The logistic loss is bounded a priori: |g_k| = s_k <= 1 and |H_kl| <= 1/4. For the
        squared error and squared hinge |g_k| <= 1 and a satisfied label's H_kk = 1, but the
        other Hessian entries grow like 1 / ||d||, which no bound on the scores limits (an
        example predicted almost exactly); callers pass the largest statistic they actually
        computed (``max_abs_statistic``) as ``observed`` and re-encode when it grows.
        ``max_abs_score`` is accepted for symmetry with ``LossSpec.statistic_bound``.
        """
        del max_abs_score
        if self.code == LOGISTIC:
            return 1.0
        return max(1.0, float(observed))


NON_DECOMPOSABLE_LOSSES = {
    "logistic-non-decomposable": NonDecomposableLossSpec(
        "logistic-non-decomposable", LOGISTIC, 0.0, True),
    "squared-error-non-decomposable": NonDecomposableLossSpec(
        "squared-error-non-decomposable", SQUARED_ERROR, 0.0, False),
    "squared-hinge-non-decomposable": NonDecomposableLossSpec(
        "squared-hinge-non-decomposable", SQUARED_HINGE, 0.5, False),
}

# BoomerRegressor's ``squared-error-non-decomposable``: L = ||p - y|| for real-valued targets
# y (mlrl-boomer 0.15.6 instead normalises by sqrt(sum_k p_k^2 - 2 y_k p_k + 1), which is
# ||p - y||^2 only for y_k = +-1 and can be negative for |y_k| > 1; docs/user-guide.md)
REGRESSION_SQUARED_ERROR_LOSS = NonDecomposableLossSpec(
    "squared-error-non-decomposable", REGRESSION_SQUARED_ERROR, 0.0, False)
