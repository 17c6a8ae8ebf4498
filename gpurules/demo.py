"""``python -m gpurules.demo``: BOOMER on the bundled emotions data with device='auto'.

Prints the device used, fit time, the test metrics and the first rules.
"""

import logging
import time

import numpy as np

from gpurules import BoomerClassifier
from gpurules.datasets import load_example


def main():
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    train, test = load_example("emotions", "train"), load_example("emotions", "test")
    clf = BoomerClassifier(device="auto", random_state=1)
    start = time.perf_counter()
    clf.fit(train.X, train.Y, nominal_feature_indices=train.nominal_features)
    seconds = time.perf_counter() - start
    clf.model_.feature_names = train.feature_names  # for readable rules
    clf.model_.label_names = train.label_names
    pred = clf.predict(test.X)
    Y = test.Y
    tp = (pred & Y).sum(1)
    denom = pred.sum(1) + Y.sum(1)
    f1 = np.where(denom == 0, 1.0, 2 * tp / np.maximum(denom, 1))
    print(f"emotions: {train.X.shape[0]} training / {test.X.shape[0]} test examples, "
          f"{train.X.shape[1]} features, {Y.shape[1]} labels")
    print(f"device: {clf.device_}; fit: {seconds:.2f} s (includes Numba compilation on the "
          f"first run); rules: {len(clf.model_)} (with the default rule)")
    print(f"Hamming loss {(pred != Y).mean():.4f}   subset 0/1 loss "
          f"{(pred != Y).any(1).mean():.4f}   example-wise F1 {f1.mean():.4f}")
    print("\nFirst rules:")
    print("\n".join(str(clf.model_).splitlines()[:6]))


if __name__ == "__main__":
    main()
