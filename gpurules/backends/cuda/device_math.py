"""The learning math of ``gpurules.objectives`` compiled for the GPU (Numba CUDA).

Every formula is compiled from its single Python definition with
``numba.cuda.jit(device=True)``; nothing is re-typed here. Importing this module imports
``numba.cuda``, so only the CUDA backend and its tests import it (set
``NUMBA_ENABLE_CUDASIM=1`` before the first import to run under the simulator).

Agreement with the host: NVVM contracts a multiply followed by an add into an FMA (e.g.
``h * inv_scale + l2`` in ``label_gain``, ``value * scale + 0.5`` in ``quantize``); each such
product is by a power-of-two scale, hence exact, so the results equal the host's bit for
bit. ``math.exp`` (libdevice, within 1 ulp) may differ from the host's by an ulp, so a
re-encoded logistic statistic may differ from the CPU's by one fixed-point unit.
"""

import numpy as np
from numba import cuda

from gpurules.backends.cpu import exact_search, prediction
from gpurules.objectives import fixed_point, heads, losses


def _device(pyfunc):
    """``pyfunc`` (a plain Python function, or the ``py_func`` of a Numba CPU dispatcher) as a
    CUDA device function."""
    return cuda.jit(device=True)(getattr(pyfunc, "py_func", pyfunc))


label_gain = _device(heads.label_gain)
label_score = _device(heads.label_score)
loss_gradient_hessian = _device(losses.loss_gradient_hessian)
quantize = _device(fixed_point.quantize)
# the threshold between two adjacent bins and the condition test, as the CPU search has them
midpoint = _device(exact_search._midpoint)
satisfies = _device(prediction.satisfies)


@cuda.jit(device=True)
def encode(loss, y, score, base_weight, scale):
    """Fixed-point (g, h) of one (example, label): ``_encode`` of ``cpu/statistics.py``
    composed from the same two functions. Returns an int64 pair."""
    gg, hh = loss_gradient_hessian(loss, y, score)
    return (np.int64(quantize(gg * base_weight, scale)),
            np.int64(quantize(hh * base_weight, scale)))
