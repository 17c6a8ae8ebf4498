"""Numba CUDA kernels of the statistics: compute, update, aggregate (the twin of
``cpu/statistics.py``).

Per example ``i`` and label ``k``: the score ``P[i, k]`` (float64) and the fixed-point
gradient ``g[i, k]`` and Hessian ``h[i, k]`` (int64), encoded by ``device_math.encode`` from
the CPU's math. Non-decomposable losses keep per example all ``K`` gradients and the packed
Hessian (``h`` int64 (n, W), ``W = K (K + 1) / 2``), re-encoded whole whenever one of the
example's scores changes (``objectives.non_decomposable.encode``): :func:`encode_covered`.

Shapes: Y uint8 (n, K) (regression targets: float64 (n, K)); P float64 (n, K); base_weight float64 (n,); g int64 (n, K), h int64
(n, K) or (n, W); covered int32 (n,), lens int32 (3,), slot: the compacted list of the
covered examples (``coverage``); weights int32 (n,); labels int32 (m,); scores float64 (m,).
"""

from numba import cuda, types

from gpurules.backends.cuda.device_math import (encode, encode_example, kernel,
                                                largest_statistic, signature_types)


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


def _encode_covered(loss, Y, P, base_weight, scale, g, h, covered, lens, slot, labels, scores,
                    g_tmp, h_tmp, largest):
    """Covered examples (``covered[:lens[slot]]``): ``P[i, labels] += scores`` (float64
    (m,); m = 0 re-encodes without changing scores), then all K gradients and W Hessian
    entries of the example are re-encoded.

    Thread ``t < T = g_tmp.shape[1]`` handles the list entries ``t, t + T, ...`` with the
    scratch columns ``g_tmp[:, t]`` (g_tmp float64 (K, T)) and ``h_tmp[:, t]`` (float64 (W,
    T)): thread-minor, so a warp's threads writing the same value touch adjacent addresses
    (as ``histogram_search``'s scratch); it writes the largest |statistic| per unit weight it
    computed to ``largest[t]`` (0 if none)."""
    T = g_tmp.shape[1]
    for t in range(cuda.grid(1), T, cuda.gridsize(1)):
        big = 0.0
        for e in range(t, lens[slot], T):
            i = covered[e]
            for idx in range(labels.shape[0]):
                P[i, labels[idx]] += scores[idx]
            encode_example(loss, Y[i], P[i], base_weight[i], scale, g_tmp[:, t], h_tmp[:, t],
                           g[i], h[i])
            big = max(big, largest_statistic(loss, g_tmp[:, t], h_tmp[:, t]))
        largest[t] = big


compute_all_statistics = kernel(_compute_all_statistics)
update_statistics = kernel(_update_statistics)
encode_covered = kernel(_encode_covered)
covered_totals = kernel(_covered_totals)


def _signatures(targets=types.uint8):
    """{kernel name: argument types} with ``Y`` of dtype ``targets``."""
    i32, i64, f64 = types.int32, types.int64, types.float64
    vec, mat = signature_types()
    stats = (i64, mat[targets], mat[f64], vec[f64], f64, mat[i64], mat[i64])
    return {
        "compute_all_statistics": stats,
        "update_statistics": stats + (vec[i32], vec[i32], i64, vec[i32], vec[f64]),
        "encode_covered": stats + (vec[i32], vec[i32], i64, vec[i32], vec[f64], mat[f64],
                                   mat[f64], vec[f64]),
        "covered_totals": (vec[i32], vec[i32], i64, vec[i32], mat[i64], mat[i64], mat[i64],
                           vec[i32], vec[i64]),
    }


SIGNATURES = _signatures()
# the kernels that read ``Y`` with BoomerRegressor's float64 targets
# (``objectives.losses.target_matrix``), type-checked by the compile gate as well
REGRESSION_SIGNATURES = {name: sig for name, sig in _signatures(types.float64).items()
                         if name != "covered_totals"}
KERNELS = {
    "compute_all_statistics": compute_all_statistics,
    "update_statistics": update_statistics,
    "encode_covered": encode_covered,
    "covered_totals": covered_totals,
}
