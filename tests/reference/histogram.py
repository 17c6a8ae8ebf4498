"""Slow, obvious NumPy reference of the histogram search.

Histograms come from ``np.add.at``; the best refinement enumerates the boundaries between
the bins that hold a covered example of non-zero weight and sums the statistics of the
selected examples directly (not from a histogram).
"""

import numpy as np

from tests.reference.search import gain, refines, single_choice
from gpurules.conditions import OP_EQ, OP_GR, OP_LEQ, OP_NEQ


def histograms(binned, features, covered, weights, g, h):
    """Histograms of the sampled features; rows of other features are zero.

    Args:
        binned: BinnedFeatures; features: int (S,); covered: bool (n,); weights: int (n,);
        g: int64 (n, K); h: int64 (n, W).

    Returns:
        (hist_g int64 (B, K), hist_h int64 (B, W), hist_count int64 (B,)).
    """
    B, K = binned.total_bins, g.shape[1]
    hist_g = np.zeros((B, K), np.int64)
    hist_h = np.zeros((B, h.shape[1]), np.int64)
    hist_count = np.zeros(B, np.int64)
    for f in features:
        bins = binned.bin_index[f]
        sel = covered & (weights != 0) & (bins >= 0)
        rows = binned.bin_offset[f] + bins[sel]
        w = weights[sel, None].astype(np.int64)
        np.add.at(hist_g, rows, w * g[sel])
        np.add.at(hist_h, rows, w * h[sel])
        np.add.at(hist_count, rows, 1)
    return hist_g, hist_h, hist_count


def midpoint(lower, upper):
    t = np.float32((np.float64(lower) + np.float64(upper)) / 2)
    return lower if t >= upper else t


def candidate_conditions(binned, f, active):
    """(op, threshold, selected bool (n,)) for every candidate on feature ``f``, in the order
    the search visits them; ``active``: bool (n,), covered with non-zero weight."""
    bins = binned.bin_index[f]
    first = binned.bin_offset[f]
    nonempty = np.unique(bins[active & (bins >= 0)])
    out = []
    if binned.nominal[f]:
        for b in nonempty:
            value = binned.bin_min[first + b]
            out += [(OP_EQ, value, bins == b), (OP_NEQ, value, (bins >= 0) & (bins != b))]
        return out
    held = np.flatnonzero(~np.isnan(binned.bin_max[first:binned.bin_offset[f + 1]]))
    for b, b2 in zip(nonempty[:-1], nonempty[1:]):
        lower = held[held < b2].max()  # the last bin below b2 holding a training example
        t = midpoint(binned.bin_max[first + lower], binned.bin_min[first + b2])
        out += [(OP_LEQ, t, (bins >= 0) & (bins <= b)), (OP_GR, t, bins >= b2)]
    return out


def best_refinement(binned, covered, weights, g, h, features, labels, single, l1, l2,
                    inv_scale, min_coverage, min_quality):
    """The best (quality, feature, op, threshold, count, label, g_sum, h_sum) or None.

    The first of equally good candidates wins (features in the given order)."""
    best = None
    active = covered & (weights != 0)
    for f in features:
        for op, t, sel in candidate_conditions(binned, f, active):
            sel = sel & active
            count = int(sel.sum())
            if not refines(sel, active, min_coverage):
                continue
            g_sum = (weights[sel, None].astype(np.int64) * g[sel]).sum(0)
            h_sum = (weights[sel, None].astype(np.int64) * h[sel]).sum(0)
            G, H = g_sum[labels] * inv_scale, h_sum[labels] * inv_scale
            if single:
                q, j = single_choice(G, H, l1, l2)
                label = int(labels[j])
            else:
                q, label = gain(G, H, l1, l2).sum(), -1
            if q > min_quality and (best is None or q > best[0]):
                best = (q, int(f), op, t, count, label, g_sum, h_sum)
    return best
