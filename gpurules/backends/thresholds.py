"""The threshold of a numerical condition and which candidates count, for every backend
and search.

One definition of the midpoint between two values (the exact searches, dense and sparse),
of the threshold between histogram bins (the histogram search) and of the candidates a
search may consider (:func:`admissible`), called by the CPU searches (Numba CPU) and
compiled for the GPU by ``cuda/device_math.py``, so that every search and both devices
store the same thresholds and consider the same candidates (DESIGN: the same model for a
seed on CPU and CUDA).
"""

import numpy as np

from gpurules.jit.helpers import register_jitable


@register_jitable
def midpoint(lower, upper):
    """float32 threshold between two adjacent distinct float32 values, strictly below
    ``upper``. Not IR-inlined (numba-cuda cannot type an ``inline="always"`` overload
    here); LLVM inlines it in the CPU searches."""
    t = np.float32((np.float64(lower) + np.float64(upper)) * 0.5)
    if t >= upper:
        t = lower
    return t


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
    return midpoint(bin_max[lower], bin_min[r])


@register_jitable
def admissible(count, covered, min_coverage):
    """Whether a candidate condition that covers ``count`` examples may refine a rule that
    covers ``covered``, both counted as the searches count them (covered examples of non-zero
    weight): it covers at least ``max(1, min_coverage)`` of them and strictly fewer than
    the rule. A condition that excludes no example changes nothing (``x == v`` on a nominal
    feature that is constant over the covered examples): it is never considered, for the
    first condition of a rule either. Examples missing a feature satisfy no condition on it,
    so ``x == v`` covering every present value of a feature that some covered example misses
    does narrow the rule and counts."""
    return count >= min_coverage and 0 < count < covered
