"""The Numba CUDA kernels of the CUDA backend, listed by name.

Each kernel lives beside its CPU twin's name: ``statistics`` (compute, update, aggregate),
``coverage`` (the covered examples' mask and compacted list), ``histogram_search`` (the
candidates' scan, over the sums of ``bin_prefix``; a candidate's quality:
``candidate_quality``), ``refine`` (a
device-resident block's choice of each step's refinement) and ``binning`` (equal-width bins
of the features, once per fit); the histograms themselves are built by the CUDA C kernels
in ``kernels/histogram.cu`` (``sources``). The math comes from ``device_math`` (compiled
once from ``gpurules.objectives``). Every kernel is a plain Python function compiled lazily
by ``cuda.jit``; ``SIGNATURES`` lists the explicit signatures that
``numba.cuda.compile_ptx`` type-checks in the tests.
"""

from gpurules.backends.cuda import binning, coverage, histogram_search, refine, statistics
from gpurules.backends.cuda.coverage import (RING, apply_binned_condition, apply_selected,
                                             count_covered, reset_coverage)
from gpurules.backends.cuda.refine import select_best
from gpurules.backends.cuda.statistics import (compute_all_statistics, covered_totals,
                                               encode_covered, update_statistics)

# the kernels the backend launches by attribute (``backend._kernels.<name>``)
__all__ = ["apply_binned_condition", "apply_selected", "count_covered", "reset_coverage",
           "select_best", "compute_all_statistics", "covered_totals", "encode_covered",
           "update_statistics", "RING", "SIGNATURES", "REGRESSION_SIGNATURES", "KERNELS"]

_MODULES = (statistics, coverage, histogram_search, refine, binning)

# kernel name -> argument types (``void`` return), for ``numba.cuda.compile_ptx``
SIGNATURES = {name: sig for module in _MODULES for name, sig in module.SIGNATURES.items()}
# kernel name -> argument types with BoomerRegressor's float64 targets, for the kernels
# that read them (the statistics)
REGRESSION_SIGNATURES = statistics.REGRESSION_SIGNATURES
# kernel name -> the ``cuda.jit`` dispatcher
KERNELS = {name: kernel for module in _MODULES for name, kernel in module.KERNELS.items()}
