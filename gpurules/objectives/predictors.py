"""Turning predicted scores into labels and probabilities, and mlrl-boomer 0.15.6's ``auto``
rules for the prediction and head parameters.

Binary predictors:

* ``output-wise``: label k is relevant where ``score_k > threshold`` (the loss's
  ``decision_threshold``: 0, or 0.5 for the squared hinge losses).
* ``example-wise``: the label vector of the training data that is closest to the scores.
  mlrl-boomer (``IDistanceMeasure::getClosestLabelVector``) measures the distance with the
  training loss itself: the example's loss for a non-decomposable loss, the mean of the
  per-label losses for a decomposable one (``based_on_probabilities=false``, the default).
  Ties go to the more frequent label vector, then to the one seen first.

Probability predictors (logistic losses only; the squared losses define no probabilities):

* ``output-wise``: the logistic function of each score.
* ``marginalized``: joint probabilities of the training label vectors by the chain rule
  (``prod_k sigma(p_k)^y_k (1 - sigma(p_k))^(1 - y_k)``), normalised to sum to one, then
  summed per label over the vectors in which it is relevant. Computed in log space: where
  mlrl-boomer's product underflows for every vector it returns zeros, this returns the
  normalised values.
"""

import math

import numpy as np
from numba.extending import register_jitable

from gpurules.objectives.losses import DECOMPOSABLE_LOSSES
from gpurules.objectives.non_decomposable import (
    LOGISTIC, NON_DECOMPOSABLE_LOSSES, SQUARED_ERROR, SQUARED_HINGE, loss_value)

_DECOMPOSABLE_LOGISTIC = 0
_DECOMPOSABLE_SQUARED_ERROR = 1


@register_jitable
def _log1p_exp(x):
    """log(1 + exp(x)) without overflow."""
    if x > 0.0:
        return x + math.log1p(math.exp(-x))
    return math.log1p(math.exp(x))


@register_jitable
def label_loss(loss, y, score):
    """Per-label loss of the decomposable losses (codes of ``objectives.losses``)."""
    if loss == _DECOMPOSABLE_LOGISTIC:
        return _log1p_exp(-score if y else score)
    if loss == _DECOMPOSABLE_SQUARED_ERROR:
        d = score - 1.0 if y else score + 1.0
        return d * d
    if y:
        d = 1.0 - score if score < 1.0 else 0.0
    else:
        d = score if score > 0.0 else 0.0
    return d * d


@register_jitable
def example_distance(loss, y, p):
    """Distance of label vector ``y`` (uint8 (K,)) to scores ``p``: the loss of code ``loss``
    (non-decomposable: the example's loss; decomposable: the mean per-label loss)."""
    if loss == LOGISTIC or loss == SQUARED_ERROR or loss == SQUARED_HINGE:
        return loss_value(loss, y, p)
    total = 0.0
    for k in range(p.shape[0]):
        total += label_loss(loss, y[k], p[k])
    return total / p.shape[0] if p.shape[0] > 0 else 0.0


@register_jitable
def closest_label_vector(loss, p, vectors, counts):
    """Index of the row of ``vectors`` (uint8 (U, K)) closest to ``p`` (ties: larger count
    (int (U,)), then lower index)."""
    best = 0
    best_distance = example_distance(loss, vectors[0], p)
    for u in range(1, vectors.shape[0]):
        d = example_distance(loss, vectors[u], p)
        if d < best_distance or (d == best_distance and counts[u] > counts[best]):
            best = u
            best_distance = d
    return best


@register_jitable
def predict_example_wise(scores, vectors, counts, loss, out):
    """out[i] = the closest training label vector to scores[i] (float64 (n, K) -> uint8)."""
    for i in range(scores.shape[0]):
        u = closest_label_vector(loss, scores[i], vectors, counts)
        for k in range(scores.shape[1]):
            out[i, k] = vectors[u, k]


@register_jitable
def _log_sigmoid(x):
    return -_log1p_exp(-x)


@register_jitable
def predict_marginalized(scores, vectors, log_joint, out):
    """Marginal probabilities (float64 (n, K)) from joint probabilities of ``vectors``.

    ``log_joint``: float64 (U,) scratch.
    """
    U = vectors.shape[0]
    for i in range(scores.shape[0]):
        top = -np.inf
        for u in range(U):
            s = 0.0
            for k in range(scores.shape[1]):
                x = scores[i, k]
                s += _log_sigmoid(x) if vectors[u, k] else _log_sigmoid(-x)
            log_joint[u] = s
            top = max(top, s)
        total = 0.0
        for u in range(U):
            log_joint[u] = math.exp(log_joint[u] - top) if top > -np.inf else 0.0
            total += log_joint[u]
        for k in range(scores.shape[1]):
            out[i, k] = 0.0
        for u in range(U):
            w = log_joint[u] / total if total > 0.0 else 0.0
            for k in range(scores.shape[1]):
                if vectors[u, k]:
                    out[i, k] += w


def unique_label_vectors(Y):
    """The distinct rows of ``Y`` (uint8 (n, K)) in order of first appearance and their
    counts: (uint8 (U, K), int64 (U,))."""
    Y = np.ascontiguousarray(Y, dtype=np.uint8)
    if Y.shape[0] == 0:
        raise ValueError("unique_label_vectors needs at least one example")
    rows, first, counts = np.unique(Y, axis=0, return_index=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    return np.ascontiguousarray(rows[order]), counts[order].astype(np.int64)


# -- mlrl-boomer 0.15.6's ``auto`` rules ----------------------------------------------------
def is_non_decomposable(loss_name):
    """Whether ``loss_name`` is one of the non-decomposable losses."""
    return loss_name in NON_DECOMPOSABLE_LOSSES


def resolve_head_type(head_type, loss_name):
    """``auto`` -> ``complete`` for every non-decomposable loss and for
    ``logistic-decomposable``, ``single`` for the other decomposable losses (the rule
    ``estimators/boomer_params.py`` applies; mlrl-boomer's ``AutomaticHeadConfig`` picks
    single-output heads for its sparse decomposable losses); other values pass through."""
    if head_type != "auto":
        return head_type
    if is_non_decomposable(loss_name) or loss_name == "logistic-decomposable":
        return "complete"
    return "single"


def resolve_label_binning(label_binning, loss_name, head_type):
    """``auto`` -> ``equal-width`` for non-decomposable losses with complete or partial
    heads (``AutomaticLabelBinningConfig`` uses equal-width bins for every example-wise
    rule evaluation), ``none`` otherwise; other values pass through."""
    if label_binning != "auto":
        return label_binning
    head = resolve_head_type(head_type, loss_name)
    if is_non_decomposable(loss_name) and head != "single":
        return "equal-width"
    return "none"


def resolve_binary_predictor(binary_predictor, loss_name):
    """``auto`` -> ``example-wise`` for non-decomposable losses, ``output-wise`` otherwise
    (``AutomaticBinaryPredictorConfig``)."""
    if binary_predictor != "auto":
        return binary_predictor
    return "example-wise" if is_non_decomposable(loss_name) else "output-wise"


def marginal_probabilities(scores):
    """The output-wise probability predictor: the logistic function of float64 scores
    (any shape, e.g. (n, K)), without overflow (tanh form), as float64 of the same shape."""
    return 0.5 * (1.0 + np.tanh(0.5 * scores))


def has_probabilities(loss_name):
    """Whether the loss ``loss_name`` defines probabilities (its spec's
    ``has_probabilities``: the logistic losses); False for an unknown name."""
    spec = DECOMPOSABLE_LOSSES.get(loss_name) or NON_DECOMPOSABLE_LOSSES.get(loss_name)
    return spec is not None and spec.has_probabilities


def resolve_probability_predictor(probability_predictor, loss_name):
    """``auto`` -> ``marginalized`` for non-decomposable losses, ``output-wise`` otherwise
    (``AutomaticProbabilityPredictorConfig``). Raises ValueError for a loss without
    probabilities (the squared error and squared hinge losses)."""
    if not has_probabilities(loss_name):
        raise ValueError(f"loss {loss_name!r} does not predict probabilities; use "
                         "'logistic-decomposable' or 'logistic-non-decomposable'")
    if probability_predictor != "auto":
        return probability_predictor
    return "marginalized" if is_non_decomposable(loss_name) else "output-wise"
