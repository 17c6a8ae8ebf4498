"""Separate-and-conquer (covering) over any backend: mlrl-seco 0.15's multi-label learner.

The loop (Rapp et al. 2019; mlrl-seco): the default rule predicts each label's majority
value; rules predict the minority value ``p_k``. Before each rule the count statistics of
the examples not yet covered for each label are set on the backend (``g = [uncovered and
y_k == p_k]``, ``h = [uncovered]``, see ``objectives.heuristics``), an instance sample is
drawn, and the rule is grown by greedy top-down refinement (``learners.rule_induction``,
with SeCo's hooks in ``learners.covering_rule``): every refinement must raise the
heuristic value of the rule's head (strictly, starting above 0). After the first condition
the head's labels are fixed (``max_head_refinements = 1``). With IREP the rule's trailing
conditions are pruned on the examples left out of the instance sample, scored with the
pruning heuristic. The covered examples' labels of the head are then marked covered, and the
induction stops when every minority label has been covered (mlrl-seco's coverage stopping
criterion counts covered (example, label) pairs against the number of minority labels),
when ``max_rules`` is reached or when no refinement beats a value of 0.
"""

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from gpurules.decision_list import DecisionListBuilder
from gpurules.exceptions import FitStoppedEarlyWarning, warn
from gpurules.learners.covering_rule import CoveringRule
from gpurules.learners.rule_induction import covering_bound, induce_rule
from gpurules.learners.rule_pruning import IREP_COVERAGE_MLRL
from gpurules.learners.sampling import FeatureSampling, InstanceSampling
from gpurules.objectives.lift_functions import lift_tables
from gpurules.progress import MAX_RULES, TIME_LIMIT, FitProgress


@dataclass(frozen=True)
class CoveringConfig:
    """Resolved hyper-parameters of a SeCo fit (see ``SeCoClassifier``).

    Attributes:
        head_mode: ``HEAD_SECO_SINGLE`` or ``HEAD_SECO_PARTIAL``.
        heuristic, pruning_heuristic: (id, parameter) pairs (``objectives.heuristics``).
        lift_function: (name, options) (``objectives.lift_functions``).
        min_coverage, min_support: a condition must cover at least
            ``rule_induction.covering_bound(min_coverage, min_support, n)`` (sampled)
            examples: ``max(min_coverage, ceil(min_support * n))``, at most n, as mlrl-seco.
        max_rules: rules including the default rule; 0 = unlimited.
        time_limit: seconds, 0 = none.
        irep: prune rules by IREP (needs an instance sample that leaves examples out).
        irep_coverage: ``"mlrl"`` marks as covered the examples that the pruned rule's
            first ``n - 1`` grown conditions cover, as mlrl-seco 0.15 does (its feature
            subspace is left filtered by the prefixes IREP evaluated); ``"rule"`` marks the
            examples the pruned rule covers.
    """

    head_mode: int
    heuristic: tuple
    pruning_heuristic: tuple
    lift_function: tuple
    max_rules: int
    time_limit: float
    min_coverage: int
    min_support: float
    max_conditions: int
    max_head_refinements: int
    irep: bool
    instance_sampling: InstanceSampling
    feature_sampling: FeatureSampling
    irep_coverage: str = IREP_COVERAGE_MLRL


class CoveringLearner:
    """Fits a :class:`~gpurules.decision_list.DecisionList` with a backend (one per fit).

    Args:
        config: CoveringConfig; backend: the backend of the search; rng: numpy Generator.
        narrow_backend: optional second backend of the same kind: once a rule's head is
            fixed (after its first condition), the rule is refined on this backend holding
            the head's labels only, so a search no longer aggregates the other labels'
            sums (the CPU searches cost O(K) per feature). Same refinements, same model.
        X: optional raw features (float32 ndarray (n, A) or scipy sparse): after a rule's
            first condition, sampled features whose values cannot split the covered
            examples are not searched (see :meth:`_splittable`). Same model.
        progress: a :class:`~gpurules.progress.FitProgress` told of every rule and of why
            the fit stopped (None: a silent one).
    """

    def __init__(self, config, backend, rng, narrow_backend=None, X=None, progress=None):
        self.config = config
        self.backend = backend
        self.rng = rng
        self.narrow_backend = narrow_backend
        self.X = X.tocsr() if sp.issparse(X) else X
        self.progress = progress or FitProgress(type(self).__name__)

    def fit(self, features, Y, weight=None):
        """Learn the decision list.

        Args:
            features: the backend's feature representation.
            Y: uint8 (n, K) labels.
            weight: optional int64 (n,) positive example weights: an example of weight w
                counts w times in every confusion matrix, as w copies of its row would
                (``min_coverage`` still counts examples). None: ones.

        Returns:
            DecisionListBuilder with the rules (the default rule predicts the majority)
            and the weighted counts of the examples each rule decides (``predict_proba``).
        """
        cfg, backend, progress = self.config, self.backend, self.progress
        n, K = Y.shape
        w = np.ones(n, np.int64) if weight is None else np.asarray(weight, np.int64)
        majority = (w @ Y > w.sum() / 2.0).astype(np.uint8)
        predicted = (1 - majority).astype(np.uint8)
        self.Y = Y
        self.features = features
        self.min_coverage = covering_bound(cfg.min_coverage, cfg.min_support, n)
        self.strata = cfg.instance_sampling.strata(Y)
        self.lift = lift_tables(*cfg.lift_function, Y, weight)
        self.h = np.repeat(w[:, None], K, axis=1)  # uncovered (weighted)
        self.g = np.where(Y == predicted, self.h, 0)  # uncovered and y == p (weighted)
        remaining = int(self.h[Y != majority].sum())
        backend.start_fit(features, Y, None, np.ones(n), 1.0)
        builder = DecisionListBuilder(majority, predicted, Y, w)
        all_labels = np.arange(K, dtype=np.int32)
        start = time.perf_counter()
        reason = "every example's minority labels are covered"
        while remaining > 0:
            if cfg.max_rules and len(builder) >= cfg.max_rules:
                reason = MAX_RULES
                break
            if cfg.time_limit and time.perf_counter() - start >= cfg.time_limit:
                reason = TIME_LIMIT
                break
            backend.set_statistics(self.g, self.h)
            rule = self._induce_rule(all_labels)
            if rule is None:
                reason = "no refinement has a heuristic value above 0 with at least " \
                         "min_coverage examples"
                self._warn_if_empty(builder, n)
                break
            conditions, head, covered, decides = rule
            rows = np.flatnonzero(covered)
            block = np.ix_(rows, head)
            removed = int(self.h[block].sum())
            if removed == 0:  # would be learned again and again
                reason = "the best rule covers no example that is not covered yet"
                warn(f"the fit stopped after {len(builder)} rule(s): the best rule "
                     f"covers no example that is not covered yet", FitStoppedEarlyWarning)
                break
            remaining -= removed
            self.g[block] = 0
            self.h[block] = 0
            builder.add_rule(conditions, head, covered=decides)
            progress.rule(len(builder), len(conditions), rows.size, head.size)
        progress.stop(len(builder), reason)
        return builder

    def _warn_if_empty(self, builder, n):
        """Warn when the decision list ends with its default rule alone."""
        if len(builder) > 1:
            return
        requested = self.config.min_coverage  # the bound is clamped to n (covering_bound)
        reason = f"min_coverage={requested} exceeds the {n} training examples" \
            if requested > n else "no condition on the sampled features has a " \
            "heuristic value above 0 with at least min_coverage examples"
        warn(f"no rule was learned, the model predicts the default rule only: {reason}",
             FitStoppedEarlyWarning)

    def _induce_rule(self, all_labels):
        """Grow (and prune) one rule: ``rule_induction.induce_rule`` with
        :class:`CoveringRule`'s hooks. Returns (conditions, head labels int32, covered bool
        (n,) to mark, bool (n,) the examples the rule covers) or None if no condition has a
        value above 0."""
        return induce_rule(CoveringRule(self, all_labels))
