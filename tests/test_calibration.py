"""Isotonic marginal probability calibration (``objectives/calibration.py``): mlrl-boomer's
fit against a slow list-based reference, hand-worked cases, the interpolation rule, the
holdout set, the predictors that use it, and save/load."""

import numpy as np
import pytest

from gpurules import BoomerClassifier
from gpurules.estimators.boomer_params import resolve_config
from gpurules.learners.holdout import holdout_count
from gpurules.objectives import calibration
from gpurules.objectives.calibration import IsotonicCalibration, fit_bins, interpolate
from gpurules.objectives.predictors import marginal_probabilities


def reference_bins(probabilities, truths):
    """The module's steps 1 and 2 written plainly: groups of equal thresholds (mean label;
    the last group: its last example's label), then pools kept as a list: pool i absorbs
    the following pools while each is <= the one absorbed before it (the first one: <= pool
    i), takes the plain mean of the values absorbed, and the scan steps back one pool."""
    pools = []
    for threshold in np.unique(probabilities):
        members = truths[probabilities == threshold]
        pools.append([threshold, float(np.mean(members))])
    pools[-1][1] = float(truths[probabilities == pools[-1][0]][-1])
    i = 0
    while i < len(pools) - 1:
        if pools[i + 1][1] > pools[i][1]:
            i += 1
            continue
        absorbed = [pools[i + 1][1]]
        k = i + 2
        while k < len(pools) and pools[k][1] <= absorbed[-1]:
            absorbed.append(pools[k][1])
            k += 1
        pools[i][1] = float(np.mean([pools[i][1]] + absorbed))
        del pools[i + 1:k]
        i = max(i - 1, 0)
    return np.array([p[0] for p in pools]), np.array([p[1] for p in pools])


def assert_bins(actual, expected):
    np.testing.assert_array_equal(actual[0], expected[0])
    np.testing.assert_allclose(actual[1], expected[1], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("probabilities, truths, expected", [
    ([0.3], [1], ([0.3], [1.0])),  # a single point
    ([0.4, 0.4, 0.4, 0.4], [1, 0, 1, 0], ([0.4], [0.0])),  # all equal: the last label
    ([0.2, 0.2, 0.5, 0.7], [1, 0, 0, 1], ([0.2, 0.7], [0.25, 1.0])),  # ties, one violation
    ([0.1, 0.3, 0.3, 0.6], [0, 1, 0, 1], ([0.1, 0.3, 0.6], [0.0, 0.5, 1.0])),  # monotone
    ([0.1, 0.1, 0.1, 0.5, 0.9], [1, 1, 1, 0, 1], ([0.1, 0.9], [0.5, 1.0])),  # unweighted
    # groups 0.2, 0.6, 0.5, 0 (last): pool (0.6 + 0.5 + 0) / 3; then 0.2 < it: kept
    ([.1] * 5 + [.2] * 5 + [.3] * 2 + [.4], [0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 1, 0, 0],
     ([0.1, 0.2], [0.2, (0.6 + 0.5) / 3])),
    # groups 0.5, 0.6, 0.5, 0: as above, then the step back pools 0.5 with that pool
    ([.1] * 2 + [.2] * 5 + [.3] * 2 + [.4], [1, 0, 1, 1, 1, 0, 0, 1, 0, 0],
     ([0.1], [(0.5 + 1.1 / 3) / 2])),
])
def test_hand_worked_bins(probabilities, truths, expected):
    p, y = np.array(probabilities), np.array(truths, float)
    assert_bins(fit_bins(p, y), (np.array(expected[0]), np.array(expected[1])))
    assert_bins(reference_bins(p, y), (np.array(expected[0]), np.array(expected[1])))


@pytest.mark.parametrize("seed", range(30))
def test_fit_matches_reference(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 60))
    p = np.round(rng.random(m), int(rng.integers(1, 3)))  # rounding makes ties
    y = (rng.random(m) < p).astype(float)
    assert_bins(fit_bins(p, y), reference_bins(p, y))


def test_interpolation_rule():
    thresholds, values = np.array([0.2, 0.6]), np.array([0.1, 0.7])
    p = np.array([0.0, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0])
    np.testing.assert_allclose(interpolate(thresholds, values, p),
                               [0.0, 0.05, 0.1, 0.4, 0.7, 0.85, 1.0], rtol=1e-14)
    # a single bin: from (0, 0) and to (1, 1)
    np.testing.assert_allclose(interpolate(np.array([0.5]), np.array([0.2]),
                                           np.array([0.25, 0.75])), [0.1, 0.6], rtol=1e-14)


def test_calibration_model_per_column():
    p = np.array([[0.1, 0.9], [0.5, 0.2], [0.8, 0.4]])
    y = np.array([[0, 1], [1, 0], [1, 1]], np.uint8)
    model = IsotonicCalibration.fit(p, y)
    for column in range(2):
        assert_bins(model.bins(column), reference_bins(p[:, column], y[:, column]))
    q = np.array([[0.3, 0.3]])
    expected = [interpolate(*model.bins(c), q[:, c])[0] for c in range(2)]
    np.testing.assert_array_equal(model.apply(q)[0], expected)


def fit(data, **params):
    return BoomerClassifier(max_rules=20, device="cpu", random_state=3, **params).fit(*data)


def test_fit_on_training_examples_without_holdout(emotions_300):
    X, Y = emotions_300
    clf = fit(emotions_300, marginal_probability_calibration="isotonic{use_holdout_set=false}")
    assert resolve_config(clf)[0].holdout.kind == "none"
    expected = IsotonicCalibration.fit(marginal_probabilities(clf.decision_function(X)), Y)
    for column in range(Y.shape[1]):
        assert_bins(clf.marginal_calibration_.bins(column), expected.bins(column))
    np.testing.assert_array_equal(clf.predict_proba(X),
                                  expected.apply(marginal_probabilities(clf.decision_function(X))))


@pytest.mark.parametrize("use_holdout_set", [True, False])
def test_holdout_set(emotions_300, monkeypatch, use_holdout_set):
    """'auto' holds out examples when the calibration asks for them; it is fitted on the
    holdout set, or on the training examples with use_holdout_set=false."""
    sizes = []
    fit_calibration = calibration.MarginalCalibration.fit
    monkeypatch.setattr(calibration.MarginalCalibration, "fit",
                        staticmethod(lambda p, y: sizes.append(len(y)) or fit_calibration(p, y)))
    value = f"isotonic{{use_holdout_set={str(use_holdout_set).lower()}}}"
    holdout = "auto" if use_holdout_set else "random"
    clf = fit(emotions_300, marginal_probability_calibration=value, holdout=holdout)
    assert resolve_config(clf)[0].holdout.kind == \
        ("stratified-output-wise" if use_holdout_set else "random")
    held = holdout_count(300, 0.33)
    assert sizes == [held if use_holdout_set else 300 - held]


def test_predictors_use_it(emotions_300):
    X, _ = emotions_300
    clf = fit(emotions_300, marginal_probability_calibration="isotonic",
              binary_predictor="output-wise{based_on_probabilities=true}")
    raw = marginal_probabilities(clf.decision_function(X))
    calibrated = clf.marginal_calibration_.apply(raw)
    np.testing.assert_array_equal(clf.predict_proba(X), calibrated)
    np.testing.assert_array_equal(clf.predict(X), calibrated > 0.5)
    clf.set_params(probability_predictor="output-wise{use_probability_calibration=false}",
                   binary_predictor="output-wise{based_on_probabilities=true,"
                                    "use_probability_calibration=false}")
    np.testing.assert_array_equal(clf.predict_proba(X), raw)
    np.testing.assert_array_equal(clf.predict(X), raw > 0.5)
    clf.set_params(binary_predictor="output-wise")  # scores, never probabilities
    np.testing.assert_array_equal(clf.predict(X), clf.decision_function(X) > 0)


def test_refused_without_probabilities(emotions_300):
    with pytest.raises(ValueError, match="supported values"):
        fit(emotions_300, loss="squared-error-decomposable",
            marginal_probability_calibration="isotonic")


def test_save_load(emotions_300, tmp_path):
    X, _ = emotions_300
    clf = fit(emotions_300, marginal_probability_calibration="isotonic")
    clf.save(tmp_path / "model.json")
    loaded = BoomerClassifier.load(tmp_path / "model.json")
    assert np.array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    assert np.array_equal(loaded.predict(X), clf.predict(X))


def test_old_file_without_calibration_loads(emotions_300):
    X, _ = emotions_300
    clf = fit(emotions_300)
    doc = clf.to_dict()
    doc["estimator"].pop("marginal_calibration")
    loaded = BoomerClassifier.from_dict(doc)
    assert loaded.marginal_calibration_ is None
    assert np.array_equal(loaded.predict_proba(X), clf.predict_proba(X))


def test_probabilities_for_a_loss_without_them_are_refused_before_learning(emotions_300):
    """``based_on_probabilities=true`` with a squared-error loss: a ValueError from ``fit``
    naming the problem, raised before any rule is learned (not at ``predict``)."""
    from gpurules.learners import boosting

    calls = []
    original = boosting.BoostingLearner.fit

    def counted(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    boosting.BoostingLearner.fit = counted
    try:
        with pytest.raises(ValueError, match="based_on_probabilities=true needs a loss with "
                                             "probabilities"):
            fit(emotions_300, loss="squared-error-decomposable",
                binary_predictor="output-wise{based_on_probabilities=true}")
    finally:
        boosting.BoostingLearner.fit = original
    assert calls == []
