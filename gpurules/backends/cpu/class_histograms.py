"""TURS candidate evaluation on the CPU (Numba): class-count histograms, then scores.

One batched pass per beam rule: a histogram of the covered examples' classes per
(feature bin, local modelling group) — local group 0 holds the examples no rule of the set
covers yet, so the covered and the not-yet-covered counts come from one pass — running sums
over the bins of numeric features, then ``objectives.mdl.literal_scores`` for every candidate
literal. Counts are integers and scores fixed point: the CUDA backend
(``backends/cuda/class_histograms.py``) gives the same numbers.

Shapes and dtypes (n examples, A features, B bins in all, G local groups, C classes,
L literals, m covered examples):
    codes int32 (A, n): global bin (``bin_offset[f]`` + local bin) or -1 if missing;
    y int32 (n,); idx int64 (m,) covered examples; grp int32 (m,) their local groups;
    hist, totals int64 (B, G, C), (A, G, C); bin_offset int64 (A + 1,); numeric bool (A,);
    lit_feat int32 (L,), lit_op int8 (L,), lit_arg int32 (L,).
"""

import numpy as np
from numba import prange

from gpurules.jit.cache import njit
from gpurules.jit.variants import PARALLEL, SERIAL, Kernel
from gpurules.objectives import mdl
from gpurules.objectives.mdl import feature_running_sums

literal_scores = njit(mdl.literal_scores)


def _class_histograms(codes, y, idx, grp, hist):
    """Add the covered examples' classes into ``hist`` (cleared first), one feature per
    thread (no races)."""
    A = codes.shape[0]
    hist[:] = 0
    for f in prange(A):
        row = codes[f]
        for t in range(idx.shape[0]):
            b = row[idx[t]]
            if b >= 0:
                hist[b, grp[t], y[idx[t]]] += 1


def _running_sums(hist, bin_offset, numeric, totals, nonempty):
    """In place: inclusive prefix sums over the bins of each numeric feature; ``totals[f]``
    = all non-missing counts of feature f; ``nonempty[f]`` = the cut points (numeric) or
    levels (nominal) of f that split the covered examples."""
    for f in prange(bin_offset.shape[0] - 1):
        feature_running_sums(hist, bin_offset, numeric, np.int64(f), totals, nonempty)


def _score_all(lit_feat, lit_op, lit_arg, bin_offset, numeric, hist, totals, nonempty,
               fstate, ncuts, else_counts, union_counts, union_size, L2, CL, REG,
               base_model, new_feature_model, log2_features, work, out_gain_incl,
               out_gain_excl, out_cov_incl, out_cov_excl, out_flags):
    """``literal_scores`` for every literal (one per iteration, in parallel)."""
    for lit in prange(lit_feat.shape[0]):
        literal_scores(np.int64(lit), lit_feat, lit_op, lit_arg, bin_offset, numeric, hist, totals,
                       nonempty, fstate, ncuts, else_counts, union_counts, union_size, L2,
                       CL, REG, base_model, new_feature_model, log2_features, work,
                       out_gain_incl, out_gain_excl, out_cov_incl, out_cov_excl, out_flags)


def _both(fn):
    """(serial, parallel) forms of ``fn`` (``jit.Kernel``: distinct names, so distinct
    cache entries; each compiled on first use): a parallel region costs a thread wake-up
    (about 1 ms on a busy 2-core machine), more than a small problem's whole pass."""
    kernel = Kernel(fn)
    return kernel.form(SERIAL), kernel.form(PARALLEL)


class_histograms = _both(_class_histograms)
running_sums = _both(_running_sums)
score_all = _both(_score_all)
PARALLEL_WORK = 2_000_000  # element operations above which the parallel versions run


class CpuClassHistograms:
    """The CPU evaluator of candidate literals (see ``learners/turs.py`` for the protocol).

    Args:
        data: ``learners.turs_data.TursData`` of the fit (codes, bins, literals, tables).
    """

    device = "cpu"

    def __init__(self, data):
        self.data = data
        L, C = len(data.lit_feat), data.n_classes
        self._work = np.zeros((L, 4, C), dtype=np.int64)
        self._out = (np.empty(L, np.int64), np.empty(L, np.int64), np.empty(L, np.int64),
                     np.empty(L, np.int64), np.empty(L, np.int8))

    def evaluate(self, idx, grp, fstate, ncuts, else_counts, union_counts, union_size,
                 base_model, new_feature_model):
        """Score every literal as a refinement of one beam rule.

        Args:
            idx: int64 (m,) the rule's covered examples; grp: int32 (m,) their local groups.
            fstate: int8 (A,) the rule's per-feature state (``mdl.F_*``); ncuts: int64 (A,)
                the non-empty cut points of its features when they entered it.
            else_counts: int64 (C,); union_counts: int64 (G, C); union_size: int64 (G,).
            base_model, new_feature_model: fixed-point model bits (see ``literal_scores``).
        Returns:
            (gain_incl, gain_excl, cov_incl, cov_excl, flags): arrays over literals (copies).
        """
        d = self.data
        G = union_counts.shape[0]
        hist = np.empty((d.n_bins, G, d.n_classes), dtype=np.int64)
        totals = np.empty((d.n_features, G, d.n_classes), dtype=np.int64)
        nonempty = np.empty(d.n_features, dtype=np.int64)
        par = int(len(idx) * d.n_features > PARALLEL_WORK)
        class_histograms[par](d.codes, d.y, idx, grp, hist)
        par = int(len(d.lit_feat) * G * d.n_classes * 4 > PARALLEL_WORK)
        running_sums[par](hist, d.bin_offset, d.numeric, totals, nonempty)
        L2, CL, REG = d.tables
        score_all[par](d.lit_feat, d.lit_op, d.lit_arg, d.bin_offset, d.numeric, hist,
                       totals, nonempty, fstate, ncuts, else_counts, union_counts,
                       union_size, L2, CL, REG, np.int64(base_model),
                       np.int64(new_feature_model), d.log2_features, self._work,
                       *self._out)
        return tuple(o.copy() for o in self._out)
