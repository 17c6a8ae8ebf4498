"""The smoke test behind ``device="auto"`` and ``device="cuda"``: can a fit run on cuda:N?

It checks, in this order, every part a CUDA fit needs and stops at the first that fails:

1. ``CuPy``: ``import cupy`` works (the CUDA runtime libraries load);
2. ``CUDA device``: the runtime sees device N;
3. ``compute capability``: device N's is at least ``sources.MIN_COMPUTE_CAPABILITY``;
4. ``numba.cuda``: it imports, ``is_available()`` and sees device N;
5. ``Numba CUDA kernel``: a tiny kernel compiles (NVVM), launches and computes the right
   numbers on device N;
6. ``CuPy RawModule``: ``kernels/histogram.cu`` compiles (NVRTC) and its kernels load.

:func:`smoke_test` returns ``(usable, reason)``; a failure's reason starts with the part's
name. ``gpurules.backends.factory.cuda_status`` runs it once per process and device index.
Nothing here is imported or run when gpurules is imported.
"""

import importlib

import numpy as np

from gpurules.backends.cuda import launches, sources
from gpurules.backends.cuda.numpy_compat import restore_row_stack

CUDA_EXTRAS_HINT = "install gpurules[cuda] (CUDA 12) or gpurules[cuda13] (CUDA 13)"


class NotReady(Exception):
    """A part of the smoke test failed; the message says why (without the part's name)."""


def _import(name):
    """``importlib.import_module(name)``; any failure (ImportError, a CUDA library that does
    not load) becomes NotReady."""
    try:
        return importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001 - reported as the part's failure
        raise NotReady(f"{name} is not importable ({_describe(exc)}); "
                       f"{CUDA_EXTRAS_HINT}") from exc


def _describe(exc):
    """``NotReady`` messages as they are, other exceptions with their type."""
    return str(exc) if isinstance(exc, NotReady) else f"{type(exc).__name__}: {exc}"


def check_cupy(index, state):
    state["cp"] = _import("cupy")


def check_device(index, state):
    count = state["cp"].cuda.runtime.getDeviceCount()
    if count == 0:
        raise NotReady("no CUDA device is visible")
    if index >= count:
        raise NotReady(f"cuda:{index} requested but only {count} device(s) are visible")


def check_capability(index, state):
    cc = str(state["cp"].cuda.Device(index).compute_capability)  # e.g. "90"
    state["cc"] = (int(cc[:-1]), int(cc[-1]))
    if state["cc"] < sources.MIN_COMPUTE_CAPABILITY:
        raise NotReady("cuda:{} has compute capability {}.{}; gpurules builds for {}.{} and "
                       "newer".format(index, *state["cc"], *sources.MIN_COMPUTE_CAPABILITY))


def check_numba_cuda(index, state):
    restore_row_stack()  # before numba.cuda's first compile (numpy_compat)
    cuda = state["nb"] = _import("numba.cuda")
    if not cuda.is_available():
        raise NotReady("numba.cuda.is_available() is False (Numba finds no CUDA driver or "
                       "device, or not libNVVM: set CUDA_HOME or install numba-cuda[cu12]/"
                       "[cu13])")
    if index >= len(cuda.gpus):
        raise NotReady(f"numba.cuda sees {len(cuda.gpus)} device(s), not cuda:{index}")


def check_numba_kernel(index, state):
    cuda = state["nb"]
    with cuda.gpus[index]:  # compiled (at the launch) and run on device ``index``
        @cuda.jit
        def add_index(out):
            i = cuda.grid(1)
            if i < out.shape[0]:
                out[i] += i

        out = cuda.to_device(np.ones(100))
        with launches.small_grids_quiet():
            add_index[2, 64](out)
        got = out.copy_to_host()
    want = 1.0 + np.arange(100)
    if not np.array_equal(got, want):
        raise NotReady(f"a test kernel computed wrong numbers: {got[:4]}... instead of "
                       f"{want[:4]}...")


def check_raw_module(index, state):
    cp = state["cp"]
    with cp.cuda.Device(index):
        module = cp.RawModule(code=sources.kernel_source(sources.HISTOGRAM_SOURCE),
                              options=sources.RAW_MODULE_OPTIONS)
        for name in sources.HISTOGRAM_KERNELS:
            module.get_function(name)  # compiles with NVRTC and loads the cubin


PARTS = (("CuPy", check_cupy), ("CUDA device", check_device),
         ("compute capability", check_capability), ("numba.cuda", check_numba_cuda),
         ("Numba CUDA kernel", check_numba_kernel), ("CuPy RawModule", check_raw_module))


def smoke_test(index=0):
    """Run the parts above for CUDA device ``index``. Returns ``(True, "cuda:N is usable
    (...)")`` or ``(False, "<part> failed: <why>")`` for the first part that fails."""
    state = {}
    for part, check in PARTS:
        try:
            check(index, state)
        except Exception as exc:  # noqa: BLE001 - any failure makes the device unusable
            return False, f"{part} failed: {_describe(exc)}"
    return True, "cuda:{} is usable (compute capability {}.{}; CuPy, Numba CUDA and the " \
                 "kernels checked)".format(index, *state["cc"])
