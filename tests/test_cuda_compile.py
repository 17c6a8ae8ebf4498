"""Every CUDA source compiles for sm_90, on a machine without a GPU (DESIGN §4).

1. NVRTC from the pip packages ``nvidia-cuda-nvrtc-cu12`` + ``cuda-bindings`` (the compiler
   CuPy uses) compiles every ``kernels/*.cu`` to an sm_90 cubin with the backend's
   ``RawModule`` options plus the ones CuPy adds; a compile error fails the test.
2. ``numba.cuda.compile_ptx`` type-checks every Numba CUDA kernel of
   ``gpurules.backends.cuda.kernels`` with its explicit signature for cc 9.0. numba-cuda
   compiles the device functions a kernel calls for the *current* device, which needs a
   driver; the check therefore runs in a fresh interpreter (``python -m
   tests.test_cuda_compile``) that stands in a cc 9.0 device for that lookup, so neither
   the stand-in nor a simulator setting can leak into or from other test modules.
"""

import re
import subprocess
import sys
import types as pytypes
from functools import partial

import pytest

from gpurules.backends.cuda import sources
from tests.reference.cuda_support import ROOT, require, run_checks, run_isolated

CU_FILES = sorted((ROOT / "kernels").glob("*.cu"))
NVRTC_OPTIONS = sources.RAW_MODULE_OPTIONS + sources.CUPY_ADDED_OPTIONS + ("-arch=sm_90",)
CC = (9, 0)


def nvrtc_compile(source, name, options=NVRTC_OPTIONS):
    """Compile CUDA C++ ``source`` with NVRTC. Returns the cubin (bytes); raises
    RuntimeError with the compiler log if compilation fails."""
    from cuda.bindings import nvrtc

    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], [])
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"nvrtcCreateProgram({name}): {err}")
    try:
        opts = [o.encode() for o in options]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise RuntimeError(f"NVRTC could not compile {name} ({err}):\n{_log(nvrtc, prog)}")
        _, size = nvrtc.nvrtcGetCUBINSize(prog)
        cubin = b" " * size
        (err,) = nvrtc.nvrtcGetCUBIN(prog, cubin)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise RuntimeError(f"nvrtcGetCUBIN({name}): {err}")
        return cubin
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def _log(nvrtc, prog):
    _, size = nvrtc.nvrtcGetProgramLogSize(prog)
    log = b" " * size
    nvrtc.nvrtcGetProgramLog(prog, log)
    return log.decode(errors="replace")


def kernel_names(source):
    """The ``extern "C" __global__`` kernels a source defines."""
    return re.findall(r'extern\s+"C"\s+__global__\s+void\s+(\w+)', source)


# -- NVRTC ---------------------------------------------------------------------------------
def test_kernel_sources_are_found_and_packaged():
    assert CU_FILES, "no kernels/*.cu found"
    for path in CU_FILES:
        assert sources.kernel_source(path.name) == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", CU_FILES, ids=[p.name for p in CU_FILES])
def test_cu_file_compiles_to_sm90_cubin(path):
    require("cuda.bindings", "nvidia.cuda_nvrtc")
    source = path.read_text(encoding="utf-8")
    cubin = nvrtc_compile(source, path.name)
    assert cubin[:4] == b"\x7fELF"
    names = kernel_names(source)
    assert names, f"{path.name} defines no extern \"C\" __global__ kernel"
    for name in names:
        assert name.encode() in cubin, f"kernel {name} missing from the cubin"


def test_histogram_kernels_are_the_ones_the_backend_loads():
    source = sources.kernel_source(sources.HISTOGRAM_SOURCE)
    assert set(kernel_names(source)) == set(sources.HISTOGRAM_KERNELS)


def test_nvrtc_gate_rejects_a_syntax_error():
    require("cuda.bindings", "nvidia.cuda_nvrtc")
    broken = 'extern "C" __global__ void k(int* x) { x[0] = 1 }\n'
    with pytest.raises(RuntimeError, match="could not compile"):
        nvrtc_compile(broken, "broken.cu")


def test_importing_the_cuda_backend_touches_no_cuda():
    """``gpurules.backends.cuda`` imports neither CuPy nor numba.cuda (fresh interpreter)."""
    code = ("import sys, gpurules, gpurules.backends.cuda\n"
            "bad = [m for m in sys.modules if m.split('.')[0] == 'cupy' or "
            "m.startswith(('numba.cuda', 'numba_cuda'))]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


# -- Numba CUDA ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ptx_results():
    require("numba_cuda")
    return run_isolated("tests.test_cuda_compile", {"NUMBA_ENABLE_CUDASIM": None})


def test_every_numba_kernel_compiles_for_cc90(ptx_results):
    kernels = {k: v for k, v in ptx_results.items() if not k.startswith("_")}
    assert kernels, "no Numba CUDA kernel was compiled"
    failed = {k: v for k, v in kernels.items() if v is not None}
    assert not failed, "\n".join(f"{k}:\n{v}" for k, v in failed.items())


def test_every_numba_kernel_has_a_signature(ptx_results):
    assert ptx_results["_signatures_cover_kernels"] is None, \
        ptx_results["_signatures_cover_kernels"]


def test_compile_ptx_gate_rejects_a_type_error(ptx_results):
    assert ptx_results["_gate_rejects_type_error"] is None, \
        ptx_results["_gate_rejects_type_error"]


def _compile_kernel(cuda, kernel, signature):
    assert signature is not None, "no entry in kernels.SIGNATURES"
    ptx, return_type = cuda.compile_ptx(kernel.py_func, signature, cc=CC)
    assert ".target sm_90" in ptx and ".entry" in ptx
    assert str(return_type) == "none", f"a kernel returns {return_type}"


def _signatures_cover_kernels(kernels):
    assert set(kernels.KERNELS) == set(kernels.SIGNATURES)


def _gate_rejects_type_error(cuda, kernel_signature):
    def bad(out):
        out[0] = "not a number"

    try:
        cuda.compile_ptx(bad, kernel_signature, cc=CC)
    except Exception:  # a numba TypingError
        return
    raise AssertionError("compile_ptx accepted an ill-typed kernel")


def main():
    import numba.cuda.dispatcher as dispatcher

    # numba-cuda compiles called device functions for the current device's compute
    # capability (a driver call); stand in the cc of the PTX target instead
    dispatcher.get_current_device = lambda: pytypes.SimpleNamespace(compute_capability=CC)
    from numba import cuda, types

    from gpurules.backends.cuda import kernels

    checks = {name: partial(_compile_kernel, cuda, kernel, kernels.SIGNATURES.get(name))
              for name, kernel in kernels.KERNELS.items()}
    checks["_signatures_cover_kernels"] = partial(_signatures_cover_kernels, kernels)
    checks["_gate_rejects_type_error"] = partial(_gate_rejects_type_error, cuda,
                                                 (types.float64[::1],))
    run_checks(checks)


if __name__ == "__main__":
    main()
