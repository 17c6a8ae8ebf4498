"""scikit-learn estimators: validation, parameters, fit/predict."""

from gpurules.estimators.boomer import BoomerClassifier
from gpurules.estimators.boomer_regressor import BoomerRegressor

__all__ = ["BoomerClassifier", "BoomerRegressor"]
