"""Binned representation of features for the histogram search (DESIGN §1).

Bin edges are computed once on the host, identically for every backend. Bins of a feature
are ordered by value and hold disjoint value ranges, so a threshold placed between two
bins splits the examples exactly as it splits the bins.
"""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class BinnedFeatures:
    """Features mapped to bins.

    Attributes:
        bin_index: int32 (A, n), feature-major. ``bin_index[f, i]`` is the bin (0-based,
            within feature ``f``) of example ``i``, or -1 if ``x_if`` is missing.
        num_bins: int32 (A,), bins per feature (>= 1 unless the feature is all missing).
        bin_offset: int64 (A + 1,). Feature ``f``'s bins are the rows
            ``bin_offset[f] .. bin_offset[f + 1] - 1`` of a flat histogram of ``B =
            bin_offset[-1]`` rows.
        bin_min, bin_max: float32 (B,), the smallest and largest training value that fell
            into each bin (NaN for a bin that received no training example).
        nominal: bool (A,). A nominal feature has one bin per distinct value
            (``bin_min == bin_max`` is that value) and gets ``==``/``!=`` conditions.
    """

    bin_index: np.ndarray
    num_bins: np.ndarray
    bin_offset: np.ndarray
    bin_min: np.ndarray
    bin_max: np.ndarray
    nominal: np.ndarray

    @property
    def num_features(self):
        return self.bin_index.shape[0]

    @property
    def num_examples(self):
        return self.bin_index.shape[1]

    @property
    def total_bins(self):
        return int(self.bin_offset[-1])
