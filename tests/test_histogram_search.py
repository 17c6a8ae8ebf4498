"""The CPU histogram search against the reference in tests/reference/histogram.py and
against the exact search (with one bin per distinct value both must agree)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpurules.backends.base import SearchSettings
from gpurules.backends.cpu import CpuBackend
from gpurules.backends.cpu.coverage import apply_binned_condition
from gpurules import BoomerClassifier
from gpurules.backends.cpu import histograms
from gpurules.backends.cpu.histogram_search import scan_histograms
from gpurules.backends.cpu.histograms import _splits_examples, build_histograms, explicit_entries
from gpurules.conditions import OP_EQ, OP_GR, OP_LEQ, OP_NEQ
from gpurules.data.binning import bin_features
from gpurules.data.presorted import presort_dense
from gpurules.objectives.heads import HEAD_COMPLETE, HEAD_SINGLE
from gpurules.objectives.losses import DECOMPOSABLE_LOSSES
from tests.reference import histogram as ref
from tests.reference.cuda_reference import exact_bins
from tests.reference.search import (USELESS, assert_condition_sums, constant_columns_problem,
                                    satisfied)

INV_SCALE = 2.0 ** -20
METHODS = ["equal-width", "equal-frequency"]


def random_problem(rng, n, A, K, n_distinct, nan_frac=0.0, nominal_frac=0.0):
    """X float32 (n, A) with duplicates, NaNs and nominal columns; g, h int32 (n, K), as
    the estimators store the logistic losses' statistics (so their compiled forms)."""
    X = (rng.integers(0, n_distinct, size=(n, A)) * 0.37 - 1.0).astype(np.float32)
    X[rng.random((n, A)) < nan_frac] = np.nan
    nominal = rng.random(A) < nominal_frac
    X[:, nominal] = np.floor(np.abs(X[:, nominal]) * 3)
    g = rng.integers(-2 ** 20, 2 ** 20, size=(n, K), dtype=np.int32)
    h = rng.integers(0, 2 ** 19, size=(n, K), dtype=np.int32)
    return X, nominal, g, h


def search(binned, mask, indicator, weights, g, h, features, labels, s, n_threads=1):
    """Histograms plus the best refinement over the sampled features, picked as
    ``CpuBackend.find_best_refinement`` does. Returns (best tuple or None, histograms, outs)."""
    S, K, B = features.shape[0], g.shape[1], binned.total_bins
    hist, count = np.full((B, 2 * K), -7, np.int64), np.full(B, -7, np.int64)
    build_histograms(features, binned.bin_index, binned.bin_offset, mask, indicator, weights,
                     g, h, hist, count, n_threads=n_threads)
    hists = (hist[:, :K], hist[:, K:], count)  # the one (B, K + W) row layout, split
    outs = (np.full(S, -np.inf), np.full(S, -1, np.int8), np.zeros(S, np.float32),
            np.zeros(S, np.int64), np.full(S, -1, np.int32), np.zeros((S, K), np.int64),
            np.zeros((S, K), np.int64))
    scan_histograms(features, binned.bin_offset, binned.bin_min, binned.bin_max, binned.nominal,
                    hist, count, labels, s.head_mode, s.params, INV_SCALE, s.min_coverage,
                    int(((mask == indicator) & (weights != 0)).sum()), s.min_quality, *outs,
                    n_threads=n_threads)
    q, op, thr, cnt, label, out_g, out_h = outs
    if not (op >= 0).any():
        return None, hists, outs
    j = int(np.argmax(np.where(op >= 0, q, -np.inf)))
    best = (q[j], int(features[j]), int(op[j]), thr[j], int(cnt[j]), int(label[j]), out_g[j],
            out_h[j])
    return best, hists, outs


def check_against_reference(X, nominal, g, h, rng, single, method="equal-frequency",
                            bin_ratio=0.5, weights=None, min_coverage=1, refine_first=False,
                            n_threads=1):
    n, A = X.shape
    K = g.shape[1]
    binned = bin_features(X, nominal, method, bin_ratio=bin_ratio)
    weights = np.ones(n, np.int32) if weights is None else weights
    features = rng.permutation(A)[:min(A, 3)].astype(np.int64)
    labels = np.arange(K, dtype=np.int32)
    head = HEAD_SINGLE if single else HEAD_COMPLETE
    mask = np.zeros(n, np.int32)
    if refine_first:  # search below an existing condition to exercise the coverage mask
        first, _, _ = search(binned, mask, 0, weights, g, h, np.arange(A, dtype=np.int64),
                             labels, SearchSettings.boosting(head, 0.0, 1.0, min_coverage, -np.inf))
        if first is None:
            return None
        _, f, op, t = first[:4]
        apply_binned_condition(f, op, t, binned.bin_index, binned.bin_offset, binned.bin_min,
                               mask, 0)
        active = weights != 0
        np.testing.assert_array_equal((mask == 1)[active], satisfied(X[:, f], op, t)[active])
    covered = mask == int(refine_first)
    s = SearchSettings.boosting(head, 0.1, 1.0, min_coverage, -np.inf)
    got, hists, _ = search(binned, mask, int(refine_first), weights, g, h, features, labels, s,
                           n_threads)
    want_hists = ref.histograms(binned, features, covered, weights, g, h)
    rows = np.concatenate([np.arange(binned.bin_offset[f], binned.bin_offset[f + 1])
                           for f in features])
    others = np.setdiff1d(np.arange(binned.total_bins), rows)
    for have, want in zip(hists, want_hists):
        np.testing.assert_array_equal(have[rows], want[rows])
        assert (have[others] == -7).all()  # rows of other features are left alone
    want = ref.best_refinement(binned, covered, weights, g, h, features, labels, single, 0.1,
                               1.0, INV_SCALE, min_coverage, -np.inf)
    if want is None:
        assert got is None
        return None
    assert got is not None
    assert got[0] == pytest.approx(want[0], rel=1e-12)
    # the chosen condition is one of the optimal ones, and its sums are those of the examples
    # it selects by their raw values
    assert_condition_sums(X, covered, weights, g, h, got[1], got[2], got[3], got[4], got[6],
                          got[7])
    if want[1:4] == got[1:4]:  # else an equally good condition (a tie) was chosen
        assert got[4:6] == want[4:6]
    return got


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("single", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_search_matches_reference(seed, single, method):
    rng = np.random.default_rng(seed)
    X, nominal, g, h = random_problem(rng, n=80, A=5, K=3, n_distinct=15)
    check_against_reference(X, nominal, g, h, rng, single, method)


@pytest.mark.parametrize("method", METHODS + ["exact"])
@pytest.mark.parametrize("single", [False, True])
@pytest.mark.parametrize("seed", range(2))
def test_no_condition_that_changes_nothing(seed, single, method):
    """``test_exact_search.test_no_condition_that_changes_nothing`` on bins: a candidate
    covering every covered example of non-zero weight is never a refinement (the scan
    compares with the rule's count, not with the feature's total, which leaves out the
    examples missing the feature); as the reference, for three steps."""
    rng = np.random.default_rng(seed)
    X, nominal, g, h, weights = constant_columns_problem(rng)
    binned = exact_bins(X, nominal) if method == "exact" else \
        bin_features(X, nominal, method, bin_ratio=0.3)
    labels = np.arange(g.shape[1], dtype=np.int32)
    s = SearchSettings.boosting(HEAD_SINGLE if single else HEAD_COMPLETE, 0.0, 1.0, 1,
                                -np.inf)
    for features in (USELESS, np.arange(X.shape[1], dtype=np.int64)):
        mask, indicator = np.zeros(X.shape[0], np.int32), 0
        for step in range(3):
            covered = mask == indicator
            got, _, _ = search(binned, mask, indicator, weights, g, h, features, labels, s)
            want = ref.best_refinement(binned, covered, weights, g, h, features, labels,
                                       single, 0.0, 1.0, INV_SCALE, 1, -np.inf)
            if want is None:
                assert got is None and (step > 0 or features is USELESS)
                break
            assert features is not USELESS
            assert got[1:5] == want[1:5] and got[0] == pytest.approx(want[0], rel=1e-12)
            assert got[4] < (covered & (weights != 0)).sum()
            apply_binned_condition(got[1], got[2], got[3], binned.bin_index,
                                   binned.bin_offset, binned.bin_min, mask, indicator)
            indicator += 1


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", range(4))
def test_missing_nominal_weights_and_coverage(seed, method):
    rng = np.random.default_rng(100 + seed)
    X, nominal, g, h = random_problem(rng, n=90, A=6, K=4, n_distinct=9, nan_frac=0.2,
                                      nominal_frac=0.5)
    weights = rng.integers(0, 3, size=90).astype(np.int32)
    # two threads on odd seeds: the build splits the 3 sampled features into chunks of 1, 2
    check_against_reference(X, nominal, g, h, rng, single=seed % 2 == 0, method=method,
                            weights=weights, refine_first=True, min_coverage=3,
                            n_threads=1 + seed % 2)


@pytest.mark.parametrize("method", METHODS)
def test_two_threads_equal_one_bit_for_bit(method):
    rng = np.random.default_rng(7)
    X, nominal, g, h = random_problem(rng, n=400, A=12, K=5, n_distinct=40, nan_frac=0.05,
                                      nominal_frac=0.3)
    binned = bin_features(X, nominal, method, bin_ratio=0.3)
    weights = rng.integers(0, 3, size=400).astype(np.int32)
    mask = rng.integers(0, 2, size=400).astype(np.int32)
    args = (binned, mask, 1, weights, g, h, np.arange(12, dtype=np.int64),
            np.arange(5, dtype=np.int32),
            SearchSettings.boosting(HEAD_SINGLE, 0.0, 1.0, 2, -np.inf))
    _, hists_s, outs_s = search(*args, n_threads=1)
    _, hists_p, outs_p = search(*args, n_threads=2)
    for a, b in zip(hists_s + outs_s, hists_p + outs_p):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("features", [[0, 1, 2], [2], [3, 0]])
def test_two_threads_split_the_examples_of_a_rebuild(features, parallel_forms):
    """With few bins and many covered examples, two threads split the covered examples of
    the rebuilt features between them (the second into rows of its own, summed in
    afterwards; ``histograms._splits_examples``) rather than the features, also for a
    single feature: the rows equal the reference's, bit for bit, with weights of 0-2,
    missing values and nominal features; rows of other features are left alone."""
    rng = np.random.default_rng(11)
    n, A, K = 2000, 4, 3
    X, nominal, g, h = random_problem(rng, n, A, K, n_distinct=12, nan_frac=0.1,
                                      nominal_frac=0.3)
    binned = bin_features(X, nominal, "equal-width", bin_ratio=0.01)  # 20 bins
    weights = rng.integers(0, 3, size=n).astype(np.int32)
    mask = rng.integers(0, 2, size=n).astype(np.int32)
    features = np.array(features, np.int64)
    rows = int(np.diff(binned.bin_offset)[features].sum())
    assert _splits_examples(features.shape[0], rows, int((mask == 1).sum()), 2)
    hist = np.full((binned.total_bins, 2 * K), -7, np.int64)
    count = np.full(binned.total_bins, -7, np.int64)
    build_histograms(features, binned.bin_index, binned.bin_offset, mask, 1, weights, g, h,
                     hist, count, n_threads=2)
    want_g, want_h, want_count = ref.histograms(binned, features, mask == 1, weights, g, h)
    sampled = np.zeros(binned.total_bins, bool)
    for f in features:
        sampled[binned.bin_offset[f]:binned.bin_offset[f + 1]] = True
    np.testing.assert_array_equal(count[sampled], want_count[sampled])
    assert (count[~sampled] == -7).all() and (hist[~sampled] == -7).all()
    filled = sampled & (want_count > 0)  # rows of count 0 may keep stale sums
    np.testing.assert_array_equal(hist[filled, :K], want_g[filled])
    np.testing.assert_array_equal(hist[filled, K:], want_h[filled])


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 10 ** 6), n=st.integers(1, 25), n_distinct=st.integers(1, 6),
       nan_frac=st.sampled_from([0.0, 0.3]), single=st.booleans(),
       method=st.sampled_from(METHODS), bin_ratio=st.sampled_from([0.2, 0.5, 1.0]),
       refine_first=st.booleans(), zero_weights=st.booleans())
def test_search_property(seed, n, n_distinct, nan_frac, single, method, bin_ratio, refine_first,
                         zero_weights):
    rng = np.random.default_rng(seed)
    X, nominal, g, h = random_problem(rng, n=n, A=3, K=2, n_distinct=n_distinct,
                                      nan_frac=nan_frac, nominal_frac=0.3)
    weights = rng.integers(0 if zero_weights else 1, 3, size=n).astype(np.int32)
    check_against_reference(X, nominal, g, h, rng, single, method, bin_ratio, weights,
                            refine_first=refine_first)


def equal_count_problem(rng, n_values, copies, A, K, n_missing):
    """Columns holding ``n_values`` distinct values ``copies`` times each (so equal-frequency
    with bin_ratio=1 gives one bin per value) plus ``n_missing`` NaNs, shuffled."""
    n = n_values * copies + n_missing
    X = np.empty((n, A), np.float32)
    for a in range(A):
        values = np.sort(rng.normal(size=n_values)).astype(np.float32)
        X[:, a] = rng.permutation(np.concatenate([np.repeat(values, copies),
                                                  np.full(n_missing, np.nan)]))
    nominal = np.arange(A) % 4 == 3
    X[:, nominal] = np.where(np.isnan(X[:, nominal]), np.nan,
                             np.floor(np.abs(X[:, nominal]) * 4))
    g = rng.integers(-2 ** 20, 2 ** 20, size=(n, K))
    h = rng.integers(0, 2 ** 19, size=(n, K))
    return X, nominal, g, h


@pytest.mark.parametrize("seed", range(4))
def test_one_bin_per_value_agrees_with_exact_search(seed):
    rng = np.random.default_rng(300 + seed)
    X, nominal, g, h = equal_count_problem(rng, n_values=12, copies=1 + seed, A=8, K=3,
                                           n_missing=5)
    n, A = X.shape
    binned = bin_features(X, nominal, "equal-frequency", bin_ratio=1.0)
    distinct = [np.unique(X[~np.isnan(X[:, a]), a]).size for a in range(A)]
    np.testing.assert_array_equal(binned.num_bins, distinct)
    assert not np.isnan(binned.bin_min).any()  # no empty bin
    exact = CpuBackend()
    exact.start_fit(presort_dense(X, nominal), np.zeros((n, 3), np.uint8),
                    DECOMPOSABLE_LOSSES["logistic-decomposable"], np.ones(n), 2.0 ** 20,
                    np.int32)
    exact.g[:], exact.h[:] = g, h
    weights = rng.integers(0, 3, size=n).astype(np.int32)
    labels = np.arange(3, dtype=np.int32)
    s = SearchSettings.boosting(HEAD_SINGLE if seed % 2 else HEAD_COMPLETE, 0.1, 1.0, 2, -np.inf)
    mask = np.zeros(n, np.int32)
    for depth in range(3):  # a rule of three conditions: both searches agree at each step
        features = rng.permutation(A)[:4].astype(np.int64)
        want = exact.find_best_refinement(features, labels, weights,
                                          exact.covered_totals(weights), s)
        got, _, _ = search(binned, mask, depth, weights, g, h, features, labels, s)
        if want is None:
            assert got is None
            return
        # same candidate; the threshold may differ where examples that are uncovered or of
        # weight 0 lie between (the histogram's sits between globally adjacent bins)
        assert (got[0], got[1], got[2], got[4], got[5]) == (
            want.quality, want.feature, want.op, want.count, want.label)
        np.testing.assert_array_equal(got[6], want.g_sum)
        np.testing.assert_array_equal(got[7], want.h_sum)
        covered = mask == depth
        exact.apply_refinement(want)
        apply_binned_condition(got[1], got[2], got[3], binned.bin_index, binned.bin_offset,
                               binned.bin_min, mask, depth)
        active = weights > 0
        np.testing.assert_array_equal((mask == depth + 1)[active],
                                      (exact.mask == exact.indicator)[active])
        # the binned coverage is exactly the raw values' coverage, zero weights included
        np.testing.assert_array_equal(mask == depth + 1,
                                      covered & satisfied(X[:, got[1]], got[2], got[3]))


def tiny_search(x, g, nominal=False, min_coverage=1, min_quality=-np.inf):
    X = np.asarray(x, np.float32)[:, None]
    binned = bin_features(X, np.array([nominal]), "equal-width", bin_ratio=1.0)
    g = np.asarray(g, np.int64)[:, None]
    h = np.full_like(g, 100)
    n = X.shape[0]
    best, _, _ = search(binned, np.zeros(n, np.int32), 0, np.ones(n, np.int32), g, h,
                        np.array([0]), np.array([0], np.int32),
                        SearchSettings.boosting(HEAD_COMPLETE, 0.0, 1.0, min_coverage, min_quality))
    return binned, best


def test_ties_keep_the_first_candidate():
    # <= 0.5 and > 0.5 are equally good: <= comes first
    _, best = tiny_search([0, 0, 1, 1], [1000, 1000, -1000, -1000])
    assert (best[2], best[3]) == (OP_LEQ, np.float32(0.5))
    # == 0 and != 0 (i.e. == 1) are equally good: == on the first bin comes first
    _, best = tiny_search([0, 0, 1, 1], [1000, 1000, -1000, -1000], nominal=True)
    assert (best[2], best[3]) == (OP_EQ, np.float32(0.0))


def test_threshold_between_non_empty_bins_and_missing_excluded():
    # value 2 is missing from the covered examples: the boundary lies between bins 1 and 3
    binned, best = tiny_search([1, 1, 3, 3, np.nan], [900, 900, -900, -900, 5000])
    assert (best[2], best[3], best[4]) == (OP_LEQ, np.float32(2.0), 2)
    np.testing.assert_array_equal(best[6], [1800])
    assert binned.bin_index[0, 4] == -1


def test_nominal_not_equal_and_apply():
    x = [0, 1, 2, 2, np.nan, 1]
    binned, best = tiny_search(x, [50, -1000, 1200, 1200, 7000, -1000], nominal=True)
    assert (best[2], best[3], best[4]) == (OP_NEQ, np.float32(1.0), 3)
    mask = np.zeros(6, np.int32)
    apply_binned_condition(0, OP_NEQ, best[3], binned.bin_index, binned.bin_offset,
                           binned.bin_min, mask, 0)
    np.testing.assert_array_equal(mask, [1, 0, 1, 1, 0, 0])  # missing never satisfies
    apply_binned_condition(0, OP_GR, np.float32(0.5), binned.bin_index, binned.bin_offset,
                           binned.bin_min, mask, 1)
    np.testing.assert_array_equal(mask, [1, 0, 2, 2, 0, 0])  # only covered examples move


def test_min_coverage_and_min_quality():
    x, g = [0, 0, 1, 1, 2], [1000, 1000, -1000, -1000, 0]
    _, best = tiny_search(x, g, min_coverage=3)
    assert best[4] >= 3
    assert tiny_search(x, g, min_coverage=6)[1] is None
    _, best = tiny_search(x, g)
    assert tiny_search(x, g, min_quality=best[0])[1] is None  # must be strictly better
    assert tiny_search([4, 4], [10, 20])[1] is None  # a single bin has no boundary


@pytest.mark.parametrize("loss", ["logistic-decomposable", "logistic-non-decomposable"])
def test_interleaved_statistics_follow_every_update(loss):
    """The histogram build reads ``SearchState.gh``, a copy of ``[g | h]``: after a whole fit
    (statistics updated rule by rule, re-encoded when the scale changes) it still equals
    them, for decomposable and packed non-decomposable statistics."""
    from gpurules import BoomerClassifier
    from gpurules.backends.cpu import backend as cpu_backend

    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 5)).astype(np.float32)
    Y = (rng.random((120, 3)) < 0.4).astype(np.uint8)
    seen = []
    original = cpu_backend.CpuBackend.start_fit

    def start_fit(self, *args, **kwargs):
        seen.append(self)
        return original(self, *args, **kwargs)

    cpu_backend.CpuBackend.start_fit = start_fit
    try:
        BoomerClassifier(loss=loss, feature_binning="equal-width", max_rules=15,
                         random_state=1).fit(X, Y)
    finally:
        cpu_backend.CpuBackend.start_fit = original
    backend = seen[-1]
    np.testing.assert_array_equal(backend._searches.gh, np.concatenate((backend.g, backend.h), axis=1))
    assert backend.P.any()  # the rules did change the statistics


@pytest.mark.parametrize("seed, threads", [(0, 1), (1, 1), (2, 1), (3, 2)])
def test_rows_kept_from_earlier_steps_equal_a_fresh_build(seed, threads, parallel_forms):
    """A fit's search rebuilds a feature's histogram rows, or takes out of the rows it built
    at an earlier step of the rule the examples that have left the coverage since
    (``histograms._plan``). Step after step, with weights of 0-2, missing
    values and nominal features, the rows equal the reference's fresh build; new weights
    or new statistics within a rule make the kept rows stale (a rebuild), a new rule too.
    On two threads each part of the build takes its share of both kinds of feature."""
    rng = np.random.default_rng(seed)
    n, A, K = 400, 5, 3
    X, nominal, _, _ = random_problem(rng, n, A, K, n_distinct=15, nan_frac=0.1,
                                      nominal_frac=0.2)
    binned = bin_features(X, nominal, "equal-width", bin_ratio=0.5)
    backend = CpuBackend(n_threads_search=threads)
    backend.start_fit(binned, (rng.random((n, K)) < 0.4).astype(np.uint8),
                      DECOMPOSABLE_LOSSES["logistic-decomposable"], np.ones(n), 2.0 ** 20,
                      np.int32)
    labels = np.arange(K, dtype=np.int32)
    s = SearchSettings.boosting(HEAD_COMPLETE, 0.1, 1.0, 1, -np.inf)
    features = np.arange(A, dtype=np.int64)  # every feature again at every step
    hist_at = backend._searches.data[-1]
    reused = 0
    for rule in range(4):
        weights = rng.integers(0, 3, size=n).astype(np.int32)
        backend.reset_coverage()
        for step in range(6):
            if step == 3 and rule == 1:  # other weights within the rule
                weights = rng.integers(0, 3, size=n).astype(np.int32)
            if step == 3 and rule == 2:  # other statistics within the rule
                backend.update_statistics(labels, rng.normal(size=K))
            before = hist_at.copy()
            best = backend.find_best_refinement(features, labels, weights,
                                                backend.covered_totals(weights), s)
            reused += int(((hist_at[:, 0] == before[:, 0]) &
                           (hist_at[:, 1] > before[:, 1])).sum())
            want_g, want_h, want_count = ref.histograms(
                binned, features, backend.covered_mask(), weights, backend.g, backend.h)
            np.testing.assert_array_equal(backend.hist_count, want_count)
            filled = want_count > 0  # rows of count 0 may keep stale sums
            np.testing.assert_array_equal(backend.hist[filled, :K], want_g[filled])
            np.testing.assert_array_equal(backend.hist[filled, K:], want_h[filled])
            if best is None:
                break
            backend.apply_refinement(best)
    assert reused > 0  # the subtraction did run


@pytest.mark.parametrize("params", [
    dict(rule_induction="top-down-beam-search{beam_width=4}"),
    dict(rule_induction="top-down-beam-search{beam_width=2,resample_features=true}",
         instance_sampling="with-replacement"),
])
def test_every_beam_search_step_sees_fresh_histograms(params, monkeypatch):
    """The beam search restores a coverage before each entry's search
    (``CpuBackend.restore_coverage``): the rows kept for subtraction must not outlive it.
    Every search of whole binned fits is checked against the reference's fresh build (the
    step-by-step beam of ``learners.beam_search``, which the batched rules of
    ``tests/test_fused_rules.py`` are held to)."""
    from gpurules import BoomerClassifier
    from gpurules.backends.cpu import backend as cpu_backend
    from gpurules.data.binning import rows_of

    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(150, 6)), 1).astype(np.float32)
    Y = (rng.random((150, 3)) < 0.4).astype(np.uint8)
    original = cpu_backend.CpuBackend._search
    checked = []

    def search(self, features, weights, *args, **kwargs):
        original(self, features, weights, *args, **kwargs)
        K = self.g.shape[1]
        want_g, want_h, want_count = ref.histograms(self.features, features,
                                                    self.covered_mask(), weights, self.g,
                                                    self.h)
        rows = rows_of(self.features.bin_offset, features)  # the searched features' rows
        np.testing.assert_array_equal(self.hist_count[rows], want_count[rows])
        filled = rows[want_count[rows] > 0]
        np.testing.assert_array_equal(self.hist[filled, :K], want_g[filled])
        np.testing.assert_array_equal(self.hist[filled, K:], want_h[filled])
        checked.append(1)

    monkeypatch.setattr(cpu_backend.CpuBackend, "_search", search)
    monkeypatch.setattr(cpu_backend.CpuBackend, "learns_rules", lambda backend, plan: False)
    BoomerClassifier(feature_binning="equal-width", max_rules=15, random_state=1,
                     **params).fit(X, Y)
    assert len(checked) > 20


def test_explicit_entries_pick_each_feature_s_implicit_bin():
    """The fullest bin (the lowest of equal ones) is implicit where it holds at least a
    quarter of the examples and none misses the feature; a constant feature's one bin too
    (no entries); the entries are the other examples, ascending."""
    bin_index = np.array([[0, 1, 0, 0, 2, 0, 0, 1],    # bin 0 of 5/8
                          [0, 0, 0, 0, 0, 0, 0, 0],    # one bin (constant)
                          [0, 1, 2, 3, 0, 1, 2, 3],    # 2/8 each: bin 0, the lowest
                          [0, 1, 2, 3, 4, 5, 6, 0],    # 2/8 < 1/4? no: 2 * 4 >= 8
                          [0, -1, 0, 0, 0, 0, 0, 0],   # a missing value: none
                          [0, 1, 2, 3, 4, 5, 6, 7]],   # 1/8: none
                         np.int32)
    bin_offset = np.array([0, 3, 4, 8, 15, 16, 24], np.int64)
    implicit, offset, index = explicit_entries(bin_index, bin_offset)
    np.testing.assert_array_equal(implicit, [0, 0, 0, 0, -1, -1])
    entries = [index[offset[f]:offset[f + 1]].tolist() for f in range(6)]
    assert entries == [[1, 4, 7], [], [1, 2, 3, 5, 6, 7], [1, 2, 3, 4, 5, 6], [], []]


@pytest.mark.parametrize("seed", range(3))
def test_rows_rebuilt_from_explicit_entries_equal_a_fresh_build(seed):
    """On sparse data (a few non-zero values per feature, constant features) a rebuild
    adds only a feature's explicit entries and fills its implicit bin from the covered
    totals (``histograms._plan``, ``_add_explicit``): step after step, with weights
    of 0-2 and nominal features, the rows equal the reference's fresh build."""
    rng = np.random.default_rng(50 + seed)
    n, A, K = 300, 8, 3
    X = np.where(rng.random((n, A)) < 0.06, rng.integers(1, 5, (n, A)), 0).astype(np.float32)
    X[:, 5] = 0  # constant
    nominal = np.zeros(A, bool)
    nominal[[1, 6]] = True
    binned = bin_features(X, nominal, "equal-width", bin_ratio=0.5)
    implicit = explicit_entries(binned.bin_index, binned.bin_offset)[0]
    assert (implicit >= 0).all()
    backend = CpuBackend()
    backend.start_fit(binned, (rng.random((n, K)) < 0.4).astype(np.uint8),
                      DECOMPOSABLE_LOSSES["logistic-decomposable"], np.ones(n), 2.0 ** 20,
                      np.int32)
    labels = np.arange(K, dtype=np.int32)
    s = SearchSettings.boosting(HEAD_COMPLETE, 0.1, 1.0, 1, -np.inf)
    for rule in range(4):
        weights = rng.integers(0, 3, size=n).astype(np.int32)
        backend.reset_coverage()
        for step in range(5):
            features = np.sort(rng.choice(A, size=4, replace=False)).astype(np.int64)
            best = backend.find_best_refinement(features, labels, weights,
                                                backend.covered_totals(weights), s)
            want_g, want_h, want_count = ref.histograms(
                binned, features, backend.covered_mask(), weights, backend.g, backend.h)
            rows = np.concatenate([np.arange(binned.bin_offset[f], binned.bin_offset[f + 1])
                                   for f in features])
            np.testing.assert_array_equal(backend.hist_count[rows], want_count[rows])
            filled = rows[want_count[rows] > 0]
            np.testing.assert_array_equal(backend.hist[filled, :K], want_g[filled])
            np.testing.assert_array_equal(backend.hist[filled, K:], want_h[filled])
            if best is None:
                break
            backend.apply_refinement(best)


def test_explicit_entries_leave_the_models_unchanged(monkeypatch):
    """Equal-width fits on sparse data learn the same models with the explicit entries as
    with rebuilds from the covered examples only (no feature given an implicit bin)."""
    rng = np.random.default_rng(7)
    X = np.where(rng.random((400, 30)) < 0.05, rng.integers(1, 4, (400, 30)), 0)
    Y = (rng.random((400, 4)) < 0.3).astype(np.uint8)
    Y[:, 0] |= X[:, 3] > 0

    def fit():
        clf = BoomerClassifier(feature_binning="equal-width", max_rules=60, random_state=2,
                               parallel_rule_refinement="false")
        return str(clf.fit(X.astype(np.float32), Y, nominal_feature_indices=[7]).model_)

    got = fit()

    monkeypatch.setattr(histograms, "explicit_entries",
                        lambda bin_index, bin_offset: histograms.no_explicit_entries(
                            bin_index.shape[0]))
    assert fit() == got
