"""Model text of a fixed set of fits, for checking that a refactor changes no model.

Fits BOOMER (several configurations), SeCo and the BOOMER regressor with 100 rules each on
the bundled emotions data (the regressor on ``make_regression(300, 10, n_targets=2)``) and
writes ``str(model_)`` of each to ``OUT/<name>.txt``; diff two such folders (``diff -r``).
With ``--time``, prints the median process time of 5 warm fits of BOOMER's and SeCo's
defaults (one thread) instead.

    PYTHONPATH=. python benchmarks/model_snapshot.py OUT
    PYTHONPATH=. python benchmarks/model_snapshot.py --time

(``PYTHONPATH`` picks the checkout whose ``gpurules`` is measured; the script prints it.)
"""

import argparse
import pathlib
import statistics
import time

from sklearn.datasets import make_regression

import gpurules
from gpurules import BoomerClassifier, SeCoClassifier
from gpurules.datasets import load_example
from gpurules.estimators.boomer_regressor import BoomerRegressor

SERIAL = dict(parallel_rule_refinement="false", parallel_statistic_update="false",
              parallel_prediction="false")
BOOMER = {
    "boomer-default": {},
    "boomer-single": dict(head_type="single"),
    "boomer-nd-complete": dict(loss="logistic-non-decomposable", head_type="complete"),
    "boomer-nd-single": dict(loss="logistic-non-decomposable", head_type="single"),
    "boomer-partial-fixed": dict(head_type="partial-fixed"),
    "boomer-partial-dynamic": dict(head_type="partial-dynamic"),
    "boomer-equal-width": dict(feature_binning="equal-width"),
    "boomer-irep": dict(rule_pruning="irep", instance_sampling="with-replacement"),
    "boomer-post-optimization": dict(post_optimization="sequential"),
    "boomer-post-optimization-subset": dict(
        post_optimization="sequential{resample_features=false,refine_heads=true}"),
    "boomer-max-head-refinements": dict(head_type="single",
                                        rule_induction="top-down-greedy{max_head_refinements=2}"),
    "boomer-max-conditions": dict(rule_induction="top-down-greedy{max_conditions=3}"),
}
SECO = {
    "seco-default": {},
    "seco-partial": dict(head_type="partial"),
    "seco-no-irep": dict(rule_pruning="none", instance_sampling="none"),
    "seco-equal-width": dict(feature_binning="equal-width"),
    "seco-max-conditions": dict(rule_induction="top-down-greedy{max_conditions=2}",
                                head_type="partial"),
}


def _fits():
    """(name, fitted estimator) of every configuration."""
    ds = load_example("emotions", "train")
    for name, params in BOOMER.items():
        yield name, BoomerClassifier(max_rules=100, device="cpu", **SERIAL, **params).fit(
            ds.X, ds.Y)
    for name, params in SECO.items():
        yield name, SeCoClassifier(max_rules=100, device="cpu", **params).fit(ds.X, ds.Y)
    X, y = make_regression(300, 10, n_targets=2, random_state=0)
    yield "regressor-default", BoomerRegressor(max_rules=100, device="cpu", **SERIAL).fit(X, y)


def _median_time(make, X, Y, repeats=5):
    """Median process time (s) of ``repeats`` warm fits (after one warm-up fit)."""
    make().fit(X, Y)
    times = []
    for _ in range(repeats):
        start = time.process_time()
        make().fit(X, Y)
        times.append(time.process_time() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?")
    parser.add_argument("--time", action="store_true")
    args = parser.parse_args()
    print(f"gpurules from {pathlib.Path(gpurules.__file__).parent}")
    if args.time:
        ds = load_example("emotions", "train")
        boomer = _median_time(lambda: BoomerClassifier(device="cpu", **SERIAL), ds.X, ds.Y)
        seco = _median_time(lambda: SeCoClassifier(device="cpu",
                                                   parallel_rule_refinement="false"),
                            ds.X, ds.Y)
        print(f"boomer default: {boomer:.4f} s   seco default: {seco:.4f} s")
        return
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, est in _fits():
        (out / f"{name}.txt").write_text(str(est.model_) + "\n")
        print(name, len(est.model_))


if __name__ == "__main__":
    main()
