"""BoomerClassifier behaviour: determinism, pickling, parameters, bad input."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_multilabel_classification

from gpurules import BoomerClassifier
from gpurules.conditions import OP_LEQ


@pytest.fixture(scope="module")
def data():
    X, Y = make_multilabel_classification(n_samples=150, n_features=8, n_classes=4,
                                          random_state=0)
    return X.astype(np.float32), Y.astype(np.uint8)


def fit(X, Y, **kw):
    kw.setdefault("max_rules", 30)
    kw.setdefault("random_state", 1)
    return BoomerClassifier(device="cpu", **kw).fit(X, Y)


def model_arrays(model):
    return [model.default_scores, model.cond_feature, model.cond_op, model.cond_threshold,
            model.rule_cond_start, model.head_label, model.head_score, model.rule_head_start]


def assert_same_model(a, b):
    for x, y in zip(model_arrays(a), model_arrays(b)):
        np.testing.assert_array_equal(x, y)


def test_fit_predict_shapes(data):
    X, Y = data
    clf = fit(X, Y)
    assert clf.predict(X).shape == Y.shape
    assert clf.decision_function(X).shape == Y.shape
    proba = clf.predict_proba(X)
    assert proba.shape == Y.shape and ((proba >= 0) & (proba <= 1)).all()
    assert len(clf.model_) == 30 and clf.device_ == "cpu"
    # better than predicting the majority of each label on the training data
    majority = (Y.mean(0) > 0.5).astype(np.uint8)
    assert (clf.predict(X) != Y).mean() < (majority != Y).mean()


def test_same_seed_same_model_and_threads_do_not_matter(data, parallel_forms):
    X, Y = data
    a = fit(X, Y, parallel_rule_refinement="false", parallel_statistic_update="false")
    b = fit(X, Y, parallel_rule_refinement="true{num_preferred_threads=2}",
            parallel_statistic_update="true")
    assert_same_model(a.model_, b.model_)
    c = fit(X, Y, random_state=2)
    assert not np.array_equal(a.model_.cond_threshold, c.model_.cond_threshold)


def test_pickle_round_trip(data):
    X, Y = data
    clf = fit(X, Y)
    clone = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(clone.decision_function(X), clf.decision_function(X))


def test_model_scores_match_a_direct_evaluation(data):
    X, Y = data
    model = fit(X, Y).model_
    expected = np.tile(model.default_scores, (len(X), 1))
    for r in range(model.num_rules):
        conds, head = model.rule(r)
        covered = np.ones(len(X), bool)
        for f, op, t in conds:
            covered &= X[:, f] <= t if op == OP_LEQ else X[:, f] > t
        for k, s in head:
            expected[covered, k] += s
    np.testing.assert_allclose(model.predict_scores(X), expected, rtol=0, atol=1e-12)


def test_default_rule_is_one_newton_step(data):
    X, Y = data
    model = fit(X, Y, max_rules=1).model_
    signs = 2.0 * Y - 1.0
    expected = (signs / 2).sum(0) / (len(Y) / 4 + 1.0)  # -G / (H + l2) at score 0
    np.testing.assert_allclose(model.default_scores, expected, rtol=1e-12)
    assert len(model) == 1


def test_single_label_heads(data):
    X, Y = data
    model = fit(X, Y, head_type="single").model_
    assert np.all(np.diff(model.rule_head_start) == 1)


@pytest.mark.parametrize("loss", ["squared-error-decomposable", "squared-hinge-decomposable"])
def test_other_losses(data, loss):
    X, Y = data
    clf = fit(X, Y, loss=loss, max_rules=50)
    assert (clf.predict(X) != Y).mean() < 0.3
    with pytest.raises(ValueError, match="logistic"):
        clf.predict_proba(X)


@pytest.mark.parametrize("sampling", ["with-replacement", "without-replacement{sample_size=0.5}"])
def test_instance_sampling(data, sampling):
    X, Y = data
    a = fit(X, Y, instance_sampling=sampling)
    b = fit(X, Y, instance_sampling=sampling)
    assert_same_model(a.model_, b.model_)


def test_max_conditions_and_feature_sampling(data):
    X, Y = data
    model = fit(X, Y, rule_induction="top-down-greedy{max_conditions=2}",
                feature_sampling="none").model_
    assert np.diff(model.rule_cond_start).max() <= 2


def test_no_default_rule(data):
    X, Y = data
    model = fit(X, Y, default_rule="false").model_
    assert not model.has_default_rule and np.all(model.default_scores == 0)
    assert len(model) == 30 and model.num_rules == 30


def test_one_dimensional_y_with_string_classes(data):
    X, Y = data
    y = np.where(Y[:, 0] == 1, "yes", "no")
    clf = fit(X, y)
    assert set(clf.predict(X)) <= {"yes", "no"}
    assert clf.predict_proba(X).shape == (len(X), 2)


def test_sparse_input_and_sparse_predictions(data):
    X, Y = data
    dense = fit(X, Y)
    sparse = fit(sp.csr_matrix(X), sp.csr_matrix(Y), prediction_format="sparse")
    assert_same_model(dense.model_, sparse.model_)
    assert sp.issparse(sparse.predict(X))


def test_sample_weight_zero_equals_removal(data):
    X, Y = data
    w = np.ones(len(X))
    w[::3] = 0
    keep = w > 0
    a = BoomerClassifier(device="cpu", max_rules=10).fit(X, Y, sample_weight=w)
    b = BoomerClassifier(device="cpu", max_rules=10).fit(X[keep], Y[keep])
    np.testing.assert_allclose(a.model_.default_scores, b.model_.default_scores)


def test_time_limit_stops_early(data):
    X, Y = data
    clf = fit(X, Y, max_rules=0, time_limit=0.2)
    assert 1 < len(clf.model_)


def test_str_names_features_and_labels(data):
    X, Y = data
    clf = fit(X, Y, max_rules=3)
    text = str(clf.model_)
    assert "(default rule)" in text and "x" in text and "y0" in text
    assert len(text.splitlines()) == 3


@pytest.mark.parametrize("param, value, match", [
    ("loss", "logistic", "supported values"),
    ("head_type", "partial", "supported values"),
    ("feature_sampling", "without-replacement{sample_size=2}", "sample_size"),
    ("feature_sampling", "without-replacement{foo=1}", "unknown option 'foo'"),
    ("instance_sampling", "without-replacement{sample_size=abc}", "float"),
    ("rule_induction", "top-down-greedy{min_coverage=0}", "min_coverage"),
    ("shrinkage", 0.0, "shrinkage"),
    ("max_rules", -1, "max_rules"),
    ("parallel_rule_refinement", "sometimes", "supported values"),
    ("device", "gpu", "device"),
])
def test_bad_parameters(data, param, value, match):
    X, Y = data
    with pytest.raises(ValueError, match=match):
        BoomerClassifier(**{param: value}).fit(X, Y)


def test_cuda_without_gpu_raises_runtime_error(data):
    X, Y = data
    pytest.importorskip("numba")
    from gpurules.backends.factory import cuda_status
    if cuda_status()[0]:
        pytest.skip("a GPU is usable here")
    with pytest.raises(RuntimeError, match="cannot be used"):
        BoomerClassifier(device="cuda").fit(X, Y)


@pytest.mark.parametrize("bad, match", [
    ("nan", "NaN"), ("inf", "infinity"), ("two", "binary"), ("rows", "different numbers"),
])
def test_bad_labels(data, bad, match):
    X, Y = data
    Y = Y.astype(np.float64)
    if bad == "nan":
        Y[3, 1] = np.nan
    elif bad == "inf":
        Y[3, 1] = np.inf
    elif bad == "two":
        Y[3, 1] = 2
    else:
        Y = Y[:-1]
    with pytest.raises(ValueError, match=match):
        BoomerClassifier(device="cpu").fit(X, Y)


def test_bad_features(data):
    X, Y = data
    with pytest.raises(ValueError, match="0 sample"):
        BoomerClassifier(device="cpu").fit(X[:0], Y[:0])
    with pytest.raises(ValueError, match="infinity"):
        BoomerClassifier(device="cpu").fit(np.full_like(X, np.inf), Y)
    with pytest.raises(ValueError, match="nominal_feature_indices"):
        BoomerClassifier(device="cpu").fit(X, Y, nominal_feature_indices=[99])
    clf = fit(X, Y)
    with pytest.raises(ValueError, match="expecting 8 features"):
        clf.predict(X[:, :3])


def test_pandas_categorical_columns_become_nominal():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    color = rng.choice(["red", "green", "blue"], size=120)
    y = (color == "green").astype(np.uint8)
    df = pd.DataFrame({"color": pd.Categorical(color), "noise": rng.random(120)})
    clf = BoomerClassifier(device="cpu", max_rules=5, feature_sampling="none").fit(df, y)
    assert "color == 'green'" in str(clf.model_) or "color != 'green'" in str(clf.model_)
    assert (clf.predict(df) == y).mean() == 1.0


def sparse_problem(seed=0):
    rng = np.random.default_rng(seed)
    n, A = 200, 12
    X = np.round(rng.normal(size=(n, A)), 1).astype(np.float32)
    X[rng.random((n, A)) < 0.7] = 0
    X[:, :3] = rng.integers(0, 3, size=(n, 3))  # nominal codes, 0 the most frequent
    X[rng.random((n, A)) < 0.05] = np.nan
    Y = (((X[:, 3] > 0) ^ (X[:, 0] == 2))[:, None] | (rng.random((n, 3)) < 0.1)).astype(np.uint8)
    return X, Y


@pytest.mark.parametrize("head_type", ["complete", "single"])
def test_dense_and_sparse_representations_give_the_same_model(head_type):
    X, Y = sparse_problem()
    models = [
        BoomerClassifier(device="cpu", max_rules=40, feature_format=fmt, head_type=head_type)
        .fit(Xin, Y, nominal_feature_indices=[0, 1, 2]).model_
        for fmt, Xin in [("dense", X), ("sparse", X), ("sparse", sp.csr_matrix(
            np.nan_to_num(X, nan=0.0))), ("dense", np.nan_to_num(X, nan=0.0))]
    ]
    assert_same_model(models[0], models[1])
    assert_same_model(models[2], models[3])


def test_feature_format_auto_picks_sparse_for_sparse_data():
    X, Y = sparse_problem()
    Xs = sp.csr_matrix(np.nan_to_num(X))
    Xs.data[:] = 1.0
    Xs = sp.csr_matrix(Xs.toarray() * (np.random.default_rng(0).random(X.shape) < 0.2))
    assert BoomerClassifier(device="cpu", max_rules=2).fit(Xs, Y).feature_format_ == "sparse"
    assert BoomerClassifier(device="cpu", max_rules=2).fit(
        np.random.default_rng(0).random((50, 3)), Y[:50]).feature_format_ == "dense"


def test_sparse_feature_value():
    X, Y = sparse_problem()
    shifted = np.where(X == 0, 5.0, X).astype(np.float32)
    a = BoomerClassifier(device="cpu", max_rules=20, feature_format="dense").fit(shifted, Y)
    b = BoomerClassifier(device="cpu", max_rules=20, feature_format="sparse").fit(
        shifted, Y, sparse_feature_value=5.0)
    assert_same_model(a.model_, b.model_)
    for bad, error in (("a", TypeError), (np.nan, ValueError)):
        with pytest.raises(error, match="sparse_feature_value must be"):
            BoomerClassifier(device="cpu", max_rules=2).fit(X, Y, sparse_feature_value=bad)


def test_nominal_and_missing_rules_read_eq_and_neq():
    rng = np.random.default_rng(1)
    n = 300
    color = rng.integers(0, 4, size=n).astype(np.float32)
    size = rng.normal(size=n).astype(np.float32)
    color[rng.random(n) < 0.1] = np.nan
    y = ((color == 2) | ((color == 3) & (size > 0))).astype(np.uint8)
    X = np.column_stack([color, size])
    clf = BoomerClassifier(device="cpu", max_rules=60, feature_sampling="none").fit(
        X, y, nominal_feature_indices=[0])
    text = str(clf.model_)
    assert "x0 == " in text or "x0 != " in text
    assert "x0 <=" not in text and "x0 >" not in text
    # missing values never satisfy a condition, also at prediction
    assert (clf.predict(X) == y).mean() > 0.95


@pytest.mark.parametrize("binning", ["equal-width", "equal-frequency{bin_ratio=0.5}"])
def test_feature_binning(data, binning):
    X, Y = data
    a = fit(X, Y, feature_binning=binning)
    b = fit(X, Y, feature_binning=binning, parallel_rule_refinement="true")
    assert a.feature_binning_ == binning.split("{")[0]
    assert_same_model(a.model_, b.model_)
    majority = (Y.mean(0) > 0.5).astype(np.uint8)
    assert (a.predict(X) != Y).mean() < (majority != Y).mean()


@pytest.mark.parametrize("representation", ["dense", "sparse", "binned"])
def test_training_coverage_agrees_with_the_model(representation):
    """The scores the learner accumulated for the training examples are the model's
    predictions for them: every applied condition covers exactly what the stored rule
    covers — also examples of weight 0 under instance sampling, and missing values."""
    from gpurules.backends.cpu import CpuBackend
    from gpurules.data.binning import bin_features
    from gpurules.data.presorted import presort_dense
    from gpurules.data.sparse import presort_sparse
    from gpurules.estimators.boomer_params import resolve_config
    from gpurules.learners.boosting import BoostingLearner

    X, Y = sparse_problem(3)
    nominal = np.zeros(X.shape[1], bool)
    nominal[:3] = True
    features = {"dense": lambda: presort_dense(X, nominal),
                "sparse": lambda: presort_sparse(X, nominal),
                "binned": lambda: bin_features(X, nominal, "equal-width", bin_ratio=0.3)}
    est = BoomerClassifier(max_rules=25,
                           instance_sampling="without-replacement{sample_size=0.4}")
    config, _ = resolve_config(est)
    backend = CpuBackend()
    model = BoostingLearner(config, backend, np.random.default_rng(0)).fit(
        features[representation](), Y, np.ones(len(X))).build()
    np.testing.assert_allclose(model.predict_scores(X), backend.training_scores(), rtol=0,
                               atol=1e-12)


def test_feature_binning_validation(data):
    X, Y = data
    with pytest.raises(ValueError, match="bin_ratio"):
        fit(X, Y, feature_binning="equal-width{bin_ratio=0}")


def constant_nominal_data(seed=0, n=300):
    """Many constant nominal columns (0, or 2), a few nearly constant ones, four informative
    ones and a numerical one; every column but the last nominal. Labels: ORs of two
    informative columns, with noise."""
    rng = np.random.default_rng(seed)
    constant = np.tile(np.array([0.0, 2.0] * 15), (n, 1))
    rare = np.zeros((n, 10))
    rare[rng.integers(0, n, 10), np.arange(10)] = 1.0
    informative = (rng.random((n, 4)) < 0.3).astype(float)
    X = np.hstack([constant, rare, informative, rng.normal(size=(n, 1))])
    order = np.concatenate([rng.permutation(X.shape[1] - 1), [X.shape[1] - 1]])
    X = X[:, order].astype(np.float32)
    Y = np.stack([(informative[:, k] + informative[:, (k + 1) % 4] > 0) ^
                  (rng.random(n) < 0.05) for k in range(4)], 1).astype(np.uint8)
    return X, Y, list(range(X.shape[1] - 1))


def covered_by_each_condition(model, X):
    """[(rule, position, examples covered before, after)] of every condition of a RuleModel
    (missing values satisfy no condition)."""
    out = []
    for r in range(model.num_rules):
        covered = np.ones(X.shape[0], bool)
        lo, hi = model.rule_cond_start[r], model.rule_cond_start[r + 1]
        for c in range(lo, hi):
            x, t = X[:, model.cond_feature[c]], model.cond_threshold[c]
            with np.errstate(invalid="ignore"):
                sat = [x <= t, x > t, x == t, x != t][model.cond_op[c]] & ~np.isnan(x)
            out.append((r, c - lo, int(covered.sum()), int((covered & sat).sum())))
            covered &= sat
    return out


@pytest.mark.parametrize("params", [{}, {"feature_binning": "equal-width"}])
def test_constant_nominal_columns_give_no_condition_that_changes_nothing(params):
    """Every condition excludes an example (unit weights: as the searches count them), and
    the fit does not stop where a first step draws constant columns only: the features are
    drawn anew (``rule_induction.first_condition_redraws``); the same model for the seed."""
    X, Y, nominal = constant_nominal_data()
    fits = [BoomerClassifier(max_rules=30, device="cpu", random_state=3, **params).fit(
        X, Y, nominal_feature_indices=nominal) for _ in range(2)]
    model = fits[0].model_
    assert model.num_rules == 29  # max_rules counts the default rule
    steps = covered_by_each_condition(model, X)
    assert steps and all(after < before for _, _, before, after in steps), \
        [s for s in steps if s[3] == s[2]]
    assert_same_model(fits[0].model_, fits[1].model_)
