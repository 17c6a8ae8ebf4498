"""GPU workers of the distributed fit (``DaskBoomerClassifier(device='cuda')``).

1. Under the Numba CUDA simulator, with ``tests/reference/fake_cupy.py`` standing in for
   CuPy (one fresh interpreter, ``python -m tests.test_dask_cuda`` with
   ``NUMBA_ENABLE_CUDASIM=1``, as in ``test_cuda_simulator.py``; this pytest process never
   imports ``numba.cuda`` for them):

   - ``CudaBackend.partial_histograms`` equals ``CpuBackend.partial_histograms`` bit for
     bit (caller's feature order against the backend's slot order, rows with count 0,
     decomposable and packed Hessians) with one device->host copy per call;
   - a distributed fit whose partitions hold ``CudaBackend``\\ s learns the in-memory CPU
     ``BoomerClassifier``'s model: a real ``distributed.Client(processes=False)`` inside the
     simulating interpreter (its workers are threads of it, so they run the simulated
     kernels and the fake CuPy), two workers, the leader asking the other partition for
     its rows, and one partition (the leader's ``CudaBackend.refine_rule``).

2. In this process, without a GPU: ``device='cuda'`` fails with a ``RuntimeError`` naming
   the worker, ``'auto'`` runs on the CPU and says so in a log line naming the worker.
3. ``gpu``-marked tests: the same comparisons on a real GPU, with two in-process workers
   and with ``dask_cuda.LocalCUDACluster`` (skipped without a GPU or dask-cuda).

The simulator costs about 1 ms per simulated thread: data, grids and fits are tiny.
"""

import contextlib
import logging

import numpy as np
import pytest

from gpurules.backends.cpu import CpuBackend
from gpurules.conditions import OP_LEQ
from gpurules.objectives.losses import DECOMPOSABLE_LOSSES
from gpurules.objectives.non_decomposable import NON_DECOMPOSABLE_LOSSES
from tests.reference.cuda_reference import exact_bins, random_problem
from tests.reference.cuda_support import (gpu_reason, run_simulated_checks, simulated_tests,
                                          skip_without_gpu)

da = pytest.importorskip("dask.array", reason="dask is not installed (pip install gpurules[dask])")
distributed = pytest.importorskip("distributed", reason="distributed is not installed")

from gpurules.backends.dask.leader import Condition  # noqa: E402
from gpurules.dask import DaskBoomerClassifier  # noqa: E402
from tests.reference.dask_clients import in_process_client  # noqa: E402

SCALE = 2.0 ** 30
CHECKS = {}


def check(fn):
    CHECKS[fn.__name__] = fn
    return fn


# -- 1. under the simulator ----------------------------------------------------------------
def _histogram_problem(seed=4, n=64):
    """(BinnedFeatures, Y uint8 (n, 2), drawn int32 weights (n,) with zeros, a condition
    covering part of the examples): one bin per value; feature 0 is missing on every example
    the condition covers (its rows all have count 0 under that coverage), feature 3 has more
    bins than the fake device's shared memory holds (a global-atomics slot after the
    others)."""
    rng = np.random.default_rng(seed)
    X, nominal, *_ = random_problem(rng, n, 4, 1, n_distinct=6, nominal=(1,))
    X[:, 3] = rng.permutation(n).astype(np.float32) * 0.25
    condition = Condition(2, OP_LEQ, np.float32(0.0))
    X[X[:, 2] <= 0.0, 0] = np.nan
    Y = (rng.random((n, 2)) < 0.5).astype(np.uint8)
    weights = rng.choice(np.array([0, 1, 2, 3], np.int32), size=n)
    return exact_bins(X, nominal), Y, weights, condition


def _partial_histograms_equal_cpu(make_backend):
    """``CudaBackend.partial_histograms`` returns ``CpuBackend.partial_histograms``'s array
    bit for bit: full and partial coverage, unit and drawn weights (zeros included), the
    features in an order other than the slots' (on the fake device: shared first, the wide
    one last), a feature whose rows all have count 0, one feature, none; decomposable
    (W = K) and packed Hessians (W = K (K + 1) / 2). One device->host copy per call
    (``counters``), and one host->device copy (the slots; the drawn weights once more when
    they are new). ``make_backend()``: a new CudaBackend."""
    from gpurules.backends.cuda.counters import DeviceCounters

    binned, Y, weights, condition = _histogram_problem()
    samples = [np.array([3, 0, 2, 1]), np.array([0]), np.array([1, 3]), np.array([], int)]
    for loss in (DECOMPOSABLE_LOSSES["logistic-decomposable"],
                 NON_DECOMPOSABLE_LOSSES["logistic-non-decomposable"]):
        cpu, gpu = CpuBackend(), make_backend()
        for backend in (cpu, gpu):
            backend.start_fit(binned, Y, loss, np.ones(Y.shape[0]), SCALE)
        counters = DeviceCounters(gpu).attach()
        for step in ("all", "partial"):
            if step == "partial":
                for backend in (cpu, gpu):
                    backend.apply_refinement(condition)
            for features in samples:
                for w in (None, weights.copy()):  # a new weights array: uploaded again
                    want = cpu.partial_histograms(features, w)
                    before = counters.snapshot()
                    got = gpu.partial_histograms(features, w)
                    work = counters.snapshot() - before
                    where = f"{loss.name}, {step}, features {features}, weights {w is not None}"
                    assert type(got) is np.ndarray and got.dtype == np.int64, where
                    np.testing.assert_array_equal(got, want, err_msg=where)
                    copies = (1, 1 + (w is not None)) if features.size else (0, 0)
                    assert (work.d2h, work.h2d) == copies, (where, work)
        counters.detach()
        zero = cpu.partial_histograms(np.array([0]), weights)
        assert zero.shape[0] > 0 and not zero.any()  # the feature with count-0 rows only
        assert gpu.partial_histograms(np.array([3]), weights)[:, -1].any()


@check
def partial_histograms_equal_cpu():
    """:func:`_partial_histograms_equal_cpu` on the simulated CudaBackend (fake CuPy,
    blocks of 32), whose small shared memory puts feature 3 in a global-atomics slot."""
    from tests.reference.cuda_support import simulated_backend_class

    backend_class, fake_cupy = simulated_backend_class()
    _partial_histograms_equal_cpu(lambda: backend_class(0, block_size=32))
    launched = {name for name, *_ in fake_cupy.launches}
    assert {"histogram_shared", "histogram_global"} <= launched, launched


@contextlib.contextmanager
def _simulated_cuda_workers():
    """``device='cuda'`` usable in this interpreter: ``backends.factory.cuda_status(0)``
    reports cuda:0 usable (the smoke test needs a real GPU), and the CudaBackend the
    partitions make (``backends.factory.get_backend``) is the simulated one (fake CuPy,
    blocks of 32 threads, ``simulated_cuda_estimators``) whose device work runs one
    backend at a time, until the block ends.

    One at a time: the workers of a ``Client(processes=False)`` are threads of this
    interpreter, and neither the simulator (one kernel at a time per process: a launch
    while another runs is taken for a device-function call) nor the fake CuPy (one stack
    of current streams) can run two backends' work at once. Every launch and copy of the
    backend happens inside its ``_on_device`` block, so a lock around that block
    serialises them; nothing inside it waits on another partition. (On GPUs each worker
    is a process of its own: ``dask_cuda.LocalCUDACluster``.)"""
    import threading

    import gpurules.backends.cuda as cuda_backends
    from gpurules.backends import factory
    from tests.test_cuda_non_decomposable import simulated_cuda_estimators

    saved = dict(factory._CUDA_STATUS)
    factory._CUDA_STATUS[0] = (True, "the Numba CUDA simulator with fake CuPy")
    try:
        with simulated_cuda_estimators():
            simulated = cuda_backends.CudaBackend

            class OneAtATime(simulated):
                _lock = threading.RLock()

                @contextlib.contextmanager
                def _on_device(self):
                    with self._lock, super()._on_device():
                        yield

            cuda_backends.CudaBackend = OneAtATime
            yield  # simulated_cuda_estimators restores the class
    finally:
        factory._CUDA_STATUS.clear()
        factory._CUDA_STATUS.update(saved)


def _fit_problem(seed=6, n=40):
    """X float32 (n, 4) with missing values, feature 1 nominal; Y uint8 (n, 2)."""
    rng = np.random.default_rng(seed)
    X, _, *_ = random_problem(rng, n, 4, 1, n_distinct=6, nominal=(1,))
    X[:, 3] = rng.normal(size=n).astype(np.float32)
    Y = np.stack([X[:, 3] > 0, rng.random(n) < 0.4], axis=1).astype(np.uint8)
    return X, Y


def _assert_same_model(local, dist):
    from tests.test_cuda_non_decomposable import MODEL_ARRAYS

    assert len(dist.model_) == len(local.model_) > 2
    for name in MODEL_ARRAYS:
        np.testing.assert_array_equal(getattr(dist.model_, name), getattr(local.model_, name),
                                      err_msg=name)
    np.testing.assert_array_equal(dist.model_.rule_coverage, local.model_.rule_coverage)


# (chunks of X's rows, parameters): two partitions (the leader asks the other for its rows);
# packed Hessians, with an empty partition; one partition (the leader's
# CudaBackend.refine_rule)
DISTRIBUTED_FITS = [
    ((18, 22), dict()),
    ((18, 0, 22), dict(loss="logistic-non-decomposable", head_type="complete")),
    ((40,), dict()),
]


def _distributed_fits_equal_cpu(client):
    """``DaskBoomerClassifier(device='cuda')`` on ``client``, every partition a
    ``CudaBackend`` (an empty one too), learns the model of the in-memory
    ``BoomerClassifier(device='cpu')`` (same bins, same histogram search; the training
    coverage counted by the partitions too) and reports ``device_ == 'cuda:0'``. The leader
    calls the other partitions' ``histograms`` through their actors (on another worker, or
    in its own thread for one on its worker)."""
    from gpurules import BoomerClassifier

    X, Y = _fit_problem()
    for chunks, params in DISTRIBUTED_FITS:
        params = dict(feature_binning="equal-width{bin_ratio=0.5,max_bins=6}",
                      max_rules=3, random_state=2, **params)
        local = BoomerClassifier(device="cpu", **params).fit(X, Y, nominal_feature_indices=[1])
        dist = DaskBoomerClassifier(client=client, device="cuda", **params).fit(
            da.from_array(X, chunks=(chunks, -1)), Y, nominal_feature_indices=[1])
        assert dist.device_ == "cuda:0", dist.device_
        assert dist.partition_devices_ == ["cuda:0"] * len(chunks)
        _assert_same_model(local, dist)


def _two_workers():
    """A ``distributed.Client`` of two in-process workers (threads of this interpreter), their
    profiler off (``tests/reference/dask_clients.py``: with it, this check deadlocked
    CPython 3.11.7 now and then)."""
    return in_process_client(2)


@check
def distributed_fit_with_cuda_partitions_equals_cpu():
    """:func:`_distributed_fits_equal_cpu` with the simulated CudaBackend on two in-process
    workers (``_simulated_cuda_workers``)."""
    with _simulated_cuda_workers(), _two_workers() as client:
        _distributed_fits_equal_cpu(client)


simulator_results, test_under_simulator = simulated_tests(__name__, CHECKS)


# -- 2. in this process: no GPU here; the same checks on a real GPU --------------------------
@pytest.fixture(scope="module")
def client():
    with in_process_client(1) as c:
        yield c


@pytest.fixture(scope="module")
def no_gpu():
    reason = gpu_reason()
    if reason is None:
        pytest.skip("a GPU is usable here: the no-GPU paths are not taken")
    return reason


def _small_fit(client, device):
    X, Y = _fit_problem()
    clf = DaskBoomerClassifier(client=client, device=device, max_rules=2,
                               feature_binning="equal-width")
    return clf.fit(da.from_array(X, chunks=((18, 22), -1)), Y)


def test_cuda_without_a_gpu_names_the_worker(client, no_gpu):
    worker = next(iter(client.nthreads()))
    with pytest.raises(RuntimeError, match="worker .*cannot be used") as error:
        _small_fit(client, "cuda")
    message = str(error.value)
    assert worker in message and "device='cuda' cannot be used" in message
    assert "CuPy" in message or "CUDA" in message  # the part of the smoke test that failed


def test_auto_without_a_gpu_runs_on_the_cpu_and_says_so(client, no_gpu, caplog):
    with caplog.at_level(logging.INFO, logger="gpurules"):
        clf = _small_fit(client, "auto")
    assert clf.device_ == "cpu" and clf.partition_devices_ == ["cpu", "cpu"]
    worker = next(iter(client.nthreads()))
    lines = [r.getMessage() for r in caplog.records
             if "uses the CPU on worker" in r.getMessage()]
    assert len(lines) == 1 and worker in lines[0] and "partitions 0, 1" in lines[0], lines


@pytest.mark.gpu
def test_gpu_partial_histograms_equal_cpu():
    skip_without_gpu()
    from gpurules.backends.cuda import CudaBackend

    _partial_histograms_equal_cpu(lambda: CudaBackend(0))


@pytest.mark.gpu
def test_gpu_distributed_fit_with_cuda_partitions_equals_cpu():
    """Two in-process workers sharing the GPU (each partition's backend on its own stream)."""
    skip_without_gpu()
    with _two_workers() as client:
        _distributed_fits_equal_cpu(client)


@pytest.mark.gpu
def test_gpu_local_cuda_cluster():
    """``dask_cuda.LocalCUDACluster``: one worker process per GPU."""
    skip_without_gpu()
    dask_cuda = pytest.importorskip("dask_cuda", reason="dask-cuda is not installed")
    with dask_cuda.LocalCUDACluster(dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        _distributed_fits_equal_cpu(client)


if __name__ == "__main__":
    run_simulated_checks(CHECKS)
