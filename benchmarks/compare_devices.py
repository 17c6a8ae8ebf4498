"""Fit time of gpurules on the CPU and on CUDA against mlrl-boomer, in the same run (issue 4).

Systems (``--systems``, default all): ``device_systems.py`` lists them and makes their
estimators.

Every CPU system uses ``--threads`` (``all``: ``parallel_*="true"``, all host cores; ``1``:
``"false"``), mlrl-boomer included.
When CUDA is not usable the CUDA rows say "not available (reason)".

Data: synthetic dense multi-label data from ``sklearn.datasets.make_multilabel_classification``
(100 features, 20 labels, ``random_state=--seed``) with ``n`` training examples for each of
``--sizes`` and ``max(1000, min(n // 4, 100000))`` test examples drawn after them, plus the
MULAN train/test splits of ``--datasets``. Its features are word counts with 6-9 distinct
values, which hides the cost of scanning many bins; ``--synthetic continuous`` (the default)
adds Gaussian noise (``--noise``, standard deviation) so that every feature is continuous,
``--synthetic counts`` keeps the counts. ``--data-cache DIR`` keeps the generated arrays in
``DIR`` for later runs (sklearn makes 1.25e6 examples in 30 s to 3 minutes); ``--only-data``
makes them there and stops (``gpu_run.sh`` does so beside its first steps;
``synthetic_data.py``). Quality on the test part: Hamming loss, subset 0/1 loss,
example-wise F1 (see benchmarks/_common.py). Every learner gets ``random_state=1``.

Times (``time.perf_counter``, and process CPU time for the growth exponents): the median of
``--repeats`` fits; after the table, each system's growth exponent ``e`` (fit time ~ n^e)
between consecutive synthetic sizes. Before the fits gpurules makes an
untimed 10-rule fit on (at most 1,000 examples of) the same data, so that Numba/NVRTC
compilation is left out;
``--skip-cold`` skips the separate cold fit (a fresh process with empty Numba and CuPy caches,
first data set only). ``--max-fit-seconds T``: once a system's median fit exceeds ``T`` on a
synthetic size, its larger sizes are reported as not run (with the reason).

CUDA work per refinement: one extra fit per data set of ``cuda-hist``, or where it does not
run of the first CUDA system (``work_system``: yeast's and scene's ``cuda-nd``), with
:class:`gpurules.backends.cuda.counters.DeviceCounters` on its backend (kernel launches,
device->host and host->device copies, device allocations, bytes read by the histogram
kernels, the bytes of the passes over the sampled features' histogram rows (zeroing, tile
sums, candidates: ``counters.bin_pass_bytes``), each divided by the fit's refinements), a
modelled time per refinement ((histogram + bin pass bytes) / ``--model-gbps`` + launches x
``--model-launch-us``) and the measured one (median fit time / refinements; it includes the
host's work and the per-rule phases).

CUDA phases: one extra fit per data set of the same system with
:class:`gpurules.backends.cuda.profiling.PhaseProfiler` attached (events and a
synchronisation around every phase, so it is not one of the timed fits): self time per
phase (histogram kernel, histogram build around it, scan, coverage, statistics update,
totals, copies), the histogram kernel's achieved GB/s (fewest bytes it must move / its
time) and the device's device-to-device copy bandwidth.

    /work/bench312/bin/python benchmarks/compare_devices.py --sizes 1e4 3e4 \\
        --datasets yeast --repeats 1 --output /tmp/devices.md --plot docs/fit_time_vs_n.png
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # before mlrl's OpenMP runtime loads

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import _common as C  # noqa: E402
import _cuda_work as W  # noqa: E402
from device_systems import (SYSTEMS, count_rules, cuda_reason, make_estimator,  # noqa: E402
                            same_bins_reference)
from synthetic_data import synthetic_file, synthetic_name, synthetic_split  # noqa: E402

C.use_repo_checkout()

COLD_FLAG = "--_cold"
HEADERS = ["data", "n_train", "n_test", "system", "fit s", "vs boomer-exact",
           "vs boomer, same bins", "rules", "Hamming %", "subset 0/1 %", "ex-F1 %"]


# --------------------------------------------------------------------------- data


def load_data(spec: str, data_dir: Path, seed: int, noise: float = 0.0,
              cache: Path | None = None) -> C.Split:
    """``"synthetic:<n>"`` (kept in ``cache``: :func:`synthetic_split`) or a MULAN dataset
    name."""
    if spec.startswith("synthetic:"):
        return synthetic_split(int(spec.split(":", 1)[1]), seed, noise, cache)
    return C.load_split(data_dir, spec, dense=True)


def parse_size(text: str) -> int:
    """``"1e4"`` or ``"10000"`` -> 10000."""
    value = float(text)
    if value < 10 or value != int(value):
        raise argparse.ArgumentTypeError(f"size must be an integer >= 10, got {text!r}")
    return int(value)


def measure(system: str, split: C.Split, args: argparse.Namespace) -> dict:
    """Median fit time over ``args.repeats`` fresh fits; quality and rules of the last."""
    times, cpu_times, clf = [], [], None
    for _ in range(args.repeats):
        clf = make_estimator(system, args.max_rules, args.threads)
        cpu = time.process_time()
        seconds, _ = C.timed(lambda: clf.fit(split.X_train, split.Y_train))
        cpu_times.append(time.process_time() - cpu)
        times.append(seconds)
    result = C.quality(split.Y_test, clf.predict(split.X_test))
    result.update(fit_s=C.median(times), fit_cpu_s=C.median(cpu_times),
                  rules=count_rules(system, clf))
    return result


def growth_rows(sizes: list[int], results: dict, systems: list[str],
                noise: float = 0.0) -> list[list]:
    """Per system and pair of consecutive synthetic sizes n1 < n2, the growth exponent
    ``log(t2 / t1) / log(n2 / n1)`` of its fit time t, in process CPU time and in wall
    time (a fit that grows as n^e has exponent e)."""
    rows = []
    for system in systems:
        for n1, n2 in zip(sizes, sizes[1:]):
            r1, r2 = (results.get((synthetic_name(n, noise), system), {}) for n in (n1, n2))
            if "fit_s" not in r1 or "fit_s" not in r2:
                continue
            scale = math.log(n2 / n1)
            rows.append([system, f"{n1:g} -> {n2:g}",
                         f"{math.log(r2['fit_cpu_s'] / r1['fit_cpu_s']) / scale:.2f}",
                         f"{math.log(r2['fit_s'] / r1['fit_s']) / scale:.2f}"])
    return rows


def warm_up(system: str, split: C.Split, args: argparse.Namespace) -> None:
    """Untimed short fits on this data set, so that every compiled specialisation the timed
    fits need exists (compiled code is cached in-process): 10 rules on at most 1000
    examples, then one rule of one condition on all of them (on the sample, the thread
    thresholds pick the kernels' serial forms, and the parallel ones would be compiled
    inside the first timed fit). The 10-rule model also predicts ``MIN_PARALLEL_WORK``
    rows, so that the prediction's parallel form (from that many examples x rules:
    ``jit.threads``) is compiled: a fit ends by recording its rules' training coverage
    with it, and a first two-thread fit at 10^4 examples compiled it (0.8 of its 1.6 s)."""
    from gpurules.jit.threads import MIN_PARALLEL_WORK

    clf = make_estimator(system, 10, args.threads)
    m = min(split.n_train, 1000)
    clf.fit(split.X_train[:m], split.Y_train[:m])
    clf.predict(np.resize(split.X_train[:m], (MIN_PARALLEL_WORK, split.X_train.shape[1])))
    if split.n_train > m:
        clf = make_estimator(system, 2, args.threads)
        clf.set_params(rule_induction="top-down-greedy{max_conditions=1}")
        clf.fit(split.X_train, split.Y_train)


def cold_fit_subprocess(system: str, spec: str, args: argparse.Namespace) -> float:
    """Seconds of the first fit in a fresh process with empty Numba and CuPy caches."""
    with tempfile.TemporaryDirectory(prefix="gpurules-cold-") as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=str(Path(tmp) / "numba"),
                   CUPY_CACHE_DIR=str(Path(tmp) / "cupy"))
        cmd = [sys.executable, str(Path(__file__).resolve()), COLD_FLAG, json.dumps({
            "system": system, "spec": spec, "data_dir": str(args.data_dir), "seed": args.seed,
            "max_rules": args.max_rules, "threads": args.threads, "noise": args.noise,
            "data_cache": None if args.data_cache is None else str(args.data_cache)})]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True,
                              timeout=args.cold_timeout)
    for line in proc.stdout.splitlines():
        if line.startswith("COLD "):
            return float(json.loads(line[5:])["fit_s"])
    raise RuntimeError(f"cold fit failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")


def cold_fit_main(payload: str) -> None:
    """Entry point of the cold-fit subprocess: load, fit once, print ``COLD {json}``."""
    job = json.loads(payload)
    split = load_data(job["spec"], Path(job["data_dir"]), job["seed"], job["noise"],
                      job["data_cache"])
    clf = make_estimator(job["system"], job["max_rules"], job["threads"])
    seconds, _ = C.timed(lambda: clf.fit(split.X_train, split.Y_train))
    print("COLD " + json.dumps({"fit_s": seconds}), flush=True)


# --------------------------------------------------------------------------- machine


def gpu_lines(reason: str | None) -> tuple[list[str], float | None]:
    """Markdown lines on the GPU (name, versions, copy bandwidth) or why there is none, and
    the copy bandwidth in GB/s (None without a GPU)."""
    versions = (f"cupy {C.package_version('cupy-cuda12x', 'cupy')}, numba-cuda "
                f"{C.package_version('numba-cuda', 'numba_cuda')}")
    if reason is not None:
        return [f"- GPU: not available ({reason}); {versions}"], None
    import cupy as cp

    from gpurules.backends.cuda.profiling import copy_bandwidth

    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    memory = props["totalGlobalMem"] / 2 ** 30
    bandwidth = copy_bandwidth(cp)
    return [f"- GPU: {name}, {memory:.0f} GiB, CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}"
            f", driver {cp.cuda.runtime.driverGetVersion()}; {versions}",
            f"- device-to-device copy bandwidth (1 GiB cupy.copyto, read + write bytes, median "
            f"of 20, CUDA events): {bandwidth:.0f} GB/s"], bandwidth


# --------------------------------------------------------------------------- report


def fmt_pct(result: dict, key: str) -> str:
    return f"{100 * result[key]:.2f}" if key in result else "-"


def result_row(split: tuple, system: str, result: dict, by_system: dict) -> list:
    """One line of the main table for ``split = (name, n_train, n_test)``; ``result``
    holds numbers or a ``note``."""
    row = [*split, system]
    if "note" in result:
        return row + [result["note"]] + ["-"] * (len(HEADERS) - 5)
    same_bins = same_bins_reference(system)
    ratios = [C.fmt_ratio(result["fit_s"], by_system.get(ref, {}).get("fit_s"))
              for ref in ("boomer-exact", same_bins)]
    return row + [C.fmt_seconds(result["fit_s"]), *ratios, result["rules"],
                  fmt_pct(result, "hamming"), fmt_pct(result, "subset01"),
                  fmt_pct(result, "ex_f1")]


def plot(path: Path, sizes: list[int], results: dict, systems: list[str],
         noise: float = 0.0) -> None:
    """Log-log fit time against n (synthetic data), one line per system
    (``gpurules.plot.plot_fit_time``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from gpurules.plot import plot_fit_time

    rows = []
    for system in systems:
        for n in sizes:
            name = synthetic_name(n, noise)
            rows.append({"n_train": n, "system": system,
                         "fit s": results.get((name, system), {}).get("fit_s", "-")})
    ax = plot_fit_time(rows, xlabel="training examples n (100 features, 20 labels)")
    ax.figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    ax.figure.savefig(path, dpi=120)
    plt.close(ax.figure)


# --------------------------------------------------------------------------- main


def run_all(args: argparse.Namespace, reason: str | None):
    """Measure every (data set, system); returns (splits [(name, n_train, n_test)],
    results {(name, system): dict}, profiles, cold, errors); the per-refinement counts of
    the CUDA fits land in ``results[(name, "cuda-work")]``."""
    specs = [f"synthetic:{n}" for n in args.sizes] + list(args.datasets)
    splits, results, profiles, cold, errors = [], {}, {}, {}, []
    too_slow: dict[str, str] = {}
    ours = [s for s in args.systems if SYSTEMS[s][0] == "gpurules"]
    work = work_system(args.systems)
    for system in ours:
        if SYSTEMS[system][1] == "cuda" and reason:
            continue
        if not args.skip_cold:
            C.log(f"{system}: cold fit on {specs[0]} in a fresh process")
            try:
                cold[system] = cold_fit_subprocess(system, specs[0], args)
            except Exception:  # noqa: BLE001
                errors.append(f"{system} cold:\n{traceback.format_exc()}")
    for spec in specs:
        C.log(f"loading {spec}")
        split = load_data(spec, args.data_dir, args.seed, args.noise, args.data_cache)
        for system in args.systems:
            key = (split.name, system)
            if SYSTEMS[system][1] == "cuda" and reason:
                results[key] = {"note": f"not available ({reason})"}
                continue
            if system in too_slow and spec.startswith("synthetic:"):
                results[key] = {"note": f"not run ({too_slow[system]})"}
                continue
            try:
                if SYSTEMS[system][0] == "gpurules":
                    warm_up(system, split, args)
                results[key] = measure(system, split, args)
                C.log(f"{split.name}/{system}: fit {results[key]['fit_s']:.3f}s, Hamming "
                      f"{100 * results[key]['hamming']:.2f}%")
            except Exception:  # noqa: BLE001 - report and go on
                errors.append(f"{split.name}/{system}:\n{traceback.format_exc()}")
                results[key] = {"note": "failed (traceback on stderr)"}
                continue
            limit = args.max_fit_seconds
            if limit and spec.startswith("synthetic:") and results[key]["fit_s"] > limit:
                too_slow[system] = (f"n={split.n_train} took {results[key]['fit_s']:.0f} s > "
                                    f"--max-fit-seconds {limit:g}")
        if work and not reason and "fit_s" in results.get((split.name, work), {}):
            try:
                results[(split.name, "cuda-work")] = W.counted_fit(
                    make_estimator(work, args.max_rules, args.threads), split)
            except Exception:  # noqa: BLE001
                errors.append(f"{split.name} counted cuda fit:\n{traceback.format_exc()}")
        if work and not reason and not args.skip_profile:
            try:
                profiles[split.name] = W.profiled_fit(
                    make_estimator(work, args.max_rules, args.threads), split)
            except Exception:  # noqa: BLE001
                errors.append(f"{split.name} profiled cuda fit:\n{traceback.format_exc()}")
        splits.append((split.name, split.n_train, split.n_test))
    return splits, results, profiles, cold, errors


def work_system(systems: list[str]) -> str | None:
    """The system whose fits are counted and profiled (the CUDA work per refinement and
    the phases): ``cuda-hist`` if it runs, else the first CUDA system (yeast and scene's
    ``cuda-nd``), None without one."""
    cuda = [s for s in systems if SYSTEMS[s][1] == "cuda"]
    return "cuda-hist" if "cuda-hist" in cuda else next(iter(cuda), None)


def report(args, splits, results, profiles, cold, machine, copy_gbps) -> str:
    """The Markdown report: machine, settings, the main table, cold fits, CUDA phases."""
    lines = ["## gpurules on CPU and CUDA vs mlrl-boomer (compare_devices.py)", ""]
    lines += machine
    lines += [
        f"- command: `{' '.join([Path(sys.argv[0]).name] + sys.argv[1:])}`",
        f"- systems: {', '.join(args.systems)}; CPU threads (gpurules and mlrl-boomer): "
        f"{args.threads} (parallel_*=\"{'true' if args.threads == 'all' else 'false'}\"); "
        f"max_rules="
        f"{args.max_rules if args.max_rules else 'default (1000)'}; random_state=1",
        f"- synthetic data: make_multilabel_classification(100 features, 20 labels, "
        f"random_state={args.seed})"
        + (f" + N(0, {args.noise:g}^2) noise (continuous features)" if args.noise > 0 else
           " (word counts, 6-9 distinct values per feature)")
        + ", test part max(1000, min(n/4, 1e5)) examples",
        f"- times: median of {args.repeats} fit(s); gpurules after warm-up fits (10 rules on "
        f"1000 examples, one condition on all); "
        f"ratios = system / mlrl-boomer in this run",
        "- quality on the test part; ex-F1 = f1_score(average=\"samples\", zero_division=1)",
        "",
    ]
    rows = []
    for split in splits:
        by_system = {s: results.get((split[0], s), {}) for s in args.systems}
        rows += [result_row(split, s, by_system[s], by_system) for s in args.systems]
    lines.append(C.markdown_table(HEADERS, rows))
    growth = growth_rows(args.sizes, results, args.systems, args.noise)
    if growth:
        lines += ["", "Growth exponent e of the fit time (t ~ n^e) between consecutive "
                  "synthetic sizes (median fits):", "",
                  C.markdown_table(["system", "n", "e, CPU time", "e, wall time"], growth)]
    if cold:
        lines += ["", "Cold fit (fresh process, empty Numba/CuPy caches, first data set):", ""]
        lines.append(C.markdown_table(["system", "cold fit s"],
                                      [[s, C.fmt_seconds(t)] for s, t in cold.items()]))
    system = work_system(args.systems)
    work = [W.work_row(split[0], results[(split[0], "cuda-work")],
                     results.get((split[0], system), {}).get("fit_s"), args)
            for split in splits if (split[0], "cuda-work") in results]
    if work:
        lines += ["", f"### CUDA work per refinement of {system} (model: "
                  f"{args.model_gbps:g} GB/s, {args.model_launch_us:g} us per launch)", "",
                  C.markdown_table(W.WORK_HEADERS, work)]
    for name, profile in profiles.items():
        lines += ["", f"### CUDA phases of {system}: {name}", "",
                  W.phase_table(profile, copy_gbps)]
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", nargs="*", type=parse_size, default=[10_000, 100_000, 1_000_000],
                   help="synthetic training sizes (default: 1e4 1e5 1e6)")
    p.add_argument("--datasets", nargs="*", default=["yeast", "scene"],
                   help="MULAN data sets (default: yeast scene)")
    p.add_argument("--systems", nargs="*", default=list(SYSTEMS), choices=list(SYSTEMS),
                   help="subset of the systems (default: all)")
    p.add_argument("--repeats", type=int, default=3, help="timed fits (median)")
    p.add_argument("--max-rules", type=int, help="max_rules for every learner (default 1000)")
    p.add_argument("--threads", choices=("1", "all"), default="all",
                   help="CPU threads of every CPU system, gpurules' and mlrl-boomer's "
                        "(1: parallel_*=\"false\"; all: \"true\")")
    p.add_argument("--seed", type=int, default=1, help="seed of the synthetic data")
    p.add_argument("--synthetic", choices=("continuous", "counts"), default="continuous",
                   help="synthetic features: counts + Gaussian noise (default) or the counts")
    p.add_argument("--noise", type=float, default=1.0,
                   help="standard deviation of the noise of --synthetic continuous")
    p.add_argument("--model-gbps", type=float, default=2000.0,
                   help="assumed device memory bandwidth of the per-refinement model, GB/s")
    p.add_argument("--model-launch-us", type=float, default=5.0,
                   help="assumed cost of one launch (or memset) in the model, microseconds")
    p.add_argument("--max-fit-seconds", type=float,
                   help="skip a system's larger synthetic sizes once its fit took longer")
    p.add_argument("--skip-cold", action="store_true", help="no cold-fit subprocess")
    p.add_argument("--skip-profile", action="store_true", help="no profiled CUDA fit")
    p.add_argument("--cold-timeout", type=float, default=1800)
    p.add_argument("--data-dir", type=Path, default=C.DEFAULT_DATA_DIR)
    p.add_argument("--data-cache", type=Path,
                   help="folder that keeps the synthetic data sets (made once, then loaded)")
    p.add_argument("--only-data", action="store_true",
                   help="make the synthetic data sets of --sizes in --data-cache and stop")
    p.add_argument("--output", type=Path, help="also write the Markdown report here")
    p.add_argument("--plot", type=Path, help="PNG of fit time against n (synthetic sizes)")
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error("--repeats must be >= 1")
    if not args.sizes and not args.datasets:
        p.error("nothing to run: give --sizes and/or --datasets")
    if args.only_data and (args.data_cache is None or not args.sizes):
        p.error("--only-data needs --data-cache and --sizes")
    args.sizes = sorted(set(args.sizes))
    if args.synthetic == "counts":
        args.noise = 0.0
    elif args.noise <= 0:
        p.error("--noise must be > 0 with --synthetic continuous")
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [COLD_FLAG]:
        cold_fit_main(argv[1])
        return 0
    args = parse_args(argv)
    if args.only_data:
        for n in args.sizes:
            start = time.perf_counter()
            synthetic_split(n, args.seed, args.noise, args.data_cache)
            C.log(f"synthetic data, n = {n:g}, ready after {time.perf_counter() - start:.1f} s:"
                  f" {synthetic_file(args.data_cache, n, args.seed, args.noise)}")
        return 0
    on_cuda = [s for s in args.systems if SYSTEMS[s][1] == "cuda"]
    reason = cuda_reason() if on_cuda else "no CUDA system in --systems"
    if reason:
        C.log(f"CUDA: not available ({reason})")
    gpu, copy_gbps = gpu_lines(reason)
    machine = C.machine_lines([("mlrl-boomer", "mlrl.boosting")]) + gpu
    splits, results, profiles, cold, errors = run_all(args, reason)
    text = report(args, splits, results, profiles, cold, machine, copy_gbps)
    print(text)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf-8")
        C.log(f"wrote {args.output}")
    if args.plot and args.sizes:
        plot(args.plot, args.sizes, results, args.systems, args.noise)
        C.log(f"wrote {args.plot}")
    for err in errors:
        print(f"ERROR {err}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
