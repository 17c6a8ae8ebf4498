"""Multi-label TURS (binary relevance, label powerset) against BOOMER and SeCo (defaults) on
the MULAN train/test splits: Hamming loss, subset 0/1 loss, example-based F1, micro F1,
macro per-label ROC-AUC of the probabilities (TURS; BOOMER's ``predict_proba``), rules and
fit time (one fit each; the first fit of each learner also compiles Numba, so a warm-up fit
on a small slice of the data runs first and is not timed).

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/compare_turs_multilabel.py \
        --datasets emotions scene --methods turs-br turs-lp boomer seco
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
from sklearn.metrics import f1_score, roc_auc_score  # noqa: E402

from gpurules import BoomerClassifier, SeCoClassifier, TursClassifier  # noqa: E402


def make(method, seed, beam_width):
    """A fresh estimator of ``method`` (TURS with ``beam_width``; the others' defaults)."""
    if method == "turs-br":
        return TursClassifier(device="cpu", random_state=seed, beam_width=beam_width,
                              multi_label="binary-relevance")
    if method == "turs-lp":
        return TursClassifier(device="cpu", random_state=seed, beam_width=beam_width,
                              multi_label="label-powerset")
    if method == "boomer":
        return BoomerClassifier(random_state=seed)
    if method == "seco":
        return SeCoClassifier(random_state=seed)
    raise ValueError(method)


def n_rules(est):
    """Rules of a fitted estimator (TURS binary relevance: summed over the labels)."""
    return len(est.model_)


def macro_auc(Y, proba):
    """Mean ROC-AUC over the labels with both values in the test set (NaN if none)."""
    cols = [k for k in range(Y.shape[1]) if 0 < Y[:, k].sum() < Y.shape[0]]
    if not cols:
        return float("nan")
    return float(np.mean([roc_auc_score(Y[:, k], proba[:, k]) for k in cols]))


def evaluate(method, split, args):
    """One row: the metrics of ``method`` fitted on the training part of ``split``."""
    make(method, args.seed, args.beam_width).fit(split.X_train[:50], split.Y_train[:50])
    est = make(method, args.seed, args.beam_width)
    seconds, _ = _common.timed(lambda: est.fit(split.X_train, split.Y_train))
    P = _common.predictions_dense(est.predict(split.X_test))
    q = _common.quality(split.Y_test, P)
    proba = est.predict_proba(split.X_test) if method != "seco" else None
    auc = macro_auc(split.Y_test, np.asarray(proba)) if proba is not None else float("nan")
    return [split.name, method, f"{q['hamming']:.4f}", f"{q['subset01']:.4f}",
            f"{q['ex_f1']:.4f}", f"{f1_score(split.Y_test, P, average='micro'):.4f}",
            "-" if np.isnan(auc) else f"{auc:.4f}", n_rules(est), f"{seconds:.1f}"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["emotions", "scene"])
    parser.add_argument("--methods", nargs="+",
                        default=["turs-br", "turs-lp", "boomer", "seco"])
    parser.add_argument("--data-dir", default=str(_common.DEFAULT_DATA_DIR))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--beam-width", type=int, default=10)
    args = parser.parse_args()
    rows = []
    for name in args.datasets:
        split = _common.load_split(args.data_dir, name)
        for method in args.methods:
            _common.log(f"{name} {method}")
            rows.append(evaluate(method, split, args))
            _common.log(" | ".join(map(str, rows[-1])))
    print("\n".join(_common.machine_lines()))
    print(_common.markdown_table(["dataset", "method", "Hamming", "subset 0/1", "ex. F1",
                                  "micro F1", "label AUC", "rules", "fit s"], rows))


if __name__ == "__main__":
    main()
