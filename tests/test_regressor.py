"""BoomerRegressor: the regression losses' statistics against NumPy, a hand-worked fit, the
estimator's contract (parameters as mlrl-boomer 0.15.6's regressor, shapes, R², bad input,
model files), and CPU == CUDA under the Numba CUDA simulator.

The simulator checks run in one fresh interpreter (``python -m tests.test_regressor`` with
``NUMBA_ENABLE_CUDASIM=1`` and ``tests/reference/fake_cupy.py`` as CuPy, as
``tests/test_cuda_non_decomposable.py`` does); the simulator costs about 1 ms per simulated
thread, so the data are tiny.
"""

import inspect
import warnings

import numpy as np
import pytest
from sklearn.metrics import r2_score

from gpurules import BoomerClassifier, BoomerRegressor, load_estimator, load_model
from gpurules.backends.cpu import statistics
from gpurules.objectives import losses, non_decomposable
from gpurules.objectives.fixed_point import hessian_units, quantize
from tests.reference.cuda_support import run_simulated_checks, simulated_tests

CHECKS = {}
# mlrl-boomer 0.15.6: BoomerRegressor().get_params() (mlrl/boosting/learners.py)
MLRL_REGRESSOR_PARAMETERS = {
    "random_state", "feature_format", "output_format", "prediction_format",
    "statistic_format", "statistic_type", "default_rule", "rule_induction", "max_rules",
    "time_limit", "global_pruning", "post_optimization", "head_type", "loss",
    "output_sampling", "instance_sampling", "feature_sampling", "holdout", "feature_binning",
    "rule_pruning", "shrinkage", "l1_regularization_weight", "l2_regularization_weight",
    "parallel_rule_refinement", "parallel_statistic_update", "parallel_prediction"}
SCALE = 2.0 ** 20


def check(fn):
    CHECKS[fn.__name__] = fn
    return fn


def regression_problem(seed, n=60, A=3, K=2):
    """X float32 (n, A) and targets float64 (n, K): steps and a linear part plus noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, A)).astype(np.float32)
    Y = np.column_stack([3.0 * (X[:, k % A] > 0) + X[:, (k + 1) % A] for k in range(K)])
    return X, Y + rng.normal(0.0, 0.3, size=Y.shape)


# -- the statistics against NumPy -------------------------------------------------------------
def _statistics_inputs(seed, n=20, K=3):
    rng = np.random.default_rng(seed)
    Y = rng.normal(0.0, 40.0, size=(n, K))
    P = rng.normal(0.0, 30.0, size=(n, K))
    P[0] = Y[0]  # an example predicted exactly: non-decomposable statistics 0
    return Y, P, rng.uniform(0.5, 2.0, size=n)


def test_decomposable_statistics_equal_numpy():
    """g = p - y, h = 1 (times the example weight, fixed point) for float targets."""
    Y, P, w = _statistics_inputs(0)
    g = np.empty(Y.shape, np.int64)
    h = np.empty(Y.shape, np.int64)
    statistics.compute_all(losses.REGRESSION_SQUARED_ERROR, Y, P, w, SCALE, g, h)
    np.testing.assert_array_equal(g, np.floor((P - Y) * w[:, None] * SCALE + 0.5))
    np.testing.assert_array_equal(h, np.floor(np.ones_like(P) * w[:, None] * SCALE + 0.5))


def _nd_reference(y, p):
    """g = d / ||d||, H = (||d||^2 I - d d^T) / ||d||^3 (lower triangle packed by rows),
    d = p - y; all zero for d = 0."""
    d = p - y
    norm = np.sqrt((d * d).sum())
    if norm == 0.0:
        return np.zeros_like(d), np.zeros(non_decomposable.packed_size(d.size))
    H = (norm ** 2 * np.eye(d.size) - np.outer(d, d)) / norm ** 3
    return d / norm, H[np.tril_indices(d.size)]


def test_non_decomposable_statistics_equal_numpy():
    """The packed statistics of ||p - y|| for float targets, within one fixed-point unit of
    NumPy's (the order of the float operations differs), and the largest |statistic|."""
    Y, P, w = _statistics_inputs(1)
    K = Y.shape[1]
    g = np.empty(Y.shape, np.int64)
    h = np.empty((Y.shape[0], non_decomposable.packed_size(K)), np.int64)
    largest = statistics.compute_all_nd(non_decomposable.REGRESSION_SQUARED_ERROR, Y, P, w,
                                        SCALE, g, h)
    biggest = 0.0
    for i in range(Y.shape[0]):
        want_g, want_h = _nd_reference(Y[i], P[i])
        biggest = max(biggest, np.abs(want_g).max(), np.abs(want_h).max())
        assert np.abs(g[i] - np.floor(want_g * w[i] * SCALE + 0.5)).max() <= 1, i
        assert np.abs(h[i] - np.floor(want_h * w[i] * SCALE + 0.5)).max() <= 1, i
    assert (g[0] == 0).all() and (h[0] == 0).all()
    assert largest == pytest.approx(biggest, rel=1e-12)


def test_regression_loss_bounds_the_statistics_by_the_targets():
    """The decomposable bound covers |p - y| <= max|p| + max|y|; the classifier's is as
    before (target bound 1)."""
    spec = losses.regression(losses.REGRESSION_LOSSES["squared-error-decomposable"],
                             np.array([[-250.0], [3.0]]))
    assert spec.statistic_bound(10.0) == 260.0
    assert losses.DECOMPOSABLE_LOSSES["squared-error-decomposable"].statistic_bound(10.0) == 11
    nd = losses.REGRESSION_LOSSES["squared-error-non-decomposable"]
    assert losses.regression(nd, np.ones((2, 2))) is nd
    assert quantize(-0.5, 1.0) == 0.0  # ties up: the reference's floor(x + 0.5)


# -- hand-worked fit ------------------------------------------------------------------------
@pytest.mark.parametrize("feature_binning", ["none", "equal-width{bin_ratio=1.0}"])
def test_step_function_is_recovered(feature_binning):
    """y = 0 for x < 4, 10 for x >= 4 (x = 0..9), no L2, shrinkage 1: the default rule
    predicts the mean 6; the gain ½ G²/H of {x < 4} (G = 24, H = 4: 72) beats {x >= 4}'s
    (G = -24, H = 6: 48), so rule 1 is x <= 3.5 with -6; then only x >= 4 has gradients
    (-4 each): rule 2 is x > 3.5 with +4, and the model predicts y exactly."""
    X = np.arange(10, dtype=np.float32).reshape(-1, 1)
    y = np.where(X[:, 0] >= 4, 10.0, 0.0)
    reg = BoomerRegressor(device="cpu", max_rules=3, shrinkage=1.0,
                          l2_regularization_weight=0.0, feature_sampling="none",
                          feature_binning=feature_binning).fit(X, y)
    model = reg.model_
    np.testing.assert_array_equal(model.default_scores, [6.0])
    np.testing.assert_array_equal(model.cond_threshold, [3.5, 3.5])
    np.testing.assert_array_equal(model.head_score, [-6.0, 4.0])
    np.testing.assert_array_equal(reg.predict(X), y)
    assert reg.score(X, y) == 1.0


# -- the estimator --------------------------------------------------------------------------
def test_parameters_are_mlrl_boomers_regressor_parameters():
    names = set(inspect.signature(BoomerRegressor.__init__).parameters) - {"self"}
    assert names == MLRL_REGRESSOR_PARAMETERS | {"device", "verbose"}
    assert BoomerRegressor().get_params()["shrinkage"] == 0.3


@pytest.mark.parametrize("param, value", [
    ("loss", "logistic-decomposable"), ("holdout", "stratified-output-wise"),
    ("instance_sampling", "stratified-example-wise"), ("head_type", "partial")])
def test_classification_values_are_refused(param, value):
    X, Y = regression_problem(0, n=20)
    with pytest.raises(ValueError, match="supported values"):
        BoomerRegressor(device="cpu", **{param: value}).fit(X, Y)


def test_defaults_resolve_as_mlrl_boomer():
    """loss squared-error-decomposable, head_type auto = complete, holdout auto = random
    when pre-pruning asks for a holdout set, partial-fixed output_ratio 0 = 0.33."""
    est = BoomerRegressor()
    config, _ = est._resolve_config()
    assert config.loss.name == "squared-error-decomposable"
    assert config.loss.code == losses.REGRESSION_SQUARED_ERROR
    complete, _ = BoomerRegressor(head_type="complete")._resolve_config()
    assert config.head_mode == complete.head_mode
    pruned, _ = BoomerRegressor(global_pruning="pre-pruning")._resolve_config()
    assert pruned.holdout.kind == "random"
    fixed, _ = BoomerRegressor(head_type="partial-fixed")._resolve_config()
    assert fixed.head_params[4] == pytest.approx(0.33)


def test_predictions_are_the_summed_scores_and_score_is_r2():
    X, Y = regression_problem(1)
    reg = BoomerRegressor(device="cpu", max_rules=30).fit(X, Y)
    pred = reg.predict(X)
    assert pred.shape == Y.shape and pred.dtype == np.float64
    np.testing.assert_array_equal(pred, reg.model_.predict_scores(X))
    assert reg.score(X, Y) == pytest.approx(r2_score(Y, pred))
    assert reg.score(X, Y) > 0.8


def test_one_and_two_dimensional_targets():
    X, Y = regression_problem(2, K=1)
    one = BoomerRegressor(device="cpu", max_rules=10).fit(X, Y[:, 0])
    two = BoomerRegressor(device="cpu", max_rules=10).fit(X, Y)
    assert one.predict(X).shape == (60,) and two.predict(X).shape == (60, 1)
    np.testing.assert_array_equal(one.predict(X), two.predict(X)[:, 0])
    assert one.n_outputs_ == 1


@pytest.mark.parametrize("y, error, match", [
    (np.array([1.0, np.nan] * 10), ValueError, "contains NaN"),
    (np.array([1.0, np.inf] * 10), ValueError, "infinity"),
    (np.array(["a", "b"] * 10), TypeError, "numeric"),
    (np.array(["a", 1.0] * 10, dtype=object), TypeError, "numeric"),
    (np.ones(7), ValueError, "different numbers of examples"),
    (np.ones((20, 0)), ValueError, "0 targets"),
])
def test_bad_targets(y, error, match):
    X = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(error, match=match):
        BoomerRegressor(device="cpu").fit(X, y)


@pytest.mark.parametrize("params", [
    dict(head_type="single"), dict(head_type="partial-fixed"),
    dict(head_type="partial-dynamic"), dict(loss="squared-error-non-decomposable"),
    dict(loss="squared-error-non-decomposable", head_type="single"),
    dict(global_pruning="pre-pruning{min_rules=5}"),
    dict(instance_sampling="without-replacement", rule_pruning="irep")])
def test_heads_and_losses_fit(params):
    """Every head and both losses reduce the training error below the default rule's."""
    X, Y = regression_problem(3, K=3)
    base = BoomerRegressor(device="cpu", max_rules=1).fit(X, Y)
    reg = BoomerRegressor(device="cpu", max_rules=20, **params).fit(X, Y)
    assert len(reg.model_) > 1
    assert ((reg.predict(X) - Y) ** 2).mean() < 0.8 * ((base.predict(X) - Y) ** 2).mean()


def test_large_targets_scale_the_model():
    """Targets of 1e9 (the fixed-point scale bounded by max |y|): the same rules, scores and
    predictions scaled by 1e9 up to rounding."""
    X, Y = regression_problem(4)
    params = dict(device="cpu", max_rules=8, l2_regularization_weight=0.0)
    small = BoomerRegressor(**params).fit(X, Y)
    big = BoomerRegressor(**params).fit(X, Y * 1e9)
    np.testing.assert_array_equal(big.model_.cond_threshold, small.model_.cond_threshold)
    np.testing.assert_allclose(big.predict(X), small.predict(X) * 1e9, rtol=1e-9, atol=1e-3)


def test_targets_scaled_by_a_power_of_two_scale_the_model_exactly():
    """The fixed-point scale follows the targets' magnitude by powers of two, so targets
    times 2**40 give the same rules and, bit for bit, scores times 2**40."""
    X, Y = regression_problem(6)
    small = BoomerRegressor(device="cpu", max_rules=8).fit(X, Y)
    big = BoomerRegressor(device="cpu", max_rules=8).fit(X, Y * 2.0 ** 40)
    assert str(big.model_.cond_threshold) == str(small.model_.cond_threshold)
    assert np.array_equal(big.model_.head_score, small.model_.head_score * 2.0 ** 40)


@pytest.mark.parametrize("case", ["targets", "weights"])
def test_too_wide_a_range_for_the_statistics_is_refused(case):
    """Targets of 1e17 beside targets of 1, or one weight of 1e17 beside weights of 1, leave
    a fixed-point scale below one unit per unit weight, at which the Hessians would round
    to 0 or 2 units and the scores diverge (they reached 1e20 before this check): a
    ValueError that says what to do, before any rule."""
    X, Y = regression_problem(7, K=1)
    weight = np.ones(len(Y))
    if case == "targets":
        Y[0] = 1e17
    else:
        weight[0] = 1e17
    with pytest.raises(ValueError, match="Standardize the targets"):
        BoomerRegressor(device="cpu", max_rules=3).fit(X, Y, sample_weight=weight)


def test_non_decomposable_squared_error_with_one_output_warns():
    """With one output the Euclidean norm's Hessian is 0 (mlrl-boomer's fits are as poor):
    a UserWarning that names the decomposable loss; none with two outputs."""
    X, Y = regression_problem(8)
    params = dict(device="cpu", max_rules=2, loss="squared-error-non-decomposable")
    with pytest.warns(UserWarning, match="use 'squared-error-decomposable'"):
        BoomerRegressor(**params).fit(X, Y[:, 0])
    with pytest.warns(UserWarning, match="single output"):
        BoomerClassifier(**params).fit(X, Y[:, 0] > 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        BoomerRegressor(**params).fit(X, Y)


def test_hessian_units():
    """Exact weights pass at any scale at which they are multiples of one unit; the others
    need 256 units."""
    weights = np.array([0.0, 1.0, 3.0])
    assert hessian_units(1.0, weights) is None and hessian_units(0.5, weights) == 0.5
    assert hessian_units(0.25, np.array([4.0, 8.0])) is None
    assert hessian_units(2.0 ** 8, np.array([1.0, 1.1])) is None  # 256 units: enough
    assert hessian_units(2.0 ** 7, np.array([1.0, 1.1])) == 128.0


def test_model_files(tmp_path):
    X, Y = regression_problem(5)
    reg = BoomerRegressor(device="cpu", max_rules=8).fit(X, Y[:, 0])
    reg.save(tmp_path / "reg.json")
    loaded = load_estimator(tmp_path / "reg.json")
    assert type(loaded) is BoomerRegressor
    np.testing.assert_array_equal(loaded.predict(X), reg.predict(X))
    np.testing.assert_array_equal(BoomerRegressor.load(tmp_path / "reg.json").predict(X),
                                  reg.predict(X))
    np.testing.assert_array_equal(load_model(tmp_path / "reg.json").predict_scores(X)[:, 0],
                                  reg.predict(X))
    with pytest.raises(ValueError, match="BoomerClassifier"):
        BoomerClassifier.load(tmp_path / "reg.json")


# -- CPU == CUDA under the simulator -------------------------------------------------------
# the two kernels' paths that read the float64 targets: the decomposable statistics
# (compute_all_statistics, update_statistics) and the non-decomposable ones (encode_covered);
# the heads' search is the classifier's (tests/test_cuda_non_decomposable.py)
SIMULATED_FITS = {
    "decomposable-complete": dict(),
    "non-decomposable-complete": dict(loss="squared-error-non-decomposable"),
}


@check
def regressor_fits_equal_cpu():
    """BoomerRegressor(device='cuda') learns the CPU histogram search's model bit for bit
    (float64 targets in the statistics kernels)."""
    from tests.test_cuda_non_decomposable import MODEL_ARRAYS, simulated_cuda_estimators

    X, Y = regression_problem(6, n=30, A=3, K=2)
    with simulated_cuda_estimators() as fake_cupy:
        for name, params in SIMULATED_FITS.items():
            fake_cupy.launches.clear()
            fits = [BoomerRegressor(device=device, feature_binning="equal-width",
                                    max_rules=3, random_state=3, **params).fit(X, Y)
                    for device in ("cpu", "cuda")]
            assert fits[1].device_ == "cuda:0", name
            assert len(fits[0].model_) == 3, name
            for array in MODEL_ARRAYS:
                np.testing.assert_array_equal(getattr(fits[1].model_, array),
                                              getattr(fits[0].model_, array),
                                              err_msg=f"{name}: {array}")
            np.testing.assert_array_equal(fits[1].predict(X), fits[0].predict(X))
            launched = {n for n, *_ in fake_cupy.launches}
            assert "histogram_shared" in launched, name


simulator_results, test_under_simulator = simulated_tests(__name__, CHECKS)


if __name__ == "__main__":
    run_simulated_checks(CHECKS)
