"""CpuBackend: the backend protocol implemented with Numba on the host."""

import numpy as np

from gpurules.backends.base import Refinement
from gpurules.backends.cpu import exact_search, sparse_search, statistics
from gpurules.backends.cpu.threads import thread_limit
from gpurules.data.sparse import SparseSortedFeatures


class CpuBackend:
    """Exact pre-sorted search and statistics on the CPU.

    Args:
        n_threads_search: threads for the search over features (1 = serial kernel).
        n_threads_update: threads for the statistics update.
    """

    name = "cpu"

    def __init__(self, n_threads_search=1, n_threads_update=1):
        self.n_threads_search = n_threads_search
        self.n_threads_update = n_threads_update

    # -- per-fit state ---------------------------------------------------------------
    def start_fit(self, features, Y, loss, base_weight, scale):
        n, K = Y.shape
        self.features = features
        self.Y = np.ascontiguousarray(Y, dtype=np.uint8)
        self.loss = loss.code
        self.base_weight = np.ascontiguousarray(base_weight, dtype=np.float64)
        self.P = np.zeros((n, K), dtype=np.float64)
        self.g = np.empty((n, K), dtype=np.int64)
        self.h = np.empty((n, K), dtype=np.int64)
        self.mask = np.zeros(n, dtype=np.int32)
        self.indicator = 0
        self.set_scale(scale)

    def set_scale(self, scale):
        self.scale = float(scale)
        self.inv_scale = 1.0 / self.scale
        statistics.compute_all(self.loss, self.Y, self.P, self.base_weight, self.scale,
                               self.g, self.h)

    def reset_coverage(self):
        self.mask[:] = 0
        self.indicator = 0

    def covered_totals(self, weights):
        return statistics.covered_totals(self.mask, self.indicator, weights, self.g, self.h)

    # -- search ----------------------------------------------------------------------
    def find_best_refinement(self, features, labels, weights, totals, search):
        S, K = features.shape[0], self.g.shape[1]
        out_q = np.full(S, -np.inf)
        out_op = np.full(S, -1, dtype=np.int8)
        out_thr = np.zeros(S, dtype=np.float32)
        out_cnt = np.zeros(S, dtype=np.int64)
        out_label = np.full(S, -1, dtype=np.int32)
        out_g = np.zeros((S, K), dtype=np.int64)
        out_h = np.zeros((S, K), dtype=np.int64)
        common = (self.mask, self.indicator, weights, self.g, self.h, totals[0], totals[1],
                  totals[2], labels, search.head_mode, search.l1, search.l2, self.inv_scale,
                  search.min_coverage, search.min_quality, out_q, out_op, out_thr, out_cnt,
                  out_label, out_g, out_h)
        fs = self.features
        if isinstance(fs, SparseSortedFeatures):
            module = sparse_search
            args = (features, fs.indptr, fs.index, fs.value, fs.n_neg, fs.n_present,
                    fs.nominal, fs.sparse_value) + common
        else:
            module = exact_search
            args = (features, fs.sorted_index, fs.sorted_value, fs.n_present, fs.nominal) + common
        if self.n_threads_search > 1 and S > 1:
            with thread_limit(self.n_threads_search):
                module.search_parallel(*args)
        else:
            module.search_serial(*args)
        found = out_op >= 0
        if not found.any():
            return None
        # the first of the best in sampled order: deterministic whatever the threads
        j = int(np.argmax(np.where(found, out_q, -np.inf)))
        return Refinement(int(features[j]), int(out_op[j]), out_thr[j], float(out_q[j]),
                          int(out_cnt[j]), int(out_label[j]), out_g[j].copy(), out_h[j].copy())

    def apply_refinement(self, refinement):
        fs, r = self.features, refinement
        if isinstance(fs, SparseSortedFeatures):
            self.indicator = sparse_search.apply_condition(
                r.feature, r.op, r.threshold, fs.indptr, fs.index, fs.value, fs.sparse_value,
                self.mask, self.indicator)
        else:
            exact_search.apply_condition(r.feature, r.op, r.threshold, fs.sorted_index,
                                         fs.sorted_value, fs.n_present, self.mask,
                                         self.indicator)
            self.indicator += 1

    # -- statistics ------------------------------------------------------------------
    def update_statistics(self, labels, scores):
        args = (self.loss, self.Y, self.P, self.base_weight, self.scale, self.g, self.h,
                self.mask, self.indicator, np.asarray(labels, np.int32),
                np.asarray(scores, np.float64))
        if self.n_threads_update > 1:
            with thread_limit(self.n_threads_update):
                statistics.update_covered_parallel(*args)
        else:
            statistics.update_covered_serial(*args)

    def training_scores(self):
        """float64 (n, K): the current scores of the training examples."""
        return self.P
