"""The quality of one candidate of the CUDA threshold scan (``histogram_search``), computed
by the thread that scores it on the prefix sums of its slot.

Candidate ``c = 2 b + side`` of slot ``j`` is the boundary below bin ``b`` (numerical:
``<=`` at ``side = 0``, ``>`` at ``side = 1``) or the value of bin ``b`` (nominal:
``==``/``!=``); it exists only at a non-empty bin (numerical: with a non-empty bin below
it) and only when it is ``thresholds.admissible``: it covers at least ``max(1,
min_coverage)`` examples and fewer than the rule's ``covered`` (:func:`candidate`).

The thread reads the candidate's prefix rows by their offsets in flat int64 arrays
(``score``'s ``rows``): rows of the histograms, or of the candidates block's table in
shared memory (``histogram_search._table``). The quality of a candidate is
``objectives.quality.side_quality``'s: the boosting heads
(``HEAD_COMPLETE``/``HEAD_SINGLE``, ``params = [l1, l2]``) and SeCo's
(``HEAD_SECO_SINGLE``/``HEAD_SECO_PARTIAL``) label by label, in label order; the heads
solved as systems (``HEAD_MULTI_OUTPUT``, ``HEAD_ND_SINGLE``) through
``device_math.system_quality`` with the thread's head work rows.

Shapes and dtypes as in ``histogram_search``: labels int32 (m,); params float64 (P,); the
scratch of one thread, its column of work_f float64 (F, rows), work_i int64 (I, rows),
run_i int64 (K + W, rows) (thread-minor: ``histogram_search``).
"""

import math

from numba import cuda

from gpurules.backends.cuda.device_math import (_device, admissible, label_choice_key,
                                                label_gain, system_quality, work_views)
from gpurules.objectives import heuristics
from gpurules.objectives.heads import HEAD_COMPLETE, HEAD_SINGLE
from gpurules.objectives.heuristics import HEAD_SECO_PARTIAL, HEAD_SECO_SINGLE

seco_value = _device(heuristics.value_from_sums)
seco_prefix_quality = _device(heuristics.prefix_quality)


@cuda.jit(device=True)
def candidate(side, first, counts, is_nominal, min_coverage, covered):
    """The covered count of candidate ``2 b + side`` at a bin ``b`` of its slot; ``counts``
    (the bins below ``b``, through ``b``, all: prefix counts), ``first``: no bin below
    ``b`` (the first count is then not read); 0 where there is no candidate (or none that
    is admissible for a rule covering ``covered`` examples)."""
    before = counts[0] if not first else 0
    below = counts[1] - before  # the bin's own count
    if below == 0:
        return 0
    if not is_nominal:
        below = before  # the bins below the boundary
        if below == 0:
            return 0
    count = counts[2] - below if side == 1 else below
    if not admissible(count, covered, min_coverage):
        return 0
    return count


@cuda.jit(device=True)
def covered_run(a, below, own, k, is_nominal, first):
    """The covered side's running sum of column ``k`` of the prefix rows at ``below`` and
    ``own`` of ``a`` (int64, flat): the bins below the candidate's bin (numerical) or its
    own bin (nominal: ``own`` minus ``below``); ``first``: no bin below it (``below`` is
    not read, its sums are 0)."""
    if is_nominal:
        return a[own + k] - (0 if first else a[below + k])
    return 0 if first else a[below + k]


@cuda.jit(device=True)
def covered_sum(rows, K, k, side, is_nominal, first):
    """Column ``k`` of the covered side's sums of a candidate on its prefix ``rows``
    (:func:`score`; ``side`` 1: the complement): a gradient sum for ``k < K``, else Hessian
    sum ``k - K``."""
    g, h, below_g, own_g, total_g, below_h, own_h, total_h = rows
    if k < K:
        run = covered_run(g, below_g, own_g, k, is_nominal, first)
        return g[total_g + k] - run if side == 1 else run
    k -= K
    run = covered_run(h, below_h, own_h, k, is_nominal, first)
    return h[total_h + k] - run if side == 1 else run


@cuda.jit(device=True)
def _label_quality(rows, side, is_nominal, first, labels, head_mode, params, inv_scale,
                   values):
    """(quality, label) of the label-by-label heads (boosting complete/single, SeCo
    single/partial; the partial head's per-label values go to ``values`` float64 (>= m,)),
    labels in order, ties to the first, as ``objectives.quality.side_quality``: a single
    head's label by ``heads.label_choice_key`` (boosting) or its value (SeCo)."""
    g, h, below_g, own_g, total_g, below_h, own_h, total_h = rows
    seco = head_mode == HEAD_SECO_SINGLE or head_mode == HEAD_SECO_PARTIAL
    best = 0.0
    best_key = 0.0
    best_label = -1
    total = 0.0
    for idx in range(labels.shape[0]):
        k = labels[idx]
        gk = covered_run(g, below_g, own_g, k, is_nominal, first)
        hk = covered_run(h, below_h, own_h, k, is_nominal, first)
        if side == 1:
            gk = g[total_g + k] - gk
            hk = h[total_h + k] - hk
        key = 0.0
        if seco:
            value = seco_value(float(gk), float(hk), k, params)
            key = value
        else:
            value = label_gain(gk * inv_scale, hk * inv_scale, params[0], params[1])
            if head_mode == HEAD_SINGLE:  # mlrl-boomer's choice: the largest |score|
                key = label_choice_key(gk * inv_scale, hk * inv_scale, params[0], params[1])
        if head_mode == HEAD_SECO_PARTIAL:
            values[idx] = value
        elif head_mode == HEAD_COMPLETE:
            total += value
        elif best_label < 0 or key > best_key:
            best_key = key
            best = value
            best_label = k
    if head_mode == HEAD_SECO_PARTIAL:
        return seco_prefix_quality(values, labels.shape[0], params)
    if head_mode == HEAD_COMPLETE:
        return total, -1
    return best, best_label


@cuda.jit(device=True)
def _system_quality(rows, K, W, side, is_nominal, first, labels, head_mode, params,
                    inv_scale, row_f, row_i, run):
    """(quality, label) of the heads solved as systems, with the thread's work rows; a
    nominal bin's own sums are written to ``run`` int64 (K + W,) first."""
    g, h, below_g, own_g, total_g, below_h, own_h, total_h = rows
    if is_nominal:
        for k in range(K):
            run[k] = covered_run(g, below_g, own_g, k, True, first)
        for k in range(W):
            run[K + k] = covered_run(h, below_h, own_h, k, True, first)
        run_g = run[:K]
        run_h = run[K:]
    else:  # a numerical candidate has a non-empty bin below it: ``below`` is a row
        run_g = g[below_g:below_g + K]
        run_h = h[below_h:below_h + W]
    views = work_views(row_f, row_i, labels.shape[0])
    return system_quality(run_g, run_h, g[total_g:total_g + K], h[total_h:total_h + W],
                          side == 1, labels, head_mode, inv_scale, params, views)


# the kinds of head of the candidates kernels (``score``'s ``kind``)
LABEL_HEADS, COMPLETE_HEAD, SYSTEM_HEADS = range(3)


@cuda.jit(device=True)
def score(kind, K, W, side, first, rows, counts, is_nominal, labels, head_mode, params,
          inv_scale, min_coverage, covered, row, work_f, work_i, run_i):
    """(quality, label) of candidate ``2 b + side`` at bin ``b`` of its slot; (-inf, -1)
    where there is none. ``rows``: (g, h, below_g, own_g, total_g, below_h, own_h,
    total_h), where the K gradient prefix sums of the bins below ``b``, through ``b`` and of
    the whole slot begin in ``g`` (int64, flat), the W Hessian ones in ``h``; ``counts``
    their counts; ``first``: no bin below ``b`` (the below offsets and count are not read).
    ``kind``: ``SYSTEM_HEADS`` (``HEAD_MULTI_OUTPUT``, ``HEAD_ND_SINGLE``),
    ``COMPLETE_HEAD`` (``HEAD_COMPLETE`` only) or ``LABEL_HEADS`` (any head scored label by
    label), a constant of the calling kernel, so that each kernel compiles one kind of
    head: ptxas gave the kernel of every head 190 registers a thread (12.5 % occupancy on
    the H200), the label heads' 112, the complete head's 80. Only the SeCo partial head and
    the system heads use scratch column ``row`` of ``work_f``, ``work_i``, ``run_i``."""
    count = candidate(side, first, counts, is_nominal, min_coverage, covered)
    if count == 0:
        return -math.inf, -1
    if kind == SYSTEM_HEADS:
        return _system_quality(rows, K, W, side, is_nominal, first, labels, head_mode, params,
                               inv_scale, work_f[:, row], work_i[:, row], run_i[:, row])
    if kind == COMPLETE_HEAD:
        return _label_quality(rows, side, is_nominal, first, labels, HEAD_COMPLETE, params,
                              inv_scale, work_f[:, 0])
    values = work_f[:, row] if head_mode == HEAD_SECO_PARTIAL else work_f[:, 0]
    return _label_quality(rows, side, is_nominal, first, labels, head_mode, params,
                          inv_scale, values)
