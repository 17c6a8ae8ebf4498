"""How many threads a CPU phase runs on (``jit.threads``)."""

import numba
import numpy as np
import pytest

from gpurules.backends.cpu import CpuBackend
from gpurules.data.presorted import presort_dense
from gpurules.data.sparse import presort_sparse
from gpurules.jit import threads
from gpurules.objectives.losses import DECOMPOSABLE_LOSSES
from gpurules.objectives.non_decomposable import NON_DECOMPOSABLE_LOSSES


@pytest.fixture
def openmp(monkeypatch):
    """The OpenMP layer, whatever this process chose, with no wait-policy variables."""
    monkeypatch.setattr(numba, "threading_layer", lambda: "omp")
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    return monkeypatch


@pytest.mark.parametrize("env, sleep", [({}, False), ({"OMP_WAIT_POLICY": "PASSIVE"}, True),
                                        ({"OMP_WAIT_POLICY": "active"}, False),
                                        ({"GOMP_SPINCOUNT": "0"}, True)])
def test_openmp_workers_sleep_as_its_environment_says(openmp, env, sleep):
    for key, value in env.items():
        openmp.setenv(key, value)
    assert threads.workers_sleep() is sleep


@pytest.mark.parametrize("layer, sleep", [("workqueue", True), ("tbb", False)])
def test_other_layers(monkeypatch, layer, sleep):
    monkeypatch.setattr(numba, "threading_layer", lambda: layer)
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")  # OpenMP's setting: ignored by them
    assert threads.workers_sleep() is sleep


def test_layer_not_chosen_yet_falls_back_to_the_configured_one(openmp):
    def not_yet():
        raise ValueError("Threading layer is not initialized.")

    openmp.setattr(numba, "threading_layer", not_yet)
    openmp.setattr(numba.config, "THREADING_LAYER", "workqueue")
    assert threads.workers_sleep()
    openmp.setattr(numba.config, "THREADING_LAYER", "default")
    assert not threads.workers_sleep()


def test_sleeping_workers_decide_per_call(openmp):
    openmp.setenv("OMP_WAIT_POLICY", "passive")
    big, small = threads.MIN_PARALLEL_WORK, threads.MIN_PARALLEL_WORK - 1
    assert threads.threads_for(big, 4, fit_work=big) == 4
    assert threads.threads_for(small, 4, fit_work=10 * big) == 1


def test_spinning_workers_decide_per_fit(openmp):
    fit = threads.MIN_PARALLEL_FIT
    assert threads.threads_for(1, 4, fit_work=fit) == 4  # a tiny step of a large fit
    assert threads.threads_for(fit - 1, 4, fit_work=fit - 1) == 1
    # one-off phases (prediction) and single-thread callers
    assert threads.threads_for(threads.MIN_PARALLEL_WORK - 1, 4) == 1
    assert threads.threads_for(10 ** 9, 1, fit_work=10 ** 9) == 1


def test_a_search_counts_the_width_of_the_statistics(openmp):
    """A non-decomposable example's statistics (K gradients and K (K + 1) / 2 Hessian
    entries) cost ``(K + W) / 2K`` decomposable rows to read: with 20 labels, 1,000
    examples and 10 features its searches go to two threads where decomposable ones of the
    same size stay on one; the updates count labels, as before."""
    n, K, S = 1_000, 20, 10
    assert n * S < threads.MIN_PARALLEL_FIT <= n * S * (K + K * (K + 1) // 2) / (2 * K)
    X = np.random.default_rng(0).normal(size=(n, 3))
    Y = np.zeros((n, K), np.uint8)
    chosen = {}
    for name, loss in (("decomposable", DECOMPOSABLE_LOSSES["logistic-decomposable"]),
                       ("non-decomposable",
                        NON_DECOMPOSABLE_LOSSES["logistic-non-decomposable"])):
        backend = CpuBackend(2, 2)
        backend.start_fit(presort_dense(X, np.zeros(3, bool)), Y, loss, np.ones(n), 2.0 ** 30)
        chosen[name] = (backend._search_threads(n, S), backend._update_threads(range(K)))
    assert chosen == {"decomposable": (1, 1), "non-decomposable": (2, 1)}


def _sparse_backend(X, K=20, loss="logistic-non-decomposable"):
    """A two-thread CpuBackend started on the sparse representation of ``X``."""
    spec = {**DECOMPOSABLE_LOSSES, **NON_DECOMPOSABLE_LOSSES}[loss]
    n, A = X.shape
    backend = CpuBackend(2, 2)
    backend.start_fit(presort_sparse(X, np.zeros(A, bool)), np.zeros((n, K), np.uint8), spec,
                      np.ones(n), 2.0 ** 30)
    return backend


def test_a_sparse_search_counts_the_entries_it_reads(openmp):
    """Per call (sleeping workers) the sparse search that reads every entry counts each
    entry's coverage and the statistics of its covered ones, not a row per covered example
    and feature: few entries (8 %, as enron's) stay on one thread at full coverage, many
    entries go to two even when few examples are covered (each still has its coverage
    read). The fit's size (spinning workers) counts as before."""
    openmp.setenv("OMP_WAIT_POLICY", "passive")
    rng = np.random.default_rng(0)
    n, S = 2_000, 10
    few = _sparse_backend(np.where(rng.random((n, 50)) < 0.08, 1.0, 0.0))
    rows = n * S * few._row_visits()  # what the searches counted before
    assert threads.MIN_PARALLEL_FIT <= rows and threads.MIN_PARALLEL_WORK <= rows
    assert few._search_threads(n, S) == 1
    m, T = 20_000, 7
    counts = np.where(rng.random((m, 10)) < 0.8, rng.integers(1, 5, (m, 10)), 0)
    many = _sparse_backend(counts.astype(float), K=5, loss="logistic-decomposable")
    assert many._search_threads(threads.MIN_PARALLEL_WORK // (2 * T), T) == 2
    openmp.delenv("OMP_WAIT_POLICY")  # spinning workers: the fit's rows decide
    assert few._search_threads(1, S) == 2
