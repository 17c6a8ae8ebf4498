"""Numba CUDA kernels of the coverage (the twin of ``cpu/coverage.py``).

The covered examples are kept twice on the device: ``mask`` int32 (n,) (covered iff
``mask[i] == indicator``) and a compacted list: ``covered`` int32 holds their indices, in no
particular order, ``lens[slot]`` (lens int32 (3,)) how many. Refinement step ``s`` of a rule
reads the list ``s % 2`` of length ``lens[s % 3]`` and writes the list ``(s + 1) % 2`` of
length ``lens[(s + 1) % 3]``; the histograms, totals and statistics iterate over the current
list only, so their work follows the coverage.

Shapes: bin_index int32 (A, n); bin_offset int64 (A + 1,); bin_min float32 (B,) (see
``BinnedFeatures``); mask, covered, src, dst int32 (n,); lens int32 (3,).
"""

from numba import cuda, types

from gpurules.backends.cuda.device_math import satisfies, signature_types


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


reset_coverage = cuda.jit(_reset_coverage)
apply_binned_condition = cuda.jit(_apply_binned_condition)


def _signatures():
    i32, i64, f32 = types.int32, types.int64, types.float32
    vec, mat = signature_types()
    return {
        "apply_binned_condition": (i64, i64, f32, mat[i32], vec[i64], vec[f32], vec[i32], i64,
                                   vec[i32], vec[i32], vec[i32], i64),
        "reset_coverage": (vec[i32], vec[i32], vec[i32]),
    }


SIGNATURES = _signatures()
KERNELS = {
    "apply_binned_condition": apply_binned_condition,
    "reset_coverage": reset_coverage,
}
