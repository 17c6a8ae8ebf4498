"""CudaBackend: the backend protocol on one GPU (histogram search).

Everything a fit needs stays on the device for the whole fit (CuPy arrays): the binned
matrix, labels, scores, statistics, coverage mask and histograms. Per refinement the host
sends the sampled features (and the instance weights once per rule) and receives only the
``out_*`` records of the search (S entries and S*(K+W) sums). Histograms are built by the CUDA
C kernels of ``kernels/histogram.cu`` (CuPy ``RawModule``); the scan, the statistics and the
coverage are Numba CUDA kernels (``gpurules.backends.cuda.kernels``).

Statistics: ``g`` int64 (n, K) and ``h`` int64 (n, W), ``W = K`` for decomposable losses and
count statistics, ``W = K (K + 1) / 2`` (packed Hessians) for a ``NonDecomposableLossSpec``,
encoded as the CPU backend encodes them. Heads scored as systems (``HEAD_MULTI_OUTPUT``:
complete/partial heads, GBLB) and ``HEAD_ND_SINGLE`` use the batched candidate search of
``multi_output_kernels``; the other head modes the per-feature scan of ``kernels``.

CuPy and Numba CUDA are imported when a backend is constructed, never at module import.
Both libraries launch on the legacy default stream of the device, so their kernels run in
the order they are issued.
"""

import contextlib
import math
import warnings

import numpy as np

from gpurules.backends.base import refine_stepwise, select_refinement
from gpurules.backends.cuda import sources
from gpurules.objectives.heads import HEAD_COMPLETE, HEAD_SINGLE
from gpurules.objectives.heuristics import HEAD_SECO_PARTIAL, HEAD_SECO_SINGLE
from gpurules.objectives.multi_output import HEAD_MULTI_OUTPUT, HEAD_ND_SINGLE, work_sizes
from gpurules.objectives.non_decomposable import NonDecomposableLossSpec, packed_size

# the head modes of objectives.quality that the per-feature scan implements (statistics of
# one width), and those of the batched candidate search (any width)
_SCAN_HEAD_MODES = (HEAD_COMPLETE, HEAD_SINGLE, HEAD_SECO_SINGLE, HEAD_SECO_PARTIAL)
_BATCHED_HEAD_MODES = (HEAD_MULTI_OUTPUT, HEAD_ND_SINGLE)
_SCRATCH_BYTES = 64 << 20  # per-thread scratch of the statistics and the batched search
_BATCHED_THREADS = 64  # threads per block of the candidate evaluation (one per candidate)

_HIST_ITEMS_PER_THREAD = 16  # (example, label) entries per histogram thread, at least
_MAX_GRID_Y = 65535
_DEFAULT_SHARED_BYTES = 48 * 1024  # usable without opting in
_MODULES = {}  # device index -> cupy.RawModule of histogram.cu


def _raw_module(cp, device_index):
    """The compiled ``histogram.cu`` for a device, compiled once per process and device."""
    module = _MODULES.get(device_index)
    if module is None:
        module = cp.RawModule(code=sources.kernel_source(sources.HISTOGRAM_SOURCE),
                              options=sources.RAW_MODULE_OPTIONS)
        _MODULES[device_index] = module
    return module


def shared_histogram_bytes(num_bins, K, W=None):
    """Dynamic shared memory (bytes) of ``histogram_shared`` for a feature with ``num_bins``,
    gradients of width ``K`` and Hessians of width ``W`` (default ``K``)."""
    W = K if W is None else W
    return num_bins * (K + W + 1) * 8


class CudaBackend:
    """Histogram search and statistics on CUDA device ``device_index``.

    Args:
        device_index: int, the CUDA device.
        force_global_atomics: build every histogram with the global-atomics kernel (tests).
        block_size: threads per block of the histogram and element-wise kernels (a multiple
            of 32; tests under the simulator use fewer).
    """

    name = "cuda"

    def __init__(self, device_index=0, force_global_atomics=False, block_size=256):
        import cupy as cp
        from numba import cuda as nb_cuda

        from gpurules.backends.cuda import kernels, multi_output_kernels

        self.cp, self._nb_cuda, self._kernels = cp, nb_cuda, kernels
        self._mo = multi_output_kernels
        self.device_index = int(device_index)
        self.force_global_atomics = bool(force_global_atomics)
        self.threads = int(block_size)
        self.device = f"cuda:{self.device_index}"
        rt = cp.cuda.runtime
        self._sm_count = rt.deviceGetAttribute(rt.cudaDevAttrMultiProcessorCount,
                                               self.device_index)
        self._shared_limit = rt.deviceGetAttribute(
            rt.cudaDevAttrMaxSharedMemoryPerBlockOptin, self.device_index)
        with self._on_device():
            module = _raw_module(cp, self.device_index)
            self._hist = {name: module.get_function(name) for name in sources.HISTOGRAM_KERNELS}

    @contextlib.contextmanager
    def _on_device(self):
        """Make the device current for CuPy and Numba; small grids (one block per sampled
        feature) are by design, so Numba's low-occupancy warning is silenced."""
        with self.cp.cuda.Device(self.device_index), self._nb_cuda.gpus[self.device_index], \
                warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*under-utilization")
            yield

    def _nb(self, array):
        """A Numba view of a CuPy array (no copy, no stream synchronisation)."""
        return self._nb_cuda.as_cuda_array(array, sync=False)

    def _blocks(self, work, items_per_thread=1):
        """Blocks of ``self.threads`` for a grid-stride kernel over ``work`` items: one item
        (at least ``items_per_thread``) per thread, at most enough to fill the device."""
        blocks = math.ceil(work / (self.threads * items_per_thread))
        return max(1, min(blocks, 32 * self._sm_count))

    # -- per-fit state ---------------------------------------------------------------
    def start_fit(self, features, Y, loss, base_weight, scale):
        """Upload the binned features (BinnedFeatures), labels uint8 (n, K) and base weights
        float64 (n,); set the scores to 0 and compute the statistics."""
        cp = self.cp
        n, K = Y.shape
        self.features = features
        self.loss = -1 if loss is None else loss.code
        self.non_decomposable = isinstance(loss, NonDecomposableLossSpec)
        W = packed_size(K) if self.non_decomposable else K
        self.max_statistic = 0.0  # largest |non-decomposable statistic| seen (per unit weight)
        self._num_bins = np.diff(np.asarray(features.bin_offset, np.int64))
        B = max(features.total_bins, 1)
        with self._on_device():
            self.bin_index = cp.asarray(np.ascontiguousarray(features.bin_index, np.int32))
            self.bin_offset = cp.asarray(np.ascontiguousarray(features.bin_offset, np.int64))
            self.bin_min = cp.asarray(np.ascontiguousarray(features.bin_min, np.float32))
            self.bin_max = cp.asarray(np.ascontiguousarray(features.bin_max, np.float32))
            self.nominal = cp.asarray(np.ascontiguousarray(features.nominal, np.bool_))
            self.Y = cp.asarray(np.ascontiguousarray(Y, np.uint8))
            self.base_weight = cp.asarray(np.ascontiguousarray(base_weight, np.float64))
            self.P = cp.zeros((n, K), np.float64)
            self.g = cp.zeros((n, K), np.int64)
            self.h = cp.zeros((n, W), np.int64)
            self.mask = cp.zeros(n, np.int32)
            self.hist_g = cp.zeros((B, K), np.int64)
            self.hist_h = cp.zeros((B, W), np.int64)
            self.hist_count = cp.zeros(B, np.int64)
            self._sums = cp.zeros(K + W + 1, np.int64)  # covered_totals: g | h | count
            self._v = {name: self._nb(getattr(self, name)) for name in (
                "bin_index", "bin_offset", "bin_min", "bin_max", "nominal", "Y",
                "base_weight", "P", "g", "h", "mask", "hist_g", "hist_h", "hist_count")}
        self.indicator = 0
        self._weights_host, self._weights_dev, self._ones = None, None, None
        self.set_scale(scale)

    def set_scale(self, scale):
        """Re-encode every statistic with a new fixed-point scale; resets the coverage."""
        self.scale = float(scale)
        self.inv_scale = 1.0 / self.scale
        v = self._v
        if self.non_decomposable:
            self.reset_coverage()  # every example covered: encode_covered re-encodes all
            self.max_statistic = self._encode_covered(np.zeros(0, np.int32), np.zeros(0))
        elif self.loss >= 0:
            with self._on_device():
                self._kernels.compute_all_statistics[self._blocks(self.g.size), self.threads](
                    self.loss, v["Y"], v["P"], v["base_weight"], self.scale, v["g"], v["h"])
        self.reset_coverage()

    def set_statistics(self, g, h):
        """Replace the statistics by ``g``, ``h`` (host int64 (n, K)) for a fit started
        without a loss (learners whose statistics are counts); resets the coverage."""
        with self._on_device():
            self.g[...] = self.cp.asarray(np.ascontiguousarray(g, np.int64))
            self.h[...] = self.cp.asarray(np.ascontiguousarray(h, np.int64))
        self.reset_coverage()

    def covered_mask(self):
        """bool (n,) host array: the examples the current rule covers."""
        with self._on_device():
            return self.cp.asnumpy(self.mask == self.indicator)

    def reset_coverage(self):
        with self._on_device():
            self.mask.fill(0)
        self.indicator = 0

    def _weights(self, weights):
        """Device instance weights int32 (n,): all ones for ``None``; otherwise uploaded once
        per weights array (the learner draws a new array per rule, never changed in place)."""
        if weights is None:
            if self._ones is None:
                self._ones = self.cp.ones(self.mask.size, np.int32)
            return self._ones
        if weights is not self._weights_host:
            self._weights_dev = self.cp.asarray(np.ascontiguousarray(weights, np.int32))
            self._weights_host = weights
        return self._weights_dev

    def covered_totals(self, weights):
        """Sums over the covered examples with non-zero weight (int32 (n,), ``None`` = all
        ones): (g int64 (K,), h int64 (W,), count int)."""
        K, W = self.g.shape[1], self.h.shape[1]
        v = self._v
        with self._on_device():
            w = self._nb(self._weights(weights))
            self._sums.fill(0)
            s = self._nb(self._sums)
            blocks = self._blocks(self.h.size, _HIST_ITEMS_PER_THREAD)
            self._kernels.covered_totals[blocks, self.threads](
                v["mask"], self.indicator, w, v["g"], v["h"], s[:K], s[K:K + W], s[K + W:])
            sums = self.cp.asnumpy(self._sums)
        return sums[:K].copy(), sums[K:K + W].copy(), int(sums[K + W])

    # -- search ----------------------------------------------------------------------
    def find_best_refinement(self, features, labels, weights, totals, search):
        """Best condition on the sampled ``features`` (int64 (S,)) over ``labels`` (int32).

        The per-feature totals come from the histograms themselves (they equal ``totals``
        for features without missing values), so ``totals`` is not needed on the device."""
        batched = search.head_mode in _BATCHED_HEAD_MODES
        if not batched and (search.head_mode not in _SCAN_HEAD_MODES or self.non_decomposable):
            raise ValueError(
                f"the CUDA backend does not implement head_mode {search.head_mode} for "
                f"{'non-' if self.non_decomposable else ''}decomposable statistics; known: "
                f"{_BATCHED_HEAD_MODES if self.non_decomposable else _SCAN_HEAD_MODES}")
        features = np.ascontiguousarray(features, np.int64)
        if features.size == 0:
            return None
        labels = np.ascontiguousarray(labels, np.int32)
        with self._on_device():
            features_dev = self.cp.asarray(features)  # uploaded once per refinement
            self.build_histograms(features, weights, features_dev)
            scan = self._scan_batched if batched else self._scan
            out = scan(features, features_dev, labels, search)
        return select_refinement(features, out)

    def build_histograms(self, features, weights, features_dev=None):
        """Fill ``hist_g``, ``hist_h``, ``hist_count`` (device) for the sampled ``features``
        (host int64 (S,)) from the covered examples with ``weights`` (host int32 (n,) or
        ``None``). Features whose bins fit in shared memory use ``histogram_shared``, the
        others (or all, with ``force_global_atomics``) ``histogram_global``.
        ``features_dev``: the same features already on the device, if at hand."""
        K, W = self.g.shape[1], self.h.shape[1]
        S = features.shape[0]
        if features_dev is None:
            features_dev = self.cp.asarray(features)
        weights_dev = self._weights(weights)
        zero_blocks = self._blocks(int(self._num_bins[features].max(initial=0)) * W)
        self._hist["zero_histograms"](
            (zero_blocks, min(S, _MAX_GRID_Y)), (self.threads,),
            (features_dev, np.int32(S), self.bin_offset, np.int32(K), np.int32(W),
             self.hist_g, self.hist_h, self.hist_count))
        need = shared_histogram_bytes(self._num_bins[features], K, W)
        in_shared = (need <= self._shared_limit) & (not self.force_global_atomics)
        for use_shared in (True, False):
            selected = in_shared == use_shared
            if selected.any():
                shared = int(need[selected].max()) if use_shared else 0
                group_dev = features_dev if selected.all() else \
                    self.cp.asarray(features[selected])
                self._launch_histogram(group_dev, int(selected.sum()), weights_dev, shared)

    def _launch_histogram(self, group_dev, S, weights_dev, shared_bytes):
        """One histogram launch over the ``S`` features ``group_dev`` (device int64); shared
        memory privatised when ``shared_bytes`` > 0, else global atomics."""
        n, K = self.g.shape
        W = self.h.shape[1]
        chunks = math.ceil(n * W / (self.threads * _HIST_ITEMS_PER_THREAD))
        chunks = max(1, min(chunks, math.ceil(4 * self._sm_count / S)))
        kernel = self._hist["histogram_shared" if shared_bytes else "histogram_global"]
        if shared_bytes > _DEFAULT_SHARED_BYTES and \
                kernel.max_dynamic_shared_size_bytes < shared_bytes:
            kernel.max_dynamic_shared_size_bytes = shared_bytes
        args = (group_dev, np.int32(S), self.bin_index, self.bin_offset,
                self.mask, np.int32(self.indicator), weights_dev, self.g, self.h,
                np.int32(K), np.int32(W), np.int32(n), np.int32(self.bin_index.shape[0]),
                self.hist_g, self.hist_h, self.hist_count)
        kernel((chunks, min(S, _MAX_GRID_Y)), (self.threads,), args, shared_mem=shared_bytes)

    def _scan(self, features, features_dev, labels, search):
        """Run ``scan_histograms`` (one block per sampled feature: host int64 (S,), and the
        same on the device) over ``labels`` (host int32 (m,)); returns the host ``out_*``
        arrays (q, op, thr, cnt, label, g, h)."""
        cp = self.cp
        S, K, m = features.shape[0], self.g.shape[1], labels.shape[0]
        out = (cp.full(S, -np.inf, np.float64), cp.full(S, -1, np.int8),
               cp.zeros(S, np.float32), cp.zeros(S, np.int64), cp.full(S, -1, np.int32),
               cp.zeros((S, K), np.int64), cp.zeros((S, K), np.int64))
        work = cp.empty((4, S, K), np.int64)
        gains = cp.empty((S, max(m, 1)), np.float64)
        threads = 32 if max(K, m) <= 32 else 128
        v = self._v
        head = (self._nb(features_dev), v["bin_offset"], v["bin_min"], v["bin_max"],
                v["nominal"], v["hist_g"], v["hist_h"], v["hist_count"],
                self._nb(cp.asarray(labels)), int(search.head_mode))
        tail = (self.inv_scale, int(search.min_coverage), float(search.min_quality),
                self._nb(work), self._nb(gains), *(self._nb(a) for a in out))
        if search.head_mode in (HEAD_COMPLETE, HEAD_SINGLE):  # boosting: [l1, l2] as scalars
            self._kernels.scan_histograms[S, threads](
                *head, float(search.params[0]), float(search.params[1]), *tail)
        else:
            params = self._nb(cp.asarray(np.ascontiguousarray(search.params, np.float64)))
            self._kernels.scan_histograms_params[S, threads](*head, params, *tail)
        return tuple(cp.asnumpy(a) for a in out)

    def _scan_batched(self, features, features_dev, labels, search):
        """The batched candidate search of ``multi_output_kernels`` over the histograms of
        ``features`` (host int64 (S,), and on the device) for ``labels`` (host int32 (m,)):
        prefix sums, every candidate scored in launches of up to ``_SCRATCH_BYTES`` of head
        work rows, one selection per feature. Returns the host ``out_*`` arrays."""
        cp, k, v, nb = self.cp, self._mo, self._v, self._nb
        S, K, W = features.shape[0], self.g.shape[1], self.h.shape[1]
        B = max(int(self._num_bins[features].max(initial=0)), 1)
        pre = (cp.empty((S, B + 1, K), np.int64), cp.empty((S, B + 1, W), np.int64),
               cp.empty((S, B + 1), np.int64))
        total = S * B * 2
        cand_q, cand_label = cp.empty(total, np.float64), cp.empty(total, np.int32)
        F, I = work_sizes(labels.shape[0])
        rows = max(1, min(total, _SCRATCH_BYTES // ((F + I) * 8)))
        work_f, work_i = cp.empty((rows, F), np.float64), cp.empty((rows, I), np.int64)
        out = (cp.full(S, -np.inf, np.float64), cp.full(S, -1, np.int8),
               cp.zeros(S, np.float32), cp.zeros(S, np.int64), cp.full(S, -1, np.int32),
               cp.zeros((S, K), np.int64), cp.zeros((S, W), np.int64))
        hists = (v["hist_g"], v["hist_h"], v["hist_count"])
        pre_v = tuple(nb(a) for a in pre)
        features_v = nb(features_dev)
        k.bin_prefix_sums[S, 32 if K + W < 64 else 128](features_v, v["bin_offset"], *hists,
                                                         *pre_v)
        settings = (nb(cp.asarray(labels)), int(search.head_mode),
                    nb(cp.asarray(np.ascontiguousarray(search.params, np.float64))),
                    self.inv_scale, int(search.min_coverage))
        for start in range(0, total, rows):
            blocks = math.ceil(min(rows, total - start) / _BATCHED_THREADS)
            k.evaluate_candidates[blocks, _BATCHED_THREADS](
                start, features_v, v["bin_offset"], v["nominal"], *hists, *pre_v, *settings,
                nb(work_f), nb(work_i), nb(cand_q), nb(cand_label))
        k.select_candidates[S, 32](
            features_v, v["bin_offset"], v["bin_min"], v["bin_max"], v["nominal"], *hists,
            *pre_v, nb(cand_q), nb(cand_label), float(search.min_quality),
            *(nb(a) for a in out))
        return tuple(cp.asnumpy(a) for a in out)

    def refine_rule(self, uniforms, labels, weights, totals, search, fix_label_after):
        """Refinement steps one by one (see ``Backend.refine_rule``); per step only the
        best refinement crosses to the host."""
        return refine_stepwise(self, uniforms, labels, weights, totals, search,
                               fix_label_after)

    def apply_refinement(self, refinement):
        """Restrict the coverage to the examples that satisfy the refinement's condition."""
        r, v = refinement, self._v
        with self._on_device():
            self._kernels.apply_binned_condition[self._blocks(self.mask.size), self.threads](
                int(r.feature), int(r.op), np.float32(r.threshold), v["bin_index"],
                v["bin_offset"], v["bin_min"], v["mask"], self.indicator)
        self.indicator += 1

    # -- statistics ------------------------------------------------------------------
    def update_statistics(self, labels, scores):
        """Add ``scores`` (float64 (m,)) to the covered examples' scores of ``labels``
        (int32 (m,)) and recompute their statistics."""
        labels = np.ascontiguousarray(labels, np.int32)
        if labels.size == 0:
            return
        if self.non_decomposable:
            largest = self._encode_covered(labels, np.ascontiguousarray(scores, np.float64))
            self.max_statistic = max(self.max_statistic, largest)
            return
        v = self._v
        with self._on_device():
            labels_dev = self._nb(self.cp.asarray(labels))
            scores_dev = self._nb(self.cp.asarray(np.ascontiguousarray(scores, np.float64)))
            work = self.mask.size * labels.size
            self._kernels.update_statistics[self._blocks(work), self.threads](
                self.loss, v["Y"], v["P"], v["base_weight"], self.scale, v["g"], v["h"],
                v["mask"], self.indicator, labels_dev, scores_dev)

    def _encode_covered(self, labels, scores):
        """``multi_output_kernels.encode_covered``: add ``scores`` (host float64 (m,)) to the
        covered examples' ``labels`` (host int32 (m,)) and re-encode their non-decomposable
        statistics; returns the largest |statistic| per unit weight computed (float)."""
        cp, v, nb = self.cp, self._v, self._nb
        n, K = self.g.shape
        W = self.h.shape[1]
        threads = min(n, self._blocks(n) * self.threads, _SCRATCH_BYTES // ((K + W) * 8))
        threads = max(threads, 1)
        with self._on_device():
            g_tmp, h_tmp = cp.empty((threads, K), np.float64), cp.empty((threads, W), np.float64)
            largest = cp.zeros(threads, np.float64)
            self._mo.encode_covered[self._blocks(threads), self.threads](
                self.loss, v["Y"], v["P"], v["base_weight"], self.scale, v["g"], v["h"],
                v["mask"], self.indicator, nb(cp.asarray(labels)), nb(cp.asarray(scores)),
                nb(g_tmp), nb(h_tmp), nb(largest))
            return float(largest.max())

    def training_scores(self):
        """float64 (n, K): the current scores of the training examples (host copy)."""
        with self._on_device():
            return self.cp.asnumpy(self.P)
