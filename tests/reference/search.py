"""Slow, obvious NumPy reference of the exact refinement search.

Enumerates every candidate condition explicitly (no running sums, no sorted order) and
scores it by summing the covered examples' statistics directly.
"""

import numpy as np

from gpurules.conditions import OP_EQ, OP_GR, OP_LEQ, OP_NEQ


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


def refines(sel, active, min_coverage=1):
    """Whether a condition selecting the examples ``sel`` (bool (n,), within ``active``: the
    rule's covered examples of non-zero weight) may refine the rule: it keeps at least
    ``max(1, min_coverage)`` of them and excludes at least one (a condition that changes
    nothing, such as ``x == v`` on a nominal feature constant over the covered examples,
    is never a refinement, for the first condition either)."""
    count = int(sel.sum())
    return max(1, min_coverage) <= count < int(active.sum())


def constant_columns_problem(rng, n=40, K=2):
    """A search problem where a condition that changes nothing would win: every gradient is
    positive, so the best quality is that of every covered example. Columns (float32 (n, 7),
    the first five nominal): 0 all 0 (implicit in a sparse matrix), 1 all 2, 2 all 1 but
    missing on rows 6-9 (``== 1`` excludes them: a refinement), 3 all 3 but 5 on the
    zero-weight rows 0-5, 4 all 1 but missing on rows 0-3 (of weight 0), 5 numerical, 0.5
    but missing on rows 0-5, 6 numerical, random. Only columns 2 and 6 offer refinements
    as the searches count examples (non-zero weight).

    Returns X, nominal bool (7,), g int64 (n, K) > 0, h int64 (n, K) > 0, weights int32 (n,)
    (0 on rows 0-5, else 1 or 2)."""
    X = np.empty((n, 7), np.float32)
    X[:, 0], X[:, 1], X[:, 2], X[:, 3], X[:, 4], X[:, 5] = 0.0, 2.0, 1.0, 3.0, 1.0, 0.5
    X[6:10, 2] = np.nan
    X[:6, 3] = 5.0
    X[:4, 4] = np.nan
    X[:6, 5] = np.nan
    X[:, 6] = rng.integers(0, 6, n) * 0.25
    nominal = np.array([True] * 5 + [False] * 2)
    g = rng.integers(1, 2 ** 20, size=(n, K))
    h = rng.integers(1, 2 ** 19, size=(n, K))
    weights = rng.integers(1, 3, n).astype(np.int32)
    weights[:6] = 0
    return X, nominal, g, h, weights


USELESS = np.array([0, 1, 3, 4, 5], np.int64)  # constant_columns_problem's columns


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
            if not refines(sel, active, min_coverage):
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
