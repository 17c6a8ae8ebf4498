"""TursClassifier: estimator behaviour, union-of-covers prediction, the MDL local test."""

import pickle

import numpy as np
import pytest
from sklearn.datasets import load_iris

from gpurules import TursClassifier
from gpurules.backends.cpu.class_histograms import CpuClassHistograms
from gpurules.conditions import KIND_EQ, KIND_NUMERIC
from gpurules.learners.turs import RuleSet
from gpurules.learners.turs_beam import evaluate_rules
from gpurules.learners.turs_data import prepare
from gpurules.learners.turs_rule import RuleState
from gpurules.model_turs import TursModel, TursRule


@pytest.fixture(scope="module")
def iris_fit():
    X, y = load_iris(return_X_y=True)
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    return TursClassifier(device="cpu", random_state=0).fit(X, labels), X, labels


def test_fit_predict_on_iris(iris_fit):
    clf, X, labels = iris_fit
    assert list(clf.classes_) == ["setosa", "versicolor", "virginica"]
    assert clf.device_ == "cpu" and clf.n_features_in_ == 4
    proba = clf.predict_proba(X)
    assert proba.shape == (150, 3) and np.allclose(proba.sum(axis=1), 1)
    assert (clf.predict(X) == labels).mean() > 0.9
    assert 1 <= len(clf.model_) <= 6
    # the search only ever decreases the total code length
    assert all(b < a for a, b in zip(clf.history_, clf.history_[1:]))
    assert clf.model_.total_bits == pytest.approx(clf.history_[-1])
    text = str(clf.model_)
    assert "else-rule" in text and "coverage" in text and "MDL score" in text
    assert "setosa" in text


def test_fit_is_deterministic_and_pickles(iris_fit):
    clf, X, labels = iris_fit
    again = TursClassifier(device="cpu", random_state=1).fit(X, labels)
    assert str(again.model_) == str(clf.model_)
    restored = pickle.loads(pickle.dumps(clf))
    assert np.array_equal(restored.predict_proba(X), clf.predict_proba(X))


def _model(rules, y, else_counts, covers):
    covers = np.asarray(covers, bool)
    return TursModel(rules, else_counts, np.arange(2), np.packbits(covers, axis=1), y, 0, 0)


def test_prediction_uses_the_union_of_covers():
    # training: 10 examples on x in 0..9; rule A: x < 6, rule B: x >= 4 (overlap 4, 5)
    x = np.arange(10, dtype=np.float32)
    y = np.array([0, 0, 0, 0, 1, 0, 1, 1, 1, 1])
    a, b = x < 6, x >= 4
    rA = TursRule([0], [KIND_NUMERIC], [-np.inf], [6.0], np.bincount(y[a], minlength=2))
    rB = TursRule([0], [KIND_NUMERIC], [4.0], [np.inf], np.bincount(y[b], minlength=2))
    model = _model([rA, rB], y, [0, 0], [a, b])
    X = np.array([[0.0], [5.0], [9.0], [np.nan]], np.float32)
    p = model.predict_proba(X)
    assert np.allclose(p[0], [5 / 6, 1 / 6])  # A only
    assert np.allclose(p[1], [5 / 10, 5 / 10])  # A and B: the union = all ten examples
    assert np.allclose(p[2], [1 / 6, 5 / 6])  # B only
    assert np.allclose(p[3], np.bincount(y) / 10)  # missing: no rule; empty else-rule
    # disjoint covers: the union is the coverage-weighted mix of the two rules (eq. 3.7)
    c, d = x < 3, x >= 7
    rC = TursRule([0], [KIND_NUMERIC], [-np.inf], [3.0], np.bincount(y[c], minlength=2))
    rD = TursRule([0], [KIND_NUMERIC], [7.0], [np.inf], np.bincount(y[d], minlength=2))
    disjoint = _model([rC, rD], y, np.bincount(y[~c & ~d], minlength=2), [c, d])
    mix = (3 * rC.probabilities + 3 * rD.probabilities) / 6
    assert np.allclose(disjoint.union_probabilities([0, 1]), mix)
    # random picking gives one of the covering rules' own distributions
    rp = model.random_pick_proba(X[1:2], random_state=0)
    assert any(np.allclose(rp[0], r.probabilities) for r in (rA, rB))


def test_nominal_literals_and_missing_values():
    rule = TursRule([1], [KIND_EQ], [2.0], [np.nan], [3, 1])
    X = np.array([[0, 2], [0, 1], [0, np.nan]], np.float32)
    assert rule.covers(X).tolist() == [True, False, False]
    assert rule.describe(["a", "colour"], {1: ["red", "green", "blue"]}) == "colour == blue"


def test_local_test_rejects_uninformative_splits():
    # x0 separates the classes, x1 is a split of the same class mix
    n = 200
    x0 = np.repeat([0.0, 1.0], n // 2)
    x1 = np.tile([0.0, 1.0], n // 2)
    y = (x0 > 0).astype(int)
    X = np.column_stack([x0, x1]).astype(np.float32)
    data = prepare(X, y, 2, np.zeros(2, bool), 5)
    rs = RuleSet(data)
    scores = evaluate_rules(rs, CpuClassHistograms(data), [RuleState(data)])
    ok_incl, ok_excl = scores[4][0], scores[5][0]
    on = {f: np.flatnonzero(data.lit_feat == f) for f in (0, 1)}
    assert ok_incl[on[0]].all() and ok_excl[on[0]].all()
    assert not ok_incl[on[1]].any() and not ok_excl[on[1]].any()


def test_pandas_categorical_and_nan_input():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    n = 300
    colour = rng.choice(["red", "green", "blue"], n)
    num = rng.normal(size=n)
    num[rng.random(n) < 0.1] = np.nan
    y = np.where(colour == "green", "yes", "no")
    df = pd.DataFrame({"colour": pd.Categorical(colour), "num": num})
    clf = TursClassifier(device="cpu").fit(df, y)
    assert "colour ==" in str(clf.model_) or "colour !=" in str(clf.model_)
    assert (clf.predict(df) == y).mean() > 0.95
    assert list(clf.feature_names_in_) == ["colour", "num"]


def test_categorical_features_indices():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.integers(0, 4, 200), rng.normal(size=200)]).astype(float)
    y = (X[:, 0] == 2).astype(int)
    clf = TursClassifier(device="cpu", categorical_features=[0]).fit(X, y)
    assert "x0 ==" in str(clf.model_) or "x0 !=" in str(clf.model_)
    assert (clf.predict(X) == y).all()


def test_bad_input_and_parameters():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="different numbers"):
        TursClassifier(device="cpu").fit(X, y[:-1])
    with pytest.raises(ValueError, match="label type"):
        TursClassifier(device="cpu").fit(X, np.linspace(0, 1, 150))
    with pytest.raises(ValueError, match="beam_width"):
        TursClassifier(device="cpu", beam_width=0).fit(X, y)
    with pytest.raises(TypeError, match="n_cut_points"):
        TursClassifier(device="cpu", n_cut_points=2.5).fit(X, y)
    with pytest.raises(ValueError, match="literal_count_code must be one of"):
        TursClassifier(device="cpu", literal_count_code="gamma").fit(X, y)
    with pytest.raises(ValueError, match="cut_point_method"):
        TursClassifier(device="cpu", cut_point_method="jitter").fit(X, y)
    with pytest.raises(ValueError, match="literal_code"):
        TursClassifier(device="cpu", literal_code="bits").fit(X, y)
    with pytest.raises(ValueError, match="device"):
        TursClassifier(device="tpu").fit(X, y)
    clf = TursClassifier(device="cpu", max_rules=1).fit(X, y)
    assert len(clf.model_) == 1
    with pytest.raises(ValueError, match="4 features"):
        clf.predict(X[:, :3])


def test_cuda_without_gpu_raises_clearly():
    from gpurules.backends.factory import cuda_status

    if cuda_status(0)[0]:
        pytest.skip("a GPU is usable here")
    X, y = load_iris(return_X_y=True)
    with pytest.raises(RuntimeError, match="cannot be used"):
        TursClassifier(device="cuda").fit(X, y)
    assert TursClassifier(device="auto").fit(X, y).device_ == "cpu"
