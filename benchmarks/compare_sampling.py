"""Instance and output sampling against mlrl-boomer: test-split quality and fit CPU time.

For each dataset (MULAN train/test split, dense X), parameter setting and seed, fits
mlrl-boomer's and gpurules' BoomerClassifier (CPU, one thread each, other parameters at
their defaults) and prints a Markdown table: Hamming and subset 0/1 loss on the test split
and fit CPU time (``time.process_time``). One warm-up fit of gpurules per dataset and
setting keeps Numba's compile time out of the timings. Run with the Python that has
mlrl-boomer, bounded:

    ulimit -v 4000000; timeout 600 /work/bench312/bin/python benchmarks/compare_sampling.py \\
        --datasets emotions yeast --seeds 1
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

C.use_repo_checkout()

SERIAL = C.parallel_params("1")  # one thread, as mlrl-boomer is timed
SETTINGS = ["instance_sampling=stratified-output-wise",
            "instance_sampling=stratified-example-wise",
            "instance_sampling=with-replacement{max_samples=500}",
            "output_sampling=round-robin",
            "output_sampling=without-replacement"]


def run(cls, split, seed, params, **extra):
    """(hamming, subset 0/1, fit CPU s) of one fit."""
    clf = cls(random_state=seed, **params, **SERIAL, **extra)
    start = time.process_time()
    clf.fit(split.X_train, split.Y_train)
    seconds = time.process_time() - start
    q = C.quality(split.Y_test, clf.predict(split.X_test))
    return q["hamming"], q["subset01"], seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default="/work/shared/datasets")
    parser.add_argument("--datasets", nargs="+", default=["emotions", "yeast"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[1])
    parser.add_argument("--settings", nargs="+", default=SETTINGS,
                        help="param=value, several joined by ';'")
    args = parser.parse_args()
    from mlrl.boosting import BoomerClassifier as Reference

    from gpurules import BoomerClassifier as Ours

    rows = []
    for name in args.datasets:
        split = C.load_split(args.data_dir, name)
        for setting in args.settings:
            params = dict(item.split("=", 1) for item in setting.split(";"))
            Ours(max_rules=5, device="cpu", **params, **SERIAL).fit(split.X_train,
                                                                     split.Y_train)  # JIT
            for seed in args.seeds:
                ref = run(Reference, split, seed, params)
                ours = run(Ours, split, seed, params, device="cpu")
                rows.append([name, setting, seed,
                             f"{100 * ref[0]:.2f} / {100 * ours[0]:.2f}",
                             f"{100 * ref[1]:.2f} / {100 * ours[1]:.2f}",
                             f"{ref[2]:.2f} / {ours[2]:.2f}"])
                C.log(" | ".join(map(str, rows[-1])))
    print(C.markdown_table(["dataset", "setting", "seed", "Hamming % boomer/ours",
                            "subset 0/1 % boomer/ours", "fit CPU s boomer/ours"], rows))
    print()
    print("\n".join(C.machine_lines([("mlrl-boomer", "mlrl.boosting")])))


if __name__ == "__main__":
    main()
