"""A BOOMER rule grown by beam search in compiled code (CPU): ``learners.beam_search``, fused.

The batched rule loop (``fused_rules``) grows each rule of a plain fit with ``_GROW``; for
``rule_induction="top-down-beam-search"`` that is :func:`_grow_py` here, which takes the
same steps as ``beam_search.induce_rule_beam`` with ``BoostingRule``'s hooks (the reference:
``tests/test_fused_rules.py`` holds the models equal) without a Python call per search.
A small fit searches each of a rule's ~20 depths about ``beam_width`` times; driving those
searches from Python took about 89 % of a medical beam fit.

State (:func:`buffers`, reused from batch to batch):

- coverage *slots*: int32 (2 width + 1, n) masks. Each beam entry owns one slot holding its
  rule's coverage (made when the entry is made: its parent's slot copied and its condition
  applied); the children of a depth take slots that no entry of the depth holds, so a
  parent's coverage outlives its children's making. The last row is the empty rule's.
- the beam: per entry its slot and indicator, last refinement (quality, sums, count,
  label), head labels and parameters (fixed after ``max_head_refinements`` conditions,
  ``refine.fix_head``), whether it may be refined, and its last condition's node.
- conditions as a tree of nodes (feature, op, threshold, parent node), a rule's being the
  path from its entry's node up to the root; grown by doubling.
- candidates of the next beam: a refinement of an entry (its condition and sums copied
  from the search's slots) or an entry kept as it is, with the sort key of
  ``beam_search._next_beam``: (quality descending, kept entries before refinements, order
  of discovery). The best ``width`` so far are kept in a heap (:func:`_offer`, O(log width)
  a candidate; sorting and truncating after each entry made a beam of 10**5 entries take
  minutes) and sorted once per depth (:func:`_sort_live`, a heap sort).

The search kernel is the representation's serial form and the apply step its own, bound
by :func:`bind` into copies of the functions that call them (``jit.variants.variant``).
"""

import numpy as np

from gpurules.backends.base import floyd_indices
from gpurules.backends.cpu import refine
from gpurules.backends.cpu.representations import forget_marks
from gpurules.jit.cache import njit
from gpurules.jit.helpers import register_jitable
from gpurules.jit.rows import copy_row
from gpurules.jit.variants import variant
from gpurules.objectives.quality import head_work

# bound by :func:`bind` (``jit.variants.variant``): the search kernel and apply step, and
# the helpers that call them
_SEARCH = _APPLY = _MAKE_ENTRY = _ENTRIES = None

# the fields of a beam (:func:`buffers`), a tuple of arrays over its entries: the coverage
# slot, its indicator, the last refinement's quality, whether the entry may be refined, its
# sums g (K,) and h (W,) and count, its label, the head's labels (K,) of which the first
# NUM_LABELS count, the head's params (P,), the node of the last condition
(E_SLOT, E_INDICATOR, E_QUALITY, E_REFINABLE, E_G, E_H, E_COUNT, E_LABEL, E_LABELS,
 E_NUM_LABELS, E_PARAMS, E_NODE) = range(12)
# the fields of the candidates (:func:`buffers`), a tuple of arrays over candidate rows: the
# sort key (quality, kind: 0 an entry kept as it is, 1 a refinement; order of discovery),
# the entry, and a refinement's condition (feature, op, threshold), count, label, sums
(C_QUALITY, C_KIND, C_ORDER, C_ENTRY, C_FEATURE, C_OP, C_THRESHOLD, C_COUNT, C_LABEL, C_G,
 C_H) = range(11)

_NODES = 256  # the condition tree's first size (doubled as needed)


def buffers(width, n, K, W, P):
    """The beam's state for :func:`_grow_py` (module docstring), for ``width`` >= 2
    entries, ``n`` examples, K gradient and W Hessian columns, P head parameters:
    (slots int32 (2 width + 1, n), two beams, candidates, live candidate rows int64
    (2 width,), the free candidate rows int64 (2 width + 1,): a stack, its height last)."""
    def beam():  # (E_SLOT, ..., E_NODE)
        return (np.empty(width, np.int64), np.empty(width, np.int64), np.empty(width),
                np.empty(width, np.bool_), np.empty((width, K), np.int64),
                np.empty((width, W), np.int64), np.empty(width, np.int64),
                np.empty(width, np.int32), np.empty((width, K), np.int32),
                np.empty(width, np.int64), np.empty((width, P)), np.empty(width, np.int64))

    C = 2 * width  # (C_QUALITY, ..., C_H)
    candidates = (np.empty(C), np.empty(C, np.int64), np.empty(C, np.int64),
                  np.empty(C, np.int64), np.empty(C, np.int64), np.empty(C, np.int8),
                  np.empty(C, np.float32), np.empty(C, np.int64), np.empty(C, np.int32),
                  np.empty((C, K), np.int64), np.empty((C, W), np.int64))
    return (np.zeros((C + 1, n), np.int32), beam(), beam(), candidates,
            np.empty(C, np.int64), np.zeros(C + 1, np.int64))


def bind(name, search, apply_step):
    """:func:`_grow_py` over ``search`` (a search kernel's serial form) and ``apply_step``,
    a jitable function for ``fused_rules``'s rule loop; ``name``: the representation's.

    The search is called from :func:`_grow_py` itself: every layer of jitable functions
    above it is optimised by LLVM with the search's code inside (a first version with two
    more layers compiled 5 CPU-s longer)."""
    def bound(func, **constants):
        return register_jitable(variant(func, name, **constants))

    entries = bound(_entries, _MAKE_ENTRY=bound(_make_entry, _APPLY=apply_step))
    return bound(_grow_py, _SEARCH=search, _ENTRIES=entries)


@njit(inline="always")
def _before(key_q, key_kind, key_order, a, b):
    """Whether candidate row ``a`` sorts before row ``b``."""
    if key_q[a] != key_q[b]:
        return key_q[a] > key_q[b]
    if key_kind[a] != key_kind[b]:
        return key_kind[a] < key_kind[b]
    return key_order[a] < key_order[b]


@register_jitable
def _sort_live(cand, live):
    """Sort the candidate rows ``live`` (int64, in place, a heap of :func:`_offer`) best
    first: a heap sort, O(m log m) for m rows. The order of ``_before`` is total (the order
    of discovery is unique), so any sort gives these rows."""
    for end in range(live.shape[0] - 1, 0, -1):  # the worst of live[:end + 1] to its end
        live[0], live[end] = live[end], live[0]
        _sift_down(cand, live, end)


@register_jitable
def _sift_down(cand, live, nl):
    """Restore the heap ``live[:nl]`` (each row sorts after its children) whose root may
    sort before a child: swap it with its worse child while that one sorts after it."""
    key_q, key_kind, key_order = cand[C_QUALITY], cand[C_KIND], cand[C_ORDER]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= nl:
            break
        if c + 1 < nl and _before(key_q, key_kind, key_order, live[c], live[c + 1]):
            c += 1
        if not _before(key_q, key_kind, key_order, live[i], live[c]):
            break
        live[i], live[c] = live[c], live[i]
        i = c


@register_jitable
def _best_slots(out_q, out_op, count):
    """The ``count`` best search slots with a refinement, best first, ties in slot order
    (``base.select_refinements``): int64 (<= count,)."""
    chosen = np.empty(min(count, out_q.shape[0]), np.int64)
    taken = 0
    for j in range(out_q.shape[0]):
        if out_op[j] < 0:
            continue
        i = min(taken, chosen.shape[0] - 1)
        if taken == chosen.shape[0]:  # full: j must beat the worst one kept
            if not out_q[j] > out_q[chosen[i]]:
                continue
        else:
            taken += 1
        while i > 0 and out_q[j] > out_q[chosen[i - 1]]:
            chosen[i] = chosen[i - 1]
            i -= 1
        chosen[i] = j
    return chosen[:taken]


@register_jitable
def _node(nodes, count, feature, op, threshold, parent):
    """Add a condition node (the tree doubled when full); returns (nodes, its index)."""
    n_f, n_op, n_thr, n_parent = nodes
    if count == n_f.shape[0]:
        size = 2 * count
        grown = (np.empty(size, np.int64), np.empty(size, np.int8),
                 np.empty(size, np.float32), np.empty(size, np.int64))
        copy_row(grown[0][:count], n_f)
        copy_row(grown[1][:count], n_op)
        copy_row(grown[2][:count], n_thr)
        copy_row(grown[3][:count], n_parent)
        n_f, n_op, n_thr, n_parent = grown
    n_f[count], n_op[count], n_thr[count], n_parent[count] = feature, op, threshold, parent
    return (n_f, n_op, n_thr, n_parent), count


@njit(inline="always")
def _draw(rng, plan, all_features):
    """The features of one search (``BoostingRule.draw_features``)."""
    if plan.num_drawn > 0:
        return floyd_indices(rng.random(plan.num_drawn), plan.num_features)
    return all_features


def _make_entry(dst, e, slot, slots, data, marks, parent_slot, parent_indicator, ref, labels,
                params, depth, node, plan, inv_scale, multi_output):
    """Entry ``e`` of the beam ``dst``: the rule of the parent (its coverage in
    ``parent_slot``, its head's ``labels`` and ``params``) refined by ``ref`` = (feature,
    op, threshold, quality, count, label, g int64 (K,), h int64 (W,)), with ``depth``
    conditions, its coverage in ``slot`` (``beam_search._child``)."""
    (d_slot, d_ind, d_q, d_refinable, d_g, d_h, d_count, d_label, d_labels, d_nlab,
     d_params, d_node) = dst
    f, op, thr, q, count, label, g_row, h_row = ref
    copy_row(slots[slot], slots[parent_slot])
    forget_marks(marks)  # (the search's kept entries are another coverage's)
    d_ind[e] = _APPLY(f, op, thr, data, slots[slot], parent_indicator)
    d_slot[e], d_q[e], d_count[e], d_label[e], d_node[e] = slot, q, count, label, node
    copy_row(d_g[e], g_row)
    copy_row(d_h[e], h_row)
    if 0 < plan.max_head_refinements <= depth:
        labels, params = refine.fix_head(plan.head_mode, labels, params, label, g_row, h_row,
                                         inv_scale, multi_output)
    d_nlab[e] = labels.shape[0]
    copy_row(d_labels[e][:labels.shape[0]], labels)
    copy_row(d_params[e], params)
    d_refinable[e] = count > plan.min_coverage


@register_jitable
def _keep_entry(dst, e, src, i):
    """Entry ``e`` of ``dst`` is entry ``i`` of ``src``, no longer refinable."""
    dst[E_SLOT][e], dst[E_INDICATOR][e] = src[E_SLOT][i], src[E_INDICATOR][i]
    dst[E_QUALITY][e], dst[E_REFINABLE][e] = src[E_QUALITY][i], False
    dst[E_COUNT][e], dst[E_LABEL][e] = src[E_COUNT][i], src[E_LABEL][i]
    dst[E_NUM_LABELS][e], dst[E_NODE][e] = src[E_NUM_LABELS][i], src[E_NODE][i]
    copy_row(dst[E_G][e], src[E_G][i])
    copy_row(dst[E_H][e], src[E_H][i])
    copy_row(dst[E_LABELS][e], src[E_LABELS][i])
    copy_row(dst[E_PARAMS][e], src[E_PARAMS][i])


@register_jitable
def _free_all(free):
    """Every candidate row free (``free``: :func:`buffers`' stack, row 0 on top)."""
    rows = free.shape[0] - 1
    for t in range(rows):
        free[t] = rows - 1 - t
    free[rows] = rows


@register_jitable
def _free_row(free):
    """A candidate row not in use, taken from the stack ``free`` (any free row: the rows
    hold the candidates' data, the sort keys decide their order)."""
    height = free[free.shape[0] - 1] - 1
    free[free.shape[0] - 1] = height
    return free[height]


@register_jitable
def _release(free, r):
    """Return candidate row ``r`` to the stack ``free``."""
    top = free.shape[0] - 1
    free[free[top]] = r
    free[top] += 1


@register_jitable
def _offer(cand, live, nl, free, width, r):
    """Add candidate row ``r`` to the ``nl`` live ones, a heap whose root ``live[0]`` is the
    worst (each row sorts after its children), holding the best ``width`` so far: ``r``
    joins while there is room, else replaces the root if it sorts before it; the row left
    out is freed. Returns the number of live candidates. Keeping the best ``width`` of all
    candidates offered is what sorting and truncating after every entry kept, in
    O(log width) a candidate instead of O(width)."""
    key_q, key_kind, key_order = cand[C_QUALITY], cand[C_KIND], cand[C_ORDER]
    if nl < width:  # sift up
        i = nl
        live[i] = r
        while i > 0 and _before(key_q, key_kind, key_order, live[(i - 1) // 2], live[i]):
            p = (i - 1) // 2
            live[i], live[p] = live[p], live[i]
            i = p
        return nl + 1
    if not _before(key_q, key_kind, key_order, r, live[0]):
        _release(free, r)
        return nl
    _release(free, live[0])
    live[0] = r
    _sift_down(cand, live, nl)
    return nl


def _grow_py(rng, plan, data, marks, mask, weights, g, h, tot_g, tot_h, tot_count, labels,
             inv_scale, scratch, out, conditions, n_cond, beam):
    """Grow one rule by beam search (``beam_search.induce_rule_beam``).

    Args:
        rng, plan, data, marks, mask, g, h, inv_scale, scratch, out: as
            ``fused_rules._rules_py`` (``mask`` all 0 on entry: every example covered).
        weights: int32 (n,), the rule's instance weights.
        tot_g int64 (K,), tot_h int64 (W,), tot_count: the (weighted) sums over every
            example and their count, replaced by the rule's.
        labels: int32 (m,), the outputs the head may predict.
        conditions: (feature int64 (C,), op int8 (C,), threshold float32 (C,)), the rule's
            written from ``n_cond`` on.
        beam: :func:`buffers`.

    Returns:
        (where the rule's conditions end: ``n_cond`` when none was found, the indicator of
        its coverage, which is left in ``mask``, its head's labels and params, its last
        refinement's label, its covered count).
    """
    slots, cur, nxt, cand, live, free = beam
    width, head_mode, min_coverage = plan.beam_width, plan.head_mode, plan.min_coverage
    root = slots.shape[0] - 1
    slots[root][:] = 0
    nodes = (np.empty(_NODES, np.int64), np.empty(_NODES, np.int8),
             np.empty(_NODES, np.float32), np.empty(_NODES, np.int64))
    all_features = np.arange(plan.num_features)
    redraws = plan.redraws
    while True:  # the first beam (beam_search._first_beam)
        features = _draw(rng, plan, all_features)
        forget_marks(marks)
        _SEARCH(features, *data, slots[root], 0, weights, g, h, tot_g, tot_h, tot_count,
                labels, head_mode, plan.params, inv_scale, min_coverage, -np.inf, scratch,
                *out)
        best = _best_slots(out[0], out[1], width)
        if best.shape[0] > 0 or redraws <= 0:
            break
        redraws -= 1
    if best.shape[0] == 0:
        return n_cond, 0, labels, plan.params, -1, tot_count
    _free_all(free)
    multi_output = head_work(plan.head_mode, scratch[1])  # (the entries' heads)
    nl = _found(cand, live, free, 0, width, 0, best, features, out, 0)
    _sort_live(cand, live[:nl])
    nodes, n_nodes = _ENTRIES(cur, cur, 0, cand, live, nl, slots, data, marks, nodes, 0, 0,
                              labels, plan.params, plan, inv_scale, multi_output)
    n_cur, depth = nl, 1
    while plan.max_conditions == 0 or depth < plan.max_conditions:  # beam_search._next_beam
        quality, refinable = cur[E_QUALITY], cur[E_REFINABLE]
        bound = quality[n_cur - 1]  # a refinement must beat the worst entry of the beam
        _free_all(free)
        nl = order = 0
        refined = drawn = False
        for e in range(n_cur):
            found = 0
            if refinable[e]:
                if not drawn or plan.resample_features:
                    features = _draw(rng, plan, all_features)
                    drawn = True
                forget_marks(marks)
                _SEARCH(features, *data, slots[cur[E_SLOT][e]], cur[E_INDICATOR][e], weights,
                        g, h, cur[E_G][e], cur[E_H][e], cur[E_COUNT][e], _labels(cur, e),
                        head_mode, cur[E_PARAMS][e].copy(), inv_scale, min_coverage, bound,
                        scratch, *out)
                best = _best_slots(out[0], out[1], width)
                found = best.shape[0]
            if found > 0:
                refined = True
                nl = _found(cand, live, free, nl, width, order, best, features, out, e)
                order += found
            elif nl < width or not quality[e] < bound:
                refinable[e] = False  # kept as it is, no longer refined
                nl = _kept(cand, live, free, nl, width, order, e, quality[e])
                order += 1
            if nl >= width:  # the beam is full: a refinement must beat its worst
                bound = max(bound, cand[C_QUALITY][live[0]])
        _sort_live(cand, live[:nl])
        nodes, n_nodes = _ENTRIES(nxt, cur, n_cur, cand, live, nl, slots, data, marks, nodes,
                                  n_nodes, depth, labels, plan.params, plan, inv_scale,
                                  multi_output)
        n_cur = nl
        cur, nxt = nxt, cur
        if not refined:
            break
        depth += 1
    return _finish(cur, slots, nodes, mask, tot_g, tot_h, conditions, n_cond)


@register_jitable
def _found(cand, live, free, nl, width, order, best, features, out, entry):
    """Offer the refinements of beam entry ``entry`` to the ``nl`` live candidates (at most
    ``width``, :func:`_offer`), numbered from ``order``: the search slots ``best`` (int64)
    of ``features``' search, whose results are in ``out``. Returns the number of live
    candidates."""
    out_q, out_op, out_thr, out_cnt, out_label, out_g, out_h = out
    for t in range(best.shape[0]):
        j = best[t]
        r = _free_row(free)
        cand[C_QUALITY][r], cand[C_KIND][r] = out_q[j], 1
        cand[C_ORDER][r], cand[C_ENTRY][r] = order + t, entry
        cand[C_FEATURE][r], cand[C_OP][r] = features[j], out_op[j]
        cand[C_THRESHOLD][r], cand[C_COUNT][r] = out_thr[j], out_cnt[j]
        cand[C_LABEL][r] = out_label[j]
        copy_row(cand[C_G][r], out_g[j])
        copy_row(cand[C_H][r], out_h[j])
        nl = _offer(cand, live, nl, free, width, r)
    return nl


@register_jitable
def _kept(cand, live, free, nl, width, order, entry, quality):
    """Offer beam entry ``entry`` (of ``quality``) as a candidate kept as it is to the
    ``nl`` live ones (:func:`_offer`), numbered ``order``. Returns the number of live
    candidates."""
    r = _free_row(free)
    cand[C_QUALITY][r], cand[C_KIND][r] = quality, 0
    cand[C_ORDER][r], cand[C_ENTRY][r] = order, entry
    return _offer(cand, live, nl, free, width, r)


def _entries(dst, cur, n_cur, cand, live, nl, slots, data, marks, nodes, n_nodes, depth,
             labels, params, plan, inv_scale, multi_output):
    """The beam ``dst`` of the ``nl`` best candidates (``live``, sorted): an entry of
    ``cur`` kept as it is, or a refinement of one (with ``depth`` + 1 conditions, its
    coverage in a slot no entry of ``cur`` holds); ``n_cur`` 0: the first beam, whose
    candidates refine the empty rule (``labels``, ``params``). Returns (nodes, number of
    nodes)."""
    held = np.zeros(slots.shape[0], np.bool_)
    for e in range(n_cur):
        held[cur[E_SLOT][e]] = True
    root = slots.shape[0] - 1
    free = 0  # the lowest slot not held (held slots are never released here)
    for t in range(nl):
        r = live[t]
        e = cand[C_ENTRY][r]
        if cand[C_KIND][r] == 0:
            _keep_entry(dst, t, cur, e)
            continue
        while held[free]:
            free += 1
        held[free] = True
        parent_slot, parent_indicator, parent_node = root, 0, -1
        entry_labels, entry_params = labels, params
        if n_cur > 0:
            parent_slot, parent_indicator = cur[E_SLOT][e], cur[E_INDICATOR][e]
            parent_node = cur[E_NODE][e]
            entry_labels, entry_params = _labels(cur, e), cur[E_PARAMS][e].copy()
        f, op, thr = cand[C_FEATURE][r], cand[C_OP][r], cand[C_THRESHOLD][r]
        nodes, node = _node(nodes, n_nodes, f, op, thr, parent_node)
        n_nodes += 1
        ref = (f, op, thr, cand[C_QUALITY][r], cand[C_COUNT][r], cand[C_LABEL][r], cand[C_G][r],
               cand[C_H][r])
        _MAKE_ENTRY(dst, t, free, slots, data, marks, parent_slot, parent_indicator, ref,
                    entry_labels, entry_params, depth + 1, node, plan, inv_scale,
                    multi_output)
    return nodes, n_nodes


@register_jitable
def _finish(beam, slots, nodes, mask, tot_g, tot_h, conditions, n_cond):
    """The best entry of the last ``beam`` as :func:`_grow_py`'s result: its
    conditions written from ``n_cond`` on (root first), its coverage into ``mask``, its
    sums into ``tot_g``, ``tot_h``."""
    n_f, n_op, n_thr, n_parent = nodes
    depth = 0
    node = beam[E_NODE][0]
    while node >= 0:
        depth += 1
        node = n_parent[node]
    c_f, c_op, c_thr = conditions
    node = beam[E_NODE][0]
    for c in range(n_cond + depth - 1, n_cond - 1, -1):
        c_f[c], c_op[c], c_thr[c] = n_f[node], n_op[node], n_thr[node]
        node = n_parent[node]
    copy_row(mask, slots[beam[E_SLOT][0]])
    copy_row(tot_g, beam[E_G][0])
    copy_row(tot_h, beam[E_H][0])
    return (n_cond + depth, beam[E_INDICATOR][0], _labels(beam, 0), beam[E_PARAMS][0].copy(),
            beam[E_LABEL][0], beam[E_COUNT][0])


@register_jitable
def _labels(beam, e):
    """A copy of the head's labels of entry ``e`` (int32 (m,))."""
    return beam[E_LABELS][e][:beam[E_NUM_LABELS][e]].copy()
