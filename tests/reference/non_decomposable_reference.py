"""Slow, obvious NumPy references for the non-decomposable losses, heads, GBLB and predictors
(``gpurules.objectives.non_decomposable`` and friends): dense matrices, ``np.linalg.solve``,
explicit bin membership matrices, finite differences."""

import itertools

import numpy as np


def unpack(h, n):
    """Dense symmetric (n, n) matrix of a packed lower triangle (row by row)."""
    H = np.zeros((n, n))
    rows, cols = np.tril_indices(n)
    H[rows, cols] = h
    H[cols, rows] = h
    return H


def pack(H):
    """Lower triangle of a dense symmetric matrix, row by row."""
    return np.asarray(H)[np.tril_indices(H.shape[0])].copy()


# -- losses ---------------------------------------------------------------------------------
def signs(y):
    return np.where(np.asarray(y) > 0, 1.0, -1.0)


def logistic_loss(y, p):
    return float(np.logaddexp.reduce(np.concatenate([[0.0], -signs(y) * p])))


def residuals(name, y, p):
    y = np.asarray(y) > 0
    if name == "squared-error":
        return p - np.where(y, 1.0, -1.0)
    return np.where(y, np.minimum(p - 1.0, 0.0), np.maximum(p, 0.0))


def loss(name, y, p):
    if name == "logistic":
        return logistic_loss(y, p)
    return float(np.linalg.norm(residuals(name, y, p)))


def statistics(name, y, p):
    """(g (K,), dense H (K, K)) by the closed forms (mlrl-boomer's conventions)."""
    if name == "logistic":
        x = -signs(y) * p
        z = np.exp(np.logaddexp.reduce(np.concatenate([[0.0], x])))
        s = np.exp(x) / z
        g = -signs(y) * s
        return g, np.diag(s) - np.outer(g, g)
    d = residuals(name, y, p)
    S = float(d @ d)
    if S == 0.0:
        H = np.eye(len(p)) if name == "squared-hinge" else np.zeros((len(p), len(p)))
        return np.zeros(len(p)), H
    g = d / np.sqrt(S)
    H = (S * np.eye(len(p)) - np.outer(d, d)) / S ** 1.5
    if name == "squared-hinge":
        satisfied = d == 0.0
        H[satisfied, :] = 0.0
        H[:, satisfied] = 0.0
        H[satisfied, satisfied] = 1.0
    return g, H


def finite_difference(name, y, p, eps=1e-5):
    """(gradient, Hessian) of ``loss`` by central differences (Hessian from gradients)."""
    K = len(p)
    E = np.eye(K) * eps

    def grad(q):
        return np.array([(loss(name, y, q + E[k]) - loss(name, y, q - E[k])) / (2 * eps)
                         for k in range(K)])

    H = np.array([(grad(p + E[k]) - grad(p - E[k])) / (2 * eps) for k in range(K)])
    return grad(p), 0.5 * (H + H.T)


# -- heads ----------------------------------------------------------------------------------
def l1_rhs(g, w, l1):
    o = -np.asarray(g, dtype=float)
    return np.where(o > l1, o - w * l1, np.where(o < -l1, o + w * l1, o))


def objective(g, H, w, l1, l2, p):
    penalty = l1 * np.sum(w * np.abs(p)) + 0.5 * l2 * np.sum(w * p * p)
    return float(g @ p + 0.5 * p @ H @ p + penalty)


def complete_head(g, H, l1, l2, w=None):
    """(scores, gain) of the complete head by ``np.linalg.solve``."""
    w = np.ones(len(g)) if w is None else np.asarray(w, dtype=float)
    p = np.linalg.solve(H + np.diag(l2 * w), l1_rhs(g, w, l1))
    return p, -objective(g, H, w, l1, l2, p)


def label_score(g, h, l1, l2):
    a = max(abs(g) - l1, 0.0)
    if a <= 0 or h + l2 <= 0:
        return 0.0
    return -np.sign(g) * a / (h + l2)


def label_gain(g, h, l1, l2):
    a = max(abs(g) - l1, 0.0)
    return 0.0 if a <= 0 or h + l2 <= 0 else 0.5 * a * a / (h + l2)


def bounded_fraction(n, fraction, minimum, maximum):
    result = int(np.ceil(np.float32(fraction) * np.float32(n)))
    lowest = min(minimum, n)
    if result < lowest:
        return lowest
    if maximum >= minimum and result > maximum:
        return maximum
    return result


def select_fixed(crit, count):
    order = np.lexsort((np.arange(len(crit)), -np.abs(crit)))
    return np.sort(order[:count])


def select_dynamic(crit, threshold, exponent):
    a = np.abs(np.asarray(crit, dtype=float))
    e = float(np.float32(exponent))
    keep = float(np.float32(1.0) - np.float32(threshold))
    return np.flatnonzero((a - a.min()) ** e >= (a.max() - a.min()) ** e * keep)


# -- GBLB -----------------------------------------------------------------------------------
def gblb_bins(crit, bin_ratio, min_bins, max_bins):
    """Compact bin of each output (-1 for c = 0), by the formulas of the module docstring."""
    crit = np.asarray(crit, dtype=float)
    raw = np.full(len(crit), -1)
    offset = 0
    for mask in (crit < 0, crit > 0):
        c = crit[mask]
        if len(c) == 0:
            continue
        nb = bounded_fraction(len(c), bin_ratio, min_bins, max_bins)
        span = (c.max() - c.min()) / nb
        idx = np.zeros(len(c), dtype=int) if span == 0 else \
            np.minimum(np.floor((c - c.min()) / span).astype(int), nb - 1)
        raw[mask] = offset + idx
        offset += nb
    used = np.unique(raw[raw >= 0])
    return np.array([np.searchsorted(used, b) if b >= 0 else -1 for b in raw])


def gblb_head(g, H, l1, l2, bin_ratio, min_bins, max_bins):
    """(scores, gain, bins) of the binned head with a membership matrix S (m, nb)."""
    crit = np.array([label_score(g[k], H[k, k], l1, l2) for k in range(len(g))])
    bins = gblb_bins(crit, bin_ratio, min_bins, max_bins)
    nb = bins.max() + 1 if (bins >= 0).any() else 0
    if nb == 0:
        return np.zeros(len(g)), 0.0, bins
    S = np.zeros((len(g), nb))
    S[bins >= 0, bins[bins >= 0]] = 1.0
    off = H - np.diag(np.diag(H))
    Hb = S.T @ off @ S
    Hb -= np.diag(np.diag(Hb))                       # pairs inside one bin are not added
    Hb += np.diag(S.T @ np.diag(H))                  # the diagonal sums H_kk only
    gb = S.T @ g
    counts = S.sum(axis=0)
    pb, gain = complete_head(gb, Hb, l1, l2, counts)
    return S @ pb, gain, bins


# -- predictors -----------------------------------------------------------------------------
def example_wise(scores, Y, distance):
    """Brute force: for each row of scores the training row of Y with the smallest distance,
    ties by frequency then first appearance."""
    rows = []
    for y in Y:
        if not any(np.array_equal(y, r) for r in rows):
            rows.append(y)
    freq = [sum(np.array_equal(y, r) for y in Y) for r in rows]
    out = []
    for p in scores:
        keys = [(distance(r, p), -f, i) for i, (r, f) in enumerate(zip(rows, freq))]
        out.append(rows[min(keys)[2]])
    return np.array(out, dtype=np.uint8)


def marginalized(scores, vectors):
    sig = 1.0 / (1.0 + np.exp(-scores))
    out = np.zeros_like(scores)
    for i, q in enumerate(sig):
        joint = np.array([np.prod(np.where(v > 0, q, 1.0 - q)) for v in vectors])
        joint /= joint.sum()
        out[i] = joint @ vectors
    return out


def all_label_vectors(K):
    return np.array(list(itertools.product([0, 1], repeat=K)), dtype=np.uint8)
