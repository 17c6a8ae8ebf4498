"""The CUDA histogram search's threshold scan (``histogram_search.search``, ``bin_prefix``)
under the Numba CUDA simulator, against the CPU histogram search and NumPy on the same bins,
bit for bit (thresholds and qualities included), fused and with the prefix sums in place.
Run as ``test_cuda_simulator.py``'s checks are: in one fresh interpreter (``python -m
tests.test_cuda_scan`` with ``NUMBA_ENABLE_CUDASIM=1``), each test reading its check's
result; the pytest process never imports ``numba.cuda`` here.
"""

import numpy as np

from gpurules.backends.base import SearchSettings
from gpurules.backends.cpu import CpuBackend
from gpurules.data.binning import bin_features
from gpurules.objectives.heads import HEAD_COMPLETE, HEAD_SINGLE
from tests.reference.cuda_reference import (assert_same_refinements, empty_outputs,
                                            exact_bins, histogram_per_feature,
                                            random_problem, reference_per_feature,
                                            slot_histograms, slot_refinements,
                                            uncovered_bin_problem)
from tests.reference.cuda_support import (run_simulated_checks, simulated_backend_class,
                                          simulated_tests)
from tests.reference.search import USELESS, constant_columns_problem

INV_SCALE = 2.0 ** -20  # the scale of the reference searches
CHECKS = {}


def check(fn):
    CHECKS[fn.__name__] = fn
    return fn


# -- threshold scan ----------------------------------------------------------------------
def _simulate_scan(binned, features, mask, weights, g, h, labels, search, threads,
                   fused=True):
    """``histogram_search.search`` on the reference histograms (indicator 1), at most
    ``threads`` per block, ``fused`` or with the prefix sums in place; one Refinement or
    None per sampled feature."""
    from gpurules.backends.cuda import histogram_search  # numba.cuda: the simulator here
    from gpurules.backends.cuda.search_state import initial_state

    S, K = features.shape[0], g.shape[1]
    out = empty_outputs(S, K)
    slot_offset, *hists = slot_histograms(binned, features, mask, 1, weights, g, h)
    B = max(int(np.diff(slot_offset).max(initial=0)), 1)
    buffers = {}

    def buffer(name, shape, dtype, zero_new):
        # fresh contents where the backend's are undefined: NaN / -7 must never be read
        fill = 0 if zero_new else (np.nan if np.dtype(dtype).kind == "f" else -7)
        buffers[name] = np.full(shape, fill, dtype)
        return buffers[name]

    histogram_search.search(
        histogram_search, buffer, lambda a: a, lambda work: max(1, min(-(-work // threads), 4)),
        threads, tuple(hists), (features, slot_offset, B),
        (binned.bin_offset, binned.bin_min, binned.bin_max, binned.nominal), labels,
        initial_state(labels.size, int(((mask == 1) & (weights != 0)).sum())),
        (search.head_mode, np.asarray(search.params, np.float64), INV_SCALE,
         search.min_coverage, np.array([search.min_quality])), out, fused=fused)
    assert not buffers["tickets"].any(), "the tickets are back at 0"
    return slot_refinements(features, out)


def _compare_scan(reference, binned, features, labels, threads, min_coverage, seed,
                  exact_quality=True):
    """Complete and single heads, without and with a min_quality that some features miss,
    fused and with the prefix sums in place. ``reference(features, mask, weights, g, h,
    labels, search)``: per-feature results."""
    K = int(labels.max()) + 1
    n = binned.bin_index.shape[1]
    _, _, g, h, weights, mask = random_problem(np.random.default_rng(seed), n, 1, K)
    problem = (features, mask, weights, g, h, labels)
    for head, fused in ((HEAD_COMPLETE, True), (HEAD_SINGLE, True), (HEAD_COMPLETE, False)):
        search = SearchSettings.boosting(head, 0.1, 1.0, min_coverage, -np.inf)
        want = reference(*problem, search)
        assert all(w is not None for w in want)
        got = _simulate_scan(binned, *problem, search, threads, fused)
        assert_same_refinements(got, want, exact_quality)
        median = float(np.median([w.quality for w in want]))
        search = SearchSettings.boosting(head, 0.1, 1.0, min_coverage, median)
        want = reference(*problem, search)
        assert any(w is None for w in want)
        got = _simulate_scan(binned, *problem, search, threads, fused)
        assert_same_refinements(got, want, exact_quality)


def _numpy_reference(binned):
    def reference(features, mask, weights, g, h, labels, search):
        return reference_per_feature(binned, features, mask, 1, weights, g, h, labels, search)
    return reference


def _cpu_histogram_reference(binned):
    def reference(features, mask, weights, g, h, labels, search):
        return histogram_per_feature(binned, features, mask, 1, weights, g, h, labels, search)
    return reference


@check
def scan_exact_bins_equals_cpu_histogram_search():
    """One bin per distinct value: per feature, the scan finds what the CPU histogram search
    on the same bins finds, threshold exactly and quality bit for bit (nominal and
    numerical, with missing values)."""
    X, nominal, *_ = random_problem(np.random.default_rng(1), 40, 3, 1)
    X[:, 2] = np.nan_to_num(X[:, 2], nan=0.25)
    binned = exact_bins(X, nominal)
    _compare_scan(_cpu_histogram_reference(binned), binned, np.array([0, 1, 2], np.int64),
                  np.arange(3, dtype=np.int32), 32, 1, seed=2)


@check
def scan_many_tiles_equals_cpu_histogram_search():
    """Slots of many tiles (up to 60 distinct values a feature, a nominal one among them; 16
    bins a tile at 32 threads): each tile's offset and each slot's total come from the tile
    sums, fused and in place; the CPU histogram search's results bit for bit."""
    X, nominal, *_ = random_problem(np.random.default_rng(5), 150, 3, 1, n_distinct=60)
    binned = exact_bins(X, nominal)
    assert min(np.diff(binned.bin_offset)) > 32  # three tiles at least
    _compare_scan(_cpu_histogram_reference(binned), binned, np.array([2, 0, 1], np.int64),
                  np.arange(3, dtype=np.int32), 32, 1, seed=6)


@check
def scan_coarse_bins_equals_cpu_histogram_search():
    """Equal-frequency bins with missing values, a head over a label subset, min_coverage
    > 1: the CPU histogram search on the same bins, thresholds and qualities bit for bit."""
    X, nominal, *_ = random_problem(np.random.default_rng(13), 40, 3, 1, n_distinct=9)
    binned = bin_features(X, nominal, "equal-frequency", bin_ratio=0.2)
    _compare_scan(_cpu_histogram_reference(binned), binned, np.array([1, 2, 0], np.int64),
                  np.array([2, 0], np.int32), 32, 2, seed=14)


@check
def scan_threshold_next_to_an_uncovered_bin():
    """The boundary between two covered bins with an uncovered non-empty bin between them:
    the CPU histogram search cuts next to that bin (11.5, not 11.0 between the covered
    values), and the scan stores the very same threshold."""
    binned, g, h, weights, mask, threshold = uncovered_bin_problem()
    features, labels = np.array([0], np.int64), np.array([0], np.int32)
    for head in (HEAD_COMPLETE, HEAD_SINGLE):
        search = SearchSettings.boosting(head, 0.0, 1.0, 1, -np.inf)
        want = histogram_per_feature(binned, features, mask, 1, weights, g, h, labels, search)
        assert want[0].threshold == threshold, want[0]
        for fused in (True, False):
            got = _simulate_scan(binned, features, mask, weights, g, h, labels, search, 32,
                                 fused)
            assert_same_refinements(got, want)


@check
def scan_coarse_bins_equals_numpy_reference():
    """Equal-width bins with empty bins, a head over a label subset, min_coverage > 1,
    features out of order: the NumPy histogram reference."""
    X, nominal, *_ = random_problem(np.random.default_rng(3), 40, 3, 1, n_distinct=9)
    X[:, 1:] = np.nan_to_num(X[:, 1:], nan=0.0)
    X[X[:, 2] > 0.5, 2] += 4.0  # a gap of empty bins
    binned = bin_features(X, nominal, "equal-width", bin_ratio=1.0)
    assert np.isnan(binned.bin_min).any()
    _compare_scan(_numpy_reference(binned), binned, np.array([2, 0, 1], np.int64),
                  np.array([4, 0, 2], np.int32), 32, 3, seed=4, exact_quality=False)


@check
def prefix_sums_equal_numpy_cumsum():
    """``bin_prefix.prefix`` (tile sums, their scan, the running sums): each column of
    each slot becomes NumPy's cumulative sum over the slot's rows. Slots of 1, 40 and 700
    bins: 44 tiles, more than the scan's 32 threads (each scans a run of two); of 1, 20 and
    40 bins: 3 tiles, 3 threads (a thread per tile at most: not a power of two)."""
    from gpurules.backends.cuda import bin_prefix as bp
    from gpurules.backends.cuda.search_state import initial_state

    for bins, tiles in (((1, 40, 700), 44), ((1, 20, 40), 3)):
        rng = np.random.default_rng(21)
        slot_offset = np.r_[0, np.cumsum(bins)].astype(np.int64)
        R = int(slot_offset[-1])
        hists = (rng.integers(-2**40, 2**40, (R, 2)), rng.integers(0, 2**40, (R, 1)),
                 rng.integers(0, 1000, R))
        want = [np.concatenate([np.cumsum(a[lo:hi], axis=0) for lo, hi in
                                zip(slot_offset[:-1], slot_offset[1:])]) for a in hists]
        assert bp.prefix_layout(max(bins))[1] == tiles

        def buffer(name, shape, dtype, zero_new):  # undefined contents: -7 must not be read
            return np.full(shape, 0 if zero_new else -7, dtype)

        bp.prefix(bp, buffer, lambda a: a, lambda work: 2, 32, hists, slot_offset, max(bins),
                  initial_state(2, R))
        for got, expected in zip(hists, want):
            np.testing.assert_array_equal(got, expected)


@check
def constant_columns_equal_cpu():
    """No candidate that changes nothing (``thresholds.admissible``, the rule's count in
    ``state[COVERED]``) on ``reference.search.constant_columns_problem``: the scan per feature
    equals the CPU histogram search and the NumPy reference (none on the useless columns),
    and ``CudaBackend.refine_rule`` the CPU's fused loop over whole rules (the count carried
    from step to step on the device), also where no drawn feature offers a first condition;
    exact and equal-width bins."""
    backend_class, _ = simulated_backend_class()
    rng = np.random.default_rng(13)
    X, nominal, g, h, weights = constant_columns_problem(rng, n=32)
    n, K = g.shape
    features, labels = np.arange(X.shape[1], dtype=np.int64), np.arange(K, dtype=np.int32)
    mask = np.ones(n, np.int32)  # every example covered at indicator 1
    for binned in (exact_bins(X, nominal), bin_features(X, nominal, "equal-width",
                                                          bin_ratio=0.3)):
        for head in (HEAD_COMPLETE, HEAD_SINGLE):
            search = SearchSettings.boosting(head, 0.0, 1.0, 1, -np.inf)
            want = histogram_per_feature(binned, features, mask, 1, weights, g, h, labels,
                                         search)
            assert [w is None for w in want] == [f in USELESS for f in features]
            assert_same_refinements(_simulate_scan(binned, features, mask, weights, g, h,
                                                   labels, search, 32), want)
            assert_same_refinements(reference_per_feature(binned, features, mask, 1, weights,
                                                          g, h, labels, search), want,
                                    exact_quality=False)
    for columns in (features, USELESS):
        binned = exact_bins(np.ascontiguousarray(X[:, columns]), nominal[columns])
        cpu, gpu = CpuBackend(), backend_class(0, block_size=32)
        for backend in (cpu, gpu):
            backend.start_fit(binned, np.zeros((n, K), np.uint8), None, np.ones(n), 1.0)
            backend.set_statistics(g, h)
        for head, m in ((HEAD_COMPLETE, 0), (HEAD_SINGLE, 3)):
            search = SearchSettings.boosting(head, 0.0, 1.0, 1, -np.inf)
            uniforms = rng.random((4, m))
            results = []
            for backend in (cpu, gpu):
                backend.reset_coverage()
                results.append(backend.refine_rule(uniforms, labels, weights,
                                                   backend.covered_totals(weights), search, 0))
            (want_c, want, _, want_f), (got_c, got, _, got_f) = results
            assert got_c == want_c and got_f == want_f, (got_c, want_c)
            assert_same_refinements([got], [want])
            assert (want is None) == (columns is USELESS)
            np.testing.assert_array_equal(gpu.covered_mask(), cpu.covered_mask())


# -- the tests: read the results of the simulator run ------------------------------------
simulator_results, test_kernel_under_simulator = simulated_tests(__name__, CHECKS)


if __name__ == "__main__":
    run_simulated_checks(CHECKS)
