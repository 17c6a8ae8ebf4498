"""Feature, instance and output sampling, drawn on the host from one seeded generator
(mlrl-boomer's algorithms and effective defaults; NumPy's random draws)."""

import math
from dataclasses import dataclass

import numpy as np

from gpurules.backends.base import floyd_indices
from gpurules.backends.instance_draws import (SAMPLE_NONE, SAMPLE_STRATIFIED,
                                              SAMPLE_WITH_REPLACEMENT,
                                              SAMPLE_WITHOUT_REPLACEMENT, round_stratum,
                                              stratified_sample)
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
# how an InstanceSampling draws: as mlrl-boomer (BOOMER's learner) or as mlrl-seco (SeCo's)
BOOMER_DRAWS, SECO_DRAWS = "boomer", "seco"


@dataclass(frozen=True)
class InstanceSampling:
    """``instance_sampling`` of mlrl-boomer and mlrl-seco: ``kind`` one of
    ``INSTANCE_SAMPLING_KINDS``, ``{sample_size, min_samples, max_samples}`` as there
    (``max_samples = 0``: no limit); ``draws`` says whose random draws it makes, so that a
    model's examples are drawn in the same order as always.

    ``draws = BOOMER_DRAWS`` (BOOMER): ``bounded_fraction(n, sample_size, min_samples,
    max_samples)`` examples for the two unstratified kinds, ``without-replacement`` by
    ``rng.choice``. ``draws = SECO_DRAWS`` (SeCo): ``round(sample_size * n)`` examples
    (float64, then bounded by ``max_samples``, ``min_samples`` and n),
    ``without-replacement`` by :func:`floyd_sample`.

    The stratified kinds split the examples into strata once per fit (:meth:`strata`; for
    ``stratified-example-wise`` the two conventions order tied strata differently) and
    draw ``sample_size * m`` examples (float32) without replacement from each stratum of
    m examples, rounded up while more examples are still wanted in the sample than out of
    it, down while fewer, by a coin flip on a tie (mlrl-boomer's ``tiebreak``,
    ``instance_draws.round_stratum``). BOOMER: the examples wanted in the sample are the
    bounded total above (so ``min_samples``/``max_samples`` only steer the rounding),
    every stratum's count is rounded first (``backends.instance_draws.stratified_sample``),
    then each stratum draws ``rng.permutation``. SeCo: ``round(float32(sample_size) *
    float32(n))`` are wanted, and each stratum's count is rounded
    (:func:`seco_stratum_counts`) just before :func:`floyd_sample` draws it (nothing drawn
    for a count of 0).
    """

    kind: str = "none"
    sample_size: float = 0.66
    min_samples: int = 1
    max_samples: int = 0
    draws: str = BOOMER_DRAWS

    def __post_init__(self):
        if self.draws not in (BOOMER_DRAWS, SECO_DRAWS):
            raise ValueError(f"draws must be {BOOMER_DRAWS!r} or {SECO_DRAWS!r}, got "
                             f"{self.draws!r}")

    def num_samples(self, num_examples):
        """How many examples the unstratified kinds draw of ``num_examples`` (int)."""
        if self.draws == BOOMER_DRAWS:
            return bounded_fraction(num_examples, self.sample_size, self.min_samples,
                                    self.max_samples)
        m = int(round(self.sample_size * num_examples))
        if self.max_samples > 0:
            m = min(m, self.max_samples)
        return min(max(m, self.min_samples, 1), num_examples)

    def compiled_kind(self):
        """This sampling as ``backends.instance_draws.DRAWS`` draws it inside the
        CPU's batched rule loop (``SAMPLE_*``), or None where it does not (SeCo's
        draws)."""
        if self.kind == "none":
            return SAMPLE_NONE
        if self.draws != BOOMER_DRAWS:
            return None
        return {"with-replacement": SAMPLE_WITH_REPLACEMENT,
                "without-replacement": SAMPLE_WITHOUT_REPLACEMENT,
                "stratified-output-wise": SAMPLE_STRATIFIED,
                "stratified-example-wise": SAMPLE_STRATIFIED}.get(self.kind)

    def strata(self, Y):
        """The strata of labels ``Y`` (uint8 (n, K)) a stratified kind draws from, once per
        fit: a list of int64 index arrays partitioning range(n); None for other kinds."""
        if self.kind == "stratified-output-wise":
            return Strata(output_wise_strata(Y))
        if self.kind == "stratified-example-wise":
            return Strata(example_wise_strata(Y) if self.draws == BOOMER_DRAWS else
                          example_wise_strata_by_vector(Y))
        return None

    def sample(self, rng, num_examples, strata=None):
        """int32 (n,) weights: how often each of ``num_examples`` examples is drawn; None
        (unit weights) for ``none``. ``strata``: :meth:`strata` of the examples' labels,
        required by the stratified kinds."""
        if self.kind == "none":
            return None
        if self.kind == "with-replacement":
            drawn = rng.integers(0, num_examples, size=self.num_samples(num_examples))
            return np.bincount(drawn, minlength=num_examples).astype(np.int32)
        weights = np.zeros(num_examples, dtype=np.int32)
        if self.kind == "without-replacement":
            m = self.num_samples(num_examples)
            weights[rng.choice(num_examples, size=m, replace=False)
                    if self.draws == BOOMER_DRAWS else floyd_sample(rng, num_examples, m)] = 1
            return weights
        if strata is None:
            raise ValueError(f"instance_sampling={self.kind!r} needs the strata of the labels")
        strata = strata if isinstance(strata, Strata) else Strata(strata)
        if self.draws == BOOMER_DRAWS:
            stratified_sample(rng, strata.members, strata.offsets,
                               np.float32(self.sample_size), self.num_samples(num_examples),
                               weights)
            return weights
        sizes = np.diff(strata.offsets).tolist()
        wanted = int(round(np.float32(self.sample_size) * np.float32(num_examples)))
        for stratum, take in zip(strata, seco_stratum_counts(
                rng, sizes, self.sample_size, wanted, num_examples - wanted)):
            if take > 0:
                weights[stratum[floyd_sample(rng, stratum.shape[0], take)]] = 1
        return weights


class Strata(list):
    """The strata a stratified sample draws from: a list of int64 index arrays (ascending)
    partitioning the examples, and the same once concatenated for the compiled draw,
    ``members`` int64 (n,) with stratum ``s`` at ``offsets[s]:offsets[s + 1]`` (int64
    (S + 1,)): made once per fit (enron has hundreds of example-wise strata)."""

    def __init__(self, groups):
        super().__init__(groups)
        self.offsets = np.zeros(len(self) + 1, np.int64)
        np.cumsum([group.shape[0] for group in self], out=self.offsets[1:])
        self.members = np.concatenate(self).astype(np.int64) if self else \
            np.empty(0, np.int64)


def seco_stratum_counts(rng, sizes, sample_size, wanted_in, wanted_out):
    """SeCo's counts per stratum (a generator of ints, one per entry of ``sizes``, each
    rounded when asked for, so its coin flip comes after the draws of the strata before):
    ``instance_draws.round_stratum`` with signed counts of the examples still wanted in
    (``wanted_in`` at first) and out of the sample (``wanted_out``), each count at most its
    stratum's size."""
    for size in sizes:
        take = min(round_stratum(rng, sample_size, size, wanted_in, wanted_out), size)
        wanted_in -= take
        wanted_out -= size - take
        yield take


def example_wise_strata_by_vector(Y):
    """One stratum (int64 example indices, ascending) per distinct label vector of ``Y``
    (uint8 (n, K)), the rarest first, ties in the lexicographic order of the vectors
    (SeCo's order; ``holdout.example_wise_strata`` breaks ties by first occurrence)."""
    _, inverse, counts = np.unique(Y, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    return [np.flatnonzero(inverse == v) for v in np.argsort(counts, kind="stable")]


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
