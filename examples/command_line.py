"""The command line: ``gpurules evaluate`` (5-fold cross-validation), then a plot of its
``metrics.csv`` with ``gpurules.plot.plot_quality``.

The same commands work in a shell (``gpurules ...`` or ``python -m gpurules ...``); here
they run through ``subprocess`` on the emotions data shipped in the package.
"""
import os
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import gpurules.datasets  # noqa: E402
from gpurules.plot import plot_quality  # noqa: E402

MAX_RULES = int(os.environ.get("GPURULES_EXAMPLE_MAX_RULES", 100))
data = Path(gpurules.datasets.__file__).parent / "data" / "emotions-train.arff"
out = Path("emotions-cv")
subprocess.run([sys.executable, "-m", "gpurules", "evaluate", "--data", str(data),
                "--folds", "3", "--seed", "1", "--param", f"max_rules={MAX_RULES}",
                "--output", str(out)], check=True)
print(sorted(p.name for p in out.iterdir()))

ax = plot_quality(out / "metrics.csv", "hamming_loss", by="fold", group=None)
ax.figure.savefig(out / "hamming_by_fold.png", bbox_inches="tight")
print("wrote", out / "hamming_by_fold.png")
