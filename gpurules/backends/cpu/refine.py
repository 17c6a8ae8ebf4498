"""Fused rule refinement on the CPU: one compiled call runs several refinement steps.

A step samples features, searches them, picks the best slot and applies its condition
to the coverage mask; the reference ``backends/base.refine_stepwise`` does the same through
the backend protocol, one call per phase (``tests/test_refine.py`` holds them equal). The
learners' greedy loop (``learners/rule_induction.py``) calls this once per block. On small
data a step is a few microseconds of search, so the per-call overhead of that loop
dominated; this loop runs the steps of a block without returning to Python.

One loop drives the dense, sparse and histogram searches: ``REFINE`` holds it compiled for
each search kernel and apply step, bound as constant globals by ``jit.Kernel`` (passing
dispatchers as arguments costs a typing pass per call, which is what this loop exists to
avoid; a closure over them would miss Numba's disk cache in every new process):

- ``_SEARCH(features, *data, mask, indicator, weights, g, h, tot_g, tot_h, tot_count,
  labels, head_mode, params, inv_scale, min_coverage, min_quality, scratch, *out)`` fills
  the ``out`` slots as ``exact_search.search`` does;
- ``apply_step(f, op, threshold, data, mask, indicator)`` returns the new indicator.

In a team (``jit.team``: the batched rule loop as the leader, helper threads beside it)
the leader runs these steps and hands each search's features to the team as tasks
(:func:`_team_search`, the search module's ``feature_task``); the helpers take them in
:func:`_help_searches`; :func:`team_functions` binds both to a search. The team's buffers
(:func:`team_buffers`) carry what a step's search reads besides the fit's fixed arrays.
"""

import functools

import numba as nb
import numpy as np

from gpurules.backends.base import _first_best, floyd_indices
from gpurules.backends.cpu import exact_search, histogram_search, sparse_search
from gpurules.jit import team as teams
from gpurules.jit.cache import njit
from gpurules.jit.helpers import register_jitable
from gpurules.jit.rows import copy_row
from gpurules.jit.variants import Kernel, variant
from gpurules.objectives.compiled import family_head
from gpurules.objectives.multi_output import HEAD_MULTI_OUTPUT, SELECT_ALL, all_outputs
from gpurules.objectives.quality import head_code, head_work


# the search kernel, apply step and one-feature search (a team's task) a variant calls,
# bound by ``jit.variant`` below
_SEARCH = _APPLY = _TASK = None
# True in the variants whose steps search through ``_team_search`` (``team`` is then a
# tuple of buffers, never None): the rule loops' over a search with one-feature tasks
_TEAMED = False
# the values of a team's step in its ``values`` buffer (:func:`team_buffers`)
_INDICATOR, _COUNT, _FEATURES, _LABELS, _PARAMS = range(5)


def _refine_py(data, uniforms, num_features, mask, indicator, weights, g, h, totals, labels,
               head_mode, params, inv_scale, min_coverage, min_quality, fix_label_after,
               scratch, out, result, team):
    """Up to ``R = uniforms.shape[0]`` refinement steps of the current rule.

    Args:
        data: the search's feature arrays (see the module docstring).
        uniforms: float64 (R, m): row ``r`` draws step ``r``'s ``m`` features (Floyd);
            ``m = 0`` searches all ``num_features`` features.
        mask: int32 (n,) coverage, updated; indicator: int, its covered value.
        weights: int32 (n,); g: int64 (n, K), h: int64 (n, W).
        totals: (g int64 (K,), h int64 (W,), count int) of the covered examples.
        labels: int32 (m,), the head's candidate labels.
        head_mode, params, inv_scale, min_coverage, min_quality: as ``SearchSettings``.
        fix_label_after: int; after this many steps (0 = never) a single-label head keeps
            the label it chose, a partial head the outputs it selects, then predicting
            all of them (mlrl-boomer's ``max_head_refinements``; :func:`fix_head`).
        scratch, out: the search's scratch and slot arrays, sized for ``S`` features.
        result: (feature int64 (R,), op int8 (R,), threshold float32 (R,), quality
            float64 (R,), count int64 (R,), label int32 (R,), g int64 (R, K),
            h int64 (R, W)): step ``r``'s refinement.
        team: :func:`team_buffers` where the steps run in a team's leader (its searches
            shared with the team's helpers), or :data:`NO_TEAM` (the rule loops over a
            search with one-feature tasks, on one thread; the variants of ``_TEAMED``);
            None elsewhere: the search kernel, on the threads of the Numba thread count.

    Returns:
        (steps taken, new indicator, labels after the steps, finished): ``finished`` is
        True when the rule cannot be refined further (no candidate beats the last
        quality, or the coverage reached ``min_coverage``).
    """
    tot_g = totals[0].copy()
    tot_h = totals[1].copy()
    tot_count = totals[2]
    all_features = np.arange(num_features)
    res_f, res_op, res_thr, res_q, res_cnt, res_label, res_g, res_h = result
    out_q, out_op, out_thr, out_cnt, out_label, out_g, out_h = out
    for r in range(uniforms.shape[0]):
        if uniforms.shape[1] > 0:
            features = floyd_indices(uniforms[r], num_features)
        else:
            features = all_features
        if _TEAMED:  # a constant: Numba types one branch (it prunes no ``tuple is None``)
            _team_search(team, features, data, mask, indicator, weights, g, h, tot_g, tot_h,
                         tot_count, labels, head_mode, params, inv_scale, min_coverage,
                         min_quality, scratch, out)
        else:
            _SEARCH(features, *data, mask, indicator, weights, g, h, tot_g, tot_h, tot_count,
                    labels, head_mode, params, inv_scale, min_coverage, min_quality, scratch,
                    *out)
        j = _first_best(out_q, out_op)
        if j < 0:
            return r, indicator, labels, True
        res_f[r], res_op[r], res_thr[r] = features[j], out_op[j], out_thr[j]
        res_q[r], res_cnt[r], res_label[r] = out_q[j], out_cnt[j], out_label[j]
        copy_row(res_g[r], out_g[j])
        copy_row(res_h[r], out_h[j])
        indicator = _APPLY(features[j], out_op[j], out_thr[j], data, mask, indicator)
        min_quality = out_q[j]
        copy_row(tot_g, out_g[j])
        copy_row(tot_h, out_h[j])
        tot_count = out_cnt[j]
        if fix_label_after > 0 and r + 1 >= fix_label_after:
            labels, params = fix_head(head_mode, labels, params, out_label[j], res_g[r],
                                      res_h[r], inv_scale, head_work(head_mode, scratch[1]))
        if out_cnt[j] <= min_coverage:
            return r + 1, indicator, labels, True
    return uniforms.shape[0], indicator, labels, False


@register_jitable
def fix_head(head_mode, labels, params, label, g_sum, h_sum, inv_scale, multi_output):
    """(labels, params) of the steps after a head is fixed, for the last refinement's
    ``label`` (int: a single-label head's choice, else -1) and sums g_sum int64 (K,), h_sum
    int64 (W,): a single-label head keeps ``[label]``; a partial head (``HEAD_MULTI_OUTPUT``
    selecting outputs) keeps the outputs it selects and then predicts all of them
    (``multi_output.all_outputs``), as ``learners.boosting_rule`` does between blocks for
    engines that stop there (with the same compiled ``multi_output_head`` of the head's
    form); anything else is unchanged. ``multi_output``: ``quality.head_work`` of the
    search's work arrays, None (a constant) where it has no multi-output heads, which
    compiles none here."""
    if label >= 0:
        return np.full(1, label, np.int32), params
    if multi_output is None:
        return labels, params
    if head_code(head_mode) == HEAD_MULTI_OUTPUT and params[3] != SELECT_ALL:
        return (family_head(head_mode, g_sum, h_sum, labels, inv_scale, params)[0],
                all_outputs(params))
    return labels, params


def team_buffers(S, K, W, P):
    """A team's buffers for searches of up to ``S`` features, ``K`` outputs, ``W`` Hessian
    entries and ``P`` objective parameters: (state int64 (``jit.team.STATE_SIZE``,),
    features int64 (S,), labels int32 (K,), params float64 (P,), values int64 (5,): the
    step's indicator, covered count and the lengths of the three arrays before,
    min_quality float64 (1,), tot_g int64 (K,), tot_h int64 (W,)).
    :data:`NO_TEAM` (no state): the loop that takes them searches alone."""
    return (teams.new_state(), np.empty(S, np.int64),
            np.empty(K, np.int32), np.empty(P), np.zeros(5, np.int64), np.empty(1),
            np.empty(K, np.int64), np.empty(W, np.int64))


# the buffers of no team, for one thread: the rule loop over a search with one-feature tasks
# takes buffers in either case, so that one compiled loop serves both (a loop compiled for a
# team as well cost its first fit ~30 CPU-s)
NO_TEAM = tuple(np.empty(0, a.dtype) for a in team_buffers(0, 0, 0, 0))


def _team_search(team, features, data, mask, indicator, weights, g, h, tot_g, tot_h,
                 tot_count, labels, head_mode, params, inv_scale, min_coverage, min_quality,
                 scratch, out):
    """The search of a step's arguments by a team's leader: the step's values written
    to ``team``'s buffers, each feature a task of a phase that the leader and the helpers
    (:func:`_help_searches`) take, the slots filled when it returns; with
    :data:`NO_TEAM`, the tasks one after the other, as the search kernel's serial form
    runs them (that form is then not compiled into the rule loop: one library less in
    which LLVM compiles the search's code again)."""
    state, t_features, t_labels, t_params, values, quality, t_g, t_h = team
    if state.shape[0] == 0:  # the search kernel's serial form, one task after the other
        for c in range(features.shape[0]):
            _TASK(np.int64(c), features, *data, mask, indicator, weights, g, h, tot_g, tot_h,
                  tot_count, labels, head_mode, params, inv_scale, min_coverage, min_quality,
                  scratch, *out)
        return
    S, m, P = features.shape[0], labels.shape[0], params.shape[0]
    copy_row(t_features[:S], features)
    copy_row(t_labels[:m], labels)
    copy_row(t_params[:P], params)
    copy_row(t_g, tot_g)
    copy_row(t_h, tot_h)
    values[_INDICATOR], values[_COUNT] = indicator, tot_count
    values[_FEATURES], values[_LABELS], values[_PARAMS] = S, m, P
    quality[0] = min_quality
    generation = teams.publish(state, S)
    mine = 0
    while True:
        c = teams.take(state, generation)
        if c >= S:
            break
        _team_task(c, team, data, mask, weights, g, h, head_mode, inv_scale, min_coverage,
                   scratch, out)
        mine += 1
    teams.finish(state, S, mine)


def _team_task(c, team, data, mask, weights, g, h, head_mode, inv_scale, min_coverage,
               scratch, out):
    """Task ``c`` of the open phase: the search of slot ``c`` with the step's values from
    ``team``'s buffers."""
    _, features, labels, params, values, quality, tot_g, tot_h = team
    _TASK(np.int64(c), features[:values[_FEATURES]], *data, mask, values[_INDICATOR],
          weights, g, h, tot_g, tot_h, values[_COUNT], labels[:values[_LABELS]], head_mode,
          params[:values[_PARAMS]], inv_scale, min_coverage, quality[0], scratch, *out)


def _help_searches(team, data, mask, weights, g, h, head_mode, inv_scale, min_coverage,
                   scratch, out):
    """A helper of a team (``jit.team``): take the leader's search tasks until it stops.
    The other arguments are the leader's: its search's arrays, coverage mask, weights,
    statistics, head mode, scale, minimum coverage, scratch and slot arrays."""
    state = team[0]
    while True:
        c = teams.offered(state)
        if c == teams.STOPPED:
            return
        if c >= 0:
            _team_task(c, team, data, mask, weights, g, h, head_mode, inv_scale,
                       min_coverage, scratch, out)
            teams.done(state)


@functools.lru_cache(maxsize=None)
def team_functions(module):
    """(team search, helper) over ``module``'s ``feature_task``: :func:`_team_search`, a
    function inlined into the rule loop's steps, and :func:`_help_searches` compiled
    without the GIL for a team's helper threads (one pair per search module)."""
    name = module.__name__.rsplit(".", 1)[-1]
    # inlined by Numba: each function compiled apart is a library in which LLVM optimises
    # the search's code once more (a first sparse fit compiled ~4 CPU-s longer)
    inline = nb.njit(inline="always")
    task = inline(variant(_team_task, name, _TASK=module.feature_task))
    return (inline(variant(_team_search, name, _team_task=task, _TASK=module.feature_task)),
            njit(nogil=True)(variant(_help_searches, f"{name}_helper", _team_task=task)))


def _compile(module):
    """The fused loop over ``module``'s search and apply step: a ``jit.Kernel`` whose
    serial form calls the search's serial form, its parallel form the parallel one
    (each compiled on first use)."""
    name = module.__name__.rsplit(".", 1)[-1]
    return Kernel(_refine_py, name, _SEARCH=module.search, _APPLY=module.apply_step)


# search module -> its fused loop
REFINE = {module: _compile(module) for module in (exact_search, sparse_search,
                                                  sparse_search.compacting, histogram_search)}
