"""The device memory of a CUDA fit: the estimate of a fit's arrays checked against the
device's free memory, the scratch buffers that grow only when a larger sample needs them,
and the host->device copies into them (one packed record per upload, ``records``).
:class:`DeviceMemory` holds these methods of ``CudaBackend``.
"""

import numpy as np

from gpurules.backends.cuda.records import pack, views


def fit_memory_bytes(n, A, K, W, hist_rows, target_bytes=1, sorted_features=0):
    """Device memory (bytes) of a fit's per-fit arrays and histograms.

    Per example: ``bin_index`` int32 (A), ``Y`` (K) of ``target_bytes`` each (uint8
    labels; float64 regression targets), ``P`` float64 (K), ``g`` int64
    (K), ``h`` int64 (W), mask, weights, unit weights and two covered lists int32, base
    weight float64; per
    histogram row (``hist_rows``: the bins of the features one refinement samples, at most
    the data set's ``total_bins``): ``hist_g`` (K), ``hist_h`` (W) and ``hist_count`` int64.
    ``start_fit`` checks this estimate, with the rows of the widest feature, against the
    device's free memory; the histograms of a larger sample and the search's other scratch
    (outputs, prefix sums, candidates) are checked when first allocated (``_buffer``).

    Returns: int."""
    per_example = (4 * A + target_bytes * K + 8 * K + 8 * K + 8 * W + 5 * 4 + 8
                   + 8 * sorted_features)
    return int(n * per_example + 8 * hist_rows * (K + W + 1))


class DeviceMemory:
    """The memory methods of ``CudaBackend`` (a base class of it): they use the backend's
    ``cp``, ``device``, ``_on_device``, ``_forget_views`` and the fit's ``_buffers`` and
    ``_buffer_views`` (set by ``start_fit``)."""

    def _check_memory(self, nbytes, what):
        """Raise MemoryError unless ``nbytes`` more device memory are free (CuPy's pool
        included), rather than let CUDA fail half-way through a fit."""
        with self._on_device():
            free = self.cp.cuda.runtime.memGetInfo()[0]
            pool = getattr(self.cp, "get_default_memory_pool", None)
            free += pool().free_bytes() if pool is not None else 0
        if nbytes > free:
            raise MemoryError(
                f"{what} needs about {nbytes / 2 ** 20:.1f} MiB of memory on {self.device} "
                f"but {free / 2 ** 20:.1f} MiB are free (estimate: "
                f"gpurules.backends.cuda.device_memory.fit_memory_bytes); fit on fewer examples, "
                f"features or bins, or with device='cpu'")

    def _buffer(self, name, shape, dtype, zero_new=False):
        """Device scratch ``shape``/``dtype`` (C order, contents undefined; zeros when newly
        allocated with ``zero_new``): a view of the first elements of the fit's buffer
        ``name``, (re-)allocated only when it is too small, so refinements of the same size
        allocate nothing. The view of a (name, shape, dtype) is made once and returned again
        until the buffer is re-allocated (no CuPy slicing on the per-step path)."""
        shape = tuple(int(d) for d in shape)
        key = (name, shape, np.dtype(dtype).char)
        view = self._buffer_views.get(key)
        if view is not None:
            return view
        size = int(np.prod(shape, dtype=np.int64))
        buf = self._buffers.get(name)
        if buf is None or buf.size < size or buf.dtype != np.dtype(dtype):
            self._check_memory(size * np.dtype(dtype).itemsize, f"the buffer {name!r}")
            allocate = self.cp.zeros if zero_new else self.cp.empty
            if buf is not None:
                self._forget_views(buf)  # it is released: no cached view may keep it
                for old in [k for k in self._buffer_views if k[0] == name]:
                    del self._buffer_views[old]
            buf = self._buffers[name] = allocate(max(size, 1), dtype)
        view = self._buffer_views[key] = buf[:size].reshape(shape)
        return view

    def _upload(self, host, device):
        """Copy the host array into the device array of the same shape and dtype (one
        host->device copy, no allocation)."""
        device.set(np.ascontiguousarray(host))

    def _upload_record(self, *arrays):
        """Upload host arrays as one packed record (one host->device copy); returns their
        device views, same dtypes and shapes (``records.pack``)."""
        host, offsets = pack(arrays)
        device = self._buffer("upload", host.shape, np.uint8)
        self._upload(host, device)
        return self._record_views("upload", device, arrays, offsets)

    def _record_views(self, name, device, arrays, offsets):
        """The device views (a tuple) of a packed record laid out as ``arrays`` at
        ``offsets`` in ``device``, a view of the buffer ``name`` (``records.views``): made
        once per layout and kept with the buffer's views (dropped when it is re-allocated),
        so a record of a known layout slices nothing."""
        key = (name, "record", tuple((a.dtype.char, a.shape) for a in arrays))
        kept = self._buffer_views.get(key)
        if kept is None:
            kept = self._buffer_views[key] = tuple(views(device, arrays, offsets))
        return kept
