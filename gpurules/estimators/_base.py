"""What the three estimators share: the input contract (feature names and counts checked
as scikit-learn does, categorical columns mapped by value, nominal/ordinal columns),
tags, the device, and for the multi-output learners (BOOMER's classifier and regressor,
SeCo) the fit's flow, the feature representation of the search and the backend. The 0/1
labels of the multi-label classifiers and the shape of their predictions are in
``multi_label``; the checks of the inputs in ``validation``.

``fit`` calls :meth:`RuleEstimatorMixin._fit_features` once (BOOMER and SeCo through
:meth:`MultiOutputRuleLearner._fit_inputs`), :meth:`RuleEstimatorMixin._resolve_device`
and runs the learner inside :meth:`RuleEstimatorMixin._progress` (the ``verbose`` log,
``gpurules.progress``); every prediction method calls
:meth:`RuleEstimatorMixin._predict_features`. SeCo and TURS count examples, so their
``sample_weight`` goes through ``validation.count_weights``. The mixin also gives every
estimator ``save``/``load`` (``persistence``), ``explain`` and ``feature_importances_``
(``docs/model-format.md``).
"""

import logging
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted, validate_data

from gpurules.backends.factory import backend_class, get_backend, resolve_device
from gpurules.compile_log import logs_compilation
from gpurules.data.binning import bin_features
from gpurules.data.presorted import presort_dense
from gpurules.data.sparse import presort_sparse, sparse_is_smaller
from gpurules.device import CPU, parse_device
from gpurules.estimators.options import check_number, parse_option_value
from gpurules.estimators.persistence import (estimator_from_dict, estimator_to_dict,
                                             load_estimator, register_estimator, save_estimator)
from gpurules.estimators.validation import (TargetLayout, check_features,
                                            check_label_names, check_sample_weight,
                                            check_seed, is_dataframe, label_matrix_is_sparse,
                                            nominal_mask, with_display_names)
from gpurules.jit.threads import thread_limit
from gpurules.progress import FitProgress, check_verbose
from gpurules.rule_importance import record_training_coverage


logger = logging.getLogger("gpurules")


def store_params(estimator, params):
    """Set each argument of ``__init__`` as the attribute of the same name, unchanged (as
    scikit-learn requires). ``params``: ``locals()`` at the start of ``__init__``."""
    for name, value in params.items():
        if name != "self":
            setattr(estimator, name, value)


def take_rows(X, rows):
    """The rows ``rows`` (int or bool index (m,)) of a float32 ndarray or scipy sparse X, in
    X's format."""
    if sp.issparse(X):
        return X.tocsr()[rows].asformat(X.format)
    return np.ascontiguousarray(X[rows])


class RuleEstimatorMixin:
    """Shared input handling, device and progress log. Sets ``n_features_in_``,
    ``feature_names_in_`` (a DataFrame whose column names are all strings) and
    ``feature_categories_`` at fit, and ``device_`` (str, ``"cpu"`` or ``"cuda:N"``) with
    the parsed ``_device``. The estimator has a ``verbose`` parameter (int >= 0)."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        register_estimator(cls)  # loadable by its name (``persistence``)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        return tags

    def _fit_features(self, X, keep_sparse=False, feature_names=None, nominal_values=None):
        """Validate X at fit and record its columns. Returns a ``FeatureInput`` whose
        ``names`` and ``levels`` (what the model prints) include ``feature_names`` and
        ``nominal_values`` (``validation.with_display_names``); ``feature_names_in_``
        comes from a DataFrame only, as in scikit-learn."""
        info = check_features(X, keep_sparse=keep_sparse)
        validate_data(self, X if is_dataframe(X) else info.X, reset=True,
                      skip_check_array=True)
        self.feature_categories_ = info.categories
        return with_display_names(info, feature_names, nominal_values)

    def _progress(self, max_rules, time_limit=0.0, every=None):
        """The :class:`~gpurules.progress.FitProgress` of this fit (``verbose``; validated
        here, TypeError/ValueError). ``max_rules``: the rules requested, as the learner
        counts them (0: unlimited); ``every``: rules between two progress lines."""
        return FitProgress(type(self).__name__, check_verbose(self.verbose), max_rules,
                           time_limit, every)

    def _resolve_device(self):
        """Resolve the ``device`` parameter (``backends.factory.resolve_device``) into
        ``_device`` (a ``Device``) and ``device_``."""
        self._device = resolve_device(self.device)
        self.device_ = str(self._device)

    def _predict_features(self, X):
        """Validate X for prediction: the fitted names (a DataFrame's columns must match
        them, as in scikit-learn) and number of features; categorical columns encoded with
        the fit's categories. Returns float32 (n, A); n may be 0."""
        check_is_fitted(self, "model_")
        if is_dataframe(X):
            validate_data(self, X, reset=False, skip_check_array=True)
        X_arr = check_features(X, self.n_features_in_, type(self).__name__,
                               categories=self.feature_categories_, min_samples=0).X
        if not is_dataframe(X):  # warns if fitted with names, as scikit-learn does
            validate_data(self, X_arr, reset=False, skip_check_array=True)
        return X_arr

    def explain(self, X):
        """The rules that fire for each example of ``X`` (as for ``predict``) and what
        they contribute: a list of n lists of dicts (``model_.explain``,
        ``docs/model-format.md``)."""
        X = self._predict_features(X)
        return self.model_.explain(X)

    @property
    def feature_importances_(self):
        """float64 (n_features_in_,), summing to 1 (all 0 without conditions): each rule's
        training coverage times what it contributes, split among the features of its
        conditions (``gpurules.rule_importance``, ``docs/model-format.md``)."""
        check_is_fitted(self, "model_")
        return self.model_.feature_importances(self.n_features_in_)

    def save(self, path):
        """Write the fitted estimator to ``path`` as JSON (``docs/model-format.md``):
        ``type(self).load(path)`` or ``gpurules.load_estimator(path)`` rebuild it,
        ``gpurules.load_model(path)`` reads its ``model_``."""
        save_estimator(self, path)

    def to_dict(self):
        """The document :meth:`save` writes, as a dict of JSON types."""
        return estimator_to_dict(self)

    @classmethod
    def load(cls, path):
        """The fitted estimator saved at ``path`` by :meth:`save` (JSON only, no pickle);
        ValueError if the file is malformed, newer than this version reads, or holds
        another estimator."""
        return load_estimator(path, cls)

    @classmethod
    def from_dict(cls, doc):
        """The fitted estimator of a document written by :meth:`to_dict`."""
        return estimator_from_dict(doc, cls)

    def _prediction_state(self):
        """The fitted state beyond the inputs that prediction needs, as JSON (the model
        file's ``estimator`` section; :meth:`_restore_prediction_state` reads it)."""
        return {}

    def _restore_prediction_state(self, node):
        """Set the fitted state of :meth:`_prediction_state` from ``node`` (a
        ``json_fields.Node`` of the ``estimator`` section)."""


class FitData(NamedTuple):
    """The validated inputs of one fit of a :class:`MultiOutputRuleLearner`.

    info: ``FeatureInput``; its X: float32 ndarray (n, A) or CSC matrix.
    Y: uint8 (n, K) of 0/1 (a regressor's: float64 (n, K) targets).  nominal: bool (A,),
        the nominal features.
    weight: the ``sample_weight`` as :meth:`MultiOutputRuleLearner._fit_weights` checks
        it: BOOMER float64 (n,) (ones without it); SeCo int64 (n,) or None (all ones).
    sparse_value: float, the value of the entries a sparse X does not store.
    rng: ``numpy.random.Generator`` seeded with ``random_state``.
    label_names: K str or None, the label names the model prints.
    """

    info: object
    Y: np.ndarray
    nominal: np.ndarray
    weight: np.ndarray
    sparse_value: float
    rng: np.random.Generator
    label_names: list = None


class MultiOutputRuleLearner(RuleEstimatorMixin):
    """Base of the multi-output learners (BOOMER's classifier and regressor, SeCo) with
    mlrl-style string parameters; a subclass adds scikit-learn's classifier or regressor
    mixin and ``BaseEstimator``.

    A subclass sets ``_SUPPORTED`` ({parameter: {value name: {option: default}}}, as in
    ``boomer_params``) and ``_resolve_config`` (its ``*_params.resolve_config``: the
    estimator -> (config, threads dict)), has the parameters ``random_state``,
    ``feature_format``, ``feature_binning``, ``prediction_format`` and ``device``, and
    implements :meth:`_fit_targets` and :meth:`_learn`. Fitted attributes set here:
    ``model_``, ``n_outputs_``, ``device_``, ``feature_binning_``, ``feature_format_`` and
    those of :class:`RuleEstimatorMixin`.
    """

    _SUPPORTED = {}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def _option(self, param):
        """(name, options) of string parameter ``param`` (``options.parse_option_value``)."""
        return parse_option_value(param, getattr(self, param), self._SUPPORTED[param])

    @logs_compilation
    def fit(self, X, y, nominal_feature_indices=None, ordinal_feature_indices=None,
            sample_weight=None, sparse_feature_value=0.0, feature_names=None,
            label_names=None, nominal_values=None):
        """Learn rules from ``X`` (n, A) and ``y``: a classifier's labels (n, K) of 0/1 (or
        1-D binary), a regressor's real-valued targets (n, K) or (n,).

        Args:
            X: array-like, sparse matrix or pandas DataFrame (categorical columns become
                nominal features). NaN marks a missing value.
            y: classifier: array-like or sparse (n, K) of 0/1, or 1-D with at most two
                classes; regressor: numeric array-like (n, K) or (n,), finite.
            nominal_feature_indices: columns searched with ``==``/``!=`` conditions.
            ordinal_feature_indices: columns searched like numerical ones.
            sample_weight: optional non-negative (n,) example weights; what a weight means
                is the estimator's (BOOMER: it scales the example's loss; SeCo: integers,
                counted like repeated rows).
            sparse_feature_value: the value of the entries a sparse X does not store (the
                sparse representation never visits them).
            feature_names, label_names, nominal_values: what the model prints for an
                array X (e.g. a ``Dataset``'s ``feature_names``, ``label_names``,
                ``nominal_values``): A feature names, K label (regressor: target) names,
                {column: value names}. Display only: ``feature_names_in_`` is set from a DataFrame alone.
        """
        self._resolve_config()  # the parameters, checked before the data
        seed = check_seed(self.random_state)
        info, Y, nominal = self._fit_inputs(X, y, nominal_feature_indices,
                                            ordinal_feature_indices, feature_names,
                                            nominal_values)
        # the auto rules of some parameters depend on the labels (boomer_params)
        config, threads = self._resolve_config(TargetLayout(
            label_matrix_is_sparse(y, getattr(self, "output_format", None)), Y.shape[1]))
        progress = self._progress(config.max_rules, config.time_limit)
        label_names = check_label_names(label_names, Y.shape[1])
        weight = self._fit_weights(sample_weight, Y.shape[0])
        self._resolve_device()
        self._threads = threads
        data = FitData(info, Y, nominal, weight, sparse_feature_value,
                       np.random.default_rng(seed), label_names)
        with progress:
            self.model_ = self._learn(config, data, progress)
        record_training_coverage(self.model_, info.X, threads["predict"])
        self.n_outputs_ = Y.shape[1]
        return self

    def _fit_weights(self, sample_weight, n_examples):
        """``FitData.weight`` of ``sample_weight``: float64 (n,), ones without it
        (``validation.check_sample_weight``)."""
        return check_sample_weight(sample_weight, n_examples)

    def _learn(self, config, data, progress):
        """The model learned from ``data`` (:class:`FitData`) with ``config``; the learner
        reports to ``progress`` (a ``FitProgress``)."""
        raise NotImplementedError

    def _fit_inputs(self, X, y, nominal_feature_indices, ordinal_feature_indices,
                    feature_names=None, nominal_values=None):
        """Validate the inputs of ``fit`` (``y`` by :meth:`_fit_targets`).

        Returns:
            (FeatureInput (its X: float32 ndarray (n, A) or CSC), Y (n, K) as
            :meth:`_fit_targets` returns it, nominal mask bool (A,)).
        """
        info = self._fit_features(X, True, feature_names, nominal_values)
        Y = self._fit_targets(y, info.X.shape[0])
        mask = nominal_mask(info.X.shape[1], nominal_feature_indices, info.nominal,
                            ordinal_feature_indices)
        return info, Y, mask

    def _fit_targets(self, y, n_examples):
        """``y`` validated for a fit on ``n_examples``: (n, K); sets ``_one_d`` and what
        else predictions need to shape their output."""
        raise NotImplementedError

    def _exact_search_device(self):
        """The device for ``feature_binning='none'`` (the exact search) when the resolved
        device has only the histogram search (:meth:`_run_on_cpu`)."""
        self._run_on_cpu(
            f"feature_binning='none' asks for the exact search, which {self._device} does "
            f"not run",
            f"device={self.device!r} runs the histogram search: use feature_binning="
            f"{self._binned_choices()} (or device='cpu' for the exact search)")

    def _run_on_cpu(self, reason, error):
        """Run this fit on the CPU, which a CUDA device cannot run for ``reason``: with
        ``device='auto'`` said in an INFO log line; an explicit CUDA device raises
        ``ValueError(error)``. Nothing to do when the resolved device is the CPU."""
        if not self._device.is_cuda:
            return
        if parse_device(self.device).kind != "auto":
            raise ValueError(error)
        logger.info("gpurules: device='auto' uses the CPU: %s", reason)
        self._device = CPU
        self.device_ = str(CPU)

    def _make_backend(self, threads):
        """A new backend of the resolved device (``backends.factory``); ``threads``: the
        ``resolve_config`` thread counts."""
        return get_backend(self._device, threads)

    def _feature_binning(self, X):
        """(name, options) of the binning to use for ``X``; 'none': no binning."""
        return self._option("feature_binning")

    def _feature_representation(self, X, nominal_mask, sparse_value, backend=None):
        """The features the search runs on: binned (``BinnedFeatures``) if
        :meth:`_feature_binning` says so, else pre-sorted dense or sparse as
        ``feature_format`` asks ('auto': the smaller in memory). Sets
        ``feature_binning_`` and ``feature_format_``.

        Args:
            X: float32 ndarray (n, A) or scipy sparse; nominal_mask: bool (A,);
            sparse_value: float, the value of the entries a sparse X does not store.
            backend: None, or a function returning the fit's backend, whose
                ``bin_features`` (where it has one) may bin on its device; it is called
                only to bin, once the device is settled.
        """
        check_number("sparse_feature_value", sparse_value)  # (a finite real number)
        binning, options = self._feature_binning(X)
        if binning == "none" and backend_class(self._device).requires_binned_features:
            self._exact_search_device()
        self.feature_binning_ = binning
        if binning != "none":
            self.feature_format_ = "dense"
            dense = X.toarray() if sp.issparse(X) else X
            if backend is not None and hasattr(backend(), "bin_features"):
                binned = backend().bin_features(dense, nominal_mask, binning, options)
                if binned is not None:
                    return binned
            with thread_limit(self._threads["search"]):
                return bin_features(dense, nominal_mask, binning, drop_empty=True, **options)
        return self._presorted(X, nominal_mask, sparse_value)

    def _presorted(self, X, nominal_mask, sparse_value):
        """Pre-sorted sparse or dense features of X (as for
        :meth:`_feature_representation`); sets ``feature_format_``."""
        fmt, _ = self._option("feature_format")
        if fmt == "sparse" or (fmt == "auto" and sparse_is_smaller(X)):
            self.feature_format_ = "sparse"
            return presort_sparse(X, nominal_mask, sparse_value, self._threads["search"])
        self.feature_format_ = "dense"
        if sp.issparse(X) and sparse_value != 0:
            raise ValueError("sparse_feature_value != 0 needs a dense X")
        dense = X.toarray() if sp.issparse(X) else X
        return presort_dense(np.asarray(dense, dtype=np.float32), nominal_mask,
                             self._threads["search"])

    def _prediction_state(self):
        """The output shape and the feature representation used (for information)."""
        return {"n_outputs": int(self.n_outputs_), "one_d": bool(self._one_d),
                "feature_binning": getattr(self, "feature_binning_", None),
                "feature_format": getattr(self, "feature_format_", None)}

    def _restore_prediction_state(self, node):
        self.n_outputs_ = node.get("n_outputs").int(low=1)
        self._one_d = node.get("one_d").bool()
        for name in ("feature_binning", "feature_format"):
            value = node.optional(name)
            if value is not None:
                setattr(self, name + "_", value.str())
        self._threads = self._resolve_config()[1]

    def _binned_choices(self):
        """The supported ``feature_binning`` values other than 'none', for messages:
        "'a', 'b' or 'c'"."""
        names = [repr(name) for name in self._SUPPORTED["feature_binning"] if name != "none"]
        return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
