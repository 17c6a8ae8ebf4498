"""The quality of one candidate of the CUDA threshold scan (``histogram_search``), computed
by the thread that scores it on the prefix sums of its slot.

Candidate ``c = 2 b + side`` of slot ``j`` is the boundary below bin ``b`` (numerical:
``<=`` at ``side = 0``, ``>`` at ``side = 1``) or the value of bin ``b`` (nominal:
``==``/``!=``); it exists only at a non-empty bin (numerical: with a non-empty bin below
it) and only when it is ``thresholds.admissible``: it covers at least ``max(1,
min_coverage)`` examples and fewer than the rule's ``covered`` (:func:`candidate`).

The quality of a candidate is ``objectives.quality.side_quality``'s: the boosting heads
(``HEAD_COMPLETE``/``HEAD_SINGLE``, ``params = [l1, l2]``) and SeCo's
(``HEAD_SECO_SINGLE``/``HEAD_SECO_PARTIAL``) label by label, in label order; the heads
solved as systems (``HEAD_MULTI_OUTPUT``, ``HEAD_ND_SINGLE``) through
``device_math.system_quality`` with the thread's head work rows.

Shapes and dtypes as in ``histogram_search`` (on the prefix sums): slot_offset int64
(S + 1,); hist_g int64 (R, K), hist_h int64 (R, W), hist_count int64 (R,); labels int32
(m,); params float64 (P,); the scratch of one thread, its column of work_f float64 (F, rows),
work_i int64 (I, rows), run_i int64 (K + W, rows) (thread-minor: ``histogram_search``).
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
def candidate(j, c, slot_offset, is_nominal, hist_count, min_coverage, covered):
    """Candidate ``c`` of slot ``j`` on the prefix sums: (row r = slot_offset[j] + b, side,
    covered count); count 0 where there is no candidate (or none that is admissible for a
    rule covering ``covered`` examples)."""
    lo = slot_offset[j]
    b = c // 2
    side = c - 2 * b
    r = lo + b
    if b >= slot_offset[j + 1] - lo:
        return r, side, 0
    before = hist_count[r - 1] if b > 0 else 0
    below = hist_count[r] - before  # the bin's own count
    if below == 0:
        return r, side, 0
    if not is_nominal:
        below = before  # the bins below the boundary
        if below == 0:
            return r, side, 0
    count = hist_count[slot_offset[j + 1] - 1] - below if side == 1 else below
    if not admissible(count, covered, min_coverage):
        return r, side, 0
    return r, side, count


@cuda.jit(device=True)
def covered_run(hist, r, k, is_nominal, first):
    """The covered side's running sum of column ``k``: the bins below row ``r``
    (numerical) or row ``r``'s own bin (nominal); ``first``: r is the slot's first row."""
    if is_nominal:
        return hist[r, k] - (0 if first else hist[r - 1, k])
    return hist[r - 1, k]


@cuda.jit(device=True)
def _label_quality(r, side, is_nominal, first, last, hist_g, hist_h, labels, head_mode,
                   params, inv_scale, values):
    """(quality, label) of the label-by-label heads (boosting complete/single, SeCo
    single/partial; the partial head's per-label values go to ``values`` float64 (>= m,)),
    labels in order, ties to the first, as ``objectives.quality.side_quality``: a single
    head's label by ``heads.label_choice_key`` (boosting) or its value (SeCo)."""
    seco = head_mode == HEAD_SECO_SINGLE or head_mode == HEAD_SECO_PARTIAL
    best = 0.0
    best_key = 0.0
    best_label = -1
    total = 0.0
    for idx in range(labels.shape[0]):
        k = labels[idx]
        gk = covered_run(hist_g, r, k, is_nominal, first)
        hk = covered_run(hist_h, r, k, is_nominal, first)
        if side == 1:
            gk = hist_g[last, k] - gk
            hk = hist_h[last, k] - hk
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
def _system_quality(r, side, is_nominal, first, last, hist_g, hist_h, labels, head_mode,
                    params, inv_scale, row_f, row_i, run):
    """(quality, label) of the heads solved as systems, with the thread's work rows; a
    nominal bin's own sums are written to ``run`` int64 (K + W,) first."""
    K = hist_g.shape[1]
    if is_nominal:
        for k in range(K):
            run[k] = covered_run(hist_g, r, k, True, first)
        for k in range(hist_h.shape[1]):
            run[K + k] = covered_run(hist_h, r, k, True, first)
        run_g = run[:K]
        run_h = run[K:]
    else:
        run_g = hist_g[r - 1]
        run_h = hist_h[r - 1]
    views = work_views(row_f, row_i, labels.shape[0])
    return system_quality(run_g, run_h, hist_g[last], hist_h[last], side == 1, labels,
                          head_mode, inv_scale, params, views)


# the kinds of head of the candidates kernels (``score``'s ``kind``)
LABEL_HEADS, COMPLETE_HEAD, SYSTEM_HEADS = range(3)


@cuda.jit(device=True)
def score(kind, j, c, slot_offset, is_nominal, hist_g, hist_h, hist_count, labels,
          head_mode, params, inv_scale, min_coverage, covered, row, work_f, work_i, run_i):
    """(quality, label) of candidate ``c`` of slot ``j``; (-inf, -1) where there is none.
    ``kind``: ``SYSTEM_HEADS`` (``HEAD_MULTI_OUTPUT``, ``HEAD_ND_SINGLE``),
    ``COMPLETE_HEAD`` (``HEAD_COMPLETE`` only) or ``LABEL_HEADS`` (any head scored label by
    label), a constant of the calling kernel, so that each kernel compiles one kind of
    head: ptxas gave the kernel of every head 190 registers a thread (12.5 % occupancy on
    the H200), the label heads' 112, the complete head's 80. Only the SeCo partial head and
    the system heads use scratch column ``row`` of ``work_f``, ``work_i``, ``run_i``."""
    r, side, count = candidate(j, c, slot_offset, is_nominal, hist_count, min_coverage,
                               covered)
    if count == 0:
        return -math.inf, -1
    first = r == slot_offset[j]
    last = slot_offset[j + 1] - 1
    if kind == SYSTEM_HEADS:
        return _system_quality(r, side, is_nominal, first, last, hist_g, hist_h, labels,
                               head_mode, params, inv_scale, work_f[:, row], work_i[:, row],
                               run_i[:, row])
    if kind == COMPLETE_HEAD:
        return _label_quality(r, side, is_nominal, first, last, hist_g, hist_h, labels,
                              HEAD_COMPLETE, params, inv_scale, work_f[:, 0])
    values = work_f[:, row] if head_mode == HEAD_SECO_PARTIAL else work_f[:, 0]
    return _label_quality(r, side, is_nominal, first, last, hist_g, hist_h, labels,
                          head_mode, params, inv_scale, values)
