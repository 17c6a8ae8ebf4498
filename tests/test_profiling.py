"""gpurules.backends.cuda.profiling: byte counts, phase timers, copy bandwidth.

1. The byte-count arithmetic by hand.
2. The profiler's wrapping (calls, nesting, self times, bytes, detach) on a tiny stand-in
   backend with a CuPy stand-in whose events read the host clock, with Hessian rows of
   width K and of the packed width of non-decomposable losses.
3. A real ``CudaBackend`` profiled under the Numba CUDA simulator with
   ``tests/reference/fake_cupy.py`` (plus host-clock events) standing in for CuPy: the
   profiled backend finds the same refinements, and the histogram launches' bytes follow
   from the coverage. Runs in a fresh interpreter, like tests/test_cuda_simulator.py.
"""

import contextlib
import time
import types

import numpy as np
import pytest

from gpurules.backends.cuda.profiling import (
    BYTE_COUNT, D2H, H2D, PHASES, PhaseProfiler, copy_bandwidth, histogram_bytes)
from tests.reference.cuda_support import run_simulated_checks, simulated_tests

CHECKS = {}


class _Event:
    def record(self, stream=None):
        self.t = time.perf_counter()

    def synchronize(self):
        pass


def _host_clock_cuda():
    """``cp.cuda`` stand-in: events read the host clock."""
    return types.SimpleNamespace(
        Device=lambda index=0: contextlib.nullcontext(), Event=_Event,
        get_elapsed_time=lambda start, end: (end.t - start.t) * 1e3)


def test_histogram_bytes_hand_computed():
    # n=10, K=3, S=2, 4 covered, 7 bins: mask + weights 2*4*10, bin_index 4*2*4,
    # g and h 2*8*3*4; writes 8*(2*3+1)*7
    assert histogram_bytes(10, 3, 2, 4, 7) == (80 + 32 + 192, 392)
    assert histogram_bytes(5, 1, 1, 0, 0) == (40, 0)
    assert histogram_bytes(10, 3, 2, 4, 7, W=3) == histogram_bytes(10, 3, 2, 4, 7)


def test_histogram_bytes_counts_packed_hessians():
    # non-decomposable, K=3: W = 6 packed Hessian entries per example and per bin; reads
    # 2*4*10 + 4*2*4 + 8*(3+6)*4, writes 8*(3+6+1)*7
    assert histogram_bytes(10, 3, 2, 4, 7, W=6) == (80 + 32 + 288, 560)


@pytest.mark.parametrize("args, message", [
    ((10, 3, 2, 11, 7), "covered=11 exceeds n=10"),
    ((10, 3, -1, 4, 7), "S must be a non-negative integer"),
    ((10, 2.5, 1, 4, 7), "K must be a non-negative integer"),
    ((10, 3, 1, 4, 7, -1), "W must be a non-negative integer"),
])
def test_histogram_bytes_rejects_bad_input(args, message):
    with pytest.raises(ValueError, match=message):
        histogram_bytes(*args)


def _slow_copy(a):
    """A device->host copy that takes 3 ms."""
    time.sleep(0.003)
    return np.array(a)


class _StandInBackend:
    """The phase structure of CudaBackend on NumPy arrays: build_histograms uploads the
    weights and launches; _launch_search downloads its result."""

    device_index = 0

    def __init__(self, W=2):
        self.cp = types.SimpleNamespace(cuda=_host_clock_cuda(), asarray=np.array,
                                        asnumpy=_slow_copy, count_nonzero=np.count_nonzero)
        self.g = np.zeros((6, 2), np.int64)
        self.h = np.zeros((6, W), np.int64)  # W = 3: packed Hessians of K = 2 labels
        self.mask = np.array([1, 1, 0, 1, 1, 1], np.int32)
        self.indicator = 1
        self._step = 3  # the covered list of step 3: examples 0, 1, 3, 4, 5 (mask == 1)
        self._covered = np.array([[0] * 6, [5, 4, 3, 1, 0, 2]], np.int32)
        self._lens = np.zeros(16, np.int32)
        self._lens[3] = 5
        self.features = types.SimpleNamespace(bin_offset=np.array([0, 3, 7, 8]))
        self.log = []

    def start_fit(self):
        self.log.append("start_fit")

    def build_histograms(self, features, weights):
        weights_dev = self.cp.asarray(weights)
        time.sleep(0.002)
        self._features_dev = self.cp.asarray(features)
        self._launch_histogram("histogram_global", np.array([1, 0, len(features)]),
                               np.array([self._step, self.indicator]), weights_dev, 0)
        return "built"

    def _launch_histogram(self, name, groups_dev, cursor_dev, weights_dev, shared_bytes):
        time.sleep(0.003)

    def _launch_search(self):
        return self.cp.asnumpy(np.arange(4, dtype=np.int64))

    def apply_refinement(self, refinement):
        self.indicator += 1

    def _apply_selected(self, record, r, cursor):
        pass

    def update_statistics(self, labels, scores):
        pass

    def covered_totals(self, weights):
        return self.cp.asnumpy(np.zeros(3, np.int64))


@pytest.mark.parametrize("W", [2, 3], ids=["decomposable", "packed-hessians"])
def test_profiler_counts_nests_and_detaches(W):
    b = _StandInBackend(W)
    original_cp = b.cp
    weights = np.array([1, 0, 1, 2, 1, 1], np.int32)
    with PhaseProfiler(b) as prof:
        assert b.build_histograms(np.array([2, 0]), weights) == "built"
        b.build_histograms(np.array([1]), weights)
        np.testing.assert_array_equal(b._launch_search(), np.arange(4))
        b.apply_refinement(None)
        b.covered_totals(None)
    assert b.indicator == 2 and b.cp is original_cp
    assert not set(PHASES) & set(vars(b))  # the class's own methods are back
    s = prof.stats
    assert s["build_histograms"].calls == 2 and s["_launch_histogram"].calls == 2
    assert s[H2D].calls == 4 and s[D2H].calls == 2 and s["_launch_search"].calls == 1
    # covered with weight != 0 at indicator 1: examples 0, 3, 4, 5
    want = sum(sum(histogram_bytes(6, 2, S, 4, bins, W)) for S, bins in ((2, 4), (1, 4)))
    assert want == 2 * (2 * 4 * 6 + 8 * (2 + W) * 4 + 8 * (2 + W + 1) * 4) + 4 * 2 * 4 + 4 * 4
    assert s["_launch_histogram"].bytes == want
    assert s[H2D].bytes == 2 * weights.nbytes + 3 * 8 and s[D2H].bytes == 4 * 8 + 3 * 8
    build = s["build_histograms"]
    # the profiler's byte count (device->host copies of the coverage) is timed apart, not
    # as the build's own time
    assert s[BYTE_COUNT].calls == 2 and s[BYTE_COUNT].total_ms >= 2 * 4 * 3.0 * 0.9
    assert s["build_histograms"].self_ms < 2 * (2.0 + 2 * 3.0)  # its sleeps, not the count's
    nested = s["_launch_histogram"].total_ms + s[H2D].total_ms + s[BYTE_COUNT].total_ms
    assert build.total_ms >= 2 * 5.0 * 0.9
    assert build.self_ms == pytest.approx(build.total_ms - nested, abs=1e-6)
    assert s["_launch_histogram"].self_ms == s["_launch_histogram"].total_ms >= 2 * 3.0 * 0.9
    top = ("build_histograms", "_launch_search", "apply_refinement", "covered_totals")
    assert sum(r[2] for r in prof.rows()) == pytest.approx(sum(s[p].total_ms for p in top))
    assert prof.histogram_gbps() == pytest.approx(
        want / (s["_launch_histogram"].total_ms * 1e-3) / 1e9)
    with pytest.raises(RuntimeError, match="already attached"):
        PhaseProfiler(b).attach().attach()


def test_copy_bandwidth_counts_read_and_write():
    cp = types.SimpleNamespace(cuda=_host_clock_cuda(), arange=np.arange, int64=np.int64,
                               empty_like=np.empty_like, copyto=np.copyto)
    gbps = copy_bandwidth(cp, nbytes=1 << 20, repeats=3)
    assert np.isfinite(gbps) and gbps > 0
    with pytest.raises(ValueError):
        copy_bandwidth(cp, nbytes=0)


# -- a real CudaBackend under the simulator --------------------------------------------------
def check(fn):
    CHECKS[fn.__name__] = fn
    return fn


@check
def profiled_backend_equals_unprofiled():
    import sys

    from numba import cuda

    from gpurules.backends.base import SearchSettings
    from gpurules.objectives.heads import HEAD_COMPLETE
    from gpurules.objectives.losses import DECOMPOSABLE_LOSSES
    from tests.reference import fake_cupy
    from tests.reference.cuda_reference import exact_bins, random_problem

    fake_cupy.Event = _Event  # what the profiler needs beyond the backend's CuPy
    fake_cupy.cuda.Event = _Event
    fake_cupy.cuda.get_elapsed_time = lambda start, end: (end.t - start.t) * 1e3
    fake_cupy.count_nonzero = np.count_nonzero
    sys.modules["cupy"] = fake_cupy
    cuda.as_cuda_array = fake_cupy.as_cuda_array
    from gpurules.backends.cuda import CudaBackend

    rng = np.random.default_rng(3)
    n, K = 24, 2
    X, nominal, *_ = random_problem(rng, n, 3, 1)
    Y = (rng.random((n, K)) < 0.5).astype(np.uint8)
    loss = DECOMPOSABLE_LOSSES["squared-error-decomposable"]
    search = SearchSettings.boosting(HEAD_COMPLETE, 0.0, 1.0, 1, -np.inf)
    features, labels = np.arange(3, dtype=np.int64), np.arange(K, dtype=np.int32)
    weights = rng.integers(0, 2, size=n).astype(np.int32)
    results = []
    for profiled in (False, True):
        backend = CudaBackend(0, block_size=32)
        prof = PhaseProfiler(backend)
        with prof if profiled else contextlib.nullcontext():
            backend.start_fit(exact_bins(X, nominal), Y, loss, np.ones(n), 2.0 ** 20)
            totals = backend.covered_totals(weights)
            first = backend.find_best_refinement(features, labels, weights, totals, search)
            backend.apply_refinement(first)
            covered = int(((backend.mask == backend.indicator) & (weights != 0)).sum())
            second = backend.find_best_refinement(features, labels, weights, totals, search)
            backend.update_statistics(labels, np.array([0.5, -0.25]))
            results.append((first, second, backend.training_scores()))
    for a, b in zip(results[0][:2], results[1][:2]):
        assert (a.feature, a.op, a.threshold, a.count) == (b.feature, b.op, b.threshold, b.count)
    np.testing.assert_array_equal(results[0][2], results[1][2])
    s = prof.stats
    assert s["_launch_histogram"].calls >= 2 and s["_launch_search"].calls == 2
    assert s["update_statistics"].calls == s["apply_refinement"].calls == 1
    assert s[H2D].calls > 0 and s[D2H].calls > 0
    bins = int(exact_bins(X, nominal).total_bins)
    all_covered = int((weights != 0).sum())
    launches = s["_launch_histogram"].bytes
    # one launch per refinement here (every feature fits in shared memory): the bytes follow
    # the coverage of each refinement
    assert s["_launch_histogram"].calls == 2
    expected_reads = (2 * 4 * n + 3 * 4 * all_covered + 16 * K * all_covered) + \
        (2 * 4 * n + 3 * 4 * covered + 16 * K * covered)
    assert launches == expected_reads + 2 * 8 * (2 * K + 1) * bins
    assert "start_fit" in s and s["start_fit"].self_ms >= 0


simulator_results, test_under_simulator = simulated_tests(__name__, CHECKS)


if __name__ == "__main__":
    run_simulated_checks(CHECKS)
