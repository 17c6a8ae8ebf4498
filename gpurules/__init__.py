"""gpurules: multi-label rule learners with CUDA and CPU (Numba) backends.

Importing this package never initialises CUDA.
"""

from gpurules.estimators.boomer import BoomerClassifier
from gpurules.estimators.seco import SeCoClassifier  # noqa: F401 (DESIGN §2)
from gpurules.estimators.turs import TursClassifier  # noqa: F401 (DESIGN §2)

__all__ = ["BoomerClassifier"]
__version__ = "0.1.0"
