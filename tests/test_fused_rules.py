"""Rules learned in batches by the CPU backend (``backends/cpu/fused_rules.py``) against the
learner's loop over one rule at a time (``learners/boosting.py``), the reference: the same
models, rule for rule, for every configuration the batches serve, and the same stops."""

import logging
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_multilabel_classification, make_regression

from gpurules import BoomerClassifier, BoomerRegressor
from gpurules.backends.base import BATCH_LEARNED, Refinement
from gpurules.backends.cpu import CpuBackend
from gpurules.data.presorted import presort_dense
from gpurules.estimators.boomer_params import resolve_config
from gpurules.jit import prefetch, threads
from gpurules.learners import boosting


@pytest.fixture(scope="module")
def data():
    """Counts with noise on a third of the features, a nominal feature, missing values."""
    X, Y = make_multilabel_classification(n_samples=160, n_features=9, n_classes=4,
                                          random_state=3)
    rng = np.random.default_rng(3)
    X = X.astype(np.float32)
    X[:, :3] += rng.normal(0, 0.5, (160, 3)).astype(np.float32)
    X[:, 8] = rng.integers(0, 3, 160)
    X[rng.random(160) < 0.1, 4] = np.nan
    return X, Y


def _fit(X, Y, fused, monkeypatch, **params):
    """(estimator, warnings' messages, whether the batches learned the rules) of a fit
    with the batches allowed (``fused``) or not (the reference)."""
    used = []
    learns_rules = CpuBackend.learns_rules

    def spy(backend, plan):
        used.append(fused and learns_rules(backend, plan))
        return used[-1]

    with monkeypatch.context() as m:
        m.setattr(CpuBackend, "learns_rules", spy)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            clf = BoomerClassifier(random_state=5, parallel_rule_refinement="false",
                                   parallel_statistic_update="false", **params)
            clf.fit(X, Y, nominal_feature_indices=[8] if X.shape[1] == 9 else None)
    return clf, [(str(w.message), w.filename, w.lineno) for w in caught], any(used)


def _assert_same_fits(X, Y, monkeypatch, **params):
    """The batched fit equals the reference's; returns its estimator (its warnings'
    messages as ``warned``)."""
    got, got_warnings, used = _fit(X, Y, True, monkeypatch, **params)
    want, want_warnings, _ = _fit(X, Y, False, monkeypatch, **params)
    assert used
    assert str(got.model_) == str(want.model_)
    np.testing.assert_array_equal(got.decision_function(X), want.decision_function(X))
    assert got_warnings == want_warnings  # (the place each one points at too)
    got.warned = [message for message, _, _ in got_warnings]
    return got


@pytest.mark.parametrize("params", [
    {},
    {"head_type": "single"},
    {"head_type": "complete", "shrinkage": 0.5, "l2_regularization_weight": 0.5},
    {"head_type": "partial-fixed", "l1_regularization_weight": 0.05},
    {"head_type": "partial-dynamic"},
    {"head_type": "partial-dynamic",
     "rule_induction": "top-down-greedy{max_conditions=2,max_head_refinements=2}"},
    {"head_type": "partial-fixed", "rule_induction": "top-down-greedy{max_head_refinements=0}"},
    {"head_type": "single", "rule_induction": "top-down-greedy{max_head_refinements=3}"},
    {"head_type": "complete", "label_binning": "equal-width"},
    {"feature_sampling": "none", "rule_induction": "top-down-greedy{max_conditions=3}"},
    {"rule_induction": "top-down-greedy{min_coverage=40}"},
    {"feature_format": "sparse"},
    {"post_optimization": "sequential{num_iterations=1}", "holdout": "none"},
    {"feature_binning": "equal-width"},
    {"feature_binning": "equal-width{bin_ratio=0.1}", "head_type": "partial-dynamic",
     "feature_format": "sparse"},
    {"loss": "logistic-non-decomposable"},
    {"loss": "logistic-non-decomposable", "label_binning": "none", "head_type": "single"},
    {"loss": "logistic-non-decomposable", "head_type": "partial-dynamic",
     "feature_format": "sparse"},
    {"loss": "logistic-non-decomposable", "label_binning": "none",
     "feature_binning": "equal-width"},
    {"loss": "squared-error-decomposable"},
    {"loss": "squared-hinge-decomposable", "head_type": "single", "feature_format": "sparse"},
    {"output_sampling": "round-robin"},
    {"output_sampling": "round-robin", "head_type": "partial-dynamic",
     "feature_binning": "equal-width"},
])
def test_batches_learn_the_models_of_the_loop(data, params, monkeypatch):
    """More rules than a batch holds (``RULE_BATCH``), each configuration the batches
    serve: heads of every kind, their outputs fixed or not, limits on the conditions, a
    coverage that stops rules, dense, sparse and histogram search (whose interleaved
    statistics follow each update), the loop's post-optimization after the batches,
    non-decomposable statistics (their head kinds, with and without label bins), the
    squared losses (whose scale changes: see below) and round-robin outputs (each rule's
    output follows from its number, which carries over from batch to batch)."""
    X, Y = data
    clf = _assert_same_fits(X, Y, monkeypatch, max_rules=boosting.RULE_BATCH + 30, **params)
    assert len(clf.model_) == boosting.RULE_BATCH + 30


@pytest.mark.parametrize("params", [
    {"rule_induction": "top-down-beam-search", "head_type": "single"},
    {"rule_induction": "top-down-beam-search{beam_width=3,resample_features=true,"
                       "max_conditions=3,max_head_refinements=2}",
     "head_type": "partial-dynamic"},
    {"rule_induction": "top-down-beam-search{beam_width=5,min_coverage=30}",
     "head_type": "complete", "feature_format": "sparse"},
    {"rule_induction": "top-down-beam-search", "loss": "logistic-non-decomposable",
     "feature_binning": "equal-width", "output_sampling": "round-robin"},
])
def test_beam_search_in_batches(data, params, monkeypatch):
    """Rules grown by beam search in the batches (``fused_beam``) against the loop's
    (``learners.beam_search``): widths, features drawn per entry or per depth, heads whose
    outputs are fixed per entry after a number of conditions, limits on the conditions
    and the coverage (entries that may not be refined further stay in the beam), dense,
    sparse and histogram search, non-decomposable statistics."""
    X, Y = data
    _assert_same_fits(X, Y, monkeypatch, max_rules=boosting.RULE_BATCH + 10, **params)


def test_beam_search_redraws_the_first_condition_as_the_loop(monkeypatch):
    """Mostly constant features: the first beam draws other features until an informative
    one comes, later depths do not, and a fit where none comes stops with the loop's
    warning. Dense features (mostly zero, these would take the sparse search): the redraws
    are the rule loop's, and the dense beam loop is compiled for the cases above."""
    rng = np.random.default_rng(0)
    X = np.zeros((80, 40), np.float32)
    Y = (rng.random((80, 3)) < 0.3).astype(np.uint8)
    for k, j in enumerate((5, 17)):
        X[:, j] = rng.integers(0, 4, 80)
        Y[:, k] |= X[:, j] > 1
    _assert_same_fits(X, Y, monkeypatch, max_rules=40, head_type="single",
                      rule_induction="top-down-beam-search", feature_format="dense")


@pytest.mark.parametrize("params", [
    {"instance_sampling": "with-replacement"},
    {"instance_sampling": "stratified-output-wise", "head_type": "partial-dynamic"},
    {"instance_sampling": "stratified-example-wise{sample_size=0.5}",
     "feature_binning": "equal-width", "loss": "logistic-non-decomposable"},
    {"instance_sampling": "stratified-output-wise", "feature_format": "sparse",
     "rule_induction": "top-down-beam-search{recalculate_predictions=false}"},
    {"instance_sampling": "with-replacement{sample_size=0.3}", "loss":
     "squared-error-decomposable", "rule_induction": "top-down-greedy{min_coverage=10}"},
    {"instance_sampling": "without-replacement", "head_type": "single"},
])
def test_instance_samples_in_batches(data, params, monkeypatch):
    """Each rule's instance sample drawn inside the batches (``instance_draws``): with
    and without replacement and stratified, heads recomputed from all covered examples (or, with
    ``recalculate_predictions=false``, the sample's), greedy and beam search, dense, sparse
    and histogram search, non-decomposable statistics, a squared loss."""
    X, Y = data
    _assert_same_fits(X, Y, monkeypatch, max_rules=boosting.RULE_BATCH + 10, **params)


def test_the_compacting_sparse_search_in_batches(data, monkeypatch):
    """The sparse search that compacts its entries within a rule (forced by a zero
    ``PREFETCH_BYTES``): each batched rule starts from the whole entries."""
    monkeypatch.setattr(prefetch, "PREFETCH_BYTES", 0)
    X, Y = data
    _assert_same_fits(X, Y, monkeypatch, max_rules=80, feature_format="sparse")


def test_searches_of_every_feature_compact_their_entries(data, monkeypatch):
    """Where every step searches every feature of sparse data, the batches search with the
    sparse search that compacts its entries (``representations.every_feature_state``),
    the loop with the one that reads them as they are: the same model."""
    from gpurules.backends.cpu import backend as cpu_backend, sparse_search

    chosen = []
    every_feature_state = cpu_backend.every_feature_state

    def spy(state, features, threads):
        state = every_feature_state(state, features, threads)
        chosen.append(state.module)
        return state

    monkeypatch.setattr(cpu_backend, "every_feature_state", spy)
    X, Y = data
    _assert_same_fits(X, Y, monkeypatch, max_rules=80, feature_format="sparse",
                      feature_sampling="none")
    assert chosen == [sparse_search.compacting]


def test_a_batch_cut_short_by_its_buffers_goes_on_in_the_next(data, monkeypatch):
    """Condition buffers with room for one rule of n conditions only: every batch ends
    after a rule or two, the next one goes on, and the model is the reference's."""
    X, Y = data
    rule_buffers = CpuBackend._rule_buffers
    batches = []

    def short(backend, count):
        rules = rule_buffers(backend, count)
        batches.append(count)
        return (rules[0][:X.shape[0] + 1],) + rules[1:]

    monkeypatch.setattr(CpuBackend, "_rule_buffers", short)
    _assert_same_fits(X, Y, monkeypatch, max_rules=40)
    assert len(batches) > 20


def test_batches_of_one_rule_where_a_batch_takes_long(data, monkeypatch):
    """A batch is sized by how long the last one took (``BATCH_SECONDS``): with no time
    allowed, every batch holds one rule, and the model is the same."""
    X, Y = data
    monkeypatch.setattr(boosting, "BATCH_SECONDS", 0.0)
    counts = []
    learn_rules = CpuBackend.learn_rules

    def counted(backend, plan, rng, count, score_room, first_rule):
        counts.append(count)
        return learn_rules(backend, plan, rng, count, score_room, first_rule)

    monkeypatch.setattr(CpuBackend, "learn_rules", counted)
    _assert_same_fits(X, Y, monkeypatch, max_rules=30)
    assert counts == [1] * 29


def test_a_batch_without_rules_or_reason_is_an_error(data, monkeypatch):
    """A backend whose batch learns nothing without saying why would loop forever: the
    learner raises instead."""
    X, Y = data
    monkeypatch.setattr(CpuBackend, "learn_rules",
                        lambda backend, plan, rng, count, room, first: ([], BATCH_LEARNED))
    with pytest.raises(RuntimeError, match="no rule and no reason"):
        BoomerClassifier(max_rules=5, parallel_rule_refinement="false").fit(X, Y)


@pytest.mark.parametrize("informative", [(5, 17, 33), (7,)])
def test_constant_features_redraw_and_stop_as_in_the_loop(informative, monkeypatch):
    """Mostly constant features: a rule's first condition draws other features until an
    informative one comes (``first_condition_redraws``), and a fit where none comes stops
    with the loop's warning (one informative feature: at the first rule)."""
    rng = np.random.default_rng(0)
    X = np.zeros((80, 40), np.float32)
    Y = (rng.random((80, 3)) < 0.3).astype(np.uint8)
    for k, j in enumerate(informative):
        X[:, j] = rng.integers(0, 4, 80)
        Y[:, k] |= X[:, j] > 1
    clf = _assert_same_fits(X, Y, monkeypatch, max_rules=60)
    stopped = len(informative) == 1
    assert (len(clf.model_) < 60) == stopped
    assert any("no condition on the sampled features" in w for w in clf.warned) == stopped


def test_a_zero_head_stops_the_batches_as_the_loop(data, monkeypatch):
    """A strong L1 weight makes every head zero after a few rules."""
    X, Y = data
    clf = _assert_same_fits(X, Y, monkeypatch, max_rules=200, head_type="single",
                            l1_regularization_weight=8.0)
    assert len(clf.model_) < 200 and any("head is zero" in w for w in clf.warned)


@pytest.mark.parametrize("params", [{}, {"head_type": "single",
                                         "l1_regularization_weight": 8.0}])
def test_the_fit_says_why_it_stopped_as_the_loop(data, params, monkeypatch, caplog):
    """The last progress line names the stop (``max_rules``, a zero head) as the loop's."""
    X, Y = data
    reasons = []
    for fused in (True, False):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="gpurules"):
            _fit(X, Y, fused, monkeypatch, max_rules=100, verbose=1, **params)
        done = [m for m in caplog.messages if "fit done" in m]
        reasons.append(done[-1].split("; ", 1)[1])
    assert reasons[0] == reasons[1]
    assert ("max_rules=100" in reasons[0]) == (not params)


@pytest.mark.parametrize("params", [
    {"instance_sampling": "with-replacement", "rule_pruning": "irep"},
    {"output_sampling": "without-replacement"},
    {"time_limit": 60},
    {"global_pruning": "pre-pruning"},
    {"loss": "squared-error-non-decomposable"},
])
def test_fits_the_batches_do_not_serve_take_the_loop(data, params, monkeypatch):
    """IREP on the examples an instance sample leaves out, output samples drawn, a time
    limit, pruning and non-decomposable statistics whose scale follows the statistics seen
    keep the learner's loop."""
    X, Y = data
    _, _, used = _fit(X, Y, True, monkeypatch, max_rules=5, **params)
    assert not used


@pytest.mark.parametrize("loss", ["squared-error-decomposable", "squared-hinge-decomposable"])
def test_a_batch_ends_where_the_scale_changes(data, loss, monkeypatch):
    """The squared losses' statistics outgrow their fixed-point scale as the scores grow:
    a batch ends with the rule that uses up ``BoostingLearner._score_room``, the learner
    re-encodes the statistics, and the model is the loop's."""
    X, Y = data
    scales, short = [], []
    set_scale, learn_rules = CpuBackend.set_scale, CpuBackend.learn_rules

    def spy_scale(backend, scale):
        scales.append(scale)
        return set_scale(backend, scale)

    def spy_rules(backend, plan, rng, count, score_room, first_rule):
        rules, status = learn_rules(backend, plan, rng, count, score_room, first_rule)
        short.append(len(rules) < count and score_room < np.inf)
        return rules, status

    monkeypatch.setattr(CpuBackend, "set_scale", spy_scale)
    monkeypatch.setattr(CpuBackend, "learn_rules", spy_rules)
    _assert_same_fits(X, Y, monkeypatch, max_rules=150, loss=loss, shrinkage=0.8)
    assert any(short) and len(set(scales)) > 2


def _learner(X, Y, backend, **params):
    """A BoostingLearner of ``params`` over ``backend``, its fit started on dense X."""
    config, _ = resolve_config(BoomerClassifier(**params))
    learner = boosting.BoostingLearner(config, backend, np.random.default_rng(0))
    dtype = boosting.statistic_dtype(config.loss, config.statistic_bits)  # as fit does
    backend.start_fit(presort_dense(X, np.zeros(X.shape[1], bool)), Y, config.loss,
                      np.ones(X.shape[0]), 2.0 ** 30, dtype)
    learner._example_weight = 1.0 if dtype is np.int32 else None
    learner._train = learner._strata = None  # (as fit sets them: no holdout set, no strata)
    return learner


def test_searches_on_several_threads_take_the_loop(data, monkeypatch):
    """A backend whose updates may run on two threads does not learn in batches (the loop
    calls the serial forms); the same on one thread does, and so does one whose searches
    may run on two, as a team (``jit.team``: the exact search's features shared by the
    threads; ``test_team.py``)."""
    X, Y = data
    monkeypatch.setattr(threads, "MIN_PARALLEL_WORK", 0)
    monkeypatch.setattr(threads, "MIN_PARALLEL_FIT", 0)
    assert _learner(X, Y, CpuBackend(1, 2))._rule_plan(*X.shape[::-1]) is None
    assert _learner(X, Y, CpuBackend(1, 1))._rule_plan(*X.shape[::-1]) is not None
    team = _learner(X, Y, CpuBackend(2, 1))
    plan = team._rule_plan(*X.shape[::-1])
    assert plan is not None and team.backend._team_threads(plan) == 2


def test_learn_rules_returns_the_rules_it_applied(data):
    """``CpuBackend.learn_rules`` called directly: the rules of a batch, their heads
    shrunk, and the statistics they leave equal to applying them one by one."""
    X, Y = data
    backend = CpuBackend(1, 1)
    plan = _learner(X, Y, backend, head_type="single", shrinkage=0.5)._rule_plan(*X.shape[::-1])
    rules, status = backend.learn_rules(plan, np.random.default_rng(1), 5)
    assert status == BATCH_LEARNED and len(rules) == 5
    reference = _learner(X, Y, CpuBackend(1, 1)).backend
    for conditions, labels, scores, covered, largest in rules:
        assert labels.shape == (1,) and largest == abs(scores[0]) > 0
        reference.reset_coverage()
        for feature, op, threshold in conditions:
            reference.apply_refinement(Refinement(feature, op, threshold, 0.0, 0, -1,
                                                  None, None))
        assert reference.covered_mask().sum() == covered
        reference.update_statistics(labels, scores)
    np.testing.assert_array_equal(backend.g, reference.g)
    np.testing.assert_array_equal(backend.h, reference.h)
    np.testing.assert_array_equal(backend.P, reference.P)


def test_sparse_input_in_batches(data, monkeypatch):
    """A scipy.sparse X (the sparse representation chosen from the input)."""
    X, Y = data
    Xs = sp.csr_matrix(np.nan_to_num(X))
    got, _, used = _fit(Xs, Y, True, monkeypatch, max_rules=30)
    want, _, _ = _fit(Xs, Y, False, monkeypatch, max_rules=30)
    assert used and str(got.model_) == str(want.model_)


@pytest.mark.parametrize("head_type", ["complete", "single"])
def test_regression_in_batches(head_type, monkeypatch):
    """``BoomerRegressor`` (the squared error on real-valued targets, whose scale follows
    the targets and the scores) learns the loop's model in batches."""
    X, Y = make_regression(n_samples=150, n_features=6, n_targets=3, noise=5.0,
                           random_state=4)
    models, used = [], []
    learns_rules = CpuBackend.learns_rules
    for fused in (True, False):
        with monkeypatch.context() as m:
            m.setattr(CpuBackend, "learns_rules",
                      lambda backend, plan: used.append(fused and learns_rules(backend, plan))
                      or used[-1])
            reg = BoomerRegressor(random_state=2, max_rules=120, head_type=head_type,
                                  parallel_rule_refinement="false",
                                  parallel_statistic_update="false").fit(X, Y)
        models.append((str(reg.model_), reg.predict(X)))
    assert any(used)
    assert models[0][0] == models[1][0]
    np.testing.assert_array_equal(models[0][1], models[1][1])
