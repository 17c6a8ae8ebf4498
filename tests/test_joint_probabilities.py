"""Joint probabilities of the known label vectors (mlrl-boomer 0.15.6): the isotonic joint
calibration against a direct isotonic fit, the GFM binary predictor against a brute-force
expected F1, the marginalized predictor with calibration, options, save/load."""

import itertools

import numpy as np
import pytest

from gpurules import BoomerClassifier
from gpurules.estimators.boomer_params import resolve_config
from gpurules.objectives.calibration import IsotonicCalibration, fit_bins
from gpurules.objectives.predictors import (marginal_probabilities, marginalized,
                                            most_probable_vectors,
                                            predict_gfm, unique_label_vectors)
from gpurules.prediction import joint_probabilities, log_joint_probabilities
from tests.test_calibration import fit


def f1(h, y):
    """Example-wise F1 of prediction ``h`` and truth ``y`` (0/1 (K,)); 1 for two empty sets."""
    denominator = h.sum() + y.sum()
    return 1.0 if denominator == 0 else 2.0 * (h & y).sum() / denominator


def expected_f1(h, joint, vectors):
    """E[F1(h, Y)] for Y distributed as ``joint`` (U,) over ``vectors`` (U, K)."""
    return sum(p * f1(h, y) for p, y in zip(joint, vectors))


def brute_force_best(joint, vectors):
    """The largest expected F1 over all 2^K predictions (slow, obvious)."""
    K = vectors.shape[1]
    return max(expected_f1(np.array(h, np.uint8), joint, vectors)
               for h in itertools.product((0, 1), repeat=K))


@pytest.mark.parametrize("seed", range(40))
def test_gfm_maximises_expected_f1(seed):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(1, 5))
    U = int(rng.integers(1, 2 ** K + 1))
    vectors = np.array(list(itertools.product((0, 1), repeat=K)), np.uint8)
    vectors = vectors[rng.permutation(2 ** K)[:U]]
    joint = rng.dirichlet(np.full(U, 0.5), size=6)
    if seed % 5 == 0:
        joint = np.round(joint, 1)  # ties between sets
    out = predict_gfm(joint, vectors, block=4)  # blocks of rows
    assert out.dtype == np.uint8 and out.shape == (6, K)
    for i in range(6):
        best = brute_force_best(joint[i], vectors)
        assert expected_f1(out[i], joint[i], vectors) == pytest.approx(best, abs=1e-12)


def test_gfm_hand_worked():
    vectors = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 0, 1]], np.uint8)
    # the empty vector is most likely, but {0} has a larger expected F1 (0.4 * 1 + 0.3 * 2/3)
    np.testing.assert_array_equal(predict_gfm(np.array([[0.45, 0.4, 0.15, 0.0]]), vectors),
                                  [[1, 0, 0]])
    # the empty set when it is likely enough; ties go to the smaller set
    np.testing.assert_array_equal(predict_gfm(np.array([[0.7, 0.3, 0.0, 0.0]]), vectors),
                                  [[0, 0, 0]])
    np.testing.assert_array_equal(predict_gfm(np.array([[0.5, 0.5, 0.0, 0.0]]), vectors),
                                  [[0, 0, 0]])


def test_joint_probabilities_chain_rule():
    rng = np.random.default_rng(4)
    scores = rng.normal(size=(7, 3))
    vectors = np.array(list(itertools.product((0, 1), repeat=3)), np.uint8)[[0, 3, 5, 6]]
    p = marginal_probabilities(scores)
    raw = np.prod(np.where(vectors[None] == 1, p[:, None], 1 - p[:, None]), axis=2)
    np.testing.assert_allclose(np.exp(log_joint_probabilities(scores, vectors)), raw,
                               rtol=1e-12)
    np.testing.assert_allclose(joint_probabilities(scores, vectors),
                               raw / raw.sum(axis=1, keepdims=True), rtol=1e-12)
    # both calibrations: marginal in the chain rule, joint per vector, then normalised
    marginal = IsotonicCalibration.fit(p, (rng.random(p.shape) < 0.5).astype(np.uint8))
    joint = IsotonicCalibration.fit(raw, (rng.random(raw.shape) < 0.3).astype(np.uint8))
    pc = marginal.apply(p)
    raw_c = joint.apply(np.prod(np.where(vectors[None] == 1, pc[:, None], 1 - pc[:, None]),
                                axis=2))
    total = raw_c.sum(axis=1, keepdims=True)
    expected = np.divide(raw_c, total, out=np.zeros_like(raw_c), where=total > 0)
    np.testing.assert_allclose(joint_probabilities(scores, vectors, marginal, joint),
                               expected, rtol=1e-12, atol=1e-15)


def test_joint_calibration_is_a_direct_isotonic_fit(emotions_300):
    X, Y = emotions_300
    clf = fit(emotions_300, joint_probability_calibration="isotonic{use_holdout_set=false}",
              marginal_probability_calibration="isotonic{use_holdout_set=false}")
    assert resolve_config(clf)[0].holdout.kind == "none"
    vectors = clf.model_.label_vectors
    np.testing.assert_array_equal(vectors, unique_label_vectors(Y)[0])
    p = clf.marginal_calibration_.apply(marginal_probabilities(clf.decision_function(X)))
    raw = np.prod(np.where(vectors[None] == 1, p[:, None], 1 - p[:, None]), axis=2)
    model = clf.joint_calibration_
    assert model.num_lists == vectors.shape[0]
    for u in range(vectors.shape[0]):
        truth = (Y == vectors[u]).all(axis=1).astype(float)
        thresholds, values = fit_bins(raw[:, u], truth)
        t, v = model.bins(u)
        np.testing.assert_allclose(t, thresholds, rtol=1e-12)
        np.testing.assert_allclose(v, values, rtol=1e-12)


def test_joint_calibration_uses_the_holdout_set(emotions_300):
    clf = fit(emotions_300, joint_probability_calibration="isotonic")
    assert resolve_config(clf)[0].holdout.kind == "stratified-output-wise"
    assert clf.joint_calibration_ is not None and clf.marginal_calibration_ is None


def test_options_change_the_predictions(emotions_300):
    X, Y = emotions_300
    base = fit(emotions_300, loss="logistic-non-decomposable")
    gfm = fit(emotions_300, loss="logistic-non-decomposable", binary_predictor="gfm")
    assert gfm.binary_predictor_ == "gfm"
    expected = predict_gfm(joint_probabilities(gfm.decision_function(X),
                                               gfm.model_.label_vectors),
                           gfm.model_.label_vectors)
    np.testing.assert_array_equal(gfm.predict(X), expected)
    assert (gfm.predict(X) != base.predict(X)).any()
    joint = dict(loss="logistic-non-decomposable", binary_predictor="gfm",
                 joint_probability_calibration="isotonic")
    calibrated = fit(emotions_300, **joint)
    uncalibrated = fit(emotions_300, **{**joint, "binary_predictor":
                                    "gfm{use_probability_calibration=false}"})
    vectors = calibrated.model_.label_vectors
    plain = predict_gfm(joint_probabilities(calibrated.decision_function(X), vectors), vectors)
    np.testing.assert_array_equal(uncalibrated.predict(X), plain)  # the same rules
    assert (calibrated.predict(X) != plain).any()
    # the marginalized predictor applies both calibrations too
    proba = calibrated.predict_proba(X)
    np.testing.assert_allclose(proba, marginalized(joint_probabilities(
        calibrated.decision_function(X), vectors, None, calibrated.joint_calibration_),
        vectors), rtol=1e-12)
    assert not np.allclose(proba, base.predict_proba(X))


def test_gfm_with_a_decomposable_loss(emotions_300):
    X, _ = emotions_300
    clf = fit(emotions_300, binary_predictor="gfm")
    assert clf.probability_predictor_ == "output-wise"
    vectors = clf.model_.label_vectors
    expected = predict_gfm(joint_probabilities(clf.decision_function(X), vectors), vectors)
    np.testing.assert_array_equal(clf.predict(X), expected)


def test_old_file_without_joint_calibration_loads(emotions_300):
    X, _ = emotions_300
    clf = fit(emotions_300, binary_predictor="gfm")
    doc = clf.to_dict()
    assert doc["estimator"].pop("joint_calibration") is None
    loaded = BoomerClassifier.from_dict(doc)
    assert loaded.joint_calibration_ is None
    np.testing.assert_array_equal(loaded.predict(X), clf.predict(X))


@pytest.mark.parametrize("params, match", [
    (dict(joint_probability_calibration="platt"), "supported values"),
    (dict(joint_probability_calibration="isotonic{use_holdout=true}"), "use_holdout"),
    (dict(binary_predictor="gfm{based_on_probabilities=true}"), "based_on_probabilities"),
    (dict(binary_predictor="gfm", loss="squared-error-non-decomposable"), "probabilities"),
    (dict(joint_probability_calibration="isotonic", loss="squared-hinge-decomposable"),
     "probabilities"),
])
def test_bad_values_raise(emotions_300, params, match):
    with pytest.raises(ValueError, match=match):
        fit(emotions_300, **params)


def test_save_load(emotions_300, tmp_path):
    X, _ = emotions_300
    clf = fit(emotions_300, loss="logistic-non-decomposable", binary_predictor="gfm",
              joint_probability_calibration="isotonic",
              marginal_probability_calibration="isotonic")
    clf.save(tmp_path / "model.json")
    loaded = BoomerClassifier.load(tmp_path / "model.json")
    for a, b in ((clf.joint_calibration_, loaded.joint_calibration_),
                 (clf.marginal_calibration_, loaded.marginal_calibration_)):
        np.testing.assert_array_equal(a.thresholds, b.thresholds)
        np.testing.assert_array_equal(a.probabilities, b.probabilities)
        np.testing.assert_array_equal(a.offsets, b.offsets)
    assert loaded.binary_predictor_ == "gfm"
    np.testing.assert_array_equal(loaded.predict(X), clf.predict(X))
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))


def test_example_wise_based_on_probabilities(emotions_300):
    """``example-wise{based_on_probabilities=true}``: per example the training label vector
    of largest joint probability (a direct NumPy product of the logistic marginals, then
    the model's joint calibration), probabilities within 1e-12 of the largest tied and
    decided by the training frequency (after 20 rules, labels of equal scores make such
    ties common). The same rules as the loss-based distance, other predictions (the
    calibration moves them)."""
    X, Y = emotions_300
    params = dict(loss="logistic-non-decomposable", joint_probability_calibration="isotonic")
    base = fit(emotions_300, binary_predictor="example-wise", **params)
    clf = fit(emotions_300, binary_predictor="example-wise{based_on_probabilities=true}",
              **params)
    np.testing.assert_array_equal(clf.decision_function(X), base.decision_function(X))
    vectors, counts = clf.model_.label_vectors, clf.model_.label_vector_counts
    p = 1.0 / (1.0 + np.exp(-clf.decision_function(X)))
    joint = clf.joint_calibration_.apply(np.prod(
        np.where(vectors[None, :, :] == 1, p[:, None, :], 1.0 - p[:, None, :]), axis=2))
    predicted = clf.predict(X)
    for i in range(X.shape[0]):
        best = np.flatnonzero(joint[i] >= joint[i].max() * (1 - 1e-12))
        np.testing.assert_array_equal(predicted[i], vectors[best[np.argmax(counts[best])]])
    assert (predicted != base.predict(X)).any()


def test_most_probable_vectors_ties_go_to_the_more_frequent_vector():
    vectors = np.array([[0, 1], [1, 0], [1, 1]], np.uint8)
    joint = np.array([[0.4, 0.4, 0.2], [0.1, 0.2, 0.7], [0.0, 0.0, 0.0]])
    out = most_probable_vectors(joint, vectors, np.array([3, 5, 5]))
    np.testing.assert_array_equal(out, [[1, 0], [1, 1], [1, 0]])
