"""The inputs of a distributed fit: dask arrays and dask DataFrames partitioned by rows.

:func:`feature_array` turns ``X`` into one form, a dask array of float32 rows with its
columns in one chunk (a dask DataFrame's partitions are converted on the workers, its
categorical columns becoming nominal codes as ``BoomerClassifier`` codes a pandas
DataFrame's); :func:`gathered` brings labels or weights to the client and checks that
their rows line up with the partitions of ``X``. Row counts may be unknown (dask
DataFrames, filtered arrays): the partitions' actors count them (``PartitionState.rows``).
"""

import numpy as np

from gpurules.estimators.validation import FeatureInput, check_features, is_dataframe


def is_dask_frame(obj):
    """Whether ``obj`` is a dask DataFrame or Series (checked without importing
    dask.dataframe, which needs pyarrow)."""
    return type(obj).__module__.startswith("dask.dataframe") and hasattr(obj, "to_delayed")


def is_dask_collection(obj):
    """Whether ``obj`` is a dask collection (array, DataFrame, Series)."""
    return hasattr(obj, "__dask_graph__") and hasattr(obj, "to_delayed")


def feature_array(X, da):
    """``X`` of a distributed fit as a dask array and what is known of its columns.

    Args:
        X: a 2-D ``dask.array`` partitioned by rows (any numeric dtype), or a dask
            DataFrame (numeric and categorical columns; categorical ones need known
            categories).
        da: the ``dask.array`` module.

    Returns:
        (dask array (n, A) with one column chunk, its row chunks possibly unknown (NaN),
        float32 for a DataFrame; :class:`FeatureInput` with that array as ``X`` and, for a
        DataFrame, its column names, categorical columns as ``nominal``, their
        categories and levels).

    Raises:
        TypeError: not a dask array or DataFrame, or a non-numeric array.
        ValueError: not 2-D; a column neither numeric nor categorical; a categorical
            column with unknown categories.
    """
    if is_dask_frame(X):
        return _frame_features(X, da)
    if is_dataframe(X):
        raise TypeError("DaskBoomerClassifier.fit needs a dask.array or dask.dataframe X, "
                        "got a pandas DataFrame; fit BoomerClassifier on in-memory data "
                        "(or dask.dataframe.from_pandas(X, npartitions=...))")
    if not isinstance(X, da.Array):
        raise TypeError(f"DaskBoomerClassifier.fit needs a dask.array X partitioned by "
                        f"rows (or a dask DataFrame), got {type(X).__name__}; fit "
                        f"BoomerClassifier on in-memory data")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    if X.dtype.kind not in "biuf":
        raise TypeError(f"X must be numeric, got dtype {X.dtype}")
    X = X.rechunk({1: -1})
    return X, FeatureInput(X, [], None, {}, {})


def _frame_features(X, da):
    """:func:`feature_array` for a dask DataFrame (or Series: ValueError)."""
    import dask
    import pandas as pd

    if X.ndim != 2:
        raise ValueError("X must be 2-D: got a dask Series; pass a DataFrame, e.g. "
                         "series.to_frame()")
    meta = X._meta
    categories, nominal, levels = {}, [], {}
    for j, name in enumerate(X.columns):
        dtype = meta.dtypes.iloc[j]
        if isinstance(dtype, pd.CategoricalDtype):
            if not X[name].cat.known:
                raise ValueError(f"column {name!r} of X is categorical with unknown "
                                 f"categories; make them known first, e.g. "
                                 f"X = X.categorize(columns=[{name!r}])")
            categories[j] = meta.iloc[:, j].cat.categories.to_numpy(dtype=object)
            nominal.append(j)
            levels[j] = [str(c) for c in categories[j]]
        elif not pd.api.types.is_numeric_dtype(dtype):
            raise ValueError(f"column {name!r} of X is neither numeric nor categorical "
                             f"(dtype {dtype}); convert it, e.g. with astype('category')")
    A = len(X.columns)
    blocks = [da.from_delayed(dask.delayed(frame_block)(part, categories), shape=(np.nan, A),
                              dtype=np.float32) for part in X.to_delayed()]
    array = da.concatenate(blocks, axis=0) if blocks else da.zeros((0, A), np.float32)
    return array, FeatureInput(array, nominal, [str(c) for c in X.columns], levels,
                               categories)


def frame_block(part, categories):
    """One pandas partition of a dask DataFrame X as float32 (n_p, A), NaN = missing;
    the columns in ``categories`` ({column: object ndarray}) coded by value
    (``estimators.validation.check_features``)."""
    return check_features(part, categories=categories, min_samples=0).X


def gathered(client, a, sizes, name):
    """``a`` (labels or weights) on the client, its rows checked against the partitions.

    Args:
        client: the ``distributed.Client``.
        a: None, an array-like (returned as it is), or a dask array / DataFrame / Series
            whose rows are matched by position with the rows of X.
        sizes: int (P,), the rows of X's partitions.
        name: the argument's name for errors (``"y"``, ``"sample_weight"``).

    Returns:
        None, ``a`` itself, or a NumPy array of the dask collection's rows in order.

    Raises:
        ValueError: the dask collection's rows do not line up with X's: as many partitions
            as X but one of another length, or another number of rows in total.
    """
    if a is None or not is_dask_collection(a):
        return a
    if hasattr(a, "rechunk") and a.ndim == 2:
        a = a.rechunk({1: -1})
    parts = a.to_delayed()
    parts = list(parts.ravel()) if isinstance(parts, np.ndarray) else list(parts)
    parts = [np.asarray(p) for p in client.gather(client.compute(parts))]
    lengths = [p.shape[0] for p in parts]
    if len(lengths) == len(sizes):
        for p, (got, want) in enumerate(zip(lengths, sizes)):
            if got != want:
                raise ValueError(
                    f"{name} is not aligned with X: its partition {p} has {got} rows, X's "
                    f"{want}; rows are matched by position, so partition {name} like X "
                    f"(e.g. take both from one DataFrame)")
    if sum(lengths) != sum(sizes):
        raise ValueError(f"{name} is not aligned with X: it has {sum(lengths)} rows in "
                         f"{len(lengths)} partitions, X {sum(sizes)} in {len(sizes)}")
    return np.concatenate(parts, axis=0)
