"""Where mlrl-boomer 0.15.6 is wrong and gpurules is not (docs/user-guide.md, "Differences
from mlrl-boomer"): pinned on hand-made data whose optimum is known."""

import numpy as np
import pytest

from gpurules import BoomerClassifier

# one feature; y = 0 only for the smallest value. The best single condition isolates it.
VALUES = np.array([1, 3, 36, 150, 600, 1200, 2500, 4000, 7000, 9363], np.float32)
ONE_RULE = dict(max_rules=2, rule_induction="top-down-greedy{max_conditions=1}",
                feature_sampling="none", instance_sampling="none", head_type="single",
                feature_binning="none", device="cpu")


def fit_one_rule(x, feature_format):
    X = np.column_stack([x, np.zeros_like(x)])  # (mlrl-boomer needs a second feature)
    y = (x != x.min()).astype(np.uint8)[:, None]
    return BoomerClassifier(feature_format=feature_format, **ONE_RULE).fit(X, y), X


@pytest.mark.parametrize("feature_format", ["dense", "sparse"])
def test_split_isolating_the_smallest_value_is_found(feature_format):
    """mlrl-boomer never evaluates this split: it learns ``x0 > 19.5`` (score 0.2353)."""
    clf, X = fit_one_rule(VALUES, feature_format)
    rule = str(clf.model_).splitlines()[1]
    assert rule.endswith("<- x0 > 2"), rule
    scores = clf.decision_function(X)
    np.testing.assert_allclose(scores[1:] - scores[0], 0.2464, atol=1e-4)


@pytest.mark.parametrize("feature_format", ["dense", "sparse"])
def test_negative_smallest_value_gets_the_midpoint_of_its_neighbours(feature_format):
    """mlrl-boomer finds this split (same score) but stores ``x0 > 72.5``, the midpoint of
    -5 and 150, so at prediction the rule no longer covers 36."""
    x = np.concatenate([[-5], VALUES[2:]]).astype(np.float32)
    clf, X = fit_one_rule(x, feature_format)
    rule = str(clf.model_).splitlines()[1]
    assert rule.endswith("<- x0 > 15.5"), rule
    scores = clf.decision_function(X)
    np.testing.assert_allclose(scores[1:] - scores[0], 0.2424, atol=1e-4)


def test_default_rule_uses_the_label_bins_as_mlrl_boomer():
    """mlrl-boomer 0.15.6 on emotions-train with ``loss="logistic-non-decomposable"``
    (equal-width label binning): the default rule predicts -0.4521 for all 6 labels."""
    from benchmarks._common import load_split

    split = load_split("/work/shared/datasets", "emotions")
    clf = BoomerClassifier(loss="logistic-non-decomposable", max_rules=1, device="cpu")
    clf.fit(split.X_train, split.Y_train)
    np.testing.assert_allclose(clf.model_.default_scores, -0.4521, atol=5e-5)
    unbinned = BoomerClassifier(loss="logistic-non-decomposable", label_binning="none",
                                max_rules=1, device="cpu").fit(split.X_train, split.Y_train)
    assert np.ptp(unbinned.model_.default_scores) > 0.4  # one score per label


@pytest.mark.parametrize("feature_binning", ["none", "equal-width",
                                             "equal-width{max_bins=255}"])
def test_binned_search_keeps_the_zero_bin_after_a_condition_on_another_feature(
        feature_binning):
    """y = (x0 > 5) and (x1 == 0), x1 mostly 0 (its smallest value). mlrl-boomer 0.15.6's
    equal-width search learns ``x0 > 1.034 & x1 > 0.019`` with a positive score for y
    (training accuracy 0.26): once a rule has a condition on x0, its filtered bins of x1
    count the zero bin (kept implicitly, as the bin of the sparse value 0) with the highest
    bin. Ours covers what the exact search covers (accuracy 1.0)."""
    rng = np.random.default_rng(0)
    x0 = rng.integers(1, 11, 4000).astype(np.float32)
    x1 = rng.choice(np.array([0, 0, 0, 1, 2, 3, 4, 5], np.float32), 4000)
    X = np.column_stack([x0, x1])
    y = ((x0 > 5) & (x1 == 0)).astype(np.uint8)
    clf = BoomerClassifier(feature_binning=feature_binning, max_rules=3, head_type="single",
                           feature_sampling="none", instance_sampling="none", shrinkage=1.0,
                           device="cpu").fit(X, np.column_stack([y, 1 - y]))
    assert str(clf.model_).splitlines()[2].endswith("<- x0 > 5.5 & x1 <= 0.5")
    np.testing.assert_array_equal(clf.predict(X)[:, 0], y)
