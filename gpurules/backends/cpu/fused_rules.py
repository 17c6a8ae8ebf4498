"""Several boosting rules in one compiled call (CPU): the learner's per-rule loop, fused.

On small data a BOOMER rule is a few tens of microseconds of compiled search and update,
and the Python that drives one rule through the learner (``learners/boosting.py``), its
hooks (``learners/boosting_rule.py``), the shared refinement loop
(``learners/rule_induction.py``) and the backend's calls took about as long again
(medical with partial-dynamic heads: 25 of 51 us a rule). This loop learns a batch of rules
without returning to Python, for the plain configuration where a rule is only: draw the
blocks' features, refine (``refine.py``'s fused steps, compiled in), fix a partial head's
outputs after ``max_head_refinements`` conditions, compute the head, shrink it, and add it
to the covered examples' statistics. ``learners.boosting.BoostingLearner`` decides which
fits qualify (``backends.base.RulePlan``'s docstring) and the backend whether its search
does (``CpuBackend.learns_rules``); every other fit takes the Python loop, which stays the
reference: ``tests/test_fused_rules.py`` holds the two equal, model for model.

The features are drawn from the fit's ``numpy.random.Generator`` inside the loop (Numba
calls its bit generator, so the stream is numpy's own, draw for draw), block by block as
``BoostingRule.next_block`` plans them for an engine that stops where a partial head's
outputs are fixed (``HeadFixingEngine`` takes the same draws in fewer calls).
"""

import functools

import numpy as np

from gpurules.backends.base import BATCH_LEARNED, BATCH_NO_RULE, BATCH_ZERO_HEAD
from gpurules.backends.cpu import (exact_search, fused_beam, histogram_search, histograms,
                                   refine, sparse_search, statistics)
from gpurules.backends.cpu.representations import forget_marks
from gpurules.jit.cache import njit
from gpurules.jit.helpers import register_jitable
from gpurules.jit.rows import copy_row
from gpurules.jit.variants import variant
from gpurules.objectives.compiled import family_head, head_scores, label_score
from gpurules.objectives.heads import HEAD_SINGLE
from gpurules.objectives.multi_output import (HEAD_MULTI_OUTPUT, HEAD_ND_SINGLE, SELECT_ALL,
                                              all_outputs)
from gpurules.objectives.non_decomposable import packed_index
from gpurules.objectives.quality import head_code, head_work

# bound by ``variant`` below: whether rules are grown by beam search (``_GROW``) or
# greedily (``_REFINE``'s steps), whether they draw instance samples, and the statistics
# update
_BEAM = _SAMPLED = False
_GROW = _REFINE = _UPDATE = None
_update_decomposable_serial = statistics.update_covered.form(False)
_update_non_decomposable_serial = statistics.update_covered_nd.form(False)


@njit(inline="always")
def _block_size(block, done, max_conditions, max_head_refinements, partial):
    """(steps, fix_label_after) of the next block of at most ``block`` steps after ``done``
    conditions (``BoostingRule.next_block``); steps 0: no further block."""
    if max_conditions > 0:
        block = min(block, max_conditions - done)
    if block <= 0:
        return 0, 0
    fix_after = 0
    if max_head_refinements > done:
        fix_after = max_head_refinements - done
        if partial:  # the block ends where the outputs are fixed
            block = min(block, fix_after)
    return block, fix_after


@register_jitable
def _head(head_mode, labels, params, label, g_sum, h_sum, inv_scale, l1, l2, multi_output):
    """(labels int32, scores float64) of a rule's head (``BoostingRule._head`` for the
    decomposable heads). ``multi_output``: ``quality.head_work`` of the search's work
    array, None (a constant of the types) where it has no multi-output heads, which
    compiles none here (as ``refine.fix_head``: a jitable function, so that the branch on
    it is pruned)."""
    if head_code(head_mode) == HEAD_ND_SINGLE:  # (non-decomposable: h is packed)
        score = label_score(g_sum[label] * inv_scale,
                            h_sum[packed_index(label, label)] * inv_scale, l1, l2)
        return np.full(1, label, np.int32), np.full(1, score)
    if multi_output is None:
        return _boosting_head(head_mode, labels, label, g_sum, h_sum, inv_scale, l1, l2)
    if head_code(head_mode) == HEAD_MULTI_OUTPUT:
        return family_head(head_mode, g_sum, h_sum, labels, inv_scale, params)
    return _boosting_head(head_mode, labels, label, g_sum, h_sum, inv_scale, l1, l2)


@njit(inline="always")
def _boosting_head(head_mode, labels, label, g_sum, h_sum, inv_scale, l1, l2):
    """The complete head over ``labels``, or the single-output head of ``label``."""
    if head_code(head_mode) == HEAD_SINGLE:
        labels = np.full(1, label, np.int32)
    scores = np.empty(labels.shape[0])
    return labels, head_scores(g_sum, h_sum, labels, inv_scale, l1, l2, scores)


@njit(inline="always")
def _update_decomposable(stats, g, h, mask, indicator, labels, scores):
    """``statistics.update_covered`` with ``stats`` (:func:`_rules_py`); returns 0.0."""
    loss, Y, P, base_weight, scale, delta_g, delta_h, _ = stats
    _update_decomposable_serial(loss, Y, P, base_weight, scale, g, h, mask, indicator, labels,
                                scores, delta_g, delta_h)
    return 0.0


@njit(inline="always")
def _update_non_decomposable(stats, g, h, mask, indicator, labels, scores):
    """``statistics.update_covered_nd`` with ``stats`` (:func:`_rules_py`); returns the
    largest |statistic| per unit weight it computed."""
    loss, Y, P, base_weight, scale, delta_g, delta_h, largest = stats
    _update_non_decomposable_serial(loss, Y, P, base_weight, scale, g, h, mask, indicator,
                                    labels, scores, delta_g, delta_h, largest)
    return largest.max()


@njit(inline="always")
def _largest_abs(scores):
    """The largest |score| (NaN if a score is NaN), 0 if none (``boosting._largest_abs``)."""
    largest = 0.0
    for k in range(scores.shape[0]):
        a = abs(scores[k])
        if a != a:
            return a
        largest = max(largest, a)
    return largest


@register_jitable
def _draw_sample(rng, draw, plan, weights, g, h, g_all, h_all, tot_g, tot_h):
    """Draw a rule's instance sample into ``weights`` (by ``draw``, ``plan.sampling``'s
    ``instance_draws.DRAWS``, a first-class function: one loop for every kind) and
    its weighted sums over every example into ``tot_g``, ``tot_h``; returns the number of
    examples drawn (as ``statistics.covered_totals`` counts them). The sums are those of
    every example (``g_all``, ``h_all``) plus ``(w - 1)`` times the rows of weight ``w != 1``
    where those are fewer than the drawn ones (a stratified sample of 66 % leaves out a
    third), else the drawn rows' weighted sums: exact integers either way."""
    draw(rng, plan.num_samples, plan.sample_size, plan.strata[0], plan.strata[1], weights)
    n = weights.shape[0]
    left_out = others = 0
    for i in range(n):
        left_out += weights[i] == 0
        others += weights[i] != 1
    by_difference = others < n - left_out
    if by_difference:
        copy_row(tot_g, g_all)
        copy_row(tot_h, h_all)
    else:
        tot_g[:] = 0
        tot_h[:] = 0
    for i in range(n):
        w = weights[i] - 1 if by_difference else weights[i]
        if w != 0:
            for k in range(tot_g.shape[0]):
                tot_g[k] += w * g[i, k]
            for k in range(tot_h.shape[0]):
                tot_h[k] += w * h[i, k]
    return n - left_out


def _rules_py(rng, count, plan, data, marks, gh, mask, ones, g, h, all_totals, all_labels,
              inv_scale, stats, scratch, out, result, rules, score_room, first_rule, beam,
              sample, draw, team):
    """Learn up to ``count`` rules (module docstring), each grown greedily (block by block,
    ``rule_induction.induce_rule``) or by beam search (``_GROW``: ``fused_beam``).

    Args:
        rng: the fit's numpy Generator (advanced by the draws).
        plan: ``backends.base.RulePlan`` (its ``head_mode`` as
            ``quality.family_head_mode``).
        data: the search's arrays (``representations.SearchState.data``).
        marks: (kept_len, epochs, covered_state) int64 of the ``SearchState`` (spare
            arrays where it has none): what a new rule resets (``SearchState.new_rule``).
        gh: the histogram search's interleaved statistics (``SearchState.gh``), brought up
            to date after each update, or None (a constant of the types: other searches).
        mask: int32 (n,) coverage; ones: int32 (n,) unit weights; g, h: the statistics.
        all_totals: (g int64 (K,), h int64 (W,)): the sums over every example, updated.
        all_labels: int32 (K,); inv_scale: float.
        stats: (loss, Y, P, base_weight, scale, delta_g, delta_h, largest) of the update
            (``statistics.update_covered``, or ``update_covered_nd`` for non-decomposable
            statistics, which alone uses ``largest`` float64 (C,)).
        scratch, out, result: ``refine``'s buffers (``result`` of ``plan.block`` rows).
        rules: (feature int64 (C,), op int8 (C,), threshold float32 (C,), conditions_end
            int64 (count,), labels int32 (count K,), scores float64 (count K,), head_end
            int64 (count,), largest float64 (count,), covered int64 (count,)): rule ``b``'s
            conditions end before ``conditions_end[b]`` (and begin where rule ``b - 1``'s
            end), its head before ``head_end[b]``; ``largest``: its largest |score|,
            ``covered``: its covered examples. A rule has fewer than n conditions (each
            excludes a covered example), so a rule starts only while n entries are free.
        score_room: float, the sum of the rules' largest |score| that ends the batch with
            the rule that reaches it (the statistics' scale changes there: the learner
            re-encodes them); ``inf`` for the logistic losses.
        first_rule: int, the number of the batch's first rule (the default rule not
            counted): with ``plan.round_robin``, rule ``i`` may predict output ``i % K``.
        beam: the beam search's buffers (``fused_beam.buffers``), or None (greedy).
        sample: int32 (n,), the buffer of a rule's instance sample (``plan.sampling``;
            ``ones`` where the rules draw none).
        draw: the compiled draw of ``plan.sampling`` (``instance_draws.DRAWS``), or None
            where the rules draw none.
        team: ``refine.team_buffers`` where this loop leads a team (``jit.team``: its
            searches shared with :data:`HELPERS`; greedy growth only), else None.

    Returns:
        (rules learned, status: BATCH_LEARNED, BATCH_NO_RULE or BATCH_ZERO_HEAD, indicator,
        the largest |statistic| per unit weight the updates computed: 0.0 for decomposable
        ones).
    """
    head_mode, shrinkage, l1, l2 = plan.head_mode, plan.shrinkage, plan.l1, plan.l2
    g_all, h_all = all_totals
    delta_g, delta_h = stats[5], stats[6]
    c_f, c_op, c_thr, c_end, h_lab, h_sc, h_end, largest_out, covered_out = rules
    res_f, res_op, res_thr, res_q, res_cnt, res_label, res_g, res_h = result
    max_head_refinements, partial = plan.max_head_refinements, plan.partial
    n = mask.shape[0]
    tot_g = np.empty_like(g_all)
    tot_h = np.empty_like(h_all)
    n_cond = 0
    n_head = 0
    indicator = 0
    big = 0.0
    for b in range(count):
        if c_f.shape[0] - n_cond < n:
            return b, BATCH_LEARNED, indicator, big
        mask[:] = 0  # a new rule covers every example (CpuBackend.reset_coverage)
        forget_marks(marks)
        weights, tot_count = ones, n
        if _SAMPLED:  # (BoostingLearner._sample_weights, BoostingRule.start)
            weights = sample
            tot_count = _draw_sample(rng, draw, plan, weights, g, h, g_all, h_all, tot_g,
                                     tot_h)
        else:
            copy_row(tot_g, g_all)
            copy_row(tot_h, h_all)
        sampled = tot_count
        labels = all_labels
        if plan.round_robin:
            labels = all_labels[(first_rule + b) % all_labels.shape[0]:][:1]
        first = n_cond
        if not _BEAM:  # greedy (a constant: Numba compiles one branch)
            params, min_quality, label = plan.params, -np.inf, -1
            indicator = 0
            redraws = plan.redraws
            while True:
                done = n_cond - first
                steps, fix_after = _block_size(plan.block, done, plan.max_conditions,
                                               max_head_refinements, partial)
                if steps == 0:
                    break
                uniforms = rng.random((steps, plan.num_drawn))
                taken, indicator, labels, finished = _REFINE(
                    data, uniforms, plan.num_features, mask, indicator, weights, g, h,
                    (tot_g, tot_h, tot_count), labels, head_mode, params, inv_scale,
                    plan.min_coverage, min_quality, fix_after, scratch, out, result, team)
                if taken == 0:
                    if done == 0 and redraws > 0:
                        redraws -= 1  # no first condition: draw other features
                        continue
                    break
                for r in range(taken):
                    c_f[n_cond], c_op[n_cond], c_thr[n_cond] = res_f[r], res_op[r], res_thr[r]
                    n_cond += 1
                last = taken - 1  # the rule's sums, quality to beat and label so far
                copy_row(tot_g, res_g[last])
                copy_row(tot_h, res_h[last])
                tot_count, min_quality, label = res_cnt[last], res_q[last], res_label[last]
                if partial and 0 < max_head_refinements <= n_cond - first and \
                        params[3] != SELECT_ALL:  # the block fixed the outputs (after_block)
                    params = all_outputs(params)
                if finished:
                    break
        else:  # beam search, the rule's coverage left in ``mask``
            n_cond, indicator, labels, params, label, tot_count = _GROW(
                rng, plan, data, marks, mask, weights, g, h, tot_g, tot_h, tot_count, labels,
                inv_scale, scratch, out, (c_f, c_op, c_thr), n_cond, beam)
        if n_cond == first:
            return b, BATCH_NO_RULE, indicator, big
        head_g, head_h = tot_g, tot_h
        if _SAMPLED and plan.recalculate and sampled < n:  # (BoostingRule.finish_rule)
            head_g, head_h, _ = statistics.covered_totals(mask, indicator, ones, g, h)
        head_labels, scores = _head(head_mode, labels, params, label, head_g, head_h,
                                    inv_scale, l1, l2, head_work(head_mode, scratch[1]))
        scores = scores * shrinkage
        largest = _largest_abs(scores)
        if largest == 0:  # the statistics would not change (NaN goes on)
            return b, BATCH_ZERO_HEAD, indicator, big
        big = max(big, _UPDATE(stats, g, h, mask, indicator, head_labels, scores))
        if gh is not None:  # (CpuBackend._interleave; the next rule resets the list)
            histograms.interleave_covered(g, h, mask, indicator, gh)
        for c in range(delta_g.shape[0]):
            for k in range(g_all.shape[0]):
                g_all[k] += delta_g[c, k]
            for k in range(h_all.shape[0]):
                h_all[k] += delta_h[c, k]
        for k in range(head_labels.shape[0]):
            h_lab[n_head + k] = head_labels[k]
            h_sc[n_head + k] = scores[k]
        n_head += head_labels.shape[0]
        c_end[b], h_end[b] = n_cond, n_head
        largest_out[b], covered_out[b] = largest, tot_count
        score_room -= largest
        if not score_room >= 0:  # (also NaN)
            return b + 1, BATCH_LEARNED, indicator, big
    return count, BATCH_LEARNED, indicator, big


def unpack(rules, count):
    """The first ``count`` rules of :func:`_rules_py`'s ``rules`` buffers as a list of
    (conditions [(feature, op, threshold float32)], labels int32, scores float64, covered,
    largest), copies."""
    feature, op, threshold, conditions_end, labels, scores, head_end, largest, covered = rules
    out, c0, h0 = [], 0, 0
    for b in range(count):
        c1, h1 = int(conditions_end[b]), int(head_end[b])
        conditions = list(zip(feature[c0:c1].tolist(), op[c0:c1].tolist(), threshold[c0:c1]))
        out.append((conditions, labels[h0:h1].copy(), scores[h0:h1].copy(), int(covered[b]),
                    float(largest[b])))
        c0, h0 = c1, h1
    return out


def _representation(module):
    """The name of ``module``'s search (``exact_search``, ..., ``sparse_search_compacting``):
    the suffix of the functions compiled over it."""
    return module.__name__.rsplit(".", 1)[-1]


@functools.lru_cache(maxsize=None)
def _steps(module):
    """``refine._refine_py`` over ``module``'s search (serial form) and apply step, a jitable
    function shared by every rule loop over ``module``: Numba types and compiles it once
    per signature for all of them (one copy per loop compiled it again in each)."""
    team_search = None
    if hasattr(module, "feature_task"):
        team_search = refine.team_functions(module)[0]
    return register_jitable(variant(refine._refine_py, f"{_representation(module)}_in_rules",
                                    _SEARCH=module.search.form(False),
                                    _APPLY=module.apply_step, _team_search=team_search,
                                    _TEAMED=team_search is not None))


@functools.lru_cache(maxsize=None)
def _growth(module):
    """The beam search's growth over ``module`` (``fused_beam.bind``), shared as
    :func:`_steps`."""
    return fused_beam.bind(_representation(module), module.search.form(False),
                           module.apply_step)


def _compile(module, non_decomposable, beam, sampled):
    """The rule loop over ``module``'s search (its serial form) and apply step, with the
    statistics update of decomposable or ``non_decomposable`` statistics, growing rules
    greedily or by ``beam`` search (``fused_beam``), on ``sampled`` instances or all.

    The greedy growth takes ``refine._refine_py`` bound to them as ``refine.REFINE`` binds
    them, but as a jitable function compiled into the loop: called as a dispatcher, its
    compiled code was optimised by LLVM again inside the loop's (emotions' first fit
    compiled 14.5 instead of 12.7 CPU-s). The statistics update is a dispatcher (its code
    is small)."""
    name = _representation(module)
    steps = grow = None
    if beam:
        grow = _growth(module)
    else:
        steps = _steps(module)
    update = _update_non_decomposable if non_decomposable else _update_decomposable
    suffix = "".join(part for part, on in (("_non_decomposable", non_decomposable),
                                           ("_beam", beam), ("_sampled", sampled)) if on)
    return njit(nogil=True)(variant(_rules_py, name + suffix, _BEAM=beam, _SAMPLED=sampled,
                                    _REFINE=steps, _GROW=grow, _UPDATE=update))


# (search module, non-decomposable statistics, beam search, instance samples) -> its rule
# loop (compiled when first called)
RULES = {(module, nd, beam, sampled): _compile(module, nd, beam, sampled)
         for module in (exact_search, sparse_search, sparse_search.compacting, histogram_search)
         for nd in (False, True) for beam in (False, True) for sampled in (False, True)}

# search module -> the loop of a team's helper threads (``refine.team_functions``), for the
# searches that have a one-feature task (not the histogram search); the rule loops above are
# its leaders (compiled without the GIL, as the helpers)
HELPERS = {module: refine.team_functions(module)[1]
           for module in (exact_search, sparse_search, sparse_search.compacting)}
