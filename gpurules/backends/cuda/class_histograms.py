"""TURS candidate evaluation on a GPU (Numba CUDA): the same batched pass as
``backends/cpu/class_histograms.py``, with the same integer counts and fixed-point scores.

Kernels (plain Python functions compiled lazily by ``cuda.jit``; ``SIGNATURES`` lists the
explicit signatures that ``numba.cuda.compile_ptx`` type-checks in the tests):
* ``class_histogram``: one thread per (covered example, feature), global atomic adds into
  the int64 (B, G, C) histogram (integer atomics: the result does not depend on the order);
* ``running_sums``: one thread per feature: occupied bins, prefix sums, totals;
* ``score_literals``: one thread per literal, running ``objectives.mdl.literal_scores``
  compiled as a device function (its helpers are ``register_jitable``).

Importing this module imports ``numba.cuda``: only ``TursClassifier`` on a CUDA device and
the tests import it (set ``NUMBA_ENABLE_CUDASIM=1`` first to run under the simulator).
Shapes and dtypes as in the CPU module.
"""

import numpy as np
from numba import cuda, types

from gpurules.objectives import mdl

_literal_scores = cuda.jit(device=True)(mdl.literal_scores)
_feature_running_sums = cuda.jit(device=True)(mdl.feature_running_sums)
THREADS = 128


def _zero(a):
    for t in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
        a[t] = 0


def _class_histogram(codes, y, idx, grp, hist):
    A = codes.shape[0]
    for t in range(cuda.grid(1), idx.shape[0] * A, cuda.gridsize(1)):
        i = t // A
        f = t - i * A
        b = codes[f, idx[i]]
        if b >= 0:
            cuda.atomic.add(hist, (b, grp[i], y[idx[i]]), 1)


def _running_sums(hist, bin_offset, numeric, totals, nonempty):
    f = cuda.grid(1)
    if f >= bin_offset.shape[0] - 1:
        return
    _feature_running_sums(hist, bin_offset, numeric, f, totals, nonempty)


def _score_literals(lit_feat, lit_op, lit_arg, bin_offset, numeric, hist, totals, nonempty,
                    fstate, ncuts, else_counts, union_counts, union_size, L2, CL, REG,
                    base_model, new_feature_model, log2_features, work, out_gain_incl,
                    out_gain_excl, out_cov_incl, out_cov_excl, out_flags):
    lit = cuda.grid(1)
    if lit < lit_feat.shape[0]:
        _literal_scores(lit, lit_feat, lit_op, lit_arg, bin_offset, numeric, hist, totals,
                        nonempty, fstate, ncuts, else_counts, union_counts, union_size, L2,
                        CL, REG, base_model, new_feature_model, log2_features, work,
                        out_gain_incl, out_gain_excl, out_cov_incl, out_cov_excl, out_flags)


zero = cuda.jit(_zero)
class_histogram = cuda.jit(_class_histogram)
running_sums = cuda.jit(_running_sums)
score_literals = cuda.jit(_score_literals)


def _signatures():
    i8, i32, i64, b1 = types.int8, types.int32, types.int64, types.boolean
    vec = {t: t[::1] for t in (i8, i32, i64, b1)}
    cube = i64[:, :, ::1]
    return {
        "zero": (vec[i64],),
        "class_histogram": (i32[:, ::1], vec[i32], vec[i64], vec[i32], cube),
        "running_sums": (cube, vec[i64], vec[b1], cube, vec[i64]),
        "score_literals": (
            vec[i32], vec[i8], vec[i32], vec[i64], vec[b1], cube, cube, vec[i64], vec[i8],
            vec[i64], vec[i64], i64[:, ::1], vec[i64], vec[i64], vec[i64], vec[i64], i64,
            i64, i64, cube, vec[i64], vec[i64], vec[i64], vec[i64], vec[i8]),
    }


# kernel name -> argument types (``void`` return), for ``numba.cuda.compile_ptx``
SIGNATURES = _signatures()
KERNELS = {"zero": zero, "class_histogram": class_histogram, "running_sums": running_sums,
           "score_literals": score_literals}


def _blocks(n, threads=THREADS, cap=4096):
    return max(1, min(cap, (n + threads - 1) // threads))


class CudaClassHistograms:
    """The CUDA evaluator of candidate literals: same ``evaluate`` as
    ``CpuClassHistograms``; the data of the fit stays on the device, per beam rule only the
    covered examples go up and one score per literal comes back.

    Args:
        data: ``TursData``.  device_index: the CUDA device.
        threads: threads per block (small values for the simulator).
    """

    def __init__(self, data, device_index=0, threads=THREADS):
        self.device = f"cuda:{device_index}"
        if not cuda.is_available():
            raise RuntimeError("numba.cuda sees no usable GPU")
        cuda.select_device(device_index)
        self.data = data
        self.threads = threads
        L, C = len(data.lit_feat), data.n_classes
        put = cuda.to_device
        self._codes, self._y = put(data.codes), put(data.y)
        self._lits = (put(data.lit_feat), put(data.lit_op), put(data.lit_arg))
        self._bin_offset, self._numeric = put(data.bin_offset), put(data.numeric)
        self._tables = tuple(put(np.ascontiguousarray(t)) for t in data.tables)
        self._work = cuda.device_array((L, 4, C), dtype=np.int64)
        self._out = (cuda.device_array(L, np.int64), cuda.device_array(L, np.int64),
                     cuda.device_array(L, np.int64), cuda.device_array(L, np.int64),
                     cuda.device_array(L, np.int8))

    def evaluate(self, idx, grp, fstate, ncuts, else_counts, union_counts, union_size,
                 base_model, new_feature_model):
        """See ``CpuClassHistograms.evaluate``."""
        d, T = self.data, self.threads
        G, C, A, L = union_counts.shape[0], d.n_classes, d.n_features, len(d.lit_feat)
        put = cuda.to_device
        d_idx, d_grp = put(np.ascontiguousarray(idx, np.int64)), put(grp)
        hist = cuda.device_array((d.n_bins, G, C), dtype=np.int64)
        totals = cuda.device_array((A, G, C), dtype=np.int64)
        nonempty = cuda.device_array(A, dtype=np.int64)
        zero[_blocks(hist.size, T), T](hist.reshape(hist.size))
        class_histogram[_blocks(len(idx) * A, T), T](self._codes, self._y, d_idx, d_grp, hist)
        running_sums[_blocks(A, T, cap=1 << 20), T](hist, self._bin_offset, self._numeric,
                                                    totals, nonempty)
        score_literals[_blocks(L, T, cap=1 << 20), T](
            *self._lits, self._bin_offset, self._numeric, hist, totals, nonempty,
            put(np.ascontiguousarray(fstate, np.int8)), put(np.ascontiguousarray(ncuts)),
            put(np.ascontiguousarray(else_counts, np.int64)),
            put(np.ascontiguousarray(union_counts, np.int64)),
            put(np.ascontiguousarray(union_size, np.int64)), *self._tables,
            np.int64(base_model), np.int64(new_feature_model), np.int64(d.log2_features),
            self._work, *self._out)
        return tuple(o.copy_to_host() for o in self._out)
