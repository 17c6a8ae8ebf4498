"""Random BOOMER configurations on random small data: two fits that must learn the same model.

Not a test (each new configuration compiles for 10-70 s, more than the suite can hold) but a
search for the combinations the tests do not name. Each case draws a configuration from
``SPACE`` (every option left out with probability 0.4, so that defaults are drawn too) and a
data set (40-250 examples, 2-9 features: continuous, counts, mostly zero, nominal; missing
values in half of them; CSR input for some sparse-format cases), then fits twice:

- ``--mode batches``: the batched rule loop (``fused_rules``) against the learner's loop
  over one rule at a time, on one thread (what ``tests/test_fused_rules.py`` checks for the
  configurations it names);
- ``--mode threads``: one thread against two with every phase on both
  (``threads.MIN_PARALLEL_WORK = MIN_PARALLEL_FIT = 0``).

A case passes when both fits give the same model text and decision function, the same
warnings, finite scores and a pickled copy that predicts the same. One JSON line per case
(seed, seconds, status, parameters, data shape); the exit code is 1 if any case failed
other than by a ``ValueError`` or ``TypeError`` raised for the configuration.

    .venv/bin/python benchmarks/config_fuzz.py --mode batches --seed 1000 --minutes 30
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

C.use_repo_checkout()

from gpurules import BoomerClassifier  # noqa: E402
from gpurules.backends.cpu import CpuBackend  # noqa: E402
from gpurules.jit import threads  # noqa: E402

SPACE = {
    "head_type": ["auto", "single", "complete", "partial-fixed", "partial-dynamic",
                  "partial-fixed{output_ratio=0.5}",
                  "partial-dynamic{threshold=0.5,exponent=1.5}"],
    "loss": ["logistic-decomposable", "logistic-non-decomposable",
             "squared-error-decomposable", "squared-hinge-decomposable"],
    "label_binning": ["auto", "none", "equal-width"],
    "feature_binning": ["none", "equal-width", "equal-width{bin_ratio=0.1}"],
    "feature_format": ["auto", "dense", "sparse"],
    "rule_induction": ["top-down-greedy", "top-down-greedy{max_conditions=2}",
                       "top-down-greedy{min_coverage=20,max_head_refinements=2}",
                       "top-down-beam-search",
                       "top-down-beam-search{beam_width=2,resample_features=true}"],
    "instance_sampling": ["none", "with-replacement", "without-replacement",
                          "stratified-output-wise", "stratified-example-wise"],
    "feature_sampling": ["without-replacement", "none",
                         "without-replacement{sample_size=0.5}"],
    "output_sampling": ["none", "round-robin"],
    "shrinkage": [0.3, 1.0],
    "l1_regularization_weight": [0.0, 0.1],
    "l2_regularization_weight": [0.0, 1.0],
}
ONE_THREAD = {"parallel_rule_refinement": "false", "parallel_statistic_update": "false"}
TWO_THREADS = {"parallel_rule_refinement": "true", "parallel_statistic_update": "true",
               "parallel_prediction": "true"}


def draw_case(seed):
    """(params, X float32 (n, A) or CSR, Y uint8 (n, K), nominal feature indices)."""
    rng = np.random.default_rng(seed)
    params = {key: values[int(rng.integers(len(values)))] for key, values in SPACE.items()}
    params = {key: value for key, value in params.items() if rng.random() < 0.6}
    params["max_rules"] = int(rng.integers(5, 80))
    n, A, K = int(rng.integers(40, 250)), int(rng.integers(2, 10)), int(rng.integers(2, 6))
    X = rng.normal(size=(n, A)).astype(np.float32)
    nominal = []
    for j, kind in enumerate(rng.integers(0, 4, A)):
        if kind == 1:  # counts
            X[:, j] = rng.integers(0, 4, n)
        elif kind == 2:  # mostly zero
            X[:, j] = np.where(rng.random(n) < 0.7, 0, rng.integers(1, 5, n))
        elif kind == 3:
            X[:, j] = rng.integers(0, 3, n)
            nominal.append(j)
    if rng.random() < 0.5:
        X[rng.random((n, A)) < 0.08] = np.nan
    Y = (rng.random((n, K)) < 0.35).astype(np.uint8)
    Y[:, 0] |= (np.nan_to_num(X[:, 0]) > 0.5).astype(np.uint8)
    if params.get("feature_format") == "sparse" and rng.random() < 0.5:
        X = sp.csr_matrix(np.nan_to_num(X))
    return params, X, Y, nominal


def fit(X, Y, nominal, params, batches=True):
    """(estimator, sorted warning messages) of one fit; ``batches=False`` keeps the learner
    off the batched rule loop."""
    learns_rules = CpuBackend.learns_rules
    if not batches:
        CpuBackend.learns_rules = lambda backend, plan: False
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            clf = BoomerClassifier(random_state=5, **params)
            clf.fit(X, Y, nominal_feature_indices=nominal or None)
    finally:
        CpuBackend.learns_rules = learns_rules
    return clf, sorted(str(w.message) for w in caught)


def two_fits(mode, X, Y, nominal, params):
    """The (reference, other) fits of ``mode``."""
    if mode == "batches":
        return (fit(X, Y, nominal, {**ONE_THREAD, **params}, batches=False),
                fit(X, Y, nominal, {**ONE_THREAD, **params}))
    want = fit(X, Y, nominal, {**ONE_THREAD, **params})
    saved = threads.MIN_PARALLEL_WORK, threads.MIN_PARALLEL_FIT
    threads.MIN_PARALLEL_WORK = threads.MIN_PARALLEL_FIT = 0
    try:
        return want, fit(X, Y, nominal, {**params, **TWO_THREADS})
    finally:
        threads.MIN_PARALLEL_WORK, threads.MIN_PARALLEL_FIT = saved


def check(mode, X, Y, nominal, params):
    """'OK', or what differed."""
    (want, want_warned), (got, got_warned) = two_fits(mode, X, Y, nominal, params)
    scores = got.decision_function(X)
    found = {
        "model": str(got.model_) == str(want.model_)
        and np.array_equal(scores, want.decision_function(X)),
        "warnings": got_warned == want_warned,
        "finite": bool(np.isfinite(scores).all()),
        "pickle": np.array_equal(pickle.loads(pickle.dumps(got)).predict(X), got.predict(X)),
    }
    if all(found.values()):
        return "OK"
    return "MISMATCH " + " ".join(name for name, ok in found.items() if not ok)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mode", choices=["batches", "threads"], default="batches")
    p.add_argument("--seed", type=int, default=0, help="the first case's seed")
    p.add_argument("--cases", type=int, default=1_000_000, help="at most this many cases")
    p.add_argument("--minutes", type=float, default=10.0, help="no case starts after this")
    args = p.parse_args(argv)
    end = time.time() + 60 * args.minutes
    failed = 0
    for seed in range(args.seed, args.seed + args.cases):
        if time.time() >= end:
            break
        params, X, Y, nominal = draw_case(seed)
        start = time.time()
        try:
            status = check(args.mode, X, Y, nominal, params)
        except (ValueError, TypeError) as error:  # a configuration the estimator refuses
            status = "REFUSED " + str(error)[:300]
        except Exception as error:  # noqa: BLE001 - every other failure is reported
            status = "ERROR " + "".join(traceback.format_exception_only(type(error),
                                                                        error)).strip()[:300]
        failed += status.startswith(("MISMATCH", "ERROR"))
        print(json.dumps({"seed": seed, "seconds": round(time.time() - start, 1),
                          "status": status, "params": params, "shape": list(X.shape)}),
              flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
