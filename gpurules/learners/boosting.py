"""Gradient boosting of rules (BOOMER) over any backend.

The loop: a default rule (one Newton step on all examples, no shrinkage), then rules
induced one by one by greedy top-down refinement on sampled features, each rule's head
shrunk and applied to the statistics of the examples it covers.
"""

import dataclasses
import time
from dataclasses import dataclass

import numpy as np

from gpurules.backends.base import SearchSettings
from gpurules.backends.cpu.kernels import head_scores as compiled_head_scores
from gpurules.learners.sampling import FeatureSampling, InstanceSampling
from gpurules.model import RuleModelBuilder
from gpurules.objectives import fixed_point, heads

_BLOCK = 8  # refinement steps per backend call


@dataclass(frozen=True)
class BoostingConfig:
    """Resolved hyper-parameters of a BOOMER fit (see ``BoomerClassifier``)."""

    loss: object  # gpurules.objectives.losses.LossSpec
    head_mode: int
    max_rules: int  # including the default rule; 0 = unlimited
    time_limit: float  # seconds; 0 = unlimited
    shrinkage: float
    l1: float
    l2: float
    default_rule: bool
    feature_sampling: FeatureSampling
    instance_sampling: InstanceSampling
    max_conditions: int
    min_coverage: int
    max_head_refinements: int
    recalculate_predictions: bool


def head_scores(g_sum, h_sum, labels, inv_scale, l1, l2):
    """Optimal scores (float64 (m,)) of ``labels`` for fixed-point sums g_sum, h_sum (K,)."""
    out = np.empty(labels.shape[0], dtype=np.float64)
    return compiled_head_scores(g_sum, h_sum, labels, inv_scale, l1, l2, out)


class BoostingLearner:
    """Fits a :class:`RuleModel` with a backend. One instance per fit."""

    def __init__(self, config, backend, rng):
        self.config = config
        self.backend = backend
        self.rng = rng

    def fit(self, features, Y, base_weight):
        """Learn the rules.

        Args:
            features: the backend's feature representation (e.g. PresortedFeatures).
            Y: uint8 (n, K) labels.
            base_weight: float64 (n,) example weights.

        Returns:
            RuleModelBuilder with the default rule and the rules.
        """
        cfg, backend = self.config, self.backend
        n, K = Y.shape
        self._score_bound = 0.0
        self._total_weight = float(n) * float(base_weight.max())
        backend.start_fit(features, Y, cfg.loss, base_weight, self._scale())
        builder = RuleModelBuilder(K)
        all_labels = np.arange(K, dtype=np.int32)
        start = time.perf_counter()
        if cfg.default_rule:
            backend.reset_coverage()
            g, h, _ = backend.covered_totals(None)
            scores = head_scores(g, h, all_labels, backend.inv_scale, cfg.l1, cfg.l2)
            self._apply(all_labels, scores)
            builder.set_default_rule(scores)
        while cfg.max_rules == 0 or len(builder) < cfg.max_rules:
            if cfg.time_limit and time.perf_counter() - start >= cfg.time_limit:
                break
            rule = self._induce_rule(features.num_features, n, all_labels)
            if rule is None:
                break
            conditions, labels, scores = rule
            scores = scores * cfg.shrinkage
            self._apply(labels, scores)
            builder.add_rule(conditions, labels, scores)
        return builder

    def _scale(self):
        bound = self.config.loss.statistic_bound(self._score_bound)
        return fixed_point.choose_scale(self._total_weight, bound)

    def _apply(self, labels, scores):
        """Add a head to the covered examples; re-encode if scores outgrow the scale."""
        self.backend.update_statistics(labels, scores)
        self._score_bound += float(np.abs(scores).max()) if scores.size else 0.0
        scale = self._scale()
        if scale < self.backend.scale:
            self.backend.set_scale(scale)

    def _induce_rule(self, num_features, n, all_labels):
        """Greedy top-down refinement. Returns (conditions, labels, scores) or None.

        The backend refines in blocks of up to ``_BLOCK`` steps per call; the feature
        draws of a block come from ``self.rng`` up front, so every backend sees the same
        random stream."""
        cfg, backend = self.config, self.backend
        weights = cfg.instance_sampling.sample(self.rng, n)
        backend.reset_coverage()
        totals = backend.covered_totals(weights)
        labels = all_labels
        conditions, best = [], None
        m = cfg.feature_sampling.num_samples(num_features)
        m = m if m < num_features else 0  # 0: every step searches all features
        search = SearchSettings.boosting(cfg.head_mode, cfg.l1, cfg.l2, cfg.min_coverage,
                                         -np.inf)
        finished = False
        while not finished:
            block = _BLOCK
            if cfg.max_conditions > 0:
                block = min(block, cfg.max_conditions - len(conditions))
            if block <= 0:
                break
            fix_label_after = 0
            if cfg.max_head_refinements > len(conditions):
                fix_label_after = cfg.max_head_refinements - len(conditions)
            new, last, labels, finished = backend.refine_rule(
                self.rng.random((block, m)), labels, weights, totals, search, fix_label_after)
            if last is None:
                break
            conditions += new
            best = last
            totals = (last.g_sum, last.h_sum, last.count)
            search = dataclasses.replace(search, min_quality=last.quality)
        if best is None:
            return None
        head_labels = self._head_labels(best, labels)
        g_sum, h_sum = best.g_sum, best.h_sum
        if cfg.recalculate_predictions and weights is not None and (weights == 0).any():
            g_sum, h_sum, _ = backend.covered_totals(None)
        scores = head_scores(g_sum, h_sum, head_labels, backend.inv_scale, cfg.l1, cfg.l2)
        return conditions, head_labels, scores

    def _head_labels(self, ref, labels):
        if self.config.head_mode == heads.HEAD_SINGLE:
            return np.array([ref.label], dtype=np.int32)
        return labels
