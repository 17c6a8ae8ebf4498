"""Shared fixtures."""

import pytest

from gpurules.jit import threads
from tests.reference.host_kernels import HostKernels, compiler


def pytest_collection_modifyitems(session, config, items):
    """The modules whose checks run under the CUDA simulator in a fresh process
    (``simulator_fixture``) last: their CPU references then load from the Numba cache
    what the other tests compiled, instead of compiling it while the others do."""
    items.sort(key=lambda item: getattr(getattr(item, "module", None), "simulator_results",
                                        None) is not None)


@pytest.fixture
def parallel_forms(monkeypatch):
    """Every CPU phase of a fit with more than one thread runs on its threads, however
    small the data (``threads.MIN_PARALLEL_WORK`` and ``MIN_PARALLEL_FIT`` = 0): the
    parallel forms of the kernels (``jit/variants.py``) run instead of the serial ones."""
    monkeypatch.setattr(threads, "MIN_PARALLEL_WORK", 0)
    monkeypatch.setattr(threads, "MIN_PARALLEL_FIT", 0)


@pytest.fixture(scope="module")
def emotions_300():
    """(X float32 (300, 72), Y uint8 (300, 6)): the first 300 examples of the packaged
    emotions data (the calibration and joint-probability tests)."""
    from gpurules.datasets import load_example

    ds = load_example("emotions")
    return ds.X[:300], ds.Y[:300]


@pytest.fixture(scope="module")
def host_kernels(tmp_path_factory):
    """The CUDA C kernels of ``kernels/histogram.cu`` built for the host
    (``tests/reference/host_kernels.py``), once per test module."""
    if compiler() is None:
        pytest.fail("the host runs of the CUDA C kernels need a C++20 compiler (g++)",
                    pytrace=False)
    return HostKernels.build(tmp_path_factory.mktemp("cuda_host"))
