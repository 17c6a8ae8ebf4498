"""A distributed fit on a Dask LocalCluster against the single-process histogram fit (issue 21).

Systems, in the same run on the same data and parameters
(``feature_binning=--binning``, ``random_state=1``, one thread each):

- ``single``: ``BoomerClassifier(device="cpu")`` in this process;
- ``dask-W``: ``DaskBoomerClassifier`` on a ``LocalCluster`` of ``W`` worker processes with
  one thread each (``--workers``), the training data split into ``W`` row partitions and
  persisted on the workers before the timed fit (a cluster's data is loaded there; the
  client -> worker copy is not part of the fit).

Data: ``synthetic_data.synthetic_split`` (``make_multilabel_classification``, 100
features, 20 labels, Gaussian noise ``--noise``: continuous features) at each of
``--sizes``, with ``--max-rules`` rules (one value, or one per size). Reported per system,
the medians of ``--repeat`` timed fits: fit time (wall, ``time.perf_counter``) and process
CPU time (this process, plus the workers' processes as ``psutil`` counts them), time per
rule, the refinement steps and the bytes that crossed between workers (and to the client)
per step (``received_bytes_``: the histogram rows the other partitions sent the leader;
median and largest; per other partition = largest / (W - 1)), whether the model equals
the single-process one (``str(model_)``), and Hamming loss on the test part. Before the
timed fits every system makes an untimed small fit (Numba compilation and the workers'
cache loads).

``--device cuda`` (a GPU machine): the single-process fit with ``device="cuda"`` and the
Dask systems on a ``dask_cuda.LocalCUDACluster`` (one worker process per visible GPU, so
``--workers`` may not exceed the GPUs; ``CUDA_VISIBLE_DEVICES`` picks them) with
``device="cuda"`` per worker; without a usable GPU or without dask-cuda it stops with the
reason before any fit.

``--mlrl-python PATH``: also fit mlrl-boomer (``mlrl.boosting.BoomerClassifier``, the
same ``feature_binning``, ``max_rules`` and seed, one thread, ``OMP_WAIT_POLICY=passive``)
on the same split, in a subprocess of that interpreter (mlrl-boomer's wheels need Python
>= 3.12; the interpreter needs scikit-learn and gpurules' dependencies, not dask): its
fit time (wall, and the subprocess's CPU time) and rules join the table as ``mlrl-boomer``.
``--plot PATH``: a log-log PNG of the time per rule against n, one line per system.

``--out-of-core N``: a fit whose data never exist on the client: ``N`` x 100 float64
features drawn on the workers (``dask.array.random``, ``--ooc-chunk`` rows per partition),
``--ooc-labels`` labels computed from them per partition, on ``--ooc-workers`` worker
processes with ``memory_limit=--ooc-memory-limit`` each (set it below the data size); the
table gives the data size, the limit, and each worker's resident memory after binning
and at the end of the fit.

    .venv/bin/python benchmarks/compare_dask.py --sizes 1e5 1e6 --max-rules 20 5 \\
        --out-of-core 3e6 --output /tmp/dask.md --mlrl-python /work/bench312/bin/python \\
        --plot docs/dask_time_vs_n.png

The box's cores may be shared: compare CPU times (and say so) unless it is quiet.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import _common as C
import compare_devices as D
from synthetic_data import synthetic_split

C.use_repo_checkout()

THREADS = {"parallel_rule_refinement": "false", "parallel_statistic_update": "false",
           "parallel_prediction": "false"}
HEADERS = ["data", "n_train", "system", "fit s", "CPU s", "rules", "s / rule", "CPU s / rule",
           "vs single (s / rule)", "steps", "KB / step (median)", "KB / step (max)",
           "KB / step / other partition (max)", "same model", "Hamming %"]


def _cpu_seconds():
    """CPU seconds (user + system) of this process."""
    return time.process_time()


def _worker_cpu():
    """CPU seconds (user + system) of a worker's process (run on the worker)."""
    import psutil

    t = psutil.Process().cpu_times()
    return t.user + t.system


def _worker_rss():
    """Resident memory (bytes) of a worker's process (run on the worker)."""
    import psutil

    return psutil.Process().memory_info().rss


def cluster_cpu(client) -> float:
    """Summed CPU seconds of ``client``'s worker processes (0 without a client)."""
    return 0.0 if client is None else float(sum(client.run(_worker_cpu).values()))


def timed_fit(clf, X, Y, client=None, repeat=1) -> tuple[float, float]:
    """(wall s, CPU s of this process and the workers) of ``clf.fit(X, Y)``: the medians
    of ``repeat`` fits (the last one's model stays)."""
    walls, cpus = [], []
    for _ in range(repeat):
        cpu0, wcpu0 = _cpu_seconds(), cluster_cpu(client)
        start = time.perf_counter()
        clf.fit(X, Y)
        walls.append(time.perf_counter() - start)
        cpus.append(_cpu_seconds() - cpu0 + cluster_cpu(client) - wcpu0)
    return float(np.median(walls)), float(np.median(cpus))


def row(split, system, wall, cpu, clf, single_rule_s, same, X_test, rules=None,
        Y_pred=None) -> list:
    """One table row; ``clf`` None with ``rules`` and ``Y_pred`` given (mlrl-boomer's,
    fitted in another interpreter)."""
    rules = len(clf.model_) - 1 if rules is None else rules
    received = getattr(clf, "received_bytes_", None)
    workers = int(system.split("-")[1]) if system.startswith("dask-") else None
    per_rule = wall / max(rules, 1)
    cells = [split.name, split.X_train.shape[0], system, C.fmt_seconds(wall),
             C.fmt_seconds(cpu), rules, f"{per_rule:.3f}", f"{cpu / max(rules, 1):.3f}",
             C.fmt_ratio(per_rule, single_rule_s) if single_rule_s else "1.00"]
    if received is None or received.size == 0:
        cells += ["-", "-", "-", "-", "-"]
    else:
        cells += [received.size, f"{np.median(received) / 1e3:.1f}",
                  f"{received.max() / 1e3:.1f}",
                  f"{received.max() / max(workers - 1, 1) / 1e3:.1f}",
                  "yes" if same else "NO"]
    Y_pred = clf.predict(X_test) if Y_pred is None else Y_pred
    cells.append(f"{100 * C.quality(split.Y_test, Y_pred)['hamming']:.2f}")
    return cells


def compare_size(n: int, max_rules: int, args, lines: list) -> None:
    import dask.array as da
    import distributed

    from gpurules import BoomerClassifier
    from gpurules.dask import DaskBoomerClassifier

    C.log(f"n={n}: generating")
    split = synthetic_split(n, args.seed, args.noise)
    params = dict(feature_binning=args.binning, max_rules=max_rules, random_state=1,
                  **THREADS, **C.parse_params(args.param))
    warm = min(n, 2000)
    BoomerClassifier(device=args.device, **{**params, "max_rules": 5}).fit(
        split.X_train[:warm], split.Y_train[:warm])
    single = BoomerClassifier(device=args.device, **params)
    C.log(f"n={n}: single-process fit")
    wall, cpu = timed_fit(single, split.X_train, split.Y_train, repeat=args.repeat)
    single_rule_s = wall / max(len(single.model_) - 1, 1)
    lines.append(row(split, "single", wall, cpu, single, None, True, split.X_test))
    for workers in args.workers:
        with local_cluster(workers, args.device) as cluster, \
                distributed.Client(cluster) as client:
            chunk = math.ceil(n / workers)
            Xw = da.from_array(split.X_train[:warm], chunks=(math.ceil(warm / workers), -1))
            DaskBoomerClassifier(client=client, device=args.device,
                                 **{**params, "max_rules": 5}).fit(Xw, split.Y_train[:warm])
            X = client.persist(da.from_array(split.X_train, chunks=(chunk, -1)))
            distributed.wait(X)
            clf = DaskBoomerClassifier(client=client, device=args.device, **params)
            C.log(f"n={n}: {workers} worker(s)")
            wall, cpu = timed_fit(clf, X, split.Y_train, client, args.repeat)
            same = str(clf.model_) == str(single.model_)
            lines.append(row(split, f"dask-{workers}", wall, cpu, clf, single_rule_s, same,
                             split.X_test))
            del X
    if args.mlrl_python:
        C.log(f"n={n}: mlrl-boomer")
        fit = mlrl_fit(args.mlrl_python, n, max_rules, args)
        lines.append(row(split, "mlrl-boomer", fit["wall"], fit["cpu"], None, single_rule_s,
                         True, None, fit["rules"], np.asarray(fit["predictions"], np.uint8)))


def local_cluster(workers: int, device: str):
    """A LocalCluster of ``workers`` one-thread worker processes; for ``device="cuda"`` a
    ``dask_cuda.LocalCUDACluster`` of one worker per GPU (the first ``workers`` GPUs)."""
    import distributed

    if device == "cpu":
        return distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                        processes=True, dashboard_address=":0")
    from dask_cuda import LocalCUDACluster

    return LocalCUDACluster(n_workers=workers, threads_per_worker=1, dashboard_address=":0")


def check_device(args) -> None:
    """Stop (SystemExit with the reason) unless ``--device cuda`` can run here: a usable
    GPU, dask-cuda installed, and at least ``max(--workers)`` visible GPUs."""
    if args.device == "cpu":
        return
    from gpurules.backends.factory import cuda_status

    usable, reason = cuda_status(0)
    if not usable:
        raise SystemExit(f"--device cuda: no usable GPU here ({reason})")
    if importlib.util.find_spec("dask_cuda") is None:
        raise SystemExit("--device cuda needs dask-cuda (pip install dask-cuda)")
    from numba import cuda

    if max(args.workers) > len(cuda.gpus):
        raise SystemExit(f"--workers {max(args.workers)} but {len(cuda.gpus)} GPU(s): one "
                         f"worker per GPU")


def mlrl_fit(python: str, n: int, max_rules: int, args) -> dict:
    """mlrl-boomer's fit of the same split in ``python`` (this script with ``--mlrl-fit``):
    {"wall", "cpu" (s), "rules", "predictions" (the test part's, lists)}."""
    command = [python, __file__, "--mlrl-fit", "--sizes", str(n), "--max-rules",
               str(max_rules), "--binning", args.binning, "--noise", str(args.noise),
               "--seed", str(args.seed)]
    env = {**os.environ, "OMP_WAIT_POLICY": "passive"}
    out = subprocess.run(command, capture_output=True, text=True, env=env)
    if out.returncode:
        raise RuntimeError(f"mlrl-boomer's fit failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _mlrl_fit_here(args) -> None:
    """``--mlrl-fit``: fit mlrl-boomer on the split of ``args.sizes[0]`` in this process
    (one thread) and print :func:`mlrl_fit`'s dict as one JSON line."""
    from mlrl.boosting import BoomerClassifier as Reference

    split = synthetic_split(args.sizes[0], args.seed, args.noise)
    clf = Reference(feature_binning=args.binning, max_rules=args.max_rules[0],
                    random_state=1, **C.parallel_params("1"))
    cpu, start = time.process_time(), time.perf_counter()
    clf.fit(split.X_train, split.Y_train)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    predicted = clf.predict(split.X_test)
    predicted = predicted.toarray() if hasattr(predicted, "toarray") else predicted
    # the default rule left out, as in the other rows
    print(json.dumps({"wall": wall, "cpu": cpu, "rules": C.count_mlrl_rules(clf.model_) - 1,
                      "predictions": np.asarray(predicted, np.uint8).tolist()}))


def plot(path: Path, rows: list) -> None:
    """Log-log time per rule (wall) against n, one line per system
    (``gpurules.plot.plot_fit_time``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from gpurules.plot import plot_fit_time

    table = [{"n_train": r[1], "system": r[2], "s / rule": r[6]} for r in rows]
    ax = plot_fit_time(table, y="s / rule", ylabel="wall seconds per rule",
                       xlabel="training examples n (100 features, 20 labels)")
    ax.figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    ax.figure.savefig(path, dpi=120)
    plt.close(ax.figure)


def out_of_core(args) -> list[str]:
    """The out-of-core fit's Markdown lines (see the module docstring)."""
    import dask.array as da
    import distributed

    from gpurules.dask import DaskBoomerClassifier

    n, A, K = int(args.out_of_core), 100, args.ooc_labels
    weights = np.random.default_rng(args.seed).normal(size=(A, K))
    weights[np.random.default_rng(args.seed + 1).random((A, K)) < 0.9] = 0.0  # sparse
    data_bytes = n * A * 8
    with distributed.LocalCluster(n_workers=args.ooc_workers, threads_per_worker=1,
                                  processes=True, dashboard_address=":0",
                                  memory_limit=args.ooc_memory_limit) as cluster, \
            distributed.Client(cluster) as client:
        limit = min(w["memory_limit"] for w in client.scheduler_info()["workers"].values())
        X = da.random.default_rng(args.seed).standard_normal((n, A), chunks=(args.ooc_chunk, A))
        Y = X.map_blocks(_labels, weights, dtype=np.uint8, chunks=(X.chunks[0], (K,)))
        clf = DaskBoomerClassifier(client=client, feature_binning=args.binning,
                                   max_rules=args.ooc_rules, random_state=1, **THREADS)
        rss = {}
        make = DaskBoomerClassifier._make_backend

        def recording(self, threads):  # once the partitions are binned
            rss["binned"] = client.run(_worker_rss)
            return make(self, threads)

        clf._make_backend = recording.__get__(clf)
        C.log(f"out-of-core: n={n}, {args.ooc_workers} workers, limit {limit / 1e6:.0f} MB")
        cpu0, wcpu0 = _cpu_seconds(), cluster_cpu(client)
        start = time.perf_counter()
        clf.fit(X, Y)
        wall = time.perf_counter() - start
        cpu = _cpu_seconds() - cpu0 + cluster_cpu(client) - wcpu0
        rss["end"] = client.run(_worker_rss)
        alive = len(client.scheduler_info()["workers"])
    mb = lambda d: ", ".join(f"{v / 1e6:.0f}" for v in d.values())  # noqa: E731
    return [
        f"- data: {n} x {A} float64 drawn on the workers ({data_bytes / 1e6:.0f} MB; "
        f"{data_bytes / 2e6:.0f} MB as the float32 the fit bins), {K} labels, "
        f"{len(X.chunks[0])} partitions of {args.ooc_chunk} rows",
        f"- {args.ooc_workers} worker processes x 1 thread, memory_limit "
        f"{limit / 1e6:.0f} MB each (data / limit = {data_bytes / limit:.1f} as float64, "
        f"{data_bytes / 2 / limit:.1f} as float32); {alive} workers alive at the end",
        f"- fit: {wall:.1f} s wall, {cpu:.1f} CPU s, {len(clf.model_) - 1} rules, "
        f"{clf.received_bytes_.size} refinement steps, largest step "
        f"{clf.received_bytes_.max() / 1e3:.0f} KB between workers",
        f"- worker resident memory (MB) after binning: {mb(rss['binned'])}; at the end of "
        f"the fit: {mb(rss['end'])}",
    ]


def _labels(block, weights):
    """uint8 (n_p, K) labels of one partition: ``block @ weights > 0.5``."""
    return (block @ weights > 0.5).astype(np.uint8)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", nargs="*", type=D.parse_size, default=[100_000])
    p.add_argument("--max-rules", nargs="+", type=int, default=[20])
    p.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    p.add_argument("--binning", default="equal-width{max_bins=255}")
    p.add_argument("--noise", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--repeat", type=int, default=1,
                   help="timed fits per system; the table gives their medians")
    p.add_argument("--param", action="append", help="NAME=VALUE for every system")
    p.add_argument("--out-of-core", type=D.parse_size, default=0)
    p.add_argument("--ooc-workers", type=int, default=4)
    p.add_argument("--ooc-memory-limit", default="1GB")
    p.add_argument("--ooc-chunk", type=int, default=250_000)
    p.add_argument("--ooc-labels", type=int, default=5)
    p.add_argument("--ooc-rules", type=int, default=5)
    p.add_argument("--output", help="also write the Markdown here")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                   help="cuda: device='cuda' and a LocalCUDACluster (one worker per GPU)")
    p.add_argument("--mlrl-python", help="an interpreter with mlrl-boomer: fit it too")
    p.add_argument("--mlrl-fit", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--plot", type=Path, help="PNG of the time per rule against n")
    args = p.parse_args(argv)
    if args.mlrl_fit:
        return _mlrl_fit_here(args)
    check_device(args)
    rules = args.max_rules * len(args.sizes) if len(args.max_rules) == 1 else args.max_rules
    if len(rules) != len(args.sizes):
        p.error("--max-rules takes one value or one per size")
    rows: list = []
    for n, r in zip(args.sizes, rules):
        compare_size(n, r, args, rows)
    lines = ["# Distributed fits (Dask LocalCluster) vs the single-process histogram fit", "",
             *C.machine_lines([("dask", None), ("distributed", None)]),
             f"- device {args.device!r}; feature_binning={args.binning!r}, one thread per "
             f"process, noise {args.noise}, "
             f"median of {args.repeat} timed fit(s) per system",
             ""]
    if rows:
        lines += [C.markdown_table(HEADERS, rows), ""]
    print("\n".join(lines), flush=True)
    if args.out_of_core:
        try:
            ooc = out_of_core(args)
        except RuntimeError as error:  # WorkerLostError: a worker went over its limit
            ooc = [f"- did not complete: {type(error).__name__}: {error}"]
        lines += ["## Out of core", "", *ooc, ""]
        print("\n".join(["## Out of core", "", *ooc, ""]))
    if args.plot and rows:
        plot(args.plot, rows)
    text = "\n".join(lines)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
