"""Numba CUDA kernels for non-decomposable statistics and multi-output heads.

Statistics: per example the K gradients and the packed Hessian (W = K (K + 1) / 2 values)
of a non-decomposable loss, re-encoded whole whenever one of the example's scores changes
(``objectives.non_decomposable.encode``, as ``cpu/statistics.py`` does).

Search (heads that ``objectives.quality.side_quality`` scores with ``HEAD_MULTI_OUTPUT`` or
``HEAD_ND_SINGLE``; the histograms come from ``kernels/histogram.cu``): every candidate of
every sampled feature is scored in one batched step, in three launches:

1. :func:`_bin_prefix_sums`, one block per sampled feature: ``pre_*[j, b]`` = the sums of
   bins ``0 .. b - 1`` of slot ``j``'s feature (threads over the K + W + 1 columns), and
   ``pre_*[j, num_bins]`` its totals. Integer sums: exact, as on the CPU.
2. :func:`_evaluate_candidates`, one thread per candidate ``c = (j * B + b) * 2 + side``
   (B = the largest bin count of the sampled features): ``side_quality`` of the ``<=``/``==``
   side (``side = 0``) or of its complement (``side = 1``) at bin ``b``, with the thread's
   own head work row (``multi_output.work_views``) in global memory; ``-inf`` where there
   is no candidate (empty bin, no non-empty bin below a numerical one, too few examples).
3. :func:`_select_candidates`, one block per sampled feature: the CPU histogram search's
   choice among the slot's candidates (numerical: the first best in scan order, bins
   ascending, ``<=`` before ``>``; nominal: larger quality, then smaller threshold, then
   ``==`` before ``!=``), its threshold and sums into the ``out_*`` slot.

Shapes: features int64 (S,); slot_offset int64 (S + 1,): slot ``j``'s histogram rows are
``slot_offset[j] .. slot_offset[j + 1] - 1``, one per bin of ``features[j]``; bin_offset
int64 (A + 1,) (the bins' bounds ``bin_min``/``bin_max``); hist_g int64 (R, K), hist_h int64
(R, W), hist_count int64 (R,) (R = slot_offset[S] histogram rows); pre_g int64 (S, B + 1, K), pre_h int64 (S, B + 1, W), pre_cnt
int64 (S, B + 1); cand_q float64 (S * B * 2,), cand_label int32 (S * B * 2,); work_f
float64 (T, F), work_i int64 (T, I) (``multi_output.work_sizes(m)``, one row per
candidate of a launch); out_* as in ``cpu/exact_search.py`` with out_h (S, W).
"""

import math

from numba import cuda, types

from gpurules.backends.cuda.device_math import _device, bin_threshold, signature_types
from gpurules.model import OP_EQ, OP_GR, OP_LEQ, OP_NEQ
from gpurules.objectives import complete_head, multi_output, non_decomposable
from gpurules.objectives.multi_output import HEAD_ND_SINGLE

encode_example = _device(non_decomposable.encode)
largest_statistic = _device(non_decomposable.largest_statistic)
multi_output_side = _device(multi_output.multi_output_side)
single_head_sums = _device(complete_head.single_head_sums)
work_views = _device(multi_output.work_views)


@cuda.jit(device=True)
def side_quality(run_g, run_h, tot_g, tot_h, complement, labels, head_mode, inv_scale, params,
                 views):
    """``objectives.quality.side_quality`` for ``HEAD_MULTI_OUTPUT`` and ``HEAD_ND_SINGLE``:
    the same two calls. ``side_quality`` itself does not compile for CUDA (numba-cuda 0.30
    rejects its SeCo branches: ``heuristics.single_quality`` fails in its IR post-processing
    and ``partial_quality`` allocates), so this search calls the two heads directly."""
    if head_mode == HEAD_ND_SINGLE:
        return single_head_sums(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale,
                                params[0], params[1])
    return multi_output_side(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale,
                             params, views)[0], -1


# -- statistics --------------------------------------------------------------------------
def _encode_covered(loss, Y, P, base_weight, scale, g, h, covered, lens, slot, labels, scores,
                    g_tmp, h_tmp, largest):
    """Covered examples (``covered[:lens[slot]]``): ``P[i, labels] += scores`` (float64
    (m,); m = 0 re-encodes without changing scores), then all K gradients and W Hessian
    entries of the example are re-encoded.

    Thread ``t < T = g_tmp.shape[0]`` handles the list entries ``t, t + T, ...`` with the scratch
    rows ``g_tmp[t]`` (float64 (K,)) and ``h_tmp[t]`` (float64 (W,)), and writes the largest
    |statistic| per unit weight it computed to ``largest[t]`` (0 if none)."""
    T = g_tmp.shape[0]
    for t in range(cuda.grid(1), T, cuda.gridsize(1)):
        big = 0.0
        for e in range(t, lens[slot], T):
            i = covered[e]
            for idx in range(labels.shape[0]):
                P[i, labels[idx]] += scores[idx]
            encode_example(loss, Y[i], P[i], base_weight[i], scale, g_tmp[t], h_tmp[t], g[i],
                           h[i])
            big = max(big, largest_statistic(loss, g_tmp[t], h_tmp[t]))
        largest[t] = big


# -- batched search ----------------------------------------------------------------------
def _bin_prefix_sums(features, slot_offset, hist_g, hist_h, hist_count, pre_g, pre_h,
                     pre_cnt):
    """Exclusive prefix sums over the bins of each sampled feature (grid = S blocks)."""
    j = cuda.blockIdx.x
    if j >= features.shape[0]:
        return
    lo = slot_offset[j]
    nb = slot_offset[j + 1] - lo
    K = hist_g.shape[1]
    W = hist_h.shape[1]
    for col in range(cuda.threadIdx.x, K + W + 1, cuda.blockDim.x):
        run = 0
        for b in range(nb + 1):
            if col < K:
                pre_g[j, b, col] = run
                if b < nb:
                    run += hist_g[lo + b, col]
            elif col < K + W:
                pre_h[j, b, col - K] = run
                if b < nb:
                    run += hist_h[lo + b, col - K]
            else:
                pre_cnt[j, b] = run
                if b < nb:
                    run += hist_count[lo + b]


@cuda.jit(device=True)
def _candidate(c, features, slot_offset, nominal, hist_count, pre_cnt):
    """Candidate ``c``'s (slot j, bin b within the feature, side, covered count, histogram
    row lo + b, bin count nb); count 0 where there is no candidate."""
    B2 = 2 * (pre_cnt.shape[1] - 1)
    j = c // B2
    rest = c - j * B2
    b = rest // 2
    side = rest - 2 * b
    f = features[j]
    lo = slot_offset[j]
    nb = slot_offset[j + 1] - lo
    if b >= nb or hist_count[lo + b] == 0:
        return j, b, side, 0, lo + b, nb
    below = hist_count[lo + b] if nominal[f] else pre_cnt[j, b]
    if below == 0:  # a numerical bin without a non-empty bin below it: no boundary
        return j, b, side, 0, lo + b, nb
    count = pre_cnt[j, nb] - below if side == 1 else below
    return j, b, side, count, lo + b, nb


@cuda.jit(device=True)
def _score(c, row_f, row_i, features, slot_offset, nominal, hist_g, hist_h, hist_count, pre_g,
           pre_h, pre_cnt, labels, head_mode, params, inv_scale, min_coverage):
    """(quality, label) of candidate ``c`` with the head work rows ``row_f``, ``row_i``;
    (-inf, -1) where there is no candidate."""
    j, b, side, count, row, nb = _candidate(c, features, slot_offset, nominal, hist_count,
                                            pre_cnt)
    if count == 0 or count < min_coverage:
        return -math.inf, -1
    views = work_views(row_f, row_i, labels.shape[0])
    if nominal[features[j]]:
        run_g, run_h = hist_g[row], hist_h[row]
    else:
        run_g, run_h = pre_g[j, b], pre_h[j, b]
    return side_quality(run_g, run_h, pre_g[j, nb], pre_h[j, nb], side == 1, labels,
                        head_mode, inv_scale, params, views)


def _evaluate_candidates(start, features, slot_offset, nominal, hist_g, hist_h, hist_count,
                         pre_g, pre_h, pre_cnt, labels, head_mode, params, inv_scale,
                         min_coverage, work_f, work_i, cand_q, cand_label):
    """Quality of the candidates ``start .. start + T - 1`` (T = work_f.shape[0]), one per
    thread, the thread's head work in row ``c - start``."""
    for t in range(cuda.grid(1), work_f.shape[0], cuda.gridsize(1)):
        c = start + t
        if c < cand_q.shape[0]:
            cand_q[c], cand_label[c] = _score(
                c, work_f[t], work_i[t], features, slot_offset, nominal, hist_g, hist_h,
                hist_count, pre_g, pre_h, pre_cnt, labels, head_mode, params, inv_scale,
                min_coverage)


def _select_candidates(features, slot_offset, bin_offset, bin_min, bin_max, nominal, hist_g,
                       hist_h, hist_count, pre_g, pre_h, pre_cnt, cand_q, cand_label,
                       min_quality, out_q, out_op, out_thr, out_cnt, out_label, out_g, out_h):
    """Slot ``j``'s refinement from its scored candidates (grid = S blocks); ``out_op[j] = -1``
    when none beats ``min_quality``. Histogram rows from ``slot_offset``, bin bounds from
    ``bin_offset``."""
    j = cuda.blockIdx.x
    if j >= features.shape[0]:
        return
    f = features[j]
    lo = slot_offset[j]
    nb = slot_offset[j + 1] - lo
    blo = bin_offset[f]
    is_nominal = nominal[f]
    B2 = 2 * (pre_cnt.shape[1] - 1)
    chosen = cuda.shared.array(1, types.int64)
    if cuda.threadIdx.x == 0:
        best = -1
        best_q = min_quality
        best_thr = bin_min[blo]
        best_op = OP_EQ
        for idx in range(2 * nb):
            q = cand_q[j * B2 + idx]
            op = OP_EQ if idx % 2 == 0 else OP_NEQ
            thr = bin_min[blo + idx // 2]
            if is_nominal and best >= 0:  # cpu exact_search._evaluate's order
                better = q > best_q or (q == best_q and (
                    thr < best_thr or (thr == best_thr and op < best_op)))
            else:  # the first best in scan order (cpu exact_search._consider)
                better = q > best_q
            if better:
                best, best_q, best_thr, best_op = idx, q, thr, op
        chosen[0] = best
        out_op[j] = -1
        if best >= 0:
            b = best // 2
            side = best - 2 * b
            r = lo + b
            below = hist_count[r] if is_nominal else pre_cnt[j, b]
            out_q[j] = best_q
            out_cnt[j] = pre_cnt[j, nb] - below if side == 1 else below
            out_label[j] = cand_label[j * B2 + best]
            if is_nominal:
                out_op[j] = OP_NEQ if side == 1 else OP_EQ
                out_thr[j] = bin_min[blo + b]
            else:
                out_op[j] = OP_GR if side == 1 else OP_LEQ
                out_thr[j] = bin_threshold(bin_min, bin_max, blo + b)
    cuda.syncthreads()
    best = chosen[0]
    if best < 0:
        return
    b = best // 2
    complement = best - 2 * b == 1
    for k in range(cuda.threadIdx.x, out_h.shape[1], cuda.blockDim.x):
        if is_nominal:
            run_h = hist_h[lo + b, k]
        else:
            run_h = pre_h[j, b, k]
        out_h[j, k] = pre_h[j, nb, k] - run_h if complement else run_h
        if k < out_g.shape[1]:
            run_g = hist_g[lo + b, k] if is_nominal else pre_g[j, b, k]
            out_g[j, k] = pre_g[j, nb, k] - run_g if complement else run_g


encode_covered = cuda.jit(_encode_covered)
bin_prefix_sums = cuda.jit(_bin_prefix_sums)
evaluate_candidates = cuda.jit(_evaluate_candidates)
select_candidates = cuda.jit(_select_candidates)


def _signatures():
    i8, i32, i64, f32, f64 = types.int8, types.int32, types.int64, types.float32, types.float64
    vec, mat = signature_types()
    cube = i64[:, :, ::1]
    hists = (mat[i64], mat[i64], vec[i64])
    prefix = (cube, cube, mat[i64])
    return {
        "encode_covered": (i64, mat[types.uint8], mat[f64], vec[f64], f64, mat[i64], mat[i64],
                           vec[i32], vec[i32], i64, vec[i32], vec[f64], mat[f64], mat[f64],
                           vec[f64]),
        "bin_prefix_sums": (vec[i64], vec[i64]) + hists + prefix,
        "evaluate_candidates": (i64, vec[i64], vec[i64], vec[types.boolean]) + hists + prefix
        + (vec[i32], i64, vec[f64], f64, i64, mat[f64], mat[i64], vec[f64], vec[i32]),
        "select_candidates": (vec[i64], vec[i64], vec[i64], vec[f32], vec[f32],
                              vec[types.boolean])
        + hists + prefix + (vec[f64], vec[i32], f64, vec[f64], vec[i8], vec[f32], vec[i64],
                            vec[i32], mat[i64], mat[i64]),
    }


SIGNATURES = _signatures()
KERNELS = {
    "encode_covered": encode_covered,
    "bin_prefix_sums": bin_prefix_sums,
    "evaluate_candidates": evaluate_candidates,
    "select_candidates": select_candidates,
}
