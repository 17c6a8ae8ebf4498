"""DaskBoomerClassifier: BoomerClassifier's fit over row partitions held by Dask workers.

The estimator validates the distributed inputs, bins the features with one global pass
(``data.partitioned_binning``), starts one ``PartitionState`` actor per partition and runs
the unchanged ``BoostingLearner`` through ``BoomerClassifier._learn`` with a
``DaskBackend``. The fitted model is the same NumPy ``RuleModel`` as an in-memory fit's;
prediction runs per partition (lazily) on dask arrays and DataFrames and in memory on
NumPy, SciPy and pandas inputs. ``device`` is resolved per partition on its worker
(``PartitionState.resolve_device``): each partition's state lives in a ``CpuBackend`` or,
on a GPU worker, a ``CudaBackend``.
"""

import functools
import logging

import numpy as np
from sklearn.utils.validation import validate_data

from gpurules.dask.inputs import (feature_array, gathered, is_dask_collection,
                                  is_dask_frame)
from gpurules.backends.dask.backend import DaskBackend, call_actors
from gpurules.backends.dask.partition import PartitionState
from gpurules.data.partitioned_binning import distinct_features, merge_layout, plan_bins
from gpurules.device import parse_device
from gpurules.estimators._base import FitData, store_params
from gpurules.estimators.boomer import BoomerClassifier
from gpurules.estimators.boomer_params import resolve_calibration, resolve_joint_calibration
from gpurules.estimators.multi_label import multi_label_classes
from gpurules.estimators.validation import (TargetLayout, check_label_names,
                                            check_labels, check_sample_weight, check_seed,
                                            label_matrix_is_sparse, nominal_mask,
                                            with_display_names)
from gpurules.rule_importance import rule_list

INSTALL_HINT = "gpurules.dask needs dask and distributed: pip install gpurules[dask]"
logger = logging.getLogger("gpurules")


def _import_dask():
    """(dask.array, distributed), or ImportError naming the extra to install."""
    try:
        import dask.array as da
        import distributed
    except ImportError as error:
        raise ImportError(f"{INSTALL_HINT} ({error})") from error
    return da, distributed


class DaskBoomerClassifier(BoomerClassifier):
    """:class:`~gpurules.BoomerClassifier` fitted on a Dask cluster's workers (CPU or GPU).

    Takes every parameter of ``BoomerClassifier`` plus ``client`` (a
    ``distributed.Client``; None: the default client, ``distributed.get_client()``). Only
    the histogram search runs distributed: ``feature_binning`` must be
    ``'equal-width'`` or ``'equal-frequency'`` (``'auto'`` means equal-width).

    ``device`` is resolved on each worker, for the partitions it holds, as
    ``BoomerClassifier`` resolves it in one process: ``'cpu'``: the CPU backend;
    ``'cuda'``/``'cuda:N'``: the CUDA backend on the worker's device N (with
    ``dask_cuda.LocalCUDACluster``, one worker per GPU, each worker's GPU is its
    ``cuda:0``); a worker where that device cannot be used fails the fit with a
    ``RuntimeError`` naming the worker and why (never a silent CPU fit); ``'auto'``:
    ``cuda:0`` on a worker where it is usable, else the CPU, said in an INFO log line of
    the ``"gpurules"`` logger naming the worker and why. The histogram rows of both
    backends are equal bit for bit, so the model does not depend on the devices.

    ``fit(X, y, ...)``: ``X`` a 2-D ``dask.array`` or a dask DataFrame partitioned by rows,
    ``y`` and ``sample_weight`` NumPy or dask (array, Series, DataFrame) with rows matching
    X's by position; the labels and weights are gathered on the client once (the learner
    samples and holds out examples there). Probability calibration is not supported yet.
    Fitted attributes as ``BoomerClassifier`` (NumPy only); ``partition_devices_``: list of
    str, the device each partition ran on (``'cpu'`` or ``'cuda:N'`` of its worker);
    ``device_``: that device when all partitions ran on the same one, else the distinct
    ones, sorted and joined by ``', '`` (e.g. ``'cpu, cuda:0'``); and
    ``received_bytes_``: int64 (R,), per refinement step of the fit the bytes of the arrays
    that crossed between workers (the histogram rows of the sampled features that the
    partitions on other workers sent the leader, the partition that runs the steps, and
    those features) and, on a block's last step, to the client (``DaskBackend``).

    A worker lost during the fit raises ``WorkerLostError`` (a ``RuntimeError``) naming
    it: its partitions' state is gone and the fit must be restarted.
    """

    def __init__(self, client=None, random_state=1, feature_format=None,
                 output_format=None, prediction_format=None, statistic_format=None,
                 statistic_type=None, default_rule=None, rule_induction=None,
                 max_rules=None, time_limit=None, global_pruning=None,
                 post_optimization=None, head_type=None, loss=None,
                 marginal_probability_calibration=None, joint_probability_calibration=None,
                 binary_predictor=None, probability_predictor=None, output_sampling=None,
                 instance_sampling=None, feature_sampling=None, holdout=None,
                 feature_binning=None, label_binning=None, rule_pruning=None, shrinkage=0.3,
                 l1_regularization_weight=None, l2_regularization_weight=None,
                 parallel_rule_refinement=None, parallel_statistic_update=None,
                 parallel_prediction=None, device="auto", verbose=0):
        store_params(self, locals())

    # -- fit -------------------------------------------------------------------------
    def fit(self, X, y, nominal_feature_indices=None, ordinal_feature_indices=None,
            sample_weight=None, feature_names=None, label_names=None, nominal_values=None):
        """Learn rules from ``X`` partitioned by rows and its labels ``y``.

        Args:
            X: a 2-D ``dask.array`` (n, A) of any numeric dtype, or a dask DataFrame of
                numeric and categorical columns (categorical ones become nominal features,
                as in ``BoomerClassifier``; their categories must be known). Row counts
                may be unknown: the partitions count them on the workers.
            y: (n, K) of 0/1 or 1-D binary: NumPy, or a dask array / Series / DataFrame
                whose rows match X's by position (ValueError where they cannot: a
                partition of another length, or another total).
            sample_weight: None, NumPy or dask (n,), matched like ``y``.
            Other arguments as ``BoomerClassifier.fit``.
        """
        da, _ = _import_dask()
        config, threads = self._resolve_config()
        self._check_supported()
        client = self._client()
        columns = X._meta if is_dask_frame(X) else None  # an empty pandas frame: the names
        X, info = feature_array(X, da)
        validate_data(self, np.empty((0, X.shape[1]), np.float32) if columns is None
                      else columns, reset=True, skip_check_array=True)
        actors, handles, sizes = self._start_partitions(client, X)
        try:
            self._resolve_partition_devices(actors, _live_workers(client))
            n, A = int(sum(sizes)), X.shape[1]
            y = gathered(client, y, sizes, "y")
            Y, self.classes_, self._one_d = check_labels(y, n)
            config, threads = self._resolve_config(TargetLayout(
                label_matrix_is_sparse(y, self.output_format), Y.shape[1]))
            self._label_dtype = y.dtype if hasattr(y, "toarray") else np.asarray(y).dtype
            if not self._one_d:
                self.classes_ = multi_label_classes(Y.shape[1], self._label_dtype)
            weight = check_sample_weight(gathered(client, sample_weight, sizes,
                                                  "sample_weight"), n)
            self.feature_categories_ = info.categories
            nominal = nominal_mask(A, nominal_feature_indices, info.nominal,
                                   ordinal_feature_indices)
            info = with_display_names(info, feature_names, nominal_values)
            self._threads = threads
            self._dask = (client, actors, handles, sizes)
            data = FitData(info, Y, nominal, weight, 0.0,
                           np.random.default_rng(check_seed(self.random_state)),
                           check_label_names(label_names, Y.shape[1]))
            progress = self._progress(config.max_rules, config.time_limit)
            with progress:
                model = self._learn(config, data, progress)
            _record_training_coverage(model, actors, n, _live_workers(client))
            self.model_ = model
        finally:
            backend, self._dask, self._backend = getattr(self, "_backend", None), None, None
            if backend is not None:
                self.received_bytes_ = np.asarray(backend.received_bytes, np.int64)
                backend.close()
            del actors, handles
        self.n_outputs_ = Y.shape[1]
        return self

    @staticmethod
    def _start_partitions(client, X):
        """One ``PartitionState`` actor per row partition of the dask array ``X``, each
        made on the worker that computed its block; returns (actors, their futures (the
        actors live as long as these), the partitions' row counts (P,) int64). The raw
        blocks are let go once the actors hold their float32 copies."""
        blocks = client.compute(list(X.to_delayed().ravel()))
        handles = [client.submit(PartitionState, b, actor=True, pure=False) for b in blocks]
        actors = [h.result() for h in handles]
        del blocks
        workers = _live_workers(client)
        sizes = call_actors(actors, "rows", (), workers)
        return actors, handles, np.asarray(sizes, np.int64)

    def _resolve_partition_devices(self, actors, workers):
        """Resolve ``device`` on every partition's worker (``PartitionState.
        resolve_device``); sets ``partition_devices_``, ``device_`` and ``_device`` (the
        one ``Device`` of the fit, None when the partitions' devices differ). Logs one INFO
        line per worker where ``'auto'`` chose the CPU, naming it and why. A worker that
        cannot use a requested CUDA device raises its ``RuntimeError``."""
        resolved = call_actors(actors, "resolve_device", (self.device,), workers)
        self.partition_devices_ = [device for device, _ in resolved]
        distinct = sorted(set(self.partition_devices_))
        self.device_ = ", ".join(distinct)
        self._device = parse_device(distinct[0]) if len(distinct) == 1 else None
        on_cpu = {}
        for p, (actor, (_, reason)) in enumerate(zip(actors, resolved)):
            if reason is not None:
                on_cpu.setdefault((getattr(actor, "_address", None), reason), []).append(p)
        for (address, reason), parts in on_cpu.items():
            logger.info("gpurules: device=%r uses the CPU on worker %s (partitions %s): %s",
                        self.device, address, ", ".join(map(str, parts)), reason)

    def _check_supported(self):
        """ValueError for parameters the distributed fit does not run (yet), and for a
        ``device`` that names no device (``gpurules.device.parse_device``)."""
        parse_device(self.device)
        if self._option("feature_binning")[0] == "none":
            raise ValueError(f"feature_binning={self.feature_binning!r}: "
                             f"DaskBoomerClassifier runs the histogram search only; use "
                             f"feature_binning={self._binned_choices()}")
        if resolve_calibration(self) is not None:
            raise ValueError(f"marginal_probability_calibration="
                             f"{self.marginal_probability_calibration!r} is not supported by "
                             f"DaskBoomerClassifier yet; use 'none'")
        if resolve_joint_calibration(self) is not None:
            raise ValueError(f"joint_probability_calibration="
                             f"{self.joint_probability_calibration!r} is not supported by "
                             f"DaskBoomerClassifier yet; use 'none'")

    def _client(self):
        """The ``client`` parameter, or the default client (ValueError if there is none)."""
        _, distributed = _import_dask()
        if self.client is not None:
            if not isinstance(self.client, distributed.Client):
                raise TypeError(f"client must be a distributed.Client or None, got "
                                f"{type(self.client).__name__}")
            return self.client
        try:
            return distributed.get_client()
        except ValueError as error:
            raise ValueError("DaskBoomerClassifier needs a distributed.Client: pass "
                             "client= or create one first") from error

    # -- the hooks of BoomerClassifier._learn ------------------------------------------
    def _feature_representation(self, X, nominal_mask, sparse_value, backend=None):
        """Bins the partitions (their actors, made by :meth:`_start_partitions`) with one
        global pass; returns the compact global layout and keeps the DaskBackend (which
        :meth:`_make_backend` returns; ``backend`` is not called)."""
        client, actors, handles, sizes = self._dask
        binning, options = self._option("feature_binning")
        binning = "equal-width" if binning == "auto" else binning
        self.feature_binning_, self.feature_format_ = binning, "dense"
        workers = _live_workers(client)
        distinct = distinct_features(nominal_mask, binning)
        summaries = call_actors(actors, "summary", (distinct,), workers)
        plan = plan_bins(summaries, nominal_mask, binning, **options)
        ranges = call_actors(actors, "bin", (plan,), workers)
        layout, compact = merge_layout(plan, ranges)
        self._backend = DaskBackend(actors, sizes, layout, self._threads, workers,
                                    self.partition_devices_)
        self._backend._handles = handles  # the actors live as long as their futures
        return compact

    def _make_backend(self, threads):
        return self._backend

    # -- prediction ------------------------------------------------------------------
    def decision_function(self, X):
        return self._per_partition("decision_function", X)

    def predict(self, X):
        return self._per_partition("predict", X)

    def predict_proba(self, X):
        return self._per_partition("predict_proba", X)

    def _per_partition(self, method, X):
        """BoomerClassifier's ``method`` on in-memory ``X`` (NumPy, SciPy sparse, pandas):
        its result. On a dask array or DataFrame: a lazy dask array of its results, one
        block per row partition (rows (n,) or (n, K), as ``BoomerClassifier`` returns them;
        a DataFrame's row counts are unknown until computed, as in ``to_dask_array()``)."""
        if not is_dask_collection(X):
            return getattr(BoomerClassifier, method)(self, X)
        if self._option("prediction_format")[0] == "sparse":
            raise ValueError("prediction_format='sparse' is not supported on dask "
                             "collections")
        local = self._in_memory()
        func = functools.partial(_predict_block, local, method)
        if is_dask_frame(X):
            return _predict_frame(func, X)
        if not hasattr(X, "map_blocks") or X.ndim != 2:
            raise TypeError(f"{method} needs a 2-D dask array or a dask DataFrame, got "
                            f"{type(X).__name__}")
        X = X.rechunk({1: -1})
        meta = func(np.zeros((0, X.shape[1]), np.float32))
        if meta.ndim == 1:
            return X.map_blocks(func, dtype=meta.dtype, drop_axis=1)
        return X.map_blocks(func, dtype=meta.dtype, chunks=(X.chunks[0], meta.shape[1:]))

    def _in_memory(self):
        """A fitted BoomerClassifier with this one's parameters and fitted state (no
        client): what the partitions' prediction tasks carry."""
        local = BoomerClassifier.__new__(BoomerClassifier)
        local.__dict__.update({k: v for k, v in self.__dict__.items()
                               if k not in ("client", "_dask", "_backend")})
        return local


def _record_training_coverage(model, actors, n, workers):
    """Store the model's training coverage (``rule_coverage``, ``n_training_examples``,
    as ``rule_importance.record_training_coverage`` on the concatenated data): each
    partition counts the examples satisfying each rule's body on its binned features
    (``PartitionState.rule_coverage``, after the fit); only the counts, int64 (R,) per
    partition, come to the client. ``n``: int, the training examples."""
    m = rule_list(model)
    counts = call_actors(actors, "rule_coverage", (
        m.cond_feature, m.cond_op, m.cond_threshold, m.rule_cond_start), workers)
    m.rule_coverage = np.sum(counts, axis=0, dtype=np.int64).reshape(m.num_rules)
    m.n_training_examples = int(n)


def _live_workers(client):
    """A callable returning the addresses (set of str) of ``client``'s live workers,
    asked of the scheduler at each call (``Client.nthreads``; not
    ``scheduler_info()["workers"]``, which a periodic refresh of the client's cached copy
    can empty for a moment: every actor would then seem lost)."""
    return lambda: set(client.nthreads())


def _predict_block(estimator, method, block):
    """``estimator.method`` on one block: a NumPy array (rows of a dask array) or a pandas
    DataFrame (a partition of a dask DataFrame)."""
    return getattr(estimator, method)(block)


def _predict_frame(func, X):
    """``func`` on every partition of the dask DataFrame ``X``, as one lazy dask array
    (rows of unknown count per partition); ValueError for a dask Series."""
    import dask
    import dask.array as da

    if X.ndim != 2:
        raise ValueError("X must be 2-D: got a dask Series; pass a DataFrame, e.g. "
                         "series.to_frame()")
    meta = func(X._meta)
    blocks = [da.from_delayed(dask.delayed(func)(part), shape=(np.nan,) + meta.shape[1:],
                              dtype=meta.dtype) for part in X.to_delayed()]
    return da.concatenate(blocks, axis=0)
