"""BoomerClassifier with non-decomposable losses, partial heads, GBLB and the example-wise /
marginalized predictors: end-to-end fits on small data, parameters and their ``auto`` rules."""

import pickle

import numpy as np
import pytest
from sklearn.datasets import make_multilabel_classification

from gpurules import BoomerClassifier
from gpurules.objectives.multi_output import HEAD_MULTI_OUTPUT, HEAD_ND_SINGLE
from gpurules.objectives.non_decomposable import NON_DECOMPOSABLE_LOSSES
from tests.reference import non_decomposable_reference as ndref

LOSSES = sorted(NON_DECOMPOSABLE_LOSSES)


@pytest.fixture(scope="module")
def data():
    X, Y = make_multilabel_classification(n_samples=120, n_features=8, n_classes=5,
                                          random_state=2)
    return X.astype(np.float32), Y.astype(np.uint8)


def fit(X, Y, **kw):
    kw.setdefault("max_rules", 12)
    return BoomerClassifier(device="cpu", random_state=1, **kw).fit(X, Y)


def _is_training_vector(P, Y):
    rows = {tuple(r) for r in Y}
    return all(tuple(r) in rows for r in P)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("head_type, label_binning", [
    ("complete", "none"), ("complete", "equal-width"), ("single", "auto"),
    ("partial-fixed", "none"), ("partial-dynamic", "equal-width{bin_ratio=0.5}")])
def test_fit_each_loss_and_head(data, loss, head_type, label_binning):
    X, Y = data
    clf = fit(X, Y, loss=loss, head_type=head_type, label_binning=label_binning)
    assert len(clf.model_) == 12 and clf.binary_predictor_ == "example-wise"
    scores = clf.decision_function(X)
    assert scores.shape == Y.shape and np.isfinite(scores).all()
    P = clf.predict(X)
    assert P.shape == Y.shape and _is_training_vector(P, Y)
    # training fit improves on the default rule alone
    default_only = fit(X, Y, loss=loss, head_type=head_type, label_binning=label_binning,
                       max_rules=1)
    assert (P != Y).mean() <= (default_only.predict(X) != Y).mean()
    if loss.startswith("logistic"):
        proba = clf.predict_proba(X)
        assert proba.shape == Y.shape and (proba >= 0).all() and (proba <= 1 + 1e-12).all()
    else:
        with pytest.raises(ValueError, match="predict_proba"):
            clf.predict_proba(X)


def test_head_sizes_follow_the_head_type(data):
    X, Y = data
    K = Y.shape[1]
    sizes = lambda clf: np.diff(clf.model_.rule_head_start)  # noqa: E731
    complete = fit(X, Y, loss="logistic-non-decomposable", head_type="complete",
                   label_binning="none")
    assert (sizes(complete) == K).all()
    single = fit(X, Y, loss="logistic-non-decomposable", head_type="single")
    assert (sizes(single) == 1).all()
    fixed = fit(X, Y, loss="logistic-non-decomposable",
                head_type="partial-fixed{output_ratio=0.5,min_outputs=1}")
    assert (sizes(fixed) == 3).all()  # ceil(0.5 * 5)
    fixed_dec = fit(X, Y, loss="logistic-decomposable", head_type="partial-fixed")
    cardinality = Y.sum() / Y.size  # output_ratio = 0: label cardinality / K
    assert (sizes(fixed_dec) == max(2, int(np.ceil(np.float32(cardinality) * K)))).all()
    dynamic = fit(X, Y, loss="squared-error-decomposable", head_type="partial-dynamic")
    assert (sizes(dynamic) >= 1).all() and (sizes(dynamic) <= K).all()


def test_default_rule_is_the_complete_newton_step(data):
    """Without label binning (with it, one score per bin: tests/test_mlrl_differences.py)."""
    X, Y = data
    clf = fit(X, Y, loss="logistic-non-decomposable", label_binning="none", max_rules=1)
    K = Y.shape[1]
    G, H = np.zeros(K), np.zeros((K, K))
    for y in Y:
        g, h = ndref.statistics("logistic", y, np.zeros(K))
        G += g
        H += h
    want = np.linalg.solve(H + np.eye(K), -G)
    np.testing.assert_allclose(clf.model_.default_scores, want, rtol=1e-6, atol=1e-8)


def test_auto_rules_and_resolved_modes(data):
    X, Y = data
    from gpurules.estimators.boomer_params import resolve_config

    cfg = resolve_config(BoomerClassifier(loss="logistic-non-decomposable"))[0]
    assert cfg.head_mode == HEAD_MULTI_OUTPUT and cfg.head_params[7] == 1.0  # GBLB
    cfg = resolve_config(BoomerClassifier(loss="logistic-non-decomposable",
                                          head_type="single"))[0]
    assert cfg.head_mode == HEAD_ND_SINGLE
    cfg = resolve_config(BoomerClassifier(loss="logistic-non-decomposable",
                                          label_binning="none"))[0]
    assert cfg.head_params[7] == 0.0 and cfg.head_params[2] == 1.0
    clf = fit(X, Y, max_rules=3)
    assert (clf.binary_predictor_, clf.probability_predictor_) == ("output-wise",
                                                                   "output-wise")
    assert clf.model_.label_vectors is None
    clf = fit(X, Y, max_rules=3, binary_predictor="example-wise",
              probability_predictor="marginalized")
    assert _is_training_vector(clf.predict(X), Y)
    proba = clf.predict_proba(X)
    vectors = clf.model_.label_vectors
    np.testing.assert_allclose(proba, ndref.marginalized(clf.decision_function(X), vectors),
                               atol=1e-10)


def test_example_wise_prediction_matches_the_brute_force_reference(data):
    X, Y = data
    clf = fit(X, Y, loss="logistic-non-decomposable", max_rules=6)
    scores = clf.decision_function(X)
    want = ndref.example_wise(scores, Y, lambda y, p: ndref.loss("logistic", y, p))
    np.testing.assert_array_equal(clf.predict(X), want)


def test_pickle_and_threads(data, parallel_forms):
    X, Y = data
    a = fit(X, Y, loss="logistic-non-decomposable", parallel_rule_refinement="false",
            parallel_statistic_update="false")
    b = fit(X, Y, loss="logistic-non-decomposable", parallel_rule_refinement="true",
            parallel_statistic_update="true{num_preferred_threads=2}")
    np.testing.assert_array_equal(a.model_.head_score, b.model_.head_score)
    c = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(c.predict(X), a.predict(X))


@pytest.mark.parametrize("feature_binning", ["equal-width", "none"])
def test_sparse_and_binned_features(data, feature_binning):
    import scipy.sparse as sp

    X, Y = data
    X = X.copy()
    X[X < 2] = 0
    dense = fit(X, Y, loss="logistic-non-decomposable", feature_binning=feature_binning)
    sparse = fit(sp.csr_matrix(X), Y, loss="logistic-non-decomposable",
                 feature_binning=feature_binning, feature_format="sparse")
    np.testing.assert_allclose(dense.decision_function(X), sparse.decision_function(X))


@pytest.mark.parametrize("param, value, match", [
    ("label_binning", "equal-width{bin_ratio=0}", "bin_ratio"),
    ("head_type", "partial-fixed{min_outputs=0}", "min_outputs"),
    ("head_type", "partial-dynamic{threshold=2}", "threshold"),
    ("binary_predictor", "gfm{based_on_probabilities=true}", "based_on_probabilities"),
    ("probability_predictor", "isotonic", "supported values"),
])
def test_bad_parameters(data, param, value, match):
    X, Y = data
    with pytest.raises(ValueError, match=match):
        BoomerClassifier(device="cpu", **{param: value}).fit(X, Y)
