"""Shared fixtures."""

import pytest

from gpurules.jit import threads


@pytest.fixture
def parallel_forms(monkeypatch):
    """Every CPU phase of a fit with more than one thread runs on its threads, however
    small the data (``threads.MIN_PARALLEL_WORK`` = 0): the parallel forms of the kernels
    (``jit/variants.py``) run instead of the serial ones."""
    monkeypatch.setattr(threads, "MIN_PARALLEL_WORK", 0)
