"""The learning math of ``gpurules.objectives`` compiled for the GPU (Numba CUDA).

Every formula is compiled from its single Python definition with
``numba.cuda.jit(device=True)``; nothing is re-typed here. Importing this module imports
``numba.cuda``, so only the CUDA backend and its tests import it (set
``NUMBA_ENABLE_CUDASIM=1`` before the first import to run under the simulator).

Agreement with the host: by default NVVM contracts a multiply followed by an add into an
FMA (``-fma=1``), which rounds once where the host (Numba on the CPU never contracts) rounds
twice. Products by a power-of-two scale are exact either way (``h * inv_scale + l2`` in
``label_gain``, ``value * scale + 0.5`` in ``quantize``), but the linear solves and sums of
squares of the non-decomposable losses are not; so every kernel whose code comes from
``gpurules`` is compiled with ``-fma=0`` (:func:`_compile_without_contraction`), and the
GPU's ``+ - * /`` and ``sqrt`` (correctly rounded) then give the host's results bit for bit.
``math.exp``/``math.log`` (libdevice, within 1-2 ulp) may still differ from the host's by
an ulp, so a re-encoded logistic statistic may differ from the CPU's by one fixed-point unit.

Link-time optimization would undo ``-fma=0``: numba-cuda compiles a kernel with LTO whenever
nvJitLink is installed (``lto=None``, the CUDA wheels' case), and then NVVM's final code
generation runs inside nvJitLink, which contracts by default and drops the ``fma`` option of
the first compile (its PTX for ``search_candidates``: 176 ``fma.rn.f64`` and 279 unrounded
``mul.f64`` that ``ptxas`` may fuse further, against 39 ``fma.rn.f64``, all in libdevice's
``pow``, without LTO). That is why the H200 of session 15 gave the non-decomposable
qualities 1-2 ulp away from the CPU's. So every kernel is made by :func:`kernel`, without
LTO (gpurules links no LTO-IR of its own, so LTO gains it nothing).
"""

import numpy as np
from numba import config, cuda, types

from gpurules import conditions
from gpurules.backends import thresholds
from gpurules.jit.cache import cache_cuda_kernel
from gpurules.objectives import complete_head, fixed_point, heads, losses, multi_output, \
    non_decomposable
from gpurules.objectives.multi_output import HEAD_ND_SINGLE


_PACKAGE_MARK = "gpurules"  # in the mangled names of every function compiled from gpurules


def _compile_without_contraction():
    """Make NVVM compile every module holding code of ``gpurules`` with ``-fma=0``.

    numba-cuda passes no ``fma`` option of its own (only ``fastmath=True`` sets one) and has
    no public way to pass one, so its ``nvvm.compile_ir`` is wrapped, once per process: the
    option is added when one of the LLVM IR modules names a ``gpurules`` function, so the
    users' own kernels compile as before. Nothing to do under the simulator (no NVVM)."""
    if config.ENABLE_CUDASIM:
        return
    from numba.cuda.cudadrv import nvvm

    original = nvvm.compile_ir
    if getattr(original, "gpurules_without_fma", False):
        return

    def compile_ir(llvmir, **options):
        modules = [llvmir] if isinstance(llvmir, (str, bytes)) else llvmir
        if not options.get("fastmath") and any(
                _PACKAGE_MARK in (m if isinstance(m, str) else m.decode(errors="replace"))
                for m in modules):
            options["fma"] = False
        return original(llvmir, **options)

    compile_ir.gpurules_without_fma = True
    nvvm.compile_ir = compile_ir


_compile_without_contraction()


def kernel(pyfunc, max_registers=None):
    """``pyfunc`` (a plain Python function) as a lazily compiled CUDA kernel, without
    link-time optimization (module docstring; the simulator has no ``lto`` option), whose
    compiled code is kept on disk in the package's cache (``jit.cache.cache_cuda_kernel``);
    ``max_registers``: the most registers a thread that ptxas may allocate (None: its
    choice)."""
    if config.ENABLE_CUDASIM:
        return cuda.jit(pyfunc)
    return cache_cuda_kernel(cuda.jit(pyfunc, lto=False, max_registers=max_registers))


def _device(pyfunc):
    """``pyfunc`` (a plain Python function, or the ``py_func`` of a Numba CPU dispatcher) as a
    CUDA device function."""
    return cuda.jit(device=True)(getattr(pyfunc, "py_func", pyfunc))


label_gain = _device(heads.label_gain)
label_choice_key = _device(heads.label_choice_key)
label_score = _device(heads.label_score)
loss_gradient_hessian = _device(losses.loss_gradient_hessian)
quantize = _device(fixed_point.quantize)
# the threshold between two histogram bins, the candidates that count and the condition
# test, as the CPU search has them
bin_threshold = _device(thresholds.bin_threshold)
admissible = _device(thresholds.admissible)
satisfies = _device(conditions.satisfies)


@cuda.jit(device=True)
def encode(loss, y, score, base_weight, scale):
    """Fixed-point (g, h) of one (example, label): ``_encode`` of ``cpu/statistics.py``
    composed from the same two functions. Returns an int64 pair."""
    gg, hh = loss_gradient_hessian(loss, y, score)
    return (np.int64(quantize(gg * base_weight, scale)),
            np.int64(quantize(hh * base_weight, scale)))


# non-decomposable statistics and heads solved as systems (``HEAD_MULTI_OUTPUT``,
# ``HEAD_ND_SINGLE``), with their head work rows (``multi_output.work_views``)
encode_example = _device(non_decomposable.encode)
largest_statistic = _device(non_decomposable.largest_statistic)
multi_output_side = _device(multi_output.multi_output_side)
single_head_sums = _device(complete_head.single_head_sums)
work_views = _device(multi_output.work_views)


@cuda.jit(device=True)
def system_quality(run_g, run_h, tot_g, tot_h, complement, labels, head_mode, inv_scale,
                   params, views):
    """``objectives.quality.side_quality`` for ``HEAD_MULTI_OUTPUT`` and ``HEAD_ND_SINGLE``:
    the same two calls. ``side_quality`` itself does not compile for CUDA (numba-cuda 0.30
    rejects its SeCo branches: ``heuristics.single_quality`` fails in its IR post-processing
    and ``partial_quality`` allocates), so the search calls the two heads directly."""
    if head_mode == HEAD_ND_SINGLE:
        return single_head_sums(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale,
                                params[0], params[1])
    return multi_output_side(run_g, run_h, tot_g, tot_h, complement, labels, inv_scale,
                             params, views)[0], -1


def signature_types():
    """The array types of the kernels' explicit signatures (``SIGNATURES``, type-checked by
    ``compile_ptx`` in the tests): ``(vec, mat)``, dicts from a scalar type to its C-contiguous
    1-D / 2-D array type."""
    scalars = (types.int8, types.int32, types.int64, types.float32, types.float64,
               types.boolean, types.uint8)
    return ({t: t[::1] for t in scalars}, {t: t[:, ::1] for t in scalars})
