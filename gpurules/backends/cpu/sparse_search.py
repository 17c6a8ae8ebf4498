"""Three-phase exact search over sparse features (CPU, Numba; Rapp et al. 2023).

Per feature only the explicit entries are visited: phase I walks the values below the
implicit value ``z`` ascending, phase II the values above ``z`` descending, and phase III
scores the thresholds around the implicit entries from ``totals - phase sums``, so the
implicit entries are never enumerated. Nominal features are scored per value group
(``==`` / ``!=``), the implicit value's group again by difference.

Ties are broken canonically — larger quality, then smaller threshold, then ``<=`` before
``>`` (``==`` before ``!=``) — which is the order the dense search meets the same
candidates in, so dense and sparse inputs give the same model.
"""

import numba as nb
import numpy as np

from gpurules.backends.cpu.exact_search import _add, _midpoint, _side_quality, _store
from gpurules.backends.cpu.prediction import satisfies
from gpurules.model import OP_EQ, OP_GR, OP_LEQ, OP_NEQ


@nb.njit
def _evaluate(j, op, thr, count, complement, run_g, run_h, tot_g, tot_h, labels, head_mode,
              l1, l2, inv_scale, min_coverage, min_quality, out_q, out_op, out_thr, out_cnt,
              out_label, out_g, out_h):
    """Score one candidate and keep it in slot ``j`` if it is canonically better."""
    if count < min_coverage or count <= 0:
        return
    q, lab = _side_quality(run_g, run_h, tot_g, tot_h, complement, labels, head_mode,
                           inv_scale, l1, l2)
    if out_op[j] < 0:
        better = q > min_quality
    else:
        better = q > out_q[j] or (q == out_q[j] and (
            thr < out_thr[j] or (thr == out_thr[j] and op < out_op[j])))
    if better:
        out_q[j] = q
        out_op[j] = op
        out_thr[j] = thr
        out_cnt[j] = count
        out_label[j] = lab
        _store(out_g, out_h, j, run_g, run_h, tot_g, tot_h, complement)


def _search_sparse_feature(j, f, indptr, index, value, n_neg, n_present, nominal, z, mask,
                           indicator, weights, g, h, tot_g, tot_h, tot_count, labels,
                           head_mode, l1, l2, inv_scale, min_coverage, min_quality, out_q,
                           out_op, out_thr, out_cnt, out_label, out_g, out_h):
    K = g.shape[1]
    start, end = indptr[f], indptr[f + 1]
    pos_end = start + n_present[f]
    if pos_end < end:  # covered examples missing this feature leave its totals
        tot_g = tot_g.copy()
        tot_h = tot_h.copy()
        for p in range(pos_end, end):
            i = index[p]
            w = weights[i]
            if mask[i] == indicator and w != 0:
                for k in range(K):
                    tot_g[k] -= w * g[i, k]
                    tot_h[k] -= w * h[i, k]
                tot_count -= 1
    out_op[j] = -1
    is_nominal = nominal[f]
    args = (labels, head_mode, l1, l2, inv_scale, min_coverage, min_quality, out_q, out_op,
            out_thr, out_cnt, out_label, out_g, out_h)
    neg_g = np.zeros(K, np.int64)
    neg_h = np.zeros(K, np.int64)
    pos_g = np.zeros(K, np.int64)
    pos_h = np.zeros(K, np.int64)
    grp_g = np.zeros(K, np.int64)
    grp_h = np.zeros(K, np.int64)
    # phase I: below z, ascending; phase II: above z, descending
    extreme = np.zeros(2, np.float32)
    counts = np.zeros(2, np.int64)
    for phase in range(2):
        acc_g, acc_h = (neg_g, neg_h) if phase == 0 else (pos_g, pos_h)
        lo, hi, step = (start, start + n_neg[f], 1) if phase == 0 else \
            (pos_end - 1, start + n_neg[f] - 1, -1)
        cnt = 0
        gcnt = 0
        prev = z
        for p in range(lo, hi + step, step):
            at_end = p == hi
            if not at_end:
                i = index[p]
                w = weights[i]
                if mask[i] != indicator or w == 0:
                    continue
                v = value[p]
            if cnt > 0 and (at_end or v != prev):
                if is_nominal:
                    _evaluate(j, OP_EQ, prev, gcnt, False, grp_g, grp_h, tot_g, tot_h, *args)
                    _evaluate(j, OP_NEQ, prev, tot_count - gcnt, True, grp_g, grp_h, tot_g,
                              tot_h, *args)
                    grp_g[:] = 0
                    grp_h[:] = 0
                    gcnt = 0
                elif not at_end and phase == 0:
                    thr = _midpoint(prev, v)
                    _evaluate(j, OP_LEQ, thr, cnt, False, acc_g, acc_h, tot_g, tot_h, *args)
                    _evaluate(j, OP_GR, thr, tot_count - cnt, True, acc_g, acc_h, tot_g,
                              tot_h, *args)
                elif not at_end:
                    thr = _midpoint(v, prev)
                    _evaluate(j, OP_LEQ, thr, tot_count - cnt, True, acc_g, acc_h, tot_g,
                              tot_h, *args)
                    _evaluate(j, OP_GR, thr, cnt, False, acc_g, acc_h, tot_g, tot_h, *args)
            if at_end:
                break
            _add(acc_g, acc_h, g, h, i, w)
            if is_nominal:
                _add(grp_g, grp_h, g, h, i, w)
                gcnt += 1
            cnt += 1
            prev = v
        counts[phase] = cnt
        extreme[phase] = prev
    _phase_three(j, z, is_nominal, neg_g, neg_h, pos_g, pos_h, counts[0], counts[1],
                 extreme[0], extreme[1], tot_g, tot_h, tot_count, *args)


@nb.njit
def _phase_three(j, z, is_nominal, neg_g, neg_h, pos_g, pos_h, n_neg, n_pos, neg_max,
                 pos_min, tot_g, tot_h, tot_count, labels, head_mode, l1, l2, inv_scale,
                 min_coverage, min_quality, out_q, out_op, out_thr, out_cnt, out_label, out_g,
                 out_h):
    """Candidates next to the implicit value, scored from ``totals - phase sums``."""
    args = (labels, head_mode, l1, l2, inv_scale, min_coverage, min_quality, out_q, out_op,
            out_thr, out_cnt, out_label, out_g, out_h)
    n_zero = tot_count - n_neg - n_pos
    if is_nominal:
        if n_zero > 0:
            exp_g = neg_g + pos_g
            exp_h = neg_h + pos_h
            _evaluate(j, OP_EQ, z, n_zero, True, exp_g, exp_h, tot_g, tot_h, *args)
            _evaluate(j, OP_NEQ, z, n_neg + n_pos, False, exp_g, exp_h, tot_g, tot_h, *args)
        return
    if n_zero > 0:
        if n_neg > 0:
            thr = _midpoint(neg_max, z)
            _evaluate(j, OP_LEQ, thr, n_neg, False, neg_g, neg_h, tot_g, tot_h, *args)
            _evaluate(j, OP_GR, thr, tot_count - n_neg, True, neg_g, neg_h, tot_g, tot_h,
                      *args)
        if n_pos > 0:
            thr = _midpoint(z, pos_min)
            _evaluate(j, OP_LEQ, thr, tot_count - n_pos, True, pos_g, pos_h, tot_g, tot_h,
                      *args)
            _evaluate(j, OP_GR, thr, n_pos, False, pos_g, pos_h, tot_g, tot_h, *args)
    elif n_neg > 0 and n_pos > 0:
        thr = _midpoint(neg_max, pos_min)
        _evaluate(j, OP_LEQ, thr, n_neg, False, neg_g, neg_h, tot_g, tot_h, *args)
        _evaluate(j, OP_GR, thr, n_pos, True, neg_g, neg_h, tot_g, tot_h, *args)


_search_sparse_feature = nb.njit(_search_sparse_feature)


def _search_all_py(features, indptr, index, value, n_neg, n_present, nominal, z, mask,
                   indicator, weights, g, h, tot_g, tot_h, tot_count, labels, head_mode, l1,
                   l2, inv_scale, min_coverage, min_quality, out_q, out_op, out_thr, out_cnt,
                   out_label, out_g, out_h):
    for j in nb.prange(features.shape[0]):
        _search_sparse_feature(j, features[j], indptr, index, value, n_neg, n_present, nominal,
                               z, mask, indicator, weights, g, h, tot_g, tot_h, tot_count,
                               labels, head_mode, l1, l2, inv_scale, min_coverage, min_quality,
                               out_q, out_op, out_thr, out_cnt, out_label, out_g, out_h)


search_serial = nb.njit(cache=True)(_search_all_py)
search_parallel = nb.njit(cache=True, parallel=True)(_search_all_py)


@nb.njit(cache=True)
def apply_condition(f, op, threshold, indptr, index, value, z, mask, indicator):
    """Restrict the coverage to ``x_f op threshold``; returns the new indicator.

    If the implicit value satisfies the condition, only the explicit covered entries that
    do not are marked uncovered (-1) and the indicator stays; otherwise the satisfying
    explicit entries move to ``indicator + 1``. Implicit entries are never visited.
    """
    if satisfies(op, z, threshold):
        for p in range(indptr[f], indptr[f + 1]):
            i = index[p]
            if mask[i] == indicator and not satisfies(op, value[p], threshold):
                mask[i] = -1
        return indicator
    for p in range(indptr[f], indptr[f + 1]):
        i = index[p]
        if mask[i] == indicator and satisfies(op, value[p], threshold):
            mask[i] = indicator + 1
    return indicator + 1
