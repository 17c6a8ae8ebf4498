"""The CUDA backend on a real GPU (marked ``gpu``: skipped unless a GPU is usable).

Histograms equal the NumPy contract bit for bit with the shared-memory kernel, the
global-atomics kernel and the opt-in shared memory of wide features; the two kernels and
repeated runs give identical histograms; the scan equals the CPU histogram search on the
same bins (thresholds included); whole refinements, coverage, statistics and a short
boosting fit equal the CPU backend's with the same bins; equal-width bins made on the device
equal the host's. Run with
``pytest -m gpu tests/test_cuda_gpu.py`` on a GPU machine.
"""

import numpy as np
import pytest

from gpurules.backends.base import SearchSettings
from gpurules.backends.cpu import CpuBackend
from gpurules.data.binning import bin_features
from gpurules.objectives.heads import HEAD_COMPLETE, HEAD_SINGLE
from gpurules.objectives.losses import DECOMPOSABLE_LOSSES
from tests.reference.cuda_reference import (
    assert_device_binned_fit_equals_cpu, assert_same_binned, assert_same_refinements,
    compare_backends, dataset_histograms, equal_width_problems, exact_bins,
    histogram_per_feature, histograms, random_problem, uncovered_bin_problem)
from tests.reference.cuda_support import skip_without_gpu

pytestmark = pytest.mark.gpu
SCALE = 2.0 ** 20  # the scale of the reference searches
SQUARED_ERROR = DECOMPOSABLE_LOSSES["squared-error-decomposable"]
LOGISTIC = DECOMPOSABLE_LOSSES["logistic-decomposable"]


@pytest.fixture(autouse=True)
def _needs_gpu():
    skip_without_gpu()


def cuda_backend(binned, g, h, mask, indicator, **options):
    """A CudaBackend after start_fit, holding the given statistics and coverage."""
    import cupy as cp

    from gpurules.backends.cuda import CudaBackend

    n, K = g.shape
    backend = CudaBackend(0, **options)
    backend.start_fit(binned, np.zeros((n, K), np.uint8), LOGISTIC, np.ones(n), SCALE)
    backend.g[...], backend.h[...] = cp.asarray(g), cp.asarray(h)
    backend.set_coverage(mask, indicator)
    return backend


def gpu_histograms(backend, features, weights):
    backend.build_histograms(features, weights)
    return dataset_histograms(backend)


def sampled_rows(binned, features):
    return np.concatenate([np.arange(binned.bin_offset[f], binned.bin_offset[f + 1])
                           for f in features])


def big_problem(seed, n, A, K, bins):
    """Large signed statistics (sums near 2**52) so that any lost or torn atomic shows."""
    rng = np.random.default_rng(seed)
    X, nominal, _, _, weights, mask = random_problem(rng, n, A, 1, n_distinct=bins)
    g = rng.integers(-2 ** 40, 2 ** 40, size=(n, K))
    h = rng.integers(0, 2 ** 40, size=(n, K))
    return X, nominal, g, h, weights, mask


@pytest.mark.parametrize("force_global", [False, True], ids=["shared", "global"])
@pytest.mark.parametrize("binning", ["exact", "equal-frequency"])
def test_histograms_equal_reference(force_global, binning):
    X, nominal, g, h, weights, mask = big_problem(1, 20000, 6, 5, bins=40)
    binned = exact_bins(X, nominal) if binning == "exact" else \
        bin_features(X, nominal, "equal-frequency", bin_ratio=0.3)
    features = np.array([4, 0, 2, 5], np.int64)
    backend = cuda_backend(binned, g, h, mask, 1, force_global_atomics=force_global)
    got = gpu_histograms(backend, features, weights)
    want = histograms(binned, features, mask, 1, weights, g, h)
    rows = sampled_rows(binned, features)
    for a, b, name in zip(got, want, ("g", "h", "count")):
        np.testing.assert_array_equal(a[rows], b[rows], err_msg=f"hist_{name}")


def test_shared_equals_global_and_runs_repeat_exactly():
    """200k examples on 16 bins (heavy contention): two backends per kernel, each run with
    drawn and with unit weights; all runs give identical histograms, equal to NumPy."""
    X, nominal, g, h, weights, mask = big_problem(2, 200000, 4, 3, bins=16)
    binned = exact_bins(X, nominal)
    features = np.arange(4, dtype=np.int64)
    runs = []
    for force_global in (False, False, True, True):
        backend = cuda_backend(binned, g, h, mask, 1, force_global_atomics=force_global)
        runs.append(gpu_histograms(backend, features, weights) +
                    gpu_histograms(backend, features, None))
    ones = np.ones_like(weights)
    want = histograms(binned, features, mask, 1, weights, g, h) + \
        histograms(binned, features, mask, 1, ones, g, h)
    for i, run in enumerate(runs):
        for a, b in zip(run, want):
            np.testing.assert_array_equal(a, b, err_msg=f"run {i}")


def test_wide_features_use_opt_in_shared_memory_or_global_atomics():
    """K = 100 labels: 10 bins fit the default 48 KiB, 100 bins need opt-in shared memory
    (about 160 KiB), 400 bins do not fit and use global atomics; all equal the reference."""
    rng = np.random.default_rng(3)
    n, K = 4000, 100
    X = np.stack([rng.integers(0, b, n) for b in (10, 100, 400)], axis=1).astype(np.float32)
    nominal = np.zeros(3, bool)
    g = rng.integers(-2 ** 30, 2 ** 30, size=(n, K))
    h = rng.integers(0, 2 ** 30, size=(n, K))
    weights = rng.integers(0, 3, n).astype(np.int32)
    mask = np.ones(n, np.int32)
    binned = exact_bins(X, nominal)
    features = np.arange(3, dtype=np.int64)
    backend = cuda_backend(binned, g, h, mask, 1)
    got = gpu_histograms(backend, features, weights)
    want = histograms(binned, features, mask, 1, weights, g, h)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    labels = np.arange(K, dtype=np.int32)
    search = SearchSettings.boosting(HEAD_COMPLETE, 0.0, 1.0, 1, -np.inf)
    _compare_per_feature(backend, binned, features, mask, weights, g, h, labels, search)


def _compare_per_feature(backend, binned, features, mask, weights, g, h, labels, search):
    totals = backend.covered_totals(weights)
    got = [backend.find_best_refinement(np.array([f]), labels, weights, totals, search)
           for f in features]
    want = histogram_per_feature(binned, features, mask, 1, weights, g, h, labels, search)
    assert_same_refinements(got, want)


@pytest.mark.parametrize("head", [HEAD_COMPLETE, HEAD_SINGLE])
@pytest.mark.parametrize("binning", ["exact", "equal-frequency"])
def test_scan_equals_cpu_histogram_search(head, binning):
    """One bin per distinct value, or equal-frequency bins (nominal, missing values, weights
    0/1/2, a covered subset): per feature, the GPU finds exactly the CPU histogram search's
    refinement on the same bins, threshold included, quality bit for bit."""
    rng = np.random.default_rng(4)
    X, nominal, g, h, weights, mask = random_problem(rng, 3000, 6, 4, n_distinct=30,
                                                     nominal=(0, 3))
    binned = exact_bins(X, nominal) if binning == "exact" else \
        bin_features(X, nominal, "equal-frequency", bin_ratio=0.005)
    backend = cuda_backend(binned, g, h, mask, 1)
    features = np.array([5, 0, 3, 1, 2, 4], np.int64)
    for labels, min_coverage in ((np.arange(4, dtype=np.int32), 1),
                                 (np.array([3, 1], np.int32), 50)):
        search = SearchSettings.boosting(head, 0.05, 1.0, min_coverage, -np.inf)
        _compare_per_feature(backend, binned, features, mask, weights, g, h, labels, search)


def test_threshold_next_to_a_bin_without_covered_examples():
    """An uncovered non-empty bin between two covered ones: the GPU stores the CPU histogram
    search's threshold (11.5, next to that bin), not the midpoint of the covered values."""
    binned, g, h, weights, mask, threshold = uncovered_bin_problem()
    backend = cuda_backend(binned, g, h, mask, 1)
    features, labels = np.array([0], np.int64), np.array([0], np.int32)
    search = SearchSettings.boosting(HEAD_COMPLETE, 0.0, 1.0, 1, -np.inf)
    want = histogram_per_feature(binned, features, mask, 1, weights, g, h, labels, search)
    assert want[0].threshold == threshold
    _compare_per_feature(backend, binned, features, mask, weights, g, h, labels, search)


def _backends(loss, seed, n=2000, A=5, K=4, **options):
    from gpurules.backends.cuda import CudaBackend

    rng = np.random.default_rng(seed)
    X, nominal, *_ = random_problem(rng, n, A, 1, n_distinct=25, nominal=(1,))
    Y = (rng.random((n, K)) < 0.4).astype(np.uint8)
    base_weight = rng.uniform(0.5, 2.0, size=n)
    cpu, gpu = CpuBackend(), CudaBackend(0, **options)
    for backend in (cpu, gpu):
        backend.start_fit(exact_bins(X, nominal), Y, loss, base_weight, 2.0 ** 40)
    return cpu, gpu, rng


@pytest.mark.parametrize("force_global, wide", [(False, "global"), (True, "global"),
                                                (True, "by-slot"), (True, "sorted")],
                         ids=["shared", "global", "global-by-slot", "sorted"])
def test_backend_equals_cpu_backend(force_global, wide):
    """Totals, refinements, coverage, score updates and re-scaling, bit for bit (the CPU
    histogram search on the same bins); also with every histogram by global atomics, by
    global atomics slot by slot, and from the examples in bin order."""
    cpu, gpu, rng = _backends(SQUARED_ERROR, 5, force_global_atomics=force_global,
                              wide_histograms=wide)
    compare_backends(cpu, gpu, rng, rules=3, conditions=3)


def test_backend_equals_cpu_backend_inside_a_callers_stream():
    """A caller's non-blocking CuPy stream made current around the work: the backend's own
    stream keeps CuPy's and Numba's launches in order, so nothing changes."""
    import cupy as cp

    cpu, gpu, rng = _backends(SQUARED_ERROR, 8)
    with cp.cuda.Stream(non_blocking=True):
        compare_backends(cpu, gpu, rng, rules=3, conditions=3)


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "in-place"])
@pytest.mark.parametrize("head", [HEAD_COMPLETE, HEAD_SINGLE])
def test_scan_with_many_bins_equals_cpu_histogram_search(head, fused):
    """Continuous features with thousands of bins (tile sums of many tiles, candidates in
    many blocks per slot, each summing its tile's bins in shared memory or reading the
    prefix sums made in place, the per-slot ticket): the CPU histogram search's refinements
    on the same bins, bit for bit."""
    rng = np.random.default_rng(12)
    X, nominal, g, h, weights, mask = random_problem(rng, 20000, 3, 4, nominal=(0,))
    X[:, 1:] = rng.normal(size=(20000, 2)).astype(np.float32)
    binned = exact_bins(X, nominal)
    assert np.diff(binned.bin_offset).max() > 10000
    backend = cuda_backend(binned, g, h, mask, 1)
    backend.fused_search = fused  # each candidates block sums its tile, or reads in place
    search = SearchSettings.boosting(head, 0.05, 1.0, 1, -np.inf)
    _compare_per_feature(backend, binned, np.array([2, 0, 1], np.int64), mask, weights, g, h,
                         np.arange(4, dtype=np.int32), search)


def test_logistic_statistics_equal_cpu():
    """The logistic statistics use ``exponential.exp_nonpositive``, not the device's
    ``exp``: re-encoded statistics equal the CPU's bit for bit (with CUDA's ``exp`` they
    could differ by one fixed-point unit)."""
    cpu, gpu, rng = _backends(LOGISTIC, 6)
    for backend in (cpu, gpu):
        backend.reset_coverage()
        backend.update_statistics(np.array([0, 2], np.int32), np.array([0.4, -1.3]))
    np.testing.assert_array_equal(gpu.training_scores(), cpu.training_scores())
    for a, b in ((gpu.g, cpu.g), (gpu.h, cpu.h)):
        np.testing.assert_array_equal(gpu.cp.asnumpy(a), b)


def test_exp_nonpositive_equals_the_hosts():
    """``exp_nonpositive`` compiled for the GPU as the backend compiles its kernels
    (``device_math.kernel``: no link-time optimization, so no fused multiply-add) gives the
    host's bits for a million arguments in [-746, 0]. (A plain ``cuda.jit`` kernel, linked
    with LTO by numba-cuda 0.30, differed in the last bit for 3 of 20,000 on an H200.)"""
    import cupy as cp
    from numba import cuda

    from gpurules.backends.cuda.device_math import kernel as device_kernel
    from gpurules.objectives.exponential import exp_nonpositive

    @device_kernel
    def kernel(xs, out):
        i = cuda.grid(1)
        if i < xs.shape[0]:
            out[i] = exp_nonpositive(xs[i])

    xs = -np.random.default_rng(3).random(1_000_000) * 746.0
    out = cp.empty(xs.shape[0])
    kernel[(xs.shape[0] + 255) // 256, 256](cp.asarray(xs), out)
    host = np.array([exp_nonpositive(x) for x in xs[:20000]])
    np.testing.assert_array_equal(cp.asnumpy(out)[:20000], host)
    np.testing.assert_array_equal(cp.asnumpy(out), _host_exp(xs))


def _host_exp(xs):
    from numba import njit

    from gpurules.objectives.exponential import exp_nonpositive

    @njit
    def run(xs, out):
        for i in range(xs.shape[0]):
            out[i] = exp_nonpositive(xs[i])
        return out
    return run(xs, np.empty_like(xs))


_CACHED_FIT = """
import json
import numpy as np
from gpurules import BoomerClassifier
from gpurules.backends.cuda import kernels
rng = np.random.default_rng(3)
X = rng.normal(size=(600, 6))
Y = (rng.random((600, 3)) < 0.3).astype(np.uint8)
model = BoomerClassifier(device="cuda", max_rules=4, random_state=1).fit(X, Y)
stats = [d.stats for d in kernels.KERNELS.values()]
print(json.dumps({"hits": sum(sum(s.cache_hits.values()) for s in stats),
                  "misses": sum(sum(s.cache_misses.values()) for s in stats),
                  "paths": sorted({s.cache_path for s in stats}),
                  "rules": str(model.model_)}))
"""


def test_a_new_process_loads_the_kernels_from_the_disk_cache(tmp_path):
    """``jit.cache.cache_cuda_kernel``: the first process compiles the kernels of a fit and
    saves them under the package's cache directory; a second one loads every one of them
    (no compile) and learns the same rules."""
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    runs = [json.loads(subprocess.run([sys.executable, "-c", _CACHED_FIT], env=env,
                                      capture_output=True, text=True, check=True,
                                      timeout=600).stdout.splitlines()[-1])
            for _ in range(2)]
    first, second = runs
    assert first["misses"] > 3 and first["hits"] == 0, first
    assert second["hits"] == first["misses"] and second["misses"] == 0, second
    assert all(path.startswith(str(tmp_path / "gpurules-")) for path in first["paths"])
    assert second["rules"] == first["rules"]


def assert_same_rules(gpu_model, cpu_model):
    """The two rule models' arrays are equal, thresholds and scores bit for bit."""
    for name in ("default_scores", "cond_feature", "cond_op", "cond_threshold",
                 "rule_cond_start", "head_label", "head_score", "rule_head_start"):
        np.testing.assert_array_equal(getattr(gpu_model, name), getattr(cpu_model, name),
                                      err_msg=name)


@pytest.mark.parametrize("launcher,graphs,wide", [
    ("numba", False, None), ("prepared", False, None), ("direct", False, None),
    ("prepared", True, None), ("direct", True, None), ("auto", "auto", None),
    ("auto", "auto", "sorted")], ids=["numba", "prepared", "direct", "prepared-graphs",
                                      "direct-graphs", "default", "sorted"])
def test_boosting_fit_equals_cpu(launcher, graphs, wide):
    """A short BOOMER fit (squared-error loss, feature sampling) learns the same rules,
    thresholds included, with the CUDA and the CPU backend on the same bins (one per
    distinct value, and equal-width); with numba-cuda's launches, with the prepared
    ones (``launches.PreparedLaunches``, which must then have launched most kernels),
    with the direct ones (``launches.DirectLaunches``: most through ``cuLaunchKernel``),
    and with the blocks replayed from CUDA graphs (``graphs.BlockGraphs``: most blocks),
    as the default backend does; and with every histogram built by ``histogram_sorted``
    (``wide_histograms="sorted"``, all features forced out of shared memory)."""
    from gpurules import BoomerClassifier
    from gpurules.backends.cuda import CudaBackend
    from gpurules.estimators.boomer_params import resolve_config
    from gpurules.learners.boosting import BoostingLearner

    rng = np.random.default_rng(7)
    X, nominal, *_ = random_problem(rng, 1500, 8, 1, n_distinct=20, nominal=(2,))
    Y = (rng.random((1500, 3)) < 0.3).astype(np.uint8)
    config, _ = resolve_config(BoomerClassifier(loss="squared-error-decomposable",
                                                max_rules=12, random_state=1))
    for binned in (exact_bins(X, nominal),
                   bin_features(X, nominal, "equal-width", bin_ratio=0.5)):
        options = {} if wide is None else {"wide_histograms": wide,
                                           "force_global_atomics": True}
        gpu = CudaBackend(0, launcher=launcher, graphs=graphs, **options)
        cpu_model, gpu_model = (
            BoostingLearner(config, backend, np.random.default_rng(1)).fit(
                binned, Y, np.ones(X.shape[0])).build()
            for backend in (CpuBackend(), gpu))
        if launcher == "prepared" and not graphs:
            assert gpu._launches.prepared > 100, gpu._launches.prepared
        if launcher == "direct" and not graphs:
            assert gpu._launches.direct > 100, gpu._launches.direct
        if graphs:
            assert gpu._graphs.replayed > gpu._graphs.captured > 0, vars(gpu._graphs)
        assert len(cpu_model) == len(gpu_model) > 2
        assert_same_rules(gpu_model, cpu_model)


def test_device_binning_equals_the_hosts():
    """Equal-width bins made on the device (``CudaBackend(device_binning=True)``) are the
    host's bit for bit: the shared problems (subnormal values: no flush to zero) and
    300,000 x 8 continuous values (many threads' atomics on each bin's range)."""
    import cupy as cp

    from gpurules.backends.cuda import CudaBackend

    backend = CudaBackend(0, device_binning=True)
    big = np.random.default_rng(2).normal(size=(300_000, 8)).astype(np.float32)
    big[::7, 3] = np.nan
    for name, X, nominal, options in equal_width_problems(2000) + [
            ("big", big, np.zeros(8, bool), {})]:
        host = bin_features(X, nominal, "equal-width", drop_empty=True, **options)
        device = backend.bin_features(X, nominal, "equal-width", options)
        assert_same_binned(device, host, cp.asnumpy, name)


def test_fit_with_device_binning_equals_cpu():
    """A BoomerClassifier fit whose CUDA backend bins on the device learns the CPU fit's
    rules and counts their training coverage as the host does on X
    (``assert_device_binned_fit_equals_cpu``)."""
    from gpurules.backends.cuda import CudaBackend

    assert assert_device_binned_fit_equals_cpu(
        lambda: CudaBackend(0, device_binning=True), 3000, 10, 4) > 5


@pytest.mark.parametrize("head_type", ["complete", "single"])
def test_non_decomposable_fit_with_graphs_equals_cpu(head_type):
    """A logistic-non-decomposable BOOMER fit with the blocks replayed from CUDA graphs
    (the heads solved as systems: per-thread scratch, several candidate launches a step)
    learns the CPU's rules on the same bins, most blocks replayed."""
    from gpurules import BoomerClassifier
    from gpurules.backends.cuda import CudaBackend
    from gpurules.estimators.boomer_params import resolve_config
    from gpurules.learners.boosting import BoostingLearner

    rng = np.random.default_rng(5)
    X, nominal, *_ = random_problem(rng, 1200, 6, 1, n_distinct=30, nominal=(2,))
    Y = (rng.random((1200, 4)) < 0.3).astype(np.uint8)
    config, _ = resolve_config(BoomerClassifier(
        loss="logistic-non-decomposable", head_type=head_type, max_rules=10,
        random_state=1))
    binned = bin_features(X, nominal, "equal-width", bin_ratio=0.5)
    gpu = CudaBackend(0, graphs=True)
    cpu_model, gpu_model = (
        BoostingLearner(config, backend, np.random.default_rng(1)).fit(
            binned, Y, np.ones(X.shape[0])).build()
        for backend in (CpuBackend(), gpu))
    assert gpu._graphs.replayed > gpu._graphs.captured > 0, vars(gpu._graphs)
    assert len(cpu_model) == len(gpu_model) > 2
    assert_same_rules(gpu_model, cpu_model)


@pytest.mark.parametrize("head_type", ["single", "partial-fixed"])
def test_beam_search_fit_equals_cpu(head_type):
    """A BOOMER fit grown by beam search (each entry's coverage from a device snapshot, a
    depth's searches in one ``find_best_refinements`` call, features drawn per entry)
    learns the CPU's rules on the same bins."""
    from gpurules import BoomerClassifier
    from gpurules.backends.cuda import CudaBackend
    from gpurules.estimators.boomer_params import resolve_config
    from gpurules.learners.boosting import BoostingLearner

    rng = np.random.default_rng(8)
    X, nominal, *_ = random_problem(rng, 1200, 10, 1, n_distinct=30, nominal=(2,))
    Y = (rng.random((1200, 4)) < 0.3).astype(np.uint8)
    config, _ = resolve_config(BoomerClassifier(
        head_type=head_type, max_rules=10, random_state=1,
        rule_induction="top-down-beam-search{beam_width=3,resample_features=true}"))
    binned = bin_features(X, nominal, "equal-width", bin_ratio=0.5)
    cpu_model, gpu_model = (
        BoostingLearner(config, backend, np.random.default_rng(1)).fit(
            binned, Y, np.ones(X.shape[0])).build()
        for backend in (CpuBackend(), CudaBackend(0)))
    assert len(cpu_model) == len(gpu_model) > 2
    assert_same_rules(gpu_model, cpu_model)
