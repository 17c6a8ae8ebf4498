"""ctypes front end of ``cuda_host_harness.cpp``: the CUDA C histogram kernels run on the host.

``HostKernels.build(directory)`` compiles the harness around ``kernels/histogram.cu`` with the
host C++ compiler; the methods take NumPy arrays and launch shapes like the CUDA backend.
"""

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np

from tests.reference.cuda_support import ROOT

HARNESS = Path(__file__).with_name("cuda_host_harness.cpp")
SOURCE = ROOT / "kernels" / "histogram.cu"


def compiler():
    """The host C++ compiler (g++ or c++), or None."""
    return shutil.which("g++") or shutil.which("c++")


def _ptr(a, dtype):
    assert a.dtype == dtype and a.flags.c_contiguous, (a.dtype, dtype)
    return a.ctypes.data_as(ctypes.c_void_p)


class HostKernels:
    def __init__(self, library):
        self._lib = ctypes.CDLL(str(library))
        self._lib.run_zero_histograms.restype = ctypes.c_int
        self._lib.run_histogram.restype = ctypes.c_int
        self._lib.run_histogram_sorted.restype = ctypes.c_int
        self._lib.run_pack_sorted.restype = ctypes.c_int

    @classmethod
    def build(cls, directory):
        """Compile the harness into ``directory``; raises CalledProcessError with the log."""
        library = Path(directory) / "histogram_host.so"
        subprocess.run([compiler(), "-std=c++20", "-O1", "-shared", "-fPIC", "-pthread",
                        "-Wall", "-Werror", f'-DKERNEL_SOURCE="{SOURCE}"', str(HARNESS),
                        "-o", str(library)], check=True, capture_output=True, text=True)
        return cls(library)

    def zero_histograms(self, grid, block, slot_offset, K, hists):
        """``zero_histograms`` of the rows of ``slot_offset`` (int64 (S + 1,)) on grid
        (x, y) x block threads; hists = (g, h, count)."""
        rc = self._lib.run_zero_histograms(
            ctypes.c_uint(grid[0]), ctypes.c_uint(grid[1]), ctypes.c_uint(block),
            _ptr(slot_offset, np.int64), ctypes.c_int(slot_offset.shape[0] - 1),
            ctypes.c_int(K), ctypes.c_int(hists[1].shape[1]), *self._hists(hists))
        assert rc == 0, f"zero_histograms: harness error {rc}"

    def histogram(self, kernel, grid, block, shared_bytes, features, slot_offset, binned,
                  mask, indicator, weights, g, h, hists, group_offset=None, step=3, ring=5):
        """``histogram_shared`` (``kernel`` True), ``histogram_global`` (False) or
        ``histogram_global_by_slot`` (``"by-slot"``) of ``features`` into the rows
        ``slot_offset`` (int64 (S + 1,)), over the examples with ``mask == indicator``, given
        to the kernel as the compacted list of refinement step ``step`` (list ``step % 2`` of
        two, its length in slot ``step % ring`` of the ring; the other list and slots hold
        other examples) in descending order (any order must do), in the groups of slots
        ``group_offset`` (int64 (G + 1,), empty groups allowed; default: one group per
        slot). Returns the harness status: 0, or -1 if a block wrote past its
        ``shared_bytes`` of dynamic shared memory."""
        S = features.shape[0]
        if group_offset is None:
            group_offset = np.arange(S + 1, dtype=np.int64)
        groups = np.concatenate([[group_offset.shape[0] - 1], group_offset]).astype(np.int64)
        n, K = g.shape
        listed = np.flatnonzero(mask == indicator)[::-1]
        lists = np.tile(np.arange(n, dtype=np.int32), (2, 1))  # the other list: everyone
        lists[step % 2, :listed.size] = listed
        lens = np.full(ring, n, np.int32)
        lens[step % ring] = listed.size
        cursor = np.array([step, -1], np.int64)
        return self._lib.run_histogram(
            ctypes.c_int({True: 1, False: 0, "by-slot": 2}[kernel]), ctypes.c_uint(grid[0]),
            ctypes.c_uint(grid[1]),
            ctypes.c_uint(block), ctypes.c_size_t(shared_bytes), _ptr(features, np.int64),
            _ptr(slot_offset, np.int64), _ptr(groups, np.int64),
            _ptr(binned.bin_index, np.int32), _ptr(lists, np.int32), _ptr(lens, np.int32),
            ctypes.c_int(ring), _ptr(cursor, np.int64), _ptr(weights, np.int32),
            _ptr(g, np.int64), _ptr(h, np.int64), ctypes.c_int(K), ctypes.c_int(h.shape[1]),
            ctypes.c_int(n), ctypes.c_int(binned.bin_index.shape[0]), *self._hists(hists))

    def pack_sorted(self, grid, block, order, bins):
        """``pack_sorted`` of one feature: ``order`` int64 (n,), ``bins`` int32 (n,);
        returns the packed row int64 (n,)."""
        out = np.full(order.shape[0], -7, np.int64)
        rc = self._lib.run_pack_sorted(
            ctypes.c_uint(grid[0]), ctypes.c_uint(grid[1]), ctypes.c_uint(block),
            _ptr(order, np.int64), _ptr(bins, np.int32), ctypes.c_int(order.shape[0]),
            _ptr(out, np.int64))
        assert rc == 0, f"pack_sorted: harness error {rc}"
        return out

    def histogram_sorted(self, grid, block, shared_bytes, features, slot_offset, groups,
                         sorted_rows, sorted_row, mask, indicator, weights, g, h, hists,
                         span):
        """``histogram_sorted`` over the slots of ``groups`` (int64, count first, as the
        kernel reads them) from the packed rows ``sorted_rows`` int64 (F, n) (feature
        ``f``'s is ``sorted_row[f]``), over the examples with ``mask == indicator``, ``span``
        positions a task. Returns the harness status (-1: past its shared memory)."""
        n, K = g.shape
        cursor = np.array([3, indicator], np.int64)
        return self._lib.run_histogram_sorted(
            ctypes.c_uint(grid[0]), ctypes.c_uint(grid[1]), ctypes.c_uint(block),
            ctypes.c_size_t(shared_bytes), _ptr(features, np.int64),
            _ptr(slot_offset, np.int64), _ptr(groups, np.int64), _ptr(sorted_rows, np.int64),
            _ptr(sorted_row, np.int64), _ptr(mask, np.int32), _ptr(cursor, np.int64),
            _ptr(weights, np.int32), _ptr(g, np.int64), _ptr(h, np.int64), ctypes.c_int(K),
            ctypes.c_int(h.shape[1]), ctypes.c_int(n), ctypes.c_int(sorted_row.shape[0]),
            ctypes.c_int(span), *self._hists(hists))

    @staticmethod
    def _hists(hists):
        return tuple(_ptr(a, np.int64) for a in hists)
