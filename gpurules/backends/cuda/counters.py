"""Counters of the device work of one CudaBackend: launches, copies, allocations, bytes.

Nothing here times or synchronises the device, and the counts do not depend on it: they are
the same on a GPU and on the Numba CUDA simulator with ``tests/reference/fake_cupy.py``
standing in for CuPy. That is how the per-refinement budget of the CUDA engine (issue 14)
is checked on machines without a GPU (``tests/test_cuda_budget.py``).

:class:`DeviceCounters` shadows, on one backend *instance* (``attach`` / ``detach``, or as a
context manager):

- ``backend.cp``: ``asnumpy`` counts a device->host copy, which is also a synchronisation;
  ``asarray`` of a host array a host->device copy and an allocation; ``zeros``, ``empty``,
  ``full``, ``ones``, ``*_like`` and ``arange`` an allocation each.
- ``backend._upload`` (every host->device copy into an existing device array): a copy.
  The backend neither fills nor memsets device arrays outside ``start_fit`` (allocations
  are counted; ``cupy.zeros`` is one).
- ``backend._hist`` (the ``RawModule`` kernels of ``kernels/histogram.cu``): a launch each,
  and for a histogram kernel the bytes it reads (:func:`histogram_read_bytes`).
- ``backend._kernels`` and ``backend._search_module`` (the Numba CUDA
  kernels): a launch each.
- ``backend._wrap`` (a new Numba view of a CuPy array, ``CudaBackend._nb``'s cache
  misses): a wrapper each; a host cost of ~64 us on an H200 (``docs/gpu-validation.md``).

Operators on device arrays that allocate their result (``a == b``, ``a.max()``) are not
seen; the backend keeps them off the per-refinement path.
"""

import re
from dataclasses import dataclass, fields

import numpy as np

from gpurules.backends.cuda import graphs, sources
from gpurules.backends.cuda.launches import WrappedKernels

_ALLOCATORS = ("zeros", "empty", "full", "ones", "zeros_like", "empty_like", "full_like",
               "ones_like", "arange")
_HISTOGRAM_KERNELS = ("histogram_shared", "histogram_global", "histogram_global_by_slot",
                      "histogram_sorted")


@dataclass
class Counts:
    """Device work since the counters were attached (or between two snapshots).

    raw_launches / numba_launches: kernel launches of ``histogram.cu`` / of Numba CUDA;
    d2h: device->host copies (each a synchronisation); h2d: host->device copies;
    allocations: device arrays allocated; histogram_bytes: bytes read by the histogram
    kernels (modelled from their arguments, :func:`histogram_read_bytes`); wrappers: Numba
    views made of CuPy arrays (host work only); histogram_rows: the histogram rows of the
    sampled features, summed over the builds (each row is zeroed, tile-summed and read by
    the candidates whatever the coverage: :func:`bin_pass_bytes`)."""

    raw_launches: int = 0
    numba_launches: int = 0
    d2h: int = 0
    h2d: int = 0
    allocations: int = 0
    histogram_bytes: int = 0
    wrappers: int = 0
    histogram_rows: int = 0

    @property
    def launches(self):
        return self.raw_launches + self.numba_launches

    def __sub__(self, other):
        return Counts(*(getattr(self, f.name) - getattr(other, f.name) for f in fields(self)))

    def as_dict(self):
        return {**{f.name: getattr(self, f.name) for f in fields(self)},
                "launches": self.launches}


def _parameter_names(source):
    """kernel name -> [parameter name] of the ``extern "C" __global__`` kernels of ``source``."""
    out = {}
    for name, params in re.findall(r'extern "C" __global__ void (\w+)\(([^)]*)\)', source):
        out[name] = [re.findall(r"(\w+)\s*$", p.strip())[0] for p in params.split(",")]
    return out


def histogram_read_bytes(listed, K, W, S, covered, G=None):
    """Bytes that one launch of ``histogram_shared`` / ``histogram_global`` reads.

    For every one of the ``G`` groups of the ``S`` sampled features (default ``G = S``, one
    feature per group) the kernels go once through the compacted list of the ``listed``
    covered examples: the list entry and the weight (int32) of each, and for each of the
    ``covered`` ones with weight != 0 its ``g`` (int64 K) and ``h`` (int64 W) rows; and for
    every sampled feature the ``bin_index`` entry (int32) of each of those.

    Returns: int."""
    G = S if G is None else G
    return int(G * (2 * 4 * listed + covered * (8 * K + 8 * W)) + S * covered * 4)


def sorted_read_bytes(n, K, W, S, listed, covered):
    """Bytes that one launch of ``histogram_sorted`` over ``S`` wide slots reads: for every
    slot and pass over the columns (64 of the K + W + 1 a pass), each of the ``n`` examples'
    entry (int64) and mask word (int32; missing examples' too, an upper bound), the weight
    (int32) of each of the ``listed`` covered ones, and once per slot the ``g`` and ``h``
    rows of the ``covered`` ones with weight != 0. The statistics follow the coverage; the
    entries do not (12 bytes per example and slot).

    Returns: int."""
    passes = -(-(K + W + 1) // 64)
    return int(S * (passes * (12 * n + 4 * listed) + covered * (8 * K + 8 * W)))


# zeroing writes a row, the tile sums read it, the (fused) candidates read it; the prefix
# sums in place (``histogram_search.fused_layout`` None) read and write it twice more
BIN_PASSES = 3


def bin_pass_bytes(rows, K, W):
    """Bytes that the per-step passes over ``rows`` histogram rows of ``K + W + 1`` int64
    columns move (``BIN_PASSES`` of them), however few examples are covered: with
    mlrl-boomer's default ``bin_ratio`` (0.33 n bins per continuous feature) these, not the
    statistics the histogram kernels read, grow with n.

    Returns: int."""
    return int(BIN_PASSES * 8 * (K + W + 1) * rows)


@dataclass
class DeviceCounters:
    """Counters on a CudaBackend instance (see the module docstring); ``counts`` grows while
    attached."""

    backend: object
    counts: Counts = None
    _saved: dict = None
    _graphs: object = None  # the backend's graphs, off while attached (``graphs.suspend``)

    def attach(self):
        b = self.backend
        if self._saved is not None:
            raise RuntimeError("the counters are already attached")
        self._graphs = graphs.suspend(b, "the counters count launches and copies")
        self.counts = Counts() if self.counts is None else self.counts
        self._saved = {name: getattr(b, name) for name in (
            "cp", "_hist", "_kernels", "_search_module", "_upload", "_wrap",
            "build_histograms")}
        cp = self._saved["cp"]
        names = _parameter_names(sources.kernel_source(sources.HISTOGRAM_SOURCE))
        b.cp = _CountingCupy(cp, self.counts)
        b._hist = {name: _CountingRawKernel(kernel, name, names[name], cp, self.counts)
                   for name, kernel in self._saved["_hist"].items()}
        b._kernels = _counting_module(self._saved["_kernels"], self.counts)
        b._search_module = _counting_module(self._saved["_search_module"], self.counts)
        b._upload = self._counted(self._saved["_upload"], "h2d")
        b._wrap = self._counted(self._saved["_wrap"], "wrappers")
        b.build_histograms = self._rows_counted(self._saved["build_histograms"])
        return self

    def _rows_counted(self, method):
        def counted(*args, **kwargs):
            result = method(*args, **kwargs)
            self.counts.histogram_rows += int(self.backend.slots[1][-1])  # the draw's rows
            return result
        return counted

    def _counted(self, method, field):
        def counted(*args):
            setattr(self.counts, field, getattr(self.counts, field) + 1)
            return method(*args)
        return counted

    def detach(self):
        for name, value in self._saved.items():
            setattr(self.backend, name, value)
        for name in ("_upload", "_wrap", "build_histograms"):  # the class's own methods
            self.backend.__dict__.pop(name, None)
        self._saved = None
        graphs.resume(self.backend, self._graphs)

    def __enter__(self):
        return self.attach()

    def __exit__(self, *exc):
        self.detach()

    def snapshot(self):
        """A copy of the counts so far."""
        return Counts(**{f.name: getattr(self.counts, f.name) for f in fields(Counts)})


class _CountingCupy:
    """Stands in for the CuPy module on the backend, counting copies and allocations."""

    def __init__(self, cp, counts):
        self._cp, self._counts = cp, counts

    def __getattr__(self, name):
        attr = getattr(self._cp, name)
        if name not in _ALLOCATORS:
            return attr

        def allocate(*args, **kwargs):
            self._counts.allocations += 1
            return attr(*args, **kwargs)
        return allocate

    def asarray(self, a, *args, **kwargs):
        device_array = getattr(self._cp, "ndarray", None)
        on_device = device_array is not None and device_array is not np.ndarray and \
            isinstance(a, device_array)
        if not on_device:
            self._counts.h2d += 1
            self._counts.allocations += 1
        return self._cp.asarray(a, *args, **kwargs)

    def asnumpy(self, a, *args, **kwargs):
        self._counts.d2h += 1
        return self._cp.asnumpy(a, *args, **kwargs)


class _CountingRawKernel:
    """A ``RawModule`` function that counts its launches and, for a histogram kernel, the
    bytes it reads."""

    def __init__(self, kernel, name, param_names, cp, counts):
        self._kernel, self._name, self._names = kernel, name, param_names
        self._cp, self._counts = cp, counts

    def __getattr__(self, name):  # max_dynamic_shared_size_bytes and the like
        return getattr(self._kernel, name)

    def __setattr__(self, name, value):
        if name.startswith("_"):
            object.__setattr__(self, name, value)
        else:
            setattr(self._kernel, name, value)

    def __call__(self, grid, block, args, **kwargs):
        self._counts.raw_launches += 1
        if self._name in _HISTOGRAM_KERNELS:
            self._counts.histogram_bytes += self._read_bytes(dict(zip(self._names, args)))
        return self._kernel(grid, block, args, **kwargs)

    def _read_bytes(self, a):
        if self._name == "histogram_sorted":
            return self._sorted_read_bytes(a)
        cp = self._cp
        n, ring = int(a["n"]), int(a["ring"])
        step = int(cp.asnumpy(a["cursor"])[0])
        listed = int(cp.asnumpy(a["lens"])[step % ring])
        covered = cp.asnumpy(cp.count_nonzero(
            a["weights"][a["lists"].reshape(2, n)[step % 2, :listed]]))
        groups = cp.asnumpy(a["groups"])
        sizes = np.diff(groups[1:int(groups[0]) + 2])
        # histogram_global_by_slot goes through the list once per slot, the others once per
        # group
        passes = sizes.sum() if self._name == "histogram_global_by_slot" else \
            np.count_nonzero(sizes)
        return histogram_read_bytes(listed, int(a["K"]), int(a["W"]), int(sizes.sum()),
                                    int(covered), int(passes))

    def _sorted_read_bytes(self, a):
        cp = self._cp
        covered = cp.asnumpy(a["mask"]) == int(cp.asnumpy(a["cursor"])[1])
        weights = cp.asnumpy(a["weights"])
        groups = cp.asnumpy(a["groups"])
        S = int(groups[1 + int(groups[0])] - groups[1])
        return sorted_read_bytes(int(a["n"]), int(a["K"]), int(a["W"]), S,
                                 int(covered.sum()), int(np.count_nonzero(weights[covered])))


def _counting_module(module, counts):
    """A kernels module whose Numba CUDA kernels (``module.KERNELS``) count launches."""
    return WrappedKernels(module, lambda kernel: _CountingDispatcher(kernel, counts))


class _CountingDispatcher:
    def __init__(self, kernel, counts):
        self._kernel, self._counts = kernel, counts

    def __getitem__(self, config):
        launch = self._kernel[config]

        def counted(*args):
            self._counts.numba_launches += 1
            return launch(*args)
        return counted
