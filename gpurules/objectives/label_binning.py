"""Gradient-based label binning (GBLB, Rapp et al. 2021) with equal-width bins, as
mlrl-boomer 0.15.6 implements it (``label_binning_equal_width.cpp``,
``rule_evaluation_non_decomposable_binned_common.hpp``).

For a head over m outputs with statistics g (m,) and H:

1. criterion ``c_k = heads.label_score(g_k, H_kk)`` (``-g_k / (H_kk + l2)`` without L1);
   outputs with ``c_k = 0`` get score 0 and take no part in the system;
2. negative and positive criteria are binned separately into
   ``bounded_fraction(#neg, bin_ratio, min_bins, max_bins)`` (resp. #pos) equal-width bins
   over ``[min, max]`` of their sign (``floor((c - min) / span)``, the maximum going into the
   last bin, every output into bin 0 when all criteria of a sign are equal); negative bins
   come first, empty bins are dropped (order kept);
3. per bin b with |B_b| outputs: ``g~_b = sum_{k in B_b} g_k``,
   ``H~_bb = sum_{k in B_b} H_kk`` (only the diagonal: mlrl-boomer does not add the
   Hessians of two different outputs of the same bin), ``H~_bc = sum_{k in B_b, l in B_c}
   H_kl`` for b != c;
4. the head of the bins is ``complete_head.regularized_solve`` with weights ``w_b = |B_b|``,
   i.e. ``R = diag(l2 |B_b|)`` and the L1 shift scaled by |B_b|; its gain is
   ``-objective`` with the same weights; every output of bin b predicts ``p~_b``.

Decomposable statistics (``packed=False``, h the diagonal) use the same steps with a
diagonal H~.

Scratch (float64 unless stated; m_max >= m): ``crit`` (m), ``bin_of`` int (m), ``counts``
(m), ``remap`` int (m), ``g_bin`` (m), ``h_bin`` (m (m + 1) / 2), ``a`` (m * m), ``ipiv`` int
(m), ``p_bin`` (m); :func:`workspace` allocates them on the host.
"""

import math

import numpy as np

from gpurules.jit.helpers import register_jitable
from gpurules.objectives.complete_head import (
    bounded_fraction, objective, output_criteria, regularized_solve)
from gpurules.objectives.non_decomposable import packed_index


@register_jitable
def _equal_width_index(c, lo, span, num_bins):
    """floor((c - lo) / span) clipped to [0, num_bins - 1]; 0 when span is 0."""
    if not span > 0.0:
        return 0
    v = math.floor((c - lo) / span)
    if v < 0:
        return 0
    return min(int(v), num_bins - 1)


@register_jitable
def assign_bins(crit, m, bin_ratio, min_bins, max_bins, bin_of, counts, remap):
    """Map outputs to non-empty equal-width bins of their criterion.

    Writes bin_of[k] (the compact bin of output k, -1 for c_k = 0) and counts[b] = |B_b|
    (float64). Returns the number of non-empty bins.
    """
    n_neg = 0
    n_pos = 0
    min_neg = 0.0
    max_neg = -np.inf
    min_pos = np.inf
    max_pos = 0.0
    for k in range(m):
        c = crit[k]
        if c < 0.0:
            n_neg += 1
            min_neg = min(min_neg, c)
            max_neg = max(max_neg, c)
        elif c > 0.0:
            n_pos += 1
            min_pos = min(min_pos, c)
            max_pos = max(max_pos, c)
    bins_neg = bounded_fraction(n_neg, bin_ratio, min_bins, max_bins) if n_neg > 0 else 0
    bins_pos = bounded_fraction(n_pos, bin_ratio, min_bins, max_bins) if n_pos > 0 else 0
    span_neg = (max_neg - min_neg) / bins_neg if n_neg > 0 else 0.0
    span_pos = (max_pos - min_pos) / bins_pos if n_pos > 0 else 0.0
    for b in range(bins_neg + bins_pos):
        counts[b] = 0.0
    for k in range(m):
        c = crit[k]
        if c < 0.0:
            b = _equal_width_index(c, min_neg, span_neg, bins_neg)
        elif c > 0.0:
            b = bins_neg + _equal_width_index(c, min_pos, span_pos, bins_pos)
        else:
            b = -1
        bin_of[k] = b
        if b >= 0:
            counts[b] += 1.0
    num_bins = 0
    for b in range(bins_neg + bins_pos):
        remap[b] = num_bins
        if counts[b] > 0.0:
            counts[num_bins] = counts[b]
            num_bins += 1
    for k in range(m):
        if bin_of[k] >= 0:
            bin_of[k] = remap[bin_of[k]]
    return num_bins


@register_jitable
def aggregate_bins(g, h, m, packed, bin_of, num_bins, counts, members, ends, g_bin, h_bin):
    """Aggregated statistics of the bins: g_bin (num_bins,), packed h_bin (see the module).

    The Hessians of two bins b != c are summed row by row of H (output i ascending) and
    within a row over the members j < i of the other bin (ascending), each sum kept in a
    register: per entry of h_bin the additions come in the order of the plain pair loop
    (i, then j ascending), so the result is the same bit for bit, without the store to
    and load from h_bin per pair that chains the plain loop's additions through memory
    (m = 53, 3 bins: 1.5 -> 0.6 us). ``counts`` float64 (num_bins,): |B_b|; scratch
    ``members`` int (m,) (the outputs bin by bin) and ``ends`` int (num_bins,)."""
    for b in range(num_bins):
        g_bin[b] = 0.0
    for b in range(num_bins * (num_bins + 1) // 2):
        h_bin[b] = 0.0
    for i in range(m):
        b = bin_of[i]
        if b >= 0:
            g_bin[b] += g[i]
            h_bin[packed_index(b, b)] += h[packed_index(i, i)] if packed else h[i]
    if not packed:
        return
    _members_by_bin(bin_of, m, num_bins, counts, members, ends)
    for i in range(1, m):
        bi = bin_of[i]
        if bi < 0:
            continue
        row = i * (i + 1) // 2
        start = 0
        for c in range(num_bins):
            end = ends[c]
            if c != bi:
                p = packed_index(bi, c)
                acc = h_bin[p]
                t = start
                while t < end and members[t] < i:
                    acc += h[row + members[t]]
                    t += 1
                h_bin[p] = acc
            start = end


@register_jitable
def _members_by_bin(bin_of, m, num_bins, counts, members, ends):
    """members int (m,): the binned outputs grouped by bin, ascending within a bin; bin b's
    are ``members[ends[b - 1]:ends[b]]`` (``ends[-1]`` read as 0)."""
    s = 0
    for b in range(num_bins):
        ends[b] = s
        s += int(counts[b])
    for k in range(m):
        b = bin_of[k]
        if b >= 0:
            members[ends[b]] = k
            ends[b] += 1


# a call, not inlined into the searches (objectives.quality, "How this chain is compiled")
@register_jitable(forceinline=False)
def binned_head(g, h, m, packed, l1, l2, bin_ratio, min_bins, max_bins,
                crit, bin_of, counts, remap, g_bin, h_bin, a, ipiv, p_bin, scores):
    """GBLB head over m outputs: scores (m,) (0 for c_k = 0) and the gain.

    Returns (gain float64, number of bins, zero pivots of the bin system).
    """
    output_criteria(g, h, m, packed, l1, l2, crit)
    num_bins = assign_bins(crit, m, bin_ratio, min_bins, max_bins, bin_of, counts, remap)
    zero_pivots = 0
    gain = 0.0
    if num_bins > 0:
        # remap and ipiv are free between the binning and the solve
        aggregate_bins(g, h, m, packed, bin_of, num_bins, counts, remap, ipiv, g_bin, h_bin)
        zero_pivots = regularized_solve(g_bin, h_bin, num_bins, counts, l1, l2, a, ipiv, p_bin)
        gain = -objective(g_bin, h_bin, num_bins, counts, l1, l2, p_bin)
    for k in range(m):
        scores[k] = p_bin[bin_of[k]] if bin_of[k] >= 0 else 0.0
    return gain, num_bins, zero_pivots


def workspace(m):
    """Host-allocated scratch of :func:`binned_head` for up to m outputs (a dict of arrays)."""
    m = max(int(m), 1)
    return {
        "crit": np.empty(m), "bin_of": np.empty(m, np.int64), "counts": np.empty(m),
        "remap": np.empty(m, np.int64), "g_bin": np.empty(m),
        "h_bin": np.empty(m * (m + 1) // 2), "a": np.empty(m * m),
        "ipiv": np.empty(m, np.int64), "p_bin": np.empty(m),
    }
