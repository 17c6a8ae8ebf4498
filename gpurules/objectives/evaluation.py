"""The loss of individual examples, as mlrl-boomer's ``evaluatePrediction`` measures it.

Global pruning (``learners.pruning``) compares models by the mean of these values over the
holdout (or training) examples. Decomposable losses average the label-wise loss over the K
labels; non-decomposable losses are the example-wise loss itself (``non_decomposable``):

* ``logistic-decomposable``: ``log(1 + exp(-y' p))``; ``squared-error-decomposable``:
  ``(y' - p)^2``; ``squared-hinge-decomposable``: ``(1 - p)^2`` if ``y = 1`` and ``p < 1``,
  ``p^2`` if ``y = 0`` and ``p > 0``, else 0 (``y' = 2y - 1``);
* ``logistic-non-decomposable``: ``log(1 + sum_k exp(-y'_k p_k))``;
  ``squared-*-non-decomposable``: the Euclidean norm of the residuals;
* the regression losses of ``BoomerRegressor``: the same with the residuals ``p - y`` of
  real-valued targets ``y``.
"""

import numpy as np

from gpurules.objectives import losses, non_decomposable
from gpurules.objectives.non_decomposable import NonDecomposableLossSpec


def _residuals(code, Y, P):
    """Residuals float64 (m, K) of the squared error (p - y'), squared hinge or regression
    squared error (p - y) losses."""
    if code in losses.REGRESSION_CODES:
        return P - Y
    if code in (losses.SQUARED_ERROR, non_decomposable.SQUARED_ERROR):
        return P - np.where(Y, 1.0, -1.0)
    return np.where(Y, np.minimum(P - 1.0, 0.0), np.maximum(P, 0.0))


def example_losses(loss, Y, P):
    """The loss of each example.

    Args:
        loss: a ``LossSpec`` or ``NonDecomposableLossSpec``.
        Y: uint8 (m, K) of 0/1 labels (float64 targets for a regression loss); P: float64
            (m, K) predicted scores.

    Returns:
        float64 (m,).
    """
    Y = np.asarray(Y, np.float64 if losses.is_regression(loss) else bool)
    P = np.asarray(P, np.float64)
    if loss.code in (losses.LOGISTIC, non_decomposable.LOGISTIC):
        x = np.where(Y, -P, P)  # -y' p
        if not isinstance(loss, NonDecomposableLossSpec):
            return np.logaddexp(0.0, x).mean(axis=1)
        shift = np.maximum(x.max(axis=1, initial=0.0), 0.0)
        return shift + np.log(np.exp(-shift) + np.exp(x - shift[:, None]).sum(axis=1))
    d = _residuals(loss.code, Y, P)
    if isinstance(loss, NonDecomposableLossSpec):
        return np.sqrt((d * d).sum(axis=1))
    return (d * d).mean(axis=1)
