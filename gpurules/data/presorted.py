"""Pre-sorted representation of a dense feature matrix for the exact search.

Each feature's non-missing values are sorted once per fit; the search then walks the
sorted order with running sums of the covered examples' statistics (DESIGN §1).
"""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PresortedFeatures:
    """Column-wise sorted view of a dense matrix.

    Attributes:
        sorted_index: int32 (A, n). Row ``f`` lists the examples whose value of feature
            ``f`` is not missing, in ascending order of that value (stable), followed by
            the examples missing it (the exact search takes the covered ones out of a
            rule's totals where they are fewer than the present ones).
        sorted_value: float32 (A, n). The values in the same order.
        n_present: int32 (A,). How many entries of each row are real (non-missing).
        nominal: bool (A,). Whether a feature is nominal (``==``/``!=`` conditions).
    """

    sorted_index: np.ndarray
    sorted_value: np.ndarray
    n_present: np.ndarray
    nominal: np.ndarray

    @property
    def num_features(self):
        return self.sorted_index.shape[0]

    @property
    def num_examples(self):
        return self.sorted_index.shape[1]


def presort_dense(X, nominal_mask):
    """Sort every column of ``X`` once.

    Args:
        X: float32 ndarray (n, A); NaN marks a missing value.
        nominal_mask: bool ndarray (A,).

    Returns:
        PresortedFeatures.
    """
    Xt = np.ascontiguousarray(X.T, dtype=np.float32)
    # NaN sorts last, so the first n_present entries of each row are the real values.
    order = np.argsort(Xt, axis=1, kind="stable").astype(np.int32)
    values = np.take_along_axis(Xt, order, axis=1)
    n_present = (~np.isnan(Xt)).sum(axis=1).astype(np.int32)
    return PresortedFeatures(
        sorted_index=np.ascontiguousarray(order),
        sorted_value=np.ascontiguousarray(values),
        n_present=n_present,
        nominal=np.asarray(nominal_mask, dtype=np.bool_).copy(),
    )
