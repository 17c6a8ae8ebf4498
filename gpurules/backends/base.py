"""The backend protocol: the phases of rule induction that every backend implements.

A learner (``gpurules.learners``) drives a fit only through these calls. The backend owns
the per-fit state (statistics, coverage mask) in its own memory (host or device); only
tiny records such as a :class:`Refinement` cross back to the learner.
"""

from dataclasses import dataclass
from typing import NamedTuple, Protocol

import numpy as np

from gpurules.jit.cache import njit
from gpurules.objectives import quality


@dataclass(frozen=True)
class Refinement:
    """The best condition found by one search, with the statistics of what it covers.

    Attributes:
        feature: int, column index.
        op: int, one of ``gpurules.conditions.OP_*``.
        threshold: float32 value of the condition.
        quality: float64 gain of the refined rule's head (larger is better).
        count: int, number of covered examples with non-zero weight.
        label: int, the head's label for single-label heads, else -1.
        g_sum, h_sum: int64 (K,) fixed-point sums of the covered examples' statistics.
    """

    feature: int
    op: int
    threshold: np.float32
    quality: float
    count: int
    label: int
    g_sum: np.ndarray
    h_sum: np.ndarray


@dataclass(frozen=True)
class SearchSettings:
    """Parameters of one refinement search.

    Attributes:
        head_mode: one of ``gpurules.objectives.quality.HEAD_MODES``: the objective that
            scores a candidate (see ``objectives/quality.py``).
        params: float64 (P,), that objective's parameters (boosting: ``[l1, l2]``).
        min_coverage: int, a condition must cover at least this many examples.
        min_quality: float, a refinement must have a strictly larger quality.
    """

    head_mode: int
    params: np.ndarray
    min_coverage: int
    min_quality: float

    def __post_init__(self):
        if self.head_mode not in quality.HEAD_MODES:
            raise ValueError(f"unknown head_mode {self.head_mode}; known: {quality.HEAD_MODES}")
        object.__setattr__(self, "params", np.ascontiguousarray(self.params, np.float64))

    def with_min_quality(self, min_quality):
        """These settings with another ``min_quality`` (as ``dataclasses.replace``, without
        its cost: the refinement loops call it per block; the other fields were checked)."""
        return self._replaced(min_quality=min_quality)

    def with_params(self, params):
        """These settings with other ``params`` (float64 (P,), contiguous: not copied)."""
        return self._replaced(params=params)

    def _replaced(self, **changes):
        copy = object.__new__(SearchSettings)
        copy.__dict__.update(self.__dict__, **changes)
        return copy

    @classmethod
    def boosting(cls, head_mode, l1, l2, min_coverage, min_quality):
        """Settings of a boosting search (``HEAD_COMPLETE``/``HEAD_SINGLE``, l1, l2)."""
        return cls(head_mode, quality.boosting_params(l1, l2), min_coverage, min_quality)


#: why a backend's ``learn_rules`` batch ended: the rules asked for (or as many as its
#: buffers held), no rule could be grown, the next rule's head is zero
BATCH_LEARNED, BATCH_NO_RULE, BATCH_ZERO_HEAD = 0, 1, 2


class RulePlan(NamedTuple):
    """What every rule of a plain boosting fit shares, for a backend that learns several
    rules in one call (``learn_rules``, optional: ``backends/cpu/fused_rules.py``).

    A plain fit draws its instance samples (if any) by
    ``backends.instance_draws.DRAWS`` (BOOMER's draws) and no output sample but
    round-robin's (rule ``i``, the default rule not counted, may predict output ``i % K``
    only) and grows its rules greedily or by beam search without a time limit, global
    pruning, holdout set or IREP, with a decomposable loss or the non-decomposable logistic
    loss; ``learners.boosting`` makes the plan.

    Attributes:
        num_features: int, the features a step draws from; num_drawn: int, features per
            step (0: every feature); redraws: int, extra draws for a rule's first
            condition (``rule_induction.first_condition_redraws``).
        block: int, the most refinement steps per block (``boosting_rule.BLOCK``).
        max_conditions, max_head_refinements: int (0: no limit / never fixed).
        partial: bool, the head selects outputs (fixed after ``max_head_refinements``
            conditions).
        head_mode: int, the search's head mode; params: float64 (P,), its parameters.
        min_coverage: int; shrinkage, l1, l2: float.
        round_robin: bool, outputs sampled round-robin (else every output a candidate).
        beam_width: int, the rules a beam search keeps per depth (0: greedy).
        resample_features: bool, each beam entry's search draws its own features.
        sampling: int, a rule's instance sample (``instance_draws.SAMPLE_*``) of
            ``num_samples`` (int) examples, ``sample_size`` (float) the fraction of each
            stratum, ``strata`` (members int64 (n,), offsets int64 (S + 1,)) of the
            stratified kinds (``learners.sampling.Strata``), empty arrays otherwise; all
            four as ``instance_draws.DRAW_SIGNATURE`` types them (an int, a float, C-contiguous
            writable arrays: a first-class function converts nothing).
        recalculate: bool, a head is computed from all covered examples where the sample
            left examples out (``recalculate_predictions``), else from the sample's.
    """

    num_features: int
    num_drawn: int
    redraws: int
    block: int
    max_conditions: int
    max_head_refinements: int
    partial: bool
    head_mode: int
    params: np.ndarray
    min_coverage: int
    shrinkage: float
    l1: float
    l2: float
    round_robin: bool
    beam_width: int = 0
    resample_features: bool = False
    sampling: int = 0
    num_samples: int = 0
    sample_size: float = 0.0
    strata: tuple = (np.empty(0, np.int64), np.zeros(1, np.int64))
    recalculate: bool = True


class Backend(Protocol):
    """What a learner needs from a backend. Arrays in and out are host NumPy arrays.

    Class attributes (capabilities, read by the estimators through
    ``backends.factory.backend_class`` before a backend is constructed):
        name: str, ``"cpu"`` or ``"cuda"``.
        requires_binned_features: bool, only ``BinnedFeatures`` (the histogram search) can
            be searched, not pre-sorted dense or sparse features.
        host_coverage: bool, ``covered_mask()`` costs no copy (the coverage lives in host
            memory); where it does not, a learner should ask for it only when it needs it.
        narrow_head_search: bool, a covering learner should refine a rule whose head is
            fixed on a second backend over the head's labels alone (it pays off where a
            search's cost grows with the number of labels scanned).
        fixes_partial_heads: bool, ``refine_rule`` fixes a partial head's outputs itself
            after ``fix_label_after`` steps and goes on over them in the same block (as it
            fixes a single-label head's label); else a block must end there, and the
            learner fixes them (``learners.boosting_rule``).

    Optional methods, used where a backend has them: ``coverage_snapshot()`` /
    ``restore_coverage(snapshot)`` (the beam search keeps its entries' coverages; CPU and
    CUDA), ``find_best_refinements(requests, weights, count)`` (a beam depth's searches in
    one call; CUDA), ``learn_rules`` with ``learns_rules`` (:class:`RulePlan`; CPU).
    """

    name: str
    requires_binned_features: bool
    host_coverage: bool
    narrow_head_search: bool
    fixes_partial_heads: bool

    # Set by start_fit (and set_scale), read by the learners and by refine_stepwise:
    #   features: the feature representation of the fit (PresortedFeatures,
    #       SparseSortedFeatures or BinnedFeatures), ``features.num_features`` of them;
    #   scale: float, the fixed-point scale of the statistics (int64 = round(value * scale));
    #   inv_scale: float, 1 / scale, with which heads turn sums back into values.
    features: object
    scale: float
    inv_scale: float

    def start_fit(self, features, Y, loss, base_weight, scale, statistic_dtype=np.int64):
        """Take the pre-sorted features, labels (uint8 (n, K)), loss, per-example weights
        (float64 (n,)) and fixed-point scale; set scores to 0 and compute the statistics.
        ``loss=None``: statistics are zero until :meth:`set_statistics` sets them.
        ``statistic_dtype``: ``np.int32`` where the caller guarantees that every example's
        statistic fits one at every scale it sets (``statistic_type="32-bit"``,
        ``fixed_point.choose_scale``); a backend may then store them in it (the CPU
        backend does), else int64. Sums are int64 either way: the same model."""

    def set_statistics(self, g, h):
        """Replace the statistics by ``g``, ``h`` (int64 (n, K)); resets the coverage."""

    def covered_mask(self):
        """bool (n,): the examples the current rule covers."""

    def set_scale(self, scale):
        """Re-encode every statistic with a new fixed-point scale."""

    def reset_coverage(self):
        """Mark every example as covered (start of a new rule)."""

    def covered_totals(self, weights):
        """Sums over the covered examples: (g int64 (K,), h int64 (K,), count int)."""

    def find_best_refinement(self, features, labels, weights, totals, search, count=None):
        """Best condition on the sampled ``features`` (int64 (S,)) whose head over ``labels``
        (int32) beats ``search.min_quality``; ``None`` if there is none. With ``count`` (int
        >= 1): the list of up to ``count`` best conditions, at most one per feature (each
        feature's best), best first (:func:`select_refinements`; the beam search's)."""

    def apply_refinement(self, refinement):
        """Restrict the coverage to the examples that satisfy the refinement's condition."""

    def refine_rule(self, uniforms, labels, weights, totals, search, fix_label_after):
        """Up to ``len(uniforms)`` refinement steps of the current rule: per step, the
        features drawn from row ``r`` of ``uniforms`` (float64 (R, m), Floyd; ``m = 0``:
        all features), the best refinement, its coverage; a single-label head keeps its
        label after ``fix_label_after`` steps (0 = never). Returns (conditions, last
        Refinement or None, labels, finished). :func:`refine_stepwise` is the reference."""

    def update_statistics(self, labels, scores):
        """Add ``scores`` (float64) to the covered examples' scores of ``labels`` and
        recompute their statistics."""


@dataclass(frozen=True)
class CandidateBatch:
    """The beam rules of one TURS growth step, concatenated for one backend call.

    R rules, M covered (rule, example) pairs in all, A features, C classes, and S local
    modelling groups in all: rule r owns the histogram columns ``group_offset[r] ..
    group_offset[r + 1]`` (its local groups, column ``group_offset[r]`` being local group 0,
    the examples no rule of the set covers yet).

    Attributes:
        idx: int64 (M,) the covered examples, rule after rule.
        col: int32 (M,) each pair's histogram column (its rule's offset + local group).
        example_offset: int64 (R + 1,) the rules' first pairs, then M.
        group_offset: int64 (R + 1,) the rules' first columns, then S.
        fstate: int8 (R, A) per rule and feature ``objectives.mdl.F_*``.
        ncuts: int64 (R, A) the non-empty cut points of each rule's features when they
            entered it.
        union_counts: int64 (S, C) class counts of each column's modelling-group union
            (the uncovered examples for a local group 0); union_size: int64 (S,).
        else_counts: int64 (C,) class counts of the examples no rule covers.
        base_model, new_feature_model: int64 (R,) fixed-point model bits per rule (see
            ``objectives.mdl.literal_scores``).
    """

    idx: np.ndarray
    col: np.ndarray
    example_offset: np.ndarray
    group_offset: np.ndarray
    fstate: np.ndarray
    ncuts: np.ndarray
    union_counts: np.ndarray
    union_size: np.ndarray
    else_counts: np.ndarray
    base_model: np.ndarray
    new_feature_model: np.ndarray

    @property
    def n_rules(self):
        return self.group_offset.shape[0] - 1

    @property
    def n_columns(self):
        return self.union_counts.shape[0]


class ClassHistograms(Protocol):
    """What the TURS learner needs from a backend (``learners/turs_beam.py``): the scores of
    every literal as a refinement of every beam rule of a growth step, from per-(bin,
    column) class histograms of the rules' covered examples. Built for one data set
    (``learners.turs_data``) by ``backends.factory.get_class_histograms``;
    ``CpuClassHistograms`` and ``CudaClassHistograms`` (``class_histograms.py`` of each
    backend) implement it."""

    def evaluate(self, batch):
        """Score every literal of the data set as a refinement of every rule of ``batch``
        (a :class:`CandidateBatch` of R rules) in one pass.

        Returns:
            (gain_incl, gain_excl, cov_incl, cov_excl, flags): host arrays (R, L) over the
            rules and literals (int64, int8 flags), owned by the caller.
        """


@njit
def floyd_indices(uniforms, n):
    """Sorted int64 (m,) distinct integers from range(n) chosen by Floyd's algorithm from
    ``uniforms`` (float64 (m,) in [0, 1)); compiled, so fused loops can sample too."""
    m = uniforms.shape[0]
    chosen = np.zeros(n, np.bool_)
    for step in range(m):
        j = n - m + step
        t = int(uniforms[step] * (j + 1))
        chosen[j if chosen[t] else t] = True
    return np.flatnonzero(chosen).astype(np.int64)


def refine_stepwise(backend, uniforms, labels, weights, totals, search, fix_label_after):
    """``Backend.refine_rule`` from the single-step calls (``find_best_refinement``,
    ``apply_refinement``): the reference that the CPU's fused loop (``cpu/refine.py``)
    must equal, and the implementation of backends without a fused loop."""
    num_features = backend.features.num_features
    conditions, last = [], None
    for r in range(uniforms.shape[0]):
        features = floyd_indices(uniforms[r], num_features) if uniforms.shape[1] else \
            np.arange(num_features, dtype=np.int64)
        ref = backend.find_best_refinement(features, labels, weights, totals, search)
        if ref is None:
            return conditions, last, labels, True
        backend.apply_refinement(ref)
        conditions.append((ref.feature, ref.op, ref.threshold))
        last = ref
        search = search.with_min_quality(ref.quality)
        totals = (ref.g_sum, ref.h_sum, ref.count)
        if fix_label_after > 0 and r + 1 >= fix_label_after and ref.label >= 0:
            labels = np.full(1, ref.label, np.int32)
        if ref.count <= search.min_coverage:
            return conditions, last, labels, True
    return conditions, last, labels, False


def select_refinement(features, out, count=None):
    """The first of the best slots of a search (deterministic), as a :class:`Refinement`
    (None if no slot has one); with ``count``, :func:`select_refinements`.

    Args:
        features: int64 (S,) sampled features.
        out: host arrays (q, op, thr, cnt, label, g, h) as in ``cpu/exact_search.py``.
        count: None, or int >= 1.
    """
    if count is not None:
        return select_refinements(features, out, count)
    j = _first_best(out[0], out[1])
    return None if j < 0 else _slot_refinement(features, out, j)


def select_refinements(features, out, count):
    """The ``count`` best slots of a search (each slot: one feature's best condition), best
    first, ties in slot order (so the first is :func:`select_refinement`'s): a list of up
    to ``count`` :class:`Refinement` (``features``, ``out`` as there)."""
    q, op = out[0].tolist(), out[1].tolist()  # a few slots: Python is quicker than NumPy
    order = sorted((j for j in range(len(op)) if op[j] >= 0), key=lambda j: (-q[j], j))
    return [_slot_refinement(features, out, j) for j in order[:count]]


def _slot_refinement(features, out, j):
    q, op, thr, cnt, label, g, h = out
    return Refinement(int(features[j]), int(op[j]), thr[j], float(q[j]), int(cnt[j]),
                      int(label[j]), g[j].copy(), h[j].copy())


@njit
def _first_best(q, op):
    """Index of the largest ``q`` among slots with ``op >= 0``, the first among equals
    (so the choice does not depend on threads); -1 if there is none."""
    best = -1
    for j in range(q.shape[0]):
        if op[j] >= 0 and (best < 0 or q[j] > q[best]):
            best = j
    return best
