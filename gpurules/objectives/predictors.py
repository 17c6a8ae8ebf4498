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
from typing import NamedTuple

import numpy as np

from gpurules.jit.helpers import register_jitable
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
def log_joint_probabilities(log_p, log_q, vectors, out):
    """out[i, u] = log of the chain-rule joint probability of label vector ``vectors[u]``
    (uint8 (U, K)): ``sum_k log_p[i, k]`` over its relevant labels plus ``log_q[i, k]`` over
    the others; ``log_p``, ``log_q``: float64 (n, K), the logs of the marginal probabilities
    and of their complements (-inf allowed); ``out``: float64 (n, U)."""
    for i in range(log_p.shape[0]):
        for u in range(vectors.shape[0]):
            s = 0.0
            for k in range(log_p.shape[1]):
                s += log_p[i, k] if vectors[u, k] else log_q[i, k]
            out[i, u] = s


def log_marginals(scores, calibration=None):
    """(log p, log (1 - p)): float64 (n, K) each, of the marginal probabilities p of
    ``scores`` (float64 (n, K)): the logistic function, then ``calibration`` (an
    ``objectives.calibration.IsotonicCalibration`` over the K outputs) if given. Without
    calibration both come from the scores (no rounding of p near 0 or 1)."""
    if calibration is None:
        return -np.logaddexp(0.0, -scores), -np.logaddexp(0.0, scores)
    p = calibration.apply(marginal_probabilities(scores))
    with np.errstate(divide="ignore"):
        return np.log(p), np.log1p(-p)


def normalize_joint(log_joint, calibration=None):
    """Joint probabilities float64 (n, U) of the known label vectors from their logs
    ``log_joint`` (n, U), normalised to sum to one per example (zeros where all are zero).

    Without ``calibration`` (an ``IsotonicCalibration`` with one list per label vector) the
    normalisation is done in log space, so it survives where every product underflows
    (mlrl-boomer returns zeros there). With it, each joint probability is calibrated by its
    label vector's list before the normalisation, as mlrl-boomer's ``ChainRule``."""
    if calibration is None:
        top = log_joint.max(axis=1, keepdims=True)
        finite = np.isfinite(top)
        joint = np.exp(log_joint - np.where(finite, top, 0.0))
    else:
        joint = calibration.apply(np.exp(log_joint))
    total = joint.sum(axis=1, keepdims=True)
    return np.divide(joint, total, out=np.zeros_like(joint), where=total > 0.0)


TIE_RTOL = 1e-12  # joint probabilities this close to the largest tie (most_probable_vectors)


def most_probable_vectors(joint, vectors, counts):
    """The example-wise binary predictor based on probabilities: per example the known label
    vector of largest joint probability (mlrl-boomer: of smallest distance 1 - p), ties to
    the more frequent training vector, then to the first of ``vectors``. Probabilities
    within a relative ``TIE_RTOL`` of the largest tie: vectors whose labels have equal
    scores get products of the same factors in another order, equal but for rounding
    (common after few rules), and the frequency, not the rounding, should decide.

    Args:
        joint: float64 (n, U), the joint probabilities of the label vectors (any positive
            scale per example: normalising does not change the choice).
        vectors: uint8 (U, K) the training label vectors; counts: int (U,) their frequencies.

    Returns:
        uint8 (n, K)."""
    tied = joint >= joint.max(axis=1, keepdims=True) * (1.0 - TIE_RTOL)
    chosen = np.argmax(np.where(tied, np.asarray(counts, np.int64)[None, :], -1), axis=1)
    return np.ascontiguousarray(vectors[chosen], np.uint8)


def marginalized(joint, vectors):
    """The marginalized probability predictor: float64 (n, K), the sum of the joint
    probabilities ``joint`` (float64 (n, U)) of the label vectors (uint8 (U, K)) in which
    each label is relevant."""
    return joint @ vectors.astype(np.float64)


def _gfm_tables(vectors):
    """The label vectors' tables of :func:`predict_gfm` for uint8 (U, K) ``vectors``:
    (float64 (U, K * S): entry (u, k * S + s - 1) is 1 where label k is relevant in vector
    u of s relevant labels; bool (U,): the empty vectors; float64 (S, K): entry
    (s - 1, k - 1) is 2 / (s + k)), S the largest number of relevant labels (at least 1)."""
    U, K = vectors.shape
    sizes = vectors.sum(axis=1, dtype=np.int64)
    S = max(int(sizes.max(initial=0)), 1)
    by_size = np.zeros((U, S))
    nonempty = sizes > 0
    by_size[nonempty, sizes[nonempty] - 1] = 1.0
    table = (vectors[:, :, None] * by_size[:, None, :]).reshape(U, K * S)
    weights = 2.0 / (np.arange(1, S + 1)[:, None] + np.arange(1, K + 1)[None, :])
    return table, ~nonempty, weights


def _gfm_rows(joint, table, empty, weights, out):
    """:func:`predict_gfm` for one block of examples: ``joint`` float64 (m, U), the
    tables of :func:`_gfm_tables`, ``out`` uint8 (m, K) of zeros, set in place."""
    m, K = out.shape
    by_size = (joint @ table).reshape(m, K, -1)  # P(label k relevant, s relevant labels)
    gain = by_size @ weights  # (m, label, k): label's part of E[F] of a k-label prediction
    order = np.argsort(-gain, axis=1, kind="stable")  # ties: the lower label first
    top = np.cumsum(np.take_along_axis(gain, order, axis=1), axis=1)
    quality = np.concatenate((joint[:, empty].sum(axis=1)[:, None],
                              top[:, np.arange(K), np.arange(K)]), axis=1)
    size = np.argmax(quality, axis=1)  # the first maximum: ties to the smaller set
    chosen = order[np.arange(m), :, np.maximum(size - 1, 0)]  # (m, K) labels by gain
    np.put_along_axis(out, chosen, (np.arange(K)[None, :] < size[:, None]).astype(np.uint8),
                      axis=1)


def predict_gfm(joint, vectors, block=None):
    """The General F-Measure Maximizer (mlrl-boomer's ``GfmBinaryTransformation``): per
    example the label set of largest expected F1 under the joint distribution ``joint``
    (float64 (n, U), normalised) over the known label vectors ``vectors`` (uint8 (U, K)),
    F1 of two empty sets being 1. For each size k = 1..K the best set holds the k labels
    of largest ``sum_s 2 P(label relevant, s relevant labels) / (s + k)`` (ties: the lower
    label index; mlrl-boomer's ``std::partial_sort`` leaves them unspecified); the empty set
    scores the empty vector's probability; the first size of largest score wins (a set
    replaces the best one only if strictly better, as in mlrl-boomer). Returns uint8 (n, K).
    ``block``: examples per block (memory ~ block * K * K floats)."""
    n, K = joint.shape[0], vectors.shape[1]
    table, empty, weights = _gfm_tables(vectors)
    block = block or max(1, 2_000_000 // max(K * K + table.shape[1], 1))
    out = np.zeros((n, K), np.uint8)
    for start in range(0, n, block):
        stop = min(n, start + block)
        _gfm_rows(joint[start:stop], table, empty, weights, out[start:stop])
    return out


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


#: the one loss whose statistics mlrl-boomer 0.15.6 can keep sparse (only the examples'
#: labels of non-zero gradient; ``SparseDecomposableClassificationLossConfig``)
SPARSE_DECOMPOSABLE_LOSS = "squared-hinge-decomposable"
#: ``statistic_format='auto'`` prefers sparse statistics above this many labels
SPARSE_STATISTICS_MIN_OUTPUTS = 120
_PARTIAL_HEADS = ("single", "partial-fixed", "partial-dynamic")


class StatisticsFormat(NamedTuple):
    """What mlrl-boomer 0.15.6's ``statistic_format`` decides (:func:`resolve_statistics_format`).

    ``default_rule``: whether the model starts with a default rule. ``sparse``: whether
    mlrl-boomer would build sparse statistics; ours stay dense (they hold the same sums),
    but ``head_type='auto'`` then means single-output heads and a default rule has the
    rules' head type (``BoostingConfig.partial_default_rule``)."""

    default_rule: bool
    sparse: bool


def is_sparse_loss(loss_name):
    """mlrl-boomer's ``ILossConfig::isSparse``: the squared hinge of
    :data:`SPARSE_DECOMPOSABLE_LOSS` and every non-decomposable loss (a regressor's too)."""
    return loss_name == SPARSE_DECOMPOSABLE_LOSS or loss_name in NON_DECOMPOSABLE_LOSSES


def resolve_statistics_format(statistic_format, default_rule, loss_name, head_type,
                              sparse_labels, num_outputs):
    """mlrl-boomer 0.15.6's rules for the statistics format and the ``auto`` default rule.

    Args:
        statistic_format: ``auto``, ``dense`` or ``sparse``.
        default_rule: ``auto``, ``true`` or ``false``.
        loss_name: the loss; head_type: the ``head_type`` value before its ``auto`` is
            resolved.
        sparse_labels: whether the label matrix reaches the learner as a sparse matrix
            (``estimators.validation.label_matrix_is_sparse``).
        num_outputs: the number of labels (outputs).

    Returns:
        :class:`StatisticsFormat`. With ``statistic_format='auto'`` sparse statistics are
        preferred for sparse labels of more than :data:`SPARSE_STATISTICS_MIN_OUTPUTS`
        labels, partial heads (single-output, partial, or ``auto`` with the squared hinge)
        and no default rule; ``auto`` leaves the default rule out exactly when it would
        prevent them and the loss is sparse (:func:`is_sparse_loss`); with ``sparse`` it
        leaves it out for every sparse loss. Only :data:`SPARSE_DECOMPOSABLE_LOSS` with a
        head other than ``complete`` builds sparse statistics.
    """
    partial = head_type in _PARTIAL_HEADS or (
        head_type == "auto" and loss_name == SPARSE_DECOMPOSABLE_LOSS)
    wide_sparse = sparse_labels and num_outputs > SPARSE_STATISTICS_MIN_OUTPUTS and partial
    sparse_loss = is_sparse_loss(loss_name)
    if default_rule != "auto":
        used = default_rule == "true"
    elif statistic_format == "dense":
        used = True
    elif statistic_format == "sparse":
        used = not sparse_loss
    else:
        used = not sparse_loss or not wide_sparse
    preferred = statistic_format == "sparse" or (
        statistic_format == "auto" and wide_sparse and not used)
    sparse = preferred and loss_name == SPARSE_DECOMPOSABLE_LOSS and head_type != "complete"
    return StatisticsFormat(used, sparse)


def resolve_head_type(head_type, loss_name, sparse_statistics=False, num_outputs=2):
    """``auto`` -> ``single`` where mlrl-boomer 0.15.6 builds sparse statistics
    (``sparse_statistics``, :func:`resolve_statistics_format`) for more than one label,
    else ``complete`` (for every loss: with dense statistics its ``AutomaticHeadConfig``
    picks complete heads, the squared-error and squared-hinge losses included); other
    values pass through."""
    del loss_name  # the loss decides through sparse_statistics
    if head_type != "auto":
        return head_type
    return "single" if sparse_statistics and num_outputs > 1 else "complete"


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
