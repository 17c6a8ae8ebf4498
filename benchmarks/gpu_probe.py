"""What the GPU machine offers gpurules: versions, driver, compilers, device, bandwidth.

Prints one section per part (``== name``); a part that fails prints ``FAILED`` with the
error and the probe goes on, so the output is useful on a broken stack too (and on a
machine without a GPU, where the CUDA parts fail). Used by ``benchmarks/gpu_run.sh``
(``$OUT/env.txt``); run it by hand with ``python benchmarks/gpu_probe.py [--copy-mib N]``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
import platform
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's gpurules

MODULES = ("numpy", "scipy", "sklearn", "numba", "llvmlite", "numba_cuda", "cupy",
           "cuda.bindings", "cuda.core", "cuda.pathfinder", "pandas", "pytest", "arff")
DISTRIBUTIONS = ("mlrl-boomer", "mlrl-common", "mlrl-util", "nvidia-cuda-nvrtc",
                 "nvidia-cuda-nvrtc-cu12", "nvidia-nvvm", "cuda-toolkit")
ENV_VARS = ("CUDA_HOME", "CUDA_PATH", "NUMBA_CACHE_DIR", "NUMBA_ENABLE_CUDASIM",
            "PYTHONPATH", "CUDA_VISIBLE_DEVICES")


def section(name):
    """Decorator: run the function as the section ``name``; report an exception as FAILED."""
    def wrap(fn):
        def run(*args):
            print(f"\n== {name}", flush=True)
            start = time.perf_counter()
            try:
                fn(*args)
            except Exception as exc:  # noqa: BLE001 - reported, the probe goes on
                print(f"FAILED {name}: {type(exc).__name__}: {exc}")
                print("".join(traceback.format_exc(limit=-4)).rstrip())
            print(f"({time.perf_counter() - start:.1f} s)", flush=True)
        return run
    return wrap


@section("python and packages")
def versions():
    print(f"python {sys.version.split()[0]} {sys.executable} ({platform.platform()})")
    for name in MODULES:
        try:
            mod = importlib.import_module(name)
            print(f"{name:16s} {getattr(mod, '__version__', '?'):12s} "
                  f"{getattr(mod, '__file__', '')}")
        except Exception as exc:  # noqa: BLE001
            print(f"{name:16s} unavailable ({type(exc).__name__}: {exc})")
    for name in DISTRIBUTIONS:
        try:
            print(f"{name:24s} {importlib.metadata.version(name)} (installed)")
        except importlib.metadata.PackageNotFoundError:
            print(f"{name:24s} not installed")
    for name in ENV_VARS:
        print(f"{name}={os.environ.get(name, '')}")


@section("CuPy: driver, runtime, NVRTC, device")
def cupy_device():
    import cupy as cp

    rt = cp.cuda.runtime
    print(f"CUDA runtime {rt.runtimeGetVersion()}  NVRTC {cp.cuda.nvrtc.getVersion()}")
    print(f"driver {rt.driverGetVersion()}  devices {rt.getDeviceCount()}")
    props = rt.getDeviceProperties(0)
    attr = rt.deviceGetAttribute
    print(f"cuda:0 {props['name'].decode()}: compute capability {props['major']}."
          f"{props['minor']}, {attr(rt.cudaDevAttrMultiProcessorCount, 0)} SMs, "
          f"{props['totalGlobalMem'] / 2**30:.1f} GiB, L2 {props['l2CacheSize'] / 2**20:.0f} MiB, "
          f"opt-in shared memory per block "
          f"{attr(rt.cudaDevAttrMaxSharedMemoryPerBlockOptin, 0)} B, "
          f"clock {attr(rt.cudaDevAttrClockRate, 0) / 1e3:.0f} MHz")


@section("numba.cuda: NVVM, NVRTC, libdevice")
def numba_cuda():
    from gpurules.backends.cuda.numpy_compat import restore_row_stack

    restore_row_stack()
    from numba import cuda
    from numba.cuda import cuda_paths
    from numba.cuda.cudadrv import nvvm

    for key, value in cuda_paths.get_cuda_paths().items():
        print(f"{key:18s} {value}")
    print(f"NVVM {nvvm.NVVM().get_version()}")
    print(f"is_available {cuda.is_available()}")
    cuda.detect()


@section("gpurules: cuda_status (the smoke test of device='auto')")
def smoke():
    from gpurules.backends.cuda import sources
    from gpurules.backends.factory import cuda_status

    print(f"kernel sources: {sources.kernel_dir()}")
    start = time.perf_counter()
    usable, reason = cuda_status(0)
    print(f"cuda_status(0) = {usable}: {reason} ({time.perf_counter() - start:.1f} s)")
    if not usable:
        raise RuntimeError(reason)


@section("gpurules: CudaBackend(0)")
def backend():
    from gpurules.backends.cuda import CudaBackend

    start = time.perf_counter()
    b = CudaBackend(0)
    print(f"constructed in {time.perf_counter() - start:.1f} s: {b._sm_count} SMs, "
          f"opt-in shared memory {b._shared_limit} B")


@section("device-to-device copy bandwidth (CuPy, read + written bytes)")
def bandwidth(copy_mib):
    import cupy as cp

    from gpurules.backends.cuda.profiling import copy_bandwidth

    gbps = copy_bandwidth(cp, nbytes=copy_mib << 20, repeats=20)
    print(f"{gbps:.0f} GB/s (median of 20 copies of {copy_mib} MiB)")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--copy-mib", type=int, default=1024, help="buffer of the copy test")
    args = p.parse_args(argv)
    print(f"gpu_probe {time.strftime('%Y-%m-%d %H:%M:%S %Z')} on {platform.node()}")
    versions()
    cupy_device()
    numba_cuda()
    smoke()
    backend()
    bandwidth(args.copy_mib)


if __name__ == "__main__":
    main()
