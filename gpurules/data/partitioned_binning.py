"""The binning of :func:`gpurules.data.binning.bin_features` for data split into row
partitions that are never brought together (a distributed fit, ``gpurules.dask``).

Three steps, each on NumPy arrays; only per-feature and per-bin facts travel:

1. :func:`partition_summary` per partition: rows, per feature the number of present values
   and their min/max, and for nominal and equal-frequency features the distinct values
   with their counts;
2. :func:`plan_bins` once, from all summaries: every feature's bin count and how a value
   finds its bin (equal-width: the global min and width; otherwise the merged distinct
   values and the bin of each), the :class:`BinPlan`;
3. :func:`assign_bins` per partition: the bin of every value, and each bin's smallest and
   largest value in the partition, merged by :func:`merge_layout` into the global layout.

Each partition's bins then equal the rows of ``bin_features`` over the concatenated data
(equal-width from the global min and max exactly as ``bin_features`` computes them;
equal-frequency and nominal bins exactly, from the distinct values: that costs memory in
the number of distinct values of those features on the client).
"""

from dataclasses import dataclass

import numpy as np

from gpurules.data.binning import (BinnedFeatures, _check_arguments, _equal_width_bin,
                                   _next_bin, bin_count, drop_empty_bins)
from gpurules.jit.cache import njit

_WIDTH, _DISTINCT = 0, 1  # how a feature's values find their bins


@dataclass(frozen=True)
class BinPlan:
    """How every value of every feature finds its bin (the same on every partition).

    Attributes:
        equal_width: bool (A,), the feature's bin is ``_equal_width_bin(x, lo, width,
            num_bins)``; else ``bins[searchsorted(values, x)]`` of its distinct values.
        num_bins: int32 (A,); bin_offset: int64 (A + 1,), the layout before empty bins are
            dropped (as ``bin_features`` returns it).
        lo, width: float32 (A,), equal-width features' global minimum and bin width.
        values: float32 (V,), the sorted distinct values of the other features, feature
            ``f``'s at ``value_offset[f] .. value_offset[f + 1] - 1``; bins: int32 (V,)
            their bins; value_offset: int64 (A + 1,).
        nominal: bool (A,).
    """

    equal_width: np.ndarray
    num_bins: np.ndarray
    bin_offset: np.ndarray
    lo: np.ndarray
    width: np.ndarray
    values: np.ndarray
    bins: np.ndarray
    value_offset: np.ndarray
    nominal: np.ndarray


def distinct_features(nominal, method):
    """bool (A,): the features whose distinct values :func:`partition_summary` gathers
    (nominal ones; all with ``method="equal-frequency"``)."""
    nominal = np.asarray(nominal, np.bool_)
    return np.ones_like(nominal) if method == "equal-frequency" else nominal.copy()


def partition_summary(X, distinct):
    """Step 1 on one partition.

    Args:
        X: float32 (n_p, A), NaN = missing, -0.0 already turned into +0.0.
        distinct: bool (A,), the features whose distinct values are gathered.

    Returns:
        (n_p int, n_present int64 (A,), lo float32 (A,), hi float32 (A,) (+inf/-inf where
        no value is present), values: A entries of (sorted distinct float32 (d,), their
        counts int64 (d,)) or None).
    """
    present = ~np.isnan(X)
    lo = np.where(present, X, np.float32(np.inf)).min(axis=0, initial=np.inf)
    hi = np.where(present, X, np.float32(-np.inf)).max(axis=0, initial=-np.inf)
    values = [np.unique(X[present[:, f], f], return_counts=True) if distinct[f] else None
              for f in range(X.shape[1])]
    return (X.shape[0], present.sum(axis=0).astype(np.int64), lo.astype(np.float32),
            hi.astype(np.float32), values)


def plan_bins(summaries, nominal, method, bin_ratio=0.33, min_bins=2, max_bins=0):
    """Step 2: the :class:`BinPlan` of all partitions' :func:`partition_summary` results,
    with ``bin_features``' arguments (``nominal`` bool (A,), method and its options)."""
    _check_arguments(method, bin_ratio, min_bins, max_bins)
    nominal = np.asarray(nominal, np.bool_)
    A = nominal.shape[0]
    n = sum(s[0] for s in summaries)
    n_present = np.sum([s[1] for s in summaries], axis=0, dtype=np.int64).reshape(A)
    lo = np.min([s[2] for s in summaries], axis=0, initial=np.inf).astype(np.float32)
    hi = np.max([s[3] for s in summaries], axis=0, initial=-np.inf).astype(np.float32)
    target = int(bin_count(n, bin_ratio, min_bins, max_bins))
    equal_width = ~distinct_features(nominal, method)
    num_bins = np.zeros(A, np.int32)
    width = np.zeros(A, np.float32)
    values, bins = [], []
    for f in range(A):
        if equal_width[f]:
            num_bins[f], width[f] = _equal_width_plan(n_present[f], lo[f], hi[f], target)
            values.append(np.empty(0, np.float32))
            bins.append(np.empty(0, np.int32))
            continue
        u, counts = _merge_distinct([s[4][f] for s in summaries])
        b = np.arange(u.shape[0], dtype=np.int32) if nominal[f] else \
            _frequency_bins(counts, int(np.ceil(counts.sum() / max(target, 1))))
        num_bins[f] = b[-1] + 1 if b.shape[0] else 0
        values.append(u)
        bins.append(b)
    return BinPlan(equal_width, num_bins, _offsets(num_bins), lo, width,
                   np.concatenate(values), np.concatenate(bins),
                   _offsets([v.shape[0] for v in values]), nominal)


def _offsets(sizes):
    """int64 (len(sizes) + 1,): the running sums of ``sizes`` from 0."""
    out = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes, out=out[1:])
    return out


def _equal_width_plan(n_present, lo, hi, target):
    """(bin count, float32 width) of an equal-width feature, as ``bin_features``: no bin
    without values, one for a single distinct value, else ``target`` bins."""
    if n_present == 0:
        return 0, np.float32(0)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError("equal-width binning needs finite feature values (NaN marks a "
                         f"missing value); a feature has values in [{lo}, {hi}]")
    num_bins = 1 if lo == hi else target
    return num_bins, np.float32((hi - lo) / np.float32(num_bins))


def _merge_distinct(parts):
    """(sorted distinct float32 (d,), int64 (d,) counts) of several partitions' pairs."""
    values = np.concatenate([p[0] for p in parts]).astype(np.float32)
    counts = np.concatenate([p[1] for p in parts]).astype(np.int64)
    u, inverse = np.unique(values, return_inverse=True)
    return u, np.bincount(inverse, counts, u.shape[0]).astype(np.int64)


@njit
def _frequency_bins(counts, per_bin):
    """int32 (d,): the equal-frequency bin of each distinct value of a feature with
    ``counts`` int64 (d,) (sorted by value), cut greedily as ``bin_features`` does."""
    out = np.zeros(counts.shape[0], np.int32)
    b, start, p = 0, 0, 0
    for j in range(counts.shape[0]):
        if j > 0:
            b, start = _next_bin(b, start, p, per_bin)
        out[j] = b
        p += counts[j]
    return out


def assign_bins(X, plan):
    """Step 3 on one partition.

    Args:
        X: float32 (n_p, A) as for :func:`partition_summary`; plan: :class:`BinPlan`.

    Returns:
        (bin_index int32 (A, n_p), -1 for missing; bin_min, bin_max float32 (B,) of the
        plan's layout, the partition's smallest and largest value per bin, NaN if none).
    """
    n, A = X.shape
    B = int(plan.bin_offset[-1])
    bin_index = np.empty((A, n), np.int32)
    bin_min = np.full(B, np.nan, np.float32)
    bin_max = np.full(B, np.nan, np.float32)
    for f in range(A):
        v0, v1 = plan.value_offset[f], plan.value_offset[f + 1]
        _assign_column(np.ascontiguousarray(X[:, f]), plan.equal_width[f], plan.lo[f],
                       plan.width[f], plan.num_bins[f], plan.values[v0:v1],
                       plan.bins[v0:v1], plan.bin_offset[f], bin_index[f], bin_min,
                       bin_max)
    return bin_index, bin_min, bin_max


@njit
def _assign_column(col, equal_width, lo, width, num_bins, values, bins, first, out,
                   bin_min, bin_max):
    """Bins ``out`` int32 (n_p,) of one feature's values ``col`` float32 (n_p,) and the
    smallest/largest value per bin (rows ``first + b`` of ``bin_min``/``bin_max``)."""
    for i in range(col.shape[0]):
        v = col[i]
        if v != v:
            out[i] = -1
            continue
        if equal_width:
            b = _equal_width_bin(v, lo, width, num_bins)
        else:
            b = bins[np.searchsorted(values, v)]
        out[i] = b
        r = first + b
        if not bin_min[r] <= v:  # NaN: the bin's first value
            bin_min[r] = v
        if not bin_max[r] >= v:
            bin_max[r] = v


def merge_layout(plan, ranges):
    """The global layout of all partitions' :func:`assign_bins` bin ranges.

    Args:
        plan: :class:`BinPlan`; ranges: list of (bin_min, bin_max) float32 (B,).

    Returns:
        (layout, compact): BinnedFeatures without examples (``bin_index`` int32 (A, 0)):
        ``layout`` as ``bin_features`` would return it, ``compact`` after
        ``drop_empty_bins``. A partition's own features are ``drop_empty_bins`` of
        ``layout`` with its ``bin_index``.
    """
    B = int(plan.bin_offset[-1])
    bin_min = np.full(B, np.nan, np.float32)
    bin_max = np.full(B, np.nan, np.float32)
    for lo, hi in ranges:
        np.fmin(bin_min, lo, out=bin_min)
        np.fmax(bin_max, hi, out=bin_max)
    A = plan.num_bins.shape[0]
    layout = BinnedFeatures(np.empty((A, 0), np.int32), plan.num_bins.copy(),
                            plan.bin_offset.copy(), bin_min, bin_max, plan.nominal.copy())
    return layout, drop_empty_bins(layout)
