"""The CPU exact search against the brute-force reference in tests/reference/search.py."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpurules.backends.base import SearchSettings
from gpurules.backends.cpu import CpuBackend
from gpurules.data.presorted import presort_dense
from gpurules.data.sparse import presort_sparse
from gpurules.objectives.heads import HEAD_COMPLETE, HEAD_SINGLE
from gpurules.objectives.losses import DECOMPOSABLE_LOSSES
from tests.reference.search import (USELESS, assert_condition_sums, best_refinement,
                                    constant_columns_problem, satisfied)

LOGISTIC = DECOMPOSABLE_LOSSES["logistic-decomposable"]


FORMATS = ["dense", "sparse"]


def make_backend(X, nominal, g, h, threads=1, fmt="dense"):
    n, K = g.shape
    backend = CpuBackend(threads, 1)
    features = presort_dense(X, nominal) if fmt == "dense" else presort_sparse(X, nominal)
    backend.start_fit(features, np.zeros((n, K), np.uint8), LOGISTIC, np.ones(n), 2.0 ** 20,
                      np.int32)  # the estimators' storage, so their compiled forms
    backend.g[:], backend.h[:] = g, h
    return backend


def random_problem(rng, n, A, K, n_distinct, nan_frac=0.0, nominal_frac=0.0):
    X = rng.integers(0, n_distinct, size=(n, A)).astype(np.float32) * 0.37 - 1.0
    X[rng.random((n, A)) < nan_frac] = np.nan
    nominal = rng.random(A) < nominal_frac
    X[:, nominal] = np.floor(np.abs(X[:, nominal]) * 3)
    X[rng.random((n, A)) < 0.4] = 0.0  # implicit entries of the sparse representation
    g = rng.integers(-2 ** 20, 2 ** 20, size=(n, K))
    h = rng.integers(0, 2 ** 19, size=(n, K))
    return X, nominal, g, h


def check_against_reference(X, nominal, g, h, rng, single, threads=1, weights=None,
                            min_coverage=1, refine_first=False, fmt="dense"):
    n, A = X.shape
    K = g.shape[1]
    backend = make_backend(X, nominal, g, h, threads, fmt)
    weights = np.ones(n, np.int32) if weights is None else weights
    features = np.sort(rng.choice(A, size=min(A, 3), replace=False)).astype(np.int64)
    labels = np.arange(K, dtype=np.int32)
    head = HEAD_SINGLE if single else HEAD_COMPLETE
    covered = np.ones(n, bool)
    if refine_first:  # search below an existing condition to exercise the coverage mask
        totals = backend.covered_totals(weights)
        first = backend.find_best_refinement(
            np.arange(A, dtype=np.int64), labels, weights, totals,
            SearchSettings.boosting(head, 0.0, 1.0, min_coverage, -np.inf))
        if first is None:
            return
        backend.apply_refinement(first)
        covered = backend.mask == backend.indicator
    totals = backend.covered_totals(weights)
    got = backend.find_best_refinement(features, labels, weights, totals,
                                       SearchSettings.boosting(head, 0.1, 1.0, min_coverage,
                                                               -np.inf))
    want = best_refinement(X, nominal, covered, weights, g, h, features, labels, single, 0.1,
                           1.0, backend.inv_scale, min_coverage, -np.inf)
    if want is None:
        assert got is None
        return
    assert got is not None
    assert got.quality == pytest.approx(want[0], rel=1e-12)
    # the chosen condition is one of the optimal ones and its sums are right
    assert_condition_sums(X, covered, weights, g, h, got.feature, got.op, got.threshold,
                          got.count, got.g_sum, got.h_sum)
    if want[1:4] == (got.feature, got.op, got.threshold):
        assert got.label == want[5]
    return got


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("single", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_search_matches_reference(seed, single, fmt):
    rng = np.random.default_rng(seed)
    X, nominal, g, h = random_problem(rng, n=60, A=5, K=3, n_distinct=7)
    check_against_reference(X, nominal, g, h, rng, single, fmt=fmt)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("seed", range(6))
def test_search_with_missing_nominal_and_coverage(seed, fmt):
    rng = np.random.default_rng(100 + seed)
    X, nominal, g, h = random_problem(rng, n=80, A=6, K=4, n_distinct=5, nan_frac=0.2,
                                      nominal_frac=0.5)
    check_against_reference(X, nominal, g, h, rng, single=seed % 2 == 0, refine_first=True,
                            min_coverage=3, fmt=fmt)


def _step_and_reference(backend, X, nominal, weights, g, h, features, labels, single,
                        search):
    """A search of ``backend`` on its coverage (l1 = 0, l2 = 1, min_coverage 1) and the
    reference's best there: (got, want, covered bool (n,), totals)."""
    covered = backend.mask == backend.indicator
    totals = backend.covered_totals(weights)
    got = backend.find_best_refinement(features, labels, weights, totals, search)
    want = best_refinement(X, nominal, covered, weights, g, h, features, labels, single, 0.0,
                           1.0, backend.inv_scale, 1, -np.inf)
    return got, want, covered, totals


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("seed", range(3))
def test_totals_without_missing_examples_either_way(seed, fmt):
    """A feature's totals leave out the covered examples missing it: as the rule's totals
    less them where they are fewer than the present ones (a column 3 % missing), else as
    the sums of the present ones (95 % missing); with zero weights, below a condition, for
    each column alone, as the reference."""
    rng = np.random.default_rng(200 + seed)
    X, nominal, g, h = random_problem(rng, n=120, A=4, K=3, n_distinct=9)
    for column, frac in enumerate((0.03, 0.5, 0.95, 0.0)):
        X[rng.random(120) < frac, column] = np.nan
    weights = rng.integers(0, 3, size=120).astype(np.int32)
    labels = np.arange(3, dtype=np.int32)
    for column in range(4):
        backend = make_backend(X, nominal, g, h, fmt=fmt)
        search = SearchSettings.boosting(HEAD_COMPLETE, 0.0, 1.0, 1, -np.inf)
        features = np.array([column], np.int64)
        for _ in range(2):  # the whole row, then the kept entries below a condition
            got, want, covered, _ = _step_and_reference(backend, X, nominal, weights, g, h,
                                                        features, labels, False, search)
            if want is None:
                assert got is None
                break
            assert (got.feature, got.op, got.threshold, got.count) == want[1:5]
            assert got.quality == pytest.approx(want[0], rel=1e-12)
            assert_condition_sums(X, covered, weights, g, h, got.feature, got.op,
                                  got.threshold, got.count, got.g_sum, got.h_sum)
            backend.apply_refinement(got)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("single", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_no_condition_that_changes_nothing(seed, single, fmt):
    """A condition that excludes no covered example of non-zero weight is never a
    refinement, though its quality (that of every covered example) would be the best: none
    on constant nominal columns, on columns whose other values or missing values belong to
    examples of weight 0, on a numerical column of one present value; ``== 1`` on a column
    whose missing values have weight does narrow the rule. As the reference, for the first
    condition and below one."""
    rng = np.random.default_rng(seed)
    X, nominal, g, h, weights = constant_columns_problem(rng)
    for features in (USELESS, np.arange(X.shape[1], dtype=np.int64)):
        backend = make_backend(X, nominal, g, h, fmt=fmt)
        labels = np.arange(g.shape[1], dtype=np.int32)
        head = HEAD_SINGLE if single else HEAD_COMPLETE
        search = SearchSettings.boosting(head, 0.0, 1.0, 1, -np.inf)
        for step in range(3):
            got, want, _, totals = _step_and_reference(backend, X, nominal, weights, g, h,
                                                       features, labels, single, search)
            if want is None:
                assert got is None and (step > 0 or features is USELESS)
                break
            assert features is not USELESS
            assert (got.feature, got.op, got.threshold, got.count) == want[1:5]
            assert got.quality == pytest.approx(want[0], rel=1e-12)
            assert got.count < totals[2]
            backend.apply_refinement(got)


@pytest.mark.parametrize("seed", range(8))
def test_dense_and_sparse_choose_the_same_refinement(seed):
    rng = np.random.default_rng(200 + seed)
    X, nominal, g, h = random_problem(rng, n=70, A=6, K=2, n_distinct=3, nan_frac=0.1,
                                      nominal_frac=0.4)
    picks = []
    for fmt in FORMATS:
        got = check_against_reference(X, nominal, g, h, np.random.default_rng(seed),
                                      single=False, refine_first=True, fmt=fmt)
        picks.append(None if got is None else (got.feature, got.op, got.threshold, got.quality))
    assert picks[0] == picks[1]



@pytest.mark.parametrize("values", [(0.0, 1.0), (-1.0, 0.0), (-1.0, 1.0), (-2.0, -1.0),
                                    (1.0, 2.0)])
@pytest.mark.parametrize("seed", range(4))
def test_two_valued_nominal_features_pick_the_canonical_condition(values, seed):
    """A nominal feature whose covered examples hold two values a < b scores ``== a`` and
    ``!= a`` only (``!= b`` and ``== b`` cover the same examples); the choice must be the one
    the dense search makes after scoring all four, for every placement of the implicit 0."""
    rng = np.random.default_rng(seed)
    n, A = 40, 4
    X = np.where(rng.random((n, A)) < 0.5, values[0], values[1]).astype(np.float32)
    X[rng.random((n, A)) < 0.1 * (seed % 2)] = np.nan
    nominal = np.ones(A, bool)
    g = rng.integers(-2 ** 20, 2 ** 20, size=(n, 3))
    h = rng.integers(0, 2 ** 19, size=(n, 3))
    picks = []
    for fmt in FORMATS:
        got = check_against_reference(X, nominal, g, h, np.random.default_rng(seed),
                                      single=seed > 1, refine_first=seed % 2 == 1, fmt=fmt)
        picks.append(None if got is None else (got.feature, got.op, got.threshold, got.quality))
    assert picks[0] == picks[1]
    assert picks[0] is None or picks[0][2] == values[0]

def test_parallel_search_equals_serial(parallel_forms):
    """The parallel form of the search on two threads finds what the serial form finds."""
    rng = np.random.default_rng(7)
    X, nominal, g, h = random_problem(rng, n=300, A=12, K=5, n_distinct=40, nan_frac=0.05)
    results = []
    for threads in (1, 2):
        backend = make_backend(X, nominal, g, h, threads)
        w = np.ones(300, np.int32)
        results.append(backend.find_best_refinement(
            np.arange(12, dtype=np.int64), np.arange(5, dtype=np.int32), w,
            backend.covered_totals(w),
            SearchSettings.boosting(HEAD_COMPLETE, 0.0, 1.0, 1, -np.inf)))
    a, b = results
    assert (a.feature, a.op, a.threshold, a.quality, a.count) == \
        (b.feature, b.op, b.threshold, b.quality, b.count)


@pytest.mark.parametrize("n_threads", [2, 3, 40])
def test_presorting_on_threads_equals_one_thread(n_threads, monkeypatch):
    """``presort_dense`` sorts columns on several threads where X is large (here: any X):
    the same stable order (ties by example index, missing values last), values and counts
    as on one thread, also with more threads than columns."""
    from gpurules.data import presorted

    rng = np.random.default_rng(4)
    X, nominal, _, _ = random_problem(rng, n=500, A=7, K=1, n_distinct=9, nan_frac=0.1,
                                      nominal_frac=0.3)
    one = presort_dense(X, nominal)
    monkeypatch.setattr(presorted, "PARALLEL_SORT_ELEMENTS", 0)
    several = presort_dense(X, nominal, n_threads)
    np.testing.assert_array_equal(several.sorted_index, one.sorted_index)
    np.testing.assert_array_equal(several.sorted_value, one.sorted_value)
    np.testing.assert_array_equal(several.n_present, one.n_present)
    np.testing.assert_array_equal(several.nominal, one.nominal)
    assert one.sorted_index.dtype == np.int32 and one.sorted_value.dtype == np.float32
    for f in range(7):  # stable: equal values in example order, NaN last
        v, i = one.sorted_value[f, :one.n_present[f]], one.sorted_index[f, :one.n_present[f]]
        assert (np.diff(v) >= 0).all() and (np.diff(i)[np.diff(v) == 0] > 0).all()
        assert np.isnan(one.sorted_value[f, one.n_present[f]:]).all()


@pytest.mark.parametrize("sparse_value", [0.0, 0.5])
def test_sparse_presorting_by_column_equals_one_sort(sparse_value, monkeypatch):
    """``presort_sparse`` sorts tall columns one by one (on threads where X is large; here
    forced for any X) and short ones in one sort of all entries: the same arrays either way,
    from a dense or a sparse X, with ties, NaN and -0.0; each column stable (equal values by
    example), NaN last, ``n_neg`` values below the implicit value."""
    import scipy.sparse as sp

    from gpurules.data import presorted, sparse

    rng = np.random.default_rng(5)
    X = rng.integers(-3, 4, size=(300, 6)).astype(np.float32) * 0.5
    X[rng.random(X.shape) < 0.15] = np.nan
    X[rng.random(X.shape) < 0.1] = -0.0
    nominal = rng.random(6) < 0.3
    inputs = [X] + ([sp.csr_matrix(X)] if sparse_value == 0 else [])
    monkeypatch.setattr(presorted, "PARALLEL_SORT_ELEMENTS", 0)
    for x in inputs:
        runs = []
        for entries, threads in ((10 ** 9, 1), (0, 1), (0, 4)):  # at once; by column
            monkeypatch.setattr(sparse, "COLUMN_SORT_ENTRIES", entries)
            runs.append(presort_sparse(x, nominal, sparse_value, threads))
        for got in runs[1:]:
            for name in ("indptr", "index", "value", "n_neg", "n_present", "nominal"):
                a, b = getattr(runs[0], name), getattr(got, name)
                assert a.dtype == b.dtype
                np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(np.signbit(runs[0].value), np.signbit(got.value))
        fs = runs[0]
        for f in range(6):
            a, b = fs.indptr[f], fs.indptr[f + 1]
            v, i, p = fs.value[a:b], fs.index[a:b], fs.n_present[f]
            col = X[:, f]
            want = np.flatnonzero((col != sparse_value) & ~((col == 0) & (sparse_value == 0)))
            np.testing.assert_array_equal(np.sort(i), want)
            assert (np.diff(v[:p]) >= 0).all() and (np.diff(i[:p])[np.diff(v[:p]) == 0] > 0).all()
            assert np.isnan(v[p:]).all() and (np.diff(i[p:]) > 0).all()
            assert fs.n_neg[f] == np.count_nonzero(v[:p] < sparse_value)


def test_weighted_search_matches_reference():
    rng = np.random.default_rng(3)
    X, nominal, g, h = random_problem(rng, n=70, A=4, K=2, n_distinct=9)
    weights = rng.integers(0, 3, size=70).astype(np.int32)
    check_against_reference(X, nominal, g, h, rng, single=False, weights=weights)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10 ** 6), n=st.integers(1, 25), n_distinct=st.integers(1, 6),
       nan_frac=st.sampled_from([0.0, 0.3]), single=st.booleans(),
       fmt=st.sampled_from(FORMATS), refine_first=st.booleans())
def test_search_property(seed, n, n_distinct, nan_frac, single, fmt, refine_first):
    rng = np.random.default_rng(seed)
    X, nominal, g, h = random_problem(rng, n=n, A=3, K=2, n_distinct=n_distinct,
                                      nan_frac=nan_frac, nominal_frac=0.3)
    check_against_reference(X, nominal, g, h, rng, single, fmt=fmt, refine_first=refine_first)


def test_threshold_between_adjacent_floats_keeps_order():
    lo = np.float32(1.0)
    hi = np.nextafter(lo, np.float32(2.0))
    X = np.array([[lo], [hi], [lo], [hi]], dtype=np.float32)
    g = np.array([[1000], [-1000], [1000], [-1000]], dtype=np.int64)
    h = np.full((4, 1), 100, dtype=np.int64)
    backend = make_backend(X, np.zeros(1, bool), g, h)
    w = np.ones(4, np.int32)
    ref = backend.find_best_refinement(np.array([0]), np.array([0], np.int32), w,
                                       backend.covered_totals(w),
                                       SearchSettings.boosting(HEAD_COMPLETE, 0.0, 1.0, 1, -np.inf))
    assert ref.count == 2 and lo <= ref.threshold < hi


@pytest.mark.parametrize("fmt", FORMATS)
def test_statistics_set_by_the_learner(fmt):
    """A fit started without a loss searches the statistics the learner sets, and reports
    which examples the refined rule covers."""
    rng = np.random.default_rng(11)
    X, nominal, g, h = random_problem(rng, n=40, A=3, K=2, n_distinct=5)
    backend = CpuBackend(1, 1)
    features = presort_dense(X, nominal) if fmt == "dense" else presort_sparse(X, nominal)
    backend.start_fit(features, np.zeros((40, 2), np.uint8), None, np.ones(40), 1.0)
    assert not backend.g.any() and not backend.h.any()
    backend.set_statistics(g, h)
    tot_g, tot_h, count = backend.covered_totals(None)
    np.testing.assert_array_equal(tot_g, g.sum(0))
    np.testing.assert_array_equal(tot_h, h.sum(0))
    assert count == 40 and backend.covered_mask().all()
    ref = backend.find_best_refinement(np.arange(3), np.arange(2, dtype=np.int32), None,
                                       (tot_g, tot_h, count),
                                       SearchSettings.boosting(HEAD_COMPLETE, 0.0, 1.0, 1,
                                                               -np.inf))
    backend.apply_refinement(ref)
    covered = backend.covered_mask()
    assert covered.sum() == ref.count
    np.testing.assert_array_equal(g[covered].sum(0), ref.g_sum)


def test_unknown_head_mode_is_rejected():
    with pytest.raises(ValueError, match="head_mode"):
        SearchSettings(99, np.zeros(2), 1, -np.inf)


def walk_rules_against_the_reference(backend, X, nominal, g, h, rng, rules=3, steps=5):
    """``rules`` rules of up to ``steps`` steps on ``backend``, each step searching a random
    subset of the features with random 0/1 weights: every best refinement matches the
    reference on the current coverage, and each condition applied leaves the coverage it
    should."""
    n, A = X.shape
    K = g.shape[1]
    labels = np.arange(K, dtype=np.int32)
    for _rule in range(rules):
        backend.reset_coverage()
        weights = (rng.random(n) < 0.8).astype(np.int32)
        for _step in range(steps):
            covered = backend.mask == backend.indicator
            features = np.sort(rng.choice(A, size=rng.integers(1, A + 1), replace=False))
            settings = SearchSettings.boosting(HEAD_COMPLETE, 0.1, 1.0, 1, -np.inf)
            got = backend.find_best_refinement(features.astype(np.int64), labels, weights,
                                               backend.covered_totals(weights), settings)
            want = best_refinement(X, nominal, covered, weights, g, h, features, labels,
                                   False, 0.1, 1.0, backend.inv_scale, 1, -np.inf)
            assert (got is None) == (want is None)
            if got is None:
                break
            assert got.quality == pytest.approx(want[0], rel=1e-12)
            assert_condition_sums(X, covered, weights, g, h, got.feature, got.op,
                                  got.threshold, got.count, got.g_sum, got.h_sum)
            backend.apply_refinement(got)
            np.testing.assert_array_equal(
                backend.mask == backend.indicator,
                covered & satisfied(X[:, got.feature], got.op, got.threshold))


@pytest.mark.parametrize("fmt", FORMATS + ["sparse-compacting", "sparse-large-2"])
@pytest.mark.parametrize("seed", range(6))
def test_kept_rows_follow_the_coverage_over_a_rule(seed, fmt, monkeypatch, request):
    """The dense search keeps each feature's covered entries between the steps of a rule
    (``representations.SearchState.kept_len``); the sparse one compacts its explicit
    entries to the covered ones where the statistics outgrow the caches (forced here by a
    zero ``PREFETCH_BYTES``) and it runs on one thread, else (also on two threads, where
    its parallel form runs) reads them all at every step: in each, every step of several
    rules, each searching a random subset of features (so some kept rows date from earlier
    steps), with missing values, nominal features and zero weights, matches the reference
    on the current coverage, and each condition applied leaves the coverage it should."""
    from gpurules.jit import prefetch

    threads = 1
    if fmt in ("sparse-compacting", "sparse-large-2"):
        monkeypatch.setattr(prefetch, "PREFETCH_BYTES", 0)
    if fmt == "sparse-large-2":
        request.getfixturevalue("parallel_forms")
        threads = 2
    rng = np.random.default_rng(300 + seed)
    X, nominal, g, h = random_problem(rng, n=90, A=6, K=3, n_distinct=9, nan_frac=0.15,
                                      nominal_frac=0.3)
    backend = make_backend(X, nominal, g, h, threads, fmt=fmt.split("-")[0])
    data = backend._representation()[1]
    if fmt.startswith("sparse"):  # (data[-1]: what restores the entries of a compacting one)
        assert (data[-1] is not None) == (fmt == "sparse-compacting")
    walk_rules_against_the_reference(backend, X, nominal, g, h, rng)
    if fmt == "sparse-compacting":  # a feature of the last rule kept fewer entries
        indptr, kept, (_, _, n_neg, epochs) = data[0], data[3], data[-1]
        below = (indptr[:-1] + n_neg)[epochs[:-1] == epochs[-1]]
        kept = kept[epochs[:-1] == epochs[-1]]
        assert ((kept[:, 0] < below) | (kept[:, 1] > below)).any()


@pytest.mark.parametrize("fmt", FORMATS)
def test_walks_that_prefetch_match_the_reference(fmt):
    """Statistics beyond ``jit.prefetch.PREFETCH_BYTES`` (6,000 examples x 24 labels of
    int32 g and h: 1.15 MB), so the dense walk, the sparse phases and the totals without
    the missing entries prefetch in two stages (``exact_search.prefetch_covered``): the
    rules' best refinements and coverages are the reference's, also where the coverage
    is small and most entries a walk meets are skipped."""
    from gpurules.jit.prefetch import PREFETCH_BYTES

    rng = np.random.default_rng(77)
    X, nominal, g, h = random_problem(rng, n=6000, A=5, K=24, n_distinct=9, nan_frac=0.15,
                                      nominal_frac=0.4)
    backend = make_backend(X, nominal, g, h, 1, fmt=fmt)
    assert backend.g.nbytes + backend.h.nbytes > PREFETCH_BYTES
    walk_rules_against_the_reference(backend, X, nominal, g, h, rng, rules=2, steps=8)


def test_prefetch_changes_no_value_and_emits_prefetches():
    """jit/prefetch.py: the search's prefetches compile to prefetch instructions for 1-D and
    2-D rows, including the last row and a row that ends mid-line, and do nothing in
    plain Python."""
    import numba as nb

    from gpurules.jit.prefetch import prefetch_row

    @nb.njit
    def gather(rows, column, order):
        total = 0
        for p in range(order.shape[0]):
            prefetch_row(rows, order[p])
            prefetch_row(column, order[p])
            total += rows[order[p], rows.shape[1] - 1] + column[order[p]]
        return total

    rows = np.arange(5 * 3, dtype=np.int64).reshape(5, 3)  # 24-byte rows
    column = np.arange(5, dtype=np.int32)
    order = np.array([4, 0, 3, 3, 1], dtype=np.int64)
    assert gather(rows, column, order) == sum(rows[o, 2] + column[o] for o in order)
    assert "prefetch" in gather.inspect_asm(gather.signatures[0])
    assert prefetch_row(rows, 4) is None


@pytest.mark.parametrize("seed", range(6))
def test_presort_sparse_orders_each_column_like_the_reference(seed):
    """Each column's explicit entries: the values below the implicit value, then those
    above (ascending), then the missing ones; equal values by example. The input CSC has
    duplicate entries (summed) and unsorted indices; the implicit value is 0 or 1."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    n, A, nnz = 40, 5, 120
    rows, cols = rng.integers(0, n, nnz), rng.integers(0, A, nnz)
    vals = rng.integers(-3, 4, nnz).astype(np.float32)
    vals[rng.random(nnz) < 0.1] = np.nan
    csc = sp.coo_matrix((vals, (rows, cols)), shape=(n, A)).tocsc()
    csc.has_sorted_indices = False
    dense = csc.toarray()  # duplicates summed; NaN + x is NaN
    z = float(seed % 2)
    X = csc if z == 0 else np.where(np.isnan(dense) | (dense != 0), dense, 0.0)
    got = presort_sparse(X, np.zeros(A, bool), sparse_value=z)
    for f in range(A):
        column = dense[:, f]
        explicit = [i for i in range(n) if np.isnan(column[i]) or column[i] != z]
        want = sorted(explicit, key=lambda i: (bool(np.isnan(column[i])),
                                               0.0 if np.isnan(column[i]) else column[i], i))
        start, end = got.indptr[f], got.indptr[f + 1]
        np.testing.assert_array_equal(got.index[start:end], want)
        np.testing.assert_array_equal(got.value[start:end], column[want].astype(np.float32))
        present = column[want][~np.isnan(column[want])]
        assert got.n_present[f] == present.size and got.n_neg[f] == (present < z).sum()
