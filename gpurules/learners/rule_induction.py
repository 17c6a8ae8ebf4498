"""Greedy top-down refinement of one rule: the loop that BOOMER and SeCo share.

A rule starts with an empty body covering the (sampled) examples. Block after block, an
engine with ``Backend.refine_rule``'s signature runs up to R refinement steps (each: draw
features, find the best refinement that beats the last quality, restrict the coverage to
it) and the loop takes the block's conditions and its last refinement, whose sums become
the rule's. The engines: the fused CPU loop (``backends/cpu/refine.py``), CUDA's
device-resident blocks (``backends/cuda/refine.py``), and :func:`refine_stepwise`, the
reference built from the single-step calls (``backends/base.py``), which
:class:`StepwiseSearch` runs over a restricted choice of features.

The loop stops when a block finds no refinement, when the engine says the rule is
finished (no candidate beats the last quality, or the coverage reached ``min_coverage``),
or when the learner plans no further block. A refinement must exclude at least one covered
example (``backends.thresholds.admissible``), so on data with constant columns every drawn
feature may offer none for a rule's first condition; the loop then asks for the next block,
whose features are drawn anew, up to ``Growth.redraws`` times
(:func:`first_condition_redraws`) before it gives the rule up (mlrl-boomer gives up at
once, and with the rule the whole fit). Later conditions are not redrawn: a rule ends
where its drawn features offer no refinement, as in mlrl-boomer. The draws come from the
learner's generator through the blocks, so they are the same on every backend.

What differs between learners lives in their hooks (:class:`RuleHooks`):
``learners/boosting_rule.py`` (blocks of up to 8 steps, a partial head's outputs fixed after
``max_head_refinements`` conditions, IREP, BOOMER's heads) and ``learners/covering_rule.py``
(one step per block, the head fixed after its first condition, possibly on a narrow backend,
the coverage kept per condition for IREP and the splittable filter).
"""

import math
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import NamedTuple, Protocol

import numpy as np

from gpurules.backends.base import Refinement, SearchSettings, refine_stepwise


def covering_bound(min_coverage, min_support, n):
    """The fewest examples a rule of a fit on ``n`` examples must cover, as mlrl's shared
    rule induction computes it for BOOMER and SeCo (``calculateBoundedFraction``):
    ``max(min_coverage, ceil(min_support * n))`` with the product in float32 (0.4 * 90:
    36, not 37), at most ``n``; ``min_support`` 0: ``min(min_coverage, n)``."""
    least = min(min_coverage, n)
    if min_support > 0:
        return min(max(math.ceil(np.float32(min_support) * np.float32(n)), least), n)
    return least


def first_condition_redraws(num_features, num_drawn):
    """How many more feature draws a rule's first condition may take when the drawn
    features offer no refinement: enough for ``num_drawn`` features per draw to add up to
    ``num_features`` (so the redraws cost at most one search over every feature); 0 when
    nothing is drawn (``num_drawn`` 0: every feature is searched, or at least as many as
    there are)."""
    if num_drawn <= 0 or num_drawn >= num_features:
        return 0
    return -(-num_features // num_drawn) - 1


class Block(NamedTuple):
    """The next block of refinement steps: ``uniforms`` float64 (R, m), step ``r``'s feature
    draw (Floyd; ``m = 0``: every feature), and ``fix_label_after`` (int; after this many
    steps a single-label head keeps its label, 0 = never), as ``Backend.refine_rule``."""

    uniforms: np.ndarray
    fix_label_after: int


@dataclass
class Growth:
    """A rule being grown; the hooks may replace any field between blocks.

    Attributes:
        engine: what runs a block, with ``Backend.refine_rule``'s signature (a backend, a
            :class:`StepwiseSearch`).
        labels: int32 (m,), the outputs the head may predict.
        weights: int32 (n,) instance weights, or None (every example once).
        totals: (g int64 (K,), h int64 (W,), count int), the covered examples' sums.
        search: SearchSettings of the next step (its ``min_quality``: the last quality).
        conditions: list of (feature, op, threshold), in the order they were found.
        best: the last Refinement (None: no condition yet).
        redraws: how many more blocks (features drawn anew) the loop may ask for while
            the drawn features offer no first condition (:func:`first_condition_redraws`).
    """

    engine: object
    labels: np.ndarray
    weights: object
    totals: tuple
    search: SearchSettings
    conditions: list = field(default_factory=list)
    best: Refinement = None
    redraws: int = 0

    def extend(self, conditions, last, labels):
        """Take a block's ``conditions`` and ``last`` refinement and the ``labels`` after
        it: the next step must beat its quality, from its sums."""
        self.conditions += conditions
        self.best, self.labels = last, labels
        self.totals = (last.g_sum, last.h_sum, last.count)
        self.search = self.search.with_min_quality(last.quality)


class RuleHooks(Protocol):
    """What a learner decides while :func:`induce_rule` grows one of its rules."""

    def start(self):
        """The :class:`Growth` of an empty rule (the backend covering its examples), or
        None when no rule can be grown."""

    def next_block(self, growth):
        """The next :class:`Block`, or None to stop refining."""

    def after_block(self, growth):
        """Called after every block that added conditions (e.g. to fix the head)."""

    def finish(self, growth):
        """The learner's result for a grown rule (prune it, compute its head)."""


def induce_rule(hooks):
    """Grow a rule greedily (module docstring). Returns ``hooks.finish(growth)``, or None
    when ``hooks.start()`` gives none or no condition was found."""
    growth = hooks.start()
    if growth is None:
        return None
    while (block := hooks.next_block(growth)) is not None:
        conditions, last, labels, finished = growth.engine.refine_rule(
            block.uniforms, growth.labels, growth.weights, growth.totals, growth.search,
            block.fix_label_after)
        if last is None:
            if growth.best is None and growth.redraws > 0:
                growth.redraws -= 1  # no first condition: draw other features (module)
                continue
            break
        growth.extend(conditions, last, labels)
        hooks.after_block(growth)
        if finished:
            break
    return None if growth.best is None else hooks.finish(growth)


class StepwiseSearch:
    """``refine_rule`` over a backend's single-step calls (:func:`refine_stepwise`), each
    step searching the features ``select`` makes of the drawn ones.

    Args:
        backend: the fit's backend (``backends.base.Backend``).
        num_features: int, the range the steps draw from (``uniforms`` as in
            ``Backend.refine_rule``).
        select: callable int64 (S,) -> int64 (S',) feature indices of the backend (an
            empty result: no refinement), or None (the drawn features).
    """

    def __init__(self, backend, num_features, select=None):
        self.backend = backend
        self.features = SimpleNamespace(num_features=num_features)
        self._select = select

    def find_best_refinement(self, features, labels, weights, totals, search, count=None):
        """``Backend.find_best_refinement`` on ``select(features)``."""
        if self._select is not None:
            features = self._select(features)
            if features.shape[0] == 0:
                return None if count is None else []
        return self.backend.find_best_refinement(features, labels, weights, totals, search,
                                                 count)

    def apply_refinement(self, refinement):
        """``Backend.apply_refinement``."""
        self.backend.apply_refinement(refinement)

    def refine_rule(self, uniforms, labels, weights, totals, search, fix_label_after):
        """``Backend.refine_rule`` through :func:`refine_stepwise`."""
        return refine_stepwise(self, uniforms, labels, weights, totals, search,
                               fix_label_after)
