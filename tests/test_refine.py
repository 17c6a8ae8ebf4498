"""The CPU's fused refinement loop (backends/cpu/refine.py) against the stepwise reference
(backends/base.refine_stepwise over the same backend's single-step calls)."""

import numpy as np
import pytest

from gpurules.backends.base import SearchSettings, refine_stepwise
from gpurules.backends.cpu import CpuBackend
from gpurules.data.binning import bin_features
from gpurules.data.presorted import presort_dense
from gpurules.data.sparse import presort_sparse
from gpurules.objectives.heads import HEAD_COMPLETE, HEAD_SINGLE
from gpurules.objectives.losses import DECOMPOSABLE_LOSSES
from tests.test_exact_search import random_problem

REPRESENTATIONS = {
    "dense": presort_dense,
    "sparse": presort_sparse,
    "binned": lambda X, nominal: bin_features(X, nominal, "equal-width", 0.5, 2, 0),
}


def _fitted_backend(X, nominal, Y, representation, threads):
    backend = CpuBackend(threads, 1)
    backend.start_fit(REPRESENTATIONS[representation](X, nominal), Y,
                      DECOMPOSABLE_LOSSES["logistic-decomposable"], np.ones(len(X)), 2.0 ** 20,
                      np.int32)  # the estimators' storage, so their compiled forms
    return backend


def _refine(refine, backend, uniforms, head, weights, fix_label_after, min_coverage):
    """Refine one rule in blocks of 2 steps; returns everything observable."""
    backend.reset_coverage()
    K = backend.g.shape[1]
    labels = np.arange(K, dtype=np.int32)
    totals = backend.covered_totals(weights)
    search = SearchSettings.boosting(head, 0.1, 1.0, min_coverage, -np.inf)
    steps, n_conditions, finished = [], 0, False
    for start in range(0, uniforms.shape[0], 2):
        if finished:
            break
        fix = max(fix_label_after - n_conditions, 0) if fix_label_after else 0
        conditions, last, labels, finished = refine(uniforms[start:start + 2], labels,
                                                    weights, totals, search, fix)
        if last is None:
            break
        steps += conditions + [(last.quality, last.count, last.label, last.g_sum.tolist())]
        n_conditions += len(conditions)
        totals = (last.g_sum, last.h_sum, last.count)
        search = SearchSettings(head, search.params, min_coverage, last.quality)
    return steps, labels.tolist(), finished, backend.covered_mask().tolist()


@pytest.mark.parametrize("representation", sorted(REPRESENTATIONS))
@pytest.mark.parametrize("seed", range(4))
def test_fused_refinement_equals_stepwise(representation, seed, parallel_forms):
    rng = np.random.default_rng(seed)
    X, nominal, _, _ = random_problem(rng, n=60, A=7, K=3, n_distinct=6, nan_frac=0.1,
                                      nominal_frac=0.3)
    Y = (rng.random((60, 3)) < 0.4).astype(np.uint8)
    head = HEAD_SINGLE if seed % 2 else HEAD_COMPLETE
    m = 0 if seed < 2 else 3  # all features, or 3 drawn per step
    uniforms = rng.random((6, m))
    weights = None if seed % 3 == 0 else rng.integers(0, 3, 60).astype(np.int32)
    fix, min_coverage = (1, 1) if seed < 3 else (0, 8)
    # the parallel forms share the per-feature search with the serial ones: each parallel
    # form is checked with complete heads, the single-output family's only on dense data
    # (every further form and head family is a compile of its own, tens of CPU seconds)
    parallel = head == HEAD_COMPLETE or representation == "dense"
    for threads in ((1, 2) if parallel else (1,)):
        fused = _fitted_backend(X, nominal, Y, representation, threads)
        stepwise = _fitted_backend(X, nominal, Y, representation, threads)
        got = _refine(fused.refine_rule, fused, uniforms, head, weights, fix, min_coverage)
        want = _refine(lambda *a: refine_stepwise(stepwise, *a), stepwise, uniforms, head,
                       weights, fix, min_coverage)
        assert got == want
        assert len(got[0]) > 0


def test_search_without_empty_bins_equals_search_with_them():
    from gpurules.data.binning import drop_empty_bins

    rng = np.random.default_rng(3)
    X = rng.integers(0, 6, size=(80, 5)).astype(np.float32) * 3.0
    X[rng.random((80, 5)) < 0.1] = np.nan
    nominal = np.array([False, True, False, False, False])
    Y = (rng.random((80, 3)) < 0.4).astype(np.uint8)
    binned = bin_features(X, nominal, "equal-width")
    results = []
    for features in (binned, drop_empty_bins(binned)):
        backend = CpuBackend(1, 1)
        backend.start_fit(features, Y, DECOMPOSABLE_LOSSES["logistic-decomposable"],
                          np.ones(80), 2.0 ** 20, np.int32)
        results.append(_refine(backend.refine_rule, backend, np.empty((4, 0)), HEAD_SINGLE,
                               None, 1, 1))
    assert results[0] == results[1]
