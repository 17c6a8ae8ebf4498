"""Pre-sorted representation of a sparse (CSC) feature matrix for the three-phase search.

Only the explicitly stored entries are kept, sorted per feature; the implicit entries
(``sparse_value``, usually 0) are never stored nor visited (Rapp et al. 2023).
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class SparseSortedFeatures:
    """Explicit entries of each feature, sorted.

    Attributes:
        indptr: int64 (A + 1,). Feature ``f``'s entries are ``indptr[f] .. indptr[f + 1] - 1``.
        index: int32 (nnz,), the example of each entry.
        value: float32 (nnz,). Per feature: the values below ``sparse_value`` ascending
            (``n_neg[f]`` of them), then the values above it ascending (up to
            ``n_present[f]`` entries in all), then the missing (NaN) entries.
        n_neg: int32 (A,). n_present: int32 (A,), non-missing explicit entries.
        nominal: bool (A,).
        sparse_value: float32, the value of every entry that is not stored.
        num_examples: int.
    """

    indptr: np.ndarray
    index: np.ndarray
    value: np.ndarray
    n_neg: np.ndarray
    n_present: np.ndarray
    nominal: np.ndarray
    sparse_value: np.float32
    num_examples: int

    @property
    def num_features(self):
        return self.indptr.shape[0] - 1


def presort_sparse(X, nominal_mask, sparse_value=0.0):
    """Sort the explicit entries of every column of ``X``.

    Args:
        X: scipy sparse matrix (n, A) or dense float32 ndarray; entries equal to
            ``sparse_value`` are dropped (they are implicit), NaN entries are missing.
        nominal_mask: bool (A,).
        sparse_value: float, the implicit value.

    Returns:
        SparseSortedFeatures.
    """
    z = np.float32(sparse_value)
    n, A = X.shape
    if sp.issparse(X):
        csc = sp.csc_matrix(X, dtype=np.float32, copy=True)
        if z != 0:  # stored entries are relative to 0; make the implicit value explicit
            raise ValueError("a sparse X with sparse_feature_value != 0 is ambiguous: its "
                             "implicit entries are 0; pass a dense X or sparse_feature_value=0")
        csc.sum_duplicates()
        data, indices = csc.data, csc.indices
        col = np.repeat(np.arange(A), np.diff(csc.indptr))
        explicit = data != z
        data, indices, col = data[explicit], indices[explicit], col[explicit]
    else:
        dense = np.asarray(X, dtype=np.float32)
        # NaN != z, so missing values stay explicit; the transpose's nonzero entries come
        # column by column, each column's examples ascending (as a canonical CSC's)
        col, indices = np.nonzero((dense != z).T)
        data = dense[indices, col]
    # sort by (column, missing last, value, example); lexsort's last key is the primary
    # one, and it is stable: both branches above hold each column's examples ascending
    # already, so two keys do (two sorting passes instead of four)
    is_nan = np.isnan(data)
    order = np.lexsort((np.where(is_nan, 0, data), col * 2 + is_nan))
    data, indices, col, is_nan = data[order], indices[order], col[order], is_nan[order]
    counts = np.bincount(col, minlength=A)
    new_indptr = np.zeros(A + 1, dtype=np.int64)
    new_indptr[1:] = np.cumsum(counts)
    n_neg = np.bincount(col[~is_nan & (data < z)], minlength=A).astype(np.int32)
    n_present = np.bincount(col[~is_nan], minlength=A).astype(np.int32)
    return SparseSortedFeatures(
        indptr=new_indptr, index=indices.astype(np.int32), value=data.astype(np.float32),
        n_neg=n_neg, n_present=n_present, nominal=np.asarray(nominal_mask, np.bool_).copy(),
        sparse_value=z, num_examples=n)


def sparse_is_smaller(X):
    """Whether a CSC copy of ``X`` (sparse or dense (n, A)) takes less memory than dense float32."""
    n, A = X.shape
    nnz = X.nnz if sp.issparse(X) else int(np.count_nonzero(X))
    return nnz * 8 + (A + 1) * 8 < n * A * 4
