"""Holdout sets of a BOOMER fit (mlrl-boomer's ``holdout`` parameter, "partition sampling").

A holdout split sets aside ``floor(holdout_set_size * n)`` examples (the size as a float32,
as mlrl-boomer stores it). The learner gives them zero training weight: they never enter a
sum of statistics, a coverage count or an instance sample, but the rules are applied to
them, so global pruning (``learners.pruning``) can measure the model's loss on them.

Stratification follows mlrl-boomer's algorithms; the random draws come from NumPy, so the
examples chosen differ from mlrl-boomer's for the same seed:

* ``random``: a uniformly random subset of that size.
* ``stratified-output-wise``: iterative stratification. Strata are formed label by label,
  always taking next the label with the fewest examples not yet in a stratum (ties: the
  lower label index); its stratum holds those examples. The examples without any relevant
  label form the last stratum.
* ``stratified-example-wise``: one stratum per distinct label vector, the rarest first
  (ties: the vector that occurs first).

Per stratum of m examples, with T training and H holdout examples still to assign,
``m * T / (T + H)`` examples (rounded up if T > H, down if T < H, by a coin flip if equal;
clipped so neither side overflows) are drawn uniformly for training, the rest go to the
holdout set — mlrl-boomer's ``sampleBiPartition``.
"""

import math
from dataclasses import dataclass

import numpy as np

HOLDOUT_KINDS = ("random", "stratified-output-wise", "stratified-example-wise")


def holdout_count(num_examples, holdout_set_size):
    """Number of holdout examples: floor(float32(size) * n), as mlrl-boomer."""
    return int(math.floor(float(np.float32(holdout_set_size)) * num_examples))


@dataclass(frozen=True)
class Holdout:
    """A resolved ``holdout`` parameter: ``kind`` is "none" or one of ``HOLDOUT_KINDS``;
    ``size`` the fraction of examples held out (``holdout_set_size``, in (0, 1))."""

    kind: str = "none"
    size: float = 0.33

    def split(self, rng, Y):
        """The holdout examples of labels ``Y`` (uint8 (n, K)): bool (n,), or None for
        ``kind == "none"``. Draws from ``rng`` (``numpy.random.Generator``)."""
        if self.kind == "none":
            return None
        n = Y.shape[0]
        num_holdout = holdout_count(n, self.size)
        if num_holdout == 0:
            raise ValueError(f"holdout={self.kind!r} with holdout_set_size={self.size:g} "
                             f"holds out no example of {n}; use a larger holdout_set_size "
                             f"or holdout='none'")
        if self.kind == "random":
            holdout = np.zeros(n, bool)
            holdout[rng.permutation(n)[:num_holdout]] = True
            return holdout
        strata = output_wise_strata(Y) if self.kind == "stratified-output-wise" else \
            example_wise_strata(Y)
        return stratified_split(rng, strata, n, num_holdout)


def output_wise_strata(Y):
    """mlrl-boomer's output-wise strata of ``Y`` (uint8 (n, K)): a list of int64 arrays
    (ascending example indices) partitioning range(n) (see the module)."""
    Y = np.asarray(Y, bool)
    unassigned = np.ones(Y.shape[0], bool)
    remaining = Y.sum(axis=0)
    strata = []
    while remaining.max(initial=0) > 0:
        label = int(np.argmin(np.where(remaining > 0, remaining, np.iinfo(remaining.dtype).max)))
        stratum = np.flatnonzero(unassigned & Y[:, label])
        unassigned[stratum] = False
        remaining -= Y[stratum].sum(axis=0)
        strata.append(stratum.astype(np.int64))
    if unassigned.any():
        strata.append(np.flatnonzero(unassigned).astype(np.int64))
    return strata


def example_wise_strata(Y):
    """One stratum (int64 example indices, ascending) per distinct label vector of ``Y``
    (uint8 (n, K)), the rarest vector first, ties in the order of first occurrence."""
    Y = np.ascontiguousarray(Y, np.uint8)
    _, first, inverse, counts = np.unique(Y, axis=0, return_index=True, return_inverse=True,
                                          return_counts=True)
    inverse = inverse.reshape(-1)
    order = np.lexsort((first, counts))
    return [np.flatnonzero(inverse == group).astype(np.int64) for group in order]


def stratified_split(rng, strata, num_examples, num_holdout):
    """The holdout examples (bool (n,)) of a stratified split of ``strata`` (int64 arrays
    partitioning range(n)) with ``num_holdout`` examples held out (see the module)."""
    holdout = np.zeros(num_examples, bool)
    num_train, num_hold = num_examples - num_holdout, num_holdout
    for stratum in strata:
        m = stratum.shape[0]
        decimal = np.float32(num_train) / np.float32(num_train + num_hold) * np.float32(m)
        round_up = num_train > num_hold or (num_train == num_hold and rng.random() < 0.5)
        take = int(math.ceil(decimal) if round_up else math.floor(decimal))
        take = min(take, num_train)
        take = max(take, m - num_hold)
        num_train -= take
        num_hold -= m - take
        holdout[stratum[rng.permutation(m)[take:]]] = True
    return holdout
