"""``statistic_format`` and the ``auto`` rules that depend on it (mlrl-boomer 0.15.6).

mlrl-boomer's sparse statistics change no sum (the squared hinge's missing entries are its
dense values); what changes its models is that the format decides whether there is a default
rule and what ``head_type='auto'`` means. The expected rules here are mlrl-boomer 0.15.6's,
taken by running it (same data, same parameters, one thread), and worked by hand for the
first example.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from gpurules import BoomerClassifier, BoomerRegressor
from gpurules.estimators.boomer_params import resolve_config
from gpurules.estimators.validation import TargetLayout, label_matrix_is_sparse
from gpurules.objectives import predictors
from gpurules.objectives.heads import HEAD_COMPLETE, HEAD_SINGLE
from gpurules.objectives.multi_output import HEAD_MULTI_OUTPUT

X4 = np.array([[0, 0], [1, 0], [2, 0], [3, 0]], np.float32)
Y4 = np.array([[1, 0], [1, 0], [1, 1], [0, 1]], np.uint8)
HINGE = "squared-hinge-decomposable"
PLAIN = dict(max_rules=3, feature_sampling="none", instance_sampling="none",
             feature_binning="none", device="cpu")


def _rules(clf):
    """[("default", head) and (number of conditions, head) per rule] of a fitted model;
    a head is {label: score rounded to 6 digits} (the default rule's non-zero ones)."""
    out = []
    m = clf.model_
    if m.has_default_rule:
        out.append(("default", {k: round(float(v), 6) for k, v in enumerate(m.default_scores)
                                if v != 0}))
    for r in range(m.num_rules):
        heads = slice(m.rule_head_start[r], m.rule_head_start[r + 1])
        out.append((int(m.rule_cond_start[r + 1] - m.rule_cond_start[r]),
                    {int(k): round(float(v), 6)
                     for k, v in zip(m.head_label[heads], m.head_score[heads])}))
    return out


def _head_sizes(clf):
    """The number of labels of each rule's head (the default rule's left out)."""
    return [len(head) for kind, head in _rules(clf) if kind != "default"]


def test_sparse_format_hand_worked_example():
    """The squared hinge with dense statistics: a complete default rule and complete heads
    (6 positives); with sparse ones: no default rule and single-label heads, whose scores
    (0.3 * 3/4, 0.3 * 2.325/4, 0.3 * 2/3) stay below the 0.5 threshold: no positive."""
    dense = BoomerClassifier(loss=HINGE, statistic_format="dense", **PLAIN).fit(X4, Y4)
    sparse = BoomerClassifier(loss=HINGE, statistic_format="sparse", **PLAIN).fit(X4, Y4)
    assert int(dense.predict(X4).sum()) == 6
    assert int(sparse.predict(X4).sum()) == 0
    assert _rules(dense)[0] == ("default", {0: 0.6, 1: 0.4})
    assert [len(r[1]) for r in _rules(dense)[1:]] == [2, 2]
    assert not sparse.model_.has_default_rule
    assert [r[1] for r in _rules(sparse)] == [{0: 0.225}, {0: 0.174375}, {1: 0.2}]


@pytest.mark.parametrize("head_type, expected", [
    ("single", {0: 0.6}),
    ("partial-fixed", {0: 0.6, 1: 0.4}),
    ("partial-dynamic", {0: 0.6}),
    ("complete", {0: 0.6, 1: 0.4}),
])
def test_forced_default_rule_has_the_heads_type(head_type, expected):
    """``default_rule='true'`` with sparse statistics: the default rule's head is of the
    rules' type (mlrl-boomer: ``{} -> partial idx=[0] [0.6]`` for single and
    partial-dynamic heads, idx=[0, 1] for partial-fixed)."""
    clf = BoomerClassifier(loss=HINGE, statistic_format="sparse", default_rule="true",
                           head_type=head_type, **PLAIN).fit(X4, Y4)
    assert _rules(clf)[0] == ("default", expected)


@pytest.mark.parametrize("head_type", ["single", "complete", "partial-fixed",
                                       "partial-dynamic"])
@pytest.mark.parametrize("loss", [HINGE, "logistic-non-decomposable"])
def test_sparse_equals_dense_without_default_rule(head_type, loss):
    """Beyond the default rule and ``auto`` heads the format changes nothing: sparse with a
    head type equals dense with it and ``default_rule='false'`` (as in mlrl-boomer)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 4)).astype(np.float32)
    Y = (rng.random((60, 3)) < 0.35).astype(np.uint8)
    kw = dict(loss=loss, head_type=head_type, max_rules=6, device="cpu")
    a = BoomerClassifier(statistic_format="sparse", **kw).fit(X, Y)
    b = BoomerClassifier(statistic_format="dense", default_rule="false", **kw).fit(X, Y)
    assert str(a.model_) == str(b.model_)
    assert not a.model_.has_default_rule


def test_auto_heads_are_complete_with_dense_statistics():
    """mlrl-boomer 0.15.6 grows complete heads for every decomposable loss under its
    defaults (the squared error and squared hinge included) and keeps the default rule."""
    for loss in ("logistic-decomposable", "squared-error-decomposable", HINGE):
        config, _ = resolve_config(BoomerClassifier(loss=loss), TargetLayout(False, 5))
        assert config.head_mode == HEAD_COMPLETE and config.default_rule, loss
    config, _ = resolve_config(BoomerClassifier(loss=HINGE, statistic_format="sparse"),
                               TargetLayout(False, 5))
    assert config.head_mode == HEAD_SINGLE and not config.default_rule
    # one label: the automatic head is complete even with sparse statistics
    config, _ = resolve_config(BoomerClassifier(loss=HINGE, statistic_format="sparse"),
                               TargetLayout(False, 1))
    assert config.head_mode == HEAD_COMPLETE and not config.default_rule


def _wide_sparse_labels(n=40, k=130, seed=0):
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, k)) < 0.05).astype(np.uint8)
    Y[np.arange(n), rng.integers(0, k, n)] = 1
    return Y


def test_auto_format_follows_the_label_matrix():
    """``statistic_format='auto'``: sparse statistics (no default rule, single-label
    heads) only for the squared hinge on a sparse ``y`` of more than 120 labels; a dense
    ``y``, 120 labels or a forced default rule keep the dense rules."""
    Y = _wide_sparse_labels()
    rng = np.random.default_rng(1)
    X = rng.normal(size=(Y.shape[0], 3)).astype(np.float32)
    kw = dict(loss=HINGE, max_rules=3, device="cpu")
    wide = BoomerClassifier(**kw).fit(X, sp.csr_matrix(Y))
    assert not wide.model_.has_default_rule
    assert set(_head_sizes(wide)) == {1}
    assert BoomerClassifier(**kw).fit(X, Y).model_.has_default_rule  # dense y
    assert BoomerClassifier(output_format="dense", **kw).fit(
        X, sp.csr_matrix(Y)).model_.has_default_rule
    assert BoomerClassifier(default_rule="true", **kw).fit(
        X, sp.csr_matrix(Y)).model_.has_default_rule
    narrow = sp.csr_matrix(Y[:, :120])
    assert BoomerClassifier(**kw).fit(X, narrow).model_.has_default_rule
    # a non-decomposable loss with partial heads loses the default rule, its heads stay
    nd = BoomerClassifier(loss="logistic-non-decomposable", head_type="partial-dynamic",
                          max_rules=2, device="cpu").fit(X, sp.csr_matrix(Y))
    assert not nd.model_.has_default_rule


def test_regressor_non_decomposable_loss_has_no_default_rule_with_sparse_format():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 3)).astype(np.float32)
    y = rng.normal(size=(50, 2))
    kw = dict(max_rules=3, device="cpu")
    for loss, expected in (("squared-error-non-decomposable", False),
                           ("squared-error-decomposable", True)):
        reg = BoomerRegressor(loss=loss, statistic_format="sparse", **kw).fit(X, y)
        assert reg.model_.has_default_rule is expected, loss
        assert BoomerRegressor(loss=loss, **kw).fit(X, y).model_.has_default_rule


@pytest.mark.parametrize("fmt, default_rule, loss, head, sparse_labels, k, expected", [
    # (default rule used, sparse statistics), mlrl-boomer's statistic_format.hpp,
    # default_rule_auto.cpp, head_type_auto.cpp
    ("dense", "auto", HINGE, "auto", True, 200, (True, False)),
    ("sparse", "auto", HINGE, "auto", False, 2, (False, True)),
    ("sparse", "auto", HINGE, "complete", False, 2, (False, False)),
    ("sparse", "true", HINGE, "single", False, 2, (True, True)),
    ("sparse", "auto", "logistic-decomposable", "auto", False, 2, (True, False)),
    ("sparse", "auto", "squared-hinge-non-decomposable", "auto", False, 2, (False, False)),
    ("auto", "auto", HINGE, "auto", True, 121, (False, True)),
    ("auto", "auto", HINGE, "auto", True, 120, (True, False)),
    ("auto", "auto", HINGE, "auto", False, 500, (True, False)),
    ("auto", "auto", HINGE, "complete", True, 500, (True, False)),
    ("auto", "false", HINGE, "single", True, 500, (False, True)),
    ("auto", "true", HINGE, "single", True, 500, (True, False)),
    ("auto", "auto", "logistic-decomposable", "single", True, 500, (True, False)),
    ("auto", "auto", "logistic-non-decomposable", "single", True, 500, (False, False)),
    ("auto", "auto", "logistic-non-decomposable", "auto", True, 500, (True, False)),
])
def test_resolve_statistics_format(fmt, default_rule, loss, head, sparse_labels, k,
                                   expected):
    assert tuple(predictors.resolve_statistics_format(fmt, default_rule, loss, head,
                                                      sparse_labels, k)) == expected


def test_label_matrix_is_sparse():
    Y = _wide_sparse_labels()
    assert not label_matrix_is_sparse(Y, None)  # dense: never
    assert label_matrix_is_sparse(sp.csr_matrix(Y), None)
    assert label_matrix_is_sparse(sp.csc_matrix(Y), "auto")
    assert not label_matrix_is_sparse(sp.csr_matrix(Y), "dense")
    full = sp.csr_matrix(np.ones((10, 8), np.uint8))  # 4 * (80 + 10) bytes > 80
    assert not label_matrix_is_sparse(full, "auto")
    assert label_matrix_is_sparse(full, "sparse")


def test_partial_sparse_heads_use_multi_output_mode():
    config, _ = resolve_config(BoomerClassifier(loss=HINGE, statistic_format="sparse",
                                                head_type="partial-dynamic",
                                                default_rule="true"), TargetLayout(False, 4))
    assert config.head_mode == HEAD_MULTI_OUTPUT
    assert config.default_rule and config.partial_default_rule
