"""``rule_induction="top-down-beam-search"`` (``learners/beam_search.py``): the backends'
several-best search (``find_best_refinement(count=...)``), the beam's rule against a slow
NumPy beam over ``tests/reference/search.py``'s exhaustive per-feature search, and the
estimator's parameters (``beam_width``, ``min_support``)."""


import numpy as np
import pytest
from sklearn.datasets import make_multilabel_classification

from gpurules import BoomerClassifier
from gpurules.backends.base import SearchSettings, select_refinement, select_refinements
from gpurules.backends.cpu import CpuBackend
from gpurules.data.presorted import presort_dense
from gpurules.estimators.boomer_params import resolve_config
from gpurules.learners.beam_search import BeamSettings, induce_rule_beam
from gpurules.learners.boosting_rule import BoostingRule
from gpurules.learners.rule_induction import induce_rule
from gpurules.objectives.heads import HEAD_COMPLETE
from tests.reference.search import best_refinement, satisfied


def _out(q, op):
    """A search record of S slots with qualities ``q`` and operators ``op``."""
    S = len(q)
    return (np.array(q, np.float64), np.array(op, np.int8), np.arange(S, dtype=np.float32),
            np.arange(S, dtype=np.int64) + 10, np.full(S, -1, np.int32),
            np.zeros((S, 2), np.int64), np.zeros((S, 2), np.int64))


def _key(ref):
    """A Refinement as a comparable tuple (its sums are arrays)."""
    return (ref.feature, ref.op, ref.threshold, ref.quality, ref.count, ref.label,
            tuple(ref.g_sum), tuple(ref.h_sum))


def test_select_refinements_orders_by_quality_then_slot():
    features = np.array([7, 3, 5, 1, 9], np.int64)
    out = _out([0.5, 0.9, 0.5, 2.0, 0.9], [0, 1, 0, -1, 2])  # slot 3 has no condition
    got = select_refinements(features, out, 3)
    assert [r.feature for r in got] == [3, 9, 7]  # 0.9 (slots 1, 4), then 0.5 (slot 0)
    assert [r.feature for r in select_refinements(features, out, 10)] == [3, 9, 7, 5]
    assert _key(select_refinement(features, out)) == _key(got[0])
    assert list(map(_key, select_refinement(features, out, 2))) == list(map(_key, got[:2]))
    none = _out([1.0, 1.0], [-1, -1])
    assert select_refinements(features[:2], none, 3) == []
    assert select_refinement(features[:2], none) is None


@pytest.fixture(scope="module")
def data():
    X, Y = make_multilabel_classification(n_samples=90, n_features=5, n_classes=3,
                                          random_state=7)
    rng = np.random.default_rng(7)
    X = (X + rng.normal(0.0, 0.3, X.shape)).astype(np.float32)  # few ties
    return X, Y.astype(np.uint8)


def _backend(X, Y, config):
    backend = CpuBackend(1, 1)
    backend.start_fit(presort_dense(X, np.zeros(X.shape[1], bool)), Y, config.loss,
                      np.ones(X.shape[0]), 2.0 ** 20)
    backend.reset_coverage()
    return backend


def test_count_gives_each_features_best_in_quality_order(data):
    X, Y = data
    config, _ = resolve_config(BoomerClassifier())
    backend = _backend(X, Y, config)
    labels = np.arange(Y.shape[1], dtype=np.int32)
    search = SearchSettings(HEAD_COMPLETE, config.search_params, 1, -np.inf)
    totals = backend.covered_totals(None)
    features = np.array([4, 0, 2, 1, 3], np.int64)
    several = backend.find_best_refinement(features, labels, None, totals, search, count=3)
    each = [backend.find_best_refinement(features[j:j + 1], labels, None, totals, search)
            for j in range(5)]
    each = sorted((r for r in each if r is not None), key=lambda r: -r.quality)[:3]
    assert list(map(_key, several)) == list(map(_key, each))
    assert _key(several[0]) == _key(backend.find_best_refinement(features, labels, None,
                                                                 totals, search))
    search = SearchSettings(HEAD_COMPLETE, config.search_params, 1, several[1].quality)
    better = backend.find_best_refinement(features, labels, None, totals, search, count=3)
    assert list(map(_key, better)) == [_key(several[0])]  # strictly better only


def _reference_beam(X, g, h, labels, single, inv_scale, width, max_conditions, min_cov):
    """The beam of the module docstring over every feature, each search by exhaustive
    enumeration (``reference.search.best_refinement`` per feature), coverage by masks.
    Returns the best entry: dict(conditions, quality)."""
    n, A = X.shape
    nominal, weights = np.zeros(A, bool), np.ones(n, np.int64)

    def search(entry, bound):
        found = []
        for f in range(A):
            best = best_refinement(X, nominal, entry["covered"], weights, g, h, [f],
                                   entry["labels"], single, 0.0, 1.0, inv_scale, min_cov,
                                   bound)
            if best is not None:
                found.append(best)
        return sorted(found, key=lambda b: -b[0])[:width]  # stable: feature order on ties

    def child(entry, best):
        q, f, op, t, count, label = best
        return {"conditions": entry["conditions"] + [(f, op, t)], "quality": q,
                "covered": entry["covered"] & satisfied(X[:, f], op, t),
                "labels": np.array([label]) if single else entry["labels"],
                "refinable": count > min_cov}

    root = {"conditions": [], "covered": np.ones(n, bool), "labels": labels}
    beam = [child(root, b) for b in search(root, -np.inf)]
    depth = 1
    while beam and (max_conditions == 0 or depth < max_conditions):
        bound, candidates, order, refined = beam[-1]["quality"], [], 0, False
        for entry in beam:
            found = search(entry, bound) if entry["refinable"] else []
            if found:
                refined = True
                for best in found:
                    candidates.append(((-best[0], 1, order), child(entry, best)))
                    order += 1
            elif len(candidates) < width or not entry["quality"] < bound:
                candidates.append(((-entry["quality"], 0, order),
                                   {**entry, "refinable": False}))
                order += 1
            if len(candidates) >= width:
                candidates = sorted(candidates, key=lambda c: c[0])[:width]
                bound = max(bound, candidates[-1][1]["quality"])
        beam = [entry for _, entry in sorted(candidates, key=lambda c: c[0])[:width]]
        if not refined:
            break
        depth += 1
    return beam[0]


@pytest.mark.parametrize("head_type,width,max_conditions,min_coverage", [
    ("complete", 2, 0, 1), ("complete", 3, 3, 1), ("single", 4, 0, 5), ("single", 2, 2, 1),
])
def test_beam_rule_equals_the_numpy_reference(data, head_type, width, max_conditions,
                                              min_coverage):
    X, Y = data
    option = (f"top-down-beam-search{{beam_width={width},max_conditions={max_conditions},"
              f"min_coverage={min_coverage}}}")
    config, _ = resolve_config(BoomerClassifier(rule_induction=option, head_type=head_type,
                                                feature_sampling="none"))
    backend = _backend(X, Y, config)
    labels = np.arange(Y.shape[1], dtype=np.int32)
    g, h = backend.g.copy(), backend.h.copy()
    hooks = BoostingRule(config, backend, np.random.default_rng(0), None, None, labels,
                         X.shape[1])
    conditions, head, scores, count = induce_rule_beam(hooks, config.beam)
    want = _reference_beam(X, g, h, labels, head_type == "single", backend.inv_scale, width,
                           max_conditions, min_coverage)
    assert conditions == want["conditions"]
    assert count == int(want["covered"].sum())
    np.testing.assert_array_equal(backend.covered_mask(), want["covered"])  # left covering it
    assert len(conditions) > 1


def test_beam_of_one_depth_is_the_greedy_first_condition(data):
    """``max_conditions=1``: the beam's best entry is the best first condition, which the
    greedy loop finds too."""
    X, Y = data
    rules = []
    for option in ("top-down-greedy{max_conditions=1}",
                   "top-down-beam-search{max_conditions=1,beam_width=3}"):
        config, _ = resolve_config(BoomerClassifier(rule_induction=option,
                                                    feature_sampling="none"))
        backend = _backend(X, Y, config)
        hooks = BoostingRule(config, backend, np.random.default_rng(0), None, None,
                             np.arange(Y.shape[1], dtype=np.int32), X.shape[1])
        grow = induce_rule if config.beam is None else \
            (lambda hk, beam=config.beam: induce_rule_beam(hk, beam))
        conditions, head, scores, count = grow(hooks)
        rules.append((conditions, head.tolist(), scores.tolist(), count))
    assert rules[0] == rules[1]


def test_beam_fits_are_reproducible_and_differ_from_greedy(data):
    X, Y = data
    beam = dict(rule_induction="top-down-beam-search{resample_features=true}", max_rules=8,
                random_state=3)
    a, b = BoomerClassifier(**beam).fit(X, Y), BoomerClassifier(**beam).fit(X, Y)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    greedy = BoomerClassifier(max_rules=8, random_state=3).fit(X, Y)
    assert not np.array_equal(a.decision_function(X), greedy.decision_function(X))


@pytest.mark.parametrize("option,message", [
    ("top-down-beam-search{beam_width=1}", "beam_width must be >= 2"),
    ("top-down-beam-search{beam_width=2.5}", "beam_width='2.5' must be of type int"),
    ("top-down-beam-search{min_support=1.0}", r"min_support must be in \[0, 1\)"),
    ("top-down-greedy{beam_width=4}", "beam_width"),
])
def test_bad_beam_options_raise(data, option, message):
    X, Y = data
    with pytest.raises((ValueError, TypeError), match=message):
        BoomerClassifier(rule_induction=option, max_rules=2).fit(X, Y)


def test_beam_settings_need_a_width_of_two():
    with pytest.raises(ValueError, match="at least 2"):
        BeamSettings(1)


@pytest.mark.parametrize("induction", ["top-down-greedy", "top-down-beam-search"])
def test_min_support_bounds_every_rules_coverage(data, induction):
    """mlrl-boomer's bound: a rule covers at least ceil(min_support * n) examples."""
    X, Y = data
    clf = BoomerClassifier(rule_induction=f"{induction}{{min_support=0.4}}", max_rules=6,
                           feature_sampling="none", random_state=1).fit(X, Y)
    config, _ = resolve_config(clf)
    assert config.covering_bound(X.shape[0]) == 36  # float32(0.4) * 90 in float32: 36
    coverage = clf.model_.rule_coverage  # training examples satisfying each rule's body
    assert coverage.size and coverage.min() >= 36
    loose = BoomerClassifier(rule_induction=induction, max_rules=6, feature_sampling="none",
                             random_state=1).fit(X, Y)
    assert not np.array_equal(clf.decision_function(X), loose.decision_function(X))


@pytest.mark.parametrize("seed", range(6))
def test_candidate_heap_keeps_the_best_width_in_order(seed):
    """``fused_beam._offer`` (a heap of the best ``width`` candidates, rows freed as they
    drop out) and ``_sort_live`` against sorting every candidate offered: quality
    descending, kept entries before refinements, then order of discovery; many ties."""
    from gpurules.backends.cpu import fused_beam as fb
    rng = np.random.default_rng(seed)
    width, count = int(rng.integers(2, 40)), int(rng.integers(1, 300))
    cand = fb.buffers(width, 1, 1, 1, 1)[3]
    rows = cand[fb.C_QUALITY].shape[0]
    live, free = np.empty(rows, np.int64), np.zeros(rows + 1, np.int64)
    fb._free_all(free)
    keys, nl = [], 0
    for order in range(count):
        quality, kind = float(rng.integers(0, 8)), int(rng.integers(0, 2))
        keys.append((-quality, kind, order))
        r = fb._free_row(free)
        cand[fb.C_QUALITY][r], cand[fb.C_KIND][r], cand[fb.C_ORDER][r] = quality, kind, order
        nl = fb._offer(cand, live, nl, free, width, r)
        assert nl == min(order + 1, width) and free[rows] == rows - nl  # no row lost
    fb._sort_live(cand, live[:nl])
    got = [(-cand[fb.C_QUALITY][r], cand[fb.C_KIND][r], cand[fb.C_ORDER][r])
           for r in live[:nl]]
    assert got == sorted(keys)[:width]
