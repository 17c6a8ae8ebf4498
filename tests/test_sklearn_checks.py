"""scikit-learn's estimator checks on BoomerClassifier(device='cpu')."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from gpurules import BoomerClassifier

EXPECTED_FAILURES = {
    "check_classifier_multioutput": "a 1-D y is one binary label (as in mlrl-boomer); "
                                    "multi-class targets are for TursClassifier",
    "check_sample_weight_equivalence_on_dense_data":
        "sample_weight scales the loss; coverage counts (min_coverage) count examples",
    "check_sample_weight_equivalence_on_sparse_data":
        "sample_weight scales the loss; coverage counts (min_coverage) count examples",
}


@parametrize_with_checks([BoomerClassifier(device="cpu", max_rules=20)],
                         expected_failed_checks=lambda est: EXPECTED_FAILURES)
def test_sklearn_compatible(estimator, check):
    check(estimator)
