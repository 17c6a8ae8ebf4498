"""Feature-major copies of an example-major matrix (Numba), for the binning and the pre-sort.

A column of ``X`` (n, A) is strided in memory; the binning and the pre-sort read each
feature's values as one contiguous row. :data:`gather_columns` copies them in blocks of
examples (each block's rows read once for all columns): about 0.13 s for 10^6 x 100
float32 on one thread of the VM of ``docs/benchmarks.md``, where
``np.ascontiguousarray(X.T)`` took 0.7-1.0 s.
"""

import numba as nb

from gpurules.jit.variants import parallel_kernel


def _gather_columns_py(X, start, values):
    """values[c, i] = X[i, start + c] (a transposed copy of a block of columns)."""
    C, n = values.shape
    block = 64
    for first in nb.prange((n + block - 1) // block):
        stop = min(n, (first + 1) * block)
        for c in range(C):
            for i in range(first * block, stop):
                values[c, i] = X[i, start + c]


#: ``gather_columns.run(threads, X, start, values)``: :func:`_gather_columns_py`
gather_columns = parallel_kernel(_gather_columns_py)
