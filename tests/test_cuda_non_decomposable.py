"""Non-decomposable losses and multi-output heads on the CUDA backend, against the CPU
backend's histogram search (same binned features, same seed: same results).

1. Under the Numba CUDA simulator, with ``tests/reference/fake_cupy.py`` standing in for
   CuPy (one fresh interpreter, ``python -m tests.test_cuda_non_decomposable`` with
   ``NUMBA_ENABLE_CUDASIM=1``, as in ``test_cuda_simulator.py``): the packed-Hessian
   statistics, their updates and re-scaling; histograms; the refinements of the batched
   candidate search (complete heads with and without GBLB, partial-fixed and
   partial-dynamic heads, single-output heads; nominal features, missing values, weights,
   ``min_coverage``; qualities bit for bit); whole ``BoomerClassifier`` fits with
   ``device="cuda"``.
2. Without the simulator: kernels compiled from ``gpurules`` get NVVM's ``-fma=0`` and other
   kernels do not (``device_math._compile_without_contraction``).
3. The CUDA C histogram kernels with Hessians wider than the gradients (W = K(K+1)/2), run on
   the host by ``tests/reference/cuda_host_harness.cpp``.
4. ``gpu``-marked tests: the same comparisons on a real GPU (skipped without one).

The simulator costs about 1 ms per simulated thread: data and grids are tiny.
"""

import contextlib
import os

import numpy as np
import pytest

from gpurules.backends.base import SearchSettings
from gpurules.backends.cpu import CpuBackend
from gpurules.backends.cuda.histograms import shared_histogram_bytes
from gpurules.data.binning import bin_features, drop_empty_bins
from gpurules.objectives.multi_output import (HEAD_MULTI_OUTPUT, HEAD_ND_SINGLE,
                                              SELECT_DYNAMIC, SELECT_FIXED,
                                              multi_output_params)
from gpurules.objectives.non_decomposable import NON_DECOMPOSABLE_LOSSES, packed_size
from gpurules.objectives.quality import boosting_params
from tests.reference.cuda_reference import (assert_same_refinements, dataset_histograms,
                                            random_problem, slot_histograms, slot_layout)
from tests.reference.cuda_support import (require, run_checks, run_isolated, simulated_tests,
                                          skip_without_gpu)
from tests.reference.histogram import histograms

LOGISTIC = NON_DECOMPOSABLE_LOSSES["logistic-non-decomposable"]
SQUARED_ERROR = NON_DECOMPOSABLE_LOSSES["squared-error-non-decomposable"]
SCALE = 2.0 ** 30
CHECKS = {}
COMPILE_CHECKS = {}


def check(fn):
    CHECKS[fn.__name__] = fn
    return fn


# -- problems and settings shared by the simulator and GPU runs --------------------------
def problem(seed, n=30, A=4, K=3, compact=True):
    """(binned features, Y uint8 (n, K), base weights float64 (n,), drawn int32 weights):
    feature 0 nominal, missing values, equal-width bins (with empty bins unless
    ``compact``)."""
    rng = np.random.default_rng(seed)
    X, nominal, *_ = random_problem(rng, n, A, 1, n_distinct=7, nominal=(0,))
    X[:, A - 1] = rng.normal(size=n).astype(np.float32)  # many distinct values
    binned = bin_features(X, nominal, "equal-width", bin_ratio=0.6)
    if compact:
        binned = drop_empty_bins(binned)
    Y = (rng.random((n, K)) < 0.45).astype(np.uint8)
    return binned, Y, rng.uniform(0.5, 2.0, size=n), rng.choice(
        np.array([0, 1, 1, 2], np.int32), size=n)


def head_settings(K, min_coverage=1):
    """name -> SearchSettings of the heads the batched search serves."""
    packed = dict(l1=0.0, l2=1.0, packed=True)
    return {
        "complete": SearchSettings(HEAD_MULTI_OUTPUT, multi_output_params(**packed),
                                   min_coverage, -np.inf),
        "complete-gblb": SearchSettings(
            HEAD_MULTI_OUTPUT, multi_output_params(**packed, binning=(0.5, 1, 0)),
            min_coverage, -np.inf),
        "partial-fixed": SearchSettings(
            HEAD_MULTI_OUTPUT, multi_output_params(**packed, selection=SELECT_FIXED,
                                                   options=(0.5, 1, 0)),
            min_coverage, -np.inf),
        "partial-dynamic-gblb": SearchSettings(
            HEAD_MULTI_OUTPUT, multi_output_params(0.1, 1.0, True, SELECT_DYNAMIC,
                                                   (0.02, 2.0, 0.0), (0.5, 1, 0)),
            min_coverage, -np.inf),
        "single": SearchSettings(HEAD_ND_SINGLE, boosting_params(0.0, 1.0), min_coverage,
                                 -np.inf),
    }


def start_both(cuda_backend, binned, Y, loss, base_weight, scale=SCALE):
    """A CpuBackend (histogram search) and ``cuda_backend`` after start_fit on the same data."""
    cpu = CpuBackend()
    for backend in (cpu, cuda_backend):
        backend.start_fit(binned, Y, loss, base_weight, scale)
    return cpu, cuda_backend


def assert_same_state(cpu, gpu, where):
    """Scores, statistics and the largest statistic, bit for bit."""
    np.testing.assert_array_equal(gpu.training_scores(), cpu.training_scores(),
                                  err_msg=f"{where}: scores")
    np.testing.assert_array_equal(gpu.cp.asnumpy(gpu.g), cpu.g, err_msg=f"{where}: g")
    np.testing.assert_array_equal(gpu.cp.asnumpy(gpu.h), cpu.h, err_msg=f"{where}: h")
    assert gpu.max_statistic == cpu.max_statistic, where


def compare_statistics(cpu, gpu, rng):
    """start_fit, two updates on different coverage and heads, a new scale."""
    n, K = cpu.g.shape
    assert cpu.h.shape == (n, packed_size(K)) and gpu.h.shape == cpu.h.shape
    assert_same_state(cpu, gpu, "start_fit")
    for step, labels in enumerate((np.arange(K, dtype=np.int32), np.array([K - 1, 0],
                                                                          np.int32))):
        mask = (np.arange(n) % (3 + step) != 0).astype(np.int32) * 2
        cpu.mask[:], cpu.indicator = mask, 2
        gpu.set_coverage(mask, 2)
        scores = rng.normal(0.0, 1.5, size=labels.size)
        for backend in (cpu, gpu):
            backend.update_statistics(labels, scores)
        assert_same_state(cpu, gpu, f"update {step}")
    for backend in (cpu, gpu):
        backend.set_scale(backend.scale / 4)
    assert_same_state(cpu, gpu, "set_scale")


def compare_refinements(cpu, gpu, weights, search, steps=3):
    """Totals and ``steps`` refinements over all features, each applied to both backends."""
    n, K = cpu.g.shape
    features = np.arange(cpu.features.num_features, dtype=np.int64)
    labels = np.arange(K, dtype=np.int32)
    for backend in (cpu, gpu):
        backend.reset_coverage()
    found = 0
    for step in range(steps):
        totals = cpu.covered_totals(weights)
        got_totals = gpu.covered_totals(weights)
        for a, b in zip(got_totals[:2], totals[:2]):
            np.testing.assert_array_equal(a, b, err_msg=f"step {step}: totals")
        assert got_totals[2] == totals[2]
        want = cpu.find_best_refinement(features, labels, weights, totals, search)
        got = gpu.find_best_refinement(features, labels, weights, totals, search)
        assert_same_refinements([got], [want])
        if want is None:
            break
        found += 1
        np.testing.assert_array_equal(gpu.covered_mask(), cpu.covered_mask())
        cpu.apply_refinement(want)
        gpu.apply_refinement(got)
        search = SearchSettings(search.head_mode, search.params, search.min_coverage,
                                want.quality)
    assert found > 0


def fit_models(estimator_class, cuda_device, **params):
    """(CPU model, CUDA model, CPU predictions, CUDA predictions) of two fits with
    ``params`` on equal-width bins; ``cuda_device``: the device string of the CUDA fit."""
    rng = np.random.default_rng(11)
    n, K = 60, 4
    X, nominal, *_ = random_problem(rng, n, 5, 1, n_distinct=9, nominal=(1,))
    X[:, 4] = rng.normal(size=n).astype(np.float32)
    Y = (rng.random((n, K)) < 0.4).astype(np.uint8)
    Y[:, 3] = X[:, 4] > 0
    out = []
    for device in ("cpu", cuda_device):
        clf = estimator_class(device=device, feature_binning="equal-width", random_state=3,
                              **params)
        clf.fit(X, Y, nominal_feature_indices=[1])
        out.append((clf.model_, clf.predict(X), clf.decision_function(X)))
    return out


MODEL_ARRAYS = ("default_scores", "cond_feature", "cond_op", "cond_threshold",
                "rule_cond_start", "head_label", "head_score", "rule_head_start")


def assert_same_models(fits):
    (cpu_model, cpu_pred, cpu_scores), (gpu_model, gpu_pred, gpu_scores) = fits
    assert len(cpu_model) == len(gpu_model) > 2
    for name in MODEL_ARRAYS:
        np.testing.assert_array_equal(getattr(gpu_model, name), getattr(cpu_model, name),
                                      err_msg=name)
    np.testing.assert_array_equal(gpu_scores, cpu_scores)
    np.testing.assert_array_equal(gpu_pred, cpu_pred)


FIT_CASES = {
    "complete": dict(head_type="complete", label_binning="none"),
    "complete-gblb": dict(head_type="complete", label_binning="equal-width"),
    "partial-fixed": dict(head_type="partial-fixed", label_binning="none"),
    # the beam search: several best refinements per search, each entry's coverage from a
    # device snapshot, a depth's searches in one call (find_best_refinements)
    "partial-fixed-beam": dict(
        head_type="partial-fixed", label_binning="none",
        rule_induction="top-down-beam-search{beam_width=2,max_conditions=2}"),
    "complete-beam-resampled": dict(
        head_type="complete", label_binning="equal-width",
        rule_induction="top-down-beam-search{beam_width=3,resample_features=true}"),
}
# on a GPU only (simulated device functions run the host's arithmetic, so they add nothing
# here): partial-dynamic heads with an exponent other than 2, whose selection compares with
# a root computed on the host instead of calling pow per output (complete_head.dynamic_root)
GPU_FIT_CASES = {**FIT_CASES, "partial-dynamic-e1.5": dict(
    head_type="partial-dynamic{threshold=0.3,exponent=1.5}", label_binning="none")}


# -- simulator checks ------------------------------------------------------------------------
def _simulated_backend(**options):
    from tests.reference.cuda_support import simulated_backend_class

    backend_class, _ = simulated_backend_class()
    return backend_class(0, block_size=32, **options)


@check
def statistics_equal_cpu():
    """Every non-decomposable loss: statistics after start_fit, updates and a new scale
    equal the CpuBackend's (P, g, packed h, max_statistic)."""
    for i, loss in enumerate(NON_DECOMPOSABLE_LOSSES.values()):
        binned, Y, base_weight, _ = problem(i, K=3)
        cpu, gpu = start_both(_simulated_backend(), binned, Y, loss, base_weight)
        compare_statistics(cpu, gpu, np.random.default_rng(i))


@check
def histograms_equal_cpu():
    """Histograms of g (K) and packed h (W) of the covered examples, drawn weights, on the
    shared-memory and global-atomics paths: equal to the CpuBackend's."""
    from gpurules.backends.cuda.histograms import view_rows

    binned, Y, base_weight, weights = problem(3, K=4, compact=False)
    features = np.array([2, 0, 3], np.int64)
    for force_global in (False, True):
        cpu, gpu = start_both(_simulated_backend(force_global_atomics=force_global), binned,
                              Y, LOGISTIC, base_weight)
        mask = (np.arange(Y.shape[0]) % 4 != 1).astype(np.int32)
        cpu.mask[:] = mask
        gpu.set_coverage(mask, 0)
        from gpurules.backends.cpu import histograms as cpu_histograms

        cpu_histograms.build_histograms(features, binned.bin_index, binned.bin_offset,
                                        cpu.mask, 0, weights, cpu.g, cpu.h, cpu.hist,
                                        cpu.hist_count)
        gpu.build_histograms(features, weights)
        rows = np.concatenate([np.arange(binned.bin_offset[f], binned.bin_offset[f + 1])
                               for f in features])
        got = dataset_histograms(gpu)
        want = (cpu.hist[:, :4], cpu.hist[:, 4:], cpu.hist_count)
        for a, b, name in zip(got, want, ("g", "h", "count")):
            np.testing.assert_array_equal(a[rows], b[rows], err_msg=f"hist_{name}")
        # sized to the rows of the fit's 3 widest features: any 3 sampled ones fit
        widest = np.sort(np.diff(binned.bin_offset))[::-1][:3].sum()
        assert gpu.hist_count.shape == (view_rows(widest),)
        assert gpu.hist_h.shape[1] == packed_size(4)


@check
def refinements_equal_cpu():
    """logistic-non-decomposable, every head of :func:`head_settings`, unit or drawn
    weights, with and without empty bins, min_coverage 1 and 4: the CpuBackend's histogram
    search's refinements (sums exactly, qualities bit for bit) over two steps."""
    for seed, (K, compact, min_coverage) in enumerate(((3, True, 1), (4, False, 4))):
        binned, Y, base_weight, weights = problem(10 + seed, K=K, compact=compact)
        for i, (name, search) in enumerate(head_settings(K, min_coverage).items()):
            w = weights if (i + seed) % 2 else None
            cpu, gpu = start_both(_simulated_backend(), binned, Y, LOGISTIC, base_weight)
            labels = np.arange(K, dtype=np.int32)
            scores = np.random.default_rng(seed).normal(0.0, 1.0, size=K)
            for backend in (cpu, gpu):  # statistics away from the symmetric start
                backend.update_statistics(labels, scores)
            try:
                compare_refinements(cpu, gpu, w, search, steps=2)
            except AssertionError as error:
                raise AssertionError(f"{name}, K={K}, weights={w is not None}") from error


@check
def refinements_in_launches_of_one_tile_equal_cpu():
    """The scan in several launches (scratch for one tile of candidates per slot and launch,
    slots of two tiles or more), on the head with the most head work, fused and with the
    prefix sums in place (``CudaBackend(fused_search=False)``): the CpuBackend's
    refinements, as in one launch."""
    from gpurules.backends.cuda import histogram_search

    binned, Y, base_weight, weights = problem(21, K=3, compact=False)
    assert 2 * np.diff(binned.bin_offset).max() > 32  # >= 2 tiles of the 32-thread blocks
    saved = histogram_search.SCRATCH_BYTES
    histogram_search.SCRATCH_BYTES = 1  # the floor: one tile per launch
    try:
        for fused in (True, False):
            search = head_settings(3)["partial-dynamic-gblb"]
            cpu, gpu = start_both(_simulated_backend(fused_search=fused), binned, Y, LOGISTIC,
                                  base_weight)
            compare_refinements(cpu, gpu, weights, search, steps=2)
    finally:
        histogram_search.SCRATCH_BYTES = saved


@contextlib.contextmanager
def simulated_cuda_estimators():
    """Estimators with ``device='cuda'`` fit with the simulated CudaBackend (the fake CuPy
    of ``simulated_backend_class``, blocks of 32 threads) in this interpreter, and
    ``device='cpu'`` on the CPU, until the block ends. Yields the fake CuPy module."""
    import gpurules.backends.cuda as cuda_backends
    import gpurules.estimators._base as estimator_base
    from gpurules.device import Device
    from tests.reference.cuda_support import simulated_backend_class

    backend_class, fake_cupy = simulated_backend_class()  # installs the fake CuPy

    class SmallBlocks(backend_class):
        """What the estimator constructs: small blocks, as every simulated run here."""

        def __init__(self, device_index=0, block_size=32, **options):
            super().__init__(device_index, block_size=block_size, **options)

    saved = cuda_backends.CudaBackend, estimator_base.resolve_device
    cuda_backends.CudaBackend = SmallBlocks
    estimator_base.resolve_device = lambda device: Device("cuda", 0) if device == "cuda" \
        else Device("cpu")
    try:
        yield fake_cupy
    finally:  # the checks after this one construct the backend themselves
        cuda_backends.CudaBackend, estimator_base.resolve_device = saved


@check
def boomer_fits_equal_cpu():
    """BoomerClassifier(device='cuda') with logistic-non-decomposable (complete heads with
    and without GBLB, a partial-fixed head, also grown by beam search) learns the CPU
    histogram search's model: 4 rules, 3 grown by beam search (whose searches are most of
    the simulated threads; the GPU test grows more)."""
    from gpurules import BoomerClassifier

    with simulated_cuda_estimators() as fake_cupy:
        for name, params in FIT_CASES.items():
            fake_cupy.launches.clear()
            rules = 3 if "beam" in params.get("rule_induction", "") else 4
            try:
                assert_same_models(fit_models(BoomerClassifier, "cuda", max_rules=rules,
                                              loss="logistic-non-decomposable", **params))
            except AssertionError as error:
                raise AssertionError(name) from error
            assert {"zero_histograms", "histogram_shared"} <= \
                {n for n, *_ in fake_cupy.launches}


@check
def unsupported_combinations_raise():
    """Non-decomposable statistics with a head mode of the per-feature scan: ValueError."""
    binned, Y, base_weight, _ = problem(5)
    gpu = _simulated_backend()
    gpu.start_fit(binned, Y, LOGISTIC, base_weight, SCALE)
    search = SearchSettings.boosting(0, 0.0, 1.0, 1, -np.inf)
    try:
        gpu.find_best_refinement(np.arange(2), np.arange(3, dtype=np.int32), None, None,
                                 search)
    except ValueError as error:
        assert "non-decomposable" in str(error)
    else:
        raise AssertionError("no ValueError")


# -- -fma=0 for gpurules kernels (no simulator) ---------------------------------------------
def _fma_options():
    """NVVM gets ``fma=False`` for a gpurules kernel and no ``fma`` option for a user kernel
    (both through ``compile_ptx``), whose PTX then keeps NVVM's default contraction."""
    import types as pytypes

    import numba.cuda.dispatcher as dispatcher

    dispatcher.get_current_device = lambda: pytypes.SimpleNamespace(compute_capability=(9, 0))
    from numba import cuda, types
    from numba.cuda.cudadrv import nvvm

    from gpurules.backends.cuda import kernels  # installs device_math's wrapper

    wrapper = nvvm.compile_ir
    assert wrapper.gpurules_without_fma
    (cell,) = wrapper.__closure__  # the original compile_ir
    original, seen = cell.cell_contents, []

    def record(llvmir, **options):  # what the wrapper passes on
        seen.append(dict(options))
        return original(llvmir, **options)

    def user_kernel(a, b, c):
        c[0] = a[0] * b[0] + c[0]

    cell.cell_contents = record
    try:
        name = "encode_covered"
        cuda.compile_ptx(kernels.KERNELS[name].py_func, kernels.SIGNATURES[name], cc=(9, 0))
        user_ptx, _ = cuda.compile_ptx(user_kernel, (types.float64[::1],) * 3, cc=(9, 0))
    finally:
        cell.cell_contents = original
    assert seen[0].get("fma") is False, seen[0]
    assert "fma" not in seen[1], seen[1]
    assert "fma.rn.f64" in user_ptx


COMPILE_CHECKS["gpurules_kernels_compile_without_fma"] = _fma_options


# -- the pytest side of the isolated runs --------------------------------------------------
simulator_results, test_under_simulator = simulated_tests(__name__, CHECKS)


def test_gpurules_kernels_compile_without_fma():
    require("numba_cuda")
    results = run_isolated("tests.test_cuda_non_decomposable", {"NUMBA_ENABLE_CUDASIM": None})
    error = results.get("gpurules_kernels_compile_without_fma", "did not run")
    assert error is None, error


# -- the CUDA C kernels with W > K, on the host ---------------------------------------------
@pytest.mark.parametrize("use_shared", [True, False], ids=["shared", "global"])
def test_cuda_c_histograms_with_packed_hessians(host_kernels, use_shared):
    """K = 3 gradients, W = 6 packed Hessian entries, signed sums beyond 32 bits: the
    sampled features' slots equal NumPy's, the rows past them are left alone."""
    rng = np.random.default_rng(21)
    n, K = 200, 3
    W = packed_size(K)
    X, nominal, _, _, weights, mask = random_problem(rng, n, 4, 1, n_distinct=9)
    binned = bin_features(X, nominal, "equal-frequency", bin_ratio=0.5)
    g = rng.integers(-2 ** 40, 2 ** 40, size=(n, K))
    h = rng.integers(-2 ** 40, 2 ** 40, size=(n, W))
    features = np.array([3, 0, 2], np.int64)
    slot_offset, _ = slot_layout(binned, features)
    R = int(slot_offset[-1]) + 3
    hists = (np.full((R, K), -7, np.int64), np.full((R, W), -7, np.int64),
             np.full(R, -7, np.int64))
    host_kernels.zero_histograms((2, 2), 32, slot_offset, K, hists)
    groups = np.array([0, 2, 3], np.int64)  # one pass over the statistics per group
    need = int(shared_histogram_bytes(np.diff(slot_offset[groups]), K, W).max())
    assert host_kernels.histogram(use_shared, (3, 2), 32, need, features, slot_offset, binned,
                                  mask, 1, weights, g, h, hists, groups) == 0
    _, *want = slot_histograms(binned, features, mask, 1, weights, g, h)
    for a, b, name in zip(hists, want, ("g", "h", "count")):
        np.testing.assert_array_equal(a[:len(b)], b, err_msg=f"hist_{name}")
        assert (a[len(b):] == -7).all(), f"hist_{name}: rows past the slots changed"


# -- on a real GPU ---------------------------------------------------------------------------
def _gpu_backend(**options):
    skip_without_gpu()
    from gpurules.backends.cuda import CudaBackend

    return CudaBackend(0, **options)


@pytest.mark.gpu
@pytest.mark.parametrize("force_global", [False, True], ids=["shared", "global"])
def test_gpu_histograms_with_packed_hessians(force_global):
    skip_without_gpu()  # before the data: binning 20000 examples takes a while on a CPU box
    rng = np.random.default_rng(22)
    n, K = 20000, 6
    W = packed_size(K)
    X, nominal, _, _, weights, mask = random_problem(rng, n, 5, 1, n_distinct=40)
    binned = bin_features(X, nominal, "equal-frequency", bin_ratio=0.5)
    backend = _gpu_backend(force_global_atomics=force_global)
    backend.start_fit(binned, np.zeros((n, K), np.uint8), LOGISTIC, np.ones(n), SCALE)
    g = rng.integers(-2 ** 40, 2 ** 40, size=(n, K))
    h = rng.integers(-2 ** 40, 2 ** 40, size=(n, W))
    backend.g[...], backend.h[...] = backend.cp.asarray(g), backend.cp.asarray(h)
    backend.set_coverage(mask, 1)
    features = np.array([4, 0, 2], np.int64)
    backend.build_histograms(features, weights)
    want = histograms(binned, features, mask == 1, weights, g, h)
    rows = np.concatenate([np.arange(binned.bin_offset[f], binned.bin_offset[f + 1])
                           for f in features])
    for a, b in zip(dataset_histograms(backend), want):
        np.testing.assert_array_equal(a[rows], b[rows])


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(head_settings(4)))
def test_gpu_refinements_equal_cpu(name):
    """Statistics copied from the CPU (so ``exp`` cannot differ): every head's refinements
    equal the CPU histogram search's, qualities bit for bit (kernels built with -fma=0)."""
    skip_without_gpu()  # before the data (CPU compile time)
    binned, Y, base_weight, weights = problem(30, n=3000, A=6, K=4, compact=False)
    cpu, gpu = start_both(_gpu_backend(), binned, Y, LOGISTIC, base_weight)
    cpu.update_statistics(np.arange(4, dtype=np.int32), np.array([0.3, -0.8, 1.1, 0.2]))
    gpu.P[...] = gpu.cp.asarray(cpu.P)
    gpu.g[...], gpu.h[...] = gpu.cp.asarray(cpu.g), gpu.cp.asarray(cpu.h)
    for w in (None, weights):
        compare_refinements(cpu, gpu, w, head_settings(4, min_coverage=20)[name], steps=4)


@pytest.mark.gpu
def test_gpu_squared_error_statistics_equal_cpu():
    """No exp/log in the squared-error loss: with -fma=0 its statistics are bit-exact."""
    skip_without_gpu()  # before the data (CPU compile time)
    binned, Y, base_weight, _ = problem(31, n=5000, K=5)
    cpu, gpu = start_both(_gpu_backend(), binned, Y, SQUARED_ERROR, base_weight)
    compare_statistics(cpu, gpu, np.random.default_rng(31))


@pytest.mark.gpu
def test_gpu_logistic_statistics_within_one_unit():
    """libdevice's exp/log may differ from the host's by an ulp: one fixed-point unit."""
    skip_without_gpu()  # before the data (CPU compile time)
    binned, Y, base_weight, _ = problem(32, n=5000, K=5)
    cpu, gpu = start_both(_gpu_backend(), binned, Y, LOGISTIC, base_weight)
    for backend in (cpu, gpu):
        backend.update_statistics(np.array([0, 3], np.int32), np.array([0.4, -1.3]))
    np.testing.assert_array_equal(gpu.training_scores(), cpu.training_scores())
    for a, b in ((gpu.g, cpu.g), (gpu.h, cpu.h)):
        assert np.abs(gpu.cp.asnumpy(a) - b).max() <= 1


@pytest.mark.gpu
@pytest.mark.parametrize("case", sorted(GPU_FIT_CASES))
@pytest.mark.parametrize("loss", ["squared-error-non-decomposable",
                                  "logistic-non-decomposable"])
def test_gpu_boomer_fit_equals_cpu(case, loss):
    """Whole fits, device='cuda:0' against device='cpu' on the same bins. For the logistic
    loss a statistic may differ by one fixed-point unit (exp), which changes a choice only
    for candidates within ~2**-30 of a tie."""
    skip_without_gpu()
    from gpurules import BoomerClassifier

    assert_same_models(fit_models(BoomerClassifier, "cuda:0", max_rules=20, loss=loss,
                                  **GPU_FIT_CASES[case]))


def main():
    from numba import config

    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        assert config.ENABLE_CUDASIM, "numba.cuda was imported before the simulator"
        run_checks(CHECKS)
    else:
        run_checks(COMPILE_CHECKS)


if __name__ == "__main__":
    main()
