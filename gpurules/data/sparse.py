"""Pre-sorted representation of a sparse (CSC) feature matrix for the three-phase search.

Only the explicitly stored entries are kept, sorted per feature; the implicit entries
(``sparse_value``, usually 0) are never stored nor visited (Rapp et al. 2023).
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from gpurules.data.presorted import in_parts, sort_parts


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


#: mean explicit entries per column from which :func:`presort_sparse` sorts column by column
#: (below, one sort of all entries: a column's sort costs ~6 us of Python, as much as ~100
#: entries of the sort of all; medical's 1,449 columns of ~3 entries took 8 ms by column
#: against 0.7 ms at once)
COLUMN_SORT_ENTRIES = 256


def presort_sparse(X, nominal_mask, sparse_value=0.0, n_threads=1):
    """Sort the explicit entries of every column of ``X``.

    Per column, a stable order: values ascending, equal values by example, NaN last. Where
    the columns hold :data:`COLUMN_SORT_ENTRIES` entries or more on average, each column is
    sorted on its own, on ``n_threads`` threads side by side where ``X`` holds at least
    ``presorted.PARALLEL_SORT_ELEMENTS`` explicit entries (``presorted.sort_parts``; one
    sort of all entries by (column, missing, value) took 2.6 s at 10^6 x 100 count data,
    the sorts column by column 0.6 s: docs/benchmarks.md, session 27); else all at once.
    Either way, and on any number of threads, the result is the same.

    Args:
        X: scipy sparse matrix (n, A) or dense float32 ndarray; entries equal to
            ``sparse_value`` are dropped (they are implicit), NaN entries are missing.
        nominal_mask: bool (A,).
        sparse_value: float, the implicit value.
        n_threads: int, the most threads for the sorts.

    Returns:
        SparseSortedFeatures.
    """
    z = np.float32(sparse_value)
    n, A = X.shape
    columns = _SparseColumns(X, z) if sp.issparse(X) else _DenseColumns(X, z)
    indptr = np.zeros(A + 1, dtype=np.int64)
    np.cumsum(columns.counts(), out=indptr[1:])
    if indptr[-1] >= A * COLUMN_SORT_ENTRIES:
        index, value, n_neg, n_present = _sort_by_column(columns, indptr, z, n_threads)
    else:
        index, value, n_neg, n_present = _sort_at_once(columns, indptr, z)
    return SparseSortedFeatures(
        indptr=indptr, index=index, value=value, n_neg=n_neg, n_present=n_present,
        nominal=np.asarray(nominal_mask, np.bool_).copy(), sparse_value=z, num_examples=n)


def _sort_by_column(columns, indptr, z, n_threads):
    """:func:`presort_sparse`'s arrays (index int32, value float32, n_neg int32, n_present
    int32), each column of ``columns`` (:class:`_DenseColumns`) sorted on its own."""
    A = indptr.shape[0] - 1
    index = np.empty(indptr[-1], np.int32)
    value = np.empty(indptr[-1], np.float32)
    n_neg = np.empty(A, np.int32)
    n_present = np.empty(A, np.int32)

    def sort_columns(lo, hi):
        for f in range(lo, hi):
            examples, values = columns.column(f)  # examples ascending
            order = np.argsort(values, kind="stable")  # NaN last
            a, b = indptr[f], indptr[f + 1]
            index[a:b] = examples[order]
            value[a:b] = values[order]
            n_neg[f] = np.count_nonzero(values < z)
            n_present[f] = b - a - np.count_nonzero(np.isnan(values))

    parts = sort_parts(n_threads, A, indptr[-1])
    in_parts(sort_columns, [int(np.searchsorted(indptr, indptr[-1] * p // parts))
                            for p in range(parts)] + [A])
    return index, value, n_neg, n_present


def _sort_at_once(columns, indptr, z):
    """:func:`_sort_by_column`'s arrays from one sort of all entries by (column, missing,
    value); ties keep the examples ascending (a stable sort, each column's examples
    ascending before it)."""
    A = indptr.shape[0] - 1
    col, examples, values = columns.every_entry()
    is_nan = np.isnan(values)
    order = np.lexsort((np.where(is_nan, 0, values), col * 2 + is_nan))
    n_neg = np.bincount(col[~is_nan & (values < z)], minlength=A).astype(np.int32)
    n_present = np.bincount(col[~is_nan], minlength=A).astype(np.int32)
    return examples[order], values[order], n_neg, n_present


class _DenseColumns:
    """The explicit entries of a dense ``X`` (n, A) (NaN != z: missing values stay explicit),
    by column (CSC order: columns in turn, each one's examples ascending)."""

    def __init__(self, X, z):
        self.X, self.z = np.asarray(X, dtype=np.float32), z
        self.explicit = self.X != z
        self.Xt = None  # the columns contiguous, made for the first column()

    def counts(self):
        """int64 (A,): the explicit entries of each column."""
        return self.explicit.sum(axis=0, dtype=np.int64)

    def column(self, f):
        """(examples int32, ascending; values float32) of column ``f``."""
        if self.Xt is None:
            self.Xt = np.ascontiguousarray(self.X.T)
        examples = np.flatnonzero(self.Xt[f] != self.z).astype(np.int32)
        return examples, self.Xt[f, examples]

    def every_entry(self):
        """(column int64, example int32, value float32) of every entry, in CSC order."""
        col, examples = np.nonzero(self.explicit.T)
        return col, examples.astype(np.int32), self.X[examples, col]


class _SparseColumns:
    """The same as :class:`_DenseColumns`, of a scipy sparse ``X`` (its stored entries other
    than 0)."""

    def __init__(self, X, z):
        if z != 0:  # stored entries are relative to 0; make the implicit value explicit
            raise ValueError("a sparse X with sparse_feature_value != 0 is ambiguous: its "
                             "implicit entries are 0; pass a dense X or sparse_feature_value=0")
        self.csc = sp.csc_matrix(X, dtype=np.float32, copy=True)
        self.csc.sum_duplicates()  # (also sorts each column's examples)
        self.csc.eliminate_zeros()  # explicit zeros (-0.0 too) are implicit

    def counts(self):
        return np.diff(self.csc.indptr).astype(np.int64)

    def column(self, f):
        a, b = self.csc.indptr[f], self.csc.indptr[f + 1]
        return self.csc.indices[a:b].astype(np.int32), self.csc.data[a:b]

    def every_entry(self):
        col = np.repeat(np.arange(self.csc.shape[1]), np.diff(self.csc.indptr))
        return col, self.csc.indices.astype(np.int32), self.csc.data


def sparse_is_smaller(X):
    """Whether a CSC copy of ``X`` (sparse or dense (n, A)) takes less memory than dense float32."""
    n, A = X.shape
    nnz = X.nnz if sp.issparse(X) else int(np.count_nonzero(X))
    return nnz * 8 + (A + 1) * 8 < n * A * 4
