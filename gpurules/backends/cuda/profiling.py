"""Per-phase timings of a CudaBackend fit, for benchmarks (never used by a normal fit).

:class:`PhaseProfiler` wraps the phase methods of one :class:`CudaBackend` *instance*
(``build_histograms``, ``_launch_histogram``, ``_launch_search``, ``_apply_selected``,
``apply_refinement``, ``update_statistics``, ``covered_totals``, ``start_fit``) and its
host<->device copies
(``cp.asarray`` of a host array, ``cp.asnumpy``) with CUDA-event timers. Each timed call
records an event before and after and synchronises on the second one, so profiling slows a
fit down: time fits without it. Phases nest (``_launch_histogram`` runs inside
``build_histograms``, copies inside most phases); a phase's *self* time excludes the timed
calls nested in it, so the self times add up to the profiled time.

:func:`histogram_bytes` counts the bytes one histogram launch must move, and
:func:`copy_bandwidth` measures the device's copy bandwidth with a large device-to-device
copy, so that the kernel's achieved GB/s can be put against what the memory delivers.
"""

import statistics
from dataclasses import dataclass, field

import numpy as np

from gpurules.backends.cuda import graphs

PHASES = ("start_fit", "build_histograms", "_launch_histogram", "_launch_search",
          "_apply_selected", "apply_refinement", "update_statistics", "covered_totals")
H2D, D2H = "copy host->device", "copy device->host"
# the profiler's own work: counting a histogram launch's bytes copies the covered list and
# the weights to the host; timed as a phase of its own, so that it is not the histogram
# build's self time (on the H200 of 2026-11-28 it was most of it: 0.66 ms per build)
BYTE_COUNT = "(profiler: byte count)"


def histogram_bytes(n, K, S, covered, bins_written, W=None):
    """Fewest bytes one histogram launch over ``S`` sampled features must move.

    Reads: the coverage mask and the instance weights (int32, all ``n`` examples), the
    ``bin_index`` entry (int32) of every covered example for each sampled feature, and the
    ``g`` row (int64, ``K``) and ``h`` row (int64, ``W``) of every covered example once.
    Writes: the histogram rows of the sampled features once (``hist_g``: int64 ``K`` per bin,
    ``hist_h``: int64 ``W`` per bin, ``hist_count``: int64 per bin). "Covered" = covered by
    the rule with a non-zero weight.

    Args:
        n, K, S: examples, labels, sampled features of the launch.
        covered: examples the launch adds (covered, weight != 0).
        bins_written: total bins of the launch's features.
        W: width of the Hessian rows: ``K`` (the default) for decomposable losses and count
            statistics, ``K (K + 1) / 2`` (packed Hessians) for non-decomposable losses.

    Returns:
        (bytes read, bytes written), ints.
    """
    W = K if W is None else W
    for name, value in (("n", n), ("K", K), ("S", S), ("covered", covered),
                        ("bins_written", bins_written), ("W", W)):
        if int(value) != value or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    if covered > n:
        raise ValueError(f"covered={covered} exceeds n={n}")
    read = 2 * 4 * n + 4 * S * covered + 8 * (K + W) * covered
    written = 8 * (K + W + 1) * bins_written
    return int(read), int(written)


@dataclass
class PhaseStats:
    """Totals of one phase: calls, self time and inclusive time (ms), and bytes (copies and
    histogram launches)."""

    calls: int = 0
    self_ms: float = 0.0
    total_ms: float = 0.0
    bytes: int = 0


@dataclass
class _Frame:
    children_ms: float = 0.0


@dataclass
class PhaseProfiler:
    """CUDA-event timers around a CudaBackend instance's phases (see the module docstring).

    Use as a context manager (``with PhaseProfiler(backend) as prof: learner.fit(...)``) or
    with :meth:`attach` / :meth:`detach`. ``stats`` maps a phase name to its
    :class:`PhaseStats`.
    """

    backend: object
    stats: dict = field(default_factory=dict)
    _stack: list = field(default_factory=list)
    _cp: object = None
    _graphs: object = None  # the backend's graphs, off while attached (``graphs.suspend``)

    def attach(self):
        """Shadow the phase methods and ``backend.cp`` on the instance."""
        b = self.backend
        if self._cp is not None:
            raise RuntimeError("the profiler is already attached")
        self._graphs = graphs.suspend(b, "the profiler times the launches of each phase")
        self._cp = b.cp
        for name in PHASES:
            setattr(b, name, self._timed(name, getattr(b, name)))
        b.cp = _TimedCopies(self._cp, self)
        return self

    def detach(self):
        """Restore the backend's own methods and CuPy module."""
        b = self.backend
        for name in PHASES:
            b.__dict__.pop(name, None)
        b.cp = self._cp
        self._cp = None
        graphs.resume(b, self._graphs)

    def __enter__(self):
        return self.attach()

    def __exit__(self, *exc):
        self.detach()

    def _timed(self, name, method):
        def wrapper(*args, **kwargs):
            result, _ = self.time_call(name, method, *args, **kwargs)
            if name == "_launch_histogram":
                counted, _ = self.time_call(BYTE_COUNT, self._launch_bytes, *args, **kwargs)
                self.stats[name].bytes += sum(counted)
            return result
        return wrapper

    def time_call(self, name, fn, *args, **kwargs):
        """Run ``fn(*args, **kwargs)`` between two events on the backend's stream (its
        ``_stream``, where it has one: all its work runs there; else the current stream);
        add its time to phase ``name``. Returns (result, inclusive ms)."""
        cp = self._cp
        stream = getattr(self.backend, "_stream", None)
        with cp.cuda.Device(self.backend.device_index):
            start, end = cp.cuda.Event(), cp.cuda.Event()
            self._stack.append(_Frame())
            start.record(stream)
            try:
                result = fn(*args, **kwargs)
            finally:
                end.record(stream)
                end.synchronize()
                frame = self._stack.pop()
            ms = float(cp.cuda.get_elapsed_time(start, end))
        s = self.stats.setdefault(name, PhaseStats())
        s.calls += 1
        s.total_ms += ms
        s.self_ms += ms - frame.children_ms
        if self._stack:
            self._stack[-1].children_ms += ms
        return result, ms

    def _launch_bytes(self, name, groups_dev, cursor_dev, weights_dev, shared_bytes):
        """histogram_bytes of one ``_launch_histogram`` call over the groups ``groups_dev``
        from the covered list of the refinement step ``cursor_dev[0]`` (counted after its
        timing)."""
        b, cp = self.backend, self._cp
        n, K = b.g.shape
        step = int(cp.asnumpy(cursor_dev)[0])
        lens = cp.asnumpy(b._lens)
        listed = cp.asnumpy(b._covered[step % 2])[:lens[step % lens.size]]
        covered = int(np.count_nonzero(cp.asnumpy(weights_dev)[listed]))
        groups = cp.asnumpy(groups_dev)
        first, stop = groups[1], groups[int(groups[0]) + 1]
        features = cp.asnumpy(b._features_dev)[first:stop]
        bins = int(np.sum(np.diff(np.asarray(b.features.bin_offset))[features]))
        return histogram_bytes(n, K, int(stop - first), covered, bins, W=b.h.shape[1])

    def histogram_gbps(self):
        """Achieved GB/s of the histogram kernel: launch bytes / launch time (NaN if none)."""
        s = self.stats.get("_launch_histogram")
        if s is None or s.total_ms <= 0:
            return float("nan")
        return s.bytes / (s.total_ms * 1e-3) / 1e9

    def rows(self):
        """[(phase, calls, self ms, inclusive ms, bytes)] in a fixed order."""
        order = list(PHASES) + [H2D, D2H, BYTE_COUNT]
        return [(name, s.calls, s.self_ms, s.total_ms, s.bytes)
                for name in order if (s := self.stats.get(name)) is not None]


class _TimedCopies:
    """Stands in for the CuPy module on the backend: ``asarray`` of a host array and
    ``asnumpy`` are timed as copies; everything else is CuPy's."""

    def __init__(self, cp, profiler):
        self._cp, self._profiler = cp, profiler

    def __getattr__(self, name):
        return getattr(self._cp, name)

    def asarray(self, a, *args, **kwargs):
        device_array = getattr(self._cp, "ndarray", None)
        if device_array is not None and isinstance(a, device_array):
            return self._cp.asarray(a, *args, **kwargs)  # already on the device
        result, _ = self._profiler.time_call(H2D, self._cp.asarray, a, *args, **kwargs)
        self._profiler.stats[H2D].bytes += int(result.nbytes)
        return result

    def asnumpy(self, a, *args, **kwargs):
        result, _ = self._profiler.time_call(D2H, self._cp.asnumpy, a, *args, **kwargs)
        self._profiler.stats[D2H].bytes += int(result.nbytes)
        return result


def copy_bandwidth(cp, nbytes=1 << 30, repeats=20, device_index=0):
    """Device-to-device copy bandwidth in GB/s: median over ``repeats`` copies of an
    ``nbytes`` buffer (after one warm-up copy), each timed with CUDA events, counting the
    bytes read plus the bytes written (``2 * nbytes``) per copy."""
    if nbytes <= 0 or repeats <= 0:
        raise ValueError("nbytes and repeats must be positive")
    with cp.cuda.Device(device_index):
        n = nbytes // 8
        src = cp.arange(n, dtype=cp.int64)  # not zeros: real data
        dst = cp.empty_like(src)
        cp.copyto(dst, src)
        times = []
        for _ in range(repeats):
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            cp.copyto(dst, src)
            end.record()
            end.synchronize()
            times.append(float(cp.cuda.get_elapsed_time(start, end)) * 1e-3)
        if not bool((dst[-1] == src[-1]).item()):
            raise RuntimeError("device copy produced wrong data")
        del src, dst
    return 2 * 8 * n / statistics.median(times) / 1e9
