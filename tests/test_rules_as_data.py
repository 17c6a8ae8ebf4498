"""Rules as data (``to_records``, ``to_frame``, ``explain``, ``feature_importances``) on tiny
hand-built models with hand-checked expectations, the same on fitted estimators, and the
display names ``fit`` takes for array inputs (``docs/model-format.md``)."""

import re
import sys
import warnings

import numpy as np
import pytest

from gpurules import BoomerClassifier, SeCoClassifier, TursClassifier
from gpurules.conditions import KIND_EQ, KIND_NUMERIC, OP_EQ, OP_GR, OP_LEQ
from gpurules.datasets import load_example
from gpurules.decision_list import DecisionListBuilder
from gpurules.model import RuleModelBuilder
from gpurules.model_turs import TursModel, TursRule

# size, colour (nominal: red, green, blue); row 3 misses its size
X = np.array([[1, 1], [2, 1], [2, 0], [np.nan, 1]], np.float32)


def _boomer():
    b = RuleModelBuilder(2)
    b.set_default_rule([-1.0, 0.5])
    b.add_rule([(0, OP_LEQ, 1.5)], [0], [2.0])
    b.add_rule([(1, OP_EQ, 1.0), (0, OP_GR, 0.5)], [1, 0], [-1.0, 0.25])
    return b.build(feature_names=["size", "colour"], label_names=["a", "b"],
                   nominal_values={1: ["red", "green", "blue"]})


def test_boomer_records():
    records = _boomer().to_records(X)
    assert [r["rule"] for r in records] == [-1, 0, 1]
    assert [r["conditions"] for r in records] == [
        "true", "size <= 1.5", "colour == 'green' & size > 0.5"]
    assert records[2]["condition_list"] == [
        {"feature": 1, "feature_name": "colour", "op": "==", "threshold": 1.0,
         "value": "green"},
        {"feature": 0, "feature_name": "size", "op": ">", "threshold": 0.5, "value": None}]
    assert records[2]["labels"] == [1, 0] and records[2]["label_names"] == ["b", "a"]
    assert records[2]["scores"] == [-1.0, 0.25]
    # row 0 satisfies size <= 1.5; rows 0 and 1 satisfy rule 1; NaN satisfies nothing
    assert [r["coverage"] for r in records] == [4, 1, 2]
    assert [r["coverage"] for r in _boomer().to_records()] == [None, None, None]


def test_boomer_explain_sums_to_the_scores():
    model = _boomer()
    assert model.explain(X[0]) == [
        {"rule": -1, "conditions": "true", "labels": [0, 1], "label_names": ["a", "b"],
         "scores": [-1.0, 0.5]},
        {"rule": 0, "conditions": "size <= 1.5", "labels": [0], "label_names": ["a"],
         "scores": [2.0]},
        {"rule": 1, "conditions": "colour == 'green' & size > 0.5", "labels": [1, 0],
         "label_names": ["b", "a"], "scores": [-1.0, 0.25]}]
    explained = model.explain(X)
    assert [[e["rule"] for e in row] for row in explained] == [[-1, 0, 1], [-1, 1], [-1],
                                                                [-1]]
    assert np.array_equal(_summed(explained, 2), model.predict_scores(X))


def _summed(explained, K):
    """The scores of ``explain`` entries, added in the order prediction adds them."""
    out = np.zeros((len(explained), K))
    for i, row in enumerate(explained):
        for entry in row:
            for k, s in zip(entry["labels"], entry["scores"]):
                out[i, k] += s
    return out


def test_boomer_feature_importances():
    model = _boomer()
    # rule 0: coverage 1 x |2.0| -> size; rule 1: coverage 2 x 1.25, half to each feature
    expected = np.array([2.0 + 1.25, 1.25]) / 4.5
    assert np.allclose(model.feature_importances(X=X), expected)
    with pytest.raises(ValueError, match="does not know its training coverage .*; pass X"):
        model.feature_importances()
    model.rule_coverage, model.n_training_examples = np.array([1, 2]), 4
    assert np.allclose(model.feature_importances(n_features=3), np.append(expected, 0.0))
    assert [r["coverage"] for r in model.to_records()] == [4, 1, 2]


def test_x_must_have_the_features_the_model_tests():
    with pytest.raises(ValueError, match="X has 1 features, but the model tests feature 1"):
        _boomer().explain(X[:, :1])


def _seco(ordered=True):
    b = DecisionListBuilder(np.array([0, 1], np.uint8), np.array([1, 0], np.uint8))
    b.add_rule([(0, OP_LEQ, 1.5)], [0], value=0.9)
    b.add_rule([(1, OP_EQ, 1.0)], [0, 1], value=0.4)
    return b.build(ordered=ordered, threshold=0.0 if ordered else 0.5,
                   feature_names=["size", "colour"], label_names=["a", "b"],
                   nominal_values={1: ["red", "green", "blue"]})


def test_seco_records_and_explain():
    dl = _seco()
    records = dl.to_records(X)
    assert [(r["rule"], r["conditions"], r["labels"], r["values"], r["coverage"], r["active"],
             r["heuristic_value"]) for r in records] == [
        (0, "size <= 1.5", [0], [1], 1, True, None),
        (1, "colour == 'green'", [0, 1], [1, 0], 3, True, None),
        (-1, "true", [0, 1], [0, 1], 4, True, None)]
    # row 0: rule 0 decides a, rule 1 then only b; row 2: no rule, the default decides both
    assert dl.explain(X[0]) == [
        {"rule": 0, "conditions": "size <= 1.5", "labels": [0], "label_names": ["a"],
         "values": [1]},
        {"rule": 1, "conditions": "colour == 'green'", "labels": [1], "label_names": ["b"],
         "values": [0]}]
    assert dl.explain(X[2]) == [{"rule": -1, "conditions": "true", "labels": [0, 1],
                                 "label_names": ["a", "b"], "values": [0, 1]}]
    explained = dl.explain(X)
    decided = np.full((4, 2), 9)
    for i, row in enumerate(explained):
        for entry in row:
            decided[i, entry["labels"]] = entry["values"]
    assert np.array_equal(decided, dl.predict(X))
    # importances: rule 0: 1 x 1 label -> size; rule 1: 3 x 2 labels -> colour
    assert np.allclose(dl.feature_importances(X=X), [1 / 7, 6 / 7])


def test_seco_unordered_threshold_drops_rules():
    dl = _seco(ordered=False)  # threshold 0.5 drops rule 1 (value 0.4)
    records = dl.to_records(X)
    assert [(r["heuristic_value"], r["active"]) for r in records] == [
        (0.9, True), (0.4, False), (None, True)]
    assert [e["rule"] for e in dl.explain(X[0])] == [0, -1]
    assert np.allclose(dl.feature_importances(X=X), [1.0, 0.0])


def _turs():
    # training: x in 0..5; rule 0: x < 3 (classes 0, 0, 1); rule 1: colour == 1
    y = np.array([0, 0, 1, 1, 1, 0], np.int32)
    cover0 = np.array([1, 1, 1, 0, 0, 0], bool)
    cover1 = np.array([0, 0, 0, 1, 1, 0], bool)
    rules = [TursRule([0], [KIND_NUMERIC], [-np.inf], [3.0], [2, 1]),
             TursRule([1], [KIND_EQ], [1.0], [np.nan], [0, 2])]
    return TursModel(rules, [1, 0], np.array(["no", "yes"]),
                     np.packbits(np.array([cover0, cover1]), axis=1), y, 10.0, 5.0,
                     ["size", "colour"], {1: ["red", "green", "blue"]})


def test_turs_records_and_explain():
    model = _turs()
    records = model.to_records()
    assert [(r["rule"], r["conditions"], r["counts"], r["coverage"]) for r in records] == [
        (0, "size < 3", [2, 1], 3), (1, "colour == green", [0, 2], 2), (-1, "else", [1, 0], 1)]
    assert records[1]["condition_list"] == [{"feature": 1, "feature_name": "colour",
                                             "kind": "==", "low": 1.0, "high": None,
                                             "value": "green"}]
    assert records[0]["condition_list"][0]["low"] == -np.inf
    # on X: row 0 size 1 < 3 and colour green: both rules; row 2 (size 2, red): rule 0
    assert [r["coverage"] for r in model.to_records(X)] == [3, 3, 0]
    assert [e["rule"] for e in model.explain(X[0])] == [0, 1]
    assert model.explain(np.array([5, 0], np.float32)) == [
        {"rule": -1, "conditions": "else", "condition_list": [], "counts": [1, 0],
         "probabilities": [1.0, 0.0], "coverage": 1}]
    # weights: prior (1/2, 1/2); rule 0: 3 x (1/6 + 1/6); rule 1: 2 x (1/2 + 1/2)
    assert np.allclose(model.feature_importances(), np.array([1.0, 2.0]) / 3.0)


def test_to_frame_wraps_the_records(monkeypatch):
    pd = pytest.importorskip("pandas")
    frame = _boomer().to_frame(X)
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == ["rule", "conditions", "condition_list", "labels",
                                   "label_names", "scores", "coverage"]
    assert frame["coverage"].tolist() == [4, 1, 2]
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"pip install 'gpurules\[pandas\]'"):
        _boomer().to_frame()


# --- fitted estimators -----------------------------------------------------------------

@pytest.fixture(scope="module")
def emotions():
    ds = load_example("emotions")
    return ds, ds.X[:80], ds.Y[:80]


def test_fit_takes_display_names(emotions):
    ds, X, Y = emotions
    clf = BoomerClassifier(device="cpu", max_rules=3, random_state=1)
    plain = str(clf.fit(X, Y).model_)
    clf.fit(X, Y, feature_names=ds.feature_names, label_names=ds.label_names)
    named = str(clf.model_)
    assert re.search(r"\bx\d+ ", plain) and not re.search(r"\bx\d+ ", named)
    assert ds.label_names[0] in named
    assert plain.count("<-") == named.count("<-")  # the same rules, only named
    assert not hasattr(clf, "feature_names_in_")  # names come from DataFrames only
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf.predict(X)
    with pytest.raises(ValueError, match="feature_names has 3 names, but there are 72"):
        clf.fit(X, Y, feature_names=["a", "b", "c"])
    with pytest.raises(ValueError, match="label_names has 1 names, but there are 6 labels"):
        clf.fit(X, Y, label_names=["a"])
    with pytest.raises(ValueError, match="nominal_values contains 99"):
        clf.fit(X, Y, nominal_values={99: ["a"]})


def test_dataframe_columns_name_the_features(emotions):
    pd = pytest.importorskip("pandas")
    _, X, Y = emotions
    frame = pd.DataFrame(X[:, :3], columns=["p", "q", "r"])
    clf = SeCoClassifier(device="cpu", max_rules=2).fit(frame, Y)
    assert clf.feature_names_in_.tolist() == ["p", "q", "r"]
    with pytest.raises(ValueError, match="feature_names differ from the column names"):
        clf.fit(frame, Y, feature_names=["a", "b", "c"])


def test_estimators_explain_and_importances(emotions):
    ds, X, Y = emotions
    clf = BoomerClassifier(device="cpu", max_rules=4, random_state=1).fit(
        X, Y, feature_names=ds.feature_names)
    explained = clf.explain(X[:5])
    assert np.array_equal(_summed(explained, Y.shape[1]), clf.decision_function(X[:5]))
    imp = clf.feature_importances_
    assert imp.shape == (X.shape[1],) and imp.dtype == np.float64
    assert np.isclose(imp.sum(), 1.0) and (imp >= 0).all()
    # the training coverage recorded at fit is the coverage on the training data
    assert np.array_equal(clf.model_.feature_importances(X.shape[1], X), imp)
    records = clf.model_.to_records()
    assert records[0]["coverage"] == X.shape[0] and records[1]["condition_list"][0][
        "feature_name"] == ds.feature_names[records[1]["condition_list"][0]["feature"]]

    seco = SeCoClassifier(device="cpu", max_rules=3).fit(X, Y)
    assert np.isclose(seco.feature_importances_.sum(), 1.0)
    assert len(seco.explain(X[:2])) == 2

    y = np.where(Y[:, 0] == 1, "yes", "no")
    turs = TursClassifier(device="cpu", max_rules=3).fit(X[:, :6], y,
                                                         feature_names=ds.feature_names[:6])
    assert turs.feature_importances_.shape == (6,)
    assert all(len(row) >= 1 for row in turs.explain(X[:4, :6]))
    assert not re.search(r"\bx\d+ ", str(turs.model_))
