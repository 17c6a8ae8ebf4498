"""mlrl-boomer's bin count against a capped one: quality and fit time (issue 17).

mlrl-boomer's equal-width default, ``bin_ratio=0.33``, gives a continuous feature up to
``ceil(0.33 n)`` bins: 3,300 at n = 1e4 and 330,000 at 1e6, so the histograms outgrow the
caches as n grows. XGBoost and LightGBM default to at most 256 / 255 bins. This script fits
the same learner with ``feature_binning="equal-width"`` (mlrl-boomer's default count) and with
``"equal-width{max_bins=CAP}"`` for each ``--caps`` value, and prints, per data set, the fit's
process CPU time (one thread, ``parallel_*="false"``, after an untimed warm-up fit that
compiles the kernels), the number of conditions per rule and the test quality. With
mlrl-boomer importable (Python >= 3.12), its equal-width fit with the same settings is run
too, so the ratios compare in one run.

    OMP_WAIT_POLICY=passive /work/bench312/bin/python benchmarks/bin_cap.py \\
        --sizes 1e4 1e5 --datasets yeast scene --caps 255 --max-rules 200

Data: the synthetic continuous set of ``compare_devices.py`` (``make_multilabel_classification``,
100 features, 20 labels, Gaussian noise ``--noise``) and the MULAN train/test splits.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

C.use_repo_checkout()

from compare_devices import parse_size  # noqa: E402
from synthetic_data import synthetic_split  # noqa: E402


def fit_gpurules(split: C.Split, binning: str, max_rules: int) -> dict:
    from gpurules import BoomerClassifier

    params = dict(feature_binning=binning, max_rules=max_rules, random_state=1,
                  **C.parallel_params("1"))
    warm = BoomerClassifier(**{**params, "max_rules": 5})
    warm.fit(split.X_train[:1000], split.Y_train[:1000])
    clf = BoomerClassifier(**params)
    start = time.process_time()
    clf.fit(split.X_train, split.Y_train)
    seconds = time.process_time() - start
    return {"cpu_s": seconds, "conditions": C.conditions_per_rule(clf.model_),
            **C.quality(split.Y_test, clf.predict(split.X_test))}


def fit_mlrl(split: C.Split, binning: str, max_rules: int) -> dict | None:
    try:
        from mlrl.boosting import BoomerClassifier
    except ImportError:
        return None
    clf = BoomerClassifier(feature_binning=binning, max_rules=max_rules, random_state=1,
                           **C.parallel_params("1"))
    start = time.process_time()
    clf.fit(split.X_train, split.Y_train)
    seconds = time.process_time() - start
    return {"cpu_s": seconds, "conditions": C.mlrl_conditions_per_rule(clf.model_),
            **C.quality(split.Y_test, clf.predict(split.X_test))}


def rows_for(split: C.Split, caps: list[int], max_rules: int, with_mlrl: bool) -> list[list]:
    settings = [("equal-width", "equal-width")] + [
        (f"equal-width{{max_bins={cap}}}", f"max_bins={cap}") for cap in caps]
    out = []
    for binning, label in settings:
        systems = [("gpurules", fit_gpurules)] + ([("mlrl-boomer", fit_mlrl)] if with_mlrl
                                                 else [])
        for system, fit in systems:
            C.log(f"{split.name}: {system} {binning}")
            r = fit(split, binning, max_rules)
            if r is None:
                continue
            out.append([split.name, split.n_train, system, label, f"{r['cpu_s']:.2f}",
                        f"{r['conditions']:.1f}", f"{100 * r['hamming']:.2f}",
                        f"{100 * r['subset01']:.2f}", f"{100 * r['ex_f1']:.2f}"])
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", nargs="*", type=parse_size, default=[10_000])
    p.add_argument("--datasets", nargs="*", default=["yeast", "scene"])
    p.add_argument("--caps", nargs="*", type=int, default=[255])
    p.add_argument("--max-rules", type=int, default=200)
    p.add_argument("--noise", type=float, default=0.5)
    p.add_argument("--no-mlrl", action="store_true", help="gpurules only")
    p.add_argument("--data-dir", type=Path, default=C.DEFAULT_DATA_DIR)
    args = p.parse_args(argv)
    splits = [synthetic_split(n, 1, args.noise) for n in args.sizes]
    splits += [C.load_split(args.data_dir, name) for name in args.datasets]
    rows = []
    for split in splits:
        rows += rows_for(split, args.caps, args.max_rules, not args.no_mlrl)
    print("\n".join(C.machine_lines()))
    print(f"- max_rules={args.max_rules}, one thread, process CPU time of one fit; "
          "conditions = mean per rule\n")
    print(C.markdown_table(["data", "n", "system", "bins", "fit CPU s", "conditions",
                            "Hamming %", "subset 0/1 %", "ex-F1 %"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
