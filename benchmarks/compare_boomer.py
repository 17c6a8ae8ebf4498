"""Compare gpurules' BoomerClassifier (CPU backend) with mlrl-boomer in the same run.

Both learners get the same data (the standard MULAN train/test split, dense X), the same
constructor parameters (defaults plus ``--param key=value``, always ``random_state=1``) and the
same thread setting (``parallel_rule_refinement`` / ``parallel_statistic_update`` /
``parallel_prediction`` = "false" for ``--threads 1``, "true" for ``--threads all``). gpurules
runs with ``device="cpu"``.

Timings (``time.perf_counter``, medians of ``--repeats``):
- mlrl-boomer fit / predict: fresh estimator per fit; predict repeated on the last model.
- ours cold: the first fit in a fresh Python process (a subprocess of this script, one per
  dataset and thread setting), Numba JIT compilation included; only the ``fit`` call is timed.
  By default the subprocess gets an empty temporary ``NUMBA_CACHE_DIR`` so that on-disk
  caches (``cache=True``) do not hide the compile time; ``--cold-cache shared`` keeps the
  normal cache (what a second session of a user sees).
- ours warm: median of the repeats in this process after one warm-up fit + predict.
- ``--cpu-time``: also the median CPU time (``time.process_time``, all threads of the process)
  of the same fits, which a loaded shared machine distorts less than wall time.

Quality on the test split: Hamming loss, subset 0/1 loss, example-wise F1
(``f1_score(average="samples", zero_division=1)``), and the number of rules including the
default rule (``len(clf.model_)`` for gpurules, ``clf.model_.get_num_used_rules()`` for
mlrl-boomer).

Run with a Python 3.12 venv that has ``mlrl-boomer==0.15.6`` (and gpurules' dependencies):

    /work/bench312/bin/python benchmarks/compare_boomer.py --datasets emotions \\
        --param max_rules=50 --repeats 1 --threads 1
"""

from __future__ import annotations

import os

# Must precede the first import of mlrl (its OpenMP runtime reads it once): busy-waiting
# OpenMP worker threads collapse the timings on a loaded machine with few cores.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

C.use_repo_checkout()

COLD_FLAG = "--_cold-fit"  # internal: run one cold gpurules fit and print JSON
HEADERS = [
    "dataset", "n_train", "features", "labels", "threads", "boomer fit s", "ours cold s",
    "ours warm s", "ratio warm/boomer", "boomer predict s", "ours predict s",
    "rules boomer/ours", "Hamming % boomer/ours", "subset 0/1 % boomer/ours",
    "ex-F1 % boomer/ours",
]

CPU_HEADERS = ["boomer fit CPU s", "ours warm CPU s", "CPU ratio ours/boomer"]


def reference_class() -> Any:
    """mlrl-boomer's estimator, or exit with instructions when it is not installed."""
    try:
        from mlrl.boosting import BoomerClassifier
    except ImportError as exc:
        sys.exit(f"error: mlrl-boomer is not importable ({exc}).\nTo run this benchmark, "
                 f"{C.MLRL_HINT}.")
    return BoomerClassifier


def our_class() -> Any:
    """gpurules' estimator (from this checkout)."""
    from gpurules import BoomerClassifier

    return BoomerClassifier


def learner_params(user: dict[str, Any], threads: str, ours: bool) -> dict[str, Any]:
    """Constructor keywords: user parameters, the thread setting, random_state=1 (+device)."""
    params = dict(user)
    params.update(C.parallel_params(threads))
    params["random_state"] = 1
    if ours:
        params["device"] = "cpu"
    return params


def fit_kwargs(split: C.Split, nominal: bool) -> dict[str, Any]:
    """``nominal_feature_indices`` as a plain list (mlrl needs a list), or nothing."""
    return {"nominal_feature_indices": list(split.nominal_features)} if nominal else {}


def measure(cls: Any, split: C.Split, params: dict[str, Any], kwargs: dict[str, Any],
            repeats: int, warmup: bool, count_rules: Any) -> dict[str, Any]:
    """Fit ``repeats`` fresh estimators (after an untimed warm-up fit+predict if ``warmup``),
    time predict ``repeats`` times on the last one, evaluate on the test split."""
    if warmup:
        clf = cls(**params)
        clf.fit(split.X_train, split.Y_train, **kwargs)
        clf.predict(split.X_test)
    fit_times, fit_cpu = [], []
    for _ in range(repeats):
        clf = cls(**params)
        cpu_start = time.process_time()
        seconds, _ = C.timed(lambda: clf.fit(split.X_train, split.Y_train, **kwargs))
        fit_cpu.append(time.process_time() - cpu_start)
        fit_times.append(seconds)
    predict_times, P = [], None
    for _ in range(repeats):
        seconds, P = C.timed(lambda: clf.predict(split.X_test))
        predict_times.append(seconds)
    return {"fit_s": C.median(fit_times), "predict_s": C.median(predict_times),
            "fit_cpu_s": C.median(fit_cpu), "fit_all": fit_times, "rules": count_rules(clf.model_),
            **C.quality(split.Y_test, P)}


def cold_fit_subprocess(args: argparse.Namespace, dataset: str,
                        params: dict[str, Any]) -> dict[str, Any]:
    """Run one gpurules fit in a fresh interpreter (this script with ``COLD_FLAG``)."""
    spec = {"data_dir": str(args.data_dir), "dataset": dataset, "params": params,
            "nominal": not args.no_nominal}
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="gpurules-numba-cache-") as cache_dir:
        if args.cold_cache == "fresh":
            env["NUMBA_CACHE_DIR"] = cache_dir
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), COLD_FLAG,
                               json.dumps(spec)], env=env, capture_output=True, text=True,
                              timeout=args.cold_timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"cold subprocess failed (rc={proc.returncode}):\n"
                           f"{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cold_fit_main(spec_json: str) -> None:
    """Body of the cold subprocess: load (untimed), fit once (timed), print JSON."""
    spec = json.loads(spec_json)
    split = C.load_split(spec["data_dir"], spec["dataset"], dense=True)
    cls = our_class()
    clf = cls(**spec["params"])
    kwargs = fit_kwargs(split, spec["nominal"])
    seconds, _ = C.timed(lambda: clf.fit(split.X_train, split.Y_train, **kwargs))
    print(json.dumps({"fit_s": seconds, "rules": len(clf.model_)}), flush=True)


def run_row(args: argparse.Namespace, split: C.Split, threads: str, user: dict[str, Any],
            errors: list[str]) -> list[str]:
    """Measure both learners for one (dataset, threads) and return the table row."""
    kwargs = fit_kwargs(split, not args.no_nominal)
    ref: dict[str, Any] = {}
    ours: dict[str, Any] = {}
    cold: dict[str, Any] = {}
    tag = f"{split.name}/threads={threads}"
    if "boomer" in args.learners:
        C.log(f"{tag}: mlrl-boomer, {args.repeats} fit(s)")
        try:
            ref = measure(reference_class(), split, learner_params(user, threads, False),
                          kwargs, args.repeats, False, C.count_mlrl_rules)
            C.log(f"{tag}: mlrl-boomer fit {ref['fit_s']:.3f}s, {ref['rules']} rules, "
                  f"Hamming {100 * ref['hamming']:.2f}%")
        except Exception:  # noqa: BLE001 - report and continue with the other cells
            errors.append(f"{tag} mlrl-boomer:\n{traceback.format_exc()}")
            C.log(f"{tag}: mlrl-boomer FAILED")
    if "gpurules" in args.learners:
        params = learner_params(user, threads, True)
        if not args.skip_cold:
            C.log(f"{tag}: gpurules cold fit in a subprocess ({args.cold_cache} numba cache)")
            try:
                cold = cold_fit_subprocess(args, split.name, params)
                C.log(f"{tag}: gpurules cold fit {cold['fit_s']:.3f}s")
            except Exception:  # noqa: BLE001
                errors.append(f"{tag} gpurules cold:\n{traceback.format_exc()}")
                C.log(f"{tag}: gpurules cold fit FAILED")
        C.log(f"{tag}: gpurules warm-up + {args.repeats} fit(s)")
        try:
            ours = measure(our_class(), split, params, kwargs, args.repeats, True, len)
            C.log(f"{tag}: gpurules warm fit {ours['fit_s']:.3f}s, {ours['rules']} rules, "
                  f"Hamming {100 * ours['hamming']:.2f}%")
        except Exception:  # noqa: BLE001
            errors.append(f"{tag} gpurules:\n{traceback.format_exc()}")
            C.log(f"{tag}: gpurules FAILED")
    cpu = [C.fmt_seconds(ref.get("fit_cpu_s")), C.fmt_seconds(ours.get("fit_cpu_s")),
           C.fmt_ratio(ours.get("fit_cpu_s"), ref.get("fit_cpu_s"))] if args.cpu_time else []
    return [
        split.name, split.n_train, split.n_features, split.n_labels, threads,
        C.fmt_seconds(ref.get("fit_s")), C.fmt_seconds(cold.get("fit_s")),
        C.fmt_seconds(ours.get("fit_s")), C.fmt_ratio(ours.get("fit_s"), ref.get("fit_s")),
        C.fmt_seconds(ref.get("predict_s")), C.fmt_seconds(ours.get("predict_s")),
        C.fmt_pair(ref.get("rules"), ours.get("rules")),
        C.fmt_pair(ref.get("hamming"), ours.get("hamming"), percent=True),
        C.fmt_pair(ref.get("subset01"), ours.get("subset01"), percent=True),
        C.fmt_pair(ref.get("ex_f1"), ours.get("ex_f1"), percent=True),
    ] + cpu


def report(args: argparse.Namespace, user: dict[str, Any], rows: list[list[Any]],
           n_errors: int = 0) -> str:
    """The Markdown report: machine/versions/parameters, then the table."""
    lines = ["## BOOMER: mlrl-boomer vs gpurules (device=cpu)", ""]
    lines += C.machine_lines([("mlrl-boomer", "mlrl.boosting")])
    lines += [
        f"- parameters (both learners): {C.format_params(user)}; random_state=1; "
        f"nominal_feature_indices {'not passed' if args.no_nominal else 'from the ARFF header'}"
        f"; X dense",
        "- threads: 1 = parallel_rule_refinement/parallel_statistic_update/"
        "parallel_prediction=\"false\", all = \"true\"",
        f"- times: medians of {args.repeats} repeat(s); ours cold = first fit in a fresh "
        f"process incl. Numba JIT ({args.cold_cache} numba cache); ours warm after a warm-up "
        f"fit; ratio = ours warm / boomer"
        + ("; CPU = time.process_time of the same fits (all threads of the process)"
           if args.cpu_time else ""),
        "- quality on the test split; rules include the default rule; ex-F1 = sklearn "
        "f1_score(average=\"samples\", zero_division=1)",
        "",
        C.markdown_table(HEADERS + (CPU_HEADERS if args.cpu_time else []), rows),
    ]
    if n_errors:
        lines += ["", f"{n_errors} measurement(s) failed (\"-\" cells); tracebacks on stderr."]
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", type=Path, default=C.DEFAULT_DATA_DIR,
                   help="folder with <name>-train/-test.arff and <name>.xml "
                        "(default: ../shared/datasets relative to the repo root)")
    p.add_argument("--datasets", default=",".join(C.DEFAULT_DATASETS),
                   help="comma-separated dataset names (default: %(default)s)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="constructor parameter for both learners (repeatable; numbers parsed)")
    p.add_argument("--threads", default="1,all", help="comma-separated: 1 and/or all")
    p.add_argument("--repeats", type=int, default=3, help="timed repetitions (median)")
    p.add_argument("--no-nominal", action="store_true",
                   help="do not pass nominal_feature_indices")
    p.add_argument("--learners", default="boomer,gpurules",
                   help="comma-separated subset of boomer,gpurules (default: both)")
    p.add_argument("--skip-cold", action="store_true", help="skip the cold-fit subprocess")
    p.add_argument("--cold-cache", choices=("fresh", "shared"), default="fresh",
                   help="numba cache for the cold fit: fresh empty dir (default) or the usual")
    p.add_argument("--cold-timeout", type=float, default=3600,
                   help="seconds before the cold subprocess is abandoned")
    p.add_argument("--cpu-time", action="store_true",
                   help="also report the fits' CPU time (time.process_time) and its ratio")
    p.add_argument("--output", type=Path, help="also write the Markdown report to this file")
    args = p.parse_args(argv)
    args.datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    args.threads = [t.strip() for t in args.threads.split(",") if t.strip()]
    args.learners = {x.strip() for x in args.learners.split(",") if x.strip()}
    for t in args.threads:
        C.parallel_params(t)  # validates
    if not args.learners <= {"boomer", "gpurules"} or not args.learners:
        p.error("--learners takes boomer and/or gpurules")
    if args.repeats < 1:
        p.error("--repeats must be >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the comparison and print the Markdown report to stdout."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [COLD_FLAG]:
        cold_fit_main(argv[1])
        return 0
    args = parse_args(argv)
    user = C.parse_params(args.param)
    for reserved in ("random_state", "device") + tuple(C.parallel_params("1")):
        if reserved in user:
            sys.exit(f"error: --param {reserved} is set by the script (use --threads)")
    if "boomer" in args.learners:
        reference_class()  # fail early with the venv hint
    rows, errors = [], []
    for name in args.datasets:
        C.log(f"loading {name} from {args.data_dir}")
        split = C.load_split(args.data_dir, name, dense=True)
        C.log(f"{name}: train {split.X_train.shape}, test {split.X_test.shape}, "
              f"{split.n_labels} labels, {len(split.nominal_features)} nominal features")
        for threads in args.threads:
            rows.append(run_row(args, split, threads, user, errors))
    text = report(args, user, rows, len(errors))
    print(text)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf-8")
        C.log(f"wrote {args.output}")
    for err in errors:
        print(f"ERROR {err}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
