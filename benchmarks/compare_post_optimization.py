"""Sequential post-optimization against mlrl-boomer: rules, conditions and test quality.

For each dataset (MULAN train/test split, dense X) and seed, fits mlrl-boomer's and
gpurules' BoomerClassifier (CPU, one thread each, other parameters at their defaults
unless given with --param) with ``post_optimization="none"`` and ``"sequential"``, and
prints a Markdown table: rules (the default rule included), mean conditions per rule
(default rule excluded), Hamming and subset 0/1 loss on the test split, fit seconds. Run
with the Python that has mlrl-boomer, bounded:

    ulimit -v 4000000; timeout 1800 /work/bench312/bin/python \\
        benchmarks/compare_post_optimization.py --datasets emotions yeast --seeds 1 2 3
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
OPTIONS = ["none", "sequential"]


def ours_shape(model):
    """(rules incl. the default rule, mean conditions per rule) of a gpurules model."""
    return len(model), C.conditions_per_rule(model)


def mlrl_shape(model):
    """(rules incl. the default rule, mean conditions per rule) of an mlrl model."""
    return C.count_mlrl_rules(model), C.mlrl_conditions_per_rule(model)


def run(cls, split, seed, shape, **params):
    """(rules, conditions per rule, hamming, subset 0/1, seconds) of one fit."""
    clf = cls(random_state=seed, **SERIAL, **params)
    start = time.perf_counter()
    clf.fit(split.X_train, split.Y_train)
    seconds = time.perf_counter() - start
    q = C.quality(split.Y_test, clf.predict(split.X_test))
    return (*shape(clf.model_), q["hamming"], q["subset01"], seconds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default="/work/shared/datasets")
    parser.add_argument("--datasets", nargs="+", default=["emotions"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--options", nargs="+", default=OPTIONS)
    parser.add_argument("--param", nargs="*", help="key=value for both learners")
    args = parser.parse_args()
    from mlrl.boosting import BoomerClassifier as Reference

    from gpurules import BoomerClassifier as Ours

    extra = C.parse_params(args.param)
    rows = []
    for name in args.datasets:
        split = C.load_split(args.data_dir, name)
        Ours(max_rules=5, device="cpu", post_optimization="sequential", **SERIAL).fit(
            split.X_train, split.Y_train)  # JIT
        for option in args.options:
            params = dict(post_optimization=option, **extra)
            for seed in args.seeds:
                ref = run(Reference, split, seed, mlrl_shape, **params)
                ours = run(Ours, split, seed, ours_shape, device="cpu", **params)
                rows.append([name, option, seed, f"{ref[0]} / {ours[0]}",
                             f"{ref[1]:.2f} / {ours[1]:.2f}",
                             f"{100 * ref[2]:.2f} / {100 * ours[2]:.2f}",
                             f"{100 * ref[3]:.2f} / {100 * ours[3]:.2f}",
                             f"{ref[4]:.1f} / {ours[4]:.1f}"])
                C.log(" | ".join(map(str, rows[-1])))
    print(C.markdown_table(["dataset", "post_optimization", "seed", "rules boomer/ours",
                            "conditions/rule boomer/ours", "Hamming % boomer/ours",
                            "subset 0/1 % boomer/ours", "fit s boomer/ours"], rows))
    print()
    print("\n".join(C.machine_lines([("mlrl-boomer", "mlrl.boosting")])))


if __name__ == "__main__":
    main()
