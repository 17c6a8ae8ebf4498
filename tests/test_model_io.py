"""Model files (``docs/model-format.md``): every learner and main option round-trips through
JSON with bit-identical predictions, loading never calls pickle, and a bad file raises a
ValueError naming the problem."""

import copy
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpurules
from gpurules import BoomerClassifier, SeCoClassifier, TursClassifier
from gpurules.conditions import OP_EQ, OP_GR, OP_LEQ, OP_NEQ
from gpurules.decision_list import DecisionList
from gpurules.model import RuleModel, RuleModelBuilder
from gpurules.model_io import SCHEMA_VERSION
from gpurules.model_turs import TursModel


def _data(seed=0, n=60, A=4, K=3):
    """Small data: integer features (column 3 nominal codes 0..2), some NaN, labels."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, (n, A)).astype(np.float32) + rng.random((n, A)).astype(np.float32)
    X[:, 3] = rng.integers(0, 3, n)
    X[rng.random((n, A)) < 0.05] = np.nan
    Y = (rng.random((n, K)) < 0.4).astype(np.uint8)
    Y[:, 0] |= (X[:, 0] > 2).astype(np.uint8)
    return X, Y


def _assert_same_arrays(a, b):
    """Every array attribute of two models holds the same dtype, shape and bits."""
    for name, value in vars(a).items():
        if isinstance(value, np.ndarray):
            other = getattr(b, name)
            assert other.dtype == value.dtype and other.shape == value.shape, name
            assert value.tobytes() == other.tobytes(), name
        elif isinstance(value, RuleModel):
            _assert_same_arrays(value, getattr(b, name))


def _round_trip(clf, X, tmp_path, methods):
    """Save ``clf``; the loaded estimator and model predict bit for bit as ``clf``."""
    path = tmp_path / "model.json"
    clf.save(path)
    loaded = gpurules.load_estimator(path)
    assert type(loaded) is type(clf) and loaded.get_params() == clf.get_params()
    assert type(clf).load(path).n_features_in_ == clf.n_features_in_
    for method in methods:
        expected, got = getattr(clf, method)(X), getattr(loaded, method)(X)
        assert got.dtype == expected.dtype and np.array_equal(got, expected), method
    model = gpurules.load_model(path)
    assert type(model) is type(clf.model_) and str(model) == str(clf.model_)
    _assert_same_arrays(model, clf.model_)
    assert model.to_records() == clf.model_.to_records()  # training coverage included
    json.dumps(clf.to_dict(), allow_nan=False)  # standard JSON only
    return loaded, model


BOOMER_CASES = {
    "single": dict(head_type="single"),
    "complete": dict(head_type="complete"),
    "non-decomposable": dict(loss="logistic-non-decomposable", head_type="complete"),
}


@pytest.mark.parametrize("case", list(BOOMER_CASES))
def test_boomer_round_trip(case, tmp_path):
    X, Y = _data()
    clf = BoomerClassifier(device="cpu", max_rules=4, random_state=1,
                           **BOOMER_CASES[case]).fit(X, Y, nominal_feature_indices=[3])
    assert len(clf.model_) > 1
    _, model = _round_trip(clf, X, tmp_path,
                           ["predict", "predict_proba", "decision_function"])
    assert np.array_equal(model.predict_scores(X), clf.model_.predict_scores(X))
    if case == "non-decomposable":
        assert clf.binary_predictor_ == "example-wise" and model.label_vectors is not None


def test_boomer_one_d_labels_and_dataframe_categories(tmp_path):
    pd = pytest.importorskip("pandas")
    X, Y = _data(1)
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2],
                          "colour": pd.Categorical(np.array(["red", "green", "blue"])[
                              np.nan_to_num(X[:, 3]).astype(int)])})
    y = np.where(Y[:, 0] == 1, "yes", "no")
    clf = BoomerClassifier(device="cpu", max_rules=4, random_state=1).fit(frame, y)
    loaded, _ = _round_trip(clf, frame, tmp_path,
                            ["predict", "predict_proba", "decision_function"])
    assert loaded.classes_.tolist() == ["no", "yes"]
    assert loaded.feature_names_in_.tolist() == ["a", "b", "c", "colour"]
    assert loaded.feature_categories_[3].tolist() == ["blue", "green", "red"]


@pytest.mark.parametrize("rule_set", ["decision-list", "unordered{num_trees=4,max_depth=3}"])
def test_seco_round_trip(rule_set, tmp_path):
    X, Y = _data(2)
    clf = SeCoClassifier(device="cpu", max_rules=6, rule_set=rule_set).fit(
        X, Y, nominal_feature_indices=[3])
    _, model = _round_trip(clf, X, tmp_path, ["predict"])
    assert model.ordered == (rule_set == "decision-list")
    assert model.threshold == clf.model_.threshold
    assert model.rule_value.tobytes() == clf.model_.rule_value.tobytes()


def test_turs_round_trip(tmp_path):
    X, Y = _data(3, n=80)
    y = np.array(["a", "b", "c"])[Y[:, 0] + Y[:, 1]]
    clf = TursClassifier(device="cpu", categorical_features=[3], max_rules=4).fit(X, y)
    loaded, model = _round_trip(clf, X, tmp_path, ["predict", "predict_proba"])
    assert loaded.history_ == clf.history_ and loaded.classes_.tolist() == ["a", "b", "c"]
    assert [r.counts.tolist() for r in model.rules] == [r.counts.tolist() for r in
                                                       clf.model_.rules]


def _arrays(model):
    """Every ndarray attribute of ``model`` and of a RuleModel it holds."""
    for value in vars(model).values():
        if isinstance(value, np.ndarray):
            yield value
        elif isinstance(value, RuleModel):
            yield from _arrays(value)


def test_memory_mapped_models_are_writable(tmp_path):
    """``joblib.load(..., mmap_mode="r")`` maps arrays read-only; the models copy theirs
    (``ModelMethods.__setstate__``), so that predicting does not compile the predictors a
    second time for read-only arrays, and predicts as before."""
    joblib = pytest.importorskip("joblib")
    X, Y = _data(4)
    for clf in (BoomerClassifier(device="cpu", max_rules=4, random_state=1),
                SeCoClassifier(device="cpu", max_rules=4)):
        clf.fit(X, Y)
        joblib.dump(clf, tmp_path / "model.joblib")
        loaded = joblib.load(tmp_path / "model.joblib", mmap_mode="r")
        arrays = list(_arrays(loaded.model_))
        assert len(arrays) >= 8 and all(a.flags.writeable for a in arrays)
        _assert_same_arrays(loaded.model_, clf.model_)
        assert np.array_equal(loaded.predict(X), clf.predict(X))


def _exact_model():
    """Thresholds and scores that a decimal round trip of float32 or float64 would lose."""
    b = RuleModelBuilder(2)
    b.set_default_rule([0.1 + 0.2, -1e-300])
    tiny = np.nextafter(np.float32(0.1), np.float32(1))
    b.add_rule([(0, OP_LEQ, tiny), (1, OP_GR, np.float32(-0.0))], [0, 1], [1 / 3, 5e-324])
    b.add_rule([(2, OP_EQ, 2.0), (2, OP_NEQ, 0.0)], [1], [-np.pi])
    b.add_rule([], [0], [np.float64(np.finfo(np.float64).max)])
    model = b.build(feature_names=["f0", "f1", "f2"], label_names=["l0", "l1"],
                    nominal_values={2: ["u", "v", "w"]})
    model.rule_coverage, model.n_training_examples = np.array([3, 0, 7]), 7
    return model


def test_floats_round_trip_bit_for_bit():
    model = _exact_model()
    again = RuleModel.from_dict(json.loads(json.dumps(model.to_dict(), allow_nan=False)))
    _assert_same_arrays(model, again)
    assert again.cond_threshold.view(np.uint32).tolist() == \
        model.cond_threshold.view(np.uint32).tolist()
    assert again.nominal_values == {2: ["u", "v", "w"]} and again.label_names == ["l0", "l1"]
    X = np.array([[0.1, 1, 2], [np.nextafter(np.float32(0.1), np.float32(1)), -0.0, 2],
                  [np.nan, 3, 1]], np.float32)
    assert np.array_equal(again.predict_scores(X), model.predict_scores(X))


def test_non_finite_values_are_strings():
    dl = DecisionList(_exact_model(), np.array([-np.inf, np.nan, 2.5]), -np.inf, False)
    doc = dl.to_dict()
    assert doc["model"]["rule_values"][:2] == ["-Infinity", "NaN"]
    again = DecisionList.from_dict(json.loads(json.dumps(doc, allow_nan=False)))
    assert again.rule_value.tobytes() == dl.rule_value.tobytes()
    assert again.threshold == -np.inf and not again.ordered


def test_loading_never_calls_pickle(tmp_path):
    X, Y = _data(4)
    clf = BoomerClassifier(device="cpu", max_rules=3, random_state=1).fit(X, Y)
    clf.save(tmp_path / "m.json")
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "expected.npy", clf.predict_proba(X))
    script = textwrap.dedent(f"""
        import pickle, numpy as np, gpurules
        def refuse(*args, **kwargs):
            raise AssertionError("pickle was called")
        saved = pickle.load, pickle.loads
        pickle.load = pickle.loads = refuse
        clf = gpurules.load_estimator({str(tmp_path / "m.json")!r})
        model = gpurules.load_model({str(tmp_path / "m.json")!r})
        pickle.load, pickle.loads = saved   # the Numba kernel cache may unpickle
        X = np.load({str(tmp_path / "X.npy")!r}, allow_pickle=False)
        expected = np.load({str(tmp_path / "expected.npy")!r}, allow_pickle=False)
        assert np.array_equal(clf.predict_proba(X), expected)
        assert np.array_equal(model.predict_scores(X), clf.decision_function(X))
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=str(tmp_path), timeout=600,
                          env={**__import__("os").environ,
                               "PYTHONPATH": str(__import__("pathlib").Path(
                                   gpurules.__file__).parents[1])})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


# --- errors ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def doc():
    return _exact_model().to_dict()


def _changed(doc, change):
    doc = copy.deepcopy(doc)
    change(doc)
    return doc


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(format="other"), "not a gpurules model: format is 'other'"),
    (lambda d: d.pop("format"), "format is None"),
    (lambda d: d.update(schema_version=SCHEMA_VERSION + 1), "newer than this gpurules"),
    (lambda d: d.update(schema_version="1"), "schema_version must be an integer"),
    (lambda d: d.update(schema_version=0), "schema_version must be an integer >= 1"),
    (lambda d: d.update(kind="forest"), "unknown model kind 'forest'"),
    (lambda d: d.pop("model"), "malformed gpurules model file: model is missing"),
    (lambda d: d["model"]["rules"][0]["head"].pop("labels"),
     r"model\.rules\[0\]\.head\.labels is missing"),
    (lambda d: d["model"]["rules"][1]["head"].update(labels=[2]),
     r"model\.rules\[1\]\.head\.labels\[0\] must be an integer >= 0 < 2"),
    (lambda d: d["model"]["rules"][0]["head"].update(scores=[1.0]),
     r"model\.rules\[0\]\.head\.scores must be an array of 2 elements"),
    (lambda d: d["model"]["rules"][0]["conditions"][0].update(op="<"),
     r"conditions\[0\]\.op must be one of '<=', '>', '==', '!='"),
    (lambda d: d["model"]["rules"][0]["conditions"][0].update(threshold="big"),
     r"conditions\[0\]\.threshold must be a number"),
    (lambda d: d["model"].update(rules={}), r"model\.rules must be an array"),
    (lambda d: d["model"]["rules"][0]["conditions"][0].update(feature=2 ** 40),
     r"rules\[0\]\.conditions\[0\]\.feature must be an integer >= 0 < 2147483648"),
    (lambda d: d["model"]["training_coverage"].update(rules=[2 ** 70, 1, 1]),
     r"training_coverage\.rules must be an array of integers that fit int64"),
    (lambda d: d["model"].update(label_vectors=[[0, 1]]), "label_vector_counts, or neither"),
])
def test_bad_documents_raise_value_error(doc, change, message):
    with pytest.raises(ValueError, match=message):
        RuleModel.from_dict(_changed(doc, change))


def test_wrong_kind_and_bad_files_raise_value_error(doc, tmp_path):
    with pytest.raises(ValueError, match="wrong model kind: the document holds a 'boomer'"):
        DecisionList.from_dict(doc)
    with pytest.raises(ValueError, match="expected 'turs'"):
        TursModel.from_dict(doc)
    path = tmp_path / "model.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="is not JSON text"):
        gpurules.load_model(path)
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match="must be a JSON object, got list"):
        gpurules.load_model(path)
    _exact_model().save(path)
    assert str(gpurules.load_model(path)) == str(_exact_model())
    with pytest.raises(ValueError, match="no 'estimator' section: it was written by model"):
        gpurules.load_estimator(path)
    with pytest.raises(ValueError, match="expected 'seco'"):
        SeCoClassifier.load(path)


def test_estimator_section_errors(tmp_path):
    X, Y = _data(5)
    doc = BoomerClassifier(device="cpu", max_rules=2, random_state=1).fit(X, Y).to_dict()
    with pytest.raises(ValueError, match=r"estimator\.loss must be one of"):
        BoomerClassifier.from_dict(_changed(doc, lambda d: d["estimator"].update(loss="x")))
    with pytest.raises(ValueError, match="estimator.params do not fit BoomerClassifier"):
        BoomerClassifier.from_dict(
            _changed(doc, lambda d: d["estimator"]["params"].update(colour=1)))
    with pytest.raises(ValueError, match=r"estimator\.class must be one of 'BoomerClassif"):
        BoomerClassifier.from_dict(
            _changed(doc, lambda d: d["estimator"].update({"class": "Other"})))


def test_parameters_as_json():
    from gpurules.estimators.persistence import _param

    assert _param("random_state", np.random.default_rng(1)) is None  # not used to predict
    assert _param("random_state", np.int64(3)) == 3
    assert _param("categorical_features", (1, np.int32(2))) == [1, 2]
    with pytest.raises(ValueError, match="parameter shrinkage=nan cannot be stored"):
        _param("shrinkage", float("nan"))
