"""Input validation shared by the estimators: X, Y, sample weights, feature indices.

Every problem is reported as a ``ValueError``/``TypeError`` naming what is wrong, before
any compiled code runs.
"""

import numbers

import numpy as np
import scipy.sparse as sp


def _is_dataframe(X):
    return hasattr(X, "dtypes") and hasattr(X, "columns") and hasattr(X, "iloc")


def _dataframe_to_array(X):
    """Categorical columns become integer codes (NaN for missing). Returns (X, nominal, names)."""
    cols, nominal = [], []
    for j, name in enumerate(X.columns):
        col = X[name]
        if str(col.dtype) == "category":
            codes = col.cat.codes.to_numpy().astype(np.float32)
            codes[codes < 0] = np.nan
            cols.append(codes)
            nominal.append(j)
        else:
            try:
                cols.append(col.to_numpy(dtype=np.float32, na_value=np.nan))
            except (TypeError, ValueError):
                raise ValueError(f"column {name!r} of X is neither numeric nor categorical "
                                 f"(dtype {col.dtype}); convert it, e.g. with "
                                 f"astype('category')") from None
    X_arr = np.column_stack(cols) if cols else np.zeros((len(X), 0), np.float32)
    return X_arr, nominal, [str(c) for c in X.columns]


def check_features(X, num_features=None, what="X"):
    """Validate a feature matrix.

    Returns:
        (X float32 C-contiguous ndarray (n, A) with NaN = missing,
         nominal column indices from pandas categoricals, feature names or None).
    """
    nominal, names = [], None
    if _is_dataframe(X):
        X, nominal, names = _dataframe_to_array(X)
    elif sp.issparse(X):
        X = X.toarray()
    try:
        X = np.asarray(X)
        if X.dtype.kind in "OUS":
            X = X.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be numeric; could not convert it to floats") from None
    if X.dtype.kind == "c":
        raise ValueError(f"{what} must be real-valued, got complex values")
    if X.ndim != 2:
        raise ValueError(f"{what} must be 2-dimensional (n_examples, n_features), got shape "
                         f"{X.shape}; reshape a single feature with X.reshape(-1, 1)")
    if X.shape[0] == 0:
        raise ValueError(f"{what} is empty: 0 examples (shape {X.shape}); at least 1 is needed")
    if X.shape[1] == 0:
        raise ValueError(f"{what} has 0 features (shape {X.shape}); at least 1 is needed")
    if num_features is not None and X.shape[1] != num_features:
        raise ValueError(f"{what} has {X.shape[1]} features, but the model was fitted with "
                         f"{num_features}")
    X = np.ascontiguousarray(X, dtype=np.float32)
    if np.isinf(X).any():
        raise ValueError(f"{what} contains infinity; use finite values (NaN marks a missing "
                         f"value)")
    return X, nominal, names


def check_labels(Y, n_examples):
    """Validate labels. Returns (Y uint8 (n, K), classes or None, 1-D?).

    A 1-D ``y`` is one binary label: its (at most two) classes are encoded 0/1 and kept
    in ``classes`` to decode predictions. A 2-D ``Y`` (dense or sparse) must hold 0/1.
    """
    if Y is None:
        raise ValueError("Y is required: labels of shape (n_examples, n_labels) or (n_examples,)")
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
        classes, codes = np.unique(Y, return_inverse=True)
        if len(classes) > 2:
            raise ValueError(f"a 1-D y is one binary label, but it has {len(classes)} classes "
                             f"{classes[:5].tolist()}...; use a 2-D 0/1 label matrix for "
                             f"multi-label data")
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
