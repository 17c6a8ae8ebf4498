"""What the first GPU run (docs/gpu-validation.md, 2026-11-26) left open, measured in one go.

1. ``== fma``: the NVVM of this machine, whether gpurules' ``-fma=0`` wrapper is installed and
   what options reach NVVM, and per Numba CUDA kernel of gpurules the PTX's ``fma.rn.f64``,
   ``mul.rn.f64`` and ``mul.f64`` counts (compiled here, for this device) and the SASS's
   ``DFMA`` and ``DMUL`` counts (``inspect_sass``, needs ``nvdisasm``); "outside libdevice"
   leaves out libdevice's own functions (pow), not its inlined exp and log. Non-decomposable
   qualities differed from the CPU's in the last bits on the H200: an FMA that NVVM or
   ``ptxas`` formed would show here.
2. ``== ieee``: ``a * b + c``, ``a / b`` and ``int64 -> float64`` for 2**16 random operands in
   a kernel compiled from gpurules' code path (its name holds ``gpurules``, so the wrapper
   applies) against NumPy's: the number of results that differ, built with numba-cuda's
   default (LTO, which nvJitLink contracts) and as the backend builds its kernels (no LTO).
3. ``== solve``: the complete head's solve and gain (``complete_head.complete_head``) on
   4,096 random positive definite systems, one per thread, against the same Python
   function on the host: how many differ (both builds, as in 2).
4. ``== launch``: the host time of one kernel launch with 16 array arguments (median over
   5 x 2,000 launches, each batch ending in one synchronisation): a Numba kernel given fresh
   ``as_cuda_array`` views (the backend before session 15), the same views reused (after),
   CuPy arrays passed directly, gpurules' prepared and direct launches (``launches.py``;
   a path that raises is reported and the others still run), a CuPy
   ``RawKernel`` with the same 16 pointers, and replayed CUDA graphs of 16 launches
   captured from the RawKernel, the prepared and the direct path (what a block of
   ``CudaBackend(graphs=True)`` captures); each path's result is checked. This decides
   between the launch paths.
5. ``== histograms``: the histogram kernels of wide features at n = 1e6 (7 features of
   168,000 bins, 20 labels), each ``wide_histograms`` setting on all and on half of the
   examples: median ms, GB/s and % of the copy bandwidth, the histograms checked equal
   (``wide_histograms.py``). This decides which kernel builds wide features.
6. ``== binning``: equal-width binning of 1e6 x 100 continuous values on every host core
   and on the device (``CudaBackend(device_binning=True)``; X's upload included), median
   ms, the bins checked equal (``device_binning.py``). This decides whether CUDA fits bin
   on the device by default.

7. ``== profile`` (only when asked for): cProfile of a 20-rule ``device='cuda'`` fit at
   n = 1e5 (``--n``, ``--rules``, ``--system``; ``--dataset yeast --system cuda-nd``: a
   data set), the host's share by function (``$OUT/profile.txt``).
8. ``== fit`` (only when asked for): the same fit after a 5-rule one, nothing
   else: what ``gpu_run.sh``'s ``kernels`` step runs under ``ncu`` for the device time of
   each kernel (``$OUT/kernels.txt``).

Every part prints FAILED with its error and the script goes on. Run by
``benchmarks/gpu_run.sh`` (``$OUT/diagnose.txt``, ``$OUT/profile.txt``) or by hand:
``python benchmarks/gpu_diagnose.py [--parts fma ieee launch profile]``.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's gpurules

from benchmarks.gpu_probe import section as part  # noqa: E402 - "== name", FAILED if it raises

ARRAYS = 16  # array arguments of the launch benchmark (a search launch has ~25)
LAUNCHES = 2000


FMA, MUL_RN, MUL, ADD = r"fma\.rn\.f64", r"mul\.rn\.f64", r"mul\.f64", r"add\.f64"
DFMA, DMUL = r"\bDFMA\b", r"\bDMUL\b"


def _count(pattern, text):
    return len(re.findall(pattern, text))


def _fma_outside_libdevice(ptx):
    """``fma.rn.f64`` in the PTX's functions other than libdevice's (``__internal_*``,
    ``__nv_*``: exp, log, pow use FMA by design)."""
    count, own = 0, True
    for line in ptx.splitlines():
        header = re.match(r"\.(?:visible |weak )?(?:\.)?(?:func|entry)\b.*?(\w+)\($", line)
        if header:
            own = not header.group(1).startswith(("__internal", "__nv_"))
        elif own and re.search(FMA, line):
            count += 1
    return count


@part("fma")
def fma():
    from numba import cuda
    from numba.cuda.cudadrv import nvvm

    from gpurules.backends.cuda import kernels

    try:
        cc, device = cuda.get_current_device().compute_capability, True
    except Exception as exc:  # noqa: BLE001 - no GPU here: PTX for cc 9.0 only
        import numba.cuda.dispatcher as dispatcher

        cc, device = (9, 0), False
        # numba-cuda compiles called device functions for the current device: stand in cc
        dispatcher.get_current_device = lambda: SimpleNamespace(compute_capability=cc)
        print(f"no device ({type(exc).__name__}): PTX for cc 9.0, no SASS")
    print(f"device cc {cc}; NVVM {nvvm.NVVM().get_version()}; wrapper installed: "
          f"{getattr(nvvm.compile_ir, 'gpurules_without_fma', False)}")
    seen = []
    wrapper = nvvm.compile_ir
    (cell,) = wrapper.__closure__
    original = cell.cell_contents

    def record(llvmir, **options):
        seen.append(dict(options))
        return original(llvmir, **options)

    cell.cell_contents = record
    try:
        for name, kernel in kernels.KERNELS.items():
            sig = kernels.SIGNATURES[name]
            ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=cc)
            line = (f"{name:24s} lto {kernel.targetoptions.get('lto')} "
                    f"options {seen[-1] if seen else '?'}; PTX fma.rn.f64 "
                    f"{_count(FMA, ptx)} ({_fma_outside_libdevice(ptx)} outside libdevice) "
                    f"mul.rn.f64 {_count(MUL_RN, ptx)} mul.f64 "
                    f"{_count(MUL, ptx)} add.f64 {_count(ADD, ptx)}")
            try:
                if not device:
                    raise RuntimeError("no device")
                kernel.compile(sig)
                sass = kernel.inspect_sass(sig)
                line += f"; SASS DFMA {_count(DFMA, sass)} DMUL {_count(DMUL, sass)}"
            except Exception as exc:  # noqa: BLE001 - nvdisasm may be missing
                line += f"; SASS unavailable ({type(exc).__name__}: {str(exc)[:80]})"
            print(line, flush=True)
    finally:
        cell.cell_contents = original


def _kernel_builds(device_math):
    """(label, build) of a diagnostic kernel, side by side: numba-cuda's default (LTO
    whenever nvJitLink is installed: nvJitLink's code generation contracts whatever NVVM was
    told) and gpurules' own (``device_math.kernel``: no LTO)."""
    return (("cuda.jit default (LTO when nvJitLink is there)", device_math.cuda.jit),
            ("device_math.kernel (no LTO, the backend's)", device_math.kernel))


@part("ieee")
def ieee():
    from numba import cuda

    from gpurules.backends.cuda import device_math  # installs the wrapper

    scope = {"cuda": cuda}  # globals, as the simulator needs them
    exec("def gpurules_ieee_ops(a, b, c, i, out):\n"
         "    k = cuda.grid(1)\n"
         "    if k < a.size:\n"
         "        out[0, k] = a[k] * b[k] + c[k]\n"
         "        out[1, k] = a[k] / b[k]\n"
         "        out[2, k] = float(i[k]) * a[k] - c[k] * b[k]\n", scope)

    rng = np.random.default_rng(0)
    n = 1 << 16
    a, b, c = (rng.normal(size=n) * 10.0 ** rng.integers(-3, 4, n) for _ in range(3))
    i = rng.integers(-2 ** 62, 2 ** 62, n)
    want = (a * b + c, a / b, i.astype(np.float64) * a - c * b)
    for label, build in _kernel_builds(device_math):
        built = build(scope["gpurules_ieee_ops"])
        out = cuda.device_array((3, n), np.float64)
        built[(n + 255) // 256, 256](a, b, c, i, out)
        got = out.copy_to_host()
        print(f"-- {label}")
        for name, g, w in zip(("a*b+c", "a/b", "float(i)*a-c*b"), got, want):
            print(f"{name:16s} differ from NumPy in {int((g != w).sum())} of {n}")
        try:
            sass = built.inspect_sass(built.signatures[0])
            print(f"its SASS: DFMA {_count(DFMA, sass)} (expect 0 without LTO)")
        except Exception as exc:  # noqa: BLE001 - nvdisasm may be missing
            print(f"its SASS unavailable ({type(exc).__name__}: {str(exc)[:80]})")


@part("solve")
def solve():
    """``complete_head.complete_head`` (the complete head's regularised solve and gain, as
    the non-decomposable search scores a candidate) on 4,096 random systems of 6 outputs,
    one per thread, against the same Python function on the host: the non-decomposable
    qualities differed from the CPU's in the last bits on the H200 while the simulator
    matched; this isolates the solve (kernel name holds 'gpurules': -fma=0)."""
    from numba import cuda

    from gpurules.backends.cuda import device_math  # noqa: F401 - installs the wrapper
    from gpurules.objectives import complete_head as ch

    python_head = getattr(ch.complete_head, "py_func", ch.complete_head)  # register_jitable
    head = cuda.jit(device=True)(python_head)

    scope = {"cuda": cuda, "head": head}  # globals, as the simulator needs them
    exec("def gpurules_complete_heads(g, h, m, l1, l2, a, ipiv, scores, gain):\n"
         "    t = cuda.grid(1)\n"
         "    if t < g.shape[0]:\n"
         "        gain[t] = head(g[t], h[t], m, l1, l2, a[t], ipiv[t], scores[t])[0]\n",
         scope)

    rng = np.random.default_rng(3)
    count, m = 4096, 6
    W = m * (m + 1) // 2
    g = rng.normal(size=(count, m)) * 100.0
    h = np.zeros((count, W))
    for t in range(count):  # packed rows of B B^T + diagonal: positive definite
        b = rng.normal(size=(m, m))
        full = b @ b.T + np.diag(rng.uniform(0.1, 5.0, m))
        h[t] = full[np.tril_indices(m)] * 50.0
    l1, l2 = 0.0, 1.0
    a, ipiv = np.zeros((count, m * m)), np.zeros((count, m), np.int64)
    scores, gain = np.zeros((count, m)), np.zeros(count)
    want_gain, want_scores = np.zeros(count), np.zeros((count, m))
    host_a, host_ipiv = np.zeros(m * m), np.zeros(m, np.int64)
    for t in range(count):
        want_gain[t] = python_head(g[t], h[t], m, l1, l2, host_a, host_ipiv,
                                   want_scores[t])[0]
    for label, build in _kernel_builds(device_math):
        built = build(scope["gpurules_complete_heads"])
        built[(count + 127) // 128, 128](g, h, m, l1, l2, a, ipiv, scores, gain)
        bad = np.flatnonzero((gain != want_gain) | (scores != want_scores).any(axis=1))
        print(f"-- {label}: systems whose gain or scores differ from the host's: "
              f"{bad.size} of {count}")
        for t in bad[:3]:
            print(f"  system {t}: gain {gain[t]!r} vs {want_gain[t]!r}; scores differ at "
                  f"{np.flatnonzero(scores[t] != want_scores[t]).tolist()}")


def _median_launch_us(launch, sync, repeats=5):
    """Median over ``repeats`` of the host time per launch (us) of LAUNCHES launches."""
    times = []
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        for _ in range(LAUNCHES):
            launch()
        sync()
        times.append((time.perf_counter() - start) / LAUNCHES * 1e6)
    return float(np.median(times))


@part("launch")
def launch():
    """Each path runs ``a0[k] += a15[k]`` (a15 = 1) for the 32 threads of one block: after
    its launches a0[:32] must equal their number, which checks that the path launched the
    kernel with the right arguments."""
    import cupy as cp
    from numba import cuda

    from gpurules.backends.cuda.launches import (DirectLaunches, PreparedLaunches,
                                                 check_internals)

    names = ", ".join(f"a{j}" for j in range(ARRAYS))
    scope = {"cuda": cuda}
    exec(f"def touch({names}, n):\n    k = cuda.grid(1)\n    if k < n:\n"
         f"        a0[k] += a{ARRAYS - 1}[k]\n", scope)
    kernel = cuda.jit(scope["touch"])
    arrays = [cp.zeros(1024, np.int64) for _ in range(ARRAYS - 1)] + [cp.ones(1024, np.int64)]
    stream = cp.cuda.Stream(non_blocking=True)
    nb_stream = cuda.external_stream(stream.ptr)
    views = [cuda.as_cuda_array(a, sync=False) for a in arrays]
    config = (1, 32, nb_stream)
    kernel[config](*views, 1024)  # compile
    check_internals()
    prepared, direct = PreparedLaunches(), DirectLaunches()
    paths = {
        "numba, fresh as_cuda_array views": lambda: kernel[config](
            *(cuda.as_cuda_array(a, sync=False) for a in arrays), 1024),
        "numba, views reused": lambda: kernel[config](*views, 1024),
        "numba, CuPy arrays": lambda: kernel[config](*arrays, 1024),
        "gpurules prepared launch": lambda: prepared.launch(kernel, config, (*views, 1024)),
        "gpurules direct launch": lambda: direct.launch(kernel, config, (*views, 1024)),
    }
    params = ", ".join(f"long long* a{j}" for j in range(ARRAYS))
    raw = cp.RawKernel(f'extern "C" __global__ void touch({params}, long long n) {{\n'
                       f'  long long k = blockIdx.x * blockDim.x + threadIdx.x;\n'
                       f'  if (k < n) a0[k] += a{ARRAYS - 1}[k];\n}}', "touch")
    n64 = np.int64(1024)
    paths["CuPy RawKernel"] = lambda: raw((1,), (32,), (*arrays, n64))
    with stream:
        for name, fn in paths.items():
            arrays[0][...] = 0
            try:
                us = _median_launch_us(fn, stream.synchronize)
            except Exception as exc:  # noqa: BLE001 - one path failing leaves the others
                print(f"{name:36s} FAILED: {type(exc).__name__}: {exc}", flush=True)
                continue
            done = int(arrays[0][:32].min()), int(arrays[0][:32].max())
            ok = "ok" if done == (5 * LAUNCHES,) * 2 else f"WRONG: a0[:32] in {done}"
            print(f"{name:36s} {us:8.1f} us per launch ({ARRAYS} arrays + 1 scalar; median "
                  f"of 5 x {LAUNCHES}); result {ok}", flush=True)
        print(f"prepared launches that skipped numba-cuda's marshalling: {prepared.prepared}; "
              f"direct launches (cuLaunchKernel): {direct.direct}")
        # a refinement block replayed from a graph (CudaBackend(graphs=True)) captures
        # Numba launches through the prepared or direct paths with CuPy's
        for name in ("CuPy RawKernel", "gpurules prepared launch", "gpurules direct launch"):
            arrays[0][...] = 0
            label = f"CUDA graph of 16 {name.split()[-2]} launches"
            try:
                graph_us, replays = _graph_launch_us(stream, paths[name])
            except Exception as exc:  # noqa: BLE001 - one path failing leaves the others
                print(f"{label:36s} FAILED: {type(exc).__name__}: {exc}", flush=True)
                continue
            done = int(arrays[0][:32].min())
            print(f"{label:36s} {graph_us:8.1f} us per replay (CuPy stream capture); result "
                  f"{'ok' if done == 16 * replays else f'WRONG: {done} != {16 * replays}'}",
                  flush=True)


def _graph_launch_us(stream, launch_one, per_graph=16):
    """(host time in us of replaying a captured graph of ``per_graph`` launches, the number
    of replays)."""
    stream.begin_capture()
    for _ in range(per_graph):
        launch_one()
    graph = stream.end_capture()
    graph.upload(stream)
    times, replays = [], 0
    for _ in range(5):
        stream.synchronize()
        start = time.perf_counter()
        for _ in range(LAUNCHES // per_graph):
            graph.launch(stream)
        stream.synchronize()
        replays += LAUNCHES // per_graph
        times.append((time.perf_counter() - start) / (LAUNCHES // per_graph) * 1e6)
    return float(np.median(times)), replays


@part("histograms")
def histograms():
    """``wide_histograms.run()``: the wide-feature histogram kernels at n = 1e6."""
    from benchmarks.wide_histograms import run

    run()


@part("binning")
def binning():
    """``device_binning.run()``: equal-width binning at n = 1e6 on the host and the device."""
    from benchmarks.device_binning import run

    run()


# the fit of the ``profile`` and ``fit`` parts (``--n``, ``--rules``, ``--data-cache``,
# ``--system``, ``--dataset``, ``--data-dir``)
FIT = {"n": 100_000, "rules": 20, "cache": None, "system": "cuda-hist", "dataset": None,
       "data_dir": None}


def _timed_fit():
    """A ``FIT["rules"]``-rule fit of compare_devices' ``FIT["system"]`` (default cuda-hist:
    ``device='cuda'``, equal-width) on compare_devices' synthetic continuous data (n =
    ``FIT["n"]`` training examples, 100 features, 20 labels; loaded from ``FIT["cache"]``
    where a benchmark made it) or on the training part of ``FIT["dataset"]`` (from
    ``FIT["data_dir"]``), after a 5-rule fit; prints its time. Returns a function that
    fits the same rules again."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # the benchmarks' _common
    import _common as C
    from device_systems import make_estimator
    from synthetic_data import synthetic_split

    if FIT["dataset"]:
        split = C.load_split(FIT["data_dir"], FIT["dataset"])
    else:
        split = synthetic_split(FIT["n"], 1, 1.0, cache=FIT["cache"])
    X, Y = split.X_train, split.Y_train
    make_estimator(FIT["system"], 5, "all").fit(X, Y)
    start = time.perf_counter()
    make_estimator(FIT["system"], FIT["rules"], "all").fit(X, Y)
    print(f"{FIT['rules']}-rule {FIT['system']} fit on {split.name} without the profiler: "
          f"{time.perf_counter() - start:.2f} s")
    return lambda: make_estimator(FIT["system"], FIT["rules"], "all").fit(X, Y)


@part("fit")
def fit():
    """The fit of ``profile`` without cProfile (run under ``ncu`` by ``gpu_run.sh``)."""
    _timed_fit()


@part("profile")
def profile():
    """cProfile of the fit of :func:`_timed_fit`."""
    import cProfile
    import pstats

    refit = _timed_fit()
    prof = cProfile.Profile()
    start = time.perf_counter()
    prof.enable()
    refit()
    prof.disable()
    print(f"{FIT['rules']}-rule fit under cProfile: {time.perf_counter() - start:.2f} s")
    stats = pstats.Stats(prof, stream=sys.stdout)
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(30)


PARTS = {"fma": fma, "ieee": ieee, "solve": solve, "launch": launch,
         "histograms": histograms, "binning": binning, "profile": profile, "fit": fit}
DEFAULT_PARTS = ("fma", "ieee", "solve", "launch", "histograms", "binning")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--parts", nargs="*", choices=list(PARTS), default=list(DEFAULT_PARTS))
    p.add_argument("--n", type=float, default=1e5,
                   help="training examples of the profile and fit parts (default 1e5)")
    p.add_argument("--rules", type=int, default=20, help="their rules (default 20)")
    p.add_argument("--data-cache", type=Path, default=None,
                   help="compare_devices' --data-cache: the synthetic data from there")
    p.add_argument("--system", default="cuda-hist",
                   help="compare_devices' system of the fit (default cuda-hist)")
    p.add_argument("--dataset", default=None,
                   help="fit this data set's training part (e.g. yeast) instead")
    p.add_argument("--data-dir", type=Path, default=Path(".gpu/datasets"),
                   help="where --dataset's ARFF files are (default .gpu/datasets)")
    args = p.parse_args(argv)
    FIT.update(n=int(args.n), rules=args.rules, cache=args.data_cache, system=args.system,
               dataset=args.dataset, data_dir=args.data_dir)
    for name in args.parts:
        PARTS[name]()


if __name__ == "__main__":
    main()
