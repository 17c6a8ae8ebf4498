"""SeCo rule heuristics on per-label confusion matrices (mlrl-seco 0.15), written once.

Separate-and-conquer rules predict, for label ``k``, the minority value ``p_k`` (the
opposite of the default rule's majority value). Over the examples whose label ``k`` no
earlier rule has covered yet, a candidate rule's confusion matrix is

- ``TP``: covered examples with ``y_k == p_k``;   ``FP``: covered, ``y_k != p_k``;
- ``FN``: not covered, ``y_k == p_k``;              ``TN``: not covered, ``y_k != p_k``.

The searches aggregate two count statistics per (example, label), ``g = [uncovered and
y_k == p_k]`` and ``h = [uncovered]`` (times integer instance weights), so the sums ``G``,
``H`` of what a condition covers give ``TP = G`` and ``FP = H - G``; the totals over *all*
(sampled) uncovered examples, ``TG`` and ``TH``, travel in ``params`` and give
``FN = TG - G`` and ``TN = (TH - TG) - (H - G)``.

Heuristics (larger is better; a ratio with a zero denominator is 0, as ``divideOrZero``):

=================  ====================================================================
accuracy           ``(TP + FN) / (TP + FP + FN + TN)`` (mlrl-seco 0.15's formula, checked
                   against the installed library: it does not depend on the coverage)
precision          ``TP / (TP + FP)``
recall             ``TP / (TP + FN)``
laplace            ``(TP + 1) / (TP + FP + 2)``
wra                ``(TP·N - C·P) / N²`` with ``C = TP + FP``, ``P = TP + FN``,
                   ``N = C + FN + TN`` (``= C/N·(TP/C - P/N)``; 0 if ``C = 0``)
f-measure(β)       ``(1 + β²)·TP / ((1 + β²)·TP + β²·FN + FP)``; β = 0: precision,
                   β = ∞: recall
m-estimate(m)      ``(TP + m·P/N) / (C + m)``; m = 0: precision, m = ∞: wra
=================  ====================================================================

Exactness: the parameter (β² or m) is rounded to 20 significant bits on the host
(:func:`rounded_parameter`) and formulas are arranged so that every product is of an
integer count (< 2**33) by such a parameter or by another count, hence exact in float64.
Then a fused multiply-add (which NVVM forms on the GPU) rounds exactly like the separate
multiply and add of the CPU, and both backends compute bit-identical qualities.

Heads (``head_mode``):

- ``HEAD_SECO_SINGLE``: the label of ``labels`` with the largest heuristic value (the
  first among equals);
- ``HEAD_SECO_PARTIAL``: with ``params[P_SELECT] = 1``, labels are taken in decreasing
  order of their values and the prefix of ``n`` labels maximising ``mean · lift(n)`` is
  chosen, stopping early as mlrl-seco does (``quality · max_lift < best``); with
  ``params[P_SELECT] = 0`` every label of ``labels`` is predicted and the quality is
  ``mean · lift(len(labels))``. ``lift`` and ``max_lift`` are tables from
  :mod:`gpurules.objectives.lift_functions`.
"""

import math

import numpy as np
from numba.core import types
from numba.extending import overload

from gpurules.jit.helpers import register_jitable
from gpurules.objectives.non_decomposable import divide_or_zero  # mlrl's divideOrZero

# head modes of the SeCo learners (objectives.quality dispatches on them)
HEAD_SECO_SINGLE = 2
HEAD_SECO_PARTIAL = 3

# heuristic ids
ACCURACY = 0
PRECISION = 1
RECALL = 2
LAPLACE = 3
WRA = 4
F_MEASURE = 5
M_ESTIMATE = 6

HEURISTIC_IDS = {
    "accuracy": ACCURACY, "precision": PRECISION, "recall": RECALL, "laplace": LAPLACE,
    "weighted-relative-accuracy": WRA, "f-measure": F_MEASURE, "m-estimate": M_ESTIMATE,
}

# layout of ``params`` (float64): a header, the lift tables, then the reference totals
P_HEURISTIC = 0  # heuristic id
P_PARAMETER = 1  # beta**2 (f-measure) or m (m-estimate), rounded; inf allowed
P_SELECT = 2  # partial heads: 1 = choose the labels, 0 = predict every label given
P_NUM_LABELS = 3  # K
P_HEADER = 4
# then lift[n - 1] for n = 1..K, max_lift[n - 1] for n = 1..K, TG[k], TH[k] for k < K

_PARAMETER_BITS = 20


def rounded_parameter(value):
    """``value`` rounded to 20 significant bits (inf and 0 unchanged), so that its product
    with a count below 2**33 is exact in float64 (see the module docstring)."""
    value = float(value)
    if value == 0.0 or not math.isfinite(value):
        return value
    mantissa, exponent = math.frexp(value)
    return math.ldexp(round(mantissa * 2 ** _PARAMETER_BITS), exponent - _PARAMETER_BITS)


def heuristic_parameter(heuristic, option):
    """The value stored at ``params[P_PARAMETER]``: beta**2 for f-measure, m for
    m-estimate, 0 otherwise (rounded, see :func:`rounded_parameter`)."""
    if heuristic == F_MEASURE:
        return rounded_parameter(float(option) ** 2)
    if heuristic == M_ESTIMATE:
        return rounded_parameter(option)
    return 0.0


def seco_params(heuristic, parameter, lift, max_lift, tot_g, tot_h, select=True):
    """Assemble ``params`` for the SeCo head modes.

    Args:
        heuristic: int heuristic id; parameter: float from :func:`heuristic_parameter`.
        lift, max_lift: float64 (K,) tables (``lift[n - 1]`` = lift of an n-label head).
        tot_g, tot_h: int64 (K,) totals of ``g`` and ``h`` over all (sampled) examples.
        select: partial heads choose their labels (True) or predict every label (False).

    Returns:
        float64 (4 + 4K,).
    """
    K = tot_g.shape[0]
    header = [float(heuristic), float(parameter), 1.0 if select else 0.0, float(K)]
    return np.concatenate([np.asarray(header, np.float64), np.asarray(lift, np.float64),
                           np.asarray(max_lift, np.float64), np.asarray(tot_g, np.float64),
                           np.asarray(tot_h, np.float64)])


@register_jitable
def _wra(tp, fp, fn, tn):
    covered = tp + fp
    total = covered + fn + tn
    if covered > 0.0 and total > 0.0:
        return (tp * total - covered * (tp + fn)) / (total * total)
    return 0.0


@register_jitable
def heuristic_value(heuristic, parameter, tp, fp, fn, tn):
    """Value (float64, larger is better) of a confusion matrix of float64 counts.

    ``parameter``: beta**2 for f-measure, m for m-estimate (ignored otherwise).
    """
    if heuristic == PRECISION:
        return divide_or_zero(tp, tp + fp)
    if heuristic == F_MEASURE:
        if parameter == np.inf:
            return divide_or_zero(tp, tp + fn)
        if parameter > 0.0:
            numerator = tp + parameter * tp
            return divide_or_zero(numerator, numerator + parameter * fn + fp)
        return divide_or_zero(tp, tp + fp)
    if heuristic == M_ESTIMATE:
        if parameter == np.inf:
            return _wra(tp, fp, fn, tn)
        if parameter > 0.0:
            covered = tp + fp
            total = covered + fn + tn
            if total > 0.0:
                return (tp * total + parameter * (tp + fn)) / ((covered + parameter) * total)
            return 0.0
        return divide_or_zero(tp, tp + fp)
    if heuristic == ACCURACY:
        return divide_or_zero(tp + fn, tp + fp + fn + tn)
    if heuristic == RECALL:
        return divide_or_zero(tp, tp + fn)
    if heuristic == LAPLACE:
        return (tp + 1.0) / (tp + fp + 2.0)
    if heuristic == WRA:
        return _wra(tp, fp, fn, tn)
    return -np.inf  # unknown id: never chosen (the host validates ids)


@register_jitable(forceinline=True)
def _side(run, tot, complement, k):
    """float64 sum of label ``k``: ``run[k]`` or, with ``complement``, ``tot[k] - run[k]``."""
    if complement:
        return float(tot[k] - run[k])
    return float(run[k])


@register_jitable
def _value(g, h, all_g, all_h, heuristic, parameter):
    """Heuristic value of a label whose covered sums are ``g`` (TP) and ``h`` (TP + FP) and
    whose totals over all uncovered examples are ``all_g`` (TP + FN), ``all_h``."""
    fp = h - g
    return heuristic_value(heuristic, parameter, g, fp, all_g - g, (all_h - all_g) - fp)


@register_jitable
def value_from_sums(g, h, k, params):
    """Heuristic value (float64) of label ``k`` whose covered examples sum to ``g``, ``h``
    (float64 counts); the reference totals and the heuristic come from ``params``."""
    K = int(params[P_NUM_LABELS])
    return _value(g, h, params[P_HEADER + 2 * K + k], params[P_HEADER + 3 * K + k],
                  int(params[P_HEURISTIC]), params[P_PARAMETER])


@register_jitable
def label_value(run_g, run_h, tot_g, tot_h, complement, k, params):
    """Heuristic value of label ``k`` for the covered sums ``run_*`` (int64 (K,)) or, with
    ``complement``, for ``tot_* - run_*``; reference totals from ``params``."""
    return value_from_sums(_side(run_g, tot_g, complement, k),
                           _side(run_h, tot_h, complement, k), k, params)


@register_jitable(forceinline=True)
def single_quality(run_g, run_h, tot_g, tot_h, complement, labels, params):
    """(best value, its label): the first label of ``labels`` with the largest value."""
    heuristic = int(params[P_HEURISTIC])
    parameter = params[P_PARAMETER]
    all_g0 = P_HEADER + 2 * int(params[P_NUM_LABELS])
    all_h0 = all_g0 + int(params[P_NUM_LABELS])
    best = -np.inf
    best_label = -1
    for idx in range(labels.shape[0]):
        k = labels[idx]
        q = _value(_side(run_g, tot_g, complement, k), _side(run_h, tot_h, complement, k),
                   params[all_g0 + k], params[all_h0 + k], heuristic, parameter)
        if best_label < 0 or q > best:
            best = q
            best_label = k
    return best, best_label


@register_jitable
def _next_in_order(values, m, prev_q, prev_idx):
    """The position after ``(prev_q, prev_idx)`` in the order (value descending, position
    ascending) of ``values[:m]``: returns (value, position), position -1 if none is left."""
    cur_q = -np.inf
    cur_idx = -1
    for idx in range(m):
        q = values[idx]
        after = q < prev_q or (q == prev_q and idx > prev_idx)
        if after and (cur_idx < 0 or q > cur_q):
            cur_q = q
            cur_idx = idx
    return cur_q, cur_idx


@register_jitable
def prefix_quality(values, m, params):
    """(lifted quality, number of labels) of the best partial head, given the values of the
    ``m`` candidate labels in ``values[:m]`` (float64).

    With selection (``params[P_SELECT] == 1``) the head is the first ``n`` labels in
    decreasing order of their values (ties: earlier position first) that maximise
    ``mean · lift(n)``, with mlrl-seco's early stop; without, all ``m`` labels. Each step
    scans ``values`` for the next value in order, so no memory is allocated (the CUDA scan
    passes its per-block array of label values)."""
    lift0 = P_HEADER
    max_lift0 = P_HEADER + int(params[P_NUM_LABELS])
    if params[P_SELECT] == 0.0:
        total = 0.0
        for idx in range(m):
            total += values[idx]
        return total / m * params[lift0 + m - 1], m
    q, idx = _next_in_order(values, m, np.inf, -1)
    total = q
    best = total * params[lift0]
    best_n = 1
    max_lift = params[max_lift0]
    for n in range(2, m + 1):
        q, idx = _next_in_order(values, m, q, idx)
        total += q
        quality = total / n * params[lift0 + n - 1]
        if quality > best:
            best = quality
            best_n = n
            if n < m:
                max_lift = params[max_lift0 + n - 1]
        if quality * max_lift < best:
            break
    return best, best_n


def _values_row(values, m):
    """``values`` float64 (>= m,), or a new array of ``m`` when it is None (a type in
    compiled code, see the overload)."""
    return np.empty(m) if values is None else values


@overload(_values_row, inline="always")
def _values_row_typed(values, m):
    if isinstance(values, (types.NoneType, types.Omitted)):
        return lambda values, m: np.empty(m)
    return lambda values, m: values


@register_jitable
def partial_quality(run_g, run_h, tot_g, tot_h, complement, labels, params, values=None):
    """(lifted quality, number of labels) of the best partial head over ``labels`` (see
    :func:`prefix_quality`); :func:`gpurules.learners.covering_rule.partial_head_labels`
    recovers the chosen labels from the refinement's sums. ``values``: float64 (>= m,) scratch for
    the labels' heuristic values (None: allocated; the searches pass their slot's row, so
    they run without allocations)."""
    m = labels.shape[0]
    values = _values_row(values, m)
    for idx in range(m):
        k = labels[idx]
        values[idx] = value_from_sums(_side(run_g, tot_g, complement, k),
                                      _side(run_h, tot_h, complement, k), k, params)
    return prefix_quality(values, m, params)
