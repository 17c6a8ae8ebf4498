"""What scikit-learn users expect of the estimators: SeCo's ``predict_proba``,
``sample_weight`` for SeCo and TURS (integer weights = repeated rows), and scorers."""

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.metrics import hamming_loss, make_scorer
from sklearn.model_selection import cross_val_score

from gpurules import BoomerClassifier, SeCoClassifier, TursClassifier
from gpurules.conditions import satisfies
from gpurules.datasets import load_example

# ten examples, one feature, two labels (the hand-worked cases below)
X_TINY = np.arange(10, dtype=np.float32).reshape(-1, 1)
Y_TINY = np.array([[1, 0], [1, 0], [1, 1], [0, 1], [0, 1], [0, 0], [0, 0], [0, 0], [1, 0],
                   [0, 0]], np.uint8)


@pytest.fixture(scope="module")
def emotions():
    ds = load_example("emotions", "train")
    return ds.X[:150], ds.Y[:150]


def seco(**params):
    return SeCoClassifier(device="cpu", **params)


def seco_tiny(**params):
    """Without instance sampling (mlrl-seco's default draws rows): rules from the data."""
    return seco(heuristic="precision", instance_sampling="none", **params)


# -- SeCo predict_proba ----------------------------------------------------------------
def test_seco_predict_proba_is_the_laplace_confidence_of_the_deciding_rule():
    clf = seco_tiny().fit(X_TINY, Y_TINY)
    # y0 is relevant for 4 of 10, y1 for 3 of 10: the rules predict 1
    assert str(clf.model_).splitlines() == [
        "{y0: 1} <- x0 <= 0.5", "{y0: 1} <- x0 <= 1.5", "{y0: 1} <- x0 <= 2.5",
        "{y1: 1} <- x0 <= 4.5 & x0 > 1.5", "{y0: 1} <- x0 > 7.5 & x0 <= 8.5",
        "{y0: 0, y1: 0} <- true  (default rule)"]
    # the y0 rules decide one example each, a 1: (1 + 1) / (1 + 2)
    # the y1 rule decides rows 2-4, all 1: (3 + 1) / (3 + 2)
    # default: y0 of rows 3-7, 9 (six 0s): 1 - 7 / 8; y1 of rows 0, 1, 5-9 (seven 0s):
    # 1 - 8 / 9
    y0 = [2 / 3] * 3 + [1 / 8] * 5 + [2 / 3, 1 / 8]
    y1 = [1 / 9] * 2 + [4 / 5] * 3 + [1 / 9] * 5
    np.testing.assert_allclose(clf.predict_proba(X_TINY), np.column_stack([y0, y1]),
                               rtol=1e-12)


def test_seco_predict_proba_counts_weighted_examples():
    w = np.array([1, 2, 1, 1, 1, 1, 1, 1, 3, 1])
    clf = seco_tiny().fit(X_TINY, Y_TINY, sample_weight=w)
    # weighted, y0 is relevant for 7 of 13: the rules predict 0 for y0
    assert str(clf.model_).splitlines() == [
        "{y0: 0} <- x0 > 8.5", "{y0: 0} <- x0 > 2.5 & x0 <= 3.5",
        "{y0: 0} <- x0 > 2.5 & x0 <= 4.5", "{y0: 0} <- x0 > 2.5 & x0 <= 5.5",
        "{y1: 1} <- x0 <= 4.5 & x0 > 1.5", "{y0: 0} <- x0 > 2.5 & x0 <= 6.5",
        "{y0: 0} <- x0 > 2.5 & x0 <= 7.5", "{y0: 1, y1: 0} <- true  (default rule)"]
    # the y0 rules decide one row of weight 1 each, a 0: 1 - 2 / 3
    # the y1 rule decides rows 2-4 (weight 3, all 1): 4 / 5
    # default: y0 of rows 0, 1, 2, 8 (weight 7, all 1): 8 / 9; y1 of rows 0, 1, 5-9
    # (weight 10, all 0): 1 - 11 / 12
    np.testing.assert_allclose(clf.model_.head_proba, [1 / 3] * 4 + [4 / 5] + [1 / 3] * 2,
                               rtol=1e-12)
    np.testing.assert_allclose(clf.model_.default_proba, [8 / 9, 1 / 12], rtol=1e-12)
    repeated = seco_tiny().fit(np.repeat(X_TINY, w, axis=0), np.repeat(Y_TINY, w, axis=0))
    assert str(repeated.model_) == str(clf.model_)
    np.testing.assert_allclose(repeated.model_.head_proba, clf.model_.head_proba)


def test_seco_predict_proba_of_a_1d_y_has_a_column_per_class():
    y = np.where(Y_TINY[:, 0] == 1, "yes", "no")
    clf = seco_tiny().fit(X_TINY, y)
    proba = clf.predict_proba(X_TINY)
    assert proba.shape == (10, 2) and list(clf.classes_) == ["no", "yes"]
    np.testing.assert_allclose(proba[:, 1], [2 / 3] * 3 + [1 / 8] * 5 + [2 / 3, 1 / 8])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def _covers(X, conditions):
    """bool (n,): NumPy reference of a rule body (``model.satisfies``, uncompiled)."""
    out = np.ones(X.shape[0], bool)
    for f, op, t in conditions:
        out &= [satisfies.py_func(op, v, t) for v in X[:, f]]
    return out


@pytest.mark.parametrize("params", [
    {},
    {"rule_pruning": "irep", "instance_sampling": "without-replacement",
     "head_type": "partial"},
    {"rule_set": "unordered{num_trees=5,threshold=0.3}"},
])
def test_seco_probabilities_match_the_rules_that_decide_the_training_examples(emotions,
                                                                               params):
    """The counts behind ``predict_proba`` are those of first-match prediction on the
    training data (also with IREP, whose coverage bookkeeping differs, and unordered
    rules below the threshold)."""
    X, Y = emotions
    model = seco(max_rules=15, **params).fit(X, Y).model_
    rules, active = model.rules, model.active_rules()
    undecided = np.ones(Y.shape, bool)
    head_proba = []
    for r in range(rules.num_rules):
        conditions, head = rules.rule(r)
        covered = _covers(X, conditions) if active[r] else np.zeros(len(X), bool)
        for k, value in head:
            decided = covered & undecided[:, k]
            correct = (decided & (Y[:, k] == value)).sum()
            confidence = (correct + 1) / (decided.sum() + 2)
            head_proba.append(confidence if value else 1 - confidence)
            undecided[:, k] &= ~covered
    np.testing.assert_allclose(model.head_proba, head_proba, rtol=1e-12)
    majority = model.default_prediction
    rest = undecided.sum(axis=0)
    correct = (undecided & (Y == majority)).sum(axis=0)
    confidence = (correct + 1) / (rest + 2)
    np.testing.assert_allclose(model.default_proba,
                               np.where(majority == 1, confidence, 1 - confidence))


def test_a_copy_with_another_threshold_has_no_probabilities(emotions):
    X, Y = emotions
    model = seco(rule_set="unordered{num_trees=3}").fit(X, Y).model_
    assert model.with_threshold(model.threshold).predict_proba(X).shape == Y.shape
    with pytest.raises(ValueError, match="estimated at fit time"):
        model.with_threshold(0.9).predict_proba(X)


# -- sample_weight ---------------------------------------------------------------------
@pytest.mark.parametrize("params", [
    {"instance_sampling": "none"},
    {"instance_sampling": "none", "heuristic": "m-estimate", "head_type": "partial"},
    {"instance_sampling": "none", "heuristic": "laplace"},
    {"rule_set": "unordered{num_trees=4}"}])
def test_seco_integer_weights_equal_repeated_rows(emotions, params):
    """Without instance sampling (which draws rows, so repeated rows are drawn otherwise)
    integer weights and repeated rows give the same model (with the exact search: the
    number of histogram bins depends on the number of rows, as in mlrl-seco)."""
    X, Y = emotions
    w = np.random.default_rng(3).integers(0, 4, len(X))
    weighted = seco(max_rules=15, **params).fit(X, Y, sample_weight=w)
    repeated = seco(max_rules=15, **params).fit(np.repeat(X, w, axis=0),
                                               np.repeat(Y, w, axis=0))
    assert str(weighted.model_) == str(repeated.model_)
    assert len(weighted.model_) > 3
    np.testing.assert_array_equal(weighted.predict_proba(X), repeated.predict_proba(X))


def test_seco_unit_weights_give_the_unweighted_model(emotions):
    X, Y = emotions
    a = seco(max_rules=10).fit(X, Y, sample_weight=np.ones(len(X)))
    b = seco(max_rules=10).fit(X, Y)
    assert str(a.model_) == str(b.model_)


def test_turs_integer_weights_equal_repeated_rows():
    X, y = load_iris(return_X_y=True)
    X, y = X[::2], y[::2]
    w = np.random.default_rng(5).integers(0, 3, len(X))
    weighted = TursClassifier(device="cpu", beam_width=4).fit(X, y, sample_weight=w)
    repeated = TursClassifier(device="cpu", beam_width=4).fit(np.repeat(X, w, axis=0),
                                                              np.repeat(y, w))
    assert str(weighted.model_) == str(repeated.model_)
    np.testing.assert_array_equal(weighted.predict_proba(X), repeated.predict_proba(X))


@pytest.mark.parametrize("cls", [SeCoClassifier, TursClassifier])
@pytest.mark.parametrize("weight, match", [
    (0.5, r"counts examples .* must hold non-negative integers.* got 0.5 at index 2"),
    (-1.0, "finite and non-negative"),
])
def test_counting_learners_refuse_fractional_or_negative_weights(cls, weight, match):
    w = np.ones(len(X_TINY))
    w[2] = weight
    y = Y_TINY[:, 0]
    with pytest.raises(ValueError, match=match):
        cls(device="cpu").fit(X_TINY, y, sample_weight=w)


# -- scorers ---------------------------------------------------------------------------
HAMMING = make_scorer(hamming_loss, greater_is_better=False)


@pytest.mark.parametrize("estimator", [BoomerClassifier(device="cpu", max_rules=5),
                                       SeCoClassifier(device="cpu", max_rules=5)],
                         ids=["boomer", "seco"])
@pytest.mark.parametrize("scoring", ["f1_micro", "f1_samples", "accuracy", HAMMING,
                                     "roc_auc", "average_precision"],
                         ids=["f1_micro", "f1_samples", "accuracy", "hamming", "roc_auc",
                              "average_precision"])
def test_multi_label_scorers(emotions, estimator, scoring):
    X, Y = emotions
    scores = cross_val_score(estimator, X, Y, scoring=scoring, cv=2, error_score="raise")
    assert np.isfinite(scores).all()


@pytest.mark.parametrize("scoring, binary", [
    ("accuracy", False), ("f1_macro", False), ("roc_auc_ovr", False),
    ("neg_log_loss", False), ("roc_auc", True)])
def test_turs_scorers(scoring, binary):
    X, y = load_iris(return_X_y=True)
    if binary:
        y = (y == 1).astype(int)
    scores = cross_val_score(TursClassifier(device="cpu", beam_width=3), X, y,
                             scoring=scoring, cv=3, error_score="raise")
    assert np.isfinite(scores).all()
