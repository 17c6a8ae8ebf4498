"""The GFM binary predictor and the joint probability calibration against mlrl-boomer 0.15.6
(issue 22).

For each data set (MULAN train/test split), configuration and seed, fits one learner's
BoomerClassifier (CPU, one thread, ``loss='logistic-non-decomposable'``, other parameters
at their defaults) and prints one Markdown row: example-wise F1, subset 0/1 and Hamming loss
on the test split and the fit's process CPU seconds. Configurations: the default
(example-wise) binary predictor, ``binary_predictor='gfm'``, and ``gfm`` with
``joint_probability_calibration='isotonic'``. Run once per learner (``mlrl`` needs the
Python that has mlrl-boomer):

    python benchmarks/compare_gfm.py --learner ours
    OMP_WAIT_POLICY=passive /work/bench312/bin/python benchmarks/compare_gfm.py --learner mlrl
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

C.use_repo_checkout()

CONFIGS = {
    "example-wise": {},
    "gfm": {"binary_predictor": "gfm"},
    "gfm+joint-isotonic": {"binary_predictor": "gfm", "joint_probability_calibration":
                           "isotonic"},
}


def row(learner, split, config, seed):
    """The Markdown row of one fit."""
    clf = C.boomer_estimator(learner, seed, loss="logistic-non-decomposable",
                             **CONFIGS[config])
    seconds, q = C.timed_fit(clf, split)
    return (f"| {learner} | {split.name} | {config} | {seed} | {q['ex_f1']:.4f} | "
            f"{q['subset01']:.4f} | {q['hamming']:.4f} | {seconds:.1f} |")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--learner", choices=("ours", "mlrl"), required=True)
    p.add_argument("--datasets", nargs="*", default=["emotions", "yeast"])
    p.add_argument("--configs", nargs="*", default=list(CONFIGS), choices=list(CONFIGS))
    p.add_argument("--seeds", nargs="*", type=int, default=[1, 2, 3])
    p.add_argument("--data-dir", type=Path, default=C.DEFAULT_DATA_DIR)
    args = p.parse_args(argv)
    print("| learner | data | binary predictor | seed | example F1 | subset 0/1 | Hamming "
          "| fit CPU s |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for name in args.datasets:
        split = C.load_split(args.data_dir, name)
        for config in args.configs:
            for seed in args.seeds:
                print(row(args.learner, split, config, seed), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
