"""The quality of a candidate rule's head from aggregated statistics: the one function the
searches call per candidate, for every learner.

A search aggregates, per label ``k``, the fixed-point sums ``run_g[k]``, ``run_h[k]`` of the
examples a candidate condition covers; the ``>``/``!=`` side of a boundary is the complement
``tot - run``. :func:`side_quality` turns those sums into one number (larger is better) and,
for heads that pick a single label, the label.

``head_mode`` selects the learner's objective and ``params`` (float64 (P,)) carries its
parameters, so a learner plugs in a new objective here without touching the searches:

- ``HEAD_COMPLETE`` / ``HEAD_SINGLE`` (boosting, ``objectives.heads``): ``params = [l1, l2]``;
  the quality is the summed gain of ``labels`` (complete) or the largest one (single).
- ``HEAD_SECO_SINGLE`` / ``HEAD_SECO_PARTIAL`` (separate-and-conquer,
  ``objectives.heuristics``): count statistics, ``params`` from
  ``heuristics.seco_params``; the quality is a heuristic on per-label confusion matrices
  (single: the best label; partial: the lifted mean of the chosen labels, whose number is
  returned in place of a label).
- ``HEAD_MULTI_OUTPUT`` (boosting, ``objectives.multi_output``): complete or partial heads
  solved as a system, optionally with GBLB, over decomposable (``run_h`` (K,)) or
  non-decomposable statistics (``run_h`` the packed Hessian (K(K+1)/2,));
  ``params`` from ``multi_output.multi_output_params``. Needs the per-slot ``work``
  (``multi_output.work_views``).
- ``HEAD_ND_SINGLE`` (boosting, non-decomposable statistics, ``params = [l1, l2]``): the
  single-output head of ``complete_head.single_head_sums`` (only ``H_kk`` is read).

How this chain is compiled: every function of it is ``forceinline``
(``register_jitable(forceinline=True)``, or the ``jit_options`` of an ``@overload``): Numba
compiles it once per signature and marks it ``alwaysinline``, so LLVM inlines it into each
search, which keeps the warm speed of inlined code (a plain call cost the searches +41 %,
docs/benchmarks.md, session 6). The chain used to be inlined at the IR level
(``inline="always"``), which types an ``@overload``'s body once to resolve it and once more
at every level it is inlined into: the single-output chain compiled for ~45 CPU-s per
search, most of a first fit with ``head_type="single"`` (67 CPU-s, now 22;
docs/benchmarks.md, session 20). Functions that return an array stay IR-inlined
(``jit/variants.py``: the searches run without reference counting).

Numba passes ``forceinline`` on to what such a function calls unless the callee sets it, so
the multi-output heads' selection (``multi_output.multi_output_side``) is inlined too: warm
partial-dynamic fits took a fifth of the time, non-decomposable ones 0.5-0.8x. The two
solvers, ``complete_head.complete_head`` and ``label_binning.binned_head``, say
``forceinline=False``: inlined into every search they added 17 CPU-s to a first
partial-dynamic fit (104 against 87) for a warm non-decomposable complete fit 1.6x instead
of 1.2x faster.
"""

from typing import NamedTuple

import numpy as np
from numba.core import types

from gpurules.jit.helpers import overload, register_jitable
from gpurules.objectives.complete_head import single_head_sums
from gpurules.objectives.heads import (HEAD_COMPLETE, HEAD_SINGLE, _shrunk, label_choice_key,
                                       label_gain)
from gpurules.objectives.heuristics import (HEAD_SECO_PARTIAL, HEAD_SECO_SINGLE,
                                            partial_quality, single_quality)
from gpurules.jit.variants import variant
from gpurules.objectives.multi_output import (FORMS, HEAD_MULTI_OUTPUT, HEAD_ND_SINGLE,
                                              form_name, multi_output_side)

# every head_mode that side_quality implements (SearchSettings checks against it)
HEAD_MODES = (HEAD_COMPLETE, HEAD_SINGLE, HEAD_SECO_SINGLE, HEAD_SECO_PARTIAL,
              HEAD_MULTI_OUTPUT, HEAD_ND_SINGLE)


def boosting_params(l1, l2):
    """``params`` of the boosting heads: float64 [l1, l2]."""
    return np.array([l1, l2], dtype=np.float64)


@register_jitable(forceinline=True)
def _summed_gain(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, l1, l2):
    """Sum of ``label_gain`` over ``labels``, in label order (the CUDA scan sums in the same
    order). The complement test sits outside the loop, which keeps the loop branch-light: it
    runs for every candidate of every search."""
    total = 0.0
    if complement:
        for idx in range(labels.shape[0]):
            k = labels[idx]
            total += label_gain((tot_g[k] - run_g[k]) * inv_scale,
                                (tot_h[k] - run_h[k]) * inv_scale, l1, l2)
    else:
        for idx in range(labels.shape[0]):
            k = labels[idx]
            total += label_gain(run_g[k] * inv_scale, run_h[k] * inv_scale, l1, l2)
    return total


@register_jitable(forceinline=True)
def _gains_all(run_g, run_h, tot_g, tot_h, complement, inv_scale, l1, l2, gains):
    """``label_gain`` of every label ``0..K-1`` into ``gains`` float64 (K,): a loop without
    branches or gathers that the compiler vectorises (same values bit for bit)."""
    K = run_g.shape[0]
    if complement:
        for k in range(K):
            a, denom = _shrunk((tot_g[k] - run_g[k]) * inv_scale,
                               (tot_h[k] - run_h[k]) * inv_scale, l1, l2)
            gains[k] = 0.5 * a * a / denom if a > 0.0 and denom > 0.0 else 0.0
    else:
        for k in range(K):
            a, denom = _shrunk(run_g[k] * inv_scale, run_h[k] * inv_scale, l1, l2)
            gains[k] = 0.5 * a * a / denom if a > 0.0 and denom > 0.0 else 0.0


@register_jitable(forceinline=True)
def complete_pair_quality(run_g, run_h, tot_g, tot_h, labels, inv_scale, l1, l2, gains):
    """(quality of ``run_*``, quality of ``tot_* - run_*``) of the complete head over
    ``labels``: both sides of a boundary at once, each bit for bit the quality of
    :func:`complete_side_quality` (the gains summed in label order). ``gains``: float64
    (2K,) scratch. Over every label, the gains of each side in a vectorised loop
    (:func:`_gains_all`; the first K the running side's, the rest the other's), then both
    sums in one loop, so that their chains of dependent additions overlap (a search's
    candidates ~0.75x the time of one side after the other, in a loop of them alone); over
    a subset of the labels, :func:`_summed_gain` of each side."""
    K = run_g.shape[0]
    if labels.shape[0] != K or gains.shape[0] < 2 * K:  # labels sorted and distinct
        return (_summed_gain(run_g, run_h, tot_g, tot_h, False, labels, inv_scale, l1, l2),
                _summed_gain(run_g, run_h, tot_g, tot_h, True, labels, inv_scale, l1, l2))
    _gains_all(run_g, run_h, tot_g, tot_h, False, inv_scale, l1, l2, gains)
    rest = gains[K:]  # a view: an index ``K + k`` compiled to a scatter
    _gains_all(run_g, run_h, tot_g, tot_h, True, inv_scale, l1, l2, rest)
    total_run = 0.0
    total_rest = 0.0
    for k in range(K):
        total_run += gains[k]
        total_rest += rest[k]
    return total_run, total_rest


@register_jitable(forceinline=True)
def _label_sums(run_g, run_h, tot_g, tot_h, complement, k, inv_scale):
    """(G, H) float64 of label ``k``: ``run_*[k]`` or, with ``complement``,
    ``tot_*[k] - run_*[k]``, scaled by ``inv_scale``."""
    if complement:
        return (tot_g[k] - run_g[k]) * inv_scale, (tot_h[k] - run_h[k]) * inv_scale
    return run_g[k] * inv_scale, run_h[k] * inv_scale


@register_jitable(forceinline=True)
def _keys_all(run_g, run_h, tot_g, tot_h, complement, inv_scale, l1, l2, keys):
    """``heads.label_choice_key`` of every label ``0..K-1`` into ``keys`` float64 (K,): the
    branch-free twin of :func:`_gains_all` for the single-output head (|±a / denom| is
    ``a / denom``, the same value bit for bit)."""
    K = run_g.shape[0]
    if complement:
        for k in range(K):
            a, denom = _shrunk((tot_g[k] - run_g[k]) * inv_scale,
                               (tot_h[k] - run_h[k]) * inv_scale, l1, l2)
            keys[k] = a / denom if a > 0.0 and denom > 0.0 else 0.0
    else:
        for k in range(K):
            a, denom = _shrunk(run_g[k] * inv_scale, run_h[k] * inv_scale, l1, l2)
            keys[k] = a / denom if a > 0.0 and denom > 0.0 else 0.0


@register_jitable(forceinline=True)
def _best_gain_buffered(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, l1, l2,
                        keys):
    """:func:`_best_gain` with the keys of all labels computed by :func:`_keys_all` into
    ``keys`` first (when ``labels`` is every label), then scanned for the first largest;
    only the chosen label's gain is computed. The same result bit for bit."""
    K = run_g.shape[0]
    # labels are sorted and distinct: all of them is 0..K-1
    if labels.shape[0] != K:
        return _best_gain(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, l1, l2)
    _keys_all(run_g, run_h, tot_g, tot_h, complement, inv_scale, l1, l2, keys)
    best_label = 0
    best_key = keys[0]
    for k in range(1, K):
        if keys[k] > best_key:
            best_key = keys[k]
            best_label = k
    g, h = _label_sums(run_g, run_h, tot_g, tot_h, complement, best_label, inv_scale)
    return label_gain(g, h, l1, l2), best_label


@register_jitable(forceinline=True)
def _best_gain(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, l1, l2):
    """(``label_gain`` of the single-output head's label, the label): the label of
    ``labels`` with the largest ``heads.label_choice_key`` (|optimal score|; the first on
    ties)."""
    best = 0.0
    best_key = 0.0
    best_label = -1
    for idx in range(labels.shape[0]):
        k = labels[idx]
        g, h = _label_sums(run_g, run_h, tot_g, tot_h, complement, k, inv_scale)
        key = label_choice_key(g, h, l1, l2)
        if best_label < 0 or key > best_key:
            best_key = key
            best = label_gain(g, h, l1, l2)
            best_label = k
    return best, best_label


def boosting_quality(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, l1, l2,
                     single, gains):
    """(quality, label) of the boosting heads: the summed gain of ``labels`` (complete head,
    label -1; :func:`_summed_gain`) or the largest one and its label (``single``;
    :func:`_best_gain`).

    With a ``gains`` buffer (float64 (K,)) and a head over every label, the gains are
    computed by :func:`_gains_all` first and then summed in label order or scanned for the
    first largest, so the result is the same bit for bit; ``gains`` None (a type, decided
    at compile time) always takes the plain loops (as does this Python body)."""
    return _boosting_quality_plain(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale,
                                   l1, l2, single)


@register_jitable(forceinline=True)
def _boosting_quality_plain(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, l1, l2,
                            single):
    if single:
        return _best_gain(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, l1, l2)
    return _summed_gain(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, l1,
                        l2), -1


@overload(boosting_quality, prefer_literal=True, jit_options={"forceinline": True})
def _boosting_quality_typed(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, l1,
                            l2, single, gains):
    unbuffered = isinstance(gains, (types.NoneType, types.Omitted))
    if isinstance(single, types.BooleanLiteral) and single.literal_value:
        if unbuffered:
            def single_only(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, l1, l2,
                            single, gains):
                return _best_gain(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale,
                                  l1, l2)
            return single_only

        def single_buffered(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, l1, l2,
                            single, gains):
            return _best_gain_buffered(run_g, run_h, tot_g, tot_h, complement, labels,
                                       inv_scale, l1, l2, gains)
        return single_buffered
    if unbuffered:
        def plain(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, l1, l2, single,
                  gains):
            return _boosting_quality_plain(run_g, run_h, tot_g, tot_h, complement, labels,
                                           inv_scale, l1, l2, single)
        return plain

    if isinstance(single, types.BooleanLiteral):  # False: a complete head
        def complete_buffered(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, l1,
                              l2, single, gains):
            K = run_g.shape[0]
            # labels are sorted and distinct: all of them is 0..K-1
            if labels.shape[0] != K:
                return _summed_gain(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale,
                                    l1, l2), -1
            _gains_all(run_g, run_h, tot_g, tot_h, complement, inv_scale, l1, l2, gains)
            total = 0.0
            for k in range(K):
                total += gains[k]
            return total, -1
        return complete_buffered

    def buffered(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, l1, l2, single,
                 gains):
        if single:
            return _best_gain_buffered(run_g, run_h, tot_g, tot_h, complement, labels,
                                       inv_scale, l1, l2, gains)
        return boosting_quality(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, l1,
                                l2, False, gains)
    return buffered


@register_jitable(forceinline=True)
def side_quality(run_g, run_h, tot_g, tot_h, complement, labels, head_mode, inv_scale, params,
                 work=None, gains=None):
    """Quality of the head over ``labels`` (int32 (m,)) for the running sums ``run_*``
    (int64 (K,); ``run_h`` (K(K+1)/2,) for non-decomposable statistics) or, with
    ``complement``, for ``tot_* - run_*``.

    ``work``: ``multi_output.work_views`` of a scratch row, one per thread; only
    ``HEAD_MULTI_OUTPUT`` reads it (without it that mode scores -inf). ``gains``: float64
    (K,) scratch, one per thread, that lets the boosting heads vectorise
    (:func:`boosting_quality`); the result is the same without it.

    Returns (quality float64, label int: the chosen label of a single-label head, the
    number of chosen labels of a SeCo partial head, else -1).

    Inlined in the machine code where it is called (the searches call it per candidate; a
    call cost as much as the gains of a dozen labels; see "How this chain is compiled" in
    the module): the boosting heads are computed in place, the SeCo heuristics called
    directly, the multi-output heads through :func:`_other_quality`.

    ``head_mode``: an int ``HEAD_*`` or its :func:`family_head_mode`; either way every family
    is compiled here. The CPU searches call only the family's part (``FAMILY_SIDE_QUALITY``)
    when they are given a :func:`family_head_mode`.
    """
    code = head_code(head_mode)
    if code == HEAD_COMPLETE or code == HEAD_SINGLE:
        return boosting_side_quality(run_g, run_h, tot_g, tot_h, complement, labels, code,
                                     inv_scale, params, work, gains)
    if code == HEAD_SECO_SINGLE or code == HEAD_SECO_PARTIAL:
        return seco_side_quality(run_g, run_h, tot_g, tot_h, complement, labels, code,
                                 inv_scale, params, work, gains)
    return multi_output_side_quality(run_g, run_h, tot_g, tot_h, complement, labels, code,
                                     inv_scale, params, work, gains)


# side_quality of one family of heads (an int head_mode of that family): a search compiled
# for one family (family_head_mode) calls it in place of side_quality


@register_jitable(forceinline=True)
def boosting_side_quality(run_g, run_h, tot_g, tot_h, complement, labels, head_mode,
                          inv_scale, params, work=None, gains=None):
    """:func:`side_quality` of ``HEAD_COMPLETE`` and ``HEAD_SINGLE``."""
    return boosting_quality(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale,
                            params[0], params[1], head_mode == HEAD_SINGLE, gains)


@register_jitable(forceinline=True)
def complete_side_quality(run_g, run_h, tot_g, tot_h, complement, labels, head_mode, inv_scale,
                          params, work=None, gains=None):
    """:func:`side_quality` of ``HEAD_COMPLETE``."""
    return boosting_quality(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale,
                            params[0], params[1], False, gains)


@register_jitable(forceinline=True)
def single_side_quality(run_g, run_h, tot_g, tot_h, complement, labels, head_mode, inv_scale,
                        params, work=None, gains=None):
    """:func:`side_quality` of ``HEAD_SINGLE``."""
    return boosting_quality(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale,
                            params[0], params[1], True, gains)


@register_jitable(forceinline=True)
def seco_side_quality(run_g, run_h, tot_g, tot_h, complement, labels, head_mode, inv_scale,
                      params, work=None, gains=None):
    """:func:`side_quality` of ``HEAD_SECO_SINGLE`` and ``HEAD_SECO_PARTIAL``."""
    # called directly, as before side_quality was inlined: behind a second call level (one
    # not inlined) the SeCo searches were ~40 % slower
    if head_mode == HEAD_SECO_SINGLE:
        return single_quality(run_g, run_h, tot_g, tot_h, complement, labels, params)
    return partial_quality(run_g, run_h, tot_g, tot_h, complement, labels, params, gains)


@register_jitable(forceinline=True)
def multi_output_side_quality(run_g, run_h, tot_g, tot_h, complement, labels, head_mode,
                              inv_scale, params, work=None, gains=None):
    """:func:`side_quality` of ``HEAD_MULTI_OUTPUT`` and ``HEAD_ND_SINGLE``."""
    return _other_quality(run_g, run_h, tot_g, tot_h, complement, labels, head_mode, inv_scale,
                          params, work)


_FORM_SIDE = None  # a form's multi_output_side, bound by _form_side_quality


def _side_quality_of_form(run_g, run_h, tot_g, tot_h, complement, labels, head_mode,
                          inv_scale, params, work=None, gains=None):
    """:func:`multi_output_side_quality` of one form of the multi-output heads."""
    if work is None:
        return -np.inf, -1
    return _FORM_SIDE(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale, params,
                      work)[0], -1


def _form_side_quality(name):
    """:func:`side_quality` of the multi-output heads of form ``name``
    (``multi_output.FORMS``)."""
    return register_jitable(forceinline=True)(
        variant(_side_quality_of_form, name, _FORM_SIDE=FORMS[name].side))


@register_jitable(forceinline=True)
def nd_single_side_quality(run_g, run_h, tot_g, tot_h, complement, labels, head_mode,
                           inv_scale, params, work=None, gains=None):
    """:func:`side_quality` of ``HEAD_ND_SINGLE``."""
    return single_head_sums(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale,
                            params[0], params[1])


class CompleteHeadMode(NamedTuple):
    """``HEAD_COMPLETE`` typed as its own family (see :func:`family_head_mode`)."""

    code: int


class SingleHeadMode(NamedTuple):
    """``HEAD_SINGLE`` typed as its own family."""

    code: int


class SecoHeadMode(NamedTuple):
    """``HEAD_SECO_SINGLE`` or ``HEAD_SECO_PARTIAL`` typed as the SeCo family."""

    code: int


class MultiOutputHeadMode(NamedTuple):
    """``HEAD_MULTI_OUTPUT`` typed as the multi-output family: every statistics and solver
    (``multi_output.FORMS["any"]``); its subclasses compile one form each."""

    code: int
    FORM = "any"


class OutputWiseHeadMode(MultiOutputHeadMode):
    """Multi-output heads over decomposable statistics without GBLB (``output_wise``)."""

    __slots__ = ()
    FORM = "output_wise"


class SystemHeadMode(MultiOutputHeadMode):
    """Multi-output heads over non-decomposable statistics without GBLB (``system``)."""

    __slots__ = ()
    FORM = "system"


class BinnedHeadMode(MultiOutputHeadMode):
    """Multi-output heads with GBLB (``binned``)."""

    __slots__ = ()
    FORM = "binned"


class NdSingleHeadMode(NamedTuple):
    """``HEAD_ND_SINGLE`` typed as its own family: a fit with it compiles none of the
    multi-output heads' selection and solvers (a third of its first compile)."""

    code: int


_FORM_FAMILIES = (OutputWiseHeadMode, SystemHeadMode, BinnedHeadMode)
# the multi-output family of each form (multi_output.form_name), made once
_FORM_MODES = {family.FORM: family(HEAD_MULTI_OUTPUT) for family in _FORM_FAMILIES}
_FAMILIES = {HEAD_COMPLETE: CompleteHeadMode, HEAD_SINGLE: SingleHeadMode,
             HEAD_SECO_SINGLE: SecoHeadMode, HEAD_SECO_PARTIAL: SecoHeadMode,
             HEAD_MULTI_OUTPUT: MultiOutputHeadMode, HEAD_ND_SINGLE: NdSingleHeadMode}
# family_head_mode of each int head_mode, made once (a fit asks per refinement block)
_FAMILY_MODES = {code: family(code) for code, family in _FAMILIES.items()}
# each family's part of side_quality, by the class of its family_head_mode
FAMILY_SIDE_QUALITY = {CompleteHeadMode: complete_side_quality,
                       SingleHeadMode: single_side_quality,
                       SecoHeadMode: seco_side_quality,
                       MultiOutputHeadMode: multi_output_side_quality,
                       NdSingleHeadMode: nd_single_side_quality,
                       **{family: _form_side_quality(family.FORM)
                          for family in _FORM_FAMILIES}}


def family_head_mode(head_mode, params=None):
    """``head_mode`` (int ``HEAD_*``) as the tuple of its family (``code`` = the int), for the
    compiled CPU searches: they are specialised on the tuple's type and call only its
    family's part of :func:`side_quality` (``FAMILY_SIDE_QUALITY``), so a fit compiles only
    the heads it uses (the first BOOMER fit with the defaults compiled ~4 CPU-s of SeCo and
    multi-output code, and ~4 more of the single-output head, that it never ran; complete
    and single heads are two families, and so are the non-decomposable single-output heads
    and the multi-output ones: a first nd-single fit on emotions compiled for 69-76 CPU-s
    with the multi-output selection and solvers, 44-45 without). Given its ``params``, a
    multi-output head is typed as the family of its form (``multi_output.form_name``), which
    compiles that form's statistics and solver only. A tuple is returned unchanged."""
    if isinstance(head_mode, tuple):
        return head_mode
    if params is not None and int(head_mode) == HEAD_MULTI_OUTPUT:
        return _FORM_MODES[form_name(params)]
    return _FAMILY_MODES[int(head_mode)]


def head_code(head_mode):
    """The int ``HEAD_*`` of an int or a :func:`family_head_mode` tuple (also compiled)."""
    return head_mode.code if isinstance(head_mode, tuple) else head_mode


@overload(head_code)
def _head_code_typed(head_mode):
    if isinstance(head_mode, types.Integer):
        return lambda head_mode: head_mode
    return lambda head_mode: head_mode.code


def head_work(head_mode, work):
    """``work`` (a search's head work rows, or None) where a rule's head of ``head_mode`` (an
    int or a :func:`family_head_mode`) may be a multi-output one, else None: passed on as
    the ``multi_output`` argument of the rule loops' head functions (``refine.fix_head``),
    whose branch on None then compiles no multi-output head. (Non-decomposable statistics
    have work rows for every head: the searches accumulate their packed Hessians there.)"""
    if isinstance(head_mode, tuple) and not isinstance(head_mode, MultiOutputHeadMode):
        return None
    return work


@overload(head_work)
def _head_work_typed(head_mode, work):
    if isinstance(head_mode, types.BaseNamedTuple) and \
            not issubclass(head_mode.instance_class, MultiOutputHeadMode):
        return lambda head_mode, work: None
    return lambda head_mode, work: work


@register_jitable
def _other_quality(run_g, run_h, tot_g, tot_h, complement, labels, head_mode, inv_scale,
                   params, work):
    """:func:`side_quality` of the multi-output heads (non-decomposable statistics)."""
    if head_mode == HEAD_MULTI_OUTPUT:
        if work is None:
            return -np.inf, -1
        return multi_output_side(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale,
                                 params, work)[0], -1
    if head_mode == HEAD_ND_SINGLE:
        return single_head_sums(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale,
                                params[0], params[1])
    return -np.inf, -1  # not in HEAD_MODES: SearchSettings rejects it on the host
