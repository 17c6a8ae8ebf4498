"""Fixed-point encoding of statistics (DESIGN §3).

Gradients and Hessians are stored as int64 multiples of ``1 / scale`` with ``scale`` a
power of two chosen once per fit. Sums of such integers are exact and independent of
the summation order, so ``>`` statistics (``totals - running sum``) are exact and every
backend (serial, parallel, GPU) aggregates bit-identical sums.
"""

import math

# Largest magnitude a sum may reach: leaves one bit of headroom below 2**63.
_SUM_BITS = 62
# Finer resolution than float64's mantissa buys nothing.
_MAX_EXPONENT = 52


def quantize(value, scale):
    """Round ``value * scale`` to the nearest integer (ties up). Returns an integer-valued float."""
    return math.floor(value * scale + 0.5)


def choose_scale(total_weight, statistic_bound):
    """Largest power-of-two scale whose sums over all examples cannot overflow int64.

    Args:
        total_weight: float, an upper bound on the summed example weights of one aggregate.
        statistic_bound: float, an upper bound on |g| and h of one example per unit weight.

    Returns:
        float, a power of two.
    """
    magnitude = max(float(total_weight) * float(statistic_bound), 1.0)
    exponent = _SUM_BITS - math.ceil(math.log2(magnitude)) - 1
    return float(2.0 ** min(exponent, _MAX_EXPONENT))
