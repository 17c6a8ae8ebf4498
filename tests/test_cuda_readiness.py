"""Readiness of the CUDA backend without a GPU: the smoke test behind ``device="auto"`` /
``"cuda"`` (``gpurules.backends.cuda.readiness``), its cache in
``gpurules.backends.factory`` and the NumPy 2.5 measure
(``gpurules.backends.cuda.numpy_compat``).

CuPy and ``numba.cuda`` are replaced by small stand-in modules in ``sys.modules``; each test
breaks one part of the smoke test and checks that the reason names that part.
"""

import logging
import re
import sys
import types

import numpy as np
import pytest

from gpurules.backends import factory
from gpurules.backends.cuda import numpy_compat, readiness, sources
from gpurules.device import Device


# -- stand-ins -------------------------------------------------------------------------------
class _Context:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def fake_cupy(count=1, cc="90", compile_error=None):
    """A ``cupy`` stand-in: ``count`` devices of compute capability ``cc``; RawModule's
    get_function raises ``compile_error`` if given."""
    cp = types.ModuleType("cupy")

    class Device(_Context):
        def __init__(self, index=0):
            self.compute_capability = cc

    class RawModule:
        def __init__(self, code, options):
            assert "histogram_shared" in code and options == sources.RAW_MODULE_OPTIONS
            self.loaded = []

        def get_function(self, name):
            if compile_error is not None:
                raise compile_error
            self.loaded.append(name)

    def device_count():
        if isinstance(count, Exception):
            raise count
        return count

    cp.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=device_count),
                                    Device=Device)
    cp.RawModule = RawModule
    return cp


def fake_numba_cuda(available=True, devices=1, launch=None):
    """A ``numba.cuda`` stand-in that runs a kernel's threads one by one on the host;
    ``launch(kernel, grid, block, array)`` replaces that if given."""
    cuda = types.ModuleType("numba.cuda")
    cuda.is_available = lambda: available
    cuda.gpus = [_Context() for _ in range(devices)]
    cuda._thread = 0
    cuda.grid = lambda ndim: cuda._thread

    class Array:
        def __init__(self, a):
            self.a = np.array(a)

        def copy_to_host(self):
            return self.a.copy()

    def run_threads(kernel, grid, block, array):
        for cuda._thread in range(grid * block):
            kernel(array.a)

    class Kernel:
        def __init__(self, fn):
            self.fn = fn

        def __getitem__(self, config):
            grid, block = config
            return lambda array: (launch or run_threads)(self.fn, grid, block, array)

    cuda.jit = Kernel
    cuda.to_device = Array
    return cuda


@pytest.fixture
def stack(monkeypatch):
    """Install stand-ins: ``stack(cupy=..., numba_cuda=...)``; None makes the import fail."""
    def install(cupy=None, numba_cuda=None):
        monkeypatch.setitem(sys.modules, "cupy", cupy)
        monkeypatch.setitem(sys.modules, "numba.cuda", numba_cuda)
    monkeypatch.setattr(factory, "_CUDA_STATUS", {})
    return install


# -- the smoke test --------------------------------------------------------------------------
def test_every_part_passes_on_a_working_stack(stack):
    stack(fake_cupy(cc="90"), fake_numba_cuda())
    usable, reason = readiness.smoke_test(0)
    assert usable, reason
    assert reason.startswith("cuda:0 is usable (compute capability 9.0")


def _wrong_numbers(kernel, grid, block, array):
    array.a[:] = 0.0


def _row_stack_missing(kernel, grid, block, array):
    raise AttributeError("module 'numpy' has no attribute 'row_stack'")


@pytest.mark.parametrize("cupy, numba_cuda, index, expected", [
    (None, fake_numba_cuda(), 0, r"^CuPy failed: cupy is not importable \(.*gpurules\[cuda13\]"),
    (fake_cupy(count=0), fake_numba_cuda(), 0, "^CUDA device failed: no CUDA device is visible"),
    (fake_cupy(count=1), fake_numba_cuda(), 1,
     r"^CUDA device failed: cuda:1 requested but only 1 device\(s\)"),
    (fake_cupy(count=RuntimeError("cudaErrorInsufficientDriver")), fake_numba_cuda(), 0,
     "^CUDA device failed: RuntimeError: cudaErrorInsufficientDriver"),
    (fake_cupy(cc="70"), fake_numba_cuda(), 0,
     "^compute capability failed: cuda:0 has compute capability 7.0; gpurules builds for 7.5"),
    (fake_cupy(), None, 0, "^numba.cuda failed: numba.cuda is not importable"),
    (fake_cupy(), fake_numba_cuda(available=False), 0,
     r"^numba.cuda failed: numba.cuda.is_available\(\) is False"),
    (fake_cupy(count=2), fake_numba_cuda(devices=1), 1,
     r"^numba.cuda failed: numba.cuda sees 1 device\(s\), not cuda:1"),
    (fake_cupy(), fake_numba_cuda(launch=_wrong_numbers), 0,
     "^Numba CUDA kernel failed: a test kernel computed wrong numbers"),
    (fake_cupy(), fake_numba_cuda(launch=_row_stack_missing), 0,
     "^Numba CUDA kernel failed: AttributeError: .*row_stack"),
    (fake_cupy(compile_error=RuntimeError("NVRTC_ERROR_COMPILATION")), fake_numba_cuda(), 0,
     "^CuPy RawModule failed: RuntimeError: NVRTC_ERROR_COMPILATION"),
], ids=["cupy-import", "no-device", "index", "driver", "capability", "numba-import",
        "numba-unavailable", "numba-index", "kernel-result", "kernel-error", "raw-module"])
def test_each_failing_part_is_named(stack, cupy, numba_cuda, index, expected):
    stack(cupy, numba_cuda)
    usable, reason = readiness.smoke_test(index)
    assert not usable
    assert re.search(expected, reason), reason


def test_parts_are_checked_in_order():
    names = [name for name, _ in readiness.PARTS]
    assert names == ["CuPy", "CUDA device", "compute capability", "numba.cuda",
                     "Numba CUDA kernel", "CuPy RawModule"]


# -- backends/factory.py: cache, "auto" and "cuda" -------------------------------------------
def test_cuda_status_runs_the_smoke_test_once_per_device(monkeypatch, stack):
    calls = []

    def smoke_test(index):
        calls.append(index)
        return False, f"CuPy failed: stand-in for cuda:{index}"

    stack()
    monkeypatch.setattr(readiness, "smoke_test", smoke_test)
    assert factory.cuda_status() == factory.cuda_status(0) == factory.cuda_status(index=0)
    assert factory.cuda_status(1)[1] == "CuPy failed: stand-in for cuda:1"
    factory.cuda_status(1)
    assert calls == [0, 1]


def test_auto_falls_back_and_logs_the_failing_part(stack, caplog):
    stack(fake_cupy(), fake_numba_cuda(launch=_wrong_numbers))
    with caplog.at_level(logging.INFO, logger="gpurules"):
        assert str(factory.resolve_device("auto")) == "cpu"
    assert "device='auto' uses the CPU (Numba CUDA kernel failed: a test kernel computed" \
        in caplog.text


def test_cuda_raises_naming_the_failing_part(stack):
    stack(fake_cupy(compile_error=RuntimeError("NVRTC_ERROR_COMPILATION")), fake_numba_cuda())
    with pytest.raises(RuntimeError, match=r"device='cuda:0' cannot be used: CuPy RawModule "
                                           r"failed: RuntimeError: NVRTC_ERROR_COMPILATION"):
        factory.resolve_device("cuda:0")


def test_auto_and_cuda_use_a_working_device(stack, caplog):
    stack(fake_cupy(), fake_numba_cuda())
    with caplog.at_level(logging.INFO, logger="gpurules"):
        assert factory.resolve_device("auto") == Device("cuda", 0)
    assert "device='auto' uses cuda:0" in caplog.text
    assert str(factory.resolve_device("cuda")) == "cuda:0"


# -- NumPy 2.5 -------------------------------------------------------------------------------
def test_restore_row_stack_only_when_missing():
    removed = types.SimpleNamespace(vstack=np.vstack)  # NumPy >= 2.5
    assert numpy_compat.restore_row_stack(removed) is True
    assert removed.row_stack is np.vstack
    own = object()
    present = types.SimpleNamespace(vstack=np.vstack, row_stack=own)  # NumPy < 2.5
    assert numpy_compat.restore_row_stack(present) is False
    assert present.row_stack is own


def test_the_cuda_package_leaves_numpy_with_row_stack():
    import gpurules.backends.cuda  # noqa: F401 - its import applies the measure

    assert hasattr(np, "row_stack")
    np.testing.assert_array_equal(np.vstack([[1], [2]]), [[1], [2]])
