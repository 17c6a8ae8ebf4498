"""Distributed fits on Dask (``pip install gpurules[dask]``).

``DaskBoomerClassifier`` fits BOOMER's histogram search on a ``dask.array`` partitioned by
rows, each partition's state kept on its worker (``gpurules.backends.dask``); see the user
guide, "Distributed fits on Dask". ``import gpurules`` never imports this package, and
this package imports dask only when an estimator is used.
"""

from gpurules.dask.estimator import DaskBoomerClassifier

__all__ = ["DaskBoomerClassifier"]
