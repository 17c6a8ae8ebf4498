"""SeCoClassifier: search against a brute-force oracle, learner, prediction, estimator API."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from gpurules import SeCoClassifier
from gpurules.backends.base import SearchSettings
from gpurules.backends.cpu import CpuBackend
from gpurules.data.presorted import presort_dense
from gpurules.data.sparse import presort_sparse
from gpurules.learners.holdout import output_wise_strata
from gpurules.learners.sampling import SECO_DRAWS, InstanceSampling
from gpurules.objectives import heuristics as H
from gpurules.objectives.lift_functions import lift_tables
from tests.reference import seco_reference as ref

HEURISTICS = [("f-measure", 0.25), ("m-estimate", 2.0), ("precision", None), ("laplace", None),
              ("weighted-relative-accuracy", None), ("recall", None)]


def _data(seed, n=40, A=4, K=3, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, (n, A)).astype(np.float32)
    if sparse:
        X[rng.random((n, A)) < 0.5] = 0.0
    else:
        X[rng.random((n, A)) < 0.1] = np.nan
    Y = (rng.random((n, K)) < 0.35).astype(np.uint8)
    return X, Y


def _search(features, Y, uncovered, weights, name, option, current=None):
    n, K = Y.shape
    predicted = 1 - (Y.sum(0) > n / 2)
    correct = Y == predicted
    g = (correct & uncovered).astype(np.int64)
    h = uncovered.astype(np.int64)
    backend = CpuBackend()
    backend.start_fit(features, Y, None, np.ones(n), 1.0)
    backend.set_statistics(g, h)
    totals = backend.covered_totals(weights)
    hid = H.HEURISTIC_IDS[name]
    params = H.seco_params(hid, H.heuristic_parameter(hid, option or 0.0),
                           *lift_tables("none", {}, Y), totals[0], totals[1])
    search = SearchSettings(H.HEAD_SECO_SINGLE, params, 1, 0.0)
    labels = np.arange(K, dtype=np.int32)
    found = backend.find_best_refinement(np.arange(features.num_features), labels, weights,
                                         totals, search)
    return found, correct


@pytest.mark.parametrize("name, option", HEURISTICS)
@pytest.mark.parametrize("seed", [0, 1])
def test_best_refinement_matches_brute_force(name, option, seed):
    X, Y = _data(seed)
    n, K = Y.shape
    rng = np.random.default_rng(seed + 10)
    uncovered = rng.random((n, K)) < 0.8
    weights = rng.integers(0, 3, n).astype(np.int32)
    found, correct = _search(presort_dense(X, np.zeros(X.shape[1], bool)), Y, uncovered,
                             weights, name, option)
    beta = option
    expected = ref.best_single_condition(X, np.zeros(X.shape[1], bool), np.ones(n, bool),
                                         correct, uncovered, weights, np.arange(K), name,
                                         beta)
    if expected[1] is None:
        assert found is None
        return
    assert found.quality == pytest.approx(expected[0], rel=1e-9)
    # the chosen condition really has that value
    mask = ref.candidate_mask(X, found.feature, found.op, found.threshold)
    q, k = ref.single_head(mask, correct, uncovered, weights, np.arange(K), name, beta)
    assert q == pytest.approx(found.quality, rel=1e-9) and k == found.label


def test_sparse_and_dense_search_agree():
    X, Y = _data(3, n=60, A=5, K=4, sparse=True)
    n, K = Y.shape
    uncovered = np.ones((n, K), bool)
    dense, _ = _search(presort_dense(X, np.zeros(5, bool)), Y, uncovered, None, "f-measure",
                       0.25)
    sparse, _ = _search(presort_sparse(sp.csc_matrix(X), np.zeros(5, bool), 0.0), Y, uncovered,
                        None, "f-measure", 0.25)
    assert (dense.feature, dense.op, dense.threshold, dense.quality, dense.label) == \
        (sparse.feature, sparse.op, sparse.threshold, sparse.quality, sparse.label)


def test_output_wise_strata_follow_mlrl_order():
    # label 2 is rarest -> first; its example also holds label 1, whose count drops to 1,
    # so label 1 (1 left) goes before label 0 (2 left)
    Y = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 1], [0, 1, 0], [0, 0, 0]], np.uint8)
    strata = output_wise_strata(Y)
    assert [s.tolist() for s in strata] == [[2], [3], [0, 1], [4]]
    for draws in ("boomer", SECO_DRAWS):
        sampling = InstanceSampling("stratified-output-wise", 0.66, draws=draws)
        w = sampling.sample(np.random.default_rng(0), 5, strata)
        # ceil(0.66) for the single-example strata while more samples are wanted
        assert w[2] == 1 and w.sum() in (3, 4)


def _fit(X, Y, **kw):
    kw.setdefault("device", "cpu")
    return SeCoClassifier(random_state=1, **kw).fit(X, Y)


def test_decision_list_prediction_matches_reference():
    X, Y = _data(4, n=80, A=5, K=3)
    clf = _fit(X, Y, instance_sampling="none", rule_pruning="none")
    m = clf.model_.rules
    conditions = [m.rule(r)[0] for r in range(m.num_rules)]
    heads = [{k: int(v) for k, v in m.rule(r)[1]} for r in range(m.num_rules)]
    expected = ref.decision_list_predict(X, conditions, heads, clf.model_.default_prediction)
    np.testing.assert_array_equal(clf.predict(X), expected)
    assert len(clf.model_) == m.num_rules + 1


def test_rules_predict_minority_and_cover_uncovered_labels():
    X, Y = _data(5, n=100, A=6, K=4)
    clf = _fit(X, Y)
    dl = clf.model_
    minority = 1 - (Y.sum(0) > Y.shape[0] / 2)
    for r in range(dl.rules.num_rules):
        conds, head = dl.rules.rule(r)
        assert conds and all(v == minority[k] for k, v in head)
    np.testing.assert_array_equal(dl.default_prediction, 1 - minority)


@pytest.mark.parametrize("kw", [
    {}, {"head_type": "partial"}, {"head_type": "partial", "lift_function": "kln"},
    {"heuristic": "m-estimate{m=2}", "pruning_heuristic": "precision"},
    {"instance_sampling": "with-replacement"}, {"instance_sampling": "stratified-example-wise"},
    {"feature_sampling": "without-replacement"}, {"feature_binning": "equal-width"},
    {"rule_induction": "top-down-greedy{max_conditions=2,min_coverage=3}"}, {"max_rules": 3},
])
def test_fit_variants(kw):
    X, Y = _data(6, n=90, A=5, K=4)
    clf = _fit(X, Y, **kw)
    P = clf.predict(X)
    assert P.shape == Y.shape and P.dtype == Y.dtype
    if "max_rules" in kw:
        assert len(clf.model_) <= 3
    if kw.get("head_type") != "partial":
        assert all(len(clf.model_.rules.rule(r)[1]) == 1
                   for r in range(clf.model_.rules.num_rules))


def test_same_seed_same_model_and_sparse_input():
    X, Y = _data(7, n=70, A=5, K=3, sparse=True)
    a, b = _fit(X, Y), _fit(X, Y)
    assert str(a.model_) == str(b.model_)
    c = _fit(sp.csr_matrix(X), Y, feature_format="sparse")
    assert str(c.model_) == str(a.model_)
    np.testing.assert_array_equal(c.predict(sp.csr_matrix(X)), a.predict(X))


def test_pickle_str_and_one_d():
    X, Y = _data(8, n=60, A=4, K=2)
    clf = _fit(X, Y)
    clone = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(clone.predict(X), clf.predict(X))
    text = str(clf.model_)
    assert text.splitlines()[-1].endswith("(default rule)")
    y = np.where(Y[:, 0] == 1, "yes", "no")
    one = _fit(X, y)
    assert set(one.predict(X)) <= {"yes", "no"}
    sparse_pred = _fit(X, Y, prediction_format="sparse").predict(X)
    assert sp.issparse(sparse_pred)


@pytest.mark.parametrize("kw, error", [
    ({"heuristic": "gini"}, ValueError), ({"heuristic": "f-measure{beta=-1}"}, ValueError),
    ({"lift_function": "peak{curvature=0}"}, ValueError), ({"head_type": "complete"}, ValueError),
    ({"max_rules": -1}, ValueError), ({"max_rules": 1.5}, TypeError),
    ({"instance_sampling": "without-replacement{sample_size=0}"}, ValueError),
    ({"rule_induction": "top-down-greedy{recalculate_predictions=true}"}, ValueError),
    ({"device": "tpu"}, ValueError), ({"max_rules": 2 ** 31}, ValueError),
    ({"instance_sampling": "with-replacement{min_samples=0}"}, ValueError),
    ({"feature_sampling": "without-replacement{min_samples=2,max_samples=1}"}, ValueError),
    ({"feature_sampling": "without-replacement{num_retained=-1}"}, ValueError),
])
def test_invalid_parameters(kw, error):
    X, Y = _data(9, n=20)
    with pytest.raises(error):
        _fit(X, Y, **kw)


def test_unit_irep_keeps_first_not_worse_prefix():
    """IREP keeps the shortest prefix that is not worse than the rule on the prune set."""
    X, Y = _data(10, n=120, A=6, K=2)
    pruned = _fit(X, Y, rule_induction="top-down-greedy{max_conditions=4}")
    unpruned = _fit(X, Y, rule_induction="top-down-greedy{max_conditions=4}",
                    rule_pruning="none")
    conds = lambda m: np.diff(m.rules.rule_cond_start).mean()  # noqa: E731
    assert conds(pruned.model_) <= conds(unpruned.model_)


def test_unordered_selection_against_brute_force():
    """The separate-and-conquer selection takes, at each step, the rule with the best value
    on the uncovered examples (ties: more TP, fewer conditions)."""
    from gpurules.learners.seco_unordered import select_rules

    rng = np.random.default_rng(11)
    n, R = 50, 30
    covered = rng.random((R, n)) < 0.2
    positive = rng.random(n) < 0.4
    num_conditions = rng.integers(1, 4, R)
    hid = H.M_ESTIMATE
    param = H.heuristic_parameter(hid, 2.0)
    chosen = select_rules(covered, positive, num_conditions, hid, param)
    uncovered = np.ones(n, bool)
    expected = []
    while (uncovered & positive).any():
        best = None
        for r in range(R):
            if r in expected:
                continue
            tp = int((covered[r] & uncovered & positive).sum())
            fp = int((covered[r] & uncovered & ~positive).sum())
            fn = int((uncovered & positive).sum()) - tp
            tn = int((uncovered & ~positive).sum()) - fp
            q = ref.heuristic("m-estimate", tp, fp, fn, tn, param)
            key = (q, tp, -num_conditions[r], -r)
            if tp > 0 and q > 0 and (best is None or key > best[0]):
                best = (key, r)
        if best is None:
            break
        expected.append(best[1])
        uncovered &= ~covered[best[1]]
    assert chosen.tolist() == expected


def test_unordered_rule_set_and_threshold():
    X, Y = _data(12, n=120, A=5, K=3)
    clf = _fit(X, Y, rule_set="unordered{num_trees=10,max_depth=4}",
               heuristic="m-estimate{m=2}")
    model = clf.model_
    assert not model.ordered and model.rule_value.shape == (model.rules.num_rules,)
    strict = model.with_threshold(np.inf)
    assert len(strict) == 1  # only the default rule is left
    np.testing.assert_array_equal(strict.predict(X), np.tile(model.default_prediction,
                                                             (X.shape[0], 1)))
    # a lower threshold keeps more rules; predictions follow the OR of the covering rules
    loose = model.with_threshold(-np.inf)
    m = loose.rules
    conditions = [m.rule(r)[0] for r in range(m.num_rules)]
    heads = [{k: int(v) for k, v in m.rule(r)[1]} for r in range(m.num_rules)]
    np.testing.assert_array_equal(loose.predict(X), ref.decision_list_predict(
        X, conditions, heads, model.default_prediction))
    assert "[value" in str(model)


@pytest.mark.parametrize("head_type", ["single", "partial"])
def test_narrow_backend_gives_the_same_model(head_type):
    """Refining a rule with a fixed head on a backend holding only the head's labels, and
    skipping features that cannot split the covered examples (dense or sparse X), find
    the same refinements as the full search."""
    from gpurules.estimators.seco_params import resolve_config
    from gpurules.learners.covering import CoveringLearner

    X, Y = _data(13, n=150, A=6, K=5)
    est = SeCoClassifier(head_type=head_type)
    config, _ = resolve_config(est)
    X[:, 5] = 1.0  # a constant feature: never splits the covered examples
    models = []
    for narrow, values in ((None, None), (CpuBackend(), None), (CpuBackend(), X),
                           (None, sp.csr_matrix(np.nan_to_num(X)))):
        data = X if values is None or not sp.issparse(values) else np.nan_to_num(X)
        features = presort_dense(np.ascontiguousarray(data), np.zeros(X.shape[1], bool))
        learner = CoveringLearner(config, CpuBackend(), np.random.default_rng(4), narrow,
                                  values)
        models.append(str(learner.fit(features, Y).build()))
    assert models[0] == models[1] == models[2]
    reference = CoveringLearner(config, CpuBackend(), np.random.default_rng(4))
    features = presort_dense(np.nan_to_num(X), np.zeros(X.shape[1], bool))
    assert models[3] == str(reference.fit(features, Y).build())


def test_min_support_is_mlrl_seco_bound(monkeypatch):
    """``min_support`` bounds a SeCo rule's coverage as mlrl's shared rule induction does:
    ceil(min_support * n) in float32 (0.3 * 91: 28, where a floor gave 27), at most n;
    min_coverage beyond n is clamped to n (no rule can be learned, said in the warning)."""
    from gpurules.learners import covering
    from gpurules.learners.rule_induction import covering_bound

    assert covering_bound(1, 0.3, 91) == 28
    assert covering_bound(1, 0.4, 90) == 36
    assert covering_bound(40, 0.3, 91) == 40
    assert covering_bound(500, 0.0, 91) == 91
    seen = []
    fit = covering.CoveringLearner.fit

    def recording(self, features, Y, weight=None):
        result = fit(self, features, Y, weight)
        seen.append(self.min_coverage)
        return result

    monkeypatch.setattr(covering.CoveringLearner, "fit", recording)
    X, Y = _data(5, n=91)
    _fit(X, Y, rule_induction="top-down-greedy{min_support=0.3}", max_rules=3)
    assert seen == [28]
