"""scikit-learn's estimator checks on the four estimators (device='cpu')."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from gpurules import BoomerClassifier, BoomerRegressor, SeCoClassifier, TursClassifier

_WEIGHTS = "sample_weight scales the loss; coverage counts (min_coverage) count examples; " \
           "rows of weight 0 still place thresholds (as mlrl-boomer's unsampled rows do)"
_SAMPLED = "instance_sampling (mlrl-seco's default: stratified-output-wise) draws rows, so " \
           "repeated rows are drawn otherwise; without it integer weights equal repeated " \
           "rows (tests/test_estimator_api.py)"
_ONE_D = "a 1-D y is one binary label (as in mlrl-boomer/mlrl-seco); multi-class targets " \
         "are for TursClassifier"
EXPECTED_FAILURES = {
    "BoomerClassifier": {
        "check_classifier_multioutput": _ONE_D,
        "check_sample_weight_equivalence_on_dense_data": _WEIGHTS,
        "check_sample_weight_equivalence_on_sparse_data": _WEIGHTS,
    },
    "SeCoClassifier": {
        "check_sample_weight_equivalence_on_dense_data": _SAMPLED,
        "check_sample_weight_equivalence_on_sparse_data": _SAMPLED,
    },
    "TursClassifier": {},
    "BoomerRegressor": {
        "check_sample_weight_equivalence_on_dense_data": _WEIGHTS,
        "check_sample_weight_equivalence_on_sparse_data": _WEIGHTS,
    },
}


@parametrize_with_checks([BoomerClassifier(device="cpu", max_rules=20),
                          SeCoClassifier(device="cpu", max_rules=20),
                          TursClassifier(device="cpu", max_rules=5),
                          BoomerRegressor(device="cpu", max_rules=20)],
                         expected_failed_checks=lambda est: EXPECTED_FAILURES[
                             type(est).__name__])
def test_sklearn_compatible(estimator, check):
    check(estimator)
