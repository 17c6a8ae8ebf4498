"""IREP: pruning a grown rule's trailing conditions on a prune set (``rule_pruning="irep"``).

mlrl-common 0.15 (``rule_pruning_irep.cpp``, called by ``rule_induction_common.hpp``) prunes
a rule only when the instance weights of its growth contain zeros. The prune set is the
*training* examples the instance sample left out (``OutOfSampleWeightVector`` over the
training partition: held-out examples are never in it, so a holdout set without instance
sampling gives an empty prune set). Given the rule's ``n > 1`` conditions in the order they
were learned, the whole rule and the prefixes of 1, ..., n - 1 conditions are scored on the
prune set; the first prefix that is not worse than the whole rule is taken, and after it
only a strictly better one (:func:`irep_keep`). The search's objective scores them, with the
head's outputs fixed (boosting: the head's gain recomputed on the prune set's sums,
:func:`fixed_head_quality`; separate-and-conquer: the pruning heuristic).

After pruning, mlrl-common leaves its feature subspace filtered by the first n - 1
conditions (the last prefix it evaluated), and marks as covered (SeCo) / updates the
statistics of (BOOMER) those examples, not the pruned rule's. ``IREP_COVERAGE_MLRL``
reproduces that, ``IREP_COVERAGE_RULE`` uses the pruned rule's coverage.

Everything here drives a backend only through the protocol (``backends.base``:
``reset_coverage``, ``apply_refinement``, ``covered_totals``), so it runs on every backend.
"""

import numpy as np

from gpurules.backends.base import Refinement
from gpurules.objectives.compiled import side_quality, work_views
from gpurules.objectives.multi_output import HEAD_MULTI_OUTPUT, SELECT_ALL, work_arrays

# which examples a pruned rule's head reaches (covering: marks covered; boosting: updates)
IREP_COVERAGE_RULE = "rule"  # the pruned rule's coverage
IREP_COVERAGE_MLRL = "mlrl"  # the first n - 1 grown conditions' coverage (mlrl-common 0.15)
IREP_COVERAGES = (IREP_COVERAGE_MLRL, IREP_COVERAGE_RULE)


def irep_keep(qualities):
    """Number of conditions IREP keeps.

    Args:
        qualities: sequence of n >= 1 floats (larger is better); ``qualities[j - 1]`` is the
            prune-set quality of the rule's first j conditions, ``qualities[-1]`` the whole
            rule's.

    Returns:
        int in [1, n]: the first prefix that is not worse than the whole rule, or a later
        one strictly better than the prefix kept so far (mlrl-common's loop; NaN compares
        as neither better nor worse, so a NaN prefix ties with the whole rule).
    """
    n = len(qualities)
    best, keep = qualities[-1], n
    for j in range(1, n):
        q = qualities[j - 1]
        if q > best or (keep == n and not best > q):
            best, keep = q, j
    return keep


def condition_refinement(condition):
    """A :class:`Refinement` that ``Backend.apply_refinement`` applies to restrict the
    coverage to ``condition`` = (feature int, op int, threshold float32); its statistics
    are placeholders (apply_refinement reads feature, op and threshold only)."""
    feature, op, threshold = condition
    empty = np.zeros(0, np.int64)
    return Refinement(int(feature), int(op), np.float32(threshold), 0.0, 0, -1, empty, empty)


def cover(backend, conditions):
    """Make ``backend`` cover the examples that satisfy every one of ``conditions`` (a list
    of (feature, op, threshold); empty: all examples)."""
    backend.reset_coverage()
    for condition in conditions:
        backend.apply_refinement(condition_refinement(condition))


def prefix_qualities(backend, conditions, prune_weights, quality):
    """The prune-set quality of the whole rule and of each of its proper prefixes.

    Args:
        backend: covers the whole rule (its ``n = len(conditions)`` conditions) on entry;
            covers the first ``n - 1`` conditions on return.
        conditions: list of (feature, op, threshold), in the order they were learned.
        prune_weights: int32 (N,) weights of the prune set (1 in it, 0 elsewhere).
        quality: callable (g int64 (K,), h int64 (W,)) -> float, larger is better.

    Returns:
        float64 (n,): ``[j - 1]`` the quality of the first j conditions (``[-1]``: the rule).
    """
    n = len(conditions)
    out = np.empty(n, np.float64)
    g, h, _ = backend.covered_totals(prune_weights)
    out[n - 1] = quality(g, h)
    backend.reset_coverage()
    for j in range(1, n):
        backend.apply_refinement(condition_refinement(conditions[j - 1]))
        g, h, _ = backend.covered_totals(prune_weights)
        out[j - 1] = quality(g, h)
    return out


def prune_conditions(backend, conditions, prune_weights, quality):
    """Number of ``conditions`` IREP keeps: :func:`irep_keep` of :func:`prefix_qualities`
    (same arguments; the backend covers the whole rule on entry and, for ``n > 1``
    conditions, the first ``n - 1`` on return)."""
    if len(conditions) < 2:
        return len(conditions)
    return irep_keep(prefix_qualities(backend, conditions, prune_weights, quality))


def fixed_head_quality(g_sum, h_sum, labels, head_mode, params, inv_scale):
    """The gain (float, larger is better) of the optimal head over the fixed outputs
    ``labels`` (int32 (m,)) for the fixed-point sums ``g_sum`` (int64 (K,)), ``h_sum``
    (int64 (K,) or packed (K(K+1)/2,)): the search's objective (``head_mode``, ``params``
    float64) with the outputs no longer selected (a partial head's ``SELECT_ALL``), as
    mlrl-boomer's pruning rule evaluation scores a rule on the prune set (its quality is
    the negative of this gain)."""
    labels = np.ascontiguousarray(labels, np.int32)
    work = None
    if head_mode == HEAD_MULTI_OUTPUT:
        params = np.array(params, np.float64)
        params[3] = SELECT_ALL
        wf, wi = work_arrays(1, labels.shape[0])
        work = work_views(wf[0], wi[0], labels.shape[0])
    return float(side_quality(g_sum, h_sum, g_sum, h_sum, False, labels, head_mode, inv_scale,
                              np.asarray(params, np.float64), work)[0])
