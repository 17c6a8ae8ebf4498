"""Compare gpurules' SeCoClassifier (CPU) with mlrl-seco in the same run.

Both learners get the same data (standard MULAN train/test split, dense X, nominal features
from the ARFF header), the same constructor parameters and the same thread setting
(``parallel_rule_refinement`` / ``parallel_statistic_update`` / ``parallel_prediction`` =
"false" for ``--threads 1``, "true" for ``--threads all``); gpurules runs with ``device="cpu"``.

Configurations (``--configs``; each adds its parameters to ``--param``):
``default``, ``fm0.5`` (f-measure beta 0.5), ``m2``, ``m22.466``, ``m100`` (m-estimate).

SeCo's default instance sampling is random, so each cell is fitted with ``--seeds`` random
states; quality (Hamming loss, subset 0/1 loss, micro-F1 and example-wise F1 on the test
split) and the number of rules (default rule included) are means over the seeds, fit times
are medians over seeds x ``--repeats``. gpurules' first fit in this process (Numba
compilation, or loading its on-disk cache) is reported separately as "ours first s".

    OMP_WAIT_POLICY=passive /work/bench312/bin/python benchmarks/compare_seco.py \\
        --datasets emotions,yeast,scene --seeds 3 --threads 1
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # before mlrl's OpenMP runtime loads

import argparse  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

C.use_repo_checkout()

CONFIGS = {
    "default": {},
    "fm0.5": {"heuristic": "f-measure{beta=0.5}"},
    "m2": {"heuristic": "m-estimate{m=2}"},
    "m22.466": {"heuristic": "m-estimate{m=22.466}"},
    "m100": {"heuristic": "m-estimate{m=100}"},
}
HEADERS = ["dataset", "config", "threads", "seco fit s", "ours first s", "ours fit s",
           "ratio ours/seco", "rules seco/ours", "Hamming % seco/ours",
           "subset 0/1 % seco/ours", "micro-F1 % seco/ours", "ex-F1 % seco/ours"]


def reference_class() -> Any:
    try:
        from mlrl.seco import SeCoClassifier
    except ImportError as exc:
        sys.exit(f"error: mlrl-seco is not importable ({exc}); {C.MLRL_HINT} "
                 f"and mlrl-seco==0.15.6")
    return SeCoClassifier


def our_class() -> Any:
    from gpurules.estimators.seco import SeCoClassifier

    return SeCoClassifier


def micro_f1(Y_true: np.ndarray, P: Any) -> float:
    from sklearn.metrics import f1_score

    return float(f1_score(C.predictions_dense(Y_true), C.predictions_dense(P),
                          average="micro", zero_division=1))


def measure(cls: Any, split: C.Split, params: dict[str, Any], seeds: list[int], repeats: int,
            count_rules: Any) -> dict[str, Any]:
    """Fit every seed ``repeats`` times; quality means over seeds, time median."""
    kwargs = {"nominal_feature_indices": list(split.nominal_features)}
    times, rows = [], []
    for seed in seeds:
        for _ in range(repeats):
            clf = cls(random_state=seed, **params)
            seconds, _ = C.timed(lambda: clf.fit(split.X_train, split.Y_train, **kwargs))
            times.append(seconds)
        P = clf.predict(split.X_test)
        rows.append({"rules": count_rules(clf.model_), "micro_f1": micro_f1(split.Y_test, P),
                     **C.quality(split.Y_test, P)})
    out = {key: float(np.mean([r[key] for r in rows])) for key in rows[0]}
    out["fit_s"] = C.median(times)
    return out


def run_row(args, split, config, threads, errors) -> list[Any]:
    params = dict(C.parse_params(args.param))
    params.update(CONFIGS[config])
    params.update(C.parallel_params(threads))
    tag = f"{split.name}/{config}/threads={threads}"
    ref, ours, first = {}, {}, None
    try:
        C.log(f"{tag}: mlrl-seco")
        ref = measure(reference_class(), split, params, args.seeds, args.repeats,
                      C.count_mlrl_rules)
    except Exception:  # noqa: BLE001 - report, keep going
        errors.append(f"{tag} mlrl-seco:\n{traceback.format_exc()}")
    try:
        C.log(f"{tag}: gpurules")
        cls = our_class()
        first, _ = C.timed(lambda: cls(device="cpu", **params).fit(
            split.X_train, split.Y_train, nominal_feature_indices=list(split.nominal_features)))
        ours = measure(lambda **kw: cls(device="cpu", **kw), split, params, args.seeds,
                       args.repeats, len)
    except Exception:  # noqa: BLE001
        errors.append(f"{tag} gpurules:\n{traceback.format_exc()}")
    C.log(f"{tag}: seco {ref.get('fit_s')} s, ours {ours.get('fit_s')} s")
    return [split.name, config, threads, C.fmt_seconds(ref.get("fit_s")),
            C.fmt_seconds(first), C.fmt_seconds(ours.get("fit_s")),
            C.fmt_ratio(ours.get("fit_s"), ref.get("fit_s")),
            f"{ref.get('rules', float('nan')):.1f} / {ours.get('rules', float('nan')):.1f}",
            C.fmt_pair(ref.get("hamming"), ours.get("hamming"), percent=True),
            C.fmt_pair(ref.get("subset01"), ours.get("subset01"), percent=True),
            C.fmt_pair(ref.get("micro_f1"), ours.get("micro_f1"), percent=True),
            C.fmt_pair(ref.get("ex_f1"), ours.get("ex_f1"), percent=True)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", type=Path, default=C.DEFAULT_DATA_DIR)
    p.add_argument("--datasets", default=",".join(C.DEFAULT_DATASETS))
    p.add_argument("--configs", default=",".join(CONFIGS),
                   help=f"comma-separated subset of {', '.join(CONFIGS)}")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="extra constructor parameter for both learners (repeatable)")
    p.add_argument("--threads", default="1", help="comma-separated: 1 and/or all")
    p.add_argument("--seeds", type=int, default=3, help="random states 1..N (quality mean)")
    p.add_argument("--repeats", type=int, default=1, help="timed fits per seed")
    p.add_argument("--output", type=Path, help="also write the report to this file")
    args = p.parse_args(argv)
    args.seeds = list(range(1, args.seeds + 1))
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    unknown = set(configs) - set(CONFIGS)
    if unknown:
        p.error(f"unknown configs {sorted(unknown)}; known: {', '.join(CONFIGS)}")
    reference_class()
    rows, errors = [], []
    for name in [d.strip() for d in args.datasets.split(",") if d.strip()]:
        split = C.load_split(args.data_dir, name, dense=True)
        for config in configs:
            for threads in [t.strip() for t in args.threads.split(",") if t.strip()]:
                rows.append(run_row(args, split, config, threads, errors))
    lines = ["## SeCo: mlrl-seco vs gpurules (device=cpu)", ""]
    lines += C.machine_lines([("mlrl-seco", "mlrl.seco")])
    lines += [f"- extra parameters (both): {C.format_params(C.parse_params(args.param))}; "
              f"seeds {args.seeds}, {args.repeats} timed fit(s) per seed; quality = mean "
              f"over seeds, times = medians; rules include the default rule",
              "", C.markdown_table(HEADERS, rows)]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    for err in errors:
        print(f"ERROR {err}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
