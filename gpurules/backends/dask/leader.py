"""The refinement steps of a distributed fit, run on the workers by one partition (the leader).

``DaskBackend.refine_rule`` hands a whole block of refinement steps to one partition's
actor, the *leader* (``PartitionState.refine_block``), which runs the reference loop
``base.refine_stepwise`` over a :class:`LeaderSearch`. Per step the leader

1. asks every other partition (their actor handles, ``PartitionState.connect``) for the
   histogram rows of the sampled features (``PartitionState.histograms``); the request
   carries the condition of the step before (a :class:`Condition`), which the partition
   applies to its coverage first, so one round trip per step serves both;
2. builds its own rows, sums all of them (int64 fixed point: exact in any order), scans
   them with the CPU backend's ``histogram_search.scan_histograms`` (on the host, whatever
   the partitions' devices: a ``CudaBackend``'s rows equal a ``CpuBackend``'s) and picks the
   refinement with ``base.select_refinement``, as ``CpuBackend`` does on the concatenated
   data, so the steps equal the single-process fit's bit for bit;
3. applies the refinement to its own coverage at once.

At the end of the block the last condition goes to the other partitions
(:meth:`LeaderSearch.flush`). With one partition the leader runs its backend's own
``refine_rule`` (the engine of the single-process fit) instead.

Per step what crosses between workers is, for every other partition on another worker
than the leader's, the sampled features (int64 (S,)) and a :class:`Condition` to it and
its histogram rows (int64 (R, K + W + 1)) back; :attr:`LeaderSearch.step_bytes` counts the
arrays of these messages. Partitions on the leader's own worker are called in its thread
(``distributed`` runs an actor's call to an actor on its own worker directly); nothing of
theirs is counted.

Nothing here imports dask: the actor handles come from the leader's
``PartitionState.connect``.
"""

from typing import NamedTuple

import numpy as np

from gpurules.backends.base import select_refinement
from gpurules.backends.cpu import histogram_search
from gpurules.data.binning import rows_of
from gpurules.jit.threads import threads_for


class Condition(NamedTuple):
    """What another partition needs of a chosen refinement to update its coverage
    (``CpuBackend.apply_refinement`` and ``CudaBackend.apply_refinement`` read these three
    fields only)."""

    feature: int
    op: int
    threshold: np.float32


class LeaderSearch:
    """``find_best_refinement`` / ``apply_refinement`` over all partitions of a fit, run
    by the leader: what :func:`~gpurules.backends.base.refine_stepwise` drives.

    Args:
        state: the leader's ``PartitionState`` (its ``backend`` a started ``CpuBackend`` or
            ``CudaBackend``, its ``weights`` the rule's instance weights, its
            ``search_threads`` the most threads of the scan, see :meth:`_scan_threads`).
        peers: actor handles of the other partitions' ``PartitionState``.
        remote: bool per peer, whether it lives on another worker than the leader.

    Attributes:
        features: the partition's ``BinnedFeatures`` (the fit's compact layout: every
            partition has the same bins, ``data.partitioned_binning.merge_layout``).
        step_bytes: list of int, per ``find_best_refinement`` call the bytes of the
            arrays sent to and received from the peers on other workers (the sampled
            features, the histogram rows).
    """

    def __init__(self, state, peers, remote):
        self.state = state
        self.peers = list(peers)
        self.remote = list(remote)
        self.features = state.backend.features
        self.pending = None  # the last Condition the peers have not applied yet
        self.step_bytes = []
        B = self.features.total_bins
        backend = state.backend
        self.K, self.W = backend.g.shape[1], backend.h.shape[1]
        self._hist = np.zeros((B, self.K + self.W), np.int64)
        self._hist_count = np.zeros(B, np.int64)

    def find_best_refinement(self, features, labels, weights, totals, search, count=None):
        """``CpuBackend.find_best_refinement`` over the summed histogram rows of every
        partition (``weights`` is ignored: every partition searches with the instance
        weights it keeps, ``PartitionState.set_weights``)."""
        features = np.ascontiguousarray(features, np.int64)
        calls = [peer.histograms(features, self.pending) for peer in self.peers]
        own = self.state.histograms(features)
        parts = [call.result() for call in calls]
        self.pending = None
        self.step_bytes.append(int(sum(features.nbytes + part.nbytes
                                       for part, far in zip(parts, self.remote) if far)))
        hist, hist_count = self._summed(features, [own] + parts)
        S, fs, backend = features.shape[0], self.features, self.state.backend
        outs = (np.empty(S), np.empty(S, np.int8), np.empty(S, np.float32),
                np.empty(S, np.int64), np.empty(S, np.int32), np.empty((S, self.K), np.int64),
                np.empty((S, self.W), np.int64))
        histogram_search.scan_histograms(
            features, fs.bin_offset, fs.bin_min, fs.bin_max, fs.nominal, hist, hist_count,
            np.ascontiguousarray(labels, np.int32), search.head_mode, search.params,
            backend.inv_scale, search.min_coverage, int(totals[2]), search.min_quality,
            *outs, n_threads=self._scan_threads(own.shape[0]))
        return select_refinement(features, outs, count)

    def _scan_threads(self, rows):
        """Threads for the scan of ``rows`` summed histogram rows (the sampled features'
        bins): ``search_threads`` from ``jit.threads.MIN_PARALLEL_WORK`` (row x output)
        visits on, else one (a small scan's parallel region costs more than it saves, and
        on a machine that never scans a large one its parallel form is never compiled)."""
        return threads_for(rows * self.K, self.state.search_threads)

    def _summed(self, features, parts):
        """The histograms (int64 (B, K + W), (B,)) with the rows of ``features`` set to the
        sums of ``parts`` (each int64 (R, K + W + 1), the backends' ``partial_histograms``)."""
        total = np.sum(parts, axis=0, dtype=np.int64)
        rows = rows_of(self.features.bin_offset, features)
        self._hist[rows] = total[:, :-1]
        self._hist_count[rows] = total[:, -1]
        return self._hist, self._hist_count

    def apply_refinement(self, refinement):
        """Apply ``refinement`` to the leader's coverage now, to the peers' with the next
        request (or :meth:`flush`)."""
        self.state.backend.apply_refinement(refinement)
        self.pending = Condition(refinement.feature, refinement.op, refinement.threshold)

    def flush(self):
        """Send the peers the condition they have not applied yet (if any) and wait."""
        if self.pending is not None:
            calls = [peer.apply_refinement(self.pending) for peer in self.peers]
            for call in calls:
                call.result()
            self.pending = None
