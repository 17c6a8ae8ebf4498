"""BoomerRegressor: gradient-boosted multi-output regression rules with mlrl-boomer's
parameters."""

import dataclasses

import scipy.sparse as sp
from sklearn.base import BaseEstimator, RegressorMixin

from gpurules.estimators._base import MultiOutputRuleLearner, store_params
from gpurules.estimators.boomer import BoostingEstimatorMixin
from gpurules.estimators.boomer_params import resolve_regressor_config
from gpurules.estimators.boomer_tables import REGRESSOR_SUPPORTED
from gpurules.estimators.validation import check_targets
from gpurules.objectives.losses import REGRESSION_LOSSES, regression


class BoomerRegressor(BoostingEstimatorMixin, MultiOutputRuleLearner, RegressorMixin,
                      BaseEstimator):
    """BOOMER for regression: gradient boosting of multi-output rules whose heads hold
    real-valued scores.

    The parameters are mlrl-boomer 0.15.6's ``BoomerRegressor``'s (the classifier's
    without ``label_binning``, the probability calibrations and the predictors), with the
    same value strings and effective defaults: ``loss`` ``'squared-error-decomposable'``
    (default) or ``'squared-error-non-decomposable'``; ``head_type`` ``'auto'`` is
    ``'complete'``; ``holdout`` ``'auto'``, ``'none'`` or ``'random'`` and
    ``instance_sampling`` without the stratified kinds (a regressor has no labels to
    stratify by); a ``partial-fixed`` head's ``output_ratio=0`` is 0.33. ``device`` and
    ``verbose`` as for ``BoomerClassifier``. ``fit`` takes ``sample_weight`` (non-negative
    floats (n,) scaling each example's loss).

    A prediction is the default rule's scores plus the scores of every rule that covers
    the example (mlrl-boomer's output-wise score predictor); ``score`` is R²
    (``RegressorMixin``, averaged uniformly over the outputs).

    Fitted attributes:
        model_: RuleModel (NumPy arrays only; ``len`` counts the default rule).
        device_: str, the device used ("cpu" or "cuda:N").
        n_features_in_, n_outputs_: ints; feature_names_in_, feature_categories_: as for
            ``BoomerClassifier``.
    """

    _SUPPORTED = REGRESSOR_SUPPORTED
    _resolve_config = resolve_regressor_config  # a method: self -> (BoostingConfig, threads)

    def __init__(self, random_state=1, feature_format=None, output_format=None,
                 prediction_format=None, statistic_format=None, statistic_type=None,
                 default_rule=None, rule_induction=None, max_rules=None, time_limit=None,
                 global_pruning=None, post_optimization=None, head_type=None, loss=None,
                 output_sampling=None, instance_sampling=None, feature_sampling=None,
                 holdout=None, feature_binning=None, rule_pruning=None, shrinkage=0.3,
                 l1_regularization_weight=None, l2_regularization_weight=None,
                 parallel_rule_refinement=None, parallel_statistic_update=None,
                 parallel_prediction=None, device="auto", verbose=0):
        store_params(self, locals())

    def _fit_targets(self, y, n_examples):
        """The targets: float64 (n, K) (``validation.check_targets``); sets ``_one_d``."""
        Y, self._one_d = check_targets(y, n_examples)
        return Y

    def _learn(self, config, data, progress):
        """Boosting (``learners.boosting``) of the targets ``data.Y`` (float64 (n, K)), the
        loss bounded by their largest magnitude (``objectives.losses.regression``)."""
        config = dataclasses.replace(config, loss=regression(config.loss, data.Y))
        return self._boost(config, data, progress)[0]

    def predict(self, X):
        """Predicted targets: float64 (n, K), or (n,) for a model fitted on a 1-D y (CSR
        (n, K) if ``prediction_format='sparse'``)."""
        scores = self._summed_scores(X)
        if self._option("prediction_format")[0] == "sparse":
            return sp.csr_matrix(scores.reshape(scores.shape[0], -1))
        return scores

    def _prediction_state(self):
        """Adds the loss to :meth:`MultiOutputRuleLearner._prediction_state`."""
        return {**super()._prediction_state(), "loss": self._loss.name}

    def _restore_prediction_state(self, node):
        super()._restore_prediction_state(node)
        self._loss = REGRESSION_LOSSES[node.get("loss").str(tuple(REGRESSION_LOSSES))]
