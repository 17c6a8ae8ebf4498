"""The histogram kernels of wide features at scale: ``CudaBackend(wide_histograms=...)``'s
``"global"``, ``"by-slot"`` and ``"sorted"`` build the same histograms of the same sampled
features, on all examples covered and on a part of them; each build is timed (median of
``repeats``), its GB/s counted with ``profiling.histogram_bytes`` (the bytes a build must
move, the same for every kernel) and put against the device's copy bandwidth
(``profiling.copy_bandwidth``, issue 14's target: at least 50 %). The three kernels'
histograms must be equal, bit for bit.

The data: ``S`` features of ``bins`` bins each (default: n = 1e6, 7 features of 168,000
bins, 20 labels, what a step of ``compare_devices.py``'s 1e6 fit builds; uniform random
bins), a squared-error fit's statistics. A build is ``zero_histograms`` and the histogram
kernel (``build_histograms``); the zeroing's bytes are not counted.

Run by ``gpu_diagnose.py --parts histograms`` (``gpu_run.sh``'s diagnose step) or by hand:
``python benchmarks/wide_histograms.py [--n 1e6] [--bins 168000]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's gpurules

SHARES = (1.0, 0.5)  # the covered share of the examples of each measurement


def problem(n, S, K, bins, seed=1):
    """(BinnedFeatures of ``S`` features with ``bins`` bins each, uniform random bins;
    labels uint8 (n, K))."""
    from gpurules.data.binning import BinnedFeatures

    rng = np.random.default_rng(seed)
    bin_index = rng.integers(0, bins, size=(S, n), dtype=np.int32)
    num_bins = np.full(S, bins, np.int32)
    bin_offset = np.arange(S + 1, dtype=np.int64) * bins
    edges = np.tile(np.arange(bins, dtype=np.float32), S)
    binned = BinnedFeatures(bin_index, num_bins, bin_offset, edges, edges.copy(),
                            np.zeros(S, bool))
    return binned, (rng.random((n, K)) < 0.3).astype(np.uint8)


def cuda_events(backend):
    """A timer of ``fn()`` on ``backend``'s stream with CUDA events (ms)."""
    cp = backend.cp

    def timed(fn):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record(backend._stream)
        fn()
        end.record(backend._stream)
        end.synchronize()
        return float(cp.cuda.get_elapsed_time(start, end))
    return timed


def wall_clock(backend):
    """A host timer (ms), for runs without a GPU (the simulator)."""
    def timed(fn):
        start = time.perf_counter()
        fn()
        return (time.perf_counter() - start) * 1e3
    return timed


def measure(make_backend, binned, Y, repeats=10, shares=SHARES, timer=cuda_events):
    """Rows (kernel, covered share, median ms, GB/s) of each ``wide_histograms`` setting and
    covered share; ``make_backend(wide)``: a fresh CudaBackend. Raises AssertionError if
    two settings' histograms differ."""
    from gpurules.backends.cuda.histograms import WIDE_HISTOGRAMS
    from gpurules.backends.cuda.profiling import histogram_bytes
    from gpurules.objectives.losses import DECOMPOSABLE_LOSSES

    S, n = binned.bin_index.shape
    K = Y.shape[1]
    features = np.arange(S, dtype=np.int64)
    masks = [(np.random.default_rng(2).random(n) < share).astype(np.int32) for share in shares]
    rows, reference = [], {}
    for wide in WIDE_HISTOGRAMS:
        backend = make_backend(wide)
        backend.start_fit(binned, Y, DECOMPOSABLE_LOSSES["squared-error-decomposable"],
                          np.ones(n), 2.0 ** 20)
        time_it = timer(backend)
        for share, mask in zip(shares, masks):
            backend.set_coverage(mask, 1)
            with backend._on_device():
                ms = statistics.median(
                    time_it(lambda: backend.build_histograms(features, None))
                    for _ in range(repeats))
            got = backend.partial_histograms(features, None)
            want = reference.setdefault(share, got)
            assert np.array_equal(got, want), f"{wide}: histograms differ at {share}"
            moved = sum(histogram_bytes(n, K, S, int(mask.sum()), binned.total_bins))
            rows.append((wide, share, ms, moved / (ms * 1e-3) / 1e9))
    return rows


def report(rows, copy_gbps):
    """Print the rows of :func:`measure` with each GB/s as a share of ``copy_gbps``."""
    print(f"device copy bandwidth: {copy_gbps:.0f} GB/s")
    print(f"{'wide_histograms':<16} {'covered':>8} {'ms':>9} {'GB/s':>8} {'% copy':>7}")
    for wide, share, ms, gbps in rows:
        print(f"{wide:<16} {share:>8.0%} {ms:>9.3f} {gbps:>8.1f} "
              f"{100 * gbps / copy_gbps:>6.1f}%")


def run(n=1_000_000, S=7, K=20, bins=168_000, repeats=10):
    """:func:`measure` on the GPU (every feature wide: global atomics forced) and
    :func:`report`."""
    from gpurules.backends.cuda import CudaBackend
    from gpurules.backends.cuda.profiling import copy_bandwidth

    binned, Y = problem(n, S, K, bins)
    print(f"n = {n}, {S} features of {bins} bins, {K} labels, median of {repeats} builds")
    rows = measure(lambda wide: CudaBackend(0, force_global_atomics=True,
                                            wide_histograms=wide), binned, Y, repeats)
    import cupy as cp

    report(rows, copy_bandwidth(cp))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=float, default=1e6, help="examples (default 1e6)")
    p.add_argument("--features", type=int, default=7, help="sampled features (default 7)")
    p.add_argument("--labels", type=int, default=20, help="labels (default 20)")
    p.add_argument("--bins", type=int, default=168_000, help="bins a feature (168,000)")
    p.add_argument("--repeats", type=int, default=10, help="builds timed (default 10)")
    args = p.parse_args(argv)
    run(int(args.n), args.features, args.labels, args.bins, args.repeats)


if __name__ == "__main__":
    main()
