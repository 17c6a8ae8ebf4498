"""Compare gpurules' BoomerRegressor (CPU backend) with mlrl-boomer's BoomerRegressor in the
same run.

Data sets (scikit-learn, offline): ``make_regression(n_samples=2000, n_features=20,
n_targets=3, noise=10, random_state=0)``, ``load_linnerud`` (3 targets) and
``load_diabetes`` (1 target), each split by ``train_test_split(test_size=0.25,
random_state=0)``. Both learners get the same data (float32 X, float64 y), the same
constructor parameters (defaults plus ``--param key=value``, ``random_state=1``) and one
thread (``parallel_rule_refinement`` / ``parallel_statistic_update`` /
``parallel_prediction`` = "false"); gpurules runs with ``device="cpu"``.

Reported per data set: the test mean squared error of both (scikit-learn's
``mean_squared_error``, averaged over the targets) and their ratio, the number of rules
(including the default rule), and the median fit time over ``--repeats`` as process CPU
time (``time.process_time``; the box may be shared) and wall time. gpurules is warmed up
by one fit first (Numba compilation is not timed; ``benchmarks/cold_start.py`` measures it).
"max abs pred diff" is the largest difference between the two models' test predictions: 0 up
to float32 rounding where the two learners built the same model.

``--train-copies 2`` gives both learners every training example twice (a diagnostic):
mlrl-boomer's exact search never evaluates the split that isolates a single example
holding a feature's smallest value (user guide, "Differences from mlrl-boomer"); with every
value held by two examples at least, that split is never the one to isolate, so where the
two models then agree, that difference was the one between them.

    OMP_WAIT_POLICY=passive /work/bench312/bin/python benchmarks/compare_regression.py
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

HEADERS = ["data set", "n_train", "features", "targets", "MSE mlrl", "MSE ours",
           "MSE ours/mlrl", "rules mlrl/ours", "fit CPU s mlrl", "fit CPU s ours",
           "CPU ours/mlrl", "fit wall s mlrl/ours", "max abs pred diff"]
SINGLE_THREAD = {"parallel_rule_refinement": "false", "parallel_statistic_update": "false",
                 "parallel_prediction": "false"}


def datasets():
    """name -> (X_train, X_test, y_train, y_test); X float32, y float64."""
    from sklearn.datasets import load_diabetes, load_linnerud, make_regression
    from sklearn.model_selection import train_test_split

    data = {"make_regression(2000, 20, 3 targets)": make_regression(
        n_samples=2000, n_features=20, n_targets=3, noise=10, random_state=0),
        "linnerud": load_linnerud(return_X_y=True),
        "diabetes": load_diabetes(return_X_y=True)}
    out = {}
    for name, (X, y) in data.items():
        X_train, X_test, y_train, y_test = train_test_split(
            np.asarray(X, np.float32), np.asarray(y, np.float64), test_size=0.25,
            random_state=0)
        out[name] = X_train, X_test, y_train, y_test
    return out


def make(learner, params):
    if learner == "mlrl":
        from mlrl.boosting.learners import BoomerRegressor

        return BoomerRegressor(**params)
    from gpurules import BoomerRegressor

    return BoomerRegressor(device="cpu", **params)


def num_rules(learner, est):
    return C.count_mlrl_rules(est.model_) if learner == "mlrl" else len(est.model_)


def with_copies(split, copies):
    """``split`` with every training example ``copies`` times (the test set unchanged)."""
    X_train, X_test, y_train, y_test = split
    return (np.concatenate([X_train] * copies), X_test, np.concatenate([y_train] * copies),
            y_test)


def measure(learner, params, split, repeats):
    """(test MSE, rules, median CPU s, median wall s, test predictions float64) of
    ``repeats`` fits."""
    from sklearn.metrics import mean_squared_error

    X_train, X_test, y_train, y_test = split
    if learner == "ours":
        make(learner, params).fit(X_train, y_train)  # warm-up: Numba compilation
    cpu, wall = [], []
    for _ in range(repeats):
        est = make(learner, params)
        c0, w0 = time.process_time(), time.perf_counter()
        est.fit(X_train, y_train)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    predicted = np.asarray(est.predict(X_test), np.float64).reshape(y_test.shape)
    mse = mean_squared_error(y_test, predicted)
    return mse, num_rules(learner, est), C.median(cpu), C.median(wall), predicted


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--param", action="append", help="key=value for both learners")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--train-copies", type=int, default=1,
                        help="every training example this many times (module docstring)")
    parser.add_argument("--output", help="also write the report to this file")
    args = parser.parse_args(argv)
    if args.train_copies < 1:
        parser.error(f"--train-copies must be at least 1, got {args.train_copies}")
    params = {"random_state": 1, **SINGLE_THREAD, **C.parse_params(args.param)}
    rows = []
    for name, split in datasets().items():
        split = with_copies(split, args.train_copies)
        C.log(f"{name}: mlrl-boomer")
        mlrl = measure("mlrl", params, split, args.repeats)
        C.log(f"{name}: gpurules")
        ours = measure("ours", params, split, args.repeats)
        X_train, y_train = split[0], split[2]
        rows.append([name, X_train.shape[0], X_train.shape[1],
                     1 if y_train.ndim == 1 else y_train.shape[1],
                     f"{mlrl[0]:.2f}", f"{ours[0]:.2f}", C.fmt_ratio(ours[0], mlrl[0]),
                     f"{mlrl[1]}/{ours[1]}", C.fmt_seconds(mlrl[2]), C.fmt_seconds(ours[2]),
                     C.fmt_ratio(ours[2], mlrl[2]),
                     f"{C.fmt_seconds(mlrl[3])}/{C.fmt_seconds(ours[3])}",
                     f"{np.abs(mlrl[4] - ours[4]).max():.2g}"])
    copies = "" if args.train_copies == 1 else \
        f"; every training example {args.train_copies} times"
    lines = [f"Parameters (both): {C.format_params(params)}; median of {args.repeats} "
             f"fit(s){copies}.", "", C.markdown_table(HEADERS, rows), "",
             *C.machine_lines([("mlrl-boomer", "mlrl")])]
    report = "\n".join(lines)
    print(report)
    if args.output:
        Path(args.output).write_text(report + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
