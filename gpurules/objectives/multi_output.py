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

from typing import NamedTuple

import numpy as np

from gpurules.jit.helpers import register_jitable
from gpurules.objectives.complete_head import (
    bounded_fraction, compact, complete_head, dynamic_root, gather_side, output_criteria,
    output_wise_head, select_dynamic, select_fixed)
from gpurules.jit.variants import variant
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
def _gather_any(packed, run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, g, h):
    """The float64 statistics of ``labels`` for one side, packed (``complete_head``'s
    ``gather_side``) or decomposable (:func:`_gather_diagonal`) as ``packed`` says."""
    if packed:
        gather_side(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, g, h)
    else:
        _gather_diagonal(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, g, h)


@register_jitable
def _gather_packed(packed, run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, g, h):
    """:func:`_gather_any` of non-decomposable statistics (``packed`` is True)."""
    gather_side(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, g, h)


@register_jitable
def _gather_decomposable(packed, run_g, run_h, tot_g, tot_h, complement, labels, inv_scale,
                         g, h):
    """:func:`_gather_any` of decomposable statistics (``packed`` is False)."""
    _gather_diagonal(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, g, h)


@register_jitable
def _solve_binned(packed, params, gs, hs, g, h, count, views):
    """The GBLB head (``label_binning.binned_head``) of the selected (sub-)system ``gs``,
    ``hs``; returns its gain."""
    return binned_head(gs, hs, count, packed, params[0], params[1], params[8], int(params[9]),
                       int(params[10]), views[5], views[13], views[6], views[14], views[7],
                       views[4], views[10], views[11], views[8], views[9])[0]


@register_jitable
def _solve_system(packed, params, gs, hs, g, h, count, views):
    """The complete head of packed statistics (``complete_head.complete_head``)."""
    return complete_head(gs, hs, count, params[0], params[1], views[10], views[11],
                         views[9])[0]


@register_jitable
def _solve_output_wise(packed, params, gs, hs, g, h, count, views):
    """The per-output head of decomposable statistics over the selected outputs."""
    return output_wise_head(g, h, views[12], count, params[0], params[1], views[9])


@register_jitable
def _solve_any(packed, params, gs, hs, g, h, count, views):
    """The head's solver as ``params`` (GBLB or not) and ``packed`` say; returns the gain.
    ``gs``, ``hs``: the selected (sub-)system; ``g``, ``h``: the side's whole statistics
    (the output-wise head reads them through ``sel``); ``views``: the work row."""
    if params[7] != 0.0:
        return _solve_binned(packed, params, gs, hs, g, h, count, views)
    if packed:
        return _solve_system(packed, params, gs, hs, g, h, count, views)
    return _solve_output_wise(packed, params, gs, hs, g, h, count, views)


# how multi_output_side gathers a side's statistics and solves its head: both chosen from
# ``params`` as it runs; a form (``FORMS``) binds the ones of its statistics and solver
_GATHER, _SOLVE = _gather_any, _solve_any


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
    g, h, g_sub, h_sub, crit, sel = views[0], views[1], views[2], views[3], views[5], views[12]
    packed = params[2] != 0.0
    selection = int(params[3])
    _GATHER(packed, run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, g, h)
    if selection == SELECT_ALL:
        count = m
        for i in range(m):
            sel[i] = i
    else:
        output_criteria(g, h, m, packed, params[0], params[1], crit)
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
    return _SOLVE(packed, params, gs, hs, g, h, count, views), count


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


class HeadForm(NamedTuple):
    """:func:`multi_output_side` and :func:`multi_output_head` compiled for one kind of
    statistics and solver (``FORMS``)."""

    side: object
    head: object


def form_name(params):
    """The name in ``FORMS`` of the head of ``params`` (:func:`multi_output_params`): GBLB
    (``binned``), the complete head of packed statistics (``system``) or the per-output
    head of decomposable ones (``output_wise``). A fit's params keep their form (fixing a
    partial head's outputs changes only the selection)."""
    if params[7] != 0.0:
        return "binned"
    return "system" if params[2] != 0.0 else "output_wise"


def _form(name, gather, solve):
    """The :class:`HeadForm` that gathers with ``gather`` and solves with ``solve``."""
    side = register_jitable(variant(multi_output_side, name, _GATHER=gather, _SOLVE=solve))
    rule_side = register_jitable(forceinline=True, _nrt=False)(
        variant(_rule_side, name, multi_output_side=side))
    return HeadForm(side, register_jitable(variant(multi_output_head, name,
                                                   _rule_side=rule_side)))


# The multi-output head by form: ``any`` chooses its statistics and solver from ``params``
# as it runs (the CUDA kernels, and the int head_mode of the CPU searches); the others
# compile only their own (a form's family, ``quality.family_head_mode``): a first
# partial-fixed fit over decomposable statistics compiled the solvers of the complete and
# the binned heads too, in every function of the search chain that inlines the head
# (88 CPU-s; docs/benchmarks.md, session 55)
FORMS = {"any": HeadForm(multi_output_side, multi_output_head),
         "output_wise": _form("output_wise", _gather_decomposable, _solve_output_wise),
         "system": _form("system", _gather_packed, _solve_system),
         "binned": _form("binned", _gather_any, _solve_binned)}
