"""Global pruning of BOOMER (``global_pruning``) against a hand-computed NumPy reference.

The reference recomputes the loss of every prefix of the rules of an unpruned fit (same
seed, same holdout set: pruning draws nothing from the random stream, so the rules are the
same) from the model's own conditions and heads, then runs mlrl-boomer's stopping rules
written out plainly, and checks the pruned fit kept exactly that prefix.
"""

import numpy as np
import pytest
from sklearn.datasets import make_multilabel_classification

from gpurules import BoomerClassifier, load_estimator
from gpurules.conditions import satisfies
from gpurules.learners.holdout import Holdout


@pytest.fixture(scope="module")
def data():
    X, Y = make_multilabel_classification(n_samples=180, n_features=6, n_classes=4,
                                          random_state=7)
    return X.astype(np.float32), Y.astype(np.uint8)


def coverage(model, X):
    """bool (R, n): which examples each rule covers (plain loops over the conditions)."""
    out = np.ones((model.num_rules, X.shape[0]), bool)
    for r in range(model.num_rules):
        for c in range(model.rule_cond_start[r], model.rule_cond_start[r + 1]):
            f, op, t = model.cond_feature[c], model.cond_op[c], model.cond_threshold[c]
            out[r] &= np.array([satisfies(op, x, t) for x in X[:, f]])
    return out


def reference_loss(loss, Y, P):
    """Mean loss of scores P (m, K) for labels Y, as mlrl-boomer evaluates it."""
    s = np.where(Y == 1, 1.0, -1.0)
    if loss == "logistic-decomposable":
        return np.mean([np.mean([np.log1p(np.exp(-a * b)) for a, b in zip(sy, p)])
                        for sy, p in zip(s, P)])
    if loss == "logistic-non-decomposable":
        return np.mean([np.log(1 + np.sum(np.exp(-sy * p))) for sy, p in zip(s, P)])
    assert loss == "squared-error-decomposable"
    return np.mean((s - P) ** 2)


def prefix_losses(model, X, Y, loss):
    """{r: mean loss of the first r rules (default rule counted)} over (X, Y)."""
    P = np.tile(model.default_scores, (X.shape[0], 1))
    covered = coverage(model, X)
    losses = {1: reference_loss(loss, Y, P)}
    for r in range(model.num_rules):
        a, b = model.rule_head_start[r], model.rule_head_start[r + 1]
        P[np.ix_(covered[r], model.head_label[a:b])] += model.head_score[a:b]
        losses[r + 2] = reference_loss(loss, Y, P)
    return losses


def reference_pre_pruning(losses, min_rules, past, recent, min_improvement, aggregate):
    """(stopped at r, best r) by mlrl-boomer's PrePruning.test, or None if it never stops."""
    offset = max(min_rules - (past + recent), 0)
    history, best = [], None
    for r in sorted(losses):
        if r <= offset:
            continue
        if len(history) >= past + recent:
            if best is None or losses[r] < losses[best]:
                best = r
            window = history[-(past + recent):]
            p, q = aggregate(window[:past]), aggregate(window[past:])
            if (p - q) / q < min_improvement:
                return r, best
        history.append(losses[r])
    return None


def reference_post_pruning(losses, min_rules):
    candidates = [r for r in sorted(losses) if r >= min_rules]
    return min(candidates, key=lambda r: (losses[r], r))


def fit(X, Y, **kw):
    kw.setdefault("random_state", 3)
    return BoomerClassifier(device="cpu", **kw).fit(X, Y)


def measured(X, Y, holdout_value, seed=3):
    """The examples a holdout ``holdout_value`` holds out (the fit's first draw)."""
    kind, size = holdout_value.split("{")[0], 0.33
    return Holdout(kind, size).split(np.random.default_rng(seed), Y)


def assert_prefix(pruned, full, num_rules):
    assert len(pruned) == num_rules
    for name in ("cond_feature", "cond_threshold", "head_label", "head_score"):
        cut = {"cond": full.rule_cond_start, "head": full.rule_head_start}[name[:4]]
        np.testing.assert_array_equal(getattr(pruned, name),
                                      getattr(full, name)[:cut[num_rules - 1]])
    np.testing.assert_array_equal(pruned.default_scores, full.default_scores)


CASES = [
    ({}, "logistic-decomposable"),
    ({"feature_binning": "equal-width"}, "logistic-decomposable"),
    ({"loss": "logistic-non-decomposable"}, "logistic-non-decomposable"),
    ({"loss": "squared-error-decomposable", "head_type": "complete"},
     "squared-error-decomposable"),
]


@pytest.mark.parametrize("params, loss", CASES)
@pytest.mark.parametrize("aggregation, aggregate", [("avg", np.mean), ("min", min),
                                                    ("max", max)])
def test_pre_pruning_stops_where_the_reference_does(data, params, loss, aggregation,
                                                    aggregate):
    X, Y = data
    options = dict(min_rules=8, num_past=4, num_recent=3, min_improvement=0.02)
    value = "pre-pruning{" + ",".join(f"{k}={v}" for k, v in options.items()) + \
        f",aggregation={aggregation}}}"
    holdout = "stratified-output-wise"
    full = fit(X, Y, holdout=holdout, max_rules=120, **params).model_
    held = measured(X, Y, holdout)
    losses = prefix_losses(full, X[held], Y[held], loss)
    expected = reference_pre_pruning(losses, options["min_rules"], options["num_past"],
                                      options["num_recent"], options["min_improvement"],
                                      aggregate)
    assert expected is not None, "choose options under which the fit stops"
    pruned = fit(X, Y, global_pruning=value, max_rules=120, **params).model_
    assert_prefix(pruned, full, expected[1])


@pytest.mark.parametrize("params, loss", CASES[:3])
def test_post_pruning_keeps_the_best_prefix(data, params, loss):
    X, Y = data
    params = dict(params, shrinkage=1.0, max_rules=60)  # overfits within 60 rules
    full = fit(X, Y, holdout="stratified-output-wise", **params).model_
    held = measured(X, Y, "stratified-output-wise")
    best = reference_post_pruning(prefix_losses(full, X[held], Y[held], loss), 5)
    assert best < 60, "the test needs a fit whose best prefix is shorter"
    pruned = fit(X, Y, global_pruning="post-pruning{min_rules=5}", **params).model_
    assert_prefix(pruned, full, best)


def test_use_holdout_set_false_measures_the_training_loss(data):
    """Without a holdout set (``auto`` then uses none), every example is measured."""
    X, Y = data
    full = fit(X, Y, max_rules=40).model_
    losses = prefix_losses(full, X, Y, "logistic-decomposable")
    pruned = fit(X, Y, max_rules=40, global_pruning="post-pruning{use_holdout_set=false,"
                                                    "min_rules=3,interval=4}").model_
    # the training loss falls with every rule: the last measured prefix is the best
    best = reference_post_pruning({r: v for r, v in losses.items() if r % 4 == 0}, 3)
    assert best == 40 and len(pruned) == 40


def test_post_pruning_interval_and_min_rules(data):
    X, Y = data
    full = fit(X, Y, holdout="stratified-output-wise", max_rules=50, shrinkage=1.0).model_
    held = measured(X, Y, "stratified-output-wise")
    losses = prefix_losses(full, X[held], Y[held], "logistic-decomposable")
    best = reference_post_pruning({r: v for r, v in losses.items() if r % 3 == 0}, 10)
    assert best < 48
    pruned = fit(X, Y, max_rules=50, shrinkage=1.0,
                 global_pruning="post-pruning{min_rules=10,interval=3}").model_
    assert_prefix(pruned, full, best)


def test_pruned_model_round_trips(data, tmp_path):
    X, Y = data
    clf = fit(X, Y, global_pruning="pre-pruning{min_rules=8,num_past=4,num_recent=3,"
                                   "min_improvement=0.02}", max_rules=120)
    path = tmp_path / "pruned.json"
    clf.save(path)
    loaded = load_estimator(path)
    assert len(loaded.model_) == len(clf.model_) < 120
    np.testing.assert_array_equal(loaded.decision_function(X), clf.decision_function(X))


@pytest.mark.parametrize("value, message", [
    ("pre-pruning{remove_unused_rules=false}", "remove_unused_rules=false is not supported"),
    ("post-pruning{remove_unused_rules=false}", "remove_unused_rules=false is not supported"),
    ("pre-pruning{aggregation=median}", "supported values: 'min', 'max', 'avg'"),
    ("pre-pruning{update_interval=2,stop_interval=3}", "multiple of update_interval"),
    ("pre-pruning{min_improvement=1.5}", "must be <= 1"),
    ("pre-pruning{num_recent=0}", "must be >= 1"),
    ("post-pruning{interval=0}", "must be >= 1"),
    ("pre-pruning{num_current=5}", "unknown option 'num_current'"),
    ("early-stopping", "supported values: 'none', 'pre-pruning', 'post-pruning'"),
])
def test_bad_global_pruning_values_raise(data, value, message):
    X, Y = data
    with pytest.raises(ValueError, match=message):
        fit(X, Y, global_pruning=value)


@pytest.mark.parametrize("value", ["32-bit", "64-bit", "float32", "float64"])
def test_statistic_type_accepts_mlrl_boomer_names(data, value):
    X, Y = data
    assert len(fit(X, Y, statistic_type=value, max_rules=5).model_) == 5


def test_pre_pruning_never_stops_on_a_zero_loss():
    """A recent loss of 0 (squared hinge, separable data): mlrl-boomer's ratio is inf or
    NaN, never below min_improvement, so the fit goes on."""
    from gpurules.learners.pruning import PrePruning

    criterion = PrePruning(min_rules=1, num_past=1, num_recent=1).criterion()
    results = [criterion.test(r, lambda: 0.0) for r in range(1, 6)]
    assert not any(result.stop for result in results)
