"""Equal-width binning at scale, on the host and on the device: ``data.binning.bin_features(
X, ..., "equal-width", drop_empty=True)`` on every host core against ``CudaBackend(
device_binning=True).bin_features`` (``backends/cuda/binning.py``), which a CUDA fit then
takes as it is. The device's time includes what a fit pays for it: X's upload and the
copies of the bins' ranges back (``bin_index`` stays on the device). Each is timed by the
host's clock (median of ``repeats``); the two results must be the same, bit for bit. The
host's figure leaves out the upload of its ``bin_index`` (the same bytes as X's), which its
fit pays in ``start_fit``.

The data: n = 1e6 examples of 100 continuous features (N(0, 1), 1 % missing), what
``compare_devices.py``'s 1e6 fit bins (0.33 n bins a feature).

Run by ``gpu_diagnose.py --parts binning`` (``gpu_run.sh``'s diagnose step) or by hand:
``python benchmarks/device_binning.py [--n 1e6] [--features 100]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's gpurules


def problem(n, A, seed=1):
    """float32 (n, A): N(0, 1) values, 1 % of them missing (NaN)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, A), dtype=np.float32)
    X[rng.random((n, A)) < 0.01] = np.nan
    return X


def _median_s(fn, repeats):
    """(median seconds of ``repeats`` calls of ``fn()``, its last result)."""
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def measure(backend, X, repeats=5):
    """(host seconds, device seconds): medians of ``repeats`` binnings of ``X`` after one
    of each (compiles); ``backend``: a CudaBackend with ``device_binning`` on. Raises
    AssertionError if the two results differ."""
    from gpurules.data.binning import bin_features

    nominal = np.zeros(X.shape[1], bool)

    def host():
        return bin_features(X, nominal, "equal-width", drop_empty=True)

    def device():  # (its last copy, of the bins' ranges, waits for every pass)
        return backend.bin_features(X, nominal, "equal-width", {})

    host(), device()
    host_s, want = _median_s(host, repeats)
    device_s, got = _median_s(device, repeats)
    index = backend.cp.asnumpy(got.bin_index)
    assert np.array_equal(index, want.bin_index), "bin_index differs"
    for field in ("num_bins", "bin_offset", "bin_min", "bin_max"):
        a, b = getattr(got, field), getattr(want, field)
        assert a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8)), \
            f"{field} differs"
    return host_s, device_s


def run(n=1_000_000, A=100, repeats=5):
    """:func:`measure` on the GPU; prints both medians."""
    import numba

    from gpurules.backends.cuda import CudaBackend

    X = problem(n, A)
    host_s, device_s = measure(CudaBackend(0, device_binning=True), X, repeats)
    print(f"n = {n}, {A} features: equal-width binning, median of {repeats} (equal bins)")
    print(f"host ({numba.get_num_threads()} threads): {host_s * 1e3:9.1f} ms")
    print(f"device (X's upload, the passes, the ranges' copies): {device_s * 1e3:9.1f} ms")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=float, default=1e6, help="examples (default 1e6)")
    p.add_argument("--features", type=int, default=100, help="features (default 100)")
    p.add_argument("--repeats", type=int, default=5, help="binnings timed (default 5)")
    args = p.parse_args(argv)
    run(int(args.n), args.features, args.repeats)


if __name__ == "__main__":
    main()
