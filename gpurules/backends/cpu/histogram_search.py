"""Histogram search for the best condition (CPU, Numba; DESIGN §1 "Histogram search").

Features are binned once per fit (:func:`gpurules.data.binning.bin_features`). Per
refinement, the build (``histograms.py``) sums the covered examples' weighted fixed-point
statistics per (sampled feature, bin) into ``hist`` int64 (B, K + W) and ``hist_count``
int64 (B,), and :func:`scan_histograms` walks each feature's bins in ascending order,
skipping empty ones:

- numerical: at the boundary between consecutive non-empty bins ``b < b2``, ``<=`` is scored
  from the running sums and ``>`` from ``totals - running sums``, with the threshold of
  ``thresholds.bin_threshold`` (shared with the CUDA scan): the midpoint of ``bin_max[b']``
  and ``bin_min[b2]``, where ``b'`` is the last bin below ``b2`` that holds any training
  example (``b' >= b``), so a threshold never falls inside a bin;
- nominal: ``==`` from a bin's sums and ``!=`` from ``totals - bin``, threshold = the bin's
  value.

Totals are the sums over a feature's bins, so examples missing the feature are excluded.
The calling convention and output contract are those of
:mod:`gpurules.backends.cpu.exact_search`: one slot ``j`` of the ``out_*`` arrays per
sampled feature, ``out_op[j] = -1`` when no candidate beats ``min_quality``, and ties keep
the first candidate (bins ascending, ``<=`` before ``>``, ``==`` before ``!=``).
"""

import numba as nb
import numpy as np

from gpurules.backends.cpu.coverage import _apply_listed, covered_list
from gpurules.backends.cpu.exact_search import _boundary, _work_row
from gpurules.backends.cpu.histograms import build
from gpurules.backends.thresholds import bin_threshold
from gpurules.conditions import OP_EQ, OP_GR, OP_LEQ, OP_NEQ
from gpurules.jit.cache import njit
from gpurules.jit.threads import thread_limit
from gpurules.jit.variants import parallel_kernel
from gpurules.objectives.multi_output import HEAD_MULTI_OUTPUT, work_arrays
from gpurules.objectives.quality import family_head_mode


@nb.njit(inline="always")
def _set_bin(run_g, run_h, hist, r):
    """``run_g = hist[r, :K]``, ``run_h = hist[r, K:]`` (``K = run_g.shape[0]``)."""
    K = run_g.shape[0]
    for k in range(K):
        run_g[k] = hist[r, k]
    for k in range(run_h.shape[0]):
        run_h[k] = hist[r, K + k]


@nb.njit(inline="always")
def _add_bin(run_g, run_h, hist, r):
    """``run_g += hist[r, :K]``, ``run_h += hist[r, K:]`` (``K = run_g.shape[0]``)."""
    K = run_g.shape[0]
    for k in range(K):
        run_g[k] += hist[r, k]
    for k in range(run_h.shape[0]):
        run_h[k] += hist[r, K + k]


@njit
def _feature_totals(first, stop, hist, hist_count, tot_g, tot_h):
    """Sums over the bins ``first .. stop - 1`` into ``tot_g`` int64 (K,), ``tot_h`` int64
    (W,); returns (their count, the bins with examples)."""
    tot_g[:] = 0
    tot_h[:] = 0
    count = filled = 0
    for r in range(first, stop):
        if hist_count[r] > 0:
            _add_bin(tot_g, tot_h, hist, r)
            count += hist_count[r]
            filled += 1
    return count, filled


@nb.njit(inline="always")
def _next_filled(r, hist_count):
    """The first row from ``r`` on with examples (there must be one)."""
    while hist_count[r] == 0:
        r += 1
    return r


@njit(_nrt=False)  # no reference counting of the views in the scan loop
def _scan_feature(j, f, bin_offset, bin_min, bin_max, nominal, hist, hist_count, labels,
                  head_mode, params, inv_scale, min_coverage, covered, min_quality, sums, work,
                  gains, out_q, out_op, out_thr, out_cnt, out_label, out_g, out_h):
    """Best condition on feature ``f`` from its histogram; writes slot ``j``. ``covered``:
    the rule's covered count (``thresholds.admissible``; the feature's own total leaves out
    the examples missing it). ``sums``: int64
    (4, max(K, W)), slot ``j``'s rows for the feature totals and running sums; ``work``: the
    head's (float64, int64) work row of slot ``j`` (``objectives.multi_output``); ``gains``:
    its float64 (K,) row for the boosting heads (``quality.boosting_quality``)."""
    first, stop = bin_offset[f], bin_offset[f + 1]
    K = out_g.shape[1]
    W = hist.shape[1] - K
    tot_g, tot_h, run_g, run_h = sums[0, :K], sums[1, :W], sums[2, :K], sums[3, :W]
    tot_count, filled = _feature_totals(first, stop, hist, hist_count, tot_g, tot_h)
    out_op[j] = -1
    is_nominal = nominal[f]
    # a nominal feature of two values: ``== larger`` covers what ``!= smaller`` does and
    # ``!= larger`` what ``== smaller`` does, with equal sums, later in the canonical order,
    # so they never win and the larger value is not scored (sparse_search._second_of_two)
    last = stop if not (is_nominal and filled == 2) else \
        _next_filled(first, hist_count) + 1
    ops = (OP_EQ, OP_NEQ) if is_nominal else (OP_LEQ, OP_GR)
    run_g[:] = 0
    run_h[:] = 0
    cnt = 0
    prev = -1
    thr = np.float32(0.0)
    best_q = min_quality
    # one candidate site (inlined quality code is compiled once): a nominal feature's bins
    # are its values in ascending order and each is scored alone (``==`` then ``!=``); an
    # ordered feature's boundaries ascend, ``<=`` first. Both orders are canonical, so the
    # first of equal qualities is kept
    for r in range(first, last):
        if hist_count[r] == 0:
            continue
        if is_nominal:
            _set_bin(run_g, run_h, hist, r)
            cnt = hist_count[r]
            thr = bin_min[r]
        elif prev >= 0:
            thr = bin_threshold(bin_min, bin_max, r)
        if is_nominal or prev >= 0:
            best_q = _boundary(best_q, j, ops, thr, cnt, tot_count, covered, min_coverage,
                               run_g, run_h, tot_g, tot_h, labels, head_mode, params,
                               inv_scale, work, gains, out_q, out_op, out_thr, out_cnt,
                               out_label, out_g, out_h)
        if not is_nominal:
            _add_bin(run_g, run_h, hist, r)
            cnt += hist_count[r]
            prev = r


def _scan_py(features, bin_offset, bin_min, bin_max, nominal, hist, hist_count, labels,
             head_mode, params, inv_scale, min_coverage, covered, min_quality, sums, work_f,
             work_i, gains, out_q, out_op, out_thr, out_cnt, out_label, out_g, out_h):
    for j in nb.prange(features.shape[0]):
        _scan_feature(np.int64(j), features[j], bin_offset, bin_min, bin_max, nominal, hist,
                      hist_count, labels, head_mode, params, inv_scale, min_coverage,
                      covered, min_quality, sums[j], _work_row(work_f, work_i, j, labels.shape[0]),
                      gains[j], out_q, out_op, out_thr, out_cnt, out_label, out_g, out_h)


scan = parallel_kernel(_scan_py)


def scan_histograms(features, bin_offset, bin_min, bin_max, nominal, hist, hist_count,
                    labels, head_mode, params, inv_scale, min_coverage, covered, min_quality,
                    out_q, out_op, out_thr, out_cnt, out_label, out_g, out_h, n_threads=1,
                    work=None):
    """Best condition per sampled feature from the histograms of
    ``histograms.build_histograms``.

    Args:
        features: int64 (S,).
        bin_offset: int64 (A + 1,); bin_min, bin_max: float32 (B,); nominal: bool (A,).
        hist: int64 (B, K + W); hist_count: int64 (B,) (``histograms.build_histograms``).
        labels: int32, the head's candidate labels; head_mode: ``HEAD_*``.
        params: float64 (P,), the objective's parameters (``objectives.quality``);
        inv_scale: float; min_coverage: int; min_quality: float.
        covered: int, the rule's covered examples of non-zero weight (``totals[2]`` of a
            search): a candidate must cover fewer (``thresholds.admissible``).
        out_q float64 (S,), out_op int8 (S,), out_thr float32 (S,), out_cnt int64 (S,),
        out_label int32 (S,), out_g, out_h int64 (S, K): slot ``j`` receives feature
            ``features[j]``'s best candidate; ``out_op[j] = -1`` if none beats min_quality.
        n_threads: Numba threads over the features.
        work: (float64 (S, F), int64 (S, I)) head work rows (``multi_output.work_arrays``),
            needed by ``HEAD_MULTI_OUTPUT``; None allocates them for ``labels``.
    """
    if work is None:
        needed = head_mode == HEAD_MULTI_OUTPUT or hist.shape[1] != 2 * out_g.shape[1]
        work = work_arrays(features.shape[0], labels.shape[0]) if needed else (None, None)
    K, W = out_g.shape[1], hist.shape[1] - out_g.shape[1]
    sums = np.empty((features.shape[0], 4, max(K, W)), np.int64)
    gains = np.empty((features.shape[0], 2 * K))  # exact_search._boundary's pairs
    with thread_limit(n_threads):
        scan(features, bin_offset, bin_min, bin_max, nominal, hist, hist_count, labels,
             family_head_mode(head_mode, params), params, inv_scale, min_coverage, covered,
             min_quality, sums, work[0], work[1], gains, out_q, out_op, out_thr, out_cnt,
             out_label, out_g, out_h)


def _search_py(features, bin_index, bin_offset, explicit, bin_min, bin_max, nominal, hist,
               hist_count, covered, state, chunks, gh, removed, hist_at, mask, indicator,
               weights, g, h, tot_g, tot_h, tot_count, labels, head_mode, params, inv_scale,
               min_coverage, min_quality, scratch, *out):
    """The histogram search with the signature of the exact and sparse ``search_*`` kernels,
    so that the fused refinement (``refine.py``) drives all three alike; ``g``, ``h`` and the
    sums of ``scratch`` are unused (the build reads ``gh``, the interleaved copy of ``g``
    and ``h``), its work rows are used; ``tot_*``, the covered examples' sums, fill the
    implicit bins of the features rebuilt from their explicit entries (``explicit``,
    :func:`explicit_entries`), and ``tot_count`` is the rule's covered count that a
    candidate must not reach;
    ``chunks`` int64 (1,): the number of parts of the histogram build (its threads);
    ``removed`` and ``hist_at``: the removal log and where each feature's rows were built
    (``histograms._plan``)."""
    n_covered = covered_list(mask, indicator, covered, state)
    build(features, bin_index, bin_offset, explicit, covered, n_covered, mask, indicator,
          weights, gh, hist, hist_count, chunks[0], removed, state, hist_at,
          (tot_g, tot_h, tot_count))
    scan(features, bin_offset, bin_min, bin_max, nominal, hist, hist_count, labels,
         head_mode, params, inv_scale, min_coverage, tot_count, min_quality, scratch[0],
         scratch[1], scratch[2], scratch[3], *out)


# a driver of the two kernels: its serial form calls their serial forms (``jit.Kernel``)
search = parallel_kernel(_search_py, build=build, scan=scan)


@njit
def apply_step(f, op, threshold, data, mask, indicator):
    """:func:`apply_binned_condition` on ``data = (bin_index, bin_offset, explicit, bin_min,
    bin_max, nominal, hist, hist_count, covered, state, chunks, gh, removed, hist_at)`` over
    its covered list (logging the examples it leaves out); returns the new indicator."""
    _apply_listed(f, op, threshold, data[0], data[1], data[3], mask, indicator, data[8],
                  data[9], data[12])
    return indicator + 1
