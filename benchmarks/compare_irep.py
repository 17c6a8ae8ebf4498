"""IREP rule pruning against mlrl-boomer: conditions per rule and test-split quality.

For each dataset (MULAN train/test split, dense X), seed and parameter set, fits
mlrl-boomer's and gpurules' BoomerClassifier (CPU, one thread each, other parameters at
their defaults) with ``rule_pruning="irep"`` and without, and prints a Markdown table:
mean conditions per rule (default rule excluded), Hamming and subset 0/1 loss on the test
split. IREP prunes on the examples the instance sample leaves out, so the parameter sets
carry an instance sampling. Run with the Python that has mlrl-boomer, bounded:

    ulimit -v 4000000; timeout 600 /work/bench312/bin/python benchmarks/compare_irep.py \\
        --datasets emotions --seeds 1 2 3
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402


sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

C.use_repo_checkout()

SERIAL = C.parallel_params("1")  # one thread, as mlrl-boomer is timed
SAMPLINGS = ["without-replacement", "stratified-output-wise"]


def run(cls, split, seed, conditions, **params):
    """(conditions per rule, hamming, subset 0/1) of one fit."""
    clf = cls(random_state=seed, **SERIAL, **params)
    clf.fit(split.X_train, split.Y_train)
    q = C.quality(split.Y_test, clf.predict(split.X_test))
    return conditions(clf.model_), q["hamming"], q["subset01"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default="/work/shared/datasets")
    parser.add_argument("--datasets", nargs="+", default=["emotions"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--sampling", nargs="+", default=SAMPLINGS)
    args = parser.parse_args()
    from mlrl.boosting import BoomerClassifier as Reference

    from gpurules import BoomerClassifier as Ours

    rows = []
    for name in args.datasets:
        split = C.load_split(args.data_dir, name)
        Ours(max_rules=5, device="cpu", **SERIAL).fit(split.X_train, split.Y_train)  # JIT
        for sampling in args.sampling:
            for pruning in ("none", "irep"):
                params = dict(instance_sampling=sampling, rule_pruning=pruning)
                for seed in args.seeds:
                    ref = run(Reference, split, seed, C.mlrl_conditions_per_rule, **params)
                    ours = run(Ours, split, seed, C.conditions_per_rule, device="cpu", **params)
                    rows.append([name, sampling, pruning, seed, f"{ref[0]:.2f} / {ours[0]:.2f}",
                                 f"{100 * ref[1]:.2f} / {100 * ours[1]:.2f}",
                                 f"{100 * ref[2]:.2f} / {100 * ours[2]:.2f}"])
                    C.log(" | ".join(map(str, rows[-1])))
    print(C.markdown_table(["dataset", "instance_sampling", "rule_pruning", "seed",
                            "conditions/rule boomer/ours", "Hamming % boomer/ours",
                            "subset 0/1 % boomer/ours"], rows))
    print()
    print("\n".join(C.machine_lines([("mlrl-boomer", "mlrl.boosting")])))


if __name__ == "__main__":
    main()
