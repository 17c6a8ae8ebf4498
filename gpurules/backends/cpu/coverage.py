"""The covered examples of binned features (the twin of ``cuda/coverage.py``).

The backend marks the examples covered by the rule being refined with ``mask[i] ==
indicator`` (int32 (n,)); refining moves those that satisfy the new condition to ``indicator
+ 1``. The histogram search also keeps them as a list in ascending order (:func:`covered_list`,
``covered`` int32 (n,) with ``state`` int64 (2,) = (length, the indicator it was made for)),
so that the histogram build and the coverage update cost O(covered examples), not O(n).

Binned features (``BinnedFeatures``): bin_index int32 (A, n); bin_offset int64 (A + 1,);
bin_min float32 (B,).
"""

import numpy as np

from gpurules.conditions import satisfies
from gpurules.jit.cache import njit
from gpurules.jit.helpers import register_jitable


@njit
def covered_list(mask, indicator, covered, state):
    """The covered examples in ascending order: ``covered[:state[0]]`` once this returns.

    ``state`` int64 (4,) = (length, the indicator the list was made for, the length of the
    removal log, the epoch); the list is rebuilt from ``mask`` (O(n)) only when that
    indicator is not ``indicator`` (a new rule, or any change of the coverage or statistics
    outside :func:`_apply_listed`, sets it to -1: ``SearchState.new_rule``), which empties
    the log and starts a new epoch. Returns the length."""
    if state[1] != indicator:
        count = 0
        for i in range(mask.shape[0]):
            if mask[i] == indicator:
                covered[count] = i
                count += 1
        state[0] = count
        state[1] = indicator
        state[2] = 0
        state[3] += 1
    return state[0]


@register_jitable
def new_list_state():
    """int64 (4,): the state of a covered list that is to be built on first use (epoch 0;
    :func:`covered_list`). Plain NumPy when called from Python (a fit's start compiles
    nothing for it), inlined where compiled code calls it."""
    state = np.zeros(4, np.int64)
    state[:2] = -1
    return state


@njit
def apply_binned_condition(f, op, threshold, bin_index, bin_offset, bin_min, mask, indicator):
    """Move the covered examples whose bin satisfies ``x_f op threshold`` to ``indicator + 1``.

    A bin satisfies the condition iff its ``bin_min`` does (thresholds from
    :func:`scan_histograms` lie between bins); missing values (bin -1) never do.

    This agrees with the raw values of every example, whatever its weight.

    Args:
        f, op: int; threshold: float32; bin_index: int32 (A, n); bin_offset: int64 (A + 1,);
        bin_min: float32 (B,); mask: int32 (n,), updated in place; indicator: int.
    """
    n = mask.shape[0]
    _apply_listed(f, op, threshold, bin_index, bin_offset, bin_min, mask, indicator,
                  np.empty(n, np.int32), new_list_state(), np.empty(n, np.int32))


@njit
def _apply_listed(f, op, threshold, bin_index, bin_offset, bin_min, mask, indicator, covered,
                  state, removed):
    """:func:`apply_binned_condition` over the covered list (:func:`covered_list`), which it
    keeps current: afterwards it lists the examples covered at ``indicator + 1``, and the
    removal log ``removed`` (int32 (n,)) ends with those it left out, in ascending order."""
    n_covered = covered_list(mask, indicator, covered, state)
    row = bin_index[f]
    first = bin_offset[f]
    kept = 0
    log = state[2]
    for c in range(n_covered):
        i = covered[c]
        b = row[i]
        if b >= 0 and satisfies(op, bin_min[first + b], threshold):
            mask[i] = indicator + 1
            covered[kept] = i
            kept += 1
        else:
            removed[log] = i
            log += 1
    state[0] = kept
    state[1] = indicator + 1
    state[2] = log
