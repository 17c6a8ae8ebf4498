"""Fixed-point encoding of statistics (DESIGN §3).

Gradients and Hessians are stored as integer multiples of ``1 / scale`` with ``scale`` a
power of two chosen once per fit (and again when the statistics outgrow it). Sums of such
integers are exact and independent of the summation order, so ``>`` statistics (``totals -
running sum``) are exact and every backend (serial, parallel, GPU) aggregates bit-identical
sums, always in int64.

``statistic_type`` (mlrl-boomer's option) chooses how fine the scale may be for the
logistic losses: ``"64-bit"`` as fine as the int64 sums allow (2**44 units per unit of
gradient with 10**5 examples of weight 1), ``"32-bit"`` (the default, as mlrl-boomer's) at
most 2**30 units per unit of the largest example's statistic (:func:`choose_scale`'s
``example_weight``), so that each example's statistics fit an int32 and a backend may store
them in half the bytes (``learners.boosting.statistic_dtype`` says where). The scale, not
the storage, decides the model: every backend learns the same rules from the same scale.
"""

import math

import numpy as np

# Largest magnitude a sum may reach: leaves one bit of headroom below 2**63.
_SUM_BITS = 62
# Finer resolution than float64's mantissa buys nothing.
_MAX_EXPONENT = 52
# statistic_type="32-bit": the largest magnitude one example's statistic may reach, one bit of
# headroom below 2**31, so that it is stored in an int32 (sums stay int64).
_VALUE_BITS_32 = 30
# The squared losses' Hessian is 1 per unit weight: each example's must be held exactly, or
# (a weight that is no multiple of 1 / scale) by at least this many units (rounding error
# at most 1 part in 512); below, heads and qualities are wrong (:func:`hessian_units`).
MIN_HESSIAN_UNITS = 256


def quantize(value, scale):
    """Round ``value * scale`` to the nearest integer (ties up). Returns an integer-valued float."""
    return math.floor(value * scale + 0.5)


def choose_scale(total_weight, statistic_bound, example_weight=None):
    """Largest power-of-two scale whose sums over all examples cannot overflow int64.

    Args:
        total_weight: float, an upper bound on the summed example weights of one aggregate.
        statistic_bound: float, an upper bound on |g| and h of one example per unit weight.
        example_weight: float or None. Given (``statistic_type="32-bit"``): the largest
            weight of one example; the scale is then also small enough that each example's
            statistic, ``statistic_bound * example_weight * scale``, stays within 2**30, so
            it fits an int32 (with a bit of headroom).

    Returns:
        float, a power of two.
    """
    magnitude = max(float(total_weight) * float(statistic_bound), 1.0)
    exponent = min(_SUM_BITS - math.ceil(math.log2(magnitude)) - 1, _MAX_EXPONENT)
    value = 0.0 if example_weight is None else float(example_weight) * float(statistic_bound)
    if value > 0.0:
        exponent = min(exponent, _VALUE_BITS_32 - math.ceil(math.log2(value)))
    return float(2.0 ** exponent)


def hessian_units(scale, weights):
    """The resolution of a Hessian of 1 per unit weight (the squared losses') at ``scale``:
    None if every positive weight of float64 (n,) ``weights`` is held exactly (a multiple
    of ``1 / scale``, e.g. integer weights at a scale >= 1) or by at least
    ``MIN_HESSIAN_UNITS`` units, else the smallest positive weight's units (float, < 256:
    a coarser scale, which huge targets or weights force, rounds Hessians to nothing)."""
    units = weights[weights > 0] * scale
    if units.size == 0 or units.min() >= MIN_HESSIAN_UNITS or \
            bool((units == np.floor(units)).all()):
        return None
    return float(units.min())
