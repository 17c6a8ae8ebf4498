"""One SeCo rule: its hooks of the shared refinement loop (``learners.rule_induction``),
the head, IREP with the pruning heuristic, and the features worth searching.

A rule is refined one step per block, through the backend's single-step calls
(``rule_induction.StepwiseSearch``): each step draws its features from the fit's random
stream as it is taken (a block drawn up front would use draws a shorter rule never needs),
and, after the first condition, searches only the features that can still split the
covered examples. Every refinement must raise the heuristic value (strictly, from 0). After
``max_head_refinements`` conditions (mlrl-seco: 1) the head's labels are fixed; a backend
with ``narrow_head_search`` then refines on a second backend over those labels alone.
"""

import dataclasses

import numpy as np
import scipy.sparse as sp

from gpurules.backends.base import SearchSettings
from gpurules.learners.rule_induction import (Block, Growth, StepwiseSearch,
                                             first_condition_redraws)
from gpurules.learners.rule_pruning import IREP_COVERAGE_MLRL, irep_keep
from gpurules.objectives.compiled import side_quality
from gpurules.objectives.heuristics import (HEAD_SECO_SINGLE, LAPLACE, P_SELECT, label_value,
                                            seco_params)


class CoveringRule:
    """The hooks (``rule_induction.RuleHooks``) of one SeCo rule.

    Args:
        learner: the fit's ``CoveringLearner`` (its config, backends, rng, labels ``Y``,
            count statistics ``g``/``h``, lift tables, raw features ``X``, ...).
        all_labels: int32 (K,) every label.

    After :func:`~gpurules.learners.rule_induction.induce_rule`, ``finish`` gives
    (conditions, head labels int32, covered bool (n,) to mark, bool (n,) the examples the
    rule covers); the two masks differ only with IREP's ``"mlrl"`` coverage.
    """

    def __init__(self, learner, all_labels):
        self.learner, self.config = learner, learner.config
        self.all_labels = all_labels
        self.backend = learner.backend  # the narrow backend once the head is fixed
        self.head = None  # int32, the fixed head's labels
        self.masks = []  # bool (n,) the coverage after each condition, where it is read

    def start(self):
        """An empty rule over the uncovered examples of a new instance sample; None when
        no label can be predicted."""
        learner, cfg = self.learner, self.config
        self.weights = weights = cfg.instance_sampling.sample(learner.rng, learner.Y.shape[0],
                                                              learner.strata)
        tot_g, tot_h, count = self.backend.covered_totals(weights)
        self.tot_g, self.tot_h = tot_g, tot_h
        params = self._params(cfg.heuristic, tot_g, tot_h)
        labels = self._candidate_labels(tot_g)
        if labels.size == 0:
            return None
        # the coverage after every condition only where it is read (the splittable filter,
        # IREP): on a device backend each copy is a synchronisation
        self.prunes = cfg.irep and weights is not None and bool((weights == 0).any())
        self.every_mask = learner.X is not None or self.prunes
        search = SearchSettings(cfg.head_mode, params, learner.min_coverage, 0.0)
        num_features = learner.features.num_features
        redraws = first_condition_redraws(num_features,
                                          cfg.feature_sampling.num_samples(num_features))
        return Growth(self._engine(), labels, weights, (tot_g, tot_h, count), search,
                      redraws=redraws)

    def next_block(self, growth):
        """One step, its features drawn now; None at ``max_conditions``."""
        cfg, num_features = self.config, self.learner.features.num_features
        if cfg.max_conditions and len(growth.conditions) >= cfg.max_conditions:
            return None
        m = cfg.feature_sampling.num_samples(num_features)
        m = m if m < num_features else 0  # 0: every feature, nothing drawn
        return Block(self.learner.rng.random((1, m)), 0)

    def after_block(self, growth):
        """Keep the coverage where it is read; fix the head after ``max_head_refinements``
        conditions (:meth:`_fix_head`)."""
        if self.every_mask:
            self.masks.append(self.backend.covered_mask())
        if self.head is None and 0 < self.config.max_head_refinements <= \
                len(growth.conditions):
            self.head = self._head(growth.best, growth.labels, growth.search.params)
            self._fix_head(growth)

    def finish(self, growth):
        """The head and IREP's pruning of a grown rule (class docstring)."""
        if not self.every_mask:
            self.masks.append(self.backend.covered_mask())  # the last condition's coverage
        head = self.head
        if head is None:
            head = self._head(growth.best, growth.labels, growth.search.params)
        conditions, masks = growth.conditions, self.masks
        covered = decides = masks[-1]
        if self.prunes and len(conditions) > 1:
            keep = self._irep(head)
            conditions = conditions[:keep]
            decides = masks[keep - 1]
            covered = masks[-2] if self.config.irep_coverage == IREP_COVERAGE_MLRL else decides
        return conditions, head, covered, decides

    def _engine(self):
        """The current backend's single steps over the features :meth:`_select` keeps."""
        return StepwiseSearch(self.backend, self.learner.features.num_features, self._select)

    def _select(self, features):
        """The drawn ``features`` (int64) worth searching: after the first condition, with
        raw features at hand, those that can split the covered examples."""
        if not self.masks or self.learner.X is None:
            return features
        return features[self._splittable(self.masks[-1])[features]]

    def _fix_head(self, growth):
        """Continue the rule with its head fixed to ``self.head``: on the narrow backend
        (columns = the head's labels, coverage = the first condition's), else on the same
        backend, with the heuristic no longer selecting labels."""
        params = growth.search.params.copy()
        params[P_SELECT] = 0.0
        learner, head, ref = self.learner, self.head, growth.best
        narrow, labels = learner.narrow_backend, head
        if narrow is not None:
            n, m = learner.Y.shape[0], head.shape[0]
            narrow.start_fit(learner.features, learner.Y[:, head], None, np.ones(n), 1.0)
            narrow.set_statistics(learner.g[:, head], learner.h[:, head])
            narrow.apply_refinement(ref)
            lift, max_lift = learner.lift
            heuristic = self.config.heuristic
            params = seco_params(heuristic[0], heuristic[1], lift[:m], max_lift[:m],
                                 self.tot_g[head], self.tot_h[head], select=False)
            growth.totals = (ref.g_sum[head], ref.h_sum[head], ref.count)
            self.backend, labels = narrow, np.arange(m, dtype=np.int32)
            growth.engine = self._engine()
        growth.labels = labels
        growth.search = dataclasses.replace(growth.search, params=params)

    def _params(self, heuristic, tot_g, tot_h, select=True):
        """The search's parameters (float64) of ``heuristic`` for the totals (K,)."""
        return seco_params(heuristic[0], heuristic[1], *self.learner.lift, tot_g, tot_h,
                           select)

    def _splittable(self, covered):
        """bool (A,): the features whose values differ among the covered examples with
        non-zero weight (a missing value counts as different; on sparse X: the features
        with an explicit entry there). Any condition on another feature covers all or none
        of them, i.e. the rule's current sums (not strictly better, the only kind of
        refinement accepted after the first condition) or nothing."""
        X, weights = self.learner.X, self.weights
        rows = covered if weights is None else covered & (weights != 0)
        if sp.issparse(X):
            out = np.zeros(X.shape[1], bool)
            out[X[np.flatnonzero(rows)].indices] = True
            return out
        values = X[rows]
        if values.shape[0] == 0:
            return np.zeros(X.shape[1], bool)
        return ~(values.min(axis=0) == values.max(axis=0))

    def _candidate_labels(self, tot_g):
        """The labels a single-label head may predict. A label without uncovered examples of
        its predicted value in the sample (``TP + FN = 0``) has the value 0 under every
        heuristic but Laplace, so it can never beat another label nor the threshold 0:
        leaving it out changes no result and saves its evaluations (many labels of sparse
        data sets run out of uncovered minority examples early)."""
        cfg, labels = self.config, self.all_labels
        if cfg.head_mode != HEAD_SECO_SINGLE or cfg.heuristic[0] == LAPLACE:
            return labels
        return labels[tot_g[labels] > 0]

    def _head(self, ref, labels, params):
        """The head's labels (int32) of the best refinement."""
        if self.config.head_mode == HEAD_SECO_SINGLE:
            return np.array([ref.label], dtype=np.int32)
        if params[P_SELECT] == 0.0:
            return labels
        return partial_head_labels(ref.g_sum, ref.h_sum, labels, params, ref.label)

    def _irep(self, head):
        """Number of conditions to keep (IREP as mlrl-seco, ``rule_pruning.irep_keep``: the
        first prefix that is not worse than the whole rule on the prune set, or a later one
        that is better), from the coverage after each condition."""
        cfg, g, h = self.config, self.learner.g, self.learner.h
        prune_set = self.weights == 0
        tot_g, tot_h = g[prune_set].sum(axis=0), h[prune_set].sum(axis=0)
        params = self._params(cfg.pruning_heuristic, tot_g, tot_h, select=False)

        def quality(mask):
            rows = mask & prune_set
            return side_quality(g[rows].sum(axis=0), h[rows].sum(axis=0), tot_g, tot_h, False,
                                head, cfg.head_mode, 1.0, params)[0]

        return irep_keep([quality(mask) for mask in self.masks])


def partial_head_labels(g_sum, h_sum, labels, params, num_labels):
    """The ``num_labels`` labels of ``labels`` with the largest heuristic values (ties: the
    earlier position first), as ``heuristics.partial_quality`` orders them. int32."""
    values = np.array([label_value(g_sum, h_sum, g_sum, h_sum, False, int(k), params)
                       for k in labels])
    order = np.lexsort((np.arange(labels.shape[0]), -values))
    return np.sort(labels[order[:num_labels]]).astype(np.int32)
