"""TURS candidate evaluation on the CPU (Numba): class-count histograms, then scores.

One compiled pass per phase and growth step scores every literal of every beam rule (a
``backends.base.CandidateBatch``): a histogram of the covered examples' classes per
(feature bin, column), a column being one local modelling group of one rule — the rule's
local group 0 holds the examples no rule of the set covers yet, so the covered and the
not-yet-covered counts come from one pass — then running sums over the bins of numeric
features, then ``objectives.mdl.literal_scores`` for every (rule, literal). Counts are
integers and scores fixed point: the CUDA backend (``backends/cuda/class_histograms.py``)
gives the same numbers.

Shapes and dtypes (n examples, A features, B bins in all, R rules, G_r columns of rule r,
S columns in all, C classes, L literals, M covered (rule, example) pairs):
    codes int32 (A, n): global bin (``bin_offset[f]`` + local bin) or -1 if missing;
    y int32 (n,); idx int64 (M,) covered examples; col int32 (M,) their columns;
    hist int64 (B * S * C,): per rule a C-contiguous (B, G_r, C) block;
    totals int64 (A * S * C,): per rule a C-contiguous (A, G_r, C) block;
    nonempty int64 (R, A); bin_offset int64 (A + 1,); numeric bool (A,);
    example_offset, group_offset int64 (R + 1,);
    lit_feat int32 (L,), lit_op int8 (L,), lit_arg int32 (L,); outputs (R, L).
Rule r's block of a flat array with ``rows`` rows per column starts at
``rows * C * group_offset[r]`` (:func:`_block`): each rule's histogram is contiguous, as
the one-rule passes had it (strided views of one (B, S, C) array were up to 1.7x slower to
score, and the histogram of all rules of a feature did not stay in the cache).
"""

import time

import numba
import numpy as np
from numba import prange

from gpurules.jit.cache import njit
from gpurules.jit.variants import Kernel
from gpurules.objectives import mdl
from gpurules.objectives.mdl import feature_running_sums, nonempty_bins

literal_scores = njit(mdl.literal_scores)


@njit
def _block(flat, rows, C, group_offset, r):
    """Rule r's C-contiguous (rows, G_r, C) view of ``flat`` (int64, rows * S * C)."""
    a, b = group_offset[r], group_offset[r + 1]
    return flat[rows * C * a:rows * C * b].reshape((rows, b - a, C))


def _class_histograms(codes, y, idx, col, example_offset, group_offset, bin_offset, C,
                      hist):
    """Fill ``hist`` with the covered examples' classes, one feature per thread (no races);
    a rule's rows of a feature are cleared just before they are filled (in the cache)."""
    B = bin_offset[-1]
    for f in prange(codes.shape[0]):
        row = codes[f]
        for r in range(group_offset.shape[0] - 1):
            h = _block(hist, B, C, group_offset, r)
            h[bin_offset[f]:bin_offset[f + 1]] = 0
            a = group_offset[r]
            for t in range(example_offset[r], example_offset[r + 1]):
                b = row[idx[t]]
                if b >= 0:
                    h[b, col[t] - a, y[idx[t]]] += 1


def _running_sums(hist, bin_offset, numeric, group_offset, C, totals, nonempty):
    """In place, per feature f (in parallel) and rule r: ``nonempty[r, f]`` = the cut
    points (numeric) or levels (nominal) of f that split rule r's covered examples, then
    inclusive prefix sums over the bins of f if it is numeric and rule r's ``totals[f]``
    = all its non-missing counts of f."""
    B, A = bin_offset[-1], bin_offset.shape[0] - 1
    for j in prange(A):
        f = np.int64(j)  # one signature of the callees in both forms (jit/variants.py)
        for r in range(group_offset.shape[0] - 1):
            h = _block(hist, B, C, group_offset, r)
            nonempty[r, f] = nonempty_bins(h, bin_offset, numeric, f)
            feature_running_sums(h, bin_offset, numeric, f, _block(totals, A, C,
                                                                   group_offset, r))


def _score_all(lit_feat, lit_op, lit_arg, bin_offset, numeric, hist, totals, nonempty,
               group_offset, fstate, ncuts, else_counts, union_counts, union_size, L2, CL,
               REG, base_model, new_feature_model, log2_features, literal_code, chunks, work,
               out_gain_incl, out_gain_excl, out_cov_incl, out_cov_excl, out_flags):
    """``literal_scores`` for every (rule, literal), in parallel over (rule, one of
    ``chunks`` runs of literals): the rule's views are made once per run (``chunks`` = 1
    serially: a run of all literals was measured faster than fixed runs of 256). ``work``
    int64 (K, L, 4, C): rule r's scratch is block ``r % K`` (K = 1 serial, K = R
    parallel)."""
    L, C = lit_feat.shape[0], else_counts.shape[0]
    B, A = bin_offset[-1], bin_offset.shape[0] - 1
    size = (L + chunks - 1) // chunks
    for p in prange((group_offset.shape[0] - 1) * chunks):
        r = p // chunks
        a, b = group_offset[r], group_offset[r + 1]
        h, t = _block(hist, B, C, group_offset, r), _block(totals, A, C, group_offset, r)
        u, s = union_counts[a:b], union_size[a:b]
        ne, fs, nc = nonempty[r], fstate[r], ncuts[r]
        w = work[r % work.shape[0]]
        gi, ge, ci, ce, fl = (out_gain_incl[r], out_gain_excl[r], out_cov_incl[r],
                              out_cov_excl[r], out_flags[r])
        start = (p - r * chunks) * size
        for lit in range(start, min(start + size, L)):
            literal_scores(np.int64(lit), lit_feat, lit_op, lit_arg, bin_offset, numeric, h,
                           t, ne, fs, nc, else_counts, u, s, L2, CL, REG, base_model[r],
                           new_feature_model[r], log2_features, literal_code, w, gi, ge,
                           ci, ce, fl)


class_histograms = Kernel(_class_histograms)
running_sums = Kernel(_running_sums)
score_all = Kernel(_score_all)
# element operations above which a phase runs on all Numba threads: a parallel region
# costs about 1 ms to wake the threads on a busy 2-core machine, more than a small pass
PARALLEL_WORK = 2_000_000
PHASES = ("histograms", "running_sums", "scores")


def _threads(work):
    """All of Numba's threads for a phase of ``work`` element operations above
    ``PARALLEL_WORK``, else one (the serial form: a small fit never compiles the
    parallel ones)."""
    return numba.get_num_threads() if work > PARALLEL_WORK else 1


def _chunks(threads, R):
    """Runs of literals per rule in the scoring: 1 on one thread, else enough for about
    four parallel iterations per thread."""
    return 1 if threads <= 1 else max(1, -(-4 * threads // R))


class CpuClassHistograms:
    """The CPU evaluator of candidate literals (protocol ``backends.base.ClassHistograms``).

    Args:
        data: ``learners.turs_data.TursData`` of the fit (codes, bins, literals, tables).
        timings: None, or a dict to which each call adds the process CPU seconds of its
            phases (keys ``PHASES``) and 1 to ``"calls"`` (``benchmarks/turs_phases.py``).
    """

    device = "cpu"

    def __init__(self, data, timings=None):
        self.data = data
        self.timings = timings
        self._work = np.zeros((0, len(data.lit_feat), 4, data.n_classes), dtype=np.int64)

    def _run(self, phase, kernel, threads, *args):
        if self.timings is None:
            return kernel.run(threads, *args)
        start = time.process_time()
        kernel.run(threads, *args)
        self.timings[phase] = self.timings.get(phase, 0.0) + time.process_time() - start

    def _work_rows(self, threads, R):
        """Scratch int64 (K, L, 4, C) for ``literal_scores``: K = 1 on one thread (every
        rule reuses the block, which stays in the cache), K = R on several (a block per
        rule, so that no two threads share one); grown, never shrunk."""
        rows = 1 if threads <= 1 else R
        if self._work.shape[0] < rows:
            self._work = np.zeros((rows,) + self._work.shape[1:], dtype=np.int64)
        return self._work[:rows]

    def evaluate(self, batch):
        """Score every literal as a refinement of every rule of ``batch`` (a
        ``CandidateBatch``). Returns (gain_incl, gain_excl, cov_incl, cov_excl, flags):
        new arrays (R, L), int64 and int8."""
        d = self.data
        R, S, L, C = batch.n_rules, batch.n_columns, len(d.lit_feat), d.n_classes
        out = (np.empty((R, L), np.int64), np.empty((R, L), np.int64),
               np.empty((R, L), np.int64), np.empty((R, L), np.int64),
               np.empty((R, L), np.int8))
        if self.timings is not None:
            self.timings["calls"] = self.timings.get("calls", 0) + 1
        if R == 0:
            return out
        hist = np.empty(d.n_bins * S * C, dtype=np.int64)
        totals = np.empty(d.n_features * S * C, dtype=np.int64)
        nonempty = np.empty((R, d.n_features), dtype=np.int64)
        self._run("histograms", class_histograms, _threads(len(batch.idx) * d.n_features),
                  d.codes, d.y, batch.idx, batch.col, batch.example_offset,
                  batch.group_offset, d.bin_offset, C, hist)
        threads = _threads(L * S * C * 4)
        self._run("running_sums", running_sums, threads, hist, d.bin_offset, d.numeric,
                  batch.group_offset, C, totals, nonempty)
        L2, CL, REG = d.tables
        self._run("scores", score_all, threads, d.lit_feat, d.lit_op, d.lit_arg,
                  d.bin_offset, d.numeric, hist, totals, nonempty, batch.group_offset,
                  batch.fstate, batch.ncuts, batch.else_counts, batch.union_counts,
                  batch.union_size, L2, CL, REG, batch.base_model, batch.new_feature_model,
                  d.log2_features, mdl.LITERAL_CODES.index(d.literal_code),
                  _chunks(threads, R), self._work_rows(threads, R), *out)
        return out
