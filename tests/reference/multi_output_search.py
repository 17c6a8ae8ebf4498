"""Slow, obvious NumPy reference of the refinement search with multi-output heads of
non-decomposable statistics: every candidate condition enumerated explicitly
(``tests/reference/search.py``), its covered examples' statistics summed directly, and the
complete head solved with ``np.linalg.solve`` on the dense Hessian."""

import numpy as np

from tests.reference.non_decomposable_reference import unpack
from tests.reference.search import candidate_conditions, refines, satisfied, single_choice


def complete_gain(G, H, l2):
    """Gain -(G.p + 1/2 p.H.p + 1/2 l2 |p|^2) of the complete head (l1 = 0)."""
    A = H + l2 * np.eye(len(G))
    p = np.linalg.solve(A, -G)
    return -(G @ p + 0.5 * p @ H @ p + 0.5 * l2 * p @ p)


def single_gain(G, H, l2):
    """(gain, label) of the single-output head from g_k and H_kk (l1 = 0): mlrl-boomer's
    choice (``search.single_choice``)."""
    return single_choice(G, np.diag(H), 0.0, l2)


def all_candidates(X, nominal, covered, weights, g, h, features, inv_scale, head):
    """[(quality, feature, op, threshold, count, label)] of every candidate condition.

    Args:
        X: float32 (n, A); covered: bool (n,); weights: int (n,); g: int64 (n, K);
        h: int64 (n, K(K+1)/2) packed Hessians.
        head: (G float64 (K,), H float64 (K, K)) -> (gain, label).
    """
    K = g.shape[1]
    active = covered & (weights > 0)
    out = []
    for f in features:
        for op, t in candidate_conditions(X[active, f], nominal[f]):
            sel = active & satisfied(X[:, f], op, t)
            count = int(sel.sum())
            if not refines(sel, active):
                continue
            G = (weights[sel, None] * g[sel]).sum(0) * inv_scale
            H = unpack((weights[sel, None] * h[sel]).sum(0) * inv_scale, K)
            q, label = head(G, H)
            out.append((q, int(f), op, t, count, label))
    return out
