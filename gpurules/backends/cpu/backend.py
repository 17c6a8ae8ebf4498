"""CpuBackend: the backend protocol implemented with Numba on the host."""

import contextlib

import numpy as np

from gpurules.backends.base import select_refinement
from gpurules.backends.cpu import exact_search, histogram_search, sparse_search, statistics
from gpurules.backends.cpu.threads import thread_limit
from gpurules.data.binning import BinnedFeatures
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
        self.loss = -1 if loss is None else loss.code
        self.base_weight = np.ascontiguousarray(base_weight, dtype=np.float64)
        self.P = np.zeros((n, K), dtype=np.float64)
        self.g = np.zeros((n, K), dtype=np.int64)
        self.h = np.zeros((n, K), dtype=np.int64)
        self.mask = np.zeros(n, dtype=np.int32)
        self._ones = np.ones(n, dtype=np.int32)
        self._buffers = None
        if isinstance(features, BinnedFeatures):  # histograms of the sampled features
            B = features.total_bins
            self.hist_g = np.zeros((B, K), np.int64)
            self.hist_h = np.zeros((B, K), np.int64)
            self.hist_count = np.zeros(B, np.int64)
        self.indicator = 0
        self.set_scale(scale)

    def set_scale(self, scale):
        self.scale = float(scale)
        self.inv_scale = 1.0 / self.scale
        if self.loss >= 0:
            statistics.compute_all(self.loss, self.Y, self.P, self.base_weight, self.scale,
                                   self.g, self.h)
        self._statistics_changed()

    def set_statistics(self, g, h):
        """Replace the statistics by ``g``, ``h`` (int64 (n, K)) for a fit started without a
        loss (learners whose statistics are counts); resets the coverage."""
        np.copyto(self.g, g)
        np.copyto(self.h, h)
        self._statistics_changed()

    def _statistics_changed(self):
        self.reset_coverage()
        # sums over all examples with unit weights, kept up to date by update_statistics
        self._all_totals = statistics.covered_totals(self.mask, 0, self._ones, self.g, self.h)

    def covered_mask(self):
        """bool (n,): the examples the current rule covers."""
        return self.mask == self.indicator

    def reset_coverage(self):
        self.mask[:] = 0
        self.indicator = 0
        self._full_coverage = True

    def covered_totals(self, weights):
        """Sums over the covered examples; ``weights=None`` means unit weights."""
        if weights is None and self._full_coverage:
            g_tot, h_tot, count = self._all_totals
            return g_tot.copy(), h_tot.copy(), count
        return statistics.covered_totals(self.mask, self.indicator, self._weights(weights),
                                         self.g, self.h)

    def _weights(self, weights):
        return self._ones if weights is None else weights

    # -- search ----------------------------------------------------------------------
    def find_best_refinement(self, features, labels, weights, totals, search):
        S = features.shape[0]
        scratch, *outs = self._result_buffers(S)
        settings = (labels, search.head_mode, search.params, self.inv_scale,
                    search.min_coverage, search.min_quality)
        parallel = self.n_threads_search > 1 and S > 1
        with thread_limit(self.n_threads_search) if parallel else contextlib.nullcontext():
            self._search(features, self._weights(weights), totals, settings, scratch, outs,
                         parallel)
        return select_refinement(features, outs)

    def _search(self, features, weights, totals, settings, scratch, outs, parallel):
        """Run the search kernel of the feature representation; results land in ``outs``."""
        fs = self.features
        if isinstance(fs, BinnedFeatures):
            histogram_search.build_histograms(
                features, fs.bin_index, fs.bin_offset, self.mask, self.indicator, weights,
                self.g, self.h, self.hist_g, self.hist_h, self.hist_count, parallel=parallel)
            histogram_search.scan_histograms(
                features, fs.bin_offset, fs.bin_min, fs.bin_max, fs.nominal, self.hist_g,
                self.hist_h, self.hist_count, *settings, *outs, parallel=parallel)
            return
        if isinstance(fs, SparseSortedFeatures):
            module = sparse_search
            data = (fs.indptr, fs.index, fs.value, fs.n_neg, fs.n_present, fs.nominal,
                    fs.sparse_value)
        else:
            module = exact_search
            data = (fs.sorted_index, fs.sorted_value, fs.n_present, fs.nominal)
        kernel = module.search_parallel if parallel else module.search_serial
        kernel(features, *data, self.mask, self.indicator, weights, self.g, self.h, *totals,
               *settings, scratch, *outs)

    def _result_buffers(self, S):
        """Per-feature scratch sums and result slots (see exact_search), reused across
        refinements."""
        buffers = self._buffers
        if buffers is None or buffers[0].shape[0] != S:  # S is fixed per fit in practice
            K = self.g.shape[1]
            buffers = (np.empty((S, 8, K), np.int64), np.empty(S), np.empty(S, np.int8),
                       np.empty(S, np.float32), np.empty(S, np.int64), np.empty(S, np.int32),
                       np.empty((S, K), np.int64), np.empty((S, K), np.int64))
            self._buffers = buffers
        return buffers

    def apply_refinement(self, refinement):
        self._full_coverage = False
        fs, r = self.features, refinement
        if isinstance(fs, BinnedFeatures):
            histogram_search.apply_binned_condition(r.feature, r.op, r.threshold, fs.bin_index,
                                                    fs.bin_offset, fs.bin_min, self.mask,
                                                    self.indicator)
            self.indicator += 1
        elif isinstance(fs, SparseSortedFeatures):
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
        chunks = self.n_threads_update
        K = self.g.shape[1]
        delta_g = np.zeros((chunks, K), np.int64)
        delta_h = np.zeros((chunks, K), np.int64)
        args = (self.loss, self.Y, self.P, self.base_weight, self.scale, self.g, self.h,
                self.mask, self.indicator, np.asarray(labels, np.int32),
                np.asarray(scores, np.float64), delta_g, delta_h)
        if chunks > 1:
            with thread_limit(chunks):
                statistics.update_covered_parallel(*args)
        else:
            statistics.update_covered_serial(*args)
        g_tot, h_tot, count = self._all_totals
        self._all_totals = (g_tot + delta_g.sum(0), h_tot + delta_h.sum(0), count)

    def training_scores(self):
        """float64 (n, K): the current scores of the training examples."""
        return self.P
