"""The CUDA fit's passes over the bins outside its search, against the host's: equal-width
binning on the device (``backends/cuda/binning.py``) against ``bin_features(...,
drop_empty=True)`` bit for bit, and the training coverage of the rules counted on the
device (``CudaBackend.rule_coverage``) against ``rule_importance.coverage`` on X; under the
Numba CUDA simulator with ``tests/reference/fake_cupy.py`` as CuPy (one fresh interpreter
for the checks, as in ``test_cuda_simulator.py``). In this process: the estimator's choice
of where to bin.
"""

import logging

import numpy as np
import pytest

from gpurules import BoomerClassifier
from gpurules.data.binning import BIN_RATIO, MAX_BINS, MIN_BINS, bin_features, bin_options
from tests.reference.cuda_reference import assert_device_binned_fit_equals_cpu, \
    assert_same_binned, equal_width_problems, random_problem
from tests.reference.cuda_support import run_simulated_checks, simulated_backend_class, \
    simulated_tests

CHECKS = {}


def check(fn):
    CHECKS[fn.__name__] = fn
    return fn


@check
def device_bins_equal_the_hosts():
    backend_class, cp = simulated_backend_class()
    backend = backend_class(0, block_size=32, device_binning=True)
    for name, X, nominal, options in equal_width_problems(40):
        host = bin_features(X, nominal, "equal-width", drop_empty=True, **options)
        device = backend.bin_features(X, nominal, "equal-width", options)
        assert_same_binned(device, host, cp.asnumpy, name)


@check
def device_binning_refuses_what_it_does_not_bin():
    """None (the host bins) unless switched on, and, said in an INFO line, where every
    column is nominal, for another method or for a matrix that is not float32; the host's
    ValueError for a value that is not finite and for a bad option; a MemoryError naming
    the binning where the device has too little memory."""
    backend_class, cp = simulated_backend_class()
    X = np.arange(12, dtype=np.float32).reshape(6, 2)
    plain = np.zeros(2, bool)
    assert backend_class(0, block_size=32).bin_features(X, plain, "equal-width", {}) is None
    backend = backend_class(0, block_size=32, device_binning=True)
    said = []
    handler = logging.Handler()
    handler.emit = lambda record: said.append(record.getMessage())
    logger = logging.getLogger("gpurules.cuda")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        assert backend.bin_features(X, np.array([True, True]), "equal-width", {}) is None
        assert backend.bin_features(X, plain, "equal-frequency", {}) is None
        assert backend.bin_features(X.astype(np.float64), plain, "equal-width", {}) is None
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert [m.split("(")[-1] for m in said] == [
        "no numerical feature)", "equal-frequency binning)",
        "not a dense float32 matrix)"], said
    bad = X.copy()
    bad[2, 1] = np.inf
    for matrix, options, message in ((bad, {}, "finite feature values"),
                                     (X, {"bin_ratio": 0.0}, "bin_ratio")):
        with pytest.raises(ValueError, match=message):
            bin_features(matrix, plain, "equal-width", **options)
        with pytest.raises(ValueError, match=message):
            backend.bin_features(matrix, plain, "equal-width", options)
    free, cp.FREE_BYTES = cp.FREE_BYTES, 100
    try:
        with pytest.raises(MemoryError, match="binning the features on the device"):
            backend.bin_features(X, plain, "equal-width", {})
    finally:
        cp.FREE_BYTES = free


@check
def fit_with_device_binning_equals_a_cpu_fit():
    """A BoomerClassifier fit whose backend bins on the (simulated) device learns the CPU
    fit's model and training coverage (``assert_device_binned_fit_equals_cpu``)."""
    backend_class, _ = simulated_backend_class()
    rules = assert_device_binned_fit_equals_cpu(
        lambda: backend_class(0, block_size=32, device_binning=True), 60, 3, 3)
    assert rules == 3


@check
def rule_coverage_on_the_device_equals_the_hosts():
    """Rules of conditions at the bins' thresholds (numerical ``<=``/``>``, nominal
    ``==``/``!=``; none; several on one feature) cover the same training examples counted
    on the device's bins as on X (missing values satisfy nothing); no rule, no count."""
    from gpurules.backends.thresholds import bin_threshold
    from gpurules.conditions import OP_EQ, OP_GR, OP_LEQ, OP_NEQ
    from gpurules.model import RuleModel
    from gpurules.objectives.losses import DECOMPOSABLE_LOSSES
    from gpurules.rule_importance import coverage

    backend_class, _ = simulated_backend_class()
    rng = np.random.default_rng(6)
    X, nominal, *_ = random_problem(rng, 50, 5, 1, n_distinct=6, nominal=(1,))
    binned = bin_features(X, nominal, "equal-width", bin_ratio=0.5, drop_empty=True)
    backend = backend_class(0, block_size=32)
    backend.start_fit(binned, np.zeros((50, 2), np.uint8),
                      DECOMPOSABLE_LOSSES["logistic-decomposable"], np.ones(50), 2.0 ** 20)
    conditions, starts = [], [0]
    for size in (0, 1, 1, 2, 3, 4, 2, 1):
        for _ in range(size):
            f = int(rng.integers(5))
            lo, hi = binned.bin_offset[f], binned.bin_offset[f + 1]
            if nominal[f]:
                b = int(rng.integers(lo, hi))
                conditions.append((f, (OP_EQ, OP_NEQ)[b % 2], binned.bin_min[b]))
            elif hi - lo > 1:
                b = int(rng.integers(lo + 1, hi))
                conditions.append((f, (OP_LEQ, OP_GR)[b % 2],
                                   bin_threshold(binned.bin_min, binned.bin_max, b)))
        starts.append(len(conditions))
    for count in (len(starts) - 1, 1, 0):  # (1: one rule, no condition at all)
        chosen = conditions[:starts[count]]
        f, op, thr = (np.array([c[k] for c in chosen], t) for k, t in (
            (0, np.int32), (1, np.int8), (2, np.float32)))
        model = RuleModel(np.zeros(2), False, f, op, thr,
                          np.array(starts[:count + 1], np.int64),
                          np.zeros(count, np.int32), np.ones(count),
                          np.arange(count + 1, dtype=np.int64))
        counts = backend.rule_coverage(model)
        assert counts.dtype == np.int64 and counts.shape == (count,)
        np.testing.assert_array_equal(counts, coverage(model, X)[0])
        if count > 1:  # (the rules cover some examples, not all but the empty body)
            assert counts[0] == 50 and 0 < counts[1:].max() < 50, counts


@check
def device_binning_benchmark_runs():
    """``benchmarks/device_binning.py``'s measurement (what ``gpu_diagnose.py``'s binning
    part runs on a GPU) on a tiny problem: both bin, the same bins, two times."""
    from benchmarks.device_binning import measure, problem

    backend_class, _ = simulated_backend_class()
    times = measure(backend_class(0, block_size=32, device_binning=True), problem(30, 3),
                    repeats=1)
    assert len(times) == 2 and min(times) > 0, times


# -- in this process ---------------------------------------------------------------------
def test_bin_options_are_bin_features_defaults_checked():
    assert bin_options("equal-width") == (BIN_RATIO, MIN_BINS, MAX_BINS)
    assert bin_options("equal-frequency", bin_ratio=0.5, max_bins=9) == (0.5, MIN_BINS, 9)
    with pytest.raises(ValueError, match="min_bins"):
        bin_options("equal-width", min_bins=0)
    with pytest.raises(ValueError, match="unknown feature binning"):
        bin_options("quantile")


def test_estimator_bins_on_the_host_for_a_backend_without_bin_features():
    """The CPU backend has no ``bin_features``: the host bins (and the backend is made
    once); an exact search makes the backend after the representation, never for it."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 3)).astype(np.float32)
    Y = (rng.random((50, 2)) < 0.5).astype(np.uint8)
    for binning in ("equal-width", "none"):
        clf = BoomerClassifier(device="cpu", max_rules=2, feature_binning=binning)
        made = []
        make = clf._make_backend
        clf._make_backend = lambda threads: made.append(make(threads)) or made[-1]
        clf.fit(X, Y)
        assert len(made) == 1, binning
        assert clf.feature_binning_ == binning


simulator_results, test_kernel_under_simulator = simulated_tests(__name__, CHECKS)


if __name__ == "__main__":
    run_simulated_checks(CHECKS)
