"""Decomposable (label-wise) losses of BOOMER: gradient and Hessian per (example, label).

Each loss is identified by a small integer code so that compiled kernels can branch on it
without Python objects. ``loss_gradient_hessian`` is the single definition of the math; the
CPU backend compiles it with ``numba.njit`` and the CUDA backend with
``numba.cuda.jit(device=True)``.

Conventions follow mlrl-boomer 0.15:

* ``logistic-decomposable``: ``L = log(1 + exp(-y' p))`` with ``y' = 2y - 1``;
  ``g = -y' / (1 + exp(y' p))``, ``h = exp(y' p) / (1 + exp(y' p))^2``.
* ``squared-error-decomposable``: ``L = (y' - p)^2``; ``g = p - y'``, ``h = 1``.
* ``squared-hinge-decomposable``: ``L = max(0, 1 - p)^2`` for relevant labels and
  ``max(0, p)^2`` for irrelevant ones (targets 1 and 0); ``h = 1``.
"""

import math
from dataclasses import dataclass

LOGISTIC = 0
SQUARED_ERROR = 1
SQUARED_HINGE = 2


def loss_gradient_hessian(loss, y, score):
    """Gradient and Hessian of one label's loss.

    Args:
        loss: int, one of ``LOGISTIC``, ``SQUARED_ERROR``, ``SQUARED_HINGE``.
        y: 0 or 1, the true label.
        score: float64, the predicted score.

    Returns:
        (g, h): float64 pair.
    """
    if loss == LOGISTIC:
        sign = 1.0 if y else -1.0
        z = sign * score
        # s = 1 / (1 + exp(z)), computed without overflow for large |z|
        if z >= 0.0:
            e = math.exp(-z)
            s = e / (1.0 + e)
        else:
            s = 1.0 / (1.0 + math.exp(z))
        return -sign * s, s * (1.0 - s)
    if loss == SQUARED_ERROR:
        target = 1.0 if y else -1.0
        return score - target, 1.0
    # squared hinge
    if y:
        g = score - 1.0 if score < 1.0 else 0.0
    else:
        g = score if score > 0.0 else 0.0
    return g, 1.0


@dataclass(frozen=True)
class LossSpec:
    """Host-side description of a decomposable loss.

    Attributes:
        name: the mlrl-boomer value string.
        code: the integer code passed to compiled kernels.
        decision_threshold: scores above it predict a relevant label.
        has_probabilities: whether scores map to marginal probabilities (sigmoid).
    """

    name: str
    code: int
    decision_threshold: float
    has_probabilities: bool

    def statistic_bound(self, max_abs_score):
        """Upper bound on |g| and h per unit weight when every |score| <= max_abs_score."""
        if self.code == LOGISTIC:
            return 1.0
        return max(1.0, max_abs_score + 1.0)


DECOMPOSABLE_LOSSES = {
    "logistic-decomposable": LossSpec("logistic-decomposable", LOGISTIC, 0.0, True),
    "squared-error-decomposable": LossSpec("squared-error-decomposable", SQUARED_ERROR, 0.0, False),
    "squared-hinge-decomposable": LossSpec("squared-hinge-decomposable", SQUARED_HINGE, 0.5, False),
}
