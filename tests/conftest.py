"""Shared fixtures."""

import pytest

from gpurules.jit import threads
from tests.reference.host_kernels import HostKernels, compiler


# the test files that took longest (busy seconds of a cold suite, docs/benchmarks.md,
# session 39): they start first, so that two workers end together
LONGEST_FILES = {"test_fused_rules.py": 297, "test_histogram_search.py": 108,
                 "test_sklearn_checks.py": 63, "test_non_decomposable_search.py": 48,
                 "test_exact_search.py": 47, "test_cuda_compile.py": 35,
                 "test_boomer_non_decomposable.py": 35, "test_non_decomposable.py": 31}


def pytest_collection_modifyitems(session, config, items):
    """The order in which files run (``make test`` keeps it: ``--no-loadscope-reorder``):
    the modules whose checks run under the CUDA simulator in a fresh process
    (``simulator_fixture``) last, so that their CPU references load from the Numba cache
    what the other tests compiled instead of compiling it while the others do; the longest
    files (:data:`LONGEST_FILES`) first; the others as collected."""
    def key(item):
        simulated = getattr(getattr(item, "module", None), "simulator_results",
                            None) is not None
        return simulated, -LONGEST_FILES.get(item.path.name, 0)

    items.sort(key=key)


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
