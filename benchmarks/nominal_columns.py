"""Data made of many nominal columns (issue 22): a generator and a CPU-time comparison.

``make_nominal_columns`` builds a data set like the ones where issue 22 found our CPU fits
slower than mlrl-boomer / mlrl-seco: ``n`` examples, ``A`` binary nominal columns of which
most are constant or nearly constant (a few ones), a few are informative, and ``K`` labels,
each the OR of two noisy informative columns.

The comparison fits ours and the mlrl learner in the same process, one thread each
(``parallel_rule_refinement`` / ``parallel_statistic_update`` / ``parallel_prediction`` =
"false" on both sides), and reports the **process CPU time** (``time.process_time``) of the
warm fits (median of ``--repeats``), after one warm-up fit of ours (Numba compilation or
its on-disk cache) and one of mlrl's.

Configurations: ``boomer`` (BOOMER defaults), ``boomer-pd`` (``head_type="partial-dynamic"``),
``seco`` (SeCo defaults). Data: ``synthetic`` (1,200 columns, 27 labels, 3,000 examples, 90 % of the columns nearly
constant), ``synthetic-constant`` (the same with 20 % all-zero columns), ``synthetic-pd``
(260 columns, 19 labels), or a MULAN name in ``--data-dir`` (e.g. medical). The tables
count the rules of both learners: mlrl-boomer stops a fit when no sampled feature offers a
refinement, so compare times only where the counts agree.

    OMP_WAIT_POLICY=passive /work/bench312/bin/python benchmarks/nominal_columns.py \\
        --data synthetic medical --configs boomer boomer-pd seco --repeats 3

``--models PATH`` writes ``str(clf.model_)`` of ours per (data, config) to PATH, so a change
can be checked to learn the same models (``diff`` the files before and after).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # before mlrl's OpenMP runtime loads

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

C.use_repo_checkout()

SERIAL = {"parallel_rule_refinement": "false", "parallel_statistic_update": "false",
          "parallel_prediction": "false"}
CONFIGS = {
    "boomer": ("boomer", {}),
    "boomer-pd": ("boomer", {"head_type": "partial-dynamic"}),
    "seco": ("seco", {}),
}
PRESETS = {
    # constant columns removed, as in issue 22's measurement (with all-zero columns
    # mlrl-boomer may stop the fit early: no sampled feature offers a refinement)
    "synthetic": dict(n=3000, n_columns=1200, n_labels=27, constant_share=0.0,
                      rare_share=0.9),
    "synthetic-pd": dict(n=3000, n_columns=260, n_labels=19, constant_share=0.0,
                         rare_share=0.6),
    # with 20 % all-zero columns
    "synthetic-constant": dict(n=3000, n_columns=1200, n_labels=27, constant_share=0.2,
                               rare_share=0.6),
}


def make_nominal_columns(n=3000, n_columns=1200, n_labels=27, constant_share=0.6,
                         rare_share=0.3, n_informative=40, noise=0.05, seed=0):
    """A data set of binary nominal columns, most of them (nearly) constant.

    Columns, in a shuffled order: ``constant_share`` of them all zero (a few all one);
    ``rare_share`` nearly constant (1 with a probability drawn from [0.0005, 0.01]);
    ``n_informative`` informative (1 with a probability from [0.05, 0.4]); the rest
    moderately sparse (probability from [0.01, 0.05]). Label ``k`` is the OR of two
    informative columns, each of its values flipped with probability ``noise``.

    Returns ``X`` float32 (n, n_columns) of 0/1, ``Y`` uint8 (n, n_labels) of 0/1 and the
    nominal feature indices (all columns), a list of int.
    """
    rng = np.random.default_rng(seed)
    n_constant = int(constant_share * n_columns)
    n_rare = int(rare_share * n_columns)
    n_rest = n_columns - n_constant - n_rare - n_informative
    if n_rest < 0:
        raise ValueError("constant_share + rare_share + n_informative exceed n_columns")
    p = np.concatenate([
        np.where(rng.random(n_constant) < 0.05, 1.0, 0.0),
        rng.uniform(0.0005, 0.01, n_rare),
        rng.uniform(0.05, 0.4, n_informative),
        rng.uniform(0.01, 0.05, n_rest),
    ])
    X = (rng.random((n, n_columns)) < p).astype(np.float32)
    informative = np.arange(n_constant + n_rare, n_constant + n_rare + n_informative)
    pairs = rng.choice(informative, size=(n_labels, 2))
    Y = (X[:, pairs[:, 0]] + X[:, pairs[:, 1]] > 0).astype(np.uint8)
    Y ^= (rng.random(Y.shape) < noise).astype(np.uint8)
    order = rng.permutation(n_columns)
    return np.ascontiguousarray(X[:, order]), Y, list(range(n_columns))


def load(name, data_dir):
    """(X_train float32, Y_train uint8, nominal indices) for a preset or a MULAN data set."""
    if name in PRESETS:
        return make_nominal_columns(**PRESETS[name])
    split = C.load_split(data_dir, name, dense=True)
    return split.X_train, split.Y_train, list(split.nominal_features)


def classes(family):
    """(ours, mlrl's) estimator classes of a family, "boomer" or "seco"."""
    if family == "boomer":
        from mlrl.boosting import BoomerClassifier as Reference

        from gpurules import BoomerClassifier as Ours
    else:
        from mlrl.seco import SeCoClassifier as Reference

        from gpurules import SeCoClassifier as Ours
    return Ours, Reference


def cpu_seconds(make, X, Y, nominal, repeats):
    """Median process CPU seconds of ``repeats`` fits of ``make()`` and the last estimator."""
    times = []
    for _ in range(repeats):
        clf = make()
        start = time.process_time()
        clf.fit(X, Y, nominal_feature_indices=nominal)
        times.append(time.process_time() - start)
    return C.median(times), clf


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="+", default=["synthetic", "medical"])
    parser.add_argument("--configs", nargs="+", choices=list(CONFIGS), default=list(CONFIGS))
    parser.add_argument("--data-dir", default=str(C.DEFAULT_DATA_DIR))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ours-only", action="store_true", help="skip the mlrl learner")
    parser.add_argument("--models", help="write our models' text to this file")
    args = parser.parse_args(argv)
    rows, texts = [], []
    for name in args.data:
        X, Y, nominal = load(name, args.data_dir)
        for config in args.configs:
            family, params = CONFIGS[config]
            Ours, Reference = classes(family)
            kw = dict(random_state=1, **SERIAL, **params)
            ours_make = lambda: Ours(device="cpu", **kw)  # noqa: E731
            ours_make().fit(X, Y, nominal_feature_indices=nominal)  # warm up
            ours_s, clf = cpu_seconds(ours_make, X, Y, nominal, args.repeats)
            texts.append(f"== {name} {config}\n{clf.model_}\n")
            ref_s, ref_rules = float("nan"), ""
            if not args.ours_only:
                ref_make = lambda: Reference(**kw)  # noqa: E731
                ref_make().fit(X, Y, nominal_feature_indices=nominal)  # warm up
                ref_s, ref = cpu_seconds(ref_make, X, Y, nominal, args.repeats)
                ref_rules = C.count_mlrl_rules(ref.model_)
            C.log(f"{name} {config}: ours {ours_s:.3f} s, mlrl {ref_s:.3f} s")
            rows.append([name, f"{X.shape[0]}x{X.shape[1]}, {Y.shape[1]} labels", config,
                         C.fmt_seconds(ours_s), C.fmt_seconds(ref_s),
                         C.fmt_ratio(ours_s, ref_s), f"{len(clf.model_)} / {ref_rules}"])
    print(C.markdown_table(["data", "shape", "config", "ours CPU s", "mlrl CPU s",
                            "ours/mlrl", "rules ours / mlrl"], rows))
    if args.models:
        Path(args.models).write_text("".join(texts))


if __name__ == "__main__":
    main()
