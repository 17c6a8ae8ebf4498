"""Gradient boosting of rules (BOOMER) over any backend.

The loop: a default rule (one Newton step on all examples, no shrinkage), then rules
induced one by one by greedy top-down refinement on sampled features, each rule's head
shrunk and applied to the statistics of the examples it covers.

A rule is grown by the refinement loop that BOOMER and SeCo share
(``learners.rule_induction``) with BOOMER's hooks, pruned and given its head in
``learners.boosting_rule``.
"""

import dataclasses
import functools
import logging
import math
import time
from dataclasses import dataclass

import numpy as np

from gpurules.backends.base import (BATCH_LEARNED, BATCH_NO_RULE, BATCH_ZERO_HEAD, RulePlan,
                                    SearchSettings)
from gpurules.backends.instance_draws import SAMPLE_NONE
from gpurules.exceptions import FitStoppedEarlyWarning, warn
from gpurules.learners.beam_search import BeamSettings, induce_rule_beam
from gpurules.learners.holdout import Holdout
from gpurules.learners.boosting_rule import BLOCK, BoostingRule, head_scores, multi_output_head
from gpurules.learners.post_optimization import rule_features
from gpurules.learners.pruning import LossTracker
from gpurules.learners.rule_induction import (covering_bound, first_condition_redraws,
                                              induce_rule)
from gpurules.learners.rule_pruning import IREP_COVERAGE_MLRL, IREP_COVERAGES, cover
from gpurules.learners.sampling import FeatureSampling, InstanceSampling, OutputSampling
from gpurules.model import RuleModelBuilder
from gpurules.objectives import fixed_point
from gpurules.objectives.heads import HEAD_SINGLE
from gpurules.objectives.losses import LOGISTIC
from gpurules.objectives.multi_output import (HEAD_MULTI_OUTPUT, SELECT_ALL, all_outputs,
                                              multi_output_params)
from gpurules.objectives.non_decomposable import LOGISTIC as ND_LOGISTIC
from gpurules.objectives.non_decomposable import NonDecomposableLossSpec
from gpurules.objectives.quality import boosting_params, boosting_quality
from gpurules.progress import MAX_RULES, TIME_LIMIT, FitProgress

# max_rules=0 (no limit) without a time_limit: a boosted fit improves its training loss
# with every rule forever (logistic margins grow without bound), so it stops here
UNLIMITED_RULES_CEILING = 100_000

# the most rules per call of a backend's learn_rules (plain fits), and about how long a
# call should take (_learn_rules)
RULE_BATCH = 64
BATCH_SECONDS = 0.1

ZERO_HEAD_REASON = "the best rule's head is zero (the statistics of the covered examples " \
                   "no longer change)"

logger = logging.getLogger("gpurules")


@dataclass(frozen=True)
class BoostingConfig:
    """Resolved hyper-parameters of a BOOMER fit (see ``BoomerClassifier``)."""

    loss: object  # LossSpec or NonDecomposableLossSpec
    head_mode: int  # HEAD_COMPLETE, HEAD_SINGLE, HEAD_ND_SINGLE or HEAD_MULTI_OUTPUT
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
    # a rule covers at least max(min_coverage, ceil(min_support * n)) examples, at most n
    # (mlrl-boomer's calculateBoundedFraction); 0: min_coverage alone
    min_support: float = 0.0
    # rule_induction="top-down-beam-search{beam_width,resample_features,...}": the beam's
    # width (0: the greedy search) and whether each beam rule draws its own features
    beam_width: int = 0
    resample_features: bool = False
    # HEAD_MULTI_OUTPUT's params (multi_output.multi_output_params); None: [l1, l2]
    head_params: np.ndarray = None
    holdout: Holdout = Holdout()  # the examples set aside (zero training weight)
    output_sampling: OutputSampling = OutputSampling()  # the outputs each rule may predict
    # whether the default rule's head uses the label bins of GBLB (mlrl-boomer 0.15.6)
    binned_default_rule: bool = True
    # whether the default rule's head is of the rules' type (single-output or partial:
    # mlrl-boomer's sparse statistics with default_rule="true") instead of complete
    partial_default_rule: bool = False
    pruning: object = None  # pruning.PrePruning, pruning.PostPruning or None
    # rule_pruning="irep": prune each rule on the training examples its instance sample
    # left out (learners.rule_pruning); irep_coverage: which examples its head updates
    irep: bool = False
    irep_coverage: str = IREP_COVERAGE_MLRL
    # post_optimization="sequential{...}": a post_optimization.SequentialPostOptimization
    post_optimization: object = None
    # statistic_type: 32 ("32-bit", mlrl-boomer's default) or 64; how fine the fixed-point
    # scale may be (fixed_point.choose_scale) and so the model; see statistic_dtype
    statistic_bits: int = 32

    def __post_init__(self):
        if self.statistic_bits not in (32, 64):
            raise ValueError(f"statistic_bits={self.statistic_bits!r}; supported: 32, 64")
        if self.irep_coverage not in IREP_COVERAGES:
            raise ValueError(f"irep_coverage={self.irep_coverage!r}; supported: "
                             f"{', '.join(map(repr, IREP_COVERAGES))}")

    @property
    def non_decomposable(self):
        return isinstance(self.loss, NonDecomposableLossSpec)

    @property
    def search_params(self):
        """``params`` of the search's head mode."""
        if self.head_params is not None:
            return np.asarray(self.head_params, np.float64)
        return boosting_params(self.l1, self.l2)

    @functools.cached_property
    def initial_search(self):
        """The SearchSettings of a rule's first step (no quality to beat), made once."""
        return SearchSettings(self.head_mode, self.search_params, self.min_coverage, -np.inf)

    def covering_bound(self, n):
        """The ``min_coverage`` of a fit on ``n`` examples (``min_support`` applied)."""
        return covering_bound(self.min_coverage, self.min_support, n)

    @property
    def beam(self):
        """The rules' beam search (``beam_search.BeamSettings``), or None (greedy)."""
        if not self.beam_width:
            return None
        return BeamSettings(self.beam_width, self.resample_features, self.max_conditions,
                            self.max_head_refinements)

    @property
    def partial_head(self):
        """Whether the head selects outputs (partial-fixed / partial-dynamic)."""
        return self.head_mode == HEAD_MULTI_OUTPUT and self.initial_search.params[3] != SELECT_ALL


def _largest_abs(scores):
    """float: the largest |score| of float64 (m,) ``scores`` (NaN if one is NaN), 0 if none."""
    return float(np.abs(scores).max()) if scores.size else 0.0


def statistic_dtype(loss, bits=32):
    """How the statistics of ``loss`` (a loss spec) are kept: ``np.int32`` with ``bits`` 32
    (``statistic_type="32-bit"``) for the logistic losses, whose statistics are bounded
    before they are computed (|g|, |h| <= 1 per unit weight), so that a scale of 2**30
    units per unit weight (``fixed_point.choose_scale``'s ``example_weight``) keeps every
    one of them within an int32 and the backend may store them so
    (``Backend.start_fit``); ``np.int64`` otherwise, at the finest scale the sums allow.
    The squared losses keep int64: their bound grows with the scores and targets while
    their Hessians stay near 1 (targets of 10**9 would leave a Hessian less than one unit
    at a 32-bit scale), and a value computed before a re-encoding
    (``BoostingLearner._rescale``) may exceed the bound."""
    if bits == 32 and loss is not None and loss.code in (LOGISTIC, ND_LOGISTIC):
        return np.int32
    return np.int64


class BoostingLearner:
    """Fits a :class:`RuleModel` with a backend. One instance per fit.

    ``progress``: a :class:`~gpurules.progress.FitProgress` told of every rule and of why
    the fit stopped (None: a silent one)."""

    def __init__(self, config, backend, rng, progress=None):
        self.config = config
        self.backend = backend
        self.rng = rng
        self.progress = progress or FitProgress(type(self).__name__)
        self._scale_of = (None, None)  # ((choose_scale's arguments), scale): _scale
        self._example_weight = None  # choose_scale's example_weight (fit sets it)
        self._weights = None  # float64 (n,) base weights (fit sets them)

    def fit(self, features, Y, base_weight):
        """Learn the rules.

        Args:
            features: the backend's feature representation (e.g. PresortedFeatures).
            Y: uint8 (n, K) labels.
            base_weight: float64 (n,) example weights.

        Returns:
            RuleModelBuilder with the default rule and the rules.
        """
        n, K = Y.shape
        self._requested_min_coverage = self.config.min_coverage  # for the warning
        self.config = dataclasses.replace(self.config,
                                          min_coverage=self.config.covering_bound(n))
        cfg, backend, progress = self.config, self.backend, self.progress
        holdout = cfg.holdout.split(self.rng, Y)
        self.holdout_ = holdout  # bool (n,) or None, for inspection and tests
        self._train = None if holdout is None else ~holdout
        self._strata = cfg.instance_sampling.strata(Y if holdout is None else Y[~holdout])
        self._num_induced = 0  # rules induced so far (output sampling's round-robin)
        if holdout is not None:  # held-out examples: no statistics, never counted
            base_weight = np.where(holdout, 0.0, base_weight)
        self._tracker = self._loss_tracker(Y, holdout)
        criterion = None if cfg.pruning is None else cfg.pruning.criterion()
        self._score_bound = 0.0
        self._total_weight = float(n) * float(base_weight.max())
        self._weights = base_weight  # (_check_hessians)
        dtype = statistic_dtype(cfg.loss, cfg.statistic_bits)
        # with int32 statistics, scales at which each example's statistic fits one
        self._example_weight = float(base_weight.max()) if dtype is np.int32 else None
        backend.start_fit(features, Y, cfg.loss, base_weight, self._scale(), dtype)
        self._rescale()
        builder = RuleModelBuilder(K)
        all_labels = np.arange(K, dtype=np.int32)
        start = time.perf_counter()
        if cfg.default_rule:
            backend.reset_coverage()
            g, h, _ = backend.covered_totals(None)
            scores = self._default_scores(g, h, all_labels)
            self._apply(all_labels, scores)
            builder.set_default_rule(scores)
            progress.rule(len(builder), 0, n, K)
        limit = cfg.max_rules or UNLIMITED_RULES_CEILING
        reason = MAX_RULES if cfg.max_rules else \
            f"the safety ceiling of {limit} rules (max_rules=0 without a time_limit)"
        num_used = 0
        plan = self._rule_plan(features.num_features, n)
        self._batch = 1  # rules in the next batch (_learn_rules)
        while True:
            if criterion is not None:
                result = criterion.test(len(builder), self._tracker.mean_loss)
                num_used = result.num_used or num_used
                if result.stop:
                    reason = f"{cfg.pruning.name}: the loss stopped improving"
                    break
            if len(builder) >= limit:
                break
            if cfg.time_limit and time.perf_counter() - start >= cfg.time_limit:
                reason = TIME_LIMIT
                break
            if plan is not None:  # a batch of plain rules in one call of the backend
                stop = self._learn_rules(plan, builder, limit - len(builder), n)
                if stop is None:
                    continue
                reason = stop
                self._stopped(len(builder), reason)
                break
            rule = self._induce_rule(features.num_features, n, K)
            if rule is None:
                reason = self._no_rule_reason(n)
                self._stopped(len(builder), reason)
                break
            conditions, labels, scores, covered = rule
            scores = scores * cfg.shrinkage
            largest = _largest_abs(scores)
            if largest == 0:  # statistics would not change: same rule again (NaN goes on)
                reason = ZERO_HEAD_REASON
                self._stopped(len(builder), reason)
                break
            self._apply(labels, scores, largest)
            builder.add_rule(conditions, labels, scores)
            progress.rule(len(builder), len(conditions), covered, len(labels),
                          loss=self._measured_loss())
        if num_used and num_used < len(builder):
            if reason != TIME_LIMIT:  # (a time_limit stop keeps its own log line)
                reason = f"{cfg.pruning.name} kept the best {num_used} of {len(builder)} " \
                         f"rules" + ("" if reason == MAX_RULES else f" ({reason})")
            builder.truncate(num_used)
        if cfg.post_optimization is not None:
            self._post_optimize(builder, features.num_features, n, K)
        progress.stop(len(builder), reason)
        if cfg.max_rules == 0 and not cfg.time_limit and len(builder) >= limit:
            warn(f"max_rules=0 without a time_limit: stopped at the safety ceiling "
                 f"of {limit} rules; set max_rules or time_limit", FitStoppedEarlyWarning)
        return builder

    def _rule_plan(self, num_features, n):
        """The ``RulePlan`` of this fit's rules (of ``n`` examples) where the backend learns
        them in batches (``backend.learn_rules``: the same rules as the loop over
        :meth:`_induce_rule`, without its Python per rule), else None: the fit is not plain
        (``RulePlan``'s docstring) or the backend does not serve it."""
        cfg, backend = self.config, self.backend
        sampling = cfg.instance_sampling
        kind = sampling.compiled_kind()
        plain = not cfg.time_limit and cfg.pruning is None and \
            self._train is None and kind is not None and \
            not (cfg.irep and kind != SAMPLE_NONE) and \
            cfg.output_sampling.kind in ("none", "round-robin") and \
            (not cfg.non_decomposable or cfg.loss.code == ND_LOGISTIC)
        if not plain or not hasattr(backend, "learn_rules"):
            return None
        m = cfg.feature_sampling.num_samples(num_features)
        drawn = m if m < num_features else 0
        plan = RulePlan(num_features, drawn, first_condition_redraws(num_features, drawn),
                        BLOCK, cfg.max_conditions, cfg.max_head_refinements, cfg.partial_head,
                        cfg.head_mode, cfg.search_params, cfg.min_coverage, cfg.shrinkage,
                        cfg.l1, cfg.l2, cfg.output_sampling.kind == "round-robin",
                        cfg.beam_width, cfg.resample_features, kind,
                        sampling.num_samples(n) if kind != SAMPLE_NONE else 0,
                        float(sampling.sample_size), recalculate=cfg.recalculate_predictions)
        if self._strata is not None:
            plan = plan._replace(strata=(self._strata.members, self._strata.offsets))
        return plan if backend.learns_rules(plan) else None

    def _learn_rules(self, plan, builder, count, n):
        """Up to ``count`` rules from ``backend.learn_rules``, added to ``builder`` and the
        score bound as the loop over :meth:`_induce_rule` adds them. Returns why the fit
        stops (no rule, a zero head), or None to go on.

        A batch holds as many rules as took about ``BATCH_SECONDS`` in the last one (1 to
        ``RULE_BATCH``), so that progress lines and an interrupt wait no longer on large
        data (the rules do not depend on where the batches end)."""
        start = time.perf_counter()
        rules, status = self.backend.learn_rules(plan, self.rng, min(count, self._batch),
                                                 self._score_room(), self._num_induced)
        elapsed = time.perf_counter() - start
        if elapsed < BATCH_SECONDS / 2:
            self._batch = min(2 * self._batch, RULE_BATCH)
        elif elapsed > 2 * BATCH_SECONDS:
            self._batch = max(self._batch // 2, 1)
        for conditions, labels, scores, covered, largest in rules:
            self._score_bound += largest
            builder.add_rule(conditions, labels, scores)
            self.progress.rule(len(builder), len(conditions), covered, len(labels))
        self._num_induced += len(rules)
        self._rescale()  # (a batch ends where the scale would change: _score_room)
        if not rules and status == BATCH_LEARNED:  # (else the fit would never end)
            raise RuntimeError("the backend's learn_rules returned no rule and no reason")
        if status == BATCH_NO_RULE:
            return self._no_rule_reason(n)
        return ZERO_HEAD_REASON if status == BATCH_ZERO_HEAD else None

    def _loss_tracker(self, Y, holdout):
        """The :class:`LossTracker` of the examples global pruning measures (the holdout
        set if it asks for it and there is one, else the training examples), or None."""
        pruning = self.config.pruning
        self._tracker_on_holdout = False
        if pruning is None:
            return None
        if holdout is not None and pruning.use_holdout_set:
            self._tracker_on_holdout = True
            return LossTracker(self.config.loss, Y, np.flatnonzero(holdout))
        measured = np.arange(Y.shape[0]) if holdout is None else np.flatnonzero(~holdout)
        return LossTracker(self.config.loss, Y, measured)

    def _measured_loss(self):
        """(name, callable) of the loss global pruning measures, for the progress lines;
        None without global pruning."""
        if self._tracker is None:
            return None
        name = "holdout loss" if self._tracker_on_holdout else "training loss"
        return name, self._tracker.mean_loss

    def _sample_weights(self, n):
        """The instance weights of the next rule: int32 (n,) counts (held-out examples 0)
        or None (every example once)."""
        sampling = self.config.instance_sampling
        if self._train is None:
            return sampling.sample(self.rng, n, self._strata)
        train = np.flatnonzero(self._train)
        weights = np.zeros(n, np.int32)
        drawn = sampling.sample(self.rng, train.shape[0], self._strata)
        weights[train] = 1 if drawn is None else drawn
        return weights

    def _no_rule_reason(self, n):
        """Why no rule could be induced (for the warning)."""
        requested = self._requested_min_coverage
        num_train = n if self._train is None else int(self._train.sum())
        if requested > num_train:
            return f"min_coverage={requested} exceeds the {num_train} training examples"
        return ("no condition on the sampled features leaves min_coverage examples covered "
                "and improves the objective (constant features, or too few examples)")

    def _stopped(self, num_rules, reason):
        """Say that the fit ends with ``num_rules`` rules: a warning when ``max_rules``
        asked for more, an INFO line when the number was unlimited (the natural end)."""
        message = f"the fit stopped after {num_rules} rule(s) (incl. the default rule): " \
                  f"{reason}"
        if self.config.max_rules == 0:
            logger.info("gpurules: %s", message)
        else:
            warn(message, FitStoppedEarlyWarning)

    def _scale(self):
        """The fixed-point scale for the statistics' bound now (``fixed_point.choose_scale``,
        the last one again while its arguments are the same: the logistic losses' bound
        is always 1)."""
        loss = self.config.loss
        if self.config.non_decomposable:  # bounded by the largest statistic seen so far
            bound = loss.statistic_bound(self._score_bound,
                                         getattr(self.backend, "max_statistic", 0.0))
        else:
            bound = loss.statistic_bound(self._score_bound)
        key = (self._total_weight, bound, self._example_weight)
        if key != self._scale_of[0]:  # (the squared losses' bound moves with every rule)
            scale = fixed_point.choose_scale(*key)
            if scale != self._scale_of[1]:
                self._check_hessians(scale, bound)
            self._scale_of = (key, scale)
        return self._scale_of[1]

    def _check_hessians(self, scale, bound):
        """ValueError where a new ``scale`` no longer holds the squared losses' Hessians
        (``fixed_point.hessian_units``, O(n): called when the scale changes, not with every
        bound): targets (or scores) so large, or weights so large beside the smallest, that
        heads would be computed without them (a model whose scores diverge). The logistic
        losses bound their statistics by 1."""
        loss = self.config.loss
        if self.config.non_decomposable or loss.code == LOGISTIC or \
                fixed_point.hessian_units(scale, self._weights) is None:
            return
        raise ValueError(
            f"the targets or sample weights span too large a range for the statistics: "
            f"with |target| up to {loss.target_bound:.3g}, scores up to "
            f"{self._score_bound:.3g} (statistics up to {bound:.3g} per unit weight) and a "
            f"total weight of {self._total_weight:.3g}, the fixed-point scale 2**"
            f"{int(np.log2(scale))} cannot hold each example's Hessian (1 per unit weight; "
            f"docs/user-guide.md, 'Statistics'). Standardize the targets (e.g. "
            f"sklearn.compose.TransformedTargetRegressor with a StandardScaler) or "
            f"rescale the sample weights")

    def _score_room(self):
        """How much the score bound may still grow before the fixed-point scale
        (:meth:`_scale`) would change: ``inf`` where the loss bounds its statistics a
        priori (the logistic losses), else found by bisection (the scale never grows with
        the bound). A batch of rules (``backend.learn_rules``) ends with the rule that
        uses up the room, so that the statistics are re-encoded after it, as the loop over
        single rules re-encodes them."""
        loss, total = self.config.loss, self._total_weight
        if self.config.non_decomposable or loss.code == LOGISTIC:  # (plans: logistic only)
            return math.inf

        def scale_at(score_bound):
            return fixed_point.choose_scale(total, loss.statistic_bound(score_bound),
                                            self._example_weight)

        scale = scale_at(self._score_bound)
        lo, hi = self._score_bound, self._score_bound + 1.0
        while hi < 1e300 and scale_at(hi) == scale:
            lo, hi = hi, 2 * hi
        for _ in range(64):  # the largest bound of the same scale lies in [lo, hi)
            mid = lo + (hi - lo) / 2
            if mid in (lo, hi):
                break
            if scale_at(mid) == scale:
                lo = mid
            else:
                hi = mid
        return lo - self._score_bound

    def _rescale(self):
        """Re-encode the statistics if they outgrew the fixed-point scale."""
        scale = self._scale()
        if scale < self.backend.scale:
            self.backend.set_scale(scale)
            self._rescale()  # re-encoding may observe larger statistics (squared losses)

    def _apply(self, labels, scores, largest=None):
        """Add a head to the covered examples (and to the pruning's measured examples);
        re-encode if scores outgrow the scale. ``largest``: ``_largest_abs(scores)`` if
        the caller has it."""
        self.backend.update_statistics(labels, scores)
        if self._tracker is not None:
            self._tracker.update(self.backend.covered_mask(), labels, scores)
        self._score_bound += _largest_abs(scores) if largest is None else largest
        self._rescale()

    def _default_scores(self, g, h, all_labels):
        """The default rule's head (float64 (K,)): the complete head over all outputs; with
        label binning (``head_params`` of GBLB) and ``binned_default_rule`` one score per
        label bin, as mlrl-boomer 0.15.6, else (and for non-decomposable losses without
        binning) the full system."""
        cfg, inv_scale = self.config, self.backend.inv_scale
        if cfg.partial_default_rule:
            return self._rule_head_scores(g, h, all_labels)
        binned = cfg.head_params is not None and cfg.head_params[7] != 0.0
        if binned and cfg.binned_default_rule:
            params = all_outputs(np.asarray(cfg.head_params, np.float64))
            labels, scores = multi_output_head(g, h, all_labels, inv_scale, params)
            full = np.zeros(all_labels.shape[0])  # outputs of a bin with criterion 0: 0
            full[labels] = scores
            return full
        if cfg.non_decomposable:
            params = multi_output_params(cfg.l1, cfg.l2, packed=True)
            return multi_output_head(g, h, all_labels, inv_scale, params)[1]
        return head_scores(g, h, all_labels, inv_scale, cfg.l1, cfg.l2)

    def _rule_head_scores(self, g, h, all_labels):
        """float64 (K,): the head of the rules' type (``HEAD_SINGLE``: the label the search's
        quality chooses, ``quality.boosting_quality``; ``HEAD_MULTI_OUTPUT``: its partial head)
        for the sums g, h of every example, 0 for the labels it leaves out."""
        cfg, inv_scale = self.config, self.backend.inv_scale
        full = np.zeros(all_labels.shape[0])
        if cfg.head_mode == HEAD_SINGLE:
            label = boosting_quality(g, h, g, h, False, all_labels, inv_scale, cfg.l1,
                                     cfg.l2, True, None)[1]  # once a fit: its Python body
            full[label] = head_scores(g, h, all_labels[label:label + 1], inv_scale, cfg.l1,
                                      cfg.l2)[0]
        else:
            labels, scores = multi_output_head(g, h, all_labels, inv_scale, cfg.head_params)
            full[labels] = scores
        return full

    def _post_optimize(self, builder, num_features, n, num_outputs):
        """Sequential post-optimization (``cfg.post_optimization``, see
        ``learners.post_optimization``): ``num_iterations`` times, each rule of ``builder``
        in order has its scores taken out of the statistics and is replaced in place by a
        rule grown anew (kept if none can be grown); the new rule's scores are applied."""
        cfg, start = self.config, time.perf_counter()
        post = cfg.post_optimization
        replaced = 0
        for _ in range(post.num_iterations):
            for i in range(builder.num_rules):
                conditions, labels, scores = builder.rule(i)
                self._revert_rule(conditions, labels, scores)
                rule = self._induce_rule(
                    num_features, n, num_outputs, None if post.refine_heads else labels,
                    None if post.resample_features else rule_features(conditions))
                if rule is None:
                    continue
                conditions, labels, scores, _ = rule
                scores = scores * cfg.shrinkage
                self._apply(labels, scores)
                builder.replace_rule(i, conditions, labels, scores)
                replaced += 1
        if self.progress.verbose:
            logger.info("%s: post-optimization: %d iteration(s) over %d rule(s), %d "
                        "replaced, %.1f s", self.progress.name, post.num_iterations,
                        builder.num_rules, replaced, time.perf_counter() - start)

    def _revert_rule(self, conditions, labels, scores):
        """Take a rule's head (``labels`` int32 (m,), its applied ``scores`` float64 (m,))
        back out of the statistics of every example its ``conditions`` cover."""
        cover(self.backend, conditions)
        self._apply(labels, -scores)

    def _induce_rule(self, num_features, n, num_outputs, labels=None, subset=None):
        """Grow a rule (``rule_induction.induce_rule`` with :class:`BoostingRule`'s hooks)
        whose head may predict the outputs ``labels`` (int32; None: those
        ``output_sampling`` draws, of ``num_outputs``), each step on the features
        ``feature_sampling`` draws, or on every feature of ``subset`` (int64 (f,) sorted;
        None: sampled). Returns (conditions, labels, scores, the number of (sampled)
        examples covered) or None."""
        weights = self._sample_weights(n)
        if labels is None:
            labels = self.config.output_sampling.sample(self.rng, num_outputs,
                                                        self._num_induced)
            self._num_induced += 1
        hooks = BoostingRule(self.config, self.backend, self.rng, self._train, weights, labels,
                             num_features, subset)
        beam = self.config.beam
        if beam is not None:
            return induce_rule_beam(hooks, beam)
        return induce_rule(hooks)
