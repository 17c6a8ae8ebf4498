"""Numba CUDA kernels of the coverage (the twin of ``cpu/coverage.py``).

The covered examples are kept twice on the device: ``mask`` int32 (n,) (covered iff
``mask[i] == indicator``) and a compacted list: ``covered`` int32 holds their indices, in no
particular order, and a ring of ``RING`` length slots, ``lens`` int32 (RING,), how many.
Refinement step ``s`` of a rule reads the list ``s % 2`` of length ``lens[s % RING]`` and
writes the list ``(s + 1) % 2`` of length ``lens[(s + 1) % RING]``; the histograms, totals and
statistics iterate over the current list only, so their work follows the coverage.

The ring's invariant: between kernels, only the current slot and the one before it may be
non-zero. A step's apply appends to the next slot (zero) and clears the slot before the
current one (nobody reads it any more). So the slots ahead of the current one read zero: the
steps of a device-resident block (``refine.py``) that follow the rule's last refinement see
an empty list and do no work, for up to ``RING - 2`` steps.

Shapes: bin_index int32 (A, n); bin_offset int64 (A + 1,); bin_min float32 (B,) (see
``BinnedFeatures``); mask, covered, src, dst int32 (n,); lens int32 (RING,).
"""

from numba import cuda, types

from gpurules.backends.cuda.device_math import kernel, satisfies, signature_types


def _reset_coverage(mask, covered, lens):
    """Every example covered at indicator 0: mask 0, covered[i] = i, lens = [n, 0, ...]."""
    n = mask.shape[0]
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        mask[i] = 0
        covered[i] = i
    for s in range(cuda.grid(1), lens.shape[0], cuda.gridsize(1)):
        lens[s] = n if s == 0 else 0


RING = 16  # length slots of the compacted list (module docstring)


@cuda.jit(device=True)
def _append_satisfying(f, op, threshold, bin_index, bin_offset, bin_min, mask, indicator,
                       src, dst, lens, step):
    """Of the covered examples ``src[:lens[step % RING]]``, those whose bin of feature ``f``
    satisfies ``op threshold`` (judged by the bin's ``bin_min``; missing never does) get
    ``mask[i] = indicator + 1`` and are appended to ``dst`` (counted in
    ``lens[(step + 1) % RING]``, which must be 0; their order is arbitrary). Clears the slot
    before ``step``'s. Every thread of the block must call it.

    A block appends its satisfying examples of each pass together: their places within the
    block from a shared-memory counter, the block's place in ``dst`` from one global atomic
    on ``lens``. (One global atomic per example, all on the same address, took 47 us a
    step at n = 1e5 on the H200 of 2026-11-30.)"""
    ring = lens.shape[0]
    lo = bin_offset[f]
    out = (step + 1) % ring
    t = cuda.threadIdx.x
    place = cuda.shared.array(2, types.int32)  # the pass's count, then its place in dst
    n_in = lens[step % ring]
    for first in range(cuda.blockIdx.x * cuda.blockDim.x, n_in, cuda.gridsize(1)):
        if t == 0:
            place[0] = 0
        cuda.syncthreads()
        e = first + t
        mine = -1
        i = 0
        if e < n_in:
            i = src[e]
            b = bin_index[f, i]
            if b >= 0 and satisfies(op, bin_min[lo + b], threshold):
                mask[i] = indicator + 1
                mine = cuda.atomic.add(place, 0, 1)
        cuda.syncthreads()
        if t == 0 and place[0] > 0:
            place[1] = cuda.atomic.add(lens, out, place[0])
        cuda.syncthreads()
        if mine >= 0:
            dst[place[1] + mine] = i
    if cuda.grid(1) == 0:
        lens[(step + ring - 1) % ring] = 0


def _apply_binned_condition(f, op, threshold, bin_index, bin_offset, bin_min, mask,
                            indicator, src, dst, lens, step):
    """Refinement step ``step``: restrict the coverage to the condition (f, op, threshold)
    (:func:`_append_satisfying`)."""
    _append_satisfying(f, op, threshold, bin_index, bin_offset, bin_min, mask, indicator,
                       src, dst, lens, step)


def _apply_selected(res_f, res_op, res_thr, r, state, bin_index, bin_offset, bin_min, mask,
                    lists, lens, cursor):
    """Step ``r`` of a device-resident block (``refine.py``) at the refinement step
    ``cursor[0]`` of the rule and the indicator ``cursor[1]`` (int64 (2,)): restrict the
    coverage to the condition the block recorded at ``r`` (``res_f`` int64, ``res_op``
    int8, ``res_thr`` float32 (R,)), if step ``r`` recorded one (``state[0] == r + 1``),
    from the list ``lists[step % 2]`` to ``lists[(step + 1) % 2]`` (``lists`` int32 (2,
    n)); else do nothing."""
    if state[0] != r + 1:
        return
    step = cursor[0]
    _append_satisfying(res_f[r], res_op[r], res_thr[r], bin_index, bin_offset, bin_min,
                       mask, cursor[1], lists[step % 2], lists[(step + 1) % 2], lens, step)


@cuda.jit(device=True)
def _satisfies_body(r, i, cond_feature, cond_op, cond_threshold, rule_cond_start, bin_index,
                    bin_offset, bin_min):
    """Whether example ``i`` satisfies every condition of rule ``r`` (each judged by the
    example's bin's ``bin_min``, as :func:`_append_satisfying` judges it)."""
    for c in range(rule_cond_start[r], rule_cond_start[r + 1]):
        f = cond_feature[c]
        b = bin_index[f, i]
        if b < 0 or not satisfies(cond_op[c], bin_min[bin_offset[f] + b], cond_threshold[c]):
            return False
    return True


def _count_covered(cond_feature, cond_op, cond_threshold, rule_cond_start, bin_index,
                   bin_offset, bin_min, counts):
    """``counts[r]`` (int64 (R,), 0 before) += how many of the examples satisfy the body of
    rule ``r`` of a model learned on these bins (``cond_*`` and ``rule_cond_start`` as in
    ``model.RuleModel``): a thread per example (grid-stride), a block's count of each rule
    gathered in shared memory and added once."""
    n = bin_index.shape[1]
    t = cuda.threadIdx.x
    block = cuda.shared.array(1, types.int32)
    for first in range(cuda.blockIdx.x * cuda.blockDim.x, n, cuda.gridsize(1)):
        i = first + t
        for r in range(rule_cond_start.shape[0] - 1):
            if t == 0:
                block[0] = 0
            cuda.syncthreads()
            if i < n and _satisfies_body(r, i, cond_feature, cond_op, cond_threshold,
                                         rule_cond_start, bin_index, bin_offset, bin_min):
                cuda.atomic.add(block, 0, 1)
            cuda.syncthreads()
            if t == 0 and block[0] > 0:
                cuda.atomic.add(counts, r, block[0])


reset_coverage = kernel(_reset_coverage)
apply_binned_condition = kernel(_apply_binned_condition)
apply_selected = kernel(_apply_selected)
count_covered = kernel(_count_covered)


def _signatures():
    i8, i32, i64, f32 = types.int8, types.int32, types.int64, types.float32
    vec, mat = signature_types()
    tail = (mat[i32], vec[i64], vec[f32], vec[i32], i64, vec[i32], vec[i32], vec[i32], i64)
    return {
        "apply_binned_condition": (i64, i64, f32) + tail,
        "apply_selected": (vec[i64], vec[i8], vec[f32], i64, vec[i32]) + tail[:4]
        + (mat[i32], vec[i32], vec[i64]),
        "reset_coverage": (vec[i32], vec[i32], vec[i32]),
        "count_covered": (vec[i32], vec[i8], vec[f32], vec[i64], mat[i32], vec[i64],
                          vec[f32], vec[i64]),
    }


SIGNATURES = _signatures()
KERNELS = {
    "apply_binned_condition": apply_binned_condition,
    "apply_selected": apply_selected,
    "reset_coverage": reset_coverage,
    "count_covered": count_covered,
}
