"""Slow, obvious NumPy reference of the exact refinement search.

Enumerates every candidate condition explicitly (no running sums, no sorted order) and
scores it by summing the covered examples' statistics directly.
"""

import numpy as np

from gpurules.model import OP_EQ, OP_GR, OP_LEQ, OP_NEQ


def gain(G, H, l1, l2):
    a = np.maximum(np.abs(G) - l1, 0.0)
    return 0.5 * a * a / (H + l2)


def single_choice(G, H, l1, l2):
    """(gain, index) of a single-output head over the labels' sums ``G``, ``H`` (float64
    (m,)): mlrl-boomer's choice, the first label of largest |optimal score|
    ``max(|G| - l1, 0) / (H + l2)`` (0 where that is not positive), and its gain."""
    G, H = np.asarray(G, np.float64), np.asarray(H, np.float64)
    a = np.maximum(np.abs(G) - l1, 0.0)
    denom = H + l2
    ok = (a > 0.0) & (denom > 0.0)
    key = np.where(ok, a / np.where(ok, denom, 1.0), 0.0)
    j = int(np.argmax(key))
    return (0.5 * a[j] * a[j] / denom[j] if ok[j] else 0.0), j


def candidate_conditions(values, nominal):
    """All (op, threshold) candidates for the covered, non-missing ``values`` (float32)."""
    distinct = np.unique(values[~np.isnan(values)])
    if nominal:
        return [(op, np.float32(v)) for v in distinct for op in (OP_EQ, OP_NEQ)]
    out = []
    for lo, hi in zip(distinct[:-1], distinct[1:]):
        t = np.float32((np.float64(lo) + np.float64(hi)) / 2)
        if t >= hi:
            t = lo
        out += [(OP_LEQ, t), (OP_GR, t)]
    return out


def satisfied(values, op, t):
    with np.errstate(invalid="ignore"):
        ok = {OP_LEQ: values <= t, OP_GR: values > t, OP_EQ: values == t,
              OP_NEQ: values != t}[op]
    return ok & ~np.isnan(values)


def best_refinement(X, nominal, covered, weights, g, h, features, labels, single, l1, l2,
                    inv_scale, min_coverage, min_quality):
    """The best (quality, feature, op, threshold, count, label) or None.

    Args:
        X: float32 (n, A); covered: bool (n,); weights: int (n,); g, h: int64 (n, K).
    """
    best = None
    active = covered & (weights > 0)
    for f in features:
        for op, t in candidate_conditions(X[active, f], nominal[f]):
            sel = active & satisfied(X[:, f], op, t)
            count = int(sel.sum())
            if count < min_coverage or count == 0:
                continue
            G = (weights[sel, None] * g[sel]).sum(0)[labels] * inv_scale
            H = (weights[sel, None] * h[sel]).sum(0)[labels] * inv_scale
            if single:
                q, j = single_choice(G, H, l1, l2)
                label = int(labels[j])
            else:
                q, label = gain(G, H, l1, l2).sum(), -1
            if q > min_quality and (best is None or q > best[0]):
                best = (q, int(f), op, t, count, label)
    return best


def assert_condition_sums(X, covered, weights, g, h, feature, op, threshold, count, g_sum,
                          h_sum):
    """The count and fixed-point sums a search reported for a condition are those of the
    covered, non-zero-weight examples the condition selects by their raw values."""
    sel = covered & (weights != 0) & satisfied(X[:, feature], op, threshold)
    assert count == sel.sum()
    np.testing.assert_array_equal(g_sum, (weights[sel, None] * g[sel]).sum(0))
    np.testing.assert_array_equal(h_sum, (weights[sel, None] * h[sel]).sum(0))
