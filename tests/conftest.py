"""Shared fixtures, and the order and grouping of the suite's files."""

from pathlib import Path

import pytest

from gpurules.jit import threads
from tests.reference.host_kernels import HostKernels, compiler


# the test files that took longest (busy seconds of a cold suite, docs/benchmarks.md,
# session 39): they start first, so that two workers end together
LONGEST_FILES = {"test_fused_rules.py": 297, "test_histogram_search.py": 108,
                 "test_sklearn_checks.py": 63, "test_non_decomposable_search.py": 48,
                 "test_exact_search.py": 47, "test_cuda_compile.py": 35,
                 "test_boomer_non_decomposable.py": 35, "test_non_decomposable.py": 31}

# files that run on one worker, in this order (:func:`pytest_xdist_make_scheduler`): the
# fits of the others compile mostly what ``test_fused_rules.py``'s fits compile (the same
# searches and rule loops: 75 of 98, 32 of 58 and 15 of 16 CPU-s; docs/benchmarks.md,
# session 46), so that they find it compiled in their process instead of compiling it
# again in the other worker's
FUSED_RULES_GROUP = ("test_fused_rules.py", "test_histogram_search.py",
                     "test_boomer_non_decomposable.py", "test_rule_pruning.py")


def work_unit(path):
    """The unit of work of the test file at ``path`` (a node id's file part): the group's
    name for the files of :data:`FUSED_RULES_GROUP`, else the path itself."""
    return "fused-rules group" if Path(path).name in FUSED_RULES_GROUP else path


def pytest_xdist_make_scheduler(config, log):
    """``make test``'s ``--dist loadfile`` with the files of :data:`FUSED_RULES_GROUP` as
    one unit of work (one worker runs them, in the order of
    :func:`pytest_collection_modifyitems`), every other file a unit of its own."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FileGroups(LoadFileScheduling):
        def _split_scope(self, nodeid):
            return work_unit(super()._split_scope(nodeid))

    return FileGroups(config, log)


def pytest_collection_modifyitems(session, config, items):
    """The order in which files run (``make test`` keeps it: ``--no-loadscope-reorder``):
    the files of :data:`FUSED_RULES_GROUP` first (one unit of work:
    :func:`pytest_xdist_make_scheduler`); the longest (:data:`LONGEST_FILES`) next, the
    others as collected; the modules whose checks run under the CUDA simulator in a fresh
    process (``simulator_fixture``) last, so that their CPU references load from the Numba
    cache what the other tests compiled instead of compiling it while the others do."""
    def key(item):
        name = item.path.name
        simulated = getattr(getattr(item, "module", None), "simulator_results",
                            None) is not None
        grouped = name in FUSED_RULES_GROUP
        return (simulated, not grouped,
                FUSED_RULES_GROUP.index(name) if grouped else -LONGEST_FILES.get(name, 0))

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
