"""The searches of ``CudaBackend`` (a base class of it): one search's round trip
(``find_best_refinement``: SeCo, the stepwise reference, tests), a beam search's depth in
one round trip (``find_best_refinements``), and the launches of the scan over the
histograms (``histogram_search``) that a device-resident block (``refine``) shares.

The methods read the fit's state that ``CudaBackend`` sets and use its ``_on_device``,
``_upload_record``, ``_buffer``, ``_nb``, ``_blocks``, ``restore_coverage``,
``build_histograms`` (``histograms.HistogramBuilder``), ``_slot_order``,
``_slot_offset``, ``_group_offsets``, ``_cursor`` and ``_widths``.
"""

import numpy as np

from gpurules.backends.base import select_refinement
from gpurules.backends.cuda.records import out_bytes, out_views
from gpurules.backends.cuda.search_state import initial_state


def _snapshot_cursor(snapshot):
    """int64 (2,): the refinement step and indicator of a ``coverage_snapshot``."""
    _, indicator, step = snapshot
    return np.array([step, indicator], np.int64)


class Searches:
    """The search methods of ``CudaBackend`` (see the module docstring)."""

    def find_best_refinement(self, features, labels, weights, totals, search, count=None):
        """Best condition on the sampled ``features`` (int64 (S,)) over ``labels`` (int32).

        The per-feature totals come from the histograms themselves (they equal ``totals``
        for features without missing values), so of ``totals`` only the count goes to the
        device (a candidate must cover fewer, ``thresholds.admissible``).
        One host->device copy (features, slot and group offsets, parameters, the search's
        state, labels) and one device->host copy (the ``out_*`` record) per call."""
        self._check_head_mode(search.head_mode)
        features = np.ascontiguousarray(features, np.int64)
        if features.size == 0:
            return None if count is None else []
        with self._on_device():
            record = self._search_record(features, labels, totals, search, self._cursor())
            uploaded = self._upload_record(*record[1])
            out_dev = self._launch_refinement(record, uploaded, weights, search)
            back = self.cp.asnumpy(out_dev)
        return self._refinements(features, record[0], back, count)

    def find_best_refinements(self, requests, weights, count):
        """The searches of one depth of a beam search (``learners/beam_search.py``) in one
        round trip: every search's record in one host->device copy; per request the
        coverage :meth:`restore_coverage` recorded, then the search of
        :meth:`find_best_refinement`, its ``out_*`` record copied (on the device) into its
        part of one buffer; **one device->host copy** for all.

        Args:
            requests: list of (coverage snapshot, features int64 (S,), labels int32 (m,),
                totals, SearchSettings), as :meth:`find_best_refinement` takes them.
            weights: int32 (n,) instance weights of every request, or None; count: int >= 1.

        Returns:
            list, per request, of up to ``count`` Refinements (``select_refinements``).
            The coverage is left at the last request's."""
        for request in requests:
            self._check_head_mode(request[4].head_mode)
        if not requests:
            return []
        features = [np.ascontiguousarray(r[1], np.int64) for r in requests]
        # each record's part of the buffer starts at a multiple of 8 bytes (its float64s)
        sizes = [-(-out_bytes(f.size, *self._widths()) // 8) * 8 for f in features]
        ends = np.cumsum([0] + sizes)
        records = [self._search_record(f, r[2], r[3], r[4], _snapshot_cursor(r[0]))
                   if f.size else None for f, r in zip(features, requests)]
        with self._on_device():
            # every search's record in one host->device copy
            uploaded = iter(self._upload_record(*(a for r in records if r for a in r[1])))
            results = self._buffer("beam_out", (max(int(ends[-1]), 1),), np.uint8)
            for request, record, lo in zip(requests, records, ends[:-1]):
                if record is not None:
                    self.restore_coverage(request[0])
                    views = [next(uploaded) for _ in record[1]]
                    out_dev = self._launch_refinement(record, views, weights, request[4])
                    results[lo:lo + out_dev.size] = out_dev
            back = self.cp.asnumpy(results)
        return [[] if r is None else self._refinements(f, r[0], back[lo:hi], count)
                for f, r, lo, hi in zip(features, records, ends[:-1], ends[1:])]

    def _search_record(self, features, labels, totals, search, cursor):
        """What one search uploads: (``order`` int64 (S,) the slot order of ``features``
        (int64 (S,), the caller's order), the host arrays of its record: the features in
        slot order, their slot and group offsets, ``cursor`` (int64 (2,): the refinement
        step and indicator of the coverage searched, :meth:`_cursor`), the head's
        parameters, the minimum quality, the search's state, ``labels`` int32 (m,), zero
        bytes up to a multiple of 8), and the slot and group offsets for the histogram
        build)."""
        labels = np.ascontiguousarray(labels, np.int32)
        order = self._slot_order(features)
        slotted = features[order]
        layout = self._slot_offset(slotted), self._group_offsets(slotted)
        arrays = (slotted, *layout, cursor, np.ascontiguousarray(search.params, np.float64),
                  np.array([search.min_quality], np.float64),
                  initial_state(labels.size, int(totals[2])), labels)
        # padded to a multiple of 8 bytes: the next record's int64 fields stay aligned
        pad = -sum(a.nbytes for a in arrays) % 8
        return order, arrays + (np.zeros(pad, np.uint8),), layout

    def _launch_refinement(self, record, uploaded, weights, search):
        """Build the histograms and launch the search of a :meth:`_search_record`
        ``record`` whose arrays are ``uploaded`` (their device views), on the stream:
        returns the device uint8 ``out_*`` record (slot order)."""
        _, arrays, layout = record
        features_dev, slot_dev, groups_dev, cursor_dev, params_dev, quality_dev, state_dev, \
            labels_dev = uploaded[:8]
        self.build_histograms(arrays[0], weights,
                              (features_dev, slot_dev, groups_dev, cursor_dev), layout=layout)
        return self._launch_search(arrays[0], features_dev, slot_dev, labels_dev, state_dev,
                                   params_dev, quality_dev, search)

    def _refinements(self, features, order, back, count):
        """``select_refinement`` of a search's downloaded ``out_*`` record ``back`` (host
        uint8, slot order ``order``) for ``features`` in the caller's order."""
        out = out_views(back, features.size, *self._widths())
        inverse = np.argsort(order)  # slot order -> the caller's order (first best wins)
        return select_refinement(features, tuple(a[inverse] for a in out), count)

    def _check_head_mode(self, head_mode):
        """Raise ValueError unless the scan implements ``head_mode`` for these statistics."""
        modes = self._search_module.SYSTEM_HEAD_MODES
        if not self.non_decomposable:
            modes = modes + self._search_module.LABEL_HEAD_MODES
        if head_mode not in modes:
            raise ValueError(
                f"the CUDA backend does not implement head_mode {head_mode} for "
                f"{'non-' if self.non_decomposable else ''}decomposable statistics; known: "
                f"{modes}")

    def _launch_search(self, features, features_dev, slot_dev, labels_dev, state_dev,
                       params_dev, quality_dev, search):
        """Launch ``histogram_search.search`` over the histograms of ``features`` (host int64
        (S,), and on the device, in slot order; ``slot_dev`` their slot offsets) for
        ``labels_dev`` (device int32 (m,)) and the search's ``state_dev`` (device int32)
        with the head's parameters ``params_dev`` and ``quality_dev`` (the minimum quality;
        device float64); returns the device uint8 buffer of the ``out_*`` record
        (:func:`out_views`), filled asynchronously. The scan's launches are laid out for the
        fit's widest feature, whichever are drawn (the kernels read each slot's bins on the
        device), so a device-resident block's launches are the same at every step."""
        S, (K, W) = features.shape[0], self._widths()
        B = max(int(self._num_bins.max(initial=0)), 1)
        out_dev, out = self._out_record(S, K, W)
        self._search_module.search(
            self._search_module, self._buffer, self._nb, self._blocks, self.threads,
            (self.hist_g, self.hist_h, self.hist_count), (features_dev, slot_dev, B),
            (self.bin_offset, self.bin_min, self.bin_max, self.nominal), labels_dev,
            state_dev, (search.head_mode, params_dev, self.inv_scale, search.min_coverage,
                        quality_dev), out, self._nb_stream, fused=self.fused_search,
            flat=self.hist_flat)
        return out_dev

    def _out_record(self, S, K, W):
        """(device uint8 ``out_*`` record of a search over ``S`` slots, its field views
        ``records.out_views``): kept with the buffer's views (``_buffer_views``, dropped when
        the buffer ``"out"`` is re-allocated), so a step slices nothing."""
        key = ("out", "fields", (S, K, W))
        kept = self._buffer_views.get(key)
        if kept is None:
            out_dev = self._buffer("out", (out_bytes(S, K, W),), np.uint8)
            kept = self._buffer_views[key] = (out_dev, out_views(out_dev, S, K, W))
        return kept
