"""Sequential post-optimization of BOOMER (``post_optimization="sequential{...}"``,
``learners/post_optimization.py``): taking a rule out of the statistics against a slow
NumPy reference, the statistics after post-optimization against the final model, the
options' effects (rules change; heads keep their outputs; ``resample_features=false``
keeps each rule within its old features), determinism, bad values, and the protocol calls
on the CudaBackend under the CUDA simulator."""

import numpy as np
import pytest
from sklearn.datasets import make_multilabel_classification

from gpurules import BoomerClassifier
from gpurules.backends.base import SearchSettings
from gpurules.backends.cpu import CpuBackend
from gpurules.backends.cpu import statistics as cpu_statistics
from gpurules.conditions import OP_GR, OP_LEQ
from gpurules.data.presorted import presort_dense
from gpurules.estimators.boomer_params import resolve_config
from gpurules.learners.boosting import BoostingLearner
from gpurules.learners.post_optimization import (FeatureSubset, SequentialPostOptimization,
                                                 rule_features)
from gpurules.learners.rule_pruning import cover
from gpurules.model import RuleModelBuilder
from gpurules.objectives.heads import HEAD_COMPLETE
from gpurules.objectives.losses import DECOMPOSABLE_LOSSES
from tests.reference.cuda_support import require, run_checks, run_isolated

SERIAL = dict(parallel_rule_refinement="false", parallel_statistic_update="false",
              parallel_prediction="false")
SCALE = 2.0 ** 20


@pytest.fixture(scope="module")
def data():
    X, Y = make_multilabel_classification(n_samples=200, n_features=8, n_classes=4,
                                          random_state=3)
    return X.astype(np.float32), Y.astype(np.uint8)


def _satisfies(X, conditions):
    """bool (n,): the rows of ``X`` that satisfy every (feature, op, threshold)."""
    covered = np.ones(X.shape[0], bool)
    for f, op, t in conditions:
        covered &= X[:, f] <= t if op == OP_LEQ else X[:, f] > t
    return covered


def _random_rule(X, K, rng):
    """Random (conditions, labels int32, scores float64): 1-3 conditions, 1-K outputs."""
    conditions = []
    for _ in range(int(rng.integers(1, 4))):
        f = int(rng.integers(X.shape[1]))
        conditions.append((f, int(rng.choice([OP_LEQ, OP_GR])), np.float32(rng.choice(X[:, f]))))
    labels = np.sort(rng.choice(K, int(rng.integers(1, K + 1)), replace=False)).astype(np.int32)
    return conditions, labels, rng.normal(0.0, 1.0, labels.shape[0])


def _learner(X, Y, base_weight, **params):
    """A BoostingLearner over ``X``, ``Y`` on a started CPU backend, ready for ``_apply``."""
    config, _ = resolve_config(BoomerClassifier(**params))
    backend = CpuBackend(1, 1)
    backend.start_fit(presort_dense(X, np.zeros(X.shape[1], bool)), Y, config.loss,
                      base_weight, SCALE)
    learner = BoostingLearner(config, backend, np.random.default_rng(0))
    learner._tracker, learner._score_bound = None, 0.0
    learner._total_weight = float(X.shape[0])
    return learner


# -- the rule model builder ------------------------------------------------------------------

def test_builder_replaces_a_rule_in_place():
    builder = RuleModelBuilder(3)
    builder.set_default_rule(np.zeros(3))
    for r in range(3):
        builder.add_rule([(r, OP_LEQ, np.float32(r))], [r], [float(r)])
    builder.replace_rule(1, [(5, OP_GR, np.float32(0.5)), (6, OP_LEQ, np.float32(1.5))],
                         [0, 2], [-1.0, 2.0])
    conditions, labels, scores = builder.rule(1)
    assert conditions == [(5, OP_GR, np.float32(0.5)), (6, OP_LEQ, np.float32(1.5))]
    np.testing.assert_array_equal(labels, [0, 2])
    labels[0] = 9  # a copy
    assert builder.rule(1)[1][0] == 0
    model = builder.build()
    assert len(builder) == len(model) == 4 and builder.num_rules == 3
    assert [model.rule(r)[0][0][0] for r in range(3)] == [0, 5, 2]
    assert model.rule(1)[1] == [(0, -1.0), (2, 2.0)]
    with pytest.raises(IndexError):
        builder.replace_rule(3, [], [0], [1.0])


# -- taking a rule out of the statistics -----------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reverting_a_rule_matches_the_reference(data, seed):
    """After rules 0..R-1 were applied and rule j is taken back out, the backend's scores
    are bit for bit the reference's (NumPy: every rule's head added to the rows its body
    covers, in order, then rule j's negated), its statistics bit for bit those recomputed
    from these scores, and both equal those of the model without rule j up to rounding.
    Examples of zero weight (a holdout set) are covered and reverted like the others."""
    X, Y = data
    rng = np.random.default_rng(seed)
    n, K = Y.shape
    base_weight = np.where(rng.random(n) < 0.2, 0.0, 1.0)
    learner = _learner(X, Y, base_weight)
    backend = learner.backend
    rules = [_random_rule(X, K, rng) for _ in range(5)]
    reference = np.zeros((n, K))
    for conditions, labels, scores in rules:
        cover(backend, conditions)
        learner._apply(labels, scores)
        reference[np.ix_(_satisfies(X, conditions), labels)] += scores
    j = int(rng.integers(len(rules)))
    conditions, labels, scores = rules[j]
    learner._revert_rule(conditions, labels, scores)
    reference[np.ix_(_satisfies(X, conditions), labels)] += -scores
    np.testing.assert_array_equal(backend.P, reference)
    g, h = np.empty_like(backend.g), np.empty_like(backend.h)
    loss = DECOMPOSABLE_LOSSES["logistic-decomposable"]
    cpu_statistics.compute_all(loss.code, Y, reference, base_weight, backend.scale, g, h)
    np.testing.assert_array_equal(backend.g, g)
    np.testing.assert_array_equal(backend.h, h)
    without = np.zeros((n, K))
    for r, (conditions, labels, scores) in enumerate(rules):
        if r != j:
            without[np.ix_(_satisfies(X, conditions), labels)] += scores
    np.testing.assert_allclose(backend.P, without, rtol=0, atol=1e-12)
    cpu_statistics.compute_all(loss.code, Y, without, base_weight, backend.scale, g, h)
    assert np.abs(backend.g - g).max() <= 1 and np.abs(backend.h - h).max() <= 1


# -- whole fits ------------------------------------------------------------------------------

def _fit(X, Y, **params):
    return BoomerClassifier(device="cpu", **{"max_rules": 12, **SERIAL, **params}).fit(X, Y)


def _rules(model):
    """The model's rules as comparable tuples (conditions, head)."""
    return [model.rule(r) for r in range(model.num_rules)]


@pytest.mark.parametrize("option", ["sequential", "sequential{num_iterations=1,"
                                    "refine_heads=true,resample_features=false}"])
def test_statistics_after_post_optimization_are_the_final_models(data, option):
    """After post-optimization the backend's scores are the final model's scores on the
    training examples: every revert and replacement was applied, to the right rows."""
    X, Y = data
    config, _ = resolve_config(BoomerClassifier(max_rules=10, post_optimization=option))
    backend = CpuBackend(1, 1)
    learner = BoostingLearner(config, backend, np.random.default_rng(1))
    model = learner.fit(presort_dense(X, np.zeros(X.shape[1], bool)), Y,
                        np.ones(X.shape[0])).build()
    np.testing.assert_allclose(backend.P, model.predict_scores(X), rtol=0, atol=1e-9)


def test_post_optimization_replaces_rules(data):
    """Every seed's rules change (the rule count does not); the fit is deterministic."""
    X, Y = data
    for seed in (1, 2):
        plain = _fit(X, Y, random_state=seed)
        optimized = _fit(X, Y, random_state=seed, post_optimization="sequential")
        again = _fit(X, Y, random_state=seed, post_optimization="sequential")
        assert len(optimized.model_) == len(plain.model_)
        changed = sum(a != b for a, b in zip(_rules(plain.model_), _rules(optimized.model_)))
        assert changed >= len(plain.model_) // 2, changed
        assert _rules(again.model_) == _rules(optimized.model_)
        np.testing.assert_array_equal(again.decision_function(X),
                                      optimized.decision_function(X))
    other = _fit(X, Y, random_state=3, post_optimization="sequential")
    assert _rules(other.model_) != _rules(optimized.model_)


def test_heads_keep_their_outputs_unless_refined(data):
    """``refine_heads=false``: each rule keeps the output of its single-output head (the
    replacement searches that output only); ``refine_heads=true`` may change it."""
    X, Y = data
    plain = _fit(X, Y, random_state=1, head_type="single")
    kept = _fit(X, Y, random_state=1, head_type="single", post_optimization="sequential")
    refined = _fit(X, Y, random_state=1, head_type="single",
                   post_optimization="sequential{refine_heads=true}")

    def outputs(clf):
        return [[label for label, _ in head] for _, head in _rules(clf.model_)]

    assert outputs(kept) == outputs(plain)
    assert outputs(refined) != outputs(plain)


@pytest.mark.parametrize("iterations", [1, 3])
def test_without_resampling_a_rule_keeps_to_its_features(data, iterations):
    """``resample_features=false``: the fit up to post-optimization is the same, so rule i
    afterwards uses only features of rule i before (as mlrl-boomer 0.15.6 does)."""
    X, Y = data
    plain = _fit(X, Y, random_state=2)
    optimized = _fit(X, Y, random_state=2, post_optimization=(
        f"sequential{{num_iterations={iterations},resample_features=false}}"))
    pairs = list(zip(_rules(plain.model_), _rules(optimized.model_)))
    assert len(pairs) == plain.model_.num_rules
    for (before, _), (after, _) in pairs:
        assert set(rule_features(after)) <= set(rule_features(before))
    assert any(a != b for a, b in pairs)


def test_post_optimization_follows_global_pruning(data):
    """Post-pruning removes the unused rules first; post-optimization keeps their number."""
    X, Y = data
    params = dict(random_state=1, max_rules=30, shrinkage=1.0,
                  global_pruning="post-pruning{min_rules=5}")
    plain = _fit(X, Y, **params)
    optimized = _fit(X, Y, post_optimization="sequential", **params)
    assert len(optimized.model_) == len(plain.model_) < 30


@pytest.mark.parametrize("value, message", [
    ("sequential{num_iterations=0}", "num_iterations must be >= 1"),
    ("sequential{num_iterations=1.5}", "must be of type int"),
    ("sequential{refine_heads=1}", "must be of type bool"),
    ("sequential{resample_features=yes}", "must be of type bool"),
    ("sequential{use_holdout_set=true}", "unknown option 'use_holdout_set'"),
    ("sequentially", "supported values"),
])
def test_bad_values_raise(data, value, message):
    X, Y = data
    with pytest.raises(ValueError, match=message):
        BoomerClassifier(post_optimization=value).fit(X, Y)


def test_config_checks_its_values():
    with pytest.raises(ValueError, match="num_iterations"):
        SequentialPostOptimization(num_iterations=0)
    with pytest.raises(ValueError, match="refine_heads"):
        SequentialPostOptimization(refine_heads="false")
    with pytest.raises(ValueError, match="0 columns"):
        FeatureSubset(CpuBackend(), np.arange(2)).refine_rule(
            np.zeros((1, 2)), np.zeros(1, np.int32), None, None, None, 0)


# -- the CUDA backend (simulator) ------------------------------------------------------------

def _cuda_protocol_equals_cpu():
    """Under the CUDA simulator (fresh interpreter, see ``tests/test_cuda_simulator.py``):
    reverting a rule and growing one on a feature subset (``FeatureSubset``) give the same
    totals and conditions on the CudaBackend (fake CuPy) as on the CpuBackend."""
    from tests.reference.cuda_reference import exact_bins, random_problem
    from tests.reference.cuda_support import simulated_backend_class

    backend_class, _ = simulated_backend_class()
    rng = np.random.default_rng(5)
    n, K = 40, 3
    X, nominal, *_ = random_problem(rng, n, 5, 1)
    Y = (rng.random((n, K)) < 0.5).astype(np.uint8)
    labels = np.arange(K, dtype=np.int32)
    rules = [_random_rule(np.nan_to_num(X, nan=0.0), K, rng) for _ in range(3)]
    search = SearchSettings.boosting(HEAD_COMPLETE, 0.0, 1.0, 1, -np.inf)
    results = []
    for backend in (CpuBackend(), backend_class(0, block_size=32)):
        backend.start_fit(exact_bins(X, nominal), Y,
                          DECOMPOSABLE_LOSSES["logistic-decomposable"], np.ones(n), SCALE)
        for conditions, head, scores in rules:
            cover(backend, conditions)
            backend.update_statistics(head, scores)
        cover(backend, rules[0][0])
        backend.update_statistics(rules[0][1], -rules[0][2])
        backend.reset_coverage()
        totals = backend.covered_totals(None)
        grown, last, _, _ = FeatureSubset(backend, np.array([0, 2, 4])).refine_rule(
            np.empty((3, 0)), labels, None, totals, search, 0)
        results.append((np.concatenate([totals[0], totals[1]]),
                        np.array([c[0] for c in grown]), np.array([c[2] for c in grown]),
                        last.g_sum, backend.covered_mask().copy()))
    for want, got in zip(*results):
        np.testing.assert_array_equal(got, want)


def test_post_optimization_calls_on_the_cuda_backend_equal_the_cpu_backend():
    require("numba_cuda")
    results = run_isolated("tests.test_post_optimization", {"NUMBA_ENABLE_CUDASIM": "1"})
    assert results.get("cuda_protocol", "did not run") is None, results["cuda_protocol"]


if __name__ == "__main__":
    run_checks({"cuda_protocol": _cuda_protocol_equals_cpu})
