"""Regression tests of issue 13: what the estimators accept, refuse and say.

Each test failed before its fix: categories by value, feature names, multi-label scorers,
nonsense parameters and values, estimator contracts, fits that end early, the watchdog of
unlimited fits.
"""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.exceptions import DataConversionWarning, NotFittedError
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score

import gpurules.learners.boosting as boosting
from gpurules import BoomerClassifier, SeCoClassifier, TursClassifier
from gpurules.exceptions import FitStoppedEarlyWarning

ESTIMATORS = [
    lambda: BoomerClassifier(device="cpu", max_rules=5),
    lambda: SeCoClassifier(device="cpu", max_rules=5),
    lambda: TursClassifier(device="cpu", max_rules=5),
]
NAMES = ["boomer", "seco", "turs"]


def _fit(make, X, Y):
    est = make()
    y = Y[:, 0] if isinstance(est, TursClassifier) else Y
    return est.fit(X, y)


def _labels(est, pred):
    return np.asarray(pred).reshape(len(pred), -1)[:, 0]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0.3]).astype(np.int64)
    return X, Y


# 1. categories by value -------------------------------------------------------------------
@pytest.mark.parametrize("make", ESTIMATORS, ids=NAMES)
def test_categories_are_mapped_by_value(make):
    train = pd.DataFrame({"c": pd.Categorical(["blue", "green", "red"] * 30)})
    Y = (train.c == "red").to_numpy()[:, None].astype(int)
    est = _fit(make, train, Y)
    for test in (pd.DataFrame({"c": pd.Categorical(["green", "red"] * 30)}),
                 pd.DataFrame({"c": pd.Categorical(["red", "blue"] * 5,
                                                   categories=["red", "blue"])}),
                 pd.DataFrame({"c": ["red", "green", "blue"] * 3})):  # plain strings
        truth = (test.c == "red").to_numpy().astype(int)
        assert (_labels(est, est.predict(test)) == truth).all()
    assert list(est.feature_categories_[0]) == ["blue", "green", "red"]


def test_unseen_category_is_no_learned_value():
    """A value not seen at fit satisfies `!=` conditions and no `==` condition."""
    train = pd.DataFrame({"c": pd.Categorical(["a", "b"] * 30)})
    Y = np.column_stack([train.c == "a", train.c == "b"]).astype(int)
    est = BoomerClassifier(device="cpu", max_rules=10).fit(train, Y)
    test = pd.DataFrame({"c": ["z", np.nan, "a"]})
    codes = est._predict_features(test)[:, 0]
    assert codes[0] == 2 and np.isnan(codes[1]) and codes[2] == 0
    expected = est.decision_function(np.array([[2.0], [np.nan], [0.0]], np.float32))
    assert np.array_equal(est.decision_function(test), expected)


def test_categorical_column_that_was_numeric_at_fit_is_refused(data):
    X, Y = data
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    est = BoomerClassifier(device="cpu", max_rules=3).fit(frame, Y)
    other = frame.assign(a=pd.Categorical(["x"] * len(frame)))
    with pytest.raises(ValueError, match="'a' of X is categorical, but it was not at fit"):
        est.predict(other)


# 2. feature names -------------------------------------------------------------------------
@pytest.mark.parametrize("make", ESTIMATORS, ids=NAMES)
def test_feature_names_are_checked(make, data):
    X, Y = data
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    est = _fit(make, frame, Y)
    assert list(est.feature_names_in_) == ["a", "b", "c"] and est.n_features_in_ == 3
    with pytest.raises(ValueError, match="feature names should match"):
        est.predict(frame[["b", "a", "c"]])
    with pytest.raises(ValueError, match="feature names should match"):
        est.predict(frame.rename(columns={"a": "z"}))
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        est.predict(X)
    est = _fit(make, X, Y)
    assert not hasattr(est, "feature_names_in_")
    with pytest.warns(UserWarning, match="fitted without feature names"):
        est.predict(frame)


@pytest.mark.parametrize("make", ESTIMATORS, ids=NAMES)
def test_names_that_do_not_print_keep_one_rule_per_line(make, data):
    X, Y = data
    plain = str(_fit(make, pd.DataFrame(X, columns=["a", "b", "c"]), Y).model_)
    est = _fit(make, pd.DataFrame(X, columns=["a\nb", "", "c\td"]), Y)
    text = str(est.model_)
    assert len(text.splitlines()) == len(plain.splitlines())
    assert "\t" not in text and "'a\\nb'" in text
    shown = {"a": "'a\\nb'", "b": "''", "c": "'c\\td'"}  # each as its repr
    assert text == re.sub(r"\b([abc]) (?=[<>=!])", lambda m: shown[m[1]] + " ", plain)
    if not isinstance(est, TursClassifier):  # the rule table keeps the names as they are
        names = {c["feature_name"] for r in est.model_.to_records()
                 for c in r["condition_list"]}
        assert names <= {"a\nb", "", "c\td"}


# 3. scorers on multi-label Y --------------------------------------------------------------
@pytest.mark.parametrize("make", ESTIMATORS[:2], ids=NAMES[:2])
@pytest.mark.parametrize("scoring", ["f1_micro", "f1_macro", "f1_samples", "accuracy",
                                     "precision_micro", "recall_macro", "jaccard_samples"])
def test_multi_label_scorers(make, scoring, data):
    X, Y = data
    scores = cross_val_score(make(), X, Y, scoring=scoring, cv=KFold(3),
                             error_score="raise")
    assert np.isfinite(scores).all() and (scores > 0.5).all()


@pytest.mark.parametrize("make", ESTIMATORS[:2], ids=NAMES[:2])
def test_grid_search_on_multi_label(make, data):
    X, Y = data
    search = GridSearchCV(make(), {"max_rules": [1, 10]}, scoring="f1_macro", cv=KFold(3),
                          error_score="raise").fit(X, Y)
    scores = search.cv_results_["mean_test_score"]
    assert np.isfinite(scores).all() and scores[1] > scores[0]
    assert search.best_params_ == {"max_rules": 10}
    est = make().fit(X, Y)
    assert len(est.classes_) == 2 and all(list(c) == [0, 1] for c in est.classes_)


# 4. nonsense refused ----------------------------------------------------------------------
@pytest.mark.parametrize("params, message", [
    (dict(shrinkage=np.nan), "shrinkage must be a finite number"),
    (dict(shrinkage=np.inf), "shrinkage must be a finite number"),
    (dict(time_limit=np.nan), "time_limit must be a finite number"),
    (dict(l2_regularization_weight=np.nan), "must be a finite number"),
])
def test_non_finite_parameters_are_refused(params, message, data):
    X, Y = data
    with pytest.raises(ValueError, match=message):
        BoomerClassifier(device="cpu", max_rules=3, **params).fit(X, Y)


@pytest.mark.parametrize("rule_set, message", [
    ("unordered{num_trees=0}", "num_trees must be >= 1"),
    ("unordered{min_depth=3,max_depth=2}", "max_depth must be >= 3"),
    ("unordered{sample_size=0}", "sample_size must be > 0"),
    ("unordered{max_features=1.5}", "max_features must be <= 1"),
    ("unordered{threshold=nan}", "threshold must be a finite number"),
])
def test_seco_rule_set_options_are_checked(rule_set, message, data):
    X, Y = data
    with pytest.raises(ValueError, match=message):
        SeCoClassifier(device="cpu", rule_set=rule_set).fit(X, Y)


@pytest.mark.parametrize("make", ESTIMATORS, ids=NAMES)
@pytest.mark.parametrize("sparse", [False, True])
def test_values_beyond_float32_are_refused(make, sparse, data):
    X, Y = data
    X = X.copy()
    X[4, 1] = 1e39
    with pytest.raises(ValueError, match="beyond the float32 range"):
        _fit(make, sp.csr_matrix(X) if sparse else X, Y)
    est = _fit(make, data[0], Y)
    with pytest.raises(ValueError, match="beyond the float32 range"):
        est.predict(X)


@pytest.mark.parametrize("indices", [["a"], [None], [1.5], [True], "a"])
def test_feature_indices_must_be_ints(indices, data):
    X, Y = data
    with pytest.raises(TypeError, match="nominal_feature_indices must"):
        BoomerClassifier(device="cpu", max_rules=3).fit(X, Y, nominal_feature_indices=indices)


# 5. estimator contracts -------------------------------------------------------------------
@pytest.mark.parametrize("make", ESTIMATORS, ids=NAMES)
def test_predict_before_fit(make, data):
    est = make()
    methods = ["predict"] + [m for m in ("predict_proba", "decision_function")
                             if hasattr(est, m)]
    for method in methods:
        with pytest.raises(NotFittedError):
            getattr(est, method)(data[0])


@pytest.mark.parametrize("make", ESTIMATORS, ids=NAMES)
def test_predict_on_zero_rows(make, data):
    X, Y = data
    est = _fit(make, X, Y)
    pred = est.predict(X[:0])
    assert pred.shape[0] == 0 and pred.shape[1:] == est.predict(X[:2]).shape[1:]
    if hasattr(est, "predict_proba"):
        proba = est.predict_proba(X[:0])
        assert proba.shape[0] == 0


@pytest.mark.parametrize("make", ESTIMATORS, ids=NAMES)
def test_random_state_kinds(make, data):
    X, Y = data
    for random_state in (None, 7, np.int64(7), np.random.RandomState(0),
                         np.random.default_rng(0)):
        est = make().set_params(random_state=random_state)
        _fit(lambda: est, X, Y)
    for bad, error in (("seed", TypeError), (1.5, TypeError), (-1, ValueError)):
        with pytest.raises(error, match="random_state"):
            _fit(lambda: make().set_params(random_state=bad), X, Y)


def test_random_state_instance_gives_the_seeded_model(data):
    X, Y = data
    a = BoomerClassifier(device="cpu", max_rules=5,
                         random_state=np.random.RandomState(4)).fit(X, Y)
    seed = np.random.RandomState(4).randint(2 ** 31 - 1)
    b = BoomerClassifier(device="cpu", max_rules=5, random_state=seed).fit(X, Y)
    assert str(a.model_) == str(b.model_)


def test_turs_column_vector_y_warns(data):
    X, Y = data
    with pytest.warns(DataConversionWarning) as w:
        TursClassifier(device="cpu", max_rules=3).fit(X, Y[:, :1])
    assert [r.filename for r in w] == [__file__]


# 6. fits that end early say so ------------------------------------------------------------
@pytest.mark.parametrize("make", ESTIMATORS[:2], ids=NAMES[:2])
def test_min_coverage_beyond_data_warns(make, data):
    X, Y = data
    est = make().set_params(rule_induction="top-down-greedy{min_coverage=1000}")
    with pytest.warns(FitStoppedEarlyWarning, match="min_coverage=1000 exceeds the 60") as w:
        est.fit(X, Y)
    assert len(est.model_) == 1
    assert [r.filename for r in w] == [__file__]  # the caller's line (exceptions.warn)


def test_constant_features_warn(data):
    X, Y = data
    with pytest.warns(FitStoppedEarlyWarning, match="stopped after 1 rule"):
        BoomerClassifier(device="cpu", max_rules=10).fit(np.ones((60, 2)), Y)


def test_full_fit_does_not_warn(data):
    X, Y = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", FitStoppedEarlyWarning)
        BoomerClassifier(device="cpu", max_rules=20).fit(X, Y)


# watchdog ---------------------------------------------------------------------------------
def test_unlimited_fit_terminates(monkeypatch, data):
    """max_rules=0 without time_limit: boosting improves its training loss forever, so the
    fit stops at the ceiling, with a warning (at the caller's line)."""
    X, Y = data
    monkeypatch.setattr(boosting, "UNLIMITED_RULES_CEILING", 25)
    with pytest.warns(FitStoppedEarlyWarning, match="safety ceiling of 25 rules") as w:
        est = BoomerClassifier(device="cpu", max_rules=0).fit(X, Y)
    assert len(est.model_) == 25
    assert [r.filename for r in w] == [__file__]


def test_unlimited_seco_fit_terminates(data):
    X, Y = data
    est = SeCoClassifier(device="cpu", max_rules=0).fit(X, Y)
    assert 1 < len(est.model_) <= X.shape[0] * Y.shape[1] + 1


def test_read_only_inputs_reach_the_kernels_writable(data):
    """Read-only X, Y and targets (a memory map, an array frozen by its owner) are copied
    by validation (``compiled_layout``): the compiled kernels are specialised on whether an
    array is read-only, and a read-only input compiled every kernel it reached a second
    time (seconds at a first fit or predict). Writable inputs of the right dtype are not
    copied, and the caller's arrays are left as they were."""
    from gpurules.estimators.validation import check_features, check_labels, check_targets

    X, Y = data[0].astype(np.float32), data[1].astype(np.uint8)
    targets = X[:, :2].astype(np.float64)
    validated = (lambda a: check_features(a).X, lambda a: check_labels(a, len(a))[0],
                 lambda a: check_targets(a, len(a))[0])
    for validate, a in zip(validated, (X, Y, targets)):
        assert np.shares_memory(validate(a), a)  # (not copied)
        frozen = a.copy()
        frozen.flags.writeable = False
        out = validate(frozen)
        assert out.flags.writeable and out.flags.c_contiguous and out.dtype == a.dtype
        np.testing.assert_array_equal(out, a)
        assert not frozen.flags.writeable
