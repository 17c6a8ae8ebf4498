"""Numba CUDA kernels of the CUDA backend: threshold scan, statistics, coverage.

The histograms themselves are built by the CUDA C kernels in ``kernels/histogram.cu``. The
math comes from ``device_math`` (compiled once from ``gpurules.objectives``). Every kernel
is a plain Python function compiled lazily by ``cuda.jit``; ``SIGNATURES`` lists the explicit
signatures that ``numba.cuda.compile_ptx`` type-checks in the tests.

Shapes and dtypes (n examples, K labels, A features, B histogram rows, S sampled features,
m head labels):
    features int64 (S,); slot_offset int64 (S + 1,) (slot j's histogram rows: slot_offset[j]
    .. slot_offset[j + 1] - 1, one per bin of features[j]); bin_index int32 (A, n);
    bin_offset int64 (A + 1,); bin_min, bin_max float32 (B,) (B bins of all features);
    nominal bool (A,); hist_g, hist_h int64 (R, K); hist_count int64 (R,) (R =
    slot_offset[S]); labels int32 (m,);
    Y uint8 (n, K); P float64 (n, K); base_weight float64 (n,); g, h int64 (n, K);
    (``covered_totals`` also takes h int64 (n, W), W >= K: packed Hessians; the other
    kernels of non-decomposable statistics are in ``multi_output_kernels``);
    mask int32 (n,); covered int32 (n,), lens int32 (3,) (the compacted list of the covered
    examples, see "coverage" below); weights int32 (n,);
    out_q float64 (S,), out_op int8 (S,), out_thr float32 (S,), out_cnt int64 (S,),
    out_label int32 (S,), out_g, out_h int64 (S, K): as in ``cpu/exact_search.py``.
"""

from numba import cuda, types

from gpurules.backends.cuda import multi_output_kernels
from gpurules.backends.cuda.device_math import (_device, bin_threshold, encode, label_gain,
                                                satisfies, signature_types)
from gpurules.model import OP_EQ, OP_GR, OP_LEQ, OP_NEQ
from gpurules.objectives import heuristics
from gpurules.objectives.heads import HEAD_COMPLETE
from gpurules.objectives.heuristics import HEAD_SECO_PARTIAL, HEAD_SECO_SINGLE

# SeCo heuristics (objectives.heuristics), compiled from their single definitions
seco_value = _device(heuristics.value_from_sums)
seco_prefix_quality = _device(heuristics.prefix_quality)

# planes of the scan's int64 work array (4, S, K)
TOT_G, TOT_H, RUN_G, RUN_H = 0, 1, 2, 3


# -- threshold scan: one block per sampled feature, threads over labels ------------------
@cuda.jit(device=True)
def _feature_totals(j, lo, hi, hist_g, hist_h, hist_count, work):
    """Sums of feature slot ``j``'s histogram rows ``lo..hi-1`` into ``work``; clears the running sums.
    Each thread owns the labels ``k = tid, tid + T, ...``. Returns the total count (int64)."""
    for k in range(cuda.threadIdx.x, hist_g.shape[1], cuda.blockDim.x):
        sg = 0
        sh = 0
        for b in range(lo, hi):
            sg += hist_g[b, k]
            sh += hist_h[b, k]
        work[TOT_G, j, k] = sg
        work[TOT_H, j, k] = sh
        work[RUN_G, j, k] = 0
        work[RUN_H, j, k] = 0
    count = 0
    for b in range(lo, hi):
        count += hist_count[b]
    return count


@cuda.jit(device=True)
def _side_quality(j, complement, labels, head_mode, params, inv_scale, work, gains):
    """Quality of the head over ``labels`` for the running sums (or totals minus them):
    boosting gains (``params = [l1, l2]``) or SeCo heuristic values (``params`` from
    ``heuristics.seco_params``, counts unscaled).

    Per-label values are computed in parallel into ``gains[j]``; every thread then reduces
    them in label order exactly as the CPU does, so all threads hold the same (quality,
    label) — for a SeCo partial head (quality, number of labels)."""
    m = labels.shape[0]
    seco = head_mode == HEAD_SECO_SINGLE or head_mode == HEAD_SECO_PARTIAL
    for idx in range(cuda.threadIdx.x, m, cuda.blockDim.x):
        k = labels[idx]
        gk = work[RUN_G, j, k]
        hk = work[RUN_H, j, k]
        if complement:
            gk = work[TOT_G, j, k] - gk
            hk = work[TOT_H, j, k] - hk
        if seco:
            gains[j, idx] = seco_value(float(gk), float(hk), k, params)
        else:
            gains[j, idx] = label_gain(gk * inv_scale, hk * inv_scale, params[0], params[1])
    cuda.syncthreads()
    if head_mode == HEAD_SECO_PARTIAL:
        q, n = seco_prefix_quality(gains[j], m, params)
        cuda.syncthreads()  # gains[j] is overwritten by the next candidate
        return q, n
    best = 0.0
    best_label = -1
    total = 0.0
    for idx in range(m):
        gain = gains[j, idx]
        if head_mode == HEAD_COMPLETE:
            total += gain
        elif best_label < 0 or gain > best:
            best = gain
            best_label = labels[idx]
    cuda.syncthreads()  # gains[j] is overwritten by the next candidate
    if head_mode == HEAD_COMPLETE:
        return total, -1
    return best, best_label


@cuda.jit(device=True)
def _store(j, complement, q, op, thr, cnt, label, work, out_q, out_op, out_thr, out_cnt,
           out_label, out_g, out_h):
    """Write candidate (q, op, thr, cnt, label) and its sums into slot ``j``."""
    if cuda.threadIdx.x == 0:
        out_q[j] = q
        out_op[j] = op
        out_thr[j] = thr
        out_cnt[j] = cnt
        out_label[j] = label
    for k in range(cuda.threadIdx.x, out_g.shape[1], cuda.blockDim.x):
        gk = work[RUN_G, j, k]
        hk = work[RUN_H, j, k]
        if complement:
            gk = work[TOT_G, j, k] - gk
            hk = work[TOT_H, j, k] - hk
        out_g[j, k] = gk
        out_h[j, k] = hk


@cuda.jit(device=True)
def _add_bin(j, b, hist_g, hist_h, work, reset):
    """Running sums of slot ``j`` += bin ``b`` (after clearing them if ``reset``)."""
    for k in range(cuda.threadIdx.x, hist_g.shape[1], cuda.blockDim.x):
        if reset:
            work[RUN_G, j, k] = 0
            work[RUN_H, j, k] = 0
        work[RUN_G, j, k] += hist_g[b, k]
        work[RUN_H, j, k] += hist_h[b, k]


def _scan_histograms(features, slot_offset, bin_offset, bin_min, bin_max, nominal, hist_g, hist_h,
                     hist_count, labels, head_mode, l1, l2, inv_scale, min_coverage,
                     min_quality, work, gains, out_q, out_op, out_thr, out_cnt, out_label,
                     out_g, out_h):
    """The scan of boosting heads, with their parameters ``l1``, ``l2`` as scalars (see
    :func:`_scan_histograms_params`)."""
    params = cuda.local.array(2, types.float64)
    params[0] = l1
    params[1] = l2
    _scan(features, slot_offset, bin_offset, bin_min, bin_max, nominal, hist_g, hist_h,
          hist_count, labels, head_mode, params, inv_scale, min_coverage, min_quality, work,
          gains, out_q, out_op, out_thr, out_cnt, out_label, out_g, out_h)


def _scan_histograms_params(features, slot_offset, bin_offset, bin_min, bin_max, nominal, hist_g, hist_h,
                            hist_count, labels, head_mode, params, inv_scale, min_coverage,
                            min_quality, work, gains, out_q, out_op, out_thr, out_cnt,
                            out_label, out_g, out_h):
    """The scan for any ``head_mode`` of ``objectives.quality``, its parameters in ``params``
    (float64 (P,), e.g. SeCo's ``heuristics.seco_params``)."""
    _scan(features, slot_offset, bin_offset, bin_min, bin_max, nominal, hist_g, hist_h,
          hist_count, labels, head_mode, params, inv_scale, min_coverage, min_quality, work,
          gains, out_q, out_op, out_thr, out_cnt, out_label, out_g, out_h)


@cuda.jit(device=True)
def _scan(features, slot_offset, bin_offset, bin_min, bin_max, nominal, hist_g, hist_h,
          hist_count, labels, head_mode, params, inv_scale, min_coverage, min_quality, work,
          gains, out_q, out_op, out_thr, out_cnt, out_label, out_g, out_h):
    """Best condition per sampled feature, one block per feature (grid = S blocks).
    Feature ``f = features[j]``'s bin with global index ``b`` (``bin_min[b]``, ``bin_max[b]``,
    ``bin_offset[f] <= b < bin_offset[f + 1]``) has the histogram row
    ``slot_offset[j] + b - bin_offset[f]``.

    Bins with count 0 are skipped. Between consecutive non-empty bins ``a < b`` of a numerical
    feature, ``<=``/``>`` are scored with the CPU histogram search's threshold
    ``bin_threshold(bin_min, bin_max, b)`` (``backends/thresholds.py``: from the nearest bin
    below ``b`` holding any training example, so it never falls inside a bin); every
    non-empty bin of a nominal feature gives ``==``/``!=`` its value. Candidates are visited in
    the CPU's order and a later one must be strictly better, so ties keep the first.

    Scratch: work int64 (4, S, K), gains float64 (S, m). Control flow depends only on
    block-uniform values, so every thread reaches every ``syncthreads``.
    """
    j = cuda.blockIdx.x
    if j >= features.shape[0]:
        return
    f = features[j]
    lo = bin_offset[f]
    hi = bin_offset[f + 1]
    row = slot_offset[j] - lo  # + b: the histogram row of bin b
    is_nominal = nominal[f]
    tot_count = _feature_totals(j, lo + row, hi + row, hist_g, hist_h, hist_count, work)
    if cuda.threadIdx.x == 0:
        out_op[j] = -1
    cuda.syncthreads()
    best_q = min_quality
    cnt = 0
    prev = -1  # the last non-empty bin
    for b in range(lo, hi + 1):
        at_end = b == hi
        if not at_end and hist_count[b + row] == 0:
            continue
        if prev >= 0:
            if is_nominal:
                thr = bin_min[prev]
                first_op, second_op = OP_EQ, OP_NEQ
            elif at_end:
                break  # ``<= max`` covers everything, ``> max`` nothing
            else:
                thr = bin_threshold(bin_min, bin_max, b)
                first_op, second_op = OP_LEQ, OP_GR
            for side in range(2):
                complement = side == 1
                side_cnt = tot_count - cnt if complement else cnt
                if side_cnt < min_coverage or side_cnt == 0:
                    continue
                q, lab = _side_quality(j, complement, labels, head_mode, params, inv_scale,
                                       work, gains)
                if q > best_q:
                    best_q = q
                    op = second_op if complement else first_op
                    _store(j, complement, q, op, thr, side_cnt, lab, work, out_q, out_op,
                           out_thr, out_cnt, out_label, out_g, out_h)
        if at_end:
            break
        _add_bin(j, b + row, hist_g, hist_h, work, is_nominal)
        cnt = hist_count[b + row] if is_nominal else cnt + hist_count[b + row]
        prev = b
        cuda.syncthreads()  # the running sums are read by other threads


# -- statistics --------------------------------------------------------------------------
def _compute_all_statistics(loss, Y, P, base_weight, scale, g, h):
    """g, h of every (example, label) from the scores P; threads over the n*K entries."""
    n, K = Y.shape
    for e in range(cuda.grid(1), n * K, cuda.gridsize(1)):
        i = e // K
        k = e - i * K
        g[i, k], h[i, k] = encode(loss, Y[i, k], P[i, k], base_weight[i], scale)


def _update_statistics(loss, Y, P, base_weight, scale, g, h, covered, lens, slot, labels,
                       scores):
    """Covered examples (``covered[:lens[slot]]``): P[i, labels] += scores (float64 (m,));
    recompute their g, h. Threads over the (covered example, head label) pairs."""
    m = labels.shape[0]
    for e in range(cuda.grid(1), lens[slot] * m, cuda.gridsize(1)):
        c = e // m
        i = covered[c]
        idx = e - c * m
        k = labels[idx]
        P[i, k] += scores[idx]
        g[i, k], h[i, k] = encode(loss, Y[i, k], P[i, k], base_weight[i], scale)


MAX_BLOCK = 1024  # threads per block of covered_totals, at most


@cuda.jit(device=True)
def _block_sum(value, scratch, cols):
    """Sum of ``value`` over the block's rows of threads (thread ``t`` in row ``t // cols``,
    column ``t % cols``): every thread of row 0 gets its column's sum, in row order;
    ``scratch``: int64 shared (MAX_BLOCK,). Every thread of the block must call it."""
    t = cuda.threadIdx.x
    scratch[t] = value
    cuda.syncthreads()
    total = 0
    if t < cols:
        for r in range(t, cuda.blockDim.x, cols):
            total += scratch[r]
    cuda.syncthreads()  # scratch is reused by the next call
    return total


def _covered_totals(covered, lens, slot, weights, g, h, partial, ticket, sums):
    """sums int64 (K + W + 1,) = [g (K) | h (W) | count] summed, with the weights, over the
    covered examples (``covered[:lens[slot]]``) of non-zero weight; ``h`` is (n, W), W >= K
    (the packed Hessians of non-decomposable losses), ``g`` its first K columns.

    A block's threads form rows of ``cols = min(W, blockDim)`` columns; the grid's rows take
    every ``rows``-th example. Each block reduces its threads' sums in shared memory into
    ``partial[block]`` (int64 (blocks, K + W + 1)); the last block to finish (``ticket``
    int32 (1,), 0 before and after) adds the blocks' rows in block order into ``sums``. No
    per-example atomics, nothing to zero before the launch. Block size <= MAX_BLOCK."""
    K = g.shape[1]
    W = h.shape[1]
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    scratch = cuda.shared.array(MAX_BLOCK, types.int64)
    last = cuda.shared.array(1, types.int32)
    cols = min(W, cuda.blockDim.x)
    rows = cuda.blockDim.x // cols
    col = t % cols
    row = t // cols
    active = row < rows
    grid_rows = rows * cuda.gridDim.x
    for k0 in range(0, W, cols):
        k = k0 + col
        sg = 0
        sh = 0
        c = 0
        if active and k < W:
            for e in range(b * rows + row, lens[slot], grid_rows):
                i = covered[e]
                w = weights[i]
                if w != 0:
                    if k < K:
                        sg += w * g[i, k]
                    sh += w * h[i, k]
                    c += 1
        sg = _block_sum(sg, scratch, cols)
        sh = _block_sum(sh, scratch, cols)
        c = _block_sum(c, scratch, cols)
        if t < cols and k < W:
            if k < K:
                partial[b, k] = sg
            partial[b, K + k] = sh
            if k == 0:
                partial[b, K + W] = c
    cuda.threadfence()  # this block's partial row is visible to every block ...
    cuda.syncthreads()  # ... and complete before its ticket is drawn
    if t == 0:
        last[0] = cuda.atomic.add(ticket, 0, 1) == cuda.gridDim.x - 1
    cuda.syncthreads()
    if last[0]:
        for col_ in range(t, K + W + 1, cuda.blockDim.x):
            total = 0
            for blk in range(cuda.gridDim.x):
                total += partial[blk, col_]
            sums[col_] = total
        if t == 0:
            ticket[0] = 0


# -- coverage ----------------------------------------------------------------------------
# The covered examples are kept twice on the device: ``mask`` int32 (n,) (covered iff
# ``mask[i] == indicator``) and a compacted list: ``covered`` int32 holds their indices, in
# no particular order, ``lens[slot]`` (lens int32 (3,)) how many. Refinement step ``s`` of a
# rule reads the list ``s % 2`` of length ``lens[s % 3]`` and writes the list ``(s + 1) % 2``
# of length ``lens[(s + 1) % 3]``; the histograms, totals and statistics iterate over the
# current list only, so their work follows the coverage.
def _reset_coverage(mask, covered, lens):
    """Every example covered at indicator 0: mask 0, covered[i] = i, lens = [n, 0, 0]."""
    n = mask.shape[0]
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        mask[i] = 0
        covered[i] = i
    if cuda.grid(1) == 0:
        lens[0] = n
        lens[1] = 0
        lens[2] = 0


def _apply_binned_condition(f, op, threshold, bin_index, bin_offset, bin_min, mask,
                            indicator, src, dst, lens, step):
    """Of the covered examples ``src[:lens[step % 3]]``, those whose bin of feature ``f``
    satisfies ``op threshold`` (judged by the bin's ``bin_min``; missing never does) get
    ``mask[i] = indicator + 1`` and are appended to ``dst`` (counted in
    ``lens[(step + 1) % 3]``, which must be 0; their order is arbitrary). Sets
    ``lens[(step + 2) % 3] = 0`` for the next step."""
    lo = bin_offset[f]
    out = (step + 1) % 3
    for e in range(cuda.grid(1), lens[step % 3], cuda.gridsize(1)):
        i = src[e]
        b = bin_index[f, i]
        if b >= 0 and satisfies(op, bin_min[lo + b], threshold):
            mask[i] = indicator + 1
            dst[cuda.atomic.add(lens, out, 1)] = i
    if cuda.grid(1) == 0:
        lens[(step + 2) % 3] = 0


scan_histograms = cuda.jit(_scan_histograms)
scan_histograms_params = cuda.jit(_scan_histograms_params)
compute_all_statistics = cuda.jit(_compute_all_statistics)
update_statistics = cuda.jit(_update_statistics)
covered_totals = cuda.jit(_covered_totals)
apply_binned_condition = cuda.jit(_apply_binned_condition)
reset_coverage = cuda.jit(_reset_coverage)


def _signatures():
    i8, i32, i64, f32, f64 = types.int8, types.int32, types.int64, types.float32, types.float64
    vec, mat = signature_types()
    stats = (i64, mat[types.uint8], mat[f64], vec[f64], f64, mat[i64], mat[i64])
    scan_head = (vec[i64], vec[i64], vec[i64], vec[f32], vec[f32], vec[types.boolean],
                 mat[i64], mat[i64], vec[i64], vec[i32], i64)
    scan_tail = (f64, i64, f64, i64[:, :, ::1], mat[f64], vec[f64], vec[i8], vec[f32],
                 vec[i64], vec[i32], mat[i64], mat[i64])
    return {
        "scan_histograms": scan_head + (f64, f64) + scan_tail,
        "scan_histograms_params": scan_head + (vec[f64],) + scan_tail,
        "compute_all_statistics": stats,
        "update_statistics": stats + (vec[i32], vec[i32], i64, vec[i32], vec[f64]),
        "covered_totals": (vec[i32], vec[i32], i64, vec[i32], mat[i64], mat[i64], mat[i64],
                           vec[i32], vec[i64]),
        "apply_binned_condition": (i64, i64, f32, mat[i32], vec[i64], vec[f32], vec[i32], i64,
                                   vec[i32], vec[i32], vec[i32], i64),
        "reset_coverage": (vec[i32], vec[i32], vec[i32]),
    }


# kernel name -> argument types (``void`` return), for ``numba.cuda.compile_ptx``; with
# the kernels of multi_output_kernels (non-decomposable statistics, batched head search)
SIGNATURES = {**_signatures(), **multi_output_kernels.SIGNATURES}
KERNELS = {
    **multi_output_kernels.KERNELS,
    "scan_histograms": scan_histograms,
    "scan_histograms_params": scan_histograms_params,
    "compute_all_statistics": compute_all_statistics,
    "update_statistics": update_statistics,
    "covered_totals": covered_totals,
    "apply_binned_condition": apply_binned_condition,
    "reset_coverage": reset_coverage,
}
