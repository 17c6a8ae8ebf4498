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
- candidates of the next beam (at most 2 width at a time): a refinement of an entry (its
  condition and sums copied from the search's slots) or an entry kept as it is, with the
  sort key of ``beam_search._next_beam``: (quality descending, kept entries before
  refinements, order of discovery).

The search kernel is the representation's serial form and the apply step its own, bound
by :func:`bind` into copies of the functions that call them (``jit.variants.variant``).
"""

import numpy as np
from numba.extending import register_jitable

from gpurules.backends.base import floyd_indices
from gpurules.backends.cpu import refine
from gpurules.backends.cpu.representations import forget_marks
from gpurules.jit.cache import njit
from gpurules.jit.rows import copy_row
from gpurules.jit.variants import variant

# bound by :func:`bind` (``jit.variants.variant``): the search kernel and apply step, and
# the helpers that call them
_SEARCH = _APPLY = _SEARCH_AT = _MAKE_ENTRY = _FIRST_BEAM = _NEXT_BEAM = None

_NODES = 256  # the condition tree's first size (doubled as needed)


def buffers(width, n, K, W, P):
    """The beam's state for :func:`_grow_py` (module docstring), for ``width`` >= 2
    entries, ``n`` examples, K gradient and W Hessian columns, P head parameters:
    (slots int32 (2 width + 1, n), two beams, candidates, live candidate rows int64
    (2 width,), their rows in use bool (2 width,))."""
    def beam():  # slot, indicator, quality, refinable, g, h, count, label, labels, number
        # of labels, params, node
        return (np.empty(width, np.int64), np.empty(width, np.int64), np.empty(width),
                np.empty(width, np.bool_), np.empty((width, K), np.int64),
                np.empty((width, W), np.int64), np.empty(width, np.int64),
                np.empty(width, np.int32), np.empty((width, K), np.int32),
                np.empty(width, np.int64), np.empty((width, P)), np.empty(width, np.int64))

    C = 2 * width  # quality, kind, order, entry, feature, op, threshold, count, label, g, h
    candidates = (np.empty(C), np.empty(C, np.int64), np.empty(C, np.int64),
                  np.empty(C, np.int64), np.empty(C, np.int64), np.empty(C, np.int8),
                  np.empty(C, np.float32), np.empty(C, np.int64), np.empty(C, np.int32),
                  np.empty((C, K), np.int64), np.empty((C, W), np.int64))
    return (np.zeros((C + 1, n), np.int32), beam(), beam(), candidates,
            np.empty(C, np.int64), np.zeros(C, np.bool_))


def bind(name, search, apply_step):
    """:func:`_grow_py` over ``search`` (a search kernel's serial form) and ``apply_step``,
    a jitable function for ``fused_rules``'s rule loop; ``name``: the representation's."""
    def bound(func, **constants):
        return register_jitable(variant(func, name, **constants))

    search_at = bound(_search, _SEARCH=search)
    make_entry = bound(_make_entry, _APPLY=apply_step)
    return bound(_grow_py,
                 _FIRST_BEAM=bound(_first_beam, _SEARCH_AT=search_at, _MAKE_ENTRY=make_entry),
                 _NEXT_BEAM=bound(_next_beam, _SEARCH_AT=search_at, _MAKE_ENTRY=make_entry))


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
    """Sort the candidate rows ``live`` (int64, in place) best first."""
    key_q, key_kind, key_order = cand[0], cand[1], cand[2]
    for i in range(1, live.shape[0]):
        x = live[i]
        j = i - 1
        while j >= 0 and _before(key_q, key_kind, key_order, x, live[j]):
            live[j + 1] = live[j]
            j -= 1
        live[j + 1] = x


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
        grown[0][:count], grown[1][:count] = n_f, n_op
        grown[2][:count], grown[3][:count] = n_thr, n_parent
        n_f, n_op, n_thr, n_parent = grown
    n_f[count], n_op[count], n_thr[count], n_parent[count] = feature, op, threshold, parent
    return (n_f, n_op, n_thr, n_parent), count


def _search(features, data, marks, slots, slot, indicator, ones, g, h, tot_g, tot_h,
            tot_count, labels, head_mode, params, inv_scale, min_coverage, min_quality,
            scratch, out):
    """One search of ``features`` over the coverage of ``slot``: what the search kept of
    another coverage is forgotten first (``CpuBackend.restore_coverage``)."""
    forget_marks(marks)
    _SEARCH(features, *data, slots[slot], indicator, ones, g, h, tot_g, tot_h, tot_count,
            labels, head_mode, params, inv_scale, min_coverage, min_quality, scratch, *out)



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
    slots[slot][:] = slots[parent_slot]
    forget_marks(marks)  # (the search's kept entries are another coverage's)
    d_ind[e] = _APPLY(f, op, thr, data, slots[slot], parent_indicator)
    d_slot[e], d_q[e], d_count[e], d_label[e], d_node[e] = slot, q, count, label, node
    copy_row(d_g[e], g_row)
    copy_row(d_h[e], h_row)
    if 0 < plan.max_head_refinements <= depth:
        labels, params = refine.fix_head(plan.head_mode, labels, params, label, g_row, h_row,
                                         inv_scale, multi_output)
    d_nlab[e] = labels.shape[0]
    d_labels[e, :labels.shape[0]] = labels
    d_params[e, :] = params
    d_refinable[e] = count > plan.min_coverage


@register_jitable
def _keep_entry(dst, e, src, i):
    """Entry ``e`` of ``dst`` is entry ``i`` of ``src``, no longer refinable."""
    dst[0][e], dst[1][e], dst[2][e], dst[3][e] = src[0][i], src[1][i], src[2][i], False
    dst[6][e], dst[7][e], dst[9][e], dst[11][e] = src[6][i], src[7][i], src[9][i], src[11][i]
    copy_row(dst[4][e], src[4][i])
    copy_row(dst[5][e], src[5][i])
    copy_row(dst[8][e], src[8][i])
    copy_row(dst[10][e], src[10][i])


@register_jitable
def _free_row(used):
    """A candidate row not in use, marked used."""
    for r in range(used.shape[0]):
        if not used[r]:
            used[r] = True
            return r
    return -1


@register_jitable
def _add_candidate(cand, live, nl, used, q, kind, order, entry):
    """Add a candidate with sort key (``q``, ``kind``, ``order``) of entry ``entry``;
    returns its row (the caller fills a refinement's fields)."""
    r = _free_row(used)
    cand[0][r], cand[1][r], cand[2][r], cand[3][r] = q, kind, order, entry
    live[nl] = r
    return r


@register_jitable
def _truncate(cand, live, nl, used, width):
    """Sort the ``nl`` live candidates, keep the best ``width`` (freeing the others'
    rows); returns how many are live."""
    _sort_live(cand, live[:nl])
    for t in range(width, nl):
        used[live[t]] = False
    return min(nl, width)


def _grow_py(rng, plan, data, marks, mask, ones, g, h, tot_g, tot_h, labels, inv_scale,
             scratch, out, result, conditions, n_cond, beam):
    """Grow one rule by beam search (``beam_search.induce_rule_beam``): the signature and
    result of ``fused_rules._grow_py`` (``result`` unused; ``beam``: :func:`buffers`). The
    rule's coverage is left in ``mask``."""
    slots, cur, nxt = beam[0], beam[1], beam[2]
    root = slots.shape[0] - 1
    slots[root][:] = 0
    nodes = (np.empty(_NODES, np.int64), np.empty(_NODES, np.int8),
             np.empty(_NODES, np.float32), np.empty(_NODES, np.int64))
    n_cur, nodes, n_nodes = _FIRST_BEAM(rng, plan, data, marks, slots, ones, g, h, tot_g,
                                        tot_h, labels, inv_scale, scratch, out, cur, nodes)
    if n_cur == 0:
        return n_cond, 0, labels, plan.params, -1, mask.shape[0]
    depth = 1
    while plan.max_conditions == 0 or depth < plan.max_conditions:
        n_cur, refined, nodes, n_nodes = _NEXT_BEAM(
            rng, plan, data, marks, slots, ones, g, h, inv_scale, scratch, out, cur, nxt,
            beam[3], beam[4], beam[5], n_cur, depth, nodes, n_nodes)
        cur, nxt = nxt, cur
        if not refined:
            break
        depth += 1
    return _finish(cur, slots, nodes, mask, tot_g, tot_h, conditions, n_cond)


def _first_beam(rng, plan, data, marks, slots, ones, g, h, tot_g, tot_h, labels, inv_scale,
                scratch, out, dst, nodes):
    """The empty rule's best refinements as the beam ``dst``, best first, the features
    redrawn while the drawn ones offer none (``beam_search._first_beam``): (entries,
    nodes, number of nodes)."""
    out_q, out_op, out_thr, out_cnt, out_label, out_g, out_h = out
    root = slots.shape[0] - 1
    all_features = np.arange(plan.num_features)
    redraws = plan.redraws
    while True:
        features = _draw(rng, plan, all_features)
        _SEARCH_AT(features, data, marks, slots, root, 0, ones, g, h, tot_g, tot_h,
                slots.shape[1], labels, plan.head_mode, plan.params, inv_scale,
                plan.min_coverage, -np.inf, scratch, out)
        best = _best_slots(out_q, out_op, plan.beam_width)
        if best.shape[0] > 0 or redraws <= 0:
            break
        redraws -= 1
    for e in range(best.shape[0]):
        j = best[e]
        nodes, node = _node(nodes, e, features[j], out_op[j], out_thr[j], -1)
        ref = (features[j], out_op[j], out_thr[j], out_q[j], out_cnt[j], out_label[j],
               out_g[j], out_h[j])
        _MAKE_ENTRY(dst, e, e, slots, data, marks, root, 0, ref, labels, plan.params, 1, node,
                    plan, inv_scale, scratch[1])
    return best.shape[0], nodes, best.shape[0]


def _next_beam(rng, plan, data, marks, slots, ones, g, h, inv_scale, scratch, out, cur, nxt,
               cand, live, used, n_cur, depth, nodes, n_nodes):
    """The beam after ``cur`` (``n_cur`` entries of ``depth`` conditions, best first) in
    ``nxt`` (``beam_search._next_beam``): (its entries, whether an entry found a
    refinement, nodes, number of nodes)."""
    width = plan.beam_width
    out_q, out_op, out_thr, out_cnt, out_label, out_g, out_h = out
    c_q, c_f, c_op, c_thr, c_cnt, c_label, c_g, c_h = (cand[0], cand[4], cand[5], cand[6],
                                                       cand[7], cand[8], cand[9], cand[10])
    slot, ind, quality, refinable, e_g, e_h, e_cnt = cur[:7]
    e_labels, e_nlab, e_params = cur[8], cur[9], cur[10]
    all_features = np.arange(plan.num_features)
    features = all_features
    drawn = False
    bound = quality[n_cur - 1]  # a refinement must beat the worst entry of the beam
    used[:] = False
    nl = order = 0
    refined = False
    for e in range(n_cur):
        found = 0
        if refinable[e]:
            if not drawn or plan.resample_features:
                features = _draw(rng, plan, all_features)
                drawn = True
            _SEARCH_AT(features, data, marks, slots, slot[e], ind[e], ones, g, h, e_g[e],
                    e_h[e], e_cnt[e], e_labels[e, :e_nlab[e]].copy(), plan.head_mode,
                    e_params[e].copy(), inv_scale, plan.min_coverage, bound, scratch, out)
            best = _best_slots(out_q, out_op, width)
            found = best.shape[0]
            for t in range(found):
                j = best[t]
                r = _add_candidate(cand, live, nl, used, out_q[j], 1, order, e)
                nl += 1
                order += 1
                c_f[r], c_op[r], c_thr[r] = features[j], out_op[j], out_thr[j]
                c_cnt[r], c_label[r] = out_cnt[j], out_label[j]
                copy_row(c_g[r], out_g[j])
                copy_row(c_h[r], out_h[j])
        if found > 0:
            refined = True
        elif nl < width or not quality[e] < bound:
            refinable[e] = False
            _add_candidate(cand, live, nl, used, quality[e], 0, order, e)
            nl += 1
            order += 1
        if nl >= width:
            nl = _truncate(cand, live, nl, used, width)
            bound = max(bound, c_q[live[nl - 1]])
    nl = _truncate(cand, live, nl, used, width)
    held = np.zeros(slots.shape[0], np.bool_)  # the slots of this depth's entries
    for e in range(n_cur):
        held[slot[e]] = True
    for t in range(nl):
        r = live[t]
        e = cand[3][r]
        if cand[1][r] == 0:
            _keep_entry(nxt, t, cur, e)
            continue
        free = 0
        while held[free]:
            free += 1
        held[free] = True
        nodes, node = _node(nodes, n_nodes, c_f[r], c_op[r], c_thr[r], cur[11][e])
        n_nodes += 1
        ref = (c_f[r], c_op[r], c_thr[r], c_q[r], c_cnt[r], c_label[r], c_g[r], c_h[r])
        _MAKE_ENTRY(nxt, t, free, slots, data, marks, slot[e], ind[e], ref,
                    e_labels[e, :e_nlab[e]].copy(), e_params[e].copy(), depth + 1, node,
                    plan, inv_scale, scratch[1])
    return nl, refined, nodes, n_nodes


@register_jitable
def _finish(beam, slots, nodes, mask, tot_g, tot_h, conditions, n_cond):
    """The best entry of the last ``beam`` as ``fused_rules._grow_py``'s result: its
    conditions written from ``n_cond`` on (root first), its coverage into ``mask``, its
    sums into ``tot_g``, ``tot_h``."""
    slot, ind, e_g, e_h, e_cnt, e_label = beam[0], beam[1], beam[4], beam[5], beam[6], beam[7]
    e_labels, e_nlab, e_params, e_node = beam[8], beam[9], beam[10], beam[11]
    n_f, n_op, n_thr, n_parent = nodes
    depth = 0
    node = e_node[0]
    while node >= 0:
        depth += 1
        node = n_parent[node]
    c_f, c_op, c_thr = conditions
    node = e_node[0]
    for c in range(n_cond + depth - 1, n_cond - 1, -1):
        c_f[c], c_op[c], c_thr[c] = n_f[node], n_op[node], n_thr[node]
        node = n_parent[node]
    mask[:] = slots[slot[0]]
    copy_row(tot_g, e_g[0])
    copy_row(tot_h, e_h[0])
    return (n_cond + depth, ind[0], e_labels[0, :e_nlab[0]].copy(), e_params[0].copy(),
            e_label[0], e_cnt[0])
