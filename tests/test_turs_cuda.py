"""TURS CUDA kernels without a GPU (DESIGN §4): ``compile_ptx`` for cc 9.0 with explicit
signatures, and the CUDA simulator on tiny inputs against the CPU backend (bit for bit: the
counts are integers and the scores fixed point). Both run in a fresh interpreter
(``python -m tests.test_turs_cuda``) so the simulator setting cannot leak."""

import os
import types as pytypes
from functools import partial

import numpy as np
import pytest

from tests.reference.cuda_support import (assert_rounds_like_the_host, require, run_checks,
                                         run_isolated)

CC = (9, 0)


@pytest.fixture(scope="module")
def ptx_results():
    require("numba_cuda")
    return run_isolated("tests.test_turs_cuda", {"NUMBA_ENABLE_CUDASIM": None})


@pytest.fixture(scope="module")
def sim_results():
    require("numba_cuda")
    return run_isolated("tests.test_turs_cuda", {"NUMBA_ENABLE_CUDASIM": "1"})


def _assert_ok(results, name):
    assert name in results, f"check {name} did not run: {sorted(results)}"
    assert results[name] is None, results[name]


@pytest.mark.parametrize("name", ["zero", "class_histogram", "running_sums",
                                  "score_literals", "_signatures_cover_kernels"])
def test_kernels_compile_for_cc90(ptx_results, name):
    _assert_ok(ptx_results, name)


@pytest.mark.parametrize("name", ["simulated_evaluate_equals_cpu", "simulated_fit_equals_cpu"])
def test_simulator_matches_cpu(sim_results, name):
    _assert_ok(sim_results, name)


# -- checks run in the fresh interpreter ---------------------------------------------------
def _problem(seed, n=48, literal_code="form-operator-cuts"):
    from gpurules.learners.turs_data import prepare

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)).astype(np.float32)
    X[:, 2] = rng.integers(0, 3, n)
    X[rng.random((n, 3)) < 0.1] = np.nan
    y = ((X[:, 0] > 0).astype(int) + (X[:, 2] == 1)).astype(int)
    return prepare(X, y, 3, np.array([False, False, True]), 4, literal_code=literal_code)


def _simulated_evaluate_equals_cpu():
    from gpurules.backends.cpu.class_histograms import CpuClassHistograms
    from gpurules.backends.cuda.class_histograms import CudaClassHistograms
    from gpurules.learners.turs import RuleSet
    from gpurules.learners.turs_rule import RuleState
    from gpurules.learners.turs_beam import candidate_batch

    for literal_code in ("form-operator-cuts", "cuts"):
        data = _problem(0, literal_code=literal_code)
        first = RuleState(data).refined(1)
        second = RuleState(data).refined(int(np.flatnonzero(data.lit_feat == 2)[0]))
        rs = RuleSet(data, [first, second])  # two overlapping rules: several groups
        cpu, gpu = CpuClassHistograms(data), CudaClassHistograms(data, 0, threads=16)
        rules = [RuleState(data), RuleState(data).refined(3), first.refined(5)]
        # a frontier of three rules, of one, and none: one batch each
        for frontier in (rules, rules[1:2], []):
            batch = candidate_batch(rs, frontier)
            for a, b in zip(cpu.evaluate(batch), gpu.evaluate(batch)):
                assert a.shape == b.shape == (len(frontier), len(data.lit_feat))
                assert a.dtype == b.dtype
                assert np.array_equal(a, b)


def _simulated_fit_equals_cpu():
    from gpurules.backends.cpu.class_histograms import CpuClassHistograms
    from gpurules.backends.cuda.class_histograms import CudaClassHistograms
    from gpurules.learners.turs import TursLearner

    data = _problem(1, n=60, literal_code="cuts")
    a = TursLearner(data, CpuClassHistograms(data), beam_width=3).fit()
    b = TursLearner(data, CudaClassHistograms(data, 0, threads=16), beam_width=3).fit()
    assert len(a.rules) == len(b.rules) >= 1
    assert a.total_bits == b.total_bits
    for ra, rb in zip(a.rules, b.rules):
        assert np.array_equal(ra.cover, rb.cover) and ra.order == rb.order


def _compile_kernel(cuda, kernel, signature):
    ptx, return_type = cuda.compile_ptx(kernel.py_func, signature, cc=CC)
    assert ".target sm_90" in ptx and ".entry" in ptx
    assert_rounds_like_the_host(kernel, ptx)
    assert str(return_type) == "none"


def main():
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        run_checks({"simulated_evaluate_equals_cpu": _simulated_evaluate_equals_cpu,
                    "simulated_fit_equals_cpu": _simulated_fit_equals_cpu})
        return
    import numba.cuda.dispatcher as dispatcher

    # compile device functions for the PTX target's cc instead of asking a driver
    dispatcher.get_current_device = lambda: pytypes.SimpleNamespace(compute_capability=CC)
    from numba import cuda

    from gpurules.backends.cuda import class_histograms as ch

    checks = {name: partial(_compile_kernel, cuda, kernel, ch.SIGNATURES[name])
              for name, kernel in ch.KERNELS.items()}

    def cover():
        assert set(ch.KERNELS) == set(ch.SIGNATURES)

    checks["_signatures_cover_kernels"] = cover
    run_checks(checks)


if __name__ == "__main__":
    main()
