"""Feature, instance and output sampling, drawn on the host from one seeded generator
(mlrl-boomer's algorithms and effective defaults; NumPy's random draws)."""

import math
from dataclasses import dataclass

import numpy as np

from gpurules.backends.base import floyd_indices
from gpurules.learners.holdout import example_wise_strata, output_wise_strata
from gpurules.objectives.complete_head import bounded_fraction


def floyd_sample(rng, n, m):
    """m distinct integers from range(n), sorted (Floyd's algorithm on one draw of m
    uniforms from ``rng``)."""
    return floyd_indices(rng.random(m), n)


@dataclass(frozen=True)
class FeatureSampling:
    """``without-replacement{sample_size,min_samples,max_samples}`` or ``none``.

    ``sample_size == 0`` means mlrl-boomer's default ``floor(log2(A - 1) + 1)`` features.
    """

    enabled: bool
    sample_size: float = 0.0
    min_samples: int = 1
    max_samples: int = 0

    def num_samples(self, num_features):
        if not self.enabled:
            return num_features
        if self.sample_size > 0:
            m = int(self.sample_size * num_features)
        else:
            m = int(math.floor(math.log2(num_features - 1) + 1)) if num_features > 1 else 1
        if self.max_samples > 0:
            m = min(m, self.max_samples)
        m = max(m, self.min_samples, 1)
        return min(m, num_features)

    def sample(self, rng, num_features):
        """Sorted int64 (m,) distinct feature indices, uniformly at random."""
        m = self.num_samples(num_features)
        if m >= num_features:
            return np.arange(num_features, dtype=np.int64)
        return floyd_sample(rng, num_features, m)


INSTANCE_SAMPLING_KINDS = ("none", "with-replacement", "without-replacement",
                           "stratified-output-wise", "stratified-example-wise")


@dataclass(frozen=True)
class InstanceSampling:
    """mlrl-boomer's ``instance_sampling``: ``kind`` one of ``INSTANCE_SAMPLING_KINDS``,
    ``{sample_size, min_samples, max_samples}`` as there (``max_samples = 0``: no limit).

    The number of examples drawn is ``bounded_fraction(n, sample_size, min_samples,
    max_samples)`` for the two unstratified kinds. The stratified kinds use the strata of
    the holdout split (``learners.holdout``); per stratum of m examples they draw
    ``sample_size * m`` examples without replacement (float32), rounded up while fewer
    than the bounded total have been drawn than left out, down otherwise, by a coin flip
    on a tie (mlrl-boomer's ``tiebreak``), so ``min_samples``/``max_samples`` only steer
    the rounding.
    """

    kind: str = "none"
    sample_size: float = 0.66
    min_samples: int = 1
    max_samples: int = 0

    def strata(self, Y):
        """The strata of labels ``Y`` (uint8 (n, K)) a stratified kind draws from, once per
        fit: a list of int64 index arrays partitioning range(n); None for other kinds."""
        if self.kind == "stratified-output-wise":
            return output_wise_strata(Y)
        if self.kind == "stratified-example-wise":
            return example_wise_strata(Y)
        return None

    def sample(self, rng, num_examples, strata=None):
        """int32 (n,) weights: how often each of ``num_examples`` examples is drawn; None
        (unit weights) for ``none``. ``strata``: :meth:`strata` of the examples' labels,
        required by the stratified kinds."""
        if self.kind == "none":
            return None
        m = bounded_fraction(num_examples, self.sample_size, self.min_samples,
                             self.max_samples)
        if self.kind == "with-replacement":
            drawn = rng.integers(0, num_examples, size=m)
            return np.bincount(drawn, minlength=num_examples).astype(np.int32)
        weights = np.zeros(num_examples, dtype=np.int32)
        if self.kind == "without-replacement":
            weights[rng.choice(num_examples, size=m, replace=False)] = 1
            return weights
        if strata is None:
            raise ValueError(f"instance_sampling={self.kind!r} needs the strata of the labels")
        for stratum, take in zip(strata, stratum_sample_counts(
                rng, [s.shape[0] for s in strata], self.sample_size, m)):
            weights[stratum[rng.permutation(stratum.shape[0])[:take]]] = 1
        return weights


def stratum_sample_counts(rng, sizes, sample_size, num_samples):
    """How many examples to draw from each stratum (list of ints, one per entry of
    ``sizes``) for a sample of ``num_samples`` of ``sum(sizes)`` examples: mlrl-boomer's
    rounding of ``float32(sample_size) * size`` (see :class:`InstanceSampling`). Desired
    counts that would fall below zero count as zero (mlrl-boomer's unsigned counters wrap
    around instead and then round up)."""
    num_out = sum(sizes) - num_samples
    drawn = left_out = 0
    counts = []
    for size in sizes:
        decimal = np.float32(sample_size) * np.float32(size)
        desired, desired_out = max(num_samples - drawn, 0), max(num_out - left_out, 0)
        round_up = desired > desired_out or (desired == desired_out and rng.random() < 0.5)
        take = int(math.ceil(decimal) if round_up else math.floor(decimal))
        drawn += take
        left_out += size - take
        counts.append(take)
    return counts


OUTPUT_SAMPLING_KINDS = ("none", "round-robin", "without-replacement")


@dataclass(frozen=True)
class OutputSampling:
    """mlrl-boomer's ``output_sampling``: the outputs a rule's head may predict, drawn per
    rule (not for the default rule). ``round-robin``: rule i (0-based, the default rule not
    counted) may predict output ``i % K`` only; ``without-replacement``:
    ``bounded_fraction(K, sample_size, min_samples, max_samples)`` distinct outputs drawn
    uniformly (defaults 0.33, 1, 1: one output). The head type then chooses among them as
    among all outputs without sampling (a complete head predicts all sampled outputs)."""

    kind: str = "none"
    sample_size: float = 0.33
    min_samples: int = 1
    max_samples: int = 1

    def sample(self, rng, num_outputs, rule_index):
        """Sorted int32 (m,) outputs rule number ``rule_index`` may predict."""
        if self.kind == "none":
            return np.arange(num_outputs, dtype=np.int32)
        if self.kind == "round-robin":
            return np.array([rule_index % num_outputs], np.int32)
        m = bounded_fraction(num_outputs, self.sample_size, self.min_samples,
                             self.max_samples)
        return floyd_sample(rng, num_outputs, min(m, num_outputs)).astype(np.int32)
