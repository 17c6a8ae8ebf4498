"""Holdout sets of BOOMER (``holdout``): sizes, strata, determinism, no influence on rules."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_multilabel_classification

from gpurules import BoomerClassifier
from gpurules.estimators.boomer_params import resolve_holdout, resolve_pruning
from gpurules.learners.holdout import (Holdout, example_wise_strata, holdout_count,
                                       output_wise_strata)
from tests.reference import holdout_reference as ref


@pytest.fixture(scope="module")
def data():
    X, Y = make_multilabel_classification(n_samples=160, n_features=8, n_classes=5,
                                          random_state=3)
    return X.astype(np.float32), Y.astype(np.uint8)


def split(kind, Y, seed=1, size=0.33):
    return Holdout(kind, size).split(np.random.default_rng(seed), Y)


@pytest.mark.parametrize("n, size, expected", [(391, 0.33, 129), (100, 0.5, 50), (7, 0.1, 0),
                                               (1211, 0.33, 399)])
def test_holdout_count_is_floor_of_float32_size(n, size, expected):
    assert holdout_count(n, size) == expected


def test_an_empty_holdout_set_raises():
    Y = np.zeros((7, 2), np.uint8)
    with pytest.raises(ValueError, match="holds out no example of 7"):
        split("random", Y, size=0.1)


def test_strata_match_the_reference(data):
    _, Y = data
    Y = Y.copy()
    Y[:7] = 0  # some examples without a relevant label
    assert [list(s) for s in output_wise_strata(Y)] == ref.output_wise_strata(Y)
    assert [list(s) for s in example_wise_strata(Y)] == ref.example_wise_strata(Y)


@pytest.mark.parametrize("kind", ["random", "stratified-output-wise",
                                  "stratified-example-wise"])
@pytest.mark.parametrize("size", [0.33, 0.5, 0.1])
def test_split_size_and_determinism(data, kind, size):
    _, Y = data
    holdout = split(kind, Y, size=size)
    assert holdout.dtype == bool and holdout.shape == (Y.shape[0],)
    assert holdout.sum() == holdout_count(Y.shape[0], size)
    np.testing.assert_array_equal(holdout, split(kind, Y, size=size))
    assert not np.array_equal(holdout, split(kind, Y, seed=2, size=size))


@pytest.mark.parametrize("kind, strata", [("stratified-output-wise", output_wise_strata),
                                          ("stratified-example-wise", example_wise_strata)])
@pytest.mark.parametrize("size", [0.33, 0.5])
def test_each_stratum_is_split_as_mlrl_boomer_does(data, kind, strata, size):
    """Stratum by stratum, m * T / (T + H) training examples (T, H: still to assign),
    rounded towards the larger side (either way when T == H), clipped to T and H."""
    _, Y = data
    holdout = split(kind, Y, size=size)
    num_hold = holdout_count(Y.shape[0], size)
    num_train = Y.shape[0] - num_hold
    for stratum in strata(Y):
        m = len(stratum)
        decimal = float(np.float32(num_train) / np.float32(num_train + num_hold) * np.float32(m))
        options = {int(np.ceil(decimal)), int(np.floor(decimal))} if num_train == num_hold \
            else {int(np.ceil(decimal) if num_train > num_hold else np.floor(decimal))}
        options = {min(max(t, m - num_hold), num_train) for t in options}
        taken = m - int(holdout[stratum].sum())
        assert taken in options
        num_train -= taken
        num_hold -= m - taken
    assert num_train == num_hold == 0


def test_output_wise_stratification_balances_every_label(data):
    _, Y = data
    holdout = split("stratified-output-wise", Y)
    share = Y[holdout].sum(0) / Y.sum(0)
    assert np.all(np.abs(share - 0.33) < 0.05), share


def test_auto_holdout_follows_global_pruning():
    def holdout_of(**kw):
        est = BoomerClassifier(**kw)
        return resolve_holdout(est, resolve_pruning(est))

    assert holdout_of() == Holdout()
    assert holdout_of(global_pruning="pre-pruning") == Holdout("stratified-output-wise", 0.33)
    assert holdout_of(global_pruning="post-pruning{use_holdout_set=false}") == Holdout()
    assert holdout_of(holdout="none", global_pruning="post-pruning") == Holdout()
    assert holdout_of(holdout="random{holdout_set_size=0.2}") == Holdout("random", 0.2)


@pytest.mark.parametrize("value, message", [
    ("bootstrap", "supported values: 'auto', 'none', 'random'"),
    ("random{holdout_set_size=0}", "must be > 0"),
    ("random{holdout_set_size=1.0}", "must be < 1"),
    ("random{size=0.5}", "unknown option 'size'"),
])
def test_bad_holdout_values_raise(data, value, message):
    X, Y = data
    with pytest.raises(ValueError, match=message):
        BoomerClassifier(holdout=value, device="cpu").fit(X, Y)


def fit_rules(X, Y, **kw):
    clf = BoomerClassifier(device="cpu", random_state=5, max_rules=15, **kw).fit(X, Y)
    m = clf.model_
    return [m.default_scores, m.cond_feature, m.cond_op, m.cond_threshold, m.head_label,
            m.head_score]


@pytest.mark.parametrize("features", [
    {}, {"feature_format": "sparse"}, {"feature_binning": "equal-width"},
    {"feature_binning": "equal-frequency", "instance_sampling": "without-replacement"},
    {"loss": "logistic-non-decomposable"}])
def test_holdout_labels_do_not_influence_the_rules(data, features):
    """Rules learned with a random holdout set stay the same when the held-out examples'
    labels change (the split of ``random`` does not depend on the labels)."""
    X, Y = data
    if features.get("feature_format") == "sparse":
        X = sp.csr_matrix(np.where(X > 2, X, 0))
    params = dict(holdout="random{holdout_set_size=0.4}", **features)
    holdout = split("random", Y, seed=5, size=0.4)  # the fit's first draw from its seed
    flipped = Y.copy()
    flipped[holdout] = 1 - flipped[holdout]
    for a, b in zip(fit_rules(X, Y, **params), fit_rules(X, flipped, **params)):
        np.testing.assert_array_equal(a, b)
    changed = Y.copy()
    changed[~holdout] = 1 - changed[~holdout]
    assert not all(np.array_equal(a, b) for a, b in zip(fit_rules(X, Y, **params),
                                                          fit_rules(X, changed, **params)))


def test_holdout_changes_the_model(data):
    X, Y = data
    with_holdout = fit_rules(X, Y, holdout="random")
    assert not all(np.array_equal(a, b) for a, b in zip(with_holdout, fit_rules(X, Y)))
