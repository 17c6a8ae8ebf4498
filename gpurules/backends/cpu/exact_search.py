"""Pre-sorted exact search for the best condition (CPU, Numba).

For every sampled feature the covered examples are visited in sorted order with running
sums of their (weighted, fixed-point) statistics. Between two adjacent distinct values the
``<=`` candidate is scored from the running sums and the ``>`` candidate from
``totals - running sums``. Nominal features are visited group by group (``==`` from the
group's sums, ``!=`` from ``totals - group``). Examples missing the feature are absent from
the sorted vectors; their statistics are excluded from that feature's totals.

Coverage is a mask with an indicator value (Rapp et al. 2023, Fig. 8): example ``i`` is
covered while ``mask[i] == indicator``. A rule's coverage only shrinks, so the search keeps
each feature's covered entries (as mlrl-boomer filters its feature vectors): ``kept_index``
int32 (A, n) and ``kept_value`` float32 (A, n) hold, in sorted order, the examples covered
when the feature was last searched, ``kept_len`` int64 (A,) how many (-1: not searched
since the rule began; the backend resets it per rule). A search reads the kept entries
instead of the whole sorted row and compacts them to the current coverage in the same
pass, so its cost falls with the coverage at the feature's last visit instead of staying
O(n). The sums are exact integers, so the visit order changes no result.

The sorted order visits the statistics rows, weights and mask at random; a visit prefetches
those of the entry ``AHEAD`` places later (``jit.prefetch``), so that at n = 10^5 to 10^6,
where they outgrow the caches, the waits for memory overlap (a search of the whole coverage
took 2.3-2.5x less time there; issue 17, docs/benchmarks.md). Statistics that fit in the
caches (:func:`prefetches`) are not prefetched: there the prefetches cost fits 10-20 %.
A walk that meets uncovered entries prefetches in two stages (:func:`prefetch_covered`):
the mask entry ``2 AHEAD`` places later, and the rows only of a covered example, so that a
rule of small coverage does not fetch the rows of the entries it skips (session 63: the
sparse search on tmc2007-500 and bibtex was 19 % and 33 % slower with those prefetches).

Statistics: ``g`` (n, K) and ``h`` (n, W), int64 or int32 (``statistic_type``; the sums
are int64 either way): ``W = K`` for decomposable losses,
``W = K (K + 1) / 2`` (the packed Hessian) for non-decomposable ones; a sum of ``g`` uses
its first K entries, a sum of ``h`` its first W. ``scratch`` is the tuple ``(sums int64
(S, 8, max(K, W)), work_f float64 (S, F), work_i int64 (S, I), gains float64 (S, K))``: per
search slot ``j`` the running sums and feature totals (rows), the head's work row
(``objectives.multi_output``) and a row for the boosting heads' per-label gains
(``quality.boosting_quality``). The work arrays are None when the head needs none and the
statistics are decomposable; the searches are then compiled without the multi-output code
(see :func:`accumulate`, :func:`_quality`).
"""

import numba as nb
import numpy as np
from numba.core import types

from gpurules.backends.thresholds import admissible, midpoint
from gpurules.conditions import OP_EQ, OP_GR, OP_LEQ, OP_NEQ, satisfies
from gpurules.jit.cache import njit
from gpurules.jit.helpers import overload, register_jitable
from gpurules.jit.prefetch import beyond_cache, prefetch_row
from gpurules.jit.variants import parallel_kernel
from gpurules.objectives.compiled import family_side_quality, work_views
from gpurules.objectives.quality import (CompleteHeadMode, complete_pair_quality, head_code,
                                         side_quality)


#: how many sorted entries ahead the searches prefetch an example (:func:`prefetch_example`)
AHEAD = 8


@njit
def prefetch_example(i, g, h, weights):
    """Prefetch what a search sums of example ``i``: its statistics rows and weight
    (``jit.prefetch``; no value changes). Not inlined by Numba: compiled once per
    signature, so the searches' many variants and the sparse search's two phases do not
    each type it again (LLVM still inlines the machine code). The callers prefetch only
    where :func:`prefetches` says so."""
    prefetch_row(g, i)
    prefetch_row(h, i)
    prefetch_row(weights, i)


@register_jitable(forceinline=True)
def prefetch_covered(index, p, hi, step, g, h, mask, indicator, weights):
    """Two-stage prefetch for a walk over ``index[p], index[p + step], ...`` (``hi``
    excluded) that skips uncovered examples: the mask entry of the example ``2 AHEAD``
    visits on, and the statistics rows and weight of the one ``AHEAD`` visits on only if
    it is covered (its mask entry was asked for ``AHEAD`` visits earlier). Nothing past
    ``hi``."""
    ahead = p + step * AHEAD
    if (ahead - hi) * step >= 0:
        return
    further = ahead + step * AHEAD
    if (further - hi) * step < 0:
        prefetch_row(mask, index[further])
    i = index[ahead]
    if mask[i] == indicator:
        prefetch_example(i, g, h, weights)


@nb.njit(inline="always")
def prefetches(g, h):
    """Whether a search over the statistics g, h prefetches (``jit.prefetch.beyond_cache``)."""
    return beyond_cache(g.nbytes + h.nbytes)


# The search loop's helpers that score and keep candidates (``_keep``, ``_take``,
# ``_consider``, ``_boundary``) and ``_keep_covered`` are ``forceinline``: Numba compiles
# each once per signature and LLVM inlines the machine code. Inlined at Numba's IR level
# (``inline="always"``) they were typed again at every call site, and Numba deep-copies the
# callee's IR with the caller's whole scope once per block. With the rule loops' two levels
# fewer (``refine._team_search``), a cold first BOOMER fit on emotions compiles for 15.8
# instead of 18.2 CPU-s, to the same models (``docs/benchmarks.md``, session 60). The
# per-example adders (``accumulate``) stay inlined by Numba: compiled apart, they made the
# warm default fit on yeast ~7 % slower.
@register_jitable(forceinline=True)
def _keep(j, q, lab, op, thr, count, complement, run_g, run_h, tot_g, tot_h, out_q, out_op,
          out_thr, out_cnt, out_label, out_g, out_h):
    """Write a candidate into slot ``j``; its sums are ``run_*`` or ``tot_* - run_*``."""
    out_q[j] = q
    out_op[j] = op
    out_thr[j] = thr
    out_cnt[j] = count
    out_label[j] = lab
    if complement:
        for k in range(out_g.shape[1]):
            out_g[j, k] = tot_g[k] - run_g[k]
        for k in range(out_h.shape[1]):
            out_h[j, k] = tot_h[k] - run_h[k]
    else:
        for k in range(out_g.shape[1]):
            out_g[j, k] = run_g[k]
        for k in range(out_h.shape[1]):
            out_h[j, k] = run_h[k]


def _evaluate_py(j, op, thr, count, complement, run_g, run_h, tot_g, tot_h, labels, head_mode,
                 params, inv_scale, min_coverage, covered, min_quality, work, gains, out_q,
                 out_op, out_thr, out_cnt, out_label, out_g, out_h):
    """Score one candidate and keep it in slot ``j`` if it is canonically better: a larger
    quality, then a smaller threshold, then the smaller op (``<=`` before ``>``, ``==``
    before ``!=``). Slot ``j`` starts empty (``out_op[j] = -1``) and only takes candidates
    above ``min_quality`` that are ``thresholds.admissible`` for a rule covering
    ``covered`` examples."""
    if not admissible(count, covered, min_coverage):
        return
    q, lab = _quality(run_g, run_h, tot_g, tot_h, complement, labels, head_mode, inv_scale,
                      params, work, gains)
    if out_op[j] < 0:
        better = q > min_quality
    else:
        better = q > out_q[j] or (q == out_q[j] and (
            thr < out_thr[j] or (thr == out_thr[j] and op < out_op[j])))
    if better:
        _keep(j, q, lab, op, thr, count, complement, run_g, run_h, tot_g, tot_h, out_q, out_op,
              out_thr, out_cnt, out_label, out_g, out_h)


# Used where candidates do not arrive in canonical order (sparse phases, nominal values).
# Ordered scans call _consider, which keeps the best quality in a local: calling this per
# boundary made the dense search about 1.3x slower.
_evaluate = njit(_nrt=False)(_evaluate_py)  # no reference counting (jit/variants.py)


@register_jitable(forceinline=True)
def _take(best_q, q, lab, j, op, thr, count, complement, run_g, run_h, tot_g, tot_h, out_q,
          out_op, out_thr, out_cnt, out_label, out_g, out_h):
    """Keep the candidate of quality ``q`` (label ``lab``) in slot ``j`` if ``q`` beats
    ``best_q`` (so ties keep the canonical first); returns the new best quality."""
    if q > best_q:
        _keep(j, q, lab, op, thr, count, complement, run_g, run_h, tot_g, tot_h, out_q, out_op,
              out_thr, out_cnt, out_label, out_g, out_h)
        return q
    return best_q


@register_jitable(forceinline=True)
def _consider(best_q, j, op, thr, count, complement, run_g, run_h, tot_g, tot_h, labels,
              head_mode, params, inv_scale, work, gains, out_q, out_op, out_thr, out_cnt,
              out_label, out_g, out_h):
    """Score one candidate of a scan that visits thresholds in ascending order, ``<=``
    before ``>``; keep it in slot ``j`` if its quality beats ``best_q`` (so ties keep the
    canonical first). The caller checks the coverage (``thresholds.admissible``). Returns
    the new best quality."""
    q, lab = _quality(run_g, run_h, tot_g, tot_h, complement, labels, head_mode, inv_scale,
                      params, work, gains)
    return _take(best_q, q, lab, j, op, thr, count, complement, run_g, run_h, tot_g, tot_h,
                 out_q, out_op, out_thr, out_cnt, out_label, out_g, out_h)


@nb.njit(inline="always")
def _add(run_g, run_h, g, h, i, w):
    """run += w * row i of (g, h) of decomposable statistics (g and h of one width). Unit
    weights skip the int64 multiply (which has no AVX2 vector form), so the common case
    vectorises."""
    if w == 1:
        for k in range(g.shape[1]):
            run_g[k] += g[i, k]
            run_h[k] += h[i, k]
    else:
        for k in range(g.shape[1]):
            run_g[k] += w * g[i, k]
            run_h[k] += w * h[i, k]


@nb.njit(inline="always")
def _add_wide(run_g, run_h, g, h, i, w):
    """:func:`_add` for ``h`` wider than ``g`` (packed Hessians)."""
    if w == 1:
        for k in range(g.shape[1]):
            run_g[k] += g[i, k]
        for k in range(h.shape[1]):
            run_h[k] += h[i, k]
    else:
        for k in range(g.shape[1]):
            run_g[k] += w * g[i, k]
        for k in range(h.shape[1]):
            run_h[k] += w * h[i, k]


@nb.njit(inline="always")
def accumulate(run_g, run_h, g, h, i, w, wide):
    """run += w * row i of (g, h): :func:`_add` when ``wide`` is None (statistics of one
    width), else :func:`_add_wide` (``wide``: the search's work rows, which every search
    over non-decomposable statistics has). ``wide is None`` is a constant of the argument
    types, so the decomposable searches compile the fused loop alone (an extra loop or a
    run-time branch in it cost them ~8%)."""
    if wide is None:
        _add(run_g, run_h, g, h, i, w)
    else:
        _add_wide(run_g, run_h, g, h, i, w)


def _work_row(work_f, work_i, j, m):
    """Slot ``j``'s head work (``multi_output.work_views`` of ``work_f[j]``, ``work_i[j]`` for
    m outputs), or None when the search needs none (``work_f is None``, decided by the
    argument types)."""


@overload(_work_row, inline="always")
def _work_row_typed(work_f, work_i, j, m):
    if isinstance(work_f, types.NoneType):
        return lambda work_f, work_i, j, m: None
    return lambda work_f, work_i, j, m: work_views(work_f[j], work_i[j], m)


def _quality(run_g, run_h, tot_g, tot_h, complement, labels, head_mode, inv_scale, params,
             work, gains):
    """``side_quality``; without ``work`` (None) it is compiled without the multi-output
    heads, so the decomposable searches run the code they ran before those existed (passing
    the work rows cost them ~7%). ``gains``: the slot's float64 (K,) row for the boosting
    heads' vectorised loop (``quality.boosting_quality``). ``forceinline`` as the quality
    chain (``objectives.quality``, "How this chain is compiled"): compiled once per
    signature, inlined by LLVM."""


@overload(_quality, jit_options={"forceinline": True})
def _quality_typed(run_g, run_h, tot_g, tot_h, complement, labels, head_mode, inv_scale,
                   params, work, gains):
    # a quality.family_head_mode compiles its family's heads only; an int all of them
    quality_of = family_side_quality.get(getattr(head_mode, "instance_class", None),
                                         side_quality)
    if isinstance(work, types.NoneType):
        def without_work(run_g, run_h, tot_g, tot_h, complement, labels, head_mode, inv_scale,
                         params, work, gains):
            return quality_of(run_g, run_h, tot_g, tot_h, complement, labels,
                              head_code(head_mode), inv_scale, params, None, gains)
        return without_work

    def with_work(run_g, run_h, tot_g, tot_h, complement, labels, head_mode, inv_scale,
                  params, work, gains):
        return quality_of(run_g, run_h, tot_g, tot_h, complement, labels, head_code(head_mode),
                          inv_scale, params, work, gains)
    return with_work


def _boundary(best_q, j, ops, thr, cnt, tot_count, covered, min_coverage, run_g, run_h, tot_g,
              tot_h, labels, head_mode, params, inv_scale, work, gains, out_q, out_op,
              out_thr, out_cnt, out_label, out_g, out_h):
    """Consider both candidates of a boundary of an ordered scan, each if
    ``thresholds.admissible``: ``ops[0] thr`` (the ``cnt`` examples of the running sums)
    before ``ops[1] thr`` (the other ``tot_count - cnt``); returns the new best quality.

    A complete head's search over decomposable statistics (the head family's type, no work
    rows, a gains buffer) scores both sides at once (``quality.complete_pair_quality``:
    the same bits as one side at a time) and compiles no other quality code; the other
    searches score one side after the other (:func:`_consider`)."""


@overload(_boundary, jit_options={"forceinline": True})
def _boundary_typed(best_q, j, ops, thr, cnt, tot_count, covered, min_coverage, run_g, run_h,
                    tot_g, tot_h, labels, head_mode, params, inv_scale, work, gains, out_q,
                    out_op, out_thr, out_cnt, out_label, out_g, out_h):
    if getattr(head_mode, "instance_class", None) is CompleteHeadMode and \
            isinstance(work, types.NoneType) and isinstance(gains, types.Array):
        def paired(best_q, j, ops, thr, cnt, tot_count, covered, min_coverage, run_g, run_h,
                   tot_g, tot_h, labels, head_mode, params, inv_scale, work, gains, out_q,
                   out_op, out_thr, out_cnt, out_label, out_g, out_h):
            q_run, q_rest = complete_pair_quality(run_g, run_h, tot_g, tot_h, labels,
                                                  inv_scale, params[0], params[1], gains)
            if admissible(cnt, covered, min_coverage):
                best_q = _take(best_q, q_run, -1, j, ops[0], thr, cnt, False, run_g, run_h,
                               tot_g, tot_h, out_q, out_op, out_thr, out_cnt, out_label,
                               out_g, out_h)
            if admissible(tot_count - cnt, covered, min_coverage):
                best_q = _take(best_q, q_rest, -1, j, ops[1], thr, tot_count - cnt, True,
                               run_g, run_h, tot_g, tot_h, out_q, out_op, out_thr, out_cnt,
                               out_label, out_g, out_h)
            return best_q
        return paired

    def one_by_one(best_q, j, ops, thr, cnt, tot_count, covered, min_coverage, run_g, run_h,
                   tot_g, tot_h, labels, head_mode, params, inv_scale, work, gains, out_q,
                   out_op, out_thr, out_cnt, out_label, out_g, out_h):
        for side in range(2):
            side_cnt = tot_count - cnt if side else cnt
            if admissible(side_cnt, covered, min_coverage):
                best_q = _consider(best_q, j, ops[side], thr, side_cnt, side == 1, run_g,
                                   run_h, tot_g, tot_h, labels, head_mode, params, inv_scale,
                                   work, gains, out_q, out_op, out_thr, out_cnt, out_label,
                                   out_g, out_h)
        return best_q
    return one_by_one


@register_jitable(forceinline=True)
def _keep_covered(src_index, src_value, m, dst_index, dst_value, mask, indicator):
    """Copy the covered entries among the first ``m`` of ``src_*`` to the front of
    ``dst_*`` (which may be ``src_*`` itself); returns how many, as an int64: from
    ``k = 0`` Numba inferred the literal 0 in some searches, and compiled
    :func:`_feature_totals` once more for that literal."""
    k = np.int64(0)
    for pos in range(m):
        if pos + AHEAD < m:
            prefetch_row(mask, src_index[pos + AHEAD])
        i = src_index[pos]
        if mask[i] == indicator:
            dst_index[k] = i
            dst_value[k] = src_value[pos]
            k += 1
    return k


@njit
def _feature_totals(index, m, weights, g, h, tot_g, tot_h, wide):
    """Sums over the examples ``index[:m]`` with a non-zero weight into tot_*; returns
    their count. ``wide``: as for :func:`accumulate`."""
    tot_g[:] = 0
    tot_h[:] = 0
    count = 0
    far = prefetches(g, h)
    for pos in range(m):
        if far and pos + AHEAD < m:
            prefetch_example(index[pos + AHEAD], g, h, weights)
        i = index[pos]
        if weights[i] != 0:
            accumulate(tot_g, tot_h, g, h, i, weights[i], wide)
            count += 1
    return count


@njit
def _totals_without(index, lo, hi, mask, indicator, weights, g, h, tot_g, tot_h, tot_count,
                    out_g, out_h, wide):
    """The totals ``tot_*`` (of ``tot_count`` examples) less the covered examples of
    non-zero weight among ``index[lo:hi]``, into out_*; returns their count. ``wide``: as
    for :func:`accumulate`."""
    for k in range(tot_g.shape[0]):  # element loops: a slice copy would allocate
        out_g[k] = tot_g[k]
    for k in range(tot_h.shape[0]):
        out_h[k] = tot_h[k]
    far = prefetches(g, h)
    for pos in range(lo, hi):
        if far:
            prefetch_covered(index, pos, hi, 1, g, h, mask, indicator, weights)
        i = index[pos]
        w = weights[i]
        if mask[i] == indicator and w != 0:
            accumulate(out_g, out_h, g, h, i, -w, wide)
            tot_count -= 1
    return tot_count


@njit(_nrt=False)  # see jit/variants.py: no reference counting in the search loop
def _search_feature(j, features, sorted_index, sorted_value, n_present, nominal, kept_index,
                    kept_value, kept_len, mask, indicator, weights, g, h, tot_g, tot_h,
                    tot_count, labels, head_mode, params, inv_scale, min_coverage,
                    min_quality, scratch, out_q, out_op, out_thr, out_cnt, out_label, out_g,
                    out_h):
    """Best condition on feature ``f = features[j]``; writes slot ``j`` of the ``out_*``
    arrays and leaves the feature's covered entries in ``kept_*`` (see the module).

    ``scratch`` (see the module): slot ``j``'s rows hold the running sums and the feature
    totals, and the head's work row. ``tot_count``: the rule's covered count (before a
    feature's missing values leave its totals), which a candidate must cover fewer of
    (``thresholds.admissible``)."""
    f = features[j]
    covered = tot_count
    sums = scratch[0][j]
    work = _work_row(scratch[1], scratch[2], j, labels.shape[0])
    gains = scratch[3][j]
    run_g, run_h = sums[0], sums[1]
    run_g[:] = 0
    run_h[:] = 0
    dst_index, dst_value = kept_index[f], kept_value[f]
    if kept_len[f] < 0:  # not visited since the rule started: the whole sorted row
        src_index, src_value, m = sorted_index[f], sorted_value[f], n_present[f]
    else:
        src_index, src_value, m = dst_index, dst_value, kept_len[f]
    n = mask.shape[0]
    if n_present[f] < n:  # missing values: the totals of the covered present ones
        if n - n_present[f] < m:  # fewer missing than present: the rule's totals less them
            tot_count = _totals_without(sorted_index[f], n_present[f], n, mask, indicator,
                                        weights, g, h, tot_g, tot_h, tot_count, sums[2],
                                        sums[3], work)
        else:  # the sums of the covered present ones (exact integers: the same totals)
            m = _keep_covered(src_index, src_value, m, dst_index, dst_value, mask, indicator)
            src_index, src_value = dst_index, dst_value
            tot_count = _feature_totals(dst_index, m, weights, g, h, sums[2], sums[3], work)
        tot_g, tot_h = sums[2], sums[3]
    best_q = min_quality
    out_op[j] = -1
    cnt = 0
    prev = np.float32(0.0)
    v = prev
    i = 0
    w = weights[0]
    is_nominal = nominal[f]
    kept = 0
    far = prefetches(g, h)
    for pos in range(m + 1):
        at_end = pos == m
        if not at_end:
            if far:
                prefetch_covered(src_index, pos, m, 1, g, h, mask, indicator, weights)
            i = src_index[pos]
            if mask[i] != indicator:
                continue
            value = src_value[pos]
            dst_index[kept] = i
            dst_value[kept] = value
            kept += 1
            w = weights[i]
            if w == 0:
                continue
            v = value
        if cnt > 0 and (at_end or v > prev):
            # a boundary after the group of examples with value ``prev``
            if is_nominal:
                ops = (OP_EQ, OP_NEQ)
                thr = prev
            else:
                ops = (OP_LEQ, OP_GR)
                thr = midpoint(prev, v) if not at_end else prev
            if is_nominal or not at_end:  # ``<= max`` covers everything, ``> max`` nothing
                best_q = _boundary(best_q, j, ops, thr, cnt, tot_count, covered,
                                   min_coverage, run_g, run_h, tot_g, tot_h, labels,
                                   head_mode, params, inv_scale, work, gains, out_q, out_op,
                                   out_thr, out_cnt, out_label, out_g, out_h)
            if is_nominal and not at_end:
                run_g[:] = 0
                run_h[:] = 0
                cnt = 0
        if at_end:
            break
        accumulate(run_g, run_h, g, h, i, w, work)
        cnt += 1
        prev = v
    kept_len[f] = kept


# Slot ``j`` of :func:`search` alone (its arguments, ``j`` int64 first): the body of its
# ``prange``, and what a thread of a team takes as one task (``refine``'s team search). One
# compiled function for both, so that a rule loop holds one copy of the search's code, and
# no wrapper around it: each compiled level is a library in which LLVM optimises and
# compiles the search's code again (a forwarding ``feature_task`` cost a cold first fit
# ~0.6 CPU-s).
feature_task = _search_feature


def _search_all_py(features, sorted_index, sorted_value, n_present, nominal, kept_index,
                   kept_value, kept_len, mask, indicator, weights, g, h, tot_g, tot_h,
                   tot_count, labels, head_mode, params, inv_scale, min_coverage, min_quality,
                   scratch, out_q, out_op, out_thr, out_cnt, out_label, out_g, out_h):
    for j in nb.prange(features.shape[0]):
        feature_task(np.int64(j), features, sorted_index, sorted_value, n_present, nominal,
                     kept_index, kept_value, kept_len, mask, indicator, weights, g, h, tot_g,
                     tot_h, tot_count, labels, head_mode, params, inv_scale, min_coverage,
                     min_quality, scratch, out_q, out_op, out_thr, out_cnt, out_label, out_g,
                     out_h)


# one kernel for every thread count (``jit.parallel_kernel``)
search = parallel_kernel(_search_all_py)


@nb.njit(inline="always")
def _apply_row(op, threshold, index, value, m, mask, indicator):
    """Move the covered examples among ``index[:m]`` whose value satisfies ``op threshold``
    to ``indicator + 1``."""
    for pos in range(m):
        i = index[pos]
        if mask[i] == indicator and satisfies(op, value[pos], threshold):
            mask[i] = indicator + 1


@njit
def apply_step(f, op, threshold, data, mask, indicator):
    """Apply ``x_f op threshold`` to the coverage: the covered examples that satisfy it move
    to ``indicator + 1``; returns the new indicator (the fused refinement's apply step).
    ``data``: the search's arrays (``representations.SearchState.data``). Walks the
    feature's kept entries when it has them (a superset of the covered ones), else its
    whole sorted row."""
    sorted_index, sorted_value, n_present, _, kept_index, kept_value, kept_len = data
    if kept_len[f] < 0:
        _apply_row(op, threshold, sorted_index[f], sorted_value[f], n_present[f], mask,
                   indicator)
    else:
        _apply_row(op, threshold, kept_index[f], kept_value[f], kept_len[f], mask, indicator)
    return indicator + 1
