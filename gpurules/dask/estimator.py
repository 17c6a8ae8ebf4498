"""DaskBoomerClassifier: BoomerClassifier's fit over row partitions held by Dask workers.

The estimator validates the distributed inputs, bins the features with one global pass
(``data.partitioned_binning``), starts one ``PartitionState`` actor per partition and runs
the unchanged ``BoostingLearner`` through ``BoomerClassifier._learn`` with a
``DaskBackend``. The fitted model is the same NumPy ``RuleModel`` as an in-memory fit's;
prediction runs per partition (``map_blocks``) on dask arrays and in memory on NumPy ones.
"""

import functools

import numpy as np

from gpurules.backends.dask.backend import DaskBackend
from gpurules.backends.dask.partition import PartitionState
from gpurules.data.partitioned_binning import distinct_features, merge_layout, plan_bins
from gpurules.device import CPU, parse_device
from gpurules.estimators._base import (FitData, multi_label_classes, nominal_mask,
                                       store_params)
from gpurules.estimators.boomer import BoomerClassifier
from gpurules.estimators.boomer_params import resolve_calibration, resolve_joint_calibration
from gpurules.estimators.validation import (FeatureInput, check_label_names, check_labels,
                                            check_sample_weight, check_seed, is_dataframe,
                                            with_display_names)
from gpurules.rule_importance import coverage, rule_list

INSTALL_HINT = "gpurules.dask needs dask and distributed: pip install gpurules[dask]"


def _import_dask():
    """(dask.array, distributed), or ImportError naming the extra to install."""
    try:
        import dask.array as da
        import distributed
    except ImportError as error:
        raise ImportError(f"{INSTALL_HINT} ({error})") from error
    return da, distributed


class DaskBoomerClassifier(BoomerClassifier):
    """:class:`~gpurules.BoomerClassifier` fitted on a Dask cluster's CPU workers.

    Takes every parameter of ``BoomerClassifier`` plus ``client`` (a
    ``distributed.Client``; None: the default client, ``distributed.get_client()``). Only
    the histogram search runs distributed: ``feature_binning`` must be
    ``'equal-width'`` or ``'equal-frequency'`` (``'auto'`` means equal-width), and
    ``device`` ``'cpu'`` or ``'auto'`` (GPU workers are not supported yet).

    ``fit(X, y, ...)``: ``X`` a 2-D ``dask.array`` partitioned by rows (its columns are
    put into one chunk), ``y`` and ``sample_weight`` dask or NumPy arrays; the labels and
    weights are gathered on the client once (the learner samples and holds out examples
    there). dask.dataframe and ``marginal_probability_calibration`` are not supported yet.
    Fitted attributes as ``BoomerClassifier`` (NumPy only), ``device_ == "cpu"``.
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
        """Learn rules from the row-partitioned ``dask.array`` ``X`` (n, A) and labels
        ``y`` (n, K) of 0/1 or 1-D binary (dask or NumPy); other arguments as
        ``BoomerClassifier.fit``."""
        da, _ = _import_dask()
        config, threads = self._resolve_config()
        self._check_supported()
        client = self._client()
        X = self._check_dask_features(X, da)
        n, A = X.shape
        y = self._gathered(client, y)
        Y, self.classes_, self._one_d = check_labels(y, n)
        self._label_dtype = y.dtype if hasattr(y, "toarray") else np.asarray(y).dtype
        if not self._one_d:
            self.classes_ = multi_label_classes(Y.shape[1], self._label_dtype)
        weight = check_sample_weight(self._gathered(client, sample_weight), n)
        self.n_features_in_, self.feature_categories_ = A, {}
        nominal = nominal_mask(A, nominal_feature_indices, [], ordinal_feature_indices)
        info = with_display_names(FeatureInput(X, [], None, {}, {}), feature_names,
                                  nominal_values)
        self._device, self.device_, self._threads = CPU, str(CPU), threads
        self._dask = (client, X)
        data = FitData(info, Y, nominal, weight, 0.0,
                       np.random.default_rng(check_seed(self.random_state)),
                       check_label_names(label_names, Y.shape[1]))
        progress = self._progress(config.max_rules, config.time_limit)
        try:
            with progress:
                self.model_ = self._learn(config, data, progress)
        finally:
            backend, self._dask = getattr(self, "_backend", None), None
            if backend is not None:
                backend.close()
            self._backend = None
        self._record_training_coverage(client, X)
        self.n_outputs_ = Y.shape[1]
        return self

    def _check_supported(self):
        """ValueError for parameters the distributed fit does not run (yet)."""
        device = parse_device(self.device)
        if device.kind not in ("cpu", "auto"):
            raise ValueError(f"device={self.device!r}: DaskBoomerClassifier runs on CPU "
                             f"workers only (GPU workers are not supported yet); use "
                             f"device='cpu' or 'auto'")
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

    @staticmethod
    def _check_dask_features(X, da):
        """``X`` as a 2-D dask array of known row chunks with its columns in one chunk;
        TypeError for other inputs."""
        if is_dataframe(X) or type(X).__module__.startswith("dask.dataframe"):
            raise TypeError("DaskBoomerClassifier does not support DataFrames (pandas or "
                            "dask.dataframe) yet; pass a dask.array (e.g. df.to_dask_array("
                            "lengths=True)) with nominal_feature_indices")
        if not isinstance(X, da.Array):
            raise TypeError(f"DaskBoomerClassifier.fit needs a dask.array X partitioned by "
                            f"rows, got {type(X).__name__}; fit BoomerClassifier on "
                            f"in-memory data")
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}")
        if any(np.isnan(c) for c in X.chunks[0]):
            raise ValueError("X has unknown chunk sizes; call X.compute_chunk_sizes() first")
        if X.dtype.kind not in "biuf":
            raise TypeError(f"X must be numeric, got dtype {X.dtype}")
        return X.rechunk({1: -1})

    @staticmethod
    def _gathered(client, a):
        """``a`` (dask array, array-like or None) as a NumPy array on the client."""
        if a is None or not hasattr(a, "dask"):
            return a
        return np.asarray(client.compute(a).result())

    # -- the hooks of BoomerClassifier._learn ------------------------------------------
    def _feature_representation(self, X, nominal_mask, sparse_value):
        """Bins the partitions (one actor each, on the workers holding them) with one
        global pass; returns the compact global layout and keeps the DaskBackend."""
        client, X = self._dask
        binning, options = self._option("feature_binning")
        binning = "equal-width" if binning == "auto" else binning
        self.feature_binning_, self.feature_format_ = binning, "dense"
        blocks = client.compute(list(X.to_delayed().ravel()))
        handles = [client.submit(PartitionState, b, actor=True, pure=False) for b in blocks]
        actors = [h.result() for h in handles]
        distinct = distinct_features(nominal_mask, binning)
        summaries = [f.result() for f in [a.summary(distinct) for a in actors]]
        plan = plan_bins(summaries, nominal_mask, binning, **options)
        ranges = [f.result() for f in [a.bin(plan) for a in actors]]
        layout, compact = merge_layout(plan, ranges)
        self._backend = DaskBackend(actors, X.chunks[0], layout, self._threads)
        self._backend._handles = handles  # the actors live as long as their futures
        return compact

    def _make_backend(self, threads):
        return self._backend

    def _record_training_coverage(self, client, X):
        """The model's training coverage (``rule_importance``), counted per partition."""
        import dask

        parts = client.compute([dask.delayed(coverage)(self.model_, block)
                                for block in X.to_delayed().ravel()])
        counts = [p.result() for p in parts]
        m = rule_list(self.model_)
        m.rule_coverage = np.sum([c[0] for c in counts], axis=0, dtype=np.int64)
        m.n_training_examples = int(sum(c[1] for c in counts))

    # -- prediction ------------------------------------------------------------------
    def decision_function(self, X):
        return self._per_partition("decision_function", X)

    def predict(self, X):
        return self._per_partition("predict", X)

    def predict_proba(self, X):
        return self._per_partition("predict_proba", X)

    def _per_partition(self, method, X):
        """BoomerClassifier's ``method`` on NumPy ``X``; on a dask array a lazy dask array
        of its results, one block per row partition (``map_blocks``)."""
        if not hasattr(X, "map_blocks"):
            return getattr(BoomerClassifier, method)(self, X)
        if self._option("prediction_format")[0] == "sparse":
            raise ValueError("prediction_format='sparse' is not supported on dask arrays")
        X = X.rechunk({1: -1})
        local = self._in_memory()
        func = functools.partial(_predict_block, local, method)
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


def _predict_block(estimator, method, block):
    """``estimator.method`` on one NumPy block (rows of a dask array)."""
    return getattr(estimator, method)(block)
