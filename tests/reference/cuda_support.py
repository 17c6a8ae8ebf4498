"""Plumbing shared by the CUDA test modules: package checks, isolated subprocess runs, GPU
detection. Nothing here imports CuPy or ``numba.cuda`` at import time.

Checks that need a particular ``numba.cuda`` (the simulator, or compilation with a stand-in
compute capability) run in a fresh interpreter: ``python -m tests.<module>`` runs the
module's registered checks and prints one JSON line ``{name: None | traceback}`` after
``RESULTS_MARKER``, so the pytest process keeps its own ``numba.cuda`` untouched whatever
order the test modules run in.
"""

import functools
import importlib.util
import json
import os
import subprocess
import sys
import traceback
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS_MARKER = "GPURULES-CHECK-RESULTS "

# import name -> pip requirement of the packages the no-GPU CUDA tests need; NVRTC is the
# shared library of the pip package, looked up by ``nvrtc_library`` (not an import name)
NVRTC = "libnvrtc"
PACKAGES = {
    "numba_cuda": "numba-cuda",
    "cuda.bindings": "cuda-bindings",
    NVRTC: "nvidia-cuda-nvrtc-cu12 (CUDA 12) or nvidia-cuda-nvrtc (CUDA 13)",
    "greenlet": "greenlet",  # the simulated threads (tests/reference/simulator.py)
}
# where the pip wheels put libnvrtc under the ``nvidia`` namespace package: CUDA 12's
# nvidia-cuda-nvrtc-cu12 in nvidia/cuda_nvrtc/lib, CUDA 13's nvidia-cuda-nvrtc in
# nvidia/cu13/lib
NVRTC_LAYOUTS = ("cuda_nvrtc/lib", "cu13/lib")


def nvrtc_library(roots=None, layouts=NVRTC_LAYOUTS):
    """The path of the pip-installed ``libnvrtc.so.*`` (CUDA 12 or 13 layout), or None.

    ``roots``: the folders of the ``nvidia`` package (default: where it is installed)."""
    if roots is None:
        try:
            spec = importlib.util.find_spec("nvidia")
        except ModuleNotFoundError:
            spec = None
        roots = [] if spec is None else list(spec.submodule_search_locations or [])
    for root in roots:
        for layout in layouts:
            found = sorted((Path(root) / layout).glob("libnvrtc.so.*"))
            if found:
                return found[0]
    return None


def missing_packages(names=PACKAGES):
    """The pip names of the packages in ``names`` that cannot be imported (or, for
    ``NVRTC``, whose library is not found)."""
    missing = []
    for module, pip_name in names.items():
        if module == NVRTC:
            found = nvrtc_library() is not None
        else:
            try:
                found = importlib.util.find_spec(module) is not None
            except ModuleNotFoundError:
                found = False
        if not found:
            missing.append(pip_name)
    return missing


def require(*modules):
    """Fail (not skip) the calling test when one of ``modules`` is not installed."""
    missing = missing_packages({m: PACKAGES[m] for m in modules})
    if missing:
        pytest.fail(f"the CUDA tests need {', '.join(missing)}: pip install "
                    f"{' '.join(missing)} (listed in the 'test' extra)", pytrace=False)


def run_checks(checks):
    """Run ``{name: function}``; print ``{name: None or traceback}`` after the marker.
    Under the simulator: a block's threads one at a time
    (``simulator.run_threads_one_at_a_time``), CPU fits as :func:`_cpu_fits_in_the_rule_loop`
    makes them."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        from tests.reference import simulator

        simulator.run_threads_one_at_a_time()
        _cpu_fits_in_the_rule_loop()
    results = {}
    for name, check in checks.items():
        try:
            check()
            results[name] = None
        except Exception:  # reported to the parent test, which fails with the traceback
            results[name] = traceback.format_exc()
    print(RESULTS_MARKER + json.dumps(results), flush=True)


def _cpu_fits_in_the_rule_loop():
    """Make the CPU backend's fits in this process learn their rules in the learner's loop
    (``learners.boosting``), never in the batches (``CpuBackend.learn_rules``), which
    ``tests/test_fused_rules.py`` holds equal to it model for model. The simulated checks
    compare the CUDA backend's fits with the CPU's; a batched CPU fit compiled a rule loop
    per configuration in this process (cold, ``test_cuda_non_decomposable``'s fits: 128
    CPU-s in the loop's place 92; ``docs/benchmarks.md``, session 38)."""
    from gpurules.backends.cpu import CpuBackend

    CpuBackend.learns_rules = lambda self, plan: False


def run_simulated_checks(checks):
    """:func:`run_checks` in a process started with ``NUMBA_ENABLE_CUDASIM=1`` (asserted,
    and that ``numba.cuda`` was not imported before the simulator was on)."""
    from numba import config

    assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "run with NUMBA_ENABLE_CUDASIM=1"
    assert config.ENABLE_CUDASIM, "numba.cuda was imported before the simulator was enabled"
    run_checks(checks)


def simulated_backend_class():
    """CudaBackend with tests/reference/fake_cupy.py as CuPy (this interpreter only, under
    the simulator: a check run by :func:`run_simulated_checks`); the simulator has no
    ``as_cuda_array``: fake_cupy.as_cuda_array stands in for it."""
    import sys

    from numba import cuda

    from tests.reference import fake_cupy

    sys.modules["cupy"] = fake_cupy
    cuda.as_cuda_array = fake_cupy.as_cuda_array
    from gpurules.backends.cuda import CudaBackend

    return CudaBackend, fake_cupy


def run_isolated(module, env_updates, timeout=600):
    """Run ``python -m <module>`` from the repository root with ``env_updates`` (None
    removes a variable). Returns its results dict; fails the test if there is none."""
    if env_updates.get("NUMBA_ENABLE_CUDASIM") == "1":
        require("greenlet")
    env = dict(os.environ)
    for key, value in env_updates.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    proc = subprocess.run([sys.executable, "-m", module], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)
    for line in proc.stdout.splitlines():
        if line.startswith(RESULTS_MARKER):
            return json.loads(line[len(RESULTS_MARKER):])
    pytest.fail(f"`python -m {module}` produced no results (exit {proc.returncode}):\n"
                f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}", pytrace=False)


def simulator_fixture(module):
    """A module-scoped pytest fixture (assign it to ``simulator_results`` in ``module``): the
    results dict of ``module``'s checks run under the simulator (:func:`run_isolated`)."""
    @pytest.fixture(scope="module")
    def simulator_results():
        require("numba_cuda")
        return run_isolated(module, {"NUMBA_ENABLE_CUDASIM": "1"})
    return simulator_results


def assert_check_passed(results, name):
    """Fail with the check's traceback unless check ``name`` ran and passed."""
    error = results.get(name, f"check {name} did not run")
    assert error is None, error


def simulated_tests(module, checks, xfail=None):
    """The pytest side of ``module``'s checks run under the simulator, as two names for the
    module to bind: ``simulator_results, test_... = simulated_tests(__name__, CHECKS)``.

    Returns (fixture, test): :func:`simulator_fixture` of ``module``, and a test
    parametrised over the names of ``checks`` (sorted) that fails with a check's traceback
    (:func:`assert_check_passed`); ``xfail``: {name: reason} of checks expected to fail,
    strictly (one that passes fails the test)."""
    xfail = xfail or {}
    names = [pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=xfail[name]))
             if name in xfail else name for name in sorted(checks)]

    @pytest.mark.parametrize("name", names)
    def test_under_simulator(simulator_results, name):
        assert_check_passed(simulator_results, name)

    return simulator_fixture(module), test_under_simulator


@functools.lru_cache(maxsize=None)
def gpu_reason():
    """None if CUDA device 0 is usable with CuPy and Numba, else why not (checked lazily)."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return "NUMBA_ENABLE_CUDASIM=1 is set"
    from gpurules.backends.factory import cuda_status

    usable, reason = cuda_status(0)
    if not usable:
        return reason
    try:
        from numba import cuda

        if not cuda.is_available():
            return "numba.cuda sees no usable GPU"
    except Exception as exc:  # numba-cuda missing or its driver bindings failing
        return f"numba.cuda is not usable ({exc.__class__.__name__}: {exc})"
    return None


def skip_without_gpu():
    """Skip the calling test unless a real GPU is usable."""
    reason = gpu_reason()
    if reason is not None:
        pytest.skip(f"no usable GPU: {reason}")


def assert_rounds_like_the_host(kernel, ptx):
    """The agreement of a gpurules kernel's doubles with the host's (``device_math``): built
    without link-time optimization, and every double add, subtract and multiply of its PTX
    carries the ``.rn`` modifier (so ``ptxas`` may not fuse it into an FMA). ``kernel``: its
    ``cuda.jit`` dispatcher; ``ptx``: its PTX from ``compile_ptx`` (NVVM's ``-fma=0`` in
    place)."""
    import re

    assert kernel.targetoptions.get("lto") is False, \
        f"{kernel.py_func.__name__} is built with link-time optimization (nvJitLink contracts)"
    unrounded = re.findall(r"^\s*(?:@!?%p\d+\s+)?((?:add|sub|mul)\.f64)\b", ptx, re.M)
    assert not unrounded, f"{len(unrounded)} double ops without .rn: {sorted(set(unrounded))}"
