"""TursClassifier: 5-fold stratified CV on scikit-learn's bundled datasets and synthetic sets.

Reports per dataset and device: ROC-AUC (macro one-vs-rest for multi-class), the ROC-AUC
under "random picking" (each test example covered by several rules gets ONE of them at
random: equal to the first column when the rules are truly unordered), rules, literals, the
fraction of test examples covered by several rules, and the fit time per fold (median of the
warm folds; the first fold of the first dataset also pays Numba compilation, listed apart).
The authors' TURS is not on PyPI, so its published figures (issue 7, same protocol) are
printed beside ours instead of being run here.

    OMP_WAIT_POLICY=passive /work/bench312/bin/python benchmarks/compare_turs.py \
        --datasets iris wine breast_cancer digits synthetic --sizes 5000 20000
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import _common  # noqa: E402

_common.use_repo_checkout()

import numpy as np  # noqa: E402
from sklearn import datasets as skd  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402

from gpurules import TursClassifier  # noqa: E402
from gpurules.backends.factory import cuda_status  # noqa: E402

# the authors' implementation, StratifiedKFold(5, shuffle=True, random_state=2), beam 10,
# 20 cut points (issue 7): ROC-AUC, seconds per fold
AUTHORS = {"iris": (0.981, 1.1), "wine": (0.939, 5.4), "breast_cancer": (0.951, 25.0),
           "synthetic-5000": (None, 2760.0)}
BUNDLED = {"iris": skd.load_iris, "wine": skd.load_wine,
           "breast_cancer": skd.load_breast_cancer, "digits": skd.load_digits}


def load(name, size, seed):
    """(X, y) of a bundled dataset or of ``make_classification`` with ``size`` examples, 20
    features (8 informative, 4 redundant) and 4 classes."""
    if name in BUNDLED:
        return BUNDLED[name](return_X_y=True)
    return skd.make_classification(n_samples=size, n_features=20, n_informative=8,
                                   n_redundant=4, n_classes=4, random_state=seed)


def auc(y, proba):
    if proba.shape[1] == 2:
        return roc_auc_score(y, proba[:, 1])
    return roc_auc_score(y, proba, multi_class="ovr", average="macro")


def cross_validate(X, y, device, args):
    """Per-fold metrics of TursClassifier on ``device``."""
    folds = StratifiedKFold(args.folds, shuffle=True, random_state=args.seed)
    rows = []
    for i, (tr, te) in enumerate(folds.split(X, y)):
        clf = TursClassifier(device=device, beam_width=args.beam_width,
                             n_cut_points=args.cut_points,
                             literal_count_code=args.count_code)
        seconds, _ = _common.timed(lambda: clf.fit(X[tr], y[tr]))
        cov = clf.model_.coverage_matrix(X[te].astype(np.float32))
        rows.append({
            "auc": auc(y[te], clf.predict_proba(X[te])),
            "random": auc(y[te], clf.model_.random_pick_proba(X[te].astype(np.float32),
                                                              random_state=i)),
            "rules": len(clf.model_), "literals": clf.model_.n_literals,
            "overlap": float((cov.sum(axis=1) > 1).mean()), "seconds": seconds})
        _common.log(f"  fold {i}: {rows[-1]}")
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=list(BUNDLED) + ["synthetic"])
    p.add_argument("--sizes", nargs="+", type=int, default=[5000, 20000],
                   help="example counts of the synthetic sets")
    p.add_argument("--devices", nargs="+", default=None,
                   help="default: cpu, plus cuda when a GPU is usable")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--seed", type=int, default=2)
    p.add_argument("--beam-width", type=int, default=10)
    p.add_argument("--cut-points", type=int, default=20)
    p.add_argument("--count-code", default="universal", choices=["uniform", "universal"])
    args = p.parse_args()
    devices = args.devices or (["cpu", "cuda"] if cuda_status(0)[0] else ["cpu"])
    jobs = [(d, None) for d in args.datasets if d != "synthetic"]
    if "synthetic" in args.datasets:
        jobs += [("synthetic", s) for s in args.sizes]
    table, first = [], None
    for name, size in jobs:
        X, y = load(name, size, seed=1)
        label = name if size is None else f"synthetic-{size}"
        for device in devices:
            _common.log(f"{label} ({X.shape[0]} x {X.shape[1]}, {len(np.unique(y))} classes)"
                        f" on {device}")
            rows = cross_validate(X, y, device, args)
            if first is None:
                first = rows[0]["seconds"]
            warm = [r["seconds"] for r in rows[1:]] or [rows[0]["seconds"]]
            mean = {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}
            ref_auc, ref_s = AUTHORS.get(label, (None, None))
            table.append([
                label, f"{X.shape[0]}x{X.shape[1]}", len(np.unique(y)), device,
                f"{mean['auc']:.3f}", f"{mean['random']:.3f}", f"{mean['rules']:.1f}",
                f"{mean['literals']:.1f}", f"{mean['overlap']:.3f}",
                _common.fmt_seconds(_common.median(warm)),
                "-" if ref_auc is None else f"{ref_auc:.3f}",
                "-" if ref_s is None else _common.fmt_seconds(ref_s)])
    print("\n".join(_common.machine_lines()))
    print(f"- protocol: StratifiedKFold({args.folds}, shuffle=True, random_state={args.seed}),"
          f" beam_width={args.beam_width}, n_cut_points={args.cut_points}, "
          f"literal_count_code={args.count_code}; first fold incl. Numba compilation: "
          f"{_common.fmt_seconds(first)}\n")
    print(_common.markdown_table(
        ["dataset", "n x d", "classes", "device", "ROC-AUC", "random picking", "rules",
         "literals", "multi-covered", "fit s/fold", "authors' AUC", "authors' s/fold"],
        table))


if __name__ == "__main__":
    main()
