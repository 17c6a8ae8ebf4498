"""scikit-learn estimators: validation, parameters, fit/predict."""
