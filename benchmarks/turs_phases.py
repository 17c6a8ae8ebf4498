"""TURS on the CPU: process CPU time per phase of the candidate evaluation.

Fits ``TursClassifier``'s learner (beam width 10, 20 cut points, the authors' literal-count
code: ``compare_turs.py``'s settings) on fold 0's training part of ``compare_turs.py``'s
split (``StratifiedKFold(5, shuffle=True, random_state=2)``) of digits and of the
synthetic set, after one untimed warm-up fit (Numba compilation), and reports per dataset
the median over ``--repeats`` fits of: the histogram build, the running sums, the scoring
(``CpuClassHistograms(timings=...)``: process CPU time around each compiled call), the rest
of the fit (Python: batches, beams, rule sets) and the whole fit, plus the backend calls
(growth steps). One Numba thread unless ``--threads`` says otherwise.

    PYTHONPATH=. .venv/bin/python benchmarks/turs_phases.py --repeats 5
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import _common  # noqa: E402

_common.use_repo_checkout()

import numba  # noqa: E402
import numpy as np  # noqa: E402
from compare_turs import load  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402

from gpurules.backends.cpu.class_histograms import PHASES, CpuClassHistograms  # noqa: E402
from gpurules.learners.turs import TursLearner  # noqa: E402
from gpurules.learners.turs_data import prepare  # noqa: E402


def fit(X, y, timings):
    """One fit with the phases timed into ``timings``; returns its rule count."""
    classes, codes = np.unique(y, return_inverse=True)
    data = prepare(X, codes.astype(np.int32), len(classes), np.zeros(X.shape[1], bool), 20)
    return len(TursLearner(data, CpuClassHistograms(data, timings), beam_width=10).fit().rules)


def measure(X, y, repeats):
    """Median CPU seconds per phase (and the rest) over ``repeats`` timed fits."""
    fit(X[:300], y[:300], {})  # compiles
    rows = []
    for _ in range(repeats):
        timings = {}
        start = time.process_time()
        rules = fit(X, y, timings)
        total = time.process_time() - start
        row = {p: timings.get(p, 0.0) for p in PHASES}
        row["python"] = total - sum(row.values())
        row["total"] = total
        row["calls"] = timings["calls"]
        rows.append(row)
    return {k: _common.median([r[k] for r in rows]) for k in rows[0]}, rules


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=["digits", "synthetic"])
    p.add_argument("--size", type=int, default=5000, help="examples of the synthetic set")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    numba.set_num_threads(args.threads)
    table = []
    for name in args.datasets:
        X, y = load(name, args.size, seed=1)
        train, _ = next(StratifiedKFold(5, shuffle=True, random_state=2).split(X, y))
        X, y = X[train].astype(np.float32), y[train]
        med, rules = measure(X, y, args.repeats)
        label = name if name != "synthetic" else f"synthetic-{args.size}"
        table.append([label, f"{X.shape[0]}x{X.shape[1]}", rules, int(med["calls"])]
                     + [f"{med[k]:.2f}" for k in PHASES + ("python", "total")])
    print("\n".join(_common.machine_lines()))
    print(f"- {args.threads} Numba thread(s), process CPU seconds, median of {args.repeats} "
          "fits after a warm-up fit\n")
    print(_common.markdown_table(
        ["dataset", "n x d", "rules", "backend calls", "histograms", "running sums",
         "scores", "python", "fit"], table))


if __name__ == "__main__":
    main()
