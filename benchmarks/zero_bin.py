"""mlrl-boomer's equal-width search with and without its zero-bin bug, beside ours (issue 17).

mlrl-boomer 0.15.6 keeps the examples of the bin that holds the value 0 implicitly; after a
condition on another feature its filtered bins count them with the highest bin (user guide,
"Feature binning: what mlrl-boomer does", item 8), so its binned rules score other
candidates than the conditions they store, end earlier and cost less. Adding a constant to
every feature value (``--shift``, default 100) puts 0 below every feature's range: the
bug no longer fires and the learners' searches are otherwise unchanged (equal-width bins
and exact thresholds move with the data). This script fits both learners on the synthetic
continuous set of ``compare_devices.py`` (``--noise 0``: its count data) as it is and
shifted, and prints the process CPU time of one fit (one thread, ``parallel_*="false"``,
ours after an untimed warm-up fit of each search), the conditions per rule and the test
Hamming loss.

    OMP_WAIT_POLICY=passive /work/bench312/bin/python benchmarks/zero_bin.py \\
        --sizes 1e4 1e5 --binnings "equal-width{max_bins=255}" --max-rules 30

On count data the shift does not make mlrl-boomer's equal-width fits a reference either:
its thresholds, upper edges of bins numbered among the non-empty ones (user guide, item
4), then all fall next to each feature's smallest value, and its model predicts the base
rate (docs/benchmarks.md, session 47).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

C.use_repo_checkout()

import numpy as np  # noqa: E402

from compare_devices import parse_size  # noqa: E402
from synthetic_data import synthetic_split  # noqa: E402

SYSTEMS = (("mlrl-boomer", "mlrl"), ("gpurules", "ours"))


def shifted(split: C.Split, shift: float) -> C.Split:
    """The split with ``shift`` added to every feature value (float32)."""
    add = np.float32(shift)
    return dataclasses.replace(split, X_train=split.X_train + add, X_test=split.X_test + add)


def measure(learner: str, split: C.Split, binning: str, max_rules: int) -> list:
    """[fit CPU s, conditions per rule, test Hamming %] of one fit."""
    clf = C.boomer_estimator(learner, 1, feature_binning=binning, max_rules=max_rules)
    seconds, quality = C.timed_fit(clf, split)
    per_rule = (C.mlrl_conditions_per_rule if learner == "mlrl"
                else C.conditions_per_rule)(clf.model_)
    return [f"{seconds:.2f}", f"{per_rule:.1f}", f"{100 * quality['hamming']:.2f}"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", nargs="*", type=parse_size, default=[10_000])
    p.add_argument("--binnings", nargs="*", default=["equal-width{max_bins=255}"])
    p.add_argument("--max-rules", type=int, default=30)
    p.add_argument("--noise", type=float, default=0.5)
    p.add_argument("--shift", type=float, default=100.0)
    args = p.parse_args(argv)
    warm = synthetic_split(1000, 1, args.noise)
    for binning in args.binnings:  # untimed: compiles our kernels of each search
        C.boomer_estimator("ours", 1, feature_binning=binning, max_rules=3).fit(
            warm.X_train, warm.Y_train)
    rows = []
    for n in args.sizes:
        split = synthetic_split(n, 1, args.noise)
        for binning in args.binnings:
            for shift in (0.0, args.shift):
                data = shifted(split, shift)
                for system, learner in SYSTEMS:
                    C.log(f"n={n} {binning} shift={shift:g}: {system}")
                    rows.append([n, binning, f"{shift:g}", system,
                                 *measure(learner, data, binning, args.max_rules)])
    print("\n".join(C.machine_lines([("mlrl-boomer", "mlrl")])))
    print(f"- max_rules={args.max_rules}, one thread, process CPU time of one fit; noise "
          f"{args.noise}; conditions = mean per rule\n")
    print(C.markdown_table(["n", "feature_binning", "shift", "system", "fit CPU s",
                            "conditions per rule", "test Hamming %"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
