"""Numba CUDA kernels of the CUDA backend: statistics, coverage.

The histograms themselves are built by the CUDA C kernels in ``kernels/histogram.cu``, and
searched by ``histogram_search``; ``SIGNATURES`` and ``KERNELS`` list those of
``histogram_search`` and ``multi_output_kernels`` too. The
math comes from ``device_math`` (compiled once from ``gpurules.objectives``). Every kernel
is a plain Python function compiled lazily by ``cuda.jit``; ``SIGNATURES`` lists the explicit
signatures that ``numba.cuda.compile_ptx`` type-checks in the tests.

Shapes and dtypes (n examples, K labels, A features, B histogram rows, S sampled features,
m head labels):
    features int64 (S,); slot_offset int64 (S + 1,) (slot j's histogram rows: slot_offset[j]
    .. slot_offset[j + 1] - 1, one per bin of features[j]); bin_index int32 (A, n);
    bin_offset int64 (A + 1,); bin_min, bin_max float32 (B,) (B bins of all features);
    nominal bool (A,); labels int32 (m,);
    Y uint8 (n, K); P float64 (n, K); base_weight float64 (n,); g, h int64 (n, K);
    (``covered_totals`` also takes h int64 (n, W), W >= K: packed Hessians; the other
    kernels of non-decomposable statistics are in ``multi_output_kernels``);
    mask int32 (n,); covered int32 (n,), lens int32 (3,) (the compacted list of the covered
    examples, see "coverage" below); weights int32 (n,).
"""

from numba import cuda, types

from gpurules.backends.cuda import histogram_search, multi_output_kernels
from gpurules.backends.cuda.device_math import encode, satisfies, signature_types

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


compute_all_statistics = cuda.jit(_compute_all_statistics)
update_statistics = cuda.jit(_update_statistics)
covered_totals = cuda.jit(_covered_totals)
apply_binned_condition = cuda.jit(_apply_binned_condition)
reset_coverage = cuda.jit(_reset_coverage)


def _signatures():
    i32, i64, f32, f64 = types.int32, types.int64, types.float32, types.float64
    vec, mat = signature_types()
    stats = (i64, mat[types.uint8], mat[f64], vec[f64], f64, mat[i64], mat[i64])
    return {
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
SIGNATURES = {**_signatures(), **multi_output_kernels.SIGNATURES,
              **histogram_search.SIGNATURES}
KERNELS = {
    **multi_output_kernels.KERNELS,
    **histogram_search.KERNELS,
    "compute_all_statistics": compute_all_statistics,
    "update_statistics": update_statistics,
    "covered_totals": covered_totals,
    "apply_binned_condition": apply_binned_condition,
    "reset_coverage": reset_coverage,
}
