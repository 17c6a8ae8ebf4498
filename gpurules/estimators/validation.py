"""Input validation shared by the estimators: X, Y, sample weights, feature indices.

Every problem is reported as a ``ValueError``/``TypeError`` naming what is wrong, before
any compiled code runs.
"""

import numbers
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array
from sklearn.utils.multiclass import type_of_target


class FeatureInput(NamedTuple):
    """A validated feature matrix and what was learned about its columns.

    X: float32 C-contiguous ndarray (n, A), NaN = missing (or a float32 CSC matrix).
    nominal: column indices that were pandas categoricals.
    names: the column names of a DataFrame (str), else None (for display).
    levels: {column: [str of each category]} of those categoricals (for display).
    categories: {column: object ndarray of the category values}; code c of a column
        stands for ``categories[column][c]``.
    """

    X: object
    nominal: list
    names: list
    levels: dict
    categories: dict


class TargetLayout(NamedTuple):
    """The label matrix as mlrl-boomer's ``auto`` rules see it: ``sparse`` (bool, whether
    it reaches the learner as a sparse matrix, :func:`label_matrix_is_sparse`) and
    ``num_outputs`` (int, its columns)."""

    sparse: bool
    num_outputs: int


def label_matrix_is_sparse(y, output_format):
    """Whether mlrl-boomer 0.15.6 hands the labels ``y`` (as passed to ``fit``) to its
    learner as a sparse (CSR) matrix: never a dense ``y``; a SciPy sparse one with
    ``output_format`` ``'sparse'``, or with ``'auto'`` (None) where CSR takes less memory
    than a dense uint8 matrix (4 bytes per stored entry and per row against one per
    element; its ``SparsePolicy.should_enforce_sparse``). Which it is decides
    ``statistic_format='auto'`` (``predictors.resolve_statistics_format``); our labels
    are dense either way."""
    if not sp.issparse(y) or len(y.shape) != 2:
        return False
    policy = (output_format or "auto").split("{")[0]
    if policy != "auto":
        return policy == "sparse"
    n, k = y.shape
    return 4 * (int(y.nnz) + n) < n * k


def is_dataframe(X):
    """Whether X looks like a pandas DataFrame."""
    return hasattr(X, "dtypes") and hasattr(X, "columns") and hasattr(X, "iloc")


def _codes_by_value(column, categories):
    """float32 (n,) codes of a pandas Series by the values of ``categories`` (object
    ndarray): NaN where missing, ``len(categories)`` for a value not among them (a code no
    learned condition tests equal to)."""
    import pandas as pd

    codes = pd.Index(categories).get_indexer(column).astype(np.float32)
    missing = column.isna().to_numpy()
    codes[(codes < 0) & ~missing] = len(categories)
    codes[missing] = np.nan
    return codes


def _dataframe_to_array(X, categories=None):
    """Columns of a DataFrame as float32 (see :class:`FeatureInput`).

    At fit (``categories`` None) a categorical column becomes its integer codes and its
    categories are recorded; at predict the columns that were categorical at fit are
    encoded by value with the fit's categories, whatever the new frame's categories or
    dtype are, so a frame with fewer levels or another order predicts the same."""
    cols, nominal, levels, found = [], [], {}, {}
    for j, name in enumerate(X.columns):
        col = X.iloc[:, j]
        categorical = str(col.dtype) == "category"
        if categories is not None and j in categories:
            cols.append(_codes_by_value(col, categories[j]))
            nominal.append(j)
            continue
        if categorical and categories is not None:
            raise ValueError(f"column {name!r} of X is categorical, but it was not at fit; "
                             f"pass the columns as they were at fit")
        if categorical:
            found[j] = col.cat.categories.to_numpy(dtype=object)
            cols.append(_codes_by_value(col, found[j]))
            nominal.append(j)
            levels[j] = [str(c) for c in found[j]]
            continue
        try:
            cols.append(col.to_numpy(dtype=np.float32, na_value=np.nan))
        except (TypeError, ValueError):
            raise ValueError(f"column {name!r} of X is neither numeric nor categorical "
                             f"(dtype {col.dtype}); convert it, e.g. with "
                             f"astype('category')") from None
    X_arr = np.column_stack(cols) if cols else np.zeros((len(X), 0), np.float32)
    return FeatureInput(X_arr, nominal, [str(c) for c in X.columns], levels, found)


def _check_float32_range(X):
    """ValueError if a finite value of X (ndarray or sparse) lies beyond float32's range."""
    data = X.data if sp.issparse(X) else X
    if data.dtype == np.float32:
        return
    big = np.abs(data) > np.finfo(np.float32).max
    if big.any():
        where = np.argwhere(big)[0]
        raise ValueError(f"X contains {float(data[tuple(where)])!r}, beyond the float32 range "
                         f"(|x| <= {np.finfo(np.float32).max:.4g}) in which features are "
                         f"stored; rescale the feature")


def compiled_layout(a, dtype):
    """``a`` as a writable C-contiguous ndarray of ``dtype``: copied only where it is not one
    already (e.g. a read-only memory map). The compiled kernels are specialised on whether
    an array is read-only, so a read-only input would compile every kernel it reaches a
    second time (seconds on a first fit or predict)."""
    return np.require(a, dtype, ("C_CONTIGUOUS", "WRITEABLE"))


def check_features(X, num_features=None, estimator_name="the model", keep_sparse=False,
                   categories=None, min_samples=1):
    """Validate a feature matrix (scikit-learn's ``check_array`` does the conversion).

    Args:
        categories: at predict, the fitted ``FeatureInput.categories`` (DataFrame columns
            that were categorical at fit are encoded by value); None at fit.
        min_samples: the fewest rows accepted (0 at predict).

    Returns:
        :class:`FeatureInput`; ``X`` float32 C-contiguous (n, A) with NaN = missing, or a
        float32 CSC matrix if ``keep_sparse`` and X is sparse.
    """
    info = FeatureInput(X, [], None, {}, {})
    if is_dataframe(X):
        info = _dataframe_to_array(X, categories)
    X = check_array(info.X, accept_sparse=("csr", "csc", "coo"),
                    dtype=(np.float32, np.float64), ensure_all_finite="allow-nan",
                    ensure_min_samples=min_samples, ensure_min_features=1, input_name="X")
    _check_float32_range(X)
    if num_features is not None and X.shape[1] != num_features:
        raise ValueError(f"X has {X.shape[1]} features, but {estimator_name} is expecting "
                         f"{num_features} features as input")
    if sp.issparse(X) and keep_sparse:
        return info._replace(X=sp.csc_matrix(X, dtype=np.float32))
    if sp.issparse(X):
        X = X.toarray()
    return info._replace(X=compiled_layout(X, np.float32))


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
    return compiled_layout(Y, np.uint8), None, False


def check_targets(y, n_examples):
    """Validate the real-valued targets of a regressor. Returns (Y float64 C-contiguous
    (n, K), 1-D?): a 1-D ``y`` is one target (K = 1).

    Raises ``ValueError`` for a missing ``y``, a shape that does not match X, no targets,
    NaN or infinity, and ``TypeError`` for a non-numeric ``y`` (e.g. strings: a classifier's
    labels), naming what is wrong."""
    if y is None:
        raise ValueError("this estimator requires y to be passed, but the target y is None")
    if sp.issparse(y):
        y = y.toarray()
    y = np.asarray(y)
    if y.dtype.kind == "O":  # e.g. numbers in an object column: as numbers if they are
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError):
            pass
    if y.dtype.kind not in "biuf":
        raise TypeError(f"y must hold numeric (real-valued) regression targets, got dtype "
                        f"{y.dtype}; class labels are for BoomerClassifier")
    if y.ndim not in (1, 2):
        raise ValueError(f"y must be 1- or 2-dimensional, got shape {y.shape}")
    if y.ndim == 2 and y.shape[1] == 0:
        raise ValueError(f"y has 0 targets (shape {y.shape})")
    if y.shape[0] != n_examples:
        raise ValueError(f"X and y have different numbers of examples: {n_examples} and "
                         f"{y.shape[0]}")
    Y = compiled_layout(y.reshape(n_examples, -1), np.float64)
    if np.isnan(Y).any():
        raise ValueError("Input y contains NaN; regression targets must be finite")
    if np.isinf(Y).any():
        raise ValueError("Input y contains infinity; regression targets must be finite")
    return Y, y.ndim == 1


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
    try:
        values = np.asarray(list(indices), dtype=object).ravel().tolist()
    except TypeError:
        raise TypeError(f"{param} must be a list of column indices (ints), got "
                        f"{indices!r}") from None
    for i in values:
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, numbers.Real) or \
                not float(i).is_integer():
            raise TypeError(f"{param} must contain column indices (ints), got {i!r}")
        i = int(i)
        if not 0 <= i < num_features:
            raise ValueError(f"{param} contains {i}, but X has {num_features} features "
                             f"(valid: 0..{num_features - 1})")
        out.append(i)
    return sorted(set(out))


def check_seed(random_state):
    """The int seed (or None) of ``random_state``: None, an int >= 0, or a
    ``numpy.random.RandomState``/``Generator`` (one draw from it, as scikit-learn's
    estimators consume their ``random_state``)."""
    if random_state is None:
        return None
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2 ** 31 - 1))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2 ** 31 - 1))
    if isinstance(random_state, (bool, np.bool_)) or \
            not isinstance(random_state, numbers.Integral):
        raise TypeError(f"random_state must be an int, a numpy RandomState/Generator or "
                        f"None, got {random_state!r}")
    if random_state < 0:
        raise ValueError(f"random_state must be >= 0, got {random_state}")
    return int(random_state)


def _name_list(names, count, param, what):
    """``names`` as a list of ``count`` str (ValueError naming ``param`` otherwise)."""
    if isinstance(names, str):
        raise TypeError(f"{param} must be a list of {count} names, got a string")
    names = list(names)
    if len(names) != count:
        raise ValueError(f"{param} has {len(names)} names, but there are {count} {what}")
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"{param} must hold str names, got {name!r}")
    return names


def check_label_names(label_names, num_labels):
    """The ``label_names`` argument of ``fit``: None or a list of K str."""
    return None if label_names is None else \
        _name_list(label_names, num_labels, "label_names", "labels")


def with_display_names(info, feature_names=None, nominal_values=None):
    """``info`` (a :class:`FeatureInput`) with the names the model prints.

    Args:
        feature_names: None or A str (e.g. ``Dataset.feature_names``). A DataFrame's
            columns name its features: passing other names with one raises ValueError.
        nominal_values: None or {column: [value names]}: value name ``v`` of a column is
            printed for code ``v`` (e.g. ``Dataset.nominal_values``); replaces what a
            DataFrame's categories would print for that column.
    """
    num_features = info.X.shape[1]
    names, levels = info.names, dict(info.levels)
    if feature_names is not None:
        feature_names = _name_list(feature_names, num_features, "feature_names", "features")
        if names is not None and names != feature_names:
            raise ValueError("feature_names differ from the column names of the DataFrame X; "
                             "a DataFrame's columns name its features (leave feature_names "
                             "out)")
        names = feature_names
    for column, values in (nominal_values or {}).items():
        column = check_feature_indices([column], num_features, "nominal_values")[0]
        levels[column] = [str(v) for v in values]
    return info._replace(names=names, levels=levels)


def count_weights(sample_weight, n_examples, estimator):
    """The ``sample_weight`` of a learner that counts examples (SeCo's confusion matrices,
    TURS's class counts and code lengths): a weight w counts its example w times, exactly
    as w copies of its row would, so the weights must be integers.

    Args:
        sample_weight: None or array-like (n,) of non-negative integer values (any dtype).
        n_examples: n. estimator: the estimator's name, for messages.

    Returns:
        int64 (n,), or None when ``sample_weight`` is None or all ones (the unweighted fit).

    Raises:
        ValueError: wrong shape, negative, not finite, all zero, or not an integer.
    """
    if sample_weight is None:
        return None
    w = check_sample_weight(sample_weight, n_examples)
    bad = np.flatnonzero((w != np.floor(w)) | (w > np.iinfo(np.int32).max))
    if bad.size:
        raise ValueError(
            f"{estimator} counts examples (its rules are chosen by counts of covered "
            f"examples), so sample_weight must hold non-negative integers up to "
            f"{np.iinfo(np.int32).max}: a weight w counts its example w times, as w "
            f"copies of its row would; got {float(w[bad[0]])!r} at index {bad[0]}")
    w = w.astype(np.int64)
    return None if (w == 1).all() else w


def nominal_mask(num_features, declared, detected, ordinal=None,
                 param="nominal_feature_indices"):
    """bool (A,): which columns are nominal.

    Args:
        num_features: A.
        declared: the column indices of parameter ``param`` (None: none).
        detected: column indices found nominal in the input (a DataFrame's categoricals).
        ordinal: the ``ordinal_feature_indices`` (searched like numerical columns; None:
            none); ValueError if one of them is nominal too.
    """
    nominal = set(check_feature_indices(declared, num_features, param)) | set(detected)
    ordinal = set(check_feature_indices(ordinal, num_features, "ordinal_feature_indices"))
    if nominal & ordinal:
        raise ValueError(f"features {sorted(nominal & ordinal)} are declared both nominal "
                         f"and ordinal")
    mask = np.zeros(num_features, dtype=bool)
    mask[list(nominal)] = True
    return mask
