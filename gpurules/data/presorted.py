"""Pre-sorted representation of a dense feature matrix for the exact search.

Each feature's non-missing values are sorted once per fit; the search then walks the
sorted order with running sums of the covered examples' statistics (DESIGN §1).
"""

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numba as nb
import numpy as np

from gpurules.data.columns import gather_columns
from gpurules.data.radix_sort import NAN_KEY, ZERO_KEY, key_bits, radix_argsort, to_keys
from gpurules.jit.variants import parallel_kernel


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


#: elements of X from which :func:`presort_dense` sorts on several threads (below, one
#: thread's sort takes a few milliseconds)
PARALLEL_SORT_ELEMENTS = 1 << 20

#: examples from which :func:`presort_dense` sorts with the compiled radix sort
#: (``data.radix_sort``: ~14 against ~120 ms a column of 10^6 values); below, NumPy's
#: stable sort, so that a first fit on small data compiles no sort (the same arrays)
RADIX_EXAMPLES = 1 << 16


def presort_dense(X, nominal_mask, n_threads=1):
    """Sort every column of ``X`` once.

    Args:
        X: float32 ndarray (n, A); NaN marks a missing value.
        nominal_mask: bool ndarray (A,).
        n_threads: int, threads that sort columns side by side (NumPy's sort releases the
            GIL; the radix sort from :data:`RADIX_EXAMPLES` examples is a ``prange``
            kernel) where X has at least :data:`PARALLEL_SORT_ELEMENTS` elements; the
            result does not depend on it (each column's stable sort is its own).

    Returns:
        PresortedFeatures.
    """
    n, A = X.shape
    parts = sort_parts(n_threads, A, X.size)
    order = np.empty((A, n), np.int32)
    values = np.empty((A, n), np.float32)
    n_present = np.empty(A, np.int32)
    radix = n >= RADIX_EXAMPLES
    if radix and X.dtype == np.float32 and X.flags.c_contiguous:
        Xt = np.empty((A, n), np.float32)
        gather_columns.run(parts, X, 0, Xt)
    else:
        Xt = np.ascontiguousarray(X.T, dtype=np.float32)
    if radix:
        _radix_presort.run(parts, Xt, order, values, n_present)
    else:
        def sort_columns(lo, hi):
            # NaN sorts last, so the first n_present entries of each row are the real values
            rows = Xt[lo:hi]
            order[lo:hi] = np.argsort(rows, axis=1, kind="stable")
            values[lo:hi] = np.take_along_axis(rows, order[lo:hi], axis=1)
            n_present[lo:hi] = (~np.isnan(rows)).sum(axis=1)

        in_parts(sort_columns, [A * p // parts for p in range(parts + 1)])
    return PresortedFeatures(
        sorted_index=order,
        sorted_value=values,
        n_present=n_present,
        nominal=np.asarray(nominal_mask, dtype=np.bool_).copy(),
    )


def _radix_presort_py(Xt, order, values, n_present):
    """:func:`presort_dense`'s arrays from the transposed ``Xt`` float32 (A, n) by the radix
    sort: ``order`` int32 (A, n), ``values`` float32 (A, n) (each value's bits as in ``Xt``:
    read back from its sorted key, or from ``Xt`` for a zero (its sign) and a NaN (its
    payload)), ``n_present`` int32 (A,)."""
    A, n = Xt.shape
    for f in nb.prange(A):
        row = Xt[f].view(np.uint32)
        keys = row.copy()
        to_keys(keys)
        radix_argsort(keys, order[f])
        bits = values[f].view(np.uint32)
        present = 0
        for p in range(n):
            key = keys[p]
            if key == NAN_KEY or key == ZERO_KEY:
                bits[p] = row[order[f, p]]
            else:
                bits[p] = key_bits(key)
            if key != NAN_KEY:
                present += 1
        n_present[f] = present


_radix_presort = parallel_kernel(_radix_presort_py)


def sort_parts(n_threads, columns, elements):
    """In how many parts (threads) a pre-sort sorts ``columns`` columns of ``elements``
    values in all: up to ``n_threads``, one per column at most, from
    :data:`PARALLEL_SORT_ELEMENTS` values."""
    return max(1, min(int(n_threads), columns)) if elements >= PARALLEL_SORT_ELEMENTS else 1


def in_parts(fn, bounds):
    """``fn(lo, hi)`` for each pair of consecutive ``bounds`` (a list of ints), side by side
    on as many threads where there are several pairs (the pre-sorts' columns: NumPy's sorts
    release the GIL), and a worker's exception raised here."""
    if len(bounds) <= 2:
        fn(bounds[0], bounds[-1])
        return
    with ThreadPoolExecutor(len(bounds) - 1, thread_name_prefix="gpurules-presort") as pool:
        for done in [pool.submit(fn, lo, hi) for lo, hi in zip(bounds, bounds[1:])]:
            done.result()
