"""BoomerClassifier: gradient-boosted multi-label rules with mlrl-boomer's parameters."""

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from gpurules.backends.factory import backend_class, get_backend
from gpurules.backends.cpu.threads import thread_limit
from gpurules.data.binning import bin_features, drop_empty_bins
from gpurules.data.presorted import presort_dense
from gpurules.data.sparse import presort_sparse, sparse_is_smaller
from gpurules.compile_log import logs_compilation
from gpurules.device import resolve_device
from gpurules.estimators._base import RuleEstimatorMixin, multi_label_classes
from gpurules.estimators.boomer_params import (parse, resolve_config, resolve_predictors,
                                               with_label_ratio)
from gpurules.estimators.validation import (check_feature_indices, check_labels,
                                            check_sample_weight, check_seed)
from gpurules.learners.boosting import BoostingLearner
from gpurules.objectives.predictors import unique_label_vectors


class BoomerClassifier(RuleEstimatorMixin, ClassifierMixin, BaseEstimator):
    """BOOMER: gradient boosting of (multi-label) classification rules.

    Parameter names, value strings (with ``{key=value}`` options) and effective defaults
    follow mlrl-boomer 0.15; ``None`` means the mlrl-boomer default. Values this version
    does not support raise ``ValueError`` listing the supported ones. ``device`` chooses
    the backend: ``"auto"``, ``"cpu"``, ``"cuda"`` or ``"cuda:N"``.

    Fitted attributes:
        model_: RuleModel (NumPy arrays only; ``len`` counts the default rule; with the
            training label vectors when the example-wise or marginalized predictor needs
            them).
        binary_predictor_, probability_predictor_: the predictors after mlrl-boomer's
            ``auto`` rules (probability: None for losses without probabilities).
        device_: str, the device used ("cpu" or "cuda:N").
        n_features_in_, n_outputs_: ints; feature_names_in_: str ndarray (a DataFrame
            with string column names only).
        feature_categories_: {column: object ndarray} of the DataFrame's categorical
            columns: a nominal condition's value v stands for category v. Predicting
            from a DataFrame maps these columns by value; a value not seen at fit
            satisfies every ``!=`` condition and no ``==`` condition of its column.
        classes_: for a 1-D ``y``, its two classes; else one ``[0, 1]`` array per label
            (as scikit-learn's multi-output classifiers).
    """

    def __init__(self, random_state=1, feature_format=None, output_format=None,
                 prediction_format=None, statistic_format=None, statistic_type=None,
                 default_rule=None, rule_induction=None, max_rules=None, time_limit=None,
                 global_pruning=None, post_optimization=None, head_type=None, loss=None,
                 marginal_probability_calibration=None, joint_probability_calibration=None,
                 binary_predictor=None, probability_predictor=None, output_sampling=None,
                 instance_sampling=None, feature_sampling=None, holdout=None,
                 feature_binning=None, label_binning=None, rule_pruning=None, shrinkage=0.3,
                 l1_regularization_weight=None, l2_regularization_weight=None,
                 parallel_rule_refinement=None, parallel_statistic_update=None,
                 parallel_prediction=None, device="auto"):
        self.random_state = random_state
        self.feature_format = feature_format
        self.output_format = output_format
        self.prediction_format = prediction_format
        self.statistic_format = statistic_format
        self.statistic_type = statistic_type
        self.default_rule = default_rule
        self.rule_induction = rule_induction
        self.max_rules = max_rules
        self.time_limit = time_limit
        self.global_pruning = global_pruning
        self.post_optimization = post_optimization
        self.head_type = head_type
        self.loss = loss
        self.marginal_probability_calibration = marginal_probability_calibration
        self.joint_probability_calibration = joint_probability_calibration
        self.binary_predictor = binary_predictor
        self.probability_predictor = probability_predictor
        self.output_sampling = output_sampling
        self.instance_sampling = instance_sampling
        self.feature_sampling = feature_sampling
        self.holdout = holdout
        self.feature_binning = feature_binning
        self.label_binning = label_binning
        self.rule_pruning = rule_pruning
        self.shrinkage = shrinkage
        self.l1_regularization_weight = l1_regularization_weight
        self.l2_regularization_weight = l2_regularization_weight
        self.parallel_rule_refinement = parallel_rule_refinement
        self.parallel_statistic_update = parallel_statistic_update
        self.parallel_prediction = parallel_prediction
        self.device = device

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        tags.target_tags.multi_output = True
        tags.classifier_tags.multi_class = False
        tags.classifier_tags.multi_label = True
        return tags

    @logs_compilation
    def fit(self, X, y, nominal_feature_indices=None, ordinal_feature_indices=None,
            sample_weight=None, sparse_feature_value=0.0):
        """Learn rules from ``X`` (n, A) and labels ``y`` (n, K) of 0/1 (or 1-D binary).

        Args:
            X: array-like, sparse matrix or pandas DataFrame (categorical columns become
                nominal features). NaN marks a missing value.
            y: array-like or sparse (n, K) of 0/1, or 1-D with at most two classes.
            nominal_feature_indices: columns searched with ``==``/``!=`` conditions.
            ordinal_feature_indices: columns searched like numerical ones.
            sample_weight: optional non-negative float (n,) example weights.
            sparse_feature_value: the value of the entries a sparse X does not store (the
                sparse representation never visits them).
        """
        config, threads = resolve_config(self)
        seed = check_seed(self.random_state)
        info = self._fit_features(X, keep_sparse=True)
        X = info.X
        Y, self.classes_, self._one_d = check_labels(y, X.shape[0])
        self._label_dtype = np.asarray(y).dtype if not hasattr(y, 'toarray') else y.dtype
        if not self._one_d:
            self.classes_ = multi_label_classes(Y.shape[1], self._label_dtype)
        weight = check_sample_weight(sample_weight, X.shape[0])
        A = X.shape[1]
        nominal = set(check_feature_indices(nominal_feature_indices, A,
                                            "nominal_feature_indices")) | set(info.nominal)
        ordinal = set(check_feature_indices(ordinal_feature_indices, A,
                                            "ordinal_feature_indices"))
        if nominal & ordinal:
            raise ValueError(f"features {sorted(nominal & ordinal)} are declared both nominal "
                             f"and ordinal")
        config = with_label_ratio(config, Y)
        self._device = resolve_device(self.device)
        self.device_ = str(self._device)
        nominal_mask = np.zeros(A, dtype=bool)
        nominal_mask[list(nominal)] = True
        self._threads = threads
        backend = self._make_backend(threads)
        rng = np.random.default_rng(seed)
        features = self._feature_representation(X, nominal_mask, sparse_feature_value)
        builder = BoostingLearner(config, backend, rng).fit(features, Y, weight)
        self.model_ = builder.build(feature_names=info.names,
                                    nominal_values=info.levels or None)
        self._loss = config.loss
        self.binary_predictor_, self.probability_predictor_ = resolve_predictors(
            self, config.loss.name)
        if "example-wise" == self.binary_predictor_ or \
                "marginalized" == self.probability_predictor_:
            vectors, counts = unique_label_vectors(Y)
            self.model_.label_vectors, self.model_.label_vector_counts = vectors, counts
        self.n_outputs_ = Y.shape[1]
        return self

    def _make_backend(self, threads):
        """A new backend of the resolved device (``backends.factory``)."""
        return get_backend(self._device, threads)

    def _feature_representation(self, X, nominal_mask, sparse_value):
        """Binned features if ``feature_binning`` asks for them ('auto': equal-width for dense
        input with more than 200,000 examples, as mlrl-boomer decides), else pre-sorted
        dense or sparse features as ``feature_format`` asks ('auto': the smaller in
        memory)."""
        fmt, _ = parse("feature_format", self.feature_format)
        if not np.isfinite(sparse_value):
            raise ValueError(f"sparse_feature_value must be finite, got {sparse_value!r}")
        binning, options = parse("feature_binning", self.feature_binning)
        needs_bins = backend_class(self._device).requires_binned_features
        if binning == "auto":
            big_dense = not sp.issparse(X) and X.shape[0] > 200_000
            binning = "equal-width" if big_dense or needs_bins else "none"
        if needs_bins and binning == "none":
            raise ValueError(f"device={self.device!r} runs the histogram search: use "
                             f"feature_binning='auto', 'equal-width' or 'equal-frequency' "
                             f"(or device='cpu' for the exact search)")
        self.feature_binning_ = binning
        if binning != "none":
            self.feature_format_ = "dense"
            dense = X.toarray() if sp.issparse(X) else X
            with thread_limit(self._threads["search"]):
                return drop_empty_bins(bin_features(dense, nominal_mask, binning, **options))
        use_sparse = fmt == "sparse" or (fmt == "auto" and sparse_is_smaller(X))
        if use_sparse:
            self.feature_format_ = "sparse"
            return presort_sparse(X, nominal_mask, sparse_value)
        self.feature_format_ = "dense"
        dense = X.toarray() if sp.issparse(X) else X
        if sp.issparse(X) and sparse_value != 0:
            raise ValueError("sparse_feature_value != 0 needs a dense X")
        return presort_dense(np.asarray(dense, dtype=np.float32), nominal_mask)

    def decision_function(self, X):
        """Summed rule scores: float64 (n, K), or (n,) for a model fitted on a 1-D y."""
        X = self._predict_features(X)
        scores = self.model_.predict_scores(X, self._threads["predict"])
        return scores[:, 0] if self._one_d else scores

    def predict(self, X):
        """Labels: uint8 (n, K) of 0/1 (CSR if ``prediction_format='sparse'``), or the
        classes of a 1-D y."""
        scores = self.decision_function(X)
        if self.binary_predictor_ == "example-wise":
            from gpurules.backends.cpu.prediction import predict_example_wise

            scores2d = np.ascontiguousarray(scores.reshape(scores.shape[0], -1), np.float64)
            relevant = np.empty(scores2d.shape, np.uint8)
            predict_example_wise(scores2d, self.model_.label_vectors,
                                 self.model_.label_vector_counts, self._loss.code, relevant)
            relevant = relevant.reshape(scores.shape).astype(bool)
        else:
            relevant = scores > self._loss.decision_threshold
        if self._one_d:
            return self.classes_[relevant.astype(np.intp)] if len(self.classes_) == 2 else \
                np.full(relevant.shape, self.classes_[0])
        dtype = self._label_dtype if self._label_dtype.kind in "biuf" else np.uint8
        out = relevant.astype(dtype)
        if parse("prediction_format", self.prediction_format)[0] == "sparse":
            return sp.csr_matrix(out)
        return out

    def predict_proba(self, X):
        """Marginal probabilities: float64 (n, K) (sigmoid of the scores, logistic loss), or
        (n, 2) columns for ``classes_`` after a 1-D y."""
        check_is_fitted(self, "model_")
        if self.probability_predictor_ is None:
            raise ValueError(f"predict_proba needs a logistic loss; loss={self._loss.name!r} "
                             f"yields scores only (use decision_function)")
        scores = self.decision_function(X)
        if self.probability_predictor_ == "marginalized":
            from gpurules.backends.cpu.prediction import predict_marginalized

            vectors = self.model_.label_vectors
            scores2d = np.ascontiguousarray(scores.reshape(scores.shape[0], -1), np.float64)
            proba = np.empty(scores2d.shape)
            predict_marginalized(scores2d, vectors, np.empty(vectors.shape[0]), proba)
            proba = proba.reshape(scores.shape)
        else:
            proba = 0.5 * (1.0 + np.tanh(0.5 * scores))
        if self._one_d:
            return np.column_stack([1.0 - proba, proba])
        return proba
