"""Lift functions of SeCo partial heads (mlrl-seco 0.15): tables computed once per fit.

A partial head predicting ``n`` labels has the quality ``mean value · lift(n)``; the search
also needs ``max_lift(n)``, mlrl-seco's bound used to stop adding labels (see
:func:`gpurules.objectives.heuristics.partial_quality`). Both depend only on ``n``, so the
host computes them for ``n = 1..K`` and the searches (CPU and GPU) read the tables from
``params``: no ``pow``/``log`` runs per candidate, and both backends use the same numbers.

- ``none``: lift 1.
- ``kln{k}``: ``lift(n) = 1 + k·ln(n)``; ``max_lift(n) = lift(K)``.
- ``peak{peak_label,max_lift,curvature}``: ``lift(peak) = max_lift``; below the peak
  ``1 + ((n - 1)/(peak - 1))^(1/curvature) · (max_lift - 1)``; above it the same with the
  base ``(n - K)/(K - peak)`` (as mlrl-seco 0.15 computes it: the base is negative, so for
  ``curvature = 1`` the lift rises from ``2 - max_lift`` back to 1 at ``n = K``, and other
  curvatures give NaN there, which no comparison prefers). ``max_lift(n)`` is ``max_lift``
  below the peak and, from the peak on, the same formula evaluated with the exponent
  ``curvature`` (not ``1/curvature``), again as mlrl-seco computes it.
  ``peak_label = 0`` means the label cardinality, rounded (at least 1); larger values are
  capped at K.
"""

import math

import numpy as np

LIFT_NONE = "none"
LIFT_PEAK = "peak"
LIFT_KLN = "kln"

# mlrl-seco 0.15 option defaults
DEFAULTS = {
    LIFT_NONE: {},
    LIFT_PEAK: {"peak_label": 2, "max_lift": 1.08, "curvature": 1.0},
    LIFT_KLN: {"k": 0.2},
}


def _power(base, exponent):
    """C's ``pow``: NaN for a negative base and a non-integer exponent."""
    if base < 0.0 and not float(exponent).is_integer():
        return math.nan
    return math.pow(base, exponent)


def _peak_lift(n, total, peak, max_lift, exponent):
    if n == peak:
        return max_lift
    if n < peak:
        base = (n - 1.0) / (peak - 1.0)
    else:
        base = (n - float(total)) / (float(total) - peak)
    return 1.0 + _power(base, exponent) * (max_lift - 1.0)


def peak_label(option, Y, weight=None):
    """The effective peak label for K = ``Y.shape[1]`` labels (see the module docstring);
    ``weight``: optional int (n,) example weights of the label cardinality."""
    K = Y.shape[1]
    if option > 0:
        return min(K, int(option))
    sizes = np.asarray(Y).sum(axis=1)
    if weight is not None and Y.shape[0]:
        cardinality = float(np.dot(np.asarray(weight, np.int64), sizes)) / float(np.sum(weight))
    else:
        cardinality = float(sizes.mean()) if Y.shape[0] else 0.0
    return max(int(round(cardinality)), 1)


def lift_tables(name, options, Y, weight=None):
    """(lift, max_lift): float64 (K,) tables, entry ``n - 1`` for an n-label head.

    Args:
        name: ``"none"``, ``"peak"`` or ``"kln"``; options: its options (see DEFAULTS).
        Y: uint8 (n, K) training labels (K and, for ``peak_label=0``, the cardinality).
        weight: optional int (n,) example weights (the cardinality's); None: ones.
    """
    K = Y.shape[1]
    sizes = range(1, K + 1)
    if name == LIFT_NONE:
        return np.ones(K), np.ones(K)
    if name == LIFT_KLN:
        k = float(options["k"])
        lift = np.array([1.0 + k * math.log(n) for n in sizes])
        return lift, np.full(K, 1.0 + k * math.log(K))
    if name == LIFT_PEAK:
        peak = peak_label(options["peak_label"], Y, weight)
        top, curvature = float(options["max_lift"]), float(options["curvature"])
        lift = np.array([_peak_lift(n, K, peak, top, 1.0 / curvature) for n in sizes])
        bound = np.array([top if n < peak else _peak_lift(n, K, peak, top, curvature)
                          for n in sizes])
        return lift, bound
    raise ValueError(f"unknown lift function {name!r}; supported: {', '.join(DEFAULTS)}")
