"""The histograms of a CUDA search: the sampled features' slots, which of them fit in
shared memory, and the launches of the CUDA C kernels of ``kernels/histogram.cu`` (CuPy
``RawModule``) that build them.

A search (``find_best_refinement``, a device-resident block of ``refine``) lays the sampled
features out in slots, one histogram row per bin: the features whose bins fit in the
device's shared memory first (``histogram_shared``, in groups of consecutive slots that
share one pass over the statistics), then the wide ones (every feature with
``force_global_atomics``), by the backend's ``wide_histograms``: ``"global"``
(``histogram_global``, global atomics, one pass over the statistics for all of them),
``"by-slot"`` (``histogram_global_by_slot``, the same one feature at a time) or
``"sorted"`` (``histogram_sorted``: warps walk each feature's examples in bin order, from
rows sorted once per fit by :meth:`HistogramBuilder._sort_wide_features`).
:class:`HistogramBuilder` holds these methods of ``CudaBackend``.

The launches' configurations (grid, dynamic shared memory, which kernels) and their
arguments depend on the fit and on the addresses of the uploaded draw only
(``_histogram_geometry``): the kernels read the draw's groups and the covered list's
refinement step on the device. So every refinement step of a fit launches the same, which a
captured CUDA graph needs (``graphs``).

Shapes and dtypes (S sampled features, R = slot_offset[S] histogram rows, K labels, W >= K
Hessian columns): features int64 (S,) (host, slot order on the device); slot_offset int64
(S + 1,); groups int64 (S + 5,) (both launches' groups, :meth:`HistogramBuilder.
_group_offsets`); cursor int64 (2,) (refinement step, indicator); hist_g int64 (C, K),
hist_h int64 (C, W), hist_count int64 (C,) (device; C >= R rows, enough for any S features
of the fit); with ``"sorted"``: ``_sorted`` int64 (F, n) (the F wide features' examples in
bin order, ``pack_sorted``'s entries) and ``_sorted_row`` int64 (A,) (each feature's row of
it, -1 for none).
"""

import math

import numpy as np

from gpurules.backends.cuda import sources
from gpurules.data.binning import rows_of

HIST_ITEMS_PER_THREAD = 16  # (example, label) entries per histogram thread, at least
_DEFAULT_SHARED_BYTES = 48 * 1024  # usable without opting in
_GROUP_SHARED_BYTES = 48 * 1024  # the most shared memory of a group of several features
_MODULES = {}  # device index -> cupy.RawModule of histogram.cu
WIDE_HISTOGRAMS = ("global", "by-slot", "sorted")  # how features too wide for shared memory
WIDE_KERNELS = dict(zip(WIDE_HISTOGRAMS, ("histogram_global", "histogram_global_by_slot",
                                          "histogram_sorted")))
_SORTED_STAGE_BYTES = 16  # histogram_sorted's dynamic shared memory per thread


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
    ``_lens``, ``_step``, ``_v``, ``mask``, ``indicator``, the device's ``_shared_limit``
    and ``_sm_count``, the ``_hist`` kernels, ``force_global_atomics``,
    ``wide_histograms``) and use its ``_buffer``, ``_upload_record``, ``_weights``,
    ``_blocks``, ``_nb`` and ``_widths``."""

    def _in_shared(self, features, widths=None):
        """bool, the shape of ``features`` (host int64): which of the sampled features get
        the shared-memory histogram kernel (their bins fit, and global atomics are not
        forced); from a per-fit table of every feature. ``widths``: (K, W) before the
        statistics exist (default: theirs)."""
        table = self._geometries.get("in_shared")
        if table is None:
            K, W = (self.g.shape[1], self.h.shape[1]) if widths is None else widths
            need = shared_histogram_bytes(self._num_bins, K, W)
            table = (need <= self._shared_limit) & (not self.force_global_atomics)
            self._geometries["in_shared"] = table
        return table[features]

    def _wide_setting(self):
        """The fit's ``wide_histograms``: the backend's when the fit started (``start_fit``
        reads it first; a change takes effect at the next fit)."""
        return self._geometries.setdefault("wide", self.wide_histograms)

    def _wide_features(self, widths=None):
        """int64 (F,): the fit's features that ``histogram_sorted`` needs sorted rows of
        (those not in shared memory, with ``wide_histograms == "sorted"``; else none)."""
        if self._wide_setting() != "sorted":
            return np.zeros(0, np.int64)
        every = np.arange(self._num_bins.shape[0])
        return every[~self._in_shared(every, widths)].astype(np.int64)

    def _sort_wide_features(self):
        """Per fit, for ``histogram_sorted``: each wide feature's examples in bin order
        (``cupy.argsort`` of its ``bin_index`` row, then ``pack_sorted``) into ``_sorted``
        int64 (F, n), and ``_sorted_row`` int64 (A,) (device) the row of each feature (-1:
        none). One argsort and one launch per wide feature; nothing when there are none."""
        cp = self.cp
        wide = self._wide_features()
        n = self.g.shape[0]
        row = np.full(self._num_bins.shape[0], -1, np.int64)
        row[wide] = np.arange(wide.shape[0])
        self._sorted = cp.empty((max(wide.shape[0], 1), n), np.int64)
        self._sorted_row = cp.asarray(row)
        for r, f in enumerate(wide.tolist()):
            bins = self.bin_index[f]
            self._hist["pack_sorted"]((self._blocks(n), 1), (self.threads,),
                                      (cp.argsort(bins), bins, np.int32(n), self._sorted[r]))

    def _slot_order(self, features):
        """int64, the shape of ``features`` ((S,) or a batch of draws (R, S)): the histogram
        slots' order of each draw: those of ``histogram_shared`` first, then those of
        ``histogram_global``, each group in the given order."""
        return np.argsort(~self._in_shared(features), axis=-1, kind="stable")

    def _slot_offset(self, features):
        """int64 (S + 1,) (or (R, S + 1) for a batch of draws (R, S)): slot ``s``
        (``features[s]``) owns the histogram rows ``slot_offset[s] .. slot_offset[s + 1] -
        1``."""
        bins = self._num_bins[features]
        out = np.zeros(bins.shape[:-1] + (bins.shape[-1] + 1,), np.int64)
        np.cumsum(bins, axis=-1, out=out[..., 1:])
        return out

    def _histogram_views(self, rows):
        """Point ``hist_g`` int64 (C, K), ``hist_h`` int64 (C, W) and ``hist_count`` int64
        (C,) (and their Numba views) at one buffer of the fit, ``_hist_all`` int64
        (C (K + W + 1),): the three one after the other, with room for ``C =
        view_rows(rows)`` >= ``rows`` rows; the kernels use the first ``rows`` (the slots').
        ``hist_flat``: hist_g and hist_h flat (the search's candidates kernels take them).

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
                                              buf[C * (K + W):], (buf[:C * K],
                                                                   buf[C * K:C * (K + W)]))
        self._hist_all, self.hist_g, self.hist_h, self.hist_count, self.hist_flat = kept
        for name in ("hist_g", "hist_h", "hist_count"):
            self._v[name] = self._nb(getattr(self, name))

    def _group_offsets(self, features):
        """int64 (S + 5,) (or (R, S + 5) for a batch of draws (R, S)): the groups of both
        histogram launches over ``features`` (host int64, slot order), each launch's count
        first (``kernels/histogram.cu``'s ``groups``): ``[G, o_0 .. o_G, o_G ..]`` (S + 2
        entries, padded with empty groups at the end) for ``histogram_shared`` over the
        first ``o_G`` slots, then ``[1, o_G, S]`` for ``histogram_global`` over the rest.
        Shared groups are consecutive slots whose rows fit in ``_GROUP_SHARED_BYTES``
        together (a wider slot alone), so one pass over the statistics serves a whole group
        (within the device's shared memory). The width depends on S only, so every draw of
        a fit has the same layout."""
        if features.ndim == 2:
            return np.array([self._group_offsets(row) for row in features], np.int64)
        K, W = self.g.shape[1], self.h.shape[1]
        S = features.shape[0]
        shared = int(self._in_shared(features).sum())
        cap = min(_GROUP_SHARED_BYTES, self._shared_limit) // shared_histogram_bytes(1, K, W)
        offsets, rows = [0], 0
        for s, bins in enumerate(self._num_bins[features[:shared]].tolist()):
            if rows and rows + bins > cap:  # the group's rows would not fit
                offsets.append(s)
                rows = 0
            rows += bins
        if shared:
            offsets.append(shared)
        G = len(offsets) - 1
        return np.array([G] + offsets + [shared] * (S + 1 - len(offsets)) + [1, shared, S],
                        np.int64)

    def _histogram_geometry(self, S):
        """(rows, shared bytes, histogram blocks, kernels) of every histogram build over
        ``S`` sampled features in this fit, whichever features are drawn: the most
        histogram rows of a draw (its S widest features'), the most dynamic shared memory
        of a ``histogram_shared`` group, the blocks of a launch, and the kernels launched
        (``histogram_shared`` where a feature's bins fit in shared memory, ``histogram_
        global`` where one's do not). Fixed per fit, so a device-resident block's launches
        are the same at every step (``refine``); computed once per ``S``."""
        kept = self._geometries.get(S)
        if kept is not None:
            return kept
        K, W = self._widths()
        n = self.g.shape[0]
        shared = self._in_shared(np.arange(self._num_bins.shape[0]))
        rows = int(np.sort(self._num_bins)[::-1][:S].sum())
        need = np.sort(shared_histogram_bytes(self._num_bins[shared], K, W))[::-1][:S]
        cap = min(_GROUP_SHARED_BYTES, self._shared_limit)
        shared_bytes = int(min(max(cap, need[0]), need.sum())) if need.size else 0
        groups = min(S, int(shared.sum()))  # the most groups of a shared launch
        chunks = math.ceil(n * W / (self.threads * HIST_ITEMS_PER_THREAD))
        blocks = max(groups, 1, min(chunks * max(groups, 1), 4 * self._sm_count))
        kernels = tuple(name for name, used in (
            ("histogram_shared", groups > 0),
            (WIDE_KERNELS[self._wide_setting()], not shared.all())) if used)
        kept = self._geometries[S] = (rows, shared_bytes, blocks, kernels)
        return kept

    def build_histograms(self, features, weights, uploaded=None, layout=None):
        """Fill ``hist_g``, ``hist_h``, ``hist_count`` (device) for the sampled ``features``
        (host int64 (S,)) from the covered examples with ``weights`` (host int32 (n,) or
        ``None``), one slot of rows per feature (``slots``: the features in slot order and
        the slot offsets, host). Features whose bins fit in shared memory use
        ``histogram_shared`` in groups (:meth:`_group_offsets`), the others (or all, with
        ``force_global_atomics``) ``histogram_global``. ``uploaded``: (features, slot
        offsets, group offsets, cursor) on the device, the features already in slot order
        (:meth:`_slot_order`), the cursor int64 (2,) the refinement step whose covered list
        is read and the indicator (default: the current ones, uploaded). ``layout``: the
        same slot and group offsets on the host (computed when None).

        Every launch's configuration and arguments depend on the fit and on ``uploaded``'s
        addresses only (:meth:`_histogram_geometry`; the kernels read the draw's groups
        and the covered list's step on the device), so the launches of a device-resident
        block's step are the same in every block."""
        K, W = self._widths()
        if uploaded is None:
            features = features[self._slot_order(features)]
        if layout is None:
            layout = self._slot_offset(features), self._group_offsets(features)
        slot_offset, groups = layout
        if uploaded is None:
            uploaded = self._upload_record(features, slot_offset, groups, self._cursor())
        self._features_dev, self._slot_dev, groups_dev, cursor_dev = uploaded
        S = features.shape[0]
        self.slots = (features, slot_offset)
        rows, shared_bytes, _, kernels = self._histogram_geometry(S)
        self._histogram_views(rows)
        weights_dev = self._weights(weights)
        self._hist["zero_histograms"](
            (self._blocks(rows * W), 1), (self.threads,),
            (self._slot_dev, np.int32(S), np.int32(K), np.int32(W), self.hist_g, self.hist_h,
             self.hist_count))
        for name in kernels:
            shared = name == "histogram_shared"
            self._launch_histogram(name, groups_dev[:S + 2] if shared else groups_dev[S + 2:],
                                   cursor_dev, weights_dev, shared_bytes if shared else 0)

    def _cursor(self):
        """int64 (2,): the current refinement step and coverage indicator (host), what the
        kernels read to find the covered list and to mark the coverage."""
        return np.array([self._step, self.indicator], np.int64)

    def _launch_histogram(self, name, groups_dev, cursor_dev, weights_dev, shared_bytes):
        """One launch of histogram kernel ``name`` over the groups ``groups_dev`` (device
        int64, count first: :meth:`_group_offsets`) from the covered list of the refinement
        step ``cursor_dev[0]`` (device int64 (2,)), with ``shared_bytes`` of dynamic shared
        memory (``histogram_sorted``: :meth:`_launch_sorted`, whose shared memory is fixed)."""
        if name == "histogram_sorted":
            self._launch_sorted(groups_dev, cursor_dev, weights_dev)
            return
        n, K = self.g.shape
        W = self.h.shape[1]
        kernel = self._hist[name]
        if shared_bytes > _DEFAULT_SHARED_BYTES and \
                kernel.max_dynamic_shared_size_bytes < shared_bytes:
            kernel.max_dynamic_shared_size_bytes = shared_bytes
        blocks = self._histogram_geometry(self._slot_dev.shape[0] - 1)[2]
        args = (self._features_dev, self._slot_dev, groups_dev, self.bin_index, self._covered,
                self._lens, np.int32(self._lens.size), cursor_dev, weights_dev, self.g, self.h,
                np.int32(K), np.int32(W), np.int32(n), np.int32(self.bin_index.shape[0]),
                self.hist_g, self.hist_h, self.hist_count)
        kernel((blocks, 1), (self.threads,), args, shared_mem=shared_bytes)

    def _sorted_geometry(self, S):
        """(blocks, span) of ``histogram_sorted`` in this fit for ``S`` sampled features:
        spans of sorted positions (a multiple of 32, from 32 to 2,048) that make about
        twice as many tasks as the device holds warps (64 an SM) when all S are wide, and
        enough blocks for one task a warp, at most 8 an SM (grid-stride beyond)."""
        kept = self._geometries.get(("sorted", S))
        if kept is None:
            n = self.g.shape[0]
            span = 32 * min(max(S * n // (2 * 64 * self._sm_count * 32), 1), 64)
            passes = -(-(sum(self._widths()) + 1) // 64)
            warps = S * -(-n // span) * passes
            blocks = max(1, min(-(-warps // (self.threads // 32)), 8 * self._sm_count))
            kept = self._geometries[("sorted", S)] = (blocks, span)
        return kept

    def _launch_sorted(self, groups_dev, cursor_dev, weights_dev):
        """One launch of ``histogram_sorted`` over the groups ``groups_dev`` (device int64,
        count first) for the examples with ``mask == cursor_dev[1]``."""
        n, K = self.g.shape
        W = self.h.shape[1]
        blocks, span = self._sorted_geometry(self._slot_dev.shape[0] - 1)
        args = (self._features_dev, self._slot_dev, groups_dev, self._sorted, self._sorted_row,
                self.mask, cursor_dev, weights_dev, self.g, self.h, np.int32(K), np.int32(W),
                np.int32(n), np.int32(self._num_bins.shape[0]), np.int32(span), self.hist_g,
                self.hist_h, self.hist_count)
        self._hist["histogram_sorted"]((blocks, 1), (self.threads,), args,
                                       shared_mem=_SORTED_STAGE_BYTES * self.threads)

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
