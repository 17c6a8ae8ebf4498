"""Process CPU time of warm gpurules fits per feature representation, interleaved.

On a machine shared with other jobs, wall time swings by 2x; the CPU time of a
single-threaded fit moves much less. This script alternates the representations
(``sparse, dense, sparse, dense, ...``) so that both see the same load, and prints the
median CPU time of the warm fits of each and their ratio.

    python benchmarks/cpu_time_by_format.py --datasets medical,enron --rounds 2
"""

import argparse
import statistics
import time

import _common as C

C.use_repo_checkout()
from gpurules import BoomerClassifier  # noqa: E402


def cpu_times(X, Y, nominal, fmt, repeats, **params):
    """CPU seconds of ``repeats`` warm single-threaded fits (after one warm-up fit) with
    ``nominal`` (list of column indices) as the nominal features."""
    clf = BoomerClassifier(random_state=1, feature_format=fmt, parallel_rule_refinement="false",
                           parallel_statistic_update="false", parallel_prediction="false",
                           **params)
    clf.fit(X, Y, nominal_feature_indices=nominal)
    out = []
    for _ in range(repeats):
        start = time.process_time()
        clf.fit(X, Y, nominal_feature_indices=nominal)
        out.append(time.process_time() - start)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=C.DEFAULT_DATA_DIR)
    parser.add_argument("--datasets", default="medical,enron,bibtex")
    parser.add_argument("--formats", default="sparse,dense")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    formats = args.formats.split(",")
    print("| dataset | " + " | ".join(f"{f} CPU s" for f in formats) + " | ratio |")
    print("|---|" + "---:|" * (len(formats) + 1))
    for name in args.datasets.split(","):
        split = C.load_split(args.data_dir, name, dense=False)
        times = {f: [] for f in formats}
        for _ in range(args.rounds):
            for f in formats:
                times[f] += cpu_times(split.X_train, split.Y_train, split.nominal_features, f,
                                      args.repeats)
        med = [statistics.median(times[f]) for f in formats]
        print(f"| {name} | " + " | ".join(f"{m:.3f}" for m in med)
              + f" | {med[-1] / med[0]:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
