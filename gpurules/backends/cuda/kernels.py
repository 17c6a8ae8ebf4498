"""The Numba CUDA kernels of the CUDA backend, listed by name.

Each kernel lives beside its CPU twin's name: ``statistics`` (compute, update, aggregate),
``coverage`` (the covered examples' mask and compacted list) and ``histogram_search``
(prefix sums and the candidates' scan); the histograms themselves are built by the CUDA C
kernels in ``kernels/histogram.cu`` (``sources``). The math comes from ``device_math``
(compiled once from ``gpurules.objectives``). Every kernel is a plain Python function
compiled lazily by ``cuda.jit``; ``SIGNATURES`` lists the explicit signatures that
``numba.cuda.compile_ptx`` type-checks in the tests.
"""

from gpurules.backends.cuda import coverage, histogram_search, statistics
from gpurules.backends.cuda.coverage import apply_binned_condition, reset_coverage
from gpurules.backends.cuda.statistics import (compute_all_statistics, covered_totals,
                                               encode_covered, update_statistics)

# the kernels the backend launches by attribute (``backend._kernels.<name>``)
__all__ = ["apply_binned_condition", "reset_coverage", "compute_all_statistics",
           "covered_totals", "encode_covered", "update_statistics", "SIGNATURES", "KERNELS"]

_MODULES = (statistics, coverage, histogram_search)

# kernel name -> argument types (``void`` return), for ``numba.cuda.compile_ptx``
SIGNATURES = {name: sig for module in _MODULES for name, sig in module.SIGNATURES.items()}
# kernel name -> the ``cuda.jit`` dispatcher
KERNELS = {name: kernel for module in _MODULES for name, kernel in module.KERNELS.items()}
