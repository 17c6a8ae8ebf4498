"""The m-estimate / φ grid of Rapp et al. (2019) for the unordered SeCo variant.

For each dataset and each ``m`` the unordered rule set (``rule_set="unordered{...}"``, rules
from random forests selected with the m-estimate) is fitted once; it is then evaluated on
the test split for every threshold φ (rules whose m-estimate on the training set is below φ
are dropped, ``DecisionList.with_threshold``). Prints a Markdown table per dataset: rules
(default rule included), Hamming loss, subset 0/1 loss, micro-F1 and example-wise F1.

    /work/bench312/bin/python benchmarks/seco_unordered_grid.py --datasets emotions \\
        --m 0,2,22.466,100 --phi 0,0.3,0.5,0.7,0.9
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

C.use_repo_checkout()


def floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", type=Path, default=C.DEFAULT_DATA_DIR)
    p.add_argument("--datasets", default="emotions,yeast,scene")
    p.add_argument("--m", default="0,1,2,4,8,16,22.466,32,64,128", help="m values")
    p.add_argument("--phi", default="0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9", help="thresholds")
    p.add_argument("--rule-set", default="unordered",
                   help="rule_set value, e.g. 'unordered{num_trees=100,max_depth=10}'")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)
    from sklearn.metrics import f1_score

    from gpurules.estimators.seco import SeCoClassifier

    lines = ["## Unordered SeCo: m-estimate x threshold φ", ""]
    lines += C.machine_lines()
    lines += [f"- rule_set={args.rule_set!r}, random_state={args.seed}; quality on the test "
              f"split; rules include the default rule", ""]
    headers = ["m", "φ", "rules", "Hamming %", "subset 0/1 %", "micro-F1 %", "ex-F1 %"]
    for name in [d.strip() for d in args.datasets.split(",") if d.strip()]:
        split = C.load_split(args.data_dir, name, dense=True)
        X_test = np.ascontiguousarray(split.X_test, dtype=np.float32)
        rows = []
        for m in floats(args.m):
            C.log(f"{name}: m={m}")
            clf = SeCoClassifier(device="cpu", random_state=args.seed, rule_set=args.rule_set,
                                 heuristic=f"m-estimate{{m={m}}}")
            clf.fit(split.X_train, split.Y_train,
                    nominal_feature_indices=list(split.nominal_features))
            for phi in floats(args.phi):
                model = clf.model_.with_threshold(phi)
                P = model.predict(X_test)
                q = C.quality(split.Y_test, P)
                micro = f1_score(split.Y_test, P, average="micro", zero_division=1)
                rows.append([f"{m:g}", f"{phi:g}", len(model), f"{100 * q['hamming']:.2f}",
                             f"{100 * q['subset01']:.2f}", f"{100 * micro:.2f}",
                             f"{100 * q['ex_f1']:.2f}"])
        lines += [f"### {name}", "", C.markdown_table(headers, rows), ""]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
