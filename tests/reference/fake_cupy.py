"""A NumPy stand-in for the parts of CuPy that ``CudaBackend`` uses, so that the backend's
plumbing runs under the Numba CUDA simulator on a machine without a GPU.

``RawModule`` reads the ``extern "C" __global__`` signatures of the real CUDA source. A
launch checks every argument against its C parameter (pointer element type or scalar type),
the launch shape, and, for ``histogram_shared``, that the dynamic shared memory covers every
launched feature and was opted in above 48 KiB; then it runs the kernel's documented
contract in NumPy (the histogram reference). The CUDA C code itself is checked by NVRTC and
on a real GPU, not here.
"""

import contextlib
import re
import types

import numpy as np

from gpurules.backends.cuda.histograms import shared_histogram_bytes
from tests.reference.histogram import histograms

SM_COUNT = 2
SHARED_OPTIN = 2048  # small, so that wide features take the global-atomics kernel
_C_TYPES = {"i64": np.int64, "long long": np.int64, "int": np.int32}
launches = []  # (kernel name, grid, block, shared_mem, current stream) of every launch


FREE_BYTES = 1 << 30  # what memGetInfo reports free
ndarray = None  # no way to tell device arrays from host arrays: both are NumPy arrays


class _Pointer:
    def __init__(self, ptr):
        self.ptr = ptr


class DeviceArray(np.ndarray):
    """A NumPy array standing in for a ``cupy.ndarray``: ``set`` copies a host array of the
    same shape and dtype into it (views keep the class)."""

    @property
    def data(self):
        """CuPy's ``MemoryPointer``, as far as the backend reads it: ``ptr``, the address
        of the first element."""
        return _Pointer(self.__array_interface__["data"][0])

    def set(self, host):
        assert isinstance(host, np.ndarray) and not isinstance(host, DeviceArray)
        assert host.shape == self.shape and host.dtype == self.dtype, (host.shape, self.shape)
        self[...] = host


def _device(function):
    def allocate(*args, **kwargs):
        return function(*args, **kwargs).view(DeviceArray)
    return allocate


def asarray(a, dtype=None):
    return np.array(a, dtype=dtype, copy=True).view(DeviceArray)  # never a view of the host


def asnumpy(a):
    return np.array(a, copy=True)


def as_cuda_array(array, sync=True):
    """``numba.cuda.as_cuda_array`` as the simulated backend sees it: only a CuPy array
    (here a :class:`DeviceArray`) can be wrapped, and the result is a plain NumPy view of the
    same memory (what the simulator's kernels take) with no ``data.ptr``, so wrapping a view
    a second time fails as it does on a GPU (a Numba ``DeviceNDArray`` has no ``data``)."""
    if not isinstance(array, DeviceArray):
        raise TypeError(f"as_cuda_array: not a CuPy array: {type(array).__name__}")
    return array.view(np.ndarray)


zeros, empty, full, ones = (_device(f) for f in (np.zeros, np.empty, np.full, np.ones))
argsort = _device(lambda a: np.argsort(a, kind="stable"))
count_nonzero = np.count_nonzero

def _launch_slots(groups):
    """(first, stop): the slots of a histogram launch's ``groups`` (count first), which must
    be consecutive runs of slots (some may be empty)."""
    offsets = groups[1:int(groups[0]) + 2]
    assert (np.diff(offsets) >= 0).all()
    return (int(offsets[0]), int(offsets[-1])) if offsets.size else (0, 0)


def _add_slots(first, stop, slot_offset, bin_rows, in_list, weights, g, h, hists):
    """Add the NumPy histograms of the slots ``first .. stop - 1`` (their features' bins
    ``bin_rows`` int32 (stop - first, n)) over the examples ``in_list`` (bool (n,)) to their
    rows of ``hists`` (hist_g, hist_h, hist_count)."""
    assert g.shape[1] == hists[0].shape[1] and h.shape[1] == hists[1].shape[1]
    lo, hi = slot_offset[first], slot_offset[stop]
    assert hi <= hists[2].shape[0]
    # the sampled features as a data set of their own, one after the other
    binned = types.SimpleNamespace(total_bins=int(hi - lo), bin_index=bin_rows,
                                   bin_offset=slot_offset[first:stop + 1] - lo)
    add = histograms(binned, np.arange(stop - first), in_list, weights, g, h)
    for total, part in zip(hists, add):
        total[lo:hi] += part


class Stream:
    """A stream: ``with stream:`` makes it current (``current_stream``); ``ptr`` an int."""

    _next = 1

    def __init__(self, non_blocking=False):
        self.non_blocking = non_blocking
        self.ptr = Stream._next
        Stream._next += 1

    def __enter__(self):
        _current.append(self)
        return self

    def __exit__(self, *exc):
        assert _current.pop() is self


_current = []


def current_stream():
    """The stream made current by the innermost ``with stream:``, or None (the default)."""
    return _current[-1] if _current else None


cuda = types.SimpleNamespace(
    Device=lambda index=0: contextlib.nullcontext(), Stream=Stream,
    runtime=types.SimpleNamespace(
        cudaDevAttrMultiProcessorCount=16, cudaDevAttrMaxSharedMemoryPerBlockOptin=97,
        deviceGetAttribute=lambda attr, dev: {16: SM_COUNT, 97: SHARED_OPTIN}[attr],
        memGetInfo=lambda: (FREE_BYTES, 2 * FREE_BYTES)))


def _parameters(source):
    """kernel name -> [(C type, is_pointer, name)] from the source's signatures."""
    out = {}
    for name, params in re.findall(r'extern "C" __global__ void (\w+)\(([^)]*)\)', source):
        parsed = []
        for param in params.split(","):
            m = re.fullmatch(r"\s*(?:const\s+)?([\w ]+?)\s*(\*?)\s*(\w+)\s*", param)
            parsed.append((m.group(1), m.group(2) == "*", m.group(3)))
        out[name] = parsed
    return out


class RawModule:
    def __init__(self, code, options=()):
        assert "--std=c++17" in options
        self._params = _parameters(code)

    def get_function(self, name):
        return RawKernel(name, self._params[name])


class RawKernel:
    def __init__(self, name, params):
        self.name, self.params = name, params
        self.max_dynamic_shared_size_bytes = 48 * 1024

    def __call__(self, grid, block, args, shared_mem=0):
        assert len(args) == len(self.params), f"{self.name}: {len(args)} arguments"
        for (ctype, pointer, pname), arg in zip(self.params, args):
            want = np.dtype(_C_TYPES[ctype])
            if pointer:
                ok = isinstance(arg, np.ndarray) and arg.flags.c_contiguous
            else:
                ok = isinstance(arg, np.generic)
            assert ok and arg.dtype == want, \
                f"{self.name}({pname}): got {type(arg).__name__} {arg.dtype}, C type {ctype}"
        assert len(grid) == 2 and 1 <= grid[1] <= 65535 and grid[0] >= 1
        assert len(block) == 1 and block[0] % 32 == 0 and block[0] <= 1024
        launches.append((self.name, grid, block, shared_mem, current_stream()))
        named = {pname: arg for (_, _, pname), arg in zip(self.params, args)}
        getattr(self, "_" + self.name)(shared_mem=shared_mem, **named)

    def _zero_histograms(self, slot_offset, S, K, W, hist_g, hist_h, hist_count, shared_mem):
        rows = slice(slot_offset[0], slot_offset[S])
        hist_g[rows], hist_h[rows], hist_count[rows] = 0, 0, 0

    def _histogram_global(self, features, slot_offset, groups, bin_index, lists, lens, ring,
                          cursor, weights, g, h, K, W, n, A, hist_g, hist_h, hist_count,
                          shared_mem):
        assert shared_mem == 0 and bin_index.shape == (A, n)
        assert lists.size == 2 * n and lens.shape == (ring,)
        first, stop = _launch_slots(groups)
        step = int(cursor[0])
        count = int(lens[step % ring])
        listed = lists.reshape(2, n)[step % 2, :count]
        assert np.unique(listed).size == listed.size and 0 <= count <= n
        in_list = np.zeros(n, bool)
        in_list[listed] = True
        _add_slots(first, stop, slot_offset, bin_index[features[first:stop]], in_list, weights,
                   g, h, (hist_g, hist_h, hist_count))

    def _histogram_sorted(self, features, slot_offset, groups, sorted, sorted_row, mask,
                          cursor, weights, g, h, K, W, n, A, span, hist_g, hist_h, hist_count,
                          shared_mem):
        assert shared_mem > 0 and span > 0 and span % 32 == 0 and sorted_row.shape == (A,)
        first, stop = _launch_slots(groups)
        rows = sorted_row[features[first:stop]]
        assert (rows >= 0).all(), "a wide slot's feature has no sorted row"
        packed = sorted.reshape(-1, n)[rows]
        bins, examples = packed >> 32, packed & 0xFFFFFFFF
        assert (np.diff(bins, axis=1) >= 0).all(), "a sorted row is not in bin order"
        bin_index = np.empty(packed.shape, np.int32)
        for r in range(packed.shape[0]):
            assert np.array_equal(np.sort(examples[r]), np.arange(n))
            bin_index[r, examples[r]] = bins[r]
        _add_slots(first, stop, slot_offset, bin_index, mask == cursor[1], weights, g, h,
                   (hist_g, hist_h, hist_count))

    def _pack_sorted(self, order, bins, n, out, shared_mem):
        assert np.array_equal(np.sort(order), np.arange(n))
        assert (np.diff(bins[order]) >= 0).all()
        out[:] = (bins[order].astype(np.int64) << 32) | order

    def _histogram_global_by_slot(self, **args):  # the same sums, slot after slot
        self._histogram_global(**args)

    def _histogram_shared(self, shared_mem, **args):
        offsets = args["slot_offset"][args["groups"][1:int(args["groups"][0]) + 2]]
        need = int(shared_histogram_bytes(np.diff(offsets), int(args["K"]),
                                          int(args["W"])).max(initial=0))
        assert need <= shared_mem <= max(self.max_dynamic_shared_size_bytes, 48 * 1024)
        assert shared_mem <= SHARED_OPTIN
        self._histogram_global(shared_mem=0, **args)
