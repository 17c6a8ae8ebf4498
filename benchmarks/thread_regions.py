"""What a second thread buys the CPU searches of one fit, call by call.

Fits ``BoomerClassifier`` on two threads, keeps a copy of the arguments of every
``--every``-th call of the fused refinement (``backends/cpu/refine.py``) that ran on two
threads, and replays those calls alone, each on fresh copies: the serial form, the parallel
form on one thread and on two (rounds interleaved; medians). It also times a parallel region
that does nothing: what waking Numba's thread pool costs under the current
``OMP_WAIT_POLICY`` (``passive``: the workers sleep between regions; unset: they spin).
``docs/benchmarks.md``, session 37, holds a run and what it showed.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/thread_regions.py \\
        --data enron --loss logistic-non-decomposable
    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/thread_regions.py \\
        --synthetic 100000 --loss logistic-decomposable --rules 200 --every 50 --max-calls 20

(``--synthetic N``: ``profile_fit.py``'s count data, N examples, 100 features, 20 labels,
all of it for training; each captured call keeps a copy of the statistics and the feature
arrays, so keep ``--max-calls`` small at large N.)

Prints nothing about the model; times are wall seconds of this process alone (run it on a
quiet machine).
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

C.use_repo_checkout()

from gpurules import BoomerClassifier  # noqa: E402
from gpurules.backends.cpu import refine  # noqa: E402

TWO_THREADS = dict(parallel_rule_refinement="true", parallel_statistic_update="true",
                   parallel_prediction="true")


@numba.njit(parallel=True)
def _empty_region(out):
    for t in numba.prange(out.shape[0]):
        out[t] += 1.0


def wake_cost(rounds=200):
    """Median seconds of a two-thread region over two trivial iterations."""
    out = np.zeros(2)
    numba.set_num_threads(2)
    _empty_region(out)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        _empty_region(out)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def capture(X, Y, nominal, loss, every, limit, seed, rules):
    """[(kernel, args)]: copies of every ``every``-th two-thread call of the fused
    refinement during one two-thread fit of ``rules`` rules (0: the default) on ``X``,
    ``Y`` (at most ``limit``), and the number of such calls."""
    calls, seen = [], [0]
    originals = {kernel: kernel.run for kernel in refine.REFINE.values()}

    def recording(kernel):
        def run(n_threads, *args):
            if n_threads > 1:
                seen[0] += 1
                if seen[0] % every == 0 and len(calls) < limit:
                    calls.append((kernel, copy.deepcopy(args)))
            return originals[kernel](n_threads, *args)
        return run

    for kernel in originals:
        kernel.run = recording(kernel)
    params = dict(loss=loss, random_state=seed, device="cpu", **TWO_THREADS)
    if rules:
        params["max_rules"] = rules
    try:
        BoomerClassifier(**params).fit(X, Y, nominal_feature_indices=nominal)
    finally:
        for kernel, run in originals.items():
            kernel.run = run
    return calls, seen[0]


def replay(calls, parallel, threads):
    """Seconds of the captured calls in the serial (``parallel=False``) or parallel form on
    ``threads`` threads, each call on a fresh copy of its arguments."""
    total = 0.0
    numba.set_num_threads(threads)
    for kernel, args in calls:
        fresh = copy.deepcopy(args)
        form = kernel.form(parallel)
        start = time.perf_counter()
        form(*fresh)
        total += time.perf_counter() - start
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="enron", help="a data set of --data-dir")
    parser.add_argument("--synthetic", type=int, default=0, metavar="N",
                        help="count data of N examples instead of --data")
    parser.add_argument("--data-dir", default=str(C.DEFAULT_DATA_DIR))
    parser.add_argument("--loss", default="logistic-non-decomposable")
    parser.add_argument("--every", type=int, default=4, help="keep every k-th call")
    parser.add_argument("--max-calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rules", type=int, default=0, help="max_rules (0: the default)")
    args = parser.parse_args()
    if numba.config.NUMBA_NUM_THREADS < 2:
        sys.exit("thread_regions.py needs at least 2 Numba threads")
    print(f"threading layer wake-up (empty two-thread region): {wake_cost() * 1e6:.1f} us, "
          f"layer {numba.threading_layer()}")
    if args.synthetic:
        from profile_fit import synthetic

        name = f"count data, n = {args.synthetic}"
        X, Y = synthetic(args.synthetic, "int")
        nominal = []
    else:
        name = args.data
        split = C.load_split(args.data_dir, args.data)
        X, Y, nominal = split.X_train, split.Y_train, list(split.nominal_features)
    calls, seen = capture(X, Y, nominal, args.loss, args.every, args.max_calls, args.seed,
                          args.rules)
    print(f"{name}, {args.loss}: {seen} refinement calls on two threads, "
          f"{len(calls)} replayed")
    if not calls:
        return
    modes = {"serial form": (False, 1), "parallel form, 1 thread": (True, 1),
             "parallel form, 2 threads": (True, 2)}
    for parallel, threads in modes.values():  # compile and warm
        replay(calls[:2], parallel, threads)
    seconds = {name: [] for name in modes}
    for _ in range(args.rounds):
        for name, (parallel, threads) in modes.items():
            seconds[name].append(replay(calls, parallel, threads))
    serial = C.median(seconds["serial form"])
    for name, values in seconds.items():
        m = C.median(values)
        print(f"{name:26s} median {m * 1e3:8.1f} ms  ({m / serial:.2f}x the serial form; "
              f"{', '.join(f'{v * 1e3:.1f}' for v in values)})")


if __name__ == "__main__":
    main()
