"""Binned representation of features for the histogram search (DESIGN §1).

Bin edges are computed once on the host, identically for every backend. Bins of a feature
are ordered by value and hold disjoint value ranges, so a threshold placed between two
bins splits the examples exactly as it splits the bins.
"""

import math
from dataclasses import dataclass

import numba as nb
import numpy as np

from gpurules.data.columns import gather_columns
from gpurules.data.radix_sort import from_keys, radix_argsort, to_keys
from gpurules.jit.cache import njit
from gpurules.jit.variants import parallel_kernel



@dataclass(frozen=True)
class BinnedFeatures:
    """Features mapped to bins.

    Attributes:
        bin_index: int32 (A, n), feature-major. ``bin_index[f, i]`` is the bin (0-based,
            within feature ``f``) of example ``i``, or -1 if ``x_if`` is missing.
        num_bins: int32 (A,), bins per feature (>= 1 unless the feature is all missing).
        bin_offset: int64 (A + 1,). Feature ``f``'s bins are the rows
            ``bin_offset[f] .. bin_offset[f + 1] - 1`` of a flat histogram of ``B =
            bin_offset[-1]`` rows.
        bin_min, bin_max: float32 (B,), the smallest and largest training value that fell
            into each bin (NaN for a bin that received no training example).
        nominal: bool (A,). A nominal feature has one bin per distinct value
            (``bin_min == bin_max`` is that value) and gets ``==``/``!=`` conditions.
    """

    bin_index: np.ndarray
    num_bins: np.ndarray
    bin_offset: np.ndarray
    bin_min: np.ndarray
    bin_max: np.ndarray
    nominal: np.ndarray

    @property
    def num_features(self):
        return self.bin_index.shape[0]

    @property
    def num_examples(self):
        return self.bin_index.shape[1]

    @property
    def total_bins(self):
        return int(self.bin_offset[-1])


METHODS = ("equal-width", "equal-frequency")
BIN_RATIO, MIN_BINS, MAX_BINS = 0.33, 2, 0  # the defaults of bin_features' options
_EQUAL_WIDTH, _EQUAL_FREQUENCY, _NOMINAL = 0, 1, 2
_CHUNK_ELEMENTS = 1 << 23  # values sorted at a time (bounds the scratch memory; at least
# one column per thread)
_FEW = 16  # distinct values of a nominal column binned without sorting it
# values (examples x features) from which the kernels run on every thread Numba has; below,
# on one (their parallel forms compile in ~2 CPU-s more than the serial ones, and the
# serial ones bin 10^7 values in about 0.05 s without a sort)
PARALLEL_VALUES = 1 << 24


def bin_features(X, nominal_mask, method, bin_ratio=BIN_RATIO, min_bins=MIN_BINS,
                 max_bins=MAX_BINS, drop_empty=False):
    """Map every feature of a dense matrix to bins as mlrl-boomer 0.15 ``feature_binning`` does.

    The bin count of a numerical feature with at least two distinct non-missing values is
    :func:`bin_count` ``(n)`` of the number ``n`` of *examples* (rows, missing values
    included), not of its distinct values, as in mlrl-boomer (see the user guide, "Feature
    binning: what mlrl-boomer does"):

    - ``"equal-width"``: ``bin_count(n)`` bins of width ``w = (max - min) / bin_count(n)``
      over the non-missing values, in float32 as mlrl-boomer computes it; value ``x`` goes to
      ``min(floor((x - min) / w), bin_count(n) - 1)``. Bins that receive no value stay in
      the layout, empty (NaN ``bin_min``/``bin_max``); the search skips them.
    - ``"equal-frequency"``: the sorted non-missing values are cut greedily into bins of
      ``m = ceil(n_present / bin_count(n))`` values: a new bin starts at a new distinct value
      once the current bin holds ``m`` or more values, so equal values share a bin. The
      layout has exactly the bins that were filled (never an empty one).

    A feature with one distinct value gets one bin (it can never be split), an entirely
    missing feature none. A nominal feature gets one bin per distinct value, in ascending
    order. Missing values get bin -1.

    Args:
        X: float32-convertible array (n, A); NaN marks a missing value; numerical features
            must be finite for ``"equal-width"``.
        nominal_mask: bool array (A,).
        method: ``"equal-width"`` or ``"equal-frequency"``.
        bin_ratio: float in (0, 1], bins per example.
        min_bins: int >= 1, the minimum number of bins (never more than ``n``).
        max_bins: int >= 0, the maximum number of bins, 0 for no maximum.
        drop_empty: leave out the equal-width bins that receive no value, as
            :func:`drop_empty_bins` of the result does (the same BinnedFeatures), but while
            each column's bins are still in cache, renumbering ``bin_index`` in place.

    Returns:
        BinnedFeatures.
    """
    code = _check_arguments(method, bin_ratio, min_bins, max_bins)
    X = np.asarray(X, dtype=np.float32)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array, got shape {X.shape}")
    n, A = X.shape
    nominal = np.asarray(nominal_mask, dtype=np.bool_).copy()
    if nominal.shape != (A,):
        raise ValueError(f"nominal_mask must have shape ({A},), got {nominal.shape}")
    bin_index = np.empty((A, n), dtype=np.int32)
    num_bins = np.zeros(A, dtype=np.int32)
    modes = np.where(nominal, _NOMINAL, code).astype(np.int8)
    threads = _threads(X.size)
    # the kernels share a chunk's columns among the threads: at least one column a thread
    # (at n = 1e6, 2^23 values are 8 columns, which left 8 of an H200 host's 16 cores idle)
    step = max(1, threads, _CHUNK_ELEMENTS // max(n, 1))
    mins, maxs = [np.empty(0, np.float32)], [np.empty(0, np.float32)]
    for start in range(0, A, step):
        stop = min(A, start + step)
        lo, hi = _bin_chunk(X, start, modes[start:stop], (bin_ratio, min_bins, max_bins),
                            bin_index[start:stop], num_bins[start:stop], threads, drop_empty)
        mins.append(lo)
        maxs.append(hi)
    bin_offset = np.zeros(A + 1, dtype=np.int64)
    np.cumsum(num_bins, out=bin_offset[1:])
    return BinnedFeatures(bin_index=bin_index, num_bins=num_bins, bin_offset=bin_offset,
                          bin_min=np.concatenate(mins), bin_max=np.concatenate(maxs),
                          nominal=nominal)


def bin_options(method, bin_ratio=BIN_RATIO, min_bins=MIN_BINS, max_bins=MAX_BINS):
    """(bin_ratio, min_bins, max_bins): :func:`bin_features`' options for ``method``,
    checked as it checks them (ValueError)."""
    _check_arguments(method, bin_ratio, min_bins, max_bins)
    return bin_ratio, min_bins, max_bins


def bin_count(n_examples, bin_ratio, min_bins, max_bins):
    """mlrl-boomer's bin count for ``n`` examples: ``ceil(bin_ratio * n)`` computed in
    float32, at least ``min(min_bins, n)`` and, when ``max_bins > 0``, at most ``max_bins``.

    Equal-width binning uses this many bins of equal width; equal-frequency binning aims at
    this many bins (ties can leave fewer).

    Args:
        n_examples: int or int array, the number of examples ``n`` (missing values included).
        max_bins: 0 for no maximum.

    Returns:
        int64 array shaped like ``n_examples``.
    """
    n = np.asarray(n_examples, dtype=np.int64)
    bins = np.ceil(np.float32(bin_ratio) * n.astype(np.float32)).astype(np.int64)
    bins = np.maximum(bins, np.minimum(min_bins, n))
    if max_bins > 0:
        bins = np.minimum(bins, max_bins)
    return bins


def _check_arguments(method, bin_ratio, min_bins, max_bins):
    """Validate the binning options; returns the method's code."""
    if method not in METHODS:
        raise ValueError(f"unknown feature binning method {method!r}; supported: "
                         + ", ".join(repr(m) for m in METHODS))
    if not (isinstance(bin_ratio, (int, float, np.number)) and 0.0 < bin_ratio <= 1.0):
        raise ValueError(f"bin_ratio must be in (0, 1], got {bin_ratio!r}")
    for name, value in (("min_bins", min_bins), ("max_bins", max_bins)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if min_bins < 1:
        raise ValueError(f"min_bins must be at least 1, got {min_bins}")
    if max_bins < 0 or 0 < max_bins < min_bins:
        raise ValueError(f"max_bins must be 0 (no maximum) or at least min_bins={min_bins}, "
                         f"got {max_bins}")
    return _EQUAL_WIDTH if method == "equal-width" else _EQUAL_FREQUENCY


def _threads(values):
    """Threads for the binning kernels over ``values`` values (``PARALLEL_VALUES``)."""
    return nb.get_num_threads() if values >= PARALLEL_VALUES else 1


def _bin_chunk(X, start, modes, options, bin_index, num_bins, threads, drop_empty=False):
    """Bin the columns ``start .. start + len(modes) - 1`` of ``X``.

    Only the columns that need their values in order are sorted: equal-frequency ones and
    nominal ones with more than ``_FEW`` distinct values. An equal-width column needs its
    range only, a nominal one with few values a small table of them
    (:func:`_summarize_columns`); both give the bins the sorted walk gives.

    Fills ``bin_index`` (C, n) and ``num_bins`` (C,); returns this chunk's (bin_min, bin_max)
    float32 (sum(num_bins),), without the empty equal-width bins with ``drop_empty``. The
    kernels run on ``threads`` threads."""
    C, n = bin_index.shape
    values = np.empty((C, n), dtype=np.float32)
    gather_columns.run(threads, X, start, values)
    table = np.empty((C, _FEW), dtype=np.float32)
    n_present = np.zeros(C, dtype=np.int64)
    n_distinct = np.zeros(C, dtype=np.int64)
    lo, hi = np.zeros(C, dtype=np.float32), np.zeros(C, dtype=np.float32)
    unsorted = _summarize_columns.run(threads, values, modes, table, n_present, n_distinct,
                                      lo, hi)
    order = np.empty((C, n) if not unsorted.all() else (C, 0), dtype=np.int32)
    if not unsorted.all():
        _sort_columns.run(threads, values, order, ~unsorted, n_present, n_distinct)
        done = np.flatnonzero(~unsorted & (n_present > 0))
        lo[done], hi[done] = values[done, 0], values[done, n_present[done] - 1]
    _check_finite(lo, hi, n_present, modes)
    target = bin_count(n, *options)
    per_bin = np.ceil(n_present / max(target, 1)).astype(np.int64)
    bins = np.full(C, target, dtype=np.int64)
    if (modes == _EQUAL_FREQUENCY).any():
        bins = np.where(modes == _EQUAL_FREQUENCY,
                        _equal_frequency_counts.run(threads, values, n_present, per_bin),
                        target)
    bins = np.where((modes == _NOMINAL) | (n_distinct <= 1), n_distinct, bins)
    num_bins[:] = bins
    offsets = np.zeros(C + 1, dtype=np.int64)
    np.cumsum(bins, out=offsets[1:])
    bin_min = np.full(offsets[-1], np.nan, dtype=np.float32)
    bin_max = np.full(offsets[-1], np.nan, dtype=np.float32)
    _assign_bins.run(threads, values, order, unsorted, table, (lo, hi), n_present, per_bin,
                     num_bins, offsets, modes, bin_index, bin_min, bin_max, drop_empty)
    if drop_empty:  # each column's filled bins first, then NaN (its count in num_bins)
        filled = ~np.isnan(bin_min)
        return bin_min[filled], bin_max[filled]
    return bin_min, bin_max


def _check_finite(lo, hi, n_present, modes):
    """Raise unless every equal-width column's range ``lo`` .. ``hi`` (float32 (C,)) is
    finite."""
    bad = (modes == _EQUAL_WIDTH) & (n_present > 0) & ~(np.isfinite(lo) & np.isfinite(hi))
    if bad.any():
        c = np.flatnonzero(bad)[0]
        raise ValueError("equal-width binning needs finite feature values (NaN marks a "
                         f"missing value); a feature has values in [{lo[c]}, {hi[c]}]")


def _summarize_columns_py(values, modes, table, n_present, n_distinct, lo, hi):
    """Summarise every column of ``values`` (C, n) that need not be sorted.

    Writes -0.0 as +0.0 (as the sort does) and, per column, the values present
    (``n_present``), the range ``lo`` .. ``hi`` and ``n_distinct``: for an equal-width
    column 0, 1 or 2 (two or more), for a nominal one its count of distinct values, which
    ``table`` (C, _FEW) float32 holds in ascending order. Returns bool (C,): the columns
    summarised; the others (equal-frequency, nominal with more than ``_FEW`` values) are
    left to :func:`_sort_columns`."""
    C = values.shape[0]
    unsorted = np.zeros(C, dtype=np.bool_)
    for c in nb.prange(C):
        if modes[c] == _EQUAL_FREQUENCY:
            continue
        present, low, high = _range(values[c])
        count = min(present, 1) + (1 if high > low else 0)
        if modes[c] == _NOMINAL:
            count = _distinct_values(values[c], low, high, count, table[c])
            if count > _FEW:
                continue
        unsorted[c] = True
        n_present[c], n_distinct[c], lo[c], hi[c] = present, count, low, high
    return unsorted


_summarize_columns = parallel_kernel(_summarize_columns_py)


@njit
def _range(row):
    """(values present, smallest, largest) of ``row`` (n,) float32, NaN missing; writes
    -0.0 as +0.0. One pass without unpredictable branches."""
    present = 0
    low, high = np.float32(np.inf), np.float32(-np.inf)
    for i in range(row.shape[0]):
        v = row[i]
        if v == 0:
            row[i] = v = np.float32(0.0)
        here = v == v
        present += here
        low = min(low, v) if here else low
        high = max(high, v) if here else high
    return present, low, high


@njit
def _distinct_values(row, low, high, count, table):
    """The distinct values of a nominal ``row`` with range ``low .. high`` into ``table`` in
    ascending order; returns their count (``count``: 0, 1 or 2 or more), ``_FEW + 1`` when
    there are more than ``_FEW``. A row of at most two values (most nominal features)
    needs one branch-free pass."""
    table[0], table[1] = low, high
    if count < 2:
        return count
    extreme = 0
    for i in range(row.shape[0]):
        v = row[i]
        extreme += (v == low) | (v == high) | (v != v)
    if extreme == row.shape[0]:
        return 2
    count = 0
    for i in range(row.shape[0]):
        if row[i] == row[i] and count <= _FEW:
            count = _add_distinct(table, count, row[i])
    if count <= _FEW:
        _sort_small(table, count)
    return count


@nb.njit(inline="always")
def _add_distinct(table, count, v):
    """Add ``v`` to the first ``count`` entries of ``table`` unless it is there; returns the
    new count, ``_FEW + 1`` when the table would overflow."""
    for k in range(count):
        if table[k] == v:
            return count
    if count == _FEW:
        return _FEW + 1
    table[count] = v
    return count + 1


@nb.njit(inline="always")
def _sort_small(table, count):
    """Insertion sort of ``table[:count]`` (distinct, non-NaN values)."""
    for k in range(1, count):
        v, j = table[k], k - 1
        while j >= 0 and table[j] > v:
            table[j + 1] = table[j]
            j -= 1
        table[j + 1] = v


def _sort_columns_py(values, order, selected, n_present, n_distinct):
    """Sort the rows ``c`` of ``values`` (C, n) with ``selected[c]`` in place, NaN last;
    ``order`` (C, n) int32 gets their permutation, ``n_present`` and ``n_distinct`` (int64
    (C,)) their counts of values present and of distinct ones."""
    C, n = values.shape
    for c in nb.prange(C):
        if not selected[c]:
            continue
        keys = values[c].view(np.uint32)
        to_keys(keys)
        radix_argsort(keys, order[c])
        from_keys(keys)
        row = values[c]
        p, distinct = 0, 0
        while p < n and row[p] == row[p]:
            if p == 0 or row[p] != row[p - 1]:
                distinct += 1
            p += 1
        n_present[c], n_distinct[c] = p, distinct


_sort_columns = parallel_kernel(_sort_columns_py)


def _equal_frequency_counts_py(values, n_present, per_bin):
    """Bins the greedy equal-frequency cut makes of each sorted row of ``values`` (C, n)
    (see :func:`_next_bin`); int64 (C,)."""
    C = values.shape[0]
    counts = np.zeros(C, dtype=np.int64)
    for c in nb.prange(C):
        row = values[c]
        b, start = 0, 0
        for p in range(1, n_present[c]):
            if row[p] != row[p - 1]:
                b, start = _next_bin(b, start, p, per_bin[c])
        counts[c] = b + 1 if n_present[c] > 0 else 0
    return counts


_equal_frequency_counts = parallel_kernel(_equal_frequency_counts_py)


@nb.njit(inline="always")
def _next_bin(b, start, p, per_bin):
    """Greedy equal-frequency cut at a new distinct value (sorted position ``p``): start bin
    ``b + 1`` there if bin ``b``, begun at position ``start``, holds ``per_bin`` values or
    more. Returns the (bin, start) of the value at ``p``."""
    if p - start >= per_bin:
        return b + 1, p
    return b, start


def _assign_bins_py(values, order, unsorted, table, ranges, n_present, per_bin, num_bins,
                 offsets, modes, bin_index, bin_min, bin_max, drop_empty):
    """Set ``bin_index`` (C, n) of every example and the smallest/largest value of every
    bin (``bin_min``/``bin_max`` rows ``offsets[c] ..``): a sorted row walked once in
    order, an ``unsorted`` one (:func:`_summarize_columns`) in place. ``ranges``: the
    columns' (lo, hi) float32 (C,). ``drop_empty``: an equal-width column's filled bins
    renumbered in order (:func:`_drop_empty_in_place`), ``num_bins[c]`` their count."""
    C = values.shape[0]
    for c in nb.prange(C):
        row, out, first = values[c], bin_index[c], offsets[c]
        width = (ranges[1][c] - ranges[0][c]) / np.float32(max(num_bins[c], 1))
        if not unsorted[c]:
            _assign_sorted(row, order[c], n_present[c], per_bin[c], num_bins[c], modes[c],
                           width, out, bin_min[first:], bin_max[first:])
        elif modes[c] == _NOMINAL:
            _assign_nominal(row, table[c], num_bins[c], out, bin_min[first:], bin_max[first:])
        else:
            _assign_equal_width(row, ranges[0][c], width, num_bins[c], out, bin_min[first:],
                                bin_max[first:])
            if drop_empty:
                num_bins[c] = _drop_empty_in_place(out, num_bins[c], bin_min[first:],
                                                   bin_max[first:])


_assign_bins = parallel_kernel(_assign_bins_py)


@njit
def _drop_empty_in_place(out, num_bins, bin_min, bin_max):
    """Renumber a binned row ``out`` (n,) int32 to its filled bins (the first ``num_bins``
    of ``bin_min``/``bin_max``, NaN where empty) in order, move their ranges to the front
    and mark the rest NaN; returns their count: :func:`drop_empty_bins` for one column."""
    renumber = np.empty(num_bins, np.int32)
    k = 0
    for b in range(num_bins):
        renumber[b] = k
        if bin_min[b] == bin_min[b]:
            bin_min[k], bin_max[k] = bin_min[b], bin_max[b]
            k += 1
    if k == num_bins:
        return k
    for b in range(k, num_bins):
        bin_min[b] = bin_max[b] = np.nan
    for i in range(out.shape[0]):
        if out[i] >= 0:
            out[i] = renumber[out[i]]
    return k


@njit
def _assign_sorted(row, perm, present, per_bin, num_bins, mode, width, out, bin_min, bin_max):
    """:func:`_assign_bins` for a sorted ``row`` (n,) with permutation ``perm``."""
    for p in range(present, row.shape[0]):
        out[perm[p]] = -1
    if present == 0:
        return
    lo = row[0]
    distinct = -1
    b, start = 0, 0
    for p in range(present):
        v = row[p]
        if p == 0 or v != row[p - 1]:
            distinct += 1
            if mode == _NOMINAL:
                b = distinct
            elif mode == _EQUAL_FREQUENCY:
                b, start = _next_bin(b, start, p, per_bin)
            else:
                b = _equal_width_bin(v, lo, width, num_bins)
            if bin_min[b] != bin_min[b]:
                bin_min[b] = v
        bin_max[b] = v
        out[perm[p]] = b


@njit
def _assign_nominal(row, table, num_bins, out, bin_min, bin_max):
    """:func:`_assign_bins` for a nominal ``row`` whose ``num_bins`` distinct values are
    ``table`` in ascending order: a value's bin is the count of smaller ones."""
    for i in range(row.shape[0]):
        v = row[i]
        b = 0
        for k in range(1, num_bins):
            b += table[k] <= v
        out[i] = b if v == v else -1
    for b in range(num_bins):
        bin_min[b] = bin_max[b] = table[b]


@njit
def _assign_equal_width(row, lo, width, num_bins, out, bin_min, bin_max):
    """:func:`_assign_bins` for an equal-width ``row`` in its original order (the bins'
    ranges by ``min``/``max``, not by branches that random values mispredict)."""
    for b in range(num_bins):
        bin_min[b], bin_max[b] = np.inf, -np.inf
    for i in range(row.shape[0]):
        v = row[i]
        if v != v:
            out[i] = -1
            continue
        b = _equal_width_bin(v, lo, width, num_bins)
        out[i] = b
        bin_min[b] = min(bin_min[b], v)
        bin_max[b] = max(bin_max[b], v)
    for b in range(num_bins):
        if bin_min[b] > bin_max[b]:  # no value
            bin_min[b] = bin_max[b] = np.nan


@nb.njit(inline="always")
def _equal_width_bin(value, lo, width, num_bins):
    """``min(floor((value - lo) / width), num_bins - 1)`` in float32 arithmetic, as
    mlrl-boomer computes it (``value``, ``lo``, ``width``: float32)."""
    if num_bins <= 1:
        return 0
    q = (value - lo) / width  # (floor(q) < num_bins exactly when q < num_bins)
    if not q < num_bins:  # also a NaN/inf quotient from a zero width
        return num_bins - 1 if value > lo else 0
    return np.int64(math.floor(q))  # (math, not np.floor: it compiles for CUDA too)


def rows_of(offset, groups):
    """int64 (R,): the rows ``offset[g] .. offset[g + 1] - 1`` of each of ``groups`` (ints,
    e.g. features with ``bin_offset``, or slots with a slot offset), in the order given;
    empty for no groups."""
    if len(groups) == 0:
        return np.empty(0, np.int64)
    return np.concatenate([np.arange(offset[g], offset[g + 1], dtype=np.int64)
                           for g in groups])


def drop_empty_bins(binned):
    """The same binning without the bins that received no training value.

    Equal-width binning keeps mlrl-boomer's bin count, so most of its bins can be empty
    (a feature with 7 distinct values among 30,000 examples gets 9,900 bins). Empty bins
    offer no condition that a neighbouring non-empty bin does not (a threshold lies between
    the training values of the non-empty bins around it), but the histogram search would
    zero and walk them on every refinement; the searches therefore get this compact layout.

    Args:
        binned: BinnedFeatures from :func:`bin_features`.

    Returns:
        BinnedFeatures with ``num_bins`` the non-empty bins per feature, renumbered in
        order; ``binned`` itself when it has no empty bin.
    """
    filled = ~np.isnan(binned.bin_min)
    if filled.all():
        return binned
    A = binned.num_features
    threads = _threads(binned.bin_index.size)
    num_bins = np.zeros(A, dtype=np.int32)
    renumber = np.empty(filled.shape[0], dtype=np.int32)
    _number_filled_bins.run(threads, filled, binned.bin_offset, renumber, num_bins)
    bin_offset = np.zeros(A + 1, dtype=np.int64)
    np.cumsum(num_bins, out=bin_offset[1:])
    bin_index = np.empty_like(binned.bin_index)
    _renumber_bins.run(threads, binned.bin_index, binned.bin_offset, renumber, bin_index)
    return BinnedFeatures(bin_index=bin_index, num_bins=num_bins, bin_offset=bin_offset,
                          bin_min=binned.bin_min[filled], bin_max=binned.bin_max[filled],
                          nominal=binned.nominal)


def _number_filled_bins_py(filled, old_offset, renumber, num_bins):
    """For every feature ``f`` of the layout ``old_offset`` int64 (A + 1,): ``renumber[b]``
    (int32 (B,)) = bin ``b``'s index among the feature's filled bins (``filled`` bool (B,);
    -1 where empty), ``num_bins[f]`` (int32 (A,)) = how many it has."""
    for f in nb.prange(num_bins.shape[0]):
        k = 0
        for b in range(old_offset[f], old_offset[f + 1]):
            if filled[b]:
                renumber[b] = k
                k += 1
            else:
                renumber[b] = -1
        num_bins[f] = k


def _renumber_bins_py(bin_index, old_offset, renumber, out):
    """out[f, i] = renumber[old_offset[f] + bin_index[f, i]] where ``bin_index[f, i] >= 0``,
    else -1 (missing); both int32 (A, n)."""
    for f in nb.prange(bin_index.shape[0]):
        row, dst = bin_index[f], out[f]
        base = old_offset[f]
        for i in range(row.shape[0]):
            b = row[i]
            dst[i] = renumber[base + b] if b >= 0 else b


_number_filled_bins = parallel_kernel(_number_filled_bins_py)
_renumber_bins = parallel_kernel(_renumber_bins_py)
