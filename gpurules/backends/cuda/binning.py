"""Equal-width feature binning on the device: the twin of ``data/binning.py``'s
``bin_features(X, ..., "equal-width", drop_empty=True)`` for the numerical columns of a
dense X (nominal ones, a bin a value, are binned on the host and merged in), with the same
``BinnedFeatures`` bit for bit, its ``bin_index`` left on the device.

On the host, binning a 1e6 x 100 matrix took 1.6 s of a 4.3 s CUDA fit on the H200's
16-core host (docs/gpu-validation.md, session 50; session 51 made it about 40 % faster on a
2-core VM), and the fit then uploaded the 400 MB ``bin_index``; here X (the same bytes)
is uploaded instead and passes over it on the device bin it:

1. :func:`_column_ranges`: each column's smallest and largest value and its count of
   values present (NaN missing; -0.0 counts as +0.0, as the host's sort and ``_range``
   write it), a thread per (column, run of ``ROWS`` rows), one atomic of each per thread.
2. The host reads the ranges (``A`` values each), raises the host's error for a column
   that is not finite, and computes each column's bin count and width exactly as the host
   does (``bin_count``; ``(hi - lo) / bins`` in float32).
3. :func:`_assign_bins`: every value's bin by ``data.binning._equal_width_bin`` (the host's
   function, compiled for the device: float32 subtraction and division, correctly rounded
   on both), each bin's smallest and largest value by atomic min/max (exact, whatever the
   order).
4. :func:`_number_filled` (a thread per column) numbers each column's filled bins in order,
   :func:`_compact_ranges` moves their ranges to the layout that drops the empty ones
   (offsets from the filled counts, summed on the host), :func:`_renumber` rewrites
   ``bin_index`` (:func:`_drop_empty`).

Nominal columns, where X has some, are binned by ``bin_features`` on the host and merged in
column order (:func:`_merge`): columns are binned each on its own.

Shapes and dtypes: X float32 (n, A) C order; lo, hi float32 (A,); present int64 (A,);
width float32 (A,); num_bins int64 (A,); offset int64 (A + 1,) of the layout with every
bin (B = offset[A] rows), kept int64 (A + 1,) of the one without the empty bins;
bin_lo, bin_hi float32 (B,) (+inf / -inf: empty); renumber int32 (B,); filled int64 (A,);
bin_index int32 (A, n); bin_min, bin_max float32 (kept[A],).
"""

import math
from dataclasses import dataclass

import numpy as np
from numba import cuda

from gpurules.backends.cuda.device_math import _device, kernel, signature_types
from gpurules.data import binning

ROWS = 256  # rows per thread of the column ranges
equal_width_bin = _device(binning._equal_width_bin)


def _column_ranges(X, lo, hi, present):
    """Fold every column's values into ``lo``/``hi`` (initially +inf / -inf) and count the
    values present into ``present`` (initially 0)."""
    n, A = X.shape
    runs = (n + ROWS - 1) // ROWS
    for e in range(cuda.grid(1), A * runs, cuda.gridsize(1)):
        f = e % A  # neighbouring threads: neighbouring columns of the same rows
        start = (e // A) * ROWS
        low, high, count = np.float32(math.inf), np.float32(-math.inf), 0
        for i in range(start, min(start + ROWS, n)):
            v = X[i, f]
            if v == v:
                if v == 0:
                    v = np.float32(0.0)
                low = min(low, v)
                high = max(high, v)
                count += 1
        if count > 0:
            cuda.atomic.min(lo, f, low)
            cuda.atomic.max(hi, f, high)
            cuda.atomic.add(present, f, count)


def _assign_bins(X, lo, width, num_bins, offset, bin_index, bin_lo, bin_hi):
    """``bin_index[f, i]``: the bin of ``X[i, f]`` (-1: missing); every bin's smallest and
    largest value folded into ``bin_lo``/``bin_hi`` (initially +inf / -inf)."""
    n, A = X.shape
    for e in range(cuda.grid(1), n * A, cuda.gridsize(1)):
        i = e // A
        f = e - i * A
        v = X[i, f]
        if v != v:
            bin_index[f, i] = -1
            continue
        if v == 0:
            v = np.float32(0.0)
        b = equal_width_bin(v, lo[f], width[f], num_bins[f])
        bin_index[f, i] = b
        cuda.atomic.min(bin_lo, offset[f] + b, v)
        cuda.atomic.max(bin_hi, offset[f] + b, v)


def _number_filled(offset, bin_lo, renumber, filled):
    """Per column (a thread each): ``renumber[r]`` = how many filled bins precede row ``r``
    of the column; ``filled[f]`` = its filled bins."""
    for f in range(cuda.grid(1), filled.shape[0], cuda.gridsize(1)):
        k = 0
        for r in range(offset[f], offset[f + 1]):
            renumber[r] = k
            if bin_lo[r] != math.inf:
                k += 1
        filled[f] = k


def _compact_ranges(offset, kept, bin_lo, bin_hi, bin_min, bin_max):
    """Per column (a thread each): its filled bins' ranges, in order, to rows ``kept[f]
    ..`` of ``bin_min``/``bin_max``."""
    for f in range(cuda.grid(1), kept.shape[0] - 1, cuda.gridsize(1)):
        k = kept[f]
        for r in range(offset[f], offset[f + 1]):
            if bin_lo[r] != math.inf:
                bin_min[k] = bin_lo[r]
                bin_max[k] = bin_hi[r]
                k += 1


def _renumber(offset, renumber, bin_index):
    """Every bin of ``bin_index`` (A, n) becomes its number among its column's filled bins."""
    A, n = bin_index.shape
    for e in range(cuda.grid(1), A * n, cuda.gridsize(1)):
        f = e // n
        i = e - f * n
        b = bin_index[f, i]
        if b >= 0:
            bin_index[f, i] = renumber[offset[f] + b]


column_ranges = kernel(_column_ranges)
assign_bins = kernel(_assign_bins)
number_filled = kernel(_number_filled)
compact_ranges = kernel(_compact_ranges)
renumber = kernel(_renumber)


def _signatures():
    from numba import types

    vec, mat = signature_types()
    i32, i64, f32 = types.int32, types.int64, types.float32
    return {
        "column_ranges": (mat[f32], vec[f32], vec[f32], vec[i64]),
        "assign_bins": (mat[f32], vec[f32], vec[f32], vec[i64], vec[i64], mat[i32], vec[f32],
                        vec[f32]),
        "number_filled": (vec[i64], vec[f32], vec[i32], vec[i64]),
        "compact_ranges": (vec[i64], vec[i64], vec[f32], vec[f32], vec[f32], vec[f32]),
        "renumber": (vec[i64], vec[i32], mat[i32]),
    }


SIGNATURES = _signatures()
KERNELS = {"column_ranges": column_ranges, "assign_bins": assign_bins,
           "number_filled": number_filled, "compact_ranges": compact_ranges,
           "renumber": renumber}


# -- the host side -------------------------------------------------------------------------
@dataclass(frozen=True)
class DeviceBinnedFeatures(binning.BinnedFeatures):
    """``BinnedFeatures`` whose ``bin_index`` (int32 (A, n)) is a CuPy array on the device
    that binned them (``CudaBackend.start_fit`` takes it as it is); the rest are host
    arrays, and ``device_ranges``, where the device has them, (bin_min, bin_max) there
    too (None: upload the host's)."""

    device_ranges: tuple = None


def device_arrays(cp, features):
    """(bin_index int32 (A, n), bin_min, bin_max float32 (B,)) of BinnedFeatures
    ``features`` on the device: as they are where the device binned them
    (:class:`DeviceBinnedFeatures`), else uploaded with CuPy ``cp``."""
    index, ranges = features.bin_index, None
    if isinstance(features, DeviceBinnedFeatures):
        ranges = features.device_ranges
    else:
        index = cp.asarray(np.ascontiguousarray(index, np.int32))
    if ranges is None:
        ranges = tuple(cp.asarray(np.ascontiguousarray(a, np.float32))
                       for a in (features.bin_min, features.bin_max))
    return (index,) + tuple(ranges)


def resident_bytes(features):
    """Bytes of BinnedFeatures ``features`` already on the device: its ``bin_index`` where
    the device binned them, else 0."""
    return features.bin_index.nbytes if isinstance(features, DeviceBinnedFeatures) else 0


def memory_bytes(n, A, bins, merged=False):
    """Device memory (bytes) of binning ``n`` x ``A`` values into at most ``bins`` bins a
    column: X and ``bin_index`` (4 bytes a value each), ``bin_lo``, ``bin_hi``,
    ``renumber`` and the kept ranges (4 bytes a bin each); ``merged``: and the
    ``bin_index`` of all columns, where some are nominal (:func:`_merge`)."""
    return int((12 if merged else 8) * n * A + 20 * A * bins)


def _layout(lo, hi, present, n, options):
    """(num_bins int64 (A,), width float32 (A,), offset int64 (A + 1,)) of the columns with
    ranges ``lo``/``hi`` (float32 (A,)) and ``present`` values (int64 (A,)), as the host's
    ``_bin_chunk`` makes them for equal-width columns; its ValueError for a column that is
    not finite. ``options``: (bin_ratio, min_bins, max_bins)."""
    modes = np.full(lo.shape[0], binning._EQUAL_WIDTH, np.int8)
    binning._check_finite(lo, hi, present, modes)
    distinct = np.minimum(present, 1) + (hi > lo)
    num_bins = np.where(distinct <= 1, distinct, binning.bin_count(n, *options))
    width = (hi - lo) / np.maximum(num_bins, 1).astype(np.float32)
    offset = np.zeros(lo.shape[0] + 1, np.int64)
    np.cumsum(num_bins, out=offset[1:])
    return num_bins.astype(np.int64), width.astype(np.float32), offset


def bin_equal_width(backend, X, nominal, options):
    """``data.binning.bin_features(X, nominal, "equal-width", *options, drop_empty=True)``
    with the numerical columns binned on ``backend``'s device (module docstring), the
    nominal ones (a value a bin) on the host; ``bin_index`` a device array. Columns are
    binned each on its own, so the two parts make the host's result.

    Args:
        backend: a ``CudaBackend`` (its ``cp``, ``_on_device``, ``_wrap``, ``_blocks``,
            ``_config``, ``_check_memory``).
        X: float32 (n, A) host array; nominal: bool (A,) with some False;
        options: (bin_ratio, min_bins, max_bins).

    Returns:
        DeviceBinnedFeatures."""
    nominal = np.asarray(nominal, np.bool_)
    numerical = np.flatnonzero(~nominal)
    n, A = X.shape
    bins = int(binning.bin_count(n, *options))
    backend._check_memory(memory_bytes(n, A, bins, nominal.any()),
                          "binning the features on the device")
    index, counts, device_ranges = _bin_numerical(
        backend, np.ascontiguousarray(X[:, numerical] if nominal.any() else X), options)
    lows, highs = (backend.cp.asnumpy(a) for a in device_ranges)
    if nominal.any():
        host = binning.bin_features(X[:, nominal], np.ones(int(nominal.sum()), np.bool_),
                                    "equal-width", *options, drop_empty=True)
        index, counts, lows, highs = _merge(backend, nominal, (index, counts, lows, highs),
                                            host)
        device_ranges = None  # (the merged ranges are the host's)
    offset = np.zeros(A + 1, np.int64)
    np.cumsum(counts, out=offset[1:])
    return DeviceBinnedFeatures(bin_index=index, num_bins=counts.astype(np.int32),
                                bin_offset=offset, bin_min=lows, bin_max=highs,
                                nominal=nominal.copy(), device_ranges=device_ranges)


def _merge(backend, nominal, numerical, host):
    """(bin_index device int32 (A, n), num_bins int64 (A,), bin_min, bin_max) of all columns
    in their order, from the numerical columns' (``numerical``: :func:`_bin_numerical`'s)
    and the nominal ones' (``host``: their BinnedFeatures)."""
    index, counts, lows, highs = numerical
    parts = {False: (index, np.concatenate([[0], np.cumsum(counts)]), lows, highs),
             True: (None, host.bin_offset, host.bin_min, host.bin_max)}
    rank = np.where(nominal, np.cumsum(nominal), np.cumsum(~nominal)) - 1  # row in its part
    merged_counts = np.empty(nominal.shape[0], np.int64)
    merged_counts[~nominal], merged_counts[nominal] = counts, host.num_bins
    ranges = [(np.zeros(0, np.float32), np.zeros(0, np.float32))]
    with backend._on_device():
        merged = backend.cp.empty((nominal.shape[0], index.shape[1]), np.int32)
        parts[True] = (backend.cp.asarray(host.bin_index),) + parts[True][1:]
        for c, j in enumerate(rank):
            rows, offset, mins, maxs = parts[bool(nominal[c])]
            merged[c] = rows[j]
            ranges.append((mins[offset[j]:offset[j + 1]], maxs[offset[j]:offset[j + 1]]))
    return (merged, merged_counts, np.concatenate([r[0] for r in ranges]),
            np.concatenate([r[1] for r in ranges]))


def _bin_numerical(backend, X, options):
    """The equal-width bins of the numerical columns of ``X`` (float32 (n, A), C order) on
    the device, empty bins dropped: (bin_index device int32 (A, n), num_bins int64 (A,),
    (bin_min, bin_max) float32 device arrays)."""
    cp, nb = backend.cp, backend._wrap  # fresh views: these arrays live for this call
    n, A = X.shape
    with backend._on_device():
        X_dev = cp.asarray(X)
        lo = cp.full(A, np.inf, np.float32)
        hi = cp.full(A, -np.inf, np.float32)
        present = cp.zeros(A, np.int64)
        runs = -(-n // ROWS)
        column_ranges[backend._config(backend._blocks(A * runs))](nb(X_dev), nb(lo), nb(hi),
                                                                 nb(present))
        num_bins, width, offset = _layout(cp.asnumpy(lo), cp.asnumpy(hi),
                                          cp.asnumpy(present), n, options)
        B = int(offset[-1])
        bin_index = cp.empty((A, n), np.int32)
        bin_lo = cp.full(max(B, 1), np.inf, np.float32)
        bin_hi = cp.full(max(B, 1), -np.inf, np.float32)
        offset_dev = cp.asarray(offset)
        assign_bins[backend._config(backend._blocks(n * A))](
            nb(X_dev), nb(lo), nb(cp.asarray(width)), nb(cp.asarray(num_bins)),
            nb(offset_dev), nb(bin_index), nb(bin_lo), nb(bin_hi))
        del X_dev
        return (bin_index,) + _drop_empty(backend, offset_dev, bin_lo, bin_hi, bin_index)


def _drop_empty(backend, offset, bin_lo, bin_hi, bin_index):
    """Drop the empty bins (``bin_lo`` +inf) of the layout ``offset`` (device int64
    (A + 1,)): ``bin_index`` renumbered in place; returns (num_bins int64 (A,), (bin_min,
    bin_max) float32 device arrays) of the filled bins."""
    cp, nb = backend.cp, backend._wrap
    A, n = bin_index.shape
    renumbered = cp.empty(bin_lo.shape[0], np.int32)
    filled = cp.zeros(A, np.int64)
    number_filled[backend._config(backend._blocks(A))](nb(offset), nb(bin_lo),
                                                       nb(renumbered), nb(filled))
    counts = cp.asnumpy(filled)
    kept = np.zeros(A + 1, np.int64)
    np.cumsum(counts, out=kept[1:])
    B = int(kept[-1])
    bin_min = cp.empty(max(B, 1), np.float32)
    bin_max = cp.empty(max(B, 1), np.float32)
    compact_ranges[backend._config(backend._blocks(A))](
        nb(offset), nb(cp.asarray(kept)), nb(bin_lo), nb(bin_hi), nb(bin_min), nb(bin_max))
    renumber[backend._config(backend._blocks(A * n))](nb(offset), nb(renumbered),
                                                      nb(bin_index))
    return counts, (bin_min[:B], bin_max[:B])
