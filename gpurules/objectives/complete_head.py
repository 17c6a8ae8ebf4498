"""Heads from non-decomposable statistics (complete, single) and the output selection of
partial heads (``partial-fixed``, ``partial-dynamic``) for both kinds of statistics.

A head over ``m`` outputs minimises, as mlrl-boomer does,

    objective(p) = g.p + 1/2 p.H.p + l1 sum_k w_k |p_k| + 1/2 l2 sum_k w_k p_k^2

with ``w_k = 1`` (``w_k = |B_k|``, the bin sizes, under label binning). The scores solve
``(H + diag(l2 w)) p = b`` with mlrl-boomer's right-hand side ``b_k = -g_k - w_k l1 sign(-g_k)``
when ``|g_k| > l1`` and ``b_k = -g_k`` otherwise (``addL1RegularizationWeight`` applied to the
ordinates ``-g``; it does not set ``b_k = 0`` for ``|g_k| <= l1``). The gain (larger is
better, as in ``objectives.quality``) is ``-objective(p)``; for one output with ``|g| > l1``
it equals ``heads.label_gain``.

Statistics arrive as float64 ``g`` (m,) and ``h``: the packed symmetric Hessian
(``non_decomposable.packed_index`` order, m (m + 1) / 2 values) or, with ``packed=False``,
the Hessian diagonal (m,) of decomposable statistics. :func:`gather_side` turns a search's
fixed-point running sums into that form. Nothing allocates: scratch arrays are arguments
(``a``: float64 >= m * m, ``ipiv``: int64 (m,), see ``linear_solve``).

Partial heads (mlrl-boomer 0.15.6): each output's criterion is its output-wise optimal
score ``heads.label_score(g_k, H_kk)``;

* ``partial-fixed{output_ratio,min_outputs,max_outputs}`` keeps the
  ``bounded_fraction(m, ratio, min_outputs, max_outputs)`` outputs with the largest
  ``|criterion|`` (ties: lower index first); ``output_ratio = 0`` means the label
  cardinality / K, which the host resolves;
* ``partial-dynamic{threshold,exponent}`` keeps every output with
  ``(|c_k| - min|c|)^exponent >= (1 - threshold) (max|c| - min|c|)^exponent``
  (:func:`select_dynamic`: no ``pow`` on any device).

The head over the kept outputs is then the complete head of that sub-system (non-decomposable)
or the per-output heads (decomposable).
"""

import math

import numpy as np

from gpurules.jit.helpers import register_jitable
from gpurules.objectives.heads import label_choice_key, label_gain, label_score
from gpurules.objectives.linear_solve import (ZERO_PIVOT, factor_solve, load_packed,
                                              load_packed_upper, packed_quadratic,
                                              upper_positive_definite_solve)
from gpurules.objectives.non_decomposable import packed_index

@register_jitable
def _weight(weights, i):
    """weights[i], or 1 when ``weights`` is None (compiled away)."""
    if weights is None:
        return 1.0
    return weights[i]


@register_jitable
def _diagonal(h, i, packed):
    return h[packed_index(i, i)] if packed else h[i]


@register_jitable
def is_prefix(labels):
    """Whether labels[a] == a for every a (a complete head over the first m outputs)."""
    for a in range(labels.shape[0]):
        if labels[a] != a:
            return False
    return True


@register_jitable
def _scaled_side(run, tot, complement, n, inv_scale, out):
    """out[:n] = (tot - run if complement else run)[:n] * inv_scale (unsigned indices, so
    that the loops vectorise, see ``linear_solve._sub_scaled``)."""
    if complement:
        for i in range(np.uint64(0), np.uint64(n)):
            out[i] = (tot[i] - run[i]) * inv_scale
    else:
        for i in range(np.uint64(0), np.uint64(n)):
            out[i] = run[i] * inv_scale


@register_jitable
def gather_side(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, g_out, h_out):
    """The float64 statistics of ``labels`` (int (m,)) for one side of a boundary.

    ``run_g``/``tot_g`` (int64 (K,)) and ``run_h``/``tot_h`` (int64 (K(K+1)/2,)) are a search's
    fixed-point running sums and totals; with ``complement`` the side is ``tot - run``.
    Writes g_out (m,) and the packed h_out (m(m+1)/2,).
    """
    m = labels.shape[0]
    if is_prefix(labels):  # the sums' own packed order: one flat (vectorised) pass
        _scaled_side(run_g, tot_g, complement, m, inv_scale, g_out)
        _scaled_side(run_h, tot_h, complement, m * (m + 1) // 2, inv_scale, h_out)
        return
    for a in range(m):
        ka = labels[a]
        ga = tot_g[ka] - run_g[ka] if complement else run_g[ka]
        g_out[a] = ga * inv_scale
        row = a * (a + 1) // 2
        for b in range(a + 1):
            idx = packed_index(ka, labels[b])
            v = tot_h[idx] - run_h[idx] if complement else run_h[idx]
            h_out[row + b] = v * inv_scale


@register_jitable
def l1_ordinate(g, weight, l1):
    """mlrl-boomer's right-hand side entry for gradient ``g``: -g shrunk by weight * l1
    when |g| > l1, else -g."""
    o = -g
    if o > l1:
        return o - weight * l1
    if o < -l1:
        return o + weight * l1
    return o


@register_jitable
def regularized_solve(g, h, n, weights, l1, l2, a, ipiv, out):
    """Scores of the complete head of an n-output system: solves
    ``(H + diag(l2 w)) p = b`` (see the module) into ``out`` (n,).

    ``weights``: float64 (n,) or None (all 1). Tries ``positive_definite_solve`` first (the
    case with ``l2 > 0``), else ``factor_solve``. Returns the number of zero pivots.
    """
    # a positive definite system first (loaded into the upper triangle, see linear_solve)
    largest = load_packed_upper(h, n, a)
    for i in range(n):
        w = _weight(weights, i)
        a[i * n + i] += l2 * w
        largest = max(largest, abs(a[i * n + i]))
        out[i] = l1_ordinate(g[i], w, l1)
    if upper_positive_definite_solve(a, n, out, n * ZERO_PIVOT * largest):
        return 0
    load_packed(h, n, a)  # else Bunch-Kaufman
    for i in range(n):
        w = _weight(weights, i)
        a[i * n + i] += l2 * w
        out[i] = l1_ordinate(g[i], w, l1)
    return factor_solve(a, n, ipiv, out)


@register_jitable
def objective(g, h, n, weights, l1, l2, p):
    """g.p + 1/2 p.H.p + l1 sum w|p| + 1/2 l2 sum w p^2 (mlrl-boomer's quality; lower is
    better) for packed ``h``."""
    linear = 0.0
    penalty = 0.0
    for i in range(n):
        w = _weight(weights, i)
        linear += g[i] * p[i]
        penalty += w * (l1 * abs(p[i]) + 0.5 * l2 * p[i] * p[i])
    return linear + 0.5 * packed_quadratic(h, n, p) + penalty


# a call, not inlined into the searches (objectives.quality, "How this chain is compiled")
@register_jitable(forceinline=False)
def complete_head(g, h, m, l1, l2, a, ipiv, scores):
    """Complete head over m outputs of packed statistics: scores (m,) and the gain.

    Returns (gain float64, zero pivots int).
    """
    zero_pivots = regularized_solve(g, h, m, None, l1, l2, a, ipiv, scores)
    return -objective(g, h, m, None, l1, l2, scores), zero_pivots


@register_jitable
def single_head_sums(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, l1, l2):
    """Single-output head from non-decomposable fixed-point sums (only H_kk is read).

    Returns (gain, label): the output of ``labels`` with the largest
    ``heads.label_choice_key`` of (g_k, H_kk) (|optimal score|, first on ties; mlrl-boomer
    converts the statistics to decomposable ones for single-output heads), and its
    ``heads.label_gain``; its score is ``heads.label_score`` of the same (g_k, H_kk).
    """
    best = 0.0
    best_key = 0.0
    best_label = -1
    for idx in range(labels.shape[0]):
        k = labels[idx]
        d = packed_index(k, k)
        gk = (tot_g[k] - run_g[k] if complement else run_g[k]) * inv_scale
        hk = (tot_h[d] - run_h[d] if complement else run_h[d]) * inv_scale
        key = label_choice_key(gk, hk, l1, l2)
        if best_label < 0 or key > best_key:
            best_key = key
            best = label_gain(gk, hk, l1, l2)
            best_label = k
    return best, best_label


@register_jitable
def output_criteria(g, h, m, packed, l1, l2, out):
    """out[k] = heads.label_score(g_k, H_kk): each output's own optimal score (m,)."""
    for i in range(m):
        out[i] = label_score(g[i], _diagonal(h, i, packed), l1, l2)


@register_jitable
def bounded_fraction(n, fraction, minimum, maximum):
    """mlrl-boomer's ``calculateBoundedFraction``: ceil(fraction * n) in float32 arithmetic,
    at least min(minimum, n), at most ``maximum`` when ``maximum >= minimum``."""
    result = int(math.ceil(np.float32(np.float32(fraction) * np.float32(n))))
    lowest = minimum if minimum < n else n
    if result < lowest:
        return lowest
    if maximum >= minimum and result > maximum:
        return maximum
    return result


@register_jitable
def _better(crit, i, j):
    """Output i goes before output j: larger |criterion|, then lower index."""
    ci = abs(crit[i])
    cj = abs(crit[j])
    return ci > cj or (ci == cj and i < j)


@register_jitable
def _sort_ascending(sel, count):
    for i in range(1, count):
        v = sel[i]
        j = i - 1
        while j >= 0 and sel[j] > v:
            sel[j + 1] = sel[j]
            j -= 1
        sel[j + 1] = v


@register_jitable
def select_fixed(crit, m, count, sel):
    """The ``count`` outputs with the largest |crit| (ties: lower index) as ascending local
    indices in ``sel`` (int (m,)). Returns the number selected (min(count, m))."""
    count = min(count, m)
    filled = 0
    for i in range(m):
        if filled == count and (count == 0 or not _better(crit, i, sel[count - 1])):
            continue
        pos = filled if filled < count else count - 1
        while pos > 0 and _better(crit, i, sel[pos - 1]):
            sel[pos] = sel[pos - 1]
            pos -= 1
        sel[pos] = i
        if filled < count:
            filled += 1
    _sort_ascending(sel, count)
    return count


def dynamic_root(threshold, exponent):
    """``(1 - threshold)^(1 / exponent)`` (float64) of mlrl-boomer's float32 parameters: with it
    :func:`select_dynamic` tests ``|c| - min|c| >= root (max|c| - min|c|)``, the same outputs
    as the ``exponent``-th powers for ``exponent >= 1`` (both sides are >= 0), with no
    ``pow`` per output. Computed once per fit on the host, so the CPU and the GPU compare
    with the same number (``pow`` is libm's on the CPU and libdevice's on the GPU, which may
    differ in the last bit)."""
    e = float(np.float32(exponent))
    keep = float(np.float32(1.0) - np.float32(threshold))
    return keep ** (1.0 / e)


@register_jitable
def select_dynamic(crit, m, threshold, exponent, root, sel):
    """Outputs with (|c| - min|c|)^exponent >= (1 - threshold) (max|c| - min|c|)^exponent
    (mlrl-boomer's float32 parameters) as ascending local indices in ``sel``; ``root`` =
    :func:`dynamic_root` (threshold, exponent). Returns the number selected.

    The default exponent 2 squares both sides (exactly rounded multiplications, as the
    powers' definition); any other exponent compares ``|c| - min|c| >= root (max|c| -
    min|c|)`` (equivalent for ``exponent >= 1``, and the same bits on every device)."""
    if m == 0:
        return 0
    lo = abs(crit[0])
    hi = lo
    for i in range(1, m):
        c = abs(crit[i])
        lo = min(lo, c)
        hi = max(hi, c)
    square = np.float64(np.float32(exponent)) == 2.0
    keep = np.float64(np.float32(1.0) - np.float32(threshold))
    span = hi - lo
    bound = span * span * keep if square else root * span
    n = 0
    for i in range(m):
        d = abs(crit[i]) - lo
        if (d * d if square else d) >= bound:
            sel[n] = i
            n += 1
    return n


@register_jitable
def compact(g, h, sel, count, packed, g_out, h_out):
    """The sub-system of the outputs ``sel[:count]``: g_out (count,) and h_out (packed
    count (count + 1) / 2, or the diagonal (count,) when not ``packed``)."""
    for a in range(count):
        ia = sel[a]
        g_out[a] = g[ia]
        if packed:
            row = a * (a + 1) // 2
            for b in range(a + 1):
                h_out[row + b] = h[packed_index(ia, sel[b])]
        else:
            h_out[a] = h[ia]


@register_jitable
def output_wise_head(g, h, sel, count, l1, l2, scores):
    """Per-output heads of decomposable statistics over ``sel[:count]``: scores (count,)
    and the summed gain (as ``heads``)."""
    total = 0.0
    for a in range(count):
        i = sel[a]
        scores[a] = label_score(g[i], h[i], l1, l2)
        total += label_gain(g[i], h[i], l1, l2)
    return total


@register_jitable
def partial_complete_head(g, h, sel, count, l1, l2, g_sub, h_sub, a, ipiv, scores):
    """Complete head of non-decomposable statistics over ``sel[:count]``.

    ``g_sub``, ``h_sub``: scratch of the sub-system. Returns (gain, zero pivots); scores
    (count,) are in the order of ``sel``.
    """
    compact(g, h, sel, count, True, g_sub, h_sub)
    return complete_head(g_sub, h_sub, count, l1, l2, a, ipiv, scores)
