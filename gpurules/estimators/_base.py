"""The input contract the three estimators share: feature names and counts checked as
scikit-learn does, categorical columns mapped by value, seeds, empty predictions.

``fit`` calls :meth:`RuleEstimatorMixin._fit_features` once; every prediction method
calls :meth:`RuleEstimatorMixin._predict_features`.
"""

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from gpurules.estimators.validation import check_features, is_dataframe


def multi_label_classes(num_labels, label_dtype):
    """``classes_`` of a model fitted on a 2-D label matrix: one ``[0, 1]`` array per
    label (of the labels' dtype when numeric, else uint8), as scikit-learn's multi-output
    classifiers expose them (its scorers read it)."""
    dtype = label_dtype if label_dtype.kind in "biuf" else np.uint8
    return [np.array([0, 1], dtype=dtype) for _ in range(num_labels)]


class RuleEstimatorMixin:
    """Shared input handling. Sets ``n_features_in_``, ``feature_names_in_`` (a DataFrame
    whose column names are all strings) and ``feature_categories_`` at fit."""

    def _fit_features(self, X, keep_sparse=False):
        """Validate X at fit and record its columns. Returns a ``FeatureInput``."""
        info = check_features(X, keep_sparse=keep_sparse)
        validate_data(self, X if is_dataframe(X) else info.X, reset=True,
                      skip_check_array=True)
        self.feature_categories_ = info.categories
        return info

    def _predict_features(self, X):
        """Validate X for prediction: the fitted names (a DataFrame's columns must match
        them, as in scikit-learn) and number of features; categorical columns encoded with
        the fit's categories. Returns float32 (n, A); n may be 0."""
        check_is_fitted(self, "model_")
        if is_dataframe(X):
            validate_data(self, X, reset=False, skip_check_array=True)
        X_arr = check_features(X, self.n_features_in_, type(self).__name__,
                               categories=self.feature_categories_, min_samples=0).X
        if not is_dataframe(X):  # warns if fitted with names, as scikit-learn does
            validate_data(self, X_arr, reset=False, skip_check_array=True)
        return X_arr
