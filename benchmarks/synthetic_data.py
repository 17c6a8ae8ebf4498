"""The synthetic data of the benchmarks (``compare_devices.py``, ``compare_dask.py``,
``bin_cap.py``, ``zero_bin.py``): dense multi-label data from
``sklearn.datasets.make_multilabel_classification`` (100 features, 20 labels), word counts
with 6-9 distinct values per feature, made continuous by Gaussian noise where asked, and
kept in a folder for later runs (sklearn makes the examples one at a time in Python).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

import _common as C


def synthetic_split(n: int, seed: int, noise: float = 0.0,
                    cache: Path | None = None) -> C.Split:
    """``n`` training and ``max(1000, min(n // 4, 100000))`` test examples of dense
    synthetic multi-label data (100 features, 20 labels), float32 X and uint8 Y; with
    ``noise`` > 0, N(0, noise^2) added to every feature value (continuous features).

    ``cache``: a folder that keeps the arrays (:func:`synthetic_file`): loaded from there
    when an earlier run (or ``--only-data``) made them, else made and saved there. sklearn
    makes the examples one at a time in Python: 1.25e6 of them take 30 s to 3 minutes."""
    from sklearn.datasets import make_multilabel_classification

    n_test = max(1000, min(n // 4, 100_000))
    path = None if cache is None else synthetic_file(cache, n, seed, noise)
    if path is not None and path.exists():
        with np.load(path) as arrays:
            X, Y = arrays["X"], arrays["Y"]
    else:
        X, Y = make_multilabel_classification(n_samples=n + n_test, n_features=100,
                                              n_classes=20, random_state=seed)
        if noise > 0:
            X = X + np.random.default_rng(seed).normal(0.0, noise, size=X.shape)
        X = np.ascontiguousarray(X, dtype=np.float32)
        Y = np.ascontiguousarray(Y, dtype=np.uint8)
        if path is not None:
            save_arrays(path, X=X, Y=Y)
    return C.Split(synthetic_name(n, noise), X[:n], Y[:n], X[n:], Y[n:], [])


def synthetic_file(cache: Path, n: int, seed: int, noise: float) -> Path:
    """The file in ``cache`` that keeps the arrays of :func:`synthetic_split`."""
    return Path(cache) / f"{synthetic_name(n, noise)}-noise{noise:g}-seed{seed}.npz"


def save_arrays(path: Path, **arrays: np.ndarray) -> None:
    """``np.savez`` to ``path`` through a file of this process renamed into place, so that
    a process that loads ``path`` while another writes it finds the whole file or none."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    with open(part, "wb") as f:
        np.savez(f, **arrays)
    os.replace(part, path)


def synthetic_name(n: int, noise: float = 0.0) -> str:
    """The name of the synthetic split of ``n`` training examples."""
    return f"synthetic-{n}" if noise <= 0 else f"synthetic-continuous-{n}"
