"""Multi-output boosting heads from a search's fixed-point sums: complete and partial heads,
with or without gradient-based label binning (GBLB), over decomposable or non-decomposable
statistics. ``quality.side_quality`` scores candidates with it (``HEAD_MULTI_OUTPUT``) and
the learner computes the chosen rule's head with the same function, so both agree.

The steps (all in ``complete_head`` / ``label_binning``): gather the side's float64
statistics of ``labels`` (:func:`gather`); for partial heads select outputs by their
criterion (``output_criteria`` + ``select_fixed`` / ``select_dynamic``) and ``compact`` the
sub-system; then the head of the (sub-)system: ``binned_head`` (GBLB), ``complete_head``
(packed Hessian) or ``output_wise_head`` (decomposable, one score per output).

``params`` float64 (11,) (:func:`multi_output_params`):
``[l1, l2, packed, selection, s0, s1, s2, binning, bin_ratio, min_bins, max_bins]`` with
``selection`` 0 (all outputs), 1 (partial-fixed: ``s = [output_ratio, min_outputs,
max_outputs]``, ratio already resolved) or 2 (partial-dynamic: ``s = [threshold, exponent,
root]``, ``root = complete_head.dynamic_root(threshold, exponent)``), ``binning`` 0 (none)
or 1 (equal-width).

Scratch: ``wf`` float64 and ``wi`` int64 rows of :func:`work_arrays` (one row per thread or
search slot), cut into the arrays of :func:`work_views`; nothing here allocates.
"""

import numpy as np
from numba.extending import register_jitable

from gpurules.objectives.complete_head import (
    bounded_fraction, compact, complete_head, dynamic_root, gather_side, output_criteria,
    output_wise_head, select_dynamic, select_fixed)
from gpurules.objectives.label_binning import binned_head

HEAD_MULTI_OUTPUT = 4
HEAD_ND_SINGLE = 5

SELECT_ALL = 0
SELECT_FIXED = 1
SELECT_DYNAMIC = 2


def multi_output_params(l1, l2, packed, selection=SELECT_ALL, options=(0.0, 0.0, 0.0),
                        binning=None):
    """``params`` of ``HEAD_MULTI_OUTPUT`` (see the module).

    Args:
        l1, l2: regularisation weights; packed: bool, non-decomposable statistics.
        selection: ``SELECT_*``; options: its three parameters (partial-dynamic: threshold,
            exponent and any third value, replaced by their ``dynamic_root``).
        binning: None or (bin_ratio, min_bins, max_bins) of equal-width GBLB.
    """
    b = (0.0, 0.0, 0.0, 0.0) if binning is None else (1.0, *binning)
    if selection == SELECT_DYNAMIC:
        options = (options[0], options[1], dynamic_root(options[0], options[1]))
    return np.array([l1, l2, float(bool(packed)), float(selection), *options, *b],
                    dtype=np.float64)


@register_jitable
def work_sizes(m):
    """(float64 values, int64 values) of one work row for heads over up to m outputs."""
    m = max(int(m), 1)
    p = m * (m + 1) // 2
    return m * m + 3 * p + 8 * m, 4 * m


def work_arrays(rows, m):
    """Host-allocated work: float64 (rows, F) and int64 (rows, I) (see :func:`work_sizes`)."""
    f, i = work_sizes(m)
    return np.zeros((rows, f), np.float64), np.zeros((rows, i), np.int64)


@register_jitable
def work_views(wf, wi, m):
    """The scratch arrays of one work row (``wf`` float64, ``wi`` int64) for heads over m
    outputs: the ``views`` of :func:`multi_output_side`. Made once per search slot (views
    made per candidate cost more than a small head)."""
    p = m * (m + 1) // 2
    g, h = wf[0:m], wf[m:m + p]
    o = m + p
    g_sub, h_sub = wf[o:o + m], wf[o + m:o + m + p]
    o += m + p
    h_bin = wf[o:o + p]
    o += p
    crit, counts, g_bin, p_bin, scores = (wf[o:o + m], wf[o + m:o + 2 * m],
                                          wf[o + 2 * m:o + 3 * m], wf[o + 3 * m:o + 4 * m],
                                          wf[o + 4 * m:o + 5 * m])
    o += 5 * m
    a = wf[o:o + m * m]
    ipiv, sel, bin_of, remap = wi[0:m], wi[m:2 * m], wi[2 * m:3 * m], wi[3 * m:4 * m]
    return (g, h, g_sub, h_sub, h_bin, crit, counts, g_bin, p_bin, scores, a, ipiv, sel,
            bin_of, remap)


@register_jitable
def _gather_diagonal(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, g_out, h_out):
    """Decomposable statistics of ``labels`` for one side: g_out, h_out (m,)."""
    for a in range(labels.shape[0]):
        k = labels[a]
        if complement:
            g_out[a] = (tot_g[k] - run_g[k]) * inv_scale
            h_out[a] = (tot_h[k] - run_h[k]) * inv_scale
        else:
            g_out[a] = run_g[k] * inv_scale
            h_out[a] = run_h[k] * inv_scale


@register_jitable
def multi_output_side(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, params,
                      views):
    """The head over ``labels`` (int32 (m,)) of one side of a boundary (see the module).

    Returns (gain float64, count int): the head predicts for the outputs
    ``labels[sel[a]]`` with score ``scores[a]``, ``a < count`` (``sel`` and ``scores`` are
    views of the work row, see :func:`head_from_work`). ``views``: :func:`work_views` for
    at least m outputs.
    """
    m = labels.shape[0]
    g, h, g_sub, h_sub, h_bin, crit, counts, g_bin, p_bin, scores, a, ipiv, sel, bin_of, \
        remap = views
    l1, l2 = params[0], params[1]
    packed = params[2] != 0.0
    selection = int(params[3])
    if packed:
        gather_side(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, g, h)
    else:
        _gather_diagonal(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, g, h)
    if selection == SELECT_ALL:
        count = m
        for i in range(m):
            sel[i] = i
    else:
        output_criteria(g, h, m, packed, l1, l2, crit)
        if selection == SELECT_FIXED:
            n = bounded_fraction(m, params[4], int(params[5]), int(params[6]))
            count = select_fixed(crit, m, n, sel)
        else:
            count = select_dynamic(crit, m, params[4], params[5], params[6], sel)
    if selection == SELECT_ALL:
        gs, hs = g, h
    else:
        compact(g, h, sel, count, packed, g_sub, h_sub)
        gs, hs = g_sub, h_sub
    if params[7] != 0.0:
        gain = binned_head(gs, hs, count, packed, l1, l2, params[8], int(params[9]),
                           int(params[10]), crit, bin_of, counts, remap, g_bin, h_bin, a,
                           ipiv, p_bin, scores)[0]
    elif packed:
        gain = complete_head(gs, hs, count, l1, l2, a, ipiv, scores)[0]
    else:
        gain = output_wise_head(g, h, sel, count, l1, l2, scores)
    return gain, count


@register_jitable
def head_from_work(labels, views, count, out_labels, out_scores):
    """Copy the head left in ``views`` by :func:`multi_output_side` (``count`` outputs)
    to out_labels (int32) and out_scores (float64)."""
    sel, scores = views[12], views[9]
    for a in range(count):
        out_labels[a] = labels[sel[a]]
        out_scores[a] = scores[a]


@register_jitable
def all_outputs(params):
    """A copy of ``params`` whose head predicts every output it is given (``SELECT_ALL``):
    a partial head's once its outputs are fixed."""
    out = params.copy()
    out[3] = SELECT_ALL
    return out


# The flags a search's quality chain compiles multi_output_side under (``quality``'s module
# docstring): no reference counting (``jit/variants.py``) and forceinline. Numba compiles a
# jitable function once per signature *and per flags of its caller* (an ``@overload``'s
# implementations are cached by both), so calling it from reference-counted code compiled
# it and its solvers a second time: 15 of the 63 CPU-s of a first partial-dynamic fit.
# Called under these flags, a rule's head reuses the search's compiled code. (It allocates
# nothing and returns a count, which is what code without reference counting may do.)
@register_jitable(forceinline=True, _nrt=False)
def _rule_side(g_sum, h_sum, labels, inv_scale, params, views):
    """The number of outputs :func:`multi_output_side` selects for a rule's coverage sums,
    its head left in ``views``."""
    return multi_output_side(g_sum, h_sum, g_sum, h_sum, False, labels, inv_scale, params,
                             views)[1]


@register_jitable
def multi_output_head(g_sum, h_sum, labels, inv_scale, params):
    """The head :func:`multi_output_side` gives the sums g_sum int64 (K,), h_sum int64 (K or
    K(K+1)/2,) of a rule's coverage: (labels int32 (c,), scores float64 (c,)), as the
    search scored it. Allocates its work row (a rule's head is computed once; from Python
    one compiled call, where its pieces called one by one cost ~30 us)."""
    m = labels.shape[0]
    size_f, size_i = work_sizes(m)
    views = work_views(np.zeros(size_f), np.zeros(size_i, np.int64), m)
    count = _rule_side(g_sum, h_sum, labels, inv_scale, params, views)
    out_labels = np.empty(count, np.int32)
    out_scores = np.empty(count, np.float64)
    head_from_work(labels, views, count, out_labels, out_scores)
    return out_labels, out_scores
