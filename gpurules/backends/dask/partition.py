"""The worker side of a distributed fit: one actor per row partition (``DaskBackend``).

A :class:`PartitionState` lives on the worker that holds its partition for the whole fit
(a ``distributed`` actor). It keeps the partition's raw features until they are binned,
then its binned features, statistics and coverage inside a backend of the worker's device
(``CpuBackend``, or ``CudaBackend`` on a GPU worker: :meth:`PartitionState.resolve_device`);
its methods answer with small host arrays only (per-bin sums, totals, histogram rows). One
partition of a fit, the *leader*, also runs the fit's refinement steps (``leader.py``): it
holds actor handles of the other partitions (:meth:`PartitionState.connect`) and calls them
itself.

Nothing here imports dask at import time: the actor is a plain class that
``distributed`` hosts (only :meth:`PartitionState.connect`, run on a worker, and the
worker's name in an error message import it).
"""

import numpy as np

from gpurules.backends.base import refine_stepwise
from gpurules.backends.dask.leader import Condition, LeaderSearch
from gpurules.backends.factory import get_backend, resolve_device_and_reason
from gpurules.data.binning import BinnedFeatures, drop_empty_bins
from gpurules.data.partitioned_binning import assign_bins, partition_summary


class PartitionState:
    """The state of one row partition of a distributed fit.

    Args:
        X: float32-convertible (n_p, A), the partition's rows; NaN = missing.
    """

    def __init__(self, X):
        X = np.asarray(X, dtype=np.float32)
        if X.ndim != 2:
            raise ValueError(f"a partition must be 2-D, got shape {X.shape}")
        self.X = np.ascontiguousarray(X) + np.float32(0.0)  # -0.0 -> +0.0, as bin_features
        self.n = int(X.shape[0])
        self.backend = None
        self.weights = None
        self.search_threads = 1  # the leader's scan of the summed histograms (start_fit)
        self.peers, self.remote = [], []  # the leader's (connect)

    def rows(self):
        """The partition's number of rows (n_p, int)."""
        return self.n

    # -- binning ---------------------------------------------------------------------
    def summary(self, distinct):
        """Per-feature facts of the global binning pass (``data.partitioned_binning``).

        Args:
            distinct: bool (A,), the features whose distinct values (with counts) are asked.

        Returns:
            (n_p int, n_present int64 (A,), lo float32 (A,), hi float32 (A,), values: list of
            A entries, each (sorted distinct float32 (d,), int64 (d,) counts) or None).
        """
        return partition_summary(self.X, distinct)

    def bin(self, plan):
        """Bin the partition with the global ``plan`` (``data.partitioned_binning.BinPlan``);
        keeps the int32 (A, n_p) bin indices and drops the raw features.

        Returns:
            (bin_min, bin_max) float32 (B,) of the partition's values per bin (NaN: empty).
        """
        self.bin_index, bin_min, bin_max = assign_bins(self.X, plan)
        self.X = None
        return bin_min, bin_max

    # -- the device ------------------------------------------------------------------
    def resolve_device(self, device):
        """The device this partition's fit runs on, resolved on its worker as
        ``backends.factory.resolve_device`` resolves it in one process (``'auto'``: cuda:0
        when it is usable there, else the CPU, logged on the worker).

        Args:
            device: a device string or ``Device`` (``'auto'``, ``'cpu'``, ``'cuda'``,
                ``'cuda:N'``).

        Returns:
            (device str, ``'cpu'`` or ``'cuda:N'``; why ``'auto'`` chose the CPU (str), or
            None when it did not).

        Raises:
            RuntimeError: a CUDA device that cannot be used on this worker, naming the
                worker and why.
        """
        try:
            resolved, reason = resolve_device_and_reason(device)
        except RuntimeError as error:
            raise RuntimeError(f"{_where()}: {error}") from error
        return str(resolved), reason

    # -- the backend protocol --------------------------------------------------------
    def start_fit(self, layout, Y, loss, base_weight, scale, threads, device,
                  statistic_dtype=np.int64):
        """Start a fit over the partition: ``layout`` is the global BinnedFeatures before
        empty bins are dropped (its ``bin_index`` unused), ``Y`` uint8 (n_p, K),
        ``base_weight`` float64 (n_p,), ``threads`` the ``resolve_config`` thread counts
        (dict or None), ``device`` a resolved device (``'cpu'``, ``'cuda:N'``: see
        :meth:`resolve_device`) whose backend (``backends.factory.get_backend``) holds the
        partition, ``statistic_dtype`` as for ``Backend.start_fit``. Returns the partition's
        ``max_statistic``."""
        binned = drop_empty_bins(BinnedFeatures(
            self.bin_index, layout.num_bins, layout.bin_offset, layout.bin_min,
            layout.bin_max, layout.nominal))
        self.backend = get_backend(device, threads)
        self.search_threads = (threads or {}).get("search", 1)
        self.backend.start_fit(binned, Y, loss, base_weight, scale, statistic_dtype)
        self.weights = None
        return self._max_statistic()

    def _max_statistic(self):
        return float(getattr(self.backend, "max_statistic", 0.0))

    def set_scale(self, scale):
        """The backend's ``set_scale``; returns the partition's ``max_statistic``."""
        self.backend.set_scale(scale)
        return self._max_statistic()

    def reset_coverage(self):
        self.backend.reset_coverage()

    def set_weights(self, weights):
        """Keep the instance weights (int32 (n_p,) or None) of the searches that follow."""
        self.weights = None if weights is None else np.ascontiguousarray(weights, np.int32)

    def covered_totals(self):
        """The backend's ``covered_totals`` with the kept weights: (g int64 (K,), h int64
        (W,), count)."""
        return self.backend.covered_totals(self.weights)

    def histograms(self, features, condition=None):
        """The backend's ``partial_histograms`` of ``features`` (int64 (S,)) with the kept
        weights: int64 (R, K + W + 1). ``condition`` (a ``leader.Condition`` or None): the
        leader's last refinement, applied to the coverage first."""
        if condition is not None:
            self.backend.apply_refinement(condition)
        return self.backend.partial_histograms(features, self.weights)

    # -- the leader ------------------------------------------------------------------
    def connect(self, peers):
        """Make this partition the leader of its fit (after :meth:`start_fit`): keep
        actor handles of the other partitions, ``peers`` a list of (actor key, worker
        address). Runs on the worker (an actor method), where the handles get the
        worker's connections. Returns the addresses of the peers on other workers (list
        of str)."""
        from distributed import get_worker
        from distributed.actor import Actor

        worker = get_worker()
        # those on other workers first: a call to one on this worker runs at once, in this
        # thread, so the requests to the others are sent before it
        peers = sorted(peers, key=lambda peer: peer[1] == worker.address)
        self.peers = [Actor(PartitionState, address, key, worker=worker)
                      for key, address in peers]
        self.remote = [address != worker.address for _, address in peers]
        return [address for _, address in peers if address != worker.address]

    def refine_block(self, uniforms, labels, totals, search, fix_label_after):
        """``Backend.refine_rule`` over every partition of the fit, run here (the leader,
        after :meth:`connect`), with the instance weights every partition keeps.

        Returns:
            (conditions, last Refinement or None, labels, finished) as
            ``Backend.refine_rule``, and per step (search) the bytes between workers
            (list of int, ``leader.LeaderSearch.step_bytes``). With no other partition:
            the backend's own ``refine_rule`` (``CpuBackend``'s fused loop,
            ``CudaBackend``'s device-resident blocks), 0 bytes per step.
        """
        if not self.peers:
            conditions, last, labels, finished = self.backend.refine_rule(
                uniforms, labels, self.weights, totals, search, fix_label_after)
            failed = finished and (last is None or last.count > search.min_coverage)
            return conditions, last, labels, finished, [0] * (len(conditions) + failed)
        # made per call, not kept: it refers to this state (no reference cycle keeps the
        # peers' handles, and so their partitions, alive after the fit)
        engine = LeaderSearch(self, self.peers, self.remote)
        result = refine_stepwise(engine, uniforms, labels, None, totals, search,
                                 fix_label_after)
        engine.flush()
        return (*result, engine.step_bytes)

    def search(self, features, labels, totals, search, count=None):
        """``Backend.find_best_refinement`` of ``features`` (int64 (S,)) over every
        partition, run here (the leader, after :meth:`connect`); nothing is applied.
        Returns (its result: the Refinement or None, or with ``count`` a list; the bytes
        between workers (int))."""
        engine = LeaderSearch(self, self.peers, self.remote)
        return (engine.find_best_refinement(features, labels, None, totals, search, count),
                engine.step_bytes[0])

    def apply_refinement(self, refinement):
        self.backend.apply_refinement(refinement)

    def update_statistics(self, labels, scores):
        """The backend's ``update_statistics``; returns the partition's ``max_statistic``."""
        self.backend.update_statistics(labels, scores)
        return self._max_statistic()

    def covered_mask(self):
        return self.backend.covered_mask()

    def training_scores(self):
        return self.backend.training_scores()

    def rule_coverage(self, cond_feature, cond_op, cond_threshold, rule_cond_start):
        """How many of the partition's examples satisfy each rule's body, evaluated on its
        binned features with the fit's own coverage update (``apply_refinement``; a
        threshold lies between bins, so a bin is on one side of it). Clobbers the
        coverage: call it after the fit.

        Args:
            cond_feature: int (C,); cond_op: int (C,); cond_threshold: float32 (C,);
            rule_cond_start: int (R + 1,), rule ``r``'s conditions are
                ``rule_cond_start[r]:rule_cond_start[r + 1]`` (``model.RuleModel``).

        Returns:
            int64 (R,).
        """
        R = len(rule_cond_start) - 1
        counts = np.zeros(R, np.int64)
        for r in range(R):
            self.backend.reset_coverage()
            for c in range(rule_cond_start[r], rule_cond_start[r + 1]):
                self.backend.apply_refinement(
                    Condition(int(cond_feature[c]), int(cond_op[c]),
                              np.float32(cond_threshold[c])))
            counts[r] = np.count_nonzero(self.backend.covered_mask())
        return counts


def _where():
    """``'worker <address>'`` of the dask worker running this call, for error messages;
    ``'this process (no dask worker)'`` outside a worker (a partition driven directly)."""
    try:
        from distributed import get_worker

        return f"worker {get_worker().address}"
    except (ImportError, ValueError):
        return "this process (no dask worker)"
