"""Every CUDA source compiles for sm_90, on a machine without a GPU (DESIGN §4).

1. NVRTC from the pip packages ``cuda-bindings`` + ``nvidia-cuda-nvrtc-cu12`` (CUDA 12) or
   ``nvidia-cuda-nvrtc`` 13.x (CUDA 13; the compiler CuPy uses) compiles every
   ``kernels/*.cu`` to an sm_90 cubin and one for the oldest compute capability we build for
   (``sources.MIN_COMPUTE_CAPABILITY``) with the backend's ``RawModule`` options plus the
   ones CuPy adds; a compile error fails the test.
2. ``numba.cuda.compile_ptx`` type-checks every Numba CUDA kernel of
   ``gpurules.backends.cuda.kernels`` with its explicit signature for cc 9.0. numba-cuda
   compiles the device functions a kernel calls for the *current* device, which needs a
   driver; the check therefore runs in a fresh interpreter (``python -m
   tests.test_cuda_compile``) that stands in a cc 9.0 device for that lookup, so neither
   the stand-in nor a simulator setting can leak into or from other test modules.
"""

import os
import re
import subprocess
import sys
import types as pytypes
from functools import partial
from pathlib import Path

import pytest

from gpurules.backends.cuda import sources
from tests.reference.cuda_support import (
    NVRTC, ROOT, assert_rounds_like_the_host, nvrtc_library, require, run_checks, run_isolated)

CU_FILES = sorted((ROOT / "kernels").glob("*.cu"))
NVRTC_OPTIONS = sources.RAW_MODULE_OPTIONS + sources.CUPY_ADDED_OPTIONS + ("-arch=sm_90",)
MIN_ARCH = "sm_{}{}".format(*sources.MIN_COMPUTE_CAPABILITY)
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


@pytest.mark.parametrize("arch", ["sm_90", MIN_ARCH])
@pytest.mark.parametrize("path", CU_FILES, ids=[p.name for p in CU_FILES])
def test_cu_file_compiles_to_a_cubin(path, arch):
    require("cuda.bindings", NVRTC)
    source = path.read_text(encoding="utf-8")
    options = NVRTC_OPTIONS[:-1] + (f"-arch={arch}",)
    cubin = nvrtc_compile(source, path.name, options)
    assert cubin[:4] == b"\x7fELF"
    names = kernel_names(source)
    assert names, f"{path.name} defines no extern \"C\" __global__ kernel"
    for name in names:
        assert name.encode() in cubin, f"kernel {name} missing from the cubin"


# gpurules.kernels blocked as if the checkout were not installed, then the sources are read
_UNINSTALLED_KERNELS = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "gpurules.kernels":
            raise ModuleNotFoundError("No module named 'gpurules.kernels'", name=name)
sys.meta_path.insert(0, Block())
import gpurules
from gpurules.backends.cuda import sources
assert sources.kernel_dir() == sources.CHECKOUT_KERNELS, sources.kernel_dir()
print(gpurules.__file__)
print(len(sources.kernel_source(sources.HISTOGRAM_SOURCE)))
"""


def test_kernel_sources_are_found_without_an_install(tmp_path):
    """``PYTHONPATH=<checkout>`` with no ``gpurules.kernels`` package (the GPU machine's
    way): the sources come from ``<checkout>/kernels`` (fresh interpreter)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", _UNINSTALLED_KERNELS], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    module_file, size = proc.stdout.split()
    assert Path(module_file).is_relative_to(ROOT / "gpurules")
    assert int(size) == len((ROOT / "kernels" / sources.HISTOGRAM_SOURCE).read_text("utf-8"))


def test_kernel_dir_says_when_the_sources_are_missing(monkeypatch, tmp_path):
    def no_package(name):
        raise ModuleNotFoundError(f"No module named {name!r}")

    monkeypatch.setattr(sources.resources, "files", no_package)
    monkeypatch.setattr(sources, "CHECKOUT_KERNELS", tmp_path)
    with pytest.raises(FileNotFoundError, match="gpurules.kernels is not installed"):
        sources.kernel_source(sources.HISTOGRAM_SOURCE)


def test_histogram_kernels_are_the_ones_the_backend_loads():
    source = sources.kernel_source(sources.HISTOGRAM_SOURCE)
    assert set(kernel_names(source)) == set(sources.HISTOGRAM_KERNELS)


def test_nvrtc_gate_rejects_a_syntax_error():
    require("cuda.bindings", NVRTC)
    broken = 'extern "C" __global__ void k(int* x) { x[0] = 1 }\n'
    with pytest.raises(RuntimeError, match="could not compile"):
        nvrtc_compile(broken, "broken.cu")


@pytest.mark.parametrize("layout", ["cuda_nvrtc/lib", "cu13/lib"])
def test_nvrtc_library_found_in_the_cuda12_and_cuda13_layouts(tmp_path, layout):
    (tmp_path / layout).mkdir(parents=True)
    (tmp_path / layout / "libnvrtc-builtins.so.13.5").touch()
    assert nvrtc_library([tmp_path]) is None
    (tmp_path / layout / "libnvrtc.so.13").touch()
    assert nvrtc_library([tmp_path]) == tmp_path / layout / "libnvrtc.so.13"


def test_importing_the_cuda_backend_touches_no_cuda():
    """``gpurules.backends.cuda`` (and its smoke test module) import neither CuPy nor
    numba.cuda (fresh interpreter)."""
    code = ("import sys, gpurules, gpurules.backends.cuda, gpurules.backends.cuda.readiness\n"
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


def test_every_numba_kernel_is_cached_in_the_package_cache(ptx_results):
    assert ptx_results["_kernels_use_the_package_cache"] is None, \
        ptx_results["_kernels_use_the_package_cache"]


def test_label_head_candidates_within_their_register_budget(ptx_results):
    assert ptx_results["_candidates_within_their_register_budget"] is None, \
        ptx_results["_candidates_within_their_register_budget"]


def test_a_kernel_from_a_string_is_left_uncached(ptx_results):
    assert ptx_results["_kernel_from_a_string_is_left_uncached"] is None, \
        ptx_results["_kernel_from_a_string_is_left_uncached"]


def test_compile_ptx_gate_rejects_a_type_error(ptx_results):
    assert ptx_results["_gate_rejects_type_error"] is None, \
        ptx_results["_gate_rejects_type_error"]


# PTX of each kernel compiled by :func:`_compile_kernel` with its ``kernels.SIGNATURES``
# entry, by name: the register check reads it instead of compiling the largest kernels again
# (10 CPU-s of the check's 58 on the 2-core box of session 62)
_PTX = {}


def _compile_kernel(cuda, kernel, signature, name=None):
    assert signature is not None, "no entry in kernels.SIGNATURES"
    ptx, return_type = cuda.compile_ptx(kernel.py_func, signature, cc=CC)
    if name is not None:
        _PTX[name] = ptx
    assert ".target sm_90" in ptx and ".entry" in ptx
    assert_rounds_like_the_host(kernel, ptx)
    assert str(return_type) == "none", f"a kernel returns {return_type}"
    _direct_parameters_match_the_ptx(ptx, signature)


def _entry_parameter_sizes(ptx):
    """Bytes of each parameter of the PTX's ``.entry``, in order."""
    entry = re.search(r"\.entry\s+\S+\((.*?)\)", ptx, re.S).group(1)
    sizes = []
    for bits, count in re.findall(r"\.param\s+(?:\.align\s+\d+\s+)?\.[a-z](\d+)\s+[^,\s\[]+"
                                  r"(?:\[(\d+)\])?", entry):
        sizes.append(int(bits) // 8 * int(count or 1))
    return sizes


def _direct_parameters_match_the_ptx(ptx, signature):
    """``launches.DirectLaunches`` packs one C value per marshalled argument
    (``launches.param_holders``) and ``cuLaunchKernel`` copies each to one parameter: their
    sizes must be the kernel's PTX parameters', in order. An array marshals as numba-cuda
    marshals it (meminfo, parent, size, itemsize, pointer, shape, strides: Python ints),
    a scalar by numba-cuda's own ``_Kernel._prepare_args``; a pattern with a bool is left
    to cuda.core (no holders)."""
    import ctypes

    from numba.cuda import types
    from numba.cuda.dispatcher import _Kernel

    from gpurules.backends.cuda import launches

    kernelargs, stand_in = [], pytypes.SimpleNamespace(extensions=[])
    for ty in signature:
        if isinstance(ty, types.Array):  # (the values do not matter here, their kind does)
            kernelargs += [0, 0, 3, 8, 0x7F0000000000] + [3] * ty.ndim + [8] * ty.ndim
        else:
            value = False if ty == types.boolean else 0.0 if "float" in str(ty) else 0
            _Kernel._prepare_args(stand_in, ty, value, 0, [], kernelargs)
    holders = launches.param_holders(kernelargs)
    if holders is not None:
        assert [ctypes.sizeof(h) for h in holders] == _entry_parameter_sizes(ptx)


def _signatures_cover_kernels(kernels):
    assert set(kernels.KERNELS) == set(kernels.SIGNATURES)


def _kernels_use_the_package_cache():
    """Every Numba CUDA kernel of gpurules keeps its compiled code in the package's cache
    directory, its index locked (``jit.cache.cache_cuda_kernel``); a save and a load of that
    kind of cache file round-trip."""
    import tempfile

    from numba.cuda.core import caching as cuda_caching

    from gpurules.backends.cuda import class_histograms, kernels
    from gpurules.jit import cache

    dispatchers = {**kernels.KERNELS, **class_histograms.KERNELS}
    assert len(dispatchers) > 10
    for name, dispatcher in dispatchers.items():
        kept = dispatcher._cache
        assert type(kept).__name__ == "CudaPackageCache", name
        assert kept.cache_path.startswith(cache._package_directory()), name
        assert isinstance(kept._cache_file, cuda_caching.IndexDataCacheFile), name
        assert type(kept._cache_file).__name__ == "LockedCacheFile", name
    with tempfile.TemporaryDirectory() as directory:
        file = type(kept._cache_file)(cache_path=directory, filename_base="f",
                                      source_stamp=1.0)
        file.save(("key",), {"cubin": b"\x01\x02"})
        assert file.load(("key",)) == {"cubin": b"\x01\x02"}
        assert file.load(("other",)) is None


def _kernel_from_a_string_is_left_uncached(cuda):
    """``device_math.kernel`` on a function made by ``exec`` (``gpu_diagnose.py``'s kernels,
    2026-11-30 on the H200: numba-cuda's cache raised "no locator available for file
    '<string>'"): the kernel keeps numba-cuda's own (no) cache and compiles."""
    from numba import types

    from gpurules.backends.cuda import device_math

    space = {}
    exec("def from_a_string(out):\n    out[0] = out[0] * 2.0 + 1.0\n", space)
    made = device_math.kernel(space["from_a_string"])
    assert type(made._cache).__name__ != "CudaPackageCache"
    cuda.compile_ptx(made.py_func, (types.float64[::1],), cc=CC)


# registers a thread that ptxas may give the candidates kernels of the label heads (with
# 128 threads a block, 96 registers leave 5 blocks an SM on sm_90, 128 leave 4; the kernel
# of every head kind had 190, 12.5 % occupancy on the H200 of 2026-11-30; 170 leave 3);
# a kernel compiled with a cap (``histogram_search.MAX_REGISTERS``) may spill nothing under it
CANDIDATE_REGISTERS = {"complete_candidates": 96, "label_candidates": 128,
                       "fused_complete_candidates": 128, "fused_label_candidates": 170}


def _ptxas():
    import nvidia.cuda_nvcc

    return Path(nvidia.cuda_nvcc.__path__[0]) / "bin" / "ptxas"


def _candidates_within_their_register_budget(cuda, kernels):
    """ptxas (the CUDA wheels' own) allocates at most ``CANDIDATE_REGISTERS`` registers a
    thread to the candidates kernels of the label heads, for sm_90, with the cap each is
    compiled with (``max_registers``), and spills nothing."""
    import tempfile

    found, spilled = {}, {}
    with tempfile.TemporaryDirectory() as directory:
        for name, budget in CANDIDATE_REGISTERS.items():
            dispatcher = kernels.KERNELS[name]
            ptx = _PTX.get(name) or cuda.compile_ptx(dispatcher.py_func,
                                                     kernels.SIGNATURES[name], cc=CC)[0]
            path = Path(directory) / f"{name}.ptx"
            path.write_text(ptx)
            cap = dispatcher.targetoptions.get("max_registers")
            run = subprocess.run([str(_ptxas()), "-arch=sm_90", "-v", str(path), "-o",
                                  os.devnull] + ([f"-maxrregcount={cap}"] if cap else []),
                                 capture_output=True, text=True, check=True)
            found[name] = int(re.search(r"Used (\d+) registers", run.stderr).group(1))
            spills = re.search(r"(\d+) bytes spill stores", run.stderr)
            if spills and int(spills.group(1)):
                spilled[name] = int(spills.group(1))
    over = {k: v for k, v in found.items() if v > CANDIDATE_REGISTERS[k]}
    assert not over, f"registers a thread over budget: {over} (budget {CANDIDATE_REGISTERS})"
    assert not spilled, f"bytes spilled: {spilled}"


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

    checks = {name: partial(_compile_kernel, cuda, kernel, kernels.SIGNATURES.get(name), name)
              for name, kernel in kernels.KERNELS.items()}
    # BoomerRegressor's float64 targets specialise the statistics kernels that read Y
    checks.update({f"{name}[float64 targets]": partial(_compile_kernel, cuda,
                                                       kernels.KERNELS[name], signature)
                   for name, signature in kernels.REGRESSION_SIGNATURES.items()})
    checks["_signatures_cover_kernels"] = partial(_signatures_cover_kernels, kernels)
    checks["_kernels_use_the_package_cache"] = _kernels_use_the_package_cache
    checks["_candidates_within_their_register_budget"] = partial(
        _candidates_within_their_register_budget, cuda, kernels)
    checks["_kernel_from_a_string_is_left_uncached"] = partial(
        _kernel_from_a_string_is_left_uncached, cuda)
    checks["_gate_rejects_type_error"] = partial(_gate_rejects_type_error, cuda,
                                                 (types.float64[::1],))
    run_checks(checks)


if __name__ == "__main__":
    main()
