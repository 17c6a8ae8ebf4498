"""Input validation shared by the estimators: X, Y, sample weights, feature indices.

Every problem is reported as a ``ValueError``/``TypeError`` naming what is wrong, before
any compiled code runs.
"""

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array
from sklearn.utils.multiclass import type_of_target


def _is_dataframe(X):
    return hasattr(X, "dtypes") and hasattr(X, "columns") and hasattr(X, "iloc")


def _dataframe_to_array(X):
    """Categorical columns become integer codes (NaN for missing).

    Returns (X, nominal column indices, names, {column: category strings})."""
    cols, nominal, values = [], [], {}
    for j, name in enumerate(X.columns):
        col = X[name]
        if str(col.dtype) == "category":
            codes = col.cat.codes.to_numpy().astype(np.float32)
            codes[codes < 0] = np.nan
            cols.append(codes)
            nominal.append(j)
            values[j] = [str(c) for c in col.cat.categories]
        else:
            try:
                cols.append(col.to_numpy(dtype=np.float32, na_value=np.nan))
            except (TypeError, ValueError):
                raise ValueError(f"column {name!r} of X is neither numeric nor categorical "
                                 f"(dtype {col.dtype}); convert it, e.g. with "
                                 f"astype('category')") from None
    X_arr = np.column_stack(cols) if cols else np.zeros((len(X), 0), np.float32)
    return X_arr, nominal, [str(c) for c in X.columns], values


def check_features(X, num_features=None, estimator_name="the model", keep_sparse=False):
    """Validate a feature matrix (scikit-learn's ``check_array`` does the conversion).

    Returns:
        (X float32 C-contiguous ndarray (n, A) with NaN = missing — or a float32 CSC
         matrix if ``keep_sparse`` and X is sparse —
         nominal column indices from pandas categoricals, feature names or None,
         {column: category strings} of those categoricals).
    """
    nominal, names, values = [], None, {}
    if _is_dataframe(X):
        X, nominal, names, values = _dataframe_to_array(X)
    X = check_array(X, accept_sparse=("csr", "csc", "coo"), dtype=(np.float32, np.float64),
                    ensure_all_finite="allow-nan", ensure_min_samples=1, ensure_min_features=1,
                    input_name="X")
    if sp.issparse(X):
        if keep_sparse:
            return sp.csc_matrix(X, dtype=np.float32), nominal, names, values
        X = X.toarray()
    if num_features is not None and X.shape[1] != num_features:
        raise ValueError(f"X has {X.shape[1]} features, but {estimator_name} is expecting "
                         f"{num_features} features as input")
    return np.ascontiguousarray(X, dtype=np.float32), nominal, names, values


def check_labels(Y, n_examples):
    """Validate labels. Returns (Y uint8 (n, K), classes or None, 1-D?).

    A 1-D ``y`` is one binary label: its (at most two) classes are encoded 0/1 and kept
    in ``classes`` to decode predictions. A 2-D ``Y`` (dense or sparse) must hold 0/1.
    """
    if Y is None:
        raise ValueError("this estimator requires y to be passed, but the target y is None")
    if sp.issparse(Y):
        Y = Y.toarray()
    Y = np.asarray(Y)
    if Y.ndim == 2 and Y.shape[1] == 0:
        raise ValueError(f"Y has 0 labels (shape {Y.shape})")
    if Y.ndim not in (1, 2):
        raise ValueError(f"Y must be 1- or 2-dimensional, got shape {Y.shape}")
    if Y.shape[0] != n_examples:
        raise ValueError(f"X and Y have different numbers of examples: {n_examples} and "
                         f"{Y.shape[0]}")
    if Y.dtype.kind in "fc":
        if np.isnan(Y).any():
            raise ValueError("Y contains NaN; labels must be 0 or 1")
        if np.isinf(Y).any():
            raise ValueError("Y contains infinity; labels must be 0 or 1")
    if Y.ndim == 1:
        kind = type_of_target(Y, input_name="y")
        if kind not in ("binary", "multiclass"):
            raise ValueError(f"Unknown label type: {kind}; a 1-D y must hold at most two "
                             f"classes")
        classes, codes = np.unique(Y, return_inverse=True)
        if len(classes) > 2:
            raise ValueError(f"Only binary classification is supported for a 1-D y, but it "
                             f"has {len(classes)} classes {classes[:5].tolist()}; use a 2-D "
                             f"0/1 label matrix for multi-label data")
        if len(classes) == 1 and classes[0] in (0, 1) and Y.dtype.kind in "biuf":
            classes = np.array([0, 1], dtype=Y.dtype)
            codes = (Y == 1).astype(np.uint8)
        return codes.astype(np.uint8).reshape(-1, 1), classes, True
    if Y.dtype.kind not in "biuf":
        raise ValueError(f"Y must be numeric 0/1, got dtype {Y.dtype}")
    bad = (Y != 0) & (Y != 1)
    if bad.any():
        i, k = np.argwhere(bad)[0]
        raise ValueError(f"Y must be binary (0/1); found {Y[i, k]!r} at example {i}, label {k}")
    return np.ascontiguousarray(Y, dtype=np.uint8), None, False


def check_sample_weight(sample_weight, n_examples):
    """float64 (n,) non-negative finite weights, not all zero (ones if None)."""
    if sample_weight is None:
        return np.ones(n_examples, dtype=np.float64)
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (n_examples,):
        raise ValueError(f"sample_weight must have shape ({n_examples},), got {w.shape}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("sample_weight must be finite and non-negative")
    if not (w > 0).any():
        raise ValueError("sample_weight is zero for every example")
    return w


def check_feature_indices(indices, num_features, param):
    """Sorted unique int list of column indices in [0, num_features)."""
    if indices is None:
        return []
    if isinstance(indices, numbers.Integral):
        indices = [indices]
    out = []
    for i in np.asarray(list(indices)).ravel().tolist():
        if isinstance(i, bool) or not float(i).is_integer():
            raise TypeError(f"{param} must contain column indices (ints), got {i!r}")
        i = int(i)
        if not 0 <= i < num_features:
            raise ValueError(f"{param} contains {i}, but X has {num_features} features "
                             f"(valid: 0..{num_features - 1})")
        out.append(i)
    return sorted(set(out))
