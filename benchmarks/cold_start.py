"""The first-run cost: import and first fit in a fresh process, with an empty Numba cache and
then with the cache the first process filled (DESIGN §5, "cold first-fit time").

Per case (estimator, configuration, data set) this script starts:

1. a fresh Python process with ``NUMBA_CACHE_DIR`` an empty temporary directory: the cost
   every new install (or every edit of the package: ``gpurules/jit/cache.py``) pays;
2. a second fresh process with the cache the first one filled: a user's next session;
3. when ``--mlrl-python`` names a Python with ``mlrl-boomer``/``mlrl-seco`` 0.15.6 (and
   gpurules' dependencies, for the data loader), the reference learner's first fit in a
   fresh process of that Python.

Each process reports the wall and CPU time (``time.process_time``: every thread of the
process) of the import and of the first ``fit``; the parent also reads the process's whole
CPU time (user + system, ``resource.getrusage(RUSAGE_CHILDREN)``). On a shared machine the
CPU seconds are the robust figure: wall time grows with the other processes' load.

    .venv/bin/python benchmarks/cold_start.py                 # all cases
    .venv/bin/python benchmarks/cold_start.py --cases boomer-default turs-iris \\
        --mlrl-python /path/to/python3.12
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # as compare_boomer.py: before mlrl

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

C.use_repo_checkout()

CHILD_FLAG = "--_child"  # internal: run one first fit and print JSON

# name -> (estimator, data set, constructor parameters, sparse X)
CASES = {
    "boomer-default": ("boomer", "emotions", {}, False),
    "boomer-sparse": ("boomer", "medical", {"feature_format": "sparse"}, True),
    "boomer-equal-width": ("boomer", "yeast", {"feature_binning": "equal-width"}, False),
    "boomer-nd-complete": ("boomer", "scene", {"loss": "logistic-non-decomposable",
                                               "head_type": "complete"}, False),
    "boomer-partial-dynamic": ("boomer", "emotions", {"head_type": "partial-dynamic"}, False),
    "boomer-nd-single": ("boomer", "emotions", {"loss": "logistic-non-decomposable",
                                                "head_type": "single"}, False),
    "boomer-regressor": ("regressor", "make_regression", {}, False),
    "boomer-beam": ("boomer", "emotions", {"rule_induction": "top-down-beam-search"}, False),
    "boomer-sampled": ("boomer", "emotions", {"instance_sampling": "with-replacement"}, False),
    "seco-default": ("seco", "emotions", {}, False),
    "turs-iris": ("turs", "iris", {}, False),
}
HEADERS = ["case", "data", "import CPU s", "cold fit CPU s", "cold fit wall s",
           "cold process CPU s", "warm fit CPU s", "warm fit wall s", "warm process CPU s",
           "mlrl first fit CPU s", "mlrl first fit wall s"]


# ------------------------------------------------------------------ the child process
def _load(data, sparse):
    """(X, Y, fit kwargs) of a case's training data."""
    if data == "make_regression":  # 2,000 examples, 20 features, 3 targets
        from sklearn.datasets import make_regression

        X, Y = make_regression(2000, 20, n_targets=3, noise=10, random_state=0)
        return X, Y, {}
    if data == "iris":
        from sklearn.datasets import load_iris

        X, y = load_iris(return_X_y=True)
        return X, y, {}
    split = C.load_split(C.DEFAULT_DATA_DIR, data, dense=not sparse)
    kwargs = {"nominal_feature_indices": list(split.nominal_features)} \
        if split.nominal_features else {}
    return split.X_train, split.Y_train, kwargs


def _estimator_class(learner, impl):
    """The estimator class (imported here: the import is timed)."""
    if impl == "mlrl":
        if learner == "boomer":
            from mlrl.boosting import BoomerClassifier
            return BoomerClassifier
        if learner == "regressor":
            from mlrl.boosting.learners import BoomerRegressor
            return BoomerRegressor
        from mlrl.seco import SeCoClassifier
        return SeCoClassifier
    from gpurules import BoomerClassifier, BoomerRegressor, SeCoClassifier, TursClassifier
    return {"boomer": BoomerClassifier, "regressor": BoomerRegressor, "seco": SeCoClassifier,
            "turs": TursClassifier}[learner]


def child(case, impl):
    """Time the import and the first fit of ``case``; print them as JSON."""
    learner, data, params, sparse = CASES[case]
    if impl == "mlrl":  # the loader imports gpurules: outside the timed import
        X, Y, kwargs = _load(data, sparse)
    wall, cpu = time.perf_counter(), time.process_time()
    cls = _estimator_class(learner, impl)
    result = {"import_wall": time.perf_counter() - wall, "import_cpu": time.process_time() - cpu}
    if impl != "mlrl":
        X, Y, kwargs = _load(data, sparse)
    params = dict(params, random_state=1)
    if impl != "mlrl":
        params["device"] = "cpu"
    if learner == "turs":
        params = {"device": "cpu"}
    clf = cls(**params)
    wall, cpu = time.perf_counter(), time.process_time()
    clf.fit(X, Y, **kwargs)
    result.update(fit_wall=time.perf_counter() - wall, fit_cpu=time.process_time() - cpu)
    print(json.dumps(result))


# ------------------------------------------------------------------ the parent
def run_child(python, case, impl, cache_dir):
    """One fresh process; its JSON plus ``process_cpu`` (user + system of the whole
    process)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([python, __file__, CHILD_FLAG, case, impl], env=env,
                          capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        C.log(f"{case} ({impl}) failed:\n{done.stderr[-2000:]}")
        return None
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["process_cpu"] = (after.ru_utime - before.ru_utime) + \
        (after.ru_stime - before.ru_stime)
    return result


def measure(case, mlrl_python):
    """(cold, warm, mlrl) results of one case."""
    with tempfile.TemporaryDirectory(prefix="cold-start-") as cache_dir:
        C.log(f"{case}: cold process (empty Numba cache)")
        cold = run_child(sys.executable, case, "ours", cache_dir)
        C.log(f"{case}: warm process (the cache the first one filled)")
        warm = run_child(sys.executable, case, "ours", cache_dir)
        reference = None
        if mlrl_python and CASES[case][0] in ("boomer", "regressor", "seco"):
            C.log(f"{case}: mlrl first fit ({mlrl_python})")
            reference = run_child(mlrl_python, case, "mlrl", cache_dir)
    return cold, warm, reference


def row(case, cold, warm, reference):
    """The Markdown row of one case."""
    def get(result, key):
        return None if result is None else result[key]

    learner, data, params, _ = CASES[case]
    return [case, data, C.fmt_seconds(get(cold, "import_cpu")),
            C.fmt_seconds(get(cold, "fit_cpu")), C.fmt_seconds(get(cold, "fit_wall")),
            C.fmt_seconds(get(cold, "process_cpu")), C.fmt_seconds(get(warm, "fit_cpu")),
            C.fmt_seconds(get(warm, "fit_wall")), C.fmt_seconds(get(warm, "process_cpu")),
            C.fmt_seconds(get(reference, "fit_cpu")), C.fmt_seconds(get(reference, "fit_wall"))]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    p.add_argument("--mlrl-python", default=None,
                   help="a Python (>= 3.12) with mlrl-boomer/mlrl-seco 0.15.6 installed")
    args = p.parse_args(argv)
    rows = []
    for case in args.cases:
        rows.append(row(case, *measure(case, args.mlrl_python)))
        C.log(" | ".join(rows[-1]))  # each row as it comes: a long run stays useful
    print("\n".join(C.machine_lines()))
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (1 min); "
          f"{time.strftime('%Y-%m-%d %H:%M:%S')}\n")
    print(C.markdown_table(HEADERS, rows))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == CHILD_FLAG:
        child(sys.argv[2], sys.argv[3])
    else:
        main()
