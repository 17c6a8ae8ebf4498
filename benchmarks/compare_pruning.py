"""Global pruning against mlrl-boomer: rules kept, test-split quality and fit CPU time.

For each dataset (MULAN train/test split, dense X), seed and ``global_pruning`` value, fits
mlrl-boomer's and gpurules' BoomerClassifier (CPU, one thread each, other parameters at
their defaults) and prints a Markdown table: rules (default rule counted; mlrl-boomer's
used rules), Hamming and subset 0/1 loss on the test split, fit CPU time
(``time.process_time``). One warm-up fit of gpurules per dataset keeps Numba's compile
time out of the timings. Run with the Python that has mlrl-boomer, bounded:

    ulimit -v 4000000; timeout 600 /work/bench312/bin/python benchmarks/compare_pruning.py \\
        --datasets emotions yeast scene --seeds 1 2 3
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


def run(cls, split, seed, pruning, count, **extra):
    """(rules, hamming, subset 0/1, fit CPU s) of one fit."""
    clf = cls(random_state=seed, global_pruning=pruning, **SERIAL, **extra)
    start = time.process_time()
    clf.fit(split.X_train, split.Y_train)
    seconds = time.process_time() - start
    q = C.quality(split.Y_test, clf.predict(split.X_test))
    return count(clf.model_), q["hamming"], q["subset01"], seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default="/work/shared/datasets")
    parser.add_argument("--datasets", nargs="+", default=["emotions", "yeast", "scene"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[1])
    parser.add_argument("--pruning", nargs="+", default=["pre-pruning", "post-pruning"])
    args = parser.parse_args()
    from mlrl.boosting import BoomerClassifier as Reference

    from gpurules import BoomerClassifier as Ours

    rows = []
    for name in args.datasets:
        split = C.load_split(args.data_dir, name)
        Ours(max_rules=5, device="cpu", **SERIAL).fit(split.X_train, split.Y_train)  # JIT
        for pruning in args.pruning:
            for seed in args.seeds:
                ref = run(Reference, split, seed, pruning, C.count_mlrl_rules)
                ours = run(Ours, split, seed, pruning, len, device="cpu")
                rows.append([name, pruning, seed, f"{ref[0]} / {ours[0]}",
                             f"{100 * ref[1]:.2f} / {100 * ours[1]:.2f}",
                             f"{100 * ref[2]:.2f} / {100 * ours[2]:.2f}",
                             f"{ref[3]:.2f} / {ours[3]:.2f}"])
                C.log(" | ".join(map(str, rows[-1])))
    print(C.markdown_table(["dataset", "global_pruning", "seed", "rules boomer/ours",
                            "Hamming % boomer/ours", "subset 0/1 % boomer/ours",
                            "fit CPU s boomer/ours"], rows))
    print()
    print("\n".join(C.machine_lines([("mlrl-boomer", "mlrl.boosting")])))


if __name__ == "__main__":
    main()
