"""Three-phase exact search over sparse features (CPU, Numba; Rapp et al. 2023).

Per feature only the explicit entries are visited: phase I walks the values below the
implicit value ``z`` ascending, phase II the values above ``z`` descending, and phase III
scores the thresholds around the implicit entries from ``totals - phase sums``, so the
implicit entries are never enumerated. Nominal features are scored per value group
(``==`` / ``!=``), the implicit value's group again by difference.

The search's data are ``(indptr, index, value, kept, n_present, nominal, z, restore)``
(``representations._sparse``). Read as it is (:data:`search`, :func:`apply_step`), ``kept``
is ``n_neg`` int64 (A,), each feature's entries below ``z``, and ``restore`` None.

Compacting (:data:`compacting`, where the statistics outgrow the caches and the search has
one thread; on two, the compaction made fits slower): a rule's coverage only shrinks, so,
as the dense search (``exact_search``) keeps each feature's covered entries, the search
compacts them in place. ``index`` and ``value`` are then a working copy
of the representation's, and ``kept`` int64 (A, 2) says, per feature, where its entries
below ``z`` end and those above ``z`` begin in its segment. Phase I moves the covered
entries it visits to the front of the part below ``z``, phase II (descending) to the back
of the part above it, so a later search of the feature in the rule visits only what was
covered at its last one; the missing entries stay where they are. ``restore`` = (the
representation's ``index`` and ``value``, ``n_neg``, ``epochs`` int64 (A + 1,)): a feature
whose epoch is not the rule's (``epochs[A]``, which the backend advances per rule) gets its
entries back before it is read (:func:`_ensure`), so a rule costs nothing for the features
it does not search. On small data (the statistics in cache) the compaction cost more than
it saved, and any data it carries slows the calls (docs/benchmarks.md, session 27): two
variants, each compiled on first use.

Ties are broken canonically — larger quality, then smaller threshold, then ``<=`` before
``>`` (``==`` before ``!=``) — which is the order the dense search meets the same
candidates in, so dense and sparse inputs give the same model.

Compiled: the phase walk (:func:`_phase`) is a function of its own, called for phases I
and II (not inlined by Numba: each inlined copy was typed again), and each place that
scores candidates scores a boundary's pair in one loop (:func:`_score_pair`): the
per-feature search had 14 inlined scoring calls, and Numba spent 10-11 of a first sparse
fit's ~30 CPU-s typing and inlining them (docs/benchmarks.md, session 38). LLVM still
inlines the scoring into the compiled walk.
"""

import numba as nb
import numpy as np

from gpurules.backends.cpu.exact_search import (_evaluate, _totals_without, _work_row,
                                                accumulate, prefetch_covered, prefetches)
from gpurules.backends.thresholds import midpoint
from gpurules.conditions import OP_EQ, OP_GR, OP_LEQ, OP_NEQ, satisfies
from gpurules.jit.cache import njit
from gpurules.jit.variants import parallel_kernel, variant


COMPACTS = None  # bound per variant (jit.variants.variant): whether the search compacts
_PHASE = None  # bound per variant: the compiled phase walk of that variant


@nb.njit(inline="always")
def _ensure(f, indptr, index, value, kept, restore):
    """Give feature ``f`` its representation's entries in the working copy and reset its
    ``kept`` bounds, unless that was done in this rule (``restore = (index, value, n_neg,
    epochs)``; ``epochs[f] == epochs[-1]``)."""
    entries_index, entries_value, n_neg, epochs = restore
    if epochs[f] == epochs[-1]:
        return
    start, below = indptr[f], indptr[f] + n_neg[f]
    for p in range(start, indptr[f + 1]):
        index[p] = entries_index[p]
        value[p] = entries_value[p]
    kept[f, 0] = below
    kept[f, 1] = below
    epochs[f] = epochs[-1]


def _search_sparse_feature(j, features, indptr, index, value, kept, n_present, nominal, z,
                           restore, mask, indicator, weights, g, h, tot_g, tot_h, tot_count,
                           labels, head_mode, params, inv_scale, min_coverage, min_quality,
                           scratch, out_q, out_op, out_thr, out_cnt, out_label, out_g, out_h):
    """Best condition on sparse feature ``f = features[j]``; writes slot ``j`` of the
    ``out_*`` arrays; in the variant that ``COMPACTS``, gives the feature its entries first
    (:func:`_ensure`) and keeps the covered ones (module docstring). Slot ``j`` of the
    search alone (its arguments, ``j`` int64 first): the body of its ``prange`` and what a
    thread of a team takes as one task (``refine``'s team search), one compiled function
    for both (see ``exact_search.feature_task``).

    ``scratch`` (as in ``exact_search``): slot ``j``'s rows hold the phase sums, the current
    value group and the feature totals, so that no memory is allocated per feature."""
    f = features[j]
    if COMPACTS:
        _ensure(f, indptr, index, value, kept, restore)
    covered = tot_count  # the rule's count, which a candidate must not reach (admissible)
    start, end = indptr[f], indptr[f + 1]
    pos_end = start + n_present[f]
    sums = scratch[0][j]
    work = _work_row(scratch[1], scratch[2], j, labels.shape[0])
    gains = scratch[3][j]
    sums[:6] = 0  # rows 6 and 7 are written before they are read
    neg_g, neg_h, pos_g, pos_h = sums[0], sums[1], sums[2], sums[3]
    grp_g, grp_h = sums[4], sums[5]
    if pos_end < end:  # covered examples missing this feature leave its totals
        tot_count = _totals_without(index, pos_end, end, mask, indicator, weights, g, h,
                                    tot_g, tot_h, tot_count, sums[6], sums[7], work)
        tot_g, tot_h = sums[6], sums[7]
    out_op[j] = -1
    is_nominal = nominal[f]
    if COMPACTS:  # (a constant: the other branch is not compiled)
        neg_end, pos_start = kept[f, 0], kept[f, 1]
    else:
        neg_end = pos_start = start + kept[f]
    # the scoring arguments travel as one tuple: Python passes a call of more than 30
    # arguments as *args, which Numba compiles into a tuple built per call
    args = (labels, head_mode, params, inv_scale, min_coverage, covered, min_quality, work,
            gains, out_q, out_op, out_thr, out_cnt, out_label, out_g, out_h)
    # phase I: below z, ascending; phase II: above z, descending. The steps and phase I's
    # "no prior phase" (-1 groups, 0 entries) are int64 values, not literals: Numba compiles
    # a call with a literal argument for that literal, so the two phases would compile the
    # walk twice
    up, down, no_groups, no_entries = np.int64(1), np.int64(-1), np.int64(-1), np.int64(0)
    neg_max, n_lo, groups_lo, neg_kept = _PHASE(
        j, start, neg_end, up, is_nominal, index, value, z, mask, indicator, weights,
        g, h, tot_g, tot_h, tot_count, no_groups, no_entries, neg_g, neg_h, grp_g, grp_h,
        work, args)
    pos_min, n_hi, groups_hi, pos_kept = _PHASE(
        j, pos_end - 1, pos_start - 1, down, is_nominal, index, value, z, mask,
        indicator, weights, g, h, tot_g, tot_h, tot_count, groups_lo, n_lo, pos_g, pos_h,
        grp_g, grp_h, work, args)
    if COMPACTS:
        kept[f, 0], kept[f, 1] = neg_kept, pos_kept + 1
    _phase_three(j, z, is_nominal, neg_g, neg_h, pos_g, pos_h, n_lo, n_hi, neg_max, pos_min,
                 groups_lo == 1 and groups_hi == 0, tot_g, tot_h, tot_count, grp_g, grp_h,
                 args)


@nb.njit(inline="always")
def _second_of_two(prior_groups, prior_cnt, tot_count, cnt):
    """Whether phase II's first group, closed with ``cnt`` entries of the phase, is the larger
    value of a nominal feature whose covered examples hold exactly two values: phase I found
    ``prior_groups`` groups of ``prior_cnt`` entries (``prior_groups < 0``: not phase II).

    Then ``== larger`` covers what ``!= smaller`` covers and ``!= larger`` what ``== smaller``
    does, with equal sums and a larger threshold, so the canonical order never picks them:
    the search skips their (per-label) scoring."""
    n_zero = tot_count - prior_cnt - cnt
    return (prior_groups == 0 and n_zero > 0) or (prior_groups == 1 and n_zero == 0)


@nb.njit(inline="always")
def _score(j, op, thr, count, complement, run_g, run_h, tot_g, tot_h, a):
    """``exact_search._evaluate`` with its trailing arguments packed in the tuple ``a``.

    ``op``, ``thr``, ``count`` and ``complement`` are passed with one type each: the call
    sites pass constants (typed as literals) and float32 or float64 thresholds, and every
    distinct combination compiled its own ``_evaluate`` with the head's quality code
    inlined (14 of them, 41 of the 60 CPU-s of a first sparse fit, before :func:`_score_pair`
    left one call site per place)."""
    _evaluate(j, np.int8(op), np.float32(thr), np.int64(count), complement != 0, run_g, run_h,
              tot_g, tot_h, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10],
              a[11], a[12], a[13], a[14], a[15])


@nb.njit(inline="always")
def _score_pair(j, pair, thr, first_complement, run_g, run_h, tot_g, tot_h, a):
    """Score a boundary's two candidates, ``pair = (op, count, op, count)``: the second
    the complement of the first (``first_complement``: whether the first's sums are
    ``tot - run``), from one call site of :func:`_score` (the module's "Compiled")."""
    for side in range(2):
        _score(j, pair[2 * side], thr, pair[2 * side + 1], first_complement != (side == 1),
               run_g, run_h, tot_g, tot_h, a)


def _phase(j, lo, hi, step, is_nominal, index, value, z, mask, indicator, weights, g,
           h, tot_g, tot_h, tot_count, prior_groups, prior_cnt, acc_g, acc_h, grp_g, grp_h,
           work, args):
    """Walk entries ``lo, lo + step, ...`` (``hi`` excluded) with running sums ``acc``; in
    the variant that ``COMPACTS``, moving the covered ones (of any weight: the weights may
    change in a rule) to ``lo, lo + step, ...`` in the same arrays (a write never passes
    the read).

    Ascending (step 1): ``<=`` is the running sum; descending (step -1): ``>`` is. Nominal
    features accumulate each value group in ``grp`` and fold it into ``acc`` at its end.
    ``prior_groups``, ``prior_cnt``: phase I's value groups and covered entries when this is
    phase II, else -1 and 0 (see :func:`_second_of_two`).
    ``work``: the head's work row (also ``args[7]``), ``accumulate``'s width flag; ``args``:
    the trailing arguments of ``exact_search._evaluate``.
    Returns (the last value visited, the number of covered entries, the number of value
    groups, where the moved entries end: one step past the last)."""
    cnt = 0
    dst = lo
    gcnt = 0
    groups = 0
    prev = z
    v = z
    i = 0
    w = weights[0]
    far = prefetches(g, h)
    for p in range(lo, hi + step, step):
        at_end = p == hi
        if not at_end:
            if far:
                prefetch_covered(index, p, hi, step, g, h, mask, indicator, weights)
            i = index[p]
            if mask[i] != indicator:
                continue
            v = value[p]
            if COMPACTS:
                index[dst] = i
                value[dst] = v
                dst += step
            w = weights[i]
            if w == 0:
                continue
        if cnt > 0 and (at_end or v != prev):
            # the boundary's two candidates: ``==`` / ``!=`` of a nominal value group, or
            # ``<=`` / ``>`` of a numeric threshold (none at the phase's end)
            if is_nominal:
                scored = not (at_end and groups == 0 and prior_groups >= 0
                              and _second_of_two(prior_groups, prior_cnt, tot_count, cnt))
                pair = (OP_EQ, gcnt, OP_NEQ, tot_count - gcnt)
                thr, first_complement, run_g, run_h = prev, False, grp_g, grp_h
            else:
                scored = not at_end
                thr = midpoint(prev, v) if step == 1 else midpoint(v, prev)
                below = step == 1  # whether the running sums are the ``<=`` side
                pair = (OP_LEQ, cnt if below else tot_count - cnt,
                        OP_GR, tot_count - cnt if below else cnt)
                first_complement, run_g, run_h = not below, acc_g, acc_h
            if scored:
                _score_pair(j, pair, thr, first_complement, run_g, run_h, tot_g, tot_h, args)
            if is_nominal:
                groups += 1
                for k in range(acc_g.shape[0]):
                    acc_g[k] += grp_g[k]
                for k in range(acc_h.shape[0]):
                    acc_h[k] += grp_h[k]
                grp_g[:] = 0
                grp_h[:] = 0
                gcnt = 0
        if at_end:
            break
        if is_nominal:
            accumulate(grp_g, grp_h, g, h, i, w, work)
            gcnt += 1
        else:
            accumulate(acc_g, acc_h, g, h, i, w, work)
        cnt += 1
        prev = v
    return prev, cnt, groups, dst


@nb.njit(inline="always")
def _phase_three(j, z, is_nominal, neg_g, neg_h, pos_g, pos_h, n_neg, n_pos, neg_max,
                 pos_min, one_group_below, tot_g, tot_h, tot_count, exp_g, exp_h, args):
    """Candidates next to the implicit value, scored from ``totals - phase sums``.
    ``one_group_below``: the explicit entries are one value group below ``z``; then a nominal
    feature's ``z`` group is the larger of two values and is not scored (as in
    :func:`_second_of_two`). ``args``: as for :func:`_phase`."""
    n_zero = tot_count - n_neg - n_pos
    if is_nominal:
        if n_zero > 0 and not one_group_below:  # exp_*: the explicit entries' sums (scratch)
            for k in range(exp_g.shape[0]):
                exp_g[k] = neg_g[k] + pos_g[k]
            for k in range(exp_h.shape[0]):
                exp_h[k] = neg_h[k] + pos_h[k]
            _score_pair(j, (OP_EQ, n_zero, OP_NEQ, n_neg + n_pos), z, True, exp_g, exp_h,
                        tot_g, tot_h, args)
        return
    for side in range(2):  # the thresholds below and above z (or between, without zeros)
        if n_zero > 0 and side == 0:
            if n_neg == 0:
                continue
            thr, pair = midpoint(neg_max, z), (OP_LEQ, n_neg, OP_GR, tot_count - n_neg)
            first_complement, run_g, run_h = False, neg_g, neg_h
        elif n_zero > 0:
            if n_pos == 0:
                break
            thr, pair = midpoint(z, pos_min), (OP_LEQ, tot_count - n_pos, OP_GR, n_pos)
            first_complement, run_g, run_h = True, pos_g, pos_h
        elif side == 0 and n_neg > 0 and n_pos > 0:
            thr, pair = midpoint(neg_max, pos_min), (OP_LEQ, n_neg, OP_GR, n_pos)
            first_complement, run_g, run_h = False, neg_g, neg_h
        else:
            break
        _score_pair(j, pair, thr, first_complement, run_g, run_h, tot_g, tot_h, args)


# not inlined: compiled without reference counting (see jit/variants.py), one call per
# feature (the walk: two); a variant that compacts and one that does not, each compiled on
# first use (the flag a constant: a runtime flag made small fits ~4 % slower, session 27)
def _without_reference_counting(py_func, compacts, **constants):
    """``py_func`` compiled without reference counting in the variant that ``compacts``
    (named ``..._compacting`` or ``..._reading``)."""
    return njit(_nrt=False)(variant(py_func, "compacting" if compacts else "reading",
                                    COMPACTS=compacts, **constants))


_PHASES = {compacts: _without_reference_counting(_phase, compacts) for compacts in (False, True)}
_FEATURE_SEARCHES = {compacts: _without_reference_counting(
    _search_sparse_feature, compacts, _PHASE=_PHASES[compacts]) for compacts in (False, True)}
_FEATURE_TASK = None  # bound per kernel: the ``feature_task`` of the kernel's variant


def _search_all_py(features, indptr, index, value, kept, n_present, nominal, z, restore, mask,
                   indicator, weights, g, h, tot_g, tot_h, tot_count, labels, head_mode,
                   params, inv_scale, min_coverage, min_quality, scratch, out_q, out_op,
                   out_thr, out_cnt, out_label, out_g, out_h):
    for j in nb.prange(features.shape[0]):
        _FEATURE_TASK(np.int64(j), features, indptr, index, value, kept, n_present, nominal,
                      z, restore, mask, indicator, weights, g, h, tot_g, tot_h, tot_count,
                      labels, head_mode, params, inv_scale, min_coverage, min_quality,
                      scratch, out_q, out_op, out_thr, out_cnt, out_label, out_g, out_h)


@nb.njit(inline="always")
def _apply_range(op, threshold, index, value, lo, hi, mask, indicator, implicit_satisfies):
    """:func:`apply_condition`'s walk over the entries ``lo .. hi - 1``."""
    for p in range(lo, hi):
        i = index[p]
        if mask[i] == indicator:
            if implicit_satisfies:
                if not satisfies(op, value[p], threshold):
                    mask[i] = -1
            elif satisfies(op, value[p], threshold):
                mask[i] = indicator + 1


@njit
def apply_condition(f, op, threshold, indptr, index, value, z, mask, indicator):
    """Restrict the coverage to ``x_f op threshold``; returns the new indicator.

    If the implicit value satisfies the condition, only the explicit covered entries that
    do not are marked uncovered (-1) and the indicator stays; otherwise the satisfying
    explicit entries move to ``indicator + 1``. Implicit entries are never visited.
    """
    implicit = satisfies(op, z, threshold)
    _apply_range(op, threshold, index, value, indptr[f], indptr[f + 1], mask, indicator,
                 implicit)
    return indicator if implicit else indicator + 1


@njit
def apply_step(f, op, threshold, data, mask, indicator):
    """:func:`apply_condition` on the search's ``data`` (read as it is, module docstring);
    returns the new indicator (the fused refinement's apply step)."""
    return apply_condition(f, op, threshold, data[0], data[1], data[2], data[6], mask,
                           indicator)


@njit
def apply_step_compacting(f, op, threshold, data, mask, indicator):
    """:func:`apply_step` on the compacting search's ``data`` (module docstring), over the
    feature's entries still in play (those its last search in the rule kept, a superset of
    its covered explicit ones, and its missing ones)."""
    indptr, index, value, kept, _, _, z, restore = data
    _ensure(f, indptr, index, value, kept, restore)
    implicit = satisfies(op, z, threshold)
    _apply_range(op, threshold, index, value, indptr[f], kept[f, 0], mask, indicator,
                 implicit)
    _apply_range(op, threshold, index, value, kept[f, 1], indptr[f + 1], mask, indicator,
                 implicit)
    return indicator if implicit else indicator + 1


feature_task, feature_task_compacting = _FEATURE_SEARCHES[False], _FEATURE_SEARCHES[True]
# one kernel for every thread count (``jit.parallel_kernel``), per variant; its ``prange``
# body is the variant's ``feature_task`` (one compiled function for both, so that a rule
# loop holds one copy of the search's code)
search = parallel_kernel(_search_all_py, _FEATURE_TASK=feature_task)
search_compacting = parallel_kernel(_search_all_py, "compacting",
                                    _FEATURE_TASK=feature_task_compacting)


class SearchVariant:
    """What the backend and the fused refinement (``refine.REFINE``) take from a search
    module (``__name__``, ``search``, ``apply_step``), with another search kernel."""

    def __init__(self, name, search, apply_step, feature_task):
        self.__name__, self.search, self.apply_step = name, search, apply_step
        self.feature_task = feature_task


# the sparse search for data that it compacts (``representations._sparse``)
compacting = SearchVariant(f"{__name__}_compacting", search_compacting, apply_step_compacting,
                           feature_task_compacting)
