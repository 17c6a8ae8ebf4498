"""Decomposable (label-wise) losses of BOOMER: gradient and Hessian per (example, label).

Each loss is identified by a small integer code so that compiled kernels can branch on it
without Python objects. ``loss_gradient_hessian`` is the single definition of the math; the
CPU backend compiles it with ``numba.njit`` and the CUDA backend with
``numba.cuda.jit(device=True)``.

``exp`` is ``exponential.exp_nonpositive``, which gives the same bits on the CPU and the
GPU (the C library's and CUDA's ``exp`` may differ in the last bit).

Conventions follow mlrl-boomer 0.15:

* ``logistic-decomposable``: ``L = log(1 + exp(-y' p))`` with ``y' = 2y - 1``;
  ``g = -y' / (1 + exp(y' p))``, ``h = exp(y' p) / (1 + exp(y' p))^2``.
* ``squared-error-decomposable``: ``L = (y' - p)^2``; ``g = p - y'``, ``h = 1``.
* ``squared-hinge-decomposable``: ``L = max(0, 1 - p)^2`` for relevant labels and
  ``max(0, p)^2`` for irrelevant ones (targets 1 and 0); ``h = 1``.
* regression's ``squared-error-decomposable`` (``REGRESSION_SQUARED_ERROR``, the loss of
  ``BoomerRegressor``): ``y`` is a real-valued target (float64), ``L = (y - p)^2``;
  ``g = p - y``, ``h = 1`` (mlrl-boomer's ``updateGradientAndHessianRegression``). The
  kernels get a float64 ``Y`` only for this code, so Numba compiles that specialization
  only when a regressor is fitted.
"""

import dataclasses
from dataclasses import dataclass

import numpy as np

from gpurules.objectives import non_decomposable
from gpurules.objectives.exponential import exp_nonpositive

LOGISTIC = 0
SQUARED_ERROR = 1
SQUARED_HINGE = 2
REGRESSION_SQUARED_ERROR = 3


def loss_gradient_hessian(loss, y, score):
    """Gradient and Hessian of one label's loss.

    Args:
        loss: int, one of ``LOGISTIC``, ``SQUARED_ERROR``, ``SQUARED_HINGE``,
            ``REGRESSION_SQUARED_ERROR``.
        y: 0 or 1, the true label (uint8); for ``REGRESSION_SQUARED_ERROR`` the target
            (float64).
        score: float64, the predicted score.

    Returns:
        (g, h): float64 pair.
    """
    if loss == LOGISTIC:
        sign = 1.0 if y else -1.0
        z = sign * score
        # s = 1 / (1 + exp(z)) without overflow for large |z|: e / (1 + e) with
        # e = exp(-z) for z >= 0, 1 / (1 + e) with e = exp(z) below; without branches, so
        # that a loop of it vectorises (the CPU's statistics update)
        e = exp_nonpositive(-abs(z))
        s = (e if z >= 0.0 else 1.0) / (1.0 + e)
        return -sign * s, s * (1.0 - s)
    if loss == SQUARED_ERROR:
        target = 1.0 if y else -1.0
        return score - target, 1.0
    if loss == REGRESSION_SQUARED_ERROR:
        return score - y, 1.0
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
        target_bound: an upper bound on |y'| (the targets the scores are compared with):
            1 for classification, max |y| of the fit for regression (:func:`regression`).
    """

    name: str
    code: int
    decision_threshold: float
    has_probabilities: bool
    target_bound: float = 1.0

    def statistic_bound(self, max_abs_score):
        """Upper bound on |g| and h per unit weight when every |score| <= max_abs_score."""
        if self.code == LOGISTIC:
            return 1.0
        return max(1.0, max_abs_score + self.target_bound)


DECOMPOSABLE_LOSSES = {
    "logistic-decomposable": LossSpec("logistic-decomposable", LOGISTIC, 0.0, True),
    "squared-error-decomposable": LossSpec("squared-error-decomposable", SQUARED_ERROR, 0.0, False),
    "squared-hinge-decomposable": LossSpec("squared-hinge-decomposable", SQUARED_HINGE, 0.5, False),
}

REGRESSION_LOSSES = {
    "squared-error-decomposable": LossSpec("squared-error-decomposable",
                                           REGRESSION_SQUARED_ERROR, 0.0, False),
    "squared-error-non-decomposable": non_decomposable.REGRESSION_SQUARED_ERROR_LOSS,
}
"""BoomerRegressor's losses (mlrl-boomer's ``RegressionLossParameter``), by value string."""

REGRESSION_CODES = (REGRESSION_SQUARED_ERROR, non_decomposable.REGRESSION_SQUARED_ERROR)


def is_regression(loss):
    """Whether ``loss`` (a loss spec or None) compares the scores with real-valued targets."""
    return loss is not None and loss.code in REGRESSION_CODES


def target_matrix(loss, Y):
    """The targets the statistics kernels read, C-contiguous: float64 (n, K) for a regression
    ``loss`` (:func:`is_regression`), else the labels as uint8 (n, K) of 0/1."""
    return np.ascontiguousarray(Y, np.float64 if is_regression(loss) else np.uint8)


def regression(spec, Y):
    """The regression loss ``spec`` of a fit on the targets ``Y`` (float64 (n, K)): with
    ``target_bound = max |y|`` (>= 1), which bounds the decomposable statistics
    ``|g| = |p - y| <= max |p| + max |y|`` for the fixed-point scale (the non-decomposable
    loss bounds its statistics by those it computes)."""
    if not isinstance(spec, LossSpec):
        return spec
    bound = float(np.abs(Y).max(initial=0.0))
    return dataclasses.replace(spec, target_bound=max(1.0, bound))
