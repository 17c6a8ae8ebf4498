"""TURS candidate evaluation on a GPU (Numba CUDA): the same batched pass as
``backends/cpu/class_histograms.py`` (every literal of every beam rule of a growth step,
one ``backends.base.CandidateBatch``), with the same integer counts and fixed-point scores.

Kernels (plain Python functions compiled lazily by ``cuda.jit``; ``SIGNATURES`` lists the
explicit signatures that ``numba.cuda.compile_ptx`` type-checks in the tests), one launch
each per growth step:
* ``class_histogram``: one thread per (rule, covered example, feature), global atomic adds
  into the int64 (B, S, C) histogram, S the columns of all rules (integer atomics: the
  result does not depend on the order);
* ``running_sums``: one thread per (rule, feature): occupied bins, prefix sums, totals in
  the rule's columns;
* ``score_literals``: one thread per (rule, literal), running ``objectives.mdl.literal_scores``
  compiled as a device function (its helpers are ``register_jitable``) on the rule's views.

Importing this module imports ``numba.cuda``: only ``TursClassifier`` on a CUDA device and
the tests import it (set ``NUMBA_ENABLE_CUDASIM=1`` first to run under the simulator).
Shapes and dtypes as in the CPU module.
"""

import numpy as np
from numba import cuda, types

from gpurules.backends.cuda.device_math import kernel
from gpurules.backends.cuda.launches import small_grids_quiet
from gpurules.objectives import mdl

_literal_scores = cuda.jit(device=True)(mdl.literal_scores)
_feature_running_sums = cuda.jit(device=True)(mdl.feature_running_sums)
_nonempty_bins = cuda.jit(device=True)(mdl.nonempty_bins)
THREADS = 128


def _zero(a):
    for t in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
        a[t] = 0


def _class_histogram(codes, y, idx, col, hist):
    A = codes.shape[0]
    for t in range(cuda.grid(1), idx.shape[0] * A, cuda.gridsize(1)):
        i = t // A
        f = t - i * A
        b = codes[f, idx[i]]
        if b >= 0:
            cuda.atomic.add(hist, (b, col[i], y[idx[i]]), 1)


def _running_sums(hist, bin_offset, numeric, group_offset, totals, nonempty):
    A = bin_offset.shape[0] - 1
    p = cuda.grid(1)
    if p >= (group_offset.shape[0] - 1) * A:
        return
    r = p // A
    f = p - r * A
    h = hist[:, group_offset[r]:group_offset[r + 1]]
    nonempty[r, f] = _nonempty_bins(h, bin_offset, numeric, f)
    _feature_running_sums(h, bin_offset, numeric, f,
                          totals[:, group_offset[r]:group_offset[r + 1]])


def _score_literals(lit_feat, lit_op, lit_arg, bin_offset, numeric, hist, totals, nonempty,
                    group_offset, fstate, ncuts, else_counts, union_counts, union_size, L2,
                    CL, REG, base_model, new_feature_model, log2_features, literal_code, work,
                    out_gain_incl, out_gain_excl, out_cov_incl, out_cov_excl, out_flags):
    L = lit_feat.shape[0]
    p = cuda.grid(1)
    if p >= (group_offset.shape[0] - 1) * L:
        return
    r = p // L
    a = group_offset[r]
    b = group_offset[r + 1]
    _literal_scores(p - r * L, lit_feat, lit_op, lit_arg, bin_offset, numeric, hist[:, a:b],
                    totals[:, a:b], nonempty[r], fstate[r], ncuts[r], else_counts,
                    union_counts[a:b], union_size[a:b], L2, CL, REG, base_model[r],
                    new_feature_model[r], log2_features, literal_code, work[r],
                    out_gain_incl[r], out_gain_excl[r], out_cov_incl[r], out_cov_excl[r],
                    out_flags[r])


zero = kernel(_zero)
class_histogram = kernel(_class_histogram)
running_sums = kernel(_running_sums)
score_literals = kernel(_score_literals)


def _signatures():
    i8, i32, i64, b1 = types.int8, types.int32, types.int64, types.boolean
    vec = {t: t[::1] for t in (i8, i32, i64, b1)}
    cube = i64[:, :, ::1]
    rows = {t: t[:, ::1] for t in (i8, i64)}
    return {
        "zero": (vec[i64],),
        "class_histogram": (i32[:, ::1], vec[i32], vec[i64], vec[i32], cube),
        "running_sums": (cube, vec[i64], vec[b1], vec[i64], cube, rows[i64]),
        "score_literals": (
            vec[i32], vec[i8], vec[i32], vec[i64], vec[b1], cube, cube, rows[i64], vec[i64],
            rows[i8], rows[i64], vec[i64], rows[i64], vec[i64], vec[i64], vec[i64], vec[i64],
            vec[i64], vec[i64], i64, i64, i64[:, :, :, ::1], rows[i64], rows[i64], rows[i64],
            rows[i64], rows[i8]),
    }


# kernel name -> argument types (``void`` return), for ``numba.cuda.compile_ptx``
SIGNATURES = _signatures()
KERNELS = {"zero": zero, "class_histogram": class_histogram, "running_sums": running_sums,
           "score_literals": score_literals}


def _blocks(n, threads=THREADS, cap=4096):
    return max(1, min(cap, (n + threads - 1) // threads))


class CudaClassHistograms:
    """The CUDA evaluator of candidate literals: same ``evaluate`` as
    ``CpuClassHistograms``; the data of the fit stays on the device, per growth step only
    the batch goes up and the scores of every (rule, literal) come back.

    Args:
        data: ``TursData``.  device_index: the CUDA device.
        threads: threads per block (small values for the simulator).
    """

    def __init__(self, data, device_index=0, threads=THREADS):
        self.device, self.device_index = f"cuda:{device_index}", device_index
        if not cuda.is_available():
            raise RuntimeError("numba.cuda sees no usable GPU")
        self.data = data
        self.threads = threads
        put = cuda.to_device
        with self._on_device():
            self._codes, self._y = put(data.codes), put(data.y)
            self._lits = (put(data.lit_feat), put(data.lit_op), put(data.lit_arg))
            self._bin_offset, self._numeric = put(data.bin_offset), put(data.numeric)
            self._tables = tuple(put(np.ascontiguousarray(t)) for t in data.tables)
            self._work = cuda.device_array((0, len(data.lit_feat), 4, data.n_classes),
                                           np.int64)

    def _on_device(self):
        """The block runs on this evaluator's device (its context made current for the
        block only: the caller's current device is left as it was)."""
        return cuda.gpus[self.device_index]

    def _work_rows(self, R):
        """Device scratch int64 (R, L, 4, C) for ``literal_scores`` (grown, never shrunk)."""
        if self._work.shape[0] < R:
            self._work = cuda.device_array((R,) + self._work.shape[1:], np.int64)
        return self._work[:R]

    def evaluate(self, batch):
        """See ``CpuClassHistograms.evaluate``."""
        d = self.data
        R, S, C = batch.n_rules, batch.n_columns, d.n_classes
        A, L = d.n_features, len(d.lit_feat)
        if R == 0:
            return (np.empty((0, L), np.int64), np.empty((0, L), np.int64),
                    np.empty((0, L), np.int64), np.empty((0, L), np.int64),
                    np.empty((0, L), np.int8))
        with self._on_device(), small_grids_quiet():
            offsets = cuda.to_device(batch.group_offset)
            hist = cuda.device_array((d.n_bins, S, C), dtype=np.int64)
            totals = cuda.device_array((A, S, C), dtype=np.int64)
            nonempty = cuda.device_array((R, A), dtype=np.int64)
            out = tuple(cuda.device_array((R, L), t) for t in (np.int64,) * 4 + (np.int8,))
            return self._launch(batch, offsets, hist, totals, nonempty, out)

    def _launch(self, batch, offsets, hist, totals, nonempty, out):
        """The kernels of :meth:`evaluate` on its device buffers; the scores to the host."""
        d, T, R, A, L = self.data, self.threads, batch.n_rules, self.data.n_features, \
            len(self.data.lit_feat)
        put = cuda.to_device
        zero[_blocks(hist.size, T), T](hist.reshape(hist.size))
        class_histogram[_blocks(len(batch.idx) * A, T), T](
            self._codes, self._y, put(batch.idx), put(batch.col), hist)
        running_sums[_blocks(R * A, T, cap=1 << 20), T](
            hist, self._bin_offset, self._numeric, offsets, totals, nonempty)
        score_literals[_blocks(R * L, T, cap=1 << 20), T](
            *self._lits, self._bin_offset, self._numeric, hist, totals, nonempty, offsets,
            put(batch.fstate), put(batch.ncuts), put(batch.else_counts),
            put(batch.union_counts), put(batch.union_size), *self._tables,
            put(batch.base_model), put(batch.new_feature_model), np.int64(d.log2_features),
            np.int64(mdl.LITERAL_CODES.index(d.literal_code)), self._work_rows(R), *out)
        return tuple(o.copy_to_host() for o in out)
