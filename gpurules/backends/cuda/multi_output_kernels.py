"""Numba CUDA kernels for non-decomposable statistics and multi-output heads.

Statistics: per example the K gradients and the packed Hessian (W = K (K + 1) / 2 values)
of a non-decomposable loss, re-encoded whole whenever one of the example's scores changes
(``objectives.non_decomposable.encode``, as ``cpu/statistics.py`` does).

Heads solved as systems (``HEAD_MULTI_OUTPUT``, ``HEAD_ND_SINGLE``): :func:`side_quality`,
which ``histogram_search`` calls per candidate with the candidate's head work rows
(``multi_output.work_views``).

Shapes: Y uint8 (n, K); P float64 (n, K); base_weight float64 (n,); g int64 (n, K), h
int64 (n, W); covered int32 (n,), lens int32 (3,) (``kernels``' compacted list); labels
int32 (m,); scores float64 (m,).
"""

from numba import cuda, types

from gpurules.backends.cuda.device_math import _device, signature_types
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
    and ``partial_quality`` allocates), so the search calls the two heads directly."""
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


encode_covered = cuda.jit(_encode_covered)


def _signatures():
    i32, i64, f64 = types.int32, types.int64, types.float64
    vec, mat = signature_types()
    return {
        "encode_covered": (i64, mat[types.uint8], mat[f64], vec[f64], f64, mat[i64], mat[i64],
                           vec[i32], vec[i32], i64, vec[i32], vec[f64], mat[f64], mat[f64],
                           vec[f64]),
    }


SIGNATURES = _signatures()
KERNELS = {
    "encode_covered": encode_covered,
}
