"""``python -m gpurules.demo``: BOOMER on the bundled emotions data with device='auto'.

Prints the device used, the Numba compile time (first run only) apart from the fit time,
the test metrics, the first rules and where to go next.
"""

import logging
import time

import numpy as np

from gpurules import BoomerClassifier
from gpurules.compile_log import CompileLog
from gpurules.datasets import load_example


def main():
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    train, test = load_example("emotions", "train"), load_example("emotions", "test")
    clf = BoomerClassifier(device="auto", random_state=1)
    start = time.perf_counter()
    with CompileLog("demo") as compiled:
        clf.fit(train.X, train.Y, nominal_feature_indices=train.nominal_features,
                feature_names=train.feature_names, label_names=train.label_names,
                nominal_values=train.nominal_values)  # for readable rules
    seconds = time.perf_counter() - start
    pred = clf.predict(test.X)
    Y = test.Y
    tp = (pred & Y).sum(1)
    denom = pred.sum(1) + Y.sum(1)
    f1 = np.where(denom == 0, 1.0, 2 * tp / np.maximum(denom, 1))
    print(f"emotions: {train.X.shape[0]} training / {test.X.shape[0]} test examples, "
          f"{train.X.shape[1]} features, {Y.shape[1]} labels")
    print(f"device: {clf.device_}; rules: {len(clf.model_)} (with the default rule)")
    print(_timing(seconds, compiled))
    print(f"Hamming loss {(pred != Y).mean():.4f}   subset 0/1 loss "
          f"{(pred != Y).any(1).mean():.4f}   example-wise F1 {f1.mean():.4f}")
    print(MLRL_BOOMER)
    print("\nFirst rules:")
    print("\n".join(str(clf.model_).splitlines()[:6]))
    print(NEXT)


# benchmarks/compare_boomer.py, docs/benchmarks.md ("Warm speed against mlrl-boomer at the
# end of session 10"): the same split, mlrl-boomer's defaults (1,000 rules, seed 1)
MLRL_BOOMER = ("mlrl-boomer 0.15.6, same split and defaults (docs/benchmarks.md): Hamming "
               "loss 0.2005   subset 0/1 loss 0.7228;\n  its fit 0.84 s on one thread of a "
               "2-core Xeon, gpurules' warm fit 0.49 s there")

NEXT = """
Next: README.md (install, the three estimators), docs/user-guide.md (parameters, devices,
threads, the compile cache), benchmarks/ (comparisons with mlrl-boomer, mlrl-seco, TURS;
benchmarks/cold_start.py for the first-run cost)."""


def _timing(seconds, compiled):
    """The fit time, with the compile time apart when kernels were compiled."""
    if not compiled.compiles:
        return f"fit: {seconds:.2f} s (kernels loaded from the cache)"
    return (f"fit: {seconds - compiled.seconds:.2f} s + {compiled.seconds:.2f} s compiling the "
            f"kernels (first run only; cached for the next runs)")


if __name__ == "__main__":
    main()
