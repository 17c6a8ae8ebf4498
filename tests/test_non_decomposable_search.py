"""Non-decomposable statistics on the CPU backend: statistics and their update, the dense,
sparse and histogram searches with multi-output heads against brute-force NumPy references
(``np.linalg.solve``), and the fused refinement against the stepwise reference."""

import numpy as np
import pytest
from numba.core import types
from numba.core.compiler import Flags

from gpurules.backends.base import SearchSettings, refine_stepwise
from gpurules.backends.cpu import CpuBackend
from gpurules.data.binning import bin_features
from gpurules.data.presorted import presort_dense
from gpurules.data.sparse import presort_sparse
from gpurules.learners.boosting import statistic_dtype
from gpurules.objectives import non_decomposable as nd
from gpurules.objectives.losses import DECOMPOSABLE_LOSSES
from gpurules.objectives.compiled import multi_output_head
from gpurules.objectives.multi_output import (HEAD_MULTI_OUTPUT, HEAD_ND_SINGLE, SELECT_ALL,
                                              SELECT_DYNAMIC, SELECT_FIXED, all_outputs,
                                              multi_output_params)
from tests.reference import multi_output_search as ref
from tests.reference import non_decomposable_reference as ndref
from tests.reference.search import assert_condition_sums
from tests.test_exact_search import random_problem
from tests.test_jit_cache import package_dispatchers

LOGISTIC = nd.NON_DECOMPOSABLE_LOSSES["logistic-non-decomposable"]
FORMATS = {
    "dense": presort_dense,
    "sparse": presort_sparse,
    "binned": lambda X, nominal: bin_features(X, nominal, "equal-width", 0.5, 2, 0),
}


def nd_backend(X, nominal, Y, P, fmt="dense", threads=1, loss=LOGISTIC):
    """A backend with non-decomposable statistics of the scores ``P`` (float64 (n, K))."""
    backend = CpuBackend(threads, 1)
    backend.start_fit(FORMATS[fmt](X, nominal), Y, loss, np.ones(len(X)), 2.0 ** 30,
                      statistic_dtype(loss))  # the estimators' storage: their compiled forms
    backend.P[:] = P
    backend.set_scale(backend.scale)
    return backend


def problem(seed, n=50, A=5, K=4):
    rng = np.random.default_rng(seed)
    X, nominal, _, _ = random_problem(rng, n=n, A=A, K=K, n_distinct=6, nan_frac=0.1,
                                      nominal_frac=0.3)
    Y = (rng.random((n, K)) < 0.4).astype(np.uint8)
    P = rng.normal(0.0, 1.0, (n, K))
    return rng, X, nominal, Y, P


@pytest.mark.parametrize("name", sorted(nd.NON_DECOMPOSABLE_LOSSES))
def test_statistics_and_their_update_equal_a_fresh_encoding(name):
    rng, X, nominal, Y, P = problem(0)
    loss = nd.NON_DECOMPOSABLE_LOSSES[name]
    backend = nd_backend(X, nominal, Y, P, loss=loss)
    K = Y.shape[1]
    assert backend.h.shape == (50, K * (K + 1) // 2)
    covered = rng.random(50) < 0.5
    backend.mask[:] = np.where(covered, 0, -1)
    labels = np.array([0, 2], np.int32)
    scores = np.array([0.4, -0.7])
    before = backend.covered_totals(None)
    backend.update_statistics(labels, scores)
    P2 = P.copy()
    P2[np.ix_(covered, labels)] += scores
    g, h = np.empty(K), np.empty(K * (K + 1) // 2)
    for i in range(50):
        gi, hi = np.empty(K, np.int64), np.empty(len(h), np.int64)
        nd.encode(loss.code, Y[i], P2[i], 1.0, backend.scale, g, h, gi, hi)
        np.testing.assert_array_equal(backend.g[i], gi)
        np.testing.assert_array_equal(backend.h[i], hi)
        gd, Hd = ndref.statistics(name.split("-non")[0], Y[i], P2[i])
        np.testing.assert_allclose(g, gd, atol=1e-12)
        np.testing.assert_allclose(ndref.unpack(h, K), Hd, atol=1e-12)
    backend.reset_coverage()
    g_all, h_all, _ = backend.covered_totals(None)
    np.testing.assert_array_equal(g_all, backend.g.sum(0))
    np.testing.assert_array_equal(h_all, backend.h.sum(0))
    assert not np.array_equal(before[1], h_all)
    assert backend.max_statistic > 0


HEADS = {
    "complete": (HEAD_MULTI_OUTPUT, multi_output_params(0.0, 1.0, True),
                 lambda G, H: (ndref.complete_head(G, H, 0.0, 1.0)[1], -1)),
    "gblb": (HEAD_MULTI_OUTPUT, multi_output_params(0.0, 1.0, True, binning=(0.5, 1, 0)),
             lambda G, H: (ndref.gblb_head(G, H, 0.0, 1.0, 0.5, 1, 0)[1], -1)),
    "single": (HEAD_ND_SINGLE, np.array([0.0, 1.0]), lambda G, H: ref.single_gain(G, H, 1.0)),
}


@pytest.mark.parametrize("fmt", ["dense", "sparse"])
@pytest.mark.parametrize("head", sorted(HEADS))
@pytest.mark.parametrize("seed", range(4))
def test_search_matches_brute_force(seed, head, fmt):
    rng, X, nominal, Y, P = problem(seed)
    backend = nd_backend(X, nominal, Y, P, fmt, threads=1 + seed % 2)
    mode, params, oracle = HEADS[head]
    weights = np.ones(50, np.int32) if seed < 2 else rng.integers(0, 3, 50).astype(np.int32)
    features = np.arange(X.shape[1], dtype=np.int64)
    labels = np.arange(Y.shape[1], dtype=np.int32)
    covered = np.ones(50, bool)
    if seed % 2:  # below a first condition: exercises the coverage mask
        first = backend.find_best_refinement(features, labels, weights,
                                             backend.covered_totals(weights),
                                             SearchSettings(mode, params, 1, -np.inf))
        backend.apply_refinement(first)
        covered = backend.covered_mask()
    got = backend.find_best_refinement(features, labels, weights,
                                       backend.covered_totals(weights),
                                       SearchSettings(mode, params, 1, -np.inf))
    cands = ref.all_candidates(X, nominal, covered, weights, backend.g, backend.h, features,
                               backend.inv_scale, oracle)
    best = max(c[0] for c in cands)
    assert got.quality == pytest.approx(best, rel=1e-9, abs=1e-12)
    assert_condition_sums(X, covered, weights, backend.g, backend.h, got.feature, got.op,
                          got.threshold, got.count, got.g_sum, got.h_sum)
    mine = [c for c in cands if c[1:4] == (got.feature, got.op, got.threshold)]
    assert mine and mine[0][0] == pytest.approx(got.quality, rel=1e-9, abs=1e-12)
    if head == "single":
        assert got.label == mine[0][5]


PARTIAL = {
    "fixed": multi_output_params(0.0, 1.0, True, SELECT_FIXED, (0.3, 2, 0)),
    "dynamic": multi_output_params(0.0, 1.0, True, SELECT_DYNAMIC, (0.3, 2.0, 0.0)),
    "fixed-gblb": multi_output_params(0.0, 1.0, True, SELECT_FIXED, (0.6, 2, 0), (0.5, 1, 0)),
}


def _refine(refine, backend, uniforms, mode, params, weights, fix_label_after,
            fixes_partial_heads):
    """Refine one rule in blocks of 2 steps as the learner does (``learners.boosting_rule``):
    a partial head's outputs fixed after ``fix_label_after`` conditions, by the engine
    (``fixes_partial_heads``) or between blocks, the first block then ending at the fix;
    afterwards predicting all of them. Returns everything observable."""
    backend.reset_coverage()
    labels = np.arange(backend.g.shape[1], dtype=np.int32)
    totals = backend.covered_totals(weights)
    search = SearchSettings(mode, params, 1, -np.inf)
    conditions, last, finished, start = [], None, False, 0
    while start < uniforms.shape[0] and not finished:
        fix = max(fix_label_after - len(conditions), 0)
        partial = mode == HEAD_MULTI_OUTPUT and search.params[3] != SELECT_ALL
        size = min(2, fix) if partial and fix and not fixes_partial_heads else 2
        found, ref, labels, finished = refine(uniforms[start:start + size], labels, weights,
                                              totals, search, fix)
        start += size
        if ref is None:
            break
        conditions += found
        last = ref
        if partial and len(conditions) >= fix_label_after:
            if not fixes_partial_heads:
                labels = multi_output_head(last.g_sum, last.h_sum, labels,
                                           backend.inv_scale, search.params)[0]
            search = search.with_params(all_outputs(search.params))
        totals = (last.g_sum, last.h_sum, last.count)
        search = search.with_min_quality(last.quality)
    return (conditions, (last.quality, last.count, last.label, last.g_sum.tolist(),
                         last.h_sum.tolist()), labels.tolist(), finished,
            backend.covered_mask().tolist())


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("head", ["complete", "gblb", "single", *sorted(PARTIAL)])
def test_fused_refinement_equals_stepwise(fmt, head):
    """The fused loop, which fixes a partial head itself, against the stepwise reference,
    whose head the caller fixes between blocks (as the learner does)."""
    seed = sorted(FORMATS).index(fmt) + 3 * len(head)
    rng, X, nominal, Y, P = problem(seed, n=60, A=7, K=5)
    mode, params = HEADS[head][:2] if head in HEADS else (HEAD_MULTI_OUTPUT, PARTIAL[head])
    m = 0 if seed % 2 else 3
    uniforms = rng.random((6, m))
    weights = None if seed % 3 == 0 else rng.integers(0, 3, 60).astype(np.int32)
    for threads in (1, 2):
        fused = nd_backend(X, nominal, Y, P, fmt, threads)
        stepwise = nd_backend(X, nominal, Y, P, fmt, threads)
        got = _refine(fused.refine_rule, fused, uniforms, mode, params, weights, 1,
                      fused.fixes_partial_heads)
        want = _refine(lambda *a: refine_stepwise(stepwise, *a), stepwise, uniforms, mode,
                       params, weights, 1, False)
        assert got == want
        assert len(got[0]) > 0


def test_binned_search_with_a_bin_per_value_equals_the_exact_search():
    rng, X, nominal, Y, P = problem(5)
    mode, params = HEADS["complete"][:2]
    found = []
    for fmt, features in (("dense", presort_dense(X, nominal)),
                          ("binned", bin_features(X, nominal, "equal-frequency", 1.0, 2, 0))):
        backend = CpuBackend(1, 1)
        backend.start_fit(features, Y, LOGISTIC, np.ones(50), 2.0 ** 30, np.int32)
        backend.P[:] = P
        backend.set_scale(backend.scale)
        r = backend.find_best_refinement(np.arange(5), np.arange(4, dtype=np.int32), None,
                                         backend.covered_totals(None),
                                         SearchSettings(mode, params, 1, -np.inf))
        found.append((r.feature, r.op, r.quality, r.count, r.g_sum.tolist(), r.h_sum.tolist()))
    assert found[0] == found[1]


def test_decomposable_statistics_keep_their_width():
    rng, X, nominal, Y, _ = problem(1)
    backend = CpuBackend(1, 1)
    backend.start_fit(presort_dense(X, nominal), Y,
                      DECOMPOSABLE_LOSSES["logistic-decomposable"], np.ones(50), 2.0 ** 20,
                      np.int32)
    assert backend.h.shape == backend.g.shape == (50, 4)


def _holds_array(numba_type):
    """Whether a Numba type is, or contains, an array (a reference the caller releases)."""
    if isinstance(numba_type, types.Array):
        return True
    return any(_holds_array(t) for t in getattr(numba_type, "types", ()))


def _with_nrt(cres):
    """Whether a compiled overload was compiled with reference counting (its flags are
    mangled into its symbol's ABI tag)."""
    return "nrt=True" in Flags.demangle(cres.fndesc.abi_tags[0])


def test_no_overload_compiled_without_reference_counting_returns_a_reference():
    """The per-feature searches are compiled with ``_nrt=False`` (``jit.py``); a dispatcher
    they call is compiled under the same flags, and Numba hands that overload to every later
    caller of the signature, in memory and in the disk cache (keyed by the signature only).
    If it returns an array, a reference-counted caller releases references it never got:
    the fused histogram refinement freed its work rows once an exact search had compiled
    ``work_views`` that way (glibc heap corruption, depending on the compile order). The
    exact and sparse searches run first here, as in that order."""
    rng, X, nominal, Y, P = problem(7, n=40, A=4, K=3)
    mode, params = HEADS["complete"][:2]
    for fmt in ("dense", "sparse", "binned"):
        for threads in (1, 2):
            backend = nd_backend(X, nominal, Y, P, fmt, threads)
            steps = _refine(backend.refine_rule, backend, rng.random((2, 0)), mode, params,
                            None, 1, backend.fixes_partial_heads)[0]
            assert steps
    for module, name, disp in package_dispatchers():
        for sig, cres in disp.overloads.items():
            assert _with_nrt(cres) or not _holds_array(cres.signature.return_type), \
                f"{module}.{name}{sig} returns {cres.signature.return_type} without NRT"
