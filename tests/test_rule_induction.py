"""The greedy refinement loop that BOOMER and SeCo share (``learners/rule_induction.py``):
its control flow against a scripted engine, and, through BOOMER's hooks, the fused CPU loop
(``Backend.refine_rule``) against the reference engine built from the single steps
(``StepwiseSearch`` over ``refine_stepwise``)."""

import numpy as np
import pytest
from sklearn.datasets import make_multilabel_classification

from gpurules import BoomerClassifier
from gpurules.backends.base import Refinement, SearchSettings
from gpurules.backends.cpu import CpuBackend
from gpurules.data.presorted import presort_dense
from gpurules.estimators.boomer_params import resolve_config
from gpurules.learners.boosting import statistic_dtype
from gpurules.learners.boosting_rule import BoostingRule, HeadFixingEngine
from gpurules.learners.rule_induction import (Block, Growth, StepwiseSearch,
                                             first_condition_redraws, induce_rule)
from gpurules.objectives.heads import HEAD_COMPLETE


def _refinement(feature, quality):
    sums = np.full(2, feature, np.int64)
    return Refinement(feature, 0, np.float32(feature), quality, 10 - feature, -1, sums, sums)


class _Scripted:
    """An engine returning scripted blocks and hooks recording what the loop asks."""

    def __init__(self, blocks, max_blocks=10, redraws=0):
        self.blocks, self.max_blocks, self.calls, self.after = list(blocks), max_blocks, [], []
        self.redraws = redraws

    def refine_rule(self, uniforms, labels, weights, totals, search, fix_label_after):
        self.calls.append((totals, search.min_quality))
        refs, finished = self.blocks.pop(0)
        conditions = [(r.feature, r.op, r.threshold) for r in refs]
        return conditions, (refs[-1] if refs else None), labels, finished

    def start(self):
        search = SearchSettings(HEAD_COMPLETE, np.zeros(2), 1, -np.inf)
        return Growth(self, np.arange(2, dtype=np.int32), None, "totals", search,
                      redraws=self.redraws)

    def next_block(self, growth):
        return Block(np.empty((2, 0)), 0) if len(self.calls) < self.max_blocks else None

    def after_block(self, growth):
        self.after.append(len(growth.conditions))

    def finish(self, growth):
        return growth


def test_the_loop_carries_each_block_into_the_next_and_stops_when_finished():
    blocks = [([_refinement(1, 0.5), _refinement(2, 0.7)], False),
              ([_refinement(3, 0.9)], True), ([_refinement(4, 1.0)], False)]
    script = _Scripted(blocks)
    growth = induce_rule(script)
    assert [c[0] for c in growth.conditions] == [1, 2, 3]
    assert growth.best.feature == 3 and growth.search.min_quality == 0.9
    assert growth.totals[2] == 7
    assert script.calls[0] == ("totals", -np.inf)
    assert script.calls[1][1] == 0.7 and script.calls[1][0][2] == 8
    assert script.after == [2, 3]  # after every block that added conditions


def test_the_loop_stops_at_an_empty_block_and_when_the_hooks_plan_none():
    script = _Scripted([([_refinement(1, 0.5)], False), ([], True)])
    assert [c[0] for c in induce_rule(script).conditions] == [1]
    assert script.after == [1]  # not after the empty block
    assert induce_rule(_Scripted([([], True)])) is None  # no condition: no rule
    script = _Scripted([([_refinement(1, 0.5)], False)], max_blocks=1)
    assert len(induce_rule(script).conditions) == 1 and script.blocks == []


def test_the_first_condition_is_redrawn_a_bounded_number_of_times():
    """An empty first block is followed by another (features drawn anew) while
    ``Growth.redraws`` lasts; an empty block after a condition ends the rule."""
    script = _Scripted([([], True), ([], True), ([_refinement(1, 0.5)], False), ([], True),
                        ([_refinement(2, 0.7)], False)], redraws=3)
    growth = induce_rule(script)
    assert [c[0] for c in growth.conditions] == [1] and growth.redraws == 1
    assert len(script.calls) == 4 and script.after == [1]
    assert all(call == ("totals", -np.inf) for call in script.calls[:3])
    script = _Scripted([([], True)] * 3 + [([_refinement(1, 0.5)], False)], redraws=2)
    assert induce_rule(script) is None and len(script.calls) == 3


def test_first_condition_redraws():
    """Enough redraws for the draws to add up to every feature; none without sampling."""
    assert first_condition_redraws(100, 7) == 14  # 15 draws of 7 >= 100 features
    assert first_condition_redraws(12, 4) == 2
    assert first_condition_redraws(13, 4) == 3
    assert first_condition_redraws(10, 0) == 0 and first_condition_redraws(10, 10) == 0
    assert first_condition_redraws(10, 12) == 0


@pytest.fixture(scope="module")
def data():
    X, Y = make_multilabel_classification(n_samples=150, n_features=8, n_classes=4,
                                          random_state=3)
    return X.astype(np.float32), Y.astype(np.uint8)


class _StepwiseRule(BoostingRule):
    """BOOMER's hooks with the reference engine instead of the backend's fused loop."""

    def start(self):
        growth = super().start()
        growth.engine = StepwiseSearch(self.backend, self.num_features)
        return growth


@pytest.mark.parametrize("params", [
    {}, {"head_type": "single"}, {"head_type": "partial-fixed"},
    {"head_type": "single", "rule_induction": "top-down-greedy{max_head_refinements=3}"},
    {"rule_induction": "top-down-greedy{max_conditions=3}", "feature_sampling": "none"},
    {"instance_sampling": "with-replacement", "rule_pruning": "irep"},
    {"head_type": "partial-dynamic"},
    {"head_type": "partial-fixed", "loss": "logistic-non-decomposable"},
    {"head_type": "partial-dynamic",
     "rule_induction": "top-down-greedy{max_conditions=2,max_head_refinements=2}"},
])
def test_fused_engine_grows_the_rules_of_the_reference_engine(data, params, monkeypatch):
    """Rules grown one after the other (each head applied) with the CPU's fused loop
    equal those grown with ``refine_stepwise``, condition for condition (a partial head
    fixed inside the fused loop, by the learner between the reference's blocks)."""
    _, calls = _grow_both(data, params, monkeypatch)
    assert (calls > 0) == ("partial" in params.get("head_type", ""))


def test_a_head_fixed_in_the_fused_loop_leaves_the_draws_of_the_reference(data,
                                                                           monkeypatch):
    """Rules that stop at the fix (their coverage at ``min_coverage``) set the generator
    back to where the reference's first block ends."""
    params = {"head_type": "partial-dynamic",
              "rule_induction": "top-down-greedy{min_coverage=60}"}
    rewinds, calls = _grow_both(data, params, monkeypatch, num_rules=12)
    assert 0 < rewinds < calls


@pytest.mark.parametrize("max_conditions, rows", [(0, 9), (20, 9), (5, 5), (2, 2), (1, 1)])
def test_the_block_that_fixes_a_partial_head_takes_the_draws_of_the_next(data,
                                                                         max_conditions,
                                                                         rows):
    """The fix's block (1 step by default) and the block the learner would plan after it
    (8 steps, fewer near ``max_conditions``; 0: no limit), drawn in one."""
    X, Y = data
    config, _ = resolve_config(BoomerClassifier(
        head_type="partial-dynamic",
        rule_induction=f"top-down-greedy{{max_conditions={max_conditions}}}"))
    backend = CpuBackend(1, 1)
    backend.start_fit(presort_dense(X, np.zeros(X.shape[1], bool)), Y, config.loss,
                      np.ones(X.shape[0]), 2.0 ** 20, statistic_dtype(config.loss))
    labels = np.arange(Y.shape[1], dtype=np.int32)
    hooks = BoostingRule(config, backend, np.random.default_rng(0), None, None, labels,
                         X.shape[1])
    growth = hooks.start()
    assert isinstance(growth.engine, HeadFixingEngine)
    block = hooks.next_block(growth)
    assert block.uniforms.shape[0] == rows and block.fix_label_after == 1


def _grow_both(data, params, monkeypatch, num_rules=6):
    """Rules grown by the fused and the reference engine, asserted equal, as the next
    draw of the generator. Returns (generator rewinds, calls) of the fused run's
    HeadFixingEngines."""
    X, Y = data
    config, _ = resolve_config(BoomerClassifier(**params))
    grown, draws, counts = [], [], []
    refine_rule = HeadFixingEngine.refine_rule

    def counted(engine, *args):
        before = engine.rewinds
        result = refine_rule(engine, *args)
        counts.append(engine.rewinds - before)
        return result

    monkeypatch.setattr(HeadFixingEngine, "refine_rule", counted)
    for hooks in (BoostingRule, _StepwiseRule):
        backend, rng = CpuBackend(1, 1), np.random.default_rng(4)
        backend.start_fit(presort_dense(X, np.zeros(X.shape[1], bool)), Y, config.loss,
                          np.ones(X.shape[0]), 2.0 ** 20, statistic_dtype(config.loss))
        rules = []
        for _ in range(num_rules):
            weights = config.instance_sampling.sample(rng, X.shape[0])
            labels = np.arange(Y.shape[1], dtype=np.int32)
            rule = induce_rule(hooks(config, backend, rng, None, weights, labels, X.shape[1]))
            conditions, head, scores, count = rule
            backend.update_statistics(head, scores * config.shrinkage)
            rules.append((conditions, head.tolist(), scores.tolist(), count))
        grown.append(rules)
        draws.append(rng.random())
    assert grown[0] == grown[1] and draws[0] == draws[1]
    if "rule_pruning" not in params:  # (IREP cuts these rules to one condition)
        assert any(len(rule[0]) > 1 for rule in grown[0])
    return sum(counts), len(counts)


def test_an_empty_selection_of_features_ends_the_rule(data):
    X, Y = data
    backend = CpuBackend(1, 1)
    loss = resolve_config(BoomerClassifier())[0].loss
    backend.start_fit(presort_dense(X, np.zeros(X.shape[1], bool)), Y, loss,
                      np.ones(X.shape[0]), 2.0 ** 20, statistic_dtype(loss))
    backend.reset_coverage()
    search = SearchSettings(HEAD_COMPLETE, np.array([0.0, 1.0]), 1, -np.inf)
    labels = np.arange(Y.shape[1], dtype=np.int32)
    engine = StepwiseSearch(backend, X.shape[1], lambda f: f[:0])
    conditions, last, _, finished = engine.refine_rule(
        np.empty((3, 0)), labels, None, backend.covered_totals(None), search, 0)
    assert conditions == [] and last is None and finished
    engine = StepwiseSearch(backend, X.shape[1], lambda f: f[f == 2])
    conditions, last, _, _ = engine.refine_rule(
        np.empty((3, 0)), labels, None, backend.covered_totals(None), search, 0)
    assert conditions and {c[0] for c in conditions} == {2}
