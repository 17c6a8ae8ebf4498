"""CudaBackend: the backend protocol on one GPU (histogram search).

Everything a fit needs stays on the device for the whole fit (CuPy arrays): the binned
matrix, labels, scores, statistics, coverage mask and histograms. ``refine_rule`` runs
blocks of refinement steps on the device (``refine``): per block the host sends one packed
record (every step's sampled features, the head's labels and parameters: one host->device
copy) and receives one (the steps' conditions, the last one's sums and the state: one
device->host copy). A single ``find_best_refinement`` (SeCo, tests) sends one record and
receives the ``out_*`` arrays of the search (S entries and S*(K+W) sums);
``partial_histograms`` (a partition of a distributed fit, ``backends/dask``) sends the
slots and receives the histogram rows of the sampled features (one copy each). The instance
weights are uploaded once per rule. Every device array is allocated once per fit: the
per-fit arrays in ``start_fit``, the scratch of the searches (histograms, outputs, work
arrays) on first use, as views of buffers that grow only when a larger sample needs it
(``device_memory``: ``_buffer``; ``fit_memory_bytes`` is the estimate that is checked
against the device's free memory). Histograms are built by the CUDA C kernels of
``kernels/histogram.cu`` (CuPy ``RawModule``; the slots and launches: ``histograms``); the
threshold scan (``histogram_search``), a block's choice of each step's refinement (``refine``), the
statistics (``statistics``) and the coverage (``coverage``) are Numba CUDA kernels, listed
by name in ``kernels``.

Statistics: ``g`` int64 (n, K) and ``h`` int64 (n, W), ``W = K`` for decomposable losses and
count statistics, ``W = K (K + 1) / 2`` (packed Hessians) for a ``NonDecomposableLossSpec``,
encoded as the CPU backend encodes them. Every head mode uses the one parallel scan of
``histogram_search`` (prefix sums over the bins, one thread per candidate, the first best
per slot); with packed Hessians only the heads solved as systems.

CuPy and Numba CUDA are imported when a backend is constructed, never at module import.
Both libraries launch on one stream of the backend's own (non-blocking, created with the
backend), so their kernels run in the order they are issued whatever stream the caller has
made current (a fit inside a user's ``with cupy.cuda.Stream(non_blocking=True):`` is
ordered as any other); device->host copies synchronise that stream.
"""

import contextlib
import logging
import math

import numpy as np

from gpurules.backends.cuda import launches, sources
from gpurules.backends.cuda.device_memory import DeviceMemory, fit_memory_bytes
from gpurules.backends.cuda.histograms import (HIST_ITEMS_PER_THREAD, WIDE_HISTOGRAMS,
                                               HistogramBuilder, raw_module)
from gpurules.backends.cuda.searches import Searches
from gpurules.data.binning import bin_options
from gpurules.objectives.losses import is_regression, target_matrix
from gpurules.objectives.non_decomposable import NonDecomposableLossSpec, packed_size

_SCRATCH_BYTES = 64 << 20  # per-thread scratch of the non-decomposable statistics
MAX_VIEWS = 4096  # cached Numba views (``CudaBackend._nb``); all are dropped beyond it
LAUNCHERS = ("auto", "numba", "prepared", "direct")  # how the Numba kernels are launched (``launches``)
GRAPHS = ("auto", True, False)  # whether refinement blocks are replayed from CUDA graphs
logger = logging.getLogger("gpurules.cuda")


def _numba_stream(nb_cuda, stream):
    """The Numba view of the CuPy ``stream``. The CUDA simulator has no external streams
    and runs every launch synchronously, so there any Numba stream orders the same."""
    from numba import config

    if config.ENABLE_CUDASIM:
        return nb_cuda.stream()
    return nb_cuda.external_stream(stream.ptr)


def _auto_launcher():
    """``"prepared"`` where ``launches.check_internals`` passes, else ``"numba"`` (logged)."""
    try:
        launches.check_internals()
    except RuntimeError as exc:
        logger.info("CUDA launcher 'numba' (the prepared launches cannot run: %s)", exc)
        return "numba"
    return "prepared"


def _block_graphs(stream, setting, launcher):
    """A ``graphs.BlockGraphs`` on ``stream``, or None, for ``graphs=setting`` (True,
    False, ``"auto"``: graphs on a GPU with the prepared or direct launches, an INFO line
    where the numba launcher keeps them off). RuntimeError for True under the CUDA
    simulator."""
    from numba import config

    from gpurules.backends.cuda.graphs import BlockGraphs

    if setting is False:
        return None
    if config.ENABLE_CUDASIM:
        if setting == "auto":
            return None
        raise RuntimeError("graphs=True captures CUDA graphs on a GPU; the Numba CUDA "
                           "simulator has none (use graphs=False)")
    if setting == "auto" and launcher == "numba":
        logger.info("CUDA graphs off: they are replayed with the prepared or direct "
                    "launches, and the launcher is 'numba'")
        return None
    return BlockGraphs(stream)


def _check_graphs(graphs):
    if graphs not in GRAPHS or not isinstance(graphs, (bool, str)):
        raise ValueError(f"graphs must be one of {GRAPHS}, got {graphs!r}")


def _check_launcher(launcher):
    if launcher not in LAUNCHERS:
        raise ValueError(f"launcher must be one of {LAUNCHERS}, got {launcher!r}")


class CudaBackend(Searches, HistogramBuilder, DeviceMemory):
    """Histogram search and statistics on CUDA device ``device_index`` (the searches:
    ``searches.Searches``; the histograms: ``histograms.HistogramBuilder``; device memory
    and uploads: ``device_memory.DeviceMemory``).

    Args:
        device_index: int, the CUDA device.
        force_global_atomics: build every histogram with the global-atomics kernel (tests).
        wide_histograms: how the histograms of features whose bins do not fit in shared
            memory are built (``histograms``), the same sums whichever: ``"global"`` (the
            default: global atomics, each covered example's statistics read once for all of
            them), ``"by-slot"`` (the same one sampled feature after the other: the rows
            being added to can stay in the L2 cache) or ``"sorted"`` (warps walk each
            feature's examples in bin order, sorted once per fit, and write each bin's row
            once: no contended atomics; 8 bytes more device memory per example and wide
            feature). The last two are not yet measured on a GPU, so not the default
            (``compare_devices.py``'s ``cuda-hist-slot`` and ``cuda-hist-sorted``,
            ``gpu_diagnose.py``'s histograms part). Read when a fit starts.
        device_binning: bin dense numerical features equal-width on the device
            (:meth:`bin_features`; the host's bins bit for bit) instead of on the host. Not
            yet measured on a GPU, so off by default (``compare_devices.py``'s
            ``cuda-devbin``). Read when a fit bins.
        fused_search: each block of the search's candidates kernel sums its tile's bins in
            shared memory (``histogram_search``, the default) where that table fits, or
            (``False``) the prefix sums are made in place first, one more pass over the
            histograms (``compare_devices.py``'s ``cuda-hist-inplace``). The same results
            bit for bit. Read at every search.
        block_size: threads per block of the histogram and element-wise kernels (a multiple
            of 32; tests under the simulator use fewer).
        launcher: ``"prepared"`` (array arguments marshalled once, ``launches.
            PreparedLaunches``; a GPU and numba-cuda 0.30's internals only), ``"numba"``
            (numba-cuda's own launches, 3x the host time per launch on an H200) or
            ``"auto"`` (the default: ``"prepared"`` where it can run, else ``"numba"``
            with an INFO line on the ``gpurules.cuda`` logger saying why), or ``"direct"``
            (prepared, and each argument pattern's parameters packed once for
            ``cuLaunchKernel``: ``launches.DirectLaunches``, not yet run on a GPU). All
            give the same results bit for bit; ``launcher`` is the one chosen.
        graphs: ``True``: replay each refinement block's launches from a CUDA graph
            captured once (``graphs.BlockGraphs``; a GPU, not the simulator); ``False``:
            launch them one by one; ``"auto"`` (the default): graphs on a GPU with the
            prepared or direct launcher, else none (an INFO line says so where the
            launcher is ``"numba"``). On an H200 (docs/gpu-validation.md, 2026-11-30)
            graphs made a 100-rule fit at n = 1e4 2.4 to 3.8x faster, one at n = 1e5
            about 10 % faster and one at n = 1e6 neither. The same results bit for bit.
            The device counters and the phase profiler count and time single launches:
            they switch ``"auto"``'s graphs off while attached, and refuse ``True``.
            ``graphs`` is the setting given.
    """

    name = "cuda"
    requires_binned_features = True  # the histogram search only
    host_coverage = False  # covered_mask copies from the device
    narrow_head_search = False  # a fixed head is refined on this same backend
    fixes_partial_heads = False  # a block ends where a partial head is fixed

    def __init__(self, device_index=0, force_global_atomics=False, block_size=256,
                 launcher="auto", graphs="auto", wide_histograms="global",
                 device_binning=False, fused_search=True):
        if block_size % 32 or not 32 <= block_size <= 1024:
            raise ValueError(f"block_size must be a multiple of 32 in [32, 1024], got "
                             f"{block_size}")
        if wide_histograms not in WIDE_HISTOGRAMS:
            raise ValueError(f"wide_histograms must be one of {WIDE_HISTOGRAMS}, got "
                             f"{wide_histograms!r}")
        _check_launcher(launcher)
        _check_graphs(graphs)
        import cupy as cp
        from numba import cuda as nb_cuda

        from gpurules.backends.cuda import refine

        self.cp, self._nb_cuda, self._refine = cp, nb_cuda, refine
        self.set_launcher(launcher)  # the kernel modules (_kernels, _search_module)
        self.device_index = int(device_index)
        self._views = {}
        self.force_global_atomics = bool(force_global_atomics)
        self.wide_histograms = wide_histograms
        self.device_binning = bool(device_binning)
        self.fused_search = bool(fused_search)
        self.threads = int(block_size)
        self.device = f"cuda:{self.device_index}"
        with cp.cuda.Device(self.device_index), nb_cuda.gpus[self.device_index]:
            self._stream = cp.cuda.Stream(non_blocking=True)
            self._nb_stream = _numba_stream(nb_cuda, self._stream)
        self._graphs, self.graphs = None, graphs
        self.set_graphs(graphs)
        rt = cp.cuda.runtime
        self._sm_count = rt.deviceGetAttribute(rt.cudaDevAttrMultiProcessorCount,
                                               self.device_index)
        self._shared_limit = rt.deviceGetAttribute(
            rt.cudaDevAttrMaxSharedMemoryPerBlockOptin, self.device_index)
        with self._on_device():
            module = raw_module(cp, self.device_index)
            self._hist = {name: module.get_function(name) for name in sources.HISTOGRAM_KERNELS}

    def set_launcher(self, launcher):
        """Launch the Numba kernels with numba-cuda (``"numba"``), with the arguments
        marshalled once (``"prepared"``, ``launches``), with the parameters packed once
        (``"direct"``) or with the first of ``"prepared"`` and ``"numba"`` that can run here
        (``"auto"``); between fits only."""
        from gpurules.backends.cuda import histogram_search, kernels

        _check_launcher(launcher)
        if launcher == "auto":
            launcher = _auto_launcher()
        self.launcher, self._launches = launcher, None
        self._kernels, self._search_module = kernels, histogram_search
        if launcher in ("prepared", "direct"):
            launches.check_internals()
            self._launches = (launches.DirectLaunches if launcher == "direct" else
                              launches.PreparedLaunches)()
            self._kernels = launches.prepared_module(kernels, self._launches)
            self._search_module = launches.prepared_module(histogram_search, self._launches)
        if getattr(self, "graphs", None) == "auto":  # (not yet set in __init__)
            self.set_graphs("auto")

    def set_graphs(self, graphs):
        """Replay the refinement blocks' launches from CUDA graphs (``graphs.
        BlockGraphs``; True), launch them one by one (False), or the first where it can
        (``"auto"``; the class docstring); between fits only. RuntimeError for True under
        the CUDA simulator."""
        _check_graphs(graphs)
        self._graphs = _block_graphs(self._stream, graphs, self.launcher)
        self.graphs = graphs

    @contextlib.contextmanager
    def _on_device(self):
        """Make the device current for CuPy and Numba, and the backend's stream CuPy's
        current stream; small grids are by design, so Numba's low-occupancy warning is
        silenced."""
        with self.cp.cuda.Device(self.device_index), self._stream, \
                self._nb_cuda.gpus[self.device_index], launches.small_grids_quiet():
            yield

    def _nb(self, array):
        """The Numba view of the CuPy ``array`` (no copy, no stream synchronisation), made
        once per (address, shape, strides, dtype) and reused until the fit's buffers change.

        Every argument of every Numba launch passes through here. On an H200 (numba-cuda
        0.30.4, docs/gpu-validation.md) ``as_cuda_array`` cost 64 us per call, and a fresh
        view re-derives its Numba type at the launch: 63 wrappers per search step were half
        of a fit's time. Every array given here is a per-fit array or a view of a fit buffer
        (``_buffer``), which ``start_fit`` and a buffer's re-allocation forget (``_forget_
        views``), so a cached view never keeps freed memory alive or points at it."""
        key = (array.data.ptr, array.shape, array.strides, array.dtype.char)
        view = self._views.get(key)
        if view is None:
            if len(self._views) >= MAX_VIEWS:
                self._forget_views()
            view = self._views[key] = self._wrap(array)
        return view

    def _wrap(self, array):
        """A new Numba view of the CuPy ``array`` (``_nb``'s cache misses; the counters
        count these)."""
        return self._nb_cuda.as_cuda_array(array, sync=False)

    def _forget_views(self, buffer=None):
        """Drop the cached Numba views into the device array ``buffer`` (all of them for
        ``None``): it may be freed next."""
        if self._launches is not None:
            self._launches.forget()  # it keeps views by identity
        if self._graphs is not None:
            self._graphs.clear()  # they point at the buffers
        if buffer is None:
            self._views.clear()
            return
        lo = buffer.data.ptr
        hi = lo + buffer.nbytes
        for key in [key for key in self._views if lo <= key[0] < hi]:
            del self._views[key]

    def _config(self, blocks):
        """A Numba launch configuration: ``blocks`` of ``self.threads`` on the stream."""
        return blocks, self.threads, self._nb_stream

    def _blocks(self, work, items_per_thread=1):
        """Blocks of ``self.threads`` for a grid-stride kernel over ``work`` items: one item
        (at least ``items_per_thread``) per thread, at most enough to fill the device."""
        blocks = math.ceil(work / (self.threads * items_per_thread))
        return max(1, min(blocks, 32 * self._sm_count))


    # -- per-fit state ---------------------------------------------------------------
    def bin_features(self, X, nominal_mask, method, options):
        """The ``data.binning.bin_features(X, nominal_mask, method, **options,
        drop_empty=True)`` of a fit on this backend computed on the device (``binning``:
        its ``bin_index`` stays there; nominal columns are binned on the host), or None
        where the host bins: ``device_binning`` is off, or X is not a dense float32 matrix
        with a numerical feature binned equal-width (then an INFO line on the
        ``gpurules.cuda`` logger says why).
        ``options``: dict of bin_ratio, min_bins, max_bins."""
        if not self.device_binning:
            return None
        dense = isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype == np.float32
        why = (f"{method} binning" if method != "equal-width" else
               "no numerical feature" if np.all(nominal_mask) else
               None if dense else "not a dense float32 matrix")
        if why is not None:
            logger.info("gpurules: device_binning: the host bins these features (%s)", why)
            return None
        from gpurules.backends.cuda import binning

        return binning.bin_equal_width(self, X, nominal_mask, bin_options(method, **options))

    def start_fit(self, features, Y, loss, base_weight, scale, statistic_dtype=np.int64):
        """Upload the binned features (BinnedFeatures), labels uint8 (n, K) (regression
        targets: float64, ``losses.target_matrix``) and base weights float64 (n,); set the
        scores to 0 and compute the statistics. The statistics are int64 whatever
        ``statistic_dtype`` (``Backend.start_fit``): the kernels are compiled for int64
        rows, and the values, chosen by the scale, are the same."""
        from gpurules.backends.cuda import binning  # (numba.cuda: imported by __init__)

        cp = self.cp
        n, K = Y.shape
        self.features = features
        self.loss = -1 if loss is None else loss.code
        self.non_decomposable = isinstance(loss, NonDecomposableLossSpec)
        W = packed_size(K) if self.non_decomposable else K
        self.max_statistic = 0.0  # largest |non-decomposable statistic| seen (per unit weight)
        self._num_bins = np.diff(np.asarray(features.bin_offset, np.int64))
        widest = int(self._num_bins.max(initial=0))
        self._buffers, self._buffer_views, self._geometries = {}, {}, {}
        self._forget_views()
        need = fit_memory_bytes(n, features.num_features, K, W, widest,
                                8 if is_regression(loss) else 1,
                                self._wide_features((K, W)).shape[0])
        self._check_memory(need - binning.resident_bytes(features), "the fit")
        with self._on_device():
            self.bin_index, self.bin_min, self.bin_max = binning.device_arrays(cp, features)
            self.bin_offset = cp.asarray(np.ascontiguousarray(features.bin_offset, np.int64))
            self.nominal = cp.asarray(np.ascontiguousarray(features.nominal, np.bool_))
            self.Y = cp.asarray(target_matrix(loss, Y))  # float64 for regression
            self.base_weight = cp.asarray(np.ascontiguousarray(base_weight, np.float64))
            self.P = cp.zeros((n, K), np.float64)
            self.g = cp.zeros((n, K), np.int64)
            self.h = cp.zeros((n, W), np.int64)
            # the coverage in one array (a beam search's snapshot is one copy): the mask, the
            # compacted lists of two steps, the ring of their lengths
            self._coverage = cp.zeros(3 * n + self._kernels.RING, np.int32)
            self.mask = self._coverage[:n]
            self._covered = self._coverage[n:3 * n].reshape(2, n)
            self._lens = self._coverage[3 * n:]
            self._sums = cp.zeros(K + W + 1, np.int64)  # covered_totals: g | h | count
            self._ticket = cp.zeros(1, np.int32)  # covered_totals' last-block ticket
            self._partial = cp.empty(  # covered_totals' sums per block
                (self._blocks(n * W, HIST_ITEMS_PER_THREAD), K + W + 1), np.int64)
            self._ones = cp.ones(n, np.int32)
            self._weights_dev = cp.empty(n, np.int32)
            self._v = {name: self._nb(getattr(self, name)) for name in (
                "bin_index", "bin_offset", "bin_min", "bin_max", "nominal", "Y",
                "base_weight", "P", "g", "h", "mask")}
            self._sort_wide_features()
        self.indicator = 0
        self._weights_host = None
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
                self._kernels.compute_all_statistics[self._config(self._blocks(self.g.size))](
                    self.loss, v["Y"], v["P"], v["base_weight"], self.scale, v["g"], v["h"])
        self.reset_coverage()

    def set_statistics(self, g, h):
        """Replace the statistics by ``g``, ``h`` (host int64 (n, K)) for a fit started
        without a loss (learners whose statistics are counts); resets the coverage."""
        with self._on_device():
            self._upload(np.ascontiguousarray(g, np.int64), self.g)
            self._upload(np.ascontiguousarray(h, np.int64), self.h)
        self.reset_coverage()

    def covered_mask(self):
        """bool (n,) host array: the examples the current rule covers."""
        with self._on_device():
            return self.cp.asnumpy(self.mask == self.indicator)

    def rule_coverage(self, model):
        """int64 (R,): how many of the fit's examples satisfy each rule's body of ``model``
        (a ``RuleModel`` learned on this fit's bins), counted on the device
        (``coverage.count_covered``): ``rule_importance.coverage(model, X)`` of the
        training X, whose values every threshold of such a model splits as it splits the
        bins (``thresholds.bin_threshold``)."""
        if model.num_rules == 0:
            return np.zeros(0, np.int64)
        cp, wrap = self.cp, self._wrap  # (fresh views: these arrays live for this call)
        with self._on_device():  # (no empty device array: rules may have no condition)
            rules = [wrap(cp.asarray(np.resize(np.asarray(a, t), max(len(a), 1))))
                     for a, t in ((model.cond_feature, np.int32), (model.cond_op, np.int8),
                                  (model.cond_threshold, np.float32),
                                  (model.rule_cond_start, np.int64))]
            counts = cp.zeros(model.num_rules, np.int64)
            self._kernels.count_covered[self._config(self._blocks(self.mask.size))](
                *rules, self._v["bin_index"], self._v["bin_offset"], self._v["bin_min"],
                wrap(counts))
            return cp.asnumpy(counts)

    def reset_coverage(self):
        """Every example covered: mask 0 at indicator 0, the covered list = all examples.
        Remembers the refinement steps of the rule before (``last_rule_steps``)."""
        with self._on_device():
            self._kernels.reset_coverage[self._config(self._blocks(self.mask.size))](
                self._v["mask"], self._nb(self._covered[0]), self._nb(self._lens))
        self.last_rule_steps = getattr(self, "_step", 0)
        self.indicator = 0
        self._step = 0

    def set_coverage(self, mask, indicator):
        """Replace the coverage by ``mask`` (host int32 (n,)) at ``indicator`` (tests)."""
        listed = np.flatnonzero(np.asarray(mask) == indicator).astype(np.int32)
        covered = np.zeros(self.mask.size, np.int32)
        covered[:listed.size] = listed
        lens = np.zeros(self._lens.size, np.int32)
        lens[0] = listed.size
        with self._on_device():
            self._upload(np.ascontiguousarray(mask, np.int32), self.mask)
            self._upload(covered, self._covered[0])
            self._upload(lens, self._lens)
        self.indicator, self._step = int(indicator), 0

    def coverage_snapshot(self):
        """The current coverage, for :meth:`restore_coverage` (the beam search keeps one per
        rule of its beam): a device copy of the coverage (mask, covered lists, their
        lengths; one allocation from CuPy's memory pool, one copy, no host copy) with the
        indicator and step, an opaque record."""
        self._check_memory(self._coverage.nbytes, "a coverage snapshot (beam search)")
        with self._on_device():
            copy = self.cp.empty(self._coverage.shape, np.int32)  # (counted)
            copy[...] = self._coverage
        return copy, self.indicator, self._step

    def restore_coverage(self, snapshot):
        """Cover what :meth:`coverage_snapshot` recorded (one device copy on the stream)."""
        copy, self.indicator, self._step = snapshot
        with self._on_device():
            self._coverage[...] = copy

    def _covered_list(self):
        """(covered, lens, slot): the current compacted list of the covered examples,
        ``covered[:lens[slot]]`` (Numba views; see ``coverage``)."""
        return (self._nb(self._covered[self._step % 2]), self._nb(self._lens),
                self._step % self._lens.size)

    def _weights(self, weights):
        """Device instance weights int32 (n,): all ones for ``None``; otherwise uploaded once
        per weights array (the learner draws a new array per rule, never changed in place)."""
        if weights is None:
            return self._ones
        if weights is not self._weights_host:
            self._upload(np.ascontiguousarray(weights, np.int32), self._weights_dev)
            self._weights_host = weights
        return self._weights_dev

    def covered_totals(self, weights):
        """Sums over the covered examples with non-zero weight (int32 (n,), ``None`` = all
        ones): (g int64 (K,), h int64 (W,), count int)."""
        K, W = self.g.shape[1], self.h.shape[1]
        v = self._v
        with self._on_device():
            w = self._nb(self._weights(weights))
            self._kernels.covered_totals[self._config(self._partial.shape[0])](
                *self._covered_list(), w, v["g"], v["h"], self._nb(self._partial),
                self._nb(self._ticket), self._nb(self._sums))
            sums = self.cp.asnumpy(self._sums)
        return sums[:K].copy(), sums[K:K + W].copy(), int(sums[K + W])

    def _widths(self):
        """(K, W): the statistics' gradient and Hessian columns."""
        return self.g.shape[1], self.h.shape[1]

    # -- search: ``searches.Searches`` -------------------------------------------------
    def refine_rule(self, uniforms, labels, weights, totals, search, fix_label_after):
        """Refinement steps in device-resident blocks (``refine.py``; see
        ``Backend.refine_rule``): per block one host->device and one device->host copy.
        Of ``totals`` only the count goes to the device (in the search's state)."""
        self._check_head_mode(search.head_mode)
        return self._refine.refine_rule(self, uniforms, labels, weights, int(totals[2]),
                                        search, fix_label_after)

    def apply_refinement(self, refinement):
        """Restrict the coverage to the examples that satisfy the refinement's condition."""
        r, v, step = refinement, self._v, self._step
        with self._on_device():
            self._kernels.apply_binned_condition[self._config(self._blocks(self.mask.size))](
                int(r.feature), int(r.op), np.float32(r.threshold), v["bin_index"],
                v["bin_offset"], v["bin_min"], v["mask"], self.indicator,
                self._nb(self._covered[step % 2]), self._nb(self._covered[(step + 1) % 2]),
                self._nb(self._lens), step)
        self.indicator += 1
        self._step += 1

    def _apply_selected(self, record, r, cursor):
        """``coverage.apply_selected``: step ``r`` of a device-resident block at the
        refinement step and indicator ``cursor`` (device int64 (2,)); ``record``: the
        block's device arrays by name (``refine._RESULT_FIELDS``)."""
        v, nb = self._v, self._nb
        self._kernels.apply_selected[self._config(self._blocks(self.mask.size))](
            nb(record["feature"]), nb(record["op"]), nb(record["threshold"]), r,
            nb(record["state"]), v["bin_index"], v["bin_offset"], v["bin_min"], v["mask"],
            nb(self._covered), nb(self._lens), nb(cursor))

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
            scores_dev, labels_dev = (self._nb(a) for a in self._upload_record(
                np.ascontiguousarray(scores, np.float64), labels))
            work = self.mask.size * labels.size
            self._kernels.update_statistics[self._config(self._blocks(work))](
                self.loss, v["Y"], v["P"], v["base_weight"], self.scale, v["g"], v["h"],
                *self._covered_list(), labels_dev, scores_dev)

    def _encode_covered(self, labels, scores):
        """``statistics.encode_covered``: add ``scores`` (host float64 (m,)) to the
        covered examples' ``labels`` (host int32 (m,)) and re-encode their non-decomposable
        statistics; returns the largest |statistic| per unit weight computed (float)."""
        v, nb = self._v, self._nb
        n, K = self.g.shape
        W = self.h.shape[1]
        threads = min(n, self._blocks(n) * self.threads, _SCRATCH_BYTES // ((K + W) * 8))
        threads = max(threads, 1)
        with self._on_device():
            g_tmp = self._buffer("encode_g", (K, threads), np.float64)  # thread-minor
            h_tmp = self._buffer("encode_h", (W, threads), np.float64)
            largest = self._buffer("encode_largest", (threads,), np.float64)
            scores_dev, labels_dev = self._upload_record(scores, labels)
            self._kernels.encode_covered[self._config(self._blocks(threads))](
                self.loss, v["Y"], v["P"], v["base_weight"], self.scale, v["g"], v["h"],
                *self._covered_list(), nb(labels_dev), nb(scores_dev), nb(g_tmp),
                nb(h_tmp), nb(largest))
            return float(self.cp.asnumpy(largest).max())

    def training_scores(self):
        """float64 (n, K): the current scores of the training examples (host copy)."""
        with self._on_device():
            return self.cp.asnumpy(self.P)
