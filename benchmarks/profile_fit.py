"""Where a CPU BOOMER fit spends its time, per phase of the engine (issue 17).

Each phase is a method of the CPU backend (``gpurules/backends/cpu/backend.py``), timed by
wrapping it (wall clock, ``time.perf_counter``; run on a quiet machine):

- ``refine_rule``: the fused refinement (search of the sampled features and the coverage
  update, several steps per call); with ``--stepwise`` the learner's stepwise loop runs
  instead, split into ``search`` (for the histogram search: ``build`` and ``scan``) and
  ``apply_refinement``;
- ``covered_totals``, ``reset_coverage``, ``update_statistics``, ``set_scale``/``start_fit``;
- ``learner``: the rest of the fit (the learner's Python code, heads, sampling);
- ``representation``: the feature representation built before the fit (pre-sorting or
  binning), timed on its own.

A fit the backend learns in batches of rules (``CpuBackend.learn_rules``, one compiled call
per batch: ``backends/cpu/fused_rules.py``) calls none of these methods, and shows as one
``learn_rules`` phase; ``--loop`` (implied by ``--stepwise``) makes the backend decline the
batches (``CpuBackend.learns_rules``), so that the learner's loop over rules calls the
phases above one by one. The batches and the loop learn the same model
(``tests/test_fused_rules.py``); the loop adds its Python per rule and per call.

A warm-up fit compiles the kernels first, so no phase includes Numba compilation: one rule
of one condition on the same data, threads and path (fused or ``--stepwise``) as the timed
fit (a warm-up on a sample would pick serial forms and leave the parallel ones, which the
thread thresholds choose only at full size, to be compiled inside the timed fit).
Data: ``make_multilabel_classification`` with 100 features and 20 labels (``int``:
counts with 6-9 distinct values per feature; ``cont``: N(0, 0.5^2) noise added).

    python benchmarks/profile_fit.py --n 10000 100000 --data int cont \\
        --search exact equal-width --rules 200 --threads 1

``--threads 1 2`` profiles each configuration on 1 and on 2 threads and adds a table of
each phase's speed-up (issue 17's scaling per phase).
"""

from __future__ import annotations

import argparse
import collections
import functools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpurules import BoomerClassifier  # noqa: E402
from gpurules.backends import base as backend_base  # noqa: E402
from gpurules.backends.cpu import histogram_search, histograms  # noqa: E402
from gpurules.backends.cpu.backend import CpuBackend  # noqa: E402
from gpurules.data.binning import BinnedFeatures, bin_features  # noqa: E402
from gpurules.data.presorted import presort_dense  # noqa: E402
from gpurules.data.sparse import presort_sparse, sparse_is_smaller  # noqa: E402

PHASES = ("learn_rules", "refine_rule", "find_best_refinement", "apply_refinement",
          "covered_totals", "reset_coverage", "update_statistics", "set_scale", "start_fit")


def synthetic(n, kind, seed=0):
    """X float32 (n, 100), Y uint8 (n, 20)."""
    from sklearn.datasets import make_multilabel_classification

    X, Y = make_multilabel_classification(n_samples=n, n_features=100, n_classes=20,
                                          random_state=seed)
    if kind == "cont":
        X = X + np.random.default_rng(seed).normal(0.0, 0.5, size=X.shape)
    return X.astype(np.float32), Y.astype(np.uint8)


class PhaseTimer:
    """Wraps the backend methods of :data:`PHASES` while active; ``seconds[phase]``,
    ``calls[phase]`` add up over the block (nested calls count in the outer phase only)."""

    def __init__(self):
        self.seconds = collections.Counter()
        self.calls = collections.Counter()
        self._depth = 0
        self._saved = {}

    def _wrap(self, phase, method):
        @functools.wraps(method)
        def timed(*args, **kwargs):
            if self._depth:
                return method(*args, **kwargs)
            self._depth += 1
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.seconds[phase] += time.perf_counter() - start
                self.calls[phase] += 1
                self._depth -= 1
        return timed

    def __enter__(self):
        for phase in PHASES:
            self._saved[phase] = getattr(CpuBackend, phase)
            setattr(CpuBackend, phase, self._wrap(phase, self._saved[phase]))
        return self

    def __exit__(self, *exc):
        for phase, method in self._saved.items():
            setattr(CpuBackend, phase, method)


def _split_histogram_search(timer):
    """A ``CpuBackend._search`` that times the histogram build and scan apart."""
    def search(backend, features, weights, totals, settings, scratch, outs, threads=1):
        if not isinstance(backend.features, BinnedFeatures):
            return original(backend, features, weights, totals, settings, scratch, outs,
                            threads)
        fs = backend.features
        start = time.perf_counter()
        _, data = backend._representation(threads)  # the fit's rows: rebuilt or reused
        histograms.update_histograms(features, data, backend.mask, backend.indicator,
                                           weights, threads, totals)
        middle = time.perf_counter()
        histogram_search.scan_histograms(
            features, fs.bin_offset, fs.bin_min, fs.bin_max, fs.nominal, backend.hist,
            backend.hist_count, *settings[:5], int(totals[2]), settings[5], *outs,
            n_threads=threads,
            work=scratch[1:3] if scratch[1] is not None else None)
        end = time.perf_counter()
        timer.seconds["  build"] += middle - start
        timer.seconds["  scan"] += end - middle
    original = CpuBackend._search
    return search


def stepwise_refine_rule(backend, *args):
    """``CpuBackend.refine_rule`` through the learner's stepwise reference loop."""
    return backend_base.refine_stepwise(backend, *args)


def estimator(search, rules, threads, seed=1, max_bins=0, head_type="auto",
              rule_induction="top-down-greedy"):
    parallel = "true" if threads > 1 else "false"
    binning = "none" if search != "equal-width" else (
        f"equal-width{{max_bins={max_bins}}}" if max_bins else "equal-width")
    return BoomerClassifier(device="cpu", max_rules=rules, random_state=seed,
                            feature_binning=binning, head_type=head_type,
                            rule_induction=rule_induction,
                            parallel_rule_refinement=parallel,
                            parallel_statistic_update=parallel)


def representation_seconds(X, search, max_bins=0):
    """Seconds to build the fit's feature representation (one thread): the bins, or the
    pre-sorted features in the format ``feature_format="auto"`` picks."""
    nominal = np.zeros(X.shape[1], bool)
    start = time.perf_counter()
    if search == "equal-width":
        bin_features(X, nominal, "equal-width", 0.33, 2, max_bins)
    elif sparse_is_smaller(X):
        presort_sparse(X, nominal)
    else:
        presort_dense(X, nominal)
    return time.perf_counter() - start


def profile(n, kind, search, rules, threads, stepwise, max_bins=0, head_type="auto",
            loop=False):
    """{phase: seconds} and the fit's wall seconds for one configuration; ``loop``: the
    learner's loop over rules instead of the backend's batches (module docstring)."""
    X, Y = synthetic(n, kind)
    timer = PhaseTimer()
    saved_refine, saved_search = CpuBackend.refine_rule, CpuBackend._search
    saved_learns = CpuBackend.learns_rules
    if loop or stepwise:
        CpuBackend.learns_rules = lambda backend, plan: False
    if stepwise:
        CpuBackend.refine_rule = stepwise_refine_rule
        CpuBackend._search = _split_histogram_search(PhaseTimer())  # (the warm-up's)
    try:
        estimator(search, 2, threads, max_bins=max_bins, head_type=head_type,
                  rule_induction="top-down-greedy{max_conditions=1}").fit(X, Y)  # compile
        if stepwise:
            CpuBackend._search = _split_histogram_search(timer)
        with timer:
            start = time.perf_counter()
            model = estimator(search, rules, threads, max_bins=max_bins,
                              head_type=head_type).fit(X, Y)
            total = time.perf_counter() - start
    finally:
        CpuBackend.refine_rule, CpuBackend._search = saved_refine, saved_search
        CpuBackend.learns_rules = saved_learns
    phases = dict(timer.seconds)
    timed = sum(v for k, v in phases.items() if not k.startswith(" "))
    phases["learner (rest of fit)"] = total - timed
    phases["representation (apart)"] = representation_seconds(X, search, max_bins)
    return phases, dict(timer.calls), total, model


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[10_000])
    parser.add_argument("--data", nargs="+", choices=("int", "cont"), default=["int"])
    parser.add_argument("--search", nargs="+", choices=("exact", "equal-width"),
                        default=["equal-width"])
    parser.add_argument("--rules", type=int, default=200)
    parser.add_argument("--head-type", default="auto", help="BOOMER's head_type")
    parser.add_argument("--max-bins", type=int, default=0,
                        help="equal-width's max_bins (0: mlrl-boomer's count, 0.33 n)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1],
                        help="thread counts; with several, also each phase's speed-up over "
                             "the first")
    parser.add_argument("--stepwise", action="store_true",
                        help="refine step by step, timing search (build/scan) and apply "
                             "(implies --loop)")
    parser.add_argument("--loop", action="store_true",
                        help="the learner's loop over rules instead of the backend's batches "
                             "of rules, so that each phase is timed")
    args = parser.parse_args(argv)
    print("| data | n | search | threads | fit s | phase | s | share | calls |")
    print("|---|---:|---|---:|---:|---|---:|---:|---:|")
    scaling = []
    for n in args.n:
        for kind in args.data:
            for search in args.search:
                runs = []
                for threads in args.threads:
                    phases, calls, total, _ = profile(n, kind, search, args.rules, threads,
                                                      args.stepwise, args.max_bins,
                                                      args.head_type, args.loop)
                    phases["fit"] = total
                    runs.append(phases)
                    for phase, seconds in sorted(phases.items(), key=lambda kv: -kv[1]):
                        if phase != "fit":
                            print(f"| {kind} | {n} | {search} | {threads} | {total:.2f} | "
                                  f"{phase} | {seconds:.3f} | {seconds / total:.0%} | "
                                  f"{calls.get(phase, '')} |", flush=True)
                scaling += [(kind, n, search, phase, [run.get(phase, 0.0) for run in runs])
                            for phase in runs[0] if not phase.startswith("representation")]
    if len(args.threads) > 1:
        print_scaling(args.threads, scaling)


def print_scaling(threads, rows):
    """Each phase's seconds per thread count and its speed-up over the first count (wall
    time: a phase whose seconds do not fall runs on one thread, or waits)."""
    others = threads[1:]
    print()
    print("| data | n | search | phase | " + " | ".join(f"{t} thr s" for t in threads) +
          " | " + " | ".join(f"{t} thr speed-up" for t in others) + " |")
    print("|---|---:|---|---|" + "---:|" * (len(threads) + len(others)))
    for kind, n, search, phase, seconds in rows:
        speed = [f"{seconds[0] / s:.2f}x" if s > 0 else "-" for s in seconds[1:]]
        print(f"| {kind} | {n} | {search} | {phase} | " +
              " | ".join(f"{s:.3f}" for s in seconds) + " | " + " | ".join(speed) + " |")


if __name__ == "__main__":
    main()
