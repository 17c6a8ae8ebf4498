"""How many threads a CPU phase runs on (``jit.threads``)."""

import numba
import pytest

from gpurules.jit import threads


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
