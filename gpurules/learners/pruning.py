"""Global pruning of a BOOMER fit: pre-pruning (early stopping) and post-pruning.

Both follow mlrl-boomer 0.15 (``PrePruning`` / ``PostPruning`` stopping criteria). Before
each rule is learned — after the default rule, and once more after the last rule — the
criterion is asked with the current number of rules ``r`` (the default rule counted). It
measures the model's loss as the mean :func:`~gpurules.objectives.evaluation.example_losses`
over the holdout examples (``use_holdout_set=true`` with a holdout set), else over the
training examples. :class:`LossTracker` keeps the scores of those examples up to date from
each rule's coverage, so a measurement costs O(examples), not a prediction of the model.

* **pre-pruning** (``min_rules=100, update_interval=1, stop_interval=1, num_past=50,
  num_recent=50, min_improvement=0.005, aggregation=avg``): the loss is measured when
  ``r > max(0, min_rules - (num_past + num_recent) * update_interval)`` and
  ``r % update_interval == 0``; the last ``num_recent`` measurements and the
  ``num_past`` ones before them are kept. Once both buffers are full, each measurement
  updates the best ``r`` (lowest loss) and, when ``r % stop_interval == 0``, the fit stops
  if ``(agg(past) - agg(recent)) / agg(recent) < min_improvement`` (``agg``: ``min``,
  ``max`` or ``avg``); the model keeps the best ``r`` rules seen since the buffers filled.
* **post-pruning** (``min_rules=100, interval=1``): every ``r >= min_rules`` with
  ``r % interval == 0`` is measured; the fit runs to its end and keeps the first ``r``
  rules with the lowest loss (the first such ``r``).
"""

from collections import deque
from dataclasses import dataclass

import numpy as np

from gpurules.objectives.evaluation import example_losses
from gpurules.objectives.losses import target_matrix

AGGREGATIONS = {"min": min, "max": max, "avg": lambda values: sum(values) / len(values)}


@dataclass(frozen=True)
class PruningResult:
    """A criterion's answer: ``stop`` the fit; ``num_used``: the number of rules (default
    rule counted) the model should keep, 0 if not (yet) known."""

    stop: bool = False
    num_used: int = 0


@dataclass(frozen=True)
class PrePruning:
    """``global_pruning="pre-pruning{...}"`` (defaults: mlrl-boomer's)."""

    use_holdout_set: bool = True
    min_rules: int = 100
    update_interval: int = 1
    stop_interval: int = 1
    num_past: int = 50
    num_recent: int = 50
    min_improvement: float = 0.005
    aggregation: str = "avg"

    name = "pre-pruning"

    def criterion(self):
        return PrePruningCriterion(self)


@dataclass(frozen=True)
class PostPruning:
    """``global_pruning="post-pruning{...}"`` (defaults: mlrl-boomer's)."""

    use_holdout_set: bool = True
    min_rules: int = 100
    interval: int = 1

    name = "post-pruning"

    def criterion(self):
        return PostPruningCriterion(self)


class PrePruningCriterion:
    """mlrl-boomer's early stopping (see the module). One instance per fit."""

    def __init__(self, config):
        self.config = config
        self.past = deque(maxlen=config.num_past)
        self.recent = deque(maxlen=config.num_recent)
        buffered = (config.num_past + config.num_recent) * config.update_interval
        self.offset = max(config.min_rules - buffered, 0)
        self.best_loss, self.best_rules = np.inf, 0
        self.stopped = False

    def test(self, num_rules, measure):
        """:class:`PruningResult` at ``num_rules`` rules; ``measure()`` returns the loss."""
        cfg = self.config
        if self.stopped or num_rules <= self.offset or num_rules % cfg.update_interval:
            return PruningResult()
        loss = measure()
        result = PruningResult()
        if len(self.past) == cfg.num_past:
            if loss < self.best_loss:
                self.best_loss, self.best_rules = loss, num_rules
            if num_rules % cfg.stop_interval == 0 and self._converged():
                self.stopped = True
                result = PruningResult(True, self.best_rules)
        if len(self.recent) == cfg.num_recent:
            self.past.append(self.recent[0])
        self.recent.append(loss)
        return result

    def _converged(self):
        """Whether the relative improvement of the recent over the past losses is below
        ``min_improvement``."""
        aggregate = AGGREGATIONS[self.config.aggregation]
        past, recent = aggregate(self.past), aggregate(self.recent)
        if recent == 0:  # mlrl-boomer divides by zero: inf or NaN, never below the minimum
            return False
        return (past - recent) / recent < self.config.min_improvement


class PostPruningCriterion:
    """mlrl-boomer's post-pruning (see the module). One instance per fit."""

    def __init__(self, config):
        self.config = config
        self.best_loss = np.inf

    def test(self, num_rules, measure):
        """:class:`PruningResult` at ``num_rules`` rules (never stops the fit)."""
        cfg = self.config
        if num_rules < cfg.min_rules or num_rules % cfg.interval:
            return PruningResult()
        loss = measure()
        if loss < self.best_loss:
            self.best_loss = loss
            return PruningResult(False, num_rules)
        return PruningResult()


class LossTracker:
    """The scores and losses of the examples a pruning criterion measures, kept current
    rule by rule.

    Args:
        loss: the fit's ``LossSpec`` / ``NonDecomposableLossSpec``.
        Y: uint8 (n, K), all labels of the fit (float64 targets for a regression loss).
        examples: int64 (m,), the measured examples.
    """

    def __init__(self, loss, Y, examples):
        self.loss = loss
        self.examples = np.asarray(examples, np.int64)
        self.Y = target_matrix(loss, Y[self.examples])
        self.scores = np.zeros(self.Y.shape, np.float64)
        self.losses = example_losses(loss, self.Y, self.scores)

    def update(self, covered, labels, scores):
        """Add a rule's head to the measured examples it covers.

        Args:
            covered: bool (n,), the rule's coverage over all examples of the fit.
            labels: int32 (c,) the head's labels; scores: float64 (c,), its (shrunk) scores.
        """
        rows = np.flatnonzero(covered[self.examples])
        if rows.size == 0:
            return
        self.scores[np.ix_(rows, labels)] += scores
        self.losses[rows] = example_losses(self.loss, self.Y[rows], self.scores[rows])

    def mean_loss(self):
        """The mean loss of the measured examples (float)."""
        return float(self.losses.mean()) if self.losses.size else 0.0
