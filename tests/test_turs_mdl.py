"""TURS code lengths: regret, integer code, literal/rule/model bits, the score of rule sets
and the batched candidate evaluation, against slow NumPy oracles."""

import math

import numba
import numpy as np
import pytest

from gpurules.backends.cpu import class_histograms
from gpurules.backends.cpu.class_histograms import CpuClassHistograms
from gpurules.jit.threads import thread_limit
from gpurules.learners.turs import RuleSet
from gpurules.learners.turs_rule import RuleState
from gpurules.learners.turs_beam import candidate_batch, evaluate_rules
from gpurules.learners.turs_data import cut_points, prepare
from gpurules.objectives import mdl
from tests.reference import turs_reference as ref


# -- regret --------------------------------------------------------------------------------
@pytest.mark.parametrize("K", [1, 2, 3, 4])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8, 11])
def test_regret_matches_enumeration(n, K):
    assert mdl.log2_regret(n, K) == pytest.approx(math.log2(ref.brute_regret(n, K)),
                                                  rel=1e-12, abs=1e-12)


def test_regret_known_values_and_table():
    assert mdl.log2_regret(1, 2) == pytest.approx(1.0)  # R(1, 2) = 2
    assert mdl.log2_regret(2, 2) == pytest.approx(math.log2(2.5))
    table = mdl.regret_table(300, 5)
    assert table.shape == (301,) and not table.flags.writeable
    for n in (0, 1, 17, 123, 300):
        assert table[n] == mdl.log2_regret(n, 5)
    assert np.all(np.diff(table) > 0)
    # Szpankowski's expansion: ln R = (K-1)/2 ln(n/2) + ln(sqrt(pi)/G(K/2))
    #                                 + sqrt(2) K G(K/2) / (3 G(K/2 - 1/2) sqrt(n)) + O(1/n)
    n, K = 10 ** 6, 10
    nats = ((K - 1) / 2 * math.log(n / 2) + 0.5 * math.log(math.pi) - math.lgamma(K / 2)
            + math.sqrt(2) * K * math.exp(math.lgamma(K / 2) - math.lgamma(K / 2 - 0.5))
            / (3 * math.sqrt(n)))
    assert mdl.log2_regret(n, K) == pytest.approx(nats / math.log(2), abs=1e-4)
    assert np.isfinite(mdl.log2_regret(10 ** 6, 400))  # rescaled recurrence, no overflow
    with pytest.raises(ValueError):
        mdl.log2_regret(-1, 2)


# -- integer and model codes ---------------------------------------------------------------
def test_universal_code():
    c0 = math.log2(mdl.UNIVERSAL_C0)
    assert mdl.universal_code(0) == 0
    assert mdl.universal_code(1) == pytest.approx(c0)
    assert mdl.universal_code(2) == pytest.approx(c0 + 1)
    assert mdl.universal_code(16) == pytest.approx(c0 + 4 + 2 + 1)
    kraft = sum(2.0 ** -mdl.universal_code(n) for n in range(1, 100_000))
    assert kraft < 1


def test_literal_rule_and_model_bits():
    assert mdl.numeric_literal_bits(20, False) == pytest.approx(2 + math.log2(20))
    assert mdl.numeric_literal_bits(20, True) == pytest.approx(1 + math.log2(190))
    assert mdl.numeric_literal_bits(1, False) == pytest.approx(1)  # no form bit
    assert mdl.numeric_literal_bits(20, False, "cuts") == pytest.approx(math.log2(20))
    assert mdl.numeric_literal_bits(20, True, "cuts") == pytest.approx(math.log2(190))
    assert mdl.numeric_literal_bits(1, False, "cuts") == 0
    with pytest.raises(ValueError, match="literal_code"):
        mdl.numeric_literal_bits(20, False, "bits")
    assert mdl.nominal_literal_bits(4) == pytest.approx(3)
    with pytest.raises(ValueError):
        mdl.numeric_literal_bits(1, True)
    bits = [3.0, 4.5]
    assert mdl.rule_bits(10, bits) == pytest.approx(math.log2(10) + math.log2(45) + 7.5)
    assert mdl.rule_bits(10, bits, "universal") == pytest.approx(
        mdl.universal_code(2) + math.log2(45) + 7.5)
    with pytest.raises(ValueError, match="count_code"):
        mdl.rule_bits(10, bits, "gamma")
    assert mdl.model_bits([]) == 0
    assert mdl.model_bits([10.0, 12.0, 5.0]) == pytest.approx(
        mdl.universal_code(3) + 27 - math.log2(6))


@pytest.mark.parametrize("method", ["sorted-ranks", "quantiles"])
def test_cut_points_leave_both_sides_nonempty(method):
    x = np.array([1, 1, 1, 2, 2, 3, np.nan, 7, 7, 7], np.float32)
    assert np.allclose(cut_points(x, 20, method), [1.5, 2.5, 5.0])
    many = np.arange(1000, dtype=np.float32)
    cuts = cut_points(many, 20, method)
    assert len(cuts) == 20 and np.all(np.diff(cuts) > 0)
    assert cut_points(np.full(5, 3.0, np.float32), 20, method).size == 0
    with pytest.raises(ValueError, match="cut_point_method"):
        cut_points(x, 20, "jitter")


def _authors_cuts(x, n_cut_points):
    """The authors' ``candidate_cuts_quantile_mid_points`` for one feature, with their random
    1e-6 jitter replaced by one far below the gaps and growing along the sorted order (so
    tied values stay in place and a gap inside a tie lies just above the tied value)."""
    distinct = np.unique(x)
    if len(distinct) <= 1:
        return np.zeros(0)
    if np.array_equal(distinct, [0.0, 1.0]):
        return np.array([0.5])
    s = np.sort(x) + np.arange(len(x)) * 1e-9
    gaps = (s[:-1] + s[1:]) / 2
    m = min(len(distinct) - 1, n_cut_points)
    if n_cut_points > 1 and len(gaps) > m:
        gaps = gaps[np.linspace(0, len(gaps) - 1, m + 2, dtype=int)[1:-1]]
    return gaps


@pytest.mark.parametrize("n_cut_points", [1, 2, 5, 20])
def test_sorted_rank_cut_points_split_as_the_authors_cuts(n_cut_points):
    """Same partitions of the training values as the authors' cut points (ties and small
    value sets included); a cut of theirs that leaves one side empty has no counterpart."""
    rng = np.random.default_rng(3)
    columns = [rng.integers(0, k, 300).astype(np.float64) for k in (2, 3, 5, 30)]
    columns += [rng.normal(size=157).round(1), rng.normal(size=40), 1.0 + rng.integers(0, 2, 99)]
    for x in columns:
        ours = {tuple(x >= c) for c in cut_points(x, n_cut_points)}
        theirs = {tuple(x >= c) for c in _authors_cuts(x, n_cut_points)}
        assert ours == theirs - {tuple(np.zeros(len(x), bool))}, x[:10]


# -- scores of rule sets -------------------------------------------------------------------
def _problem(seed=0, n=60, literal_code="form-operator-cuts"):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    X[:, 3] = rng.integers(0, 3, n)
    X[rng.random((n, 4)) < 0.08] = np.nan
    y = ((X[:, 0] > 0).astype(int) + (X[:, 3] == 1)).astype(int)
    y[rng.random(n) < 0.1] = 0
    nominal = np.array([False, False, False, True])
    return prepare(X, y, 3, nominal, 5, literal_code=literal_code), X, y


def _rule(data, *lits):
    r = RuleState(data)
    for lit in lits:
        r = r.refined(lit)
    return r


def _lit(data, f, op, arg):
    hit = (data.lit_feat == f) & (data.lit_op == op) & (data.lit_arg == arg)
    return int(np.flatnonzero(hit)[0])


def _handmade(data):
    a = _rule(data, _lit(data, 0, mdl.OP_GE, 3))
    b = _rule(data, _lit(data, 1, mdl.OP_LT, 3), _lit(data, 1, mdl.OP_GE, 1))
    c = _rule(data, _lit(data, 3, mdl.OP_EQ, 1), _lit(data, 0, mdl.OP_LT, 4))
    return [a, b, c]


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_score_of_handmade_rule_sets_matches_direct_computation(k):
    data, X, y = _problem()
    rules = _handmade(data)[:k]
    rs = RuleSet(data, rules)
    want = ref.total_bits(y, 3, [r.cover for r in rules], [r.bits() for r in rules])
    assert rs.total_bits == pytest.approx(want, rel=1e-10)
    # the interval literal is coded as one literal over a pair of cut points
    if k >= 2:
        assert rules[1].fstate[1] == mdl.F_INTERVAL and len(rules[1].literal_bits()) == 1


def test_rules_keep_their_literals_semantics():
    data, X, y = _problem()
    a, b, c = _handmade(data)
    cuts0, cuts1, levels3 = data.values[0], data.values[1], data.values[3]
    with np.errstate(invalid="ignore"):
        assert np.array_equal(a.cover, X[:, 0] >= cuts0[2])
        assert np.array_equal(b.cover, (X[:, 1] < cuts1[2]) & (X[:, 1] >= cuts1[0]))
        assert np.array_equal(c.cover, (X[:, 3] == levels3[1]) & (X[:, 0] < cuts0[3]))


@pytest.mark.parametrize("literal_code", mdl.LITERAL_CODES)
@pytest.mark.parametrize("k", [0, 1, 3])
@pytest.mark.parametrize("depth", [0, 1, 2])
def test_batched_candidate_scores_match_masking_reference(k, depth, literal_code):
    """The scores against the reference, in either numeric literal code (the reference's
    model change is ``RuleSet.model_change`` of the refined rule, its local test the
    one-sided literal with form and operator bits)."""
    data, X, y = _problem(seed=k + 3 * depth, n=80, literal_code=literal_code)
    rs = RuleSet(data, _handmade(data)[:k])
    rule = _rule(data, *[_lit(data, 1, mdl.OP_LT, 4), _lit(data, 3, mdl.OP_NE, 0)][:depth])
    # the rule in a batch with two others: its row is its own pass's
    batch = [_rule(data, _lit(data, 0, mdl.OP_GE, 2)), rule, RuleState(data)]
    incl, excl, cov_i, cov_e, ok_i, ok_e = (
        a[1] for a in evaluate_rules(rs, CpuClassHistograms(data), batch))
    checked = 0
    for lit, want in enumerate(ref.literal_scores(rs, rule)):
        if want is None:
            assert ok_i[lit] == ok_e[lit] == False  # noqa: E712
            assert incl[lit] == excl[lit] == -np.inf
            continue
        g_i, g_e, s, e, local_i, local_e = want
        assert (cov_i[lit], cov_e[lit]) == (s, e)
        assert incl[lit] * e == pytest.approx(g_i, abs=1e-6)
        assert excl[lit] * e == pytest.approx(g_e, abs=1e-6)
        if abs(local_i) > 1e-6:
            assert ok_i[lit] == (local_i > 0)
        if abs(local_e) > 1e-6:
            assert ok_e[lit] == (local_e > 0)
        checked += 1
    assert checked > 10


def _frontier(data):
    return [RuleState(data), _rule(data, _lit(data, 1, mdl.OP_LT, 4)),
            _rule(data, _lit(data, 3, mdl.OP_NE, 0), _lit(data, 0, mdl.OP_GE, 2)),
            _rule(data, _lit(data, 0, mdl.OP_GE, 3))]


def test_candidate_batch_columns_are_each_rules_groups():
    data, X, y = _problem(seed=4, n=80)
    rs = RuleSet(data, _handmade(data))
    rules = _frontier(data)
    batch = candidate_batch(rs, rules)
    assert batch.n_rules == len(rules) and batch.col.dtype == np.int32
    start = 0
    for r, rule in enumerate(rules):
        idx = np.flatnonzero(rule.cover)
        present = np.unique(np.concatenate([[0], rs.grp[idx]]))
        a, b = batch.group_offset[r], batch.group_offset[r + 1]
        assert np.array_equal(batch.idx[start:start + len(idx)], idx)
        assert np.array_equal(batch.col[start:start + len(idx)] - a,
                              np.searchsorted(present, rs.grp[idx]))
        assert np.array_equal(batch.union_counts[a:b], rs.union_counts[present])
        assert np.array_equal(batch.union_size[a:b], rs.union_size[present])
        start += len(idx)
    assert start == len(batch.idx) and batch.group_offset[-1] == batch.n_columns


@pytest.mark.parametrize("k", [0, 3])
def test_batched_rows_equal_one_rule_passes(k):
    data, X, y = _problem(seed=5, n=80)
    rs = RuleSet(data, _handmade(data)[:k])
    backend = CpuClassHistograms(data)
    rules = _frontier(data)
    together = backend.evaluate(candidate_batch(rs, rules))
    for r, rule in enumerate(rules):
        alone = backend.evaluate(candidate_batch(rs, [rule]))
        for a, b in zip(together, alone):
            assert a.shape == (len(rules), len(data.lit_feat)) and b.shape[0] == 1
            assert a.dtype == b.dtype and np.array_equal(a[r], b[0])


def test_empty_batch_scores_nothing():
    data, X, y = _problem()
    rs = RuleSet(data, _handmade(data)[:1])
    batch = candidate_batch(rs, [])
    assert batch.n_rules == 0 and batch.idx.shape == (0,)
    out = CpuClassHistograms(data).evaluate(batch)
    assert [a.shape for a in out] == [(0, len(data.lit_feat))] * 5
    assert [a.dtype for a in out] == [np.int64] * 4 + [np.int8]


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two Numba threads")
def test_parallel_forms_score_as_the_serial_ones(monkeypatch):
    data, X, y = _problem(seed=6, n=80)
    rs = RuleSet(data, _handmade(data))
    batch = candidate_batch(rs, _frontier(data))
    serial = CpuClassHistograms(data).evaluate(batch)
    monkeypatch.setattr(class_histograms, "PARALLEL_WORK", -1)  # every phase parallel
    with thread_limit(2):
        parallel = CpuClassHistograms(data).evaluate(batch)
    assert class_histograms.score_all.compiled_forms()[True].signatures
    for a, b in zip(serial, parallel):
        assert a.dtype == b.dtype and np.array_equal(a, b)
