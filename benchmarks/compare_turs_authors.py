"""TursClassifier against the authors' TURS (github.com/ylincen/TURS2), run side by side.

Several synthetic sets (``compare_turs.load``: ``make_classification`` with 20 features,
8 informative, 4 redundant, 4 classes; one set per seed), one train/test split each: fold 0
of ``StratifiedKFold(5, shuffle=True, random_state=2)`` (compare_turs.py's protocol, 80/20).
With ``--datasets iris wine breast_cancer`` (scikit-learn's bundled sets) every fold of that
cross-validation instead, as ``compare_turs.py`` runs them, so the per-dataset mean ROC-AUC
is the figure of its tables, here measured for both implementations on the same folds.
Both learners fit the same training part with beam width 10 and 20 cut points; ours with
``TursClassifier(device="cpu", beam_width, n_cut_points)`` and its defaults otherwise, the
authors' with the settings of their ``run_all.py`` (the paper's: MDL local test
``validity_check="either"``, learning-speed score ``"normalized"``, diverse-patience beam,
no auxiliary beam, at most 500 rules and 500 growth steps, ``min_sample_each_rule=2``) and
their ``predict_ruleset`` for the test probabilities. Reported per seed and as mean ± sd:
test ROC-AUC (``compare_turs.auc``: macro one-vs-rest), rules, literals, fit CPU seconds
(``time.process_time`` of this process, after an untimed warm-up fit of each on 300
examples that compiles Numba; run it with one thread), and the paired difference
ours - authors'.

The authors' code is not on PyPI: pass the directory that holds their ``turs2`` package
(it needs numpy, pandas, scipy, scikit-learn and numba; ``nml_regret`` runs as plain Python
or compiled with Cython). Without ``--authors-path`` the script cannot run and exits 2.

    OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/compare_turs_authors.py \
        --authors-path /work/turs2-authors --seeds 0 1 2 3 4 5 6 7 8 9 --size 2000
    ... compare_turs_authors.py --authors-path /work/turs2-authors --datasets iris wine
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import _common  # noqa: E402

_common.use_repo_checkout()

import numpy as np  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402

from compare_turs import BUNDLED, auc, load  # noqa: E402
from gpurules import TursClassifier  # noqa: E402


def import_authors(path):
    """The authors' modules from ``path`` (their repository root or its ``turs2`` folder)."""
    root = Path(path).resolve()
    if root.name == "turs2" and not (root / "turs2").is_dir():
        root = root.parent
    if not (root / "turs2" / "Ruleset.py").is_file():
        raise FileNotFoundError(f"no turs2/Ruleset.py under {root}")
    sys.path.insert(0, str(root))
    from turs2.DataEncoding import NMLencoding
    from turs2.DataInfo import DataInfo
    from turs2.ModelEncoding import ModelEncodingDependingOnData
    from turs2.Ruleset import Ruleset
    from turs2.utils_predict import predict_ruleset
    return types.SimpleNamespace(NMLencoding=NMLencoding, DataInfo=DataInfo,
                                 ModelEncoding=ModelEncodingDependingOnData, Ruleset=Ruleset,
                                 predict=predict_ruleset, root=root)


def authors_config(n_features, beam_width, cut_points):
    """The ``alg_config`` their ``run_all.py`` builds for one fold (its defaults)."""
    return types.SimpleNamespace(
        num_candidate_cuts=cut_points, max_num_rules=500, max_grow_iter=500,
        num_class_as_given=None, beam_width=beam_width, log_learning_process=False,
        dataset_name=None, X_test=None, y_test=None,
        feature_names=[f"X{i}" for i in range(n_features)],
        beamsearch_positive_gain_only=False,
        beamsearch_normalized_gain_must_increase_comparing_rulebase=False,
        beamsearch_stopping_when_best_normalized_gain_decrease=False,
        validity_check="either", rerun_on_invalid=False, rerun_positive_control=False,
        min_sample_each_rule=2, scoring="normalized", use_patience=True)


def fit_authors(mod, X, y, Xte, args, seed):
    """(test probabilities, rules, literals, CPU seconds) of the authors' TURS."""
    np.random.seed(seed)  # their cut points add a 1e-6 jitter from the global generator
    t0 = time.process_time()
    info = mod.DataInfo(X=X, y=y, beam_width=None, not_use_excl_=True,
                        alg_config=authors_config(X.shape[1], args.beam_width,
                                                  args.cut_points))
    ruleset = mod.Ruleset(data_info=info, data_encoding=mod.NMLencoding(info),
                          model_encoding=mod.ModelEncoding(info))
    ruleset.fit(max_iter=1000, printing=False)
    seconds = time.process_time() - t0
    proba = mod.predict(ruleset, Xte, np.zeros(len(Xte), dtype=int))
    literals = int(sum(np.sum(r.condition_count > 0) for r in ruleset.rules))
    return proba, len(ruleset.rules), literals, seconds


def fit_ours(X, y, Xte, args):
    clf = TursClassifier(device="cpu", beam_width=args.beam_width,
                         n_cut_points=args.cut_points)
    t0 = time.process_time()
    clf.fit(X, y)
    seconds = time.process_time() - t0
    return clf.predict_proba(Xte), len(clf.model_), clf.model_.n_literals, seconds


def cases(args):
    """(dataset, split label, X, y, train index, test index, seed of the authors' jitter)
    of every fit pair: one split per synthetic seed, every fold of a bundled set."""
    folds = StratifiedKFold(5, shuffle=True, random_state=2)
    for name in args.datasets:
        if name == "synthetic":
            for seed in args.seeds:
                X, y = load("synthetic", args.size, seed)
                tr, te = list(folds.split(X, y))[args.fold]
                yield f"synthetic-{args.size}", f"seed {seed}", X, y, tr, te, seed
        else:
            X, y = load(name, None, None)
            for i, (tr, te) in enumerate(folds.split(X, y)):
                yield name, f"fold {i}", X, y, tr, te, i


def mean_sd(values, digits=3):
    v = np.asarray(values, dtype=float)
    sd = v.std(ddof=1) if len(v) > 1 else 0.0
    return f"{v.mean():.{digits}f} ± {sd:.{digits}f}"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--authors-path", help="the directory holding the authors' turs2 package")
    p.add_argument("--datasets", nargs="+", default=["synthetic"],
                   choices=["synthetic", *BUNDLED],
                   help="synthetic: one set per seed; a bundled set: all 5 folds")
    p.add_argument("--seeds", nargs="+", type=int, default=list(range(10)),
                   help="make_classification seeds, one dataset and split each")
    p.add_argument("--size", type=int, default=2000, help="examples per synthetic set")
    p.add_argument("--fold", type=int, default=0,
                   help="which fold of StratifiedKFold(5, shuffle, random_state=2) is the test set")
    p.add_argument("--beam-width", type=int, default=10)
    p.add_argument("--cut-points", type=int, default=20)
    p.add_argument("--json", help="also write the per-seed rows to this file")
    args = p.parse_args()
    if not args.authors_path:
        p.print_usage(sys.stderr)
        print("compare_turs_authors.py: cannot run without --authors-path (the authors' "
              "TURS is not installable; point it at a checkout of github.com/ylincen/TURS2)",
              file=sys.stderr)
        sys.exit(2)
    try:
        mod = import_authors(args.authors_path)
    except Exception as exc:  # noqa: BLE001 - any import failure means: cannot run
        print(f"compare_turs_authors.py: cannot import the authors' code from "
              f"{args.authors_path}: {exc!r}", file=sys.stderr)
        sys.exit(2)
    _common.log(f"authors' code from {mod.root}")
    # untimed warm-up on a small set: Numba compiles our kernels (and any of theirs) here
    Xw, yw = load("synthetic", 300, 12345)
    fit_ours(Xw, yw, Xw[:5], args)
    fit_authors(mod, Xw, yw, Xw[:5], args, 0)

    rows = []
    for dataset, split, X, y, tr, te, seed in cases(args):
        row = {"dataset": dataset, "split": split}
        for side, fit in (("ours", lambda: fit_ours(X[tr], y[tr], X[te], args)),
                          ("authors", lambda: fit_authors(mod, X[tr], y[tr], X[te], args,
                                                          seed))):
            proba, n_rules, n_lits, seconds = fit()
            row.update({f"{side}_auc": float(auc(y[te], proba)), f"{side}_rules": n_rules,
                        f"{side}_literals": n_lits, f"{side}_seconds": seconds})
        rows.append(row)
        _common.log(f"{dataset} {split}: {row}")
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1))

    print("\n".join(_common.machine_lines()))
    print(f"- protocol: test = fold {args.fold} of StratifiedKFold(5, shuffle=True, "
          f"random_state=2) per synthetic seed (make_classification(n={args.size}, 20 "
          f"features, 8 informative, 4 redundant, 4 classes, random_state=seed)); every "
          f"fold of it for a bundled set; beam width {args.beam_width}, {args.cut_points} "
          f"cut points; CPU seconds of the fit (time.process_time)")
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        print_dataset(dataset, [r for r in rows if r["dataset"] == dataset])


def print_dataset(dataset, rows):
    """The per-split table of one dataset, its mean ± sd row and the paired difference."""
    diff = np.array([r["ours_auc"] - r["authors_auc"] for r in rows])
    table = [[r["split"], f"{r['ours_auc']:.4f}", f"{r['authors_auc']:.4f}",
              f"{r['ours_auc'] - r['authors_auc']:+.4f}", r["ours_rules"],
              r["authors_rules"], r["ours_literals"], r["authors_literals"],
              f"{r['ours_seconds']:.2f}", f"{r['authors_seconds']:.1f}"] for r in rows]
    col = {k: [r[k] for r in rows] for k in rows[0]}
    table.append([
        "mean ± sd", mean_sd(col["ours_auc"], 4), mean_sd(col["authors_auc"], 4),
        mean_sd(diff, 4), mean_sd(col["ours_rules"], 1), mean_sd(col["authors_rules"], 1),
        mean_sd(col["ours_literals"], 1), mean_sd(col["authors_literals"], 1),
        mean_sd(col["ours_seconds"], 2), mean_sd(col["authors_seconds"], 1)])
    print(f"\n{dataset}: ROC-AUC ours - authors' {mean_sd(diff, 4)} (paired, {len(diff)} "
          f"splits); ours higher on {int((diff > 0).sum())}, authors' higher on "
          f"{int((diff < 0).sum())}, equal on {int((diff == 0).sum())}\n")
    print(_common.markdown_table(
        ["split", "AUC ours", "AUC authors", "diff", "rules ours", "rules authors",
         "literals ours", "literals authors", "CPU s ours", "CPU s authors"], table))

if __name__ == "__main__":
    main()
