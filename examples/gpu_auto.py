"""The device: ``device="auto"`` uses a usable CUDA GPU, else the CPU.

"Usable" is decided once per process by a smoke test (CuPy, the device, compute
capability >= 7.5, ``numba.cuda``, a tiny kernel, the compile of the CUDA C kernels); when
it fails, ``auto`` falls back to the CPU and says why in one INFO log line, while
``device="cuda"`` raises a ``RuntimeError`` naming the failed part. GPU support is the
``cuda`` extra (``pip install 'gpurules[cuda]'``). Both devices learn the same rules (the
statistics are fixed-point integers, so the sums agree bit for bit).
"""
import logging
import os

from gpurules import BoomerClassifier
from gpurules.datasets import load_example

MAX_RULES = int(os.environ.get("GPURULES_EXAMPLE_MAX_RULES", 100))
logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")  # shows the fallback

train = load_example("emotions", "train")
clf = BoomerClassifier(device="auto", feature_binning="equal-width", max_rules=MAX_RULES,
                       random_state=1).fit(train.X, train.Y)
print("fitted on", clf.device_)                      # "cuda:0" or "cpu"

try:
    BoomerClassifier(device="cuda", max_rules=2).fit(train.X, train.Y)
    print("device='cuda' works here")
except RuntimeError as error:                        # no usable GPU: the reason
    print("device='cuda' refused:", error)
