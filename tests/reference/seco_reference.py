"""Slow, obvious NumPy/Python oracles for the SeCo learner (tests only).

The heuristics are written in mlrl-seco's own form (e.g. WRA as ``C/N·(TP/C - P/N)``), not
in the rearranged, FMA-safe form of ``gpurules.objectives.heuristics``, so a test against
them also checks the algebra.
"""

import itertools
import math

import numpy as np

from tests.reference.search import refines
from gpurules.conditions import OP_EQ, OP_GR, OP_LEQ, OP_NEQ


def _div(a, b):
    return a / b if b != 0 else 0.0


def heuristic(name, tp, fp, fn, tn, option=None):
    """Value of a confusion matrix; ``option`` is beta (f-measure) or m (m-estimate)."""
    covered, total = tp + fp, tp + fp + fn + tn
    if name == "accuracy":
        return _div(tp + fn, total)
    if name == "precision":
        return _div(tp, covered)
    if name == "recall":
        return _div(tp, tp + fn)
    if name == "laplace":
        return (tp + 1) / (covered + 2)
    if name == "weighted-relative-accuracy":
        if covered > 0 and total > 0:
            return covered / total * (tp / covered - (tp + fn) / total)
        return 0.0
    if name == "f-measure":
        if math.isinf(option):
            return _div(tp, tp + fn)
        if option == 0:
            return _div(tp, covered)
        b2 = option * option
        return _div((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp)
    if name == "m-estimate":
        if math.isinf(option):
            return heuristic("weighted-relative-accuracy", tp, fp, fn, tn)
        if option == 0:
            return _div(tp, covered)
        return (tp + option * (tp + fn) / total) / (covered + option) if total > 0 else 0.0
    raise ValueError(name)


def confusion(covered, correct, uncovered, weights, k):
    """(TP, FP, FN, TN) of label ``k``: ``covered`` bool (n,), ``correct`` bool (n, K)
    (y == predicted value), ``uncovered`` bool (n, K), ``weights`` int (n,)."""
    w = weights * uncovered[:, k]
    tp = float((w * (covered & correct[:, k])).sum())
    fp = float((w * (covered & ~correct[:, k])).sum())
    fn = float((w * (~covered & correct[:, k])).sum())
    tn = float((w * (~covered & ~correct[:, k])).sum())
    return tp, fp, fn, tn


def candidate_conditions(X, current, nominal):
    """Every (feature, op, threshold, covered mask) the searches consider, restricted to
    the examples in ``current`` (bool (n,)); thresholds are float32 midpoints."""
    out = []
    for f in range(X.shape[1]):
        present = current & ~np.isnan(X[:, f])
        values = np.unique(X[present, f])
        if nominal[f]:
            for v in values:
                out.append((f, OP_EQ, np.float32(v), present & (X[:, f] == v)))
                out.append((f, OP_NEQ, np.float32(v), present & (X[:, f] != v)))
            continue
        for lo, hi in zip(values[:-1], values[1:]):
            t = np.float32((np.float64(lo) + np.float64(hi)) / 2)
            if t >= hi:
                t = np.float32(lo)
            out.append((f, OP_LEQ, t, present & (X[:, f] <= t)))
            out.append((f, OP_GR, t, present & (X[:, f] > t)))
    return out


def single_head(covered, correct, uncovered, weights, labels, name, option):
    """(best value, label) over ``labels``: the first label with the largest value."""
    values = [heuristic(name, *confusion(covered, correct, uncovered, weights, k), option)
              for k in labels]
    j = int(np.argmax(values))
    return values[j], int(labels[j])


def partial_head(covered, correct, uncovered, weights, labels, name, option, lift):
    """(best lifted quality, best label subset): exhaustive over every non-empty subset of
    ``labels``, quality ``mean value · lift[size - 1]``. (With a non-increasing lift after
    one label this equals mlrl-seco's sorted-prefix search without its early stop.)"""
    values = {int(k): heuristic(name, *confusion(covered, correct, uncovered, weights, k),
                                option) for k in labels}
    best, best_set = -np.inf, None
    for size in range(1, len(labels) + 1):
        for subset in itertools.combinations(sorted(values), size):
            q = sum(values[k] for k in subset) / size * lift[size - 1]
            if q > best + 1e-12:
                best, best_set = q, subset
    return best, best_set


def best_single_condition(X, nominal, current, correct, uncovered, weights, labels, name,
                          option, min_coverage=1):
    """The best (value, feature, op, threshold, label) among all conditions (brute force;
    ties resolved arbitrarily, so compare values, not conditions)."""
    best = (0.0, None, None, None, None)
    for f, op, t, mask in candidate_conditions(X, current, nominal):
        if not refines(weights * mask > 0, weights * current > 0, min_coverage):
            continue
        q, k = single_head(mask, correct, uncovered, weights, labels, name, option)
        if q > best[0]:
            best = (q, f, op, t, k)
    return best


def decision_list_predict(X, conditions, heads, default):
    """First-match prediction. conditions: list (per rule) of (f, op, t); heads: list of
    dicts label -> value; default: (K,) values. Returns uint8 (n, K)."""
    n = X.shape[0]
    out = np.empty((n, len(default)), np.uint8)
    for i in range(n):
        pred = {}
        for conds, head in zip(conditions, heads):
            if all(_satisfies(X[i, f], op, t) for f, op, t in conds):
                for k, v in head.items():
                    pred.setdefault(k, v)
        out[i] = [pred.get(k, default[k]) for k in range(len(default))]
    return out


def _satisfies(v, op, t):
    if np.isnan(v):
        return False
    return {OP_LEQ: v <= t, OP_GR: v > t, OP_EQ: v == t, OP_NEQ: v != t}[op]


def candidate_mask(X, f, op, t):
    """bool (n,): the examples satisfying ``x_f op t`` (missing values never do)."""
    return np.array([_satisfies(v, op, t) for v in X[:, f]])
