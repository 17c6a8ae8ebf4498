"""CUDA code executed without a GPU, against the CPU backend and NumPy.

The Numba CUDA kernels under the CUDA simulator. The simulator must be on before
   ``numba.cuda`` is first imported, so these checks run in one fresh interpreter
   (``python -m tests.test_cuda_simulator`` with ``NUMBA_ENABLE_CUDASIM=1``) and each test
   reads its check's result; the pytest process never imports ``numba.cuda`` here. (The
   threshold scan alone: ``test_cuda_scan.py``.) One check runs the whole ``CudaBackend``
   with ``tests/reference/fake_cupy.py`` standing in for CuPy. (The CUDA C kernels of
``kernels/histogram.cu`` run on the host in ``test_cuda_c_histograms.py``.)

The simulator runs no blocks concurrently, and here a block's threads one at a time
(``tests/reference/simulator.py``, checked in ``test_simulator.py``), so it cannot find
races. It costs about 1 ms per simulated thread: grids and inputs are tiny.
"""

import numpy as np

from gpurules.backends.base import SearchSettings
from gpurules.backends.cpu import CpuBackend
from gpurules.backends.cuda.histograms import WIDE_KERNELS
from gpurules.backends.thresholds import midpoint
from gpurules.conditions import OP_EQ, OP_GR, OP_LEQ, OP_NEQ
from gpurules.data.binning import bin_features
from gpurules.data.presorted import presort_dense
from gpurules.objectives.heads import HEAD_COMPLETE, HEAD_SINGLE
from gpurules.objectives.losses import DECOMPOSABLE_LOSSES
from tests.reference.cuda_reference import (assert_same_refinements, assert_same_statistics,
                                            assert_same_totals, compare_backends, cpu_backend,
                                            exact_bins, random_problem)
from tests.reference.cuda_support import (run_simulated_checks, simulated_backend_class,
                                          simulated_tests)
from tests.reference.search import satisfied

SCALE = 2.0 ** 30
GRID = (2, 32)  # blocks, threads per block of the element-wise kernels
CHECKS = {}


def check(fn):
    CHECKS[fn.__name__] = fn
    return fn


def covered_list(mask, indicator, slot=0):
    """The compacted list of the covered examples (``coverage``'s module docstring):
    (covered int32 (n,), in descending order (any order must do), lens int32 (RING,),
    slot)."""
    from gpurules.backends.cuda.coverage import RING

    listed = np.flatnonzero(mask == indicator)[::-1]
    covered = np.zeros(mask.shape[0], np.int32)
    covered[:listed.size] = listed
    lens = np.zeros(RING, np.int32)
    lens[slot] = listed.size
    return covered, lens, slot


def _kernels():
    from gpurules.backends.cuda import kernels  # imports numba.cuda: the simulator here

    return kernels


# -- statistics: the CPU backend, through its protocol, is the reference -------------------
def _statistics_problem(loss_name, n=30, K=3):
    """A CpuBackend after start_fit (P = 0), and the simulated arrays Y, P, base_weight."""
    rng = np.random.default_rng(len(loss_name))
    Y = (rng.random((n, K)) < 0.4).astype(np.uint8)
    base_weight = rng.uniform(0.5, 2.0, size=n)
    cpu = CpuBackend()
    cpu.start_fit(presort_dense(np.zeros((n, 1), np.float32), np.zeros(1, bool)), Y,
                  DECOMPOSABLE_LOSSES[loss_name], base_weight, SCALE)
    return cpu, Y, np.zeros((n, K)), base_weight


@check
def statistics_equal_cpu():
    """compute_all_statistics, then update_statistics three times (different coverage and
    heads, the last of every label: the CPU's contiguous loops), for every loss: P, g and h
    equal the CPU backend's exactly."""
    k = _kernels()
    for loss_name, loss in DECOMPOSABLE_LOSSES.items():
        cpu, Y, P, base_weight = _statistics_problem(loss_name)
        g, h = np.zeros(Y.shape, np.int64), np.zeros(Y.shape, np.int64)
        k.compute_all_statistics[GRID](loss.code, Y, P, base_weight, SCALE, g, h)
        np.testing.assert_array_equal(g, cpu.g, err_msg=f"compute_all g, {loss_name}")
        np.testing.assert_array_equal(h, cpu.h, err_msg=f"compute_all h, {loss_name}")
        heads = (([2, 0], [0.3, -0.7]), ([1], [1.1]), ([0, 1, 2], [-2.5, 0.4, 31.0]))
        for step, (labels, scores) in enumerate(heads):
            mask = (np.arange(Y.shape[0]) % (3 + step) != 0).astype(np.int32) * 4
            labels, scores = np.array(labels, np.int32), np.array(scores)
            cpu.mask[:], cpu.indicator = mask, 4
            cpu.update_statistics(labels, scores)
            k.update_statistics[GRID](loss.code, Y, P, base_weight, SCALE, g, h,
                                      *covered_list(mask, 4), labels, scores)
            for name, a, b in (("P", P, cpu.P), ("g", g, cpu.g), ("h", h, cpu.h)):
                np.testing.assert_array_equal(a, b, err_msg=f"{name}, {loss_name}, {step}")
        assert (P != 0).sum() > Y.shape[0]


@check
def covered_totals_equal_cpu():
    """Thread layouts: more threads than labels (two blocks, one finishing last), more
    labels than threads; sums written without being zeroed first, the ticket back at 0."""
    for (blocks, threads), K in ((GRID, 3), ((1, 2), 5), ((3, 4), 3)):
        X, nominal, g, h, weights, mask = random_problem(np.random.default_rng(K), 50, 1, K)
        want = cpu_backend(presort_dense(X, nominal), g, h, mask, 1).covered_totals(weights)
        partial = np.full((blocks, 2 * K + 1), -3, np.int64)
        ticket, sums = np.zeros(1, np.int32), np.full(2 * K + 1, -5, np.int64)
        _kernels().covered_totals[blocks, threads](*covered_list(mask, 1), weights, g, h,
                                                   partial, ticket, sums)
        np.testing.assert_array_equal(sums[:K], want[0])
        np.testing.assert_array_equal(sums[K:2 * K], want[1])
        assert sums[2 * K] == want[2] and ticket[0] == 0


# -- coverage ----------------------------------------------------------------------------
@check
def apply_binned_condition_equals_raw_values():
    """Every operator, on exact and coarse bins, with missing values: the covered examples
    that satisfy the condition on their raw value move to indicator + 1 and make up the new
    covered list; the length slot before the current one is cleared, the others kept. The
    second grid, 2 blocks of 8 threads, passes over the covered list in several rounds."""
    from gpurules.backends.cuda.coverage import RING

    X, nominal, _, _, _, mask = random_problem(np.random.default_rng(5), 40, 2, 1,
                                               n_distinct=7, nan_frac=0.2)
    for binned in (exact_bins(X, nominal), bin_features(X, nominal, "equal-frequency",
                                                         bin_ratio=0.5)):
        lo = binned.bin_offset
        cases = [(0, op, binned.bin_min[lo[0] + 1]) for op in (OP_EQ, OP_NEQ)]
        cut = midpoint(binned.bin_max[lo[1]], binned.bin_min[lo[1] + 1])
        cases += [(1, op, cut) for op in (OP_LEQ, OP_GR)]
        for step, (f, op, threshold, grid) in enumerate(
                (*case, grid) for case in cases for grid in (GRID, (2, 8))):
            step += 13 * (step % 2)  # the ring wraps around at 16
            want = np.where((mask == 1) & satisfied(X[:, f], op, threshold), 2, mask)
            got = mask.copy()
            src, lens, slot = covered_list(mask, 1, slot=step % RING)
            dst = np.full_like(src, -1)
            before, ahead = (step - 1) % RING, (step + 2) % RING
            lens[before], lens[ahead] = 5, 7
            _kernels().apply_binned_condition[grid](f, op, np.float32(threshold),
                                                    binned.bin_index, binned.bin_offset,
                                                    binned.bin_min, got, 1, src, dst, lens,
                                                    step)
            np.testing.assert_array_equal(got, want, err_msg=f"feature {f}, op {op}")
            assert 0 < (want == 2).sum() < (mask == 1).sum()
            out = lens[(step + 1) % RING]  # the new list: the examples now at indicator 2
            np.testing.assert_array_equal(np.sort(dst[:out]), np.flatnonzero(want == 2))
            assert (dst[out:] == -1).all() and lens[before] == 0 and lens[ahead] == 7
            assert lens[slot] == (mask == 1).sum()


# -- the backend's plumbing -----------------------------------------------------------------
@check
def backend_equals_cpu_backend():
    """CudaBackend's uploads, launches, argument types (against the CUDA C signatures),
    shared/global split, coverage and statistics: refinements, totals, scores and statistics
    equal the CpuBackend's (histogram search, same bins, squared error) exactly; also by global
    atomics only, and by each ``wide_histograms`` (sorted: its twin reads the mask)."""
    backend_class, fake_cupy = simulated_backend_class()
    rng = np.random.default_rng(7)
    n, K = 40, 3
    X, nominal, *_ = random_problem(rng, n, 4, 1)
    X[:, 3] = rng.permutation(n).astype(np.float32) * 0.1  # 40 bins: too wide for shared
    Y = (rng.random((n, K)) < 0.5).astype(np.uint8)
    base_weight = rng.uniform(0.5, 2.0, size=n)
    loss = DECOMPOSABLE_LOSSES["squared-error-decomposable"]
    for force_global, wide in ((False, "global"), (True, "global"), (False, "by-slot"),
                               (True, "sorted")):
        cpu = CpuBackend()
        gpu = backend_class(0, force_global_atomics=force_global, block_size=32,
                            wide_histograms=wide)
        for backend in (cpu, gpu):
            backend.start_fit(exact_bins(X, nominal), Y, loss, base_weight, SCALE)
        fake_cupy.launches.clear()
        compare_backends(cpu, gpu, np.random.default_rng(8))
        used = {name for name, *_ in fake_cupy.launches}
        assert used == ({"zero_histograms", WIDE_KERNELS[wide]} if force_global else
                        {"zero_histograms", WIDE_KERNELS[wide], "histogram_shared"}), used


@check
def backend_with_statistics_set_by_the_learner():
    """A fit started without a loss (``loss=None``): ``set_statistics`` replaces the
    statistics, and the refinements, totals and ``covered_mask`` equal the CpuBackend's
    (histogram search on the same bins)."""
    backend_class, _ = simulated_backend_class()
    rng = np.random.default_rng(9)
    n, K = 30, 2
    X, nominal, *_ = random_problem(rng, n, 3, 1)
    g = rng.integers(0, 3, size=(n, K)).astype(np.int64)
    h = g + rng.integers(0, 3, size=(n, K))
    cpu, gpu = CpuBackend(), backend_class(0, block_size=32)
    binned = exact_bins(X, nominal)
    for backend in (cpu, gpu):
        backend.start_fit(binned, np.zeros((n, K), np.uint8), None, np.ones(n), 1.0)
    features, labels = np.arange(3, dtype=np.int64), np.arange(K, dtype=np.int32)
    search = SearchSettings.boosting(HEAD_COMPLETE, 0.0, 1.0, 1, -np.inf)
    for backend in (cpu, gpu):
        backend.set_statistics(g, h)
    totals = cpu.covered_totals(None)
    np.testing.assert_array_equal(gpu.covered_totals(None)[0], g.sum(0))
    want = cpu.find_best_refinement(features, labels, None, totals, search)
    got = gpu.find_best_refinement(features, labels, None, totals, search)
    assert_same_refinements([got], [want])
    order = features[::-1].copy()  # each feature's best, best first (the beam search's)
    several = [b.find_best_refinement(order, labels, None, totals, search, count=3)
               for b in (cpu, gpu)]
    assert len(several[0]) > 1
    assert_same_refinements(several[1], several[0])
    cpu.apply_refinement(want)
    gpu.apply_refinement(got)
    np.testing.assert_array_equal(gpu.covered_mask(), cpu.covered_mask())
    assert 0 < cpu.covered_mask().sum() < n


@check
def select_best_contract():
    """``refine.select_best`` on hand-made slots: the first best in the caller's order
    (slot 2, caller index 0, ties slot 1), its record and sums, ``min_quality`` raised, the
    rule's covered count set to its count, a
    single-label head's label fixed (labels[0], one label searched), not finished; then
    nothing once finished; no candidate: finished, no step recorded."""
    from gpurules.backends.cuda import refine
    from gpurules.backends.cuda.histogram_search import BLOCK
    from gpurules.backends.cuda.search_state import (COVERED, FINISHED, LABEL_FIXED,
                                                     NUM_LABELS, STEPS, initial_state)

    def launch(state, op, r=1, fix=2):
        q = np.array([1.0, 3.0, 3.0])
        out = (q, np.asarray(op, np.int8), np.array([0.5, 1.5, 2.5], np.float32),
               np.array([9, 8, 5]), np.array([5, 6, 7], np.int32),
               np.arange(6).reshape(3, 2), np.arange(6, 12).reshape(3, 2))
        labels, quality = np.arange(3, dtype=np.int32), np.array([0.5])
        res = (np.zeros(2, np.int64), np.full(2, -1, np.int8), np.zeros(2, np.float32),
               np.zeros(2), np.zeros(2, np.int64), np.zeros(2, np.int32),
               np.zeros(2, np.int64), np.zeros(2, np.int64))
        refine.select_best[1, BLOCK](r, state, np.array([2, 1, 0]), np.array([40, 41, 42]),
                                     *out, labels, quality, fix, 4, *res)
        return labels, quality, res

    state = initial_state(3, 20)
    labels, quality, res = launch(state, [0, 1, 0])
    f, op, thr, q, cnt, label, g, h = res
    assert (f[1], op[1], thr[1], q[1], cnt[1], label[1]) == (42, 0, np.float32(2.5), 3.0, 5, 7)
    assert g.tolist() == [4, 5] and h.tolist() == [10, 11] and quality[0] == 3.0
    assert labels[0] == 7 and state[NUM_LABELS] == 1 and state[LABEL_FIXED] == 1
    assert state[STEPS] == 2 and state[FINISHED] == 0 and state[COVERED] == 5
    state[FINISHED] = 1
    _, quality, res = launch(state, [0, 1, 0])
    assert quality[0] == 0.5 and res[0][1] == 0 and state[STEPS] == 2
    state = initial_state(3, 20)
    labels, quality, _ = launch(state, [-1, -1, -1], r=0)
    assert state[FINISHED] == 1 and state[STEPS] == 0 and labels[0] == 0


def _refine_cases(rng, n):
    """(head mode, steps R, sampled features m (0 = all), fix_label_after, min_coverage,
    weights) of ``refine_rule_equals_cpu_fused_loop``."""
    drawn = rng.choice(np.array([0, 1, 2], np.int32), size=n)
    return [(HEAD_COMPLETE, 8, 0, 0, 1, None), (HEAD_SINGLE, 8, 3, 1, 1, drawn),
            (HEAD_SINGLE, 9, 2, 2, 1, None), (HEAD_COMPLETE, 8, 2, 0, 12, drawn),
            (HEAD_SINGLE, 3, 0, 0, 1, None)]


@check
def refine_rule_equals_cpu_fused_loop():
    """``CudaBackend.refine_rule`` (device-resident blocks, ``cuda/refine.py``) against the
    CPU's fused loop: the same conditions, last refinement, labels and finished flag, then
    the same coverage, totals and statistics; complete and single heads (label fixed after 1
    or 2 steps), all and sampled features, unit and drawn weights, a ``min_coverage`` stop,
    rules that end inside a block; blocks of 14 and of 2 steps (a call split into several
    blocks); shared and sorted (from the mask), then global histograms."""
    from gpurules.backends.cuda import refine

    backend_class, _ = simulated_backend_class()
    rng = np.random.default_rng(11)
    n, K = 48, 3
    X, nominal, *_ = random_problem(rng, n, 5, 1)
    # feature 1: 48 bins, too wide for shared memory, so its slot comes after feature 3's;
    # feature 3 is its copy clipped at 30 (31 bins, shared): its conditions below 30 tie
    # with feature 1's, and the first in the caller's order (feature 1) must win
    X[:, 1] = rng.permutation(n).astype(np.float32)
    X[:, 3] = np.minimum(X[:, 1], 30)
    Y = (rng.random((n, K)) < 0.5).astype(np.uint8)
    Y[:, 0] = (X[:, 1] < 20) ^ (rng.random(n) < 0.25)
    loss = DECOMPOSABLE_LOSSES["squared-error-decomposable"]
    binned, labels = exact_bins(X, nominal), np.arange(K, dtype=np.int32)
    ended_inside, ties, saved = 0, 0, refine.MAX_STEPS
    try:
        for force_global, max_steps, wide in ((False, saved, "sorted"), (True, 2, "global")):
            refine.MAX_STEPS = max_steps
            cpu, gpu = CpuBackend(), backend_class(0, force_global_atomics=force_global,
                                                   block_size=32, wide_histograms=wide)
            for backend in (cpu, gpu):
                backend.start_fit(binned, Y, loss, np.ones(n), SCALE)
            cases = _refine_cases(rng, n)
            # blocks of 2 on the global path: the three cases with sampled features (a
            # single head fixed after 1 and 2 steps, a complete head stopped by
            # min_coverage), to keep the simulated threads few
            for head, R, m, fix, min_cov, weights in cases[1:4] if force_global else cases:
                search = SearchSettings.boosting(head, 0.0, 1.0, min_cov, -np.inf)
                uniforms = rng.random((R, m))
                results = []
                for backend in (cpu, gpu):
                    backend.reset_coverage()
                    totals = backend.covered_totals(weights)
                    results.append(backend.refine_rule(uniforms, labels, weights, totals,
                                                       search, fix))
                (want_c, want, want_l, want_f), (got_c, got, got_l, got_f) = results
                assert got_c == want_c and got_f == want_f, (got_c, want_c, got_f, want_f)
                assert_same_refinements([got], [want])
                np.testing.assert_array_equal(got_l, want_l)
                np.testing.assert_array_equal(gpu.covered_mask(), cpu.covered_mask())
                assert_same_totals(gpu.covered_totals(weights), cpu.covered_totals(weights))
                ended_inside += want_f and len(want_c) < R
                ties += sum(f == 1 and thr < 30 for f, _, thr in want_c)
                scores = rng.normal(0.0, 0.5, size=want_l.size)
                cpu.update_statistics(want_l, scores)
                gpu.update_statistics(want_l, scores)
                assert_same_statistics(cpu, gpu)
    finally:
        refine.MAX_STEPS = saved
    assert ended_inside >= 3 and ties >= 2, (ended_inside, ties)


@check
def seco_refinements_equal_cpu():
    """SeCo heads (single; partial choosing its labels; partial over fixed labels) with
    four heuristics (two on each binning, to keep the simulated threads few): the simulated
    CudaBackend's histogram scan finds the CpuBackend's histogram search's refinements on
    the same bins, thresholds and qualities bit for bit, on exact bins and on equal-width
    bins."""
    from gpurules.objectives import heuristics as H
    from gpurules.objectives.lift_functions import lift_tables

    backend_class, _ = simulated_backend_class()
    rng = np.random.default_rng(12)
    n, K = 40, 3
    X, nominal, *_ = random_problem(rng, n, 3, 1)
    Y = (rng.random((n, K)) < 0.4).astype(np.uint8)
    uncovered = rng.random((n, K)) < 0.8
    g = ((Y == 1) & uncovered).astype(np.int64)
    h = uncovered.astype(np.int64)
    weights = rng.integers(0, 3, n).astype(np.int32)
    lift = lift_tables("peak", {"peak_label": 2, "max_lift": 1.08, "curvature": 1.0}, Y)
    features, labels = np.arange(3, dtype=np.int64), np.arange(K, dtype=np.int32)
    heuristics = ((("f-measure", 0.25), ("laplace", 0.0)),
                  (("m-estimate", 22.466), ("weighted-relative-accuracy", 0.0)))
    for binned, chosen in zip((exact_bins(X, nominal),
                               bin_features(X, nominal, "equal-width", bin_ratio=0.5)),
                              heuristics):
        cpu, gpu = CpuBackend(), backend_class(0, block_size=32)
        for backend in (cpu, gpu):
            backend.start_fit(binned, Y, None, np.ones(n), 1.0)
            backend.set_statistics(g, h)
        totals = cpu.covered_totals(weights)
        np.testing.assert_array_equal(gpu.covered_totals(weights)[1], totals[1])
        for name, option in chosen:
            hid = H.HEURISTIC_IDS[name]
            for mode, select in ((H.HEAD_SECO_SINGLE, True), (H.HEAD_SECO_PARTIAL, True),
                                 (H.HEAD_SECO_PARTIAL, False)):
                params = H.seco_params(hid, H.heuristic_parameter(hid, option), *lift,
                                       totals[0], totals[1], select)
                search = SearchSettings(mode, params, 1, 0.0)
                want = cpu.find_best_refinement(features, labels, weights, totals, search)
                got = gpu.find_best_refinement(features, labels, weights, totals, search)
                assert want is not None
                assert_same_refinements([got], [want])


@check
def beam_search_fit_equals_cpu():
    """A BOOMER fit grown by beam search (single-label heads, whose label is fixed after the
    first condition per beam rule; features drawn per rule): each rule's coverage from a
    device snapshot, a depth's searches in one ``find_best_refinements`` call, the CPU's
    model (the fused CPU beam); the GPU test ``test_beam_search_fit_equals_cpu`` is the
    same at 1,200 examples."""
    from gpurules import BoomerClassifier
    from gpurules.estimators.boomer_params import resolve_config
    from gpurules.learners.boosting import BoostingLearner

    backend_class, _ = simulated_backend_class()
    rng = np.random.default_rng(8)
    X, nominal, *_ = random_problem(rng, 80, 6, 1, n_distinct=20, nominal=(2,))
    Y = (rng.random((80, 3)) < 0.3).astype(np.uint8)
    config, _ = resolve_config(BoomerClassifier(
        head_type="single", max_rules=3, random_state=1,
        rule_induction="top-down-beam-search{beam_width=3,resample_features=true}"))
    binned = bin_features(X, nominal, "equal-width", bin_ratio=0.5)
    cpu_model, gpu_model = (
        BoostingLearner(config, backend, np.random.default_rng(1)).fit(
            binned, Y, np.ones(X.shape[0])).build()
        for backend in (CpuBackend(), backend_class(0, block_size=32)))
    assert len(cpu_model) == len(gpu_model) == 3, (cpu_model, gpu_model)
    for name in ("default_scores", "cond_feature", "cond_op", "cond_threshold",
                 "rule_cond_start", "head_label", "head_score", "rule_head_start"):
        np.testing.assert_array_equal(getattr(gpu_model, name), getattr(cpu_model, name),
                                      err_msg=name)


# -- the tests: read the results of the simulator run ------------------------------------
simulator_results, test_kernel_under_simulator = simulated_tests(__name__, CHECKS)


if __name__ == "__main__":
    run_simulated_checks(CHECKS)
