"""BoomerClassifier: gradient-boosted multi-label rules with mlrl-boomer's parameters."""

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from gpurules.backends.factory import backend_class
from gpurules.estimators._base import store_params, take_rows
from gpurules.estimators.boomer_params import (resolve_calibration, resolve_config,
                                               resolve_joint_calibration, resolve_predictors,
                                               with_label_ratio)
from gpurules.estimators.boomer_tables import LOSSES, SUPPORTED
from gpurules.estimators.multi_label import MultiLabelRuleClassifier
from gpurules.learners.boosting import BoostingLearner
from gpurules.objectives.calibration import IsotonicCalibration, JointCalibration
from gpurules.objectives.predictors import (marginal_probabilities, marginalized,
                                            most_probable_vectors, predict_gfm,
                                            unique_label_vectors)


class BoostingEstimatorMixin:
    """What BOOMER's classifier and regressor share on top of
    :class:`~gpurules.estimators._base.MultiOutputRuleLearner`: mlrl-boomer's
    ``feature_binning='auto'`` rule and the boosting fit itself."""

    def _boost(self, config, data, progress):
        """Fit ``learners.boosting`` with ``config`` on ``data`` (``FitData``; its Y as the
        loss reads it). Returns (RuleModel, the BoostingLearner); sets ``_loss``."""
        # the representation first: it may move device='auto' to the CPU (exact search);
        # the backend is made where it bins (on its device), else after
        made = []

        def fit_backend():
            if not made:
                made.append(self._make_backend(self._threads))
            return made[0]

        features = self._feature_representation(data.info.X, data.nominal, data.sparse_value,
                                                 fit_backend)
        backend = fit_backend()
        learner = BoostingLearner(config, backend, data.rng, progress)
        builder = learner.fit(features, data.Y, data.weight)
        model = builder.build(feature_names=data.info.names, label_names=data.label_names,
                              nominal_values=data.info.levels or None)
        if hasattr(backend, "rule_coverage"):  # counted where the bins are (the device)
            model.rule_coverage = backend.rule_coverage(model)
            model.n_training_examples = data.Y.shape[0]
        self._loss = config.loss
        return model, learner

    def _summed_scores(self, X):
        """The default rule's plus the covering rules' scores: float64 (n, K), or (n,) for
        a model fitted on a 1-D y."""
        X = self._predict_features(X)
        scores = self.model_.predict_scores(X, self._threads["predict"])
        return scores[:, 0] if self._one_d else scores

    def _feature_binning(self, X):
        """``feature_binning``, with 'auto' resolved as mlrl-boomer does: equal-width for
        dense input with more than 200,000 examples (and on a backend that needs binned
        features), else none."""
        binning, options = self._option("feature_binning")
        if binning == "auto":
            big_dense = not sp.issparse(X) and X.shape[0] > 200_000
            needs_bins = backend_class(self._device).requires_binned_features
            binning = "equal-width" if big_dense or needs_bins else "none"
        return binning, options


class BoomerClassifier(BoostingEstimatorMixin, MultiLabelRuleClassifier):
    """BOOMER: gradient boosting of (multi-label) classification rules.

    Parameter names, value strings (with ``{key=value}`` options) and effective defaults
    follow mlrl-boomer 0.15; ``None`` means the mlrl-boomer default. Values this version
    does not support raise ``ValueError`` listing the supported ones. ``device`` chooses
    the backend: ``"auto"``, ``"cpu"``, ``"cuda"`` or ``"cuda:N"``. ``verbose`` (int >= 0,
    our addition) logs the fit's progress through the ``"gpurules"`` logger: 0 nothing, 1
    about ten progress lines (rules learned / ``max_rules``, rules per second, elapsed
    time) and a summary with the reason the fit stopped, 2 also a line per rule (see
    ``gpurules.progress``). ``fit`` takes ``sample_weight``: non-negative floats (n,)
    that scale each example's loss (``min_coverage`` still counts examples).

    Fitted attributes:
        model_: RuleModel (NumPy arrays only; ``len`` counts the default rule; with the
            training label vectors when the example-wise, GFM or marginalized predictor or
            the joint calibration needs them).
        binary_predictor_, probability_predictor_: the predictors after mlrl-boomer's
            ``auto`` rules (probability: None for losses without probabilities).
        marginal_calibration_: ``objectives.calibration.IsotonicCalibration`` fitted by
            ``marginal_probability_calibration="isotonic"``, else None. The output-wise
            probability predictor, and the output-wise binary predictor with
            ``based_on_probabilities=true``, apply it unless their
            ``use_probability_calibration=false``.
        joint_calibration_: ``IsotonicCalibration`` with one list per label vector of
            ``model_.label_vectors``, fitted by ``joint_probability_calibration=
            "isotonic"`` (to the joint probabilities of the marginal-calibrated chain rule),
            else None. The GFM binary and the marginalized probability predictor apply both
            calibrations unless their ``use_probability_calibration=false``.
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

    _SUPPORTED = SUPPORTED
    _resolve_config = resolve_config  # a method: self -> (BoostingConfig, threads)

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
                 parallel_prediction=None, device="auto", verbose=0):
        store_params(self, locals())

    def _learn(self, config, data, progress):
        """Boosting (``learners.boosting``); sets the predictors."""
        config = with_label_ratio(config, data.Y)
        chosen_predictors = resolve_predictors(self, config.loss.name)  # checked before learning
        model, learner = self._boost(config, data, progress)
        self.binary_predictor_, self.probability_predictor_ = chosen_predictors
        joint = resolve_joint_calibration(self)
        if joint is not None or self._needs_label_vectors():
            model.label_vectors, model.label_vector_counts = unique_label_vectors(data.Y)
        self.marginal_calibration_ = self._fit_calibration(
            resolve_calibration(self), model, data, learner.holdout_)
        self.joint_calibration_ = self._fit_calibration(joint, model, data, learner.holdout_)
        return model

    def _needs_label_vectors(self):
        """Whether the chosen predictors need the training label vectors."""
        return self.binary_predictor_ in ("example-wise", "gfm") or \
            self.probability_predictor_ == "marginalized"

    def _fit_calibration(self, calibration, model, data, holdout):
        """``calibration`` (an ``objectives.calibration`` calibrator or None) fitted to the
        model's probabilities for its calibration examples (holdout: bool (n,) or None):
        the marginal ones, or (``JointCalibration``) the unnormalised joint probabilities of
        ``model.label_vectors`` with ``marginal_calibration_`` applied."""
        if calibration is None:
            return None
        examples = calibration.examples(holdout, data.Y.shape[0])
        X = take_rows(data.info.X, examples)
        X = np.ascontiguousarray(X.toarray() if sp.issparse(X) else X, np.float32)
        scores = model.predict_scores(X, self._threads["predict"])
        if isinstance(calibration, JointCalibration):
            from gpurules.prediction import log_joint_probabilities

            vectors = model.label_vectors
            joint = np.exp(log_joint_probabilities(scores, vectors, self.marginal_calibration_))
            return calibration.fit(joint, data.Y[examples], vectors)
        return calibration.fit(marginal_probabilities(scores), data.Y[examples])

    def _calibrated(self, param):
        """The marginal calibration model that predictor ``param`` (``binary_predictor`` /
        ``probability_predictor``) uses, or None."""
        return self._calibrations(param)[0]

    def _calibrations(self, param):
        """(marginal, joint) calibration models (each None if absent) that predictor
        ``param`` uses: both, unless its ``use_probability_calibration=false``."""
        use = self._option(param)[1].get("use_probability_calibration", True)
        if not use:
            return None, None
        return (getattr(self, "marginal_calibration_", None),
                getattr(self, "joint_calibration_", None))

    def _joint(self, scores, param):
        """Normalised joint probabilities float64 (n, U) of ``model_.label_vectors`` for
        ``scores`` (n, K), with the calibrations predictor ``param`` uses."""
        from gpurules.prediction import joint_probabilities

        return joint_probabilities(scores, self.model_.label_vectors, *self._calibrations(param))

    def _prediction_state(self):
        """Adds the loss (its decision threshold and example-wise code) and the
        predictors to :meth:`MultiLabelRuleClassifier._prediction_state`."""
        marginal, joint = self.marginal_calibration_, self.joint_calibration_
        return {**super()._prediction_state(), "loss": self._loss.name,
                "binary_predictor": self.binary_predictor_,
                "probability_predictor": self.probability_predictor_,
                "marginal_calibration": None if marginal is None else marginal.to_dict(),
                "joint_calibration": None if joint is None else joint.to_dict()}

    def _restore_prediction_state(self, node):
        super()._restore_prediction_state(node)
        self._loss = LOSSES[node.get("loss").str(tuple(LOSSES))]
        self.binary_predictor_ = node.get("binary_predictor").str(
            ("output-wise", "example-wise", "gfm"))
        probability = node.optional("probability_predictor")
        self.probability_predictor_ = None if probability is None else probability.str(
            ("output-wise", "marginalized"))
        calibration = node.optional("marginal_calibration")
        self.marginal_calibration_ = None if calibration is None else \
            IsotonicCalibration.from_node(calibration, self.n_outputs_)
        joint = node.optional("joint_calibration")
        vectors = self.model_.label_vectors
        if (joint is not None or self._needs_label_vectors()) and vectors is None:
            node.fail("an estimator whose model holds the label vectors its example-wise, "
                      "GFM or marginalized predictor or joint calibration needs")
        self.joint_calibration_ = None if joint is None else \
            IsotonicCalibration.from_node(joint, vectors.shape[0])

    def decision_function(self, X):
        """Summed rule scores: float64 (n, K), or (n,) for a model fitted on a 1-D y."""
        return self._summed_scores(X)

    def predict(self, X):
        """Labels: uint8 (n, K) of 0/1 (CSR if ``prediction_format='sparse'``), or the
        classes of a 1-D y."""
        scores = self.decision_function(X)
        if scores.ndim == 1:  # a 1-D y: one label
            scores = scores[:, None]
        if self.binary_predictor_ == "example-wise" and self._based_on_probabilities():
            joint = self._joint(np.ascontiguousarray(scores, np.float64), "binary_predictor")
            relevant = most_probable_vectors(joint, self.model_.label_vectors,
                                             self.model_.label_vector_counts)
        elif self.binary_predictor_ == "example-wise":
            from gpurules.prediction import predict_example_wise

            scores = np.ascontiguousarray(scores, np.float64)
            relevant = np.empty(scores.shape, np.uint8)
            predict_example_wise(scores, self.model_.label_vectors,
                                 self.model_.label_vector_counts, self._loss.code, relevant)
        elif self.binary_predictor_ == "gfm":
            joint = self._joint(np.ascontiguousarray(scores, np.float64), "binary_predictor")
            relevant = predict_gfm(joint, self.model_.label_vectors)
        elif self._based_on_probabilities():
            relevant = self._marginal(scores, "binary_predictor") > 0.5
        else:
            relevant = scores > self._loss.decision_threshold
        return self._label_output(relevant)

    def _based_on_probabilities(self):
        """Whether the output-wise or example-wise binary predictor uses (calibrated)
        probabilities (``based_on_probabilities=true``; needs a logistic loss)."""
        name, options = self._option("binary_predictor")
        if not options.get("based_on_probabilities", False):
            return False
        if self.probability_predictor_ is None:
            raise ValueError(f"binary_predictor={self.binary_predictor!r}: "
                             f"based_on_probabilities=true needs a logistic loss; "
                             f"loss={self._loss.name!r} has no probabilities")
        return True

    def _marginal(self, scores, param):
        """Marginal probabilities float64 (n, K) of ``scores`` (n, K), calibrated when
        predictor ``param`` uses a calibration model."""
        proba = marginal_probabilities(scores)
        calibration = self._calibrated(param)
        return proba if calibration is None else calibration.apply(proba)

    def predict_proba(self, X):
        """Marginal probabilities: float64 (n, K) (sigmoid of the scores, logistic loss), or
        (n, 2) columns for ``classes_`` after a 1-D y."""
        check_is_fitted(self, "model_")
        if self.probability_predictor_ is None:
            raise ValueError(f"predict_proba needs a logistic loss; loss={self._loss.name!r} "
                             f"yields scores only (use decision_function)")
        scores = self.decision_function(X)
        # (n, K) scores; a 1-D y gives (n,) ones (reshape(n, -1) fails on zero rows)
        scores2d = scores[:, None] if scores.ndim == 1 else scores
        if self.probability_predictor_ == "marginalized":
            joint = self._joint(np.ascontiguousarray(scores2d, np.float64),
                                "probability_predictor")
            proba = marginalized(joint, self.model_.label_vectors).reshape(scores.shape)
        else:
            proba = self._marginal(scores2d, "probability_predictor").reshape(scores.shape)
        if self._one_d:
            return np.column_stack([1.0 - proba, proba])
        return proba
