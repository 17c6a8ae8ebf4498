"""Feature and instance sampling, drawn on the host from one seeded generator."""

import math
from dataclasses import dataclass

import numpy as np

from gpurules.backends.base import floyd_indices


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


@dataclass(frozen=True)
class InstanceSampling:
    """``none``, ``with-replacement{sample_size}`` or ``without-replacement{sample_size}``."""

    kind: str = "none"
    sample_size: float = 1.0

    def sample(self, rng, num_examples):
        """int32 (n,) weights: how often each example is drawn; None (unit weights) for
        ``none``."""
        if self.kind == "none":
            return None
        m = max(1, int(round(self.sample_size * num_examples)))
        if self.kind == "with-replacement":
            drawn = rng.integers(0, num_examples, size=m)
            return np.bincount(drawn, minlength=num_examples).astype(np.int32)
        weights = np.zeros(num_examples, dtype=np.int32)
        weights[rng.choice(num_examples, size=min(m, num_examples), replace=False)] = 1
        return weights
