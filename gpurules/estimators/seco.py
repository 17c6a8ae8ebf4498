"""SeCoClassifier: separate-and-conquer multi-label rules with mlrl-seco's parameters."""

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin

from gpurules.backends.factory import backend_class, get_backend
from gpurules.backends.cpu.threads import thread_limit
from gpurules.data.binning import bin_features, drop_empty_bins
from gpurules.data.presorted import presort_dense
from gpurules.data.sparse import presort_sparse, sparse_is_smaller
from gpurules.compile_log import logs_compilation
from gpurules.device import resolve_device
from gpurules.estimators._base import RuleEstimatorMixin, multi_label_classes
from gpurules.estimators.seco_params import parse, resolve_config
from gpurules.estimators.validation import check_feature_indices, check_labels, check_seed
from gpurules.learners.covering import CoveringLearner


class SeCoClassifier(RuleEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Separate-and-conquer multi-label rule learning (mlrl-seco's SeCo algorithm).

    Parameter names, value strings and effective defaults follow mlrl-seco 0.15; ``None``
    means the mlrl-seco default (see ``docs/seco.md``). Values this version does not
    support raise ``ValueError`` listing the supported ones. ``device`` chooses the backend
    (``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:N"``; the GPU runs the histogram search,
    i.e. ``feature_binning`` must not be ``"none"`` there). ``rule_set`` is our addition:
    ``"decision-list"`` (mlrl-seco) or ``"unordered{...}"``, the random-forest variant of
    Rapp et al. (see ``gpurules.learners.seco_unordered``).

    Fitted attributes:
        model_: DecisionList (NumPy arrays only; ``len`` counts the default rule).
        device_: str, the device used.
        n_features_in_, n_outputs_: ints; feature_names_in_, feature_categories_: as
            in ``BoomerClassifier``; classes_: the two classes of a 1-D y, else one
            ``[0, 1]`` array per label.
    """

    def __init__(self, random_state=1, feature_format=None, output_format=None,
                 prediction_format=None, rule_induction=None, max_rules=None, time_limit=None,
                 post_optimization=None, head_type=None, lift_function=None, heuristic=None,
                 pruning_heuristic=None, output_sampling=None, instance_sampling=None,
                 feature_sampling=None, holdout=None, feature_binning=None, rule_pruning=None,
                 parallel_rule_refinement=None, parallel_statistic_update=None,
                 parallel_prediction=None, rule_set=None, device="auto"):
        self.random_state = random_state
        self.feature_format = feature_format
        self.output_format = output_format
        self.prediction_format = prediction_format
        self.rule_induction = rule_induction
        self.max_rules = max_rules
        self.time_limit = time_limit
        self.post_optimization = post_optimization
        self.head_type = head_type
        self.lift_function = lift_function
        self.heuristic = heuristic
        self.pruning_heuristic = pruning_heuristic
        self.output_sampling = output_sampling
        self.instance_sampling = instance_sampling
        self.feature_sampling = feature_sampling
        self.holdout = holdout
        self.feature_binning = feature_binning
        self.rule_pruning = rule_pruning
        self.parallel_rule_refinement = parallel_rule_refinement
        self.parallel_statistic_update = parallel_statistic_update
        self.parallel_prediction = parallel_prediction
        self.rule_set = rule_set
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
            sparse_feature_value=0.0):
        """Learn rules from ``X`` (n, A) and labels ``y`` (n, K) of 0/1 (or 1-D binary).

        Args:
            X: array-like, sparse matrix or pandas DataFrame (categorical columns become
                nominal features). NaN marks a missing value.
            y: array-like or sparse (n, K) of 0/1, or 1-D with at most two classes.
            nominal_feature_indices: columns searched with ``==``/``!=`` conditions.
            ordinal_feature_indices: columns searched like numerical ones.
            sparse_feature_value: the value of the entries a sparse X does not store.
        """
        config, threads = resolve_config(self)
        seed = check_seed(self.random_state)
        info = self._fit_features(X, keep_sparse=True)
        X = info.X
        Y, self.classes_, self._one_d = check_labels(y, X.shape[0])
        self._label_dtype = y.dtype if hasattr(y, "toarray") else np.asarray(y).dtype
        if not self._one_d:
            self.classes_ = multi_label_classes(Y.shape[1], self._label_dtype)
        A = X.shape[1]
        nominal = set(check_feature_indices(nominal_feature_indices, A,
                                            "nominal_feature_indices")) | set(info.nominal)
        ordinal = set(check_feature_indices(ordinal_feature_indices, A,
                                            "ordinal_feature_indices"))
        if nominal & ordinal:
            raise ValueError(f"features {sorted(nominal & ordinal)} are declared both nominal "
                             f"and ordinal")
        self._device = resolve_device(self.device)
        self.device_ = str(self._device)
        nominal_mask = np.zeros(A, dtype=bool)
        nominal_mask[list(nominal)] = True
        self._threads = threads
        rng = np.random.default_rng(seed)
        rule_set, options = parse("rule_set", self.rule_set)
        if rule_set == "unordered":
            from gpurules.learners.seco_unordered import fit_unordered

            dense = X.toarray() if sp.issparse(X) else X
            builder = fit_unordered(dense, Y, nominal_mask, config, options, rng,
                                    threads["search"])
            ordered, threshold = False, options["threshold"]
        else:
            features = self._feature_representation(X, nominal_mask, sparse_feature_value)
            backend = self._make_backend(threads)
            # on the CPU a rule whose head is fixed is refined on its labels alone
            narrow = self._make_backend(threads) if \
                backend_class(self._device).narrow_head_search else None
            builder = CoveringLearner(config, backend, rng, narrow, X).fit(features, Y)
            ordered, threshold = True, -np.inf
        self.model_ = builder.build(ordered, threshold, feature_names=info.names,
                                    nominal_values=info.levels or None)
        self.n_outputs_ = Y.shape[1]
        return self

    def _make_backend(self, threads):
        """A new backend of the resolved device (``backends.factory``)."""
        return get_backend(self._device, threads)

    def _feature_representation(self, X, nominal_mask, sparse_value):
        """Binned features if ``feature_binning`` asks for them (always on a GPU: 'none'
        there means equal-width), else pre-sorted dense or sparse features as
        ``feature_format`` asks ('auto': the smaller in memory)."""
        fmt, _ = parse("feature_format", self.feature_format)
        if not np.isfinite(sparse_value):
            raise ValueError(f"sparse_feature_value must be finite, got {sparse_value!r}")
        binning, options = parse("feature_binning", self.feature_binning)
        if backend_class(self._device).requires_binned_features and binning == "none":
            raise ValueError(f"device={self.device!r} runs the histogram search: set "
                             f"feature_binning='equal-width' or 'equal-frequency' (or use "
                             f"device='cpu' for the exact search)")
        self.feature_binning_ = binning
        if binning != "none":
            self.feature_format_ = "dense"
            dense = X.toarray() if sp.issparse(X) else X
            with thread_limit(self._threads["search"]):
                return drop_empty_bins(bin_features(dense, nominal_mask, binning, **options))
        if fmt == "sparse" or (fmt == "auto" and sparse_is_smaller(X)):
            self.feature_format_ = "sparse"
            return presort_sparse(X, nominal_mask, sparse_value)
        self.feature_format_ = "dense"
        if sp.issparse(X) and sparse_value != 0:
            raise ValueError("sparse_feature_value != 0 needs a dense X")
        dense = X.toarray() if sp.issparse(X) else X
        return presort_dense(np.asarray(dense, dtype=np.float32), nominal_mask)

    def predict(self, X):
        """Labels: uint8 (n, K) of 0/1 (CSR if ``prediction_format='sparse'``), or the
        classes of a 1-D y. Each label comes from the first rule that covers the example
        and predicts it, else from the default rule."""
        X = self._predict_features(X)
        out = self.model_.predict(X, self._threads["predict"])
        if self._one_d:
            codes = out[:, 0].astype(np.intp)
            return self.classes_[codes] if len(self.classes_) == 2 else \
                np.full(codes.shape, self.classes_[0])
        dtype = self._label_dtype if self._label_dtype.kind in "biuf" else np.uint8
        out = out.astype(dtype, copy=False)
        if parse("prediction_format", self.prediction_format)[0] == "sparse":
            return sp.csr_matrix(out)
        return out
