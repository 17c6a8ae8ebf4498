"""The histograms of a CUDA search: the sampled features' slots, which of them fit in
shared memory, and the launches of the CUDA C kernels of ``kernels/histogram.cu`` (CuPy
``RawModule``) that build them.

A search (``find_best_refinement``, a device-resident block of ``refine``) lays the sampled
features out in slots, one histogram row per bin: the features whose bins fit in the
device's shared memory first (``histogram_shared``, in groups of consecutive slots that
share one pass over the statistics), then the others (``histogram_global``, global atomics;
every feature with ``force_global_atomics``). :class:`HistogramBuilder` holds these methods
of ``CudaBackend``.

Shapes and dtypes (S sampled features, R = slot_offset[S] histogram rows, K labels, W >= K
Hessian columns): features int64 (S,) (host, slot order on the device); slot_offset int64
(S + 1,); group offsets int64 (G_shared + 1 + 2,); hist_g int64 (R, K), hist_h int64
(R, W), hist_count int64 (R,) (device).
"""

import math

import numpy as np

from gpurules.backends.cuda import sources
from gpurules.data.binning import rows_of

HIST_ITEMS_PER_THREAD = 16  # (example, label) entries per histogram thread, at least
_MAX_GRID_Y = 65535
_DEFAULT_SHARED_BYTES = 48 * 1024  # usable without opting in
_GROUP_SHARED_BYTES = 48 * 1024  # the most shared memory of a group of several features
_MODULES = {}  # device index -> cupy.RawModule of histogram.cu


def raw_module(cp, device_index):
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


def view_rows(rows):
    """The histogram views' row count for ``rows`` used rows (int >= 0): ``rows`` rounded
    up to a multiple of a quarter of its highest power of two (at most 4 distinct counts per
    octave, at most 25 % more rows; exact below 8)."""
    rows = int(rows)
    if rows < 8:
        return rows
    step = 1 << (rows.bit_length() - 3)
    return -(-rows // step) * step


class HistogramBuilder:
    """The histogram methods of ``CudaBackend`` (a base class of it): they read the fit's
    state that the backend sets (``g``, ``h``, ``bin_index``, ``_num_bins``, ``_covered``,
    ``_lens``, ``_step``, ``_v``, the device's ``_shared_limit`` and ``_sm_count``, the
    ``_hist`` kernels) and use its ``_buffer``, ``_upload_record``, ``_weights``,
    ``_blocks``, ``_nb`` and ``_widths``."""

    def _in_shared(self, features):
        """bool (S,): which of the sampled ``features`` (host int64) get the shared-memory
        histogram kernel (their bins fit, and global atomics are not forced)."""
        K, W = self.g.shape[1], self.h.shape[1]
        need = shared_histogram_bytes(self._num_bins[features], K, W)
        return (need <= self._shared_limit) & (not self.force_global_atomics)

    def _slot_order(self, features):
        """int64 (S,): the histogram slots' order of ``features``: those of
        ``histogram_shared`` first, then those of ``histogram_global``, each group in the
        given order."""
        return np.argsort(~self._in_shared(features), kind="stable")

    def _slot_offset(self, features):
        """int64 (S + 1,): slot ``s`` (``features[s]``) owns the histogram rows
        ``slot_offset[s] .. slot_offset[s + 1] - 1``."""
        return np.concatenate([[0], np.cumsum(self._num_bins[features])]).astype(np.int64)

    def _histogram_views(self, rows):
        """Point ``hist_g`` int64 (C, K), ``hist_h`` int64 (C, W) and ``hist_count`` int64
        (C,) (and their Numba views) at one buffer of the fit, ``_hist_all`` int64
        (C (K + W + 1),): the three one after the other, with room for ``C =
        view_rows(rows)`` >= ``rows`` rows; the kernels use the first ``rows`` (the slots').

        Rounding the row count up keeps the views few: the sampled features' bins differ
        from step to step, and each new shape would cost three new Numba views (64 us each
        on an H200) and, past ``MAX_VIEWS``, the loss of every cached one. The CuPy views of
        a row count are kept with the buffer's views, so a step slices nothing."""
        K, W = self.g.shape[1], self.h.shape[1]
        C = view_rows(rows)
        key = ("histograms", "views", C)  # dropped with the buffer (``_buffer``)
        kept = self._buffer_views.get(key)
        if kept is None:
            buf = self._buffer("histograms", (C * (K + W + 1),), np.int64)
            kept = self._buffer_views[key] = (buf, buf[:C * K].reshape(C, K),
                                              buf[C * K:C * (K + W)].reshape(C, W),
                                              buf[C * (K + W):])
        self._hist_all, self.hist_g, self.hist_h, self.hist_count = kept
        for name in ("hist_g", "hist_h", "hist_count"):
            self._v[name] = self._nb(getattr(self, name))

    def _group_offsets(self, features):
        """int64 (G_shared + 1 + 2,): the group offsets of the ``histogram_shared`` launch
        over the first slots of ``features`` (host int64, slot order), then those of the
        ``histogram_global`` launch over the rest (one group, [0, S_global]); each launch's
        offsets count from its own first slot. Shared groups are consecutive slots whose
        rows fit in ``_GROUP_SHARED_BYTES`` together (a wider slot alone), so one pass
        over the statistics serves a whole group (within the device's shared memory)."""
        K, W = self.g.shape[1], self.h.shape[1]
        shared = int(self._in_shared(features).sum())
        per_row = shared_histogram_bytes(1, K, W)
        cap = min(_GROUP_SHARED_BYTES, self._shared_limit)
        offsets, rows = [0], 0
        for s, bins in enumerate(self._num_bins[features[:shared]]):
            if rows and (rows + bins) * per_row > cap:
                offsets.append(s)
                rows = 0
            rows += int(bins)
        if shared:
            offsets.append(shared)
        offsets += [0, features.shape[0] - shared]
        return np.asarray(offsets, np.int64)

    def build_histograms(self, features, weights, uploaded=None, step=None, layout=None):
        """Fill ``hist_g``, ``hist_h``, ``hist_count`` (device) for the sampled ``features``
        (host int64 (S,)) from the covered examples with ``weights`` (host int32 (n,) or
        ``None``), one slot of rows per feature (``slots``: the features in slot order and
        the slot offsets, host). Features whose bins fit in shared memory use
        ``histogram_shared`` in groups (:meth:`_group_offsets`), the others (or all, with
        ``force_global_atomics``) ``histogram_global``. ``uploaded``: (features, slot
        offsets, group offsets) on the device, the features already in slot order
        (:meth:`_slot_order`). ``step``: the refinement step whose covered list is read
        (default: the current one). ``layout``: the same slot and group offsets on the host
        (computed when None)."""
        K, W = self._widths()
        if uploaded is None:
            features = features[self._slot_order(features)]
        if layout is None:
            layout = self._slot_offset(features), self._group_offsets(features)
        slot_offset, groups = layout
        if uploaded is None:
            uploaded = self._upload_record(features, slot_offset, groups)
        features_dev, self._slot_dev, groups_dev = uploaded
        step = self._step if step is None else step
        S = features.shape[0]
        self.slots = (features, slot_offset)
        self._histogram_views(int(slot_offset[-1]))
        weights_dev = self._weights(weights)
        self._hist["zero_histograms"](
            (self._blocks(int(slot_offset[-1]) * W), 1), (self.threads,),
            (self._slot_dev, np.int32(S), np.int32(K), np.int32(W), self.hist_g, self.hist_h,
             self.hist_count))
        G = groups.shape[0] - 3  # shared groups
        shared = int(groups[G]) if G else 0
        if shared:
            rows = np.diff(slot_offset[groups[:G + 1]])
            need = int(shared_histogram_bytes(rows, K, W).max())
            self._launch_histogram(features_dev[:shared], shared, groups_dev[:G + 1], weights_dev,
                                   need, step)
        if shared < S:
            self._launch_histogram(features_dev[shared:], S - shared, groups_dev[G + 1:],
                                   weights_dev, 0, step)

    def _launch_histogram(self, slots_dev, S, groups_dev, weights_dev, shared_bytes, step):
        """One histogram launch over the ``S`` features ``slots_dev`` (device int64) in the
        groups ``groups_dev`` (device int64 (G + 1,)) from the covered list of refinement
        step ``step``: the first ``S`` slots of ``build_histograms`` when ``shared_bytes`` >
        0 (shared memory privatised), else its last ``S`` slots (global atomics)."""
        n, K = self.g.shape
        W = self.h.shape[1]
        G = groups_dev.shape[0] - 1
        first = 0 if shared_bytes else self._slot_dev.shape[0] - 1 - S
        chunks = math.ceil(n * W / (self.threads * HIST_ITEMS_PER_THREAD))
        chunks = max(1, min(chunks, math.ceil(4 * self._sm_count / G)))
        kernel = self._hist["histogram_shared" if shared_bytes else "histogram_global"]
        if shared_bytes > _DEFAULT_SHARED_BYTES and \
                kernel.max_dynamic_shared_size_bytes < shared_bytes:
            kernel.max_dynamic_shared_size_bytes = shared_bytes
        slot = step % self._lens.size
        args = (slots_dev, np.int32(S), self._slot_dev[first:], groups_dev, np.int32(G),
                self.bin_index, self._covered[step % 2], self._lens[slot:slot + 1],
                weights_dev, self.g, self.h, np.int32(K), np.int32(W), np.int32(n),
                np.int32(self.bin_index.shape[0]), self.hist_g, self.hist_h, self.hist_count)
        kernel((chunks, min(G, _MAX_GRID_Y)), (self.threads,), args, shared_mem=shared_bytes)

    def partial_histograms(self, features, weights):
        """The histogram rows of the sampled ``features`` over the covered examples, for a
        caller that sums them with other backends' rows (a distributed fit,
        ``backends/dask``): what ``CpuBackend.partial_histograms`` returns, bit for bit.
        One :meth:`build_histograms` (one host->device copy of the slots) and one
        device->host copy of the whole histogram buffer per call.

        Args:
            features: int64 (S,) distinct sampled features (host).
            weights: host int32 (n,) instance weights, or None (unit weights).

        Returns:
            host int64 (R, K + W + 1): the rows ``bin_offset[f] .. bin_offset[f + 1] - 1``
            of each sampled feature in the order of ``features`` (``R`` = their bins), the
            gradient sums in columns ``:K``, the Hessian sums in ``K:K + W``, the count last;
            rows with count 0 are all zero (the build zeroes every slot first).
        """
        features = np.ascontiguousarray(features, np.int64)
        K, W = self._widths()
        if features.size == 0:
            return np.zeros((0, K + W + 1), np.int64)
        with self._on_device():
            self.build_histograms(features, weights)
            flat = self.cp.asnumpy(self._hist_all)
        _, slot_offset = self.slots
        R, C = int(slot_offset[-1]), self.hist_count.shape[0]  # used rows, view rows
        rows = np.concatenate((flat[:C * K].reshape(C, K)[:R],
                               flat[C * K:C * (K + W)].reshape(C, W)[:R],
                               flat[C * (K + W):C * (K + W) + R, None]), axis=1)
        slot = np.argsort(self._slot_order(features))  # features[i] is in slot slot[i]
        return rows[rows_of(slot_offset, slot)]
