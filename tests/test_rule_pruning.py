"""IREP rule pruning of BOOMER (``rule_pruning="irep"``, ``learners/rule_pruning.py``):
the pruned prefix against a slow NumPy reference, mlrl-common's tie rule, the coverage the
head is applied to, and whole fits (pruning changes the rules, fits are deterministic)."""

import dataclasses

import numpy as np
import pytest
from sklearn.datasets import make_multilabel_classification

from gpurules import BoomerClassifier
from gpurules.backends.base import SearchSettings, refine_stepwise
from gpurules.backends.cpu import CpuBackend
from gpurules.conditions import OP_GR, OP_LEQ
from gpurules.data.presorted import presort_dense
from gpurules.estimators.boomer_params import resolve_config
from gpurules.learners.boosting import BoostingLearner
from gpurules.learners.boosting_rule import BoostingRule
from gpurules.learners.rule_pruning import (IREP_COVERAGE_MLRL, IREP_COVERAGE_RULE, cover,
                                            irep_keep)
from gpurules.objectives.losses import DECOMPOSABLE_LOSSES
from tests.reference.cuda_support import require, run_checks, run_isolated


@pytest.fixture(scope="module")
def data():
    X, Y = make_multilabel_classification(n_samples=200, n_features=6, n_classes=4,
                                          random_state=7)
    return X.astype(np.float32), Y.astype(np.uint8)


def _learner(X, Y, holdout=None, **params):
    """A BoostingLearner with IREP on a CPU backend over ``X``, ``Y``; ``holdout`` bool (n,)
    gives those examples zero weight, as ``BoostingLearner.fit`` does."""
    est = BoomerClassifier(instance_sampling="without-replacement", rule_pruning="irep",
                           **params)
    config, _ = resolve_config(est)
    base_weight = np.ones(X.shape[0]) if holdout is None else np.where(holdout, 0.0, 1.0)
    backend = CpuBackend(1, 1)
    backend.start_fit(presort_dense(X, np.zeros(X.shape[1], bool)), Y, config.loss,
                      base_weight, 2.0 ** 20)
    learner = BoostingLearner(config, backend, np.random.default_rng(0))
    learner._train = None if holdout is None else ~holdout
    return learner


def _rule(learner, weights):
    """The :class:`BoostingRule` of a rule of ``learner`` grown on the sample ``weights``
    (int32 (n,)), over all outputs."""
    K = learner.backend.g.shape[1]
    return BoostingRule(learner.config, learner.backend, learner.rng, learner._train, weights,
                        np.arange(K, dtype=np.int32), learner.backend.features.num_features)


def _shake_statistics(learner, X, rng, num_updates=4):
    """Apply a few random heads to random single-condition coverages, so the statistics
    differ between examples."""
    K = learner.backend.g.shape[1]
    for _ in range(num_updates):
        cover(learner.backend, [_random_condition(X, rng)])
        learner.backend.update_statistics(np.arange(K, dtype=np.int32),
                                          rng.normal(0.0, 1.0, K))


def _random_condition(X, rng):
    f = int(rng.integers(X.shape[1]))
    return f, int(rng.choice([OP_LEQ, OP_GR])), np.float32(rng.choice(X[:, f]))


def _satisfies(X, condition):
    f, op, t = condition
    return X[:, f] <= t if op == OP_LEQ else X[:, f] > t


def reference_keep(X, g, h, inv_scale, conditions, prune, labels, l1, l2):
    """Slow reference: the number of conditions IREP keeps. Each prefix (and the whole
    rule) is scored by the summed gain ``0.5 max(|G| - l1, 0)^2 / (H + l2)`` over ``labels``
    of the prune examples it covers; the shortest prefix with the best score among the
    prefixes wins if that score is not below the whole rule's, else nothing is pruned."""
    n = len(conditions)
    covered = np.ones(X.shape[0], bool)
    scores = []
    for condition in conditions:
        covered = covered & _satisfies(X, condition)
        rows = covered & prune
        G, H = g[rows].sum(axis=0), h[rows].sum(axis=0)
        gains = []
        for k in labels:
            a, d = max(abs(G[k] * inv_scale) - l1, 0.0), H[k] * inv_scale + l2
            gains.append(0.5 * a * a / d if a > 0.0 and d > 0.0 else 0.0)
        scores.append(sum(gains))
    best = max(scores[:-1])
    return scores.index(best) + 1 if best >= scores[-1] else n


def _grow(learner, weights, single, max_conditions=6):
    """A rule grown on the sample ``weights`` by the stepwise search over all features:
    (conditions, head labels int32); the backend covers it."""
    backend, config = learner.backend, learner.config
    backend.reset_coverage()
    search = SearchSettings(config.head_mode, config.search_params, 1, -np.inf)
    K = backend.g.shape[1]
    conditions, _, labels, _ = refine_stepwise(
        backend, np.zeros((max_conditions, 0)), np.arange(K, dtype=np.int32), weights,
        backend.covered_totals(weights), search, 1 if single else 0)
    return conditions, labels


@pytest.mark.parametrize("seed", range(16))
def test_pruned_prefix_matches_the_reference(data, seed):
    X, Y = data
    rng = np.random.default_rng(seed)
    holdout = rng.random(X.shape[0]) < 0.3 if seed % 3 == 0 else None
    single = seed % 2 == 1
    l1 = 0.0 if seed % 4 < 2 else 0.05
    learner = _learner(X, Y, holdout, head_type="single" if single else "complete",
                       l1_regularization_weight=l1)
    backend = learner.backend
    _shake_statistics(learner, X, rng)
    weights = (rng.random(X.shape[0]) < 0.66) * rng.integers(1, 3, X.shape[0])
    weights = weights.astype(np.int32)  # 0: out of the sample
    if holdout is not None:
        weights[holdout] = 0
    conditions, labels = _grow(learner, weights, single)
    if seed % 5 == 4:  # a repeated condition: the prefix without it ties with the rule
        conditions.append(conditions[-1])
        cover(backend, conditions)
    if len(conditions) < 2:
        pytest.skip("the grown rule has a single condition")
    keep = _rule(learner, weights).irep(conditions, labels, learner.config.search_params)
    prune = weights == 0
    if holdout is not None:
        prune &= ~holdout
    expected = reference_keep(X, backend.g, backend.h, backend.inv_scale, conditions, prune,
                              labels, l1, 1.0)
    assert keep == expected
    np.testing.assert_array_equal(  # the backend is left covering the first n - 1
        backend.covered_mask(), np.logical_and.reduce([_satisfies(X, c) for c in
                                                       conditions[:-1]]))


def test_the_reference_cases_prune_variously(data):
    """The reference test above is not trivial: its rules are cut to 1 condition, to
    other prefixes and not at all."""
    X, Y = data
    kept = set()
    for seed in (1, 3, 7):
        rng = np.random.default_rng(seed)
        learner = _learner(X, Y)
        _shake_statistics(learner, X, rng)
        weights = ((rng.random(X.shape[0]) < 0.66) * rng.integers(1, 3, X.shape[0]))
        conditions, labels = _grow(learner, weights.astype(np.int32), False)
        keep = _rule(learner, weights.astype(np.int32)).irep(conditions, labels,
                                                             learner.config.search_params)
        kept.add("first" if keep == 1 else "all" if keep == len(conditions) else "some")
    assert kept == {"first", "some", "all"}


def test_an_empty_prune_set_keeps_the_first_condition(data):
    """All qualities are those of an empty set (0): the first prefix ties with the rule."""
    X, Y = data
    learner = _learner(X, Y)
    conditions = [_random_condition(X, np.random.default_rng(s)) for s in range(3)]
    cover(learner.backend, conditions)
    weights = np.ones(X.shape[0], np.int32)
    weights[0] = 0
    holdout = np.zeros(X.shape[0], bool)
    holdout[0] = True  # the one example out of the sample is held out
    learner._train = ~holdout
    labels = np.arange(Y.shape[1], dtype=np.int32)
    assert _rule(learner, weights).irep(conditions, labels,
                                        learner.config.search_params) == 1


@pytest.mark.parametrize("qualities, keep", [
    ([1.0, 2.0, 3.0], 3),  # every prefix worse than the rule
    ([3.0, 3.0, 3.0], 1),  # ties: the shortest
    ([2.0, 5.0, 3.0], 2),
    ([3.0, 5.0, 5.0, 4.0], 2),  # a later equal prefix does not replace the kept one
    ([4.0, 3.0, 6.0, 4.0], 3),  # the first not-worse prefix, then a strictly better one
    ([float("nan"), 1.0], 1),  # NaN neither better nor worse: a tie (mlrl-common)
    ([7.0], 1),
])
def test_irep_keep_tie_rule(qualities, keep):
    assert irep_keep(qualities) == keep


@pytest.mark.parametrize("coverage", [IREP_COVERAGE_MLRL, IREP_COVERAGE_RULE])
def test_head_is_applied_to_the_coverage_of_the_variant(data, coverage):
    """mlrl-boomer updates the examples of the first n - 1 grown conditions (its feature
    subspace is left there), the "rule" variant those of the pruned rule; the head is
    computed from the pruned rule's training examples either way."""
    X, Y = data
    rng = np.random.default_rng(3)
    learner = _learner(X, Y)
    learner.config = dataclasses.replace(learner.config, irep_coverage=coverage)
    backend = learner.backend
    _shake_statistics(learner, X, rng)
    conditions = [(0, OP_GR, np.float32(np.median(X[:, 0])))] + \
        [_random_condition(X, rng) for _ in range(3)]
    weights = (rng.random(X.shape[0]) < 0.66).astype(np.int32)
    labels = np.arange(Y.shape[1], dtype=np.int32)
    cover(backend, conditions)
    g, h, count = backend.covered_totals(weights)
    best = dataclasses.replace(_placeholder_refinement(), g_sum=g, h_sum=h, count=count)
    kept, head_labels, scores = _rule(learner, weights).finish_rule(
        conditions, best, labels, learner.config.search_params)[:3]
    assert 1 <= len(kept) <= len(conditions) and kept == conditions[:len(kept)]
    mask = lambda conds: np.logical_and.reduce([_satisfies(X, c) for c in conds])  # noqa
    expected = mask(conditions[:-1]) if coverage == IREP_COVERAGE_MLRL else mask(kept)
    np.testing.assert_array_equal(backend.covered_mask(), expected)
    rows = mask(kept)
    G, H = backend.g[rows].sum(axis=0), backend.h[rows].sum(axis=0)
    np.testing.assert_allclose(scores, -G / (H + 1.0 * backend.scale), rtol=1e-12)
    assert head_labels.tolist() == labels.tolist()


def _placeholder_refinement():
    from gpurules.learners.rule_pruning import condition_refinement
    return condition_refinement((0, OP_LEQ, 0.0))


def _conditions_per_rule(clf):
    return float(np.diff(clf.model_.rule_cond_start).mean())


def _fit(X, Y, **params):
    return BoomerClassifier(random_state=5, max_rules=40, device="cpu",
                            instance_sampling="without-replacement",
                            parallel_rule_refinement="false", parallel_statistic_update="false",
                            **params).fit(X, Y)


def test_irep_prunes_and_is_deterministic(data):
    X, Y = data
    plain = _fit(X, Y)
    pruned = _fit(X, Y, rule_pruning="irep")
    again = _fit(X, Y, rule_pruning="irep")
    assert _conditions_per_rule(pruned) < 0.8 * _conditions_per_rule(plain)
    for field in ("cond_feature", "cond_op", "cond_threshold", "rule_cond_start",
                  "head_label", "head_score"):
        np.testing.assert_array_equal(getattr(pruned.model_, field),
                                      getattr(again.model_, field))


@pytest.mark.parametrize("params", [
    {"head_type": "single"},
    {"head_type": "partial-dynamic"},
    {"loss": "logistic-non-decomposable"},
    {"holdout": "random", "global_pruning": "post-pruning{min_rules=10}"},
    {"instance_sampling": "with-replacement",
     "rule_induction": "top-down-greedy{recalculate_predictions=false}"},
])
def test_irep_with_other_options(data, params):
    X, Y = data
    params = {"instance_sampling": "without-replacement", **params}
    clf = BoomerClassifier(random_state=2, max_rules=15, device="cpu", rule_pruning="irep",
                           **params).fit(X, Y)
    assert clf.predict(X).shape == Y.shape
    assert _conditions_per_rule(clf) >= 1


def test_irep_without_instance_sampling_raises(data):
    X, Y = data
    with pytest.raises(ValueError, match="instance_sampling='none' leaves none out"):
        BoomerClassifier(rule_pruning="irep").fit(X, Y)
    with pytest.raises(ValueError, match="rule_pruning"):
        BoomerClassifier(rule_pruning="reduced-error").fit(X, Y)


def _cuda_prefixes_equal_cpu():
    """Under the CUDA simulator (fresh interpreter, see ``tests/test_cuda_simulator.py``):
    the prefix qualities IREP computes through the protocol, and the coverage it leaves,
    are the same on the CudaBackend (fake CuPy) as on the CpuBackend, same bins."""
    from gpurules.learners.rule_pruning import fixed_head_quality, prefix_qualities
    from gpurules.objectives.heads import HEAD_COMPLETE
    from gpurules.objectives.quality import boosting_params
    from tests.reference.cuda_reference import exact_bins, random_problem
    from tests.reference.cuda_support import simulated_backend_class
    from tests.test_cuda_simulator import SCALE

    backend_class, _ = simulated_backend_class()
    rng = np.random.default_rng(7)
    n, K = 40, 3
    X, nominal, *_ = random_problem(rng, n, 4, 1)
    Y = (rng.random((n, K)) < 0.5).astype(np.uint8)
    backends = (CpuBackend(), backend_class(0, block_size=32))
    for backend in backends:
        backend.start_fit(exact_bins(X, nominal), Y,
                          DECOMPOSABLE_LOSSES["logistic-decomposable"], np.ones(n), SCALE)
    labels = np.arange(K, dtype=np.int32)
    for _ in range(3):
        conditions = [_random_condition(np.nan_to_num(X, nan=0.0), rng) for _ in range(4)]
        scores = rng.normal(0.0, 1.0, K)
        prune = (rng.random(n) < 0.4).astype(np.int32)
        results = []
        for backend in backends:
            cover(backend, conditions[:1])
            backend.update_statistics(labels, scores)
            cover(backend, conditions)
            qualities = prefix_qualities(backend, conditions, prune, lambda g, h: (
                fixed_head_quality(g, h, labels, HEAD_COMPLETE, boosting_params(0.0, 1.0),
                                   backend.inv_scale)))
            results.append((qualities, backend.covered_mask().copy()))
        for want, got in zip(results[0], results[1]):
            np.testing.assert_array_equal(got, want)


def test_irep_on_the_cuda_backend_equals_the_cpu_backend():
    require("numba_cuda")
    results = run_isolated("tests.test_rule_pruning", {"NUMBA_ENABLE_CUDASIM": "1"})
    assert results.get("cuda_prefixes", "did not run") is None, results["cuda_prefixes"]


if __name__ == "__main__":
    run_checks({"cuda_prefixes": _cuda_prefixes_equal_cpu})
