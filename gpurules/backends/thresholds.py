"""The threshold of a numerical condition between histogram bins, for every backend.

One definition, called by the CPU histogram search (Numba CPU) and compiled for the GPU by
``cuda/device_math.py``, so that both devices store the same thresholds (DESIGN: the same
model for a seed on CPU and CUDA).
"""

from numba.extending import register_jitable

from gpurules.backends.cpu.exact_search import _midpoint


@register_jitable
def bin_threshold(bin_min, bin_max, r):
    """float32 threshold of ``<=``/``>`` at the boundary below histogram row ``r``.

    It lies between ``bin_min[r]`` and the nearest row below ``r`` that holds any training
    example (``bin_max`` not NaN), so a threshold never falls inside a bin — not even one
    whose examples are all uncovered or of weight 0 during this search.

    Args:
        bin_min, bin_max: float32 (B,) (``BinnedFeatures``; NaN for a bin without training
            examples); r: int, a row whose feature has a row below it with a training
            example (the caller's previous non-empty bin).
    """
    lower = r - 1
    while bin_max[lower] != bin_max[lower]:  # NaN: no training example in that bin
        lower -= 1
    return _midpoint(bin_max[lower], bin_min[r])
