"""DaskBackend: the backend protocol over row partitions held by Dask workers.

Each partition's binned features, labels, statistics, scores and coverage stay on its
worker, in a :class:`~gpurules.backends.dask.partition.PartitionState` actor (a
``CpuBackend`` over the partition, or a ``CudaBackend`` on its worker's GPU: the
``devices``). One of them, the *leader* (the largest partition), runs the refinement
steps on the workers (``leader.py``):

- ``refine_rule`` (a block of up to 8 steps): one call to the leader, which per step asks
  the other partitions for the histogram rows of the sampled features
  (their backends' ``partial_histograms``, host int64 rows whatever the device, equal
  for ``CpuBackend`` and ``CudaBackend``; the request carries the step before's condition,
  which they apply first), sums them with its own (int64 fixed point: exact, in any
  order), scans them with the CPU backend's ``histogram_search.scan_histograms`` and picks
  the refinement with ``base.select_refinement``, so the result equals ``CpuBackend``'s on
  the concatenated data bit for bit. The client receives the block's conditions and last
  refinement only.
- ``find_best_refinement`` (single steps, e.g. post-optimization's searches over a rule's
  features): the same reduction on the leader, one step, nothing applied.
- ``apply_refinement`` and ``update_statistics`` are broadcast and run locally.
- sums (``covered_totals``) are summed exactly; per rule the instance weights travel once
  (sliced per partition), and ``covered_mask`` gathers one bool per example.

``start_fit`` sends each partition its slice of the labels and base weights once per fit.

A partition's state lives only in its actor: a worker lost during the fit loses it, and
the call that needs it (the client's, or the leader's on the client's behalf) raises
:class:`WorkerLostError` naming the worker (the fit cannot continue; fitting again starts
over on the workers that are left). Nothing is recomputed elsewhere, so a lost worker
never yields a different model.
"""

import numpy as np

from gpurules.objectives.non_decomposable import NonDecomposableLossSpec, packed_size

_UNSENT = object()  # no instance weights sent yet in this rule


class WorkerLostError(RuntimeError):
    """A worker holding a partition's state was lost during a distributed fit."""


POLL_SECONDS = 1.0  # how often a call still waiting asks whether its worker is alive


def call_actors(actors, method, args, workers=None, watch=None):
    """Call ``method`` on every actor and return their results, in the order of ``actors``.

    Args:
        actors: ``distributed`` actor handles of ``PartitionState``.
        method: str, the method's name.
        args: a tuple of arguments for every actor, or a list of one tuple per actor.
        workers: None or a callable returning the addresses (a set of str) of the
            cluster's live workers, asked when a call fails and, every ``POLL_SECONDS``,
            while a call waits (a call sent to a worker that has just gone may never
            answer).
        watch: None (the called ``actors``) or every actor of the fit, as a list of
            (partition index, handle): those whose workers are checked (a call to the
            leader also waits on the other partitions).

    Raises:
        WorkerLostError: a call failed or waits while the worker of a watched actor is
            gone (no longer in the cluster, or ``distributed`` has marked the actor lost);
            a failed call's error is its ``__cause__``. Other errors of the calls are
            raised as they are (e.g. a ``ValueError`` of a partition's validation).
    """
    per_actor = args if isinstance(args, list) else [args] * len(actors)
    watch = list(enumerate(actors)) if watch is None else watch
    futures = [_guarded(watch, workers, lambda a=actor, x=x: getattr(a, method)(*x))
               for actor, x in zip(actors, per_actor)]
    return [_guarded(watch, workers, lambda f=future: _wait(watch, workers, f))
            for future in futures]


def _is_lost(actor, workers):
    """Whether ``actor``'s worker is gone (False when ``workers`` is None)."""
    if workers is None:
        return False
    future = getattr(actor, "_future", None)
    if future is not None and future.status not in ("finished", "pending"):
        return True
    return getattr(actor, "_address", None) not in workers()


def _first_lost(watch, workers):
    """The first (partition index, actor) of ``watch`` whose worker is gone, or None."""
    return next(((p, actor) for p, actor in watch if _is_lost(actor, workers)), None)


def _lost(p, actor, error=None):
    """The :class:`WorkerLostError` of partition ``p``'s actor."""
    why = "" if error is None else f" ({type(error).__name__}: {error})"
    return WorkerLostError(
        f"worker {getattr(actor, '_address', None)} holding partition {p} of the "
        f"distributed fit was lost; its partition's state (binned features, statistics, "
        f"coverage) lived only there, so this fit cannot continue and must be restarted "
        f"(fit again) on the workers that are left{why}")


def _guarded(watch, workers, call):
    """``call()``; its error becomes :class:`WorkerLostError` where the worker of an
    actor of ``watch`` is lost (see :func:`call_actors`)."""
    try:
        return call()
    except WorkerLostError:
        raise
    except Exception as error:
        lost = _first_lost(watch, workers)
        if lost is None:
            raise
        raise _lost(*lost, error) from error


def _wait(watch, workers, future):
    """The result of the actor call ``future``, asking every ``POLL_SECONDS`` whether
    the workers of the actors of ``watch`` are still there (WorkerLostError if not)."""
    if workers is None:
        return future.result()
    while True:
        try:
            return future.result(timeout=POLL_SECONDS)
        except TimeoutError:
            lost = _first_lost(watch, workers)
            if lost is not None:
                raise _lost(*lost) from None


class DaskBackend:
    """The backend protocol fanned out to one actor per row partition.

    Args:
        actors: ``distributed`` actor handles of ``PartitionState``, in row order, binned
            (``PartitionState.bin``).
        sizes: int (P,), the rows of each partition.
        layout: BinnedFeatures without examples (``bin_index`` (A, 0)), the global layout
            before empty bins are dropped (``data.partitioned_binning.merge_layout``).
        threads: the ``resolve_config`` thread counts each partition's CpuBackend gets
            (and the leader's scan); None: one thread each.
        workers: None or a callable returning the addresses (set of str) of the live
            workers, asked when an actor call fails (:func:`call_actors`).
        devices: list of P resolved device strings (``'cpu'``, ``'cuda:N'``), the device
            of each partition's backend on its worker (``PartitionState.resolve_device``).

    Attributes:
        max_statistic: float, the largest over the partitions' backends' ``max_statistic``
            (what the learner's fixed-point scale reads for non-decomposable losses).
        leader: int, the partition that runs the refinement steps (the largest).
        addresses: list of str, the worker of each partition's actor.
        received_bytes: list of int, one entry per refinement step (a search over the
            sampled features, whether or not it found a refinement): the bytes of the
            arrays that crossed between workers in it (to and from the partitions on
            other workers than the leader's: the sampled features (int64 (S,)), their
            histogram rows (int64 (R, K + W + 1))), plus, on the last step of a block,
            the arrays of the block's answer to the client (the last refinement's sums,
            int64 (K + W,), and the labels). Scalars (the conditions, qualities) and the
            messages' headers are not counted.
    """

    name = "dask"
    requires_binned_features = True
    host_coverage = False  # covered_mask gathers from the workers
    narrow_head_search = False
    fixes_partial_heads = False  # a block ends where a partial head is fixed

    def __init__(self, actors, sizes, layout, threads, workers, devices):
        self.actors = list(actors)
        self.addresses = [getattr(a, "_address", None) for a in self.actors]
        self.bounds = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        if not len(self.actors) == len(sizes) == len(devices):
            raise ValueError(f"{len(self.actors)} actors for {len(sizes)} partitions and "
                             f"{len(devices)} devices")
        self.devices = list(devices)
        self.layout = layout
        self.threads = threads or {}
        self.workers = workers
        self.leader = int(np.argmax(sizes)) if len(sizes) else 0
        self.received_bytes = []
        self.max_statistic = 0.0

    # -- fan-out helpers -------------------------------------------------------------
    def _call(self, method, *args):
        """Call ``method`` with the same arguments on every partition; their results."""
        return call_actors(self.actors, method, args, self.workers)

    def _call_leader(self, method, *args):
        """Call ``method`` on the leader, watching every partition's worker (the leader
        calls the others); its result."""
        return call_actors([self.actors[self.leader]], method, args, self.workers,
                           watch=list(enumerate(self.actors)))[0]

    def _call_sliced(self, method, *arrays):
        """Call ``method`` on every partition with its rows of each of ``arrays`` ((n, ...)
        or None); their results."""
        b = self.bounds
        return call_actors(self.actors, method, [
            tuple(None if a is None else a[b[p]:b[p + 1]] for a in arrays)
            for p in range(len(self.actors))], self.workers)

    # -- per-fit state ---------------------------------------------------------------
    def start_fit(self, features, Y, loss, base_weight, scale, statistic_dtype=np.int64):
        """As ``Backend.start_fit``; ``features`` is the compact global layout (no
        examples): the partitions hold their own rows of it."""
        n, K = Y.shape
        if n != self.bounds[-1]:
            raise ValueError(f"Y has {n} rows, the partitions {self.bounds[-1]}")
        self.features = features
        self.K = K
        self.W = packed_size(K) if isinstance(loss, NonDecomposableLossSpec) else K
        b = self.bounds
        self.max_statistic = max(call_actors(self.actors, "start_fit", [
            (self.layout, Y[b[p]:b[p + 1]], loss, base_weight[b[p]:b[p + 1]], scale,
             self.threads, self.devices[p], statistic_dtype)
            for p in range(len(self.actors))],
            self.workers))
        self._set_scale_attributes(scale)
        self._sent = _UNSENT
        self._call_leader("connect", [(a.key, a._address) for p, a in
                                      enumerate(self.actors) if p != self.leader])

    def _set_scale_attributes(self, scale):
        self.scale = float(scale)
        self.inv_scale = 1.0 / self.scale

    def set_scale(self, scale):
        self.max_statistic = max(self._call("set_scale", scale))
        self._set_scale_attributes(scale)

    def reset_coverage(self):
        self._call("reset_coverage")

    def _send_weights(self, weights):
        """Give every partition its slice of the instance ``weights`` (int32 (n,) or None)
        unless this very array was sent last (the learner passes one array per rule and
        never changes it)."""
        if weights is not self._sent:
            self._call_sliced("set_weights", weights)
            self._sent = weights

    def covered_totals(self, weights):
        """(g int64 (K,), h int64 (W,), count) summed over the partitions."""
        self._send_weights(weights)
        parts = self._call("covered_totals")
        return (np.sum([p[0] for p in parts], axis=0, dtype=np.int64),
                np.sum([p[1] for p in parts], axis=0, dtype=np.int64),
                int(sum(p[2] for p in parts)))

    def covered_mask(self):
        """bool (n,), gathered from the partitions (one bool per example)."""
        return np.concatenate(self._call("covered_mask"))

    def training_scores(self):
        """float64 (n, K), gathered from the partitions."""
        return np.concatenate(self._call("training_scores"))

    # -- search ----------------------------------------------------------------------
    def find_best_refinement(self, features, labels, weights, totals, search, count=None):
        """As ``CpuBackend.find_best_refinement`` on binned features: the partitions'
        histogram rows of ``features`` (int64 (S,)) summed and scanned on the leader
        (``PartitionState.search``); nothing is applied."""
        self._send_weights(weights)
        found, sent = self._call_leader(
            "search", np.ascontiguousarray(features, np.int64),
            np.ascontiguousarray(labels, np.int32), totals, search, count)
        self.received_bytes.append(sent + _nbytes(found, labels))
        return found

    def refine_rule(self, uniforms, labels, weights, totals, search, fix_label_after):
        """``Backend.refine_rule``: the whole block runs on the leader
        (``PartitionState.refine_block``, ``base.refine_stepwise`` over the partitions),
        one call from the client."""
        self._send_weights(weights)
        conditions, last, labels, finished, sent = self._call_leader(
            "refine_block", np.ascontiguousarray(uniforms, np.float64),
            np.ascontiguousarray(labels, np.int32), totals, search, int(fix_label_after))
        if sent:
            sent[-1] += _nbytes(last, labels)
        self.received_bytes.extend(sent)
        return conditions, last, labels, finished

    def apply_refinement(self, refinement):
        self._call("apply_refinement", refinement)

    # -- statistics ------------------------------------------------------------------
    def update_statistics(self, labels, scores):
        labels = np.asarray(labels, np.int32)
        scores = np.asarray(scores, np.float64)
        self.max_statistic = max(self._call("update_statistics", labels, scores))

    def close(self):
        """Let go of the partitions' actors (their worker memory is freed)."""
        self.actors = []


def _nbytes(found, labels):
    """The bytes of the arrays of a leader's answer: the refinements' sums (``found``: a
    Refinement, None or a list of them) and the labels."""
    found = found if isinstance(found, list) else [] if found is None else [found]
    sums = sum(r.g_sum.nbytes + r.h_sum.nbytes for r in found)
    return int(sums + np.asarray(labels).nbytes)
