"""Probability calibration against mlrl-boomer 0.15.6 (issue 22).

For each data set (MULAN train/test split), ``marginal_probability_calibration`` (``none``,
``isotonic``) and seed, fits one learner's BoomerClassifier (CPU, one thread, other
parameters at their defaults) and prints one Markdown row: Hamming and subset 0/1 loss, the
Brier score of ``predict_proba`` on the test split, and the fit's process CPU seconds.
Run once per learner (``mlrl`` needs the Python that has mlrl-boomer):

    python benchmarks/compare_calibration.py --learner ours
    OMP_WAIT_POLICY=passive /work/bench312/bin/python benchmarks/compare_calibration.py \\
        --learner mlrl
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

C.use_repo_checkout()


def row(learner, split, calibration, seed):
    """The Markdown row of one fit."""
    clf = C.boomer_estimator(learner, seed, marginal_probability_calibration=calibration)
    seconds, q = C.timed_fit(clf, split)
    proba = clf.predict_proba(split.X_test)
    proba = np.asarray(proba.toarray() if hasattr(proba, "toarray") else proba)
    brier = float(((proba - split.Y_test) ** 2).mean())
    return (f"| {learner} | {split.name} | {calibration} | {seed} | {q['hamming']:.4f} | "
            f"{q['subset01']:.4f} | {brier:.4f} | {seconds:.1f} |")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--learner", choices=("ours", "mlrl"), required=True)
    p.add_argument("--datasets", nargs="*", default=["emotions", "yeast"])
    p.add_argument("--seeds", nargs="*", type=int, default=[1, 2])
    p.add_argument("--data-dir", type=Path, default=C.DEFAULT_DATA_DIR)
    args = p.parse_args(argv)
    print("| learner | data | calibration | seed | Hamming | subset 0/1 | Brier | fit CPU s |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for name in args.datasets:
        split = C.load_split(args.data_dir, name)
        for calibration in ("none", "isotonic"):
            for seed in args.seeds:
                print(row(args.learner, split, calibration, seed), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
