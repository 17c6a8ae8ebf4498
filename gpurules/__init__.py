"""gpurules: multi-label rule learners (and BOOMER for multi-output regression) with CUDA and
CPU (Numba) backends.

Importing this package never initialises CUDA. ``load_model`` / ``load_estimator`` read the
JSON model files that ``model.save`` / ``estimator.save`` write (``docs/model-format.md``).
"""

from gpurules.estimators.boomer import BoomerClassifier
from gpurules.estimators.boomer_regressor import BoomerRegressor
from gpurules.estimators.persistence import load_estimator
from gpurules.estimators.seco import SeCoClassifier
from gpurules.estimators.turs import TursClassifier
from gpurules.model_io import load_model
from gpurules.version import __version__

__all__ = ["BoomerClassifier", "BoomerRegressor", "SeCoClassifier", "TursClassifier",
           "load_estimator", "load_model", "__version__"]
